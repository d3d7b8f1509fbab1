/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A QP's attachment to its SRQ (src/core/srq.c, called by qp.c). */
#ifndef RDMARW_CORE_SRQ_H
#define RDMARW_CORE_SRQ_H

#include <rdmarw/ib_verbs.h>

/* Add @qp (qp->srq set) to its SRQ's list and count it in usecnt. */
void rdmarw__srq_attach(struct ib_qp *qp);
/* Undo rdmarw__srq_attach(); nothing for a QP without an SRQ or one
 * already detached.  Before the provider destroys the QP: nobody walking
 * the SRQ's list may find it then. */
void rdmarw__srq_detach(struct ib_qp *qp);

#endif /* RDMARW_CORE_SRQ_H */

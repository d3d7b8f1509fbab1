/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Between the drain (drain.c) and QP destroy (qp.c). */
#ifndef RDMARW_CORE_DRAIN_H
#define RDMARW_CORE_DRAIN_H

#include <rdmarw/ib_verbs.h>

/*
 * rdmarw__drain_forget_qp() - free the markers of @qp that a drain gave up
 * on (their completion never came).  ib_destroy_qp() calls it once the
 * provider has destroyed the QP, when no completion of it can come any more.
 */
void rdmarw__drain_forget_qp(struct ib_qp *qp);

#endif /* RDMARW_CORE_DRAIN_H */

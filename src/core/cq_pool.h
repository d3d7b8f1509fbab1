/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The CQ pools' part in device removal (src/core/cq_pool.c). */
#ifndef RDMARW_CORE_CQ_POOL_H
#define RDMARW_CORE_CQ_POOL_H

#include <rdmarw/ib_verbs.h>

/*
 * Free the device's pool CQs, as the kernel's ib_cq_pool_cleanup() at
 * unregistration.  -EBUSY (nothing freed) while a user holds entries or a
 * QP uses one of them.
 */
int rdmarw__cq_pool_cleanup(struct ib_device *dev);

/*
 * For tests: the CQs in the device's pool of @ctx and the entries reserved
 * on them in all (0 and 0 before the pool's first use).
 */
void rdmarw__cq_pool_count(struct ib_device *dev, enum ib_poll_context ctx,
			   unsigned int *cqs, unsigned long *cqe_used);

#endif /* RDMARW_CORE_CQ_POOL_H */

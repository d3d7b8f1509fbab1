/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester's fast paths (soft_req.c; the post path in soft_qp.c and
 * the fault hooks in soft_fault.c test the same flag).
 */
#ifndef RDMARW_SOFT_REQ_H
#define RDMARW_SOFT_REQ_H

#include "soft/soft_proto.h"

/* Is anything armed on @qp or its device?  The hooks' only test. */
static inline bool soft_fault_on(struct soft_qp *qp)
{
	return __builtin_expect(
		__atomic_load_n(&qp->fault.on, __ATOMIC_RELAXED) |
			__atomic_load_n(&qp->dev->fault.on, __ATOMIC_RELAXED),
		0);
}

#endif /* RDMARW_SOFT_REQ_H */

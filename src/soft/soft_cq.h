/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The completion queue's fast paths, inline for the completer (which
 * writes CQEs) and the poller (soft_cq.c).
 */
#ifndef RDMARW_SOFT_CQ_H
#define RDMARW_SOFT_CQ_H

#include "soft/soft_proto.h"

/*
 * A polled send CQE: the slots below @seq are free.  Called by pollers
 * under the send CQ's lock; the only other writer of the counter is the
 * QP's reset or destroy (sq_drop_pending()), after it has removed the
 * QP's entries from that CQ under the same lock, so a plain store will do.
 */
static inline void soft_sq_release(u64 *sq_done, u64 seq)
{
	if (seq > soft_load(sq_done))
		soft_store(sq_done, seq);
}

static inline struct soft_cqe *rdmarw__soft_cq_claim(struct soft_cq *cq)
{
	soft_spin_lock(&cq->lock);
	if (__builtin_expect(cq->head - cq->tail >= cq->size, 0))
		return rdmarw__soft_cq_full(cq);
	return &cq->ring[cq->head & cq->mask];
}

static inline void rdmarw__soft_cq_commit(struct soft_cq *cq,
					  const struct soft_cqe *cqe)
{
	cq->head++;
	if (__builtin_expect(cq->notify != 0, 0)) {
		rdmarw__soft_cq_commit_armed(cq, cqe);
		return;
	}
	soft_spin_unlock(&cq->lock);
}

#endif /* RDMARW_SOFT_CQ_H */

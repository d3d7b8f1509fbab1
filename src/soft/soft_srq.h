/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The software device's shared receive queues (soft_srq.c): the ops, and
 * the responder's hook that takes a receive for a QP attached to one.
 */
#ifndef RDMARW_SOFT_SRQ_H
#define RDMARW_SOFT_SRQ_H

#include "soft/soft_access.h"

/**
 * struct soft_srq - a shared receive queue
 * @ibsrq: the core SRQ (first member)
 * @lock: protects everything below
 * @rq: soft_ring_slots(@size) slots
 * @sges: @max_sge SGEs per slot
 * @size: depth (attr.max_wr)
 * @mask: slots - 1
 * @max_sge: attr.max_sge
 * @prod: receives posted
 * @cons: receives taken
 * @limit: armed limit (0: none)
 *
 * Lock order: an attached QP's rq_lock, then @lock.
 */
struct soft_srq {
	struct ib_srq ibsrq;
	struct soft_spin lock;
	struct soft_recv_wqe *rq;
	struct ib_sge *sges;
	u32 size;
	u32 mask;
	u32 max_sge;
	u64 prod;
	u64 cons;
	u32 limit;
};

int rdmarw__soft_create_srq(struct ib_srq *srq,
			    struct ib_srq_init_attr *init_attr);
void rdmarw__soft_destroy_srq(struct ib_srq *srq);
int rdmarw__soft_modify_srq(struct ib_srq *srq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask);
int rdmarw__soft_query_srq(struct ib_srq *srq, struct ib_srq_attr *attr);
int rdmarw__soft_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr);

/*
 * The responder's receive for @qp, attached to an SRQ: copy the oldest
 * receive of the SRQ into qp->resp_wqe.  Return: 0; -EAGAIN when the SRQ
 * is empty (qp->rq_waiter is set: the next post resumes the peer, RNR);
 * -ESHUTDOWN when @qp is in ERR (nobody answers).  Raises
 * IB_EVENT_SRQ_LIMIT_REACHED, with no lock held, when the take leaves
 * fewer receives than the armed limit.
 */
int rdmarw__soft_srq_take(struct soft_qp *qp);

/*
 * IB_EVENT_QP_LAST_WQE_REACHED (IBA 11.6.3, 10.2.9.5): a QP attached to
 * an SRQ that is in ERR and holds no receive of the SRQ any more hears
 * it once through its event handler, as rxe's flush_recv_queue() raises
 * it.  last_wqe_locked() decides (with @qp's rq_lock held) and marks it
 * raised; the caller raises it with last_wqe_event() once it holds no
 * lock.  Both the move to ERR and the completion of the last receive
 * taken ask.
 */
bool rdmarw__soft_srq_last_wqe_locked(struct soft_qp *qp);
void rdmarw__soft_srq_last_wqe_event(struct soft_qp *qp);
/* The responder completed the receive it took from @qp's SRQ. */
void rdmarw__soft_srq_recv_done(struct soft_qp *qp);

#endif /* RDMARW_SOFT_SRQ_H */

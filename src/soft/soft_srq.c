// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues of the software device (rxe_srq.c's role).  An SRQ
 * is a ring of posted receives that every attached QP's responder takes
 * from, oldest first, whichever QP the SEND arrives on.  A QP moving to ERR
 * flushes only its own work: the SRQ's receives stay for the other QPs (as
 * rxe and the kernel's providers).  When the SRQ is empty the responder
 * answers as for an empty Receive Queue (RNR: the requester waits) and marks
 * its QP; the next ib_post_srq_recv() resumes the marked QPs' peers.
 */
#include "soft/soft_srq.h"

#include <string.h>

static_assert(offsetof(struct soft_srq, ibsrq) == 0, "core struct first");

static inline struct soft_srq *to_ssrq(struct ib_srq *srq)
{
	return container_of(srq, struct soft_srq, ibsrq);
}

int rdmarw__soft_create_srq(struct ib_srq *ibsrq,
			    struct ib_srq_init_attr *init_attr)
{
	struct soft_srq *srq = to_ssrq(ibsrq);
	u32 i, slots = soft_ring_slots(init_attr->attr.max_wr);

	srq->size = init_attr->attr.max_wr;
	srq->mask = slots - 1;
	srq->max_sge = init_attr->attr.max_sge;
	srq->limit = init_attr->attr.srq_limit;
	srq->rq = calloc(slots, sizeof(*srq->rq));
	srq->sges = calloc((size_t)slots * srq->max_sge, sizeof(*srq->sges));
	if (!srq->rq || !srq->sges) {
		free(srq->rq);
		free(srq->sges);
		return -ENOMEM;
	}
	for (i = 0; i < slots; i++)
		srq->rq[i].sge = &srq->sges[(size_t)i * srq->max_sge];
	srq->lock = (struct soft_spin){ 0 };
	return 0;
}

void rdmarw__soft_destroy_srq(struct ib_srq *ibsrq)
{
	struct soft_srq *srq = to_ssrq(ibsrq);

	free(srq->rq);
	free(srq->sges);
}

int rdmarw__soft_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask)
{
	struct soft_srq *srq = to_ssrq(ibsrq);

	if (mask & IB_SRQ_LIMIT) {
		soft_spin_lock(&srq->lock);
		srq->limit = attr->srq_limit;
		soft_spin_unlock(&srq->lock);
	}
	return 0;
}

int rdmarw__soft_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct soft_srq *srq = to_ssrq(ibsrq);

	soft_spin_lock(&srq->lock);
	attr->max_wr = srq->size;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	soft_spin_unlock(&srq->lock);
	return 0;
}

/*
 * Resume the peers of attached QPs whose responder found the SRQ empty.
 * A responder marks its QP under the QP's rq_lock and the SRQ's lock, after
 * seeing the ring empty; this runs after the post released the SRQ's lock,
 * so either the responder saw the new receive or its mark is seen here.
 */
static void resume_waiters(struct soft_srq *srq)
{
	struct ib_qp *ibqp;

	pthread_mutex_lock(&srq->ibsrq.qp_lock);
	list_for_each_entry(ibqp, &srq->ibsrq.qp_list, srq_entry)
	{
		struct soft_qp *qp = to_sqp(ibqp);

		soft_spin_lock(&qp->rq_lock);
		if (qp->rq_waiter) {
			qp->rq_waiter = false;
			soft_store(&qp->kick_peer, true);
		}
		soft_spin_unlock(&qp->rq_lock);
		rdmarw__soft_xmit_kick(qp);
	}
	pthread_mutex_unlock(&srq->ibsrq.qp_lock);
}

int rdmarw__soft_post_srq_recv(struct ib_srq *ibsrq,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct soft_srq *srq = to_ssrq(ibsrq);
	bool posted = false;
	int ret = 0;

	soft_spin_lock(&srq->lock);
	for (const struct ib_recv_wr *next; wr; wr = next) {
		next = wr->next; /* before the WR is handed over */
		ret = rdmarw__soft_recv_fill(
			&srq->rq[srq->prod & srq->mask], srq->max_sge,
			srq->prod - srq->cons >= srq->size, wr);
		if (ret)
			break;
		srq->prod++;
		posted = true;
	}
	soft_spin_unlock(&srq->lock);
	if (posted)
		resume_waiters(srq);
	if (ret)
		*bad_wr = wr;
	return ret;
}

static void raise_limit_event(struct soft_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

int rdmarw__soft_srq_take(struct soft_qp *qp)
{
	struct soft_srq *srq = to_ssrq(qp->ibqp.srq);
	struct soft_recv_wqe *w, *dst = &qp->resp_wqe;
	bool limit_reached = false;

	soft_spin_lock(&qp->rq_lock);
	if (soft_qp_state(qp) == IB_QPS_ERR) {
		soft_spin_unlock(&qp->rq_lock);
		return -ESHUTDOWN;
	}
	soft_spin_lock(&srq->lock);
	if (srq->cons == srq->prod) {
		qp->rq_waiter = true;
		soft_spin_unlock(&srq->lock);
		soft_spin_unlock(&qp->rq_lock);
		return -EAGAIN;
	}
	w = &srq->rq[srq->cons & srq->mask];
	dst->wr_id = w->wr_id;
	dst->num_sge = w->num_sge;
	dst->length = w->length;
	if (w->num_sge)
		memcpy(dst->sge, w->sge, w->num_sge * sizeof(*dst->sge));
	srq->cons++;
	qp->srq_busy = true;
	/* IBA 10.2.9.3: below the armed limit the event fires once */
	if (srq->limit && srq->prod - srq->cons < srq->limit) {
		srq->limit = 0;
		limit_reached = true;
	}
	soft_spin_unlock(&srq->lock);
	soft_spin_unlock(&qp->rq_lock);
	if (limit_reached)
		raise_limit_event(srq);
	return 0;
}

bool rdmarw__soft_srq_last_wqe_locked(struct soft_qp *qp)
{
	if (!qp->ibqp.srq || qp->srq_busy || qp->last_wqe ||
	    soft_qp_state(qp) != IB_QPS_ERR)
		return false;
	qp->last_wqe = true;
	return true;
}

void rdmarw__soft_srq_last_wqe_event(struct soft_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

void rdmarw__soft_srq_recv_done(struct soft_qp *qp)
{
	bool last;

	soft_spin_lock(&qp->rq_lock);
	qp->srq_busy = false;
	last = rdmarw__soft_srq_last_wqe_locked(qp);
	soft_spin_unlock(&qp->rq_lock);
	if (last)
		rdmarw__soft_srq_last_wqe_event(qp);
}

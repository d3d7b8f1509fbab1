// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: a ring of cqe entries under one spinlock.
 *
 * Overflow: a full ring never overwrites.  The completion is dropped and
 * counted (soft_stats.cq_overflows), and the QP it belonged to gets
 * IB_EVENT_CQ_ERR through its event handler and moves to ERR, the way rxe
 * reports a full CQ (rxe_cq_post() raises IB_EVENT_CQ_ERR; the responder
 * treats it as a class G error).  The core's ib_cq has no event handler of
 * its own, so the QP's is used.  The caller does that part: see
 * soft_comp.c.
 */
#include "soft/soft_access.h"
#include "soft/soft_cq.h"

int rdmarw__soft_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *a)
{
	struct soft_cq *cq = to_scq(ibcq);
	struct soft_dev *sdev = to_sdev(ibcq->device);

	if (a->flags || !a->cqe)
		return -EINVAL;
	if (soft_add(&sdev->stats.cqs, 1) > (u32)sdev->ibdev.attrs.max_cq) {
		soft_sub(&sdev->stats.cqs, 1);
		return -ENOMEM;
	}
	cq->ring = calloc(soft_ring_slots(a->cqe), sizeof(*cq->ring));
	if (!cq->ring) {
		soft_sub(&sdev->stats.cqs, 1);
		return -ENOMEM;
	}
	cq->size = a->cqe;
	cq->mask = soft_ring_slots(a->cqe) - 1;
	return 0;
}

void rdmarw__soft_destroy_cq(struct ib_cq *ibcq)
{
	struct soft_cq *cq = to_scq(ibcq);

	free(cq->ring);
	rdmarw__soft_tcp_cq_free(cq);
	soft_sub(&to_sdev(ibcq->device)->stats.cqs, 1);
}

/* Should adding @cqe wake a CQ armed with @notify? */
static bool notify_due(int notify, const struct soft_cqe *cqe)
{
	if (notify & IB_CQ_NEXT_COMP)
		return true;
	if (notify & IB_CQ_SOLICITED)
		return cqe->solicited || cqe->wc.status != IB_WC_SUCCESS;
	return false;
}

struct soft_cqe *rdmarw__soft_cq_full(struct soft_cq *cq)
{
	soft_spin_unlock(&cq->lock);
	soft_add(&to_sdev(cq->ibcq.device)->stats.cq_overflows, 1);
	return NULL;
}

void rdmarw__soft_cq_commit_armed(struct soft_cq *cq,
				  const struct soft_cqe *cqe)
{
	bool wake = false;

	if (notify_due(cq->notify, cqe)) {
		cq->notify = 0;
		wake = true;
	}
	soft_spin_unlock(&cq->lock);
	if (wake && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int rdmarw__soft_cq_post(struct soft_cq *cq, const struct soft_cqe *cqe)
{
	struct soft_cqe *e = rdmarw__soft_cq_claim(cq);

	if (!e)
		return -ENOSPC;
	*e = *cqe;
	if (!e->sq_release) /* a receive: releases nothing */
		e->sq_release = &cq->no_release;
	rdmarw__soft_cq_commit(cq, e);
	return 0;
}

/* Take up to @num_entries CQEs (lock held). */
static inline __attribute__((always_inline)) int
take(struct soft_cq *cq, int num_entries, struct ib_wc *wc)
{
	int n = 0;

	while (n < num_entries && cq->tail != cq->head) {
		struct soft_cqe *e = &cq->ring[cq->tail & cq->mask];

		wc[n++] = e->wc;
		/* The QP is alive: reset and destroy clean its entries
		 * under this lock before it goes. */
		soft_sq_release(e->sq_release, e->sq_seq + 1);
		cq->tail++;
	}
	return n;
}

/* Empty polls in a row that found nothing to run, after which a poller
 * yields its CPU (to whoever runs its work, maybe on this CPU). */
#define SOFT_CQ_SPINS 64

static __thread unsigned int empty_polls;

/*
 * A threaded device's CQ found empty (lock held, dropped): run the pending
 * Send Queue of the QP it helps here, and take what that completed.
 * Destroying that QP clears @help under the lock, then waits for @helping.
 * Out of line: the inline device's poll stays as it was.
 */
static __attribute__((noinline)) int
poll_help(struct soft_cq *cq, int num_entries, struct ib_wc *wc)
{
	struct soft_qp *qp = soft_load(&cq->help);
	bool ran;
	int n = 0;

	if (!soft_load(&cq->polled))
		soft_store(&cq->polled, 1);
	cq->helping++;
	soft_spin_unlock(&cq->lock);
	ran = rdmarw__soft_task_help(qp);
	soft_spin_lock(&cq->lock);
	cq->helping--;
	if (ran)
		n = take(cq, num_entries, wc);
	soft_spin_unlock(&cq->lock);
	if (ran) {
		empty_polls = 0;
	} else if (++empty_polls >= SOFT_CQ_SPINS) {
		empty_polls = 0;
		sched_yield();
	}
	return n;
}

/*
 * An empty CQ (lock held, dropped): a threaded device's poller helps
 * (poll_help()); on a TCP device with profile.poll_rx, the poller receives
 * from the CQ's QPs' sockets itself (soft_tcp.c) and looks once more; on
 * an iWARP profile whose zero-copy WQEs are held (soft_zcopy.c), they go
 * out -- the completion was seen -- and the CQ is looked at once more.
 */
static __attribute__((noinline)) int
poll_empty(struct soft_cq *cq, int num_entries, struct ib_wc *wc)
{
	struct soft_fabric *f = to_sdev(cq->ibcq.device)->fabric;
	int n = 0;

	if (soft_load(&cq->help) != NULL)
		n = poll_help(cq, num_entries, wc);
	else
		soft_spin_unlock(&cq->lock);
	if (!n && soft_load(&cq->tcp) && rdmarw__soft_tcp_poll(cq)) {
		soft_spin_lock(&cq->lock);
		n = take(cq, num_entries, wc);
		soft_spin_unlock(&cq->lock);
	}
	if (n || !soft_load(&f->zc_due))
		return n;
	rdmarw__soft_zc_run_due(f);
	soft_spin_lock(&cq->lock);
	n = take(cq, num_entries, wc);
	soft_spin_unlock(&cq->lock);
	return n;
}

/*
 * On a threaded device, a poller that finds the CQ empty runs the pending
 * work of the QP the CQ helps (soft_task.c) and looks once more.  On an
 * inline device @help is NULL.
 */
int rdmarw__soft_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct soft_cq *cq = to_scq(ibcq);
	int n;

	soft_spin_lock(&cq->lock);
	n = take(cq, num_entries, wc);
	if (__builtin_expect(!n, 0))
		return poll_empty(cq, num_entries, wc);
	soft_spin_unlock(&cq->lock);
	return n;
}

int rdmarw__soft_req_notify_cq(struct ib_cq *ibcq,
			       enum ib_cq_notify_flags flags)
{
	struct soft_cq *cq = to_scq(ibcq);
	int ret = 0;

	/* Armed: its consumer waits for an event, not polling. */
	if (soft_load(&cq->polled))
		soft_store(&cq->polled, 0);
	if (__builtin_expect(soft_load(&cq->tcp) != NULL, 0))
		rdmarw__soft_tcp_armed(cq);
	soft_spin_lock(&cq->lock);
	cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->head != cq->tail)
		ret = 1;
	soft_spin_unlock(&cq->lock);
	/* Armed after its completions were seen: held WQEs go out. */
	if (__builtin_expect(soft_load(&to_sdev(ibcq->device)->fabric->zc_due),
			     0))
		rdmarw__soft_zc_run_due(to_sdev(ibcq->device)->fabric);
	return ret;
}

void rdmarw__soft_cq_clean(struct soft_cq *cq, struct soft_qp *qp)
{
	u64 src, dst;

	soft_spin_lock(&cq->lock);
	dst = cq->tail;
	for (src = cq->tail; src != cq->head; src++) {
		struct soft_cqe *e = &cq->ring[src & cq->mask];

		if (e->wc.qp == &qp->ibqp)
			continue;
		if (dst != src)
			cq->ring[dst & cq->mask] = *e;
		dst++;
	}
	cq->head = dst;
	soft_spin_unlock(&cq->lock);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Draining a QP (the kernel's ib_drain_qp(), ib_drain_sq(), ib_drain_rq()):
 * move it to ERR, post a marker on the queue and wait until the marker
 * comes back flushed, which means every earlier request has completed.
 *
 * Every wait here is bounded (rdmarw_set_drain_timeout()).  A marker whose
 * completion did not come in time (a CQ that overflowed drops completions)
 * is given up: it stays on a list of markers in flight, and whichever comes
 * first frees it: its late completion, or ib_destroy_qp().  The completion
 * handler looks a marker up on that list before it touches it, so a
 * completion delivered after the QP's destroy freed it touches nothing.
 */
#include "core/core.h"
#include "core/drain.h"

#include <sched.h>
#include <time.h>

#define DRAIN_TIMEOUT_DEFAULT_MS 10000u

static unsigned int drain_timeout_ms = DRAIN_TIMEOUT_DEFAULT_MS;

struct drain_marker {
	struct ib_cqe cqe;
	struct list_head entry;
	struct ib_qp *qp;
	bool done;
	bool abandoned;
};

static pthread_mutex_t markers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list_head markers = LIST_HEAD_INIT(markers);

void rdmarw_set_drain_timeout(unsigned int ms)
{
	__atomic_store_n(&drain_timeout_ms, ms, __ATOMIC_RELAXED);
}

unsigned int rdmarw_get_drain_timeout(void)
{
	return __atomic_load_n(&drain_timeout_ms, __ATOMIC_RELAXED);
}

/* Is @m on the list (the caller holds markers_lock)? */
static bool marker_listed(const struct drain_marker *m)
{
	struct drain_marker *p, *tmp;

	list_for_each_entry_safe(p, tmp, &markers, entry)
		if (p == m)
			return true;
	return false;
}

static void drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	/* Address arithmetic only: @m may be gone (see the top). */
	struct drain_marker *m =
		container_of(wc->wr_cqe, struct drain_marker, cqe);
	bool free_it = false;

	pthread_mutex_lock(&markers_lock);
	if (marker_listed(m)) {
		if (m->abandoned) {
			list_del(&m->entry);
			free_it = true;
		} else {
			__atomic_store_n(&m->done, true, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&markers_lock);
	if (free_it)
		free(m);
}

static struct drain_marker *marker_new(struct ib_qp *qp)
{
	struct drain_marker *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cqe.done = drain_done;
	m->qp = qp;
	pthread_mutex_lock(&markers_lock);
	list_add_tail(&m->entry, &markers);
	pthread_mutex_unlock(&markers_lock);
	return m;
}

/*
 * The waiter is done with @m: free it if it completed (or was never
 * posted, @posted false), else leave it to its completion or to
 * ib_destroy_qp().  Returns whether it had completed.
 */
static bool marker_end(struct drain_marker *m, bool posted)
{
	bool done;

	pthread_mutex_lock(&markers_lock);
	done = m->done;
	if (done || !posted)
		list_del(&m->entry);
	else
		m->abandoned = true;
	pthread_mutex_unlock(&markers_lock);
	if (done || !posted)
		free(m);
	return done;
}

void rdmarw__drain_forget_qp(struct ib_qp *qp)
{
	struct drain_marker *m, *tmp;
	struct list_head gone = LIST_HEAD_INIT(gone);

	pthread_mutex_lock(&markers_lock);
	list_for_each_entry_safe(m, tmp, &markers, entry)
		if (m->qp == qp && m->abandoned) {
			list_del(&m->entry);
			list_add_tail(&m->entry, &gone);
		}
	pthread_mutex_unlock(&markers_lock);
	list_for_each_entry_safe(m, tmp, &gone, entry)
		free(m);
}

static u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

/*
 * Let completions be delivered: process a direct CQ here (as the kernel's
 * drain does), or leave the CPU to the CQ's thread.
 */
static void let_cq_run(struct ib_cq *cq)
{
	static const struct timespec pause = { .tv_nsec = 50 * 1000 };

	if (cq->poll_ctx == IB_POLL_DIRECT && ib_process_cq_direct(cq, -1) > 0)
		return;
	if (cq->poll_ctx == IB_POLL_DIRECT)
		nanosleep(&pause, NULL);
	else
		sched_yield();
}

enum drain_queue { DRAIN_SQ, DRAIN_RQ };

static int post_marker(struct ib_qp *qp, enum drain_queue q,
		       struct drain_marker *m)
{
	struct ib_rdma_wr swr = {
		.wr = { .wr_cqe = &m->cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
	};
	struct ib_recv_wr rwr = { .wr_cqe = &m->cqe };

	if (q == DRAIN_SQ)
		return ib_post_send(qp, &swr.wr, NULL);
	return ib_post_recv(qp, &rwr, NULL);
}

/*
 * Post a marker on queue @q of @qp (already in ERR) and wait for it, all
 * within the drain timeout.  A full queue is retried while the flush of
 * the requests in it frees slots (they are freed as their completions are
 * polled).
 */
static int drain_queue(struct ib_qp *qp, enum drain_queue q)
{
	struct ib_cq *cq = q == DRAIN_SQ ? qp->send_cq : qp->recv_cq;
	u64 start = now_ms(), limit = rdmarw_get_drain_timeout();
	struct drain_marker *m;
	int ret;

	if (rdmarw__cq_self(cq)) {
		static bool warned;

		/* the marker's completion would wait for this very thread */
		rdmarw__warn_once(
			&warned,
			"ib_drain_*() from a done() of the QP's CQ thread: refused");
		return -EDEADLK;
	}
	m = marker_new(qp);
	if (!m)
		return -ENOMEM;
	for (;;) {
		ret = post_marker(qp, q, m);
		if (ret != -ENOMEM || now_ms() - start >= limit)
			break;
		let_cq_run(cq);
	}
	if (ret) {
		marker_end(m, false);
		return ret;
	}
	while (!__atomic_load_n(&m->done, __ATOMIC_ACQUIRE) &&
	       now_ms() - start < limit)
		let_cq_run(cq);
	return marker_end(m, true) ? 0 : -ETIMEDOUT;
}

static int to_err(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

int ib_drain_sq(struct ib_qp *qp)
{
	int ret;

	if (!qp)
		return -EINVAL;
	ret = to_err(qp);
	return ret ? ret : drain_queue(qp, DRAIN_SQ);
}

int ib_drain_rq(struct ib_qp *qp)
{
	int ret;

	if (!qp)
		return -EINVAL;
	ret = to_err(qp);
	return ret ? ret : drain_queue(qp, DRAIN_RQ);
}

int ib_drain_qp(struct ib_qp *qp)
{
	int ret, rq;

	if (!qp)
		return -EINVAL;
	ret = to_err(qp);
	if (ret)
		return ret;
	ret = drain_queue(qp, DRAIN_SQ);
	/* the Receive Queue in any case; a QP on an SRQ has none (the
	 * kernel's ib_drain_qp() skips it too) */
	rq = qp->srq ? 0 : drain_queue(qp, DRAIN_RQ);
	return ret ? ret : rq;
}

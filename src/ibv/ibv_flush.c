// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Flushed completions for work requests posted to a QP in ERR.
 *
 * A WR posted to a QP in ERR completes with WR_FLUSH_ERR (IBA; the kernel's
 * siw does it for kernel consumers in siw_sq_flush_wr(), newer rxe from its
 * completer).  Through libibverbs the kernels this runs on do not: the
 * kernel's siw leaves a user-space QP's late WRs in its mmapped queue, and
 * Debian 12's rxe (6.1) does not flush WRs posted after the error either
 * (tests/test_ibv_rw.c, test_flush_after_err, in the lab), so
 * ib_drain_qp()'s marker, or any ULP that waits for every WR it posted,
 * would wait until its timeout.
 *
 * So a post to a QP in ERR does not reach libibverbs on any device: each
 * WR is answered with a WR_FLUSH_ERR
 * completion of its own (signaled or not, as a flush reports every WR),
 * queued on the QP (one ring per queue, sized at create_qp: nothing is
 * allocated on the post) and handed out by the CQ's poll after what the
 * device's CQ holds, so the device's own flushes of the WRs posted before
 * the error come first.  No WR is both posted to the device and completed
 * here.  A thread-polled CQ's event thread is woken to call the completion
 * handler, as a device event would.
 *
 * "In ERR" is decided under the queue's lock (ibv_verbs.c): a move to ERR
 * that rdmarw makes or starts holds the QP's send_lock and recv_lock
 * around the provider's move and sets the QP's in_err before it lets go
 * (rdmarw__ibv_err_begin() and _end(): ibv_modify_qp_op()'s
 * ibv_modify_qp(), librdmacm's rdma_disconnect(), which moves the QP to
 * ERR itself on IB and RoCE), and a post checks once it holds its queue's
 * lock (there only), so no WR reaches the provider after the provider took
 * such a move.  A move the provider makes on its own (a failed WR, the
 * peer's TERMINATE or disconnect) is seen at the first error completion
 * of the QP polled (rdmarw__ibv_err_seen(): the failed WR's, or the
 * provider's flush of one posted before), or else when the CM's
 * DISCONNECTED moves the QP through ib_modify_qp(): a post before that
 * still reaches the provider, which answers it as it does (the lab tests
 * test_err_* in tests/test_ibv_rw.c and docs/deviations.md say how).
 *
 * Locking: a ring is written under its CQ's lock (the one poll takes),
 * so producers on two QPs sharing a CQ and the poller are serialised.
 * Order: a QP's send_lock, then its recv_lock, then a CQ's lock (a post
 * flushes holding its queue's lock); nothing holding a CQ's lock takes a
 * QP's.
 */
#include "ibv/ibv_loc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rdmarw__ibv_flushq_init(struct ibv_flushq *q, struct ibv_cq_priv *cq,
			    u32 size)
{
	memset(q, 0, sizeof(*q));
	q->size = size ? size : 1;
	q->wc = calloc(q->size, sizeof(*q->wc));
	if (!q->wc)
		return -ENOMEM;
	q->cq = cq;
	INIT_LIST_HEAD(&q->entry);
	return 0;
}

/* Drop what is left (the QP is being destroyed) and unlink from the CQ. */
void rdmarw__ibv_flushq_fini(struct ibv_flushq *q)
{
	if (!q->wc)
		return;
	pthread_mutex_lock(&q->cq->lock);
	if (q->queued)
		list_del(&q->entry);
	q->queued = false;
	pthread_mutex_unlock(&q->cq->lock);
	free(q->wc);
	q->wc = NULL;
}

/*
 * Should a post to @iqp be answered here instead of by the device?  Asked
 * under the queue's lock (send_lock or recv_lock).  The core commits ERR
 * after ibv_modify_qp_op() set in_err, so in_err alone would do; the
 * core's state is read as well so that no other road to ERR is missed.
 */
bool rdmarw__ibv_flush_posts(const struct ibv_qp_priv *iqp)
{
	return __atomic_load_n(&iqp->in_err, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&iqp->ibqp.state, __ATOMIC_ACQUIRE) ==
		       IB_QPS_ERR;
}

/**
 * rdmarw__ibv_err_begin() - hold @iqp's posts for a move of its provider
 * QP to ERR
 * @iqp: the QP
 *
 * Takes its send_lock, then its recv_lock (the one order); a post that
 * comes meanwhile waits, and decides once the move is over.  Not from a
 * post or under a CQ's lock.
 */
void rdmarw__ibv_err_begin(struct ibv_qp_priv *iqp)
{
	pthread_mutex_lock(&iqp->send_lock);
	pthread_mutex_lock(&iqp->recv_lock);
}

/**
 * rdmarw__ibv_err_end() - let @iqp's posts go after rdmarw__ibv_err_begin()
 * @iqp: the QP
 * @moved: the provider took the move to ERR: every later post is
 *	flushed here (rdmarw__ibv_err_seen())
 */
void rdmarw__ibv_err_end(struct ibv_qp_priv *iqp, bool moved)
{
	if (moved)
		rdmarw__ibv_err_seen(iqp);
	pthread_mutex_unlock(&iqp->recv_lock);
	pthread_mutex_unlock(&iqp->send_lock);
}

/**
 * rdmarw__ibv_err_seen() - @iqp's provider QP is in ERR
 * @iqp: the QP
 *
 * Posts that take their queue's lock from now on flush their WRs here;
 * one that holds it already goes on to the provider.  Takes no lock (the
 * poll calls it under its CQ's lock).
 */
void rdmarw__ibv_err_seen(struct ibv_qp_priv *iqp)
{
	__atomic_store_n(&iqp->in_err, true, __ATOMIC_RELEASE);
}

static enum ib_wc_opcode send_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Wake whoever waits for @cq's events: its event thread (ibv_verbs.c's
 * event_thread()), or the caller that took them (rdmarw_cq_events_take()).
 */
static void kick(struct ibv_cq_priv *cq)
{
	u64 one = 1;

	if (cq->kick_fd >= 0 &&
	    write(cq->kick_fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd below its limit always takes 1 */
}

/*
 * Queue one flushed completion per WR of the chain on @q.  A full ring is
 * a full queue: -ENOMEM at that WR, *@bad_wr pointing at it, and the WRs
 * before it queued.
 */
static int flush_chain(struct ibv_flushq *q, struct ib_qp *qp, bool send,
		       const void *first, const void **bad_wr)
{
	struct ibv_cq_priv *cq = q->cq;
	const struct ib_send_wr *swr = send ? first : NULL;
	const struct ib_recv_wr *rwr = send ? NULL : first;
	int ret = 0, n = 0;

	pthread_mutex_lock(&cq->lock);
	while (send ? swr != NULL : rwr != NULL) {
		struct ib_wc *wc;

		if (q->head - q->tail == q->size) {
			*bad_wr = send ? (const void *)swr : (const void *)rwr;
			ret = -ENOMEM;
			break;
		}
		wc = &q->wc[q->head++ % q->size];
		memset(wc, 0, sizeof(*wc));
		wc->wr_id = send ? swr->wr_id : rwr->wr_id;
		wc->status = IB_WC_WR_FLUSH_ERR;
		wc->opcode = send ? send_wc_opcode(swr->opcode) : IB_WC_RECV;
		wc->qp = qp;
		wc->port_num = qp->port;
		n++;
		if (send)
			swr = swr->next;
		else
			rwr = rwr->next;
	}
	if (n && !q->queued) {
		list_add_tail(&q->entry, &cq->flushing);
		q->queued = true;
	}
	pthread_mutex_unlock(&cq->lock);
	if (n)
		kick(cq);
	return ret;
}

int rdmarw__ibv_flush_send(struct ibv_qp_priv *iqp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr)
{
	return flush_chain(&iqp->sflush, &iqp->ibqp, true, wr,
			   (const void **)bad_wr);
}

int rdmarw__ibv_flush_recv(struct ibv_qp_priv *iqp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	return flush_chain(&iqp->rflush, &iqp->ibqp, false, wr,
			   (const void **)bad_wr);
}

/* Up to @n queued completions into @wc, oldest QP first.  Under cq->lock. */
int rdmarw__ibv_flush_poll(struct ibv_cq_priv *cq, struct ib_wc *wc, int n)
{
	int done = 0;

	while (done < n && !list_empty(&cq->flushing)) {
		struct ibv_flushq *q = list_first_entry(
			&cq->flushing, struct ibv_flushq, entry);

		while (done < n && q->tail != q->head)
			wc[done++] = q->wc[q->tail++ % q->size];
		if (q->tail == q->head) {
			list_del(&q->entry);
			q->queued = false;
		}
	}
	return done;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ibv provider's verbs: PD, CQ (with a completion-event thread for
 * thread-polled CQs), QP, posting with translation of the work-request
 * chains into per-QP arrays (no heap allocation on the data path), and user
 * MRs.  The operations table sits at the end.
 */
#include "ibv/ibv_key.h"
#include "ibv/ibv_loc.h"
#include "ibv/ibv_srq.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* ---- PD ---------------------------------------------------------------- */

static int ibv_alloc_pd_op(struct ib_pd *ibpd)
{
	struct ibv_pd_priv *ipd = to_ipd(ibpd);

	ipd->pd = ibv_alloc_pd(to_idev(ibpd->device)->ctx);
	if (!ipd->pd)
		return errno ? -errno : -ENOMEM;
	return rdmarw__ibv_map_init(ipd);
}

static void ibv_dealloc_pd_op(struct ib_pd *ibpd)
{
	struct ibv_pd_priv *ipd = to_ipd(ibpd);

	rdmarw__ibv_map_release(ipd);
	ibv_dealloc_pd(ipd->pd);
}

/* ---- CQ ---------------------------------------------------------------- */

/*
 * Clears what waits on @icq's channel and kick eventfd (ev_lock held; the
 * channel is non-blocking): the events, each acknowledged here, or -EIO.
 * A CQ raises one event per arm; the bound only stops a reader that other
 * threads keep arming.
 */
static int events_read(struct ibv_cq_priv *icq)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	u64 kicks;
	int n = 0, err = EAGAIN;

	while (n < 64) {
		if (ibv_get_cq_event(icq->channel, &ev_cq, &ev_ctx)) {
			err = errno;
			break;
		}
		n++;
	}
	if (n)
		ibv_ack_cq_events(icq->cq, (unsigned int)n);
	/* completions made here (ibv_flush.c) */
	if (read(icq->kick_fd, &kicks, sizeof(kicks)) == sizeof(kicks))
		n++;
	if (!n && err != EAGAIN && err != EWOULDBLOCK && err != EINTR)
		return -EIO;
	return n;
}

/*
 * Waits for completion events and runs the core's handler on them, which
 * is the CQ's poll work (src/core/cq.c, cq_handler_thread): the CQ has no
 * other thread, so a batch of completions costs one wake-up.  While the
 * events are taken (rdmarw_cq_events_take()) it waits on @ctl_fd alone and
 * reads nothing: the channel has one reader at a time, chosen under
 * @ev_lock.
 */
static void *event_thread(void *arg)
{
	struct ibv_cq_priv *icq = arg;
	struct pollfd fds[3] = {
		{ .fd = icq->ctl_fd, .events = POLLIN },
		{ .fd = icq->channel->fd, .events = POLLIN },
		{ .fd = icq->kick_fd, .events = POLLIN },
	};
	bool taken = false, stop;
	u64 val;
	int n;

	for (;;) {
		if (poll(fds, taken ? 1 : 3, -1) < 0 && errno != EINTR)
			break;
		if (fds[0].revents & POLLIN &&
		    read(icq->ctl_fd, &val, sizeof(val)) != sizeof(val))
			val = 0; /* drained by an earlier wake-up */
		n = 0;
		pthread_mutex_lock(&icq->ev_lock);
		stop = icq->ev_stop;
		taken = icq->ev_taken;
		if (!stop && !taken)
			n = events_read(icq);
		pthread_mutex_unlock(&icq->ev_lock);
		if (stop) {
			/* Asked to stop: what is left is processed here
			 * (provider.h, cq_handler_thread). */
			if (icq->ibcq.comp_handler)
				icq->ibcq.comp_handler(&icq->ibcq,
						       icq->ibcq.cq_context);
			break;
		}
		if (n > 0 && icq->ibcq.comp_handler)
			icq->ibcq.comp_handler(&icq->ibcq,
					       icq->ibcq.cq_context);
	}
	return NULL;
}

/* Wake the event thread to look at ev_taken and ev_stop again. */
static void events_ctl(struct ibv_cq_priv *icq)
{
	u64 one = 1;

	if (write(icq->ctl_fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd below its limit always takes 1 */
}

static int start_events(struct ibv_cq_priv *icq, struct ibv_context *ctx)
{
	int ret, fl;

	icq->channel = ibv_create_comp_channel(ctx);
	if (!icq->channel)
		return errno ? -errno : -ENOMEM;
	/* read after poll() alone, or by rdmarw_cq_events_consume(): never
	 * blocks (events_read()) */
	fl = fcntl(icq->channel->fd, F_GETFL);
	if (fl < 0 || fcntl(icq->channel->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		ret = -errno;
		ibv_destroy_comp_channel(icq->channel);
		return ret;
	}
	icq->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	icq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (icq->ctl_fd < 0 || icq->kick_fd < 0) {
		ret = -errno;
		if (icq->ctl_fd >= 0)
			close(icq->ctl_fd);
		if (icq->kick_fd >= 0)
			close(icq->kick_fd);
		ibv_destroy_comp_channel(icq->channel);
		return ret;
	}
	return 0;
}

static void stop_events(struct ibv_cq_priv *icq, bool joined)
{
	if (!icq->channel)
		return;
	if (joined) {
		pthread_mutex_lock(&icq->ev_lock);
		icq->ev_stop = true;
		pthread_mutex_unlock(&icq->ev_lock);
		events_ctl(icq);
		pthread_join(icq->thread, NULL);
	}
	close(icq->ctl_fd);
	close(icq->kick_fd);
}

static int ibv_cq_events_take_op(struct ib_cq *ibcq,
				 struct rdmarw_cq_events *ev)
{
	struct ibv_cq_priv *icq = to_icq(ibcq);
	int ret = 0;

	pthread_mutex_lock(&icq->ev_lock);
	if (icq->ev_taken)
		ret = -EBUSY;
	icq->ev_taken = true;
	pthread_mutex_unlock(&icq->ev_lock);
	if (ret)
		return ret;
	/* out of the channel's poll set before its next event */
	events_ctl(icq);
	ev->fd[0] = icq->channel->fd;
	ev->fd[1] = icq->kick_fd;
	ev->nfds = 2;
	return 0;
}

static int ibv_cq_events_consume_op(struct ib_cq *ibcq)
{
	struct ibv_cq_priv *icq = to_icq(ibcq);
	int ret;

	pthread_mutex_lock(&icq->ev_lock);
	ret = icq->ev_taken ? events_read(icq) : -EINVAL;
	pthread_mutex_unlock(&icq->ev_lock);
	return ret;
}

static int ibv_cq_events_give_op(struct ib_cq *ibcq)
{
	struct ibv_cq_priv *icq = to_icq(ibcq);
	int ret = 0;

	pthread_mutex_lock(&icq->ev_lock);
	if (!icq->ev_taken)
		ret = -EINVAL;
	icq->ev_taken = false;
	pthread_mutex_unlock(&icq->ev_lock);
	if (!ret)
		events_ctl(icq); /* the thread reads the channel again */
	return ret;
}

/*
 * With rdmarw_tx_guard, WRs the caller left unsignalled may complete on
 * the device too (zc_signal()): a CQ sized for the caller's completions
 * gets as many again, within the device's limit.
 */
static int cq_entries(const struct ib_device *dev, unsigned int cqe)
{
	u64 n = dev->rdmarw_tx_guard ? 2 * (u64)cqe : cqe;

	if (n > (u64)dev->attrs.max_cqe)
		n = (u64)dev->attrs.max_cqe;
	return (int)(n > cqe ? n : cqe);
}

static int ibv_create_cq_op(struct ib_cq *ibcq,
			    const struct ib_cq_init_attr *attr)
{
	struct ibv_cq_priv *icq = to_icq(ibcq);
	struct ibv_context *ctx = to_idev(ibcq->device)->ctx;
	int ret;

	icq->ctl_fd = -1;
	icq->kick_fd = -1;
	INIT_LIST_HEAD(&icq->flushing);
	INIT_LIST_HEAD(&icq->zc_retired);
	pthread_mutex_init(&icq->lock, NULL);
	pthread_mutex_init(&icq->ev_lock, NULL);
	/*
	 * An IB_POLL_DIRECT CQ gets its events too: a poller that arms it
	 * (ib_req_notify_cq()) and sleeps is woken through its comp_handler,
	 * as on the software device (rdmarw-nvmet's poll groups); never armed,
	 * the thread only waits.
	 */
	ret = start_events(icq, ctx);
	if (ret)
		goto err_lock;
	icq->cq = ibv_create_cq(
		ctx, cq_entries(ibcq->device, attr->cqe), icq, icq->channel,
		(int)(attr->comp_vector % (u32)(ctx->num_comp_vectors ?
							ctx->num_comp_vectors :
							1)));
	if (!icq->cq) {
		ret = errno ? -errno : -ENOMEM;
		goto err_events;
	}
	if (icq->channel) {
		ret = -pthread_create(&icq->thread, NULL, event_thread, icq);
		if (ret)
			goto err_cq;
	}
	return 0;

err_cq:
	ibv_destroy_cq(icq->cq);
err_events:
	stop_events(icq, false);
	if (icq->channel)
		ibv_destroy_comp_channel(icq->channel);
err_lock:
	pthread_mutex_destroy(&icq->ev_lock);
	pthread_mutex_destroy(&icq->lock);
	return ret;
}

static void ibv_destroy_cq_op(struct ib_cq *ibcq)
{
	struct ibv_cq_priv *icq = to_icq(ibcq);
	struct ibv_zc_ring *zc, *tmp;

	stop_events(icq, true);
	list_for_each_entry_safe(zc, tmp, &icq->zc_retired, entry)
		free(zc);
	ibv_destroy_cq(icq->cq);
	if (icq->channel)
		ibv_destroy_comp_channel(icq->channel);
	pthread_mutex_destroy(&icq->ev_lock);
	pthread_mutex_destroy(&icq->lock);
}

static struct ib_qp *qp_of_num(struct ibv_cq_priv *icq, u32 qp_num)
{
	struct ibv_dev *dev = to_idev(icq->ibcq.device);
	struct ibv_qp_priv *iqp, *tmp;
	struct ib_qp *qp = icq->last_qp;

	if (qp && qp->qp_num == qp_num)
		return qp;
	qp = NULL;
	pthread_mutex_lock(&dev->qps_lock);
	list_for_each_entry_safe(iqp, tmp, &dev->qps, entry) {
		if (iqp->ibqp.qp_num == qp_num) {
			qp = &iqp->ibqp;
			break;
		}
	}
	pthread_mutex_unlock(&dev->qps_lock);
	icq->last_qp = qp;
	return qp;
}

static int wc_flags(unsigned int f)
{
	int r = 0;

	if (f & IBV_WC_GRH)
		r |= IB_WC_GRH;
	if (f & IBV_WC_WITH_IMM)
		r |= IB_WC_WITH_IMM;
	if (f & IBV_WC_WITH_INV)
		r |= IB_WC_WITH_INVALIDATE;
	if (f & IBV_WC_IP_CSUM_OK)
		r |= IB_WC_IP_CSUM_OK;
	return r;
}

/* Statuses and opcodes have the kernel's values in libibverbs. */
static void wc_to_ib(struct ibv_cq_priv *icq, const struct ibv_wc *w,
		     struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = w->status <= IBV_WC_GENERAL_ERR ?
			     (enum ib_wc_status)w->status :
			     IB_WC_GENERAL_ERR;
	wc->opcode = (enum ib_wc_opcode)w->opcode;
	wc->vendor_err = w->vendor_err;
	wc->byte_len = w->byte_len;
	wc->qp = qp_of_num(icq, w->qp_num);
	if (w->wc_flags & IBV_WC_WITH_INV)
		wc->ex.invalidate_rkey = w->invalidated_rkey;
	else
		wc->ex.imm_data = w->imm_data;
	wc->src_qp = w->src_qp;
	wc->wc_flags = wc_flags(w->wc_flags);
	wc->port_num = wc->qp ? wc->qp->port : 1;
	/*
	 * An RC QP completes a WR in error only on its way to ERR or in it
	 * (a completion error moves it there, a flush happens there): the
	 * provider moved it, maybe on its own (a failed WR, the peer's
	 * TERMINATE or disconnect), so posts from now on are flushed by
	 * rdmarw (ibv_flush.c).
	 */
	if (wc->status != IB_WC_SUCCESS && wc->qp)
		rdmarw__ibv_err_seen(to_iqp(wc->qp));
}

/* The ring of a QP that is gone, for its completions still in the CQ. */
static struct ibv_zc_ring *zc_retired(struct ibv_cq_priv *icq, u32 qp_num,
				      const u64 *slot)
{
	struct ibv_zc_ring *zc;

	list_for_each_entry(zc, &icq->zc_retired,
			    entry) if (zc->qp_num == qp_num &&
				       slot >= zc->ids &&
				       slot < zc->ids + zc->n) return zc;
	return NULL;
}

/*
 * A completion of a WR that was signalled only so that the device copies
 * it (rdmarw__tx_zcopy()): the caller asked for none, so a success is
 * dropped (true); a failure is the caller's, with its own wr_id.  Also
 * for a QP destroyed before this was polled (its ring is parked on the
 * CQ).  Under icq->lock.
 */
static bool zc_drop(struct ibv_cq_priv *icq, u32 qp_num, struct ib_wc *wc)
{
	struct ibv_zc_ring *zc = wc->qp ? to_iqp(wc->qp)->zc : NULL;
	u64 *slot = (u64 *)(uintptr_t)wc->wr_id;
	bool drop;

	if (zc && (slot < zc->ids || slot >= zc->ids + zc->n))
		zc = NULL;
	if (!zc && (list_empty(&icq->zc_retired) ||
		    !(zc = zc_retired(icq, qp_num, slot))))
		return false;
	drop = wc->status == IB_WC_SUCCESS;
	if (!drop)
		wc->wr_id = *slot;
	if (!__atomic_sub_fetch(&zc->out, 1, __ATOMIC_RELAXED) && zc->dead) {
		list_del(&zc->entry);
		free(zc);
	}
	return drop;
}

static int ibv_poll_cq_op(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct ibv_cq_priv *icq = to_icq(ibcq);
	struct ibv_wc w[IB_POLL_BATCH];
	int i, n, done = 0;

	pthread_mutex_lock(&icq->lock);
	if (icq->stashed && num_entries > 0) {
		wc_to_ib(icq, &icq->stash, &wc[done]);
		done += !zc_drop(icq, icq->stash.qp_num, &wc[done]);
		icq->stashed = false;
	}
	while (done < num_entries) {
		int want = num_entries - done;

		if (want > IB_POLL_BATCH)
			want = IB_POLL_BATCH;
		n = ibv_poll_cq(icq->cq, want, w);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			wc_to_ib(icq, &w[i], &wc[done]);
			done += !zc_drop(icq, w[i].qp_num, &wc[done]);
		}
		if (n < want)
			break;
	}
	/* After the device's own: its flushes of earlier WRs come first. */
	if (done < num_entries && !list_empty(&icq->flushing))
		done += rdmarw__ibv_flush_poll(icq, wc + done,
					       num_entries - done);
	pthread_mutex_unlock(&icq->lock);
	return done;
}

static int ibv_req_notify_cq_op(struct ib_cq *ibcq,
				enum ib_cq_notify_flags flags)
{
	struct ibv_cq_priv *icq = to_icq(ibcq);
	int ret = 0;

	if (ibv_req_notify_cq(icq->cq, (flags & IB_CQ_SOLICITED_MASK) ==
					       IB_CQ_SOLICITED))
		return -EIO;
	if (!(flags & IB_CQ_REPORT_MISSED_EVENTS))
		return 0;
	/* libibverbs cannot peek: take one completion and keep it. */
	pthread_mutex_lock(&icq->lock);
	if (!list_empty(&icq->flushing)) {
		ret = 1;
	} else if (icq->stashed || ibv_poll_cq(icq->cq, 1, &icq->stash) == 1) {
		icq->stashed = true;
		ret = 1;
	}
	pthread_mutex_unlock(&icq->lock);
	return ret;
}

/* ---- QP ---------------------------------------------------------------- */

static void qp_cap_to_ibv(struct ibv_qp_init_attr *ia,
			  const struct ib_qp_init_attr *a, struct ib_qp *ibqp)
{
	memset(ia, 0, sizeof(*ia));
	ia->qp_context = ibqp;
	ia->send_cq = to_icq(a->send_cq)->cq;
	ia->recv_cq = to_icq(a->recv_cq)->cq;
	ia->cap.max_send_wr = a->cap.max_send_wr ? a->cap.max_send_wr : 1;
	ia->cap.max_recv_wr = a->cap.max_recv_wr ? a->cap.max_recv_wr : 1;
	ia->cap.max_send_sge = a->cap.max_send_sge ? a->cap.max_send_sge : 1;
	ia->cap.max_recv_sge = a->cap.max_recv_sge ? a->cap.max_recv_sge : 1;
	ia->srq = rdmarw__ibv_srq(a->srq); /* ibv_srq.c */
	ia->qp_type = IBV_QPT_RC;
	ia->sq_sig_all = a->sq_sig_type == IB_SIGNAL_ALL_WR;
}

static int alloc_sges(struct ibv_qp_priv *iqp)
{
	iqp->ssge = calloc((size_t)IBV_POST_BATCH * iqp->ibqp.cap.max_send_sge,
			   sizeof(*iqp->ssge));
	iqp->rsge = calloc((size_t)IBV_POST_BATCH * iqp->ibqp.cap.max_recv_sge,
			   sizeof(*iqp->rsge));
	if (iqp->ssge && iqp->rsge)
		return 0;
	free(iqp->ssge);
	free(iqp->rsge);
	return -ENOMEM;
}

/*
 * Every QP is made with ibv_create_qp() on the device's context, which is
 * librdmacm's (ibv_device.c): rdma_create_qp() then hands it to its rdma_cm
 * id explicitly (src/cm/cm_ibv_rdmacm.c, rdmarw__xid_attach_qp()), which
 * moves it to INIT and records the id in @cmid.
 */
static int ibv_create_qp_op(struct ib_qp *ibqp, struct ib_qp_init_attr *a)
{
	struct ibv_qp_priv *iqp = to_iqp(ibqp);
	struct ibv_dev *dev = to_idev(ibqp->device);
	struct ibv_qp_init_attr ia;
	int ret;

	qp_cap_to_ibv(&ia, a, ibqp);
	iqp->qp = ibv_create_qp(to_ipd(ibqp->pd)->pd, &ia);
	if (!iqp->qp)
		return errno ? -errno : -ENOMEM;
	/* What was created; the SGE arrays follow the request, which is
	 * what posting checks against. */
	a->cap.max_send_wr = ia.cap.max_send_wr;
	a->cap.max_recv_wr = ia.cap.max_recv_wr;
	ibqp->cap = a->cap;
	ibqp->qp_num = iqp->qp->qp_num;
	ret = alloc_sges(iqp);
	if (!ret && ibqp->device->rdmarw_tx_guard) {
		u32 n = 2 * ia.cap.max_send_wr;

		iqp->zc = calloc(1, sizeof(*iqp->zc) + n * sizeof(u64));
		if (iqp->zc) {
			INIT_LIST_HEAD(&iqp->zc->entry);
			iqp->zc->qp_num = ibqp->qp_num;
			iqp->zc->n = n;
		} else {
			ret = -ENOMEM;
		}
	}
	if (!ret)
		ret = rdmarw__ibv_flushq_init(&iqp->sflush, to_icq(a->send_cq),
					      a->cap.max_send_wr);
	if (!ret)
		ret = rdmarw__ibv_flushq_init(&iqp->rflush, to_icq(a->recv_cq),
					      a->cap.max_recv_wr);
	if (ret) {
		rdmarw__ibv_flushq_fini(&iqp->sflush);
		rdmarw__ibv_flushq_fini(&iqp->rflush);
		free(iqp->zc);
		free(iqp->ssge);
		free(iqp->rsge);
		ibv_destroy_qp(iqp->qp);
		return ret;
	}
	pthread_mutex_init(&iqp->send_lock, NULL);
	pthread_mutex_init(&iqp->recv_lock, NULL);
	pthread_mutex_lock(&dev->qps_lock);
	list_add_tail(&iqp->entry, &dev->qps);
	pthread_mutex_unlock(&dev->qps_lock);
	return 0;
}

static void ibv_destroy_qp_op(struct ib_qp *ibqp)
{
	struct ibv_qp_priv *iqp = to_iqp(ibqp);
	struct ibv_dev *dev = to_idev(ibqp->device);
	struct ibv_cq_priv *scq = to_icq(ibqp->send_cq);
	struct ibv_cq_priv *rcq = to_icq(ibqp->recv_cq);
	struct ibv_zc_ring *zc = iqp->zc;

	/* Parked before the QP can no longer be found by its number. */
	if (zc) {
		pthread_mutex_lock(&scq->lock);
		list_add_tail(&zc->entry, &scq->zc_retired);
		pthread_mutex_unlock(&scq->lock);
	}
	pthread_mutex_lock(&dev->qps_lock);
	list_del(&iqp->entry);
	pthread_mutex_unlock(&dev->qps_lock);
	if (scq->last_qp == ibqp)
		scq->last_qp = NULL;
	if (rcq->last_qp == ibqp)
		rcq->last_qp = NULL;
	/* destroyed with ib_destroy_qp() while an rdma_cm id still had it */
	if (iqp->cmid && iqp->cmid->qp == iqp->qp)
		iqp->cmid->qp = NULL;
	ibv_destroy_qp(iqp->qp);
	rdmarw__ibv_flushq_fini(&iqp->sflush);
	rdmarw__ibv_flushq_fini(&iqp->rflush);
	if (zc) {
		pthread_mutex_lock(&scq->lock);
		zc->dead = true;
		if (!__atomic_load_n(&zc->out, __ATOMIC_RELAXED)) {
			list_del(&zc->entry);
			free(zc);
		}
		pthread_mutex_unlock(&scq->lock);
	}
	free(iqp->ssge);
	free(iqp->rsge);
	pthread_mutex_destroy(&iqp->send_lock);
	pthread_mutex_destroy(&iqp->recv_lock);
}

/*
 * rdma_cm moves connected QPs through INIT, RTR and RTS itself; what is
 * left to ib_modify_qp() is the error state (draining, teardown).
 *
 * The move holds both queues' locks around the provider's ibv_modify_qp()
 * and sets in_err before it lets go (rdmarw__ibv_err_begin() and _end(),
 * as librdmacm's own move in rdma_disconnect() does); a post checks for
 * ERR under its queue's lock.  So a post either reached the provider
 * before the provider took the move (the provider flushes it with the
 * rest) or is flushed by rdmarw (ibv_flush.c): the kernel's siw and
 * Debian 12's rxe would never complete a WR posted to a user QP already
 * in ERR.  The core commits ERR after this returns.
 */
static int ibv_modify_qp_op(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			    int mask)
{
	struct ibv_qp_priv *iqp = to_iqp(ibqp);
	struct ibv_qp_attr a;
	int ret;

	if (!(mask & IB_QP_STATE) || attr->qp_state != IB_QPS_ERR)
		return -EOPNOTSUPP;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	rdmarw__ibv_err_begin(iqp);
	ret = ibv_modify_qp(iqp->qp, &a, IBV_QP_STATE);
	rdmarw__ibv_err_end(iqp, !ret);
	return -ret;
}

/* ---- posting ----------------------------------------------------------- */

void (*rdmarw__ibv_post_test_hook)(struct ib_qp *qp, bool send);

/* Tests only: widen the window between a post's call and its lock. */
static void post_test_hook(struct ib_qp *qp, bool send)
{
	void (*hook)(struct ib_qp *, bool) =
		__atomic_load_n(&rdmarw__ibv_post_test_hook, __ATOMIC_RELAXED);

	if (__builtin_expect(hook != NULL, 0))
		hook(qp, send);
}

static int copy_sges(struct ibv_qp_priv *iqp, struct ibv_sge *out,
		     const struct ib_sge *in, int n)
{
	struct ibv_pd_priv *ipd = to_ipd(iqp->ibqp.pd);
	u32 sentinel = iqp->ibqp.device->local_dma_lkey;
	int i, ret;

	for (i = 0; i < n; i++) {
		out[i].addr = in[i].addr;
		out[i].length = in[i].length;
		out[i].lkey = in[i].lkey;
		if (in[i].lkey != sentinel)
			continue;
		ret = rdmarw__ibv_map_lkey(ipd, in[i].addr, in[i].length,
					   &out[i].lkey);
		if (ret)
			return ret;
	}
	return 0;
}

static bool opcode_ok(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		return true;
	default:
		return false; /* REG_MR, READ_WITH_INV, atomics: not here */
	}
}

/*
 * rdmarw_tx_guard (siw): a WR the device would send from its pages after
 * completing it is signalled, so the device copies it before it completes
 * (siw_qp_prepare_tx()); its ibv wr_id becomes a slot that keeps the
 * caller's (zc_drop()).  -ENOMEM, as a full Send Queue, when every slot
 * still waits for its completion to be polled.  Under send_lock.
 */
static int zc_signal(struct ibv_qp_priv *iqp, struct ibv_send_wr *o,
		     const struct ib_send_wr *wr)
{
	struct ibv_zc_ring *zc = iqp->zc;
	u64 len = 0, *slot;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (!rdmarw__tx_zcopy(
		    iqp->ibqp.device, wr->opcode,
		    wr->send_flags |
			    (iqp->ibqp.sq_sig_type == IB_SIGNAL_ALL_WR ?
				     IB_SEND_SIGNALED :
				     0),
		    len))
		return 0;
	/* Every slot waits for its completion: the queue is full. */
	if (__atomic_load_n(&zc->out, __ATOMIC_RELAXED) >= zc->n)
		return -ENOMEM;
	slot = &zc->ids[zc->next];
	zc->next = zc->next + 1 == zc->n ? 0 : zc->next + 1;
	__atomic_add_fetch(&zc->out, 1, __ATOMIC_RELAXED);
	*slot = wr->wr_id;
	o->wr_id = (u64)(uintptr_t)slot;
	o->send_flags |= IBV_SEND_SIGNALED;
	return 0;
}

static int send_wr_to_ibv(struct ibv_qp_priv *iqp, struct ibv_send_wr *o,
			  struct ibv_sge *sges, const struct ib_send_wr *wr)
{
	const struct ib_qp *qp = &iqp->ibqp;
	u32 max = wr->opcode == IB_WR_RDMA_READ ? qp->max_read_sge :
						  qp->cap.max_send_sge;
	int ret;

	if (!opcode_ok(wr->opcode) || wr->num_sge < 0 ||
	    (u32)wr->num_sge > max || (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	o->wr_id = wr->wr_id;
	o->sg_list = sges;
	o->num_sge = wr->num_sge;
	o->opcode = (enum ibv_wr_opcode)wr->opcode;
	o->send_flags = (unsigned int)wr->send_flags &
			(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
			 IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND_WITH_IMM:
		o->imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		o->invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	if (wr->opcode == IB_WR_RDMA_WRITE ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_READ) {
		o->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		o->wr.rdma.rkey = rdma_wr(wr)->rkey;
	}
	ret = copy_sges(iqp, sges, wr->sg_list, wr->num_sge);
	if (!ret && __builtin_expect(iqp->zc != NULL, 0)) /* guarded */
		ret = zc_signal(iqp, o, wr);
	return ret;
}

static bool can_post_send(const struct ib_qp *qp)
{
	enum ib_qp_state s = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);

	return s == IB_QPS_RTS || s == IB_QPS_SQD || s == IB_QPS_SQE ||
	       s == IB_QPS_ERR;
}

/* Post one translated batch; on failure point *bad at the ib request. */
/*
 * WRs [from, to) were not posted: their slots, the last ones taken, will
 * see no completion and are given back.  Under send_lock.
 */
static void zc_unpost(struct ibv_qp_priv *iqp, const struct ibv_send_wr *from,
		      const struct ibv_send_wr *to)
{
	struct ibv_zc_ring *zc = iqp->zc;

	for (; from < to; from++) {
		const u64 *slot = (const u64 *)(uintptr_t)from->wr_id;

		if (slot < zc->ids || slot >= zc->ids + zc->n)
			continue;
		__atomic_sub_fetch(&zc->out, 1, __ATOMIC_RELAXED);
		zc->next = zc->next ? zc->next - 1 : zc->n - 1;
	}
}

static int post_send_batch(struct ibv_qp_priv *iqp, int n,
			   const struct ib_send_wr **batch,
			   const struct ib_send_wr **bad_wr)
{
	struct ibv_send_wr *bad = NULL;
	int ret;

	iqp->swr[n - 1].next = NULL;
	ret = ibv_post_send(iqp->qp, iqp->swr, &bad);
	if (!ret)
		return 0;
	if (iqp->zc)
		zc_unpost(iqp, bad ? bad : iqp->swr, &iqp->swr[n]);
	*bad_wr = bad ? batch[bad - iqp->swr] : batch[0];
	return rdmarw__ibv_post_errno(ret);
}

static int ibv_post_send_op(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			    const struct ib_send_wr **bad_wr)
{
	struct ibv_qp_priv *iqp = to_iqp(ibqp);
	const struct ib_send_wr *batch[IBV_POST_BATCH];
	u32 per = ibqp->cap.max_send_sge ? ibqp->cap.max_send_sge : 1;
	int n = 0, ret = 0;

	if (!can_post_send(ibqp))
		return -EINVAL;
	post_test_hook(ibqp, true);
	pthread_mutex_lock(&iqp->send_lock);
	/* Under the lock: ibv_modify_qp_op() holds it while it moves. */
	if (rdmarw__ibv_flush_posts(iqp)) {
		ret = rdmarw__ibv_flush_send(iqp, wr, bad_wr);
		pthread_mutex_unlock(&iqp->send_lock);
		return ret;
	}
	for (const struct ib_send_wr *next; wr; wr = next) {
		next = wr->next; /* before the WR is handed over */
		ret = send_wr_to_ibv(iqp, &iqp->swr[n], &iqp->ssge[n * per],
				     wr);
		if (ret) {
			/* What came before the bad request is posted. */
			int pret =
				n ? post_send_batch(iqp, n, batch, bad_wr) : 0;

			if (pret)
				ret = pret;
			else
				*bad_wr = wr;
			n = 0;
			break;
		}
		if (n)
			iqp->swr[n - 1].next = &iqp->swr[n];
		batch[n++] = wr;
		if (n == IBV_POST_BATCH) {
			ret = post_send_batch(iqp, n, batch, bad_wr);
			n = 0;
			if (ret)
				break;
		}
	}
	if (!ret && n)
		ret = post_send_batch(iqp, n, batch, bad_wr);
	pthread_mutex_unlock(&iqp->send_lock);
	return ret;
}

static int recv_wr_to_ibv(struct ibv_qp_priv *iqp, struct ibv_recv_wr *o,
			  struct ibv_sge *sges, const struct ib_recv_wr *wr)
{
	if (wr->num_sge < 0 || (u32)wr->num_sge > iqp->ibqp.cap.max_recv_sge ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	o->wr_id = wr->wr_id;
	o->sg_list = sges;
	o->num_sge = wr->num_sge;
	return copy_sges(iqp, sges, wr->sg_list, wr->num_sge);
}

static int post_recv_batch(struct ibv_qp_priv *iqp, int n,
			   const struct ib_recv_wr **batch,
			   const struct ib_recv_wr **bad_wr)
{
	struct ibv_recv_wr *bad = NULL;
	int ret;

	iqp->rwr[n - 1].next = NULL;
	ret = ibv_post_recv(iqp->qp, iqp->rwr, &bad);
	if (!ret)
		return 0;
	*bad_wr = bad ? batch[bad - iqp->rwr] : batch[0];
	return rdmarw__ibv_post_errno(ret);
}

static int ibv_post_recv_op(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			    const struct ib_recv_wr **bad_wr)
{
	struct ibv_qp_priv *iqp = to_iqp(ibqp);
	const struct ib_recv_wr *batch[IBV_POST_BATCH];
	u32 per = ibqp->cap.max_recv_sge ? ibqp->cap.max_recv_sge : 1;
	int n = 0, ret = 0;

	if (__atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE) == IB_QPS_RESET)
		return -EINVAL;
	post_test_hook(ibqp, false);
	pthread_mutex_lock(&iqp->recv_lock);
	if (rdmarw__ibv_flush_posts(iqp)) { /* as in ibv_post_send_op() */
		ret = rdmarw__ibv_flush_recv(iqp, wr, bad_wr);
		pthread_mutex_unlock(&iqp->recv_lock);
		return ret;
	}
	for (const struct ib_recv_wr *next; wr; wr = next) {
		next = wr->next; /* before the WR is handed over */
		ret = recv_wr_to_ibv(iqp, &iqp->rwr[n], &iqp->rsge[n * per],
				     wr);
		if (ret) {
			int pret =
				n ? post_recv_batch(iqp, n, batch, bad_wr) : 0;

			if (!pret)
				*bad_wr = wr;
			else
				ret = pret;
			n = 0;
			break;
		}
		if (n)
			iqp->rwr[n - 1].next = &iqp->rwr[n];
		batch[n++] = wr;
		if (n == IBV_POST_BATCH) {
			ret = post_recv_batch(iqp, n, batch, bad_wr);
			n = 0;
			if (ret)
				break;
		}
	}
	if (!ret && n)
		ret = post_recv_batch(iqp, n, batch, bad_wr);
	pthread_mutex_unlock(&iqp->recv_lock);
	return ret;
}

/* ---- MR ---------------------------------------------------------------- */

static int ibv_reg_user_mr_op(struct ib_mr *ibmr, u64 start, u64 length,
			      u64 virt_addr, int access)
{
	struct ibv_mr_priv *imr = to_imr(ibmr);
	struct ibv_pd *pd = to_ipd(ibmr->pd)->pd;

	/* enum ib_access_flags and enum ibv_access_flags agree bit for bit
	 * on everything ib_reg_user_mr() accepts. */
	errno = 0;
	imr->mr = ibv_reg_mr_iova(pd, (void *)(uintptr_t)start, length,
				  virt_addr, access);
	if (!imr->mr)
		return errno ? -errno : -ENOMEM;
	ibmr->lkey = imr->mr->lkey;
	ibmr->rkey = imr->mr->rkey;
	return 0;
}

static int ibv_dereg_mr_op(struct ib_mr *ibmr)
{
	return -ibv_dereg_mr(to_imr(ibmr)->mr);
}

const struct ib_device_ops rdmarw__ibv_ops = {
	.driver_name = "ibv",
	.cq_handler_thread = true, /* event_thread() */
	.size_ib_pd = sizeof(struct ibv_pd_priv),
	.size_ib_cq = sizeof(struct ibv_cq_priv),
	.size_ib_qp = sizeof(struct ibv_qp_priv),
	.size_ib_mr = sizeof(struct ibv_mr_priv),
	.size_ib_srq = sizeof(struct ibv_srq_priv),

	.alloc_pd = ibv_alloc_pd_op,
	.cq_events_consume = ibv_cq_events_consume_op,
	.cq_events_give = ibv_cq_events_give_op,
	.cq_events_take = ibv_cq_events_take_op,
	.create_cq = ibv_create_cq_op,
	.create_qp = ibv_create_qp_op,
	.dealloc_pd = ibv_dealloc_pd_op,
	.dereg_mr = ibv_dereg_mr_op,
	.destroy_cq = ibv_destroy_cq_op,
	.destroy_qp = ibv_destroy_qp_op,
	.modify_qp = ibv_modify_qp_op,
	.poll_cq = ibv_poll_cq_op,
	.post_recv = ibv_post_recv_op,
	.post_send = ibv_post_send_op,
	.reg_user_mr = ibv_reg_user_mr_op,
	.req_notify_cq = ibv_req_notify_cq_op,
	/* ibv_srq.c */
	.create_srq = rdmarw__ibv_create_srq,
	.destroy_srq = rdmarw__ibv_destroy_srq,
	.modify_srq = rdmarw__ibv_modify_srq,
	.post_srq_recv = rdmarw__ibv_post_srq_recv,
	.query_srq = rdmarw__ibv_query_srq,
};

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, state changes, connection, posting and the
 * machinery that runs a Send Queue (inline or on the progress thread).
 *
 * Send Queue accounting follows mlx5: a WQE holds its slot until the
 * completion of it, or of a later signaled WQE, is polled from the CQ
 * (sq_done advances in soft_cq.c).  So posting max_send_wr unsignaled WQEs
 * and one signaled WQE without polling fills the queue even though they all
 * executed.  The Receive Queue frees a slot when the receive is consumed.
 *
 * Posting checks (synchronous, with *bad_wr): a QP in RESET, INIT or RTR,
 * an opcode the device does not take, num_sge above cap.max_send_sge (READ:
 * above max_read_sge; siw: a READ must have exactly one SGE, as
 * siw_post_send()), a NULL sg_list, IB_SEND_INLINE (max_inline_data is 0),
 * more than 2^31 bytes, a REG_MR without an MR of this device: -EINVAL;
 * a full queue: -ENOMEM.  Earlier WRs of the chain stay posted.  A QP in ERR
 * takes the WRs and flushes them (siw_sq_flush_wr), so ib_drain_qp() works.
 */
#include "soft/soft_sig.h"
#include "soft/soft_req.h"
#include "soft/soft_srq.h"

/* ---- fault injection (a later issue hooks in here) --------------------- */

/*
 * Called once per WR before it is queued: a negative errno fails the post
 * at this WR (soft_fault.c).  Nothing armed: one predictable branch.
 */
static inline int inject_post(struct soft_qp *qp, const struct ib_send_wr *wr)
{
	if (!soft_fault_on(qp))
		return 0;
	return rdmarw__soft_fault_post(qp, wr);
}

/* ---- running the Send Queue --------------------------------------------- */

/*
 * The executor role: one thread at a time runs the Send Queue.  It is taken
 * and dropped under sq_lock, so a post can queue its WRs and take the role
 * in one critical section.  Asking for a run while the role is taken sets
 * run_req; the holder sees it before it lets go and runs the queue again.
 */
static bool exec_claim_locked(struct soft_qp *qp)
{
	if (qp->exec_busy) {
		soft_store(&qp->run_req, 1);
		return false;
	}
	qp->exec_busy = true;
	soft_store(&qp->run_req, 0);
	return true;
}

/*
 * Let go of the role, unless a run was asked for meanwhile: then true.
 * Inline in its callers: out of line (the zero-copy model's flush, 84ed0a9,
 * was a second caller) the executor's loop paid a call per run.
 */
static inline __attribute__((always_inline)) bool exec_again(struct soft_qp *qp)
{
	bool again;

	soft_spin_lock(&qp->sq_lock);
	again = soft_load(&qp->run_req);
	if (again)
		soft_store(&qp->run_req, 0);
	else
		qp->exec_busy = false;
	soft_spin_unlock(&qp->sq_lock);
	return again;
}

/*
 * The executor roles this thread holds, innermost first (a run may take a
 * peer's role inline).  A completion or event handler called by an
 * executor may move a QP to ERR: the barrier of that move must not wait
 * for a role its own thread holds.
 */
struct exec_frame {
	struct soft_qp *qp;
	struct exec_frame *up;
};

static __thread struct exec_frame *exec_top;

static bool exec_held_here(const struct soft_qp *qp)
{
	const struct exec_frame *f;

	for (f = exec_top; f; f = f->up)
		if (f->qp == qp)
			return true;
	return false;
}

/* The caller holds the executor role: run, let go, wake the peer. */
static void exec_run(struct soft_qp *qp)
{
	struct exec_frame me = { .qp = qp, .up = exec_top };

	exec_top = &me;
	do
		rdmarw__soft_requester(qp);
	while (exec_again(qp));
	exec_top = me.up;
	/* The same first test as the kick's, without the call. */
	if (soft_load(&qp->kick_peer))
		rdmarw__soft_xmit_kick(qp);
}

/*
 * Take the role and keep the Send Queue from running (reset, unlinking,
 * destroy): wait for a running executor to finish.  A run asked for
 * meanwhile stays in run_req.
 */
static void exec_lock(struct soft_qp *qp)
{
	unsigned int spins = 0;

	for (;;) {
		soft_spin_lock(&qp->sq_lock);
		if (!qp->exec_busy) {
			qp->exec_busy = true;
			soft_spin_unlock(&qp->sq_lock);
			return;
		}
		soft_spin_unlock(&qp->sq_lock);
		soft_relax(&spins);
	}
}

static void exec_unlock(struct soft_qp *qp)
{
	soft_spin_lock(&qp->sq_lock);
	qp->exec_busy = false;
	soft_spin_unlock(&qp->sq_lock);
}

void rdmarw__soft_qp_run(struct soft_qp *qp)
{
	bool mine;

	soft_spin_lock(&qp->sq_lock);
	mine = exec_claim_locked(qp);
	soft_spin_unlock(&qp->sq_lock);
	if (mine)
		exec_run(qp);
}

void rdmarw__soft_qp_zc_flush(struct soft_qp *qp)
{
	struct exec_frame me = { .qp = qp, .up = exec_top };
	bool mine;

	soft_spin_lock(&qp->sq_lock);
	mine = exec_claim_locked(qp);
	soft_spin_unlock(&qp->sq_lock);
	if (!mine)
		return; /* its executor runs; a later poll sends what it holds */
	exec_top = &me;
	rdmarw__soft_zc_flush(qp);
	exec_top = me.up;
	if (exec_again(qp))
		exec_run(qp); /* posted meanwhile: run it, then let go */
	else if (soft_load(&qp->kick_peer))
		rdmarw__soft_xmit_kick(qp);
}

static u64 st_take(u64 *c)
{
	return __atomic_exchange_n(c, 0, __ATOMIC_RELAXED);
}

void rdmarw__soft_stats_fold(struct soft_qp *qp)
{
	soft_add(&qp->dev->stats.wrs_executed, st_take(&qp->st_wrs));
	soft_add(&qp->dev->stats.bytes_moved, st_take(&qp->st_comp_bytes));
	soft_add(&qp->dev->stats.bytes_moved, st_take(&qp->st_resp_bytes));
}

/* Flush every pending receive, oldest first (rq_lock held). */
static void rq_flush_locked(struct soft_qp *qp)
{
	while (qp->rq_cons != qp->rq_prod) {
		struct soft_recv_wqe *w = &qp->rq[qp->rq_cons & qp->rq_mask];

		qp->rq_cons++;
		rdmarw__soft_comp_recv(qp, w, SOFT_F_FLUSH, NULL, 0);
	}
}

bool rdmarw__soft_qp_to_err(struct soft_qp *qp)
{
	enum ib_qp_state old;
	bool last;

	if (soft_qp_state(qp) == IB_QPS_ERR)
		return false;
	soft_test_point(SOFT_TP_TO_ERR, qp);
	/*
	 * The state changes under rq_lock: ib_post_recv() reads it under the
	 * same lock, so it never sees ERR while receives posted before are
	 * still waiting for this flush.
	 */
	soft_spin_lock(&qp->rq_lock);
	if (rdmarw__qp_move(&qp->ibqp, IB_QPS_ERR, IB_QP_STATE, &old) ||
	    old == IB_QPS_ERR) {
		soft_spin_unlock(&qp->rq_lock);
		return false;
	}
	rq_flush_locked(qp);
	/* A peer waiting for a receive must learn that none will come. */
	if (qp->rq_waiter) {
		qp->rq_waiter = false;
		soft_store(&qp->kick_peer, true);
	}
	/* No receive of the SRQ in flight: the last WQE is reached now
	 * (else when the responder completes it, soft_srq.c). */
	last = rdmarw__soft_srq_last_wqe_locked(qp);
	soft_spin_unlock(&qp->rq_lock);
	if (last)
		rdmarw__soft_srq_last_wqe_event(qp);
	return true;
}

/* ---- creation and destruction ------------------------------------------ */

static void qp_free_arrays(struct soft_qp *qp)
{
	free(qp->sq);
	free(qp->sq_sges);
	free(qp->rq);
	free(qp->rq_sges);
	free(qp->req_rg);
	free(qp->comp_rg);
	free(qp->resp_sge);
	free(qp->resp_rg);
}

static size_t at_least1(u32 n)
{
	return n ? n : 1;
}

static int qp_alloc_arrays(struct soft_qp *qp, const struct ib_qp_cap *cap)
{
	u32 i, sq_slots = soft_ring_slots(cap->max_send_wr),
	       rq_slots = soft_ring_slots(cap->max_recv_wr);

	qp->sq_size = cap->max_send_wr;
	qp->sq_mask = sq_slots - 1;
	qp->sq_max_sge = cap->max_send_sge;
	qp->rq_size = cap->max_recv_wr;
	qp->rq_mask = rq_slots - 1;
	qp->rq_max_sge = cap->max_recv_sge;
	qp->sq = calloc(sq_slots, sizeof(*qp->sq));
	qp->sq_sges = calloc(sq_slots * at_least1(qp->sq_max_sge),
			     sizeof(*qp->sq_sges));
	qp->rq = calloc(rq_slots, sizeof(*qp->rq));
	qp->rq_sges = calloc(rq_slots * at_least1(qp->rq_max_sge),
			     sizeof(*qp->rq_sges));
	qp->req_rg = calloc(at_least1(qp->sq_max_sge), sizeof(*qp->req_rg));
	qp->comp_rg = calloc(at_least1(qp->sq_max_sge), sizeof(*qp->comp_rg));
	qp->resp_sge = calloc(at_least1(qp->rq_max_sge), sizeof(*qp->resp_sge));
	qp->resp_rg = calloc(at_least1(qp->rq_max_sge), sizeof(*qp->resp_rg));
	if (!qp->sq || !qp->sq_sges || !qp->rq || !qp->rq_sges || !qp->req_rg ||
	    !qp->comp_rg || !qp->resp_sge || !qp->resp_rg) {
		qp_free_arrays(qp);
		return -ENOMEM;
	}
	for (i = 0; i < sq_slots; i++)
		qp->sq[i].sge = &qp->sq_sges[(size_t)i * qp->sq_max_sge];
	for (i = 0; i < rq_slots; i++)
		qp->rq[i].sge = &qp->rq_sges[(size_t)i * qp->rq_max_sge];
	qp->resp_wqe.sge = qp->resp_sge;
	return 0;
}

static bool qpn_in_use(struct soft_fabric *f, u32 qpn)
{
	struct soft_qp *p, *tmp;

	list_for_each_entry_safe(p, tmp, &f->qps, fabric_entry)
		if (p->ibqp.qp_num == qpn)
			return true;
	return false;
}

/*
 * The next free QP number, cyclically (as MR key indexes): unique among
 * the live QPs of the fabric.  fabric->lock held.  Return: 0, or -ENOMEM
 * when every number is taken.
 */
static int qpn_alloc(struct soft_fabric *f, u32 *qpn)
{
	u32 span = f->qpn_last - SOFT_QPN_FIRST + 1, i, n;

	for (i = 0; i < span; i++) {
		n = f->next_qpn;
		if (n < SOFT_QPN_FIRST || n > f->qpn_last)
			n = SOFT_QPN_FIRST;
		f->next_qpn = n == f->qpn_last ? SOFT_QPN_FIRST : n + 1;
		if (!qpn_in_use(f, n)) {
			*qpn = n;
			return 0;
		}
	}
	return -ENOMEM;
}

/*
 * What every request header of the QP carries the same: its source QP
 * number, and no syndrome (the ring is zeroed and nothing else writes
 * these fields), so that a post does not store them.
 */
static void qp_set_src_qpn(struct soft_qp *qp)
{
	u32 i;

	for (i = 0; i <= qp->sq_mask; i++)
		qp->sq[i].h.src_qpn = qp->ibqp.qp_num;
}

int rdmarw__soft_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr)
{
	struct soft_qp *qp = to_sqp(ibqp);
	struct soft_dev *sdev = to_sdev(ibqp->device);
	struct soft_fabric *f = sdev->fabric;
	int ret;

	if (soft_add(&sdev->stats.qps, 1) > (u32)sdev->ibdev.attrs.max_qp) {
		ret = -ENOMEM;
		goto err_count;
	}
	qp->rq_lock = (struct soft_spin){ 0 };
	qp->sig_all =
		attr->sq_sig_type == IB_SIGNAL_ALL_WR ? IB_SEND_SIGNALED : 0;
	ret = qp_alloc_arrays(qp, &attr->cap);
	if (ret)
		goto err_count;
	qp->dev = sdev;
	ret = rdmarw__soft_zc_init(qp);
	if (ret)
		goto err_arrays;
	INIT_LIST_HEAD(&qp->task_entry);
	rdmarw__soft_task_join(qp);
	/* Their own cache lines: no other QP's reader shares them. */
	qp->mem_rd = soft_br_add(&f->mem_lock);
	qp->resp_rd = soft_br_add(&f->mem_lock);
	if (!qp->mem_rd || !qp->resp_rd) {
		ret = -ENOMEM;
		goto err_reader;
	}
	soft_mutex_lock(&f->lock);
	ret = qpn_alloc(f, &ibqp->qp_num);
	if (!ret)
		list_add_tail(&qp->fabric_entry, &f->qps);
	soft_mutex_unlock(&f->lock);
	if (ret)
		goto err_reader;
	qp_set_src_qpn(qp);
	return 0;

err_reader:
	soft_br_del(&f->mem_lock, qp->mem_rd);
	soft_br_del(&f->mem_lock, qp->resp_rd);
err_arrays:
	rdmarw__soft_zc_fini(qp);
	qp_free_arrays(qp);
err_count:
	soft_sub(&sdev->stats.qps, 1);
	return ret;
}

/* Drop WQEs that will never execute. */
static void sq_drop_pending(struct soft_qp *qp)
{
	rdmarw__soft_zc_drop(qp);
	soft_spin_lock(&qp->sq_lock);
	qp->sq_exec = qp->sq_prod;
	qp->defer = 0;
	soft_store(&qp->sq_done, qp->sq_prod);
	soft_spin_unlock(&qp->sq_lock);
}

/*
 * No thread may touch @qp after this: nobody names it as peer, no kick
 * holds it and (dying) the progress thread has let it go.  A QP that named
 * it and had work arriving while we held its executor role is run again.
 */
static void qp_quiesce(struct soft_qp *qp, bool dying)
{
	struct soft_fabric *f = qp->dev->fabric;
	struct soft_qp *p, *tmp, *rerun = NULL;

	soft_mutex_lock(&f->lock);
	if (dying) {
		soft_store(&qp->dying, true);
		list_del_init(&qp->fabric_entry);
	}
	list_for_each_entry_safe(p, tmp, &f->qps, fabric_entry) {
		if (p == qp || p->peer != qp)
			continue;
		exec_lock(p);
		/* it no longer runs qp's responder; qp's executor may still
		 * read the link (p's answers, rdmarw__soft_xmit()) */
		soft_store(&p->peer, NULL);
		exec_unlock(p);
		if (soft_load(&p->run_req) && !rerun) {
			p->refs++;
			rerun = p;
		}
	}
	exec_lock(qp);
	soft_store(&qp->peer, NULL);
	if (dying)
		rdmarw__soft_stats_fold(qp);
	exec_unlock(qp);
	while (qp->refs)
		soft_mutex_wait(&f->lock);
	soft_mutex_unlock(&f->lock);
	if (rerun) {
		rdmarw__soft_qp_schedule(rerun);
		soft_mutex_lock(&f->lock);
		rerun->refs--;
		soft_mutex_wake(&f->lock);
		soft_mutex_unlock(&f->lock);
	}
	if (dying)
		rdmarw__soft_task_forget(qp);
}

static void qp_clean_cqs(struct soft_qp *qp)
{
	rdmarw__soft_cq_clean(soft_send_cq(qp), qp);
	if (qp->ibqp.recv_cq != qp->ibqp.send_cq)
		rdmarw__soft_cq_clean(soft_recv_cq(qp), qp);
}

/* Any state -> RESET: disconnected, queues emptied without completions. */
static void qp_reset(struct soft_qp *qp)
{
	qp_quiesce(qp, false);
	exec_lock(qp);
	qp_clean_cqs(qp);
	sq_drop_pending(qp);
	soft_spin_lock(&qp->rq_lock);
	qp->rq_cons = qp->rq_prod;
	qp->rq_waiter = false;
	qp->last_wqe = false;
	soft_spin_unlock(&qp->rq_lock);
	soft_store(&qp->kick_peer, false);
	soft_store(&qp->run_req, 0);
	memset(&qp->rx, 0, sizeof(qp->rx));
	qp->comp_fault = SOFT_OK;
	rdmarw__qp_move(&qp->ibqp, IB_QPS_RESET, IB_QP_STATE, NULL);
	exec_unlock(qp);
}

void rdmarw__soft_destroy_qp(struct ib_qp *ibqp)
{
	struct soft_qp *qp = to_sqp(ibqp);

	rdmarw__soft_tcp_detach(qp); /* the device's thread lets go */
	qp_quiesce(qp, true);
	exec_lock(qp);
	rdmarw__soft_stats_fold(qp); /* what ran since it was unlisted */
	exec_unlock(qp);
	rdmarw__soft_tcp_free(qp); /* closes the socket */
	qp_clean_cqs(qp);
	sq_drop_pending(qp);
	/* Nobody runs its executor now: its indicator is outside any section. */
	soft_br_del(&qp->dev->fabric->mem_lock, qp->mem_rd);
	soft_br_del(&qp->dev->fabric->mem_lock, qp->resp_rd);
	rdmarw__soft_zc_fini(qp);
	qp_free_arrays(qp);
	soft_sub(&qp->dev->stats.qps, 1);
}

/* ---- state changes ------------------------------------------------------ */

/* INIT -> RTR: find the destination QP on the fabric and link to it. */
static int qp_link(struct soft_qp *qp, u32 dest_qpn)
{
	struct soft_fabric *f = qp->dev->fabric;
	struct soft_qp *p, *tmp, *found = NULL;
	int ret = 0;

	soft_mutex_lock(&f->lock);
	list_for_each_entry_safe(p, tmp, &f->qps, fabric_entry)
		if (p->ibqp.qp_num == dest_qpn &&
		    (!qp->link_to || p == qp->link_to))
			found = p;
	if (!found || found == qp)
		ret = -EINVAL;
	/*
	 * An RC QP answers one requester: nobody else may point at it.  And
	 * the loopback's wire is a pair: the destination links to nobody or
	 * to this QP, and a QP that already links to this one must be the
	 * destination (the responder answers through its own link).
	 */
	if (!ret && found->peer && found->peer != qp)
		ret = -EINVAL;
	list_for_each_entry_safe(p, tmp, &f->qps, fabric_entry)
		if (!ret && p != qp &&
		    (p->peer == found || (p->peer == qp && p != found)))
			ret = -EINVAL;
	if (!ret) {
		exec_lock(qp);
		soft_store(&qp->peer, found);
		exec_unlock(qp);
	}
	soft_mutex_unlock(&f->lock);
	return ret;
}

/*
 * Modify to ERR is a barrier: when it returns, no WR of the Send Queue is
 * executing and every WR queued has completed as WR_FLUSH_ERR (the
 * requester flushes in ERR without looking at memory or MRs).  The
 * executor role is taken here, so a WR being executed finishes first, and
 * the queue is flushed in this thread.  Called from a handler that an
 * executor runs: if this thread is @qp's executor, the WR being completed
 * has already moved its bytes and the executor's loop flushes the rest as
 * soon as the handler returns, before any other WR executes; if it is
 * another QP's executor, waiting could close a cycle with a handler of
 * that QP, so a busy role is only asked to run again (it flushes before
 * its next WR).
 */
static void qp_err_barrier(struct soft_qp *qp)
{
	bool mine;

	if (exec_held_here(qp))
		return;
	if (!exec_top) {
		exec_lock(qp);
		exec_run(qp);
		return;
	}
	soft_spin_lock(&qp->sq_lock);
	mine = exec_claim_locked(qp);
	soft_spin_unlock(&qp->sq_lock);
	if (mine)
		exec_run(qp);
}

/*
 * The ORD the requester enforces (soft_req.c) from IB_QP_MAX_QP_RD_ATOMIC,
 * as each profile's driver takes it:
 * - rxe (rxe_qp_from_attr()): the value of any modify that carries the bit,
 *   0 included; its requester then never sends a READ (check_init_depth()).
 * - mlx5 (__mlx5_ib_modify_qp()): log_sra_max is written only for a
 *   non-zero value and its reset value 0 means 2^0: one READ at a time.
 * - siw: the ORD is the connection's, set when the QP enters RTS
 *   (siw_qp_readq_init()); siw_verbs_modify_qp() reads no
 *   IB_QP_MAX_QP_RD_ATOMIC, so a later modify changes nothing.
 * The software device runs a READ to its end before the next WR, so any
 * ORD of 1 or more is the same to it; only 0 matters.
 */
static void qp_set_ord(struct soft_qp *qp, enum ib_qp_state cur,
		       enum ib_qp_state next, u8 max_rd_atomic)
{
	enum rdma_protocol proto = qp->dev->profile.protocol;

	if (proto == RDMA_PROTOCOL_IWARP &&
	    !(cur == IB_QPS_RTR && next == IB_QPS_RTS))
		return;
	/* TCP: the connection's, given at attach */
	if (qp->dev->tcpd)
		return;
	if (proto == RDMA_PROTOCOL_IB && !max_rd_atomic)
		max_rd_atomic = 1;
	soft_store(&qp->ord, max_rd_atomic);
}

int rdmarw__soft_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			   int mask)
{
	struct soft_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur = soft_qp_state(qp);
	enum ib_qp_state next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	int ret;

	/* siw: CLOSING (our SQD on TCP) goes nowhere but down */
	if (cur == IB_QPS_SQD && next == IB_QPS_RTS && qp->dev->tcpd)
		return -ECONNABORTED;
	/* An attached QP is its connection's for life (it owns the socket,
	 * attach takes a QP once): no RESET, live or after the end */
	if (next == IB_QPS_RESET && cur != IB_QPS_RESET && soft_load(&qp->tcp))
		return -EINVAL;
	/* A TCP device's QP has no peer on the fabric: its connection is
	 * attached by the CM (rdmarw__soft_tcp_attach()). */
	if (cur == IB_QPS_INIT && next == IB_QPS_RTR && !qp->dev->tcpd) {
		if (!(mask & IB_QP_DEST_QPN))
			return -EINVAL; /* IBA: RTR needs the destination */
		ret = qp_link(qp, attr->dest_qp_num);
		if (ret)
			return ret;
	}
	if (mask & IB_QP_ACCESS_FLAGS)
		soft_store(&qp->access_flags, attr->qp_access_flags);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp_set_ord(qp, cur, next, attr->max_rd_atomic);
	if (next == IB_QPS_RESET && cur != IB_QPS_RESET) {
		qp_reset(qp);
	} else if (next == IB_QPS_ERR) {
		rdmarw__soft_tcp_drop(qp); /* siw_qp_cm_drop() */
		rdmarw__soft_qp_to_err(qp);
		qp_err_barrier(qp);
		rdmarw__soft_xmit_kick(qp);
	} else if (next == IB_QPS_SQD && cur == IB_QPS_RTS) {
		/* siw: SQD is CLOSING, which drops the connection; what the
		 * Send Queue holds flushes when it is down (QP in ERR) */
		rdmarw__soft_tcp_drop(qp);
	} else if (next == IB_QPS_RTS && cur != IB_QPS_RTS) {
		ret = rdmarw__qp_move(ibqp, IB_QPS_RTS, mask, NULL);
		if (ret)
			return ret; /* ERR came first */
		rdmarw__soft_qp_schedule(qp); /* SQD -> RTS resumes */
	}
	return 0;
}

static int qp_to_rts(struct ib_qp *qp, u32 dest_qpn)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				   IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE,
		.port_num = qp->port,
	};
	int ret;

	ret = ib_modify_qp(qp, &attr,
			   IB_QP_STATE | IB_QP_ACCESS_FLAGS | IB_QP_PORT |
				   IB_QP_PKEY_INDEX);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	attr.dest_qp_num = dest_qpn;
	attr.max_dest_rd_atomic = 16;
	ret = ib_modify_qp(qp, &attr,
			   IB_QP_STATE | IB_QP_DEST_QPN |
				   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_AV |
				   IB_QP_PATH_MTU | IB_QP_RQ_PSN |
				   IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	attr.max_rd_atomic = 16;
	return ib_modify_qp(qp, &attr,
			    IB_QP_STATE | IB_QP_MAX_QP_RD_ATOMIC |
				    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				    IB_QP_RNR_RETRY | IB_QP_SQ_PSN);
}

int soft_qp_connect(struct ib_qp *a, struct ib_qp *b)
{
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	int ret;

	if (!a || !b || a == b || !soft_device_is_soft(a->device) ||
	    !soft_device_is_soft(b->device))
		return -EINVAL;
	/* A TCP QP is connected by the CM over its socket. */
	if (to_sdev(a->device)->tcpd || to_sdev(b->device)->tcpd)
		return -EINVAL;
	if (to_sdev(a->device)->fabric != to_sdev(b->device)->fabric)
		return -EXDEV;
	if (soft_load(&a->state) != IB_QPS_RESET ||
	    soft_load(&b->state) != IB_QPS_RESET)
		return -EINVAL;
	/* Link exactly the QPs handed over, whatever else has their number. */
	to_sqp(a)->link_to = to_sqp(b);
	to_sqp(b)->link_to = to_sqp(a);
	ret = qp_to_rts(a, b->qp_num);
	if (!ret)
		ret = qp_to_rts(b, a->qp_num);
	to_sqp(a)->link_to = NULL;
	to_sqp(b)->link_to = NULL;
	if (ret) {
		ib_modify_qp(a, &reset, IB_QP_STATE);
		ib_modify_qp(b, &reset, IB_QP_STATE);
	}
	return ret;
}

/* ---- posting ------------------------------------------------------------ */

static int sge_total(const struct ib_sge *sge, int n, u64 *total)
{
	u64 sum = n == 1 ? sge->length : 0; /* one SGE: no loop to set up */
	int i;

	for (i = 0; n > 1 && i < n; i++)
		sum += sge[i].length;
	*total = sum;
	return sum > SOFT_MAX_MSG ? -EINVAL : 0;
}

static int check_send_wr(struct soft_qp *qp, const struct ib_send_wr *wr,
			 const struct soft_opcode **opp, u64 *len)
{
	const struct soft_opcode *op = rdmarw__soft_opcode(wr->opcode);

	/* A negative num_sge is above any limit as a u32 (sq_max_sge is an
	 * int's worth at most). */
	if (!op || (u32)wr->num_sge > qp->sq_max_sge ||
	    (wr->num_sge && !wr->sg_list) || (wr->send_flags & IB_SEND_INLINE))
		return -EINVAL;
	if (op->cls == SOFT_OPC_READ &&
	    ((u32)wr->num_sge > qp->ibqp.max_read_sge ||
	     (qp->dev->iwarp && wr->num_sge != 1)))
		return -EINVAL;
	if (op->flags & SOFT_OPF_REG) {
		const struct ib_mr *mr = reg_wr(wr)->mr;

		if (!mr || mr->device != qp->ibqp.device)
			return -EINVAL;
		if (wr->opcode == IB_WR_REG_MR_INTEGRITY &&
		    rdmarw__soft_sig_post_check(qp, wr))
			return -EINVAL;
	}
	*opp = op;
	return sge_total(wr->sg_list, wr->num_sge, len);
}

static void fill_send_wqe(struct soft_qp *qp, struct soft_send_wqe *w,
			  const struct ib_send_wr *wr,
			  const struct soft_opcode *op, u64 len, u64 seq)
{
	w->h.op = op;
	/* h.syndrome (SOFT_OK) and h.src_qpn are the slot's from creation
	 * (qp_set_src_qpn()). */
	w->h.kind = (u8)op->cls; /* a request's kind is its class */
	w->h.solicited = wr->send_flags & IB_SEND_SOLICITED;
	w->h.seq = seq;
	w->h.length = len;
	w->h.ex = wr->ex.invalidate_rkey;
	w->opcode = wr->opcode;
	w->wr_id = wr->wr_id;
	w->signaled = (wr->send_flags | qp->sig_all) & IB_SEND_SIGNALED;
	w->num_sge = (u32)wr->num_sge;
	if (wr->num_sge == 1)
		w->sge[0] =
			wr->sg_list[0]; /* the common case, without a call */
	else if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, w->num_sge * sizeof(*w->sge));
	if (op->cls == SOFT_OPC_WRITE || op->cls == SOFT_OPC_READ) {
		w->h.va = rdma_wr(wr)->remote_addr;
		w->h.rkey = rdma_wr(wr)->rkey;
		return;
	}
	w->h.va = 0;
	w->h.rkey = 0;
	if (op->flags & SOFT_OPF_REG) {
		const struct soft_mr *mr = to_smr(reg_wr(wr)->mr);

		w->reg_index = mr->index;
		w->reg_serial = mr->serial;
		w->reg_key = reg_wr(wr)->key;
		w->reg_access = reg_wr(wr)->access;
		if (wr->opcode == IB_WR_REG_MR_INTEGRITY)
			rdmarw__soft_sig_posted(wr);
	}
}

/*
 * Whether a QP outside RTS takes WRs: not before RTS (-EINVAL, as rxe); not
 * on a TCP device's QP in SQD, which is siw's CLOSING (rdma_disconnect()
 * asked for the close): -ENOTCONN, as siw_post_send()/siw_post_receive().
 * SQD elsewhere queues, SQE and ERR flush.  @send: the Send Queue's rule.
 */
static __attribute__((noinline)) int
post_state(struct soft_qp *qp, enum ib_qp_state state, bool send)
{
	if (state == IB_QPS_RESET ||
	    (send && (state == IB_QPS_INIT || state == IB_QPS_RTR)))
		return -EINVAL;
	if (state == IB_QPS_SQD && qp->dev->tcpd)
		return -ENOTCONN;
	return 0;
}

int rdmarw__soft_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr)
{
	struct soft_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = soft_qp_state(qp);
	const struct soft_opcode *op;
	int ret = 0, posted = 0;
	bool mine;
	u64 len, prod;

	if (__builtin_expect(state != IB_QPS_RTS, 0)) {
		ret = post_state(qp, state, true);
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
	}
	soft_spin_lock(&qp->sq_lock);
	/* Only this lock's holder writes sq_prod: read once, kept here
	 * (the release stores publish each WQE to the executor). */
	prod = qp->sq_prod;
	for (const struct ib_send_wr *next; wr; wr = next) {
		ret = inject_post(qp, wr);
		if (!ret)
			ret = check_send_wr(qp, wr, &op, &len);
		if (!ret && prod - soft_load(&qp->sq_done) >= qp->sq_size)
			ret = -ENOMEM;
		if (ret)
			break;
		fill_send_wqe(qp, &qp->sq[prod & qp->sq_mask], wr, op, len,
			      prod);
		next = wr->next; /* before the WR is handed over */
		soft_store(&qp->sq_prod, ++prod);
		posted++;
	}
	/* Inline devices: take the executor role in the same section. */
	mine = posted && !qp->dev->threaded && exec_claim_locked(qp);
	soft_spin_unlock(&qp->sq_lock);
	if (mine)
		exec_run(qp);
	else if (posted && qp->dev->threaded)
		rdmarw__soft_qp_schedule(qp);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * The one check of a receive WR, for a QP's Receive Queue and an SRQ alike:
 * at most @max_sge SGEs, a list when there are any, a capacity the device
 * can receive (-EINVAL), then room in the ring (@full: -ENOMEM).  On
 * success @w, the next slot, holds the receive.
 */
int rdmarw__soft_recv_fill(struct soft_recv_wqe *w, u32 max_sge, bool full,
			   const struct ib_recv_wr *wr)
{
	u64 len;
	int ret;

	if (wr->num_sge < 0 || (u32)wr->num_sge > max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	ret = sge_total(wr->sg_list, wr->num_sge, &len);
	if (ret)
		return ret;
	if (full)
		return -ENOMEM;
	w->wr_id = wr->wr_id;
	w->num_sge = (u32)wr->num_sge;
	if (wr->num_sge == 1)
		w->sge[0] =
			wr->sg_list[0]; /* the common case, without a call */
	else if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, w->num_sge * sizeof(*w->sge));
	w->length = len;
	return 0;
}

int rdmarw__soft_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	struct soft_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = soft_qp_state(qp);
	int ret = 0;

	if (state == IB_QPS_RESET || state == IB_QPS_SQD) {
		ret = post_state(qp, state, false);
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
	}
	soft_spin_lock(&qp->rq_lock);
	for (const struct ib_recv_wr *next; wr; wr = next) {
		next = wr->next; /* before the WR is handed over */
		ret = rdmarw__soft_recv_fill(
			&qp->rq[qp->rq_prod & qp->rq_mask], qp->rq_max_sge,
			qp->rq_prod - qp->rq_cons >= qp->rq_size, wr);
		if (ret)
			break;
		qp->rq_prod++;
		/* In ERR (set under this lock) nothing else is pending: the
		 * receive is flushed at once, as siw. */
		if (soft_qp_state(qp) == IB_QPS_ERR)
			rq_flush_locked(qp);
	}
	if (qp->rq_waiter && qp->rq_cons != qp->rq_prod) {
		qp->rq_waiter = false;
		soft_store(&qp->kick_peer, true);
	}
	soft_spin_unlock(&qp->rq_lock);
	rdmarw__soft_xmit_kick(qp); /* resume a SEND waiting for this */
	if (ret)
		*bad_wr = wr;
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester (rxe_req.c's role): takes WQEs off the Send Queue in order,
 * executes local operations (REG_MR, LOCAL_INV) itself, gathers and checks
 * the local payload of SEND and WRITE, transmits each request as a packet
 * (soft_net.c) to the responder (soft_resp.c) of the peer QP, whose
 * answers reach this QP's completer (soft_comp.c), which places READ data
 * and writes completions.
 *
 * Each WQE goes through named steps; every failure is an enum soft_fault,
 * turned into a completion status in one place (rdmarw__soft_status()).  A
 * failed WQE completes with its error even when unsignaled, the QP moves to
 * ERR and the rest of the queue completes with WR_FLUSH_ERR.
 *
 * A SEND (or WRITE_WITH_IMM) that finds no receive waits, as with
 * rnr_retry = 7: the Send Queue stops in order and the peer's
 * ib_post_recv() resumes it.  Nothing is retried on a timer.  iWARP has
 * no RNR: there the responder terminates (soft_resp.c).
 */
#include "soft/soft_net.h"
#include "soft/soft_sig.h"
#include "soft/soft_req.h"

/* qp->comp_fault is SOFT_OK between answers: zero. */
_Static_assert(SOFT_OK == 0, "SOFT_OK is zero");

enum req_ret {
	REQ_DONE, /* the WQE is finished (completed or not signaled) */
	REQ_STALL, /* wait for the peer; the WQE stays at the head */
};

/* ---- fault injection (a later issue hooks in here) --------------------- */

/*
 * Called before each WQE executes: a fault other than SOFT_OK fails the
 * WQE with that fault (and so moves the QP to ERR); *stall stops the Send
 * Queue before it (soft_fault.c).  Nothing armed: one predictable branch.
 */
static inline enum soft_fault
inject_exec(struct soft_qp *qp, struct soft_send_wqe *wqe, bool *stall)
{
	if (!soft_fault_on(qp))
		return SOFT_OK;
	return rdmarw__soft_fault_exec(qp, wqe, stall);
}

/* ---- local operations --------------------------------------------------- */

static enum soft_fault req_local(struct soft_qp *qp, struct soft_send_wqe *wqe)
{
	struct soft_brlock *l = &qp->dev->fabric->mem_lock;
	int ret;

	/* REG_MR and LOCAL_INV change one MR under its own lock (soft_mr.c).
	 * An integrity MR's REG_MR (rare) keeps every reader out. */
	if (wqe->opcode == IB_WR_REG_MR_INTEGRITY) {
		soft_br_write_lock(l);
		ret = rdmarw__soft_sig_register(qp, wqe->reg_index,
						wqe->reg_serial, wqe->reg_key,
						wqe->reg_access);
		soft_br_write_unlock(l);
	} else if (wqe->h.op->flags & SOFT_OPF_REG) {
		ret = rdmarw__soft_mr_register(qp, wqe->reg_index,
					       wqe->reg_serial, wqe->reg_key,
					       wqe->reg_access);
	} else {
		ret = rdmarw__soft_mr_invalidate_sync(qp->dev, qp->ibqp.pd,
						      wqe->h.ex, qp->mem_rd);
	}
	/* rxe_do_local_ops(): a refused REG_MR or LOCAL_INV is
	 * IB_WC_LOC_QP_OP_ERR (siw completes its tx errors the same way). */
	return ret ? SOFT_F_LOC_QP_OP : SOFT_OK;
}

/* ---- remote operations -------------------------------------------------- */

/*
 * What follows a request that was answered or that the responder finishes
 * after the transmit (and every READ): the answer's fault (a NAK's
 * syndrome, RNR, the READ placement's), the end of the message at the
 * peer, READ_WITH_INV's invalidation.  Out of line: a plain WRITE that the
 * responder accepted whole tests one word and returns.  No read section
 * held.  Return: the WQE's fault, or SOFT_F_RNR: wait.
 */
static enum soft_fault req_remote_tail(struct soft_qp *qp,
				       struct soft_send_wqe *wqe, int ret,
				       enum soft_op_class cls)
{
	enum soft_fault fault = SOFT_OK;

	/* The wire cannot take it now: wait, the transport runs it again. */
	if (ret & SOFT_RCV_STALL)
		return SOFT_F_RNR;
	/* A wire's READ in flight: it completes when its response is in. */
	if (ret & SOFT_RCV_LATER)
		return SOFT_F_LATER;
	if (ret & SOFT_RCV_ANSWERED) {
		fault = qp->comp_fault;
		qp->comp_fault = SOFT_OK;
	} else if (cls == SOFT_OPC_READ) {
		fault = SOFT_F_RETRY_EXC; /* no response came */
	}
	if (fault == SOFT_F_RNR) {
		soft_add(&qp->dev->stats.rnr_stalls, 1);
		return SOFT_F_RNR;
	}
	if ((ret & SOFT_RCV_END) && rdmarw__soft_xmit_end(qp))
		soft_store(&qp->kick_peer, true);
	if (cls == SOFT_OPC_READ && !fault &&
	    (wqe->h.op->flags & SOFT_OPF_LOC_INV))
		fault = rdmarw__soft_comp_read_inv(qp, wqe);
	return fault;
}

/*
 * A SEND, WRITE or READ: the requester checks the local payload of a SEND
 * or WRITE (rxe's copy_data(), access 0) in its read section, held while
 * the payload is read, and transmits the request (soft_xmit_req(), the
 * loopback inline); the responder of the peer QP applies every rule of
 * its side and places SEND and WRITE data, and answers with packets to
 * this QP's completer, which places READ data into the sinks it checks
 * (a READ: in the responder's section; the requester holds none).  Each
 * refusal stops the request where it is found.  Return: the WQE's fault, or SOFT_F_RNR: the Send Queue waits for
 * a receive.
 */
soft_check_inline enum soft_fault req_remote(struct soft_qp *qp,
					     struct soft_send_wqe *wqe,
					     enum soft_op_class cls, bool wire)
{
	struct soft_fabric *f = qp->dev->fabric;
	struct soft_pkt pkt;
	int ret;

	if (cls == SOFT_OPC_READ) {
		/* No payload: the responder reads in its own section. */
		pkt.pay.rg = NULL;
		pkt.pay.n = 0;
		pkt.h = wqe->h;
		return req_remote_tail(qp, wqe,
				       soft_xmit_req(qp, &pkt, cls, wire), cls);
	}
	soft_br_read_lock(&f->mem_lock, qp->mem_rd);
	if (soft_sgl_check(qp->dev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
			   qp->req_rg, &pkt.pay.n)) {
		soft_br_read_unlock(qp->mem_rd);
		return SOFT_F_LOC_PROT;
	}
	pkt.pay.rg = qp->req_rg;
	pkt.h = wqe->h; /* the header, by value */
	ret = soft_xmit_req(qp, &pkt, cls, wire);
	soft_br_read_unlock(qp->mem_rd);
	/* Accepted whole, nothing for the responder to finish: done. */
	if (__builtin_expect(!ret, 1))
		return SOFT_OK;
	return req_remote_tail(qp, wqe, ret, cls);
}

enum soft_fault rdmarw__soft_req_replay(struct soft_qp *qp,
					struct soft_send_wqe *wqe, u8 *snap)
{
	struct soft_fabric *f = qp->dev->fabric;
	enum soft_op_class cls = wqe->h.op->cls;
	struct soft_region rg;
	struct soft_pkt pkt;
	int ret;

	soft_br_read_lock(&f->mem_lock, qp->mem_rd);
	if (!wqe->zcopy) {
		rg = (struct soft_region){ .dev = qp->dev,
					   .addr = (u64)(uintptr_t)snap,
					   .len = wqe->h.length,
					   .cpu = snap };
		pkt.pay.rg = &rg;
		pkt.pay.n = 1;
	} else if (soft_sgl_check(qp->dev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				  0, qp->req_rg, &pkt.pay.n)) {
		soft_br_read_unlock(qp->mem_rd);
		return SOFT_F_LOC_PROT;
	} else {
		pkt.pay.rg = qp->req_rg;
	}
	pkt.h = wqe->h;
	ret = rdmarw__soft_xmit(qp, &pkt);
	soft_br_read_unlock(qp->mem_rd);
	if (ret <= 0)
		return ret ? SOFT_F_LOC_PROT : SOFT_OK;
	return req_remote_tail(qp, wqe, ret, cls);
}

/*
 * What an iWARP requester sees of a remote access error (or of a SEND
 * that found no receive): nothing but the TERMINATE that moves its QP to
 * ERR.  iWARP does not acknowledge a WRITE,
 * so siw has completed it (SUCCESS) once it was sent; a READ waiting for
 * its response is flushed with the rest of the queue (seen on the kernel's
 * siw, tests/test_ibv_rw.c).  *@term: the QP must go to ERR all the same.
 */
static enum soft_fault iwarp_terminated(struct soft_qp *qp,
					struct soft_send_wqe *wqe,
					enum soft_fault fault, bool *term)
{
	if (fault != SOFT_F_REM_ACCESS || !qp->dev->iwarp)
		return fault;
	*term = true;
	return wqe->h.op->cls == SOFT_OPC_READ ? SOFT_F_FLUSH : SOFT_OK;
}

/*
 * A READ on a QP whose ORD is 0 (qp_set_ord() in soft_qp.c).  rxe's
 * requester takes a read/atomic credit before it sends one
 * (check_init_depth()); with max_rd_atomic 0 there is none and it waits,
 * in order, for a credit that never comes: the Send Queue stops at the READ
 * until a modify raises the ORD (SQD -> RTS resumes it) or the QP goes to
 * ERR, which flushes it with the rest.  siw's siw_activate_tx() refuses a
 * READ when "we negotiated not to send READ req's" (-EINVAL); reached
 * behind other work, the failed SQ processing drops the connection
 * (siw_sq_resume() -> siw_qp_cm_drop()): the READ flushes and both QPs go
 * to ERR.  Out of line: the READ path's only extra cost is the test.
 */
static __attribute__((noinline, cold)) enum req_ret
req_no_ord(struct soft_qp *qp, struct soft_send_wqe *wqe)
{
	if (!qp->dev->iwarp)
		return REQ_STALL;
	soft_count(&qp->st_wrs, 1);
	rdmarw__soft_comp_send(qp, wqe, SOFT_F_FLUSH);
	rdmarw__soft_qp_to_err(qp);
	if (rdmarw__soft_xmit_close(qp))
		soft_store(&qp->kick_peer, true);
	return REQ_DONE;
}

/* ---- completions behind a READ in flight (a wire's ORQ) ------------------ */

/*
 * A WQE executed while a READ is in flight (or that READ itself): its
 * completion waits, in order, for the READ's (rxe's req and comp indexes).
 * A failure still moves the QP to ERR now; it completes in its turn.
 */
static __attribute__((noinline)) enum req_ret
req_defer(struct soft_qp *qp, struct soft_send_wqe *wqe, enum soft_fault fault,
	  bool term)
{
	if (!qp->defer)
		qp->sq_comp = qp->sq_exec;
	qp->defer++;
	wqe->wait = fault == SOFT_F_LATER;
	wqe->res =
		(u8)(fault == SOFT_F_LATER || fault == SOFT_F_HELD ? SOFT_OK :
								     fault);
	if (term || wqe->res)
		rdmarw__soft_qp_to_err(qp);
	return REQ_DONE;
}

/*
 * Complete, in order, what waited behind READs in flight: up to the first
 * READ whose response has not come.  In ERR, all of it: a READ in flight
 * and what followed it flush (siw_sq_flush() flushes its ORQ), a failed
 * WQE completes with its own fault.
 */
static __attribute__((noinline)) void req_complete_ready(struct soft_qp *qp)
{
	bool err = soft_qp_state(qp) == IB_QPS_ERR;

	while (qp->defer) {
		struct soft_send_wqe *wqe = &qp->sq[qp->sq_comp & qp->sq_mask];
		enum soft_fault f = (enum soft_fault)wqe->res;

		if (wqe->wait && !err) {
			if (!rdmarw__soft_tcp_orq_done(qp, wqe->h.seq, &f))
				return;
			if (!f && (wqe->h.op->flags & SOFT_OPF_LOC_INV))
				f = rdmarw__soft_comp_read_inv(qp, wqe);
		} else if (err && !f) {
			f = SOFT_F_FLUSH;
		}
		wqe->wait = false;
		qp->sq_comp++;
		qp->defer--;
		if (!f) {
			rdmarw__soft_comp_send_ok(qp, wqe);
			continue;
		}
		rdmarw__soft_comp_send(qp, wqe, f);
		rdmarw__soft_qp_to_err(qp);
		err = true;
	}
	if (err)
		rdmarw__soft_tcp_orq_drop(qp);
}

/* ---- the loop ------------------------------------------------------------ */

/*
 * @wire: @qp is a TCP device's (rdmarw__soft_requester()): only there can
 * a READ be in flight after its transmit (SOFT_F_LATER) and WQEs wait
 * behind it (qp->defer); the loopback's instance has no test of either.
 */
static inline __attribute__((always_inline)) enum req_ret
req_execute(struct soft_qp *qp, struct soft_send_wqe *wqe, bool wire)
{
	bool stall = false, term = false;
	enum soft_fault fault = inject_exec(qp, wqe, &stall);

	if (!fault && !stall) {
		enum soft_op_class cls = wqe->h.op->cls;

		/* The most common class first (a test, not a jump table). */
		if (cls == SOFT_OPC_WRITE)
			fault = req_remote(qp, wqe, SOFT_OPC_WRITE, wire);
		else if (cls == SOFT_OPC_READ && !soft_load(&qp->ord))
			return req_no_ord(qp, wqe);
		else if (cls == SOFT_OPC_READ)
			fault = req_remote(qp, wqe, SOFT_OPC_READ, wire);
		else if (cls == SOFT_OPC_SEND)
			fault = req_remote(qp, wqe, SOFT_OPC_SEND, wire);
		else
			fault = req_local(qp, wqe);
		if (__builtin_expect(fault != SOFT_OK, 0)) {
			if (fault == SOFT_F_RNR)
				return REQ_STALL;
			fault = iwarp_terminated(qp, wqe, fault, &term);
		}
	}
	if (stall)
		return REQ_STALL;
	soft_count(&qp->st_wrs, 1);
	if (wire && __builtin_expect(qp->defer || fault == SOFT_F_LATER, 0))
		return req_defer(qp, wqe, fault, term);
	/* SOFT_F_HELD: siw's zero-copy model (soft_zcopy.c) holds it: sent, as
	 * siw sees it.  One call of the completer: it stays inlined. */
	if (__builtin_expect((!fault && !term) || fault == SOFT_F_HELD, 1)) {
		rdmarw__soft_comp_send_ok(qp, wqe);
		return REQ_DONE;
	}
	rdmarw__soft_comp_send(qp, wqe, fault);
	rdmarw__soft_qp_to_err(qp);
	return REQ_DONE;
}

/*
 * The requester's loop; @wire as req_execute()'s, a constant in each
 * instance.
 */
static inline __attribute__((always_inline)) void req_loop(struct soft_qp *qp,
							   bool wire)
{
	for (;;) {
		struct soft_send_wqe *wqe;
		/*
		 * The state before the WQEs waiting behind a READ complete: a
		 * QP found in ERR here has flushed them all below, in order,
		 * before a newer WQE flushes (the receive thread may move it
		 * to ERR at any time).
		 */
		enum ib_qp_state state = soft_qp_state(qp);

		if (wire && __builtin_expect(qp->defer != 0, 0))
			req_complete_ready(qp);
		if (qp->sq_exec == soft_load(&qp->sq_prod))
			return;
		wqe = &qp->sq[qp->sq_exec & qp->sq_mask];
		if (state == IB_QPS_ERR) {
			rdmarw__soft_comp_send(qp, wqe, SOFT_F_FLUSH);
		} else if (state != IB_QPS_RTS ||
			   req_execute(qp, wqe, wire) == REQ_STALL) {
			return; /* SQD, or waiting for the peer */
		}
		qp->sq_exec++;
	}
}

/* A TCP device's QP: the wire's instance, out of line. */
static __attribute__((noinline)) void req_loop_wire(struct soft_qp *qp)
{
	req_loop(qp, true);
}

/*
 * Inline into its one caller, the executor's loop (soft_qp.c's exec_run(),
 * joined by LTO; a build without LTO calls it): as a call, the request's
 * frame was set up and torn down once more per run.  A QP's device is on
 * TCP or not for its life (soft_dev.tcpd is set before any QP exists and
 * cleared after the last; a TCP device's QPs have no loopback peer,
 * soft_qp_connect()), so the loop tests it once per run, not per WQE.
 */
inline __attribute__((always_inline)) void
rdmarw__soft_requester(struct soft_qp *qp)
{
	if (__builtin_expect(qp->dev->tcpd != NULL, 0))
		req_loop_wire(qp);
	else
		req_loop(qp, false);
}

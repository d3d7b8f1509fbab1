// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester (rxe_req.c's role): takes WQEs off the Send Queue in order,
 * executes local operations (REG_MR, LOCAL_INV) itself, gathers and checks
 * the local payload of SEND and WRITE, hands each request to the
 * responder (soft_resp.c) of the peer QP, and lets the completer
 * (soft_comp.c) place READ data and write completions.
 *
 * Each WQE goes through named steps; every failure is an enum soft_fault,
 * turned into a completion status in one place (rdmarw__soft_status()).  A
 * failed WQE completes with its error even when unsignaled, the QP moves to
 * ERR and the rest of the queue completes with WR_FLUSH_ERR.
 *
 * A SEND (or WRITE_WITH_IMM) that finds no receive waits, as with
 * rnr_retry = 7: the Send Queue stops in order and the peer's
 * ib_post_recv() resumes it.  Nothing is retried on a timer.
 */
#include "soft/soft_sig.h"

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
	struct soft_fabric *f = qp->dev->fabric;
	int ret;

	if (wqe->op->flags & SOFT_OPF_UNSUPP)
		return SOFT_F_NOT_SUPP;
	soft_write_lock(&f->mem_lock);
	if (wqe->opcode == IB_WR_REG_MR_INTEGRITY)
		ret = rdmarw__soft_sig_register(qp, wqe->reg_index,
						wqe->reg_serial, wqe->reg_key,
						wqe->reg_access);
	else if (wqe->op->flags & SOFT_OPF_REG)
		ret = rdmarw__soft_mr_register(qp, wqe->reg_index,
					       wqe->reg_serial, wqe->reg_key,
					       wqe->reg_access);
	else
		ret = rdmarw__soft_mr_invalidate(qp->dev, qp->ibqp.pd, wqe->ex);
	soft_write_unlock(&f->mem_lock);
	/* rxe_do_local_ops(): a refused REG_MR or LOCAL_INV is
	 * IB_WC_LOC_QP_OP_ERR (siw completes its tx errors the same way). */
	return ret ? SOFT_F_LOC_QP_OP : SOFT_OK;
}

/* ---- remote operations -------------------------------------------------- */

/* Check the local payload of a SEND or WRITE (rxe copy_data, access 0). */
static enum soft_fault req_gather(struct soft_qp *qp, struct soft_send_wqe *wqe,
				  u32 *nrg)
{
	if (soft_sgl_check(qp->dev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
			   qp->req_rg, nrg))
		return SOFT_F_LOC_PROT;
	return SOFT_OK;
}

static enum soft_fault req_remote(struct soft_qp *qp, struct soft_send_wqe *wqe,
				  bool *stall)
{
	struct soft_fabric *f = qp->dev->fabric;
	struct soft_pkt pkt = { .req = qp, .wqe = wqe };
	struct soft_qp *peer = qp->peer;
	enum soft_fault fault;
	u32 n = 0;

	if (!peer)
		return SOFT_F_RETRY_EXC; /* nobody will ever answer */
	soft_read_lock(&f->mem_lock);
	if (wqe->op->cls != SOFT_OPC_READ) {
		fault = req_gather(qp, wqe, &n);
		if (fault) {
			soft_read_unlock(&f->mem_lock);
			return fault;
		}
		pkt.src = qp->req_rg;
		pkt.nsrc = n;
	}
	rdmarw__soft_resp_receive(peer, &pkt);
	if (pkt.rnr) {
		soft_read_unlock(&f->mem_lock);
		soft_add(&qp->dev->stats.rnr_stalls, 1);
		*stall = true;
		return SOFT_OK;
	}
	fault = pkt.fault;
	if (!fault && wqe->op->cls == SOFT_OPC_READ)
		fault = rdmarw__soft_comp_read(qp, wqe, &pkt.read_src);
	soft_read_unlock(&f->mem_lock);
	rdmarw__soft_resp_finish(peer, &pkt);
	if (!fault && (wqe->op->flags & SOFT_OPF_LOC_INV))
		fault = rdmarw__soft_comp_read_inv(qp, wqe);
	return fault;
}

/*
 * The common request, answered in one step: an RDMA WRITE or READ (no
 * immediate, no invalidation) of one local SGE, to a peer that can answer
 * and grants the right, through a key that passes every check.  It checks
 * everything before it moves a byte, with the same checks as the full
 * path (soft_sgl_check(), soft_mr_check(), the responder's state and
 * rights); when any of them says no it returns false having changed
 * nothing, and req_remote() runs the request and reports the exact error.
 * A success has the full path's effects: the bytes, and the byte count of
 * the executor that placed them.
 */
static bool req_one_step(struct soft_qp *qp, struct soft_send_wqe *wqe)
{
	const struct soft_opcode *op = wqe->op;
	struct soft_rwlock *ml = &qp->dev->fabric->mem_lock;
	struct soft_qp *peer = qp->peer;
	struct soft_region loc, rem;
	bool write = op->cls == SOFT_OPC_WRITE;
	int access = 0;
	u32 n;

	if (op->flags || (!write && op->cls != SOFT_OPC_READ) ||
	    wqe->num_sge != 1 || !wqe->length || !peer)
		return false;
	if (!write) /* a READ sink, as rdmarw__soft_comp_read() asks it */
		access = soft_read_sink_access(qp);
	soft_read_lock(ml);
	if (!soft_resp_ready(peer) || !soft_resp_grants(peer, op) ||
	    soft_sgl_check(qp->dev, qp->ibqp.pd, wqe->sge, 1, access, &loc,
			   &n) ||
	    soft_mr_check(peer->dev, peer->ibqp.pd, wqe->rkey, wqe->remote_addr,
			  wqe->length, op->rem_access, SOFT_LOOKUP_REMOTE,
			  &rem)) {
		soft_read_unlock(ml);
		return false;
	}
	/* Both ranges hold exactly wqe->length bytes (checked above). */
	if (loc.cpu && rem.cpu)
		memmove(write ? rem.cpu : loc.cpu, write ? loc.cpu : rem.cpu,
			wqe->length);
	else if (write ? rdmarw__soft_copy(&loc, n, &rem, 1, wqe->length) :
			 rdmarw__soft_copy(&rem, 1, &loc, n, wqe->length)) {
		/* Nothing moved: the full path reports the failure. */
		soft_read_unlock(ml);
		return false;
	}
	soft_read_unlock(ml);
	soft_count(write ? &qp->st_peer_bytes : &qp->st_bytes, wqe->length);
	return true;
}

/*
 * What an iWARP requester sees of a remote access error: nothing but the
 * TERMINATE that moves its QP to ERR.  iWARP does not acknowledge a WRITE,
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
	return wqe->op->cls == SOFT_OPC_READ ? SOFT_F_FLUSH : SOFT_OK;
}

/* ---- the loop ------------------------------------------------------------ */

static enum req_ret req_execute(struct soft_qp *qp, struct soft_send_wqe *wqe)
{
	bool stall = false, term = false;
	enum soft_fault fault = inject_exec(qp, wqe, &stall);

	if (!fault && !stall && req_one_step(qp, wqe)) {
		soft_count(&qp->st_wrs, 1);
		soft_comp_send_ok(qp, wqe);
		return REQ_DONE;
	}
	if (!fault && !stall) {
		if (wqe->op->cls == SOFT_OPC_LOCAL) {
			fault = req_local(qp, wqe);
		} else {
			fault = req_remote(qp, wqe, &stall);
			fault = iwarp_terminated(qp, wqe, fault, &term);
		}
	}
	if (stall)
		return REQ_STALL;
	soft_count(&qp->st_wrs, 1);
	rdmarw__soft_comp_send(qp, wqe, fault);
	if (fault || term)
		rdmarw__soft_qp_to_err(qp);
	return REQ_DONE;
}

void rdmarw__soft_requester(struct soft_qp *qp)
{
	for (;;) {
		struct soft_send_wqe *wqe;
		enum ib_qp_state state;

		if (qp->sq_exec == soft_load(&qp->sq_prod))
			return;
		wqe = &qp->sq[qp->sq_exec & qp->sq_mask];
		state = soft_qp_state(qp);
		if (state == IB_QPS_ERR) {
			rdmarw__soft_comp_send(qp, wqe, SOFT_F_FLUSH);
		} else if (state != IB_QPS_RTS ||
			   req_execute(qp, wqe) == REQ_STALL) {
			return; /* SQD, or waiting for the peer */
		}
		qp->sq_exec++;
	}
}

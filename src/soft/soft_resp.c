// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder (rxe_resp.c's role): the target side of SEND, WRITE and
 * READ.  It checks the QP can answer, takes a receive where the opcode
 * needs one (or asks the requester to wait), checks the rkey or the receive
 * buffers, places SEND and WRITE data, and hands READ data back to the
 * completer.  It runs in the requester's thread, but only ever looks at the
 * request's header and payload (struct soft_pkt), never at the requester's
 * queues, WQE or QP.
 *
 * Errors, as rxe classifies them (rxe_responder()):
 * - the QP grants no remote READ/WRITE (qp_access_flags): class C, NAK
 *   invalid request: requester REM_INV_REQ_ERR, responder to ERR;
 * - bad rkey, PD, rights, state or bounds: class C, NAK remote access:
 *   requester REM_ACCESS_ERR, responder to ERR; a receive it consumed
 *   (WRITE_WITH_IMM) completes with LOC_ACCESS_ERR, as mlx5 reports it
 *   (rxe reuses REM_ACCESS_ERR there);
 * - SEND longer than the receive: requester REM_INV_REQ_ERR, the receive
 *   LOC_LEN_ERR (IBA and mlx5; rxe completes it with REM_INV_REQ_ERR),
 *   responder to ERR;
 * - bad receive buffers (key, bounds, LOCAL_WRITE): requester REM_OP_ERR
 *   (class A NAK), the receive LOC_PROT_ERR, responder to ERR;
 * - SEND_WITH_INV that cannot invalidate: the receive REM_INV_REQ_ERR and
 *   responder to ERR (rxe class J, siw siw_rdmap_complete()); the message
 *   was delivered, so the requester's SEND succeeds;
 * - a QP not in RTR/RTS/SQD, or no QP: nobody answers, the requester
 *   retries until RETRY_EXC_ERR;
 * - a SEND with no receive posted: RNR NAK, the requester waits (rnr_retry
 *   7); on iWARP (siw) a DDP error: both sides to ERR, as for a bad rkey.
 * A zero-length READ or WRITE is not required to carry a valid rkey (IBA
 * C9-88, as rxe).
 */
#include "soft/soft_access.h"
#include "soft/soft_srq.h"
#include "soft/soft_resp.h"

enum resp_recv {
	RESP_RECV_TAKEN,
	RESP_RECV_NONE, /* none posted: RNR, the requester waits (iWARP:
			 * a DDP error, the connection terminates) */
	RESP_RECV_ERR, /* the QP went to ERR: nobody answers */
};

/*
 * Take the next receive, or report that none is posted (RNR).  The state
 * is read again under rq_lock (the QP moves to ERR under it): a QP that
 * went to ERR after the first check has flushed its receives and will
 * never wake a waiter, so the requester must not wait for it.
 */
static enum resp_recv resp_take_recv(struct soft_qp *qp)
{
	struct soft_recv_wqe *w, *dst = &qp->resp_wqe;

	if (qp->ibqp.srq) { /* soft_srq.c */
		int r = rdmarw__soft_srq_take(qp);

		return !r	    ? RESP_RECV_TAKEN :
		       r == -EAGAIN ? RESP_RECV_NONE :
				      RESP_RECV_ERR;
	}
	soft_spin_lock(&qp->rq_lock);
	if (soft_qp_state(qp) == IB_QPS_ERR) {
		soft_spin_unlock(&qp->rq_lock);
		return RESP_RECV_ERR;
	}
	if (qp->rq_cons == qp->rq_prod) {
		qp->rq_waiter = true;
		soft_spin_unlock(&qp->rq_lock);
		return RESP_RECV_NONE;
	}
	w = &qp->rq[qp->rq_cons & qp->rq_mask];
	dst->wr_id = w->wr_id;
	dst->num_sge = w->num_sge;
	dst->length = w->length;
	if (w->num_sge)
		memcpy(dst->sge, w->sge, w->num_sge * sizeof(*dst->sge));
	qp->rq_cons++;
	soft_spin_unlock(&qp->rq_lock);
	return RESP_RECV_TAKEN;
}

static void resp_fail(struct soft_pkt *pkt, enum soft_fault req_fault,
		      enum soft_fault resp_fault)
{
	pkt->fault = req_fault;
	pkt->resp_fault = resp_fault;
	pkt->resp_err = true;
	pkt->finish = true;
}

static void resp_send(struct soft_qp *qp, struct soft_pkt *pkt)
{
	const struct soft_recv_wqe *w = &qp->resp_wqe;
	u32 n;

	if (pkt->h.length > w->length) {
		resp_fail(pkt, SOFT_F_REM_INV_REQ, SOFT_F_LOC_LEN);
		return;
	}
	if (soft_sgl_check(qp->dev, qp->ibqp.pd, w->sge, w->num_sge,
			   IB_ACCESS_LOCAL_WRITE, qp->resp_rg, &n)) {
		resp_fail(pkt, SOFT_F_REM_OP, SOFT_F_LOC_PROT);
		return;
	}
	if (soft_copy(pkt->pay.rg, pkt->pay.n, qp->resp_rg, n, pkt->h.length)) {
		/* Nothing placed: the SEND and its receive both fail. */
		resp_fail(pkt, SOFT_F_LOC_RES, SOFT_F_LOC_RES);
		return;
	}
	if (pkt->h.op->flags & SOFT_OPF_REM_INV) {
		pkt->inv_key = pkt->h.ex;
		pkt->inv_key_set = true;
	}
}

/* Check the rkey range; READ leaves it in pkt->read_src. */
soft_check_inline bool resp_rkey(struct soft_qp *qp, struct soft_pkt *pkt,
				 struct soft_region *rg)
{
	const struct soft_hdr *h = &pkt->h;

	if (!h->length) {
		*rg = (struct soft_region){ .dev = qp->dev };
		return true;
	}
	if (!soft_mr_check(qp->dev, qp->ibqp.pd, h->rkey, h->va, h->length,
			   h->op->rem_access, SOFT_LOOKUP_REMOTE, rg))
		return true;
	resp_fail(pkt, SOFT_F_REM_ACCESS,
		  pkt->recv_taken ? SOFT_F_LOC_ACCESS : SOFT_OK);
	return false;
}

/*
 * The responder's first rules, for every request, in order: the QP
 * answers, it grants the operation, and a receive is there when the
 * opcode consumes one.  False: refused (recorded in @pkt), or RNR.
 */
soft_check_inline bool resp_accept(struct soft_qp *qp, struct soft_pkt *pkt,
				   bool recv)
{
	if (!soft_resp_ready(qp)) {
		pkt->fault = SOFT_F_RETRY_EXC;
		return false;
	}
	if (!soft_resp_grants(qp, pkt->h.op)) {
		resp_fail(pkt, SOFT_F_REM_INV_REQ, SOFT_OK);
		return false;
	}
	if (!recv)
		return true;
	switch (resp_take_recv(qp)) {
	case RESP_RECV_TAKEN:
		pkt->recv_taken = true;
		pkt->finish = true;
		pkt->resp_fault = SOFT_OK;
		return true;
	case RESP_RECV_NONE:
		if (qp->dev->iwarp) {
			/* No RNR on iWARP: siw_proc_send() finds no receive,
			 * a DDP error; the connection terminates (the
			 * requester's side: iwarp_terminated()). */
			resp_fail(pkt, SOFT_F_REM_ACCESS, SOFT_OK);
			return false;
		}
		pkt->fault = SOFT_F_RNR;
		return false;
	case RESP_RECV_ERR:
		break;
	}
	pkt->fault = SOFT_F_RETRY_EXC;
	return false;
}

/* The WRITE's rules and placement, inlined into its two entries below. */
static inline __attribute__((always_inline)) void
resp_write(struct soft_qp *qp, struct soft_pkt *pkt)
{
	const struct soft_region *src = pkt->pay.rg;
	u64 len = pkt->h.length;
	struct soft_region rg;

	if (!resp_accept(qp, pkt, pkt->h.op->flags & SOFT_OPF_RECV) ||
	    !resp_rkey(qp, pkt, &rg))
		return;
	/* Both sides hold exactly @len bytes (the requester's one region
	 * is the WR's payload, the rkey check gave @len): contiguous on
	 * both sides, one memmove. */
	if (pkt->pay.n == 1 && src->cpu && rg.cpu)
		memmove(rg.cpu, src->cpu, len);
	else if (soft_copy(src, pkt->pay.n, &rg, 1, len)) {
		pkt->fault = SOFT_F_LOC_RES; /* nothing placed */
		return;
	}
	soft_count(&qp->st_resp_bytes, len);
}

void rdmarw__soft_resp_write(struct soft_qp *qp, struct soft_pkt *pkt)
{
	resp_write(qp, pkt);
}

void rdmarw__soft_resp_read(struct soft_qp *qp, struct soft_pkt *pkt)
{
	if (resp_accept(qp, pkt, false))
		resp_rkey(qp, pkt, &pkt->read_src);
}

void rdmarw__soft_resp_send(struct soft_qp *qp, struct soft_pkt *pkt)
{
	if (resp_accept(qp, pkt, true))
		resp_send(qp, pkt);
}

/*
 * A SEND or WRITE that the zero-copy model held (soft_zcopy.c) reaches the
 * responder here: the same rules, through an entry of its own, so that the
 * requester's calls stay the only callers of the fast ones (a second caller
 * kept LTO from inlining rdmarw__soft_resp_write(): +25 instructions per
 * 64 B WRITE).
 */
__attribute__((cold)) void rdmarw__soft_resp_late(struct soft_qp *qp,
						  struct soft_pkt *pkt)
{
	if (pkt->h.op->cls == SOFT_OPC_WRITE)
		resp_write(qp, pkt);
	else if (resp_accept(qp, pkt, true))
		resp_send(qp, pkt);
}

void rdmarw__soft_resp_finish(struct soft_qp *qp, struct soft_pkt *pkt)
{
	struct soft_fabric *f = qp->dev->fabric;
	enum soft_fault rf = pkt->resp_fault;
	u64 len = pkt->h.length;
	int ret;

	if (!pkt->fault && !rf && pkt->inv_key_set) {
		soft_br_write_lock(&f->mem_lock);
		ret = rdmarw__soft_mr_invalidate(qp->dev, qp->ibqp.pd,
						 pkt->inv_key);
		soft_br_write_unlock(&f->mem_lock);
		if (ret) {
			rf = SOFT_F_REM_INV_REQ;
			pkt->resp_err = true;
			pkt->inv_key_set = false;
		}
	}
	if (pkt->recv_taken) {
		rdmarw__soft_comp_recv(qp, &qp->resp_wqe, rf, pkt,
				       rf ? 0 : len);
		if (qp->ibqp.srq)
			rdmarw__soft_srq_recv_done(qp);
	}
	if (!pkt->fault && !rf && pkt->h.op->cls == SOFT_OPC_SEND)
		soft_count(&qp->st_resp_bytes, len);
	/* The responder's own Send Queue must now flush: the requester
	 * runs it once its executor is done (rdmarw__soft_qp_kick()). */
	if (pkt->resp_err && rdmarw__soft_qp_to_err(qp))
		pkt->kick = true;
}

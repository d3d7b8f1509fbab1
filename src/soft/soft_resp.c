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
	if (w->num_sge == 1)
		dst->sge[0] = w->sge[0]; /* the common case, without a call */
	else if (w->num_sge)
		memcpy(dst->sge, w->sge, w->num_sge * sizeof(*dst->sge));
	qp->rq_cons++;
	soft_spin_unlock(&qp->rq_lock);
	return RESP_RECV_TAKEN;
}

/*
 * Answer @req with @kind (NAK, RNR, TERMINATE; @syn: the requester's
 * fault), from this QP through its transport.  Return: the flags for the
 * receive (the answer reached the requester's completer).
 */
static __attribute__((noinline)) int resp_answer(struct soft_qp *qp,
						 const struct soft_pkt *req,
						 u8 kind, enum soft_fault syn)
{
	struct soft_pkt ans = {
		.h = { .kind = kind,
		       .syndrome = (u8)syn,
		       .src_qpn = qp->ibqp.qp_num,
		       .seq = req->h.seq },
	};
	int ret = rdmarw__soft_xmit(qp, &ans);

	return ret > 0 ? ret & SOFT_RCV_ANSWERED : 0;
}

/*
 * A refusal that stops the responder too: the requester is answered with
 * @req_fault (a NAK, on iWARP a TERMINATE), a consumed receive completes
 * with @resp_fault, and the QP moves to ERR at the message's end.
 */
static __attribute__((noinline)) int resp_fail(struct soft_qp *qp,
					       const struct soft_pkt *pkt,
					       enum soft_fault req_fault,
					       enum soft_fault resp_fault)
{
	struct soft_rx *rx = &qp->rx;

	rx->h = pkt->h;
	rx->fault = resp_fault;
	rx->resp_err = true;
	rx->nak = true;
	return SOFT_RCV_END |
	       resp_answer(qp, pkt,
			   qp->dev->iwarp ? SOFT_PKT_TERM : SOFT_PKT_NAK,
			   req_fault);
}

/*
 * The receive's regions for a SEND (or one segment of it: a wire's DDP
 * segments arrive one by one, @pkt->h.va their offset in the message, each
 * checked against the receive as it comes): 0 and *@dst, *@n, or the
 * refusal.
 */
static inline int resp_send_sink(struct soft_qp *qp, struct soft_pkt *pkt,
				 struct soft_region **dst, u32 *n)
{
	const struct soft_recv_wqe *w = &qp->resp_wqe;
	u64 mo = pkt->h.va, end = mo + pkt->h.length;

	/* mo and length are each at most 2^32 (wire) or 2^31: no wrap */
	if (end > w->length)
		return resp_fail(qp, pkt, SOFT_F_REM_INV_REQ, SOFT_F_LOC_LEN);
	if (soft_sgl_check(qp->dev, qp->ibqp.pd, w->sge, w->num_sge,
			   IB_ACCESS_LOCAL_WRITE, qp->resp_rg, n))
		return resp_fail(qp, pkt, SOFT_F_REM_OP, SOFT_F_LOC_PROT);
	*dst = qp->resp_rg;
	if (__builtin_expect(mo != 0, 0))
		*dst = soft_rg_skip(*dst, n, mo);
	return 0;
}

/* The SEND segment @pkt placed: the message goes on, or it ends. */
static inline int resp_send_done(struct soft_qp *qp, const struct soft_pkt *pkt)
{
	if (__builtin_expect(pkt->h.more, 0))
		return 0; /* the message goes on */
	qp->rx.h.length = pkt->h.va + pkt->h.length;
	if (pkt->h.op->flags & SOFT_OPF_REM_INV) {
		qp->rx.inv_key = pkt->h.ex;
		qp->rx.inv_key_set = true;
	}
	return SOFT_RCV_END;
}

/* Place a SEND (or one segment of it) into the receive taken for it. */
static int resp_send(struct soft_qp *qp, struct soft_pkt *pkt)
{
	struct soft_region *dst;
	u32 n;
	int ret = resp_send_sink(qp, pkt, &dst, &n);

	if (ret)
		return ret;
	/* Nothing placed: the SEND and its receive both fail. */
	if (soft_copy(pkt->pay.rg, pkt->pay.n, dst, n, pkt->h.length))
		return resp_fail(qp, pkt, SOFT_F_LOC_RES, SOFT_F_LOC_RES);
	return resp_send_done(qp, pkt);
}

/* Check the rkey range into @rg.  False: refused, *@ret the answer. */
soft_check_inline bool resp_rkey(struct soft_qp *qp, struct soft_pkt *pkt,
				 struct soft_region *rg, int *ret)
{
	const struct soft_hdr *h = &pkt->h;

	if (!h->length) {
		*rg = (struct soft_region){ .dev = qp->dev };
		return true;
	}
	if (!soft_mr_check(qp->dev, qp->ibqp.pd, h->rkey, h->va, h->length,
			   h->op->rem_access, SOFT_LOOKUP_REMOTE, rg))
		return true;
	*ret = resp_fail(qp, pkt, SOFT_F_REM_ACCESS,
			 qp->rx.recv_taken ? SOFT_F_LOC_ACCESS : SOFT_OK);
	return false;
}

/* A consumed receive: the message is the responder's to finish. */
static void resp_took(struct soft_qp *qp, const struct soft_pkt *pkt)
{
	struct soft_rx *rx = &qp->rx;

	rx->h = pkt->h;
	rx->recv_taken = true;
}

/*
 * The responder's first rules, for every request, in order: the QP
 * answers, it grants the operation, and a receive is there when the
 * opcode consumes one.  False: refused, RNR or dropped, with *@ret the
 * receive's flags; true with *@ret SOFT_RCV_END when a receive was taken.
 */
soft_check_inline bool resp_accept(struct soft_qp *qp, struct soft_pkt *pkt,
				   bool recv, int *ret)
{
	*ret = 0;
	if (!soft_resp_ready(qp)) {
		*ret = SOFT_RCV_DROP;
		return false;
	}
	if (!soft_resp_grants(qp, pkt->h.op)) {
		*ret = resp_fail(qp, pkt, SOFT_F_REM_INV_REQ, SOFT_OK);
		return false;
	}
	if (!recv)
		return true;
	switch (resp_take_recv(qp)) {
	case RESP_RECV_TAKEN:
		resp_took(qp, pkt);
		*ret = SOFT_RCV_END;
		return true;
	case RESP_RECV_NONE:
		/* No RNR on iWARP: siw_proc_send() finds no receive, a DDP
		 * error; the connection terminates (the requester's side:
		 * iwarp_terminated()). */
		if (qp->dev->iwarp)
			*ret = resp_fail(qp, pkt, SOFT_F_REM_ACCESS, SOFT_OK);
		else
			*ret = resp_answer(qp, pkt, SOFT_PKT_RNR, SOFT_OK);
		return false;
	case RESP_RECV_ERR:
		break;
	}
	*ret = SOFT_RCV_DROP;
	return false;
}

/* The WRITE's rules and placement, inlined into its two entries below. */
static inline __attribute__((always_inline)) int
resp_write(struct soft_qp *qp, struct soft_pkt *pkt)
{
	const struct soft_region *src = pkt->pay.rg;
	u64 len = pkt->h.length;
	struct soft_region rg;
	int ret;

	if (!resp_accept(qp, pkt, pkt->h.op->flags & SOFT_OPF_RECV, &ret) ||
	    !resp_rkey(qp, pkt, &rg, &ret))
		return ret;
	/* Both sides hold exactly @len bytes (the sender's one region is
	 * the payload, the rkey check gave @len): contiguous on both
	 * sides, one memmove. */
	if (pkt->pay.n == 1 && src->cpu && rg.cpu) {
		memmove(rg.cpu, src->cpu, len);
	} else if (soft_copy(src, pkt->pay.n, &rg, 1, len)) {
		/* Nothing placed (a receive it consumed still completes). */
		if (ret & SOFT_RCV_END)
			qp->rx.nak = true;
		return ret | resp_answer(qp, pkt, SOFT_PKT_NAK, SOFT_F_LOC_RES);
	}
	soft_count(&qp->st_resp_bytes, len);
	return ret;
}

/* The READ's rules; its answer is a READ response over the checked
 * region, placed by the requester's completer. */
static inline __attribute__((always_inline)) int resp_read(struct soft_qp *qp,
							   struct soft_pkt *pkt)
{
	struct soft_pkt ans;
	struct soft_region rg;
	int ret;

	if (!resp_accept(qp, pkt, false, &ret) ||
	    !resp_rkey(qp, pkt, &rg, &ret))
		return ret;
	ans.h = (struct soft_hdr){ .kind = SOFT_PKT_READ_RESP,
				   .src_qpn = qp->ibqp.qp_num,
				   .seq = pkt->h.seq,
				   .length = pkt->h.length };
	ans.pay.rg = &rg;
	ans.pay.n = 1;
	ret = rdmarw__soft_xmit(qp, &ans);
	return ret > 0 ? ret & SOFT_RCV_ANSWERED : 0;
}

/* The SEND's first rules: its receive (taken by the message's first
 * segment).  True to go on; false: *@ret the refusal or the drop. */
static inline __attribute__((always_inline)) bool
resp_send_accept(struct soft_qp *qp, struct soft_pkt *pkt, int *ret)
{
	/* A wire's later segment: the message's receive is taken already.
	 * Its MO may be 0 when the segments before it were empty (the
	 * codec keeps MSN and MO in order): a message in progress is one. */
	if (__builtin_expect(pkt->h.va != 0 || qp->rx.recv_taken, 0)) {
		*ret = SOFT_RCV_DROP;
		return soft_resp_ready(qp) && qp->rx.recv_taken;
	}
	return resp_accept(qp, pkt, true, ret);
}

static inline __attribute__((always_inline)) int
resp_send_rcv(struct soft_qp *qp, struct soft_pkt *pkt)
{
	int ret;

	if (!resp_send_accept(qp, pkt, &ret))
		return ret;
	return resp_send(qp, pkt);
}

int rdmarw__soft_resp_write(struct soft_qp *qp, struct soft_pkt *pkt)
{
	return resp_write(qp, pkt);
}

int rdmarw__soft_resp_read(struct soft_qp *qp, struct soft_pkt *pkt)
{
	return resp_read(qp, pkt);
}

int rdmarw__soft_resp_send(struct soft_qp *qp, struct soft_pkt *pkt)
{
	return resp_send_rcv(qp, pkt);
}

/* A wire's WRITE segment placed by its transport: the rules only. */
int rdmarw__soft_resp_write_sink(struct soft_qp *qp, struct soft_pkt *pkt,
				 struct soft_region *rg)
{
	int ret;

	if (!resp_accept(qp, pkt, false, &ret) || !resp_rkey(qp, pkt, rg, &ret))
		return ret ? ret : SOFT_RCV_DROP;
	return 0;
}

/* A wire's SEND segment placed by its transport: the rules only. */
int rdmarw__soft_resp_send_sink(struct soft_qp *qp, struct soft_pkt *pkt,
				struct soft_cursor *sink)
{
	struct soft_region *dst;
	u32 n = 0;
	int ret;

	if (!resp_send_accept(qp, pkt, &ret))
		return ret ? ret : SOFT_RCV_DROP;
	ret = resp_send_sink(qp, pkt, &dst, &n);
	if (!ret)
		*sink = (struct soft_cursor){ .rg = dst, .n = n };
	return ret;
}

int rdmarw__soft_resp_send_placed(struct soft_qp *qp,
				  const struct soft_pkt *pkt)
{
	return resp_send_done(qp, pkt);
}

__attribute__((cold)) int rdmarw__soft_resp_rcv(struct soft_qp *qp,
						struct soft_pkt *pkt)
{
	if (pkt->h.kind == SOFT_PKT_WRITE)
		return resp_write(qp, pkt);
	if (pkt->h.kind == SOFT_PKT_READ)
		return resp_read(qp, pkt);
	return resp_send_rcv(qp, pkt);
}

bool rdmarw__soft_resp_end(struct soft_qp *qp)
{
	struct soft_rx *rx = &qp->rx;
	enum soft_fault rf = rx->fault;
	u64 len = rx->h.length;
	/* The message placed whole: tested once, cleared below on a refused
	 * invalidation. */
	bool placed = !rx->nak && !rf;
	bool kick = false;
	int ret;

	if (placed && rx->inv_key_set) {
		ret = rdmarw__soft_mr_invalidate_sync(qp->dev, qp->ibqp.pd,
						      rx->inv_key, qp->resp_rd);
		if (ret) {
			rf = SOFT_F_REM_INV_REQ;
			placed = false;
			rx->resp_err = true;
			rx->inv_key_set = false;
		}
	}
	if (placed && rx->h.kind == SOFT_PKT_SEND)
		soft_count(&qp->st_resp_bytes, len);
	if (rx->recv_taken) {
		rdmarw__soft_comp_recv(qp, &qp->resp_wqe, rf, rx, rf ? 0 : len);
		if (qp->ibqp.srq)
			rdmarw__soft_srq_recv_done(qp);
	}
	/* The responder's own Send Queue must now flush: the sender runs it
	 * once its executor is done (rdmarw__soft_xmit_kick()). */
	if (rx->resp_err && rdmarw__soft_qp_to_err(qp))
		kick = true;
	memset(rx, 0, sizeof(*rx));
	return kick;
}

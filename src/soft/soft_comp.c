// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer (rxe_comp.c's role): places READ response data into the
 * local sinks, performs READ_WITH_INV's invalidation, and writes send and
 * receive completions.  rdmarw__soft_status() (soft_opcode.c, beside the
 * opcode table) is the one place where a fault becomes a completion
 * status.
 */
#include "soft/soft_access.h"
#include "soft/soft_cq.h"
#include "soft/soft_resp.h"

/* READ response data (@h->length bytes at offset @h->va of the READ) into
 * the sinks of @wqe (mem_lock held, read). */
static enum soft_fault comp_read(struct soft_qp *qp, struct soft_send_wqe *wqe,
				 const struct soft_hdr *h,
				 const struct soft_cursor *src)
{
	/* soft_read_sink_access(); refused like siw_proc_rresp()'s failed
	 * sink check: LOC_PROT_ERR. */
	int access = soft_read_sink_access(qp);
	struct soft_region *dst = qp->comp_rg;
	u32 n;

	if (soft_sgl_check(qp->dev, qp->ibqp.pd, wqe->sge, wqe->num_sge, access,
			   qp->comp_rg, &n))
		return SOFT_F_LOC_PROT;
	if (h->va)
		dst = soft_rg_skip(dst, &n, h->va);
	if (soft_copy(src->rg, src->n, dst, n, h->length))
		return SOFT_F_LOC_RES;
	soft_count(&qp->st_comp_bytes, h->length);
	return SOFT_OK;
}

/*
 * The READ a response answers: the posted WQE of that sequence number (the
 * loopback answers within the transmit: the WQE being executed; a wire's
 * ORQ names a READ in flight), a READ whose bytes the response (or, on a
 * wire, its segment: @h->va its offset, @h->more when others follow) lies
 * in, the last one ending at the READ's length.  NULL for anything else,
 * which is ignored.
 */
static struct soft_send_wqe *comp_read_wqe(struct soft_qp *qp,
					   const struct soft_hdr *h)
{
	struct soft_send_wqe *wqe = &qp->sq[h->seq & qp->sq_mask];
	u64 len;

	if (h->seq >= soft_load(&qp->sq_prod) || wqe->h.seq != h->seq ||
	    wqe->h.op->cls != SOFT_OPC_READ)
		return NULL;
	len = wqe->h.length;
	if (h->va > len || h->length > len - h->va ||
	    (!h->more && h->va + h->length != len))
		return NULL;
	return wqe;
}

int rdmarw__soft_comp_rcv(struct soft_qp *qp, const struct soft_pkt *pkt)
{
	const struct soft_hdr *h = &pkt->h;
	struct soft_send_wqe *wqe;

	switch (h->kind) {
	case SOFT_PKT_READ_RESP:
		wqe = comp_read_wqe(qp, h);
		if (!wqe)
			return 0;
		qp->comp_fault = comp_read(qp, wqe, h, &pkt->pay);
		/* a wire's segment that is not the last: not answered yet */
		if (h->more && !qp->comp_fault)
			return 0;
		break;
	case SOFT_PKT_RNR:
		qp->comp_fault = SOFT_F_RNR;
		break;
	case SOFT_PKT_NAK:
	case SOFT_PKT_TERM:
		qp->comp_fault = (enum soft_fault)h->syndrome;
		break;
	case SOFT_PKT_RESUME:
		/* Not an answer: what the Send Queue waited for is there. */
		rdmarw__soft_qp_schedule(qp);
		return 0;
	default:
		return 0;
	}
	return SOFT_RCV_ANSWERED;
}

int rdmarw__soft_comp_read_sink(struct soft_qp *qp, const struct soft_hdr *h,
				struct soft_cursor *sink)
{
	struct soft_send_wqe *wqe = comp_read_wqe(qp, h);
	u32 n;

	if (!wqe)
		return -ENOENT;
	if (soft_sgl_check(qp->dev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
			   soft_read_sink_access(qp), qp->comp_rg, &n))
		return -EACCES;
	sink->rg = soft_rg_skip(qp->comp_rg, &n, h->va);
	sink->n = n;
	return 0;
}

int rdmarw__soft_comp_read_placed(struct soft_qp *qp, const struct soft_hdr *h)
{
	if (!comp_read_wqe(qp, h))
		return 0;
	soft_count(&qp->st_comp_bytes, h->length);
	qp->comp_fault = SOFT_OK;
	return h->more ? 0 : SOFT_RCV_ANSWERED;
}

enum soft_fault rdmarw__soft_comp_read_inv(struct soft_qp *qp,
					   struct soft_send_wqe *wqe)
{
	bool iwarp = qp->dev->iwarp;
	int ret;

	/*
	 * siw invalidates the STag of the READ's sink SGE, by index
	 * (siw_rdmap_complete() -> siw_invalidate_stag()), and reports a
	 * failure as GENERAL_ERR.  Elsewhere the WR's invalidate_rkey is
	 * invalidated as LOCAL_INV would (whole key).
	 */
	ret = rdmarw__soft_mr_invalidate_sync(
		qp->dev, qp->ibqp.pd, iwarp ? wqe->sge[0].lkey : wqe->h.ex,
		qp->mem_rd);
	if (!ret)
		return SOFT_OK;
	return iwarp ? SOFT_F_GENERAL : SOFT_F_LOC_QP_OP;
}

/* A full CQ: tell the QP's owner and stop the QP (rxe: class G). */
void rdmarw__soft_comp_overflow(struct soft_qp *qp, struct soft_cq *cq)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	rdmarw__soft_qp_to_err(qp);
}

/* Write a send completion into the ring slot @e (every field). */
static inline void cqe_set_send(struct soft_cqe *e, struct soft_qp *qp,
				const struct soft_send_wqe *wqe,
				enum ib_wc_status status, u32 vendor_err,
				u32 byte_len)
{
	e->wc = (struct ib_wc){
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = wqe->h.op->wc_opcode,
		.vendor_err = vendor_err,
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.port_num = qp->ibqp.port,
	};
	e->sq_release = &qp->sq_done;
	e->sq_seq = wqe->h.seq;
	e->solicited = false;
}

/*
 * rdmarw__soft_comp_send() for a WQE that succeeded: the same entry (an
 * RDMA or SEND, so byte_len is its length).  Inline into both callers in
 * soft_req.c (req_execute() and the ORQ's req_complete_ready(), joined by
 * LTO; a build without LTO calls it): out of line, with the ORQ's second
 * caller, it cost the 64 B WRITE 21 instructions per I/O (805.6 -> 826.6).
 */
inline __attribute__((always_inline)) void
rdmarw__soft_comp_send_ok(struct soft_qp *qp, struct soft_send_wqe *wqe)
{
	struct soft_cq *cq = soft_send_cq(qp);
	struct soft_cqe *e;

	if (!wqe->signaled)
		return;
	e = rdmarw__soft_cq_claim(cq);
	if (!e) {
		rdmarw__soft_comp_overflow(qp, cq);
		return;
	}
	cqe_set_send(e, qp, wqe, IB_WC_SUCCESS, 0, (u32)wqe->h.length);
	rdmarw__soft_cq_commit(cq, e);
}
void rdmarw__soft_comp_send(struct soft_qp *qp, struct soft_send_wqe *wqe,
			    enum soft_fault f)
{
	struct soft_cq *cq = soft_send_cq(qp);
	enum ib_wc_status status;
	struct soft_cqe *e;
	u32 vendor_err;

	/* Errors and flushes complete even when not signaled. */
	if (!f && !wqe->signaled)
		return;
	status = rdmarw__soft_status(f, &vendor_err);
	e = rdmarw__soft_cq_claim(cq);
	if (!e) {
		rdmarw__soft_comp_overflow(qp, cq);
		return;
	}
	cqe_set_send(e, qp, wqe, status, vendor_err,
		     (!f && wqe->h.op->cls != SOFT_OPC_LOCAL) ?
			     (u32)wqe->h.length :
			     0);
	rdmarw__soft_cq_commit(cq, e);
}

void rdmarw__soft_comp_recv(struct soft_qp *qp, const struct soft_recv_wqe *w,
			    enum soft_fault f, const struct soft_rx *rx,
			    u64 byte_len)
{
	struct soft_cqe cqe = { 0 };
	struct ib_wc *wc = &cqe.wc;

	wc->wr_id = w->wr_id;
	wc->status = rdmarw__soft_status(f, &wc->vendor_err);
	wc->opcode = IB_WC_RECV;
	wc->byte_len = (u32)byte_len;
	wc->qp = &qp->ibqp;
	wc->port_num = qp->ibqp.port;
	if (rx) {
		const struct soft_hdr *h = &rx->h;

		wc->opcode = h->op->recv_wc_opcode;
		wc->src_qp = h->src_qpn;
		cqe.solicited = h->solicited;
		if (!f && (h->op->flags & SOFT_OPF_IMM)) {
			wc->wc_flags |= IB_WC_WITH_IMM;
			wc->ex.imm_data = h->ex;
		} else if (!f && rx->inv_key_set) {
			wc->wc_flags |= IB_WC_WITH_INVALIDATE;
			wc->ex.invalidate_rkey = rx->inv_key;
		}
	}
	if (rdmarw__soft_cq_post(soft_recv_cq(qp), &cqe))
		rdmarw__soft_comp_overflow(qp, soft_recv_cq(qp));
}

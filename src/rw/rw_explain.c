// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw_rw_ctx_explain(): what an init decided for a context (rdmarw
 * extension).  The path and its reason are what the init recorded where it
 * chose them (rw.c, rw_bvec.c, rw_sig.c); this file only reads them back
 * with the counts of the WRs and registrations the init built.  No rule of
 * the R/W API is evaluated here.
 */
#include "rw/rw_internal.h"

#include <errno.h>
#include <string.h>

/* The context's RDMA READ/WRITE WRs: one array, one WR, or one per MR. */
static const struct ib_rdma_wr *data_wr(const struct rdma_rw_ctx *ctx, u32 i)
{
	switch (ctx->type) {
	case RDMA_RW_SINGLE_WR:
		return &ctx->single.wr;
	case RDMA_RW_MULTI_WR:
		return &ctx->map.wrs[i];
	case RDMA_RW_MR:
	case RDMA_RW_SIG_MR:
		return &ctx->reg[i].wr;
	case RDMA_RW_IOVA:
		return &ctx->iova.wr;
	default:
		return NULL;
	}
}

/* WRs, SGEs, bytes and WQEs of a context that was built. */
static int explain_built(const struct rdma_rw_ctx *ctx,
			 struct rdmarw_rw_decision *out)
{
	bool mr = ctx->type == RDMA_RW_MR || ctx->type == RDMA_RW_SIG_MR;
	const struct ib_rdma_wr *wr;
	u32 i;
	int j;

	if (!ctx->nr_ops || !data_wr(ctx, 0))
		return -EINVAL;
	out->nr_ops = ctx->nr_ops;
	out->nr_wqes = ctx->nr_ops;
	for (i = 0; i < ctx->nr_ops; i++) {
		wr = data_wr(ctx, i);
		out->nr_sges += (u32)wr->wr.num_sge;
		for (j = 0; j < wr->wr.num_sge; j++)
			out->length += wr->wr.sg_list[j].length;
		if (!mr)
			continue;
		/* REG_MR, and the LOCAL_INV of a registration still held */
		out->nr_mrs++;
		out->nr_wqes += 1 + (ctx->reg[i].mr->need_inval ? 1 : 0);
	}
	return 0;
}

int rdmarw_rw_ctx_explain(const struct rdma_rw_ctx *ctx,
			  struct rdmarw_rw_decision *out)
{
	const struct ib_rdma_wr *wr;
	struct ib_qp *qp;
	bool mr;
	int ret;

	if (!ctx || !out || ctx->rdmarw_self != ctx ||
	    ctx->rdmarw_origin == RDMARW_RW_ORIGIN_NONE ||
	    ctx->rdmarw_origin > RDMARW_RW_ORIGIN_FAILED)
		return -EINVAL;
	/* a failed init keeps its QP in rdmarw_mem (rw_internal.h) */
	qp = ctx->rdmarw_origin == RDMARW_RW_ORIGIN_FAILED ?
		     (struct ib_qp *)(uintptr_t)ctx->rdmarw_mem :
		     ctx->rdmarw_qp;
	if (!qp || !qp->pd || !qp->pd->device)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->origin = ctx->rdmarw_origin;
	out->type = ctx->type;
	out->why = ctx->rdmarw_why;
	out->bad_entry = UINT32_MAX;
	mr = ctx->type == RDMA_RW_MR || ctx->type == RDMA_RW_SIG_MR;
	if (mr)
		out->pages_per_mr = rdmarw__fr_page_list_len(qp->pd->device,
							     qp->integrity_en);
	if (ctx->rdmarw_origin == RDMARW_RW_ORIGIN_FAILED) {
		out->error = -(int)ctx->rdmarw_error;
		if (mr && out->error == -EINVAL)
			out->bad_entry = ctx->nr_ops;
		return 0;
	}
	ret = explain_built(ctx, out);
	if (ret)
		return ret;
	wr = data_wr(ctx, 0);
	out->max_sge = wr->wr.opcode == IB_WR_RDMA_WRITE ? qp->max_write_sge :
							   qp->max_read_sge;
	return 0;
}

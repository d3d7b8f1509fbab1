// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw_rw_ctx_explain(): what an init decided for a context (rdmarw
 * extension).  The path and its reason are what the init recorded where it
 * chose them (rw.c, rw_bvec.c, rw_sig.c); this file only reads them back
 * with the counts of the WRs and registrations the init built, and
 * rdmarw_rw_ctx_reason() words them with the limits that applied.  No rule
 * of the R/W API is evaluated here.
 */
#include "rw/rw_internal.h"

#include <rdmarw/kernel.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

/* ---- the decision in words ---------------------------------------------- */

struct reason_buf {
	char *p;
	size_t size, len;
};

/* Append to the text; past @size only the length grows. */
static void __attribute__((format(printf, 2, 3)))
say(struct reason_buf *b, const char *fmt, ...)
{
	size_t room = b->len < b->size ? b->size - b->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->p + (b->size - room), room, fmt, ap);
	va_end(ap);
	b->len += n > 0 ? (size_t)n : 0;
}

static const char *type_name(u8 type)
{
	static const char *const names[] = {
		[RDMA_RW_SINGLE_WR] = "SINGLE",
		[RDMA_RW_MULTI_WR] = "MULTI",
		[RDMA_RW_MR] = "MR",
		[RDMA_RW_SIG_MR] = "SIG_MR",
		[RDMA_RW_IOVA] = "IOVA",
	};

	return type < ARRAY_SIZE(names) ? names[type] : "no";
}

/* The rule that asked for registration. */
static void say_mr_rule(struct reason_buf *b, u8 why, struct ib_device *dev)
{
	if (why == RDMARW_RW_WHY_IWARP_READ)
		say(b, "iWARP READ needs MR");
	else if (why == RDMARW_RW_WHY_FORCE_MR)
		say(b, "force_mr");
	else
		say(b, "READ of more than max_sgl_rd %u entries",
		    dev->attrs.max_sgl_rd);
}

/* Why an init failed. */
static void say_failure(struct reason_buf *b,
			const struct rdmarw_rw_decision *d,
			struct ib_device *dev)
{
	switch (d->why) {
	case RDMARW_RW_WHY_OFFSET:
		say(b, "sg_offset at or past the end of the list");
		return;
	case RDMARW_RW_WHY_BVEC_ITER:
		say(b,
		    "the iterator leaves the bio_vec array or meets an empty bio_vec");
		return;
	case RDMARW_RW_WHY_DMA_MAP:
		say(b, "the list cannot be DMA-mapped");
		return;
	}
	if (d->error == -EAGAIN && d->type == RDMA_RW_SIG_MR) {
		say(b, "the QP's integrity MR pool ran out");
	} else if ((d->error == -EAGAIN || d->error == -EOPNOTSUPP) &&
		   d->type == RDMA_RW_MR) {
		say(b, "registration required (");
		say_mr_rule(b, d->why, dev);
		say(b, ") and %s; no fallback on iWARP or under force_mr",
		    d->error == -EAGAIN ? "the QP's MR pool ran out" :
					  "the QP has no MR pool");
	} else if (d->bad_entry != UINT32_MAX) {
		say(b,
		    "entry %u after the offset does not fit in an MR of up to %u pages with the entries before it (the MR page-list rules)",
		    d->bad_entry, d->pages_per_mr);
	} else if (d->type == RDMA_RW_IOVA) {
		say(b,
		    "the IOMMU cannot link the bio_vecs into one IOVA range; a failed link is final");
	} else if (d->error == -ENOMEM) {
		say(b, "out of memory (context storage or mapping)");
	} else {
		say(b, "the %s path failed with error %d", type_name(d->type),
		    d->error);
	}
}

/* Why an init took its path. */
static void say_path(struct reason_buf *b, const struct rdmarw_rw_decision *d,
		     struct ib_device *dev, bool read)
{
	const char *op = read ? "READ" : "WRITE";

	switch (d->why) {
	case RDMARW_RW_WHY_ONE_ENTRY:
		say(b, "one entry");
		break;
	case RDMARW_RW_WHY_ONE_BVEC:
		say(b, "the transfer lies within one bio_vec");
		break;
	case RDMARW_RW_WHY_ENTRIES:
		say(b, "%u entries", d->nr_sges);
		if (read && dev->attrs.max_sgl_rd)
			say(b, " <= max_sgl_rd %u", dev->attrs.max_sgl_rd);
		say(b, ": up to %u SGEs per %s", d->max_sge, op);
		break;
	case RDMARW_RW_WHY_NO_IOVA:
		say(b, "%s: one SGE per bio_vec, up to %u per %s",
		    dev->iommu ? "no IOVA range" : "virtual DMA, no IOVA API",
		    d->max_sge, op);
		break;
	case RDMARW_RW_WHY_IOMMU:
		say(b,
		    "IOMMU: the bio_vecs linked into one IOVA range of %llu bytes",
		    (unsigned long long)d->length);
		break;
	case RDMARW_RW_WHY_IWARP_READ:
	case RDMARW_RW_WHY_FORCE_MR:
	case RDMARW_RW_WHY_MAX_SGL_RD:
		say_mr_rule(b, d->why, dev);
		say(b, ": %u MR%s of up to %u pages", d->nr_mrs,
		    d->nr_mrs == 1 ? "" : "s", d->pages_per_mr);
		break;
	case RDMARW_RW_WHY_POOL_EMPTY:
	case RDMARW_RW_WHY_NO_POOL:
		say(b, "%s: fell back to %s from MR (",
		    d->why == RDMARW_RW_WHY_POOL_EMPTY ?
			    "the QP's MR pool ran out" :
			    "the QP has no MR pool",
		    type_name(d->type));
		say_mr_rule(b, RDMARW_RW_WHY_MAX_SGL_RD, dev);
		say(b, "); up to %u SGEs per %s", d->max_sge, op);
		break;
	case RDMARW_RW_WHY_PI:
		say(b,
		    "protection information: %u integrity MR of up to %u pages",
		    d->nr_mrs, d->pages_per_mr);
		break;
	default:
		say(b, "reason %u", d->why);
	}
}

int rdmarw_rw_ctx_reason(const struct rdma_rw_ctx *ctx, char *buf, size_t size)
{
	struct reason_buf b = { .p = buf, .size = size };
	struct rdmarw_rw_decision d;
	const struct ib_rdma_wr *wr;
	struct ib_device *dev;
	int ret;

	if (!buf)
		return -EINVAL;
	ret = rdmarw_rw_ctx_explain(ctx, &d);
	if (ret)
		return ret;
	/* explain() accepted the context: its QP and device are there */
	dev = (d.origin == RDMARW_RW_ORIGIN_FAILED ?
		       (struct ib_qp *)(uintptr_t)ctx->rdmarw_mem :
		       ctx->rdmarw_qp)
		      ->pd->device;
	if (size)
		buf[0] = '\0';
	if (d.origin == RDMARW_RW_ORIGIN_FAILED) {
		say_failure(&b, &d, dev);
	} else {
		wr = data_wr(ctx, 0);
		say_path(&b, &d, dev, wr->wr.opcode != IB_WR_RDMA_WRITE);
	}
	if (b.len >= size)
		return -ENOSPC;
	return (int)b.len;
}

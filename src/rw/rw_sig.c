// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * R/W contexts with signature offload (the kernel's
 * rdma_rw_ctx_signature_init() and rdma_rw_ctx_destroy_signature()): one
 * integrity MR from the QP's signature pool, [LOCAL_INV] ->
 * REG_MR_INTEGRITY -> one RDMA READ or WRITE.  rdma_rw_ctx_wrs() and
 * rdma_rw_ctx_post() (rw.c) link and post RDMA_RW_SIG_MR contexts.
 *
 * As everywhere in rw, the registration lives in the QP's context storage
 * and bad input is refused with an errno where the kernel would crash.
 */
#include "rw/rw_internal.h"
#include "core/provider.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static bool sig_args_ok(struct ib_qp *qp, u32 port_num, struct scatterlist *sg,
			u32 sg_cnt, struct scatterlist *prot_sg,
			u32 prot_sg_cnt, struct ib_sig_attrs *sig_attrs,
			enum dma_data_direction dir)
{
	if (!qp || !sg || !sig_attrs || !sg_cnt || sg_cnt > INT_MAX ||
	    prot_sg_cnt > INT_MAX || (prot_sg_cnt && !prot_sg))
		return false;
	/*
	 * PI in either domain lives in the protection list: in memory it is
	 * read or written there, and a wire with PI needs the MR to cover
	 * its 8 bytes per interval, which only the list's length gives.
	 * Without one the RDMA WR would fail with LOC_PROT_ERR and take the
	 * QP down: refuse here instead.
	 */
	if (!prot_sg_cnt && (sig_attrs->mem.sig_type != IB_SIG_TYPE_NONE ||
			     sig_attrs->wire.sig_type != IB_SIG_TYPE_NONE))
		return false;
	return rdmarw__rw_args_ok(qp, port_num, dir);
}

/* DMA-map both lists; on failure nothing stays mapped. */
static int sig_map(struct ib_device *dev, struct scatterlist *sg, u32 sg_cnt,
		   struct scatterlist *prot_sg, u32 prot_sg_cnt,
		   enum dma_data_direction dir, int *nents, int *prot_nents)
{
	*prot_nents = 0;
	*nents = ib_dma_map_sg(dev, sg, (int)sg_cnt, dir);
	if (*nents <= 0)
		return -EINVAL;
	if (!prot_sg_cnt)
		return 0;
	*prot_nents = ib_dma_map_sg(dev, prot_sg, (int)prot_sg_cnt, dir);
	if (*prot_nents > 0)
		return 0;
	ib_dma_unmap_sg(dev, sg, (int)sg_cnt, dir);
	return -EINVAL;
}

static void sig_unmap(struct ib_device *dev, struct scatterlist *sg, u32 sg_cnt,
		      struct scatterlist *prot_sg, u32 prot_sg_cnt,
		      enum dma_data_direction dir)
{
	if (prot_sg && prot_sg_cnt)
		ib_dma_unmap_sg(dev, prot_sg, (int)prot_sg_cnt, dir);
	ib_dma_unmap_sg(dev, sg, (int)sg_cnt, dir);
}

/*
 * Fill the registration of @mr, already mapped: LOCAL_INV if the MR still
 * holds a registration, REG_MR_INTEGRITY, and the RDMA WR.  Returns the
 * WQEs of the first post.
 */
static int sig_build(struct rdma_rw_reg_ctx *reg, struct ib_qp *qp,
		     u32 port_num, struct ib_sig_attrs *sig_attrs,
		     u64 remote_addr, u32 rkey, enum dma_data_direction dir)
{
	struct ib_mr *mr = reg->mr;
	u64 len = mr->length;
	int count = 2;

	if (mr->need_inval) {
		reg->inv_wr.opcode = IB_WR_LOCAL_INV;
		reg->inv_wr.ex.invalidate_rkey = mr->lkey;
		reg->inv_wr.next = &reg->reg_wr.wr;
		count++;
	} else {
		reg->inv_wr.next = NULL;
	}
	reg->reg_wr.wr.opcode = IB_WR_REG_MR_INTEGRITY;
	reg->reg_wr.wr.wr_cqe = NULL;
	reg->reg_wr.wr.num_sge = 0;
	reg->reg_wr.wr.send_flags = 0;
	reg->reg_wr.access = IB_ACCESS_LOCAL_WRITE;
	if (rdma_protocol_iwarp(qp->device, port_num))
		reg->reg_wr.access |= IB_ACCESS_REMOTE_WRITE;
	reg->reg_wr.mr = mr;
	reg->reg_wr.key = mr->lkey;
	/* The wire carries no PI: the RDMA moves the data bytes only. */
	if (sig_attrs->wire.sig_type == IB_SIG_TYPE_NONE)
		len -= (u64)(u32)mr->sig_attrs->meta_length;
	reg->sge.addr = mr->iova;
	reg->sge.length = (u32)len;
	reg->sge.lkey = mr->lkey;
	rdmarw__rw_set_rdma_wr(&reg->wr, &reg->sge, 1, remote_addr, rkey, dir);
	reg->reg_wr.wr.next = &reg->wr.wr;
	return count;
}

/* Take the MR, copy the attributes in and map both lists into it. */
static int sig_take_mr(struct rdma_rw_reg_ctx *reg, struct ib_qp *qp,
		       struct scatterlist *sg, int nents,
		       struct scatterlist *prot_sg, int prot_nents,
		       struct ib_sig_attrs *sig_attrs)
{
	struct ib_mr *mr = ib_mr_pool_get(qp, &qp->sig_mrs);
	int ret = -EINVAL;

	if (!mr)
		return -EAGAIN;
	if (mr->sig_attrs) {
		memcpy(mr->sig_attrs, sig_attrs, sizeof(*sig_attrs));
		ret = ib_map_mr_sg_pi(mr, sg, nents, NULL, prot_sg, prot_nents,
				      NULL, SZ_4K);
	}
	if (!ret && mr->length > UINT32_MAX)
		ret = -EINVAL;
	if (ret) {
		ib_mr_pool_put(qp, &qp->sig_mrs, mr);
		return ret;
	}
	reg->mr = mr;
	return 0;
}

int rdma_rw_ctx_signature_init(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			       u32 port_num, struct scatterlist *sg, u32 sg_cnt,
			       struct scatterlist *prot_sg, u32 prot_sg_cnt,
			       struct ib_sig_attrs *sig_attrs, u64 remote_addr,
			       u32 rkey, enum dma_data_direction dir)
{
	struct rdmarw_rw_block *blk;
	struct ib_device *dev;
	int nents, prot_nents, ret;
	u32 ppm;

	if (!ctx)
		return -EINVAL;
	ctx->rdmarw_origin = RDMARW_RW_ORIGIN_NONE;
	ctx->rdmarw_block = NULL;
	if (!sig_args_ok(qp, port_num, sg, sg_cnt, prot_sg, prot_sg_cnt,
			 sig_attrs, dir))
		return -EINVAL;
	dev = qp->pd->device;
	ctx->type = RDMA_RW_SIG_MR;
	ctx->rdmarw_why = RDMARW_RW_WHY_PI;
	ctx->nr_ops = UINT32_MAX;
	/* Everything must fit one integrity MR. */
	ppm = rdmarw__fr_page_list_len(dev, qp->integrity_en);
	if (sg_cnt > ppm || prot_sg_cnt > ppm) {
		ctx->nr_ops = ppm; /* the first entry the MR cannot take */
		return rdmarw__rw_ctx_fail(ctx, qp, -EINVAL);
	}
	ret = sig_map(dev, sg, sg_cnt, prot_sg, prot_sg_cnt, dir, &nents,
		      &prot_nents);
	if (ret)
		return rdmarw__rw_ctx_fail_early(ctx, qp, RDMARW_RW_WHY_DMA_MAP,
						 ret);
	ctx->reg = rdmarw__rw_block_get(qp, sizeof(*ctx->reg), &blk);
	ret = -ENOMEM;
	if (!ctx->reg)
		goto err_unmap;
	ret = sig_take_mr(ctx->reg, qp, sg, nents, prot_sg, prot_nents,
			  sig_attrs);
	if (ret)
		goto err_block;
	ret = sig_build(ctx->reg, qp, port_num, sig_attrs, remote_addr, rkey,
			dir);
	ctx->nr_ops = 1;
	ctx->rdmarw_block = blk;
	rdmarw__rw_ctx_bind(ctx, qp, RDMARW_RW_ORIGIN_SIG, sg, sg_cnt);
	return ret;

err_block:
	rdmarw__rw_block_put(blk);
err_unmap:
	sig_unmap(dev, sg, sg_cnt, prot_sg, prot_sg_cnt, dir);
	return rdmarw__rw_ctx_fail(ctx, qp, ret);
}

void rdma_rw_ctx_destroy_signature(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
				   u32 port_num, struct scatterlist *sg,
				   u32 sg_cnt, struct scatterlist *prot_sg,
				   u32 prot_sg_cnt, enum dma_data_direction dir)
{
	static bool warned_kind, warned_state, warned_mem;

	if (!rdmarw__rw_ctx_live(ctx, qp) || !qp->pd) {
		rdmarw__warn_once(
			&warned_state,
			"rdma_rw_ctx_destroy_signature: context not initialised on this QP (or a copy)");
		return;
	}
	if (ctx->rdmarw_origin != RDMARW_RW_ORIGIN_SIG ||
	    ctx->type != RDMA_RW_SIG_MR) {
		rdmarw__warn_once(
			&warned_kind,
			"rdma_rw_ctx_destroy_signature: context needs rdma_rw_ctx_destroy or _bvec");
		return;
	}
	if (sg != ctx->rdmarw_mem || sg_cnt != ctx->rdmarw_nents ||
	    prot_sg_cnt > INT_MAX) {
		rdmarw__warn_once(
			&warned_mem,
			"rdma_rw_ctx_destroy_signature: sg or sg_cnt is not what rdma_rw_ctx_signature_init was given");
		return;
	}
	ib_mr_pool_put(qp, &qp->sig_mrs, ctx->reg->mr);
	rdmarw__rw_block_put(ctx->rdmarw_block);
	ctx->rdmarw_block = NULL;
	ctx->rdmarw_origin = RDMARW_RW_ORIGIN_NONE;
	sig_unmap(qp->pd->device, sg, sg_cnt, prot_sg, prot_sg_cnt, dir);
}

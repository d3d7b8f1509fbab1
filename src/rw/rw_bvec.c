// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * R/W contexts over bio_vec arrays (the kernel's rdma_rw_ctx_init_bvec()
 * and its paths): memory registration through a scatterlist built from the
 * bio_vecs, one mapped bio_vec, one IOVA range linked through the IOMMU, or
 * one SGE per bio_vec.
 *
 * The iterator decides which bio_vecs take part ("segments"); rdmarw counts
 * them first and refuses an iterator that leaves the array, where the
 * kernel sizes its arrays by nr_bvec and trusts the two to agree.
 */
#include "rw/rw_internal.h"

#include <errno.h>
#include <string.h>

/* Segments @iter covers; -EINVAL if it leaves @bvecs or meets an empty one. */
static int count_segments(const struct bio_vec *bvecs, u32 nr_bvec,
			  struct bvec_iter iter, u32 *segs)
{
	u32 n = 0;

	while (iter.bi_size) {
		struct bio_vec bv;

		if (iter.bi_idx >= nr_bvec ||
		    iter.bi_bvec_done >= bvecs[iter.bi_idx].bv_len)
			return -EINVAL;
		bv = mp_bvec_iter_bvec(bvecs, iter);
		bvec_iter_advance(bvecs, &iter, bv.bv_len);
		n++;
	}
	*segs = n;
	return 0;
}

/* One bio_vec, mapped alone (RDMA_RW_SINGLE_WR). */
static int init_single_bvec(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			    const struct bio_vec *bvecs, struct bvec_iter iter,
			    u64 remote_addr, u32 rkey,
			    enum dma_data_direction dir)
{
	struct ib_device *dev = qp->pd->device;
	struct bio_vec bv = mp_bvec_iter_bvec(bvecs, iter);
	u64 addr;

	addr = ib_dma_map_bvec(dev, &bv, dir);
	if (ib_dma_mapping_error(dev, addr))
		return -ENOMEM;
	ctx->single.sge.addr = addr;
	ctx->single.sge.length = bv.bv_len;
	ctx->single.sge.lkey = qp->pd->local_dma_lkey;
	rdmarw__rw_set_rdma_wr(&ctx->single.wr, &ctx->single.sge, 1,
			       remote_addr, rkey, dir);
	ctx->nr_ops = 1;
	ctx->type = RDMA_RW_SINGLE_WR;
	return 1;
}

/*
 * Link every segment into one contiguous IOVA range: one SGE, one WR
 * (RDMA_RW_IOVA).  -EOPNOTSUPP when the device has no IOVA API (virtual
 * DMA) or no range can be had: the caller falls back.  A failed link is
 * final, as in the kernel.
 */
static int init_iova(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
		     const struct bio_vec *bvecs, struct bvec_iter iter,
		     u64 remote_addr, u32 rkey, enum dma_data_direction dir)
{
	struct ib_device *dev = qp->pd->device;
	struct bio_vec first = mp_bvec_iter_bvec(bvecs, iter);
	size_t mapped = 0;
	int ret;

	if (ib_uses_virt_dma(dev))
		return -EOPNOTSUPP;
	memset(&ctx->iova, 0, sizeof(ctx->iova));
	if (!ib_dma_iova_try_alloc(dev, &ctx->iova.state, bvec_phys(&first),
				   iter.bi_size))
		return -EOPNOTSUPP;
	while (iter.bi_size) {
		struct bio_vec bv = mp_bvec_iter_bvec(bvecs, iter);

		ret = ib_dma_iova_link(dev, &ctx->iova.state, bvec_phys(&bv),
				       mapped, bv.bv_len, dir);
		if (ret) {
			ib_dma_iova_destroy(dev, &ctx->iova.state, mapped, dir);
			return ret;
		}
		mapped += bv.bv_len;
		bvec_iter_advance(bvecs, &iter, bv.bv_len);
	}
	ctx->iova.mapped_len = mapped;
	ctx->iova.sge.addr = ctx->iova.state.addr;
	ctx->iova.sge.length = (u32)mapped;
	ctx->iova.sge.lkey = qp->pd->local_dma_lkey;
	rdmarw__rw_set_rdma_wr(&ctx->iova.wr, &ctx->iova.sge, 1, remote_addr,
			       rkey, dir);
	ctx->nr_ops = 1;
	ctx->type = RDMA_RW_IOVA;
	return 1;
}

static void unmap_sges(struct ib_device *dev, const struct ib_sge *sges, u32 n,
		       enum dma_data_direction dir)
{
	u32 i;

	for (i = 0; i < n; i++)
		ib_dma_unmap_bvec(dev, sges[i].addr, sges[i].length, dir);
}

/* One SGE per segment, RDMA WRs of up to the SGE limit (MULTI_WR). */
static int init_map_bvec(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			 const struct bio_vec *bvecs, struct bvec_iter iter,
			 u32 segs, u64 remote_addr, u32 rkey,
			 enum dma_data_direction dir)
{
	struct ib_device *dev = qp->pd->device;
	u32 max_sge = rdmarw__rw_max_sge(qp, dir), nr_ops, i, j, done = 0;
	struct rdmarw_rw_block *blk;
	size_t sges_size;
	u64 total = 0;
	void *mem;

	if (!max_sge)
		return -EINVAL;
	nr_ops = RDMARW_DIV_ROUND_UP(segs, max_sge);
	sges_size = (size_t)segs * sizeof(struct ib_sge);
	mem = rdmarw__rw_block_get_raw(
		qp, sges_size + (size_t)nr_ops * sizeof(struct ib_rdma_wr),
		&blk);
	if (!mem)
		return -ENOMEM;
	ctx->map.sges = mem;
	ctx->map.wrs = (struct ib_rdma_wr *)((char *)mem + sges_size);
	for (i = 0; i < nr_ops; i++) {
		struct ib_rdma_wr *wr = &ctx->map.wrs[i];
		u32 nr_sge = segs - done < max_sge ? segs - done : max_sge;

		rdmarw__rw_set_rdma_wr(wr, &ctx->map.sges[done], (int)nr_sge,
				       remote_addr + total, rkey, dir);
		for (j = 0; j < nr_sge; j++, done++) {
			struct bio_vec bv = mp_bvec_iter_bvec(bvecs, iter);
			struct ib_sge *sge = &ctx->map.sges[done];

			sge->addr = ib_dma_map_bvec(dev, &bv, dir);
			if (ib_dma_mapping_error(dev, sge->addr))
				goto err;
			sge->length = bv.bv_len;
			sge->lkey = qp->pd->local_dma_lkey;
			total += bv.bv_len;
			bvec_iter_advance(bvecs, &iter, bv.bv_len);
		}
		if (i + 1 < nr_ops)
			wr->wr.next = &ctx->map.wrs[i + 1].wr;
	}
	ctx->map.nr_sges = segs;
	ctx->rdmarw_block = blk;
	ctx->nr_ops = nr_ops;
	ctx->type = RDMA_RW_MULTI_WR;
	return (int)nr_ops;

err:
	unmap_sges(dev, ctx->map.sges, done, dir);
	rdmarw__rw_block_put(blk);
	return -ENOMEM;
}

/*
 * Registration through a scatterlist built from the segments, kept with
 * the registrations (reg[0].sgt) in one block of the QP's storage.
 */
static int init_mr_bvec(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
			const struct bio_vec *bvecs, struct bvec_iter iter,
			u32 segs, u64 remote_addr, u32 rkey,
			enum dma_data_direction dir)
{
	struct ib_device *dev = qp->pd->device;
	size_t regs_size = rdmarw__rw_reg_size(qp, segs);
	struct rdmarw_rw_block *blk;
	struct sg_table sgt = { 0 };
	struct scatterlist *sg;
	void *mem;
	u32 i;
	int ret;

	if (!regs_size)
		return -EINVAL;
	mem = rdmarw__rw_block_get(qp, regs_size + (size_t)segs * sizeof(*sg),
				   &blk);
	if (!mem)
		return -ENOMEM;
	sgt.sgl = (struct scatterlist *)((char *)mem + regs_size);
	sg_init_table(sgt.sgl, segs);
	for (i = 0, sg = sgt.sgl; i < segs; i++, sg++) {
		struct bio_vec bv = mp_bvec_iter_bvec(bvecs, iter);

		sg_set_page(sg, bv.bv_page, bv.bv_len, bv.bv_offset);
		bvec_iter_advance(bvecs, &iter, bv.bv_len);
	}
	sgt.orig_nents = segs;
	ret = ib_dma_map_sgtable_attrs(dev, &sgt, dir, 0);
	if (ret)
		goto err_put;
	ctx->reg = mem;
	ctx->reg[0].sgt = sgt;
	ret = rdmarw__rw_init_mr_wrs(ctx, qp, port_num, sgt.sgl, sgt.nents, 0,
				     remote_addr, rkey, dir);
	if (ret < 0)
		goto err_unmap;
	ctx->rdmarw_block = blk;
	return ret;

err_unmap:
	ib_dma_unmap_sgtable_attrs(dev, &sgt, dir, 0);
err_put:
	rdmarw__rw_block_put(blk);
	return ret;
}

static int init_bvec_paths(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			   u32 port_num, const struct bio_vec *bvecs,
			   struct bvec_iter iter, u32 segs, u64 remote_addr,
			   u32 rkey, enum dma_data_direction dir)
{
	struct ib_device *dev = qp->pd->device;
	u8 why = rdmarw__io_needs_mr(dev, port_num, dir, 0,
				     rdma_rw_get_force_mr());
	int ret;

	/*
	 * iWARP READs and force_mr register; max_sgl_rd plays no part.  The
	 * decision is recorded as it is made (rdmarw_rw_ctx_explain()).
	 */
	if (why) {
		ctx->type = RDMA_RW_MR;
		ctx->rdmarw_why = why;
		ctx->nr_ops = UINT32_MAX; /* no bad entry (yet) */
		return init_mr_bvec(ctx, qp, port_num, bvecs, iter, segs,
				    remote_addr, rkey, dir);
	}
	if (segs == 1) {
		ctx->rdmarw_why = RDMARW_RW_WHY_ONE_BVEC;
		return init_single_bvec(ctx, qp, bvecs, iter, remote_addr, rkey,
					dir);
	}
	ctx->type = RDMA_RW_IOVA;
	ctx->rdmarw_why = RDMARW_RW_WHY_IOMMU;
	ret = init_iova(ctx, qp, bvecs, iter, remote_addr, rkey, dir);
	if (ret != -EOPNOTSUPP)
		return ret;
	ctx->type = RDMA_RW_MULTI_WR;
	ctx->rdmarw_why = RDMARW_RW_WHY_NO_IOVA;
	return init_map_bvec(ctx, qp, bvecs, iter, segs, remote_addr, rkey,
			     dir);
}

int rdma_rw_ctx_init_bvec(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			  u32 port_num, const struct bio_vec *bvecs,
			  u32 nr_bvec, struct bvec_iter iter, u64 remote_addr,
			  u32 rkey, enum dma_data_direction dir)
{
	u32 segs;
	int ret;

	if (!ctx)
		return -EINVAL;
	ctx->rdmarw_origin = RDMARW_RW_ORIGIN_NONE;
	ctx->rdmarw_block = NULL;
	if (!qp || !bvecs || !nr_bvec || !iter.bi_size ||
	    !rdmarw__rw_args_ok(qp, port_num, dir))
		return -EINVAL;
	ret = count_segments(bvecs, nr_bvec, iter, &segs);
	if (ret)
		return rdmarw__rw_ctx_fail_early(ctx, qp,
						 RDMARW_RW_WHY_BVEC_ITER, ret);
	ret = init_bvec_paths(ctx, qp, port_num, bvecs, iter, segs, remote_addr,
			      rkey, dir);
	if (ret < 0)
		return rdmarw__rw_ctx_fail(ctx, qp, ret);
	rdmarw__rw_ctx_bind(ctx, qp, RDMARW_RW_ORIGIN_BVEC, bvecs, nr_bvec);
	return ret;
}

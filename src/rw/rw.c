// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * R/W contexts over scatterlists, the WR chain, posting and destroy (the
 * kernel's drivers/infiniband/core/rw.c, data half).
 *
 * Where rdmarw differs from the kernel, on purpose:
 * - arrays come from the QP's context storage, not from the heap;
 * - the chain of an MR context is rebuilt by every rdma_rw_ctx_wrs() call
 *   from the MRs' state at that moment, so a context can be posted again;
 * - RDMA_READ_WITH_INV names the key registered in the same chain;
 * - a failed rdma_rw_ctx_post() gives back the key variants it took;
 * - bad input is refused with an errno where the kernel would crash.
 */
#include "rw/rw_internal.h"
#include "core/provider.h"
#include "core/dma_map.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* ---- MR path ---------------------------------------------------------- */

static u32 pages_per_mr(struct ib_qp *qp)
{
	return rdmarw__fr_page_list_len(qp->pd->device, qp->integrity_en);
}

size_t rdmarw__rw_reg_size(struct ib_qp *qp, u32 sg_cnt)
{
	u32 ppm = pages_per_mr(qp);

	if (!ppm)
		return 0;
	return (size_t)RDMARW_DIV_ROUND_UP((u64)sg_cnt, ppm) *
	       sizeof(struct rdma_rw_reg_ctx);
}

/*
 * The LOCAL_INV that retires the MR's current registration, if it still
 * has one, linked before the REG_MR.  Returns the registration's first WR.
 */
static struct ib_send_wr *reg_head(struct rdma_rw_reg_ctx *reg)
{
	struct ib_mr *mr = reg->mr;

	if (!mr->need_inval) {
		reg->inv_wr.next = NULL;
		return &reg->reg_wr.wr;
	}
	memset(&reg->inv_wr, 0, sizeof(reg->inv_wr));
	reg->inv_wr.opcode = IB_WR_LOCAL_INV;
	reg->inv_wr.ex.invalidate_rkey = mr->lkey;
	reg->inv_wr.next = &reg->reg_wr.wr;
	return &reg->inv_wr;
}

/*
 * Take an MR, map @nents entries into it and prepare its REG_MR and SGE
 * (the kernel's rdma_rw_init_one_mr()).  Every entry must fit: an MR that
 * maps fewer goes back to the pool, and *@mapped says how many it took.
 * Returns the WQEs so far (LOCAL_INV? + REG_MR) or -EAGAIN / -EINVAL.
 */
static int init_one_mr(struct ib_qp *qp, u32 port_num,
		       struct rdma_rw_reg_ctx *reg, struct scatterlist *sg,
		       u32 nents, u32 offset, u32 *mapped)
{
	unsigned int off = offset;
	struct ib_mr *mr;
	int ret;

	mr = ib_mr_pool_get(qp, &qp->rdma_mrs);
	if (!mr) /* empty for now, or never filled (rw.h says when) */
		return rdmarw__qp_has_mr_pool(qp) ? -EAGAIN : -EOPNOTSUPP;
	ret = ib_map_mr_sg(mr, sg, (int)nents, &off, PAGE_SIZE);
	if (ret < (int)nents || mr->length > UINT32_MAX) {
		ib_mr_pool_put(qp, &qp->rdma_mrs, mr);
		if (ret < (int)nents)
			*mapped = ret > 0 ? (u32)ret : 0;
		return -EINVAL;
	}
	reg->mr = mr;
	reg->reg_wr.wr.opcode = IB_WR_REG_MR;
	reg->reg_wr.mr = mr;
	reg->reg_wr.key = mr->lkey;
	reg->reg_wr.access = IB_ACCESS_LOCAL_WRITE;
	if (rdma_protocol_iwarp(qp->device, port_num))
		reg->reg_wr.access |= IB_ACCESS_REMOTE_WRITE;
	reg->sge.addr = mr->iova;
	reg->sge.length = (u32)mr->length;
	reg->sge.lkey = mr->lkey;
	return mr->need_inval ? 2 : 1;
}

/* The RDMA WR through the MR, and the registration's links. */
static void init_reg_rdma_wr(struct ib_qp *qp, u32 port_num,
			     struct rdma_rw_reg_ctx *reg, u64 remote_addr,
			     u32 rkey, enum dma_data_direction dir)
{
	rdmarw__rw_set_rdma_wr(&reg->wr, &reg->sge, 1, remote_addr, rkey, dir);
	if (dir == DMA_FROM_DEVICE && rdma_cap_read_inv(qp->device, port_num))
		reg->wr.wr.opcode = IB_WR_RDMA_READ_WITH_INV;
	reg->reg_wr.wr.next = &reg->wr.wr;
	reg_head(reg);
}

int rdmarw__rw_init_mr_wrs(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			   u32 port_num, struct scatterlist *sg, u32 sg_cnt,
			   u32 offset, u64 remote_addr, u32 rkey,
			   enum dma_data_direction dir)
{
	u32 ppm = pages_per_mr(qp), nr_ops, i, j, mapped = UINT32_MAX;
	struct rdma_rw_reg_ctx *reg, *prev = NULL;
	int ret, count = 0;

	if (!ppm)
		return -EINVAL;
	nr_ops = RDMARW_DIV_ROUND_UP(sg_cnt, ppm);
	for (i = 0; i < nr_ops; i++) {
		u32 nents = sg_cnt < ppm ? sg_cnt : ppm;

		reg = &ctx->reg[i];
		ret = init_one_mr(qp, port_num, reg, sg, nents, offset,
				  &mapped);
		if (ret < 0)
			goto err;
		init_reg_rdma_wr(qp, port_num, reg, remote_addr, rkey, dir);
		if (prev)
			prev->wr.wr.next = reg->inv_wr.next ? &reg->inv_wr :
							      &reg->reg_wr.wr;
		count += ret + 1;
		remote_addr += reg->sge.length;
		sg_cnt -= nents;
		for (j = 0; j < nents && sg_cnt; j++)
			sg = sg_next(sg);
		offset = 0;
		prev = reg;
	}
	ctx->nr_ops = nr_ops;
	ctx->type = RDMA_RW_MR;
	return count;

err:
	/* for rdmarw_rw_ctx_explain(): the entry no MR could take */
	ctx->nr_ops = mapped == UINT32_MAX ? UINT32_MAX : i * ppm + mapped;
	while (i--)
		ib_mr_pool_put(qp, &qp->rdma_mrs, ctx->reg[i].mr);
	return ret;
}

static int init_mr(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
		   struct scatterlist *sg, u32 sg_cnt, u32 offset,
		   u64 remote_addr, u32 rkey, enum dma_data_direction dir)
{
	size_t size = rdmarw__rw_reg_size(qp, sg_cnt);
	struct rdmarw_rw_block *blk;
	int ret;

	if (!size)
		return -EINVAL;
	ctx->reg = rdmarw__rw_block_get(qp, size, &blk);
	if (!ctx->reg)
		return -ENOMEM;
	ret = rdmarw__rw_init_mr_wrs(ctx, qp, port_num, sg, sg_cnt, offset,
				     remote_addr, rkey, dir);
	if (ret < 0) {
		rdmarw__rw_block_put(blk);
		return ret;
	}
	ctx->rdmarw_block = blk;
	return ret;
}

/* ---- SGE paths -------------------------------------------------------- */

/*
 * Fill @n SGEs from @sg on (the entries' DMA address and length, @lkey) and
 * return their bytes.  Steps to the next entry only while @more entries
 * follow this run, so the walk never looks past the context's last entry.
 */
static u64 fill_sges(struct ib_sge *sge, struct scatterlist **sgp, u32 n,
		     bool more, u32 lkey)
{
	struct scatterlist *sg = *sgp;
	u64 bytes = 0;

	for (;;) {
		u64 addr = sg_dma_address(sg);
		u32 len = sg_dma_len(sg);

		sge->addr = addr;
		sge->length = len;
		sge->lkey = lkey;
		sge++;
		bytes += len;
		if (!--n && !more)
			break;
		sg = sg_next(sg);
		if (!n)
			break;
	}
	*sgp = sg;
	return bytes;
}

/*
 * Several RDMA WRs of up to the QP's SGE limit (RDMA_RW_MULTI_WR).  Every
 * SGE and WR of the storage is written here, so it is not zeroed first.
 */
static int init_map_wrs(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			struct scatterlist *sg, u32 sg_cnt, u32 offset,
			u64 remote_addr, u32 rkey, enum dma_data_direction dir)
{
	u32 max_sge = rdmarw__rw_max_sge(qp, dir), nr_ops, i, left = sg_cnt;
	u32 lkey = qp->pd->local_dma_lkey;
	struct rdmarw_rw_block *blk;
	struct ib_rdma_wr *wrs;
	struct ib_sge *sge;
	size_t sges_size, size;
	void *mem;

	if (!max_sge)
		return -EINVAL;
	nr_ops = RDMARW_DIV_ROUND_UP(sg_cnt, max_sge);
	sges_size = (size_t)sg_cnt * sizeof(struct ib_sge);
	size = sges_size + (size_t)nr_ops * sizeof(struct ib_rdma_wr);
	mem = rdmarw__rw_block_get_raw(qp, size, &blk);
	if (!mem)
		return -ENOMEM;
	ctx->map.sges = sge = mem;
	ctx->map.wrs = wrs = (struct ib_rdma_wr *)((char *)mem + sges_size);
	ctx->map.nr_sges = sg_cnt;
	for (i = 0; i < nr_ops; i++) {
		u32 nr_sge = left < max_sge ? left : max_sge;
		u64 bytes;

		left -= nr_sge;
		rdmarw__rw_set_rdma_wr(&wrs[i], sge, (int)nr_sge, remote_addr,
				       rkey, dir);
		bytes = fill_sges(sge, &sg, nr_sge, left != 0, lkey);
		if (!i) { /* the offset is inside the first entry */
			sge->addr += offset;
			sge->length -= offset;
			bytes -= offset;
		}
		remote_addr += bytes;
		sge += nr_sge;
		if (left)
			wrs[i].wr.next = &wrs[i + 1].wr;
	}
	ctx->rdmarw_block = blk;
	ctx->nr_ops = nr_ops;
	ctx->type = RDMA_RW_MULTI_WR;
	return (int)nr_ops;
}

/* One RDMA WR with one SGE, in the context itself (RDMA_RW_SINGLE_WR). */
static int init_single_wr(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			  struct scatterlist *sg, u32 offset, u64 remote_addr,
			  u32 rkey, enum dma_data_direction dir)
{
	ctx->single.sge.addr = sg_dma_address(sg) + offset;
	ctx->single.sge.length = sg_dma_len(sg) - offset;
	ctx->single.sge.lkey = qp->pd->local_dma_lkey;
	rdmarw__rw_set_rdma_wr(&ctx->single.wr, &ctx->single.sge, 1,
			       remote_addr, rkey, dir);
	ctx->nr_ops = 1;
	ctx->type = RDMA_RW_SINGLE_WR;
	return 1;
}

/* ---- rdma_rw_ctx_init ------------------------------------------------- */

/*
 * Skip the entries @offset covers.  Returns the entries left (0 when the
 * offset reaches the end of the list) and updates @sg and @offset.
 */
static u32 skip_offset(struct scatterlist **sg, u32 nents, u32 *offset)
{
	struct scatterlist *s = *sg;

	while (nents && *offset >= sg_dma_len(s)) {
		*offset -= sg_dma_len(s);
		if (--nents)
			s = sg_next(s);
	}
	*sg = s;
	return nents;
}

/*
 * Every path but SINGLE without an MR: registration (@why, from
 * rdmarw__io_needs_mr()) or several RDMA WRs.  Out of line, so that
 * rdma_rw_ctx_init()'s common case makes no call and needs no frame.
 */
static __attribute__((noinline)) int
init_other_paths(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
		 struct scatterlist *sg, u32 nents, u32 offset, u64 remote_addr,
		 u32 rkey, enum dma_data_direction dir, u8 why)
{
	int ret;

	/*
	 * The decision is recorded here, where it is made (ctx->rdmarw_why,
	 * and ctx->type for a path that may fail), for
	 * rdmarw_rw_ctx_explain().
	 */
	if (why) {
		ctx->type = RDMA_RW_MR;
		ctx->rdmarw_why = why;
		ctx->nr_ops = UINT32_MAX; /* no bad entry (yet) */
		ret = init_mr(ctx, qp, port_num, sg, nents, offset, remote_addr,
			      rkey, dir);
		/*
		 * Only a missing MR under the max_sgl_rd optimisation may fall
		 * back to SGEs; iWARP and force_mr need the MR.
		 */
		if ((ret != -EAGAIN && ret != -EOPNOTSUPP) ||
		    why != RDMARW_RW_WHY_MAX_SGL_RD)
			return ret;
		why = ret == -EAGAIN ? RDMARW_RW_WHY_POOL_EMPTY :
				       RDMARW_RW_WHY_NO_POOL;
	}
	if (nents > 1) {
		ctx->type = RDMA_RW_MULTI_WR;
		ctx->rdmarw_why = why ? why : RDMARW_RW_WHY_ENTRIES;
		return init_map_wrs(ctx, qp, sg, nents, offset, remote_addr,
				    rkey, dir);
	}
	ctx->rdmarw_why = why ? why : RDMARW_RW_WHY_ONE_ENTRY;
	return init_single_wr(ctx, qp, sg, offset, remote_addr, rkey, dir);
}

/*
 * rdma_rw_ctx_init() once the list is mapped: the entries the offset
 * leaves, the path, the binding.  Out of line and called last, so that
 * rdma_rw_ctx_init()'s common case keeps nothing across a call (no frame).
 */
static __attribute__((noinline)) int
init_mapped(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
	    struct scatterlist *sg, u32 sg_cnt, u32 sg_offset, u64 remote_addr,
	    u32 rkey, enum dma_data_direction dir)
{
	struct ib_device *dev = qp->pd->device;
	struct scatterlist *s = sg;
	u32 left = skip_offset(&s, sg_cnt, &sg_offset);
	int ret;

	if (!left) {
		rdmarw__dma_unmap_sg(dev, sg, (int)sg_cnt);
		return rdmarw__rw_ctx_fail_early(ctx, qp, RDMARW_RW_WHY_OFFSET,
						 -EINVAL);
	}
	ret = init_other_paths(ctx, qp, port_num, s, left, sg_offset,
			       remote_addr, rkey, dir,
			       rdmarw__io_needs_mr(dev, port_num, dir, left,
						   rdma_rw_get_force_mr()));
	if (ret < 0) {
		rdmarw__dma_unmap_sg(dev, sg, (int)sg_cnt);
		return rdmarw__rw_ctx_fail(ctx, qp, ret);
	}
	rdmarw__rw_ctx_bind(ctx, qp, RDMARW_RW_ORIGIN_SG, sg, sg_cnt);
	return ret;
}

int rdma_rw_ctx_init(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
		     struct scatterlist *sg, u32 sg_cnt, u32 sg_offset,
		     u64 remote_addr, u32 rkey, enum dma_data_direction dir)
{
	struct ib_device *dev;
	struct scatterlist *s = sg;
	u32 offset = sg_offset;
	int nents;

	if (!ctx)
		return -EINVAL;
	ctx->rdmarw_origin = RDMARW_RW_ORIGIN_NONE;
	ctx->rdmarw_block = NULL;
	if (!qp || !sg || !sg_cnt || sg_cnt > INT_MAX ||
	    !rdmarw__rw_args_ok(qp, port_num, dir))
		return -EINVAL;
	dev = qp->pd->device;
	nents = rdmarw__dma_map_sg(dev, sg, (int)sg_cnt, dir);
	if (nents <= 0)
		return rdmarw__rw_ctx_fail_early(ctx, qp, RDMARW_RW_WHY_DMA_MAP,
						 -EINVAL);
	/* The common case inline: one entry the offset leaves, no MR. */
	if (__builtin_expect(
		    sg_cnt == 1 && skip_offset(&s, 1, &offset) &&
			    !rdmarw__io_needs_mr(dev, port_num, dir, 1,
						 rdma_rw_get_force_mr()),
		    1)) {
		ctx->rdmarw_why = RDMARW_RW_WHY_ONE_ENTRY;
		init_single_wr(ctx, qp, s, offset, remote_addr, rkey, dir);
		rdmarw__rw_ctx_bind(ctx, qp, RDMARW_RW_ORIGIN_SG, sg, sg_cnt);
		return 1;
	}
	return init_mapped(ctx, qp, port_num, sg, sg_cnt, sg_offset,
			   remote_addr, rkey, dir);
}

/* ---- the chain -------------------------------------------------------- */

static bool ctx_ok(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num)
{
	return rdmarw__rw_ctx_live(ctx, qp) && qp->pd &&
	       rdmarw__rw_port_ok(qp->pd->device, port_num);
}

/*
 * Link the registrations of an MR or SIG_MR context for posting, and move
 * each MR to the key variant this chain registers (the kernel's
 * rdma_rw_update_lkey(), done here and not at init so that a context that
 * is never posted changes no MR).  The LOCAL_INV is decided from the MR's
 * state now, which keeps a context posted again correct.
 */
static struct ib_send_wr *link_regs(struct rdma_rw_ctx *ctx)
{
	struct ib_send_wr *first = NULL, **link = &first;
	u32 i;

	for (i = 0; i < ctx->nr_ops; i++) {
		struct rdma_rw_reg_ctx *reg = &ctx->reg[i];
		struct ib_mr *mr = reg->mr;
		bool with_inv = reg->wr.wr.opcode == IB_WR_RDMA_READ_WITH_INV;

		*link = reg_head(reg);
		ib_update_fast_reg_key(mr, (u8)ib_inc_rkey(mr->lkey));
		reg->reg_wr.key = mr->lkey;
		reg->reg_wr.wr.next = &reg->wr.wr;
		reg->sge.lkey = mr->lkey;
		if (with_inv)
			reg->wr.wr.ex.invalidate_rkey = mr->lkey;
		mr->need_inval = !with_inv;
		reg->wr.wr.send_flags = 0;
		reg->wr.wr.wr_cqe = NULL;
		link = &reg->wr.wr.next;
	}
	return first;
}

/*
 * The first and last WR of a context's chain (MR contexts: linked now).
 * SINGLE, the common case, is ctx_wrs()'s own test, inline; this is the
 * rest.  Return: false for a context of no known type.
 */
static __attribute__((noinline)) bool chain_ends(struct rdma_rw_ctx *ctx,
						 struct ib_send_wr **first,
						 struct ib_send_wr **last)
{
	switch (ctx->type) {
	case RDMA_RW_SINGLE_WR:
		*first = *last = &ctx->single.wr.wr;
		return true;
	case RDMA_RW_MR:
	case RDMA_RW_SIG_MR:
		*first = link_regs(ctx);
		*last = &ctx->reg[ctx->nr_ops - 1].wr.wr;
		return true;
	case RDMA_RW_MULTI_WR:
		*first = &ctx->map.wrs[0].wr;
		*last = &ctx->map.wrs[ctx->nr_ops - 1].wr;
		return true;
	case RDMA_RW_IOVA:
		*first = *last = &ctx->iova.wr.wr;
		return true;
	default:
		return false;
	}
}

/*
 * rdma_rw_ctx_wrs()'s body, inline in rdma_rw_ctx_post() as well: a call
 * between the two cost a frame per I/O.
 */
static inline __attribute__((always_inline)) struct ib_send_wr *
ctx_wrs(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
	struct ib_cqe *cqe, struct ib_send_wr *chain_wr)
{
	struct ib_send_wr *first, *last;

	if (!ctx_ok(ctx, qp, port_num) || (!cqe && !chain_wr) || !ctx->nr_ops)
		return NULL;
	if (ctx->type == RDMA_RW_SINGLE_WR)
		first = last = &ctx->single.wr.wr;
	else if (!chain_ends(ctx, &first, &last))
		return NULL;
	if (chain_wr) {
		last->next = chain_wr;
		last->wr_cqe = NULL;
		last->send_flags &= ~IB_SEND_SIGNALED;
	} else {
		last->next = NULL;
		last->wr_cqe = cqe;
		last->send_flags |= IB_SEND_SIGNALED;
	}
	return first;
}

struct ib_send_wr *rdma_rw_ctx_wrs(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
				   u32 port_num, struct ib_cqe *cqe,
				   struct ib_send_wr *chain_wr)
{
	return ctx_wrs(ctx, qp, port_num, cqe, chain_wr);
}

/*
 * After a failed post: registrations whose REG_MR was not queued did not
 * happen, so their MR gets back the key variant and invalidation state it
 * had before rdma_rw_ctx_wrs().  A queued LOCAL_INV without its REG_MR
 * leaves the MR invalid; a queued REG_MR without its READ_WITH_INV leaves
 * it registered.
 */
static void rollback_regs(struct rdma_rw_ctx *ctx, const struct ib_send_wr *bad)
{
	/* @bad NULL: where the post stopped is not known, so every WR may be
	 * queued: nothing is rolled back. */
	bool queued = true;
	u32 i;

	for (i = 0; i < ctx->nr_ops; i++) {
		struct rdma_rw_reg_ctx *reg = &ctx->reg[i];
		struct ib_mr *mr = reg->mr;
		bool had_inv = reg->inv_wr.next != NULL, inv_queued;

		if (had_inv && bad == &reg->inv_wr)
			queued = false;
		inv_queued = had_inv && queued;
		if (bad == &reg->reg_wr.wr)
			queued = false;
		if (!queued) {
			ib_update_fast_reg_key(mr, (u8)(mr->lkey - 1));
			mr->need_inval = had_inv && !inv_queued;
			continue;
		}
		if (bad == &reg->wr.wr)
			queued = false;
		if (!queued)
			mr->need_inval = true;
	}
}

/*
 * Part of a chain is queued and the rest is not: move the QP to ERR.  When
 * ib_modify_qp() returns, a software device has stopped its Send Queue and
 * the queued WRs flush without touching memory; on hardware they flush as
 * the device gets to them, and the context's registrations are retired when
 * it is destroyed (ib_mr_pool_put()).
 */
static void stop_queued(struct ib_qp *qp)
{
	static bool warned;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int ret = ib_modify_qp(qp, &attr, IB_QP_STATE);

	if (ret)
		rdmarw__warn_once(
			&warned,
			"rdma_rw_ctx_post: moving the QP to ERR after a part-way post failed: %d",
			ret);
}

/*
 * Whether the WRs queued before @bad can reach memory or grant access: any
 * WR but a LOCAL_INV (which only takes access away, and runs before any
 * later registration of its MR).  @bad NULL: not known, so yes.
 */
static bool queued_can_touch(const struct ib_send_wr *wr,
			     const struct ib_send_wr *bad)
{
	if (!bad)
		return true;
	for (; wr && wr != bad; wr = wr->next)
		if (wr->opcode != IB_WR_LOCAL_INV)
			return true;
	return false;
}

/* A post of @first that failed with @ret, stopped at @bad: out of line. */
static __attribute__((noinline, cold)) int
post_failed(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
	    const struct ib_send_wr *first, const struct ib_send_wr *bad,
	    int ret)
{
	/*
	 * Stopped part-way (or the provider did not say where): WRs of the
	 * chain are queued that the caller will never see complete, and it
	 * may destroy the context at once.  The QP goes to ERR so that they
	 * flush instead of running (rw.h, docs/reliability.md).
	 */
	if (queued_can_touch(first, bad))
		stop_queued(qp);
	if (ctx->type == RDMA_RW_MR || ctx->type == RDMA_RW_SIG_MR)
		rollback_regs(ctx, bad);
	return ret;
}

int rdma_rw_ctx_post(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
		     struct ib_cqe *cqe, struct ib_send_wr *chain_wr)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first;
	int ret;

	first = ctx_wrs(ctx, qp, port_num, cqe, chain_wr);
	if (!first)
		return -EINVAL;
	ret = ib_post_send(qp, first, &bad);
	if (__builtin_expect(!ret, 1))
		return 0;
	return post_failed(ctx, qp, first, bad, ret);
}

/* ---- destroy ---------------------------------------------------------- */

static void put_mrs(struct rdma_rw_ctx *ctx, struct ib_qp *qp)
{
	u32 i;

	for (i = 0; i < ctx->nr_ops; i++)
		ib_mr_pool_put(qp, &qp->rdma_mrs, ctx->reg[i].mr);
}

/* Forget a released context so that a second destroy is caught. */
static void ctx_release(struct rdma_rw_ctx *ctx)
{
	if (ctx->rdmarw_block)
		rdmarw__rw_block_put(ctx->rdmarw_block);
	ctx->rdmarw_block = NULL;
	ctx->rdmarw_origin = RDMARW_RW_ORIGIN_NONE;
}

/* Why rdma_rw_ctx_destroy() refuses a context (destroy_refusal()). */
static const char *const destroy_why[] = {
	[1] = "rdma_rw_ctx_destroy: context not initialised on this QP (or a copy)",
	[2] = "rdma_rw_ctx_destroy: context needs rdma_rw_ctx_destroy_bvec or _signature",
	[3] = "rdma_rw_ctx_destroy: sg or sg_cnt is not what rdma_rw_ctx_init was given",
};

/*
 * Whether rdma_rw_ctx_destroy() refuses @ctx with @sg/@sg_cnt: 0 when it
 * does not, else the index of its reason in destroy_why[].  Inline, so the
 * common case (a SINGLE or MULTI_WR context with no block) runs without a
 * call and so without a frame.
 */
static inline __attribute__((always_inline)) int
destroy_refusal(const struct rdma_rw_ctx *ctx, const struct ib_qp *qp,
		const struct scatterlist *sg, u32 sg_cnt)
{
	if (!rdmarw__rw_ctx_live(ctx, qp))
		return 1;
	if (ctx->rdmarw_origin != RDMARW_RW_ORIGIN_SG ||
	    (ctx->type != RDMA_RW_MR && ctx->type != RDMA_RW_MULTI_WR &&
	     ctx->type != RDMA_RW_SINGLE_WR))
		return 2;
	if (sg != ctx->rdmarw_mem || sg_cnt != ctx->rdmarw_nents)
		return 3;
	return 0;
}

/* rdma_rw_ctx_destroy() refusing: one warning per process for each reason. */
static __attribute__((noinline, cold)) void destroy_refused(int why)
{
	static bool warned[sizeof(destroy_why) / sizeof(destroy_why[0])];

	rdmarw__warn_once(&warned[why], "%s", destroy_why[why]);
}

/* rdma_rw_ctx_destroy() of an MR context or one with a block: with calls. */
static __attribute__((noinline)) void
destroy_with_calls(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
		   struct scatterlist *sg, u32 sg_cnt)
{
	if (ctx->type == RDMA_RW_MR)
		put_mrs(ctx, qp);
	ctx_release(ctx);
	rdmarw__dma_unmap_sg(qp->pd->device, sg, (int)sg_cnt);
}

void rdma_rw_ctx_destroy(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			 u32 port_num, struct scatterlist *sg, u32 sg_cnt,
			 enum dma_data_direction dir)
{
	int why = destroy_refusal(ctx, qp, sg, sg_cnt);

	if (__builtin_expect(why, 0)) {
		destroy_refused(why);
		return;
	}
	if (ctx->type == RDMA_RW_MR || ctx->rdmarw_block) {
		destroy_with_calls(ctx, qp, sg, sg_cnt);
		return;
	}
	ctx_release(ctx); /* no block: no call */
	rdmarw__dma_unmap_sg(qp->pd->device, sg, (int)sg_cnt);
}

void rdma_rw_ctx_destroy_bvec(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			      u32 port_num, const struct bio_vec *bvecs,
			      u32 nr_bvec, enum dma_data_direction dir)
{
	static bool warned_kind, warned_state, warned_mem;
	struct ib_device *dev;
	u32 i;

	if (!rdmarw__rw_ctx_live(ctx, qp)) {
		rdmarw__warn_once(
			&warned_state,
			"rdma_rw_ctx_destroy_bvec: context not initialised on this QP (or a copy)");
		return;
	}
	if (ctx->rdmarw_origin != RDMARW_RW_ORIGIN_BVEC) {
		rdmarw__warn_once(
			&warned_kind,
			"rdma_rw_ctx_destroy_bvec: context needs rdma_rw_ctx_destroy or _signature");
		return;
	}
	if (bvecs != ctx->rdmarw_mem || nr_bvec != ctx->rdmarw_nents) {
		rdmarw__warn_once(
			&warned_mem,
			"rdma_rw_ctx_destroy_bvec: bvecs or nr_bvec is not what rdma_rw_ctx_init_bvec was given");
		return;
	}
	dev = qp->pd->device;
	switch (ctx->type) {
	case RDMA_RW_MR:
		put_mrs(ctx, qp);
		ib_dma_unmap_sgtable_attrs(dev, &ctx->reg[0].sgt, dir, 0);
		break;
	case RDMA_RW_IOVA:
		ib_dma_iova_destroy(dev, &ctx->iova.state, ctx->iova.mapped_len,
				    dir);
		break;
	case RDMA_RW_MULTI_WR:
		for (i = 0; i < ctx->map.nr_sges; i++)
			ib_dma_unmap_bvec(dev, ctx->map.sges[i].addr,
					  ctx->map.sges[i].length, dir);
		break;
	case RDMA_RW_SINGLE_WR:
		ib_dma_unmap_bvec(dev, ctx->single.sge.addr,
				  ctx->single.sge.length, dir);
		break;
	default:
		rdmarw__warn_once(
			&warned_kind,
			"rdma_rw_ctx_destroy_bvec: context of unknown type");
		return;
	}
	ctx_release(ctx);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Private declarations of the R/W API (src/rw). */
#ifndef RDMARW_RW_INTERNAL_H
#define RDMARW_RW_INTERNAL_H

#include <rdmarw/rw.h>

#include <pthread.h>
#include <stdalign.h>
#include <string.h>

/* The kernel caps pages per MR for R/W contexts at 256. */
#define RDMARW_RW_MAX_PAGES 256U

#define RDMARW_DIV_ROUND_UP(n, d) (((n) + (d)-1) / (d))

u32 rdmarw__fr_page_list_len(struct ib_device *dev, bool pi_support);
bool rdmarw__can_use_mr(struct ib_device *dev, u32 port_num);

/* ---- per-QP context storage (rw_cache.c) ------------------------------ */

/*
 * Size classes: class c holds RDMARW_RW_MIN_BLOCK << c bytes of payload.
 * The largest class (16 GiB) is far beyond any list a u32 count of SGEs of
 * 16 bytes can describe once the QP's SGE limit is applied.
 */
#define RDMARW_RW_MIN_BLOCK 256U
#define RDMARW_RW_NR_CLASSES 27U

/*
 * struct rdmarw_rw_block - one piece of context storage
 * @next_free: link in its class's free list while not in use
 * @next_all: link in the cache's list of every block (freed at QP destroy)
 * @cache: owner
 * @cls: size class
 * @data: payload, aligned for any object
 */
struct rdmarw_rw_block {
	struct rdmarw_rw_block *next_free;
	struct rdmarw_rw_block *next_all;
	struct rdmarw_rw_cache *cache;
	unsigned int cls;
	alignas(max_align_t) unsigned char data[];
};

/*
 * struct rdmarw_rw_cache - a QP's context storage (qp->rw_cache)
 * @lock: serialises everything below
 * @qp: owner
 * @free: per size class, blocks not in use (LIFO)
 * @all: every block, for QP destroy
 * @nr_blocks: blocks allocated so far
 * @in_use: blocks handed to contexts and not yet returned
 */
struct rdmarw_rw_cache {
	pthread_mutex_t lock;
	struct ib_qp *qp;
	struct rdmarw_rw_block *free[RDMARW_RW_NR_CLASSES];
	struct rdmarw_rw_block *all;
	unsigned long nr_blocks;
	unsigned long in_use;
};

/*
 * rdmarw__rw_cache_setup() - create a QP's storage (if it has none) and set
 * aside @nr blocks of at least @size bytes each.  Returns 0 or -ENOMEM;
 * on error a cache created here is freed again.
 */
int rdmarw__rw_cache_setup(struct ib_qp *qp, u32 nr, size_t size);

/* rdmarw__rw_cache_free() - free a QP's storage and every block of it. */
void rdmarw__rw_cache_free(struct ib_qp *qp);

/*
 * rdmarw__rw_block_get() - zeroed storage of @size bytes from @qp's cache
 * (created on first use).  Returns the payload and sets *@blk, or NULL
 * (-ENOMEM: allocation failed or @size is beyond the largest class).
 */
void *rdmarw__rw_block_get(struct ib_qp *qp, size_t size,
			   struct rdmarw_rw_block **blk);

/*
 * rdmarw__rw_block_get_raw() - rdmarw__rw_block_get() without the zeroing,
 * for callers that write every byte they use (the MULTI SGE and WR arrays).
 */
void *rdmarw__rw_block_get_raw(struct ib_qp *qp, size_t size,
			       struct rdmarw_rw_block **blk);

/* rdmarw__rw_block_put() - return a block to its class; NULL does nothing. */
void rdmarw__rw_block_put(struct rdmarw_rw_block *blk);

/*
 * rdmarw__rw_base_block_size() - bytes of the blocks set aside at QP
 * creation: one registration, or one RDMA WR with the QP's largest SGE
 * count.
 */
size_t rdmarw__rw_base_block_size(struct ib_qp *qp);

/*
 * rdmarw__rw_cache_in_use() - blocks of @qp's context storage held by
 * contexts (0 when the QP has no storage).
 */
unsigned long rdmarw__rw_cache_in_use(struct ib_qp *qp);

/*
 * rdmarw__rw_qp_busy() - whether contexts still hold @qp's context storage
 * or MRs of its pools; ib_destroy_qp() and rdma_rw_cleanup_mrs() refuse
 * then.
 */
bool rdmarw__rw_qp_busy(struct ib_qp *qp);

/*
 * rdmarw__rw_max_ctxs() - the largest cap.max_rdma_ctxs a QP of @dev may
 * ask for on @port_num with @create_flags: the contexts whose WRs
 * (rdma_rw_max_send_wr() per context) the device's Send Queue can hold
 * at once, max_qp_wr / WRs per context.  0 for a bad port.
 */
u32 rdmarw__rw_max_ctxs(struct ib_device *dev, u32 port_num, u32 create_flags);

/* ---- shared by the scatterlist and bio_vec paths (rw.c, rw_bvec.c) ---- */

/*
 * The helpers below run for every I/O: they are inline so that the SINGLE
 * and MULTI paths make no calls they do not need.
 */

/* rdma_is_port_valid() for a device known to exist. */
static inline bool rdmarw__rw_port_ok(const struct ib_device *dev, u32 port_num)
{
	return port_num >= 1 && port_num <= dev->phys_port_cnt &&
	       port_num <= RDMARW_MAX_PORTS;
}

/*
 * Whether this I/O must (or, with max_sgl_rd, should) register memory, as
 * the enum rdmarw_rw_why of the rule that says so, or 0.  The rules that
 * leave no fallback (iWARP READ, force_mr) come first: only
 * RDMARW_RW_WHY_MAX_SGL_RD may fall back to SGEs.
 */
static inline u8 rdmarw__io_needs_mr(struct ib_device *dev, u32 port_num,
				     enum dma_data_direction dir, u32 nents,
				     bool force)
{
	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return 0;
	if (dir == DMA_FROM_DEVICE) {
		if (rdma_protocol_iwarp(dev, port_num))
			return RDMARW_RW_WHY_IWARP_READ;
		if (!force && dev->attrs.max_sgl_rd &&
		    nents > dev->attrs.max_sgl_rd)
			return RDMARW_RW_WHY_MAX_SGL_RD;
	}
	return force ? RDMARW_RW_WHY_FORCE_MR : 0;
}

/*
 * An init failed after its argument checks: the context is explainable
 * (rdmarw_rw_ctx_explain()) and refused by post and destroy, which find
 * no QP in it (the QP is kept in rdmarw_mem instead, so that the checks
 * of the data path stay one comparison).  The path (ctx->type) and the
 * reason (ctx->rdmarw_why) are set by the caller.
 */
static inline int rdmarw__rw_ctx_fail(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
				      int err)
{
	ctx->rdmarw_qp = NULL;
	ctx->rdmarw_mem = qp;
	ctx->rdmarw_self = ctx;
	ctx->rdmarw_error = (u8)-err;
	ctx->rdmarw_origin = RDMARW_RW_ORIGIN_FAILED;
	return err;
}

/* A failure before any path was chosen. */
static inline int rdmarw__rw_ctx_fail_early(struct rdma_rw_ctx *ctx,
					    struct ib_qp *qp, u8 why, int err)
{
	ctx->type = RDMARW_RW_TYPE_NONE;
	ctx->rdmarw_why = why;
	return rdmarw__rw_ctx_fail(ctx, qp, err);
}

/* MR path over a DMA-mapped list (ctx->reg must already point to
 * zeroed storage for ceil(sg_cnt / pages per MR) registrations). */
int rdmarw__rw_init_mr_wrs(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			   u32 port_num, struct scatterlist *sg, u32 sg_cnt,
			   u32 offset, u64 remote_addr, u32 rkey,
			   enum dma_data_direction dir);

/* Bytes of storage for the MR path over @sg_cnt entries. */
size_t rdmarw__rw_reg_size(struct ib_qp *qp, u32 sg_cnt);

/* Fill one RDMA READ or WRITE (no chain link, no flags). */
static inline void rdmarw__rw_set_rdma_wr(struct ib_rdma_wr *wr,
					  struct ib_sge *sges, int num_sge,
					  u64 remote_addr, u32 rkey,
					  enum dma_data_direction dir)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode =
		dir == DMA_TO_DEVICE ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
	wr->wr.sg_list = sges;
	wr->wr.num_sge = num_sge;
	wr->remote_addr = remote_addr;
	wr->rkey = rkey;
}

/* SGEs per RDMA WR for @dir on @qp. */
static inline u32 rdmarw__rw_max_sge(struct ib_qp *qp,
				     enum dma_data_direction dir)
{
	return dir == DMA_TO_DEVICE ? qp->max_write_sge : qp->max_read_sge;
}

/* Checks common to every entry point: the port and the direction. */
static inline bool rdmarw__rw_args_ok(struct ib_qp *qp, u32 port_num,
				      enum dma_data_direction dir)
{
	if (!qp->pd || !qp->pd->device ||
	    !rdmarw__rw_port_ok(qp->pd->device, port_num))
		return false;
	if (dir != DMA_TO_DEVICE && dir != DMA_FROM_DEVICE)
		return false;
	/* Every path needs at least one SGE in the data WR. */
	return rdmarw__rw_max_sge(qp, dir) != 0;
}

/*
 * A context is bound to the QP, the memory and the entry count its init was
 * given, and to its own address (a copy of it is not the context).
 */
static inline void rdmarw__rw_ctx_bind(struct rdma_rw_ctx *ctx,
				       struct ib_qp *qp, u8 origin,
				       const void *mem, u32 nents)
{
	ctx->rdmarw_qp = qp;
	ctx->rdmarw_self = ctx;
	ctx->rdmarw_mem = mem;
	ctx->rdmarw_nents = nents;
	ctx->rdmarw_origin = origin;
}

/* Initialised, by an init on @qp, and not a copy. */
static inline bool rdmarw__rw_ctx_live(const struct rdma_rw_ctx *ctx,
				       const struct ib_qp *qp)
{
	/* a FAILED context has no QP: qp (not NULL) cannot match it */
	return ctx && qp && ctx->rdmarw_origin != RDMARW_RW_ORIGIN_NONE &&
	       ctx->rdmarw_qp == qp && ctx->rdmarw_self == ctx;
}

#endif /* RDMARW_RW_INTERNAL_H */

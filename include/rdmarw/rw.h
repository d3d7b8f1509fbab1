/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's generic RDMA READ/WRITE context API (include/rdma/rw.h).
 *
 * A context describes one RDMA READ or WRITE of a local buffer (a
 * scatterlist or a bio_vec array) from or to a remote buffer (address and
 * rkey).  rdma_rw_ctx_init() or rdma_rw_ctx_init_bvec() DMA-map the buffer
 * and build the work requests, registering memory where the device needs it;
 * rdma_rw_ctx_wrs() returns the chain to post (or rdma_rw_ctx_post() posts
 * it); rdma_rw_ctx_destroy() or rdma_rw_ctx_destroy_bvec() undo the init once
 * the work has completed.
 *
 * Thread safety, as in the kernel: a context belongs to one caller at a time;
 * different contexts on the same QP may be initialised, posted and destroyed
 * from several threads at once (MR pools and context storage are serialised
 * per QP).
 *
 * Storage (rdmarw extension): SINGLE and IOVA contexts live in the context
 * itself; MULTI and MR contexts draw their SGE, WR and registration arrays
 * from per-QP storage (qp->rw_cache), recycled by size class.  The storage is
 * created with the QP when cap.max_rdma_ctxs is set (cap.max_rdma_ctxs
 * blocks are set aside at once) or on first use otherwise, grows only when a
 * size class runs dry, and is freed by ib_destroy_qp(): after warm-up no path
 * allocates memory.  Destroy every context before its QP.
 */
#ifndef RDMARW_RW_H
#define RDMARW_RW_H

#include <rdmarw/ib_verbs.h>
#include <rdmarw/mr_pool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rdmarw_rw_block;

/**
 * enum rdma_rw_ctx_type - how a context moves its data (rdma_rw_ctx.type)
 * @RDMA_RW_SINGLE_WR: one RDMA WR with one SGE, stored in the context
 * @RDMA_RW_MULTI_WR: RDMA WRs of up to the QP's SGE limit each
 * @RDMA_RW_MR: per MR of the QP's pool: [LOCAL_INV], REG_MR, one RDMA WR
 * @RDMA_RW_SIG_MR: one integrity MR: [LOCAL_INV], REG_MR_INTEGRITY, one
 *                  RDMA WR (rdma_rw_ctx_signature_init())
 * @RDMA_RW_IOVA: bio_vecs linked into one IOVA range: one WR, one SGE
 *
 * The kernel keeps these private to rw.c; rdmarw publishes them so that
 * tools and tests can tell which path a context took.
 */
enum rdma_rw_ctx_type {
	RDMA_RW_SINGLE_WR,
	RDMA_RW_MULTI_WR,
	RDMA_RW_MR,
	RDMA_RW_SIG_MR,
	RDMA_RW_IOVA,
};

/**
 * enum rdmarw_rw_origin - which init built a context (rdmarw extension)
 * @RDMARW_RW_ORIGIN_NONE: not initialised, or destroyed
 * @RDMARW_RW_ORIGIN_SG: rdma_rw_ctx_init(); release with rdma_rw_ctx_destroy()
 * @RDMARW_RW_ORIGIN_BVEC: rdma_rw_ctx_init_bvec(); release with
 *                         rdma_rw_ctx_destroy_bvec()
 * @RDMARW_RW_ORIGIN_SIG: rdma_rw_ctx_signature_init(); release with
 *                        rdma_rw_ctx_destroy_signature()
 * @RDMARW_RW_ORIGIN_FAILED: an init that got past its argument checks
 *                           failed: nothing is held, post and destroy
 *                           refuse the context, rdmarw_rw_ctx_explain()
 *                           says why
 */
enum rdmarw_rw_origin {
	RDMARW_RW_ORIGIN_NONE,
	RDMARW_RW_ORIGIN_SG,
	RDMARW_RW_ORIGIN_BVEC,
	RDMARW_RW_ORIGIN_SIG,
	RDMARW_RW_ORIGIN_FAILED,
};

/**
 * enum rdmarw_rw_why - why an init took its path, or why it failed
 * @RDMARW_RW_WHY_NONE: no path was chosen (see the failure reasons)
 * @RDMARW_RW_WHY_ONE_ENTRY: SINGLE: one scatterlist entry after the offset
 * @RDMARW_RW_WHY_ONE_BVEC: SINGLE: the transfer lies within one bio_vec
 * @RDMARW_RW_WHY_ENTRIES: MULTI: several entries, up to the QP's SGE limit
 *                         per RDMA WR (more WRs when there are more SGEs)
 * @RDMARW_RW_WHY_NO_IOVA: MULTI (bio_vecs): no IOVA range to link them
 *                         into (virtual DMA, or the IOMMU has none)
 * @RDMARW_RW_WHY_IOMMU: IOVA: the bio_vecs linked into one IOVA range
 * @RDMARW_RW_WHY_IWARP_READ: MR: an RDMA READ on iWARP needs an MR
 * @RDMARW_RW_WHY_FORCE_MR: MR: rdma_rw_set_force_mr(true)
 * @RDMARW_RW_WHY_MAX_SGL_RD: MR: a READ of more entries than the
 *                            device's max_sgl_rd
 * @RDMARW_RW_WHY_POOL_EMPTY: SINGLE or MULTI: max_sgl_rd asked for an MR,
 *                            the QP's pool had none free (-EAGAIN)
 * @RDMARW_RW_WHY_NO_POOL: SINGLE or MULTI: max_sgl_rd asked for an MR,
 *                         the QP has no MR pool (-EOPNOTSUPP)
 * @RDMARW_RW_WHY_PI: SIG_MR: rdma_rw_ctx_signature_init()
 * @RDMARW_RW_WHY_DMA_MAP: failed: the list could not be DMA-mapped
 * @RDMARW_RW_WHY_OFFSET: failed: the offset is at or past the list's end
 * @RDMARW_RW_WHY_BVEC_ITER: failed: the iterator leaves the bio_vec array
 *                           or meets an empty bio_vec
 */
enum rdmarw_rw_why {
	RDMARW_RW_WHY_NONE,
	RDMARW_RW_WHY_ONE_ENTRY,
	RDMARW_RW_WHY_ONE_BVEC,
	RDMARW_RW_WHY_ENTRIES,
	RDMARW_RW_WHY_NO_IOVA,
	RDMARW_RW_WHY_IOMMU,
	RDMARW_RW_WHY_IWARP_READ,
	RDMARW_RW_WHY_FORCE_MR,
	RDMARW_RW_WHY_MAX_SGL_RD,
	RDMARW_RW_WHY_POOL_EMPTY,
	RDMARW_RW_WHY_NO_POOL,
	RDMARW_RW_WHY_PI,
	RDMARW_RW_WHY_DMA_MAP,
	RDMARW_RW_WHY_OFFSET,
	RDMARW_RW_WHY_BVEC_ITER,
};

/* rdmarw_rw_decision.type when no path was chosen. */
#define RDMARW_RW_TYPE_NONE 0xffU

/**
 * struct rdma_rw_reg_ctx - one memory registration of an MR context
 * @sge: the RDMA WR's only SGE: (MR iova, MR length, MR lkey)
 * @wr: the RDMA READ, READ_WITH_INV or WRITE through the MR
 * @reg_wr: the REG_MR that registers the MR before @wr
 * @inv_wr: the LOCAL_INV that retires the MR's previous registration;
 *          in the chain when @inv_wr.next is set
 * @mr: the MR, taken from the QP's pool
 * @sgt: (first registration of a bio_vec MR context only) the scatterlist
 *       built from the bio_vecs and DMA-mapped
 */
struct rdma_rw_reg_ctx {
	struct ib_sge sge;
	struct ib_rdma_wr wr;
	struct ib_reg_wr reg_wr;
	struct ib_send_wr inv_wr;
	struct ib_mr *mr;
	struct sg_table sgt;
};

/*
 * The members of struct rdma_rw_ctx's union have named types here, where
 * the kernel's are anonymous: C++ accepts no anonymous type inside an
 * anonymous union (clang++ -pedantic: "an extension").  The layout and the
 * member names (ctx->single.sge, ctx->map.wrs) are the kernel's.
 */

/**
 * struct rdmarw_rw_single - an R/W context's one SGE and WR
 * @sge: the SGE
 * @wr: the WR
 */
struct rdmarw_rw_single {
	struct ib_sge sge;
	struct ib_rdma_wr wr;
};

/**
 * struct rdmarw_rw_map - an R/W context's WRs without registration
 * @sges: the SGEs of all WRs, in order
 * @wrs: the context's WRs
 * @nr_sges: SGEs in @sges
 */
struct rdmarw_rw_map {
	struct ib_sge *sges;
	struct ib_rdma_wr *wrs;
	u32 nr_sges;
};

/**
 * struct rdmarw_rw_iova - an R/W context's IOVA range and its WR
 * @state: the IOVA range
 * @sge: the SGE covering the whole range
 * @wr: the WR
 * @mapped_len: bytes linked into the range
 */
struct rdmarw_rw_iova {
	struct dma_iova_state state;
	struct ib_sge sge;
	struct ib_rdma_wr wr;
	size_t mapped_len;
};

/**
 * struct rdma_rw_ctx - an RDMA READ/WRITE context (kernel shape)
 * @nr_ops: RDMA READ/WRITE WRs, not counting LOCAL_INV and REG_MR WRs
 * @type: enum rdma_rw_ctx_type: which member of the union is in use
 * @rdmarw_origin: enum rdmarw_rw_origin (rdmarw extension)
 * @rdmarw_why: enum rdmarw_rw_why, recorded where init decides
 *              (rdmarw extension; read it with rdmarw_rw_ctx_explain())
 * @rdmarw_error: after a failed init, the errno (positive) (rdmarw
 *                extension)
 * @rdmarw_qp: the QP the context was initialised on; NULL after a failed
 *             init (rdmarw extension)
 * @rdmarw_block: per-QP storage holding the arrays of a MULTI or MR
 *                context, NULL for SINGLE and IOVA (rdmarw extension)
 * @rdmarw_self: the context's own address, set by init: a copy of a
 *               context (which would release its MRs and storage a second
 *               time) is refused by post and destroy (rdmarw extension)
 * @rdmarw_mem: the scatterlist, bio_vec array or data scatterlist init
 *              mapped; destroy must be given the same; after a failed init
 *              the QP it was given (rdmarw extension)
 * @rdmarw_nents: the entry count init was given with @rdmarw_mem
 *                (rdmarw extension)
 * @single: RDMA_RW_SINGLE_WR: the SGE and the WR
 * @single.sge: the SGE
 * @single.wr: the WR
 * @map: RDMA_RW_MULTI_WR
 * @map.sges: the SGEs of all WRs, in order
 * @map.wrs: @nr_ops WRs
 * @map.nr_sges: SGEs in @map.sges (rdmarw extension; the kernel's
 *               rdma_rw_ctx_destroy_bvec() relies on the caller's nr_bvec)
 * @reg: RDMA_RW_MR: @nr_ops registrations; RDMA_RW_SIG_MR: one
 * @iova: RDMA_RW_IOVA
 * @iova.state: the IOVA range
 * @iova.sge: the SGE covering the whole range
 * @iova.wr: the WR
 * @iova.mapped_len: bytes linked into the range
 *
 * Callers allocate the context (it may live on the stack or in a request
 * structure) and hand it to one init and the matching destroy.
 */
struct rdma_rw_ctx {
	u32 nr_ops;
	u8 type;
	u8 rdmarw_origin;
	u8 rdmarw_why;
	u8 rdmarw_error;
	struct ib_qp *rdmarw_qp;
	struct rdmarw_rw_block *rdmarw_block;
	struct rdma_rw_ctx *rdmarw_self;
	const void *rdmarw_mem;
	u32 rdmarw_nents;
	union {
		struct rdmarw_rw_single single;
		struct rdmarw_rw_map map;
		struct rdma_rw_reg_ctx *reg;
		struct rdmarw_rw_iova iova;
	};
};

/**
 * rdma_rw_ctx_init() - initialise an RDMA READ/WRITE context
 * @ctx: the context to fill in
 * @qp: the QP the context will be posted on
 * @port_num: the port the connection is bound to (from 1)
 * @sg: the local buffer, a scatterlist (chained lists are followed)
 * @sg_cnt: entries in @sg
 * @sg_offset: bytes of @sg to skip: whole entries first, the rest inside
 *             the first entry left
 * @remote_addr: remote address to read from or write to (relative to @rkey)
 * @rkey: remote key
 * @dir: %DMA_TO_DEVICE for RDMA WRITE, %DMA_FROM_DEVICE for RDMA READ
 *
 * DMA-maps @sg, then picks the path as the kernel does: memory registration
 * when the I/O needs it (a READ on iWARP; a READ of more entries than the
 * device's max_sgl_rd; every I/O under force_mr), several RDMA WRs of up to
 * the QP's SGE limit when more than one entry is left, else one RDMA WR with
 * one SGE.  When only max_sgl_rd asked for registration and the QP's MR pool
 * is empty, the SGE paths are used instead.  Key variants are not touched
 * here: rdma_rw_ctx_wrs() does that.
 *
 * On error nothing stays DMA-mapped, taken from the MR pool or from the
 * QP's context storage.  The path taken and why (or, after a failure that
 * got past the argument checks, the path that failed and why) are recorded
 * in @ctx for rdmarw_rw_ctx_explain().
 *
 * Return: the number of Send Queue WQEs the first post of the context uses
 * (for MR contexts LOCAL_INV + REG_MR + RDMA per MR, LOCAL_INV only for MRs
 * that still need invalidation; otherwise @ctx->nr_ops), or:
 * -EINVAL for a NULL @ctx, @qp or @sg, @sg_cnt 0 or above INT_MAX, a bad
 * @port_num, a @dir other than %DMA_TO_DEVICE or %DMA_FROM_DEVICE, a list
 * shorter than @sg_cnt or that cannot be mapped, an @sg_offset at or past
 * the end of the list, a QP with no SGE for the direction, or, on the MR
 * path, entries that one MR per pages-per-MR entries cannot hold (a gap, an
 * entry after the first that neither starts a page after a page-aligned end
 * nor continues the previous one, more pages than the MR's page list);
 * -EAGAIN when registration is required (iWARP READ, force_mr) and the
 * QP's MR pool is empty for now (an MR comes back when a context is
 * destroyed);
 * -EOPNOTSUPP when registration is required and the QP has no MR pool at
 * all, so waiting would never help: rdma_rw_set_force_mr(true) after the
 * QP was created, or a QP created with max_rdma_ctxs 0 (rdmarw extension;
 * the kernel answers -EAGAIN forever);
 * -ENOMEM when context storage cannot be allocated.
 */
int rdma_rw_ctx_init(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
		     struct scatterlist *sg, u32 sg_cnt, u32 sg_offset,
		     u64 remote_addr, u32 rkey, enum dma_data_direction dir);

/**
 * rdma_rw_ctx_init_bvec() - initialise a context from an array of bio_vecs
 * @ctx: the context to fill in
 * @qp: the QP the context will be posted on
 * @port_num: the port the connection is bound to (from 1)
 * @bvecs: the local buffer
 * @nr_bvec: entries in @bvecs; @iter must stay within them
 * @iter: where in @bvecs the transfer starts and how many bytes it moves
 *        (passed by value; the caller's iterator is not advanced)
 * @remote_addr: remote address to read from or write to (relative to @rkey)
 * @rkey: remote key
 * @dir: %DMA_TO_DEVICE for RDMA WRITE, %DMA_FROM_DEVICE for RDMA READ
 *
 * Paths, in the kernel's order: a READ on iWARP, or any I/O under
 * force_mr, registers memory through a scatterlist built from the bio_vecs;
 * a transfer within one bio_vec maps it alone (one WR, one SGE); otherwise
 * the bio_vecs are linked into one contiguous IOVA range (one WR, one SGE)
 * when the device has an IOMMU, and on devices with virtual DMA (no IOVA
 * API) each bio_vec becomes an SGE of RDMA WRs of up to the QP's SGE limit.
 * Release the context with rdma_rw_ctx_destroy_bvec() only.
 *
 * On error nothing stays DMA-mapped, linked, taken from the MR pool or from
 * the QP's context storage.
 *
 * Return: the number of Send Queue WQEs the first post of the context uses,
 * or: -EINVAL for a NULL @ctx, @qp or @bvecs, @nr_bvec 0, @iter.bi_size 0,
 * an @iter that runs past @nr_bvec entries or meets an empty bio_vec, a bad
 * @port_num or @dir, a QP with no SGE for the direction, or, on the MR path,
 * a built scatterlist that cannot be DMA-mapped or bio_vecs that the MR page
 * rules cannot register (as for rdma_rw_ctx_init()); -EAGAIN when
 * registration is required and the QP's MR pool is empty; -ENOMEM when
 * mapping a bio_vec or allocating context storage fails; the IOMMU's error
 * (-EINVAL for a bio_vec whose in-page offset does not match its place in
 * the range, -ENOMEM) when linking into the IOVA range fails, which is
 * final, as in the kernel (nothing is left linked).
 */
int rdma_rw_ctx_init_bvec(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			  u32 port_num, const struct bio_vec *bvecs,
			  u32 nr_bvec, struct bvec_iter iter, u64 remote_addr,
			  u32 rkey, enum dma_data_direction dir);

/**
 * rdma_rw_ctx_wrs() - the chain of WRs for a context
 * @ctx: an initialised context
 * @qp: the QP it was initialised on
 * @port_num: the port the connection is bound to
 * @cqe: completion entry for the last RDMA WR (when @chain_wr is NULL)
 * @chain_wr: a WR (chain) to append after the last RDMA WR, or NULL
 *
 * Returns the RDMA READ/WRITE WRs of @ctx and the memory-registration WRs
 * they need: for MR contexts, per MR, a LOCAL_INV of the MR's current key
 * if it still needs invalidation, a REG_MR of the next key variant (the
 * variant is bumped now, on every call, never at init; the REG_MR key and
 * the SGE lkey follow it), and the RDMA WR; on iWARP a READ is
 * RDMA_READ_WITH_INV of the key registered in this very chain (the kernel
 * names the previous variant there).  If @chain_wr is set it follows the
 * last RDMA WR and nothing in the chain is signaled (@cqe is ignored);
 * otherwise the last RDMA WR carries @cqe and %IB_SEND_SIGNALED so that the
 * caller gets exactly one completion, through @cqe->done.
 *
 * The chain is rebuilt on every call, so one context may be posted many
 * times (after each previous post has completed).  The caller must post the
 * chain it gets: the MRs' key and invalidation state already assume it.
 *
 * Return: the first WR; NULL for a NULL @ctx or @qp, a context that is not
 * initialised or belongs to another QP, a bad @port_num, or neither @cqe
 * nor @chain_wr (the completion would be lost).
 */
struct ib_send_wr *rdma_rw_ctx_wrs(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
				   u32 port_num, struct ib_cqe *cqe,
				   struct ib_send_wr *chain_wr);

/**
 * rdma_rw_ctx_post() - post a context's WRs
 * @ctx: an initialised context
 * @qp: the QP it was initialised on
 * @port_num: the port the connection is bound to
 * @cqe: completion entry for the last RDMA WR (when @chain_wr is NULL)
 * @chain_wr: a WR (chain) to append after the last RDMA WR, or NULL
 *
 * rdma_rw_ctx_wrs() followed by ib_post_send().  If the post fails, the
 * MRs whose REG_MR was not queued get their key variant and invalidation
 * state back (rdmarw extension), so that the context can be destroyed and
 * its MRs reused without a stale key.
 *
 * A post that fails part-way (ib_post_send() stopped after some WRs of the
 * chain were queued) moves the QP to ERR before it returns (rdmarw
 * extension): the queued WRs flush instead of running, so the caller may
 * destroy the context at once and reuse its buffer, with no fence or
 * drain.  On the software device nothing queued touches memory or MR state
 * once this returns; on hardware the flush happens as the device gets to
 * it, and the context's registrations are retired when it is destroyed
 * (ib_mr_pool_put()).  The connection is lost, as with any completion
 * error.  A post refused at the first WR queues nothing and leaves the QP
 * as it was, and so does one whose queued part is only LOCAL_INVs, which
 * can only take access away (an integrity REG_MR refused after its
 * LOCAL_INV, as mlx5 refuses one whose MR status was not checked).
 * docs/reliability.md has the reasoning.
 *
 * Return: 0; -EINVAL for a NULL @ctx or @qp, a context that is not
 * initialised or belongs to another QP, a bad @port_num, or neither @cqe
 * nor @chain_wr; otherwise the error of ib_post_send() (-ENOMEM when the
 * Send Queue is full, -EINVAL for a QP that is not ready to send).
 */
int rdma_rw_ctx_post(struct rdma_rw_ctx *ctx, struct ib_qp *qp, u32 port_num,
		     struct ib_cqe *cqe, struct ib_send_wr *chain_wr);

/**
 * struct rdmarw_rw_decision - what an init decided for a context
 * @origin: enum rdmarw_rw_origin: which init built it, or
 *          %RDMARW_RW_ORIGIN_FAILED
 * @type: enum rdma_rw_ctx_type: the path taken (after a failure: the path
 *        that failed), or %RDMARW_RW_TYPE_NONE when none was chosen
 * @why: enum rdmarw_rw_why: why that path (or why it failed)
 * @error: 0, or the negative errno the failed init returned
 * @nr_ops: RDMA READ/WRITE WRs (rdma_rw_ctx.nr_ops)
 * @nr_mrs: MRs the context registers (MR: one per RDMA WR; SIG_MR: one)
 * @nr_wqes: Send Queue WQEs of the chain rdma_rw_ctx_wrs() builds next:
 *           the RDMA WRs, a REG_MR per MR and a LOCAL_INV per MR that
 *           still holds a registration (the init's return value before the
 *           first post)
 * @nr_sges: SGEs of all the RDMA WRs
 * @max_sge: SGEs per RDMA WR on the QP for the context's direction
 * @pages_per_mr: pages one MR of the QP's pool maps (MR and SIG_MR), else 0
 * @bad_entry: after an MR path that failed with -EINVAL: the first entry,
 *             counted from the one the offset starts in, that the MRs
 *             could not map (the MR page-list rules); otherwise UINT32_MAX
 * @length: bytes the RDMA WRs move
 */
struct rdmarw_rw_decision {
	u8 origin;
	u8 type;
	u8 why;
	int error;
	u32 nr_ops;
	u32 nr_mrs;
	u32 nr_wqes;
	u32 nr_sges;
	u32 max_sge;
	u32 pages_per_mr;
	u32 bad_entry;
	u64 length;
};

/**
 * rdmarw_rw_ctx_explain() - the decision an init made for a context
 * @ctx: a context from rdma_rw_ctx_init(), rdma_rw_ctx_init_bvec() or
 *       rdma_rw_ctx_signature_init(), not yet destroyed, or one whose init
 *       failed after its argument checks
 * @out: filled in
 *
 * Reports what the init recorded where it chose the path (rdmarw
 * extension; the kernel has no such call): the path, the rule that chose
 * it, and the MRs, WRs and WQEs of the chain.  Nothing is recomputed here:
 * the path and the reason are the init's, the counts are read from the
 * WRs and registrations it built and the MRs' state now.  The context is
 * not changed.  A context whose init failed once its QP, port and
 * direction were accepted reports the path that failed, the reason and
 * the error; post and destroy refuse such a context.
 *
 * Return: 0; -EINVAL for a NULL @ctx or @out, or a context that is not
 * initialised (never, or its init refused its arguments), destroyed, or a
 * copy.
 */
int rdmarw_rw_ctx_explain(const struct rdma_rw_ctx *ctx,
			  struct rdmarw_rw_decision *out);

/* Bytes that hold every text rdmarw_rw_ctx_reason() writes, with its NUL. */
#define RDMARW_RW_REASON_LEN 192

/**
 * rdmarw_rw_ctx_reason() - the decision an init made for a context, in words
 * @ctx: as for rdmarw_rw_ctx_explain()
 * @buf: where the text goes, NUL-terminated
 * @size: bytes at @buf; %RDMARW_RW_REASON_LEN always suffices
 *
 * Words the decision rdmarw_rw_ctx_explain() reports, with the device and
 * QP limits that made it (rdmarw extension; tools print it, as
 * rdmarw-chain does): "one entry", "9 entries: up to 30 SGEs per READ",
 * "iWARP READ needs MR: 1 MR of up to 256 pages", "sg_offset at or past
 * the end of the list"...  The text is one line and names the rule, not
 * the path or the errno, which the decision carries.  No rule is
 * evaluated a second time: the path and the reason are the init's, the
 * limits are the QP's and the device's now.
 *
 * Return: the text's length (without the NUL); -EINVAL as for
 * rdmarw_rw_ctx_explain(), or for a NULL @buf; -ENOSPC when @size is too
 * small, with as much of the text as fits in @buf (never a silent
 * truncation).
 */
int rdmarw_rw_ctx_reason(const struct rdma_rw_ctx *ctx, char *buf, size_t size);

/**
 * rdma_rw_ctx_destroy() - release a context from rdma_rw_ctx_init()
 * @ctx: the context; call once its WRs have completed
 * @qp: the QP it was initialised on
 * @port_num: the port the connection is bound to
 * @sg: the scatterlist given to rdma_rw_ctx_init()
 * @sg_cnt: the @sg_cnt given to rdma_rw_ctx_init()
 * @dir: the direction given to rdma_rw_ctx_init()
 *
 * Returns the MRs to the QP's pool, the arrays to the QP's storage, and
 * DMA-unmaps @sg.  Every MR the context registered is retired on the way
 * (ib_mr_pool_put()): when this returns, none of its keys grants any
 * access, whatever happened to the chain (a READ_WITH_INV that failed or
 * was flushed leaves the kernel's MR registered until its next use; rdmarw
 * closes that window).  A context from rdma_rw_ctx_init_bvec() or the
 * signature API, one that is not initialised (or already destroyed), one of
 * another QP, a copy of a context (contexts are not movable), an @sg or
 * @sg_cnt other than rdma_rw_ctx_init() was given, and NULL arguments are
 * caller bugs: a warning is printed once and nothing is released or
 * unmapped.  The context is left uninitialised.
 */
void rdma_rw_ctx_destroy(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			 u32 port_num, struct scatterlist *sg, u32 sg_cnt,
			 enum dma_data_direction dir);

/**
 * rdma_rw_ctx_destroy_bvec() - release a context from rdma_rw_ctx_init_bvec()
 * @ctx: the context; call once its WRs have completed
 * @qp: the QP it was initialised on
 * @port_num: the port the connection is bound to (unused, as in the kernel)
 * @bvecs: the bio_vecs given to init (unused, as in the kernel)
 * @nr_bvec: the @nr_bvec given to init (unused: the context knows what it
 *           mapped)
 * @dir: the direction given to rdma_rw_ctx_init_bvec()
 *
 * Returns the MRs to the QP's pool, the arrays to the QP's storage, and
 * unmaps or unlinks what init mapped; the MRs are retired as by
 * rdma_rw_ctx_destroy().  A context from rdma_rw_ctx_init() or the
 * signature API, one that is not initialised (or already destroyed), one
 * of another QP, a copy, @bvecs or @nr_bvec other than init was given, and
 * NULL arguments are caller bugs: a warning is printed once and nothing is
 * released.  The context is left uninitialised.
 */
void rdma_rw_ctx_destroy_bvec(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			      u32 port_num, const struct bio_vec *bvecs,
			      u32 nr_bvec, enum dma_data_direction dir);

/**
 * rdma_rw_ctx_signature_init() - initialise a context with signature offload
 * @ctx: the context to fill in
 * @qp: the QP the context will be posted on; its signature MR pool exists
 *      when it was created with IB_QP_CREATE_INTEGRITY_EN and
 *      cap.max_rdma_ctxs
 * @port_num: the port the connection is bound to (from 1)
 * @sg: the local data, a scatterlist
 * @sg_cnt: entries in @sg
 * @prot_sg: the local protection information (8 bytes per interval), or
 *           NULL when @prot_sg_cnt is 0
 * @prot_sg_cnt: entries in @prot_sg
 * @sig_attrs: what the device does to the data (copied into the MR)
 * @remote_addr: remote address to read from or write to (relative to @rkey)
 * @rkey: remote key
 * @dir: %DMA_TO_DEVICE for RDMA WRITE, %DMA_FROM_DEVICE for RDMA READ
 *
 * As the kernel: everything goes through one integrity MR taken from the
 * QP's signature pool.  Both lists are DMA-mapped and mapped into the MR
 * with ib_map_mr_sg_pi() (4 KiB pages); the chain is a LOCAL_INV if the MR
 * still needs one, an IB_WR_REG_MR_INTEGRITY with access LOCAL_WRITE (plus
 * REMOTE_WRITE on iWARP), and one RDMA READ or WRITE (never
 * READ_WITH_INV) whose only SGE is the MR's iova and length, less the
 * protection bytes when the wire domain carries no PI.  Key variants are
 * bumped by rdma_rw_ctx_wrs(), as for MR contexts.  After the completion,
 * read the result with ib_check_mr_status() on @ctx->reg->mr.
 *
 * On error nothing stays DMA-mapped, taken from the pool or from the QP's
 * context storage.
 *
 * Return: the number of Send Queue WQEs the first post uses: 3 when the MR
 * needs a LOCAL_INV, else 2; or -EINVAL for a NULL @ctx, @qp, @sg or
 * @sig_attrs, @sg_cnt 0, counts above INT_MAX, @prot_sg NULL with
 * entries, no protection list (@prot_sg_cnt 0) while the memory or the
 * wire domain carries PI (rdmarw: the kernel accepts it and the RDMA WR
 * then fails with LOC_PROT_ERR, which moves the QP to ERR; nothing is
 * mapped or taken), a bad @port_num or @dir, @sg_cnt or @prot_sg_cnt above the
 * pages per MR (min(max_pi_fast_reg_page_list_len, 256) on an integrity
 * QP), a list that cannot be DMA-mapped, or an MR length that does not
 * fit an SGE; -EAGAIN when the signature pool is empty (no fallback);
 * -ENOMEM when context storage cannot be allocated; the error of
 * ib_map_mr_sg_pi() (-ENOMEM when the entries do not fit the MR).
 */
int rdma_rw_ctx_signature_init(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			       u32 port_num, struct scatterlist *sg, u32 sg_cnt,
			       struct scatterlist *prot_sg, u32 prot_sg_cnt,
			       struct ib_sig_attrs *sig_attrs, u64 remote_addr,
			       u32 rkey, enum dma_data_direction dir);

/**
 * rdma_rw_ctx_destroy_signature() - release a context of
 * rdma_rw_ctx_signature_init()
 * @ctx: the context; call once its WRs have completed
 * @qp: the QP it was initialised on
 * @port_num: the port the connection is bound to
 * @sg: the scatterlist given to init
 * @sg_cnt: the @sg_cnt given to init
 * @prot_sg: the protection scatterlist given to init
 * @prot_sg_cnt: the @prot_sg_cnt given to init
 * @dir: the direction given to init
 *
 * Returns the MR to the QP's signature pool and the registration to the
 * QP's storage, and DMA-unmaps both lists.  The MR goes back as it is: as
 * on mlx5, an integrity MR can be registered again only after its status
 * was read, so call ib_check_mr_status(@ctx->reg->mr,
 * IB_MR_CHECK_SIG_STATUS, ...) once the WRs have completed and before
 * this function (which is also where a ULP learns about PI errors).  If
 * it was not called, the next context that gets this MR fails
 * rdma_rw_ctx_post() with -EINVAL, nothing queued and the context still
 * usable: ib_check_mr_status() on its @ctx->reg->mr, then post again.  The
 * same ULP code then behaves the same on mlx5 hardware.  A context of another init, one
 * that is not initialised (or already destroyed), one of another QP, and
 * NULL arguments are caller bugs: a warning is printed once and nothing is
 * released.  The context is left uninitialised.
 */
void rdma_rw_ctx_destroy_signature(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
				   u32 port_num, struct scatterlist *sg,
				   u32 sg_cnt, struct scatterlist *prot_sg,
				   u32 prot_sg_cnt,
				   enum dma_data_direction dir);

/**
 * rdma_rw_mr_factor() - how many MRs (or READ WRs) a transfer needs
 * @device: the device
 * @port_num: port, from 1
 * @maxpages: pages of the largest transfer
 *
 * When the R/W API can use MRs on this port: ceil(@maxpages / pages per MR)
 * with pages per MR = min(max_fast_reg_page_list_len, 256); otherwise
 * ceil(@maxpages / max_sge_rd).
 *
 * Return: the factor; 0 for a NULL device, a bad port or @maxpages 0.
 */
unsigned int rdma_rw_mr_factor(struct ib_device *device, u32 port_num,
			       unsigned int maxpages);

/**
 * rdma_rw_max_send_wr() - Send Queue WRs needed for R/W contexts
 * @dev: the device
 * @port_num: port, from 1
 * @max_rdma_ctxs: contexts in flight at once
 * @create_flags: the QP's create flags
 *
 * Each context needs one WR, or three (LOCAL_INV, REG_MR, RDMA) when the
 * QP has IB_QP_CREATE_INTEGRITY_EN or the R/W API can use MRs on the port.
 * ib_create_qp() accepts at most max_qp_wr divided by the WRs of one
 * context as cap.max_rdma_ctxs.
 *
 * Return: factor × @max_rdma_ctxs, saturated at UINT_MAX; 0 for a NULL
 * device or a bad port.
 */
unsigned int rdma_rw_max_send_wr(struct ib_device *dev, u32 port_num,
				 unsigned int max_rdma_ctxs, u32 create_flags);

/**
 * rdma_rw_init_qp() - grow a QP's Send Queue for its R/W contexts
 * @dev: the device
 * @attr: the QP's creation attributes; cap.max_send_wr grows by
 *        rdma_rw_max_send_wr() for cap.max_rdma_ctxs, capped at max_qp_wr
 *
 * ib_create_qp() calls it when cap.max_rdma_ctxs is set.  NULL arguments
 * do nothing.
 */
void rdma_rw_init_qp(struct ib_device *dev, struct ib_qp_init_attr *attr);

/**
 * rdma_rw_init_mrs() - set up a QP's MR pools for R/W contexts
 * @qp: the QP
 * @attr: its creation attributes
 *
 * With IB_QP_CREATE_INTEGRITY_EN: cap.max_rdma_ctxs integrity MRs in
 * qp->sig_mrs and as many regular MRs in qp->rdma_mrs, page lists of
 * min(max_pi_fast_reg_page_list_len, 256).  Otherwise, when the API can use
 * MRs on the port: cap.max_rdma_ctxs regular MRs with page lists of
 * min(max_fast_reg_page_list_len, 256).  Also sets up the QP's context
 * storage (rdmarw extension) with cap.max_rdma_ctxs blocks, each large
 * enough for one registration or one RDMA WR of the QP's SGE limit.
 * ib_create_qp() calls it when cap.max_rdma_ctxs is set.
 *
 * Return: 0; -EINVAL for NULL arguments or a cap.max_rdma_ctxs above
 * what the device can queue (max_qp_wr / rdma_rw_max_send_wr() of one
 * context; rdmarw extension, nothing allocated); the MR allocation error,
 * or -ENOMEM for the storage (nothing stays allocated).
 */
int rdma_rw_init_mrs(struct ib_qp *qp, struct ib_qp_init_attr *attr);

/**
 * rdma_rw_cleanup_mrs() - free a QP's R/W MR pools and context storage
 * @qp: the QP; NULL does nothing
 *
 * ib_destroy_qp() calls it.  While contexts still hold blocks of the
 * storage or MRs of the pools, a warning is printed once and nothing is
 * freed (ib_destroy_qp() returns -EBUSY then): destroy them first.
 */
void rdma_rw_cleanup_mrs(struct ib_qp *qp);

/**
 * rdma_rw_set_force_mr() - force MR use for every R/W context
 * @force: true to register memory for every transfer (both directions), as
 *         the kernel's force_mr module parameter of ib_core
 *         (ib_core.force_mr; rw.c is part of ib_core) does
 *
 * Affects QPs created afterwards (their MR pools) and every context
 * initialised afterwards.
 *
 * Environment: RDMARW_FORCE_MR set to 1, y, Y or true when the library is
 * loaded forces MR use until this call changes it.
 */
void rdma_rw_set_force_mr(bool force);

/**
 * rdma_rw_get_force_mr() - is MR use forced
 *
 * Return: the current setting.
 *
 * Environment: RDMARW_FORCE_MR, as for rdma_rw_set_force_mr().
 */
bool rdma_rw_get_force_mr(void);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_RW_H */

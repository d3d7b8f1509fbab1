/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An independent model of the kernel's R/W chain rules, for tests: given a
 * device, a QP and a buffer, it says which path rdma_rw_ctx_init() takes,
 * what it returns, and every field of every WR rdma_rw_ctx_wrs() must give.
 * Written from rw-semantics and the kernel's rules, not from src/rw.
 */
#ifndef RDMARW_TESTS_RW_MODEL_H
#define RDMARW_TESTS_RW_MODEL_H

#include <rdmarw/rw.h>

#define RW_MODEL_MAX_WRS 4096

/* One local piece of the transfer: a mapped entry or a bio_vec segment. */
struct rw_model_ent {
	u64 addr;
	u32 len;
};

/* The state of one MR of the QP's pool, as the model needs it. */
struct rw_model_mr {
	struct ib_mr *mr;
	u32 key; /* its lkey before rdma_rw_ctx_wrs() */
	bool need_inval; /* before rdma_rw_ctx_wrs() */
};

/**
 * struct rw_model_in - what decides the chain
 * @ents: the local pieces (scatterlist entries, or bvec segments)
 * @nents: how many
 * @offset: sg_offset (scatterlist input only)
 * @bvec: the input is a bio_vec array (rdma_rw_ctx_init_bvec)
 * @dir: DMA direction
 * @remote_addr: remote address
 * @rkey: remote key
 * @force_mr: the force_mr switch
 * @pool: the MRs of the QP's pool in the order they will be taken
 * @pool_len: MRs in @pool
 * @siw_pages: the device's MR page list holds one element per entry
 *             (siw: entries, not pages, are bounded); otherwise pages are
 *             (rxe).  The page rules' cut at gaps applies to both.
 */
struct rw_model_in {
	const struct rw_model_ent *ents;
	u32 nents;
	u32 offset;
	bool bvec;
	enum dma_data_direction dir;
	u64 remote_addr;
	u32 rkey;
	bool force_mr;
	const struct rw_model_mr *pool;
	u32 pool_len;
	bool siw_pages;
};

/* One expected WR; fields that do not apply to the opcode are 0. */
struct rw_model_wr {
	enum ib_wr_opcode opcode;
	int num_sge;
	struct ib_sge sge[64];
	u64 remote_addr;
	u32 rkey;
	struct ib_mr *mr;
	u32 key;
	int access;
	u32 invalidate_rkey;
	int send_flags;
	struct ib_cqe *cqe;
};

/**
 * struct rw_model_out - the expected outcome
 * @ret: rdma_rw_ctx_init()'s return: WQEs, or a negative errno
 * @type: the context's type (when @ret >= 0)
 * @nr_ops: RDMA WRs
 * @nr_wrs: WRs in @wrs (the chain rdma_rw_ctx_wrs() returns)
 * @wrs: the chain, first to last; the caller frees it with rw_model_free()
 * @mrs_taken: MRs the context holds
 * @total: bytes moved
 * @iova: the IOVA path: the SGE address is the IOMMU's, not predictable
 */
struct rw_model_out {
	int ret;
	enum rdma_rw_ctx_type type;
	u32 nr_ops;
	u32 nr_wrs;
	struct rw_model_wr *wrs;
	u32 mrs_taken;
	u64 total;
	bool iova;
};

/**
 * rw_model_chain() - compute the expected chain
 * @qp: the QP (its device attributes, SGE limits, PD key, integrity flag)
 * @port_num: the port
 * @in: the transfer
 * @cqe: the cqe passed to rdma_rw_ctx_wrs(), or NULL
 * @chain_wr: the chain_wr passed to rdma_rw_ctx_wrs(), or NULL
 * @out: filled in; free with rw_model_free()
 */
void rw_model_chain(struct ib_qp *qp, u32 port_num,
		    const struct rw_model_in *in, struct ib_cqe *cqe,
		    struct ib_send_wr *chain_wr, struct rw_model_out *out);

void rw_model_free(struct rw_model_out *out);

/**
 * rw_model_check_chain() - compare a real chain with the model's
 * @first: what rdma_rw_ctx_wrs() returned
 * @out: the model
 * @chain_wr: the WR that must follow the last RDMA WR (or NULL)
 * @why: set to a description of the first difference
 * @why_len: room in @why
 *
 * Return: true when every field of every WR matches.
 */
bool rw_model_check_chain(const struct ib_send_wr *first,
			  const struct rw_model_out *out,
			  const struct ib_send_wr *chain_wr, char *why,
			  size_t why_len);

/**
 * rw_model_pool_snapshot() - the QP's regular MR pool, in taking order
 * @qp: the QP
 * @pool: filled in (room for @max)
 * @max: room
 *
 * Return: MRs in the pool (at most @max recorded).
 */
u32 rw_model_pool_snapshot(struct ib_qp *qp, struct rw_model_mr *pool, u32 max);

#endif /* RDMARW_TESTS_RW_MODEL_H */

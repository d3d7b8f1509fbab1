// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_rw_ctx_signature_init() and rdma_rw_ctx_destroy_signature() with
 * the kernel's rules: the signature pool that rdma_rw_init_mrs() builds for
 * an integrity QP, the exact chain ([LOCAL_INV] -> REG_MR_INTEGRITY -> one
 * RDMA READ or WRITE, its keys, access, lengths, links and flags; never
 * READ_WITH_INV, REMOTE_WRITE on iWARP), the return values 2 and 3, every
 * refusal with nothing left mapped or taken, -EAGAIN on an empty pool,
 * destroy misuse, and the attribute combinations that nvmet-rdma
 * (nvmet_rdma_set_sig_attrs) and isert (isert_set_sig_attrs) build, end to
 * end through the software device, also against a host integrity MR.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/sig_env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ALL_CHECKS \
	(IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG | IB_SIG_CHECK_REFTAG)

static struct ib_sig_attrs insert_attrs(u32 iv)
{
	struct ib_sig_attrs a = { .check_mask = ALL_CHECKS };

	a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a.wire.sig.dif = sig_dif(iv, 0, 0);
	return a;
}

struct done {
	struct ib_cqe cqe;
	int count;
	enum ib_wc_status status;
};

static void done_fn(struct ib_cq *cq, struct ib_wc *wc)
{
	struct done *d = container_of(wc->wr_cqe, struct done, cqe);

	d->count++;
	d->status = wc->status;
}

static void test_pools(void **state)
{
	struct sig_env e;
	struct ib_mr *mr, *tmp;
	int n = 0;

	sig_env_init(&e, &(struct sig_env_cfg){ .max_rdma_ctxs = 3 });
	/* rdma_rw_init_mrs(): as many integrity MRs as regular ones. */
	assert_int_equal(ib_mr_pool_count(e.qp[0], &e.qp[0]->sig_mrs), 3);
	assert_int_equal(ib_mr_pool_count(e.qp[0], &e.qp[0]->rdma_mrs), 3);
	list_for_each_entry_safe(mr, tmp, &e.qp[0]->sig_mrs, qp_entry) {
		assert_int_equal(mr->type, IB_MR_TYPE_INTEGRITY);
		assert_non_null(mr->sig_attrs);
		/* min(max_pi_fast_reg_page_list_len, 256) for both lists */
		assert_int_equal(mr->max_num_sg, 256);
		assert_int_equal(mr->max_num_meta_sg, 256);
		n++;
	}
	assert_int_equal(n, 3);
	/* rdma_rw_init_qp(): 3 WRs per context with integrity. */
	assert_int_equal(e.qp[0]->cap.max_send_wr, 32 + 3 * 3);
	assert_true(e.qp[0]->integrity_en);
	/* The host QP has no pools. */
	assert_int_equal(ib_mr_pool_count(e.qp[1], &e.qp[1]->sig_mrs), 0);
	sig_env_fini(&e);

	sig_env_init(&e, &(struct sig_env_cfg){ .no_integrity = true });
	assert_int_equal(ib_mr_pool_count(e.qp[0], &e.qp[0]->sig_mrs), 0);
	assert_false(e.qp[0]->integrity_en);
	sig_env_fini(&e);
}

/* Check the REG_MR_INTEGRITY WR @wr of @mr. */
static void assert_reg(const struct ib_send_wr *wr, struct ib_mr *mr,
		       int access)
{
	assert_int_equal(wr->opcode, IB_WR_REG_MR_INTEGRITY);
	assert_int_equal(wr->num_sge, 0);
	assert_int_equal(wr->send_flags, 0);
	assert_null(wr->wr_cqe);
	assert_ptr_equal(reg_wr(wr)->mr, mr);
	assert_int_equal(reg_wr(wr)->key, mr->lkey);
	assert_int_equal(reg_wr(wr)->access, access);
}

static void test_chain_shape(void **state)
{
	struct ib_sig_attrs a = insert_attrs(512);
	struct done d = { .cqe.done = done_fn };
	struct scatterlist sg[2], psg;
	struct ib_send_wr chain = { .opcode = IB_WR_SEND };
	const struct ib_send_wr *wr, *rd;
	struct rdma_rw_ctx ctx;
	struct sig_env e;
	struct ib_mr *mr;
	u32 k0, k1;

	sig_env_init(&e, &(struct sig_env_cfg){ .max_rdma_ctxs = 1 });
	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], e.local, 4096);
	sg_set_buf(&sg[1], e.local + 4096, 1024);
	sg_init_one(&psg, e.local + 65536, 80);

	/* A fresh MR: REG_MR_INTEGRITY, RDMA WRITE. */
	assert_int_equal(
		rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, sg, 2, &psg, 1, &a,
					   sig_env_raddr(&e, 64),
					   e.remote_mr->rkey, DMA_TO_DEVICE),
		2);
	assert_int_equal(ctx.type, RDMA_RW_SIG_MR);
	assert_int_equal(ctx.nr_ops, 1);
	assert_int_equal(e.qp[0]->mrs_used, 1);
	mr = ctx.reg->mr;
	assert_int_equal(mr->type, IB_MR_TYPE_INTEGRITY);
	/* The attributes were copied in; meta_length is the device's. */
	assert_int_equal(mr->sig_attrs->wire.sig_type, IB_SIG_TYPE_T10_DIF);
	assert_int_equal(mr->sig_attrs->meta_length, 80);
	assert_int_equal(mr->iova, 0);
	assert_int_equal(mr->length, 5120 + 80);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 3);
	k0 = mr->lkey;
	wr = rdma_rw_ctx_wrs(&ctx, e.qp[0], 1, &d.cqe, NULL);
	assert_non_null(wr);
	k1 = mr->lkey;
	assert_int_equal(k1, ib_inc_rkey(k0));
	assert_true(mr->need_inval);
	assert_reg(wr, mr, IB_ACCESS_LOCAL_WRITE);
	rd = wr->next;
	assert_int_equal(rd->opcode, IB_WR_RDMA_WRITE);
	assert_int_equal(rd->num_sge, 1);
	assert_int_equal(rd->sg_list[0].addr, 0);
	/* The wire carries PI: data + PI bytes. */
	assert_int_equal(rd->sg_list[0].length, 5120 + 80);
	assert_int_equal(rd->sg_list[0].lkey, k1);
	assert_int_equal(rdma_wr(rd)->remote_addr, sig_env_raddr(&e, 64));
	assert_int_equal(rdma_wr(rd)->rkey, e.remote_mr->rkey);
	assert_int_equal(rd->send_flags, IB_SEND_SIGNALED);
	assert_ptr_equal(rd->wr_cqe, &d.cqe);
	assert_null(rd->next);
	/* Post this very chain. */
	assert_int_equal(ib_post_send(e.qp[0], wr, NULL), 0);
	ib_process_cq_direct(e.cq[0], -1);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
	ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS,
			   &(struct ib_mr_status){ 0 });
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, sg, 2, &psg, 1,
				      DMA_TO_DEVICE);
	assert_int_equal(e.qp[0]->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 0);

	/* The same MR again (pool of one), READ, wire without PI: LOCAL_INV
	 * of the registered key, REG of the next, RDMA READ of the data;
	 * with a chain_wr appended and nothing signaled. */
	a.mem = a.wire;
	a.wire.sig_type = IB_SIG_TYPE_NONE;
	assert_int_equal(
		rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, sg, 2, &psg, 1, &a,
					   sig_env_raddr(&e, 0),
					   e.remote_mr->rkey, DMA_FROM_DEVICE),
		3);
	assert_ptr_equal(ctx.reg->mr, mr);
	wr = rdma_rw_ctx_wrs(&ctx, e.qp[0], 1, NULL, &chain);
	assert_int_equal(wr->opcode, IB_WR_LOCAL_INV);
	assert_int_equal(wr->ex.invalidate_rkey, k1);
	assert_int_equal(wr->send_flags, 0);
	assert_reg(wr->next, mr, IB_ACCESS_LOCAL_WRITE);
	assert_int_equal(reg_wr(wr->next)->key, ib_inc_rkey(k1));
	rd = wr->next->next;
	assert_int_equal(rd->opcode, IB_WR_RDMA_READ);
	assert_int_equal(rd->sg_list[0].length, 5120);
	assert_int_equal(rd->sg_list[0].lkey, ib_inc_rkey(k1));
	assert_ptr_equal(rd->next, &chain);
	assert_int_equal(rd->send_flags & IB_SEND_SIGNALED, 0);
	assert_null(rd->wr_cqe);
	/* Initialised, never posted: destroy is enough. */
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, sg, 2, &psg, 1,
				      DMA_FROM_DEVICE);
	sig_env_fini(&e);
}

/* On iWARP: REMOTE_WRITE in the REG, and a plain RDMA READ. */
static void test_chain_iwarp(void **state)
{
	struct ib_sig_attrs a = insert_attrs(4096);
	struct done d = { .cqe.done = done_fn };
	struct scatterlist sg, psg;
	const struct ib_send_wr *wr;
	struct ib_mr_status st;
	struct rdma_rw_ctx ctx;
	struct soft_profile p;
	struct sig_env e;

	assert_int_equal(soft_profile_get("siw", &p), 0);
	p.attrs.kernel_cap_flags |= IBK_INTEGRITY_HANDOVER;
	p.attrs.max_pi_fast_reg_page_list_len = 128;
	sig_env_init(&e, &(struct sig_env_cfg){ .custom = &p });
	sg_init_one(&sg, e.local, 8192);
	sg_init_one(&psg, e.local + 65536, 16);
	assert_int_equal(
		rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, &sg, 1, &psg, 1,
					   &a, sig_env_raddr(&e, 0),
					   e.remote_mr->rkey, DMA_FROM_DEVICE),
		2);
	assert_int_equal(ctx.reg->mr->max_num_sg, 128);
	wr = rdma_rw_ctx_wrs(&ctx, e.qp[0], 1, &d.cqe, NULL);
	assert_reg(wr, ctx.reg->mr,
		   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	assert_int_equal(wr->next->opcode, IB_WR_RDMA_READ);
	assert_int_equal(wr->next->sg_list[0].length, 8192 + 16);
	/* And it runs: the READ of the zeroed wire image succeeds, and the
	 * reference tag of block 1 (0, not 1) is reported. */
	assert_int_equal(ib_post_send(e.qp[0], wr, NULL), 0);
	ib_process_cq_direct(e.cq[0], -1);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
	assert_int_equal(
		ib_check_mr_status(ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, &st),
		0);
	assert_int_equal(st.fail_status, IB_MR_CHECK_SIG_STATUS);
	assert_int_equal(st.sig_err.err_type, IB_SIG_BAD_REFTAG);
	assert_int_equal(st.sig_err.expected, 1);
	assert_int_equal(st.sig_err.actual, 0);
	assert_int_equal(st.sig_err.sig_err_offset, 4104);
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, &sg, 1, &psg, 1,
				      DMA_FROM_DEVICE);
	sig_env_fini(&e);
}

/* Refused, and nothing left mapped or taken. */
static void refused(struct sig_env *e, int ret, int want)
{
	assert_int_equal(ret, want);
	assert_int_equal(e->qp[0]->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e->dev[0]), 0);
}

static void test_bad_input(void **state)
{
	struct ib_sig_attrs a = insert_attrs(512);
	struct scatterlist *big, sg[2], psg, z[2];
	struct rdma_rw_ctx ctx;
	struct ib_qp *qp;
	struct sig_env e;
	u64 ra;
	u32 rk, i;

	sig_env_init(&e, NULL);
	qp = e.qp[0];
	ra = sig_env_raddr(&e, 0);
	rk = e.remote_mr->rkey;
	sg_init_one(sg, e.local, 1024);
	sg_init_one(&psg, e.local + 8192, 16);
	big = calloc(257, sizeof(*big));
	assert_non_null(big);
	sg_init_table(big, 257);
	for (i = 0; i < 257; i++)
		sg_set_buf(&big[i], e.local + i * 1024, 512);

	refused(&e,
		rdma_rw_ctx_signature_init(NULL, qp, 1, sg, 1, &psg, 1, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, NULL, 1, sg, 1, &psg, 1, &a,
					   ra, rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, NULL, 1, &psg, 1, &a,
					   ra, rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, sg, 0, &psg, 1, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, sg, 1, NULL, 1, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, sg, 1, &psg, 1, NULL,
					   ra, rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 2, sg, 1, &psg, 1, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 0, sg, 1, &psg, 1, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, sg, 1, &psg, 1, &a, ra,
					   rk, DMA_BIDIRECTIONAL),
		-EINVAL);
	/* Above pages per MR (256), data or protection. */
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, big, 257, &psg, 1, &a,
					   ra, rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, sg, 1, big, 257, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	/* 256 entries fit. */
	sg_mark_end(&big[255]);
	assert_int_equal(rdma_rw_ctx_signature_init(&ctx, qp, 1, big, 256, &psg,
						    1, &a, ra, rk,
						    DMA_TO_DEVICE),
			 2);
	rdma_rw_ctx_destroy_signature(&ctx, qp, 1, big, 256, &psg, 1,
				      DMA_TO_DEVICE);
	/* A list shorter than its count cannot be mapped. */
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, sg, 2, &psg, 1, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, sg, 1, &psg, 2, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	/* An empty entry: ib_map_mr_sg_pi() refuses, the MR goes back. */
	sg_init_table(z, 2);
	sg_set_buf(&z[0], e.local, 512);
	sg_set_buf(&z[1], e.local + 4096, 0);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, qp, 1, z, 2, &psg, 1, &a, ra,
					   rk, DMA_TO_DEVICE),
		-EINVAL);
	/* A refused init leaves a context that destroy rejects. */
	rdma_rw_ctx_destroy_signature(&ctx, qp, 1, sg, 1, &psg, 1,
				      DMA_TO_DEVICE);
	assert_int_equal(qp->mrs_used, 0);
	free(big);
	sig_env_fini(&e);

	/* A QP without integrity has no signature pool: -EAGAIN. */
	sig_env_init(&e, &(struct sig_env_cfg){ .no_integrity = true });
	sg_init_one(sg, e.local, 1024);
	sg_init_one(&psg, e.local + 8192, 16);
	refused(&e,
		rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, sg, 1, &psg, 1, &a,
					   sig_env_raddr(&e, 0),
					   e.remote_mr->rkey, DMA_TO_DEVICE),
		-EAGAIN);
	sig_env_fini(&e);
}

static void test_pool_exhaustion(void **state)
{
	struct ib_sig_attrs a = insert_attrs(512);
	struct scatterlist sg[3], psg[3];
	struct rdma_rw_ctx ctx[3];
	struct ib_mr *first;
	struct sig_env e;
	int i;

	sig_env_init(&e, &(struct sig_env_cfg){ .max_rdma_ctxs = 2 });
	for (i = 0; i < 3; i++) {
		sg_init_one(&sg[i], e.local + i * 8192, 1024);
		sg_init_one(&psg[i], e.local + 65536 + i * 64, 16);
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(rdma_rw_ctx_signature_init(
					 &ctx[i], e.qp[0], 1, &sg[i], 1,
					 &psg[i], 1, &a, 0, 0, DMA_TO_DEVICE),
				 2);
	first = ctx[0].reg->mr;
	assert_int_equal(e.qp[0]->mrs_used, 2);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 4);
	/* No fallback: -EAGAIN, nothing more mapped or taken. */
	assert_int_equal(rdma_rw_ctx_signature_init(&ctx[2], e.qp[0], 1, &sg[2],
						    1, &psg[2], 1, &a, 0, 0,
						    DMA_TO_DEVICE),
			 -EAGAIN);
	assert_int_equal(e.qp[0]->mrs_used, 2);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 4);
	/* The pool is LIFO: the MR given back is the one taken next. */
	rdma_rw_ctx_destroy_signature(&ctx[0], e.qp[0], 1, &sg[0], 1, &psg[0],
				      1, DMA_TO_DEVICE);
	assert_int_equal(rdma_rw_ctx_signature_init(&ctx[2], e.qp[0], 1, &sg[2],
						    1, &psg[2], 1, &a, 0, 0,
						    DMA_TO_DEVICE),
			 2);
	assert_ptr_equal(ctx[2].reg->mr, first);
	for (i = 1; i < 3; i++)
		rdma_rw_ctx_destroy_signature(&ctx[i], e.qp[0], 1, &sg[i], 1,
					      &psg[i], 1, DMA_TO_DEVICE);
	assert_int_equal(e.qp[0]->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 0);
	sig_env_fini(&e);
}

/* Each destroy takes only its own contexts; misuse changes nothing. */
static void test_destroy_misuse(void **state)
{
	struct ib_sig_attrs a = insert_attrs(512);
	struct rdma_rw_ctx sctx, pctx;
	struct scatterlist sg, psg, plain;
	struct sig_env e;

	sig_env_init(&e, NULL);
	sg_init_one(&sg, e.local, 1024);
	sg_init_one(&psg, e.local + 8192, 16);
	sg_init_one(&plain, e.local + 16384, 100);
	assert_int_equal(rdma_rw_ctx_signature_init(&sctx, e.qp[0], 1, &sg, 1,
						    &psg, 1, &a, 0, 0,
						    DMA_TO_DEVICE),
			 2);
	assert_int_equal(rdma_rw_ctx_init(&pctx, e.qp[0], 1, &plain, 1, 0, 0, 0,
					  DMA_TO_DEVICE),
			 1);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 3);
	rdma_rw_ctx_destroy(&sctx, e.qp[0], 1, &sg, 1, DMA_TO_DEVICE);
	rdma_rw_ctx_destroy_bvec(&sctx, e.qp[0], 1, NULL, 1, DMA_TO_DEVICE);
	rdma_rw_ctx_destroy_signature(&pctx, e.qp[0], 1, &plain, 1, NULL, 0,
				      DMA_TO_DEVICE);
	rdma_rw_ctx_destroy_signature(&sctx, e.qp[1], 1, &sg, 1, &psg, 1,
				      DMA_TO_DEVICE);
	rdma_rw_ctx_destroy_signature(NULL, e.qp[0], 1, &sg, 1, &psg, 1,
				      DMA_TO_DEVICE);
	assert_int_equal(e.qp[0]->mrs_used, 1);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 3);
	rdma_rw_ctx_destroy_signature(&sctx, e.qp[0], 1, &sg, 1, &psg, 1,
				      DMA_TO_DEVICE);
	rdma_rw_ctx_destroy(&pctx, e.qp[0], 1, &plain, 1, DMA_TO_DEVICE);
	assert_int_equal(e.qp[0]->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 0);
	/* Twice: the second does nothing. */
	rdma_rw_ctx_destroy_signature(&sctx, e.qp[0], 1, &sg, 1, &psg, 1,
				      DMA_TO_DEVICE);
	assert_int_equal(e.qp[0]->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 0);
	sig_env_fini(&e);
}

/* ---- what the target drivers build -------------------------------- */

/*
 * Move @nblk blocks with @a in direction @dir from valid input and check
 * the output against the reference; then again with one data byte of
 * block @bad broken in the input, when the input domain checks its guard:
 * a BAD_GUARD at that block.
 */
static void roundtrip(struct sig_env *e, const struct ib_sig_attrs *a,
		      enum dma_data_direction dir, u32 nblk, u32 bad)
{
	const struct ib_t10_dif_domain *mem =
		a->mem.sig_type ? &a->mem.sig.dif : NULL;
	const struct ib_t10_dif_domain *wire =
		a->wire.sig_type ? &a->wire.sig.dif : NULL;
	const struct ib_t10_dif_domain *in = dir == DMA_TO_DEVICE ? mem : wire;
	u32 iv = mem ? mem->pi_interval : wire->pi_interval;
	u32 dlen = iv * nblk, plen = 8 * nblk;
	u32 wlen = dlen + (wire ? plen : 0);
	u8 *data = malloc(dlen), *mpi = calloc(1, plen), *wpi = malloc(plen);
	u8 *img = malloc(wlen), *lpi = e->local + dlen + 4096;
	struct ib_mr_status st;
	struct sig_io io = {
		.attrs = *a,
		.dir = dir,
		.data = e->local,
		.data_len = dlen,
		.pi = lpi,
		.pi_len = plen,
	};
	u32 key;

	assert_non_null(data);
	assert_non_null(mpi);
	assert_non_null(wpi);
	assert_non_null(img);
	sig_fill(data, dlen, dlen + nblk + dir);
	if (mem)
		sig_ref_protect(mem, data, nblk, mpi);
	if (wire) {
		sig_ref_protect(wire, data, nblk, wpi);
		sig_ref_interleave(iv, data, wpi, nblk, img);
	} else {
		memcpy(img, data, dlen);
	}
	memset(e->local, 0, dlen + 4096 + plen);
	memset(e->remote, 0, wlen + 64);
	if (dir == DMA_TO_DEVICE) {
		memcpy(e->local, data, dlen);
		memcpy(lpi, mpi, plen);
	} else {
		memcpy(e->remote, img, wlen);
	}
	sig_env_run(e, &io, &st, NULL);
	assert_int_equal(st.fail_status, 0);
	if (dir == DMA_TO_DEVICE) {
		assert_memory_equal(e->remote, img, wlen);
		assert_int_equal(e->remote[wlen], 0);
	} else {
		assert_memory_equal(e->local, data, dlen);
		if (mem)
			assert_memory_equal(lpi, mpi, plen);
	}
	if (in && (a->check_mask & IB_SIG_CHECK_GUARD)) {
		u64 pos =
			(u64)bad *
			(dir == DMA_TO_DEVICE ? iv : (u64)iv + (wire ? 8 : 0));

		if (dir == DMA_TO_DEVICE) {
			memcpy(e->local, data, dlen);
			memcpy(lpi, mpi, plen);
			e->local[pos + 17] ^= 0x80;
		} else {
			memcpy(e->remote, img, wlen);
			e->remote[pos + 17] ^= 0x80;
		}
		sig_env_run(e, &io, &st, &key);
		assert_int_equal(st.fail_status, IB_MR_CHECK_SIG_STATUS);
		assert_int_equal(st.sig_err.err_type, IB_SIG_BAD_GUARD);
		assert_int_equal(st.sig_err.sig_err_offset,
				 (u64)bad * (iv + 8));
		assert_int_equal(st.sig_err.key, key);
	}
	free(data);
	free(mpi);
	free(wpi);
	free(img);
}

/* NVMe command PRINFO bits (include/linux/nvme.h values). */
#define PRCHK_REF (1u << 10)
#define PRCHK_APP (1u << 11)
#define PRCHK_GUARD (1u << 12)
#define PRACT (1u << 13)

/* nvmet_rdma_set_sig_domain() and nvmet_rdma_set_sig_attrs(), rebuilt. */
static void nvmet_domain(struct ib_sig_domain *d, u32 control, int pi_type,
			 u32 iv, u32 reftag, u16 apptag, u16 appmask)
{
	d->sig_type = IB_SIG_TYPE_T10_DIF;
	d->sig.dif.bg_type = IB_T10DIF_CRC;
	d->sig.dif.pi_interval = (u16)iv;
	d->sig.dif.ref_tag = reftag;
	if (control & PRCHK_REF)
		d->sig.dif.ref_remap = true;
	d->sig.dif.app_tag = apptag;
	d->sig.dif.apptag_check_mask = appmask;
	d->sig.dif.app_escape = true;
	if (pi_type == 3)
		d->sig.dif.ref_escape = true;
}

static struct ib_sig_attrs nvmet_attrs(u32 control, int pi_type, u32 iv)
{
	struct ib_sig_attrs a;

	memset(&a, 0, sizeof(a));
	if (control & PRACT) {
		a.wire.sig_type = IB_SIG_TYPE_NONE;
		nvmet_domain(&a.mem, control, pi_type, iv, 0x12345, 0x42,
			     0xffff);
	} else {
		nvmet_domain(&a.wire, control, pi_type, iv, 0x12345, 0x42,
			     0xffff);
		nvmet_domain(&a.mem, control, pi_type, iv, 0x12345, 0x42,
			     0xffff);
	}
	if (control & PRCHK_REF)
		a.check_mask |= IB_SIG_CHECK_REFTAG;
	if (control & PRCHK_GUARD)
		a.check_mask |= IB_SIG_CHECK_GUARD;
	if (control & PRCHK_APP)
		a.check_mask |= IB_SIG_CHECK_APPTAG;
	return a;
}

static void test_nvmet_combinations(void **state)
{
	const u32 controls[] = {
		PRACT | PRCHK_GUARD | PRCHK_REF | PRCHK_APP, /* insert/strip */
		PRCHK_GUARD | PRCHK_REF | PRCHK_APP, /* pass */
		PRCHK_GUARD,
		PRACT | PRCHK_GUARD,
		0,
	};
	const u32 ivs[] = { 512, 4096 };
	struct sig_env e;
	unsigned int c, i;
	int type;

	sig_env_init(&e, NULL);
	for (c = 0; c < 5; c++)
		for (i = 0; i < 2; i++)
			for (type = 1; type <= 3; type += 2) {
				struct ib_sig_attrs a =
					nvmet_attrs(controls[c], type, ivs[i]);

				/* Host WRITE: nvmet READs; host READ: WRITEs */
				roundtrip(&e, &a, DMA_FROM_DEVICE, 6, 4);
				roundtrip(&e, &a, DMA_TO_DEVICE, 6, 1);
			}
	sig_env_fini(&e);
}

/* isert's target_prot_op values and isert_set_sig_attrs(), rebuilt. */
enum prot_op {
	DIN_INSERT,
	DOUT_STRIP,
	DOUT_INSERT,
	DIN_STRIP,
	DIN_PASS,
	DOUT_PASS,
};

static void isert_domain(struct ib_sig_domain *d, u32 iv, int prot_type,
			 u32 seed)
{
	d->sig_type = IB_SIG_TYPE_T10_DIF;
	d->sig.dif.bg_type = IB_T10DIF_CRC;
	d->sig.dif.pi_interval = (u16)iv;
	d->sig.dif.ref_tag = seed;
	d->sig.dif.apptag_check_mask = 0xffff;
	d->sig.dif.app_escape = true;
	d->sig.dif.ref_escape = true;
	if (prot_type == 1 || prot_type == 2)
		d->sig.dif.ref_remap = true;
}

static struct ib_sig_attrs isert_attrs(enum prot_op op, u32 iv, int prot_type)
{
	struct ib_sig_attrs a;

	memset(&a, 0, sizeof(a));
	switch (op) {
	case DIN_INSERT:
	case DOUT_STRIP:
		a.mem.sig_type = IB_SIG_TYPE_NONE;
		isert_domain(&a.wire, iv, prot_type, 777);
		break;
	case DOUT_INSERT:
	case DIN_STRIP:
		a.wire.sig_type = IB_SIG_TYPE_NONE;
		isert_domain(&a.mem, iv, prot_type, 777);
		break;
	default:
		isert_domain(&a.wire, iv, prot_type, 777);
		isert_domain(&a.mem, iv, prot_type, 777);
		break;
	}
	a.check_mask =
		IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG | IB_SIG_CHECK_REFTAG;
	return a;
}

static void test_isert_combinations(void **state)
{
	const u32 ivs[] = { 512, 4096 };
	struct sig_env e;
	unsigned int i;
	int op, type;

	sig_env_init(&e, NULL);
	for (op = DIN_INSERT; op <= DOUT_PASS; op++)
		for (i = 0; i < 2; i++)
			for (type = 1; type <= 3; type += 2) {
				struct ib_sig_attrs a =
					isert_attrs(op, ivs[i], type);
				/* Data-in: the target WRITEs to the
				 * initiator; data-out: it READs. */
				bool din = op == DIN_INSERT ||
					   op == DIN_STRIP || op == DIN_PASS;

				roundtrip(&e, &a,
					  din ? DMA_TO_DEVICE : DMA_FROM_DEVICE,
					  5, 2);
			}
	sig_env_fini(&e);
}

/*
 * NVMe-oF end to end: the host exposes an integrity MR (memory: data + PI
 * list, wire: T10-DIF) and the target READs it through its own signature
 * context (wire T10-DIF, memory: data + PI list).  Both MRs transform: the
 * target's memory ends up with the host's data and PI.
 */
static void test_host_and_target(void **state)
{
	struct ib_t10_dif_domain d = sig_dif(4096, 0x99, 0x1);
	struct ib_sig_attrs a = { .check_mask = ALL_CHECKS };
	struct done done = { .cqe.done = done_fn };
	struct scatterlist ds, ps, tds, tps;
	u8 *data, *pi, *hdata, *hpi, *tdata, *tpi;
	struct rdma_rw_ctx ctx;
	struct ib_mr_status st;
	struct ib_reg_wr reg;
	struct ib_mr *hmr;
	struct sig_env e;

	a.mem.sig_type = a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a.mem.sig.dif = a.wire.sig.dif = d;
	sig_env_init(&e, &(struct sig_env_cfg){ .host_integrity = true });
	data = malloc(16384);
	pi = malloc(32);
	sig_fill(data, 16384, 99);
	sig_ref_protect(&d, data, 4, pi);
	hdata = e.remote;
	hpi = e.remote + 65536;
	memcpy(hdata, data, 16384);
	memcpy(hpi, pi, 32);
	/* The host's MR, as nvme-rdma registers it. */
	hmr = ib_alloc_mr_integrity(e.pd[1], 8, 8);
	assert_false(IS_ERR(hmr));
	*hmr->sig_attrs = a;
	sg_init_one(&ds, hdata, 16384);
	sg_init_one(&ps, hpi, 32);
	assert_int_equal(ib_dma_map_sg(e.dev[1], &ds, 1, DMA_TO_DEVICE), 1);
	assert_int_equal(ib_dma_map_sg(e.dev[1], &ps, 1, DMA_TO_DEVICE), 1);
	assert_int_equal(
		ib_map_mr_sg_pi(hmr, &ds, 1, NULL, &ps, 1, NULL, SZ_4K), 0);
	ib_update_fast_reg_key(hmr, (u8)ib_inc_rkey(hmr->lkey));
	reg = (struct ib_reg_wr){
		.wr = { .opcode = IB_WR_REG_MR_INTEGRITY },
		.mr = hmr,
		.key = hmr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	assert_int_equal(ib_post_send(e.qp[1], &reg.wr, NULL), 0);
	/* The target: a signature READ of the host MR's wire view. */
	tdata = e.local;
	tpi = e.local + 65536;
	sg_init_one(&tds, tdata, 16384);
	sg_init_one(&tps, tpi, 32);
	assert_int_equal(rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, &tds, 1,
						    &tps, 1, &a, 0, hmr->rkey,
						    DMA_FROM_DEVICE),
			 2);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp[0], 1, &done.cqe, NULL),
			 0);
	ib_process_cq_direct(e.cq[0], -1);
	assert_int_equal(done.count, 1);
	assert_int_equal(done.status, IB_WC_SUCCESS);
	assert_memory_equal(tdata, data, 16384);
	assert_memory_equal(tpi, pi, 32);
	assert_int_equal(
		ib_check_mr_status(ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, &st),
		0);
	assert_int_equal(st.fail_status, 0);
	assert_int_equal(ib_check_mr_status(hmr, IB_MR_CHECK_SIG_STATUS, &st),
			 0);
	assert_int_equal(st.fail_status, 0);
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, &tds, 1, &tps, 1,
				      DMA_FROM_DEVICE);

	/* A host PI broken in memory: both MRs see the bad guard (the host's
	 * on the way out, the target's on the way in). */
	hpi[2 * 8] ^= 1;
	memset(tdata, 0, 16384);
	assert_int_equal(rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, &tds, 1,
						    &tps, 1, &a, 0, hmr->rkey,
						    DMA_FROM_DEVICE),
			 3);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp[0], 1, &done.cqe, NULL),
			 0);
	ib_process_cq_direct(e.cq[0], -1);
	assert_int_equal(done.count, 2);
	assert_int_equal(done.status, IB_WC_SUCCESS);
	assert_memory_equal(tdata, data, 16384);
	assert_int_equal(ib_check_mr_status(hmr, IB_MR_CHECK_SIG_STATUS, &st),
			 0);
	assert_int_equal(st.sig_err.err_type, IB_SIG_BAD_GUARD);
	assert_int_equal(st.sig_err.sig_err_offset, 2 * 4104);
	assert_int_equal(st.sig_err.key, hmr->rkey);
	assert_int_equal(
		ib_check_mr_status(ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, &st),
		0);
	assert_int_equal(st.sig_err.err_type, IB_SIG_BAD_GUARD);
	assert_int_equal(st.sig_err.sig_err_offset, 2 * 4104);
	assert_int_equal(st.sig_err.key, ctx.reg->mr->lkey);
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, &tds, 1, &tps, 1,
				      DMA_FROM_DEVICE);
	ib_dma_unmap_sg(e.dev[1], &ds, 1, DMA_TO_DEVICE);
	ib_dma_unmap_sg(e.dev[1], &ps, 1, DMA_TO_DEVICE);
	assert_int_equal(ib_dereg_mr(hmr), 0);
	free(data);
	free(pi);
	sig_env_fini(&e);
}

/* The same transfers on devices that execute on their progress threads. */
static void test_threaded_devices(void **state)
{
	struct ib_sig_attrs ins = isert_attrs(DIN_INSERT, 4096, 1);
	struct ib_sig_attrs strip = isert_attrs(DOUT_STRIP, 512, 1);
	struct ib_sig_attrs pass = nvmet_attrs(PRCHK_GUARD | PRCHK_REF, 1, 512);
	struct soft_profile p;
	struct sig_env e;
	int i;

	assert_int_equal(soft_profile_get("mlx5", &p), 0);
	p.threaded = true;
	sig_env_init(&e, &(struct sig_env_cfg){ .custom = &p });
	for (i = 0; i < 4; i++) {
		roundtrip(&e, &ins, DMA_TO_DEVICE, 4, 3);
		roundtrip(&e, &strip, DMA_FROM_DEVICE, 9, 8);
		roundtrip(&e, &pass, DMA_FROM_DEVICE, 3, 0);
		roundtrip(&e, &pass, DMA_TO_DEVICE, 3, 2);
	}
	sig_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_chain_shape),
		cmocka_unit_test(test_chain_iwarp),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_pool_exhaustion),
		cmocka_unit_test(test_destroy_misuse),
		cmocka_unit_test(test_nvmet_combinations),
		cmocka_unit_test(test_isert_combinations),
		cmocka_unit_test(test_host_and_target),
		cmocka_unit_test(test_threaded_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw_rw_ctx_explain(): on every software profile (mlx5, rxe, siw, and
 * rxe with its IOMMU for the bio_vec paths), each path with each reason
 * that leads to it, and the failures an init records, stated here per
 * profile; the counts it reports (WRs, MRs, WQEs, SGEs, bytes) are
 * compared with the chain rdma_rw_ctx_wrs() then builds, which is posted
 * and must complete; the signature path (SIG_MR, PI) on mlx5 the same way.
 * rdmarw_rw_ctx_reason() words each decision in one line that fits its
 * bound (exact texts on mlx5 and siw).  NULL, never initialised, destroyed
 * and copied
 * contexts are refused with -EINVAL, and post and destroy refuse a
 * context whose init failed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_env.h"
#include "helpers/sig_env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTS 64

struct io {
	struct scatterlist sg[MAX_ENTS];
	struct bio_vec bv[MAX_ENTS];
	u32 n;
	bool bvec;
	enum dma_data_direction dir;
	struct rdma_rw_ctx ctx;
	int ret;
};

static bool is(const struct rw_env *e, const char *name)
{
	return !strcmp(e->profile->name, name);
}

static void setup(struct rw_env *e, const struct rw_profile *p)
{
	struct rw_env_opts o = {
		.profile = p,
		.max_rdma_ctxs = 4,
		.local_len = 1 << 20,
		.remote_len = 1 << 20,
	};

	rw_env_setup(e, &o);
}

/*
 * @n entries of @len bytes; @stride apart in the local arena (0: @len, so
 * they are contiguous).
 */
static int init_io(struct rw_env *e, struct io *io, u32 n, u32 len, u32 stride,
		   u32 offset, enum dma_data_direction dir)
{
	u32 i;

	assert_true(n <= MAX_ENTS);
	memset(io, 0, sizeof(*io));
	io->n = n;
	io->dir = dir;
	sg_init_table(io->sg, n);
	for (i = 0; i < n; i++) {
		u8 *p = e->local + (size_t)i * (stride ? stride : len);

		sg_set_buf(&io->sg[i], p, len);
		bvec_set_virt(&io->bv[i], p, len);
	}
	io->ret = rdma_rw_ctx_init(&io->ctx, e->qp, 1, io->sg, n, offset,
				   rw_env_raddr(e, 0), e->remote_mr->rkey, dir);
	return io->ret;
}

static int init_bvec_io(struct rw_env *e, struct io *io, u32 n, u32 len,
			u32 bytes, enum dma_data_direction dir)
{
	struct bvec_iter iter = { .bi_size = bytes };
	u32 i;

	memset(io, 0, sizeof(*io));
	io->n = n;
	io->dir = dir;
	io->bvec = true;
	for (i = 0; i < n; i++)
		bvec_set_virt(&io->bv[i], e->local + (size_t)i * len, len);
	io->ret = rdma_rw_ctx_init_bvec(&io->ctx, e->qp, 1, io->bv, n, iter,
					rw_env_raddr(e, 0), e->remote_mr->rkey,
					dir);
	return io->ret;
}

static void destroy_io(struct rw_env *e, struct io *io)
{
	if (io->bvec)
		rdma_rw_ctx_destroy_bvec(&io->ctx, e->qp, 1, io->bv, io->n,
					 io->dir);
	else
		rdma_rw_ctx_destroy(&io->ctx, e->qp, 1, io->sg, io->n, io->dir);
}

static bool rdma_op(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_READ || op == IB_WR_RDMA_WRITE ||
	       op == IB_WR_RDMA_READ_WITH_INV;
}

/*
 * The decision's counts against the chain rdma_rw_ctx_wrs() builds now;
 * the chain is posted and must complete once, successfully.
 */
static void check_chain(struct rw_env *e, struct io *io,
			const struct rdmarw_rw_decision *d)
{
	u32 wrs = 0, ops = 0, regs = 0, sges = 0;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first, *wr;
	struct rw_done done;
	u64 bytes = 0;
	int i;

	rw_done_init(&done);
	first = rdma_rw_ctx_wrs(&io->ctx, e->qp, 1, &done.cqe, NULL);
	assert_non_null(first);
	for (wr = first; wr; wr = wr->next) {
		wrs++;
		if (wr->opcode == IB_WR_REG_MR ||
		    wr->opcode == IB_WR_REG_MR_INTEGRITY)
			regs++;
		if (!rdma_op(wr->opcode))
			continue;
		ops++;
		assert_true((u32)wr->num_sge <= d->max_sge);
		sges += (u32)wr->num_sge;
		for (i = 0; i < wr->num_sge; i++)
			bytes += wr->sg_list[i].length;
	}
	assert_int_equal(wrs, d->nr_wqes);
	assert_int_equal(ops, d->nr_ops);
	assert_int_equal(regs, d->nr_mrs);
	assert_int_equal(sges, d->nr_sges);
	assert_int_equal(bytes, d->length);
	assert_int_equal(ib_post_send(e->qp, first, &bad), 0);
	rw_env_wait(e, &done.count, 1);
	assert_int_equal(done.status, IB_WC_SUCCESS);
}

/*
 * The decision in words: one line that fits RDMARW_RW_REASON_LEN, and a
 * buffer one byte short is refused with -ENOSPC holding the text's start.
 */
static void check_reason(struct io *io, const char *want)
{
	char text[RDMARW_RW_REASON_LEN], shorter[RDMARW_RW_REASON_LEN];
	int len = rdmarw_rw_ctx_reason(&io->ctx, text, sizeof(text));

	assert_true(len > 0 && (size_t)len == strlen(text));
	assert_null(strchr(text, '\n'));
	if (want && strcmp(text, want))
		fail_msg("reason \"%s\", expected \"%s\"", text, want);
	assert_int_equal(rdmarw_rw_ctx_reason(&io->ctx, shorter, (size_t)len),
			 -ENOSPC);
	assert_int_equal(strlen(shorter), len - 1);
	assert_memory_equal(shorter, text, (size_t)len - 1);
	assert_int_equal(rdmarw_rw_ctx_reason(&io->ctx, NULL, 8), -EINVAL);
}

/*
 * Init returned a WQE count: the decision must be @type for @why, agree
 * with the return value and with two chains posted one after the other
 * (the second retires the first one's registrations where it must).
 */
static void expect_path(struct rw_env *e, struct io *io, u8 type, u8 why,
			u64 bytes)
{
	struct rdmarw_rw_decision d;

	assert_true(io->ret > 0);
	assert_int_equal(rdmarw_rw_ctx_explain(&io->ctx, &d), 0);
	if (d.type != type || d.why != why)
		fail_msg("%s: path %u why %u, expected %u why %u",
			 e->profile->label, d.type, d.why, type, why);
	assert_int_equal(d.origin, io->bvec ? RDMARW_RW_ORIGIN_BVEC :
					      RDMARW_RW_ORIGIN_SG);
	assert_int_equal(d.error, 0);
	assert_int_equal(d.nr_wqes, io->ret);
	assert_int_equal(d.length, bytes);
	assert_int_equal(d.bad_entry, UINT32_MAX);
	assert_int_equal(d.max_sge, io->dir == DMA_TO_DEVICE ?
					    e->qp->max_write_sge :
					    e->qp->max_read_sge);
	if (type == RDMA_RW_MR)
		assert_true(d.pages_per_mr > 0 && d.nr_mrs == d.nr_ops);
	else
		assert_true(d.pages_per_mr == 0 && d.nr_mrs == 0);
	check_reason(io, NULL);
	check_chain(e, io, &d);
	/* the next chain: a LOCAL_INV where the MR is still registered */
	assert_int_equal(rdmarw_rw_ctx_explain(&io->ctx, &d), 0);
	check_chain(e, io, &d);
	destroy_io(e, io);
	assert_int_equal(rdmarw_rw_ctx_explain(&io->ctx, &d), -EINVAL);
}

/* Init failed: the decision says where and why; post and destroy refuse. */
static void expect_failure(struct rw_env *e, struct io *io, int err, u8 type,
			   u8 why, u32 bad_entry)
{
	struct rdmarw_rw_decision d;
	struct rw_done done;
	int mrs = e->qp->mrs_used;

	assert_int_equal(io->ret, err);
	assert_int_equal(rdmarw_rw_ctx_explain(&io->ctx, &d), 0);
	assert_int_equal(d.origin, RDMARW_RW_ORIGIN_FAILED);
	assert_int_equal(d.error, err);
	if (d.type != type || d.why != why)
		fail_msg("%s: failed path %u why %u, expected %u why %u",
			 e->profile->label, d.type, d.why, type, why);
	assert_int_equal(d.bad_entry, bad_entry);
	assert_int_equal(d.nr_ops + d.nr_wqes + d.nr_mrs, 0);
	check_reason(io, NULL);
	rw_done_init(&done);
	assert_null(rdma_rw_ctx_wrs(&io->ctx, e->qp, 1, &done.cqe, NULL));
	assert_int_equal(rdma_rw_ctx_post(&io->ctx, e->qp, 1, &done.cqe, NULL),
			 -EINVAL);
	destroy_io(e, io); /* refused: warns once, changes nothing */
	assert_int_equal(e->qp->mrs_used, mrs);
	assert_int_equal(rdmarw_dma_mapped(e->dev), 0);
}

/* Every MR of the QP's pool, taken out (put back by give_back()). */
static u32 take_pool(struct rw_env *e, struct ib_mr **held, u32 max)
{
	u32 n = 0;

	while (n < max && (held[n] = ib_mr_pool_get(e->qp, &e->qp->rdma_mrs)))
		n++;
	return n;
}

static void give_back(struct rw_env *e, struct ib_mr **held, u32 n)
{
	while (n--)
		ib_mr_pool_put(e->qp, &e->qp->rdma_mrs, held[n]);
}

static void sgl_paths(void **state)
{
	unsigned int np, i;
	const struct rw_profile *profiles = rw_test_profiles(&np);

	(void)state;
	rw_skip_on_device();
	for (i = 0; i < np; i++) {
		struct rw_env e;
		struct io io;
		bool siw, mlx5;
		u8 read_type, read_why;
		u32 max;

		if (profiles[i].iommu)
			continue;
		setup(&e, &profiles[i]);
		siw = is(&e, "siw");
		mlx5 = is(&e, "mlx5");
		read_type = siw ? RDMA_RW_MR : RDMA_RW_SINGLE_WR;
		read_why = siw ? RDMARW_RW_WHY_IWARP_READ :
				 RDMARW_RW_WHY_ONE_ENTRY;

		init_io(&e, &io, 1, 4096, 0, 0, DMA_TO_DEVICE);
		expect_path(&e, &io, RDMA_RW_SINGLE_WR, RDMARW_RW_WHY_ONE_ENTRY,
			    4096);
		init_io(&e, &io, 1, 4096, 0, 100, DMA_FROM_DEVICE);
		expect_path(&e, &io, read_type, read_why, 3996);

		/* more SGEs than one WR takes: several WRs */
		max = e.qp->max_write_sge;
		init_io(&e, &io, max + 1, 4096, 0, 0, DMA_TO_DEVICE);
		expect_path(&e, &io, RDMA_RW_MULTI_WR, RDMARW_RW_WHY_ENTRIES,
			    (u64)(max + 1) * 4096);
		assert_int_equal(io.ret, 2);

		/* two entries, within mlx5's max_sgl_rd of 3 */
		init_io(&e, &io, 2, 4096, 0, 0, DMA_FROM_DEVICE);
		expect_path(&e, &io, siw ? RDMA_RW_MR : RDMA_RW_MULTI_WR,
			    siw ? RDMARW_RW_WHY_IWARP_READ :
				  RDMARW_RW_WHY_ENTRIES,
			    8192);

		/* nine: above mlx5's max_sgl_rd */
		init_io(&e, &io, 9, 4096, 0, 0, DMA_FROM_DEVICE);
		expect_path(&e, &io,
			    mlx5 || siw ? RDMA_RW_MR : RDMA_RW_MULTI_WR,
			    mlx5 ? RDMARW_RW_WHY_MAX_SGL_RD :
			    siw	 ? RDMARW_RW_WHY_IWARP_READ :
				   RDMARW_RW_WHY_ENTRIES,
			    9 * 4096);

		/* past the end: no path */
		init_io(&e, &io, 2, 4096, 0, 8192, DMA_TO_DEVICE);
		expect_failure(&e, &io, -EINVAL, RDMARW_RW_TYPE_NONE,
			       RDMARW_RW_WHY_OFFSET, UINT32_MAX);
		rw_env_teardown(&e);
	}
}

/* An empty pool: max_sgl_rd falls back, iWARP fails with -EAGAIN. */
static void pool_empty(void **state)
{
	unsigned int np, i;
	const struct rw_profile *profiles = rw_test_profiles(&np);

	(void)state;
	rw_skip_on_device();
	for (i = 0; i < np; i++) {
		struct ib_mr *held[64];
		struct rw_env e;
		struct io io;
		u32 n;

		if (profiles[i].iommu || !strcmp(profiles[i].name, "rxe"))
			continue;
		setup(&e, &profiles[i]);
		n = take_pool(&e, held, 64);
		assert_true(n > 0);
		init_io(&e, &io, 9, 4096, 0, 0, DMA_FROM_DEVICE);
		if (is(&e, "mlx5"))
			expect_path(&e, &io, RDMA_RW_MULTI_WR,
				    RDMARW_RW_WHY_POOL_EMPTY, 9 * 4096);
		else
			expect_failure(&e, &io, -EAGAIN, RDMA_RW_MR,
				       RDMARW_RW_WHY_IWARP_READ, UINT32_MAX);
		give_back(&e, held, n);
		rw_env_teardown(&e);
	}
}

/* force_mr on every profile; iWARP's READ rule comes first. */
static void force_mr(void **state)
{
	unsigned int np, i;
	const struct rw_profile *profiles = rw_test_profiles(&np);

	(void)state;
	rw_skip_on_device();
	rdma_rw_set_force_mr(true);
	for (i = 0; i < np; i++) {
		struct rw_env e;
		struct io io;

		if (profiles[i].iommu)
			continue;
		setup(&e, &profiles[i]);
		init_io(&e, &io, 3, 4096, 0, 0, DMA_TO_DEVICE);
		expect_path(&e, &io, RDMA_RW_MR, RDMARW_RW_WHY_FORCE_MR,
			    3 * 4096);
		init_io(&e, &io, 1, 4096, 0, 0, DMA_FROM_DEVICE);
		expect_path(&e, &io, RDMA_RW_MR,
			    is(&e, "siw") ? RDMARW_RW_WHY_IWARP_READ :
					    RDMARW_RW_WHY_FORCE_MR,
			    4096);
		rw_env_teardown(&e);
	}
	rdma_rw_set_force_mr(false);
}

/*
 * Entries an MR cannot join (512 bytes at the start of each page): the
 * first MR maps entry 0 only, so entry 1 is the bad one.
 */
static void mr_layout(void **state)
{
	struct rw_env e;
	struct io io;

	(void)state;
	rw_skip_on_device();
	setup(&e, rw_test_pick(&rw_profiles[2]));
	init_io(&e, &io, 4, 512, 4096, 0, DMA_FROM_DEVICE);
	expect_failure(&e, &io, -EINVAL, RDMA_RW_MR, RDMARW_RW_WHY_IWARP_READ,
		       1);
	rw_env_teardown(&e);
}

static void bvec_paths(void **state)
{
	unsigned int np, i;
	const struct rw_profile *profiles = rw_test_profiles(&np);

	(void)state;
	rw_skip_on_device();
	for (i = 0; i < np; i++) {
		struct rw_env e;
		struct io io;
		bool siw;

		setup(&e, &profiles[i]);
		siw = is(&e, "siw");
		init_bvec_io(&e, &io, 3, 4096, 3 * 4096, DMA_TO_DEVICE);
		expect_path(&e, &io,
			    profiles[i].iommu ? RDMA_RW_IOVA : RDMA_RW_MULTI_WR,
			    profiles[i].iommu ? RDMARW_RW_WHY_IOMMU :
						RDMARW_RW_WHY_NO_IOVA,
			    3 * 4096);
		init_bvec_io(&e, &io, 3, 4096, 1000, DMA_FROM_DEVICE);
		expect_path(&e, &io, siw ? RDMA_RW_MR : RDMA_RW_SINGLE_WR,
			    siw ? RDMARW_RW_WHY_IWARP_READ :
				  RDMARW_RW_WHY_ONE_BVEC,
			    1000);
		/* the iterator runs past the array */
		init_bvec_io(&e, &io, 2, 4096, 3 * 4096, DMA_TO_DEVICE);
		expect_failure(&e, &io, -EINVAL, RDMARW_RW_TYPE_NONE,
			       RDMARW_RW_WHY_BVEC_ITER, UINT32_MAX);
		rw_env_teardown(&e);
	}
}

static void sig_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rw_done *d = container_of(wc->wr_cqe, struct rw_done, cqe);

	(void)cq;
	d->count++;
	d->status = wc->status;
}

/* One signature chain against the decision, posted; it must complete. */
static void sig_chain(struct sig_env *e, struct rdma_rw_ctx *ctx, u32 wqes)
{
	struct rw_done d = { .cqe.done = sig_done };
	struct rdmarw_rw_decision dec;
	const struct ib_send_wr *bad;
	struct ib_send_wr *wr, *first;
	u32 n = 0, regs = 0, ops = 0;

	assert_int_equal(rdmarw_rw_ctx_explain(ctx, &dec), 0);
	assert_int_equal(dec.origin, RDMARW_RW_ORIGIN_SIG);
	assert_int_equal(dec.type, RDMA_RW_SIG_MR);
	assert_int_equal(dec.why, RDMARW_RW_WHY_PI);
	assert_int_equal(dec.nr_wqes, wqes);
	assert_true(dec.pages_per_mr > 0);
	first = rdma_rw_ctx_wrs(ctx, e->qp[0], 1, &d.cqe, NULL);
	for (wr = first; wr; wr = wr->next, n++) {
		regs += wr->opcode == IB_WR_REG_MR_INTEGRITY;
		ops += rdma_op(wr->opcode);
	}
	assert_int_equal(n, dec.nr_wqes);
	assert_int_equal(regs, dec.nr_mrs);
	assert_int_equal(ops, dec.nr_ops);
	assert_int_equal(ib_post_send(e->qp[0], first, &bad), 0);
	ib_process_cq_direct(e->cq[0], -1);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
}

static void sig_path(void **state)
{
	struct ib_sig_attrs a = { .check_mask = 0xff };
	struct rdma_rw_ctx ctx, other;
	struct scatterlist sg, psg;
	struct rdmarw_rw_decision d;
	struct ib_mr_status st;
	struct sig_env e;
	int ret;

	(void)state;
	rw_skip_on_device();
	sig_env_init(&e, &(struct sig_env_cfg){ .max_rdma_ctxs = 1 });
	assert_int_equal(ib_mr_pool_count(e.qp[0], &e.qp[0]->sig_mrs), 1);
	a.mem.sig_type = IB_SIG_TYPE_NONE;
	a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a.wire.sig.dif = sig_dif(512, 0, 0);
	sg_init_one(&sg, e.local, 4096);
	sg_init_one(&psg, e.local + 65536, 64);
	ret = rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, &sg, 1, &psg, 1, &a,
					 sig_env_raddr(&e, 0),
					 e.remote_mr->rkey, DMA_TO_DEVICE);
	assert_int_equal(ret, 2);
	sig_chain(&e, &ctx, 2);
	assert_int_equal(
		ib_check_mr_status(ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, &st),
		0);
	sig_chain(&e, &ctx, 3); /* LOCAL_INV of the first registration */
	assert_int_equal(
		ib_check_mr_status(ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, &st),
		0);
	/* the only integrity MR is taken: -EAGAIN, recorded */
	assert_int_equal(
		rdma_rw_ctx_signature_init(&other, e.qp[0], 1, &sg, 1, &psg, 1,
					   &a, sig_env_raddr(&e, 0),
					   e.remote_mr->rkey, DMA_TO_DEVICE),
		-EAGAIN);
	assert_int_equal(rdmarw_rw_ctx_explain(&other, &d), 0);
	assert_int_equal(d.origin, RDMARW_RW_ORIGIN_FAILED);
	assert_int_equal(d.type, RDMA_RW_SIG_MR);
	assert_int_equal(d.why, RDMARW_RW_WHY_PI);
	assert_int_equal(d.error, -EAGAIN);
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, &sg, 1, &psg, 1,
				      DMA_TO_DEVICE);
	assert_int_equal(rdmarw_rw_ctx_explain(&ctx, &d), -EINVAL);
	sig_env_fini(&e);
}

static void refused(void **state)
{
	struct rdmarw_rw_decision d;
	struct rdma_rw_ctx zero, copy;
	struct rw_env e;
	struct io io;

	(void)state;
	setup(&e, rw_test_pick(&rw_profiles[1]));
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(rdmarw_rw_ctx_explain(NULL, &d), -EINVAL);
	assert_int_equal(rdmarw_rw_ctx_explain(&zero, &d), -EINVAL);
	init_io(&e, &io, 1, 4096, 0, 0, DMA_TO_DEVICE);
	assert_int_equal(io.ret, 1);
	assert_int_equal(rdmarw_rw_ctx_explain(&io.ctx, NULL), -EINVAL);
	copy = io.ctx;
	assert_int_equal(rdmarw_rw_ctx_explain(&copy, &d), -EINVAL);
	assert_int_equal(rdmarw_rw_ctx_explain(&io.ctx, &d), 0);
	destroy_io(&e, &io);
	assert_int_equal(rdmarw_rw_ctx_explain(&io.ctx, &d), -EINVAL);
	/* an init that refused its arguments leaves nothing to explain */
	assert_int_equal(rdma_rw_ctx_init(&io.ctx, e.qp, 9, io.sg, 1, 0, 0, 0,
					  DMA_TO_DEVICE),
			 -EINVAL);
	assert_int_equal(rdmarw_rw_ctx_explain(&io.ctx, &d), -EINVAL);
	rw_env_teardown(&e);
}

/* The words for each path and failure, on mlx5 and siw. */
static void reason_texts(void **state)
{
	struct ib_mr *held[64];
	struct rw_env e;
	struct io io;
	u32 n;

	(void)state;
	rw_skip_on_device();
	setup(&e, &rw_profiles[0]); /* mlx5: max_sgl_rd 3, 30 SGEs */
	init_io(&e, &io, 1, 4096, 0, 0, DMA_TO_DEVICE);
	check_reason(&io, "one entry");
	destroy_io(&e, &io);
	init_io(&e, &io, 31, 4096, 0, 0, DMA_TO_DEVICE);
	check_reason(&io, "31 entries: up to 30 SGEs per WRITE");
	destroy_io(&e, &io);
	init_io(&e, &io, 3, 4096, 0, 0, DMA_FROM_DEVICE);
	check_reason(&io, "3 entries <= max_sgl_rd 3: up to 30 SGEs per READ");
	destroy_io(&e, &io);
	init_io(&e, &io, 9, 4096, 0, 0, DMA_FROM_DEVICE);
	check_reason(
		&io,
		"READ of more than max_sgl_rd 3 entries: 1 MR of up to 256 pages");
	destroy_io(&e, &io);
	n = take_pool(&e, held, 64);
	init_io(&e, &io, 9, 4096, 0, 0, DMA_FROM_DEVICE);
	check_reason(
		&io,
		"the QP's MR pool ran out: fell back to MULTI from MR (READ of more than max_sgl_rd 3 entries); up to 30 SGEs per READ");
	destroy_io(&e, &io);
	give_back(&e, held, n);
	init_io(&e, &io, 2, 4096, 0, 8192, DMA_TO_DEVICE);
	check_reason(&io, "sg_offset at or past the end of the list");
	rw_env_teardown(&e);

	setup(&e, &rw_profiles[2]); /* siw: every READ registers */
	init_io(&e, &io, 2, 4096, 0, 0, DMA_FROM_DEVICE);
	check_reason(&io, "iWARP READ needs MR: 1 MR of up to 256 pages");
	destroy_io(&e, &io);
	/* the offset starts in entry 1: "entry 1 after the offset" is entry 2 */
	init_io(&e, &io, 4, 512, 4096, 512 + 100, DMA_FROM_DEVICE);
	check_reason(
		&io,
		"entry 1 after the offset does not fit in an MR of up to 256 pages with the entries before it (the MR page-list rules)");
	n = take_pool(&e, held, 64);
	init_io(&e, &io, 2, 4096, 0, 0, DMA_FROM_DEVICE);
	check_reason(
		&io,
		"registration required (iWARP READ needs MR) and the QP's MR pool ran out; no fallback on iWARP or under force_mr");
	give_back(&e, held, n);
	rdma_rw_set_force_mr(true);
	init_io(&e, &io, 3, 4096, 0, 0, DMA_TO_DEVICE);
	check_reason(&io, "force_mr: 1 MR of up to 256 pages");
	destroy_io(&e, &io);
	rdma_rw_set_force_mr(false);
	rw_env_teardown(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sgl_paths),  cmocka_unit_test(pool_empty),
		cmocka_unit_test(force_mr),   cmocka_unit_test(mr_layout),
		cmocka_unit_test(bvec_paths), cmocka_unit_test(sig_path),
		cmocka_unit_test(refused),    cmocka_unit_test(reason_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

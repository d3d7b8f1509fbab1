// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Bad input to the R/W API: every documented errno, nothing left mapped,
 * linked or taken after a refusal, and destroy with the wrong kind of
 * context warning once and doing no harm.  On an ibv device
 * (RDMARW_TEST_DEVICE) the tests that need no MR run there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"
#include "rw/rw_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void setup(struct rw_env *e, const struct rw_profile *p, u32 ctxs)
{
	struct rw_env_opts o = {
		.profile = p,
		.max_rdma_ctxs = ctxs,
		.local_len = 256 << 10,
		.remote_len = 256 << 10,
	};

	rw_env_setup(e, &o);
}

static void assert_untouched(struct rw_env *e)
{
	struct soft_stats st;

	assert_int_equal(rdmarw_dma_mapped(e->dev), 0);
	assert_int_equal(e->qp->mrs_used, 0);
	if (e->qp->rw_cache)
		assert_int_equal(e->qp->rw_cache->in_use, 0);
	if (!rw_env_soft(e))
		return;
	assert_int_equal(soft_device_stats(e->dev, &st), 0);
	assert_int_equal(st.iova_ranges, 0);
}

static int init3(struct rw_env *e, struct rdma_rw_ctx *ctx,
		 struct scatterlist *sg, u32 cnt, u32 off, u32 port,
		 enum dma_data_direction dir)
{
	return rdma_rw_ctx_init(ctx, e->qp, port, sg, cnt, off,
				rw_env_raddr(e, 0), e->remote_mr->rkey, dir);
}

static void test_init_errors(void **state)
{
	struct scatterlist sg[3];
	struct rdma_rw_ctx ctx;
	struct rw_env e;
	unsigned int p, nr;
	const struct rw_profile *profiles = rw_test_profiles(&nr);

	for (p = 0; p < nr; p++) {
		setup(&e, &profiles[p], 2);
		sg_init_table(sg, 3);
		sg_set_buf(&sg[0], e.local + 100, 1000);
		sg_set_buf(&sg[1], e.local + 8192, 4096);
		sg_set_buf(&sg[2], e.local + 20000, 3000);
		/* NULLs */
		assert_int_equal(rdma_rw_ctx_init(NULL, e.qp, 1, sg, 3, 0, 0, 0,
						  DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(rdma_rw_ctx_init(&ctx, NULL, 1, sg, 3, 0, 0, 0,
						  DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(init3(&e, &ctx, NULL, 3, 0, 1, DMA_TO_DEVICE),
				 -EINVAL);
		/* counts */
		assert_int_equal(init3(&e, &ctx, sg, 0, 0, 1, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(init3(&e, &ctx, sg, (u32)INT_MAX + 1, 0, 1,
				       DMA_TO_DEVICE),
				 -EINVAL);
		/* a list shorter than sg_cnt */
		assert_int_equal(init3(&e, &ctx, sg, 4, 0, 1, DMA_FROM_DEVICE),
				 -EINVAL);
		/* ports */
		assert_int_equal(init3(&e, &ctx, sg, 3, 0, 0, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(init3(&e, &ctx, sg, 3, 0, 2, DMA_TO_DEVICE),
				 -EINVAL);
		/* directions */
		assert_int_equal(
			init3(&e, &ctx, sg, 3, 0, 1, DMA_BIDIRECTIONAL),
			-EINVAL);
		assert_int_equal(init3(&e, &ctx, sg, 3, 0, 1, DMA_NONE),
				 -EINVAL);
		assert_int_equal(init3(&e, &ctx, sg, 3, 0, 1,
				       (enum dma_data_direction)77),
				 -EINVAL);
		/* sg_offset at and past the end (the kernel walks off) */
		assert_int_equal(init3(&e, &ctx, sg, 3, 8096, 1, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(
			init3(&e, &ctx, sg, 3, 8097, 1, DMA_FROM_DEVICE),
			-EINVAL);
		assert_int_equal(
			init3(&e, &ctx, sg, 3, UINT_MAX, 1, DMA_TO_DEVICE),
			-EINVAL);
		assert_int_equal(init3(&e, &ctx, sg, 1, 1000, 1, DMA_TO_DEVICE),
				 -EINVAL);
		/* one byte before the end is fine */
		assert_int_equal(init3(&e, &ctx, sg, 3, 8095, 1, DMA_TO_DEVICE),
				 1);
		assert_int_equal(ctx.single.sge.length, 1);
		rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 3, DMA_TO_DEVICE);
		assert_untouched(&e);
		/* a refused init leaves the context uninitialised */
		assert_null(rdma_rw_ctx_wrs(&ctx, e.qp, 1,
					    &(struct ib_cqe){ 0 }, NULL));
		rw_env_teardown(&e);
	}
}

/* A QP created without SGEs cannot carry a MULTI context. */
static void test_init_no_sge(void **state)
{
	struct rw_env_opts o = {
		.profile = rw_test_pick(&rw_profiles[1]),
		.local_len = 64 << 10,
		.remote_len = 64 << 10,
	};
	struct ib_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	struct bvec_iter it = { .bi_size = 100 };
	struct scatterlist sg[2];
	struct rdma_rw_ctx ctx;
	struct bio_vec bv;
	struct rw_env e;
	struct ib_qp *qp;

	rw_env_setup(&e, &o);
	a.send_cq = e.cq;
	a.recv_cq = e.cq;
	qp = ib_create_qp(e.pd, &a);
	if (IS_ERR(qp)) {
		/* the device refuses such a QP: nothing to check */
		rw_env_teardown(&e);
		skip();
	}
	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], e.local, 100);
	sg_set_buf(&sg[1], e.local + 200, 100);
	assert_int_equal(
		rdma_rw_ctx_init(&ctx, qp, 1, sg, 2, 0, 0, 0, DMA_TO_DEVICE),
		-EINVAL);
	/* One entry would be the SINGLE path: it needs an SGE too. */
	assert_int_equal(
		rdma_rw_ctx_init(&ctx, qp, 1, sg, 1, 0, 0, 0, DMA_TO_DEVICE),
		-EINVAL);
	assert_int_equal(
		rdma_rw_ctx_init(&ctx, qp, 1, sg, 1, 0, 0, 0, DMA_FROM_DEVICE),
		-EINVAL);
	bvec_set_virt(&bv, e.local, 100);
	assert_int_equal(rdma_rw_ctx_init_bvec(&ctx, qp, 1, &bv, 1, it, 0, 0,
					       DMA_TO_DEVICE),
			 -EINVAL);
	assert_int_equal(rdmarw_dma_mapped(e.dev), 0);
	assert_int_equal(qp->mrs_used, 0);
	assert_int_equal(ib_destroy_qp(qp), 0);
	rw_env_teardown(&e);
}

static int initb(struct rw_env *e, struct rdma_rw_ctx *ctx,
		 const struct bio_vec *bv, u32 nr, struct bvec_iter it,
		 u32 port, enum dma_data_direction dir)
{
	return rdma_rw_ctx_init_bvec(ctx, e->qp, port, bv, nr, it,
				     rw_env_raddr(e, 0), e->remote_mr->rkey,
				     dir);
}

static void test_init_bvec_errors(void **state)
{
	struct bio_vec bv[4];
	struct rdma_rw_ctx ctx;
	struct bvec_iter it;
	struct rw_env e;
	unsigned int p, nr;
	const struct rw_profile *profiles = rw_test_profiles(&nr);

	for (p = 0; p < nr; p++) {
		setup(&e, &profiles[p], 2);
		bvec_set_virt(&bv[0], e.local + PAGE_SIZE, PAGE_SIZE);
		bvec_set_virt(&bv[1], e.local + 2 * PAGE_SIZE, PAGE_SIZE);
		bvec_set_virt(&bv[2], e.local + 3 * PAGE_SIZE, 0);
		bvec_set_virt(&bv[3], e.local + 4 * PAGE_SIZE, PAGE_SIZE);
		it = (struct bvec_iter){ .bi_size = 2 * PAGE_SIZE };
		assert_int_equal(rdma_rw_ctx_init_bvec(NULL, e.qp, 1, bv, 2, it,
						       0, 0, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(rdma_rw_ctx_init_bvec(&ctx, NULL, 1, bv, 2, it,
						       0, 0, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(initb(&e, &ctx, NULL, 2, it, 1, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(initb(&e, &ctx, bv, 0, it, 1, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(initb(&e, &ctx, bv, 2, it, 0, DMA_TO_DEVICE),
				 -EINVAL);
		assert_int_equal(
			initb(&e, &ctx, bv, 2, it, 1, DMA_BIDIRECTIONAL),
			-EINVAL);
		/* empty iterator */
		it.bi_size = 0;
		assert_int_equal(initb(&e, &ctx, bv, 2, it, 1, DMA_TO_DEVICE),
				 -EINVAL);
		/* an iterator that runs past nr_bvec */
		it.bi_size = 2 * PAGE_SIZE + 1;
		assert_int_equal(initb(&e, &ctx, bv, 2, it, 1, DMA_TO_DEVICE),
				 -EINVAL);
		it = (struct bvec_iter){ .bi_size = 10, .bi_idx = 2 };
		assert_int_equal(initb(&e, &ctx, bv, 2, it, 1, DMA_FROM_DEVICE),
				 -EINVAL);
		/* an iterator that starts past its bio_vec's end */
		it = (struct bvec_iter){ .bi_size = 10,
					 .bi_bvec_done = PAGE_SIZE };
		assert_int_equal(initb(&e, &ctx, bv, 2, it, 1, DMA_FROM_DEVICE),
				 -EINVAL);
		/* an empty bio_vec inside the range (the kernel would spin) */
		it = (struct bvec_iter){ .bi_size = 3 * PAGE_SIZE };
		assert_int_equal(initb(&e, &ctx, bv, 4, it, 1, DMA_TO_DEVICE),
				 -EINVAL);
		/* within the array: fine */
		it = (struct bvec_iter){ .bi_size = PAGE_SIZE + 10,
					 .bi_bvec_done = 10 };
		assert_true(initb(&e, &ctx, bv, 2, it, 1, DMA_TO_DEVICE) > 0);
		rdma_rw_ctx_destroy_bvec(&ctx, e.qp, 1, bv, 2, DMA_TO_DEVICE);
		assert_untouched(&e);
		rw_env_teardown(&e);
	}
}

static void test_wrs_and_post_errors(void **state)
{
	struct rw_env e, other;
	struct scatterlist sg[5];
	struct rdma_rw_ctx ctx, zero;
	struct ib_cqe cqe = { 0 };
	struct ib_send_wr chain = { .opcode = IB_WR_SEND };
	int i;

	rw_skip_on_device(); /* an MR context, and a QP moved to RESET */
	setup(&e, &rw_profiles[0], 2);
	setup(&other, &rw_profiles[0], 2);
	sg_init_table(sg, 5);
	for (i = 0; i < 5; i++)
		sg_set_buf(&sg[i], e.local + (i + 1) * PAGE_SIZE, PAGE_SIZE);
	assert_true(init3(&e, &ctx, sg, 5, 0, 1, DMA_FROM_DEVICE) > 0);
	assert_int_equal(ctx.type, RDMA_RW_MR);
	memset(&zero, 0, sizeof(zero));
	/* wrs: NULL on bad input, no key touched */
	{
		u32 k0 = ctx.reg[0].mr->lkey;

		assert_null(rdma_rw_ctx_wrs(NULL, e.qp, 1, &cqe, NULL));
		assert_null(rdma_rw_ctx_wrs(&ctx, NULL, 1, &cqe, NULL));
		assert_null(rdma_rw_ctx_wrs(&ctx, e.qp, 0, &cqe, NULL));
		assert_null(rdma_rw_ctx_wrs(&ctx, e.qp, 3, &cqe, NULL));
		assert_null(rdma_rw_ctx_wrs(&ctx, e.qp, 1, NULL, NULL));
		assert_null(rdma_rw_ctx_wrs(&ctx, other.qp, 1, &cqe, NULL));
		assert_null(rdma_rw_ctx_wrs(&zero, e.qp, 1, &cqe, NULL));
		assert_int_equal(ctx.reg[0].mr->lkey, k0);
		/* post: -EINVAL for the same */
		assert_int_equal(rdma_rw_ctx_post(NULL, e.qp, 1, &cqe, NULL),
				 -EINVAL);
		assert_int_equal(rdma_rw_ctx_post(&ctx, NULL, 1, &cqe, NULL),
				 -EINVAL);
		assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 7, &cqe, NULL),
				 -EINVAL);
		assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, NULL, NULL),
				 -EINVAL);
		assert_int_equal(
			rdma_rw_ctx_post(&ctx, other.qp, 1, &cqe, NULL),
			-EINVAL);
		assert_int_equal(rdma_rw_ctx_post(&zero, e.qp, 1, &cqe, NULL),
				 -EINVAL);
		assert_int_equal(ctx.reg[0].mr->lkey, k0);
		(void)chain;
	}
	/* a QP that cannot send: ib_post_send's -EINVAL, keys given back */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
		u32 k0 = ctx.reg[0].mr->lkey;
		bool inv = ctx.reg[0].mr->need_inval;

		assert_int_equal(ib_modify_qp(e.qp, &a, IB_QP_STATE), 0);
		assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &cqe, NULL),
				 -EINVAL);
		assert_int_equal(ctx.reg[0].mr->lkey, k0);
		assert_int_equal(ctx.reg[0].mr->need_inval, inv);
	}
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 5, DMA_FROM_DEVICE);
	assert_untouched(&e);
	rw_env_teardown(&other);
	rw_env_teardown(&e);
}

/* Run @fn with stderr captured; return what it printed. */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	char *buf = calloc(1, 8192);
	size_t n;

	assert_non_null(tmp);
	assert_non_null(buf);
	fflush(stderr);
	assert_true(dup2(fileno(tmp), 2) >= 0);
	fn(arg);
	fflush(stderr);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, 8191, tmp);
	buf[n] = 0;
	fclose(tmp);
	return buf;
}

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

struct misuse {
	struct rw_env *e;
	struct scatterlist *sg;
	struct bio_vec *bv;
	struct rdma_rw_ctx *sgctx, *bvctx;
	struct rw_env *other;
};

static void misuse(void *arg)
{
	struct misuse *m = arg;
	int i;

	for (i = 0; i < 3; i++) {
		/* a bvec context to rdma_rw_ctx_destroy, and back */
		rdma_rw_ctx_destroy(m->bvctx, m->e->qp, 1, m->sg, 5,
				    DMA_TO_DEVICE);
		rdma_rw_ctx_destroy_bvec(m->sgctx, m->e->qp, 1, m->bv, 5,
					 DMA_TO_DEVICE);
		/* the wrong QP, NULLs */
		rdma_rw_ctx_destroy(m->sgctx, m->other->qp, 1, m->sg, 5,
				    DMA_TO_DEVICE);
		rdma_rw_ctx_destroy(NULL, m->e->qp, 1, m->sg, 5, DMA_TO_DEVICE);
		rdma_rw_ctx_destroy_bvec(m->bvctx, NULL, 1, m->bv, 5,
					 DMA_TO_DEVICE);
	}
}

static void double_destroy(void *arg)
{
	struct misuse *m = arg;

	rdma_rw_ctx_destroy(m->sgctx, m->e->qp, 1, m->sg, 5, DMA_TO_DEVICE);
	rdma_rw_ctx_destroy_bvec(m->bvctx, m->e->qp, 1, m->bv, 5,
				 DMA_TO_DEVICE);
}

/*
 * Destroy with the wrong kind of context (for each kind the API builds:
 * SINGLE, MULTI, MR, IOVA), the wrong QP, NULLs, twice: one warning per
 * kind of misuse, nothing released, and the right destroy still works.
 */
static void test_destroy_wrong_kind(void **state)
{
	unsigned int p, nr;
	const struct rw_profile *profiles = rw_test_profiles(&nr);
	char *out;
	unsigned int warnings = 0;

	for (p = 0; p < nr; p++) {
		struct rdma_rw_ctx sgctx, bvctx;
		struct scatterlist sg[5];
		struct bio_vec bv[5];
		struct bvec_iter it = { .bi_size = 5 * PAGE_SIZE };
		struct rw_env e, other;
		struct misuse m = { &e, sg, bv, &sgctx, &bvctx, &other };
		long mapped;
		int used, i;

		/* MR contexts on siw */
		rdma_rw_set_force_mr(!profiles[p].ibv && p == 2);
		setup(&e, &profiles[p], 4);
		setup(&other, &profiles[p], 0);
		sg_init_table(sg, 5);
		for (i = 0; i < 5; i++) {
			sg_set_buf(&sg[i], e.local + (i + 1) * PAGE_SIZE,
				   PAGE_SIZE);
			bvec_set_virt(&bv[i], e.local + (i + 10) * PAGE_SIZE,
				      PAGE_SIZE);
		}
		assert_true(init3(&e, &sgctx, sg, 5, 0, 1, DMA_TO_DEVICE) > 0);
		assert_true(initb(&e, &bvctx, bv, 5, it, 1, DMA_TO_DEVICE) > 0);
		mapped = rdmarw_dma_mapped(e.dev);
		used = e.qp->mrs_used;
		out = capture_stderr(misuse, &m);
		warnings += count(out, "rdmarw: WARNING");
		free(out);
		assert_int_equal(rdmarw_dma_mapped(e.dev), mapped);
		assert_int_equal(e.qp->mrs_used, used);
		assert_int_equal(e.qp->rw_cache->in_use,
				 (sgctx.type != RDMA_RW_SINGLE_WR) +
					 (bvctx.type == RDMA_RW_MULTI_WR ||
					  bvctx.type == RDMA_RW_MR));
		/* the contexts still work */
		{
			struct rw_done d;

			rw_done_init(&d);
			assert_int_equal(
				rdma_rw_ctx_post(&sgctx, e.qp, 1, &d.cqe, NULL),
				0);
			assert_int_equal(
				rdma_rw_ctx_post(&bvctx, e.qp, 1, &d.cqe, NULL),
				0);
			rw_env_wait(&e, &d.count, 2);
			assert_int_equal(d.status, IB_WC_SUCCESS);
		}
		rdma_rw_ctx_destroy(&sgctx, e.qp, 1, sg, 5, DMA_TO_DEVICE);
		rdma_rw_ctx_destroy_bvec(&bvctx, e.qp, 1, bv, 5, DMA_TO_DEVICE);
		assert_untouched(&e);
		/* destroyed twice: warned about, nothing released twice */
		out = capture_stderr(double_destroy, &m);
		free(out);
		assert_untouched(&e);
		rw_env_teardown(&other);
		rw_env_teardown(&e);
		rdma_rw_set_force_mr(false);
	}
	/* each kind of misuse warned once for the whole process: the two
	 * destroy functions each warn once for a wrong kind and once for a
	 * context not initialised on the QP */
	assert_int_equal(warnings, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_init_no_sge),
		cmocka_unit_test(test_init_bvec_errors),
		cmocka_unit_test(test_wrs_and_post_errors),
		cmocka_unit_test(test_destroy_wrong_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

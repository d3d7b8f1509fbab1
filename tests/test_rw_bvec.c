// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_rw_ctx_init_bvec() on every software profile, READ and WRITE, every
 * SGL shape as bio_vecs, with iterators that start inside the array and
 * stop short of its end: the path, every WR field and every byte against
 * the model.  The IOVA path runs for real on the rxe profile with the
 * emulated IOMMU (one SGE over an IOVA range, destroyed with the context);
 * devices with virtual DMA fall back to one SGE per bio_vec; iWARP READs
 * and force_mr register through a scatterlist built from the bio_vecs.
 * On an ibv device (RDMARW_TEST_DEVICE) the shapes and windows run there,
 * one SGE per bio_vec.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"
#include "rw/rw_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NR_SHAPES 32

struct tally {
	unsigned int paths[RDMA_RW_IOVA + 1];
	unsigned int errors;
};

/* Iterator windows: whole array, a start inside the first bio_vec, a
 * start in the second and an end short of the last. */
static void windows(const struct rw_shape *s, u32 *skip, u32 *trim, int w)
{
	u64 total = 0;
	u32 i;

	for (i = 0; i < s->n; i++)
		total += s->ents[i].len;
	*skip = 0;
	*trim = 0;
	if (w == 1 && total > 200)
		*skip = 100;
	if (w == 2 && s->n > 2) {
		*skip = s->ents[0].len + 50;
		*trim = s->ents[s->n - 1].len > 70 ? 70 : 0;
	}
}

static void run_dir(struct rw_env *e, enum dma_data_direction dir,
		    struct tally *t)
{
	struct rw_shape *shapes = calloc(NR_SHAPES, sizeof(*shapes));
	u32 n, i, total = 0;
	int w;

	assert_non_null(shapes);
	memset(t, 0, sizeof(*t));
	n = rw_shapes(e, dir, shapes, NR_SHAPES);
	for (i = 0; i < n; i++) {
		for (w = 0; w < 3; w++) {
			struct rw_case c = {
				.name = shapes[i].name,
				.ents = shapes[i].ents,
				.n = shapes[i].n,
				.bvec = true,
				.dir = dir,
				.roff = (total * 4099 + 5) %
					(e->remote_len / 2),
				.use_chain = w == 1,
			};
			enum rdma_rw_ctx_type type;

			windows(&shapes[i], &c.skip, &c.trim, w);
			total++;
			if (rw_run_case(e, &c, &type) < 0)
				t->errors++;
			else
				t->paths[type]++;
		}
	}
	free(shapes);
}

/* The paths each profile must take, stated without the model. */
static void expect_paths(const struct rw_profile *p, bool force,
			 enum dma_data_direction dir, const struct tally *t)
{
	bool read = dir == DMA_FROM_DEVICE, siw = !strcmp(p->name, "siw");

	assert_int_equal(t->paths[RDMA_RW_SIG_MR], 0);
	if (force || (read && siw)) {
		assert_true(t->paths[RDMA_RW_MR] > 0);
		assert_true(t->errors > 0); /* page rules: gaps */
		assert_int_equal(t->paths[RDMA_RW_MULTI_WR] +
					 t->paths[RDMA_RW_SINGLE_WR] +
					 t->paths[RDMA_RW_IOVA],
				 0);
		return;
	}
	/* no max_sgl_rd gate on this path: mlx5 READs do not register */
	assert_int_equal(t->paths[RDMA_RW_MR], 0);
	assert_true(t->paths[RDMA_RW_SINGLE_WR] > 0);
	if (p->iommu) {
		assert_true(t->paths[RDMA_RW_IOVA] > 0);
		assert_int_equal(t->paths[RDMA_RW_MULTI_WR], 0);
		/* bio_vecs that do not line up with pages cannot be linked */
		assert_true(t->errors > 0);
	} else {
		assert_true(t->paths[RDMA_RW_MULTI_WR] > 0);
		assert_int_equal(t->paths[RDMA_RW_IOVA], 0);
		assert_int_equal(t->errors, 0);
	}
}

static void run_profile(const struct rw_profile *p, bool force)
{
	struct rw_env_opts o = {
		.profile = p,
		.max_rdma_ctxs = 4,
		.local_len = 3 << 20,
		.remote_len = 3 << 20,
	};
	struct tally t;
	struct rw_env e;

	rdma_rw_set_force_mr(force);
	rw_env_setup(&e, &o);
	run_dir(&e, DMA_TO_DEVICE, &t);
	expect_paths(p, force, DMA_TO_DEVICE, &t);
	run_dir(&e, DMA_FROM_DEVICE, &t);
	expect_paths(p, force, DMA_FROM_DEVICE, &t);
	rw_env_teardown(&e);
	rdma_rw_set_force_mr(false);
}

static void test_bvec_mlx5(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[0], false);
}

static void test_bvec_rxe(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[1], false);
}

static void test_bvec_siw(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[2], false);
}

static void test_bvec_rxe_iommu(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[3], false);
}

/* The device under test (RDMARW_TEST_DEVICE). */
static void test_bvec_device(void **state)
{
	rw_skip_on_soft();
	run_profile(rw_test_device(), false);
}

static void test_bvec_force_mr(void **state)
{
	unsigned int i;

	rw_skip_on_device();
	for (i = 0; i < rw_nr_profiles; i++)
		run_profile(&rw_profiles[i], true);
}

/*
 * The IOVA context itself: one SGE whose address is an IOVA (not the CPU
 * address of the data), one range on the device while the context lives,
 * none after destroy; multi-page bio_vecs included.
 */
static void test_iova_range(void **state)
{
	struct rw_env_opts o = {
		.profile = &rw_profiles[3],
		.local_len = 1 << 20,
		.remote_len = 1 << 20,
	};
	struct bio_vec bv[3];
	struct bvec_iter it = { 0 };
	struct rdma_rw_ctx ctx;
	struct soft_stats st;
	struct rw_done d;
	struct rw_env e;

	rw_skip_on_device(); /* the emulated IOMMU */
	rw_env_setup(&e, &o);
	/* 3000 bytes ending a page, two pages, 5 pages + 100 */
	bvec_set_virt(&bv[0], e.local + 2 * PAGE_SIZE - 3000, 3000);
	bvec_set_virt(&bv[1], e.local + 8 * PAGE_SIZE, 2 * PAGE_SIZE);
	bvec_set_virt(&bv[2], e.local + 20 * PAGE_SIZE, 5 * PAGE_SIZE + 100);
	it.bi_size = 3000 + 7 * PAGE_SIZE + 100;
	assert_int_equal(rdma_rw_ctx_init_bvec(&ctx, e.qp, 1, bv, 3, it,
					       rw_env_raddr(&e, 12345),
					       e.remote_mr->rkey,
					       DMA_TO_DEVICE),
			 1);
	assert_int_equal(ctx.type, RDMA_RW_IOVA);
	assert_int_equal(ctx.nr_ops, 1);
	assert_int_equal(ctx.iova.sge.length, it.bi_size);
	assert_int_equal(ctx.iova.mapped_len, it.bi_size);
	assert_true(ctx.iova.sge.addr !=
		    (u64)(uintptr_t)(e.local + 2 * PAGE_SIZE - 3000));
	assert_int_equal(ctx.iova.sge.addr % PAGE_SIZE, PAGE_SIZE - 3000);
	assert_int_equal(soft_device_stats(e.dev, &st), 0);
	assert_int_equal(st.iova_ranges, 1);
	assert_int_equal(rdmarw_dma_mapped(e.dev), 0); /* linked, not mapped */
	rw_done_init(&d);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &d.cqe, NULL), 0);
	rw_env_wait(&e, &d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
	{
		struct rw_model_ent ents[3];
		unsigned int i;

		for (i = 0; i < 3; i++) {
			ents[i].addr = (u64)bvec_phys(&bv[i]);
			ents[i].len = bv[i].bv_len;
		}
		rw_env_expect(&e, ents, 3, 0, 12345, DMA_TO_DEVICE);
	}
	rw_env_check(&e);
	rdma_rw_ctx_destroy_bvec(&ctx, e.qp, 1, bv, 3, DMA_TO_DEVICE);
	assert_int_equal(soft_device_stats(e.dev, &st), 0);
	assert_int_equal(st.iova_ranges, 0);
	rw_env_teardown(&e);
}

/* An IOVA link that fails is final, and leaves no range behind. */
static void test_iova_link_failure(void **state)
{
	struct rw_env_opts o = {
		.profile = &rw_profiles[3],
		.local_len = 1 << 20,
		.remote_len = 1 << 20,
	};
	struct bio_vec bv[2];
	struct bvec_iter it = { .bi_size = 2000 };
	struct rdma_rw_ctx ctx;
	struct soft_stats st;
	struct rw_env e;

	rw_skip_on_device(); /* the emulated IOMMU */
	rw_env_setup(&e, &o);
	bvec_set_virt(&bv[0], e.local + PAGE_SIZE, 1000);
	bvec_set_virt(&bv[1], e.local + 5 * PAGE_SIZE + 8, 1000);
	assert_int_equal(rdma_rw_ctx_init_bvec(
				 &ctx, e.qp, 1, bv, 2, it, rw_env_raddr(&e, 0),
				 e.remote_mr->rkey, DMA_FROM_DEVICE),
			 -EINVAL);
	assert_int_equal(soft_device_stats(e.dev, &st), 0);
	assert_int_equal(st.iova_ranges, 0);
	assert_int_equal(rdmarw_dma_mapped(e.dev), 0);
	rw_env_teardown(&e);
}

/* A bvec MR context keeps its scatterlist in the QP's storage; destroy
 * unmaps it (dma_mapped back to 0) and returns MRs and storage. */
static void test_bvec_mr_storage(void **state)
{
	struct rw_env_opts o = {
		.profile = &rw_profiles[2],
		.max_rdma_ctxs = 2,
		.local_len = 2 << 20,
		.remote_len = 2 << 20,
	};
	struct bio_vec bv[300];
	struct bvec_iter it = { 0 };
	struct rdma_rw_ctx ctx;
	struct rw_done d;
	struct rw_env e;
	unsigned int i;

	rw_skip_on_device(); /* fast registration */
	rw_env_setup(&e, &o);
	for (i = 0; i < 300; i++) {
		bvec_set_virt(&bv[i], e.local + (i + 1) * PAGE_SIZE, PAGE_SIZE);
		it.bi_size += PAGE_SIZE;
	}
	/* 300 pages on siw: two MRs (256 + 44), READ_WITH_INV */
	assert_int_equal(rdma_rw_ctx_init_bvec(&ctx, e.qp, 1, bv, 300, it,
					       rw_env_raddr(&e, 0),
					       e.remote_mr->rkey,
					       DMA_FROM_DEVICE),
			 4);
	assert_int_equal(ctx.type, RDMA_RW_MR);
	assert_int_equal(ctx.nr_ops, 2);
	assert_int_equal(ctx.reg[0].sgt.orig_nents, 300);
	assert_int_equal(rdmarw_dma_mapped(e.dev), 300);
	assert_int_equal(e.qp->mrs_used, 2);
	assert_int_equal(e.qp->rw_cache->in_use, 1);
	rw_done_init(&d);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &d.cqe, NULL), 0);
	rw_env_wait(&e, &d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
	rdma_rw_ctx_destroy_bvec(&ctx, e.qp, 1, bv, 300, DMA_FROM_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(e.dev), 0);
	assert_int_equal(e.qp->mrs_used, 0);
	assert_int_equal(e.qp->rw_cache->in_use, 0);
	rw_env_teardown(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bvec_mlx5),
		cmocka_unit_test(test_bvec_rxe),
		cmocka_unit_test(test_bvec_siw),
		cmocka_unit_test(test_bvec_rxe_iommu),
		cmocka_unit_test(test_bvec_device),
		cmocka_unit_test(test_bvec_force_mr),
		cmocka_unit_test(test_iova_range),
		cmocka_unit_test(test_iova_link_failure),
		cmocka_unit_test(test_bvec_mr_storage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Chain shape and bytes of rdma_rw_ctx_init() on every software profile,
 * READ and WRITE, every SGL shape, with a cqe and with chain_wr, with and
 * without force_mr: the context's path and every field of every WR equal
 * the independent model's, the return value is the WQE count, the posted
 * chain moves exactly the expected bytes (guard bytes unchanged) and
 * nothing stays mapped or taken.  On an ibv device (RDMARW_TEST_DEVICE)
 * the same shapes run there instead, over the SGE paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#define NR_SHAPES 32

struct tally {
	unsigned int paths[RDMA_RW_IOVA + 1];
	unsigned int errors;
};

static void run_dir(struct rw_env *e, enum dma_data_direction dir,
		    struct tally *t)
{
	struct rw_shape *shapes = calloc(NR_SHAPES, sizeof(*shapes));
	u32 n, i, total = 0;
	int chain;

	assert_non_null(shapes);
	memset(t, 0, sizeof(*t));
	n = rw_shapes(e, dir, shapes, NR_SHAPES);
	assert_true(n >= 14);
	for (i = 0; i < n; i++) {
		for (chain = 0; chain < 2; chain++) {
			struct rw_case c = {
				.name = shapes[i].name,
				.ents = shapes[i].ents,
				.n = shapes[i].n,
				.offset = shapes[i].offset,
				.chunk = shapes[i].chunk,
				.dir = dir,
				.roff = (total * 4099 + 17) %
					(e->remote_len / 2),
				.use_chain = chain,
			};
			enum rdma_rw_ctx_type type;

			total++;
			if (rw_run_case(e, &c, &type) < 0)
				t->errors++;
			else
				t->paths[type]++;
		}
	}
	free(shapes);
}

/*
 * Which paths each profile must take, stated here without the model, so
 * that the model and the library cannot agree on a wrong path unnoticed.
 */
static void expect_paths(const struct rw_profile *p, bool force,
			 enum dma_data_direction dir, const struct tally *t)
{
	bool read = dir == DMA_FROM_DEVICE;
	bool mlx5 = !strcmp(p->name, "mlx5"), siw = !strcmp(p->name, "siw");

	assert_int_equal(t->paths[RDMA_RW_IOVA], 0);
	assert_int_equal(t->paths[RDMA_RW_SIG_MR], 0);
	if (p->ibv) {
		/* no fast registration: SGEs for everything, no refusal */
		assert_int_equal(t->paths[RDMA_RW_MR], 0);
		assert_true(t->paths[RDMA_RW_MULTI_WR] > 0);
		assert_true(t->paths[RDMA_RW_SINGLE_WR] > 0);
		assert_int_equal(t->errors, 0);
		return;
	}
	if (force || (read && siw)) {
		assert_true(t->paths[RDMA_RW_MR] > 0);
		assert_int_equal(t->paths[RDMA_RW_MULTI_WR], 0);
		assert_int_equal(t->paths[RDMA_RW_SINGLE_WR], 0);
	} else if (read && mlx5) {
		/* max_sgl_rd 3: longer READs register, short ones do not */
		assert_true(t->paths[RDMA_RW_MR] > 0);
		assert_true(t->paths[RDMA_RW_MULTI_WR] > 0);
		assert_true(t->paths[RDMA_RW_SINGLE_WR] > 0);
	} else {
		assert_int_equal(t->paths[RDMA_RW_MR], 0);
		assert_true(t->paths[RDMA_RW_MULTI_WR] > 0);
		assert_true(t->paths[RDMA_RW_SINGLE_WR] > 0);
		assert_int_equal(t->errors, 0);
	}
	/* The page rules refuse gaps and multi-page entries in an MR (rxe
	 * and siw alike: siw maps through ib_sg_to_pages() too). */
	if (t->paths[RDMA_RW_MR])
		assert_true(t->errors > 0);
	else
		assert_int_equal(t->errors, 0);
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

static void test_chain_mlx5(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[0], false);
}

static void test_chain_rxe(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[1], false);
}

static void test_chain_siw(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[2], false);
}

static void test_chain_rxe_iommu(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[3], false);
}

static void test_chain_mlx5_force_mr(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[0], true);
}

static void test_chain_rxe_force_mr(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[1], true);
}

static void test_chain_siw_force_mr(void **state)
{
	rw_skip_on_device();
	run_profile(&rw_profiles[2], true);
}

/* The device under test (RDMARW_TEST_DEVICE). */
static void test_chain_device(void **state)
{
	rw_skip_on_soft();
	run_profile(rw_test_device(), false);
}

/* A QP with fewer SGEs than its device: the QP's cap is the limit. */
static void test_chain_small_sge_cap(void **state)
{
	struct rw_env_opts o = {
		.profile = rw_test_pick(&rw_profiles[1]),
		.max_send_sge = 3,
		.local_len = 3 << 20,
		.remote_len = 3 << 20,
	};
	struct tally t;
	struct rw_env e;

	rw_env_setup(&e, &o);
	assert_int_equal(rw_test_max_sge(&e, DMA_TO_DEVICE), 3);
	run_dir(&e, DMA_TO_DEVICE, &t);
	assert_true(t.paths[RDMA_RW_MULTI_WR] > 0);
	run_dir(&e, DMA_FROM_DEVICE, &t);
	assert_true(t.paths[RDMA_RW_MULTI_WR] > 0);
	rw_env_teardown(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_mlx5),
		cmocka_unit_test(test_chain_rxe),
		cmocka_unit_test(test_chain_siw),
		cmocka_unit_test(test_chain_rxe_iommu),
		cmocka_unit_test(test_chain_mlx5_force_mr),
		cmocka_unit_test(test_chain_rxe_force_mr),
		cmocka_unit_test(test_chain_siw_force_mr),
		cmocka_unit_test(test_chain_device),
		cmocka_unit_test(test_chain_small_sge_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

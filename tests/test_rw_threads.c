// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Several threads initialise, post and destroy contexts on one QP at once
 * (SINGLE, MULTI, MR and bio_vec contexts), with devices and the CQ running
 * on their own threads: every completion is a success, every transfer moves
 * its thread's bytes, and the MR pool and context storage end as they
 * started.  On an ibv device (RDMARW_TEST_DEVICE) the threads share a QP
 * there (SGE paths).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"
#include "rw/rw_internal.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#define THREADS 4
#define CYCLES 100
#define REGION (64 * PAGE_SIZE)

struct flag {
	struct ib_cqe cqe;
	int done;
	enum ib_wc_status status;
};

static void flag_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct flag *f = container_of(wc->wr_cqe, struct flag, cqe);

	f->status = wc->status;
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
}

struct worker {
	struct rw_env *e;
	int id;
	int failures;
};

static void pattern(u8 *p, size_t n, u32 seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (u8)(seed * 31 + i * 7 + (i >> 8));
}

static bool wait_flag(struct flag *f)
{
	unsigned long spins;

	for (spins = 0; !__atomic_load_n(&f->done, __ATOMIC_ACQUIRE); spins++) {
		if (spins > 200000000UL)
			return false;
		sched_yield();
	}
	return f->status == IB_WC_SUCCESS;
}

/* One cycle of kind @k: init, post, wait, check bytes, destroy. */
static bool cycle(struct worker *w, int k, u32 seed)
{
	struct rw_env *e = w->e;
	u8 *loc = e->local + (size_t)w->id * REGION;
	u64 roff = (u64)w->id * REGION;
	u8 *rem = e->remote + roff;
	enum dma_data_direction dir = k % 2 ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	u32 n = k == 0 ? 1 : (k == 1 ? 10 : 8), i;
	struct scatterlist sg[10];
	struct bio_vec bv[10];
	struct bvec_iter it = { 0 };
	struct rdma_rw_ctx ctx;
	struct flag f = { .cqe.done = flag_done };
	bool bvec = k >= 3, ok;
	size_t len = (size_t)n * PAGE_SIZE - 100;

	pattern(dir == DMA_TO_DEVICE ? loc : rem, len, seed);
	sg_init_table(sg, n);
	for (i = 0; i < n; i++) {
		u32 l = i + 1 == n ? PAGE_SIZE - 100 : PAGE_SIZE;

		sg_set_buf(&sg[i], loc + i * PAGE_SIZE, l);
		bvec_set_virt(&bv[i], loc + i * PAGE_SIZE, l);
		it.bi_size += l;
	}
	if (bvec)
		ok = rdma_rw_ctx_init_bvec(&ctx, e->qp, 1, bv, n, it,
					   rw_env_raddr(e, roff),
					   e->remote_mr->rkey, dir) > 0;
	else
		ok = rdma_rw_ctx_init(&ctx, e->qp, 1, sg, n, 0,
				      rw_env_raddr(e, roff), e->remote_mr->rkey,
				      dir) > 0;
	if (!ok)
		return false;
	ok = rdma_rw_ctx_post(&ctx, e->qp, 1, &f.cqe, NULL) == 0 &&
	     wait_flag(&f);
	if (ok && dir == DMA_TO_DEVICE)
		rw_env_settle(e); /* iWARP: the WRITE may not have landed */
	ok = ok && !memcmp(loc, rem, len);
	if (bvec)
		rdma_rw_ctx_destroy_bvec(&ctx, e->qp, 1, bv, n, dir);
	else
		rdma_rw_ctx_destroy(&ctx, e->qp, 1, sg, n, dir);
	return ok;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int c;

	for (c = 0; c < CYCLES; c++)
		if (!cycle(w, c % 5, (u32)(w->id * 1000 + c)))
			w->failures++;
	return NULL;
}

static void run(const struct rw_profile *p, bool force)
{
	struct rw_env_opts o = {
		.profile = p,
		.max_rdma_ctxs = 2 * THREADS,
		.local_len = THREADS * REGION,
		.remote_len = THREADS * REGION,
		.threaded = true,
		.cq_thread = true,
	};
	struct worker w[THREADS];
	pthread_t t[THREADS];
	struct rw_env e;
	unsigned long blocks;
	int i;

	rdma_rw_set_force_mr(force);
	rw_env_setup(&e, &o);
	blocks = e.qp->rw_cache->nr_blocks;
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .e = &e, .id = i };
		assert_int_equal(
			pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(w[i].failures, 0);
	assert_int_equal(e.qp->mrs_used, 0);
	assert_int_equal(e.qp->rw_cache->in_use, 0);
	/* storage grew at most by what the threads held at once */
	assert_true(e.qp->rw_cache->nr_blocks <= blocks + 2 * THREADS);
	/* the references no longer describe the arenas: reset them */
	memcpy(e.local_ref, e.local, e.local_len);
	memcpy(e.remote_ref, e.remote, e.remote_len);
	rw_env_teardown(&e);
	rdma_rw_set_force_mr(false);
}

static void test_threads_mlx5(void **state)
{
	rw_skip_on_device();
	run(&rw_profiles[0], false);
}

static void test_threads_siw(void **state)
{
	rw_skip_on_device();
	run(&rw_profiles[2], false);
}

static void test_threads_rxe_iommu(void **state)
{
	rw_skip_on_device();
	run(&rw_profiles[3], false);
}

static void test_threads_rxe_force_mr(void **state)
{
	rw_skip_on_device();
	run(&rw_profiles[1], true);
}

/* The device under test (RDMARW_TEST_DEVICE). */
static void test_threads_device(void **state)
{
	rw_skip_on_soft();
	run(rw_test_device(), false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_mlx5),
		cmocka_unit_test(test_threads_siw),
		cmocka_unit_test(test_threads_rxe_iommu),
		cmocka_unit_test(test_threads_rxe_force_mr),
		cmocka_unit_test(test_threads_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

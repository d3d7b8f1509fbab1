// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * No heap allocation in steady state, on any path: after warm-up, N cycles
 * of init / wrs / post / poll / destroy make no allocation, for SINGLE,
 * MULTI, MR (LOCAL_INV and READ_WITH_INV), the -EAGAIN fallback, chain_wr,
 * every bio_vec path (SINGLE, MULTI, MR through a built scatterlist, IOVA)
 * and the error path.
 *
 * This program is linked with -Wl,--wrap for malloc, calloc, realloc,
 * posix_memalign and aligned_alloc (tests/CMakeLists.txt), so every call
 * from the library, the software device and the test lands in a counter
 * here; it works the same under ASan and valgrind, whose allocators sit
 * behind the __real_ functions.  The emulated IOMMU builds a page table per
 * IOVA range, as a real IOMMU driver does, which is the device's business
 * and not the R/W API's: rdmarw__soft_iova_alloc is wrapped too, and what
 * it allocates is counted apart.  On an ibv device (RDMARW_TEST_DEVICE) the
 * SGE paths run there: posting translates without allocating, the pages
 * the cycles touch being registered once (declared, or cached on demand
 * during the warm-up).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"
#include "rw/rw_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 3
#define CYCLES 50

static int counting;
static long allocs, iommu_allocs;
static __thread int in_iommu;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_rdmarw__soft_iova_alloc(struct ib_device *dev,
				   struct dma_iova_state *state,
				   phys_addr_t phys, size_t size);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_rdmarw__soft_iova_alloc(struct ib_device *dev,
				   struct dma_iova_state *state,
				   phys_addr_t phys, size_t size);

static void note(void)
{
	if (!__atomic_load_n(&counting, __ATOMIC_RELAXED))
		return;
	__atomic_add_fetch(in_iommu ? &iommu_allocs : &allocs, 1,
			   __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t n)
{
	note();
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	note();
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	note();
	return __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	note();
	return __real_posix_memalign(p, align, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	note();
	return __real_aligned_alloc(align, n);
}

int __wrap_rdmarw__soft_iova_alloc(struct ib_device *dev,
				   struct dma_iova_state *state,
				   phys_addr_t phys, size_t size)
{
	int ret;

	in_iommu++;
	ret = __real_rdmarw__soft_iova_alloc(dev, state, phys, size);
	in_iommu--;
	return ret;
}

static void count_start(void)
{
	__atomic_store_n(&allocs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&iommu_allocs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
}

static long count_stop(void)
{
	__atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&allocs, __ATOMIC_RELAXED);
}

/* ---- one path --------------------------------------------------------- */

#define MAXN 64

struct path {
	const char *name;
	u32 n; /* page entries (the last one shorter) */
	enum dma_data_direction dir;
	bool bvec;
	bool chain; /* chain_wr: a SEND to the peer */
	u32 offset; /* sg_offset (error path: past the end) */
	enum rdma_rw_ctx_type want;
	int want_ret; /* < 0: the init must fail with this */
};

struct bufs {
	struct scatterlist sg[MAXN];
	struct bio_vec bv[MAXN];
	struct bvec_iter it;
	struct ib_send_wr send;
	struct ib_sge ssge, rsge;
	struct ib_recv_wr rwr;
	u8 sbuf[16], rbuf[64];
	struct rw_done done, sdone, rdone;
};

static void prepare(struct rw_env *e, const struct path *p, struct bufs *b)
{
	u32 i;

	memset(b, 0, sizeof(*b));
	sg_init_table(b->sg, p->n);
	for (i = 0; i < p->n; i++) {
		u32 len = i + 1 == p->n ? PAGE_SIZE - 60 : PAGE_SIZE;
		u8 *at = e->local + (i + 1) * PAGE_SIZE;

		sg_set_buf(&b->sg[i], at, len);
		bvec_set_virt(&b->bv[i], at, len);
		b->it.bi_size += len;
	}
	b->ssge = (struct ib_sge){ (u64)(uintptr_t)b->sbuf, 16,
				   e->pd->local_dma_lkey };
	b->rsge = (struct ib_sge){ (u64)(uintptr_t)b->rbuf, 64,
				   e->peer_pd->local_dma_lkey };
}

/* init, wrs + post, poll, destroy; returns false on any surprise */
static bool one_cycle(struct rw_env *e, const struct path *p, struct bufs *b)
{
	struct rdma_rw_ctx ctx;
	struct ib_send_wr *first;
	u64 raddr = rw_env_raddr(e, 4096);
	int ret;

	if (p->bvec)
		ret = rdma_rw_ctx_init_bvec(&ctx, e->qp, 1, b->bv, p->n, b->it,
					    raddr, e->remote_mr->rkey, p->dir);
	else
		ret = rdma_rw_ctx_init(&ctx, e->qp, 1, b->sg, p->n, p->offset,
				       raddr, e->remote_mr->rkey, p->dir);
	if (p->want_ret < 0)
		return ret == p->want_ret;
	if (ret <= 0 || ctx.type != p->want)
		return false;
	rw_done_init(&b->done);
	rw_done_init(&b->sdone);
	rw_done_init(&b->rdone);
	if (p->chain) {
		b->send = (struct ib_send_wr){ .opcode = IB_WR_SEND,
					       .sg_list = &b->ssge,
					       .num_sge = 1,
					       .send_flags = IB_SEND_SIGNALED,
					       .wr_cqe = &b->sdone.cqe };
		b->rwr = (struct ib_recv_wr){ .wr_cqe = &b->rdone.cqe,
					      .sg_list = &b->rsge,
					      .num_sge = 1 };
		if (ib_post_recv(e->peer_qp, &b->rwr, NULL))
			return false;
		/* siw completes a SEND before earlier READs' data lands */
		if (p->dir == DMA_FROM_DEVICE && rdma_protocol_iwarp(e->dev, 1))
			b->send.send_flags |= IB_SEND_FENCE;
		first = rdma_rw_ctx_wrs(&ctx, e->qp, 1, NULL, &b->send);
	} else {
		first = rdma_rw_ctx_wrs(&ctx, e->qp, 1, &b->done.cqe, NULL);
	}
	if (!first || ib_post_send(e->qp, first, NULL))
		return false;
	if (p->chain) {
		rw_env_wait(e, &b->sdone.count, 1);
		while (!b->rdone.count)
			ib_process_cq_direct(e->peer_cq, -1);
	} else {
		rw_env_wait(e, &b->done.count, 1);
	}
	if (p->bvec)
		rdma_rw_ctx_destroy_bvec(&ctx, e->qp, 1, b->bv, p->n, p->dir);
	else
		rdma_rw_ctx_destroy(&ctx, e->qp, 1, b->sg, p->n, p->dir);
	return (p->chain ? b->sdone.status : b->done.status) == IB_WC_SUCCESS;
}

static void run_paths(const struct rw_profile *prof, bool force, u32 ctxs,
		      const struct path *paths, unsigned int np, bool hold_pool)
{
	struct rw_env_opts o = {
		.profile = prof,
		.max_rdma_ctxs = ctxs,
		.local_len = 512 << 10,
		.remote_len = 512 << 10,
	};
	struct rdma_rw_ctx holder;
	struct scatterlist hsg[8];
	struct bufs *b = calloc(1, sizeof(*b));
	struct rw_env e;
	unsigned int i, c;

	assert_non_null(b);
	rdma_rw_set_force_mr(force);
	rw_env_setup(&e, &o);
	if (hold_pool) {
		/* a context that holds the pool's only MR: later MR-wanting
		 * READs fall back to SGEs */
		sg_init_table(hsg, 8);
		for (i = 0; i < 8; i++)
			sg_set_buf(&hsg[i], e.local + (100 + i) * PAGE_SIZE,
				   PAGE_SIZE);
		assert_int_equal(rdma_rw_ctx_init(&holder, e.qp, 1, hsg, 8, 0,
						  rw_env_raddr(&e, 0),
						  e.remote_mr->rkey,
						  DMA_FROM_DEVICE),
				 2);
		assert_int_equal(holder.type, RDMA_RW_MR);
	}
	for (i = 0; i < np; i++) {
		long n, in_dev;
		bool ok = true;

		prepare(&e, &paths[i], b);
		for (c = 0; c < WARMUP; c++)
			assert_true(one_cycle(&e, &paths[i], b));
		count_start();
		for (c = 0; c < CYCLES; c++)
			ok = one_cycle(&e, &paths[i], b) && ok;
		n = count_stop();
		in_dev = __atomic_load_n(&iommu_allocs, __ATOMIC_RELAXED);
		print_message(
			"%-12s %-36s %3ld allocations in %d cycles (emulated IOMMU: %ld)\n",
			prof->label, paths[i].name, n, CYCLES, in_dev);
		assert_true(ok);
		if (n)
			fail_msg("%s %s: %ld allocations in steady state",
				 prof->label, paths[i].name, n);
	}
	if (hold_pool)
		rdma_rw_ctx_destroy(&holder, e.qp, 1, hsg, 8, DMA_FROM_DEVICE);
	free(b);
	/* the references do not follow these transfers */
	memcpy(e.local_ref, e.local, e.local_len);
	memcpy(e.remote_ref, e.remote, e.remote_len);
	rw_env_teardown(&e);
	rdma_rw_set_force_mr(false);
}

/* The SGE paths (rxe's, and every ibv device's). */
static const struct path sge_paths[] = {
	{ "sg SINGLE WRITE", 1, DMA_TO_DEVICE, false, false, 0,
	  RDMA_RW_SINGLE_WR },
	{ "sg MULTI READ (2 WRs)", 40, DMA_FROM_DEVICE, false, false, 0,
	  RDMA_RW_MULTI_WR },
	{ "sg MULTI WRITE + chain_wr", 40, DMA_TO_DEVICE, false, true, 0,
	  RDMA_RW_MULTI_WR },
	{ "sg MULTI READ + chain_wr", 12, DMA_FROM_DEVICE, false, true, 0,
	  RDMA_RW_MULTI_WR },
	{ "sg offset past the end (-EINVAL)", 3, DMA_TO_DEVICE, false, false,
	  3 * PAGE_SIZE, RDMA_RW_SINGLE_WR, -EINVAL },
	{ "bvec SINGLE READ", 1, DMA_FROM_DEVICE, true, false, 0,
	  RDMA_RW_SINGLE_WR },
	{ "bvec MULTI WRITE", 50, DMA_TO_DEVICE, true, false, 0,
	  RDMA_RW_MULTI_WR },
};

static void test_rxe_paths(void **state)
{
	rw_skip_on_device();
	run_paths(&rw_profiles[1], false, 4, sge_paths,
		  sizeof(sge_paths) / sizeof(sge_paths[0]), false);
}

/* The device under test (RDMARW_TEST_DEVICE). */
static void test_device_paths(void **state)
{
	rw_skip_on_soft();
	run_paths(rw_test_device(), false, 4, sge_paths,
		  sizeof(sge_paths) / sizeof(sge_paths[0]), false);
}

static void test_mlx5_paths(void **state)
{
	const struct path paths[] = {
		{ "sg MR READ (LOCAL_INV)", 8, DMA_FROM_DEVICE, false, false, 0,
		  RDMA_RW_MR },
		{ "sg MR READ + chain_wr", 8, DMA_FROM_DEVICE, false, true, 0,
		  RDMA_RW_MR },
		{ "bvec MULTI READ", 8, DMA_FROM_DEVICE, true, false, 0,
		  RDMA_RW_MULTI_WR },
	};
	const struct path fallback[] = {
		{ "sg READ, pool empty: MULTI", 8, DMA_FROM_DEVICE, false,
		  false, 0, RDMA_RW_MULTI_WR },
	};

	rw_skip_on_device(); /* fast registration */
	run_paths(&rw_profiles[0], false, 2, paths,
		  sizeof(paths) / sizeof(paths[0]), false);
	run_paths(&rw_profiles[0], false, 1, fallback, 1, true);
}

static void test_siw_paths(void **state)
{
	const struct path paths[] = {
		{ "sg MR READ_WITH_INV", 8, DMA_FROM_DEVICE, false, false, 0,
		  RDMA_RW_MR },
		{ "bvec MR READ_WITH_INV", 8, DMA_FROM_DEVICE, true, false, 0,
		  RDMA_RW_MR },
		{ "sg MULTI WRITE (3 WRs)", 13, DMA_TO_DEVICE, false, false, 0,
		  RDMA_RW_MULTI_WR },
	};

	rw_skip_on_device(); /* fast registration */
	run_paths(&rw_profiles[2], false, 2, paths,
		  sizeof(paths) / sizeof(paths[0]), false);
}

static void test_force_mr_paths(void **state)
{
	const struct path paths[] = {
		{ "sg MR WRITE", 60, DMA_TO_DEVICE, false, false, 0,
		  RDMA_RW_MR },
		{ "bvec MR WRITE", 8, DMA_TO_DEVICE, true, false, 0,
		  RDMA_RW_MR },
	};

	rw_skip_on_device(); /* fast registration */
	run_paths(&rw_profiles[1], true, 4, paths,
		  sizeof(paths) / sizeof(paths[0]), false);
}

static void test_iova_path(void **state)
{
	const struct path paths[] = {
		{ "bvec IOVA WRITE", 8, DMA_TO_DEVICE, true, false, 0,
		  RDMA_RW_IOVA },
		{ "bvec IOVA READ + chain_wr", 8, DMA_FROM_DEVICE, true, true,
		  0, RDMA_RW_IOVA },
	};

	rw_skip_on_device(); /* the emulated IOMMU */
	run_paths(&rw_profiles[3], false, 2, paths,
		  sizeof(paths) / sizeof(paths[0]), false);
}

/*
 * The counter sees the library's allocations, not only the test's: a
 * context of a size class never used before takes one new block.
 */
static void test_counter_sees_library(void **state)
{
	struct rw_env_opts o = {
		.profile = &rw_profiles[1],
		.local_len = 512 << 10,
		.remote_len = 512 << 10,
	};
	struct rdma_rw_ctx ctx;
	struct scatterlist *sg;
	struct rw_env e;
	unsigned int i;
	void *p;

	rw_skip_on_device(); /* rxe's SGE count */
	sg = calloc(2000, sizeof(*sg));
	assert_non_null(sg);
	rw_env_setup(&e, &o);
	sg_init_table(sg, 2000);
	for (i = 0; i < 2000; i++)
		sg_set_buf(&sg[i], e.local + i * 64, 64);
	/* a small MULTI context first creates the QP's storage (the QP was
	 * created without max_rdma_ctxs) */
	sg_mark_end(&sg[1]);
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 2, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_TO_DEVICE),
			 1);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 2, DMA_TO_DEVICE);
	sg_unmark_end(&sg[1]);
	count_start();
	p = malloc(1);
	__asm__ volatile("" : : "r"(p) : "memory"); /* keep the call */
	assert_int_equal(count_stop(), 1);
	free(p);
	count_start();
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 2000, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_TO_DEVICE),
			 63);
	assert_int_equal(count_stop(), 1);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 2000, DMA_TO_DEVICE);
	/* the same class again: no allocation */
	count_start();
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 1999, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_TO_DEVICE),
			 63);
	assert_int_equal(count_stop(), 0);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 1999, DMA_TO_DEVICE);
	free(sg);
	rw_env_teardown(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_sees_library),
		cmocka_unit_test(test_rxe_paths),
		cmocka_unit_test(test_device_paths),
		cmocka_unit_test(test_mlx5_paths),
		cmocka_unit_test(test_siw_paths),
		cmocka_unit_test(test_force_mr_paths),
		cmocka_unit_test(test_iova_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

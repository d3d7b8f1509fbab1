// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MR pools and Send Queue sizing of the R/W API: mrs_used back to 0, the
 * -EAGAIN fallback to SGEs when only max_sgl_rd asked for an MR and its
 * terminal cases (iWARP, force_mr), rdma_rw_mr_factor() and
 * rdma_rw_max_send_wr() per profile with saturation, and a QP sized by
 * max_rdma_ctxs = N holding N of its largest contexts at once while the
 * N+1st overflows the Send Queue.  On an ibv device (RDMARW_TEST_DEVICE)
 * the sizing without MRs runs there instead.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"
#include "rw/rw_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

static void setup(struct rw_env *e, const struct rw_profile *p, u32 ctxs,
		  u32 send_wr)
{
	struct rw_env_opts o = {
		.profile = p,
		.max_rdma_ctxs = ctxs,
		.max_send_wr = send_wr,
		.exact_send_wr = true,
		.local_len = 1 << 20,
		.remote_len = 1 << 20,
	};

	rw_env_setup(e, &o);
}

/* @n whole pages starting at page @first of the local arena. */
static void pages(struct rw_env *e, struct rw_model_ent *ents, u32 n, u32 first)
{
	u32 i;

	for (i = 0; i < n; i++) {
		ents[i].addr =
			(u64)(uintptr_t)e->local + (first + i) * PAGE_SIZE;
		ents[i].len = PAGE_SIZE;
	}
}

struct held {
	struct rw_sgl sgl;
	struct rdma_rw_ctx ctx;
	u32 n;
	enum dma_data_direction dir;
};

static int hold(struct rw_env *e, struct held *h, u32 n, u32 first,
		enum dma_data_direction dir)
{
	struct rw_model_ent ents[64];

	pages(e, ents, n, first);
	rw_sgl_build(&h->sgl, ents, n, 0);
	h->n = n;
	h->dir = dir;
	return rdma_rw_ctx_init(&h->ctx, e->qp, 1, h->sgl.sg, n, 0,
				rw_env_raddr(e, first * PAGE_SIZE),
				e->remote_mr->rkey, dir);
}

static void release(struct rw_env *e, struct held *h)
{
	rdma_rw_ctx_destroy(&h->ctx, e->qp, 1, h->sgl.sg, h->n, h->dir);
	rw_sgl_free(&h->sgl);
}

/* mlx5 READ of 5 entries (> max_sgl_rd 3): MR while the pool lasts, then
 * the SGE path, then MR again once an MR is back. */
static void test_eagain_falls_back(void **state)
{
	struct held h[3];
	struct rw_model_ent ents[5];
	struct rw_env e;
	struct rw_case c = {
		.name = "fallback",
		.ents = ents,
		.n = 5,
		.dir = DMA_FROM_DEVICE,
		.roff = 100,
	};
	enum rdma_rw_ctx_type type;

	rw_skip_on_device(); /* MR pools */
	setup(&e, &rw_profiles[0], 2, 16);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), 2);
	assert_int_equal(hold(&e, &h[0], 5, 10, DMA_FROM_DEVICE), 2);
	assert_int_equal(h[0].ctx.type, RDMA_RW_MR);
	assert_int_equal(hold(&e, &h[1], 5, 20, DMA_FROM_DEVICE), 2);
	assert_int_equal(h[1].ctx.type, RDMA_RW_MR);
	assert_int_equal(e.qp->mrs_used, 2);
	/* pool empty: the max_sgl_rd optimisation gives way to SGEs */
	assert_int_equal(hold(&e, &h[2], 5, 30, DMA_FROM_DEVICE), 1);
	assert_int_equal(h[2].ctx.type, RDMA_RW_MULTI_WR);
	assert_int_equal(h[2].ctx.map.wrs[0].wr.num_sge, 5);
	assert_int_equal(e.qp->mrs_used, 2);
	/* the fallback context moves the right bytes (checked by the model
	 * and the device) */
	pages(&e, ents, 5, 40);
	assert_int_equal(rw_run_case(&e, &c, &type), 1);
	assert_int_equal(type, RDMA_RW_MULTI_WR);
	release(&e, &h[2]);
	release(&e, &h[1]);
	assert_int_equal(e.qp->mrs_used, 1);
	assert_int_equal(rw_run_case(&e, &c, &type), 2);
	assert_int_equal(type, RDMA_RW_MR);
	release(&e, &h[0]);
	assert_int_equal(e.qp->mrs_used, 0);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), 2);
	rw_env_teardown(&e);
}

/* A QP without a pool (max_rdma_ctxs 0) on mlx5: long READs use SGEs. */
static void test_no_pool_falls_back(void **state)
{
	struct held h;
	struct rw_env e;

	rw_skip_on_device(); /* the mlx5 profile's max_sgl_rd */
	setup(&e, &rw_profiles[0], 0, 16);
	assert_null(e.qp->rw_cache);
	assert_int_equal(hold(&e, &h, 7, 1, DMA_FROM_DEVICE), 1);
	assert_int_equal(h.ctx.type, RDMA_RW_MULTI_WR);
	assert_non_null(e.qp->rw_cache); /* created on first use */
	release(&e, &h);
	rw_env_teardown(&e);
}

static void assert_clean(struct rw_env *e)
{
	assert_int_equal(e->qp->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e->dev), 0);
}

/* iWARP READ and force_mr need the MR: an empty pool is -EAGAIN, and
 * nothing stays mapped or taken. */
static void test_eagain_terminal(void **state)
{
	struct held h, x;
	struct rw_env e;
	long mapped;

	rw_skip_on_device(); /* MR pools */
	/* siw READ */
	setup(&e, &rw_profiles[2], 1, 16);
	assert_int_equal(hold(&e, &h, 1, 1, DMA_FROM_DEVICE), 2);
	mapped = rdmarw_dma_mapped(e.dev);
	assert_int_equal(hold(&e, &x, 1, 2, DMA_FROM_DEVICE), -EAGAIN);
	rw_sgl_free(&x.sgl);
	assert_int_equal(rdmarw_dma_mapped(e.dev), mapped);
	assert_int_equal(e.qp->mrs_used, 1);
	assert_int_equal(e.qp->rw_cache->in_use, 1);
	/* a WRITE on siw needs no MR */
	assert_int_equal(hold(&e, &x, 2, 3, DMA_TO_DEVICE), 1);
	release(&e, &x);
	release(&e, &h);
	assert_clean(&e);
	rw_env_teardown(&e);

	/* force_mr, on mlx5 (which would otherwise fall back) and rxe */
	rdma_rw_set_force_mr(true);
	for (int p = 0; p < 2; p++) {
		setup(&e, &rw_profiles[p], 1, 16);
		assert_int_equal(hold(&e, &h, 5, 1, DMA_TO_DEVICE), 2);
		assert_int_equal(hold(&e, &x, 5, 10, DMA_FROM_DEVICE), -EAGAIN);
		rw_sgl_free(&x.sgl);
		assert_int_equal(hold(&e, &x, 1, 20, DMA_TO_DEVICE), -EAGAIN);
		rw_sgl_free(&x.sgl);
		assert_int_equal(e.qp->mrs_used, 1);
		release(&e, &h);
		assert_clean(&e);
		rw_env_teardown(&e);
	}
	/* force_mr on a QP created without a pool: not -EAGAIN, which
	 * would never end (rw.h) */
	setup(&e, &rw_profiles[1], 0, 16);
	assert_int_equal(hold(&e, &x, 1, 1, DMA_TO_DEVICE), -EOPNOTSUPP);
	rw_sgl_free(&x.sgl);
	assert_clean(&e);
	rw_env_teardown(&e);
	rdma_rw_set_force_mr(false);
}

/* mrs_used counts MRs held by contexts and returns to 0. */
static void test_mrs_used(void **state)
{
	struct held h[4];
	struct rw_env e;
	int i;

	rw_skip_on_device(); /* MR pools */
	setup(&e, &rw_profiles[2], 4, 16);
	for (i = 0; i < 4; i++) {
		assert_int_equal(hold(&e, &h[i], 1, 1 + i, DMA_FROM_DEVICE), 2);
		assert_int_equal(e.qp->mrs_used, i + 1);
		assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs),
				 3 - i);
	}
	assert_int_equal(ib_destroy_qp(e.qp), -EBUSY);
	for (i = 3; i >= 0; i--) {
		release(&e, &h[i]);
		assert_int_equal(e.qp->mrs_used, i);
	}
	rw_env_teardown(&e);
}

/* ---- sizing ---------------------------------------------------------- */

static struct ib_device *make_dev(struct soft_fabric *f, const char *name,
				  bool iommu)
{
	struct soft_profile p;
	struct ib_device *dev;

	assert_int_equal(soft_profile_get(name, &p), 0);
	p.iommu = iommu;
	dev = soft_device_create(f, NULL, &p);
	assert_false(IS_ERR(dev));
	return dev;
}

static void test_mr_factor(void **state)
{
	struct soft_fabric *f;
	struct ib_device *mlx5, *rxe, *siw;

	rw_skip_on_device(); /* the software profiles' figures */
	f = soft_fabric_create();
	assert_false(IS_ERR(f));
	mlx5 = make_dev(f, "mlx5", false);
	rxe = make_dev(f, "rxe", false);
	siw = make_dev(f, "siw", false);
	/* MR-capable: pages per MR = min(fr list, 256) = 256 */
	assert_int_equal(rdma_rw_mr_factor(mlx5, 1, 1), 1);
	assert_int_equal(rdma_rw_mr_factor(mlx5, 1, 256), 1);
	assert_int_equal(rdma_rw_mr_factor(mlx5, 1, 257), 2);
	assert_int_equal(rdma_rw_mr_factor(siw, 1, 256), 1);
	assert_int_equal(rdma_rw_mr_factor(siw, 1, 513), 3);
	/* rxe uses no MRs: max_sge_rd 32 */
	assert_int_equal(rdma_rw_mr_factor(rxe, 1, 32), 1);
	assert_int_equal(rdma_rw_mr_factor(rxe, 1, 33), 2);
	assert_int_equal(rdma_rw_mr_factor(rxe, 1, 256), 8);
	assert_int_equal(rdma_rw_mr_factor(rxe, 1, UINT_MAX),
			 UINT_MAX / 32 + 1);
	/* force_mr makes rxe register */
	rdma_rw_set_force_mr(true);
	assert_int_equal(rdma_rw_mr_factor(rxe, 1, 256), 1);
	assert_int_equal(rdma_rw_mr_factor(rxe, 1, 1000), 4);
	rdma_rw_set_force_mr(false);
	/* bad arguments */
	assert_int_equal(rdma_rw_mr_factor(NULL, 1, 10), 0);
	assert_int_equal(rdma_rw_mr_factor(rxe, 0, 10), 0);
	assert_int_equal(rdma_rw_mr_factor(rxe, 2, 10), 0);
	assert_int_equal(soft_device_destroy(mlx5), 0);
	assert_int_equal(soft_device_destroy(rxe), 0);
	assert_int_equal(soft_device_destroy(siw), 0);
	assert_int_equal(soft_fabric_destroy(f), 0);
}

static void test_max_send_wr(void **state)
{
	struct soft_fabric *f;
	struct ib_device *mlx5, *rxe, *siw;

	rw_skip_on_device(); /* the software profiles' figures */
	f = soft_fabric_create();
	assert_false(IS_ERR(f));
	mlx5 = make_dev(f, "mlx5", false);
	rxe = make_dev(f, "rxe", false);
	siw = make_dev(f, "siw", false);
	assert_int_equal(rdma_rw_max_send_wr(mlx5, 1, 10, 0), 30);
	assert_int_equal(rdma_rw_max_send_wr(siw, 1, 10, 0), 30);
	assert_int_equal(rdma_rw_max_send_wr(rxe, 1, 10, 0), 10);
	assert_int_equal(
		rdma_rw_max_send_wr(rxe, 1, 10, IB_QP_CREATE_INTEGRITY_EN), 30);
	/* saturation */
	assert_int_equal(rdma_rw_max_send_wr(mlx5, 1, UINT_MAX / 3, 0),
			 UINT_MAX / 3 * 3);
	assert_int_equal(rdma_rw_max_send_wr(mlx5, 1, UINT_MAX / 3 + 1, 0),
			 UINT_MAX);
	assert_int_equal(rdma_rw_max_send_wr(siw, 1, UINT_MAX, 0), UINT_MAX);
	assert_int_equal(rdma_rw_max_send_wr(rxe, 1, UINT_MAX, 0), UINT_MAX);
	assert_int_equal(rdma_rw_max_send_wr(rxe, 1, 0, 0), 0);
	rdma_rw_set_force_mr(true);
	assert_int_equal(rdma_rw_max_send_wr(rxe, 1, 7, 0), 21);
	rdma_rw_set_force_mr(false);
	assert_int_equal(rdma_rw_max_send_wr(NULL, 1, 7, 0), 0);
	assert_int_equal(rdma_rw_max_send_wr(rxe, 9, 7, 0), 0);
	assert_int_equal(soft_device_destroy(mlx5), 0);
	assert_int_equal(soft_device_destroy(rxe), 0);
	assert_int_equal(soft_device_destroy(siw), 0);
	assert_int_equal(soft_fabric_destroy(f), 0);
}

/* ib_create_qp() grows the Send Queue by rdma_rw_max_send_wr(), capped at
 * the device's max_qp_wr, and sets up the pool. */
static void test_init_qp(void **state)
{
	struct rw_env e;
	struct ib_qp_init_attr a = { .port_num = 1 };

	rw_skip_on_device(); /* MR pools */
	setup(&e, &rw_profiles[0], 5, 7);
	assert_int_equal(e.qp->cap.max_send_wr, 7 + 15);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), 5);
	assert_non_null(e.qp->rw_cache);
	assert_int_equal(e.qp->rw_cache->nr_blocks, 5);
	a.cap.max_send_wr = 100;
	a.cap.max_rdma_ctxs = UINT_MAX / 2;
	rdma_rw_init_qp(e.dev, &a);
	assert_int_equal(a.cap.max_send_wr, (u32)e.dev->attrs.max_qp_wr);
	rw_env_teardown(&e);

	setup(&e, &rw_profiles[1], 5, 7);
	assert_int_equal(e.qp->cap.max_send_wr, 7 + 5);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), 0);
	rw_env_teardown(&e);
}

/*
 * N of the largest contexts (one MR each with LOCAL_INV, or one WR where no
 * MR is used) fit a QP created with max_send_wr 0 and max_rdma_ctxs N; one
 * more WQE overflows: rdma_rw_ctx_post() returns -ENOMEM.
 */
static void run_in_flight(const struct rw_profile *p, bool force,
			  enum dma_data_direction dir, u32 nents)
{
	enum { N = 6 };
	struct held h[N + 1];
	struct rw_done d[N + 1];
	struct rw_env e;
	int i, wqes = 0, ret;

	rdma_rw_set_force_mr(force);
	setup(&e, p, N, 0);
	/* warm up every MR so that each context carries a LOCAL_INV */
	for (i = 0; i < N; i++)
		assert_true(hold(&e, &h[i], nents, 1 + i * 8, dir) > 0);
	for (i = 0; i < N; i++) {
		rw_done_init(&d[i]);
		assert_int_equal(
			rdma_rw_ctx_post(&h[i].ctx, e.qp, 1, &d[i].cqe, NULL),
			0);
		rw_env_wait(&e, &d[i].count, 1);
		release(&e, &h[i]);
	}
	for (i = 0; i < N; i++) {
		ret = hold(&e, &h[i], nents, 1 + i * 8, dir);
		assert_true(ret > 0);
		wqes += ret;
	}
	assert_int_equal((u32)wqes, e.qp->cap.max_send_wr);
	for (i = 0; i < N; i++) {
		rw_done_init(&d[i]);
		assert_int_equal(
			rdma_rw_ctx_post(&h[i].ctx, e.qp, 1, &d[i].cqe, NULL),
			0);
	}
	/* one more: a context that needs no MR, or the MR path's fallback */
	ret = hold(&e, &h[N], 1, 60, DMA_TO_DEVICE);
	if (ret > 0) {
		rw_done_init(&d[N]);
		assert_int_equal(
			rdma_rw_ctx_post(&h[N].ctx, e.qp, 1, &d[N].cqe, NULL),
			-ENOMEM);
		release(&e, &h[N]);
	} else {
		struct ib_sge sge = {
			.addr = (u64)(uintptr_t)e.local,
			.length = 8,
			.lkey = e.pd->local_dma_lkey,
		};
		struct ib_rdma_wr w = {
			.wr = { .opcode = IB_WR_RDMA_WRITE,
				.sg_list = &sge,
				.num_sge = 1 },
			.remote_addr = rw_env_raddr(&e, 0),
			.rkey = e.remote_mr->rkey,
		};

		/* force_mr: the pool is empty, so show the full queue with a
		 * plain WRITE */
		assert_int_equal(ret, -EAGAIN);
		rw_sgl_free(&h[N].sgl);
		assert_int_equal(ib_post_send(e.qp, &w.wr, NULL), -ENOMEM);
	}
	for (i = 0; i < N; i++) {
		rw_env_wait(&e, &d[i].count, 1);
		assert_int_equal(d[i].status, IB_WC_SUCCESS);
		release(&e, &h[i]);
	}
	rw_env_teardown(&e);
	rdma_rw_set_force_mr(false);
}

static void test_n_in_flight(void **state)
{
	rw_skip_on_device(); /* MR pools; see test_n_in_flight_device */
	/* mlx5 READ of 8 pages: LOCAL_INV + REG + READ, 3 WQEs = factor */
	run_in_flight(&rw_profiles[0], false, DMA_FROM_DEVICE, 8);
	/* rxe: one WR per context, factor 1 */
	run_in_flight(&rw_profiles[1], false, DMA_TO_DEVICE, 8);
	run_in_flight(&rw_profiles[1], false, DMA_FROM_DEVICE, 32);
	/* force_mr WRITE on rxe and siw: 3 WQEs each */
	run_in_flight(&rw_profiles[1], true, DMA_TO_DEVICE, 8);
	run_in_flight(&rw_profiles[2], true, DMA_TO_DEVICE, 8);
}

/*
 * The device under test: no fast registration, so no MRs, one WR per
 * max_sge_rd pages and one extra WQE per context, force_mr or not.
 */
static void test_sizing_device(void **state)
{
	struct ib_device *dev;
	struct rw_env e;
	u32 rd;
	int force;

	rw_skip_on_soft();
	setup(&e, rw_test_device(), 5, 7);
	dev = e.dev;
	rd = (u32)dev->attrs.max_sge_rd;
	assert_true(rd >= 1);
	for (force = 0; force < 2; force++) {
		rdma_rw_set_force_mr(force);
		assert_int_equal(rdma_rw_mr_factor(dev, 1, 1), 1);
		assert_int_equal(rdma_rw_mr_factor(dev, 1, rd), 1);
		assert_int_equal(rdma_rw_mr_factor(dev, 1, rd + 1), 2);
		assert_int_equal(rdma_rw_mr_factor(dev, 1, 1000),
				 (1000 + rd - 1) / rd);
		assert_int_equal(rdma_rw_max_send_wr(dev, 1, 10, 0), 10);
		assert_int_equal(rdma_rw_max_send_wr(dev, 1, UINT_MAX, 0),
				 UINT_MAX);
	}
	rdma_rw_set_force_mr(false);
	assert_int_equal(rdma_rw_mr_factor(dev, 0, 10), 0);
	assert_int_equal(rdma_rw_mr_factor(dev, 2, 10), 0);
	assert_int_equal(rdma_rw_max_send_wr(dev, 2, 7, 0), 0);
	/* the QP: 7 + 5 WRs at least (the device may round up), no pool,
	 * context storage for the 5 */
	assert_true(e.qp->cap.max_send_wr >= 7 + 5);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), 0);
	assert_true(list_empty(&e.qp->rdma_mrs));
	assert_non_null(e.qp->rw_cache);
	assert_int_equal(e.qp->rw_cache->nr_blocks, 5);
	rw_env_teardown(&e);
}

/*
 * On the device: N of the largest contexts (one WR each: as many entries as
 * one WR carries) are in flight at once on a QP sized by max_rdma_ctxs N
 * alone, and each completes.  (Whether one more overflows depends on how
 * far the device rounded the queue up and how fast it drains it.)
 */
static void run_in_flight_device(enum dma_data_direction dir)
{
	enum { N = 6 };
	struct held h[N];
	struct rw_done d[N];
	struct rw_env e;
	u32 nents;
	int i;

	setup(&e, rw_test_device(), N, 0);
	nents = dir == DMA_TO_DEVICE ? e.qp->cap.max_send_sge :
				       e.qp->max_read_sge;
	if (nents > 8)
		nents = 8;
	for (i = 0; i < N; i++) {
		assert_int_equal(hold(&e, &h[i], nents, 1 + i * 8, dir), 1);
		rw_done_init(&d[i]);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(
			rdma_rw_ctx_post(&h[i].ctx, e.qp, 1, &d[i].cqe, NULL),
			0);
	for (i = 0; i < N; i++) {
		rw_env_wait(&e, &d[i].count, 1);
		assert_int_equal(d[i].status, IB_WC_SUCCESS);
		release(&e, &h[i]);
	}
	/* the bytes: every context moved whole pages at 1 + i * 8 */
	for (i = 0; i < N; i++) {
		struct rw_model_ent ents[8];

		pages(&e, ents, nents, 1 + (u32)i * 8);
		rw_env_expect(&e, ents, nents, 0, (1 + (u64)i * 8) * PAGE_SIZE,
			      dir);
	}
	rw_env_check(&e);
	rw_env_teardown(&e);
}

static void test_n_in_flight_device(void **state)
{
	rw_skip_on_soft();
	run_in_flight_device(DMA_TO_DEVICE);
	run_in_flight_device(DMA_FROM_DEVICE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eagain_falls_back),
		cmocka_unit_test(test_no_pool_falls_back),
		cmocka_unit_test(test_eagain_terminal),
		cmocka_unit_test(test_mrs_used),
		cmocka_unit_test(test_mr_factor),
		cmocka_unit_test(test_max_send_wr),
		cmocka_unit_test(test_init_qp),
		cmocka_unit_test(test_n_in_flight),
		cmocka_unit_test(test_sizing_device),
		cmocka_unit_test(test_n_in_flight_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What R/W contexts hold of their QP, and how many a QP may ask for.
 *
 * - ib_destroy_qp() refuses with -EBUSY while a context holds the QP's
 *   context storage (a MULTI context takes no MR: at 94c91f9 the QP was
 *   freed under it and the later rdma_rw_ctx_destroy() wrote into freed
 *   memory) or an MR of its pools; nothing changes, the context can still
 *   be posted, and the QP goes once the contexts are destroyed.
 *   rdma_rw_cleanup_mrs() frees nothing then either.
 * - cap.max_rdma_ctxs is bounded by what the device can queue: max_qp_wr
 *   divided by the WRs per context (rdma_rw_max_send_wr() of one).  The
 *   limit is accepted, one more is -EINVAL, and 2^32-1 is refused at once
 *   (at 94c91f9 it set aside 2^32-1 storage blocks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"
#include "helpers/soft_env.h"
#include "rw/rw_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- ib_destroy_qp() while contexts hold the QP ------------------------ */

struct held {
	struct rw_sgl sgl;
	struct rdma_rw_ctx ctx;
	u32 n;
};

/* A WRITE of @n whole pages of the local arena, apart, to the remote one. */
static int hold(struct rw_env *e, struct held *h, u32 n)
{
	struct rw_model_ent ents[8];
	u32 i;

	for (i = 0; i < n; i++) {
		ents[i].addr = (u64)(uintptr_t)e->local + 2 * i * PAGE_SIZE;
		ents[i].len = PAGE_SIZE;
	}
	rw_sgl_build(&h->sgl, ents, n, 0);
	h->n = n;
	return rdma_rw_ctx_init(&h->ctx, e->qp, 1, h->sgl.sg, n, 0,
				rw_env_raddr(e, 0), e->remote_mr->rkey,
				DMA_TO_DEVICE);
}

static enum ib_qp_state qp_state(struct ib_qp *qp)
{
	struct ib_qp_attr a;

	assert_int_equal(ib_query_qp(qp, &a, IB_QP_STATE, NULL), 0);
	return a.qp_state;
}

static void release(struct rw_env *e, struct held *h)
{
	rdma_rw_ctx_destroy(&h->ctx, e->qp, 1, h->sgl.sg, h->n, DMA_TO_DEVICE);
	rw_sgl_free(&h->sgl);
}

/*
 * With a context of @type held, ib_destroy_qp() and rdma_rw_cleanup_mrs()
 * change nothing; the context still posts and completes; destroying it
 * lets the QP go (rw_env_teardown() asserts ib_destroy_qp() returns 0).
 */
static void run_busy(const char *profile, u32 ctxs, bool force,
		     enum rdma_rw_ctx_type type)
{
	const struct rw_profile *p = NULL;
	struct rw_env_opts o = {
		.max_rdma_ctxs = ctxs,
		.local_len = 1 << 16,
		.remote_len = 1 << 16,
	};
	struct rw_done d;
	struct held h;
	struct rw_env e;
	unsigned long blocks, in_use;
	int mrs, pool, i;

	for (i = 0; i < (int)rw_nr_profiles; i++)
		if (!strcmp(rw_profiles[i].label, profile))
			p = &rw_profiles[i];
	assert_non_null(p);
	o.profile = p;
	rdma_rw_set_force_mr(force);
	rw_env_setup(&e, &o);
	rw_env_fill(&e, 7);
	assert_true(hold(&e, &h, 3) > 0);
	assert_int_equal(h.ctx.type, type);
	assert_non_null(e.qp->rw_cache);
	blocks = e.qp->rw_cache->nr_blocks;
	in_use = e.qp->rw_cache->in_use;
	assert_int_equal(in_use, 1);
	mrs = e.qp->mrs_used;
	pool = ib_mr_pool_count(e.qp, &e.qp->rdma_mrs);

	assert_int_equal(ib_destroy_qp(e.qp), -EBUSY);
	rdma_rw_cleanup_mrs(e.qp);
	/* Nothing changed. */
	assert_non_null(e.qp->rw_cache);
	assert_int_equal(e.qp->rw_cache->nr_blocks, blocks);
	assert_int_equal(e.qp->rw_cache->in_use, in_use);
	assert_int_equal(e.qp->mrs_used, mrs);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), pool);
	assert_int_equal(qp_state(e.qp), IB_QPS_RTS);

	/* The context still works. */
	rw_done_init(&d);
	assert_int_equal(rdma_rw_ctx_post(&h.ctx, e.qp, 1, &d.cqe, NULL), 0);
	rw_env_wait(&e, &d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
	release(&e, &h);
	assert_int_equal(e.qp->rw_cache->in_use, 0);
	rw_env_teardown(&e);
	rdma_rw_set_force_mr(false);
}

/* rxe: three entries take MULTI, storage but no MR (the use-after-free). */
static void test_destroy_qp_multi(void **state)
{
	rw_skip_on_device();
	run_busy("rxe", 4, false, RDMA_RW_MULTI_WR);
	/* Storage made on first use (no max_rdma_ctxs) counts too. */
	run_busy("rxe", 0, false, RDMA_RW_MULTI_WR);
}

/* MR contexts hold storage and an MR. */
static void test_destroy_qp_mr(void **state)
{
	rw_skip_on_device();
	run_busy("mlx5", 4, true, RDMA_RW_MR);
	run_busy("siw", 4, true, RDMA_RW_MR);
}

/* ---- the bound of cap.max_rdma_ctxs ----------------------------------- */

struct dev_env {
	struct soft_fabric *f;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
};

static void dev_env_init(struct dev_env *d, const char *profile, int qp_wr)
{
	struct soft_profile prof;

	assert_int_equal(soft_profile_get(profile, &prof), 0);
	prof.attrs.max_qp_wr = qp_wr;
	d->f = soft_fabric_create();
	assert_false(IS_ERR(d->f));
	d->dev = soft_device_create(d->f, NULL, &prof);
	assert_false(IS_ERR(d->dev));
	d->pd = ib_alloc_pd(d->dev, 0);
	assert_false(IS_ERR(d->pd));
	d->cq = ib_alloc_cq(d->dev, NULL, 64, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(d->cq));
}

static void dev_env_fini(struct dev_env *d)
{
	struct soft_stats st;

	assert_int_equal(ib_free_cq(d->cq), 0);
	assert_int_equal(ib_dealloc_pd(d->pd), 0);
	assert_int_equal(soft_device_stats(d->dev, &st), 0);
	assert_int_equal(st.mrs, 0);
	assert_int_equal(st.qps, 0);
	assert_int_equal(soft_device_destroy(d->dev), 0);
	assert_int_equal(soft_fabric_destroy(d->f), 0);
}

static struct ib_qp *create(struct dev_env *d, u32 ctxs, u32 flags, u32 send_wr)
{
	struct ib_qp_init_attr a = {
		.send_cq = d->cq,
		.recv_cq = d->cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.create_flags = flags,
		.cap = { .max_send_wr = send_wr,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = ctxs },
	};

	return ib_create_qp(d->pd, &a);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * On @profile with max_qp_wr @qp_wr: @per WRs per context, so the limit is
 * @qp_wr / @per; it is accepted (pools and storage of that many), one more
 * is refused, and so are 2^32-1 and UINT_MAX / @per + 1, fast.
 */
static void run_bound(const char *profile, int qp_wr, u32 flags, u32 per)
{
	u32 limit = (u32)qp_wr / per;
	struct dev_env d;
	struct ib_qp *qp;
	struct ib_qp_init_attr a = { .port_num = 1 };
	double t0;

	dev_env_init(&d, profile, qp_wr);
	assert_int_equal(rdma_rw_max_send_wr(d.dev, 1, 1, flags), per);

	qp = create(&d, limit, flags, 0);
	assert_false(IS_ERR(qp));
	assert_int_equal(qp->cap.max_send_wr, limit * per);
	assert_int_equal(qp->rw_cache->nr_blocks, limit);
	if (per > 1)
		assert_int_equal(ib_mr_pool_count(qp, &qp->rdma_mrs), limit);
	/* A QP's own WRs beside the contexts are capped, as in the kernel. */
	assert_int_equal(ib_destroy_qp(qp), 0);
	qp = create(&d, limit, flags, 16);
	assert_false(IS_ERR(qp));
	assert_int_equal(qp->cap.max_send_wr, (u32)qp_wr);
	/* rdma_rw_init_mrs() called directly checks the bound too. */
	a.cap.max_rdma_ctxs = limit + 1;
	a.create_flags = flags;
	assert_int_equal(rdma_rw_init_mrs(qp, &a), -EINVAL);
	assert_int_equal(qp->rw_cache->nr_blocks, limit);
	assert_int_equal(ib_destroy_qp(qp), 0);

	assert_ptr_equal(create(&d, limit + 1, flags, 0), ERR_PTR(-EINVAL));
	t0 = now();
	assert_ptr_equal(create(&d, UINT32_MAX, flags, 0), ERR_PTR(-EINVAL));
	if (per > 1) /* where rdma_rw_max_send_wr() saturates */
		assert_ptr_equal(create(&d, UINT_MAX / per + 1, flags, 0),
				 ERR_PTR(-EINVAL));
	assert_true(now() - t0 < 1.0);
	dev_env_fini(&d);
}

static void test_max_rdma_ctxs_bound(void **state)
{
	rw_skip_on_device();
	/* rxe: no MRs, one WR per context. */
	run_bound("rxe", 64, 0, 1);
	/* mlx5 (max_sgl_rd) and siw (iWARP): LOCAL_INV + REG_MR + RDMA. */
	run_bound("mlx5", 64, 0, 3);
	run_bound("siw", 100, 0, 3);
	/* Integrity QPs: three as well, and a signature pool. */
	run_bound("mlx5", 30, IB_QP_CREATE_INTEGRITY_EN, 3);
}

/* The default profiles: the bound is far above what tests use. */
static void test_max_rdma_ctxs_profiles(void **state)
{
	static const char *const names[] = { "mlx5", "rxe", "siw" };
	struct dev_env d;
	unsigned int i;
	u32 per, limit;

	rw_skip_on_device();
	for (i = 0; i < 3; i++) {
		struct soft_profile prof;

		assert_int_equal(soft_profile_get(names[i], &prof), 0);
		dev_env_init(&d, names[i], prof.attrs.max_qp_wr);
		per = rdma_rw_max_send_wr(d.dev, 1, 1, 0);
		limit = (u32)prof.attrs.max_qp_wr / per;
		assert_ptr_equal(create(&d, limit + 1, 0, 0), ERR_PTR(-EINVAL));
		assert_ptr_equal(create(&d, 1u << 20, 0, 0), ERR_PTR(-EINVAL));
		dev_env_fini(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroy_qp_multi),
		cmocka_unit_test(test_destroy_qp_mr),
		cmocka_unit_test(test_max_rdma_ctxs_bound),
		cmocka_unit_test(test_max_rdma_ctxs_profiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

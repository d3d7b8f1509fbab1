// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-QP MR pools: LIFO order, the mrs_used count, failure during init
 * freeing everything (the fake provider fails the Nth MR allocation), and
 * the pools ib_create_qp() sets up for R/W contexts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>

#include <rdmarw/mr_pool.h>

#include "helpers/fake_provider.h"

struct env {
	struct fake_dev *fd;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

static struct ib_qp_init_attr qp_attr(struct env *env, u32 ctxs)
{
	return (struct ib_qp_init_attr){
		.send_cq = env->cq,
		.recv_cq = env->cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 4,
			 .max_send_sge = 4,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = ctxs },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
}

static int setup_proto(void **state, enum rdma_protocol proto)
{
	static struct env env;
	struct ib_qp_init_attr a;

	env.fd = fake_dev_new("pool%d", proto);
	if (!env.fd)
		return -1;
	env.pd = ib_alloc_pd(&env.fd->ibdev, 0);
	env.cq = ib_alloc_cq(&env.fd->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(env.pd) || IS_ERR(env.cq))
		return -1;
	a = qp_attr(&env, 0);
	env.qp = ib_create_qp(env.pd, &a);
	if (IS_ERR(env.qp))
		return -1;
	*state = &env;
	return 0;
}

static int setup(void **state)
{
	return setup_proto(state, RDMA_PROTOCOL_IB);
}

static int setup_iwarp(void **state)
{
	return setup_proto(state, RDMA_PROTOCOL_IWARP);
}

static int teardown(void **state)
{
	struct env *env = *state;

	assert_int_equal(env->qp->mrs_used, 0);
	assert_int_equal(ib_destroy_qp(env->qp), 0);
	assert_int_equal(ib_free_cq(env->cq), 0);
	assert_int_equal(ib_dealloc_pd(env->pd), 0);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(env->fd->live_qps, 0);
	return fake_dev_free(env->fd);
}

static void get_put_is_lifo_and_counts(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = env->qp;
	struct list_head *pool = &qp->rdma_mrs;
	struct ib_mr *a, *b, *c;

	assert_int_equal(ib_mr_pool_init(qp, pool, 3, IB_MR_TYPE_MEM_REG, 8, 0),
			 0);
	assert_int_equal(ib_mr_pool_count(qp, pool), 3);
	assert_int_equal(env->fd->live_mrs, 3);
	assert_int_equal(env->pd->usecnt, 4); /* the QP and three MRs */

	a = ib_mr_pool_get(qp, pool);
	b = ib_mr_pool_get(qp, pool);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_true(a->in_pool);
	assert_int_equal(a->max_num_sg, 8);
	assert_int_equal(qp->mrs_used, 2);
	assert_int_equal(ib_mr_pool_count(qp, pool), 1);

	ib_mr_pool_put(qp, pool, a);
	ib_mr_pool_put(qp, pool, b);
	assert_int_equal(qp->mrs_used, 0);
	/* The last one returned comes out first. */
	assert_ptr_equal(ib_mr_pool_get(qp, pool), b);
	assert_ptr_equal(ib_mr_pool_get(qp, pool), a);
	c = ib_mr_pool_get(qp, pool);
	assert_non_null(c);
	assert_ptr_not_equal(c, a);
	assert_ptr_not_equal(c, b);
	assert_null(ib_mr_pool_get(qp, pool)); /* empty */
	assert_int_equal(qp->mrs_used, 3);
	assert_int_equal(ib_mr_pool_count(qp, pool), 0);

	ib_mr_pool_put(qp, pool, c);
	ib_mr_pool_put(qp, pool, a);
	ib_mr_pool_put(qp, pool, b);
	assert_int_equal(qp->mrs_used, 0);
	ib_mr_pool_destroy(qp, pool);
	assert_int_equal(ib_mr_pool_count(qp, pool), 0);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(env->pd->usecnt, 1);
}

static void bad_arguments(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = env->qp;

	assert_int_equal(ib_mr_pool_init(NULL, &qp->rdma_mrs, 1,
					 IB_MR_TYPE_MEM_REG, 8, 0),
			 -EINVAL);
	assert_int_equal(ib_mr_pool_init(qp, NULL, 1, IB_MR_TYPE_MEM_REG, 8, 0),
			 -EINVAL);
	assert_int_equal(ib_mr_pool_init(qp, &qp->rdma_mrs, -1,
					 IB_MR_TYPE_MEM_REG, 8, 0),
			 -EINVAL);
	assert_int_equal(
		ib_mr_pool_init(qp, &qp->rdma_mrs, 0, IB_MR_TYPE_MEM_REG, 8, 0),
		0);
	assert_int_equal(ib_mr_pool_count(qp, &qp->rdma_mrs), 0);
	assert_int_equal(ib_mr_pool_count(NULL, &qp->rdma_mrs), -EINVAL);
	assert_int_equal(ib_mr_pool_count(qp, NULL), -EINVAL);
	assert_null(ib_mr_pool_get(NULL, &qp->rdma_mrs));
	assert_null(ib_mr_pool_get(qp, NULL));
	ib_mr_pool_put(NULL, &qp->rdma_mrs, NULL);
	ib_mr_pool_put(qp, &qp->rdma_mrs, NULL);
	ib_mr_pool_destroy(NULL, &qp->rdma_mrs);
	ib_mr_pool_destroy(qp, NULL);
	assert_int_equal(qp->mrs_used, 0);
	/* Integrity MRs need a device that supports them. */
	assert_int_equal(ib_mr_pool_init(qp, &qp->sig_mrs, 2,
					 IB_MR_TYPE_INTEGRITY, 8, 8),
			 -EOPNOTSUPP);
	assert_int_equal(env->fd->live_mrs, 0);
}

static void init_failure_frees_everything(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = env->qp;

	env->fd->fail_mr_alloc_at = 3;
	assert_int_equal(
		ib_mr_pool_init(qp, &qp->rdma_mrs, 5, IB_MR_TYPE_MEM_REG, 8, 0),
		-ENOMEM);
	assert_int_equal(env->fd->mr_alloc_calls, 3);
	assert_int_equal(ib_mr_pool_count(qp, &qp->rdma_mrs), 0);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(env->pd->usecnt, 1);

	/* The provider's own error comes back. */
	env->fd->mr_alloc_calls = 0;
	env->fd->fail_mr_alloc_at = 1;
	env->fd->fail_errno = -EIO;
	assert_int_equal(
		ib_mr_pool_init(qp, &qp->rdma_mrs, 2, IB_MR_TYPE_MEM_REG, 8, 0),
		-EIO);
	assert_int_equal(env->fd->live_mrs, 0);
	env->fd->fail_mr_alloc_at = 0;
}

/* MRs taken when the pool is destroyed stay allocated until returned. */
static void destroy_leaves_taken_mrs(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = env->qp;
	struct ib_mr *mr;

	assert_int_equal(
		ib_mr_pool_init(qp, &qp->rdma_mrs, 3, IB_MR_TYPE_MEM_REG, 8, 0),
		0);
	mr = ib_mr_pool_get(qp, &qp->rdma_mrs);
	assert_non_null(mr);
	ib_mr_pool_destroy(qp, &qp->rdma_mrs);
	assert_int_equal(env->fd->live_mrs, 1);
	assert_int_equal(ib_dereg_mr(mr), -EBUSY);
	ib_mr_pool_put(qp, &qp->rdma_mrs, mr);
	ib_mr_pool_destroy(qp, &qp->rdma_mrs);
	assert_int_equal(env->fd->live_mrs, 0);
}

struct racer {
	struct ib_qp *qp;
	int rounds;
	int got;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct ib_mr *mr;
	int i;

	for (i = 0; i < r->rounds; i++) {
		mr = ib_mr_pool_get(r->qp, &r->qp->rdma_mrs);
		if (!mr)
			continue;
		r->got++;
		ib_mr_pool_put(r->qp, &r->qp->rdma_mrs, mr);
	}
	return NULL;
}

/* get/put from several threads at once keep the pool and count whole. */
static void threads_share_a_pool(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = env->qp;
	struct racer r[4];
	pthread_t t[4];
	int i;

	assert_int_equal(
		ib_mr_pool_init(qp, &qp->rdma_mrs, 2, IB_MR_TYPE_MEM_REG, 8, 0),
		0);
	for (i = 0; i < 4; i++) {
		r[i] = (struct racer){ .qp = qp, .rounds = 20000 };
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(qp->mrs_used, 0);
	assert_int_equal(ib_mr_pool_count(qp, &qp->rdma_mrs), 2);
	ib_mr_pool_destroy(qp, &qp->rdma_mrs);
}

/* InfiniBand without max_sgl_rd: R/W uses no MRs, so no pool. */
static void create_qp_without_mr_use(void **state)
{
	struct env *env = *state;
	struct ib_qp_init_attr a = qp_attr(env, 5);
	struct ib_qp *qp = ib_create_qp(env->pd, &a);

	assert_false(IS_ERR(qp));
	assert_int_equal(a.cap.max_send_wr, 16 + 5);
	assert_int_equal(qp->cap.max_send_wr, 16 + 5);
	assert_int_equal(ib_mr_pool_count(qp, &qp->rdma_mrs), 0);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(ib_destroy_qp(qp), 0);
}

/* iWARP: MRs per context, three WRs per context (capped at max_qp_wr). */
static void create_qp_with_mr_pools(void **state)
{
	struct env *env = *state;
	struct ib_qp_init_attr a = qp_attr(env, 5);
	struct ib_qp *qp = ib_create_qp(env->pd, &a);
	struct ib_mr *mr;

	assert_false(IS_ERR(qp));
	assert_int_equal(qp->cap.max_send_wr, 16 + 3 * 5);
	assert_int_equal(ib_mr_pool_count(qp, &qp->rdma_mrs), 5);
	assert_int_equal(env->fd->live_mrs, 5);
	mr = ib_mr_pool_get(qp, &qp->rdma_mrs);
	assert_int_equal(mr->max_num_sg, 256); /* min(512, 256) */
	assert_int_equal(ib_destroy_qp(qp), -EBUSY);
	ib_mr_pool_put(qp, &qp->rdma_mrs, mr);
	assert_int_equal(ib_destroy_qp(qp), 0);
	assert_int_equal(env->fd->live_mrs, 0);

	a = qp_attr(env, 400);
	qp = ib_create_qp(env->pd, &a);
	assert_false(IS_ERR(qp));
	assert_int_equal(qp->cap.max_send_wr, 1024);
	assert_int_equal(ib_destroy_qp(qp), 0);
}

/* A pool that cannot be filled fails the QP and frees all of it. */
static void create_qp_pool_failure_frees_everything(void **state)
{
	struct env *env = *state;
	struct ib_qp_init_attr a = qp_attr(env, 5);

	env->fd->fail_mr_alloc_at = 4;
	assert_ptr_equal(ib_create_qp(env->pd, &a), ERR_PTR(-ENOMEM));
	assert_int_equal(env->fd->mr_alloc_calls, 4);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(env->fd->live_qps, 1); /* the setup's QP only */
	assert_int_equal(env->pd->usecnt, 1);
	assert_int_equal(env->cq->usecnt, 2);
	env->fd->fail_mr_alloc_at = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(get_put_is_lifo_and_counts,
						setup, teardown),
		cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(init_failure_frees_everything,
						setup, teardown),
		cmocka_unit_test_setup_teardown(destroy_leaves_taken_mrs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(threads_share_a_pool, setup,
						teardown),
		cmocka_unit_test_setup_teardown(create_qp_without_mr_use, setup,
						teardown),
		cmocka_unit_test_setup_teardown(create_qp_with_mr_pools,
						setup_iwarp, teardown),
		cmocka_unit_test_setup_teardown(
			create_qp_pool_failure_frees_everything, setup_iwarp,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Object lifetimes in the verbs core: what ib_create_qp() checks, the
 * refusals (-EBUSY) of ib_dealloc_pd(), ib_free_cq(), ib_destroy_qp() and
 * ib_dereg_mr() while something still uses the object, the checks of
 * ib_modify_qp() besides the state table (test_core_qp_state), and the
 * arguments of posting.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include <rdmarw/mr_pool.h>

#include "helpers/fake_provider.h"

struct env {
	struct fake_dev *fd;
	struct ib_pd *pd;
	struct ib_cq *cq;
};

static int setup(void **state)
{
	static struct env env;

	env.fd = fake_dev_new("obj%d", RDMA_PROTOCOL_IB);
	if (!env.fd)
		return -1;
	env.pd = ib_alloc_pd(&env.fd->ibdev, 0);
	env.cq = ib_alloc_cq(&env.fd->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(env.pd) || IS_ERR(env.cq))
		return -1;
	*state = &env;
	return 0;
}

static int teardown(void **state)
{
	struct env *env = *state;

	assert_int_equal(ib_free_cq(env->cq), 0);
	assert_int_equal(ib_dealloc_pd(env->pd), 0);
	assert_int_equal(env->fd->live_qps, 0);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(env->fd->live_cqs, 0);
	assert_int_equal(env->fd->live_pds, 0);
	return fake_dev_free(env->fd);
}

static struct ib_qp_init_attr qp_attr(struct env *env)
{
	return (struct ib_qp_init_attr){
		.send_cq = env->cq,
		.recv_cq = env->cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 4,
			 .max_recv_sge = 4 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
}

static struct ib_qp *new_qp(struct env *env)
{
	struct ib_qp_init_attr a = qp_attr(env);
	struct ib_qp *qp = ib_create_qp(env->pd, &a);

	assert_false(IS_ERR(qp));
	return qp;
}

static void alloc_pd_and_cq_arguments(void **state)
{
	struct env *env = *state;
	struct ib_device *dev = &env->fd->ibdev;

	assert_ptr_equal(ib_alloc_pd(NULL, 0), ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_pd(dev, 1), ERR_PTR(-EINVAL));
	assert_int_equal(env->pd->local_dma_lkey, FAKE_LOCAL_DMA_LKEY);
	assert_int_equal(ib_dealloc_pd(NULL), -EINVAL);

	assert_ptr_equal(ib_alloc_cq(NULL, NULL, 8, 0, IB_POLL_DIRECT),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_cq(dev, NULL, 0, 0, IB_POLL_DIRECT),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_cq(dev, NULL, 4097, 0, IB_POLL_DIRECT),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_cq(dev, NULL, 8, 0, (enum ib_poll_context)9),
			 ERR_PTR(-EINVAL));
	assert_int_equal(ib_free_cq(NULL), -EINVAL);
	assert_int_equal(ib_free_cq(ERR_PTR(-ENOMEM)), -EINVAL);
	assert_int_equal(env->fd->live_cqs, 1);
	assert_int_equal(env->fd->live_pds, 1);
}

static void create_qp_checks(void **state)
{
	struct env *env = *state;
	struct ib_qp_init_attr a;
	struct ib_cq *other_cq;
	struct fake_dev *other;

#define EXPECT(field_change, err)                                          \
	do {                                                               \
		a = qp_attr(env);                                          \
		field_change;                                              \
		assert_ptr_equal(ib_create_qp(env->pd, &a), ERR_PTR(err)); \
	} while (0)

	EXPECT(a.send_cq = NULL, -EINVAL);
	EXPECT(a.recv_cq = NULL, -EINVAL);
	EXPECT(a.qp_type = IB_QPT_UD, -EINVAL);
	EXPECT(a.sq_sig_type = (enum ib_sig_type)5, -EINVAL);
	EXPECT(a.cap.max_send_wr = 1025, -EINVAL);
	EXPECT(a.cap.max_recv_wr = 1025, -EINVAL);
	EXPECT(a.cap.max_send_sge = 17, -EINVAL);
	EXPECT(a.cap.max_recv_sge = 17, -EINVAL);
	EXPECT(a.cap.max_inline_data = 64, -EINVAL);
	EXPECT(a.port_num = 2, -EINVAL);
	EXPECT(a.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK, -EINVAL);
	EXPECT(a.create_flags = IB_QP_CREATE_INTEGRITY_EN, -EOPNOTSUPP);
#undef EXPECT
	a = qp_attr(env);
	assert_ptr_equal(ib_create_qp(NULL, &a), ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_create_qp(env->pd, NULL), ERR_PTR(-EINVAL));

	/* A CQ of another device. */
	other = fake_dev_new("other%d", RDMA_PROTOCOL_IB);
	assert_non_null(other);
	other_cq = ib_alloc_cq(&other->ibdev, NULL, 8, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(other_cq));
	a.send_cq = other_cq;
	assert_ptr_equal(ib_create_qp(env->pd, &a), ERR_PTR(-EINVAL));
	/* An SRQ of another device. */
	a = qp_attr(env);
	a.srq = &(struct ib_srq){ .device = &other->ibdev,
				  .attr = { .max_wr = 4, .max_sge = 1 } };
	assert_ptr_equal(ib_create_qp(env->pd, &a), ERR_PTR(-EINVAL));
	assert_int_equal(ib_free_cq(other_cq), 0);
	assert_int_equal(fake_dev_free(other), 0);

	/* Nothing was held by the refused attempts. */
	assert_int_equal(env->pd->usecnt, 0);
	assert_int_equal(env->cq->usecnt, 0);
	assert_int_equal(env->fd->live_qps, 0);
}

static void create_qp_fills_the_core_fields(void **state)
{
	struct env *env = *state;
	struct ib_qp_init_attr a = qp_attr(env), got;
	struct ib_qp_attr attr;
	struct ib_qp *qp;

	env->fd->ibdev.attrs.max_sge_rd = 2;
	qp = ib_create_qp(env->pd, &a);
	assert_false(IS_ERR(qp));
	assert_int_equal(a.port_num, 1); /* 0 means port 1 */
	assert_int_equal(qp->state, IB_QPS_RESET);
	assert_int_equal(qp->port, 1);
	assert_int_equal(qp->max_write_sge, 4);
	assert_int_equal(qp->max_read_sge, 2); /* min(send SGEs, max_sge_rd) */
	assert_int_equal(qp->cap.max_send_wr, 16);
	assert_int_equal(qp->mrs_used, 0);
	assert_true(list_empty(&qp->rdma_mrs));
	assert_int_equal(env->pd->usecnt, 1);
	assert_int_equal(env->cq->usecnt, 2); /* send and receive */

	assert_int_equal(ib_query_qp(qp, &attr, 0, &got), 0);
	assert_int_equal(attr.qp_state, IB_QPS_RESET);
	assert_int_equal(attr.port_num, 1);
	assert_int_equal(got.cap.max_recv_sge, 4);
	assert_ptr_equal(got.send_cq, env->cq);
	assert_int_equal(got.qp_type, IB_QPT_RC);
	assert_int_equal(got.sq_sig_type, IB_SIGNAL_REQ_WR);
	assert_int_equal(ib_query_qp(qp, &attr, 0, NULL), 0);
	assert_int_equal(ib_query_qp(NULL, &attr, 0, NULL), -EINVAL);
	assert_int_equal(ib_query_qp(qp, NULL, 0, NULL), -EINVAL);
	assert_int_equal(ib_destroy_qp(qp), 0);
	assert_int_equal(ib_destroy_qp(NULL), -EINVAL);
	env->fd->ibdev.attrs.max_sge_rd = 16;
}

static void pd_busy_with_qps_or_mrs(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = new_qp(env);
	struct ib_mr *mr;

	assert_int_equal(ib_dealloc_pd(env->pd), -EBUSY);
	assert_int_equal(ib_destroy_qp(qp), 0);
	mr = ib_alloc_mr(env->pd, IB_MR_TYPE_MEM_REG, 4);
	assert_false(IS_ERR(mr));
	assert_int_equal(ib_dealloc_pd(env->pd), -EBUSY);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(env->pd->usecnt, 0);
	assert_int_equal(env->fd->live_pds, 1); /* still there */
}

static void cq_busy_with_qps(void **state)
{
	struct env *env = *state;
	struct ib_cq *rcq =
		ib_alloc_cq(&env->fd->ibdev, NULL, 8, 0, IB_POLL_DIRECT);
	struct ib_qp_init_attr a = qp_attr(env);
	struct ib_qp *qp;

	assert_false(IS_ERR(rcq));
	a.recv_cq = rcq;
	qp = ib_create_qp(env->pd, &a);
	assert_false(IS_ERR(qp));
	assert_int_equal(ib_free_cq(rcq), -EBUSY);
	assert_int_equal(ib_free_cq(env->cq), -EBUSY);
	assert_int_equal(env->fd->live_cqs, 2);
	assert_int_equal(ib_destroy_qp(qp), 0);
	assert_int_equal(rcq->usecnt, 0);
	assert_int_equal(ib_free_cq(rcq), 0);
}

static void qp_busy_while_pool_mrs_are_taken(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = new_qp(env);
	struct ib_mr *mr;

	assert_int_equal(
		ib_mr_pool_init(qp, &qp->rdma_mrs, 2, IB_MR_TYPE_MEM_REG, 8, 0),
		0);
	mr = ib_mr_pool_get(qp, &qp->rdma_mrs);
	assert_non_null(mr);
	assert_int_equal(ib_destroy_qp(qp), -EBUSY);
	/* A pool MR cannot be deregistered behind the pool's back. */
	assert_int_equal(ib_dereg_mr(mr), -EBUSY);
	assert_int_equal(env->fd->live_mrs, 2);
	ib_mr_pool_put(qp, &qp->rdma_mrs, mr);
	/* Destroying the QP frees its pools. */
	assert_int_equal(ib_destroy_qp(qp), 0);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(env->pd->usecnt, 0);
}

static void modify_qp_other_rules(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = new_qp(env);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT };
	const int init_mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			      IB_QP_ACCESS_FLAGS;

	/* The state table itself: test_core_qp_state. */
	assert_int_equal(ib_modify_qp(NULL, &attr, IB_QP_STATE), -EINVAL);
	assert_int_equal(ib_modify_qp(qp, NULL, IB_QP_STATE), -EINVAL);
	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_DEST_QPN << 1), -EINVAL);
	/* IB_QP_CUR_STATE must match what the QP is in. */
	attr.cur_qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_CUR_STATE),
			 -EINVAL);
	attr.port_num = 3;
	assert_int_equal(ib_modify_qp(qp, &attr, init_mask), -EINVAL);
	assert_int_equal(qp->state, IB_QPS_RESET);
	/* The provider's refusal leaves the state alone. */
	attr.port_num = 1;
	env->fd->modify_qp_ret = -EIO;
	assert_int_equal(ib_modify_qp(qp, &attr, init_mask), -EIO);
	assert_int_equal(qp->state, IB_QPS_RESET);
	env->fd->modify_qp_ret = 0;
	assert_int_equal(ib_modify_qp(qp, &attr, init_mask), 0);
	assert_int_equal(qp->state, IB_QPS_INIT);
	assert_int_equal(to_fake_qp(qp)->last_mask, init_mask);
	/* Without IB_QP_STATE the state stays. */
	attr.qp_state = IB_QPS_ERR;
	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_ACCESS_FLAGS), 0);
	assert_int_equal(qp->state, IB_QPS_INIT);
	assert_int_equal(ib_destroy_qp(qp), 0);
}

static void post_arguments(void **state)
{
	struct env *env = *state;
	struct ib_qp *qp = new_qp(env);
	struct ib_send_wr swr = { .opcode = IB_WR_SEND }, swr2 = swr;
	struct ib_recv_wr rwr = { 0 };
	const struct ib_send_wr *bad = NULL;
	const struct ib_recv_wr *rbad = NULL;

	assert_int_equal(ib_post_send(NULL, &swr, &bad), -EINVAL);
	assert_ptr_equal(bad, &swr);
	assert_int_equal(ib_post_send(qp, NULL, &bad), -EINVAL);
	assert_null(bad);
	assert_int_equal(ib_post_send(qp, &swr, NULL), -EINVAL); /* RESET */
	assert_int_equal(ib_post_recv(NULL, &rwr, &rbad), -EINVAL);
	assert_ptr_equal(rbad, &rwr);
	assert_int_equal(ib_post_recv(qp, NULL, NULL), -EINVAL);
	/* The provider reports the first WR it did not take. */
	swr.next = &swr2;
	qp->state = IB_QPS_RTS;
	assert_int_equal(ib_post_send(qp, &swr, &bad), 0);
	assert_int_equal(to_fake_qp(qp)->sends, 2);
	qp->state = IB_QPS_RESET;
	assert_int_equal(ib_destroy_qp(qp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(alloc_pd_and_cq_arguments,
						setup, teardown),
		cmocka_unit_test_setup_teardown(create_qp_checks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(create_qp_fills_the_core_fields,
						setup, teardown),
		cmocka_unit_test_setup_teardown(pd_busy_with_qps_or_mrs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(cq_busy_with_qps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			qp_busy_while_pool_mrs_are_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(modify_qp_other_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(post_arguments, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

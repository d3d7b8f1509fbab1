// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The software device's objects: profiles, fabrics, devices, connections,
 * the errnos of bad input and of freeing what is in use, and the CQ event
 * extension it does not have.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <errno.h>
#include <string.h>

/* The masks the IBA (and the kernel's ib_modify_qp_is_ok()) require for RC. */
#define TEST_INIT_MASK \
	(IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS)
#define TEST_RTR_MASK                                               \
	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
	 IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)

static void test_profiles(void **state)
{
	struct soft_profile p;
	const char *names[] = { "mlx5", "rxe", "siw" };
	size_t i;

	for (i = 0; i < 3; i++) {
		assert_int_equal(soft_profile_get(names[i], &p), 0);
		assert_string_equal(p.name, names[i]);
		assert_true(p.attrs.device_cap_flags &
			    IB_DEVICE_MEM_MGT_EXTENSIONS);
		assert_true(p.attrs.device_cap_flags &
			    IB_DEVICE_LOCAL_DMA_LKEY);
		assert_false(p.iommu);
		assert_false(p.threaded);
	}
	assert_int_equal(soft_profile_get("mlx5", &p), 0);
	assert_int_equal(p.protocol, RDMA_PROTOCOL_IB);
	assert_int_equal(p.attrs.max_sgl_rd, 3);
	assert_int_equal(p.attrs.max_send_sge, 30);
	assert_int_equal(p.attrs.max_sge_rd, 30);
	assert_true(p.attrs.kernel_cap_flags & IBK_INTEGRITY_HANDOVER);
	assert_int_equal(p.attrs.max_pi_fast_reg_page_list_len,
			 p.attrs.max_fast_reg_page_list_len / 2);

	assert_int_equal(soft_profile_get("rxe", &p), 0);
	assert_int_equal(p.protocol, RDMA_PROTOCOL_ROCE);
	assert_int_equal(p.attrs.max_send_sge, 32);
	assert_int_equal(p.attrs.max_sge_rd, 32);
	assert_int_equal(p.attrs.max_fast_reg_page_list_len, 512);
	assert_int_equal(p.attrs.max_qp_wr, 0x4000);
	assert_int_equal(p.attrs.max_sgl_rd, 0);

	assert_int_equal(soft_profile_get("siw", &p), 0);
	assert_int_equal(p.protocol, RDMA_PROTOCOL_IWARP);
	assert_int_equal(p.attrs.max_send_sge, 6);
	assert_int_equal(p.attrs.max_sge_rd, 1);
	assert_int_equal(p.attrs.max_fast_reg_page_list_len, 256);
	assert_false(p.attrs.kernel_cap_flags & IBK_INTEGRITY_HANDOVER);

	assert_int_equal(soft_profile_get(NULL, &p), -EINVAL);
	assert_int_equal(soft_profile_get("rxe", NULL), -EINVAL);
	assert_int_equal(soft_profile_get("cxgb4", &p), -ENOENT);
}

static void test_fabric(void **state)
{
	struct soft_fabric *f = soft_fabric_create();
	struct ib_device *dev;
	struct soft_profile p;

	assert_false(IS_ERR(f));
	assert_int_equal(soft_fabric_destroy(NULL), -EINVAL);
	assert_int_equal(soft_profile_get("rxe", &p), 0);
	dev = soft_device_create(f, "fab_test_%d", &p);
	assert_false(IS_ERR(dev));
	assert_int_equal(soft_fabric_destroy(f), -EBUSY);
	assert_int_equal(soft_device_destroy(dev), 0);
	assert_int_equal(soft_fabric_destroy(f), 0);
}

static void test_device_create_bad(void **state)
{
	struct soft_fabric *f = soft_fabric_create();
	struct soft_profile p, bad;

	assert_int_equal(soft_profile_get("mlx5", &p), 0);
	assert_ptr_equal(soft_device_create(NULL, "x", &p), ERR_PTR(-EINVAL));
	assert_ptr_equal(soft_device_create(f, "x", NULL), ERR_PTR(-EINVAL));
	bad = p;
	bad.protocol = (enum rdma_protocol)7;
	assert_ptr_equal(soft_device_create(f, "x", &bad), ERR_PTR(-EINVAL));
	bad = p;
	bad.attrs.max_qp_wr = 0;
	assert_ptr_equal(soft_device_create(f, "x", &bad), ERR_PTR(-EINVAL));
	bad = p;
	bad.attrs.max_sge_rd = 0;
	assert_ptr_equal(soft_device_create(f, "x", &bad), ERR_PTR(-EINVAL));
	bad = p;
	bad.attrs.max_pi_fast_reg_page_list_len = 0;
	assert_ptr_equal(soft_device_create(f, "x", &bad), ERR_PTR(-EINVAL));
	bad = p;
	bad.attrs.max_fast_reg_page_list_len = 0;
	assert_ptr_equal(soft_device_create(f, "x", &bad), ERR_PTR(-EINVAL));
	assert_ptr_equal(soft_device_create(f, "bad%s", &p), ERR_PTR(-EINVAL));
	assert_ptr_equal(soft_device_create(f, "", &p), ERR_PTR(-EINVAL));
	assert_int_equal(soft_fabric_destroy(f), 0);

	assert_int_equal(soft_device_destroy(NULL), -EINVAL);
	assert_false(soft_device_is_soft(NULL));
	assert_int_equal(soft_device_stats(NULL, NULL), -EINVAL);
	assert_int_equal(soft_device_profile(NULL, &p), -EINVAL);
}

static void test_device_names_and_attrs(void **state)
{
	struct soft_fabric *f = soft_fabric_create();
	struct ib_device *a, *b, *c, *d;
	struct soft_profile p, got;

	assert_int_equal(soft_profile_get("siw", &p), 0);
	p.attrs.max_send_sge = 3; /* every attribute is the caller's */
	a = soft_device_create(f, "soft_test_%d", &p);
	b = soft_device_create(f, "soft_test_%d", &p);
	assert_false(IS_ERR(a));
	assert_false(IS_ERR(b));
	assert_string_equal(a->name, "soft_test_0");
	assert_string_equal(b->name, "soft_test_1");
	assert_ptr_equal(ib_device_get_by_name("soft_test_1"), b);
	assert_ptr_equal(soft_device_create(f, "soft_test_1", &p),
			 ERR_PTR(-EEXIST));
	c = soft_device_create(f, NULL, &p);
	assert_false(IS_ERR(c));
	assert_int_equal(strncmp(c->name, "soft_siw_", 9), 0);
	assert_true(soft_device_is_soft(a));
	assert_int_equal(a->attrs.max_send_sge, 3);
	assert_true(rdma_protocol_iwarp(a, 1));
	assert_true(rdma_cap_read_inv(a, 1));
	assert_true(ib_uses_virt_dma(a));
	assert_int_equal(soft_device_profile(a, &got), 0);
	assert_int_equal(got.attrs.max_send_sge, 3);
	p.iommu = true;
	d = soft_device_create(f, "soft_iommu_%d", &p);
	assert_false(IS_ERR(d));
	assert_false(ib_uses_virt_dma(d));
	assert_true(d->iommu);
	assert_int_equal(soft_device_destroy(a), 0);
	assert_int_equal(soft_device_destroy(b), 0);
	assert_int_equal(soft_device_destroy(c), 0);
	assert_int_equal(soft_device_destroy(d), 0);
	assert_null(ib_device_get_by_name("soft_test_1"));
	assert_int_equal(soft_fabric_destroy(f), 0);
}

/* Objects in use are refused with -EBUSY, in every layer. */
static void test_busy(void **state)
{
	struct soft_env env;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_mr *mr;
	char buf[64];

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "rxe" });
	assert_int_equal(soft_device_destroy(env.dev[0]), -EBUSY);
	assert_int_equal(ib_dealloc_pd(env.pd[0]), -EBUSY); /* QP */
	assert_int_equal(ib_free_cq(env.cq[0]), -EBUSY); /* QP */

	pd = ib_alloc_pd(env.dev[0], 0);
	assert_false(IS_ERR(pd));
	mr = ib_reg_user_mr(pd, (uintptr_t)buf, sizeof(buf), (uintptr_t)buf,
			    IB_ACCESS_LOCAL_WRITE);
	assert_false(IS_ERR(mr));
	assert_int_equal(ib_dealloc_pd(pd), -EBUSY); /* MR */
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dealloc_pd(pd), 0);

	cq = ib_alloc_cq(env.dev[0], NULL, 8, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(cq));
	assert_int_equal(ib_free_cq(cq), 0);
	soft_env_fini(&env);
}

/* Each of a device's PDs and CQs keeps it; freed, it goes. */
static void test_device_destroy_busy(void **state)
{
	struct soft_fabric *f = soft_fabric_create();
	struct soft_profile p;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;

	assert_int_equal(soft_profile_get("mlx5", &p), 0);
	p.threaded = true;
	dev = soft_device_create(f, "busy_%d", &p);
	assert_false(IS_ERR(dev));
	pd = ib_alloc_pd(dev, 0);
	assert_false(IS_ERR(pd));
	assert_int_equal(soft_device_destroy(dev), -EBUSY);
	assert_int_equal(ib_dealloc_pd(pd), 0);
	cq = ib_alloc_cq(dev, NULL, 4, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(cq));
	assert_int_equal(soft_device_destroy(dev), -EBUSY);
	assert_int_equal(ib_free_cq(cq), 0);
	assert_int_equal(soft_device_destroy(dev), 0);
	assert_int_equal(soft_fabric_destroy(f), 0);
}

static void test_connect(void **state)
{
	struct soft_env env, other;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	soft_env_init(&env, &(struct soft_env_cfg){ .no_connect = true });
	assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_RESET);
	assert_int_equal(soft_qp_connect(NULL, env.qp[1]), -EINVAL);
	assert_int_equal(soft_qp_connect(env.qp[0], NULL), -EINVAL);
	assert_int_equal(soft_qp_connect(env.qp[0], env.qp[0]), -EINVAL);

	soft_env_init(&other, &(struct soft_env_cfg){ .no_connect = true });
	assert_int_equal(soft_qp_connect(env.qp[0], other.qp[1]), -EXDEV);
	soft_env_fini(&other);

	assert_int_equal(soft_qp_connect(env.qp[0], env.qp[1]), 0);
	assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_RTS);
	assert_int_equal(soft_env_state(env.qp[1]), IB_QPS_RTS);
	assert_int_equal(soft_qp_connect(env.qp[0], env.qp[1]), -EINVAL);

	/* RESET disconnects; the pair can be connected again. */
	assert_int_equal(ib_modify_qp(env.qp[0], &attr, IB_QP_STATE), 0);
	assert_int_equal(ib_modify_qp(env.qp[1], &attr, IB_QP_STATE), 0);
	assert_int_equal(soft_qp_connect(env.qp[1], env.qp[0]), 0);
	assert_int_equal(soft_env_state(env.qp[1]), IB_QPS_RTS);
	soft_env_fini(&env);
}

static void test_modify_rtr(void **state)
{
	struct soft_env env;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT, .port_num = 1 };

	soft_env_init(&env, &(struct soft_env_cfg){ .no_connect = true });
	assert_int_equal(ib_modify_qp(env.qp[0], &attr, TEST_INIT_MASK), 0);
	attr.qp_state = IB_QPS_RTR;
	/* RC RTR needs the destination QP number... */
	assert_int_equal(
		ib_modify_qp(env.qp[0], &attr, TEST_RTR_MASK & ~IB_QP_DEST_QPN),
		-EINVAL);
	/* ...of a QP that exists on the fabric and is not itself. */
	attr.dest_qp_num = 0xfffff0;
	assert_int_equal(ib_modify_qp(env.qp[0], &attr, TEST_RTR_MASK),
			 -EINVAL);
	attr.dest_qp_num = env.qp[0]->qp_num;
	assert_int_equal(ib_modify_qp(env.qp[0], &attr, TEST_RTR_MASK),
			 -EINVAL);
	assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_INIT);
	attr.dest_qp_num = env.qp[1]->qp_num;
	assert_int_equal(ib_modify_qp(env.qp[0], &attr, TEST_RTR_MASK), 0);
	assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_RTR);
	soft_env_fini(&env);
}

/* Limits of the device bound what can be created. */
static void test_create_limits(void **state)
{
	struct soft_env env;
	struct ib_qp_init_attr qa = { 0 };

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "siw",
						    .no_connect = true });
	qa.send_cq = env.cq[0];
	qa.recv_cq = env.cq[0];
	qa.qp_type = IB_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 7; /* siw: 6 */
	qa.cap.max_recv_sge = 1;
	assert_ptr_equal(ib_create_qp(env.pd[0], &qa), ERR_PTR(-EINVAL));
	qa.cap.max_send_sge = 1;
	qa.create_flags = IB_QP_CREATE_INTEGRITY_EN; /* not on siw */
	assert_ptr_equal(ib_create_qp(env.pd[0], &qa), ERR_PTR(-EOPNOTSUPP));
	assert_ptr_equal(ib_alloc_mr_integrity(env.pd[0], 4, 4),
			 ERR_PTR(-EOPNOTSUPP));
	assert_ptr_equal(ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 257),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_cq(env.dev[0], NULL, 1024 * 32 * 100 + 1, 0,
				     IB_POLL_DIRECT),
			 ERR_PTR(-EINVAL));
	soft_env_fini(&env);
}

/*
 * rdmarw_cq_events_take(): the software device has no event thread to
 * save (the poster's thread runs the comp_handler) and answers
 * -EOPNOTSUPP; bad input is -EINVAL before that, on any device.
 */
static void test_cq_events(void **state)
{
	struct soft_env env;
	struct rdmarw_cq_events ev = { .nfds = -1 };
	struct ib_cq *cq, *wq;

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "rxe" });
	cq = ib_alloc_cq(env.dev[0], NULL, 8, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(cq));
	wq = ib_alloc_cq(env.dev[0], NULL, 8, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(wq));

	assert_int_equal(rdmarw_cq_events_take(NULL, &ev), -EINVAL);
	assert_int_equal(rdmarw_cq_events_take(ERR_PTR(-ENOMEM), &ev), -EINVAL);
	assert_int_equal(rdmarw_cq_events_take(cq, NULL), -EINVAL);
	assert_int_equal(rdmarw_cq_events_take(wq, &ev), -EINVAL);
	assert_int_equal(rdmarw_cq_events_consume(NULL), -EINVAL);
	assert_int_equal(rdmarw_cq_events_give(NULL), -EINVAL);
	assert_int_equal(rdmarw_cq_events_consume(ERR_PTR(-EINVAL)), -EINVAL);
	assert_int_equal(rdmarw_cq_events_give(ERR_PTR(-EINVAL)), -EINVAL);

	assert_int_equal(rdmarw_cq_events_take(cq, &ev), -EOPNOTSUPP);
	assert_int_equal(ev.nfds, -1); /* untouched */
	assert_int_equal(rdmarw_cq_events_consume(cq), -EOPNOTSUPP);
	assert_int_equal(rdmarw_cq_events_give(cq), -EOPNOTSUPP);

	assert_int_equal(ib_free_cq(wq), 0);
	assert_int_equal(ib_free_cq(cq), 0);
	soft_env_fini(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_fabric),
		cmocka_unit_test(test_device_create_bad),
		cmocka_unit_test(test_device_names_and_attrs),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_device_destroy_busy),
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_modify_rtr),
		cmocka_unit_test(test_create_limits),
		cmocka_unit_test(test_cq_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A client and a server in one process, written as a kernel ULP would:
 * the server accepts with its buffer's address and rkey in the REP's
 * private data, the client WRITEs into it with the R/W API over the QP
 * rdma_cm connected, on every software profile.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cm_env.h"

#include <rdmarw/rw.h>
#include <rdmarw/scatterlist.h>

struct wire {
	u64 addr;
	u32 rkey;
} __attribute__((packed));

static bool write_done;

static void done(struct ib_cq *cq, struct ib_wc *wc)
{
	assert_int_equal(wc->status, IB_WC_SUCCESS);
	write_done = true;
}

static void create_qp(struct soft_env *env, int side, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {
		.send_cq = env->cq[side],
		.recv_cq = env->cq[side],
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 4 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	assert_int_equal(rdma_create_qp(id, env->pd[side], &qa), 0);
}

static void rw_write(const char *profile)
{
	static char src[8192], dst[8192];
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *listen, *client, *child;
	struct ib_cqe cqe = { .done = done };
	struct rdma_rw_ctx ctx;
	struct scatterlist sg;
	struct soft_env env;
	struct ib_mr *mr;
	struct wire w;
	struct cm_rec *r;
	int n = 0, ret, i;

	cm_env_init(&env, profile, false);
	listen = cm_listener(NULL, 7500);
	{
		struct sockaddr_in src_a = cm_in4("10.0.0.1", 0);
		struct sockaddr_in dst_a = cm_in4("10.0.0.2", 7500);

		client = cm_id(NULL);
		assert_int_equal(
			rdma_resolve_addr(client, SA(src_a), SA(dst_a), 1000),
			0);
		assert_int_equal(cm_wait(++n)->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
		assert_int_equal(rdma_resolve_route(client, 1000), 0);
		assert_int_equal(cm_wait(++n)->ev,
				 RDMA_CM_EVENT_ROUTE_RESOLVED);
	}
	create_qp(&env, 0, client);
	assert_int_equal(rdma_connect(client, &cp), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = r->id;
	create_qp(&env, 1, child);
	memset(dst, 0, sizeof(dst));
	mr = soft_env_reg(&env, 1, dst, sizeof(dst), SOFT_PAIR_ACCESS);
	w.addr = (uintptr_t)dst;
	w.rkey = mr->rkey;
	cp.private_data = &w;
	cp.private_data_len = sizeof(w);
	assert_int_equal(rdma_accept(child, &cp), 0);
	cm_wait2(&n, RDMA_CM_EVENT_ESTABLISHED, client, &r, child, NULL);
	memcpy(&w, r->pdata, sizeof(w)); /* the REP's private data */

	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = (char)(i * 7 + 1);
	sg_init_one(&sg, src, sizeof(src));
	ret = rdma_rw_ctx_init(&ctx, client->qp, client->port_num, &sg, 1, 0,
			       w.addr, w.rkey, DMA_TO_DEVICE);
	assert_true(ret > 0);
	write_done = false;
	assert_int_equal(rdma_rw_ctx_post(&ctx, client->qp, client->port_num,
					  &cqe, NULL),
			 0);
	for (i = 0; i < 1000 && !write_done; i++)
		ib_process_cq_direct(env.cq[0], 16);
	assert_true(write_done);
	cm_placed(client, child, dst, src, sizeof(src));
	rdma_rw_ctx_destroy(&ctx, client->qp, client->port_num, &sg, 1,
			    DMA_TO_DEVICE);

	assert_int_equal(rdma_disconnect(client), 0);
	n += strcmp(profile, "siw") ? 4 : 2;
	cm_wait(n);
	soft_env_dereg(mr);
	rdma_destroy_qp(client);
	rdma_destroy_qp(child);
	rdma_destroy_id(client);
	rdma_destroy_id(child);
	rdma_destroy_id(listen);
	cm_env_fini(&env);
}

static void test_rw_mlx5(void **s)
{
	rw_write("mlx5");
}

static void test_rw_rxe(void **s)
{
	rw_write("rxe");
}

static void test_rw_siw(void **s)
{
	rw_write("siw");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rw_mlx5),
		cmocka_unit_test(test_rw_rxe),
		cmocka_unit_test(test_rw_siw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_cm on the software device, per profile: resolve, listen, connect,
 * accept with private data, data over the connection, disconnect in the
 * kernel's event order; reject with reason and private data; nobody
 * listening; the private-data limits of IB CM and MPA.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cm_env.h"

#include <errno.h>

static bool is_iwarp(const char *profile)
{
	return !strcmp(profile, "siw");
}

static int ctx_server, ctx_client;

/* Connect, up to both ESTABLISHED; returns the child; *n updated. */
static struct rdma_cm_id *connect_pair(struct soft_env *env,
				       const char *profile, u16 port,
				       struct rdma_cm_id **client, int *n)
{
	u8 req[56], rep[196];
	struct rdma_conn_param cp = { .private_data = req,
				      .private_data_len = sizeof(req),
				      .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *child;
	struct cm_rec *r;

	memset(req, 'q', sizeof(req));
	memset(rep, 'p', sizeof(rep));
	*client = cm_client(env, &ctx_client, port, n);
	assert_int_equal(rdma_connect(*client, &cp), 0);
	r = cm_wait(++*n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_true(r->in_cm_thread);
	child = r->id;
	assert_ptr_equal(r->context, &ctx_server); /* inherited */
	assert_ptr_equal(child->device, env->dev[1]);
	assert_int_equal(child->port_num, 1);
	/* IB: the whole REQ field less the CMA header; iWARP: what was sent */
	assert_int_equal(r->len, 56);
	assert_memory_equal(r->pdata, req, 56);
	cm_create_qp(env, 1, child);
	/*
	 * iWARP's accept carries the IRD/ORD the MPA reply advertises: the
	 * kernel's cma_accept_iw() refuses a NULL conn_param before it
	 * touches the QP; IB may accept with none (cma_rep_recv's case).
	 */
	if (is_iwarp(profile)) {
		assert_int_equal(rdma_accept(child, NULL), -EINVAL);
		assert_int_equal(soft_env_state(child->qp), IB_QPS_INIT);
	}
	cp.private_data = rep;
	cp.private_data_len = is_iwarp(profile) ? 100 : 196;
	assert_int_equal(rdma_accept(child, &cp), 0);
	assert_int_equal(soft_env_state(child->qp), IB_QPS_RTS);
	cm_wait2(n, RDMA_CM_EVENT_ESTABLISHED, *client, &r, child, NULL);
	assert_int_equal(r->len, is_iwarp(profile) ? 100 : 196);
	assert_memory_equal(r->pdata, rep, r->len);
	assert_int_equal(soft_env_state((*client)->qp), IB_QPS_RTS);
	/* accepting twice is a state error */
	assert_int_equal(rdma_accept(child, NULL), -EINVAL);
	assert_int_equal(rdma_reject(child, NULL, 0, 28), -EINVAL);
	return child;
}

static void connect_write_disconnect(const char *profile)
{
	struct rdma_cm_id *listen, *client, *child;
	char src[64], dst[64];
	struct ib_mr *ms, *md;
	struct soft_env env;
	struct cm_rec *r;
	int n = 0, base;

	cm_env_init(&env, profile, false);
	listen = cm_listener(&ctx_server, 7471);
	child = connect_pair(&env, profile, 7471, &client, &n);

	/* one WRITE through the connection the CM made */
	memset(src, 'w', sizeof(src));
	memset(dst, 0, sizeof(dst));
	ms = soft_env_reg(&env, 0, src, sizeof(src), SOFT_PAIR_ACCESS);
	md = soft_env_reg(&env, 1, dst, sizeof(dst), SOFT_PAIR_ACCESS);
	assert_int_equal(soft_env_rdma(client->qp, IB_WR_RDMA_WRITE, 1, src, 64,
				       ms->lkey, (uintptr_t)dst, md->rkey),
			 0);
	soft_env_expect(env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	cm_placed(client, child, dst, src, 64);

	/* the passive side disconnects: the peer hears first */
	soft_env_post_recv(client->qp, 9, dst, 8, md->lkey == 0 ? 0 : ms->lkey);
	assert_int_equal(rdma_disconnect(child), 0);
	/* TCP: ERR once the close is done (kernel siw: CLOSING, SQD) */
	if (!cm_env_tcp())
		assert_int_equal(soft_env_state(child->qp), IB_QPS_ERR);
	base = n;
	if (is_iwarp(profile)) /* TCP: each side as its socket tells it */
		cm_wait2(&n, RDMA_CM_EVENT_DISCONNECTED, client, NULL, child,
			 NULL);
	if (!is_iwarp(profile)) {
		r = cm_wait(++n);
		assert_ptr_equal(r->id, client);
		assert_int_equal(r->ev, RDMA_CM_EVENT_DISCONNECTED);
		r = cm_wait(++n);
		assert_ptr_equal(r->id, client);
		assert_int_equal(r->ev, RDMA_CM_EVENT_TIMEWAIT_EXIT);
		r = cm_wait(++n);
		assert_ptr_equal(r->id, child);
		assert_int_equal(r->ev, RDMA_CM_EVENT_DISCONNECTED);
		r = cm_wait(++n);
		assert_ptr_equal(r->id, child);
		assert_int_equal(r->ev, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	}
	assert_int_equal(cm_settle(), n);
	assert_int_equal(n - base, is_iwarp(profile) ? 2 : 4);
	/* teardown flushed both sides */
	assert_int_equal(soft_env_state(client->qp), IB_QPS_ERR);
	assert_int_equal(soft_env_state(child->qp), IB_QPS_ERR);
	soft_env_expect(env.cq[0], 9, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	/* the peer may still call disconnect (as in reply to DREQ) */
	assert_int_equal(rdma_disconnect(client), 0);
	assert_int_equal(rdma_accept(child, NULL), -EINVAL);

	soft_env_dereg(ms);
	soft_env_dereg(md);
	rdma_destroy_qp(client);
	rdma_destroy_qp(child);
	assert_null(client->qp);
	rdma_destroy_id(client);
	rdma_destroy_id(child);
	rdma_destroy_id(listen);
	assert_int_equal(cm_settle(), n); /* nothing for destroyed ids */
	cm_env_fini(&env);
}

static void reject(const char *profile)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *listen, *client, *child;
	const void *data;
	struct soft_env env;
	struct cm_rec *r;
	u8 len = 0;
	int n = 0;

	cm_env_init(&env, profile, false);
	listen = cm_listener(&ctx_server, 7472);
	client = cm_client(&env, &ctx_client, 7472, &n);
	assert_int_equal(rdma_connect(client, &cp), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = r->id;
	assert_int_equal(
		rdma_reject(child, "busy!", 5, IB_CM_REJ_CONSUMER_DEFINED), 0);
	r = cm_wait(++n);
	assert_ptr_equal(r->id, client);
	assert_int_equal(r->ev, RDMA_CM_EVENT_REJECTED);
	if (is_iwarp(profile)) {
		assert_int_equal(r->status, -ECONNREFUSED);
		assert_int_equal(r->len, 5);
		assert_string_equal(rdma_reject_msg(client, r->status),
				    "refused by remote application");
	} else {
		assert_int_equal(r->status, IB_CM_REJ_CONSUMER_DEFINED);
		assert_int_equal(r->len, IB_CM_REJ_PRIVATE_DATA_SIZE);
		assert_string_equal(rdma_reject_msg(client, r->status),
				    "consumer defined");
	}
	assert_memory_equal(r->pdata, "busy!", 5);
	assert_true(rdma_is_consumer_reject(client, r->status));
	{
		struct rdma_cm_event ev = { .event = r->ev,
					    .status = r->status };

		ev.param.conn.private_data = r->pdata;
		ev.param.conn.private_data_len = r->len;
		data = rdma_consumer_reject_data(client, &ev, &len);
		assert_ptr_equal(data, r->pdata);
		assert_int_equal(len, r->len);
	}
	/* accept after reject, reject twice, connect again: state errors */
	cm_create_qp(&env, 1, child);
	assert_int_equal(rdma_accept(child, NULL), -EINVAL);
	assert_int_equal(rdma_reject(child, NULL, 0, 28), -EINVAL);
	assert_int_equal(rdma_connect(client, &cp), -EINVAL);
	assert_int_equal(rdma_disconnect(client), -EINVAL);
	assert_int_equal(cm_settle(), n);
	rdma_destroy_qp(child);
	rdma_destroy_qp(client);
	rdma_destroy_id(child);
	rdma_destroy_id(client);
	rdma_destroy_id(listen);
	cm_env_fini(&env);
}

static void nobody_listens(const char *profile)
{
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_id *client;
	struct soft_env env;
	struct cm_rec *r;
	u8 len = 0;
	int n = 0;

	cm_env_init(&env, profile, false);
	client = cm_client(&env, &ctx_client, 7473, &n);
	assert_int_equal(rdma_connect(client, &cp), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(r->status, is_iwarp(profile) ?
					    -ECONNREFUSED :
					    IB_CM_REJ_INVALID_SERVICE_ID);
	if (!is_iwarp(profile)) {
		struct rdma_cm_event ev = { .event = r->ev,
					    .status = r->status };

		assert_false(rdma_is_consumer_reject(client, r->status));
		assert_null(rdma_consumer_reject_data(client, &ev, &len));
	}
	rdma_destroy_qp(client);
	rdma_destroy_id(client);
	cm_env_fini(&env);
}

static void limits(const char *profile)
{
	static u8 big[255];
	struct rdma_conn_param cp = { .private_data = big };
	struct rdma_cm_id *listen, *client, *child;
	struct soft_env env;
	struct cm_rec *r;
	int n = 0;

	cm_env_init(&env, profile, false);
	listen = cm_listener(&ctx_server, 7474);
	client = cm_client(&env, &ctx_client, 7474, &n);
	/* REQ: 92 - 36 = 56 on IB and RoCE; MPA takes 255 (u8 length) */
	cp.private_data_len = 57;
	assert_int_equal(rdma_connect(client, &cp),
			 is_iwarp(profile) ? 0 : -EINVAL);
	if (!is_iwarp(profile)) {
		cp.private_data_len = 56;
		assert_int_equal(rdma_connect(client, &cp), 0);
	}
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = r->id;
	assert_int_equal(r->len, is_iwarp(profile) ? 57 : 56);
	cm_create_qp(&env, 1, child);
	/* REP 196, REJ 148 on IB and RoCE */
	cp.private_data_len = 197;
	assert_int_equal(rdma_accept(child, &cp),
			 is_iwarp(profile) ? 0 : -EINVAL);
	if (!is_iwarp(profile)) {
		assert_int_equal(rdma_reject(child, big, 149, 28), -EINVAL);
		assert_int_equal(rdma_reject(child, big, 148, 28), 0);
		r = cm_wait(++n);
		assert_int_equal(r->ev, RDMA_CM_EVENT_REJECTED);
	} else {
		cm_wait2(&n, RDMA_CM_EVENT_ESTABLISHED, client, &r, child,
			 NULL);
		assert_int_equal(r->len, 197);
		cp.private_data_len = 255;
		assert_int_equal(rdma_disconnect(client), 0);
		n += 2;
		cm_wait(n);
	}
	/* NULL data with a length */
	cp.private_data = NULL;
	cp.private_data_len = 1;
	assert_int_equal(rdma_accept(child, &cp), -EINVAL);
	rdma_destroy_qp(child);
	rdma_destroy_qp(client);
	rdma_destroy_id(child);
	rdma_destroy_id(client);
	rdma_destroy_id(listen);
	cm_env_fini(&env);
}

#define PROFILE_TESTS(p)                       \
	static void test_connect_##p(void **s) \
	{                                      \
		connect_write_disconnect(#p);  \
	}                                      \
	static void test_reject_##p(void **s)  \
	{                                      \
		reject(#p);                    \
	}                                      \
	static void test_nobody_##p(void **s)  \
	{                                      \
		nobody_listens(#p);            \
	}                                      \
	static void test_limits_##p(void **s)  \
	{                                      \
		limits(#p);                    \
	}
PROFILE_TESTS(mlx5)
PROFILE_TESTS(rxe)
PROFILE_TESTS(siw)

#define PROFILE_ENTRIES(p)                                                     \
	cmocka_unit_test(test_connect_##p), cmocka_unit_test(test_reject_##p), \
		cmocka_unit_test(test_nobody_##p),                             \
		cmocka_unit_test(test_limits_##p)

int main(void)
{
	const struct CMUnitTest tests[] = {
		PROFILE_ENTRIES(mlx5),
		PROFILE_ENTRIES(rxe),
		PROFILE_ENTRIES(siw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

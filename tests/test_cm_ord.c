// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The READ credit of a QP that rdma_cm connected.  The CM passes the
 * connection's depths into max_rd_atomic and max_dest_rd_atomic unchanged,
 * as the kernel's cma.c (the requester's from the REP on IB/RoCE, as
 * cm_rep_handler() swaps them), and the software device's requester
 * enforces max_rd_atomic as each profile's driver does:
 * - rxe: no credit, no READ (rxe_req.c's check_init_depth()): the Send
 *   Queue stops at the READ, later WRs wait behind it, ERR flushes them;
 *   a modify that raises max_rd_atomic (SQD -> SQD, then SQD -> RTS, the
 *   only moves that take it on a live QP) lets the READ run;
 * - mlx5: max_rd_atomic 0 leaves log_sra_max at 0, one READ at a time;
 * - siw: ORD 0 and a READ is refused by siw_activate_tx(); behind other
 *   work the connection drops: the READ flushes and both QPs go to ERR;
 *   siw takes no max_rd_atomic from a modify.
 * Until the CM passed 0 on, the device took 0 as 1 and every READ ran.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cm_env.h"

#define LEN 4096

enum { WR_WRITE1 = 1, WR_READ, WR_WRITE2 };

struct ord_env {
	struct soft_env env;
	struct rdma_cm_id *listen, *client, *child;
	u8 *buf[2];
	struct ib_mr *mr[2];
	int n;
	bool iwarp;
};

/*
 * Connect: the client asks @client_depth READs and answers one; the
 * server's accept asks one READ of its own and grants the client
 * @client_depth (its responder resources).  The client's QP gets
 * max_rd_atomic @client_depth on every profile (the REP's value on
 * IB/RoCE, the connect's on iWARP, which are the same here).
 */
static void ord_connect_on(struct ord_env *o, const char *profile,
			   u8 client_depth, u16 port, bool threaded)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = client_depth };
	struct cm_rec *r;
	int i;

	memset(o, 0, sizeof(*o));
	o->iwarp = !strcmp(profile, "siw");
	cm_env_init(&o->env, profile, threaded);
	for (i = 0; i < 2; i++) {
		o->buf[i] = malloc(LEN);
		assert_non_null(o->buf[i]);
		memset(o->buf[i], 0x10 + i, LEN);
		o->mr[i] = soft_env_reg(&o->env, i, o->buf[i], LEN,
					SOFT_PAIR_ACCESS);
	}
	o->listen = cm_listener(NULL, port);
	o->client = cm_client(&o->env, NULL, port, &o->n);
	assert_int_equal(rdma_connect(o->client, &cp), 0);
	r = cm_wait(++o->n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	o->child = r->id;
	cm_create_qp(&o->env, 1, o->child);
	cp.responder_resources = client_depth;
	cp.initiator_depth = 1;
	assert_int_equal(rdma_accept(o->child, &cp), 0);
	cm_wait2(&o->n, RDMA_CM_EVENT_ESTABLISHED, o->client, NULL, o->child,
		 NULL);
}

static void ord_connect(struct ord_env *o, const char *profile, u8 client_depth,
			u16 port)
{
	ord_connect_on(o, profile, client_depth, port, false);
}

static void ord_fini(struct ord_env *o)
{
	int i;

	assert_int_equal(rdma_disconnect(o->client), 0);
	o->n += o->iwarp ? 2 : 4;
	cm_wait(o->n);
	rdma_destroy_qp(o->client);
	rdma_destroy_qp(o->child);
	rdma_destroy_id(o->client);
	rdma_destroy_id(o->child);
	rdma_destroy_id(o->listen);
	for (i = 0; i < 2; i++) {
		soft_env_dereg(o->mr[i]);
		free(o->buf[i]);
	}
	cm_env_fini(&o->env);
}

/*
 * On the client: WRITE the first quarter of its buffer to the server's,
 * READ the server's second quarter into its third, WRITE its last quarter
 * to the server's: three signaled WRs in one post.
 */
static void post_write_read_write(struct ord_env *o)
{
	u64 raddr = (uintptr_t)o->buf[1];
	u32 rkey = o->mr[1]->rkey, lkey = o->mr[0]->lkey;
	struct ib_sge sge[3] = {
		{ (uintptr_t)o->buf[0], LEN / 4, lkey },
		{ (uintptr_t)o->buf[0] + LEN / 2, LEN / 4, lkey },
		{ (uintptr_t)o->buf[0] + 3 * LEN / 4, LEN / 4, lkey },
	};
	struct ib_rdma_wr wr[3];
	const struct ib_send_wr *bad = NULL;
	int i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr.wr_id = WR_WRITE1 + i;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.opcode = i == 1 ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = raddr + (u64)i * LEN / 4;
		wr[i].rkey = rkey;
	}
	assert_int_equal(ib_post_send(o->client->qp, &wr[0].wr, &bad), 0);
}

static bool read_landed(struct ord_env *o)
{
	return !memcmp(o->buf[0] + LEN / 2, o->buf[1] + LEN / 4, LEN / 4);
}

static void expect_all_done(struct ord_env *o)
{
	struct ib_cq *cq = o->env.cq[0];

	soft_env_expect(cq, WR_WRITE1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect(cq, WR_READ, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	soft_env_expect(cq, WR_WRITE2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(cq);
	assert_true(read_landed(o));
	cm_placed(o->client, o->child, o->buf[1] + LEN / 2,
		  o->buf[0] + 3 * LEN / 4, LEN / 4);
	assert_memory_equal(o->buf[1], o->buf[0], LEN / 4);
}

/*
 * On IB/RoCE a server that answers with responder resources 0 (which gives
 * the client max_rd_atomic 0) grants no remote READ either, as the
 * kernel's cm_init_qp_init_attr(); let it, RTS -> RTS.
 */
static void server_grants_read(struct ord_env *o)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTS,
		.qp_access_flags =
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE,
	};

	assert_int_equal(ib_modify_qp(o->child->qp, &a,
				      IB_QP_STATE | IB_QP_ACCESS_FLAGS),
			 0);
}

/* The WRITE before the READ ran; the READ and the WRITE behind it wait. */
static void expect_stalled(struct ord_env *o)
{
	struct ib_cq *cq = o->env.cq[0];
	int i;

	soft_env_expect(cq, WR_WRITE1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_memory_equal(o->buf[1], o->buf[0], LEN / 4);
	for (i = 0; i < 100; i++)
		soft_env_expect_empty(cq);
	assert_false(read_landed(o));
	assert_int_equal(o->buf[1][LEN / 2], 0x11); /* WRITE2 waits too */
	assert_int_equal(soft_env_state(o->client->qp), IB_QPS_RTS);
}

/*
 * The READ and the WRITE behind it flushed, nothing else on the client's
 * CQ, and neither the READ's sink nor the second WRITE's target touched.
 */
static void expect_read_flushed(struct ord_env *o)
{
	struct ib_cq *cq = o->env.cq[0];

	soft_env_expect(cq, WR_READ, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_READ);
	soft_env_expect(cq, WR_WRITE2, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(cq);
	assert_false(read_landed(o));
	assert_int_equal(o->buf[1][LEN / 2], 0x11);
}

/* rxe: initiator depth 0, the READ waits until ERR flushes it. */
static void depth0_rxe_waits_then_flushes(bool threaded, u16 port)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ord_env o;

	ord_connect_on(&o, "rxe", 0, port, threaded);
	post_write_read_write(&o);
	expect_stalled(&o);
	assert_int_equal(ib_modify_qp(o.client->qp, &err, IB_QP_STATE), 0);
	expect_read_flushed(&o);
	/* the server's QP answered and stays up */
	assert_int_equal(soft_env_state(o.child->qp), IB_QPS_RTS);
	ord_fini(&o);
}

static void test_depth0_rxe_waits_then_flushes(void **s)
{
	depth0_rxe_waits_then_flushes(false, 7600);
}

/* The same on a device whose progress threads run the Send Queue. */
static void test_depth0_rxe_threaded(void **s)
{
	depth0_rxe_waits_then_flushes(true, 7604);
}

/* rxe: a later post does not start the READ either. */
static void test_depth0_rxe_later_post_waits(void **s)
{
	struct ord_env o;

	ord_connect(&o, "rxe", 0, 7601);
	post_write_read_write(&o);
	expect_stalled(&o);
	assert_int_equal(soft_env_rdma(o.client->qp, IB_WR_RDMA_WRITE, 9,
				       o.buf[0], 8, o.mr[0]->lkey,
				       (uintptr_t)o.buf[1] + LEN - 8,
				       o.mr[1]->rkey),
			 0);
	soft_env_expect_empty(o.env.cq[0]);
	assert_int_equal(o.buf[1][LEN - 1], 0x11);
	ord_fini(&o);
}

/* rxe: SQD -> SQD raising max_rd_atomic, then SQD -> RTS runs the READ. */
static void test_depth0_rxe_modify_raises(void **s)
{
	struct ib_qp_attr a = { 0 };
	struct ib_cq *cq;
	struct ord_env o;

	ord_connect(&o, "rxe", 0, 7602);
	cq = o.env.cq[0];
	post_write_read_write(&o);
	expect_stalled(&o);
	server_grants_read(&o);
	/* RTS -> RTS cannot carry it (the kernel's table) */
	a.qp_state = IB_QPS_RTS;
	a.max_rd_atomic = 1;
	assert_int_equal(ib_modify_qp(o.client->qp, &a,
				      IB_QP_STATE | IB_QP_MAX_QP_RD_ATOMIC),
			 -EINVAL);
	a.qp_state = IB_QPS_SQD;
	assert_int_equal(ib_modify_qp(o.client->qp, &a, IB_QP_STATE), 0);
	soft_env_expect_empty(cq);
	assert_int_equal(ib_modify_qp(o.client->qp, &a,
				      IB_QP_STATE | IB_QP_MAX_QP_RD_ATOMIC),
			 0);
	soft_env_expect_empty(cq);
	assert_false(read_landed(&o));
	a.qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(o.client->qp, &a, IB_QP_STATE), 0);
	soft_env_expect(cq, WR_READ, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	soft_env_expect(cq, WR_WRITE2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(cq);
	assert_true(read_landed(&o));
	ord_fini(&o);
}

/* rxe: lowering max_rd_atomic to 0 the same way stops the next READ. */
static void test_depth1_rxe_modify_lowers(void **s)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_SQD };
	struct ord_env o;

	ord_connect(&o, "rxe", 1, 7603);
	assert_int_equal(ib_modify_qp(o.client->qp, &a, IB_QP_STATE), 0);
	a.max_rd_atomic = 0;
	assert_int_equal(ib_modify_qp(o.client->qp, &a,
				      IB_QP_STATE | IB_QP_MAX_QP_RD_ATOMIC),
			 0);
	a.qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(o.client->qp, &a, IB_QP_STATE), 0);
	post_write_read_write(&o);
	expect_stalled(&o);
	ord_fini(&o);
}

/* Depth 1: the same three WRs complete, on every profile. */
static void depth1(const char *profile, u16 port)
{
	struct ord_env o;

	ord_connect(&o, profile, 1, port);
	post_write_read_write(&o);
	expect_all_done(&o);
	ord_fini(&o);
}

static void test_depth1_rxe(void **s)
{
	depth1("rxe", 7610);
}

static void test_depth1_mlx5(void **s)
{
	depth1("mlx5", 7611);
}

static void test_depth1_siw(void **s)
{
	depth1("siw", 7612);
}

/* mlx5: max_rd_atomic 0 is log_sra_max 0, one READ at a time. */
static void test_depth0_mlx5_runs(void **s)
{
	struct ord_env o;

	ord_connect(&o, "mlx5", 0, 7613);
	server_grants_read(&o);
	post_write_read_write(&o);
	expect_all_done(&o);
	ord_fini(&o);
}

/* siw: the READ drops the connection; both QPs go to ERR. */
static void depth0_siw_drops(bool threaded, u16 port)
{
	struct ord_env o;

	ord_connect_on(&o, "siw", 0, port, threaded);
	post_write_read_write(&o);
	soft_env_expect(o.env.cq[0], WR_WRITE1, IB_WC_SUCCESS,
			IB_WC_RDMA_WRITE);
	expect_read_flushed(&o);
	assert_int_equal(soft_env_state(o.client->qp), IB_QPS_ERR);
	/*
	 * No connection left to fence the WRITE with (cm_placed()): on TCP
	 * the server's thread places its bytes, then reads the stream's end
	 * behind them and moves the QP to ERR; the state, read through
	 * ib_query_qp(), orders the placement before the read of the sink.
	 */
	cm_qp_state(o.child->qp, IB_QPS_ERR);
	assert_memory_equal(o.buf[1], o.buf[0], LEN / 4);
	ord_fini(&o);
}

static void test_depth0_siw_drops(void **s)
{
	depth0_siw_drops(false, 7620);
}

static void test_depth0_siw_threaded(void **s)
{
	depth0_siw_drops(true, 7622);
}

/* siw: a modify's max_rd_atomic is not siw's ORD (siw_verbs_modify_qp()). */
static void test_depth1_siw_modify_ignored(void **s)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_SQD };
	struct ord_env o;

	cm_skip_on_tcp("SQD is siw's CLOSING there: the connection drops "
		       "(test_cm_mpa's test_post_after_disconnect)");
	ord_connect(&o, "siw", 1, 7621);
	assert_int_equal(ib_modify_qp(o.client->qp, &a, IB_QP_STATE), 0);
	a.max_rd_atomic = 0;
	assert_int_equal(ib_modify_qp(o.client->qp, &a,
				      IB_QP_STATE | IB_QP_MAX_QP_RD_ATOMIC),
			 0);
	a.qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(o.client->qp, &a, IB_QP_STATE), 0);
	post_write_read_write(&o);
	expect_all_done(&o);
	ord_fini(&o);
}

/*
 * The server's side: its own initiator depth, from its accept, limits its
 * READs (the passive side's QP takes the accept's values, cma_accept_ib()
 * passing conn_param to cma_modify_qp_rtr()/_rts()).
 */
static void test_server_depth0_rxe_waits(void **s)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ord_env o;
	struct cm_rec *r;
	int i;

	memset(&o, 0, sizeof(o));
	cm_env_init(&o.env, "rxe", false);
	for (i = 0; i < 2; i++) {
		o.buf[i] = calloc(1, LEN);
		assert_non_null(o.buf[i]);
		o.mr[i] = soft_env_reg(&o.env, i, o.buf[i], LEN,
				       SOFT_PAIR_ACCESS);
	}
	memset(o.buf[0], 0x5a, LEN);
	o.listen = cm_listener(NULL, 7630);
	o.client = cm_client(&o.env, NULL, 7630, &o.n);
	assert_int_equal(rdma_connect(o.client, &cp), 0);
	r = cm_wait(++o.n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	o.child = r->id;
	cm_create_qp(&o.env, 1, o.child);
	cp.initiator_depth = 0; /* the krping bug: the wrong field, 0 */
	assert_int_equal(rdma_accept(o.child, &cp), 0);
	assert_int_equal(cm_wait(++o.n)->ev, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(cm_wait(++o.n)->ev, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(soft_env_rdma(o.child->qp, IB_WR_RDMA_READ, 5,
				       o.buf[1], LEN, o.mr[1]->lkey,
				       (uintptr_t)o.buf[0], o.mr[0]->rkey),
			 0);
	for (i = 0; i < 100; i++)
		soft_env_expect_empty(o.env.cq[1]);
	assert_int_equal(o.buf[1][0], 0);
	assert_int_equal(ib_modify_qp(o.child->qp, &err, IB_QP_STATE), 0);
	soft_env_expect(o.env.cq[1], 5, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_READ);
	soft_env_expect_empty(o.env.cq[1]);
	assert_int_equal(o.buf[1][0], 0);
	ord_fini(&o);
}

/* A failing case leaves its ids behind: run one with its name as argv[1]. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth0_rxe_waits_then_flushes),
		cmocka_unit_test(test_depth0_rxe_threaded),
		cmocka_unit_test(test_depth0_rxe_later_post_waits),
		cmocka_unit_test(test_depth0_rxe_modify_raises),
		cmocka_unit_test(test_depth1_rxe_modify_lowers),
		cmocka_unit_test(test_depth1_rxe),
		cmocka_unit_test(test_depth1_mlx5),
		cmocka_unit_test(test_depth1_siw),
		cmocka_unit_test(test_depth0_mlx5_runs),
		cmocka_unit_test(test_depth0_siw_drops),
		cmocka_unit_test(test_depth0_siw_threaded),
		cmocka_unit_test(test_depth1_siw_modify_ignored),
		cmocka_unit_test(test_server_depth0_rxe_waits),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

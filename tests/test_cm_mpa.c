// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_cm over TCP with MPA (issue 28): two TCP software devices on two
 * fabrics in one process, over 127.0.0.1/127.0.0.2 and ::1, ports 0.
 * Listen/connect/accept with private data both ways, reject with private
 * data, nobody listening, a peer that sends garbage, half a frame or
 * nothing (the listener goes on serving), a listener that never answers,
 * an id destroyed mid-handshake, disconnect from either side.
 *
 * The handshake timeout is 200 ms where a test waits for it (the internal
 * knob rdmarw__cm_mpa_set_timeout()), siw's 10 s elsewhere: the tests wait
 * for the events it causes, they do not time it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cm_env.h"
#include "cm/cm.h"
#include "iwarp/iwarp.h"
#include "soft/soft_tcp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static struct {
	struct soft_fabric *fab[2];
	struct ib_device *dev[2];
	struct ib_pd *pd[2];
	struct ib_cq *cq[2];
} t;

static int ctx_server, ctx_client;

/* The id's local port (the kernel's src_port()). */
static u16 src_port(struct rdma_cm_id *id)
{
	const struct sockaddr_storage *ss = &id->route.addr.src_addr;

	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static int setup(void **state)
{
	struct sockaddr_in a0 = cm_in4("127.0.0.2", 0),
			   a1 = cm_in4("127.0.0.1", 0);
	struct sockaddr_in6 b = cm_in6("::1", 0);
	struct soft_profile prof;
	int i;

	assert_int_equal(soft_profile_get("siw", &prof), 0);
	prof.tcp = true;
	for (i = 0; i < 2; i++) {
		t.fab[i] = soft_fabric_create();
		assert_false(IS_ERR_OR_NULL(t.fab[i]));
		t.dev[i] = soft_device_create(t.fab[i], "mpa%d", &prof);
		if (PTR_ERR(t.dev[i]) == -EOPNOTSUPP) {
			soft_fabric_destroy(t.fab[i]);
			t.fab[i] = NULL;
			t.dev[i] = NULL;
			return 0; /* no TCP data path in this build: skipped */
		}
		assert_false(IS_ERR(t.dev[i]));
		t.pd[i] = ib_alloc_pd(t.dev[i], 0);
		assert_false(IS_ERR(t.pd[i]));
		t.cq[i] = ib_alloc_cq(t.dev[i], NULL, 64, 0, IB_POLL_DIRECT);
		assert_false(IS_ERR(t.cq[i]));
	}
	assert_int_equal(soft_device_add_addr(t.dev[0], SA(a0)), 0);
	assert_int_equal(soft_device_add_addr(t.dev[1], SA(a1)), 0);
	assert_int_equal(soft_device_add_addr(t.dev[1], SA(b)), 0);
	cm_log_reset();
	(void)state;
	return 0;
}

static int teardown(void **state)
{
	int i;

	for (i = 1; i >= 0; i--) {
		if (!t.dev[i])
			continue;
		assert_int_equal(ib_free_cq(t.cq[i]), 0);
		ib_dealloc_pd(t.pd[i]);
		assert_int_equal(soft_device_destroy(t.dev[i]), 0);
		assert_int_equal(soft_fabric_destroy(t.fab[i]), 0);
	}
	memset(&t, 0, sizeof(t));
	rdmarw__cm_mpa_set_timeout(0);
	(void)state;
	return 0;
}

#define NEED_TCP()                                                      \
	do {                                                            \
		if (!t.dev[0])                                          \
			skip(); /* soft_device_create(): -EOPNOTSUPP */ \
	} while (0)

static void create_qp(int side, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {
		.send_cq = t.cq[side],
		.recv_cq = t.cq[side],
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	assert_int_equal(rdma_create_qp(id, t.pd[side], &qa), 0);
}

/* Wait for @ev on @id (any order among ids); return its record. */
static struct cm_rec *wait_ev(struct rdma_cm_id *id, enum rdma_cm_event_type ev)
{
	int i, n;

	for (n = 1; n <= CM_REC_MAX; n++) {
		cm_wait(n);
		pthread_mutex_lock(&cm_log.m);
		for (i = 0; i < n; i++)
			if ((!id || cm_log.r[i].id == id) &&
			    cm_log.r[i].ev == ev)
				break;
		pthread_mutex_unlock(&cm_log.m);
		if (i < n)
			return &cm_log.r[i];
	}
	fail();
	return NULL;
}

/* How many events of @id are recorded (of type @ev, or all for -1). */
static int count_ev(struct rdma_cm_id *id, int ev)
{
	int i, c = 0;

	pthread_mutex_lock(&cm_log.m);
	for (i = 0; i < cm_log.n; i++)
		c += cm_log.r[i].id == id &&
		     (ev < 0 || (int)cm_log.r[i].ev == ev);
	pthread_mutex_unlock(&cm_log.m);
	return c;
}

/* A listener on @ip, port 0: the kernel's port is reported. */
static struct rdma_cm_id *listener(const struct sockaddr *a)
{
	struct rdma_cm_id *id = cm_id(&ctx_server);

	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)a), 0);
	assert_ptr_equal(id->device, t.dev[1]);
	assert_int_equal(rdma_listen(id, 8), 0);
	assert_int_not_equal(src_port(id), 0);
	return id;
}

/* A client from t.dev[0] (or the TCP device found for @dst) to @dst. */
static struct rdma_cm_id *client(const struct sockaddr *src,
				 const struct sockaddr *dst)
{
	struct rdma_cm_id *id = cm_id(&ctx_client);
	struct cm_rec *r;

	assert_int_equal(
		rdma_resolve_addr(id, (struct sockaddr *)src, dst, 1000), 0);
	r = wait_ev(id, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(r->status, 0);
	assert_int_equal(rdma_resolve_route(id, 1000), 0);
	r = wait_ev(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(r->status, 0);
	create_qp(src ? 0 : (id->device == t.dev[0] ? 0 : 1), id);
	return id;
}

static struct sockaddr_storage dst_of(struct rdma_cm_id *l, const char *ip)
{
	struct sockaddr_storage ss = { 0 };

	if (strchr(ip, ':'))
		*(struct sockaddr_in6 *)&ss = cm_in6(ip, src_port(l));
	else
		*(struct sockaddr_in *)&ss = cm_in4(ip, src_port(l));
	return ss;
}

/*
 * Connect @c to @l with 200 bytes of private data, IRD 4 and ORD 2;
 * accept with 100 bytes, IRD 3 and ORD 1.  Returns the child.
 */
static struct rdma_cm_id *
connect_accept_hook(struct rdma_cm_id *c,
		    void (*before_accept)(struct rdma_cm_id *child))
{
	u8 req[200], rep[100];
	struct rdma_conn_param cp = { .private_data = req,
				      .private_data_len = sizeof(req),
				      .responder_resources = 4,
				      .initiator_depth = 2 };
	struct rdma_cm_id *child;
	struct cm_rec *r;
	size_t i;

	for (i = 0; i < sizeof(req); i++)
		req[i] = (u8)(i * 7 + 1);
	for (i = 0; i < sizeof(rep); i++)
		rep[i] = (u8)(255 - i);
	assert_int_equal(rdma_connect(c, &cp), 0);
	r = wait_ev(NULL, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = r->id;
	assert_ptr_equal(r->context, &ctx_server);
	assert_ptr_equal(child->device, t.dev[1]);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->len, sizeof(req));
	assert_memory_equal(r->pdata, req, sizeof(req));
	create_qp(1, child);
	if (before_accept)
		before_accept(child);
	cp.private_data = rep;
	cp.private_data_len = sizeof(rep);
	cp.responder_resources = 3;
	cp.initiator_depth = 1;
	assert_int_equal(rdma_accept(child, &cp), 0);
	r = wait_ev(child, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(r->status, 0);
	assert_int_equal(soft_env_state(child->qp), IB_QPS_RTS);
	r = wait_ev(c, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->len, sizeof(rep));
	assert_memory_equal(r->pdata, rep, sizeof(rep));
	assert_int_equal(soft_env_state(c->qp), IB_QPS_RTS);
	return child;
}

static struct rdma_cm_id *connect_accept(struct rdma_cm_id *c)
{
	return connect_accept_hook(c, NULL);
}

static void disconnect_from(struct rdma_cm_id *a, struct rdma_cm_id *b)
{
	assert_int_equal(rdma_disconnect(a), 0);
	wait_ev(a, RDMA_CM_EVENT_DISCONNECTED);
	wait_ev(b, RDMA_CM_EVENT_DISCONNECTED);
	cm_settle();
	assert_int_equal(count_ev(a, RDMA_CM_EVENT_DISCONNECTED), 1);
	assert_int_equal(count_ev(b, RDMA_CM_EVENT_DISCONNECTED), 1);
}

static void test_connect_v4(void **state)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0);
	struct rdma_cm_id *l, *c, *child;
	struct sockaddr_storage dst;

	NEED_TCP();
	l = listener(SA(la));
	dst = dst_of(l, "127.0.0.1");
	c = client(SA(src), SA(dst));
	assert_ptr_equal(c->device, t.dev[0]);
	child = connect_accept(c);
	disconnect_from(c, child);
	rdma_destroy_qp(child);
	rdma_destroy_qp(c);
	rdma_destroy_id(child);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	(void)state;
}

/* A wildcard listener: the child is the TCP device of the address used. */
static void test_wildcard_listener(void **state)
{
	struct sockaddr_in la = cm_in4("0.0.0.0", 0),
			   src = cm_in4("127.0.0.2", 0);
	struct rdma_cm_id *l, *c, *child;
	struct sockaddr_storage dst;

	NEED_TCP();
	l = cm_id(&ctx_server);
	assert_int_equal(rdma_bind_addr(l, SA(la)), 0);
	assert_null(l->device);
	assert_int_equal(rdma_listen(l, 8), 0);
	dst = dst_of(l, "127.0.0.1");
	c = client(SA(src), SA(dst));
	child = connect_accept(c); /* asserts the child's device: t.dev[1] */
	disconnect_from(c, child);
	rdma_destroy_qp(child);
	rdma_destroy_qp(c);
	rdma_destroy_id(child);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	(void)state;
}

/* Buffers of test_data_moves: the child's receive and WRITE sink. */
static struct {
	u8 rbuf[96];
	u8 wbuf[160];
	struct ib_mr *rmr, *wmr;
} sink;

/* @len bytes at @buf registered in side @side's PD with @access. */
static struct ib_mr *reg(int side, void *buf, size_t len, int access)
{
	struct ib_mr *mr = ib_reg_user_mr(t.pd[side], (uintptr_t)buf, len,
					  (uintptr_t)buf, access);

	assert_false(IS_ERR(mr));
	return mr;
}

static void post_recvs(struct rdma_cm_id *child)
{
	memset(&sink, 0xee, offsetof(typeof(sink), rmr));
	sink.rmr = reg(1, sink.rbuf, sizeof(sink.rbuf), IB_ACCESS_LOCAL_WRITE);
	sink.wmr = reg(1, sink.wbuf, sizeof(sink.wbuf),
		       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_READ);
	/* before the accept: iWARP has no RNR, a SEND needs its receive */
	soft_env_post_recv(child->qp, 1, sink.rbuf + 8, 64, sink.rmr->lkey);
	soft_env_post_recv(child->qp, 2, sink.rbuf + 8, 64, sink.rmr->lkey);
}

/*
 * One completion of @cq: a TCP device completes on its own thread (the
 * helpers' soft_env_poll() expects that only of .threaded devices).
 */
static void poll_wc(struct ib_cq *cq, struct ib_wc *wc)
{
	struct timespec t0, now;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((r = ib_poll_cq(cq, 1, wc)) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		assert_true(now.tv_sec - t0.tv_sec < 60); /* hang guard only */
		sched_yield();
	}
	assert_int_equal(r, 1);
}

static void expect_wc(struct ib_cq *cq, u64 wr_id, enum ib_wc_opcode op)
{
	struct ib_wc wc;

	poll_wc(cq, &wc);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.opcode, op);
}

/*
 * The data tests' connection: a listener on 127.0.0.1 (*@l), a client from
 * 127.0.0.2 (*@c) connected to it, the child's receives posted before its
 * accept (post_recvs()).  Returns the child; data_fini() ends them.
 */
static struct rdma_cm_id *data_connect(struct rdma_cm_id **l,
				       struct rdma_cm_id **c)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0);
	struct sockaddr_storage dst;

	*l = listener(SA(la));
	dst = dst_of(*l, "127.0.0.1");
	*c = client(SA(src), SA(dst));
	return connect_accept_hook(*c, post_recvs);
}

/* The end of a test with sink's MRs: QPs, @mr (NULL-ended), sink, ids. */
static void data_fini(struct rdma_cm_id *l, struct rdma_cm_id *c,
		      struct rdma_cm_id *child, struct ib_mr **mr)
{
	rdma_destroy_qp(child);
	rdma_destroy_qp(c);
	for (; *mr; mr++)
		assert_int_equal(ib_dereg_mr(*mr), 0);
	assert_int_equal(ib_dereg_mr(sink.rmr), 0);
	assert_int_equal(ib_dereg_mr(sink.wmr), 0);
	rdma_destroy_id(child);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
}

/* SEND/RECV, WRITE and READ with exact bytes over the connection. */
static void test_data_moves(void **state)
{
	u8 sbuf[64], wsrc[100], guard[160], rsink[140];
	struct rdma_cm_id *l, *c, *child;
	struct ib_mr *smr, *wsmr, *rmr;
	struct ib_wc wc;
	size_t i;

	NEED_TCP();
	child = data_connect(&l, &c);
	for (i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (u8)(i ^ 0x5a);
	for (i = 0; i < sizeof(wsrc); i++)
		wsrc[i] = (u8)(3 * i + 11);
	smr = reg(0, sbuf, sizeof(sbuf), 0);
	wsmr = reg(0, wsrc, sizeof(wsrc), 0);
	/* iWARP: a READ's sink is written remotely */
	rmr = reg(0, rsink, sizeof(rsink),
		  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	assert_int_equal(
		soft_env_send(c->qp, 10, sbuf, sizeof(sbuf), smr->lkey), 0);
	poll_wc(t.cq[1], &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.opcode, IB_WC_RECV);
	assert_int_equal(wc.byte_len, sizeof(sbuf));
	assert_memory_equal(sink.rbuf + 8, sbuf, sizeof(sbuf));
	memset(guard, 0xee, sizeof(guard));
	assert_memory_equal(sink.rbuf, guard, 8);
	assert_memory_equal(sink.rbuf + 72, guard, sizeof(sink.rbuf) - 72);
	/* a WRITE, then a SEND that arrives after it */
	assert_int_equal(soft_env_rdma(c->qp, IB_WR_RDMA_WRITE, 11, wsrc,
				       sizeof(wsrc), wsmr->lkey,
				       (uintptr_t)sink.wbuf + 16,
				       sink.wmr->rkey),
			 0);
	assert_int_equal(soft_env_send(c->qp, 12, sbuf, 7, smr->lkey), 0);
	poll_wc(t.cq[1], &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.byte_len, 7);
	assert_memory_equal(sink.wbuf + 16, wsrc, sizeof(wsrc));
	assert_memory_equal(sink.wbuf, guard, 16);
	assert_memory_equal(sink.wbuf + 116, guard, sizeof(sink.wbuf) - 116);
	expect_wc(t.cq[0], 10, IB_WC_SEND);
	expect_wc(t.cq[0], 11, IB_WC_RDMA_WRITE);
	expect_wc(t.cq[0], 12, IB_WC_SEND);
	/* a READ of what the WRITE left (the client's ORD is 2) */
	memset(rsink, 0x33, sizeof(rsink));
	assert_int_equal(soft_env_rdma(c->qp, IB_WR_RDMA_READ, 13, rsink + 4,
				       120, rmr->lkey, (uintptr_t)sink.wbuf + 8,
				       sink.wmr->rkey),
			 0);
	expect_wc(t.cq[0], 13, IB_WC_RDMA_READ);
	assert_memory_equal(rsink + 4, sink.wbuf + 8, 120);
	assert_memory_equal(rsink + 12, wsrc, 100);
	memset(guard, 0x33, sizeof(guard));
	assert_memory_equal(rsink, guard, 4);
	assert_memory_equal(rsink + 124, guard, sizeof(rsink) - 124);
	disconnect_from(c, child);
	data_fini(l, c, child, (struct ib_mr *[]){ smr, wsmr, rmr, NULL });
	(void)state;
}

/*
 * After rdma_disconnect() nothing more goes out: iw_cm moves the QP to SQD
 * (siw: CLOSING) inside the call, so a WRITE and a receive posted after it
 * are refused with -ENOTCONN, as siw_post_send()/siw_post_receive() do;
 * once the connection's end moved the QP to ERR a post is flushed.  The
 * client's TCP thread is held (rdmarw__soft_tcp_hold()) so that the close
 * it was asked for has not run yet when the test posts: before the SQD
 * move the WRITE was accepted and reached the peer.  The peer's memory
 * keeps every byte it had and the peer completes nothing but flushes.
 */
static void test_post_after_disconnect(void **state)
{
	u8 wsrc[100], rbuf[32], guard[160];
	struct rdma_cm_id *l, *c, *child;
	struct ib_mr *wsmr, *rmr;
	struct ib_sge sge, wsge;
	struct ib_recv_wr rwr = { .wr_id = 21, .sg_list = &sge, .num_sge = 1 };
	struct ib_rdma_wr wwr = { .wr = { .wr_id = 20,
					  .sg_list = &wsge,
					  .num_sge = 1,
					  .opcode = IB_WR_RDMA_WRITE,
					  .send_flags = IB_SEND_SIGNALED } };
	const struct ib_recv_wr *bad_rwr = NULL;
	const struct ib_send_wr *bad_wr = NULL;
	struct ib_qp_attr rts = { .qp_state = IB_QPS_RTS };
	struct ib_wc wc;
	int flushed = 0;

	NEED_TCP();
	child = data_connect(&l, &c);
	memset(wsrc, 0x5c, sizeof(wsrc));
	wsmr = reg(0, wsrc, sizeof(wsrc), 0);
	rmr = reg(0, rbuf, sizeof(rbuf), IB_ACCESS_LOCAL_WRITE);
	sge = (struct ib_sge){ .addr = (uintptr_t)rbuf,
			       .length = sizeof(rbuf),
			       .lkey = rmr->lkey };
	wsge = (struct ib_sge){ .addr = (uintptr_t)wsrc,
				.length = sizeof(wsrc),
				.lkey = wsmr->lkey };
	wwr.remote_addr = (uintptr_t)sink.wbuf + 16;
	wwr.rkey = sink.wmr->rkey;

	assert_int_equal(rdmarw__soft_tcp_hold(t.dev[0], true), 0);
	assert_int_equal(rdma_disconnect(c), 0);
	assert_int_equal(soft_env_state(c->qp), IB_QPS_SQD);
	assert_int_equal(ib_post_send(c->qp, &wwr.wr, &bad_wr), -ENOTCONN);
	assert_ptr_equal(bad_wr, &wwr.wr);
	assert_int_equal(ib_post_recv(c->qp, &rwr, &bad_rwr), -ENOTCONN);
	assert_ptr_equal(bad_rwr, &rwr);
	/* siw's CLOSING goes nowhere but down */
	assert_int_equal(ib_modify_qp(c->qp, &rts, IB_QP_STATE), -ECONNABORTED);
	assert_int_equal(soft_env_state(c->qp), IB_QPS_SQD);
	assert_int_equal(rdmarw__soft_tcp_hold(t.dev[0], false), 0);

	wait_ev(c, RDMA_CM_EVENT_DISCONNECTED);
	wait_ev(child, RDMA_CM_EVENT_DISCONNECTED);
	cm_qp_state(c->qp, IB_QPS_ERR);
	cm_qp_state(child->qp, IB_QPS_ERR);
	/* nothing of ours completes: the refused WRs were never queued */
	assert_int_equal(ib_poll_cq(t.cq[0], 1, &wc), 0);
	/* the peer: its two receives flushed, its memory as it was */
	while (ib_poll_cq(t.cq[1], 1, &wc) == 1) {
		assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
		flushed++;
	}
	assert_int_equal(flushed, 2);
	memset(guard, 0xee, sizeof(guard));
	assert_memory_equal(sink.wbuf, guard, sizeof(sink.wbuf));
	assert_memory_equal(sink.rbuf, guard, sizeof(sink.rbuf));
	/* in ERR a post is flushed, as siw in ERROR */
	assert_int_equal(ib_post_send(c->qp, &wwr.wr, &bad_wr), 0);
	poll_wc(t.cq[0], &wc);
	assert_int_equal(wc.wr_id, 20);
	assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
	assert_int_equal(ib_post_recv(c->qp, &rwr, &bad_rwr), 0);
	poll_wc(t.cq[0], &wc);
	assert_int_equal(wc.wr_id, 21);
	assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
	assert_memory_equal(sink.wbuf, guard, sizeof(sink.wbuf));

	data_fini(l, c, child, (struct ib_mr *[]){ wsmr, rmr, NULL });
	(void)state;
}

/*
 * An iWARP QP is its connection's for its life (the QP owns the socket,
 * and attach takes a QP only once): RESET is refused with -EINVAL, live
 * (cxgb4 refuses RTS -> IDLE; siw takes it and stays in RTS) and after the
 * connection's end alike, and changes nothing: the connection still
 * carries a SEND after the refusal; in ERR the QP stays in ERR and still
 * flushes what is posted.
 */
static void test_reset_attached(void **state)
{
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	struct rdma_cm_id *l, *c, *child;
	u8 sbuf[16];
	struct ib_mr *smr;
	struct ib_wc wc;

	NEED_TCP();
	child = data_connect(&l, &c);
	memset(sbuf, 0x71, sizeof(sbuf));
	smr = reg(0, sbuf, sizeof(sbuf), 0);

	assert_int_equal(ib_modify_qp(c->qp, &reset, IB_QP_STATE), -EINVAL);
	assert_int_equal(soft_env_state(c->qp), IB_QPS_RTS);
	assert_int_equal(ib_modify_qp(child->qp, &reset, IB_QP_STATE), -EINVAL);
	assert_int_equal(soft_env_state(child->qp), IB_QPS_RTS);
	/* the connection carries on */
	assert_int_equal(
		soft_env_send(c->qp, 30, sbuf, sizeof(sbuf), smr->lkey), 0);
	poll_wc(t.cq[1], &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.byte_len, sizeof(sbuf));
	assert_memory_equal(sink.rbuf + 8, sbuf, sizeof(sbuf));
	expect_wc(t.cq[0], 30, IB_WC_SEND);

	disconnect_from(c, child);
	cm_qp_state(c->qp, IB_QPS_ERR);
	assert_int_equal(ib_modify_qp(c->qp, &reset, IB_QP_STATE), -EINVAL);
	assert_int_equal(soft_env_state(c->qp), IB_QPS_ERR);
	assert_int_equal(
		soft_env_send(c->qp, 31, sbuf, sizeof(sbuf), smr->lkey), 0);
	poll_wc(t.cq[0], &wc);
	assert_int_equal(wc.wr_id, 31);
	assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
	data_fini(l, c, child, (struct ib_mr *[]){ smr, NULL });
	(void)state;
}

static void test_connect_v6_passive_disconnects(void **state)
{
	struct sockaddr_in6 la = cm_in6("::1", 0);
	struct rdma_cm_id *l, *c, *child;
	struct sockaddr_storage dst;

	NEED_TCP();
	l = listener(SA(la));
	dst = dst_of(l, "::1");
	c = client(NULL, SA(dst));
	child = connect_accept(c);
	disconnect_from(child, c);
	rdma_destroy_qp(child);
	rdma_destroy_qp(c);
	rdma_destroy_id(child);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	(void)state;
}

static void test_reject(void **state)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0);
	u8 req[10] = "0123456789", rej[37];
	struct rdma_conn_param cp = { .private_data = req,
				      .private_data_len = sizeof(req) };
	struct rdma_cm_id *l, *c, *child;
	struct sockaddr_storage dst;
	struct cm_rec *r;

	NEED_TCP();
	memset(rej, 0xa5, sizeof(rej));
	rej[0] = 1;
	l = listener(SA(la));
	dst = dst_of(l, "127.0.0.1");
	c = client(SA(src), SA(dst));
	assert_int_equal(rdma_connect(c, &cp), 0);
	r = wait_ev(NULL, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = r->id;
	assert_int_equal(rdma_reject(child, rej, sizeof(rej), 0), 0);
	r = wait_ev(c, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(r->status, -ECONNREFUSED);
	assert_int_equal(r->len, sizeof(rej));
	assert_memory_equal(r->pdata, rej, sizeof(rej));
	assert_true(rdma_is_consumer_reject(c, r->status));
	rdma_destroy_id(child);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	(void)state;
}

/*
 * A child destroyed before it answered: iw_cm's destroy of an id in
 * CONN_RECV tells the provider to reject, so the requester reads an MPA
 * reply with the reject bit (REJECTED, -ECONNREFUSED, no private data),
 * not a closed connection.
 */
static void test_unanswered_child_destroyed(void **state)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0);
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *l, *c;
	struct sockaddr_storage dst;
	struct cm_rec *r;

	NEED_TCP();
	l = listener(SA(la));
	dst = dst_of(l, "127.0.0.1");
	c = client(SA(src), SA(dst));
	assert_int_equal(rdma_connect(c, &cp), 0);
	r = wait_ev(NULL, RDMA_CM_EVENT_CONNECT_REQUEST);
	rdma_destroy_id(r->id);
	r = wait_ev(c, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(r->status, -ECONNREFUSED);
	assert_int_equal(r->len, 0);
	assert_true(rdma_is_consumer_reject(c, r->status));
	cm_settle();
	assert_int_equal(count_ev(c, RDMA_CM_EVENT_CONNECT_ERROR), 0);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	(void)state;
}

/* A connected client destroyed without a disconnect: the peer hears it. */
static void test_destroy_established(void **state)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0);
	struct rdma_cm_id *l, *c, *child;
	struct sockaddr_storage dst;

	NEED_TCP();
	l = listener(SA(la));
	dst = dst_of(l, "127.0.0.1");
	c = client(SA(src), SA(dst));
	child = connect_accept(c);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	wait_ev(child, RDMA_CM_EVENT_DISCONNECTED);
	cm_settle();
	assert_int_equal(count_ev(child, RDMA_CM_EVENT_DISCONNECTED), 1);
	assert_int_equal(soft_env_state(child->qp), IB_QPS_ERR);
	assert_int_equal(rdma_disconnect(child), 0); /* DISCONNECT: no event */
	cm_settle();
	assert_int_equal(count_ev(child, RDMA_CM_EVENT_DISCONNECTED), 1);
	rdma_destroy_qp(child);
	rdma_destroy_id(child);
	rdma_destroy_id(l);
	(void)state;
}

/* A port of 127.0.0.1 nobody listens on (bound, never listening). */
static int dead_port(u16 *port)
{
	struct sockaddr_in a = cm_in4("127.0.0.1", 0);
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, SA(a), sizeof(a)), 0);
	assert_int_equal(getsockname(fd, SA(a), &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void test_nobody_listens(void **state)
{
	struct sockaddr_in src = cm_in4("127.0.0.2", 0), dst;
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_id *c;
	struct cm_rec *r;
	u16 port;
	int fd;

	NEED_TCP();
	fd = dead_port(&port);
	dst = cm_in4("127.0.0.1", port);
	c = client(SA(src), SA(dst));
	assert_int_equal(rdma_connect(c, &cp), 0);
	/* a refused TCP connect is iw_cm's -ECONNREFUSED: REJECTED */
	r = wait_ev(c, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(r->status, -ECONNREFUSED);
	assert_int_equal(r->len, 0);
	close(fd);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	(void)state;
}

/* A raw TCP connection to @l; returns the socket. */
static int raw_connect(struct rdma_cm_id *l)
{
	struct sockaddr_storage dst = dst_of(l, "127.0.0.1");
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, SA(dst), sizeof(struct sockaddr_in)), 0);
	return fd;
}

/* The listener closes @fd: reading it ends (its reply first, if any). */
static ssize_t read_to_eof(int fd, u8 *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while ((n = recv(fd, buf + got, len - got, 0)) > 0)
		got += (size_t)n;
	close(fd);
	return n < 0 ? -1 : (ssize_t)got;
}

/* A listener that got garbage, half a frame, nothing, or markers. */
static void test_bad_peers(void **state)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0);
	static const u8 garbage[24] = "GET / HTTP/1.0\r\n\r\nxxxxx";
	u8 frame[64], buf[64];
	struct iwarp_mpa m = { .rev = 2, .crc = true }, rep;
	struct rdma_cm_id *l, *c, *child;
	struct sockaddr_storage dst;
	int fd, n;

	NEED_TCP();
	rdmarw__cm_mpa_set_timeout(200);
	l = listener(SA(la));
	/* garbage: closed at once, no reply */
	fd = raw_connect(l);
	assert_int_equal(send(fd, garbage, sizeof(garbage), 0), 24);
	assert_int_equal(read_to_eof(fd, buf, sizeof(buf)), 0);
	/* half a request, then nothing: closed by the timeout */
	n = rdmarw__iwarp_mpa_build(&m, frame, sizeof(frame));
	assert_int_equal(n, 20);
	fd = raw_connect(l);
	assert_int_equal(send(fd, frame, 10, 0), 10);
	assert_int_equal(read_to_eof(fd, buf, sizeof(buf)), 0);
	/* nothing at all: closed by the timeout */
	fd = raw_connect(l);
	assert_int_equal(read_to_eof(fd, buf, sizeof(buf)), 0);
	/* markers asked: an MPA reject, then closed */
	frame[16] |= IWARP_MPA_F_MARKERS >> 8;
	fd = raw_connect(l);
	assert_int_equal(send(fd, frame, 20, 0), 20);
	n = (int)read_to_eof(fd, buf, sizeof(buf));
	assert_true(n >= 20);
	assert_int_equal(
		rdmarw__iwarp_mpa_parse(buf, (size_t)n, true, true, &rep, NULL),
		n);
	assert_true(rep.reject);
	/* revision 3, then private data longer than MPA allows: closed */
	frame[16] &= (u8) ~(IWARP_MPA_F_MARKERS >> 8);
	frame[17] = 3;
	fd = raw_connect(l);
	assert_int_equal(send(fd, frame, 20, 0), 20);
	assert_int_equal(read_to_eof(fd, buf, sizeof(buf)), 0);
	frame[17] = 2;
	frame[18] = 600 >> 8;
	frame[19] = 600 & 0xff;
	fd = raw_connect(l);
	assert_int_equal(send(fd, frame, 20, 0), 20);
	assert_int_equal(read_to_eof(fd, buf, sizeof(buf)), 0);
	/* the ULP saw none of them, and the listener serves the next one */
	assert_int_equal(count_ev(l, -1), 0);
	assert_int_equal(cm_settle(), 0);
	rdmarw__cm_mpa_set_timeout(0);
	dst = dst_of(l, "127.0.0.1");
	c = client(SA(src), SA(dst));
	child = connect_accept(c);
	disconnect_from(c, child);
	rdma_destroy_qp(child);
	rdma_destroy_qp(c);
	rdma_destroy_id(child);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	(void)state;
}

/*
 * A listener holds 64 handshakes whose request has not come: the 65th
 * connection is closed at once while the first ones stay open (their
 * timeout is siw's 10 s here); once they are gone, a client is served.
 */
static void test_half_open_cap(void **state)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0);
	struct rdma_cm_id *l, *c, *child;
	struct sockaddr_storage dst;
	struct pollfd pfd;
	int fds[64], fd, i;
	u8 buf[8];

	NEED_TCP();
	l = listener(SA(la));
	for (i = 0; i < 64; i++)
		fds[i] = raw_connect(l);
	fd = raw_connect(l);
	assert_int_equal(read_to_eof(fd, buf, sizeof(buf)), 0);
	for (i = 0; i < 64; i++) {
		pfd = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		assert_int_equal(poll(&pfd, 1, 0), 0); /* still open */
		close(fds[i]);
	}
	dst = dst_of(l, "127.0.0.1");
	c = client(SA(src), SA(dst));
	child = connect_accept(c);
	assert_int_equal(count_ev(l, -1), 0);
	disconnect_from(child, c);
	rdma_destroy_qp(child);
	rdma_destroy_qp(c);
	rdma_destroy_id(child);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	(void)state;
}

/* A plain TCP listener that never answers on 127.0.0.1. */
static int mute_listener(u16 *port)
{
	int fd = dead_port(port);

	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void test_reply_never_comes(void **state)
{
	struct sockaddr_in src = cm_in4("127.0.0.2", 0), dst;
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_id *c;
	struct cm_rec *r;
	u16 port;
	int fd;

	NEED_TCP();
	rdmarw__cm_mpa_set_timeout(200);
	fd = mute_listener(&port);
	dst = cm_in4("127.0.0.1", port);
	c = client(SA(src), SA(dst));
	assert_int_equal(rdma_connect(c, &cp), 0);
	r = wait_ev(c, RDMA_CM_EVENT_UNREACHABLE);
	assert_int_equal(r->status, -ETIMEDOUT);
	cm_settle();
	assert_int_equal(count_ev(c, -1), 3);
	close(fd);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	(void)state;
}

/* Accept on @lfd the active side's connection and read its whole MPA
 * request into @req; the connection's descriptor. */
static int mpa_request_in(int lfd, struct iwarp_mpa *req)
{
	u8 buf[600];
	size_t got = 0;
	int fd, n;

	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	do {
		n = (int)recv(fd, buf + got, sizeof(buf) - got, 0);
		assert_true(n > 0);
		got += (size_t)n;
		n = rdmarw__iwarp_mpa_parse(buf, got, false, false, req, NULL);
	} while (n == -EAGAIN);
	assert_int_equal(n, (int)got);
	return fd;
}

/*
 * A peer whose reply gives an ORD over our IRD: CONNECT_ERROR -EPROTO for
 * the ULP, and for the peer a TERMINATE (LLP, MPA, insufficient IRD) then
 * the close, as siw answers.
 */
static void test_reply_ird_short(void **state)
{
	struct sockaddr_in src = cm_in4("127.0.0.2", 0), dst;
	struct rdma_conn_param cp = { .responder_resources = 4,
				      .initiator_depth = 2 };
	struct iwarp_mpa req, rep;
	struct rdma_cm_id *c;
	u8 buf[600], frame[64];
	struct cm_rec *r;
	int lfd, fd, n;
	u16 port;

	NEED_TCP();
	lfd = mute_listener(&port);
	dst = cm_in4("127.0.0.1", port);
	c = client(SA(src), SA(dst));
	assert_int_equal(rdma_connect(c, &cp), 0);
	fd = mpa_request_in(lfd, &req);
	assert_true(req.enhanced && req.crc && req.p2p);
	assert_int_equal(req.ird, 4);
	assert_int_equal(req.ord, 2);
	assert_int_equal(rdmarw__iwarp_mpa_answer(&req, 8, 8, &rep), 0);
	rep.ord = 9; /* more READs than the initiator takes */
	n = rdmarw__iwarp_mpa_build(&rep, frame, sizeof(frame));
	assert_true(n > 0);
	assert_int_equal(send(fd, frame, (size_t)n, 0), n);
	r = wait_ev(c, RDMA_CM_EVENT_CONNECT_ERROR);
	assert_int_equal(r->status, -EPROTO);
	n = (int)read_to_eof(fd, buf, sizeof(buf));
	/* the 24-byte TERMINATE header (its MPA length field: 22), CRC */
	assert_int_equal(n, 24 + 4);
	assert_int_equal(iwarp_ld16(buf), 22);
	assert_int_equal(buf[3] & 0x0f, IWARP_OP_TERMINATE);
	assert_int_equal(iwarp_ld32(buf + 20) >> 16,
			 IWARP_LAYER_LLP << 12 | IWARP_LLP_ET_MPA << 8 |
				 IWARP_LLP_EC_INSUFFICIENT_IRD);
	close(lfd);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	(void)state;
}

/*
 * RDMARW_MPA_CRC: by default the active side asks for CRCs and its first
 * FPDU (the peer-to-peer ready-to-receive WRITE) carries one; with "0" it
 * asks for none (siw's mpa_crc_required is false) and, the reply agreeing,
 * the FPDU's CRC field is zero (RFC 5044: present, not checked).
 */
static void crc_choice(bool off)
{
	struct sockaddr_in src = cm_in4("127.0.0.2", 0), dst;
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct iwarp_mpa req, rep;
	u8 buf[600], frame[64];
	struct rdma_cm_id *c;
	size_t got, want;
	int lfd, fd, n;
	u16 port;

	if (off)
		setenv("RDMARW_MPA_CRC", "0", 1);
	lfd = mute_listener(&port);
	dst = cm_in4("127.0.0.1", port);
	c = client(SA(src), SA(dst));
	assert_int_equal(rdma_connect(c, &cp), 0);
	unsetenv("RDMARW_MPA_CRC");
	fd = mpa_request_in(lfd, &req);
	assert_true(req.enhanced && req.p2p);
	assert_int_equal(req.crc, !off);
	assert_int_equal(rdmarw__iwarp_mpa_answer(&req, 8, 8, &rep), 0);
	assert_int_equal(rep.crc, !off);
	n = rdmarw__iwarp_mpa_build(&rep, frame, sizeof(frame));
	assert_true(n > 0);
	assert_int_equal(send(fd, frame, (size_t)n, 0), n);
	wait_ev(c, RDMA_CM_EVENT_ESTABLISHED);
	/* the ready-to-receive FPDU: a zero-length tagged WRITE */
	got = 0;
	want = 2;
	while (got < want) {
		n = (int)recv(fd, buf + got, want - got, 0);
		assert_true(n > 0);
		got += (size_t)n;
		if (got == 2)
			want = (2 + iwarp_ld16(buf) + 3) / 4 * 4 + 4;
	}
	assert_int_equal(buf[3] & 0x0f, IWARP_OP_WRITE);
	if (off)
		assert_int_equal(iwarp_ld32(buf + want - 4), 0);
	else
		assert_int_not_equal(iwarp_ld32(buf + want - 4), 0);
	close(fd);
	wait_ev(c, RDMA_CM_EVENT_DISCONNECTED);
	close(lfd);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
}

static void test_crc_asked(void **state)
{
	NEED_TCP();
	crc_choice(false);
	(void)state;
}

static void test_crc_not_asked(void **state)
{
	NEED_TCP();
	crc_choice(true);
	(void)state;
}

/* Ids destroyed mid-handshake: no event, nothing left (ASan, valgrind). */
static void test_destroy_mid_handshake(void **state)
{
	struct sockaddr_in la = cm_in4("127.0.0.1", 0),
			   src = cm_in4("127.0.0.2", 0), dst;
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_id *c, *l;
	u16 port;
	int fd, raw;

	NEED_TCP();
	/* an active id waiting for a reply */
	fd = mute_listener(&port);
	dst = cm_in4("127.0.0.1", port);
	c = client(SA(src), SA(dst));
	assert_int_equal(rdma_connect(c, &cp), 0);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	close(fd);
	/* a listener with a handshake whose request has not come */
	l = listener(SA(la));
	raw = raw_connect(l);
	rdma_destroy_id(l);
	assert_int_equal(cm_settle(), 2);
	close(raw);
	(void)state;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connect_v4, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_connect_v6_passive_disconnects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wildcard_listener, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_data_moves, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_destroy_established, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_post_after_disconnect,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_attached, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unanswered_child_destroyed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_nobody_listens, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_peers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_half_open_cap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reply_never_comes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reply_ird_short, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_crc_asked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_crc_not_asked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_destroy_mid_handshake,
						setup, teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* one test, by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}

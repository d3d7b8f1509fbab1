// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel's rdma_cm API (<rdmarw/rdma_cm.h>) on ibv devices, over
 * librdmacm: the lab runs it on rxe0 (LAB_RXE_ADDR) and siw0
 * (LAB_SIW_ADDR); without those variables every case skips.  Both ends are
 * in this process: a listener on the device's address, whose handler
 * accepts, rejects or destroys each request as the case says, and an
 * active id that resolves, makes its QP and connects from its handler.
 * Cases: connect and accept with private data both ways and an R/W WRITE
 * then READ over the connection; disconnect from either side; consumer
 * reject with private data (and accept after it); the reject reasons
 * librdmacm can send; the setters reaching the kernel's id (REUSEADDR
 * seen in its port rules); no listener; the
 * states' errnos, private data over the limit, double destroy; an address
 * no device answers to; destroy racing events.
 */
#include <rdmarw/rdma_cm.h>
#include <rdmarw/rw.h>
#include <rdmarw/version.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "helpers/ibv_env.h"

#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>

#define WAIT_MS 10000 /* one event (never expected to take this long) */
#define MAX_EV 16
#define BUF 8192

enum on_request {
	REQ_ACCEPT,
	REQ_REJECT, /* with private data, then an accept that must fail */
	REQ_DESTROY, /* the handler returns non-zero */
};

struct ev_log {
	int n;
	enum rdma_cm_event_type type[MAX_EV];
	int status[MAX_EV];
	u8 pdata_len[MAX_EV];
	u8 pdata[MAX_EV][256];
};

/*
 * struct cm_case - the two ends of one case
 * @lock: everything below (the handlers run on the CM thread)
 * @cond: a handler logged an event
 * @listen_id: the listener (its children log in @srv)
 * @id: the active id (logs in @cli)
 * @child: the last request's child id
 * @kids: every child the listener's handler kept, and their QPs
 * @cli_qp: the active id's QP (destroyed after the id)
 * @destroyed: @id was destroyed: its handler must not run again
 * @late: handler calls for @id after @destroyed
 * @accept_after_reject: what rdma_accept() said after rdma_reject()
 * @accept_big, @reject_big: what an answer with private data over the
 *                           limit said (IB and RoCE)
 * @req_pdata, @req_len: what the active side sends
 * @rep_pdata, @rep_len: what the passive side answers (accept or reject)
 * @rej_reason: the reason of REQ_REJECT (0: IB_CM_REJ_CONSUMER_DEFINED)
 */
struct cm_case {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rdma_cm_id *listen_id, *id, *child;
	struct rdma_cm_id *kids[16];
	struct ib_qp *kid_qps[16];
	int nkids;
	struct ib_qp *cli_qp;
	int accept_big, reject_big;
	struct ev_log cli, srv;
	enum on_request on_req;
	bool destroyed;
	int late;
	int accept_after_reject;
	int handler_err;
	struct ibv_ends ends;
	struct ib_mr *peer_mr;
	u8 *lbuf, *rbuf;
	const void *req_pdata;
	u8 req_len;
	u8 rep_pdata[256];
	u8 rep_len;
	u8 rej_reason;
};

static void qp_attr(struct cm_case *t, struct ib_cq *cq,
		    struct ib_qp_init_attr *a)
{
	*a = (struct ib_qp_init_attr){
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 2 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
}

static bool iwarp(struct cm_case *t)
{
	return rdma_protocol_iwarp(t->ends.dev, 1);
}

static void log_ev(struct ev_log *l, struct rdma_cm_event *ev)
{
	if (l->n >= MAX_EV)
		return;
	l->type[l->n] = ev->event;
	l->status[l->n] = ev->status;
	l->pdata_len[l->n] = ev->param.conn.private_data_len;
	if (ev->param.conn.private_data && ev->param.conn.private_data_len)
		memcpy(l->pdata[l->n], ev->param.conn.private_data,
		       ev->param.conn.private_data_len);
	l->n++;
}

static int on_request(struct cm_case *t, struct rdma_cm_id *child)
{
	static u8 big[256];
	struct ib_qp_init_attr a;
	struct rdma_conn_param cp;
	int ret;

	if (t->on_req == REQ_DESTROY || t->nkids == 16)
		return 1;
	t->child = child;
	t->kids[t->nkids++] = child;
	if (!iwarp(t)) {
		/* over the REP's and the REJ's field: refused, not sent */
		ibv_conn_param(&cp, big, IB_CM_REP_PRIVATE_DATA_SIZE + 1);
		t->accept_big = rdma_accept(child, &cp);
		t->reject_big =
			rdma_reject(child, big, IB_CM_REJ_PRIVATE_DATA_SIZE + 1,
				    IB_CM_REJ_CONSUMER_DEFINED);
	}
	switch (t->on_req) {
	case REQ_DESTROY:
		return 1;
	case REQ_REJECT:
		ret = rdma_reject(child, t->rep_pdata, t->rep_len,
				  t->rej_reason ? t->rej_reason :
						  IB_CM_REJ_CONSUMER_DEFINED);
		ibv_conn_param(&cp, NULL, 0);
		t->accept_after_reject = rdma_accept(child, &cp);
		return ret;
	case REQ_ACCEPT:
		break;
	}
	qp_attr(t, t->ends.peer_cq, &a);
	ret = rdma_create_qp(child, t->ends.peer_pd, &a);
	if (ret)
		return ret;
	t->kid_qps[t->nkids - 1] = child->qp;
	ibv_conn_param(&cp, t->rep_pdata, t->rep_len);
	return rdma_accept(child, &cp);
}

static int handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cm_case *t = id->context;
	struct rdma_conn_param cp;
	struct ib_qp_init_attr a;
	int ret = 0;

	pthread_mutex_lock(&t->lock);
	if (id == t->id && t->destroyed) {
		t->late++;
		goto out;
	}
	if (id == t->id) {
		log_ev(&t->cli, ev);
	} else {
		log_ev(&t->srv, ev);
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 2000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		qp_attr(t, t->ends.cq, &a);
		ret = rdma_create_qp(id, t->ends.pd, &a);
		if (!ret)
			t->cli_qp = id->qp;
		ibv_conn_param(&cp, t->req_pdata, t->req_len);
		if (!ret)
			ret = rdma_connect(id, &cp);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		ret = on_request(t, id);
		if (ret > 0) {
			pthread_cond_broadcast(&t->cond);
			pthread_mutex_unlock(&t->lock);
			return 1; /* destroy the child */
		}
		break;
	default:
		break;
	}
	if (ret && !t->handler_err)
		t->handler_err = ret;
out:
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

#define EV_END (-1) /* wait_ev(): an event that ends a connection attempt */

static bool ev_is(enum rdma_cm_event_type type, int want)
{
	if (want != EV_END)
		return type == (enum rdma_cm_event_type)want;
	return type == RDMA_CM_EVENT_ESTABLISHED ||
	       type == RDMA_CM_EVENT_REJECTED ||
	       type == RDMA_CM_EVENT_UNREACHABLE ||
	       type == RDMA_CM_EVENT_CONNECT_ERROR ||
	       type == RDMA_CM_EVENT_ADDR_ERROR ||
	       type == RDMA_CM_EVENT_ROUTE_ERROR;
}

/* The index of the first event of @l that is @want (an event type, or
 * EV_END: one that ends a connection attempt); -2 when @want is EV_END and
 * a call of a handler failed first (its errno in @handler_err); -1 after
 * WAIT_MS. */
static int wait_ev(struct cm_case *t, struct ev_log *l, int want)
{
	struct timespec ts;
	int i, found = -1;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&t->lock);
	for (;;) {
		for (i = 0; i < l->n && found < 0; i++)
			if (ev_is(l->type[i], want))
				found = i;
		if (found < 0 && want == EV_END && t->handler_err)
			found = -2;
		if (found != -1 ||
		    pthread_cond_timedwait(&t->cond, &t->lock, &ts))
			break;
	}
	pthread_mutex_unlock(&t->lock);
	return found;
}

static void sa_of(const char *addr, u16 port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
}

static int case_setup(void **state)
{
	struct cm_case *t;

	*state = NULL;
	t = calloc(1, sizeof(*t));
	assert_non_null(t);
	if (!ibv_ends_open(&t->ends, 32, IB_POLL_DIRECT)) {
		free(t);
		return 0;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->lbuf = aligned_alloc(4096, 2 * BUF);
	t->rbuf = aligned_alloc(4096, BUF);
	memset(t->lbuf, 0x11, 2 * BUF);
	memset(t->rbuf, 0x22, BUF);
	t->peer_mr = ibv_remote_mr(t->ends.peer_pd, t->rbuf, BUF);
	assert_int_equal(rdmarw_ibv_declare(t->ends.pd, t->lbuf, 2 * BUF), 0);
	*state = t;
	return 0;
}

static struct cm_case *case_or_skip(void **state)
{
	if (!*state)
		skip();
	return *state;
}

/* The ids first (nothing is delivered after that), then their QPs. */
static void destroy_ends(struct cm_case *t)
{
	int i;

	rdma_destroy_id(t->id);
	t->id = NULL;
	if (t->cli_qp)
		assert_int_equal(ib_destroy_qp(t->cli_qp), 0);
	t->cli_qp = NULL;
	for (i = 0; i < t->nkids; i++) {
		rdma_destroy_id(t->kids[i]);
		if (t->kid_qps[i])
			assert_int_equal(ib_destroy_qp(t->kid_qps[i]), 0);
	}
	t->nkids = 0;
	t->child = NULL;
}

static int case_teardown(void **state)
{
	struct cm_case *t = *state;

	if (!t)
		return 0;
	rdma_destroy_id(t->listen_id);
	destroy_ends(t);
	assert_int_equal(ib_dereg_mr(t->peer_mr), 0);
	ibv_ends_close(&t->ends);
	free(t->lbuf);
	free(t->rbuf);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
	return 0;
}

/* A listener on the device's address, on a port the kernel picks. */
static u16 listen_on(struct cm_case *t)
{
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	u16 port;

	id = rdma_create_id(&init_net, handler, t, RDMA_PS_TCP, IB_QPT_RC);
	assert_false(IS_ERR(id));
	t->listen_id = id;
	sa_of(ibv_lab_addr, 0, &sin);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&sin), 0);
	assert_ptr_equal(id->device, t->ends.dev);
	assert_int_equal(rdma_listen(id, 4), 0);
	port = ntohs(
		((struct sockaddr_in *)&id->route.addr.src_addr)->sin_port);
	assert_true(port != 0);
	return port;
}

/* Start the active side towards @port (its handler goes on from there). */
static void connect_to(struct cm_case *t, u16 port)
{
	struct sockaddr_in sin;
	struct rdma_cm_id *id;

	id = rdma_create_id(&init_net, handler, t, RDMA_PS_TCP, IB_QPT_RC);
	assert_false(IS_ERR(id));
	pthread_mutex_lock(&t->lock);
	t->id = id;
	pthread_mutex_unlock(&t->lock);
	sa_of(ibv_lab_addr, port, &sin);
	assert_int_equal(
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000), 0);
}

/* Both ends up; the REQ and REP private data checked. */
static void connect_both(struct cm_case *t)
{
	static const char req[] = "request-private";
	int i;

	t->req_pdata = req;
	t->req_len = sizeof(req);
	rdmarw_ibv_peer_info_set((struct rdmarw_ibv_peer_info *)t->rep_pdata,
				 (uintptr_t)t->rbuf, t->peer_mr->rkey, BUF);
	t->rep_len = sizeof(struct rdmarw_ibv_peer_info);
	connect_to(t, listen_on(t));
	i = wait_ev(t, &t->cli, RDMA_CM_EVENT_ESTABLISHED);
	assert_true(i >= 0);
	assert_int_equal(t->handler_err, 0);
	/* the REP's private data, padded to its field on IB and RoCE */
	assert_int_equal(t->cli.pdata_len[i],
			 iwarp(t) ? t->rep_len : IB_CM_REP_PRIVATE_DATA_SIZE);
	assert_memory_equal(t->cli.pdata[i], t->rep_pdata, t->rep_len);
	assert_true(wait_ev(t, &t->srv, RDMA_CM_EVENT_ESTABLISHED) >= 0);
	i = wait_ev(t, &t->srv, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_true(i >= 0);
	assert_int_equal(t->srv.pdata_len[i],
			 iwarp(t) ? t->req_len :
				    IB_CM_REQ_PRIVATE_DATA_SIZE -
					    RDMA_CM_CMA_HDR_SIZE);
	assert_memory_equal(t->srv.pdata[i], req, sizeof(req));
	/* the child is on the device the request came on */
	assert_ptr_equal(t->child->device, t->ends.dev);
	assert_non_null(t->id->qp);
	assert_non_null(t->child->qp);
	assert_int_equal(t->id->qp->state, IB_QPS_RTS);
	assert_int_equal(t->child->qp->state, IB_QPS_RTS);
}

/* One R/W context over the connection; its completion's status. */
static enum ib_wc_status rw_one(struct cm_case *t, u8 *buf, u32 len,
				enum dma_data_direction dir)
{
	struct rdma_rw_ctx ctx;
	struct scatterlist sg;
	struct ibv_done d;
	int ret;

	sg_init_one(&sg, buf, len);
	ret = rdma_rw_ctx_init(&ctx, t->id->qp, 1, &sg, 1, 0,
			       (uintptr_t)t->rbuf, t->peer_mr->rkey, dir);
	assert_true(ret > 0);
	ibv_done_init(&d);
	assert_int_equal(rdma_rw_ctx_post(&ctx, t->id->qp, 1, &d.cqe, NULL), 0);
	ibv_done_wait(t->ends.cq, &d, 1);
	rdma_rw_ctx_destroy(&ctx, t->id->qp, 1, &sg, 1, dir);
	return d.wc.status;
}

static void test_connect_rw(void **state)
{
	struct cm_case *t = case_or_skip(state);
	u8 *src = t->lbuf, *back = t->lbuf + BUF;
	u32 i;

	connect_both(t);
	for (i = 0; i < BUF; i++)
		src[i] = (u8)(i * 7 + 3);
	memset(back, 0, BUF);
	assert_int_equal(rw_one(t, src, 3000, DMA_TO_DEVICE), IB_WC_SUCCESS);
	/* the READ after the WRITE sees it (and settles it on siw) */
	assert_int_equal(rw_one(t, back, BUF, DMA_FROM_DEVICE), IB_WC_SUCCESS);
	assert_memory_equal(t->rbuf, src, 3000);
	assert_memory_equal(back, src, 3000);
	/* past what was written: the remote bytes did not move */
	for (i = 3000; i < BUF; i++)
		assert_int_equal(back[i], 0x22);
	/* the active side disconnects: both hear DISCONNECTED */
	assert_int_equal(rdma_disconnect(t->id), 0);
	assert_true(wait_ev(t, &t->srv, RDMA_CM_EVENT_DISCONNECTED) >= 0);
	assert_int_equal(rdma_disconnect(t->child), 0); /* the DREP */
	assert_true(wait_ev(t, &t->cli, RDMA_CM_EVENT_DISCONNECTED) >= 0);
	assert_int_equal(t->id->qp->state, IB_QPS_ERR);
	assert_int_equal(t->child->qp->state, IB_QPS_ERR);
	/* once more is no error: the connection is already going */
	assert_int_equal(rdma_disconnect(t->id), 0);
}

static void test_disconnect_passive(void **state)
{
	struct cm_case *t = case_or_skip(state);

	connect_both(t);
	assert_int_equal(rdma_disconnect(t->child), 0);
	assert_true(wait_ev(t, &t->cli, RDMA_CM_EVENT_DISCONNECTED) >= 0);
	assert_int_equal(rdma_disconnect(t->id), 0);
	assert_true(wait_ev(t, &t->srv, RDMA_CM_EVENT_DISCONNECTED) >= 0);
	assert_int_equal(t->child->qp->state, IB_QPS_ERR);
}

static void test_reject_with_data(void **state)
{
	struct cm_case *t = case_or_skip(state);
	struct rdma_cm_event ev;
	const u8 *data;
	u8 len;
	int i;

	t->on_req = REQ_REJECT;
	memcpy(t->rep_pdata, "not-today", 10);
	t->rep_len = 10;
	connect_to(t, listen_on(t));
	i = wait_ev(t, &t->cli, EV_END);
	assert_true(i >= 0);
	assert_int_equal(t->cli.type[i], RDMA_CM_EVENT_REJECTED);
	if (iwarp(t)) {
		/*
		 * The kernel's status: siw reports an MPA reject as a reset
		 * (-ECONNRESET), which rdma_is_consumer_reject() does not
		 * take for the consumer's (-ECONNREFUSED); the private data
		 * arrives all the same.
		 */
		print_message("%s: consumer reject: status %d, %u bytes\n",
			      ibv_lab_dev, t->cli.status[i],
			      t->cli.pdata_len[i]);
		assert_true(t->cli.status[i] == -ECONNRESET ||
			    t->cli.status[i] == -ECONNREFUSED);
		assert_int_equal(
			rdma_is_consumer_reject(t->id, t->cli.status[i]),
			t->cli.status[i] == -ECONNREFUSED);
		assert_int_equal(t->cli.pdata_len[i], 10);
		assert_memory_equal(t->cli.pdata[i], "not-today", 10);
		assert_int_equal(t->accept_after_reject, -EINVAL);
		return;
	}
	assert_int_equal(t->cli.status[i], IB_CM_REJ_CONSUMER_DEFINED);
	assert_true(rdma_is_consumer_reject(t->id, t->cli.status[i]));
	memset(&ev, 0, sizeof(ev));
	ev.event = t->cli.type[i];
	ev.status = t->cli.status[i];
	ev.param.conn.private_data = t->cli.pdata[i];
	ev.param.conn.private_data_len = t->cli.pdata_len[i];
	data = rdma_consumer_reject_data(t->id, &ev, &len);
	assert_non_null(data);
	assert_int_equal(len, IB_CM_REJ_PRIVATE_DATA_SIZE);
	assert_memory_equal(data, "not-today", 10);
	/* accept after reject: the child's state says no */
	assert_int_equal(t->accept_after_reject, -EINVAL);
	if (!iwarp(t)) {
		assert_int_equal(t->accept_big, -EINVAL);
		assert_int_equal(t->reject_big, -EINVAL);
	}
	/* the active id is back where a connect may not be repeated */
	assert_int_equal(rdma_connect(t->id, &(struct rdma_conn_param){ 0 }),
			 -EINVAL);
}

/*
 * The reason a REJ carries (IB and RoCE): librdmacm sends
 * VENDOR_OPTION_NOT_SUPPORTED (rdma_reject_ece()) and CONSUMER_DEFINED,
 * and any other reason goes as CONSUMER_DEFINED (docs/deviations.md).
 */
static void reject_with(struct cm_case *t, u8 reason, int seen)
{
	int i;

	t->on_req = REQ_REJECT;
	t->rej_reason = reason;
	t->rep_len = 0;
	connect_to(t, listen_on(t));
	i = wait_ev(t, &t->cli, EV_END);
	assert_true(i >= 0);
	assert_int_equal(t->cli.type[i], RDMA_CM_EVENT_REJECTED);
	assert_int_equal(t->cli.status[i], seen);
	assert_int_equal(rdma_is_consumer_reject(t->id, t->cli.status[i]),
			 seen == IB_CM_REJ_CONSUMER_DEFINED);
}

static void test_reject_vendor_reason(void **state)
{
	struct cm_case *t = case_or_skip(state);

	if (iwarp(t))
		skip(); /* an MPA reject has no reason */
	reject_with(t, IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED,
		    IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED);
}

static void test_reject_other_reason(void **state)
{
	struct cm_case *t = case_or_skip(state);

	if (iwarp(t))
		skip();
	reject_with(t, IB_CM_REJ_STALE_CONN, IB_CM_REJ_CONSUMER_DEFINED);
}

static int quiet_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	return 0;
}

/* Two ids bound to @port of the device's address; the second's answer. */
static int bind_twice(struct rdma_cm_id **a, struct rdma_cm_id **b, u16 port,
		      bool reuse)
{
	struct sockaddr_in sin;

	*a = rdma_create_id(&init_net, quiet_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	*b = rdma_create_id(&init_net, quiet_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	assert_false(IS_ERR(*a) || IS_ERR(*b));
	if (reuse) {
		/* recorded: the librdmacm id does not exist before the bind */
		assert_int_equal(rdma_set_reuseaddr(*a, 1), 0);
		assert_int_equal(rdma_set_reuseaddr(*b, 1), 0);
	}
	sa_of(ibv_lab_addr, port, &sin);
	assert_int_equal(rdma_bind_addr(*a, (struct sockaddr *)&sin), 0);
	return rdma_bind_addr(*b, (struct sockaddr *)&sin);
}

/*
 * REUSEADDR set before the bind reaches the kernel's id: its port rules
 * let two reusing ids share an address and port, and refuse the second
 * without it.  The setters on a bound id go to the kernel's id and answer
 * as its rules say.
 */
static void test_setters_reach_kernel(void **state)
{
	struct cm_case *t = case_or_skip(state);
	struct rdma_cm_id *a, *b;
	struct sockaddr_in sin;
	u16 port = 0;
	int ret;

	(void)t;
	/* a free port: bind once to port 0 and take what was given */
	a = rdma_create_id(&init_net, quiet_handler, NULL, RDMA_PS_TCP,
			   IB_QPT_RC);
	assert_false(IS_ERR(a));
	sa_of(ibv_lab_addr, 0, &sin);
	assert_int_equal(rdma_bind_addr(a, (struct sockaddr *)&sin), 0);
	port = ntohs(((struct sockaddr_in *)&a->route.addr.src_addr)->sin_port);
	rdma_destroy_id(a);
	assert_true(port != 0);

	ret = bind_twice(&a, &b, port, false);
	assert_int_equal(ret, -EADDRINUSE);
	rdma_destroy_id(b);
	rdma_destroy_id(a);

	ret = bind_twice(&a, &b, port, true);
	assert_int_equal(ret, 0);
	/* bound: REUSEADDR is the bind's (the CM's state rule); AFONLY, TOS
	 * and the ACK timeout go to the kernel's id, which takes them */
	assert_int_equal(rdma_set_reuseaddr(a, 0), -EINVAL);
	assert_int_equal(rdma_set_afonly(a, 1), 0);
	rdma_set_service_type(a, 32);
	assert_int_equal(rdma_set_ack_timeout(a, 19), 0);
	assert_int_equal(rdma_set_min_rnr_timer(a, 12), 0);
	/* alone on the port, it may listen; then AFONLY is refused */
	rdma_destroy_id(b);
	assert_int_equal(rdma_listen(a, 1), 0);
	assert_int_equal(rdma_set_afonly(a, 0), -EINVAL);
	rdma_destroy_id(a);
}

static void test_no_listener(void **state)
{
	struct cm_case *t = case_or_skip(state);
	struct rdma_conn_param cp;
	u16 port;
	int i;

	port = listen_on(t);
	rdma_destroy_id(t->listen_id); /* nobody listens there now */
	t->listen_id = NULL;
	connect_to(t, port);
	i = wait_ev(t, &t->cli, EV_END);
	if (i == -2) {
		/* iWARP: the TCP connection is refused within rdma_connect(),
		 * which returns the kernel's errno, as it does in the kernel */
		print_message("%s: no listener: rdma_connect() %d\n",
			      ibv_lab_dev, t->handler_err);
		assert_true(iwarp(t));
		assert_int_equal(t->handler_err, -ECONNREFUSED);
		/* the id is back in ROUTE_RESOLVED: a retry gets as far */
		ibv_conn_param(&cp, NULL, 0);
		assert_int_equal(rdma_connect(t->id, &cp), -ECONNREFUSED);
		assert_int_equal(t->srv.n, 0);
		return;
	}
	assert_true(i >= 0);
	print_message("%s: no listener: %s, status %d\n", ibv_lab_dev,
		      rdma_event_msg(t->cli.type[i]), t->cli.status[i]);
	assert_true(t->cli.type[i] == RDMA_CM_EVENT_REJECTED ||
		    t->cli.type[i] == RDMA_CM_EVENT_UNREACHABLE);
	if (t->cli.type[i] == RDMA_CM_EVENT_REJECTED && !iwarp(t)) {
		/* the IB CM's reason: nobody serves that service id */
		assert_int_equal(t->cli.status[i],
				 IB_CM_REJ_INVALID_SERVICE_ID);
		assert_false(rdma_is_consumer_reject(t->id, t->cli.status[i]));
	} else {
		assert_true(t->cli.status[i] != 0);
	}
	assert_int_equal(t->srv.n, 0);
}

static void test_states_and_limits(void **state)
{
	struct cm_case *t = case_or_skip(state);
	struct rdma_conn_param cp;
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	static u8 big[256];
	int i;

	id = rdma_create_id(&init_net, handler, t, RDMA_PS_TCP, IB_QPT_RC);
	assert_false(IS_ERR(id));
	ibv_conn_param(&cp, NULL, 0);
	/* IDLE: nothing but bind, resolve, listen */
	assert_int_equal(rdma_connect(id, &cp), -EINVAL);
	assert_int_equal(rdma_accept(id, &cp), -EINVAL);
	assert_int_equal(rdma_reject(id, NULL, 0, 0), -EINVAL);
	assert_int_equal(rdma_resolve_route(id, 100), -EINVAL);
	assert_int_equal(rdma_disconnect(id), -EINVAL);
	/* an address of no device: the kernel's errno */
	sa_of("192.0.2.1", 0, &sin);
	i = rdma_bind_addr(id, (struct sockaddr *)&sin);
	print_message("%s: bind to 192.0.2.1: %d\n", ibv_lab_dev, i);
	assert_true(i < 0);
	sa_of(ibv_lab_addr, 0, &sin);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&sin), 0);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&sin), -EINVAL);
	assert_int_equal(rdma_connect(id, &cp), -EINVAL);
	rdma_destroy_id(id);
	rdma_destroy_id(id); /* the second one is a no-op */

	/* private data over the transport's limit */
	connect_both(t);
	assert_int_equal(rdma_accept(t->id, &cp), -EINVAL); /* not a child */
	assert_int_equal(rdma_accept(t->child, &cp), -EINVAL); /* answered */
	assert_int_equal(rdma_listen(t->id, 1), -EINVAL);
	assert_int_equal(rdma_resolve_route(t->id, 100), -EINVAL);
	id = rdma_create_id(&init_net, handler, t, RDMA_PS_TCP, IB_QPT_RC);
	assert_false(IS_ERR(id));
	sa_of(ibv_lab_addr, 0, &sin);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&sin), 0);
	assert_int_equal(rdma_create_qp(id, t->ends.pd, NULL), -EINVAL);
	/* no QP and not resolved: connect is refused whatever the data */
	cp.private_data = big;
	cp.private_data_len = iwarp(t) ? 255 :
					 IB_CM_REQ_PRIVATE_DATA_SIZE -
						 RDMA_CM_CMA_HDR_SIZE + 1;
	assert_int_equal(rdma_connect(id, &cp), -EINVAL);
	rdma_destroy_id(id);
}

/* An oversized REQ on a resolved id with its QP. */
static void test_pdata_limit(void **state)
{
	struct cm_case *t = case_or_skip(state);
	struct rdma_conn_param cp;
	static u8 big[256];
	int i;

	if (iwarp(t))
		skip(); /* a u8 length cannot exceed what MPA carries */
	t->req_pdata = big;
	t->req_len = IB_CM_REQ_PRIVATE_DATA_SIZE - RDMA_CM_CMA_HDR_SIZE + 1;
	connect_to(t, listen_on(t));
	/* the handler's rdma_connect() fails: -EINVAL, nothing is sent */
	i = wait_ev(t, &t->cli, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_true(i >= 0);
	pthread_mutex_lock(&t->lock);
	assert_int_equal(t->handler_err, -EINVAL);
	pthread_mutex_unlock(&t->lock);
	assert_int_equal(t->srv.n, 0);
	/* at the limit it goes */
	ibv_conn_param(&cp, big,
		       IB_CM_REQ_PRIVATE_DATA_SIZE - RDMA_CM_CMA_HDR_SIZE);
	assert_int_equal(rdma_connect(t->id, &cp), 0);
	assert_true(wait_ev(t, &t->cli, RDMA_CM_EVENT_ESTABLISHED) >= 0);
	i = wait_ev(t, &t->srv, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_true(i >= 0);
	assert_int_equal(t->srv.pdata_len[i], t->req_len - 1);
	/* the REP over its field was refused, the right one went */
	assert_int_equal(t->accept_big, -EINVAL);
	assert_int_equal(t->reject_big, -EINVAL);
	assert_true(wait_ev(t, &t->srv, RDMA_CM_EVENT_ESTABLISHED) >= 0);
}

static void test_addr_unanswered(void **state)
{
	struct cm_case *t = case_or_skip(state);
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	int ret, i;

	id = rdma_create_id(&init_net, handler, t, RDMA_PS_TCP, IB_QPT_RC);
	assert_false(IS_ERR(id));
	pthread_mutex_lock(&t->lock);
	t->id = id;
	pthread_mutex_unlock(&t->lock);
	sa_of("192.0.2.1", 7000, &sin); /* TEST-NET-1: no route in the lab */
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 1000);
	if (ret) {
		/* the kernel refuses at once (no route): its errno */
		print_message("%s: resolve 192.0.2.1: %d\n", ibv_lab_dev, ret);
		assert_true(ret < 0 && ret != -EINVAL);
		assert_int_equal(t->cli.n, 0);
		return;
	}
	i = wait_ev(t, &t->cli, EV_END);
	assert_true(i >= 0);
	print_message("%s: resolve 192.0.2.1: %s, status %d\n", ibv_lab_dev,
		      rdma_event_msg(t->cli.type[i]), t->cli.status[i]);
	assert_true(t->cli.type[i] == RDMA_CM_EVENT_ADDR_ERROR ||
		    t->cli.type[i] == RDMA_CM_EVENT_UNREACHABLE);
	assert_true(t->cli.status[i] < 0);
}

/* Destroy the active id while its events are on their way. */
static void test_destroy_races(void **state)
{
	struct cm_case *t = case_or_skip(state);
	struct timespec ts = { .tv_nsec = 2 * 1000 * 1000 };
	u16 port = listen_on(t);
	int round;

	for (round = 0; round < 8; round++) {
		pthread_mutex_lock(&t->lock);
		t->cli.n = 0;
		pthread_mutex_unlock(&t->lock);
		connect_to(t, port);
		if (round & 1)
			nanosleep(&ts, NULL);
		if (round & 2)
			wait_ev(t, &t->cli, RDMA_CM_EVENT_ROUTE_RESOLVED);
		if (round & 4)
			wait_ev(t, &t->cli, RDMA_CM_EVENT_ESTABLISHED);
		rdma_destroy_id(t->id);
		/* from here on its handler must never run */
		pthread_mutex_lock(&t->lock);
		t->destroyed = true;
		pthread_mutex_unlock(&t->lock);
		nanosleep(&ts, NULL);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&t->lock);
		assert_int_equal(t->late, 0);
		t->destroyed = false;
		pthread_mutex_unlock(&t->lock);
		t->id = NULL;
		if (t->cli_qp)
			assert_int_equal(ib_destroy_qp(t->cli_qp), 0);
		t->cli_qp = NULL;
	}
	/* the listener, then the children those requests left */
	rdma_destroy_id(t->listen_id);
	t->listen_id = NULL;
	destroy_ends(t);
	port = listen_on(t);
	/* a request the handler destroys: the peer hears a refusal */
	t->on_req = REQ_DESTROY;
	pthread_mutex_lock(&t->lock);
	t->cli.n = 0;
	t->handler_err = 0; /* a child's accept may have failed above */
	pthread_mutex_unlock(&t->lock);
	connect_to(t, port);
	round = wait_ev(t, &t->cli, EV_END);
	assert_true(round >= 0);
	print_message("%s: request destroyed: %s, status %d\n", ibv_lab_dev,
		      rdma_event_msg(t->cli.type[round]), t->cli.status[round]);
	assert_true(t->cli.type[round] == RDMA_CM_EVENT_REJECTED ||
		    t->cli.type[round] == RDMA_CM_EVENT_CONNECT_ERROR ||
		    t->cli.type[round] == RDMA_CM_EVENT_UNREACHABLE);
	assert_int_equal(t->nkids, 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(test_connect_rw, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_disconnect_passive, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_reject_with_data, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_no_listener, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_states_and_limits, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_pdata_limit, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_reject_vendor_reason, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_reject_other_reason, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_setters_reach_kernel, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_addr_unanswered, case_setup,
					case_teardown),
	cmocka_unit_test_setup_teardown(test_destroy_races, case_setup,
					case_teardown),
};

int main(void)
{
	return ibv_lab_run("cm_ibv", tests, sizeof(tests) / sizeof(tests[0]));
}

#else /* !RDMARW_HAVE_IBV */
int main(void)
{
	return ibv_lab_no_backend();
}
#endif /* RDMARW_HAVE_IBV */

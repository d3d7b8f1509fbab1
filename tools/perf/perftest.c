// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-perf --perftest: a client or a server that perftest's own
 * programs with -R (ib_write_bw, ib_read_bw, ib_send_bw and their _lat
 * siblings) take for one of theirs, so either end of a test may be the
 * stock tool (docs/tools.md has the protocol; perftest_compat.h the
 * messages).
 *
 * perftest -R makes two rdma_cm connections to one port: first its
 * "communication" QP, on which the two ends exchange fixed-size messages
 * with SEND/RECV, one receive posted at a time (the client sends first,
 * the server answers); then, after the fourth exchange, the measured QP.
 * The communication QP here is @comm (ids, PD, CQ, QP; its buffers are the
 * session's), the measured one @data, cs.c's connection with its buffers
 * and its bandwidth loop.  Every received message is checked for its
 * exact length and parsed with bounds before use.
 */
#include "cs.h"
#include "perftest_compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PT_RX_LEN 64 /* a message longer than perftest's shows as such */
#define PT_WAIT_S 60 /* one exchange, at most */
#define PT_RUN_WAIT_S (2 * 3600 + 60) /* the server, for the client's run */
#define PT_CONNECT_TRIES 50 /* perftest's server listens after answering */
#define PT_RETRY_US 100000
#define PT_CYCLE 4096U /* our cycle buffer: the page, as perftest's */
#define PT_CACHE_LINE 64U
#define PT_MTU 5 /* IB_MTU_4096: no limit from this end */
#define PT_MAX_SIZE (1ULL << 31) /* a report's message size */
#define PT_MAX_ITERS (1ULL << 32) /* a report's iterations */
#define PT_CREDIT_SLOTS 16 /* ib_send_bw: credit WRITEs in flight */
#define PT_RX_DEPTH 512 /* ib_send_bw's receive depth (DEF_RX_SEND) */

struct pt_session {
	const struct perf_opts *o;
	bool server;
	enum cs_op op;
	struct cs_conn comm;
	struct cs_conn data;
	bool got_comm, got_data; /* the CM thread's */
	struct ib_cqe rx_cqe, tx_cqe;
	struct ib_sge rx_sge;
	struct ib_recv_wr rx_wr;
	bool rx_done, tx_done;
	enum ib_wc_status rx_status, tx_status;
	u32 rx_len;
	u32 cycle_buffer;
	unsigned int peer_version;
	struct pt_dest peer;
	u8 rx[PT_RX_LEN];
	u8 tx[PT_DEST_LEN];
	/* SEND tests: perftest's receive depth; ib_send_bw's credits */
	u32 rx_depth;
	struct ib_cqe credit_cqe;
	u32 credit_next, credit_busy;
	/*
	 * ib_send_bw's sender: the exchanges poll the measured QP's CQ too,
	 * so the credits of a size (an inline poller receives them) land
	 * before the next size resets the word
	 */
	bool poll_data;
	u32 credit_src[PT_CREDIT_SLOTS];
};

/* ---- connection manager ------------------------------------------------ */

/* The CM thread: the first request is the exchange's, the second the test's. */
static int pt_request(struct cs_conn *comm, struct rdma_cm_id *id)
{
	struct pt_session *s = container_of(comm, struct pt_session, comm);
	struct cs_conn *c = comm;

	if (!s->got_comm) {
		s->got_comm = true;
	} else if (!s->got_data) {
		s->got_data = true;
		c = &s->data;
		id->context = c;
	} else {
		return 1; /* a third connection is not perftest's: rejected */
	}
	pthread_mutex_lock(&c->cm_lock);
	c->req = id;
	c->have_peer = true;
	pthread_cond_broadcast(&c->cm_cond);
	pthread_mutex_unlock(&c->cm_lock);
	return 0;
}

static int pt_cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cs_conn *c = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return pt_request(c, id);
	pthread_mutex_lock(&c->cm_lock);
	cs_cm_record(c, ev);
	pthread_mutex_unlock(&c->cm_lock);
	return 0;
}

/* Until *@flag or an error event, at most @secs, saying nothing. */
static int pt_cm_wait_quiet(struct cs_conn *c, const bool *flag, int secs)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&c->cm_lock);
	while (!*flag && !c->cm_err && !ret)
		ret = pthread_cond_timedwait(&c->cm_cond, &c->cm_lock, &ts);
	ret = *flag ? 0 : c->cm_err ? c->cm_err : -ETIMEDOUT;
	pthread_mutex_unlock(&c->cm_lock);
	return ret;
}

static bool pt_comm_down(struct cs_conn *c)
{
	bool down;

	pthread_mutex_lock(&c->cm_lock);
	down = c->down || c->cm_err;
	pthread_mutex_unlock(&c->cm_lock);
	return down;
}

/* ---- the exchange QP --------------------------------------------------- */

static void pt_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pt_session *s =
		container_of(wc->wr_cqe, struct pt_session, rx_cqe);

	(void)cq;
	s->rx_status = wc->status;
	s->rx_len = wc->byte_len;
	s->rx_done = true;
}

static void pt_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pt_session *s =
		container_of(wc->wr_cqe, struct pt_session, tx_cqe);

	(void)cq;
	s->tx_status = wc->status;
	s->tx_done = true;
}

static int pt_post_rx(struct pt_session *s)
{
	int ret;

	s->rx_done = false;
	ret = ib_post_recv(s->comm.qp, &s->rx_wr, NULL);
	return ret ? cs_fail(&s->comm, "ib_post_recv (exchange)", ret) : 0;
}

/* PD, CQ, QP on @s->comm.id and its one receive, posted before connecting. */
static int pt_comm_setup(struct pt_session *s)
{
	struct cs_conn *c = &s->comm;
	struct ib_qp_init_attr attr;
	int ret;

	c->dev = c->id->device;
	snprintf(c->devname, sizeof(c->devname), "%s", c->dev->name);
	c->pd = ib_alloc_pd(c->dev, 0);
	if (IS_ERR(c->pd)) {
		ret = (int)PTR_ERR(c->pd);
		c->pd = NULL;
		return cs_fail(c, "ib_alloc_pd (exchange)", ret);
	}
	c->cq = ib_alloc_cq(c->dev, NULL, 8, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq)) {
		ret = (int)PTR_ERR(c->cq);
		c->cq = NULL;
		return cs_fail(c, "ib_alloc_cq (exchange)", ret);
	}
	attr = (struct ib_qp_init_attr){
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = { .max_send_wr = 2,
			 .max_recv_wr = 2,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	ret = rdma_create_qp(c->id, c->pd, &attr);
	if (ret)
		return cs_fail(c, "rdma_create_qp (exchange)", ret);
	c->qp = c->id->qp;
	ret = cs_declare(c, s->rx, sizeof(s->rx));
	if (!ret)
		ret = cs_declare(c, s->tx, sizeof(s->tx));
	if (ret)
		return cs_fail(c, "rdmarw_ibv_declare", ret);
	s->rx_cqe.done = pt_rx_done;
	s->tx_cqe.done = pt_tx_done;
	s->rx_sge = (struct ib_sge){ .addr = (u64)(uintptr_t)s->rx,
				     .length = sizeof(s->rx),
				     .lkey = c->pd->local_dma_lkey };
	s->rx_wr = (struct ib_recv_wr){ .wr_cqe = &s->rx_cqe,
					.sg_list = &s->rx_sge,
					.num_sge = 1 };
	return pt_post_rx(s);
}

/*
 * Poll the exchange's CQ until *@flag, a disconnection or @secs; a long
 * wait (the server's, while the client runs) sleeps between polls.
 */
static int pt_wait(struct pt_session *s, const bool *flag, int secs,
		   const char *what)
{
	struct cs_conn *c = &s->comm;
	double deadline = perf_now() + secs;
	unsigned int spins = 0;
	int n;

	while (!*flag) {
		n = ib_process_cq_direct(c->cq, 4);
		if (n < 0)
			return cs_fail(c, "ib_process_cq_direct", n);
		if (s->poll_data) /* credits the peer wrote: placed now */
			cs_poll(&s->data);
		if (*flag)
			break;
		if (!(++spins & 255)) {
			if (pt_comm_down(c))
				return cs_fail(c, what, -ECONNRESET);
			if (perf_now() > deadline)
				return cs_fail(c, what, -ETIMEDOUT);
		}
		if (spins > 4096)
			usleep(spins > 65536 ? 1000 : 20);
	}
	return 0;
}

static int pt_send(struct pt_session *s, const void *msg, u32 len,
		   const char *what)
{
	struct ib_sge sge = { .addr = (u64)(uintptr_t)s->tx,
			      .length = len,
			      .lkey = s->comm.pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = &s->tx_cqe,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };
	int ret;

	memcpy(s->tx, msg, len);
	s->tx_done = false;
	ret = ib_post_send(s->comm.qp, &wr, NULL);
	if (ret)
		return cs_fail(&s->comm, "ib_post_send (exchange)", ret);
	ret = pt_wait(s, &s->tx_done, PT_WAIT_S, what);
	if (!ret && s->tx_status != IB_WC_SUCCESS)
		ret = cs_fail(&s->comm, what, -EIO);
	return ret;
}

/* A message of exactly @len bytes; its receive posted again. */
static int pt_recv(struct pt_session *s, void *out, u32 len, int secs,
		   const char *what)
{
	int ret = pt_wait(s, &s->rx_done, secs, what);

	if (ret)
		return ret;
	if (s->rx_status != IB_WC_SUCCESS)
		return cs_fail(&s->comm, what, -EIO);
	if (s->rx_len != len) {
		fprintf(stderr,
			PERF_TOOL ": --perftest: %s: %u bytes where perftest "
				  "sends %u\n",
			what, s->rx_len, len);
		return cs_fail(&s->comm, what, -EMSGSIZE);
	}
	memcpy(out, s->rx, len);
	return pt_post_rx(s);
}

/* ctx_xchg_data(): the client sends first, the server answers. */
static int pt_xchg(struct pt_session *s, const void *mine, void *theirs,
		   u32 len, int secs, const char *what)
{
	int ret;

	if (s->server) {
		ret = pt_recv(s, theirs, len, secs, what);
		return ret ? ret : pt_send(s, mine, len, what);
	}
	ret = pt_send(s, mine, len, what);
	return ret ? ret : pt_recv(s, theirs, len, secs, what);
}

/* A message that parsed badly: said, and the run ends. */
static int pt_refuse(struct pt_session *s, const char *what, int err)
{
	char m[128];

	snprintf(m, sizeof(m), "perftest's %s", what);
	return cs_fail(&s->comm, m, err);
}

/* exchange_versions(), check_sys_data(), check_mtu() */
static int pt_sys_data(struct pt_session *s)
{
	char mv[PT_VERSION_LEN], tv[PT_VERSION_LEN], mm[PT_MTU_LEN],
		tm[PT_MTU_LEN];
	u8 mi[PT_INT_LEN], ti[PT_INT_LEN];
	unsigned int mtu;
	u32 v;
	int ret;

	pt_version_encode(mv);
	ret = pt_xchg(s, mv, tv, PT_VERSION_LEN, PT_WAIT_S, "version");
	if (ret)
		return ret;
	ret = pt_version_parse(tv, PT_VERSION_LEN, &s->peer_version);
	if (ret)
		return pt_refuse(s, "version (not a version)", ret);
	if (s->peer_version < PT_MIN_VERSION)
		return pt_refuse(s, "version (older than 5.70)",
				 -EPROTONOSUPPORT);
	pt_int_encode(PT_CYCLE, mi);
	ret = pt_xchg(s, mi, ti, PT_INT_LEN, PT_WAIT_S, "cycle buffer");
	if (!ret)
		ret = pt_int_parse(ti, PT_INT_LEN, 1, PT_MAX_CYCLE, &v);
	if (ret)
		return ret == -ERANGE ? pt_refuse(s, "cycle buffer", ret) : ret;
	s->cycle_buffer = max_t(u32, v, PT_CYCLE);
	pt_int_encode(PT_CACHE_LINE, mi);
	ret = pt_xchg(s, mi, ti, PT_INT_LEN, PT_WAIT_S, "cache line size");
	if (!ret)
		ret = pt_int_parse(ti, PT_INT_LEN, 1, PT_MAX_CACHE_LINE, &v);
	if (ret)
		return ret == -ERANGE ? pt_refuse(s, "cache line size", ret) :
					ret;
	pt_mtu_encode(PT_MTU, mm);
	ret = pt_xchg(s, mm, tm, PT_MTU_LEN, PT_WAIT_S, "MTU");
	if (!ret)
		ret = pt_mtu_parse(tm, PT_MTU_LEN, &mtu);
	return ret == -EPROTO ? pt_refuse(s, "MTU", ret) : ret;
}

/*
 * ctx_hand_shake(): pingpong_dests; with @real, this end's measured QP
 * and buffer (before the measured connection both are zero), and the
 * peer's kept.
 */
static int pt_dests(struct pt_session *s, bool real, int secs, const char *what)
{
	struct pt_dest mine = { .gid_index = -1 }, theirs;
	struct cs_conn *d = &s->data;
	u8 m[PT_DEST_LEN], t[PT_DEST_LEN];
	int ret;

	if (real) {
		mine.qpn = d->qp->qp_num & 0xffffff;
		mine.rkey = d->mr->rkey;
		mine.vaddr = (u64)(uintptr_t)cs_dst(d);
		mine.out_reads = cs_rd_atom(d->dev->attrs.max_qp_rd_atom);
	}
	pt_dest_encode(&mine, m);
	ret = pt_xchg(s, m, t, PT_DEST_LEN, secs, what);
	if (ret)
		return ret;
	ret = pt_dest_parse(t, PT_DEST_LEN, &theirs);
	if (ret)
		return pt_refuse(s, "QP address", ret);
	if (real)
		s->peer = theirs;
	return 0;
}

/* The server's side: the client's report, checked. */
static int pt_reports_check(struct pt_session *s, const struct pt_report *mine,
			    struct pt_report *theirs)
{
	const double mv[3] = { mine->bw_peak, mine->bw_avg, mine->msg_rate };
	double *tv[3] = { &theirs->bw_peak, &theirs->bw_avg,
			  &theirs->msg_rate };
	u8 m[PT_U64_LEN], t[PT_U64_LEN];
	unsigned int i;
	int ret;

	pt_u64_encode(mine->size, m);
	ret = pt_xchg(s, m, t, PT_U64_LEN, PT_WAIT_S, "report");
	if (!ret)
		ret = pt_u64_parse(t, PT_U64_LEN, PT_MAX_SIZE, &theirs->size);
	if (ret)
		return ret == -ERANGE ? pt_refuse(s, "report's size", ret) :
					ret;
	pt_u64_encode(mine->iters, m);
	ret = pt_xchg(s, m, t, PT_U64_LEN, PT_WAIT_S, "report");
	if (!ret)
		ret = pt_u64_parse(t, PT_U64_LEN, PT_MAX_ITERS, &theirs->iters);
	if (ret)
		return ret == -ERANGE ?
			       pt_refuse(s, "report's iterations", ret) :
			       ret;
	for (i = 0; i < 3; i++) {
		pt_double_encode(mv[i], m);
		ret = pt_xchg(s, m, t, PT_U64_LEN, PT_WAIT_S, "report");
		if (!ret)
			ret = pt_double_parse(t, PT_U64_LEN, tv[i]);
		if (ret)
			return ret == -ERANGE ?
				       pt_refuse(s, "report's figures", ret) :
				       ret;
	}
	return 0;
}

/*
 * xchg_bw_reports(): size, iterations, peak, average, message rate.  The
 * client's report is its run's; perftest's server sends a report it never
 * filled (its stack's bytes, in a one-way test), which the client takes
 * by length only, as perftest's client does.
 */
static int pt_reports(struct pt_session *s, const struct pt_report *mine,
		      struct pt_report *theirs)
{
	u8 m[PT_U64_LEN], t[PT_U64_LEN];
	const u64 mv[2] = { mine->size, mine->iters };
	double md[3] = { mine->bw_peak, mine->bw_avg, mine->msg_rate };
	unsigned int i;
	int ret;

	if (s->server)
		return pt_reports_check(s, mine, theirs);
	for (i = 0; i < 5; i++) {
		if (i < 2)
			pt_u64_encode(mv[i], m);
		else
			pt_double_encode(md[i - 2], m);
		ret = pt_xchg(s, m, t, PT_U64_LEN, PT_WAIT_S, "report");
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- the measured connection ------------------------------------------- */

static void pt_conn_param(const struct pt_session *s,
			  struct rdma_conn_param *cp)
{
	const struct ib_device *dev = s->data.dev;
	/* as perftest: READs in flight are asked for by READ tests only */
	bool rd = s->op == CS_READ;

	*cp = (struct rdma_conn_param){
		.responder_resources =
			rd ? cs_rd_atom(dev->attrs.max_qp_rd_atom) : 0,
		.initiator_depth =
			rd ? cs_rd_atom(dev->attrs.max_qp_init_rd_atom) : 0,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
}

/* The buffer the peer WRITEs to or READs from: perftest's BUFF_SIZE. */
static u64 pt_area(const struct pt_session *s)
{
	return max_t(u64, s->o->size_max, s->cycle_buffer);
}

static void pt_credit_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct pt_session *s =
		container_of(wc->wr_cqe, struct pt_session, credit_cqe);

	(void)cq;
	s->credit_busy--;
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		s->data.flushed = true;
	else if (wc->status != IB_WC_SUCCESS && !s->data.err)
		cs_fail(&s->data, "the credit WRITE", -EIO);
}

/*
 * The measured QP and its buffers.  A SEND test takes every receive as
 * data and keeps perftest's receive depth posted; ib_send_bw's credit
 * words are this end's too.
 */
static int pt_data_setup(struct pt_session *s)
{
	struct cs_conn *c = &s->data;
	int ret;

	if (s->op == CS_SEND) {
		c->raw_recv = true;
		c->min_window = s->rx_depth;
	}
	ret = cs_setup(c, pt_area(s));
	if (ret || s->op != CS_SEND)
		return ret;
	s->credit_cqe.done = pt_credit_done;
	ret = cs_declare(c, s->credit_src, sizeof(s->credit_src));
	return ret ? cs_fail(c, "rdmarw_ibv_declare", ret) : 0;
}

/* One try at the measured connection; -ECONNREFUSED and kin: try again. */
static int pt_data_connect_once(struct pt_session *s,
				const struct sockaddr *dst)
{
	struct cs_conn *c = &s->data;
	struct rdma_conn_param cp;
	int ret;

	ret = cs_resolve(c, pt_cm_event, NULL, dst);
	if (!ret)
		ret = pt_data_setup(s);
	if (ret)
		return ret;
	pt_conn_param(s, &cp);
	ret = rdma_connect(c->id, &cp);
	if (ret)
		return cs_fail(c, "rdma_connect", ret);
	return pt_cm_wait_quiet(c, &c->up, 30);
}

/* perftest's server listens once it has answered: try until it does. */
static int pt_data_connect(struct pt_session *s, const struct sockaddr *dst)
{
	int ret, i;

	for (i = 0;; i++) {
		if (i) { /* a fresh id, QP and buffers for each try */
			cs_close(&s->data);
			usleep(PT_RETRY_US);
			cs_init(&s->data, s->o, false, stdout);
		}
		ret = pt_data_connect_once(s, dst);
		if (!ret)
			return 0;
		if (s->data.err || i + 1 == PT_CONNECT_TRIES)
			break;
	}
	return cs_fail(&s->data, "the measured connection", ret);
}

static int pt_data_accept(struct pt_session *s)
{
	struct cs_conn *c = &s->data;
	struct rdma_conn_param cp;
	int ret;

	ret = cs_wait(c, (const bool *)&c->have_peer, PT_WAIT_S,
		      "perftest's measured connection");
	if (ret)
		return ret;
	pthread_mutex_lock(&c->cm_lock);
	c->id = c->req;
	c->req = NULL;
	pthread_mutex_unlock(&c->cm_lock);
	ret = pt_data_setup(s);
	if (ret)
		return ret;
	pt_conn_param(s, &cp);
	ret = rdma_accept(c->id, &cp);
	if (ret)
		return cs_fail(c, "rdma_accept", ret);
	return cs_wait(c, &c->up, 30, "connection");
}

/* ---- the two ends ------------------------------------------------------ */

static int pt_comm_connect(struct pt_session *s, const struct sockaddr *dst)
{
	struct cs_conn *c = &s->comm;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	int ret;

	ret = cs_resolve(c, pt_cm_event, NULL, dst);
	if (!ret)
		ret = pt_comm_setup(s);
	if (ret)
		return ret;
	ret = rdma_connect(c->id, &cp);
	if (ret)
		return cs_fail(c, "rdma_connect", ret);
	return cs_wait(c, &c->up, 30, "connection");
}

static int pt_comm_accept(struct pt_session *s, const struct sockaddr *addr)
{
	struct cs_conn *c = &s->comm;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	int ret;

	ret = cs_listen(c, pt_cm_event, addr, 2);
	if (ret)
		return ret;
	if (perf_out_table()) {
		printf("# rdmarw-perf --perftest: server: waiting for "
		       "perftest's client (ib_%s_%s -R) on port %u\n",
		       s->op == CS_READ ? "read" :
		       s->op == CS_SEND ? "send" :
					  "write",
		       s->o->lat ? "lat" : "bw", s->o->port);
		fflush(stdout);
	}
	ret = cs_wait(c, (const bool *)&c->have_peer, 0, "listen");
	if (ret)
		return ret;
	pthread_mutex_lock(&c->cm_lock);
	c->id = c->req;
	c->req = NULL;
	pthread_mutex_unlock(&c->cm_lock);
	ret = pt_comm_setup(s);
	if (ret)
		return ret;
	ret = rdma_accept(c->id, &cp);
	if (ret)
		return cs_fail(c, "rdma_accept", ret);
	return cs_wait(c, &c->up, 30, "connection");
}

/*
 * Everything up to the test: the system data, the measured connection
 * between two exchanges of empty addresses, then the addresses, three
 * times (set_up_connection(), the printing pass, after RTR).
 */
static int pt_prologue(struct pt_session *s, const struct sockaddr *dst)
{
	int ret = pt_sys_data(s);

	if (!ret)
		ret = pt_dests(s, false, PT_WAIT_S, "handshake");
	if (!ret)
		ret = s->server ? pt_data_accept(s) : pt_data_connect(s, dst);
	if (!ret)
		ret = pt_dests(s, false, PT_WAIT_S, "handshake");
	/*
	 * ib_write_lat and ib_read_lat exchange the addresses once more,
	 * before the first pass (ib_send_lat does not)
	 */
	if (!ret && s->o->lat && s->op != CS_SEND)
		ret = pt_dests(s, true, PT_WAIT_S, "QP address");
	if (!ret)
		ret = pt_dests(s, true, PT_WAIT_S, "QP address");
	if (!ret)
		ret = pt_dests(s, true, PT_WAIT_S, "QP address");
	if (!ret)
		ret = pt_dests(s, true, PT_WAIT_S, "handshake");
	return ret;
}

static double pt_unit(const struct perf_opts *o)
{
	return o->gbits ? 1e9 / 8 : 1024.0 * 1024.0;
}

/* The client's run: every size, then its last figures as perftest's. */
static int pt_client_run(struct pt_session *s, const char *peer,
			 struct pt_report *rep)
{
	const struct perf_opts *o = s->o;
	struct cs_conn *c = &s->data;
	struct cs_figures fig = { 0 };
	double secs;
	u64 size;
	int ret;

	c->peer.addr = htole64(s->peer.vaddr);
	c->peer.rkey = htole32(s->peer.rkey);
	cs_bw_header(c, peer);
	for (size = o->size_min; size <= o->size_max; size *= 2) {
		ret = cs_bw_run(c, s->op, size, o->iters, o->duration,
				o->duration_set, &fig);
		if (ret)
			return ret;
		cs_bw_row(c, s->op, size, &fig, "client");
		rep->size = size;
		if (size > o->size_max / 2)
			break;
	}
	secs = (double)fig.ns * 1e-9;
	rep->iters = fig.ops;
	rep->bw_peak = (double)fig.peak_bps / pt_unit(o);
	rep->bw_avg = secs > 0 ? (double)fig.bytes / secs / pt_unit(o) : 0;
	rep->msg_rate = secs > 0 ? (double)fig.ops / secs / 1e6 : 0;
	return 0;
}

/* The server's row: the client's report, in this end's unit. */
static void pt_server_row(struct pt_session *s, const struct pt_report *r)
{
	struct cs_figures fig = { .ops = r->iters,
				  .bytes = r->iters * r->size };
	double bps = r->bw_avg * pt_unit(s->o);

	fig.ns = bps > 0 ? (u64)((double)fig.bytes / bps * 1e9) : 0;
	fig.peak_bps = (u64)(r->bw_peak * pt_unit(s->o));
	cs_bw_row(&s->data, s->op, r->size, &fig, "client");
}

static const char *pt_peer_name(struct pt_session *s, char *buf, size_t len)
{
	const struct sockaddr_storage *ss = &s->data.id->route.addr.dst_addr;
	const void *a = ss->ss_family == AF_INET6 ?
				(const void *)&((const struct sockaddr_in6 *)ss)
					->sin6_addr :
				(const void *)&((const struct sockaddr_in *)ss)
					->sin_addr;

	if (!inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * ib_write_lat's client side: the server WRITEs first, the client answers
 * each mark; a sample is half the time between two answers, as perftest
 * takes it from its posts.
 */
static int pt_lat_answer(struct cs_conn *c, u64 size, u64 n,
			 struct cs_figures *fig)
{
	double *posts = calloc(n, sizeof(*posts));
	double t0 = perf_now();
	u64 i;
	int ret;

	if (!posts)
		return cs_fail(c, "calloc", -ENOMEM);
	ret = lat_server_write(c, size, n, posts);
	if (!ret) {
		for (i = 1; i < n; i++)
			posts[i - 1] = (posts[i] - posts[i - 1]) * 1e9 / 2;
		*fig = (struct cs_figures){ .ops = n,
					    .bytes = n * size,
					    .ns = (u64)((perf_now() - t0) *
							1e9) };
		lat_stats(posts, n - 1, fig);
	}
	free(posts);
	return ret;
}

/*
 * ib_read_lat and ib_write_lat, size by size, with lat.c's loops (the
 * WRITE marks are perftest's: the last byte, 1 to 255 then 0).  READ: the
 * client's round trips, the server idle.  WRITE: perftest's server WRITEs
 * first and both ends time -n round trips.  ib_read_lat ends with one
 * handshake, ib_write_lat with none; neither exchanges a report.
 */
static int pt_lat(struct pt_session *s, const char *peer)
{
	const struct perf_opts *o = s->o;
	struct cs_conn *c = &s->data;
	struct cs_figures fig;
	u64 size;
	int ret = 0;

	c->peer.addr = htole64(s->peer.vaddr);
	c->peer.rkey = htole32(s->peer.rkey);
	if (!s->server || s->op == CS_WRITE)
		cs_lat_header(c, peer);
	for (size = o->size_min; size <= o->size_max && !ret; size *= 2) {
		if (s->op == CS_WRITE && !s->server)
			ret = pt_lat_answer(c, size, o->iters, &fig);
		else if (s->op == CS_WRITE || !s->server)
			ret = lat_client(c, s->op, size, &fig);
		if (!ret && (s->op == CS_WRITE || !s->server))
			cs_lat_row(c, s->op, size, &fig, c->role);
		if (size > o->size_max / 2)
			break;
	}
	if (!ret && s->op == CS_READ) /* ctx_close_connection() */
		ret = pt_dests(s, true, s->server ? PT_RUN_WAIT_S : PT_WAIT_S,
			       "closing handshake");
	return ret;
}

/* ---- SEND: ib_send_bw and ib_send_lat ---------------------------------- */

/*
 * Until at most @busy credit WRITEs are in flight: 0, or the QP's flush
 * (-ECONNRESET) or PT_WAIT_S without getting there (-ETIMEDOUT), said.
 */
static int pt_credits_wait(struct pt_session *s, u32 busy)
{
	struct cs_conn *c = &s->data;
	double deadline = perf_now() + PT_WAIT_S;
	unsigned int spins = 0;

	while (s->credit_busy > busy) {
		if (cs_poll(c) < 0)
			return c->err;
		if (c->flushed)
			return cs_fail(c, "the connection went down",
				       -ECONNRESET);
		if (!(spins & 255) && perf_now() > deadline)
			return cs_fail(c, "the credit WRITEs", -ETIMEDOUT);
		cs_relax(&spins);
	}
	return 0;
}

/*
 * ib_send_bw's receiver tells the sender what it received: its count of
 * the run's receives, an RDMA WRITE of 4 bytes (host order, as perftest)
 * into the sender's credit word, whose address and rkey the sender gave
 * in its QP address.
 */
static int pt_credit_write(struct pt_session *s, u32 count)
{
	struct cs_conn *c = &s->data;
	struct ib_sge sge;
	struct ib_rdma_wr wr;
	u32 slot;
	int ret;

	ret = pt_credits_wait(s, PT_CREDIT_SLOTS - 1);
	if (ret)
		return ret;
	slot = s->credit_next++ % PT_CREDIT_SLOTS;
	s->credit_src[slot] = count;
	sge = (struct ib_sge){ .addr = (u64)(uintptr_t)&s->credit_src[slot],
			       .length = sizeof(u32),
			       .lkey = c->pd->local_dma_lkey };
	wr = (struct ib_rdma_wr){ .wr = { .wr_cqe = &s->credit_cqe,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IB_WR_RDMA_WRITE,
					  .send_flags = IB_SEND_SIGNALED },
				  .remote_addr = s->peer.vaddr,
				  .rkey = s->peer.rkey };
	ret = ib_post_send(c->qp, &wr.wr, NULL);
	if (ret)
		return cs_fail(c, "ib_post_send (credit)", ret);
	s->credit_busy++;
	return 0;
}

/*
 * The receiving end of one size: -n SENDs counted (every receive posted
 * again at once, cs.c), answered with a SEND of the same size when
 * @pong (ib_send_lat), else with credit WRITEs every third of the
 * receive depth (ib_send_bw's rhythm).  Bounded: PT_WAIT_S without a
 * SEND, or the connection down, ends it.
 */
static int pt_receive(struct pt_session *s, u64 size, bool pong,
		      struct cs_figures *fig)
{
	struct cs_conn *c = &s->data;
	u32 every = max_t(u32, s->rx_depth / 3, 1);
	u64 credited = 0, seen = 0;
	double since = perf_now(), secs;
	unsigned int spins = 0;
	int ret = 0;

	c->data_count = c->data_bytes = 0;
	c->data_first = c->data_last = 0;
	c->posted = c->completed = 0;
	c->no_credit = true;
	c->pong_send = pong;
	c->pong_size = size;
	while (!ret &&
	       (c->data_count < s->o->iters || c->completed < c->posted)) {
		if (cs_poll(c) < 0) {
			ret = c->err;
			break;
		}
		if (!pong && c->data_count - credited >= every) {
			credited = c->data_count;
			ret = pt_credit_write(s, (u32)credited);
		}
		if (c->data_count != seen) {
			seen = c->data_count;
			since = perf_now();
			spins = 0;
			continue;
		}
		if (c->flushed)
			ret = cs_fail(c, "the connection went down",
				      -ECONNRESET);
		else if (!(spins & 255) && perf_now() - since > PT_WAIT_S)
			ret = cs_fail(c, "perftest's SENDs", -ETIMEDOUT);
		cs_relax(&spins);
	}
	if (!ret) /* the last credits landed */
		ret = pt_credits_wait(s, 0);
	c->pong_send = false;
	c->no_credit = false;
	if (ret)
		return ret;
	secs = c->data_last - c->data_first;
	*fig = (struct cs_figures){ .ops = c->data_count,
				    .bytes = c->data_bytes,
				    .ns = (u64)(secs * 1e9) };
	fig->peak_bps = secs > 0 ? (u64)((double)fig->bytes / secs) : 0;
	return 0;
}

/*
 * ib_send_bw and ib_send_lat: after the addresses, each size is a
 * handshake (the receiver's receives are posted), the run, and in a
 * sweep (-a) one more handshake; one handshake closes.  The sender of
 * ib_send_bw waits for the credits the receiver WRITEs (iWARP has no RNR
 * retry: a SEND without a receive ends the connection); its credit word
 * starts each size at 0, as perftest's.  Each end prints its own rows:
 * the client's sends (or round trips), the server what it received; the
 * ib_send_lat server only answers.
 */
static int pt_send_test(struct pt_session *s, const char *peer)
{
	const struct perf_opts *o = s->o;
	struct cs_conn *c = &s->data;
	bool sweep = o->size_min != o->size_max;
	u32 *credit = (u32 *)cs_dst(c);
	struct cs_figures fig;
	u64 size;
	int ret = 0;

	if (o->lat) {
		if (!s->server)
			cs_lat_header(c, peer);
	} else {
		cs_bw_header(c, peer);
		if (!s->server) {
			c->pt_credit = credit;
			c->pt_rx_depth = s->rx_depth;
			s->poll_data = true;
		}
	}
	for (size = o->size_min; size <= o->size_max && !ret; size *= 2) {
		ret = pt_dests(s, true, PT_WAIT_S, "handshake");
		if (ret)
			break;
		if (s->server) {
			ret = pt_receive(s, size, o->lat, &fig);
			if (!ret && !o->lat)
				cs_bw_row(c, CS_SEND, size, &fig, "server");
		} else if (o->lat) {
			ret = lat_client(c, CS_SEND, size, &fig);
			if (!ret)
				cs_lat_row(c, CS_SEND, size, &fig, "client");
		} else {
			__atomic_store_n(credit, 0, __ATOMIC_RELEASE);
			ret = cs_bw_run(c, CS_SEND, size, o->iters, 0, false,
					&fig);
			if (!ret)
				cs_bw_row(c, CS_SEND, size, &fig, "client");
		}
		if (!ret && sweep && !o->lat)
			ret = pt_dests(s, true, PT_WAIT_S, "handshake");
		if (size > o->size_max / 2)
			break;
	}
	c->pt_credit = NULL;
	s->poll_data = false;
	if (!ret) /* ctx_close_connection() */
		ret = pt_dests(s, true, PT_WAIT_S, "closing handshake");
	return ret;
}

static int pt_session(struct pt_session *s, const struct sockaddr *dst,
		      const struct sockaddr *addr)
{
	struct pt_report mine = { 0 }, theirs = { 0 };
	char peer[INET6_ADDRSTRLEN + 32];
	int ret;

	ret = s->server ? pt_comm_accept(s, addr) : pt_comm_connect(s, dst);
	if (!ret)
		ret = pt_prologue(s, dst);
	if (ret)
		return ret;
	pt_peer_name(s, peer, sizeof(peer));
	if (s->op == CS_SEND)
		return pt_send_test(s, strcat(peer, " (perftest)"));
	if (s->o->lat)
		return pt_lat(s, strcat(peer, " (perftest)"));
	if (s->server) {
		/* perftest's client says it is done with one more handshake */
		ret = pt_dests(s, true, PT_RUN_WAIT_S, "end of the run");
	} else {
		strcat(peer, " (perftest)");
		ret = pt_client_run(s, peer, &mine);
		if (!ret)
			ret = pt_dests(s, true, PT_WAIT_S, "end of the run");
	}
	if (!ret)
		ret = pt_reports(s, &mine, &theirs);
	if (!ret) /* ctx_close_connection() */
		ret = pt_dests(s, true, PT_WAIT_S, "closing handshake");
	if (!ret && s->server) {
		cs_bw_header(&s->data, strcat(peer, " (perftest)"));
		pt_server_row(s, &theirs);
	}
	return ret;
}

/*
 * ib_send_bw's and ib_send_lat's receive depth, as perftest works it out
 * from its options: -r (512 by default), at most -n, and even in a run of
 * one size (perftest's "WA for a bug when rx_depth is odd").
 */
static u32 pt_rx_depth(const struct perf_opts *o)
{
	u64 d = o->rx_depth ? o->rx_depth : PT_RX_DEPTH;

	if (o->iters && d > o->iters)
		d = o->iters;
	if ((d & 1) && o->size_min == o->size_max)
		d++;
	return (u32)d;
}

int perf_pt_run(const struct perf_opts *o, const struct sockaddr *dst,
		const struct sockaddr *addr)
{
	struct pt_session *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		fprintf(stderr, PERF_TOOL ": --perftest: out of memory\n");
		return -ENOMEM;
	}
	s->o = o;
	s->server = !dst;
	s->op = o->send ? CS_SEND : o->read ? CS_READ : CS_WRITE;
	s->rx_depth = pt_rx_depth(o);
	s->cycle_buffer = PT_CYCLE;
	cs_init(&s->comm, o, s->server, stdout);
	cs_init(&s->data, o, s->server, stdout);
	ret = pt_session(s, dst, addr);
	cs_close(&s->data);
	cs_close(&s->comm);
	free(s);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-perf's client and server (cs.h): the connection through
 * <rdmarw/rdma_cm.h>, the messages, the bandwidth tests of WRITE and READ
 * through the R/W API and of SEND, and the reports of both ends.  The
 * latency loops are lat.c's.
 */
#include "cs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <math.h>
#include <netdb.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdmarw/soft.h>
#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>
#endif

#include "cli.h"

#define CS_WAIT_S 30 /* each connection step, at most */
#define CS_DOWN_S 5 /* the disconnection, at most */
#define CS_RD_ATOM 128 /* READs in flight asked for, as perftest */
#define CS_WINDOW 1e-3 /* BW peak: the shortest window, seconds */
#define CS_UNTIL_DEADLINE (1ULL << 62)
/* a bandwidth loop with nothing completed and nothing sent that long */
#define CS_STALL_S 60
/* the in-process server's address (TEST-NET-1) when no HOST is given */
#define CS_SOFT_SERVER "192.0.2.2"

static const char *const cs_ops[] = { "?", "WRITE", "READ", "SEND" };

const char *cs_op_name(enum cs_op op)
{
	return op >= CS_WRITE && op <= CS_SEND ? cs_ops[op] : cs_ops[0];
}

static const char *const cs_types[] = { "?",	  "PLAN",   "READY", "DONE",
					"RESULT", "CREDIT", "BYE" };

static const char *type_name(u32 t)
{
	return t >= CS_PLAN && t <= CS_BYE ? cs_types[t] : cs_types[0];
}

/* The first failure of @c, reported once. */
int cs_fail(struct cs_conn *c, const char *what, int err)
{
	if (!c->err) {
		c->err = err ? err : -EIO;
		fprintf(stderr, PERF_TOOL ": %s: %s: %s\n", c->role, what,
			err ? strerror(-err) : "failed");
	}
	return c->err;
}

void cs_relax(unsigned int *spins)
{
	/* a peer that does not answer for a while may need this CPU */
	if (++*spins > 2000)
		sched_yield();
}

/* ---- the connection manager's events ---------------------------------- */

static bool hello_ok(const struct rdma_conn_param *cp)
{
	struct cs_hello h;

	if (!cp->private_data || cp->private_data_len < sizeof(h))
		return false;
	memcpy(&h, cp->private_data, sizeof(h));
	return le32toh(h.magic) == CS_MAGIC && le16toh(h.version) == CS_VERSION;
}

/*
 * Record an event every end treats alike (@c->cm_lock held): resolution,
 * ESTABLISHED, DISCONNECTED; anything else unexpected is the end's error.
 * perftest.c's ends share it.
 */
void cs_cm_record(struct cs_conn *c, const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		c->ev_addr = true;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		c->ev_route = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		c->up = true;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		c->down = true;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		if (!c->cm_err) {
			c->cm_err = ev->status < 0 ? ev->status : -ECONNREFUSED;
			c->cm_what = rdma_event_msg(ev->event);
		}
		break;
	}
	pthread_cond_broadcast(&c->cm_cond);
}

/* The CM thread: record the event; the end's own thread acts on it. */
static int cs_cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cs_conn *c = id->context;
	const struct rdma_conn_param *cp = &ev->param.conn;
	int ret = 0;

	pthread_mutex_lock(&c->cm_lock);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* one client, of this program: others are rejected */
		if (c->req || c->id || !hello_ok(cp)) {
			ret = 1;
		} else {
			memcpy(&c->peer, cp->private_data, sizeof(c->peer));
			c->have_peer = true;
			c->req = id;
			pthread_cond_broadcast(&c->cm_cond);
		}
	} else {
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED && !c->server &&
		    hello_ok(cp)) {
			memcpy(&c->peer, cp->private_data, sizeof(c->peer));
			c->have_peer = true;
		}
		cs_cm_record(c, ev);
	}
	pthread_mutex_unlock(&c->cm_lock);
	return ret;
}

/* Wait until *@flag, an error event, or @secs (0: no bound). */
int cs_wait(struct cs_conn *c, const bool *flag, int secs, const char *what)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&c->cm_lock);
	while (!*flag && !c->cm_err && !ret)
		ret = secs ? pthread_cond_timedwait(&c->cm_cond, &c->cm_lock,
						    &ts) :
			     pthread_cond_wait(&c->cm_cond, &c->cm_lock);
	if (!*flag && c->cm_err) {
		fprintf(stderr, PERF_TOOL ": %s: %s: %s (%s)\n", c->role, what,
			c->cm_what, strerror(-c->cm_err));
		ret = c->cm_err;
	} else if (!*flag) {
		fprintf(stderr, PERF_TOOL ": %s: %s: no answer in %d s\n",
			c->role, what, secs);
		ret = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&c->cm_lock);
	if (ret && !c->err)
		c->err = ret;
	return ret;
}

static bool cs_peer_down(struct cs_conn *c)
{
	bool down;

	pthread_mutex_lock(&c->cm_lock);
	down = c->down;
	pthread_mutex_unlock(&c->cm_lock);
	return down;
}

/* ---- completions ------------------------------------------------------ */

static void cs_wc_failed(struct cs_conn *c, const struct ib_wc *wc,
			 const char *what)
{
	char s[96];

	/* the QP went to ERR: the disconnection, or a failure reported */
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		c->flushed = true;
	if (c->closing || c->err || c->flushed)
		return;
	snprintf(s, sizeof(s), "%s completion %s", what,
		 cli_wc_status_name(wc->status));
	cs_fail(c, s, -EIO);
}

static int cs_repost(struct cs_conn *c, struct cs_recv *r)
{
	int ret = ib_post_recv(c->qp, &r->wr, NULL);

	return ret ? cs_fail(c, "ib_post_recv", ret) : 0;
}

/* A control message in a free send slot; never waits. */
static int cs_send_msg(struct cs_conn *c, const struct cs_msg *m)
{
	struct ib_sge sge;
	struct ib_send_wr wr = { 0 };
	struct cs_tx *tx = NULL;
	u32 i;
	int ret;

	for (i = 0; i < CS_TX_SLOTS && !tx; i++) {
		tx = &c->tx[(c->tx_next + i) % CS_TX_SLOTS];
		if (tx->busy)
			tx = NULL;
	}
	if (!tx)
		return cs_fail(c, "control messages", -ENOBUFS);
	c->tx_next = (u32)(tx - c->tx + 1) % CS_TX_SLOTS;
	tx->msg = *m;
	tx->msg.magic = htole32(CS_MAGIC);
	sge = (struct ib_sge){ .addr = (u64)(uintptr_t)&tx->msg,
			       .length = sizeof(tx->msg),
			       .lkey = c->pd->local_dma_lkey };
	wr.wr_cqe = &tx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	tx->busy = true;
	ret = ib_post_send(c->qp, &wr, NULL);
	if (ret) {
		tx->busy = false;
		return cs_fail(c, "ib_post_send (control)", ret);
	}
	return 0;
}

static void cs_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cs_tx *tx = container_of(wc->wr_cqe, struct cs_tx, cqe);

	(void)cq;
	tx->busy = false;
	if (wc->status != IB_WC_SUCCESS)
		cs_wc_failed(tx->c, wc, "control SEND");
}

/* Give the peer back the receives posted again, in batches. */
static void cs_return_credits(struct cs_conn *c, bool all)
{
	struct cs_msg m = { .type = htole32(CS_CREDIT) };

	if (!c->unreturned || (!all && c->unreturned < c->credit_batch))
		return;
	m.credits = htole32(c->unreturned);
	c->unreturned = 0;
	cs_send_msg(c, &m);
}

static void cs_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cs_recv *r = container_of(wc->wr_cqe, struct cs_recv, cqe);
	struct cs_conn *c = r->c;
	const struct cs_msg *m = (const struct cs_msg *)r->slot;
	struct cs_io *io;
	double t;

	(void)cq;
	if (wc->status != IB_WC_SUCCESS) {
		cs_wc_failed(c, wc, "receive");
		return;
	}
	if (!c->raw_recv && wc->byte_len >= sizeof(u32) &&
	    le32toh(m->magic) == CS_MAGIC) {
		if (le32toh(m->type) == CS_CREDIT) {
			c->credits += le32toh(m->credits);
		} else if (c->have_msg) {
			cs_fail(c, "two control messages at once", -EPROTO);
		} else {
			memset(&c->inbox, 0, sizeof(c->inbox));
			memcpy(&c->inbox, m,
			       min_t(size_t, wc->byte_len, sizeof(c->inbox)));
			c->have_msg = true;
		}
		cs_repost(c, r);
		return;
	}
	t = perf_now();
	if (!c->data_count)
		c->data_first = t;
	c->data_last = t;
	c->data_count++;
	c->data_bytes += wc->byte_len;
	if (cs_repost(c, r))
		return;
	if (!c->no_credit) {
		c->unreturned++;
		cs_return_credits(c, false);
	}
	if (c->pong_send) { /* latency: answer at once */
		io = cs_get_io(c);
		if (!io)
			cs_fail(c, "SEND latency: no free transfer", -ENOBUFS);
		else
			cs_post_send(c, io, c->pong_size);
	}
}

static void cs_io_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cs_io *io = container_of(wc->wr_cqe, struct cs_io, cqe);
	struct cs_conn *c = io->c;

	(void)cq;
	if (io->rw)
		rdma_rw_ctx_destroy(&io->ctx, c->qp, 1, &io->sg, 1, io->dir);
	io->next_free = c->free_io;
	c->free_io = io;
	c->completed++;
	if (wc->status != IB_WC_SUCCESS) {
		cs_wc_failed(c, wc, io->rw ? "RDMA" : "SEND");
		return;
	}
}

int cs_poll(struct cs_conn *c)
{
	int n = ib_process_cq_direct(c->cq, 64);

	if (n < 0)
		return cs_fail(c, "ib_process_cq_direct", n);
	return c->err ? c->err : n;
}

struct cs_io *cs_get_io(struct cs_conn *c)
{
	struct cs_io *io = c->free_io;

	if (io)
		c->free_io = io->next_free;
	return io;
}

/* A WRITE (DMA_TO_DEVICE) of src or a READ into dst, through the R/W API. */
int cs_post_rw(struct cs_conn *c, struct cs_io *io, enum dma_data_direction dir,
	       u64 size)
{
	char *local = dir == DMA_TO_DEVICE ? cs_src(c) : cs_dst(c);
	int ret;

	sg_init_one(&io->sg, local, (unsigned int)size);
	io->dir = dir;
	io->rw = true;
	ret = rdma_rw_ctx_init(&io->ctx, c->qp, 1, &io->sg, 1, 0, cs_raddr(c),
			       le32toh(c->peer.rkey), dir);
	if (ret < 0)
		goto fail;
	ret = rdma_rw_ctx_post(&io->ctx, c->qp, 1, &io->cqe, NULL);
	if (ret) {
		rdma_rw_ctx_destroy(&io->ctx, c->qp, 1, &io->sg, 1, dir);
		goto fail;
	}
	c->posted++;
	return 0;
fail:
	io->next_free = c->free_io;
	c->free_io = io;
	if (ret == -EAGAIN) /* the MR pool is empty: try again later */
		return ret;
	return cs_fail(c, "rdma_rw_ctx_init/post", ret);
}

int cs_post_send(struct cs_conn *c, struct cs_io *io, u64 size)
{
	int ret;

	io->rw = false;
	io->sge = (struct ib_sge){ .addr = (u64)(uintptr_t)cs_src(c),
				   .length = (u32)size,
				   .lkey = c->pd->local_dma_lkey };
	io->wr = (struct ib_send_wr){ .wr_cqe = &io->cqe,
				      .sg_list = &io->sge,
				      .num_sge = 1,
				      .opcode = IB_WR_SEND,
				      .send_flags = IB_SEND_SIGNALED };
	ret = ib_post_send(c->qp, &io->wr, NULL);
	if (ret) {
		io->next_free = c->free_io;
		c->free_io = io;
		return cs_fail(c, "ib_post_send", ret);
	}
	c->posted++;
	return 0;
}

/* ---- set-up and teardown ---------------------------------------------- */

/* MRs one I/O of @bytes may register (1 when it registers none). */
static u32 cs_mr_factor(struct ib_device *dev, u64 bytes)
{
	u64 pages = bytes / PAGE_SIZE + 2;
	unsigned int f;

	if (!rdma_rw_get_force_mr() && !rdma_protocol_iwarp(dev, 1) &&
	    !dev->attrs.max_sgl_rd)
		return 1;
	f = rdma_rw_mr_factor(dev, 1,
			      (unsigned int)min_t(u64, pages, UINT32_MAX));
	return f ? f : 1;
}

static void *cs_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Register @len bytes at @p for the local DMA key on an ibv device, up
 * front (rdmarw_ibv_declare()); nothing to do on the software device.
 */
int cs_declare(struct cs_conn *c, void *p, size_t len)
{
#ifdef RDMARW_HAVE_IBV
	if (!perf_cs_soft(c->o))
		return rdmarw_ibv_declare(c->pd, p, len);
#endif
	(void)c;
	(void)p;
	(void)len;
	return 0;
}

/*
 * The PD, CQ, QP (on @c->id), buffers, MR and receives, for areas of
 * @area bytes (the client's largest size).
 */
int cs_setup(struct cs_conn *c, u64 area)
{
	const struct perf_opts *o = c->o;
	struct ib_device *dev = c->dev = c->id->device;
	struct ib_qp_init_attr attr;
	u32 factor, i, max_wr = (u32)dev->attrs.max_qp_wr;
	int ret, cqe;

	snprintf(c->devname, sizeof(c->devname), "%s", dev->name);
	if (dev->attrs.max_recv_sge < 2)
		return cs_fail(c, "the device takes 1 receive SGE, 2 needed",
			       -EOPNOTSUPP);
	c->area = (size_t)((max_t(u64, area, CS_SLOT) + PAGE_SIZE - 1) &
			   ~(u64)(PAGE_SIZE - 1));
	c->buf_len = 2 * c->area;
	c->buf = cs_map(c->buf_len);
	c->rx_rest = cs_map(c->area);
	if (!c->buf || !c->rx_rest)
		return cs_fail(c, "mmap", -ENOMEM);
	memset(cs_src(c), 0x5a, c->area);
	c->depth = o->ctxs;
	c->window = max_t(u32, 2 * c->depth, 16);
	if (c->window + CS_RESERVE > max_wr / 2)
		c->window = max_t(u32, max_wr / 2, 2 * CS_RESERVE) - CS_RESERVE;
	if (c->min_window > c->window) {
		if (c->min_window + CS_RESERVE > max_wr)
			return cs_fail(c,
				       "the receive depth asked for is "
				       "above the device's queue",
				       -EINVAL);
		c->window = c->min_window;
	}
	c->nrecv = c->window + CS_RESERVE;
	c->credit_batch = max_t(u32, c->window / 4, 1);
	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd)) {
		ret = (int)PTR_ERR(c->pd);
		c->pd = NULL;
		return cs_fail(c, "ib_alloc_pd", ret);
	}
	rdma_rw_set_force_mr(o->force_mr);
	factor = cs_mr_factor(dev, c->area);
	cqe = (int)min_t(u64,
			 4ULL * c->depth * factor + c->nrecv + CS_TX_SLOTS + 64,
			 (u64)dev->attrs.max_cqe);
	c->cq = ib_alloc_cq(dev, NULL, cqe, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq)) {
		ret = (int)PTR_ERR(c->cq);
		c->cq = NULL;
		return cs_fail(c, "ib_alloc_cq", ret);
	}
	attr = (struct ib_qp_init_attr){
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = { .max_send_wr = c->depth + CS_TX_SLOTS + 8,
			 .max_recv_wr = c->nrecv,
			 .max_send_sge = 1,
			 .max_recv_sge = 2,
			 .max_rdma_ctxs = c->depth * factor },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	ret = rdma_create_qp(c->id, c->pd, &attr);
	if (ret)
		return cs_fail(c, "rdma_create_qp", ret);
	c->qp = c->id->qp;
	c->mr = ib_reg_user_mr(c->pd, (u64)(uintptr_t)c->buf, c->buf_len,
			       (u64)(uintptr_t)c->buf,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(c->mr)) {
		ret = (int)PTR_ERR(c->mr);
		c->mr = NULL;
		return cs_fail(c, "ib_reg_user_mr", ret);
	}
	c->recvs = calloc(c->nrecv, sizeof(*c->recvs));
	c->slots = cs_map((size_t)c->nrecv * CS_SLOT);
	c->ios = calloc(c->depth, sizeof(*c->ios));
	if (!c->recvs || !c->slots || !c->ios)
		return cs_fail(c, "calloc", -ENOMEM);
	ret = cs_declare(c, c->buf, c->buf_len);
	if (!ret)
		ret = cs_declare(c, c->rx_rest, c->area);
	if (!ret)
		ret = cs_declare(c, c->slots, (size_t)c->nrecv * CS_SLOT);
	if (!ret)
		ret = cs_declare(c, c->tx, sizeof(c->tx));
	if (ret)
		return cs_fail(c, "rdmarw_ibv_declare", ret);
	for (i = 0; i < c->depth; i++) {
		c->ios[i].c = c;
		c->ios[i].cqe.done = cs_io_done;
		c->ios[i].next_free = c->free_io;
		c->free_io = &c->ios[i];
	}
	for (i = 0; i < CS_TX_SLOTS; i++) {
		c->tx[i].c = c;
		c->tx[i].cqe.done = cs_tx_done;
	}
	for (i = 0; i < c->nrecv; i++) {
		struct cs_recv *r = &c->recvs[i];

		r->c = c;
		r->slot = c->slots + (size_t)i * CS_SLOT;
		r->cqe.done = cs_recv_done;
		r->sge[0] = (struct ib_sge){ .addr = (u64)(uintptr_t)r->slot,
					     .length = CS_SLOT,
					     .lkey = c->pd->local_dma_lkey };
		r->sge[1] = (struct ib_sge){ .addr = (u64)(uintptr_t)c->rx_rest,
					     .length = (u32)c->area - CS_SLOT,
					     .lkey = c->pd->local_dma_lkey };
		r->wr = (struct ib_recv_wr){ .wr_cqe = &r->cqe,
					     .sg_list = r->sge,
					     .num_sge = c->area > CS_SLOT ? 2 :
									    1 };
		if (cs_repost(c, r))
			return c->err;
	}
	return 0;
}

static void cs_hello(const struct cs_conn *c, struct cs_hello *h)
{
	*h = (struct cs_hello){ .magic = htole32(CS_MAGIC),
				.version = htole16(CS_VERSION),
				.addr = htole64((u64)(uintptr_t)cs_dst(c)),
				.rkey = htole32(c->mr->rkey),
				.window = htole32(c->window),
				.area = htole64(c->area) };
}

u8 cs_rd_atom(int dev_limit)
{
	int v = dev_limit < CS_RD_ATOM ? dev_limit : CS_RD_ATOM;

	return (u8)(v > 0 ? v : 0);
}

static void conn_param(const struct cs_conn *c, struct rdma_conn_param *cp,
		       const struct cs_hello *h)
{
	*cp = (struct rdma_conn_param){
		.private_data = h,
		.private_data_len = sizeof(*h),
		.responder_resources = cs_rd_atom(c->dev->attrs.max_qp_rd_atom),
		.initiator_depth =
			cs_rd_atom(c->dev->attrs.max_qp_init_rd_atom),
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
}

void cs_init(struct cs_conn *c, const struct perf_opts *o, bool server,
	     FILE *tab)
{
	memset(c, 0, sizeof(*c));
	c->opts = *o;
	c->o = &c->opts;
	c->server = server;
	c->role = server ? "server" : "client";
	c->tab = tab;
	pthread_mutex_init(&c->cm_lock, NULL);
	pthread_cond_init(&c->cm_cond, NULL);
}

/* Disconnect, flush, and free everything of @c. */
void cs_close(struct cs_conn *c)
{
	bool up;

	c->closing = true;
	pthread_mutex_lock(&c->cm_lock);
	up = c->up && !c->down;
	pthread_mutex_unlock(&c->cm_lock);
	if (c->id && up) {
		rdma_disconnect(c->id);
		pthread_mutex_lock(&c->cm_lock);
		c->cm_err = 0;
		pthread_mutex_unlock(&c->cm_lock);
		cs_wait(c, &c->down, CS_DOWN_S, "disconnect");
	}
	if (c->qp)
		ib_drain_qp(c->qp); /* every completion delivered */
	if (c->id) {
		if (c->id->qp)
			rdma_destroy_qp(c->id);
		rdma_destroy_id(c->id);
	} else if (c->req) {
		rdma_destroy_id(c->req);
	}
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	if (c->buf)
		munmap(c->buf, c->buf_len);
	if (c->rx_rest)
		munmap(c->rx_rest, c->area);
	if (c->slots)
		munmap(c->slots, (size_t)c->nrecv * CS_SLOT);
	free(c->recvs);
	free(c->ios);
	pthread_mutex_destroy(&c->cm_lock);
	pthread_cond_destroy(&c->cm_cond);
}

int cs_resolve(struct cs_conn *c, rdma_cm_event_handler handler,
	       const struct sockaddr *src, const struct sockaddr *dst)
{
	int ret;

	c->id = rdma_create_id(&init_net, handler, c, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(c->id)) {
		ret = (int)PTR_ERR(c->id);
		c->id = NULL;
		return cs_fail(c, "rdma_create_id", ret);
	}
	ret = rdma_resolve_addr(c->id, (struct sockaddr *)src,
				(struct sockaddr *)dst, 5000);
	if (ret)
		return cs_fail(c, "rdma_resolve_addr", ret);
	ret = cs_wait(c, &c->ev_addr, CS_WAIT_S, "address resolution");
	if (ret)
		return ret;
	ret = rdma_resolve_route(c->id, 5000);
	if (ret)
		return cs_fail(c, "rdma_resolve_route", ret);
	return cs_wait(c, &c->ev_route, CS_WAIT_S, "route resolution");
}

int cs_listen(struct cs_conn *c, rdma_cm_event_handler handler,
	      const struct sockaddr *addr, int backlog)
{
	int ret;

	c->listen_id =
		rdma_create_id(&init_net, handler, c, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(c->listen_id)) {
		ret = (int)PTR_ERR(c->listen_id);
		c->listen_id = NULL;
		return cs_fail(c, "rdma_create_id", ret);
	}
	ret = rdma_bind_addr(c->listen_id, (struct sockaddr *)addr);
	if (ret)
		return cs_fail(c, "rdma_bind_addr", ret);
	ret = rdma_listen(c->listen_id, backlog);
	if (ret)
		return cs_fail(c, "rdma_listen", ret);
	return 0;
}

/* Resolve, set up and connect to @dst (from @src, or any address). */
static int cs_connect(struct cs_conn *c, const struct sockaddr *src,
		      const struct sockaddr *dst)
{
	struct rdma_conn_param cp;
	struct cs_hello h;
	int ret;

	ret = cs_resolve(c, cs_cm_event, src, dst);
	if (!ret)
		ret = cs_setup(c, c->o->size_max);
	if (ret)
		return ret;
	cs_hello(c, &h);
	conn_param(c, &cp, &h);
	ret = rdma_connect(c->id, &cp);
	if (ret)
		return cs_fail(c, "rdma_connect", ret);
	ret = cs_wait(c, &c->up, CS_WAIT_S, "connection");
	if (!ret && !c->have_peer)
		ret = cs_fail(c, "the server's answer is not rdmarw-perf's",
			      -EPROTO);
	if (!ret && le64toh(c->peer.area) < c->o->size_max)
		ret = cs_fail(c, "the server's buffer is too small", -EPROTO);
	c->credits = le32toh(c->peer.window);
	return ret;
}

/* Listen on @addr, take one client and accept it. */
static int cs_accept(struct cs_conn *c, const struct sockaddr *addr,
		     volatile bool *listening)
{
	struct rdma_conn_param cp;
	struct cs_hello h;
	int ret;

	ret = cs_listen(c, cs_cm_event, addr, 1);
	if (ret)
		return ret;
	if (listening)
		__atomic_store_n(listening, true, __ATOMIC_RELEASE);
	if (c->tab && perf_out_table())
		fprintf(c->tab,
			"# rdmarw-perf: server: waiting for a client on port "
			"%u\n",
			c->o->port);
	fflush(c->tab);
	ret = cs_wait(c, (const bool *)&c->have_peer, 0, "listen");
	if (ret)
		return ret;
	pthread_mutex_lock(&c->cm_lock);
	c->id = c->req;
	c->req = NULL;
	pthread_mutex_unlock(&c->cm_lock);
	ret = cs_setup(c, le64toh(c->peer.area));
	if (ret)
		return ret;
	cs_hello(c, &h);
	conn_param(c, &cp, &h);
	ret = rdma_accept(c->id, &cp);
	if (ret)
		return cs_fail(c, "rdma_accept", ret);
	ret = cs_wait(c, &c->up, CS_WAIT_S, "connection");
	c->credits = le32toh(c->peer.window);
	return ret;
}

/* ---- messages --------------------------------------------------------- */

/* Wait for a control message (of @want, 0: any) while serving the CQ. */
static int cs_recv_msg(struct cs_conn *c, u32 want, struct cs_msg *m)
{
	unsigned int spins = 0;
	u32 type;

	while (!c->have_msg && !c->err) {
		if (cs_poll(c) < 0)
			break;
		if (c->have_msg)
			break;
		if (c->flushed || (!(spins & 1023) && cs_peer_down(c)))
			return cs_fail(c, "the peer disconnected", -ECONNRESET);
		cs_relax(&spins);
	}
	if (c->err)
		return c->err;
	*m = c->inbox;
	c->have_msg = false;
	type = le32toh(m->type);
	if (want && type != want) {
		char s[64];

		snprintf(s, sizeof(s), "%s where %s was expected",
			 type_name(type), type_name(want));
		return cs_fail(c, s, -EPROTO);
	}
	return 0;
}

static void fig_to_wire(struct cs_figures *w, const struct cs_figures *f)
{
	unsigned int i;

	w->ops = htole64(f->ops);
	w->bytes = htole64(f->bytes);
	w->ns = htole64(f->ns);
	w->peak_bps = htole64(f->peak_bps);
	for (i = 0; i < 7; i++)
		w->lat[i] = htole64(f->lat[i]);
}

static void fig_from_wire(struct cs_figures *f, const struct cs_figures *w)
{
	unsigned int i;

	f->ops = le64toh(w->ops);
	f->bytes = le64toh(w->bytes);
	f->ns = le64toh(w->ns);
	f->peak_bps = le64toh(w->peak_bps);
	for (i = 0; i < 7; i++)
		f->lat[i] = le64toh(w->lat[i]);
}

static int cs_send_figures(struct cs_conn *c, u32 type,
			   const struct cs_figures *f)
{
	struct cs_msg m = { .type = htole32(type) };

	fig_to_wire(&m.fig, f);
	return cs_send_msg(c, &m);
}

/* ---- bandwidth -------------------------------------------------------- */

/*
 * WRITE, READ or SEND of @size bytes, -t in flight, for -n transfers or
 * until -D (a limit on -n when both are given), as the local run's rounds
 * but in one: the figures into @fig.
 */
/*
 * May one more SEND go?  With CS_CREDIT messages, while credits are left;
 * against perftest, while the SENDs posted less the receives its end
 * counted (the word it RDMA WRITEs, host order as perftest's) stay under
 * its receive depth: perftest's own sender's test.
 */
static bool cs_may_send(const struct cs_conn *c)
{
	u32 sent = (u32)c->posted, out;

	if (!c->pt_credit)
		return c->credits;
	out = sent - __atomic_load_n(c->pt_credit, __ATOMIC_ACQUIRE);
	/*
	 * A count above what this run sent is an earlier size's credit that
	 * landed late (it precedes this run's credits on the stream): none
	 * counted yet.
	 */
	if ((s32)out < 0)
		out = sent;
	return out + 1 < c->pt_rx_depth;
}

int cs_bw_run(struct cs_conn *c, enum cs_op op, u64 size, u64 iters,
	      double duration, bool limit, struct cs_figures *fig)
{
	enum dma_data_direction dir =
		op == CS_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	u64 target = iters ? iters : CS_UNTIL_DEADLINE, win_done = 0, done;
	u32 mask = size >= 65536 ? 0 : 63, spins = 0;
	unsigned int idle = 0;
	double t0, t, win_start, deadline, peak = 0, secs, progress = 0;
	struct cs_io *io;
	int ret = 0;

	c->posted = c->completed = 0;
	t0 = win_start = perf_now();
	deadline = !iters || limit ? t0 + duration : INFINITY;
	while (!c->err) {
		while (c->posted < target &&
		       (op != CS_SEND || cs_may_send(c)) &&
		       (io = cs_get_io(c))) {
			if (op == CS_SEND) {
				if (!c->pt_credit)
					c->credits--;
				ret = cs_post_send(c, io, size);
			} else {
				ret = cs_post_rw(c, io, dir, size);
			}
			if (ret == -EAGAIN)
				break;
			if (ret)
				return ret;
		}
		if (c->completed == c->posted && c->posted >= target)
			break;
		done = c->completed;
		ret = cs_poll(c);
		if (ret < 0)
			return ret;
		if (ret || c->completed != done) {
			idle = 0;
			progress = 0;
		} else { /* waiting for credits, or the device's thread */
			cs_relax(&idle);
		}
		win_done += c->completed - done;
		if (++spins & mask)
			continue;
		t = perf_now();
		if (c->flushed)
			return cs_fail(c, "the connection went down",
				       -ECONNRESET);
		if (!progress)
			progress = t;
		else if (t - progress > CS_STALL_S)
			return cs_fail(c, "no completion and no credit",
				       -ETIMEDOUT);
		if (t > deadline)
			target = c->posted; /* nothing more is started */
		if (t - win_start >= CS_WINDOW) {
			peak = max_t(double, peak,
				     (double)win_done *(double)size /
					     (t - win_start));
			win_start = t;
			win_done = 0;
		}
	}
	if (c->err)
		return c->err;
	secs = perf_now() - t0;
	*fig = (struct cs_figures){ .ops = c->completed,
				    .bytes = c->completed * size,
				    .ns = (u64)(secs * 1e9) };
	peak = max_t(double, peak, (double)fig->bytes / secs);
	fig->peak_bps = (u64)peak;
	return 0;
}

/* A SEND test's receive side: what arrived, first to last. */
static void recv_figures(const struct cs_conn *c, struct cs_figures *fig)
{
	double secs = c->data_last - c->data_first;

	*fig = (struct cs_figures){ .ops = c->data_count,
				    .bytes = c->data_bytes,
				    .ns = (u64)(secs * 1e9) };
	fig->peak_bps = secs > 0 ? (u64)((double)c->data_bytes / secs) : 0;
}

/* ---- the report ------------------------------------------------------- */

static double unit_of(const struct perf_opts *o)
{
	return o->gbits ? 1e9 / 8 : 1024.0 * 1024.0;
}

void cs_bw_header(const struct cs_conn *c, const char *peer)
{
	const struct perf_opts *o = c->o;
	const char *u = o->gbits ? "[Gb/s]" : "[MiB/s]";

	if (!perf_out_table())
		return;
	fprintf(c->tab,
		"# rdmarw-perf: %s on %s, %s %s; %u in flight, receive window "
		"%u; WRITE and READ through the R/W API\n",
		c->role, c->devname, c->server ? "client" : "server", peer,
		c->depth, c->window);
	fprintf(c->tab,
		"# BW in %s; BW peak = the best window of at least 1 ms; by "
		"= the end that measured (a SEND's receiver, the R/W API's "
		"initiator)\n",
		o->gbits ? "Gb/s (10^9 bits/s)" : "MiB/s (2^20 bytes/s)");
	fprintf(c->tab, "%-6s %10s %12s %12s %12s %9s %-6s\n", "op", "#bytes",
		"#iterations", "BW peak", "BW average", "MsgRate", "by");
	fprintf(c->tab, "%-6s %10s %12s %12s %12s %9s %-6s\n", "", "", "", u, u,
		"[Mpps]", "");
	fflush(c->tab);
}

void cs_lat_header(const struct cs_conn *c, const char *peer)
{
	if (!perf_out_table())
		return;
	fprintf(c->tab,
		"# rdmarw-perf: %s on %s, %s %s; latency in usec: WRITE and "
		"SEND half the round trip, READ the whole (as ib_*_lat); the "
		"two worst samples dropped\n",
		c->role, c->devname, c->server ? "client" : "server", peer);
	fprintf(c->tab, "%-6s %10s %12s %12s %12s %12s %12s %12s %12s %12s\n",
		"op", "#bytes", "#iterations", "t_min[usec]", "t_max[usec]",
		"t_typical", "t_avg[usec]", "t_stdev", "99%[usec]",
		"99.9%[usec]");
	fflush(c->tab);
}

/* One bandwidth row: @fig as measured by @by. */
void cs_bw_row(const struct cs_conn *c, enum cs_op op, u64 size,
	       const struct cs_figures *fig, const char *by)
{
	const struct perf_opts *o = c->o;
	double secs = (double)fig->ns * 1e-9, bps, mpps;
	struct perf_rec rec;

	bps = secs > 0 ? (double)fig->bytes / secs : 0;
	mpps = secs > 0 ? (double)fig->ops / secs / 1e6 : 0;
	perf_rec_init(&rec, "bw");
	rec_str(&rec, "op", cs_op_name(op));
	rec_u64(&rec, "bytes", size);
	rec_u64(&rec, "iters", fig->ops);
	rec_fixed(&rec, "secs", secs, 6);
	rec_fixed(&rec, "bw_peak_mib", (double)fig->peak_bps / (1 << 20), 2);
	rec_fixed(&rec, "bw_avg_mib", bps / (1 << 20), 2);
	rec_fixed(&rec, "mpps", mpps, 4);
	rec_str(&rec, "measured_by", by);
	perf_rec_emit(&rec, o, c->role, c->devname);
	if (!perf_out_table())
		return;
	fprintf(c->tab, "%-6s %10llu %12llu %12.2f %12.2f %9.4f %-6s\n",
		cs_op_name(op), (unsigned long long)size,
		(unsigned long long)fig->ops,
		(double)fig->peak_bps / unit_of(o), bps / unit_of(o), mpps, by);
	fflush(c->tab);
}

void cs_lat_row(const struct cs_conn *c, enum cs_op op, u64 size,
		const struct cs_figures *fig, const char *by)
{
	static const char *const keys[7] = { "t_min",	       "t_max",
					     "t_typical",      "t_avg",
					     "t_stdev",	       "percentile_99",
					     "percentile_99.9" };
	struct perf_rec rec;
	unsigned int i;

	perf_rec_init(&rec, "lat");
	rec_str(&rec, "op", cs_op_name(op));
	rec_u64(&rec, "bytes", size);
	rec_u64(&rec, "iters", fig->ops);
	for (i = 0; i < 7; i++)
		rec_fixed(&rec, keys[i], (double)fig->lat[i] / 1e3, 3);
	rec_fixed(&rec, "t_median", (double)fig->lat[2] / 1e3, 3);
	rec_bool(&rec, "halved", op != CS_READ);
	rec_str(&rec, "measured_by", by);
	perf_rec_emit(&rec, c->o, c->role, c->devname);
	if (!perf_out_table())
		return;
	fprintf(c->tab, "%-6s %10llu %12llu", cs_op_name(op),
		(unsigned long long)size, (unsigned long long)fig->ops);
	for (i = 0; i < 7; i++)
		fprintf(c->tab, " %12.3f", (double)fig->lat[i] / 1e3);
	fputc('\n', c->tab);
	fflush(c->tab);
}

/* Both directions of -b: each end's figures, and the sum. */
static void bw_rows_bidir(const struct cs_conn *c, enum cs_op op, u64 size,
			  const struct cs_figures *mine,
			  const struct cs_figures *peer)
{
	struct cs_figures sum = *mine;
	u64 ns = max_t(u64, mine->ns, peer->ns);

	cs_bw_row(c, op, size, mine, c->role);
	cs_bw_row(c, op, size, peer, c->server ? "client" : "server");
	/* the sum: both rates over their own intervals, added */
	sum.ops = mine->ops + peer->ops;
	sum.bytes = mine->bytes + peer->bytes;
	sum.ns = ns;
	sum.peak_bps = mine->peak_bps + peer->peak_bps;
	if (mine->ns && peer->ns)
		sum.bytes = (u64)(((double)mine->bytes / (double)mine->ns +
				   (double)peer->bytes / (double)peer->ns) *
				  (double)ns);
	cs_bw_row(c, op, size, &sum, "both");
}

/* ---- the client ------------------------------------------------------- */

/* Until every control message sent has completed. */
static int cs_flush_tx(struct cs_conn *c)
{
	unsigned int spins = 0;
	u32 i;

	for (i = 0; i < CS_TX_SLOTS && !c->err; i++) {
		while (c->tx[i].busy && !c->err) {
			cs_poll(c);
			cs_relax(&spins);
		}
	}
	return c->err;
}

static void reset_data(struct cs_conn *c)
{
	c->data_count = c->data_bytes = 0;
	c->data_first = c->data_last = 0;
}

/* One test: PLAN, READY, the run, DONE, RESULT, the rows. */
static int client_test(struct cs_conn *c, enum cs_op op, u64 size)
{
	const struct perf_opts *o = c->o;
	struct cs_msg m = { .type = htole32(CS_PLAN),
			    .op = (u8)op,
			    .lat = o->lat,
			    .bidir = o->bidir,
			    .limit = o->duration_set,
			    .depth = htole32(c->depth),
			    .size = htole64(size),
			    .iters = htole64(o->iters),
			    .duration_ns = htole64((u64)(o->duration * 1e9)) };
	struct cs_figures mine = { 0 }, peer;
	int ret;

	memset(cs_dst(c), 0, size);
	reset_data(c);
	ret = cs_send_msg(c, &m);
	if (!ret)
		ret = cs_recv_msg(c, CS_READY, &m);
	if (ret)
		return ret;
	if (o->lat)
		ret = lat_client(c, op, size, &mine);
	else
		ret = cs_bw_run(c, op, size, o->iters, o->duration,
				o->duration_set, &mine);
	if (!ret)
		ret = cs_send_figures(c, CS_DONE, &mine);
	if (!ret)
		ret = cs_recv_msg(c, CS_RESULT, &m);
	if (ret)
		return ret;
	cs_return_credits(c, true);
	fig_from_wire(&peer, &m.fig);
	if (o->lat) {
		cs_lat_row(c, op, size, &mine, "client");
	} else if (o->bidir) {
		bw_rows_bidir(c, op, size, &mine, &peer);
	} else {
		cs_bw_row(c, op, size, &mine, "client");
		if (op == CS_SEND) /* and what the receiver saw */
			cs_bw_row(c, op, size, &peer, "server");
	}
	return 0;
}

static int client_run(struct cs_conn *c, const char *peer)
{
	const struct perf_opts *o = c->o;
	static const enum cs_op ops[] = { CS_WRITE, CS_READ, CS_SEND };
	struct cs_msg bye = { .type = htole32(CS_BYE) };
	u64 size;
	unsigned int k;
	int ret = 0;

	if (o->lat)
		cs_lat_header(c, peer);
	else
		cs_bw_header(c, peer);
	for (size = o->size_min; size <= o->size_max && !ret; size *= 2) {
		for (k = 0; k < 3 && !ret; k++) {
			if ((ops[k] == CS_WRITE && !o->write) ||
			    (ops[k] == CS_READ && !o->read) ||
			    (ops[k] == CS_SEND && !o->send))
				continue;
			ret = client_test(c, ops[k], size);
		}
		if (size > o->size_max / 2)
			break;
	}
	if (!ret)
		ret = cs_send_msg(c, &bye);
	if (!ret) /* delivered before the disconnection */
		ret = cs_flush_tx(c);
	return ret;
}

/* ---- the server ------------------------------------------------------- */

/* One test as the client's PLAN @p says. */
/* The peer's address, for the server's header. */
static const char *peer_name(const struct cs_conn *c)
{
	static __thread char s[INET6_ADDRSTRLEN];
	const struct sockaddr_storage *ss = &c->id->route.addr.dst_addr;

	strcpy(s, "?");
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
			  s, sizeof(s));
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6,
			  &((const struct sockaddr_in6 *)ss)->sin6_addr, s,
			  sizeof(s));
	return s;
}

static int server_test(struct cs_conn *c, const struct cs_msg *p, bool *header)
{
	struct perf_opts *o = &c->opts;
	enum cs_op op = (enum cs_op)p->op;
	u64 size = le64toh(p->size), iters = le64toh(p->iters);
	double duration = (double)le64toh(p->duration_ns) * 1e-9;
	struct cs_msg m = { .type = htole32(CS_READY) };
	struct cs_figures mine = { 0 }, peer;
	int ret;

	if (op < CS_WRITE || op > CS_SEND || !size || size > c->area)
		return cs_fail(c, "a PLAN out of range", -EPROTO);
	if (!*header) {
		/* the client's choices, for this end's table and records */
		o->lat = p->lat;
		o->bidir = p->bidir;
		if (p->lat)
			cs_lat_header(c, peer_name(c));
		else
			cs_bw_header(c, peer_name(c));
		*header = true;
	}
	memset(cs_dst(c), 0, size);
	reset_data(c);
	c->pong_send = p->lat && op == CS_SEND;
	c->pong_size = size;
	ret = cs_send_msg(c, &m);
	if (ret)
		return ret;
	if (p->lat && op == CS_WRITE)
		ret = lat_server_write(c, size, 0, NULL);
	else if (!p->lat && p->bidir)
		ret = cs_bw_run(c, op, size, iters, duration, p->limit, &mine);
	if (!ret)
		ret = cs_recv_msg(c, CS_DONE, &m);
	c->pong_send = false;
	if (ret)
		return ret;
	fig_from_wire(&peer, &m.fig);
	if (op == CS_SEND && !p->bidir && !p->lat)
		recv_figures(c, &mine);
	cs_return_credits(c, true);
	ret = cs_send_figures(c, CS_RESULT, &mine);
	if (ret)
		return ret;
	if (p->lat) {
		cs_lat_row(c, op, size, &peer, "client");
	} else if (p->bidir) {
		bw_rows_bidir(c, op, size, &mine, &peer);
	} else {
		cs_bw_row(c, op, size, &peer, "client");
		if (op == CS_SEND)
			cs_bw_row(c, op, size, &mine, "server");
	}
	return 0;
}

static int server_run(struct cs_conn *c)
{
	struct cs_msg m;
	bool header = false;
	int ret;

	for (;;) {
		ret = cs_recv_msg(c, 0, &m);
		if (ret)
			return ret;
		if (le32toh(m.type) == CS_BYE)
			return 0;
		if (le32toh(m.type) != CS_PLAN)
			return cs_fail(c, "a message out of turn", -EPROTO);
		ret = server_test(c, &m, &header);
		if (ret)
			return ret;
	}
}

/* ---- addresses and devices -------------------------------------------- */

static int sockaddr_of(const char *host, u32 port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char ps[8];
	int ret;

	snprintf(ps, sizeof(ps), "%u", port);
	ret = getaddrinfo(host, ps, &hints, &res);
	if (ret) {
		fprintf(stderr, PERF_TOOL ": HOST '%s': %s\n", host,
			gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* The address next to @a (its last byte plus or minus one). */
static void neighbour(const struct sockaddr_storage *a,
		      struct sockaddr_storage *n)
{
	unsigned char *last;

	*n = *a;
	if (n->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)n)->sin6_port = 0;
		last = &((struct sockaddr_in6 *)n)->sin6_addr.s6_addr[15];
	} else {
		((struct sockaddr_in *)n)->sin_port = 0;
		last = (unsigned char *)&((struct sockaddr_in *)n)
			       ->sin_addr.s_addr +
		       3;
	}
	*last = *last < 254 ? *last + 1 : *last - 1;
}

static int ibv_devices_open(const struct perf_opts *o)
{
#ifdef RDMARW_HAVE_IBV
	struct ib_device *dev;

	if (o->device) {
		dev = rdmarw_ibv_open(o->device);
		if (IS_ERR(dev)) {
			fprintf(stderr, PERF_TOOL ": -d/--ib-dev %s: %s\n",
				o->device, strerror((int)-PTR_ERR(dev)));
			return 1;
		}
		return 0;
	}
	if (rdmarw_ibv_open_all() > 0)
		return 0;
	fprintf(stderr,
		PERF_TOOL ": no RDMA device (rdma-core sees none); "
			  "--profile NAME HOST runs both ends on software "
			  "devices in this process\n");
	return 1;
#else
	(void)o;
	fprintf(stderr,
		PERF_TOOL ": built without the libibverbs backend: "
			  "the software device's client and server run in one "
			  "process (--profile NAME HOST)\n");
	return 1;
#endif
}

static void ibv_devices_close(void)
{
#ifdef RDMARW_HAVE_IBV
	rdmarw_ibv_close_all();
#endif
}

/* ---- the three ways to run --------------------------------------------- */

static int run_client(const struct perf_opts *o, const struct sockaddr *src,
		      const struct sockaddr *dst, const char *host)
{
	struct cs_conn c;
	char peer[300];
	int ret;

	cs_init(&c, o, false, stdout);
	snprintf(peer, sizeof(peer), "%s port %u", host, o->port);
	ret = cs_connect(&c, src, dst);
	if (!ret)
		ret = client_run(&c, peer);
	cs_close(&c);
	return ret;
}

static int run_server(const struct perf_opts *o, const struct sockaddr *addr,
		      FILE *tab, volatile bool *listening)
{
	struct cs_conn c;
	int ret;

	cs_init(&c, o, true, tab);
	ret = cs_accept(&c, addr, listening);
	if (!ret)
		ret = server_run(&c);
	cs_close(&c);
	return ret;
}

struct soft_server {
	struct perf_opts o; /* its own: the client's choices go in */
	struct sockaddr_storage addr;
	FILE *tab;
	char *text;
	size_t len;
	volatile bool listening;
	int ret;
};

static void *soft_server_main(void *arg)
{
	struct soft_server *s = arg;

	s->ret = run_server(&s->o, (struct sockaddr *)&s->addr, s->tab,
			    &s->listening);
	s->listening = true; /* also when it failed before listening */
	return NULL;
}

/*
 * The software device: a fabric, the client's device and the server's,
 * the server on a thread of its own, its table after the client's.
 */
static int run_soft(const struct perf_opts *o)
{
	struct soft_server s = { .o = *o };
	struct sockaddr_storage src;
	struct ib_device *dev[2] = { NULL, NULL };
	struct soft_fabric *fab;
	struct soft_profile prof;
	const char *host = o->host ? o->host : CS_SOFT_SERVER;
	pthread_t tid;
	int ret, i;

	if (sockaddr_of(host, o->port, &s.addr))
		return 1;
	neighbour(&s.addr, &src);
	soft_profile_get(o->profile, &prof);
	prof.iommu = o->iommu;
	prof.threaded = o->threaded;
	fab = soft_fabric_create();
	if (IS_ERR(fab)) {
		fprintf(stderr, PERF_TOOL ": soft_fabric_create: %s\n",
			strerror((int)-PTR_ERR(fab)));
		return 1;
	}
	for (i = 0; i < 2; i++) {
		dev[i] = soft_device_create(
			fab, i ? "perf_srv%d" : "perf_cli%d", &prof);
		ret = IS_ERR(dev[i]) ? (int)PTR_ERR(dev[i]) : 0;
		if (ret) {
			dev[i] = NULL;
			goto out;
		}
		ret = soft_device_add_addr(
			dev[i], (struct sockaddr *)(i ? &s.addr : &src));
		if (ret)
			goto out;
	}
	s.tab = open_memstream(&s.text, &s.len);
	if (!s.tab) {
		ret = -ENOMEM;
		goto out;
	}
	ret = pthread_create(&tid, NULL, soft_server_main, &s);
	if (ret) {
		ret = -ret;
		goto out;
	}
	while (!__atomic_load_n(&s.listening, __ATOMIC_ACQUIRE))
		sched_yield();
	ret = run_client(o, (struct sockaddr *)&src, (struct sockaddr *)&s.addr,
			 host);
	pthread_join(tid, NULL);
	fclose(s.tab);
	s.tab = NULL;
	if (perf_out_table() && s.len) {
		printf("#\n# the server (a thread of this process, at %s):\n",
		       host);
		fputs(s.text, stdout);
	}
	free(s.text);
	if (!ret)
		ret = s.ret;
	ret = ret ? -EIO : 0;
out:
	if (ret && ret != -EIO)
		fprintf(stderr, PERF_TOOL ": software devices: %s\n",
			strerror(-ret));
	for (i = 0; i < 2; i++)
		if (dev[i] && soft_device_destroy(dev[i]))
			fprintf(stderr,
				PERF_TOOL ": soft_device_destroy refused\n");
	if (soft_fabric_destroy(fab))
		fprintf(stderr, PERF_TOOL ": soft_fabric_destroy refused\n");
	return ret ? 1 : 0;
}

bool perf_cs_soft(const struct perf_opts *o)
{
	return o->mode == PERF_SOFT_CS || (o->profile_set && !o->device);
}

/* ---- one end on a software device over TCP (siw-tcp) -------------------- */

struct tcp_end {
	struct soft_fabric *fab;
	struct ib_device *dev;
};

/* The address this host sends from to @dst (a connected UDP socket's). */
static int source_of(const struct sockaddr_storage *dst,
		     struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	int fd = socket(dst->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)dst,
		    dst->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						 sizeof(struct sockaddr_in)) ||
	    getsockname(fd, (struct sockaddr *)src, &len))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The device of a siw-tcp end in its own process (issue 28): the server's
 * answers to every address of this host's interfaces (a request arrives
 * at one of them), the client's to the address it sends to @dst from.
 */
static int tcp_end_open(const struct perf_opts *o,
			const struct sockaddr_storage *dst, struct tcp_end *e)
{
	struct soft_profile prof;
	struct ifaddrs *ifs, *i;
	int ret, n = 0;

	soft_profile_get(o->profile, &prof);
	prof.iommu = o->iommu;
	prof.threaded = o->threaded;
	e->fab = soft_fabric_create();
	if (IS_ERR(e->fab)) {
		ret = (int)PTR_ERR(e->fab);
		e->fab = NULL;
		return ret;
	}
	e->dev = soft_device_create(e->fab, "perf_tcp%d", &prof);
	if (IS_ERR(e->dev)) {
		ret = (int)PTR_ERR(e->dev);
		e->dev = NULL;
		return ret;
	}
	if (dst) {
		struct sockaddr_storage src;

		ret = source_of(dst, &src);
		return ret ? ret :
			     soft_device_add_addr(e->dev,
						  (struct sockaddr *)&src);
	}
	if (getifaddrs(&ifs))
		return -errno;
	for (i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr &&
		    (i->ifa_addr->sa_family == AF_INET ||
		     i->ifa_addr->sa_family == AF_INET6) &&
		    !soft_device_add_addr(e->dev, i->ifa_addr))
			n++;
	freeifaddrs(ifs);
	return n ? 0 : -EADDRNOTAVAIL;
}

static void tcp_end_close(struct tcp_end *e)
{
	if (e->dev && soft_device_destroy(e->dev))
		fprintf(stderr, PERF_TOOL ": soft_device_destroy refused\n");
	if (e->fab && soft_fabric_destroy(e->fab))
		fprintf(stderr, PERF_TOOL ": soft_fabric_destroy refused\n");
}

int perf_cs_run(const struct perf_opts *o)
{
	struct sockaddr_storage ss;
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct tcp_end te = { NULL, NULL };
	bool soft = perf_cs_soft(o);
	int ret;

	if (o->mode == PERF_SOFT_CS)
		return run_soft(o);
	if (o->mode == PERF_CLIENT && sockaddr_of(o->host, o->port, &ss))
		return 1;
	if (soft) {
		ret = tcp_end_open(o, o->mode == PERF_CLIENT ? &ss : NULL, &te);
		if (ret) {
			fprintf(stderr, PERF_TOOL ": --profile %s: %s\n",
				o->profile, strerror(-ret));
			tcp_end_close(&te);
			return 1;
		}
	} else if (ibv_devices_open(o)) {
		return 1;
	}
	any.sin_port = htons((u16)o->port);
	if (o->perftest)
		ret = perf_pt_run(
			o,
			o->mode == PERF_CLIENT ? (struct sockaddr *)&ss : NULL,
			(struct sockaddr *)&any);
	else if (o->mode == PERF_CLIENT)
		ret = run_client(o, NULL, (struct sockaddr *)&ss, o->host);
	else
		ret = run_server(o, (struct sockaddr *)&any, stdout, NULL);
	if (soft)
		tcp_end_close(&te);
	else
		ibv_devices_close();
	return ret ? 1 : 0;
}

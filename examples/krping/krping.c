// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * krping, the ULP: a client and a server that ping each other the way the
 * kernel's out-of-tree krping module does, written as a kernel ULP is:
 *
 *   client                                   server
 *   ------                                   ------
 *   resolve address and route                listen; on CONNECT_REQUEST
 *   connect                                  queue a work item that
 *                                            accepts and serves
 *   per ping:
 *   fill the source, register it,
 *   SEND READ_ADV {addr, rkey, len}  ----->  rdma_rw_ctx_init(READ),
 *                   <----- RDMA READ ------  post, wait, destroy
 *                   <----- SEND GO --------
 *   register the sink,
 *   SEND WRITE_ADV {addr, rkey, len} ----->  rdma_rw_ctx_init(WRITE),
 *                   ------ RDMA WRITE ---->  post, wait, destroy
 *                   <----- SEND GO --------
 *   (--validate) sink == source
 *   disconnect                               DISCONNECTED: the work ends
 *
 * Only rdma_cm.h, rw.h, ib_verbs.h and the kernel primitives are used: the
 * device is the one rdma_cm bound the id to.  The CM handler runs on the
 * CM thread and never blocks: it records the event and complete()s
 * cb->cm_done.  Work completions come through ib_cqe done() callbacks on
 * the CQ's thread (IB_POLL_WORKQUEUE), each complete()ing the struct
 * completion of its work request.  The threads that drive the protocol
 * (the client's caller, the server's work item) wait on those
 * completions, every wait bounded by --timeout.
 *
 * Client memory: each buffer is one fast-registration MR (ib_alloc_mr(),
 * ib_map_mr_sg() once), registered again before every advertisement with
 * a new key variant (LOCAL_INV + IB_WR_REG_MR chained before the SEND), so
 * the server never holds a key that outlives its ping, as NFS/RDMA and
 * iSER initiators do.  A device without fast registration (the libibverbs
 * backend has no REG_MR work request) gets ib_reg_user_mr() instead: one
 * user MR per buffer for the whole run.  The PD's unsafe global rkey is
 * not used: rdmarw refuses IB_PD_UNSAFE_GLOBAL_RKEY, and it would expose
 * all memory to the peer.
 *
 * Server memory: a buffer of separate pages (one scatterlist entry each,
 * as a kernel server's pages would be); the R/W API picks the path for
 * the device (one READ with many SGEs, several WRs, MRs, READ_WITH_INV on
 * iWARP) and the QP's MR pool is sized with rdma_rw_mr_factor().
 */
#include "krping.h"

#include <rdmarw/completion.h>
#include <rdmarw/kernel.h>
#include <rdmarw/kref.h>
#include <rdmarw/list.h>
#include <rdmarw/rdma_cm.h>
#include <rdmarw/rw.h>
#include <rdmarw/scatterlist.h>
#include <rdmarw/spinlock.h>
#include <rdmarw/workqueue.h>

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- wire format --------------------------------------------------------- */

enum krping_op {
	KRPING_READ_ADV = 1, /* read my source buffer */
	KRPING_WRITE_ADV = 2, /* write your buffer into my sink */
	KRPING_GO = 3, /* done, go ahead */
};

/* One message each way, big-endian. */
struct krping_msg {
	__be32 op;
	__be32 seq;
	__be64 addr;
	__be32 rkey;
	__be32 len;
};

/* ---- state --------------------------------------------------------------- */

enum krping_state {
	KRPING_IDLE,
	KRPING_CONNECT_REQUEST,
	KRPING_ROUTE_RESOLVED,
	KRPING_CONNECTED,
	KRPING_DISCONNECTED,
	KRPING_ERROR,
};

/* What an id's context points at: the listener's or a connection's. */
enum krping_role {
	KRPING_LISTENER,
	KRPING_CONN,
};

/* One work request whose completion a thread waits for. */
struct krping_wait {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
	u32 byte_len;
	const char *what;
};

/* A client buffer the server reaches through an MR. */
struct krping_buf {
	void *buf;
	u32 len;
	int access;
	enum dma_data_direction dir;
	struct scatterlist sg;
	bool mapped;
	struct ib_mr *mr;
	bool fast_reg; /* mr is from ib_alloc_mr() */
	bool registered; /* a REG_MR of it was posted */
	struct ib_send_wr inv_wr;
	struct ib_reg_wr reg_wr;
};

/* One connection: the client's, or one the server accepted. */
struct krping_cb {
	enum krping_role role; /* first: the id's context */
	const struct krping_opts *o;
	const char *side;
	struct krping_server *server; /* NULL on the client */
	struct kref ref;
	struct list_head entry; /* on server->conns */
	struct work_struct work;

	struct rdma_cm_id *cm_id;
	spinlock_t lock; /* state and the CM event fields below */
	enum krping_state state;
	enum rdma_cm_event_type cm_event;
	int cm_status;
	const char *cm_reason;
	bool was_connected;
	struct completion cm_done; /* one complete() per CM event */
	u8 peer_responder_resources;

	struct ib_device *dev;
	u32 port;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;

	struct krping_msg recv_msg, send_msg;
	u64 recv_dma, send_dma;
	bool recv_mapped, send_mapped;
	struct krping_wait recv_w, send_w, rw_w, reg_w;

	/* server: its pages */
	void *rdma_buf;
	u32 rdma_pages;
	struct sg_table rdma_sgt;

	/* client: the source the server READs, the sink it WRITEs */
	struct krping_buf start, sink;

	struct krping_stats st;
};

struct krping_server {
	enum krping_role role; /* first: the listener's context */
	const struct krping_opts *o;
	struct rdma_cm_id *listen_id;
	struct workqueue_struct *wq;
	spinlock_t lock; /* conns, busy, result, st */
	struct list_head conns;
	bool busy;
	struct completion requested; /* a connection was taken */
	struct completion served; /* its work item finished */
	int result;
	struct krping_stats st;
};

#define kp_err(cb, fmt, ...) \
	fprintf(stderr, "krping: %s: " fmt "\n", (cb)->side, ##__VA_ARGS__)
#define kp_info(cb, fmt, ...)                                       \
	do {                                                        \
		if ((cb)->o->verbose)                               \
			printf("krping: %s: " fmt "\n", (cb)->side, \
			       ##__VA_ARGS__);                      \
	} while (0)

static unsigned long kp_timeout(const struct krping_cb *cb)
{
	return msecs_to_jiffies(cb->o->timeout_ms);
}

static const char *kp_addr(const struct sockaddr_storage *ss, char *buf,
			   size_t len)
{
	const void *a = ss->ss_family == AF_INET6 ?
				(const void *)&((const struct sockaddr_in6 *)ss)
					->sin6_addr :
				(const void *)&((const struct sockaddr_in *)ss)
					->sin_addr;
	u16 port = ss->ss_family == AF_INET6 ?
			   ((const struct sockaddr_in6 *)ss)->sin6_port :
			   ((const struct sockaddr_in *)ss)->sin_port;
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(ss->ss_family, a, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(port));
	return buf;
}

/* ---- the connection object ----------------------------------------------- */

static void krping_wc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krping_wait *w =
		container_of(wc->wr_cqe, struct krping_wait, cqe);

	w->status = wc->status;
	w->byte_len = wc->byte_len;
	complete(&w->done);
}

static void krping_wait_init(struct krping_wait *w, const char *what)
{
	w->cqe.done = krping_wc_done;
	init_completion(&w->done);
	w->what = what;
}

static struct krping_cb *krping_cb_alloc(const struct krping_opts *o,
					 const char *side)
{
	struct krping_cb *cb = calloc(1, sizeof(*cb));

	if (!cb)
		return NULL;
	cb->role = KRPING_CONN;
	cb->o = o;
	cb->side = side;
	kref_init(&cb->ref);
	INIT_LIST_HEAD(&cb->entry);
	spin_lock_init(&cb->lock);
	init_completion(&cb->cm_done);
	krping_wait_init(&cb->recv_w, "receive");
	krping_wait_init(&cb->send_w, "send");
	krping_wait_init(&cb->rw_w, "RDMA READ/WRITE");
	krping_wait_init(&cb->reg_w, "memory registration");
	return cb;
}

static void krping_cb_release(struct kref *ref)
{
	free(container_of(ref, struct krping_cb, ref));
}

/* ---- the CM handler (CM thread: records and wakes, never blocks) --------- */

static int krping_connect_request(struct krping_server *s,
				  struct rdma_cm_id *child,
				  struct rdma_cm_event *ev);
static void krping_serve_work(struct work_struct *work);

static void krping_cm_set(struct krping_cb *cb, enum krping_state state,
			  struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	spin_lock(&cb->lock);
	/* an error or the end stays: later events do not undo it */
	if (cb->state != KRPING_ERROR && cb->state != KRPING_DISCONNECTED) {
		cb->state = state;
		cb->cm_event = ev->event;
		cb->cm_status = ev->status;
		if (ev->event == RDMA_CM_EVENT_REJECTED)
			cb->cm_reason = rdma_reject_msg(id, ev->status);
		if (state == KRPING_CONNECTED)
			cb->was_connected = true;
	}
	spin_unlock(&cb->lock);
	complete(&cb->cm_done);
}

static int krping_cma_event_handler(struct rdma_cm_id *id,
				    struct rdma_cm_event *ev)
{
	enum krping_role *role = id->context;
	struct krping_cb *cb;
	int ret;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* the child inherits the listener's context */
		if (WARN_ON(*role != KRPING_LISTENER))
			return 1;
		return krping_connect_request(
			container_of(role, struct krping_server, role), id, ev);
	}
	if (*role == KRPING_LISTENER)
		return 0; /* DEVICE_REMOVAL: krping_server_stop() cleans up */
	cb = container_of(role, struct krping_cb, role);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		/* as krping: resolve the route from the handler */
		ret = rdma_resolve_route(id, cb->o->timeout_ms);
		if (ret) {
			ev->status = ret;
			krping_cm_set(cb, KRPING_ERROR, id, ev);
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		krping_cm_set(cb, KRPING_ROUTE_RESOLVED, id, ev);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		krping_cm_set(cb, KRPING_CONNECTED, id, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		krping_cm_set(cb, KRPING_DISCONNECTED, id, ev);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default: /* errors, rejects, DEVICE_REMOVAL */
		krping_cm_set(cb, KRPING_ERROR, id, ev);
		break;
	}
	return 0;
}

/* Why the CM refused, as an errno, with the message. */
static int krping_cm_error(struct krping_cb *cb)
{
	enum rdma_cm_event_type event;
	const char *reason;
	char a[INET6_ADDRSTRLEN + 8];
	int status;

	spin_lock(&cb->lock);
	event = cb->cm_event;
	status = cb->cm_status;
	reason = cb->cm_reason;
	spin_unlock(&cb->lock);
	kp_addr(&cb->o->addr, a, sizeof(a));
	switch (event) {
	case RDMA_CM_EVENT_REJECTED:
		kp_err(cb, "connection to %s rejected: %s (status %d)", a,
		       reason ? reason : "?", status);
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		kp_err(cb, "%s unreachable: %s", a, strerror(-status));
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_ADDR_RESOLVED: /* rdma_resolve_route() failed */
		kp_err(cb, "no %s to %s: %s",
		       event == RDMA_CM_EVENT_ROUTE_ERROR ? "route" : "address",
		       a, strerror(status < 0 ? -status : EHOSTUNREACH));
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		kp_err(cb, "the device was removed");
		return -ENODEV;
	case RDMA_CM_EVENT_DISCONNECTED:
		kp_err(cb, "the peer disconnected");
		return -ECONNRESET;
	default:
		kp_err(cb, "connection failed: %s (status %d)",
		       rdma_event_msg(event), status);
		return -ECONNRESET;
	}
}

static enum krping_state krping_state(struct krping_cb *cb)
{
	enum krping_state state;

	spin_lock(&cb->lock);
	state = cb->state;
	spin_unlock(&cb->lock);
	return state;
}

/* Wait until the CM handler has moved @cb to @want. */
static int krping_wait_state(struct krping_cb *cb, enum krping_state want)
{
	unsigned long left = kp_timeout(cb);
	enum krping_state state;

	for (;;) {
		state = krping_state(cb);
		if (state == want)
			return 0;
		if (state == KRPING_ERROR || state == KRPING_DISCONNECTED)
			return krping_cm_error(cb);
		left = wait_for_completion_timeout(&cb->cm_done, left);
		if (!left) {
			kp_err(cb, "no answer from the CM within %u ms",
			       cb->o->timeout_ms);
			return -ETIMEDOUT;
		}
	}
}

/* ---- work requests ------------------------------------------------------- */

/*
 * Wait for one work request.  A flush means the QP went to ERR: the peer
 * left (-ECONNRESET) unless a registration failed before.
 */
static int krping_wait_wc(struct krping_cb *cb, struct krping_wait *w)
{
	if (!wait_for_completion_timeout(&w->done, kp_timeout(cb))) {
		kp_err(cb, "%s did not complete within %u ms", w->what,
		       cb->o->timeout_ms);
		return -ETIMEDOUT;
	}
	if (w->status == IB_WC_SUCCESS)
		return 0;
	if (completion_done(&cb->reg_w.done) &&
	    cb->reg_w.status != IB_WC_SUCCESS) {
		kp_err(cb, "memory registration failed: %s",
		       ib_wc_status_msg(cb->reg_w.status));
		return -EIO;
	}
	if (w->status == IB_WC_WR_FLUSH_ERR)
		return -ECONNRESET;
	kp_err(cb, "%s failed: %s", w->what, ib_wc_status_msg(w->status));
	return -EIO;
}

static int krping_post_recv(struct krping_cb *cb)
{
	struct ib_sge sge = {
		.addr = cb->recv_dma,
		.length = sizeof(cb->recv_msg),
		.lkey = cb->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &cb->recv_w.cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	int ret;

	reinit_completion(&cb->recv_w.done);
	ret = ib_post_recv(cb->qp, &wr, NULL);
	if (ret)
		kp_err(cb, "ib_post_recv: %s", strerror(-ret));
	return ret;
}

/* SEND one message, after the WRs of @first (a registration) if any. */
static int krping_send(struct krping_cb *cb, enum krping_op op, u32 seq,
		       u64 addr, u32 rkey, u32 len, struct ib_send_wr *first)
{
	struct ib_sge sge = {
		.addr = cb->send_dma,
		.length = sizeof(cb->send_msg),
		.lkey = cb->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &cb->send_w.cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad;
	struct ib_send_wr *last;
	int ret;

	cb->send_msg.op = htobe32(op);
	cb->send_msg.seq = htobe32(seq);
	cb->send_msg.addr = htobe64(addr);
	cb->send_msg.rkey = htobe32(rkey);
	cb->send_msg.len = htobe32(len);
	if (first) {
		for (last = first; last->next; last = last->next)
			;
		last->next = &wr;
	}
	reinit_completion(&cb->send_w.done);
	reinit_completion(&cb->reg_w.done);
	ret = ib_post_send(cb->qp, first ? first : &wr, &bad);
	if (first)
		last->next = NULL;
	if (ret) {
		kp_err(cb, "ib_post_send: %s", strerror(-ret));
		return ret;
	}
	return krping_wait_wc(cb, &cb->send_w);
}

/* Wait for the peer's next message and check that it is @op for @seq. */
static int krping_recv(struct krping_cb *cb, enum krping_op op, u32 seq)
{
	int ret = krping_wait_wc(cb, &cb->recv_w);

	if (ret)
		return ret;
	if (cb->recv_w.byte_len != sizeof(cb->recv_msg) ||
	    be32toh(cb->recv_msg.op) != op ||
	    be32toh(cb->recv_msg.seq) != seq) {
		kp_err(cb,
		       "protocol error: got %u bytes, op %u seq %u; "
		       "expected op %d seq %u",
		       cb->recv_w.byte_len, be32toh(cb->recv_msg.op),
		       be32toh(cb->recv_msg.seq), op, seq);
		return -EPROTO;
	}
	return 0;
}

/* ---- resources of a connection ------------------------------------------- */

static int krping_map_msgs(struct krping_cb *cb)
{
	cb->recv_dma = ib_dma_map_single(cb->dev, &cb->recv_msg,
					 sizeof(cb->recv_msg), DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(cb->dev, cb->recv_dma))
		return -ENOMEM;
	cb->recv_mapped = true;
	cb->send_dma = ib_dma_map_single(cb->dev, &cb->send_msg,
					 sizeof(cb->send_msg), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(cb->dev, cb->send_dma))
		return -ENOMEM;
	cb->send_mapped = true;
	return 0;
}

/* SGEs per send WR the QP is created with. */
static u32 krping_sge(const struct krping_cb *cb)
{
	return min_t(u32, cb->dev->attrs.max_send_sge, 32);
}

/*
 * PD, CQ and QP on the id's device.  @max_rdma_ctxs sizes the QP for the
 * server's R/W contexts (0 on the client); @extra_send are the send WRs
 * beyond them: the client's registration WRs, the server's WRITE WRs.
 */
static int krping_setup_qp(struct krping_cb *cb, u32 max_rdma_ctxs,
			   u32 extra_send)
{
	struct ib_qp_init_attr attr = {
		.cap = {
			/* a SEND, its registration WRs, the drain marker */
			.max_send_wr = 2 + extra_send,
			/* one receive, the drain marker */
			.max_recv_wr = 2,
			.max_send_sge = krping_sge(cb),
			.max_recv_sge = 1,
			.max_rdma_ctxs = max_rdma_ctxs,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int nr_cqe, ret;

	cb->pd = ib_alloc_pd(cb->dev, 0);
	if (IS_ERR(cb->pd)) {
		ret = (int)PTR_ERR(cb->pd);
		cb->pd = NULL;
		kp_err(cb, "ib_alloc_pd: %s", strerror(-ret));
		return ret;
	}
	nr_cqe = 16 + (int)extra_send +
		 (int)rdma_rw_max_send_wr(cb->dev, cb->port, max_rdma_ctxs, 0);
	nr_cqe = min_t(int, nr_cqe, cb->dev->attrs.max_cqe);
	cb->cq = ib_alloc_cq(cb->dev, cb, nr_cqe, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(cb->cq)) {
		ret = (int)PTR_ERR(cb->cq);
		cb->cq = NULL;
		kp_err(cb, "ib_alloc_cq: %s", strerror(-ret));
		return ret;
	}
	attr.send_cq = cb->cq;
	attr.recv_cq = cb->cq;
	ret = rdma_create_qp(cb->cm_id, cb->pd, &attr);
	if (ret) {
		kp_err(cb, "rdma_create_qp (%u R/W contexts): %s",
		       max_rdma_ctxs, strerror(-ret));
		return ret;
	}
	cb->qp = cb->cm_id->qp;
	ret = krping_map_msgs(cb);
	if (ret)
		kp_err(cb, "ib_dma_map_single failed");
	return ret;
}

/*
 * Make the first entries of the server's page list describe @len bytes
 * (the last of them a partial page); return how many they are.
 */
static int krping_sg_fit(struct krping_cb *cb, u32 len)
{
	u32 n = DIV_ROUND_UP(len, PAGE_SIZE), i;
	struct scatterlist *sg;

	for_each_sg(cb->rdma_sgt.sgl, sg, cb->rdma_pages, i)
		sg->length = i + 1 == n ? len - i * (u32)PAGE_SIZE : PAGE_SIZE;
	return (int)n;
}

static int krping_server_buf(struct krping_cb *cb)
{
	struct scatterlist *sg;
	u32 i;
	int ret;

	cb->rdma_pages = DIV_ROUND_UP(cb->o->size, PAGE_SIZE);
	cb->rdma_buf =
		aligned_alloc(PAGE_SIZE, (size_t)cb->rdma_pages * PAGE_SIZE);
	if (!cb->rdma_buf)
		return -ENOMEM;
	memset(cb->rdma_buf, 0, (size_t)cb->rdma_pages * PAGE_SIZE);
	ret = sg_alloc_table(&cb->rdma_sgt, cb->rdma_pages, 0);
	if (ret)
		return ret;
	for_each_sg(cb->rdma_sgt.sgl, sg, cb->rdma_pages, i)
		sg_set_buf(sg, (char *)cb->rdma_buf + (size_t)i * PAGE_SIZE,
			   PAGE_SIZE);
	return 0;
}

/* The client's buffer: one MR, fast-registered where the device can. */
static int krping_buf_init(struct krping_cb *cb, struct krping_buf *b,
			   int access, enum dma_data_direction dir)
{
	u32 pages = DIV_ROUND_UP(cb->o->size, PAGE_SIZE);
	struct ib_device_attr *a = &cb->dev->attrs;
	struct ib_mr *mr;
	int n;

	b->len = cb->o->size;
	b->access = access;
	b->dir = dir;
	b->buf = aligned_alloc(PAGE_SIZE, (size_t)pages * PAGE_SIZE);
	if (!b->buf)
		return -ENOMEM;
	memset(b->buf, 0, (size_t)pages * PAGE_SIZE);

	if (!cb->o->user_mr &&
	    (a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		if (pages > a->max_fast_reg_page_list_len) {
			kp_err(cb,
			       "%u bytes are %u pages; one MR of %s holds %u",
			       b->len, pages, cb->dev->name,
			       a->max_fast_reg_page_list_len);
			return -EINVAL;
		}
		mr = ib_alloc_mr(cb->pd, IB_MR_TYPE_MEM_REG, pages);
		if (IS_ERR(mr) && PTR_ERR(mr) != -EOPNOTSUPP) {
			kp_err(cb, "ib_alloc_mr: %s",
			       strerror((int)-PTR_ERR(mr)));
			return (int)PTR_ERR(mr);
		}
		if (!IS_ERR(mr)) {
			b->mr = mr;
			b->fast_reg = true;
			sg_init_one(&b->sg, b->buf, b->len);
			if (ib_dma_map_sg(cb->dev, &b->sg, 1, dir) != 1) {
				kp_err(cb, "ib_dma_map_sg failed");
				return -ENOMEM;
			}
			b->mapped = true;
			n = ib_map_mr_sg(mr, &b->sg, 1, NULL, PAGE_SIZE);
			if (n != 1) {
				kp_err(cb, "ib_map_mr_sg: %d", n);
				return n < 0 ? n : -EINVAL;
			}
			return 0;
		}
	}
	/* no fast registration here: a user MR for the whole run */
	mr = ib_reg_user_mr(cb->pd, (u64)(uintptr_t)b->buf, b->len,
			    (u64)(uintptr_t)b->buf, access);
	if (IS_ERR(mr)) {
		kp_err(cb, "ib_reg_user_mr: %s", strerror((int)-PTR_ERR(mr)));
		return (int)PTR_ERR(mr);
	}
	b->mr = mr;
	return 0;
}

/*
 * The WRs that register @b again with a new key variant: LOCAL_INV of the
 * previous registration (after the first), then REG_MR.  They are
 * unsignaled: only a failure completes (reg_w).  NULL for a user MR.
 */
static struct ib_send_wr *krping_buf_reg(struct krping_cb *cb,
					 struct krping_buf *b)
{
	struct ib_send_wr *first = &b->reg_wr.wr;

	if (!b->fast_reg)
		return NULL;
	memset(&b->inv_wr, 0, sizeof(b->inv_wr));
	memset(&b->reg_wr, 0, sizeof(b->reg_wr));
	if (b->registered) {
		b->inv_wr.opcode = IB_WR_LOCAL_INV;
		b->inv_wr.ex.invalidate_rkey = b->mr->rkey;
		b->inv_wr.wr_cqe = &cb->reg_w.cqe;
		b->inv_wr.next = &b->reg_wr.wr;
		first = &b->inv_wr;
	}
	ib_update_fast_reg_key(b->mr, (u8)(ib_inc_rkey(b->mr->rkey) & 0xff));
	b->reg_wr.wr.opcode = IB_WR_REG_MR;
	b->reg_wr.wr.wr_cqe = &cb->reg_w.cqe;
	b->reg_wr.mr = b->mr;
	b->reg_wr.key = b->mr->rkey;
	b->reg_wr.access = b->access;
	b->registered = true;
	return first;
}

static void krping_buf_free(struct krping_cb *cb, struct krping_buf *b)
{
	int ret;

	if (b->mr) {
		ret = ib_dereg_mr(b->mr);
		WARN_ON(ret);
	}
	if (b->mapped)
		ib_dma_unmap_sg(cb->dev, &b->sg, 1, b->dir);
	free(b->buf);
}

/* Disconnect, flush, and free everything of @cb except @cb itself. */
static void krping_teardown(struct krping_cb *cb)
{
	bool connected;
	int ret;

	spin_lock(&cb->lock);
	connected = cb->was_connected;
	spin_unlock(&cb->lock);
	if (connected)
		rdma_disconnect(cb->cm_id);
	if (cb->qp) {
		/* every posted WR has completed and been delivered after it */
		ret = ib_drain_qp(cb->qp);
		if (ret)
			kp_err(cb, "ib_drain_qp: %s", strerror(-ret));
	}
	krping_buf_free(cb, &cb->start);
	krping_buf_free(cb, &cb->sink);
	if (cb->rdma_sgt.sgl)
		sg_free_table(&cb->rdma_sgt);
	free(cb->rdma_buf);
	if (cb->recv_mapped)
		ib_dma_unmap_single(cb->dev, cb->recv_dma, sizeof(cb->recv_msg),
				    DMA_FROM_DEVICE);
	if (cb->send_mapped)
		ib_dma_unmap_single(cb->dev, cb->send_dma, sizeof(cb->send_msg),
				    DMA_TO_DEVICE);
	if (cb->cm_id) {
		rdma_destroy_qp(cb->cm_id);
		rdma_destroy_id(cb->cm_id);
		cb->cm_id = NULL;
	}
	cb->qp = NULL;
	if (cb->cq && ib_free_cq(cb->cq))
		kp_err(cb, "ib_free_cq refused");
	if (cb->pd && ib_dealloc_pd(cb->pd))
		kp_err(cb, "ib_dealloc_pd refused");
	cb->cq = NULL;
	cb->pd = NULL;
}

/* ---- server -------------------------------------------------------------- */

/* One RDMA READ or WRITE of the server's pages through the R/W API. */
static int krping_rw(struct krping_cb *cb, u64 addr, u32 rkey, u32 len,
		     enum dma_data_direction dir)
{
	int nents = krping_sg_fit(cb, len);
	struct rdma_rw_ctx ctx;
	int ret;

	ret = rdma_rw_ctx_init(&ctx, cb->qp, cb->port, cb->rdma_sgt.sgl, nents,
			       0, addr, rkey, dir);
	if (ret < 0) {
		kp_err(cb, "rdma_rw_ctx_init (%s of %u bytes): %s",
		       dir == DMA_FROM_DEVICE ? "READ" : "WRITE", len,
		       strerror(-ret));
		return ret;
	}
	reinit_completion(&cb->rw_w.done);
	ret = rdma_rw_ctx_post(&ctx, cb->qp, cb->port, &cb->rw_w.cqe, NULL);
	if (ret)
		kp_err(cb, "rdma_rw_ctx_post: %s", strerror(-ret));
	else
		ret = krping_wait_wc(cb, &cb->rw_w);
	if (ret == -ETIMEDOUT)
		ib_drain_qp(cb->qp); /* nothing in flight before destroy */
	rdma_rw_ctx_destroy(&ctx, cb->qp, cb->port, cb->rdma_sgt.sgl, nents,
			    dir);
	return ret;
}

/* The peer's advertisement in the message just received. */
static int krping_adv(struct krping_cb *cb, u64 *addr, u32 *rkey, u32 *len)
{
	*addr = be64toh(cb->recv_msg.addr);
	*rkey = be32toh(cb->recv_msg.rkey);
	*len = be32toh(cb->recv_msg.len);
	if (!*len || *len > cb->o->size) {
		kp_err(cb,
		       "the client offers %u bytes; this server takes 1..%u",
		       *len, cb->o->size);
		return -EMSGSIZE;
	}
	return 0;
}

/* One ping: READ the client's source, then WRITE it into its sink. */
static int krping_serve_one(struct krping_cb *cb, u32 seq)
{
	u32 rkey, len, wlen;
	u64 addr;
	int ret;

	ret = krping_adv(cb, &addr, &rkey, &len);
	if (!ret)
		ret = krping_post_recv(cb);
	if (!ret)
		ret = krping_rw(cb, addr, rkey, len, DMA_FROM_DEVICE);
	if (ret)
		return ret;
	cb->st.bytes_read += len;
	ret = krping_send(cb, KRPING_GO, seq, 0, 0, 0, NULL);
	if (!ret)
		ret = krping_recv(cb, KRPING_WRITE_ADV, seq);
	if (!ret)
		ret = krping_adv(cb, &addr, &rkey, &wlen);
	if (!ret && wlen != len) {
		kp_err(cb, "the sink has %u bytes, the source had %u", wlen,
		       len);
		ret = -EPROTO;
	}
	if (!ret)
		ret = krping_post_recv(cb);
	if (!ret)
		ret = krping_rw(cb, addr, rkey, len, DMA_TO_DEVICE);
	if (ret)
		return ret;
	cb->st.bytes_written += len;
	ret = krping_send(cb, KRPING_GO, seq, 0, 0, 0, NULL);
	if (!ret) {
		cb->st.pings++;
		kp_info(cb, "ping %u: read and wrote %u bytes", seq, len);
	}
	return ret;
}

static int krping_serve(struct krping_cb *cb)
{
	struct rdma_conn_param cp = { 0 };
	int ret, depth;
	u32 ctxs, seq;

	cb->dev = cb->cm_id->device;
	cb->port = cb->cm_id->port_num;
	ret = krping_server_buf(cb);
	if (ret) {
		kp_err(cb, "no memory for %u bytes", cb->o->size);
		return ret;
	}
	/*
	 * The MRs (or READ WRs) of one transfer of the whole buffer size the
	 * MR pool; a WRITE without MRs takes one WR per max_send_sge pages.
	 */
	ctxs = rdma_rw_mr_factor(cb->dev, cb->port, cb->rdma_pages);
	ret = krping_setup_qp(cb, ctxs,
			      DIV_ROUND_UP(cb->rdma_pages, krping_sge(cb)));
	if (!ret)
		ret = krping_post_recv(cb);
	if (ret) {
		rdma_reject(cb->cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret;
	}
	/* the server issues READs: as many at once as the client answers */
	depth = min_t(int, cb->dev->attrs.max_qp_init_rd_atom, 255);
	cp.initiator_depth =
		(u8)min_t(int, cb->peer_responder_resources, depth);
	ret = rdma_accept(cb->cm_id, &cp);
	if (ret) {
		kp_err(cb, "rdma_accept: %s", strerror(-ret));
		return ret;
	}
	ret = krping_wait_state(cb, KRPING_CONNECTED);
	if (ret)
		return ret;
	kp_info(cb, "connected on %s (%u R/W contexts)", cb->dev->name, ctxs);
	for (seq = 0;; seq++) {
		ret = krping_recv(cb, KRPING_READ_ADV, seq);
		if (ret == -ECONNRESET)
			return 0; /* the client left between pings */
		if (!ret)
			ret = krping_serve_one(cb, seq);
		if (ret) {
			if (ret == -ECONNRESET)
				kp_err(cb,
				       "the connection went down during ping %u",
				       seq);
			return ret;
		}
	}
}

static void krping_serve_work(struct work_struct *work)
{
	struct krping_cb *cb = container_of(work, struct krping_cb, work);
	struct krping_server *s = cb->server;
	int ret;

	ret = krping_serve(cb);
	krping_teardown(cb);
	spin_lock(&s->lock);
	s->result = ret;
	s->st = cb->st;
	spin_unlock(&s->lock);
	complete(&s->served);
	kref_put(&cb->ref, krping_cb_release); /* the work's reference */
}

/* CM thread: take the first request, refuse the others. */
static int krping_connect_request(struct krping_server *s,
				  struct rdma_cm_id *child,
				  struct rdma_cm_event *ev)
{
	struct krping_cb *cb;
	bool busy;

	spin_lock(&s->lock);
	busy = s->busy;
	s->busy = true;
	spin_unlock(&s->lock);
	cb = busy ? NULL : krping_cb_alloc(s->o, "server");
	if (!cb) {
		/* returning non-zero has the CM destroy the child */
		rdma_reject(child, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return 1;
	}
	cb->server = s;
	cb->cm_id = child;
	cb->state = KRPING_CONNECT_REQUEST;
	/*
	 * The event gives the request's values from this side's view: the
	 * client's responder resources are the READs we may have in flight,
	 * our initiator depth (param.conn.responder_resources is the client's
	 * initiator depth, 0 here).
	 */
	cb->peer_responder_resources = ev->param.conn.initiator_depth;
	child->context = &cb->role;
	/* one reference for the work item, one for the server's list */
	kref_get(&cb->ref);
	spin_lock(&s->lock);
	list_add_tail(&cb->entry, &s->conns);
	spin_unlock(&s->lock);
	INIT_WORK(&cb->work, krping_serve_work);
	queue_work(s->wq, &cb->work);
	complete(&s->requested);
	return 0;
}

int krping_server_start(const struct krping_opts *o, struct krping_server **out)
{
	struct krping_server *s = calloc(1, sizeof(*s));
	char a[INET6_ADDRSTRLEN + 8];
	int ret;

	if (!s)
		return -ENOMEM;
	s->role = KRPING_LISTENER;
	s->o = o;
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->conns);
	init_completion(&s->requested);
	init_completion(&s->served);
	s->wq = alloc_ordered_workqueue("krping", 0);
	if (!s->wq) {
		free(s);
		return -ENOMEM;
	}
	s->listen_id = rdma_create_id(&init_net, krping_cma_event_handler,
				      &s->role, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(s->listen_id)) {
		ret = (int)PTR_ERR(s->listen_id);
		s->listen_id = NULL;
		goto fail;
	}
	ret = rdma_bind_addr(s->listen_id, (struct sockaddr *)&o->addr);
	if (!ret)
		ret = rdma_listen(s->listen_id, 1);
	if (ret)
		goto fail;
	if (o->verbose)
		printf("krping: server: listening on %s\n",
		       kp_addr(&o->addr, a, sizeof(a)));
	*out = s;
	return 0;
fail:
	fprintf(stderr, "krping: server: cannot listen on %s: %s\n",
		kp_addr(&o->addr, a, sizeof(a)), strerror(-ret));
	krping_server_stop(s);
	return ret;
}

int krping_server_wait(struct krping_server *s, struct krping_stats *st)
{
	int ret;

	if (!wait_for_completion_timeout(&s->requested,
					 msecs_to_jiffies(s->o->timeout_ms))) {
		fprintf(stderr,
			"krping: server: no connection request within %u ms\n",
			s->o->timeout_ms);
		return -ETIMEDOUT;
	}
	/* bounded: every wait of the work item is */
	wait_for_completion(&s->served);
	spin_lock(&s->lock);
	ret = s->result;
	*st = s->st;
	spin_unlock(&s->lock);
	return ret;
}

void krping_server_stop(struct krping_server *s)
{
	struct krping_cb *cb, *n;

	if (!s)
		return;
	/* no more requests: waits for a running handler */
	if (s->listen_id)
		rdma_destroy_id(s->listen_id);
	/* runs a queued connection to its end */
	destroy_workqueue(s->wq);
	list_for_each_entry_safe(cb, n, &s->conns, entry) {
		list_del(&cb->entry);
		kref_put(&cb->ref, krping_cb_release); /* the list's */
	}
	free(s);
}

/* ---- client -------------------------------------------------------------- */

static void krping_fill(struct krping_buf *b, u32 seq)
{
	unsigned char *p = b->buf;
	u32 i;

	for (i = 0; i < b->len; i++)
		p[i] = (unsigned char)(seq * 31 + i * 7 + 1);
}

/* Advertise @b for @op and wait for the server's go-ahead. */
static int krping_advertise(struct krping_cb *cb, struct krping_buf *b,
			    enum krping_op op, u32 seq)
{
	struct ib_send_wr *reg = krping_buf_reg(cb, b);
	int ret;

	ret = krping_send(cb, op, seq, b->mr->iova, b->mr->rkey, b->len, reg);
	if (!ret)
		ret = krping_recv(cb, KRPING_GO, seq);
	if (!ret)
		ret = krping_post_recv(cb);
	return ret;
}

static int krping_ping(struct krping_cb *cb, u32 seq)
{
	const unsigned char *src = cb->start.buf, *dst = cb->sink.buf;
	u32 i;
	int ret;

	krping_fill(&cb->start, seq);
	memset(cb->sink.buf, 0, cb->sink.len);
	ret = krping_advertise(cb, &cb->start, KRPING_READ_ADV, seq);
	if (!ret)
		ret = krping_advertise(cb, &cb->sink, KRPING_WRITE_ADV, seq);
	if (ret) {
		if (ret == -ECONNRESET)
			kp_err(cb, "the connection went down during ping %u",
			       seq);
		return ret;
	}
	cb->st.pings++;
	if (cb->o->validate) {
		for (i = 0; i < cb->start.len && src[i] == dst[i]; i++)
			;
		if (i < cb->start.len) {
			kp_err(cb,
			       "ping %u: data differ at byte %u of %u "
			       "(sent 0x%02x, got 0x%02x)",
			       seq, i, cb->start.len, src[i], dst[i]);
			return -EBADMSG;
		}
		cb->st.validated++;
	}
	kp_info(cb, "ping %u: %u bytes%s", seq, cb->start.len,
		cb->o->validate ? ", validated" : "");
	return 0;
}

int krping_client(const struct krping_opts *o, struct krping_stats *st)
{
	struct krping_cb *cb = krping_cb_alloc(o, "client");
	struct rdma_conn_param cp = { 0 };
	int ret, seq;

	memset(st, 0, sizeof(*st));
	if (!cb)
		return -ENOMEM;
	cb->cm_id = rdma_create_id(&init_net, krping_cma_event_handler,
				   &cb->role, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cb->cm_id)) {
		ret = (int)PTR_ERR(cb->cm_id);
		cb->cm_id = NULL;
		kp_err(cb, "rdma_create_id: %s", strerror(-ret));
		goto out;
	}
	ret = rdma_resolve_addr(cb->cm_id, NULL, (struct sockaddr *)&o->addr,
				o->timeout_ms);
	if (ret) {
		kp_err(cb, "rdma_resolve_addr: %s", strerror(-ret));
		goto out;
	}
	ret = krping_wait_state(cb, KRPING_ROUTE_RESOLVED);
	if (ret)
		goto out;
	cb->dev = cb->cm_id->device;
	cb->port = cb->cm_id->port_num;
	/* per advertisement: LOCAL_INV and REG_MR before the SEND */
	ret = krping_setup_qp(cb, 0, 2);
	if (!ret)
		ret = krping_buf_init(cb, &cb->start, IB_ACCESS_REMOTE_READ,
				      DMA_TO_DEVICE);
	if (!ret)
		ret = krping_buf_init(cb, &cb->sink,
				      IB_ACCESS_LOCAL_WRITE |
					      IB_ACCESS_REMOTE_WRITE,
				      DMA_FROM_DEVICE);
	if (!ret)
		ret = krping_post_recv(cb);
	if (ret)
		goto out;
	st->fast_reg = cb->start.fast_reg;
	/* the server READs our source: answer as many READs as we can */
	cp.responder_resources =
		(u8)min_t(int, cb->dev->attrs.max_qp_rd_atom, 16);
	ret = rdma_connect(cb->cm_id, &cp);
	if (ret) {
		kp_err(cb, "rdma_connect: %s", strerror(-ret));
		goto out;
	}
	ret = krping_wait_state(cb, KRPING_CONNECTED);
	if (ret)
		goto out;
	kp_info(cb, "connected on %s, %s registration", cb->dev->name,
		st->fast_reg ? "fast (IB_WR_REG_MR)" : "user MR");
	for (seq = 0; !ret && seq < o->count; seq++)
		ret = krping_ping(cb, (u32)seq);
out:
	st->pings = cb->st.pings;
	st->validated = cb->st.validated;
	krping_teardown(cb);
	kref_put(&cb->ref, krping_cb_release);
	return ret;
}

int krping_exit_status(int err)
{
	switch (err) {
	case 0:
		return KRPING_EXIT_OK;
	case -ECONNREFUSED:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
		return KRPING_EXIT_REFUSED;
	default:
		return KRPING_EXIT_FAIL;
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager's librdmacm side (cm_ibv.h): one event channel for
 * the process, the thread that reads it, and the calls the CM core makes on
 * the librdmacm id behind each rdmarw id of an ibv device.  The CM core
 * (cma.c) stays the one owner of the ids' states; this file only talks to
 * librdmacm and never includes <rdmarw/rdma_cm.h>.
 */
#include <rdmarw/version.h>

#ifdef RDMARW_HAVE_IBV
#include "cm/cm_ibv.h"
#include "ibv/ibv_key.h"
#include "ibv/ibv_loc.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* Both follow the kernel's numbering (uapi rdma_user_cm.h, rdma_cm.h). */
static_assert(RDMA_CM_EVENT_CONNECT_REQUEST == 4 &&
		      RDMA_CM_EVENT_ESTABLISHED == 9 &&
		      RDMA_CM_EVENT_TIMEWAIT_EXIT == 15,
	      "librdmacm's event numbers are the kernel's");
static_assert(sizeof(((struct rdmarw__cm_xev *)0)->pdata) >= 255,
	      "a u8 length of private data fits");

/**
 * struct - the process's librdmacm state
 * @lock: @ch, @thread, @tried, @ok
 * @ev_lock: held by the event thread from reading an event to handing it
 *           over; rdmarw__xid_destroy() takes it once so that the thread
 *           no longer holds a pointer to the id it frees
 * @ch: the event channel
 * @stop_fd: eventfd that stops @thread
 * @thread: reads @ch
 * @tried: the channel was tried
 * @ok: and it opened
 */
static struct {
	pthread_mutex_t lock;
	pthread_mutex_t ev_lock;
	struct rdma_event_channel *ch;
	int stop_fd;
	pthread_t thread;
	bool tried;
	bool ok;
} xs = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.ev_lock = PTHREAD_MUTEX_INITIALIZER,
	.stop_fd = -1,
};

static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

static void copy_addr(struct sockaddr_storage *dst, const struct sockaddr *sa)
{
	memset(dst, 0, sizeof(*dst));
	if (!sa)
		return;
	if (sa->sa_family == AF_INET)
		memcpy(dst, sa, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6)
		memcpy(dst, sa, sizeof(struct sockaddr_in6));
}

static struct ib_device *dev_of(struct rdma_cm_id *id)
{
	struct ib_device *dev;

	if (!id->verbs)
		return NULL;
	dev = rdmarw__ibv_dev_of_ctx(id->verbs);
	return IS_ERR(dev) ? NULL : dev;
}

/* Copy @ev (and, for a request, make the child's xid). */
static void copy_event(struct rdma_cm_event *ev, struct rdmarw__cm_xev *xe)
{
	const struct rdma_conn_param *c = &ev->param.conn;

	memset(xe, 0, offsetof(struct rdmarw__cm_xev, pdata));
	xe->event = (int)ev->event;
	xe->status = ev->status;
	xe->dev = dev_of(ev->id);
	copy_addr(&xe->src, rdma_get_local_addr(ev->id));
	copy_addr(&xe->dst, rdma_get_peer_addr(ev->id));
	if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED &&
	    ev->event != RDMA_CM_EVENT_ADDR_ERROR &&
	    ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED &&
	    ev->event != RDMA_CM_EVENT_ROUTE_ERROR) {
		xe->responder_resources = c->responder_resources;
		xe->initiator_depth = c->initiator_depth;
		xe->qp_num = c->qp_num;
		if (c->private_data && c->private_data_len) {
			xe->pdata_len = c->private_data_len;
			memcpy(xe->pdata, c->private_data, xe->pdata_len);
		}
	}
}

static void handle_one(void)
{
	struct rdmarw__cm_xid *x, *child = NULL;
	struct rdmarw__cm_xev xe;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *cid;
	bool request;

	if (rdma_get_cm_event(xs.ch, &ev))
		return;
	cid = ev->id; /* the event is freed by its ack */
	request = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;
	x = request ? ev->listen_id->context : ev->id->context;
	copy_event(ev, &xe);
	if (request) {
		child = calloc(1, sizeof(*child));
		if (child) {
			child->cmid = ev->id;
			ev->id->context =
				child; /* it came with the listener's */
		}
		xe.child = child;
	}
	/* Acked before the core sees it: rdma_destroy_id() waits for acks. */
	rdma_ack_cm_event(ev);
	if (request && !child) {
		/* lost, as the kernel loses events under memory pressure */
		rdma_reject(cid, NULL, 0);
		rdma_destroy_id(cid);
		return;
	}
	if (!rdmarw__cm_xid_event(x, &xe) && child) {
		/* nobody takes it: the peer sees a reject */
		rdma_reject(child->cmid, NULL, 0);
		rdma_destroy_id(child->cmid);
		free(child);
	}
}

static void *ev_main(void *arg)
{
	struct pollfd pfd[2] = { { .fd = xs.ch->fd, .events = POLLIN },
				 { .fd = xs.stop_fd, .events = POLLIN } };

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		pthread_mutex_lock(&xs.ev_lock);
		handle_one();
		pthread_mutex_unlock(&xs.ev_lock);
	}
	return arg;
}

static bool start_locked(void)
{
	int flags;

	if (xs.tried)
		return xs.ok;
	xs.tried = true;
	xs.ch = rdma_create_event_channel();
	if (!xs.ch)
		return false;
	/* poll() decides when to read; a read must never block the thread */
	flags = fcntl(xs.ch->fd, F_GETFL);
	if (flags < 0 || fcntl(xs.ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		goto err;
	xs.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (xs.stop_fd < 0)
		goto err;
	if (pthread_create(&xs.thread, NULL, ev_main, NULL)) {
		close(xs.stop_fd);
		xs.stop_fd = -1;
		goto err;
	}
	xs.ok = true;
	return true;
err:
	rdma_destroy_event_channel(xs.ch);
	xs.ch = NULL;
	return false;
}

static void xs_stop(void) __attribute__((destructor));
static void xs_stop(void)
{
	u64 one = 1;

	pthread_mutex_lock(&xs.lock);
	if (xs.ok) {
		if (write(xs.stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(xs.thread, NULL);
		close(xs.stop_fd);
		xs.stop_fd = -1;
		xs.ok = false;
		/* ids the program never destroyed keep the channel */
	}
	pthread_mutex_unlock(&xs.lock);
}

bool rdmarw__xid_available(void)
{
	bool ok;

	pthread_mutex_lock(&xs.lock);
	ok = start_locked();
	pthread_mutex_unlock(&xs.lock);
	return ok;
}

static enum rdma_port_space port_space(int ps)
{
	return ps == RDMA_PS_IB ? RDMA_PS_IB : RDMA_PS_TCP;
}

int rdmarw__xid_set_option(struct rdmarw__cm_xid *x, enum rdmarw__cm_xopt opt,
			   int val)
{
	uint8_t byte = (uint8_t)val;
	int word = val;
	void *v = &word;
	size_t len = sizeof(word);
	int name;

	/* the lengths the kernel's ucma_set_option_id() insists on */
	switch (opt) {
	case RDMARW_CM_XOPT_TOS:
		name = RDMA_OPTION_ID_TOS;
		v = &byte;
		len = sizeof(byte);
		break;
	case RDMARW_CM_XOPT_REUSEADDR:
		name = RDMA_OPTION_ID_REUSEADDR;
		break;
	case RDMARW_CM_XOPT_AFONLY:
		name = RDMA_OPTION_ID_AFONLY;
		break;
	case RDMARW_CM_XOPT_ACK_TIMEOUT:
		name = RDMA_OPTION_ID_ACK_TIMEOUT;
		v = &byte;
		len = sizeof(byte);
		break;
	default:
		return -EINVAL;
	}
	return rdma_set_option(x->cmid, RDMA_OPTION_ID, name, v, len) ?
		       neg_errno() :
		       0;
}

/* A new id takes what the ULP set before it existed, before any bind. */
static int apply_options(struct rdmarw__cm_xid *x, void *owner)
{
	struct rdmarw__cm_xopts o = { 0 };
	int i, ret;

	rdmarw__cm_xid_options(owner, &o);
	for (i = 0; i < RDMARW_CM_XOPT_NR; i++) {
		if (!(o.set & (1U << i)))
			continue;
		ret = rdmarw__xid_set_option(x, (enum rdmarw__cm_xopt)i,
					     o.val[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int xid_new(struct rdmarw__cm_xid **out, void *owner, int ps)
{
	struct rdma_cm_id *id;
	struct rdmarw__cm_xid *x;
	int ret;

	if (!rdmarw__xid_available())
		return -ENODEV;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	if (rdma_create_id(xs.ch, &id, x, port_space(ps))) {
		ret = neg_errno();
		free(x);
		return ret;
	}
	x->cmid = id;
	x->owner = owner;
	ret = apply_options(x, owner);
	if (ret) {
		rdma_destroy_id(id);
		free(x);
		return ret;
	}
	*out = x;
	return 0;
}

/* An id that never had an event: no wait for the event thread. */
static void xid_discard(struct rdmarw__cm_xid *x)
{
	rdma_destroy_id(x->cmid);
	free(x);
}

int rdmarw__xid_bind(struct rdmarw__cm_xid **out, void *owner, int ps,
		     const struct sockaddr *addr, struct ib_device **dev,
		     struct sockaddr_storage *bound)
{
	struct rdmarw__cm_xid *x;
	struct rdma_cm_id *id;
	int ret;

	ret = xid_new(&x, owner, ps);
	if (ret)
		return ret;
	id = x->cmid;
	if (rdma_bind_addr(id, (struct sockaddr *)addr)) {
		ret = neg_errno();
		xid_discard(x);
		return ret;
	}
	*dev = dev_of(id);
	if (id->verbs && !*dev) {
		xid_discard(x);
		return -ENODEV;
	}
	copy_addr(bound, rdma_get_local_addr(id));
	*out = x;
	return 0;
}

int rdmarw__xid_resolve_addr(struct rdmarw__cm_xid **xp, void *owner, int ps,
			     const struct sockaddr *src,
			     const struct sockaddr *dst, int timeout_ms)
{
	struct rdmarw__cm_xid *x = *xp;
	bool made = false;
	int ret;

	if (!x) {
		ret = xid_new(&x, owner, ps);
		if (ret)
			return ret;
		made = true;
	}
	if (rdma_resolve_addr(x->cmid, (struct sockaddr *)src,
			      (struct sockaddr *)dst, timeout_ms)) {
		ret = neg_errno();
		if (made)
			xid_discard(x);
		return ret;
	}
	*xp = x;
	return 0;
}

int rdmarw__xid_resolve_route(struct rdmarw__cm_xid *x, int timeout_ms)
{
	return rdma_resolve_route(x->cmid, timeout_ms) ? neg_errno() : 0;
}

int rdmarw__xid_listen(struct rdmarw__cm_xid *x, int backlog)
{
	return rdma_listen(x->cmid, backlog) ? neg_errno() : 0;
}

static void to_param(struct rdma_conn_param *c,
		     const struct rdmarw__cm_xparam *p)
{
	memset(c, 0, sizeof(*c));
	c->private_data = p->pdata;
	c->private_data_len = p->pdata_len;
	c->responder_resources = p->responder_resources;
	c->initiator_depth = p->initiator_depth;
	c->retry_count = p->retry_count;
	c->rnr_retry_count = p->rnr_retry_count;
	c->flow_control = p->flow_control;
}

int rdmarw__xid_connect(struct rdmarw__cm_xid *x,
			const struct rdmarw__cm_xparam *p)
{
	struct rdma_conn_param c;

	to_param(&c, p);
	return rdma_connect(x->cmid, &c) ? neg_errno() : 0;
}

int rdmarw__xid_accept(struct rdmarw__cm_xid *x,
		       const struct rdmarw__cm_xparam *p)
{
	struct rdma_conn_param c;

	to_param(&c, p);
	return rdma_accept(x->cmid, &c) ? neg_errno() : 0;
}

int rdmarw__xid_reject(struct rdmarw__cm_xid *x, const void *pdata, u8 len,
		       u8 reason)
{
#ifdef RDMARW_HAVE_RDMA_REJECT_ECE
	/* the one reason besides CONSUMER_DEFINED that librdmacm sends */
	if (reason == RDMARW_CM_REJ_VENDOR_OPTION)
		return rdma_reject_ece(x->cmid, pdata, len) ? neg_errno() : 0;
#endif
	return rdma_reject(x->cmid, pdata, len) ? neg_errno() : 0;
}

void (*rdmarw__ibv_disconnect_test_hook)(struct ib_qp *qp);

/*
 * librdmacm's rdma_disconnect() moves the id's QP itself: to ERR on IB and
 * RoCE (then sends the DREQ), to SQD on iWARP (siw's CLOSING; the kernel
 * moves it to ERR with the close).  The move to ERR is one rdmarw makes,
 * so it holds the QP's posts as ibv_modify_qp_op() does, and the QP is
 * taken for in ERR from then on, also when the DREQ could not be sent:
 * the CM moves it to ERR after this in any case (rdma_disconnect() in
 * cma.c).  Called with the CM's lock held (before the QP's locks).
 */
int rdmarw__xid_disconnect(struct rdmarw__cm_xid *x)
{
	struct ibv_qp_priv *iqp = x->qp ? to_iqp(x->qp) : NULL;
	struct rdma_cm_id *id = x->cmid;
	struct ibv_context *ctx = id->verbs;
	void (*hook)(struct ib_qp *);
	int ret;

	if (iqp)
		rdmarw__ibv_err_begin(iqp);
	ret = rdma_disconnect(id) ? neg_errno() : 0;
	if (iqp)
		rdmarw__ibv_err_end(iqp, ctx && ctx->device->transport_type ==
							 IBV_TRANSPORT_IB);
	hook = __atomic_load_n(&rdmarw__ibv_disconnect_test_hook,
			       __ATOMIC_RELAXED);
	if (__builtin_expect(hook != NULL, 0) && x->qp)
		hook(x->qp);
	return ret;
}

int rdmarw__xid_attach_qp(struct rdmarw__cm_xid *x, struct ib_qp *qp)
{
	struct rdma_cm_id *id = x->cmid;
	struct ibv_qp_priv *iqp;
	struct ibv_qp_attr attr;
	int mask, ret;

	if (!rdmarw_ibv_is_ibv(qp->device) || id->qp)
		return -EINVAL;
	iqp = to_iqp(qp);
	if (!id->verbs || iqp->qp->context != id->verbs)
		return -EINVAL; /* another device than the id's */
	/* As librdmacm's rdma_create_qp(): INIT with the CM's attributes. */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(id, &attr, &mask))
		return neg_errno();
	ret = ibv_modify_qp(iqp->qp, &attr, mask);
	if (ret)
		return -ret;
	rdmarw__xid_set_qp(x, qp);
	return 0;
}

/*
 * librdmacm reads id->qp while it handles an event in rdma_get_cm_event()
 * (the active side's QP to RTR and RTS with CONNECT_RESPONSE, to ERR with
 * REJECTED): it is taken away only while the event thread is between
 * events (@xs.ev_lock), so no lock of the CM may be held then.
 */
void rdmarw__xid_set_qp(struct rdmarw__cm_xid *x, struct ib_qp *qp)
{
	struct rdma_cm_id *id = x->cmid;

	if (x->qp)
		to_iqp(x->qp)->cmid = NULL;
	x->qp = qp;
	if (qp) {
		to_iqp(qp)->cmid = id;
		id->qp = to_iqp(qp)->qp;
		return;
	}
	pthread_mutex_lock(&xs.ev_lock);
	id->qp = NULL;
	pthread_mutex_unlock(&xs.ev_lock);
}

void rdmarw__xid_destroy(struct rdmarw__cm_xid *x)
{
	if (!x)
		return;
	/* The QP is the ULP's to destroy; librdmacm's rdma_destroy_id()
	 * leaves id->qp alone and returns once the event thread acked the
	 * id's last event, so the QP is not used after it. */
	if (x->qp)
		to_iqp(x->qp)->cmid = NULL;
	x->qp = NULL;
	rdma_destroy_id(x->cmid);
	/* the event thread may still hold @x from an event read before */
	pthread_mutex_lock(&xs.ev_lock);
	pthread_mutex_unlock(&xs.ev_lock);
	free(x);
}
#else
/* Built without the libibverbs backend (a unit must not be empty). */
extern int rdmarw__cm_no_ibv;
#endif /* RDMARW_HAVE_IBV */

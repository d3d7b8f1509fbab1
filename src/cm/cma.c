// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager: ids, their states, the checks of every call and
 * their errnos, the CM thread that calls the handlers, and the CM's client
 * of the device core.  What a connection's messages are and how they travel
 * is the transport table's of the id's device (cm.h): the in-process
 * exchange (cm_soft.c) or librdmacm (cm_ibv.c).
 *
 * Every id is on cm.ids under cm.lock, which guards every field of every
 * id except id.qp (each id's qp_lock: the CM thread moves a QP to ERR
 * while its owner may destroy it).  Events are queued on cm.queue and
 * delivered by one thread, in order: one handler runs at a time.
 */
#include "cm/cm.h"
#include "core/provider.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct net init_net;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* work queued, a handler returned */
	struct list_head ids;
	struct list_head queue;
	pthread_t thread;
	bool started;
	bool stop;
	struct cm_id_priv *running;
	u16 next_port;
	int start_err;
	struct rdmarw__cm_xid *reap;
} cm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.ids = LIST_HEAD_INIT(cm.ids),
	.queue = LIST_HEAD_INIT(cm.queue),
	.next_port = 32768,
};

static const struct rdmarw__cm_ops *const cm_transports[] = {
	&rdmarw__cm_soft_ops,
#ifdef RDMARW_HAVE_IBV
	&rdmarw__cm_ibv_ops,
#endif
	/* last: it routes any address when a TCP device has its family */
	&rdmarw__cm_mpa_ops,
};

static struct cm_id_priv *to_priv(struct rdma_cm_id *id)
{
	return container_of(id, struct cm_id_priv, id);
}

/**
 * struct cm_device - a device the CM serves (the kernel's struct cma_device)
 * @ops: the transport that owns it
 *
 * Made by the CM's client when the core adds the device, freed when the
 * core removes it: a device without one is not the CM's (yet, or any more).
 */
struct cm_device {
	const struct rdmarw__cm_ops *ops;
};

static struct ib_client cm_client;

/* The transport of @dev, or NULL when the CM does not serve it. */
static const struct rdmarw__cm_ops *ops_of(struct ib_device *dev)
{
	struct cm_device *cd = dev ? ib_get_client_data(dev, &cm_client) : NULL;

	return cd ? cd->ops : NULL;
}

/*
 * Point @p at @dev (cm.lock held).  An id holds its device, as the
 * kernel's holds its cma_device: the device's unregistration is refused
 * while ids are bound to it.
 */
static void set_device(struct cm_id_priv *p, struct ib_device *dev)
{
	if (dev)
		rdmarw__device_get(dev);
	if (p->id.device)
		rdmarw__device_put(p->id.device);
	p->id.device = dev;
	p->id.port_num = dev ? 1 : 0;
	p->ops = ops_of(dev);
}

/*
 * The table that makes @p's exchange (connect, accept, reject, disconnect,
 * route): librdmacm's when a librdmacm id serves the id's device, else the
 * device's own (NULL while unbound).
 */
static const struct rdmarw__cm_ops *exch(struct cm_id_priv *p)
{
	return p->xid && p->ops == p->xops ? p->xops : p->ops;
}

/* The librdmacm transport, if the kernel's CM is there to talk to. */
static const struct rdmarw__cm_ops *x_transport(void)
{
	size_t i;

	for (i = 0; i < sizeof(cm_transports) / sizeof(cm_transports[0]); i++)
		if (cm_transports[i]->x_available &&
		    cm_transports[i]->x_available())
			return cm_transports[i];
	return NULL;
}

/* Destroy a detached librdmacm id through the table that has them. */
static void destroy_xid(struct rdmarw__cm_xid *x)
{
	size_t i;

	for (i = 0; i < sizeof(cm_transports) / sizeof(cm_transports[0]); i++)
		if (cm_transports[i]->x_destroy) {
			cm_transports[i]->x_destroy(x);
			return;
		}
}

/* Cut @p from its librdmacm id, destroyed by cm_unlock() (cm.lock held):
 * from here on no event of it reaches @p. */
static void detach_xid(struct cm_id_priv *p)
{
	if (!p->xid)
		return;
	p->xid->owner = NULL;
	p->xid->reap = cm.reap;
	cm.reap = p->xid;
	p->xid = NULL;
}

/* Drop cm.lock, then destroy the librdmacm ids detached meanwhile (that
 * waits for librdmacm and its event thread, which takes cm.lock). */
static void cm_unlock(void)
{
	struct rdmarw__cm_xid *x = cm.reap, *next;

	cm.reap = NULL;
	pthread_mutex_unlock(&cm.lock);
	for (; x; x = next) {
		next = x->reap;
		destroy_xid(x);
	}
}

static bool in_cm_thread(void)
{
	return cm.started && pthread_equal(pthread_self(), cm.thread);
}

/* Is @p a live id (a second destroy, or a stale pointer, is not)? */
static bool id_live(struct cm_id_priv *p)
{
	struct cm_id_priv *q, *n;

	list_for_each_entry_safe(q, n, &cm.ids, entry)
		if (q == p)
			return true;
	return false;
}

bool rdmarw__cm_iwarp(struct cm_id_priv *p)
{
	return p->id.device &&
	       rdma_protocol_iwarp(p->id.device, p->id.port_num ?: 1);
}

/* ---- the event queue and the CM thread ---------------------------------- */

struct cm_work *rdmarw__cm_queue_event(struct cm_id_priv *p,
				       enum rdma_cm_event_type type, int status)
{
	struct cm_work *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL; /* the event is lost, as under memory pressure */
	w->id = p;
	w->ev.event = type;
	w->ev.status = status;
	list_add_tail(&w->entry, &cm.queue);
	pthread_cond_broadcast(&cm.cond);
	return w;
}

/* Copy private data, padded to the wire's field on IB (@wire nonzero). */
void rdmarw__cm_work_pdata(struct cm_work *w, const void *data, u32 len,
			   u32 wire)
{
	if (!w)
		return;
	if (len > sizeof(w->pdata))
		len = sizeof(w->pdata);
	if (data && len)
		memcpy(w->pdata, data, len);
	w->ev.param.conn.private_data_len = (u8)(wire ? wire : len);
}

/* Drop the queued events of @p (cm.lock held). */
static void drop_events(struct cm_id_priv *p)
{
	struct cm_work *w, *n;

	list_for_each_entry_safe(w, n, &cm.queue, entry)
		if (w->id == p) {
			list_del(&w->entry);
			free(w);
		}
}

void rdmarw__cm_qp_to_err(struct cm_id_priv *p)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	pthread_mutex_lock(&p->qp_lock);
	if (p->id.qp)
		ib_modify_qp(p->id.qp, &attr, IB_QP_STATE);
	pthread_mutex_unlock(&p->qp_lock);
}

/* The access flags a connected QP gets (cm.lock need not be held). */
static int cm_qp_access(struct cm_id_priv *p)
{
	int flags = IB_ACCESS_REMOTE_WRITE;

	if (p->resp_res || rdmarw__cm_iwarp(p))
		flags |= IB_ACCESS_REMOTE_READ;
	return flags;
}

int rdmarw__cm_qp_to_rtr(struct cm_id_priv *p, u32 dest_qpn)
{
	struct ib_qp_attr attr = { 0 };
	int ret = -EINVAL;

	attr.qp_access_flags = cm_qp_access(p);
	attr.qp_state = IB_QPS_RTR;
	attr.dest_qp_num = dest_qpn;
	attr.max_dest_rd_atomic = p->resp_res;
	pthread_mutex_lock(&p->qp_lock);
	if (p->id.qp)
		ret = ib_modify_qp(p->id.qp, &attr,
				   IB_QP_STATE | IB_QP_DEST_QPN |
					   IB_QP_ACCESS_FLAGS |
					   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_AV |
					   IB_QP_PATH_MTU | IB_QP_RQ_PSN |
					   IB_QP_MIN_RNR_TIMER);
	pthread_mutex_unlock(&p->qp_lock);
	return ret;
}

int rdmarw__cm_qp_rtr_to_rts(struct cm_id_priv *p)
{
	struct ib_qp_attr attr = { 0 };
	int ret = -EINVAL;

	attr.qp_state = IB_QPS_RTS;
	attr.max_rd_atomic = p->init_depth;
	pthread_mutex_lock(&p->qp_lock);
	if (p->id.qp)
		ret = ib_modify_qp(p->id.qp, &attr,
				   IB_QP_STATE | IB_QP_MAX_QP_RD_ATOMIC |
					   IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
					   IB_QP_RNR_RETRY | IB_QP_SQ_PSN);
	pthread_mutex_unlock(&p->qp_lock);
	return ret;
}

int rdmarw__cm_qp_to_rts(struct cm_id_priv *p, u32 dest_qpn)
{
	int ret = rdmarw__cm_qp_to_rtr(p, dest_qpn);

	return ret ?: rdmarw__cm_qp_rtr_to_rts(p);
}

static void destroy_locked(struct cm_id_priv *p);

/* The mask of the move to INIT (rdma_create_qp()), as the kernel's. */
#define CM_INIT_MASK \
	(IB_QP_STATE | IB_QP_ACCESS_FLAGS | IB_QP_PORT | IB_QP_PKEY_INDEX)

/*
 * A librdmacm id moves its QP to RTR and RTS itself (in user space for
 * IB/RoCE, in the kernel for iWARP) before ESTABLISHED: the two moves are
 * recorded through the one writer of QP state, with the masks the kernel's
 * table requires of them.  A QP the device put in ERR meanwhile stays ERR.
 */
static void record_rts(struct ib_qp *qp)
{
	if (rdmarw__qp_move(qp, IB_QPS_RTR,
			    IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
				    IB_QP_DEST_QPN | IB_QP_RQ_PSN |
				    IB_QP_MAX_DEST_RD_ATOMIC |
				    IB_QP_MIN_RNR_TIMER,
			    NULL))
		return;
	rdmarw__qp_move(qp, IB_QPS_RTS,
			IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |
				IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
				IB_QP_TIMEOUT,
			NULL);
}

/* CM_ACT_RTS on the active side (cm.lock held, dropped meanwhile). */
static bool work_rts(struct cm_work *w)
{
	struct cm_id_priv *a = w->id, *c;
	int ret;

	pthread_mutex_unlock(&cm.lock);
	ret = rdmarw__cm_qp_to_rts(a, w->dest_qpn);
	pthread_mutex_lock(&cm.lock);
	c = a->peer;
	if (a->state != CM_CONNECT || !c) {
		/* torn down meanwhile: the teardown queued what it meant */
		rdmarw__cm_qp_to_err(a);
		return false;
	}
	if (ret) {
		w->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		w->ev.status = ret;
		w->ev.param.conn.private_data_len = 0;
		a->peer = NULL;
		c->peer = NULL;
		w = rdmarw__cm_queue_event(c, RDMA_CM_EVENT_CONNECT_ERROR,
					   -ECONNRESET);
		if (w)
			w->action = CM_ACT_ERR;
		return true;
	}
	a->established = true;
	c->established = true;
	rdmarw__cm_queue_event(c, RDMA_CM_EVENT_ESTABLISHED, 0); /* the RTU */
	return true;
}

static void *cm_main(void *arg)
{
	struct cm_id_priv *p;
	struct cm_work *w;
	int ret;

	pthread_mutex_lock(&cm.lock);
	for (;;) {
		while (!cm.stop && list_empty(&cm.queue))
			pthread_cond_wait(&cm.cond, &cm.lock);
		if (cm.stop && list_empty(&cm.queue))
			break;
		w = list_first_entry(&cm.queue, struct cm_work, entry);
		list_del(&w->entry);
		p = w->id;
		p->in_handler = true; /* destroy waits from here on */
		cm.running = p;
		if (w->action == CM_ACT_RTS && !work_rts(w))
			goto done;
		if (w->action == CM_ACT_ATTACH && !p->ops->attach(p, w))
			goto done;
		if (w->action == CM_ACT_ERR) {
			pthread_mutex_unlock(&cm.lock);
			rdmarw__cm_qp_to_err(p);
			pthread_mutex_lock(&cm.lock);
		}
		if (w->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST)
			p->listener = NULL; /* the child is the ULP's now */
		if (p->destroy_pending)
			goto done;
		w->ev.param.conn.private_data =
			w->ev.param.conn.private_data_len ? w->pdata : NULL;
		pthread_mutex_unlock(&cm.lock);
		ret = p->id.event_handler(&p->id, &w->ev);
		pthread_mutex_lock(&cm.lock);
		if (ret)
			p->destroy_pending = true;
	done:
		free(w);
		p->in_handler = false;
		cm.running = NULL;
		pthread_cond_broadcast(&cm.cond);
		if (p->destroy_pending && !p->destroy_waiter)
			destroy_locked(p);
		if (cm.reap) {
			cm_unlock();
			pthread_mutex_lock(&cm.lock);
		}
	}
	pthread_mutex_unlock(&cm.lock);
	return arg;
}

static void cm_stop(void) __attribute__((destructor));
static void cm_stop(void)
{
	pthread_mutex_lock(&cm.lock);
	if (!cm.started || in_cm_thread()) {
		pthread_mutex_unlock(&cm.lock);
		return;
	}
	cm.stop = true;
	pthread_cond_broadcast(&cm.cond);
	pthread_mutex_unlock(&cm.lock);
	pthread_join(cm.thread, NULL);
	cm.started = false;
}

/* Start the CM thread once (cm.lock held). */
static int cm_start(void)
{
	if (cm.started)
		return 0;
	cm.start_err = -pthread_create(&cm.thread, NULL, cm_main, NULL);
	if (!cm.start_err)
		cm.started = true;
	return cm.start_err;
}

/* ---- addresses ---------------------------------------------------------- */

static u16 sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static void sa_set_port(struct sockaddr_storage *ss, u16 port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static bool sa_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(
		&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

u32 rdmarw__cm_ib_pdata_size(enum rdmarw__cm_msg msg)
{
	switch (msg) {
	case RDMARW_CM_REQ:
		return IB_CM_REQ_PRIVATE_DATA_SIZE - RDMA_CM_CMA_HDR_SIZE;
	case RDMARW_CM_REP:
		return IB_CM_REP_PRIVATE_DATA_SIZE;
	case RDMARW_CM_REJ:
		return IB_CM_REJ_PRIVATE_DATA_SIZE;
	}
	return 0;
}

static bool sa_copy(struct sockaddr_storage *dst, const struct sockaddr *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->sa_family == AF_INET)
		memcpy(dst, src, sizeof(struct sockaddr_in));
	else if (src->sa_family == AF_INET6)
		memcpy(dst, src, sizeof(struct sockaddr_in6));
	else
		return false;
	return true;
}

/* Do the local addresses of @p and @q overlap (same port assumed)? */
static bool addr_overlap(struct cm_id_priv *p, struct cm_id_priv *q)
{
	const struct sockaddr_storage *a = &p->id.route.addr.src_addr;
	const struct sockaddr_storage *b = &q->id.route.addr.src_addr;

	if (a->ss_family != b->ss_family) {
		/* an IPv6 wildcard takes IPv4 too unless it is afonly */
		const struct cm_id_priv *six = a->ss_family == AF_INET6 ? p : q;

		return sa_any(&six->id.route.addr.src_addr) && !six->afonly;
	}
	return sa_any(a) || sa_any(b) || rdmarw__same_addr(a, b);
}

/* Another id bound to @p's address and port that @p may not share with. */
static bool port_taken(struct cm_id_priv *p, bool listening)
{
	struct cm_id_priv *q, *n;

	list_for_each_entry_safe(q, n, &cm.ids, entry) {
		if (q == p || q->is_child || q->state == CM_IDLE ||
		    q->state == CM_DESTROYING ||
		    sa_port(&q->id.route.addr.src_addr) !=
			    sa_port(&p->id.route.addr.src_addr) ||
		    !addr_overlap(p, q))
			continue;
		if (!listening && p->reuseaddr && q->reuseaddr &&
		    q->state != CM_LISTEN)
			continue;
		return true;
	}
	return false;
}

/* Bind @p to an address of an ibv device through librdmacm. */
static int bind_x(struct cm_id_priv *p, const struct rdmarw__cm_ops *xt,
		  const struct sockaddr_storage *ss)
{
	struct sockaddr_storage bound;
	struct ib_device *dev = NULL;
	int ret;

	ret = xt->x_bind(&p->xid, p, p->id.ps, (const struct sockaddr *)ss,
			 &dev, &bound);
	if (ret)
		return ret;
	p->xops = xt;
	if (!dev) {
		detach_xid(p);
		return -EADDRNOTAVAIL;
	}
	p->id.route.addr.src_addr = bound;
	set_device(p, dev);
	p->state = CM_ADDR_BOUND;
	return 0;
}

/*
 * Bind @p to @ss (port 0: a free port); cm.lock held.  An address no
 * software device has goes to librdmacm; a wildcard bound with @want_x
 * (bind, listen) gets a librdmacm id on the same port too when the kernel
 * takes it, so that a wildcard listener hears ibv devices as well.
 */
static int bind_locked(struct cm_id_priv *p, const struct sockaddr_storage *ss,
		       bool want_x)
{
	const struct rdmarw__cm_ops *xt;
	struct sockaddr_storage bound;
	struct ib_device *dev = NULL;
	unsigned int tries;
	size_t i;

	if (!sa_any(ss)) {
		for (i = 0; !dev && i < sizeof(cm_transports) /
						    sizeof(cm_transports[0]);
		     i++)
			dev = cm_transports[i]->bind(
				(const struct sockaddr *)ss);
		if (dev && !ops_of(dev))
			dev = NULL; /* the CM does not serve it */
		if (!dev && (xt = x_transport()))
			return bind_x(p, xt, ss);
		if (!dev)
			return -EADDRNOTAVAIL;
	}
	p->id.route.addr.src_addr = *ss;
	p->port_auto = !sa_port(ss);
	if (!sa_port(ss)) {
		for (tries = 0; tries < 28232; tries++) {
			sa_set_port(&p->id.route.addr.src_addr, cm.next_port);
			cm.next_port = cm.next_port >= 60999 ? 32768 :
							       cm.next_port + 1;
			if (!port_taken(p, false))
				break;
		}
		if (tries == 28232)
			return -EADDRINUSE;
	} else if (port_taken(p, false)) {
		return -EADDRINUSE;
	}
	if (dev) {
		set_device(p, dev);
	} else if (want_x && (xt = x_transport()) &&
		   !xt->x_bind(
			   &p->xid, p, p->id.ps,
			   (const struct sockaddr *)&p->id.route.addr.src_addr,
			   &dev, &bound)) {
		p->xops = xt;
	}
	p->state = CM_ADDR_BOUND;
	return 0;
}

struct cm_id_priv *rdmarw__cm_new_child(struct cm_id_priv *l,
					struct ib_device *dev,
					const struct sockaddr_storage *src,
					const struct sockaddr_storage *dst)
{
	struct cm_id_priv *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->id.event_handler = l->id.event_handler;
	c->id.context = l->id.context;
	c->id.ps = l->id.ps;
	c->id.qp_type = l->id.qp_type;
	set_device(c, dev);
	c->id.route.addr.src_addr = *src;
	c->id.route.addr.dst_addr = *dst;
	c->id.route.addr.dev_addr.net = &init_net;
	c->id.route.num_pri_alt_paths = 1;
	c->state = CM_CONNECT;
	c->is_child = true;
	c->listener = l;
	pthread_mutex_init(&c->qp_lock, NULL);
	list_add_tail(&c->entry, &cm.ids);
	return c;
}

void rdmarw__cm_lock(void)
{
	pthread_mutex_lock(&cm.lock);
}

void rdmarw__cm_unlock(void)
{
	pthread_mutex_unlock(&cm.lock);
}

/* ---- ids ---------------------------------------------------------------- */

struct rdma_cm_id *rdma_create_id(struct net *net,
				  rdma_cm_event_handler event_handler,
				  void *context, enum rdma_ucm_port_space ps,
				  enum ib_qp_type qp_type)
{
	struct cm_id_priv *p;
	int ret;

	if (!event_handler || (net && net != &init_net))
		return ERR_PTR(-EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB && ps != RDMA_PS_IPOIB &&
	    ps != RDMA_PS_UDP)
		return ERR_PTR(-EINVAL);
	if (ps == RDMA_PS_UDP || qp_type != IB_QPT_RC)
		return ERR_PTR(-EOPNOTSUPP);
	p = calloc(1, sizeof(*p));
	if (!p)
		return ERR_PTR(-ENOMEM);
	p->id.event_handler = event_handler;
	p->id.context = context;
	p->id.ps = ps;
	p->id.qp_type = qp_type;
	p->id.route.addr.dev_addr.net = &init_net;
	p->state = CM_IDLE;
	pthread_mutex_init(&p->qp_lock, NULL);
	pthread_mutex_lock(&cm.lock);
	ret = cm_start();
	if (!ret)
		list_add_tail(&p->entry, &cm.ids);
	pthread_mutex_unlock(&cm.lock);
	if (ret) {
		pthread_mutex_destroy(&p->qp_lock);
		free(p);
		return ERR_PTR(ret);
	}
	return &p->id;
}

/* Break @p's connection (cm.lock held): tell the peer what it means. */
void rdmarw__cm_break_peer(struct cm_id_priv *p)
{
	struct cm_id_priv *q = p->peer;
	struct cm_work *w;

	if (!q)
		return;
	p->peer = NULL;
	q->peer = NULL;
	if (p->established) {
		if (q->state == CM_CONNECT)
			q->state = CM_DISCONNECT;
		w = rdmarw__cm_queue_event(q, RDMA_CM_EVENT_DISCONNECTED, 0);
		if (w)
			w->action = CM_ACT_ERR;
		if (!rdmarw__cm_iwarp(q))
			rdmarw__cm_queue_event(q, RDMA_CM_EVENT_TIMEWAIT_EXIT,
					       0);
	} else if (p->is_child) {
		/* an unanswered (or accepted, not yet established) child */
		if (rdmarw__cm_iwarp(q))
			w = rdmarw__cm_queue_event(q, RDMA_CM_EVENT_REJECTED,
						   -ECONNREFUSED);
		else
			w = rdmarw__cm_queue_event(q, RDMA_CM_EVENT_REJECTED,
						   IB_CM_REJ_CONSUMER_DEFINED);
		rdmarw__cm_work_pdata(
			w, NULL, 0,
			rdmarw__cm_iwarp(q) ? 0 : IB_CM_REJ_PRIVATE_DATA_SIZE);
		q->answered = true;
	} else {
		/* the requester went away before the connection was up */
		if (rdmarw__cm_iwarp(q))
			w = rdmarw__cm_queue_event(
				q, RDMA_CM_EVENT_CONNECT_ERROR, -ECONNRESET);
		else
			w = rdmarw__cm_queue_event(q, RDMA_CM_EVENT_REJECTED,
						   IB_CM_REJ_TIMEOUT);
		if (w)
			w->action = CM_ACT_ERR;
		q->answered = true;
	}
}

/* Let every table that keeps something for @p drop it (cm.lock held). */
static void release_transport(struct cm_id_priv *p)
{
	size_t i;

	for (i = 0; i < sizeof(cm_transports) / sizeof(cm_transports[0]); i++)
		if (cm_transports[i]->release)
			cm_transports[i]->release(p);
}

/* Open what listens for @p in its table, or in each for a wildcard. */
static int listen_transport(struct cm_id_priv *p, int backlog)
{
	size_t i;
	int ret = 0;

	if (p->ops)
		return p->ops->listen ? p->ops->listen(p, backlog) : 0;
	for (i = 0;
	     !ret && i < sizeof(cm_transports) / sizeof(cm_transports[0]); i++)
		if (cm_transports[i]->listen)
			ret = cm_transports[i]->listen(p, backlog);
	return ret;
}

/* Destroy @p (cm.lock held; no handler of @p runs). */
static void destroy_locked(struct cm_id_priv *p)
{
	struct cm_id_priv *q, *n;

	p->state = CM_DESTROYING;
	drop_events(p);
	/* children whose request this listener never saw */
	list_for_each_entry_safe(q, n, &cm.ids, entry)
		if (q->listener == p && !q->in_handler) {
			q->listener = NULL;
			destroy_locked(q);
		}
	rdmarw__cm_break_peer(p);
	detach_xid(p);
	release_transport(p);
	set_device(p, NULL);
	list_del(&p->entry);
	/* a QP left to its ULP (ib_destroy_qp() later) forgets the id */
	pthread_mutex_lock(&p->qp_lock);
	if (p->id.qp)
		p->id.qp->rdmarw_owner = NULL;
	pthread_mutex_unlock(&p->qp_lock);
	pthread_mutex_destroy(&p->qp_lock);
	free(p);
}

void rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id_priv *p;

	if (!id)
		return;
	p = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	if (!id_live(p) || p->state == CM_DESTROYING || p->destroy_pending) {
		pthread_mutex_unlock(&cm.lock);
		return;
	}
	if (cm.running == p && in_cm_thread()) {
		p->destroy_pending = true; /* from its own handler */
		pthread_mutex_unlock(&cm.lock);
		return;
	}
	p->destroy_pending = true; /* no event is delivered from now on */
	p->destroy_waiter = true; /* and this thread frees the id */
	drop_events(p);
	while (p->in_handler)
		pthread_cond_wait(&cm.cond, &cm.lock);
	destroy_locked(p);
	cm_unlock();
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	int ret;

	if (!id || !addr)
		return -EINVAL;
	if (!sa_copy(&ss, addr))
		return -EAFNOSUPPORT;
	pthread_mutex_lock(&cm.lock);
	ret = to_priv(id)->state == CM_IDLE ?
		      bind_locked(to_priv(id), &ss, true) :
		      -EINVAL;
	cm_unlock();
	return ret;
}

static void wildcard(struct sockaddr_storage *ss, sa_family_t family)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = family;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		      const struct sockaddr *dst_addr, unsigned long timeout_ms)
{
	struct ib_device *src_dev = NULL, *dst_dev = NULL;
	struct sockaddr_storage ss, dst, src;
	const struct rdmarw__cm_ops *ops, *xt;
	const struct sockaddr *src_sa;
	struct cm_id_priv *p;
	int ret = 0, status;
	size_t i;

	if (!id || !dst_addr)
		return -EINVAL;
	if (!sa_copy(&dst, dst_addr))
		return -EAFNOSUPPORT;
	if (src_addr && !sa_copy(&ss, src_addr))
		return -EAFNOSUPPORT;
	if (!src_addr)
		wildcard(&ss, dst.ss_family);
	p = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	if (p->state == CM_IDLE)
		ret = bind_locked(p, &ss, false);
	if (!ret && p->state != CM_ADDR_BOUND)
		ret = -EINVAL;
	if (!ret && p->id.route.addr.src_addr.ss_family != dst.ss_family)
		ret = -EINVAL;
	if (ret)
		goto out;
	p->id.route.addr.dst_addr = dst;
	status = -EHOSTUNREACH;
	ops = p->ops;
	if (ops && (status = ops->addr_fault(p->id.device)) == 0)
		status = ops->resolve(p->id.device,
				      (const struct sockaddr *)&dst, &src_dev,
				      &src, &dst_dev);
	for (i = 0; !ops && status &&
		    i < sizeof(cm_transports) / sizeof(cm_transports[0]);
	     i++) {
		status = cm_transports[i]->resolve(
			NULL, (const struct sockaddr *)&dst, &src_dev, &src,
			&dst_dev);
		if (!status) /* asked once: a rule counts each call */
			status = cm_transports[i]->addr_fault(src_dev);
	}
	if (!status && !ops_of(src_dev))
		status = -EHOSTUNREACH; /* a device the CM does not serve */
	if (!status && !ops_of(dst_dev))
		dst_dev = NULL; /* the connect finds nobody */
	xt = p->xops ? p->xops : x_transport();
	if (status && xt && (!p->ops || p->ops == xt)) {
		/* librdmacm's turn: ADDR_RESOLVED or ADDR_ERROR comes from
		 * the kernel; a synchronous failure is its errno, the id
		 * stays bound (the kernel's rdma_resolve_addr()) */
		src_sa = !p->xid && !sa_any(&p->id.route.addr.src_addr) ?
				 (const struct sockaddr *)&p->id.route.addr
					 .src_addr :
				 NULL;
		ret = xt->x_resolve_addr(&p->xid, p, p->id.ps, src_sa,
					 (const struct sockaddr *)&dst,
					 timeout_ms);
		if (!ret) {
			p->xops = xt;
			p->state = CM_ADDR_QUERY;
		}
		goto out;
	}
	if (status) {
		rdmarw__cm_queue_event(p, RDMA_CM_EVENT_ADDR_ERROR, status);
		goto out; /* stays bound, as the kernel's ADDR_QUERY -> BOUND */
	}
	if (!p->id.device) {
		sa_set_port(&src, sa_port(&p->id.route.addr.src_addr));
		p->id.route.addr.src_addr = src;
		set_device(p, src_dev);
	}
	p->dst_dev = dst_dev;
	p->state = CM_ADDR_RESOLVED;
	rdmarw__cm_queue_event(p, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
out:
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

int rdma_resolve_route(struct rdma_cm_id *id, unsigned long timeout_ms)
{
	const struct rdmarw__cm_ops *t;
	struct cm_id_priv *p;
	int ret = -EINVAL;

	if (!id)
		return -EINVAL;
	p = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	t = exch(p);
	if (p->state == CM_ADDR_RESOLVED && t)
		ret = t->resolve_route(p, timeout_ms);
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct sockaddr_storage ss;
	struct cm_id_priv *p;
	int ret = 0;

	if (!id)
		return -EINVAL;
	p = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	if (p->state == CM_IDLE) {
		wildcard(&ss, AF_INET);
		ret = bind_locked(p, &ss, true);
	}
	if (!ret && p->state != CM_ADDR_BOUND)
		ret = -EINVAL;
	if (!ret && port_taken(p, true))
		ret = -EADDRINUSE;
	if (!ret)
		ret = listen_transport(p, backlog);
	if (!ret && p->xid) {
		ret = p->xops->x_listen(p->xid, backlog);
		if (ret && !p->id.device) {
			/* a wildcard: the software devices still hear it */
			detach_xid(p);
			ret = 0;
		}
	}
	if (!ret)
		p->state = CM_LISTEN;
	cm_unlock();
	return ret;
}

/* The listener for a request to @dst on @dev (cm.lock held). */
struct cm_id_priv *rdmarw__cm_find_listener(const struct sockaddr_storage *dst,
					    struct ib_device *dev)
{
	struct cm_id_priv *q, *n, *any = NULL;
	const struct sockaddr_storage *a;

	list_for_each_entry_safe(q, n, &cm.ids, entry) {
		a = &q->id.route.addr.src_addr;
		if (q->state != CM_LISTEN || q->destroy_pending ||
		    sa_port(a) != sa_port(dst))
			continue;
		if (a->ss_family == dst->ss_family &&
		    rdmarw__same_addr(a, dst) && q->id.device == dev)
			return q;
		if (sa_any(a) && (a->ss_family == dst->ss_family ||
				  (a->ss_family == AF_INET6 && !q->afonly)))
			any = q;
	}
	return any;
}

static u32 pdata_max(struct cm_id_priv *p, enum rdmarw__cm_msg msg)
{
	return p->ops ? p->ops->pdata_max(p->id.device, msg) : 0;
}

u32 rdmarw__cm_pdata_wire(struct cm_id_priv *p, enum rdmarw__cm_msg msg)
{
	return p->ops ? p->ops->pdata_wire(p->id.device, msg) : 0;
}

static int connect_locked(struct cm_id_priv *a, struct rdma_conn_param *cp)
{
	const struct rdmarw__cm_ops *t = exch(a);
	bool has_qp;
	int ret;

	if (a->state != CM_ROUTE_RESOLVED || !t)
		return -EINVAL;
	if (cp->private_data_len > pdata_max(a, RDMARW_CM_REQ) ||
	    (cp->private_data_len && !cp->private_data))
		return -EINVAL;
	pthread_mutex_lock(&a->qp_lock);
	has_qp = a->id.qp != NULL;
	pthread_mutex_unlock(&a->qp_lock);
	if (!has_qp)
		return -EINVAL; /* no QP: CONNECT_RESPONSE is not supported */
	a->state = CM_CONNECT;
	a->resp_res = cp->responder_resources;
	a->init_depth = cp->initiator_depth;
	ret = t->connect(a, cp);
	if (ret)
		a->state = CM_ROUTE_RESOLVED;
	return ret;
}

int rdma_connect_locked(struct rdma_cm_id *id,
			struct rdma_conn_param *conn_param)
{
	int ret;

	if (!id || !conn_param)
		return -EINVAL;
	pthread_mutex_lock(&cm.lock);
	ret = connect_locked(to_priv(id), conn_param);
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	return rdma_connect_locked(id, conn_param);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct rdma_conn_param none = { 0 };
	const struct rdmarw__cm_ops *t;
	struct cm_id_priv *c;
	int ret;

	if (!id)
		return -EINVAL;
	c = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	/* iWARP's reply carries IRD/ORD: none given is refused, as cma_accept_iw */
	if (!conn_param && !rdmarw__cm_iwarp(c))
		conn_param = &none;
	t = exch(c);
	if (!conn_param || !c->is_child || c->state != CM_CONNECT ||
	    c->answered || !t ||
	    conn_param->private_data_len > pdata_max(c, RDMARW_CM_REP) ||
	    (conn_param->private_data_len && !conn_param->private_data)) {
		pthread_mutex_unlock(&cm.lock);
		return -EINVAL;
	}
	pthread_mutex_lock(&c->qp_lock);
	ret = c->id.qp ? 0 : -EINVAL;
	pthread_mutex_unlock(&c->qp_lock);
	if (!ret)
		ret = t->accept(c, conn_param); /* may drop cm.lock meanwhile */
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data,
		u8 private_data_len, u8 reason)
{
	const struct rdmarw__cm_ops *t;
	struct cm_id_priv *c;
	int ret;

	if (!id)
		return -EINVAL;
	c = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	t = exch(c);
	if (!c->is_child || c->state != CM_CONNECT || c->answered || !t ||
	    private_data_len > pdata_max(c, RDMARW_CM_REJ) ||
	    (private_data_len && !private_data)) {
		pthread_mutex_unlock(&cm.lock);
		return -EINVAL;
	}
	ret = t->reject(c, private_data, private_data_len, reason);
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	const struct rdmarw__cm_ops *t;
	struct cm_id_priv *p;
	bool was_up, to_err = false;
	int ret;

	if (!id)
		return -EINVAL;
	p = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	t = exch(p);
	if ((!(p->state == CM_CONNECT && p->established) &&
	     p->state != CM_DISCONNECT) ||
	    !t) {
		pthread_mutex_unlock(&cm.lock);
		return -EINVAL;
	}
	was_up = p->state == CM_CONNECT;
	ret = t->disconnect(p, was_up, &to_err);
	if (was_up)
		p->state = CM_DISCONNECT;
	pthread_mutex_unlock(&cm.lock);
	if (to_err)
		rdmarw__cm_qp_to_err(p);
	return ret;
}

int rdmarw__cm_link_down(struct ib_device *dev)
{
	struct cm_id_priv *p, *n;
	struct cm_work *w;
	int count = 0;

	pthread_mutex_lock(&cm.lock);
	list_for_each_entry_safe(p, n, &cm.ids, entry) {
		if (p->id.device != dev || !p->peer || p->destroy_pending ||
		    p->state == CM_DESTROYING)
			continue;
		count++;
		if (p->established) {
			if (p->state == CM_CONNECT)
				p->state = CM_DISCONNECT;
			rdmarw__cm_break_peer(p);
			w = rdmarw__cm_queue_event(
				p, RDMA_CM_EVENT_DISCONNECTED, 0);
			if (w)
				w->action = CM_ACT_ERR;
			if (!rdmarw__cm_iwarp(p))
				rdmarw__cm_queue_event(
					p, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		} else {
			struct cm_id_priv *q = p->peer;

			p->peer = NULL;
			q->peer = NULL;
			p->answered = q->answered = true;
			w = rdmarw__cm_queue_event(
				p,
				p->is_child ? RDMA_CM_EVENT_CONNECT_ERROR :
					      RDMA_CM_EVENT_UNREACHABLE,
				-ETIMEDOUT);
			if (w)
				w->action = CM_ACT_ERR;
			w = rdmarw__cm_queue_event(
				q,
				q->is_child ? RDMA_CM_EVENT_CONNECT_ERROR :
					      RDMA_CM_EVENT_UNREACHABLE,
				-ETIMEDOUT);
			if (w)
				w->action = CM_ACT_ERR;
		}
	}
	pthread_mutex_unlock(&cm.lock);
	return count;
}

/* Are events for ids of @dev queued or being handled (cm.lock held)? */
static bool dev_busy(struct ib_device *dev)
{
	struct cm_work *w, *n;

	if (cm.running && cm.running->id.device == dev)
		return true;
	list_for_each_entry_safe(w, n, &cm.queue, entry)
		if (w->id->id.device == dev)
			return true;
	return false;
}

/*
 * The CM's client (the kernel's cma_client): a device the core adds gets a
 * struct cm_device when a transport owns it; at its removal every id bound
 * to it gets DEVICE_REMOVAL, and the removal waits until their handlers
 * have run (unless it is made from a handler).  Ids still bound after that
 * hold the device: the core then refuses its unregistration (-EBUSY).
 */
static int cm_add_one(struct ib_device *dev)
{
	const struct rdmarw__cm_ops *ops = NULL;
	struct cm_device *cd;
	size_t i;

	for (i = 0;
	     !ops && i < sizeof(cm_transports) / sizeof(cm_transports[0]); i++)
		if (cm_transports[i]->owns(dev))
			ops = cm_transports[i];
	if (!ops)
		return -EOPNOTSUPP;
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return -ENOMEM;
	cd->ops = ops;
	ib_set_client_data(dev, &cm_client, cd);
	return 0;
}

static void cm_remove_one(struct ib_device *dev, void *client_data)
{
	struct cm_device *cd = client_data;
	struct cm_id_priv *p, *n;
	struct cm_work *w;

	pthread_mutex_lock(&cm.lock);
	list_for_each_entry_safe(p, n, &cm.ids, entry) {
		if (p->id.device != dev || p->state == CM_DEVICE_REMOVAL ||
		    p->destroy_pending)
			continue;
		p->state = CM_DEVICE_REMOVAL;
		rdmarw__cm_break_peer(p);
		w = rdmarw__cm_queue_event(p, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
		if (w)
			w->action = CM_ACT_ERR;
	}
	while (!in_cm_thread() && dev_busy(dev))
		pthread_cond_wait(&cm.cond, &cm.lock);
	list_for_each_entry_safe(p, n, &cm.ids, entry)
		if (p->dst_dev == dev)
			p->dst_dev = NULL; /* a later connect is unreachable */
	pthread_mutex_unlock(&cm.lock);
	if (cd && cd->ops->forget)
		cd->ops->forget(dev);
	free(cd);
}

static struct ib_client cm_client = {
	.name = "cma",
	.add = cm_add_one,
	.remove = cm_remove_one,
};

/* The kernel's cma_init(): the CM is a client from the library's load. */
static void cm_init(void) __attribute__((constructor));
static void cm_init(void)
{
	if (ib_register_client(&cm_client))
		rdmarw__log(RDMARW_LOG_ERR,
			    "the connection manager could not register");
}

/* ---- events from librdmacm (cm_ibv.h) --------------------------------- */

/* A CONNECT_REQUEST's child on listener @l (cm.lock held). */
static struct cm_id_priv *x_child(struct cm_id_priv *l,
				  const struct rdmarw__cm_xev *e)
{
	struct cm_id_priv *c;

	/* on the device the request came on (its librdmacm verbs context) */
	c = rdmarw__cm_new_child(l, e->dev, &e->src, &e->dst);
	if (!c)
		return NULL;
	c->xops = l->xops;
	c->xid = e->child;
	e->child->owner = c;
	return c;
}

bool rdmarw__cm_xid_event(struct rdmarw__cm_xid *x,
			  const struct rdmarw__cm_xev *e)
{
	enum cm_action act = CM_ACT_NONE;
	struct cm_id_priv *p;
	bool taken = false;
	struct cm_work *w;
	int type = e->event, status = e->status;

	pthread_mutex_lock(&cm.lock);
	p = x->owner;
	if (!p || p->state == CM_DESTROYING || p->destroy_pending)
		goto out; /* destroyed meanwhile: nothing is delivered */
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (p->state != CM_ADDR_QUERY)
			goto out;
		if (!e->dev) {
			/* a device rdmarw cannot open */
			p->state = CM_ADDR_BOUND;
			type = RDMA_CM_EVENT_ADDR_ERROR;
			status = -ENODEV;
			break;
		}
		set_device(p, e->dev);
		p->id.route.addr.src_addr = e->src;
		p->state = CM_ADDR_RESOLVED;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		if (p->state != CM_ADDR_QUERY)
			goto out;
		p->state = CM_ADDR_BOUND;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (p->state != CM_ROUTE_QUERY)
			goto out;
		p->state = CM_ROUTE_RESOLVED;
		p->id.route.num_pri_alt_paths = 1;
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		if (p->state != CM_ROUTE_QUERY)
			goto out;
		p->state = CM_ADDR_RESOLVED;
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (p->state != CM_LISTEN || !e->child || !e->dev)
			goto out;
		p = x_child(p, e);
		if (!p)
			goto out;
		taken = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (p->state != CM_CONNECT)
			goto out;
		p->established = true;
		p->answered = true;
		/* librdmacm (IB, RoCE) or the kernel (iWARP) moved it */
		pthread_mutex_lock(&p->qp_lock);
		if (p->id.qp)
			record_rts(p->id.qp);
		pthread_mutex_unlock(&p->qp_lock);
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (p->state != CM_CONNECT)
			goto out;
		p->answered = true;
		act = CM_ACT_ERR;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (p->state == CM_CONNECT)
			p->state = CM_DISCONNECT;
		act = CM_ACT_ERR;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		p->state = CM_DEVICE_REMOVAL;
		act = CM_ACT_ERR;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		break;
	default:
		goto out; /* CONNECT_RESPONSE (every id has a QP), multicast */
	}
	w = rdmarw__cm_queue_event(p, (enum rdma_cm_event_type)type, status);
	if (w) {
		w->action = act;
		rdmarw__cm_work_pdata(w, e->pdata, e->pdata_len, 0);
		w->ev.param.conn.responder_resources = e->responder_resources;
		w->ev.param.conn.initiator_depth = e->initiator_depth;
		w->ev.param.conn.qp_num = e->qp_num;
	}
out:
	pthread_mutex_unlock(&cm.lock);
	return taken;
}

/* ---- QPs ---------------------------------------------------------------- */

/*
 * ib_destroy_qp() on the QP an id holds (the kernel's ULPs call
 * rdma_destroy_qp()): the id lets go of it, as rdma_destroy_qp() would.
 */
static void id_qp_release(struct rdmarw_qp_owner *owner, struct ib_qp *qp)
{
	struct cm_id_priv *p = container_of(owner, struct cm_id_priv, owner);
	struct rdmarw__cm_xid *xid;

	pthread_mutex_lock(&cm.lock);
	xid = p->xid;
	pthread_mutex_unlock(&cm.lock);
	if (xid) /* as rdma_destroy_qp(): librdmacm first, no lock held */
		p->xops->x_set_qp(xid, NULL);
	pthread_mutex_lock(&p->qp_lock);
	if (p->id.qp == qp)
		p->id.qp = NULL;
	qp->rdmarw_owner = NULL;
	pthread_mutex_unlock(&p->qp_lock);
}

/* The id holds @qp (qp_lock held). */
static void id_hold_qp(struct cm_id_priv *p, struct ib_qp *qp)
{
	p->owner.release = id_qp_release;
	qp->rdmarw_owner = &p->owner;
	p->id.qp = qp;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ib_pd *pd,
		   struct ib_qp_init_attr *qp_init_attr)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT };
	struct rdmarw__cm_xid *xid;
	struct cm_id_priv *p;
	struct ib_qp *qp;
	int ret;

	if (!id || !pd || !qp_init_attr)
		return -EINVAL;
	p = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	ret = p->id.device && p->id.device == pd->device ? 0 : -EINVAL;
	xid = p->xid && p->ops == p->xops ? p->xid : NULL;
	pthread_mutex_unlock(&cm.lock);
	if (ret)
		return ret;
	pthread_mutex_lock(&p->qp_lock);
	if (p->id.qp) {
		ret = -EINVAL;
		goto out;
	}
	qp_init_attr->port_num = p->id.port_num;
	qp = ib_create_qp(pd, qp_init_attr);
	if (IS_ERR(qp)) {
		ret = (int)PTR_ERR(qp);
		goto out;
	}
	if (xid) {
		/* an ibv QP on the librdmacm id's verbs context, given to
		 * that id: librdmacm moves it from here on */
		ret = p->xops->x_attach_qp(xid, qp);
		if (ret) {
			ib_destroy_qp(qp);
			goto out;
		}
		rdmarw__qp_move(qp, IB_QPS_INIT, CM_INIT_MASK, NULL);
		id_hold_qp(p, qp);
		goto out;
	}
	attr.port_num = p->id.port_num;
	ret = ib_modify_qp(qp, &attr, CM_INIT_MASK);
	if (ret)
		ib_destroy_qp(qp);
	else
		id_hold_qp(p, qp);
out:
	pthread_mutex_unlock(&p->qp_lock);
	return ret;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct rdmarw__cm_xid *xid;
	struct cm_id_priv *p;
	struct ib_qp *qp;

	if (!id)
		return;
	p = to_priv(id);
	pthread_mutex_lock(&cm.lock);
	xid = p->xid;
	pthread_mutex_unlock(&cm.lock);
	/* librdmacm lets go of it first (that waits for its event thread:
	 * no lock held) */
	if (xid)
		p->xops->x_set_qp(xid, NULL);
	pthread_mutex_lock(&p->qp_lock);
	qp = p->id.qp;
	if (qp) {
		qp->rdmarw_owner = NULL; /* no release: qp_lock is held */
		if (!ib_destroy_qp(qp))
			p->id.qp = qp = NULL;
		else
			qp->rdmarw_owner = &p->owner;
	}
	pthread_mutex_unlock(&p->qp_lock);
	if (xid && qp)
		p->xops->x_set_qp(xid, qp); /* -EBUSY: still librdmacm's */
}

/* ---- setters ------------------------------------------------------------ */

/*
 * Hand a setter's value to the librdmacm id behind @p, if it has one
 * (cm.lock held): the kernel's id applies it and answers with its own
 * errno when the id's state does not allow it (its rdma_set_afonly() after
 * the bind, for instance).  An id without one records the value only, and
 * the librdmacm id made for it later takes it before its bind or address
 * resolution (rdmarw__cm_xid_options()), which is when the kernel uses
 * REUSEADDR and AFONLY; TOS counts at route resolution, the ACK timeout
 * when the QP goes to RTS.
 */
static int pass_option(struct cm_id_priv *p, enum rdmarw__cm_xopt opt, int val)
{
	int ret = 0;

	if (p->xid && p->xops && p->xops->x_set_option)
		ret = p->xops->x_set_option(p->xid, opt, val);
	if (!ret)
		p->xset |= 1U << opt;
	return ret;
}

void rdmarw__cm_xid_options(void *owner, struct rdmarw__cm_xopts *o)
{
	struct cm_id_priv *p = owner;

	o->set = p->xset;
	o->val[RDMARW_CM_XOPT_TOS] = p->tos;
	o->val[RDMARW_CM_XOPT_REUSEADDR] = p->reuseaddr;
	o->val[RDMARW_CM_XOPT_AFONLY] = p->afonly;
	o->val[RDMARW_CM_XOPT_ACK_TIMEOUT] = p->ack_timeout;
}

int rdma_set_reuseaddr(struct rdma_cm_id *id, int reuse)
{
	int ret = -EINVAL;

	if (!id)
		return -EINVAL;
	pthread_mutex_lock(&cm.lock);
	if (to_priv(id)->state == CM_IDLE) {
		ret = pass_option(to_priv(id), RDMARW_CM_XOPT_REUSEADDR,
				  reuse != 0);
		if (!ret)
			to_priv(id)->reuseaddr = reuse != 0;
	}
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

int rdma_set_afonly(struct rdma_cm_id *id, int afonly)
{
	int ret = -EINVAL;

	if (!id)
		return -EINVAL;
	pthread_mutex_lock(&cm.lock);
	if (to_priv(id)->state == CM_IDLE ||
	    to_priv(id)->state == CM_ADDR_BOUND) {
		ret = pass_option(to_priv(id), RDMARW_CM_XOPT_AFONLY,
				  afonly != 0);
		if (!ret)
			to_priv(id)->afonly = afonly != 0;
	}
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

void rdma_set_service_type(struct rdma_cm_id *id, int tos)
{
	if (!id)
		return;
	pthread_mutex_lock(&cm.lock);
	/* the kernel's setter cannot fail: neither does this one, a value
	 * librdmacm refused stays recorded for the software device only */
	to_priv(id)->tos = tos;
	pass_option(to_priv(id), RDMARW_CM_XOPT_TOS, (u8)tos);
	pthread_mutex_unlock(&cm.lock);
}

int rdma_set_ack_timeout(struct rdma_cm_id *id, u8 timeout)
{
	int ret;

	if (!id || id->qp_type != IB_QPT_RC)
		return -EINVAL;
	pthread_mutex_lock(&cm.lock);
	ret = pass_option(to_priv(id), RDMARW_CM_XOPT_ACK_TIMEOUT, timeout);
	if (!ret)
		to_priv(id)->ack_timeout = timeout;
	pthread_mutex_unlock(&cm.lock);
	return ret;
}

/* librdmacm has no option for it: recorded, used on the software device
 * only (docs/deviations.md). */
int rdma_set_min_rnr_timer(struct rdma_cm_id *id, u8 min_rnr_timer)
{
	if (!id || id->qp_type != IB_QPT_RC)
		return -EINVAL;
	pthread_mutex_lock(&cm.lock);
	to_priv(id)->min_rnr_timer = min_rnr_timer;
	pthread_mutex_unlock(&cm.lock);
	return 0;
}

__be64 rdma_get_service_id(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	u16 port = 0;

	if (addr && sa_copy(&ss, addr))
		port = sa_port(&ss);
	return (__be64)htobe64(((u64)(id ? id->ps : 0) << 16) | port);
}

/* ---- messages ----------------------------------------------------------- */

const char *rdma_event_msg(enum rdma_cm_event_type event)
{
	static const char *const msg[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "address resolved",
		[RDMA_CM_EVENT_ADDR_ERROR] = "address error",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "route resolved",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "route error",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "connect request",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "connect response",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "connect error",
		[RDMA_CM_EVENT_UNREACHABLE] = "unreachable",
		[RDMA_CM_EVENT_REJECTED] = "rejected",
		[RDMA_CM_EVENT_ESTABLISHED] = "established",
		[RDMA_CM_EVENT_DISCONNECTED] = "disconnected",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "device removal",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "multicast join",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "multicast error",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "address change",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "timewait exit",
	};

	if ((unsigned int)event < sizeof(msg) / sizeof(msg[0]) && msg[event])
		return msg[event];
	return "unrecognized event";
}

static const char *ib_rej_msg(int reason)
{
	static const char *const msg[] = {
		[IB_CM_REJ_NO_QP] = "no QP",
		[IB_CM_REJ_NO_EEC] = "no EEC",
		[IB_CM_REJ_NO_RESOURCES] = "no resources",
		[IB_CM_REJ_TIMEOUT] = "timeout",
		[IB_CM_REJ_UNSUPPORTED] = "unsupported request",
		[IB_CM_REJ_INVALID_COMM_ID] = "invalid comm ID",
		[IB_CM_REJ_INVALID_COMM_INSTANCE] = "invalid comm instance",
		[IB_CM_REJ_INVALID_SERVICE_ID] = "invalid service ID",
		[IB_CM_REJ_INVALID_TRANSPORT_TYPE] = "invalid transport type",
		[IB_CM_REJ_STALE_CONN] = "stale conn",
		[IB_CM_REJ_RDC_NOT_EXIST] = "RDC not exist",
		[IB_CM_REJ_INVALID_GID] = "invalid GID",
		[IB_CM_REJ_INVALID_LID] = "invalid LID",
		[IB_CM_REJ_INVALID_SL] = "invalid SL",
		[IB_CM_REJ_INVALID_TRAFFIC_CLASS] = "invalid traffic class",
		[IB_CM_REJ_INVALID_HOP_LIMIT] = "invalid hop limit",
		[IB_CM_REJ_INVALID_PACKET_RATE] = "invalid packet rate",
		[IB_CM_REJ_INVALID_ALT_GID] = "invalid alt GID",
		[IB_CM_REJ_INVALID_ALT_LID] = "invalid alt LID",
		[IB_CM_REJ_INVALID_ALT_SL] = "invalid alt SL",
		[IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS] =
			"invalid alt traffic class",
		[IB_CM_REJ_INVALID_ALT_HOP_LIMIT] = "invalid alt hop limit",
		[IB_CM_REJ_INVALID_ALT_PACKET_RATE] = "invalid alt packet rate",
		[IB_CM_REJ_PORT_CM_REDIRECT] = "port CM redirect",
		[IB_CM_REJ_PORT_REDIRECT] = "port redirect",
		[IB_CM_REJ_INVALID_MTU] = "invalid MTU",
		[IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES] =
			"insufficient resp resources",
		[IB_CM_REJ_CONSUMER_DEFINED] = "consumer defined",
		[IB_CM_REJ_INVALID_RNR_RETRY] = "invalid RNR retry",
		[IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID] = "duplicate local comm ID",
		[IB_CM_REJ_INVALID_CLASS_VERSION] = "invalid class version",
		[IB_CM_REJ_INVALID_FLOW_LABEL] = "invalid flow label",
		[IB_CM_REJ_INVALID_ALT_FLOW_LABEL] = "invalid alt flow label",
		[IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED] =
			"vendor option is not supported",
	};

	if (reason >= 0 && (size_t)reason < sizeof(msg) / sizeof(msg[0]) &&
	    msg[reason])
		return msg[reason];
	return "unrecognized reason";
}

static const char *iw_rej_msg(int reason)
{
	switch (reason) {
	case -ECONNRESET:
		return "reset by remote host";
	case -ECONNREFUSED:
		return "refused by remote application";
	case -ETIMEDOUT:
		return "setup timeout";
	default:
		return "unrecognized reason";
	}
}

const char *rdma_reject_msg(struct rdma_cm_id *id, int reason)
{
	if (!id || !id->device)
		return "unrecognized transport";
	return rdmarw__cm_iwarp(to_priv(id)) ? iw_rej_msg(reason) :
					       ib_rej_msg(reason);
}

bool rdma_is_consumer_reject(struct rdma_cm_id *id, int reason)
{
	if (!id || !id->device)
		return false;
	return rdmarw__cm_iwarp(to_priv(id)) ?
		       reason == -ECONNREFUSED :
		       reason == IB_CM_REJ_CONSUMER_DEFINED;
}

const void *rdma_consumer_reject_data(struct rdma_cm_id *id,
				      struct rdma_cm_event *ev, u8 *data_len)
{
	if (!ev || !data_len || !rdma_is_consumer_reject(id, ev->status))
		return NULL;
	*data_len = ev->param.conn.private_data_len;
	return ev->param.conn.private_data;
}

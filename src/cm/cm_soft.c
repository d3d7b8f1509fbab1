// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager's software-device side: addresses looked up in
 * each fabric's address space (the devices' own tables, soft_device.c), the
 * CM fault rules, and the transport table that gives each profile its
 * private-data limits.
 */
#include "cm/cm.h"
#include "soft/soft_loc.h"

#include <netinet/in.h>

/**
 * struct cm_soft_rule - an armed CM fault rule
 * @entry: cm_soft.rules
 * @dev: the device
 * @rule: as armed
 * @seen: events of its type counted since arming
 */
struct cm_soft_rule {
	struct list_head entry;
	struct ib_device *dev;
	struct soft_cm_fault rule;
	u32 seen;
};

static struct {
	pthread_mutex_t lock;
	struct list_head rules;
} cm_soft = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.rules = LIST_HEAD_INIT(cm_soft.rules),
};

/*
 * ---- addresses: read from the devices (rdmarw__device_addr_walk()) -------
 * A software device's addresses live in its fabric's address space
 * (soft_device_add_addr(), soft_device.c).
 */

/**
 * struct addr_query - a walk over the devices' addresses
 * @ss: the address looked for (port 0)
 * @space: the fabric to look in, or NULL for any
 * @not_dev: if set, look instead for the first address of @space of
 *           another device than this one, in @family (a source)
 * @family: see @not_dev
 * @dev: the device found
 * @found: its address
 * @found_space: its fabric
 */
struct addr_query {
	const struct sockaddr_storage *ss;
	const void *space;
	struct ib_device *not_dev;
	sa_family_t family;
	struct ib_device *dev;
	struct sockaddr_storage found;
	const void *found_space;
};

static int addr_match(struct ib_device *dev, const void *space,
		      const struct sockaddr_storage *ss, void *arg)
{
	struct addr_query *q = arg;

	/* a TCP device's addresses are the MPA table's (cm_mpa.c) */
	if (!soft_device_is_soft(dev) || rdmarw__cm_dev_tcp(dev) ||
	    (q->space && space != q->space))
		return 0;
	if (q->not_dev ? dev == q->not_dev || ss->ss_family != q->family :
			 !rdmarw__same_addr(ss, q->ss))
		return 0;
	q->dev = dev;
	q->found = *ss;
	q->found_space = space;
	return 1;
}

/* The software device that answers @q (NULL: none). */
static struct ib_device *addr_find(struct addr_query *q)
{
	q->dev = NULL;
	rdmarw__device_addr_walk(addr_match, q);
	return q->dev;
}

/* ---- faults ------------------------------------------------------------- */

int soft_cm_fault_arm(struct ib_device *dev, const struct soft_cm_fault *fault)
{
	struct cm_soft_rule *r, *q, *n;
	unsigned int armed = 0;

	if (!soft_device_is_soft(dev) || !fault ||
	    (unsigned int)fault->type >= SOFT_CM_FAULT_NR)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->dev = dev;
	r->rule = *fault;
	pthread_mutex_lock(&cm_soft.lock);
	list_for_each_entry_safe(q, n, &cm_soft.rules, entry)
		armed += q->dev == dev;
	if (armed < SOFT_FAULT_MAX_RULES) {
		list_add_tail(&r->entry, &cm_soft.rules);
		r = NULL;
	}
	pthread_mutex_unlock(&cm_soft.lock);
	if (r) {
		free(r);
		return -ENOSPC;
	}
	return 0;
}

/* Drop @dev's rules. */
static void soft_forget(struct ib_device *dev)
{
	struct cm_soft_rule *r, *n;

	pthread_mutex_lock(&cm_soft.lock);
	list_for_each_entry_safe(r, n, &cm_soft.rules, entry)
		if (r->dev == dev) {
			list_del(&r->entry);
			free(r);
		}
	pthread_mutex_unlock(&cm_soft.lock);
}

int soft_cm_fault_clear(struct ib_device *dev)
{
	struct cm_soft_rule *r, *n;

	if (!soft_device_is_soft(dev))
		return -EINVAL;
	pthread_mutex_lock(&cm_soft.lock);
	list_for_each_entry_safe(r, n, &cm_soft.rules, entry)
		if (r->dev == dev) {
			list_del(&r->entry);
			free(r);
		}
	pthread_mutex_unlock(&cm_soft.lock);
	return 0;
}

int soft_cm_link_down(struct ib_device *dev)
{
	if (!soft_device_is_soft(dev))
		return -EINVAL;
	return rdmarw__cm_link_down(dev);
}

/*
 * Count an event of @type on @dev: the first rule that fires decides.
 * Return: the rule that fired (copied to @out), or false.
 */
static bool fault_fire(struct ib_device *dev, enum soft_cm_fault_type type,
		       struct soft_cm_fault *out)
{
	struct cm_soft_rule *r, *n;
	bool fired = false;

	pthread_mutex_lock(&cm_soft.lock);
	list_for_each_entry_safe(r, n, &cm_soft.rules, entry) {
		if (r->dev != dev || r->rule.type != type)
			continue;
		if (r->rule.nth && ++r->seen < r->rule.nth)
			continue;
		*out = r->rule;
		fired = true;
		if (r->rule.nth) {
			list_del(&r->entry);
			free(r);
		}
		break;
	}
	pthread_mutex_unlock(&cm_soft.lock);
	return fired;
}

/* ---- the transport table ------------------------------------------------ */

static bool soft_owns(const struct ib_device *dev)
{
	return soft_device_is_soft(dev) && !rdmarw__cm_dev_tcp(dev);
}

static struct ib_device *soft_bind(const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct addr_query q = { .ss = &ss };

	if (rdmarw__addr_key(addr, &ss))
		return NULL;
	return addr_find(&q);
}

static int soft_resolve(struct ib_device *src_dev, const struct sockaddr *dst,
			struct ib_device **src_out,
			struct sockaddr_storage *src_addr,
			struct ib_device **dst_out)
{
	struct sockaddr_storage ss;
	struct addr_query q = { .ss = &ss };
	struct addr_query src = { .ss = &ss };
	struct ib_device *d;

	if (rdmarw__addr_key(dst, &ss))
		return -EHOSTUNREACH;
	if (src_dev && !soft_device_is_soft(src_dev))
		return -EHOSTUNREACH;
	q.space = src_dev ? to_sdev(src_dev)->fabric : NULL;
	d = addr_find(&q);
	if (!d)
		return -EHOSTUNREACH;
	if (src_dev) {
		*src_out = src_dev;
	} else {
		/* another device of the fabric, else loopback */
		src.space = q.found_space;
		src.not_dev = d;
		src.family = ss.ss_family;
		if (!addr_find(&src)) {
			src.dev = d;
			src.found = q.found;
		}
		*src_addr = src.found;
		*src_out = src.dev;
	}
	*dst_out = d;
	return 0;
}

static int soft_addr_fault(struct ib_device *dev)
{
	struct soft_cm_fault f;

	if (!dev || !fault_fire(dev, SOFT_CM_FAULT_ADDR_ERROR, &f))
		return 0;
	return f.reason ?: -EHOSTUNREACH;
}

static enum rdmarw__cm_verdict soft_req_fault(struct ib_device *dev,
					      int *reason)
{
	struct soft_cm_fault f;

	if (fault_fire(dev, SOFT_CM_FAULT_UNREACHABLE, &f))
		return RDMARW_CM_LOST;
	if (fault_fire(dev, SOFT_CM_FAULT_REJECT, &f)) {
		*reason = f.reason ?: IB_CM_REJ_CONSUMER_DEFINED;
		return RDMARW_CM_REJECT;
	}
	return RDMARW_CM_DELIVER;
}

static bool soft_iwarp(struct ib_device *dev)
{
	return to_sdev(dev)->iwarp;
}

static u32 soft_pdata_wire(struct ib_device *dev, enum rdmarw__cm_msg msg)
{
	if (soft_iwarp(dev))
		return 0; /* MPA carries what was sent */
	return rdmarw__cm_ib_pdata_size(msg);
}

static u32 soft_pdata_max(struct ib_device *dev, enum rdmarw__cm_msg msg)
{
	return soft_iwarp(dev) ? RDMA_MAX_PRIVATE_DATA :
				 soft_pdata_wire(dev, msg);
}

/*
 * ---- the in-process exchange --------------------------------------------
 * Both ends of a connection are ids of this process on devices of one
 * fabric: the REQ is the listener's child and its CONNECT_REQUEST, the REP
 * an ESTABLISHED queued to the requester (whose QP the CM thread moves to
 * RTS first), the RTU the child's ESTABLISHED, a REJ or DREQ an event
 * queued to the peer.  Every function runs with cm.lock held.
 */

/* Address and route resolution are immediate: the fabric is known. */
static int soft_resolve_route(struct cm_id_priv *p, unsigned long timeout_ms)
{
	p->state = CM_ROUTE_RESOLVED;
	p->id.route.num_pri_alt_paths = 1;
	rdmarw__cm_queue_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

/* The requester's side gets a reply at once (@status, its reason). */
static void soft_refused(struct cm_id_priv *a, enum rdma_cm_event_type type,
			 int status)
{
	struct cm_work *w = rdmarw__cm_queue_event(a, type, status);

	if (type == RDMA_CM_EVENT_REJECTED)
		rdmarw__cm_work_pdata(w, NULL, 0,
				      rdmarw__cm_pdata_wire(a, RDMARW_CM_REJ));
	a->answered = true;
}

static int soft_connect(struct cm_id_priv *a, const struct rdma_conn_param *cp)
{
	struct cm_id_priv *l, *c = NULL;
	struct cm_work *w;
	int reason = 0;
	bool iw = rdmarw__cm_iwarp(a);

	if (!a->dst_dev) {
		soft_refused(a, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		return 0;
	}
	switch (soft_req_fault(a->id.device, &reason)) {
	case RDMARW_CM_LOST:
		soft_refused(a, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		return 0;
	case RDMARW_CM_REJECT:
		soft_refused(a, RDMA_CM_EVENT_REJECTED,
			     iw ? -ECONNREFUSED : reason);
		return 0;
	case RDMARW_CM_DELIVER:
		break;
	}
	l = rdmarw__cm_find_listener(&a->id.route.addr.dst_addr, a->dst_dev);
	if (l)
		c = rdmarw__cm_new_child(l, a->dst_dev,
					 &a->id.route.addr.dst_addr,
					 &a->id.route.addr.src_addr);
	if (!c) {
		soft_refused(a, RDMA_CM_EVENT_REJECTED,
			     iw ? -ECONNREFUSED : IB_CM_REJ_INVALID_SERVICE_ID);
		return 0;
	}
	c->peer = a;
	a->peer = c;
	w = rdmarw__cm_queue_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	rdmarw__cm_work_pdata(w, cp->private_data, cp->private_data_len,
			      rdmarw__cm_pdata_wire(a, RDMARW_CM_REQ));
	if (w) {
		w->ev.param.conn.responder_resources = cp->initiator_depth;
		w->ev.param.conn.initiator_depth = cp->responder_resources;
		w->ev.param.conn.qp_num = a->id.qp->qp_num;
	}
	return 0;
}

/* The REP: the requester's QP goes to RTS in the CM thread (cm.lock held,
 * dropped while the child's QP moves). */
static int soft_accept(struct cm_id_priv *c, const struct rdma_conn_param *cp)
{
	struct cm_id_priv *a = c->peer;
	struct cm_work *w;
	u32 dest_qpn;
	int ret;

	if (!a)
		return -ECONNRESET;
	c->answered = true;
	c->resp_res = cp->responder_resources;
	c->init_depth = cp->initiator_depth;
	pthread_mutex_lock(&a->qp_lock);
	dest_qpn = a->id.qp ? a->id.qp->qp_num : 0;
	pthread_mutex_unlock(&a->qp_lock);
	rdmarw__cm_unlock();
	ret = rdmarw__cm_qp_to_rts(c, dest_qpn);
	rdmarw__cm_lock();
	a = c->peer;
	if (ret || !a) {
		if (a)
			rdmarw__cm_break_peer(
				c); /* the requester sees a reject */
		rdmarw__cm_unlock();
		rdmarw__cm_qp_to_err(c);
		rdmarw__cm_lock();
		return ret ?: -ECONNRESET;
	}
	w = rdmarw__cm_queue_event(a, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (!w)
		return 0;
	w->action = CM_ACT_RTS;
	pthread_mutex_lock(&c->qp_lock);
	w->dest_qpn = c->id.qp->qp_num;
	pthread_mutex_unlock(&c->qp_lock);
	rdmarw__cm_work_pdata(w, cp->private_data, cp->private_data_len,
			      rdmarw__cm_pdata_wire(c, RDMARW_CM_REP));
	w->ev.param.conn.responder_resources = cp->initiator_depth;
	w->ev.param.conn.initiator_depth = cp->responder_resources;
	w->ev.param.conn.qp_num = w->dest_qpn;
	a->answered = true;
	/*
	 * IB/RoCE: the requester's QP takes its depths from the REP
	 * (cm_rep_handler(), then cma_rep_recv() moves the QP with no
	 * conn_param), swapped to its side; iWARP keeps its own (iw_cm passes
	 * the connect's ORD/IRD to the device).
	 */
	if (!rdmarw__cm_iwarp(a)) {
		a->init_depth = cp->responder_resources;
		a->resp_res = cp->initiator_depth;
	}
	return 0;
}

static int soft_reject(struct cm_id_priv *c, const void *pdata, u8 len,
		       u8 reason)
{
	struct cm_id_priv *a = c->peer;
	struct cm_work *w;

	c->answered = true;
	if (!a)
		return 0;
	a->peer = NULL;
	c->peer = NULL;
	a->answered = true;
	w = rdmarw__cm_queue_event(a, RDMA_CM_EVENT_REJECTED,
				   rdmarw__cm_iwarp(a) ? -ECONNREFUSED :
							 reason);
	rdmarw__cm_work_pdata(w, pdata, len,
			      rdmarw__cm_pdata_wire(c, RDMARW_CM_REJ));
	return 0;
}

/* The DREQ: the peer hears first; the caller's QP goes to ERR. */
static int soft_disconnect(struct cm_id_priv *p, bool was_up, bool *qp_err)
{
	if (was_up) {
		rdmarw__cm_break_peer(p);
		rdmarw__cm_queue_event(p, RDMA_CM_EVENT_DISCONNECTED, 0);
		if (!rdmarw__cm_iwarp(p))
			rdmarw__cm_queue_event(p, RDMA_CM_EVENT_TIMEWAIT_EXIT,
					       0);
	}
	*qp_err = true;
	return 0;
}

const struct rdmarw__cm_ops rdmarw__cm_soft_ops = {
	.name = "soft",
	.owns = soft_owns,
	.bind = soft_bind,
	.resolve = soft_resolve,
	.addr_fault = soft_addr_fault,
	.pdata_max = soft_pdata_max,
	.pdata_wire = soft_pdata_wire,
	.forget = soft_forget,
	.resolve_route = soft_resolve_route,
	.connect = soft_connect,
	.accept = soft_accept,
	.reject = soft_reject,
	.disconnect = soft_disconnect,
};

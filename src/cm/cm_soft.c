// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager's software-device side: the address space of each
 * fabric (soft_device_add_addr()), the CM fault rules, and the transport
 * table that gives each profile its private-data limits.
 */
#include "cm/cm.h"
#include "soft/soft_loc.h"

#include <netinet/in.h>

/**
 * struct cm_soft_addr - an address a device answers to
 * @entry: cm_soft.addrs
 * @dev: the device
 * @fabric: its fabric (the address space)
 * @ss: the address (port 0)
 */
struct cm_soft_addr {
	struct list_head entry;
	struct ib_device *dev;
	struct soft_fabric *fabric;
	struct sockaddr_storage ss;
};

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
	struct list_head addrs;
	struct list_head rules;
} cm_soft = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.addrs = LIST_HEAD_INIT(cm_soft.addrs),
	.rules = LIST_HEAD_INIT(cm_soft.rules),
};

/* @addr as a port-0 sockaddr_storage; false for a bad family. */
static int addr_key(const struct sockaddr *addr, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		memcpy(in, addr, sizeof(*in));
		in->sin_port = 0;
		return in->sin_addr.s_addr == htonl(INADDR_ANY) ? -EINVAL : 0;
	}
	if (addr->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		memcpy(in6, addr, sizeof(*in6));
		in6->sin6_port = 0;
		in6->sin6_flowinfo = 0;
		in6->sin6_scope_id = 0;
		return IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) ? -EINVAL : 0;
	}
	return -EAFNOSUPPORT;
}

/* The entry for @ss on @fabric (NULL: any fabric); cm_soft.lock held. */
static struct cm_soft_addr *addr_find(struct soft_fabric *fabric,
				      const struct sockaddr_storage *ss)
{
	struct cm_soft_addr *a, *n;

	list_for_each_entry_safe(a, n, &cm_soft.addrs, entry)
		if ((!fabric || a->fabric == fabric) &&
		    rdmarw__cm_same_addr(&a->ss, ss))
			return a;
	return NULL;
}

int soft_device_add_addr(struct ib_device *dev, const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct cm_soft_addr *a;
	int ret;

	if (!soft_device_is_soft(dev) || !addr)
		return -EINVAL;
	ret = addr_key(addr, &ss);
	if (ret)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->dev = dev;
	a->fabric = to_sdev(dev)->fabric;
	a->ss = ss;
	pthread_mutex_lock(&cm_soft.lock);
	if (addr_find(a->fabric, &ss)) {
		pthread_mutex_unlock(&cm_soft.lock);
		free(a);
		return -EADDRINUSE;
	}
	list_add_tail(&a->entry, &cm_soft.addrs);
	pthread_mutex_unlock(&cm_soft.lock);
	return 0;
}

int soft_device_del_addr(struct ib_device *dev, const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct cm_soft_addr *a;
	int ret;

	if (!soft_device_is_soft(dev) || !addr)
		return -EINVAL;
	ret = addr_key(addr, &ss);
	if (ret)
		return -EADDRNOTAVAIL;
	pthread_mutex_lock(&cm_soft.lock);
	a = addr_find(to_sdev(dev)->fabric, &ss);
	if (a && a->dev == dev) {
		list_del(&a->entry);
		free(a);
		ret = 0;
	} else {
		ret = -EADDRNOTAVAIL;
	}
	pthread_mutex_unlock(&cm_soft.lock);
	return ret;
}

/* The CM lets go of @dev: forget its addresses and faults. */
static void soft_forget(struct ib_device *dev)
{
	struct cm_soft_addr *a, *an;
	struct cm_soft_rule *r, *rn;

	pthread_mutex_lock(&cm_soft.lock);
	list_for_each_entry_safe(a, an, &cm_soft.addrs, entry)
		if (a->dev == dev) {
			list_del(&a->entry);
			free(a);
		}
	list_for_each_entry_safe(r, rn, &cm_soft.rules, entry)
		if (r->dev == dev) {
			list_del(&r->entry);
			free(r);
		}
	pthread_mutex_unlock(&cm_soft.lock);
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
	return soft_device_is_soft(dev);
}

static struct ib_device *soft_bind(const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct cm_soft_addr *a;
	struct ib_device *dev;

	if (addr_key(addr, &ss))
		return NULL;
	pthread_mutex_lock(&cm_soft.lock);
	a = addr_find(NULL, &ss);
	dev = a ? a->dev : NULL;
	pthread_mutex_unlock(&cm_soft.lock);
	return dev;
}

static int soft_resolve(struct ib_device *src_dev, const struct sockaddr *dst,
			struct ib_device **src_out,
			struct sockaddr_storage *src_addr,
			struct ib_device **dst_out)
{
	struct cm_soft_addr *d, *a, *n, *src = NULL;
	struct sockaddr_storage ss;

	if (addr_key(dst, &ss))
		return -EHOSTUNREACH;
	if (src_dev && !soft_device_is_soft(src_dev))
		return -EHOSTUNREACH;
	pthread_mutex_lock(&cm_soft.lock);
	d = addr_find(src_dev ? to_sdev(src_dev)->fabric : NULL, &ss);
	if (d && !src_dev) {
		/* another device of the fabric, else loopback */
		list_for_each_entry_safe(a, n, &cm_soft.addrs, entry)
			if (!src && a->fabric == d->fabric &&
			    a->dev != d->dev && a->ss.ss_family == ss.ss_family)
				src = a;
		if (!src)
			src = d;
		*src_addr = src->ss;
		*src_out = src->dev;
	} else if (d) {
		*src_out = src_dev;
	}
	if (d)
		*dst_out = d->dev;
	pthread_mutex_unlock(&cm_soft.lock);
	return d ? 0 : -EHOSTUNREACH;
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

const struct rdmarw__cm_ops rdmarw__cm_soft_ops = {
	.name = "soft",
	.owns = soft_owns,
	.bind = soft_bind,
	.resolve = soft_resolve,
	.addr_fault = soft_addr_fault,
	.req_fault = soft_req_fault,
	.pdata_max = soft_pdata_max,
	.pdata_wire = soft_pdata_wire,
	.forget = soft_forget,
};

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager's transport table for ibv devices (rxe, siw,
 * hardware): the kernel's CM does the exchange (route, connect, accept,
 * reject, disconnect), reached through librdmacm (cm_ibv_rdmacm.c, across
 * cm_ibv.h).  This side sees <rdmarw/rdma_cm.h>
 * and turns its parameters into the neutral ones of cm_ibv.h.
 */
#include "cm/cm.h"

#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>

#include <assert.h>
#include <errno.h>

static_assert(RDMARW_CM_REJ_VENDOR_OPTION ==
		      IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED,
	      "cm_ibv.h names the kernel's reject reason");

static bool ibv_owns(const struct ib_device *dev)
{
	return rdmarw_ibv_is_ibv(dev);
}

/* The in-process lookups never answer: librdmacm resolves addresses. */
static struct ib_device *ibv_bind(const struct sockaddr *addr)
{
	return NULL;
}

static int ibv_resolve(struct ib_device *src_dev, const struct sockaddr *dst,
		       struct ib_device **src_out,
		       struct sockaddr_storage *src_addr,
		       struct ib_device **dst_out)
{
	return -EHOSTUNREACH;
}

static int ibv_addr_fault(struct ib_device *dev)
{
	return 0;
}

/*
 * What the kernel's CM lets user space send: the IB CM message's field
 * (the REQ less the CMA header) on IB and RoCE, on iWARP what a u8 length
 * can say (the kernel's MPA limit is larger).
 */
static u32 ibv_pdata_max(struct ib_device *dev, enum rdmarw__cm_msg msg)
{
	if (rdma_protocol_iwarp(dev, 1))
		return 255;
	return rdmarw__cm_ib_pdata_size(msg);
}

/* The peer's event says the length; nothing is padded here. */
static u32 ibv_pdata_wire(struct ib_device *dev, enum rdmarw__cm_msg msg)
{
	return 0;
}

static int ibv_x_resolve_addr(struct rdmarw__cm_xid **x, void *owner, int ps,
			      const struct sockaddr *src,
			      const struct sockaddr *dst,
			      unsigned long timeout_ms)
{
	int ms = timeout_ms > 0x7fffffffUL ? 0x7fffffff : (int)timeout_ms;

	return rdmarw__xid_resolve_addr(x, owner, ps, src, dst, ms);
}

/*
 * The exchange is the kernel's CM's, through the librdmacm id behind the
 * rdmarw id (cm.lock held); its events come back through
 * rdmarw__cm_xid_event().
 */
static int ibv_resolve_route(struct cm_id_priv *p, unsigned long timeout_ms)
{
	int ms = timeout_ms > 0x7fffffffUL ? 0x7fffffff : (int)timeout_ms;
	int ret;

	if (!p->xid)
		return -EINVAL;
	ret = rdmarw__xid_resolve_route(p->xid, ms);
	if (!ret)
		p->state = CM_ROUTE_QUERY;
	return ret;
}

static void xparam(struct rdmarw__cm_xparam *x, const struct rdma_conn_param *p)
{
	x->pdata = p->private_data;
	x->pdata_len = p->private_data_len;
	x->responder_resources = p->responder_resources;
	x->initiator_depth = p->initiator_depth;
	x->retry_count = p->retry_count;
	x->rnr_retry_count = p->rnr_retry_count;
	x->flow_control = p->flow_control;
}

static int ibv_connect(struct cm_id_priv *a, const struct rdma_conn_param *p)
{
	struct rdmarw__cm_xparam xp;

	if (!a->xid)
		return -EINVAL;
	xparam(&xp, p);
	return rdmarw__xid_connect(a->xid, &xp);
}

static int ibv_accept(struct cm_id_priv *c, const struct rdma_conn_param *p)
{
	struct rdmarw__cm_xparam xp;
	int ret;

	if (!c->xid)
		return -EINVAL;
	xparam(&xp, p);
	pthread_mutex_lock(&c->qp_lock);
	ret = rdmarw__xid_accept(c->xid, &xp);
	pthread_mutex_unlock(&c->qp_lock);
	if (!ret) {
		c->answered = true;
		c->resp_res = p->responder_resources;
		c->init_depth = p->initiator_depth;
	}
	return ret;
}

static int ibv_reject(struct cm_id_priv *c, const void *pdata, u8 len,
		      u8 reason)
{
	int ret = c->xid ? rdmarw__xid_reject(c->xid, pdata, len, reason) :
			   -EINVAL;

	c->answered = !ret;
	return ret;
}

/*
 * The kernel's CM sends the DREQ (or, after the peer's, the DREP);
 * DISCONNECTED comes from it.  IB and RoCE: librdmacm moved the QP to ERR
 * already, which the caller records; on iWARP the close is graceful (SQD)
 * and the QP goes to ERR with DISCONNECTED.
 */
static int ibv_disconnect(struct cm_id_priv *p, bool was_up, bool *qp_err)
{
	int ret = p->xid ? rdmarw__xid_disconnect(p->xid) : -EINVAL;

	*qp_err = !rdmarw__cm_iwarp(p);
	return was_up ? ret : 0;
}

const struct rdmarw__cm_ops rdmarw__cm_ibv_ops = {
	.name = "ibv",
	.owns = ibv_owns,
	.bind = ibv_bind,
	.resolve = ibv_resolve,
	.addr_fault = ibv_addr_fault,
	.pdata_max = ibv_pdata_max,
	.pdata_wire = ibv_pdata_wire,
	.resolve_route = ibv_resolve_route,
	.connect = ibv_connect,
	.accept = ibv_accept,
	.reject = ibv_reject,
	.disconnect = ibv_disconnect,
	.x_available = rdmarw__xid_available,
	.x_bind = rdmarw__xid_bind,
	.x_resolve_addr = ibv_x_resolve_addr,
	.x_listen = rdmarw__xid_listen,
	.x_attach_qp = rdmarw__xid_attach_qp,
	.x_set_qp = rdmarw__xid_set_qp,
	.x_destroy = rdmarw__xid_destroy,
	.x_set_option = rdmarw__xid_set_option,
};
#else
/* Built without the libibverbs backend (a unit must not be empty). */
extern int rdmarw__cm_no_ibv_ops;
#endif /* RDMARW_HAVE_IBV */

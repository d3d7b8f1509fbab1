// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager's transport table for ibv devices (rxe, siw,
 * hardware): the kernel's CM does the exchange, reached through librdmacm
 * (cm_ibv_rdmacm.c, across cm_ibv.h).  This side sees <rdmarw/rdma_cm.h>
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

static enum rdmarw__cm_verdict ibv_req_fault(struct ib_device *dev, int *reason)
{
	return RDMARW_CM_DELIVER;
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

static int ibv_x_resolve_route(struct rdmarw__cm_xid *x,
			       unsigned long timeout_ms)
{
	int ms = timeout_ms > 0x7fffffffUL ? 0x7fffffff : (int)timeout_ms;

	return rdmarw__xid_resolve_route(x, ms);
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

static int ibv_x_connect(struct rdmarw__cm_xid *x,
			 const struct rdma_conn_param *p)
{
	struct rdmarw__cm_xparam xp;

	xparam(&xp, p);
	return rdmarw__xid_connect(x, &xp);
}

static int ibv_x_accept(struct rdmarw__cm_xid *x,
			const struct rdma_conn_param *p)
{
	struct rdmarw__cm_xparam xp;

	xparam(&xp, p);
	return rdmarw__xid_accept(x, &xp);
}

const struct rdmarw__cm_ops rdmarw__cm_ibv_ops = {
	.name = "ibv",
	.owns = ibv_owns,
	.bind = ibv_bind,
	.resolve = ibv_resolve,
	.addr_fault = ibv_addr_fault,
	.req_fault = ibv_req_fault,
	.pdata_max = ibv_pdata_max,
	.pdata_wire = ibv_pdata_wire,
	.x_bind = rdmarw__xid_bind,
	.x_resolve_addr = ibv_x_resolve_addr,
	.x_resolve_route = ibv_x_resolve_route,
	.x_listen = rdmarw__xid_listen,
	.x_connect = ibv_x_connect,
	.x_accept = ibv_x_accept,
	.x_reject = rdmarw__xid_reject,
	.x_disconnect = rdmarw__xid_disconnect,
	.x_attach_qp = rdmarw__xid_attach_qp,
	.x_set_qp = rdmarw__xid_set_qp,
	.x_destroy = rdmarw__xid_destroy,
	.x_set_option = rdmarw__xid_set_option,
};
#else
/* Built without the libibverbs backend (a unit must not be empty). */
extern int rdmarw__cm_no_ibv_ops;
#endif /* RDMARW_HAVE_IBV */

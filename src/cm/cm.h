/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection manager's private header: the per-device-type transport
 * table and the calls between the CM core (cma.c) and the software
 * device's side (cm_soft.c).
 *
 * Lock order: cm.lock (every id, the event queue, the listeners) ->
 * cm_soft's fault lock, the core's registry lock (the devices' addresses)
 * and a device's client data lock.  No lock of the CM is held while a handler runs
 * or while a QP is modified.
 */
#ifndef RDMARW_CM_H
#define RDMARW_CM_H

#include "cm/cm_ibv.h"

#include <rdmarw/rdma_cm.h>
#include <rdmarw/version.h>

/* The messages whose private data a transport limits. */
enum rdmarw__cm_msg {
	RDMARW_CM_REQ,
	RDMARW_CM_REP,
	RDMARW_CM_REJ,
};

/* What a transport's fault hook decides for a connection request. */
enum rdmarw__cm_verdict {
	RDMARW_CM_DELIVER,
	RDMARW_CM_REJECT, /* the peer's CM refuses (reason given) */
	RDMARW_CM_LOST, /* the request never arrives: UNREACHABLE */
};

/**
 * struct rdmarw__cm_ops - what the CM asks of a type of device
 * @name: for messages
 * @owns: does this table serve @dev
 * @bind: the device answering to the local address @addr (any port), or
 *        NULL
 * @resolve: the device that reaches @dst from @src_dev (NULL: unbound),
 *           and the source device and address to use; 0 or -EHOSTUNREACH
 * @addr_fault: resolution from @dev must fail (0, or the event status)
 * @req_fault: a request sent from @dev: deliver, reject (*@reason) or lose
 * @pdata_max: private data a message carries on @dev (ULP bytes)
 * @pdata_wire: bytes the peer sees on @dev (IB pads to the field's size;
 *              0: exactly what was sent)
 * @forget: optional: the CM lets go of @dev (the core removes it): drop
 *          what the transport keeps for it
 * @x_bind: librdmacm transports only (the others leave every x_ op NULL):
 *          a librdmacm id for @owner bound to @addr (cm_ibv.h)
 * @x_resolve_addr: start resolving @dst (a new librdmacm id if *@x is NULL)
 * @x_resolve_route: start resolving the route
 * @x_listen: listen
 * @x_connect: send the REQ (or MPA request)
 * @x_accept: answer a request (the QP goes to RTR/RTS on IB)
 * @x_reject: refuse a request, with private data and the IB CM reason
 * @x_disconnect: DREQ (the QP goes to ERR)
 * @x_attach_qp: give a new QP to the id (it moves to INIT)
 * @x_set_qp: point the id at a QP again, or at none
 * @x_destroy: destroy the librdmacm id (no lock of the CM held)
 * @x_set_option: pass a setter's value to the librdmacm id (cm.lock held;
 *                the kernel's errno when it refuses it in the id's state)
 *
 * The software device's table (cm_soft.c) answers from the devices'
 * addresses (rdmarw__device_addr_walk(), one address space per fabric); the connection itself is made in-process by the core,
 * which moves both QPs with ib_modify_qp().  A librdmacm backend adds a
 * table whose connect/accept/... are librdmacm's calls and whose events
 * come from its event channel (docs/architecture.md).
 */
struct rdmarw__cm_ops {
	const char *name;
	bool (*owns)(const struct ib_device *dev);
	struct ib_device *(*bind)(const struct sockaddr *addr);
	int (*resolve)(struct ib_device *src_dev, const struct sockaddr *dst,
		       struct ib_device **src_out,
		       struct sockaddr_storage *src_addr,
		       struct ib_device **dst_out);
	int (*addr_fault)(struct ib_device *dev);
	enum rdmarw__cm_verdict (*req_fault)(struct ib_device *dev,
					     int *reason);
	u32 (*pdata_max)(struct ib_device *dev, enum rdmarw__cm_msg msg);
	u32 (*pdata_wire)(struct ib_device *dev, enum rdmarw__cm_msg msg);
	void (*forget)(struct ib_device *dev);
	int (*x_bind)(struct rdmarw__cm_xid **x, void *owner, int ps,
		      const struct sockaddr *addr, struct ib_device **dev,
		      struct sockaddr_storage *bound);
	int (*x_resolve_addr)(struct rdmarw__cm_xid **x, void *owner, int ps,
			      const struct sockaddr *src,
			      const struct sockaddr *dst,
			      unsigned long timeout_ms);
	int (*x_resolve_route)(struct rdmarw__cm_xid *x,
			       unsigned long timeout_ms);
	int (*x_listen)(struct rdmarw__cm_xid *x, int backlog);
	int (*x_connect)(struct rdmarw__cm_xid *x,
			 const struct rdma_conn_param *p);
	int (*x_accept)(struct rdmarw__cm_xid *x,
			const struct rdma_conn_param *p);
	int (*x_reject)(struct rdmarw__cm_xid *x, const void *pdata, u8 len,
			u8 reason);
	int (*x_disconnect)(struct rdmarw__cm_xid *x);
	int (*x_attach_qp)(struct rdmarw__cm_xid *x, struct ib_qp *qp);
	void (*x_set_qp)(struct rdmarw__cm_xid *x, struct ib_qp *qp);
	void (*x_destroy)(struct rdmarw__cm_xid *x);
	int (*x_set_option)(struct rdmarw__cm_xid *x, enum rdmarw__cm_xopt opt,
			    int val);
};

extern const struct rdmarw__cm_ops rdmarw__cm_soft_ops;
#ifdef RDMARW_HAVE_IBV
extern const struct rdmarw__cm_ops rdmarw__cm_ibv_ops;
#endif

/* Tear down every connection of @dev as a link failure (soft.h). */
int rdmarw__cm_link_down(struct ib_device *dev);

/* The consumer's part of an IB CM message's private data (IB and RoCE,
 * software or real): the REQ less the CMA header, the REP, the REJ. */
u32 rdmarw__cm_ib_pdata_size(enum rdmarw__cm_msg msg);

#endif /* RDMARW_CM_H */

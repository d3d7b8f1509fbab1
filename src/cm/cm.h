/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection manager's private header: the ids, the per-device-type
 * transport table (each table is one exchange: cm_soft.c in-process,
 * cm_mpa.c over TCP with MPA for software devices with soft_profile.tcp,
 * cm_ibv.c through librdmacm) and the CM core's (cma.c) services to the
 * tables.
 *
 * Lock order: cm.lock (every id, the event queue, the listeners) ->
 * cm_soft's fault lock, the core's registry lock (the devices' addresses)
 * and a device's client data lock.  No lock of the CM is held while a
 * handler runs or while a QP is modified.
 */
#ifndef RDMARW_CM_H
#define RDMARW_CM_H

#include "cm/cm_ibv.h"
#include "core/provider.h"

#include <rdmarw/rdma_cm.h>
#include <rdmarw/version.h>

struct rdmarw__cm_ops;

/* ---- the CM's ids, shared by cma.c and the transports' exchanges ------ */

/* The kernel's enum rdma_cm_state. */
enum cm_state {
	CM_IDLE,
	CM_ADDR_QUERY,
	CM_ADDR_RESOLVED,
	CM_ROUTE_QUERY,
	CM_ROUTE_RESOLVED,
	CM_CONNECT,
	CM_DISCONNECT,
	CM_ADDR_BOUND,
	CM_LISTEN,
	CM_DEVICE_REMOVAL,
	CM_DESTROYING,
};

/**
 * struct cm_id_priv - an id and what the CM knows of it
 * @id: the public part (first)
 * @entry: cm.ids
 * @state: enum cm_state
 * @ops: the transport of @id.device (NULL while unbound)
 * @dst_dev: the device that answers to the destination address
 * @peer: the other end of a connection being set up or up (both point at
 *        each other, or neither)
 * @listener: a child: the listener it came from, while its request is
 *            not delivered
 * @qp_lock: @id.qp
 * @is_child: made by a connection request
 * @answered: a child accepted or rejected; an active id that got a reply
 * @established: both QPs are in RTS
 * @in_handler: the CM thread runs its handler
 * @destroy_pending: destroy when the handler returns
 * @destroy_waiter: a thread in rdma_destroy_id() waits for the handler
 *                  and destroys the id itself (the CM thread must not)
 * @reuseaddr: rdma_set_reuseaddr()
 * @afonly: rdma_set_afonly()
 * @tos: rdma_set_service_type()
 * @ack_timeout: rdma_set_ack_timeout()
 * @min_rnr_timer: rdma_set_min_rnr_timer()
 * @xset: bit (1 << enum rdmarw__cm_xopt) for each setter the ULP called,
 *        which a librdmacm id made later takes (rdmarw__cm_xid_options())
 * @resp_res: responder resources of the local QP (max_dest_rd_atomic)
 * @init_depth: initiator depth of the local QP (max_rd_atomic), passed
 *              unchanged as the kernel's cma.c: 0 stays 0
 * @xid: the librdmacm id behind it (ibv devices), or NULL
 * @xops: the transport of @xid
 * @mpa: the TCP transport's sockets of the id (cm_mpa.c), or NULL
 * @port_auto: bound with port 0: a transport with sockets may take the
 *             kernel's port instead of the CM's
 */
struct cm_id_priv {
	struct rdma_cm_id id;
	struct list_head entry;
	enum cm_state state;
	const struct rdmarw__cm_ops *ops;
	struct ib_device *dst_dev;
	struct cm_id_priv *peer;
	struct cm_id_priv *listener;
	pthread_mutex_t qp_lock;
	bool is_child;
	bool answered;
	bool established;
	bool in_handler;
	bool destroy_pending;
	bool destroy_waiter;
	bool reuseaddr;
	bool afonly;
	int tos;
	u8 ack_timeout;
	u8 min_rnr_timer;
	unsigned int xset;
	u8 resp_res;
	u8 init_depth;
	struct rdmarw__cm_xid *xid;
	const struct rdmarw__cm_ops *xops;
	struct cm_mpa *mpa;
	bool port_auto;
	struct rdmarw_qp_owner owner;
};

/* What the CM thread does to the id's QP before calling the handler. */
enum cm_action {
	CM_ACT_NONE,
	CM_ACT_RTS, /* REP arrived: QP to RTR and RTS, then RTU to peer */
	CM_ACT_ERR, /* the connection is gone: QP to ERR */
	CM_ACT_ATTACH, /* the transport's @attach: the QP takes the socket */
};

/**
 * struct cm_work - an event waiting for the CM thread
 * @entry: cm.queue
 * @id: the id whose handler gets it
 * @action: enum cm_action
 * @dest_qpn: CM_ACT_RTS: the peer's QP number
 * @ev: the event
 * @pdata: its private data
 */
struct cm_work {
	struct list_head entry;
	struct cm_id_priv *id;
	enum cm_action action;
	u32 dest_qpn;
	struct rdma_cm_event ev;
	u8 pdata[RDMA_MAX_PRIVATE_DATA];
};

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
 * @pdata_max: private data a message carries on @dev (ULP bytes)
 * @pdata_wire: bytes the peer sees on @dev (IB pads to the field's size;
 *              0: exactly what was sent)
 * @forget: optional: the CM lets go of @dev (the core removes it): drop
 *          what the transport keeps for it
 * @resolve_route: the exchange (cm.lock held, for the id's state the CM
 *                 checked): find the route of an ADDR_RESOLVED id (state
 *                 and event, or ROUTE_QUERY until the event comes)
 * @connect: send the REQ (or MPA request) of a CONNECT id with a QP
 * @accept: answer a child's request (may drop cm.lock meanwhile with
 *          rdmarw__cm_unlock(); holds it again on return)
 * @reject: refuse a child's request, with private data and the IB reason
 * @disconnect: the DREQ of an established (@was_up) or disconnected id;
 *              *@qp_err: the CM moves the id's QP to ERR afterwards
 * @listen: optional: open what listens for @p (cm.lock held; a wildcard
 *          listener asks every table that has it)
 * @attach: CM_ACT_ATTACH (cm.lock held, dropped meanwhile; the id's
 *          handler is marked running, so the id stays): hand the settled
 *          connection to the id's QP and move it to RTS; false when the
 *          event is to be dropped (torn down meanwhile), else @w may have
 *          become an error event
 * @release: optional: @p is destroyed (cm.lock held): drop what the
 *           transport keeps for it
 * @x_available: librdmacm transports only (the others leave every x_ op
 *               NULL): can librdmacm be used here (its event channel)
 * @x_bind: a librdmacm id for @owner bound to @addr (cm_ibv.h)
 * @x_resolve_addr: start resolving @dst (a new librdmacm id if *@x is NULL)
 * @x_listen: listen
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
	u32 (*pdata_max)(struct ib_device *dev, enum rdmarw__cm_msg msg);
	u32 (*pdata_wire)(struct ib_device *dev, enum rdmarw__cm_msg msg);
	void (*forget)(struct ib_device *dev);
	int (*resolve_route)(struct cm_id_priv *p, unsigned long timeout_ms);
	int (*connect)(struct cm_id_priv *a, const struct rdma_conn_param *cp);
	int (*accept)(struct cm_id_priv *c, const struct rdma_conn_param *cp);
	int (*reject)(struct cm_id_priv *c, const void *pdata, u8 len,
		      u8 reason);
	int (*disconnect)(struct cm_id_priv *p, bool was_up, bool *qp_err);
	int (*listen)(struct cm_id_priv *p, int backlog);
	void (*release)(struct cm_id_priv *p);
	bool (*attach)(struct cm_id_priv *p, struct cm_work *w);
	bool (*x_available)(void);
	int (*x_bind)(struct rdmarw__cm_xid **x, void *owner, int ps,
		      const struct sockaddr *addr, struct ib_device **dev,
		      struct sockaddr_storage *bound);
	int (*x_resolve_addr)(struct rdmarw__cm_xid **x, void *owner, int ps,
			      const struct sockaddr *src,
			      const struct sockaddr *dst,
			      unsigned long timeout_ms);
	int (*x_listen)(struct rdmarw__cm_xid *x, int backlog);
	int (*x_attach_qp)(struct rdmarw__cm_xid *x, struct ib_qp *qp);
	void (*x_set_qp)(struct rdmarw__cm_xid *x, struct ib_qp *qp);
	void (*x_destroy)(struct rdmarw__cm_xid *x);
	int (*x_set_option)(struct rdmarw__cm_xid *x, enum rdmarw__cm_xopt opt,
			    int val);
};

/*
 * ---- cma.c's services to the transports' exchanges (cm.lock held) -----
 */
/* Queue @type for @p's handler (NULL: lost, as under memory pressure). */
struct cm_work *rdmarw__cm_queue_event(struct cm_id_priv *p,
				       enum rdma_cm_event_type type,
				       int status);
/* Copy private data into @w, padded to @wire bytes when non-zero. */
void rdmarw__cm_work_pdata(struct cm_work *w, const void *data, u32 len,
			   u32 wire);
/* Break @p's connection: tell the peer what it means. */
void rdmarw__cm_break_peer(struct cm_id_priv *p);
/* @p's QP to ERR, or to RTR and RTS towards @dest_qpn (no cm.lock held). */
void rdmarw__cm_qp_to_err(struct cm_id_priv *p);
int rdmarw__cm_qp_to_rts(struct cm_id_priv *p, u32 dest_qpn);
/* The same in two steps (a TCP QP takes its socket in RTR). */
int rdmarw__cm_qp_to_rtr(struct cm_id_priv *p, u32 dest_qpn);
int rdmarw__cm_qp_rtr_to_rts(struct cm_id_priv *p);
/* Is @p's port iWARP? */
bool rdmarw__cm_iwarp(struct cm_id_priv *p);
/* The listener for a request to @dst on @dev, or NULL. */
struct cm_id_priv *rdmarw__cm_find_listener(const struct sockaddr_storage *dst,
					    struct ib_device *dev);
/* A request's child of listener @l on @dev (CONNECT, on cm.ids). */
struct cm_id_priv *rdmarw__cm_new_child(struct cm_id_priv *l,
					struct ib_device *dev,
					const struct sockaddr_storage *src,
					const struct sockaddr_storage *dst);
/* Private data bytes the peer sees for @msg on @p's device. */
u32 rdmarw__cm_pdata_wire(struct cm_id_priv *p, enum rdmarw__cm_msg msg);
/* Drop and take cm.lock again (an exchange that moves a QP). */
void rdmarw__cm_unlock(void);
void rdmarw__cm_lock(void);

extern const struct rdmarw__cm_ops rdmarw__cm_soft_ops;
extern const struct rdmarw__cm_ops rdmarw__cm_mpa_ops;
/* Is @dev a software device with soft_profile.tcp (the MPA table's)? */
bool rdmarw__cm_dev_tcp(const struct ib_device *dev);
/* The MPA handshakes' bound from now on (ms; 0: RDMARW_MPA_TIMEOUT_MS or
 * siw's 10 s).  For tests. */
void rdmarw__cm_mpa_set_timeout(unsigned int ms);
#ifdef RDMARW_HAVE_IBV
extern const struct rdmarw__cm_ops rdmarw__cm_ibv_ops;
#endif

/* Tear down every connection of @dev as a link failure (soft.h). */
int rdmarw__cm_link_down(struct ib_device *dev);

/* The consumer's part of an IB CM message's private data (IB and RoCE,
 * software or real): the REQ less the CMA header, the REP, the REJ. */
u32 rdmarw__cm_ib_pdata_size(enum rdmarw__cm_msg msg);

#endif /* RDMARW_CM_H */

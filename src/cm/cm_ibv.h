/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Between the CM core and its librdmacm side (cm_ibv_rdmacm.c).
 *
 * librdmacm's <rdma/rdma_cma.h> and <rdmarw/rdma_cm.h> declare the same
 * names differently, so no translation unit sees both: this header uses
 * neither.  The librdmacm side owns one event channel for the process and a
 * thread that reads it; each rdma_cm_event is copied into a struct
 * rdmarw__cm_xev, acknowledged at once (librdmacm's rdma_destroy_id() waits
 * for the acknowledgements of its id's events) and handed to the core with
 * rdmarw__cm_xid_event(), which queues it for the CM thread.
 *
 * Lifetime: a struct rdmarw__cm_xid is made by rdmarw__xid_*() and freed by
 * rdmarw__xid_destroy(), which must be called without cm.lock held (it waits
 * for librdmacm and for the event thread).  @owner is read and cleared under
 * cm.lock only; once it is NULL no event reaches the core for that id.
 */
#ifndef RDMARW_CM_IBV_H
#define RDMARW_CM_IBV_H

#include <rdmarw/ib_verbs.h>

#include <sys/socket.h>

/**
 * struct rdmarw__cm_xid - a librdmacm id behind an rdmarw id
 * @cmid: librdmacm's struct rdma_cm_id
 * @owner: the rdmarw id (struct cm_id_priv), NULL once detached
 * @qp: the QP attached with rdmarw__xid_attach_qp(), or NULL
 * @reap: the core's list of detached ids to destroy once cm.lock is dropped
 */
struct rdmarw__cm_xid {
	void *cmid;
	void *owner;
	struct ib_qp *qp;
	struct rdmarw__cm_xid *reap;
};

/**
 * struct rdmarw__cm_xev - one librdmacm event, copied
 * @event: the event (the kernel's numbering, which both enums follow)
 * @status: its status as librdmacm gave it (the kernel's)
 * @dev: the ibv device of the id's verbs context (NULL: none, or it could
 *       not be opened)
 * @child: CONNECT_REQUEST: the new id (the core takes it, or the event
 *         thread destroys it when rdmarw__cm_xid_event() returns false)
 * @src: the id's local address after the event
 * @dst: its peer's address
 * @pdata_len: private data bytes
 * @responder_resources: of the event's connection parameters
 * @initiator_depth: likewise
 * @qp_num: the peer's QP number
 * @pdata: the private data
 */
struct rdmarw__cm_xev {
	int event;
	int status;
	struct ib_device *dev;
	struct rdmarw__cm_xid *child;
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	u8 pdata_len;
	u8 responder_resources;
	u8 initiator_depth;
	u32 qp_num;
	u8 pdata[256];
};

/**
 * struct rdmarw__cm_xparam - connection parameters for librdmacm
 * @pdata: private data
 * @pdata_len: its length
 * @responder_resources: as struct rdma_conn_param
 * @initiator_depth: likewise
 * @retry_count: likewise
 * @rnr_retry_count: likewise
 * @flow_control: likewise
 */
struct rdmarw__cm_xparam {
	const void *pdata;
	u8 pdata_len;
	u8 responder_resources;
	u8 initiator_depth;
	u8 retry_count;
	u8 rnr_retry_count;
	u8 flow_control;
};

/*
 * The setters of <rdmarw/rdma_cm.h> that librdmacm's rdma_set_option()
 * carries to the kernel's id (rdma_set_min_rnr_timer() has no option).
 */
enum rdmarw__cm_xopt {
	RDMARW_CM_XOPT_TOS, /* rdma_set_service_type(): the u8 TOS */
	RDMARW_CM_XOPT_REUSEADDR, /* rdma_set_reuseaddr() */
	RDMARW_CM_XOPT_AFONLY, /* rdma_set_afonly() */
	RDMARW_CM_XOPT_ACK_TIMEOUT, /* rdma_set_ack_timeout() */
	RDMARW_CM_XOPT_NR,
};

/**
 * struct rdmarw__cm_xopts - the setters' values a new librdmacm id takes
 * @set: bit (1 << enum rdmarw__cm_xopt) for each value the ULP set
 * @val: the values, by enum rdmarw__cm_xopt
 */
struct rdmarw__cm_xopts {
	unsigned int set;
	int val[RDMARW_CM_XOPT_NR];
};

/* ---- cm_ibv_rdmacm.c: calls into librdmacm (negative errno) ---------- */

/* Is librdmacm usable here (its event channel opens)? */
bool rdmarw__xid_available(void);
/* A new librdmacm id for @owner, bound to @addr; *@dev is the device of
 * the address (NULL for a wildcard), *@bound the address with its port. */
int rdmarw__xid_bind(struct rdmarw__cm_xid **out, void *owner, int ps,
		     const struct sockaddr *addr, struct ib_device **dev,
		     struct sockaddr_storage *bound);
/* Resolve @dst (a new id for @owner when *@x is NULL). */
int rdmarw__xid_resolve_addr(struct rdmarw__cm_xid **x, void *owner, int ps,
			     const struct sockaddr *src,
			     const struct sockaddr *dst, int timeout_ms);
int rdmarw__xid_resolve_route(struct rdmarw__cm_xid *x, int timeout_ms);
int rdmarw__xid_listen(struct rdmarw__cm_xid *x, int backlog);
int rdmarw__xid_connect(struct rdmarw__cm_xid *x,
			const struct rdmarw__cm_xparam *p);
int rdmarw__xid_accept(struct rdmarw__cm_xid *x,
		       const struct rdmarw__cm_xparam *p);
/* IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED (checked in cm_ibv.c). */
#define RDMARW_CM_REJ_VENDOR_OPTION 35

/* Refuse a request: @reason IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED goes as
 * that (rdma_reject_ece() of librdmacm), every other as CONSUMER_DEFINED,
 * the one other reason librdmacm can send. */
int rdmarw__xid_reject(struct rdmarw__cm_xid *x, const void *pdata, u8 len,
		       u8 reason);
/* rdma_set_option() of @opt on the id (the kernel's errno if refused). */
int rdmarw__xid_set_option(struct rdmarw__cm_xid *x, enum rdmarw__cm_xopt opt,
			   int val);
int rdmarw__xid_disconnect(struct rdmarw__cm_xid *x);
/* Give @qp (an ibv QP on the id's verbs context) to the id, in INIT. */
int rdmarw__xid_attach_qp(struct rdmarw__cm_xid *x, struct ib_qp *qp);
/* Give librdmacm's id @qp again, or NULL before the QP is destroyed (that
 * waits for the event thread: no lock of the CM held). */
void rdmarw__xid_set_qp(struct rdmarw__cm_xid *x, struct ib_qp *qp);
/* Destroy the librdmacm id (no cm.lock held; @x->owner already NULL). */
void rdmarw__xid_destroy(struct rdmarw__cm_xid *x);

/* ---- cma.c: the core's side --------------------------------------------- */

/*
 * An event of @x (called by the event thread, no lock held).  Return false
 * for a CONNECT_REQUEST whose child the core did not take.
 */
bool rdmarw__cm_xid_event(struct rdmarw__cm_xid *x,
			  const struct rdmarw__cm_xev *ev);

/*
 * The setters' values recorded on @owner before it had a librdmacm id
 * (called while the caller of x_bind or x_resolve_addr holds cm.lock):
 * the new id takes them before it is bound or resolves.
 */
void rdmarw__cm_xid_options(void *owner, struct rdmarw__cm_xopts *o);

#endif /* RDMARW_CM_IBV_H */

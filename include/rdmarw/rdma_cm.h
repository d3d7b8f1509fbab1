/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RDMA connection manager (the kernel's include/rdma/rdma_cm.h).
 *
 * An rdma_cm_id is a communication endpoint: bind it to an address, resolve
 * a peer's address and route, then connect (active side), or listen and
 * accept the child ids that CONNECT_REQUEST events carry (passive side).
 * Events reach the id's handler from the CM's own thread, one at a time
 * (docs/architecture.md, "Connection manager").  A handler that returns
 * non-zero has its id destroyed by the CM when it returns; it must not call
 * rdma_destroy_id() on its own id (that is deferred to the return, too).
 *
 * Devices: software devices answer to the addresses given with
 * soft_device_add_addr() (soft.h); an address no software device has is
 * bound or resolved by librdmacm when the library has the ibv backend
 * (ibv.h), and the id is then on the ibv device of that address (the kernel
 * makes the connection; events, statuses and private data are its own).
 * Each device type plugs its transport in through an internal ops table
 * (src/cm/cm.h).
 *
 * Thread safety: every call may be made from any thread, including from a
 * handler, except that calls on one id must not race its rdma_destroy_id().
 */
#ifndef RDMARW_RDMA_CM_H
#define RDMARW_RDMA_CM_H

#include <rdmarw/ib_verbs.h>

/*
 * librdmacm (<rdma/rdma_cma.h>) uses the same names for its own, different
 * API.  The two cannot meet in one translation unit; in one program they
 * may, since these functions are linked as rdmarw_cm_* (the kernel's names
 * stay the names in the source, as the kernel's ULPs write them).
 */
#ifdef RDMA_CMA_H
#error "<rdmarw/rdma_cm.h> and librdmacm's <rdma/rdma_cma.h> declare the same names differently: include one per translation unit"
#endif
#define rdma_accept rdmarw_cm_accept
#define rdma_bind_addr rdmarw_cm_bind_addr
#define rdma_connect rdmarw_cm_connect
#define rdma_connect_locked rdmarw_cm_connect_locked
#define rdma_consumer_reject_data rdmarw_cm_consumer_reject_data
#define rdma_create_id rdmarw_cm_create_id
#define rdma_create_qp rdmarw_cm_create_qp
#define rdma_destroy_id rdmarw_cm_destroy_id
#define rdma_destroy_qp rdmarw_cm_destroy_qp
#define rdma_disconnect rdmarw_cm_disconnect
#define rdma_event_msg rdmarw_cm_event_msg
#define rdma_get_service_id rdmarw_cm_get_service_id
#define rdma_is_consumer_reject rdmarw_cm_is_consumer_reject
#define rdma_listen rdmarw_cm_listen
#define rdma_reject rdmarw_cm_reject
#define rdma_reject_msg rdmarw_cm_reject_msg
#define rdma_resolve_addr rdmarw_cm_resolve_addr
#define rdma_resolve_route rdmarw_cm_resolve_route
#define rdma_set_ack_timeout rdmarw_cm_set_ack_timeout
#define rdma_set_afonly rdmarw_cm_set_afonly
#define rdma_set_min_rnr_timer rdmarw_cm_set_min_rnr_timer
#define rdma_set_reuseaddr rdmarw_cm_set_reuseaddr
#define rdma_set_service_type rdmarw_cm_set_service_type

#include <sys/socket.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct net - a network namespace (placeholder: there is one, init_net)
 * @unused: no content
 */
struct net {
	int unused;
};

/* The only namespace; rdma_create_id() takes it or NULL. */
extern struct net init_net;

/**
 * enum rdma_cm_event_type - what happened to an id
 * @RDMA_CM_EVENT_ADDR_RESOLVED: rdma_resolve_addr() found a device
 * @RDMA_CM_EVENT_ADDR_ERROR: address resolution failed (status: -errno)
 * @RDMA_CM_EVENT_ROUTE_RESOLVED: rdma_resolve_route() succeeded
 * @RDMA_CM_EVENT_ROUTE_ERROR: route resolution failed
 * @RDMA_CM_EVENT_CONNECT_REQUEST: a listener got a request; the event's id
 *                                 is a new child id
 * @RDMA_CM_EVENT_CONNECT_RESPONSE: reply to an id without QP (not produced)
 * @RDMA_CM_EVENT_CONNECT_ERROR: the connection could not be set up
 * @RDMA_CM_EVENT_UNREACHABLE: the peer did not answer (status -ETIMEDOUT)
 * @RDMA_CM_EVENT_REJECTED: the peer refused (status: the IB CM reject
 *                          reason, or -ECONNREFUSED on iWARP)
 * @RDMA_CM_EVENT_ESTABLISHED: the connection is up
 * @RDMA_CM_EVENT_DISCONNECTED: the connection is down
 * @RDMA_CM_EVENT_DEVICE_REMOVAL: the id's device is going away
 * @RDMA_CM_EVENT_MULTICAST_JOIN: (not produced)
 * @RDMA_CM_EVENT_MULTICAST_ERROR: (not produced)
 * @RDMA_CM_EVENT_ADDR_CHANGE: (not produced)
 * @RDMA_CM_EVENT_TIMEWAIT_EXIT: IB and RoCE: the QP left time-wait and may
 *                               be reused
 */
enum rdma_cm_event_type {
	RDMA_CM_EVENT_ADDR_RESOLVED,
	RDMA_CM_EVENT_ADDR_ERROR,
	RDMA_CM_EVENT_ROUTE_RESOLVED,
	RDMA_CM_EVENT_ROUTE_ERROR,
	RDMA_CM_EVENT_CONNECT_REQUEST,
	RDMA_CM_EVENT_CONNECT_RESPONSE,
	RDMA_CM_EVENT_CONNECT_ERROR,
	RDMA_CM_EVENT_UNREACHABLE,
	RDMA_CM_EVENT_REJECTED,
	RDMA_CM_EVENT_ESTABLISHED,
	RDMA_CM_EVENT_DISCONNECTED,
	RDMA_CM_EVENT_DEVICE_REMOVAL,
	RDMA_CM_EVENT_MULTICAST_JOIN,
	RDMA_CM_EVENT_MULTICAST_ERROR,
	RDMA_CM_EVENT_ADDR_CHANGE,
	RDMA_CM_EVENT_TIMEWAIT_EXIT,
};

/**
 * enum rdma_ucm_port_space - port spaces
 * @RDMA_PS_IPOIB: IPoIB
 * @RDMA_PS_IB: any QP type
 * @RDMA_PS_TCP: reliable connected (RC)
 * @RDMA_PS_UDP: unreliable datagram (not supported: -EOPNOTSUPP)
 */
enum rdma_ucm_port_space {
	RDMA_PS_IPOIB = 0x0002,
	RDMA_PS_IB = 0x013F,
	RDMA_PS_TCP = 0x0106,
	RDMA_PS_UDP = 0x0111,
};

/**
 * enum ib_cm_rej_reason - IB CM reject reasons (REJECTED status on IB/RoCE)
 * @IB_CM_REJ_NO_QP: no QP available
 * @IB_CM_REJ_NO_EEC: no EEC available
 * @IB_CM_REJ_NO_RESOURCES: no resources available
 * @IB_CM_REJ_TIMEOUT: timeout (also: the active side went away)
 * @IB_CM_REJ_UNSUPPORTED: unsupported request
 * @IB_CM_REJ_INVALID_COMM_ID: invalid communication id
 * @IB_CM_REJ_INVALID_COMM_INSTANCE: invalid communication instance
 * @IB_CM_REJ_INVALID_SERVICE_ID: nobody listens there
 * @IB_CM_REJ_INVALID_TRANSPORT_TYPE: invalid transport type
 * @IB_CM_REJ_STALE_CONN: stale connection
 * @IB_CM_REJ_RDC_NOT_EXIST: RDC does not exist
 * @IB_CM_REJ_INVALID_GID: invalid GID
 * @IB_CM_REJ_INVALID_LID: invalid LID
 * @IB_CM_REJ_INVALID_SL: invalid SL
 * @IB_CM_REJ_INVALID_TRAFFIC_CLASS: invalid traffic class
 * @IB_CM_REJ_INVALID_HOP_LIMIT: invalid hop limit
 * @IB_CM_REJ_INVALID_PACKET_RATE: invalid packet rate
 * @IB_CM_REJ_INVALID_ALT_GID: invalid alternate GID
 * @IB_CM_REJ_INVALID_ALT_LID: invalid alternate LID
 * @IB_CM_REJ_INVALID_ALT_SL: invalid alternate SL
 * @IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS: invalid alternate traffic class
 * @IB_CM_REJ_INVALID_ALT_HOP_LIMIT: invalid alternate hop limit
 * @IB_CM_REJ_INVALID_ALT_PACKET_RATE: invalid alternate packet rate
 * @IB_CM_REJ_PORT_CM_REDIRECT: port CM redirect
 * @IB_CM_REJ_PORT_REDIRECT: port redirect
 * @IB_CM_REJ_INVALID_MTU: invalid MTU
 * @IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES: insufficient responder resources
 * @IB_CM_REJ_CONSUMER_DEFINED: rdma_reject() by the peer
 * @IB_CM_REJ_INVALID_RNR_RETRY: invalid RNR retry
 * @IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID: duplicate local communication id
 * @IB_CM_REJ_INVALID_CLASS_VERSION: invalid class version
 * @IB_CM_REJ_INVALID_FLOW_LABEL: invalid flow label
 * @IB_CM_REJ_INVALID_ALT_FLOW_LABEL: invalid alternate flow label
 * @IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED: vendor option not supported
 */
enum ib_cm_rej_reason {
	IB_CM_REJ_NO_QP = 1,
	IB_CM_REJ_NO_EEC = 2,
	IB_CM_REJ_NO_RESOURCES = 3,
	IB_CM_REJ_TIMEOUT = 4,
	IB_CM_REJ_UNSUPPORTED = 5,
	IB_CM_REJ_INVALID_COMM_ID = 6,
	IB_CM_REJ_INVALID_COMM_INSTANCE = 7,
	IB_CM_REJ_INVALID_SERVICE_ID = 8,
	IB_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	IB_CM_REJ_STALE_CONN = 10,
	IB_CM_REJ_RDC_NOT_EXIST = 11,
	IB_CM_REJ_INVALID_GID = 12,
	IB_CM_REJ_INVALID_LID = 13,
	IB_CM_REJ_INVALID_SL = 14,
	IB_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	IB_CM_REJ_INVALID_HOP_LIMIT = 16,
	IB_CM_REJ_INVALID_PACKET_RATE = 17,
	IB_CM_REJ_INVALID_ALT_GID = 18,
	IB_CM_REJ_INVALID_ALT_LID = 19,
	IB_CM_REJ_INVALID_ALT_SL = 20,
	IB_CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	IB_CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	IB_CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	IB_CM_REJ_PORT_CM_REDIRECT = 24,
	IB_CM_REJ_PORT_REDIRECT = 25,
	IB_CM_REJ_INVALID_MTU = 26,
	IB_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	IB_CM_REJ_CONSUMER_DEFINED = 28,
	IB_CM_REJ_INVALID_RNR_RETRY = 29,
	IB_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	IB_CM_REJ_INVALID_CLASS_VERSION = 31,
	IB_CM_REJ_INVALID_FLOW_LABEL = 32,
	IB_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/* Private-data sizes of the IB CM messages (bytes). */
#define IB_CM_REQ_PRIVATE_DATA_SIZE 92
#define IB_CM_MRA_PRIVATE_DATA_SIZE 222
#define IB_CM_REJ_PRIVATE_DATA_SIZE 148
#define IB_CM_REP_PRIVATE_DATA_SIZE 196
#define IB_CM_RTU_PRIVATE_DATA_SIZE 224
#define IB_CM_DREQ_PRIVATE_DATA_SIZE 220
#define IB_CM_DREP_PRIVATE_DATA_SIZE 224
/* The CMA header the REQ of RDMA_PS_TCP/UDP/IB carries before the ULP's. */
#define RDMA_CM_CMA_HDR_SIZE 36
/* The most private data an iWARP (MPA) connection message carries, as siw. */
#define RDMA_MAX_PRIVATE_DATA 256

/**
 * struct rdma_dev_addr - hardware address of an endpoint
 * @src_dev_addr: unused
 * @dst_dev_addr: unused
 * @net: the namespace (&init_net)
 * @bound_dev_if: unused (0)
 */
struct rdma_dev_addr {
	unsigned char src_dev_addr[32];
	unsigned char dst_dev_addr[32];
	struct net *net;
	int bound_dev_if;
};

/**
 * struct rdma_addr - the two ends' IP addresses and ports
 * @src_addr: local address (sockaddr_in or sockaddr_in6)
 * @dst_addr: remote address
 * @dev_addr: hardware addresses
 */
struct rdma_addr {
	struct sockaddr_storage src_addr;
	struct sockaddr_storage dst_addr;
	struct rdma_dev_addr dev_addr;
};

/**
 * struct rdma_route - how the peer is reached
 * @addr: addresses
 * @num_pri_alt_paths: 1 once the route is resolved, else 0
 */
struct rdma_route {
	struct rdma_addr addr;
	int num_pri_alt_paths;
};

/**
 * struct rdma_conn_param - connection parameters
 * @private_data: bytes for the peer (REQ, REP or MPA), or NULL
 * @private_data_len: their length (each transport has its limit)
 * @responder_resources: RDMA READs the local QP answers at once; a nonzero
 *                       value grants the peer remote READ access
 * @initiator_depth: RDMA READs the local QP issues at once
 * @flow_control: unused
 * @retry_count: unused
 * @rnr_retry_count: unused
 * @srq: unused
 * @qp_num: unused (the id's QP is used)
 */
struct rdma_conn_param {
	const void *private_data;
	u8 private_data_len;
	u8 responder_resources;
	u8 initiator_depth;
	u8 flow_control;
	u8 retry_count;
	u8 rnr_retry_count;
	u8 srq;
	u32 qp_num;
};

/**
 * struct rdma_ud_param - UD parameters (UD is not supported)
 * @private_data: bytes from the peer
 * @private_data_len: their length
 * @qp_num: remote QP number
 * @qkey: remote Q_Key
 */
struct rdma_ud_param {
	const void *private_data;
	u8 private_data_len;
	u32 qp_num;
	u32 qkey;
};

/**
 * struct rdma_cm_event - an event, valid until the handler returns
 * @event: enum rdma_cm_event_type
 * @status: 0, a negative errno, or (REJECTED on IB/RoCE) the reject reason
 * @param: @param.conn for connection events (private data from the peer:
 *         on IB/RoCE the message's whole private-data field, zero-padded;
 *         on iWARP the bytes sent), @param.ud for UD
 */
struct rdma_cm_event {
	enum rdma_cm_event_type event;
	int status;
	union {
		struct rdma_conn_param conn;
		struct rdma_ud_param ud;
	} param;
};

struct rdma_cm_id;

/* Called from the CM thread; a non-zero return destroys @id. */
typedef int (*rdma_cm_event_handler)(struct rdma_cm_id *id,
				     struct rdma_cm_event *event);

/**
 * struct rdma_cm_id - a communication endpoint
 * @device: the device the id is bound to, or NULL
 * @context: the caller's pointer (a child id inherits the listener's)
 * @qp: the QP from rdma_create_qp(), or NULL
 * @event_handler: the handler
 * @route: addresses and route
 * @ps: port space
 * @qp_type: IB_QPT_RC
 * @port_num: the device's port, from 1 (0 while unbound)
 */
struct rdma_cm_id {
	struct ib_device *device;
	void *context;
	struct ib_qp *qp;
	rdma_cm_event_handler event_handler;
	struct rdma_route route;
	enum rdma_ucm_port_space ps;
	enum ib_qp_type qp_type;
	u32 port_num;
};

/**
 * rdma_create_id() - create a communication endpoint
 * @net: NULL or &init_net (there are no other namespaces)
 * @event_handler: called with the id's events (required)
 * @context: stored in the id
 * @ps: RDMA_PS_TCP, RDMA_PS_IB or RDMA_PS_IPOIB
 * @qp_type: IB_QPT_RC
 *
 * Return: the id, or ERR_PTR(-EINVAL) for a NULL handler, another
 * namespace, an unknown port space; ERR_PTR(-EOPNOTSUPP) for RDMA_PS_UDP
 * or a QP type other than RC; ERR_PTR(-ENOMEM); the error of starting the
 * CM thread.
 */
struct rdma_cm_id *rdma_create_id(struct net *net,
				  rdma_cm_event_handler event_handler,
				  void *context, enum rdma_ucm_port_space ps,
				  enum ib_qp_type qp_type);

/**
 * rdma_destroy_id() - destroy an id
 * @id: the id (a second destroy, or NULL, is ignored)
 *
 * A connected id disconnects first (the peer gets DISCONNECTED), a child
 * not yet accepted is rejected, pending events are dropped and no event is
 * delivered after the call returns; when another thread runs the id's
 * handler, the call waits for it to return.  From the id's own handler it
 * only marks the id: it is destroyed when the handler returns.  The QP is
 * not destroyed (call rdma_destroy_qp() first).
 */
void rdma_destroy_id(struct rdma_cm_id *id);

/**
 * rdma_bind_addr() - bind an id to a local address
 * @id: an id in the idle state
 * @addr: AF_INET or AF_INET6 address; a wildcard address binds no device;
 *        port 0 picks a free port
 *
 * Return: 0; -EINVAL for NULL, an id not idle, an unknown family;
 * -EADDRNOTAVAIL for an address no device answers to; -EADDRINUSE for an
 * address and port taken (see rdma_set_reuseaddr()).
 */
int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr);

/**
 * rdma_resolve_addr() - find the device that reaches an address
 * @id: an idle or bound id
 * @src_addr: local address to bind an idle id to, or NULL
 * @dst_addr: the peer's address and port
 * @timeout_ms: unused (resolution is immediate)
 *
 * The outcome is an event: ADDR_RESOLVED, or ADDR_ERROR with
 * -EHOSTUNREACH when no device of the source's fabric answers to
 * @dst_addr.
 *
 * Return: 0; -EINVAL for NULL, an id in another state or a bad family;
 * errors of the implicit bind.
 */
int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		      const struct sockaddr *dst_addr,
		      unsigned long timeout_ms);

/**
 * rdma_resolve_route() - resolve the route to the peer
 * @id: an id whose address is resolved
 * @timeout_ms: unused
 *
 * The outcome is a ROUTE_RESOLVED event.
 *
 * Return: 0, -EINVAL for NULL or an id in another state.
 */
int rdma_resolve_route(struct rdma_cm_id *id, unsigned long timeout_ms);

/**
 * rdma_listen() - wait for connection requests
 * @id: an idle (bound to the wildcard address first) or bound id
 * @backlog: unused
 *
 * Requests to the id's port (and address, unless it is the wildcard) arrive
 * as CONNECT_REQUEST events, each with a new child id.
 *
 * Return: 0; -EINVAL for NULL or an id in another state; -EADDRINUSE when
 * another id listens on the same address and port.
 */
int rdma_listen(struct rdma_cm_id *id, int backlog);

/**
 * rdma_connect() - send a connection request
 * @id: an id whose route is resolved, with a QP
 * @conn_param: parameters and private data (at most 56 bytes on IB and
 *              RoCE: the REQ's 92 less the CMA header; 256 on iWARP)
 *
 * The outcome is an event: ESTABLISHED (both QPs are in RTS), REJECTED
 * (the peer rejected, or nobody listens), UNREACHABLE or CONNECT_ERROR.
 *
 * Return: 0; -EINVAL for NULL, an id in another state, an id without QP or
 * private data over the limit.
 */
int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);

/**
 * rdma_connect_locked() - rdma_connect() from the id's handler
 * @id: as rdma_connect()
 * @conn_param: as rdma_connect()
 *
 * Return: as rdma_connect().
 */
int rdma_connect_locked(struct rdma_cm_id *id,
			struct rdma_conn_param *conn_param);

/**
 * rdma_accept() - accept a connection request
 * @id: the child id of a CONNECT_REQUEST event, with a QP
 * @conn_param: parameters and private data for the reply (at most 196
 *              bytes on IB and RoCE, 256 on iWARP), or NULL on IB and
 *              RoCE (iWARP's MPA reply carries IRD/ORD: NULL is -EINVAL)
 *
 * Moves the QP to RTS; the peer gets ESTABLISHED, then this id does.
 *
 * Return: 0; -EINVAL for NULL (@id; @conn_param on iWARP), an id that is
 * not a child waiting for an
 * answer (accepted or rejected already), an id without QP, private data
 * over the limit; -ECONNRESET when the requester has gone (the id gets
 * nothing more); an ib_modify_qp() error.
 */
int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);

/**
 * rdma_reject() - reject a connection request
 * @id: the child id of a CONNECT_REQUEST event
 * @private_data: bytes for the requester, or NULL
 * @private_data_len: at most 148 on IB and RoCE, 256 on iWARP
 * @reason: IB/RoCE: the reject reason the requester sees (ULPs pass
 *          IB_CM_REJ_CONSUMER_DEFINED); iWARP: ignored (-ECONNREFUSED).
 *          On ibv devices librdmacm can send only
 *          IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED (rdma_reject_ece()) and
 *          CONSUMER_DEFINED, which every other reason becomes.
 *
 * Return: 0; -EINVAL for NULL, an id that is not a child waiting for an
 * answer, private data over the limit.
 */
int rdma_reject(struct rdma_cm_id *id, const void *private_data,
		u8 private_data_len, u8 reason);

/**
 * rdma_disconnect() - tear a connection down
 * @id: a connected id (or one whose peer disconnected)
 *
 * Moves the QP to ERR (flushing it); the peer's QP goes to ERR and the
 * peer gets DISCONNECTED, then this id does; on IB and RoCE both then get
 * TIMEWAIT_EXIT.  On iWARP (a TCP device) the QP goes to SQD first, siw's
 * CLOSING, as iw_cm's graceful close: from the call on, posts fail with
 * -ENOTCONN; what TCP took is delivered, and the QP is in ERR once the
 * connection is down.
 *
 * Return: 0; -EINVAL for NULL or an id that is not connected.
 */
int rdma_disconnect(struct rdma_cm_id *id);

/**
 * rdma_create_qp() - create the id's RC QP and move it to INIT
 * @id: an id bound to a device, without QP
 * @pd: a PD of the id's device
 * @qp_init_attr: as ib_create_qp() (qp_type IB_QPT_RC; port_num is set to
 *                the id's port)
 *
 * Return: 0; -EINVAL for NULL, an id without device or with a QP, a PD of
 * another device; ib_create_qp() and ib_modify_qp() errors.
 */
int rdma_create_qp(struct rdma_cm_id *id, struct ib_pd *pd,
		   struct ib_qp_init_attr *qp_init_attr);

/**
 * rdma_destroy_qp() - destroy the id's QP
 * @id: the id (nothing happens without a QP)
 *
 * The QP is destroyed with ib_destroy_qp(); when that refuses (MRs of its
 * pools still taken) the QP stays and a warning is logged.
 */
void rdma_destroy_qp(struct rdma_cm_id *id);

/**
 * rdma_event_msg() - text of an event type
 * @event: the type
 *
 * Return: the kernel's text ("established", ...), "unrecognized event" for
 * an unknown value.
 */
const char *rdma_event_msg(enum rdma_cm_event_type event);

/**
 * rdma_reject_msg() - text of a REJECTED event's status
 * @id: the id that got it
 * @reason: the event's status
 *
 * Return: the IB CM reason's text on IB and RoCE, the errno's on iWARP,
 * "unrecognized transport" for an id without device.
 */
const char *rdma_reject_msg(struct rdma_cm_id *id, int reason);

/**
 * rdma_is_consumer_reject() - did the peer's ULP reject (rdma_reject())
 * @id: the id that got REJECTED
 * @reason: the event's status
 *
 * Return: true for IB_CM_REJ_CONSUMER_DEFINED on IB and RoCE, for
 * -ECONNREFUSED on iWARP.
 */
bool rdma_is_consumer_reject(struct rdma_cm_id *id, int reason);

/**
 * rdma_consumer_reject_data() - private data of a consumer reject
 * @id: the id that got REJECTED
 * @ev: the event
 * @data_len: set to the length
 *
 * Return: the data, or NULL (and *@data_len untouched) when the reject was
 * not the consumer's.
 */
const void *rdma_consumer_reject_data(struct rdma_cm_id *id,
				      struct rdma_cm_event *ev, u8 *data_len);

/**
 * rdma_set_reuseaddr() - allow binding an address and port in use
 * @id: an idle id
 * @reuse: nonzero to allow (ids that listen never share)
 *
 * On an ibv device the kernel's id takes the value (rdma_set_option())
 * before its bind.
 *
 * Return: 0, -EINVAL for NULL or an id that is not idle.
 */
int rdma_set_reuseaddr(struct rdma_cm_id *id, int reuse);

/**
 * rdma_set_afonly() - an IPv6 wildcard id takes IPv6 only
 * @id: an idle or bound id
 * @afonly: nonzero for IPv6 only
 *
 * On an ibv device the kernel's id takes the value, before its bind when
 * the id is idle.
 *
 * Return: 0, -EINVAL for NULL or an id in another state; on an ibv device
 * the kernel's errno when it refuses the value.
 */
int rdma_set_afonly(struct rdma_cm_id *id, int afonly);

/**
 * rdma_set_service_type() - set the type of service of the connection
 * @id: the id
 * @tos: the value; on an ibv device the kernel's id takes it and uses it
 *       when the route is resolved
 */
void rdma_set_service_type(struct rdma_cm_id *id, int tos);

/**
 * rdma_set_ack_timeout() - set the QP's local ACK timeout
 * @id: an id of an RC QP
 * @timeout: 4.096 us * 2^@timeout; on an ibv device the kernel's id takes
 *           it for the QP's move to RTS
 *
 * Return: 0, -EINVAL for NULL or a QP type without ACKs; on an ibv device
 * the kernel's errno when it refuses the value.
 */
int rdma_set_ack_timeout(struct rdma_cm_id *id, u8 timeout);

/**
 * rdma_set_min_rnr_timer() - set the minimum RNR NAK timer
 * @id: an id of an RC QP
 * @min_rnr_timer: the IBA code (recorded; used on the software device only:
 *                 librdmacm cannot pass it)
 *
 * Return: 0, -EINVAL for NULL or a QP type without RNR NAKs.
 */
int rdma_set_min_rnr_timer(struct rdma_cm_id *id, u8 min_rnr_timer);

/**
 * rdma_get_service_id() - the IB service id of an address's port
 * @id: the id
 * @addr: the address
 *
 * Return: the port space shifted left 16 bits, or'ed with the port.
 */
__be64 rdma_get_service_id(struct rdma_cm_id *id, struct sockaddr *addr);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_RDMA_CM_H */

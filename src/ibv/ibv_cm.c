// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connections through rdma_cm.  Every connection (and listener) has its own
 * event channel, so each call waits only for its own events and a program
 * can drive several connections from one thread, one step at a time.
 */
#include "ibv/ibv_loc.h"

#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define IBV_PDATA_MAX 256
/*
 * Outstanding RDMA READs we offer and ask for on a connection, at most (the
 * device's limits apply first): perftest asks for the device's maximum,
 * 128 on rxe and siw, and small READs are bound by how many are in flight.
 */
#define IBV_RD_ATOM 128

struct rdmarw_ibv_listener {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

/*
 * struct rdmarw_ibv_conn - one RC connection
 * @ch: its event channel
 * @id: its rdma_cm id
 * @dev: the device it runs on
 * @qp: its QP, once created
 * @pdata: private data the peer sent
 * @pdata_len: its length
 * @peer_initiator: the request's initiator depth (passive side)
 * @peer_responder: the request's responder resources (passive side)
 * @connected: established
 * @disc_sent: rdma_disconnect() was called
 * @disc_seen: the DISCONNECTED event arrived
 */
struct rdmarw_ibv_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ib_device *dev;
	struct ibv_qp_priv *qp;
	u8 pdata[IBV_PDATA_MAX];
	u8 pdata_len;
	u8 peer_initiator;
	u8 peer_responder;
	bool connected;
	bool disc_sent;
	bool disc_seen;
};

struct rdma_cm_id *rdmarw__ibv_conn_id(struct rdmarw_ibv_conn *c)
{
	return c->id;
}

void rdmarw__ibv_conn_set_qp(struct rdmarw_ibv_conn *c, struct ibv_qp_priv *iqp)
{
	c->qp = iqp;
}

void rdmarw_ibv_peer_info_set(struct rdmarw_ibv_peer_info *info, u64 addr,
			      u32 rkey, u32 len)
{
	if (!info)
		return;
	info->addr = htobe64(addr);
	info->rkey = htobe32(rkey);
	info->len = htobe32(len);
}

int rdmarw_ibv_peer_info_get(const struct rdmarw_ibv_peer_info *info, u64 *addr,
			     u32 *rkey, u32 *len)
{
	if (!info || !addr || !rkey || !len)
		return -EINVAL;
	*addr = be64toh(info->addr);
	*rkey = be32toh(info->rkey);
	*len = be32toh(info->len);
	return 0;
}

/* Wait for the next event on @ch; the caller acks it. */
static int next_event(struct rdma_event_channel *ch, int timeout_ms,
		      struct rdma_cm_event **ev)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int n;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!n)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(ch, ev))
		return errno ? -errno : -EIO;
	return 0;
}

/* Wait for @want; any other event ends the wait with an error. */
static int expect(struct rdmarw_ibv_conn *c, enum rdma_cm_event_type want,
		  int timeout_ms)
{
	struct rdma_cm_event *ev;
	int ret = next_event(c->ch, timeout_ms, &ev);

	if (ret)
		return ret;
	if (ev->event == want) {
		const struct rdma_conn_param *p = &ev->param.conn;

		if (want == RDMA_CM_EVENT_ESTABLISHED && p->private_data &&
		    p->private_data_len) {
			c->pdata_len = p->private_data_len;
			memcpy(c->pdata, p->private_data, c->pdata_len);
		}
		ret = 0;
	} else if (ev->event == RDMA_CM_EVENT_REJECTED ||
		   ev->event == RDMA_CM_EVENT_UNREACHABLE ||
		   ev->event == RDMA_CM_EVENT_CONNECT_ERROR ||
		   ev->event == RDMA_CM_EVENT_DISCONNECTED) {
		ret = -ECONNREFUSED;
	} else if (ev->event == RDMA_CM_EVENT_ADDR_ERROR ||
		   ev->event == RDMA_CM_EVENT_ROUTE_ERROR) {
		ret = -EHOSTUNREACH;
	} else {
		ret = -ECONNABORTED;
	}
	rdma_ack_cm_event(ev);
	return ret;
}

static int resolve_sockaddr(const char *addr, const char *port, int flags,
			    struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = flags };
	struct addrinfo *res;

	if (getaddrinfo(addr, port, &hints, &res))
		return -EHOSTUNREACH;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

int rdmarw_ibv_listen(const char *addr, const char *port,
		      struct rdmarw_ibv_listener **lp)
{
	struct sockaddr_storage ss;
	struct rdmarw_ibv_listener *l;
	int ret;

	if (!port || !lp)
		return -EINVAL;
	ret = resolve_sockaddr(addr, port, AI_PASSIVE, &ss);
	if (ret)
		return ret;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->ch = rdma_create_event_channel();
	if (!l->ch)
		goto err;
	if (rdma_create_id(l->ch, &l->id, l, RDMA_PS_TCP))
		goto err;
	if (rdma_bind_addr(l->id, (struct sockaddr *)&ss) ||
	    rdma_listen(l->id, 16))
		goto err;
	*lp = l;
	return 0;

err:
	ret = errno ? -errno : -ENOMEM;
	rdmarw_ibv_listener_destroy(l);
	return ret;
}

void rdmarw_ibv_listener_destroy(struct rdmarw_ibv_listener *l)
{
	if (!l)
		return;
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ch)
		rdma_destroy_event_channel(l->ch);
	free(l);
}

static struct rdmarw_ibv_conn *conn_new(void)
{
	struct rdmarw_ibv_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ch = rdma_create_event_channel();
	if (!c->ch) {
		free(c);
		return NULL;
	}
	return c;
}

static int conn_set_device(struct rdmarw_ibv_conn *c)
{
	struct ib_device *dev;

	if (!c->id->verbs)
		return -ENODEV;
	dev = rdmarw__ibv_dev_of_ctx(c->id->verbs);
	if (IS_ERR(dev))
		return (int)PTR_ERR(dev);
	c->dev = dev;
	return 0;
}

/* Take the request's id into a new connection with its own channel. */
static int take_request(struct rdma_cm_event *ev, struct rdmarw_ibv_conn **cp)
{
	const struct rdma_conn_param *p = &ev->param.conn;
	struct rdmarw_ibv_conn *c = conn_new();
	int ret;

	if (!c)
		return -ENOMEM;
	c->id = ev->id;
	c->peer_initiator = p->initiator_depth;
	c->peer_responder = p->responder_resources;
	if (p->private_data && p->private_data_len) {
		c->pdata_len = p->private_data_len;
		memcpy(c->pdata, p->private_data, c->pdata_len);
	}
	ret = rdma_migrate_id(c->id, c->ch) ? -errno : conn_set_device(c);
	if (ret) {
		/* Refuse the request; the id is ours to destroy. */
		rdma_reject(c->id, NULL, 0);
		rdma_destroy_id(c->id);
		rdma_destroy_event_channel(c->ch);
		free(c);
		return ret;
	}
	c->id->context = c;
	*cp = c;
	return 0;
}

/*
 * Ack the request before taking its id: rdma_migrate_id() waits until every
 * event of the id is acked.  The private data is copied out first.
 */
static int ack_and_take(struct rdma_cm_event *ev, struct rdmarw_ibv_conn **cp)
{
	struct rdma_cm_event copy = *ev;
	const struct rdma_conn_param *p = &ev->param.conn;
	u8 pdata[IBV_PDATA_MAX];

	if (p->private_data && p->private_data_len) {
		memcpy(pdata, p->private_data, p->private_data_len);
		copy.param.conn.private_data = pdata;
	}
	rdma_ack_cm_event(ev);
	return take_request(&copy, cp);
}

int rdmarw_ibv_get_request(struct rdmarw_ibv_listener *l, int timeout_ms,
			   struct rdmarw_ibv_conn **cp)
{
	struct rdma_cm_event *ev;
	int ret;

	if (!l || !cp)
		return -EINVAL;
	ret = next_event(l->ch, timeout_ms, &ev);
	if (ret)
		return ret;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		rdma_ack_cm_event(ev);
		return -ECONNABORTED;
	}
	return ack_and_take(ev, cp);
}

int rdmarw_ibv_resolve(const char *addr, const char *port, int timeout_ms,
		       struct rdmarw_ibv_conn **cp)
{
	struct sockaddr_storage ss;
	struct rdmarw_ibv_conn *c;
	int ret;

	if (!addr || !port || !cp || timeout_ms <= 0)
		return -EINVAL;
	ret = resolve_sockaddr(addr, port, 0, &ss);
	if (ret)
		return ret;
	c = conn_new();
	if (!c)
		return -ENOMEM;
	if (rdma_create_id(c->ch, &c->id, c, RDMA_PS_TCP)) {
		ret = -errno;
		goto err;
	}
	ret = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&ss,
				timeout_ms) ?
		      -errno :
		      0;
	if (!ret)
		ret = expect(c, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms * 2);
	if (!ret)
		ret = rdma_resolve_route(c->id, timeout_ms) ? -errno : 0;
	if (!ret)
		ret = expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms * 2);
	if (!ret)
		ret = conn_set_device(c);
	if (ret)
		goto err;
	*cp = c;
	return 0;

err:
	if (c->id)
		rdma_destroy_id(c->id);
	rdma_destroy_event_channel(c->ch);
	free(c);
	return ret;
}

struct ib_device *rdmarw_ibv_conn_device(struct rdmarw_ibv_conn *c)
{
	return c ? c->dev : NULL;
}

struct ib_qp *rdmarw_ibv_create_qp(struct rdmarw_ibv_conn *c, struct ib_pd *pd,
				   struct ib_qp_init_attr *init_attr)
{
	struct ib_qp *qp;

	if (!c || !pd || !init_attr || pd->device != c->dev || c->qp)
		return ERR_PTR(-EINVAL);
	rdmarw__ibv_creating_conn = c;
	qp = ib_create_qp(pd, init_attr);
	rdmarw__ibv_creating_conn = NULL;
	return qp;
}

static u8 rd_atom(int dev_limit, u8 peer)
{
	int v = dev_limit < IBV_RD_ATOM ? dev_limit : IBV_RD_ATOM;

	if (peer && peer < v)
		v = peer;
	return (u8)(v > 0 ? v : 0);
}

static int param_ok(struct rdmarw_ibv_conn *c, const void *priv, u8 len)
{
	if (!c || !c->qp || (len && !priv))
		return -EINVAL;
	if (len > 56 && !rdma_protocol_iwarp(c->dev, 1))
		return -EINVAL;
	return 0;
}

static void now_connected(struct rdmarw_ibv_conn *c)
{
	c->connected = true;
	c->disc_sent = false;
	c->disc_seen = false;
	__atomic_store_n(&c->qp->ibqp.state, IB_QPS_RTS, __ATOMIC_RELEASE);
}

int rdmarw_ibv_accept(struct rdmarw_ibv_conn *c, const void *priv, u8 priv_len,
		      int timeout_ms)
{
	struct rdma_conn_param p;
	u8 keep_len;
	int ret = param_ok(c, priv, priv_len);

	if (ret)
		return ret;
	memset(&p, 0, sizeof(p));
	p.private_data = priv;
	p.private_data_len = priv_len;
	p.responder_resources =
		rd_atom(c->dev->attrs.max_qp_rd_atom, c->peer_initiator);
	p.initiator_depth =
		rd_atom(c->dev->attrs.max_qp_init_rd_atom, c->peer_responder);
	p.rnr_retry_count = 7;
	if (rdma_accept(c->id, &p))
		return errno ? -errno : -EIO;
	/* The request's private data stays what the caller reads. */
	keep_len = c->pdata_len;
	ret = expect(c, RDMA_CM_EVENT_ESTABLISHED, timeout_ms);
	c->pdata_len = keep_len;
	if (!ret)
		now_connected(c);
	return ret;
}

int rdmarw_ibv_connect(struct rdmarw_ibv_conn *c, const void *priv, u8 priv_len,
		       int timeout_ms)
{
	struct rdma_conn_param p;
	int ret = param_ok(c, priv, priv_len);

	if (ret)
		return ret;
	memset(&p, 0, sizeof(p));
	p.private_data = priv;
	p.private_data_len = priv_len;
	p.responder_resources = rd_atom(c->dev->attrs.max_qp_rd_atom, 0);
	p.initiator_depth = rd_atom(c->dev->attrs.max_qp_init_rd_atom, 0);
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (rdma_connect(c->id, &p))
		return errno ? -errno : -EIO;
	c->pdata_len = 0;
	ret = expect(c, RDMA_CM_EVENT_ESTABLISHED, timeout_ms);
	if (!ret)
		now_connected(c);
	return ret;
}

const void *rdmarw_ibv_conn_private_data(struct rdmarw_ibv_conn *c, u8 *len)
{
	if (len)
		*len = c ? c->pdata_len : 0;
	if (!c || !c->pdata_len)
		return NULL;
	return c->pdata;
}

static void send_disconnect(struct rdmarw_ibv_conn *c)
{
	if (c->disc_sent)
		return;
	rdma_disconnect(c->id);
	c->disc_sent = true;
	if (c->qp)
		__atomic_store_n(&c->qp->ibqp.state, IB_QPS_ERR,
				 __ATOMIC_RELEASE);
}

/* Wait for DISCONNECTED (once), skipping other events. */
static int wait_disconnected(struct rdmarw_ibv_conn *c, int timeout_ms)
{
	struct rdma_cm_event *ev;
	int ret;

	while (!c->disc_seen) {
		ret = next_event(c->ch, timeout_ms, &ev);
		if (ret)
			return ret;
		c->disc_seen = ev->event == RDMA_CM_EVENT_DISCONNECTED;
		rdma_ack_cm_event(ev);
	}
	return 0;
}

int rdmarw_ibv_disconnect(struct rdmarw_ibv_conn *c, int timeout_ms)
{
	if (!c)
		return -EINVAL;
	if (!c->connected)
		return 0;
	send_disconnect(c);
	return timeout_ms ? wait_disconnected(c, timeout_ms) : 0;
}

int rdmarw_ibv_wait_disconnect(struct rdmarw_ibv_conn *c, int timeout_ms)
{
	int ret;

	if (!c)
		return -EINVAL;
	if (!c->connected)
		return 0;
	ret = wait_disconnected(c, timeout_ms);
	if (ret)
		return ret;
	/* Answer the peer (on InfiniBand and RoCE this sends the DREP). */
	send_disconnect(c);
	return 0;
}

int rdmarw_ibv_conn_destroy(struct rdmarw_ibv_conn *c)
{
	if (!c)
		return 0;
	if (c->qp)
		return -EBUSY;
	rdma_destroy_id(c->id);
	rdma_destroy_event_channel(c->ch);
	free(c);
	return 0;
}

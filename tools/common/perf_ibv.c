// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rdmarw-perf's ibv pair (perf_ibv.h). */
#include "perf_ibv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef RDMARW_HAVE_IBV
#include <netdb.h>
#include <pthread.h>
#include <rdmarw/ibv.h>
#include <rdmarw/rdma_cm.h>
#include <time.h>

#define PERF_IBV_WAIT_S 30 /* the whole connection; never expected */
/*
 * Outstanding RDMA READs offered and asked for, at most (the device's
 * limits apply first): perftest asks for the device's maximum, 128 on rxe
 * and siw, and small READs are bound by how many are in flight.
 */
#define PERF_IBV_RD_ATOM 128

/*
 * The ids of the pair; the handlers (CM thread) write @up, @down and @err
 * under @lock.
 */
struct perf_ibv_priv {
	struct rdma_cm_id *listen_id, *id, *peer_id;
	struct ib_qp_init_attr *attr, peer_attr;
	struct perf_ibv *p;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int up, down, err;
};

static u8 rd_atom(int dev_limit)
{
	int v = dev_limit < PERF_IBV_RD_ATOM ? dev_limit : PERF_IBV_RD_ATOM;

	return (u8)(v > 0 ? v : 0);
}

static void conn_param(struct perf_ibv *p, struct rdma_conn_param *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = rd_atom(p->dev->attrs.max_qp_rd_atom);
	cp->initiator_depth = rd_atom(p->dev->attrs.max_qp_init_rd_atom);
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

/* The CM thread: resolve, make each QP, connect and accept. */
static int on_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct perf_ibv_priv *v = id->context;
	struct rdma_conn_param cp;
	int ret = 0;

	pthread_mutex_lock(&v->lock);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 5000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rdma_create_qp(id, v->p->pd, v->attr);
		if (!ret) {
			v->p->qp = id->qp;
			conn_param(v->p, &cp);
			ret = rdma_connect(id, &cp);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		v->peer_id = id;
		ret = rdma_create_qp(id, v->p->peer_pd, &v->peer_attr);
		if (!ret) {
			v->p->peer_qp = id->qp;
			conn_param(v->p, &cp);
			/* never more than the requester offers */
			if (cp.responder_resources >
			    ev->param.conn.initiator_depth)
				cp.responder_resources =
					ev->param.conn.initiator_depth;
			if (cp.initiator_depth >
			    ev->param.conn.responder_resources)
				cp.initiator_depth =
					ev->param.conn.responder_resources;
			ret = rdma_accept(id, &cp);
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		v->up++;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		v->down++;
		if (id == v->peer_id)
			rdma_disconnect(id); /* the DREP on IB and RoCE */
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		ret = ev->status ? ev->status : -ECONNREFUSED;
		break;
	}
	if (ret && !v->err)
		v->err = ret;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
	return 0; /* perf_ibv_close() destroys the ids */
}

/* Wait (v->lock held) until both sides are up, or down. */
static int wait_for(struct perf_ibv_priv *v, bool down, int secs)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	while (down ? v->down < 2 : !v->err && v->up < 2)
		if (pthread_cond_timedwait(&v->cond, &v->lock, &ts))
			return -ETIMEDOUT;
	return down ? 0 : v->err;
}

static int sockaddr_of(const char *addr, u16 port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char ps[8];

	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(addr, ps, &hints, &res))
		return -EHOSTUNREACH;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static u16 port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static int connect_pair(struct perf_ibv *p, struct perf_ibv_priv *v,
			const char *addr, struct ib_qp_init_attr *attr)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	int ret;

	v->peer_attr = (struct ib_qp_init_attr){
		.send_cq = p->peer_cq,
		.recv_cq = p->peer_cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	v->attr = attr;
	v->p = p;
	ret = sockaddr_of(addr, 0, &ss);
	if (ret)
		return ret;
	/* the listener takes a port the kernel picks */
	id = rdma_create_id(&init_net, on_cm, v, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return (int)PTR_ERR(id);
	v->listen_id = id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!ret)
		ret = rdma_listen(id, 4);
	if (!ret)
		ret = sockaddr_of(addr, port_of(&id->route.addr.src_addr), &ss);
	if (ret)
		return ret;
	id = rdma_create_id(&init_net, on_cm, v, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return (int)PTR_ERR(id);
	pthread_mutex_lock(&v->lock);
	v->id = id;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&ss, 5000);
	if (!ret)
		ret = wait_for(v, false, PERF_IBV_WAIT_S);
	pthread_mutex_unlock(&v->lock);
	return ret;
}

struct ib_device *perf_ibv_device(const char *name)
{
	return rdmarw_ibv_open(name);
}

int perf_ibv_open(struct perf_ibv *p, const char *name, const char *addr,
		  struct ib_qp_init_attr *attr, int cqe)
{
	struct perf_ibv_priv *v;
	int ret;

	if (!p || !name || !addr || !attr)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->cond, NULL);
	p->priv = v;
	p->dev = rdmarw_ibv_open(name);
	if (IS_ERR(p->dev)) {
		ret = (int)PTR_ERR(p->dev);
		p->dev = NULL;
		goto err;
	}
	p->pd = ib_alloc_pd(p->dev, 0);
	p->peer_pd = ib_alloc_pd(p->dev, 0);
	p->cq = ib_alloc_cq(p->dev, NULL, cqe, 0, IB_POLL_DIRECT);
	p->peer_cq = ib_alloc_cq(p->dev, NULL, 64, 0, IB_POLL_DIRECT);
	ret = IS_ERR(p->pd)	 ? (int)PTR_ERR(p->pd) :
	      IS_ERR(p->peer_pd) ? (int)PTR_ERR(p->peer_pd) :
	      IS_ERR(p->cq)	 ? (int)PTR_ERR(p->cq) :
	      IS_ERR(p->peer_cq) ? (int)PTR_ERR(p->peer_cq) :
				   0;
	if (ret)
		goto err;
	attr->send_cq = p->cq;
	attr->recv_cq = p->cq;
	ret = connect_pair(p, v, addr, attr);
	if (ret)
		goto err;
	return 0;

err:
	perf_ibv_close(p);
	return ret;
}

int perf_ibv_declare(struct perf_ibv *p, void *buf, size_t len)
{
	return rdmarw_ibv_declare(p->pd, buf, len);
}

static void free_obj(struct perf_ibv *p)
{
	if (p->cq && !IS_ERR(p->cq))
		ib_free_cq(p->cq);
	if (p->peer_cq && !IS_ERR(p->peer_cq))
		ib_free_cq(p->peer_cq);
	if (p->pd && !IS_ERR(p->pd))
		ib_dealloc_pd(p->pd);
	if (p->peer_pd && !IS_ERR(p->peer_pd))
		ib_dealloc_pd(p->peer_pd);
	if (p->dev)
		rdmarw_ibv_close(p->dev);
}

void perf_ibv_close(struct perf_ibv *p)
{
	struct perf_ibv_priv *v = p->priv;

	if (v) {
		/* one side disconnects, the other answers from its handler */
		pthread_mutex_lock(&v->lock);
		if (v->up == 2) {
			pthread_mutex_unlock(&v->lock);
			rdma_disconnect(v->id);
			pthread_mutex_lock(&v->lock);
			wait_for(v, true, 5);
		}
		pthread_mutex_unlock(&v->lock);
		rdma_destroy_id(v->id);
		rdma_destroy_id(v->peer_id);
		rdma_destroy_id(v->listen_id);
		if (p->qp)
			ib_destroy_qp(p->qp);
		if (p->peer_qp)
			ib_destroy_qp(p->peer_qp);
		pthread_mutex_destroy(&v->lock);
		pthread_cond_destroy(&v->cond);
		free(v);
	}
	free_obj(p);
	memset(p, 0, sizeof(*p));
}

#else /* !RDMARW_HAVE_IBV */

struct ib_device *perf_ibv_device(const char *name)
{
	return ERR_PTR(-EOPNOTSUPP);
}

int perf_ibv_open(struct perf_ibv *p, const char *name, const char *addr,
		  struct ib_qp_init_attr *attr, int cqe)
{
	return -EOPNOTSUPP;
}

int perf_ibv_declare(struct perf_ibv *p, void *buf, size_t len)
{
	return -EOPNOTSUPP;
}

void perf_ibv_close(struct perf_ibv *p)
{
}
#endif

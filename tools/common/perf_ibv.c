// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rdmarw-perf's ibv pair (perf_ibv.h). */
#include "perf_ibv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef RDMARW_HAVE_IBV
#include <pthread.h>
#include <rdmarw/ibv.h>

#define PERF_IBV_WAIT_MS 30000 /* one connection step; never expected */

struct perf_ibv_priv {
	struct rdmarw_ibv_listener *l;
	struct rdmarw_ibv_conn *conn, *peer_conn;
	struct ib_qp_init_attr peer_attr;
	struct perf_ibv *p;
	int peer_ret;
};

/* The passive side: take the request, make its QP, accept. */
static void *passive(void *arg)
{
	struct perf_ibv_priv *v = arg;
	struct ib_qp *qp;
	int ret;

	ret = rdmarw_ibv_get_request(v->l, PERF_IBV_WAIT_MS, &v->peer_conn);
	if (!ret) {
		qp = rdmarw_ibv_create_qp(v->peer_conn, v->p->peer_pd,
					  &v->peer_attr);
		if (IS_ERR(qp))
			ret = (int)PTR_ERR(qp);
		else
			v->p->peer_qp = qp;
	}
	if (!ret)
		ret = rdmarw_ibv_accept(v->peer_conn, NULL, 0,
					PERF_IBV_WAIT_MS);
	v->peer_ret = ret;
	return NULL;
}

/* A port of its own for each run: 30000 + a slice picked by the pid. */
static int listen_free_port(struct perf_ibv_priv *v, const char *addr,
			    char *port, size_t len)
{
	unsigned int base = (unsigned int)getpid() % 5000, i;
	int ret = -EADDRINUSE;

	for (i = 0; i < 32 && ret == -EADDRINUSE; i++) {
		snprintf(port, len, "%u", 30000 + (base + i) % 5000);
		ret = rdmarw_ibv_listen(addr, port, &v->l);
	}
	return ret;
}

static int connect_pair(struct perf_ibv *p, struct perf_ibv_priv *v,
			const char *addr, struct ib_qp_init_attr *attr)
{
	char port[16];
	pthread_t t;
	struct ib_qp *qp;
	int ret;

	ret = listen_free_port(v, addr, port, sizeof(port));
	if (ret)
		return ret;
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
	v->p = p;
	if (pthread_create(&t, NULL, passive, v))
		return -EAGAIN;
	ret = rdmarw_ibv_resolve(addr, port, 5000, &v->conn);
	if (!ret) {
		qp = rdmarw_ibv_create_qp(v->conn, p->pd, attr);
		if (IS_ERR(qp))
			ret = (int)PTR_ERR(qp);
		else
			p->qp = qp;
	}
	if (!ret)
		ret = rdmarw_ibv_connect(v->conn, NULL, 0, PERF_IBV_WAIT_MS);
	pthread_join(t, NULL); /* on failure it gives up after its wait */
	return ret ? ret : v->peer_ret;
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
		/* one side starts, the other answers, the first collects */
		if (v->conn)
			rdmarw_ibv_disconnect(v->conn, 0);
		if (v->peer_conn)
			rdmarw_ibv_wait_disconnect(v->peer_conn, 5000);
		if (v->conn)
			rdmarw_ibv_wait_disconnect(v->conn, 5000);
		if (p->qp)
			ib_destroy_qp(p->qp);
		if (p->peer_qp)
			ib_destroy_qp(p->peer_qp);
		rdmarw_ibv_conn_destroy(v->conn);
		rdmarw_ibv_conn_destroy(v->peer_conn);
		rdmarw_ibv_listener_destroy(v->l);
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A QP pair on one ibv device, connected through rdma_cm (ibv_env.h). */
#include "helpers/ibv_env.h"

#ifdef RDMARW_HAVE_IBV
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PAIR_WAIT_MS 30000 /* for one connection step (never expected) */
#define PAIR_PORTS 20000 /* ports tried: [20000, 40000) */

struct passive {
	struct ibv_pair *p;
	struct ib_pd *pd;
	struct ib_qp_init_attr *attr;
	const void *priv;
	u8 priv_len;
	int ret;
};

/* The passive side: take the request, make the QP, accept. */
static void *passive_main(void *arg)
{
	struct passive *s = arg;
	struct ibv_pair *p = s->p;
	struct ib_qp *qp;
	int ret;

	ret = rdmarw_ibv_get_request(p->l, PAIR_WAIT_MS, &p->peer_conn);
	if (!ret) {
		qp = rdmarw_ibv_create_qp(p->peer_conn, s->pd, s->attr);
		if (IS_ERR(qp))
			ret = (int)PTR_ERR(qp);
		else
			p->peer_qp = qp;
	}
	if (!ret)
		ret = rdmarw_ibv_accept(p->peer_conn, s->priv, s->priv_len,
					PAIR_WAIT_MS);
	s->ret = ret;
	return NULL;
}

/* Listen on the next port that is free; ports are never reused by one
 * process, so a port some earlier pair left in TIME_WAIT is no issue. */
static int listen_somewhere(struct ibv_pair *p, const char *addr)
{
	static unsigned int next;
	char port[16];
	int tries, ret = -EADDRINUSE;

	if (!next)
		next = (unsigned int)getpid() * 61 % PAIR_PORTS;
	for (tries = 0; tries < 64 && ret == -EADDRINUSE; tries++) {
		snprintf(port, sizeof(port), "%u", 20000 + next);
		next = (next + 1) % PAIR_PORTS;
		ret = rdmarw_ibv_listen(addr, port, &p->l);
	}
	if (!ret)
		snprintf(p->port, sizeof(p->port), "%s", port);
	return ret;
}

int ibv_pair_connect(struct ibv_pair *p, const char *addr, struct ib_pd *pd,
		     struct ib_qp_init_attr *attr, struct ib_pd *peer_pd,
		     struct ib_qp_init_attr *peer_attr, const void *priv,
		     u8 priv_len)
{
	struct passive s = { .p = p,
			     .pd = peer_pd,
			     .attr = peer_attr,
			     .priv = priv,
			     .priv_len = priv_len };
	struct ib_qp *qp;
	pthread_t t;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = listen_somewhere(p, addr);
	if (ret)
		return ret;
	if (pthread_create(&t, NULL, passive_main, &s)) {
		ibv_pair_destroy(p);
		return -EAGAIN;
	}
	ret = rdmarw_ibv_resolve(addr, p->port, 5000, &p->conn);
	if (!ret) {
		qp = rdmarw_ibv_create_qp(p->conn, pd, attr);
		if (IS_ERR(qp))
			ret = (int)PTR_ERR(qp);
		else
			p->qp = qp;
	}
	if (!ret)
		ret = rdmarw_ibv_connect(p->conn, NULL, 0, PAIR_WAIT_MS);
	/* On failure the passive side gives up once its wait times out. */
	pthread_join(t, NULL);
	if (!ret)
		ret = s.ret;
	if (ret)
		ibv_pair_destroy(p);
	return ret;
}

static int destroy_side(struct ib_qp *qp, struct rdmarw_ibv_conn *c)
{
	int ret = 0, r;

	if (qp)
		ret = ib_destroy_qp(qp);
	r = rdmarw_ibv_conn_destroy(c);
	return ret ? ret : r;
}

int ibv_pair_destroy(struct ibv_pair *p)
{
	int ret, r;

	/* One side starts, the other answers, then the first collects. */
	if (p->conn)
		rdmarw_ibv_disconnect(p->conn, 0);
	if (p->peer_conn)
		rdmarw_ibv_wait_disconnect(p->peer_conn, 5000);
	if (p->conn)
		rdmarw_ibv_wait_disconnect(p->conn, 5000);
	ret = destroy_side(p->qp, p->conn);
	r = destroy_side(p->peer_qp, p->peer_conn);
	if (!ret)
		ret = r;
	rdmarw_ibv_listener_destroy(p->l);
	memset(p, 0, sizeof(*p));
	return ret;
}
#else
/* Nothing to build without the backend (a unit must not be empty). */
extern int rdmarw_tests_no_ibv_env;
#endif /* RDMARW_HAVE_IBV */

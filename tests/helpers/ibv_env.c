// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The lab tests' set-up on ibv devices (ibv_env.h): the run on rxe0 and
 * siw0, each side's PD and CQ, and a QP pair connected through rdma_cm.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/ibv_env.h"

static void test_no_backend(void **state)
{
	skip();
}

int ibv_lab_no_backend(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_backend),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

#ifdef RDMARW_HAVE_IBV
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAIR_WAIT_MS 30000 /* for the whole connection (never expected) */
#define DONE_WAIT_S 30 /* for a completion (never expected) */

static void pair_fail(struct ibv_pair *p, int status)
{
	if (!p->err)
		p->err = status ? status : -ECONNREFUSED;
}

const char *ibv_lab_dev;
const char *ibv_lab_addr;

int ibv_lab_run(const char *name, const struct CMUnitTest *tests, size_t n)
{
	static const struct {
		const char *dev, *env;
	} devs[] = {
		{ "rxe0", "LAB_RXE_ADDR" },
		{ "siw0", "LAB_SIW_ADDR" },
	};
	char group[64];
	unsigned int i;
	int fails = 0;

	rdmarw_ibv_open_all();
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		ibv_lab_dev = devs[i].dev;
		ibv_lab_addr = getenv(devs[i].env);
		snprintf(group, sizeof(group), "%s %s", name, ibv_lab_dev);
		fails += _cmocka_run_group_tests(group, tests, n, NULL, NULL);
	}
	if (rdmarw_ibv_close_all()) {
		fprintf(stderr, "ibv devices still busy at exit\n");
		fails++;
	}
	return fails;
}

bool ibv_ends_open(struct ibv_ends *e, int cqe, enum ib_poll_context poll_ctx)
{
	memset(e, 0, sizeof(*e));
	if (!ibv_lab_addr)
		return false;
	e->dev = ib_device_get_by_name(ibv_lab_dev);
	if (!e->dev)
		return false;
	e->pd = ib_alloc_pd(e->dev, 0);
	assert_false(IS_ERR(e->pd));
	e->peer_pd = ib_alloc_pd(e->dev, 0);
	assert_false(IS_ERR(e->peer_pd));
	e->cq = ib_alloc_cq(e->dev, NULL, cqe, 0, poll_ctx);
	assert_false(IS_ERR(e->cq));
	e->peer_cq = ib_alloc_cq(e->dev, NULL, cqe, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(e->peer_cq));
	return true;
}

void ibv_ends_close(struct ibv_ends *e)
{
	assert_int_equal(ib_free_cq(e->cq), 0);
	assert_int_equal(ib_free_cq(e->peer_cq), 0);
	assert_int_equal(ib_dealloc_pd(e->pd), 0);
	assert_int_equal(ib_dealloc_pd(e->peer_pd), 0);
}

struct ib_mr *ibv_remote_mr(struct ib_pd *pd, void *buf, size_t len)
{
	struct ib_mr *mr;

	mr = ib_reg_user_mr(pd, (uintptr_t)buf, len, (uintptr_t)buf,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_READ);
	assert_false(IS_ERR(mr));
	return mr;
}

static void done_record(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibv_done *d = container_of(wc->wr_cqe, struct ibv_done, cqe);

	d->wc = *wc;
	__atomic_add_fetch(&d->calls, 1, __ATOMIC_RELEASE);
}

void ibv_done_init(struct ibv_done *d)
{
	memset(d, 0, sizeof(*d));
	d->cqe.done = done_record;
}

void ibv_done_wait(struct ib_cq *cq, struct ibv_done *d, int n)
{
	time_t end = time(NULL) + DONE_WAIT_S;

	while (__atomic_load_n(&d->calls, __ATOMIC_ACQUIRE) < n &&
	       time(NULL) < end) {
		if (cq->poll_ctx == IB_POLL_DIRECT)
			ib_process_cq_direct(cq, -1);
		else
			sched_yield();
	}
	assert_int_equal(__atomic_load_n(&d->calls, __ATOMIC_ACQUIRE), n);
}

void ibv_conn_param(struct rdma_conn_param *cp, const void *priv, u8 len)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = priv;
	cp->private_data_len = len;
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

/* The passive side, from the CONNECT_REQUEST handler: QP, then accept. */
static int pair_request(struct ibv_pair *p, struct rdma_cm_id *child,
			struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp;
	int ret;

	p->peer_id = child;
	p->req_pdata_len = ev->param.conn.private_data_len;
	ret = rdma_create_qp(child, p->peer_pd, p->peer_attr);
	if (ret)
		return ret;
	p->peer_qp = child->qp;
	ibv_conn_param(&cp, p->priv, p->priv_len);
	return rdma_accept(child, &cp);
}

static int pair_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct ibv_pair *p = id->context;
	struct rdma_conn_param cp;
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 5000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rdma_create_qp(id, p->pd, p->attr);
		if (!ret) {
			p->qp = id->qp;
			ibv_conn_param(&cp, NULL, 0);
			ret = rdma_connect(id, &cp);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		ret = pair_request(p, id, ev);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id == p->id && ev->param.conn.private_data_len) {
			p->pdata_len = ev->param.conn.private_data_len;
			memcpy(p->pdata, ev->param.conn.private_data,
			       p->pdata_len);
		}
		p->up++;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		p->down++;
		if (id == p->peer_id)
			rdma_disconnect(id); /* the DREP on IB and RoCE */
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		pair_fail(p, ev->status);
		break;
	}
	if (ret)
		pair_fail(p, ret);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0; /* ids are destroyed by ibv_pair_destroy() */
}

/* Wait until @what holds or @ms pass (p->lock held). */
static int pair_wait(struct ibv_pair *p, bool (*what)(struct ibv_pair *),
		     int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (!what(p))
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts))
			return what(p) ? 0 : -ETIMEDOUT;
	return 0;
}

static bool pair_up(struct ibv_pair *p)
{
	return p->err || p->up == 2;
}

static bool pair_down(struct ibv_pair *p)
{
	return p->down >= 2;
}

static int pair_addr(const char *addr, u16 port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST };
	struct addrinfo *res;
	char ps[8];

	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(addr, ps, &hints, &res))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static u16 pair_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* An id of the pair's, and @addr with @port in @ss. */
static int pair_id(struct ibv_pair *p, const char *addr, u16 port,
		   struct sockaddr_storage *ss, struct rdma_cm_id **id)
{
	int ret = pair_addr(addr, port, ss);

	if (ret)
		return ret;
	*id = rdma_create_id(&init_net, pair_handler, p, RDMA_PS_TCP,
			     IB_QPT_RC);
	return IS_ERR(*id) ? (int)PTR_ERR(*id) : 0;
}

int ibv_pair_connect(struct ibv_pair *p, const char *addr, struct ib_pd *pd,
		     struct ib_qp_init_attr *attr, struct ib_pd *peer_pd,
		     struct ib_qp_init_attr *peer_attr, const void *priv,
		     u8 priv_len)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	int ret;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->pd = pd;
	p->attr = attr;
	p->peer_pd = peer_pd;
	p->peer_attr = peer_attr;
	p->priv = priv;
	p->priv_len = priv_len;
	ret = pair_id(p, addr, 0, &ss, &id);
	if (ret)
		goto err;
	p->listen_id = id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!ret)
		ret = rdma_listen(id, 4);
	if (ret)
		goto err;
	p->port = pair_port(&id->route.addr.src_addr);
	ret = pair_id(p, addr, p->port, &ss, &id);
	if (ret)
		goto err;
	pthread_mutex_lock(&p->lock);
	p->id = id;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&ss, 5000);
	if (!ret)
		ret = pair_wait(p, pair_up, PAIR_WAIT_MS);
	if (!ret)
		ret = p->err;
	pthread_mutex_unlock(&p->lock);
	if (ret)
		goto err;
	return 0;

err:
	ibv_pair_destroy(p);
	return ret;
}

int ibv_pair_destroy(struct ibv_pair *p)
{
	int ret = 0;

	if (!p->listen_id && !p->id)
		return 0;
	pthread_mutex_lock(&p->lock);
	if (p->up == 2 && !p->err) {
		pthread_mutex_unlock(&p->lock);
		rdma_disconnect(p->id);
		pthread_mutex_lock(&p->lock);
		pair_wait(p, pair_down, 5000);
	}
	pthread_mutex_unlock(&p->lock);
	/* the handlers are done with the ids once they are destroyed */
	rdma_destroy_id(p->id);
	rdma_destroy_id(p->peer_id);
	rdma_destroy_id(p->listen_id);
	if (p->qp)
		ret = ib_destroy_qp(p->qp);
	if (p->peer_qp && !ret)
		ret = ib_destroy_qp(p->peer_qp);
	else if (p->peer_qp)
		ib_destroy_qp(p->peer_qp);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	memset(p, 0, sizeof(*p));
	return ret;
}
#endif /* RDMARW_HAVE_IBV */

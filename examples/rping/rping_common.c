// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared parts of the rping server and client (see rping_common.h). */
#include "rping_common.h"

#include <rdmarw/soft.h>

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RPING_WAIT_S 30

const char *rping_src;
static struct soft_fabric *soft_fab;
static struct ib_device *soft_dev;

int rping_parse(int argc, char **argv, struct rping_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->port = "7174";
	o->size = 64;
	while ((c = getopt(argc, argv, "a:p:C:S:I:P:vVd")) != -1) {
		switch (c) {
		case 'a':
			o->addr = optarg;
			break;
		case 'I':
			o->src = optarg;
			break;
		case 'P':
			o->profile = optarg;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'C':
			o->count = atoi(optarg);
			break;
		case 'S':
			o->size = (unsigned int)atoi(optarg);
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'V':
			o->validate = true;
			break;
		case 'd':
			break;
		default:
			return -EINVAL;
		}
	}
	/* rping's limits: room for "rdma-ping-%d: " and a terminator. */
	if (o->size < 16 || o->size > 64 * 1024 || o->count < 0)
		return -EINVAL;
	return 0;
}

static int sockaddr_of(const char *addr, const char *port, bool passive,
		       struct sockaddr_storage *ss);

int rping_soft_open(const struct rping_opts *o, const char *addr)
{
	struct sockaddr_storage ss;
	struct soft_profile p;
	int ret;

	if (!o->profile)
		return 0;
	if (!addr)
		return -EINVAL;
	ret = soft_profile_get(o->profile, &p);
	if (!ret)
		ret = sockaddr_of(addr, "0", false, &ss);
	if (ret)
		return ret;
	soft_fab = soft_fabric_create();
	if (IS_ERR(soft_fab)) {
		ret = (int)PTR_ERR(soft_fab);
		soft_fab = NULL;
		return ret;
	}
	soft_dev = soft_device_create(soft_fab, NULL, &p);
	if (IS_ERR(soft_dev)) {
		ret = (int)PTR_ERR(soft_dev);
		soft_dev = NULL;
		return ret;
	}
	return soft_device_add_addr(soft_dev, (struct sockaddr *)&ss);
}

void rping_soft_close(void)
{
	if (soft_dev)
		soft_device_destroy(soft_dev);
	if (soft_fab)
		soft_fabric_destroy(soft_fab);
	soft_dev = NULL;
	soft_fab = NULL;
}

static void wait_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rping_wait *w = container_of(wc->wr_cqe, struct rping_wait, cqe);

	w->wc = *wc;
	w->done = true;
}

void rping_wait_init(struct rping_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->cqe.done = wait_done;
}

static void nap(void)
{
	struct timespec ts = { .tv_nsec = 50 * 1000 };

	nanosleep(&ts, NULL);
}

static void set_state(struct rping_cm *cm, enum rping_state st, int err)
{
	if (cm->state >= RPING_DOWN)
		return; /* the first end stays */
	cm->state = st;
	cm->err = err;
	pthread_cond_broadcast(&cm->cond);
}

/* The CM thread: record what happened; the main thread acts on it. */
static int on_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rping_cm *cm = id->context;
	int ret = 0;

	pthread_mutex_lock(&cm->lock);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 2000);
		if (ret)
			set_state(cm, RPING_ERROR, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		set_state(cm, RPING_ROUTE, 0);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (cm->id) {
			ret = 1; /* one client at a time: refuse, destroy */
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			break;
		}
		cm->id = id;
		set_state(cm, RPING_REQUEST, 0);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		set_state(cm, RPING_UP, 0);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		set_state(cm, RPING_DOWN, 0);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		fprintf(stderr, "rping: %s (status %d)\n",
			rdma_event_msg(ev->event), ev->status);
		set_state(cm, RPING_ERROR, ev->status ? ev->status : -EIO);
		break;
	}
	pthread_mutex_unlock(&cm->lock);
	return ret;
}

/* Wait until @cm->state reaches @st (or ends); 30 s at most. */
static int wait_state(struct rping_cm *cm, enum rping_state st, bool forever)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += RPING_WAIT_S;
	pthread_mutex_lock(&cm->lock);
	while (cm->state < st && !ret)
		ret = forever ?
			      pthread_cond_wait(&cm->cond, &cm->lock) :
			      pthread_cond_timedwait(&cm->cond, &cm->lock, &ts);
	if (ret)
		ret = -ETIMEDOUT;
	else if (cm->state == RPING_ERROR)
		ret = cm->err < 0 ? cm->err : -ECONNREFUSED;
	else if (cm->state != st)
		ret = -ECONNRESET;
	pthread_mutex_unlock(&cm->lock);
	return ret;
}

static int sockaddr_of(const char *addr, const char *port, bool passive,
		       struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	struct addrinfo *res;

	if (getaddrinfo(addr, port, &hints, &res))
		return -EHOSTUNREACH;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static int cm_init(struct rping_cm *cm, struct rdma_cm_id **id)
{
	memset(cm, 0, sizeof(*cm));
	pthread_mutex_init(&cm->lock, NULL);
	pthread_cond_init(&cm->cond, NULL);
	*id = rdma_create_id(&init_net, on_cm, cm, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(*id)) {
		int ret = (int)PTR_ERR(*id);

		*id = NULL;
		return ret;
	}
	return 0;
}

int rping_cm_listen(struct rping_cm *cm, const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	int ret = cm_init(cm, &cm->listen_id);

	if (!ret)
		ret = sockaddr_of(addr, port, true, &ss);
	if (!ret)
		ret = rdma_bind_addr(cm->listen_id, (struct sockaddr *)&ss);
	if (!ret)
		ret = rdma_listen(cm->listen_id, 1);
	return ret ? ret : wait_state(cm, RPING_REQUEST, true);
}

int rping_cm_resolve(struct rping_cm *cm, const char *addr, const char *port)
{
	struct sockaddr_storage ss, src;
	int ret = cm_init(cm, &cm->id);

	if (!ret)
		ret = sockaddr_of(addr, port, false, &ss);
	if (!ret && rping_src)
		ret = sockaddr_of(rping_src, "0", false, &src);
	if (!ret)
		ret = rdma_resolve_addr(
			cm->id, rping_src ? (struct sockaddr *)&src : NULL,
			(struct sockaddr *)&ss, 2000);
	return ret ? ret : wait_state(cm, RPING_ROUTE, false);
}

int rping_cm_wait_up(struct rping_cm *cm)
{
	return wait_state(cm, RPING_UP, false);
}

void rping_conn_param(struct rdma_conn_param *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

static bool cm_down(struct rping_cm *cm)
{
	bool down;

	pthread_mutex_lock(&cm->lock);
	down = cm->state >= RPING_DOWN;
	pthread_mutex_unlock(&cm->lock);
	return down;
}

void rping_cm_close(struct rping_cm *cm)
{
	struct timespec ts;
	bool up;

	pthread_mutex_lock(&cm->lock);
	up = cm->state == RPING_UP;
	pthread_mutex_unlock(&cm->lock);
	if (up && !rdma_disconnect(cm->id)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		pthread_mutex_lock(&cm->lock);
		while (cm->state < RPING_DOWN &&
		       !pthread_cond_timedwait(&cm->cond, &cm->lock, &ts))
			;
		pthread_mutex_unlock(&cm->lock);
	}
	/* nothing reaches the handler once its id is destroyed */
	if (cm->id) {
		rdma_destroy_qp(cm->id);
		rdma_destroy_id(cm->id);
	}
	rdma_destroy_id(cm->listen_id);
	pthread_mutex_destroy(&cm->lock);
	pthread_cond_destroy(&cm->cond);
	memset(cm, 0, sizeof(*cm));
}

int rping_wait(struct ib_cq *cq, struct rping_cm *cm, struct rping_wait *w)
{
	time_t end = time(NULL) + RPING_WAIT_S;

	while (!w->done) {
		if (ib_process_cq_direct(cq, -1) > 0)
			continue;
		/* The peer may have gone: its DISCONNECTED event says so. */
		if (cm_down(cm))
			return -ECONNRESET;
		if (time(NULL) > end)
			return -ETIMEDOUT;
		nap();
	}
	if (w->wc.status != IB_WC_SUCCESS) {
		if (w->wc.status != IB_WC_WR_FLUSH_ERR)
			fprintf(stderr, "completion error: %s\n",
				ib_wc_status_msg(w->wc.status));
		return w->wc.status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
	}
	return 0;
}

/* Messages go through the PD's local DMA key (the registration map). */
int rping_post_recv(struct ib_qp *qp, struct rping_msg *m, struct rping_wait *w)
{
	struct ib_sge sge = { .addr = (uintptr_t)m,
			      .length = sizeof(*m),
			      .lkey = qp->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &w->cqe,
				 .sg_list = &sge,
				 .num_sge = 1 };

	rping_wait_init(w);
	return ib_post_recv(qp, &wr, NULL);
}

int rping_post_send(struct ib_qp *qp, struct rping_msg *m, struct rping_wait *w)
{
	struct ib_sge sge = { .addr = (uintptr_t)m,
			      .length = sizeof(*m),
			      .lkey = qp->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = &w->cqe,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };

	rping_wait_init(w);
	return ib_post_send(qp, &wr, NULL);
}

struct ib_qp *rping_make_qp(struct rping_cm *cm, struct ib_pd *pd,
			    struct ib_cq *cq)
{
	struct ib_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};

	int ret = rdma_create_qp(cm->id, pd, &a);

	return ret ? ERR_PTR(ret) : cm->id->qp;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the test_cm_* programs: a fixture of two software devices with
 * addresses 10.0.0.1 and 10.0.0.2 (and fd00::1, fd00::2), and an event
 * recorder every id's handler writes to, in delivery order.
 */
#ifndef RDMARW_TESTS_CM_ENV_H
#define RDMARW_TESTS_CM_ENV_H

#include "helpers/soft_env.h"

#include <rdmarw/rdma_cm.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

struct cm_rec {
	struct rdma_cm_id *id;
	void *context;
	enum rdma_cm_event_type ev;
	int status;
	u8 len;
	u8 pdata[256];
	bool in_cm_thread;
};

#define CM_REC_MAX 256

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	struct cm_rec r[CM_REC_MAX];
	int n;
	pthread_t test_thread;
	/* per-test: the handler's answer (after recording) */
	int (*hook)(struct rdma_cm_id *id, struct rdma_cm_event *ev);
} cm_log = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static inline int cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cm_rec *r;
	int (*hook)(struct rdma_cm_id *, struct rdma_cm_event *);

	pthread_mutex_lock(&cm_log.m);
	if (cm_log.n < CM_REC_MAX) {
		r = &cm_log.r[cm_log.n++];
		r->id = id;
		r->context = id->context;
		r->ev = ev->event;
		r->status = ev->status;
		r->len = ev->param.conn.private_data_len;
		if (ev->param.conn.private_data)
			memcpy(r->pdata, ev->param.conn.private_data, r->len);
		r->in_cm_thread =
			!pthread_equal(pthread_self(), cm_log.test_thread);
	}
	hook = cm_log.hook;
	pthread_cond_broadcast(&cm_log.c);
	pthread_mutex_unlock(&cm_log.m);
	return hook ? hook(id, ev) : 0;
}

static inline void cm_log_reset(void)
{
	pthread_mutex_lock(&cm_log.m);
	cm_log.n = 0;
	cm_log.hook = NULL;
	cm_log.test_thread = pthread_self();
	pthread_mutex_unlock(&cm_log.m);
}

/* Wait until @n events are recorded; return record @n - 1. */
static inline struct cm_rec *cm_wait(int n)
{
	struct timespec ts;
	struct cm_rec *r;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&cm_log.m);
	while (cm_log.n < n)
		if (pthread_cond_timedwait(&cm_log.c, &cm_log.m, &ts))
			break;
	r = cm_log.n >= n ? &cm_log.r[n - 1] : NULL;
	pthread_mutex_unlock(&cm_log.m);
	assert_non_null(r);
	return r;
}

/* Give the CM thread time to deliver anything more, then count. */
static inline int cm_settle(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int n;

	nanosleep(&ts, NULL);
	pthread_mutex_lock(&cm_log.m);
	n = cm_log.n;
	pthread_mutex_unlock(&cm_log.m);
	return n;
}

static inline struct sockaddr_in cm_in4(const char *ip, u16 port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

static inline struct sockaddr_in6 cm_in6(const char *ip, u16 port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

	sin6.sin6_port = htons(port);
	inet_pton(AF_INET6, ip, &sin6.sin6_addr);
	return sin6;
}

#define SA(x) ((struct sockaddr *)&(x))

/* soft_env with its QPs removed (the CM makes them) and addresses set. */
static inline void cm_env_init(struct soft_env *env, const char *profile,
			       bool threaded)
{
	struct sockaddr_in a0 = cm_in4("10.0.0.1", 0),
			   a1 = cm_in4("10.0.0.2", 0);
	struct sockaddr_in6 b0 = cm_in6("fd00::1", 0),
			    b1 = cm_in6("fd00::2", 0);
	int i;

	soft_env_init(env, &(struct soft_env_cfg){ .profile = profile,
						   .no_connect = true,
						   .threaded = threaded });
	for (i = 0; i < 2; i++) {
		assert_int_equal(ib_destroy_qp(env->qp[i]), 0);
		env->qp[i] = NULL;
	}
	assert_int_equal(soft_device_add_addr(env->dev[0], SA(a0)), 0);
	assert_int_equal(soft_device_add_addr(env->dev[1], SA(a1)), 0);
	assert_int_equal(soft_device_add_addr(env->dev[0], SA(b0)), 0);
	assert_int_equal(soft_device_add_addr(env->dev[1], SA(b1)), 0);
	cm_log_reset();
}

static inline void cm_create_qp(struct soft_env *env, int side,
				struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {
		.send_cq = env->cq[side],
		.recv_cq = env->cq[side],
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	assert_int_equal(rdma_create_qp(id, env->pd[side], &qa), 0);
	assert_non_null(id->qp);
	assert_int_equal(soft_env_state(id->qp), IB_QPS_INIT);
}

static inline struct rdma_cm_id *cm_id(void *context)
{
	struct rdma_cm_id *id = rdma_create_id(&init_net, cm_handler, context,
					       RDMA_PS_TCP, IB_QPT_RC);

	assert_false(IS_ERR(id));
	return id;
}

/* A listener on 10.0.0.2:@port. */
static inline struct rdma_cm_id *cm_listener(void *context, u16 port)
{
	struct sockaddr_in a = cm_in4("10.0.0.2", port);
	struct rdma_cm_id *id = cm_id(context);

	assert_int_equal(rdma_bind_addr(id, SA(a)), 0);
	assert_int_equal(rdma_listen(id, 8), 0);
	return id;
}

/*
 * A client id from 10.0.0.1 to 10.0.0.2:@port with its route resolved and
 * a QP; *@n is the number of events recorded so far (updated).
 */
static inline struct rdma_cm_id *cm_client(struct soft_env *env, void *context,
					   u16 port, int *n)
{
	struct sockaddr_in src = cm_in4("10.0.0.1", 0);
	struct sockaddr_in dst = cm_in4("10.0.0.2", port);
	struct rdma_cm_id *id = cm_id(context);
	struct cm_rec *r;

	assert_int_equal(rdma_resolve_addr(id, SA(src), SA(dst), 1000), 0);
	r = cm_wait(++*n);
	assert_ptr_equal(r->id, id);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(r->status, 0);
	assert_ptr_equal(id->device, env->dev[0]);
	assert_int_equal(rdma_resolve_route(id, 1000), 0);
	r = cm_wait(++*n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ROUTE_RESOLVED);
	cm_create_qp(env, 0, id);
	return id;
}

static inline void cm_env_fini(struct soft_env *env)
{
	soft_env_fini(env);
}

#endif /* RDMARW_TESTS_CM_ENV_H */

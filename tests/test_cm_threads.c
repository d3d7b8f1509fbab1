// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CM thread under races (run under ThreadSanitizer too): handlers drive
 * whole connections (resolve -> route -> connect -> accept from the
 * handlers), while the test thread destroys the client id at a random
 * moment and another thread pulls the link.  No event may reach an id after
 * rdma_destroy_id() returned, nothing may leak, every child is told.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cm_env.h"

#include <errno.h>

#define ITERS 150
#define MAX_LIVE 64

static struct soft_env env;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdma_cm_id *live[MAX_LIVE];
static int children; /* live child ids */
static int bad_events; /* events for an id not (or no longer) live */
static int handler_calls;
static int established; /* client ESTABLISHED events */
static bool stop_link;

static bool live_has(struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == id)
			return true;
	return false;
}

static void live_add(struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (!live[i]) {
			live[i] = id;
			return;
		}
	fail_msg("live set full");
}

static void live_del(struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < MAX_LIVE; i++)
		if (live[i] == id)
			live[i] = NULL;
}

/* Per client: the QP its handler made (destroyed by the test thread). */
struct client {
	pthread_mutex_t lock;
	struct ib_qp *qp;
};

static struct ib_qp *make_qp(int side, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {
		.send_cq = env.cq[side],
		.recv_cq = env.cq[side],
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return rdma_create_qp(id, env.pd[side], &qa) ? NULL : id->qp;
}

static int server_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	bool child_end = false;

	pthread_mutex_lock(&live_lock);
	handler_calls++;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		live_add(id);
		children++;
	} else if (!live_has(id)) {
		bad_events++;
	}
	pthread_mutex_unlock(&live_lock);
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (!make_qp(1, id) || rdma_accept(id, &cp))
			child_end = true;
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DISCONNECTED:
		child_end = true;
		break;
	default:
		break;
	}
	if (!child_end)
		return 0;
	rdma_destroy_qp(id);
	pthread_mutex_lock(&live_lock);
	live_del(id);
	children--;
	pthread_mutex_unlock(&live_lock);
	return 1; /* the CM destroys the child */
}

static int listener_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	return server_handler(id, ev);
}

static int client_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct client *c = id->context;

	pthread_mutex_lock(&live_lock);
	handler_calls++;
	if (!live_has(id))
		bad_events++;
	pthread_mutex_unlock(&live_lock);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		rdma_resolve_route(id, 100);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		pthread_mutex_lock(&c->lock);
		c->qp = make_qp(0, id);
		pthread_mutex_unlock(&c->lock);
		if (c->qp)
			rdma_connect_locked(id, &cp);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		__atomic_add_fetch(&established, 1, __ATOMIC_RELAXED);
		if ((uintptr_t)id & 0x40)
			rdma_disconnect(id);
		break;
	default:
		break;
	}
	return 0;
}

static void *link_puller(void *arg)
{
	struct timespec ts = { 0, 300 * 1000 };

	while (!__atomic_load_n(&stop_link, __ATOMIC_ACQUIRE)) {
		soft_cm_link_down(env.dev[1]);
		nanosleep(&ts, NULL);
	}
	return arg;
}

static void race(bool pull_link)
{
	struct sockaddr_in laddr = cm_in4("10.0.0.2", 7600);
	struct sockaddr_in src = cm_in4("10.0.0.1", 0);
	struct rdma_cm_id *listen, *id;
	struct timespec ts;
	struct client c;
	pthread_t puller;
	u64 seed = 7;
	int i, left, tries, bad, calls;

	/* the fabric's link: pulling it is a fabric's race only */
	cm_env_init(&env, pull_link ? "rxe" : cm_any("rxe"), true);
	bad_events = 0;
	handler_calls = 0;
	established = 0;
	stop_link = false;
	listen = rdma_create_id(NULL, listener_handler, NULL, RDMA_PS_TCP,
				IB_QPT_RC);
	assert_false(IS_ERR(listen));
	pthread_mutex_lock(&live_lock);
	live_add(listen);
	pthread_mutex_unlock(&live_lock);
	assert_int_equal(rdma_bind_addr(listen, SA(laddr)), 0);
	assert_int_equal(rdma_listen(listen, 16), 0);
	if (pull_link)
		assert_int_equal(
			pthread_create(&puller, NULL, link_puller, NULL), 0);
	pthread_mutex_init(&c.lock, NULL);
	for (i = 0; i < ITERS; i++) {
		c.qp = NULL;
		id = rdma_create_id(NULL, client_handler, &c, RDMA_PS_TCP,
				    IB_QPT_RC);
		assert_false(IS_ERR(id));
		pthread_mutex_lock(&live_lock);
		live_add(id);
		pthread_mutex_unlock(&live_lock);
		assert_int_equal(rdma_resolve_addr(id, SA(src), SA(laddr), 100),
				 0);
		ts.tv_sec = 0;
		/* up to 400 us; on TCP 20 ms, the MPA exchange's time, so
		 * that some connections come up before their destroy */
		ts.tv_nsec = (long)(soft_env_rand(&seed) %
				    (cm_env_tcp() ? 20000 : 400)) *
			     1000;
		nanosleep(&ts, NULL);
		rdma_destroy_id(id); /* at any point of the setup */
		pthread_mutex_lock(&live_lock);
		live_del(id);
		pthread_mutex_unlock(&live_lock);
		pthread_mutex_lock(&c.lock);
		if (c.qp)
			assert_int_equal(ib_destroy_qp(c.qp), 0);
		pthread_mutex_unlock(&c.lock);
	}
	if (pull_link) {
		__atomic_store_n(&stop_link, true, __ATOMIC_RELEASE);
		pthread_join(puller, NULL);
	}
	/* every child hears of its peer's end and is destroyed */
	for (tries = 0; tries < 1000; tries++) {
		pthread_mutex_lock(&live_lock);
		left = children;
		pthread_mutex_unlock(&live_lock);
		if (!left)
			break;
		ts.tv_sec = 0;
		ts.tv_nsec = 10 * 1000 * 1000;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(left, 0);
	rdma_destroy_id(listen);
	pthread_mutex_lock(&live_lock);
	live_del(listen);
	bad = bad_events;
	calls = handler_calls;
	pthread_mutex_unlock(&live_lock);
	assert_int_equal(bad, 0);
	/* handlers ran (how many depends on where each destroy landed) */
	assert_true(calls > 0);
	/* some connections came up before their destroy */
	assert_true(__atomic_load_n(&established, __ATOMIC_RELAXED) > 0);
	pthread_mutex_destroy(&c.lock);
	cm_env_fini(&env);
}

static void test_destroy_races_setup(void **s)
{
	race(false);
}

static void test_destroy_races_link_down(void **s)
{
	race(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroy_races_setup),
		cmocka_unit_test(test_destroy_races_link_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

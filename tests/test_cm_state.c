// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_cm's state machine and bad input: every call in the wrong state
 * gives the kernel's errno; binding, address conflicts, IPv6, resolution
 * errors; the CM fault rules and link-down; handlers that return non-zero;
 * destroying connected ids, double destroy; DEVICE_REMOVAL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cm_env.h"

#include <errno.h>

static int ctx;

static void test_create_and_msgs(void **s)
{
	struct rdma_cm_id *id;
	struct net other;

	assert_ptr_equal(
		rdma_create_id(NULL, NULL, NULL, RDMA_PS_TCP, IB_QPT_RC),
		ERR_PTR(-EINVAL));
	assert_ptr_equal(rdma_create_id(&other, cm_handler, NULL, RDMA_PS_TCP,
					IB_QPT_RC),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(rdma_create_id(NULL, cm_handler, NULL,
					(enum rdma_ucm_port_space)7, IB_QPT_RC),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(
		rdma_create_id(NULL, cm_handler, NULL, RDMA_PS_UDP, IB_QPT_UD),
		ERR_PTR(-EOPNOTSUPP));
	id = rdma_create_id(NULL, cm_handler, &ctx, RDMA_PS_IB, IB_QPT_RC);
	assert_false(IS_ERR(id));
	assert_ptr_equal(id->context, &ctx);
	assert_null(id->device);
	assert_int_equal(id->ps, RDMA_PS_IB);
	assert_int_equal(id->qp_type, IB_QPT_RC);
	rdma_destroy_id(id);
	rdma_destroy_id(NULL);
	assert_string_equal(rdma_event_msg(RDMA_CM_EVENT_ESTABLISHED),
			    "established");
	assert_string_equal(rdma_event_msg(RDMA_CM_EVENT_TIMEWAIT_EXIT),
			    "timewait exit");
	assert_string_equal(rdma_event_msg((enum rdma_cm_event_type)99),
			    "unrecognized event");
	assert_string_equal(rdma_reject_msg(NULL, 28),
			    "unrecognized transport");
}

static void test_wrong_state(void **s)
{
	struct rdma_conn_param cp = { 0 };
	struct sockaddr_in bad = cm_in4("10.7.7.7", 0);
	struct sockaddr_in a = cm_in4("10.0.0.1", 0);
	struct sockaddr_in dst = cm_in4("10.0.0.2", 9);
	struct ib_qp_init_attr qa = { .qp_type = IB_QPT_RC };
	struct rdma_cm_id *id;
	struct soft_env env;
	struct cm_rec *r;

	cm_env_init(&env, cm_any("rxe"), false);
	id = cm_id(&ctx);
	/* idle */
	assert_int_equal(rdma_resolve_route(id, 0), -EINVAL);
	assert_int_equal(rdma_connect(id, &cp), -EINVAL);
	assert_int_equal(rdma_accept(id, NULL), -EINVAL);
	assert_int_equal(rdma_reject(id, NULL, 0, 28), -EINVAL);
	assert_int_equal(rdma_disconnect(id), -EINVAL);
	assert_int_equal(rdma_create_qp(id, env.pd[0], &qa), -EINVAL);
	assert_int_equal(rdma_bind_addr(id, SA(bad)), -EADDRNOTAVAIL);
	assert_int_equal(rdma_set_ack_timeout(id, 14), 0);
	assert_int_equal(rdma_set_min_rnr_timer(id, 12), 0);
	rdma_set_service_type(id, 0x20);
	/* bound */
	assert_int_equal(rdma_bind_addr(id, SA(a)), 0);
	assert_ptr_equal(id->device, env.dev[0]);
	assert_int_equal(id->port_num, 1);
	assert_int_equal(rdma_bind_addr(id, SA(a)), -EINVAL);
	assert_int_equal(rdma_set_reuseaddr(id, 1), -EINVAL);
	assert_int_equal(rdma_set_afonly(id, 1), 0);
	assert_int_equal(rdma_resolve_route(id, 0), -EINVAL);
	assert_int_equal(rdma_connect(id, &cp), -EINVAL);
	/* a PD of another device */
	assert_int_equal(rdma_create_qp(id, env.pd[1], &qa), -EINVAL);
	/* resolved: no second resolve, no listen */
	assert_int_equal(rdma_resolve_addr(id, NULL, SA(dst), 0), 0);
	r = cm_wait(1);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(rdma_resolve_addr(id, NULL, SA(dst), 0), -EINVAL);
	assert_int_equal(rdma_listen(id, 1), -EINVAL);
	assert_int_equal(rdma_set_afonly(id, 1), -EINVAL);
	/* no QP: connect refuses */
	assert_int_equal(rdma_resolve_route(id, 0), 0);
	cm_wait(2);
	assert_int_equal(rdma_resolve_route(id, 0), -EINVAL);
	assert_int_equal(rdma_connect(id, &cp), -EINVAL);
	assert_int_equal(rdma_connect(id, NULL), -EINVAL);
	cm_create_qp(&env, 0, id);
	qa.send_cq = qa.recv_cq = env.cq[0];
	assert_int_equal(rdma_create_qp(id, env.pd[0], &qa), -EINVAL);
	assert_int_equal(rdma_disconnect(id), -EINVAL); /* not connected */
	assert_int_equal(cm_settle(), 2);
	rdma_destroy_qp(id);
	rdma_destroy_qp(id); /* nothing left: no-op */
	rdma_destroy_id(id);
	cm_env_fini(&env);
}

static void test_bind_conflicts(void **s)
{
	struct sockaddr_in a = cm_in4("10.0.0.2", 5000);
	struct sockaddr_in any = cm_in4("0.0.0.0", 5000);
	struct sockaddr_in6 any6 = cm_in6("::", 5000);
	struct rdma_cm_id *x, *y, *z;
	struct soft_env env;

	cm_env_init(&env, cm_any("mlx5"), false);
	x = cm_id(NULL);
	y = cm_id(NULL);
	assert_int_equal(rdma_bind_addr(x, SA(a)), 0);
	assert_int_equal(rdma_bind_addr(y, SA(a)), -EADDRINUSE);
	assert_int_equal(rdma_bind_addr(y, SA(any)), -EADDRINUSE);
	/* an IPv6 wildcard covers IPv4 unless afonly */
	assert_int_equal(rdma_bind_addr(y, SA(any6)), -EADDRINUSE);
	assert_int_equal(rdma_set_afonly(y, 1), 0);
	assert_int_equal(rdma_bind_addr(y, SA(any6)), 0);
	rdma_destroy_id(y);
	rdma_destroy_id(x);
	/* reuseaddr on both: shared until one listens */
	x = cm_id(NULL);
	y = cm_id(NULL);
	z = cm_id(NULL);
	assert_int_equal(rdma_set_reuseaddr(x, 1), 0);
	assert_int_equal(rdma_set_reuseaddr(y, 1), 0);
	assert_int_equal(rdma_bind_addr(x, SA(a)), 0);
	assert_int_equal(rdma_bind_addr(y, SA(a)), 0);
	assert_int_equal(rdma_listen(x, 1), -EADDRINUSE);
	rdma_destroy_id(y);
	assert_int_equal(rdma_listen(x, 1), 0);
	assert_int_equal(rdma_listen(x, 1), -EINVAL);
	assert_int_equal(rdma_set_reuseaddr(z, 1), 0);
	assert_int_equal(rdma_bind_addr(z, SA(a)), -EADDRINUSE);
	rdma_destroy_id(z);
	rdma_destroy_id(x);
	/* listen on an idle id binds the wildcard, on a free port */
	x = cm_id(NULL);
	assert_int_equal(rdma_listen(x, 1), 0);
	assert_null(x->device);
	assert_int_equal(x->route.addr.src_addr.ss_family, AF_INET);
	assert_int_not_equal(
		((struct sockaddr_in *)&x->route.addr.src_addr)->sin_port, 0);
	rdma_destroy_id(x);
	cm_env_fini(&env);
}

static void test_resolve(void **s)
{
	struct sockaddr_in nowhere = cm_in4("10.9.9.9", 1);
	struct sockaddr_in dst = cm_in4("10.0.0.2", 1);
	struct sockaddr_in6 dst6 = cm_in6("fd00::2", 1);
	struct sockaddr_in src = cm_in4("10.0.0.1", 0);
	struct sockaddr_in other = cm_in4("10.1.0.1", 0);
	struct soft_profile prof;
	struct soft_fabric *f2;
	struct ib_device *d2;
	struct rdma_cm_id *id;
	struct soft_env env;
	struct cm_rec *r;

	cm_env_init(&env, "rxe", false); /* fabric addresses */
	/* no device answers */
	id = cm_id(NULL);
	assert_int_equal(rdma_resolve_addr(id, NULL, SA(nowhere), 0), 0);
	r = cm_wait(1);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_ERROR);
	assert_int_equal(r->status, -EHOSTUNREACH);
	assert_int_equal(rdma_resolve_route(id, 0), -EINVAL);
	/* back to bound: may resolve again; unbound source picks dev0 */
	assert_int_equal(rdma_resolve_addr(id, NULL, SA(dst), 0), 0);
	r = cm_wait(2);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_ptr_equal(id->device, env.dev[0]);
	assert_int_equal(((struct sockaddr_in *)&id->route.addr.src_addr)
				 ->sin_addr.s_addr,
			 src.sin_addr.s_addr);
	rdma_destroy_id(id);
	/* IPv6 */
	id = cm_id(NULL);
	assert_int_equal(rdma_resolve_addr(id, NULL, SA(dst6), 0), 0);
	r = cm_wait(3);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_ptr_equal(id->device, env.dev[0]);
	assert_int_equal(id->route.addr.src_addr.ss_family, AF_INET6);
	rdma_destroy_id(id);
	/* a device of another fabric is unreachable */
	f2 = soft_fabric_create();
	assert_int_equal(soft_profile_get("rxe", &prof), 0);
	d2 = soft_device_create(f2, NULL, &prof);
	assert_false(IS_ERR(d2));
	assert_int_equal(soft_device_add_addr(d2, SA(other)), 0);
	assert_int_equal(soft_device_add_addr(d2, SA(other)), -EADDRINUSE);
	id = cm_id(NULL);
	assert_int_equal(rdma_resolve_addr(id, SA(src), SA(other), 0), 0);
	r = cm_wait(4);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_ERROR);
	assert_int_equal(r->status, -EHOSTUNREACH);
	rdma_destroy_id(id);
	/* address calls' bad input */
	assert_int_equal(soft_device_add_addr(NULL, SA(other)), -EINVAL);
	assert_int_equal(soft_device_add_addr(d2, NULL), -EINVAL);
	nowhere = cm_in4("0.0.0.0", 0);
	assert_int_equal(soft_device_add_addr(d2, SA(nowhere)), -EINVAL);
	assert_int_equal(soft_device_del_addr(d2, SA(src)), -EADDRNOTAVAIL);
	assert_int_equal(soft_device_del_addr(d2, SA(other)), 0);
	assert_int_equal(soft_device_destroy(d2), 0);
	assert_int_equal(soft_fabric_destroy(f2), 0);
	cm_env_fini(&env);
}

static void test_faults(void **s)
{
	struct soft_cm_fault rej = { .type = SOFT_CM_FAULT_REJECT,
				     .nth = 1,
				     .reason = IB_CM_REJ_NO_RESOURCES };
	struct soft_cm_fault lost = { .type = SOFT_CM_FAULT_UNREACHABLE,
				      .nth = 1 };
	struct soft_cm_fault addr = { .type = SOFT_CM_FAULT_ADDR_ERROR,
				      .nth = 2,
				      .reason = -ENETUNREACH };
	struct sockaddr_in src = cm_in4("10.0.0.1", 0);
	struct sockaddr_in dst = cm_in4("10.0.0.2", 7480);
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_id *listen, *a, *b;
	struct soft_env env;
	struct cm_rec *r;
	int n = 0;

	cm_env_init(&env, "mlx5", false); /* the fabric CM's faults */
	listen = cm_listener(NULL, 7480);
	assert_int_equal(soft_cm_fault_arm(env.dev[0], &rej), 0);
	assert_int_equal(soft_cm_fault_arm(env.dev[0], &lost), 0);
	assert_int_equal(soft_cm_fault_arm(NULL, &lost), -EINVAL);
	/* the first request is lost (UNREACHABLE counts first) */
	a = cm_client(&env, NULL, 7480, &n);
	assert_int_equal(rdma_connect(a, &cp), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_UNREACHABLE);
	assert_int_equal(r->status, -ETIMEDOUT);
	/* the second one is rejected by the peer's CM with the reason */
	b = cm_client(&env, NULL, 7480, &n);
	assert_int_equal(rdma_connect(b, &cp), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(r->status, IB_CM_REJ_NO_RESOURCES);
	assert_false(rdma_is_consumer_reject(b, r->status));
	assert_string_equal(rdma_reject_msg(b, r->status), "no resources");
	rdma_destroy_qp(a);
	rdma_destroy_qp(b);
	rdma_destroy_id(a);
	rdma_destroy_id(b);
	/* the second resolution fails with the rule's status */
	assert_int_equal(soft_cm_fault_arm(env.dev[0], &addr), 0);
	a = cm_id(NULL);
	b = cm_id(NULL);
	assert_int_equal(rdma_resolve_addr(a, SA(src), SA(dst), 0), 0);
	src.sin_port = 0;
	assert_int_equal(rdma_resolve_addr(b, SA(src), SA(dst), 0), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
	r = cm_wait(++n);
	assert_ptr_equal(r->id, b);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_ERROR);
	assert_int_equal(r->status, -ENETUNREACH);
	assert_int_equal(soft_cm_fault_clear(env.dev[0]), 0);
	rdma_destroy_id(a);
	rdma_destroy_id(b);
	rdma_destroy_id(listen);
	cm_env_fini(&env);
}

/* Accept from the handler itself, as ULPs do. */
static struct soft_env *hook_env;

static int accept_in_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct rdma_conn_param cp = { .responder_resources = 1,
					      .initiator_depth = 1 };

		cm_create_qp(hook_env, 1, id);
		return rdma_accept(id, &cp);
	}
	return 0;
}

static struct rdma_cm_id *established(struct soft_env *env, u16 port,
				      struct rdma_cm_id **child, int *n)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_id *a = cm_client(env, NULL, port, n);
	struct cm_rec *r;

	hook_env = env;
	cm_log.hook = accept_in_handler;
	assert_int_equal(rdma_connect(a, &cp), 0);
	r = cm_wait(++*n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	*child = r->id;
	cm_wait2(n, RDMA_CM_EVENT_ESTABLISHED, a, NULL, *child, NULL);
	cm_log.hook = NULL;
	return a;
}

static void test_link_down(void **s)
{
	struct rdma_cm_id *listen, *a, *c;
	struct soft_env env;
	struct cm_rec *r;
	int n = 0, i, disc = 0, tw = 0;

	cm_env_init(&env, "rxe", false); /* the fabric's link */
	listen = cm_listener(NULL, 7481);
	a = established(&env, 7481, &c, &n);
	assert_int_equal(soft_cm_link_down(env.dev[1]), 1);
	for (i = 0; i < 4; i++) {
		r = cm_wait(++n);
		disc += r->ev == RDMA_CM_EVENT_DISCONNECTED;
		tw += r->ev == RDMA_CM_EVENT_TIMEWAIT_EXIT;
	}
	assert_int_equal(disc, 2);
	assert_int_equal(tw, 2);
	assert_int_equal(soft_env_state(a->qp), IB_QPS_ERR);
	assert_int_equal(soft_env_state(c->qp), IB_QPS_ERR);
	assert_int_equal(soft_cm_link_down(env.dev[1]), 0);
	assert_int_equal(soft_cm_link_down(NULL), -EINVAL);
	assert_int_equal(cm_settle(), n);
	rdma_destroy_qp(a);
	rdma_destroy_qp(c);
	rdma_destroy_id(a);
	rdma_destroy_id(c);
	rdma_destroy_id(listen);
	cm_env_fini(&env);
}

/* Destroying a connected id: the peer's QP goes to ERR, DISCONNECTED. */
static void test_destroy_connected(void **s)
{
	struct rdma_cm_id *listen, *a, *c;
	struct soft_env env;
	struct cm_rec *r;
	int n = 0;

	cm_env_init(&env, "siw", false);
	listen = cm_listener(NULL, 7482);
	a = established(&env, 7482, &c, &n);
	rdma_destroy_qp(a);
	rdma_destroy_id(a);
	rdma_destroy_id(a); /* double destroy: ignored */
	r = cm_wait(++n);
	assert_ptr_equal(r->id, c);
	assert_int_equal(r->ev, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(soft_env_state(c->qp), IB_QPS_ERR);
	assert_int_equal(cm_settle(), n); /* iWARP: no TIMEWAIT_EXIT */
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	rdma_destroy_id(listen);
	cm_env_fini(&env);
}

/*
 * ib_destroy_qp() on the QP an id made (the kernel's ULPs call
 * rdma_destroy_qp(); the kernel would leave the id on freed memory): the id
 * lets go of it, and disconnecting and destroying the id touch no QP.
 * A QP that outlived its id (rdma_destroy_id() first) is the ULP's.
 */
static void test_ib_destroy_qp_of_id(void **s)
{
	struct rdma_cm_id *listen, *a, *c;
	struct soft_env env;
	struct ib_qp *qp;
	struct cm_rec *r;
	int n = 0;

	cm_env_init(&env, cm_any("rxe"), false);
	listen = cm_listener(NULL, 7483);
	a = established(&env, 7483, &c, &n);
	assert_int_equal(ib_destroy_qp(a->qp), 0);
	assert_null(a->qp);
	assert_int_equal(rdma_disconnect(a), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_DISCONNECTED);
	cm_settle();
	rdma_destroy_qp(a); /* nothing left: no-op */
	rdma_destroy_id(a);
	qp = c->qp;
	rdma_destroy_id(c);
	assert_int_equal(ib_destroy_qp(qp), 0);
	rdma_destroy_id(listen);
	cm_env_fini(&env);
}

/* A non-zero return from CONNECT_REQUEST destroys the child: REJ. */
static int refuse(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	return ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? -ENOMEM : 0;
}

/* rdma_destroy_id() on the handler's own id is deferred to its return. */
static int self_destroy(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_ADDR_RESOLVED) {
		rdma_destroy_id(id);
		/* still usable until the handler returns */
		assert_int_equal(rdma_resolve_route(id, 0), 0);
	}
	return 0;
}

static void test_handler_destroys(void **s)
{
	struct sockaddr_in dst = cm_in4("10.0.0.2", 7483);
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_id *listen, *a;
	struct soft_env env;
	struct cm_rec *r;
	int n = 0;

	cm_env_init(&env, cm_any("mlx5"), false);
	listen = cm_listener(NULL, 7483);
	a = cm_client(&env, NULL, 7483, &n);
	cm_log.hook = refuse;
	assert_int_equal(rdma_connect(a, &cp), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_CONNECT_REQUEST);
	r = cm_wait(++n);
	assert_ptr_equal(r->id, a);
	assert_int_equal(r->ev, RDMA_CM_EVENT_REJECTED);
	/* iWARP (TCP mode): iw_cm rejects in MPA, the requester's is refused */
	assert_int_equal(r->status, cm_env_tcp() ? -ECONNREFUSED :
						   IB_CM_REJ_CONSUMER_DEFINED);
	assert_true(rdma_is_consumer_reject(a, r->status));
	rdma_destroy_qp(a);
	rdma_destroy_id(a);
	/* self-destroy: ADDR_RESOLVED, but no ROUTE_RESOLVED delivered */
	cm_log.hook = self_destroy;
	a = cm_id(NULL);
	assert_int_equal(rdma_resolve_addr(a, NULL, SA(dst), 0), 0);
	r = cm_wait(++n);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(cm_settle(), n);
	cm_log.hook = NULL;
	rdma_destroy_id(listen);
	cm_env_fini(&env); /* a valgrind/ASan leak would show the id */
}

/* Destroying a listener with requests not yet delivered rejects them. */
static int slow(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	if (ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED)
		nanosleep(&ts, NULL);
	return 0;
}

static void test_listener_destroyed(void **s)
{
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_id *listen, *a;
	struct soft_env env;
	struct cm_rec *r;
	int n = 0, i;

	cm_env_init(&env, "rxe", false); /* the fabric's queueing */
	listen = cm_listener(NULL, 7484);
	a = cm_client(&env, NULL, 7484, &n);
	/* hold the CM thread in a handler while the request is queued */
	cm_log.hook = slow;
	assert_int_equal(rdma_resolve_route(a, 0), -EINVAL);
	{
		struct rdma_cm_id *b = cm_id(NULL);
		struct sockaddr_in dst = cm_in4("10.0.0.2", 1);

		assert_int_equal(rdma_resolve_addr(b, NULL, SA(dst), 0), 0);
		r = cm_wait(++n);
		assert_int_equal(rdma_resolve_route(b, 0), 0);
		assert_int_equal(rdma_connect(a, &cp), 0);
		rdma_destroy_id(listen); /* CONNECT_REQUEST still queued */
		for (i = 0; i < 2; i++)
			r = cm_wait(++n);
		assert_ptr_equal(r->id, a);
		assert_int_equal(r->ev, RDMA_CM_EVENT_REJECTED);
		rdma_destroy_id(b);
	}
	assert_int_equal(cm_settle(), n);
	cm_log.hook = NULL;
	rdma_destroy_qp(a);
	rdma_destroy_id(a);
	cm_env_fini(&env);
}

static void test_device_removal(void **s)
{
	struct sockaddr_in addr = cm_in4("10.2.0.1", 7485);
	struct soft_profile prof;
	struct soft_fabric *f;
	struct rdma_cm_id *id;
	struct ib_device *d;
	struct cm_rec *r;

	cm_log_reset();
	f = soft_fabric_create();
	assert_int_equal(soft_profile_get("mlx5", &prof), 0);
	d = soft_device_create(f, NULL, &prof);
	assert_int_equal(soft_device_add_addr(d, SA(addr)), 0);
	id = cm_id(&ctx);
	assert_int_equal(rdma_bind_addr(id, SA(addr)), 0);
	assert_int_equal(rdma_listen(id, 1), 0);
	assert_int_equal(soft_device_destroy(d), -EBUSY);
	r = cm_wait(1);
	assert_ptr_equal(r->id, id);
	assert_int_equal(r->ev, RDMA_CM_EVENT_DEVICE_REMOVAL);
	assert_int_equal(rdma_listen(id, 1), -EINVAL);
	rdma_destroy_id(id);
	assert_int_equal(soft_device_destroy(d), 0);
	assert_int_equal(soft_fabric_destroy(f), 0);
	assert_int_equal(cm_settle(), 1);
}

/*
 * The CM is a client of the device core: a ULP's client registered after
 * it is told of a device's removal first (reverse order, as the kernel's
 * clients).  Its remove destroys its listener, so the CM then finds no id:
 * no DEVICE_REMOVAL, and the device goes in one call.  Meanwhile the
 * device answers to none of its addresses.
 */
static struct ib_device *ulp_dev;
static struct rdma_cm_id *ulp_listener;
static int ulp_bind_ret = 1;

static void ulp_remove(struct ib_device *dev, void *data)
{
	struct sockaddr_in addr = cm_in4("10.3.0.1", 7487);
	struct rdma_cm_id *id;

	if (dev != ulp_dev)
		return;
	id = cm_id(NULL);
	ulp_bind_ret = rdma_bind_addr(id, SA(addr));
	rdma_destroy_id(id);
	rdma_destroy_id(ulp_listener);
	ulp_listener = NULL;
}

static struct ib_client ulp_client = { .name = "ulp", .remove = ulp_remove };

static void test_ulp_client_told_first(void **s)
{
	struct sockaddr_in addr = cm_in4("10.3.0.1", 7486);
	struct soft_profile prof;
	struct soft_fabric *f;

	cm_log_reset();
	f = soft_fabric_create();
	assert_int_equal(soft_profile_get("rxe", &prof), 0);
	ulp_dev = soft_device_create(f, NULL, &prof);
	assert_false(IS_ERR(ulp_dev));
	assert_int_equal(soft_device_add_addr(ulp_dev, SA(addr)), 0);
	assert_int_equal(ib_register_client(&ulp_client), 0);
	ulp_listener = cm_id(&ctx);
	assert_int_equal(rdma_bind_addr(ulp_listener, SA(addr)), 0);
	assert_int_equal(rdma_listen(ulp_listener, 1), 0);
	assert_ptr_equal(ulp_listener->device, ulp_dev);
	assert_int_equal(soft_device_destroy(ulp_dev), 0);
	assert_null(ulp_listener);
	assert_int_equal(ulp_bind_ret, -EADDRNOTAVAIL);
	assert_int_equal(cm_settle(), 0);
	ib_unregister_client(&ulp_client);
	assert_int_equal(soft_fabric_destroy(f), 0);
}

/*
 * rdma_destroy_id() from the test thread while the id's handler runs: the
 * call waits for the handler, and an event the handler queues meanwhile is
 * never delivered.
 */
static volatile int destroyer_in;

static int queue_late(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int i;

	if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		return 0;
	for (i = 0;
	     i < 500 && !__atomic_load_n(&destroyer_in, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ts, NULL);
	ts.tv_nsec = 20 * 1000 * 1000; /* let the destroyer reach its wait */
	nanosleep(&ts, NULL);
	assert_int_equal(rdma_resolve_route(id, 0), 0);
	return 0;
}

static void test_destroy_while_in_handler(void **s)
{
	struct sockaddr_in dst = cm_in4("10.0.0.2", 1);
	struct rdma_cm_id *id;
	struct soft_env env;
	struct cm_rec *r;

	cm_env_init(&env, cm_any("rxe"), false);
	destroyer_in = 0;
	cm_log.hook = queue_late;
	id = cm_id(NULL);
	assert_int_equal(rdma_resolve_addr(id, NULL, SA(dst), 0), 0);
	r = cm_wait(1);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ADDR_RESOLVED);
	__atomic_store_n(&destroyer_in, 1, __ATOMIC_RELEASE);
	rdma_destroy_id(id); /* waits for queue_late() */
	assert_int_equal(cm_settle(), 1); /* ROUTE_RESOLVED was dropped */
	cm_log.hook = NULL;
	cm_env_fini(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_and_msgs),
		cmocka_unit_test(test_wrong_state),
		cmocka_unit_test(test_bind_conflicts),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_link_down),
		cmocka_unit_test(test_destroy_connected),
		cmocka_unit_test(test_ib_destroy_qp_of_id),
		cmocka_unit_test(test_handler_destroys),
		cmocka_unit_test(test_listener_destroyed),
		cmocka_unit_test(test_device_removal),
		cmocka_unit_test(test_ulp_client_told_first),
		cmocka_unit_test(test_destroy_while_in_handler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

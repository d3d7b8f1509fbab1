/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the test_cm_* programs: a fixture of two software devices with
 * addresses 10.0.0.1 and 10.0.0.2 (and fd00::1, fd00::2), and an event
 * recorder every id's handler writes to, in delivery order.
 *
 * TCP mode (RDMARW_CM_TCP=1 in the environment; the *_tcp CTest entries):
 * the devices are siw devices with profile.tcp, whose connections are real
 * loopback TCP streams with MPA (cm_mpa.c).  A TCP device cannot bind
 * 10.0.0.x, and a fixed port may be taken by another program on the
 * machine, so the addresses the tests write are translated where they are
 * made (cm_in4(), cm_in6(), cm_listener()): 10.0.0.1 is 127.0.0.2 (side
 * 0), 10.0.0.2 is 127.0.0.1 (side 1), fd00::2 is ::1 (side 1 only: side 0
 * has no IPv6 address); a listener binds port 0 and the port the kernel
 * gave stands for the test's port from then on; a port no listener took
 * becomes a port the kernel just handed out and nobody listens on.  A test
 * of another profile (mlx5, rxe: no TCP transport) is skipped with the
 * reason printed.
 */
#ifndef RDMARW_TESTS_CM_ENV_H
#define RDMARW_TESTS_CM_ENV_H

#include "helpers/soft_env.h"

#include <rdmarw/rdma_cm.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* TCP mode: the environment asks for it (see the header comment). */
static inline bool cm_env_tcp(void)
{
	const char *e = getenv("RDMARW_CM_TCP");

	return e && !strcmp(e, "1");
}

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

/*
 * The next two events, @ev on @a then on @b: in this order on a fabric
 * (one process decides it), in either order in TCP mode, where each side
 * learns from its own socket.  *@n is updated; the records are returned
 * in *@ra (@a's) and *@rb (@b's).
 */
static inline void cm_wait2(int *n, enum rdma_cm_event_type ev,
			    struct rdma_cm_id *a, struct cm_rec **ra,
			    struct rdma_cm_id *b, struct cm_rec **rb)
{
	struct cm_rec *r1 = cm_wait(++*n), *r2 = cm_wait(++*n);

	assert_int_equal(r1->ev, ev);
	assert_int_equal(r2->ev, ev);
	if (cm_env_tcp() && r1->id == b) {
		struct cm_rec *t = r1;

		r1 = r2;
		r2 = t;
	}
	assert_ptr_equal(r1->id, a);
	assert_ptr_equal(r2->id, b);
	if (ra)
		*ra = r1;
	if (rb)
		*rb = r2;
}

/*
 * @len bytes at @dst equal @src's, after a WRITE @from's QP posted to
 * @to's and completed.  On a fabric the completion comes after the
 * placement; on TCP it means only that the source may be reused (the
 * bytes are in the socket), and @to's thread may still be writing @dst.
 * So a zero-length SEND follows the WRITE on the same QP: a SEND's
 * completion at the responder comes after every WRITE before it is placed
 * (RDMAP's ordering, RFC 5040 5.5; IBA 9.5 on RC), and on TCP @to's
 * thread places the WRITE's bytes before it takes the SEND's, then
 * completes the RECV through the CQ's lock, which this thread's poll
 * takes: the read of @dst is ordered after the placement (TSan sees it).
 * Both QPs still connected; each CQ has nothing else to poll before it.
 */
static inline void cm_placed(struct rdma_cm_id *from, struct rdma_cm_id *to,
			     const void *dst, const void *src, size_t len)
{
	const u64 fence = 0xfe4ce;
	struct ib_recv_wr rwr = { .wr_id = fence };
	struct ib_send_wr swr = { .wr_id = fence,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };

	assert_int_equal(ib_post_recv(to->qp, &rwr, NULL), 0);
	assert_int_equal(ib_post_send(from->qp, &swr, NULL), 0);
	soft_env_expect(from->qp->send_cq, fence, IB_WC_SUCCESS, IB_WC_SEND);
	soft_env_expect(to->qp->recv_cq, fence, IB_WC_SUCCESS, IB_WC_RECV);
	assert_memory_equal(dst, src, len);
}

/*
 * @qp's state is @state: at once on a fabric; in TCP mode once the peer's
 * bytes (a TERMINATE, the stream's end) reached this side's thread, a
 * minute at most (a hang guard).
 */
static inline void cm_qp_state(struct ib_qp *qp, enum ib_qp_state state)
{
	time_t start = time(NULL);

	while (cm_env_tcp() && soft_env_state(qp) != state &&
	       time(NULL) - start < 60)
		sched_yield();
	assert_int_equal(soft_env_state(qp), state);
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

/* TCP mode: the test's ports and the kernel's ports they stand for. */
#define CM_PORTS_MAX 64
static struct {
	int n;
	u16 test[CM_PORTS_MAX];
	u16 real[CM_PORTS_MAX];
} cm_ports;

static inline void cm_port_map(u16 test, u16 real)
{
	int i;

	for (i = 0; i < cm_ports.n; i++)
		if (cm_ports.test[i] == test) {
			cm_ports.real[i] = real; /* a new listener on it */
			return;
		}
	assert_true(cm_ports.n < CM_PORTS_MAX);
	cm_ports.test[cm_ports.n] = test;
	cm_ports.real[cm_ports.n++] = real;
}

/* A loopback port the kernel hands out, then released: nobody on it. */
static inline u16 cm_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* TCP mode: the port @port of the test stands for (0 stays 0). */
static inline u16 cm_port(u16 port)
{
	int i;

	if (!cm_env_tcp() || !port)
		return port;
	for (i = 0; i < cm_ports.n; i++)
		if (cm_ports.test[i] == port)
			return cm_ports.real[i];
	cm_port_map(port, cm_free_port());
	return cm_ports.real[cm_ports.n - 1];
}

static inline const char *cm_ip4(const char *ip)
{
	if (!cm_env_tcp())
		return ip;
	if (!strcmp(ip, "10.0.0.1"))
		return "127.0.0.2";
	if (!strcmp(ip, "10.0.0.2"))
		return "127.0.0.1";
	return ip;
}

static inline struct sockaddr_in cm_in4(const char *ip, u16 port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_port = htons(cm_port(port));
	assert_int_equal(inet_pton(AF_INET, cm_ip4(ip), &sin.sin_addr), 1);
	return sin;
}

static inline struct sockaddr_in6 cm_in6(const char *ip, u16 port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

	if (cm_env_tcp() && !strcmp(ip, "fd00::2"))
		ip = "::1";
	sin6.sin6_port = htons(cm_port(port));
	assert_int_equal(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1);
	return sin6;
}

#define SA(x) ((struct sockaddr *)&(x))

/*
 * soft_env with its QPs removed (the CM makes them) and addresses set; in
 * TCP mode a siw profile with profile.tcp, and any other profile skipped.
 */
static inline void cm_env_init(struct soft_env *env, const char *profile,
			       bool threaded)
{
	struct sockaddr_in a0 = cm_in4("10.0.0.1", 0),
			   a1 = cm_in4("10.0.0.2", 0);
	struct sockaddr_in6 b0 = cm_in6("fd00::1", 0),
			    b1 = cm_in6("fd00::2", 0);
	struct soft_profile tcp;
	int i;

	cm_ports.n = 0;
	if (cm_env_tcp()) {
		if (strcmp(profile, "siw")) {
			print_message("skipped on TCP: the %s profile has no "
				      "TCP transport (siw only)\n",
				      profile);
			skip();
		}
		assert_int_equal(soft_profile_get("siw", &tcp), 0);
		tcp.tcp = true;
		tcp.threaded = threaded;
	}
	soft_env_init(env, &(struct soft_env_cfg){
				   .profile = profile,
				   .custom = cm_env_tcp() ? &tcp : NULL,
				   .no_connect = true,
				   .threaded = threaded });
	for (i = 0; i < 2; i++) {
		assert_int_equal(ib_destroy_qp(env->qp[i]), 0);
		env->qp[i] = NULL;
	}
	assert_int_equal(soft_device_add_addr(env->dev[0], SA(a0)), 0);
	assert_int_equal(soft_device_add_addr(env->dev[1], SA(a1)), 0);
	if (!cm_env_tcp()) /* loopback ::1 is one address: side 1's */
		assert_int_equal(soft_device_add_addr(env->dev[0], SA(b0)), 0);
	assert_int_equal(soft_device_add_addr(env->dev[1], SA(b1)), 0);
	cm_log_reset();
}

/*
 * A test whose rules hold on every transport names its profile through
 * this: in TCP mode it runs on siw (the only profile with a TCP transport)
 * instead of being skipped.
 */
static inline const char *cm_any(const char *profile)
{
	return cm_env_tcp() ? "siw" : profile;
}

/* A test that cannot hold on TCP devices: skipped there, saying why. */
static inline void cm_skip_on_tcp(const char *why)
{
	if (!cm_env_tcp())
		return;
	print_message("skipped on TCP: %s\n", why);
	skip();
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

/* A listener on 10.0.0.2:@port (TCP mode: port 0, mapped to @port). */
static inline struct rdma_cm_id *cm_listener(void *context, u16 port)
{
	struct sockaddr_in a = cm_in4("10.0.0.2", cm_env_tcp() ? 0 : port);
	struct rdma_cm_id *id = cm_id(context);
	const struct sockaddr_in *got;

	assert_int_equal(rdma_bind_addr(id, SA(a)), 0);
	assert_int_equal(rdma_listen(id, 8), 0);
	if (cm_env_tcp() && port) {
		got = (const struct sockaddr_in *)&id->route.addr.src_addr;
		assert_int_equal(got->sin_family, AF_INET);
		assert_int_not_equal(got->sin_port, 0);
		cm_port_map(port, ntohs(got->sin_port));
	}
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

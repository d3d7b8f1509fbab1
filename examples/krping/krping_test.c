// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * krping's ULP (krping.c) driven from C on two software devices of each
 * profile, for what the command line cannot reach:
 * - busy: a server serves one connection per run; a second client is
 *   rejected (-ECONNREFUSED, exit status 3) and the server's account is
 *   the first client's alone;
 * - read fault: the server's third RDMA READ completes in error: the
 *   server fails with -EIO after two pings, the client learns it from the
 *   disconnect (-ECONNRESET) at once, not from its timeout;
 * - unreachable, address error: the CM faults of the client's device give
 *   -EHOSTUNREACH (exit status 3) with no ping and nothing left behind.
 * busy and read fault run again with the devices' progress threads
 * (profile.threaded: work executes asynchronously, not in ib_post_send()).
 * The software device's fault hooks are used here only, never in krping.c.
 */
#include "krping.h"

#include <rdmarw/soft.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SIZE 8192
#define TIMEOUT_MS 5000

static int failures;
static const char *profile;
static const char *test;
static bool threaded; /* the devices execute on their progress threads */

#define CHECK(cond, ...)                                             \
	do {                                                         \
		if (!(cond)) {                                       \
			printf("FAIL: %s%s %s: ", profile,           \
			       threaded ? " (threaded)" : "", test); \
			printf(__VA_ARGS__);                         \
			printf("\n");                                \
			failures++;                                  \
		}                                                    \
	} while (0)

struct env {
	struct soft_fabric *fabric;
	struct ib_device *dev[2]; /* server, client */
	struct krping_opts o;
	struct krping_server *server;
};

static int env_init(struct env *e)
{
	struct sockaddr_in srv = { .sin_family = AF_INET }, cli = srv;
	struct soft_profile p;
	int ret;

	memset(e, 0, sizeof(*e));
	e->o.size = SIZE;
	e->o.count = 5;
	e->o.validate = true;
	e->o.timeout_ms = TIMEOUT_MS;
	inet_pton(AF_INET, "10.0.0.2", &srv.sin_addr);
	inet_pton(AF_INET, "10.0.0.3", &cli.sin_addr);
	if (soft_profile_get(profile, &p))
		return -ENOENT;
	p.threaded = threaded;
	e->fabric = soft_fabric_create();
	if (IS_ERR(e->fabric))
		return -ENOMEM;
	e->dev[0] = soft_device_create(e->fabric, NULL, &p);
	e->dev[1] = soft_device_create(e->fabric, NULL, &p);
	if (IS_ERR(e->dev[0]) || IS_ERR(e->dev[1]))
		return -ENOMEM;
	ret = soft_device_add_addr(e->dev[0], (struct sockaddr *)&srv);
	if (!ret)
		ret = soft_device_add_addr(e->dev[1], (struct sockaddr *)&cli);
	srv.sin_port = htons(7174);
	memcpy(&e->o.addr, &srv, sizeof(srv));
	if (!ret)
		ret = krping_server_start(&e->o, &e->server);
	return ret;
}

static void env_fini(struct env *e)
{
	int i;

	krping_server_stop(e->server);
	/* refused while a PD, CQ or CM id of krping were left */
	for (i = 0; i < 2; i++)
		CHECK(!IS_ERR_OR_NULL(e->dev[i]) &&
			      !soft_device_destroy(e->dev[i]),
		      "soft_device_destroy");
	CHECK(!soft_fabric_destroy(e->fabric), "soft_fabric_destroy");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_busy(struct env *e)
{
	struct krping_stats a, b, s;
	int ret;

	ret = krping_client(&e->o, &a);
	CHECK(ret == 0 && a.pings == 5 && a.validated == 5,
	      "first client: %d, %ld pings, %ld validated", ret, a.pings,
	      a.validated);
	ret = krping_client(&e->o, &b);
	CHECK(ret == -ECONNREFUSED && b.pings == 0,
	      "second client: %d (expected %d), %ld pings", ret, -ECONNREFUSED,
	      b.pings);
	CHECK(krping_exit_status(ret) == KRPING_EXIT_REFUSED, "exit status %d",
	      krping_exit_status(ret));
	ret = krping_server_wait(e->server, &s);
	CHECK(ret == 0 && s.pings == 5 && s.bytes_read == 5 * SIZE &&
		      s.bytes_written == 5 * SIZE,
	      "server: %d, %ld pings, %lld read, %lld written", ret, s.pings,
	      s.bytes_read, s.bytes_written);
}

static void test_read_fault(struct env *e)
{
	struct soft_fault_rule rule = {
		.type = SOFT_FAULT_WC,
		.nth = 3,
		.opcodes = 1ULL << IB_WR_RDMA_READ |
			   1ULL << IB_WR_RDMA_READ_WITH_INV,
		.status = IB_WC_REM_ACCESS_ERR,
	};
	struct krping_stats c, s;
	double t0;
	int ret;

	ret = soft_fault_arm_device(e->dev[0], &rule);
	CHECK(ret == 0, "soft_fault_arm_device: %d", ret);
	t0 = now();
	ret = krping_client(&e->o, &c);
	CHECK(ret == -ECONNRESET && c.pings == 2 && c.validated == 2,
	      "client: %d (expected %d), %ld pings, %ld validated", ret,
	      -ECONNRESET, c.pings, c.validated);
	CHECK(now() - t0 < TIMEOUT_MS / 2000.0,
	      "the client waited %.1f s: its timeout, not the disconnect",
	      now() - t0);
	ret = krping_server_wait(e->server, &s);
	CHECK(ret == -EIO && s.pings == 2 && s.bytes_read == 2 * SIZE &&
		      s.bytes_written == 2 * SIZE,
	      "server: %d (expected %d), %ld pings, %lld read, %lld written",
	      ret, -EIO, s.pings, s.bytes_read, s.bytes_written);
}

static void test_cm_fault(struct env *e, enum soft_cm_fault_type type)
{
	/* the first resolution or request fails, once */
	struct soft_cm_fault f = {
		.type = type,
		.nth = 1,
	};
	struct krping_stats c;
	int ret;

	ret = soft_cm_fault_arm(e->dev[1], &f);
	CHECK(ret == 0, "soft_cm_fault_arm: %d", ret);
	ret = krping_client(&e->o, &c);
	CHECK(ret == -EHOSTUNREACH && c.pings == 0,
	      "client: %d (expected %d), %ld pings", ret, -EHOSTUNREACH,
	      c.pings);
	CHECK(krping_exit_status(ret) == KRPING_EXIT_REFUSED, "exit status %d",
	      krping_exit_status(ret));
}

static void run(const char *name, void (*fn)(struct env *e), int arg)
{
	struct env e;
	int ret;

	test = name;
	ret = env_init(&e);
	CHECK(ret == 0, "setup: %d", ret);
	if (!ret) {
		if (fn)
			fn(&e);
		else
			test_cm_fault(&e, (enum soft_cm_fault_type)arg);
	}
	env_fini(&e);
}

int main(void)
{
	const char *profiles[] = { "mlx5", "rxe", "siw" };
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		profile = profiles[i];
		run("busy", test_busy, 0);
		run("read fault", test_read_fault, 0);
		run("unreachable", NULL, SOFT_CM_FAULT_UNREACHABLE);
		run("address error", NULL, SOFT_CM_FAULT_ADDR_ERROR);
		threaded = true;
		run("busy", test_busy, 0);
		run("read fault", test_read_fault, 0);
		threaded = false;
	}
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

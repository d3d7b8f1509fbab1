// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A krping server serves one connection per run: a second client is
 * rejected (REJECTED, -ECONNREFUSED, exit status 3), and the server's
 * account is the first client's alone.  Both clients and the server run in
 * this process on two software devices of each profile.
 */
#include "krping.h"

#include <rdmarw/soft.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                               \
	do {                                           \
		if (!(cond)) {                         \
			printf("FAIL: %s: ", profile); \
			printf(__VA_ARGS__);           \
			printf("\n");                  \
			failures++;                    \
		}                                      \
	} while (0)

static void one_profile(const char *profile)
{
	struct sockaddr_in srv = { .sin_family = AF_INET }, cli = srv;
	struct krping_opts o = {
		.size = 8192, .count = 5, .validate = true, .timeout_ms = 5000
	};
	struct krping_stats a, b, s;
	struct krping_server *server;
	struct ib_device *dev[2];
	struct soft_fabric *fabric;
	struct soft_profile p;
	int ret, i;

	inet_pton(AF_INET, "10.0.0.2", &srv.sin_addr);
	inet_pton(AF_INET, "10.0.0.3", &cli.sin_addr);
	if (soft_profile_get(profile, &p)) {
		CHECK(0, "no profile");
		return;
	}
	fabric = soft_fabric_create();
	dev[0] = soft_device_create(fabric, NULL, &p);
	dev[1] = soft_device_create(fabric, NULL, &p);
	CHECK(!IS_ERR(dev[0]) && !IS_ERR(dev[1]), "devices");
	CHECK(!soft_device_add_addr(dev[0], (struct sockaddr *)&srv) &&
		      !soft_device_add_addr(dev[1], (struct sockaddr *)&cli),
	      "addresses");
	srv.sin_port = htons(7174);
	memcpy(&o.addr, &srv, sizeof(srv));

	ret = krping_server_start(&o, &server);
	CHECK(ret == 0, "krping_server_start: %d", ret);
	if (ret)
		goto out;
	ret = krping_client(&o, &a);
	CHECK(ret == 0 && a.pings == 5 && a.validated == 5,
	      "first client: %d, %ld pings, %ld validated", ret, a.pings,
	      a.validated);
	ret = krping_client(&o, &b);
	CHECK(ret == -ECONNREFUSED && b.pings == 0,
	      "second client: %d (expected %d), %ld pings", ret, -ECONNREFUSED,
	      b.pings);
	CHECK(krping_exit_status(ret) == KRPING_EXIT_REFUSED, "exit status %d",
	      krping_exit_status(ret));
	ret = krping_server_wait(server, &s);
	CHECK(ret == 0 && s.pings == 5 && s.bytes_read == 5 * 8192 &&
		      s.bytes_written == 5 * 8192,
	      "server: %d, %ld pings, %lld read, %lld written", ret, s.pings,
	      s.bytes_read, s.bytes_written);
	krping_server_stop(server);
out:
	for (i = 0; i < 2; i++)
		CHECK(!soft_device_destroy(dev[i]), "soft_device_destroy");
	CHECK(!soft_fabric_destroy(fabric), "soft_fabric_destroy");
}

int main(void)
{
	const char *profiles[] = { "mlx5", "rxe", "siw" };
	size_t i;

	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		one_profile(profiles[i]);
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}

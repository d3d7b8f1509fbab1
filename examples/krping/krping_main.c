// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * krping's main(): options, and the devices the ULP (krping.c) will find.
 *
 *   krping --server|--client --addr IP [--port N] [--size BYTES]
 *          [--count N] [--validate] [--verbose] [--timeout MS] [--user-mr]
 *          [--soft PROFILE]
 *
 * With --soft PROFILE (mlx5, rxe, siw) the program makes a fabric of two
 * software devices of that profile: the server's answers to --addr, the
 * client's to a neighbour address (the last byte changed).  siw-tcp is
 * siw's profile on TCP (issue 28): --addr must then be an address of this
 * host, and --server and --client may run in two processes or machines.  Without
 * --server or --client both ends then run in this process (the server's
 * connection on a work queue, the client in main()); with --client alone
 * nobody listens, which is how the refusal is tested.  Without --soft the
 * devices are the real ones: the libibverbs backend opens all of them and
 * rdma_cm finds the one that owns the address.
 *
 * The server's --size is the most a ping may carry (a larger one is
 * refused); --count is the client's.
 *
 * Exit status: 0 done, 1 failed (I/O, data, protocol, timeout), 2 usage,
 * 3 refused (REJECTED, UNREACHABLE, no address or route).
 */
#include "krping.h"

#include <rdmarw/soft.h>
#include <rdmarw/version.h>
#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KRPING_DEFAULT_PORT 7174
#define KRPING_MAX_SIZE (256U << 20)

enum { OPT_TIMEOUT = 256, OPT_USER_MR, OPT_SOFT };

static const struct option krping_long_opts[] = {
	{ "server", no_argument, NULL, 's' },
	{ "client", no_argument, NULL, 'c' },
	{ "addr", required_argument, NULL, 'a' },
	{ "port", required_argument, NULL, 'p' },
	{ "size", required_argument, NULL, 'S' },
	{ "count", required_argument, NULL, 'C' },
	{ "validate", no_argument, NULL, 'V' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "user-mr", no_argument, NULL, OPT_USER_MR },
	{ "soft", required_argument, NULL, OPT_SOFT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "krping: %s\n", why);
	fprintf(stderr,
		"usage: krping --server|--client --addr IP [--port N] "
		"[--size BYTES] [--count N]\n"
		"              [--validate] [--verbose] [--timeout MS] "
		"[--user-mr] [--soft PROFILE]\n"
		"  --size BYTES    per ping (default 64); on the server "
		"the most a ping may carry\n"
		"  --count N       pings the client makes (default 10)\n"
		"  --timeout MS    bound of every wait (default 10000)\n"
		"  --user-mr       client: ib_reg_user_mr() instead of "
		"fast registration\n"
		"  --soft PROFILE  software devices (mlx5, rxe, siw); "
		"without --server/--client\n"
		"                  both ends run in this process\n");
	return KRPING_EXIT_USAGE;
}

/* A number with an optional k/m suffix (KiB, MiB), within [lo, hi]. */
static int parse_num(const char *s, unsigned long lo, unsigned long hi,
		     unsigned long *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (*end == 'k' || *end == 'K') {
		v <<= 10;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		v <<= 20;
		end++;
	}
	if (*end || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_addr(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

static void set_port(struct sockaddr_storage *ss, u16 port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

/* The client device's address: the server's with its last byte changed. */
static void neighbour(const struct sockaddr_storage *ss,
		      struct sockaddr_storage *out)
{
	unsigned char *last;

	*out = *ss;
	set_port(out, 0);
	last = out->ss_family == AF_INET6 ?
		       &((struct sockaddr_in6 *)out)->sin6_addr.s6_addr[15] :
		       (unsigned char *)&((struct sockaddr_in *)out)
				       ->sin_addr.s_addr +
			       3;
	*last = *last < 254 ? *last + 1 : *last - 1;
}

struct soft_glue {
	struct soft_fabric *fabric;
	struct ib_device *dev[2];
};

static int soft_glue_init(struct soft_glue *g, const char *profile,
			  const struct sockaddr_storage *addr)
{
	struct sockaddr_storage a[2];
	struct soft_profile p;
	int ret, i;

	/* siw-tcp: the peer is another process, reached through the
	 * addresses' real sockets (issue 28) */
	if (soft_profile_get(profile, &p))
		return -ENOENT;
	g->fabric = soft_fabric_create();
	if (IS_ERR(g->fabric)) {
		g->fabric = NULL;
		return -ENOMEM;
	}
	a[0] = *addr;
	set_port(&a[0], 0);
	neighbour(addr, &a[1]);
	for (i = 0; i < 2; i++) {
		g->dev[i] = soft_device_create(g->fabric, NULL, &p);
		if (IS_ERR(g->dev[i])) {
			ret = (int)PTR_ERR(g->dev[i]);
			g->dev[i] = NULL;
			return ret;
		}
		ret = soft_device_add_addr(g->dev[i], (struct sockaddr *)&a[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static void soft_glue_fini(struct soft_glue *g)
{
	int i;

	for (i = 0; i < 2; i++)
		if (g->dev[i] && soft_device_destroy(g->dev[i]))
			fprintf(stderr,
				"krping: soft_device_destroy refused\n");
	if (g->fabric && soft_fabric_destroy(g->fabric))
		fprintf(stderr, "krping: soft_fabric_destroy refused\n");
}

static void print_client(const struct krping_opts *o,
			 const struct krping_stats *st)
{
	printf("krping: client: %ld pings of %u bytes, %ld validated, %s\n",
	       st->pings, o->size, st->validated,
	       st->fast_reg ? "fast registration" : "user MRs");
}

static void print_server(const struct krping_stats *st)
{
	printf("krping: server: %ld pings served, %lld bytes read, "
	       "%lld bytes written\n",
	       st->pings, st->bytes_read, st->bytes_written);
}

/* Both ends in this process: the client's view checked against the server's. */
static int run_both(const struct krping_opts *o)
{
	struct krping_stats cst, sst;
	struct krping_server *s;
	long long want;
	int ret, sret;

	ret = krping_server_start(o, &s);
	if (ret)
		return krping_exit_status(ret) ?: KRPING_EXIT_FAIL;
	ret = krping_client(o, &cst);
	print_client(o, &cst);
	if (ret) {
		krping_server_stop(s);
		return krping_exit_status(ret);
	}
	sret = krping_server_wait(s, &sst);
	krping_server_stop(s);
	if (sret)
		return krping_exit_status(sret);
	print_server(&sst);
	want = (long long)o->count * o->size;
	if (sst.pings != o->count || cst.pings != o->count ||
	    sst.bytes_read != want || sst.bytes_written != want) {
		fprintf(stderr,
			"krping: the ends disagree: client %ld pings, server "
			"%ld pings and %lld/%lld bytes, expected %d and %lld\n",
			cst.pings, sst.pings, sst.bytes_read, sst.bytes_written,
			o->count, want);
		return KRPING_EXIT_FAIL;
	}
	return KRPING_EXIT_OK;
}

static int run(const struct krping_opts *o, bool server, bool client)
{
	struct krping_server *s;
	struct krping_stats st;
	int ret;

	if (server && client)
		return run_both(o);
	if (client) {
		ret = krping_client(o, &st);
		print_client(o, &st);
		return krping_exit_status(ret);
	}
	ret = krping_server_start(o, &s);
	if (ret)
		return KRPING_EXIT_FAIL;
	ret = krping_server_wait(s, &st);
	krping_server_stop(s);
	if (!ret)
		print_server(&st);
	return krping_exit_status(ret);
}

int main(int argc, char **argv)
{
	struct krping_opts o = { .size = 64, .count = 10, .timeout_ms = 10000 };
	bool server = false, client = false, have_addr = false;
	unsigned long port = KRPING_DEFAULT_PORT, v;
	const char *soft = NULL;
	struct soft_glue g = { 0 };
	int c, ret;

	/* one line at a time, in order with stderr's, also into a pipe */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "sca:p:S:C:Vvh", krping_long_opts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			server = true;
			break;
		case 'c':
			client = true;
			break;
		case 'a':
			if (parse_addr(optarg, &o.addr))
				return usage("--addr takes an IPv4 or IPv6 "
					     "address");
			have_addr = true;
			break;
		case 'p':
			if (parse_num(optarg, 1, 65535, &port))
				return usage("--port takes 1..65535");
			break;
		case 'S':
			if (parse_num(optarg, 1, KRPING_MAX_SIZE, &v))
				return usage("--size takes 1..256M bytes");
			o.size = (u32)v;
			break;
		case 'C':
			if (parse_num(optarg, 1, 1000000000, &v))
				return usage("--count takes 1..1000000000");
			o.count = (int)v;
			break;
		case 'V':
			o.validate = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case OPT_TIMEOUT:
			if (parse_num(optarg, 1, 3600000, &v))
				return usage("--timeout takes 1..3600000 ms");
			o.timeout_ms = (unsigned int)v;
			break;
		case OPT_USER_MR:
			o.user_mr = true;
			break;
		case OPT_SOFT:
			soft = optarg;
			break;
		case 'h':
			usage(NULL);
			return KRPING_EXIT_OK;
		default:
			return usage(NULL);
		}
	}
	if (optind < argc)
		return usage("unexpected argument");
	if (!have_addr)
		return usage("--addr is required");
	if (server && client)
		return usage("--server and --client exclude each other");
	if (!server && !client && !soft)
		return usage("--server or --client (or --soft for both)");
	if (!server && !client)
		server = client = true;
	set_port(&o.addr, (u16)port);

	if (soft) {
		ret = soft_glue_init(&g, soft, &o.addr);
		if (ret == -ENOENT) {
			soft_glue_fini(&g);
			return usage("--soft takes mlx5, rxe, siw or siw-tcp");
		}
		if (ret) {
			fprintf(stderr, "krping: software devices: %s\n",
				strerror(-ret));
			soft_glue_fini(&g);
			return KRPING_EXIT_FAIL;
		}
		ret = run(&o, server, client);
		soft_glue_fini(&g);
		return ret;
	}
#ifdef RDMARW_HAVE_IBV
	if (rdmarw_ibv_open_all() <= 0) {
		fprintf(stderr, "krping: no RDMA device (try --soft rxe)\n");
		return KRPING_EXIT_FAIL;
	}
	ret = run(&o, server, client);
	rdmarw_ibv_close_all();
	return ret;
#else
	fprintf(stderr, "krping: built without the libibverbs backend: "
			"use --soft PROFILE\n");
	return KRPING_EXIT_USAGE;
#endif
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench-tcp: WRITE or READ bandwidth of the software device's TCP
 * transport (issue 28) between two siw devices with profile.tcp in this
 * process (two fabrics, a loopback TCP connection, no MPA), next to a
 * plain TCP socket pair moving the same bytes in the same run (the limit
 * here), and their ratio; and the CPU time (user and system, all
 * threads) each spent per MiB moved, which a loaded machine changes less
 * than the wall clock, and the FPDUs each sendmsg() carried (the
 * transport's counters).  Each end has a thread polling its CQ; with inline
 * progress (profile.poll_rx, -p poll) the pollers receive, without it
 * (-p thread) the devices' threads do; -p both (the default) runs both in
 * the same run.  -l: round trips instead (perftest's ib_write_lat: each
 * end WRITEs -s bytes into the other's buffer when the other's arrived,
 * both polling), next to a socket pair's ping-pong; the median half
 * round trip in microseconds.
 *
 *   bench-tcp [-o write|read] [-s bytes] [-n messages] [-q depth]
 *             [-p poll|thread|both] [-l [-b]]
 *
 * -b: the round trips' pollers spin without yielding (perftest does not
 * yield); without it an empty poll yields, as the bandwidth runs' do.
 */
#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

#include "soft/soft_tcp.h"
#include "cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

struct end {
	struct soft_fabric *f;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;
	u8 *buf;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of the process so far (every thread, user and system). */
static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static void die(const char *what, long err)
{
	fprintf(stderr, "bench-tcp: %s: %ld\n", what, err);
	exit(1);
}

static void tcp_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &len))
		die("listen", errno);
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd[0] < 0 || connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		die("connect", errno);
	fd[1] = accept(l, NULL, NULL);
	if (fd[1] < 0)
		die("accept", errno);
	close(l);
}

static void end_init(struct end *e, int fd, bool initiator, size_t len,
		     u32 depth, bool poll_rx)
{
	struct soft_profile p;
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = depth,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT,
				.qp_access_flags = ACCESS,
				.port_num = 1 };
	struct soft_tcp_conn c = { .fd = fd,
				   .crc = true,
				   .ird = depth,
				   .ord = depth,
				   .initiator = initiator };

	if (soft_profile_get("siw", &p))
		die("profile", 0);
	p.tcp = true;
	p.poll_rx = poll_rx;
	e->f = soft_fabric_create();
	e->dev = soft_device_create(e->f, NULL, &p);
	if (IS_ERR(e->dev))
		die("device", PTR_ERR(e->dev));
	e->pd = ib_alloc_pd(e->dev, 0);
	e->cq = ib_alloc_cq(e->dev, NULL, 2 * depth, 0, IB_POLL_DIRECT);
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ib_create_qp(e->pd, &qa);
	if (IS_ERR(e->qp))
		die("qp", PTR_ERR(e->qp));
	if (ib_modify_qp(e->qp, &a,
			 IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
				 IB_QP_ACCESS_FLAGS) ||
	    rdmarw__soft_tcp_attach(e->qp, &c))
		die("attach", 0);
	a.qp_state = IB_QPS_RTR;
	if (ib_modify_qp(e->qp, &a,
			 IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
				 IB_QP_DEST_QPN | IB_QP_RQ_PSN |
				 IB_QP_MAX_DEST_RD_ATOMIC |
				 IB_QP_MIN_RNR_TIMER))
		die("rtr", 0);
	a.qp_state = IB_QPS_RTS;
	if (ib_modify_qp(e->qp, &a,
			 IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				 IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
				 IB_QP_MAX_QP_RD_ATOMIC))
		die("rts", 0);
	e->buf = aligned_alloc(4096, len);
	if (!e->buf)
		die("buffer", -ENOMEM);
	memset(e->buf, 0x5a, len);
	e->mr = ib_reg_user_mr(e->pd, (uintptr_t)e->buf, len, (uintptr_t)e->buf,
			       ACCESS);
	if (IS_ERR(e->mr))
		die("mr", PTR_ERR(e->mr));
}

/* -b: round trips poll without yielding (perftest's ib_write_lat) */
static bool busy;

/* FPDUs received by pollers and by the devices' threads, this run; FPDUs
 * framed and the sendmsg() calls that carried them, both ends */
static u64 fpdus_poll, fpdus_thread, tx_fpdus, tx_calls;

static void end_fini(struct end *e)
{
	struct soft_tcp_stats st;

	if (!rdmarw__soft_tcp_stats(e->dev, &st)) {
		fpdus_poll += st.poll_fpdus;
		fpdus_thread += st.thread_fpdus;
		tx_fpdus += st.tx_fpdus;
		tx_calls += st.tx_calls;
	}
	ib_dereg_mr(e->mr);
	free(e->buf);
	ib_destroy_qp(e->qp);
	ib_free_cq(e->cq);
	ib_dealloc_pd(e->pd);
	soft_device_destroy(e->dev);
	soft_fabric_destroy(e->f);
}

/* The target's poller: with inline progress, its polls receive. */
struct target {
	struct end *e;
	bool stop;
};

static void *target_main(void *arg)
{
	struct target *t = arg;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		struct ib_wc wc[16];

		int r = ib_poll_cq(t->e->cq, 16, wc);

		if (r < 0)
			die("target poll", r);
		if (!r)
			sched_yield(); /* a loaded machine: others' turn */
	}
	return NULL;
}

static void pair_init(struct end e[2], size_t len, u32 depth, bool poll_rx)
{
	int fd[2];

	tcp_pair(fd);
	end_init(&e[0], fd[0], true, len, depth, poll_rx);
	end_init(&e[1], fd[1], false, len, depth, poll_rx);
}

/* @n messages of @len bytes, @depth in flight, signaled each. */
static double rdma_run(bool read, size_t len, u32 n, u32 depth, bool poll_rx)
{
	struct end e[2];
	struct target tg = { .e = &e[1] };
	u32 posted = 0, done = 0;
	double t0, t1;
	pthread_t t;

	pair_init(e, len, depth, poll_rx);
	pthread_create(&t, NULL, target_main, &tg);
	t0 = now();
	while (done < n) {
		struct ib_wc wc[16];
		int r;

		while (posted < n && posted - done < depth) {
			struct ib_sge sge = { (uintptr_t)e[0].buf, (u32)len,
					      e[0].mr->lkey };
			struct ib_rdma_wr wr = {
				.wr = { .wr_id = posted,
					.opcode = read ? IB_WR_RDMA_READ :
							 IB_WR_RDMA_WRITE,
					.sg_list = &sge,
					.num_sge = 1,
					.send_flags = IB_SEND_SIGNALED },
				.remote_addr = (uintptr_t)e[1].buf,
				.rkey = e[1].mr->rkey,
			};
			const struct ib_send_wr *bad;

			if (ib_post_send(e[0].qp, &wr.wr, &bad))
				die("post", 0);
			posted++;
		}
		r = ib_poll_cq(e[0].cq, 16, wc);
		if (r < 0)
			die("poll", r);
		for (int i = 0; i < r; i++)
			if (wc[i].status != IB_WC_SUCCESS)
				die("completion", wc[i].status);
		done += (u32)r;
		if (!r)
			sched_yield();
	}
	t1 = now();
	__atomic_store_n(&tg.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	end_fini(&e[0]);
	end_fini(&e[1]);
	return (double)len * n / (t1 - t0);
}

struct sink {
	int fd;
	size_t total;
	size_t chunk;
};

static void *sink_main(void *arg)
{
	struct sink *s = arg;
	u8 *buf = malloc(s->chunk);
	size_t got = 0;

	while (buf && got < s->total) {
		ssize_t r = recv(s->fd, buf, s->chunk, 0);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* The same bytes through a plain TCP socket pair on loopback. */
static double socket_run(size_t len, u32 n)
{
	struct sink s;
	pthread_t t;
	u8 *buf = malloc(len);
	double t0, t1;
	int fd[2], one = 1;

	tcp_pair(fd);
	setsockopt(fd[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!buf)
		die("buffer", -ENOMEM);
	memset(buf, 0x5a, len);
	s = (struct sink){ .fd = fd[1], .total = len * n, .chunk = 65536 };
	t0 = now();
	pthread_create(&t, NULL, sink_main, &s);
	for (u32 i = 0; i < n; i++) {
		size_t off = 0;

		while (off < len) {
			ssize_t r = send(fd[0], buf + off, len - off, 0);

			if (r <= 0)
				die("send", errno);
			off += (size_t)r;
		}
	}
	pthread_join(t, NULL);
	t1 = now();
	close(fd[0]);
	close(fd[1]);
	free(buf);
	return (double)len * n / (t1 - t0);
}

/* ---- round trips ---- */

struct pong {
	struct end *e;
	struct end *peer;
	size_t len;
	u32 n;
	bool first;
	double *rtt;
};

/* Poll until the peer's WRITE number @v arrived (the last byte), reaping
 * this end's WRITE completions meanwhile. */
static void wait_byte(struct end *e, size_t len, u8 v)
{
	/* once at least: the Send Queue's slots come back when polled */
	do {
		struct ib_wc wc[16];
		int r = ib_poll_cq(e->cq, 16, wc);

		for (int i = 0; i < r; i++)
			if (wc[i].status != IB_WC_SUCCESS)
				die("completion", wc[i].status);
		if (!r && !busy)
			sched_yield();
	} while (__atomic_load_n(&e->buf[len - 1], __ATOMIC_ACQUIRE) != v);
}

static void write_peer(struct pong *p, u8 v)
{
	struct ib_sge sge = { (uintptr_t)p->e->buf + p->len, (u32)p->len,
			      p->e->mr->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)p->peer->buf,
		.rkey = p->peer->mr->rkey,
	};
	const struct ib_send_wr *bad;

	memset(p->e->buf + p->len, v, p->len);
	if (ib_post_send(p->e->qp, &wr.wr, &bad))
		die("post", 0);
}

static void *pong_main(void *arg)
{
	struct pong *p = arg;

	for (u32 i = 0; i < p->n; i++) {
		u8 v = (u8)(i % 255 + 1);
		double t0 = now();

		if (p->first) {
			write_peer(p, v);
			wait_byte(p->e, p->len, v);
			p->rtt[i] = now() - t0;
		} else {
			wait_byte(p->e, p->len, v);
			write_peer(p, v);
		}
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n round trips, halved, in microseconds. */
static double half_median(double *rtt, u32 n)
{
	qsort(rtt, n, sizeof(*rtt), cmp_double);
	return rtt[n / 2] / 2 * 1e6;
}

/* @n WRITE round trips of @len bytes between two ends polling. */
static double rdma_lat(size_t len, u32 n, bool poll_rx)
{
	double *rtt = calloc(n, sizeof(*rtt)), us;
	struct end e[2];
	struct pong p[2];
	pthread_t t;

	if (!rtt)
		die("buffer", -ENOMEM);
	/* each end's buffer: [0, len) the peer writes, [len, 2 len) sent */
	pair_init(e, 2 * len, 16, poll_rx);
	memset(e[0].buf, 0, len);
	memset(e[1].buf, 0, len);
	for (int i = 0; i < 2; i++)
		p[i] = (struct pong){ .e = &e[i],
				      .peer = &e[!i],
				      .len = len,
				      .n = n,
				      .first = !i,
				      .rtt = rtt };
	pthread_create(&t, NULL, pong_main, &p[1]);
	pong_main(&p[0]);
	pthread_join(t, NULL);
	end_fini(&e[0]);
	end_fini(&e[1]);
	us = half_median(rtt, n);
	free(rtt);
	return us;
}

struct echo {
	int fd;
	size_t len;
	u32 n;
};

static void xfer(int fd, u8 *buf, size_t len, bool out)
{
	for (size_t off = 0; off < len;) {
		ssize_t r = out ? send(fd, buf + off, len - off, 0) :
				  recv(fd, buf + off, len - off, 0);

		if (r <= 0)
			die(out ? "send" : "recv", errno);
		off += (size_t)r;
	}
}

static void *echo_main(void *arg)
{
	struct echo *e = arg;
	u8 *buf = malloc(e->len);

	for (u32 i = 0; buf && i < e->n; i++) {
		xfer(e->fd, buf, e->len, false);
		xfer(e->fd, buf, e->len, true);
	}
	free(buf);
	return NULL;
}

/* The same round trips through a plain TCP socket pair (blocking). */
static double socket_lat(size_t len, u32 n)
{
	double *rtt = calloc(n, sizeof(*rtt)), us;
	u8 *buf = calloc(1, len);
	struct echo e;
	pthread_t t;
	int fd[2], one = 1;

	if (!rtt || !buf)
		die("buffer", -ENOMEM);
	tcp_pair(fd);
	for (int i = 0; i < 2; i++)
		setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	e = (struct echo){ .fd = fd[1], .len = len, .n = n };
	pthread_create(&t, NULL, echo_main, &e);
	for (u32 i = 0; i < n; i++) {
		double t0 = now();

		xfer(fd[0], buf, len, true);
		xfer(fd[0], buf, len, false);
		rtt[i] = now() - t0;
	}
	pthread_join(t, NULL);
	close(fd[0]);
	close(fd[1]);
	us = half_median(rtt, n);
	free(rtt);
	free(buf);
	return us;
}

/* The share of FPDUs pollers received since the last call, in percent. */
static double polled_share(void)
{
	u64 all = fpdus_poll + fpdus_thread;
	double share = all ? 100.0 * (double)fpdus_poll / (double)all : 0;

	fpdus_poll = 0;
	fpdus_thread = 0;
	return share;
}

/* FPDUs per sendmsg() since the last call. */
static double per_call(void)
{
	double r = tx_calls ? (double)tx_fpdus / (double)tx_calls : 0;

	tx_fpdus = 0;
	tx_calls = 0;
	return r;
}

static void lat_main(size_t len, u32 n, int modes)
{
	double poll = 0, thread = 0, sock, share[2] = { 0 };

	if (modes & 1) {
		poll = rdma_lat(len, n, true);
		share[0] = polled_share();
	}
	if (modes & 2) {
		thread = rdma_lat(len, n, false);
		share[1] = polled_share();
	}
	sock = socket_lat(len, n);
	printf("WRITE round trip %zu B x %u, median half round trip: rdmarw "
	       "tcp poll %.1f us, thread %.1f us, socket pair %.1f us; "
	       "poll / socket %.2f, thread / socket %.2f; FPDUs received by "
	       "pollers %.0f %% and %.0f %%\n",
	       len, n, poll, thread, sock, poll / sock, thread / sock, share[0],
	       share[1]);
}

/* FPDUs received by pollers, percent, and FPDUs per sendmsg(): inline
 * progress on, off */
static double share[2], fpc[2];

/* One rdmarw run (inline progress @poll_rx) with its CPU time. */
static double bw_one(bool read, size_t len, u32 n, u32 depth, bool poll_rx,
		     double *cpu_ms)
{
	double c0 = cpu(), bw = rdma_run(read, len, n, depth, poll_rx);

	*cpu_ms = (cpu() - c0) * 1e3 * (1 << 20) / ((double)len * n);
	share[!poll_rx] = polled_share();
	fpc[!poll_rx] = per_call();
	return bw;
}

int main(int argc, char **argv)
{
	size_t len = 1 << 20;
	u32 n = 512, depth = 16;
	bool read = false, lat = false;
	int modes = 3; /* 1 poll, 2 thread */
	double bw[2] = { 0 }, ms[2] = { 0 }, sock, c1, c2;
	const char *why = NULL;
	u64 v;
	int c;

	/* K/M suffixes as the tools take them; a bad number is refused */
	while (!why && (c = getopt(argc, argv, "o:s:n:q:p:lb")) != -1) {
		if (c == 'o' &&
		    (!strcmp(optarg, "read") || !strcmp(optarg, "write")))
			read = !strcmp(optarg, "read");
		else if (c == 'o')
			why = "must be read or write";
		else if (c == 's' &&
			 !(why = cli_parse_u64(optarg, 1, 1u << 30, &v)))
			len = (size_t)v;
		else if (c == 'n' &&
			 !(why = cli_parse_u64(optarg, 1, 1u << 24, &v)))
			n = (u32)v;
		else if (c == 'q' && !(why = cli_parse_u64(optarg, 1, 128, &v)))
			depth = (u32)v;
		else if (c == 'p' && !strcmp(optarg, "poll"))
			modes = 1;
		else if (c == 'p' && !strcmp(optarg, "thread"))
			modes = 2;
		else if (c == 'p' && !strcmp(optarg, "both"))
			modes = 3;
		else if (c == 'p')
			why = "must be poll, thread or both";
		else if (c == 'l')
			lat = true;
		else if (c == 'b')
			busy = true;
		else if (c != 's' && c != 'n' && c != 'q')
			why = "unknown option";
	}
	if (why) {
		fprintf(stderr,
			"bench-tcp: -%c %s: %s\nusage: bench-tcp [-o write|read] "
			"[-s bytes] [-n messages] [-q depth (1-128)] "
			"[-p poll|thread|both] [-l [-b]]\n",
			optopt ? optopt : c, optarg ? optarg : "", why);
		return 2;
	}
	if (lat) {
		lat_main(len, n, modes);
		return 0;
	}
	if (modes & 1)
		bw[0] = bw_one(read, len, n, depth, true, &ms[0]);
	if (modes & 2)
		bw[1] = bw_one(read, len, n, depth, false, &ms[1]);
	c1 = cpu();
	sock = socket_run(len, n);
	c2 = cpu();
	c2 = (c2 - c1) * 1e3 * (1 << 20) / ((double)len * n);
	printf("%s %zu B x %u, depth %u: rdmarw tcp poll %.1f MB/s, thread "
	       "%.1f MB/s, socket pair %.1f MB/s; ratio poll %.2f, thread "
	       "%.2f; CPU ms/MiB poll %.3f, thread %.3f, socket pair %.3f; "
	       "FPDUs received by pollers %.0f %% and %.0f %%; FPDUs per "
	       "sendmsg() %.2f and %.2f\n",
	       read ? "READ" : "WRITE", len, n, depth, bw[0] / 1e6, bw[1] / 1e6,
	       sock / 1e6, bw[0] / sock, bw[1] / sock, ms[0], ms[1], c2,
	       share[0], share[1], fpc[0], fpc[1]);
	return 0;
}

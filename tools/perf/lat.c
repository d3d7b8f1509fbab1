// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-perf --lat (cs.h): ping-pong round trips as perftest's ib_*_lat.
 *
 * WRITE: the client WRITEs @size bytes into the server's dst through the
 * R/W API, the last byte an iteration mark (1 to 255, then 0, as
 * perftest's); the server, which watches that byte, WRITEs the same back
 * (-n times with --perftest); a sample is half the time from
 * the client's post to the mark in its own dst.  READ: the time of one
 * READ, post to completion, not halved.  SEND: the client SENDs, the
 * server SENDs back from its receive handler, half the time to the
 * client's receive.  Statistics as perftest prints them: the samples
 * sorted and the two worst dropped; t_max and the percentiles at perftest's
 * places (t_max is the better of the two dropped).
 */
#include "cs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LAT_MAX_SAMPLES (1ULL << 26) /* without -n: the most -D keeps */
#define LAT_TAIL 2 /* the worst samples dropped, as perftest */
#define LAT_POLL_MASK 63 /* a memory watch polls the CQ this often */
#define LAT_STALL_S 60 /* a round trip that takes longer has failed */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static u64 ns_of(double v)
{
	return v > 0 ? (u64)llround(v) : 0;
}

void lat_stats(double *ns, u64 n, struct cs_figures *fig)
{
	u64 m, i, i99, i999;
	double sum = 0, var = 0, avg, median;

	memset(fig->lat, 0, sizeof(fig->lat));
	if (!n)
		return;
	qsort(ns, n, sizeof(*ns), cmp_double);
	m = n > LAT_TAIL + 1 ? n - LAT_TAIL : n;
	/* perftest's get_median(): the two middle ones of an even count */
	median = m % 2 ? ns[m / 2] : (ns[m / 2] + ns[m / 2 - 1]) / 2;
	for (i = 0; i < m; i++)
		sum += ns[i];
	avg = sum / (double)m;
	for (i = 0; i < m; i++)
		var += (ns[i] - avg) * (ns[i] - avg);
	i99 = (u64)ceil((double)m * 0.99);
	i999 = (u64)ceil((double)m * 0.999);
	fig->lat[0] = ns_of(ns[0]);
	fig->lat[1] = ns_of(ns[min_t(u64, m, n - 1)]);
	fig->lat[2] = ns_of(median);
	fig->lat[3] = ns_of(avg);
	fig->lat[4] = ns_of(sqrt(var / (double)m));
	fig->lat[5] = ns_of(ns[min_t(u64, i99, n - 1)]);
	fig->lat[6] = ns_of(ns[min_t(u64, i999, n - 1)]);
}

static u8 mark_of(const char *p)
{
	return __atomic_load_n((const u8 *)p, __ATOMIC_ACQUIRE);
}

static void set_mark(char *p, u8 k)
{
	__atomic_store_n((u8 *)p, k, __ATOMIC_RELEASE);
}

/*
 * A ping or pong that does not come: the connection went down (its
 * receives were flushed), or nothing for LAT_STALL_S (a peer that stopped,
 * perftest's among them).  Ask only once what the last poll brought was
 * looked at: one poll may place the peer's last WRITE and see its close
 * (a pass that receives inline takes both from the socket).
 */
static int lat_stalled(struct cs_conn *c, double since)
{
	if (c->flushed)
		return cs_fail(c, "the peer disconnected", -ECONNRESET);
	if (perf_now() - since > LAT_STALL_S)
		return cs_fail(c, "no round trip", -ETIMEDOUT);
	return 0;
}

/* A free transfer, polling the CQ until one completes. */
static struct cs_io *lat_io(struct cs_conn *c)
{
	unsigned int spins = 0;
	struct cs_io *io;

	while (!(io = cs_get_io(c))) {
		if (cs_poll(c) < 0)
			return NULL;
		cs_relax(&spins);
	}
	return io;
}

/* Every transfer posted has completed (and was handled). */
static int lat_reap(struct cs_conn *c)
{
	unsigned int spins = 0;

	while (c->completed < c->posted) {
		if (cs_poll(c) < 0)
			return c->err;
		cs_relax(&spins);
	}
	return c->err;
}

/* One round trip of @op; its time in ns (NAN on error). */
static double lat_once(struct cs_conn *c, enum cs_op op, u64 size, u8 k)
{
	char *mine = cs_dst(c) + size - 1;
	unsigned int spins = 0, polls = 0;
	u64 data = c->data_count;
	struct cs_io *io = lat_io(c);
	double t0;
	int ret;

	if (!io)
		return NAN;
	if (op == CS_WRITE)
		set_mark(cs_src(c) + size - 1, k);
	t0 = perf_now();
	if (op == CS_SEND)
		ret = cs_post_send(c, io, size);
	else
		ret = cs_post_rw(
			c, io, op == CS_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE,
			size);
	if (ret == -EAGAIN)
		ret = cs_fail(c, "rdma_rw_ctx_init: no MR left", -EAGAIN);
	if (ret)
		return NAN;
	for (;;) {
		if (op == CS_WRITE && mark_of(mine) == k)
			break;
		if (op != CS_WRITE || !(++polls & LAT_POLL_MASK)) {
			if (cs_poll(c) < 0)
				return NAN;
			if (op == CS_WRITE && mark_of(mine) == k)
				break;
			if (op == CS_READ && c->completed == c->posted)
				break;
			if (op == CS_SEND && c->data_count != data)
				break;
			if (lat_stalled(c, t0))
				return NAN;
		}
		cs_relax(&spins);
	}
	return (perf_now() - t0) * 1e9;
}

int lat_client(struct cs_conn *c, enum cs_op op, u64 size,
	       struct cs_figures *fig)
{
	const struct perf_opts *o = c->o;
	u64 max = o->iters ? o->iters : LAT_MAX_SAMPLES, n = 0, cap = 0;
	double t0 = perf_now(), deadline, t, *ns = NULL, *more;
	u8 k = 0;
	int ret = 0;

	deadline = !o->iters || o->duration_set ? t0 + o->duration : INFINITY;
	c->no_credit = true;
	c->posted = c->completed = 0;
	while (n < max) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			more = realloc(ns, cap * sizeof(*ns));
			if (!more) {
				ret = cs_fail(c, "realloc", -ENOMEM);
				break;
			}
			ns = more;
		}
		k = (u8)(k +
			 1); /* as perftest's (char)++scnt: 1..255, 0, 1... */
		t = lat_once(c, op, size, k);
		if (isnan(t) || (ret = lat_reap(c))) {
			ret = c->err ? c->err : -EIO;
			break;
		}
		ns[n++] = op == CS_READ ? t : t / 2;
		if (perf_now() > deadline)
			break;
	}
	c->no_credit = false;
	if (!ret) {
		*fig = (struct cs_figures){ .ops = n,
					    .bytes = n * size,
					    .ns = (u64)((perf_now() - t0) *
							1e9) };
		lat_stats(ns, n, fig);
	}
	free(ns);
	return ret;
}

int lat_server_write(struct cs_conn *c, u64 size, u64 count, double *posts)
{
	char *mine = cs_dst(c) + size - 1;
	unsigned int spins = 0, polls = 0;
	double last = perf_now();
	struct cs_io *io;
	u64 n = 0;
	u8 k = 1;
	int ret;

	c->posted = c->completed = 0;
	c->no_credit = true;
	while (!c->err && (count ? n < count : !c->have_msg)) {
		if (mark_of(mine) == k) {
			last = perf_now();
			if (posts)
				posts[n] = last;
			n++;
			set_mark(cs_src(c) + size - 1, k);
			io = lat_io(c);
			if (!io)
				break;
			ret = cs_post_rw(c, io, DMA_TO_DEVICE, size);
			if (ret == -EAGAIN)
				cs_fail(c, "rdma_rw_ctx_init: no MR left", ret);
			k = (u8)(k + 1);
			spins = 0;
			continue;
		}
		/* the client's DONE comes when no ping is in flight */
		if (!(++polls & LAT_POLL_MASK) &&
		    (cs_poll(c) < 0 ||
		     (count && mark_of(mine) != k && lat_stalled(c, last))))
			break;
		cs_relax(&spins);
	}
	if (!c->err)
		lat_reap(c);
	c->no_credit = false;
	return c->err;
}

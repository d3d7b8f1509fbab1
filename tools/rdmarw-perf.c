// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-perf: perftest for the R/W context API.
 *
 * Each I/O goes through the whole path a ULP uses: rdma_rw_ctx_init (or
 * _init_bvec) -> rdma_rw_ctx_post with a cqe -> the completion through
 * cqe->done -> rdma_rw_ctx_destroy.  Contexts are kept in flight up to
 * --ctxs.  Beside it, in the same run, the tool measures memcpy over the
 * same buffers and SGL shape (the physical limit of the software device)
 * and prints the ratio, and the control path alone (init + wrs + destroy,
 * nothing posted).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#define PERF_MAX_SGE 1024U
#define PERF_MAX_CTXS 1024U
#define PERF_MIN_ITERS 16ULL

struct perf_opts {
	bool write;
	bool read;
	u64 size_min;
	u64 size_max;
	u32 sge;
	u32 gap;
	u32 offset;
	u32 ctxs;
	u64 iters;
	double duration;
	const char *profile;
	bool force_mr;
	bool bvec;
	bool json;
	bool quiet;
};

struct perf_env {
	struct soft_fabric *fabric;
	struct ib_device *ldev, *rdev;
	struct ib_pd *lpd, *rpd;
	struct ib_cq *lcq, *rcq;
	struct ib_qp *lqp, *rqp;
	struct ib_qp *ctl_qp; /* control-path timing only: never posted */
	struct ib_mr *rmr;
	char *lbuf, *rbuf;
	size_t lbuf_len, rbuf_len;
};

/* One transfer's shape: entries of the local buffer and the remote range. */
struct perf_shape {
	u32 nents;
	u64 bytes;
	u64 off[PERF_MAX_SGE];
	u32 len[PERF_MAX_SGE];
};

struct perf_run;

struct perf_slot {
	struct rdma_rw_ctx ctx;
	struct ib_cqe cqe;
	struct scatterlist sgl[PERF_MAX_SGE];
	struct bio_vec bvec[PERF_MAX_SGE];
	struct perf_run *run;
};

struct perf_run {
	struct perf_env *env;
	const struct perf_opts *o;
	struct perf_shape *shape;
	enum dma_data_direction dir;
	struct perf_slot *slots;
	u64 posted, completed, target;
	int error;
	/* peak: the best window of completions */
	double win_start;
	u64 win_done;
	double peak_bps;
};

struct perf_result {
	const char *op;
	u64 bytes;
	u64 iters;
	double secs;
	double bw_avg;  /* bytes per second */
	double bw_peak; /* bytes per second */
	double mpps;
	double memcpy_bps;
	double ctl_ns;
	const char *path;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, long err)
{
	fprintf(stderr, "rdmarw-perf: %s: %s\n", what, strerror((int)-err));
	exit(1);
}

static void *map_buffer(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	memset(p, 0x5a, len);
	return p;
}

/* ---- the two hosts ---------------------------------------------------- */

static struct ib_qp *make_qp(struct ib_pd *pd, struct ib_cq *cq, u32 ctxs,
			     u32 max_sge)
{
	struct ib_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = max_sge, .max_recv_sge = 1,
			 .max_rdma_ctxs = ctxs },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	struct ib_qp *qp = ib_create_qp(pd, &attr);

	if (IS_ERR(qp))
		die("ib_create_qp", PTR_ERR(qp));
	return qp;
}

static void env_open(struct perf_env *e, const struct perf_opts *o,
		     size_t lbuf_len, size_t rbuf_len)
{
	struct soft_profile prof;
	int ret;

	ret = soft_profile_get(o->profile, &prof);
	if (ret)
		die(o->profile, ret);
	rdma_rw_set_force_mr(o->force_mr);
	e->fabric = soft_fabric_create();
	if (IS_ERR(e->fabric))
		die("soft_fabric_create", PTR_ERR(e->fabric));
	e->ldev = soft_device_create(e->fabric, "perf_init%d", &prof);
	e->rdev = soft_device_create(e->fabric, "perf_tgt%d", &prof);
	if (IS_ERR(e->ldev) || IS_ERR(e->rdev))
		die("soft_device_create", -ENODEV);
	e->lpd = ib_alloc_pd(e->ldev, 0);
	e->rpd = ib_alloc_pd(e->rdev, 0);
	if (IS_ERR(e->lpd) || IS_ERR(e->rpd))
		die("ib_alloc_pd", -ENOMEM);
	e->lcq = ib_alloc_cq(e->ldev, NULL, (int)(4 * o->ctxs + 64), 0,
			     IB_POLL_DIRECT);
	e->rcq = ib_alloc_cq(e->rdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->lcq) || IS_ERR(e->rcq))
		die("ib_alloc_cq", -ENOMEM);
	e->lqp = make_qp(e->lpd, e->lcq, o->ctxs,
			 (u32)e->ldev->attrs.max_send_sge);
	e->rqp = make_qp(e->rpd, e->rcq, 0, 1);
	e->ctl_qp = make_qp(e->lpd, e->lcq, 1,
			    (u32)e->ldev->attrs.max_send_sge);
	ret = soft_qp_connect(e->lqp, e->rqp);
	if (ret)
		die("soft_qp_connect", ret);
	e->lbuf_len = lbuf_len;
	e->rbuf_len = rbuf_len;
	e->lbuf = map_buffer(lbuf_len);
	e->rbuf = map_buffer(rbuf_len);
	e->rmr = ib_reg_user_mr(e->rpd, (u64)(uintptr_t)e->rbuf, rbuf_len,
				(u64)(uintptr_t)e->rbuf,
				IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
					IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(e->rmr))
		die("ib_reg_user_mr", PTR_ERR(e->rmr));
}

static void env_close(struct perf_env *e)
{
	ib_dereg_mr(e->rmr);
	ib_destroy_qp(e->lqp);
	ib_destroy_qp(e->rqp);
	ib_destroy_qp(e->ctl_qp);
	ib_free_cq(e->lcq);
	ib_free_cq(e->rcq);
	ib_dealloc_pd(e->lpd);
	ib_dealloc_pd(e->rpd);
	soft_device_destroy(e->ldev);
	soft_device_destroy(e->rdev);
	soft_fabric_destroy(e->fabric);
	munmap(e->lbuf, e->lbuf_len);
	munmap(e->rbuf, e->rbuf_len);
}

/* ---- SGL shape -------------------------------------------------------- */

/*
 * @bytes split into @nents entries (the last takes the remainder); entry i
 * starts @gap bytes after the end of entry i-1 (0: contiguous), the first at
 * @offset into the buffer.
 */
static int shape_build(struct perf_shape *s, u64 bytes, u32 nents, u32 gap,
		       u32 offset)
{
	u64 each, pos = offset;
	u32 i;

	if (!nents || nents > PERF_MAX_SGE || bytes < nents)
		return -EINVAL;
	each = bytes / nents;
	if (each > UINT32_MAX)
		return -EINVAL;
	s->nents = nents;
	s->bytes = bytes;
	for (i = 0; i < nents; i++) {
		s->off[i] = pos;
		s->len[i] = (u32)(i + 1 == nents ? bytes - each * i : each);
		pos += s->len[i] + gap;
	}
	return 0;
}

static u64 shape_span(const struct perf_shape *s)
{
	return s->off[s->nents - 1] + s->len[s->nents - 1];
}

static void slot_fill(struct perf_slot *sl, const struct perf_shape *s,
		      char *base)
{
	u32 i;

	sg_init_table(sl->sgl, s->nents);
	for (i = 0; i < s->nents; i++) {
		sg_set_buf(&sl->sgl[i], base + s->off[i], s->len[i]);
		bvec_set_virt(&sl->bvec[i], base + s->off[i], s->len[i]);
	}
}

/* ---- one I/O ---------------------------------------------------------- */

static int io_init(struct perf_run *r, struct perf_slot *sl, struct ib_qp *qp)
{
	struct perf_env *e = r->env;
	u64 raddr = (u64)(uintptr_t)e->rbuf;

	if (r->o->bvec) {
		struct bvec_iter it = { .bi_size = (unsigned int)r->shape->bytes };

		return rdma_rw_ctx_init_bvec(&sl->ctx, qp, 1, sl->bvec,
					     r->shape->nents, it, raddr,
					     e->rmr->rkey, r->dir);
	}
	return rdma_rw_ctx_init(&sl->ctx, qp, 1, sl->sgl, r->shape->nents,
				0, raddr, e->rmr->rkey, r->dir);
}

static void io_destroy(struct perf_run *r, struct perf_slot *sl,
		       struct ib_qp *qp)
{
	if (r->o->bvec)
		rdma_rw_ctx_destroy_bvec(&sl->ctx, qp, 1, sl->bvec,
					 r->shape->nents, r->dir);
	else
		rdma_rw_ctx_destroy(&sl->ctx, qp, 1, sl->sgl, r->shape->nents,
				    r->dir);
}

static void io_start(struct perf_run *r, struct perf_slot *sl)
{
	int ret = io_init(r, sl, r->env->lqp);

	if (ret < 0) {
		r->error = ret;
		return;
	}
	ret = rdma_rw_ctx_post(&sl->ctx, r->env->lqp, 1, &sl->cqe, NULL);
	if (ret) {
		io_destroy(r, sl, r->env->lqp);
		r->error = ret;
		return;
	}
	r->posted++;
}

static void account_window(struct perf_run *r)
{
	double t;

	if (++r->win_done < 256)
		return;
	t = now_s();
	if (t - r->win_start > 1e-3) {
		double bps = (double)r->win_done * (double)r->shape->bytes /
			     (t - r->win_start);

		if (bps > r->peak_bps)
			r->peak_bps = bps;
	}
	r->win_start = t;
	r->win_done = 0;
}

static void io_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_slot *sl = container_of(wc->wr_cqe, struct perf_slot, cqe);
	struct perf_run *r = sl->run;

	io_destroy(r, sl, r->env->lqp);
	if (wc->status != IB_WC_SUCCESS) {
		fprintf(stderr, "rdmarw-perf: completion %s\n",
			ib_wc_status_msg(wc->status));
		r->error = -EIO;
		return;
	}
	r->completed++;
	account_window(r);
	if (r->posted < r->target && !r->error)
		io_start(r, sl);
}

/* ---- measurements ----------------------------------------------------- */

static void progress(const struct perf_run *r, double t0, double *last)
{
	double t = now_s();

	if (r->o->quiet || !isatty(2) || t - t0 < 2.0 || t - *last < 0.5)
		return;
	*last = t;
	fprintf(stderr, "\r  %s %llu B: %llu/%llu I/Os, %.0f s ",
		r->dir == DMA_TO_DEVICE ? "WRITE" : "READ",
		(unsigned long long)r->shape->bytes,
		(unsigned long long)r->completed,
		(unsigned long long)r->target, t - t0);
}

static int run_ios(struct perf_run *r, u64 iters, double *secs)
{
	u32 i, n = r->o->ctxs;
	double t0, last = 0;

	r->posted = r->completed = 0;
	r->target = iters;
	r->error = 0;
	r->peak_bps = 0;
	r->win_done = 0;
	t0 = r->win_start = now_s();
	for (i = 0; i < n && r->posted < iters && !r->error; i++)
		io_start(r, &r->slots[i]);
	while (r->completed < r->posted && !r->error) {
		if (ib_process_cq_direct(r->env->lcq, 64) < 0)
			return -EIO;
		progress(r, t0, &last);
	}
	*secs = now_s() - t0;
	if (!r->o->quiet && isatty(2) && *secs >= 2.0)
		fputs("\r\033[K", stderr);
	return r->error;
}

/* How many I/Os fit the time budget: time a short pilot run. */
static u64 pick_iters(struct perf_run *r)
{
	double secs;
	u64 pilot = PERF_MIN_ITERS, n;

	if (r->o->iters)
		return r->o->iters;
	for (;;) {
		if (run_ios(r, pilot, &secs))
			return 0;
		if (secs > 0.02 || pilot >= (1ULL << 30))
			break;
		pilot *= 4;
	}
	n = (u64)((double)pilot * r->o->duration / (secs > 1e-9 ? secs : 1e-9));
	return n < PERF_MIN_ITERS ? PERF_MIN_ITERS : n;
}

/* memcpy over the same entries and remote range, the same number of times. */
static double memcpy_bps(struct perf_run *r, u64 iters)
{
	const struct perf_shape *s = r->shape;
	char *l = r->env->lbuf, *rem = r->env->rbuf;
	double t0, secs;
	u64 n;
	u32 i;

	t0 = now_s();
	for (n = 0; n < iters; n++) {
		u64 roff = 0;

		for (i = 0; i < s->nents; i++) {
			if (r->dir == DMA_TO_DEVICE)
				memcpy(rem + roff, l + s->off[i], s->len[i]);
			else
				memcpy(l + s->off[i], rem + roff, s->len[i]);
			roff += s->len[i];
		}
		__asm__ volatile("" ::: "memory");
	}
	secs = now_s() - t0;
	return secs > 0 ? (double)iters * (double)s->bytes / secs : 0;
}

/*
 * Control path alone: init + wrs + destroy, nothing posted.  It runs on a
 * QP of its own: rdma_rw_ctx_wrs() advances MR keys as if the chain were
 * posted, so MRs whose chains were never posted must not be used for real
 * I/O afterwards.
 */
static double control_ns(struct perf_run *r, u64 iters)
{
	struct perf_slot *sl = &r->slots[0];
	struct ib_qp *qp = r->env->ctl_qp;
	double t0;
	u64 n;

	t0 = now_s();
	for (n = 0; n < iters; n++) {
		if (io_init(r, sl, qp) < 0)
			return NAN;
		rdma_rw_ctx_wrs(&sl->ctx, qp, 1, &sl->cqe, NULL);
		io_destroy(r, sl, qp);
	}
	return (now_s() - t0) * 1e9 / (double)iters;
}

static const char *path_name(const struct rdma_rw_ctx *ctx)
{
	switch (ctx->type) {
	case RDMA_RW_SINGLE_WR:
		return "single";
	case RDMA_RW_MULTI_WR:
		return "multi";
	case RDMA_RW_MR:
		return "mr";
	case RDMA_RW_IOVA:
		return "iova";
	default:
		return "?";
	}
}

static int measure(struct perf_run *r, struct perf_result *res)
{
	u64 iters;
	int ret;

	iters = pick_iters(r);
	if (!iters)
		return r->error ? r->error : -EIO;
	ret = run_ios(r, iters, &res->secs);
	if (ret)
		return ret;
	res->op = r->dir == DMA_TO_DEVICE ? "WRITE" : "READ";
	res->bytes = r->shape->bytes;
	res->iters = iters;
	res->bw_avg = (double)iters * (double)r->shape->bytes / res->secs;
	res->bw_peak = r->peak_bps > res->bw_avg ? r->peak_bps : res->bw_avg;
	res->mpps = (double)iters / res->secs / 1e6;
	res->memcpy_bps = memcpy_bps(r, iters);
	res->ctl_ns = control_ns(r, iters < 100000 ? iters : 100000);
	res->path = path_name(&r->slots[0].ctx);
	return 0;
}

/* ---- output ----------------------------------------------------------- */

static void print_header(const struct perf_opts *o)
{
	if (o->json)
		return;
	printf("# rdmarw-perf: profile %s, %u SGE per I/O, %u in flight%s%s\n",
	       o->profile, o->sge, o->ctxs, o->force_mr ? ", force_mr" : "",
	       o->bvec ? ", bio_vec input" : "");
	printf("# BW in MiB/s (2^20 bytes/s), as perftest; memcpy = the same "
	       "bytes copied by the CPU over the same buffers and SGL shape\n");
	printf("%-6s %10s %10s %12s %12s %9s %12s %7s %10s %-6s\n", "op",
	       "#bytes", "#iters", "BW peak", "BW average", "MsgRate",
	       "memcpy", "ratio", "ctl ns/IO", "path");
	printf("%-6s %10s %10s %12s %12s %9s %12s %7s %10s %-6s\n", "", "", "",
	       "[MiB/s]", "[MiB/s]", "[Mpps]", "[MiB/s]", "", "", "");
}

static void print_result(const struct perf_opts *o, const struct perf_result *x,
			 bool first)
{
	const double mib = 1024.0 * 1024.0;
	double ratio = x->memcpy_bps > 0 ? x->bw_avg / x->memcpy_bps : 0;

	if (o->json) {
		printf("%s{\"op\":\"%s\",\"bytes\":%llu,\"iters\":%llu,"
		       "\"secs\":%.6f,\"bw_peak_mib\":%.2f,\"bw_avg_mib\":%.2f,"
		       "\"mpps\":%.4f,\"memcpy_mib\":%.2f,\"ratio\":%.4f,"
		       "\"ctl_ns\":%.2f,\"path\":\"%s\",\"profile\":\"%s\","
		       "\"sge\":%u,\"ctxs\":%u,\"force_mr\":%s,\"bvec\":%s}",
		       first ? "" : ",\n", x->op, (unsigned long long)x->bytes,
		       (unsigned long long)x->iters, x->secs, x->bw_peak / mib,
		       x->bw_avg / mib, x->mpps, x->memcpy_bps / mib, ratio,
		       x->ctl_ns, x->path, o->profile, o->sge, o->ctxs,
		       o->force_mr ? "true" : "false",
		       o->bvec ? "true" : "false");
		return;
	}
	printf("%-6s %10llu %10llu %12.2f %12.2f %9.4f %12.2f %7.3f %10.1f %-6s\n",
	       x->op, (unsigned long long)x->bytes,
	       (unsigned long long)x->iters, x->bw_peak / mib, x->bw_avg / mib,
	       x->mpps, x->memcpy_bps / mib, ratio, x->ctl_ns, x->path);
	fflush(stdout);
}

/* ---- options ---------------------------------------------------------- */

static u64 parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'k': case 'K': v *= 1024; break;
	case 'm': case 'M': v *= 1024 * 1024; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
	case '\0': break;
	default: return 0;
	}
	return v >= 1 && v < 1e12 ? (u64)v : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmarw-perf [options]\n"
		"  -d, --dir=read|write|both  direction (default both)\n"
		"  -s, --size=N[K|M]          one message size\n"
		"  -a, --sweep[=MIN:MAX]      sizes in powers of two (default 2:8M)\n"
		"  -e, --sge=N                entries per transfer (default 1)\n"
		"  -g, --gap=N                bytes between entries (default 0)\n"
		"  -o, --offset=N             offset of the first entry (default 0)\n"
		"  -c, --ctxs=N               contexts in flight (default 16)\n"
		"  -n, --iters=N              I/Os per size (default: by duration)\n"
		"  -D, --duration=SECS        seconds per size (default 0.5)\n"
		"  -p, --profile=mlx5|rxe|siw software device profile (default rxe)\n"
		"  -f, --force-mr             register memory for every I/O\n"
		"  -b, --bvec                 bio_vec input (rdma_rw_ctx_init_bvec)\n"
		"  -j, --json                 JSON lines instead of the table\n"
		"  -q, --quiet                no progress line\n");
}

static void set_dir(struct perf_opts *o, const char *v)
{
	o->write = !strcmp(v, "write") || !strcmp(v, "both");
	o->read = !strcmp(v, "read") || !strcmp(v, "both");
	if (!o->write && !o->read) {
		usage(stderr);
		exit(2);
	}
}

static void set_sweep(struct perf_opts *o, const char *v)
{
	const char *colon = v ? strchr(v, ':') : NULL;
	char lo[32];

	o->size_min = 2;
	o->size_max = 8ULL << 20;
	if (!v)
		return;
	if (!colon || (size_t)(colon - v) >= sizeof(lo)) {
		usage(stderr);
		exit(2);
	}
	memcpy(lo, v, (size_t)(colon - v));
	lo[colon - v] = '\0';
	o->size_min = parse_size(lo);
	o->size_max = parse_size(colon + 1);
}

static u32 parse_u32(const char *v, u32 min, u32 max)
{
	char *end;
	unsigned long x = strtoul(v, &end, 0);

	if (*end || x < min || x > max) {
		fprintf(stderr, "rdmarw-perf: bad number '%s' (%u..%u)\n", v,
			min, max);
		exit(2);
	}
	return (u32)x;
}

static void parse_opts(int argc, char **argv, struct perf_opts *o)
{
	static const struct option lo[] = {
		{ "dir", 1, NULL, 'd' },      { "size", 1, NULL, 's' },
		{ "sweep", 2, NULL, 'a' },    { "sge", 1, NULL, 'e' },
		{ "gap", 1, NULL, 'g' },      { "offset", 1, NULL, 'o' },
		{ "ctxs", 1, NULL, 'c' },     { "iters", 1, NULL, 'n' },
		{ "duration", 1, NULL, 'D' }, { "profile", 1, NULL, 'p' },
		{ "force-mr", 0, NULL, 'f' }, { "bvec", 0, NULL, 'b' },
		{ "json", 0, NULL, 'j' },     { "quiet", 0, NULL, 'q' },
		{ "help", 0, NULL, 'h' },     { NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct perf_opts){ .write = true, .read = true, .size_min = 65536,
				 .size_max = 65536, .sge = 1, .ctxs = 16,
				 .duration = 0.5, .profile = "rxe" };
	while ((c = getopt_long(argc, argv, "d:s:a::e:g:o:c:n:D:p:fbjqh", lo,
				NULL)) != -1) {
		switch (c) {
		case 'd': set_dir(o, optarg); break;
		case 's': o->size_min = o->size_max = parse_size(optarg); break;
		case 'a': set_sweep(o, optarg); break;
		case 'e': o->sge = parse_u32(optarg, 1, PERF_MAX_SGE); break;
		case 'g': o->gap = parse_u32(optarg, 0, 1U << 20); break;
		case 'o': o->offset = parse_u32(optarg, 0, 1U << 20); break;
		case 'c': o->ctxs = parse_u32(optarg, 1, PERF_MAX_CTXS); break;
		case 'n': o->iters = strtoull(optarg, NULL, 0); break;
		case 'D': o->duration = strtod(optarg, NULL); break;
		case 'p': o->profile = optarg; break;
		case 'f': o->force_mr = true; break;
		case 'b': o->bvec = true; break;
		case 'j': o->json = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!o->size_min || !o->size_max || o->size_min > o->size_max ||
	    o->duration <= 0 || o->duration > 3600) {
		usage(stderr);
		exit(2);
	}
}

/* ---- main ------------------------------------------------------------- */

static int run_size(struct perf_env *e, const struct perf_opts *o,
		    struct perf_slot *slots, u64 bytes, enum dma_data_direction dir,
		    bool *first)
{
	static struct perf_shape shape;
	struct perf_run r = { .env = e, .o = o, .shape = &shape, .dir = dir,
			      .slots = slots };
	struct perf_result res;
	u32 i;
	int ret;

	ret = shape_build(&shape, bytes, bytes < o->sge ? (u32)bytes : o->sge,
			  o->gap, o->offset);
	if (ret)
		return ret;
	for (i = 0; i < o->ctxs; i++) {
		slots[i].run = &r;
		slots[i].cqe.done = io_done;
		slot_fill(&slots[i], &shape, e->lbuf);
	}
	ret = measure(&r, &res);
	if (ret) {
		fprintf(stderr, "rdmarw-perf: %s %llu bytes: %s\n",
			dir == DMA_TO_DEVICE ? "WRITE" : "READ",
			(unsigned long long)bytes, strerror(-ret));
		return ret;
	}
	print_result(o, &res, *first);
	*first = false;
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_opts o;
	struct perf_env env;
	struct perf_slot *slots;
	struct perf_shape probe;
	bool first = true;
	u64 size;
	int ret = 0;

	parse_opts(argc, argv, &o);
	if (shape_build(&probe, o.size_max, o.size_max < o.sge ?
			(u32)o.size_max : o.sge, o.gap, o.offset)) {
		fprintf(stderr, "rdmarw-perf: bad SGL shape\n");
		return 2;
	}
	env_open(&env, &o, shape_span(&probe) + PAGE_SIZE, o.size_max);
	slots = calloc(o.ctxs, sizeof(*slots));
	if (!slots)
		die("calloc", -ENOMEM);
	print_header(&o);
	if (o.json)
		printf("[\n");
	for (size = o.size_min; size <= o.size_max && !ret; size *= 2) {
		if (o.write)
			ret = run_size(&env, &o, slots, size, DMA_TO_DEVICE,
				       &first);
		if (o.read && !ret)
			ret = run_size(&env, &o, slots, size, DMA_FROM_DEVICE,
				       &first);
		if (size > o.size_max / 2)
			break;
	}
	if (o.json)
		printf("\n]\n");
	free(slots);
	env_close(&env);
	return ret ? 1 : 0;
}

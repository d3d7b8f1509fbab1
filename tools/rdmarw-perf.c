// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-perf: perftest for the R/W context API.
 *
 * Each I/O goes through the whole path a ULP uses: rdma_rw_ctx_init (or
 * _init_bvec) -> rdma_rw_ctx_post with a cqe -> the completion through
 * cqe->done -> rdma_rw_ctx_destroy.  Contexts are kept in flight up to
 * --ctxs.  Beside it, in the same run and interleaved with it in rounds,
 * the tool measures memcpy over the same buffers and SGL shape (the
 * physical limit of the software device) and prints the ratio, and the
 * control path alone (init + wrs + destroy, nothing posted).  --ctl prints
 * the control path's cost per path instead: SINGLE per I/O, MULTI per SGE,
 * MR per MR.  --pi runs every I/O through rdma_rw_ctx_signature_init() and
 * rdma_rw_ctx_destroy_signature() on an integrity QP: T10-DIF on the wire,
 * none in memory (a WRITE inserts PI, a READ checks and strips it), with
 * ib_check_mr_status() after each completion as a target does.
 *
 * This file is the local run (both ends in this process, -q QP pairs on
 * one thread, --threads pairs on threads) and the options; a client and a
 * server over rdma_cm are tools/perf/cs.c's, their latency loops
 * tools/perf/lat.c's, and every record goes out through tools/perf/out.c.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "cli.h"
#include "json.h"
#include "opts.h"
#include "perf.h"
#include "perf_ibv.h"
#include "two_hosts.h"

#define PERF_MAX_SGE 1024U
#define PERF_MAX_CTXS 1024U
#define PERF_MIN_ITERS 16ULL
#define PERF_ROUNDS 5U /* I/O and memcpy alternate this many times */
#define PERF_WINDOW 1e-3 /* seconds: the shortest window for BW peak */
#define PERF_CTL_BATCHES 7U /* control path: median of this many batches */
#define PERF_MAX_QPS 64U /* -q, at most */
#define PERF_MAX_THREADS 64U /* --threads: QP pairs on threads, at most */
#define PERF_MT_ROUNDS 3U /* --threads: the four phases alternate this often */
#define PERF_UNTIL_DEADLINE (1ULL << 62) /* I/Os of a round run until -D */

struct perf_env {
	struct soft_fabric *fabric;
	struct ib_device *ldev, *rdev;
	struct ib_pd *lpd, *rpd;
	struct ib_cq *lcq, *rcq;
	struct ib_qp *lqp, *rqp;
	/* -q: the pairs, [0] being lqp and rqp; nqps of each */
	struct ib_qp *lqps[PERF_MAX_QPS], *rqps[PERF_MAX_QPS];
	u32 nqps;
	struct ib_qp *ctl_qp; /* control-path timing only: never posted */
	struct ib_mr *rmr;
	char *lbuf, *rbuf;
	size_t lbuf_len, rbuf_len;
	char *pibuf; /* --pi: the protection list's bytes, for every slot */
	size_t pibuf_len;
	struct perf_ibv *ibv; /* --device: the pair on it */
	struct two_hosts hosts; /* otherwise: the software pair */
	bool shared_devs; /* --threads: fabric and devices are another env's */
};

/* One transfer's shape: entries of the local buffer and the remote range. */
struct perf_shape {
	u32 nents;
	u64 bytes;
	u64 off[PERF_MAX_SGE];
	u32 len[PERF_MAX_SGE];
};

struct perf_run;

/* Small, so that the slots in flight share a few pages and cache lines. */
struct perf_slot {
	struct rdma_rw_ctx ctx;
	struct ib_cqe cqe;
	struct scatterlist *sgl; /* the entries, sized for the largest shape */
	struct bio_vec *bvec;
	/*
	 * --pi: the protection list, one entry of 8 bytes per interval.  As
	 * in the kernel's rw.c, the integrity MR's length is data + PI from
	 * the two lists, and the RDMA moves that much on a PI wire; with
	 * no PI in memory the device does not touch these bytes.
	 */
	struct scatterlist psg;
	struct perf_run *run;
	struct ib_qp *qp; /* -q: the slots take the QPs in turn */
};

struct perf_run {
	struct perf_env *env;
	const struct perf_opts *o;
	struct perf_shape *shape;
	enum dma_data_direction dir;
	struct ib_sig_attrs sig; /* --pi: memory NONE, wire T10-DIF */
	struct perf_slot *slots;
	u32 nslots; /* -t times -q */
	/* the plain path's arguments, at hand in its completion handler */
	u64 raddr;
	u32 rkey, nents;
	u64 posted, completed, target;
	double deadline; /* -D given: no I/O is started after it */
	u32 clock_mask; /* look at the deadline every clock_mask + 1 polls */
	u64 shown_base, shown_total; /* for the progress line */
	int error;
	/* BW peak: the best window of at least PERF_WINDOW seconds */
	u32 win_mask; /* look at the clock every win_mask + 1 completions */
	double win_start;
	u64 win_done;
	double peak_bps;
};

struct perf_result {
	const char *op;
	u64 bytes;
	u64 iters;
	double secs;
	double bw_avg; /* bytes per second */
	double bw_peak; /* bytes per second */
	double mpps;
	double memcpy_bps;
	double memcpy_secs;
	double cpu_secs; /* this thread's CPU time in the I/O rounds */
	double memcpy_cpu_secs; /* and in the memcpy rounds */
	/* the ratio and the cpu ratio of each round alone: their spread */
	double ratio_min, ratio_max;
	double cpu_ratio_min, cpu_ratio_max;
	double ctl_ns;
	const char *path;
};

/* The progress line: the whole run, on a terminal, once it passes 2 s. */
static struct {
	bool on;
	double t0, last;
	unsigned int done, total;
	bool shown;
} progress;

static void die(const char *what, long err)
{
	fprintf(stderr, "rdmarw-perf: %s: %s\n", what, strerror((int)-err));
	exit(1);
}

/*
 * The data buffers, on transparent huge pages where the kernel gives them
 * (madvise mode): the I/O and the memcpy baseline use the same buffers,
 * so both see the same TLB.
 */
static void *map_buffer(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	madvise(p, len, MADV_HUGEPAGE); /* a hint: failure changes nothing */
	memset(p, 0x5a, len);
	return p;
}

/* @n slots with room for @nents entries each, in two allocations. */
static struct perf_slot *slots_alloc(u32 n, u32 nents)
{
	struct perf_slot *slots = calloc(n, sizeof(*slots));
	char *ents = calloc(n, (size_t)nents * (sizeof(struct scatterlist) +
						sizeof(struct bio_vec)));
	u32 i;

	if (!slots || !ents)
		die("calloc", -ENOMEM);
	for (i = 0; i < n; i++) {
		slots[i].sgl = (struct scatterlist *)ents;
		ents += (size_t)nents * sizeof(struct scatterlist);
		slots[i].bvec = (struct bio_vec *)ents;
		ents += (size_t)nents * sizeof(struct bio_vec);
	}
	return slots;
}

static void slots_free(struct perf_slot *slots)
{
	free(slots[0].sgl);
	free(slots);
}

/* ---- progress ----------------------------------------------------------- */

static void progress_clear(void)
{
	if (progress.shown) {
		fputs("\r\033[K", stderr);
		progress.shown = false;
	}
}

static void progress_show(const char *what, u64 bytes, u64 done, u64 total)
{
	double t = perf_now();

	if (!progress.on || t - progress.t0 < 2.0 || t - progress.last < 0.25)
		return;
	progress.last = t;
	progress.shown = true;
	fprintf(stderr, "\r\033[K  [%u/%u] %s %llu B: %llu", progress.done + 1,
		progress.total, what, (unsigned long long)bytes,
		(unsigned long long)done);
	if (total) /* 0: the I/O runs until -D */
		fprintf(stderr, "/%llu", (unsigned long long)total);
	fprintf(stderr, ", %.1f s", t - progress.t0);
}

/* ---- the two hosts ---------------------------------------------------- */

/* An RC QP's attributes (send_cq/recv_cq: two_hosts_qps() or the caller). */
static void qp_attr(struct ib_qp_init_attr *attr, u32 ctxs, u32 max_sge,
		    u32 send_wr, bool integrity)
{
	*attr = (struct ib_qp_init_attr){
		.cap = { .max_send_wr = send_wr,
			 .max_recv_wr = 16,
			 .max_send_sge = max_sge,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = ctxs },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
		.create_flags = integrity ? IB_QP_CREATE_INTEGRITY_EN : 0,
	};
}

static void qp_failed(long err, bool integrity)
{
	if (integrity && err == -EOPNOTSUPP) {
		fprintf(stderr, "rdmarw-perf: --pi needs a profile with "
				"integrity offload (mlx5)\n");
		exit(2);
	}
	die("ib_create_qp", err);
}

static struct ib_qp *make_qp(struct ib_pd *pd, struct ib_cq *cq, u32 ctxs,
			     u32 max_sge, u32 send_wr, bool integrity)
{
	struct ib_qp_init_attr attr;
	struct ib_qp *qp;

	qp_attr(&attr, ctxs, max_sge, send_wr, integrity);
	attr.send_cq = attr.recv_cq = cq;
	qp = ib_create_qp(pd, &attr);
	if (IS_ERR(qp))
		qp_failed(PTR_ERR(qp), integrity);
	return qp;
}

/*
 * MRs one I/O of @span bytes may need (1 when it registers none).  Call
 * with force_mr set as the QP will be created.
 */
static u32 mrs_per_io(struct ib_device *dev, u64 span)
{
	u64 pages = span / PAGE_SIZE + 2;
	unsigned int f;

	if (!rdma_rw_get_force_mr() && !rdma_protocol_iwarp(dev, 1) &&
	    !dev->attrs.max_sgl_rd)
		return 1; /* rdma_rw_mr_factor() would count READ WRs */
	if (pages > UINT32_MAX)
		pages = UINT32_MAX;
	f = rdma_rw_mr_factor(dev, 1, (unsigned int)pages);
	return f ? f : 1;
}

static void env_devices(struct perf_env *e, const struct perf_opts *o)
{
	static const char *const names[2] = { "perf_init%d", "perf_tgt%d" };
	struct soft_profile prof;
	int ret;

	ret = soft_profile_get(o->profile, &prof);
	if (ret)
		die(o->profile, ret);
	prof.iommu = o->iommu;
	prof.threaded = o->threaded;
	ret = two_hosts_devices(&e->hosts, &prof, names, false);
	if (ret)
		die(e->hosts.failed, ret);
	e->fabric = e->hosts.fabric;
	e->ldev = e->hosts.dev[0];
	e->rdev = e->hosts.dev[1];
}

/*
 * Send Queue depth: rdma_rw_init_qp() adds room for one RDMA WR (or one
 * registration) per context; a MULTI context of @nents entries posts
 * ceil(nents / max_sge) WRs, so room for those is asked for here.
 */
static u32 send_depth(struct ib_device *dev, u32 ctxs, u32 nents, u32 max_sge)
{
	u64 wrs = 16 + (u64)ctxs * ((nents + max_sge - 1) / max_sge);
	u64 max = (u64)dev->attrs.max_qp_wr / 2;

	return (u32)(wrs < max ? wrs : max);
}

/*
 * --device: the two QPs on one ibv device, connected through rdma_cm
 * (tools/common/perf_ibv.c); the local buffer is declared in the PD's map
 * once, so no I/O registers anything.
 */
static void env_open_ibv(struct perf_env *e, const struct perf_opts *o,
			 u32 nents)
{
	struct ib_qp_init_attr attr = {
		.cap = { .max_recv_wr = 16,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = o->ctxs },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	struct ib_device *dev;
	int ret;

	e->ibv = calloc(1, sizeof(*e->ibv));
	if (!e->ibv)
		die("calloc", -ENOMEM);
	dev = perf_ibv_device(o->device);
	if (IS_ERR(dev))
		die(o->device, PTR_ERR(dev));
	attr.cap.max_send_sge = (u32)dev->attrs.max_send_sge;
	attr.cap.max_send_wr =
		send_depth(dev, o->ctxs, nents, attr.cap.max_send_sge);
	ret = perf_ibv_open(e->ibv, o->device, o->addr, &attr,
			    (int)(4 * o->ctxs + 64));
	if (ret)
		die(o->device, ret);
	e->ldev = e->rdev = e->ibv->dev;
	e->lpd = e->ibv->pd;
	e->rpd = e->ibv->peer_pd;
	e->lcq = e->ibv->cq;
	e->rcq = e->ibv->peer_cq;
	e->lqp = e->ibv->qp;
	e->rqp = e->ibv->peer_qp;
	e->lqps[0] = e->lqp;
	e->rqps[0] = e->rqp;
	e->nqps = 1;
	e->ctl_qp =
		make_qp(e->lpd, e->lcq, 8, attr.cap.max_send_sge, 16, false);
}

/*
 * -q: the pairs after the first, on the same PDs and CQs, each connected
 * as two_hosts_qps() connects the first.
 */
static void env_more_qps(struct perf_env *e, const struct perf_opts *o,
			 struct ib_qp_init_attr *attr)
{
	struct ib_qp *qp;
	int side, ret;
	u32 i;

	e->lqps[0] = e->lqp;
	e->rqps[0] = e->rqp;
	for (e->nqps = 1; e->nqps < o->qps; e->nqps++) {
		i = e->nqps;
		for (side = 0; side < 2; side++) {
			attr[side].send_cq = attr[side].recv_cq =
				e->hosts.cq[side];
			qp = ib_create_qp(e->hosts.pd[side], &attr[side]);
			if (IS_ERR(qp))
				qp_failed(PTR_ERR(qp), o->pi && !side);
			if (side)
				e->rqps[i] = qp;
			else
				e->lqps[i] = qp;
		}
		ret = soft_qp_connect(e->lqps[i], e->rqps[i]);
		if (ret)
			die("soft_qp_connect", ret);
	}
}

/*
 * The pair, its CQs, buffers and MR.  @base: NULL, or (--threads) an env whose
 * fabric and devices this one's PDs, CQs and QPs go on; nothing else is
 * shared.
 */
static void env_open(struct perf_env *e, const struct perf_opts *o,
		     size_t lbuf_len, size_t rbuf_len, u32 nents,
		     const struct perf_env *base)
{
	struct ib_qp_init_attr attr[2];
	u32 mrs, max_sge, depth;
	int ret;

	if (o->device) {
		env_open_ibv(e, o, nents);
		goto buffers;
	}
	if (base) {
		e->hosts.fabric = e->fabric = base->fabric;
		e->hosts.dev[0] = e->ldev = base->ldev;
		e->hosts.dev[1] = e->rdev = base->rdev;
		e->shared_devs = true;
	} else {
		env_devices(e, o);
	}
	rdma_rw_set_force_mr(o->force_mr);
	mrs = mrs_per_io(e->ldev, lbuf_len);
	ret = two_hosts_side(&e->hosts, 0,
			     (int)(4 * o->ctxs * o->qps * mrs + 64),
			     IB_POLL_DIRECT);
	if (!ret)
		ret = two_hosts_side(&e->hosts, 1, (int)(16 * o->qps + 48),
				     IB_POLL_DIRECT);
	if (ret)
		die(e->hosts.failed, ret);
	e->lpd = e->hosts.pd[0];
	e->rpd = e->hosts.pd[1];
	e->lcq = e->hosts.cq[0];
	e->rcq = e->hosts.cq[1];
	max_sge = (u32)e->ldev->attrs.max_send_sge;
	depth = send_depth(e->ldev, o->ctxs, nents, max_sge);
	qp_attr(&attr[0], o->ctxs * mrs, max_sge, depth, o->pi != 0);
	qp_attr(&attr[1], 0, 1, 16, false);
	ret = two_hosts_qps(&e->hosts, attr, true);
	if (ret)
		qp_failed(ret, o->pi != 0 && !e->hosts.qp[0]);
	e->lqp = e->hosts.qp[0];
	e->rqp = e->hosts.qp[1];
	env_more_qps(e, o, attr);
	/* --ctl registers up to 8 MRs per context, forced or not */
	rdma_rw_set_force_mr(true);
	e->ctl_qp = make_qp(e->lpd, e->lcq, mrs > 8 ? mrs : 8, max_sge, 16,
			    o->pi != 0);
	rdma_rw_set_force_mr(o->force_mr);
buffers:
	e->lbuf_len = lbuf_len;
	e->rbuf_len = rbuf_len;
	e->lbuf = map_buffer(lbuf_len);
	e->rbuf = map_buffer(rbuf_len);
	if (o->pi) {
		e->pibuf_len = o->size_max / o->pi * 8;
		e->pibuf = map_buffer(e->pibuf_len);
	}
	e->rmr = ib_reg_user_mr(e->rpd, (u64)(uintptr_t)e->rbuf, rbuf_len,
				(u64)(uintptr_t)e->rbuf,
				IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
					IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(e->rmr))
		die("ib_reg_user_mr", PTR_ERR(e->rmr));
	if (e->ibv) {
		ret = perf_ibv_declare(e->ibv, e->lbuf, lbuf_len);
		if (ret)
			die("rdmarw_ibv_declare", ret);
	}
}

static void env_close(struct perf_env *e)
{
	u32 i;

	ib_dereg_mr(e->rmr);
	ib_destroy_qp(e->ctl_qp);
	for (i = 1; i < e->nqps; i++) {
		ib_destroy_qp(e->lqps[i]);
		ib_destroy_qp(e->rqps[i]);
	}
	if (e->ibv) {
		perf_ibv_close(e->ibv);
		free(e->ibv);
		goto buffers;
	}
	if (e->shared_devs)
		two_hosts_close_objects(&e->hosts);
	else
		two_hosts_close(&e->hosts);
buffers:
	munmap(e->lbuf, e->lbuf_len);
	munmap(e->rbuf, e->rbuf_len);
	if (e->pibuf)
		munmap(e->pibuf, e->pibuf_len);
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
	if (each > UINT32_MAX || bytes - each * (nents - 1) > UINT32_MAX)
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

/* Entries for @bytes: --entry bytes each, or --sge of them. */
static u32 shape_nents(const struct perf_opts *o, u64 bytes)
{
	u64 n = o->sge;

	if (o->entry)
		n = (bytes + o->entry - 1) / o->entry;
	if (n > bytes)
		n = bytes;
	return n > PERF_MAX_SGE ? PERF_MAX_SGE + 1 : (u32)n;
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

	if (r->o->pi)
		return rdma_rw_ctx_signature_init(
			&sl->ctx, qp, 1, sl->sgl, r->shape->nents, &sl->psg, 1,
			&r->sig, raddr, e->rmr->rkey, r->dir);
	if (r->o->bvec) {
		struct bvec_iter it = { .bi_size =
						(unsigned int)r->shape->bytes };

		return rdma_rw_ctx_init_bvec(&sl->ctx, qp, 1, sl->bvec,
					     r->shape->nents, it, raddr,
					     e->rmr->rkey, r->dir);
	}
	return rdma_rw_ctx_init(&sl->ctx, qp, 1, sl->sgl, r->shape->nents, 0,
				raddr, e->rmr->rkey, r->dir);
}

static void io_destroy(struct perf_run *r, struct perf_slot *sl,
		       struct ib_qp *qp)
{
	if (r->o->pi)
		rdma_rw_ctx_destroy_signature(&sl->ctx, qp, 1, sl->sgl,
					      r->shape->nents, &sl->psg, 1,
					      r->dir);
	else if (r->o->bvec)
		rdma_rw_ctx_destroy_bvec(&sl->ctx, qp, 1, sl->bvec,
					 r->shape->nents, r->dir);
	else
		rdma_rw_ctx_destroy(&sl->ctx, qp, 1, sl->sgl, r->shape->nents,
				    r->dir);
}

static void io_start(struct perf_run *r, struct perf_slot *sl)
{
	int ret = io_init(r, sl, sl->qp);

	if (ret < 0) {
		r->error = ret;
		return;
	}
	ret = rdma_rw_ctx_post(&sl->ctx, sl->qp, 1, &sl->cqe, NULL);
	if (ret) {
		io_destroy(r, sl, sl->qp);
		r->error = ret;
		return;
	}
	r->posted++;
}

/*
 * The peak is the best rate over a window of at least PERF_WINDOW seconds;
 * the clock is read every win_mask + 1 completions so that small I/Os do
 * not pay for it on each one.
 */
static void account_window(struct perf_run *r)
{
	double t, dt, bps;

	if (++r->win_done & r->win_mask)
		return;
	t = perf_now();
	dt = t - r->win_start;
	if (dt < PERF_WINDOW)
		return;
	bps = (double)r->win_done * (double)r->shape->bytes / dt;
	if (bps > r->peak_bps)
		r->peak_bps = bps;
	r->win_start = t;
	r->win_done = 0;
}

/*
 * --pi: what a target does after a signature I/O completes, before it
 * destroys the context: ask the MR whether the PI checked.
 */
static int pi_status(struct perf_slot *sl)
{
	struct ib_mr_status st;
	int ret;

	ret = ib_check_mr_status(sl->ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, &st);
	if (ret)
		return ret;
	if (!(st.fail_status & IB_MR_CHECK_SIG_STATUS))
		return 0;
	fprintf(stderr, "rdmarw-perf: PI error %d at byte %llu\n",
		(int)st.sig_err.err_type,
		(unsigned long long)st.sig_err.sig_err_offset);
	return -EILSEQ;
}

static void io_failed(struct perf_run *r, const struct ib_wc *wc)
{
	fprintf(stderr, "rdmarw-perf: completion %s\n",
		cli_wc_status_name(wc->status));
	r->error = -EIO;
}

/*
 * The completion handler of plain I/O (no --pi, no --bvec), written as a
 * ULP's would be: the next I/O's arguments are in the run, so the handler
 * is destroy, init, post and the tool's counting, with no mode to test.
 * The same calls and checks as io_done(), in one function.
 */
static void io_done_sg(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_slot *sl = container_of(wc->wr_cqe, struct perf_slot, cqe);
	struct perf_run *r = sl->run;
	int ret;

	(void)cq;
	rdma_rw_ctx_destroy(&sl->ctx, sl->qp, 1, sl->sgl, r->nents, r->dir);
	if (wc->status != IB_WC_SUCCESS) {
		io_failed(r, wc);
		return;
	}
	r->completed++;
	account_window(r);
	if (r->posted == r->target || r->error)
		return;
	ret = rdma_rw_ctx_init(&sl->ctx, sl->qp, 1, sl->sgl, r->nents, 0,
			       r->raddr, r->rkey, r->dir);
	if (ret < 0) {
		r->error = ret;
		return;
	}
	ret = rdma_rw_ctx_post(&sl->ctx, sl->qp, 1, &sl->cqe, NULL);
	if (ret) {
		rdma_rw_ctx_destroy(&sl->ctx, sl->qp, 1, sl->sgl, r->nents,
				    r->dir);
		r->error = ret;
		return;
	}
	r->posted++;
}

static void io_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_slot *sl = container_of(wc->wr_cqe, struct perf_slot, cqe);
	struct perf_run *r = sl->run;
	int pi = 0;

	if (r->o->pi && wc->status == IB_WC_SUCCESS)
		pi = pi_status(sl);
	io_destroy(r, sl, sl->qp);
	if (pi) {
		r->error = pi;
		return;
	}
	if (wc->status != IB_WC_SUCCESS) {
		io_failed(r, wc);
		return;
	}
	r->completed++;
	account_window(r);
	if (r->posted < r->target && !r->error)
		io_start(r, sl);
}

/* ---- measurements ----------------------------------------------------- */

static const char *dir_name(enum dma_data_direction dir)
{
	return dir == DMA_TO_DEVICE ? "WRITE" : "READ";
}

static int run_ios(struct perf_run *r, u64 iters, double *secs)
{
	u32 i, n = r->nslots, spins = 0;
	double t0;

	r->posted = r->completed = 0;
	r->target = iters;
	r->error = 0;
	r->win_done = 0;
	t0 = r->win_start = perf_now();
	for (i = 0; i < n && r->posted < iters && !r->error; i++)
		io_start(r, &r->slots[i]);
	while (r->completed < r->posted && !r->error) {
		if (ib_process_cq_direct(r->env->lcq, 64) < 0)
			return -EIO;
		if (!(++spins & r->clock_mask) && perf_now() > r->deadline)
			r->target = r->posted; /* -D: the rest is not started */
		if (!(spins & 63))
			progress_show(dir_name(r->dir), r->shape->bytes,
				      r->shown_base + r->completed,
				      r->shown_total ? r->shown_total :
				      iters == PERF_UNTIL_DEADLINE ? 0 :
								     iters);
	}
	*secs = perf_now() - t0;
	return r->error;
}

/*
 * memcpy over the same entries and remote range, @iters times: seconds.
 * For small sizes this is the copy rate of a tight loop (many copies in
 * flight in the CPU), the upper bound a software device could reach if
 * nothing but the bytes had to move.
 */
static double memcpy_secs(struct perf_run *r, u64 iters)
{
	const struct perf_shape *s = r->shape;
	char *l = r->env->lbuf, *rem = r->env->rbuf;
	double t0;
	u64 n;
	u32 i;

	t0 = perf_now();
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
	return perf_now() - t0;
}

/*
 * Control path alone: init + wrs + destroy, nothing posted.  It runs on a
 * QP of its own: rdma_rw_ctx_wrs() advances MR keys as if the chain were
 * posted, so MRs whose chains were never posted must not be used for real
 * I/O afterwards.  Returns ns per I/O, NAN on error.
 */
static double control_ns(struct perf_run *r, u64 iters)
{
	struct perf_slot *sl = &r->slots[0];
	struct ib_qp *qp = r->env->ctl_qp;
	double t0;
	u64 n;

	t0 = perf_now();
	for (n = 0; n < iters; n++) {
		if (io_init(r, sl, qp) < 0)
			return NAN;
		rdma_rw_ctx_wrs(&sl->ctx, qp, 1, &sl->cqe, NULL);
		io_destroy(r, sl, qp);
	}
	return (perf_now() - t0) * 1e9 / (double)iters;
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
	case RDMA_RW_SIG_MR:
		return "sig";
	default:
		return "?";
	}
}

/*
 * I/O and memcpy alternate in PERF_ROUNDS rounds over the same bytes, so
 * that a noisy neighbour slows both alike; each is timed alone.
 */
/*
 * How often the BW peak looks at the clock: about once per MiB moved, at
 * most every 256 I/Os (a power of two, minus one).  Reading the clock
 * costs about what a small I/O does, and the memcpy baseline does not pay
 * it, so it must not be paid per I/O; a window is still at least
 * PERF_WINDOW long.
 */
static u32 window_mask(u64 bytes)
{
	u32 n = 256;

	while (n > 1 && (u64)n * bytes > (1U << 20))
		n >>= 1;
	return n - 1;
}

/* Widen [*lo, *hi] to take in @a / @b (a round's ratio), if @b > 0. */
static void spread(double *lo, double *hi, double a, double b)
{
	double v = a / b;

	if (b <= 0 || !isfinite(v))
		return;
	if (isnan(*lo) || v < *lo)
		*lo = v;
	if (isnan(*hi) || v > *hi)
		*hi = v;
}

/*
 * Without -n, each round runs I/O until its share of -D (what is left of
 * it, over the rounds left): the I/O of one size takes -D seconds, however
 * fast or slow the rounds go.  With -n, the rounds share the -n I/Os, and
 * -D, when given, is a limit on their time.  An iteration count fixed from
 * a short pilot run (before 0.1.0) gave -D 1 anywhere from 0.64 to 1.0 s:
 * the pilot's 20 ms ran cold and slower than the rounds.
 */
static int measure(struct perf_run *r, struct perf_result *res)
{
	const struct perf_opts *o = r->o;
	u64 iters = o->iters ? o->iters : PERF_UNTIL_DEADLINE, done = 0, each;
	double secs, cpu, mcpy, mcpu;
	unsigned int k;
	int ret;

	r->peak_bps = 0;
	r->win_mask = window_mask(r->shape->bytes);
	/* large I/Os: the deadline is looked at after every poll */
	r->clock_mask = r->shape->bytes >= 65536 ? 0 : 63;
	res->secs = res->memcpy_secs = 0;
	r->shown_total = o->iters;
	res->cpu_secs = res->memcpy_cpu_secs = 0;
	res->ratio_min = res->ratio_max = NAN;
	res->cpu_ratio_min = res->cpu_ratio_max = NAN;
	for (k = 0; k < PERF_ROUNDS && done < iters; k++) {
		each = o->iters ? (iters - done) / (PERF_ROUNDS - k) :
				  PERF_UNTIL_DEADLINE;
		if (!each)
			each = iters - done;
		r->shown_base = done;
		if (!o->iters)
			r->deadline = perf_now() + (o->duration - res->secs) /
							   (PERF_ROUNDS - k);
		else if (o->duration_set) /* -D: a limit on the -n I/Os */
			r->deadline = perf_now() + o->duration - res->secs;
		else
			r->deadline = INFINITY;
		cpu = perf_cpu();
		ret = run_ios(r, each, &secs);
		if (ret)
			return ret;
		if (r->completed < each) { /* stopped at the deadline */
			each = r->completed;
			if (o->iters)
				iters = done + each;
		}
		cpu = perf_cpu() - cpu;
		res->cpu_secs += cpu;
		res->secs += secs;
		mcpu = perf_cpu();
		mcpy = memcpy_secs(r, each);
		mcpu = perf_cpu() - mcpu;
		res->memcpy_secs += mcpy;
		res->memcpy_cpu_secs += mcpu;
		spread(&res->ratio_min, &res->ratio_max, mcpy, secs);
		spread(&res->cpu_ratio_min, &res->cpu_ratio_max, mcpu, cpu);
		done += each;
	}
	iters = done;
	if (!iters)
		return -ETIME;
	res->op = dir_name(r->dir);
	res->bytes = r->shape->bytes;
	res->iters = iters;
	res->bw_avg = (double)iters * (double)r->shape->bytes / res->secs;
	res->bw_peak = r->peak_bps > res->bw_avg ? r->peak_bps : res->bw_avg;
	res->mpps = (double)iters / res->secs / 1e6;
	res->memcpy_bps = res->memcpy_secs > 0 ?
				  (double)iters * (double)r->shape->bytes /
					  res->memcpy_secs :
				  0;
	res->ctl_ns = control_ns(r, iters < 100000 ? iters : 100000);
	res->path = path_name(&r->slots[0].ctx);
	return 0;
}

/* ---- output ----------------------------------------------------------- */

static void print_header(const struct perf_opts *o)
{
	if (!perf_out_table())
		return;
	if (o->device)
		printf("# rdmarw-perf: device %s (ibv, at %s), ", o->device,
		       o->addr);
	else
		printf("# rdmarw-perf: profile %s%s%s, ", o->profile,
		       o->iommu ? "+iommu" : "",
		       o->threaded ? "+threaded" : "");
	if (o->entry)
		printf("%u-byte entries", o->entry);
	else
		printf("%u SGE per I/O", o->sge);
	printf(", gap %u, offset %u, %u in flight", o->gap, o->offset, o->ctxs);
	if (o->qps > 1)
		printf(" on each of %u QPs", o->qps);
	printf("%s%s", o->force_mr ? ", force_mr" : "",
	       o->bvec ? ", bio_vec input" : "");
	if (o->pi)
		printf(", PI: T10-DIF every %u B on the wire (WRITE inserts, "
		       "READ checks and strips)",
		       o->pi);
	printf("\n");
	printf("# BW in %s, as perftest; BW peak = the best "
	       "window of at least %.0f ms (every completion counted), BW "
	       "average = bytes / the whole run\n",
	       o->gbits ? "Gb/s (10^9 bits/s, --report_gbits)" :
			  "MiB/s (2^20 bytes/s)",
	       PERF_WINDOW * 1e3);
	printf("# memcpy = the same "
	       "bytes copied by the CPU over the same buffers and SGL shape,\n"
	       "# interleaved with the I/O in %u rounds; ratio = BW average / "
	       "memcpy (1.0 = the CPU's copy rate,\n# the software "
	       "device's limit); ctl = init + wrs + destroy alone\n",
	       PERF_ROUNDS);
	printf("# CPU ns/IO = this thread's CPU time per I/O (preemption by "
	       "other processes left out); cpu ratio = the ratio in CPU time\n");
	printf("%-6s %10s %10s %12s %12s %9s %12s %7s %9s %7s %9s %-6s\n", "op",
	       "#bytes", "#iters", "BW peak", "BW average", "MsgRate", "memcpy",
	       "ratio", "CPU ns/IO", "cpu", "ctl ns/IO", "path");
	printf("%-6s %10s %10s %12s %12s %9s %12s %7s %9s %7s %9s %-6s\n", "",
	       "", "", o->gbits ? "[Gb/s]" : "[MiB/s]",
	       o->gbits ? "[Gb/s]" : "[MiB/s]", "[Mpps]",
	       o->gbits ? "[Gb/s]" : "[MiB/s]", "", "", "ratio", "", "");
}

static void print_result(const struct perf_opts *o, const struct perf_result *x,
			 u32 nents)
{
	const double mib = 1024.0 * 1024.0, unit = o->gbits ? 1e9 / 8 : mib;
	double ratio = x->memcpy_bps > 0 ? x->bw_avg / x->memcpy_bps : 0;
	double cpu_ns = x->cpu_secs * 1e9 / (double)x->iters;
	double cpu_ratio =
		x->cpu_secs > 0 ? x->memcpy_cpu_secs / x->cpu_secs : 0;
	struct perf_rec rec;

	progress_clear();
	perf_rec_init(&rec, "io");
	rec_str(&rec, "op", x->op);
	rec_u64(&rec, "bytes", x->bytes);
	rec_u64(&rec, "nents", nents);
	rec_u64(&rec, "iters", x->iters);
	rec_fixed(&rec, "secs", x->secs, 6);
	rec_fixed(&rec, "bw_peak_mib", x->bw_peak / mib, 2);
	rec_fixed(&rec, "bw_avg_mib", x->bw_avg / mib, 2);
	rec_fixed(&rec, "mpps", x->mpps, 4);
	rec_fixed(&rec, "ns_per_io", x->secs * 1e9 / (double)x->iters, 2);
	rec_fixed(&rec, "memcpy_mib", x->memcpy_bps / mib, 2);
	rec_fixed(&rec, "memcpy_secs", x->memcpy_secs, 6);
	rec_fixed(&rec, "ratio", ratio, 4);
	rec_str(&rec, "path", x->path);
	rec_fixed(&rec, "cpu_secs", x->cpu_secs, 6);
	rec_fixed(&rec, "cpu_ns_per_io", cpu_ns, 2);
	rec_fixed(&rec, "cpu_mpps", cpu_ns > 0 ? 1e3 / cpu_ns : 0, 4);
	rec_fixed(&rec, "memcpy_cpu_secs", x->memcpy_cpu_secs, 6);
	rec_fixed(&rec, "cpu_ratio", cpu_ratio, 4);
	rec_fixed(&rec, "ratio_min", x->ratio_min, 4);
	rec_fixed(&rec, "ratio_max", x->ratio_max, 4);
	rec_fixed(&rec, "cpu_ratio_min", x->cpu_ratio_min, 4);
	rec_fixed(&rec, "cpu_ratio_max", x->cpu_ratio_max, 4);
	rec_double(&rec, "ctl_ns", x->ctl_ns);
	perf_rec_emit(&rec, o, "local", NULL);
	if (!perf_out_table())
		return;
	printf("%-6s %10llu %10llu %12.2f %12.2f %9.4f %12.2f %7.3f %9.1f %7.3f "
	       "%9.1f %-6s\n",
	       x->op, (unsigned long long)x->bytes,
	       (unsigned long long)x->iters, x->bw_peak / unit,
	       x->bw_avg / unit, x->mpps, x->memcpy_bps / unit, ratio, cpu_ns,
	       cpu_ratio, x->ctl_ns, x->path);
	fflush(stdout);
}

/* ---- options ---------------------------------------------------------- */

#define PERF_MAX_SIZE (1ULL << 30) /* the largest buffer mapped */
#define PERF_MAX_IN_FLIGHT 4096U /* -t times -q, at most */

/*
 * A size of 1 B to 1 GiB into @v: NULL, or why not; @part names the part
 * of the option's value @s is (NULL: the whole value).
 */
static const char *parse_size(const char *part, const char *s, u64 *v)
{
	static char why[128];
	const char *bad = cli_parse_u64(s, 1, ULLONG_MAX, v);

	if (!bad && *v > PERF_MAX_SIZE)
		bad = "larger than 1G, the largest buffer rdmarw-perf maps";
	if (!bad || !part)
		return bad;
	snprintf(why, sizeof(why), "%s '%s': %s", part, s, bad);
	return why;
}

static const char *set_size(void *opts, const char *v)
{
	struct perf_opts *o = opts;
	const char *why = parse_size(NULL, v, &o->size_min);

	o->size_max = o->size_min;
	return why;
}

static const char *set_entry(void *opts, const char *v)
{
	const char *why;
	u64 x;

	why = parse_size(NULL, v, &x);
	((struct perf_opts *)opts)->entry = (u32)x;
	return why;
}

/* -a/--all[=MIN:MAX], perftest's --all: sizes in powers of two. */
static const char *set_sweep(void *opts, const char *v)
{
	const char *colon = v ? strchr(v, ':') : NULL, *why;
	struct perf_opts *o = opts;
	char lo[32];

	o->size_min = 2;
	o->size_max = 8ULL << 20;
	if (!v)
		return NULL;
	if (!colon || (size_t)(colon - v) >= sizeof(lo))
		return "give MIN:MAX, as 2:64K";
	memcpy(lo, v, (size_t)(colon - v));
	lo[colon - v] = '\0';
	why = parse_size("MIN", lo, &o->size_min);
	if (!why)
		why = parse_size("MAX", colon + 1, &o->size_max);
	if (!why && o->size_min > o->size_max)
		why = "MIN is above MAX";
	return why;
}

/* --dir: read, write, send or both (read and write), or a list of them. */
static const char *set_dir(void *opts, const char *v)
{
	struct perf_opts *o = opts;
	const char *p = v;
	size_t n;

	o->write = o->read = o->send = false;
	o->dir_set = true;
	do {
		n = strcspn(p, ",");
		if (n == 5 && !strncmp(p, "write", 5)) {
			o->write = true;
		} else if (n == 4 && !strncmp(p, "read", 4)) {
			o->read = true;
		} else if (n == 4 && !strncmp(p, "send", 4)) {
			o->send = true;
		} else if (n == 4 && !strncmp(p, "both", 4)) {
			o->write = o->read = true;
		} else {
			return "the direction is read, write, send or both "
			       "(read and write), or a list: write,send "
			       "(a device is -d/--ib-dev)";
		}
		p += n;
	} while (*p++ == ',');
	return NULL;
}

static const char *set_profile(void *opts, const char *v)
{
	struct perf_opts *o = opts;
	struct soft_profile p;

	o->profile = v;
	o->profile_set = true;
	if (soft_profile_get(v, &p))
		return "not a software profile (mlx5, rxe, siw or siw-tcp; "
		       "an ibv device is -d/--ib-dev)";
	return NULL;
}

/* --pi[=N]: signature I/O, a T10-DIF interval of 512 or 4096 bytes. */
static const char *set_pi(void *opts, const char *v)
{
	const char *why = NULL;
	u64 x = 512;

	if (v)
		why = cli_parse_u64(v, 512, 4096, &x);
	if (!why && x != 512 && x != 4096)
		why = "the interval is 512 or 4096";
	((struct perf_opts *)opts)->pi = (u32)x;
	return why;
}

/* -c: perftest's connection type; the R/W API runs on RC QPs. */
static const char *set_conn(void *opts, const char *v)
{
	(void)opts;
	if (strcasecmp(v, "RC"))
		return "the R/W API runs on RC QPs only (perftest's UC, UD, "
		       "XRC, DC, SRD and RawEth have no RDMA READ)";
	return NULL;
}

/* -I: perftest's inline size; rdmarw posts no inline data. */
static const char *set_inline(void *opts, const char *v)
{
	u64 x;
	const char *why = cli_parse_u64(v, 0, 1U << 20, &x);

	(void)opts;
	if (!why && x)
		why = "rdmarw has no inline data (max_inline_data is 0): "
		      "only 0";
	return why;
}

/* -i: perftest's device port; rdmarw's QPs are on port 1. */
static const char *set_ib_port(void *opts, const char *v)
{
	u64 x;
	const char *why = cli_parse_u64(v, 1, 255, &x);

	((struct perf_opts *)opts)->ib_port = 1;
	if (!why && x != 1)
		why = "rdmarw-perf's QPs are on port 1";
	return why;
}

#define AT(f) CLI_FIELD(struct perf_opts, f)

/*
 * The options, each once, in --help's order (tools/common/opts.h).
 * Perftest's letters mean what they mean in perftest (every letter of the
 * alphabet but G and Y is one of perftest's): rdmarw-perf's own options
 * have long names only.
 */
static const struct cli_opt perf_table[] = {
	{ NULL, 0, CLI_HEAD, NULL, "perftest's options, as ib_write_bw's:" },
	{ "ib-dev", 'd', CLI_STR, "NAME",
	  "an ibv device (rxe0, siw0, mlx5_0...): without\n"
	  "HOST, listen on it; with HOST, connect from it;\n"
	  "with --addr, both ends on it in this process",
	  AT(device), .alias = "device" },
	{ "port", 'p', CLI_NUM, "N",
	  "the server's rdma_cm port (default 18515)", AT(port),
	  CLI_RANGE(1, 65535) },
	{ "ib-port", 'i', CLI_CALL, "N", "the device's port: 1",
	  .call = set_ib_port },
	{ "size", 's', CLI_CALL, "N", "one message size (default 64K)",
	  .call = set_size },
	{ "sweep", 'a', CLI_CALL, "MIN:MAX",
	  "sizes in powers of two (default 2:8M)", .arg_optional = true,
	  .alias = "all", .call = set_sweep },
	{ "iters", 'n', CLI_NUM, "N", "I/Os per size (default: by duration)",
	  AT(iters), CLI_RANGE(1, 1ULL << 40) },
	{ "duration", 'D', CLI_SECONDS, "SECS",
	  "seconds of I/O per size (default 0.5); with -n,\n"
	  "a limit",
	  AT(duration), CLI_RANGE(0, 3600) },
	{ "ctxs", 't', CLI_NUM, "N",
	  "tx depth: R/W contexts (or SENDs) in flight per QP\n"
	  "(default 16)",
	  AT(ctxs), CLI_RANGE(1, PERF_MAX_CTXS), .alias = "tx-depth" },
	{ "qp", 'q', CLI_NUM, "N",
	  "QPs, driven by one thread (default 1); the\n"
	  "software device in this process",
	  AT(qps), CLI_RANGE(1, PERF_MAX_QPS) },
	{ "connection", 'c', CLI_CALL, "RC", "the connection type: RC",
	  .call = set_conn },
	{ "rx-depth", 'r', CLI_NUM, "N",
	  "--perftest --dir send: perftest's receive depth\n"
	  "(its -r: default 512, at most -n)",
	  AT(rx_depth), CLI_RANGE(2, 16384) },
	{ "bidirectional", 'b', CLI_FLAG, NULL,
	  "both ends run the test at once (client/server)", AT(bidir) },
	{ "inline_size", 'I', CLI_CALL, "N", "inline bytes: 0",
	  .call = set_inline },
	{ "CPU-freq", 'F', CLI_FLAG, NULL,
	  "accepted (rdmarw-perf reads no CPU frequency)", AT(cpu_freq) },
	{ "rdma_cm", 'R', CLI_FLAG, NULL,
	  "accepted (connections always use rdma_cm)", AT(rdma_cm) },
	{ "report_gbits", 0, CLI_FLAG, NULL, "BW in Gb/s instead of MiB/s",
	  AT(gbits) },
	{ "out_json", 0, CLI_FLAG, NULL,
	  "the JSON records into perftest_out.json too", AT(out_json) },
	{ "out_json_file", 0, CLI_STR, "FILE", "the JSON records into FILE too",
	  AT(json_file) },
	{ NULL, 0, CLI_HEAD, NULL, "\nrdmarw-perf's own:" },
	{ "dir", 0, CLI_CALL, "OPS",
	  "read, write, send or both (read and write, the\n"
	  "default), or a list: write,read,send",
	  .call = set_dir },
	{ "lat", 0, CLI_FLAG, NULL,
	  "latency: ping-pong round trips (client/server),\n"
	  "as ib_write_lat, ib_read_lat and ib_send_lat",
	  AT(lat) },
	{ "perftest", 0, CLI_FLAG, NULL,
	  "speak perftest's -R exchange: the other end is\n"
	  "ib_write_bw -R (--dir write, the default),\n"
	  "ib_read_bw -R (--dir read) or ib_send_bw -R\n"
	  "(--dir send), with --lat their _lat siblings;\n"
	  "client or server",
	  AT(perftest) },
	{ "server", 0, CLI_FLAG, NULL,
	  "listen on every ibv device (-d: on that one)", AT(server) },
	{ "addr", 0, CLI_STR, "IP",
	  "with -d: both ends on it in this process, the\n"
	  "listener at this rdma_cm address",
	  AT(addr) },
	{ "profile", 0, CLI_CALL, "NAME",
	  "software device profile: mlx5, rxe (default), siw,\n"
	  "or siw-tcp (iWARP over TCP: a server, or with HOST\n"
	  "a client, in its own process)",
	  .call = set_profile },
	{ "sge", 0, CLI_NUM, "N", "entries per transfer (default 1)", AT(sge),
	  CLI_RANGE(1, PERF_MAX_SGE) },
	{ "entry", 0, CLI_CALL, "N", "entries of N bytes (entries = size/N)",
	  .call = set_entry },
	{ "gap", 0, CLI_NUM, "N", "bytes between entries (default 0)", AT(gap),
	  CLI_RANGE(0, 1U << 20) },
	{ "offset", 0, CLI_NUM, "N", "offset of the first entry (default 0)",
	  AT(offset), CLI_RANGE(0, 1U << 20) },
	{ "iommu", 0, CLI_FLAG, NULL, "the profile with its emulated IOMMU",
	  AT(iommu) },
	{ "threaded", 0, CLI_FLAG, NULL, "devices run WRs on progress threads",
	  AT(threaded) },
	{ "force-mr", 0, CLI_FLAG, NULL, "register memory for every I/O",
	  AT(force_mr) },
	{ "bvec", 0, CLI_FLAG, NULL, "bio_vec input (rdma_rw_ctx_init_bvec)",
	  AT(bvec) },
	{ "pi", 0, CLI_CALL, "N",
	  "signature I/O: T10-DIF on the wire every N bytes\n"
	  "(512, the default, or 4096), none in memory;\n"
	  "needs --profile mlx5; sizes are multiples of N",
	  .arg_optional = true, .call = set_pi },
	{ "ctl", 0, CLI_FLAG, NULL,
	  "control path per path: SINGLE, MULTI per SGE,\n"
	  "MR per MR (nothing posted)",
	  AT(ctl) },
	{ "threads", 0, CLI_NUM, "N",
	  "N pairs on N pinned threads (1..64), beside\n"
	  "thread 0 alone: the scaling, fairness and memcpy\n"
	  "on N threads; software device, I/O table only",
	  AT(threads), CLI_RANGE(1, PERF_MAX_THREADS) },
	{ "json", 0, CLI_FLAG, NULL, "JSON array instead of the table",
	  AT(json) },
	{ "csv", 0, CLI_FLAG, NULL, "CSV instead of the table", AT(csv) },
	{ "quiet", 0, CLI_FLAG, NULL, "no progress line", AT(quiet) },
};

static const struct cli_tool perf_cli = {
	.name = PERF_TOOL,
	.synopsis = "[options] [HOST]",
	.about = "RDMA READ/WRITE through the R/W API, next to memcpy and the "
		 "control path;\nSEND, bandwidth and latency between a client "
		 "and a server, as perftest.",
	.epilog =
		"Without HOST and -d: two software devices of one fabric in "
		"this process,\nwith memcpy beside (--lat, --dir send and -b: "
		"a client and a server, each\non its own software device and "
		"thread: the software device's connection\nmanager does not "
		"reach other processes).  -d NAME: listen on that ibv\n"
		"device (the server); -d NAME HOST, or HOST: connect to the "
		"server (the\nclient, which decides the tests); --profile P "
		"HOST: the server on a second\nsoftware device at HOST, in "
		"this process; --profile siw-tcp: the server,\nand "
		"--profile siw-tcp HOST the client, over TCP in two "
		"processes.\n"
		"An MR maps at most 256 pages (fewer on some profiles) and one\n"
		"per entry group: with --force-mr, large messages need "
		"--entry=4K.\n"
		"The letters are perftest's: the old -d direction, -p profile, "
		"-t threads,\n-c ctxs, -q quiet, -b bvec, -I iommu, -R/-A ibv "
		"device... are in\nrdmarw-perf(1), MIGRATION.\n",
	CLI_OPTS(perf_table),
};

/*
 * --pi: sizes that are whole intervals, scatterlist input (there is no
 * bio_vec signature call), and the I/O table only.
 */
static void check_pi(const struct perf_opts *o)
{
	const char *why = NULL;

	if (!o->pi)
		return;
	if (o->size_min % o->pi)
		why = "sizes must be multiples of the interval";
	else if (o->bvec)
		why = "no bio_vec input";
	else if (o->ctl)
		why = "not with --ctl";
	else if (o->device)
		why = "needs the software device, not -d/--ib-dev";
	if (why)
		cli_refuse(PERF_TOOL, "--pi: %s", why);
}

/*
 * --threads: the software device only (one pair per thread on an ibv
 * device is not built), and the I/O table only: --ctl and --pi are
 * one-thread measures, and -n would give the threads different intervals.
 */
static void check_threads(const struct perf_opts *o)
{
	const char *why = NULL;

	if (!o->threads)
		return;
	if (o->device)
		why = "needs the software device, not -d/--ib-dev";
	else if (o->ctl)
		why = "not with --ctl";
	else if (o->pi)
		why = "not with --pi";
	else if (o->iters)
		why = "not with -n/--iters (every thread runs the same "
		      "interval: -D/--duration)";
	else if (o->qps > 1)
		why = "not with -q/--qp (a QP pair per thread)";
	if (why)
		cli_refuse(PERF_TOOL, "--threads: %s", why);
}

/* The row of the table the command-line word @w is, if it is an option. */
static const struct cli_opt *row_of(const char *w)
{
	const struct cli_opt *t;
	size_t n;

	if (w[0] != '-' || !w[1])
		return NULL;
	for (t = perf_table;
	     t < perf_table + sizeof(perf_table) / sizeof(perf_table[0]); t++) {
		if (t->kind == CLI_HEAD)
			continue;
		if (w[1] != '-') { /* a cluster: its last letter */
			if (t->short_name == w[strlen(w) - 1])
				return t;
			continue;
		}
		n = strcspn(w + 2, "=");
		if ((strlen(t->name) == n && !strncmp(t->name, w + 2, n)) ||
		    (t->alias && strlen(t->alias) == n &&
		     !strncmp(t->alias, w + 2, n)))
			return t;
	}
	return NULL;
}

/* "-s/--size" or "--json" for row @t. */
static const char *row_name(const struct cli_opt *t)
{
	static char s[64];

	if (t->short_name)
		snprintf(s, sizeof(s), "-%c/--%s", t->short_name, t->name);
	else
		snprintf(s, sizeof(s), "--%s", t->name);
	return s;
}

/* A number, a size or a MIN:MAX range: an option's value, not a HOST. */
static bool looks_like_value(const char *w)
{
	const char *colon = strchr(w, ':');
	char lo[32];
	u64 v;

	if (!colon)
		return !cli_parse_u64(w, 0, ULLONG_MAX, &v);
	if ((size_t)(colon - w) >= sizeof(lo))
		return false;
	memcpy(lo, w, (size_t)(colon - w));
	lo[colon - w] = '\0';
	return !cli_parse_u64(lo, 0, ULLONG_MAX, &v) &&
	       !cli_parse_u64(colon + 1, 0, ULLONG_MAX, &v);
}

/*
 * A positional word @w (argv[@at] before getopt moved it) that is no HOST:
 * refuse it, naming the option it was probably meant for.
 */
static void refuse_stray(char **orig, int at, const char *w)
{
	const struct cli_opt *t = NULL;
	char attached[64] = "";
	int i;

	for (i = at - 1; i > 0 && !t; i--)
		t = row_of(orig[i]);
	/* t is orig[i + 1]'s row: right before @w, or further */
	if (t && i + 2 == at && t->arg_optional) {
		if (t->short_name)
			snprintf(attached, sizeof(attached), "-%c%s or ",
				 t->short_name, w);
		cli_refuse(PERF_TOOL,
			   "%s '%s': give the value attached, as %s--%s=%s",
			   row_name(t), w, attached, t->name, w);
	}
	if (t && i + 2 == at && !t->arg)
		cli_refuse(PERF_TOOL,
			   "%s takes no value: unexpected argument '%s'",
			   row_name(t), w);
	if (t)
		cli_refuse(PERF_TOOL,
			   "unexpected argument '%s' after %s, which takes "
			   "one value (a HOST is an address or a name)",
			   w, row_name(t));
	cli_refuse(PERF_TOOL,
		   "unexpected argument '%s': a HOST is an address or a "
		   "name, not a number",
		   w);
}

/* The positional words: one HOST at most, and no stray values. */
static void parse_host(int argc, char **argv, char **orig, int first,
		       struct perf_opts *o)
{
	int i, at;

	for (i = first; i < argc; i++) {
		for (at = 1; at < argc && orig[at] != argv[i]; at++)
			;
		if (looks_like_value(argv[i]))
			refuse_stray(orig, at, argv[i]);
		if (o->host)
			cli_refuse(PERF_TOOL,
				   "unexpected argument '%s': one HOST "
				   "only ('%s')",
				   argv[i], o->host);
		o->host = argv[i];
	}
}

/*
 * Where the ends are (enum perf_mode), from -d, --addr, --server and
 * HOST; what only a client and a server measure (--lat, --dir send, -b)
 * takes the software device's in-process pair.
 */
static void pick_mode(struct perf_opts *o)
{
	bool cs_only = o->lat || o->send || o->bidir;
	struct soft_profile prof;
	/* siw-tcp: one end per process, a server without HOST */
	bool tcp = o->profile_set && !o->device &&
		   !soft_profile_get(o->profile, &prof) && prof.tcp;

	if (o->addr && !o->device)
		cli_refuse(PERF_TOOL, "--addr needs -d/--ib-dev");
	if (o->server && (o->host || o->addr))
		cli_refuse(PERF_TOOL, "--server: %s",
			   o->host ? "the client is given a HOST, not the "
				     "server" :
				     "not with --addr (both ends here)");
	if (o->server && o->profile_set && !tcp)
		cli_refuse(PERF_TOOL,
			   "--server listens on ibv devices or --profile "
			   "siw-tcp: the software device's other profiles do "
			   "not reach other processes (--profile %s HOST runs "
			   "both ends here)",
			   o->profile);
	if (o->lat && o->bidir)
		cli_refuse(PERF_TOOL, "-b/--bidirectional: not with --lat (a "
				      "round trip goes both ways)");
	if (o->host && o->addr)
		cli_refuse(PERF_TOOL,
			   "--addr (both ends in this process) and a HOST "
			   "(a server elsewhere) exclude each other");
	if (o->host)
		o->mode = o->device || !o->profile_set || tcp ? PERF_CLIENT :
								PERF_SOFT_CS;
	else if (o->server || (o->device && !o->addr) || tcp)
		o->mode = PERF_SERVER;
	else if (!o->device && cs_only)
		o->mode = PERF_SOFT_CS;
	else
		o->mode = PERF_LOCAL;
	if (o->mode == PERF_LOCAL && cs_only)
		cli_refuse(
			PERF_TOOL,
			"%s needs a client and a server (leave --addr out to "
			"listen on -d, give a HOST to connect)",
			o->lat	? "--lat" :
			o->send ? "--dir send" :
				  "-b/--bidirectional");
}

/*
 * --perftest: one end of one of perftest's bandwidth programs, which runs
 * one operation over one RC QP (perftest_compat.h).
 */
static void check_perftest(struct perf_opts *o)
{
	const char *what;

	if (o->rx_depth && !o->perftest)
		cli_refuse(PERF_TOOL, "-r/--rx-depth is perftest's receive "
				      "depth: --perftest --dir send only");
	if (!o->perftest)
		return;
	if (!o->dir_set) { /* ib_write_bw's */
		o->write = true;
		o->read = false;
	}
	what = o->send && (o->write || o->read) ?
		       "--dir send with write or read" :
	       o->send && o->duration_set ?
		       "-D with --dir send (both ends count -n SENDs)" :
	       o->rx_depth && !o->send ?
		       "-r/--rx-depth without --dir send" :
	       o->lat && o->duration_set ?
		       "-D with --lat (the duration mode of ib_*_lat)" :
	       o->bidir		   ? "-b/--bidirectional" :
	       o->qps > 1	   ? "-q/--qp above 1" :
	       o->threads	   ? "--threads" :
	       o->write && o->read ? "--dir with both write and read" :
				     NULL;
	if (what)
		cli_refuse(PERF_TOOL,
			   "--perftest: %s is not supported (one of "
			   "ib_write_bw, ib_read_bw, ib_send_bw and their _lat "
			   "siblings with -R: --dir write, read or send, and "
			   "--lat)",
			   what);
	if (o->mode != PERF_CLIENT && o->mode != PERF_SERVER)
		cli_refuse(PERF_TOOL,
			   "--perftest: the other end is perftest's program in "
			   "another process: listen (-d DEV, or --profile "
			   "siw-tcp) or give its HOST");
	/* perftest's: both ends count round trips, or SENDs */
	if ((o->lat || o->send) && !o->iters)
		o->iters = 1000;
}

/* What a client/server run does not take (it measures the wire). */
static void check_cs(const struct perf_opts *o)
{
	const char *what = o->ctl		    ? "--ctl" :
			   o->threads		    ? "--threads" :
			   o->pi		    ? "--pi" :
			   o->bvec		    ? "--bvec" :
			   o->sge > 1		    ? "--sge" :
			   o->entry		    ? "--entry" :
			   o->gap		    ? "--gap" :
			   o->offset		    ? "--offset" :
			   o->qps > 1		    ? "-q/--qp" :
			   o->device && o->iommu    ? "--iommu" :
			   o->device && o->threaded ? "--threaded" :
						      NULL;

	if (o->mode == PERF_LOCAL || !what)
		return;
	cli_refuse(PERF_TOOL, "%s: not in a client/server run%s", what,
		   o->qps > 1 && !strcmp(what, "-q/--qp") ?
			   " (one QP per connection)" :
			   "");
}

/* The options and HOST, then the checks that span them. */
static void parse_opts(int argc, char **argv, struct perf_opts *o)
{
	char **orig = malloc(sizeof(*orig) * ((size_t)argc + 1));
	int i;

	if (!orig)
		die("malloc", -ENOMEM);
	memcpy(orig, argv, sizeof(*orig) * ((size_t)argc + 1));
	*o = (struct perf_opts){ .write = true,
				 .read = true,
				 .size_min = 65536,
				 .size_max = 65536,
				 .sge = 1,
				 .ctxs = 16,
				 .qps = 1,
				 .port = PERF_DEFAULT_PORT,
				 .ib_port = 1,
				 .profile = "rxe" };
	i = cli_opts_parse(&perf_cli, o, argc, argv);
	parse_host(argc, argv, orig, i, o);
	free(orig);
	o->duration_set = o->duration > 0; /* -D refuses 0 */
	if (!o->duration_set)
		o->duration = 0.5;
	if (!o->write && !o->read && !o->send)
		o->write = o->read = true;
	if (o->json && o->csv)
		cli_refuse(PERF_TOOL, "--json and --csv: both on stdout "
				      "(--out_json_file=FILE puts JSON in a "
				      "file beside the CSV)");
	if (o->size_min > o->size_max)
		cli_refuse(PERF_TOOL, "the smallest size is above the largest");
	if ((u64)o->ctxs * o->qps > PERF_MAX_IN_FLIGHT)
		cli_refuse(PERF_TOOL,
			   "-t/--ctxs %u times -q/--qp %u: more than %u in "
			   "flight",
			   o->ctxs, o->qps, PERF_MAX_IN_FLIGHT);
	if (o->qps > 1 && o->device)
		cli_refuse(PERF_TOOL, "-q/--qp: one QP pair on an ibv device");
	pick_mode(o);
	check_perftest(o);
	check_pi(o);
	check_threads(o);
	check_cs(o);
}

/* ---- the I/O table ---------------------------------------------------- */

/*
 * --pi: the signature attributes (every check on, reference tags from 0),
 * and before READs one inserting WRITE, so that the remote range holds the
 * image every READ checks: the READs and their memcpy never write it.
 */
static int pi_prepare(struct perf_run *r)
{
	enum dma_data_direction dir = r->dir;
	double secs;
	int ret;

	if (!r->o->pi)
		return 0;
	r->sig = (struct ib_sig_attrs){
		.check_mask = IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG |
			      IB_SIG_CHECK_REFTAG,
		.mem.sig_type = IB_SIG_TYPE_NONE,
		.wire.sig_type = IB_SIG_TYPE_T10_DIF,
		.wire.sig.dif = { .bg_type = IB_T10DIF_CRC,
				  .pi_interval = (u16)r->o->pi,
				  .app_tag = 0x5244,
				  .ref_remap = true,
				  .apptag_check_mask = 0xffff },
	};
	if (dir != DMA_FROM_DEVICE)
		return 0;
	r->dir = DMA_TO_DEVICE;
	ret = run_ios(r, 1, &secs);
	r->dir = dir;
	return ret;
}

static int run_size(struct perf_env *e, const struct perf_opts *o,
		    struct perf_slot *slots, u64 bytes,
		    enum dma_data_direction dir)
{
	static struct perf_shape shape;
	struct perf_run r = { .env = e,
			      .o = o,
			      .shape = &shape,
			      .dir = dir,
			      .slots = slots,
			      .deadline = INFINITY,
			      .clock_mask = 63 };
	struct perf_result res;
	u32 i;
	int ret;

	ret = shape_build(&shape, bytes, shape_nents(o, bytes), o->gap,
			  o->offset);
	if (ret)
		return ret;
	r.raddr = (u64)(uintptr_t)e->rbuf;
	r.rkey = e->rmr->rkey;
	r.nents = shape.nents;
	r.nslots = o->ctxs * e->nqps;
	for (i = 0; i < r.nslots; i++) {
		slots[i].run = &r;
		slots[i].qp = e->lqps[i % e->nqps];
		slots[i].cqe.done = o->pi || o->bvec ? io_done : io_done_sg;
		slot_fill(&slots[i], &shape, e->lbuf);
		if (o->pi)
			sg_init_one(&slots[i].psg, e->pibuf,
				    (unsigned int)(bytes / o->pi * 8));
	}
	ret = pi_prepare(&r);
	if (!ret)
		ret = measure(&r, &res);
	if (ret) {
		progress_clear();
		fprintf(stderr, "rdmarw-perf: %s %llu bytes: %s\n",
			dir_name(dir), (unsigned long long)bytes,
			strerror(-ret));
		return ret;
	}
	print_result(o, &res, shape.nents);
	return 0;
}

static unsigned int count_sizes(const struct perf_opts *o)
{
	unsigned int n = 0;
	u64 size;

	for (size = o->size_min; size <= o->size_max; size *= 2) {
		n += (o->write ? 1 : 0) + (o->read ? 1 : 0);
		if (size > o->size_max / 2)
			break;
	}
	return n;
}

static int run_table(struct perf_env *env, const struct perf_opts *o,
		     struct perf_slot *slots)
{
	u64 size;
	int ret = 0;

	progress.total = count_sizes(o);
	print_header(o);
	for (size = o->size_min; size <= o->size_max && !ret; size *= 2) {
		if (o->write) {
			ret = run_size(env, o, slots, size, DMA_TO_DEVICE);
			progress.done++;
		}
		if (o->read && !ret) {
			ret = run_size(env, o, slots, size, DMA_FROM_DEVICE);
			progress.done++;
		}
		if (size > o->size_max / 2)
			break;
	}
	return ret;
}

/* ---- --ctl: the control path per path ---------------------------------- */

struct ctl_point {
	const char *what;
	u32 nents; /* entries of the context */
	u32 entry; /* bytes each */
	bool force; /* force_mr */
	double ns; /* median ns per init + wrs + destroy */
	double ns_min;
	u32 mrs; /* MRs the context registered */
	u32 wrs; /* RDMA WRs of the context */
	const char *path;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median and minimum of PERF_CTL_BATCHES timed batches of one shape. */
static int ctl_measure(struct perf_run *r, struct ctl_point *p, double secs)
{
	double t[PERF_CTL_BATCHES], t0;
	u64 batch = 64;
	unsigned int k;

	rdma_rw_set_force_mr(p->force);
	/* size a batch to secs / PERF_CTL_BATCHES */
	for (;;) {
		t0 = perf_now();
		if (isnan(control_ns(r, batch)))
			return -EINVAL;
		if (perf_now() - t0 > secs / PERF_CTL_BATCHES / 4 ||
		    batch >= (1ULL << 28))
			break;
		batch *= 4;
	}
	for (k = 0; k < PERF_CTL_BATCHES; k++) {
		t[k] = control_ns(r, batch);
		progress_show(p->what, p->nents, k + 1, PERF_CTL_BATCHES);
	}
	qsort(t, PERF_CTL_BATCHES, sizeof(t[0]), cmp_double);
	p->ns = t[PERF_CTL_BATCHES / 2];
	p->ns_min = t[0];
	/* what the context was: one more init to look at it */
	if (io_init(r, &r->slots[0], r->env->ctl_qp) < 0)
		return -EINVAL;
	p->path = path_name(&r->slots[0].ctx);
	p->mrs =
		r->slots[0].ctx.type == RDMA_RW_MR ? r->slots[0].ctx.nr_ops : 0;
	p->wrs = r->slots[0].ctx.nr_ops;
	io_destroy(r, &r->slots[0], r->env->ctl_qp);
	return 0;
}

static void ctl_print(const struct perf_opts *o, const struct ctl_point *p)
{
	double per_sge = p->ns / p->nents;
	double per_mr = p->mrs ? p->ns / p->mrs : 0;
	struct perf_rec rec;

	progress_clear();
	perf_rec_init(&rec, "ctl");
	{
		rec_str(&rec, "what", p->what);
		rec_str(&rec, "path", p->path);
		rec_u64(&rec, "nents", p->nents);
		rec_u64(&rec, "sge_len", p->entry);
		rec_u64(&rec, "mrs", p->mrs);
		rec_u64(&rec, "wrs", p->wrs);
		rec_fixed(&rec, "ns_per_io", p->ns, 2);
		rec_fixed(&rec, "ns_per_io_min", p->ns_min, 2);
		rec_fixed(&rec, "ns_per_sge", per_sge, 3);
		rec_fixed(&rec, "ns_per_mr", per_mr, 2);
	}
	perf_rec_emit(&rec, o, "local", NULL);
	if (!perf_out_table())
		return;
	printf("%-14s %-6s %6u %8u %4u %4u %10.1f %10.1f %9.2f ", p->what,
	       p->path, p->nents, p->entry, p->wrs, p->mrs, p->ns, p->ns_min,
	       per_sge);
	if (p->mrs)
		printf("%9.1f\n", per_mr);
	else
		printf("%9s\n", "-");
}

/* Least-squares slope of ns per I/O against entries (MULTI's per SGE). */
static double ctl_slope(const struct ctl_point *p, unsigned int n)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sx += p[i].nents;
		sy += p[i].ns;
		sxx += (double)p[i].nents * p[i].nents;
		sxy += (double)p[i].nents * p[i].ns;
	}
	return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* The shapes of the table: what each path costs, with its target. */
static unsigned int ctl_points(const struct perf_env *e, struct ctl_point *p)
{
	u32 max_sge = e->lqp->max_write_sge, n = 0, k, ppm;
	static const u32 multi[] = { 2, 4, 8, 16, 32, 64, 128 };

	p[n++] = (struct ctl_point){ "single", 1, 64, false };
	p[n++] = (struct ctl_point){ "single", 1, 65536, false };
	for (k = 0; k < sizeof(multi) / sizeof(multi[0]); k++)
		if (multi[k] <= 4 * max_sge || multi[k] <= 8)
			p[n++] = (struct ctl_point){ "multi", multi[k], 4096,
						     false };
	/* pages one MR takes: rdma_rw_mr_factor() of 2^20 pages */
	rdma_rw_set_force_mr(true);
	k = rdma_rw_mr_factor(e->ldev, 1, 1U << 20);
	rdma_rw_set_force_mr(false);
	ppm = k ? (1U << 20) / k : 1;
	if (ppm > 256)
		ppm = 256;
	p[n++] = (struct ctl_point){ "mr", 1, 4096, true };
	p[n++] = (struct ctl_point){ "mr", 16, 4096, true };
	p[n++] = (struct ctl_point){ "mr", ppm, 4096, true };
	p[n++] = (struct ctl_point){ "mr", 4 * ppm, 4096, true };
	return n;
}

static int run_ctl(struct perf_env *env, const struct perf_opts *o,
		   struct perf_slot *slots)
{
	static struct perf_shape shape;
	struct perf_run r = { .env = env,
			      .o = o,
			      .shape = &shape,
			      .dir = o->write ? DMA_TO_DEVICE : DMA_FROM_DEVICE,
			      .slots = slots };
	struct ctl_point p[16];
	unsigned int n, i, nmulti = 0, first_multi = 0, small = 0, big = 0;
	struct perf_rec rec;
	double slope;
	int ret = 0;

	n = ctl_points(env, p);
	progress.total = n;
	if (perf_out_table()) {
		printf("# rdmarw-perf --ctl: %s on profile %s%s%s: "
		       "rdma_rw_ctx_init%s + rdma_rw_ctx_wrs + destroy, nothing "
		       "posted\n# median (and min) of %u batches; targets: SINGLE "
		       "<= 30 ns/IO, MULTI <= 3 ns/SGE, MR <= 100 ns/MR\n",
		       dir_name(r.dir), o->profile, o->iommu ? "+iommu" : "",
		       o->bvec ? " (bio_vec)" : "", o->bvec ? "_bvec" : "",
		       PERF_CTL_BATCHES);
		printf("%-14s %-6s %6s %8s %4s %4s %10s %10s %9s %9s\n",
		       "shape", "path", "#SGE", "SGE len", "WRs", "MRs",
		       "ns/IO", "min", "ns/SGE", "ns/MR");
	}
	for (i = 0; i < n && !ret; i++) {
		u64 bytes = (u64)p[i].nents * p[i].entry;

		if (shape_build(&shape, bytes, p[i].nents, 0, 0) ||
		    shape_span(&shape) > env->lbuf_len || bytes > env->rbuf_len)
			continue;
		slot_fill(&slots[0], &shape, env->lbuf);
		ret = ctl_measure(&r, &p[i], o->duration);
		progress.done++;
		if (ret)
			break;
		ctl_print(o, &p[i]);
		if (!strcmp(p[i].what, "multi") &&
		    !strcmp(p[i].path, "multi")) {
			if (!nmulti)
				first_multi = i;
			nmulti++;
		}
		if (p[i].mrs && !small)
			small = i;
		if (p[i].mrs)
			big = i;
	}
	rdma_rw_set_force_mr(o->force_mr);
	if (ret)
		goto out;
	slope = nmulti >= 2 ? ctl_slope(&p[first_multi], nmulti) : NAN;
	perf_rec_init(&rec, "ctl_summary");
	{
		rec_double(&rec, "single_ns", p[0].ns);
		rec_double(&rec, "multi_ns_per_sge", slope);
		rec_double(&rec, "mr_ns_per_mr_small",
			   small ? p[small].ns / p[small].mrs : NAN);
		rec_double(&rec, "mr_ns_per_mr_full",
			   big ? p[big].ns / p[big].mrs : NAN);
	}
	perf_rec_emit(&rec, o, "local", NULL);
	if (perf_out_table()) {
		printf("# SINGLE %.1f ns/IO; MULTI %.2f ns per SGE (slope over "
		       "%u shapes); MR %.1f ns/MR (one page), %.1f ns/MR (%u "
		       "MRs of %u entries)\n",
		       p[0].ns, slope, nmulti,
		       small ? p[small].ns / p[small].mrs : NAN,
		       big ? p[big].ns / p[big].mrs : NAN, big ? p[big].mrs : 0,
		       big ? p[big].nents / p[big].mrs : 0);
	}
out:
	if (ret)
		fprintf(stderr, "rdmarw-perf: --ctl: %s\n", strerror(-ret));
	return ret;
}

/* ---- --threads: QP pairs on threads ------------------------------------ */

/*
 * --threads N: N pairs, each with its own PDs, CQs, QPs, buffers, MR,
 * slots and shape, each driven by its own thread pinned to a core
 * (round-robin over the process's affinity set).  A phase is one kind of work (I/O or the
 * memcpy baseline) on the first @active threads: they leave a barrier
 * together and start nothing after one deadline, so every thread is
 * measured over the same interval.  Each thread writes only its own
 * struct perf_thr (cache-line aligned); the main thread reads them after
 * the closing barrier.
 */
enum perf_phase { PHASE_IO, PHASE_MEMCPY, PHASE_QUIT };

/* What a phase's figures add to: thread 0 alone, or all N; I/O or memcpy. */
enum perf_mt_kind { MT_IO1, MT_MC1, MT_MCN, MT_ION, MT_KINDS };

struct perf_mt;

struct perf_thr {
	struct perf_env env;
	struct perf_shape *shape;
	struct perf_slot *slots;
	struct perf_run run;
	struct perf_mt *mt;
	pthread_t tid;
	u32 idx;
	int cpu;
	/* the phases' results, added up by this thread only, per kind */
	u64 done[MT_KINDS]; /* I/Os or copies */
	double secs[MT_KINDS];
	int error;
} __attribute__((aligned(64)));

struct perf_mt {
	pthread_barrier_t start, end;
	/* the phase: written by the main thread before the start barrier */
	enum perf_phase phase;
	enum perf_mt_kind kind;
	u32 active;
	double deadline;
	struct perf_thr *thr;
	u32 n;
};

/* The figures of one phase: the sum and the fairness over @n threads. */
struct perf_mt_sum {
	double bps; /* summed bytes per second */
	double pps; /* summed I/Os (or copies) per second */
	double min_bps, max_bps; /* fairness: the slowest and fastest thread */
};

/* Copies over the thread's own buffers until the deadline. */
static void thr_memcpy(struct perf_thr *t, double deadline,
		       enum perf_mt_kind kind)
{
	u64 batch = (1U << 20) / t->shape->bytes, n = 0;
	double t0 = perf_now(), t1;

	if (!batch)
		batch = 1;
	do {
		memcpy_secs(&t->run, batch);
		n += batch;
		t1 = perf_now();
	} while (t1 < deadline);
	t->done[kind] += n;
	t->secs[kind] += t1 - t0;
}

static void thr_io(struct perf_thr *t, double deadline, enum perf_mt_kind kind)
{
	struct perf_run *r = &t->run;
	double secs = 0;

	r->deadline = deadline;
	t->error = run_ios(r, 1ULL << 40, &secs);
	t->done[kind] += r->completed;
	t->secs[kind] += secs;
}

static void *thr_main(void *arg)
{
	struct perf_thr *t = arg;
	struct perf_mt *mt = t->mt;

	for (;;) {
		pthread_barrier_wait(&mt->start);
		if (mt->phase == PHASE_QUIT)
			return NULL;
		if (t->idx < mt->active) {
			if (mt->phase == PHASE_IO)
				thr_io(t, mt->deadline, mt->kind);
			else
				thr_memcpy(t, mt->deadline, mt->kind);
		}
		pthread_barrier_wait(&mt->end);
	}
}

/* One phase of @kind, @secs long; 0 or an error. */
static int mt_phase(struct perf_mt *mt, enum perf_mt_kind kind, double secs)
{
	u32 i;

	mt->phase = kind == MT_IO1 || kind == MT_ION ? PHASE_IO : PHASE_MEMCPY;
	mt->kind = kind;
	mt->active = kind == MT_IO1 || kind == MT_MC1 ? 1 : mt->n;
	mt->deadline = perf_now() + secs;
	pthread_barrier_wait(&mt->start);
	pthread_barrier_wait(&mt->end);
	for (i = 0; i < mt->active; i++)
		if (mt->thr[i].error)
			return mt->thr[i].error;
	return 0;
}

/* Rate of thread @t in @kind's phases, per second. */
static double thr_pps(const struct perf_thr *t, enum perf_mt_kind kind)
{
	return t->secs[kind] > 0 ? (double)t->done[kind] / t->secs[kind] : 0;
}

/* The figures of @kind's phases, over the threads that ran them. */
static void mt_sum(const struct perf_mt *mt, enum perf_mt_kind kind,
		   struct perf_mt_sum *sum)
{
	u32 i, active = kind == MT_IO1 || kind == MT_MC1 ? 1 : mt->n;

	*sum = (struct perf_mt_sum){ .min_bps = INFINITY };
	for (i = 0; i < active; i++) {
		const struct perf_thr *t = &mt->thr[i];
		double pps = thr_pps(t, kind);
		double bps = pps * (double)t->shape->bytes;

		sum->pps += pps;
		sum->bps += bps;
		if (bps < sum->min_bps)
			sum->min_bps = bps;
		if (bps > sum->max_bps)
			sum->max_bps = bps;
	}
}

/* The threads' pairs ready for @bytes in @dir (as run_size() does). */
static int mt_prepare(struct perf_mt *mt, const struct perf_opts *o, u64 bytes,
		      enum dma_data_direction dir)
{
	u32 i, k;
	int ret;

	for (i = 0; i < mt->n; i++) {
		struct perf_thr *t = &mt->thr[i];
		struct perf_run *r = &t->run;

		ret = shape_build(t->shape, bytes, shape_nents(o, bytes),
				  o->gap, o->offset);
		if (ret)
			return ret;
		memset(t->done, 0, sizeof(t->done));
		memset(t->secs, 0, sizeof(t->secs));
		*r = (struct perf_run){ .env = &t->env,
					.o = o,
					.shape = t->shape,
					.dir = dir,
					.slots = t->slots,
					.nslots = o->ctxs,
					.raddr = (u64)(uintptr_t)t->env.rbuf,
					.rkey = t->env.rmr->rkey,
					.nents = t->shape->nents,
					.clock_mask = 0,
					.win_mask = ~0U };
		for (k = 0; k < o->ctxs; k++) {
			t->slots[k].run = r;
			t->slots[k].qp = t->env.lqp;
			t->slots[k].cqe.done = o->bvec ? io_done : io_done_sg;
			slot_fill(&t->slots[k], t->shape, t->env.lbuf);
		}
	}
	return 0;
}

static double mt_bw(const struct perf_opts *o, double bps)
{
	return o->gbits ? bps * 8 / 1e9 : bps / (1 << 20);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

static void mt_print(const struct perf_opts *o, const struct perf_mt *mt,
		     u64 bytes, enum dma_data_direction dir,
		     const struct perf_mt_sum *io1,
		     const struct perf_mt_sum *ion,
		     const struct perf_mt_sum *mc1,
		     const struct perf_mt_sum *mcn)
{
	struct perf_rec rec;
	u32 i;

	{
		for (i = 0; i < mt->n; i++) {
			const struct perf_thr *t = &mt->thr[i];
			double pps = thr_pps(t, MT_ION);

			perf_rec_init(&rec, "thread");
			rec_str(&rec, "op", dir_name(dir));
			rec_u64(&rec, "bytes", bytes);
			rec_u64(&rec, "thread", i);
			rec_int(&rec, "cpu", t->cpu);
			rec_u64(&rec, "iters", t->done[MT_ION]);
			rec_fixed(&rec, "secs", t->secs[MT_ION], 6);
			rec_fixed(&rec, "bw_mib",
				  pps * (double)bytes / (1 << 20), 2);
			rec_fixed(&rec, "mpps", pps / 1e6, 6);
			rec_fixed(&rec, "memcpy_mib",
				  thr_pps(t, MT_MCN) * (double)bytes /
					  (1 << 20),
				  2);
			perf_rec_emit(&rec, o, "local", NULL);
		}
		perf_rec_init(&rec, "threads");
		rec_str(&rec, "op", dir_name(dir));
		rec_u64(&rec, "bytes", bytes);
		rec_u64(&rec, "threads", mt->n);
		rec_fixed(&rec, "bw_sum_mib", ion->bps / (1 << 20), 2);
		rec_fixed(&rec, "mpps_sum", ion->pps / 1e6, 6);
		rec_fixed(&rec, "one_bw_mib", io1->bps / (1 << 20), 2);
		rec_double(&rec, "scaling", ratio(ion->bps, io1->bps));
		rec_fixed(&rec, "min_bw_mib", ion->min_bps / (1 << 20), 2);
		rec_fixed(&rec, "max_bw_mib", ion->max_bps / (1 << 20), 2);
		rec_double(&rec, "fairness", ratio(ion->min_bps, ion->max_bps));
		rec_fixed(&rec, "memcpy_sum_mib", mcn->bps / (1 << 20), 2);
		rec_fixed(&rec, "memcpy_one_mib", mc1->bps / (1 << 20), 2);
		rec_double(&rec, "memcpy_scaling", ratio(mcn->bps, mc1->bps));
		rec_double(&rec, "memcpy_fairness",
			   ratio(mcn->min_bps, mcn->max_bps));
		rec_double(&rec, "ratio", ratio(ion->bps, mcn->bps));
		perf_rec_emit(&rec, o, "local", NULL);
	}
	if (!perf_out_table())
		return;
	for (i = 0; i < mt->n; i++) {
		const struct perf_thr *t = &mt->thr[i];
		double pps = thr_pps(t, MT_ION);

		printf("  thread %-3u cpu %-3d %-5s %9llu %12.2f %10.4f "
		       "%12.2f\n",
		       i, t->cpu, dir_name(dir), (unsigned long long)bytes,
		       mt_bw(o, pps * (double)bytes), pps / 1e6,
		       mt_bw(o, thr_pps(t, MT_MCN) * (double)bytes));
	}
	printf("%-5s %9llu %3u %12.2f %10.4f %12.2f %7.2fx %6.3f %12.2f "
	       "%7.2fx %6.3f\n",
	       dir_name(dir), (unsigned long long)bytes, mt->n,
	       mt_bw(o, ion->bps), ion->pps / 1e6, mt_bw(o, io1->bps),
	       ratio(ion->bps, io1->bps), ratio(ion->min_bps, ion->max_bps),
	       mt_bw(o, mcn->bps), ratio(mcn->bps, mc1->bps),
	       ratio(mcn->min_bps, mcn->max_bps));
	fflush(stdout);
}

/*
 * One size in one direction: the four phases in PERF_MT_ROUNDS rounds of
 * -D / PERF_MT_ROUNDS each (a noisy neighbour slows them alike), then the
 * figures of each kind over its rounds.
 */
static int mt_size(struct perf_mt *mt, const struct perf_opts *o, u64 bytes,
		   enum dma_data_direction dir)
{
	static const enum perf_mt_kind order[MT_KINDS] = { MT_IO1, MT_MC1,
							   MT_MCN, MT_ION };
	struct perf_mt_sum io1, ion, mc1, mcn;
	double d = o->duration / PERF_MT_ROUNDS;
	u32 k, round;
	int ret;

	ret = mt_prepare(mt, o, bytes, dir);
	for (round = 0; round < PERF_MT_ROUNDS && !ret; round++)
		for (k = 0; k < MT_KINDS && !ret; k++)
			ret = mt_phase(mt, order[k], d);
	if (ret) {
		fprintf(stderr,
			"rdmarw-perf: --threads %u: %s %llu bytes: %s\n", mt->n,
			dir_name(dir), (unsigned long long)bytes,
			strerror(-ret));
		return ret;
	}
	mt_sum(mt, MT_IO1, &io1);
	mt_sum(mt, MT_MC1, &mc1);
	mt_sum(mt, MT_MCN, &mcn);
	mt_sum(mt, MT_ION, &ion);
	mt_print(o, mt, bytes, dir, &io1, &ion, &mc1, &mcn);
	return 0;
}

/* The cores of the affinity set, in order, into @cpus; how many. */
static u32 mt_cpus(int *cpus)
{
	cpu_set_t set;
	u32 n = 0;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (c = 0; c < CPU_SETSIZE && n < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

static void mt_header(const struct perf_opts *o, u32 ncpus)
{
	if (!perf_out_table())
		return;
	printf("# rdmarw-perf --threads %u: profile %s%s%s, %u in flight per pair, "
	       "%u pairs on %u threads pinned round-robin over %u cores\n",
	       o->threads, o->profile, o->iommu ? "+iommu" : "",
	       o->threaded ? "+threaded" : "", o->ctxs, o->threads, o->threads,
	       ncpus);
	printf("# %u rounds of 4 phases of %.3f s (I/O and memcpy on thread 0 "
	       "alone, on all), all threads leaving one barrier and "
	       "starting nothing after one deadline;\n# one = thread 0 alone "
	       "(the same pair, in the same rounds); scaling = sum / one; fair = "
	       "slowest / fastest thread;\n# memcpy = each thread copying "
	       "over its own buffers, N threads at once (scaling: against "
	       "one thread)\n",
	       PERF_MT_ROUNDS, o->duration / PERF_MT_ROUNDS);
	printf("# BW in %s\n",
	       o->gbits ? "Gb/s (10^9 bits/s)" : "MiB/s (2^20 bytes/s)");
	printf("# per thread: thread, cpu, op, bytes, BW, Mpps, memcpy BW\n");
	printf("%-5s %9s %3s %12s %10s %12s %8s %6s %12s %8s %6s\n", "#op",
	       "bytes", "thr", "BW sum", "Mpps sum", "BW one", "scaling",
	       "fair", "memcpy sum", "scaling", "fair");
}

static int run_threads(const struct perf_opts *o, size_t lbuf, size_t rbuf,
		       u32 nents)
{
	static int cpus[CPU_SETSIZE];
	struct perf_env base = { 0 };
	struct perf_mt mt = { .n = o->threads };
	cpu_set_t set;
	u32 i, ncpus;
	u64 size;
	int ret = 0;

	ncpus = mt_cpus(cpus);
	if (!ncpus)
		die("sched_getaffinity", -errno);
	mt.thr = aligned_alloc(64, sizeof(*mt.thr) * mt.n);
	if (!mt.thr)
		die("aligned_alloc", -ENOMEM);
	memset(mt.thr, 0, sizeof(*mt.thr) * mt.n);
	env_devices(&base, o);
	for (i = 0; i < mt.n; i++) {
		struct perf_thr *t = &mt.thr[i];

		env_open(&t->env, o, lbuf, rbuf, nents, &base);
		t->slots = slots_alloc(o->ctxs, nents);
		t->shape = calloc(1, sizeof(*t->shape));
		if (!t->shape)
			die("calloc", -ENOMEM);
		t->mt = &mt;
		t->idx = i;
		t->cpu = cpus[i % ncpus];
	}
	if (pthread_barrier_init(&mt.start, NULL, mt.n + 1) ||
	    pthread_barrier_init(&mt.end, NULL, mt.n + 1))
		die("pthread_barrier_init", -EAGAIN);
	for (i = 0; i < mt.n; i++) {
		struct perf_thr *t = &mt.thr[i];

		ret = pthread_create(&t->tid, NULL, thr_main, t);
		if (ret)
			die("pthread_create", -ret);
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		ret = pthread_setaffinity_np(t->tid, sizeof(set), &set);
		if (ret)
			die("pthread_setaffinity_np", -ret);
	}
	mt_header(o, ncpus);
	for (size = o->size_min; size <= o->size_max && !ret; size *= 2) {
		if (o->write)
			ret = mt_size(&mt, o, size, DMA_TO_DEVICE);
		if (o->read && !ret)
			ret = mt_size(&mt, o, size, DMA_FROM_DEVICE);
		if (size > o->size_max / 2)
			break;
	}
	mt.phase = PHASE_QUIT;
	pthread_barrier_wait(&mt.start);
	for (i = 0; i < mt.n; i++)
		pthread_join(mt.thr[i].tid, NULL);
	for (i = 0; i < mt.n; i++) {
		env_close(&mt.thr[i].env);
		slots_free(mt.thr[i].slots);
		free(mt.thr[i].shape);
	}
	pthread_barrier_destroy(&mt.start);
	pthread_barrier_destroy(&mt.end);
	free(mt.thr);
	two_hosts_close(&base.hosts);
	return ret;
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct perf_opts o;
	struct perf_env env;
	struct perf_slot *slots;
	struct perf_shape probe;
	size_t lbuf, rbuf;
	int ret;

	parse_opts(argc, argv, &o);
	perf_out_open(&o, argc, argv);
	if (o.mode != PERF_LOCAL) {
		ret = perf_cs_run(&o);
		perf_out_close();
		return ret;
	}
	if (shape_build(&probe, o.size_max, shape_nents(&o, o.size_max), o.gap,
			o.offset))
		cli_refuse(PERF_TOOL,
			   "%llu bytes do not split into 1 to %u "
			   "entries of 1 byte to 4G (--sge, --entry)",
			   (unsigned long long)o.size_max, PERF_MAX_SGE);
	lbuf = shape_span(&probe) + PAGE_SIZE;
	rbuf = o.size_max;
	if (o.pi) /* the wire image: 8 bytes of PI per interval */
		rbuf += o.size_max / o.pi * 8;
	if (o.ctl) {
		/* --ctl: up to 4 MRs of 256 pages of 4 KiB */
		lbuf = lbuf > (4U << 20) + PAGE_SIZE ? lbuf :
						       (4U << 20) + PAGE_SIZE;
		rbuf = rbuf > (4U << 20) ? rbuf : (4U << 20);
	}
	if (o.threads) {
		ret = run_threads(&o, lbuf, rbuf, probe.nents);
		perf_out_close();
		return ret ? 1 : 0;
	}
	env_open(&env, &o, lbuf, rbuf, probe.nents, NULL);
	slots = slots_alloc(o.ctxs * o.qps, o.ctl ? PERF_MAX_SGE : probe.nents);
	progress.on = !o.quiet && isatty(2);
	progress.t0 = progress.last = perf_now();
	ret = o.ctl ? run_ctl(&env, &o, slots) : run_table(&env, &o, slots);
	progress_clear();
	slots_free(slots);
	env_close(&env);
	perf_out_close();
	return ret ? 1 : 0;
}

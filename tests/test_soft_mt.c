// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Many threads on the devices of one fabric (issue 16): IO_THREADS QP
 * pairs, each driven by its own thread, do WRITE and READ through
 * rdma_rw_ctx_* and through plain verbs on their own grants, while
 * CHURN_THREADS threads keep registering, fast-registering, invalidating
 * and deregistering MRs on the same devices.  Every profile, inline and
 * threaded device modes.  Checked: every completion arrives exactly once;
 * a WRITE with the rkey of an MR deregistered, or of a fast MR invalidated
 * (LOCAL_INV), before it was posted fails and changes no byte (on iWARP,
 * where a WRITE completes once sent, the READ after it fails); once
 * ib_dereg_mr() returned while a WRITE into the MR was in flight, no byte
 * of the region changes; no byte outside a live grant changes (guard zones
 * around each target, the churn threads' buffers); nothing is left on the
 * devices at the end.  Iteration counts, no time.  Threads count failures;
 * the main thread asserts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <rdmarw/rw.h>

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define IO_THREADS 4
#define CHURN_THREADS 2
#define ITERS 60
#define PROBE_EVERY 10 /* a stale-key probe every this many iterations */
#define CHURN_ITERS 150
#define GRANT (4 * PAGE_SIZE)
#define GUARD PAGE_SIZE
#define GUARD_BYTE 0xe7
#define ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

/* One I/O thread's pair and memory. */
struct io_thr {
	struct two_hosts h; /* fabric and devices: the env's */
	u8 *tgt; /* GUARD | GRANT | GUARD | GRANT (the stale one) | GUARD */
	u8 *src; /* the local side, GRANT bytes */
	struct ib_mr *tmr, *smr;
	pthread_t tid;
	int id;
	bool iommu; /* R/W through rdma_rw_ctx_init_bvec(): an IOVA range */
	int failures;
	int stale_probes;
	int iova_ios;
} __attribute__((aligned(64)));

struct churn_thr {
	struct ib_device *dev;
	struct two_hosts h; /* churn 1: a pair for REG_MR and LOCAL_INV */
	struct ib_pd *pd;
	u8 *buf; /* never a target of any I/O: must keep its bytes */
	u8 *src; /* churn 1: the source of its stale-key WRITEs */
	struct ib_mr *smr;
	int kind;
	pthread_t tid;
	int failures;
} __attribute__((aligned(64)));

static void fill(u8 *p, size_t n, u32 seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (u8)(seed * 131 + i * 7 + (i >> 9));
}

static bool all(const u8 *p, size_t n, u8 v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/*
 * The one completion of @id on @cq, then nothing more for it: false if it
 * does not come, comes twice, or is another.
 */
static bool one_wc(struct ib_cq *cq, u64 id, struct ib_wc *out)
{
	unsigned long spins;
	struct ib_wc wc;
	int n;

	for (spins = 0; spins < 400000000UL; spins++) {
		n = ib_poll_cq(cq, 1, &wc);
		if (n < 0)
			return false;
		if (n == 1)
			break;
		sched_yield();
	}
	if (n != 1 || wc.wr_id != id)
		return false;
	*out = wc;
	/* exactly once: nothing else is outstanding on this CQ */
	return ib_poll_cq(cq, 1, &wc) == 0;
}

static bool guards_ok(const struct io_thr *t)
{
	return all(t->tgt, GUARD, GUARD_BYTE) &&
	       all(t->tgt + GUARD + GRANT, GUARD, GUARD_BYTE) &&
	       all(t->tgt + 2 * GUARD + GRANT, GRANT, GUARD_BYTE) &&
	       all(t->tgt + 2 * GUARD + 2 * GRANT, GUARD, GUARD_BYTE);
}

/* rdma_rw_ctx_* of the whole grant in @dir; the completion once. */
/*
 * The same transfer as page-sized bio_vecs on a device with the IOMMU:
 * each is an IOVA range linked at init and destroyed at destroy by this
 * thread while the other threads translate theirs (all under the
 * fabric's mem_lock).
 */
static bool rw_io_iova(struct io_thr *t, enum dma_data_direction dir)
{
	struct bio_vec bv[GRANT / PAGE_SIZE];
	struct bvec_iter it = { .bi_size = GRANT };
	struct rdma_rw_ctx ctx;
	struct ib_cqe cqe = { 0 };
	struct ib_wc wc;
	unsigned int i;
	bool ok;
	int ret;

	for (i = 0; i < GRANT / PAGE_SIZE; i++)
		bvec_set_virt(&bv[i], t->src + i * PAGE_SIZE, PAGE_SIZE);
	ret = rdma_rw_ctx_init_bvec(&ctx, t->h.qp[0], 1, bv, GRANT / PAGE_SIZE,
				    it, (u64)(uintptr_t)(t->tgt + GUARD),
				    t->tmr->rkey, dir);
	if (ret < 0)
		return false;
	t->iova_ios += ctx.type == RDMA_RW_IOVA;
	ret = rdma_rw_ctx_post(&ctx, t->h.qp[0], 1, &cqe, NULL);
	ok = !ret && one_wc(t->h.cq[0], (u64)(uintptr_t)&cqe, &wc) &&
	     wc.status == IB_WC_SUCCESS;
	rdma_rw_ctx_destroy_bvec(&ctx, t->h.qp[0], 1, bv, GRANT / PAGE_SIZE,
				 dir);
	return ok;
}

static bool rw_io(struct io_thr *t, enum dma_data_direction dir)
{
	struct scatterlist sg;
	struct rdma_rw_ctx ctx;
	struct ib_cqe cqe = { 0 };
	struct ib_wc wc;
	bool ok;
	int ret;

	if (t->iommu)
		return rw_io_iova(t, dir);
	sg_init_one(&sg, t->src, GRANT);
	ret = rdma_rw_ctx_init(&ctx, t->h.qp[0], 1, &sg, 1, 0,
			       (u64)(uintptr_t)(t->tgt + GUARD), t->tmr->rkey,
			       dir);
	if (ret < 0)
		return false;
	ret = rdma_rw_ctx_post(&ctx, t->h.qp[0], 1, &cqe, NULL);
	ok = !ret && one_wc(t->h.cq[0], (u64)(uintptr_t)&cqe, &wc) &&
	     wc.status == IB_WC_SUCCESS;
	rdma_rw_ctx_destroy(&ctx, t->h.qp[0], 1, &sg, 1, dir);
	return ok;
}

/* A plain verbs WRITE or READ of one SGE on @qp: the completion's status. */
static int verbs_io(struct io_thr *t, struct ib_qp *qp, enum ib_wr_opcode op,
		    u64 raddr, u32 rkey, u64 id, enum ib_wc_status *st)
{
	struct ib_sge sge = { .addr = (u64)(uintptr_t)t->src,
			      .length = GRANT,
			      .lkey = t->smr->lkey };
	struct ib_rdma_wr wr = { .wr = { .wr_id = id,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = op,
					 .send_flags = IB_SEND_SIGNALED },
				 .remote_addr = raddr,
				 .rkey = rkey };
	struct ib_wc wc;
	int ret;

	ret = ib_post_send(qp, &wr.wr, NULL);
	if (ret)
		return ret;
	if (!one_wc(qp->send_cq, id, &wc))
		return -EIO;
	*st = wc.status;
	return 0;
}

/*
 * The stale key: an MR over the second grant registered and deregistered,
 * then a WRITE with its rkey on a fresh pair (the error takes the QP to
 * ERROR): it must fail and change no byte.
 */
/* A fresh connected pair on the thread's PDs and CQs (false if not). */
static bool probe_pair(struct two_hosts *h, struct ib_qp **a, struct ib_qp **b)
{
	struct ib_qp_init_attr attr = {
		.send_cq = h->cq[0],
		.recv_cq = h->cq[0],
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};

	*a = ib_create_qp(h->pd[0], &attr);
	attr.send_cq = attr.recv_cq = h->cq[1];
	*b = ib_create_qp(h->pd[1], &attr);
	return !IS_ERR(*a) && !IS_ERR(*b) && !soft_qp_connect(*a, *b);
}

static bool stale_probe(struct io_thr *t, u32 seed)
{
	u8 *zone = t->tgt + 2 * GUARD + GRANT;
	enum ib_wc_status st = IB_WC_SUCCESS;
	struct ib_qp *a, *b;
	struct ib_mr *mr;
	u32 rkey;
	bool ok;

	mr = ib_reg_user_mr(t->h.pd[1], (u64)(uintptr_t)zone, GRANT,
			    (u64)(uintptr_t)zone, ACCESS);
	if (IS_ERR(mr))
		return false;
	rkey = mr->rkey;
	if (ib_dereg_mr(mr))
		return false;
	if (!probe_pair(&t->h, &a, &b))
		return false;
	fill(t->src, GRANT, seed);
	ok = !verbs_io(t, a, IB_WR_RDMA_WRITE, (u64)(uintptr_t)zone, rkey,
		       0x57a1e, &st);
	/*
	 * An iWARP WRITE completes at the initiator once sent (siw): the
	 * error is the responder's, so there it is the READ after it (on a
	 * QP the error may have taken down: a flush) that must not succeed.
	 */
	if (ok && st == IB_WC_SUCCESS && rdma_protocol_iwarp(a->device, 1))
		ok = !verbs_io(t, a, IB_WR_RDMA_READ, (u64)(uintptr_t)zone,
			       rkey, 0x57a1f, &st);
	ok = ok && st != IB_WC_SUCCESS;
	ib_destroy_qp(a);
	ib_destroy_qp(b);
	t->stale_probes++;
	return ok && guards_ok(t);
}

/*
 * ib_dereg_mr() racing a WRITE into the MR (on the threaded device the
 * progress thread runs it), on a fresh pair: once dereg has returned, no
 * byte of the region changes any more, whatever the WRITE's status.
 */
static bool dereg_race(struct io_thr *t, u32 seed)
{
	u8 *zone = t->tgt + 2 * GUARD + GRANT;
	static __thread u8 snap[GRANT];
	struct ib_qp *a, *b;
	struct ib_mr *mr;
	struct ib_wc wc;
	bool ok;
	struct ib_sge sge = { .addr = (u64)(uintptr_t)t->src,
			      .length = GRANT,
			      .lkey = t->smr->lkey };
	struct ib_rdma_wr wr = { .wr = { .wr_id = 0xdead,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IB_WR_RDMA_WRITE,
					 .send_flags = IB_SEND_SIGNALED },
				 .remote_addr = (u64)(uintptr_t)zone };

	if (!probe_pair(&t->h, &a, &b))
		return false;
	mr = ib_reg_user_mr(t->h.pd[1], (u64)(uintptr_t)zone, GRANT,
			    (u64)(uintptr_t)zone, ACCESS);
	if (IS_ERR(mr))
		return false;
	wr.rkey = mr->rkey;
	fill(t->src, GRANT, seed);
	if (ib_post_send(a, &wr.wr, NULL))
		return false;
	if (ib_dereg_mr(mr))
		return false;
	memcpy(snap, zone, GRANT);
	ok = one_wc(t->h.cq[0], 0xdead, &wc);
	ok = ok && !memcmp(snap, zone, GRANT);
	ib_destroy_qp(a);
	ib_destroy_qp(b);
	memset(zone, GUARD_BYTE, GRANT);
	return ok;
}

static void *io_main(void *arg)
{
	struct io_thr *t = arg;
	u8 *grant = t->tgt + GUARD;
	enum ib_wc_status st;
	u32 i, seed;

	for (i = 0; i < ITERS; i++) {
		seed = (u32)t->id * 1000 + i;
		/* WRITE through the R/W API, READ back through verbs */
		fill(t->src, GRANT, seed);
		if (!rw_io(t, DMA_TO_DEVICE) || memcmp(grant, t->src, GRANT))
			t->failures++;
		memset(t->src, 0, GRANT);
		if (verbs_io(t, t->h.qp[0], IB_WR_RDMA_READ,
			     (u64)(uintptr_t)grant, t->tmr->rkey, 2 * i + 1,
			     &st) ||
		    st != IB_WC_SUCCESS || memcmp(grant, t->src, GRANT))
			t->failures++;
		/* WRITE through verbs, READ back through the R/W API */
		fill(t->src, GRANT, seed + 7);
		if (verbs_io(t, t->h.qp[0], IB_WR_RDMA_WRITE,
			     (u64)(uintptr_t)grant, t->tmr->rkey, 2 * i + 2,
			     &st) ||
		    st != IB_WC_SUCCESS)
			t->failures++;
		memset(t->src, 0, GRANT);
		if (!rw_io(t, DMA_FROM_DEVICE))
			t->failures++;
		if (memcmp(t->src, grant, GRANT))
			t->failures++;
		if (!guards_ok(t))
			t->failures++;
		if (i % PROBE_EVERY == PROBE_EVERY - 1 && !stale_probe(t, seed))
			t->failures++;
		if (!dereg_race(t, seed))
			t->failures++;
	}
	return NULL;
}

/* Kind 0: ib_reg_user_mr / ib_dereg_mr on both devices. */
static void churn_reg(struct churn_thr *c)
{
	struct ib_mr *mr[4];
	int i, k;

	for (i = 0; i < CHURN_ITERS; i++) {
		for (k = 0; k < 4; k++) {
			mr[k] = ib_reg_user_mr(c->pd, (u64)(uintptr_t)c->buf,
					       (size_t)(k + 1) * PAGE_SIZE,
					       (u64)(uintptr_t)c->buf, ACCESS);
			if (IS_ERR(mr[k])) {
				c->failures++;
				mr[k] = NULL;
			}
		}
		for (k = 0; k < 4; k++)
			if (mr[k] && ib_dereg_mr(mr[k]))
				c->failures++;
	}
}

/*
 * A WRITE (and on iWARP the READ after it) with the rkey of a fast MR
 * invalidated before it was posted, on a fresh pair: it must not succeed
 * (c->buf is checked unchanged at the end).
 */
static bool inv_probe(struct churn_thr *c, u32 rkey)
{
	struct ib_sge sge = { .addr = (u64)(uintptr_t)c->src,
			      .length = PAGE_SIZE,
			      .lkey = c->smr->lkey };
	struct ib_rdma_wr wr = { .wr = { .wr_id = 0x1a7,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IB_WR_RDMA_WRITE,
					 .send_flags = IB_SEND_SIGNALED },
				 .remote_addr = (u64)(uintptr_t)c->buf,
				 .rkey = rkey };
	struct ib_qp *a, *b;
	struct ib_wc wc;
	bool ok;

	if (!probe_pair(&c->h, &a, &b))
		return false;
	ok = !ib_post_send(a, &wr.wr, NULL) && one_wc(c->h.cq[0], 0x1a7, &wc);
	if (ok && wc.status == IB_WC_SUCCESS &&
	    rdma_protocol_iwarp(a->device, 1)) {
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.wr.wr_id = 0x1a8;
		ok = !ib_post_send(a, &wr.wr, NULL) &&
		     one_wc(c->h.cq[0], 0x1a8, &wc);
	}
	ok = ok && wc.status != IB_WC_SUCCESS;
	ib_destroy_qp(a);
	ib_destroy_qp(b);
	return ok;
}

/* Kind 1: fast registration and local invalidation on the churn pair. */
static void churn_frwr(struct churn_thr *c)
{
	struct ib_qp *qp = c->h.qp[1];
	struct scatterlist sg;
	struct ib_mr *mr;
	struct ib_wc wc;
	int i;

	mr = ib_alloc_mr(c->h.pd[1], IB_MR_TYPE_MEM_REG, 4);
	if (IS_ERR(mr)) {
		c->failures++;
		return;
	}
	for (i = 0; i < CHURN_ITERS; i++) {
		struct ib_reg_wr reg = {
			.wr = { .wr_id = 1,
				.opcode = IB_WR_REG_MR,
				.send_flags = IB_SEND_SIGNALED },
			.mr = mr,
			.access = ACCESS,
		};
		struct ib_send_wr inv = { .wr_id = 2,
					  .opcode = IB_WR_LOCAL_INV,
					  .send_flags = IB_SEND_SIGNALED };

		sg_init_one(&sg, c->buf, 2 * PAGE_SIZE);
		sg.dma_address = (u64)(uintptr_t)c->buf;
		sg.dma_length = 2 * PAGE_SIZE;
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		if (ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) != 1) {
			c->failures++;
			break;
		}
		reg.key = mr->rkey;
		if (ib_post_send(qp, &reg.wr, NULL) ||
		    !one_wc(c->h.cq[1], 1, &wc) || wc.status != IB_WC_SUCCESS)
			c->failures++;
		inv.ex.invalidate_rkey = mr->rkey;
		if (ib_post_send(qp, &inv, NULL) ||
		    !one_wc(c->h.cq[1], 2, &wc) || wc.status != IB_WC_SUCCESS)
			c->failures++;
		if (i % 10 == 9 && !inv_probe(c, mr->rkey))
			c->failures++;
	}
	if (ib_dereg_mr(mr))
		c->failures++;
}

static void *churn_main(void *arg)
{
	struct churn_thr *c = arg;

	if (c->kind == 0)
		churn_reg(c);
	else
		churn_frwr(c);
	return NULL;
}

static void pair_open(struct two_hosts *h, const struct soft_env *env)
{
	struct ib_qp_init_attr attr[2];
	int s;

	memset(h, 0, sizeof(*h));
	h->fabric = env->fabric;
	h->dev[0] = env->dev[0];
	h->dev[1] = env->dev[1];
	for (s = 0; s < 2; s++) {
		attr[s] = (struct ib_qp_init_attr){
			.cap = { .max_send_wr = 32,
				 .max_recv_wr = 4,
				 .max_send_sge = 1,
				 .max_recv_sge = 1,
				 .max_rdma_ctxs = 4 },
			.sq_sig_type = IB_SIGNAL_REQ_WR,
			.qp_type = IB_QPT_RC,
			.port_num = 1,
		};
		assert_int_equal(two_hosts_side(h, s, 64, IB_POLL_DIRECT), 0);
	}
	assert_int_equal(two_hosts_qps(h, attr, true), 0);
}

static u8 *zalloc(size_t n, int v)
{
	u8 *p = aligned_alloc(PAGE_SIZE, n);

	assert_non_null(p);
	memset(p, v, n);
	return p;
}

static void run_mode(const char *profile, bool threaded, bool iommu)
{
	struct soft_env env;
	struct io_thr *io;
	struct churn_thr *ch;
	struct soft_stats st0, st1, s;
	int i, k;

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = profile,
						    .threaded = threaded,
						    .iommu = iommu });
	assert_int_equal(soft_device_stats(env.dev[0], &st0), 0);
	assert_int_equal(soft_device_stats(env.dev[1], &st1), 0);
	io = aligned_alloc(64, sizeof(*io) * IO_THREADS);
	ch = aligned_alloc(64, sizeof(*ch) * CHURN_THREADS);
	assert_non_null(io);
	assert_non_null(ch);
	memset(io, 0, sizeof(*io) * IO_THREADS);
	memset(ch, 0, sizeof(*ch) * CHURN_THREADS);
	for (i = 0; i < IO_THREADS; i++) {
		struct io_thr *t = &io[i];

		pair_open(&t->h, &env);
		t->id = i;
		t->iommu = iommu;
		t->tgt = zalloc(3 * GUARD + 2 * GRANT, GUARD_BYTE);
		t->src = zalloc(GRANT, 0);
		t->tmr = ib_reg_user_mr(
			t->h.pd[1], (u64)(uintptr_t)(t->tgt + GUARD), GRANT,
			(u64)(uintptr_t)(t->tgt + GUARD), ACCESS);
		t->smr = ib_reg_user_mr(t->h.pd[0], (u64)(uintptr_t)t->src,
					GRANT, (u64)(uintptr_t)t->src, ACCESS);
		assert_false(IS_ERR(t->tmr));
		assert_false(IS_ERR(t->smr));
	}
	for (k = 0; k < CHURN_THREADS; k++) {
		struct churn_thr *c = &ch[k];

		c->kind = k;
		c->buf = zalloc(4 * PAGE_SIZE, 0x3c);
		if (k == 0) {
			c->pd = ib_alloc_pd(env.dev[1], 0);
			assert_false(IS_ERR(c->pd));
		} else {
			pair_open(&c->h, &env);
			c->src = zalloc(PAGE_SIZE, 0x99);
			c->smr = ib_reg_user_mr(
				c->h.pd[0], (u64)(uintptr_t)c->src, PAGE_SIZE,
				(u64)(uintptr_t)c->src, ACCESS);
			assert_false(IS_ERR(c->smr));
		}
	}
	for (i = 0; i < IO_THREADS; i++)
		assert_int_equal(
			pthread_create(&io[i].tid, NULL, io_main, &io[i]), 0);
	for (k = 0; k < CHURN_THREADS; k++)
		assert_int_equal(
			pthread_create(&ch[k].tid, NULL, churn_main, &ch[k]),
			0);
	for (i = 0; i < IO_THREADS; i++)
		pthread_join(io[i].tid, NULL);
	for (k = 0; k < CHURN_THREADS; k++)
		pthread_join(ch[k].tid, NULL);
	for (i = 0; i < IO_THREADS; i++) {
		struct io_thr *t = &io[i];

		assert_int_equal(t->failures, 0);
		assert_int_equal(t->stale_probes, ITERS / PROBE_EVERY);
		/* every R/W of an IOMMU run went through an IOVA range */
		assert_int_equal(t->iova_ios, iommu ? 2 * ITERS : 0);
		assert_true(guards_ok(t));
		assert_int_equal(ib_dereg_mr(t->tmr), 0);
		assert_int_equal(ib_dereg_mr(t->smr), 0);
		assert_int_equal(two_hosts_close_objects(&t->h), 0);
		free(t->tgt);
		free(t->src);
	}
	for (k = 0; k < CHURN_THREADS; k++) {
		struct churn_thr *c = &ch[k];

		assert_int_equal(c->failures, 0);
		assert_true(all(c->buf, 4 * PAGE_SIZE, 0x3c));
		if (c->pd) {
			ib_dealloc_pd(c->pd);
		} else {
			assert_int_equal(ib_dereg_mr(c->smr), 0);
			assert_int_equal(two_hosts_close_objects(&c->h), 0);
			free(c->src);
		}
		free(c->buf);
	}
	/* nothing left beyond what the env itself holds */
	assert_int_equal(soft_device_stats(env.dev[0], &s), 0);
	assert_int_equal(s.mrs, st0.mrs);
	assert_int_equal(s.qps, st0.qps);
	assert_int_equal(s.cqs, st0.cqs);
	assert_int_equal(s.pds, st0.pds);
	assert_int_equal(s.cq_overflows, st0.cq_overflows);
	assert_int_equal(soft_device_stats(env.dev[1], &s), 0);
	assert_int_equal(s.mrs, st1.mrs);
	assert_int_equal(s.qps, st1.qps);
	assert_int_equal(s.cqs, st1.cqs);
	assert_int_equal(s.pds, st1.pds);
	assert_int_equal(s.iova_ranges, 0);
	free(io);
	free(ch);
	soft_env_fini(&env);
}

static void run(const char *profile, bool threaded)
{
	run_mode(profile, threaded, false);
}

/* IOVA ranges linked and destroyed on every thread at once. */
static void test_rxe_iommu(void **state)
{
	(void)state;
	run_mode("rxe", false, true);
	run_mode("rxe", true, true);
}

static void test_rxe(void **state)
{
	(void)state;
	run("rxe", false);
	run("rxe", true);
}

static void test_siw(void **state)
{
	(void)state;
	run("siw", false);
	run("siw", true);
}

static void test_mlx5(void **state)
{
	(void)state;
	run("mlx5", false);
	run("mlx5", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rxe),
		cmocka_unit_test(test_rxe_iommu),
		cmocka_unit_test(test_siw),
		cmocka_unit_test(test_mlx5),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

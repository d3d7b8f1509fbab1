// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The R/W tests' fixture (see rw_env.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_env.h"
#include "helpers/ibv_env.h"
#include "rw/rw_internal.h"

#include <sched.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct rw_profile rw_profiles[] = {
	{ "mlx5", false, "mlx5" },
	{ "rxe", false, "rxe" },
	{ "siw", false, "siw" },
	{ "rxe", true, "rxe+iommu" },
};
const unsigned int rw_nr_profiles =
	sizeof(rw_profiles) / sizeof(rw_profiles[0]);

/* ---- the device the suite runs on ------------------------------------ */

static struct rw_profile dev_profile = { .ibv = true };
static const char *dev_addr;
static int dev_known; /* 0: not looked at yet, 1: none, 2: dev_profile */

static void __attribute__((noreturn)) no_device(const char *why)
{
	fprintf(stderr, "RDMARW_TEST_DEVICE=%s: %s\n",
		getenv("RDMARW_TEST_DEVICE"), why);
	exit(2);
}

#ifdef RDMARW_HAVE_IBV
static void close_devices(void)
{
	rdmarw_ibv_close_all();
}

static void open_device(const char *name)
{
	struct ib_device *dev = rdmarw_ibv_open(name);

	if (IS_ERR(dev))
		no_device(strerror((int)-PTR_ERR(dev)));
	dev_addr = getenv("RDMARW_TEST_ADDR");
	if (!dev_addr || !*dev_addr)
		no_device("RDMARW_TEST_ADDR (its rdma_cm address) is not set");
	atexit(close_devices);
	dev_profile.name = dev_profile.label = dev->name;
}
#else
static void open_device(const char *name)
{
	no_device("built without the libibverbs backend");
}
#endif

const struct rw_profile *rw_test_device(void)
{
	const char *name;

	if (!dev_known) {
		name = getenv("RDMARW_TEST_DEVICE");
		dev_known = 1;
		if (name && *name) {
			open_device(name);
			dev_known = 2;
		}
	}
	return dev_known == 2 ? &dev_profile : NULL;
}

const struct rw_profile *rw_test_profiles(unsigned int *n)
{
	if (rw_test_device()) {
		*n = 1;
		return &dev_profile;
	}
	*n = rw_nr_profiles;
	return rw_profiles;
}

const struct rw_profile *rw_test_pick(const struct rw_profile *soft)
{
	return rw_test_device() ? &dev_profile : soft;
}

void rw_skip_on_device(void)
{
	if (rw_test_device())
		skip();
}

void rw_skip_on_soft(void)
{
	if (!rw_test_device())
		skip();
}

static u8 *arena(size_t len)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, PAGE_SIZE, len), 0);
	return p;
}

static void make_profile(struct soft_profile *p, const struct rw_env_opts *o)
{
	assert_int_equal(soft_profile_get(o->profile->name, p), 0);
	p->iommu = o->profile->iommu;
	p->threaded = o->threaded;
	if (o->set_max_sgl_rd)
		p->attrs.max_sgl_rd = o->max_sgl_rd;
	if (o->fr_len)
		p->attrs.max_fast_reg_page_list_len = o->fr_len;
	if (o->no_fast_reg)
		p->attrs.device_cap_flags &= ~(u64)IB_DEVICE_MEM_MGT_EXTENSIONS;
}

static void qp_attr(struct ib_qp_init_attr *a, struct ib_cq *cq, u32 send_wr,
		    u32 send_sge, u32 rdma_ctxs)
{
	memset(a, 0, sizeof(*a));
	a->send_cq = cq;
	a->recv_cq = cq;
	a->cap.max_send_wr = send_wr;
	a->cap.max_recv_wr = 16;
	a->cap.max_send_sge = send_sge;
	a->cap.max_recv_sge = 1;
	a->cap.max_rdma_ctxs = rdma_ctxs;
	a->sq_sig_type = IB_SIGNAL_REQ_WR;
	a->qp_type = IB_QPT_RC;
	a->port_num = 1;
}

static int cq_entries(struct ib_device *dev)
{
	return dev->attrs.max_cqe < 8192 ? dev->attrs.max_cqe : 8192;
}

/* Both QPs' attributes (CQs: the caller's, or two_hosts_qps()'s). */
static void both_attrs(struct ib_qp_init_attr *a, struct ib_qp_init_attr *pa,
		       const struct rw_env_opts *o, int dev_sge,
		       struct ib_cq *cq, struct ib_cq *peer_cq)
{
	u32 sge, wr;

	sge = o->max_send_sge ? o->max_send_sge : (u32)dev_sge;
	wr = o->max_send_wr || o->exact_send_wr ? o->max_send_wr : 256;
	qp_attr(a, cq, wr, sge, o->max_rdma_ctxs);
	qp_attr(pa, peer_cq, 64, 1, 0);
}

/*
 * Two software devices of the profile on a fabric of their own, connected
 * (tools/common/two_hosts.c).
 */
static void soft_hosts(struct rw_env *e, const struct rw_env_opts *o)
{
	struct two_hosts_cfg hc = { 0 };
	struct soft_profile p;
	int ret;

	make_profile(&p, o);
	e->siw_pages = p.protocol == RDMA_PROTOCOL_IWARP;
	hc.profile = &p;
	hc.cqe[0] = hc.cqe[1] = p.attrs.max_cqe < 8192 ? p.attrs.max_cqe : 8192;
	hc.cq_thread[0] = o->cq_thread;
	both_attrs(&hc.attr[0], &hc.attr[1], o, p.attrs.max_send_sge, NULL,
		   NULL);
	ret = two_hosts_open(&e->hosts, &hc);
	if (ret)
		fail_msg("%s: %d", e->hosts.failed, ret);
	e->fabric = e->hosts.fabric;
	e->dev = e->hosts.dev[0];
	e->peer_dev = e->hosts.dev[1];
	e->pd = e->hosts.pd[0];
	e->peer_pd = e->hosts.pd[1];
	e->cq = e->hosts.cq[0];
	e->peer_cq = e->hosts.cq[1];
	e->qp = e->hosts.qp[0];
	e->peer_qp = e->hosts.qp[1];
}

/* Both QPs on the ibv device, connected through rdma_cm. */
static void make_qps(struct rw_env *e, const struct rw_env_opts *o)
{
	struct ib_qp_init_attr a, pa;

	both_attrs(&a, &pa, o, e->dev->attrs.max_send_sge, e->cq, e->peer_cq);
#ifdef RDMARW_HAVE_IBV
	{
		struct ibv_pair *pair = calloc(1, sizeof(*pair));
		int ret;

		assert_non_null(pair);
		ret = ibv_pair_connect(pair, dev_addr, e->pd, &a, e->peer_pd,
				       &pa, NULL, 0);
		if (ret)
			fail_msg("connecting two QPs on %s at %s: %s",
				 e->dev->name, dev_addr, strerror(-ret));
		e->pair = pair;
		e->qp = pair->qp;
		e->peer_qp = pair->peer_qp;
	}
#endif
}

void rw_env_setup(struct rw_env *e, const struct rw_env_opts *o)
{
	memset(e, 0, sizeof(*e));
	e->profile = o->profile;
	if (rw_env_soft(e)) {
		soft_hosts(e, o);
		goto arenas;
	}
	/* The software device's knobs have no meaning here. */
	assert_false(o->set_max_sgl_rd || o->profile->iommu);
	e->dev = ib_device_get_by_name(o->profile->name);
	assert_non_null(e->dev);
	e->peer_dev = e->dev;
	e->pd = ib_alloc_pd(e->dev, 0);
	assert_false(IS_ERR(e->pd));
	e->peer_pd = ib_alloc_pd(e->peer_dev, 0);
	assert_false(IS_ERR(e->peer_pd));
	e->cq = ib_alloc_cq(e->dev, NULL, cq_entries(e->dev), 0,
			    o->cq_thread ? IB_POLL_WORKQUEUE : IB_POLL_DIRECT);
	assert_false(IS_ERR(e->cq));
	e->peer_cq = ib_alloc_cq(e->peer_dev, NULL, cq_entries(e->peer_dev), 0,
				 IB_POLL_DIRECT);
	assert_false(IS_ERR(e->peer_cq));
	make_qps(e, o);
arenas:
	e->local_len = o->local_len ? o->local_len : 4 << 20;
	e->local_len = (e->local_len + PAGE_SIZE - 1) & PAGE_MASK;
	e->remote_len = o->remote_len ? o->remote_len : 4 << 20;
	e->remote_len = (e->remote_len + PAGE_SIZE - 1) & PAGE_MASK;
	e->local = arena(e->local_len);
	e->remote = arena(e->remote_len);
	e->local_ref = malloc(e->local_len);
	e->remote_ref = malloc(e->remote_len);
	assert_non_null(e->local_ref);
	assert_non_null(e->remote_ref);
	e->remote_mr =
		ib_reg_user_mr(e->peer_pd, (u64)(uintptr_t)e->remote,
			       e->remote_len, (u64)(uintptr_t)e->remote,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_WRITE);
	assert_false(IS_ERR(e->remote_mr));
#ifdef RDMARW_HAVE_IBV
	/* One registration serves every SGE in the local arena. */
	if (!rw_env_soft(e)) {
		e->scratch = arena(PAGE_SIZE);
		assert_int_equal(
			rdmarw_ibv_declare(e->pd, e->local, e->local_len), 0);
		assert_int_equal(
			rdmarw_ibv_declare(e->pd, e->scratch, PAGE_SIZE), 0);
	}
#endif
	rw_env_fill(e, 1);
}

void rw_env_teardown(struct rw_env *e)
{
	struct soft_stats st;

	assert_int_equal(e->qp->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e->dev), 0);
	if (rw_env_soft(e)) {
		assert_int_equal(soft_device_stats(e->dev, &st), 0);
		assert_int_equal(st.iova_ranges, 0);
	}
	if (e->qp->rw_cache)
		assert_int_equal(e->qp->rw_cache->in_use, 0);
	assert_int_equal(ib_dereg_mr(e->remote_mr), 0);
	if (rw_env_soft(e)) {
		/* a test may have replaced a QP */
		e->hosts.qp[0] = e->qp;
		e->hosts.qp[1] = e->peer_qp;
		assert_int_equal(two_hosts_close(&e->hosts), 0);
		goto arenas;
	}
#ifdef RDMARW_HAVE_IBV
	assert_int_equal(ibv_pair_destroy(e->pair), 0);
	free(e->pair);
#endif
	assert_int_equal(ib_free_cq(e->cq), 0);
	assert_int_equal(ib_free_cq(e->peer_cq), 0);
	assert_int_equal(ib_dealloc_pd(e->pd), 0);
	assert_int_equal(ib_dealloc_pd(e->peer_pd), 0);
arenas:
	free(e->local);
	free(e->remote);
	free(e->scratch);
	free(e->local_ref);
	free(e->remote_ref);
	memset(e, 0, sizeof(*e));
}

static void fill(u8 *p, size_t n, unsigned int seed)
{
	u32 x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (u8)x;
	}
}

void rw_env_fill(struct rw_env *e, unsigned int seed)
{
	fill(e->local, e->local_len, seed);
	fill(e->remote, e->remote_len, seed + 0x9e37u);
	memcpy(e->local_ref, e->local, e->local_len);
	memcpy(e->remote_ref, e->remote, e->remote_len);
}

static void check_arena(const u8 *got, const u8 *want, size_t n,
			const char *what)
{
	size_t i;

	if (!memcmp(got, want, n))
		return;
	for (i = 0; i < n && got[i] == want[i]; i++)
		;
	fail_msg("%s differs at offset %zu: %#x, want %#x", what, i, got[i],
		 want[i]);
}

void rw_env_check(struct rw_env *e)
{
	rw_env_settle(e);
	check_arena(e->local, e->local_ref, e->local_len, "local arena");
	check_arena(e->remote, e->remote_ref, e->remote_len, "remote arena");
}

u64 rw_env_expect(struct rw_env *e, const struct rw_model_ent *ents, u32 n,
		  u32 offset, u64 roff, enum dma_data_direction dir)
{
	u64 moved = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		u32 skip = offset < ents[i].len ? offset : ents[i].len;
		size_t lo = (size_t)(ents[i].addr - (uintptr_t)e->local) + skip;
		u32 len = ents[i].len - skip;

		offset -= skip;
		if (!len)
			continue;
		assert_true(lo + len <= e->local_len);
		assert_true(roff + moved + len <= e->remote_len);
		if (dir == DMA_TO_DEVICE)
			memcpy(e->remote_ref + roff + moved, e->local_ref + lo,
			       len);
		else
			memcpy(e->local_ref + lo, e->remote_ref + roff + moved,
			       len);
		moved += len;
	}
	return moved;
}

static void done_cb(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rw_done *d = container_of(wc->wr_cqe, struct rw_done, cqe);

	d->count++;
	d->status = wc->status;
	d->opcode = wc->opcode;
}

void rw_done_init(struct rw_done *d)
{
	memset(d, 0, sizeof(*d));
	d->cqe.done = done_cb;
	d->status = IB_WC_GENERAL_ERR;
}

/* Gives up after WAIT_S seconds: a completion that never comes (a bug, or
 * a device that drops it) must not hang the suite. */
#define WAIT_S 60

static void wait_cq(struct ib_cq *cq, const int *count, int want)
{
	unsigned long spins;
	time_t end = time(NULL) + WAIT_S;

	for (spins = 0; __atomic_load_n(count, __ATOMIC_ACQUIRE) < want;
	     spins++) {
		if (!(spins & 1023) && time(NULL) > end)
			fail_msg("completion never came (%d of %d)", *count,
				 want);
		if (cq->poll_ctx != IB_POLL_DIRECT ||
		    ib_process_cq_direct(cq, -1) <= 0)
			sched_yield();
	}
}

void rw_env_wait(struct rw_env *e, const int *count, int want)
{
	wait_cq(e->cq, count, want);
}

void rw_env_settle(struct rw_env *e)
{
	struct ib_sge sge;
	struct ib_rdma_wr wr;
	struct rw_done d;

	if (rw_env_soft(e) || !rdma_protocol_iwarp(e->dev, 1))
		return;
	sge.addr = (u64)(uintptr_t)e->scratch;
	sge.length = 1;
	sge.lkey = e->pd->local_dma_lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.remote_addr = rw_env_raddr(e, 0);
	wr.rkey = e->remote_mr->rkey;
	rw_done_init(&d);
	wr.wr.wr_cqe = &d.cqe;
	/* a QP that cannot send any more lets nothing else land either */
	if (!ib_post_send(e->qp, &wr.wr, NULL))
		rw_env_wait(e, &d.count, 1);
}

int rw_env_drain_cq(struct rw_env *e)
{
	int n, total = 0;

	while ((n = ib_process_cq_direct(e->cq, -1)) > 0)
		total += n;
	return total;
}

/* ---- buffers -------------------------------------------------------- */

void rw_sgl_build(struct rw_sgl *s, const struct rw_model_ent *ents, u32 n,
		  u32 chunk)
{
	u32 per = chunk > 1 ? chunk - 1 : n, i, a, left = n;
	struct scatterlist *sg;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->ents = calloc(n, sizeof(*ents));
	assert_non_null(s->ents);
	memcpy(s->ents, ents, n * sizeof(*ents));
	s->nr_arrays = (n + per - 1) / per;
	s->arrays = calloc(s->nr_arrays, sizeof(*s->arrays));
	assert_non_null(s->arrays);
	for (a = 0, i = 0; a < s->nr_arrays; a++) {
		u32 k = left < per ? left : per;
		u32 slots = a + 1 < s->nr_arrays ? k + 1 : k;
		u32 j;

		sg = calloc(slots, sizeof(*sg));
		assert_non_null(sg);
		sg_init_table(sg, slots);
		for (j = 0; j < k; j++, i++)
			sg_set_buf(&sg[j], (void *)(uintptr_t)ents[i].addr,
				   ents[i].len);
		if (a)
			sg_chain(s->arrays[a - 1], per + 1, sg);
		s->arrays[a] = sg;
		left -= k;
	}
	s->sg = s->arrays[0];
}

void rw_sgl_free(struct rw_sgl *s)
{
	u32 a;

	for (a = 0; a < s->nr_arrays; a++)
		free(s->arrays[a]);
	free(s->arrays);
	free(s->ents);
	memset(s, 0, sizeof(*s));
}

bool rw_place(struct rw_env *e, struct rw_model_ent *ents, const u32 *lens,
	      u32 n, u64 start, bool aligned, u32 gap)
{
	u64 pos = start;
	u32 i;

	for (i = 0; i < n; i++) {
		if (i && aligned)
			pos = (pos + PAGE_SIZE - 1) & PAGE_MASK;
		else if (i)
			pos += gap;
		if (pos + lens[i] > e->local_len)
			return false;
		ents[i].addr = (u64)(uintptr_t)e->local + pos;
		ents[i].len = lens[i];
		pos += lens[i];
	}
	return true;
}

void rw_model_in_init(struct rw_model_in *in, struct rw_env *e,
		      struct rw_model_mr *pool, u32 pool_max,
		      const struct rw_model_ent *ents, u32 n, u32 offset,
		      bool bvec, enum dma_data_direction dir, u64 roff)
{
	memset(in, 0, sizeof(*in));
	in->ents = ents;
	in->nents = n;
	in->offset = offset;
	in->bvec = bvec;
	in->dir = dir;
	in->remote_addr = rw_env_raddr(e, roff);
	in->rkey = e->remote_mr->rkey;
	in->force_mr = rdma_rw_get_force_mr();
	in->pool = pool;
	in->pool_len = rw_model_pool_snapshot(e->qp, pool, pool_max);
	if (in->pool_len > pool_max)
		in->pool_len = pool_max;
	in->siw_pages = e->siw_pages;
}

/* ---- one transfer ---------------------------------------------------- */

/* The pieces a bio_vec iterator covers, clipped by skip and trim. */
static u32 clip_pieces(const struct rw_case *c, struct rw_model_ent *segs)
{
	u64 total = 0, pos = 0, lo, hi;
	u32 i, n = 0;

	for (i = 0; i < c->n; i++)
		total += c->ents[i].len;
	lo = c->skip;
	hi = total - c->trim;
	for (i = 0; i < c->n; i++) {
		u64 a = pos, b = pos + c->ents[i].len;
		u64 s = a > lo ? a : lo, t = b < hi ? b : hi;

		pos = b;
		if (s >= t)
			continue;
		segs[n].addr = c->ents[i].addr + (s - a);
		segs[n].len = (u32)(t - s);
		n++;
	}
	return n;
}

struct case_state {
	struct rdma_rw_ctx ctx;
	struct rw_sgl sgl;
	struct bio_vec *bv;
	struct bvec_iter it;
	struct rw_model_ent *segs;
	u32 nsegs;
	struct rw_done done, sdone, rdone;
	struct ib_send_wr send;
	struct ib_sge send_sge, recv_sge;
	u8 send_buf[16], recv_buf[64];
};

static void build_input(struct case_state *st, const struct rw_case *c)
{
	u32 i;

	if (!c->bvec) {
		rw_sgl_build(&st->sgl, c->ents, c->n, c->chunk);
		return;
	}
	st->bv = calloc(c->n, sizeof(*st->bv));
	st->segs = calloc(c->n, sizeof(*st->segs));
	assert_non_null(st->bv);
	assert_non_null(st->segs);
	for (i = 0; i < c->n; i++)
		bvec_set_virt(&st->bv[i], (void *)(uintptr_t)c->ents[i].addr,
			      c->ents[i].len);
	st->nsegs = clip_pieces(c, st->segs);
	memset(&st->it, 0, sizeof(st->it));
	for (i = 0; i < st->nsegs; i++)
		st->it.bi_size += st->segs[i].len;
	st->it.bi_size += c->skip;
	bvec_iter_advance(st->bv, &st->it, c->skip);
}

static void free_input(struct case_state *st, const struct rw_case *c)
{
	if (!c->bvec)
		rw_sgl_free(&st->sgl);
	free(st->bv);
	free(st->segs);
}

static int do_init(struct rw_env *e, struct case_state *st,
		   const struct rw_case *c)
{
	u64 raddr = rw_env_raddr(e, c->roff);

	if (c->bvec)
		return rdma_rw_ctx_init_bvec(&st->ctx, e->qp, 1, st->bv, c->n,
					     st->it, raddr, e->remote_mr->rkey,
					     c->dir);
	return rdma_rw_ctx_init(&st->ctx, e->qp, 1, st->sgl.sg, c->n, c->offset,
				raddr, e->remote_mr->rkey, c->dir);
}

static void do_destroy(struct rw_env *e, struct case_state *st,
		       const struct rw_case *c)
{
	if (c->bvec)
		rdma_rw_ctx_destroy_bvec(&st->ctx, e->qp, 1, st->bv, c->n,
					 c->dir);
	else
		rdma_rw_ctx_destroy(&st->ctx, e->qp, 1, st->sgl.sg, c->n,
				    c->dir);
}

/* What the QP and device hold, to compare before and after a case. */
struct held_state {
	int mrs_used;
	long dma_mapped;
	unsigned long blocks;
	u32 iova_ranges;
};

static void held_now(struct rw_env *e, struct held_state *h)
{
	struct soft_stats st = { 0 };

	if (rw_env_soft(e))
		assert_int_equal(soft_device_stats(e->dev, &st), 0);
	h->mrs_used = e->qp->mrs_used;
	h->dma_mapped = rdmarw_dma_mapped(e->dev);
	h->blocks = e->qp->rw_cache ? e->qp->rw_cache->in_use : 0;
	h->iova_ranges = st.iova_ranges;
}

static void assert_held_as(struct rw_env *e, const struct held_state *was,
			   const char *name)
{
	struct held_state now;

	held_now(e, &now);
	if (now.mrs_used != was->mrs_used ||
	    now.dma_mapped != was->dma_mapped || now.blocks != was->blocks ||
	    now.iova_ranges != was->iova_ranges)
		fail_msg(
			"%s: left held: mrs_used %d (was %d), dma_mapped %ld (was %ld), blocks %lu (was %lu), iova %u (was %u)",
			name, now.mrs_used, was->mrs_used, now.dma_mapped,
			was->dma_mapped, now.blocks, was->blocks,
			now.iova_ranges, was->iova_ranges);
}

/* The model's input: before init from the QP's pool, after init from the
 * MRs the context holds (in their current state). */
static void model_for_post(struct rw_env *e, struct case_state *st,
			   const struct rw_case *c, bool from_ctx,
			   struct rw_model_mr *pool, struct rw_model_in *in)
{
	u32 i;

	if (c->bvec)
		rw_model_in_init(in, e, pool, 64, st->segs, st->nsegs, 0, true,
				 c->dir, c->roff);
	else
		rw_model_in_init(in, e, pool, 64, c->ents, c->n, c->offset,
				 false, c->dir, c->roff);
	if (!from_ctx || st->ctx.type != RDMA_RW_MR)
		return;
	for (i = 0; i < st->ctx.nr_ops && i < 64; i++) {
		pool[i].mr = st->ctx.reg[i].mr;
		pool[i].key = pool[i].mr->lkey;
		pool[i].need_inval = pool[i].mr->need_inval;
	}
	in->pool_len = st->ctx.nr_ops;
}

static void post_recv(struct rw_env *e, struct case_state *st)
{
	struct ib_recv_wr rwr = { 0 };

	st->recv_sge.addr = (u64)(uintptr_t)st->recv_buf;
	st->recv_sge.length = sizeof(st->recv_buf);
	st->recv_sge.lkey = e->peer_pd->local_dma_lkey;
	rwr.wr_cqe = &st->rdone.cqe;
	rwr.sg_list = &st->recv_sge;
	rwr.num_sge = 1;
	assert_int_equal(ib_post_recv(e->peer_qp, &rwr, NULL), 0);
}

/*
 * The SEND appended to the context.  After a READ on iWARP it is fenced:
 * siw completes a SEND once it is sent, before the response of a READ
 * posted ahead of it has been placed (IB completes in order), so only the
 * fence makes its completion say that the READ's bytes are there.
 */
static void prepare_send(struct rw_env *e, struct case_state *st,
			 enum dma_data_direction dir)
{
	memset(&st->send, 0, sizeof(st->send));
	memset(st->send_buf, 0x5a, sizeof(st->send_buf));
	st->send_sge.addr = (u64)(uintptr_t)st->send_buf;
	st->send_sge.length = sizeof(st->send_buf);
	st->send_sge.lkey = e->pd->local_dma_lkey;
	st->send.opcode = IB_WR_SEND;
	st->send.sg_list = &st->send_sge;
	st->send.num_sge = 1;
	st->send.send_flags = IB_SEND_SIGNALED;
	if (dir == DMA_FROM_DEVICE && rdma_protocol_iwarp(e->dev, 1))
		st->send.send_flags |= IB_SEND_FENCE;
	st->send.wr_cqe = &st->sdone.cqe;
}

static u32 chain_len(const struct ib_send_wr *wr, const struct ib_send_wr *end)
{
	u32 n = 0;

	for (; wr && wr != end; wr = wr->next)
		n++;
	return n;
}

static void one_post(struct rw_env *e, struct case_state *st,
		     const struct rw_case *c, u32 post, int ret)
{
	struct rw_model_mr pool[64];
	struct ib_send_wr *chain = c->use_chain ? &st->send : NULL;
	struct ib_cqe *cqe = c->use_chain ? NULL : &st->done.cqe;
	const struct ib_send_wr *first, *bad = NULL;
	struct rw_model_in in;
	struct rw_model_out m;
	char why[256];

	model_for_post(e, st, c, true, pool, &in);
	rw_model_chain(e->qp, 1, &in, cqe, chain, &m);
	if (!post)
		assert_int_equal(ret, m.ret);
	if (c->use_chain) {
		prepare_send(e, st, c->dir);
		post_recv(e, st);
	}
	first = rdma_rw_ctx_wrs(&st->ctx, e->qp, 1, cqe, chain);
	assert_non_null(first);
	if (!rw_model_check_chain(first, &m, chain, why, sizeof(why)))
		fail_msg("%s (post %u): %s", c->name, post, why);
	if (!post)
		assert_int_equal(chain_len(first, chain), (u32)ret);
	assert_int_equal(ib_post_send(e->qp, first, &bad), 0);
	if (c->use_chain) {
		rw_env_wait(e, &st->sdone.count, (int)post + 1);
		wait_cq(e->peer_cq, &st->rdone.count, (int)post + 1);
		assert_int_equal(st->sdone.status, IB_WC_SUCCESS);
		assert_int_equal(st->rdone.status, IB_WC_SUCCESS);
		assert_int_equal(st->done.count, 0);
	} else {
		rw_env_wait(e, &st->done.count, (int)post + 1);
		if (st->done.status != IB_WC_SUCCESS)
			fail_msg("%s (post %u): completion %s", c->name, post,
				 ib_wc_status_msg(st->done.status));
	}
	if (c->bvec)
		rw_env_expect(e, st->segs, st->nsegs, 0, c->roff, c->dir);
	else
		rw_env_expect(e, c->ents, c->n, c->offset, c->roff, c->dir);
	if (c->dir == DMA_TO_DEVICE)
		rw_env_settle(e);
	if (memcmp(e->local, e->local_ref, e->local_len) ||
	    memcmp(e->remote, e->remote_ref, e->remote_len)) {
		print_error("%s (post %u, %s%s, remote offset %llu):\n",
			    c->name, post,
			    c->dir == DMA_TO_DEVICE ? "WRITE" : "READ",
			    c->use_chain ? " + SEND" : "",
			    (unsigned long long)c->roff);
		rw_env_check(e);
	}
	rw_model_free(&m);
}

int rw_run_case(struct rw_env *e, const struct rw_case *c,
		enum rdma_rw_ctx_type *type)
{
	struct rw_model_mr pool[64];
	struct case_state *st = calloc(1, sizeof(*st));
	struct rw_model_in in;
	struct rw_model_out m;
	u32 posts = c->posts ? c->posts : 1, p;
	struct held_state before;
	int ret;

	assert_non_null(st);
	held_now(e, &before);
	rw_done_init(&st->done);
	rw_done_init(&st->sdone);
	rw_done_init(&st->rdone);
	build_input(st, c);
	model_for_post(e, st, c, false, pool, &in);
	rw_model_chain(e->qp, 1, &in, NULL, &st->send, &m);
	ret = do_init(e, st, c);
	if (ret != m.ret)
		fail_msg("%s: init returned %d, model says %d", c->name, ret,
			 m.ret);
	if (ret >= 0) {
		assert_int_equal(st->ctx.type, m.type);
		assert_int_equal(st->ctx.nr_ops, m.nr_ops);
		if (type)
			*type = (enum rdma_rw_ctx_type)st->ctx.type;
		assert_int_equal(e->qp->mrs_used,
				 before.mrs_used + (int)m.mrs_taken);
		for (p = 0; st->ctx.type == RDMA_RW_MR && p < m.mrs_taken; p++)
			assert_ptr_equal(st->ctx.reg[p].mr, pool[p].mr);
		for (p = 0; p < posts; p++)
			one_post(e, st, c, p, ret);
		do_destroy(e, st, c);
	}
	rw_model_free(&m);
	assert_held_as(e, &before, c->name);
	free_input(st, c);
	free(st);
	return ret;
}

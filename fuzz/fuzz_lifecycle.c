// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the life cycle of R/W contexts and QPs under faults
 * (issue 11).  Two software devices of one profile (mlx5, rxe, siw; inline
 * or threaded; force_mr or not) in one fabric.  Side A is the "target": its
 * QP a0 runs R/W contexts against side B's QP b0, whose window (one user MR
 * with remote rights) they READ and WRITE.  Side B also owns an "attacker"
 * QP b1, connected to a second QP a1 in A's PD, that RDMA WRITEs and READs
 * into A with keys the contexts registered (as a peer sees them on the
 * wire) once those contexts are destroyed.  The input decodes into a
 * bounded sequence of operations: init (scatterlist or bio_vec), post (alone
 * or with a chained SEND), faults armed on a0 (SOFT_FAULT_POST in the middle
 * of a chain, SOFT_FAULT_WC, SOFT_FAULT_QP_ERR, SOFT_FAULT_STALL), polls,
 * resumes, QPs moved to ERR, receives, destroys of contexts, attempts to
 * destroy a QP that still has contexts, misuse of destroy, drains,
 * reconnects (new QPs), force_mr switched under a QP, oversized
 * cap.max_rdma_ctxs.
 *
 * Invariants (the library after issue 11's fixes):
 *  - shadow/grant: a shadow of both arenas (PROT_NONE guard pages around
 *    each) is compared after every operation; a byte may differ only where
 *    it is granted at that moment: the local pieces of a live context that
 *    has been posted, the remote range of a live posted WRITE context, and
 *    the scratch areas used for receives and the attacker's own buffers.
 *    At destroy the ULP "reuses" the buffer (new bytes, new shadow), so a
 *    late READ that lands after destroy is caught;
 *  - a stale key (of a destroyed context) grants no access: the attacker's
 *    WRITE/READ through it must fail (error completion, or on iWARP a
 *    terminated connection), and no byte changes;
 *  - every context posted successfully completes exactly once (its cqe, or
 *    its chained SEND's), a context whose post failed never completes, and
 *    a part-way failed post is destroyed at once, without fence or drain;
 *  - a successful transfer with a good key moved every byte right; a failed
 *    one left each destination byte old or new;
 *  - every receive completes exactly once; receives carry the right QPs;
 *  - QP numbers are unique among live QPs; ib_destroy_qp() refuses (-EBUSY)
 *    while a context holds storage or MRs of the QP; a misused destroy
 *    (other sg_cnt, NULL sg, a copy destroyed twice) changes nothing;
 *    ib_drain_qp() returns, and afterwards nothing is outstanding;
 *    cap.max_rdma_ctxs above the device's queue is refused; force_mr
 *    switched on under a QP without a pool does not give -EAGAIN;
 *  - nothing leaks: pools full (ib_mr_pool_count(), qp->mrs_used 0), nothing
 *    DMA-mapped, no MR left, ASan's leak check.
 *
 * Known-defect classes can be switched off while their fixes are pending:
 * FUZZ_LIFECYCLE_SKIP=name,name,... in the environment (or the compile-time
 * default FUZZ_LIFECYCLE_SKIP_DEFAULT); "none" enables everything.  Names:
 * destroy_keys, partial_post, destroy_busy, destroy_misuse, drain,
 * recv_once, ctxs_cap, qpn, force_mr_errno, mr_publish.
 * docs/reliability.md has the model.  Every wait is bounded.
 *
 * The engine (fuzz_lifecycle.h) keeps everything of one run in an instance
 * (struct lc), so the many-thread replay (tests/test_lifecycle_threads.c)
 * runs the same decoding and checks on one instance per thread, on one
 * shared fabric, with a cross-thread attacker (struct lc_cross) trying the
 * keys the instances publish in their key logs.  What only the whole
 * fabric can tell (DMA-mapped entries, MRs and QPs left on a device) is
 * then checked by that driver once every thread is done.
 *
 * No check reads bytes that a transfer in flight may be writing (the
 * grant check compares only what is not granted), and an attacker touches
 * a live context's bytes only when no transfer of it is in flight on a
 * threaded device, so the harness itself is free of data races.
 */
#include "fuzz_common.h"
#include "fuzz_lifecycle.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#ifndef FUZZ_LIFECYCLE_SKIP_DEFAULT
#define FUZZ_LIFECYCLE_SKIP_DEFAULT ""
#endif

#define NSLOT 6
#define SLOT_PAGES 4
#define SLOT (SLOT_PAGES * PAGE_SIZE)
#define WINDOW (NSLOT * SLOT)
#define OUTSIDE WINDOW /* one page nobody is granted */
#define SCRATCH (WINDOW + PAGE_SIZE)
#define SCRATCH_LEN (2 * PAGE_SIZE)
#define ARENA (SCRATCH + SCRATCH_LEN)
#define GUARD PAGE_SIZE
#define MAX_ENTS 4
#define MAX_OPS 48
#define MAX_SEEN 64 /* keys one input publishes */
#define MAX_RECV 32
#define MSG_LEN 32
#define WAIT_MS 2000
#define MAX_VICTIMS 16

enum skip {
	SK_DESTROY_KEYS = 1 << 0,
	SK_PARTIAL_POST = 1 << 1,
	SK_DESTROY_BUSY = 1 << 2,
	SK_MISUSE = 1 << 3,
	SK_DRAIN = 1 << 4,
	SK_RECV_ONCE = 1 << 5,
	SK_CTXS_CAP = 1 << 6,
	SK_QPN = 1 << 7,
	SK_FORCE_MR = 1 << 8,
	SK_MR_PUBLISH = 1 << 9,
};

static const char *const skip_names[] = {
	"destroy_keys",	  "partial_post", "destroy_busy", "destroy_misuse",
	"drain",	  "recv_once",	  "ctxs_cap",	  "qpn",
	"force_mr_errno", "mr_publish",
};

/* Set once (pthread_once), read by every instance afterwards. */
static unsigned int skip;
static bool trace;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

#define TRACE(...)                                                  \
	do {                                                        \
		if (trace)                                          \
			fprintf(stderr, "lifecycle: " __VA_ARGS__); \
	} while (0)

static bool skipped(unsigned int what)
{
	return skip & what;
}

static void parse_config(void)
{
	const char *s = getenv("FUZZ_LIFECYCLE_SKIP");
	unsigned int i;

	if (!s)
		s = FUZZ_LIFECYCLE_SKIP_DEFAULT;
	for (i = 0; i < sizeof(skip_names) / sizeof(skip_names[0]); i++) {
		const char *p = s;
		size_t n = strlen(skip_names[i]);

		while ((p = strstr(p, skip_names[i]))) {
			if ((p == s || p[-1] == ',') &&
			    (p[n] == ',' || p[n] == '\0'))
				skip |= 1u << i;
			p += n;
		}
	}
	trace = getenv("FUZZ_LIFECYCLE_TRACE");
}

/* ---- the instance ---------------------------------------------------- */

enum lstate { L_FREE, L_INIT, L_POSTED, L_DONE, L_FAILED };

struct piece {
	u64 off; /* in the local arena */
	u32 len;
};

struct lc;

struct lctx {
	struct lc *lc;
	enum lstate state;
	u32 gen;
	struct rdma_rw_ctx ctx;
	bool bvec;
	enum dma_data_direction dir;
	struct scatterlist sg[MAX_ENTS];
	struct bio_vec bv[MAX_ENTS];
	u32 n, sg_offset;
	struct bvec_iter it;
	struct piece pc[MAX_ENTS];
	u32 npc;
	u64 total;
	u64 roff; /* in the remote arena */
	bool good_key, tainted;
	int posts;
	struct ib_cqe cqe;
	int done;
	enum ib_wc_status status;
	bool chained;
	struct ib_send_wr send;
	struct ib_sge ssge;
	u8 old[SLOT]; /* the destination's bytes before the post */
};

/*
 * An entry of the key log (fuzz_lifecycle.h): written before it is
 * published, never changed afterwards except @dead (atomic).
 */
struct seen_key {
	u32 rkey;
	u64 iova, len;
	int slot;
	u32 gen;
	int dead; /* 1 once the context's destroy returned (release) */
};

struct recv {
	struct lc *lc;
	struct ib_cqe cqe;
	int done;
	bool used;
	struct ib_qp *qp;
	u32 src_qpn; /* expected sender of a successful receive */
};

struct probe {
	struct ib_cqe cqe;
	int done;
	enum ib_wc_status status;
};

/*
 * A QP on B that RDMA WRITEs and READs into A through a QP of A's PD, and
 * what it polls while it waits for its two WRs.
 */
struct attacker {
	struct ib_qp *qa, *qb;
	struct ib_cq *cq[2];
	struct ib_mr *mr; /* its own buffer on B (source, READ sink) */
	u8 *buf; /* PAGE_SIZE bytes inside @mr */
	bool threaded;
	struct probe pr[2];
};

struct lc {
	/* For the life of the instance. */
	u8 *mem[2]; /* page aligned; GUARD + ARENA + GUARD mapped */
	u8 *shadow[2]; /* ARENA each */
	u8 dst[SLOT], src[SLOT]; /* ctx_check_bytes() */
	struct seen_key *log;
	unsigned int log_cap;
	bool attached;
	struct two_hosts side; /* attached: the shared devices, own PD/CQ */
	struct soft_profile shared_prof;
	/* Per attach (or per input when not attached). */
	unsigned int nseen; /* published: written with release */
	/* Per input: world_init() clears everything from here on. */
	unsigned int seen_base; /* the first entry of this input */
	u64 rng;
	struct soft_profile prof;
	struct two_hosts hosts; /* fabric, devices, PDs, CQs */
	struct soft_fabric *fabric;
	struct ib_device *dev[2];
	struct ib_pd *pd[2];
	struct ib_cq *cq[2];
	struct ib_qp *a0, *b0, *a1, *b1;
	struct ib_mr *window, *scratch_mr;
	struct attacker att; /* b1 -> a1 */
	int pool_rdma;
	u32 max_rdma_ctxs;
	bool force_at_create;
	bool a0_dead; /* drained or destroyed: reconnect before use */
	struct lctx l[NSLOT];
	u32 gen;
	struct recv rv[MAX_RECV];
	int nrecv;
	int rules;
};

#define LC_INPUT_START seen_base

static u8 *arena(struct lc *c, int side)
{
	return c->mem[side] + GUARD;
}

struct lc *lc_new(unsigned int log_keys)
{
	struct lc *c;
	int s;

	pthread_once(&config_once, parse_config);
	c = calloc(1, sizeof(*c));
	FUZZ_CHECK(c, "instance");
	c->log_cap = log_keys < MAX_SEEN ? MAX_SEEN : log_keys;
	c->log = calloc(c->log_cap, sizeof(*c->log));
	FUZZ_CHECK(c->log, "key log");
	for (s = 0; s < 2; s++) {
		void *p = mmap(NULL, ARENA + 2 * GUARD, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		FUZZ_CHECK(p != MAP_FAILED, "mmap");
		c->mem[s] = p;
		FUZZ_CHECK(!mprotect(c->mem[s], GUARD, PROT_NONE) &&
				   !mprotect(c->mem[s] + GUARD + ARENA, GUARD,
					     PROT_NONE),
			   "guards");
		c->shadow[s] = malloc(ARENA);
		FUZZ_CHECK(c->shadow[s], "shadow");
	}
	return c;
}

void lc_free(struct lc *c)
{
	int s;

	if (!c)
		return;
	for (s = 0; s < 2; s++) {
		munmap(c->mem[s], ARENA + 2 * GUARD);
		free(c->shadow[s]);
	}
	free(c->log);
	free(c);
}

int lc_attach(struct lc *c, const struct two_hosts *shared,
	      const struct soft_profile *prof)
{
	int s, ret;

	memset(&c->side, 0, sizeof(c->side));
	c->side.fabric = shared->fabric;
	c->side.dev[0] = shared->dev[0];
	c->side.dev[1] = shared->dev[1];
	for (s = 0; s < 2; s++) {
		ret = two_hosts_side(&c->side, s, 2048, IB_POLL_DIRECT);
		if (ret) {
			two_hosts_close_objects(&c->side);
			return ret;
		}
	}
	c->shared_prof = *prof;
	c->attached = true;
	c->nseen = 0;
	return 0;
}

void lc_detach(struct lc *c)
{
	FUZZ_CHECK(!two_hosts_close_objects(&c->side), "detach: %s",
		   c->side.failed);
	memset(&c->side, 0, sizeof(c->side));
	c->attached = false;
}

static void fill(u64 *rng, u8 *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		p[i] = (u8)(*rng >> 11);
	}
}

/* The ULP writes new bytes into @len bytes at @off of @side. */
static void reuse(struct lc *c, int side, u64 off, u64 len)
{
	fill(&c->rng, arena(c, side) + off, len);
	memcpy(c->shadow[side] + off, arena(c, side) + off, len);
}

/* ---- polling ---------------------------------------------------------- */

static void poll_cqs(struct ib_cq *const *cq)
{
	int s;

	for (s = 0; s < 2; s++)
		while (ib_process_cq_direct(cq[s], -1) > 0)
			;
}

/*
 * Poll @cq until @pred(@arg) holds or @ms pass (inline devices: one
 * round, everything has run by then).
 */
static bool poll_until(struct ib_cq *const *cq, bool threaded,
		       bool (*pred)(const void *), const void *arg, u64 ms)
{
	u64 end = fuzz_now_ms() + ms;

	for (;;) {
		poll_cqs(cq);
		if (pred(arg))
			return true;
		if (!threaded || fuzz_now_ms() > end)
			return false;
		sched_yield();
	}
}

static void poll_all(struct lc *c)
{
	poll_cqs(c->cq);
}

static bool wait_for(struct lc *c, bool (*pred)(const void *))
{
	return poll_until(c->cq, c->prof.threaded, pred, c, WAIT_MS);
}

static bool nothing_in_flight(const void *arg)
{
	const struct lc *c = arg;
	int i;

	for (i = 0; i < NSLOT; i++)
		if (c->l[i].state == L_POSTED)
			return false;
	return true;
}

static bool recvs_done(const void *arg)
{
	const struct lc *c = arg;
	int i;

	for (i = 0; i < c->nrecv; i++)
		if (c->rv[i].used && !c->rv[i].done)
			return false;
	return true;
}

/* Let a threaded device settle: poll for a while. */
static void settle(struct lc *c, u64 ms)
{
	u64 end = fuzz_now_ms() + ms;

	poll_all(c);
	while (c->prof.threaded && fuzz_now_ms() < end) {
		sched_yield();
		poll_all(c);
	}
}

static void recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct recv *r = container_of(wc->wr_cqe, struct recv, cqe);

	r->done++;
	if (!skipped(SK_RECV_ONCE) || !r->lc->prof.threaded)
		FUZZ_CHECK(r->done == 1, "receive %td completed %d times",
			   r - r->lc->rv, r->done);
	FUZZ_CHECK(wc->qp == r->qp, "receive completed on another QP");
	if (wc->status == IB_WC_SUCCESS)
		FUZZ_CHECK(wc->src_qp == r->src_qpn,
			   "SEND from QP %u, connected to %u", wc->src_qp,
			   r->src_qpn);
}

/* ---- the grant check ------------------------------------------------- */

static bool exposed(const struct lctx *l)
{
	return l->state != L_FREE && l->posts > 0;
}

struct span {
	u64 off, len;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* @len bytes at @off of @side, granted to nobody, equal their shadow. */
static void check_range(struct lc *c, int side, u64 off, u64 len,
			const char *when)
{
	const u8 *now = arena(c, side), *was = c->shadow[side];
	u64 i;

	if (!memcmp(now + off, was + off, len))
		return;
	for (i = off; now[i] == was[i]; i++)
		;
	FUZZ_CHECK(0,
		   "%s: side %c byte %llu (slot %llu +%llu) changed to %#x "
		   "(was %#x) without a grant",
		   when, side ? 'B' : 'A', (unsigned long long)i,
		   (unsigned long long)(i / SLOT),
		   (unsigned long long)(i % SLOT), now[i], was[i]);
}

/*
 * Every byte of @side that is not granted at this moment equals its
 * shadow.  Granted bytes are not read at all: a transfer in flight may be
 * writing them.
 */
static void check_side(struct lc *c, int side, const char *when)
{
	struct span g[NSLOT * MAX_ENTS + 1];
	u64 at = 0, end;
	int n = 0, i, k;
	u32 j;

	g[n++] = (struct span){ SCRATCH, SCRATCH_LEN };
	for (k = 0; k < NSLOT; k++) {
		const struct lctx *l = &c->l[k];

		if (!exposed(l))
			continue;
		if (side == 0) {
			for (j = 0; j < l->npc; j++)
				g[n++] = (struct span){ l->pc[j].off,
							l->pc[j].len };
		} else if (l->dir == DMA_TO_DEVICE) {
			g[n++] = (struct span){ l->roff, l->total };
		}
	}
	qsort(g, (size_t)n, sizeof(g[0]), span_cmp);
	for (i = 0; i <= n; i++) {
		end = i < n ? g[i].off : ARENA;
		if (end > at)
			check_range(c, side, at, end - at, when);
		if (i < n && g[i].off + g[i].len > at)
			at = g[i].off + g[i].len;
	}
}

static void check_grants(struct lc *c, const char *when)
{
	check_side(c, 0, when);
	check_side(c, 1, when);
}

/* ---- contexts -------------------------------------------------------- */

static u8 *loc(const struct lctx *l, u32 j)
{
	return arena(l->lc, 0) + l->pc[j].off;
}

/* The destination bytes: into @buf, in transfer order. */
static void dest_now(const struct lctx *l, u8 *buf)
{
	u64 at = 0;
	u32 j;

	if (l->dir == DMA_TO_DEVICE) {
		memcpy(buf, arena(l->lc, 1) + l->roff, l->total);
		return;
	}
	for (j = 0; j < l->npc; j++) {
		memcpy(buf + at, loc(l, j), l->pc[j].len);
		at += l->pc[j].len;
	}
}

static void src_now(const struct lctx *l, u8 *buf)
{
	u64 at = 0;
	u32 j;

	if (l->dir == DMA_FROM_DEVICE) {
		memcpy(buf, arena(l->lc, 1) + l->roff, l->total);
		return;
	}
	for (j = 0; j < l->npc; j++) {
		memcpy(buf + at, loc(l, j), l->pc[j].len);
		at += l->pc[j].len;
	}
}

static void ctx_check_bytes(struct lctx *l)
{
	u8 *dst = l->lc->dst, *src = l->lc->src;
	u64 i;

	if (l->tainted)
		return;
	dest_now(l, dst);
	src_now(l, src);
	if (l->status == IB_WC_SUCCESS && l->good_key) {
		for (i = 0; i < l->total && dst[i] == src[i]; i++)
			;
		FUZZ_CHECK(i == l->total,
			   "slot %td: %s succeeded but byte %llu of %llu is "
			   "%#x, want %#x",
			   l - l->lc->l,
			   l->dir == DMA_TO_DEVICE ? "WRITE" : "READ",
			   (unsigned long long)i, (unsigned long long)l->total,
			   dst[i], src[i]);
		return;
	}
	for (i = 0; i < l->total; i++)
		FUZZ_CHECK(dst[i] == l->old[i] || dst[i] == src[i],
			   "slot %td: failed transfer left byte %llu %#x, "
			   "neither old %#x nor new %#x",
			   l - l->lc->l, (unsigned long long)i, dst[i],
			   l->old[i], src[i]);
}

static void ctx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lctx *l = container_of(wc->wr_cqe, struct lctx, cqe);

	FUZZ_CHECK(l->state != L_FAILED,
		   "slot %td: a context whose post failed completed (%s)",
		   l - l->lc->l, ib_wc_status_msg(wc->status));
	FUZZ_CHECK(l->state == L_POSTED,
		   "slot %td: completion of a context not in flight (%d)",
		   l - l->lc->l, l->state);
	l->done++;
	FUZZ_CHECK(l->done == 1, "slot %td: completed twice", l - l->lc->l);
	l->status = wc->status;
	l->state = L_DONE;
	ctx_check_bytes(l);
}

static bool ctx_has_mrs(const struct lctx *l)
{
	return l->ctx.type == RDMA_RW_MR;
}

/* The pieces a transfer moves: skip @skip, then at most @size bytes. */
static void model_pieces(struct lctx *l, const u64 *off, const u32 *len,
			 u64 skip_bytes, u64 size)
{
	u32 i;

	l->npc = 0;
	l->total = 0;
	for (i = 0; i < l->n && size; i++) {
		u64 take;

		if (skip_bytes >= len[i]) {
			skip_bytes -= len[i];
			continue;
		}
		take = len[i] - skip_bytes < size ? len[i] - skip_bytes : size;
		l->pc[l->npc++] =
			(struct piece){ off[i] + skip_bytes, (u32)take };
		l->total += take;
		size -= take;
		skip_bytes = 0;
	}
}

static void op_init(struct lc *c, struct fuzz_in *in)
{
	int k = (int)fuzz_below(in, NSLOT);
	struct lctx *l = &c->l[k];
	u32 shape = fuzz_u8(in), i, n;
	u64 off[MAX_ENTS], cursor, base = (u64)k * SLOT, skip_bytes = 0;
	u32 len[MAX_ENTS];
	/* A bad key names the neighbouring index, which may be an MR that
	 * another instance is registering; with mr_publish skipped, only
	 * the variant differs (the window's own index). */
	u32 bad = skipped(SK_MR_PUBLISH) ? 0x80 : 0x100;
	bool pool_less;
	int ret;

	if (l->state != L_FREE || c->a0_dead)
		return;
	memset(l, 0, offsetof(struct lctx, old));
	l->lc = c;
	l->cqe.done = ctx_done;
	l->dir = shape & 1 ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	l->bvec = shape & 2;
	l->good_key = (shape & 0x1c) != 0x1c;
	n = 1 + fuzz_below(in, MAX_ENTS);
	cursor = fuzz_below(in, PAGE_SIZE);
	for (i = 0; i < n; i++) {
		u32 e = fuzz_u8(in);

		if (shape & 0x20) {
			/* page rules: the first ends on a page boundary,
			 * the middle are whole pages, the last starts one */
			if (i)
				cursor = (cursor + PAGE_SIZE - 1) & PAGE_MASK;
			if (i + 1 < n)
				len[i] = (u32)(((cursor + PAGE_SIZE) &
						PAGE_MASK) -
					       cursor);
			else
				len[i] = 1 + fuzz_below(in, PAGE_SIZE);
		} else {
			cursor += fuzz_below(in, e & 1 ? 64 : 512);
			len[i] = 1 + fuzz_below(in, e & 2 ? PAGE_SIZE :
							    2 * PAGE_SIZE);
		}
		if (cursor + len[i] > SLOT)
			break;
		off[i] = base + cursor;
		cursor += len[i];
	}
	n = i;
	if (!n)
		return;
	l->n = n;
	if (shape & 0x40)
		skip_bytes = fuzz_below(in, len[0]);
	if (l->bvec) {
		for (i = 0; i < n; i++)
			bvec_set_virt(&l->bv[i], arena(c, 0) + off[i], len[i]);
		l->it.bi_bvec_done = (unsigned int)skip_bytes;
		l->it.bi_size = ~0u;
		model_pieces(l, off, len, skip_bytes, ~0ULL);
		l->it.bi_size = (unsigned int)l->total;
		if (shape & 0x80 && l->total > 1) {
			l->it.bi_size -= fuzz_below(in, (u32)l->total);
			model_pieces(l, off, len, skip_bytes, l->it.bi_size);
		}
	} else {
		sg_init_table(l->sg, n);
		for (i = 0; i < n; i++)
			sg_set_buf(&l->sg[i], arena(c, 0) + off[i], len[i]);
		l->sg_offset = (u32)skip_bytes;
		model_pieces(l, off, len, skip_bytes, ~0ULL);
	}
	l->roff = base + fuzz_below(in, (u32)(SLOT - l->total + 1));
	pool_less = c->pool_rdma == 0;
	if (l->bvec)
		ret = rdma_rw_ctx_init_bvec(
			&l->ctx, c->a0, 1, l->bv, n, l->it,
			(uintptr_t)arena(c, 1) + l->roff,
			c->window->rkey ^ (l->good_key ? 0 : bad), l->dir);
	else
		ret = rdma_rw_ctx_init(
			&l->ctx, c->a0, 1, l->sg, n, l->sg_offset,
			(uintptr_t)arena(c, 1) + l->roff,
			c->window->rkey ^ (l->good_key ? 0 : bad), l->dir);
	TRACE("init slot %d %s %s n %u total %llu: %d type %d\n", k,
	      l->bvec ? "bvec" : "sg",
	      l->dir == DMA_TO_DEVICE ? "WRITE" : "READ", n,
	      (unsigned long long)l->total, ret, l->ctx.type);
	if (ret < 0) {
		FUZZ_CHECK(ret == -EINVAL || ret == -EAGAIN || ret == -ENOMEM ||
				   (ret == -EOPNOTSUPP && pool_less),
			   "init: %d", ret);
		if (!skipped(SK_FORCE_MR) && pool_less &&
		    rdma_rw_get_force_mr())
			FUZZ_CHECK(ret != -EAGAIN,
				   "force_mr on a QP without an MR pool: "
				   "-EAGAIN, which never ends");
		return;
	}
	l->state = L_INIT;
	l->gen = ++c->gen;
}

/*
 * Publish the keys this post registers (rdma_rw_ctx_wrs() bumps each MR's
 * key) before it puts them on the wire: also when it fails part-way.
 */
static void remember_keys(struct lc *c, struct lctx *l)
{
	u32 j;

	if (!ctx_has_mrs(l))
		return;
	for (j = 0; j < l->ctx.nr_ops && c->nseen - c->seen_base < MAX_SEEN &&
		    c->nseen < c->log_cap;
	     j++) {
		struct ib_mr *mr = l->ctx.reg[j].mr;
		struct seen_key *k = &c->log[c->nseen];

		k->rkey = ib_inc_rkey(mr->rkey);
		k->iova = mr->iova;
		k->len = mr->length;
		k->slot = (int)(l - c->l);
		k->gen = l->gen;
		__atomic_store_n(&k->dead, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->nseen, c->nseen + 1, __ATOMIC_RELEASE);
	}
}

static bool key_dead(const struct seen_key *k)
{
	return __atomic_load_n(&k->dead, __ATOMIC_ACQUIRE);
}

static void op_post(struct lc *c, struct fuzz_in *in)
{
	int k = (int)fuzz_below(in, NSLOT);
	struct lctx *l = &c->l[k];
	u32 f = fuzz_u8(in);
	u8 *msg = arena(c, 0) + SCRATCH;
	int ret;

	if (l->state != L_INIT && l->state != L_DONE)
		return;
	if (l->posts && l->state == L_DONE && ctx_has_mrs(l) &&
	    l->status != IB_WC_SUCCESS)
		return; /* documented: a flushed INV leaves the MR valid */
	l->chained = f & 1;
	if (l->chained) {
		l->ssge = (struct ib_sge){ (uintptr_t)msg, MSG_LEN,
					   c->pd[0]->local_dma_lkey };
		memset(&l->send, 0, sizeof(l->send));
		l->send.opcode = IB_WR_SEND;
		l->send.sg_list = &l->ssge;
		l->send.num_sge = 1;
		l->send.send_flags = IB_SEND_SIGNALED;
		l->send.wr_cqe = &l->cqe;
	}
	dest_now(l, l->old);
	remember_keys(c, l);
	l->done = 0;
	l->posts++;
	l->state = L_POSTED;
	ret = rdma_rw_ctx_post(&l->ctx, c->a0, 1, l->chained ? NULL : &l->cqe,
			       l->chained ? &l->send : NULL);
	TRACE("post slot %d chained %d: %d\n", k, l->chained, ret);
	if (ctx_has_mrs(l))
		TRACE("  MR 0 key %#x access %#x reg access %#x\n",
		      l->ctx.reg[0].mr->rkey, l->ctx.reg[0].mr->access,
		      l->ctx.reg[0].reg_wr.access);
	if (ret) {
		FUZZ_CHECK(ret == -ENOMEM || ret == -EINVAL, "post: %d", ret);
		FUZZ_CHECK(l->done == 0, "a failed post completed");
		l->state = L_FAILED;
	}
}

/*
 * The context's destroy has returned: its keys are dead (published), what
 * the destination holds now is final, and the ULP reuses the buffer.
 */
static void retire(struct lctx *l)
{
	struct lc *c = l->lc;
	unsigned int i;
	u32 j;

	for (i = c->seen_base; i < c->nseen; i++)
		if (c->log[i].slot == (int)(l - c->l) &&
		    c->log[i].gen == l->gen)
			__atomic_store_n(&c->log[i].dead, 1, __ATOMIC_RELEASE);
	if (l->posts) {
		for (j = 0; j < l->npc; j++)
			memcpy(c->shadow[0] + l->pc[j].off, loc(l, j),
			       l->pc[j].len);
		if (l->dir == DMA_TO_DEVICE)
			memcpy(c->shadow[1] + l->roff, arena(c, 1) + l->roff,
			       l->total);
	}
	for (j = 0; j < l->npc; j++)
		reuse(c, 0, l->pc[j].off, l->pc[j].len);
	l->state = L_FREE;
}

static void destroy_ctx(struct lctx *l)
{
	struct ib_qp *qp = l->lc->a0;

	if (l->bvec)
		rdma_rw_ctx_destroy_bvec(&l->ctx, qp, 1, l->bv, l->n, l->dir);
	else
		rdma_rw_ctx_destroy(&l->ctx, qp, 1, l->sg, l->n, l->dir);
	retire(l);
}

static void op_destroy(struct lc *c, struct fuzz_in *in)
{
	struct lctx *l = &c->l[fuzz_below(in, NSLOT)];

	/* The ULP's rule: after the completion, or after a failed post. */
	if (l->state == L_INIT || l->state == L_DONE || l->state == L_FAILED)
		destroy_ctx(l);
}

/*
 * A device's count of DMA-mapped entries is the whole device's: with other
 * instances on it (attached), only the caller can check it, once they are
 * all done.
 */
static bool own_devices(const struct lc *c)
{
	return !c->attached;
}

static void check_pool_sane(struct lc *c, const char *what)
{
	int in_pool = ib_mr_pool_count(c->a0, &c->a0->rdma_mrs);
	long mapped = own_devices(c) ? rdmarw_dma_mapped(c->dev[0]) : 0;

	FUZZ_CHECK(mapped >= 0 && c->a0->mrs_used >= 0 &&
			   in_pool + c->a0->mrs_used == c->pool_rdma,
		   "%s: mapped %ld, MRs taken %d, pool %d of %d", what, mapped,
		   c->a0->mrs_used, in_pool, c->pool_rdma);
}

static void op_misuse(struct lc *c, struct fuzz_in *in)
{
	struct lctx *l = &c->l[fuzz_below(in, NSLOT)];
	u32 how = fuzz_u8(in) % 3;
	long mapped = own_devices(c) ? rdmarw_dma_mapped(c->dev[0]) : 0, now;
	int used = c->a0->mrs_used;
	struct rdma_rw_ctx copy;

	if (skipped(SK_MISUSE) || l->bvec ||
	    (l->state != L_INIT && l->state != L_DONE && l->state != L_FAILED))
		return;
	if (how == 2) {
		/* A copy and the original both destroyed: one release. */
		copy = l->ctx;
		rdma_rw_ctx_destroy(&copy, c->a0, 1, l->sg, l->n, l->dir);
		rdma_rw_ctx_destroy(&l->ctx, c->a0, 1, l->sg, l->n, l->dir);
		check_pool_sane(c, "a context destroyed twice through a copy");
		retire(l);
		return;
	}
	if (how == 0)
		rdma_rw_ctx_destroy(&l->ctx, c->a0, 1, l->sg, l->n + 1, l->dir);
	else
		rdma_rw_ctx_destroy(&l->ctx, c->a0, 1, NULL, l->n, l->dir);
	now = own_devices(c) ? rdmarw_dma_mapped(c->dev[0]) : 0;
	FUZZ_CHECK(now == mapped && c->a0->mrs_used == used &&
			   l->ctx.rdmarw_origin == RDMARW_RW_ORIGIN_SG,
		   "misused destroy (%s) changed state: mapped %ld -> %ld, "
		   "MRs %d -> %d, origin %u",
		   how ? "NULL sg" : "other sg_cnt", mapped, now, used,
		   c->a0->mrs_used, l->ctx.rdmarw_origin);
}

/* ---- faults, errors, receives ---------------------------------------- */

static const enum ib_wc_status wc_statuses[] = {
	IB_WC_GENERAL_ERR,  IB_WC_RETRY_EXC_ERR,  IB_WC_REM_OP_ERR,
	IB_WC_LOC_PROT_ERR, IB_WC_REM_ACCESS_ERR,
};

static void op_arm(struct lc *c, struct fuzz_in *in)
{
	struct soft_fault_rule r = { 0 };
	u32 t = fuzz_u8(in), m = fuzz_u8(in);

	r.type = (enum soft_fault_type)(t % 4);
	if (r.type == SOFT_FAULT_POST && skipped(SK_PARTIAL_POST))
		return;
	r.nth = 1 + (t >> 2) % 8;
	switch (m % 6) {
	case 1:
		r.opcodes = 1ULL << IB_WR_REG_MR;
		break;
	case 2:
		r.opcodes = 1ULL << IB_WR_RDMA_READ_WITH_INV |
			    1ULL << IB_WR_RDMA_READ;
		break;
	case 3:
		r.opcodes = 1ULL << IB_WR_RDMA_WRITE;
		break;
	case 4:
		r.opcodes = 1ULL << IB_WR_SEND;
		break;
	case 5:
		r.opcodes = 1ULL << IB_WR_LOCAL_INV;
		break;
	}
	r.status = wc_statuses[(m >> 3) % 5];
	r.err = m & 0x80 ? -EINVAL : -ENOMEM;
	if (!soft_fault_arm_qp(c->a0, &r))
		c->rules++;
}

static void post_recv(struct lc *c, struct ib_qp *qp, struct ib_qp *from)
{
	struct recv *r;
	struct ib_sge s;
	struct ib_recv_wr wr = { 0 };
	int side = qp == c->b0 || qp == c->b1;

	if (c->nrecv >= MAX_RECV)
		return;
	r = &c->rv[c->nrecv];
	memset(r, 0, sizeof(*r));
	r->lc = c;
	r->cqe.done = recv_done;
	r->qp = qp;
	r->src_qpn = from->qp_num;
	s.addr = (uintptr_t)arena(c, side) + SCRATCH + (u64)c->nrecv * MSG_LEN;
	s.length = MSG_LEN;
	s.lkey = side ? c->scratch_mr->lkey : c->pd[0]->local_dma_lkey;
	wr.wr_cqe = &r->cqe;
	wr.sg_list = &s;
	wr.num_sge = 1;
	if (!ib_post_recv(qp, &wr, NULL)) {
		r->used = true;
		c->nrecv++;
	}
}

static void qp_err(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

	FUZZ_CHECK(!ib_modify_qp(qp, &a, IB_QP_STATE), "to ERR");
}

static void check_qpns(struct lc *c)
{
	struct ib_qp *q[4] = { c->a0, c->b0, c->a1, c->b1 };
	int i, j;

	if (skipped(SK_QPN))
		return;
	for (i = 0; i < 4; i++)
		for (j = i + 1; j < 4; j++)
			FUZZ_CHECK(!q[i] || !q[j] ||
					   q[i]->qp_num != q[j]->qp_num,
				   "two live QPs numbered %u", q[i]->qp_num);
}

/* ---- QPs ------------------------------------------------------------- */

static struct ib_qp *new_qp(struct ib_pd *pd, struct ib_cq *cq,
			    const struct soft_profile *prof, u32 ctxs)
{
	struct ib_qp_init_attr a = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = MAX_RECV,
			 .max_send_sge = 4,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = ctxs },
	};
	struct ib_qp *qp;

	if (a.cap.max_send_sge > (u32)prof->attrs.max_send_sge)
		a.cap.max_send_sge = (u32)prof->attrs.max_send_sge;
	qp = ib_create_qp(pd, &a);
	FUZZ_CHECK(!IS_ERR(qp), "create qp: %ld", PTR_ERR(qp));
	return qp;
}

static struct ib_qp *make_qp(struct lc *c, int side, u32 ctxs)
{
	return new_qp(c->pd[side], c->cq[side], &c->prof, ctxs);
}

static void make_main_pair(struct lc *c)
{
	c->force_at_create = rdma_rw_get_force_mr();
	c->a0 = make_qp(c, 0, c->max_rdma_ctxs);
	c->b0 = make_qp(c, 1, 0);
	c->pool_rdma = ib_mr_pool_count(c->a0, &c->a0->rdma_mrs);
	FUZZ_CHECK(!soft_qp_connect(c->a0, c->b0), "connect");
	c->a0_dead = false;
	c->rules = 0;
	check_qpns(c);
}

static void check_pools(struct lc *c)
{
	FUZZ_CHECK(c->a0->mrs_used == 0, "MRs still taken: %d",
		   c->a0->mrs_used);
	FUZZ_CHECK(ib_mr_pool_count(c->a0, &c->a0->rdma_mrs) == c->pool_rdma,
		   "pool %d of %d", ib_mr_pool_count(c->a0, &c->a0->rdma_mrs),
		   c->pool_rdma);
	if (own_devices(c))
		FUZZ_CHECK(rdmarw_dma_mapped(c->dev[0]) == 0,
			   "still DMA-mapped: %ld",
			   rdmarw_dma_mapped(c->dev[0]));
}

/*
 * Everything in flight on the main pair ends: resume, ERR, bounded wait;
 * every context posted completes exactly once, every receive once.
 */
static void quiesce_main(struct lc *c)
{
	soft_fault_clear_qp(c->a0);
	qp_err(c->a0);
	qp_err(c->b0);
	FUZZ_CHECK(wait_for(c, nothing_in_flight) || nothing_in_flight(c),
		   "a posted context never completed after ERR");
	if (!skipped(SK_RECV_ONCE) || !c->prof.threaded)
		FUZZ_CHECK(wait_for(c, recvs_done) || recvs_done(c),
			   "a receive never completed after ERR");
	settle(c, 2);
	check_grants(c, "quiesce");
}

static void destroy_main_pair(struct lc *c)
{
	int i;

	quiesce_main(c);
	for (i = 0; i < NSLOT; i++)
		if (c->l[i].state != L_FREE)
			destroy_ctx(&c->l[i]);
	settle(c, 5);
	check_grants(c, "after destroying every context");
	check_pools(c);
	FUZZ_CHECK(!ib_destroy_qp(c->a0) && !ib_destroy_qp(c->b0),
		   "destroy main QPs");
	c->a0 = c->b0 = NULL;
	/* Receives of destroyed QPs are done with. */
	for (i = 0; i < c->nrecv; i++)
		if (c->rv[i].qp != c->a1 && c->rv[i].qp != c->b1)
			c->rv[i].used = false;
}

static void op_reconnect(struct lc *c)
{
	destroy_main_pair(c);
	make_main_pair(c);
}

static void op_destroy_qp_busy(struct lc *c)
{
	bool holds = false;
	int i, ret;

	if (skipped(SK_DESTROY_BUSY))
		return;
	for (i = 0; i < NSLOT; i++)
		if (c->l[i].state != L_FREE && c->l[i].ctx.rdmarw_block)
			holds = true;
	if (!holds && !c->a0->mrs_used)
		return;
	ret = ib_destroy_qp(c->a0);
	FUZZ_CHECK(ret == -EBUSY,
		   "ib_destroy_qp() with contexts holding its storage: %d",
		   ret);
}

static void op_drain(struct lc *c)
{
	int ret, i;

	if (skipped(SK_DRAIN) || c->a0_dead)
		return;
	soft_fault_clear_qp(c->a0);
	ret = ib_drain_qp(c->a0);
	if (ret)
		return; /* a documented error, the QP is dead anyway */
	c->a0_dead = true;
	poll_all(c);
	for (i = 0; i < NSLOT; i++)
		FUZZ_CHECK(c->l[i].state != L_POSTED,
			   "slot %d still in flight after ib_drain_qp()", i);
	for (i = 0; i < c->nrecv; i++)
		FUZZ_CHECK(!c->rv[i].used || c->rv[i].qp != c->a0 ||
				   c->rv[i].done,
			   "receive %d outstanding after ib_drain_qp()", i);
}

static void op_ctxs_cap(struct lc *c, struct fuzz_in *in)
{
	u32 v = fuzz_u32(in);
	struct ib_qp_init_attr a = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.send_cq = c->cq[0],
		.recv_cq = c->cq[0],
		.cap = { .max_send_wr = 1,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp *qp;

	if (skipped(SK_CTXS_CAP))
		return;
	a.cap.max_rdma_ctxs =
		v > (u32)c->prof.attrs.max_qp_wr ? v : ~0u - v % 4;
	qp = ib_create_qp(c->pd[0], &a);
	FUZZ_CHECK(IS_ERR(qp) && PTR_ERR(qp) == -EINVAL,
		   "cap.max_rdma_ctxs %u (device queues %u): %ld",
		   a.cap.max_rdma_ctxs, c->prof.attrs.max_qp_wr,
		   IS_ERR(qp) ? PTR_ERR(qp) : 0L);
}

/* ---- the attackers ---------------------------------------------------- */

static bool probes_done(const void *arg)
{
	const struct attacker *a = arg;

	return a->pr[0].done && a->pr[1].done;
}

static void probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct probe *p = container_of(wc->wr_cqe, struct probe, cqe);

	p->done++;
	FUZZ_CHECK(p->done == 1, "attacker WR completed twice");
	p->status = wc->status;
}

static void attacker_reset(struct attacker *a)
{
	struct ib_qp_attr r = { .qp_state = IB_QPS_RESET };

	FUZZ_CHECK(!ib_modify_qp(a->qa, &r, IB_QP_STATE) &&
			   !ib_modify_qp(a->qb, &r, IB_QP_STATE),
		   "reset attackers");
	FUZZ_CHECK(!soft_qp_connect(a->qb, a->qa), "connect attackers");
}

static bool qp_is_err(struct ib_qp *qp)
{
	struct ib_qp_attr a;
	struct ib_qp_init_attr ia;

	FUZZ_CHECK(!ib_query_qp(qp, &a, 0, &ia), "query");
	return a.qp_state == IB_QPS_ERR;
}

/*
 * @a's QP on B RDMA WRITEs (or READs) @len bytes of its buffer at @addr
 * through @rkey, followed by a zero-length READ at @base that only
 * succeeds when the QP was not terminated on the way (iWARP answers a bad
 * STag with a TERMINATE although its WRITE completes).  True when both
 * succeeded: the key granted the access.
 */
static bool attack_probe(struct attacker *a, bool write, u32 rkey, u64 addr,
			 u64 base, u32 len)
{
	struct ib_rdma_wr wr = { 0 }, zero = { 0 };
	struct ib_sge s = { (uintptr_t)a->buf, len, a->mr->lkey };
	struct ib_sge zs = { (uintptr_t)a->buf, 0, a->mr->lkey };

	memset(a->pr, 0, sizeof(a->pr));
	a->pr[0].cqe.done = a->pr[1].cqe.done = probe_done;
	wr.wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
	wr.wr.sg_list = &s;
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.wr_cqe = &a->pr[0].cqe;
	wr.remote_addr = addr;
	wr.rkey = rkey;
	wr.wr.next = &zero.wr;
	zero.wr.opcode = IB_WR_RDMA_READ;
	zero.wr.sg_list = &zs;
	zero.wr.num_sge = 1;
	zero.wr.send_flags = IB_SEND_SIGNALED;
	zero.wr.wr_cqe = &a->pr[1].cqe;
	zero.remote_addr = base;
	zero.rkey = rkey;
	FUZZ_CHECK(!ib_post_send(a->qb, &wr.wr, NULL), "attacker post");
	FUZZ_CHECK(poll_until(a->cq, a->threaded, probes_done, a, WAIT_MS) ||
			   probes_done(a),
		   "attacker WRs never completed");
	return a->pr[0].status == IB_WC_SUCCESS &&
	       a->pr[1].status == IB_WC_SUCCESS;
}

/* @a's QPs moved to ERR by the probe (a remote access error, TERMINATE). */
static bool attacker_broken(struct attacker *a)
{
	return qp_is_err(a->qb) || qp_is_err(a->qa);
}

/*
 * The instance's own attacker, b1: RDMA WRITE (or READ) through a key it
 * saw, or a random one.
 */
static void op_attack(struct lc *c, struct fuzz_in *in)
{
	u32 cho = fuzz_u8(in), pick = fuzz_u8(in);
	u32 off = fuzz_u16(in), len = 1 + fuzz_below(in, PAGE_SIZE);
	unsigned int nkeys = c->nseen - c->seen_base;
	struct seen_key k = { .slot = -1 };
	bool write = cho & 1, stale, accepted;
	int i;

	if (nkeys && (cho & 6)) {
		const struct seen_key *e = &c->log[c->seen_base + pick % nkeys];

		k = *e;
		k.dead = key_dead(e);
	} else {
		k.rkey = cho & 8 ? c->pd[0]->local_dma_lkey : fuzz_u32(in);
		k.iova = (uintptr_t)arena(c, 0) + fuzz_below(in, WINDOW);
		k.len = PAGE_SIZE;
	}
	stale = k.slot < 0 || k.dead;
	if (stale && k.slot >= 0 && skipped(SK_DESTROY_KEYS))
		return;
	/* A live key's bytes may be moving on a device thread: no race. */
	if (!stale && c->prof.threaded && c->l[k.slot].state == L_POSTED)
		return;
	if (len > k.len)
		len = (u32)k.len;
	off %= (u32)k.len;
	if (off + len > k.len)
		off = (u32)k.len - len;
	fill(&c->rng, c->att.buf, len);
	/* A live key is granted: its context's bytes are the attacker's now
	 * (set first: the context may complete while we wait). */
	if (!stale)
		c->l[k.slot].tainted = true;
	accepted =
		attack_probe(&c->att, write, k.rkey, k.iova + off, k.iova, len);
	TRACE("attack %s key %#x slot %d stale %d: %s / %s\n",
	      write ? "WRITE" : "READ", k.rkey, k.slot, stale,
	      ib_wc_status_msg(c->att.pr[0].status),
	      ib_wc_status_msg(c->att.pr[1].status));
	if (stale)
		FUZZ_CHECK(!accepted,
			   "stale key %#x (slot %d gen %u, destroyed) still "
			   "grants remote %s at %#llx + %u, %u bytes",
			   k.rkey, k.slot, k.gen, write ? "WRITE" : "READ",
			   (unsigned long long)k.iova, off, len);
	check_grants(c, stale ? "attacker with a stale key" : "attacker");
	if (attacker_broken(&c->att)) {
		attacker_reset(&c->att);
		for (i = 0; i < c->nrecv; i++)
			if (c->rv[i].qp == c->a1 || c->rv[i].qp == c->b1)
				c->rv[i].used = false; /* RESET drops them */
	}
}

/* ---- the run --------------------------------------------------------- */

static void world_init(struct lc *c, struct fuzz_in *in)
{
	u32 flags = fuzz_u8(in);
	int s;

	memset(&c->LC_INPUT_START, 0,
	       sizeof(*c) - offsetof(struct lc, LC_INPUT_START));
	c->seen_base = c->nseen;
	if (c->attached) {
		/* The fabric, the profile and force_mr are the caller's. */
		c->prof = c->shared_prof;
		c->hosts = c->side;
	} else {
		FUZZ_CHECK(!soft_profile_get(fuzz_profiles[(flags & 3) % 3],
					     &c->prof),
			   "p");
		c->prof.threaded = flags & 4;
		rdma_rw_set_force_mr(flags & 8);
		/* the hosts of tools/common/two_hosts.c; QPs are made below */
		FUZZ_CHECK(!two_hosts_devices(&c->hosts, &c->prof, NULL, false),
			   "%s", c->hosts.failed);
		for (s = 0; s < 2; s++)
			FUZZ_CHECK(!two_hosts_side(&c->hosts, s, 2048,
						   IB_POLL_DIRECT),
				   "%s", c->hosts.failed);
	}
	c->max_rdma_ctxs = 1 + (flags >> 4) % NSLOT;
	c->rng = 0x9e3779b97f4a7c15ULL ^ flags;
	c->fabric = c->hosts.fabric;
	for (s = 0; s < 2; s++) {
		c->dev[s] = c->hosts.dev[s];
		c->pd[s] = c->hosts.pd[s];
		c->cq[s] = c->hosts.cq[s];
		fill(&c->rng, arena(c, s), ARENA);
		memcpy(c->shadow[s], arena(c, s), ARENA);
	}
	c->window =
		ib_reg_user_mr(c->pd[1], (uintptr_t)arena(c, 1), WINDOW,
			       (uintptr_t)arena(c, 1),
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_WRITE);
	/* The attacker's own buffers (READ sinks must be remotely writable
	 * on iWARP) and B's receive buffers. */
	c->scratch_mr =
		ib_reg_user_mr(c->pd[1], (uintptr_t)arena(c, 1) + SCRATCH,
			       SCRATCH_LEN, (uintptr_t)arena(c, 1) + SCRATCH,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	FUZZ_CHECK(!IS_ERR(c->window) && !IS_ERR(c->scratch_mr), "reg");
	make_main_pair(c);
	c->a1 = make_qp(c, 0, 0);
	c->b1 = make_qp(c, 1, 0);
	FUZZ_CHECK(!soft_qp_connect(c->b1, c->a1), "connect attackers");
	c->att = (struct attacker){
		.qa = c->a1,
		.qb = c->b1,
		.cq = { c->cq[0], c->cq[1] },
		.mr = c->scratch_mr,
		.buf = arena(c, 1) + SCRATCH + PAGE_SIZE,
		.threaded = c->prof.threaded,
	};
	check_qpns(c);
}

static void world_fini(struct lc *c)
{
	struct soft_stats st;
	struct ib_wc wc;
	int s;

	destroy_main_pair(c);
	soft_fault_clear_qp(c->b1);
	qp_err(c->b1);
	qp_err(c->a1);
	settle(c, 2);
	poll_all(c);
	FUZZ_CHECK(!ib_destroy_qp(c->a1) && !ib_destroy_qp(c->b1), "attackers");
	FUZZ_CHECK(!ib_dereg_mr(c->window) && !ib_dereg_mr(c->scratch_mr),
		   "dereg");
	if (c->attached) {
		/* The CQs stay for the next input: nothing may be left in
		 * them for handlers whose state it clears. */
		for (s = 0; s < 2; s++)
			FUZZ_CHECK(ib_poll_cq(c->cq[s], 1, &wc) == 0,
				   "a completion on side %d after its QPs "
				   "were destroyed",
				   s);
		return;
	}
	FUZZ_CHECK(!two_hosts_close_objects(&c->hosts), "cq/pd: %s",
		   c->hosts.failed);
	for (s = 0; s < 2; s++)
		FUZZ_CHECK(!soft_device_stats(c->dev[s], &st) && !st.mrs &&
				   !st.qps && !st.iova_ranges,
			   "left on device %d: %u MRs, %u QPs", s, st.mrs,
			   st.qps);
	FUZZ_CHECK(!two_hosts_close(&c->hosts), "%s", c->hosts.failed);
	rdma_rw_set_force_mr(false);
}

void lc_run(struct lc *c, const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	int ops;

	if (!c->attached)
		c->nseen = 0; /* the log lives as long as the input */
	world_init(c, &in);
	for (ops = 0; ops < MAX_OPS && in.n; ops++) {
		u32 op = fuzz_u8(&in);

		TRACE("op %u\n", op % 16);

		if (c->a0_dead && op % 16 != 6)
			op = 6; /* a dead QP: reconnect first */
		switch (op % 16) {
		case 0:
		case 1:
			op_init(c, &in);
			break;
		case 2:
		case 3:
			op_post(c, &in);
			break;
		case 4:
			op_arm(c, &in);
			break;
		case 5:
			op_destroy(c, &in);
			break;
		case 6:
			if (c->a0_dead || fuzz_u8(&in) < 64)
				op_reconnect(c);
			break;
		case 7:
			op_attack(c, &in);
			break;
		case 8:
			post_recv(c, op & 0x10 ? c->a0 : c->b0,
				  op & 0x10 ? c->b0 : c->a0);
			break;
		case 9:
			soft_fault_resume(c->a0);
			break;
		case 10:
			qp_err(op & 0x10 ? c->b0 : c->a0);
			break;
		case 11:
			if (op & 0x10)
				op_destroy_qp_busy(c);
			else
				op_misuse(c, &in);
			break;
		case 12:
			if (op & 0x10)
				op_drain(c);
			else
				op_ctxs_cap(c, &in);
			break;
		case 13:
			/* force_mr is the process's: not under other
			 * instances (attached) */
			if (!c->attached)
				rdma_rw_set_force_mr(op & 0x10);
			break;
		default:
			settle(c, fuzz_u8(&in) % 4);
			break;
		}
		poll_all(c);
		check_grants(c, "after an operation");
	}
	world_fini(c);
}

/* ---- the cross-thread attacker ---------------------------------------- */

struct lc_cross {
	struct two_hosts side; /* the shared devices; its own PDs and CQs */
	u8 *buf;
	struct ib_mr *mr;
	int n;
	struct lc *victim[MAX_VICTIMS];
	struct attacker att[MAX_VICTIMS]; /* qa in the victim's PD on A */
	u64 rng;
	struct lc_cross_stats st;
};

static u32 cross_rand(struct lc_cross *x)
{
	x->rng ^= x->rng << 13;
	x->rng ^= x->rng >> 7;
	x->rng ^= x->rng << 17;
	return (u32)(x->rng >> 11);
}

struct lc_cross *lc_cross_new(const struct two_hosts *shared,
			      const struct soft_profile *prof,
			      struct lc *const *victims, int n, u64 seed)
{
	struct lc_cross *x = calloc(1, sizeof(*x));
	int s, v;

	FUZZ_CHECK(x && n > 0 && n <= MAX_VICTIMS, "cross attacker");
	x->side.fabric = shared->fabric;
	x->side.dev[0] = shared->dev[0];
	x->side.dev[1] = shared->dev[1];
	for (s = 0; s < 2; s++)
		FUZZ_CHECK(!two_hosts_side(&x->side, s, 256, IB_POLL_DIRECT),
			   "cross attacker: %s", x->side.failed);
	x->buf = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	FUZZ_CHECK(x->buf, "cross attacker buffer");
	memset(x->buf, 0, PAGE_SIZE);
	/* READ sinks must be remotely writable on iWARP. */
	x->mr = ib_reg_user_mr(x->side.pd[1], (uintptr_t)x->buf, PAGE_SIZE,
			       (uintptr_t)x->buf,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	FUZZ_CHECK(!IS_ERR(x->mr), "cross attacker MR");
	x->n = n;
	x->rng = seed | 1;
	for (v = 0; v < n; v++) {
		struct attacker *a = &x->att[v];

		FUZZ_CHECK(victims[v]->attached, "victim %d not attached", v);
		x->victim[v] = victims[v];
		a->qa = new_qp(victims[v]->side.pd[0], x->side.cq[0], prof, 0);
		a->qb = new_qp(x->side.pd[1], x->side.cq[1], prof, 0);
		FUZZ_CHECK(!soft_qp_connect(a->qb, a->qa), "connect");
		a->cq[0] = x->side.cq[0];
		a->cq[1] = x->side.cq[1];
		a->mr = x->mr;
		a->buf = x->buf;
		a->threaded = prof->threaded;
	}
	return x;
}

/* Some entry of @c's log in [@from, @to) carries @rkey and is not dead. */
static bool key_live(struct lc *c, u32 rkey, unsigned int from, unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++)
		if (c->log[i].rkey == rkey && !key_dead(&c->log[i]))
			return true;
	return false;
}

static bool key_published(struct lc *c, u32 rkey, unsigned int from,
			  unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++)
		if (c->log[i].rkey == rkey)
			return true;
	return false;
}

bool lc_cross_probe(struct lc_cross *x)
{
	int v = (int)(cross_rand(x) % (u32)x->n), tries;
	unsigned int n1 = 0, n2, pick;
	const struct seen_key *e;
	struct attacker *a;
	struct lc *c;
	u32 rkey, off, len;
	u64 iova, klen;
	bool live, write, accepted;

	for (tries = 0; tries < x->n && !n1; tries++, v = (v + 1) % x->n)
		n1 = __atomic_load_n(&x->victim[v]->nseen, __ATOMIC_ACQUIRE);
	if (!n1) {
		x->st.nokey++;
		return false;
	}
	v = (v + x->n - 1) % x->n;
	c = x->victim[v];
	a = &x->att[v];
	/* Half of the probes on one of the last keys published: those are
	 * being registered, used and invalidated now. */
	pick = cross_rand(x);
	if (pick & 1 && n1 > 4)
		pick = n1 - 1 - (pick >> 1) % 4;
	else
		pick = (pick >> 1) % n1;
	e = &c->log[pick];
	rkey = e->rkey;
	iova = e->iova;
	klen = e->len ? e->len : 1;
	live = key_live(c, rkey, 0, n1);
	/* A live key (iWARP: REMOTE_WRITE) would write bytes its owner
	 * reads: only READs, which no key that rw registers grants. */
	write = !live && (cross_rand(x) & 1);
	len = 1 + cross_rand(x) % (u32)(klen < PAGE_SIZE ? klen : PAGE_SIZE);
	off = cross_rand(x) % (u32)(klen - len + 1);
	fill(&x->rng, x->buf, len);
	accepted = attack_probe(a, write, rkey, iova + off, iova, len);
	n2 = __atomic_load_n(&c->nseen, __ATOMIC_ACQUIRE);
	if (live) {
		FUZZ_CHECK(!accepted,
			   "live key %#x of thread %d grants a remote READ "
			   "at %#llx + %u, %u bytes (rw registers no remote "
			   "read right)",
			   rkey, v, (unsigned long long)iova, off, len);
		x->st.live++;
	} else if (key_published(c, rkey, n1, n2)) {
		x->st.renewed++; /* registered again meanwhile */
	} else {
		FUZZ_CHECK(!accepted,
			   "stale key %#x of thread %d (its context "
			   "destroyed) still grants a remote %s at %#llx + "
			   "%u, %u bytes",
			   rkey, v, write ? "WRITE" : "READ",
			   (unsigned long long)iova, off, len);
		x->st.stale++;
	}
	if (attacker_broken(a))
		attacker_reset(a);
	return true;
}

void lc_cross_free(struct lc_cross *x, struct lc_cross_stats *st)
{
	int v;

	if (!x)
		return;
	if (st)
		*st = x->st;
	for (v = 0; v < x->n; v++) {
		qp_err(x->att[v].qb);
		qp_err(x->att[v].qa);
	}
	poll_cqs(x->side.cq);
	for (v = 0; v < x->n; v++)
		FUZZ_CHECK(!ib_destroy_qp(x->att[v].qa) &&
				   !ib_destroy_qp(x->att[v].qb),
			   "cross attacker QPs");
	FUZZ_CHECK(!ib_dereg_mr(x->mr), "cross attacker MR");
	FUZZ_CHECK(!two_hosts_close_objects(&x->side), "cross attacker: %s",
		   x->side.failed);
	free(x->buf);
	free(x);
}

/* ---- the libFuzzer target ---------------------------------------------- */

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct lc *solo;

	if (!solo)
		solo = lc_new(MAX_SEEN);
	lc_run(solo, data, size);
	return 0;
}

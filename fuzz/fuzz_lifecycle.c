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
 * recv_once, ctxs_cap, qpn, force_mr_errno.  docs/reliability.md has the
 * model.  Every wait is bounded.
 */
#include "fuzz_common.h"

#include <errno.h>
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
#define MAX_SEEN 64
#define MAX_RECV 32
#define MSG_LEN 32
#define WAIT_MS 2000

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
};

static const char *const skip_names[] = {
	"destroy_keys",	  "partial_post", "destroy_busy",
	"destroy_misuse", "drain",	  "recv_once",
	"ctxs_cap",	  "qpn",	  "force_mr_errno",
};

static unsigned int skip;
static bool trace;

#define TRACE(...)                                                  \
	do {                                                        \
		if (trace)                                          \
			fprintf(stderr, "lifecycle: " __VA_ARGS__); \
	} while (0)

static bool skipped(unsigned int what)
{
	return skip & what;
}

static void parse_skip(void)
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
}

/* ---- arenas and the shadow --------------------------------------------- */

static u8 *mem[2]; /* page aligned; GUARD + ARENA + GUARD mapped */
static u8 *shadow[2]; /* ARENA each */
static u8 *tmp;

static u8 *arena(int side)
{
	return mem[side] + GUARD;
}

static void setup_once(void)
{
	int s;

	if (mem[0])
		return;
	parse_skip();
	trace = getenv("FUZZ_LIFECYCLE_TRACE");
	for (s = 0; s < 2; s++) {
		void *p = mmap(NULL, ARENA + 2 * GUARD, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		FUZZ_CHECK(p != MAP_FAILED, "mmap");
		mem[s] = p;
		FUZZ_CHECK(!mprotect(mem[s], GUARD, PROT_NONE) &&
				   !mprotect(mem[s] + GUARD + ARENA, GUARD,
					     PROT_NONE),
			   "guards");
		shadow[s] = malloc(ARENA);
		FUZZ_CHECK(shadow[s], "shadow");
	}
	tmp = malloc(ARENA);
	FUZZ_CHECK(tmp, "tmp");
}

static u64 rng_state;

static void fill(u8 *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		rng_state ^= rng_state << 13;
		rng_state ^= rng_state >> 7;
		rng_state ^= rng_state << 17;
		p[i] = (u8)(rng_state >> 11);
	}
}

/* The ULP writes new bytes into @len bytes at @off of @side. */
static void reuse(int side, u64 off, u64 len)
{
	fill(arena(side) + off, len);
	memcpy(shadow[side] + off, arena(side) + off, len);
}

/* ---- the world -------------------------------------------------------- */

enum lstate { L_FREE, L_INIT, L_POSTED, L_DONE, L_FAILED };

struct piece {
	u64 off; /* in the local arena */
	u32 len;
};

struct lctx {
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

struct seen_key {
	u32 rkey;
	u64 iova, len;
	int slot;
	u32 gen;
};

struct recv {
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

struct world {
	struct soft_profile prof;
	struct two_hosts hosts; /* fabric, devices, PDs, CQs */
	struct soft_fabric *fabric;
	struct ib_device *dev[2];
	struct ib_pd *pd[2];
	struct ib_cq *cq[2];
	struct ib_qp *a0, *b0, *a1, *b1;
	struct ib_mr *window, *scratch_mr;
	int pool_rdma;
	u32 max_rdma_ctxs;
	bool force_at_create;
	bool a0_dead; /* drained or destroyed: reconnect before use */
	struct lctx l[NSLOT];
	u32 gen;
	struct seen_key seen[MAX_SEEN];
	int nseen;
	struct recv rv[MAX_RECV];
	int nrecv;
	struct probe pr[2];
	int rules;
};

static struct world w;

static void ctx_done(struct ib_cq *cq, struct ib_wc *wc);

static void recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct recv *r = container_of(wc->wr_cqe, struct recv, cqe);

	r->done++;
	if (!skipped(SK_RECV_ONCE) || !w.prof.threaded)
		FUZZ_CHECK(r->done == 1, "receive %td completed %d times",
			   r - w.rv, r->done);
	FUZZ_CHECK(wc->qp == r->qp, "receive completed on another QP");
	if (wc->status == IB_WC_SUCCESS)
		FUZZ_CHECK(wc->src_qp == r->src_qpn,
			   "SEND from QP %u, connected to %u", wc->src_qp,
			   r->src_qpn);
}

static void probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct probe *p = container_of(wc->wr_cqe, struct probe, cqe);

	p->done++;
	FUZZ_CHECK(p->done == 1, "attacker WR completed twice");
	p->status = wc->status;
}

static void poll_all(void)
{
	int s;

	for (s = 0; s < 2; s++)
		while (ib_process_cq_direct(w.cq[s], -1) > 0)
			;
}

/* Poll until @pred holds or @ms pass (inline devices: one round). */
static bool wait_for(bool (*pred)(void), u64 ms)
{
	u64 end = fuzz_now_ms() + ms;

	for (;;) {
		poll_all();
		if (pred())
			return true;
		if (!w.prof.threaded || fuzz_now_ms() > end)
			return false;
		sched_yield();
	}
}

static bool nothing_in_flight(void)
{
	int i;

	for (i = 0; i < NSLOT; i++)
		if (w.l[i].state == L_POSTED)
			return false;
	return true;
}

static bool probes_done(void)
{
	return w.pr[0].done && w.pr[1].done;
}

static bool recvs_done(void)
{
	int i;

	for (i = 0; i < w.nrecv; i++)
		if (w.rv[i].used && !w.rv[i].done)
			return false;
	return true;
}

/* Let a threaded device settle: poll for a while. */
static void settle(u64 ms)
{
	u64 end = fuzz_now_ms() + ms;

	poll_all();
	while (w.prof.threaded && fuzz_now_ms() < end) {
		sched_yield();
		poll_all();
	}
}

/* ---- the grant check ------------------------------------------------- */

static bool exposed(const struct lctx *l)
{
	return l->state != L_FREE && l->posts > 0;
}

static void check_side(int side, const char *when)
{
	size_t i;
	int k;
	u32 j;

	memcpy(tmp, arena(side), ARENA);
	memcpy(tmp + SCRATCH, shadow[side] + SCRATCH, SCRATCH_LEN);
	for (k = 0; k < NSLOT; k++) {
		const struct lctx *l = &w.l[k];

		if (!exposed(l))
			continue;
		if (side == 0) {
			for (j = 0; j < l->npc; j++)
				memcpy(tmp + l->pc[j].off,
				       shadow[0] + l->pc[j].off, l->pc[j].len);
		} else if (l->dir == DMA_TO_DEVICE) {
			memcpy(tmp + l->roff, shadow[1] + l->roff, l->total);
		}
	}
	if (!memcmp(tmp, shadow[side], ARENA))
		return;
	for (i = 0; tmp[i] == shadow[side][i]; i++)
		;
	FUZZ_CHECK(0,
		   "%s: side %c byte %zu (slot %zu +%zu) changed to %#x "
		   "(was %#x) without a grant",
		   when, side ? 'B' : 'A', i, i / SLOT, i % SLOT, tmp[i],
		   shadow[side][i]);
}

static void check_grants(const char *when)
{
	check_side(0, when);
	check_side(1, when);
}

/* ---- contexts -------------------------------------------------------- */

static u8 *loc(const struct lctx *l, u32 j)
{
	return arena(0) + l->pc[j].off;
}

/* The destination bytes: into @buf, in transfer order. */
static void dest_now(const struct lctx *l, u8 *buf)
{
	u64 at = 0;
	u32 j;

	if (l->dir == DMA_TO_DEVICE) {
		memcpy(buf, arena(1) + l->roff, l->total);
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
		memcpy(buf, arena(1) + l->roff, l->total);
		return;
	}
	for (j = 0; j < l->npc; j++) {
		memcpy(buf + at, loc(l, j), l->pc[j].len);
		at += l->pc[j].len;
	}
}

static void ctx_check_bytes(struct lctx *l)
{
	static u8 dst[SLOT], src[SLOT];
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
			   l - w.l, l->dir == DMA_TO_DEVICE ? "WRITE" : "READ",
			   (unsigned long long)i, (unsigned long long)l->total,
			   dst[i], src[i]);
		return;
	}
	for (i = 0; i < l->total; i++)
		FUZZ_CHECK(dst[i] == l->old[i] || dst[i] == src[i],
			   "slot %td: failed transfer left byte %llu %#x, "
			   "neither old %#x nor new %#x",
			   l - w.l, (unsigned long long)i, dst[i], l->old[i],
			   src[i]);
}

static void ctx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lctx *l = container_of(wc->wr_cqe, struct lctx, cqe);

	FUZZ_CHECK(l->state != L_FAILED,
		   "slot %td: a context whose post failed completed (%s)",
		   l - w.l, ib_wc_status_msg(wc->status));
	FUZZ_CHECK(l->state == L_POSTED,
		   "slot %td: completion of a context not in flight (%d)",
		   l - w.l, l->state);
	l->done++;
	FUZZ_CHECK(l->done == 1, "slot %td: completed twice", l - w.l);
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

static void op_init(struct fuzz_in *in)
{
	int k = (int)fuzz_below(in, NSLOT);
	struct lctx *l = &w.l[k];
	u32 shape = fuzz_u8(in), i, n;
	u64 off[MAX_ENTS], cursor, base = (u64)k * SLOT, skip_bytes = 0;
	u32 len[MAX_ENTS];
	bool pool_less;
	int ret;

	if (l->state != L_FREE || w.a0_dead)
		return;
	memset(l, 0, offsetof(struct lctx, old));
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
			bvec_set_virt(&l->bv[i], arena(0) + off[i], len[i]);
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
			sg_set_buf(&l->sg[i], arena(0) + off[i], len[i]);
		l->sg_offset = (u32)skip_bytes;
		model_pieces(l, off, len, skip_bytes, ~0ULL);
	}
	l->roff = base + fuzz_below(in, (u32)(SLOT - l->total + 1));
	pool_less = w.pool_rdma == 0;
	if (l->bvec)
		ret = rdma_rw_ctx_init_bvec(
			&l->ctx, w.a0, 1, l->bv, n, l->it,
			(uintptr_t)arena(1) + l->roff,
			w.window->rkey ^ (l->good_key ? 0 : 0x100), l->dir);
	else
		ret = rdma_rw_ctx_init(
			&l->ctx, w.a0, 1, l->sg, n, l->sg_offset,
			(uintptr_t)arena(1) + l->roff,
			w.window->rkey ^ (l->good_key ? 0 : 0x100), l->dir);
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
	l->gen = ++w.gen;
}

static void remember_keys(struct lctx *l)
{
	u32 j;

	if (!ctx_has_mrs(l))
		return;
	for (j = 0; j < l->ctx.nr_ops && w.nseen < MAX_SEEN; j++) {
		struct ib_mr *mr = l->ctx.reg[j].mr;

		/* The key this post registers (rdma_rw_ctx_wrs() bumps). */
		w.seen[w.nseen++] = (struct seen_key){
			.rkey = ib_inc_rkey(mr->rkey),
			.iova = mr->iova,
			.len = mr->length,
			.slot = (int)(l - w.l),
			.gen = l->gen,
		};
	}
}

static void op_post(struct fuzz_in *in)
{
	int k = (int)fuzz_below(in, NSLOT);
	struct lctx *l = &w.l[k];
	u32 f = fuzz_u8(in);
	u8 *msg = arena(0) + SCRATCH;
	int ret;

	if (l->state != L_INIT && l->state != L_DONE)
		return;
	if (l->posts && l->state == L_DONE && ctx_has_mrs(l) &&
	    l->status != IB_WC_SUCCESS)
		return; /* documented: a flushed INV leaves the MR valid */
	l->chained = f & 1;
	if (l->chained) {
		l->ssge = (struct ib_sge){ (uintptr_t)msg, MSG_LEN,
					   w.pd[0]->local_dma_lkey };
		memset(&l->send, 0, sizeof(l->send));
		l->send.opcode = IB_WR_SEND;
		l->send.sg_list = &l->ssge;
		l->send.num_sge = 1;
		l->send.send_flags = IB_SEND_SIGNALED;
		l->send.wr_cqe = &l->cqe;
	}
	dest_now(l, l->old);
	remember_keys(l);
	l->done = 0;
	l->posts++;
	l->state = L_POSTED;
	ret = rdma_rw_ctx_post(&l->ctx, w.a0, 1, l->chained ? NULL : &l->cqe,
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

/* What the destination holds now is final; the ULP reuses the buffer. */
static void retire(struct lctx *l)
{
	u32 j;

	if (l->posts) {
		for (j = 0; j < l->npc; j++)
			memcpy(shadow[0] + l->pc[j].off, loc(l, j),
			       l->pc[j].len);
		if (l->dir == DMA_TO_DEVICE)
			memcpy(shadow[1] + l->roff, arena(1) + l->roff,
			       l->total);
	}
	for (j = 0; j < l->npc; j++)
		reuse(0, l->pc[j].off, l->pc[j].len);
	l->state = L_FREE;
}

static void destroy_ctx(struct lctx *l)
{
	if (l->bvec)
		rdma_rw_ctx_destroy_bvec(&l->ctx, w.a0, 1, l->bv, l->n, l->dir);
	else
		rdma_rw_ctx_destroy(&l->ctx, w.a0, 1, l->sg, l->n, l->dir);
	retire(l);
}

static void op_destroy(struct fuzz_in *in)
{
	struct lctx *l = &w.l[fuzz_below(in, NSLOT)];

	/* The ULP's rule: after the completion, or after a failed post. */
	if (l->state == L_INIT || l->state == L_DONE || l->state == L_FAILED)
		destroy_ctx(l);
}

static void check_pool_sane(const char *what)
{
	int in_pool = ib_mr_pool_count(w.a0, &w.a0->rdma_mrs);

	FUZZ_CHECK(rdmarw_dma_mapped(w.dev[0]) >= 0 && w.a0->mrs_used >= 0 &&
			   in_pool + w.a0->mrs_used == w.pool_rdma,
		   "%s: mapped %ld, MRs taken %d, pool %d of %d", what,
		   rdmarw_dma_mapped(w.dev[0]), w.a0->mrs_used, in_pool,
		   w.pool_rdma);
}

static void op_misuse(struct fuzz_in *in)
{
	struct lctx *l = &w.l[fuzz_below(in, NSLOT)];
	u32 how = fuzz_u8(in) % 3;
	long mapped = rdmarw_dma_mapped(w.dev[0]);
	int used = w.a0->mrs_used;
	struct rdma_rw_ctx copy;

	if (skipped(SK_MISUSE) || l->bvec ||
	    (l->state != L_INIT && l->state != L_DONE && l->state != L_FAILED))
		return;
	if (how == 2) {
		/* A copy and the original both destroyed: one release. */
		copy = l->ctx;
		rdma_rw_ctx_destroy(&copy, w.a0, 1, l->sg, l->n, l->dir);
		rdma_rw_ctx_destroy(&l->ctx, w.a0, 1, l->sg, l->n, l->dir);
		check_pool_sane("a context destroyed twice through a copy");
		retire(l);
		return;
	}
	if (how == 0)
		rdma_rw_ctx_destroy(&l->ctx, w.a0, 1, l->sg, l->n + 1, l->dir);
	else
		rdma_rw_ctx_destroy(&l->ctx, w.a0, 1, NULL, l->n, l->dir);
	FUZZ_CHECK(rdmarw_dma_mapped(w.dev[0]) == mapped &&
			   w.a0->mrs_used == used &&
			   l->ctx.rdmarw_origin == RDMARW_RW_ORIGIN_SG,
		   "misused destroy (%s) changed state: mapped %ld -> %ld, "
		   "MRs %d -> %d, origin %u",
		   how ? "NULL sg" : "other sg_cnt", mapped,
		   rdmarw_dma_mapped(w.dev[0]), used, w.a0->mrs_used,
		   l->ctx.rdmarw_origin);
}

/* ---- faults, errors, receives ---------------------------------------- */

static const enum ib_wc_status wc_statuses[] = {
	IB_WC_GENERAL_ERR,  IB_WC_RETRY_EXC_ERR,  IB_WC_REM_OP_ERR,
	IB_WC_LOC_PROT_ERR, IB_WC_REM_ACCESS_ERR,
};

static void op_arm(struct fuzz_in *in)
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
	if (!soft_fault_arm_qp(w.a0, &r))
		w.rules++;
}

static void post_recv(struct ib_qp *qp, struct ib_qp *from)
{
	struct recv *r;
	struct ib_sge s;
	struct ib_recv_wr wr = { 0 };
	int side = qp == w.b0 || qp == w.b1;

	if (w.nrecv >= MAX_RECV)
		return;
	r = &w.rv[w.nrecv];
	memset(r, 0, sizeof(*r));
	r->cqe.done = recv_done;
	r->qp = qp;
	r->src_qpn = from->qp_num;
	s.addr = (uintptr_t)arena(side) + SCRATCH + (u64)w.nrecv * MSG_LEN;
	s.length = MSG_LEN;
	s.lkey = side ? w.scratch_mr->lkey : w.pd[0]->local_dma_lkey;
	wr.wr_cqe = &r->cqe;
	wr.sg_list = &s;
	wr.num_sge = 1;
	if (!ib_post_recv(qp, &wr, NULL)) {
		r->used = true;
		w.nrecv++;
	}
}

static void qp_err(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

	FUZZ_CHECK(!ib_modify_qp(qp, &a, IB_QP_STATE), "to ERR");
}

static void check_qpns(void)
{
	struct ib_qp *q[4] = { w.a0, w.b0, w.a1, w.b1 };
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

static struct ib_qp *make_qp(int side, u32 ctxs)
{
	struct ib_qp_init_attr a = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.send_cq = w.cq[side],
		.recv_cq = w.cq[side],
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = MAX_RECV,
			 .max_send_sge = 4,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = ctxs },
	};
	struct ib_qp *qp;

	if (a.cap.max_send_sge > (u32)w.prof.attrs.max_send_sge)
		a.cap.max_send_sge = (u32)w.prof.attrs.max_send_sge;
	qp = ib_create_qp(w.pd[side], &a);
	FUZZ_CHECK(!IS_ERR(qp), "create qp: %ld", PTR_ERR(qp));
	return qp;
}

static void make_main_pair(void)
{
	w.force_at_create = rdma_rw_get_force_mr();
	w.a0 = make_qp(0, w.max_rdma_ctxs);
	w.b0 = make_qp(1, 0);
	w.pool_rdma = ib_mr_pool_count(w.a0, &w.a0->rdma_mrs);
	FUZZ_CHECK(!soft_qp_connect(w.a0, w.b0), "connect");
	w.a0_dead = false;
	w.rules = 0;
	check_qpns();
}

static void check_pools(void)
{
	FUZZ_CHECK(w.a0->mrs_used == 0, "MRs still taken: %d", w.a0->mrs_used);
	FUZZ_CHECK(ib_mr_pool_count(w.a0, &w.a0->rdma_mrs) == w.pool_rdma,
		   "pool %d of %d", ib_mr_pool_count(w.a0, &w.a0->rdma_mrs),
		   w.pool_rdma);
	FUZZ_CHECK(rdmarw_dma_mapped(w.dev[0]) == 0, "still DMA-mapped: %ld",
		   rdmarw_dma_mapped(w.dev[0]));
}

/*
 * Everything in flight on the main pair ends: resume, ERR, bounded wait;
 * every context posted completes exactly once, every receive once.
 */
static void quiesce_main(void)
{
	soft_fault_clear_qp(w.a0);
	qp_err(w.a0);
	qp_err(w.b0);
	FUZZ_CHECK(wait_for(nothing_in_flight, WAIT_MS) || nothing_in_flight(),
		   "a posted context never completed after ERR");
	if (!skipped(SK_RECV_ONCE) || !w.prof.threaded)
		FUZZ_CHECK(wait_for(recvs_done, WAIT_MS) || recvs_done(),
			   "a receive never completed after ERR");
	settle(2);
	check_grants("quiesce");
}

static void destroy_main_pair(void)
{
	int i;

	quiesce_main();
	for (i = 0; i < NSLOT; i++)
		if (w.l[i].state != L_FREE)
			destroy_ctx(&w.l[i]);
	settle(5);
	check_grants("after destroying every context");
	check_pools();
	FUZZ_CHECK(!ib_destroy_qp(w.a0) && !ib_destroy_qp(w.b0),
		   "destroy main QPs");
	w.a0 = w.b0 = NULL;
	/* Receives of destroyed QPs are done with. */
	for (i = 0; i < w.nrecv; i++)
		if (w.rv[i].qp != w.a1 && w.rv[i].qp != w.b1)
			w.rv[i].used = false;
}

static void op_reconnect(void)
{
	destroy_main_pair();
	make_main_pair();
}

static void op_destroy_qp_busy(void)
{
	bool holds = false;
	int i, ret;

	if (skipped(SK_DESTROY_BUSY))
		return;
	for (i = 0; i < NSLOT; i++)
		if (w.l[i].state != L_FREE && w.l[i].ctx.rdmarw_block)
			holds = true;
	if (!holds && !w.a0->mrs_used)
		return;
	ret = ib_destroy_qp(w.a0);
	FUZZ_CHECK(ret == -EBUSY,
		   "ib_destroy_qp() with contexts holding its storage: %d",
		   ret);
}

static void op_drain(void)
{
	int ret, i;

	if (skipped(SK_DRAIN) || w.a0_dead)
		return;
	soft_fault_clear_qp(w.a0);
	ret = ib_drain_qp(w.a0);
	if (ret)
		return; /* a documented error, the QP is dead anyway */
	w.a0_dead = true;
	poll_all();
	for (i = 0; i < NSLOT; i++)
		FUZZ_CHECK(w.l[i].state != L_POSTED,
			   "slot %d still in flight after ib_drain_qp()", i);
	for (i = 0; i < w.nrecv; i++)
		FUZZ_CHECK(!w.rv[i].used || w.rv[i].qp != w.a0 || w.rv[i].done,
			   "receive %d outstanding after ib_drain_qp()", i);
}

static void op_ctxs_cap(struct fuzz_in *in)
{
	u32 v = fuzz_u32(in);
	struct ib_qp_init_attr a = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.send_cq = w.cq[0],
		.recv_cq = w.cq[0],
		.cap = { .max_send_wr = 1,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp *qp;

	if (skipped(SK_CTXS_CAP))
		return;
	a.cap.max_rdma_ctxs = v > (u32)w.prof.attrs.max_qp_wr ? v : ~0u - v % 4;
	qp = ib_create_qp(w.pd[0], &a);
	FUZZ_CHECK(IS_ERR(qp) && PTR_ERR(qp) == -EINVAL,
		   "cap.max_rdma_ctxs %u (device queues %u): %ld",
		   a.cap.max_rdma_ctxs, w.prof.attrs.max_qp_wr,
		   IS_ERR(qp) ? PTR_ERR(qp) : 0L);
}

/* ---- the attacker ---------------------------------------------------- */

static void reconnect_attackers(void)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	int i;

	FUZZ_CHECK(!ib_modify_qp(w.a1, &a, IB_QP_STATE) &&
			   !ib_modify_qp(w.b1, &a, IB_QP_STATE),
		   "reset attackers");
	FUZZ_CHECK(!soft_qp_connect(w.b1, w.a1), "connect attackers");
	for (i = 0; i < w.nrecv; i++)
		if (w.rv[i].qp == w.a1 || w.rv[i].qp == w.b1)
			w.rv[i].used = false; /* RESET drops them */
}

static bool qp_is_err(struct ib_qp *qp)
{
	struct ib_qp_attr a;
	struct ib_qp_init_attr ia;

	FUZZ_CHECK(!ib_query_qp(qp, &a, 0, &ia), "query");
	return a.qp_state == IB_QPS_ERR;
}

/*
 * b1 RDMA WRITEs (or READs) through a key it saw, followed by a zero-length
 * READ that only succeeds when the QP was not terminated on the way.
 */
static void op_attack(struct fuzz_in *in)
{
	u32 c = fuzz_u8(in), pick = fuzz_u8(in);
	u32 off = fuzz_u16(in), len = 1 + fuzz_below(in, PAGE_SIZE);
	struct seen_key k = { .slot = -1 };
	struct ib_rdma_wr wr = { 0 }, zero = { 0 };
	struct ib_sge s, zs;
	bool write = c & 1, stale, accepted;
	u8 *src = arena(1) + SCRATCH + PAGE_SIZE;

	if (w.nseen && (c & 6)) {
		k = w.seen[pick % w.nseen];
	} else {
		k.rkey = c & 8 ? w.pd[0]->local_dma_lkey : fuzz_u32(in);
		k.iova = (uintptr_t)arena(0) + fuzz_below(in, WINDOW);
		k.len = PAGE_SIZE;
	}
	stale = k.slot < 0 || w.l[k.slot].state == L_FREE ||
		w.l[k.slot].gen != k.gen;
	if (stale && k.slot >= 0 && skipped(SK_DESTROY_KEYS))
		return;
	if (len > k.len)
		len = (u32)k.len;
	off %= (u32)k.len;
	if (off + len > k.len)
		off = (u32)k.len - len;
	fill(src, len);
	s = (struct ib_sge){ (uintptr_t)src, len, w.scratch_mr->lkey };
	zs = (struct ib_sge){ (uintptr_t)src, 0, w.scratch_mr->lkey };
	memset(w.pr, 0, sizeof(w.pr));
	w.pr[0].cqe.done = w.pr[1].cqe.done = probe_done;
	wr.wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
	wr.wr.sg_list = &s;
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.wr_cqe = &w.pr[0].cqe;
	wr.remote_addr = k.iova + off;
	wr.rkey = k.rkey;
	wr.wr.next = &zero.wr;
	zero.wr.opcode = IB_WR_RDMA_READ;
	zero.wr.sg_list = &zs;
	zero.wr.num_sge = 1;
	zero.wr.send_flags = IB_SEND_SIGNALED;
	zero.wr.wr_cqe = &w.pr[1].cqe;
	zero.remote_addr = k.iova;
	zero.rkey = k.rkey;
	/* A live key is granted: its context's bytes are the attacker's now
	 * (set first: the context may complete while we wait). */
	if (!stale)
		w.l[k.slot].tainted = true;
	FUZZ_CHECK(!ib_post_send(w.b1, &wr.wr, NULL), "attacker post");
	FUZZ_CHECK(wait_for(probes_done, WAIT_MS) || probes_done(),
		   "attacker WRs never completed");
	accepted = w.pr[0].status == IB_WC_SUCCESS &&
		   w.pr[1].status == IB_WC_SUCCESS;
	TRACE("attack %s key %#x slot %d stale %d: %s / %s\n",
	      write ? "WRITE" : "READ", k.rkey, k.slot, stale,
	      ib_wc_status_msg(w.pr[0].status),
	      ib_wc_status_msg(w.pr[1].status));
	if (stale)
		FUZZ_CHECK(!accepted,
			   "stale key %#x (slot %d gen %u, destroyed) still "
			   "grants remote %s at %#llx + %u, %u bytes",
			   k.rkey, k.slot, k.gen, write ? "WRITE" : "READ",
			   (unsigned long long)k.iova, off, len);
	check_grants(stale ? "attacker with a stale key" : "attacker");
	if (qp_is_err(w.b1) || qp_is_err(w.a1))
		reconnect_attackers();
}

/* ---- the run --------------------------------------------------------- */

static void world_init(struct fuzz_in *in)
{
	u32 flags = fuzz_u8(in);
	int s;

	memset(&w, 0, sizeof(w));
	FUZZ_CHECK(!soft_profile_get(fuzz_profiles[(flags & 3) % 3], &w.prof),
		   "p");
	w.prof.threaded = flags & 4;
	rdma_rw_set_force_mr(flags & 8);
	w.max_rdma_ctxs = 1 + (flags >> 4) % NSLOT;
	rng_state = 0x9e3779b97f4a7c15ULL ^ flags;
	/* the hosts of tools/common/two_hosts.c; the QPs are made below */
	FUZZ_CHECK(!two_hosts_devices(&w.hosts, &w.prof, NULL, false), "%s",
		   w.hosts.failed);
	w.fabric = w.hosts.fabric;
	for (s = 0; s < 2; s++) {
		FUZZ_CHECK(!two_hosts_side(&w.hosts, s, 2048, IB_POLL_DIRECT),
			   "%s", w.hosts.failed);
		w.dev[s] = w.hosts.dev[s];
		w.pd[s] = w.hosts.pd[s];
		w.cq[s] = w.hosts.cq[s];
		fill(arena(s), ARENA);
		memcpy(shadow[s], arena(s), ARENA);
	}
	w.window = ib_reg_user_mr(
		w.pd[1], (uintptr_t)arena(1), WINDOW, (uintptr_t)arena(1),
		IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			IB_ACCESS_REMOTE_WRITE);
	/* The attacker's own buffers (READ sinks must be remotely writable
	 * on iWARP) and B's receive buffers. */
	w.scratch_mr =
		ib_reg_user_mr(w.pd[1], (uintptr_t)arena(1) + SCRATCH,
			       SCRATCH_LEN, (uintptr_t)arena(1) + SCRATCH,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	FUZZ_CHECK(!IS_ERR(w.window) && !IS_ERR(w.scratch_mr), "reg");
	make_main_pair();
	w.a1 = make_qp(0, 0);
	w.b1 = make_qp(1, 0);
	FUZZ_CHECK(!soft_qp_connect(w.b1, w.a1), "connect attackers");
	check_qpns();
}

static void world_fini(void)
{
	struct soft_stats st;
	int s;

	destroy_main_pair();
	soft_fault_clear_qp(w.b1);
	qp_err(w.b1);
	qp_err(w.a1);
	settle(2);
	poll_all();
	FUZZ_CHECK(!ib_destroy_qp(w.a1) && !ib_destroy_qp(w.b1), "attackers");
	FUZZ_CHECK(!ib_dereg_mr(w.window) && !ib_dereg_mr(w.scratch_mr),
		   "dereg");
	FUZZ_CHECK(!two_hosts_close_objects(&w.hosts), "cq/pd: %s",
		   w.hosts.failed);
	for (s = 0; s < 2; s++)
		FUZZ_CHECK(!soft_device_stats(w.dev[s], &st) && !st.mrs &&
				   !st.qps && !st.iova_ranges,
			   "left on device %d: %u MRs, %u QPs", s, st.mrs,
			   st.qps);
	FUZZ_CHECK(!two_hosts_close(&w.hosts), "%s", w.hosts.failed);
	rdma_rw_set_force_mr(false);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	int ops;

	setup_once();
	world_init(&in);
	for (ops = 0; ops < MAX_OPS && in.n; ops++) {
		u32 op = fuzz_u8(&in);

		TRACE("op %u\n", op % 16);

		if (w.a0_dead && op % 16 != 6)
			op = 6; /* a dead QP: reconnect first */
		switch (op % 16) {
		case 0:
		case 1:
			op_init(&in);
			break;
		case 2:
		case 3:
			op_post(&in);
			break;
		case 4:
			op_arm(&in);
			break;
		case 5:
			op_destroy(&in);
			break;
		case 6:
			if (w.a0_dead || fuzz_u8(&in) < 64)
				op_reconnect();
			break;
		case 7:
			op_attack(&in);
			break;
		case 8:
			post_recv(op & 0x10 ? w.a0 : w.b0,
				  op & 0x10 ? w.b0 : w.a0);
			break;
		case 9:
			soft_fault_resume(w.a0);
			break;
		case 10:
			qp_err(op & 0x10 ? w.b0 : w.a0);
			break;
		case 11:
			if (op & 0x10)
				op_destroy_qp_busy();
			else
				op_misuse(&in);
			break;
		case 12:
			if (op & 0x10)
				op_drain();
			else
				op_ctxs_cap(&in);
			break;
		case 13:
			rdma_rw_set_force_mr(op & 0x10);
			break;
		default:
			settle(fuzz_u8(&in) % 4);
			break;
		}
		poll_all();
		check_grants("after an operation");
	}
	world_fini();
	return 0;
}

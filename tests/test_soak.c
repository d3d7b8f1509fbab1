// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A soak shaped like a storage target: thousands of random R/W contexts
 * (random SGL shapes and sizes, sg_offset or a bio_vec iterator, remote
 * offsets, READ and WRITE, half of them answered with a chained SEND) on
 * several QPs and profiles while faults are injected (completion errors,
 * QPs moved to ERR mid-chain, posts failing part-way, stalls, MR
 * allocations failing when a connection is rebuilt, MR pools emptied by
 * the test), in inline and threaded modes, with several threads posting on
 * their own QPs and on one shared QP.  Checked all along:
 * - every context completes exactly once, through its cqe or its chained
 *   SEND, or its post fails; a context whose post failed part-way is
 *   destroyed at once, with no fence (the library moved the QP to ERR), and
 *   neither its buffer nor its remote window may change after that, until
 *   the connection is torn down;
 * - every completion without a cqe is an error, and every error status is
 *   one that was injected (or a flush);
 * - Send Queue credits balance: the device's queue depth is limited to the
 *   credits the target hands out, so any -ENOMEM from a post is a leak;
 * - every byte of every successful transfer is right; a failed transfer
 *   leaves each byte of its destination old or new; no other byte of the
 *   local buffer or the remote window changes; buffers sit between
 *   PROT_NONE guard pages;
 * - every MR goes back to its pool (mrs_used 0, ib_mr_pool_count() equal
 *   to the pool size) whenever a connection is rebuilt and at the end;
 * - successful chained SENDs equal successful receives at the peer;
 * - the device ends with nothing DMA-mapped and no IOVA range.
 *
 * Bounded for CI (a fixed number of I/Os per configuration, deterministic
 * in inline mode); RDMARW_SOAK_SECONDS=<s> runs each configuration for that
 * long instead, RDMARW_SOAK_IOS=<n> changes the count.  Each configuration
 * prints its figures (docs/reliability.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/mr_pool.h>
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define SLOTS 8 /* contexts in flight per connection */
#define REG_PAGES 32 /* local buffer and remote window, per slot */
#define REG_LEN (REG_PAGES * PAGE_SIZE)
#define MAX_ENTS 8
#define RQ_DEPTH 32
#define MSG_LEN 32
#define BUDGET 24 /* Send Queue credits per connection */
#define MAX_CONNS 4
#define MAX_THREADS 4
#define MAGIC 0x50414b53u

/* Statuses the soak injects; no healthy transfer of the soak gives them. */
static const enum ib_wc_status injected[] = {
	IB_WC_GENERAL_ERR,
	IB_WC_RETRY_EXC_ERR,
	IB_WC_REM_OP_ERR,
};

/* ---- figures and failures ------------------------------------------------ */

struct soak_figures {
	u64 ios, reads, writes, chained, bvecs, failed_ios, partial_posts;
	u64 unposted, eagain, reconnects, create_failures, pool_holds;
	u64 stall_resumes, sends_ok, recvs_ok, bytes;
};

struct soak {
	const char *name;
	struct soft_fabric *fabric;
	struct ib_device *dev[2];
	struct ib_pd *pd[2];
	bool threaded_dev;
	bool force_mr;
	u64 target; /* I/Os per driver thread */
	double seconds; /* > 0: run that long instead */
	struct timespec start;
	int failures; /* atomic */
	char why[256];
	pthread_mutex_t fig_lock;
	struct soak_figures fig;
};

static void soak_fail(struct soak *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void soak_fail(struct soak *s, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&s->failures, 1, __ATOMIC_RELAXED) == 0) {
		va_start(ap, fmt);
		vsnprintf(s->why, sizeof(s->why), fmt, ap);
		va_end(ap);
	}
}

#define CHECK(s, cond, ...)                          \
	do {                                         \
		if (!(cond))                         \
			soak_fail((s), __VA_ARGS__); \
	} while (0)

static u64 rnd(u64 *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

static u32 rnd_below(u64 *x, u32 n)
{
	return n ? (u32)(rnd(x) % n) : 0;
}

static void rnd_fill(u64 *x, u8 *p, size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		u64 v = rnd(x);

		memcpy(p + i, &v, 8);
	}
	for (; i < n; i++)
		p[i] = (u8)rnd(x);
}

static double elapsed(const struct soak *s)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - s->start.tv_sec) +
	       (double)(t.tv_nsec - s->start.tv_nsec) / 1e9;
}

/* ---- guarded buffers ---------------------------------------------------- */

/* @len bytes between two PROT_NONE pages. */
static u8 *guarded_alloc(size_t len)
{
	size_t total;

	len = (len + PAGE_SIZE - 1) & PAGE_MASK;
	total = len + 2 * PAGE_SIZE;
	u8 *p;

	p = mmap(NULL, total, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	assert_int_equal(mprotect(p, PAGE_SIZE, PROT_NONE), 0);
	assert_int_equal(mprotect(p + PAGE_SIZE + len, PAGE_SIZE, PROT_NONE),
			 0);
	return p + PAGE_SIZE;
}

static void guarded_free(u8 *p, size_t len)
{
	len = (len + PAGE_SIZE - 1) & PAGE_MASK;
	assert_int_equal(munmap(p - PAGE_SIZE, len + 2 * PAGE_SIZE), 0);
}

/* ---- connections and slots ---------------------------------------------- */

enum slot_state { SLOT_FREE, SLOT_BUSY, SLOT_DONE };

struct piece {
	u8 *p;
	u32 len;
};

struct conn;

struct slot {
	struct conn *c;
	int idx;
	int state; /* enum slot_state, atomic */
	int done_count; /* completions seen for this I/O (atomic) */
	enum ib_wc_status status;
	struct ib_cqe cqe;
	struct rdma_rw_ctx ctx;
	bool bvec, chained, aborted;
	bool watch; /* aborted: loc/rem must stay as lexp/rexp */
	enum dma_data_direction dir;
	struct scatterlist sg[MAX_ENTS];
	struct bio_vec bv[MAX_ENTS];
	u32 nents;
	struct piece pieces[MAX_ENTS];
	u32 npieces;
	u64 roff, len;
	u32 credits;
	u8 *loc, *lshadow, *lexp;
	u8 *rem, *rshadow, *rexp;
	struct ib_mr *rmr;
	u8 msg[MSG_LEN];
	struct ib_sge msg_sge;
	struct ib_send_wr send;
	struct ib_rdma_wr marker;
	u64 serial;
};

struct conn {
	struct soak *s;
	int idx;
	bool shared; /* several threads post on it */
	pthread_mutex_t lock; /* credits, held MRs, rebuild */
	pthread_rwlock_t use; /* shared: drivers read, a rebuild writes */
	struct ib_cq *cq, *pcq;
	struct ib_qp *qp, *pqp;
	int credits;
	bool broken;
	int pool_size;
	struct ib_mr *held[SLOTS];
	int nheld;
	u8 *rq; /* RQ_DEPTH receive buffers at the peer */
	struct ib_mr *rq_mr;
	u64 sends_ok, recvs_ok; /* atomic */
	u64 seed;
	struct slot slots[SLOTS];
};

static bool status_injected(enum ib_wc_status st)
{
	unsigned int i;

	for (i = 0; i < sizeof(injected) / sizeof(injected[0]); i++)
		if (st == injected[i])
			return true;
	return false;
}

static void slot_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct slot *sl = container_of(wc->wr_cqe, struct slot, cqe);
	struct soak *s = sl->c->s;

	if (__atomic_fetch_add(&sl->done_count, 1, __ATOMIC_RELAXED)) {
		soak_fail(s, "%s conn %d slot %d: second completion (%s)",
			  s->name, sl->c->idx, sl->idx,
			  ib_wc_status_msg(wc->status));
		return;
	}
	CHECK(s, __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) == SLOT_BUSY,
	      "%s: completion for a slot not in flight", s->name);
	sl->status = wc->status;
	CHECK(s,
	      wc->status == IB_WC_SUCCESS || wc->status == IB_WC_WR_FLUSH_ERR ||
		      status_injected(wc->status),
	      "%s conn %d: completion status %s was not injected", s->name,
	      sl->c->idx, ib_wc_status_msg(wc->status));
	pthread_mutex_lock(&sl->c->lock);
	sl->c->credits += (int)sl->credits;
	pthread_mutex_unlock(&sl->c->lock);
	__atomic_store_n(&sl->state, SLOT_DONE, __ATOMIC_RELEASE);
}

/* Poll the initiator CQ: cqe completions go to their slot. */
static int poll_conn(struct conn *c)
{
	struct ib_wc wc[16];
	int n, i;

	n = ib_poll_cq(c->cq, 16, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].wr_cqe) {
			wc[i].wr_cqe->done(c->cq, &wc[i]);
			continue;
		}
		/* Unsignaled WRs only complete when they fail. */
		CHECK(c->s,
		      wc[i].status != IB_WC_SUCCESS &&
			      (wc[i].status == IB_WC_WR_FLUSH_ERR ||
			       status_injected(wc[i].status)),
		      "%s conn %d: cqe-less completion %s (opcode %d)",
		      c->s->name, c->idx, ib_wc_status_msg(wc[i].status),
		      wc[i].opcode);
	}
	return n;
}

static void post_recv(struct conn *c, u32 i)
{
	struct ib_sge sge = { (uintptr_t)(c->rq + i * MSG_LEN), MSG_LEN,
			      c->rq_mr->lkey };
	struct ib_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

	CHECK(c->s, ib_post_recv(c->pqp, &wr, NULL) == 0,
	      "%s: ib_post_recv failed", c->s->name);
}

/* Poll the peer's CQ: check each message and post the receive again. */
static int poll_peer(struct conn *c)
{
	struct ib_wc wc[16];
	int n, i;

	n = ib_poll_cq(c->pcq, 16, wc);
	for (i = 0; i < n; i++) {
		u8 *m = c->rq + wc[i].wr_id * MSG_LEN;
		u32 magic, idx;

		if (wc[i].status != IB_WC_SUCCESS) {
			CHECK(c->s, wc[i].status == IB_WC_WR_FLUSH_ERR,
			      "%s: receive completed with %s", c->s->name,
			      ib_wc_status_msg(wc[i].status));
			continue;
		}
		memcpy(&magic, m, 4);
		memcpy(&idx, m + 4, 4);
		CHECK(c->s,
		      magic == MAGIC && idx == (u32)c->idx &&
			      wc[i].byte_len == MSG_LEN,
		      "%s conn %d: bad message received", c->s->name, c->idx);
		__atomic_add_fetch(&c->recvs_ok, 1, __ATOMIC_RELAXED);
		post_recv(c, (u32)wc[i].wr_id);
	}
	return n;
}

/* ---- building a connection -------------------------------------------- */

static void arm_conn(struct conn *c, u64 *x)
{
	struct soft_fault_rule r = { 0 };

	CHECK(c->s, soft_fault_sq_depth(c->qp, BUDGET) == 0, "sq_depth");
	r.type = SOFT_FAULT_POST;
	r.ppm = 6000;
	r.err = -EIO;
	r.seed = rnd(x);
	CHECK(c->s, soft_fault_arm_qp(c->qp, &r) == 0, "arm post");
	r.type = SOFT_FAULT_STALL;
	r.ppm = 8000;
	r.seed = rnd(x);
	CHECK(c->s, soft_fault_arm_qp(c->qp, &r) == 0, "arm stall");
	if (c->shared)
		return; /* a shared QP is never rebuilt: nothing that kills it */
	r.type = SOFT_FAULT_WC;
	r.ppm = 4000;
	r.status = injected[rnd_below(x, 3)];
	r.seed = rnd(x);
	CHECK(c->s, soft_fault_arm_qp(c->qp, &r) == 0, "arm wc");
	r.type = SOFT_FAULT_QP_ERR;
	r.ppm = 2500;
	r.seed = rnd(x);
	CHECK(c->s, soft_fault_arm_qp(c->qp, &r) == 0, "arm qp_err");
}

static struct ib_qp *make_qp(struct soak *s, int side, struct ib_cq *cq,
			     bool initiator)
{
	struct ib_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = {
			.max_send_wr = initiator ? BUDGET : 4,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = initiator ?
				(u32)s->dev[side]->attrs.max_send_sge : 1,
			.max_recv_sge = 1,
			.max_rdma_ctxs = initiator ? SLOTS : 0,
		},
	};

	return ib_create_qp(s->pd[side], &a);
}

/* Create and connect the QP pair; MR allocation may be failed on purpose. */
static void conn_connect(struct conn *c, u64 *x)
{
	struct soak *s = c->s;
	int tries;
	u32 i;

	for (tries = 0; tries < 1000; tries++) {
		c->qp = make_qp(s, 0, c->cq, true);
		if (!IS_ERR(c->qp))
			break;
		CHECK(s, PTR_ERR(c->qp) == -ENOMEM, "%s: ib_create_qp: %ld",
		      s->name, PTR_ERR(c->qp));
		pthread_mutex_lock(&s->fig_lock);
		s->fig.create_failures++;
		pthread_mutex_unlock(&s->fig_lock);
	}
	assert_false(IS_ERR(c->qp));
	c->pqp = make_qp(s, 1, c->pcq, false);
	assert_false(IS_ERR(c->pqp));
	assert_int_equal(soft_qp_connect(c->qp, c->pqp), 0);
	c->pool_size = ib_mr_pool_count(c->qp, &c->qp->rdma_mrs);
	c->credits = BUDGET;
	c->broken = false;
	for (i = 0; i < RQ_DEPTH; i++)
		post_recv(c, i);
	arm_conn(c, x);
}

/* Every context gone: the MRs are back and the credits balance. */
static void conn_check_idle(struct conn *c)
{
	struct soak *s = c->s;

	CHECK(s, c->nheld == 0, "held MRs");
	CHECK(s, c->qp->mrs_used == 0, "%s conn %d: mrs_used %d", s->name,
	      c->idx, c->qp->mrs_used);
	CHECK(s, ib_mr_pool_count(c->qp, &c->qp->rdma_mrs) == c->pool_size,
	      "%s conn %d: pool has %d of %d MRs", s->name, c->idx,
	      ib_mr_pool_count(c->qp, &c->qp->rdma_mrs), c->pool_size);
	CHECK(s, c->credits == BUDGET, "%s conn %d: credits %d of %d", s->name,
	      c->idx, c->credits, BUDGET);
}

static void release_held(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->nheld)
		ib_mr_pool_put(c->qp, &c->qp->rdma_mrs, c->held[--c->nheld]);
	pthread_mutex_unlock(&c->lock);
}

static void conn_teardown(struct conn *c)
{
	struct soak *s = c->s;

	int i;

	release_held(c);
	conn_check_idle(c);
	/* Every receive completion of this pair is in: count them. */
	while (poll_peer(c) > 0)
		;
	while (poll_conn(c) > 0)
		;
	/* Nothing queued by an aborted post ran after its destroy. */
	for (i = 0; i < SLOTS; i++) {
		struct slot *sl = &c->slots[i];

		if (!sl->watch)
			continue;
		sl->watch = false;
		CHECK(s,
		      !memcmp(sl->loc, sl->lexp, REG_LEN) &&
			      !memcmp(sl->rem, sl->rexp, REG_LEN),
		      "%s conn %d slot %d: bytes changed after the destroy of a context whose post failed",
		      s->name, c->idx, i);
	}
	CHECK(s, ib_destroy_qp(c->qp) == 0, "destroy qp");
	CHECK(s, ib_destroy_qp(c->pqp) == 0, "destroy peer qp");
	c->qp = c->pqp = NULL;
}

static void conn_init(struct soak *s, struct conn *c, int idx, bool shared,
		      u64 seed)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->s = s;
	c->idx = idx;
	c->shared = shared;
	c->seed = seed;
	pthread_mutex_init(&c->lock, NULL);
	{
		pthread_rwlockattr_t a;

		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setkind_np(
			&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&c->use, &a);
		pthread_rwlockattr_destroy(&a);
	}
	c->cq = ib_alloc_cq(s->dev[0], NULL, 256, 0, IB_POLL_DIRECT);
	c->pcq = ib_alloc_cq(s->dev[1], NULL, 256, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(c->cq));
	assert_false(IS_ERR(c->pcq));
	c->rq = guarded_alloc(RQ_DEPTH * MSG_LEN);
	c->rq_mr =
		ib_reg_user_mr(s->pd[1], (uintptr_t)c->rq, RQ_DEPTH * MSG_LEN,
			       (uintptr_t)c->rq, IB_ACCESS_LOCAL_WRITE);
	assert_false(IS_ERR(c->rq_mr));
	for (i = 0; i < SLOTS; i++) {
		struct slot *sl = &c->slots[i];

		sl->c = c;
		sl->idx = i;
		sl->cqe.done = slot_done;
		sl->loc = guarded_alloc(REG_LEN);
		sl->rem = guarded_alloc(REG_LEN);
		sl->lshadow = malloc(REG_LEN);
		sl->lexp = malloc(REG_LEN);
		sl->rshadow = malloc(REG_LEN);
		sl->rexp = malloc(REG_LEN);
		assert_non_null(sl->lshadow);
		assert_non_null(sl->lexp);
		assert_non_null(sl->rshadow);
		assert_non_null(sl->rexp);
		rnd_fill(&c->seed, sl->loc, REG_LEN);
		rnd_fill(&c->seed, sl->rem, REG_LEN);
		memcpy(sl->lshadow, sl->loc, REG_LEN);
		memcpy(sl->rshadow, sl->rem, REG_LEN);
		sl->rmr = ib_reg_user_mr(s->pd[1], (uintptr_t)sl->rem, REG_LEN,
					 (uintptr_t)sl->rem,
					 IB_ACCESS_LOCAL_WRITE |
						 IB_ACCESS_REMOTE_READ |
						 IB_ACCESS_REMOTE_WRITE);
		assert_false(IS_ERR(sl->rmr));
	}
	conn_connect(c, &c->seed);
}

static void conn_fini(struct conn *c)
{
	int i;

	conn_teardown(c);
	for (i = 0; i < SLOTS; i++) {
		struct slot *sl = &c->slots[i];

		assert_int_equal(ib_dereg_mr(sl->rmr), 0);
		guarded_free(sl->loc, REG_LEN);
		guarded_free(sl->rem, REG_LEN);
		free(sl->lshadow);
		free(sl->lexp);
		free(sl->rshadow);
		free(sl->rexp);
	}
	assert_int_equal(ib_dereg_mr(c->rq_mr), 0);
	guarded_free(c->rq, RQ_DEPTH * MSG_LEN);
	assert_int_equal(ib_free_cq(c->cq), 0);
	assert_int_equal(ib_free_cq(c->pcq), 0);
	pthread_mutex_destroy(&c->lock);
	pthread_rwlock_destroy(&c->use);
}

/* ---- one I/O ------------------------------------------------------------ */

/*
 * Entries that every path can take: the first may start inside a page,
 * every entry but the last ends on a page boundary, every entry but the
 * first starts on one, with whole pages between them or none.
 */
static u32 make_layout(struct slot *sl, u64 *x, u8 **addr, u32 *len)
{
	u32 n = 1 + rnd_below(x, rnd_below(x, 2) ? MAX_ENTS : 3), i;
	size_t pos;

	if (n == 1) {
		len[0] = 1 + rnd_below(x, rnd_below(x, 4) ? 3 * PAGE_SIZE : 64);
		addr[0] = sl->loc + rnd_below(x, REG_LEN - len[0]);
		return 1;
	}
	pos = rnd_below(x, 2) * PAGE_SIZE;
	for (i = 0; i < n; i++) {
		u32 off = i == 0 ? rnd_below(x, PAGE_SIZE) : 0;

		if (i == n - 1)
			len[i] = 1 + rnd_below(x, 2 * PAGE_SIZE);
		else
			len[i] = (1 + rnd_below(x, 2)) * PAGE_SIZE - off;
		addr[i] = sl->loc + pos + off;
		pos += off + len[i];
		pos = (pos + PAGE_SIZE - 1) & PAGE_MASK;
		pos += rnd_below(x, 2) * PAGE_SIZE;
	}
	return n;
}

/* The bytes moved, in order, after skipping @skip and keeping @size. */
static void make_pieces(struct slot *sl, u8 **addr, u32 *len, u32 n, u64 skip,
			u64 size)
{
	u32 i;

	sl->npieces = 0;
	sl->len = 0;
	for (i = 0; i < n && size; i++) {
		u64 l = len[i], take;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		take = l - skip < size ? l - skip : size;
		sl->pieces[sl->npieces++] =
			(struct piece){ addr[i] + skip, (u32)take };
		sl->len += take;
		size -= take;
		skip = 0;
	}
}

/* Fresh source bytes, and what both buffers must hold afterwards. */
static void prepare_data(struct slot *sl, u64 *x)
{
	u8 *src = sl->rem + sl->roff, *p;
	u32 i;

	if (sl->dir == DMA_TO_DEVICE)
		for (i = 0; i < sl->npieces; i++)
			rnd_fill(x, sl->pieces[i].p, sl->pieces[i].len);
	else
		rnd_fill(x, src, sl->len);
	memcpy(sl->lshadow, sl->loc, REG_LEN);
	memcpy(sl->rshadow, sl->rem, REG_LEN);
	memcpy(sl->lexp, sl->loc, REG_LEN);
	memcpy(sl->rexp, sl->rem, REG_LEN);
	p = sl->rexp + sl->roff;
	for (i = 0; i < sl->npieces; i++) {
		size_t lo = (size_t)(sl->pieces[i].p - sl->loc);

		if (sl->dir == DMA_TO_DEVICE)
			memcpy(p, sl->pieces[i].p, sl->pieces[i].len);
		else
			memcpy(sl->lexp + lo, src, sl->pieces[i].len);
		p += sl->pieces[i].len;
		src += sl->pieces[i].len;
	}
}

static int init_ctx(struct slot *sl, u64 *x, u8 **addr, u32 *len, u32 n)
{
	struct conn *c = sl->c;
	u64 total = 0, skip, size;
	u32 i;

	for (i = 0; i < n; i++)
		total += len[i];
	skip = rnd_below(x, 2) ? rnd_below(x, (u32)total) : 0;
	sl->nents = n;
	if (sl->bvec) {
		struct bvec_iter it = { 0 };

		for (i = 0; i < n; i++)
			bvec_set_virt(&sl->bv[i], addr[i], len[i]);
		skip = skip < len[0] ? skip : 0;
		size = total - skip;
		if (size > 1 && rnd_below(x, 2))
			size -= rnd_below(x, (u32)size);
		it.bi_bvec_done = (unsigned int)skip;
		it.bi_size = (unsigned int)size;
		make_pieces(sl, addr, len, n, skip, size);
		sl->roff = rnd_below(x, (u32)(REG_LEN - sl->len + 1));
		prepare_data(sl, x);
		return rdma_rw_ctx_init_bvec(&sl->ctx, c->qp, 1, sl->bv, n, it,
					     (uintptr_t)sl->rem + sl->roff,
					     sl->rmr->rkey, sl->dir);
	}
	sg_init_table(sl->sg, n);
	for (i = 0; i < n; i++)
		sg_set_buf(&sl->sg[i], addr[i], len[i]);
	make_pieces(sl, addr, len, n, skip, total - skip);
	sl->roff = rnd_below(x, (u32)(REG_LEN - sl->len + 1));
	prepare_data(sl, x);
	return rdma_rw_ctx_init(&sl->ctx, c->qp, 1, sl->sg, n, (u32)skip,
				(uintptr_t)sl->rem + sl->roff, sl->rmr->rkey,
				sl->dir);
}

static void destroy_ctx(struct slot *sl)
{
	if (sl->bvec)
		rdma_rw_ctx_destroy_bvec(&sl->ctx, sl->c->qp, 1, sl->bv,
					 sl->nents, sl->dir);
	else
		rdma_rw_ctx_destroy(&sl->ctx, sl->c->qp, 1, sl->sg, sl->nents,
				    sl->dir);
}

enum outcome {
	OUT_FAILED, /* each byte old or new */
	OUT_OK, /* every byte as expected */
	OUT_NONE, /* never posted: nothing moved */
};

/*
 * OUT_OK: both buffers hold exactly what is expected.  OUT_FAILED: each
 * byte is the old or the new value (only the destination may differ).
 * OUT_NONE: every byte is the old value.
 */
static void verify(struct slot *sl, enum outcome out)
{
	struct soak *s = sl->c->s;
	const u8 *got[2] = { sl->loc, sl->rem };
	const u8 *old[2] = { sl->lshadow, sl->rshadow };
	const u8 *exp[2] = { sl->lexp, sl->rexp };
	bool ok = out == OUT_OK;
	size_t i;
	int k;

	if (out == OUT_NONE) {
		exp[0] = sl->lshadow;
		exp[1] = sl->rshadow;
		ok = true;
	}

	for (k = 0; k < 2; k++) {
		if (!memcmp(got[k], exp[k], REG_LEN))
			continue;
		for (i = 0; i < REG_LEN; i++) {
			if (got[k][i] == exp[k][i] ||
			    (!ok && got[k][i] == old[k][i]))
				continue;
			soak_fail(
				s,
				"%s conn %d slot %d: %s byte %zu is %#x (old %#x, new %#x), %s %s of %llu bytes",
				s->name, sl->c->idx, sl->idx,
				k ? "remote" : "local", i, got[k][i], old[k][i],
				exp[k][i], ok ? "successful" : "failed",
				sl->dir == DMA_TO_DEVICE ? "WRITE" : "READ",
				(unsigned long long)sl->len);
			return;
		}
	}
}

/*
 * A post that failed: no completion will come for this context (the WR
 * that carries its cqe was not queued).  It is destroyed at once, with no
 * fence: when part of its chain was queued, the library has moved the QP
 * to ERR and what was queued flushes.  Its bytes are old or new now, and
 * must not change again before the connection is torn down.
 */
static void abort_io(struct slot *sl, struct soak_figures *f)
{
	struct conn *c = sl->c;

	destroy_ctx(sl);
	verify(sl, OUT_FAILED);
	memcpy(sl->lexp, sl->loc, REG_LEN);
	memcpy(sl->rexp, sl->rem, REG_LEN);
	sl->watch = true;
	f->failed_ios++;
	pthread_mutex_lock(&c->lock);
	c->credits += (int)sl->credits;
	__atomic_store_n(&c->broken, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->lock);
	sl->serial++;
	__atomic_store_n(&sl->state, SLOT_FREE, __ATOMIC_RELEASE);
}

static bool take_credits(struct conn *c, u32 n)
{
	bool ok;

	pthread_mutex_lock(&c->lock);
	ok = !c->broken && c->credits >= (int)n;
	if (ok)
		c->credits -= (int)n;
	pthread_mutex_unlock(&c->lock);
	return ok;
}

/* Start an I/O on a free slot.  Returns true when one was posted. */
static bool start_io(struct slot *sl, u64 *x, struct soak_figures *f)
{
	struct conn *c = sl->c;
	struct soak *s = c->s;
	struct ib_send_wr *chain = NULL;
	u8 *addr[MAX_ENTS];
	u32 len[MAX_ENTS], n;
	int ret;

	sl->dir = rnd_below(x, 2) ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	sl->bvec = rnd_below(x, 3) == 0;
	sl->chained = rnd_below(x, 2);
	sl->aborted = false;
	n = make_layout(sl, x, addr, len);
	ret = init_ctx(sl, x, addr, len, n);
	if (ret == -EAGAIN) {
		CHECK(s, c->nheld > 0, "%s: -EAGAIN with nothing held",
		      s->name);
		f->eagain++;
		return false;
	}
	if (ret < 0) {
		soak_fail(s, "%s: init of %u entries (%s, %s): %d", s->name, n,
			  sl->bvec ? "bvec" : "sg",
			  sl->dir == DMA_TO_DEVICE ? "WRITE" : "READ", ret);
		return false;
	}
	sl->credits = (u32)ret + sl->chained;
	if (!take_credits(c, sl->credits)) {
		destroy_ctx(sl); /* initialised, never posted */
		verify(sl, OUT_NONE);
		f->unposted++;
		return false;
	}
	if (sl->chained) {
		u32 v = MAGIC, idx = (u32)c->idx;

		memcpy(sl->msg, &v, 4);
		memcpy(sl->msg + 4, &idx, 4);
		memcpy(sl->msg + 8, &sl->serial, 8);
		sl->msg_sge = (struct ib_sge){ (uintptr_t)sl->msg, MSG_LEN,
					       c->qp->pd->local_dma_lkey };
		memset(&sl->send, 0, sizeof(sl->send));
		sl->send.opcode = IB_WR_SEND;
		sl->send.sg_list = &sl->msg_sge;
		sl->send.num_sge = 1;
		sl->send.send_flags = IB_SEND_SIGNALED;
		sl->send.wr_cqe = &sl->cqe;
		chain = &sl->send;
	}
	sl->done_count = 0;
	__atomic_store_n(&sl->state, SLOT_BUSY, __ATOMIC_RELEASE);
	ret = rdma_rw_ctx_post(&sl->ctx, c->qp, 1, chain ? NULL : &sl->cqe,
			       chain);
	if (ret) {
		CHECK(s, ret == -EIO,
		      "%s conn %d: rdma_rw_ctx_post: %d (credits leak?)",
		      s->name, c->idx, ret);
		sl->aborted = true;
		f->partial_posts++;
		abort_io(sl, f);
	}
	f->ios++;
	f->bytes += sl->len;
	f->reads += sl->dir == DMA_FROM_DEVICE;
	f->writes += sl->dir == DMA_TO_DEVICE;
	f->chained += sl->chained;
	f->bvecs += sl->bvec;
	return true;
}

static void finish_io(struct slot *sl, struct soak_figures *f)
{
	struct conn *c = sl->c;
	bool ok = sl->status == IB_WC_SUCCESS && !sl->aborted;

	destroy_ctx(sl);
	verify(sl, ok ? OUT_OK : OUT_FAILED);
	if (ok && sl->chained)
		__atomic_add_fetch(&c->sends_ok, 1, __ATOMIC_RELAXED);
	if (!ok)
		f->failed_ios++;
	if (sl->status != IB_WC_SUCCESS) {
		pthread_mutex_lock(&c->lock);
		__atomic_store_n(&c->broken, true, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&c->lock);
	}
	sl->serial++;
	__atomic_store_n(&sl->state, SLOT_FREE, __ATOMIC_RELEASE);
}

/* ---- driving ------------------------------------------------------------ */

/* Empty the pool now and then, and give the MRs back later. */
static void play_with_pool(struct conn *c, u64 *x, struct soak_figures *f)
{
	if (c->shared || !c->pool_size)
		return;
	if (!c->nheld && rnd_below(x, 60) == 0) {
		int want = 1 + (int)rnd_below(x, (u32)c->pool_size);
		struct ib_mr *mr;

		pthread_mutex_lock(&c->lock);
		while (c->nheld < want &&
		       (mr = ib_mr_pool_get(c->qp, &c->qp->rdma_mrs)))
			c->held[c->nheld++] = mr;
		pthread_mutex_unlock(&c->lock);
		f->pool_holds++;
	} else if (c->nheld && rnd_below(x, 8) == 0) {
		release_held(c);
	}
}

static void maybe_resume(struct conn *c, u64 *x, struct soak_figures *f)
{
	struct soft_fault_stats st;

	if (soft_fault_qp_stats(c->qp, &st) || !st.stalled || rnd_below(x, 4))
		return;
	soft_fault_resume(c->qp);
	f->stall_resumes++;
}

static bool conn_idle(struct conn *c, int t, int nt)
{
	int i;

	for (i = t; i < SLOTS; i += nt)
		if (__atomic_load_n(&c->slots[i].state, __ATOMIC_ACQUIRE) !=
		    SLOT_FREE)
			return false;
	return true;
}

struct driver {
	struct soak *s;
	struct conn *conns[MAX_CONNS];
	int nconns;
	int part, nparts; /* slots part, part + nparts, ... */
	u64 seed;
	struct soak_figures fig;
};

static bool keep_starting(struct driver *d)
{
	if (d->s->seconds > 0)
		return elapsed(d->s) < d->s->seconds;
	return d->fig.ios < d->s->target;
}

static void rebuild(struct conn *c, u64 *x, struct soak_figures *f)
{
	conn_teardown(c);
	conn_connect(c, x);
	f->reconnects++;
}

static void *drive(void *arg)
{
	struct driver *d = arg;
	struct soak *s = d->s;
	bool more = true, busy = true;
	int k, i;

	while ((more || busy) &&
	       !__atomic_load_n(&s->failures, __ATOMIC_RELAXED)) {
		more = keep_starting(d);
		busy = false;
		for (k = 0; k < d->nconns; k++) {
			struct conn *c = d->conns[k];
			bool rebuild_shared = false;

			if (c->shared)
				pthread_rwlock_rdlock(&c->use);
			for (i = d->part; i < SLOTS; i += d->nparts) {
				struct slot *sl = &c->slots[i];
				int st = __atomic_load_n(&sl->state,
							 __ATOMIC_ACQUIRE);

				if (st == SLOT_DONE)
					finish_io(sl, &d->fig);
				else if (st == SLOT_FREE && more &&
					 !__atomic_load_n(&c->broken,
							  __ATOMIC_RELAXED) &&
					 rnd_below(&d->seed, 2))
					start_io(sl, &d->seed, &d->fig);
			}
			poll_conn(c);
			poll_peer(c);
			maybe_resume(c, &d->seed, &d->fig);
			play_with_pool(c, &d->seed, &d->fig);
			if (!conn_idle(c, d->part, d->nparts))
				busy = true;
			else if (__atomic_load_n(&c->broken,
						 __ATOMIC_RELAXED)) {
				if (!c->shared)
					rebuild(c, &d->seed, &d->fig);
				else
					rebuild_shared = true;
			}
			if (!c->shared)
				continue;
			pthread_rwlock_unlock(&c->use);
			/* A shared connection is rebuilt by the first driver
			 * that finds every driver's slots on it idle (none
			 * starts on a broken one); any driver may, since the
			 * others may have finished their I/Os and left. */
			if (!rebuild_shared)
				continue;
			pthread_rwlock_wrlock(&c->use);
			if (__atomic_load_n(&c->broken, __ATOMIC_RELAXED) &&
			    conn_idle(c, 0, 1))
				rebuild(c, &d->seed, &d->fig);
			pthread_rwlock_unlock(&c->use);
		}
		if (s->threaded_dev)
			sched_yield();
	}
	for (k = 0; k < d->nconns; k++)
		if (!d->conns[k]->shared)
			release_held(d->conns[k]);
	return NULL;
}

static void add_figures(struct soak_figures *t, const struct soak_figures *f)
{
	const u64 *src = (const u64 *)f;
	u64 *dst = (u64 *)t;
	size_t i;

	for (i = 0; i < sizeof(*f) / sizeof(u64); i++)
		dst[i] += src[i];
}

/* ---- a configuration ----------------------------------------------------- */

struct soak_cfg {
	const char *name;
	const char *profile;
	bool iommu;
	bool threaded;
	bool force_mr;
	int own_threads; /* threads, each with its own connections */
	int conns_per_thread;
	int shared_threads; /* threads posting on one shared connection */
	u64 ios; /* I/Os per thread in CI */
};

static void soak_env(struct soak *s, const struct soak_cfg *cfg)
{
	const char *sec = getenv("RDMARW_SOAK_SECONDS");
	const char *ios = getenv("RDMARW_SOAK_IOS");
	struct soft_profile p;
	struct soft_fault_rule r = { .type = SOFT_FAULT_ALLOC_MR,
				     .ppm = 15000,
				     .seed = 7 };
	int i;

	memset(s, 0, sizeof(*s));
	s->name = cfg->name;
	s->target = ios && atoll(ios) > 0 ? (u64)atoll(ios) : cfg->ios;
	s->seconds = sec ? atof(sec) : 0;
	s->threaded_dev = cfg->threaded;
	s->force_mr = cfg->force_mr;
	pthread_mutex_init(&s->fig_lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &s->start);
	rdma_rw_set_force_mr(cfg->force_mr);
	assert_int_equal(soft_profile_get(cfg->profile, &p), 0);
	p.iommu = cfg->iommu;
	p.threaded = cfg->threaded;
	s->fabric = soft_fabric_create();
	assert_false(IS_ERR(s->fabric));
	for (i = 0; i < 2; i++) {
		s->dev[i] = soft_device_create(s->fabric, NULL, &p);
		assert_false(IS_ERR(s->dev[i]));
		s->pd[i] = ib_alloc_pd(s->dev[i], 0);
		assert_false(IS_ERR(s->pd[i]));
	}
	/* Rebuilt connections find their MR allocations failing at times. */
	assert_int_equal(soft_fault_arm_device(s->dev[0], &r), 0);
}

static void soak_env_fini(struct soak *s)
{
	struct soft_stats st;
	int i;

	assert_int_equal(rdmarw_dma_mapped(s->dev[0]), 0);
	assert_int_equal(soft_device_stats(s->dev[0], &st), 0);
	assert_int_equal(st.iova_ranges, 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(ib_dealloc_pd(s->pd[i]), 0);
		assert_int_equal(soft_device_destroy(s->dev[i]), 0);
	}
	assert_int_equal(soft_fabric_destroy(s->fabric), 0);
	rdma_rw_set_force_mr(false);
	pthread_mutex_destroy(&s->fig_lock);
}

static void report(struct soak *s, const struct soft_fault_stats *fs)
{
	const struct soak_figures *f = &s->fig;
	u64 faults = fs->sq_full;
	int t;

	for (t = 0; t < SOFT_FAULT_NR; t++)
		faults += fs->fired[t];
	printf("soak %-14s %6llu I/Os (%llu READ, %llu WRITE, %llu chained, %llu bio_vec, %llu MiB), %llu faults (wc %llu, qp_err %llu, post %llu, stall %llu, alloc_mr %llu), %llu failed I/Os, %llu part-way posts, %llu reconnects, %llu -EAGAIN, %llu pool holds, %.1f s, %d failures\n",
	       s->name, (unsigned long long)f->ios,
	       (unsigned long long)f->reads, (unsigned long long)f->writes,
	       (unsigned long long)f->chained, (unsigned long long)f->bvecs,
	       (unsigned long long)(f->bytes >> 20), (unsigned long long)faults,
	       (unsigned long long)fs->fired[SOFT_FAULT_WC],
	       (unsigned long long)fs->fired[SOFT_FAULT_QP_ERR],
	       (unsigned long long)fs->fired[SOFT_FAULT_POST],
	       (unsigned long long)fs->fired[SOFT_FAULT_STALL],
	       (unsigned long long)fs->fired[SOFT_FAULT_ALLOC_MR],
	       (unsigned long long)f->failed_ios,
	       (unsigned long long)f->partial_posts,
	       (unsigned long long)f->reconnects, (unsigned long long)f->eagain,
	       (unsigned long long)f->pool_holds, elapsed(s), s->failures);
	fflush(stdout);
}

static void run_soak(const struct soak_cfg *cfg)
{
	struct driver drv[MAX_THREADS];
	struct conn *conns;
	pthread_t th[MAX_THREADS];
	int nthreads = cfg->own_threads + cfg->shared_threads;
	int nconns = cfg->own_threads * cfg->conns_per_thread +
		     (cfg->shared_threads ? 1 : 0);
	struct soft_fault_stats fs;
	struct soak s;
	u64 sends = 0, recvs = 0;
	int t, k, ci = 0;

	assert_true(nthreads <= MAX_THREADS && nconns <= MAX_CONNS);
	soak_env(&s, cfg);
	conns = calloc((size_t)nconns, sizeof(*conns));
	assert_non_null(conns);
	for (k = 0; k < nconns; k++)
		conn_init(&s, &conns[k], k,
			  cfg->shared_threads && k == nconns - 1,
			  0x5eed0000ULL + (u64)k * 7919);
	memset(drv, 0, sizeof(drv));
	for (t = 0; t < nthreads; t++) {
		struct driver *d = &drv[t];

		d->s = &s;
		d->seed = 0xd1ce0000ULL + (u64)t * 104729;
		if (t < cfg->own_threads) {
			for (k = 0; k < cfg->conns_per_thread; k++)
				d->conns[d->nconns++] = &conns[ci++];
			d->part = 0;
			d->nparts = 1;
		} else {
			d->conns[d->nconns++] = &conns[nconns - 1];
			d->part = t - cfg->own_threads;
			d->nparts = cfg->shared_threads;
		}
	}
	if (nthreads == 1) {
		drive(&drv[0]);
	} else {
		for (t = 0; t < nthreads; t++)
			assert_int_equal(
				pthread_create(&th[t], NULL, drive, &drv[t]),
				0);
		for (t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
	}
	for (t = 0; t < nthreads; t++)
		add_figures(&s.fig, &drv[t].fig);
	if (s.failures) /* stopped early: say why before anything else */
		fail_msg("%s: %d failures; first: %s", s.name, s.failures,
			 s.why);
	for (k = 0; k < nconns; k++) {
		conn_fini(&conns[k]);
		sends += conns[k].sends_ok;
		recvs += conns[k].recvs_ok;
	}
	CHECK(&s, sends == recvs,
	      "%s: %llu chained SENDs succeeded, %llu received", s.name,
	      (unsigned long long)sends, (unsigned long long)recvs);
	s.fig.sends_ok = sends;
	s.fig.recvs_ok = recvs;
	assert_int_equal(soft_fault_device_stats(s.dev[0], &fs), 0);
	report(&s, &fs);
	free(conns);
	if (s.failures)
		fail_msg("%d failures; first: %s", s.failures, s.why);
	assert_true(s.fig.ios >= (s.seconds > 0 ? 1 : s.target));
	soak_env_fini(&s);
}

/* ---- the configurations --------------------------------------------------- */

static void test_soak_mlx5_inline(void **state)
{
	run_soak(&(struct soak_cfg){ .name = "mlx5",
				     .profile = "mlx5",
				     .own_threads = 1,
				     .conns_per_thread = 3,
				     .ios = 4000 });
}

static void test_soak_rxe_iommu_inline(void **state)
{
	run_soak(&(struct soak_cfg){ .name = "rxe+iommu",
				     .profile = "rxe",
				     .iommu = true,
				     .own_threads = 1,
				     .conns_per_thread = 3,
				     .ios = 4000 });
}

static void test_soak_siw_inline(void **state)
{
	run_soak(&(struct soak_cfg){ .name = "siw",
				     .profile = "siw",
				     .own_threads = 1,
				     .conns_per_thread = 3,
				     .ios = 4000 });
}

static void test_soak_rxe_force_mr_threaded(void **state)
{
	run_soak(&(struct soak_cfg){ .name = "rxe+force_mr/t",
				     .profile = "rxe",
				     .force_mr = true,
				     .threaded = true,
				     .own_threads = 1,
				     .conns_per_thread = 3,
				     .ios = 3000 });
}

/* Two threads on their own QPs, two threads on one shared QP. */
static void test_soak_siw_threads(void **state)
{
	run_soak(&(struct soak_cfg){ .name = "siw/4 threads",
				     .profile = "siw",
				     .threaded = true,
				     .own_threads = 2,
				     .conns_per_thread = 1,
				     .shared_threads = 2,
				     .ios = 1000 });
}

static void test_soak_mlx5_threads(void **state)
{
	run_soak(&(struct soak_cfg){ .name = "mlx5/4 threads",
				     .profile = "mlx5",
				     .threaded = true,
				     .own_threads = 2,
				     .conns_per_thread = 1,
				     .shared_threads = 2,
				     .ios = 1000 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_mlx5_inline),
		cmocka_unit_test(test_soak_rxe_iommu_inline),
		cmocka_unit_test(test_soak_siw_inline),
		cmocka_unit_test(test_soak_rxe_force_mr_threaded),
		cmocka_unit_test(test_soak_siw_threads),
		cmocka_unit_test(test_soak_mlx5_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

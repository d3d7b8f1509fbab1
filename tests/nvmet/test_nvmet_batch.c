// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One doorbell per poll pass: in a poll group's turn on a queue, the chains
 * of all its commands (responses with their RDMA WRITEs, host writes' RDMA
 * READs) go out in one ib_post_send() when the turn ends.
 *
 * The poll group is parked in its hook while the host sends a burst of
 * commands (the software device executes each SEND inside the host's post,
 * so every capsule is in the target's CQ when the group goes on): then the
 * group's next turn finds them all.  ib_post_send() and rdma_rw_ctx_post()
 * are wrapped at link time: the target device's posts are counted, and one of them can be made
 * to stop at a chosen WR (the WRs before it posted, -ENOMEM, bad_wr set),
 * as a provider that refuses a WR does.  Each case checks what every
 * command got (status, bytes), that the target's requests all end, and
 * (nv_env_fini()) that nothing is left on either device.
 */
#include "nvmet_env.h"

#include <pthread.h>

#include <rdmarw/rw.h>

enum { N = 16, LBA = 512, XFER = 8192 };

/* ---- the wrapped ib_post_send() ---- */

int __real_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad);
int __wrap_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad);
int __real_rdma_rw_ctx_post(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			    u32 port_num, struct ib_cqe *cqe,
			    struct ib_send_wr *chain_wr);
int __wrap_rdma_rw_ctx_post(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			    u32 port_num, struct ib_cqe *cqe,
			    struct ib_send_wr *chain_wr);

static struct ib_device *watch_dev; /* the target's device */
static unsigned int tposts; /* its posts (atomic) */
static unsigned int tposted_wrs; /* WRs in them (atomic) */
/* in rdma_rw_ctx_post(): its own ib_post_send() (wrapped without LTO) */
static __thread bool in_rw_post;
static int fail_at = -1; /* the next target post with a WR at this index
			  * stops there (once) */

static unsigned int chain_len(const struct ib_send_wr *wr)
{
	unsigned int n = 0;

	for (; wr; wr = wr->next)
		n++;
	return n;
}

int __wrap_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad)
{
	struct ib_send_wr *prev, *stop;
	int at, ret, i;

	if (!qp || qp->device != watch_dev || in_rw_post)
		return __real_ib_post_send(qp, wr, bad);
	__atomic_add_fetch(&tposts, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&tposted_wrs, chain_len(wr), __ATOMIC_RELAXED);
	at = __atomic_load_n(&fail_at, __ATOMIC_RELAXED);
	if (at < 0 || chain_len(wr) <= (unsigned int)at)
		return __real_ib_post_send(qp, wr, bad);
	__atomic_store_n(&fail_at, -1, __ATOMIC_RELAXED);
	/* post the WRs before @at, then refuse the one at @at */
	stop = (struct ib_send_wr *)wr;
	prev = NULL;
	for (i = 0; i < at; i++) {
		prev = stop;
		stop = stop->next;
	}
	if (prev) {
		prev->next = NULL;
		ret = __real_ib_post_send(qp, wr, bad);
		prev->next = stop;
		assert_int_equal(ret, 0);
	}
	if (bad)
		*bad = stop;
	return -ENOMEM;
}

/*
 * The target's posts through the R/W API count too (its own ib_post_send()
 * is inside the library, which --wrap does not reach).
 */
int __wrap_rdma_rw_ctx_post(struct rdma_rw_ctx *ctx, struct ib_qp *qp,
			    u32 port_num, struct ib_cqe *cqe,
			    struct ib_send_wr *chain_wr)
{
	int ret;

	if (qp && qp->device == watch_dev)
		__atomic_add_fetch(&tposts, 1, __ATOMIC_RELAXED);
	in_rw_post = true;
	ret = __real_rdma_rw_ctx_post(ctx, qp, port_num, cqe, chain_wr);
	in_rw_post = false;
	return ret;
}

/* ---- the parked poll group ---- */

static pthread_mutex_t gate_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_c = PTHREAD_COND_INITIALIZER;
static bool gate_hold, gate_held;

/* The group's hook: parks the group's thread while gate_hold is set. */
static int gate_pass(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gate_m);
	if (gate_hold) {
		gate_held = true;
		pthread_cond_broadcast(&gate_c);
		while (gate_hold)
			pthread_cond_wait(&gate_c, &gate_m);
		gate_held = false;
	}
	pthread_mutex_unlock(&gate_m);
	return 0;
}

/* Park the group (bounded wait: 5 s): its thread waits in gate_pass(). */
static void gate_close(struct nv_env *e)
{
	struct timespec end;
	int ret = 0;

	pthread_mutex_lock(&gate_m);
	gate_hold = true;
	pthread_mutex_unlock(&gate_m);
	/* returns once the group runs the hook: after its next sweep */
	assert_int_equal(nvmet_target_poll_hook(e->t, 0, gate_pass, NULL), 0);
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 5;
	pthread_mutex_lock(&gate_m);
	while (!gate_held && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&gate_c, &gate_m, &end);
	pthread_mutex_unlock(&gate_m);
	assert_true(gate_held);
}

static void gate_open(struct nv_env *e)
{
	pthread_mutex_lock(&gate_m);
	gate_hold = false;
	pthread_cond_broadcast(&gate_c);
	pthread_mutex_unlock(&gate_m);
	assert_int_equal(nvmet_target_poll_hook(e->t, 0, NULL, NULL), 0);
}

/* ---- commands ---- */

struct burst {
	struct nvmeh_request rq[N];
	u8 *buf[N];
	unsigned int done; /* @m */
	pthread_mutex_t m;
	pthread_cond_t c;
};

static void burst_done(struct nvmeh_request *rq)
{
	struct burst *b = rq->priv;

	pthread_mutex_lock(&b->m);
	b->done++;
	pthread_cond_broadcast(&b->c);
	pthread_mutex_unlock(&b->m);
}

/* Command i of a burst works on blocks [i * XFER / LBA, +XFER / LBA). */
static u64 slba_of(unsigned int i)
{
	return (u64)i * (XFER / LBA);
}

/*
 * Send N reads or writes of XFER bytes (write @i's bytes: seed @seed + i)
 * on queue 1 while the group is parked, then let it go and wait (bounded:
 * 20 s, beyond the host's command timeout) for every one to end.
 * Returns the target's posts during the burst.
 */
static unsigned int burst_run(struct nv_env *e, struct burst *b, bool write,
			      u64 seed, int fail_wr)
{
	unsigned int i, posts;
	struct timespec end;
	int ret = 0;

	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->m, NULL);
	pthread_cond_init(&b->c, NULL);
	gate_close(e);
	posts = __atomic_load_n(&tposts, __ATOMIC_RELAXED);
	__atomic_store_n(&fail_at, fail_wr, __ATOMIC_RELAXED);
	for (i = 0; i < N; i++) {
		b->buf[i] = malloc(XFER);
		assert_non_null(b->buf[i]);
		if (write)
			nv_fill(b->buf[i], XFER, seed + i);
		else
			memset(b->buf[i], 0, XFER);
		nv_rw_init(&b->rq[i], write, 1, slba_of(i), XFER / LBA,
			   b->buf[i], LBA);
		b->rq[i].done = burst_done;
		b->rq[i].priv = b;
		assert_int_equal(nvmeh_submit(e->c, 1, &b->rq[i]), 0);
	}
	gate_open(e);
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 20;
	pthread_mutex_lock(&b->m);
	while (b->done < N && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&b->c, &b->m, &end);
	pthread_mutex_unlock(&b->m);
	assert_int_equal(b->done, N);
	__atomic_store_n(&fail_at, -1, __ATOMIC_RELAXED);
	return __atomic_load_n(&tposts, __ATOMIC_RELAXED) - posts;
}

static void burst_fini(struct burst *b)
{
	unsigned int i;

	for (i = 0; i < N; i++)
		free(b->buf[i]);
	pthread_cond_destroy(&b->c);
	pthread_mutex_destroy(&b->m);
}

static struct nvmet_target_stats tstats(struct nv_env *e)
{
	struct nvmet_target_stats st;

	assert_int_equal(nvmet_target_get_stats(e->t, &st), 0);
	return st;
}

/* Bounded wait (5 s) until the target has no request in flight. */
static void wait_idle(struct nv_env *e)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int i;

	for (i = 0; i < 2500; i++) {
		if (!tstats(e).reqs_inflight)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("%llu requests still in flight",
		 (unsigned long long)tstats(e).reqs_inflight);
}

/*
 * Target: one poll group, a RAM namespace; host: one I/O queue, no
 * in-capsule data (every write is fetched with an RDMA READ), its command
 * timeout @timeout_ms.
 */
static void env_up(struct nv_env *e, const char *profile,
		   struct nvmet_target_opts *to, unsigned int timeout_ms)
{
	struct nv_cfg cfg = { .nr_io_queues = 1,
			      .no_inline = true,
			      .io_timeout_ms = timeout_ms,
			      .topts = to };

	nv_target_opts(to, 4u << 20);
	to->poll_groups = 1;
	nv_env_init(e, profile, &cfg);
	watch_dev = e->tdev;
}

static void env_down(struct nv_env *e)
{
	nvmeh_ctrl_destroy(e->c);
	e->c = NULL;
	nv_wait_target(e, 0, 0);
	assert_int_equal(tstats(e).reqs_inflight, 0);
	watch_dev = NULL;
	nv_env_fini(e);
}

/* Write command i's bytes (seed @seed + i) one by one, outside a burst. */
static void fill_ns(struct nv_env *e, u64 seed)
{
	u8 *w = malloc(XFER);
	unsigned int i;

	assert_non_null(w);
	for (i = 0; i < N; i++) {
		nv_fill(w, XFER, seed + i);
		assert_int_equal(
			nvmeh_rw(e->c, 1, true, slba_of(i), XFER / LBA, w), 0);
	}
	free(w);
}

/* Command i's blocks hold the bytes of seed @seed + i. */
static void check_ns(struct nv_env *e, unsigned int i, u64 seed)
{
	u8 *w = malloc(XFER), *r = malloc(XFER);

	assert_non_null(w);
	assert_non_null(r);
	nv_fill(w, XFER, seed + i);
	assert_int_equal(nvmeh_rw(e->c, 1, false, slba_of(i), XFER / LBA, r),
			 0);
	assert_memory_equal(w, r, XFER);
	free(w);
	free(r);
}

/*
 * A burst of reads and one of writes: every command answered with its
 * bytes, in fewer target posts than commands (one per turn: each read's
 * RDMA WRITE and response SEND, each write's RDMA READ, chained).
 */
static void batch_case(const char *profile, bool iwarp)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	static struct burst b;
	unsigned int i, posts;

	env_up(&e, profile, &to, 0);
	fill_ns(&e, 1);
	posts = burst_run(&e, &b, false, 0, -1);
	for (i = 0; i < N; i++) {
		assert_int_equal(b.rq[i].error, 0);
		assert_int_equal(b.rq[i].status, 0);
		{
			u8 *w = malloc(XFER);

			assert_non_null(w);
			nv_fill(w, XFER, 1 + i);
			assert_memory_equal(w, b.buf[i], XFER);
			free(w);
		}
	}
	burst_fini(&b);
	print_message("%s: %u reads, %u target posts\n", profile, N, posts);
	assert_true(posts >= 1);
	assert_true(posts < N);

	posts = burst_run(&e, &b, true, 100, -1);
	for (i = 0; i < N; i++) {
		assert_int_equal(b.rq[i].error, 0);
		assert_int_equal(b.rq[i].status, 0);
	}
	burst_fini(&b);
	print_message("%s: %u writes, %u target posts\n", profile, N, posts);
	if (iwarp)
		/* each READ registers an MR: alone; the responses batched */
		assert_true(posts > N && posts < 2 * N);
	else
		/* the READs in one post, the responses in one or a few more */
		assert_true(posts < N);
	for (i = 0; i < N; i++)
		check_ns(&e, i, 100);
	assert_int_equal(tstats(&e).errors, 0);
	env_down(&e);
}

static void test_batch_rxe(void **state)
{
	(void)state;
	batch_case("rxe", false);
}

static void test_batch_mlx5(void **state)
{
	(void)state;
	batch_case("mlx5", false);
}

/* siw: a host write's READ registers an MR, so it posts alone */
static void test_batch_siw(void **state)
{
	(void)state;
	batch_case("siw", true);
}

/*
 * A burst of writes whose one post of READs stops at command K's: the K
 * before it fetched and wrote their data (status 0), command K and every
 * later one answered Data Transfer Error with the namespace unchanged;
 * each request ends, the pages and credits all come back (the queue still
 * works, nothing in flight, nothing left at teardown).
 */
static void test_batch_fetch_fails_midway(void **state)
{
	enum { K = 5 };
	static struct nv_env e;
	struct nvmet_target_opts to;
	static struct burst b;
	unsigned int i;

	(void)state;
	env_up(&e, "rxe", &to, 0);
	fill_ns(&e, 1);
	/* one RDMA READ per write on rxe: WR K is command K's */
	burst_run(&e, &b, true, 100, K);
	for (i = 0; i < N; i++) {
		assert_int_equal(b.rq[i].error, 0);
		if (i < K)
			assert_int_equal(b.rq[i].status, 0);
		else
			assert_int_equal(b.rq[i].status & NVME_SCT_SC_MASK,
					 NVME_SC_DATA_XFER_ERROR);
	}
	burst_fini(&b);
	assert_int_equal(__atomic_load_n(&fail_at, __ATOMIC_RELAXED), -1);
	for (i = 0; i < N; i++)
		check_ns(&e, i, i < K ? 100 : 1);
	wait_idle(&e);
	/* the queue is whole: a full burst again */
	burst_run(&e, &b, true, 200, -1);
	for (i = 0; i < N; i++)
		assert_int_equal(b.rq[i].status, 0);
	burst_fini(&b);
	for (i = 0; i < N; i++)
		check_ns(&e, i, 200);
	env_down(&e);
}

/*
 * A burst of reads whose one post of WRITE+SEND chains stops at WR @at:
 * the commands whose chains lie wholly before it are answered with their
 * bytes; the others are released without a response (the host's timeout,
 * or the queue torn down when part of a chain was queued: @at odd, the
 * SEND of a command whose WRITE went) and end aborted on the host; the
 * target ends every request and leaves nothing behind.
 */
static void read_fails(unsigned int at)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	static struct burst b;
	unsigned int i, whole = at / 2;

	env_up(&e, "rxe", &to, 500);
	fill_ns(&e, 1);
	burst_run(&e, &b, false, 0, (int)at);
	for (i = 0; i < N; i++) {
		if (i < whole) {
			u8 *w = malloc(XFER);

			assert_non_null(w);
			assert_int_equal(b.rq[i].error, 0);
			assert_int_equal(b.rq[i].status, 0);
			nv_fill(w, XFER, 1 + i);
			assert_memory_equal(w, b.buf[i], XFER);
			free(w);
		} else {
			assert_int_not_equal(b.rq[i].error, 0);
		}
	}
	burst_fini(&b);
	/* the host reconnects; the old queue's requests all ended */
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	for (i = 0; i < N; i++)
		check_ns(&e, i, 1);
	env_down(&e);
}

static void test_batch_respond_fails_between(void **state)
{
	(void)state;
	read_fails(6); /* the WRITE of command 3 */
}

static void test_batch_respond_fails_part_way(void **state)
{
	(void)state;
	read_fails(7); /* the SEND of command 3, its WRITE queued */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_batch_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_batch_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_batch_siw, nv_teardown),
		cmocka_unit_test_teardown(test_batch_fetch_fails_midway,
					  nv_teardown),
		cmocka_unit_test_teardown(test_batch_respond_fails_between,
					  nv_teardown),
		cmocka_unit_test_teardown(test_batch_respond_fails_part_way,
					  nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

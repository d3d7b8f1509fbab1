// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The target's per-queue data-buffer pool (nvmet/rdma.c):
 *
 * - no heap allocation on the I/O path: malloc, calloc, realloc and the
 *   aligned allocators are interposed in this program and counted; after
 *   a warm-up (bursts that bring the R/W context cache of every size in
 *   use to its peak), keyed reads and writes of 4 KiB and 128 KiB and
 *   in-capsule writes make none, in the host, the devices or the target
 *   (the whole process is counted; skipped under ASan and valgrind, whose
 *   allocators take the place of this one);
 * - pool exhaustion: a pool of 128 KiB per queue (one page per entry,
 *   MDTS 128 KiB) under two queues of 32 random commands of up to 128 KiB
 *   each: commands wait for pages (data_waits), none fails, every byte
 *   matches the host's shadow;
 * - teardown with commands waiting for pages: the first write's RDMA READ
 *   stalls holding the whole pool, the commands behind it wait; the host
 *   goes away (or the target stops) and everything is released once, with
 *   nothing left on the devices (and, under ASan, nothing leaked);
 * - the last two with the two pools of an iWARP device through
 *   libibverbs (RDMARW_NVMET_REG_PER_CMD=1): host writes' pages registered
 *   per command, host reads' from a pool registered once.
 */
#include "nv_io.h"
#include "nv_allocs.h"

#include <inttypes.h>
#include <malloc.h>
#include <unistd.h>

/* @n commands of @nlb blocks each, one at a time, alternating the LBA. */
static void rw_loop(struct nv_env *e, bool write, u32 nlb, int n, u8 *buf)
{
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(
			nvmeh_rw(e->c, 1, write, (u64)(i % 4) * nlb, nlb, buf),
			0);
}

/* Asynchronous commands: each slot's done counts down @left. */
struct burst {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned int left;
	unsigned int failed;
	int first_error;
};

static void burst_done(struct nvmeh_request *rq)
{
	struct burst *b = rq->priv;

	pthread_mutex_lock(&b->m);
	if (rq->error || rq->status) {
		if (!b->failed++)
			b->first_error = rq->error ? rq->error : rq->status;
	}
	b->left--;
	pthread_cond_broadcast(&b->c);
	pthread_mutex_unlock(&b->m);
}

static void burst_init(struct burst *b, unsigned int n)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->m, NULL);
	pthread_cond_init(&b->c, NULL);
	b->left = n;
}

static void burst_wait(struct burst *b)
{
	pthread_mutex_lock(&b->m);
	while (b->left)
		pthread_cond_wait(&b->c, &b->m);
	pthread_mutex_unlock(&b->m);
	pthread_mutex_destroy(&b->m);
	pthread_cond_destroy(&b->c);
}

static void rq_rw(struct nvmeh_request *rq, bool write, u64 slba, u32 nlb,
		  u8 *buf, struct burst *b)
{
	nv_rw_init(rq, write, 1, slba, nlb, buf, 512);
	rq->done = burst_done;
	rq->priv = b;
}

#define BURST 8

/* BURST commands of @nlb blocks at once on queue 1, waited for. */
static void burst_rw(struct nv_env *e, bool write, u32 nlb, u8 *buf)
{
	static struct nvmeh_request rqs[BURST];
	struct burst b;
	unsigned int i;

	burst_init(&b, BURST);
	for (i = 0; i < BURST; i++) {
		rq_rw(&rqs[i], write, (u64)i * nlb, nlb, buf + i * nlb * 512,
		      &b);
		assert_int_equal(nvmeh_submit(e->c, 1, &rqs[i]), 0);
	}
	burst_wait(&b);
	assert_int_equal(b.failed, 0);
}

static void alloc_case(const char *profile, bool no_inline)
{
	static struct nv_env e;
	unsigned long before, after;
	u8 *buf;
	int i;

	if (!nv_counting())
		skip();
	nv_env_init(&e, profile,
		    &(struct nv_cfg){ .nr_io_queues = 1,
				      .queue_size = BURST,
				      .no_inline = no_inline });
	buf = aligned_alloc(4096, BURST * 128 * 1024);
	assert_non_null(buf);
	nv_fill(buf, BURST * 128 * 1024, 5);
	/*
	 * Warm-up: the R/W API keeps each QP's context storage in size
	 * classes that grow to the most contexts of a size alive at once
	 * (src/rw/rw_cache.c); bursts of BURST commands take every class in
	 * use past what one command at a time needs.
	 */
	for (i = 0; i < 4; i++) {
		burst_rw(&e, true, 8, buf);
		burst_rw(&e, false, 8, buf);
		burst_rw(&e, true, 256, buf);
		burst_rw(&e, false, 256, buf);
	}
	rw_loop(&e, true, 8, 16, buf);
	rw_loop(&e, false, 8, 16, buf);

	before = nv_allocs_now();
	rw_loop(&e, true, 8, 100, buf);
	rw_loop(&e, false, 8, 100, buf);
	rw_loop(&e, true, 256, 100, buf);
	rw_loop(&e, false, 256, 100, buf);
	after = nv_allocs_now();
	print_message("%s%s: %lu heap allocations in 400 commands\n", profile,
		      no_inline ? " (keyed only)" : "", after - before);
	assert_int_equal(after - before, 0);
	free(buf);
	nv_env_fini(&e);
}

static void test_no_alloc_rxe(void **state)
{
	alloc_case("rxe", false);
}

static void test_no_alloc_siw_keyed(void **state)
{
	alloc_case("siw", true);
}

static void test_no_alloc_mlx5_keyed(void **state)
{
	alloc_case("mlx5", true);
}

static u64 target_stat_waits(struct nv_env *e, u64 *inflight)
{
	struct nvmet_target_stats ts;

	assert_int_equal(nvmet_target_get_stats(e->t, &ts), 0);
	if (inflight)
		*inflight = ts.reqs_inflight;
	return ts.data_waits;
}

/* The target's requests in flight, after they drained (up to 5 s). */
static u64 target_idle(struct nv_env *e)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	u64 inflight = 0;
	int i;

	for (i = 0; i < 2500; i++) {
		target_stat_waits(e, &inflight);
		if (!inflight)
			break;
		nanosleep(&ts, NULL);
	}
	return inflight;
}

/*
 * A pool of 32 pages per queue (MDTS 5: 128 KiB; one page per entry of a
 * 32-deep queue) under random commands of up to 128 KiB on two queues.
 */
static void exhaust_case(const char *profile, bool no_inline)
{
	static struct nv_env e;
	struct nvmet_target_stats ts;
	struct nv_run run;
	struct nvmeh_stats hs;

	nv_env_init(&e, profile,
		    &(struct nv_cfg){ .nr_io_queues = 2,
				      .queue_size = 32,
				      .ns_size = 8u << 20,
				      .mdts_max = 5,
				      .data_buf_size = 4096,
				      .no_inline = no_inline });
	assert_int_equal(nvmeh_ctrl_info(e.c)->max_xfer, 128 * 1024);
	nv_io_run(&run, &e, 2, 32, 12, 17);
	if (run.failed)
		fail_msg("%d failures; first: %s", run.failed, run.why);
	assert_true(run.reads > 0);
	assert_true(run.writes > 0);
	nv_io_verify(&run);
	assert_int_equal(nvmet_target_get_stats(e.t, &ts), 0);
	print_message("%s: %llu commands waited for pages\n", profile,
		      (unsigned long long)ts.data_waits);
	assert_true(ts.data_waits > 0);
	/* a response seen by the host may still wait for its completion */
	assert_int_equal(target_idle(&e), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 0);
	assert_int_equal(hs.aborted, 0);
	nv_io_free(&run);
	nv_env_fini(&e);
}

static void test_exhaust_rxe(void **state)
{
	exhaust_case("rxe", false);
}

static void test_exhaust_siw_keyed(void **state)
{
	exhaust_case("siw", true);
}

static void test_exhaust_mlx5(void **state)
{
	exhaust_case("mlx5", false);
}

/*
 * As on iWARP through libibverbs (RDMARW_NVMET_REG_PER_CMD): host writes
 * take pages from the pool registered per command, host reads from the
 * second pool, registered once; both run out and are waited for, and
 * every page goes back to the pool it came from (the bytes match and the
 * target drains).
 */
static void test_exhaust_reg_per_cmd(void **state)
{
	setenv("RDMARW_NVMET_REG_PER_CMD", "1", 1);
	exhaust_case("siw", true);
	unsetenv("RDMARW_NVMET_REG_PER_CMD");
}

#define WAITERS 6

/*
 * The first write's RDMA READ stalls holding all 32 pages of queue 1's
 * pool; WAITERS 128 KiB commands (reads and writes) wait behind it.  Then
 * the host goes away (@stop_target false) or the target stops: every
 * request is released once, the pages with them.
 */
static void waiters_case(const char *profile, bool stop_target)
{
	static struct nv_env e;
	static struct nvmeh_request rqs[1 + WAITERS];
	static u8 data[(1 + WAITERS) * 128 * 1024];
	struct soft_fault_rule rule = {
		.type = SOFT_FAULT_STALL,
		.nth = 1,
		.opcodes = 1ull << IB_WR_RDMA_READ,
	};
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	/* static: a failed test's teardown still completes its requests */
	static struct burst b;
	u64 inflight = 0;
	unsigned int i;

	/* reads through the pool (a RAM namespace's go without it) */
	setenv("RDMARW_NVMET_ZCOPY", "0", 1);
	nv_env_init(&e, profile,
		    &(struct nv_cfg){ .nr_io_queues = 1,
				      .queue_size = 8,
				      .mdts_max = 5,
				      .data_buf_size = 4096,
				      .no_inline = true,
				      .io_timeout_ms = 20000 });
	unsetenv("RDMARW_NVMET_ZCOPY");
	nv_fill(data, sizeof(data), 3);
	assert_int_equal(soft_fault_arm_device(e.tdev, &rule), 0);
	burst_init(&b, 1 + WAITERS);
	for (i = 0; i <= WAITERS; i++) {
		rq_rw(&rqs[i], i == 0 || (i & 1), (u64)i * 256, 256,
		      data + i * 128 * 1024, &b);
		assert_int_equal(nvmeh_submit(e.c, 1, &rqs[i]), 0);
	}
	/* every command behind the first waits for its pages */
	for (i = 0; i < 2500; i++) {
		if (target_stat_waits(&e, &inflight) == WAITERS)
			break;
		nanosleep(&ts, NULL);
	}
	if (target_stat_waits(&e, &inflight) != WAITERS)
		fail_msg("%llu waits, %llu requests in flight",
			 (unsigned long long)target_stat_waits(&e, NULL),
			 (unsigned long long)inflight);
	assert_int_equal(inflight, 1 + WAITERS);
	if (stop_target) {
		nvmet_target_destroy(e.t);
		e.t = NULL;
	} else {
		nvmeh_ctrl_destroy(e.c);
		e.c = NULL;
	}
	burst_wait(&b);
	assert_int_equal(b.failed, 1 + WAITERS);
	assert_int_equal(b.first_error, -ECONNABORTED);
	if (!stop_target) {
		/* the target released all of it and serves a new host */
		assert_int_equal(target_idle(&e), 0);
		assert_int_equal(soft_fault_clear_device(e.tdev), 0);
		e.c = nvmeh_ctrl_create(&e.o);
		assert_false(IS_ERR(e.c));
		rw_loop(&e, true, 256, 4, data);
		rw_loop(&e, false, 256, 4, data + 128 * 1024);
		assert_memory_equal(data, data + 128 * 1024, 128 * 1024);
	}
	nv_env_fini(&e);
}

static void test_waiters_host_gone_rxe(void **state)
{
	waiters_case("rxe", false);
}

static void test_waiters_target_stop_rxe(void **state)
{
	waiters_case("rxe", true);
}

static void test_waiters_host_gone_mlx5(void **state)
{
	waiters_case("mlx5", false);
}

/* The same with the two pools of RDMARW_NVMET_REG_PER_CMD. */
static void test_waiters_reg_per_cmd(void **state)
{
	setenv("RDMARW_NVMET_REG_PER_CMD", "1", 1);
	waiters_case("rxe", false);
	waiters_case("rxe", true);
	unsetenv("RDMARW_NVMET_REG_PER_CMD");
}

/*
 * A command's data is one transfer however the device limits SGEs: its
 * pages are one contiguous run, given as one scatterlist entry, so a
 * 128 KiB host write is one RDMA READ and a read one RDMA WRITE on a
 * target device that takes one SGE per READ and two per send WR (siw
 * takes one per READ); with the data as a list of 32 pages they were 32
 * READs and 16 WRITEs.  Counted as the WRs the target's device executes:
 * the transfer and the response SEND.
 */
/* The WRs the target's device has executed. */
static u64 wrs_now(struct nv_env *e)
{
	struct soft_stats st;

	assert_int_equal(soft_device_stats(e->tdev, &st), 0);
	return st.wrs_executed;
}

/* The count once it has not moved for 20 ms (bounded: 1 s). */
static u64 wrs_settled(struct nv_env *e)
{
	u64 prev = wrs_now(e), n;
	int tries;

	for (tries = 0; tries < 50; tries++, prev = n) {
		usleep(20000);
		n = wrs_now(e);
		if (n == prev)
			break;
	}
	return prev;
}

/*
 * The WRs the target's device executes for one 128 KiB command.  A WR is
 * counted when its executor is done with it, which can be after the host
 * has seen its effect (the response): the count is taken once the
 * commands before have settled, and after the command, wait (bounded) for
 * @expect, then a little longer, so that a count above it shows.
 */
static u64 target_wrs(struct nv_env *e, bool write, u8 *buf, u64 expect)
{
	u64 before = wrs_settled(e), n;
	int tries;

	assert_int_equal(nvmeh_rw(e->c, 1, write, 64, 256, buf), 0);
	for (tries = 0; tries < 10000 && wrs_now(e) - before < expect; tries++)
		usleep(1000);
	usleep(20000);
	n = wrs_now(e) - before;
	print_message("a 128 KiB %s: %" PRIu64 " WRs at the target\n",
		      write ? "write" : "read", n);
	return n;
}

static void one_wr_case(const char *profile)
{
	struct nv_cfg cfg = { .no_inline = true,
			      .nr_io_queues = 1,
			      .tdev_max_sge_rd = 1,
			      .tdev_max_send_sge = 2 };
	struct nv_env e;
	u8 *w = malloc(128 * 1024), *r = calloc(1, 128 * 1024);

	assert_non_null(w);
	assert_non_null(r);
	nv_fill(w, 128 * 1024, 7);
	nv_env_init(&e, profile, &cfg);
	assert_int_equal(target_wrs(&e, true, w, 2), 2);
	assert_int_equal(target_wrs(&e, false, r, 2), 2);
	assert_memory_equal(w, r, 128 * 1024);
	free(w);
	free(r);
	nv_env_fini(&e);
}

static void test_one_wr_rxe(void **state)
{
	one_wr_case("rxe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_no_alloc_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_no_alloc_siw_keyed, nv_teardown),
		cmocka_unit_test_teardown(test_no_alloc_mlx5_keyed,
					  nv_teardown),
		cmocka_unit_test_teardown(test_exhaust_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_exhaust_siw_keyed, nv_teardown),
		cmocka_unit_test_teardown(test_exhaust_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_exhaust_reg_per_cmd,
					  nv_teardown),
		cmocka_unit_test_teardown(test_waiters_host_gone_rxe,
					  nv_teardown),
		cmocka_unit_test_teardown(test_waiters_target_stop_rxe,
					  nv_teardown),
		cmocka_unit_test_teardown(test_waiters_host_gone_mlx5,
					  nv_teardown),
		cmocka_unit_test_teardown(test_waiters_reg_per_cmd,
					  nv_teardown),
		cmocka_unit_test_teardown(test_one_wr_rxe, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's command deadline against a coarse clock that lags a tick at
 * the submission and not at the check (the case that made
 * test_nvmet_faults' test_async_timeout fail once: a timeout up to a tick
 * early).
 *
 * The host stamps its commands and checks them with
 * CLOCK_MONOTONIC_COARSE, which reads the last tick: a stamp can be a
 * tick behind the real time of the submission, while the timeout work's
 * check, read just after a tick, is not behind.  The test links with
 * -Wl,--wrap=clock_gettime,--wrap=clock_getres and owns that clock: its
 * resolution is TICK_MS, and while the test holds it, it reads a virtual
 * time (vnow) that only the test moves, less TICK_MS on the submitting
 * thread (the stamp) and exactly on every other thread (the timeout
 * work's check).  No other clock changes; nothing depends on how fast the
 * machine runs: each check is awaited by counting the timeout work's
 * reads of the clock.
 *
 * A command submitted at vnow = V0 (stamped V0 - TICK_MS), which the
 * target never answers: with vnow at V0 + io_timeout - 1 (io_timeout has
 * not passed) two scans of the timeout work find it alive; with vnow at
 * V0 + io_timeout + TICK_MS it times out (-ECONNABORTED), and the
 * controller reconnects.  A deadline of io_timeout alone (no tick) times
 * it out at the first of those checks.
 */
#include "nvmet_env.h"

#include <pthread.h>

enum { IO_TIMEOUT_MS = 300, TICK_MS = 10 };

int __real_clock_gettime(clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);
int __real_clock_getres(clockid_t clk, struct timespec *res);
int __wrap_clock_getres(clockid_t clk, struct timespec *res);

/* The coarse clock, when the test holds it (on). */
static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	bool on;
	u64 vnow; /* ms */
	pthread_t submitter; /* reads vnow - TICK_MS */
	u64 checks; /* reads by other threads (the timeout work) */
} cc = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };

int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	u64 ms;

	if (clk != CLOCK_MONOTONIC_COARSE)
		return __real_clock_gettime(clk, ts);
	pthread_mutex_lock(&cc.m);
	if (!cc.on) {
		pthread_mutex_unlock(&cc.m);
		return __real_clock_gettime(clk, ts);
	}
	if (pthread_equal(pthread_self(), cc.submitter)) {
		ms = cc.vnow - TICK_MS;
	} else {
		ms = cc.vnow;
		cc.checks++;
		pthread_cond_broadcast(&cc.c);
	}
	pthread_mutex_unlock(&cc.m);
	ts->tv_sec = (time_t)(ms / 1000);
	ts->tv_nsec = (long)(ms % 1000) * 1000000;
	return 0;
}

int __wrap_clock_getres(clockid_t clk, struct timespec *res)
{
	if (clk != CLOCK_MONOTONIC_COARSE)
		return __real_clock_getres(clk, res);
	if (res) {
		res->tv_sec = 0;
		res->tv_nsec = TICK_MS * 1000000L;
	}
	return 0;
}

/* Hold the coarse clock at the real one's present; this thread submits. */
static u64 clock_take(void)
{
	struct timespec ts;
	u64 now;

	__real_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
	pthread_mutex_lock(&cc.m);
	cc.vnow = now;
	cc.submitter = pthread_self();
	cc.checks = 0;
	cc.on = true;
	pthread_mutex_unlock(&cc.m);
	return now;
}

static void clock_give_back(void)
{
	pthread_mutex_lock(&cc.m);
	cc.on = false;
	pthread_mutex_unlock(&cc.m);
}

static int done;

static void deadline_done(struct nvmeh_request *rq)
{
	(void)rq;
	pthread_mutex_lock(&cc.m);
	done++;
	pthread_cond_broadcast(&cc.c);
	pthread_mutex_unlock(&cc.m);
}

/*
 * Move the clock to @vnow, then wait (at most 10 s) until the command has
 * ended or the timeout work has read the clock @nchecks times since:
 * returns whether it has ended.
 */
static bool clock_set_wait(u64 vnow, u64 nchecks)
{
	struct timespec ts;
	bool ended;
	u64 start;
	int ret = 0;

	__real_clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&cc.m);
	cc.vnow = vnow;
	start = cc.checks;
	while (!done && cc.checks - start < nchecks && !ret)
		ret = pthread_cond_timedwait(&cc.c, &cc.m, &ts);
	ended = done;
	nchecks = cc.checks - start;
	pthread_mutex_unlock(&cc.m);
	if (!ended && ret) {
		clock_give_back();
		fail_msg("neither an end nor the timeout work's checks in 10 s "
			 "(%llu checks)",
			 (unsigned long long)nchecks);
	}
	return ended;
}

static void test_deadline_lagging_stamp(void **state)
{
	static struct nv_env e;
	struct soft_fault_rule rule = { .type = SOFT_FAULT_STALL, .nth = 1 };
	/* static: a failed test's teardown still completes it */
	static struct nvmeh_request rq;
	static u8 data[4096];
	u8 w[4096], r[4096];
	u64 v0;

	(void)state;
	nv_env_init(&e, "mlx5",
		    &(struct nv_cfg){ .io_timeout_ms = IO_TIMEOUT_MS });
	/* the target's next work request (the read's data) never goes */
	assert_int_equal(soft_fault_arm_device(e.tdev, &rule), 0);
	nv_rw_init(&rq, false, 1, 0, sizeof(data) / 512, data, 512);
	rq.done = deadline_done;
	done = 0;

	v0 = clock_take();
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), 0);
	/* io_timeout has not passed: two whole scans keep it */
	if (clock_set_wait(v0 + IO_TIMEOUT_MS - 1, 2)) {
		clock_give_back();
		fail_msg("timed out before %u ms had passed (stamp a tick "
			 "behind)",
			 IO_TIMEOUT_MS);
	}
	/* a tick later it has timed out */
	if (!clock_set_wait(v0 + IO_TIMEOUT_MS + TICK_MS, (u64)-1)) {
		clock_give_back();
		fail_msg("alive a tick past its timeout");
	}
	clock_give_back();
	assert_int_equal(done, 1);
	assert_int_equal(rq.error, -ECONNABORTED);
	assert_int_equal(rq.status, NVME_SC_HOST_ABORTED_CMD);

	/* the controller comes back and serves */
	assert_int_equal(soft_fault_clear_device(e.tdev), 0);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 10000), 0);
	nv_fill(w, sizeof(w), 7);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 8, 8, w), 0);
	memset(r, 0, sizeof(r));
	assert_int_equal(nvmeh_rw(e.c, 2, false, 8, 8, r), 0);
	assert_memory_equal(r, w, sizeof(r));
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_deadline_lagging_stamp,
					  nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

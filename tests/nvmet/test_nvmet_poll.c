// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Polled I/O queues (nvmet_target_opts.poll_groups): the target's poll
 * groups poll the IB_POLL_DIRECT CQs of the I/O queues, round robin.
 * I/O is verified byte for byte on every profile with four queues on two
 * groups; an idle group sleeps and the next command wakes it (asserted by
 * the target's counters, never by time); queues torn down while they are
 * polled under load (a controller reset, the target stopped) leave nothing
 * behind; a target QP that fails with commands in flight at every stage
 * releases each of them.  The same with the host's I/O queues polled too (nvmeh_opts.poll:
 * a thread per queue on its IB_POLL_DIRECT CQ, sleeping when idle), and
 * run to completion (one thread for both sides: test_poll_one_thread).
 */
#include "nv_io.h"

#include <pthread.h>

enum { NQ = 4, NGROUPS = 2, BIG = 64 * 1024 };

static void poll_opts(struct nvmet_target_opts *to, struct nv_env *e,
		      u32 groups)
{
	nv_target_opts(to, 4u << 20);
	to->poll_groups = groups;
	(void)e;
}

static struct nvmet_target_stats tstats(struct nv_env *e)
{
	struct nvmet_target_stats st;

	assert_int_equal(nvmet_target_get_stats(e->t, &st), 0);
	return st;
}

/* The environment, the host's I/O queues polled when @host_poll. */
static void env_init(struct nv_env *e, const char *profile, struct nv_cfg *cfg,
		     bool host_poll)
{
	cfg->no_connect = true;
	nv_env_init(e, profile, cfg);
	e->o.poll = host_poll;
	e->c = nvmeh_ctrl_create(&e->o);
	if (IS_ERR(e->c))
		fail_msg("nvmeh_ctrl_create: %ld", PTR_ERR(e->c));
}

/* Write then read back @len bytes on @qid at block @slba. */
static void rw_verify(struct nv_env *e, unsigned int qid, u64 slba, u32 len,
		      u64 seed)
{
	u8 *w = malloc(len), *r = malloc(len);

	assert_non_null(w);
	assert_non_null(r);
	nv_fill(w, len, seed);
	memset(r, 0, len);
	assert_int_equal(nvmeh_rw(e->c, qid, true, slba, len / 512, w), 0);
	assert_int_equal(nvmeh_rw(e->c, qid, false, slba, len / 512, r), 0);
	assert_memory_equal(w, r, len);
	free(w);
	free(r);
}

/* Bounded wait (5 s) until @n poll groups sleep. */
static void wait_asleep(struct nv_env *e, u64 n)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmet_target_stats st;
	int i;

	for (i = 0; i < 2500; i++) {
		st = tstats(e);
		if (st.poll_asleep == n)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("%llu poll groups asleep (want %llu)",
		 (unsigned long long)st.poll_asleep, (unsigned long long)n);
}

static void io_case(const char *profile, bool threaded, bool host_poll)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .threaded = threaded,
			      .nr_io_queues = NQ,
			      .topts = &to };
	struct nvmet_target_stats st;
	unsigned int q;

	poll_opts(&to, &e, NGROUPS);
	env_init(&e, profile, &cfg, host_poll);
	st = tstats(&e);
	/* the I/O queues joined the groups; the admin queue did not */
	assert_int_equal(st.poll_members, NQ);
	for (q = 1; q <= NQ; q++) {
		/* in-capsule (4 KiB) and keyed (64 KiB: RDMA READ, WRITE) */
		rw_verify(&e, q, q * 1024, 4096, q);
		rw_verify(&e, q, q * 1024 + 8, BIG, 100 + q);
	}
	/* each queue's data, read back on another queue */
	for (q = 1; q <= NQ; q++) {
		u8 *w = malloc(BIG), *r = malloc(BIG);

		nv_fill(w, BIG, 100 + q);
		assert_int_equal(nvmeh_rw(e.c, 1 + q % NQ, false, q * 1024 + 8,
					  BIG / 512, r),
				 0);
		assert_memory_equal(w, r, BIG);
		free(w);
		free(r);
	}
	st = tstats(&e);
	assert_int_equal(st.errors, 0);
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	st = tstats(&e);
	assert_int_equal(st.poll_members, 0);
	assert_int_equal(st.reqs_inflight, 0);
	nv_env_fini(&e);
}

static void test_poll_io_mlx5(void **state)
{
	(void)state;
	io_case("mlx5", false, false);
}

static void test_poll_io_rxe(void **state)
{
	(void)state;
	io_case("rxe", false, false);
}

static void test_poll_io_siw(void **state)
{
	(void)state;
	io_case("siw", false, false);
}

static void test_poll_io_siw_threaded(void **state)
{
	(void)state;
	io_case("siw", true, false);
}

static void test_poll_io_rxe_threaded(void **state)
{
	(void)state;
	io_case("rxe", true, false);
}

static void test_poll_io_host_mlx5(void **state)
{
	(void)state;
	io_case("mlx5", false, true);
}

static void test_poll_io_host_rxe(void **state)
{
	(void)state;
	io_case("rxe", false, true);
}

static void test_poll_io_host_siw(void **state)
{
	(void)state;
	io_case("siw", false, true);
}

static void test_poll_io_host_siw_threaded(void **state)
{
	(void)state;
	io_case("siw", true, true);
}

static u64 host_sleeps(struct nv_env *e)
{
	struct nvmeh_stats hs;

	nvmeh_ctrl_stats(e->c, &hs);
	return hs.poll_sleeps;
}

/*
 * The host's polled queues sleep when idle (poll_sleeps grows while
 * nothing is sent; bounded wait) and a command still completes after.
 */
static void test_poll_host_idle_sleeps(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = 2, .topts = &to };
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	u64 before;
	int i;

	(void)state;
	poll_opts(&to, &e, NGROUPS);
	env_init(&e, "rxe", &cfg, true);
	rw_verify(&e, 1, 0, BIG, 3);
	rw_verify(&e, 2, 128, 4096, 4);
	/* each queue's thread sleeps once idle: two sleeps at least */
	for (i = 0; i < 2500 && host_sleeps(&e) < 2; i++)
		nanosleep(&ts, NULL);
	before = host_sleeps(&e);
	assert_true(before >= 2);
	rw_verify(&e, 1, 512, BIG, 5);
	rw_verify(&e, 2, 640, BIG, 6);
	/* woken by the completions, idle again, asleep again */
	for (i = 0; i < 2500 && host_sleeps(&e) < before + 2; i++)
		nanosleep(&ts, NULL);
	assert_true(host_sleeps(&e) >= before + 2);
	nv_env_fini(&e);
}

/*
 * Idle groups sleep; a command wakes the group of its queue (a completion
 * on an armed CQ), is answered with the right bytes, and the group sleeps
 * again afterwards.
 */
static void test_poll_idle_sleeps(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = 2, .topts = &to };
	struct nvmet_target_stats st;
	u64 sleeps, wakeups;
	unsigned int q;

	(void)state;
	poll_opts(&to, &e, NGROUPS);
	nv_env_init(&e, "rxe", &cfg);
	rw_verify(&e, 1, 0, 4096, 7);
	rw_verify(&e, 2, 64, BIG, 8);
	for (q = 1; q <= 2; q++) {
		wait_asleep(&e, NGROUPS);
		st = tstats(&e);
		sleeps = st.poll_sleeps;
		wakeups = st.poll_wakeups;
		assert_true(sleeps >= NGROUPS);
		rw_verify(&e, q, 256, BIG, 9 + q);
		st = tstats(&e);
		assert_true(st.poll_wakeups > wakeups);
		wait_asleep(&e, NGROUPS);
		assert_true(tstats(&e).poll_sleeps > sleeps);
	}
	nv_env_fini(&e);
}

/* --poll-busy: the groups never sleep, I/O works. */
static void test_poll_busy_never_sleeps(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = 2, .topts = &to };
	struct nvmet_target_stats st;

	(void)state;
	poll_opts(&to, &e, 1);
	to.poll_busy = true;
	nv_env_init(&e, "rxe", &cfg);
	rw_verify(&e, 1, 0, BIG, 1);
	rw_verify(&e, 2, 512, 4096, 2);
	st = tstats(&e);
	assert_int_equal(st.poll_members, 2);
	assert_int_equal(st.poll_sleeps, 0);
	assert_int_equal(st.poll_asleep, 0);
	nv_env_fini(&e);
}

static void test_poll_bad_opts(void **state)
{
	struct nvmet_target_opts to;
	struct nv_env e;

	(void)state;
	poll_opts(&to, &e, NVMET_MAX_POLL_GROUPS + 1);
	assert_ptr_equal(nvmet_target_create(&to), ERR_PTR(-EINVAL));
	poll_opts(&to, &e, 1);
	to.poll_idle_us = 1000001;
	assert_ptr_equal(nvmet_target_create(&to), ERR_PTR(-EINVAL));
}

/* ---- teardown under load ------------------------------------------------------------- */

enum { SLOTS = 8 * NQ };

struct load;

struct slot {
	struct load *l;
	struct nvmeh_request rq;
	unsigned int qid;
	unsigned int idx; /* its own 128 blocks: no two commands overlap */
	u8 buf[8192];
	u64 rng;
};

struct load {
	struct nvmeh_ctrl *c;
	pthread_mutex_t m;
	pthread_cond_t cv;
	unsigned int active;
	bool stop;
	u64 ok, failed;
	struct slot s[SLOTS];
};

static void slot_done(struct nvmeh_request *rq);

static int slot_issue(struct slot *s)
{
	u64 slba;

	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	slba = (u64)s->idx * 128 + (s->rng % 8) * 16;
	memset(&s->rq, 0, sizeof(s->rq));
	s->rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		(s->rng & 1) ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, nsid),
		      1);
	nvme_put_le64(s->rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      slba);
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      sizeof(s->buf) / 512 - 1);
	s->rq.data = s->buf;
	s->rq.data_len = sizeof(s->buf);
	s->rq.write = s->rng & 1;
	s->rq.done = slot_done;
	s->rq.priv = s;
	return nvmeh_submit(s->l->c, s->qid, &s->rq);
}

static void slot_end(struct load *l)
{
	pthread_mutex_lock(&l->m);
	l->active--;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->m);
}

static void slot_done(struct nvmeh_request *rq)
{
	struct slot *s = rq->priv;
	struct load *l = s->l;
	bool stop;

	pthread_mutex_lock(&l->m);
	if (rq->error || rq->status)
		l->failed++;
	else
		l->ok++;
	stop = l->stop;
	pthread_mutex_unlock(&l->m);
	if (stop || slot_issue(s))
		slot_end(l);
}

static void load_start(struct load *l, struct nvmeh_ctrl *c)
{
	unsigned int i, n = 0;

	memset(l, 0, sizeof(*l));
	l->c = c;
	pthread_mutex_init(&l->m, NULL);
	pthread_cond_init(&l->cv, NULL);
	pthread_mutex_lock(&l->m);
	l->active = SLOTS;
	pthread_mutex_unlock(&l->m);
	for (i = 0; i < SLOTS; i++) {
		l->s[i].l = l;
		l->s[i].qid = 1 + i % NQ;
		l->s[i].idx = i;
		l->s[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
		if (slot_issue(&l->s[i]))
			n++;
	}
	while (n--)
		slot_end(l);
}

/* Wait (bounded by the host's command timeout) until some I/O is done. */
static void load_wait_ios(struct load *l, u64 n)
{
	struct timespec ts = { 0, 1000 * 1000 };
	int i;

	for (i = 0; i < 5000; i++) {
		pthread_mutex_lock(&l->m);
		if (l->ok + l->failed >= n || !l->active) {
			pthread_mutex_unlock(&l->m);
			return;
		}
		pthread_mutex_unlock(&l->m);
		nanosleep(&ts, NULL);
	}
}

/* Stop resubmitting and wait until every slot has ended (bounded). */
static void load_stop(struct load *l)
{
	struct timespec end;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 30;
	pthread_mutex_lock(&l->m);
	l->stop = true;
	while (l->active &&
	       pthread_cond_timedwait(&l->cv, &l->m, &end) != ETIMEDOUT)
		;
	assert_int_equal(l->active, 0);
	pthread_mutex_unlock(&l->m);
	pthread_mutex_destroy(&l->m);
	pthread_cond_destroy(&l->cv);
}

/*
 * Controller resets while every polled queue is loaded: the queues are
 * torn down (their QPs flushed, the release drains them, out of their
 * groups) and connected again, into the groups; I/O then still works.
 */
static void reset_case(bool host_poll)
{
	static struct nv_env e;
	static struct load l;
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = NQ, .topts = &to };
	struct nvmet_target_stats st;
	int i;

	poll_opts(&to, &e, NGROUPS);
	env_init(&e, "rxe", &cfg, host_poll);
	load_start(&l, e.c);
	for (i = 0; i < 3; i++) {
		load_wait_ios(&l, (u64)(i + 1) * 200);
		assert_int_equal(nvmeh_ctrl_reset(e.c), 0);
		assert_int_equal(nvmeh_ctrl_wait_live(e.c, 10000), 0);
	}
	load_wait_ios(&l, l.ok + 200);
	load_stop(&l);
	assert_true(l.ok > 0);
	/* the queues are back, in the groups, and move the right bytes */
	nv_wait_target(&e, 1, 1 + NQ);
	assert_int_equal(tstats(&e).poll_members, NQ);
	for (i = 1; i <= NQ; i++)
		rw_verify(&e, (unsigned int)i, 4096 + (u64)i * 256, BIG,
			  (u64)i);
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	st = tstats(&e);
	assert_int_equal(st.poll_members, 0);
	assert_int_equal(st.reqs_inflight, 0);
	nv_env_fini(&e);
}

static void test_poll_reset_under_load(void **state)
{
	(void)state;
	reset_case(false);
}

static void test_poll_reset_under_load_host(void **state)
{
	(void)state;
	reset_case(true);
}

/*
 * The target stopped while its polled queues are loaded: every queue is
 * disconnected and released, the groups stop; the host's commands end
 * (with errors), and nothing is left on either device.
 */
static void stop_case(bool host_poll)
{
	static struct nv_env e;
	static struct load l;
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = NQ,
			      .io_timeout_ms = 1000,
			      .topts = &to };

	poll_opts(&to, &e, NGROUPS);
	env_init(&e, "rxe", &cfg, host_poll);
	load_start(&l, e.c);
	load_wait_ios(&l, 500);
	nvmet_target_destroy(e.t);
	e.t = NULL;
	load_stop(&l);
	assert_true(l.ok > 0);
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_env_fini(&e);
}

static void test_poll_target_stop_under_load(void **state)
{
	(void)state;
	stop_case(false);
}

static void test_poll_target_stop_under_load_host(void **state)
{
	(void)state;
	stop_case(true);
}

/*
 * The target's QP fails at its @nth work request with two polled queues
 * of 32 commands in flight (test_nvmet_faults' case, polled): the queue
 * leaves its group and is torn down, every request it held released; the
 * host reconnects into the groups and is served.
 */
static void qp_err_in_flight(unsigned int nth, bool host_poll)
{
	static struct nv_env e;
	struct soft_fault_rule rule = { .type = SOFT_FAULT_QP_ERR, .nth = nth };
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .io_timeout_ms = 1000,
			      .nr_io_queues = 2,
			      .queue_size = 32,
			      .topts = &to };
	struct nvmeh_stats hs;
	struct nv_run run;
	int i;

	poll_opts(&to, &e, NGROUPS);
	env_init(&e, "rxe", &cfg, host_poll);
	assert_int_equal(soft_fault_arm_device(e.tdev, &rule), 0);
	nv_io_run(&run, &e, 2, 32, 6, nth);
	assert_int_equal(soft_fault_clear_device(e.tdev), 0);
	nv_io_free(&run);
	for (i = 0; i < 2500; i++) {
		nvmeh_ctrl_stats(e.c, &hs);
		if (hs.resets >= 1)
			break;
		nanosleep(&ts, NULL);
	}
	assert_true(hs.resets >= 1);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	rw_verify(&e, 1, 900, 4096, nth);
	rw_verify(&e, 2, 1000, BIG, nth + 1);
	nv_wait_target(&e, 1, 3);
	for (i = 0; i < 2500 && tstats(&e).reqs_inflight; i++)
		nanosleep(&ts, NULL);
	assert_int_equal(tstats(&e).reqs_inflight, 0);
	assert_int_equal(tstats(&e).poll_members, 2);
	nv_env_fini(&e);
}

static void test_poll_target_qp_err_in_flight(void **state)
{
	static const unsigned int nths[] = { 2, 11, 40, 97 };
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(nths); i++) {
		qp_err_in_flight(nths[i], false);
		qp_err_in_flight(nths[i], true);
	}
}

/* --one-thread's shape: a request's end and the thread it ran on. */
struct ot_req {
	struct nvmeh_request rq;
	pthread_t thr;
	int done; /* atomic */
};

static void ot_done(struct nvmeh_request *rq)
{
	struct ot_req *r = rq->priv;

	r->thr = pthread_self();
	__atomic_store_n(&r->done, rq->error || rq->status ? -1 : 1,
			 __ATOMIC_RELEASE);
}

/* The poll group's hook: the host's queue 1, from the group's thread. */
static int ot_pass(void *arg)
{
	return nvmeh_poll(arg, 1, 32);
}

static void ot_submit(struct nv_env *e, struct ot_req *r, u64 slba, void *buf)
{
	memset(r, 0, sizeof(*r));
	r->rq.sqe[offsetof(struct nvme_common_command, opcode)] = nvme_cmd_read;
	nvme_put_le32(r->rq.sqe + offsetof(struct nvme_common_command, nsid),
		      1);
	nvme_put_le64(r->rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      slba);
	nvme_put_le32(r->rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      7);
	r->rq.data = buf;
	r->rq.data_len = 4096;
	r->rq.done = ot_done;
	r->rq.priv = r;
	assert_int_equal(nvmeh_submit(e->c, 1, &r->rq), 0);
}

/* Bounded wait (5 s) for @r's end, polling the host's queue when @poll. */
static void ot_wait(struct nv_env *e, struct ot_req *r, bool poll)
{
	struct timespec ts = { 0, 1000 * 1000 };
	int i;

	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
			break;
		if (poll)
			assert_true(nvmeh_poll(e->c, 1, 32) >= 0);
		nanosleep(&ts, NULL);
	}
	assert_int_equal(__atomic_load_n(&r->done, __ATOMIC_ACQUIRE), 1);
}

/*
 * Run-to-completion (nvmeh_opts.poll_external, nvmet_target_poll_hook()):
 * no thread of the host's polls its I/O queue; its bring-up and
 * nvmeh_rw() poll it while they wait; hooked into the target's poll
 * group, the group's thread ends the host's requests; unhooked, they end
 * only when the caller polls, on the caller's thread.
 */
static void test_poll_one_thread(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = 1,
			      .topts = &to,
			      .no_connect = true };
	static struct ot_req r[8];
	u8 *w = malloc(8 * 4096), *buf = malloc(8 * 4096);
	unsigned int i;

	(void)state;
	assert_non_null(w);
	assert_non_null(buf);
	poll_opts(&to, &e, 1);
	nv_env_init(&e, "rxe", &cfg);
	e.o.poll = true;
	e.o.poll_external = true;
	e.c = nvmeh_ctrl_create(&e.o);
	if (IS_ERR(e.c))
		fail_msg("nvmeh_ctrl_create: %ld", PTR_ERR(e.c));
	/* refusals: the admin queue, no such queue, no budget, no group */
	assert_int_equal(nvmeh_poll(e.c, 0, 32), -EINVAL);
	assert_int_equal(nvmeh_poll(e.c, 2, 32), -EINVAL);
	assert_int_equal(nvmeh_poll(e.c, 1, 0), -EINVAL);
	assert_int_equal(nvmeh_poll(NULL, 1, 32), -EINVAL);
	assert_int_equal(nvmet_target_poll_hook(e.t, 1, ot_pass, e.c), -EINVAL);
	assert_int_equal(nvmet_target_poll_hook(NULL, 0, ot_pass, e.c),
			 -EINVAL);
	/* nobody polls the host's queue: nvmeh_rw() does while it waits */
	rw_verify(&e, 1, 0, 4096, 7);
	rw_verify(&e, 1, 8, BIG, 8);
	nv_fill(w, 8 * 4096, 9);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 1024, 64, w), 0);

	/* hooked: the group's thread ends them all, not this one */
	assert_int_equal(nvmet_target_poll_hook(e.t, 0, ot_pass, e.c), 0);
	memset(buf, 0, 8 * 4096);
	for (i = 0; i < 8; i++)
		ot_submit(&e, &r[i], 1024 + 8 * i, buf + i * 4096);
	for (i = 0; i < 8; i++) {
		ot_wait(&e, &r[i], false);
		assert_false(pthread_equal(r[i].thr, pthread_self()));
		assert_true(pthread_equal(r[i].thr, r[0].thr));
	}
	assert_memory_equal(buf, w, 8 * 4096);

	/* unhooked: the response waits in the host's CQ for the caller */
	assert_int_equal(nvmet_target_poll_hook(e.t, 0, NULL, NULL), 0);
	memset(buf, 0, 4096);
	ot_submit(&e, &r[0], 1024 + 8, buf);
	assert_int_equal(__atomic_load_n(&r[0].done, __ATOMIC_ACQUIRE), 0);
	ot_wait(&e, &r[0], true);
	assert_true(pthread_equal(r[0].thr, pthread_self()));
	assert_memory_equal(buf, w + 4096, 4096);

	assert_int_equal(tstats(&e).errors, 0);
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	assert_int_equal(tstats(&e).poll_members, 0);
	assert_int_equal(tstats(&e).reqs_inflight, 0);
	nv_env_fini(&e);
	free(w);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_poll_io_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_siw, nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_siw_threaded,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_rxe_threaded,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_host_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_host_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_host_siw, nv_teardown),
		cmocka_unit_test_teardown(test_poll_io_host_siw_threaded,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_idle_sleeps, nv_teardown),
		cmocka_unit_test_teardown(test_poll_host_idle_sleeps,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_busy_never_sleeps,
					  nv_teardown),
		cmocka_unit_test(test_poll_bad_opts),
		cmocka_unit_test_teardown(test_poll_one_thread, nv_teardown),
		cmocka_unit_test_teardown(test_poll_reset_under_load,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_reset_under_load_host,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_target_qp_err_in_flight,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_target_stop_under_load,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_target_stop_under_load_host,
					  nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

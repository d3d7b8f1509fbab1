// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What ib_modify_qp() may race (include/rdmarw/ib_verbs.h, "Thread
 * safety"): a move to ERR from one thread while other threads post SENDs,
 * RDMA WRITEs and receives on the same QP and another polls (and arms) its
 * CQ, on the software device, profiles rxe, mlx5 and siw, inline and
 * threaded.  In half the rounds a further thread moves the QP RTS <-> SQD
 * and changes its access flags (RTS -> RTS) meanwhile, in the other half a
 * second thread moves it to ERR too: ERR must stay, both moves to ERR
 * succeed, the toggler fails only with -EINVAL once ERR is there.
 *
 * Each round, for every work request:
 * - the post is accepted (the software device refuses none for the race:
 *   a post that finds ERR, or meets it half-way, is flushed; a full Send
 *   Queue's -ENOMEM is retried, it is not an answer about the race);
 * - it completes exactly once, successfully or with IB_WC_WR_FLUSH_ERR;
 * - Send Queue completions come in posting order (per thread) and none
 *   succeeds after the first flushed one was polled; receives of the QP
 *   moved to ERR all flush (nothing is sent to it);
 * - the completions polled equal the work requests accepted, and after
 *   ib_drain_qp() nothing else comes;
 * - a successful WRITE's bytes are at its target, a successful SEND's bytes
 *   in a receive of the peer, which completed once per successful SEND.
 * Threads only count; the test asserts after joining them.  No timing is
 * asserted: a bound of a minute per round only keeps a bug from hanging the
 * suite.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SENDERS 2
#define OPS 96 /* per sender and round: WRITEs and SENDs, mixed */
#define RECVS 48 /* receives posted on the QP moved to ERR, per round */
#define TOTAL_OPS (SENDERS * OPS)
#define ATTEMPTS (TOTAL_OPS + RECVS)
#define SLOT 64 /* bytes per WRITE, SEND and receive */
#define ROUNDS 16
/* wr_id of receive i on the QP moved to ERR; of the peer's receive i */
#define RECV_ID(i) (0x10000ull + (i))
#define PEER_RECV_ID(i) (0x20000ull + (i))

struct race {
	struct soft_pair *p;
	u64 seed; /* per round */
	/* set by the posters (read after joining them) */
	u8 is_send[TOTAL_OPS];
	u8 accepted[TOTAL_OPS];
	u8 recv_accepted[RECVS];
	long refused; /* posts answered with another errno than -ENOMEM */
	int refused_err;
	int gave_up; /* a -ENOMEM that did not clear within the bound */
	/* shared, atomics */
	int done_attempts; /* posts answered (accepted or refused) */
	int accepted_n; /* WRs accepted */
	int polled_n; /* completions polled of qp[0] */
	int go; /* the threads start together */
	int stop_poll;
	int stop_toggle;
	/* set by the poller (read after joining it) */
	u8 seen[TOTAL_OPS];
	u8 recv_seen[RECVS];
	u8 ok[TOTAL_OPS];
	long bad_status;
	long bad_id;
	long out_of_order;
	long ok_after_flush;
	long recv_ok; /* a receive of qp[0] completing other than flushed */
	long notify_bad;
	int last_seq[SENDERS];
	/* set by the modifiers and the toggler */
	int modify_ret[2];
	long toggles;
	long toggle_bad;
	long toggle_refused_in_err;
	struct timespec deadline;
};

static int ld(const int *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

static void add(int *v, int n)
{
	__atomic_add_fetch(v, n, __ATOMIC_ACQ_REL);
}

static void wait_go(struct race *r)
{
	while (!ld(&r->go))
		sched_yield();
}

/* The bytes of WR @id in round @seed; a SEND's start with its id. */
static void fill(u8 *dst, int id, u64 seed)
{
	int i;

	for (i = 0; i < SLOT; i++)
		dst[i] = (u8)(id * 131 + (int)seed * 17 + i * 7 + 1);
	memcpy(dst, &id, sizeof(id));
}

static u8 *src_slot(struct race *r, int id)
{
	return r->p->buf[0] + (size_t)id * SLOT;
}

static u8 *dst_slot(struct race *r, int id)
{
	return r->p->buf[1] + (size_t)id * SLOT;
}

/* Receive buffers: after the WRITE/SEND slots on each side. */
static u8 *recv_slot(struct race *r, int side, int i)
{
	return r->p->buf[side] + (size_t)(TOTAL_OPS + i) * SLOT;
}

struct sender {
	struct race *r;
	int idx;
};

/* Post until accepted, refused or out of time; -ENOMEM (full) retries. */
static int post_one(struct race *r, int id)
{
	struct soft_pair *p = r->p;
	int ret;

	for (;;) {
		if (r->is_send[id])
			ret = soft_env_send(p->env.qp[0], (u64)id,
					    src_slot(r, id), SLOT,
					    p->mr[0]->lkey);
		else
			ret = soft_env_rdma(
				p->env.qp[0], IB_WR_RDMA_WRITE, (u64)id,
				src_slot(r, id), SLOT, p->mr[0]->lkey,
				(uintptr_t)dst_slot(r, id), p->mr[1]->rkey);
		if (ret != -ENOMEM)
			return ret;
		if (soft_env_past(&r->deadline))
			return -ETIMEDOUT;
		sched_yield();
	}
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	struct race *r = s->r;
	u64 rng = r->seed * 7919 + (u64)s->idx + 1;
	int seq;

	wait_go(r);
	for (seq = 0; seq < OPS; seq++) {
		int id = s->idx * OPS + seq, ret;

		r->is_send[id] = soft_env_rand(&rng) & 1;
		fill(src_slot(r, id), id, r->seed);
		ret = post_one(r, id);
		if (!ret) {
			r->accepted[id] = 1;
			add(&r->accepted_n, 1);
		} else if (ret == -ETIMEDOUT) {
			__atomic_store_n(&r->gave_up, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&r->refused, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&r->refused_err, ret,
					 __ATOMIC_RELAXED);
		}
		add(&r->done_attempts, 1);
		if (soft_env_rand(&rng) % 4 == 0)
			sched_yield();
	}
	return NULL;
}

static void *receiver_main(void *arg)
{
	struct race *r = arg;
	struct soft_pair *p = r->p;
	u64 rng = r->seed * 104729 + 3;
	int i;

	wait_go(r);
	for (i = 0; i < RECVS; i++) {
		struct ib_sge sge = { .addr = (uintptr_t)recv_slot(r, 0, i),
				      .length = SLOT,
				      .lkey = p->mr[0]->lkey };
		struct ib_recv_wr wr = { .wr_id = RECV_ID(i),
					 .sg_list = &sge,
					 .num_sge = 1 };
		int ret = ib_post_recv(p->env.qp[0], &wr, NULL);

		if (!ret) {
			r->recv_accepted[i] = 1;
			add(&r->accepted_n, 1);
		} else {
			__atomic_add_fetch(&r->refused, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&r->refused_err, ret,
					 __ATOMIC_RELAXED);
		}
		add(&r->done_attempts, 1);
		if (soft_env_rand(&rng) % 2 == 0)
			sched_yield();
	}
	return NULL;
}

/* One completion of qp[0]'s CQ, checked against what came before. */
static void note(struct race *r, const struct ib_wc *wc, bool *sq_flushed)
{
	u64 id = wc->wr_id;

	if (id >= RECV_ID(0) && id < RECV_ID(RECVS)) {
		r->recv_seen[id - RECV_ID(0)]++;
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			r->recv_ok++;
		return;
	}
	if (id >= TOTAL_OPS) {
		r->bad_id++;
		return;
	}
	r->seen[id]++;
	/* One thread's WRs complete in its posting order. */
	if ((int)id % OPS <= r->last_seq[id / OPS])
		r->out_of_order++;
	r->last_seq[id / OPS] = (int)id % OPS;
	if (wc->status == IB_WC_SUCCESS) {
		r->ok[id] = 1;
		if (*sq_flushed)
			r->ok_after_flush++;
	} else if (wc->status == IB_WC_WR_FLUSH_ERR) {
		*sq_flushed = true;
	} else {
		r->bad_status++;
	}
}

static void *poller_main(void *arg)
{
	struct race *r = arg;
	struct ib_cq *cq = r->p->env.cq[0];
	bool sq_flushed = false;
	struct ib_wc wc[8];
	int n, i;

	for (i = 0; i < SENDERS; i++)
		r->last_seq[i] = -1;
	while (!ld(&r->stop_poll)) {
		n = ib_poll_cq(cq, 8, wc);
		if (n < 0) {
			r->bad_status++;
			break;
		}
		for (i = 0; i < n; i++)
			note(r, &wc[i], &sq_flushed);
		if (n) {
			add(&r->polled_n, n);
			continue;
		}
		/* Arm it now and then, as a ULP between two polls. */
		if (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS) <
		    0)
			r->notify_bad++;
		sched_yield();
	}
	return NULL;
}

struct modifier {
	struct race *r;
	int idx;
};

static void *modifier_main(void *arg)
{
	struct modifier *m = arg;
	struct race *r = m->r;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	u64 rng = r->seed * 15485863 + 5 + (u64)m->idx;
	/* Mostly while the posters run; now and then before or after. */
	int at = (int)(soft_env_rand(&rng) % (ATTEMPTS * 5 / 4 + 1)) -
		 ATTEMPTS / 8;
	int spins = (int)(soft_env_rand(&rng) % 2000);

	if (at > ATTEMPTS) /* after the last post */
		at = ATTEMPTS;

	wait_go(r);
	while (ld(&r->done_attempts) < at && !soft_env_past(&r->deadline))
		sched_yield();
	while (spins--) /* a little further, without leaving the CPU */
		(void)ld(&r->done_attempts);
	r->modify_ret[m->idx] =
		ib_modify_qp(r->p->env.qp[0], &attr, IB_QP_STATE);
	return NULL;
}

/* RTS -> SQD -> RTS ... until ERR has come (or the round ends). */
static void *toggler_main(void *arg)
{
	struct race *r = arg;
	struct ib_qp *qp = r->p->env.qp[0];
	struct ib_qp_attr attr = { 0 };
	int i = 0;

	wait_go(r);
	while (!ld(&r->stop_toggle)) {
		enum ib_qp_state s = soft_env_state(qp);
		int mask = IB_QP_STATE, ret;

		if (s == IB_QPS_ERR)
			break;
		attr.qp_state = s == IB_QPS_RTS ? IB_QPS_SQD : IB_QPS_RTS;
		/* Every third turn in RTS: an attribute change, RTS -> RTS. */
		if (s == IB_QPS_RTS && ++i % 3 == 0) {
			attr.qp_state = IB_QPS_RTS;
			attr.qp_access_flags = SOFT_PAIR_ACCESS;
			mask |= IB_QP_ACCESS_FLAGS;
		}
		ret = ib_modify_qp(qp, &attr, mask);
		if (!ret)
			r->toggles++;
		else if (ret == -EINVAL && soft_env_state(qp) == IB_QPS_ERR)
			r->toggle_refused_in_err++;
		else
			r->toggle_bad++;
		sched_yield();
	}
	return NULL;
}

static void post_peer_recvs(struct race *r)
{
	struct soft_pair *p = r->p;
	int i;

	for (i = 0; i < TOTAL_OPS; i++)
		soft_env_post_recv(p->env.qp[1], PEER_RECV_ID(i),
				   recv_slot(r, 1, i), SLOT, p->mr[1]->lkey);
}

/* The peer's receives: one success per successful SEND, its bytes. */
static void check_peer(struct race *r)
{
	struct ib_cq *cq = r->p->env.cq[1];
	u8 got[TOTAL_OPS] = { 0 }, want[SLOT];
	int sends_ok = 0, recvs_ok = 0, i, n;
	struct ib_wc wc;

	for (i = 0; i < TOTAL_OPS; i++)
		sends_ok += r->is_send[i] && r->ok[i];
	while ((n = ib_poll_cq(cq, 1, &wc)) > 0) {
		u64 k = wc.wr_id - PEER_RECV_ID(0);
		int id;

		assert_true(k < TOTAL_OPS);
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		assert_int_equal(wc.byte_len, SLOT);
		memcpy(&id, recv_slot(r, 1, (int)k), sizeof(id));
		assert_true(id >= 0 && id < TOTAL_OPS);
		assert_true(r->is_send[id] && r->ok[id]);
		assert_int_equal(got[id]++, 0);
		fill(want, id, r->seed);
		assert_memory_equal(recv_slot(r, 1, (int)k), want, SLOT);
		recvs_ok++;
	}
	assert_int_equal(n, 0);
	assert_int_equal(recvs_ok, sends_ok);
}

static void check_round(struct race *r)
{
	u8 want[SLOT];
	int i;

	assert_int_equal(r->modify_ret[0], 0);
	assert_int_equal(r->modify_ret[1], 0);
	assert_int_equal(r->gave_up, 0);
	/* The software device takes every post that races the move. */
	if (r->refused)
		fail_msg("%ld posts refused (last %d)", r->refused,
			 r->refused_err);
	assert_int_equal(ld(&r->polled_n), ld(&r->accepted_n));
	assert_int_equal(ld(&r->accepted_n), ATTEMPTS);
	assert_int_equal(r->bad_id, 0);
	assert_int_equal(r->bad_status, 0);
	assert_int_equal(r->notify_bad, 0);
	assert_int_equal(r->out_of_order, 0);
	assert_int_equal(r->ok_after_flush, 0);
	assert_int_equal(r->recv_ok, 0);
	assert_int_equal(r->toggle_bad, 0);
	for (i = 0; i < TOTAL_OPS; i++)
		if (r->seen[i] != r->accepted[i])
			fail_msg("WR %d accepted %d, completed %d times", i,
				 r->accepted[i], r->seen[i]);
	for (i = 0; i < RECVS; i++)
		if (r->recv_seen[i] != r->recv_accepted[i])
			fail_msg("receive %d accepted %d, completed %d times",
				 i, r->recv_accepted[i], r->recv_seen[i]);
	for (i = 0; i < TOTAL_OPS; i++) {
		if (r->is_send[i] || !r->ok[i])
			continue;
		fill(want, i, r->seed);
		assert_memory_equal(dst_slot(r, i), want, SLOT);
	}
	check_peer(r);
}

/* Nothing more on @cq; else say what came. */
static void expect_none(struct ib_cq *cq)
{
	struct ib_wc wc;

	if (ib_poll_cq(cq, 1, &wc) > 0)
		fail_msg("late completion: wr_id %#llx, %s",
			 (unsigned long long)wc.wr_id,
			 ib_wc_status_msg(wc.status));
}

static void race_round(struct soft_pair *p, u64 seed, bool toggle)
{
	struct race *r = calloc(1, sizeof(*r));
	struct sender s[SENDERS];
	struct modifier m[2];
	pthread_t ts[SENDERS], trecv, tpoll, tmod[2], ttog;
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	int i;

	assert_non_null(r);
	r->p = p;
	r->seed = seed;
	clock_gettime(CLOCK_MONOTONIC, &r->deadline);
	r->deadline.tv_sec += 60;
	memset(p->buf[1], 0, p->len);
	post_peer_recvs(r);
	assert_int_equal(pthread_create(&tpoll, NULL, poller_main, r), 0);
	/* One other ib_modify_qp() beside the move to ERR: the toggler's,
	 * or a second move to ERR. */
	for (i = 0; i < (toggle ? 1 : 2); i++) {
		m[i] = (struct modifier){ .r = r, .idx = i };
		assert_int_equal(
			pthread_create(&tmod[i], NULL, modifier_main, &m[i]),
			0);
	}
	if (toggle)
		assert_int_equal(pthread_create(&ttog, NULL, toggler_main, r),
				 0);
	assert_int_equal(pthread_create(&trecv, NULL, receiver_main, r), 0);
	for (i = 0; i < SENDERS; i++) {
		s[i] = (struct sender){ .r = r, .idx = i };
		assert_int_equal(
			pthread_create(&ts[i], NULL, sender_main, &s[i]), 0);
	}
	__atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < SENDERS; i++)
		assert_int_equal(pthread_join(ts[i], NULL), 0);
	assert_int_equal(pthread_join(trecv, NULL), 0);
	for (i = 0; i < (toggle ? 1 : 2); i++)
		assert_int_equal(pthread_join(tmod[i], NULL), 0);
	/* Every accepted WR completes: the poller takes them all. */
	while (ld(&r->polled_n) < ld(&r->accepted_n) &&
	       !soft_env_past(&r->deadline))
		sched_yield();
	__atomic_store_n(&r->stop_poll, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->stop_toggle, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(tpoll, NULL), 0);
	if (toggle)
		assert_int_equal(pthread_join(ttog, NULL), 0);
	assert_int_equal(soft_env_state(p->env.qp[0]), IB_QPS_ERR);
	/* Nothing late, and a drain of the ERR QP finds nothing else. */
	expect_none(p->env.cq[0]);
	assert_int_equal(ib_drain_qp(p->env.qp[0]), 0);
	expect_none(p->env.cq[0]);
	check_round(r);
	free(r);
	assert_int_equal(ib_modify_qp(p->env.qp[0], &reset, IB_QP_STATE), 0);
	assert_int_equal(ib_modify_qp(p->env.qp[1], &reset, IB_QP_STATE), 0);
	assert_int_equal(soft_qp_connect(p->env.qp[0], p->env.qp[1]), 0);
}

static void race_case(const char *profile, bool threaded)
{
	struct soft_env_cfg cfg = {
		.profile = profile,
		.threaded = threaded,
		.cap = { .max_send_wr = 32,
			 .max_recv_wr = TOTAL_OPS,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct soft_pair p;
	u64 seed = 0x51ed270b27a3d6cbull ^ (u64)profile[0] ^ threaded;
	int round;

	soft_pair_init(&p, &cfg, (size_t)(2 * TOTAL_OPS) * SLOT, -1);
	for (round = 0; round < ROUNDS; round++)
		race_round(&p, soft_env_rand(&seed) >> 8, round & 1);
	soft_pair_fini(&p);
}

static void test_rxe(void **state)
{
	(void)state;
	race_case("rxe", false);
}

static void test_rxe_threaded(void **state)
{
	(void)state;
	race_case("rxe", true);
}

static void test_mlx5(void **state)
{
	(void)state;
	race_case("mlx5", false);
}

static void test_mlx5_threaded(void **state)
{
	(void)state;
	race_case("mlx5", true);
}

static void test_siw(void **state)
{
	(void)state;
	race_case("siw", false);
}

static void test_siw_threaded(void **state)
{
	(void)state;
	race_case("siw", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rxe),
		cmocka_unit_test(test_rxe_threaded),
		cmocka_unit_test(test_mlx5),
		cmocka_unit_test(test_mlx5_threaded),
		cmocka_unit_test(test_siw),
		cmocka_unit_test(test_siw_threaded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

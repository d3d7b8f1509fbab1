// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drains are bounded and say why they failed (software device, rxe).
 * - A CQ that overflowed dropped the Send Queue marker's flush: at
 *   94c91f9 ib_drain_qp() waited forever; now -ETIMEDOUT after the bound
 *   (ib_drain_sq() likewise), the QP is destroyed and nothing leaks.
 * - A Send Queue full of requests that the move to ERR flushes: at
 *   94c91f9 the marker's post failed with -ENOMEM; now the flushed slots
 *   are polled free and the drain succeeds.
 * - A Send Queue full of executed unsignaled requests never frees:
 *   -ENOMEM after the bound, as documented.
 * - A marker given up (bound 0) whose completion comes later is freed by
 *   that completion (ASan: no use after free, no leak).
 * - ib_drain_rq() waits for every receive.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct counter {
	struct ib_cqe cqe;
	int n;
	int flushed;
};

static void count_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct counter *c = container_of(wc->wr_cqe, struct counter, cqe);

	c->n++;
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		c->flushed++;
}

static int write_wr(struct soft_pair *p, struct counter *c, bool signaled)
{
	struct ib_sge sge = {
		.addr = (u64)(uintptr_t)p->buf[0],
		.length = 64,
		.lkey = p->mr[0]->lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_cqe = &c->cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = signaled ? IB_SEND_SIGNALED : 0 },
		.remote_addr = (u64)(uintptr_t)p->buf[1],
		.rkey = p->mr[1]->rkey,
	};

	return ib_post_send(p->env.qp[0], &wr.wr, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CQ of 4 entries, 6 signaled WRITEs not polled: the 5th overflows (QP to
 * ERR), the 6th's flush and the drain marker's flush are dropped. */
static void overflow(struct soft_pair *p, struct counter *c)
{
	struct soft_stats st;
	int i;

	soft_pair_init(p, &(struct soft_env_cfg){ .cqe = 4 }, 4096, 1);
	for (i = 0; i < 6; i++)
		assert_int_equal(write_wr(p, c, true), 0);
	assert_int_equal(soft_device_stats(p->env.dev[0], &st), 0);
	assert_true(st.cq_overflows >= 1);
	assert_int_equal(soft_env_state(p->env.qp[0]), IB_QPS_ERR);
}

static void test_drain_lost_marker(void **state)
{
	struct counter c = { .cqe.done = count_done };
	struct soft_pair p;
	double t0;

	rdmarw_set_drain_timeout(200);
	overflow(&p, &c);
	t0 = now();
	assert_int_equal(ib_drain_qp(p.env.qp[0]), -ETIMEDOUT);
	assert_true(now() - t0 < 5.0);
	/* The four completions the CQ held were delivered on the way. */
	assert_int_equal(c.n, 4);
	soft_pair_fini(&p); /* the given-up marker goes with the QP */

	c.n = 0;
	overflow(&p, &c);
	assert_int_equal(ib_drain_sq(p.env.qp[0]), -ETIMEDOUT);
	/* The Receive Queue's marker has room now: it completes. */
	assert_int_equal(ib_drain_rq(p.env.qp[0]), 0);
	soft_pair_fini(&p);
	rdmarw_set_drain_timeout(10000);
}

/* Four WRITEs stalled in a Send Queue of four: the move to ERR flushes
 * them, polling frees their slots, the marker goes in. */
static void test_drain_full_sq_flushes(void **state)
{
	struct soft_fault_rule stall = { .type = SOFT_FAULT_STALL, .nth = 1 };
	struct counter c = { .cqe.done = count_done };
	struct soft_pair p;
	int i;

	soft_pair_init(&p, &(struct soft_env_cfg){ .cap.max_send_wr = 4 }, 4096,
		       1);
	assert_int_equal(p.env.qp[0]->cap.max_send_wr, 4);
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &stall), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(write_wr(&p, &c, true), 0);
	assert_int_equal(write_wr(&p, &c, true), -ENOMEM);
	assert_int_equal(ib_drain_qp(p.env.qp[0]), 0);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.flushed, 4);
	soft_pair_fini(&p);
}

/* Four executed unsignaled WRITEs hold all four slots: nothing can free
 * them, the drain reports -ENOMEM after the bound. */
static void test_drain_full_sq_stuck(void **state)
{
	struct counter c = { .cqe.done = count_done };
	struct soft_pair p;
	double t0;
	int i;

	rdmarw_set_drain_timeout(100);
	soft_pair_init(&p, &(struct soft_env_cfg){ .cap.max_send_wr = 4 }, 4096,
		       1);
	for (i = 0; i < 4; i++)
		assert_int_equal(write_wr(&p, &c, false), 0);
	assert_int_equal(write_wr(&p, &c, false), -ENOMEM);
	t0 = now();
	assert_int_equal(ib_drain_sq(p.env.qp[0]), -ENOMEM);
	assert_true(now() - t0 >= 0.09);
	assert_int_equal(ib_drain_rq(p.env.qp[0]), 0);
	soft_pair_fini(&p);
	rdmarw_set_drain_timeout(10000);
}

/* Bound 0: the marker's flush is in the CQ but not processed yet, so the
 * drain gives up; processing the CQ afterwards frees the marker. */
static void test_drain_late_completion(void **state)
{
	struct soft_pair p;

	soft_pair_init(&p, NULL, 4096, 1);
	rdmarw_set_drain_timeout(0);
	assert_int_equal(rdmarw_get_drain_timeout(), 0);
	assert_int_equal(ib_drain_sq(p.env.qp[0]), -ETIMEDOUT);
	assert_int_equal(ib_drain_rq(p.env.qp[0]), -ETIMEDOUT);
	assert_int_equal(ib_process_cq_direct(p.env.cq[0], -1), 2);
	/* A given-up marker whose completion never comes: freed with the QP
	 * (LeakSanitizer would report it otherwise). */
	assert_int_equal(ib_drain_sq(p.env.qp[0]), -ETIMEDOUT);
	rdmarw_set_drain_timeout(10000);
	soft_pair_fini(&p);
}

/* Every receive posted before the marker completes before the drain
 * returns; NULL is refused. */
static void test_drain_rq(void **state)
{
	struct counter c = { .cqe.done = count_done };
	struct ib_sge sge;
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct soft_pair p;
	int i;

	soft_pair_init(&p, NULL, 4096, 1);
	sge.addr = (u64)(uintptr_t)p.buf[1];
	sge.length = 64;
	sge.lkey = p.mr[1]->lkey;
	wr.wr_cqe = &c.cqe;
	for (i = 0; i < 5; i++)
		assert_int_equal(ib_post_recv(p.env.qp[1], &wr, NULL), 0);
	assert_int_equal(ib_drain_rq(p.env.qp[1]), 0);
	assert_int_equal(c.n, 5);
	assert_int_equal(c.flushed, 5);
	assert_int_equal(ib_drain_sq(NULL), -EINVAL);
	assert_int_equal(ib_drain_rq(NULL), -EINVAL);
	assert_int_equal(ib_drain_qp(NULL), -EINVAL);
	soft_pair_fini(&p);
}

/*
 * A done() run by the CQ's own thread may not wait for that CQ nor free it:
 * ib_drain_qp() would wait for a completion only this thread delivers (it
 * timed out after the drain bound), ib_free_cq() would join the thread from
 * itself.  Both refuse with -EDEADLK and one warning; the QP and CQ are
 * then torn down from outside as usual.
 */
struct self_wait {
	struct ib_cqe cqe;
	struct ib_qp *qp;
	int drain_ret;
	int destroy_ret;
	int free_ret;
	int done;
};

static void wait_in_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct self_wait *s = container_of(wc->wr_cqe, struct self_wait, cqe);

	if (s->done)
		return; /* the flushed marker's completion, if any */
	s->drain_ret = ib_drain_qp(s->qp);
	s->destroy_ret = ib_destroy_qp(s->qp);
	s->free_ret = ib_free_cq(cq);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

#define CAP                                                            \
	{                                                              \
		.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, \
		.max_recv_sge = 1                                      \
	}

static void test_self_wait_refused(void **state)
{
	struct soft_profile prof;
	struct two_hosts h = { 0 };
	struct self_wait s = { .cqe.done = wait_in_done };
	static u8 buf[2][64];
	struct ib_mr *mr[2];
	struct ib_sge sge;
	struct ib_rdma_wr wr;
	double start;
	int i;

	(void)state;
	assert_int_equal(soft_profile_get("rxe", &prof), 0);
	assert_int_equal(two_hosts_open(&h,
					&(struct two_hosts_cfg){
						.profile = &prof,
						.cq_thread = { true, false },
						.attr = { { .cap = CAP },
							  { .cap = CAP } } }),
			 0);
	for (i = 0; i < 2; i++) {
		mr[i] = ib_reg_user_mr(h.pd[i], (u64)(uintptr_t)buf[i], 64,
				       (u64)(uintptr_t)buf[i],
				       SOFT_PAIR_ACCESS);
		assert_false(IS_ERR(mr[i]));
	}
	s.qp = h.qp[0];
	sge = (struct ib_sge){ .addr = (u64)(uintptr_t)buf[0],
			       .length = 64,
			       .lkey = mr[0]->lkey };
	wr = (struct ib_rdma_wr){
		.wr = { .wr_cqe = &s.cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (u64)(uintptr_t)buf[1],
		.rkey = mr[1]->rkey,
	};
	assert_int_equal(ib_post_send(h.qp[0], &wr.wr, NULL), 0);
	start = now();
	while (!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE))
		assert_true(now() - start < 30.0); /* hang guard only */
	assert_int_equal(s.drain_ret, -EDEADLK);
	assert_int_equal(s.destroy_ret, 0);
	assert_int_equal(s.free_ret, -EDEADLK);
	h.qp[0] = NULL; /* destroyed in the done() */
	for (i = 0; i < 2; i++)
		assert_int_equal(ib_dereg_mr(mr[i]), 0);
	assert_int_equal(two_hosts_close(&h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_full_sq_flushes),
		cmocka_unit_test(test_drain_full_sq_stuck),
		cmocka_unit_test(test_drain_late_completion),
		cmocka_unit_test(test_drain_rq),
		cmocka_unit_test(test_drain_lost_marker),
		cmocka_unit_test(test_self_wait_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion dispatch: ib_process_cq_direct() batching (8 per poll) and
 * budget with one done() call per completion, the CQ thread of the
 * IB_POLL_WORKQUEUE family delivering every completion, and ib_drain_qp().
 * Completions are injected into the fake provider's CQ.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "helpers/fake_provider.h"

struct env {
	struct fake_dev *fd;
	struct ib_cq *cq;
};

static int setup(void **state)
{
	static struct env env;

	env.fd = fake_dev_new("cq%d", RDMA_PROTOCOL_ROCE);
	if (!env.fd)
		return -1;
	env.cq = ib_alloc_cq(&env.fd->ibdev, NULL, 256, 0, IB_POLL_DIRECT);
	if (IS_ERR(env.cq))
		return -1;
	*state = &env;
	return 0;
}

static int teardown(void **state)
{
	struct env *env = *state;

	assert_int_equal(ib_free_cq(env->cq), 0);
	assert_int_equal(env->fd->live_cqs, 0);
	return fake_dev_free(env->fd);
}

/* ---- a request that records its completions ------------------------------ */

#define MAX_REQ 64

struct req {
	struct ib_cqe cqe;
	int id;
};

static struct req reqs[MAX_REQ];
static int order[4 * MAX_REQ];
static int nr_done;
static struct ib_cq *reenter_cq; /* done() of request 0 polls this again */

static void req_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct req *r = container_of(wc->wr_cqe, struct req, cqe);

	assert_true(nr_done < 4 * MAX_REQ);
	order[nr_done++] = r->id;
	if (r->id == 0 && reenter_cq)
		ib_process_cq_direct(reenter_cq, -1);
}

static void reset_reqs(void)
{
	int i;

	for (i = 0; i < MAX_REQ; i++)
		reqs[i] = (struct req){ .cqe.done = req_done, .id = i };
	nr_done = 0;
	reenter_cq = NULL;
}

static void push(struct ib_cq *cq, int first, int n)
{
	int i;

	for (i = first; i < first + n; i++) {
		struct ib_wc wc = { .wr_cqe = &reqs[i].cqe,
				    .status = IB_WC_SUCCESS };

		assert_int_equal(fake_cq_push(cq, &wc), 0);
	}
}

static void check_polls(struct ib_cq *cq, const int *want, int n)
{
	struct fake_cq *fcq = to_fake_cq(cq);
	int i;

	assert_int_equal(fcq->polls, n);
	for (i = 0; i < n; i++)
		assert_int_equal(fcq->poll_log[i], want[i]);
	fcq->polls = 0;
}

static void check_order(int first, int n)
{
	int i;

	assert_int_equal(nr_done, n);
	for (i = 0; i < n; i++)
		assert_int_equal(order[i], first + i);
	nr_done = 0;
}

/* ---- direct processing ---------------------------------------------------- */

static void direct_polls_in_batches_of_eight(void **state)
{
	struct env *env = *state;
	const int polls[] = { 8, 8, 8 };

	reset_reqs();
	push(env->cq, 0, 20);
	assert_int_equal(ib_process_cq_direct(env->cq, -1), 20);
	check_polls(env->cq, polls, 3); /* the third poll finds 4 and stops */
	check_order(0, 20);
	assert_int_equal(fake_cq_count(env->cq), 0);
	/* Nothing left: one empty poll. */
	assert_int_equal(ib_process_cq_direct(env->cq, -1), 0);
	assert_int_equal(to_fake_cq(env->cq)->polls, 1);
	to_fake_cq(env->cq)->polls = 0;
}

static void direct_respects_the_budget(void **state)
{
	struct env *env = *state;
	const int polls_10[] = { 8, 2 };
	const int polls_16[] = { 8, 8 };

	reset_reqs();
	push(env->cq, 0, 20);
	assert_int_equal(ib_process_cq_direct(env->cq, 10), 10);
	check_polls(env->cq, polls_10, 2);
	check_order(0, 10);
	assert_int_equal(fake_cq_count(env->cq), 10);
	assert_int_equal(ib_process_cq_direct(env->cq, 16), 10);
	check_polls(env->cq, polls_16, 2);
	check_order(10, 10);

	/* A budget met exactly: no further poll. */
	push(env->cq, 20, 16);
	assert_int_equal(ib_process_cq_direct(env->cq, 16), 16);
	check_polls(env->cq, polls_16, 2);
	check_order(20, 16);

	/* Budget 0 polls nothing. */
	push(env->cq, 40, 1);
	assert_int_equal(ib_process_cq_direct(env->cq, 0), 0);
	assert_int_equal(to_fake_cq(env->cq)->polls, 0);
	assert_int_equal(ib_process_cq_direct(env->cq, 1), 1);
	check_order(40, 1);
	to_fake_cq(env->cq)->polls = 0;
}

static void direct_without_cqe_consumes_silently(void **state)
{
	struct env *env = *state;
	struct ib_wc wc = { .wr_id = 0, .status = IB_WC_WR_FLUSH_ERR };

	reset_reqs();
	push(env->cq, 0, 1);
	assert_int_equal(fake_cq_push(env->cq, &wc), 0);
	push(env->cq, 1, 1);
	assert_int_equal(ib_process_cq_direct(env->cq, -1), 3);
	check_order(0, 2);
	assert_int_equal(fake_cq_count(env->cq), 0);
}

/* The batch lives on the stack: done() may process the same CQ again. */
static void direct_is_reentrant(void **state)
{
	struct env *env = *state;
	int i;

	reset_reqs();
	push(env->cq, 0, 30);
	reenter_cq = env->cq;
	/* The outer call handles the first batch of 8; request 0's done()
	 * drains the other 22 from inside; the outer call then finds the
	 * CQ empty. */
	assert_int_equal(ib_process_cq_direct(env->cq, -1), 8);
	assert_int_equal(nr_done, 30);
	/* Each request exactly once: 0, then 8..29 (inner), then 1..7. */
	assert_int_equal(order[0], 0);
	for (i = 0; i < 22; i++)
		assert_int_equal(order[1 + i], 8 + i);
	for (i = 0; i < 7; i++)
		assert_int_equal(order[23 + i], 1 + i);
	reenter_cq = NULL;
	to_fake_cq(env->cq)->polls = 0;
}

static void direct_argument_errors(void **state)
{
	struct env *env = *state;
	struct ib_wc wc[2];
	struct ib_cq *tcq;

	assert_int_equal(ib_process_cq_direct(NULL, 1), -EINVAL);
	tcq = ib_alloc_cq(&env->fd->ibdev, NULL, 8, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(tcq));
	assert_int_equal(ib_process_cq_direct(tcq, 1), -EINVAL);
	assert_int_equal(ib_free_cq(tcq), 0);

	assert_int_equal(ib_poll_cq(NULL, 1, wc), -EINVAL);
	assert_int_equal(ib_poll_cq(env->cq, 1, NULL), -EINVAL);
	assert_int_equal(ib_poll_cq(env->cq, -1, wc), -EINVAL);
	assert_int_equal(ib_poll_cq(env->cq, 0, wc), 0);
	assert_int_equal(to_fake_cq(env->cq)->polls, 0);
	assert_int_equal(ib_req_notify_cq(NULL, IB_CQ_NEXT_COMP), -EINVAL);
}

static void poll_and_notify_reach_the_provider(void **state)
{
	struct env *env = *state;
	struct ib_wc wc[4];

	reset_reqs();
	push(env->cq, 5, 3);
	assert_int_equal(ib_req_notify_cq(env->cq, IB_CQ_NEXT_COMP), 0);
	assert_int_equal(
		ib_req_notify_cq(env->cq,
				 IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS),
		1);
	assert_int_equal(ib_poll_cq(env->cq, 2, wc), 2);
	assert_ptr_equal(wc[0].wr_cqe, &reqs[5].cqe);
	assert_ptr_equal(wc[1].wr_cqe, &reqs[6].cqe);
	assert_int_equal(ib_poll_cq(env->cq, 4, wc), 1);
	assert_ptr_equal(wc[0].wr_cqe, &reqs[7].cqe);
	assert_int_equal(
		ib_req_notify_cq(env->cq,
				 IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS),
		0);
	assert_int_equal(nr_done, 0); /* polling calls no done() */
	to_fake_cq(env->cq)->polls = 0;
}

/* ---- the CQ thread -------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int thread_done;
static int thread_order[3 * MAX_REQ];
static bool on_main_thread;
static pthread_t main_thread;

static void thread_req_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct req *r = container_of(wc->wr_cqe, struct req, cqe);

	pthread_mutex_lock(&lock);
	if (pthread_equal(pthread_self(), main_thread))
		on_main_thread = true;
	thread_order[thread_done++] = r->id;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void wait_for(int n)
{
	pthread_mutex_lock(&lock);
	while (thread_done < n)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void thread_delivers_every_completion(void **state)
{
	static const enum ib_poll_context ctxs[] = {
		IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_UNBOUND_WORKQUEUE
	};
	struct env *env = *state;
	size_t c;
	int i;

	main_thread = pthread_self();
	for (c = 0; c < sizeof(ctxs) / sizeof(ctxs[0]); c++) {
		struct ib_cq *cq =
			ib_alloc_cq(&env->fd->ibdev, env, 256, 0, ctxs[c]);

		assert_false(IS_ERR(cq));
		assert_ptr_equal(cq->cq_context, env);
		reset_reqs();
		for (i = 0; i < MAX_REQ; i++)
			reqs[i].cqe.done = thread_req_done;
		thread_done = 0;
		on_main_thread = false;

		/* One at a time, each waited for. */
		for (i = 0; i < 10; i++) {
			push(cq, i, 1);
			wait_for(i + 1);
		}
		/* A burst of more than one batch. */
		push(cq, 10, 40);
		wait_for(50);
		/* Pushed right before ib_free_cq(): still delivered. */
		push(cq, 50, 14);
		assert_int_equal(ib_free_cq(cq), 0);
		assert_int_equal(thread_done, 64);
		for (i = 0; i < 64; i++)
			assert_int_equal(thread_order[i], i);
		assert_false(on_main_thread);
	}
	assert_int_equal(env->fd->live_cqs, 1);
}

/* ---- drain ---------------------------------------------------------------- */

static int flushed_recvs;

/* May run on the CQ's thread: count, do not assert here. */
static void recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR && wc->opcode == IB_WC_RECV)
		__atomic_add_fetch(&flushed_recvs, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&flushed_recvs, 1000, __ATOMIC_RELAXED);
}

static void drain_on(struct env *env, struct ib_cq *cq)
{
	struct ib_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 8,
			 .max_recv_wr = 8,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};
	struct ib_cqe rcqe = { .done = recv_done };
	struct ib_recv_wr rwr[3] = {
		{ .next = &rwr[1], .wr_cqe = &rcqe },
		{ .next = &rwr[2], .wr_cqe = &rcqe },
		{ .wr_cqe = &rcqe },
	};
	struct ib_pd *pd = ib_alloc_pd(&env->fd->ibdev, 0);
	struct ib_qp *qp;

	assert_false(IS_ERR(pd));
	qp = ib_create_qp(pd, &a);
	assert_false(IS_ERR(qp));
	qp->state = IB_QPS_RTS;
	flushed_recvs = 0;
	assert_int_equal(ib_post_recv(qp, rwr, NULL), 0);
	assert_int_equal(ib_drain_qp(qp), 0);
	assert_int_equal(qp->state, IB_QPS_ERR);
	/* Every receive came back flushed before the drain returned. */
	assert_int_equal(__atomic_load_n(&flushed_recvs, __ATOMIC_RELAXED), 3);
	assert_int_equal(ib_destroy_qp(qp), 0);
	assert_int_equal(ib_dealloc_pd(pd), 0);
}

static void drain_qp(void **state)
{
	struct env *env = *state;
	struct ib_cq *tcq;

	drain_on(env, env->cq);
	assert_int_equal(fake_cq_count(env->cq), 0);
	tcq = ib_alloc_cq(&env->fd->ibdev, NULL, 64, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(tcq));
	drain_on(env, tcq);
	assert_int_equal(ib_free_cq(tcq), 0);
	assert_int_equal(ib_drain_qp(NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			direct_polls_in_batches_of_eight, setup, teardown),
		cmocka_unit_test_setup_teardown(direct_respects_the_budget,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			direct_without_cqe_consumes_silently, setup, teardown),
		cmocka_unit_test_setup_teardown(direct_is_reentrant, setup,
						teardown),
		cmocka_unit_test_setup_teardown(direct_argument_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			poll_and_notify_reach_the_provider, setup, teardown),
		cmocka_unit_test_setup_teardown(
			thread_delivers_every_completion, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_qp, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

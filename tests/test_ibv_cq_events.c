// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A CQ's completion events taken over by the caller on the libibverbs
 * backend (rdmarw_cq_events_take(), the poll groups of rdmarw-nvmet): the
 * caller arms the CQ and sleeps in poll() on the descriptors it was given;
 * a RECV completion wakes it, and so does a flushed completion the backend
 * makes itself (a post on a QP in ERR, src/ibv/ibv_flush.c); the CQ's
 * comp_handler is not called while the events are taken and is again once
 * they are given back; bad input gets its errno; a CQ is freed with an
 * event left unconsumed and with its events still taken.  Runs on rxe0 and
 * siw0 in the lab (LAB_RXE_ADDR / LAB_SIW_ADDR, tests/lab/lab.sh) and skips
 * when a device is absent, as on a machine without RDMA.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/ib_verbs.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers/ibv_env.h"

#ifdef RDMARW_HAVE_IBV

/* The bound of every wait (never reached when the test passes). */
#define WAIT_MS 30000
#define SLOT 64

/* comp_handler calls of the receiving CQ (on its event thread). */
static int handler_calls;

static void count_handler(struct ib_cq *cq, void *ctx)
{
	(void)cq;
	(void)ctx;
	__atomic_add_fetch(&handler_calls, 1, __ATOMIC_RELAXED);
}

static int handler_seen(void)
{
	return __atomic_load_n(&handler_calls, __ATOMIC_RELAXED);
}

struct env {
	struct ibv_ends ends;
	struct ibv_pair pair;
	char *buf;
};

/* The pair over DIRECT CQs; the passive side's CQ counts its handler. */
static struct env *env_up(void)
{
	struct ib_qp_init_attr a = {
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	struct ib_qp_init_attr pa;
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	if (!ibv_ends_open(&e->ends, 64, IB_POLL_DIRECT)) {
		free(e);
		return NULL;
	}
	e->buf = calloc(4, SLOT);
	assert_non_null(e->buf);
	a.send_cq = a.recv_cq = e->ends.cq;
	pa = a;
	pa.send_cq = pa.recv_cq = e->ends.peer_cq;
	assert_int_equal(ibv_pair_connect(&e->pair, ibv_lab_addr, e->ends.pd,
					  &a, e->ends.peer_pd, &pa, NULL, 0),
			 0);
	handler_calls = 0;
	e->ends.peer_cq->comp_handler = count_handler;
	return e;
}

static void env_down(struct env *e)
{
	assert_int_equal(ibv_pair_destroy(&e->pair), 0);
	ibv_ends_close(&e->ends);
	free(e->buf);
	free(e);
}

static struct ib_sge sge_of(struct env *e, int slot)
{
	return (struct ib_sge){ .addr = (uintptr_t)(e->buf + slot * SLOT),
				.length = SLOT,
				.lkey = RDMARW_IBV_LOCAL_DMA_LKEY };
}

static void post_recv(struct env *e, struct ib_qp *qp, u64 id)
{
	struct ib_sge sge = sge_of(e, 1);
	struct ib_recv_wr rwr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };

	assert_int_equal(ib_post_recv(qp, &rwr, NULL), 0);
}

static void post_send(struct env *e, u64 id)
{
	struct ib_sge sge = sge_of(e, 0);
	struct ib_send_wr swr = { .wr_id = id,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };

	assert_int_equal(ib_post_send(e->pair.qp, &swr, NULL), 0);
}

static void poll_one(struct ib_cq *cq, struct ib_wc *wc)
{
	time_t end = time(NULL) + WAIT_MS / 1000;
	int r;

	while ((r = ib_poll_cq(cq, 1, wc)) == 0 && time(NULL) < end)
		;
	assert_int_equal(r, 1);
}

static void to_pollfds(const struct rdmarw_cq_events *ev, struct pollfd *p)
{
	int i;

	assert_true(ev->nfds >= 1 && ev->nfds <= RDMARW_CQ_EVENT_FDS);
	for (i = 0; i < ev->nfds; i++)
		p[i] = (struct pollfd){ .fd = ev->fd[i], .events = POLLIN };
}

/*
 * Empty @cq, clear its events and arm it, until the arm reports no missed
 * completion: then nothing is readable until the next completion.
 */
static void quiet_and_arm(struct ib_cq *cq, const struct rdmarw_cq_events *ev)
{
	struct pollfd p[RDMARW_CQ_EVENT_FDS];
	struct ib_wc wc;
	int i, r = 1;

	for (i = 0; i < 100 && r; i++) {
		while (ib_poll_cq(cq, 1, &wc) == 1)
			;
		assert_true(rdmarw_cq_events_consume(cq) >= 0);
		r = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS);
		assert_true(r >= 0);
	}
	assert_int_equal(r, 0);
	to_pollfds(ev, p);
	assert_int_equal(poll(p, (nfds_t)ev->nfds, 0), 0);
}

/* Bad input, on the lab device: each its errno, nothing taken. */
static void test_bad_input(void **state)
{
	struct rdmarw_cq_events ev, ev2;
	struct ibv_ends ends;
	struct ib_cq *wq;

	(void)state;
	if (!ibv_ends_open(&ends, 16, IB_POLL_DIRECT))
		skip();
	wq = ib_alloc_cq(ends.dev, NULL, 8, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(wq));
	assert_int_equal(rdmarw_cq_events_take(NULL, &ev), -EINVAL);
	assert_int_equal(rdmarw_cq_events_take(ends.cq, NULL), -EINVAL);
	/* a CQ with a thread polls itself: nothing to take */
	assert_int_equal(rdmarw_cq_events_take(wq, &ev), -EINVAL);
	/* consume and give without a take */
	assert_int_equal(rdmarw_cq_events_consume(ends.cq), -EINVAL);
	assert_int_equal(rdmarw_cq_events_give(ends.cq), -EINVAL);
	/* taken twice */
	assert_int_equal(rdmarw_cq_events_take(ends.cq, &ev), 0);
	assert_int_equal(ev.nfds, 2);
	assert_int_equal(rdmarw_cq_events_take(ends.cq, &ev2), -EBUSY);
	assert_int_equal(rdmarw_cq_events_consume(ends.cq), 0);
	assert_int_equal(rdmarw_cq_events_give(ends.cq), 0);
	assert_int_equal(rdmarw_cq_events_give(ends.cq), -EINVAL);
	/* and taken again after the give */
	assert_int_equal(rdmarw_cq_events_take(ends.cq, &ev2), 0);
	assert_int_equal(rdmarw_cq_events_give(ends.cq), 0);
	assert_int_equal(ib_free_cq(wq), 0);
	ibv_ends_close(&ends);
}

/*
 * A SEND's RECV completion on the armed, taken CQ wakes poll(); the
 * comp_handler is not called.  Given back, the next one calls it.
 */
static void test_recv_wakes_poll(void **state)
{
	struct pollfd p[RDMARW_CQ_EVENT_FDS];
	struct rdmarw_cq_events ev;
	struct env *e = env_up();
	struct ib_cq *cq;
	struct ib_wc wc;
	time_t end;

	(void)state;
	if (!e)
		skip();
	cq = e->ends.peer_cq;
	assert_int_equal(rdmarw_cq_events_take(cq, &ev), 0);
	quiet_and_arm(cq, &ev);

	post_recv(e, e->pair.peer_qp, 77);
	post_send(e, 1);
	to_pollfds(&ev, p);
	assert_true(poll(p, (nfds_t)ev.nfds, WAIT_MS) > 0);
	assert_true(p[0].revents & POLLIN); /* the device's event */
	assert_true(rdmarw_cq_events_consume(cq) >= 1);
	poll_one(cq, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.opcode, IB_WC_RECV);
	assert_int_equal(wc.wr_id, 77);
	poll_one(e->ends.cq, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	/* the event thread read nothing: the comp_handler never ran */
	assert_int_equal(handler_seen(), 0);
	/* consumed: nothing readable until the next arm's event */
	assert_int_equal(poll(p, (nfds_t)ev.nfds, 0), 0);

	/* given back: the next event is the comp_handler's again */
	assert_int_equal(rdmarw_cq_events_give(cq), 0);
	assert_int_equal(
		ib_req_notify_cq(cq,
				 IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS),
		0);
	post_recv(e, e->pair.peer_qp, 78);
	post_send(e, 2);
	end = time(NULL) + WAIT_MS / 1000;
	while (!handler_seen() && time(NULL) < end) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	assert_true(handler_seen() >= 1);
	poll_one(cq, &wc);
	assert_int_equal(wc.wr_id, 78);
	poll_one(e->ends.cq, &wc);
	env_down(e);
}

/*
 * A receive posted on a QP in ERR completes flushed, made by the backend
 * (neither lab device completes a late WR): its kick descriptor wakes
 * poll().
 */
static void test_flush_wakes_poll(void **state)
{
	struct pollfd p[RDMARW_CQ_EVENT_FDS];
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct rdmarw_cq_events ev;
	struct env *e = env_up();
	struct ib_cq *cq;
	struct ib_wc wc;

	(void)state;
	if (!e)
		skip();
	cq = e->ends.peer_cq;
	assert_int_equal(rdmarw_cq_events_take(cq, &ev), 0);
	assert_int_equal(ib_modify_qp(e->pair.peer_qp, &attr, IB_QP_STATE), 0);
	quiet_and_arm(cq, &ev);

	post_recv(e, e->pair.peer_qp, 99);
	to_pollfds(&ev, p);
	assert_true(poll(p, (nfds_t)ev.nfds, WAIT_MS) > 0);
	assert_true(rdmarw_cq_events_consume(cq) >= 1);
	poll_one(cq, &wc);
	assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 99);
	assert_ptr_equal(wc.qp, e->pair.peer_qp);
	assert_int_equal(handler_seen(), 0);
	assert_int_equal(rdmarw_cq_events_give(cq), 0);
	env_down(e);
}

/*
 * Freed with its events taken and an event raised and never consumed:
 * ib_free_cq() returns (libibverbs' destroy waits only for the events it
 * handed out, each acknowledged when read).
 */
static void test_free_with_event_unconsumed(void **state)
{
	struct pollfd p[RDMARW_CQ_EVENT_FDS];
	struct rdmarw_cq_events ev, ev2;
	struct env *e = env_up();
	struct ib_wc wc;

	(void)state;
	if (!e)
		skip();
	/* both sides' CQs taken; the active side's never consumed */
	assert_int_equal(rdmarw_cq_events_take(e->ends.peer_cq, &ev), 0);
	assert_int_equal(rdmarw_cq_events_take(e->ends.cq, &ev2), 0);
	quiet_and_arm(e->ends.peer_cq, &ev);
	quiet_and_arm(e->ends.cq, &ev2);
	post_recv(e, e->pair.peer_qp, 5);
	post_send(e, 6);
	to_pollfds(&ev2, p);
	assert_true(poll(p, (nfds_t)ev2.nfds, WAIT_MS) > 0);
	to_pollfds(&ev, p);
	assert_true(poll(p, (nfds_t)ev.nfds, WAIT_MS) > 0);
	/* one side consumed and polled, the other left as it is */
	assert_true(rdmarw_cq_events_consume(e->ends.peer_cq) >= 1);
	poll_one(e->ends.peer_cq, &wc);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(handler_seen(), 0);
	env_down(e); /* frees both CQs, events still taken */
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_recv_wakes_poll),
		cmocka_unit_test(test_flush_wakes_poll),
		cmocka_unit_test(test_free_with_event_unconsumed),
	};

	return ibv_lab_run("ibv_cq_events", tests,
			   sizeof(tests) / sizeof(tests[0]));
}

#else /* !RDMARW_HAVE_IBV */
int main(void)
{
	return ibv_lab_no_backend();
}
#endif

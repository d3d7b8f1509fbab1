// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Inline progress on the software device's TCP transport (issue 28,
 * soft_tcp.c, docs/soft-device.md "Inline progress"): on a device that is
 * not threaded, with profile.poll_rx, a poller whose CQ is empty receives
 * from the sockets of that CQ's QPs itself.  The device's thread is held
 * off serving connections (rdmarw__soft_tcp_hold()), so what completes
 * here completed by polling alone; the counters (rdmarw__soft_tcp_stats())
 * say who received.  Two siw devices with profile.tcp on two fabrics,
 * their QPs attached to a loopback TCP connection made here (no MPA).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/tcp_env.h"

#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

#include "soft/soft_tcp.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ACCESS TCP_ENV_ACCESS
#define NQP 8
/* polls without progress before a case gives up: progress here comes on
 * the first poll or two (loopback TCP has the bytes there at send) */
#define POLLS 200000

struct side {
	struct soft_fabric *f;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[NQP];
	int nqp;
	u8 *buf;
	struct ib_mr *mr;
};

/* down() calls seen, and by whom */
struct downs {
	int calls;
	enum soft_tcp_down why;
	pthread_t who;
};

static void on_down(void *ctx, enum soft_tcp_down why)
{
	struct downs *d = ctx;

	d->why = why;
	d->who = pthread_self();
	__atomic_add_fetch(&d->calls, 1, __ATOMIC_SEQ_CST);
}

static void side_init(struct side *s, bool poll_rx, int nqp)
{
	struct soft_profile p;

	tcp_env_profile(&p, false);
	assert_true(p.poll_rx); /* the default */
	p.poll_rx = poll_rx;
	s->f = soft_fabric_create();
	assert_false(IS_ERR(s->f));
	s->dev = soft_device_create(s->f, NULL, &p);
	assert_false(IS_ERR(s->dev));
	s->pd = ib_alloc_pd(s->dev, 0);
	assert_false(IS_ERR(s->pd));
	s->cq = ib_alloc_cq(s->dev, NULL, 1024, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(s->cq));
	s->nqp = nqp;
	s->buf = calloc(1, 65536);
	assert_non_null(s->buf);
	s->mr = ib_reg_user_mr(s->pd, (uintptr_t)s->buf, 65536,
			       (uintptr_t)s->buf, ACCESS);
	assert_false(IS_ERR(s->mr));
}

static struct ib_qp *qp_make(struct side *s)
{
	return tcp_env_qp(s->pd, s->cq, 32, 1);
}

static void attach(struct ib_qp *qp, int fd, bool initiator, struct downs *d)
{
	struct soft_tcp_conn c = { .fd = fd,
				   .crc = true,
				   .ird = 8,
				   .ord = 8,
				   .initiator = initiator,
				   .down = d ? on_down : NULL,
				   .ctx = d };

	assert_int_equal(rdmarw__soft_tcp_attach(qp, &c), 0);
}

/* Two sides, @nqp connected QP pairs, both threads held off. */
static void pair_init(struct side s[2], bool poll_rx, int nqp)
{
	side_init(&s[0], poll_rx, nqp);
	side_init(&s[1], poll_rx, nqp);
	for (int i = 0; i < nqp; i++) {
		int fd[2];

		tcp_loopback_pair(fd);
		for (int k = 0; k < 2; k++) {
			s[k].qp[i] = qp_make(&s[k]);
			attach(s[k].qp[i], fd[k], k == 0, NULL);
		}
		tcp_env_rts(s[0].qp[i]);
		tcp_env_rts(s[1].qp[i]);
	}
	assert_int_equal(rdmarw__soft_tcp_hold(s[0].dev, true), 0);
	assert_int_equal(rdmarw__soft_tcp_hold(s[1].dev, true), 0);
}

static void side_fini(struct side *s)
{
	for (int i = 0; i < s->nqp; i++)
		assert_int_equal(ib_destroy_qp(s->qp[i]), 0);
	ib_dereg_mr(s->mr);
	free(s->buf);
	ib_free_cq(s->cq);
	ib_dealloc_pd(s->pd);
	assert_int_equal(soft_device_destroy(s->dev), 0);
	assert_int_equal(soft_fabric_destroy(s->f), 0);
}

static void pair_fini(struct side s[2])
{
	rdmarw__soft_tcp_hold(s[0].dev, false);
	rdmarw__soft_tcp_hold(s[1].dev, false);
	side_fini(&s[0]);
	side_fini(&s[1]);
}

/* Poll both CQs (the pollers receive) until @cq gave one completion. */
static void poll_one(struct side s[2], struct ib_cq *cq, struct ib_wc *wc)
{
	for (int i = 0; i < POLLS; i++) {
		struct ib_cq *other = cq == s[0].cq ? s[1].cq : s[0].cq;
		struct ib_wc junk;
		int r = ib_poll_cq(cq, 1, wc);

		assert_true(r >= 0);
		if (r)
			return;
		/* the other end's poller answers READs, drains */
		assert_int_equal(ib_poll_cq(other, 1, &junk), 0);
	}
	fail_msg("no completion after %d polls", POLLS);
}

static void post_recv(struct side *s, int i, u64 id, u32 off, u32 len)
{
	struct ib_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ib_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	assert_int_equal(ib_post_recv(s->qp[i], &wr, &bad), 0);
}

static void post_send(struct side *s, int i, enum ib_wr_opcode op, u64 id,
		      u32 off, u32 len, const struct side *peer, u32 roff)
{
	struct ib_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = id,
			.opcode = op,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
	};
	const struct ib_send_wr *bad;

	if (peer) {
		wr.remote_addr = (uintptr_t)peer->buf + roff;
		wr.rkey = peer->mr->rkey;
	}
	assert_int_equal(ib_post_send(s->qp[i], &wr.wr, &bad), 0);
}

static void stats(struct side *s, struct soft_tcp_stats *st)
{
	assert_int_equal(rdmarw__soft_tcp_stats(s->dev, st), 0);
}

static void expect(struct side s[2], struct ib_cq *cq, u64 id,
		   enum ib_wc_opcode op, u32 len)
{
	struct ib_wc wc;

	poll_one(s, cq, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.wr_id, id);
	assert_int_equal(wc.opcode, op);
	if (op == IB_WC_RECV || op == IB_WC_RDMA_READ)
		assert_int_equal(wc.byte_len, len);
}

/* WRITE, SEND and READ complete with the device threads held: the
 * pollers received every FPDU, the threads none. */
static void test_round_trip_by_polling(void **state)
{
	struct soft_tcp_stats st[2];
	struct side s[2];

	(void)state;
	pair_init(s, true, 1);
	for (int i = 0; i < 4096; i++)
		s[0].buf[i] = (u8)(i * 7 + 1);
	for (int i = 0; i < 1000; i++)
		s[1].buf[8192 + i] = (u8)(i * 13 + 5);
	post_recv(&s[1], 0, 100, 16384, 512);
	post_send(&s[0], 0, IB_WR_RDMA_WRITE, 1, 0, 4096, &s[1], 0);
	expect(s, s[0].cq, 1, IB_WC_RDMA_WRITE, 0);
	post_send(&s[0], 0, IB_WR_SEND, 2, 100, 300, NULL, 0);
	expect(s, s[0].cq, 2, IB_WC_SEND, 0);
	/* in order: the WRITE was placed before the SEND arrived */
	expect(s, s[1].cq, 100, IB_WC_RECV, 300);
	assert_memory_equal(s[1].buf, s[0].buf, 4096);
	assert_memory_equal(s[1].buf + 16384, s[0].buf + 100, 300);
	assert_int_equal(s[1].buf[16384 + 300], 0);
	post_send(&s[0], 0, IB_WR_RDMA_READ, 3, 32768, 1000, &s[1], 8192);
	expect(s, s[0].cq, 3, IB_WC_RDMA_READ, 1000);
	assert_memory_equal(s[0].buf + 32768, s[1].buf + 8192, 1000);
	assert_int_equal(s[0].buf[32768 + 1000], 0);
	stats(&s[0], &st[0]);
	stats(&s[1], &st[1]);
	/* side 1 received the WRITE, the SEND and the READ request; side 0
	 * the READ response; all by polling */
	assert_int_equal(st[1].poll_fpdus, 3);
	assert_int_equal(st[0].poll_fpdus, 1);
	assert_true(st[1].poll_bytes > 4096 + 300);
	assert_true(st[0].poll_bytes > 1000);
	assert_int_equal(st[0].thread_fpdus + st[1].thread_fpdus, 0);
	assert_int_equal(st[0].thread_bytes + st[1].thread_bytes, 0);
	pair_fini(s);
}

/* poll_rx cleared: pollers receive nothing; the thread, once released,
 * does. */
static void test_off_switch(void **state)
{
	struct soft_tcp_stats st;
	struct side s[2];
	struct ib_wc wc;
	int got = 0;

	(void)state;
	pair_init(s, false, 1);
	post_recv(&s[1], 0, 100, 0, 64);
	post_send(&s[0], 0, IB_WR_SEND, 1, 0, 64, NULL, 0);
	expect(s, s[0].cq, 1, IB_WC_SEND, 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(ib_poll_cq(s[1].cq, 1, &wc), 0);
	stats(&s[1], &st);
	assert_int_equal(st.poll_fpdus + st.thread_fpdus, 0);
	assert_int_equal(rdmarw__soft_tcp_hold(s[1].dev, false), 0);
	for (time_t t0 = time(NULL); !got;) {
		got = ib_poll_cq(s[1].cq, 1, &wc);
		assert_true(got >= 0);
		assert_true(time(NULL) - t0 < 120); /* hang guard */
		if (!got)
			sched_yield();
	}
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 64);
	stats(&s[1], &st);
	assert_int_equal(st.thread_fpdus, 1);
	assert_int_equal(st.poll_fpdus, 0);
	pair_fini(s);
}

/* Eight QPs on one CQ: one empty poll serves at most four connections,
 * and polling serves every one of them. */
static void test_many_qps_one_cq(void **state)
{
	struct soft_tcp_stats st;
	bool seen[NQP] = { 0 };
	struct side s[2];
	int got = 0;

	(void)state;
	pair_init(s, true, NQP);
	for (int i = 0; i < NQP; i++) {
		post_recv(&s[1], i, 100 + (u64)i, 64 * (u32)i, 64);
		post_send(&s[0], i, IB_WR_SEND, (u64)i, 0, 32, NULL, 0);
	}
	for (int i = 0; i < NQP; i++)
		expect(s, s[0].cq, (u64)i, IB_WC_SEND, 0);
	for (int i = 0; i < POLLS && got < NQP; i++) {
		struct ib_wc wc[NQP];
		int r = ib_poll_cq(s[1].cq, NQP, wc);

		assert_true(r >= 0 && r <= 4);
		for (int k = 0; k < r; k++) {
			int q = (int)(wc[k].wr_id - 100);

			assert_int_equal(wc[k].status, IB_WC_SUCCESS);
			assert_true(q >= 0 && q < NQP);
			assert_ptr_equal(wc[k].qp, s[1].qp[q]);
			assert_false(seen[q]);
			seen[q] = true;
		}
		got += r;
	}
	assert_int_equal(got, NQP);
	stats(&s[1], &st);
	assert_int_equal(st.poll_fpdus, NQP);
	assert_int_equal(st.thread_fpdus, 0);
	pair_fini(s);
}

/* A connection fails (the peer closes) under a poller: the QP goes to ERR
 * and its receive flushes, seen by polling; down() is called once, by the
 * device's thread, not by the poller. */
static void test_fail_under_poller(void **state)
{
	struct downs d = { 0 };
	struct side s;
	struct ib_wc wc;
	int fd[2], r = 0;

	(void)state;
	side_init(&s, true, 1);
	tcp_loopback_pair(fd);
	s.qp[0] = qp_make(&s);
	attach(s.qp[0], fd[0], true, &d);
	tcp_env_rts(s.qp[0]);
	assert_int_equal(rdmarw__soft_tcp_hold(s.dev, true), 0);
	post_recv(&s, 0, 7, 0, 64);
	close(fd[1]); /* FIN */
	for (int i = 0; i < POLLS && !r; i++)
		r = ib_poll_cq(s.cq, 1, &wc);
	assert_int_equal(r, 1);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
	/* the thread, held off serving, still calls down() */
	for (time_t t0 = time(NULL);
	     !__atomic_load_n(&d.calls, __ATOMIC_SEQ_CST);) {
		assert_true(time(NULL) - t0 < 120); /* hang guard */
		sched_yield();
	}
	assert_false(pthread_equal(d.who, pthread_self()));
	assert_int_equal(d.why, SOFT_TCP_DOWN_CLOSED);
	for (int i = 0; i < 100; i++)
		assert_int_equal(ib_poll_cq(s.cq, 1, &wc), 0);
	assert_int_equal(rdmarw__soft_tcp_hold(s.dev, false), 0);
	rdmarw__soft_tcp_forget(s.qp[0]);
	side_fini(&s);
	assert_int_equal(d.calls, 1);
}

/* Ping-pong SENDs by polling, the threads free, until the thread of side
 * 1 stopped waiting for the connection's data (a poller serves it); then
 * nobody polls, and a SEND still arrives: the thread waits for the data
 * again within QUIET_MS and receives it (its counter says so before the
 * CQ is polled again; the poll then finds the completion). */
static void test_quiet_then_no_poller(void **state)
{
	struct soft_tcp_stats st, before;
	struct side s[2];
	struct ib_wc wc;
	int r = 0;

	(void)state;
	pair_init(s, true, 1);
	/* a poll 10 s ago is fresh: quiet is reached however slow the run
	 * (valgrind), not only when a poll lands within 50 us of an event */
	assert_int_equal(rdmarw__soft_tcp_fresh(s[1].dev, 0), -EINVAL);
	assert_int_equal(rdmarw__soft_tcp_fresh(s[1].dev, 10000000000ull), 0);
	rdmarw__soft_tcp_hold(s[0].dev, false);
	rdmarw__soft_tcp_hold(s[1].dev, false);
	for (time_t t0 = time(NULL);;) {
		stats(&s[1], &st);
		if (st.quiets)
			break;
		assert_true(time(NULL) - t0 < 120); /* hang guard */
		post_recv(&s[1], 0, 100, 0, 64);
		post_send(&s[0], 0, IB_WR_SEND, 1, 0, 64, NULL, 0);
		expect(s, s[0].cq, 1, IB_WC_SEND, 0);
		expect(s, s[1].cq, 100, IB_WC_RECV, 64);
	}
	stats(&s[1], &before);
	memset(s[0].buf + 4096, 0xab, 512);
	post_recv(&s[1], 0, 200, 8192, 512);
	post_send(&s[0], 0, IB_WR_SEND, 2, 4096, 512, NULL, 0);
	for (time_t t0 = time(NULL);; sched_yield()) {
		stats(&s[1], &st);
		if (st.thread_fpdus > before.thread_fpdus)
			break;
		assert_true(time(NULL) - t0 < 120); /* hang guard */
	}
	assert_int_equal(st.poll_fpdus, before.poll_fpdus);
	for (int i = 0; i < POLLS && !r; i++)
		r = ib_poll_cq(s[1].cq, 1, &wc);
	assert_int_equal(r, 1);
	assert_int_equal(wc.wr_id, 200);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 512);
	assert_memory_equal(s[1].buf + 8192, s[0].buf + 4096, 512);
	pair_fini(s);
}

/* A consumer that polls its CQ empty and then arms it waits for an event:
 * the device's thread receives what comes next at once (it does not turn
 * the connection's events off because of that last poll). */
static void test_armed_consumer(void **state)
{
	struct soft_tcp_stats st, before;
	struct side s[2];
	struct ib_wc wc;
	int r = 0;

	(void)state;
	pair_init(s, true, 1);
	rdmarw__soft_tcp_hold(s[0].dev, false);
	rdmarw__soft_tcp_hold(s[1].dev, false);
	post_recv(&s[1], 0, 100, 0, 64);
	assert_int_equal(ib_poll_cq(s[1].cq, 1, &wc), 0);
	assert_true(ib_req_notify_cq(s[1].cq, IB_CQ_NEXT_COMP) >= 0);
	stats(&s[1], &before);
	post_send(&s[0], 0, IB_WR_SEND, 1, 0, 64, NULL, 0);
	for (time_t t0 = time(NULL);; sched_yield()) {
		stats(&s[1], &st);
		if (st.thread_fpdus > before.thread_fpdus)
			break;
		assert_true(time(NULL) - t0 < 120); /* hang guard */
	}
	assert_int_equal(st.quiets, before.quiets);
	for (int i = 0; i < POLLS && !r; i++)
		r = ib_poll_cq(s[1].cq, 1, &wc);
	assert_int_equal(r, 1);
	assert_int_equal(wc.wr_id, 100);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	pair_fini(s);
}

struct poller {
	struct side *s;
	bool stop;
	u64 polls;
};

static void *poller_main(void *arg)
{
	struct poller *p = arg;

	while (!__atomic_load_n(&p->stop, __ATOMIC_SEQ_CST)) {
		struct ib_wc wc[8];

		/* yields when empty: under valgrind, one thread runs at a
		 * time */
		if (ib_poll_cq(p->s[1].cq, 8, wc) <= 0)
			sched_yield();
		p->polls++;
	}
	return NULL;
}

/* Detach while another thread polls the CQ (TSan, ASan): the QPs are
 * destroyed while the poller may hold their receive sides. */
static void test_detach_while_polling(void **state)
{
	(void)state;
	for (int round = 0; round < 10; round++) {
		struct soft_tcp_stats st;
		struct poller p = { 0 };
		struct side s[2];
		pthread_t t;

		pair_init(s, true, 2);
		p.s = s;
		assert_int_equal(pthread_create(&t, NULL, poller_main, &p), 0);
		for (int i = 0; i < 2; i++) {
			post_recv(&s[1], i, 100, 0, 64);
			post_send(&s[0], i, IB_WR_SEND, 1, 0, 64, NULL, 0);
			post_send(&s[0], i, IB_WR_RDMA_WRITE, 2, 0, 4096, &s[1],
				  4096);
		}
		/* the poller received the first SEND at least */
		for (time_t t0 = time(NULL);;) {
			stats(&s[1], &st);
			if (st.poll_fpdus)
				break;
			assert_true(time(NULL) - t0 < 120); /* hang guard */
			sched_yield();
		}
		for (int i = 0; i < 2; i++)
			assert_int_equal(ib_destroy_qp(s[1].qp[i]), 0);
		s[1].nqp = 0;
		__atomic_store_n(&p.stop, true, __ATOMIC_SEQ_CST);
		pthread_join(t, NULL);
		assert_int_equal(st.thread_fpdus, 0);
		pair_fini(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_by_polling),
		cmocka_unit_test(test_off_switch),
		cmocka_unit_test(test_many_qps_one_cq),
		cmocka_unit_test(test_fail_under_poller),
		cmocka_unit_test(test_detach_while_polling),
		cmocka_unit_test(test_quiet_then_no_poller),
		cmocka_unit_test(test_armed_consumer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues on the software device, on each profile (mlx5,
 * rxe, siw, and rxe with the progress thread): SENDs from two QPs consumed
 * from one SRQ in posting order with their bytes, a SEND that finds the
 * SRQ empty waits (RNR) and resumes on the next post, a QP moved to ERR
 * flushes none of the SRQ's receives, the limit event, destroy ordering,
 * and bad input.  A threaded variant (several senders and a poster at
 * once) runs under ThreadSanitizer.  Every test ends with the devices
 * holding no QP and no MR.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdmarw/soft.h>

#include "helpers/fake_provider.h"

#define NQP 2
#define SLOT 64
#define NSLOT 64
#define SRQ_WR 16

struct fx {
	const char *profile;
	bool threaded;
	struct soft_fabric *fabric;
	struct ib_device *dev[2]; /* 0: initiators, 1: targets and the SRQ */
	struct ib_pd *pd[2];
	struct ib_cq *cq[2];
	struct ib_srq *srq;
	struct ib_qp *ini[NQP];
	struct ib_qp *tgt[NQP];
	struct ib_mr *mr[2];
	char *buf[2]; /* NSLOT slots of SLOT bytes */
	int events;
	enum ib_event_type last_event;
	struct ib_srq *event_srq;
};

static void srq_event(struct ib_event *ev, void *ctx)
{
	struct fx *fx = ctx;

	fx->last_event = ev->event;
	fx->event_srq = ev->element.srq;
	__atomic_add_fetch(&fx->events, 1, __ATOMIC_RELAXED);
}

static struct ib_qp *make_qp(struct fx *fx, int side, struct ib_srq *srq)
{
	struct ib_qp_init_attr a = {
		.send_cq = fx->cq[side],
		.recv_cq = fx->cq[side],
		.srq = srq,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 2,
			 .max_recv_sge = srq ? 0 : 2 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(fx->pd[side], &a);

	assert_false(IS_ERR(qp));
	return qp;
}

static void fx_init(struct fx *fx, const char *profile, bool threaded)
{
	struct ib_srq_init_attr sa = {
		.event_handler = srq_event,
		.srq_context = fx,
		.attr = { .max_wr = SRQ_WR, .max_sge = 2 },
	};
	struct soft_profile prof;
	int i;

	memset(fx, 0, sizeof(*fx));
	fx->profile = profile;
	fx->threaded = threaded;
	assert_int_equal(soft_profile_get(profile, &prof), 0);
	prof.threaded = threaded;
	fx->fabric = soft_fabric_create();
	assert_false(IS_ERR(fx->fabric));
	for (i = 0; i < 2; i++) {
		fx->dev[i] = soft_device_create(fx->fabric, NULL, &prof);
		assert_false(IS_ERR(fx->dev[i]));
		fx->pd[i] = ib_alloc_pd(fx->dev[i], 0);
		assert_false(IS_ERR(fx->pd[i]));
		fx->cq[i] =
			ib_alloc_cq(fx->dev[i], NULL, 512, 0, IB_POLL_DIRECT);
		assert_false(IS_ERR(fx->cq[i]));
		fx->buf[i] = calloc(NSLOT, SLOT);
		assert_non_null(fx->buf[i]);
		fx->mr[i] = ib_reg_user_mr(fx->pd[i], (uintptr_t)fx->buf[i],
					   NSLOT * SLOT, (uintptr_t)fx->buf[i],
					   IB_ACCESS_LOCAL_WRITE);
		assert_false(IS_ERR(fx->mr[i]));
	}
	fx->srq = ib_create_srq(fx->pd[1], &sa);
	assert_false(IS_ERR(fx->srq));
	assert_int_equal(sa.attr.max_wr, SRQ_WR);
	for (i = 0; i < NQP; i++) {
		fx->ini[i] = make_qp(fx, 0, NULL);
		fx->tgt[i] = make_qp(fx, 1, fx->srq);
		assert_ptr_equal(fx->tgt[i]->srq, fx->srq);
		assert_int_equal(soft_qp_connect(fx->ini[i], fx->tgt[i]), 0);
	}
	assert_int_equal(fx->srq->usecnt, NQP);
}

static void fx_fini(struct fx *fx)
{
	struct soft_stats st;
	int i;

	for (i = 0; i < NQP; i++) {
		assert_int_equal(ib_destroy_qp(fx->ini[i]), 0);
		assert_int_equal(ib_destroy_qp(fx->tgt[i]), 0);
	}
	assert_int_equal(fx->srq->usecnt, 0);
	assert_int_equal(ib_destroy_srq(fx->srq), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(ib_dereg_mr(fx->mr[i]), 0);
		assert_int_equal(ib_free_cq(fx->cq[i]), 0);
		assert_int_equal(ib_dealloc_pd(fx->pd[i]), 0);
		assert_int_equal(soft_device_stats(fx->dev[i], &st), 0);
		assert_int_equal(st.qps, 0);
		assert_int_equal(st.mrs, 0);
		assert_int_equal(soft_device_destroy(fx->dev[i]), 0);
		free(fx->buf[i]);
	}
	assert_int_equal(soft_fabric_destroy(fx->fabric), 0);
}

/* Post receive @slot of the target side's buffer, wr_id 1000 + slot. */
static int post_srq_slot(struct fx *fx, int slot)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(fx->buf[1] + slot * SLOT),
		.length = SLOT,
		.lkey = fx->mr[1]->lkey,
	};
	struct ib_recv_wr wr = { .wr_id = 1000 + (u64)slot,
				 .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_srq_recv(fx->srq, &wr, NULL);
}

/* SEND "q<qp>-m<n>" (SLOT bytes, zero padded) from initiator @qp. */
static void send_msg(struct fx *fx, int qp, int n, int slot)
{
	char *p = fx->buf[0] + slot * SLOT;
	struct ib_sge sge = { .addr = (uintptr_t)p,
			      .length = SLOT,
			      .lkey = fx->mr[0]->lkey };
	struct ib_send_wr wr = { .wr_id = (u64)(qp * 100 + n),
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IB_WR_SEND };

	memset(p, 0, SLOT);
	snprintf(p, SLOT, "q%d-m%d", qp, n);
	assert_int_equal(ib_post_send(fx->ini[qp], &wr, NULL), 0);
}

/* Take @n completions from @cq within 10 s. */
static void poll_n(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	struct timespec t0, t;
	int got = 0, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		r = ib_poll_cq(cq, n - got, wc + got);
		assert_true(r >= 0);
		got += r;
		if (r)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			fail_msg("%d of %d completions", got, n);
		sched_yield();
	}
}

static void expect_none(struct fx *fx, struct ib_cq *cq)
{
	struct ib_wc wc;

	/* a threaded device gets a moment to do what it should not */
	if (fx->threaded)
		usleep(20000);
	assert_int_equal(ib_poll_cq(cq, 1, &wc), 0);
}

/* Wait until the initiators' device counted @n more RNR stalls. */
static void wait_rnr(struct fx *fx, u64 base, u64 n)
{
	struct soft_stats st;
	int i;

	for (i = 0; i < 10000; i++) {
		assert_int_equal(soft_device_stats(fx->dev[0], &st), 0);
		if (st.rnr_stalls >= base + n)
			return;
		usleep(1000);
	}
	fail_msg("rnr_stalls %llu, expected %llu",
		 (unsigned long long)st.rnr_stalls,
		 (unsigned long long)(base + n));
}

static enum ib_qp_state qp_state(struct ib_qp *qp)
{
	struct ib_qp_attr a;

	assert_int_equal(ib_query_qp(qp, &a, 0, NULL), 0);
	return a.qp_state;
}

static int fx_setup(void **state)
{
	const char *spec = *state; /* "rxe", "rxe+t" (threaded), ... */
	struct fx *fx = calloc(1, sizeof(*fx));
	char name[16];

	if (!fx)
		return -1;
	snprintf(name, sizeof(name), "%s", spec);
	if (strchr(name, '+'))
		*strchr(name, '+') = 0;
	fx_init(fx, name, strchr(spec, '+') != NULL);
	*state = fx;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *fx = *state;

	fx_fini(fx);
	free(fx);
	return 0;
}

/* SENDs of two QPs take the SRQ's receives in the order they were posted. */
static void two_qps_share_the_srq(void **state)
{
	struct fx *fx = *state;
	struct ib_wc wc[8];
	char want[SLOT];
	int i;

	for (i = 0; i < 4; i++)
		assert_int_equal(post_srq_slot(fx, i), 0);
	/* one at a time so that the arrival order is known on every device */
	for (i = 0; i < 4; i++) {
		send_msg(fx, i % 2, i / 2, i);
		poll_n(fx->cq[0], 1, wc);
		assert_int_equal(wc[0].status, IB_WC_SUCCESS);
		assert_int_equal(wc[0].wr_id, (i % 2) * 100 + i / 2);
		poll_n(fx->cq[1], 1, wc);
		assert_int_equal(wc[0].status, IB_WC_SUCCESS);
		assert_int_equal(wc[0].opcode, IB_WC_RECV);
		assert_int_equal(wc[0].wr_id, 1000 + i);
		assert_ptr_equal(wc[0].qp, fx->tgt[i % 2]);
		assert_int_equal(wc[0].byte_len, SLOT);
		memset(want, 0, SLOT);
		snprintf(want, SLOT, "q%d-m%d", i % 2, i / 2);
		assert_memory_equal(fx->buf[1] + i * SLOT, want, SLOT);
	}
	/* nothing else consumed or completed */
	expect_none(fx, fx->cq[1]);
	assert_int_equal(fx->events, 0);
}

/*
 * siw has no RNR: a SEND that finds the SRQ empty is a DDP error and the
 * connection terminates.  siw completed each SEND when it went out; both
 * sides of each connection end in ERR, nothing is placed, and the SRQ
 * (not in error) keeps the receives posted afterwards.
 */
static void empty_srq_terminates(struct fx *fx)
{
	struct soft_stats st0;
	struct ib_wc wc[2];
	int i;

	assert_int_equal(soft_device_stats(fx->dev[0], &st0), 0);
	send_msg(fx, 0, 7, 0);
	send_msg(fx, 1, 8, 1);
	poll_n(fx->cq[0], 2, wc);
	for (i = 0; i < NQP; i++) {
		assert_int_equal(wc[i].status, IB_WC_SUCCESS);
		assert_int_equal(wc[i].opcode, IB_WC_SEND);
		assert_int_equal(qp_state(fx->ini[i]), IB_QPS_ERR);
		assert_int_equal(qp_state(fx->tgt[i]), IB_QPS_ERR);
	}
	assert_int_equal(post_srq_slot(fx, 0), 0);
	expect_none(fx, fx->cq[1]);
	assert_int_equal(fx->buf[1][0], 0);
	assert_int_equal(soft_device_stats(fx->dev[0], &st0), 0);
	assert_int_equal(st0.rnr_stalls, 0);
}

/* An empty SRQ: the SENDs wait (RNR) and the next posts resume them. */
static void empty_srq_waits(void **state)
{
	struct fx *fx = *state;
	struct soft_stats st0;
	struct ib_wc wc[4];
	bool seen[NQP] = { false, false };
	int i;

	if (rdma_protocol_iwarp(fx->dev[1], 1)) {
		empty_srq_terminates(fx);
		return;
	}
	assert_int_equal(soft_device_stats(fx->dev[0], &st0), 0);
	send_msg(fx, 0, 7, 0);
	send_msg(fx, 1, 8, 1);
	wait_rnr(fx, st0.rnr_stalls, 2);
	expect_none(fx, fx->cq[0]);
	expect_none(fx, fx->cq[1]);
	/* no byte placed yet */
	assert_int_equal(fx->buf[1][0], 0);
	assert_int_equal(post_srq_slot(fx, 0), 0);
	poll_n(fx->cq[1], 1, wc);
	assert_int_equal(post_srq_slot(fx, 1), 0);
	poll_n(fx->cq[1], 1, wc + 1);
	poll_n(fx->cq[0], 2, wc + 2);
	for (i = 0; i < 2; i++) {
		int q = wc[i].qp == fx->tgt[0] ? 0 : 1;
		char want[SLOT] = { 0 };

		assert_int_equal(wc[i].status, IB_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 1000 + i);
		assert_false(seen[q]);
		seen[q] = true;
		snprintf(want, SLOT, "q%d-m%d", q, 7 + q);
		assert_memory_equal(fx->buf[1] + i * SLOT, want, SLOT);
		assert_int_equal(wc[2 + i].status, IB_WC_SUCCESS);
	}
}

/* A target QP moved to ERR flushes none of the SRQ's receives. */
static void qp_error_leaves_the_srq(void **state)
{
	struct fx *fx = *state;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;
	char want[SLOT] = { 0 };
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(post_srq_slot(fx, i), 0);
	assert_int_equal(ib_modify_qp(fx->tgt[0], &attr, IB_QP_STATE), 0);
	/* no flush completion of any SRQ receive */
	expect_none(fx, fx->cq[1]);
	/* the other QP still receives, from the first receive posted */
	send_msg(fx, 1, 3, 0);
	poll_n(fx->cq[0], 1, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	poll_n(fx->cq[1], 1, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1000);
	assert_ptr_equal(wc.qp, fx->tgt[1]);
	snprintf(want, SLOT, "q1-m3");
	assert_memory_equal(fx->buf[1], want, SLOT);
	/* a SEND to the QP in ERR takes nothing: nobody answers */
	send_msg(fx, 0, 4, 1);
	poll_n(fx->cq[0], 1, &wc);
	assert_int_equal(wc.status, IB_WC_RETRY_EXC_ERR);
	send_msg(fx, 1, 5, 2);
	poll_n(fx->cq[0], 1, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	poll_n(fx->cq[1], 1, &wc);
	assert_int_equal(wc.wr_id, 1001);
	/* the initiator in ERR flushes its own Send Queue only */
	expect_none(fx, fx->cq[1]);
}

/* ib_drain_qp() of an attached QP drains its Send Queue only. */
static void drain_attached_qp(void **state)
{
	struct fx *fx = *state;
	struct ib_wc wc;

	assert_int_equal(post_srq_slot(fx, 0), 0);
	assert_int_equal(post_srq_slot(fx, 1), 0);
	assert_int_equal(ib_drain_qp(fx->tgt[0]), 0);
	assert_int_equal(qp_state(fx->tgt[0]), IB_QPS_ERR);
	/* its receive marker would need a Receive Queue */
	assert_int_equal(ib_drain_rq(fx->tgt[0]), -EINVAL);
	/* the SRQ's receives are all there for the other QP */
	expect_none(fx, fx->cq[1]);
	send_msg(fx, 1, 0, 0);
	poll_n(fx->cq[1], 1, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1000);
	poll_n(fx->cq[0], 1, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
}

/* The armed limit fires once when fewer receives are left. */
static void limit_event(void **state)
{
	struct fx *fx = *state;
	struct ib_srq_attr attr = { .srq_limit = 3 };
	struct ib_wc wc;
	int i;

	for (i = 0; i < 5; i++)
		assert_int_equal(post_srq_slot(fx, i), 0);
	assert_int_equal(ib_modify_srq(fx->srq, &attr, IB_SRQ_LIMIT), 0);
	memset(&attr, 0, sizeof(attr));
	assert_int_equal(ib_query_srq(fx->srq, &attr), 0);
	assert_int_equal(attr.max_wr, SRQ_WR);
	assert_int_equal(attr.max_sge, 2);
	assert_int_equal(attr.srq_limit, 3);
	for (i = 0; i < 4; i++) {
		send_msg(fx, i % 2, i, i);
		poll_n(fx->cq[0], 1, &wc);
		poll_n(fx->cq[1], 1, &wc);
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		/* 5 - (i + 1) left: below 3 from the second SEND on */
		assert_int_equal(fx->events, i >= 2 ? 1 : 0);
	}
	assert_int_equal(fx->last_event, IB_EVENT_SRQ_LIMIT_REACHED);
	assert_ptr_equal(fx->event_srq, fx->srq);
	assert_int_equal(ib_query_srq(fx->srq, &attr), 0);
	assert_int_equal(attr.srq_limit, 0);
}

/* An SRQ goes after its QPs; its PD after it. */
static void destroy_ordering(void **state)
{
	struct fx *fx = *state;
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ib_srq *lone;

	assert_int_equal(post_srq_slot(fx, 0), 0);
	assert_int_equal(ib_destroy_srq(fx->srq), -EBUSY);
	assert_int_equal(ib_destroy_qp(fx->tgt[0]), 0);
	assert_int_equal(fx->srq->usecnt, 1);
	assert_int_equal(ib_destroy_srq(fx->srq), -EBUSY);
	/* the remaining QP still receives */
	send_msg(fx, 1, 1, 0);
	{
		struct ib_wc wc;

		poll_n(fx->cq[1], 1, &wc);
		assert_int_equal(wc.wr_id, 1000);
		assert_ptr_equal(wc.qp, fx->tgt[1]);
		poll_n(fx->cq[0], 1, &wc);
	}
	fx->tgt[0] = make_qp(fx, 1, fx->srq);
	/* an SRQ with receives still posted is destroyed without a
	 * completion; its PD is busy while it lives */
	lone = ib_create_srq(fx->pd[1], &sa);
	assert_false(IS_ERR(lone));
	assert_int_equal(post_srq_slot(fx, 1), 0);
	assert_int_equal(ib_dealloc_pd(fx->pd[1]), -EBUSY);
	assert_int_equal(ib_destroy_srq(lone), 0);
	expect_none(fx, fx->cq[1]);
}

static void bad_input(void **state)
{
	struct fx *fx = *state;
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ib_sge sge[3] = { { 0 } };
	struct ib_recv_wr wr = { .sg_list = sge, .num_sge = 3 }, wr2;
	const struct ib_recv_wr *bad = NULL;
	struct ib_srq_attr attr = { 0 };
	struct ib_device_attr *da = &fx->dev[1]->attrs;
	struct fake_dev *fd;
	int i;

#define BAD_SRQ(change)                                        \
	do {                                                   \
		struct ib_srq_init_attr b = sa;                \
		change;                                        \
		assert_ptr_equal(ib_create_srq(fx->pd[1], &b), \
				 ERR_PTR(-EINVAL));            \
	} while (0)
	BAD_SRQ(b.attr.max_wr = 0);
	BAD_SRQ(b.attr.max_wr = (u32)da->max_qp_wr + 1);
	BAD_SRQ(b.attr.max_sge = 0);
	BAD_SRQ(b.attr.max_sge = (u32)da->max_recv_sge + 1);
	BAD_SRQ(b.attr.srq_limit = 5);
	BAD_SRQ(b.srq_type = IB_SRQT_XRC);
#undef BAD_SRQ
	assert_ptr_equal(ib_create_srq(NULL, &sa), ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_create_srq(fx->pd[1], NULL), ERR_PTR(-EINVAL));
	/* a device without SRQs */
	fd = fake_dev_new("nosrq%d", RDMA_PROTOCOL_IB);
	assert_non_null(fd);
	{
		struct ib_pd *pd = ib_alloc_pd(&fd->ibdev, 0);

		assert_false(IS_ERR(pd));
		assert_ptr_equal(ib_create_srq(pd, &sa), ERR_PTR(-EOPNOTSUPP));
		assert_int_equal(ib_dealloc_pd(pd), 0);
	}
	assert_int_equal(fake_dev_free(fd), 0);

	/* posting: too many SGEs, NULL, full */
	assert_int_equal(ib_post_srq_recv(fx->srq, &wr, &bad), -EINVAL);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(ib_post_srq_recv(NULL, &wr, &bad), -EINVAL);
	assert_int_equal(ib_post_srq_recv(fx->srq, NULL, NULL), -EINVAL);
	for (i = 0; i < SRQ_WR; i++)
		assert_int_equal(post_srq_slot(fx, i), 0);
	wr2 = (struct ib_recv_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 1 };
	assert_int_equal(ib_post_srq_recv(fx->srq, &wr2, &bad), -ENOMEM);
	assert_ptr_equal(bad, &wr2);
	/* an attached QP has no Receive Queue of its own */
	assert_int_equal(ib_post_recv(fx->tgt[0], &wr2, &bad), -EINVAL);

	/* modify and query */
	attr.srq_limit = SRQ_WR + 1;
	assert_int_equal(ib_modify_srq(fx->srq, &attr, IB_SRQ_LIMIT), -EINVAL);
	attr.max_wr = 32;
	assert_int_equal(ib_modify_srq(fx->srq, &attr, IB_SRQ_MAX_WR),
			 -EOPNOTSUPP);
	assert_int_equal(
		ib_modify_srq(fx->srq, &attr, (enum ib_srq_attr_mask)4),
		-EINVAL);
	assert_int_equal(ib_modify_srq(NULL, &attr, IB_SRQ_LIMIT), -EINVAL);
	assert_int_equal(ib_modify_srq(fx->srq, NULL, IB_SRQ_LIMIT), -EINVAL);
	assert_int_equal(ib_query_srq(NULL, &attr), -EINVAL);
	assert_int_equal(ib_query_srq(fx->srq, NULL), -EINVAL);
	assert_int_equal(ib_query_srq(fx->srq, &attr), 0);
	assert_int_equal(attr.srq_limit, 0);
	assert_int_equal(ib_destroy_srq(NULL), -EINVAL);
	assert_int_equal(ib_destroy_srq(ERR_PTR(-ENOMEM)), -EINVAL);
	/* ib_query_qp() names the SRQ */
	{
		struct ib_qp_init_attr ia;
		struct ib_qp_attr qa;

		assert_int_equal(ib_query_qp(fx->tgt[1], &qa, 0, &ia), 0);
		assert_ptr_equal(ia.srq, fx->srq);
		assert_int_equal(ia.cap.max_recv_wr, 0);
		assert_int_equal(ib_query_qp(fx->ini[1], &qa, 0, &ia), 0);
		assert_null(ia.srq);
	}
}

/* ---- threaded: senders and a poster at once ---------------------------- */

#define T_MSGS 200

struct sender {
	struct fx *fx;
	int qp;
};

static void *sender_fn(void *arg)
{
	struct sender *s = arg;
	int n;

	for (n = 0; n < T_MSGS; n++) {
		struct ib_wc wc;

		send_msg(s->fx, s->qp, n, s->qp);
		/* one in flight per QP: its send buffer is reused */
		while (ib_poll_cq(s->fx->ini[s->qp]->send_cq, 1, &wc) == 0)
			sched_yield();
		if (wc.status != IB_WC_SUCCESS)
			return (void *)1;
	}
	return NULL;
}

static void threaded_senders(void **state)
{
	struct fx *fx = *state;
	struct sender s[NQP];
	pthread_t t[NQP];
	int seen[NQP][T_MSGS] = { { 0 } };
	int posted = 0, got = 0, i;
	void *ret;

	(void)s;
	/* the initiators share a send CQ: give each its own */
	for (i = 0; i < NQP; i++) {
		assert_int_equal(ib_destroy_qp(fx->ini[i]), 0);
		assert_int_equal(ib_destroy_qp(fx->tgt[i]), 0);
	}
	{
		struct ib_cq *scq[NQP];

		for (i = 0; i < NQP; i++) {
			struct ib_qp_init_attr a = {
				.cap = { .max_send_wr = 8,
					 .max_recv_wr = 1,
					 .max_send_sge = 1,
					 .max_recv_sge = 1 },
				.sq_sig_type = IB_SIGNAL_ALL_WR,
				.qp_type = IB_QPT_RC,
			};

			scq[i] = ib_alloc_cq(fx->dev[0], NULL, 64, 0,
					     IB_POLL_DIRECT);
			assert_false(IS_ERR(scq[i]));
			a.send_cq = a.recv_cq = scq[i];
			fx->ini[i] = ib_create_qp(fx->pd[0], &a);
			assert_false(IS_ERR(fx->ini[i]));
			fx->tgt[i] = make_qp(fx, 1, fx->srq);
			assert_int_equal(
				soft_qp_connect(fx->ini[i], fx->tgt[i]), 0);
		}
		for (i = 0; i < NQP; i++) {
			s[i] = (struct sender){ .fx = fx, .qp = i };
			assert_int_equal(
				pthread_create(&t[i], NULL, sender_fn, &s[i]),
				0);
		}
		/* this thread posts receives and takes their completions */
		while (got < NQP * T_MSGS) {
			struct ib_wc wc[8];
			int n, k;

			while (posted - got < SRQ_WR && posted < NQP * T_MSGS)
				assert_int_equal(
					post_srq_slot(fx, posted++ % NSLOT), 0);
			n = ib_poll_cq(fx->cq[1], 8, wc);
			assert_true(n >= 0);
			for (k = 0; k < n; k++) {
				const char *p = fx->buf[1] +
						(wc[k].wr_id - 1000) * SLOT;
				int q, m;

				assert_int_equal(wc[k].status, IB_WC_SUCCESS);
				assert_int_equal(sscanf(p, "q%d-m%d", &q, &m),
						 2);
				assert_true(q >= 0 && q < NQP && m >= 0 &&
					    m < T_MSGS);
				assert_ptr_equal(wc[k].qp, fx->tgt[q]);
				seen[q][m]++;
				got++;
			}
			if (!n)
				sched_yield();
		}
		for (i = 0; i < NQP; i++) {
			assert_int_equal(pthread_join(t[i], &ret), 0);
			assert_null(ret);
		}
		for (i = 0; i < NQP * T_MSGS; i++)
			assert_int_equal(seen[i / T_MSGS][i % T_MSGS], 1);
		for (i = 0; i < NQP; i++) {
			assert_int_equal(ib_destroy_qp(fx->ini[i]), 0);
			fx->ini[i] = make_qp(fx, 0, NULL);
			assert_int_equal(ib_free_cq(scq[i]), 0);
		}
	}
}

#define PROFILE_TESTS(spec)                                                    \
	cmocka_unit_test_prestate_setup_teardown(                              \
		two_qps_share_the_srq, fx_setup, fx_teardown, (void *)spec),   \
		cmocka_unit_test_prestate_setup_teardown(                      \
			empty_srq_waits, fx_setup, fx_teardown, (void *)spec), \
		cmocka_unit_test_prestate_setup_teardown(                      \
			qp_error_leaves_the_srq, fx_setup, fx_teardown,        \
			(void *)spec),                                         \
		cmocka_unit_test_prestate_setup_teardown(                      \
			limit_event, fx_setup, fx_teardown, (void *)spec),     \
		cmocka_unit_test_prestate_setup_teardown(                      \
			drain_attached_qp, fx_setup, fx_teardown,              \
			(void *)spec),                                         \
		cmocka_unit_test_prestate_setup_teardown(                      \
			destroy_ordering, fx_setup, fx_teardown,               \
			(void *)spec),                                         \
		cmocka_unit_test_prestate_setup_teardown(                      \
			bad_input, fx_setup, fx_teardown, (void *)spec)

int main(void)
{
	const struct CMUnitTest tests[] = {
		PROFILE_TESTS("rxe"),
		PROFILE_TESTS("mlx5"),
		PROFILE_TESTS("siw"),
		PROFILE_TESTS("rxe+t"),
		cmocka_unit_test_prestate_setup_teardown(
			threaded_senders, fx_setup, fx_teardown, (void *)"rxe"),
		cmocka_unit_test_prestate_setup_teardown(threaded_senders,
							 fx_setup, fx_teardown,
							 (void *)"mlx5+t"),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues on the libibverbs backend, on real devices: a QP
 * created with an SRQ receives SENDs into the SRQ's receives in posting
 * order with their bytes, the SRQ reports its sizes and is busy while the
 * QP lives, ib_post_recv() on the QP is refused, and an armed limit
 * raises IB_EVENT_SRQ_LIMIT_REACHED once, through the device's
 * asynchronous events, when the receives drop below it.  Runs on rxe0 and
 * siw0 in the lab (LAB_RXE_ADDR / LAB_SIW_ADDR, tests/lab/lab.sh) and
 * skips when a device is absent, as on a machine without RDMA.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/ib_verbs.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers/ibv_env.h"

#ifdef RDMARW_HAVE_IBV

#define SLOT 256
#define NMSG 4
#define WAIT_S 30

static void poll_one(struct ib_cq *cq, struct ib_wc *wc)
{
	time_t end = time(NULL) + WAIT_S;
	int r;

	while ((r = ib_poll_cq(cq, 1, wc)) == 0 && time(NULL) < end)
		;
	assert_int_equal(r, 1);
}

/* What the SRQ's event handler saw (it runs on the device's event thread). */
struct srq_events {
	pthread_mutex_t lock;
	int n;
	enum ib_event_type last;
	struct ib_srq *srq;
	struct ib_device *dev;
};

static void on_srq_event(struct ib_event *ev, void *context)
{
	struct srq_events *se = context;

	pthread_mutex_lock(&se->lock);
	se->n++;
	se->last = ev->event;
	se->srq = ev->element.srq;
	se->dev = ev->device;
	pthread_mutex_unlock(&se->lock);
}

static int srq_events_seen(struct srq_events *se, int want)
{
	time_t end = time(NULL) + WAIT_S;
	struct timespec ms = { 0, 1000000 };
	int n;

	for (;;) {
		pthread_mutex_lock(&se->lock);
		n = se->n;
		pthread_mutex_unlock(&se->lock);
		if (n >= want || time(NULL) >= end)
			return n;
		nanosleep(&ms, NULL);
	}
}

static void srq_sends(void **state)
{
	static struct srq_events se = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct ib_srq_init_attr sa = { .event_handler = on_srq_event,
				       .srq_context = &se,
				       .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ib_qp_init_attr a, pa;
	struct ibv_ends ends;
	struct ib_device *dev;
	struct ib_pd *pd, *peer_pd;
	struct ib_cq *cq, *peer_cq;
	struct ib_mr *mr, *peer_mr;
	struct ib_srq_attr attr;
	struct ibv_pair pair;
	struct ib_srq *srq;
	char *buf, *peer_buf;
	struct ib_wc wc;
	int i, ret;

	if (!ibv_ends_open(&ends, 64, IB_POLL_DIRECT))
		skip();
	dev = ends.dev;
	pd = ends.pd;
	peer_pd = ends.peer_pd;
	cq = ends.cq;
	peer_cq = ends.peer_cq;
	buf = calloc(NMSG, SLOT);
	peer_buf = calloc(NMSG, SLOT);
	assert_non_null(buf);
	assert_non_null(peer_buf);
	mr = ib_reg_user_mr(pd, (uintptr_t)buf, NMSG * SLOT, (uintptr_t)buf,
			    IB_ACCESS_LOCAL_WRITE);
	peer_mr = ib_reg_user_mr(peer_pd, (uintptr_t)peer_buf, NMSG * SLOT,
				 (uintptr_t)peer_buf, IB_ACCESS_LOCAL_WRITE);
	assert_false(IS_ERR(mr));
	assert_false(IS_ERR(peer_mr));
	srq = ib_create_srq(peer_pd, &sa);
	assert_false(IS_ERR(srq));
	assert_true(sa.attr.max_wr >= 16);
	ret = ib_query_srq(srq, &attr);
	if (ret == -EOPNOTSUPP && rdma_protocol_iwarp(dev, 1)) {
		/* rdma-core's siw provider has no query_srq (lab: -95) */
	} else {
		assert_int_equal(ret, 0);
		assert_true(attr.max_wr >= 16);
	}

	a = (struct ib_qp_init_attr){
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};
	pa = a;
	pa.send_cq = pa.recv_cq = peer_cq;
	pa.srq = srq;
	/* receives before the connection: the SENDs find them */
	for (i = 0; i < NMSG; i++) {
		struct ib_sge sge = { .addr = (uintptr_t)(peer_buf + i * SLOT),
				      .length = SLOT,
				      .lkey = peer_mr->lkey };
		struct ib_recv_wr rwr = { .wr_id = 500 + (u64)i,
					  .sg_list = &sge,
					  .num_sge = 1 };

		assert_int_equal(ib_post_srq_recv(srq, &rwr, NULL), 0);
	}
	/* armed at NMSG: the first SEND leaves NMSG - 1, below it */
	pthread_mutex_lock(&se.lock);
	se.n = 0;
	pthread_mutex_unlock(&se.lock);
	attr.srq_limit = NMSG;
	assert_int_equal(ib_modify_srq(srq, &attr, IB_SRQ_LIMIT), 0);
	assert_int_equal(ibv_pair_connect(&pair, ibv_lab_addr, pd, &a, peer_pd,
					  &pa, NULL, 0),
			 0);
	assert_ptr_equal(pair.peer_qp->srq, srq);
	assert_int_equal(ib_destroy_srq(srq), -EBUSY);
	{
		struct ib_recv_wr rwr = { .wr_id = 1 };

		assert_int_equal(ib_post_recv(pair.peer_qp, &rwr, NULL),
				 -EINVAL);
	}
	for (i = 0; i < NMSG; i++) {
		struct ib_sge sge = { .addr = (uintptr_t)(buf + i * SLOT),
				      .length = SLOT,
				      .lkey = mr->lkey };
		struct ib_send_wr swr = { .wr_id = (u64)i,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IB_WR_SEND,
					  .send_flags = IB_SEND_SIGNALED };

		memset(buf + i * SLOT, 'a' + i, SLOT);
		assert_int_equal(ib_post_send(pair.qp, &swr, NULL), 0);
		poll_one(cq, &wc);
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		poll_one(peer_cq, &wc);
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		assert_int_equal(wc.opcode, IB_WC_RECV);
		assert_int_equal(wc.wr_id, 500 + i);
		assert_int_equal(wc.byte_len, SLOT);
		assert_ptr_equal(wc.qp, pair.peer_qp);
		assert_memory_equal(peer_buf + i * SLOT, buf + i * SLOT, SLOT);
		if (i == 0) {
			/* the limit fired, on this SRQ */
			assert_int_equal(srq_events_seen(&se, 1), 1);
			pthread_mutex_lock(&se.lock);
			assert_int_equal(se.last, IB_EVENT_SRQ_LIMIT_REACHED);
			assert_ptr_equal(se.srq, srq);
			assert_ptr_equal(se.dev, dev);
			pthread_mutex_unlock(&se.lock);
		}
	}
	/* the limit disarms when it fires: once for the four receives */
	{
		struct timespec settle = { 0, 200000000 };

		nanosleep(&settle, NULL);
	}
	pthread_mutex_lock(&se.lock);
	assert_int_equal(se.n, 1);
	pthread_mutex_unlock(&se.lock);

	assert_int_equal(ibv_pair_destroy(&pair), 0);
	assert_int_equal(srq->usecnt, 0);
	assert_int_equal(ib_destroy_srq(srq), 0);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dereg_mr(peer_mr), 0);
	ibv_ends_close(&ends);
	free(buf);
	free(peer_buf);
}

/*
 * Receives posted to an SRQ until the device refuses one: a full SRQ is
 * -ENOMEM, a negative errno whatever sign the provider answers with
 * (libibverbs documents a positive one; rdma-core's siw returns -ENOMEM),
 * with @bad_wr at the refused receive.
 */
static void srq_full(void **state)
{
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	const struct ib_recv_wr *bad = NULL;
	struct ibv_ends ends;
	struct ib_srq *srq;
	struct ib_mr *mr;
	char *buf;
	int i, ret = 0;

	(void)state;
	if (!ibv_ends_open(&ends, 64, IB_POLL_DIRECT))
		skip();
	buf = calloc(1, SLOT);
	assert_non_null(buf);
	mr = ib_reg_user_mr(ends.peer_pd, (uintptr_t)buf, SLOT, (uintptr_t)buf,
			    IB_ACCESS_LOCAL_WRITE);
	assert_false(IS_ERR(mr));
	srq = ib_create_srq(ends.peer_pd, &sa);
	assert_false(IS_ERR(srq));
	for (i = 0; i < 4096; i++) {
		struct ib_sge sge = { .addr = (uintptr_t)buf,
				      .length = SLOT,
				      .lkey = mr->lkey };
		struct ib_recv_wr rwr = { .wr_id = (u64)i,
					  .sg_list = &sge,
					  .num_sge = 1 };

		ret = ib_post_srq_recv(srq, &rwr, &bad);
		if (ret) {
			assert_ptr_equal(bad, &rwr);
			break;
		}
	}
	assert_true(i >= 16);
	assert_int_equal(ret, -ENOMEM);
	assert_int_equal(ib_destroy_srq(srq), 0);
	assert_int_equal(ib_dereg_mr(mr), 0);
	ibv_ends_close(&ends);
	free(buf);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(srq_sends),
		cmocka_unit_test(srq_full),
	};

	return ibv_lab_run("ibv_srq", tests, sizeof(tests) / sizeof(tests[0]));
}

#else /* !RDMARW_HAVE_IBV */
int main(void)
{
	return ibv_lab_no_backend();
}
#endif

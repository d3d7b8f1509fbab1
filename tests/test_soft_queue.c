// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queues of the software device: posting checks with their errnos and
 * bad_wr, Send Queue accounting with unsignaled WRs, Receive Queue depth,
 * a SEND waiting for a receive, CQ arming and CQ overflow.
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

/* The masks the IBA (and the kernel's ib_modify_qp_is_ok()) require for RC. */
#define TEST_INIT_MASK \
	(IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS)
#define TEST_RTR_MASK                                               \
	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
	 IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)

#define LEN 4096
#define ALL_ACCESS SOFT_PAIR_ACCESS

static void pair_init_cfg(struct soft_pair *p, struct soft_env_cfg *cfg)
{
	soft_pair_init(p, cfg, LEN, -1);
}

/* A WRITE of @len bytes from buf[0] to buf[1]. */
static void make_write(struct soft_pair *p, struct ib_rdma_wr *wr,
		       struct ib_sge *sge, u64 id, bool signaled)
{
	*sge = (struct ib_sge){ (uintptr_t)p->buf[0], 16, p->mr[0]->lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr.wr_id = id;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->wr.opcode = IB_WR_RDMA_WRITE;
	wr->wr.send_flags = signaled ? IB_SEND_SIGNALED : 0;
	wr->remote_addr = (uintptr_t)p->buf[1];
	wr->rkey = p->mr[1]->rkey;
}

/* ---- posting checks ----------------------------------------------------- */

static void test_post_checks(void **state)
{
	struct soft_env_cfg cfg = { .profile = "mlx5",
				    .cap = { .max_send_sge = 3 } };
	const struct ib_send_wr *bad;
	struct ib_rdma_wr wr[3];
	struct ib_sge sge[4], s1;
	struct soft_pair p;
	int i;

	pair_init_cfg(&p, &cfg);
	for (i = 0; i < 4; i++)
		sge[i] = (struct ib_sge){ (uintptr_t)p.buf[0] + 8 * i, 8,
					  p.mr[0]->lkey };
	for (i = 0; i < 3; i++) {
		make_write(&p, &wr[i], &s1, 50 + i, true);
		wr[i].wr.sg_list = sge;
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
	}
	/* num_sge above cap.max_send_sge: stops at that WR. */
	wr[1].wr.num_sge = 4;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -EINVAL);
	assert_ptr_equal(bad, &wr[1].wr);
	soft_env_expect(p.env.cq[0], 50, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);

	wr[0].wr.next = NULL;
	wr[0].wr.num_sge = -1;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -EINVAL);
	wr[0].wr.num_sge = 1;
	wr[0].wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP; /* not offered */
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -EINVAL);
	wr[0].wr.opcode = (enum ib_wr_opcode)99;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -EINVAL);
	wr[0].wr.opcode = IB_WR_RDMA_WRITE;
	wr[0].wr.send_flags = IB_SEND_INLINE;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -EINVAL);
	wr[0].wr.send_flags = 0;
	wr[0].wr.sg_list = NULL;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -EINVAL);
	/* More than 2^31 bytes in one message. */
	sge[0].length = 0x80000000u;
	sge[1].length = 1;
	wr[0].wr.sg_list = sge;
	wr[0].wr.num_sge = 2;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -EINVAL);
	assert_ptr_equal(bad, &wr[0].wr);
	soft_env_expect_empty(p.env.cq[0]);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_RTS);
	soft_pair_fini(&p);
}

/* READ: at most max_read_sge = min(cap.max_send_sge, max_sge_rd). */
static void test_post_read_sge_limit(void **state)
{
	struct soft_profile prof;
	struct soft_env_cfg cfg = { .custom = &prof,
				    .cap = { .max_send_sge = 4 } };
	struct ib_rdma_wr wr;
	struct ib_sge sge[3], s1;
	struct soft_pair p;
	int i;

	assert_int_equal(soft_profile_get("rxe", &prof), 0);
	prof.attrs.max_sge_rd = 2;
	pair_init_cfg(&p, &cfg);
	assert_int_equal(p.env.qp[0]->max_read_sge, 2);
	for (i = 0; i < 3; i++)
		sge[i] = (struct ib_sge){ (uintptr_t)p.buf[0] + 8 * i, 8,
					  p.mr[0]->lkey };
	make_write(&p, &wr, &s1, 60, true);
	wr.wr.sg_list = sge;
	wr.wr.num_sge = 3;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 60, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	wr.wr.opcode = IB_WR_RDMA_READ;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), -EINVAL);
	wr.wr.num_sge = 2;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 60, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	soft_pair_fini(&p);

	/* siw: a READ has exactly one SGE (siw_post_send()). */
	pair_init_cfg(&p, &(struct soft_env_cfg){ .profile = "siw" });
	make_write(&p, &wr, &s1, 61, true);
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.num_sge = 0;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), -EINVAL);
	wr.wr.sg_list = sge;
	wr.wr.num_sge = 2;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), -EINVAL);
	soft_pair_fini(&p);
}

/* RESET, INIT and RTR refuse sends with -EINVAL; RTS takes them. */
static void test_post_states(void **state)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init_cfg(&p, &(struct soft_env_cfg){ .no_connect = true });
	make_write(&p, &wr, &sge, 70, true);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, &bad), -EINVAL);
	assert_ptr_equal(bad, &wr.wr);
	assert_int_equal(ib_modify_qp(p.env.qp[0], &attr, TEST_INIT_MASK), 0);
	bad = NULL;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, &bad), -EINVAL);
	assert_ptr_equal(bad, &wr.wr);
	attr.qp_state = IB_QPS_RTR;
	attr.dest_qp_num = p.env.qp[1]->qp_num;
	assert_int_equal(ib_modify_qp(p.env.qp[0], &attr, TEST_RTR_MASK), 0);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, &bad), -EINVAL);
	soft_env_expect_empty(p.env.cq[0]);
	soft_pair_fini(&p);
}

/* ---- Send Queue accounting ---------------------------------------------- */

/*
 * Unsignaled WRs keep their slots until a later signaled WR's completion is
 * polled (mlx5): with inline execution everything has run, yet the queue
 * is full until the poll.
 */
static void test_sq_accounting(void **state)
{
	struct soft_env_cfg cfg = { .cap = { .max_send_wr = 8 } };
	const struct ib_send_wr *bad;
	struct ib_rdma_wr wr[9];
	struct ib_sge sge[9];
	struct soft_stats st;
	struct ib_wc wc;
	struct soft_pair p;
	int i;

	pair_init_cfg(&p, &cfg);
	for (i = 0; i < 9; i++) {
		make_write(&p, &wr[i], &sge[i], 100 + i, i == 7);
		wr[i].wr.next = i < 8 ? &wr[i + 1].wr : NULL;
	}
	/* Nine in a chain: the ninth does not fit. */
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, &bad), -ENOMEM);
	assert_ptr_equal(bad, &wr[8].wr);
	assert_int_equal(soft_device_stats(p.env.dev[0], &st), 0);
	assert_int_equal(st.wrs_executed, 8);
	/* Still full: nothing polled. */
	wr[8].wr.next = NULL;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[8].wr, &bad), -ENOMEM);
	/* One completion (the signaled 8th) frees all eight. */
	assert_int_equal(ib_poll_cq(p.env.cq[0], 1, &wc), 1);
	assert_int_equal(wc.wr_id, 107);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 16);
	for (i = 0; i < 7; i++) {
		wr[i].wr.next = NULL;
		assert_int_equal(ib_post_send(p.env.qp[0], &wr[i].wr, NULL), 0);
	}
	wr[7].wr.next = NULL;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[7].wr, NULL), 0);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[8].wr, NULL), -ENOMEM);
	soft_env_expect(p.env.cq[0], 107, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[8].wr, NULL), 0);
	soft_env_expect_empty(p.env.cq[0]);
	soft_pair_fini(&p);
}

/* Only unsignaled WRs: nothing is ever polled, the queue stays full. */
static void test_sq_unsignaled_only(void **state)
{
	struct soft_env_cfg cfg = { .cap = { .max_send_wr = 4 } };
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;
	int i;

	pair_init_cfg(&p, &cfg);
	make_write(&p, &wr, &sge, 1, false);
	for (i = 0; i < 4; i++)
		assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), -ENOMEM);
	soft_env_expect_empty(p.env.cq[0]);
	soft_pair_fini(&p);
}

/* IB_SIGNAL_ALL_WR: every WR completes and frees its own slot. */
static void test_sq_signal_all(void **state)
{
	struct soft_env_cfg cfg = { .sig_all = true,
				    .cap = { .max_send_wr = 2 } };
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init_cfg(&p, &cfg);
	make_write(&p, &wr, &sge, 5, false);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), -ENOMEM);
	soft_env_expect(p.env.cq[0], 5, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 5, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 5, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	soft_pair_fini(&p);
}

/* ---- Receive Queue ------------------------------------------------------ */

static void test_rq_depth_and_checks(void **state)
{
	struct soft_env_cfg cfg = { .cap = { .max_recv_wr = 3,
					     .max_recv_sge = 2 } };
	struct ib_sge sge[3];
	struct ib_recv_wr wr[4];
	const struct ib_recv_wr *bad;
	struct soft_pair p;
	int i;

	pair_init_cfg(&p, &cfg);
	for (i = 0; i < 3; i++)
		sge[i] = (struct ib_sge){ (uintptr_t)p.buf[1] + 16 * i, 16,
					  p.mr[1]->lkey };
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = 80 + i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	wr[2].num_sge = 3; /* above cap.max_recv_sge */
	assert_int_equal(ib_post_recv(p.env.qp[1], &wr[0], &bad), -EINVAL);
	assert_ptr_equal(bad, &wr[2]);
	wr[2].num_sge = 2;
	assert_int_equal(ib_post_recv(p.env.qp[1], &wr[2], &bad), -ENOMEM);
	assert_ptr_equal(bad, &wr[3]);
	/* A SEND consumes one receive and frees its slot. */
	assert_int_equal(
		soft_env_send(p.env.qp[0], 1, p.buf[0], 4, p.mr[0]->lkey), 0);
	soft_env_expect(p.env.cq[1], 80, IB_WC_SUCCESS, IB_WC_RECV);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_SEND);
	assert_int_equal(ib_post_recv(p.env.qp[1], &wr[3], NULL), 0);
	assert_int_equal(ib_post_recv(p.env.qp[1], &wr[3], NULL), -ENOMEM);
	wr[3].num_sge = -1;
	wr[3].next = NULL;
	assert_int_equal(ib_post_recv(p.env.qp[1], &wr[3], NULL), -EINVAL);
	soft_pair_fini(&p);
}

/* RESET refuses receives; INIT takes them. */
static void test_recv_states(void **state)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	struct ib_recv_wr wr = { .wr_id = 1 };
	struct soft_pair p;

	pair_init_cfg(&p, &(struct soft_env_cfg){ .no_connect = true });
	assert_int_equal(ib_post_recv(p.env.qp[0], &wr, NULL), -EINVAL);
	assert_int_equal(ib_modify_qp(p.env.qp[0], &attr, TEST_INIT_MASK), 0);
	assert_int_equal(ib_post_recv(p.env.qp[0], &wr, NULL), 0);
	attr.qp_state = IB_QPS_RESET;
	assert_int_equal(ib_modify_qp(p.env.qp[0], &attr, IB_QP_STATE), 0);
	soft_env_expect_empty(p.env.cq[0]); /* dropped without completion */
	soft_pair_fini(&p);
}

/* ---- waiting for a receive (rnr_retry 7) -------------------------------- */

/* A SEND of "hello, world" (wr_id 1), then a WRITE of it to buf[1] + 100
 * (wr_id 2), with no receive posted on qp[1]. */
static void send_then_write(struct soft_pair *p, struct ib_rdma_wr *wr,
			    struct ib_sge *sge)
{
	memcpy(p->buf[0], "hello, world", 12);
	assert_int_equal(
		soft_env_send(p->env.qp[0], 1, p->buf[0], 12, p->mr[0]->lkey),
		0);
	make_write(p, wr, sge, 2, true);
	sge->addr = (uintptr_t)p->buf[0];
	wr->remote_addr = (uintptr_t)p->buf[1] + 100;
	assert_int_equal(ib_post_send(p->env.qp[0], &wr->wr, NULL), 0);
}

static void test_rnr_wait_and_resume(void **state)
{
	struct soft_stats st;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init_cfg(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	/* The WRITE behind the SEND waits too: the queue is in order. */
	send_then_write(&p, &wr, &sge);
	soft_env_expect_empty(p.env.cq[0]);
	assert_int_equal(p.buf[1][100], 0);
	assert_int_equal(soft_device_stats(p.env.dev[0], &st), 0);
	assert_true(st.rnr_stalls >= 1);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_RTS);

	soft_env_post_recv(p.env.qp[1], 3, p.buf[1], 32, p.mr[1]->lkey);
	soft_env_expect(p.env.cq[1], 3, IB_WC_SUCCESS, IB_WC_RECV);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_SEND);
	soft_env_expect(p.env.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_memory_equal(p.buf[1], "hello, world", 12);
	assert_memory_equal(p.buf[1] + 100, "hello, world", 12);
	soft_pair_fini(&p);
}

/*
 * iWARP has no RNR: siw's receiver finds no receive for a SEND, reports a
 * DDP error (no buffer for the MSN) and terminates the connection.  The
 * SEND was transmitted, so siw has completed it; the WRITE behind it is
 * flushed unexecuted; both QPs are in ERR and a receive posted afterwards
 * completes flushed, not with the SEND's bytes.
 */
static void test_rnr_siw_terminates(void **state)
{
	struct soft_stats st;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init_cfg(&p, &(struct soft_env_cfg){ .profile = "siw" });
	send_then_write(&p, &wr, &sge);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_SEND);
	soft_env_expect(p.env.cq[0], 2, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_ERR);
	assert_int_equal(soft_env_state(p.env.qp[1]), IB_QPS_ERR);
	assert_int_equal(soft_device_stats(p.env.dev[0], &st), 0);
	assert_int_equal(st.rnr_stalls, 0);

	soft_env_post_recv(p.env.qp[1], 3, p.buf[1], 32, p.mr[1]->lkey);
	soft_env_expect(p.env.cq[1], 3, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	assert_int_equal(p.buf[1][0], 0);
	assert_int_equal(p.buf[1][100], 0);
	soft_pair_fini(&p);
}

/* ---- CQ arming and overflow --------------------------------------------- */

static int handler_calls;

static void count_handler(struct ib_cq *cq, void *ctx)
{
	handler_calls++;
}

static void test_cq_notify(void **state)
{
	struct ib_wc wc;
	struct soft_pair p;
	int i;

	pair_init_cfg(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	handler_calls = 0;
	p.env.cq[1]->comp_handler = count_handler;
	soft_env_post_recv(p.env.qp[1], 1, NULL, 0, 0);
	soft_env_post_recv(p.env.qp[1], 2, NULL, 0, 0);
	soft_env_post_recv(p.env.qp[1], 3, NULL, 0, 0);
	/* Not armed: no call. */
	assert_int_equal(soft_env_send(p.env.qp[0], 10, NULL, 0, 0), 0);
	assert_int_equal(handler_calls, 0);
	/* Armed with entries waiting: 1, and one call for the next. */
	assert_int_equal(
		ib_req_notify_cq(p.env.cq[1],
				 IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS),
		1);
	assert_int_equal(soft_env_send(p.env.qp[0], 11, NULL, 0, 0), 0);
	assert_int_equal(handler_calls, 1);
	assert_int_equal(soft_env_send(p.env.qp[0], 12, NULL, 0, 0), 0);
	assert_int_equal(handler_calls, 1); /* one per arming */
	for (i = 0; i < 3; i++)
		assert_int_equal(ib_poll_cq(p.env.cq[1], 1, &wc), 1);
	assert_int_equal(
		ib_req_notify_cq(p.env.cq[1],
				 IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS),
		0);
	/* IB_CQ_SOLICITED: only a solicited receive wakes. */
	assert_int_equal(ib_req_notify_cq(p.env.cq[1], IB_CQ_SOLICITED), 0);
	soft_env_post_recv(p.env.qp[1], 4, NULL, 0, 0);
	soft_env_post_recv(p.env.qp[1], 5, NULL, 0, 0);
	assert_int_equal(soft_env_send(p.env.qp[0], 13, NULL, 0, 0), 0);
	assert_int_equal(handler_calls, 1);
	{
		struct ib_send_wr swr = { .wr_id = 14,
					  .opcode = IB_WR_SEND,
					  .send_flags = IB_SEND_SIGNALED |
							IB_SEND_SOLICITED };

		assert_int_equal(ib_post_send(p.env.qp[0], &swr, NULL), 0);
	}
	assert_int_equal(handler_calls, 2);
	for (i = 0; i < 2; i++)
		assert_int_equal(ib_poll_cq(p.env.cq[1], 1, &wc), 1);
	soft_env_poll(p.env.cq[0], 5, (struct ib_wc[5]){ 0 });
	p.env.cq[1]->comp_handler = NULL;
	soft_pair_fini(&p);
}

static int events_seen;
static enum ib_event_type last_event;

static void event_handler(struct ib_event *ev, void *ctx)
{
	events_seen++;
	last_event = ev->event;
}

/* A full CQ never overwrites: the completion is lost and counted, the QP
 * hears IB_EVENT_CQ_ERR and stops. */
static void test_cq_overflow(void **state)
{
	struct soft_env_cfg cfg = { .cqe = 4 };
	struct soft_stats st;
	struct ib_rdma_wr wr;
	struct ib_wc wc[8];
	struct ib_sge sge;
	struct soft_pair p;
	int i;

	pair_init_cfg(&p, &cfg);
	events_seen = 0;
	p.env.qp[0]->event_handler = event_handler;
	make_write(&p, &wr, &sge, 0, true);
	for (i = 0; i < 5; i++) {
		wr.wr.wr_id = 90 + i;
		assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	}
	assert_int_equal(soft_device_stats(p.env.dev[0], &st), 0);
	assert_int_equal(st.cq_overflows, 1);
	assert_int_equal(events_seen, 1);
	assert_int_equal(last_event, IB_EVENT_CQ_ERR);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_ERR);
	assert_int_equal(ib_poll_cq(p.env.cq[0], 8, wc), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, 90 + i);
		assert_int_equal(wc[i].status, IB_WC_SUCCESS);
	}
	soft_pair_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_checks),
		cmocka_unit_test(test_post_read_sge_limit),
		cmocka_unit_test(test_post_states),
		cmocka_unit_test(test_sq_accounting),
		cmocka_unit_test(test_sq_unsignaled_only),
		cmocka_unit_test(test_sq_signal_all),
		cmocka_unit_test(test_rq_depth_and_checks),
		cmocka_unit_test(test_recv_states),
		cmocka_unit_test(test_rnr_wait_and_resume),
		cmocka_unit_test(test_rnr_siw_terminates),
		cmocka_unit_test(test_cq_notify),
		cmocka_unit_test(test_cq_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

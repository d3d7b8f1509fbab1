// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The software device's transmit/receive seam (issue 28, soft_net.c): the
 * responder learns a request only from a packet, a header by value and a
 * payload cursor, and answers only with packets to the sender's
 * completer.  Here the packets are built by hand, with no WQE behind them,
 * as a wire's receive path will build them, and handed to
 * rdmarw__soft_rcv(): what lands, what the completer records, what a
 * malformed header is refused with (nothing touched), and that the
 * loopback's wire is a pair.  Each case runs on mlx5, rxe and siw.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"
#include "soft/soft_loc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define INIT_MASK \
	(IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS)
#define RTR_MASK                                                    \
	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
	 IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)

#define LEN 256

static const char *const profiles[] = { "mlx5", "rxe", "siw" };

#define NPROF (sizeof(profiles) / sizeof(profiles[0]))

/* A WRITE of @len bytes of @src to the pair's remote buffer at @off. */
static struct soft_pkt write_pkt(struct soft_pair *p, struct soft_region *src,
				 u8 *bytes, u64 len, u64 off)
{
	struct soft_pkt pkt = { 0 };

	*src = (struct soft_region){ .dev = to_sdev(p->env.dev[0]),
				     .addr = (u64)(uintptr_t)bytes,
				     .len = len,
				     .cpu = bytes };
	pkt.h.op = rdmarw__soft_opcode(IB_WR_RDMA_WRITE);
	pkt.h.kind = SOFT_PKT_WRITE;
	pkt.h.src_qpn = p->env.qp[0]->qp_num;
	pkt.h.rkey = p->mr[1]->rkey;
	pkt.h.va = (u64)(uintptr_t)p->buf[1] + off;
	pkt.h.length = len;
	pkt.h.seq = 7;
	pkt.pay.rg = src;
	pkt.pay.n = 1;
	return pkt;
}

/* Receive @pkt at QP 1 inside QP 0's read section, as the loopback does. */
static int rcv1(struct soft_pair *p, struct soft_pkt *pkt)
{
	struct soft_qp *q0 = to_sqp(p->env.qp[0]);
	int ret;

	soft_br_read_lock(&to_sdev(p->env.dev[0])->fabric->mem_lock,
			  q0->mem_rd);
	ret = rdmarw__soft_rcv(to_sqp(p->env.qp[1]), pkt);
	soft_br_read_unlock(q0->mem_rd);
	return ret;
}

static void pair_up(struct soft_pair *p, const char *profile)
{
	soft_pair_init(p, &(struct soft_env_cfg){ .profile = profile }, LEN,
		       0x10);
}

/* A WRITE built from a header alone lands; nothing answers, nothing ends. */
static void test_write_from_header(void **state)
{
	u8 bytes[LEN], want[LEN];
	struct soft_region src;
	struct soft_pkt pkt;
	struct soft_pair p;
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		pair_up(&p, profiles[i]);
		memset(bytes, 0xa5, sizeof(bytes));
		memcpy(want, p.buf[1], LEN);
		memset(want + 16, 0xa5, 64);
		pkt = write_pkt(&p, &src, bytes, 64, 16);
		assert_int_equal(rcv1(&p, &pkt), 0);
		assert_memory_equal(p.buf[1], want, LEN);
		soft_env_expect_empty(p.env.cq[0]);
		soft_env_expect_empty(p.env.cq[1]);
		assert_int_equal(soft_env_state(p.env.qp[1]), IB_QPS_RTS);
		soft_pair_fini(&p);
	}
}

/*
 * A bad rkey: no byte moves, the answer reaches the sender's completer as
 * REM_ACCESS (a NAK; iWARP: a TERMINATE), and the responder moves to ERR
 * at the message's end, not before.
 */
static void test_bad_rkey_answers(void **state)
{
	u8 bytes[LEN], before[LEN];
	struct soft_region src;
	struct soft_pkt pkt;
	struct soft_pair p;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		pair_up(&p, profiles[i]);
		memset(bytes, 0x5a, sizeof(bytes));
		memcpy(before, p.buf[1], LEN);
		pkt = write_pkt(&p, &src, bytes, 64, 0);
		pkt.h.rkey ^= 0x80; /* another variant */
		ret = rcv1(&p, &pkt);
		assert_int_equal(ret, SOFT_RCV_ANSWERED | SOFT_RCV_END);
		assert_int_equal(to_sqp(p.env.qp[0])->comp_fault,
				 SOFT_F_REM_ACCESS);
		to_sqp(p.env.qp[0])->comp_fault = SOFT_OK;
		assert_memory_equal(p.buf[1], before, LEN);
		assert_int_equal(soft_env_state(p.env.qp[1]), IB_QPS_RTS);
		assert_true(rdmarw__soft_xmit_end(to_sqp(p.env.qp[0])));
		assert_int_equal(soft_env_state(p.env.qp[1]), IB_QPS_ERR);
		soft_pair_fini(&p);
	}
}

/* Malformed headers are refused before any role sees them. */
static void test_malformed(void **state)
{
	u8 bytes[LEN], before[LEN];
	struct soft_region src, short_src;
	struct soft_pkt pkt;
	struct soft_pair p;
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		pair_up(&p, profiles[i]);
		memset(bytes, 0x77, sizeof(bytes));
		memcpy(before, p.buf[1], LEN);

		pkt = write_pkt(&p, &src, bytes, 64, 0);
		pkt.h.kind = SOFT_PKT_NR;
		assert_int_equal(rcv1(&p, &pkt), -EINVAL);
		pkt = write_pkt(&p, &src, bytes, 64, 0);
		pkt.h.op = NULL;
		assert_int_equal(rcv1(&p, &pkt), -EINVAL);
		/* a WRITE packet whose opcode is a READ's */
		pkt = write_pkt(&p, &src, bytes, 64, 0);
		pkt.h.op = rdmarw__soft_opcode(IB_WR_RDMA_READ);
		assert_int_equal(rcv1(&p, &pkt), -EINVAL);
		/* a local opcode is no request */
		pkt = write_pkt(&p, &src, bytes, 64, 0);
		pkt.h.op = rdmarw__soft_opcode(IB_WR_LOCAL_INV);
		assert_int_equal(rcv1(&p, &pkt), -EINVAL);
		/* longer than a message may be */
		pkt = write_pkt(&p, &src, bytes, 64, 0);
		pkt.h.length = (1ULL << 31) + 1;
		assert_int_equal(rcv1(&p, &pkt), -EINVAL);
		/* a payload shorter than the header says */
		pkt = write_pkt(&p, &src, bytes, 64, 0);
		short_src = src;
		short_src.len = 32;
		pkt.pay.rg = &short_src;
		assert_int_equal(rcv1(&p, &pkt), -EINVAL);
		/* a payload with no regions */
		pkt = write_pkt(&p, &src, bytes, 64, 0);
		pkt.pay.n = 0;
		assert_int_equal(rcv1(&p, &pkt), -EINVAL);
		/* a NAK with no fault, and one beyond the last */
		pkt = (struct soft_pkt){ .h = { .kind = SOFT_PKT_NAK } };
		assert_int_equal(rdmarw__soft_rcv(to_sqp(p.env.qp[0]), &pkt),
				 -EINVAL);
		pkt.h.syndrome = SOFT_F_NR;
		assert_int_equal(rdmarw__soft_rcv(to_sqp(p.env.qp[0]), &pkt),
				 -EINVAL);
		assert_int_equal(rdmarw__soft_rcv(NULL, &pkt), -EINVAL);
		assert_int_equal(rdmarw__soft_rcv(to_sqp(p.env.qp[0]), NULL),
				 -EINVAL);

		/* Nothing was touched: bytes, states, queues. */
		assert_memory_equal(p.buf[1], before, LEN);
		assert_int_equal(to_sqp(p.env.qp[0])->comp_fault, SOFT_OK);
		assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_RTS);
		assert_int_equal(soft_env_state(p.env.qp[1]), IB_QPS_RTS);
		soft_env_expect_empty(p.env.cq[0]);
		soft_env_expect_empty(p.env.cq[1]);
		/* and the pair still works */
		assert_int_equal(soft_env_rdma(p.env.qp[0], IB_WR_RDMA_WRITE, 1,
					       p.buf[0], 64, p.mr[0]->lkey,
					       (u64)(uintptr_t)p.buf[1],
					       p.mr[1]->rkey),
				 0);
		soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS,
				IB_WC_RDMA_WRITE);
		assert_memory_equal(p.buf[1], p.buf[0], 64);
		soft_pair_fini(&p);
	}
}

/* A READ response that answers no READ in flight is ignored. */
static void test_stray_read_response(void **state)
{
	u8 bytes[64], before[LEN];
	struct soft_region src;
	struct soft_pkt pkt;
	struct soft_pair p;
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		pair_up(&p, profiles[i]);
		memset(bytes, 0x3c, sizeof(bytes));
		memcpy(before, p.buf[0], LEN);
		src = (struct soft_region){ .dev = to_sdev(p.env.dev[1]),
					    .addr = (u64)(uintptr_t)bytes,
					    .len = sizeof(bytes),
					    .cpu = bytes };
		pkt = (struct soft_pkt){
			.h = { .kind = SOFT_PKT_READ_RESP,
			       .seq = 0,
			       .length = sizeof(bytes) },
			.pay = { .rg = &src, .n = 1 },
		};
		assert_int_equal(rdmarw__soft_rcv(to_sqp(p.env.qp[0]), &pkt),
				 0);
		assert_memory_equal(p.buf[0], before, LEN);
		assert_int_equal(to_sqp(p.env.qp[0])->comp_fault, SOFT_OK);
		soft_env_expect_empty(p.env.cq[0]);
		soft_pair_fini(&p);
	}
}

/*
 * RNR resumes by a message: a SEND that found no receive waits (rxe); a
 * SOFT_PKT_RESUME delivered to its QP runs the Send Queue again (it stalls
 * again: still no receive), and the receive's post resumes it through the
 * same message, and the SEND lands.
 */
static void test_resume_message(void **state)
{
	struct soft_pkt resume = { .h = { .kind = SOFT_PKT_RESUME } };
	struct soft_stats st;
	struct soft_pair p;
	struct ib_wc wc;

	(void)state;
	soft_pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" }, LEN,
		       0x20);
	assert_int_equal(
		soft_env_send(p.env.qp[0], 1, p.buf[0], 32, p.mr[0]->lkey), 0);
	assert_int_equal(soft_device_stats(p.env.dev[0], &st), 0);
	assert_int_equal(st.rnr_stalls, 1);
	soft_env_expect_empty(p.env.cq[0]);
	resume.h.src_qpn = p.env.qp[1]->qp_num;
	assert_int_equal(rdmarw__soft_rcv(to_sqp(p.env.qp[0]), &resume), 0);
	assert_int_equal(soft_device_stats(p.env.dev[0], &st), 0);
	assert_int_equal(st.rnr_stalls, 2);
	soft_env_expect_empty(p.env.cq[0]);
	soft_env_post_recv(p.env.qp[1], 2, p.buf[1], 64, p.mr[1]->lkey);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_SEND);
	soft_env_poll(p.env.cq[1], 1, &wc);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 32);
	assert_memory_equal(p.buf[1], p.buf[0], 32);
	soft_pair_fini(&p);
}

static struct ib_qp *third_qp(struct soft_env *env)
{
	struct ib_qp_init_attr qa = {
		.send_cq = env->cq[0],
		.recv_cq = env->cq[0],
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp *qp = ib_create_qp(env->pd[0], &qa);

	assert_false(IS_ERR(qp));
	return qp;
}

static int to_rtr(struct ib_qp *qp, u32 dest)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	int ret;

	if (qp->state == IB_QPS_RESET) {
		ret = ib_modify_qp(qp, &attr, INIT_MASK);
		if (ret)
			return ret;
	}
	attr.qp_state = IB_QPS_RTR;
	attr.dest_qp_num = dest;
	return ib_modify_qp(qp, &attr, RTR_MASK);
}

/*
 * The loopback's wire is a pair (the responder answers through its own
 * link): with A linked to B, B links only to A, and nobody else links to
 * A.  Without the rule B could link to C, and B's answers to A's requests
 * would reach C's completer.
 */
static void test_link_is_a_pair(void **state)
{
	struct soft_env env;
	struct ib_qp *a, *b, *c;

	(void)state;
	soft_env_init(&env, &(struct soft_env_cfg){ .no_connect = true });
	a = env.qp[0];
	b = env.qp[1];
	c = third_qp(&env);
	assert_int_equal(to_rtr(a, b->qp_num), 0);
	assert_int_equal(to_rtr(b, c->qp_num), -EINVAL);
	assert_int_equal(to_rtr(c, a->qp_num), -EINVAL);
	assert_int_equal(soft_env_state(b), IB_QPS_INIT);
	assert_int_equal(soft_env_state(c), IB_QPS_INIT);
	assert_int_equal(to_rtr(b, a->qp_num), 0);
	assert_ptr_equal(to_sqp(a)->peer, to_sqp(b));
	assert_ptr_equal(to_sqp(b)->peer, to_sqp(a));
	assert_null(to_sqp(c)->peer);
	assert_int_equal(ib_destroy_qp(c), 0);
	soft_env_fini(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_from_header),
		cmocka_unit_test(test_bad_rkey_answers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_stray_read_response),
		cmocka_unit_test(test_link_is_a_pair),
		cmocka_unit_test(test_resume_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

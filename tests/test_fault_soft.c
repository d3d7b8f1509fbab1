// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection of the software device (soft.h, soft_fault.c): argument
 * checks, each rule type with the exact completions, states, bytes and
 * bad_wr it must give, opcode filters, seeded rates that repeat, count
 * limits, Send Queue depth limits, stalls (inline and threaded), device
 * rules over several QPs and failing MR allocations under ib_create_qp().
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <rdmarw/mr_pool.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define LEN 4096
#define CHUNK 64
#define ALL_ACCESS SOFT_PAIR_ACCESS

static void pair_init(struct soft_pair *p, const struct soft_env_cfg *cfg)
{
	soft_pair_init(p, cfg, LEN, 0x10);
}

/*
 * WR @i: a WRITE of CHUNK bytes from buf[0] chunk @i (filled with 0xa0 + i)
 * to buf[1] chunk @i, wr_id @i.
 */
static void make_write(struct soft_pair *p, struct ib_rdma_wr *wr,
		       struct ib_sge *sge, int i, bool signaled)
{
	memset(p->buf[0] + i * CHUNK, 0xa0 + i, CHUNK);
	*sge = (struct ib_sge){ (uintptr_t)p->buf[0] + i * CHUNK, CHUNK,
				p->mr[0]->lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr.wr_id = (u64)i;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->wr.opcode = IB_WR_RDMA_WRITE;
	wr->wr.send_flags = signaled ? IB_SEND_SIGNALED : 0;
	wr->remote_addr = (uintptr_t)p->buf[1] + i * CHUNK;
	wr->rkey = p->mr[1]->rkey;
}

/* Link @n WRs (signaled as @sig says) and post them; returns the errno. */
static int post_chain(struct soft_pair *p, struct ib_rdma_wr *wr,
		      struct ib_sge *sge, int n, const bool *sig,
		      const struct ib_send_wr **bad)
{
	int i;

	for (i = 0; i < n; i++) {
		make_write(p, &wr[i], &sge[i], i, sig ? sig[i] : true);
		wr[i].wr.next = i + 1 < n ? &wr[i + 1].wr : NULL;
	}
	return ib_post_send(p->env.qp[0], &wr[0].wr, bad);
}

/* Did chunk @i reach buf[1]? */
static bool chunk_moved(struct soft_pair *p, int i)
{
	u8 want[CHUNK];

	memset(want, 0xa0 + i, CHUNK);
	return !memcmp(p->buf[1] + i * CHUNK, want, CHUNK);
}

static void assert_chunk_untouched(struct soft_pair *p, int i)
{
	u8 want[CHUNK];

	memset(want, 0x11, CHUNK);
	assert_memory_equal(p->buf[1] + i * CHUNK, want, CHUNK);
}

static struct soft_fault_stats qp_stats(struct ib_qp *qp)
{
	struct soft_fault_stats st;

	assert_int_equal(soft_fault_qp_stats(qp, &st), 0);
	return st;
}

static struct soft_fault_stats dev_stats(struct ib_device *dev)
{
	struct soft_fault_stats st;

	assert_int_equal(soft_fault_device_stats(dev, &st), 0);
	return st;
}

/* ---- arguments ---------------------------------------------------------- */

static void test_arm_args(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_WC,
				     .nth = 1,
				     .status = IB_WC_REM_ACCESS_ERR };
	struct soft_fault_rule bad;
	struct soft_fault_stats st;
	struct soft_pair p;
	struct ib_qp *qp;
	int i;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	qp = p.env.qp[0];
	assert_int_equal(soft_fault_arm_qp(NULL, &r), -EINVAL);
	assert_int_equal(soft_fault_arm_qp(qp, NULL), -EINVAL);
	assert_int_equal(soft_fault_arm_device(NULL, &r), -EINVAL);
	bad = r;
	bad.type = SOFT_FAULT_NR;
	assert_int_equal(soft_fault_arm_qp(qp, &bad), -EINVAL);
	bad = r;
	bad.type = SOFT_FAULT_ALLOC_MR; /* a device rule */
	assert_int_equal(soft_fault_arm_qp(qp, &bad), -EINVAL);
	bad = r;
	bad.nth = 0; /* and ppm 0 */
	assert_int_equal(soft_fault_arm_qp(qp, &bad), -EINVAL);
	bad.ppm = SOFT_FAULT_PPM_ALL + 1;
	assert_int_equal(soft_fault_arm_qp(qp, &bad), -EINVAL);
	bad = r;
	bad.status = IB_WC_SUCCESS;
	assert_int_equal(soft_fault_arm_qp(qp, &bad), -EINVAL);
	bad.status = IB_WC_FATAL_ERR; /* never reported by the device */
	assert_int_equal(soft_fault_arm_qp(qp, &bad), -EINVAL);
	bad = r;
	bad.type = SOFT_FAULT_POST;
	bad.err = 5;
	assert_int_equal(soft_fault_arm_qp(qp, &bad), -EINVAL);
	assert_int_equal(soft_fault_sq_depth(qp, qp->cap.max_send_wr + 1),
			 -EINVAL);
	assert_int_equal(soft_fault_sq_depth(NULL, 1), -EINVAL);
	assert_int_equal(soft_fault_resume(NULL), -EINVAL);
	assert_int_equal(soft_fault_clear_qp(NULL), -EINVAL);
	assert_int_equal(soft_fault_clear_device(NULL), -EINVAL);
	assert_int_equal(soft_fault_qp_stats(qp, NULL), -EINVAL);
	assert_int_equal(soft_fault_device_stats(NULL, &st), -EINVAL);

	for (i = 0; i < SOFT_FAULT_MAX_RULES; i++)
		assert_int_equal(soft_fault_arm_qp(qp, &r), 0);
	assert_int_equal(soft_fault_arm_qp(qp, &r), -ENOSPC);
	assert_int_equal(qp_stats(qp).armed, SOFT_FAULT_MAX_RULES);
	assert_int_equal(soft_fault_clear_qp(qp), 0);
	assert_int_equal(qp_stats(qp).armed, 0);
	bad = r;
	bad.type = SOFT_FAULT_ALLOC_MR;
	assert_int_equal(soft_fault_arm_device(p.env.dev[0], &bad), 0);
	assert_int_equal(dev_stats(p.env.dev[0]).armed, 1);
	assert_int_equal(soft_fault_clear_device(p.env.dev[0]), 0);
	assert_int_equal(dev_stats(p.env.dev[0]).armed, 0);
	soft_pair_fini(&p);
}

/* ---- completion status -------------------------------------------------- */

/* The 3rd WR fails with the chosen status; the rest flush; bytes follow. */
static void test_wc_nth(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_WC,
				     .nth = 3,
				     .status = IB_WC_REM_ACCESS_ERR };
	struct ib_rdma_wr wr[5];
	struct ib_sge sge[5];
	struct soft_pair p;
	int i;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "mlx5" });
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	for (i = 0; i < 5; i++) {
		make_write(&p, &wr[i], &sge[i], i, true);
		assert_int_equal(ib_post_send(p.env.qp[0], &wr[i].wr, NULL), 0);
	}
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 2, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 3, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 4, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	assert_true(chunk_moved(&p, 0));
	assert_true(chunk_moved(&p, 1));
	for (i = 2; i < 5; i++)
		assert_chunk_untouched(&p, i);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_ERR);
	assert_int_equal(soft_env_state(p.env.qp[1]), IB_QPS_RTS);
	assert_int_equal(qp_stats(p.env.qp[0]).fired[SOFT_FAULT_WC], 1);
	assert_int_equal(qp_stats(p.env.qp[0]).armed, 0); /* spent */
	assert_int_equal(dev_stats(p.env.dev[0]).fired[SOFT_FAULT_WC], 1);
	assert_int_equal(dev_stats(p.env.dev[1]).fired[SOFT_FAULT_WC], 0);
	soft_pair_fini(&p);
}

/* An unsignaled WR in the middle of a chain still reports its error. */
static void test_wc_unsignaled(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_WC,
				     .nth = 2,
				     .status = IB_WC_LOC_PROT_ERR };
	const bool sig[3] = { false, false, true };
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[3];
	struct ib_sge sge[3];
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "siw" });
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	assert_int_equal(post_chain(&p, wr, sge, 3, sig, &bad), 0);
	soft_env_expect(p.env.cq[0], 1, IB_WC_LOC_PROT_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 2, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	assert_true(chunk_moved(&p, 0));
	assert_chunk_untouched(&p, 1);
	assert_chunk_untouched(&p, 2);
	soft_pair_fini(&p);
}

/* Only READs count: the WRITE before passes, the READ fails. */
static void test_opcode_filter(void **state)
{
	struct soft_fault_rule r = {
		.type = SOFT_FAULT_WC,
		.nth = 1,
		.opcodes = 1ULL << IB_WR_RDMA_READ,
		.status = IB_WC_RETRY_EXC_ERR,
	};
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	make_write(&p, &wr, &sge, 0, true);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_int_equal(soft_env_rdma(p.env.qp[0], IB_WR_RDMA_READ, 7,
				       p.buf[0] + 1024, CHUNK, p.mr[0]->lkey,
				       (uintptr_t)p.buf[1], p.mr[1]->rkey),
			 0);
	soft_env_expect(p.env.cq[0], 7, IB_WC_RETRY_EXC_ERR, IB_WC_RDMA_READ);
	assert_int_equal(p.buf[0][1024], 0x10); /* nothing was read */
	soft_pair_fini(&p);
}

/* ---- QP to ERR between two WRs ------------------------------------------ */

static void test_qp_err_between(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_QP_ERR, .nth = 2 };
	const bool sig[3] = { true, false, true };
	struct ib_rdma_wr wr[3];
	struct ib_sge sge[3];
	u8 rbuf[16];
	struct ib_mr *rmr;
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "mlx5" });
	rmr = soft_env_reg(&p.env, 0, rbuf, sizeof(rbuf), ALL_ACCESS);
	soft_env_post_recv(p.env.qp[0], 99, rbuf, sizeof(rbuf), rmr->lkey);
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	assert_int_equal(post_chain(&p, wr, sge, 3, sig, NULL), 0);
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	/* The receive was flushed when the QP moved to ERR. */
	soft_env_expect(p.env.cq[0], 99, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	soft_env_expect(p.env.cq[0], 1, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 2, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	assert_true(chunk_moved(&p, 0));
	assert_chunk_untouched(&p, 1);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_ERR);
	assert_int_equal(qp_stats(p.env.qp[0]).fired[SOFT_FAULT_QP_ERR], 1);
	soft_env_dereg(rmr);
	soft_pair_fini(&p);
}

/* ---- posting fails part-way --------------------------------------------- */

static void test_post_partway(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_POST, .nth = 2 };
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[3];
	struct ib_sge sge[3];
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	assert_int_equal(post_chain(&p, wr, sge, 3, NULL, &bad), -ENOMEM);
	assert_ptr_equal(bad, &wr[1].wr);
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	assert_true(chunk_moved(&p, 0));
	assert_chunk_untouched(&p, 1);
	/* Spent: the same chain goes through now; another errno next. */
	r.err = -EIO;
	r.nth = 3;
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	assert_int_equal(post_chain(&p, wr, sge, 3, NULL, &bad), -EIO);
	assert_ptr_equal(bad, &wr[2].wr);
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_RTS);
	assert_int_equal(qp_stats(p.env.qp[0]).fired[SOFT_FAULT_POST], 2);
	soft_pair_fini(&p);
}

/* A seeded rate gives the same faults for the same seed, others not. */
static u64 rate_pattern(struct soft_pair *p, u64 seed, u32 *fails)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_POST,
				     .ppm = 250000,
				     .seed = seed };
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	u64 bits = 0;
	int i, ret;

	*fails = 0;
	assert_int_equal(soft_fault_arm_qp(p->env.qp[0], &r), 0);
	for (i = 0; i < 64; i++) {
		make_write(p, &wr, &sge, 0, true);
		ret = ib_post_send(p->env.qp[0], &wr.wr, NULL);
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			bits |= 1ULL << i;
			(*fails)++;
			continue;
		}
		soft_env_expect(p->env.cq[0], 0, IB_WC_SUCCESS,
				IB_WC_RDMA_WRITE);
	}
	assert_int_equal(soft_fault_clear_qp(p->env.qp[0]), 0);
	return bits;
}

static void test_rate_repeats(void **state)
{
	struct soft_pair p;
	u64 a, b, c;
	u32 fa, fb, fc;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	a = rate_pattern(&p, 42, &fa);
	b = rate_pattern(&p, 42, &fb);
	c = rate_pattern(&p, 43, &fc);
	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
	/* 25% of 64: the seeded draws land near 16, never 0 or 64. */
	assert_in_range(fa, 4, 32);
	assert_int_equal(qp_stats(p.env.qp[0]).fired[SOFT_FAULT_POST],
			 fa + fb + fc);
	soft_pair_fini(&p);
}

/* count limits a rate rule; the spent rule disarms itself. */
static void test_count_limit(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_POST,
				     .ppm = SOFT_FAULT_PPM_ALL,
				     .count = 2,
				     .err = -EAGAIN };
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "mlx5" });
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	make_write(&p, &wr, &sge, 0, true);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), -EAGAIN);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), -EAGAIN);
	assert_int_equal(qp_stats(p.env.qp[0]).armed, 0);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_pair_fini(&p);
}

/* ---- Send Queue depth ---------------------------------------------------- */

static void test_sq_depth(void **state)
{
	const bool sig[3] = { false, true, false };
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr wr[3];
	struct ib_sge sge[3];
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	assert_int_equal(soft_fault_sq_depth(p.env.qp[0], 2), 0);
	assert_int_equal(post_chain(&p, wr, sge, 3, sig, &bad), -ENOMEM);
	assert_ptr_equal(bad, &wr[2].wr);
	assert_int_equal(qp_stats(p.env.qp[0]).sq_full, 1);
	assert_int_equal(dev_stats(p.env.dev[0]).sq_full, 1);
	/* Still full until the signaled completion is polled. */
	make_write(&p, &wr[2], &sge[2], 2, true);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[2].wr, &bad), -ENOMEM);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[2].wr, &bad), 0);
	soft_env_expect(p.env.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	/* 0 lifts the limit: the QP's own depth applies again. */
	assert_int_equal(soft_fault_sq_depth(p.env.qp[0], 0), 0);
	assert_int_equal(post_chain(&p, wr, sge, 3, NULL, &bad), 0);
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_pair_fini(&p);
}

/* ---- stalls ------------------------------------------------------------- */

static void stall_case(bool threaded, bool clear)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_STALL, .nth = 2 };
	struct soft_env_cfg cfg = { .profile = "rxe", .threaded = threaded };
	struct ib_rdma_wr wr[3];
	struct ib_sge sge[3];
	struct ib_wc wc[2];
	struct soft_pair p;

	pair_init(&p, &cfg);
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	assert_int_equal(post_chain(&p, wr, sge, 3, NULL, NULL), 0);
	soft_env_poll(p.env.cq[0], 1, wc);
	assert_int_equal(wc[0].wr_id, 0);
	assert_int_equal(wc[0].status, IB_WC_SUCCESS);
	/* A progress thread reaches the stall after completing WR 0. */
	while (threaded && !qp_stats(p.env.qp[0]).stalled)
		sched_yield();
	assert_true(qp_stats(p.env.qp[0]).stalled);
	if (!threaded)
		soft_env_expect_empty(p.env.cq[0]);
	assert_chunk_untouched(&p, 1);
	if (clear)
		assert_int_equal(soft_fault_clear_qp(p.env.qp[0]), 0);
	else
		assert_int_equal(soft_fault_resume(p.env.qp[0]), 0);
	assert_false(qp_stats(p.env.qp[0]).stalled);
	soft_env_poll(p.env.cq[0], 2, wc);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, IB_WC_SUCCESS);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].status, IB_WC_SUCCESS);
	assert_true(chunk_moved(&p, 1));
	assert_true(chunk_moved(&p, 2));
	/* Resuming a queue that is not stalled does nothing. */
	assert_int_equal(soft_fault_resume(p.env.qp[0]), 0);
	assert_int_equal(qp_stats(p.env.qp[0]).fired[SOFT_FAULT_STALL], 1);
	soft_pair_fini(&p);
}

static void test_stall_inline(void **state)
{
	stall_case(false, false);
}

static void test_stall_threaded(void **state)
{
	stall_case(true, false);
}

static void test_stall_cleared(void **state)
{
	stall_case(false, true);
}

/* A stalled queue moved to ERR flushes what waits. */
static void test_stall_then_err(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_STALL, .nth = 1 };
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_rdma_wr wr[2];
	struct ib_sge sge[2];
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "siw" });
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &r), 0);
	assert_int_equal(post_chain(&p, wr, sge, 2, NULL, NULL), 0);
	soft_env_expect_empty(p.env.cq[0]);
	assert_int_equal(ib_modify_qp(p.env.qp[0], &a, IB_QP_STATE), 0);
	soft_env_expect(p.env.cq[0], 0, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 1, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	assert_chunk_untouched(&p, 0);
	assert_int_equal(soft_fault_clear_qp(p.env.qp[0]), 0);
	soft_pair_fini(&p);
}

/* ---- device rules ------------------------------------------------------- */

/* One count over both QPs of a loopback device. */
static void test_device_rule(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_WC,
				     .nth = 2,
				     .status = IB_WC_GENERAL_ERR };
	struct soft_env_cfg cfg = { .profile = "mlx5", .loopback = true };
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init(&p, &cfg);
	assert_ptr_equal(p.env.dev[0], p.env.dev[1]);
	assert_int_equal(soft_fault_arm_device(p.env.dev[0], &r), 0);
	make_write(&p, &wr, &sge, 0, true);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 0, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	/* The peer's WRITE is event 2. */
	assert_int_equal(soft_env_rdma(p.env.qp[1], IB_WR_RDMA_WRITE, 5,
				       p.buf[1], CHUNK, p.mr[1]->lkey,
				       (uintptr_t)p.buf[0] + 2048,
				       p.mr[0]->rkey),
			 0);
	soft_env_expect(p.env.cq[1], 5, IB_WC_GENERAL_ERR, IB_WC_RDMA_WRITE);
	assert_int_equal(soft_env_state(p.env.qp[1]), IB_QPS_ERR);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_RTS);
	assert_int_equal(qp_stats(p.env.qp[1]).fired[SOFT_FAULT_WC], 1);
	assert_int_equal(qp_stats(p.env.qp[0]).fired[SOFT_FAULT_WC], 0);
	assert_int_equal(dev_stats(p.env.dev[0]).fired[SOFT_FAULT_WC], 1);
	assert_int_equal(dev_stats(p.env.dev[0]).armed, 0);
	soft_pair_fini(&p);
}

/* QP rules come before device rules; the first to fire decides. */
static void test_rule_order(void **state)
{
	struct soft_fault_rule q = { .type = SOFT_FAULT_WC,
				     .nth = 1,
				     .status = IB_WC_REM_OP_ERR };
	struct soft_fault_rule d = { .type = SOFT_FAULT_WC,
				     .nth = 1,
				     .status = IB_WC_LOC_LEN_ERR };
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct soft_pair p;

	pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" });
	assert_int_equal(soft_fault_arm_device(p.env.dev[0], &d), 0);
	assert_int_equal(soft_fault_arm_qp(p.env.qp[0], &q), 0);
	make_write(&p, &wr, &sge, 0, true);
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 0, IB_WC_REM_OP_ERR, IB_WC_RDMA_WRITE);
	/* The device rule did not see that WR: still armed. */
	assert_int_equal(dev_stats(p.env.dev[0]).armed, 1);
	assert_int_equal(soft_fault_clear_device(p.env.dev[0]), 0);
	soft_pair_fini(&p);
}

/* ---- MR allocation ------------------------------------------------------ */

static void test_alloc_mr(void **state)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_ALLOC_MR,
				     .nth = 3,
				     .err = -EIO };
	struct ib_qp_init_attr a = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 8 },
	};
	struct soft_stats before, after;
	struct soft_env env;
	struct ib_qp *qp;

	/* siw: the R/W API uses MRs, so ib_create_qp() fills a pool. */
	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "siw" });
	a.send_cq = a.recv_cq = env.cq[0];
	assert_int_equal(soft_device_stats(env.dev[0], &before), 0);
	assert_int_equal(soft_fault_arm_device(env.dev[0], &r), 0);
	qp = ib_create_qp(env.pd[0], &a);
	assert_true(IS_ERR(qp));
	assert_int_equal(PTR_ERR(qp), -EIO);
	assert_int_equal(soft_device_stats(env.dev[0], &after), 0);
	assert_int_equal(after.mrs, before.mrs);
	assert_int_equal(after.qps, before.qps);
	assert_int_equal(dev_stats(env.dev[0]).fired[SOFT_FAULT_ALLOC_MR], 1);
	/* Spent: the next QP gets its whole pool. */
	a.cap.max_send_wr = 16;
	qp = ib_create_qp(env.pd[0], &a);
	assert_false(IS_ERR(qp));
	assert_int_equal(ib_mr_pool_count(qp, &qp->rdma_mrs), 8);
	assert_int_equal(ib_destroy_qp(qp), 0);
	soft_env_fini(&env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm_args),
		cmocka_unit_test(test_wc_nth),
		cmocka_unit_test(test_wc_unsignaled),
		cmocka_unit_test(test_opcode_filter),
		cmocka_unit_test(test_qp_err_between),
		cmocka_unit_test(test_post_partway),
		cmocka_unit_test(test_rate_repeats),
		cmocka_unit_test(test_count_limit),
		cmocka_unit_test(test_sq_depth),
		cmocka_unit_test(test_stall_inline),
		cmocka_unit_test(test_stall_threaded),
		cmocka_unit_test(test_stall_cleared),
		cmocka_unit_test(test_stall_then_err),
		cmocka_unit_test(test_device_rule),
		cmocka_unit_test(test_rule_order),
		cmocka_unit_test(test_alloc_mr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

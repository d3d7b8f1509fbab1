// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every enforcement rule of the software device, triggered once: the exact
 * completion status on both sides, and the QP states afterwards.
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

#define LEN 4096
#define ALL_ACCESS SOFT_PAIR_ACCESS

/* A pair with a buffer and an all-rights MR on each side. */
static void pair_init(struct soft_pair *p, const char *profile)
{
	soft_pair_init(p, &(struct soft_env_cfg){ .profile = profile }, LEN,
		       -1);
}

static void expect_states(struct soft_pair *p, enum ib_qp_state s0,
			  enum ib_qp_state s1)
{
	assert_int_equal(soft_env_state(p->env.qp[0]), s0);
	assert_int_equal(soft_env_state(p->env.qp[1]), s1);
}

/* WRITE from side 0 to side 1 at @raddr/@rkey with local @lkey. */
static void write_expect(struct soft_pair *p, u32 lkey, void *src, u64 raddr,
			 u32 rkey, u32 len, enum ib_wc_status st)
{
	assert_int_equal(soft_env_rdma(p->env.qp[0], IB_WR_RDMA_WRITE, 7, src,
				       len, lkey, raddr, rkey),
			 0);
	soft_env_expect(p->env.cq[0], 7, st, IB_WC_RDMA_WRITE);
}

static void read_expect(struct soft_pair *p, u32 lkey, void *dst, u64 raddr,
			u32 rkey, u32 len, enum ib_wc_status st)
{
	assert_int_equal(soft_env_rdma(p->env.qp[0], IB_WR_RDMA_READ, 8, dst,
				       len, lkey, raddr, rkey),
			 0);
	soft_env_expect(p->env.cq[0], 8, st, IB_WC_RDMA_READ);
}

/* ---- local protection --------------------------------------------------- */

static void test_bad_lkey(void **state)
{
	struct soft_pair p;

	pair_init(&p, "rxe");
	write_expect(&p, p.mr[0]->lkey ^ 0x100, p.buf[0], (uintptr_t)p.buf[1],
		     p.mr[1]->rkey, 64, IB_WC_LOC_PROT_ERR);
	/* A local error stops only the requester. */
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_env_expect_empty(p.env.cq[1]);
	soft_pair_fini(&p);
}

static void test_stale_lkey_variant(void **state)
{
	struct soft_pair p;

	pair_init(&p, "mlx5");
	write_expect(&p, ib_inc_rkey(p.mr[0]->lkey), p.buf[0],
		     (uintptr_t)p.buf[1], p.mr[1]->rkey, 64,
		     IB_WC_LOC_PROT_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_pair_fini(&p);
}

static void test_lkey_bounds(void **state)
{
	struct soft_pair p;

	pair_init(&p, "rxe");
	/* One byte past the MR. */
	write_expect(&p, p.mr[0]->lkey, p.buf[0] + 1, (uintptr_t)p.buf[1],
		     p.mr[1]->rkey, LEN, IB_WC_LOC_PROT_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_pair_fini(&p);
}

static void test_lkey_other_pd(void **state)
{
	struct soft_pair p;
	struct ib_pd *pd;
	struct ib_mr *mr;

	pair_init(&p, "siw");
	pd = ib_alloc_pd(p.env.dev[0], 0);
	assert_false(IS_ERR(pd));
	mr = ib_reg_user_mr(pd, (uintptr_t)p.buf[0], LEN, (uintptr_t)p.buf[0],
			    ALL_ACCESS);
	assert_false(IS_ERR(mr));
	write_expect(&p, mr->lkey, p.buf[0], (uintptr_t)p.buf[1], p.mr[1]->rkey,
		     64, IB_WC_LOC_PROT_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dealloc_pd(pd), 0);
	soft_pair_fini(&p);
}

static void test_local_dma_key_null(void **state)
{
	struct soft_pair p;

	pair_init(&p, "rxe");
	write_expect(&p, p.env.pd[0]->local_dma_lkey, (void *)16,
		     (uintptr_t)p.buf[1], p.mr[1]->rkey, 64,
		     IB_WC_LOC_PROT_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_pair_fini(&p);
}

/* A READ sink needs LOCAL_WRITE. */
static void test_read_sink_needs_local_write(void **state)
{
	struct soft_pair p;
	struct ib_mr *ro;

	pair_init(&p, "rxe");
	ro = soft_env_reg(&p.env, 0, p.buf[0], LEN, 0);
	memset(p.buf[1], 0x5a, 64);
	read_expect(&p, ro->lkey, p.buf[0], (uintptr_t)p.buf[1], p.mr[1]->rkey,
		    64, IB_WC_LOC_PROT_ERR);
	assert_int_equal(p.buf[0][0], 0); /* nothing placed */
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_env_dereg(ro);
	soft_pair_fini(&p);
}

/* iWARP: the sink must be remotely writable; the local DMA key is not. */
static void test_siw_read_sink_rules(void **state)
{
	struct soft_pair p;
	struct ib_mr *lw;

	pair_init(&p, "siw");
	read_expect(&p, p.env.pd[0]->local_dma_lkey, p.buf[0],
		    (uintptr_t)p.buf[1], p.mr[1]->rkey, 64, IB_WC_LOC_PROT_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_pair_fini(&p);

	pair_init(&p, "siw");
	lw = soft_env_reg(&p.env, 0, p.buf[0], LEN, IB_ACCESS_LOCAL_WRITE);
	read_expect(&p, lw->lkey, p.buf[0], (uintptr_t)p.buf[1], p.mr[1]->rkey,
		    64, IB_WC_LOC_PROT_ERR);
	soft_env_dereg(lw);
	soft_pair_fini(&p);

	/* An MR with REMOTE_WRITE is a good sink. */
	pair_init(&p, "siw");
	memset(p.buf[1], 0x33, 64);
	read_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		    p.mr[1]->rkey, 64, IB_WC_SUCCESS);
	assert_int_equal(p.buf[0][63], 0x33);
	expect_states(&p, IB_QPS_RTS, IB_QPS_RTS);
	soft_pair_fini(&p);

	/* On InfiniBand/RoCE the local DMA key is a fine sink. */
	pair_init(&p, "mlx5");
	memset(p.buf[1], 0x44, 64);
	read_expect(&p, p.env.pd[0]->local_dma_lkey, p.buf[0],
		    (uintptr_t)p.buf[1], p.mr[1]->rkey, 64, IB_WC_SUCCESS);
	assert_int_equal(p.buf[0][0], 0x44);
	soft_pair_fini(&p);
}

/* ---- remote access ------------------------------------------------------ */

/* A remote error stops both sides; the responder's receives flush. */
static void test_bad_rkey(void **state)
{
	struct soft_pair p;
	u8 rbuf[8];

	pair_init(&p, "rxe");
	soft_env_post_recv(p.env.qp[1], 100, rbuf, sizeof(rbuf),
			   p.env.pd[1]->local_dma_lkey);
	write_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		     p.mr[1]->rkey + 0x100, 64, IB_WC_REM_ACCESS_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	soft_env_expect(p.env.cq[1], 100, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	soft_env_expect_empty(p.env.cq[1]);
	soft_pair_fini(&p);
}

/*
 * What the requester sees of a remote access error: the status on
 * InfiniBand and RoCE; on iWARP (siw) a WRITE completed once it was sent
 * and a READ is flushed by the TERMINATE.  Both QPs stop either way.
 */
static enum ib_wc_status rem_access(const char *profile, bool read)
{
	if (strcmp(profile, "siw"))
		return IB_WC_REM_ACCESS_ERR;
	return read ? IB_WC_WR_FLUSH_ERR : IB_WC_SUCCESS;
}

static void test_rkey_cases(void **state)
{
	static const char *const profiles[] = { "mlx5", "rxe", "siw" };
	struct soft_pair p;
	struct ib_mr *ro, *wo;
	size_t i;

	for (i = 0; i < 3; i++) {
		/* Bounds: one byte past the end. */
		pair_init(&p, profiles[i]);
		write_expect(&p, p.mr[0]->lkey, p.buf[0],
			     (uintptr_t)p.buf[1] + 1, p.mr[1]->rkey, LEN,
			     rem_access(profiles[i], false));
		expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
		soft_pair_fini(&p);

		/* Below the start. */
		pair_init(&p, profiles[i]);
		read_expect(&p, p.mr[0]->lkey, p.buf[0],
			    (uintptr_t)p.buf[1] - 1, p.mr[1]->rkey, 8,
			    rem_access(profiles[i], true));
		expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
		soft_pair_fini(&p);

		/* Rights: WRITE to a read-only MR, READ from write-only. */
		pair_init(&p, profiles[i]);
		ro = soft_env_reg(&p.env, 1, p.buf[1], LEN,
				  IB_ACCESS_REMOTE_READ);
		write_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
			     ro->rkey, 8, rem_access(profiles[i], false));
		expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
		soft_env_dereg(ro);
		soft_pair_fini(&p);

		pair_init(&p, profiles[i]);
		wo = soft_env_reg(&p.env, 1, p.buf[1], LEN,
				  IB_ACCESS_LOCAL_WRITE |
					  IB_ACCESS_REMOTE_WRITE);
		read_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
			    wo->rkey, 8, rem_access(profiles[i], true));
		expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
		soft_env_dereg(wo);
		soft_pair_fini(&p);
	}
}

/*
 * iWARP, as the kernel's siw does it: a remote access error reaches the
 * requester only as the TERMINATE that stops its QP.  A WRITE completed
 * once it was sent (SUCCESS when signaled, nothing when not), its bytes
 * never land and the WRs behind it flush; a READ is flushed.  The
 * responder stops too and its receives flush.
 */
static void test_siw_remote_access_terminates(void **state)
{
	struct ib_rdma_wr wr[2];
	struct ib_sge sge[2];
	struct soft_pair p;
	int i;

	pair_init(&p, "siw");
	memset(p.buf[0], 0x77, LEN);
	memset(p.buf[1], 0x11, LEN);
	soft_env_post_recv(p.env.qp[1], 100, NULL, 0, 0);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 2; i++) {
		sge[i] = (struct ib_sge){ (uintptr_t)p.buf[0], 64,
					  p.mr[0]->lkey };
		wr[i].wr.wr_id = 30 + i;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].remote_addr = (uintptr_t)p.buf[1] + 64 * i;
		wr[i].rkey = p.mr[1]->rkey;
	}
	wr[0].rkey ^= 0x100; /* unsignaled and refused */
	wr[0].wr.next = &wr[1].wr;
	wr[1].wr.send_flags = IB_SEND_SIGNALED;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 31, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	soft_env_expect(p.env.cq[1], 100, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	soft_env_expect_empty(p.env.cq[1]);
	for (i = 0; i < 128; i++)
		assert_int_equal(p.buf[1][i], 0x11);
	soft_pair_fini(&p);

	/* signaled: SUCCESS, and still the TERMINATE */
	pair_init(&p, "siw");
	write_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		     p.mr[1]->rkey ^ 0x100, 64, IB_WC_SUCCESS);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	read_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		    p.mr[1]->rkey, 8, IB_WC_WR_FLUSH_ERR);
	soft_pair_fini(&p);

	/* a READ from a bad rkey: flushed */
	pair_init(&p, "siw");
	memset(p.buf[0], 0x77, LEN);
	read_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		    p.mr[1]->rkey ^ 0x100, 64, IB_WC_WR_FLUSH_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	for (i = 0; i < 64; i++)
		assert_int_equal(p.buf[0][i], 0x77);
	soft_pair_fini(&p);
}

/* The local DMA key and an lkey without remote rights are no rkeys. */
static void test_rkey_not_remote(void **state)
{
	struct soft_pair p;
	struct ib_mr *local;

	pair_init(&p, "mlx5");
	write_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		     p.env.pd[1]->local_dma_lkey, 8, IB_WC_REM_ACCESS_ERR);
	soft_pair_fini(&p);

	pair_init(&p, "rxe");
	local = soft_env_reg(&p.env, 1, p.buf[1], LEN, IB_ACCESS_LOCAL_WRITE);
	assert_int_equal(local->rkey, 0); /* as rxe: no remote right */
	assert_int_not_equal(local->lkey, 0);
	read_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		    local->lkey, 8, IB_WC_REM_ACCESS_ERR);
	soft_env_dereg(local);
	soft_pair_fini(&p);
}

/* The responder checks the rkey against its own QP's PD. */
static void test_rkey_other_pd(void **state)
{
	struct soft_pair p;
	struct ib_pd *pd;
	struct ib_mr *mr;

	pair_init(&p, "rxe");
	pd = ib_alloc_pd(p.env.dev[1], 0);
	assert_false(IS_ERR(pd));
	mr = ib_reg_user_mr(pd, (uintptr_t)p.buf[1], LEN, (uintptr_t)p.buf[1],
			    ALL_ACCESS);
	assert_false(IS_ERR(mr));
	write_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1], mr->rkey,
		     8, IB_WC_REM_ACCESS_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dealloc_pd(pd), 0);
	soft_pair_fini(&p);
}

/* IBA C9-88: a zero-length READ or WRITE needs no valid rkey. */
static void test_zero_length_rdma(void **state)
{
	struct soft_pair p;

	pair_init(&p, "rxe");
	write_expect(&p, p.mr[0]->lkey, p.buf[0], 0, 0xdeadbe00, 0,
		     IB_WC_SUCCESS);
	read_expect(&p, p.mr[0]->lkey, p.buf[0], 0, 0xdeadbe00, 0,
		    IB_WC_SUCCESS);
	expect_states(&p, IB_QPS_RTS, IB_QPS_RTS);
	soft_pair_fini(&p);
}

/* WRITE_WITH_IMM with a bad rkey: the consumed receive reports it too. */
static void test_write_imm_bad_rkey(void **state)
{
	struct soft_pair p;
	struct ib_sge sge;
	struct ib_rdma_wr wr = { 0 };

	pair_init(&p, "rxe");
	soft_env_post_recv(p.env.qp[1], 200, NULL, 0, 0);
	soft_env_post_recv(p.env.qp[1], 201, NULL, 0, 0);
	sge = (struct ib_sge){ (uintptr_t)p.buf[0], 8, p.mr[0]->lkey };
	wr.wr.wr_id = 9;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.ex.imm_data = 0x1234;
	wr.remote_addr = (uintptr_t)p.buf[1];
	wr.rkey = p.mr[1]->rkey ^ 0x01;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 9, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[1], 200, IB_WC_LOC_ACCESS_ERR,
			IB_WC_RECV_RDMA_WITH_IMM);
	soft_env_expect(p.env.cq[1], 201, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	soft_pair_fini(&p);
}

/* The responder QP must grant remote access (qp_access_flags). */
static void test_qp_access_flags(void **state)
{
	struct soft_pair p;
	struct ib_qp_attr attr = { .qp_access_flags = IB_ACCESS_REMOTE_READ };

	pair_init(&p, "rxe");
	assert_int_equal(ib_modify_qp(p.env.qp[1], &attr, IB_QP_ACCESS_FLAGS),
			 0);
	read_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		    p.mr[1]->rkey, 8, IB_WC_SUCCESS);
	write_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		     p.mr[1]->rkey, 8, IB_WC_REM_INV_REQ_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	soft_pair_fini(&p);
}

/* ---- SEND --------------------------------------------------------------- */

static void test_send_too_long(void **state)
{
	struct soft_pair p;

	pair_init(&p, "mlx5");
	soft_env_post_recv(p.env.qp[1], 300, p.buf[1], 16, p.mr[1]->lkey);
	assert_int_equal(
		soft_env_send(p.env.qp[0], 10, p.buf[0], 17, p.mr[0]->lkey), 0);
	soft_env_expect(p.env.cq[1], 300, IB_WC_LOC_LEN_ERR, IB_WC_RECV);
	soft_env_expect(p.env.cq[0], 10, IB_WC_REM_INV_REQ_ERR, IB_WC_SEND);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	soft_pair_fini(&p);
}

static void test_send_bad_recv_buffer(void **state)
{
	struct soft_pair p;

	pair_init(&p, "rxe");
	soft_env_post_recv(p.env.qp[1], 301, p.buf[1], 64,
			   p.mr[1]->lkey + 0x300);
	assert_int_equal(
		soft_env_send(p.env.qp[0], 11, p.buf[0], 8, p.mr[0]->lkey), 0);
	soft_env_expect(p.env.cq[1], 301, IB_WC_LOC_PROT_ERR, IB_WC_RECV);
	soft_env_expect(p.env.cq[0], 11, IB_WC_REM_OP_ERR, IB_WC_SEND);
	expect_states(&p, IB_QPS_ERR, IB_QPS_ERR);
	soft_pair_fini(&p);
}

/* ---- flushing ----------------------------------------------------------- */

/* After an error the rest flushes, signaled or not; later posts too. */
static void test_flush_rest(void **state)
{
	struct soft_pair p;
	struct ib_sge sge[3];
	struct ib_rdma_wr wr[3];
	struct ib_send_wr *bad;
	int i;

	pair_init(&p, "rxe");
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		sge[i] = (struct ib_sge){ (uintptr_t)p.buf[0], 8,
					  p.mr[0]->lkey };
		wr[i].wr.wr_id = 20 + i;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].remote_addr = (uintptr_t)p.buf[1];
		wr[i].rkey = p.mr[1]->rkey;
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
	}
	sge[0].lkey ^= 0x200; /* unsignaled and bad */
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr,
				      (const struct ib_send_wr **)&bad),
			 0);
	soft_env_expect(p.env.cq[0], 20, IB_WC_LOC_PROT_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 21, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect(p.env.cq[0], 22, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p.env.cq[0]);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);

	/* Posting on an ERR QP is accepted and flushed, as siw does. */
	wr[2].wr.wr_id = 23;
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[2].wr, NULL), 0);
	soft_env_expect(p.env.cq[0], 23, IB_WC_WR_FLUSH_ERR, IB_WC_RDMA_WRITE);
	soft_env_post_recv(p.env.qp[0], 24, NULL, 0, 0);
	soft_env_expect(p.env.cq[0], 24, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	soft_pair_fini(&p);
}

/* Moving to ERR flushes waiting receives and a stalled SEND. */
static void test_modify_err_flushes(void **state)
{
	struct soft_pair p;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	pair_init(&p, "rxe"); /* siw has no RNR wait (test_soft_queue.c) */
	soft_env_post_recv(p.env.qp[0], 30, NULL, 0, 0);
	assert_int_equal(
		soft_env_send(p.env.qp[0], 31, p.buf[0], 8, p.mr[0]->lkey), 0);
	soft_env_expect_empty(p.env.cq[0]); /* waits for a receive */
	assert_int_equal(ib_modify_qp(p.env.qp[0], &attr, IB_QP_STATE), 0);
	soft_env_expect(p.env.cq[0], 30, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	soft_env_expect(p.env.cq[0], 31, IB_WC_WR_FLUSH_ERR, IB_WC_SEND);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_pair_fini(&p);
}

/* A peer that went away: nobody answers, RETRY_EXC_ERR. */
static void test_peer_gone(void **state)
{
	struct soft_pair p;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	pair_init(&p, "rxe");
	assert_int_equal(ib_modify_qp(p.env.qp[1], &attr, IB_QP_STATE), 0);
	write_expect(&p, p.mr[0]->lkey, p.buf[0], (uintptr_t)p.buf[1],
		     p.mr[1]->rkey, 8, IB_WC_RETRY_EXC_ERR);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RESET);
	soft_pair_fini(&p);
}

struct drain_probe {
	struct ib_cqe cqe;
	int calls;
	enum ib_wc_status status;
};

static void drain_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct drain_probe *d =
		container_of(wc->wr_cqe, struct drain_probe, cqe);

	d->calls++;
	d->status = wc->status;
}

/* ib_drain_qp() returns once both queues are flushed (ib_cqe model). */
static void test_drain(void **state)
{
	struct drain_probe probe = { .cqe.done = drain_probe_done };
	struct ib_recv_wr rwr = { .wr_cqe = &probe.cqe };
	struct soft_pair p;

	pair_init(&p, "mlx5");
	assert_int_equal(ib_post_recv(p.env.qp[0], &rwr, NULL), 0);
	assert_int_equal(ib_drain_qp(p.env.qp[0]), 0);
	assert_int_equal(probe.calls, 1);
	assert_int_equal(probe.status, IB_WC_WR_FLUSH_ERR);
	soft_env_expect_empty(p.env.cq[0]);
	expect_states(&p, IB_QPS_ERR, IB_QPS_RTS);
	soft_pair_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_lkey),
		cmocka_unit_test(test_stale_lkey_variant),
		cmocka_unit_test(test_lkey_bounds),
		cmocka_unit_test(test_lkey_other_pd),
		cmocka_unit_test(test_local_dma_key_null),
		cmocka_unit_test(test_read_sink_needs_local_write),
		cmocka_unit_test(test_siw_read_sink_rules),
		cmocka_unit_test(test_bad_rkey),
		cmocka_unit_test(test_rkey_cases),
		cmocka_unit_test(test_siw_remote_access_terminates),
		cmocka_unit_test(test_rkey_not_remote),
		cmocka_unit_test(test_rkey_other_pd),
		cmocka_unit_test(test_zero_length_rdma),
		cmocka_unit_test(test_write_imm_bad_rkey),
		cmocka_unit_test(test_qp_access_flags),
		cmocka_unit_test(test_send_too_long),
		cmocka_unit_test(test_send_bad_recv_buffer),
		cmocka_unit_test(test_flush_rest),
		cmocka_unit_test(test_modify_err_flushes),
		cmocka_unit_test(test_peer_gone),
		cmocka_unit_test(test_drain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

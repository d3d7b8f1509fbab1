// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The software device's counters (soft_device_stats()): which device a
 * WRITE's and a READ's bytes count on, that every executed WR counts once
 * whatever way it took through the device (the one-step path of a plain
 * one-SGE RDMA, the full path of everything else, a refused WR), and that
 * the bytes arrived.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <string.h>

#define LEN 4096

struct counts {
	u64 wrs[2];
	u64 bytes[2];
};

static void read_counts(struct soft_pair *p, struct counts *c)
{
	struct soft_stats st;
	int i;

	for (i = 0; i < 2; i++) {
		assert_int_equal(soft_device_stats(p->env.dev[i], &st), 0);
		c->wrs[i] = st.wrs_executed;
		c->bytes[i] = st.bytes_moved;
	}
}

/* Run one WR from side 0 and assert what each device counted for it. */
static void expect_counted(struct soft_pair *p, const struct ib_send_wr *wr,
			   enum ib_wc_status status, u64 bytes0, u64 bytes1)
{
	const struct ib_send_wr *bad = NULL;
	struct counts a, b;
	struct ib_wc wc;

	read_counts(p, &a);
	assert_int_equal(ib_post_send(p->env.qp[0], wr, &bad), 0);
	soft_env_poll(p->env.cq[0], 1, &wc);
	assert_int_equal(wc.wr_id, wr->wr_id);
	assert_int_equal(wc.status, status);
	read_counts(p, &b);
	assert_int_equal(b.wrs[0] - a.wrs[0], 1);
	assert_int_equal(b.wrs[1] - a.wrs[1], 0);
	assert_int_equal(b.bytes[0] - a.bytes[0], bytes0);
	assert_int_equal(b.bytes[1] - a.bytes[1], bytes1);
}

static void make_rdma(struct ib_rdma_wr *wr, enum ib_wr_opcode opcode, u64 id,
		      struct ib_sge *sge, int nsge, u64 raddr, u32 rkey)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.wr_id = id;
	wr->wr.opcode = opcode;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = nsge;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	wr->remote_addr = raddr;
	wr->rkey = rkey;
}

static void fill(u8 *b, size_t n, u8 seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (u8)(seed + i * 7);
}

/* WRITE bytes count on the target's device, READ bytes on the reader's. */
static void stats_on_profile(const char *profile, bool threaded)
{
	struct soft_pair p;
	struct ib_rdma_wr wr;
	struct ib_sge sge[2];
	u8 expect[300];
	u32 dma_lkey;

	soft_pair_init(&p,
		       &(struct soft_env_cfg){ .profile = profile,
					       .threaded = threaded },
		       LEN, 0);
	dma_lkey = p.env.pd[0]->local_dma_lkey;
	/* one SGE under the local DMA key */
	fill(p.buf[0], 100, 1);
	sge[0] = (struct ib_sge){ (uintptr_t)p.buf[0], 100, dma_lkey };
	make_rdma(&wr, IB_WR_RDMA_WRITE, 1, sge, 1, (uintptr_t)p.buf[1] + 8,
		  p.mr[1]->rkey);
	expect_counted(&p, &wr.wr, IB_WC_SUCCESS, 0, 100);
	assert_memory_equal(p.buf[1] + 8, p.buf[0], 100);
	/* one SGE under a user MR's lkey */
	fill(p.buf[0] + 512, 64, 2);
	sge[0] =
		(struct ib_sge){ (uintptr_t)p.buf[0] + 512, 64, p.mr[0]->lkey };
	make_rdma(&wr, IB_WR_RDMA_WRITE, 2, sge, 1, (uintptr_t)p.buf[1] + 1024,
		  p.mr[1]->rkey);
	expect_counted(&p, &wr.wr, IB_WC_SUCCESS, 0, 64);
	assert_memory_equal(p.buf[1] + 1024, p.buf[0] + 512, 64);
	/* two SGEs: the full path counts the same way */
	fill(p.buf[0] + 2048, 300, 3);
	sge[0] = (struct ib_sge){ (uintptr_t)p.buf[0] + 2048, 120, dma_lkey };
	sge[1] = (struct ib_sge){ (uintptr_t)p.buf[0] + 2200, 180, dma_lkey };
	memcpy(expect, p.buf[0] + 2048, 120);
	memcpy(expect + 120, p.buf[0] + 2200, 180);
	make_rdma(&wr, IB_WR_RDMA_WRITE, 3, sge, 2, (uintptr_t)p.buf[1] + 3000,
		  p.mr[1]->rkey);
	expect_counted(&p, &wr.wr, IB_WC_SUCCESS, 0, 300);
	assert_memory_equal(p.buf[1] + 3000, expect, 300);
	/* READ into an MR sink (iWARP needs REMOTE_WRITE on it) */
	fill(p.buf[1] + 256, 200, 4);
	sge[0] = (struct ib_sge){ (uintptr_t)p.buf[0] + 3500, 200,
				  p.mr[0]->lkey };
	make_rdma(&wr, IB_WR_RDMA_READ, 4, sge, 1, (uintptr_t)p.buf[1] + 256,
		  p.mr[1]->rkey);
	expect_counted(&p, &wr.wr, IB_WC_SUCCESS, 200, 0);
	assert_memory_equal(p.buf[0] + 3500, p.buf[1] + 256, 200);
	/* zero bytes: executed, nothing counted */
	sge[0] = (struct ib_sge){ (uintptr_t)p.buf[0], 0, dma_lkey };
	make_rdma(&wr, IB_WR_RDMA_WRITE, 5, sge, 1, (uintptr_t)p.buf[1],
		  p.mr[1]->rkey);
	expect_counted(&p, &wr.wr, IB_WC_SUCCESS, 0, 0);
	soft_pair_fini(&p);
}

static void test_stats_rxe(void **state)
{
	(void)state;
	stats_on_profile("rxe", false);
}

static void test_stats_mlx5(void **state)
{
	(void)state;
	stats_on_profile("mlx5", false);
}

static void test_stats_siw(void **state)
{
	(void)state;
	stats_on_profile("siw", false);
}

/* The same with the device's progress thread running the Send Queue. */
static void test_stats_threaded(void **state)
{
	(void)state;
	stats_on_profile("rxe", true);
}

/* A refused WRITE counts as executed and moves nothing. */
static void test_stats_refused(void **state)
{
	struct soft_pair p;
	struct ib_rdma_wr wr;
	struct ib_sge sge;

	(void)state;
	soft_pair_init(&p, &(struct soft_env_cfg){ .profile = "rxe" }, LEN,
		       0x5a);
	sge = (struct ib_sge){ (uintptr_t)p.buf[0], 100,
			       p.env.pd[0]->local_dma_lkey };
	make_rdma(&wr, IB_WR_RDMA_WRITE, 9, &sge, 1, (uintptr_t)p.buf[1],
		  p.mr[1]->rkey ^ 0x1);
	memset(p.buf[0], 0x11, 100);
	expect_counted(&p, &wr.wr, IB_WC_REM_ACCESS_ERR, 0, 0);
	assert_int_equal(p.buf[1][0], 0x5b);
	assert_int_equal(p.buf[1][99], 0x5b);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_ERR);
	soft_pair_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_rxe),
		cmocka_unit_test(test_stats_mlx5),
		cmocka_unit_test(test_stats_siw),
		cmocka_unit_test(test_stats_threaded),
		cmocka_unit_test(test_stats_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

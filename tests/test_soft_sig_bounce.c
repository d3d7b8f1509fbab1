// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A copy between two integrity MRs (the local SGE and the remote rkey both
 * name one) goes through a bounce buffer of wire bytes.  When that buffer
 * cannot be allocated the WR must fail, not complete as a success with no
 * byte moved (issue 11): IB_WC_LOC_QP_OP_ERR with vendor_err ENOMEM, the QP
 * to ERR, the destination untouched.  The allocation is failed through the
 * software device's internal test hook.  Integrity MRs exist on the mlx5
 * profile only; inline and threaded, RDMA WRITE and READ.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/sig_env.h"
#include "soft/soft_loc.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define ALL_CHECKS \
	(IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG | IB_SIG_CHECK_REFTAG)

/* Wait (threaded devices) for one completion. */
static struct ib_wc poll_one(struct ib_cq *cq)
{
	struct ib_wc wc;
	long spins = 0;

	while (ib_poll_cq(cq, 1, &wc) == 0) {
		assert_true(++spins < 100000000L);
		sched_yield();
	}
	return wc;
}

static void one_entry(struct scatterlist *sg, void *buf, u32 len)
{
	sg_init_table(sg, 1);
	sg_set_buf(sg, buf, len);
	sg_dma_address(sg) = (u64)(uintptr_t)buf;
	sg_dma_len(sg) = len;
}

static struct ib_mr *sig_mr(struct ib_pd *pd, struct ib_qp *qp,
			    struct ib_cq *cq, u8 *data, u8 *pi,
			    const struct ib_sig_attrs *a, int access)
{
	struct scatterlist ds, ps;
	struct ib_mr *mr = ib_alloc_mr_integrity(pd, 4, 4);
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 77,
			.opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
		.access = access,
	};
	struct ib_wc wc;

	assert_false(IS_ERR(mr));
	*mr->sig_attrs = *a;
	one_entry(&ds, data, 4096);
	one_entry(&ps, pi, 64);
	assert_int_equal(ib_map_mr_sg_pi(mr, &ds, 1, NULL, &ps, 1, NULL, SZ_4K),
			 0);
	ib_update_fast_reg_key(mr, (u8)ib_inc_rkey(mr->lkey));
	wr.mr = mr;
	wr.key = mr->lkey;
	assert_int_equal(ib_post_send(qp, &wr.wr, NULL), 0);
	wc = poll_one(cq);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	return mr;
}

static int fail_bounce(enum soft_test_point tp, struct soft_qp *qp)
{
	(void)qp;
	return tp == SOFT_TP_SIG_BOUNCE;
}

static void bounce_case(bool threaded, enum ib_wr_opcode opcode, bool fail)
{
	struct ib_t10_dif_domain d = sig_dif(512, 0x40, 0x9);
	struct ib_sig_attrs a = { .check_mask = ALL_CHECKS };
	struct soft_profile prof;
	struct ib_mr *lmr, *hmr;
	struct ib_sge sge;
	struct ib_rdma_wr wr;
	struct sig_env e;
	struct ib_wc wc;
	u8 *src, *spi, *dst, *dpi, *want, *wpi;
	long spins;

	assert_int_equal(soft_profile_get("mlx5", &prof), 0);
	prof.threaded = threaded;
	a.mem.sig_type = a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a.mem.sig.dif = a.wire.sig.dif = d;
	sig_env_init(&e, &(struct sig_env_cfg){ .custom = &prof,
						.host_integrity = true });
	/* The source side holds protected data, the sink side zeros. */
	want = malloc(4096);
	wpi = malloc(64);
	assert_non_null(want);
	assert_non_null(wpi);
	sig_fill(want, 4096, 11);
	sig_ref_protect(&d, want, 8, wpi);
	if (opcode == IB_WR_RDMA_WRITE) {
		src = e.local, spi = e.local + 65536;
		dst = e.remote + 65536, dpi = e.remote + 2 * 65536;
	} else {
		dst = e.local, dpi = e.local + 65536;
		src = e.remote + 65536, spi = e.remote + 2 * 65536;
	}
	memcpy(src, want, 4096);
	memcpy(spi, wpi, 64);
	memset(dst, 0, 4096);
	memset(dpi, 0, 64);
	lmr = sig_mr(e.pd[0], e.qp[0], e.cq[0], e.local, e.local + 65536, &a,
		     IB_ACCESS_LOCAL_WRITE);
	hmr = sig_mr(e.pd[1], e.qp[1], e.cq[1], e.remote + 65536,
		     e.remote + 2 * 65536, &a,
		     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			     IB_ACCESS_REMOTE_WRITE);
	sge = (struct ib_sge){ .addr = 0, .length = 4160, .lkey = lmr->lkey };
	wr = (struct ib_rdma_wr){
		.wr = { .wr_id = 5,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = 0,
		.rkey = hmr->rkey,
	};
	if (fail)
		__atomic_store_n(&rdmarw__soft_test_hook, fail_bounce,
				 __ATOMIC_RELEASE);
	assert_int_equal(ib_post_send(e.qp[0], &wr.wr, NULL), 0);
	wc = poll_one(e.cq[0]);
	__atomic_store_n(&rdmarw__soft_test_hook, NULL, __ATOMIC_RELEASE);
	assert_int_equal(wc.wr_id, 5);
	if (fail) {
		if (wc.status != IB_WC_LOC_QP_OP_ERR)
			fail_msg("%s: %s, expected LOC_QP_OP_ERR",
				 opcode == IB_WR_RDMA_WRITE ? "WRITE" : "READ",
				 ib_wc_status_msg(wc.status));
		assert_int_equal(wc.vendor_err, ENOMEM);
		assert_int_equal(wc.byte_len, 0);
		memset(want, 0, 4096);
		memset(wpi, 0, 64);
		/* The error completion is written before the executor moves
		 * the QP to ERR: a threaded device may not be there yet. */
		for (spins = 0; soft_qp_state(to_sqp(e.qp[0])) != IB_QPS_ERR;
		     spins++) {
			assert_true(spins < 100000000L);
			sched_yield();
		}
	} else {
		assert_int_equal(wc.status, IB_WC_SUCCESS);
	}
	assert_memory_equal(dst, want, 4096);
	assert_memory_equal(dpi, wpi, 64);
	assert_int_equal(ib_dereg_mr(lmr), 0);
	assert_int_equal(ib_dereg_mr(hmr), 0);
	free(want);
	free(wpi);
	sig_env_fini(&e);
}

static void test_bounce_ok(void **state)
{
	(void)state;
	bounce_case(false, IB_WR_RDMA_WRITE, false);
	bounce_case(false, IB_WR_RDMA_READ, false);
	bounce_case(true, IB_WR_RDMA_WRITE, false);
	bounce_case(true, IB_WR_RDMA_READ, false);
}

static void test_bounce_fails(void **state)
{
	(void)state;
	bounce_case(false, IB_WR_RDMA_WRITE, true);
	bounce_case(false, IB_WR_RDMA_READ, true);
	bounce_case(true, IB_WR_RDMA_WRITE, true);
	bounce_case(true, IB_WR_RDMA_READ, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounce_ok),
		cmocka_unit_test(test_bounce_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs of integrity MRs on the software device, without the R/W API:
 * the device attributes per profile, ib_alloc_mr_integrity()'s attributes,
 * ib_map_mr_sg_pi() (mlx5's zero-based MR, meta_length, every refusal),
 * ib_check_mr_status() (refusals, report once, mlx5's answer for another
 * key variant), the posting rules of IB_WR_REG_MR_INTEGRITY (mlx5's
 * set_pi_umr_wr(): no SGE, no remote atomic, an integrity QP, the previous
 * status read, valid attributes) and its execution rules, the access rules
 * of a registered integrity MR (whole wire blocks, alone in its WR, within
 * the wire view), and an integrity MR reached remotely by its rkey, as an
 * NVMe-oF or iSER host exposes one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/sig_env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ALL_CHECKS \
	(IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG | IB_SIG_CHECK_REFTAG)

static void expect_wc(struct ib_cq *cq, u64 wr_id, enum ib_wc_status status,
		      enum ib_wc_opcode opcode)
{
	struct ib_wc wc;

	assert_int_equal(ib_poll_cq(cq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, wr_id);
	if (wc.status != status)
		fail_msg("wr_id %llu: %s, expected %s",
			 (unsigned long long)wr_id, ib_wc_status_msg(wc.status),
			 ib_wc_status_msg(status));
	assert_int_equal(wc.opcode, opcode);
}

static void expect_empty(struct ib_cq *cq)
{
	struct ib_wc wc;

	assert_int_equal(ib_poll_cq(cq, 1, &wc), 0);
}

static int post_reg(struct ib_qp *qp, struct ib_mr *mr, u32 opcode, int access,
		    int num_sge, u64 wr_id)
{
	struct ib_sge sge = { 0 };
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = num_sge ? &sge : NULL,
			.num_sge = num_sge },
		.mr = mr,
		.key = mr->lkey,
		.access = access,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static int post_inv(struct ib_qp *qp, u32 key, u64 wr_id)
{
	struct ib_send_wr wr = { .wr_id = wr_id,
				 .opcode = IB_WR_LOCAL_INV,
				 .send_flags = IB_SEND_SIGNALED,
				 .ex.invalidate_rkey = key };

	return ib_post_send(qp, &wr, NULL);
}

static int post_rdma(struct ib_qp *qp, enum ib_wr_opcode opcode,
		     const struct ib_sge *sge, int n, u64 raddr, u32 rkey,
		     u64 wr_id)
{
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = (struct ib_sge *)sge,
			.num_sge = n },
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static void one_entry(struct scatterlist *sg, void *buf, u32 len)
{
	sg_init_table(sg, 1);
	sg_set_buf(sg, buf, len);
	sg_dma_address(sg) = (u64)(uintptr_t)buf;
	sg_dma_len(sg) = len;
}

/* Strip attributes: wire T10-DIF (512), memory NONE. */
static struct ib_sig_attrs strip_attrs(void)
{
	struct ib_sig_attrs a = { .check_mask = ALL_CHECKS };

	a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a.wire.sig.dif = sig_dif(512, 0, 0);
	return a;
}

/*
 * An integrity MR of @pd over @data (@dlen) and @pi (@plen), attributes
 * @a, mapped and registered on @qp with @access (REG completion checked).
 */
static struct ib_mr *sig_mr_ready(struct ib_pd *pd, struct ib_qp *qp,
				  struct ib_cq *cq, u8 *data, u32 dlen, u8 *pi,
				  u32 plen, const struct ib_sig_attrs *a,
				  int access)
{
	struct scatterlist ds, ps;
	struct ib_mr *mr = ib_alloc_mr_integrity(pd, 4, 4);

	assert_false(IS_ERR(mr));
	*mr->sig_attrs = *a;
	one_entry(&ds, data, dlen);
	one_entry(&ps, pi, plen);
	assert_int_equal(ib_map_mr_sg_pi(mr, &ds, 1, NULL, &ps, plen ? 1 : 0,
					 NULL, SZ_4K),
			 0);
	ib_update_fast_reg_key(mr, (u8)ib_inc_rkey(mr->lkey));
	assert_int_equal(
		post_reg(qp, mr, IB_WR_REG_MR_INTEGRITY, access, 0, 77), 0);
	expect_wc(cq, 77, IB_WC_SUCCESS, IB_WC_REG_MR);
	return mr;
}

static void test_device_attrs(void **state)
{
	const char *names[] = { "mlx5", "rxe", "siw" };
	struct soft_profile p;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		assert_int_equal(soft_profile_get(names[i], &p), 0);
		if (i == 0) {
			assert_true(p.attrs.kernel_cap_flags &
				    IBK_INTEGRITY_HANDOVER);
			assert_int_equal(p.attrs.sig_prot_cap,
					 IB_PROT_T10DIF_TYPE_1 |
						 IB_PROT_T10DIF_TYPE_2 |
						 IB_PROT_T10DIF_TYPE_3);
			assert_int_equal(p.attrs.sig_guard_cap,
					 IB_GUARD_T10DIF_CRC |
						 IB_GUARD_T10DIF_CSUM);
		} else {
			assert_false(p.attrs.kernel_cap_flags &
				     IBK_INTEGRITY_HANDOVER);
			assert_int_equal(p.attrs.sig_prot_cap, 0);
			assert_int_equal(p.attrs.sig_guard_cap, 0);
		}
	}
}

/* ib_alloc_mr_integrity() gives the MR zeroed attributes of its own;
 * other MRs have none. */
static void test_alloc_attrs(void **state)
{
	static const struct ib_sig_attrs zero;
	struct ib_mr *mr, *fr;
	struct sig_env e;

	sig_env_init(&e, NULL);
	mr = ib_alloc_mr_integrity(e.pd[0], 16, 2);
	fr = ib_alloc_mr(e.pd[0], IB_MR_TYPE_MEM_REG, 4);
	assert_false(IS_ERR(mr));
	assert_false(IS_ERR(fr));
	assert_non_null(mr->sig_attrs);
	assert_memory_equal(mr->sig_attrs, &zero, sizeof(zero));
	assert_int_equal(mr->max_num_sg, 16);
	assert_int_equal(mr->max_num_meta_sg, 2);
	assert_null(fr->sig_attrs);
	assert_null(e.remote_mr->sig_attrs);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dereg_mr(fr), 0);
	sig_env_fini(&e);
}

static void test_map_pi(void **state)
{
	struct scatterlist ds[3], ps, z;
	unsigned int doff = 100, moff = 8;
	struct ib_mr *mr, *fr;
	struct sig_env e;
	u8 *b;

	sig_env_init(&e, NULL);
	b = e.local;
	mr = ib_alloc_mr_integrity(e.pd[0], 2, 1);
	fr = ib_alloc_mr(e.pd[0], IB_MR_TYPE_MEM_REG, 4);
	assert_false(IS_ERR(mr));
	assert_false(IS_ERR(fr));
	one_entry(&ds[0], b, 4096);
	one_entry(&ps, b + 8192, 64);
	one_entry(&z, b + 16384, 0);

	/* Whole lists, zero based, meta_length set. */
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, NULL, &ps, 1, NULL, SZ_4K),
			 0);
	assert_int_equal(mr->iova, 0);
	assert_int_equal(mr->length, 4096 + 64);
	assert_int_equal(mr->sig_attrs->meta_length, 64);
	assert_int_equal(mr->page_size, SZ_4K);
	/* Offsets into the first entries; set to 0 when done. */
	assert_int_equal(
		ib_map_mr_sg_pi(mr, ds, 1, &doff, &ps, 1, &moff, SZ_4K), 0);
	assert_int_equal(mr->length, 3996 + 56);
	assert_int_equal(mr->sig_attrs->meta_length, 56);
	assert_int_equal(doff, 0);
	assert_int_equal(moff, 0);
	/* No protection list. */
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, NULL, NULL, 0, NULL, SZ_4K),
			 0);
	assert_int_equal(mr->length, 4096);
	assert_int_equal(mr->sig_attrs->meta_length, 0);

	/* Refusals. */
	assert_int_equal(
		ib_map_mr_sg_pi(NULL, ds, 1, NULL, &ps, 1, NULL, SZ_4K),
		-EINVAL);
	assert_int_equal(
		ib_map_mr_sg_pi(mr, NULL, 1, NULL, &ps, 1, NULL, SZ_4K),
		-EINVAL);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 0, NULL, &ps, 1, NULL, SZ_4K),
			 -EINVAL);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, NULL, &ps, -1, NULL, SZ_4K),
			 -EINVAL);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, NULL, NULL, 1, NULL, SZ_4K),
			 -EINVAL);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, NULL, &ps, 1, NULL, 512),
			 -EINVAL);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, NULL, &ps, 1, NULL, 6000),
			 -EINVAL);
	doff = 4096;
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, &doff, &ps, 1, NULL, SZ_4K),
			 -EINVAL);
	moff = 64;
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 1, NULL, &ps, 1, &moff, SZ_4K),
			 -EINVAL);
	assert_int_equal(ib_map_mr_sg_pi(fr, ds, 1, NULL, &ps, 1, NULL, SZ_4K),
			 -EINVAL);
	assert_int_equal(ib_map_mr_sg_pi(mr, &z, 1, NULL, &ps, 1, NULL, SZ_4K),
			 -EINVAL);
	/* Three elements that cannot merge: beyond 2 + 1. */
	sg_init_table(ds, 3);
	sg_set_buf(&ds[0], b, 100);
	sg_set_buf(&ds[1], b + 200, 100);
	sg_set_buf(&ds[2], b + 400, 100);
	assert_int_equal(ib_dma_map_sg(e.dev[0], ds, 3, DMA_TO_DEVICE), 3);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 3, NULL, &ps, 1, NULL, SZ_4K),
			 -ENOMEM);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 2, NULL, &ps, 1, NULL, SZ_4K),
			 0);
	/* Adjacent entries merge into one element. */
	sg_set_buf(&ds[1], b + 100, 100);
	sg_set_buf(&ds[2], b + 200, 100);
	ib_dma_unmap_sg(e.dev[0], ds, 3, DMA_TO_DEVICE);
	assert_int_equal(ib_dma_map_sg(e.dev[0], ds, 3, DMA_TO_DEVICE), 3);
	assert_int_equal(ib_map_mr_sg_pi(mr, ds, 3, NULL, &ps, 1, NULL, SZ_4K),
			 0);
	assert_int_equal(mr->length, 300 + 64);
	ib_dma_unmap_sg(e.dev[0], ds, 3, DMA_TO_DEVICE);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dereg_mr(fr), 0);
	sig_env_fini(&e);
}

static void test_check_status_rules(void **state)
{
	struct ib_mr_status st = { .fail_status = 0xdead };
	struct ib_mr *mr, *fr;
	struct sig_env e;

	sig_env_init(&e, NULL);
	mr = ib_alloc_mr_integrity(e.pd[0], 2, 2);
	fr = ib_alloc_mr(e.pd[0], IB_MR_TYPE_MEM_REG, 4);
	assert_int_equal(ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st),
			 0);
	assert_int_equal(st.fail_status, 0);
	st.fail_status = 0xdead;
	assert_int_equal(ib_check_mr_status(mr, 0, &st), 0);
	assert_int_equal(st.fail_status, 0);
	assert_int_equal(ib_check_mr_status(NULL, 1, &st), -EINVAL);
	assert_int_equal(ib_check_mr_status(mr, 1, NULL), -EINVAL);
	assert_int_equal(ib_check_mr_status(mr, 2, &st), -EINVAL);
	assert_int_equal(ib_check_mr_status(mr, 3, &st), -EINVAL);
	assert_int_equal(ib_check_mr_status(fr, 1, &st), -EINVAL);
	assert_int_equal(ib_check_mr_status(e.remote_mr, 1, &st), -EINVAL);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dereg_mr(fr), 0);
	sig_env_fini(&e);
}

/* Post REG_MR_INTEGRITY of @mr with attributes @a: the errno. */
static int post_with_attrs(struct sig_env *e, struct ib_mr *mr,
			   const struct ib_sig_attrs *a)
{
	*mr->sig_attrs = *a;
	return post_reg(e->qp[0], mr, IB_WR_REG_MR_INTEGRITY,
			IB_ACCESS_LOCAL_WRITE, 0, 5);
}

static void test_reg_post_rules(void **state)
{
	struct ib_sig_attrs good = strip_attrs(), a;
	struct scatterlist ds, ps;
	struct ib_mr *mr, *fr;
	struct sig_env e;

	sig_env_init(&e, NULL);
	mr = ib_alloc_mr_integrity(e.pd[0], 4, 4);
	fr = ib_alloc_mr(e.pd[0], IB_MR_TYPE_MEM_REG, 4);
	one_entry(&ds, e.local, 2048);
	one_entry(&ps, e.local + 4096, 32);
	*mr->sig_attrs = good;
	assert_int_equal(ib_map_mr_sg_pi(mr, &ds, 1, NULL, &ps, 1, NULL, SZ_4K),
			 0);
	/* mlx5's checks at post: nothing is queued, the QP stays RTS. */
	assert_int_equal(post_reg(e.qp[0], mr, IB_WR_REG_MR_INTEGRITY,
				  IB_ACCESS_LOCAL_WRITE, 1, 5),
			 -EINVAL);
	assert_int_equal(
		post_reg(e.qp[0], mr, IB_WR_REG_MR_INTEGRITY,
			 IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC, 0, 5),
		-EINVAL);
	assert_int_equal(post_reg(e.qp[0], fr, IB_WR_REG_MR_INTEGRITY,
				  IB_ACCESS_LOCAL_WRITE, 0, 5),
			 -EINVAL);
	a = good;
	a.mem.sig_type = 7;
	assert_int_equal(post_with_attrs(&e, mr, &a), -EINVAL);
	a = good;
	a.wire.sig.dif.bg_type = 2;
	assert_int_equal(post_with_attrs(&e, mr, &a), -EINVAL);
	a = good;
	a.wire.sig.dif.pi_interval = 520;
	assert_int_equal(post_with_attrs(&e, mr, &a), -EINVAL);
	a = good;
	a.wire.sig.dif.pi_interval = 256;
	assert_int_equal(post_with_attrs(&e, mr, &a), -EINVAL);
	a = good;
	a.wire.sig.dif.pi_interval = 4096; /* 2048 data bytes */
	assert_int_equal(post_with_attrs(&e, mr, &a), -EINVAL);
	/* Both domains: one block structure only. */
	a = good;
	a.mem = a.wire;
	a.mem.sig.dif.pi_interval = 1024;
	assert_int_equal(post_with_attrs(&e, mr, &a), -EINVAL);
	/* Memory PI needs 8 bytes per block: 4 blocks, 32 bytes mapped. */
	a = good;
	a.mem = a.wire;
	assert_int_equal(post_with_attrs(&e, mr, &a), 0);
	expect_wc(e.cq[0], 5, IB_WC_SUCCESS, IB_WC_REG_MR);
	/* Posted: the status must be read before the next one. */
	assert_int_equal(post_inv(e.qp[0], mr->lkey, 6), 0);
	expect_wc(e.cq[0], 6, IB_WC_SUCCESS, IB_WC_LOCAL_INV);
	assert_int_equal(post_with_attrs(&e, mr, &good), -EINVAL);
	assert_int_equal(ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS,
					    &(struct ib_mr_status){ 0 }),
			 0);
	one_entry(&ps, e.local + 4096, 16); /* 2 blocks of PI for 4 */
	assert_int_equal(ib_map_mr_sg_pi(mr, &ds, 1, NULL, &ps, 1, NULL, SZ_4K),
			 0);
	a = good;
	a.mem = a.wire;
	assert_int_equal(post_with_attrs(&e, mr, &a), -EINVAL);
	assert_int_equal(post_with_attrs(&e, mr, &good), 0);
	expect_wc(e.cq[0], 5, IB_WC_SUCCESS, IB_WC_REG_MR);
	expect_empty(e.cq[0]);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dereg_mr(fr), 0);
	sig_env_fini(&e);
}

/* At execution: REG_MR cannot register an integrity MR, and
 * REG_MR_INTEGRITY cannot register a valid one (LOC_QP_OP_ERR). */
static void test_reg_exec_rules(void **state)
{
	struct ib_sig_attrs a = strip_attrs();
	struct scatterlist ds, ps;
	struct ib_mr *mr;
	struct sig_env e;
	int round;

	for (round = 0; round < 2; round++) {
		sig_env_init(&e, NULL);
		mr = ib_alloc_mr_integrity(e.pd[0], 4, 4);
		one_entry(&ds, e.local, 2048);
		one_entry(&ps, e.local + 4096, 32);
		*mr->sig_attrs = a;
		assert_int_equal(
			ib_map_mr_sg_pi(mr, &ds, 1, NULL, &ps, 1, NULL, SZ_4K),
			0);
		if (round == 0) {
			assert_int_equal(post_reg(e.qp[0], mr, IB_WR_REG_MR,
						  IB_ACCESS_LOCAL_WRITE, 0, 1),
					 0);
			expect_wc(e.cq[0], 1, IB_WC_LOC_QP_OP_ERR,
				  IB_WC_REG_MR);
		} else {
			assert_int_equal(post_reg(e.qp[0], mr,
						  IB_WR_REG_MR_INTEGRITY,
						  IB_ACCESS_LOCAL_WRITE, 0, 1),
					 0);
			expect_wc(e.cq[0], 1, IB_WC_SUCCESS, IB_WC_REG_MR);
			ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS,
					   &(struct ib_mr_status){ 0 });
			assert_int_equal(post_reg(e.qp[0], mr,
						  IB_WR_REG_MR_INTEGRITY,
						  IB_ACCESS_LOCAL_WRITE, 0, 2),
					 0);
			expect_wc(e.cq[0], 2, IB_WC_LOC_QP_OP_ERR,
				  IB_WC_REG_MR);
		}
		assert_int_equal(ib_dereg_mr(mr), 0);
		sig_env_fini(&e);
	}
}

/*
 * An RDMA WRITE through a registered strip MR (2 blocks of 512 + 8 on the
 * wire) with SGE @sge (and a second plain SGE when @extra): the status.
 */
static enum ib_wc_status access_case(u64 off, u32 len, bool extra)
{
	struct ib_sig_attrs a = strip_attrs();
	struct ib_sge sge[2];
	struct ib_wc wc;
	struct ib_mr *mr;
	struct sig_env e;

	sig_env_init(&e, NULL);
	mr = sig_mr_ready(e.pd[0], e.qp[0], e.cq[0], e.local, 1024,
			  e.local + 4096, 16, &a, IB_ACCESS_LOCAL_WRITE);
	sge[0] =
		(struct ib_sge){ .addr = off, .length = len, .lkey = mr->lkey };
	sge[1] = (struct ib_sge){ .addr = (uintptr_t)e.local + 8192,
				  .length = 16,
				  .lkey = e.pd[0]->local_dma_lkey };
	assert_int_equal(post_rdma(e.qp[0], IB_WR_RDMA_WRITE, sge,
				   extra ? 2 : 1, sig_env_raddr(&e, 0),
				   e.remote_mr->rkey, 9),
			 0);
	assert_int_equal(ib_poll_cq(e.cq[0], 1, &wc), 1);
	assert_int_equal(ib_dereg_mr(mr), 0);
	sig_env_fini(&e);
	return wc.status;
}

static void test_access_rules(void **state)
{
	assert_int_equal(access_case(0, 1040, false), IB_WC_SUCCESS);
	assert_int_equal(access_case(520, 520, false), IB_WC_SUCCESS);
	/* Not whole wire blocks. */
	assert_int_equal(access_case(0, 1000, false), IB_WC_LOC_PROT_ERR);
	assert_int_equal(access_case(512, 520, false), IB_WC_LOC_PROT_ERR);
	/* Beyond the wire view (the MR length is data + PI = 1040). */
	assert_int_equal(access_case(0, 1560, false), IB_WC_LOC_PROT_ERR);
	/* An integrity MR must be alone in its WR. */
	assert_int_equal(access_case(0, 1040, true), IB_WC_LOC_PROT_ERR);
}

/* An error recorded under another key variant: mlx5's short answer. */
static void test_status_other_key(void **state)
{
	struct ib_sig_attrs a = strip_attrs();
	struct ib_mr_status st;
	struct ib_sge sge;
	struct ib_mr *mr;
	struct sig_env e;
	u32 key;

	sig_env_init(&e, NULL);
	memset(e.remote, 0x11, 1040); /* PI of garbage */
	mr = sig_mr_ready(e.pd[0], e.qp[0], e.cq[0], e.local, 1024,
			  e.local + 4096, 16, &a, IB_ACCESS_LOCAL_WRITE);
	key = mr->lkey;
	sge = (struct ib_sge){ .addr = 0, .length = 1040, .lkey = key };
	assert_int_equal(post_rdma(e.qp[0], IB_WR_RDMA_READ, &sge, 1,
				   sig_env_raddr(&e, 0), e.remote_mr->rkey, 3),
			 0);
	/* The READ itself succeeds. */
	expect_wc(e.cq[0], 3, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	ib_update_fast_reg_key(mr, (u8)ib_inc_rkey(mr->lkey));
	assert_int_equal(ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st),
			 0);
	assert_int_equal(st.fail_status, IB_MR_CHECK_SIG_STATUS);
	assert_int_equal(st.sig_err.err_type, IB_SIG_BAD_GUARD);
	assert_int_equal(st.sig_err.sig_err_offset, 0);
	assert_int_equal(st.sig_err.key, key);
	/* Reported once. */
	assert_int_equal(ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st),
			 0);
	assert_int_equal(st.fail_status, 0);
	assert_int_equal(ib_dereg_mr(mr), 0);
	sig_env_fini(&e);
}

/*
 * The host side of NVMe-oF or iSER: an integrity MR registered for remote
 * access (memory: data + PI list, wire: T10-DIF), reached by the target
 * with plain RDMA READ and WRITE of its rkey.  The errors are the host
 * MR's.
 */
static void test_remote_integrity_mr(void **state)
{
	struct ib_t10_dif_domain d = sig_dif(512, 0x40, 0x9);
	struct ib_sig_attrs a = { .check_mask = ALL_CHECKS };
	u8 *data, *pi, *wire, *hdata, *hpi;
	struct ib_mr_status st;
	struct ib_sge sge;
	struct ib_mr *hmr;
	struct sig_env e;

	a.mem.sig_type = a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a.mem.sig.dif = a.wire.sig.dif = d;
	sig_env_init(&e, &(struct sig_env_cfg){ .host_integrity = true });
	data = malloc(4096);
	pi = malloc(64);
	wire = malloc(4160);
	sig_fill(data, 4096, 5);
	sig_ref_protect(&d, data, 8, pi);
	sig_ref_interleave(512, data, pi, 8, wire);
	hdata = e.remote + 65536;
	hpi = e.remote + 2 * 65536;
	memcpy(hdata, data, 4096);
	memcpy(hpi, pi, 64);
	hmr = sig_mr_ready(e.pd[1], e.qp[1], e.cq[1], hdata, 4096, hpi, 64, &a,
			   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE);
	/* The target READs the wire image: data with PI after each block. */
	sge = (struct ib_sge){ .addr = (uintptr_t)e.local,
			       .length = 4160,
			       .lkey = e.pd[0]->local_dma_lkey };
	assert_int_equal(
		post_rdma(e.qp[0], IB_WR_RDMA_READ, &sge, 1, 0, hmr->rkey, 1),
		0);
	expect_wc(e.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	assert_memory_equal(e.local, wire, 4160);
	/* It WRITEs it back with block 6's reference tag wrong: stored, and
	 * the host MR reports it. */
	e.local[6 * 520 + 512 + 7] ^= 3;
	memset(hdata, 0, 4096);
	memset(hpi, 0, 64);
	assert_int_equal(
		post_rdma(e.qp[0], IB_WR_RDMA_WRITE, &sge, 1, 0, hmr->rkey, 2),
		0);
	expect_wc(e.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_memory_equal(hdata, data, 4096);
	assert_int_equal(ib_check_mr_status(hmr, IB_MR_CHECK_SIG_STATUS, &st),
			 0);
	assert_int_equal(st.fail_status, IB_MR_CHECK_SIG_STATUS);
	assert_int_equal(st.sig_err.err_type, IB_SIG_BAD_REFTAG);
	assert_int_equal(st.sig_err.expected, 0x46);
	assert_int_equal(st.sig_err.actual, 0x46 ^ 3);
	assert_int_equal(st.sig_err.sig_err_offset, 6 * 520);
	assert_int_equal(st.sig_err.key, hmr->rkey);
	/* Passed on as it came (both domains agree on the tags). */
	assert_int_equal(hpi[6 * 8 + 7], 0x46 ^ 3);
	pi[6 * 8 + 7] ^= 3;
	assert_memory_equal(hpi, pi, 64);
	assert_int_equal(ib_dereg_mr(hmr), 0);
	free(data);
	free(pi);
	free(wire);
	sig_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_attrs),
		cmocka_unit_test(test_alloc_attrs),
		cmocka_unit_test(test_map_pi),
		cmocka_unit_test(test_check_status_rules),
		cmocka_unit_test(test_reg_post_rules),
		cmocka_unit_test(test_reg_exec_rules),
		cmocka_unit_test(test_access_rules),
		cmocka_unit_test(test_status_other_key),
		cmocka_unit_test(test_remote_integrity_mr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

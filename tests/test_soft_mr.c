// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory registration on the software device: ib_map_mr_sg() page rules per
 * profile, REG_MR and LOCAL_INV rules, key-variant cycling over 300
 * registrations of one MR with stale keys rejected, data placed through a
 * fast-registration MR of scattered pages, and which MR state changes wait
 * for the transfers of other QPs (the fabric's readers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"
#include "soft/soft_loc.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PG 4096u
#define NPAGES 16
#define ALL_ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

static u8 *pages_alloc(void)
{
	u8 *p = aligned_alloc(PG, NPAGES * PG);

	assert_non_null(p);
	memset(p, 0, NPAGES * PG);
	return p;
}

/* A "DMA-mapped" list: virtual DMA, so the address is the CPU address. */
static void sg_build(struct scatterlist *sg, int n, const u64 *addr,
		     const u32 *len)
{
	int i;

	sg_init_table(sg, (unsigned int)n);
	for (i = 0; i < n; i++) {
		sg_set_buf(&sg[i], (void *)(uintptr_t)addr[i], len[i]);
		sg[i].dma_address = addr[i];
		sg[i].dma_length = len[i];
	}
}

static int map(struct ib_mr *mr, int n, const u64 *addr, const u32 *len,
	       unsigned int *off)
{
	struct scatterlist sg[8];

	sg_build(sg, n, addr, len);
	return ib_map_mr_sg(mr, sg, n, off, PG);
}

static void post_reg(struct ib_qp *qp, struct ib_cq *cq, struct ib_mr *mr,
		     u32 key, int access, enum ib_wc_status st)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 0x7e9,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr,
		.key = key,
		.access = access,
	};

	assert_int_equal(ib_post_send(qp, &wr.wr, NULL), 0);
	soft_env_expect(cq, 0x7e9, st, IB_WC_REG_MR);
}

static void post_inv(struct ib_qp *qp, struct ib_cq *cq, u32 key,
		     enum ib_wc_status st)
{
	struct ib_send_wr wr = { .wr_id = 0x1e7,
				 .opcode = IB_WR_LOCAL_INV,
				 .send_flags = IB_SEND_SIGNALED,
				 .ex.invalidate_rkey = key };

	assert_int_equal(ib_post_send(qp, &wr, NULL), 0);
	soft_env_expect(cq, 0x1e7, st, IB_WC_LOCAL_INV);
}

/* ---- ib_map_mr_sg() page rules ------------------------------------------ */

/* Rules every profile shares (ib_sg_to_pages() decides). */
static void map_common(const char *profile)
{
	struct soft_env env;
	struct ib_mr *mr;
	u8 *b = pages_alloc();
	u64 base = (uintptr_t)b;
	unsigned int off;

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = profile,
						    .no_connect = true });
	mr = ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 8);
	assert_false(IS_ERR(mr));

	/* Contiguous pages. */
	assert_int_equal(map(mr, 3, (u64[]){ base, base + PG, base + 2 * PG },
			     (u32[]){ PG, PG, PG }, NULL),
			 3);
	assert_int_equal(mr->iova, base);
	assert_int_equal(mr->length, 3 * PG);
	/* Only the first entry may start inside a page. */
	assert_int_equal(map(mr, 2, (u64[]){ base + 100, base + PG },
			     (u32[]){ PG - 100, PG }, NULL),
			 2);
	assert_int_equal(mr->iova, base + 100);
	assert_int_equal(mr->length, 2 * PG - 100);
	/* A gap: a later entry starting inside a page stops the mapping. */
	assert_int_equal(map(mr, 2, (u64[]){ base, base + 2 * PG + 8 },
			     (u32[]){ PG, 64 }, NULL),
			 1);
	assert_int_equal(mr->length, PG);
	/* Only the last entry may end inside a page. */
	assert_int_equal(map(mr, 2, (u64[]){ base, base + PG },
			     (u32[]){ 100, PG }, NULL),
			 1);
	assert_int_equal(mr->length, 100);
	/* An entry that continues the previous one byte for byte joins it. */
	assert_int_equal(map(mr, 2, (u64[]){ base, base + 100 },
			     (u32[]){ 100, PG - 100 + 50 }, NULL),
			 2);
	assert_int_equal(mr->length, PG + 50);
	/* sg_offset skips into the first entry. */
	off = 100;
	assert_int_equal(map(mr, 1, (u64[]){ base }, (u32[]){ PG }, &off), 1);
	assert_int_equal(mr->iova, base + 100);
	assert_int_equal(mr->length, PG - 100);
	assert_int_equal(off, 0);
	/* Bad input. */
	off = PG;
	assert_int_equal(map(mr, 1, (u64[]){ base }, (u32[]){ PG }, &off),
			 -EINVAL);
	assert_int_equal(ib_map_mr_sg(mr, NULL, 1, NULL, PG), -EINVAL);
	{
		struct scatterlist sg[1];

		sg_build(sg, 1, (u64[]){ base }, (u32[]){ PG });
		assert_int_equal(ib_map_mr_sg(mr, sg, 0, NULL, PG), -EINVAL);
		assert_int_equal(ib_map_mr_sg(mr, sg, 1, NULL, 1000), -EINVAL);
	}
	assert_int_equal(ib_dereg_mr(mr), 0);
	soft_env_fini(&env);
	free(b);
}

static void test_map_rules_common(void **state)
{
	map_common("mlx5");
	map_common("rxe");
	map_common("siw");
}

/*
 * rxe and mlx5 store pages, at most max_num_sg (rxe_set_page()); siw keeps
 * one element per entry, at most max_num_sg entries, pages unlimited
 * (siw_map_mr_sg()), and refuses empty entries.
 */
static void test_map_capacity(void **state)
{
	static const char *const profiles[] = { "mlx5", "rxe", "siw" };
	const u32 two = 2 * PG;
	struct soft_env env;
	struct ib_mr *mr;
	u8 *b = pages_alloc();
	u64 base = (uintptr_t)b;
	size_t i;

	for (i = 0; i < 3; i++) {
		bool siw = !strcmp(profiles[i], "siw");
		unsigned int off = 0;

		soft_env_init(&env,
			      &(struct soft_env_cfg){ .profile = profiles[i],
						      .no_connect = true });
		mr = ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 4);
		assert_false(IS_ERR(mr));
		/* Three entries of two pages each, not adjacent. */
		assert_int_equal(
			map(mr, 3,
			    (u64[]){ base, base + 3 * PG, base + 6 * PG },
			    (u32[]){ two, two, two }, &off),
			siw ? 3 : 2);
		assert_int_equal(mr->length, siw ? 3 * two : 2 * two);
		assert_int_equal(off, 0);
		/* Five single pages. */
		assert_int_equal(
			map(mr, 5,
			    (u64[]){ base, base + 2 * PG, base + 4 * PG,
				     base + 6 * PG, base + 8 * PG },
			    (u32[]){ PG, PG, PG, PG, PG }, NULL),
			siw ? -ENOMEM : 4);
		/* An empty entry. */
		assert_int_equal(map(mr, 2, (u64[]){ base, base + PG },
				     (u32[]){ PG, 0 }, NULL),
				 siw ? -EINVAL : 2);
		assert_int_equal(ib_dereg_mr(mr), 0);
		soft_env_fini(&env);
	}
	free(b);
}

/* page_size must be one the device supports (siw: PAGE_SIZE only). */
static void test_map_page_size(void **state)
{
	struct soft_env env;
	struct scatterlist sg[1];
	struct ib_mr *mr;
	u8 *b = aligned_alloc(8192, 8192);

	assert_non_null(b);
	sg_build(sg, 1, (u64[]){ (uintptr_t)b }, (u32[]){ 8192 });
	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "siw",
						    .no_connect = true });
	mr = ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 4);
	assert_int_equal(ib_map_mr_sg(mr, sg, 1, NULL, 8192), -EINVAL);
	assert_int_equal(ib_dereg_mr(mr), 0);
	soft_env_fini(&env);
	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "rxe",
						    .no_connect = true });
	mr = ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 4);
	assert_int_equal(ib_map_mr_sg(mr, sg, 1, NULL, 8192), 1);
	assert_int_equal(mr->page_size, 8192);
	assert_int_equal(ib_dereg_mr(mr), 0);
	soft_env_fini(&env);
	free(b);
}

/* ---- data through a fast-registration MR -------------------------------- */

/*
 * Pages 5, 2, 9 (in that order) registered as one range: a remote WRITE of
 * the whole range lands page by page, and no other byte changes.
 */
static void fastreg_placement(const char *profile)
{
	struct soft_env env;
	struct ib_mr *fmr, *src_mr;
	u8 *b = pages_alloc(), *src = malloc(3 * PG);
	u64 base = (uintptr_t)b;
	u32 i;

	assert_non_null(src);
	for (i = 0; i < 3 * PG; i++)
		src[i] = (u8)(i * 7 + 3);
	memset(b, 0xee, NPAGES * PG);
	soft_env_init(&env, &(struct soft_env_cfg){ .profile = profile });
	src_mr = soft_env_reg(&env, 0, src, 3 * PG, ALL_ACCESS);
	fmr = ib_alloc_mr(env.pd[1], IB_MR_TYPE_MEM_REG, 3);
	assert_false(IS_ERR(fmr));
	assert_int_equal(
		map(fmr, 3,
		    (u64[]){ base + 5 * PG, base + 2 * PG, base + 9 * PG },
		    (u32[]){ PG, PG, PG }, NULL),
		3);
	ib_update_fast_reg_key(fmr, ib_inc_rkey(fmr->rkey));
	post_reg(env.qp[1], env.cq[1], fmr, fmr->rkey, ALL_ACCESS,
		 IB_WC_SUCCESS);
	assert_int_equal(soft_env_rdma(env.qp[0], IB_WR_RDMA_WRITE, 1, src,
				       3 * PG, src_mr->lkey, fmr->iova,
				       fmr->rkey),
			 0);
	soft_env_expect(env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_memory_equal(b + 5 * PG, src, PG);
	assert_memory_equal(b + 2 * PG, src + PG, PG);
	assert_memory_equal(b + 9 * PG, src + 2 * PG, PG);
	for (i = 0; i < NPAGES * PG; i++) {
		u32 pg = i / PG;

		if (pg != 5 && pg != 2 && pg != 9 && b[i] != 0xee)
			fail_msg("byte %u changed", i);
	}
	/* And READ back the middle 100 bytes across the page seam. */
	memset(src, 0, 3 * PG);
	assert_int_equal(soft_env_rdma(env.qp[0], IB_WR_RDMA_READ, 2, src, 100,
				       src_mr->lkey, fmr->iova + PG - 50,
				       fmr->rkey),
			 0);
	soft_env_expect(env.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	assert_memory_equal(src, b + 5 * PG + PG - 50, 50);
	assert_memory_equal(src + 50, b + 2 * PG, 50);
	soft_env_dereg(fmr);
	soft_env_dereg(src_mr);
	soft_env_fini(&env);
	free(b);
	free(src);
}

static void test_fastreg_placement(void **state)
{
	fastreg_placement("mlx5");
	fastreg_placement("rxe");
	fastreg_placement("siw");
}

/* ---- key variants -------------------------------------------------------- */

static void reconnect(struct soft_env *env)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	assert_int_equal(ib_modify_qp(env->qp[0], &attr, IB_QP_STATE), 0);
	assert_int_equal(ib_modify_qp(env->qp[1], &attr, IB_QP_STATE), 0);
	assert_int_equal(soft_qp_connect(env->qp[0], env->qp[1]), 0);
}

/*
 * One MR, 300 REG_MR/LOCAL_INV cycles, the variant advancing each time (so
 * it wraps past 255): every new key works, the index never changes, and
 * every so often the previous key is tried and refused.
 */
static void key_cycling(const char *profile)
{
	/* iWARP: a refused WRITE completed when sent, a refused READ is
	 * flushed; the TERMINATE stops both QPs (soft-device.md) */
	bool iwarp = !strcmp(profile, "siw");
	struct soft_env env;
	struct ib_mr *fmr, *src_mr;
	u8 *b = pages_alloc(), src[64];
	u32 first_index, prev_key = 0;
	int i;

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = profile });
	src_mr = soft_env_reg(&env, 0, src, sizeof(src), ALL_ACCESS);
	fmr = ib_alloc_mr(env.pd[1], IB_MR_TYPE_MEM_REG, 1);
	assert_false(IS_ERR(fmr));
	first_index = fmr->rkey >> 8;
	for (i = 0; i < 300; i++) {
		u32 key = ib_inc_rkey(fmr->rkey);

		memset(src, i & 0xff, sizeof(src));
		assert_int_equal(map(fmr, 1, (u64[]){ (uintptr_t)b },
				     (u32[]){ PG }, NULL),
				 1);
		ib_update_fast_reg_key(fmr, (u8)key);
		assert_int_equal(fmr->rkey, key);
		post_reg(env.qp[1], env.cq[1], fmr, key, ALL_ACCESS,
			 IB_WC_SUCCESS);
		assert_int_equal(soft_env_rdma(env.qp[0], IB_WR_RDMA_WRITE, i,
					       src, 64, src_mr->lkey,
					       (uintptr_t)b + 64 * (i % 60),
					       key),
				 0);
		soft_env_expect(env.cq[0], (u64)i, IB_WC_SUCCESS,
				IB_WC_RDMA_WRITE);
		assert_int_equal(b[64 * (i % 60) + 63], i & 0xff);
		if (i % 50 == 49) {
			/* The previous variant is stale: refused. */
			assert_int_equal(soft_env_rdma(env.qp[0],
						       IB_WR_RDMA_WRITE, 999,
						       src, 8, src_mr->lkey,
						       (uintptr_t)b, prev_key),
					 0);
			soft_env_expect(env.cq[0], 999,
					iwarp ? IB_WC_SUCCESS :
						IB_WC_REM_ACCESS_ERR,
					IB_WC_RDMA_WRITE);
			assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_ERR);
			assert_int_equal(soft_env_state(env.qp[1]), IB_QPS_ERR);
			reconnect(&env);
		}
		post_inv(env.qp[1], env.cq[1], key, IB_WC_SUCCESS);
		assert_int_equal(key >> 8, first_index);
		prev_key = key;
	}
	/* Invalidated: the last key no longer works either. */
	assert_int_equal(soft_env_rdma(env.qp[0], IB_WR_RDMA_READ, 1000, src, 8,
				       src_mr->lkey, (uintptr_t)b, prev_key),
			 0);
	soft_env_expect(env.cq[0], 1000,
			iwarp ? IB_WC_WR_FLUSH_ERR : IB_WC_REM_ACCESS_ERR,
			IB_WC_RDMA_READ);
	assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_ERR);
	soft_env_dereg(fmr);
	soft_env_dereg(src_mr);
	soft_env_fini(&env);
	free(b);
}

static void test_key_cycling(void **state)
{
	key_cycling("rxe");
	key_cycling("siw");
}

/* ---- REG_MR and LOCAL_INV rules ------------------------------------------ */

static void test_reg_rules(void **state)
{
	static const char *const profiles[] = { "mlx5", "rxe", "siw" };
	struct soft_env env;
	struct ib_mr *fmr, *umr;
	u8 *b = pages_alloc();
	size_t i;

	for (i = 0; i < 3; i++) {
		soft_env_init(&env,
			      &(struct soft_env_cfg){ .profile = profiles[i] });
		fmr = ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 2);
		assert_false(IS_ERR(fmr));
		assert_int_equal(map(fmr, 1, (u64[]){ (uintptr_t)b },
				     (u32[]){ PG }, NULL),
				 1);
		/* Only the variant may change. */
		post_reg(env.qp[0], env.cq[0], fmr, fmr->rkey + 0x100,
			 ALL_ACCESS, IB_WC_LOC_QP_OP_ERR);
		assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_ERR);
		assert_int_equal(soft_env_state(env.qp[1]), IB_QPS_RTS);
		reconnect(&env);
		/* Remote write needs local write. */
		post_reg(env.qp[0], env.cq[0], fmr, fmr->rkey,
			 IB_ACCESS_REMOTE_WRITE, IB_WC_LOC_QP_OP_ERR);
		reconnect(&env);
		/* Registered once... */
		post_reg(env.qp[0], env.cq[0], fmr, fmr->rkey, ALL_ACCESS,
			 IB_WC_SUCCESS);
		/* ...and not again while valid. */
		post_reg(env.qp[0], env.cq[0], fmr, ib_inc_rkey(fmr->rkey),
			 ALL_ACCESS, IB_WC_LOC_QP_OP_ERR);
		assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_ERR);
		reconnect(&env);
		/* LOCAL_INV with the wrong variant: rxe checks the whole
		 * key, siw goes by index (siw_invalidate_stag()). */
		post_inv(env.qp[0], env.cq[0], ib_inc_rkey(fmr->rkey),
			 i == 2 ? IB_WC_SUCCESS : IB_WC_LOC_QP_OP_ERR);
		reconnect(&env);
		/* A QP of another host (and PD) cannot invalidate it. */
		post_inv(env.qp[1], env.cq[1], fmr->rkey, IB_WC_LOC_QP_OP_ERR);
		reconnect(&env);
		/* A user MR is not a fast-registration MR. */
		umr = soft_env_reg(&env, 0, b, PG, ALL_ACCESS);
		{
			struct ib_reg_wr wr = {
				.wr = { .wr_id = 5,
					.opcode = IB_WR_REG_MR,
					.send_flags = IB_SEND_SIGNALED },
				.mr = umr,
				.key = umr->rkey,
				.access = ALL_ACCESS,
			};

			assert_int_equal(ib_post_send(env.qp[0], &wr.wr, NULL),
					 0);
			soft_env_expect(env.cq[0], 5, IB_WC_LOC_QP_OP_ERR,
					IB_WC_REG_MR);
		}
		reconnect(&env);
		soft_env_dereg(umr);
		soft_env_dereg(fmr);
		soft_env_fini(&env);
	}
	free(b);
}

/* REG_MR with a NULL MR or an MR of another device: refused at post. */
static void test_reg_post_checks(void **state)
{
	struct soft_env env;
	struct ib_mr *other;
	struct ib_reg_wr wr = { .wr = { .opcode = IB_WR_REG_MR } };

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "rxe" });
	assert_int_equal(ib_post_send(env.qp[0], &wr.wr, NULL), -EINVAL);
	other = ib_alloc_mr(env.pd[1], IB_MR_TYPE_MEM_REG, 1);
	wr.mr = other;
	assert_int_equal(ib_post_send(env.qp[0], &wr.wr, NULL), -EINVAL);
	soft_env_dereg(other);
	soft_env_fini(&env);
}

/*
 * An MR freed while a REG_MR for it still waits in the queue: the free
 * works, and the REG_MR later finds no MR and fails cleanly.
 */
static void test_dereg_while_reg_queued(void **state)
{
	struct soft_env env;
	struct ib_mr *fmr;
	u8 *b = pages_alloc();

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "mlx5" });
	fmr = ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 1);
	assert_int_equal(
		map(fmr, 1, (u64[]){ (uintptr_t)b }, (u32[]){ PG }, NULL), 1);
	/* A SEND waiting for a receive holds the queue... */
	assert_int_equal(soft_env_send(env.qp[0], 1, NULL, 0, 0), 0);
	{
		struct ib_reg_wr wr = {
			.wr = { .wr_id = 2,
				.opcode = IB_WR_REG_MR,
				.send_flags = IB_SEND_SIGNALED },
			.mr = fmr,
			.key = fmr->rkey,
			.access = IB_ACCESS_LOCAL_WRITE,
		};

		assert_int_equal(ib_post_send(env.qp[0], &wr.wr, NULL), 0);
	}
	/* ...so the REG_MR behind it has not run when the MR goes. */
	assert_int_equal(ib_dereg_mr(fmr), 0);
	soft_env_post_recv(env.qp[1], 3, NULL, 0, 0);
	soft_env_expect(env.cq[0], 1, IB_WC_SUCCESS, IB_WC_SEND);
	soft_env_expect(env.cq[0], 2, IB_WC_LOC_QP_OP_ERR, IB_WC_REG_MR);
	soft_env_expect(env.cq[1], 3, IB_WC_SUCCESS, IB_WC_RECV);
	assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_ERR);
	soft_env_fini(&env);
	free(b);
}

/*
 * REG_MR_INTEGRITY is refused at post on a QP created without
 * IB_QP_CREATE_INTEGRITY_EN, as mlx5's set_pi_umr_wr() refuses it
 * (test_sig_verbs.c covers integrity QPs).
 */
static void test_reg_integrity_needs_integrity_qp(void **state)
{
	struct soft_env env;
	struct ib_mr *imr;
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 9,
			.opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
	};
	const struct ib_send_wr *bad = NULL;

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "mlx5" });
	imr = ib_alloc_mr_integrity(env.pd[0], 4, 4);
	assert_false(IS_ERR(imr));
	assert_int_equal(imr->type, IB_MR_TYPE_INTEGRITY);
	wr.mr = imr;
	wr.key = imr->rkey;
	assert_int_equal(ib_post_send(env.qp[0], &wr.wr, &bad), -EINVAL);
	assert_ptr_equal(bad, &wr.wr);
	soft_env_expect_empty(env.cq[0]);
	assert_int_equal(soft_env_state(env.qp[0]), IB_QPS_RTS);
	soft_env_dereg(imr);
	soft_env_fini(&env);
}

/* Keys of user MRs, as rxe sets them. */
static void test_user_mr_keys(void **state)
{
	struct soft_env env;
	struct ib_mr *a, *b;
	u8 buf[64];

	soft_env_init(&env, &(struct soft_env_cfg){ .no_connect = true });
	a = soft_env_reg(&env, 0, buf, sizeof(buf), IB_ACCESS_LOCAL_WRITE);
	b = soft_env_reg(&env, 0, buf, sizeof(buf), ALL_ACCESS);
	assert_int_equal(a->rkey, 0);
	assert_int_equal(b->rkey, b->lkey);
	assert_int_not_equal(a->lkey >> 8, b->lkey >> 8);
	assert_int_not_equal(a->lkey >> 8, 0);
	assert_int_not_equal(a->lkey, env.pd[0]->local_dma_lkey);
	assert_ptr_equal(
		ib_reg_user_mr(env.pd[0], (uintptr_t)buf, 0, (uintptr_t)buf, 0),
		ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env.pd[0], ~0ULL - 4, 64, 0, 0),
			 ERR_PTR(-EINVAL));
	soft_env_dereg(a);
	soft_env_dereg(b);
	soft_env_fini(&env);
}

/* ---- which state changes wait for the fabric's readers ----------------- */

/* The hang guard: what the test asserts never happens is a wait forever. */
static void waited_forever(int sig)
{
	static const char msg[] =
		"a REG_MR, a FREE MR's retire, or an invalidation or retire of an "
		"MR that QP 0 never used waited for QP 0's reader\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* Arm (@on) or disarm the hang guard. */
static void hang_guard(bool on)
{
	signal(SIGALRM, on ? waited_forever : SIG_DFL);
	alarm(on ? 60 : 0);
}

/*
 * QP 0's read section held open by hand on a thread of its own: a
 * transfer of QP 0 in flight on its executor's thread.  The test's
 * thread, which posts REG_MR and LOCAL_INV and retires MRs meanwhile, is
 * in no section when the library enters its own (sections do not nest,
 * and a build without NDEBUG checks it).
 */
struct qp0_hold {
	struct soft_qp *q0;
	pthread_t t;
	int in;
	int leave;
};

static struct qp0_hold qp0_held;

static void *qp0_hold_run(void *arg)
{
	struct qp0_hold *h = arg;

	soft_br_read_lock(&h->q0->dev->fabric->mem_lock, h->q0->mem_rd);
	__atomic_store_n(&h->in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->leave, __ATOMIC_ACQUIRE))
		sched_yield();
	soft_br_read_unlock(h->q0->mem_rd);
	return NULL;
}

/* Open QP 0's section (@in: return once it is open) or end it (return
 * once it has ended: QP 0 may post again). */
static void qp0_reads(struct soft_env *env, bool in)
{
	struct qp0_hold *h = &qp0_held;

	if (!in) {
		__atomic_store_n(&h->leave, 1, __ATOMIC_RELEASE);
		assert_int_equal(pthread_join(h->t, NULL), 0);
		return;
	}
	*h = (struct qp0_hold){ .q0 = to_sqp(env->qp[0]) };
	assert_int_equal(pthread_create(&h->t, NULL, qp0_hold_run, h), 0);
	while (!__atomic_load_n(&h->in, __ATOMIC_ACQUIRE))
		sched_yield();
}

/*
 * The set-up of the tests that hold QP 0's section open while QP 1 works
 * on its MR: QP 0's 64-byte source (0x3c) and QP 1's fast-registration
 * MR of the first page of @b, mapped, its key one past the allocation's.
 */
struct qp0_case {
	struct soft_env env;
	u8 *b;
	u8 src[64];
	struct ib_mr *fmr, *src_mr;
};

static void qp0_case_init(struct qp0_case *c, const char *profile)
{
	c->b = pages_alloc();
	memset(c->src, 0x3c, sizeof(c->src));
	soft_env_init(&c->env, &(struct soft_env_cfg){ .profile = profile });
	c->src_mr =
		soft_env_reg(&c->env, 0, c->src, sizeof(c->src), ALL_ACCESS);
	c->fmr = ib_alloc_mr(c->env.pd[1], IB_MR_TYPE_MEM_REG, 1);
	assert_false(IS_ERR(c->fmr));
	assert_int_equal(
		map(c->fmr, 1, (u64[]){ (uintptr_t)c->b }, (u32[]){ PG }, NULL),
		1);
	ib_update_fast_reg_key(c->fmr, ib_inc_rkey(c->fmr->rkey));
}

static void qp0_case_fini(struct qp0_case *c)
{
	soft_env_dereg(c->fmr);
	soft_env_dereg(c->src_mr);
	soft_env_fini(&c->env);
	free(c->b);
}

/* QP 0 WRITEs @c->src at @off into @c->fmr, as wr_id @id: the status. */
static void qp0_write(struct qp0_case *c, u64 id, u64 off,
		      enum ib_wc_status want)
{
	assert_int_equal(soft_env_rdma(c->env.qp[0], IB_WR_RDMA_WRITE, id,
				       c->src, 64, c->src_mr->lkey,
				       c->fmr->iova + off, c->fmr->rkey),
			 0);
	soft_env_expect(c->env.cq[0], id, want, IB_WC_RDMA_WRITE);
}

/* What a dead key gives a WRITE: iWARP completes it once sent. */
static enum ib_wc_status dead_key(const char *profile)
{
	return strcmp(profile, "siw") ? IB_WC_REM_ACCESS_ERR : IB_WC_SUCCESS;
}

/*
 * REG_MR makes a FREE MR VALID: no transfer can be using it, so it waits
 * for no reader; nor does the retire (ib_mr_pool_put()) of an MR that
 * LOCAL_INV made FREE.  With QP 0's read section held open, QP 1's REG_MR
 * completes, and so does the retire after its LOCAL_INV; the MR registered
 * meanwhile takes a WRITE once the section ends, and after the retire its
 * key grants nothing.  Before: both waited for every reader of the fabric,
 * here for ever (the hang guard fails the test).
 */
static void reg_waits_for_no_reader(const char *profile)
{
	struct qp0_case c;

	qp0_case_init(&c, profile);
	hang_guard(true);
	qp0_reads(&c.env, true);
	post_reg(c.env.qp[1], c.env.cq[1], c.fmr, c.fmr->rkey, ALL_ACCESS,
		 IB_WC_SUCCESS);
	qp0_reads(&c.env, false);
	qp0_write(&c, 1, 8, IB_WC_SUCCESS);
	assert_memory_equal(c.b + 8, c.src, 64);
	post_inv(c.env.qp[1], c.env.cq[1], c.fmr->rkey, IB_WC_SUCCESS);
	qp0_reads(&c.env, true);
	rdmarw__soft_retire_mr(c.fmr);
	qp0_reads(&c.env, false);
	hang_guard(false);
	/* Retired: the key is dead, the memory untouched. */
	memset(c.src, 0x77, sizeof(c.src));
	qp0_write(&c, 2, 8, dead_key(profile));
	memset(c.src, 0x3c, sizeof(c.src));
	assert_memory_equal(c.b + 8, c.src, 64);
	qp0_case_fini(&c);
}

static void test_reg_waits_for_no_reader(void **state)
{
	reg_waits_for_no_reader("mlx5");
	reg_waits_for_no_reader("rxe");
	reg_waits_for_no_reader("siw");
}

struct retire_case {
	struct ib_mr *mr;
	int started;
	int done;
};

static void *retire_thread(void *arg)
{
	struct retire_case *c = arg;

	__atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
	rdmarw__soft_retire_mr(c->mr);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The retire of a VALID MR (its LOCAL_INV never ran) still waits for the
 * transfers in flight: however long QP 0's read section lasts, the retire
 * does not return inside it; once it has, the key grants nothing.
 */
static void test_retire_valid_waits_for_readers(void **state)
{
	struct retire_case rc = { 0 };
	struct qp0_case c;
	pthread_t t;
	int i;

	qp0_case_init(&c, "rxe");
	rc.mr = c.fmr;
	post_reg(c.env.qp[1], c.env.cq[1], c.fmr, c.fmr->rkey, ALL_ACCESS,
		 IB_WC_SUCCESS);
	/* QP 0 uses the MR (its section checks the rkey): its sections are
	 * the ones the MR's grace period waits for. */
	memset(c.src, 0x11, sizeof(c.src));
	qp0_write(&c, 9, 0, IB_WC_SUCCESS);
	assert_memory_equal(c.b, c.src, 64);
	memset(c.src, 0x3c, sizeof(c.src));
	qp0_reads(&c.env, true);
	assert_int_equal(pthread_create(&t, NULL, retire_thread, &rc), 0);
	while (!__atomic_load_n(&rc.started, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < 2000; i++) {
		sched_yield();
		assert_int_equal(__atomic_load_n(&rc.done, __ATOMIC_ACQUIRE),
				 0);
	}
	qp0_reads(&c.env, false);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(rc.done, 1);
	qp0_write(&c, 1, 0, IB_WC_REM_ACCESS_ERR);
	assert_memory_not_equal(c.b, c.src, 64);
	qp0_case_fini(&c);
}

/*
 * An MR's invalidation and a VALID MR's retire wait for the sections that
 * used that MR, not for every section of the fabric: with QP 0's read
 * section held open (QP 0 never touched the MR: another queue's transfer
 * in flight), QP 1's LOCAL_INV of its MR completes, and so does the
 * retire of the MR registered again and left VALID; after each, the key
 * grants nothing.  Before: both waited for QP 0's section, here for ever
 * (the hang guard fails the test).
 */
static void inv_waits_for_no_other_reader(const char *profile)
{
	struct qp0_case c;

	qp0_case_init(&c, profile);
	post_reg(c.env.qp[1], c.env.cq[1], c.fmr, c.fmr->rkey, ALL_ACCESS,
		 IB_WC_SUCCESS);
	hang_guard(true);
	qp0_reads(&c.env, true);
	post_inv(c.env.qp[1], c.env.cq[1], c.fmr->rkey, IB_WC_SUCCESS);
	rdmarw__soft_retire_mr(c.fmr);
	ib_update_fast_reg_key(c.fmr, ib_inc_rkey(c.fmr->rkey));
	post_reg(c.env.qp[1], c.env.cq[1], c.fmr, c.fmr->rkey, ALL_ACCESS,
		 IB_WC_SUCCESS);
	rdmarw__soft_retire_mr(c.fmr);
	qp0_reads(&c.env, false);
	hang_guard(false);
	/* Retired VALID: the key is dead, the memory untouched. */
	qp0_write(&c, 3, 0, dead_key(profile));
	assert_memory_not_equal(c.b, c.src, 64);
	qp0_case_fini(&c);
}

static void test_inv_waits_for_no_other_reader(void **state)
{
	inv_waits_for_no_other_reader("mlx5");
	inv_waits_for_no_other_reader("rxe");
	inv_waits_for_no_other_reader("siw");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_rules_common),
		cmocka_unit_test(test_map_capacity),
		cmocka_unit_test(test_map_page_size),
		cmocka_unit_test(test_fastreg_placement),
		cmocka_unit_test(test_key_cycling),
		cmocka_unit_test(test_reg_rules),
		cmocka_unit_test(test_reg_post_checks),
		cmocka_unit_test(test_dereg_while_reg_queued),
		cmocka_unit_test(test_reg_integrity_needs_integrity_qp),
		cmocka_unit_test(test_user_mr_keys),
		cmocka_unit_test(test_reg_waits_for_no_reader),
		cmocka_unit_test(test_retire_valid_waits_for_readers),
		cmocka_unit_test(test_inv_waits_for_no_other_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

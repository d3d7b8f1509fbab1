// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulated IOMMU (profile.iommu): IOVA ranges, page-granular links,
 * translation of IOVAs met under the local DMA key and in MR page lists,
 * and LOC_PROT_ERR for what is not linked.
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

#define PG 4096u
#define NPAGES 12u
#define ALL_ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

struct mmu_env {
	struct soft_env env;
	u8 *local, *remote;
	struct ib_mr *lmr, *rmr;
};

static void mmu_init(struct mmu_env *m, const char *profile, bool iommu)
{
	u32 i;

	soft_env_init(&m->env, &(struct soft_env_cfg){ .profile = profile,
						       .iommu = iommu });
	m->local = aligned_alloc(PG, NPAGES * PG);
	m->remote = aligned_alloc(PG, NPAGES * PG);
	assert_non_null(m->local);
	assert_non_null(m->remote);
	for (i = 0; i < NPAGES * PG; i++) {
		m->local[i] = (u8)(i * 13 + 1);
		m->remote[i] = (u8)(i * 7 + 2);
	}
	m->lmr = soft_env_reg(&m->env, 0, m->local, NPAGES * PG, ALL_ACCESS);
	m->rmr = soft_env_reg(&m->env, 1, m->remote, NPAGES * PG, ALL_ACCESS);
}

static void mmu_fini(struct mmu_env *m)
{
	soft_env_dereg(m->lmr);
	soft_env_dereg(m->rmr);
	soft_env_fini(&m->env);
	free(m->local);
	free(m->remote);
}

/*
 * Link local pages 5 (from byte 100), 2 and 9 at consecutive IOVAs.
 * Returns the length of the range.
 */
static u32 link_three(struct mmu_env *m, struct dma_iova_state *st)
{
	struct ib_device *dev = m->env.dev[0];
	u8 *a = m->local + 5 * PG + 100, *b = m->local + 2 * PG,
	   *c = m->local + 9 * PG;
	u32 len = 3 * PG - 100;

	assert_true(ib_dma_iova_try_alloc(dev, st, (uintptr_t)a, len));
	assert_true(st->addr >> 63);
	assert_int_equal(st->addr % PG, 100);
	assert_int_equal(st->size, len);
	assert_int_equal(ib_dma_iova_link(dev, st, (uintptr_t)a, 0, PG - 100,
					  DMA_TO_DEVICE),
			 0);
	assert_int_equal(ib_dma_iova_link(dev, st, (uintptr_t)b, PG - 100, PG,
					  DMA_TO_DEVICE),
			 0);
	assert_int_equal(ib_dma_iova_link(dev, st, (uintptr_t)c, 2 * PG - 100,
					  PG, DMA_TO_DEVICE),
			 0);
	return len;
}

static void expect_three(struct mmu_env *m, const u8 *flat)
{
	assert_memory_equal(flat, m->local + 5 * PG + 100, PG - 100);
	assert_memory_equal(flat + PG - 100, m->local + 2 * PG, PG);
	assert_memory_equal(flat + 2 * PG - 100, m->local + 9 * PG, PG);
}

static void test_iova_write_read(void **state)
{
	struct dma_iova_state st;
	struct soft_stats stats;
	struct mmu_env m;
	u32 lkey, len;

	mmu_init(&m, "mlx5", true);
	assert_false(ib_uses_virt_dma(m.env.dev[0]));
	lkey = m.env.pd[0]->local_dma_lkey;
	len = link_three(&m, &st);
	assert_int_equal(soft_device_stats(m.env.dev[0], &stats), 0);
	assert_int_equal(stats.iova_ranges, 1);

	/* WRITE from the IOVA range: the remote gets pages 5+, 2, 9. */
	assert_int_equal(soft_env_rdma(m.env.qp[0], IB_WR_RDMA_WRITE, 1,
				       (void *)(uintptr_t)st.addr, len, lkey,
				       (uintptr_t)m.remote, m.rmr->rkey),
			 0);
	soft_env_expect(m.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	expect_three(&m, m.remote);

	/* READ into the IOVA range: the pages get the remote bytes. */
	memset(m.remote, 0x6b, len);
	assert_int_equal(soft_env_rdma(m.env.qp[0], IB_WR_RDMA_READ, 2,
				       (void *)(uintptr_t)st.addr, len, lkey,
				       (uintptr_t)m.remote, m.rmr->rkey),
			 0);
	soft_env_expect(m.env.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	expect_three(&m, m.remote);
	assert_int_equal(m.local[5 * PG + 99], (u8)((5 * PG + 99) * 13 + 1));

	/* Destroyed: the IOVA means nothing any more. */
	ib_dma_iova_destroy(m.env.dev[0], &st, len, DMA_TO_DEVICE);
	assert_int_equal(soft_device_stats(m.env.dev[0], &stats), 0);
	assert_int_equal(stats.iova_ranges, 0);
	st.addr = (1ULL << 63) | (PG + 100);
	assert_int_equal(soft_env_rdma(m.env.qp[0], IB_WR_RDMA_WRITE, 3,
				       (void *)(uintptr_t)st.addr, 8, lkey,
				       (uintptr_t)m.remote, m.rmr->rkey),
			 0);
	soft_env_expect(m.env.cq[0], 3, IB_WC_LOC_PROT_ERR, IB_WC_RDMA_WRITE);
	assert_int_equal(soft_env_state(m.env.qp[0]), IB_QPS_ERR);
	mmu_fini(&m);
}

/* A hole in the range: the access fails before any byte moves. */
static void test_iova_unlinked(void **state)
{
	struct ib_device *dev;
	struct dma_iova_state st;
	struct mmu_env m;
	u8 before[2 * PG];

	mmu_init(&m, "rxe", true);
	dev = m.env.dev[0];
	assert_true(
		ib_dma_iova_try_alloc(dev, &st, (uintptr_t)m.local, 2 * PG));
	assert_int_equal(ib_dma_iova_link(dev, &st, (uintptr_t)m.local, 0, PG,
					  DMA_TO_DEVICE),
			 0);
	memcpy(before, m.remote, sizeof(before));
	assert_int_equal(soft_env_rdma(m.env.qp[0], IB_WR_RDMA_WRITE, 1,
				       (void *)(uintptr_t)st.addr, 2 * PG,
				       m.env.pd[0]->local_dma_lkey,
				       (uintptr_t)m.remote, m.rmr->rkey),
			 0);
	soft_env_expect(m.env.cq[0], 1, IB_WC_LOC_PROT_ERR, IB_WC_RDMA_WRITE);
	assert_memory_equal(before, m.remote, sizeof(before));
	assert_int_equal(soft_env_state(m.env.qp[0]), IB_QPS_ERR);
	assert_int_equal(soft_env_state(m.env.qp[1]), IB_QPS_RTS);
	ib_dma_iova_destroy(dev, &st, PG, DMA_TO_DEVICE);
	mmu_fini(&m);
}

static void test_iova_link_rules(void **state)
{
	struct ib_device *dev;
	struct dma_iova_state st;
	struct mmu_env m;

	mmu_init(&m, "rxe", true);
	dev = m.env.dev[0];
	assert_true(
		ib_dma_iova_try_alloc(dev, &st, (uintptr_t)m.local, 2 * PG));
	/* The IOVA and the memory must share the in-page offset. */
	assert_int_equal(ib_dma_iova_link(dev, &st, (uintptr_t)m.local + 8, 0,
					  PG, DMA_TO_DEVICE),
			 -EINVAL);
	/* Beyond the range. */
	assert_int_equal(ib_dma_iova_link(dev, &st, (uintptr_t)m.local, PG,
					  2 * PG, DMA_TO_DEVICE),
			 -EINVAL);
	/* A page linked to one page cannot be linked to another. */
	assert_int_equal(ib_dma_iova_link(dev, &st, (uintptr_t)m.local, 0, PG,
					  DMA_TO_DEVICE),
			 0);
	assert_int_equal(ib_dma_iova_link(dev, &st, (uintptr_t)m.local + PG, 0,
					  PG, DMA_TO_DEVICE),
			 -EINVAL);
	ib_dma_iova_destroy(dev, &st, PG, DMA_TO_DEVICE);
	assert_false(dma_use_iova(&st));
	mmu_fini(&m);
}

/* Without the IOMMU there are no IOVAs, and an IOVA-looking address is
 * nobody's memory. */
static void test_no_iommu(void **state)
{
	struct dma_iova_state st;
	struct mmu_env m;

	mmu_init(&m, "siw", false);
	assert_true(ib_uses_virt_dma(m.env.dev[0]));
	assert_false(ib_dma_iova_try_alloc(m.env.dev[0], &st,
					   (uintptr_t)m.local, PG));
	assert_false(dma_use_iova(&st));
	assert_int_equal(soft_env_rdma(m.env.qp[0], IB_WR_RDMA_WRITE, 1,
				       (void *)(uintptr_t)((1ULL << 63) | PG),
				       8, m.env.pd[0]->local_dma_lkey,
				       (uintptr_t)m.remote, m.rmr->rkey),
			 0);
	soft_env_expect(m.env.cq[0], 1, IB_WC_LOC_PROT_ERR, IB_WC_RDMA_WRITE);
	mmu_fini(&m);
}

/* IOVAs in a fast-registration MR's page list translate too. */
static void test_iova_in_mr(void **state)
{
	struct dma_iova_state st;
	struct scatterlist sg[1];
	struct ib_mr *fmr;
	struct mmu_env m;
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 1,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = ALL_ACCESS,
	};
	u32 len;

	mmu_init(&m, "rxe", true);
	len = link_three(&m, &st);
	fmr = ib_alloc_mr(m.env.pd[0], IB_MR_TYPE_MEM_REG, 4);
	assert_false(IS_ERR(fmr));
	sg_init_table(sg, 1);
	sg->dma_address = st.addr;
	sg->dma_length = len;
	sg->length = len;
	assert_int_equal(ib_map_mr_sg(fmr, sg, 1, NULL, PG), 1);
	assert_int_equal(fmr->iova, st.addr);
	reg.mr = fmr;
	reg.key = fmr->rkey;
	assert_int_equal(ib_post_send(m.env.qp[0], &reg.wr, NULL), 0);
	soft_env_expect(m.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_REG_MR);
	/* The peer READs through the MR: the bytes of pages 5+, 2, 9. */
	assert_int_equal(soft_env_rdma(m.env.qp[1], IB_WR_RDMA_READ, 2,
				       m.remote, len, m.rmr->lkey, fmr->iova,
				       fmr->rkey),
			 0);
	soft_env_expect(m.env.cq[1], 2, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	expect_three(&m, m.remote);
	soft_env_dereg(fmr);
	ib_dma_iova_destroy(m.env.dev[0], &st, len, DMA_TO_DEVICE);
	mmu_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iova_write_read),
		cmocka_unit_test(test_iova_unlinked),
		cmocka_unit_test(test_iova_link_rules),
		cmocka_unit_test(test_no_iommu),
		cmocka_unit_test(test_iova_in_mr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_sg_to_pages()'s walk where it stops early, on both of its callers: a
 * provider that hands it a set_page (the fake provider: an indirect call
 * per page) and the software device, which inlines its set_page into the
 * same walk.  Both must give the same result, MR length and *sg_offset:
 * a page list that fills up inside an entry after the first reports how
 * far into THAT entry it got (the first entry's sg_offset is not carried
 * over), one that fills up inside the first entry counts from its start.
 * Then the walks of a context (DMA mapping, SGE fill, MR pages) over a
 * chained list, and over a list whose last entry has no end mark: no walk
 * may read an entry beyond the count it was given (ASan checks that).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "helpers/fake_provider.h"
#include "helpers/soft_env.h"

#include <rdmarw/rw.h>

#define PG 4096U

/* A list of @n entries "DMA-mapped" at @addr[i] for @len[i] bytes. */
static void build(struct scatterlist *sg, int n, const u64 *addr,
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

/*
 * The stops, on an MR of 3 pages at @base (page aligned, 16 pages of
 * memory).  Each case names what it checks.
 */
static void check_stops(struct ib_mr *mr, u64 base)
{
	struct scatterlist sg[4];
	unsigned int off;

	/* Full inside entry 1, with an offset into entry 0: entry 0 gives
	 * 2 pages from 0x100, entry 1 one page of its two. */
	build(sg, 2, (u64[]){ base, base + 4 * PG }, (u32[]){ 2 * PG, 2 * PG });
	off = 0x100;
	assert_int_equal(ib_map_mr_sg(mr, sg, 2, &off, PG), 1);
	assert_int_equal(off, PG);
	assert_int_equal(mr->iova, base + 0x100);
	assert_int_equal(mr->length, 2 * PG - 0x100 + PG);

	/* Full inside entry 0 with an offset: counted from the entry's start,
	 * so the caller resumes there; no whole entry, still not an error. */
	build(sg, 1, (u64[]){ base }, (u32[]){ 5 * PG });
	off = 0x100;
	assert_int_equal(ib_map_mr_sg(mr, sg, 1, &off, PG), 0);
	assert_int_equal(off, 3 * PG);
	assert_int_equal(mr->length, 3 * PG - 0x100);

	/* Full inside entry 2, no offset. */
	build(sg, 3, (u64[]){ base, base + 2 * PG, base + 8 * PG },
	      (u32[]){ PG, PG, 2 * PG });
	off = 0;
	assert_int_equal(ib_map_mr_sg(mr, sg, 3, &off, PG), 2);
	assert_int_equal(off, PG);
	assert_int_equal(mr->length, 3 * PG);

	/* Full exactly at the end of entry 1: entry 2 maps nothing. */
	build(sg, 3, (u64[]){ base, base + 2 * PG, base + 8 * PG },
	      (u32[]){ PG, 2 * PG, PG });
	off = 0;
	assert_int_equal(ib_map_mr_sg(mr, sg, 3, &off, PG), 2);
	assert_int_equal(off, 0);
	assert_int_equal(mr->length, 3 * PG);

	/* The list ends (SG_END) before sg_nents: the entries there were. */
	build(sg, 2, (u64[]){ base, base + 2 * PG }, (u32[]){ PG, PG });
	off = 0;
	assert_int_equal(ib_map_mr_sg(mr, sg, 4, &off, PG), 2);
	assert_int_equal(off, 0);
	assert_int_equal(mr->length, 2 * PG);

	/* A rule broken in entry 1 (starts inside a page): stops before. */
	build(sg, 2, (u64[]){ base + 0x100, base + 4 * PG + 8 },
	      (u32[]){ PG - 0x100, PG });
	off = 0;
	assert_int_equal(ib_map_mr_sg(mr, sg, 2, &off, PG), 1);
	assert_int_equal(off, 0);
	assert_int_equal(mr->length, PG - 0x100);
}

static void test_stops_fake(void **state)
{
	struct fake_dev *fd = fake_dev_new("fake%d", RDMA_PROTOCOL_IB);
	u8 *b = aligned_alloc(PG, 16 * PG);
	struct ib_pd *pd;
	struct ib_mr *mr;
	u64 base = (uintptr_t)b;

	assert_non_null(fd);
	assert_non_null(b);
	pd = ib_alloc_pd(&fd->ibdev, 0);
	assert_false(IS_ERR(pd));
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 3);
	assert_false(IS_ERR(mr));
	check_stops(mr, base);
	/* the fake's pages for the last case: the one page of entry 0 */
	assert_int_equal(to_fake_mr(mr)->npages, 1);
	assert_int_equal(to_fake_mr(mr)->pages[0], base);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(ib_dealloc_pd(pd), 0);
	assert_int_equal(fake_dev_free(fd), 0);
	free(b);
}

static void stops_soft(const char *profile)
{
	struct soft_env env;
	u8 *b = aligned_alloc(PG, 16 * PG);
	struct ib_mr *mr;

	assert_non_null(b);
	soft_env_init(&env, &(struct soft_env_cfg){ .profile = profile,
						    .no_connect = true });
	mr = ib_alloc_mr(env.pd[0], IB_MR_TYPE_MEM_REG, 3);
	assert_false(IS_ERR(mr));
	check_stops(mr, (uintptr_t)b);
	assert_int_equal(ib_dereg_mr(mr), 0);
	soft_env_fini(&env);
	free(b);
}

static void test_stops_soft_rxe(void **state)
{
	stops_soft("rxe");
}

static void test_stops_soft_mlx5(void **state)
{
	stops_soft("mlx5");
}

/* @n entries of one page each, page after page from @buf. */
static void fill_pages(struct scatterlist *sg, int n, u8 *buf)
{
	int i;

	for (i = 0; i < n; i++)
		sg_set_buf(&sg[i], buf + (size_t)i * PG, PG);
}

/*
 * The six entries at @sg (pages 0..5 of @buf) through a MULTI context
 * (rxe, 4 SGEs per WR, sg_offset 100) and an MR context.
 */
static void walk_six(struct soft_env *env, struct scatterlist *sg, u8 *buf)
{
	struct ib_qp *qp = env->qp[0];
	struct ib_device *dev = env->dev[0];
	u64 base = (uintptr_t)buf, raddr = 0x100000;
	struct rdma_rw_ctx ctx;
	struct ib_mr *mr;
	int i;

	assert_int_equal(ib_dma_map_sg(dev, sg, 6, DMA_TO_DEVICE), 6);
	assert_int_equal(rdmarw_dma_mapped(dev), 6);
	ib_dma_unmap_sg(dev, sg, 6, DMA_TO_DEVICE);

	assert_int_equal(rdma_rw_ctx_init(&ctx, qp, 1, sg, 6, 100, raddr, 0x77,
					  DMA_TO_DEVICE),
			 2);
	assert_int_equal(ctx.type, RDMA_RW_MULTI_WR);
	assert_int_equal(ctx.map.nr_sges, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(ctx.map.sges[i].addr,
				 base + (u64)i * PG + (i ? 0 : 100));
		assert_int_equal(ctx.map.sges[i].length, i ? PG : PG - 100);
		assert_int_equal(ctx.map.sges[i].lkey, qp->pd->local_dma_lkey);
	}
	assert_int_equal(ctx.map.wrs[0].wr.num_sge, 4);
	assert_ptr_equal(ctx.map.wrs[0].wr.sg_list, &ctx.map.sges[0]);
	assert_ptr_equal(ctx.map.wrs[0].wr.next, &ctx.map.wrs[1].wr);
	assert_int_equal(ctx.map.wrs[0].remote_addr, raddr);
	assert_int_equal(ctx.map.wrs[1].wr.num_sge, 2);
	assert_ptr_equal(ctx.map.wrs[1].wr.sg_list, &ctx.map.sges[4]);
	assert_int_equal(ctx.map.wrs[1].remote_addr, raddr + 4 * PG - 100);
	assert_int_equal(ctx.map.wrs[1].rkey, 0x77);
	rdma_rw_ctx_destroy(&ctx, qp, 1, sg, 6, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);

	rdma_rw_set_force_mr(true);
	assert_int_equal(rdma_rw_ctx_init(&ctx, qp, 1, sg, 6, 100, raddr, 0x77,
					  DMA_TO_DEVICE),
			 2); /* REG_MR + WRITE: the MR is new */
	rdma_rw_set_force_mr(false);
	assert_int_equal(ctx.type, RDMA_RW_MR);
	assert_int_equal(ctx.nr_ops, 1);
	mr = ctx.reg[0].mr;
	assert_int_equal(mr->iova, base + 100);
	assert_int_equal(mr->length, 6 * PG - 100);
	assert_int_equal(ctx.reg[0].sge.length, 6 * PG - 100);
	rdma_rw_ctx_destroy(&ctx, qp, 1, sg, 6, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
}

static void rw_env_init(struct soft_env *env)
{
	soft_env_init(env, &(struct soft_env_cfg){
				   .profile = "rxe",
				   .cap = { .max_send_sge = 4,
					    .max_send_wr = 16,
					    .max_rdma_ctxs = 2 },
			   });
}

/* A chain link between entry 1 and entry 2. */
static void test_chained_list(void **state)
{
	struct scatterlist a[3], b[4];
	struct soft_env env;
	u8 *buf = aligned_alloc(PG, 8 * PG);

	assert_non_null(buf);
	rdma_rw_set_force_mr(true); /* the QP gets MRs for the MR context */
	rw_env_init(&env);
	rdma_rw_set_force_mr(false);
	sg_init_table(a, 3);
	sg_init_table(b, 4);
	fill_pages(a, 2, buf);
	fill_pages(b, 4, buf + 2 * PG);
	sg_chain(a, 3, b);
	walk_six(&env, a, buf);
	soft_env_fini(&env);
	free(buf);
}

/* Exactly six entries on the heap, the last without SG_END. */
static void test_unterminated_list(void **state)
{
	struct scatterlist *sg = malloc(6 * sizeof(*sg));
	struct soft_env env;
	u8 *buf = aligned_alloc(PG, 8 * PG);

	assert_non_null(sg);
	assert_non_null(buf);
	rdma_rw_set_force_mr(true);
	rw_env_init(&env);
	rdma_rw_set_force_mr(false);
	sg_init_table(sg, 6);
	sg_unmark_end(&sg[5]);
	fill_pages(sg, 6, buf);
	walk_six(&env, sg, buf);
	soft_env_fini(&env);
	free(buf);
	free(sg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stops_fake),
		cmocka_unit_test(test_stops_soft_rxe),
		cmocka_unit_test(test_stops_soft_mlx5),
		cmocka_unit_test(test_chained_list),
		cmocka_unit_test(test_unterminated_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

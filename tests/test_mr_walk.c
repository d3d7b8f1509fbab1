// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_sg_to_pages()'s walk where it stops early, on both of its callers: a
 * provider that hands it a set_page (the fake provider: an indirect call
 * per page) and the software device, which inlines its set_page into the
 * same walk.  Both must give the same result, MR length and *sg_offset:
 * a page list that fills up inside an entry after the first reports how
 * far into THAT entry it got (the first entry's sg_offset is not carried
 * over), one that fills up inside the first entry counts from its start.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stops_fake),
		cmocka_unit_test(test_stops_soft_rxe),
		cmocka_unit_test(test_stops_soft_mlx5),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

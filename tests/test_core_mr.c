// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MRs on the fake provider: the allocation rules, and the page rules of
 * ib_map_mr_sg()/ib_sg_to_pages() (the fake's map_mr_sg records the page
 * list that ib_sg_to_pages() builds).  Scatterlists are given DMA addresses
 * by hand: no memory is touched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "helpers/fake_provider.h"

struct env {
	struct fake_dev *fd;
	struct ib_pd *pd;
};

static int setup(void **state)
{
	static struct env env;

	env.fd = fake_dev_new("fake%d", RDMA_PROTOCOL_IB);
	if (!env.fd)
		return -1;
	env.pd = ib_alloc_pd(&env.fd->ibdev, 0);
	if (IS_ERR(env.pd))
		return -1;
	*state = &env;
	return 0;
}

static int teardown(void **state)
{
	struct env *env = *state;

	assert_int_equal(ib_dealloc_pd(env->pd), 0);
	assert_int_equal(env->fd->live_mrs, 0);
	assert_int_equal(env->fd->live_pds, 0);
	return fake_dev_free(env->fd);
}

static struct ib_mr *new_mr(struct env *env, u32 max_num_sg)
{
	struct ib_mr *mr = ib_alloc_mr(env->pd, IB_MR_TYPE_MEM_REG, max_num_sg);

	assert_false(IS_ERR(mr));
	return mr;
}

struct ent {
	u64 addr;
	u32 len;
};

/* A list whose entries are already "DMA-mapped" at the given addresses. */
static void fill(struct scatterlist *sg, const struct ent *e, int n)
{
	int i;

	sg_init_table(sg, (unsigned int)n);
	for (i = 0; i < n; i++) {
		sg[i].length = e[i].len;
		sg[i].dma_address = e[i].addr;
		sg[i].dma_length = e[i].len;
	}
}

static void check_pages(struct ib_mr *mr, const u64 *want, u32 n)
{
	struct fake_mr *fmr = to_fake_mr(mr);
	u32 i;

	assert_int_equal(fmr->npages, n);
	for (i = 0; i < n; i++)
		assert_int_equal(fmr->pages[i], want[i]);
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAP(mr, sg, n, off) ib_map_mr_sg(mr, sg, n, off, 4096)

/* ---- allocation rules -------------------------------------------------- */

static void alloc_mr_rules(void **state)
{
	struct env *env = *state;
	struct ib_device_attr *a = &env->fd->ibdev.attrs;
	struct ib_mr *mr;

	assert_ptr_equal(ib_alloc_mr(NULL, IB_MR_TYPE_MEM_REG, 4),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_mr(env->pd, IB_MR_TYPE_MEM_REG, 0),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_mr(env->pd, IB_MR_TYPE_MEM_REG, 513),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_mr(env->pd, IB_MR_TYPE_USER, 4),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_mr(env->pd, IB_MR_TYPE_SG_GAPS, 4),
			 ERR_PTR(-EOPNOTSUPP));
	a->device_cap_flags &= ~(u64)IB_DEVICE_MEM_MGT_EXTENSIONS;
	assert_ptr_equal(ib_alloc_mr(env->pd, IB_MR_TYPE_MEM_REG, 4),
			 ERR_PTR(-EOPNOTSUPP));
	a->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
	assert_int_equal(env->pd->usecnt, 0);

	mr = ib_alloc_mr(env->pd, IB_MR_TYPE_MEM_REG, 512);
	assert_false(IS_ERR(mr));
	assert_int_equal(mr->max_num_sg, 512);
	assert_int_equal(mr->type, IB_MR_TYPE_MEM_REG);
	assert_false(mr->need_inval);
	assert_ptr_equal(mr->pd, env->pd);
	assert_int_equal(env->pd->usecnt, 1);
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(env->pd->usecnt, 0);
	assert_int_equal(ib_dereg_mr(NULL), -EINVAL);
}

static void alloc_mr_integrity_rules(void **state)
{
	struct env *env = *state;
	struct ib_device_attr *a = &env->fd->ibdev.attrs;
	struct ib_mr *mr;

	assert_ptr_equal(ib_alloc_mr_integrity(env->pd, 4, 4),
			 ERR_PTR(-EOPNOTSUPP));
	a->kernel_cap_flags |= IBK_INTEGRITY_HANDOVER;
	assert_ptr_equal(ib_alloc_mr_integrity(NULL, 4, 4), ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_mr_integrity(env->pd, 0, 4),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_alloc_mr_integrity(env->pd, 4, 257),
			 ERR_PTR(-EINVAL));
	mr = ib_alloc_mr_integrity(env->pd, 256, 8);
	assert_false(IS_ERR(mr));
	assert_int_equal(mr->type, IB_MR_TYPE_INTEGRITY);
	assert_int_equal(mr->max_num_sg, 256);
	assert_int_equal(mr->max_num_meta_sg, 8);
	assert_int_equal(ib_dereg_mr(mr), 0);
	a->kernel_cap_flags &= ~(u64)IBK_INTEGRITY_HANDOVER;
}

static void reg_user_mr_rules(void **state)
{
	struct env *env = *state;
	const int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct ib_mr *mr;

	assert_ptr_equal(ib_reg_user_mr(NULL, 0x1000, 10, 0x1000, 0),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env->pd, 0, 10, 0, 0),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env->pd, 0x1000, 0, 0x1000, 0),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env->pd, UINT64_MAX - 4, 10, 0x1000, 0),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env->pd, 0x1000, 10, UINT64_MAX - 4, 0),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env->pd, 0x1000, 10, 0x1000,
					IB_ACCESS_REMOTE_WRITE),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env->pd, 0x1000, 10, 0x1000,
					IB_ACCESS_REMOTE_ATOMIC),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_reg_user_mr(env->pd, 0x1000, 10, 0x1000, 1 << 30),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(
		ib_reg_user_mr(env->pd, 0x1000, (1ULL << 40) + 1, 0x1000, 0),
		ERR_PTR(-EINVAL));
	assert_int_equal(env->pd->usecnt, 0);

	mr = ib_reg_user_mr(env->pd, 0x1000, 100, 0x7000, rw);
	assert_false(IS_ERR(mr));
	assert_int_equal(mr->type, IB_MR_TYPE_USER);
	assert_int_equal(mr->iova, 0x7000);
	assert_int_equal(mr->length, 100);
	assert_int_equal(mr->access, rw);
	assert_int_equal(env->pd->usecnt, 1);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

/* A provider that refuses to deregister keeps the MR alive and counted. */
static void dereg_refused_by_the_provider(void **state)
{
	struct env *env = *state;
	struct ib_mr *mr = new_mr(env, 4);

	env->fd->dereg_mr_ret = -EBUSY;
	assert_int_equal(ib_dereg_mr(mr), -EBUSY);
	assert_int_equal(env->pd->usecnt, 1);
	assert_int_equal(env->fd->live_mrs, 1);
	env->fd->dereg_mr_ret = 0;
	assert_int_equal(ib_dereg_mr(mr), 0);
	assert_int_equal(env->pd->usecnt, 0);
}

/* ---- page rules ---------------------------------------------------------- */

static void first_entry_may_start_inside_a_page(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100010, 0x2ff0 }, { 0x103000, 0x1000 } };
	const u64 want[] = { 0x100000, 0x101000, 0x102000, 0x103000 };
	struct ib_mr *mr = new_mr(env, 16);
	struct scatterlist sg[2];
	unsigned int off = 0;

	fill(sg, e, 2);
	assert_int_equal(MAP(mr, sg, 2, &off), 2);
	check_pages(mr, want, ARRAY_SIZE(want));
	assert_int_equal(mr->iova, 0x100010);
	assert_int_equal(mr->length, 0x3ff0);
	assert_int_equal(mr->page_size, 4096);
	assert_int_equal(off, 0);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

static void later_entry_starting_inside_a_page_stops(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100000, 0x1000 },
				 { 0x200010, 0x100 },
				 { 0x300000, 0x1000 } };
	const u64 want[] = { 0x100000 };
	struct ib_mr *mr = new_mr(env, 16);
	struct scatterlist sg[3];
	unsigned int off = 0;

	fill(sg, e, 3);
	assert_int_equal(MAP(mr, sg, 3, &off), 1);
	check_pages(mr, want, 1);
	assert_int_equal(mr->iova, 0x100000);
	assert_int_equal(mr->length, 0x1000);
	assert_int_equal(off, 0);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

static void only_the_last_entry_may_end_inside_a_page(void **state)
{
	struct env *env = *state;
	const struct ent stop[] = { { 0x100000, 0x800 }, { 0x200000, 0x1000 } };
	const struct ent ok[] = { { 0x100000, 0x1000 }, { 0x200000, 0x10 } };
	const u64 want_ok[] = { 0x100000, 0x200000 };
	const u64 want_stop[] = { 0x100000 };
	struct ib_mr *mr = new_mr(env, 16);
	struct scatterlist sg[2];

	fill(sg, stop, 2);
	assert_int_equal(MAP(mr, sg, 2, NULL), 1);
	check_pages(mr, want_stop, 1);
	assert_int_equal(mr->length, 0x800);

	fill(sg, ok, 2);
	assert_int_equal(MAP(mr, sg, 2, NULL), 2);
	check_pages(mr, want_ok, 2);
	assert_int_equal(mr->length, 0x1010);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

static void byte_contiguous_entries_share_a_page(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100000, 0x800 },
				 { 0x100800, 0x1000 },
				 { 0x101800, 0x800 },
				 { 0x102000, 0x1000 } };
	const struct ent gap[] = { { 0x100000, 0x800 }, { 0x100900, 0x100 } };
	const u64 want[] = { 0x100000, 0x101000, 0x102000 };
	struct ib_mr *mr = new_mr(env, 16);
	struct scatterlist sg[4];

	fill(sg, e, 4);
	assert_int_equal(MAP(mr, sg, 4, NULL), 4);
	check_pages(mr, want, 3);
	assert_int_equal(mr->iova, 0x100000);
	assert_int_equal(mr->length, 0x3000);

	/* Not contiguous and not aligned: stop after the first. */
	fill(sg, gap, 2);
	assert_int_equal(MAP(mr, sg, 2, NULL), 1);
	check_pages(mr, want, 1);
	assert_int_equal(mr->length, 0x800);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

/*
 * A full page list: the count of whole entries mapped, and sg_offset at the
 * first unmapped byte of the entry that did not fit, so that a second MR
 * continues exactly there.  (The kernel stops one page earlier; see
 * docs/deviations.md.)
 */
static void full_page_list_maps_a_prefix(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100000, 0x3000 }, { 0x200000, 0x3000 } };
	const u64 want1[] = { 0x100000, 0x101000, 0x102000, 0x200000 };
	const u64 want2[] = { 0x201000, 0x202000 };
	struct ib_mr *mr1 = new_mr(env, 4), *mr2 = new_mr(env, 4);
	struct scatterlist sg[2];
	unsigned int off = 0;

	fill(sg, e, 2);
	assert_int_equal(MAP(mr1, sg, 2, &off), 1);
	check_pages(mr1, want1, 4);
	assert_int_equal(mr1->iova, 0x100000);
	assert_int_equal(mr1->length, 0x4000);
	assert_int_equal(off, 0x1000);

	assert_int_equal(MAP(mr2, &sg[1], 1, &off), 1);
	check_pages(mr2, want2, 2);
	assert_int_equal(mr2->iova, 0x201000);
	assert_int_equal(mr2->length, 0x2000);
	assert_int_equal(off, 0);
	assert_int_equal(ib_dereg_mr(mr1), 0);
	assert_int_equal(ib_dereg_mr(mr2), 0);
}

/* Not even the first entry fits: 0 entries, the offset says how far. */
static void full_page_list_inside_the_first_entry(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100010, 0x2000 } };
	const u64 want[] = { 0x100000 };
	struct ib_mr *mr = new_mr(env, 1);
	struct scatterlist sg[1];
	unsigned int off = 0;

	fill(sg, e, 1);
	assert_int_equal(MAP(mr, sg, 1, &off), 0);
	check_pages(mr, want, 1);
	assert_int_equal(mr->length, 0xff0);
	assert_int_equal(off, 0xff0);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

static void sg_offset_skips_into_the_first_entry(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100000, 0x3000 }, { 0x200000, 0x1000 } };
	const u64 want[] = { 0x101000, 0x102000, 0x200000 };
	struct ib_mr *mr = new_mr(env, 16);
	struct scatterlist sg[2];
	unsigned int off = 0x1800;

	fill(sg, e, 2);
	assert_int_equal(MAP(mr, sg, 2, &off), 2);
	check_pages(mr, want, 3);
	assert_int_equal(mr->iova, 0x101800);
	assert_int_equal(mr->length, 0x2800);
	assert_int_equal(off, 0);
	/* The caller's list is not changed. */
	assert_int_equal(sg[0].dma_address, 0x100000);
	assert_int_equal(sg[0].dma_length, 0x3000);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

static void larger_page_sizes(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100100, 0x1ff00 }, { 0x120000, 0x10 } };
	const u64 want64k[] = { 0x100000, 0x110000, 0x120000 };
	const u64 want8k[] = { 0x100000, 0x102000 };
	const struct ent e8[] = { { 0x100000, 0x3000 } };
	struct ib_mr *mr = new_mr(env, 64);
	struct scatterlist sg[2];

	fill(sg, e, 2);
	assert_int_equal(ib_map_mr_sg(mr, sg, 2, NULL, 0x10000), 2);
	assert_int_equal(mr->page_size, 0x10000);
	check_pages(mr, want64k, 3);
	assert_int_equal(mr->length, 0x1ff10);

	/* The same list in 4 KiB pages: 0x20 for the first entry, one for
	 * the second. */
	assert_int_equal(MAP(mr, sg, 2, NULL), 2);
	assert_int_equal(to_fake_mr(mr)->npages, 0x20 + 1);

	fill(sg, e8, 1);
	assert_int_equal(ib_map_mr_sg(mr, sg, 1, NULL, 0x2000), 1);
	check_pages(mr, want8k, 2);

	/* A device's page_size_cap limits the choice. */
	env->fd->ibdev.attrs.page_size_cap = SZ_4K | 0x200000;
	assert_int_equal(ib_map_mr_sg(mr, sg, 1, NULL, 0x2000), -EINVAL);
	assert_int_equal(MAP(mr, sg, 1, NULL), 1);
	env->fd->ibdev.attrs.page_size_cap = 0;
	assert_int_equal(ib_dereg_mr(mr), 0);
}

static int pages_counted;

static int count_page(struct ib_mr *mr, u64 addr)
{
	pages_counted++;
	return 0;
}

static void map_errors(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100000, 0x1000 }, { 0x101000, 0x1000 } };
	struct ib_mr *mr = new_mr(env, 16), *user;
	struct scatterlist sg[2];
	unsigned int off;

	fill(sg, e, 2);
	assert_int_equal(MAP(NULL, sg, 2, NULL), -EINVAL);
	assert_int_equal(MAP(mr, NULL, 2, NULL), -EINVAL);
	assert_int_equal(MAP(mr, sg, 0, NULL), -EINVAL);
	assert_int_equal(MAP(mr, sg, -1, NULL), -EINVAL);
	assert_int_equal(ib_map_mr_sg(mr, sg, 2, NULL, 0), -EINVAL);
	assert_int_equal(ib_map_mr_sg(mr, sg, 2, NULL, 2048), -EINVAL);
	assert_int_equal(ib_map_mr_sg(mr, sg, 2, NULL, 0x3000), -EINVAL);
	off = 0x1000; /* at the end of the first entry */
	assert_int_equal(MAP(mr, sg, 2, &off), -EINVAL);
	off = 0x5000;
	assert_int_equal(MAP(mr, sg, 2, &off), -EINVAL);

	user = ib_reg_user_mr(env->pd, 0x1000, 0x1000, 0x1000, 0);
	assert_false(IS_ERR(user));
	assert_int_equal(MAP(user, sg, 2, NULL), -EINVAL);
	assert_int_equal(ib_dereg_mr(user), 0);

	/* ib_sg_to_pages() itself (for providers). */
	mr->page_size = 4096;
	assert_int_equal(ib_sg_to_pages(NULL, sg, 1, NULL, count_page),
			 -EINVAL);
	assert_int_equal(ib_sg_to_pages(mr, NULL, 1, NULL, count_page),
			 -EINVAL);
	assert_int_equal(ib_sg_to_pages(mr, sg, 0, NULL, count_page), -EINVAL);
	assert_int_equal(ib_sg_to_pages(mr, sg, 1, NULL, NULL), -EINVAL);
	off = 0x1000; /* at the end of the first entry */
	assert_int_equal(ib_sg_to_pages(mr, sg, 2, &off, count_page), -EINVAL);
	assert_int_equal(off, 0x1000);
	mr->page_size = 0;
	assert_int_equal(ib_sg_to_pages(mr, sg, 1, NULL, count_page), -EINVAL);
	assert_int_equal(pages_counted, 0);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

/* A list that ends before sg_nents, and sg_nents shorter than the list. */
static void entry_counts(void **state)
{
	struct env *env = *state;
	const struct ent e[] = { { 0x100000, 0x1000 },
				 { 0x101000, 0x1000 },
				 { 0x102000, 0x1000 } };
	struct ib_mr *mr = new_mr(env, 16);
	struct scatterlist sg[3];

	fill(sg, e, 3);
	assert_int_equal(MAP(mr, sg, 2, NULL), 2);
	assert_int_equal(mr->length, 0x2000);
	assert_int_equal(MAP(mr, sg, 7, NULL), 3);
	assert_int_equal(mr->length, 0x3000);
	assert_int_equal(ib_dereg_mr(mr), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(alloc_mr_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(alloc_mr_integrity_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(reg_user_mr_rules, setup,
						teardown),
		cmocka_unit_test_setup_teardown(dereg_refused_by_the_provider,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			first_entry_may_start_inside_a_page, setup, teardown),
		cmocka_unit_test_setup_teardown(
			later_entry_starting_inside_a_page_stops, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			only_the_last_entry_may_end_inside_a_page, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			byte_contiguous_entries_share_a_page, setup, teardown),
		cmocka_unit_test_setup_teardown(full_page_list_maps_a_prefix,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			full_page_list_inside_the_first_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(
			sg_offset_skips_into_the_first_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(larger_page_sizes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(map_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(entry_counts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

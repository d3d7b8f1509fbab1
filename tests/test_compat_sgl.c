// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sgl_alloc(), sgl_alloc_order() and sgl_free*() (lib/scatterlist.c): the
 * entries' count and lengths, page-aligned blocks of the right size,
 * __GFP_ZERO, the spare chain entry, and refusals.  Every block is written
 * end to end so that ASan and valgrind see a short allocation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include <rdmarw/kernel.h>
#include <rdmarw/scatterlist.h>

/* Every entry holds a page-aligned block of @block bytes, the last the
 * rest; returns the total length. */
static unsigned long long check_list(struct scatterlist *sgl, unsigned int nent,
				     size_t block)
{
	unsigned long long total = 0;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sg(sgl, sg, nent, i) {
		assert_non_null(sg);
		assert_non_null(sg_page(sg));
		assert_int_equal((uintptr_t)sg_virt(sg) % PAGE_SIZE, 0);
		assert_int_equal(sg->offset, 0);
		if (i + 1 < nent)
			assert_int_equal(sg->length, block);
		assert_true(sg->length >= 1 && sg->length <= block);
		/* the whole block is ours */
		memset(page_address(sg_page(sg)), 0xa5, block);
		total += sg->length;
	}
	return total;
}

static void alloc_single_pages(void **state)
{
	static const unsigned long long lens[] = { 1,	 4095,	   4096,
						   4097, 3 * 4096, 100000 };
	unsigned int nent, i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		struct scatterlist *sgl;

		nent = 0;
		sgl = sgl_alloc(lens[i], GFP_KERNEL, &nent);
		assert_non_null(sgl);
		assert_int_equal(nent, (lens[i] + 4095) / 4096);
		/* no spare entry: the last entry with memory is marked last */
		assert_int_equal(sg_nents(sgl), (int)nent);
		assert_true(sg_is_last(&sgl[nent - 1]));
		assert_int_equal(check_list(sgl, nent, PAGE_SIZE), lens[i]);
		assert_int_equal(sgl[nent - 1].length,
				 lens[i] - (nent - 1) * 4096ULL);
		sgl_free(sgl);
	}
	/* nent_p may be NULL */
	sgl_free(sgl_alloc(10, GFP_ATOMIC, NULL));
}

static void alloc_order_and_chainable(void **state)
{
	struct scatterlist *sgl, *sg;
	unsigned int nent = 0;
	size_t block = PAGE_SIZE << 2;
	static char tail[64];
	struct scatterlist more[1];

	sgl = sgl_alloc_order(5 * block + 10, 2, true, GFP_KERNEL, &nent);
	assert_non_null(sgl);
	assert_int_equal(nent, 6);
	assert_int_equal(check_list(sgl, nent, block), 5 * block + 10);
	/* the spare entry: empty, marked last, after the data entries */
	assert_null(sg_page(&sgl[6]));
	assert_int_equal(sgl[6].length, 0);
	assert_true(sg_is_last(&sgl[6]));
	assert_false(sg_is_last(&sgl[5]));
	assert_int_equal(sg_nents(sgl), 7);
	/* it can be turned into a chain link */
	sg_init_one(more, tail, sizeof(tail));
	sg_chain(sgl, 7, more);
	sg = sg_last(sgl, 7);
	assert_ptr_equal(sg, more);
	assert_int_equal(sg_nents(sgl), 7);
	/* free only the list's own blocks: stop before the chained entry */
	sgl_free_n_order(sgl, 6, 2);
}

static void gfp_zero(void **state)
{
	struct scatterlist *sgl, *sg;
	unsigned int nent, i;
	size_t j;

	/* Allocate, dirty and free a few lists so that the heap hands back
	 * dirty memory, then ask for zeroed blocks. */
	for (i = 0; i < 4; i++) {
		sgl = sgl_alloc(3 * 4096, GFP_KERNEL, &nent);
		assert_non_null(sgl);
		check_list(sgl, nent, PAGE_SIZE);
		sgl_free(sgl);
	}
	sgl = sgl_alloc_order(2 * 8192, 1, false, GFP_KERNEL | __GFP_ZERO,
			      &nent);
	assert_non_null(sgl);
	assert_int_equal(nent, 2);
	for_each_sg(sgl, sg, nent, i) {
		const unsigned char *p = page_address(sg_page(sg));

		for (j = 0; j < 8192; j++)
			if (p[j])
				fail_msg("entry %u byte %zu is %u", i, j, p[j]);
	}
	sgl_free_order(sgl, 1);
}

static void refusals(void **state)
{
	unsigned int nent = 77;

	/* length 0, order above 10, a count that needs more than 32 bits */
	assert_null(sgl_alloc(0, GFP_KERNEL, &nent));
	assert_null(sgl_alloc_order(4096, 11, false, GFP_KERNEL, &nent));
	assert_null(sgl_alloc_order((unsigned long long)UINT_MAX * 4096 + 1, 0,
				    false, GFP_KERNEL, &nent));
	assert_null(sgl_alloc_order((unsigned long long)UINT_MAX * 4096, 0,
				    true, GFP_KERNEL, &nent));
	assert_null(sgl_alloc(~0ULL, GFP_KERNEL, &nent));
	/* a failed call leaves *nent_p alone */
	assert_int_equal(nent, 77);
	/* NULL frees nothing */
	sgl_free(NULL);
	sgl_free_order(NULL, 3);
	sgl_free_n_order(NULL, 5, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alloc_single_pages),
		cmocka_unit_test(alloc_order_and_chainable),
		cmocka_unit_test(gfp_zero),
		cmocka_unit_test(refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

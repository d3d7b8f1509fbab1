// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Scatterlists: entries, chaining, walking and the allocated tables, whose
 * arrays of 128 slots are chained through their last slot (the kernel's
 * SG_MAX_SINGLE_ALLOC).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdmarw/scatterlist.h>

#define CHUNK 128

static char buf[3 * 4096] __attribute__((aligned(4096)));

static void init_table_clears_and_marks_the_last_entry(void **state)
{
	struct scatterlist sg[4];
	unsigned int i;

	memset(sg, 0xa5, sizeof(sg));
	sg_init_table(sg, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(sg[i].length, 0);
		assert_int_equal(sg[i].offset, 0);
		assert_int_equal(sg[i].dma_address, 0);
		assert_false(sg_is_chain(&sg[i]));
		assert_int_equal(sg_is_last(&sg[i]), i == 3);
	}
	/* 0 entries and a NULL array do nothing. */
	sg[0].length = 7;
	sg_init_table(sg, 0);
	assert_int_equal(sg[0].length, 7);
	sg_init_table(NULL, 3);
}

static void set_buf_splits_page_and_offset(void **state)
{
	struct scatterlist sg[1];
	char *p = buf + 4096 + 100;

	sg_init_table(sg, 1);
	sg_set_buf(sg, p, 5000);
	assert_ptr_equal(sg_page(sg), (struct page *)(buf + 4096));
	assert_int_equal(sg->offset, 100);
	assert_int_equal(sg->length, 5000);
	assert_ptr_equal(sg_virt(sg), p);
	assert_true(sg_is_last(sg)); /* the end mark survives */
	assert_ptr_equal(virt_to_page(p), (struct page *)(buf + 4096));
	assert_ptr_equal(page_address(virt_to_page(p)), buf + 4096);
}

static void set_page_keeps_marks_and_allows_big_offsets(void **state)
{
	struct scatterlist sg[2];

	sg_init_table(sg, 2);
	/* An offset beyond PAGE_SIZE is legal, as in the kernel. */
	sg_set_page(&sg[1], virt_to_page(buf), 100, 4096 + 8);
	assert_ptr_equal(sg_virt(&sg[1]), buf + 4096 + 8);
	assert_true(sg_is_last(&sg[1]));
	sg_assign_page(&sg[1], virt_to_page(buf + 8192));
	assert_true(sg_is_last(&sg[1]));
	assert_ptr_equal(sg_page(&sg[1]), (struct page *)(buf + 8192));
	sg_unmark_end(&sg[1]);
	assert_false(sg_is_last(&sg[1]));
	sg_mark_end(&sg[0]);
	assert_true(sg_is_last(&sg[0]));
	assert_null(sg_next(&sg[0]));
	assert_int_equal(sg_nents(sg), 1);
}

static void init_one(void **state)
{
	struct scatterlist sg;

	memset(&sg, 0xff, sizeof(sg));
	sg_init_one(&sg, buf + 10, 20);
	assert_ptr_equal(sg_virt(&sg), buf + 10);
	assert_int_equal(sg.length, 20);
	assert_true(sg_is_last(&sg));
	assert_false(sg_is_chain(&sg));
	assert_int_equal(sg.dma_address, 0);
}

/* a[0..2] data, a[3] link -> b[0..1] data, b[2] link -> c[0] data. */
static void build_chain(struct scatterlist *a, struct scatterlist *b,
			struct scatterlist *c)
{
	unsigned int i;

	sg_init_table(a, 4);
	sg_init_table(b, 3);
	sg_init_table(c, 1);
	for (i = 0; i < 3; i++)
		sg_set_buf(&a[i], buf + i, 10 + i);
	for (i = 0; i < 2; i++)
		sg_set_buf(&b[i], buf + 100 + i, 20 + i);
	sg_set_buf(c, buf + 200, 30);
	sg_chain(a, 4, b);
	sg_chain(b, 3, c);
}

static void chain_links_arrays(void **state)
{
	/* c[1] is never touched: it only spares the compiler's bounds check
	 * the sg_next(&c[0]) it cannot prove stops at the end mark. */
	struct scatterlist a[4], b[3], c[2], *sg;
	const unsigned int want_len[] = { 10, 11, 12, 20, 21, 30 };
	unsigned int i;

	build_chain(a, b, c);
	assert_true(sg_is_chain(&a[3]));
	assert_false(sg_is_last(&a[3]));
	assert_ptr_equal(sg_chain_ptr(&a[3]), b);
	assert_int_equal(a[3].length, 0);
	assert_ptr_equal(sg_next(&a[2]), &b[0]);
	assert_ptr_equal(sg_next(&b[1]), &c[0]);
	assert_null(sg_next(&c[0]));

	assert_int_equal(sg_nents(a), 6);
	assert_int_equal(sg_nents(b), 3);
	assert_int_equal(sg_nents(NULL), 0);

	for_each_sg(a, sg, 6, i) {
		assert_non_null(sg);
		assert_false(sg_is_chain(sg));
		assert_int_equal(sg->length, want_len[i]);
	}
	assert_int_equal(i, 6);
	assert_null(sg); /* walked past the last entry */

	assert_ptr_equal(sg_last(a, 6), &c[0]);
	assert_ptr_equal(sg_last(a, 4), &b[0]);
	assert_ptr_equal(sg_last(a, 1), &a[0]);
	assert_null(sg_last(a, 7)); /* the list ends early */
	assert_null(sg_last(a, 0));
}

/* Walk a table: data entries, chain links only at the 128-slot joints. */
static void check_table(struct sg_table *t, unsigned int nents)
{
	struct scatterlist *sg, *arr = t->sgl;
	unsigned int i, slot = 0, links = 0;

	assert_int_equal(t->orig_nents, nents);
	assert_int_equal(t->nents, nents);
	assert_int_equal(sg_nents(t->sgl), (int)nents);
	for (i = 0, sg = t->sgl; sg; sg = sg_next(sg), i++) {
		if (sg != &arr[slot]) { /* crossed a link */
			assert_int_equal(slot, CHUNK - 1);
			assert_true(sg_is_chain(&arr[slot]));
			arr = sg;
			slot = 0;
			links++;
		}
		assert_false(sg_is_chain(sg));
		assert_int_equal(sg_is_last(sg), i == nents - 1);
		sg_set_buf(sg, buf, i + 1); /* every entry is writable */
		slot++;
	}
	assert_int_equal(i, nents);
	assert_int_equal(links, nents <= CHUNK ? 0 : (nents - 2) / (CHUNK - 1));
	assert_int_equal(sg_last(t->sgl, nents)->length, nents);
}

static void alloc_table_across_the_chaining_threshold(void **state)
{
	const unsigned int sizes[] = { 1,   2,	 127, 128, 129,
				       254, 255, 256, 257, 1000 };
	struct sg_table t;
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&t, 0xff, sizeof(t));
		assert_int_equal(sg_alloc_table(&t, sizes[i], GFP_KERNEL), 0);
		check_table(&t, sizes[i]);
		sg_free_table(&t);
		assert_null(t.sgl);
		assert_int_equal(t.nents, 0);
		assert_int_equal(t.orig_nents, 0);
	}
}

static void alloc_table_errors(void **state)
{
	struct sg_table t;

	memset(&t, 0xff, sizeof(t));
	assert_int_equal(sg_alloc_table(&t, 0, GFP_KERNEL), -EINVAL);
	assert_null(t.sgl); /* nothing allocated, table cleared */
	assert_int_equal(t.orig_nents, 0);
	assert_int_equal(sg_alloc_table(NULL, 4, GFP_KERNEL), -EINVAL);
	/* Freeing NULL, an empty table, or twice is harmless. */
	sg_free_table(NULL);
	sg_free_table(&t);
	assert_int_equal(sg_alloc_table(&t, 3, GFP_KERNEL), 0);
	sg_free_table(&t);
	sg_free_table(&t);
}

static void sgtable_iterators(void **state)
{
	struct scatterlist *sg;
	struct sg_table t;
	unsigned int i, n = 0;

	assert_int_equal(sg_alloc_table(&t, 300, GFP_KERNEL), 0);
	t.nents = 5; /* as if DMA mapping had merged entries */
	for_each_sgtable_sg(&t, sg, i)
		n++;
	assert_int_equal(n, 300);
	n = 0;
	for_each_sgtable_dma_sg(&t, sg, i)
		n++;
	assert_int_equal(n, 5);
	t.nents = 300;
	sg_free_table(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(init_table_clears_and_marks_the_last_entry),
		cmocka_unit_test(set_buf_splits_page_and_offset),
		cmocka_unit_test(set_page_keeps_marks_and_allows_big_offsets),
		cmocka_unit_test(init_one),
		cmocka_unit_test(chain_links_arrays),
		cmocka_unit_test(alloc_table_across_the_chaining_threshold),
		cmocka_unit_test(alloc_table_errors),
		cmocka_unit_test(sgtable_iterators),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bio_vec arrays and their iterator, including multi-page vectors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/bvec.h>

static char mem[8 * 4096] __attribute__((aligned(4096)));

static void set_virt_and_phys(void **state)
{
	struct bio_vec bv;

	bvec_set_virt(&bv, mem + 4096 + 7, 100);
	assert_ptr_equal(bv.bv_page, (struct page *)(mem + 4096));
	assert_int_equal(bv.bv_offset, 7);
	assert_int_equal(bv.bv_len, 100);
	assert_int_equal(bvec_phys(&bv), (phys_addr_t)(uintptr_t)(mem + 4103));
}

/*
 * v[0]: 1000 bytes at page 0 + 100
 * v[1]: 3 pages at page 1 + 0 (multi-page)
 * v[2]: 500 bytes described from page 4 with offset 4096 + 10 (an offset
 *       past the first page, as multi-page vectors may have)
 */
static void make_vecs(struct bio_vec v[3])
{
	v[0] = (struct bio_vec){ virt_to_page(mem), 1000, 100 };
	v[1] = (struct bio_vec){ virt_to_page(mem + 4096), 3 * 4096, 0 };
	v[2] = (struct bio_vec){ virt_to_page(mem + 4 * 4096), 500, 4096 + 10 };
}

static void check_bvec(struct bio_vec got, const struct bio_vec *base,
		       unsigned int len, unsigned int offset)
{
	assert_ptr_equal(got.bv_page, base->bv_page);
	assert_int_equal(got.bv_len, len);
	assert_int_equal(got.bv_offset, offset);
}

static void iter_bvec_and_advance(void **state)
{
	struct bio_vec v[3];
	struct bvec_iter it = { .bi_size = 1000 + 3 * 4096 + 500 };

	make_vecs(v);
	check_bvec(mp_bvec_iter_bvec(v, it), &v[0], 1000, 100);

	/* Inside the first vector. */
	assert_true(bvec_iter_advance(v, &it, 10));
	assert_int_equal(it.bi_idx, 0);
	assert_int_equal(it.bi_bvec_done, 10);
	check_bvec(mp_bvec_iter_bvec(v, it), &v[0], 990, 110);

	/* Exactly to the end of the first: the next one starts fresh. */
	assert_true(bvec_iter_advance(v, &it, 990));
	assert_int_equal(it.bi_idx, 1);
	assert_int_equal(it.bi_bvec_done, 0);
	/* A multi-page vector comes out whole. */
	check_bvec(mp_bvec_iter_bvec(v, it), &v[1], 3 * 4096, 0);

	/* Across into the third vector. */
	assert_true(bvec_iter_advance(v, &it, 3 * 4096 + 20));
	assert_int_equal(it.bi_idx, 2);
	assert_int_equal(it.bi_bvec_done, 20);
	assert_int_equal(it.bi_size, 480);
	check_bvec(mp_bvec_iter_bvec(v, it), &v[2], 480, 4096 + 30);
	assert_int_equal(bvec_phys(&v[2]) + 30,
			 (phys_addr_t)(uintptr_t)(mem + 5 * 4096 + 40));

	/* Over-advance: refused, the iterator is left empty. */
	assert_false(bvec_iter_advance(v, &it, 481));
	assert_int_equal(it.bi_size, 0);
}

static void advance_zero_and_to_the_end(void **state)
{
	struct bio_vec v[3];
	struct bvec_iter it = { .bi_size = 1000 + 3 * 4096 + 500 };

	make_vecs(v);
	assert_true(bvec_iter_advance(v, &it, 0));
	assert_int_equal(it.bi_idx, 0);
	assert_int_equal(it.bi_bvec_done, 0);
	assert_true(bvec_iter_advance(v, &it, 1000 + 3 * 4096 + 500));
	assert_int_equal(it.bi_size, 0);
	assert_int_equal(it.bi_idx, 3);
	assert_int_equal(it.bi_bvec_done, 0);
}

/* The iterator's size clips the last vector it reaches. */
static void for_each_mp_bvec_clips_to_the_size(void **state)
{
	struct bio_vec v[3], bv;
	struct bvec_iter it, start = { .bi_size = 1000 + 4096,
				       .bi_idx = 0,
				       .bi_bvec_done = 0 };
	unsigned int lens[4], n = 0;

	make_vecs(v);
	for_each_mp_bvec(bv, v, it, start) {
		assert_true(n < 4);
		lens[n++] = bv.bv_len;
	}
	assert_int_equal(n, 2);
	assert_int_equal(lens[0], 1000);
	assert_int_equal(lens[1], 4096);

	/* Starting mid-vector. */
	start = (struct bvec_iter){ .bi_size = 600,
				    .bi_idx = 0,
				    .bi_bvec_done = 900 };
	n = 0;
	for_each_mp_bvec(bv, v, it, start) {
		assert_true(n < 4);
		lens[n++] = bv.bv_len;
		if (n == 1)
			assert_int_equal(bv.bv_offset, 1000);
	}
	assert_int_equal(n, 2);
	assert_int_equal(lens[0], 100);
	assert_int_equal(lens[1], 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_virt_and_phys),
		cmocka_unit_test(iter_bvec_and_advance),
		cmocka_unit_test(advance_zero_and_to_the_end),
		cmocka_unit_test(for_each_mp_bvec_clips_to_the_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

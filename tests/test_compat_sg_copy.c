// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sg_copy_to_buffer/sg_copy_from_buffer and the sg_pcopy_* forms: bytes
 * land at the right place across entries of different lengths and a chain
 * link, @skip and @nents are honoured, the count returned is what was
 * copied when the list or the buffer ends first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <rdmarw/scatterlist.h>

static unsigned char a[100], b[300], c[50];
static struct scatterlist sg1[3], sg2[2];

/* [a 100][b 300] -> chain -> [c 50]: 450 bytes in three data entries. */
static void build(void)
{
	sg_init_table(sg1, 3);
	sg_set_buf(&sg1[0], a, sizeof(a));
	sg_set_buf(&sg1[1], b, sizeof(b));
	sg_init_table(sg2, 2);
	sg_set_buf(&sg2[0], c, sizeof(c));
	sg_mark_end(&sg2[0]);
	sg_chain(sg1, 3, sg2);
}

static void pattern(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + seed);
}

static void copy_to_buffer_walks_entries(void **state)
{
	unsigned char out[500], want[450];

	(void)state;
	build();
	pattern(a, sizeof(a), 1);
	pattern(b, sizeof(b), 2);
	pattern(c, sizeof(c), 3);
	memcpy(want, a, 100);
	memcpy(want + 100, b, 300);
	memcpy(want + 400, c, 50);
	memset(out, 0, sizeof(out));
	assert_int_equal(sg_copy_to_buffer(sg1, 3, out, sizeof(out)), 450);
	assert_memory_equal(out, want, 450);
	/* a short buffer */
	memset(out, 0, sizeof(out));
	assert_int_equal(sg_copy_to_buffer(sg1, 3, out, 150), 150);
	assert_memory_equal(out, want, 150);
	assert_int_equal(out[150], 0);
	/* skip into the second entry, across into the chained one */
	assert_int_equal(sg_pcopy_to_buffer(sg1, 3, out, 320, 130), 320);
	assert_memory_equal(out, want + 130, 320);
	assert_int_equal(sg_pcopy_to_buffer(sg1, 3, out, 100, 440), 10);
	assert_memory_equal(out, want + 440, 10);
	assert_int_equal(sg_pcopy_to_buffer(sg1, 3, out, 100, 450), 0);
	/* nents bounds the walk: two entries are 400 bytes */
	assert_int_equal(sg_copy_to_buffer(sg1, 2, out, sizeof(out)), 400);
}

static void copy_from_buffer_fills_entries(void **state)
{
	unsigned char in[450], back[450];

	(void)state;
	build();
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(c, 0, sizeof(c));
	pattern(in, sizeof(in), 9);
	assert_int_equal(sg_copy_from_buffer(sg1, 3, in, sizeof(in)), 450);
	assert_memory_equal(a, in, 100);
	assert_memory_equal(b, in + 100, 300);
	assert_memory_equal(c, in + 400, 50);
	memset(b, 0, sizeof(b));
	assert_int_equal(sg_pcopy_from_buffer(sg1, 3, in, 10, 395), 10);
	assert_memory_equal(b + 295, in, 5);
	assert_memory_equal(c, in + 5, 5);
	assert_int_equal(b[294], 0);
	assert_int_equal(sg_pcopy_from_buffer(sg1, 3, in, 100, 420), 30);
	assert_int_equal(sg_copy_to_buffer(sg1, 3, back, sizeof(back)), 450);
	assert_memory_equal(back + 420, in, 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copy_to_buffer_walks_entries),
		cmocka_unit_test(copy_from_buffer_fills_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

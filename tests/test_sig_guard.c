// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The T10-DIF guards: CRC-16/T10-DIF from ISA-L, from the software
 * device's entry point and from the bit-by-bit reference of the tests agree
 * on the catalogue check value and on random data of every length, also
 * when computed in pieces; the IP checksum guard agrees with a byte-wise
 * reference for odd and even lengths and seeds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/sig_env.h"
#include "soft/soft_sig.h"

#include <isa-l/crc.h>
#include <stdlib.h>
#include <string.h>

static const u8 check_str[] = "123456789";

/* The CRC catalogue's check value of CRC-16/T10-DIF. */
static void test_crc_check_value(void **state)
{
	assert_int_equal(sig_ref_crc(0, check_str, 9), 0xd0db);
	assert_int_equal(crc16_t10dif(0, check_str, 9), 0xd0db);
	assert_int_equal(crc16_t10dif_base(0, (u8 *)check_str, 9), 0xd0db);
	assert_int_equal(rdmarw__soft_sig_crc(0, check_str, 9), 0xd0db);
	/* The empty message leaves the seed. */
	assert_int_equal(rdmarw__soft_sig_crc(0x1234, check_str, 0), 0x1234);
	assert_int_equal(sig_ref_crc(0x1234, check_str, 0), 0x1234);
}

/* Known blocks: zeros and 0xff of one 512-byte interval. */
static void test_crc_known_blocks(void **state)
{
	u8 z[512], f[512];

	memset(z, 0, sizeof(z));
	memset(f, 0xff, sizeof(f));
	assert_int_equal(sig_ref_crc(0, z, sizeof(z)), 0);
	assert_int_equal(rdmarw__soft_sig_crc(0, z, sizeof(z)), 0);
	assert_int_equal(rdmarw__soft_sig_crc(0, f, sizeof(f)),
			 sig_ref_crc(0, f, sizeof(f)));
	assert_int_not_equal(sig_ref_crc(0, f, sizeof(f)), 0);
}

static void test_crc_random(void **state)
{
	size_t lens[] = { 1,	2,    3,    7,	  8,	15,  16,
			  31,	64,   255,  511,  512,	520, 1000,
			  4095, 4096, 4104, 8192, 65536 };
	u8 *buf = malloc(65536);
	size_t i, cut;

	assert_non_null(buf);
	sig_fill(buf, 65536, 7);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		u16 ref = sig_ref_crc(0, buf, lens[i]);
		u16 seeded = sig_ref_crc(0xbeef, buf, lens[i]);

		assert_int_equal(rdmarw__soft_sig_crc(0, buf, lens[i]), ref);
		assert_int_equal(crc16_t10dif(0xbeef, buf, lens[i]), seeded);
		/* In two pieces: the CRC so far seeds the rest. */
		for (cut = 0; cut <= lens[i]; cut += lens[i] / 5 + 1) {
			u16 c = rdmarw__soft_sig_crc(0, buf, cut);

			c = rdmarw__soft_sig_crc(c, buf + cut, lens[i] - cut);
			assert_int_equal(c, ref);
		}
	}
	free(buf);
}

static void test_csum(void **state)
{
	u8 *buf = malloc(9000);
	u8 ones[4] = { 0xff, 0xff, 0xff, 0xff };
	size_t len, off;

	assert_non_null(buf);
	sig_fill(buf, 9000, 11);
	/* Hand-computed: 0x0102 + 0x0304 = 0x0406, complemented. */
	assert_int_equal(sig_ref_csum(0, (const u8 *)"\x01\x02\x03\x04", 4),
			 0xfbf9);
	assert_int_equal(
		rdmarw__soft_sig_csum(0, (const u8 *)"\x01\x02\x03\x04", 4),
		0xfbf9);
	/* An odd tail is the high byte of a word: 0x0102 + 0x0300. */
	assert_int_equal(
		rdmarw__soft_sig_csum(0, (const u8 *)"\x01\x02\x03", 3),
		(u16)~0x0402);
	/* End-around carry: 0xffff + 0xffff folds to 0xffff. */
	assert_int_equal(rdmarw__soft_sig_csum(0, ones, 4),
			 sig_ref_csum(0, ones, 4));
	for (len = 0; len < 600; len++)
		for (off = 0; off < 3; off++)
			assert_int_equal(
				rdmarw__soft_sig_csum(0, buf + off, len),
				sig_ref_csum(0, buf + off, len));
	assert_int_equal(rdmarw__soft_sig_csum(0x4321, buf, 4096),
			 sig_ref_csum(0x4321, buf, 4096));
	assert_int_equal(rdmarw__soft_sig_csum(0, buf, 8999),
			 sig_ref_csum(0, buf, 8999));
	free(buf);
}

/* The reference PI of a block, field by field. */
static void test_ref_pi_layout(void **state)
{
	struct ib_t10_dif_domain d = sig_dif(512, 0x11223344, 0xa55a);
	u8 data[512], pi[8];
	u16 g;

	sig_fill(data, sizeof(data), 3);
	g = sig_ref_crc(0, data, 512);
	sig_ref_pi(&d, data, 2, pi);
	assert_int_equal(pi[0], g >> 8);
	assert_int_equal(pi[1], g & 0xff);
	assert_int_equal(pi[2], 0xa5);
	assert_int_equal(pi[3], 0x5a);
	assert_int_equal(pi[4], 0x11);
	assert_int_equal(pi[5], 0x22);
	assert_int_equal(pi[6], 0x33);
	assert_int_equal(pi[7], 0x46); /* remapped: + block 2 */
	d.ref_remap = false;
	sig_ref_pi(&d, data, 2, pi);
	assert_int_equal(pi[7], 0x44);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_check_value),
		cmocka_unit_test(test_crc_known_blocks),
		cmocka_unit_test(test_crc_random),
		cmocka_unit_test(test_csum),
		cmocka_unit_test(test_ref_pi_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

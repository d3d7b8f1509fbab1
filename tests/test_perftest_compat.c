// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-perf --perftest's messages (tools/perf/perftest_compat.c): the
 * exact bytes perftest 6.06 (Debian 12's 4.5-0.17) sends and reads, and
 * the parsers' refusals of what a peer might send instead: messages cut
 * short or too long, numbers out of range, versions and MTUs that are not
 * decimal, NaN and negative figures.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

/* the program's file, compiled into the test (no library exports it) */
#include "../tools/perf/perftest_compat.c"

/* A pingpong_dest as ib_write_bw -R sends it (big-endian, LP64). */
static const u8 dest_wire[PT_DEST_LEN] = {
	0x00, 0x00, 0x00, 0x00, /* lid */
	0x00, 0x00, 0x00, 0x80, /* out_reads 128 */
	0x00, 0x00, 0x01, 0x23, /* qpn */
	0x00, 0xab, 0xcd, 0xef, /* psn */
	0x11, 0x22, 0x33, 0x44, /* rkey */
	0x00, 0x00, 0x00, 0x00, /* padding */
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00, /* vaddr */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* gid */
	0x00, 0x00, 0xff, 0xff, 0x0a, 0x0b, 0x0d, 0x01,
	0x00, 0x00, 0x00, 0x00, /* srqn */
	0xff, 0xff, 0xff, 0xff, /* gid_index -1 */
};

static void dest_bytes(void **state)
{
	struct pt_dest d = { 0 }, back;
	u8 out[PT_DEST_LEN];

	(void)state;
	d.out_reads = 128;
	d.qpn = 0x123;
	d.psn = 0xabcdef;
	d.rkey = 0x11223344;
	d.vaddr = 0x7f0012345000ULL;
	memcpy(d.gid, dest_wire + 32, 16);
	d.gid_index = -1;
	pt_dest_encode(&d, out);
	assert_memory_equal(out, dest_wire, PT_DEST_LEN);
	assert_int_equal(pt_dest_parse(dest_wire, PT_DEST_LEN, &back), 0);
	assert_int_equal(back.rkey, 0x11223344);
	assert_true(back.vaddr == 0x7f0012345000ULL);
	assert_int_equal(back.qpn, 0x123);
	assert_int_equal(back.psn, 0xabcdef);
	assert_int_equal(back.out_reads, 128);
	assert_int_equal(back.gid_index, -1);
	/* perftest's padding is its stack's: ignored */
	memcpy(out, dest_wire, PT_DEST_LEN);
	memset(out + 20, 0xa5, 4);
	assert_int_equal(pt_dest_parse(out, PT_DEST_LEN, &back), 0);
	assert_int_equal(back.rkey, 0x11223344);
}

static void dest_refused(void **state)
{
	struct pt_dest d = { .rkey = 7 };
	u8 big[PT_DEST_LEN + 8];

	(void)state;
	memset(big, 0, sizeof(big));
	/* cut short, too long, nothing: the destination is left alone */
	assert_int_equal(pt_dest_parse(dest_wire, PT_DEST_LEN - 1, &d),
			 -EMSGSIZE);
	assert_int_equal(pt_dest_parse(big, sizeof(big), &d), -EMSGSIZE);
	assert_int_equal(pt_dest_parse(dest_wire, 0, &d), -EMSGSIZE);
	assert_int_equal(d.rkey, 7);
	/* a QPN, a PSN over 24 bits, a LID over 16, out_reads over 16 */
	memcpy(big, dest_wire, PT_DEST_LEN);
	big[8] = 0x01;
	assert_int_equal(pt_dest_parse(big, PT_DEST_LEN, &d), -EPROTO);
	memcpy(big, dest_wire, PT_DEST_LEN);
	big[12] = 0x80;
	assert_int_equal(pt_dest_parse(big, PT_DEST_LEN, &d), -EPROTO);
	memcpy(big, dest_wire, PT_DEST_LEN);
	big[1] = 0x01;
	assert_int_equal(pt_dest_parse(big, PT_DEST_LEN, &d), -EPROTO);
	memcpy(big, dest_wire, PT_DEST_LEN);
	memset(big + 4, 0xff, 4); /* out_reads -1 */
	assert_int_equal(pt_dest_parse(big, PT_DEST_LEN, &d), -EPROTO);
	assert_int_equal(d.rkey, 7);
}

static int version(const char *s, size_t len, unsigned int *v)
{
	char buf[PT_VERSION_LEN + 4];

	memset(buf, 0, sizeof(buf));
	memcpy(buf, s, strnlen(s, sizeof(buf)));
	return pt_version_parse(buf, len, v);
}

static void versions(void **state)
{
	char out[PT_VERSION_LEN];
	unsigned int v = 0;

	(void)state;
	pt_version_encode(out);
	assert_memory_equal(out, "6.06\0\0\0\0\0\0\0\0\0\0\0\0",
			    PT_VERSION_LEN);
	assert_int_equal(pt_version_parse(out, PT_VERSION_LEN, &v), 0);
	assert_int_equal(v, 606);
	assert_int_equal(version("5.70", PT_VERSION_LEN, &v), 0);
	assert_int_equal(v, 570);
	assert_int_equal(version("5.7", PT_VERSION_LEN, &v), 0);
	assert_int_equal(v, 570);
	assert_int_equal(version("12.345", PT_VERSION_LEN, &v), 0);
	assert_int_equal(v, 1234);
	v = 1;
	/* truncated, overlong */
	assert_int_equal(version("6.06", 4, &v), -EMSGSIZE);
	assert_int_equal(version("6.06", PT_VERSION_LEN + 1, &v), -EMSGSIZE);
	/* not decimal, no '.', no digits, trailing bytes, no NUL */
	assert_int_equal(version("6.0x", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("0x6.06", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("606", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version(".06", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("6.", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("-6.06", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("6.06 ", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("1234.5", PT_VERSION_LEN, &v), -EPROTO);
	assert_int_equal(version("6.0611111111111111", PT_VERSION_LEN, &v), 0);
	assert_int_equal(version("6.06111111111111111", PT_VERSION_LEN, &v),
			 0); /* 16 bytes of digits, no NUL: within len */
	v = 1;
	{
		char raw[PT_VERSION_LEN];

		memcpy(raw, "6.06", 4);
		memset(raw + 4, 'A', PT_VERSION_LEN - 4);
		assert_int_equal(pt_version_parse(raw, PT_VERSION_LEN, &v),
				 -EPROTO);
	}
	assert_int_equal(v, 1);
}

static void ints_and_mtu(void **state)
{
	u8 b[PT_INT_LEN];
	char m[PT_MTU_LEN];
	u32 v = 9;
	unsigned int mtu = 9;

	(void)state;
	pt_int_encode(4096, b);
	assert_memory_equal(b, "\x00\x00\x10\x00", PT_INT_LEN);
	assert_int_equal(pt_int_parse(b, PT_INT_LEN, 1, PT_MAX_CYCLE, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(pt_int_parse(b, 3, 1, PT_MAX_CYCLE, &v), -EMSGSIZE);
	assert_int_equal(pt_int_parse(b, 5, 1, PT_MAX_CYCLE, &v), -EMSGSIZE);
	pt_int_encode(0, b);
	assert_int_equal(pt_int_parse(b, PT_INT_LEN, 1, PT_MAX_CYCLE, &v),
			 -ERANGE);
	pt_int_encode((u32)-4096, b); /* a negative int */
	assert_int_equal(pt_int_parse(b, PT_INT_LEN, 1, PT_MAX_CYCLE, &v),
			 -ERANGE);
	pt_int_encode(PT_MAX_CYCLE + 1, b);
	assert_int_equal(pt_int_parse(b, PT_INT_LEN, 1, PT_MAX_CYCLE, &v),
			 -ERANGE);
	assert_int_equal(v, 4096);

	pt_mtu_encode(5, m);
	assert_memory_equal(m, "5", PT_MTU_LEN);
	assert_int_equal(pt_mtu_parse(m, PT_MTU_LEN, &mtu), 0);
	assert_int_equal(mtu, 5);
	assert_int_equal(pt_mtu_parse("3", 1, &mtu), -EMSGSIZE);
	assert_int_equal(pt_mtu_parse("3\0\0", 3, &mtu), -EMSGSIZE);
	assert_int_equal(pt_mtu_parse("a", PT_MTU_LEN, &mtu), -EPROTO);
	assert_int_equal(pt_mtu_parse("-1", PT_MTU_LEN, &mtu), -EPROTO);
	assert_int_equal(pt_mtu_parse("10", PT_MTU_LEN, &mtu), -EPROTO);
	assert_int_equal(pt_mtu_parse("\0\0", PT_MTU_LEN, &mtu), -EPROTO);
	assert_int_equal(mtu, 5);
}

static void reports(void **state)
{
	u8 b[PT_U64_LEN];
	u64 v = 3;
	double d = 3;

	(void)state;
	pt_u64_encode(65536, b);
	assert_memory_equal(b, "\0\0\0\0\0\x01\0\0", PT_U64_LEN);
	assert_int_equal(pt_u64_parse(b, PT_U64_LEN, 1ULL << 40, &v), 0);
	assert_true(v == 65536);
	assert_int_equal(pt_u64_parse(b, PT_U64_LEN, 4096, &v), -ERANGE);
	assert_int_equal(pt_u64_parse(b, 4, 1ULL << 40, &v), -EMSGSIZE);
	assert_int_equal(pt_u64_parse(b, 9, 1ULL << 40, &v), -EMSGSIZE);
	assert_true(v == 65536);
	/* 1.5 as a big-endian IEEE 754 double: 3f f8 00 .. 00 */
	pt_double_encode(1.5, b);
	assert_memory_equal(b, "\x3f\xf8\0\0\0\0\0\0", PT_U64_LEN);
	assert_int_equal(pt_double_parse(b, PT_U64_LEN, &d), 0);
	assert_true(d == 1.5);
	pt_double_encode(NAN, b);
	assert_int_equal(pt_double_parse(b, PT_U64_LEN, &d), -ERANGE);
	pt_double_encode(INFINITY, b);
	assert_int_equal(pt_double_parse(b, PT_U64_LEN, &d), -ERANGE);
	pt_double_encode(-2.0, b);
	assert_int_equal(pt_double_parse(b, PT_U64_LEN, &d), -ERANGE);
	assert_int_equal(pt_double_parse(b, 7, &d), -EMSGSIZE);
	assert_true(d == 1.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dest_bytes), cmocka_unit_test(dest_refused),
		cmocka_unit_test(versions),   cmocka_unit_test(ints_and_mtu),
		cmocka_unit_test(reports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP/RDMAP headers and TERMINATE (src/iwarp/iwarp_frame.c,
 * iwarp_term.c): the bytes of a WRITE, a READ request and a TERMINATE as
 * siw lays them out (iwarp.h), a round trip of every opcode, each header
 * refusal with the TERMINATE layer/type/code it asks for, and TERMINATE's
 * header copy (M/D/R) built and parsed, malformed ones refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"

static void write_bytes(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x24, /* ULPDU: 14 + 22 */
		0xc1, 0x40, /* tagged, last, DDP 1, RDMAP 1, WRITE */
		0x12, 0x34, 0x56, 0x78, /* STag */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* TO */
	};
	struct iwarp_hdr h = { .opcode = IWARP_OP_WRITE,
			       .last = true,
			       .stag = 0x12345678,
			       .to = 0x0102030405060708,
			       .pay_len = 22 };
	struct iwarp_term_info t;
	struct iwarp_hdr back;
	uint8_t buf[64];

	(void)state;
	assert_int_equal(rdmarw__iwarp_hdr_build(&h, buf, sizeof(buf)), 16);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(rdmarw__iwarp_hdr_parse(buf, 16, &back, &t), 16);
	assert_true(back.tagged && back.last);
	assert_int_equal(back.stag, 0x12345678);
	assert_int_equal(back.to, 0x0102030405060708);
	assert_int_equal(back.pay_len, 22);
	assert_int_equal(rdmarw__iwarp_hdr_build(&h, buf, 15), -ENOSPC);
}

static void read_request_bytes(void **state)
{
	static const uint8_t want[] = {
		0x00, 0x2e, 0x41, 0x41, /* untagged, last, READ_REQ */
		0,    0,    0,	  0, /* reserved */
		0,    0,    0,	  1, /* QN 1 */
		0,    0,    0,	  5, /* MSN */
		0,    0,    0,	  0, /* MO */
		0xaa, 0xbb, 0xcc, 0xdd, /* sink STag */
		0,    0,    0,	  0,	0, 0, 0x10, 0x00, /* sink TO */
		0,    0,    0x10, 0x00, /* size */
		0x11, 0x22, 0x33, 0x44, /* source STag */
		0,    0,    0,	  1,	0, 0, 0,    0, /* source TO */
	};
	struct iwarp_hdr h = { .opcode = IWARP_OP_READ_REQ,
			       .last = true,
			       .msn = 5,
			       .sink_stag = 0xaabbccdd,
			       .sink_to = 0x1000,
			       .read_size = 0x1000,
			       .src_stag = 0x11223344,
			       .src_to = 0x100000000ull };
	struct iwarp_term_info t;
	struct iwarp_hdr back;
	uint8_t buf[64];

	(void)state;
	assert_int_equal(rdmarw__iwarp_hdr_build(&h, buf, sizeof(buf)), 48);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(rdmarw__iwarp_hdr_parse(buf, 48, &back, &t), 48);
	assert_int_equal(back.qn, IWARP_QN_READ_REQ);
	assert_int_equal(back.msn, 5);
	assert_int_equal(back.sink_stag, 0xaabbccdd);
	assert_int_equal(back.sink_to, 0x1000);
	assert_int_equal(back.read_size, 0x1000);
	assert_int_equal(back.src_stag, 0x11223344);
	assert_int_equal(back.src_to, 0x100000000ull);
	assert_int_equal(back.pay_len, 0);
	/* a READ request with payload or in pieces is not built */
	h.pay_len = 1;
	assert_int_equal(rdmarw__iwarp_hdr_build(&h, buf, 64), -EINVAL);
	h.pay_len = 0;
	h.last = false;
	assert_int_equal(rdmarw__iwarp_hdr_build(&h, buf, 64), -EINVAL);
}

static void every_opcode(void **state)
{
	static const int lens[] = { 16, 48, 16, 20, 20, 20, 20, 24 };
	static const uint32_t qns[] = { 0, 1, 0, 0, 0, 0, 0, 2 };
	struct iwarp_term_info t;
	unsigned int op;

	(void)state;
	for (op = 0; op < IWARP_OP_COUNT; op++) {
		struct iwarp_hdr h = { .opcode = (uint8_t)op,
				       .last = true,
				       .msn = 9,
				       .stag = 0xfeed0001,
				       .to = 77 };
		struct iwarp_hdr back;
		uint8_t buf[64];
		int i;

		if (op != IWARP_OP_READ_REQ)
			h.pay_len = 100;
		assert_int_equal(rdmarw__iwarp_hdr_len(op), lens[op]);
		assert_int_equal(rdmarw__iwarp_hdr_build(&h, buf, 64),
				 lens[op]);
		/* every shorter prefix asks for more */
		for (i = 0; i < lens[op]; i++)
			assert_int_equal(
				rdmarw__iwarp_hdr_parse(buf, i, &back, &t),
				-EAGAIN);
		assert_int_equal(rdmarw__iwarp_hdr_parse(buf, 64, &back, &t),
				 lens[op]);
		assert_int_equal(back.opcode, op);
		assert_int_equal(back.hdr_len, lens[op]);
		assert_int_equal(back.pay_len, h.pay_len);
		assert_true(back.last);
		if (back.tagged) {
			assert_int_equal(back.stag, 0xfeed0001);
			assert_int_equal(back.to, 77);
			continue;
		}
		assert_int_equal(back.qn, qns[op]);
		assert_int_equal(back.msn, 9);
		/* only the invalidating SENDs carry the STag */
		assert_int_equal(back.stag, (op == IWARP_OP_SEND_INV ||
					     op == IWARP_OP_SEND_SE_INV) ?
						    0xfeed0001 :
						    0);
	}
	assert_int_equal(rdmarw__iwarp_hdr_len(8), -EINVAL);
}

static void expect_refusal(const uint8_t *buf, size_t len, int err,
			   uint8_t layer, uint8_t etype, uint8_t ecode)
{
	struct iwarp_term_info t;
	struct iwarp_hdr h;

	assert_int_equal(rdmarw__iwarp_hdr_parse(buf, len, &h, &t), err);
	assert_false(t.close);
	assert_int_equal(t.layer, layer);
	assert_int_equal(t.etype, etype);
	assert_int_equal(t.ecode, ecode);
}

static void refusals(void **state)
{
	struct iwarp_hdr h = {
		.opcode = IWARP_OP_SEND, .last = true, .msn = 1, .pay_len = 4
	};
	struct iwarp_hdr w = { .opcode = IWARP_OP_WRITE,
			       .last = true,
			       .pay_len = 16 };
	uint8_t s[64], b[64];

	(void)state;
	rdmarw__iwarp_hdr_build(&h, s, 64);
	/* DDP version 0 and 2, untagged and tagged */
	memcpy(b, s, 64);
	b[2] = (uint8_t)(b[2] & ~0x03);
	expect_refusal(b, 20, -EBADMSG, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
		       IWARP_DDP_EC_UT_VERSION);
	rdmarw__iwarp_hdr_build(&w, b, 64);
	b[2] = (uint8_t)((b[2] & ~0x03) | 2);
	expect_refusal(b, 16, -EBADMSG, IWARP_LAYER_DDP, IWARP_DDP_ET_TAGGED,
		       IWARP_DDP_EC_T_VERSION);
	/* RDMAP version */
	memcpy(b, s, 64);
	b[3] = (uint8_t)((b[3] & ~0xc0) | 0x80);
	expect_refusal(b, 20, -EBADMSG, IWARP_LAYER_RDMAP,
		       IWARP_RDMAP_ET_OPERATION, IWARP_RDMAP_EC_VERSION);
	/* opcodes 8..15, and a SEND with the tagged flag */
	memcpy(b, s, 64);
	b[3] = (uint8_t)((b[3] & ~0x0f) | 0x8);
	expect_refusal(b, 20, -EBADMSG, IWARP_LAYER_RDMAP,
		       IWARP_RDMAP_ET_OPERATION, IWARP_RDMAP_EC_OPCODE);
	b[3] |= 0x0f;
	expect_refusal(b, 4, -EBADMSG, IWARP_LAYER_RDMAP,
		       IWARP_RDMAP_ET_OPERATION, IWARP_RDMAP_EC_OPCODE);
	memcpy(b, s, 64);
	b[2] |= 0x80;
	expect_refusal(b, 20, -EBADMSG, IWARP_LAYER_RDMAP,
		       IWARP_RDMAP_ET_OPERATION, IWARP_RDMAP_EC_OPCODE);
	/* an MPA length shorter than the header (siw: FPDU start) */
	memcpy(b, s, 64);
	b[0] = 0;
	b[1] = 17;
	expect_refusal(b, 4, -EPROTO, IWARP_LAYER_LLP, IWARP_LLP_ET_MPA,
		       IWARP_LLP_EC_FPDU_START);
	b[1] = 18; /* exactly the header: an empty SEND */
	{
		struct iwarp_term_info t;
		struct iwarp_hdr back;

		assert_int_equal(rdmarw__iwarp_hdr_parse(b, 20, &back, &t), 20);
		assert_int_equal(back.pay_len, 0);
	}
	/* queue numbers: SEND on 1, READ request on 0 */
	memcpy(b, s, 64);
	b[11] = 1;
	expect_refusal(b, 20, -EBADMSG, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
		       IWARP_DDP_EC_UT_INVALID_QN);
	b[11] = 3;
	expect_refusal(b, 20, -EBADMSG, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
		       IWARP_DDP_EC_UT_INVALID_QN);
	/* TO wrap */
	w.to = UINT64_MAX - 14;
	rdmarw__iwarp_hdr_build(&w, b, 64);
	expect_refusal(b, 16, -EBADMSG, IWARP_LAYER_DDP, IWARP_DDP_ET_TAGGED,
		       IWARP_DDP_EC_T_TO_WRAP);
	w.to = UINT64_MAX - 15; /* the last byte at UINT64_MAX */
	rdmarw__iwarp_hdr_build(&w, b, 64);
	{
		struct iwarp_term_info t;
		struct iwarp_hdr back;

		assert_int_equal(rdmarw__iwarp_hdr_parse(b, 16, &back, &t), 16);
	}
}

static void read_request_refusals(void **state)
{
	struct iwarp_hdr h = { .opcode = IWARP_OP_READ_REQ,
			       .last = true,
			       .msn = 1,
			       .read_size = 4096,
			       .sink_to = 0,
			       .src_to = UINT64_MAX - 4095 };
	uint8_t b[64];

	(void)state;
	assert_int_equal(rdmarw__iwarp_hdr_build(&h, b, 64), 48);
	{
		struct iwarp_term_info t;
		struct iwarp_hdr back;

		assert_int_equal(rdmarw__iwarp_hdr_parse(b, 48, &back, &t), 48);
	}
	h.src_to++;
	rdmarw__iwarp_hdr_build(&h, b, 64);
	expect_refusal(b, 48, -EBADMSG, IWARP_LAYER_RDMAP,
		       IWARP_RDMAP_ET_PROTECTION, IWARP_RDMAP_EC_TO_WRAP);
	h.src_to = 0;
	rdmarw__iwarp_hdr_build(&h, b, 64);
	/* MO not 0 */
	b[19] = 1;
	expect_refusal(b, 48, -EBADMSG, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
		       IWARP_DDP_EC_UT_INVALID_MO);
	b[19] = 0;
	/* not last */
	b[2] = (uint8_t)(b[2] & ~0x40);
	expect_refusal(b, 48, -EBADMSG, IWARP_LAYER_RDMAP,
		       IWARP_RDMAP_ET_OPERATION, IWARP_RDMAP_EC_OPCODE);
	b[2] |= 0x40;
	/* with payload */
	b[1] = 47;
	expect_refusal(b, 48, -EBADMSG, IWARP_LAYER_RDMAP,
		       IWARP_RDMAP_ET_OPERATION, IWARP_RDMAP_EC_OPCODE);
}

static void terminate_ddp_copy(void **state)
{
	struct iwarp_term_info ti = { .layer = IWARP_LAYER_DDP,
				      .etype = IWARP_DDP_ET_UNTAGGED,
				      .ecode = IWARP_DDP_EC_UT_MSN_RANGE };
	struct iwarp_hdr s = { .opcode = IWARP_OP_SEND_SE,
			       .last = true,
			       .msn = 42,
			       .pay_len = 8 };
	struct iwarp_hdr h, bad;
	struct iwarp_term_info t;
	uint8_t send[20], buf[80];
	static const uint8_t ctrl[] = { 0x00, 0x2a, 0x41, 0x47, 0,    0,
					0,    0,    0,	  0,	0,    2,
					0,    0,    0,	  1,	0,    0,
					0,    0,    0x12, 0x03, 0xc0, 0x00 };

	(void)state;
	rdmarw__iwarp_hdr_build(&s, send, 20);
	assert_int_equal(rdmarw__iwarp_term_build(&ti, send, 20, 1, buf, 80),
			 44);
	/* 24-byte header: QN 2, MSN 1, DDP/2/3, M and D, 20 copied */
	assert_memory_equal(buf, ctrl, sizeof(ctrl));
	assert_memory_equal(buf + 24, send, 20);
	assert_int_equal(rdmarw__iwarp_hdr_parse(buf, 44, &h, &t), 24);
	assert_int_equal(h.opcode, IWARP_OP_TERMINATE);
	assert_int_equal(h.term.layer, IWARP_LAYER_DDP);
	assert_int_equal(h.term.etype, IWARP_DDP_ET_UNTAGGED);
	assert_int_equal(h.term.ecode, IWARP_DDP_EC_UT_MSN_RANGE);
	assert_true(h.term_m && h.term_d && !h.term_r);
	assert_int_equal(rdmarw__iwarp_term_parse(&h, buf + 24, 20, &bad), 0);
	assert_int_equal(bad.opcode, IWARP_OP_SEND_SE);
	assert_int_equal(bad.msn, 42);
	/* the copy cut by one byte, or one byte too many */
	h.pay_len = 19;
	assert_int_equal(rdmarw__iwarp_term_parse(&h, buf + 24, 19, &bad),
			 -EBADMSG);
	h.pay_len = 21;
	assert_int_equal(rdmarw__iwarp_term_parse(&h, buf + 24, 21, &bad),
			 -EBADMSG);
	/* R without a READ request copied */
	h.pay_len = 20;
	h.term_r = true;
	assert_int_equal(rdmarw__iwarp_term_parse(&h, buf + 24, 20, &bad),
			 -EBADMSG);
	/* not enough room */
	assert_int_equal(rdmarw__iwarp_term_build(&ti, send, 20, 1, buf, 43),
			 -ENOSPC);
}

static void terminate_rdmap_llp(void **state)
{
	struct iwarp_term_info ti = { .layer = IWARP_LAYER_RDMAP,
				      .etype = IWARP_RDMAP_ET_PROTECTION,
				      .ecode = IWARP_RDMAP_EC_INVALID_STAG };
	struct iwarp_hdr r = { .opcode = IWARP_OP_READ_REQ,
			       .last = true,
			       .msn = 3,
			       .src_stag = 0xdead,
			       .read_size = 8 };
	struct iwarp_hdr h, bad;
	struct iwarp_term_info t;
	uint8_t rreq[48], buf[80];

	(void)state;
	rdmarw__iwarp_hdr_build(&r, rreq, 48);
	assert_int_equal(rdmarw__iwarp_term_build(&ti, rreq, 48, 2, buf, 80),
			 72);
	assert_int_equal(rdmarw__iwarp_hdr_parse(buf, 72, &h, &t), 24);
	assert_true(h.term_m && h.term_d && h.term_r);
	assert_int_equal(h.msn, 2);
	assert_int_equal(rdmarw__iwarp_term_parse(&h, buf + 24, 48, &bad), 0);
	assert_int_equal(bad.src_stag, 0xdead);
	assert_int_equal(bad.read_size, 8);
	/* a catastrophic RDMAP error and an LLP error copy nothing */
	ti.etype = IWARP_RDMAP_ET_CATASTROPHIC;
	assert_int_equal(rdmarw__iwarp_term_build(&ti, rreq, 48, 1, buf, 80),
			 24);
	ti.layer = IWARP_LAYER_LLP;
	ti.etype = IWARP_LLP_ET_MPA;
	ti.ecode = IWARP_LLP_EC_CRC;
	assert_int_equal(rdmarw__iwarp_term_build(&ti, rreq, 48, 1, buf, 80),
			 24);
	assert_int_equal(rdmarw__iwarp_hdr_parse(buf, 24, &h, &t), 24);
	assert_false(h.term_m || h.term_d || h.term_r);
	assert_int_equal(h.term.layer, IWARP_LAYER_LLP);
	assert_int_equal(h.term.ecode, IWARP_LLP_EC_CRC);
	assert_int_equal(rdmarw__iwarp_term_parse(&h, buf + 24, 0, &bad), 0);
	/* payload without D */
	h.pay_len = 4;
	assert_int_equal(rdmarw__iwarp_term_parse(&h, buf, 4, &bad), -EBADMSG);
	/* a header too short to copy: nothing copied */
	ti.layer = IWARP_LAYER_DDP;
	assert_int_equal(rdmarw__iwarp_term_build(&ti, rreq, 10, 1, buf, 80),
			 24);
	/* bad arguments */
	ti.close = true;
	assert_int_equal(rdmarw__iwarp_term_build(&ti, NULL, 0, 1, buf, 80),
			 -EINVAL);
	ti.close = false;
	ti.layer = 3;
	assert_int_equal(rdmarw__iwarp_term_build(&ti, NULL, 0, 1, buf, 80),
			 -EINVAL);
	assert_int_equal(rdmarw__iwarp_term_parse(&r, buf, 0, &bad), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_bytes),
		cmocka_unit_test(read_request_bytes),
		cmocka_unit_test(every_opcode),
		cmocka_unit_test(refusals),
		cmocka_unit_test(read_request_refusals),
		cmocka_unit_test(terminate_ddp_copy),
		cmocka_unit_test(terminate_rdmap_llp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

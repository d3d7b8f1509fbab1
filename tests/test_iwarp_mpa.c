// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA connection setup frames (src/iwarp/mpa.c): siw's own request and
 * reply shapes byte for byte (siw_cm.c: siw_connect() sends revision 2,
 * ENHANCED, the IRD/ORD word then the ULP's private data), round trips,
 * siw's answer to a request (IRD/ORD crossed and capped, the RTR type it
 * picks), and every refusal with its errno and reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"

/* siw's default request: rev 2, ENHANCED, IRD 16 ORD 8, no P2P, "abc" */
static const uint8_t siw_req[] = {
	'M',  'P',  'A',  ' ',	'I',  'D',  ' ', 'R',  'e',
	'q',  ' ',  'F',  'r',	'a',  'm',  'e', 0x10, 0x02,
	0x00, 0x07, 0x00, 0x10, 0x00, 0x08, 'a', 'b',  'c',
};

/* a P2P request offering both RTR types, and siw's reply picking WRITE */
static const uint8_t siw_p2p_req[] = {
	'M', 'P', 'A', ' ', 'I',  'D',	' ',  'R',  'e',  'q',	' ',  'F',
	'r', 'a', 'm', 'e', 0x10, 0x02, 0x00, 0x04, 0x80, 0x04, 0xc0, 0x02,
};

static const uint8_t siw_p2p_rep[] = {
	'M', 'P', 'A', ' ', 'I',  'D',	' ',  'R',  'e',  'p',	' ',  'F',
	'r', 'a', 'm', 'e', 0x10, 0x02, 0x00, 0x04, 0x80, 0x02, 0x80, 0x04,
};

/* a revision 1 reply with CRC, no private data */
static const uint8_t v1_rep[] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ',  'R',  'e',	'p',
	' ', 'F', 'r', 'a', 'm', 'e', 0x40, 0x01, 0x00, 0x00,
};

static void siw_request_bytes(void **state)
{
	struct iwarp_mpa m = { .rev = 2,
			       .enhanced = true,
			       .ird = 16,
			       .ord = 8,
			       .pdata = "abc",
			       .pd_len = 3 };
	uint8_t buf[64];

	(void)state;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, sizeof(buf)),
			 sizeof(siw_req));
	assert_memory_equal(buf, siw_req, sizeof(siw_req));
}

static void siw_request_parse(void **state)
{
	enum iwarp_mpa_why why = IWARP_MPA_BAD_KEY;
	struct iwarp_mpa m;

	(void)state;
	assert_int_equal(rdmarw__iwarp_mpa_parse(siw_req, sizeof(siw_req),
						 false, false, &m, &why),
			 sizeof(siw_req));
	assert_int_equal(why, IWARP_MPA_OK);
	assert_int_equal(m.rev, 2);
	assert_true(m.enhanced);
	assert_false(m.crc || m.reject || m.markers || m.p2p);
	assert_int_equal(m.ird, 16);
	assert_int_equal(m.ord, 8);
	assert_int_equal(m.pd_len, 3);
	assert_ptr_equal(m.pdata, siw_req + 24);
}

static void siw_p2p_answer(void **state)
{
	struct iwarp_mpa req, rep;
	uint8_t buf[64];

	(void)state;
	assert_int_equal(rdmarw__iwarp_mpa_parse(siw_p2p_req,
						 sizeof(siw_p2p_req), false,
						 false, &req, NULL),
			 sizeof(siw_p2p_req));
	assert_true(req.p2p);
	assert_int_equal(req.rtr,
			 IWARP_MPA_V2_RTR_WRITE | IWARP_MPA_V2_RTR_READ);
	/* the peer's IRD 4 becomes our ORD, its ORD 2 our IRD */
	assert_int_equal(rdmarw__iwarp_mpa_answer(&req, 128, 128, &rep), 0);
	assert_int_equal(rep.ord, 4);
	assert_int_equal(rep.ird, 2);
	assert_int_equal(rep.rtr, IWARP_MPA_V2_RTR_WRITE);
	assert_int_equal(rdmarw__iwarp_mpa_build(&rep, buf, sizeof(buf)),
			 sizeof(siw_p2p_rep));
	assert_memory_equal(buf, siw_p2p_rep, sizeof(siw_p2p_rep));
	/* capped by the local maxima */
	assert_int_equal(rdmarw__iwarp_mpa_answer(&req, 1, 3, &rep), 0);
	assert_int_equal(rep.ord, 3);
	assert_int_equal(rep.ird, 1);
	/* READ only offered: READ; none offered: siw proposes WRITE */
	req.rtr = IWARP_MPA_V2_RTR_READ;
	assert_int_equal(rdmarw__iwarp_mpa_answer(&req, 8, 8, &rep), 0);
	assert_int_equal(rep.rtr, IWARP_MPA_V2_RTR_READ);
	req.rtr = 0;
	req.p2p = false;
	assert_int_equal(rdmarw__iwarp_mpa_answer(&req, 8, 8, &rep), 0);
	assert_false(rep.p2p);
	assert_int_equal(rep.rtr, 0);
}

static void rev1_round_trip(void **state)
{
	struct iwarp_mpa m = { .reply = true, .rev = 1, .crc = true };
	struct iwarp_mpa back;
	uint8_t buf[32];

	(void)state;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, sizeof(buf)),
			 sizeof(v1_rep));
	assert_memory_equal(buf, v1_rep, sizeof(v1_rep));
	assert_int_equal(rdmarw__iwarp_mpa_parse(buf, sizeof(v1_rep), true,
						 true, &back, NULL),
			 sizeof(v1_rep));
	assert_true(back.reply && back.crc && !back.enhanced);
	assert_int_equal(back.rev, 1);
	assert_int_equal(back.pd_len, 0);
	assert_null(back.pdata);
}

static void max_private_data(void **state)
{
	static uint8_t pd[IWARP_MPA_PD_MAX], buf[600];
	struct iwarp_mpa m = { .rev = 2,
			       .enhanced = true,
			       .pdata = pd,
			       .pd_len = IWARP_MPA_PD_MAX - 4 };
	struct iwarp_mpa back;
	enum iwarp_mpa_why why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pd); i++)
		pd[i] = (uint8_t)i;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, sizeof(buf)),
			 20 + IWARP_MPA_PD_MAX);
	assert_int_equal(rdmarw__iwarp_mpa_parse(buf, 20 + IWARP_MPA_PD_MAX,
						 false, false, &back, &why),
			 20 + IWARP_MPA_PD_MAX);
	assert_int_equal(back.pd_len, IWARP_MPA_PD_MAX - 4);
	assert_memory_equal(back.pdata, pd, IWARP_MPA_PD_MAX - 4);
	/* one more byte is over the limit, both ways */
	m.pd_len++;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, sizeof(buf)),
			 -EMSGSIZE);
	iwarp_st16(buf + 18, IWARP_MPA_PD_MAX + 1);
	assert_int_equal(rdmarw__iwarp_mpa_parse(buf, sizeof(buf), false, false,
						 &back, &why),
			 -EMSGSIZE);
	assert_int_equal(why, IWARP_MPA_PD_TOO_LONG);
	/* 0xffff: refused from the header alone, before waiting for it */
	iwarp_st16(buf + 18, 0xffff);
	assert_int_equal(
		rdmarw__iwarp_mpa_parse(buf, 20, false, false, &back, &why),
		-EMSGSIZE);
}

static void build_refusals(void **state)
{
	struct iwarp_mpa m = { .rev = 2, .enhanced = true };
	uint8_t buf[64];

	(void)state;
	m.rev = 3;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 64), -EINVAL);
	m.rev = 1;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 64), -EINVAL);
	m.rev = 2;
	m.markers = true;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 64), -EOPNOTSUPP);
	m.markers = false;
	m.ird = 0x4000;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 64), -EINVAL);
	m.ird = 1;
	m.rtr = IWARP_MPA_V2_RTR_WRITE; /* without p2p */
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 64), -EINVAL);
	m.p2p = true;
	m.reply = true;
	m.rtr |= IWARP_MPA_V2_RTR_READ; /* a reply picks one */
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 64), -EINVAL);
	m.rtr = IWARP_MPA_V2_RTR_READ;
	m.pd_len = 4; /* no data */
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 64), -EINVAL);
	m.pd_len = 0;
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 23), -ENOSPC);
	assert_int_equal(rdmarw__iwarp_mpa_build(&m, buf, 24), 24);
	assert_int_equal(rdmarw__iwarp_mpa_build(NULL, buf, 64), -EINVAL);
}

static int parse_req(const uint8_t *b, size_t n, bool eof,
		     enum iwarp_mpa_why *why)
{
	struct iwarp_mpa m;

	return rdmarw__iwarp_mpa_parse(b, n, eof, false, &m, why);
}

static void parse_refusals(void **state)
{
	enum iwarp_mpa_why why;
	uint8_t b[sizeof(siw_req)];
	size_t i;

	(void)state;
	/* cut anywhere: more needed, or at EOF cut short */
	for (i = 0; i < sizeof(siw_req); i++) {
		assert_int_equal(parse_req(siw_req, i, false, &why), -EAGAIN);
		assert_int_equal(parse_req(siw_req, i, true, &why),
				 -ECONNABORTED);
		assert_int_equal(why, IWARP_MPA_CUT_SHORT);
	}
	/* a reply key where a request is expected, and the other way */
	assert_int_equal(
		parse_req(siw_p2p_rep, sizeof(siw_p2p_rep), false, &why),
		-EPROTO);
	assert_int_equal(why, IWARP_MPA_BAD_KEY);
	memcpy(b, siw_req, sizeof(b));
	b[0] = 'm';
	assert_int_equal(parse_req(b, sizeof(b), false, &why), -EPROTO);
	assert_int_equal(why, IWARP_MPA_BAD_KEY);
	/* revisions 0 and 3 */
	memcpy(b, siw_req, sizeof(b));
	b[17] = 0;
	assert_int_equal(parse_req(b, sizeof(b), false, &why), -EPROTO);
	assert_int_equal(why, IWARP_MPA_BAD_REV);
	b[17] = 3;
	assert_int_equal(parse_req(b, sizeof(b), false, &why), -EPROTO);
	assert_int_equal(why, IWARP_MPA_BAD_REV);
	/* markers */
	memcpy(b, siw_req, sizeof(b));
	b[16] |= 0x80;
	assert_int_equal(parse_req(b, sizeof(b), false, &why), -EOPNOTSUPP);
	assert_int_equal(why, IWARP_MPA_MARKERS);
	/* enhanced with less than the IRD/ORD word */
	memcpy(b, siw_req, sizeof(b));
	b[19] = 3;
	assert_int_equal(parse_req(b, 23, false, &why), -EPROTO);
	assert_int_equal(why, IWARP_MPA_SHORT_V2);
	/* ENHANCED on revision 1 is ignored: the word is private data */
	memcpy(b, siw_req, sizeof(b));
	b[17] = 1;
	{
		struct iwarp_mpa m;

		assert_int_equal(rdmarw__iwarp_mpa_parse(b, sizeof(b), false,
							 false, &m, &why),
				 sizeof(b));
		assert_false(m.enhanced);
		assert_int_equal(m.pd_len, 7);
	}
	assert_int_equal(parse_req(NULL, 4, false, &why), -EINVAL);
	assert_string_equal(rdmarw__iwarp_mpa_why_str(IWARP_MPA_MARKERS),
			    "markers asked");
	assert_string_equal(rdmarw__iwarp_mpa_why_str(99), "?");
}

static void reply_checks(void **state)
{
	struct iwarp_mpa req = { .rev = 2,
				 .enhanced = true,
				 .ird = 4,
				 .ord = 4,
				 .p2p = true,
				 .rtr = IWARP_MPA_V2_RTR_READ };
	struct iwarp_mpa rep;
	struct iwarp_term_info t;
	enum iwarp_mpa_why why;

	(void)state;
	assert_int_equal(rdmarw__iwarp_mpa_answer(&req, 4, 4, &rep), 0);
	assert_int_equal(rdmarw__iwarp_mpa_check_reply(&req, &rep, &why, &t),
			 0);
	/* the peer picked WRITE, we offered READ only */
	rep.rtr = IWARP_MPA_V2_RTR_WRITE;
	assert_int_equal(rdmarw__iwarp_mpa_check_reply(&req, &rep, &why, &t),
			 -EPROTO);
	assert_int_equal(why, IWARP_MPA_NO_RTR);
	assert_false(t.close);
	assert_int_equal(t.layer, IWARP_LAYER_LLP);
	assert_int_equal(t.ecode, IWARP_LLP_EC_NO_MATCHING_RTR);
	rep.rtr = IWARP_MPA_V2_RTR_READ;
	/* the peer's ORD beyond our IRD */
	rep.ord = 5;
	assert_int_equal(rdmarw__iwarp_mpa_check_reply(&req, &rep, &why, &t),
			 -EPROTO);
	assert_int_equal(why, IWARP_MPA_IRD);
	assert_int_equal(t.ecode, IWARP_LLP_EC_INSUFFICIENT_IRD);
	rep.ord = 4;
	rep.ird = 3; /* below our ORD */
	assert_int_equal(rdmarw__iwarp_mpa_check_reply(&req, &rep, &why, &t),
			 -EPROTO);
	assert_int_equal(why, IWARP_MPA_IRD);
	rep.ird = 4;
	rep.enhanced = false;
	assert_int_equal(rdmarw__iwarp_mpa_check_reply(&req, &rep, &why, &t),
			 -EPROTO);
	assert_int_equal(why, IWARP_MPA_NOT_ENHANCED);
	assert_true(t.close);
	rep.enhanced = true;
	rep.reject = true;
	assert_int_equal(rdmarw__iwarp_mpa_check_reply(&req, &rep, &why, &t),
			 -ECONNREFUSED);
	assert_true(t.close);
	assert_int_equal(rdmarw__iwarp_mpa_check_reply(&rep, &rep, &why, &t),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(siw_request_bytes),
		cmocka_unit_test(siw_request_parse),
		cmocka_unit_test(siw_p2p_answer),
		cmocka_unit_test(rev1_round_trip),
		cmocka_unit_test(max_private_data),
		cmocka_unit_test(build_refusals),
		cmocka_unit_test(parse_refusals),
		cmocka_unit_test(reply_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the iWARP receive path (src/iwarp): bytes as a TCP
 * stream delivers them, cut at sizes the input chooses, into the FPDU
 * parser; payloads fed or placed by the caller; TERMINATE payloads
 * through their parser; every refusal answered with a TERMINATE built
 * from the failed header and parsed back; the same bytes also as an MPA
 * request/reply.
 *
 * Input: byte 0: bit 0 CRC negotiated, bit 1 place payloads directly,
 * bits 2-7 the largest piece (1..64 bytes); byte 1: the ULPDU maximum
 * (46 + 256 * byte); the rest the stream.
 *
 * Invariants: nothing is read outside the input or written outside the
 * caller's buffers (ASan); each call uses at most what it was given;
 * payload pieces lie inside the piece fed; a header's lengths agree with
 * its opcode and the ULPDU maximum, and the payload delivered before the
 * end is exactly the header's; a refusal is either a close or a TERMINATE
 * with a valid layer, and that TERMINATE builds and parses back with the
 * same codes; after a refusal the parser only answers with a close.
 */
#include "iwarp/iwarp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                \
	do {                                                            \
		if (!(cond)) {                                          \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                   \
			fputc('\n', stderr);                            \
			abort();                                        \
		}                                                       \
	} while (0)

static uint8_t sink[65536];

struct run {
	struct iwarp_rx rx;
	bool direct;
	size_t got; /* payload bytes of the current FPDU */
	uint32_t want; /* its header's payload length */
	bool in_fpdu;
	bool dead;
};

static void check_refusal(struct run *r, int ret,
			  const struct iwarp_term_info *t)
{
	struct iwarp_hdr h, bad;
	struct iwarp_term_info t2;
	uint8_t buf[128];
	int n;

	CHECK(ret == -EPROTO || ret == -EBADMSG || ret == -EPIPE,
	      "unexpected errno %d", ret);
	if (ret == -EPIPE) {
		CHECK(t->close && r->dead, "-EPIPE without close / not dead");
		return;
	}
	CHECK(!t->close && t->layer <= IWARP_LAYER_LLP,
	      "refusal without a TERMINATE: close %d layer %u", t->close,
	      t->layer);
	CHECK((ret == -EPROTO) == (t->layer == IWARP_LAYER_LLP),
	      "errno %d for layer %u", ret, t->layer);
	r->dead = true;
	/* answer it: a TERMINATE carrying the failed header */
	n = rdmarw__iwarp_term_build(t, r->rx.hdr, r->rx.have, 1, buf,
				     sizeof(buf));
	CHECK(n >= 24 && n <= 72, "term_build %d", n);
	CHECK(rdmarw__iwarp_hdr_parse(buf, (size_t)n, &h, &t2) == 24,
	      "own TERMINATE refused");
	CHECK(h.term.layer == t->layer && h.term.etype == t->etype &&
		      h.term.ecode == t->ecode,
	      "TERMINATE codes changed");
	CHECK(rdmarw__iwarp_term_parse(&h, buf + 24, (size_t)n - 24, &bad) == 0,
	      "own TERMINATE payload refused");
}

static void on_header(struct run *r)
{
	const struct iwarp_hdr *h = &r->rx.cur;

	CHECK(h->opcode < IWARP_OP_COUNT, "opcode %u", h->opcode);
	CHECK(h->hdr_len == rdmarw__iwarp_hdr_len(h->opcode), "hdr_len");
	CHECK(h->hdr_len - IWARP_MPA_HDR_LEN + h->pay_len == r->rx.ulpdu_len,
	      "lengths disagree");
	CHECK(r->rx.ulpdu_len <= r->rx.max_ulpdu, "over the maximum");
	CHECK(!r->in_fpdu, "header inside an FPDU");
	r->in_fpdu = true;
	r->got = 0;
	r->want = h->pay_len;
}

static void on_end(struct run *r)
{
	const struct iwarp_hdr *h = &r->rx.cur;

	CHECK(r->in_fpdu && r->got == r->want, "payload %zu of %u", r->got,
	      r->want);
	r->in_fpdu = false;
	if (h->opcode == IWARP_OP_TERMINATE) {
		struct iwarp_hdr bad;
		int ret = rdmarw__iwarp_term_parse(h, sink, r->got, &bad);

		CHECK(ret == 0 || ret == -EBADMSG, "term_parse %d", ret);
	}
}

/* one piece of the stream; false once the parser refused */
static bool feed_piece(struct run *r, const uint8_t *p, size_t len)
{
	struct iwarp_term_info t;
	size_t pos = 0;

	while (pos < len) {
		size_t used, n, left = rdmarw__iwarp_rx_pay_left(&r->rx);
		const void *data;
		int ret;

		if (r->direct && left) {
			n = len - pos < left ? len - pos : left;
			memcpy(sink + r->got, p + pos, n);
			ret = rdmarw__iwarp_rx_placed(&r->rx, sink + r->got, n,
						      &t);
			CHECK(ret == 0, "placed %d", ret);
			r->got += n;
			pos += n;
			continue;
		}
		ret = rdmarw__iwarp_rx_feed(&r->rx, p + pos, len - pos, &used,
					    &data, &n, &t);
		CHECK(used <= len - pos, "used %zu of %zu", used, len - pos);
		pos += used;
		if (ret < 0) {
			check_refusal(r, ret, &t);
			return false;
		}
		CHECK(!r->dead, "a dead parser answered %d", ret);
		if (ret == IWARP_RX_HDR)
			on_header(r);
		else if (ret == IWARP_RX_END)
			on_end(r);
		else if (ret == IWARP_RX_PAY) {
			CHECK((const uint8_t *)data == p + pos - n && n <= used,
			      "payload piece outside the input");
			CHECK(r->got + n <= r->want, "too much payload");
			memcpy(sink + r->got, data, n);
			r->got += n;
		} else
			CHECK(ret == IWARP_RX_MORE && pos == len, "event %d",
			      ret);
	}
	return true;
}

static void fuzz_mpa(const uint8_t *data, size_t size, bool reply)
{
	enum iwarp_mpa_why why;
	struct iwarp_mpa m, rep;
	uint8_t buf[IWARP_MPA_PD_MAX + 32];
	int n;

	n = rdmarw__iwarp_mpa_parse(data, size, true, reply, &m, &why);
	if (n < 0) {
		CHECK(why != IWARP_MPA_OK || n == -EINVAL, "no reason for %d",
		      n);
		return;
	}
	CHECK((size_t)n <= size && n >= 20, "frame length %d", n);
	CHECK(!m.pd_len || ((const uint8_t *)m.pdata >= data + 20 &&
			    (const uint8_t *)m.pdata + m.pd_len <= data + n),
	      "private data outside the frame");
	/* what parses builds again into a frame that parses the same */
	m.rtr = m.p2p ? m.rtr : 0;
	if (reply && m.p2p &&
	    m.rtr == (IWARP_MPA_V2_RTR_WRITE | IWARP_MPA_V2_RTR_READ))
		return;
	if (m.p2p && !m.rtr)
		return;
	n = rdmarw__iwarp_mpa_build(&m, buf, sizeof(buf));
	CHECK(n > 0, "rebuild %d", n);
	CHECK(rdmarw__iwarp_mpa_parse(buf, (size_t)n, true, reply, &rep,
				      &why) == n,
	      "rebuilt frame refused");
	CHECK(rep.pd_len == m.pd_len && rep.ird == m.ird && rep.ord == m.ord,
	      "round trip");
	if (!reply)
		CHECK(rdmarw__iwarp_mpa_answer(&m, 128, 128, &rep) == 0,
		      "answer");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;
	size_t pos = 2, step;
	struct iwarp_term_info t;
	unsigned int seed;
	int ret;

	if (size < 2)
		return 0;
	fuzz_mpa(data + 2, size - 2, data[0] & 1);
	memset(&r, 0, sizeof(r));
	CHECK(rdmarw__iwarp_rx_init(&r.rx, data[0] & 1,
				    46 + 256u * data[1] > 0xffff ?
					    0xffff :
					    46 + 256u * data[1]) == 0,
	      "init");
	r.direct = data[0] & 2;
	step = (size_t)(data[0] >> 2) + 1;
	seed = data[1];
	while (pos < size) {
		/* pieces of 1..step bytes, varying */
		size_t n = 1 + (seed = seed * 1103515245u + 12345u) % step;

		if (n > size - pos)
			n = size - pos;
		if (!feed_piece(&r, data + pos, n))
			break;
		pos += n;
	}
	ret = rdmarw__iwarp_rx_eof(&r.rx, &t);
	if (r.dead)
		CHECK(ret == -EPIPE && t.close, "eof of a dead parser %d", ret);
	else if (r.in_fpdu || r.rx.have)
		CHECK(ret == -ECONNABORTED && t.close, "cut short %d", ret);
	else
		CHECK(ret == 0, "eof at a boundary %d", ret);
	return 0;
}

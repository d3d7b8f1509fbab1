// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * FPDU framing and the receive parser (src/iwarp/iwarp_fpdu.c,
 * iwarp_rx.c): CRC32c against RFC 3720 B.4's vectors as bytes on the
 * wire, the sender's iovec array (header, payload untouched, pad, CRC),
 * and the parser fed every split of a stream of FPDUs, by feeding and by
 * placing the payload itself, and its refusals: bad CRC, a ULPDU over the
 * maximum, a length shorter than the header, MSN and MO out of sequence,
 * a frame cut short at EOF.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"

static void crc_le(uint32_t state, uint8_t out[4])
{
	uint32_t v = ~state;

	out[0] = (uint8_t)v;
	out[1] = (uint8_t)(v >> 8);
	out[2] = (uint8_t)(v >> 16);
	out[3] = (uint8_t)(v >> 24);
}

/* RFC 3720 B.4: the CRC bytes as they go on the wire */
static void crc_vectors(void **state)
{
	static const uint8_t zeros_crc[] = { 0xaa, 0x36, 0x91, 0x8a };
	static const uint8_t ones_crc[] = { 0x43, 0xab, 0xa8, 0x62 };
	static const uint8_t inc_crc[] = { 0x4e, 0x79, 0xdd, 0x46 };
	uint8_t buf[32], out[4];
	int i;

	(void)state;
	memset(buf, 0, sizeof(buf));
	crc_le(rdmarw__iwarp_crc32c(~0u, buf, 32), out);
	assert_memory_equal(out, zeros_crc, 4);
	memset(buf, 0xff, sizeof(buf));
	crc_le(rdmarw__iwarp_crc32c(~0u, buf, 32), out);
	assert_memory_equal(out, ones_crc, 4);
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	/* in two pieces: the state carries over */
	crc_le(rdmarw__iwarp_crc32c(rdmarw__iwarp_crc32c(~0u, buf, 5), buf + 5,
				    27),
	       out);
	assert_memory_equal(out, inc_crc, 4);
}

/* frame one SEND of @pay_len bytes (MSN @msn) into @out; its length */
static size_t frame_send(uint8_t *out, uint32_t msn, const uint8_t *pay,
			 size_t pay_len, bool crc)
{
	struct iwarp_hdr h = { .opcode = IWARP_OP_SEND,
			       .last = true,
			       .msn = msn,
			       .pay_len = (uint32_t)pay_len };
	struct iovec piov[2] = { { (void *)pay, pay_len / 2 },
				 { (void *)(pay + pay_len / 2),
				   pay_len - pay_len / 2 } };
	struct iwarp_tx_trailer trl;
	struct iovec iov[4];
	uint8_t hdr[IWARP_HDR_MAX];
	size_t off = 0;
	int n, i;

	assert_int_equal(rdmarw__iwarp_hdr_build(&h, hdr, sizeof(hdr)), 20);
	n = rdmarw__iwarp_fpdu_tx(hdr, 20, piov, 2, crc, &trl, iov, 4);
	assert_true(n >= 2);
	for (i = 0; i < n; i++) {
		memcpy(out + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	assert_int_equal(off % 4, 0);
	return off;
}

static void tx_layout(void **state)
{
	static const uint8_t pay[5] = { 1, 2, 3, 4, 5 };
	struct iwarp_hdr h = {
		.opcode = IWARP_OP_SEND, .last = true, .msn = 1, .pay_len = 5
	};
	struct iovec piov[2] = { { (void *)pay, 5 }, { NULL, 0 } };
	struct iwarp_tx_trailer trl;
	struct iovec iov[4];
	uint8_t hdr[IWARP_HDR_MAX], flat[40], c[4];

	(void)state;
	assert_int_equal(rdmarw__iwarp_hdr_build(&h, hdr, sizeof(hdr)), 20);
	/* the empty iovec is skipped; payload not copied */
	assert_int_equal(
		rdmarw__iwarp_fpdu_tx(hdr, 20, piov, 2, true, &trl, iov, 4), 3);
	assert_ptr_equal(iov[0].iov_base, hdr);
	assert_ptr_equal(iov[1].iov_base, pay);
	assert_int_equal(iov[1].iov_len, 5);
	/* ULPDU 18 + 5 = 23; 2 + 23 = 25: pad 3, then the CRC */
	assert_int_equal(hdr[0], 0);
	assert_int_equal(hdr[1], 23);
	assert_int_equal(iov[2].iov_len, 7);
	memcpy(flat, hdr, 20);
	memcpy(flat + 20, pay, 5);
	memset(flat + 25, 0, 3);
	crc_le(rdmarw__iwarp_crc32c(~0u, flat, 28), c);
	assert_memory_equal(trl.bytes, flat + 25, 3);
	assert_memory_equal(trl.bytes + 3, c, 4);
	/* without CRC: the field is there, zero */
	assert_int_equal(
		rdmarw__iwarp_fpdu_tx(hdr, 20, piov, 1, false, &trl, iov, 4),
		3);
	memset(c, 0, 4);
	assert_memory_equal(trl.bytes + 3, c, 4);
	/* refusals */
	assert_int_equal(
		rdmarw__iwarp_fpdu_tx(hdr, 20, piov, 2, true, &trl, iov, 3),
		-ENOSPC);
	assert_int_equal(
		rdmarw__iwarp_fpdu_tx(hdr, 3, piov, 1, true, &trl, iov, 4),
		-EINVAL);
	assert_int_equal(
		rdmarw__iwarp_fpdu_tx(hdr, 20, NULL, 1, true, &trl, iov, 4),
		-EINVAL);
	piov[0].iov_len = 0xffff - 17;
	assert_int_equal(
		rdmarw__iwarp_fpdu_tx(hdr, 20, piov, 1, true, &trl, iov, 4),
		-EMSGSIZE);
	piov[0].iov_len = 0xffff - 18; /* no CRC: pay has 5 bytes only */
	assert_int_equal(
		rdmarw__iwarp_fpdu_tx(hdr, 20, piov, 1, false, &trl, iov, 4),
		3);
	assert_int_equal(hdr[0], 0xff);
	assert_int_equal(hdr[1], 0xff);
}

struct sink {
	uint8_t bytes[1024];
	size_t n;
	int hdrs, ends;
	uint32_t msn[8];
};

/* feed @len bytes in pieces of @step; direct: place the payload itself */
static int feed_all(struct iwarp_rx *rx, const uint8_t *buf, size_t len,
		    size_t step, bool direct, struct sink *s,
		    struct iwarp_term_info *t)
{
	size_t pos = 0;

	while (pos < len) {
		size_t end = pos + step < len ? pos + step : len;

		while (pos < end) {
			size_t used, n, left = rdmarw__iwarp_rx_pay_left(rx);
			const void *data;
			int ret;

			if (direct && left) {
				/* the payload straight into the sink */
				n = end - pos < left ? end - pos : left;
				memcpy(s->bytes + s->n, buf + pos, n);
				assert_int_equal(
					rdmarw__iwarp_rx_placed(
						rx, s->bytes + s->n, n, t),
					0);
				s->n += n;
				pos += n;
				continue;
			}
			ret = rdmarw__iwarp_rx_feed(rx, buf + pos, end - pos,
						    &used, &data, &n, t);
			assert_true(used <= end - pos);
			pos += used;
			if (ret < 0)
				return ret;
			if (ret == IWARP_RX_HDR)
				s->msn[s->hdrs++ % 8] = rx->cur.msn;
			if (ret == IWARP_RX_END)
				s->ends++;
			if (ret == IWARP_RX_PAY) {
				assert_ptr_equal(data, buf + pos - n);
				memcpy(s->bytes + s->n, data, n);
				s->n += n;
			}
		}
	}
	return 0;
}

static void rx_any_split(void **state)
{
	uint8_t pay[300], stream[600], want[300];
	size_t len = 0, step, wn = 0;
	struct iwarp_term_info t;
	uint32_t sizes[] = { 0, 1, 2, 3, 4, 37, 200 };
	unsigned int i, d;

	(void)state;
	for (i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < 7; i++) {
		len += frame_send(stream + len, i + 1, pay, sizes[i], true);
		memcpy(want + wn, pay, sizes[i]);
		wn += sizes[i];
	}
	for (d = 0; d < 2; d++) {
		for (step = 1; step <= len; step++) {
			struct iwarp_rx rx;
			struct sink s = { .n = 0 };

			assert_int_equal(
				rdmarw__iwarp_rx_init(&rx, true, 0xffff), 0);
			assert_int_equal(
				feed_all(&rx, stream, len, step, d, &s, &t), 0);
			assert_int_equal(s.hdrs, 7);
			assert_int_equal(s.ends, 7);
			assert_int_equal(s.n, wn);
			assert_memory_equal(s.bytes, want, wn);
			assert_int_equal(s.msn[6], 7);
			assert_int_equal(rdmarw__iwarp_rx_eof(&rx, &t), 0);
		}
	}
}

static void rx_bad_crc(void **state)
{
	uint8_t pay[40] = { 0 }, stream[80];
	size_t len = frame_send(stream, 1, pay, 40, true), bit;
	struct iwarp_term_info t;
	struct iwarp_rx rx;
	struct sink s;

	(void)state;
	/* every bit of the payload, pad and CRC */
	for (bit = 20 * 8; bit < len * 8; bit++) {
		memset(&s, 0, sizeof(s));
		stream[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		rdmarw__iwarp_rx_init(&rx, true, 0xffff);
		assert_int_equal(feed_all(&rx, stream, len, len, false, &s, &t),
				 -EPROTO);
		assert_false(t.close);
		assert_int_equal(t.layer, IWARP_LAYER_LLP);
		assert_int_equal(t.ecode, IWARP_LLP_EC_CRC);
		assert_int_equal(s.ends, 0);
		/* dead afterwards */
		assert_int_equal(rdmarw__iwarp_rx_eof(&rx, &t), -EPIPE);
		assert_true(t.close);
		stream[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* CRC not negotiated: the field is not checked */
	stream[len - 1] ^= 1;
	memset(&s, 0, sizeof(s));
	rdmarw__iwarp_rx_init(&rx, false, 0xffff);
	assert_int_equal(feed_all(&rx, stream, len, 3, false, &s, &t), 0);
	assert_int_equal(s.ends, 1);
}

static void rx_refusals(void **state)
{
	uint8_t pay[100] = { 0 }, stream[300];
	struct iwarp_term_info t;
	struct iwarp_rx rx;
	struct sink s;
	size_t len, i;

	(void)state;
	/* over the negotiated maximum: refused from the length word */
	len = frame_send(stream, 1, pay, 100, true);
	memset(&s, 0, sizeof(s));
	rdmarw__iwarp_rx_init(&rx, true, 117);
	assert_int_equal(feed_all(&rx, stream, 4, 1, false, &s, &t), -EPROTO);
	assert_int_equal(t.ecode, IWARP_LLP_EC_FPDU_START);
	rdmarw__iwarp_rx_init(&rx, true, 118);
	assert_int_equal(feed_all(&rx, stream, len, 1, false, &s, &t), 0);
	/* a length shorter than the SEND header */
	stream[0] = 0;
	stream[1] = 17;
	memset(&s, 0, sizeof(s));
	rdmarw__iwarp_rx_init(&rx, true, 0xffff);
	assert_int_equal(feed_all(&rx, stream, len, 1, false, &s, &t), -EPROTO);
	assert_int_equal(t.layer, IWARP_LAYER_LLP);
	assert_int_equal(t.ecode, IWARP_LLP_EC_FPDU_START);
	/* MSN: 1 expected, 2 sent */
	len = frame_send(stream, 2, pay, 8, true);
	memset(&s, 0, sizeof(s));
	rdmarw__iwarp_rx_init(&rx, true, 0xffff);
	assert_int_equal(feed_all(&rx, stream, len, 7, false, &s, &t),
			 -EBADMSG);
	assert_int_equal(t.layer, IWARP_LAYER_DDP);
	assert_int_equal(t.etype, IWARP_DDP_ET_UNTAGGED);
	assert_int_equal(t.ecode, IWARP_DDP_EC_UT_MSN_RANGE);
	/* the same MSN twice */
	len = frame_send(stream, 1, pay, 8, true);
	len += frame_send(stream + len, 1, pay, 8, true);
	memset(&s, 0, sizeof(s));
	rdmarw__iwarp_rx_init(&rx, true, 0xffff);
	assert_int_equal(feed_all(&rx, stream, len, 5, false, &s, &t),
			 -EBADMSG);
	assert_int_equal(s.ends, 1);
	assert_int_equal(t.ecode, IWARP_DDP_EC_UT_MSN_RANGE);
	/* MO: a first segment (not last) must start at 0 */
	len = frame_send(stream, 1, pay, 8, true);
	stream[2] &= (uint8_t)~0x40 & 0xff; /* not last: CRC now wrong, */
	stream[19] = 4; /* but MO is checked first */
	memset(&s, 0, sizeof(s));
	rdmarw__iwarp_rx_init(&rx, true, 0xffff);
	assert_int_equal(feed_all(&rx, stream, len, 64, false, &s, &t),
			 -EBADMSG);
	assert_int_equal(t.ecode, IWARP_DDP_EC_UT_INVALID_MO);
	/* cut short anywhere inside: EOF is a close, no TERMINATE */
	len = frame_send(stream, 1, pay, 10, true);
	for (i = 1; i < len; i++) {
		memset(&s, 0, sizeof(s));
		rdmarw__iwarp_rx_init(&rx, true, 0xffff);
		assert_int_equal(feed_all(&rx, stream, i, 3, false, &s, &t), 0);
		assert_int_equal(rdmarw__iwarp_rx_eof(&rx, &t), -ECONNABORTED);
		assert_true(t.close);
	}
	/* placing more than is left, or outside a payload */
	rdmarw__iwarp_rx_init(&rx, true, 0xffff);
	assert_int_equal(rdmarw__iwarp_rx_placed(&rx, pay, 1, &t), -EINVAL);
	assert_int_equal(rdmarw__iwarp_rx_init(&rx, true, 45), -EINVAL);
	assert_int_equal(rdmarw__iwarp_rx_init(&rx, true, 0x10000), -EINVAL);
}

static void rx_multi_segment(void **state)
{
	uint8_t pay[64], stream[300];
	struct iwarp_hdr h = { .opcode = IWARP_OP_SEND_SE, .msn = 1 };
	struct iwarp_tx_trailer trl;
	struct iwarp_term_info t;
	struct iwarp_rx rx;
	struct iovec iov[3], piov;
	struct sink s = { .n = 0 };
	size_t len = 0;
	int seg, i, n;

	(void)state;
	for (i = 0; i < 64; i++)
		pay[i] = (uint8_t)i;
	/* one message in three segments: MO 0, 20, 40; the last flag */
	for (seg = 0; seg < 3; seg++) {
		uint8_t hdr[IWARP_HDR_MAX];

		h.mo = (uint32_t)seg * 20;
		h.last = seg == 2;
		h.pay_len = seg == 2 ? 24 : 20;
		piov.iov_base = pay + h.mo;
		piov.iov_len = h.pay_len;
		assert_int_equal(rdmarw__iwarp_hdr_build(&h, hdr, 48), 20);
		n = rdmarw__iwarp_fpdu_tx(hdr, 20, &piov, 1, true, &trl, iov,
					  3);
		for (i = 0; i < n; i++) {
			memcpy(stream + len, iov[i].iov_base, iov[i].iov_len);
			len += iov[i].iov_len;
		}
	}
	rdmarw__iwarp_rx_init(&rx, true, 0xffff);
	assert_int_equal(feed_all(&rx, stream, len, 9, true, &s, &t), 0);
	assert_int_equal(s.ends, 3);
	assert_int_equal(s.n, 64);
	assert_memory_equal(s.bytes, pay, 64);
	assert_int_equal(rx.msn[IWARP_QN_SEND], 2);
	assert_int_equal(rx.mo[IWARP_QN_SEND], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc_vectors),
		cmocka_unit_test(tx_layout),
		cmocka_unit_test(rx_any_split),
		cmocka_unit_test(rx_bad_crc),
		cmocka_unit_test(rx_refusals),
		cmocka_unit_test(rx_multi_segment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receive-side FPDU parser: bytes as a stream socket gives them (any
 * split) in, one event at a time out: a checked header, payload pieces,
 * the end of a whole FPDU whose CRC is right (siw_qp_rx.c: siw_tcp_rx_data()
 * with siw_get_hdr() and siw_get_trailer()).  The header comes first so
 * that the caller may read a tagged payload from the socket straight into
 * its sink and report it with rdmarw__iwarp_rx_placed(); or feed the bytes
 * and take IWARP_RX_PAY pieces pointing into its own buffer.
 *
 * After a refusal the parser stays dead: framing cannot be trusted any
 * more, the connection is going to TERMINATE and close.
 */
#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"

enum { RX_HDR, RX_PAY, RX_TRL, RX_DEAD };

#define TRL_LEN(rx) ((rx)->pad + IWARP_MPA_CRC_LEN)

/**
 * rdmarw__iwarp_rx_init() - set up the receive state of a connection
 * @rx: the state
 * @crc: CRC32c negotiated in the MPA exchange
 * @max_ulpdu: the largest ULPDU length accepted (the header of a READ
 *	request, 46 bytes, up to 65535)
 *
 * MSNs start at 1 on each untagged queue (RFC 5041 5.1).
 *
 * Return: 0, or -EINVAL.
 */
int rdmarw__iwarp_rx_init(struct iwarp_rx *rx, bool crc, uint32_t max_ulpdu)
{
	int i;

	if (!rx || max_ulpdu > 0xffff ||
	    max_ulpdu < sizeof(struct iwarp_rreq) - IWARP_MPA_HDR_LEN)
		return -EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->crc = crc;
	rx->max_ulpdu = max_ulpdu;
	rx->state = RX_HDR;
	rx->need = sizeof(struct iwarp_ctrl);
	for (i = 0; i < IWARP_QN_COUNT; i++)
		rx->msn[i] = 1;
	return 0;
}

static int rx_fail(struct iwarp_rx *rx, struct iwarp_term_info *t,
		   uint8_t ecode)
{
	rx->state = RX_DEAD;
	t->close = false;
	t->layer = IWARP_LAYER_LLP;
	t->etype = IWARP_LLP_ET_MPA;
	t->ecode = ecode;
	return -EPROTO;
}

static int rx_dead(struct iwarp_term_info *t)
{
	memset(t, 0, sizeof(*t));
	t->close = true;
	return -EPIPE;
}

/* the untagged queues' MSN and MO (siw_send_check_ntoh() and friends) */
static int rx_sequence(struct iwarp_rx *rx, struct iwarp_term_info *t)
{
	struct iwarp_hdr *h = &rx->cur;
	uint32_t q = h->qn;

	if (h->tagged)
		return 0;
	/* hdr_parse checked qn against the opcode's queue */
	if (h->msn != rx->msn[q])
		goto refuse_msn;
	if (h->mo != rx->mo[q] || h->mo + h->pay_len < h->mo) {
		t->ecode = IWARP_DDP_EC_UT_INVALID_MO;
		goto refuse;
	}
	if (h->last) {
		rx->msn[q]++;
		rx->mo[q] = 0;
	} else {
		rx->mo[q] += h->pay_len;
	}
	return 0;
refuse_msn:
	t->ecode = IWARP_DDP_EC_UT_MSN_RANGE;
refuse:
	t->close = false;
	t->layer = IWARP_LAYER_DDP;
	t->etype = IWARP_DDP_ET_UNTAGGED;
	rx->state = RX_DEAD;
	return -EBADMSG;
}

/* the header is whole (or its first word is): check it */
static int rx_header(struct iwarp_rx *rx, struct iwarp_term_info *t)
{
	int ret;

	if (rx->have == sizeof(struct iwarp_ctrl)) {
		rx->ulpdu_len = iwarp_ld16(rx->hdr);
		if (rx->ulpdu_len > rx->max_ulpdu)
			return rx_fail(rx, t, IWARP_LLP_EC_FPDU_START);
	}
	ret = rdmarw__iwarp_hdr_parse(rx->hdr, rx->have, &rx->cur, t);
	if (ret == -EAGAIN) {
		/* the first word passed: the opcode gives the length */
		rx->need = (uint8_t)rdmarw__iwarp_hdr_len(rx->hdr[3] & 0xf);
		return 0;
	}
	if (ret < 0) {
		rx->state = RX_DEAD;
		return ret;
	}
	ret = rx_sequence(rx, t);
	if (ret)
		return ret;
	rx->pay_left = rx->cur.pay_len;
	rx->pad = (4 - (rx->ulpdu_len + IWARP_MPA_HDR_LEN) % 4) % 4;
	rx->crc_state = ~0u;
	if (rx->crc)
		rx->crc_state = rdmarw__iwarp_crc32c(~0u, rx->hdr, rx->have);
	rx->state = rx->pay_left ? RX_PAY : RX_TRL;
	rx->have = 0;
	rx->need = TRL_LEN(rx);
	return IWARP_RX_HDR;
}

static int rx_trailer(struct iwarp_rx *rx, struct iwarp_term_info *t)
{
	uint32_t want, got;

	rx->state = RX_HDR;
	rx->have = 0;
	rx->need = sizeof(struct iwarp_ctrl);
	if (!rx->crc)
		return IWARP_RX_END;
	want = ~rdmarw__iwarp_crc32c(rx->crc_state, rx->trl, rx->pad);
	got = (uint32_t)rx->trl[rx->pad] | (uint32_t)rx->trl[rx->pad + 1] << 8 |
	      (uint32_t)rx->trl[rx->pad + 2] << 16 |
	      (uint32_t)rx->trl[rx->pad + 3] << 24;
	if (want != got)
		return rx_fail(rx, t, IWARP_LLP_EC_CRC);
	return IWARP_RX_END;
}

/* gather header or trailer bytes; returns the bytes taken */
static size_t rx_gather(struct iwarp_rx *rx, uint8_t *dst, const uint8_t *p,
			size_t len)
{
	size_t k = (size_t)(rx->need - rx->have);

	if (k > len)
		k = len;
	memcpy(dst + rx->have, p, k);
	rx->have += (uint8_t)k;
	return k;
}

/**
 * rdmarw__iwarp_rx_feed() - parse received bytes up to the next event
 * @rx: the connection's receive state
 * @buf: bytes from the stream
 * @len: their number
 * @used: set to the bytes of @buf this call took
 * @data: IWARP_RX_PAY: set to the payload piece (inside @buf)
 * @n: IWARP_RX_PAY: set to its length
 * @t: the TERMINATE (or close) a refusal asks for
 *
 * Call again with the rest of @buf after each event.  After IWARP_RX_HDR
 * (the header is in @rx->cur, checked) the payload follows: the caller
 * may feed it here or place it itself and call rdmarw__iwarp_rx_placed().
 * Header refusals are those of rdmarw__iwarp_hdr_parse(), plus: a ULPDU
 * length over the negotiated maximum (LLP, MPA, FPDU start), an MSN other
 * than the queue's next (DDP, untagged, MSN out of range), an MO other
 * than the message's next (DDP, untagged, invalid MO), a bad CRC (LLP,
 * MPA, CRC).
 *
 * Return: an enum iwarp_rx_ev, or -EPROTO/-EBADMSG with @t set (the
 * parser is then dead), -EPIPE for a dead parser (@t: close), -EINVAL.
 */
int rdmarw__iwarp_rx_feed(struct iwarp_rx *rx, const void *buf, size_t len,
			  size_t *used, const void **data, size_t *n,
			  struct iwarp_term_info *t)
{
	const uint8_t *p = buf;
	size_t pos = 0;
	int ret;

	if (!rx || (!buf && len) || !used || !data || !n || !t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	*used = 0;
	*data = NULL;
	*n = 0;
	while (pos < len) {
		switch (rx->state) {
		case RX_HDR:
			pos += rx_gather(rx, rx->hdr, p + pos, len - pos);
			if (rx->have < rx->need)
				break;
			ret = rx_header(rx, t);
			if (ret) {
				*used = pos;
				return ret;
			}
			break;
		case RX_PAY: {
			size_t k = len - pos;

			if (k > rx->pay_left)
				k = rx->pay_left;
			*data = p + pos;
			*n = k;
			*used = pos + k;
			return rdmarw__iwarp_rx_placed(rx, p + pos, k, t) ?:
				       IWARP_RX_PAY;
		}
		case RX_TRL:
			pos += rx_gather(rx, rx->trl, p + pos, len - pos);
			if (rx->have < rx->need)
				break;
			*used = pos;
			return rx_trailer(rx, t);
		default:
			return rx_dead(t);
		}
	}
	*used = pos;
	if (rx->state == RX_DEAD)
		return rx_dead(t);
	return IWARP_RX_MORE;
}

/**
 * rdmarw__iwarp_rx_placed() - account payload the caller placed itself
 * @rx: the connection's receive state, after IWARP_RX_HDR
 * @data: where the payload bytes now are (read for the CRC)
 * @n: how many (at most rdmarw__iwarp_rx_pay_left())
 * @t: set to close when the parser is dead
 *
 * Return: 0, -EINVAL when the parser is not in a payload or @n exceeds
 * what is left, -EPIPE for a dead parser.
 */
int rdmarw__iwarp_rx_placed(struct iwarp_rx *rx, const void *data, size_t n,
			    struct iwarp_term_info *t)
{
	if (!rx || !t || (!data && n))
		return -EINVAL;
	if (rx->state == RX_DEAD)
		return rx_dead(t);
	if ((rx->state != RX_PAY && n) || n > rx->pay_left)
		return -EINVAL;
	if (rx->crc)
		rx->crc_state = rdmarw__iwarp_crc32c(rx->crc_state, data, n);
	rx->pay_left -= (uint32_t)n;
	if (rx->state == RX_PAY && !rx->pay_left)
		rx->state = RX_TRL;
	return 0;
}

/**
 * rdmarw__iwarp_rx_pay_left() - payload bytes of the current FPDU to come
 * @rx: the connection's receive state
 *
 * Return: the count (0 outside a payload).
 */
size_t rdmarw__iwarp_rx_pay_left(const struct iwarp_rx *rx)
{
	return rx && rx->state == RX_PAY ? rx->pay_left : 0;
}

/**
 * rdmarw__iwarp_rx_eof() - the stream ended: was it between FPDUs?
 * @rx: the connection's receive state
 * @t: set to close for a frame cut short
 *
 * Return: 0 at an FPDU boundary, -ECONNABORTED inside an FPDU, -EPIPE for
 * a dead parser, -EINVAL.
 */
int rdmarw__iwarp_rx_eof(const struct iwarp_rx *rx, struct iwarp_term_info *t)
{
	if (!rx || !t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	if (rx->state == RX_DEAD)
		return rx_dead(t);
	if (rx->state == RX_HDR && !rx->have)
		return 0;
	t->close = true;
	return -ECONNABORTED;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * TERMINATE (RFC 5040 4.8): the untagged header on queue 2, the control
 * word (layer, error type, error code, M/D/R flags) and, when the error is
 * about a DDP segment or an RDMA message, a copy of the header that failed:
 * its DDP segment length (the MPA length field) and DDP header (16 bytes
 * tagged, 20 untagged, MPA length included) and, for a READ request, the
 * whole 48-byte header (siw_send_terminate()'s shapes).
 */
#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"

#define TERM_HDR ((size_t)sizeof(struct iwarp_term))

/* bytes of a failed header a TERMINATE copies, 0 for none */
static size_t copy_len(const struct iwarp_term_info *ti, const uint8_t *bad,
		       size_t bad_len, bool *r)
{
	bool tagged;
	int op;

	*r = false;
	if (!bad || bad_len < sizeof(struct iwarp_ctrl))
		return 0;
	if (ti->layer == IWARP_LAYER_LLP ||
	    (ti->layer == IWARP_LAYER_RDMAP &&
	     ti->etype == IWARP_RDMAP_ET_CATASTROPHIC))
		return 0;
	tagged = iwarp_ld16(bad + 2) & IWARP_DDP_F_TAGGED;
	op = iwarp_ld16(bad + 2) & IWARP_RDMAP_OP_MASK;
	if (!tagged && op == IWARP_OP_READ_REQ &&
	    bad_len >= sizeof(struct iwarp_rreq)) {
		*r = true;
		return sizeof(struct iwarp_rreq);
	}
	if (tagged && bad_len >= sizeof(struct iwarp_tagged))
		return sizeof(struct iwarp_tagged);
	if (!tagged && bad_len >= sizeof(struct iwarp_untagged))
		return sizeof(struct iwarp_untagged);
	return 0;
}

/**
 * rdmarw__iwarp_term_build() - write a TERMINATE's ULPDU
 * @ti: layer, type and code (@ti->close must be false)
 * @bad_hdr: the header that failed, from its MPA length field; may be
 *	NULL (nothing copied)
 * @bad_len: its bytes available
 * @msn: the sender's next MSN on the TERMINATE queue (1 for the first)
 * @buf: where to write the 24-byte header then the copy
 * @len: bytes at @buf
 *
 * The copy (flags M and D, and R for a READ request) is made for DDP
 * errors and non-catastrophic RDMAP errors when @bad_hdr holds a whole
 * header.  Frame the result with rdmarw__iwarp_fpdu_tx(): the first 24
 * bytes as header, the rest as payload.
 *
 * Return: the bytes written, -EINVAL for bad arguments, -ENOSPC.
 */
int rdmarw__iwarp_term_build(const struct iwarp_term_info *ti,
			     const void *bad_hdr, size_t bad_len, uint32_t msn,
			     void *buf, size_t len)
{
	struct iwarp_hdr h;
	size_t copy;
	bool r;
	int ret;

	if (!ti || ti->close || ti->layer > IWARP_LAYER_LLP ||
	    ti->etype > 0xf || !buf)
		return -EINVAL;
	copy = copy_len(ti, bad_hdr, bad_len, &r);
	if (len < TERM_HDR + copy)
		return -ENOSPC;
	memset(&h, 0, sizeof(h));
	h.opcode = IWARP_OP_TERMINATE;
	h.last = true;
	h.msn = msn;
	h.pay_len = (uint32_t)copy;
	h.term = *ti;
	h.term_m = h.term_d = copy != 0;
	h.term_r = r;
	ret = rdmarw__iwarp_hdr_build(&h, buf, len);
	if (ret < 0)
		return ret;
	if (copy) /* @bad_hdr may be NULL: no memcpy() from it then */
		memcpy((uint8_t *)buf + TERM_HDR, bad_hdr, copy);
	return (int)(TERM_HDR + copy);
}

/**
 * rdmarw__iwarp_term_parse() - check a TERMINATE's payload
 * @h: the TERMINATE's header, as rdmarw__iwarp_hdr_parse() gave it
 * @pay: its payload
 * @len: the payload's length (@h->pay_len)
 * @bad: the copied header's fields when D is set (zeroed otherwise)
 *
 * The payload must be exactly what the flags announce: with D, the
 * copied DDP header (16 bytes tagged, 20 untagged); with R as well, a
 * READ request's 48 bytes; nothing without D.  No TERMINATE answers a
 * TERMINATE: a malformed one only closes the connection.
 *
 * Return: 0, -EBADMSG for a payload that does not match the flags,
 * -EINVAL for bad arguments.
 */
int rdmarw__iwarp_term_parse(const struct iwarp_hdr *h, const void *pay,
			     size_t len, struct iwarp_hdr *bad)
{
	const uint8_t *p = pay;
	size_t want;
	bool tagged;

	if (!h || !bad || (!pay && len) || h->opcode != IWARP_OP_TERMINATE ||
	    len != h->pay_len)
		return -EINVAL;
	memset(bad, 0, sizeof(*bad));
	if (!h->term_d)
		return h->term_r || len ? -EBADMSG : 0;
	if (len < sizeof(struct iwarp_ctrl))
		return -EBADMSG;
	tagged = iwarp_ld16(p + 2) & IWARP_DDP_F_TAGGED;
	if (h->term_r)
		want = (!tagged && (iwarp_ld16(p + 2) & IWARP_RDMAP_OP_MASK) ==
					   IWARP_OP_READ_REQ) ?
			       sizeof(struct iwarp_rreq) :
			       0;
	else
		want = tagged ? sizeof(struct iwarp_tagged) :
				sizeof(struct iwarp_untagged);
	if (!want || len != want)
		return -EBADMSG;
	return rdmarw__iwarp_hdr_decode(p, len, bad);
}

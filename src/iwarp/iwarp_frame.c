// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP (RFC 5041) and RDMAP (RFC 5040) headers: build, decode and the
 * checks a receiver applies to one header on its own (siw_qp_rx.c:
 * siw_get_hdr() and the per-opcode checks), each refusal mapped to the
 * TERMINATE layer/type/code siw's enum term_* and the RFCs give.  The
 * checks that need the connection's state (MSN, MO) are the receive
 * parser's (iwarp_rx.c); those that need memory (STags, bounds, access)
 * are the software device's.
 */
#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"

/* siw's iwarp_pktinfo[]: header bytes (MPA length included) and kind */
static const struct {
	uint8_t hdr_len;
	bool tagged;
	int8_t qn;
} op_info[IWARP_OP_COUNT] = {
	[IWARP_OP_WRITE] = { sizeof(struct iwarp_tagged), true, -1 },
	[IWARP_OP_READ_REQ] = { sizeof(struct iwarp_rreq), false,
				IWARP_QN_READ_REQ },
	[IWARP_OP_READ_RESP] = { sizeof(struct iwarp_tagged), true, -1 },
	[IWARP_OP_SEND] = { sizeof(struct iwarp_untagged), false,
			    IWARP_QN_SEND },
	[IWARP_OP_SEND_INV] = { sizeof(struct iwarp_untagged), false,
				IWARP_QN_SEND },
	[IWARP_OP_SEND_SE] = { sizeof(struct iwarp_untagged), false,
			       IWARP_QN_SEND },
	[IWARP_OP_SEND_SE_INV] = { sizeof(struct iwarp_untagged), false,
				   IWARP_QN_SEND },
	[IWARP_OP_TERMINATE] = { sizeof(struct iwarp_term), false,
				 IWARP_QN_TERMINATE },
};

/**
 * rdmarw__iwarp_hdr_len() - header bytes of an RDMAP opcode on the wire
 * @opcode: enum iwarp_opcode
 *
 * Return: the length, MPA length field included, or -EINVAL.
 */
int rdmarw__iwarp_hdr_len(unsigned int opcode)
{
	if (opcode >= IWARP_OP_COUNT)
		return -EINVAL;
	return op_info[opcode].hdr_len;
}

/**
 * rdmarw__iwarp_hdr_build() - write a DDP/RDMAP header
 * @h: the fields; the tagged flag, queue number and lengths follow from
 *	@h->opcode and @h->pay_len (the MPA length field is written here)
 * @buf: where to write it
 * @len: bytes at @buf
 *
 * Return: the header's length, -EINVAL for a bad opcode or a READ request
 * or TERMINATE that is not one whole segment, -EMSGSIZE when the ULPDU
 * would exceed 65535 bytes, -ENOSPC when @len is short.
 */
int rdmarw__iwarp_hdr_build(const struct iwarp_hdr *h, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint16_t ctrl;
	int hl;

	if (!h || !buf)
		return -EINVAL;
	hl = rdmarw__iwarp_hdr_len(h->opcode);
	if (hl < 0)
		return hl;
	if ((h->opcode == IWARP_OP_READ_REQ && h->pay_len) ||
	    ((h->opcode == IWARP_OP_READ_REQ ||
	      h->opcode == IWARP_OP_TERMINATE) &&
	     (!h->last || h->mo)))
		return -EINVAL;
	if (h->pay_len > 0xffffu - (unsigned int)(hl - IWARP_MPA_HDR_LEN))
		return -EMSGSIZE;
	if (len < (size_t)hl)
		return -ENOSPC;
	memset(p, 0, hl);
	iwarp_st16(p, (uint16_t)(hl - IWARP_MPA_HDR_LEN + h->pay_len));
	ctrl = IWARP_DDP_VERSION << IWARP_DDP_VER_SHIFT |
	       IWARP_RDMAP_VERSION << IWARP_RDMAP_VER_SHIFT | h->opcode;
	if (op_info[h->opcode].tagged)
		ctrl |= IWARP_DDP_F_TAGGED;
	if (h->last)
		ctrl |= IWARP_DDP_F_LAST;
	iwarp_st16(p + 2, ctrl);
	if (op_info[h->opcode].tagged) {
		iwarp_st32(p + 4, h->stag);
		iwarp_st64(p + 8, h->to);
		return hl;
	}
	if (h->opcode == IWARP_OP_SEND_INV || h->opcode == IWARP_OP_SEND_SE_INV)
		iwarp_st32(p + 4, h->stag);
	iwarp_st32(p + 8, (uint32_t)op_info[h->opcode].qn);
	iwarp_st32(p + 12, h->msn);
	iwarp_st32(p + 16, h->mo);
	if (h->opcode == IWARP_OP_READ_REQ) {
		iwarp_st32(p + 20, h->sink_stag);
		iwarp_st64(p + 24, h->sink_to);
		iwarp_st32(p + 32, h->read_size);
		iwarp_st32(p + 36, h->src_stag);
		iwarp_st64(p + 40, h->src_to);
	} else if (h->opcode == IWARP_OP_TERMINATE) {
		uint32_t w = (uint32_t)(h->term.layer & 0xf)
				     << IWARP_TERM_LAYER_SHIFT |
			     (uint32_t)(h->term.etype & 0xf)
				     << IWARP_TERM_ETYPE_SHIFT |
			     (uint32_t)h->term.ecode << IWARP_TERM_ECODE_SHIFT;

		if (h->term_m)
			w |= IWARP_TERM_F_M;
		if (h->term_d)
			w |= IWARP_TERM_F_D;
		if (h->term_r)
			w |= IWARP_TERM_F_R;
		iwarp_st32(p + 20, w);
	}
	return hl;
}

static int refuse(struct iwarp_term_info *t, uint8_t layer, uint8_t etype,
		  uint8_t ecode)
{
	t->close = false;
	t->layer = layer;
	t->etype = etype;
	t->ecode = ecode;
	return layer == IWARP_LAYER_LLP ? -EPROTO : -EBADMSG;
}

/* the fields only, no checks (also for a TERMINATE's copied header) */
static void hdr_decode(const uint8_t *p, size_t len, struct iwarp_hdr *h)
{
	uint16_t ctrl = iwarp_ld16(p + 2);

	memset(h, 0, sizeof(*h));
	h->opcode = ctrl & IWARP_RDMAP_OP_MASK;
	h->tagged = ctrl & IWARP_DDP_F_TAGGED;
	h->last = ctrl & IWARP_DDP_F_LAST;
	if (h->tagged) {
		if (len >= sizeof(struct iwarp_tagged)) {
			h->stag = iwarp_ld32(p + 4);
			h->to = iwarp_ld64(p + 8);
		}
		return;
	}
	if (len < sizeof(struct iwarp_untagged))
		return;
	if (h->opcode == IWARP_OP_SEND_INV || h->opcode == IWARP_OP_SEND_SE_INV)
		h->stag = iwarp_ld32(p + 4);
	h->qn = iwarp_ld32(p + 8);
	h->msn = iwarp_ld32(p + 12);
	h->mo = iwarp_ld32(p + 16);
	if (h->opcode == IWARP_OP_READ_REQ &&
	    len >= sizeof(struct iwarp_rreq)) {
		h->sink_stag = iwarp_ld32(p + 20);
		h->sink_to = iwarp_ld64(p + 24);
		h->read_size = iwarp_ld32(p + 32);
		h->src_stag = iwarp_ld32(p + 36);
		h->src_to = iwarp_ld64(p + 40);
	} else if (h->opcode == IWARP_OP_TERMINATE &&
		   len >= sizeof(struct iwarp_term)) {
		uint32_t w = iwarp_ld32(p + 20);

		h->term.layer = w >> IWARP_TERM_LAYER_SHIFT & 0xf;
		h->term.etype = w >> IWARP_TERM_ETYPE_SHIFT & 0xf;
		h->term.ecode = w >> IWARP_TERM_ECODE_SHIFT & 0xff;
		h->term_m = w & IWARP_TERM_F_M;
		h->term_d = w & IWARP_TERM_F_D;
		h->term_r = w & IWARP_TERM_F_R;
	}
}

/* the first word: versions and opcode (siw_get_hdr()'s first checks) */
static int ctrl_check(uint16_t ctrl, struct iwarp_term_info *t)
{
	unsigned int op = ctrl & IWARP_RDMAP_OP_MASK;
	bool tagged = ctrl & IWARP_DDP_F_TAGGED;

	if ((ctrl & IWARP_DDP_VER_MASK) >> IWARP_DDP_VER_SHIFT !=
	    IWARP_DDP_VERSION)
		return tagged ?
			       refuse(t, IWARP_LAYER_DDP, IWARP_DDP_ET_TAGGED,
				      IWARP_DDP_EC_T_VERSION) :
			       refuse(t, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
				      IWARP_DDP_EC_UT_VERSION);
	if ((ctrl & IWARP_RDMAP_VER_MASK) >> IWARP_RDMAP_VER_SHIFT !=
	    IWARP_RDMAP_VERSION)
		return refuse(t, IWARP_LAYER_RDMAP, IWARP_RDMAP_ET_OPERATION,
			      IWARP_RDMAP_EC_VERSION);
	if (op >= IWARP_OP_COUNT || op_info[op].tagged != tagged)
		return refuse(t, IWARP_LAYER_RDMAP, IWARP_RDMAP_ET_OPERATION,
			      IWARP_RDMAP_EC_OPCODE);
	return 0;
}

static int fields_check(const struct iwarp_hdr *h, struct iwarp_term_info *t)
{
	if (h->tagged) {
		if (h->pay_len && h->to + h->pay_len - 1 < h->to)
			return refuse(t, IWARP_LAYER_DDP, IWARP_DDP_ET_TAGGED,
				      IWARP_DDP_EC_T_TO_WRAP);
		return 0;
	}
	if (h->qn != (uint32_t)op_info[h->opcode].qn)
		return refuse(t, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
			      IWARP_DDP_EC_UT_INVALID_QN);
	if (h->opcode != IWARP_OP_READ_REQ && h->opcode != IWARP_OP_TERMINATE)
		return 0;
	/* one whole segment, no payload for a READ request */
	if (h->mo)
		return refuse(t, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
			      IWARP_DDP_EC_UT_INVALID_MO);
	if (!h->last || (h->opcode == IWARP_OP_READ_REQ && h->pay_len))
		return refuse(t, IWARP_LAYER_RDMAP, IWARP_RDMAP_ET_OPERATION,
			      IWARP_RDMAP_EC_OPCODE);
	if (h->opcode == IWARP_OP_READ_REQ && h->read_size &&
	    (h->src_to + h->read_size - 1 < h->src_to ||
	     h->sink_to + h->read_size - 1 < h->sink_to))
		return refuse(t, IWARP_LAYER_RDMAP, IWARP_RDMAP_ET_PROTECTION,
			      IWARP_RDMAP_EC_TO_WRAP);
	return 0;
}

/**
 * rdmarw__iwarp_hdr_parse() - decode and check one DDP/RDMAP header
 * @buf: the bytes of the ULPDU, from its MPA length field
 * @len: bytes at @buf (the header may be incomplete)
 * @h: the decoded header (@h->pay_len from the MPA length)
 * @t: the TERMINATE a refusal asks for
 *
 * Checks, in siw_get_hdr()'s order: the DDP version (DDP, tagged or
 * untagged buffer, version), the RDMAP version (RDMAP, remote operation,
 * version), the opcode and that its tagged flag is the opcode's (RDMAP,
 * remote operation, opcode), the MPA length against the header (LLP, MPA,
 * FPDU start), then the queue number (DDP, untagged, invalid QN), a
 * READ request or TERMINATE in one segment (MO: DDP untagged invalid MO;
 * not last or a READ request with payload: RDMAP opcode) and TO wrap
 * (tagged: DDP tagged TO wrap; READ request: RDMAP protection TO wrap).
 *
 * Return: the header's length, -EAGAIN when @len does not hold it yet,
 * -EBADMSG (DDP/RDMAP refusal) or -EPROTO (framing) with @t set, -EINVAL
 * for NULL arguments.
 */
int rdmarw__iwarp_hdr_parse(const void *buf, size_t len, struct iwarp_hdr *h,
			    struct iwarp_term_info *t)
{
	const uint8_t *p = buf;
	unsigned int ulpdu;
	int ret, hl;

	if ((!buf && len) || !h || !t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	if (len < sizeof(struct iwarp_ctrl))
		return -EAGAIN;
	ret = ctrl_check(iwarp_ld16(p + 2), t);
	if (ret)
		return ret;
	hl = op_info[iwarp_ld16(p + 2) & IWARP_RDMAP_OP_MASK].hdr_len;
	ulpdu = iwarp_ld16(p);
	if (ulpdu + IWARP_MPA_HDR_LEN < (unsigned int)hl)
		return refuse(t, IWARP_LAYER_LLP, IWARP_LLP_ET_MPA,
			      IWARP_LLP_EC_FPDU_START);
	if (len < (size_t)hl)
		return -EAGAIN;
	hdr_decode(p, hl, h);
	h->hdr_len = (uint8_t)hl;
	h->pay_len = ulpdu + IWARP_MPA_HDR_LEN - hl;
	ret = fields_check(h, t);
	return ret ? ret : hl;
}

/**
 * rdmarw__iwarp_hdr_decode() - decode a header without checking it
 * @buf: the header's bytes, from its MPA length field
 * @len: bytes at @buf; fields beyond them are left zero
 * @h: the fields
 *
 * For the copy of a failed header a TERMINATE carries.
 *
 * Return: 0, -EINVAL when @len is under the 4-byte control word.
 */
int rdmarw__iwarp_hdr_decode(const void *buf, size_t len, struct iwarp_hdr *h)
{
	if (!buf || !h || len < sizeof(struct iwarp_ctrl))
		return -EINVAL;
	hdr_decode(buf, len, h);
	return 0;
}

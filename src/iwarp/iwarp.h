/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The iWARP wire codec (MPA/DDP/RDMAP): pure functions a TCP transport
 * calls to speak to the kernel's siw.  No sockets, no threads, no heap:
 * every function works on the buffers its caller hands over and refuses
 * what a peer could send with a negative errno.  Sectioned by source file.
 */
#ifndef RDMARW_IWARP_H
#define RDMARW_IWARP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "iwarp/iwarp_wire.h"

/* big-endian loads and stores on byte buffers (no alignment assumed) */
static inline uint16_t iwarp_ld16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t iwarp_ld32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t iwarp_ld64(const uint8_t *p)
{
	return (uint64_t)iwarp_ld32(p) << 32 | iwarp_ld32(p + 4);
}

static inline void iwarp_st16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void iwarp_st32(uint8_t *p, uint32_t v)
{
	iwarp_st16(p, (uint16_t)(v >> 16));
	iwarp_st16(p + 2, (uint16_t)v);
}

static inline void iwarp_st64(uint8_t *p, uint64_t v)
{
	iwarp_st32(p, (uint32_t)(v >> 32));
	iwarp_st32(p + 4, (uint32_t)v);
}

/* What a refusal asks the transport to do (RFC 5040 4.8, siw enum term_*) */
enum iwarp_term_layer {
	IWARP_LAYER_RDMAP = 0,
	IWARP_LAYER_DDP = 1,
	IWARP_LAYER_LLP = 2,
};

/* RDMAP error types and codes */
#define IWARP_RDMAP_ET_CATASTROPHIC 0x0
#define IWARP_RDMAP_ET_PROTECTION 0x1
#define IWARP_RDMAP_ET_OPERATION 0x2
#define IWARP_RDMAP_EC_INVALID_STAG 0x00
#define IWARP_RDMAP_EC_BASE_BOUNDS 0x01
#define IWARP_RDMAP_EC_ACCESS 0x02
#define IWARP_RDMAP_EC_STAG_NOT_ASSOC 0x03
#define IWARP_RDMAP_EC_TO_WRAP 0x04
#define IWARP_RDMAP_EC_VERSION 0x05
#define IWARP_RDMAP_EC_OPCODE 0x06
#define IWARP_RDMAP_EC_CATASTROPHIC_STREAM 0x07
#define IWARP_RDMAP_EC_CATASTROPHIC_GLOBAL 0x08
#define IWARP_RDMAP_EC_CANNOT_INVALIDATE 0x09
#define IWARP_RDMAP_EC_UNSPECIFIED 0xff
/* DDP error types and codes */
#define IWARP_DDP_ET_CATASTROPHIC 0x0
#define IWARP_DDP_ET_TAGGED 0x1
#define IWARP_DDP_ET_UNTAGGED 0x2
#define IWARP_DDP_EC_T_INVALID_STAG 0x00
#define IWARP_DDP_EC_T_BASE_BOUNDS 0x01
#define IWARP_DDP_EC_T_STAG_NOT_ASSOC 0x02
#define IWARP_DDP_EC_T_TO_WRAP 0x03
#define IWARP_DDP_EC_T_VERSION 0x04
#define IWARP_DDP_EC_UT_INVALID_QN 0x01
#define IWARP_DDP_EC_UT_MSN_NOBUF 0x02
#define IWARP_DDP_EC_UT_MSN_RANGE 0x03
#define IWARP_DDP_EC_UT_INVALID_MO 0x04
#define IWARP_DDP_EC_UT_TOO_LONG 0x05
#define IWARP_DDP_EC_UT_VERSION 0x06
/* LLP (MPA) error codes, error type 0 */
#define IWARP_LLP_ET_MPA 0x0
#define IWARP_LLP_EC_STREAM_LOST 0x01
#define IWARP_LLP_EC_CRC 0x02
#define IWARP_LLP_EC_FPDU_START 0x03
#define IWARP_LLP_EC_INVALID_REQ_RESP 0x04
#define IWARP_LLP_EC_LOCAL_CATASTROPHIC 0x05
#define IWARP_LLP_EC_INSUFFICIENT_IRD 0x06
#define IWARP_LLP_EC_NO_MATCHING_RTR 0x07

/**
 * struct iwarp_term_info - what to answer a refusal with
 * @close: true: no TERMINATE can be sent (the stream is gone or cannot be
 *	framed any more), close the connection; the codes are then unset
 * @layer: enum iwarp_term_layer
 * @etype: error type within the layer
 * @ecode: error code within the type
 */
struct iwarp_term_info {
	bool close;
	uint8_t layer;
	uint8_t etype;
	uint8_t ecode;
};

/* ---- mpa.c: connection setup frames ---- */

/* Why an MPA request/reply was refused (also for the caller's log) */
enum iwarp_mpa_why {
	IWARP_MPA_OK = 0,
	IWARP_MPA_BAD_KEY, /* not "MPA ID Req Frame"/"MPA ID Rep Frame" */
	IWARP_MPA_BAD_REV, /* revision other than 1 or 2 */
	IWARP_MPA_MARKERS, /* markers asked: siw refuses them */
	IWARP_MPA_PD_TOO_LONG, /* private data over 512 bytes */
	IWARP_MPA_SHORT_V2, /* enhanced but no room for the IRD/ORD word */
	IWARP_MPA_CUT_SHORT, /* the stream ended inside the frame */
	IWARP_MPA_NOT_ENHANCED, /* we asked v2, the reply is not */
	IWARP_MPA_IRD, /* IRD/ORD the reply gives do not fit ours */
	IWARP_MPA_NO_RTR, /* no RTR type we offered was picked */
};

/**
 * struct iwarp_mpa - a decoded MPA request or reply
 * @reply: the reply key (else the request's)
 * @rev: revision, 1 or 2
 * @crc: the sender wants CRC32c on FPDUs
 * @reject: a reply that refuses the connection
 * @markers: markers asked (never built; refused when parsed)
 * @enhanced: RFC 6581 enhanced setup: the IRD/ORD word leads the
 *	private data (revision 2 only)
 * @gso: siw's private "GSO allowed" flag
 * @ird: inbound READ depth offered (enhanced; 14 bits)
 * @ord: outbound READ depth offered (enhanced; 14 bits)
 * @p2p: peer-to-peer: a ready-to-receive message follows the reply
 * @rtr: IWARP_MPA_V2_RTR_WRITE and/or _READ: which zero-length RTR
 *	message the request offers, or the one the reply picked
 * @pdata: the ULP's private data (rdma_cm's), without the IRD/ORD word;
 *	when parsed it points into the caller's buffer
 * @pd_len: its length
 */
struct iwarp_mpa {
	bool reply;
	uint8_t rev;
	bool crc;
	bool reject;
	bool markers;
	bool enhanced;
	bool gso;
	uint16_t ird;
	uint16_t ord;
	bool p2p;
	uint16_t rtr;
	const void *pdata;
	uint16_t pd_len;
};

int rdmarw__iwarp_mpa_build(const struct iwarp_mpa *m, void *buf, size_t len);
int rdmarw__iwarp_mpa_parse(const void *buf, size_t len, bool eof, bool reply,
			    struct iwarp_mpa *m, enum iwarp_mpa_why *why);
int rdmarw__iwarp_mpa_answer(const struct iwarp_mpa *req, uint16_t max_ird,
			     uint16_t max_ord, struct iwarp_mpa *rep);
int rdmarw__iwarp_mpa_check_reply(const struct iwarp_mpa *req,
				  const struct iwarp_mpa *rep,
				  enum iwarp_mpa_why *why,
				  struct iwarp_term_info *t);
const char *rdmarw__iwarp_mpa_why_str(enum iwarp_mpa_why why);

/* ---- iwarp_fpdu.c: FPDU framing and CRC32c ---- */

uint32_t rdmarw__iwarp_crc32c(uint32_t state, const void *buf, size_t len);

/* Most iovecs rdmarw__iwarp_fpdu_tx() adds around the payload's */
#define IWARP_TX_IOV_EXTRA 2

/**
 * struct iwarp_tx_trailer - the bytes a sender adds after the payload
 * @bytes: pad (0-3 zero bytes) then the CRC (when negotiated)
 */
struct iwarp_tx_trailer {
	uint8_t bytes[8];
};

int rdmarw__iwarp_fpdu_tx(void *hdr, size_t hdr_len, const struct iovec *pay,
			  int npay, bool crc, struct iwarp_tx_trailer *trl,
			  struct iovec *iov, int max_iov);

/* ---- iwarp_frame.c: DDP/RDMAP headers ---- */

/* RDMAP opcodes (RFC 5040 4.2) */
enum iwarp_opcode {
	IWARP_OP_WRITE = 0x0,
	IWARP_OP_READ_REQ = 0x1,
	IWARP_OP_READ_RESP = 0x2,
	IWARP_OP_SEND = 0x3,
	IWARP_OP_SEND_INV = 0x4,
	IWARP_OP_SEND_SE = 0x5,
	IWARP_OP_SEND_SE_INV = 0x6,
	IWARP_OP_TERMINATE = 0x7,
	IWARP_OP_COUNT
};

/* untagged queue numbers (RFC 5040 5.1) */
#define IWARP_QN_SEND 0
#define IWARP_QN_READ_REQ 1
#define IWARP_QN_TERMINATE 2
#define IWARP_QN_COUNT 3

/**
 * struct iwarp_hdr - a decoded (or to be built) DDP/RDMAP header
 * @opcode: enum iwarp_opcode
 * @tagged: DDP tagged (WRITE, READ response)
 * @last: DDP last flag (the message's last segment)
 * @hdr_len: bytes of header on the wire, MPA length field included
 * @pay_len: payload bytes that follow the header
 * @stag: tagged: the sink STag; SEND_INV: the STag to invalidate
 * @to: tagged: the sink tagged offset
 * @qn: untagged: queue number
 * @msn: untagged: message sequence number
 * @mo: untagged: message offset
 * @sink_stag: READ request: the sink STag (the requester's)
 * @sink_to: READ request: the sink TO
 * @read_size: READ request: bytes to read
 * @src_stag: READ request: the source STag (the responder's)
 * @src_to: READ request: the source TO
 * @term: TERMINATE: layer, type and code (close unused)
 * @term_m: TERMINATE: the DDP segment length is valid
 * @term_d: TERMINATE: the failed DDP header is copied
 * @term_r: TERMINATE: the failed RDMA (READ request) header is copied
 */
struct iwarp_hdr {
	uint8_t opcode;
	bool tagged;
	bool last;
	uint8_t hdr_len;
	uint32_t pay_len;
	uint32_t stag;
	uint64_t to;
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t read_size;
	uint32_t src_stag;
	uint64_t src_to;
	struct iwarp_term_info term;
	bool term_m;
	bool term_d;
	bool term_r;
};

int rdmarw__iwarp_hdr_len(unsigned int opcode);
int rdmarw__iwarp_hdr_build(const struct iwarp_hdr *h, void *buf, size_t len);
int rdmarw__iwarp_hdr_parse(const void *buf, size_t len, struct iwarp_hdr *h,
			    struct iwarp_term_info *t);
int rdmarw__iwarp_hdr_decode(const void *buf, size_t len, struct iwarp_hdr *h);

/* ---- iwarp_rx.c: the receive-side FPDU parser ---- */

/**
 * struct iwarp_rx - the receive state of one connection (no heap)
 * @crc: CRC32c negotiated
 * @max_ulpdu: the largest ULPDU length accepted
 * @state: where in the FPDU the stream is
 * @have: header or trailer bytes gathered so far
 * @need: header or trailer bytes needed
 * @ulpdu_len: the FPDU's ULPDU length
 * @pay_left: payload bytes still to come
 * @pad: pad bytes after the payload
 * @crc_state: the running CRC32c
 * @msn: the MSN each untagged queue expects next
 * @mo: the MO each untagged queue expects next (0 between messages)
 * @hdr: the header bytes
 * @trl: the trailer bytes
 * @cur: the decoded header of the current FPDU
 */
struct iwarp_rx {
	bool crc;
	uint32_t max_ulpdu;
	uint8_t state;
	uint8_t have;
	uint8_t need;
	uint32_t ulpdu_len;
	uint32_t pay_left;
	uint8_t pad;
	uint32_t crc_state;
	uint32_t msn[IWARP_QN_COUNT];
	uint32_t mo[IWARP_QN_COUNT];
	uint8_t hdr[IWARP_HDR_MAX];
	uint8_t trl[8];
	struct iwarp_hdr cur;
};

/* what rdmarw__iwarp_rx_feed() returns (or a negative errno) */
enum iwarp_rx_ev {
	IWARP_RX_MORE = 0, /* all given bytes used, feed more */
	IWARP_RX_HDR, /* a checked header: rx->cur */
	IWARP_RX_PAY, /* payload bytes at *data, *n of them */
	IWARP_RX_END, /* the FPDU is whole and its CRC right */
};

int rdmarw__iwarp_rx_init(struct iwarp_rx *rx, bool crc, uint32_t max_ulpdu);
int rdmarw__iwarp_rx_feed(struct iwarp_rx *rx, const void *buf, size_t len,
			  size_t *used, const void **data, size_t *n,
			  struct iwarp_term_info *t);
int rdmarw__iwarp_rx_placed(struct iwarp_rx *rx, const void *data, size_t n,
			    struct iwarp_term_info *t);
size_t rdmarw__iwarp_rx_pay_left(const struct iwarp_rx *rx);
int rdmarw__iwarp_rx_eof(const struct iwarp_rx *rx, struct iwarp_term_info *t);

/* ---- iwarp_term.c: TERMINATE ---- */

int rdmarw__iwarp_term_build(const struct iwarp_term_info *ti,
			     const void *bad_hdr, size_t bad_len, uint32_t msn,
			     void *buf, size_t len);
int rdmarw__iwarp_term_parse(const struct iwarp_hdr *h, const void *pay,
			     size_t len, struct iwarp_hdr *bad);

#endif /* RDMARW_IWARP_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iWARP on-wire layouts: MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and
 * RDMAP (RFC 5040), as the kernel's siw puts them on the wire
 * (drivers/infiniband/sw/siw/iwarp.h).  Every multi-byte field is big
 * endian except the MPA CRC (the CRC32c value in little-endian byte order,
 * as iSCSI and siw send it).  The structures describe bytes only: the codec
 * never casts a received buffer to them, it loads fields byte by byte.
 */
#ifndef RDMARW_IWARP_WIRE_H
#define RDMARW_IWARP_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* MPA connection setup frames (RFC 5044 7.1, RFC 6581 5) */
#define IWARP_MPA_KEY_LEN 16
#define IWARP_MPA_KEY_REQ "MPA ID Req Frame"
#define IWARP_MPA_KEY_REP "MPA ID Rep Frame"
#define IWARP_MPA_REV1 1
#define IWARP_MPA_REV2 2
/* RFC 5044 7.1: at most 512 bytes of private data (the v2 word counts) */
#define IWARP_MPA_PD_MAX 512

/* the flags word (host order after loading) */
#define IWARP_MPA_F_MARKERS 0x8000
#define IWARP_MPA_F_CRC 0x4000
#define IWARP_MPA_F_REJECT 0x2000
#define IWARP_MPA_F_ENHANCED 0x1000
#define IWARP_MPA_F_GSO 0x0800 /* siw's private "GSO allowed" bit */
#define IWARP_MPA_F_RES 0x0700
#define IWARP_MPA_REV_MASK 0x00ff

/* RFC 6581's IRD/ORD words, as siw reads them */
#define IWARP_MPA_V2_P2P 0x8000 /* IRD word: peer-to-peer */
#define IWARP_MPA_V2_ZLEN 0x4000 /* IRD word: zero-length RTR (unused) */
#define IWARP_MPA_V2_RTR_WRITE 0x8000 /* ORD word: zero-length WRITE */
#define IWARP_MPA_V2_RTR_READ 0x4000 /* ORD word: zero-length READ */
#define IWARP_MPA_V2_MASK 0x3fff

struct iwarp_mpa_rr {
	uint8_t key[IWARP_MPA_KEY_LEN];
	uint16_t bits;
	uint16_t pd_len;
} __attribute__((packed));

struct iwarp_mpa_v2 {
	uint16_t ird;
	uint16_t ord;
} __attribute__((packed));

_Static_assert(sizeof(struct iwarp_mpa_rr) == 20, "MPA req/rep header");
_Static_assert(offsetof(struct iwarp_mpa_rr, bits) == 16, "MPA bits");
_Static_assert(offsetof(struct iwarp_mpa_rr, pd_len) == 18, "MPA pd_len");
_Static_assert(sizeof(struct iwarp_mpa_v2) == 4, "MPA v2 word");

/* FPDU: 2 bytes of ULPDU length, the ULPDU, pad to 4, 4 bytes of CRC */
#define IWARP_MPA_HDR_LEN 2
#define IWARP_MPA_CRC_LEN 4

/* the DDP/RDMAP control word (host order after loading) */
#define IWARP_DDP_F_TAGGED 0x8000
#define IWARP_DDP_F_LAST 0x4000
#define IWARP_DDP_RES_MASK 0x3c00
#define IWARP_DDP_VER_SHIFT 8
#define IWARP_DDP_VER_MASK 0x0300
#define IWARP_RDMAP_VER_SHIFT 6
#define IWARP_RDMAP_VER_MASK 0x00c0
#define IWARP_RDMAP_RES_MASK 0x0030
#define IWARP_RDMAP_OP_MASK 0x000f
#define IWARP_DDP_VERSION 1
#define IWARP_RDMAP_VERSION 1

struct iwarp_ctrl {
	uint16_t mpa_len;
	uint16_t ctrl;
} __attribute__((packed));

struct iwarp_tagged {
	struct iwarp_ctrl c;
	uint32_t stag;
	uint64_t to;
} __attribute__((packed));

struct iwarp_untagged {
	struct iwarp_ctrl c;
	uint32_t rsvd; /* SEND_INV: the STag to invalidate */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
} __attribute__((packed));

struct iwarp_rreq {
	struct iwarp_untagged u;
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t read_size;
	uint32_t src_stag;
	uint64_t src_to;
} __attribute__((packed));

struct iwarp_term {
	struct iwarp_untagged u;
	uint32_t term_ctrl; /* layer:4 etype:4 ecode:8 M D R rsvd:13 */
} __attribute__((packed));

_Static_assert(sizeof(struct iwarp_ctrl) == 4, "iWARP control");
_Static_assert(sizeof(struct iwarp_tagged) == 16, "tagged header");
_Static_assert(offsetof(struct iwarp_tagged, to) == 8, "tagged TO");
_Static_assert(sizeof(struct iwarp_untagged) == 20, "untagged header");
_Static_assert(offsetof(struct iwarp_untagged, qn) == 8, "untagged QN");
_Static_assert(offsetof(struct iwarp_untagged, mo) == 16, "untagged MO");
_Static_assert(sizeof(struct iwarp_rreq) == 48, "READ request header");
_Static_assert(offsetof(struct iwarp_rreq, read_size) == 32, "RDMARDSZ");
_Static_assert(offsetof(struct iwarp_rreq, src_to) == 40, "SrcTO");
_Static_assert(sizeof(struct iwarp_term) == 24, "TERMINATE header");

#define IWARP_HDR_MAX ((int)sizeof(struct iwarp_rreq))

/* TERMINATE control word */
#define IWARP_TERM_LAYER_SHIFT 28
#define IWARP_TERM_ETYPE_SHIFT 24
#define IWARP_TERM_ECODE_SHIFT 16
#define IWARP_TERM_F_M 0x00008000u
#define IWARP_TERM_F_D 0x00004000u
#define IWARP_TERM_F_R 0x00002000u
/* what follows it (RFC 5040 4.8): DDP segment length, DDP header, RDMA
 * header of the segment that failed */
#define IWARP_TERM_DDP_TAGGED_LEN (2 + 14)
#define IWARP_TERM_DDP_UNTAGGED_LEN (2 + 18)
#define IWARP_TERM_RDMA_LEN 28

#endif /* RDMARW_IWARP_WIRE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DH-HMAC-CHAP in-band authentication messages (NVMe Base 2.0, section
 * 8.13; TP 8006), the payloads of the fabrics AUTH_Send and AUTH_Receive
 * commands, with the kernel's names (include/linux/nvme.h).
 *
 * The structures are the fixed headers of the messages.  Code that reads a
 * peer's message copies the header out of the received bytes by value
 * (memcpy into one of these) after checking the length, and reads the
 * variable part (challenge, response, DH value) by offset; it never casts
 * a pointer into the peer's buffer.  Multi-byte fields are little-endian
 * on the wire: le16toh()/le32toh() on reading, htole16()/htole32() on
 * writing.  Sizes and offsets are checked at the end of this file against
 * the kernel's layout.
 */
#ifndef RDMARW_NVME_AUTH_WIRE_H
#define RDMARW_NVME_AUTH_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* SECP of AUTH_Send/AUTH_Receive; SPSP0 and SPSP1 are both 01h. */
#define NVME_AUTH_DHCHAP_PROTOCOL_IDENTIFIER 0xe9
#define NVME_AUTH_DHCHAP_SPSP 0x01

/* Message classes (auth_type). */
enum {
	NVME_AUTH_COMMON_MESSAGES = 0x00,
	NVME_AUTH_DHCHAP_MESSAGES = 0x01,
};

/* Messages (auth_id). */
enum {
	NVME_AUTH_DHCHAP_MESSAGE_NEGOTIATE = 0x00,
	NVME_AUTH_DHCHAP_MESSAGE_CHALLENGE = 0x01,
	NVME_AUTH_DHCHAP_MESSAGE_REPLY = 0x02,
	NVME_AUTH_DHCHAP_MESSAGE_SUCCESS1 = 0x03,
	NVME_AUTH_DHCHAP_MESSAGE_SUCCESS2 = 0x04,
	NVME_AUTH_DHCHAP_MESSAGE_FAILURE2 = 0xf0,
	NVME_AUTH_DHCHAP_MESSAGE_FAILURE1 = 0xf1,
};

/* Protocol descriptor: the one authentication protocol, DH-HMAC-CHAP. */
enum {
	NVME_AUTH_DHCHAP_AUTH_ID = 0x01,
};

/* Hash functions (HashID). */
enum {
	NVME_AUTH_HASH_SHA256 = 0x01,
	NVME_AUTH_HASH_SHA384 = 0x02,
	NVME_AUTH_HASH_SHA512 = 0x03,
	NVME_AUTH_HASH_INVALID = 0xff,
};

/* Diffie-Hellman groups (DHGID). */
enum {
	NVME_AUTH_DHGROUP_NULL = 0x00,
	NVME_AUTH_DHGROUP_2048 = 0x01,
	NVME_AUTH_DHGROUP_3072 = 0x02,
	NVME_AUTH_DHGROUP_4096 = 0x03,
	NVME_AUTH_DHGROUP_6144 = 0x04,
	NVME_AUTH_DHGROUP_8192 = 0x05,
	NVME_AUTH_DHGROUP_INVALID = 0xff,
};

/* Secure channel concatenation (SC_C): only "none" here (no TLS). */
enum {
	NVME_AUTH_SECP_NOSC = 0x00,
};

/* The id list of a descriptor: hashes from 0, DH groups from 30. */
#define NVME_AUTH_DHCHAP_MAX_HASH_IDS 30
#define NVME_AUTH_DHCHAP_MAX_DH_IDS 30

/* Failure messages: the reason code and its explanation (rescode_exp). */
enum {
	NVME_AUTH_DHCHAP_FAILURE_REASON_FAILED = 0x01,
};

enum {
	NVME_AUTH_DHCHAP_FAILURE_FAILED = 0x01,
	NVME_AUTH_DHCHAP_FAILURE_NOT_USABLE = 0x02,
	NVME_AUTH_DHCHAP_FAILURE_CONCAT_MISMATCH = 0x03,
	NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE = 0x04,
	NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE = 0x05,
	NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD = 0x06,
	NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE = 0x07,
};

struct nvmf_auth_dhchap_protocol_descriptor {
	uint8_t authid;
	uint8_t rsvd;
	uint8_t halen;
	uint8_t dhlen;
	uint8_t idlist[60];
};

/* Negotiate (host to controller): napd descriptors follow the header. */
struct nvmf_auth_dhchap_negotiate_data {
	uint8_t auth_type;
	uint8_t auth_id;
	uint16_t rsvd;
	uint16_t t_id;
	uint8_t sc_c;
	uint8_t napd;
};

/* Challenge (controller to host): hl bytes of C1, then dhvlen of DH. */
struct nvmf_auth_dhchap_challenge_data {
	uint8_t auth_type;
	uint8_t auth_id;
	uint16_t rsvd1;
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd2;
	uint8_t hashid;
	uint8_t dhgid;
	uint16_t dhvlen;
	uint32_t seqnum;
};

/* Reply (host to controller): hl bytes of response, hl of C2, then DH. */
struct nvmf_auth_dhchap_reply_data {
	uint8_t auth_type;
	uint8_t auth_id;
	uint16_t rsvd1;
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd2;
	uint8_t cvalid;
	uint8_t rsvd3;
	uint16_t dhvlen;
	uint32_t seqnum;
};

/* Success1 (controller to host): hl bytes of response when rvalid. */
struct nvmf_auth_dhchap_success1_data {
	uint8_t auth_type;
	uint8_t auth_id;
	uint16_t rsvd1;
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd2;
	uint8_t rvalid;
	uint8_t rsvd3[7];
};

/* Success2 (host to controller, bidirectional only). */
struct nvmf_auth_dhchap_success2_data {
	uint8_t auth_type;
	uint8_t auth_id;
	uint16_t rsvd1;
	uint16_t t_id;
	uint8_t rsvd2[10];
};

/* Failure1 (controller to host) and Failure2 (host to controller). */
struct nvmf_auth_dhchap_failure_data {
	uint8_t auth_type;
	uint8_t auth_id;
	uint16_t rsvd1;
	uint16_t t_id;
	uint8_t rescode;
	uint8_t rescode_exp;
};

/* Layouts as the kernel's (include/linux/nvme.h, _nvme_check_size()). */
_Static_assert(sizeof(struct nvmf_auth_dhchap_protocol_descriptor) == 64,
	       "descriptor size");
_Static_assert(offsetof(struct nvmf_auth_dhchap_protocol_descriptor, idlist) ==
		       4,
	       "descriptor idlist");
_Static_assert(sizeof(struct nvmf_auth_dhchap_negotiate_data) == 8,
	       "negotiate size");
_Static_assert(offsetof(struct nvmf_auth_dhchap_negotiate_data, t_id) == 4,
	       "negotiate t_id");
_Static_assert(offsetof(struct nvmf_auth_dhchap_negotiate_data, napd) == 7,
	       "negotiate napd");
_Static_assert(sizeof(struct nvmf_auth_dhchap_challenge_data) == 16,
	       "challenge size");
_Static_assert(offsetof(struct nvmf_auth_dhchap_challenge_data, hl) == 6,
	       "challenge hl");
_Static_assert(offsetof(struct nvmf_auth_dhchap_challenge_data, hashid) == 8,
	       "challenge hashid");
_Static_assert(offsetof(struct nvmf_auth_dhchap_challenge_data, dhgid) == 9,
	       "challenge dhgid");
_Static_assert(offsetof(struct nvmf_auth_dhchap_challenge_data, dhvlen) == 10,
	       "challenge dhvlen");
_Static_assert(offsetof(struct nvmf_auth_dhchap_challenge_data, seqnum) == 12,
	       "challenge seqnum");
_Static_assert(sizeof(struct nvmf_auth_dhchap_reply_data) == 16, "reply size");
_Static_assert(offsetof(struct nvmf_auth_dhchap_reply_data, hl) == 6,
	       "reply hl");
_Static_assert(offsetof(struct nvmf_auth_dhchap_reply_data, cvalid) == 8,
	       "reply cvalid");
_Static_assert(offsetof(struct nvmf_auth_dhchap_reply_data, dhvlen) == 10,
	       "reply dhvlen");
_Static_assert(offsetof(struct nvmf_auth_dhchap_reply_data, seqnum) == 12,
	       "reply seqnum");
_Static_assert(sizeof(struct nvmf_auth_dhchap_success1_data) == 16,
	       "success1 size");
_Static_assert(offsetof(struct nvmf_auth_dhchap_success1_data, hl) == 6,
	       "success1 hl");
_Static_assert(offsetof(struct nvmf_auth_dhchap_success1_data, rvalid) == 8,
	       "success1 rvalid");
_Static_assert(sizeof(struct nvmf_auth_dhchap_success2_data) == 16,
	       "success2 size");
_Static_assert(sizeof(struct nvmf_auth_dhchap_failure_data) == 8,
	       "failure size");
_Static_assert(offsetof(struct nvmf_auth_dhchap_failure_data, rescode) == 6,
	       "failure rescode");
_Static_assert(offsetof(struct nvmf_auth_dhchap_failure_data, rescode_exp) == 7,
	       "failure rescode_exp");

#endif /* RDMARW_NVME_AUTH_WIRE_H */

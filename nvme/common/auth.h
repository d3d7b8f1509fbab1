/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DH-HMAC-CHAP in-band authentication (NVMe Base 2.0 section 8.13, TP 8006)
 * as the Linux kernel computes it (drivers/nvme/common/auth.c,
 * drivers/nvme/host/auth.c, drivers/nvme/target/{auth,fabrics-cmd-auth}.c),
 * on OpenSSL's libcrypto.  Shared by the target and the in-process host:
 *
 * - keys: the "DHHC-1:<hh>:<base64(secret || crc32)>:" strings that
 *   `nvme gen-dhchap-key` writes, and the transformed key;
 * - primitives: the response values, the Diffie-Hellman exchange on the
 *   FFDHE groups, the augmented challenge;
 * - two protocol engines, transport-free: struct nvme_auth_host runs the
 *   host's side (negotiate, reply, success2 or failure2), struct
 *   nvme_auth_ctrl the controller's (challenge, success1 or failure1), each
 *   fed the peer's AUTH payloads as bytes and writing its own into a
 *   caller's buffer.  docs/nvme-auth.md says how a transport wires them.
 *
 * Every function returns a negative errno for bad arguments and touches no
 * memory beyond the lengths it is given.  Nothing allocates on the heap
 * except libcrypto's own objects.  The engines are not thread-safe: one
 * engine per queue, driven by one thread at a time.
 */
#ifndef RDMARW_NVME_AUTH_H
#define RDMARW_NVME_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth_wire.h"

#define NVME_AUTH_MAX_DIGEST_SIZE 64
/* The largest DH value: ffdhe8192's 8192-bit prime. */
#define NVME_AUTH_MAX_DH_SIZE 1024
/* The longest NQN without its NUL (NVMe-oF 1.1). */
#define NVME_AUTH_NQN_MAX 223
/* The longest message either engine writes: a reply with ffdhe8192. */
#define NVME_AUTH_MAX_MSG                             \
	(sizeof(struct nvmf_auth_dhchap_reply_data) + \
	 2 * NVME_AUTH_MAX_DIGEST_SIZE + NVME_AUTH_MAX_DH_SIZE)
/* The AUTH_Receive allocation length the kernel's host asks for. */
#define NVME_AUTH_BUF_SIZE 4096

/**
 * struct nvme_dhchap_key - a DH-HMAC-CHAP secret, or a transformed one
 * @hash: the transformation the key asks for: 0 (none) or an
 *	NVME_AUTH_HASH_* (the <hh> of its DHHC-1 string)
 * @len: bytes of @key in use: 32, 48 or 64
 * @key: the secret
 */
struct nvme_dhchap_key {
	uint8_t hash;
	uint8_t len;
	uint8_t key[NVME_AUTH_MAX_DIGEST_SIZE];
};

int nvme_auth_parse_key(const char *secret, struct nvme_dhchap_key *key);
int nvme_auth_transform_key(const struct nvme_dhchap_key *key, const char *nqn,
			    struct nvme_dhchap_key *out);
void nvme_auth_wipe(void *p, size_t len);

size_t nvme_auth_hmac_hash_len(uint8_t hmac_id);
const char *nvme_auth_hmac_name(uint8_t hmac_id);
uint8_t nvme_auth_hmac_id(const char *hmac_name);
const char *nvme_auth_dhgroup_name(uint8_t dhgroup_id);
uint8_t nvme_auth_dhgroup_id(const char *dhgroup_name);
size_t nvme_auth_dhgroup_len(uint8_t dhgroup_id);
uint32_t nvme_auth_get_seqnum(void);

int nvme_auth_hash(uint8_t hmac_id, const void *data, size_t len, uint8_t *out);
int nvme_auth_hmac(uint8_t hmac_id, const uint8_t *key, size_t key_len,
		   const void *data, size_t len, uint8_t *out);
int nvme_auth_augmented_challenge(uint8_t hmac_id, const uint8_t *skey,
				  size_t skey_len, const uint8_t *challenge,
				  uint8_t *aug, size_t hlen);

/**
 * struct nvme_auth_resp_args - what a DH-HMAC-CHAP response covers
 * @hmac_id: the hash of the transaction (NVME_AUTH_HASH_*)
 * @key: the transformed key of the side that answers
 * @challenge: the challenge as hashed (C1 or C2, or its augmented form
 *	with a DH group): nvme_auth_hmac_hash_len(@hmac_id) bytes
 * @seqnum: S1 (host response) or S2 (controller response)
 * @tid: the transaction identifier
 * @hostnqn: the host NQN
 * @subsysnqn: the subsystem NQN
 */
struct nvme_auth_resp_args {
	uint8_t hmac_id;
	const struct nvme_dhchap_key *key;
	const uint8_t *challenge;
	uint32_t seqnum;
	uint16_t tid;
	const char *hostnqn;
	const char *subsysnqn;
};

int nvme_auth_host_response(const struct nvme_auth_resp_args *a, uint8_t *out);
int nvme_auth_ctrl_response(const struct nvme_auth_resp_args *a, uint8_t *out);

struct evp_pkey_st;

/**
 * struct nvme_auth_dh - an ephemeral Diffie-Hellman key pair
 * @dhgid: its group (NVME_AUTH_DHGROUP_*, never NULL)
 * @pkey: libcrypto's key; NULL when none
 */
struct nvme_auth_dh {
	uint8_t dhgid;
	struct evp_pkey_st *pkey;
};

int nvme_auth_dh_generate(struct nvme_auth_dh *dh, uint8_t dhgid);
int nvme_auth_dh_public(const struct nvme_auth_dh *dh, uint8_t *out,
			size_t len);
int nvme_auth_dh_shared(const struct nvme_auth_dh *dh, const uint8_t *peer,
			size_t peer_len, uint8_t *out, size_t len);
void nvme_auth_dh_free(struct nvme_auth_dh *dh);

#endif /* RDMARW_NVME_AUTH_H */

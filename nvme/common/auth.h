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

/* The outcome of an engine's transaction. */
enum nvme_auth_status {
	NVME_AUTH_IN_PROGRESS = 0,
	NVME_AUTH_SUCCESS = 1,
	NVME_AUTH_FAILED = 2,
};

/**
 * struct nvme_auth_params - what an engine is set up with
 * @hostnqn: the host NQN (the Connect's)
 * @subsysnqn: the subsystem NQN (the Connect's)
 * @host_secret: the host's DHHC-1 key (required)
 * @ctrl_secret: the controller's DHHC-1 key: the host asks the controller
 *	to authenticate itself with it (bidirectional); the controller
 *	answers with it when asked.  NULL: unidirectional only.
 * @hash_id: controller only: the hash it prefers (NVME_AUTH_HASH_*, 0 for
 *	SHA-256), as the kernel target's dhchap_hash
 * @dhgroup_id: controller only: the DH group it prefers
 *	(NVME_AUTH_DHGROUP_*; 0 is the NULL group), as dhchap_dhgroup
 * @transaction: host only: the T_ID of its first transaction (each later
 *	nvme_auth_host_negotiate() takes the next)
 */
struct nvme_auth_params {
	const char *hostnqn;
	const char *subsysnqn;
	const char *host_secret;
	const char *ctrl_secret;
	uint8_t hash_id;
	uint8_t dhgroup_id;
	uint16_t transaction;
};

/**
 * struct nvme_auth_host - the host's side of DH-HMAC-CHAP on one queue
 *
 * Fields are private to auth_host.c; read the outcome with
 * nvme_auth_host_status().
 */
struct nvme_auth_host {
	char hostnqn[NVME_AUTH_NQN_MAX + 1];
	char subsysnqn[NVME_AUTH_NQN_MAX + 1];
	struct nvme_dhchap_key host_key;
	struct nvme_dhchap_key ctrl_key;
	bool bidirectional;
	uint16_t next_tid;
	uint8_t step;
	uint8_t status;
	uint8_t reason;
	uint16_t tid;
	uint8_t hash_id;
	uint8_t hl;
	uint8_t dhgid;
	uint32_t s1;
	uint32_t s2;
	uint8_t c1[NVME_AUTH_MAX_DIGEST_SIZE];
	uint8_t c2[NVME_AUTH_MAX_DIGEST_SIZE];
	size_t skey_len;
	uint8_t skey[NVME_AUTH_MAX_DH_SIZE];
};

int nvme_auth_host_init(struct nvme_auth_host *h,
			const struct nvme_auth_params *p);
ssize_t nvme_auth_host_negotiate(struct nvme_auth_host *h, void *out,
				 size_t size);
ssize_t nvme_auth_host_recv(struct nvme_auth_host *h, const void *msg,
			    size_t len, void *out, size_t size);
enum nvme_auth_status nvme_auth_host_status(const struct nvme_auth_host *h,
					    uint8_t *reason);
void nvme_auth_host_clear(struct nvme_auth_host *h);

/**
 * struct nvme_auth_ctrl - the controller's side of DH-HMAC-CHAP on a queue
 *
 * Fields are private to auth_ctrl.c; read the outcome with
 * nvme_auth_ctrl_status() and nvme_auth_ctrl_authenticated().
 */
struct nvme_auth_ctrl {
	char hostnqn[NVME_AUTH_NQN_MAX + 1];
	char subsysnqn[NVME_AUTH_NQN_MAX + 1];
	struct nvme_dhchap_key host_key;
	struct nvme_dhchap_key ctrl_key;
	bool has_ctrl_key;
	uint8_t conf_hash;
	uint8_t conf_dhgid;
	uint8_t step;
	uint8_t status;
	uint8_t reason;
	bool authenticated;
	bool bidirectional;
	uint16_t tid;
	uint8_t hash_id;
	uint8_t hl;
	uint8_t dhgid;
	uint32_t s1;
	uint32_t s2;
	uint8_t c1[NVME_AUTH_MAX_DIGEST_SIZE];
	uint8_t c2[NVME_AUTH_MAX_DIGEST_SIZE];
	struct nvme_auth_dh dh;
	size_t skey_len;
	uint8_t skey[NVME_AUTH_MAX_DH_SIZE];
};

int nvme_auth_ctrl_init(struct nvme_auth_ctrl *c,
			const struct nvme_auth_params *p);
int nvme_auth_ctrl_send(struct nvme_auth_ctrl *c, const void *msg, size_t tl);
ssize_t nvme_auth_ctrl_receive(struct nvme_auth_ctrl *c, void *out, size_t al);
enum nvme_auth_status nvme_auth_ctrl_status(const struct nvme_auth_ctrl *c,
					    uint8_t *reason);
bool nvme_auth_ctrl_authenticated(const struct nvme_auth_ctrl *c);
bool nvme_auth_ctrl_failure_due(const struct nvme_auth_ctrl *c);
void nvme_auth_ctrl_clear(struct nvme_auth_ctrl *c);

#endif /* RDMARW_NVME_AUTH_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The values DH-HMAC-CHAP exchanges, computed as the kernel computes them:
 * the host's and the controller's responses (nvme_auth_dhchap_setup_host_
 * response()/_ctrl_response() in drivers/nvme/host/auth.c and
 * nvmet_auth_host_hash()/nvmet_auth_ctrl_hash() in the target) and the
 * augmented challenge of a transaction with a DH group
 * (nvme_auth_augmented_challenge()).
 */
#include "auth_int.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

/**
 * nvme_auth_augmented_challenge() - the challenge hashed with a session key
 * @hmac_id: the hash of the transaction (NVME_AUTH_HASH_*)
 * @skey: the Diffie-Hellman shared secret
 * @skey_len: its length (the group's nvme_auth_dhgroup_len())
 * @challenge: C1 or C2, @hlen bytes
 * @aug: @hlen bytes for the result (may not overlap @challenge)
 * @hlen: nvme_auth_hmac_hash_len(@hmac_id)
 *
 * HMAC-<hash>(key = <hash>(skey), challenge), as the kernel's.
 *
 * Return: 0; -EINVAL for an unknown hash, a length that is not the hash's
 * or a missing buffer; -ENOMEM or -EIO when libcrypto fails.
 */
int nvme_auth_augmented_challenge(uint8_t hmac_id, const uint8_t *skey,
				  size_t skey_len, const uint8_t *challenge,
				  uint8_t *aug, size_t hlen)
{
	uint8_t hashed[NVME_AUTH_MAX_DIGEST_SIZE];
	int ret;

	if (!hlen || hlen != nvme_auth_hmac_hash_len(hmac_id) || !skey ||
	    !skey_len || !challenge || !aug)
		return -EINVAL;
	ret = nvme_auth_hash(hmac_id, skey, skey_len, hashed);
	if (!ret)
		ret = nvme_auth_hmac(hmac_id, hashed, hlen, challenge, hlen,
				     aug);
	nvme_auth_wipe(hashed, sizeof(hashed));
	return ret;
}

/*
 * HMAC(key, challenge || le32 seqnum || le16 tid || 00h (SC_C) || role ||
 * first NQN || 00h || second NQN).  The kernel hashes the same bytes.
 */
static int chap_response(const struct nvme_auth_resp_args *a, const char *role,
			 const char *nqn1, const char *nqn2, uint8_t *out)
{
	size_t hl = nvme_auth_hmac_hash_len(a->hmac_id);
	size_t l1 = strlen(nqn1), l2 = strlen(nqn2), role_len = strlen(role);
	uint8_t msg[NVME_AUTH_MAX_DIGEST_SIZE + 7 + 10 + 2 * NVME_AUTH_NQN_MAX +
		    1];
	uint32_t seq = htole32(a->seqnum);
	uint16_t tid = htole16(a->tid);
	size_t n = 0;
	int ret;

	memcpy(msg, a->challenge, hl);
	n += hl;
	memcpy(msg + n, &seq, 4);
	n += 4;
	memcpy(msg + n, &tid, 2);
	n += 2;
	msg[n++] = 0;
	memcpy(msg + n, role, role_len);
	n += role_len;
	memcpy(msg + n, nqn1, l1);
	n += l1;
	msg[n++] = 0;
	memcpy(msg + n, nqn2, l2);
	n += l2;
	ret = nvme_auth_hmac(a->hmac_id, a->key->key, a->key->len, msg, n, out);
	nvme_auth_wipe(msg, hl);
	return ret;
}

static int resp_args_valid(const struct nvme_auth_resp_args *a,
			   const uint8_t *out)
{
	if (!a || !out || !a->key || !a->challenge ||
	    !nvme_auth_hmac_hash_len(a->hmac_id))
		return -EINVAL;
	if (a->key->len != 32 && a->key->len != 48 && a->key->len != 64)
		return -EINVAL;
	if (rdmarw__auth_copy_nqn(NULL, a->hostnqn) ||
	    rdmarw__auth_copy_nqn(NULL, a->subsysnqn))
		return -EINVAL;
	return 0;
}

/**
 * nvme_auth_host_response() - the host's response to the challenge C1
 * @a: the hash, the host's transformed key, C1 (augmented with a DH
 *	group), S1, the transaction id and the two NQNs
 * @out: nvme_auth_hmac_hash_len(@a->hmac_id) bytes for the response
 *
 * The value the host sends in its Reply and the controller recomputes:
 * HMAC(key, C1 || S1 || T_ID || 00h || "HostHost" || host NQN || 00h ||
 * subsystem NQN).
 *
 * Return: 0; -EINVAL for a missing or malformed argument (NQNs of 1-223
 * bytes); -ENOMEM or -EIO when libcrypto fails.
 */
int nvme_auth_host_response(const struct nvme_auth_resp_args *a, uint8_t *out)
{
	int ret = resp_args_valid(a, out);

	if (ret)
		return ret;
	return chap_response(a, "HostHost", a->hostnqn, a->subsysnqn, out);
}

/**
 * nvme_auth_ctrl_response() - the controller's response to the challenge C2
 * @a: the hash, the controller's transformed key, C2 (augmented with a DH
 *	group), S2, the transaction id and the two NQNs
 * @out: nvme_auth_hmac_hash_len(@a->hmac_id) bytes for the response
 *
 * The value the controller sends in Success1 when the host asked it to
 * authenticate itself: HMAC(key, C2 || S2 || T_ID || 00h || "Controller" ||
 * subsystem NQN || 00h || host NQN).
 *
 * Return: as nvme_auth_host_response().
 */
int nvme_auth_ctrl_response(const struct nvme_auth_resp_args *a, uint8_t *out)
{
	int ret = resp_args_valid(a, out);

	if (ret)
		return ret;
	return chap_response(a, "Controller", a->subsysnqn, a->hostnqn, out);
}

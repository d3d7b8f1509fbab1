// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Diffie-Hellman part of DH-HMAC-CHAP on the RFC 7919 FFDHE groups,
 * with libcrypto's named groups ("ffdhe2048" ... "ffdhe8192").  As the
 * kernel's "ffdheXXXX(dh)" kpp: public values and shared secrets are
 * big-endian numbers of exactly the prime's size, with leading zeros.
 * A peer's public value is checked before use: the length of the group,
 * 1 < y < p - 1 here, and libcrypto's full check (y^q = 1 mod p) when it
 * derives.
 */
#include "auth_int.h"

#include <errno.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

/**
 * nvme_auth_dh_generate() - a fresh ephemeral key pair in a group
 * @dh: where it goes (nvme_auth_dh_free() releases it)
 * @dhgid: NVME_AUTH_DHGROUP_2048 ... NVME_AUTH_DHGROUP_8192
 *
 * Return: 0; -EINVAL for the NULL group or an unknown one; -ENOMEM or
 * -EIO when libcrypto fails.
 */
int nvme_auth_dh_generate(struct nvme_auth_dh *dh, uint8_t dhgid)
{
	const char *name = nvme_auth_dhgroup_name(dhgid);
	OSSL_PARAM params[2];
	EVP_PKEY_CTX *ctx;
	EVP_PKEY *pkey = NULL;
	int ret = 0;

	if (!dh)
		return -EINVAL;
	dh->pkey = NULL;
	dh->dhgid = 0;
	if (!name || dhgid == NVME_AUTH_DHGROUP_NULL)
		return -EINVAL;
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!ctx)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
						     (char *)name, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_PKEY_keygen_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_params(ctx, params) <= 0 ||
	    EVP_PKEY_generate(ctx, &pkey) <= 0)
		ret = -EIO;
	EVP_PKEY_CTX_free(ctx);
	if (ret)
		return ret;
	dh->pkey = pkey;
	dh->dhgid = dhgid;
	return 0;
}

/**
 * nvme_auth_dh_free() - release a key pair
 * @dh: the key pair (may be NULL, or hold none)
 */
void nvme_auth_dh_free(struct nvme_auth_dh *dh)
{
	if (!dh)
		return;
	EVP_PKEY_free(dh->pkey);
	dh->pkey = NULL;
	dh->dhgid = 0;
}

static int dh_len_check(const struct nvme_auth_dh *dh, size_t len)
{
	if (!dh || !dh->pkey)
		return -EINVAL;
	return len == nvme_auth_dhgroup_len(dh->dhgid) ? 0 : -EINVAL;
}

/**
 * nvme_auth_dh_public() - the public value of a key pair
 * @dh: a generated key pair
 * @out: @len bytes for it
 * @len: nvme_auth_dhgroup_len() of the pair's group, exactly
 *
 * Return: 0; -EINVAL for a missing key, buffer or a wrong length; -EIO when
 * libcrypto fails.
 */
int nvme_auth_dh_public(const struct nvme_auth_dh *dh, uint8_t *out, size_t len)
{
	BIGNUM *y = NULL;
	int ret;

	if (!out || dh_len_check(dh, len))
		return -EINVAL;
	if (!EVP_PKEY_get_bn_param(dh->pkey, OSSL_PKEY_PARAM_PUB_KEY, &y))
		return -EIO;
	ret = BN_bn2binpad(y, out, (int)len) == (int)len ? 0 : -EIO;
	BN_free(y);
	return ret;
}

/* 1 < y < p - 1: neither 0, 1 nor p - 1, nor anything from p up. */
static int dh_peer_range(const struct nvme_auth_dh *dh, const BIGNUM *y)
{
	BIGNUM *p = NULL;
	int ret = -EINVAL;

	if (!EVP_PKEY_get_bn_param(dh->pkey, OSSL_PKEY_PARAM_FFC_P, &p))
		return -EIO;
	if (BN_sub_word(p, 1) && !BN_is_zero(y) && !BN_is_one(y) &&
	    BN_cmp(y, p) < 0)
		ret = 0;
	BN_free(p);
	return ret;
}

/* The peer's public value as a key of the same group. */
static EVP_PKEY *dh_peer_key(const struct nvme_auth_dh *dh, const BIGNUM *y)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *peer = NULL;

	if (bld &&
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
					    nvme_auth_dhgroup_name(dh->dhgid),
					    0) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, y))
		params = OSSL_PARAM_BLD_to_param(bld);
	if (params)
		ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (ctx && EVP_PKEY_fromdata_init(ctx) > 0 &&
	    EVP_PKEY_fromdata(ctx, &peer, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		peer = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	return peer;
}

static int dh_derive(const struct nvme_auth_dh *dh, EVP_PKEY *peer,
		     uint8_t *out, size_t len)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(dh->pkey, NULL);
	size_t outl = len;
	int ret = -EINVAL;

	if (!ctx)
		return -ENOMEM;
	/* padded to the prime's size, as the kernel's kpp writes it */
	if (EVP_PKEY_derive_init(ctx) > 0 &&
	    EVP_PKEY_CTX_set_dh_pad(ctx, 1) > 0 &&
	    EVP_PKEY_derive_set_peer(ctx, peer) > 0 &&
	    EVP_PKEY_derive(ctx, out, &outl) > 0 && outl == len)
		ret = 0;
	EVP_PKEY_CTX_free(ctx);
	return ret;
}

/**
 * nvme_auth_dh_shared() - the shared secret with a peer's public value
 * @dh: our generated key pair
 * @peer: the peer's public value, as it came off the wire
 * @peer_len: its length: the group's nvme_auth_dhgroup_len()
 * @out: @len bytes for the secret
 * @len: the group's nvme_auth_dhgroup_len()
 *
 * The peer's value must be a member of the group's prime-order subgroup
 * other than 1 and p - 1 (what an attacker would send to force a known
 * secret).
 *
 * Return: 0; -EINVAL for a missing argument, a wrong length or an invalid
 * peer value; -ENOMEM or -EIO when libcrypto fails.  @out is cleared on
 * error.
 */
int nvme_auth_dh_shared(const struct nvme_auth_dh *dh, const uint8_t *peer,
			size_t peer_len, uint8_t *out, size_t len)
{
	EVP_PKEY *pk = NULL;
	BIGNUM *y;
	int ret;

	if (!peer || !out || dh_len_check(dh, len) || peer_len != len)
		return -EINVAL;
	y = BN_bin2bn(peer, (int)peer_len, NULL);
	if (!y)
		return -ENOMEM;
	ret = dh_peer_range(dh, y);
	if (!ret) {
		pk = dh_peer_key(dh, y);
		ret = pk ? dh_derive(dh, pk, out, len) : -EINVAL;
	}
	EVP_PKEY_free(pk);
	BN_free(y);
	if (ret)
		nvme_auth_wipe(out, len);
	return ret;
}

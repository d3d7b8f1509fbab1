// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DH-HMAC-CHAP keys and hashes, as drivers/nvme/common/auth.c has them:
 * the DHHC-1 key strings, the transformed key, the hash and group tables,
 * the sequence numbers, and HMAC/digest helpers on libcrypto's EVP API.
 */
#include "auth_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

/* ---- tables ------------------------------------------------------------ */

static const struct {
	uint8_t len;
	const char *hmac; /* the kernel's crypto API name */
	const char *digest; /* libcrypto's */
} hash_map[] = {
	[NVME_AUTH_HASH_SHA256] = { 32, "hmac(sha256)", "SHA256" },
	[NVME_AUTH_HASH_SHA384] = { 48, "hmac(sha384)", "SHA384" },
	[NVME_AUTH_HASH_SHA512] = { 64, "hmac(sha512)", "SHA512" },
};

static const struct {
	const char *name; /* the kernel's and libcrypto's */
	uint16_t len; /* bytes of a DH value: the prime's size */
} dhgroup_map[] = {
	[NVME_AUTH_DHGROUP_NULL] = { "null", 0 },
	[NVME_AUTH_DHGROUP_2048] = { "ffdhe2048", 256 },
	[NVME_AUTH_DHGROUP_3072] = { "ffdhe3072", 384 },
	[NVME_AUTH_DHGROUP_4096] = { "ffdhe4096", 512 },
	[NVME_AUTH_DHGROUP_6144] = { "ffdhe6144", 768 },
	[NVME_AUTH_DHGROUP_8192] = { "ffdhe8192", 1024 },
};

#define MAP_SIZE(m) (sizeof(m) / sizeof((m)[0]))

/**
 * nvme_auth_hmac_hash_len() - digest size of a DH-HMAC-CHAP hash
 * @hmac_id: NVME_AUTH_HASH_*
 *
 * Return: 32, 48 or 64; 0 for an unknown identifier.
 */
size_t nvme_auth_hmac_hash_len(uint8_t hmac_id)
{
	if (hmac_id >= MAP_SIZE(hash_map) || !hash_map[hmac_id].hmac)
		return 0;
	return hash_map[hmac_id].len;
}

/**
 * nvme_auth_hmac_name() - the kernel's name of a DH-HMAC-CHAP hash
 * @hmac_id: NVME_AUTH_HASH_*
 *
 * Return: "hmac(sha256)", "hmac(sha384)" or "hmac(sha512)" (the names the
 * kernel target's dhchap_hash takes); NULL for an unknown identifier.
 */
const char *nvme_auth_hmac_name(uint8_t hmac_id)
{
	if (!nvme_auth_hmac_hash_len(hmac_id))
		return NULL;
	return hash_map[hmac_id].hmac;
}

/**
 * nvme_auth_hmac_id() - identifier of a DH-HMAC-CHAP hash by name
 * @hmac_name: "hmac(sha256)", "hmac(sha384)" or "hmac(sha512)", exactly
 *
 * Return: NVME_AUTH_HASH_*, or NVME_AUTH_HASH_INVALID.
 */
uint8_t nvme_auth_hmac_id(const char *hmac_name)
{
	size_t i;

	if (!hmac_name)
		return NVME_AUTH_HASH_INVALID;
	for (i = 0; i < MAP_SIZE(hash_map); i++)
		if (hash_map[i].hmac && !strcmp(hash_map[i].hmac, hmac_name))
			return (uint8_t)i;
	return NVME_AUTH_HASH_INVALID;
}

/**
 * nvme_auth_dhgroup_name() - name of a DH-HMAC-CHAP Diffie-Hellman group
 * @dhgroup_id: NVME_AUTH_DHGROUP_*
 *
 * Return: "null", "ffdhe2048" ... "ffdhe8192"; NULL for an unknown one.
 */
const char *nvme_auth_dhgroup_name(uint8_t dhgroup_id)
{
	if (dhgroup_id >= MAP_SIZE(dhgroup_map))
		return NULL;
	return dhgroup_map[dhgroup_id].name;
}

/**
 * nvme_auth_dhgroup_id() - identifier of a Diffie-Hellman group by name
 * @dhgroup_name: "null", "ffdhe2048" ... "ffdhe8192", exactly
 *
 * Return: NVME_AUTH_DHGROUP_*, or NVME_AUTH_DHGROUP_INVALID.
 */
uint8_t nvme_auth_dhgroup_id(const char *dhgroup_name)
{
	size_t i;

	if (!dhgroup_name)
		return NVME_AUTH_DHGROUP_INVALID;
	for (i = 0; i < MAP_SIZE(dhgroup_map); i++)
		if (!strcmp(dhgroup_map[i].name, dhgroup_name))
			return (uint8_t)i;
	return NVME_AUTH_DHGROUP_INVALID;
}

/**
 * nvme_auth_dhgroup_len() - bytes of a DH value in a group
 * @dhgroup_id: NVME_AUTH_DHGROUP_*
 *
 * Return: the size of the group's prime in bytes (256 for ffdhe2048 ...
 * 1024 for ffdhe8192): public values and shared secrets have exactly this
 * length on the wire, with leading zeros.  0 for the NULL group and for an
 * unknown identifier.
 */
size_t nvme_auth_dhgroup_len(uint8_t dhgroup_id)
{
	if (dhgroup_id >= MAP_SIZE(dhgroup_map))
		return 0;
	return dhgroup_map[dhgroup_id].len;
}

/**
 * nvme_auth_get_seqnum() - the next DH-HMAC-CHAP sequence number
 *
 * As the kernel's: a process-wide counter that starts at a random value,
 * counts up and skips 0 (which means "no sequence number" on the wire).
 * Thread-safe.
 *
 * Return: a non-zero sequence number.
 */
uint32_t nvme_auth_get_seqnum(void)
{
	static _Atomic uint32_t seqnum;
	uint32_t old = atomic_load(&seqnum), next;

	do {
		next = old + 1;
		if (!old &&
		    RAND_bytes((unsigned char *)&next, sizeof(next)) != 1)
			next = 1;
		if (!next)
			next = 1;
	} while (!atomic_compare_exchange_weak(&seqnum, &old, next));
	return next;
}

/* ---- hashes ------------------------------------------------------------ */

/**
 * nvme_auth_wipe() - clear memory that held a secret
 * @p: the memory (may be NULL when @len is 0)
 * @len: its length
 *
 * The compiler may not drop the clearing (OPENSSL_cleanse()).
 */
void nvme_auth_wipe(void *p, size_t len)
{
	if (p && len)
		OPENSSL_cleanse(p, len);
}

/* @len random bytes from libcrypto's DRBG: 0 or -EIO. */
int rdmarw__auth_random(uint8_t *buf, size_t len)
{
	if (len > 1024 * 1024)
		return -EINVAL;
	return RAND_bytes(buf, (int)len) == 1 ? 0 : -EIO;
}

/* One HMAC computation over several pieces (the kernel's
 * nvme_auth_hmac_init/_update/_final). */
struct auth_hmac {
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx;
	size_t len;
};

static void hmac_done(struct auth_hmac *h)
{
	EVP_MAC_CTX_free(h->ctx);
	EVP_MAC_free(h->mac);
	h->ctx = NULL;
	h->mac = NULL;
}

static int hmac_init(struct auth_hmac *h, uint8_t hmac_id, const uint8_t *key,
		     size_t key_len)
{
	OSSL_PARAM params[2];

	h->mac = NULL;
	h->ctx = NULL;
	h->len = nvme_auth_hmac_hash_len(hmac_id);
	if (!h->len || !key || !key_len)
		return -EINVAL;
	params[0] = OSSL_PARAM_construct_utf8_string(
		OSSL_MAC_PARAM_DIGEST, (char *)hash_map[hmac_id].digest, 0);
	params[1] = OSSL_PARAM_construct_end();
	h->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (h->mac)
		h->ctx = EVP_MAC_CTX_new(h->mac);
	if (!h->ctx || !EVP_MAC_init(h->ctx, key, key_len, params)) {
		hmac_done(h);
		return -ENOMEM;
	}
	return 0;
}

static int hmac_update(struct auth_hmac *h, const void *data, size_t len)
{
	if (!len)
		return 0;
	return EVP_MAC_update(h->ctx, data, len) ? 0 : -EIO;
}

/* Writes h->len bytes and frees the context, also on error. */
static int hmac_final(struct auth_hmac *h, int ret, uint8_t *out)
{
	size_t outl = 0;

	if (!ret &&
	    (!EVP_MAC_final(h->ctx, out, &outl, h->len) || outl != h->len))
		ret = -EIO;
	hmac_done(h);
	return ret;
}

/**
 * nvme_auth_hmac() - HMAC of one buffer with a DH-HMAC-CHAP hash
 * @hmac_id: NVME_AUTH_HASH_*
 * @key: the HMAC key
 * @key_len: its length (not 0)
 * @data: the message (may be NULL when @len is 0)
 * @len: its length
 * @out: nvme_auth_hmac_hash_len(@hmac_id) bytes for the result
 *
 * Return: 0, -EINVAL for an unknown hash or a missing buffer, -ENOMEM or
 * -EIO when libcrypto fails.
 */
int nvme_auth_hmac(uint8_t hmac_id, const uint8_t *key, size_t key_len,
		   const void *data, size_t len, uint8_t *out)
{
	struct auth_hmac h;
	int ret;

	if (!out || (!data && len))
		return -EINVAL;
	ret = hmac_init(&h, hmac_id, key, key_len);
	if (ret)
		return ret;
	return hmac_final(&h, hmac_update(&h, data, len), out);
}

/**
 * nvme_auth_hash() - digest of one buffer with a DH-HMAC-CHAP hash
 * @hmac_id: NVME_AUTH_HASH_* (the digest of that HMAC: SHA-256/384/512)
 * @data: the message (may be NULL when @len is 0)
 * @len: its length
 * @out: nvme_auth_hmac_hash_len(@hmac_id) bytes for the result
 *
 * Return: 0, -EINVAL for an unknown hash or a missing buffer, -EIO when
 * libcrypto fails.
 */
int nvme_auth_hash(uint8_t hmac_id, const void *data, size_t len, uint8_t *out)
{
	size_t hl = nvme_auth_hmac_hash_len(hmac_id);
	unsigned int outl = 0;
	const EVP_MD *md;

	if (!hl || !out || (!data && len))
		return -EINVAL;
	md = EVP_get_digestbyname(hash_map[hmac_id].digest);
	if (!md || !EVP_Digest(data, len, out, &outl, md, NULL) || outl != hl)
		return -EIO;
	return 0;
}

/* ---- keys --------------------------------------------------------------- */

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * One group of four base64 characters (RFC 4648, standard alphabet): at
 * most two '=' and only at the end of the last group, and the bits the
 * padding leaves over must be zero.  Returns the bytes it stands for
 * (1-3) or -EINVAL.
 */
static int b64_group(const char *s, bool last, uint8_t out[3])
{
	int v[4], pad = 0, j;
	uint32_t w;

	for (j = 0; j < 4; j++) {
		if (s[j] == '=') {
			if (!last || j < 2)
				return -EINVAL;
			pad++;
			v[j] = 0;
			continue;
		}
		v[j] = b64_value(s[j]);
		if (v[j] < 0 || pad)
			return -EINVAL;
	}
	if ((pad == 2 && (v[1] & 0xf)) || (pad == 1 && (v[2] & 0x3)))
		return -EINVAL;
	w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
	    (uint32_t)v[3];
	out[0] = (uint8_t)(w >> 16);
	out[1] = (uint8_t)(w >> 8);
	out[2] = (uint8_t)w;
	return 3 - pad;
}

/* Strict base64: returns the decoded length, or -EINVAL. */
static int b64_decode(const char *s, size_t n, uint8_t *dst, size_t size)
{
	uint8_t grp[3];
	size_t i, o = 0;
	int k;

	if (!n || n % 4)
		return -EINVAL;
	for (i = 0; i < n; i += 4) {
		k = b64_group(s + i, i + 4 == n, grp);
		if (k < 0 || o + (size_t)k > size) {
			o = 0;
			break;
		}
		memcpy(dst + o, grp, (size_t)k);
		o += (size_t)k;
	}
	nvme_auth_wipe(grp, sizeof(grp));
	return o ? (int)o : -EINVAL;
}

/* CRC-32 (IEEE 802.3, reflected, as the kernel's ~crc32(~0, ...)). */
static uint32_t key_crc32(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;
	size_t i;
	int b;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

/* "DHHC-1:" and two decimal digits 00..03 and ':'; the hash, or -EINVAL. */
static int key_prefix(const char *s)
{
	int hh;

	if (strncmp(s, "DHHC-1:", 7))
		return -EINVAL;
	s += 7;
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2] != ':')
		return -EINVAL;
	hh = (s[0] - '0') * 10 + (s[1] - '0');
	return hh <= NVME_AUTH_HASH_SHA512 ? hh : -EINVAL;
}

/* secret, 4 bytes of CRC, base64: 92 characters at most */
#define KEY_B64_MAX 92

/**
 * nvme_auth_parse_key() - parse a DH-HMAC-CHAP key string
 * @secret: "DHHC-1:<hh>:<base64>:" as `nvme gen-dhchap-key` writes it
 *	(the last ':' may be left out, as the kernel allows); <hh> is 00
 *	(no transformation), 01, 02 or 03 (SHA-256/384/512); the base64
 *	(RFC 4648, padded) holds 32, 48 or 64 bytes of secret and their
 *	CRC-32, little-endian
 * @key: where the secret goes
 *
 * As the kernel's nvme_auth_parse_key()/nvme_auth_extract_key(), but with
 * no leniency: anything after the last ':', whitespace, a base64 that is
 * not canonical or a <hh> that is not two digits is refused.
 *
 * Return: 0; -EINVAL for a malformed string or a wrong length;
 * -EKEYREJECTED when the CRC does not match.  @key is cleared on error.
 */
int nvme_auth_parse_key(const char *secret, struct nvme_dhchap_key *key)
{
	uint8_t raw[KEY_B64_MAX / 4 * 3];
	const char *b64, *end;
	size_t n;
	int hh, len, ret = 0;

	if (!secret || !key)
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	hh = key_prefix(secret);
	if (hh < 0)
		return hh;
	b64 = secret + 10;
	n = strnlen(b64, KEY_B64_MAX + 2);
	end = memchr(b64, ':', n);
	if (end && end[1] != '\0')
		return -EINVAL;
	if (end)
		n = (size_t)(end - b64);
	if (n > KEY_B64_MAX)
		return -EINVAL;
	len = b64_decode(b64, n, raw, sizeof(raw));
	if (len != 36 && len != 52 && len != 68) {
		ret = -EINVAL;
	} else {
		len -= 4;
		if (key_crc32(raw, (size_t)len) !=
		    ((uint32_t)raw[len] | (uint32_t)raw[len + 1] << 8 |
		     (uint32_t)raw[len + 2] << 16 |
		     (uint32_t)raw[len + 3] << 24))
			ret = -EKEYREJECTED;
	}
	if (!ret) {
		key->hash = (uint8_t)hh;
		key->len = (uint8_t)len;
		memcpy(key->key, raw, (size_t)len);
	}
	nvme_auth_wipe(raw, sizeof(raw));
	return ret;
}

/* An NQN of 1-223 bytes, copied with its NUL into @dst (when not NULL). */
int rdmarw__auth_copy_nqn(char *dst, const char *nqn)
{
	size_t n;

	if (!nqn)
		return -EINVAL;
	n = strnlen(nqn, NVME_AUTH_NQN_MAX + 1);
	if (!n || n > NVME_AUTH_NQN_MAX)
		return -EINVAL;
	if (dst)
		memcpy(dst, nqn, n + 1);
	return 0;
}

static bool key_valid(const struct nvme_dhchap_key *key)
{
	return (key->len == 32 || key->len == 48 || key->len == 64) &&
	       key->hash <= NVME_AUTH_HASH_SHA512;
}

/**
 * nvme_auth_transform_key() - the key a DH-HMAC-CHAP response is keyed with
 * @key: a parsed key
 * @nqn: the NQN of the side the key belongs to (host NQN for the host
 *	key, subsystem NQN for the controller key)
 * @out: the transformed key (may be @key itself)
 *
 * As the kernel's nvme_auth_transform_key(): a key with hash 0 is used as
 * it is; otherwise it becomes HMAC-<hash>(secret, NQN || "NVMe-over-Fabrics"),
 * of that hash's length.  The response HMAC is keyed with all of @out.
 *
 * Return: 0; -EINVAL for a bad key or NQN (empty or longer than 223
 * bytes); -ENOMEM or -EIO when libcrypto fails.
 */
int nvme_auth_transform_key(const struct nvme_dhchap_key *key, const char *nqn,
			    struct nvme_dhchap_key *out)
{
	static const char fabrics[] = "NVMe-over-Fabrics";
	struct nvme_dhchap_key t = { 0 };
	struct auth_hmac h;
	int ret;

	if (!key || !out || !key_valid(key) || rdmarw__auth_copy_nqn(NULL, nqn))
		return -EINVAL;
	t = *key;
	if (key->hash) {
		ret = hmac_init(&h, key->hash, key->key, key->len);
		if (ret)
			return ret;
		ret = hmac_update(&h, nqn, strlen(nqn));
		if (!ret)
			ret = hmac_update(&h, fabrics, sizeof(fabrics) - 1);
		ret = hmac_final(&h, ret, t.key);
		if (ret) {
			nvme_auth_wipe(&t, sizeof(t));
			return ret;
		}
		t.len = (uint8_t)h.len;
		nvme_auth_wipe(t.key + t.len, sizeof(t.key) - t.len);
	}
	*out = t;
	nvme_auth_wipe(&t, sizeof(t));
	return 0;
}

/* A DHHC-1 string parsed and transformed with @nqn; @out wiped on error. */
int rdmarw__auth_load_key(const char *secret, const char *nqn,
			  struct nvme_dhchap_key *out)
{
	int ret = nvme_auth_parse_key(secret, out);

	if (!ret)
		ret = nvme_auth_transform_key(out, nqn, out);
	if (ret)
		nvme_auth_wipe(out, sizeof(*out));
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DH-HMAC-CHAP primitives: the host's and the controller's responses and
 * the augmented challenge against known answers, and the Diffie-Hellman
 * exchange on the FFDHE groups: both sides agree, the values are the
 * group's length with leading zeros, and a peer's value outside the
 * prime-order subgroup is refused.
 *
 * The response and augmented-challenge answers were computed once with
 * `openssl dgst -sha256|-sha384|-sha512 -mac HMAC -macopt hexkey:<key>`
 * over the bytes the kernel hashes (nvme_auth_dhchap_setup_host_response(),
 * _ctrl_response(), nvme_auth_augmented_challenge()): challenge ||
 * le32 seqnum || le16 tid || 00h || "HostHost" or "Controller" || NQN ||
 * 00h || NQN.  The keys are the transformed keys of test_nvme_auth_keys.c
 * (nvme-cli's vectors).
 */
#include "auth_test.h"

#include <errno.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

/* transformed keys: DHHC-1:01 key01_32 as host key and as ctrl key */
#define K_HOST \
	"0b23602c9de3bfde216cbc29ebc8305d8dc952fc621d10d30f5fc2cdb1e94b6d"
#define K_CTRL \
	"9b3abbfb6b8e4178ca2a04c30c2d6fc79fba7dadd11708505cc482e548fbd427"
#define K_HOST512                                                          \
	"084d267449773a29034cb26900b656c0c2005c52f68f07b5b833204bf5d36236" \
	"0c816aa0a984edcce6f740e3cf820b91f553abb71a7d48f5a8ea274cae4d4ffd"

static void load(struct nvme_dhchap_key *k, uint8_t hash, const char *hex)
{
	memset(k, 0, sizeof(*k));
	k->hash = hash;
	k->len = (uint8_t)t_hex(hex, k->key, sizeof(k->key));
}

static void expect_hex(const uint8_t *got, const char *hex)
{
	uint8_t want[128];
	size_t n = t_hex(hex, want, sizeof(want));

	assert_memory_equal(got, want, n);
}

/* RFC 4231 test case 2 */
static void test_hmac_rfc4231(void **state)
{
	static const char data[] = "what do ya want for nothing?";
	uint8_t out[64];

	(void)state;
	assert_int_equal(nvme_auth_hmac(1, (const uint8_t *)"Jefe", 4, data,
					sizeof(data) - 1, out),
			 0);
	expect_hex(out, "5bdcc146bf60754e6a042426089575c7"
			"5a003f089d2739839dec58b964ec3843");
	assert_int_equal(nvme_auth_hmac(2, (const uint8_t *)"Jefe", 4, data,
					sizeof(data) - 1, out),
			 0);
	expect_hex(out, "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47"
			"e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649");
	assert_int_equal(nvme_auth_hmac(3, (const uint8_t *)"Jefe", 4, data,
					sizeof(data) - 1, out),
			 0);
	expect_hex(out, "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd6"
			"10270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fd"
			"caeab1a34d4a6b4b636e070a38bce737");
	assert_int_equal(
		nvme_auth_hmac(0, (const uint8_t *)"Jefe", 4, data, 1, out),
		-EINVAL);
	assert_int_equal(nvme_auth_hmac(1, NULL, 4, data, 1, out), -EINVAL);
	assert_int_equal(
		nvme_auth_hmac(1, (const uint8_t *)"Jefe", 0, data, 1, out),
		-EINVAL);
	assert_int_equal(
		nvme_auth_hmac(1, (const uint8_t *)"Jefe", 4, NULL, 1, out),
		-EINVAL);
}

static void test_hash(void **state)
{
	uint8_t out[64];

	(void)state;
	assert_int_equal(nvme_auth_hash(1, "abc", 3, out), 0);
	expect_hex(out, "ba7816bf8f01cfea414140de5dae2223"
			"b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(nvme_auth_hash(4, "abc", 3, out), -EINVAL);
	assert_int_equal(nvme_auth_hash(1, "abc", 3, NULL), -EINVAL);
}

static void test_host_response(void **state)
{
	uint8_t c1[32], c64[64], out[64];
	struct nvme_dhchap_key k;
	struct nvme_auth_resp_args a = {
		.hmac_id = NVME_AUTH_HASH_SHA256,
		.key = &k,
		.challenge = c1,
		.seqnum = 0x12345678,
		.tid = 0x0102,
		.hostnqn = T_HOSTNQN,
		.subsysnqn = T_SUBNQN,
	};

	(void)state;
	load(&k, 1, K_HOST);
	t_seq(c1, sizeof(c1), 0xa0);
	assert_int_equal(nvme_auth_host_response(&a, out), 0);
	expect_hex(out, "3e3cc39de8ab9598d389fc9ff45dde85"
			"2eba7ad0bf2aeec00b51dd0ef173ed2f");
	/* SHA-512 with a 64-byte key, seqnum 1, transaction 0xffff */
	load(&k, 3, K_HOST512);
	t_seq(c64, sizeof(c64), 0);
	a.hmac_id = NVME_AUTH_HASH_SHA512;
	a.challenge = c64;
	a.seqnum = 1;
	a.tid = 0xffff;
	assert_int_equal(nvme_auth_host_response(&a, out), 0);
	expect_hex(out, "a58bea0bcdfab8b64e107b175d167d2ba1dfa78c166a5186"
			"4077cb5419756ef862574688edfbf388423471aae73af4da"
			"d17720e0b0dfb91ef3fa64efdde850a3");
}

static void test_ctrl_response(void **state)
{
	uint8_t c2[32], out[32];
	struct nvme_dhchap_key k;
	struct nvme_auth_resp_args a = {
		.hmac_id = NVME_AUTH_HASH_SHA256,
		.key = &k,
		.challenge = c2,
		.seqnum = 0x9abcdef0,
		.tid = 0x0102,
		.hostnqn = T_HOSTNQN,
		.subsysnqn = T_SUBNQN,
	};

	(void)state;
	load(&k, 1, K_CTRL);
	t_seq(c2, sizeof(c2), 0xc0);
	assert_int_equal(nvme_auth_ctrl_response(&a, out), 0);
	expect_hex(out, "2a1a3cc1ffae4260b98abb2952809259"
			"e1e1e400c5430864d25c822e5a38a393");
}

static void test_response_refused(void **state)
{
	char long_nqn[NVME_AUTH_NQN_MAX + 2];
	uint8_t c[64] = { 0 }, out[64];
	struct nvme_dhchap_key k;
	struct nvme_auth_resp_args a = {
		.hmac_id = NVME_AUTH_HASH_SHA256,
		.key = &k,
		.challenge = c,
		.hostnqn = T_HOSTNQN,
		.subsysnqn = T_SUBNQN,
	}, b;

	(void)state;
	load(&k, 1, K_HOST);
	assert_int_equal(nvme_auth_host_response(NULL, out), -EINVAL);
	assert_int_equal(nvme_auth_host_response(&a, NULL), -EINVAL);
	b = a;
	b.hmac_id = 0;
	assert_int_equal(nvme_auth_host_response(&b, out), -EINVAL);
	b = a;
	b.key = NULL;
	assert_int_equal(nvme_auth_ctrl_response(&b, out), -EINVAL);
	b = a;
	b.challenge = NULL;
	assert_int_equal(nvme_auth_ctrl_response(&b, out), -EINVAL);
	b = a;
	b.hostnqn = "";
	assert_int_equal(nvme_auth_host_response(&b, out), -EINVAL);
	memset(long_nqn, 'n', sizeof(long_nqn) - 1);
	long_nqn[sizeof(long_nqn) - 1] = '\0';
	b = a;
	b.subsysnqn = long_nqn;
	assert_int_equal(nvme_auth_ctrl_response(&b, out), -EINVAL);
	k.len = 0;
	assert_int_equal(nvme_auth_host_response(&a, out), -EINVAL);
}

static void test_augmented(void **state)
{
	uint8_t skey[256], c[48], out[48];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(skey); i++)
		skey[i] = (uint8_t)(i * 7 + 3);
	t_seq(c, 32, 0xa0);
	assert_int_equal(nvme_auth_augmented_challenge(1, skey, sizeof(skey), c,
						       out, 32),
			 0);
	expect_hex(out, "14fbbd8399d14e697caa1d537d5f20b1"
			"f42520a80f6a3df07aa2959ef78a7b37");
	t_seq(c, 48, 0);
	assert_int_equal(nvme_auth_augmented_challenge(2, skey, sizeof(skey), c,
						       out, 48),
			 0);
	expect_hex(out, "15f0897ef70fbc5e34db06d1bd9e03ee9081d91a854c7c65"
			"205b4984c838bafaf78098d95e489b2efa2d1f9e944cdc26");
	/* a short session key: hashed first, then the HMAC key */
	for (i = 0; i < 20; i++)
		skey[i] = (uint8_t)(i + 1);
	t_seq(c, 32, 0xa0);
	assert_int_equal(nvme_auth_augmented_challenge(1, skey, 20, c, out, 32),
			 0);
	expect_hex(out, "3f775c80f9b14d90b1615884ee122962"
			"648c3d921891d8bcd61c4a0af434e8b7");
	/* hlen must be the hash's */
	assert_int_equal(nvme_auth_augmented_challenge(2, skey, sizeof(skey), c,
						       out, 32),
			 -EINVAL);
	assert_int_equal(nvme_auth_augmented_challenge(1, NULL, 1, c, out, 32),
			 -EINVAL);
	assert_int_equal(nvme_auth_augmented_challenge(1, skey, 0, c, out, 32),
			 -EINVAL);
}

/* Both ends of a group derive the same secret of the group's length. */
static void dh_agree(uint8_t gid)
{
	size_t len = nvme_auth_dhgroup_len(gid);
	uint8_t pa[1024], pb[1024], sa[1024], sb[1024];
	struct nvme_auth_dh a, b;

	assert_int_equal(nvme_auth_dh_generate(&a, gid), 0);
	assert_int_equal(nvme_auth_dh_generate(&b, gid), 0);
	assert_int_equal(nvme_auth_dh_public(&a, pa, len), 0);
	assert_int_equal(nvme_auth_dh_public(&b, pb, len), 0);
	assert_memory_not_equal(pa, pb, len);
	assert_int_equal(nvme_auth_dh_shared(&a, pb, len, sa, len), 0);
	assert_int_equal(nvme_auth_dh_shared(&b, pa, len, sb, len), 0);
	assert_memory_equal(sa, sb, len);
	nvme_auth_dh_free(&a);
	nvme_auth_dh_free(&b);
}

static void test_dh_agree(void **state)
{
	uint8_t gid;

	(void)state;
	for (gid = NVME_AUTH_DHGROUP_2048; gid <= NVME_AUTH_DHGROUP_8192; gid++)
		dh_agree(gid);
}

static BIGNUM *dh_param(const struct nvme_auth_dh *dh, const char *name)
{
	BIGNUM *bn = NULL;

	assert_int_equal(EVP_PKEY_get_bn_param(dh->pkey, name, &bn), 1);
	return bn;
}

/*
 * The secret is peer^x mod p, big-endian, padded to the prime's size: the
 * peer's value 2^k mod p is chosen (a member of the subgroup: 2 is the
 * generator) so that the secret has a leading zero byte.
 */
static void test_dh_value(void **state)
{
	uint8_t y[256], s[256], want[256];
	struct nvme_auth_dh a;
	BIGNUM *p, *x, *v, *r;
	BN_CTX *ctx = BN_CTX_new();
	int k;

	(void)state;
	assert_int_equal(nvme_auth_dh_generate(&a, NVME_AUTH_DHGROUP_2048), 0);
	p = dh_param(&a, OSSL_PKEY_PARAM_FFC_P);
	x = dh_param(&a, OSSL_PKEY_PARAM_PRIV_KEY);
	v = BN_new();
	r = BN_new();
	assert_int_equal(BN_set_word(v, 2), 1);
	for (k = 1; k < 100000; k++) {
		assert_int_equal(BN_mod_exp(r, v, x, p, ctx), 1);
		if (BN_num_bytes(r) < 256)
			break;
		assert_int_equal(BN_mod_lshift1_quick(v, v, p), 1);
	}
	assert_true(BN_num_bytes(r) < 256);
	assert_int_equal(BN_bn2binpad(v, y, sizeof(y)), sizeof(y));
	assert_int_equal(BN_bn2binpad(r, want, sizeof(want)), sizeof(want));
	assert_int_equal(want[0], 0);
	assert_int_equal(nvme_auth_dh_shared(&a, y, sizeof(y), s, sizeof(s)),
			 0);
	assert_memory_equal(s, want, sizeof(s));
	BN_free(p);
	BN_free(x);
	BN_free(v);
	BN_free(r);
	BN_CTX_free(ctx);
	nvme_auth_dh_free(&a);
}

/* A public value that starts with a zero byte keeps it. */
static void test_dh_public_padded(void **state)
{
	uint8_t pub[256], peer[256], s1[256], s2[256];
	struct nvme_auth_dh a, b;
	int tries;

	(void)state;
	for (tries = 0; tries < 20000; tries++) {
		assert_int_equal(nvme_auth_dh_generate(&a, 1), 0);
		assert_int_equal(nvme_auth_dh_public(&a, pub, sizeof(pub)), 0);
		if (!pub[0])
			break;
		nvme_auth_dh_free(&a);
	}
	assert_int_equal(pub[0], 0);
	assert_int_equal(nvme_auth_dh_generate(&b, 1), 0);
	assert_int_equal(nvme_auth_dh_public(&b, peer, sizeof(peer)), 0);
	assert_int_equal(
		nvme_auth_dh_shared(&b, pub, sizeof(pub), s1, sizeof(s1)), 0);
	assert_int_equal(
		nvme_auth_dh_shared(&a, peer, sizeof(peer), s2, sizeof(s2)), 0);
	assert_memory_equal(s1, s2, sizeof(s1));
	nvme_auth_dh_free(&a);
	nvme_auth_dh_free(&b);
}

/* y as a 256-byte value p + delta (delta may be negative). */
static void p_plus(const BIGNUM *p, long delta, uint8_t *out)
{
	BIGNUM *v = BN_dup(p);

	if (delta >= 0)
		assert_int_equal(BN_add_word(v, (BN_ULONG)delta), 1);
	else
		assert_int_equal(BN_sub_word(v, (BN_ULONG)-delta), 1);
	assert_int_equal(BN_bn2binpad(v, out, 256), 256);
	BN_free(v);
}

/* What an attacker sends to force a known or small secret. */
static void test_dh_peer_refused(void **state)
{
	uint8_t y[257], s[256];
	struct nvme_auth_dh a;
	BIGNUM *p;
	size_t i;

	(void)state;
	assert_int_equal(nvme_auth_dh_generate(&a, NVME_AUTH_DHGROUP_2048), 0);
	p = dh_param(&a, OSSL_PKEY_PARAM_FFC_P);
	memset(y, 0, sizeof(y));
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), -EINVAL);
	y[255] = 1;
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), -EINVAL);
	memset(y, 0xff, sizeof(y));
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), -EINVAL);
	p_plus(p, -1, y);
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), -EINVAL);
	p_plus(p, 0, y);
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), -EINVAL);
	p_plus(p, 1, y);
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), -EINVAL);
	/* p - 2 = -2 mod p: not a square, outside the order-q subgroup */
	p_plus(p, -2, y);
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), -EINVAL);
	for (i = 0; i < sizeof(s); i++)
		assert_int_equal(s[i], 0);
	/* 2 is the generator: accepted */
	memset(y, 0, sizeof(y));
	y[255] = 2;
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 256), 0);
	/* lengths: the group's, exactly */
	assert_int_equal(nvme_auth_dh_shared(&a, y, 255, s, 256), -EINVAL);
	assert_int_equal(nvme_auth_dh_shared(&a, y, 257, s, 256), -EINVAL);
	assert_int_equal(nvme_auth_dh_shared(&a, y, 256, s, 255), -EINVAL);
	assert_int_equal(nvme_auth_dh_public(&a, s, 255), -EINVAL);
	BN_free(p);
	nvme_auth_dh_free(&a);
}

static void test_dh_args(void **state)
{
	struct nvme_auth_dh dh = { 0 };
	uint8_t buf[256];

	(void)state;
	assert_int_equal(nvme_auth_dh_generate(&dh, NVME_AUTH_DHGROUP_NULL),
			 -EINVAL);
	assert_null(dh.pkey);
	assert_int_equal(nvme_auth_dh_generate(&dh, 6), -EINVAL);
	assert_int_equal(nvme_auth_dh_generate(NULL, 1), -EINVAL);
	assert_int_equal(nvme_auth_dh_public(&dh, buf, 256), -EINVAL);
	assert_int_equal(nvme_auth_dh_shared(&dh, buf, 256, buf, 256), -EINVAL);
	assert_int_equal(nvme_auth_dh_public(NULL, buf, 256), -EINVAL);
	nvme_auth_dh_free(&dh);
	nvme_auth_dh_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_host_response),
		cmocka_unit_test(test_ctrl_response),
		cmocka_unit_test(test_response_refused),
		cmocka_unit_test(test_augmented),
		cmocka_unit_test(test_dh_agree),
		cmocka_unit_test(test_dh_value),
		cmocka_unit_test(test_dh_public_padded),
		cmocka_unit_test(test_dh_peer_refused),
		cmocka_unit_test(test_dh_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

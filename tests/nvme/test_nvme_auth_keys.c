// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DH-HMAC-CHAP keys: the DHHC-1 strings nvme-cli writes, parsed as the
 * kernel parses them, and the transformed key, against vectors from
 * nvme-cli; every malformed key refused with the errno the kernel gives.
 *
 * The vectors were made once with nvme-cli 2.3 (libnvme 1.3, Debian 12),
 * host NQN T_HOSTNQN:
 *   nvme gen-dhchap-key --secret=<hex> --key-length=<32|48|64> --hmac=0
 *   nvme gen-dhchap-key --secret=<hex> --key-length=<n> --hmac=<1|2|3>
 *	--nqn=T_HOSTNQN
 *   nvme gen-dhchap-key --key-length=<n> --hmac=0, then
 *   nvme check-dhchap-key --key=<key>   ("Key is valid ... CRC <crc>")
 * nvme-cli's --hmac output holds the secret already transformed with the
 * NQN (HMAC(secret, NQN || "NVMe-over-Fabrics"), checked with `openssl
 * dgst -mac HMAC`): that is the transformation's known answer.  Feeding
 * such a DHHC-1:01 key back to gen-dhchap-key (--secret=<its 32 bytes>
 * --hmac=1, with the host NQN, then with T_SUBNQN) gives what the kernel
 * keys its responses with when the key is used as the host key, or as the
 * controller key.
 */
#include "auth_test.h"

#include <errno.h>

/* --secret=000102...1f, 6465...93 (48 bytes), 9697...d5 (64 bytes) */
static const char key00_32[] =
	"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
static const char key00_48[] =
	"DHHC-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+Q"
	"kZKTvGwQfg==:";
static const char key00_64[] =
	"DHHC-1:00:lpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHC"
	"w8TFxsfIycrLzM3Oz9DR0tPU1Vgn0I4=:";
/* the same secrets with --hmac=1 (32), 2 (48), 3 (64) */
static const char key01_32[] =
	"DHHC-1:01:vpq37fuC3dXlrFdBeL3l55rZX5frlPLAL6XiWUcBs2JLmx7/:";
static const char key02_48[] =
	"DHHC-1:02:x9EuoiBLt93GQg1rJPzuiO5UtrUTXXNUfDw+q2WAtGEJzdlMGb9jDrquFxr8"
	"a8oFCBJbcg==:";
static const char key03_64[] =
	"DHHC-1:03:ZbCdRA7ayzS4FZXZLrJrClq7fOF2fBbFVvp5ynLkjhN0Jm2kePWpkvpbWBG9"
	"si0OtT0a6b9vz75UFLwX3+f+fUXK2OM=:";
/* key01_32's secret with --hmac=1: with the host NQN, with T_SUBNQN */
static const char key01_32_host[] =
	"DHHC-1:01:CyNgLJ3jv94hbLwp68gwXY3JUvxiHRDTD1/CzbHpS21zHHOP:";
static const char key01_32_sub[] =
	"DHHC-1:01:mzq7+2uOQXjKKgTDDC1vx5+6fa3RFwhQXMSC5Uj71Ce3K0Ae:";

static void parse_ok(const char *s, uint8_t hash, uint8_t len,
		     struct nvme_dhchap_key *k)
{
	assert_int_equal(nvme_auth_parse_key(s, k), 0);
	assert_int_equal(k->hash, hash);
	assert_int_equal(k->len, len);
}

static void test_parse_vectors(void **state)
{
	struct nvme_dhchap_key k;
	uint8_t want[64];

	(void)state;
	parse_ok(key00_32, 0, 32, &k);
	t_seq(want, 32, 0x00);
	assert_memory_equal(k.key, want, 32);
	parse_ok(key00_48, 0, 48, &k);
	t_seq(want, 48, 0x64);
	assert_memory_equal(k.key, want, 48);
	parse_ok(key00_64, 0, 64, &k);
	t_seq(want, 64, 0x96);
	assert_memory_equal(k.key, want, 64);
	parse_ok(key01_32, 1, 32, &k);
	parse_ok(key02_48, 2, 48, &k);
	parse_ok(key03_64, 3, 64, &k);
	/* the kernel also takes a key without its last ':' */
	assert_int_equal(nvme_auth_parse_key("DHHC-1:00:AAECAwQFBgcICQoLDA0ODxA"
					     "REhMUFRYXGBkaGxwdHh+KfiaR",
					     &k),
			 0);
	assert_int_equal(k.len, 32);
}

/* Random keys from gen-dhchap-key; check-dhchap-key printed their CRCs. */
static void test_parse_crc(void **state)
{
	static const struct {
		const char *key;
		uint8_t len;
	} v[] = {
		/* CRC e22698d2 */
		{ "DHHC-1:00:iIWo9tHjp1G1MJWa+ZzeFMhtZeAfajZ2qwsCC36LpKXSmCbi:",
		  32 },
		/* CRC 49797ada */
		{ "DHHC-1:00:OPQoHHuWsgBGx/+UQ4YkLYv290fYhnICZpJTdczrI/e6hp6R+p"
		  "uOWe3bSueDP8yz2np5SQ==:",
		  48 },
		/* CRC 59b58647 */
		{ "DHHC-1:00:4WVqStCTa0rKkDq0bT3Gh3zqkXN6UTSMCR91cc6PTuVHfUmOWg"
		  "uKKKXk6SmKVYAB+YHBhuhLmD49UcP5Wd41iEeGtVk=:",
		  64 },
	};
	struct nvme_dhchap_key k;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		parse_ok(v[i].key, 0, v[i].len, &k);
	/* one secret bit flipped: the CRC no longer matches */
	assert_int_equal(nvme_auth_parse_key("DHHC-1:00:AQECAwQFBgcICQoLDA0ODx"
					     "AREhMUFRYXGBkaGxwdHh+KfiaR:",
					     &k),
			 -EKEYREJECTED);
	assert_int_equal(k.len, 0);
	/* the CRC's own bytes changed */
	assert_int_equal(nvme_auth_parse_key("DHHC-1:00:AAECAwQFBgcICQoLDA0ODx"
					     "AREhMUFRYXGBkaGxwdHh+KfiaS:",
					     &k),
			 -EKEYREJECTED);
}

static void test_parse_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"DHHC-1:",
		"DHHC-1:00:",
		"DHHC-1:00::",
		"DHHC-2:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"dhhc-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		" DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		/* hh beyond SHA-512, or not two digits */
		"DHHC-1:04:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-1:99:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-1:0:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-1:000:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-1:0x:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		/* trailing junk, also a newline */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:x",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:\n",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR::",
		/* 31, 33, 16 and 65 bytes of secret, with good CRCs */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHndteE0=:",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gBYOQ5A==:",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0OD4jizs4=:",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJy"
		"gpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0DYb8BA:",
		/* not base64: a stray character, the URL alphabet, spaces */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh*KfiaR:",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh-KfiaR:",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd Hh+KfiaR:",
		/* padding missing, misplaced, or with bits left over */
		"DHHC-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yN"
		"jo+QkZKTvGwQfg:",
		"DHHC-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yN"
		"jo+QkZKTvGwQf=g:",
		"DHHC-1:00:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yN"
		"jo+QkZKTvGwQfh==:",
		"DHHC-1:00:AAEC=wQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		/* longer than any key */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaRAAECAwQF"
		"BgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaRAAECAwQFBgcICQoL:",
	};
	struct nvme_dhchap_key k;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&k, 0xa5, sizeof(k));
		if (nvme_auth_parse_key(bad[i], &k) != -EINVAL)
			fail_msg("accepted or wrong errno: \"%s\"", bad[i]);
		assert_int_equal(k.len, 0);
	}
	assert_int_equal(nvme_auth_parse_key(NULL, &k), -EINVAL);
	assert_int_equal(nvme_auth_parse_key(key00_32, NULL), -EINVAL);
}

/* parse(--hmac=0 key), with the hash nvme-cli used: its --hmac output */
static void transform_check(const char *plain, uint8_t hash,
			    const char *transformed)
{
	struct nvme_dhchap_key k, t, want;

	assert_int_equal(nvme_auth_parse_key(plain, &k), 0);
	assert_int_equal(nvme_auth_parse_key(transformed, &want), 0);
	k.hash = hash;
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, &t), 0);
	assert_int_equal(t.hash, hash);
	assert_int_equal(t.len, nvme_auth_hmac_hash_len(hash));
	assert_memory_equal(t.key, want.key, t.len);
	/* in place */
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, &k), 0);
	assert_memory_equal(k.key, want.key, t.len);
}

static void test_transform_vectors(void **state)
{
	struct nvme_dhchap_key k, t, want;

	(void)state;
	transform_check(key00_32, NVME_AUTH_HASH_SHA256, key01_32);
	transform_check(key00_48, NVME_AUTH_HASH_SHA384, key02_48);
	transform_check(key00_64, NVME_AUTH_HASH_SHA512, key03_64);

	/* a DHHC-1:01 key used as host key, then as controller key */
	assert_int_equal(nvme_auth_parse_key(key01_32, &k), 0);
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, &t), 0);
	assert_int_equal(nvme_auth_parse_key(key01_32_host, &want), 0);
	assert_memory_equal(t.key, want.key, 32);
	assert_int_equal(nvme_auth_transform_key(&k, T_SUBNQN, &t), 0);
	assert_int_equal(nvme_auth_parse_key(key01_32_sub, &want), 0);
	assert_memory_equal(t.key, want.key, 32);

	/* hash 0: the key as it is, whatever the NQN */
	assert_int_equal(nvme_auth_parse_key(key00_48, &k), 0);
	assert_int_equal(nvme_auth_transform_key(&k, T_SUBNQN, &t), 0);
	assert_int_equal(t.len, 48);
	assert_int_equal(t.hash, 0);
	assert_memory_equal(t.key, k.key, 48);
}

/* A 64-byte secret with SHA-256 becomes 32 bytes, the rest cleared. */
static void test_transform_lengths(void **state)
{
	struct nvme_dhchap_key k, t;
	uint8_t zero[32] = { 0 };

	(void)state;
	assert_int_equal(nvme_auth_parse_key(key00_64, &k), 0);
	k.hash = NVME_AUTH_HASH_SHA256;
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, &t), 0);
	assert_int_equal(t.len, 32);
	assert_memory_equal(t.key + 32, zero, 32);
	/* a 32-byte secret with SHA-512 becomes 64 bytes */
	assert_int_equal(nvme_auth_parse_key(key00_32, &k), 0);
	k.hash = NVME_AUTH_HASH_SHA512;
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, &t), 0);
	assert_int_equal(t.len, 64);
}

static void test_transform_refused(void **state)
{
	char nqn[NVME_AUTH_NQN_MAX + 2];
	struct nvme_dhchap_key k, t;

	(void)state;
	assert_int_equal(nvme_auth_parse_key(key01_32, &k), 0);
	assert_int_equal(nvme_auth_transform_key(NULL, T_HOSTNQN, &t), -EINVAL);
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, NULL), -EINVAL);
	assert_int_equal(nvme_auth_transform_key(&k, NULL, &t), -EINVAL);
	assert_int_equal(nvme_auth_transform_key(&k, "", &t), -EINVAL);
	memset(nqn, 'a', sizeof(nqn) - 1);
	nqn[sizeof(nqn) - 1] = '\0'; /* 224 bytes */
	assert_int_equal(nvme_auth_transform_key(&k, nqn, &t), -EINVAL);
	nqn[NVME_AUTH_NQN_MAX] = '\0'; /* 223: the longest NQN */
	assert_int_equal(nvme_auth_transform_key(&k, nqn, &t), 0);
	k.len = 33;
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, &t), -EINVAL);
	k.len = 32;
	k.hash = 4;
	assert_int_equal(nvme_auth_transform_key(&k, T_HOSTNQN, &t), -EINVAL);
}

static void test_names(void **state)
{
	static const char *const groups[] = { "null",	   "ffdhe2048",
					      "ffdhe3072", "ffdhe4096",
					      "ffdhe6144", "ffdhe8192" };
	static const size_t glen[] = { 0, 256, 384, 512, 768, 1024 };
	uint8_t i;

	(void)state;
	assert_int_equal(nvme_auth_hmac_id("hmac(sha256)"), 1);
	assert_int_equal(nvme_auth_hmac_id("hmac(sha384)"), 2);
	assert_int_equal(nvme_auth_hmac_id("hmac(sha512)"), 3);
	assert_int_equal(nvme_auth_hmac_id("hmac(sha256)x"),
			 NVME_AUTH_HASH_INVALID);
	assert_int_equal(nvme_auth_hmac_id("sha256"), NVME_AUTH_HASH_INVALID);
	assert_int_equal(nvme_auth_hmac_id(NULL), NVME_AUTH_HASH_INVALID);
	assert_string_equal(nvme_auth_hmac_name(3), "hmac(sha512)");
	assert_null(nvme_auth_hmac_name(0));
	assert_null(nvme_auth_hmac_name(4));
	assert_int_equal(nvme_auth_hmac_hash_len(0), 0);
	assert_int_equal(nvme_auth_hmac_hash_len(2), 48);
	assert_int_equal(nvme_auth_hmac_hash_len(0xff), 0);
	for (i = 0; i < 6; i++) {
		assert_string_equal(nvme_auth_dhgroup_name(i), groups[i]);
		assert_int_equal(nvme_auth_dhgroup_id(groups[i]), i);
		assert_int_equal(nvme_auth_dhgroup_len(i), glen[i]);
	}
	assert_null(nvme_auth_dhgroup_name(6));
	assert_int_equal(nvme_auth_dhgroup_len(6), 0);
	assert_int_equal(nvme_auth_dhgroup_id("ffdhe2048 "),
			 NVME_AUTH_DHGROUP_INVALID);
	assert_int_equal(nvme_auth_dhgroup_id(NULL), NVME_AUTH_DHGROUP_INVALID);
}

static void test_seqnum(void **state)
{
	uint32_t a, b;

	(void)state;
	a = nvme_auth_get_seqnum();
	b = nvme_auth_get_seqnum();
	assert_int_not_equal(a, 0);
	assert_int_not_equal(b, 0);
	assert_true(b == a + 1 || (a == UINT32_MAX && b == 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_vectors),
		cmocka_unit_test(test_parse_crc),
		cmocka_unit_test(test_parse_refused),
		cmocka_unit_test(test_transform_vectors),
		cmocka_unit_test(test_transform_lengths),
		cmocka_unit_test(test_transform_refused),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_seqnum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

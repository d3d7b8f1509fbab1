// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The two DH-HMAC-CHAP engines against each other, as a transport would
 * run them (AUTH_Send of the host's message to the controller, AUTH_Receive
 * of the controller's): every hash with every group, unidirectional and
 * bidirectional; wrong keys refused with the kernel's reason codes;
 * messages truncated, lengthened, mutated or forged refused without
 * reading past them (each message travels in a heap buffer of exactly its
 * length, so ASan sees any overread).
 */
#include "auth_test.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>

/* Keys made with nvme gen-dhchap-key (test_nvme_auth_keys.c). */
static const char *const keys[] = {
	"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
	"DHHC-1:01:vpq37fuC3dXlrFdBeL3l55rZX5frlPLAL6XiWUcBs2JLmx7/:",
	"DHHC-1:02:x9EuoiBLt93GQg1rJPzuiO5UtrUTXXNUfDw+q2WAtGEJzdlMGb9jDrquFx"
	"r8a8oFCBJbcg==:",
	"DHHC-1:03:ZbCdRA7ayzS4FZXZLrJrClq7fOF2fBbFVvp5ynLkjhN0Jm2kePWpkvpbWB"
	"G9si0OtT0a6b9vz75UFLwX3+f+fUXK2OM=:",
	"DHHC-1:00:iIWo9tHjp1G1MJWa+ZzeFMhtZeAfajZ2qwsCC36LpKXSmCbi:",
};

enum { M_NEGOTIATE, M_CHALLENGE, M_REPLY, M_SUCCESS1, M_SUCCESS2, M_MAX };

/* Called with each message before delivery; may change it and its length. */
typedef void (*hook_fn)(int msg, uint8_t *buf, size_t *len, void *arg);

struct pair {
	struct nvme_auth_host h;
	struct nvme_auth_ctrl c;
	size_t len[M_MAX]; /* each message's length as sent, 0: none */
};

struct cfg {
	int host_key, ctrl_key; /* keys[] indexes; -1: none */
	int c_host_key, c_ctrl_key; /* the controller's view of them */
	uint8_t hash, dhgid;
};

static void pair_init(struct pair *p, const struct cfg *cf)
{
	struct nvme_auth_params hp = {
		.hostnqn = T_HOSTNQN,
		.subsysnqn = T_SUBNQN,
		.host_secret = keys[cf->host_key],
		.ctrl_secret = cf->ctrl_key < 0 ? NULL : keys[cf->ctrl_key],
		.transaction = 7,
	};
	struct nvme_auth_params cp = {
		.hostnqn = T_HOSTNQN,
		.subsysnqn = T_SUBNQN,
		.host_secret = keys[cf->c_host_key],
		.ctrl_secret = cf->c_ctrl_key < 0 ? NULL : keys[cf->c_ctrl_key],
		.hash_id = cf->hash,
		.dhgroup_id = cf->dhgid,
	};

	memset(p->len, 0, sizeof(p->len));
	assert_int_equal(nvme_auth_host_init(&p->h, &hp), 0);
	assert_int_equal(nvme_auth_ctrl_init(&p->c, &cp), 0);
}

static void pair_clear(struct pair *p)
{
	nvme_auth_host_clear(&p->h);
	nvme_auth_ctrl_clear(&p->c);
}

/* The message in a heap buffer of exactly its length, after the hook. */
static uint8_t *deliver(int msg, const uint8_t *buf, size_t *len, hook_fn fn,
			void *arg)
{
	uint8_t tmp[NVME_AUTH_BUF_SIZE + 16];
	uint8_t *m;

	memcpy(tmp, buf, *len);
	if (fn)
		fn(msg, tmp, len, arg);
	m = malloc(*len ? *len : 1);
	assert_non_null(m);
	memcpy(m, tmp, *len);
	return m;
}

static void to_ctrl(struct pair *p, int msg, const uint8_t *buf, size_t len,
		    hook_fn fn, void *arg)
{
	uint8_t *m = deliver(msg, buf, &len, fn, arg);

	p->len[msg] = len;
	assert_int_equal(nvme_auth_ctrl_send(&p->c, m, len), 0);
	free(m);
}

/* AUTH_Receive: the controller's message, then the host's answer. */
static ssize_t to_host(struct pair *p, int msg, uint8_t *out, hook_fn fn,
		       void *arg)
{
	uint8_t buf[NVME_AUTH_BUF_SIZE], *m;
	ssize_t n = nvme_auth_ctrl_receive(&p->c, buf, sizeof(buf));
	size_t len;

	assert_true(n > 0);
	len = (size_t)n;
	m = deliver(msg, buf, &len, fn, arg);
	p->len[msg] = len;
	n = nvme_auth_host_recv(&p->h, m, len, out, NVME_AUTH_MAX_MSG);
	free(m);
	assert_true(n >= 0);
	return n;
}

/* One transaction, as a transport runs it; hook may change messages. */
static void flow(struct pair *p, hook_fn fn, void *arg)
{
	uint8_t out[NVME_AUTH_MAX_MSG];
	ssize_t n;
	int next;

	n = nvme_auth_host_negotiate(&p->h, out, sizeof(out));
	assert_int_equal(n, 72);
	to_ctrl(p, M_NEGOTIATE, out, (size_t)n, fn, arg);
	for (next = M_CHALLENGE; next < M_SUCCESS2; next += 2) {
		n = to_host(p, next, out, fn, arg);
		if (n > 0) {
			if (nvme_auth_ctrl_status(&p->c, NULL) ==
			    NVME_AUTH_FAILED)
				break;
			to_ctrl(p,
				out[1] == NVME_AUTH_DHCHAP_MESSAGE_FAILURE2 ?
					M_MAX - 1 :
					next + 1,
				out, (size_t)n, fn, arg);
		}
		if (nvme_auth_host_status(&p->h, NULL) != NVME_AUTH_IN_PROGRESS)
			break;
	}
}

static void expect_success(struct pair *p)
{
	uint8_t r = 0xee;

	assert_int_equal(nvme_auth_host_status(&p->h, &r), NVME_AUTH_SUCCESS);
	assert_int_equal(r, 0);
	assert_int_equal(nvme_auth_ctrl_status(&p->c, &r), NVME_AUTH_SUCCESS);
	assert_int_equal(r, 0);
	assert_true(nvme_auth_ctrl_authenticated(&p->c));
}

static void run_ok(uint8_t hash, uint8_t dhgid, bool bidir, int hk, int ck)
{
	struct cfg cf = { hk, bidir ? ck : -1, hk, ck, hash, dhgid };
	size_t hl = nvme_auth_hmac_hash_len(hash);
	size_t glen = nvme_auth_dhgroup_len(dhgid);
	struct pair p;

	pair_init(&p, &cf);
	flow(&p, NULL, NULL);
	expect_success(&p);
	assert_int_equal(p.c.hash_id, hash);
	assert_int_equal(p.c.dhgid, dhgid);
	assert_int_equal(p.len[M_NEGOTIATE], 72);
	assert_int_equal(p.len[M_CHALLENGE], 16 + hl + glen);
	assert_int_equal(p.len[M_REPLY], 16 + 2 * hl + glen);
	assert_int_equal(p.len[M_SUCCESS1], 16 + (bidir ? hl : 0));
	assert_int_equal(p.len[M_SUCCESS2], bidir ? 16 : 0);
	pair_clear(&p);
}

/* --small-groups (the run under valgrind): ffdhe2048 is the largest. */
static bool small_groups;

/* Every hash with the NULL group and ffdhe2048..6144, both directions. */
static void test_matrix(void **state)
{
	uint8_t hash, gid, last;

	(void)state;
	last = small_groups ? NVME_AUTH_DHGROUP_2048 : NVME_AUTH_DHGROUP_6144;
	for (hash = 1; hash <= 3; hash++) {
		for (gid = 0; gid <= last; gid++)
			run_ok(hash, gid, true, (hash + gid) % 5,
			       (hash + gid + 1) % 5);
		run_ok(hash, NVME_AUTH_DHGROUP_NULL, false, hash, 0);
		run_ok(hash, NVME_AUTH_DHGROUP_2048, false, 4, 0);
	}
}

/* ffdhe8192: slow, so two cases. */
static void test_ffdhe8192(void **state)
{
	(void)state;
	if (small_groups)
		skip();
	run_ok(NVME_AUTH_HASH_SHA512, NVME_AUTH_DHGROUP_8192, true, 3, 2);
	run_ok(NVME_AUTH_HASH_SHA256, NVME_AUTH_DHGROUP_8192, false, 0, 0);
}

/* The controller holds another host key: Failure1, reason FAILED. */
static void wrong_host_key(uint8_t dhgid)
{
	struct cfg cf = { 0, -1, 4, -1, NVME_AUTH_HASH_SHA256, dhgid };
	uint8_t buf[128], r = 0;
	struct pair p;

	pair_init(&p, &cf);
	flow(&p, NULL, NULL);
	assert_int_equal(nvme_auth_ctrl_status(&p.c, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	assert_false(nvme_auth_ctrl_authenticated(&p.c));
	assert_int_equal(nvme_auth_host_status(&p.h, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	assert_int_equal(p.len[M_SUCCESS1], 8); /* the Failure1 */
	/* failed for good: no new transaction, Failure1 again */
	assert_int_equal(nvme_auth_ctrl_send(&p.c, buf, 72), -EPERM);
	assert_int_equal(nvme_auth_ctrl_receive(&p.c, buf, sizeof(buf)), 8);
	assert_int_equal(buf[1], NVME_AUTH_DHCHAP_MESSAGE_FAILURE1);
	assert_int_equal(buf[6], NVME_AUTH_DHCHAP_FAILURE_REASON_FAILED);
	assert_int_equal(buf[7], NVME_AUTH_DHCHAP_FAILURE_FAILED);
	pair_clear(&p);
}

static void test_wrong_host_key(void **state)
{
	(void)state;
	wrong_host_key(NVME_AUTH_DHGROUP_NULL);
	wrong_host_key(NVME_AUTH_DHGROUP_2048);
}

/* The controller proves another key: the host sends Failure2 (FAILED). */
static void wrong_ctrl_key(uint8_t dhgid)
{
	struct cfg cf = { 1, 2, 1, 3, NVME_AUTH_HASH_SHA384, dhgid };
	uint8_t r = 0;
	struct pair p;

	pair_init(&p, &cf);
	flow(&p, NULL, NULL);
	assert_int_equal(nvme_auth_host_status(&p.h, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	assert_int_equal(p.len[M_SUCCESS1], 16 + 48);
	assert_int_equal(p.len[M_SUCCESS2], 8); /* the Failure2 */
	assert_int_equal(nvme_auth_ctrl_status(&p.c, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	assert_false(nvme_auth_ctrl_authenticated(&p.c));
	pair_clear(&p);
}

static void test_wrong_ctrl_key(void **state)
{
	(void)state;
	wrong_ctrl_key(NVME_AUTH_DHGROUP_NULL);
	wrong_ctrl_key(NVME_AUTH_DHGROUP_3072);
}

/* Asked to authenticate itself without a key: Failure1 (FAILED). */
static void test_bidir_without_ctrl_key(void **state)
{
	struct cfg cf = { 1, 2, 1, -1, NVME_AUTH_HASH_SHA256, 0 };
	uint8_t r = 0;
	struct pair p;

	(void)state;
	pair_init(&p, &cf);
	flow(&p, NULL, NULL);
	assert_int_equal(nvme_auth_ctrl_status(&p.c, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	assert_int_equal(nvme_auth_host_status(&p.h, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	pair_clear(&p);
}

/* Reserved bytes of each message: a change there changes nothing. */
static bool reserved(int msg, size_t off)
{
	switch (msg) {
	case M_CHALLENGE:
		return off == 2 || off == 3 || off == 7;
	case M_REPLY:
		return off == 2 || off == 3 || off == 7 || off == 9;
	case M_SUCCESS1:
		return off == 2 || off == 3 || off == 7 ||
		       (off >= 9 && off < 16);
	case M_SUCCESS2:
		return off == 2 || off == 3 || off >= 6;
	default:
		return false;
	}
}

struct mutation {
	int msg;
	size_t off;
	uint8_t xor ;
	size_t newlen; /* 0: keep */
	bool hit;
};

static void mutate(int msg, uint8_t *buf, size_t *len, void *arg)
{
	struct mutation *m = arg;

	if (msg != m->msg)
		return;
	m->hit = true;
	if (m->newlen) {
		if (m->newlen > *len)
			memset(buf + *len, 0, m->newlen - *len);
		*len = m->newlen;
	}
	if (m->off < *len)
		buf[m->off] ^= m->xor ;
}

/* Never both ends satisfied after a change the protocol covers. */
static void mutation_run(const struct cfg *cf, struct mutation *m)
{
	bool both, res;
	struct pair p;

	pair_init(&p, cf);
	flow(&p, mutate, m);
	both = nvme_auth_host_status(&p.h, NULL) == NVME_AUTH_SUCCESS &&
	       nvme_auth_ctrl_authenticated(&p.c);
	res = m->off < SIZE_MAX && !m->newlen && reserved(m->msg, m->off);
	if (m->hit && both != res)
		fail_msg("message %d offset %zu xor %02x len %zu: %s", m->msg,
			 m->off, m->xor, m->newlen,
			 both ? "authenticated" : "refused");
	pair_clear(&p);
}

/* Every byte of every message after Negotiate, one at a time. */
static void mutate_all(const struct cfg *cf, uint8_t xor, size_t stride)
{
	size_t lens[M_MAX], off;
	struct pair p;
	int msg;

	pair_init(&p, cf);
	flow(&p, NULL, NULL);
	expect_success(&p);
	memcpy(lens, p.len, sizeof(lens));
	pair_clear(&p);
	for (msg = M_CHALLENGE; msg < M_MAX; msg++) {
		for (off = 0; off < lens[msg]; off += off < 16 ? 1 : stride) {
			struct mutation m = { msg, off, xor, 0, false };

			mutation_run(cf, &m);
			assert_true(m.hit);
		}
	}
}

static void test_mutations(void **state)
{
	struct cfg bidir = { 1, 2, 1, 2, NVME_AUTH_HASH_SHA256, 0 };
	struct cfg dh = { 3, 4, 3, 4, NVME_AUTH_HASH_SHA512, 1 };

	(void)state;
	mutate_all(&bidir, 0x01, 1);
	mutate_all(&bidir, 0x80, 16);
	/* with ffdhe2048: every header byte, then every 37th */
	mutate_all(&dh, 0x01, 37);
}

/* Every message cut short, and one byte too long. */
static void test_lengths(void **state)
{
	struct cfg cfs[] = {
		{ 1, 2, 1, 2, NVME_AUTH_HASH_SHA256, 0 },
		{ 1, -1, 1, -1, NVME_AUTH_HASH_SHA384, 0 },
	};
	size_t lens[M_MAX], l;
	struct pair p;
	size_t i;
	int msg;

	(void)state;
	for (i = 0; i < sizeof(cfs) / sizeof(cfs[0]); i++) {
		pair_init(&p, &cfs[i]);
		flow(&p, NULL, NULL);
		expect_success(&p);
		memcpy(lens, p.len, sizeof(lens));
		pair_clear(&p);
		for (msg = M_NEGOTIATE; msg < M_MAX; msg++) {
			if (!lens[msg])
				continue;
			for (l = 1; l <= lens[msg] + 1; l++) {
				struct mutation m = { msg, SIZE_MAX, 0, l,
						      false };

				if (l == lens[msg])
					continue;
				/* the host reads up to AL: longer is padding */
				if (l > lens[msg] &&
				    (msg == M_CHALLENGE || msg == M_SUCCESS1))
					continue;
				mutation_run(&cfs[i], &m);
				assert_true(m.hit);
			}
		}
	}
}

/* A full AUTH_Receive buffer (AL 4096, zero-filled) is what hosts see. */
static void test_host_reads_al(void **state)
{
	struct cfg cf = { 2, 3, 2, 3, NVME_AUTH_HASH_SHA384, 2 };
	uint8_t *al = calloc(1, NVME_AUTH_BUF_SIZE), out[NVME_AUTH_MAX_MSG];
	struct pair p;
	ssize_t n;

	(void)state;
	pair_init(&p, &cf);
	n = nvme_auth_host_negotiate(&p.h, out, sizeof(out));
	assert_int_equal(nvme_auth_ctrl_send(&p.c, out, (size_t)n), 0);
	assert_true(nvme_auth_ctrl_receive(&p.c, al, NVME_AUTH_BUF_SIZE) > 0);
	n = nvme_auth_host_recv(&p.h, al, NVME_AUTH_BUF_SIZE, out, sizeof(out));
	assert_int_equal(n, 16 + 2 * 48 + 384);
	assert_int_equal(nvme_auth_ctrl_send(&p.c, out, (size_t)n), 0);
	memset(al, 0, NVME_AUTH_BUF_SIZE);
	assert_true(nvme_auth_ctrl_receive(&p.c, al, NVME_AUTH_BUF_SIZE) > 0);
	n = nvme_auth_host_recv(&p.h, al, NVME_AUTH_BUF_SIZE, out, sizeof(out));
	assert_int_equal(n, 16);
	assert_int_equal(nvme_auth_ctrl_send(&p.c, out, (size_t)n), 0);
	expect_success(&p);
	pair_clear(&p);
	free(al);
}

/* The Negotiate after a change at @off, and the controller's verdict. */
static uint8_t negotiate_with(uint8_t hash, uint8_t dhgid, size_t off,
			      uint8_t val, uint8_t *picked_hash,
			      uint8_t *picked_group)
{
	struct cfg cf = { 1, -1, 1, -1, hash, dhgid };
	uint8_t out[NVME_AUTH_MAX_MSG], r = 0;
	struct pair p;
	ssize_t n;

	pair_init(&p, &cf);
	n = nvme_auth_host_negotiate(&p.h, out, sizeof(out));
	out[off] = val;
	assert_int_equal(nvme_auth_ctrl_send(&p.c, out, (size_t)n), 0);
	nvme_auth_ctrl_status(&p.c, &r);
	*picked_hash = p.c.hash_id;
	*picked_group = p.c.dhgid;
	if (!r) {
		n = nvme_auth_ctrl_receive(&p.c, out, sizeof(out));
		assert_true(n > 16);
		assert_int_equal(out[8], *picked_hash);
		assert_int_equal(out[9], *picked_group);
	}
	pair_clear(&p);
	return r;
}

static void test_negotiate(void **state)
{
	uint8_t h, g;

	(void)state;
	/* sc_c: no secure channel concatenation here */
	assert_int_equal(negotiate_with(1, 0, 6, 1, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_CONCAT_MISMATCH);
	assert_int_equal(negotiate_with(1, 0, 7, 2, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE);
	assert_int_equal(negotiate_with(1, 0, 7, 0, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE);
	assert_int_equal(negotiate_with(1, 0, 8, 2, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD);
	assert_int_equal(negotiate_with(1, 0, 10, 31, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD);
	assert_int_equal(negotiate_with(1, 0, 11, 31, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD);
	assert_int_equal(negotiate_with(1, 0, 10, 0, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE);
	assert_int_equal(negotiate_with(1, 0, 11, 0, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE);
	/* the host offers SHA-256 only (halen 1): the controller falls back */
	assert_int_equal(negotiate_with(3, 0, 10, 1, &h, &g), 0);
	assert_int_equal(h, NVME_AUTH_HASH_SHA256);
	/* ... and the NULL group only: no downgrade from ffdhe3072 */
	assert_int_equal(negotiate_with(1, 2, 11, 1, &h, &g),
			 NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE);
	/* NULL and ffdhe2048: ffdhe2048 instead of ffdhe3072 */
	assert_int_equal(negotiate_with(1, 2, 11, 2, &h, &g), 0);
	assert_int_equal(g, NVME_AUTH_DHGROUP_2048);
	/* an unknown hash id first in the list is skipped */
	assert_int_equal(negotiate_with(2, 0, 12, 0x77, &h, &g), 0);
	assert_int_equal(h, NVME_AUTH_HASH_SHA384);
}

/* The Negotiate byte for byte as the kernel's host builds it. */
static void test_negotiate_bytes(void **state)
{
	struct cfg cf = { 1, -1, 1, -1, NVME_AUTH_HASH_SHA256, 0 };
	uint8_t out[NVME_AUTH_MAX_MSG], want[72] = {
		[0] = NVME_AUTH_COMMON_MESSAGES,
		[1] = NVME_AUTH_DHCHAP_MESSAGE_NEGOTIATE,
		[4] = 7, /* T_ID */
		[6] = NVME_AUTH_SECP_NOSC,
		[7] = 1, /* napd */
		[8] = NVME_AUTH_DHCHAP_AUTH_ID,
		[10] = 3, /* halen */
		[11] = 6, /* dhlen */
		[12] = 1,
		[13] = 2,
		[14] = 3,
		[42] = 0,
		[43] = 1,
		[44] = 2,
		[45] = 3,
		[46] = 4,
		[47] = 5,
	};
	struct pair p;

	(void)state;
	pair_init(&p, &cf);
	assert_int_equal(nvme_auth_host_negotiate(&p.h, out, sizeof(out)), 72);
	assert_memory_equal(out, want, sizeof(want));
	pair_clear(&p);
}

/* Challenges a hostile controller could send; the host's verdicts. */
struct forged {
	size_t off;
	uint8_t val;
	size_t len; /* 0: as sent */
	uint8_t reason;
	bool failure2;
};

static void forge_challenge(int msg, uint8_t *buf, size_t *len, void *arg)
{
	const struct forged *f = arg;

	if (msg != M_CHALLENGE)
		return;
	buf[f->off] = f->val;
	if (f->len)
		*len = f->len;
}

static void test_forged_challenge(void **state)
{
	static const struct forged v[] = {
		{ 8, 0, 0, NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE, true },
		{ 8, 4, 0, NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE, true },
		{ 8, 3, 0, NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE, true },
		{ 6, 64, 0, NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE, true },
		{ 9, 6, 0, NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE, true },
		/* ffdhe2048 announced with no DH value */
		{ 9, 1, 0, NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE, true },
		/* a DH value with the NULL group, or longer than sent */
		{ 10, 1, 0, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD, true },
		{ 11, 0xff, 0, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD,
		  true },
		{ 4, 8, 0, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE, false },
		{ 0, 0, 0, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE, false },
		{ 1, 3, 0, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE, false },
		{ 1, 1, 7, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE, false },
		{ 1, 1, 15, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD, true },
	};
	struct cfg cf = { 1, -1, 1, -1, NVME_AUTH_HASH_SHA256, 0 };
	uint8_t r;
	struct pair p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		pair_init(&p, &cf);
		flow(&p, forge_challenge, (void *)&v[i]);
		assert_int_equal(nvme_auth_host_status(&p.h, &r),
				 NVME_AUTH_FAILED);
		if (r != v[i].reason)
			fail_msg("case %zu: reason %u, want %u", i, r,
				 v[i].reason);
		/* Failure2 (8 bytes) reached the controller, or nothing */
		assert_int_equal(p.len[M_SUCCESS2], v[i].failure2 ? 8 : 0);
		assert_false(nvme_auth_ctrl_authenticated(&p.c));
		if (v[i].failure2) {
			/* the controller takes the host's reason */
			assert_int_equal(nvme_auth_ctrl_status(&p.c, &r),
					 NVME_AUTH_FAILED);
			assert_int_equal(r, v[i].reason);
		}
		pair_clear(&p);
	}
}

/* A controller asked to prove itself that answers without rvalid. */
static void drop_rvalid(int msg, uint8_t *buf, size_t *len, void *arg)
{
	(void)arg;
	if (msg != M_SUCCESS1)
		return;
	buf[8] = 0;
	*len = 16;
}

static void test_ctrl_skips_proof(void **state)
{
	struct cfg cf = { 1, 2, 1, 2, NVME_AUTH_HASH_SHA256, 0 };
	struct pair p;
	uint8_t r;

	(void)state;
	pair_init(&p, &cf);
	flow(&p, drop_rvalid, NULL);
	assert_int_equal(nvme_auth_host_status(&p.h, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	assert_int_equal(p.len[M_SUCCESS2], 8);
	pair_clear(&p);
}

/* A Failure1 names the controller's reason only for this transaction. */
static void test_failure1_tid(void **state)
{
	struct cfg cf = { 1, -1, 1, -1, NVME_AUTH_HASH_SHA256, 0 };
	struct nvmf_auth_dhchap_failure_data f = { 0 };
	uint8_t out[NVME_AUTH_MAX_MSG], r;
	struct pair p;

	(void)state;
	pair_init(&p, &cf);
	assert_int_equal(nvme_auth_host_negotiate(&p.h, out, sizeof(out)), 72);
	f.auth_id = NVME_AUTH_DHCHAP_MESSAGE_FAILURE1;
	f.t_id = htole16(8); /* this transaction is 7 */
	f.rescode = 1;
	f.rescode_exp = NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE;
	assert_int_equal(
		nvme_auth_host_recv(&p.h, &f, sizeof(f), out, sizeof(out)), 0);
	nvme_auth_host_status(&p.h, &r);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE);
	assert_int_equal(nvme_auth_host_negotiate(&p.h, out, sizeof(out)), 72);
	f.t_id = htole16(8);
	assert_int_equal(
		nvme_auth_host_recv(&p.h, &f, sizeof(f), out, sizeof(out)), 0);
	nvme_auth_host_status(&p.h, &r);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE);
	pair_clear(&p);
}

/* Re-authentication: a second transaction, the queue stays usable. */
static void test_reauth(void **state)
{
	struct cfg cf = { 3, 1, 3, 1, NVME_AUTH_HASH_SHA512, 1 };
	uint8_t out[NVME_AUTH_MAX_MSG];
	struct pair p;
	ssize_t n;

	(void)state;
	pair_init(&p, &cf);
	flow(&p, NULL, NULL);
	expect_success(&p);
	n = nvme_auth_host_negotiate(&p.h, out, sizeof(out));
	assert_int_equal(out[4], 8); /* the next transaction id */
	assert_int_equal(nvme_auth_ctrl_send(&p.c, out, (size_t)n), 0);
	assert_true(nvme_auth_ctrl_authenticated(&p.c));
	assert_int_equal(nvme_auth_ctrl_status(&p.c, NULL),
			 NVME_AUTH_IN_PROGRESS);
	pair_clear(&p);
	pair_init(&p, &cf);
	flow(&p, NULL, NULL);
	flow(&p, NULL, NULL);
	expect_success(&p);
	pair_clear(&p);
}

/* Messages out of their step; buffers too small; missing arguments. */
static void test_misuse(void **state)
{
	struct cfg cf = { 1, -1, 1, -1, NVME_AUTH_HASH_SHA256, 0 };
	uint8_t out[NVME_AUTH_MAX_MSG], msg[16] = { 1, 2 }, r;
	struct pair p;
	ssize_t n;

	(void)state;
	/* AUTH_Receive before anything: Failure1 (FAILED) */
	pair_init(&p, &cf);
	assert_int_equal(nvme_auth_ctrl_receive(&p.c, out, 7), -ENOSPC);
	assert_int_equal(nvme_auth_ctrl_receive(&p.c, out, sizeof(out)), 8);
	assert_int_equal(out[1], NVME_AUTH_DHCHAP_MESSAGE_FAILURE1);
	assert_int_equal(out[7], NVME_AUTH_DHCHAP_FAILURE_FAILED);
	pair_clear(&p);
	/* a Reply before Negotiate */
	pair_init(&p, &cf);
	assert_int_equal(nvme_auth_ctrl_send(&p.c, msg, sizeof(msg)), 0);
	assert_int_equal(nvme_auth_ctrl_status(&p.c, &r), NVME_AUTH_FAILED);
	assert_int_equal(r, NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE);
	assert_int_equal(nvme_auth_ctrl_send(&p.c, msg, sizeof(msg)), -EPERM);
	pair_clear(&p);
	/* a Success2 after a unidirectional success */
	pair_init(&p, &cf);
	flow(&p, NULL, NULL);
	expect_success(&p);
	msg[1] = NVME_AUTH_DHCHAP_MESSAGE_SUCCESS2;
	msg[4] = 7;
	assert_int_equal(nvme_auth_ctrl_send(&p.c, msg, sizeof(msg)), 0);
	assert_false(nvme_auth_ctrl_authenticated(&p.c));
	pair_clear(&p);
	/* small buffers leave the engines as they were */
	pair_init(&p, &cf);
	assert_int_equal(nvme_auth_host_recv(&p.h, msg, 16, out, sizeof(out)),
			 -EINVAL); /* nothing expected yet */
	assert_int_equal(nvme_auth_host_negotiate(&p.h, out, 71), -ENOSPC);
	n = nvme_auth_host_negotiate(&p.h, out, sizeof(out));
	assert_int_equal(nvme_auth_ctrl_send(&p.c, out, (size_t)n), 0);
	assert_int_equal(nvme_auth_ctrl_receive(&p.c, out, 47), -ENOSPC);
	n = nvme_auth_ctrl_receive(&p.c, out, sizeof(out));
	assert_int_equal(n, 48);
	assert_int_equal(
		nvme_auth_host_recv(&p.h, out, (size_t)n, msg, sizeof(msg)),
		-ENOSPC);
	assert_int_equal(nvme_auth_host_status(&p.h, NULL),
			 NVME_AUTH_IN_PROGRESS);
	assert_int_equal(nvme_auth_ctrl_send(&p.c, NULL, 1), -EINVAL);
	assert_int_equal(nvme_auth_ctrl_send(&p.c, out, 0), -EINVAL);
	assert_int_equal(nvme_auth_ctrl_receive(&p.c, NULL, 1), -EINVAL);
	assert_int_equal(nvme_auth_host_recv(&p.h, NULL, 1, out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(nvme_auth_host_status(NULL, &r), NVME_AUTH_FAILED);
	assert_false(nvme_auth_ctrl_authenticated(NULL));
	pair_clear(&p);
}

static void test_params(void **state)
{
	struct nvme_auth_params prm = {
		.hostnqn = T_HOSTNQN,
		.subsysnqn = T_SUBNQN,
		.host_secret = keys[0],
	};
	struct nvme_auth_params bad;
	struct nvme_auth_host h;
	struct nvme_auth_ctrl c;

	(void)state;
	assert_int_equal(nvme_auth_host_init(NULL, &prm), -EINVAL);
	assert_int_equal(nvme_auth_ctrl_init(&c, NULL), -EINVAL);
	bad = prm;
	bad.host_secret = NULL;
	assert_int_equal(nvme_auth_host_init(&h, &bad), -ENOKEY);
	assert_int_equal(nvme_auth_ctrl_init(&c, &bad), -ENOKEY);
	bad = prm;
	bad.ctrl_secret = "DHHC-1:00:AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"
			  "Hh+KfiaR:";
	assert_int_equal(nvme_auth_host_init(&h, &bad), -EKEYREJECTED);
	assert_int_equal(h.host_key.len, 0); /* cleared */
	bad = prm;
	bad.hostnqn = "";
	assert_int_equal(nvme_auth_ctrl_init(&c, &bad), -EINVAL);
	bad = prm;
	bad.hash_id = 4;
	assert_int_equal(nvme_auth_ctrl_init(&c, &bad), -EINVAL);
	bad = prm;
	bad.dhgroup_id = 6;
	assert_int_equal(nvme_auth_ctrl_init(&c, &bad), -EINVAL);
	/* an engine that failed init does nothing */
	assert_int_equal(nvme_auth_ctrl_receive(&c, &bad, sizeof(bad)),
			 -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_ffdhe8192),
		cmocka_unit_test(test_wrong_host_key),
		cmocka_unit_test(test_wrong_ctrl_key),
		cmocka_unit_test(test_bidir_without_ctrl_key),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_host_reads_al),
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_negotiate_bytes),
		cmocka_unit_test(test_forged_challenge),
		cmocka_unit_test(test_ctrl_skips_proof),
		cmocka_unit_test(test_failure1_tid),
		cmocka_unit_test(test_reauth),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_params),
	};

	small_groups = argc > 1 && !strcmp(argv[1], "--small-groups");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

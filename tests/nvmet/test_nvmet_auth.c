// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DH-HMAC-CHAP between the in-process host and rdmarw-nvmet (issue 27):
 * a host with a key authenticates on the admin queue and on every I/O
 * queue (Connect result AUTHREQ.ATR), uni- and bidirectionally, with each
 * hash and the NULL and ffdhe2048 groups; a wrong host key is refused with
 * the Failure1 delivered (the host sees -EKEYREJECTED, not a dead queue),
 * a wrong controller key is caught by the host, a host that sends no key
 * or skips authentication gets nothing but AUTH_Send/AUTH_Receive and
 * Property Get, malformed AUTH commands are refused and change nothing,
 * re-authentication works and is bounded.
 */
#include "nvmet_env.h"

#include "auth.h"
#include "config.h"

/* Keys made with nvme gen-dhchap-key (tests/nvme/test_nvme_auth_keys.c). */
#define KEY_A "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"
#define KEY_B "DHHC-1:01:vpq37fuC3dXlrFdBeL3l55rZX5frlPLAL6XiWUcBs2JLmx7/:"
#define KEY_C "DHHC-1:00:iIWo9tHjp1G1MJWa+ZzeFMhtZeAfajZ2qwsCC36LpKXSmCbi:"
#define KEY_D                                                               \
	"DHHC-1:03:ZbCdRA7ayzS4FZXZLrJrClq7fOF2fBbFVvp5ynLkjhN0Jm2kePWpkvp" \
	"bWBG9si0OtT0a6b9vz75UFLwX3+f+fUXK2OM=:"

static const char *const hosts[] = { NVMEH_DEFAULT_HOSTNQN };

/*
 * A target of NV_NQN (1 MiB) allowing the host (or any host), with @hk
 * as its DH-HMAC-CHAP table (NULL: none).
 */
static void start_on(struct nv_env *e, struct nvmet_target_opts *to,
		     const struct nvmet_host_opts *hk, bool any,
		     const char *profile, bool threaded)
{
	nvmet_target_opts_init(to);
	to->addr = "10.0.0.2";
	to->port = NV_PORT;
	to->subnqn = NV_NQN;
	to->ns[0].size = 1u << 20;
	to->hosts = any ? NULL : hosts;
	to->nr_hosts = any ? 0 : 1;
	to->allow_any_host = any;
	to->host_keys = hk;
	to->nr_host_keys = hk ? 1 : 0;
	nv_env_init(e, profile,
		    &(struct nv_cfg){ .no_connect = true,
				      .threaded = threaded,
				      .topts = to });
}

static void start(struct nv_env *e, struct nvmet_target_opts *to,
		  const struct nvmet_host_opts *hk, bool any)
{
	start_on(e, to, hk, any, "rxe", false);
}

static struct nvmeh_ctrl *connect_with(struct nv_env *e, const char *key,
				       const char *ckey)
{
	struct nvmeh_opts o = nv_host_opts(e, NV_PORT, NV_NQN);

	snprintf(o.dhchap_secret, sizeof(o.dhchap_secret), "%s",
		 key ? key : "");
	snprintf(o.dhchap_ctrl_secret, sizeof(o.dhchap_ctrl_secret), "%s",
		 ckey ? ckey : "");
	return nvmeh_ctrl_create(&o);
}

/* A write and a read back on every I/O queue. */
static void check_io(struct nvmeh_ctrl *c)
{
	const struct nvmeh_info *info = nvmeh_ctrl_info(c);
	u8 out[512], in[512];
	unsigned int q;

	for (q = 1; q <= info->nr_io_queues; q++) {
		nv_fill(out, sizeof(out), q);
		memset(in, 0, sizeof(in));
		assert_int_equal(nvmeh_rw(c, q, true, q, 1, out), 0);
		assert_int_equal(nvmeh_rw(c, q, false, q, 1, in), 0);
		assert_memory_equal(in, out, sizeof(out));
	}
}

static void auth_case(const char *hash, const char *group, bool bidi)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = {
		.nqn = NVMEH_DEFAULT_HOSTNQN,
		.dhchap_key = KEY_A,
		.dhchap_ctrl_key = bidi ? KEY_B : NULL,
		.dhchap_hash = hash,
		.dhchap_dhgroup = group,
	};
	struct nvmet_target_opts to;
	struct nvmeh_ctrl *c;

	start(&e, &to, &hk, false);
	c = connect_with(&e, KEY_A, bidi ? KEY_B : NULL);
	if (IS_ERR(c))
		fail_msg("%s %s %s: %ld", hash, group, bidi ? "bidi" : "uni",
			 PTR_ERR(c));
	e.c = c;
	assert_int_equal(nvmeh_ctrl_info(c)->nr_io_queues, 2);
	check_io(c);
	nv_env_fini(&e);
}

/* Each hash with the NULL group and ffdhe2048, one way. */
static void test_unidirectional(void **state)
{
	static const char *const hashes[] = { "hmac(sha256)", "hmac(sha384)",
					      "hmac(sha512)" };
	static const char *const groups[] = { "null", "ffdhe2048" };
	unsigned int i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(hashes); i++)
		for (j = 0; j < ARRAY_SIZE(groups); j++)
			auth_case(hashes[i], groups[j], false);
}

/* ... and both ways (the controller proves KEY_B). */
static void test_bidirectional(void **state)
{
	(void)state;
	auth_case("hmac(sha256)", "null", true);
	auth_case("hmac(sha384)", "ffdhe2048", true);
	auth_case("hmac(sha512)", "ffdhe2048", true);
}

/*
 * A wrong host key: the host reads the Failure1 (-EKEYREJECTED, as the
 * kernel's host: "Key was rejected by service"); the target then tears
 * the controller down.
 */
static void test_wrong_host_key(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A };
	struct nvmet_target_opts to;
	struct nvmet_target_stats st;
	struct nvmeh_ctrl *c;

	(void)state;
	start(&e, &to, &hk, false);
	c = connect_with(&e, KEY_C, NULL);
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -EKEYREJECTED);
	nv_wait_target(&e, 0, 0);
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.ctrls_created, 1);
	/* the right key still works afterwards */
	e.c = connect_with(&e, KEY_A, NULL);
	assert_false(IS_ERR(e.c));
	check_io(e.c);
	nv_env_fini(&e);
}

/* The controller does not hold the controller key the host expects. */
static void test_wrong_ctrl_key(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A,
				      .dhchap_ctrl_key = KEY_B };
	struct nvmet_target_opts to;
	struct nvmeh_ctrl *c;

	(void)state;
	start(&e, &to, &hk, false);
	c = connect_with(&e, KEY_A, KEY_C);
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -EKEYREJECTED);
	nv_wait_target(&e, 0, 0);
	/* nor does a target without one pass for bidirectional */
	hk.dhchap_ctrl_key = NULL;
	nv_env_fini(&e);
	start(&e, &to, &hk, false);
	c = connect_with(&e, KEY_A, KEY_B);
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -EKEYREJECTED);
	nv_wait_target(&e, 0, 0);
	nv_env_fini(&e);
}

/*
 * No key sent where one is required: the host refuses itself (-ENOKEY, the
 * kernel's "Required key not available"), also on a subsystem that allows
 * any host (the kernel's target skips authentication there).
 */
static void test_no_key(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_D,
				      .dhchap_hash = "hmac(sha512)" };
	struct nvmet_target_opts to;
	struct nvmeh_ctrl *c;
	int any;

	(void)state;
	for (any = 0; any < 2; any++) {
		start(&e, &to, &hk, any);
		c = connect_with(&e, NULL, NULL);
		assert_true(IS_ERR(c));
		assert_int_equal(PTR_ERR(c), -ENOKEY);
		nv_wait_target(&e, 0, 0);
		e.c = connect_with(&e, KEY_D, NULL);
		assert_false(IS_ERR(e.c));
		check_io(e.c);
		nv_env_fini(&e);
	}
}

/*
 * A host that ignores AUTHREQ: on the admin queue Property Get answers,
 * Property Set (and every admin command) is refused with Authentication
 * Required and DNR; on an I/O queue the I/O is.
 */
static void test_cmds_before_auth(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A };
	struct nvmet_target_opts to;
	struct nvmeh_opts o;
	struct nvmet_target_stats st;
	struct nvmeh_ctrl *c;
	u8 buf[512] = { 0 };

	(void)state;
	start(&e, &to, &hk, false);
	o = nv_host_opts(&e, NV_PORT, NV_NQN);
	snprintf(o.dhchap_secret, sizeof(o.dhchap_secret), "%s", KEY_A);
	o.dhchap_skip = NVMEH_AUTH_SKIP_ADMIN;
	c = nvmeh_ctrl_create(&o);
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -EREMOTEIO);
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_AUTH_REQUIRED | NVME_SC_DNR);
	/* Connect, CAP read: the refused command is the CC write */
	nv_wait_target(&e, 0, 0);
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.cmds, 3);

	o.dhchap_skip = NVMEH_AUTH_SKIP_IO;
	e.c = nvmeh_ctrl_create(&o);
	assert_false(IS_ERR(e.c));
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 1, buf),
			 NVME_SC_AUTH_REQUIRED);
	assert_int_equal(nvmeh_rw(e.c, 2, true, 0, 1, buf),
			 NVME_SC_AUTH_REQUIRED);
	/* authenticating the queue lets the I/O through */
	assert_int_equal(nvmeh_ctrl_reauth(e.c, 1), 0);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 1, buf), 0);
	assert_int_equal(nvmeh_rw(e.c, 2, true, 0, 1, buf),
			 NVME_SC_AUTH_REQUIRED);
	nv_env_fini(&e);
}

/*
 * Re-authentication on live queues, the queues usable throughout; a queue
 * starts at most 16 transactions: the 17th Negotiate is refused (Invalid
 * Field) and the controller torn down.
 */
static void test_reauth(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A,
				      .dhchap_ctrl_key = KEY_B,
				      .dhchap_dhgroup = "ffdhe2048" };
	struct nvmet_target_opts to;
	int i;

	(void)state;
	start(&e, &to, &hk, false);
	e.c = connect_with(&e, KEY_A, KEY_B);
	assert_false(IS_ERR(e.c));
	assert_int_equal(nvmeh_ctrl_reauth(e.c, 0), 0);
	assert_int_equal(nvmeh_ctrl_reauth(e.c, 2), 0);
	check_io(e.c);
	for (i = 1; i < 16; i++)
		assert_int_equal(nvmeh_ctrl_reauth(e.c, 1), 0);
	check_io(e.c);
	assert_int_equal(nvmeh_ctrl_reauth(e.c, 1), -EREMOTEIO);
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	nv_env_fini(&e);
}

/* One AUTH command with the fields given; returns the status field. */
static int auth_cmd(struct nvmeh_ctrl *c, unsigned int qid, u8 fctype, u8 secp,
		    u8 spsp, u32 len, void *buf, u32 data_len)
{
	struct nvmeh_request rq;
	int ret;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_fabrics_command;
	rq.sqe[offsetof(struct nvmf_common_command, fctype)] = fctype;
	rq.sqe[offsetof(struct nvmf_auth_command, secp)] = secp;
	rq.sqe[offsetof(struct nvmf_auth_command, spsp0)] = spsp;
	rq.sqe[offsetof(struct nvmf_auth_command, spsp1)] = spsp;
	nvme_put_le32(rq.sqe + offsetof(struct nvmf_auth_command, len), len);
	rq.data = data_len ? buf : NULL;
	rq.data_len = data_len;
	rq.write = fctype == nvme_fabrics_type_auth_send;
	ret = nvmeh_exec(c, qid, &rq);
	if (ret)
		return ret;
	if (rq.error)
		return rq.error;
	return rq.status;
}

/*
 * AUTH_Send and AUTH_Receive with a bad SECP or SPSP, a zero length, a
 * length over the bound, a length the data does not have (a truncated
 * message): each refused, and the queue stays authenticated and usable.
 */
static void test_malformed(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A };
	const u16 inval = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	const u16 sgl = NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR;
	const u8 snd = nvme_fabrics_type_auth_send;
	const u8 rcv = nvme_fabrics_type_auth_receive;
	const u8 p = NVME_AUTH_DHCHAP_PROTOCOL_IDENTIFIER;
	struct nvmet_target_opts to;
	static u8 buf[4096];
	unsigned int q;

	(void)state;
	start(&e, &to, &hk, false);
	e.c = connect_with(&e, KEY_A, NULL);
	assert_false(IS_ERR(e.c));
	for (q = 0; q < 2; q++) {
		memset(buf, 0xa5, sizeof(buf));
		assert_int_equal(auth_cmd(e.c, q, snd, 0xea, 1, 72, buf, 72),
				 inval);
		assert_int_equal(auth_cmd(e.c, q, snd, p, 2, 72, buf, 72),
				 inval);
		assert_int_equal(auth_cmd(e.c, q, snd, p, 1, 0, buf, 0), inval);
		assert_int_equal(auth_cmd(e.c, q, snd, p, 1,
					  NVME_AUTH_MAX_MSG + 1, buf,
					  NVME_AUTH_MAX_MSG + 1),
				 inval);
		assert_int_equal(auth_cmd(e.c, q, snd, p, 1, 72, buf, 40), sgl);
		assert_int_equal(auth_cmd(e.c, q, rcv, p, 1, 8192, buf, 4096),
				 inval);
		assert_int_equal(auth_cmd(e.c, q, rcv, p, 1, 4096, buf, 100),
				 sgl);
		assert_int_equal(auth_cmd(e.c, q, rcv, 0, 1, 4096, buf, 4096),
				 inval);
	}
	check_io(e.c);
	assert_int_equal(nvmeh_ctrl_reauth(e.c, 0), 0);
	assert_int_equal(nvmeh_ctrl_reauth(e.c, 1), 0);
	check_io(e.c);
	nv_env_fini(&e);
}

/*
 * siw with the devices on their own threads: bidirectional with
 * ffdhe2048 on four I/O queues, a wrong host key refused with the
 * Failure1 read (the kernel's siw case).
 */
static void test_siw_threaded(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A,
				      .dhchap_ctrl_key = KEY_B,
				      .dhchap_dhgroup = "ffdhe2048" };
	struct nvmet_target_opts to;
	struct nvmeh_opts o;
	struct nvmeh_ctrl *c;

	(void)state;
	start_on(&e, &to, &hk, false, "siw", true);
	c = connect_with(&e, KEY_C, NULL);
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -EKEYREJECTED);
	nv_wait_target(&e, 0, 0);
	o = nv_host_opts(&e, NV_PORT, NV_NQN);
	o.nr_io_queues = 4;
	snprintf(o.dhchap_secret, sizeof(o.dhchap_secret), "%s", KEY_A);
	snprintf(o.dhchap_ctrl_secret, sizeof(o.dhchap_ctrl_secret), "%s",
		 KEY_B);
	e.c = nvmeh_ctrl_create(&o);
	assert_false(IS_ERR(e.c));
	assert_int_equal(nvmeh_ctrl_info(e.c)->nr_io_queues, 4);
	check_io(e.c);
	nv_env_fini(&e);
}

/* An admin command or Property Set (bytes of a 64-byte SQE) on queue 0. */
static u16 admin_cmd(struct nvmeh_ctrl *c, u8 opcode, u8 fctype, u32 cdw10,
		     void *buf, u32 len)
{
	struct nvmeh_request rq;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] = opcode;
	if (opcode == nvme_fabrics_command)
		rq.sqe[offsetof(struct nvmf_common_command, fctype)] = fctype;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      cdw10);
	/* Property Get/Set: the offset of VS (CC for Set, a no-op value) */
	if (opcode == nvme_fabrics_command)
		nvme_put_le32(
			rq.sqe + offsetof(struct nvmf_property_get_command,
					  offset),
			fctype == nvme_fabrics_type_property_get ? NVME_REG_VS :
								   NVME_REG_CC);
	rq.data = buf;
	rq.data_len = len;
	assert_int_equal(nvmeh_exec(c, 0, &rq), 0);
	assert_int_equal(rq.error, 0);
	return rq.status;
}

/*
 * A transaction that fails on an authenticated admin queue leaves it
 * unauthenticated: Identify and Property Set are refused, Property Get
 * answers; AUTH_Receive then carries the Failure1, the controller goes
 * down after it, and the host reconnects (authenticating again).
 */
static void test_failed_reauth(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A };
	const u8 p = NVME_AUTH_DHCHAP_PROTOCOL_IDENTIFIER;
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmet_target_opts to;
	struct nvmeh_stats hs;
	static u8 buf[4096];
	int i;

	(void)state;
	start(&e, &to, &hk, false);
	e.c = connect_with(&e, KEY_A, NULL);
	assert_false(IS_ERR(e.c));
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(auth_cmd(e.c, 0, nvme_fabrics_type_auth_send, p, 1, 72,
				  buf, 72),
			 0);
	assert_int_equal(admin_cmd(e.c, nvme_admin_identify, 0,
				   NVME_ID_CNS_CTRL, buf, 4096),
			 NVME_SC_AUTH_REQUIRED | NVME_SC_DNR);
	assert_int_equal(admin_cmd(e.c, nvme_fabrics_command,
				   nvme_fabrics_type_property_set, 0, NULL, 0),
			 NVME_SC_AUTH_REQUIRED | NVME_SC_DNR);
	assert_int_equal(admin_cmd(e.c, nvme_fabrics_command,
				   nvme_fabrics_type_property_get, 0, NULL, 0),
			 0);
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(auth_cmd(e.c, 0, nvme_fabrics_type_auth_receive, p, 1,
				  4096, buf, 4096),
			 0);
	assert_int_equal(buf[0], NVME_AUTH_COMMON_MESSAGES);
	assert_int_equal(buf[1], NVME_AUTH_DHCHAP_MESSAGE_FAILURE1);
	assert_int_equal(buf[6], NVME_AUTH_DHCHAP_FAILURE_REASON_FAILED);
	assert_int_equal(buf[8], 0); /* zeros to AL */
	assert_int_equal(buf[4095], 0);
	/* torn down, then back with a new authentication (bounded wait) */
	for (i = 0; i < 2500; i++) {
		nvmeh_ctrl_stats(e.c, &hs);
		if (hs.reconnects)
			break;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(hs.reconnects, 1);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	check_io(e.c);
	nv_env_fini(&e);
}

/* The host key table is checked when the target starts. */
static void test_bad_config(void **state)
{
	struct nvmet_host_opts hk[2] = {
		{ .nqn = NVMEH_DEFAULT_HOSTNQN, .dhchap_key = KEY_A },
		{ .nqn = NVMEH_DEFAULT_HOSTNQN, .dhchap_key = KEY_B },
	};
	struct nvmet_target_opts to;
	struct nvmet_target *t;
	const struct {
		const char *key, *ckey, *hash, *group;
	} bad[] = {
		{ NULL, NULL, NULL, NULL },
		{ "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:",
		  NULL, NULL, NULL },
		{ KEY_A, "DHHC-1:09:xx:", NULL, NULL },
		{ KEY_A, NULL, "hmac(md5)", NULL },
		{ KEY_A, NULL, NULL, "ffdhe1024" },
	};
	unsigned int i;

	(void)state;
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.host_keys = hk;
	/* no device needed: the table is refused first */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		hk[0].dhchap_key = bad[i].key;
		hk[0].dhchap_ctrl_key = bad[i].ckey;
		hk[0].dhchap_hash = bad[i].hash;
		hk[0].dhchap_dhgroup = bad[i].group;
		to.nr_host_keys = 1;
		t = nvmet_target_create(&to);
		assert_true(IS_ERR(t));
		assert_int_equal(PTR_ERR(t), -EINVAL);
	}
	hk[0] = (struct nvmet_host_opts){ .nqn = NVMEH_DEFAULT_HOSTNQN,
					  .dhchap_key = KEY_A };
	to.nr_host_keys = 2; /* one NQN twice */
	t = nvmet_target_create(&to);
	assert_true(IS_ERR(t));
	assert_int_equal(PTR_ERR(t), -EINVAL);
	hk[1].nqn = "";
	t = nvmet_target_create(&to);
	assert_true(IS_ERR(t));
	assert_int_equal(PTR_ERR(t), -EINVAL);
}

/* Command line: --dhchap-* NQN=VALUE fill the table; bad ones refused. */
static void test_config_args(void **state)
{
	const char *ok[] = { "rdmarw-nvmet",
			     "--dhchap-key",
			     "nqn.2026-01.io.a:h1=" KEY_A,
			     "--dhchap-ctrl-key",
			     "nqn.2026-01.io.a:h1=" KEY_B,
			     "--dhchap-hash",
			     "nqn.2026-01.io.a:h1=hmac(sha384)",
			     "--dhchap-dhgroup",
			     "nqn.2026-01.io.a:h1=ffdhe2048",
			     "--dhchap-key",
			     "nqn.2026-01.io.a:h2=" KEY_C };
	const char *bad[][3] = {
		{ "rdmarw-nvmet", "--dhchap-key", "nqn.2026-01.io.a:h1" },
		{ "rdmarw-nvmet", "--dhchap-key", "=" KEY_A },
		{ "rdmarw-nvmet", "--dhchap-key",
		  "nqn.2026-01.io.a:h1=DHHC-1:" },
		{ "rdmarw-nvmet", "--dhchap-hash", "nqn.2026-01.io.a:h1=md5" },
		{ "rdmarw-nvmet", "--dhchap-dhgroup", "nqn.2026-01.io.a:h=x" },
		/* a hash for a host without a key */
		{ "rdmarw-nvmet", "--dhchap-hash",
		  "nqn.2026-01.io.a:h1=hmac(sha512)" },
	};
	struct nvmet_config c;
	unsigned int i;

	(void)state;
	nvmet_config_init(&c);
	assert_int_equal(nvmet_config_args(&c, ARRAY_SIZE(ok), (char **)ok), 0);
	assert_int_equal(c.o.nr_host_keys, 2);
	assert_string_equal(c.o.host_keys[0].nqn, "nqn.2026-01.io.a:h1");
	assert_string_equal(c.o.host_keys[0].dhchap_key, KEY_A);
	assert_string_equal(c.o.host_keys[0].dhchap_ctrl_key, KEY_B);
	assert_string_equal(c.o.host_keys[0].dhchap_hash, "hmac(sha384)");
	assert_string_equal(c.o.host_keys[0].dhchap_dhgroup, "ffdhe2048");
	assert_string_equal(c.o.host_keys[1].nqn, "nqn.2026-01.io.a:h2");
	assert_string_equal(c.o.host_keys[1].dhchap_key, KEY_C);
	assert_null(c.o.host_keys[1].dhchap_ctrl_key);
	nvmet_config_free(&c);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		nvmet_config_init(&c);
		assert_int_equal(nvmet_config_args(&c, 3, (char **)bad[i]),
				 -EINVAL);
		nvmet_config_free(&c);
	}
}

/* nvmetcli's hosts[].dhchap read, and written back by --save-config. */
static void test_config_json(void **state)
{
	static const char json[] =
		"{ \"hosts\": [ { \"nqn\": \"nqn.2026-01.io.a:h1\", "
		"\"dhchap\": { \"key\": \"" KEY_A "\", \"ctrl_key\": \"\", "
		"\"hash\": \"hmac(sha512)\", \"dhgroup\": \"null\" } }, "
		"{ \"nqn\": \"nqn.2026-01.io.a:h2\" } ],\n"
		"\"ports\": [ { \"portid\": 1, \"addr\": { \"trtype\": \"rdma\", "
		"\"adrfam\": \"ipv4\", \"traddr\": \"10.0.0.2\", "
		"\"trsvcid\": \"4420\" }, \"subsystems\": [ \"" NV_NQN
		"\" ] } ],\n"
		"\"subsystems\": [ { \"nqn\": \"" NV_NQN "\", "
		"\"allowed_hosts\": [ \"nqn.2026-01.io.a:h1\", "
		"\"nqn.2026-01.io.a:h2\" ], \"attr\": { \"allow_any_host\": \"0\" }, "
		"\"namespaces\": [ { \"nsid\": 1, \"enable\": 1, \"device\": "
		"{ \"path\": \"/dev/null\" } } ] } ] }";
	static const char bad_key[] =
		"{ \"hosts\": [ { \"nqn\": \"nqn.2026-01.io.a:h1\", "
		"\"dhchap\": { \"key\": \"DHHC-1:00:AAAA:\" } } ], "
		"\"ports\": [ { \"addr\": { \"trtype\": \"rdma\", "
		"\"traddr\": \"10.0.0.2\", \"trsvcid\": \"4420\" }, "
		"\"subsystems\": [ \"" NV_NQN "\" ] } ], "
		"\"subsystems\": [ { \"nqn\": \"" NV_NQN "\", \"namespaces\": "
		"[ { \"nsid\": 1, \"device\": { \"path\": \"/dev/null\" } } ] } ] }";
	struct nvmet_config c, again;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	nvmet_config_init(&c);
	assert_int_equal(
		nvmet_config_read_json(&c, "t.json", json, sizeof(json) - 1),
		0);
	assert_int_equal(c.o.nr_host_keys, 1);
	assert_string_equal(c.o.host_keys[0].nqn, "nqn.2026-01.io.a:h1");
	assert_string_equal(c.o.host_keys[0].dhchap_key, KEY_A);
	assert_null(c.o.host_keys[0].dhchap_ctrl_key);
	assert_string_equal(c.o.host_keys[0].dhchap_hash, "hmac(sha512)");
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(nvmet_config_write_json(&c.o, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "\"dhchap\": { \"key\": \"" KEY_A "\""));
	nvmet_config_init(&again);
	assert_int_equal(nvmet_config_read_json(&again, "w.json", text, len),
			 0);
	assert_int_equal(again.o.nr_host_keys, 1);
	assert_string_equal(again.o.host_keys[0].dhchap_key, KEY_A);
	assert_string_equal(again.o.host_keys[0].dhchap_hash, "hmac(sha512)");
	nvmet_config_free(&again);
	free(text);
	nvmet_config_free(&c);
	nvmet_config_init(&c);
	assert_int_equal(nvmet_config_read_json(&c, "b.json", bad_key,
						sizeof(bad_key) - 1),
			 -EINVAL);
	nvmet_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bad_config, nv_teardown),
		cmocka_unit_test(test_config_args),
		cmocka_unit_test(test_config_json),
		cmocka_unit_test_teardown(test_unidirectional, nv_teardown),
		cmocka_unit_test_teardown(test_bidirectional, nv_teardown),
		cmocka_unit_test_teardown(test_wrong_host_key, nv_teardown),
		cmocka_unit_test_teardown(test_wrong_ctrl_key, nv_teardown),
		cmocka_unit_test_teardown(test_no_key, nv_teardown),
		cmocka_unit_test_teardown(test_cmds_before_auth, nv_teardown),
		cmocka_unit_test_teardown(test_reauth, nv_teardown),
		cmocka_unit_test_teardown(test_malformed, nv_teardown),
		cmocka_unit_test_teardown(test_failed_reauth, nv_teardown),
		cmocka_unit_test_teardown(test_siw_threaded, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

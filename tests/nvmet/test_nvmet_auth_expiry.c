// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The DH-HMAC-CHAP transaction timer (issue 27; the kernel's
 * auth_expired_work in fabrics-cmd-auth.c): a host that stops in the
 * middle of a transaction, here after its AUTH_Negotiate on an I/O queue,
 * does not keep the queue: when the transaction has seen nothing for the
 * controller's keep-alive timeout (120 s without one) the controller is
 * torn down (nvmet_ctrl_fatal_error), though the host's keep-alives go on
 * (no keep-alive expiry).  A queue that authenticates in time stays.
 */
#include "nvmet_env.h"

#include "auth.h"
#include "auth_wire.h"

#define KEY_A "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"
/* A bound for what must happen (not a timing assertion). */
#define WAIT_MS 60000

static const char *const hosts[] = { NVMEH_DEFAULT_HOSTNQN };

static void start(struct nv_env *e, struct nvmet_target_opts *to,
		  const struct nvmet_host_opts *hk)
{
	nvmet_target_opts_init(to);
	to->addr = "10.0.0.2";
	to->port = NV_PORT;
	to->subnqn = NV_NQN;
	to->ns[0].size = 1u << 20;
	to->hosts = hosts;
	to->nr_hosts = 1;
	to->host_keys = hk;
	to->nr_host_keys = 1;
	nv_env_init(e, "rxe",
		    &(struct nv_cfg){ .no_connect = true, .topts = to });
}

/* The host's AUTH_Negotiate for @qid, sent and answered. */
static void send_negotiate(struct nvmeh_ctrl *c, unsigned int qid)
{
	struct nvme_auth_params p = { .hostnqn = NVMEH_DEFAULT_HOSTNQN,
				      .subsysnqn = NV_NQN,
				      .host_secret = KEY_A };
	struct nvme_auth_host h;
	struct nvmeh_request rq;
	u8 msg[256];
	ssize_t len;

	assert_int_equal(nvme_auth_host_init(&h, &p), 0);
	len = nvme_auth_host_negotiate(&h, msg, sizeof(msg));
	assert_true(len > 0);
	nvme_auth_host_clear(&h);
	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_fabrics_command;
	rq.sqe[offsetof(struct nvmf_common_command, fctype)] =
		nvme_fabrics_type_auth_send;
	rq.sqe[offsetof(struct nvmf_auth_command, secp)] =
		NVME_AUTH_DHCHAP_PROTOCOL_IDENTIFIER;
	rq.sqe[offsetof(struct nvmf_auth_command, spsp0)] =
		NVME_AUTH_DHCHAP_SPSP;
	rq.sqe[offsetof(struct nvmf_auth_command, spsp1)] =
		NVME_AUTH_DHCHAP_SPSP;
	nvme_put_le32(rq.sqe + offsetof(struct nvmf_auth_command, len),
		      (u32)len);
	rq.data = msg;
	rq.data_len = (u32)len;
	rq.write = true;
	assert_int_equal(nvmeh_exec(c, qid, &rq), 0);
	assert_int_equal(rq.error, 0);
	assert_int_equal(rq.status, 0);
}

/* Wait (bounded) until the target has created @n controllers. */
static bool wait_ctrls_created(struct nv_env *e, u64 n)
{
	struct nvmet_target_stats st;
	int i;

	for (i = 0; i < WAIT_MS / 10; i++) {
		assert_int_equal(nvmet_target_get_stats(e->t, &st), 0);
		if (st.ctrls_created >= n)
			return true;
		usleep(10000);
	}
	return false;
}

static void test_stopped_after_negotiate(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A };
	struct nvmet_target_opts to;
	struct nvmet_target_stats st;
	struct nvmeh_opts o;

	(void)state;
	start(&e, &to, &hk);
	o = nv_host_opts(&e, NV_PORT, NV_NQN);
	snprintf(o.dhchap_secret, sizeof(o.dhchap_secret), "%s", KEY_A);
	o.dhchap_skip = NVMEH_AUTH_SKIP_IO; /* the admin queue authenticates */
	o.kato_ms = 1000;
	o.nr_io_queues = 1;
	e.c = nvmeh_ctrl_create(&o);
	assert_false(IS_ERR(e.c));
	send_negotiate(e.c, 1);
	/* no Challenge is fetched: the transaction expires, the controller goes */
	assert_true(wait_ctrls_created(&e, 2));
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.kato_expired, 0);
	nv_env_fini(&e);
}

/* Authenticated in time: the timer is off, the controller stays. */
static void test_authenticated_stays(void **state)
{
	static struct nv_env e;
	struct nvmet_host_opts hk = { .nqn = NVMEH_DEFAULT_HOSTNQN,
				      .dhchap_key = KEY_A };
	struct nvmet_target_opts to;
	struct nvmet_target_stats st;
	struct nvmeh_opts o;
	u8 buf[512] = { 0 };
	int i;

	(void)state;
	start(&e, &to, &hk);
	o = nv_host_opts(&e, NV_PORT, NV_NQN);
	snprintf(o.dhchap_secret, sizeof(o.dhchap_secret), "%s", KEY_A);
	o.kato_ms = 1000;
	o.nr_io_queues = 1;
	e.c = nvmeh_ctrl_create(&o);
	assert_false(IS_ERR(e.c));
	/* a few keep-alive periods of I/O: no teardown */
	for (i = 0; i < 30; i++) {
		assert_int_equal(nvmeh_rw(e.c, 1, i & 1, 0, 1, buf), 0);
		usleep(100000);
	}
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.ctrls_created, 1);
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_stopped_after_negotiate,
					  nv_teardown),
		cmocka_unit_test_teardown(test_authenticated_stays,
					  nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The in-process host against rdmarw-nvmet on each software profile:
 * connect (admin queue, properties, enable, Identify, Number of Queues,
 * I/O queues), what Identify says, a write read back byte for byte,
 * in-capsule and keyed writes, and a clean disconnect that leaves the
 * target with no controller, no queue and both devices with no objects.
 */
#include "nvmet_env.h"

#include <time.h>

static void connect_identify(const char *profile)
{
	static struct nv_env e;
	struct nvmet_target_stats ts;
	const struct nvmeh_info *info;
	struct nvmeh_stats hs;
	u8 *wbuf, *rbuf;
	u32 len;

	nv_env_init(&e, profile, &(struct nv_cfg){ 0 });
	info = nvmeh_ctrl_info(e.c);
	assert_true(nvmeh_ctrl_live(e.c));
	assert_int_not_equal(info->cntlid, 0xffff);
	assert_int_equal(info->cntlid,
			 nvme_get_le16(info->id_ctrl +
				       offsetof(struct nvme_id_ctrl, cntlid)));
	assert_int_equal(info->vs >> 16, 1); /* NVMe 1.x */
	assert_string_equal((const char *)info->id_ctrl +
				    offsetof(struct nvme_id_ctrl, subnqn),
			    NV_NQN);
	assert_true(nvme_get_le32(info->id_ctrl +
				  offsetof(struct nvme_id_ctrl, sgls)) &
		    (1u << 2));
	assert_int_equal(nvme_get_le16(info->id_ctrl +
				       offsetof(struct nvme_id_ctrl, icdoff)),
			 0);
	assert_int_equal(info->nr_io_queues, 2);
	assert_int_equal(info->queue_size, 32);
	assert_int_equal(info->lba_size, 512);
	assert_int_equal(info->ns_lbas * info->lba_size, e.ns_size);
	assert_true(info->max_xfer >= 128 * 1024);
	assert_int_equal(info->inline_max, 4096);
	assert_int_equal(nvmet_target_get_stats(e.t, &ts), 0);
	assert_int_equal(ts.ctrls, 1);
	assert_int_equal(ts.queues, 3);

	/* in-capsule (4 KiB) and keyed (128 KiB) writes, read back */
	len = 128 * 1024;
	wbuf = malloc(len);
	rbuf = malloc(len);
	assert_non_null(wbuf);
	assert_non_null(rbuf);
	nv_fill(wbuf, len, 1);
	/* the two I/O queue Connects carried their 1 KiB in the capsule */
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.inline_writes, 2);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 8, 8, wbuf), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.inline_writes, 3);
	assert_int_equal(nvmeh_rw(e.c, 2, true, 256, len / 512, wbuf), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.inline_writes, 3);

	memset(rbuf, 0xee, len);
	assert_int_equal(nvmeh_rw(e.c, 2, false, 8, 8, rbuf), 0);
	assert_memory_equal(rbuf, wbuf, 4096);
	memset(rbuf, 0xee, len);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 256, len / 512, rbuf), 0);
	assert_memory_equal(rbuf, wbuf, len);
	/* around them: untouched, still zero */
	memset(rbuf, 0xee, 8 * 512);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 8, rbuf), 0);
	memset(wbuf, 0, 8 * 512);
	assert_memory_equal(rbuf, wbuf, 8 * 512);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 16, 8, rbuf), 0);
	assert_memory_equal(rbuf, wbuf, 8 * 512);
	/* every keyed MR was invalidated, by the target or by us */
	nvmeh_ctrl_stats(e.c, &hs);
	assert_true(hs.remote_invs + hs.local_invs >= 5);
	assert_int_equal(hs.resets, 0);
	assert_int_equal(hs.bad_cqes, 0);
	free(wbuf);
	free(rbuf);

	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	nv_env_fini(&e);
}

static void test_connect_mlx5(void **state)
{
	connect_identify("mlx5");
}

static void test_connect_rxe(void **state)
{
	connect_identify("rxe");
}

static void test_connect_siw(void **state)
{
	connect_identify("siw");
}

/* No in-capsule data: every write is keyed; a 1-queue, admin-only host. */
static void test_connect_no_inline(void **state)
{
	static struct nv_env e;
	struct nvmeh_stats hs;
	u8 w[4096], r[4096];

	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .no_inline = true, .nr_io_queues = 1 });
	assert_int_equal(nvmeh_ctrl_info(e.c)->inline_max, 0);
	nv_fill(w, sizeof(w), 7);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 100, 8, w), 0);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 100, 8, r), 0);
	assert_memory_equal(w, r, sizeof(w));
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.inline_writes, 0); /* the I/O Connect too */
	/* queue 2 does not exist */
	assert_int_equal(nvmeh_rw(e.c, 2, false, 100, 8, r), -EINVAL);
	nv_env_fini(&e);
}

/* A wrong subsystem NQN: Connect fails with the Fabrics status. */
static void test_connect_bad_nqn(void **state)
{
	static struct nv_env e;
	struct nvmeh_ctrl *c;

	nv_env_init(&e, "mlx5", &(struct nv_cfg){ .no_connect = true });
	strcpy(e.o.subsysnqn, "nqn.2026-01.io.rdmarw:nobody");
	c = nvmeh_ctrl_create(&e.o);
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -EREMOTEIO);
	assert_int_equal(nvmeh_last_status(NULL) & NVME_SCT_SC_MASK,
			 NVME_SC_CONNECT_INVALID_PARAM);
	nv_wait_target(&e, 0, 0);
	nv_env_fini(&e);
}

/*
 * Keep-alive: with a KATO of 1 s (the target counts whole seconds) and no
 * I/O for 2.5 s, the host's Keep Alive every 500 ms keeps the controller:
 * the target's timer (traffic-based, 1-2 s) never expires.
 */
static void test_keep_alive(void **state)
{
	static struct nv_env e;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	struct nvmet_target_stats st0, st;
	struct nvmeh_stats hs;
	u8 buf[512];
	int i;

	nv_env_init(&e, "rxe", &(struct nv_cfg){ .kato_ms = 1000 });
	assert_int_equal(nvmet_target_get_stats(e.t, &st0), 0);
	for (i = 0; i < 25; i++)
		nanosleep(&ts, NULL);
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.kato_expired, 0);
	assert_int_equal(st.ctrls, 1);
	/* the Keep Alive commands were all there was */
	assert_true(st.cmds - st0.cmds >= 4);
	assert_true(st.cmds - st0.cmds <= 6);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 0);
	assert_true(nvmeh_ctrl_live(e.c));
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 1, buf), 0);
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_connect_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_connect_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_connect_siw, nv_teardown),
		cmocka_unit_test_teardown(test_connect_no_inline, nv_teardown),
		cmocka_unit_test_teardown(test_connect_bad_nqn, nv_teardown),
		cmocka_unit_test_teardown(test_keep_alive, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

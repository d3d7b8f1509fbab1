// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Faults under the host and the target: a host QP moved to ERR, a work
 * request failing with an error completion, the host's link going down,
 * connection requests rejected (at create and while reconnecting), a
 * target QP failing, a host that vanishes while the target's RDMA READ
 * is stalled.  The host reconnects (a new controller on the same
 * namespace: the data written before is still there), the target
 * survives and releases the old controller.  With many commands in flight
 * at every stage (receive, data fetch, backend, response SEND), a target
 * QP error releases each of them: none is left counted in reqs_inflight.
 */
#include "nv_io.h"

#include <time.h>

/* Written before the fault, read after the reconnect. */
static u8 before[16384];

static void write_before(struct nv_env *e)
{
	nv_fill(before, sizeof(before), 1234);
	assert_int_equal(nvmeh_rw(e->c, 1, true, 300, 32, before), 0);
}

static void check_after(struct nv_env *e, u64 resets)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmeh_stats hs;
	u8 r[16384], w[4096];
	int i;

	/* the CM's DISCONNECTED may still be on its way */
	for (i = 0; i < 2500; i++) {
		nvmeh_ctrl_stats(e->c, &hs);
		if (hs.resets >= resets)
			break;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(nvmeh_ctrl_wait_live(e->c, 5000), 0);
	nvmeh_ctrl_stats(e->c, &hs);
	assert_true(hs.resets >= resets);
	assert_true(hs.reconnects >= resets);
	memset(r, 0, sizeof(r));
	assert_int_equal(nvmeh_rw(e->c, 2, false, 300, 32, r), 0);
	assert_memory_equal(r, before, sizeof(r));
	nv_fill(w, sizeof(w), 77);
	assert_int_equal(nvmeh_rw(e->c, 1, true, 900, 8, w), 0);
	memset(r, 0, sizeof(w));
	assert_int_equal(nvmeh_rw(e->c, 2, false, 900, 8, r), 0);
	assert_memory_equal(r, w, sizeof(w));
	/* the old controller is gone from the target */
	nv_wait_target(e, 1, 3);
}

static int rw_until_error(struct nv_env *e, unsigned int qid)
{
	u8 buf[4096];
	int i, ret = 0;

	for (i = 0; i < 20 && !ret; i++)
		ret = nvmeh_rw(e->c, qid, false, 0, 8, buf);
	return ret;
}

static void qp_fault(const char *profile, enum soft_fault_type type)
{
	static struct nv_env e;
	struct soft_fault_rule rule = { .type = type,
					.nth = 2,
					.status = IB_WC_REM_ACCESS_ERR };
	struct ib_qp *qp;
	int ret;

	nv_env_init(&e, profile, &(struct nv_cfg){ 0 });
	write_before(&e);
	qp = nvmeh_ctrl_qp(e.c, 1);
	assert_non_null(qp);
	assert_int_equal(soft_fault_arm_qp(qp, &rule), 0);
	ret = rw_until_error(&e, 1);
	assert_true(ret == -ECONNABORTED || ret == -ENOTCONN);
	check_after(&e, 1);
	nv_env_fini(&e);
}

static void test_host_qp_err_rxe(void **state)
{
	qp_fault("rxe", SOFT_FAULT_QP_ERR);
}

static void test_host_wc_err_mlx5(void **state)
{
	qp_fault("mlx5", SOFT_FAULT_WC);
}

static void test_host_qp_err_siw(void **state)
{
	qp_fault("siw", SOFT_FAULT_QP_ERR);
}

static void link_down(const char *profile)
{
	static struct nv_env e;

	nv_env_init(&e, profile, &(struct nv_cfg){ 0 });
	write_before(&e);
	/* the admin queue and the two I/O queues were connected */
	assert_int_equal(soft_cm_link_down(e.hdev), 3);
	check_after(&e, 1);
	/* and again */
	assert_true(soft_cm_link_down(e.tdev) >= 3);
	check_after(&e, 2);
	nv_env_fini(&e);
}

static void test_link_down_mlx5(void **state)
{
	link_down("mlx5");
}

static void test_link_down_siw(void **state)
{
	link_down("siw");
}

/* Rejected at create: the error says so; while reconnecting: retried. */
static void test_reject(void **state)
{
	static struct nv_env e;
	struct soft_cm_fault f = { .type = SOFT_CM_FAULT_REJECT };
	struct nvmeh_stats hs;
	struct nvmeh_ctrl *c;

	nv_env_init(&e, "rxe", &(struct nv_cfg){ .no_connect = true });
	assert_int_equal(soft_cm_fault_arm(e.hdev, &f), 0);
	c = nvmeh_ctrl_create(&e.o);
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -ECONNREFUSED);
	assert_int_equal(soft_cm_fault_clear(e.hdev), 0);
	e.c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(e.c));
	write_before(&e);

	/* the 1st and 3rd connection requests of the reconnect fail */
	f.nth = 1;
	assert_int_equal(soft_cm_fault_arm(e.hdev, &f), 0);
	f.nth = 2;
	assert_int_equal(soft_cm_fault_arm(e.hdev, &f), 0);
	assert_int_equal(nvmeh_ctrl_reset(e.c), 0);
	check_after(&e, 1);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.failed_connects, 2);
	assert_int_equal(hs.reconnects, 1);
	nv_env_fini(&e);
}

/* The target's own QP fails: it drops the queue, the host reconnects. */
static void test_target_qp_err(void **state)
{
	static struct nv_env e;
	struct soft_fault_rule rule = { .type = SOFT_FAULT_QP_ERR, .nth = 1 };
	int ret;

	nv_env_init(&e, "mlx5", &(struct nv_cfg){ .io_timeout_ms = 1000 });
	write_before(&e);
	assert_int_equal(soft_fault_arm_device(e.tdev, &rule), 0);
	ret = rw_until_error(&e, 2);
	assert_true(ret == -ECONNABORTED || ret == -ENOTCONN);
	assert_int_equal(soft_fault_clear_device(e.tdev), 0);
	check_after(&e, 1);
	nv_env_fini(&e);
}

static void wait_target_idle(struct nv_env *e)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmet_target_stats st;
	int i;

	for (i = 0; i < 2500; i++) {
		assert_int_equal(nvmet_target_get_stats(e->t, &st), 0);
		if (!st.reqs_inflight)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("%llu requests never released",
		 (unsigned long long)st.reqs_inflight);
}

/*
 * The target's QP fails at its @nth work request while two queues of 32
 * commands each (4 KiB to 128 KiB, reads and writes) are in flight: the
 * queue is torn down, every request it held is released, the host
 * reconnects and is served.
 */
static void qp_err_in_flight(unsigned int nth)
{
	static struct nv_env e;
	struct soft_fault_rule rule = { .type = SOFT_FAULT_QP_ERR, .nth = nth };
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmeh_stats hs;
	u8 w[4096], r[4096];
	struct nv_run run;
	int i;

	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .io_timeout_ms = 1000,
				      .nr_io_queues = 2,
				      .queue_size = 32 });

	assert_int_equal(soft_fault_arm_device(e.tdev, &rule), 0);
	nv_io_run(&run, &e, 2, 32, 6, nth);
	assert_int_equal(soft_fault_clear_device(e.tdev), 0);
	nv_io_free(&run);
	for (i = 0; i < 2500; i++) {
		nvmeh_ctrl_stats(e.c, &hs);
		if (hs.resets >= 1)
			break;
		nanosleep(&ts, NULL);
	}
	assert_true(hs.resets >= 1);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	nv_fill(w, sizeof(w), nth);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 900, 8, w), 0);
	memset(r, 0, sizeof(r));
	assert_int_equal(nvmeh_rw(e.c, 2, false, 900, 8, r), 0);
	assert_memory_equal(r, w, sizeof(w));
	nv_wait_target(&e, 1, 3);
	wait_target_idle(&e);
	nv_env_fini(&e);
}

static void test_target_qp_err_in_flight(void **state)
{
	static const unsigned int nths[] = { 2, 11, 40, 97 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nths); i++)
		qp_err_in_flight(nths[i]);
}

/*
 * The host goes away while the target's RDMA READ of its write data is
 * stalled: the target must release the controller and its queues.
 */
static void test_host_vanishes(void **state)
{
	static struct nv_env e;
	struct soft_fault_rule rule = { .type = SOFT_FAULT_STALL, .nth = 1 };
	struct nvmeh_request rq = { 0 };
	static u8 data[65536];
	int ret;

	nv_env_init(&e, "rxe", &(struct nv_cfg){ .io_timeout_ms = 300 });
	assert_int_equal(soft_fault_arm_device(e.tdev, &rule), 0);
	rq.sqe[offsetof(struct nvme_common_command, opcode)] = nvme_cmd_write;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid), 1);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      sizeof(data) / 512 - 1);
	nv_fill(data, sizeof(data), 5);
	rq.data = data;
	rq.data_len = sizeof(data);
	rq.write = true;
	ret = nvmeh_exec(e.c, 1, &rq);
	assert_int_equal(ret, 0);
	assert_int_equal(rq.error, -ECONNABORTED);
	/* the host is gone for good */
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	assert_int_equal(soft_fault_clear_device(e.tdev), 0);
	/* a new host is served */
	e.c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(e.c));
	write_before(&e);
	check_after(&e, 0);
	nv_env_fini(&e);
}

/*
 * The target goes away under a live host and comes back: the host's
 * reconnects are refused meanwhile (nobody listens), then one succeeds
 * against the new target (a new, zeroed namespace).
 */
static void test_target_restart(void **state)
{
	static struct nv_env e;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	struct nvmeh_stats hs;
	u8 r[4096], zero[4096] = { 0 }, w[4096];

	nv_env_init(&e, "rxe", &(struct nv_cfg){ 0 });
	write_before(&e);
	nvmet_target_destroy(e.t);
	e.t = NULL;
	nanosleep(&ts, NULL);
	nanosleep(&ts, NULL);
	assert_false(nvmeh_ctrl_live(e.c));
	assert_false(nvmeh_ctrl_dead(e.c));
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 1);
	assert_true(hs.failed_connects >= 1);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 300, 8, r), -ENOTCONN);

	nv_target_start(&e, &(struct nv_cfg){ 0 });
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.reconnects, 1);
	memset(r, 0xee, sizeof(r));
	assert_int_equal(nvmeh_rw(e.c, 2, false, 300, 8, r), 0);
	assert_memory_equal(r, zero, sizeof(r));
	nv_fill(w, sizeof(w), 8);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 300, 8, w), 0);
	assert_int_equal(nvmeh_rw(e.c, 2, false, 300, 8, r), 0);
	assert_memory_equal(r, w, sizeof(r));
	nv_env_fini(&e);
}

static void timeout_done(struct nvmeh_request *rq)
{
	__atomic_store_n((int *)rq->priv, 1, __ATOMIC_RELEASE);
}

/*
 * An asynchronous command the target never answers (its Send Queue is
 * stalled): the host's timeout scan starts error recovery, the command
 * ends with -ECONNABORTED, the controller comes back.
 */
static void test_async_timeout(void **state)
{
	static struct nv_env e;
	struct soft_fault_rule rule = { .type = SOFT_FAULT_STALL, .nth = 1 };
	struct timespec ts = { 0, 5 * 1000 * 1000 }, t0, t1;
	/* static: a failed test's teardown still completes it */
	static struct nvmeh_request rq;
	static u8 data[8192];
	static int done;
	int i;

	nv_env_init(&e, "mlx5", &(struct nv_cfg){ .io_timeout_ms = 300 });
	write_before(&e);
	assert_int_equal(soft_fault_arm_device(e.tdev, &rule), 0);
	memset(&rq, 0, sizeof(rq));
	done = 0;
	rq.sqe[offsetof(struct nvme_common_command, opcode)] = nvme_cmd_read;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid), 1);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      sizeof(data) / 512 - 1);
	rq.data = data;
	rq.data_len = sizeof(data);
	rq.done = timeout_done;
	rq.priv = &done;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nvmeh_submit(e.c, 2, &rq), 0);
	for (i = 0; i < 1000 && !__atomic_load_n(&done, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ts, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(done, 1);
	/* not before the 300 ms deadline */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 +
			    (t1.tv_nsec - t0.tv_nsec) / 1000000 >=
		    300);
	assert_int_equal(rq.error, -ECONNABORTED);
	assert_int_equal(rq.status, NVME_SC_HOST_ABORTED_CMD);
	assert_int_equal(soft_fault_clear_device(e.tdev), 0);
	check_after(&e, 1);
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_host_qp_err_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_host_wc_err_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_host_qp_err_siw, nv_teardown),
		cmocka_unit_test_teardown(test_link_down_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_link_down_siw, nv_teardown),
		cmocka_unit_test_teardown(test_reject, nv_teardown),
		cmocka_unit_test_teardown(test_target_qp_err, nv_teardown),
		cmocka_unit_test_teardown(test_target_qp_err_in_flight,
					  nv_teardown),
		cmocka_unit_test_teardown(test_host_vanishes, nv_teardown),
		cmocka_unit_test_teardown(test_async_timeout, nv_teardown),
		cmocka_unit_test_teardown(test_target_restart, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

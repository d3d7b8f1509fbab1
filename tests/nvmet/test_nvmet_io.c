// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Random READ/WRITE through the in-process host against rdmarw-nvmet, every
 * byte checked against a shadow: one queue at depth 1, two at depth 8, four
 * at depth 32 (more commands than the target's receive slots per queue are
 * never outstanding), on each profile, with and without in-capsule data.
 *
 * No host command ever waits for a receive (rnr_stalls of the host device
 * stays 0): the target posts a command's receive again before it posts
 * the response SEND, so a host that saw the response finds a receive for
 * its next command.  iWARP has no RNR: siw terminates the connection then.
 */
#include "nv_io.h"

static void io_case(const char *profile, unsigned int nq, unsigned int depth,
		    int ops, bool no_inline)
{
	static struct nv_env e;
	struct nv_run run;
	struct nvmeh_stats hs;
	struct soft_stats st;

	nv_env_init(&e, profile,
		    &(struct nv_cfg){ .nr_io_queues = nq,
				      .queue_size = depth < 2 ? 2 : depth,
				      .no_inline = no_inline });
	nv_io_run(&run, &e, nq, depth, ops, depth * 31 + nq);
	if (run.failed)
		fail_msg("%d failures; first: %s", run.failed, run.why);
	assert_true(run.reads > 0);
	assert_true(run.writes > 0);
	nv_io_verify(&run);
	nvmeh_ctrl_stats(e.c, &hs);
	if (no_inline)
		assert_int_equal(hs.inline_writes, 0);
	else
		assert_true(hs.inline_writes > 0);
	assert_int_equal(hs.resets, 0);
	assert_int_equal(hs.aborted, 0);
	assert_int_equal(soft_device_stats(e.hdev, &st), 0);
	assert_int_equal(st.rnr_stalls, 0);
	nv_io_free(&run);
	nv_env_fini(&e);
}

static void test_io_mlx5_q1_d1(void **state)
{
	io_case("mlx5", 1, 1, 200, false);
}

static void test_io_rxe_q2_d8(void **state)
{
	io_case("rxe", 2, 8, 40, false);
}

static void test_io_siw_q4_d32(void **state)
{
	io_case("siw", 4, 32, 8, false);
}

static void test_io_mlx5_q4_d32(void **state)
{
	io_case("mlx5", 4, 32, 8, false);
}

static void test_io_rxe_keyed_only(void **state)
{
	io_case("rxe", 2, 16, 16, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_io_mlx5_q1_d1, nv_teardown),
		cmocka_unit_test_teardown(test_io_rxe_q2_d8, nv_teardown),
		cmocka_unit_test_teardown(test_io_siw_q4_d32, nv_teardown),
		cmocka_unit_test_teardown(test_io_mlx5_q4_d32, nv_teardown),
		cmocka_unit_test_teardown(test_io_rxe_keyed_only, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

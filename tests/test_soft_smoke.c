// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Smoke: one WRITE, one READ and one SEND on each profile. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <string.h>

static void smoke(const char *profile)
{
	struct soft_env env;
	char src[64], dst[64], rbuf[64];
	struct ib_mr *ms, *md;
	int acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		  IB_ACCESS_REMOTE_WRITE;

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = profile });
	memset(src, 'a', sizeof(src));
	memset(dst, 0, sizeof(dst));
	ms = soft_env_reg(&env, 0, src, sizeof(src), acc);
	md = soft_env_reg(&env, 1, dst, sizeof(dst), acc);
	assert_int_equal(soft_env_rdma(env.qp[0], IB_WR_RDMA_WRITE, 1, src, 64,
				       ms->lkey, (uintptr_t)dst, md->rkey),
			 0);
	soft_env_expect(env.cq[0], 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_memory_equal(src, dst, 64);
	memset(dst, 'b', sizeof(dst));
	assert_int_equal(soft_env_rdma(env.qp[0], IB_WR_RDMA_READ, 2, src, 64,
				       ms->lkey, (uintptr_t)dst, md->rkey),
			 0);
	soft_env_expect(env.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	assert_memory_equal(src, dst, 64);
	soft_env_post_recv(env.qp[1], 3, rbuf, sizeof(rbuf),
			   env.pd[1]->local_dma_lkey);
	assert_int_equal(soft_env_send(env.qp[0], 4, src, 10, ms->lkey), 0);
	soft_env_expect(env.cq[1], 3, IB_WC_SUCCESS, IB_WC_RECV);
	soft_env_expect(env.cq[0], 4, IB_WC_SUCCESS, IB_WC_SEND);
	assert_memory_equal(src, rbuf, 10);
	soft_env_dereg(ms);
	soft_env_dereg(md);
	soft_env_fini(&env);
}

static void test_smoke_rxe(void **state)
{
	smoke("rxe");
}

static void test_smoke_mlx5(void **state)
{
	smoke("mlx5");
}

static void test_smoke_siw(void **state)
{
	smoke("siw");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke_rxe),
		cmocka_unit_test(test_smoke_mlx5),
		cmocka_unit_test(test_smoke_siw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

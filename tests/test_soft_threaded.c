// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Several threads posting at once: four threads on one QP (on a threaded
 * device and inline), and four threads each on its own QP pair of the same
 * two threaded devices.  Every thread checks its own completions and the
 * bytes its work moved.  A QP whose poller stops polling still completes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 4
#define NWRITES 400
#define SLOTS 32
#define SLOT_LEN 512
#define REGION (SLOTS * SLOT_LEN)
#define ALL_ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

static u8 pattern(int t, int slot, int b)
{
	return (u8)(t * 73 + slot * 11 + b * 5 + 1);
}

static u32 slot_len(int t, int slot)
{
	return 1 + (u32)((t * 131 + slot * 37) % SLOT_LEN);
}

/* ---- four threads, one QP ----------------------------------------------- */

struct shared {
	struct soft_env env;
	u8 *src, *dst, *back;
	struct ib_mr *src_mr, *dst_mr, *back_mr;
	long done[NTHREADS]; /* completions seen, by owner */
	long errors;
	long enomem;
};

struct worker {
	struct shared *sh;
	int t;
};

/* Take what is there; count each completion for the thread that owns it. */
static void poll_some(struct shared *sh)
{
	struct ib_wc wc[16];
	int i, n = ib_poll_cq(sh->env.cq[0], 16, wc);

	for (i = 0; i < n; i++) {
		int owner = (int)(wc[i].wr_id >> 32);

		if (wc[i].status != IB_WC_SUCCESS || owner >= NTHREADS)
			__atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&sh->done[owner], 1,
					   __ATOMIC_RELEASE);
	}
	if (!n)
		sched_yield();
}

static void post_retry(struct shared *sh, struct ib_send_wr *wr)
{
	int ret;

	while ((ret = ib_post_send(sh->env.qp[0], wr, NULL)) == -ENOMEM) {
		__atomic_add_fetch(&sh->enomem, 1, __ATOMIC_RELAXED);
		poll_some(sh);
	}
	if (ret)
		__atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
}

static void wait_done(struct shared *sh, int t, long n)
{
	/* Acquire: the bytes of the counted work are visible after. */
	while (__atomic_load_n(&sh->done[t], __ATOMIC_ACQUIRE) < n &&
	       !__atomic_load_n(&sh->errors, __ATOMIC_RELAXED))
		poll_some(sh);
}

static void *one_qp_worker(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	int t = w->t, i, s;
	u8 *src = sh->src + t * REGION;
	u8 *dst = sh->dst + t * REGION;
	u8 *back = sh->back + t * REGION;

	for (s = 0; s < SLOTS; s++)
		for (i = 0; i < SLOT_LEN; i++)
			src[s * SLOT_LEN + i] = pattern(t, s, i);
	for (i = 0; i < NWRITES; i++) {
		int slot = i % SLOTS;
		struct ib_sge sge = { (uintptr_t)src + slot * SLOT_LEN,
				      slot_len(t, slot), sh->src_mr->lkey };
		struct ib_rdma_wr wr = {
			.wr = { .wr_id = (u64)t << 32 | (u64)i,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IB_WR_RDMA_WRITE,
				/* Every fourth one signaled: the others ride
				 * on it in Send Queue accounting. */
				.send_flags = (i % 4 == 3 || i == NWRITES - 1) ?
						      IB_SEND_SIGNALED :
						      0 },
			.remote_addr = (uintptr_t)dst + slot * SLOT_LEN,
			.rkey = sh->dst_mr->rkey,
		};

		post_retry(sh, &wr.wr);
	}
	wait_done(sh, t, NWRITES / 4);
	/* Read the region back and compare. */
	for (s = 0; s < SLOTS; s++) {
		struct ib_sge sge = { (uintptr_t)back + s * SLOT_LEN, SLOT_LEN,
				      sh->back_mr->lkey };
		struct ib_rdma_wr wr = {
			.wr = { .wr_id = (u64)t << 32 | (u64)(NWRITES + s),
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IB_WR_RDMA_READ,
				.send_flags = IB_SEND_SIGNALED },
			.remote_addr = (uintptr_t)dst + s * SLOT_LEN,
			.rkey = sh->dst_mr->rkey,
		};

		post_retry(sh, &wr.wr);
	}
	wait_done(sh, t, NWRITES / 4 + SLOTS);
	for (s = 0; s < SLOTS; s++) {
		for (i = 0; i < SLOT_LEN; i++) {
			u8 want =
				(u32)i < slot_len(t, s) ? pattern(t, s, i) : 0;

			if (back[s * SLOT_LEN + i] != want ||
			    dst[s * SLOT_LEN + i] != want)
				__atomic_add_fetch(&sh->errors, 1,
						   __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void one_qp(bool threaded)
{
	struct soft_env_cfg cfg = { .profile = "rxe",
				    .threaded = threaded,
				    .cap = { .max_send_wr = 32 },
				    .cqe = 4096 };
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	struct shared *sh = calloc(1, sizeof(*sh));
	size_t len = NTHREADS * REGION;
	int t;

	assert_non_null(sh);
	soft_env_init(&sh->env, &cfg);
	sh->src = calloc(1, len);
	sh->dst = calloc(1, len);
	sh->back = calloc(1, len);
	assert_non_null(sh->src);
	assert_non_null(sh->dst);
	assert_non_null(sh->back);
	sh->src_mr = soft_env_reg(&sh->env, 0, sh->src, len, ALL_ACCESS);
	sh->back_mr = soft_env_reg(&sh->env, 0, sh->back, len, ALL_ACCESS);
	sh->dst_mr = soft_env_reg(&sh->env, 1, sh->dst, len, ALL_ACCESS);
	for (t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ sh, t };
		assert_int_equal(
			pthread_create(&th[t], NULL, one_qp_worker, &w[t]), 0);
	}
	for (t = 0; t < NTHREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);
	assert_int_equal(sh->errors, 0);
	for (t = 0; t < NTHREADS; t++)
		assert_int_equal(sh->done[t], NWRITES / 4 + SLOTS);
	/* 32 slots for 4 x 400 WRITEs: the queue filled up at times. */
	assert_true(sh->enomem > 0 || threaded);
	assert_int_equal(soft_env_state(sh->env.qp[0]), IB_QPS_RTS);
	soft_env_expect_empty(sh->env.cq[0]);
	soft_env_dereg(sh->src_mr);
	soft_env_dereg(sh->back_mr);
	soft_env_dereg(sh->dst_mr);
	soft_env_fini(&sh->env);
	free(sh->src);
	free(sh->dst);
	free(sh->back);
	free(sh);
}

static void test_four_threads_one_qp_threaded(void **state)
{
	one_qp(true);
}

static void test_four_threads_one_qp_inline(void **state)
{
	one_qp(false);
}

/* ---- four threads, four QP pairs ---------------------------------------- */

struct pair_worker {
	struct soft_env *env;
	int t;
	int errors;
};

static struct ib_qp *make_qp(struct soft_env *env, int side, struct ib_cq *cq)
{
	struct ib_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	struct ib_qp *qp = ib_create_qp(env->pd[side], &qa);

	return IS_ERR(qp) ? NULL : qp;
}

/* Poll @cq until one completion comes; 0 if it is the expected one. */
static int wait_one(struct ib_cq *cq, u64 wr_id, enum ib_wc_opcode op)
{
	struct ib_wc wc;
	int n;

	while ((n = ib_poll_cq(cq, 1, &wc)) == 0)
		sched_yield();
	return n == 1 && wc.wr_id == wr_id && wc.opcode == op &&
			       wc.status == IB_WC_SUCCESS ?
		       0 :
		       -1;
}

static int pair_round(struct ib_qp *a, struct ib_qp *b, struct ib_cq *ca,
		      struct ib_cq *cb, u8 *x, u8 *y, struct ib_mr *mx,
		      struct ib_mr *my, int t, int r)
{
	struct ib_sge sge = { (uintptr_t)x, 256, mx->lkey };
	struct ib_sge rsge = { (uintptr_t)y + 512, 256, my->lkey };
	struct ib_recv_wr rwr = { .wr_id = 3, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 2,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)y,
		.rkey = my->rkey,
	};
	int i, err = 0;

	for (i = 0; i < 256; i++)
		x[i] = (u8)(t + r + i);
	err |= ib_post_send(a, &wr.wr, NULL);
	err |= wait_one(ca, 1, IB_WC_RDMA_WRITE);
	err |= memcmp(x, y, 256) != 0;
	/* SEND first, receive after: the send waits, then resumes. */
	err |= ib_post_send(a, &swr, NULL);
	err |= ib_post_recv(b, &rwr, NULL);
	err |= wait_one(cb, 3, IB_WC_RECV);
	err |= wait_one(ca, 2, IB_WC_SEND);
	err |= memcmp(x, y + 512, 256) != 0;
	/* READ back what b holds. */
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.wr_id = 4;
	sge.addr = (uintptr_t)x + 1024;
	err |= ib_post_send(a, &wr.wr, NULL);
	err |= wait_one(ca, 4, IB_WC_RDMA_READ);
	err |= memcmp(x + 1024, y, 256) != 0;
	return err;
}

static void *pair_worker(void *arg)
{
	struct pair_worker *w = arg;
	struct soft_env *env = w->env;
	struct ib_cq *ca =
		ib_alloc_cq(env->dev[0], NULL, 64, 0, IB_POLL_DIRECT);
	struct ib_cq *cb =
		ib_alloc_cq(env->dev[1], NULL, 64, 0, IB_POLL_DIRECT);
	struct ib_qp *a = make_qp(env, 0, ca), *b = make_qp(env, 1, cb);
	u8 *x = calloc(1, 4096), *y = calloc(1, 4096);
	struct ib_mr *mx, *my;
	int r;

	mx = ib_reg_user_mr(env->pd[0], (uintptr_t)x, 4096, (uintptr_t)x,
			    ALL_ACCESS);
	my = ib_reg_user_mr(env->pd[1], (uintptr_t)y, 4096, (uintptr_t)y,
			    ALL_ACCESS);
	if (!a || !b || IS_ERR(mx) || IS_ERR(my) || soft_qp_connect(a, b)) {
		w->errors = 1000;
		return NULL;
	}
	for (r = 0; r < 200; r++)
		w->errors +=
			pair_round(a, b, ca, cb, x, y, mx, my, w->t, r) != 0;
	w->errors += ib_destroy_qp(a) + ib_destroy_qp(b) != 0;
	w->errors += ib_dereg_mr(mx) + ib_dereg_mr(my) != 0;
	w->errors += ib_free_cq(ca) + ib_free_cq(cb) != 0;
	free(x);
	free(y);
	return NULL;
}

static void test_four_threads_four_pairs(void **state)
{
	struct soft_env env;
	struct pair_worker w[NTHREADS];
	pthread_t th[NTHREADS];
	struct soft_stats st;
	int t;

	/* rxe: pair_round() posts a SEND before its receive (an RNR wait;
	 * siw would terminate). */
	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "rxe",
						    .threaded = true });
	for (t = 0; t < NTHREADS; t++) {
		w[t] = (struct pair_worker){ &env, t, 0 };
		assert_int_equal(
			pthread_create(&th[t], NULL, pair_worker, &w[t]), 0);
	}
	for (t = 0; t < NTHREADS; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		assert_int_equal(w[t].errors, 0);
	}
	assert_int_equal(soft_device_stats(env.dev[0], &st), 0);
	assert_int_equal(st.wrs_executed, NTHREADS * 200 * 3);
	soft_env_fini(&env);
}

/* ---- destroying while the progress thread works ------------------------- */

/*
 * A QP destroyed right after posting, on threaded devices, while its peer
 * is also busy: no crash, nothing left behind (soft_env_fini() checks).
 */
static void test_destroy_while_busy(void **state)
{
	struct soft_env env;
	struct ib_mr *mr[2];
	u8 *buf[2];
	int round, i, side;

	for (round = 0; round < 20; round++) {
		soft_env_init(&env,
			      &(struct soft_env_cfg){
				      .profile = round % 2 ? "siw" : "rxe",
				      .threaded = true,
				      .loopback = round % 4 == 3,
				      .cap = { .max_send_wr = 64 } });
		for (side = 0; side < 2; side++) {
			buf[side] = calloc(1, 65536);
			assert_non_null(buf[side]);
			mr[side] = soft_env_reg(&env, side, buf[side], 65536,
						ALL_ACCESS);
		}
		/* Each direction in its own half: no application race. */
		for (i = 0; i < 64; i++) {
			u32 off = 1024 * (u32)(i / 2) + 32768 * (u32)(i % 2);

			side = i % 2;
			soft_env_rdma(env.qp[side], IB_WR_RDMA_WRITE, (u64)i,
				      buf[side] + off, 1024, mr[side]->lkey,
				      (uintptr_t)buf[!side] + off,
				      mr[!side]->rkey);
		}
		/* A SEND that waits for a receive that will never come. */
		soft_env_send(env.qp[1], 99, NULL, 0, 0);
		assert_int_equal(ib_destroy_qp(env.qp[round % 2]), 0);
		env.qp[round % 2] = NULL;
		assert_int_equal(ib_destroy_qp(env.qp[!(round % 2)]), 0);
		env.qp[!(round % 2)] = NULL;
		for (side = 0; side < 2; side++) {
			soft_env_dereg(mr[side]);
			free(buf[side]);
		}
		soft_env_fini(&env);
	}
}

/* ---- the core's CQ thread (IB_POLL_WORKQUEUE) ---------------------------- */

struct done_flag {
	struct ib_cqe cqe;
	int calls;
	enum ib_wc_status status;
};

static void flag_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct done_flag *d = container_of(wc->wr_cqe, struct done_flag, cqe);

	d->status = wc->status;
	__atomic_add_fetch(&d->calls, 1, __ATOMIC_RELEASE);
}

/* Completions reach wr_cqe->done on the CQ's own thread: the device calls
 * comp_handler when armed, the thread polls and re-arms. */
static void cq_thread(bool threaded)
{
	struct soft_env env;
	struct done_flag d[50];
	struct ib_qp_init_attr qa = { .qp_type = IB_QPT_RC,
				      .port_num = 1,
				      .cap = { .max_send_wr = 64,
					       .max_recv_wr = 4,
					       .max_send_sge = 1,
					       .max_recv_sge = 1 } };
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;
	u8 *buf = calloc(1, 8192);
	int i;

	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "mlx5",
						    .threaded = threaded,
						    .no_connect = true });
	cq = ib_alloc_cq(env.dev[0], NULL, 64, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(cq));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ib_create_qp(env.pd[0], &qa);
	assert_false(IS_ERR(qp));
	assert_int_equal(soft_qp_connect(qp, env.qp[1]), 0);
	mr = soft_env_reg(&env, 1, buf, 8192, ALL_ACCESS);
	for (i = 0; i < 50; i++) {
		struct ib_sge sge = { (uintptr_t)buf + 64 * i, 64,
				      env.pd[0]->local_dma_lkey };
		struct ib_rdma_wr wr = {
			.wr = { .wr_cqe = &d[i].cqe,
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IB_WR_RDMA_WRITE,
				.send_flags = IB_SEND_SIGNALED },
			.remote_addr = (uintptr_t)buf + 4096 + 64 * i,
			.rkey = mr->rkey,
		};

		d[i] = (struct done_flag){ .cqe.done = flag_done };
		while (ib_post_send(qp, &wr.wr, NULL) == -ENOMEM)
			sched_yield();
	}
	for (i = 0; i < 50; i++) {
		while (!__atomic_load_n(&d[i].calls, __ATOMIC_ACQUIRE))
			sched_yield();
		assert_int_equal(d[i].calls, 1);
		assert_int_equal(d[i].status, IB_WC_SUCCESS);
	}
	assert_int_equal(ib_destroy_qp(qp), 0);
	assert_int_equal(ib_free_cq(cq), 0);
	soft_env_dereg(mr);
	soft_env_fini(&env);
	free(buf);
}

static void test_cq_thread_inline(void **state)
{
	cq_thread(false);
}

static void test_cq_thread_threaded(void **state)
{
	cq_thread(true);
}

/* ---- a QP whose poller stops polling ------------------------------------ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static u64 wrs_executed(struct ib_device *dev)
{
	struct soft_stats st;

	assert_int_equal(soft_device_stats(dev, &st), 0);
	return st.wrs_executed;
}

/*
 * A kick to a QP whose send CQ is being polled does not wake a napping
 * progress thread: the poller is to run it.  When that poller never polls
 * again, the thread's nap must: the second WRITE of each round executes
 * with nobody polling, and its completion is waiting.  Every fourth round
 * waits first until the thread sleeps with no timeout (its 64 naps of
 * 1 ms), so the kick must wake it.  The owner only reads the device's
 * counter, which takes no part in running the queue.
 */
static void test_unpolled_qp_completes(void **state)
{
	struct soft_env env;
	struct ib_wc wc;
	struct ib_mr *mr;
	u8 *buf = calloc(1, 8192);
	int round;

	assert_non_null(buf);
	soft_env_init(&env, &(struct soft_env_cfg){ .threaded = true });
	mr = soft_env_reg(&env, 1, buf + 4096, 4096, ALL_ACCESS);
	for (round = 0; round < 12; round++) {
		u64 before = wrs_executed(env.dev[0]);
		double deadline;

		memset(buf, round + 1, 64);
		assert_int_equal(
			soft_env_rdma(
				env.qp[0], IB_WR_RDMA_WRITE, 2 * (u64)round,
				buf, 64, env.pd[0]->local_dma_lkey,
				(uintptr_t)buf + 4096 + 128 * round, mr->rkey),
			0);
		soft_env_poll(env.cq[0], 1, &wc); /* polls until it is there */
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		if (round % 4 == 3)
			usleep(100 * 1000);
		assert_int_equal(
			soft_env_rdma(env.qp[0], IB_WR_RDMA_WRITE,
				      2 * (u64)round + 1, buf, 64,
				      env.pd[0]->local_dma_lkey,
				      (uintptr_t)buf + 4096 + 128 * round + 64,
				      mr->rkey),
			0);
		deadline = now_s() + 5;
		while (wrs_executed(env.dev[0]) < before + 2 &&
		       now_s() < deadline)
			usleep(200);
		assert_int_equal(wrs_executed(env.dev[0]), before + 2);
		soft_env_expect(env.cq[0], 2 * (u64)round + 1, IB_WC_SUCCESS,
				IB_WC_RDMA_WRITE);
		assert_int_equal(buf[4096 + 128 * round + 64], (u8)(round + 1));
	}
	soft_env_dereg(mr);
	soft_env_fini(&env);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_threads_one_qp_threaded),
		cmocka_unit_test(test_four_threads_one_qp_inline),
		cmocka_unit_test(test_four_threads_four_pairs),
		cmocka_unit_test(test_destroy_while_busy),
		cmocka_unit_test(test_cq_thread_inline),
		cmocka_unit_test(test_cq_thread_threaded),
		cmocka_unit_test(test_unpolled_qp_completes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

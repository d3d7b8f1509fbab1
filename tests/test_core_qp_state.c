// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one owner of QP state (issue 13, deliverable 4).
 *
 * The state table: every pair of states on the fake provider, with the
 * masks the kernel's ib_modify_qp_is_ok() requires and accepts for RC QPs,
 * without each required bit, with each accepted bit, with a bit the pair
 * does not accept and with IB_QP_CUR_STATE -> 0 or -EINVAL, and the state
 * after each call.  The expected table is written out here from the
 * kernel's qp_state_table[][] (drivers/infiniband/core/verbs.c), apart
 * from the core's copy.
 *
 * The helper's compare-and-swap: an ERR set between its check and its
 * commit (the core's test hook), and a thread moving a fake QP RTS <-> SQD
 * through rdmarw__qp_move() while the test moves it to ERR, which must
 * stay (this one catches a plain store only now and then).
 *
 * The race of a device's ERR against ib_modify_qp() on the software device:
 * made deterministic by a wrapper around the device's modify op that makes
 * the device move the QP to ERR between the core's check and its commit
 * (a work request failing through the fault hook, or a peer's WRITE with a
 * bad rkey), and left to the scheduler in a threaded test where one thread
 * moves the QP RTS -> SQD -> RTS in a loop while another posts work
 * requests until one fails.  After the race the QP is ERR and stays ERR, and
 * every work request completed exactly once, none of them successfully
 * after the first error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/fake_provider.h"
#include "helpers/soft_env.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSTATES (IB_QPS_ERR + 1)
#define ALL_BITS ((IB_QP_DEST_QPN << 1) - 1)

/* ---- the table ---------------------------------------------------------- */

struct expect {
	bool ok;
	int req;
	int opt;
};

#define RTS_OPT                                                  \
	(IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | IB_QP_ALT_PATH | \
	 IB_QP_PATH_MIG_STATE | IB_QP_MIN_RNR_TIMER)
#define SQD_SQD_OPT                                                            \
	(IB_QP_PORT | IB_QP_AV | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |             \
	 IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC | \
	 IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX |              \
	 IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE)

static const struct expect kernel_rc[NSTATES][NSTATES] = {
	[IB_QPS_RESET][IB_QPS_RESET] = { true, 0, 0 },
	[IB_QPS_RESET][IB_QPS_INIT] = { true,
					IB_QP_PKEY_INDEX | IB_QP_PORT |
						IB_QP_ACCESS_FLAGS,
					0 },
	[IB_QPS_INIT][IB_QPS_RESET] = { true, 0, 0 },
	[IB_QPS_INIT][IB_QPS_ERR] = { true, 0, 0 },
	[IB_QPS_INIT][IB_QPS_INIT] = { true, 0,
				       IB_QP_PKEY_INDEX | IB_QP_PORT |
					       IB_QP_ACCESS_FLAGS },
	[IB_QPS_INIT][IB_QPS_RTR] = { true,
				      IB_QP_AV | IB_QP_PATH_MTU |
					      IB_QP_DEST_QPN | IB_QP_RQ_PSN |
					      IB_QP_MAX_DEST_RD_ATOMIC |
					      IB_QP_MIN_RNR_TIMER,
				      IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS |
					      IB_QP_PKEY_INDEX },
	[IB_QPS_RTR][IB_QPS_RESET] = { true, 0, 0 },
	[IB_QPS_RTR][IB_QPS_ERR] = { true, 0, 0 },
	[IB_QPS_RTR][IB_QPS_RTS] = { true,
				     IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
					     IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
					     IB_QP_MAX_QP_RD_ATOMIC,
				     RTS_OPT },
	[IB_QPS_RTS][IB_QPS_RESET] = { true, 0, 0 },
	[IB_QPS_RTS][IB_QPS_ERR] = { true, 0, 0 },
	[IB_QPS_RTS][IB_QPS_RTS] = { true, 0, RTS_OPT },
	[IB_QPS_RTS][IB_QPS_SQD] = { true, 0, IB_QP_EN_SQD_ASYNC_NOTIFY },
	[IB_QPS_SQD][IB_QPS_RESET] = { true, 0, 0 },
	[IB_QPS_SQD][IB_QPS_ERR] = { true, 0, 0 },
	[IB_QPS_SQD][IB_QPS_RTS] = { true, 0, RTS_OPT },
	[IB_QPS_SQD][IB_QPS_SQD] = { true, 0, SQD_SQD_OPT },
	[IB_QPS_SQE][IB_QPS_RESET] = { true, 0, 0 },
	[IB_QPS_SQE][IB_QPS_ERR] = { true, 0, 0 },
	[IB_QPS_SQE][IB_QPS_RTS] = { true, 0, 0 },
	[IB_QPS_ERR][IB_QPS_RESET] = { true, 0, 0 },
	[IB_QPS_ERR][IB_QPS_ERR] = { true, 0, 0 },
};

struct fenv {
	struct fake_dev *fd;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

static int fsetup(void **state)
{
	static struct fenv env;
	struct ib_qp_init_attr a = {
		.cap = { .max_send_wr = 8,
			 .max_recv_wr = 8,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	env.fd = fake_dev_new("qps%d", RDMA_PROTOCOL_IB);
	if (!env.fd)
		return -1;
	env.pd = ib_alloc_pd(&env.fd->ibdev, 0);
	env.cq = ib_alloc_cq(&env.fd->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(env.pd) || IS_ERR(env.cq))
		return -1;
	a.send_cq = env.cq;
	a.recv_cq = env.cq;
	env.qp = ib_create_qp(env.pd, &a);
	if (IS_ERR(env.qp))
		return -1;
	*state = &env;
	return 0;
}

static int fteardown(void **state)
{
	struct fenv *env = *state;

	env->qp->state = IB_QPS_RESET;
	assert_int_equal(ib_destroy_qp(env->qp), 0);
	assert_int_equal(ib_free_cq(env->cq), 0);
	assert_int_equal(ib_dealloc_pd(env->pd), 0);
	assert_int_equal(env->fd->live_qps, 0);
	return fake_dev_free(env->fd);
}

/*
 * Put the QP in @cur (the test's own setup, not a transition under test),
 * call ib_modify_qp() to @next with @mask and check the answer and the
 * state after it.
 */
static void try_move(struct fenv *env, int cur, int next, int mask,
		     bool want_ok)
{
	struct ib_qp_attr attr = { .qp_state = (enum ib_qp_state)next,
				   .cur_qp_state = (enum ib_qp_state)cur,
				   .port_num = 1,
				   .dest_qp_num = 1 };
	int ret;

	env->qp->state = (enum ib_qp_state)cur;
	ret = ib_modify_qp(env->qp, &attr, mask);
	if (want_ok) {
		if (ret)
			fail_msg("%d -> %d mask %#x: %d, expected 0", cur, next,
				 mask, ret);
		assert_int_equal(env->qp->state,
				 (mask & IB_QP_STATE) ? next : cur);
	} else {
		if (ret != -EINVAL)
			fail_msg("%d -> %d mask %#x: %d, expected -EINVAL", cur,
				 next, mask, ret);
		assert_int_equal(env->qp->state, cur);
	}
}

static void test_state_table(void **state)
{
	struct fenv *env = *state;
	int cur, next, bit, pairs = 0;

	for (cur = 0; cur < NSTATES; cur++) {
		for (next = 0; next < NSTATES; next++) {
			const struct expect *e = &kernel_rc[cur][next];
			int base = IB_QP_STATE | e->req;

			pairs += e->ok;
			/* The required bits: all of them, and each missing. */
			try_move(env, cur, next, base, e->ok);
			for (bit = 1; bit <= ALL_BITS; bit <<= 1)
				if (e->req & bit)
					try_move(env, cur, next, base & ~bit,
						 false);
			/* Each bit outside: accepted only if optional. */
			for (bit = 2; bit <= ALL_BITS; bit <<= 1) {
				if (e->req & bit)
					continue;
				try_move(env, cur, next, base | bit,
					 e->ok && (e->opt & bit));
			}
			/* All accepted bits at once. */
			try_move(env, cur, next, base | e->opt, e->ok);
		}
	}
	assert_int_equal(pairs, 22);
}

/* Without IB_QP_STATE the move is @cur -> @cur (attributes only). */
static void test_no_state_bit(void **state)
{
	struct fenv *env = *state;
	int cur;

	for (cur = 0; cur < NSTATES; cur++) {
		const struct expect *e = &kernel_rc[cur][cur];

		try_move(env, cur, cur, IB_QP_ACCESS_FLAGS,
			 e->ok && (e->opt & IB_QP_ACCESS_FLAGS));
	}
}

/* Out-of-range states and an IB_QP_CUR_STATE that does not match. */
static void test_bad_states(void **state)
{
	struct fenv *env = *state;
	struct ib_qp_attr attr = { .qp_state = (enum ib_qp_state)7 };

	assert_int_equal(rdmarw__qp_move_ok(IB_QPS_RTS, (enum ib_qp_state)7,
					    IB_QP_STATE),
			 -EINVAL);
	assert_int_equal(rdmarw__qp_move_ok((enum ib_qp_state) - 1, IB_QPS_ERR,
					    IB_QP_STATE),
			 -EINVAL);
	env->qp->state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(env->qp, &attr, IB_QP_STATE), -EINVAL);
	attr.qp_state = IB_QPS_SQD;
	attr.cur_qp_state = IB_QPS_SQD;
	assert_int_equal(
		ib_modify_qp(env->qp, &attr, IB_QP_STATE | IB_QP_CUR_STATE),
		-EINVAL);
	assert_int_equal(env->qp->state, IB_QPS_RTS);
	/* A device's own move to ERR from RESET is refused too. */
	env->qp->state = IB_QPS_RESET;
	assert_int_equal(
		rdmarw__qp_move(env->qp, IB_QPS_ERR, IB_QP_STATE, NULL),
		-EINVAL);
	assert_int_equal(env->qp->state, IB_QPS_RESET);
}

/* ---- the helper's compare-and-swap --------------------------------------- */

#define CAS_ROUNDS 20000

struct mover {
	struct ib_qp *qp;
	int stop;
	long moves;
};

/* RTS -> SQD -> RTS as fast as the helper takes them. */
static void *move_loop(void *arg)
{
	struct mover *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		if (!rdmarw__qp_move(m->qp, IB_QPS_SQD, IB_QP_STATE, NULL))
			__atomic_add_fetch(&m->moves, 1, __ATOMIC_RELAXED);
		if (!rdmarw__qp_move(m->qp, IB_QPS_RTS, IB_QP_STATE, NULL))
			__atomic_add_fetch(&m->moves, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* RESET, INIT, RTR, RTS; the number of moves refused (asserted later). */
static int to_rts(struct ib_qp *qp)
{
	static const int masks[] = {
		IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			IB_QP_ACCESS_FLAGS,
		IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
			IB_QP_MIN_RNR_TIMER,
		IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC,
	};
	static const enum ib_qp_state to[] = { IB_QPS_INIT, IB_QPS_RTR,
					       IB_QPS_RTS };
	int i, refused = 0;

	refused += !!rdmarw__qp_move(qp, IB_QPS_RESET, IB_QP_STATE, NULL);
	for (i = 0; i < 3; i++)
		refused += !!rdmarw__qp_move(qp, to[i], masks[i], NULL);
	return refused;
}

/* Busy-wait @n steps (a compiler barrier each, so the loop stays). */
static void delay(int n)
{
	int i;

	for (i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

/*
 * One thread moves the QP RTS <-> SQD through the helper without pause;
 * the test moves it to ERR, as a device would, at a random moment, and
 * the QP must still be ERR a while later (the mover's moves from ERR all
 * fail).  A plain store instead of the compare-and-swap lets the mover's
 * move, checked from RTS just before, overwrite the ERR.
 */
static void test_move_cas_race(void **state)
{
	struct fenv *env = *state;
	struct mover m = { .qp = env->qp };
	enum ib_qp_state old;
	int round, overwritten = 0, from_live = 0;
	u64 rng = 0x5eed;
	pthread_t th;

	env->qp->state = IB_QPS_RESET;
	assert_int_equal(to_rts(env->qp), 0);
	assert_int_equal(pthread_create(&th, NULL, move_loop, &m), 0);
	/* Start once the mover runs (bounded: 10^6 yields). */
	for (round = 0;
	     round < 1000000 && !__atomic_load_n(&m.moves, __ATOMIC_RELAXED);
	     round++)
		sched_yield();
	for (round = 0; round < CAS_ROUNDS; round++) {
		delay((int)(soft_env_rand(&rng) % 200));
		if (rdmarw__qp_move(env->qp, IB_QPS_ERR, IB_QP_STATE, &old))
			overwritten++;
		from_live += old != IB_QPS_ERR;
		delay(200);
		if (__atomic_load_n(&env->qp->state, __ATOMIC_ACQUIRE) !=
		    IB_QPS_ERR)
			overwritten++;
		/* Counted, not asserted, while the mover runs.  Its moves
		 * fail from RESET, INIT and RTR too. */
		overwritten += to_rts(env->qp);
	}
	__atomic_store_n(&m.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(overwritten, 0);
	assert_int_equal(from_live, CAS_ROUNDS);
	assert_true(__atomic_load_n(&m.moves, __ATOMIC_RELAXED) > 0);
}

/* The device's ERR lands between the helper's check and its commit. */
static void err_in_window(struct ib_qp *qp, enum ib_qp_state next)
{
	enum ib_qp_state old;

	(void)next;
	__atomic_store_n(&rdmarw__qp_move_test_hook, NULL, __ATOMIC_RELEASE);
	assert_int_equal(rdmarw__qp_move(qp, IB_QPS_ERR, IB_QP_STATE, &old), 0);
	assert_int_equal(old, IB_QPS_RTS);
}

static void test_move_cas_window(void **state)
{
	struct fenv *env = *state;
	enum ib_qp_state old;

	env->qp->state = IB_QPS_RESET;
	assert_int_equal(to_rts(env->qp), 0);
	__atomic_store_n(&rdmarw__qp_move_test_hook, err_in_window,
			 __ATOMIC_RELEASE);
	/* Checked from RTS, committed against ERR: refused. */
	assert_int_equal(
		rdmarw__qp_move(env->qp, IB_QPS_SQD, IB_QP_STATE, &old),
		-EINVAL);
	assert_null(rdmarw__qp_move_test_hook);
	assert_int_equal(old, IB_QPS_ERR);
	assert_int_equal(env->qp->state, IB_QPS_ERR);
	/* A move ERR allows goes through from the state found. */
	assert_int_equal(to_rts(env->qp), 0);
	__atomic_store_n(&rdmarw__qp_move_test_hook, err_in_window,
			 __ATOMIC_RELEASE);
	assert_int_equal(
		rdmarw__qp_move(env->qp, IB_QPS_RESET, IB_QP_STATE, &old), 0);
	assert_int_equal(old, IB_QPS_ERR);
	assert_int_equal(env->qp->state, IB_QPS_RESET);
}

/* ---- the race, made deterministic --------------------------------------- */

#define RACE_LEN 64

/*
 * The software device's ops with modify_qp wrapped, for one call: before
 * the device's own op runs (the core has checked the move, not yet
 * committed it), race_hook makes the device move the QP to ERR.  The
 * device's own table is put back first: the software device recognises
 * its devices by it.
 */
static struct ib_device_ops wrapped_ops;
static const struct ib_device_ops *soft_ops;
static void (*race_hook)(struct ib_qp *qp);

static int wrapped_modify(struct ib_qp *qp, struct ib_qp_attr *attr, int mask)
{
	void (*hook)(struct ib_qp *) = race_hook;

	qp->device->ops = soft_ops;
	race_hook = NULL;
	if (hook)
		hook(qp);
	return soft_ops->modify_qp(qp, attr, mask);
}

static void wrap_modify_once(struct ib_device *dev,
			     void (*hook)(struct ib_qp *))
{
	soft_ops = dev->ops;
	wrapped_ops = *dev->ops;
	wrapped_ops.modify_qp = wrapped_modify;
	race_hook = hook;
	dev->ops = &wrapped_ops;
}

static struct soft_pair race_pair;

/* A WRITE from side 0 fails on the device (fault hook): side 0 goes ERR. */
static void fail_a_write(struct ib_qp *qp)
{
	struct soft_pair *p = &race_pair;
	struct soft_fault_rule r = { .type = SOFT_FAULT_QP_ERR, .nth = 1 };

	assert_ptr_equal(qp, p->env.qp[0]);
	assert_int_equal(soft_fault_arm_qp(qp, &r), 0);
	assert_int_equal(soft_env_rdma(qp, IB_WR_RDMA_WRITE, 100, p->buf[0],
				       RACE_LEN, p->mr[0]->lkey,
				       (uintptr_t)p->buf[1], p->mr[1]->rkey),
			 0);
	assert_int_equal(soft_env_state(qp), IB_QPS_ERR);
}

/* Side 1 WRITEs to side 0 with a bad rkey: side 0, the responder, goes ERR. */
static void bad_rkey_from_peer(struct ib_qp *qp)
{
	struct soft_pair *p = &race_pair;

	assert_ptr_equal(qp, p->env.qp[0]);
	assert_int_equal(soft_env_rdma(p->env.qp[1], IB_WR_RDMA_WRITE, 200,
				       p->buf[1], RACE_LEN, p->mr[1]->lkey,
				       (uintptr_t)p->buf[0],
				       p->mr[0]->rkey ^ 0x80),
			 0);
	assert_int_equal(soft_env_state(qp), IB_QPS_ERR);
}

static void expect_stays_err(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_SQD };

	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	attr.qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	assert_int_equal(soft_env_state(qp), IB_QPS_ERR);
}

/* RTS -> SQD while a WR fails: the QP ends in ERR, the move fails. */
static void test_err_during_sqd(void **state)
{
	struct soft_pair *p = &race_pair;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_SQD };
	struct ib_qp *qp;

	(void)state;
	soft_pair_init(p, &(struct soft_env_cfg){ .profile = "rxe" }, 4096,
		       0x11);
	qp = p->env.qp[0];
	wrap_modify_once(qp->device, fail_a_write);
	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	assert_int_equal(soft_env_state(qp), IB_QPS_ERR);
	/* The failed WRITE completed once, with the fault's flush. */
	soft_env_expect(p->env.cq[0], 100, IB_WC_WR_FLUSH_ERR,
			IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p->env.cq[0]);
	expect_stays_err(qp);
	/* A WR posted now is flushed at once, exactly once. */
	assert_int_equal(soft_env_rdma(qp, IB_WR_RDMA_WRITE, 101, p->buf[0],
				       RACE_LEN, p->mr[0]->lkey,
				       (uintptr_t)p->buf[1], p->mr[1]->rkey),
			 0);
	soft_env_expect(p->env.cq[0], 101, IB_WC_WR_FLUSH_ERR,
			IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p->env.cq[0]);
	/* Nothing reached the peer. */
	assert_int_equal(p->buf[1][0], 0x12);
	assert_ptr_equal(qp->device->ops, soft_ops);
	soft_pair_fini(p);
}

/* SQD -> RTS while the peer's bad WRITE errors the QP: ERR stays. */
static void test_err_during_rts(void **state)
{
	struct soft_pair *p = &race_pair;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_SQD };
	struct ib_wc wc;
	struct ib_qp *qp;

	(void)state;
	soft_pair_init(p, &(struct soft_env_cfg){ .profile = "rxe" }, 4096,
		       0x21);
	qp = p->env.qp[0];
	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_STATE), 0);
	/* Queued in SQD: it must be flushed, never executed. */
	assert_int_equal(soft_env_rdma(qp, IB_WR_RDMA_WRITE, 300, p->buf[0],
				       RACE_LEN, p->mr[0]->lkey,
				       (uintptr_t)p->buf[1], p->mr[1]->rkey),
			 0);
	soft_env_expect_empty(p->env.cq[0]);
	wrap_modify_once(qp->device, bad_rkey_from_peer);
	attr.qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	assert_int_equal(soft_env_state(qp), IB_QPS_ERR);
	/* The peer's WRITE failed on the remote side. */
	soft_env_poll(p->env.cq[1], 1, &wc);
	assert_int_equal(wc.wr_id, 200);
	assert_int_not_equal(wc.status, IB_WC_SUCCESS);
	soft_env_expect_empty(p->env.cq[1]);
	soft_env_expect(p->env.cq[0], 300, IB_WC_WR_FLUSH_ERR,
			IB_WC_RDMA_WRITE);
	soft_env_expect_empty(p->env.cq[0]);
	expect_stays_err(qp);
	/* Neither WRITE moved a byte. */
	assert_int_equal(p->buf[1][0], 0x22);
	assert_int_equal(p->buf[0][0], 0x21);
	assert_ptr_equal(qp->device->ops, soft_ops);
	soft_pair_fini(p);
}

/* ---- the race, left to the scheduler ------------------------------------ */

#define RACE_ROUNDS 12
#define RACE_WRS 300

struct toggler {
	struct ib_qp *qp;
	int stop;
	long moves;
	long refused_in_err;
	long bad;
};

static void *toggle(void *arg)
{
	struct toggler *t = arg;
	struct ib_qp_attr attr = { 0 };
	int i = 0;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		int ret;

		attr.qp_state = (i++ & 1) ? IB_QPS_RTS : IB_QPS_SQD;
		ret = ib_modify_qp(t->qp, &attr, IB_QP_STATE);
		if (!ret) {
			t->moves++;
		} else if (ret == -EINVAL &&
			   soft_env_state(t->qp) == IB_QPS_ERR) {
			t->refused_in_err++;
		} else {
			t->bad++;
		}
	}
	return NULL;
}

/*
 * Poll what is there into @seen; count successes after the first error
 * (and completions of WRs never posted) in @late_ok.
 */
static int reap(struct ib_cq *cq, u8 *seen, int *first_err, int *late_ok)
{
	struct ib_wc wc[16];
	int n, i, got = 0;

	while ((n = ib_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			int id = (int)wc[i].wr_id;

			/* Counted, not asserted: the toggler may be running. */
			if (id < 0 || id >= RACE_WRS) {
				(*late_ok)++;
				continue;
			}
			seen[id]++;
			if (wc[i].status != IB_WC_SUCCESS) {
				if (*first_err < 0 || id < *first_err)
					*first_err = id;
			} else if (*first_err >= 0) {
				(*late_ok)++;
			}
		}
		got += n;
	}
	return got;
}

static void race_round(struct soft_pair *p, u64 *rng)
{
	struct soft_fault_rule r = { .type = SOFT_FAULT_QP_ERR };
	struct ib_qp *qp = p->env.qp[0];
	struct toggler t = { .qp = qp };
	static u8 seen[RACE_WRS];
	struct timespec deadline;
	int posted = 0, done = 0, first_err = -1, late_ok = 0, i;
	pthread_t th;

	memset(seen, 0, sizeof(seen));
	r.nth = 20 + soft_env_rand(rng) % (RACE_WRS / 2);
	assert_int_equal(soft_fault_arm_qp(qp, &r), 0);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 60;
	assert_int_equal(pthread_create(&th, NULL, toggle, &t), 0);
	while (posted < RACE_WRS && !soft_env_past(&deadline)) {
		int ret = soft_env_rdma(qp, IB_WR_RDMA_WRITE, (u64)posted,
					p->buf[0] + (posted % 16) * RACE_LEN,
					RACE_LEN, p->mr[0]->lkey,
					(uintptr_t)p->buf[1] +
						(posted % 16) * RACE_LEN,
					p->mr[1]->rkey);

		if (!ret)
			posted++;
		else if (ret == -ENOMEM) /* the SQ is full in SQD */
			sched_yield();
		else
			break;
		done += reap(p->env.cq[0], seen, &first_err, &late_ok);
	}
	/* The fault fired: the QP reaches ERR, whatever the toggler does. */
	while (soft_env_state(qp) != IB_QPS_ERR && !soft_env_past(&deadline))
		sched_yield();
	/* Let the toggler beat on the ERR QP a little longer. */
	for (i = 0; i < 200; i++)
		sched_yield();
	/* Stopped before any assertion, which would leave it running. */
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(posted, RACE_WRS);
	assert_int_equal(soft_env_state(qp), IB_QPS_ERR);
	assert_int_equal(t.bad, 0);
	expect_stays_err(qp);
	while (done < RACE_WRS && !soft_env_past(&deadline))
		done += reap(p->env.cq[0], seen, &first_err, &late_ok);
	assert_int_equal(done, RACE_WRS);
	for (i = 0; i < RACE_WRS; i++)
		if (seen[i] != 1)
			fail_msg("WR %d completed %d times", i, seen[i]);
	assert_int_equal(first_err, (int)r.nth - 1);
	assert_int_equal(late_ok, 0);
	soft_env_expect_empty(p->env.cq[0]);
	assert_int_equal(soft_fault_clear_qp(qp), 0);
}

static void reconnect(struct soft_pair *p)
{
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };

	assert_int_equal(ib_modify_qp(p->env.qp[0], &reset, IB_QP_STATE), 0);
	assert_int_equal(ib_modify_qp(p->env.qp[1], &reset, IB_QP_STATE), 0);
	assert_int_equal(soft_qp_connect(p->env.qp[0], p->env.qp[1]), 0);
}

static void race_case(bool threaded)
{
	struct soft_env_cfg cfg = { .profile = "rxe", .threaded = threaded };
	struct soft_pair p;
	u64 rng = 0x9e3779b97f4a7c15ull + threaded;
	int round;

	soft_pair_init(&p, &cfg, 16 * RACE_LEN, 0x31);
	for (round = 0; round < RACE_ROUNDS; round++) {
		race_round(&p, &rng);
		reconnect(&p);
	}
	soft_pair_fini(&p);
}

static void test_race_inline(void **state)
{
	(void)state;
	race_case(false);
}

static void test_race_threaded(void **state)
{
	(void)state;
	race_case(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_state_table, fsetup,
						fteardown),
		cmocka_unit_test_setup_teardown(test_no_state_bit, fsetup,
						fteardown),
		cmocka_unit_test_setup_teardown(test_bad_states, fsetup,
						fteardown),
		cmocka_unit_test_setup_teardown(test_move_cas_window, fsetup,
						fteardown),
		cmocka_unit_test_setup_teardown(test_move_cas_race, fsetup,
						fteardown),
		cmocka_unit_test(test_err_during_sqd),
		cmocka_unit_test(test_err_during_rts),
		cmocka_unit_test(test_race_inline),
		cmocka_unit_test(test_race_threaded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

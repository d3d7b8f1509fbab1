// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The in-process host's request lifetime at a queue's teardown: a request
 * ends once, when its last outstanding piece of work (its SEND, the
 * response, the LOCAL_INV posted for an MR the target did not invalidate)
 * is gone, whether that is a completion or the teardown.
 *
 * The case fuzz_nvmet_capsule found (issue 26, item 6): a request whose
 * response has arrived waits for its LOCAL_INV; the queue is torn down
 * while the LOCAL_INV's completion has not been processed yet (here: the
 * queue's CQ thread is held in another request's @done, so the drain runs
 * out of time).  The teardown ended the request, and the LOCAL_INV's
 * completion, processed afterwards, ended it again: a NULL dereference
 * (the slot's request was already gone) or a second @done.
 *
 * And a response that comes for a slot the teardown has already freed
 * (test_late_response()): refused, not a second end.
 *
 * And a response the CQ thread is processing when the drain runs out of
 * time (test_failed_drain_waits()): the MR pool and the QP it uses stay
 * until the thread is done with it.
 */
#include "nvmet_env.h"

#include <rdmarw/mr_pool.h>

#include <pthread.h>

struct gate {
	pthread_mutex_t m;
	pthread_cond_t c;
	bool open;
	int entered; /* @done calls that reached the gate */
	bool left; /* one went through */
};

static struct gate gate_z, gate_a;
static int done_b;
static struct nvmeh_request rq_z, rq_a, rq_b;

static void gate_init(struct gate *g)
{
	pthread_mutex_init(&g->m, NULL);
	pthread_cond_init(&g->c, NULL);
	g->open = false;
	g->entered = 0;
	g->left = false;
}

/* Count, then wait until @g is open. */
static void gate_pass(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->entered++;
	pthread_cond_broadcast(&g->c);
	while (!g->open)
		pthread_cond_wait(&g->c, &g->m);
	g->left = true;
	pthread_cond_broadcast(&g->c);
	pthread_mutex_unlock(&g->m);
}

/* A request's @done: pass its gate (on the CQ thread). */
static void gated_done(struct nvmeh_request *rq)
{
	gate_pass(rq->priv);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->open = true;
	pthread_cond_broadcast(&g->c);
	pthread_mutex_unlock(&g->m);
}

/*
 * Wait (at most 10 s) until @n @done calls reached @g; else open @g (a
 * late one must not hold its CQ thread through the teardown) and fail.
 */
static void gate_wait_entered(struct gate *g, int n)
{
	struct timespec ts;
	int entered;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&g->m);
	while (g->entered < n && !pthread_cond_timedwait(&g->c, &g->m, &ts))
		;
	entered = g->entered;
	pthread_mutex_unlock(&g->m);
	if (entered < n) {
		gate_open(g);
		fail_msg("%d of %d @done calls reached the gate in 10 s",
			 entered, n);
	}
}

/* Wait (at most @sec seconds) until a @done went through @g. */
static bool gate_wait_left(struct gate *g, int sec)
{
	struct timespec ts;
	bool left;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += sec;
	pthread_mutex_lock(&g->m);
	while (!g->left && !pthread_cond_timedwait(&g->c, &g->m, &ts))
		;
	left = g->left;
	pthread_mutex_unlock(&g->m);
	return left;
}

/*
 * B's @done, on the thread tearing the queue down, before it destroys the
 * QP (which would drop the completions still queued): let the CQ thread
 * go on, and give it the time to process what waits in the CQ.
 */
static void b_done(struct nvmeh_request *rq)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	(void)rq;
	if (__atomic_add_fetch(&done_b, 1, __ATOMIC_SEQ_CST) != 1)
		return;
	gate_open(&gate_a);
	pthread_mutex_lock(&gate_a.m);
	while (!gate_a.left)
		pthread_cond_wait(&gate_a.c, &gate_a.m);
	pthread_mutex_unlock(&gate_a.m);
	nanosleep(&ts, NULL);
}

static void read_rq(struct nvmeh_request *rq, u32 nsid, void *buf,
		    void (*done)(struct nvmeh_request *), void *priv)
{
	memset(rq, 0, sizeof(*rq));
	rq->sqe[offsetof(struct nvme_common_command, opcode)] = nvme_cmd_read;
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, cdw12),
		      8 - 1);
	rq->data = buf;
	rq->data_len = 4096;
	rq->done = done;
	rq->priv = priv;
}

/* The host controller, one I/O queue, on rxe. */
static void env_init(struct nv_env *e)
{
	nv_env_init(e, "rxe", &(struct nv_cfg){ .nr_io_queues = 1 });
}

/* Hold queue 1's CQ thread in Z's @done, at gate_z (open it to let go). */
static void cq_thread_hold(struct nv_env *e)
{
	static u8 bz[4096];

	gate_init(&gate_z);
	read_rq(&rq_z, 1, bz, gated_done, &gate_z);
	assert_int_equal(nvmeh_submit(e->c, 1, &rq_z), 0);
	gate_wait_entered(&gate_z, 1);
}

/*
 * After the one reset: the queue it made writes 4 KiB at @slba and reads
 * them back, and the controller reconnected once (@hs: its stats then).
 */
static void new_queue_serves(struct nv_env *e, u64 slba, u64 seed,
			     struct nvmeh_stats *hs)
{
	u8 w[4096], r[4096];

	nv_fill(w, sizeof(w), seed);
	assert_int_equal(nvmeh_rw(e->c, 1, true, slba, 8, w), 0);
	assert_int_equal(nvmeh_rw(e->c, 1, false, slba, 8, r), 0);
	assert_memory_equal(w, r, sizeof(w));
	nvmeh_ctrl_stats(e->c, hs);
	assert_int_equal(hs->reconnects, 1);
}

/*
 * Reset the controller with a 50 ms drain timeout (its CQ thread held, the
 * drain runs out of time); return once a @done went through @g (the
 * teardown let the holder go) and the controller is live again.
 */
static void reset_held(struct nv_env *e, struct gate *g)
{
	unsigned int drain_ms = rdmarw_get_drain_timeout();

	rdmarw_set_drain_timeout(50);
	assert_int_equal(nvmeh_ctrl_reset(e->c), 0);
	assert_true(gate_wait_left(g, 10));
	assert_int_equal(nvmeh_ctrl_wait_live(e->c, 5000), 0);
	rdmarw_set_drain_timeout(drain_ms);
}

static void test_late_local_inv(void **state)
{
	static struct nv_env e;
	static u8 ba[4096], bb[4096];
	struct soft_fault_rule stall = {
		.type = SOFT_FAULT_STALL,
		.nth = 1,
		.opcodes = 1ull << IB_WR_LOCAL_INV,
	};
	struct soft_fault_stats fs;
	struct nvmeh_stats hs;
	struct ib_qp *qp;

	env_init(&e);
	gate_init(&gate_a);
	done_b = 0;
	cq_thread_hold(&e);
	qp = nvmeh_ctrl_qp(e.c, 1);
	assert_non_null(qp);
	assert_int_equal(soft_fault_arm_qp(qp, &stall), 0);
	/*
	 * B: a read of namespace 2, refused before its data is mapped, so
	 * answered with a plain SEND: the host invalidates its MR itself
	 * (the LOCAL_INV stalls).  A: a read answered after B's, whose
	 * @done holds the CQ thread again.
	 */
	read_rq(&rq_b, 2, bb, b_done, NULL);
	assert_int_equal(nvmeh_submit(e.c, 1, &rq_b), 0);
	read_rq(&rq_a, 1, ba, gated_done, &gate_a);
	assert_int_equal(nvmeh_submit(e.c, 1, &rq_a), 0);
	gate_open(&gate_z);
	gate_wait_entered(&gate_a, 1);
	assert_int_equal(rq_a.error, 0);
	assert_int_equal(rq_a.status, 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.local_invs, 1);
	assert_int_equal(soft_fault_qp_stats(qp, &fs), 0);
	assert_true(fs.stalled);
	assert_int_equal(__atomic_load_n(&done_b, __ATOMIC_SEQ_CST), 0);

	/*
	 * Tear the queues down while the CQ thread is held: the drain runs
	 * out of time, the LOCAL_INV's flush waits in the CQ.  B must end,
	 * once; its @done lets the CQ thread go on and process that flush.
	 */
	reset_held(&e, &gate_a);
	/* the target's answer had arrived: B ends with it */
	assert_int_equal(__atomic_load_n(&done_b, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(rq_b.error, 0);
	assert_int_equal(rq_b.status, NVME_SC_INVALID_NS | NVME_SC_DNR);
	assert_int_equal(gate_z.entered, 1);
	assert_int_equal(gate_a.entered, 1);

	new_queue_serves(&e, 16, 9, &hs);
	assert_int_equal(hs.resets, 1);
	nv_env_fini(&e);
}

/* The env of test_late_response(), for c_done(). */
static struct nv_env *late_env;
static int done_c;
static u64 late_bad_cqes;

/*
 * C's @done, on the thread tearing the queue down (its response waits in
 * the CQ behind Z's @done): let the CQ thread go on, and wait until it
 * has processed that response (refused: counted in bad_cqes), before the
 * teardown goes on to destroy the QP and the CQ.
 */
static void c_done(struct nvmeh_request *rq)
{
	struct timespec ts = { 0, 1000 * 1000 };
	struct nvmeh_stats hs;
	int i;

	(void)rq;
	if (__atomic_add_fetch(&done_c, 1, __ATOMIC_SEQ_CST) != 1)
		return;
	gate_open(&gate_z);
	for (i = 0; i < 10000; i++) {
		nvmeh_ctrl_stats(late_env->c, &hs);
		if (hs.bad_cqes)
			break;
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&late_bad_cqes, hs.bad_cqes, __ATOMIC_SEQ_CST);
}

/*
 * A response for a slot the host has already freed: C's response has
 * arrived but waits in the CQ (the CQ thread is held in Z's @done) when
 * the queue is torn down; the drain runs out of time, the teardown ends
 * C (-ECONNABORTED) and frees its slot, and then the CQ thread processes
 * the response.  It must be refused (a cid the queue no longer waits
 * for: counted, no second end of C, no crash), and the new queue serve.
 */
static void test_late_response(void **state)
{
	static struct nv_env e;
	static u8 bc[4096];
	struct timespec ts = { 0, 1000 * 1000 };
	struct nvmet_target_stats ts_t;
	struct nvmeh_stats hs;
	u64 cmds;
	int i;

	env_init(&e);
	late_env = &e;
	done_c = 0;
	late_bad_cqes = 0;
	cq_thread_hold(&e);
	assert_int_equal(nvmet_target_get_stats(e.t, &ts_t), 0);
	cmds = ts_t.cmds;
	/*
	 * C: answered by the target (received, and released once its
	 * response's SEND completed), its response queued behind Z
	 */
	read_rq(&rq_b, 1, bc, c_done, NULL);
	assert_int_equal(nvmeh_submit(e.c, 1, &rq_b), 0);
	for (i = 0; i < 10000; i++) {
		assert_int_equal(nvmet_target_get_stats(e.t, &ts_t), 0);
		if (ts_t.cmds > cmds && !ts_t.reqs_inflight)
			break;
		nanosleep(&ts, NULL);
	}
	assert_true(ts_t.cmds > cmds);
	assert_int_equal(ts_t.reqs_inflight, 0);
	assert_int_equal(__atomic_load_n(&done_c, __ATOMIC_SEQ_CST), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.bad_cqes, 0);

	reset_held(&e, &gate_z);
	/* C ended once, by the teardown; its late response was refused */
	assert_int_equal(__atomic_load_n(&done_c, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(rq_b.error, -ECONNABORTED);
	assert_int_equal(rq_b.status, NVME_SC_HOST_ABORTED_CMD);
	assert_int_equal(__atomic_load_n(&late_bad_cqes, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(gate_z.entered, 1);
	assert_int_equal(rq_z.error, 0);
	assert_int_equal(rq_z.status, 0);

	new_queue_serves(&e, 24, 11, &hs);
	assert_int_equal(hs.bad_cqes, 1);
	late_env = NULL;
	nv_env_fini(&e);
}

/* ---- a response in progress when the drain runs out of time ---------- */

/*
 * The host's calls of ib_post_recv() and ib_mr_pool_destroy() go through
 * these (tests/nvmet/CMakeLists.txt: --wrap).  The repost of a response
 * buffer is the first thing nvmeh_recv_done() does after it has taken a
 * response (the exchange that makes it the slot's): stalled there, the CQ
 * thread holds a response whose MR and QP it is about to use.
 */
int __real_ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad);
int __wrap_ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad);
void __real_ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list);
void __wrap_ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list);

static struct ib_qp *stall_qp; /* atomic: its next repost stalls, once */
static struct gate gate_rsp; /* where it stalls */
static struct ib_qp *pool_gone_qp; /* atomic: its MR pool was destroyed */

int __wrap_ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad)
{
	struct ib_qp *want = qp;

	/* a response buffer has one SGE (a drain's marker none) */
	if (qp && wr && wr->num_sge == 1 &&
	    __atomic_compare_exchange_n(&stall_qp, &want, NULL, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		gate_pass(&gate_rsp);
	return __real_ib_post_recv(qp, wr, bad);
}

void __wrap_ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list)
{
	__atomic_store_n(&pool_gone_qp, qp, __ATOMIC_RELEASE);
	__real_ib_mr_pool_destroy(qp, list);
}

static int done_s;

/* S's @done: the teardown ends S (its response taken, its LOCAL_INV or
 * invalidation check not done yet). */
static void s_done(struct nvmeh_request *rq)
{
	(void)rq;
	__atomic_add_fetch(&done_s, 1, __ATOMIC_SEQ_CST);
}

/*
 * The CQ thread has taken S's response (S's slot is answered) and stalls
 * before it uses S's MR and the QP (the repost, then the MR's key for the
 * invalidation); the queue is torn down meanwhile, so its drain runs out
 * of time, and the teardown ends S with its response.  The MR pool, the
 * QP and the CQ must outlive the thread's work on that response: until
 * the stall ends, the pool is not destroyed (the teardown waits for the
 * CQ thread, and warns), and afterwards the thread touches no freed
 * memory (under ASan the old teardown's use after free aborted here).  S
 * ends once; the new queue serves.
 */
static void test_failed_drain_waits(void **state)
{
	static struct nv_env e;
	static u8 bs[4096];
	unsigned int drain_ms = rdmarw_get_drain_timeout();
	struct timespec ms = { 0, 1000 * 1000 };
	unsigned long warns = rdmarw_warn_count();
	static struct nvmeh_request rq_s;
	struct nvmeh_stats hs;
	struct ib_qp *qp;
	bool pool_gone = false;
	int i;

	env_init(&e);
	gate_init(&gate_rsp);
	done_s = 0;
	qp = nvmeh_ctrl_qp(e.c, 1);
	assert_non_null(qp);
	__atomic_store_n(&pool_gone_qp, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&stall_qp, qp, __ATOMIC_RELEASE);
	read_rq(&rq_s, 1, bs, s_done, NULL);
	assert_int_equal(nvmeh_submit(e.c, 1, &rq_s), 0);
	gate_wait_entered(&gate_rsp, 1);

	rdmarw_set_drain_timeout(50);
	assert_int_equal(nvmeh_ctrl_reset(e.c), 0);
	/* the teardown, past its drain, ends S */
	for (i = 0; i < 10000 && !__atomic_load_n(&done_s, __ATOMIC_SEQ_CST);
	     i++)
		nanosleep(&ms, NULL);
	/* the old teardown went on to the pool at once: give it the time */
	for (i = 0; i < 500 && !pool_gone; i++) {
		pool_gone =
			__atomic_load_n(&pool_gone_qp, __ATOMIC_ACQUIRE) == qp;
		nanosleep(&ms, NULL);
	}
	/* let go before any assertion: a failed one would leave it held */
	gate_open(&gate_rsp);
	assert_int_equal(__atomic_load_n(&done_s, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 10000), 0);
	rdmarw_set_drain_timeout(drain_ms);
	assert_false(pool_gone);
	assert_true(rdmarw_warn_count() > warns);
	/* S ended once, by the teardown, with its response */
	assert_int_equal(__atomic_load_n(&done_s, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(rq_s.error, 0);
	assert_int_equal(rq_s.status, 0);

	new_queue_serves(&e, 32, 13, &hs);
	assert_int_equal(hs.resets, 1);
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_late_local_inv, nv_teardown),
		cmocka_unit_test_teardown(test_late_response, nv_teardown),
		cmocka_unit_test_teardown(test_failed_drain_waits, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

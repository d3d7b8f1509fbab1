// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A post of the host's Send Queue refused at a command's SEND after that
 * command's REG_MR was accepted (nvme/host/host.c nvmeh_slot_refused()):
 * the chain stopped part-way.  The REG_MR is queued and will still run or
 * flush, so the command's MR must stay out of the queue's pool until the
 * REG_MR's completion (its flush) came or the error recovery's drain is
 * done; the QP goes to ERR, the controller recovers and reconnects.
 *
 * Checked on both post sites: a command posted at once (nvmeh_submit()
 * outside a pass) and a pass's plug (the @done callbacks of one
 * nvmeh_poll() pass submit reads, posted together at the end of the
 * pass).  A wrap of ib_post_send() refuses the chosen SEND; a wrap of
 * queue_work() holds the host's error recovery back until the test has
 * looked (what it queues on the host's work queue runs when the test
 * queues it again), so that nothing races the checks: the MR is still
 * taken (qp->mrs_used), a command submitted meanwhile gets another MR,
 * the QP is in ERR, the recovery was started; then the recovery runs, the
 * host reconnects and reads the right bytes.  A wrap of
 * ib_mr_pool_destroy() checks that every MR was back when the old QP's
 * pool went.
 *
 * The refused request ends with the post's error: nvmeh_submit() returns
 * it (no @done), a plugged one ends with it and NVME_SC_HOST_PATH_ERROR.
 * Not the recovery's -ECONNABORTED: the target never saw the command, so
 * the caller may send it again (it may have run says "aborted").
 */
#include "nv_hostplug.h"

#include <rdmarw/workqueue.h>

struct workqueue_struct *__real_alloc_workqueue(const char *fmt,
						unsigned int flags,
						int max_active, ...);
struct workqueue_struct *
__wrap_alloc_workqueue(const char *fmt, unsigned int flags, int max_active, ...)
	__attribute__((format(printf, 1, 4)));
bool __real_queue_work(struct workqueue_struct *wq, struct work_struct *work);
bool __wrap_queue_work(struct workqueue_struct *wq, struct work_struct *work);
void __real_ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list);
void __wrap_ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list);

static struct workqueue_struct *host_wq; /* atomic: the host's ("nvmeh") */
/*
 * Armed (atomic): the host's next post refuses at the SEND of its
 * @refuse_at-th command, whose REG_MR goes before it: the WRs before that
 * SEND are queued (the REG_MR included; with @defer_reg the REG_MR is kept
 * in @pending_reg instead, as by a device that has not got to it yet, and
 * posted by the test later), the post returns -ENOMEM at the SEND.
 */
static int refuse_at;
static bool defer_reg;
static struct ib_send_wr *pending_reg;
static struct ib_mr *held_mr; /* atomic: the refused command's MR */
static int reuses; /* atomic: host REG_MRs of @held_mr since the refusal */
/* Armed (atomic): the next item queued on the host's queue is kept. */
static bool hold_work;
static struct work_struct *held_work; /* atomic */
/* atomic: the host's MR pools destroyed, those with MRs still taken */
static int pools_gone, pools_gone_busy;

/* The armed refusal of the host's post of @wr (see @refuse_at). */
static int host_refuse(struct ib_qp *qp, struct ib_send_wr *wr, int at,
		       const struct ib_send_wr **bad)
{
	struct ib_send_wr *w, *reg = NULL, *before = NULL, *cut;
	int n = 0, ret;

	for (w = wr; w; w = w->next) {
		if (is_send(w) && ++n == at)
			break;
		before = reg;
		reg = w;
	}
	assert_non_null(w);
	assert_non_null(reg);
	assert_int_equal(reg->opcode, IB_WR_REG_MR);
	__atomic_store_n(&refuse_at, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&held_mr, reg_wr(reg)->mr, __ATOMIC_RELAXED);
	cut = defer_reg ? before : reg;
	if (defer_reg)
		pending_reg = reg;
	if (cut) {
		cut->next = NULL;
		ret = __real_ib_post_send(qp, wr, bad);
		cut->next = defer_reg ? reg : w;
		assert_int_equal(ret, 0);
	}
	if (bad)
		*bad = w;
	return -ENOMEM;
}

int __wrap_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad)
{
	const struct ib_send_wr *w;
	struct ib_mr *mr;
	int at;

	if (hp_host_qp(qp, wr)) {
		at = __atomic_load_n(&refuse_at, __ATOMIC_RELAXED);
		if (at)
			return host_refuse(qp, (struct ib_send_wr *)wr, at,
					   bad);
		mr = __atomic_load_n(&held_mr, __ATOMIC_RELAXED);
		for (w = wr; w; w = w->next)
			if (w->opcode == IB_WR_REG_MR && mr &&
			    reg_wr(w)->mr == mr)
				__atomic_fetch_add(&reuses, 1,
						   __ATOMIC_RELAXED);
		return __real_ib_post_send(qp, wr, bad);
	}
	return hp_other_post(qp, wr, bad);
}

struct workqueue_struct *
__wrap_alloc_workqueue(const char *fmt, unsigned int flags, int max_active, ...)
{
	struct workqueue_struct *wq;
	char name[64];
	va_list ap;

	va_start(ap, max_active);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	wq = __real_alloc_workqueue("%s", flags, max_active, name);
	if (wq && !strcmp(name, "nvmeh"))
		__atomic_store_n(&host_wq, wq, __ATOMIC_RELEASE);
	return wq;
}

bool __wrap_queue_work(struct workqueue_struct *wq, struct work_struct *work)
{
	bool armed = true;

	if (wq && wq == __atomic_load_n(&host_wq, __ATOMIC_ACQUIRE) &&
	    __atomic_compare_exchange_n(&hold_work, &armed, false, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		__atomic_store_n(&held_work, work, __ATOMIC_RELEASE);
		return true;
	}
	return __real_queue_work(wq, work);
}

void __wrap_ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list)
{
	if (qp && qp->device == __atomic_load_n(&host_dev, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&pools_gone, 1, __ATOMIC_RELAXED);
		/* the destroying thread is the only user of the QP now */
		if (qp->mrs_used)
			__atomic_fetch_add(&pools_gone_busy, 1,
					   __ATOMIC_RELAXED);
	}
	__real_ib_mr_pool_destroy(qp, list);
}

/* Queue what the wrap held back (the recovery), if anything. */
static void release_work(void)
{
	struct work_struct *w =
		__atomic_exchange_n(&held_work, NULL, __ATOMIC_ACQ_REL);

	__atomic_store_n(&hold_work, false, __ATOMIC_RELEASE);
	if (w)
		__real_queue_work(__atomic_load_n(&host_wq, __ATOMIC_ACQUIRE),
				  w);
}

/* cmocka teardown: a failed test may have held the recovery back. */
static int teardown(void **state)
{
	release_work();
	__atomic_store_n(&host_dev, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&tgt_dev, NULL, __ATOMIC_RELEASE);
	return nv_teardown(state);
}

static void env_up(struct nv_env *e)
{
	hp_env_up(e);
	__atomic_store_n(&held_mr, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&reuses, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pools_gone, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pools_gone_busy, 0, __ATOMIC_RELAXED);
	pending_reg = NULL;
}

/* Poll I/O queue 1 until a call finds nothing. */
static void poll_empty(struct nv_env *e)
{
	while (nvmeh_poll(e->c, 1, 64) > 0)
		;
}

static enum ib_qp_state qp_state(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { 0 };

	assert_int_equal(ib_query_qp(qp, &attr, IB_QP_STATE, NULL), 0);
	return attr.qp_state;
}

/* The recovery was started (and is held back by the wrap). */
static void assert_recovery_held(struct nv_env *e)
{
	struct nvmeh_stats st;

	assert_non_null(__atomic_load_n(&held_work, __ATOMIC_ACQUIRE));
	assert_false(nvmeh_ctrl_live(e->c));
	nvmeh_ctrl_stats(e->c, &st);
	assert_int_equal(st.resets, 1);
}

/* Let the recovery run; the controller is live again, reconnected once. */
static void recover(struct nv_env *e)
{
	struct nvmeh_stats st;

	release_work();
	assert_int_equal(nvmeh_ctrl_wait_live(e->c, 10000), 0);
	nvmeh_ctrl_stats(e->c, &st);
	assert_int_equal(st.resets, 1);
	assert_int_equal(st.reconnects, 1);
	/* the old QP's pool went with every MR back, the held one too */
	assert_true(__atomic_load_n(&pools_gone, __ATOMIC_RELAXED) >= 1);
	assert_int_equal(__atomic_load_n(&pools_gone_busy, __ATOMIC_RELAXED),
			 0);
}

static void count_done(struct nvmeh_request *rq)
{
	__atomic_fetch_add((int *)rq->priv, 1, __ATOMIC_RELEASE);
}

/*
 * A write posted at once, refused at its SEND after its REG_MR; the REG_MR
 * queued on a device that has not got to it yet.  nvmeh_submit() returns
 * -ENOMEM and @done never runs; the MR stays taken while the REG_MR is
 * queued; a read submitted meanwhile gets another MR; the QP is in ERR and
 * the recovery started; the REG_MR's flush gives the MR back; after the
 * recovery the block reads what it held before the refused write.
 */
static void test_immediate(void **state)
{
	static struct nv_env e;
	static struct nvmeh_request rq, retry;
	u8 *a = aligned_alloc(4096, 4 * BLK), *b = a + BLK, *r = a + 2 * BLK;
	u8 *c = a + 3 * BLK;
	static int ends, retry_ends;
	const struct ib_send_wr *bad;
	struct ib_qp *qp;

	(void)state;
	assert_non_null(a);
	ends = retry_ends = 0;
	env_up(&e);
	nv_fill(a, BLK, 1);
	nv_fill(b, BLK, 2);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 0, NLB, a), 0);
	qp = nvmeh_ctrl_qp(e.c, 1);
	assert_non_null(qp);
	assert_int_equal(qp->mrs_used, 0);

	defer_reg = true;
	__atomic_store_n(&hold_work, true, __ATOMIC_RELEASE);
	__atomic_store_n(&refuse_at, 1, __ATOMIC_RELAXED);
	nv_rw_init(&rq, true, 1, 0, NLB, b, 512);
	rq.done = count_done;
	rq.priv = &ends;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), -ENOMEM);
	assert_int_equal(__atomic_load_n(&refuse_at, __ATOMIC_RELAXED), 0);
	assert_non_null(pending_reg);
	/* the REG_MR is queued: its MR is not back in the pool */
	assert_int_equal(qp->mrs_used, 1);
	assert_recovery_held(&e);
	assert_int_equal(qp_state(qp), IB_QPS_ERR);

	/* a command meanwhile (the caller's retry) gets another MR */
	memset(r, 0xa5, BLK);
	nv_rw_init(&retry, false, 1, 0, NLB, r, 512);
	retry.done = count_done;
	retry.priv = &retry_ends;
	assert_int_equal(nvmeh_submit(e.c, 1, &retry), 0);
	assert_int_equal(__atomic_load_n(&reuses, __ATOMIC_RELAXED), 0);
	assert_int_equal(qp->mrs_used, 2);
	poll_empty(&e);
	assert_int_equal(qp->mrs_used, 2); /* no completion for it yet */

	/* the device gets to the REG_MR: the QP is in ERR, it flushes */
	pending_reg->next = NULL;
	assert_int_equal(__real_ib_post_send(qp, pending_reg, &bad), 0);
	poll_empty(&e);
	assert_int_equal(qp->mrs_used, 1); /* the retry's, until it ends */
	assert_int_equal(__atomic_load_n(&reuses, __ATOMIC_RELAXED), 0);

	recover(&e);
	assert_int_equal(__atomic_load_n(&ends, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&retry_ends, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(retry.error, -ECONNABORTED);
	assert_int_equal(retry.status, NVME_SC_HOST_ABORTED_CMD);
	for (int k = 0; k < BLK; k++)
		assert_int_equal(r[k], 0xa5);
	/* I/O again: the refused write never landed */
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, NLB, r), 0);
	assert_memory_equal(r, a, BLK);
	nv_fill(c, BLK, 3);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 64, NLB, c), 0);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 64, NLB, r), 0);
	assert_memory_equal(r, c, BLK);
	defer_reg = false;
	hp_env_down(&e);
	free(a);
}

/*
 * NCMD writes posted at once; one pass ends them and their @done submit
 * NCMD reads into the pass's plug, whose post is refused at the third
 * read's SEND after its REG_MR (queued and run: a registration that
 * completes unsignaled, so only the recovery's drain can give its MR
 * back).  The two reads before it went; the third ends once with the
 * post's error and is sent again from its @done, which gets another MR;
 * the five after it end with the post's error (nothing of theirs was
 * queued).  The MR stays taken until the recovery; after it every block
 * reads its bytes.
 */
static void test_plug(void **state)
{
	static struct nv_env e;
	static struct cmd cmds[NCMD];
	u8 *mem = aligned_alloc(4096, 2 * NCMD * BLK);
	u8 *r = aligned_alloc(4096, BLK);
	u64 resps;
	int i, out;
	struct ib_qp *qp;

	(void)state;
	assert_non_null(mem);
	assert_non_null(r);
	env_up(&e);
	qp = nvmeh_ctrl_qp(e.c, 1);
	assert_non_null(qp);
	hp_cmds_init(&e, cmds, mem, 2);
	resps = __atomic_load_n(&tgt_resps, __ATOMIC_ACQUIRE);
	for (i = 0; i < NCMD; i++)
		assert_int_equal(nvmeh_submit(e.c, 1, &cmds[i].rq), 0);
	wait_resps(resps + NCMD);
	assert_int_equal(qp->mrs_used, NCMD);

	defer_reg = false;
	__atomic_store_n(&hold_work, true, __ATOMIC_RELEASE);
	__atomic_store_n(&refuse_at, 3, __ATOMIC_RELAXED);
	/* every write's response and SEND completion: 2 * NCMD */
	assert_int_equal(nvmeh_poll(e.c, 1, 4 * NCMD), 2 * NCMD);
	assert_int_equal(__atomic_load_n(&refuse_at, __ATOMIC_RELAXED), 0);
	for (i = 0; i < NCMD; i++)
		assert_int_equal(cmds[i].submit_ret, 0);
	/* the retry did not get the refused read's MR */
	assert_int_equal(__atomic_load_n(&reuses, __ATOMIC_RELAXED), 0);
	for (i = 2; i < NCMD; i++) {
		assert_int_equal(cmds[i].ends, 1);
		assert_int_equal(cmds[i].error, -ENOMEM);
		assert_int_equal(cmds[i].status, NVME_SC_HOST_PATH_ERROR);
		for (int k = 0; k < BLK; k++)
			assert_int_equal(cmds[i].rbuf[k], 0xa5);
	}
	assert_recovery_held(&e);
	assert_int_equal(qp_state(qp), IB_QPS_ERR);
	poll_empty(&e);
	/* taken: the refused read's MR (its REG_MR ran: no completion
	 * comes), the retry's (ends in the recovery), and the MRs of the
	 * two reads before it that have not ended */
	for (i = 0, out = 2; i < 2; i++)
		out += !cmds[i].ends;
	assert_int_equal(qp->mrs_used, out);
	assert_int_equal(__atomic_load_n(&reuses, __ATOMIC_RELAXED), 0);

	recover(&e);
	for (i = 0; i < NCMD; i++)
		assert_int_equal(cmds[i].ends, i == 2 ? 2 : 1);
	/* the two reads that went: their bytes, or aborted by the ERR */
	for (i = 0; i < 2; i++) {
		if (!cmds[i].error) {
			assert_int_equal(cmds[i].status, 0);
			assert_memory_equal(cmds[i].rbuf, cmds[i].wbuf, BLK);
		} else {
			assert_int_equal(cmds[i].error, -ECONNABORTED);
			assert_int_equal(cmds[i].status,
					 NVME_SC_HOST_ABORTED_CMD);
		}
	}
	assert_int_equal(cmds[2].rq.error, -ECONNABORTED);
	assert_int_equal(cmds[2].rq.status, NVME_SC_HOST_ABORTED_CMD);
	/* I/O again: every block its bytes */
	for (i = 0; i < NCMD; i++) {
		memset(r, 0, BLK);
		assert_int_equal(nvmeh_rw(e.c, 1, false, cmds[i].slba, NLB, r),
				 0);
		assert_memory_equal(r, cmds[i].wbuf, BLK);
	}
	hp_env_down(&e);
	free(r);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_immediate, teardown),
		cmocka_unit_test_teardown(test_plug, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

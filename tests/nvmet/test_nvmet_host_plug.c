// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's plug (nvme/host/host.c nvmeh_plug_*): what the @done
 * callbacks of one polling pass submit to the polled queue goes out in one
 * ib_post_send() at the end of the pass.  Checked here, through a wrap of
 * ib_post_send(): the number of posts a pass makes and the SENDs each
 * carries, the bytes the resubmitted commands read, and a post refused in
 * the middle of the pass's chain: the commands before the refused WR go
 * and complete, the refused one and every later one end once with the
 * post's error and a host path error status, and every slot and MR comes
 * back (a full queue depth of registrations goes out afterwards).
 */
#include "nv_hostplug.h"

static u64 host_posts, host_sends; /* atomic */
static u32 last_sends; /* the SENDs of the host's last post */
/* Armed: the host's next post of a chain with at least 4 SENDs posts
 * only the WRs before the @refuse_at-th SEND's slot and fails with it. */
static int refuse_at;

/* The host's posts: counted; the armed refusal cuts the chain. */
static int host_post(struct ib_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad)
{
	struct ib_send_wr *w, *cut = NULL;
	u32 sends = 0;
	int ret, at = __atomic_load_n(&refuse_at, __ATOMIC_RELAXED);

	for (w = (struct ib_send_wr *)wr; w; w = w->next)
		sends += is_send(w);
	__atomic_fetch_add(&host_posts, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&host_sends, sends, __ATOMIC_RELAXED);
	last_sends = sends;
	if (!at || sends < 4)
		return __real_ib_post_send(qp, wr, bad);
	/* the (at-1)-th SEND ends the part that goes */
	for (w = (struct ib_send_wr *)wr, sends = 0; w; w = w->next)
		if (is_send(w) && ++sends == (u32)at - 1) {
			cut = w;
			break;
		}
	__atomic_store_n(&refuse_at, 0, __ATOMIC_RELAXED);
	w = cut->next;
	cut->next = NULL;
	ret = __real_ib_post_send(qp, wr, bad);
	cut->next = w;
	assert_int_equal(ret, 0);
	if (bad)
		*bad = w;
	return -ENOMEM;
}

int __wrap_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad)
{
	if (hp_host_qp(qp, wr))
		return host_post(qp, wr, bad);
	return hp_other_post(qp, wr, bad);
}

/*
 * NCMD writes posted one by one (no pass: not plugged); once the target
 * has answered them all, one nvmeh_poll() ends them and their @done
 * resubmit NCMD reads: returns the host's posts that pass made.
 */
static u64 writes_then_pass(struct nv_env *e, struct cmd *cmds, u8 *mem)
{
	u64 posts, resps;
	int i;

	hp_cmds_init(e, cmds, mem, -1);
	resps = __atomic_load_n(&tgt_resps, __ATOMIC_ACQUIRE);
	for (i = 0; i < NCMD; i++)
		assert_int_equal(nvmeh_submit(e->c, 1, &cmds[i].rq), 0);
	wait_resps(resps + NCMD);
	posts = __atomic_load_n(&host_posts, __ATOMIC_RELAXED);
	/* every write's response and SEND completion: 2 * NCMD */
	assert_int_equal(nvmeh_poll(e->c, 1, 4 * NCMD), 2 * NCMD);
	for (i = 0; i < NCMD; i++)
		assert_int_equal(cmds[i].submit_ret, 0);
	return __atomic_load_n(&host_posts, __ATOMIC_RELAXED) - posts;
}

/* Poll (bounded: 10 s) until every read has ended. */
static void poll_reads(struct nv_env *e, struct cmd *cmds)
{
	int i, n, naps = 0;

	for (;;) {
		for (i = 0, n = 0; i < NCMD; i++)
			n += cmds[i].ends;
		if (n == NCMD)
			return;
		if (nvmeh_poll(e->c, 1, 4 * NCMD) == 0) {
			assert_true(++naps < 10000);
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
	}
}

/* One pass's resubmissions: one post of NCMD SENDs, the bytes right. */
static void test_one_post_per_pass(void **state)
{
	static struct nv_env e;
	static struct cmd cmds[NCMD];
	u8 *mem = aligned_alloc(4096, 2 * NCMD * BLK);
	int i;

	(void)state;
	assert_non_null(mem);
	hp_env_up(&e);
	assert_int_equal(writes_then_pass(&e, cmds, mem), 1);
	assert_int_equal(last_sends, NCMD);
	poll_reads(&e, cmds);
	for (i = 0; i < NCMD; i++) {
		assert_int_equal(cmds[i].ends, 1);
		assert_int_equal(cmds[i].rq.error, 0);
		assert_int_equal(cmds[i].rq.status, 0);
		assert_memory_equal(cmds[i].rbuf, cmds[i].wbuf, BLK);
	}
	hp_env_down(&e);
	free(mem);
}

static void count_done(struct nvmeh_request *rq)
{
	__atomic_fetch_add((int *)rq->priv, 1, __ATOMIC_RELEASE);
}

/*
 * The pass's post refused at the third command's REG_MR: the first two
 * were posted and complete with their bytes; the other six end at once,
 * each once, with -ENOMEM and a host path error, nothing left untouched
 * in their buffers; then every slot and MR is back.
 */
static void test_refused_mid_chain(void **state)
{
	static struct nv_env e;
	static struct cmd cmds[NCMD];
	static struct nvmeh_request more[32];
	u8 *mem = aligned_alloc(4096, 2 * NCMD * BLK);
	u8 *big = aligned_alloc(4096, 32 * BLK);
	int i, done = 0, naps = 0;

	(void)state;
	assert_non_null(mem);
	assert_non_null(big);
	hp_env_up(&e);
	__atomic_store_n(&refuse_at, 3, __ATOMIC_RELAXED);
	assert_int_equal(writes_then_pass(&e, cmds, mem), 1);
	assert_int_equal(last_sends, NCMD);
	assert_int_equal(__atomic_load_n(&refuse_at, __ATOMIC_RELAXED), 0);
	for (i = 2; i < NCMD; i++) {
		assert_int_equal(cmds[i].ends, 1);
		assert_int_equal(cmds[i].rq.error, -ENOMEM);
		assert_int_equal(cmds[i].rq.status, NVME_SC_HOST_PATH_ERROR);
		for (int k = 0; k < BLK; k++)
			assert_int_equal(cmds[i].rbuf[k], 0xa5);
	}
	poll_reads(&e, cmds);
	for (i = 0; i < NCMD; i++)
		assert_int_equal(cmds[i].ends, 1);
	for (i = 0; i < 2; i++) {
		assert_int_equal(cmds[i].rq.error, 0);
		assert_int_equal(cmds[i].rq.status, 0);
		assert_memory_equal(cmds[i].rbuf, cmds[i].wbuf, BLK);
	}
	/* the queue's whole depth at once: every slot and MR came back */
	for (i = 0; i < 32; i++) {
		nv_rw_init(&more[i], false, 1, (u64)i * NLB, NLB,
			   big + (size_t)i * BLK, 512);
		more[i].done = count_done;
		more[i].priv = &done;
		assert_int_equal(nvmeh_submit(e.c, 1, &more[i]), 0);
	}
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 32)
		if (nvmeh_poll(e.c, 1, 64) == 0) {
			assert_true(++naps < 10000);
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
	for (i = 0; i < 32; i++) {
		assert_int_equal(more[i].error, 0);
		assert_int_equal(more[i].status, 0);
	}
	assert_memory_equal(big, cmds[0].wbuf, BLK);
	assert_memory_equal(big + 3 * BLK, cmds[1].wbuf, BLK);
	hp_env_down(&e);
	free(big);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_one_post_per_pass, nv_teardown),
		cmocka_unit_test_teardown(test_refused_mid_chain, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

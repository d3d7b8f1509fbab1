// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A polled queue's commands completed from a thread that is not the
 * queue's, as an asynchronous backend's completion reaper will complete
 * them: the test wraps the target's I/O parser (-Wl,--wrap) so that every
 * I/O command's execute runs on a thread of the test's, which then calls
 * nvmet_req_complete() (the response SEND posted on the polled queue from
 * there).  Bytes are verified; so is the count of commands the thread ran;
 * the queues are torn down (a reset, the target stopped) under that load.
 */
#include "nvmet_env.h"
#include "nvmet_int.h"

#include <pthread.h>

enum { NQ = 2, RING = 1024, LEN = 16384 };

/* The reaper: a ring of requests whose execute it runs. */
static struct {
	pthread_mutex_t m;
	pthread_cond_t cv;
	struct nvmet_req *ring[RING];
	unsigned int head, tail;
	void (*execute[256])(struct nvmet_req *req); /* by opcode */
	bool stop;
	bool on; /* wrap I/O commands */
	u64 ran;
	pthread_t thread;
} rp = { .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

u16 __real_nvmet_parse_io_cmd(struct nvmet_req *req);
u16 __wrap_nvmet_parse_io_cmd(struct nvmet_req *req);

/* The execute the wrapped parser sets: hand @req to the reaper. */
static void deferred_execute(struct nvmet_req *req)
{
	pthread_mutex_lock(&rp.m);
	/* at most the queues' depth is in flight: the ring cannot fill */
	assert_true(rp.head - rp.tail < RING);
	rp.ring[rp.head++ % RING] = req;
	pthread_cond_signal(&rp.cv);
	pthread_mutex_unlock(&rp.m);
}

u16 __wrap_nvmet_parse_io_cmd(struct nvmet_req *req)
{
	u16 status = __real_nvmet_parse_io_cmd(req);
	u8 op = req->cmd->common.opcode;

	pthread_mutex_lock(&rp.m);
	if (!status && rp.on && req->execute) {
		rp.execute[op] = req->execute;
		req->execute = deferred_execute;
	}
	pthread_mutex_unlock(&rp.m);
	return status;
}

static void *reaper(void *arg)
{
	void (*execute)(struct nvmet_req * req);
	struct nvmet_req *req;

	(void)arg;
	pthread_mutex_lock(&rp.m);
	for (;;) {
		while (rp.head == rp.tail && !rp.stop)
			pthread_cond_wait(&rp.cv, &rp.m);
		if (rp.head == rp.tail)
			break;
		req = rp.ring[rp.tail++ % RING];
		execute = rp.execute[req->cmd->common.opcode];
		rp.ran++;
		pthread_mutex_unlock(&rp.m);
		execute(req); /* nvmet_req_complete() from this thread */
		pthread_mutex_lock(&rp.m);
	}
	pthread_mutex_unlock(&rp.m);
	return NULL;
}

static void reaper_start(void)
{
	pthread_mutex_lock(&rp.m);
	rp.stop = false;
	rp.on = true;
	rp.ran = 0;
	pthread_mutex_unlock(&rp.m);
	assert_int_equal(pthread_create(&rp.thread, NULL, reaper, NULL), 0);
}

/* After the target is gone (it waited for every request): stop. */
static u64 reaper_stop(void)
{
	u64 ran;

	pthread_mutex_lock(&rp.m);
	rp.stop = true;
	rp.on = false;
	pthread_cond_signal(&rp.cv);
	pthread_mutex_unlock(&rp.m);
	pthread_join(rp.thread, NULL);
	pthread_mutex_lock(&rp.m);
	ran = rp.ran;
	assert_int_equal(rp.head, rp.tail);
	pthread_mutex_unlock(&rp.m);
	return ran;
}

static void opts(struct nvmet_target_opts *to)
{
	nv_target_opts(to, 4u << 20);
	to->poll_groups = 2;
}

/* Synchronous writes and reads (keyed and in-capsule), verified. */
static void test_poll_complete_elsewhere(void **state)
{
	static struct nv_env e;
	static u8 w[LEN], r[LEN];
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = NQ, .topts = &to };
	struct nvmet_target_stats st;
	unsigned int q, i, n = 0;

	(void)state;
	opts(&to);
	reaper_start();
	nv_env_init(&e, "rxe", &cfg);
	for (i = 0; i < 8; i++) {
		u32 len = i & 1 ? 4096 : LEN;

		q = 1 + i % NQ;
		nv_fill(w, len, i + 1);
		memset(r, 0, len);
		assert_int_equal(nvmeh_rw(e.c, q, true, i * 64, len / 512, w),
				 0);
		assert_int_equal(nvmeh_rw(e.c, 1 + (q % NQ), false, i * 64,
					  len / 512, r),
				 0);
		assert_memory_equal(w, r, len);
		n += 2;
	}
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.poll_members, NQ);
	assert_int_equal(st.errors, 0);
	nv_env_fini(&e);
	/* every I/O command ran on the reaper, none elsewhere */
	assert_int_equal(reaper_stop(), n);
}

/* Many commands in flight from the host, completed on the reaper. */
enum { SLOTS = 16 };

struct aslot {
	struct nvmeh_request rq;
	u8 buf[8192];
	unsigned int qid;
	unsigned int idx; /* its own 256 blocks: no two commands overlap */
	unsigned int left;
};

static pthread_mutex_t am = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t acv = PTHREAD_COND_INITIALIZER;
static unsigned int active;
static u64 aok, afail;
static struct nvmeh_ctrl *actrl;

static void aslot_done(struct nvmeh_request *rq);

static int aslot_issue(struct aslot *s)
{
	memset(&s->rq, 0, sizeof(s->rq));
	s->rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		s->left & 1 ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, nsid),
		      1);
	nvme_put_le64(s->rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      (u64)s->idx * 256 + s->left % 16 * 16);
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      sizeof(s->buf) / 512 - 1);
	s->rq.data = s->buf;
	s->rq.data_len = sizeof(s->buf);
	s->rq.write = s->left & 1;
	s->rq.done = aslot_done;
	s->rq.priv = s;
	return nvmeh_submit(actrl, s->qid, &s->rq);
}

static void aslot_end(void)
{
	pthread_mutex_lock(&am);
	active--;
	pthread_cond_broadcast(&acv);
	pthread_mutex_unlock(&am);
}

static void aslot_done(struct nvmeh_request *rq)
{
	struct aslot *s = rq->priv;

	pthread_mutex_lock(&am);
	if (rq->error || rq->status)
		afail++;
	else
		aok++;
	pthread_mutex_unlock(&am);
	if (!--s->left || aslot_issue(s))
		aslot_end();
}

static void test_poll_complete_elsewhere_load(void **state)
{
	static struct nv_env e;
	static struct aslot s[SLOTS];
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .nr_io_queues = NQ, .topts = &to };
	struct timespec end;
	unsigned int i, fails = 0;

	(void)state;
	opts(&to);
	reaper_start();
	nv_env_init(&e, "siw", &cfg);
	actrl = e.c;
	active = SLOTS;
	aok = afail = 0;
	for (i = 0; i < SLOTS; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].qid = 1 + i % NQ;
		s[i].idx = i;
		s[i].left = 200;
		if (aslot_issue(&s[i]))
			fails++;
	}
	while (fails--)
		aslot_end();
	/* halfway: a reset tears the polled queues down under this load */
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 30;
	pthread_mutex_lock(&am);
	while (aok + afail < SLOTS * 100 && active &&
	       pthread_cond_timedwait(&acv, &am, &end) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&am);
	assert_int_equal(nvmeh_ctrl_reset(e.c), 0);
	pthread_mutex_lock(&am);
	while (active && pthread_cond_timedwait(&acv, &am, &end) != ETIMEDOUT)
		;
	assert_int_equal(active, 0);
	assert_true(aok >= SLOTS * 100);
	pthread_mutex_unlock(&am);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 10000), 0);
	nv_wait_target(&e, 1, 1 + NQ);
	/* the target stopped with the reaper still completing: clean */
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_env_fini(&e);
	assert_true(reaper_stop() >= SLOTS * 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_poll_complete_elsewhere,
					  nv_teardown),
		cmocka_unit_test_teardown(test_poll_complete_elsewhere_load,
					  nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

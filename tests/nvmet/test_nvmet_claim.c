// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nvmet-rdma's teardown of every queue (nvmet_rdma_disconnect_queues(),
 * here from a target stop) against the other claimers of a queue, each
 * run in the window between the teardown finding a queue on the
 * transport's list and starting its release.  The target calls
 * nvmet_rdma_disconnect_window() there (weak, empty in rdma.c); this test
 * defines it.  Before the claim moved under the list's lock, the queue was
 * found there and not yet claimed.
 *
 * test_claim_vs_cm_release(): the host's link goes down in the window; the
 * CM's DISCONNECTED claims and releases the other queue, not the one the
 * teardown holds (valgrind found the use after free in test_nvmet_poll:
 * the CM's release freed it, then the teardown claimed it).
 *
 * test_accept_fails_claimed(): a queue whose rdma_accept() (wrapped) fails
 * while the teardown has claimed it: the connect path leaves it to the
 * teardown's release and returns 0 to the CM (the CM does not destroy the
 * id, which the release destroys).
 *
 * Each queue is released once (nvmet_sq_destroy() and rdma_destroy_id() on
 * its id, both wrapped, once each); nothing is freed twice or used after
 * being freed (the ASan and valgrind runs); no verbs object is left.
 */
#include "nvmet_env.h"

#include <rdmarw/rdma_cm.h>

#include <pthread.h>

struct nvmet_sq;

/* rdma_accept() and rdma_destroy_id() are these (rdmarw/rdma_cm.h) */
int __real_rdmarw_cm_accept(struct rdma_cm_id *id,
			    struct rdma_conn_param *param);
int __wrap_rdmarw_cm_accept(struct rdma_cm_id *id,
			    struct rdma_conn_param *param);
void __real_rdmarw_cm_destroy_id(struct rdma_cm_id *id);
void __wrap_rdmarw_cm_destroy_id(struct rdma_cm_id *id);
void __real_nvmet_sq_destroy(struct nvmet_sq *sq);
void __wrap_nvmet_sq_destroy(struct nvmet_sq *sq);
void nvmet_rdma_disconnect_window(struct rdma_cm_id *cm_id);

enum mode { M_OFF, M_LINK_DOWN, M_ACCEPT_FAILS };

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	enum mode mode;
	struct nv_env *e;
	struct rdma_cm_id *window_id; /* the first queue in the window */
	bool window_done; /* the hook did its part */
	struct rdma_cm_id *accept_id; /* the target's accept being failed */
	bool accept_returned;
	int id_destroys; /* rdma_destroy_id() on window_id */
	int sq_destroys;
	bool barrier;
} h = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };

static void h_reset(enum mode mode, struct nv_env *e)
{
	pthread_mutex_lock(&h.m);
	h.mode = mode;
	h.e = e;
	h.window_id = NULL;
	h.window_done = false;
	h.accept_id = NULL;
	h.accept_returned = false;
	h.id_destroys = 0;
	h.sq_destroys = 0;
	pthread_mutex_unlock(&h.m);
}

/* Wait (h.m held, at most 10 s from @end) until *@flag: whether it is. */
static bool h_wait(const bool *flag, const struct timespec *end)
{
	while (!*flag)
		if (pthread_cond_timedwait(&h.c, &h.m, end))
			break;
	return *flag;
}

static struct timespec h_end(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	return ts;
}

static void h_set(bool *flag)
{
	pthread_mutex_lock(&h.m);
	*flag = true;
	pthread_cond_broadcast(&h.c);
	pthread_mutex_unlock(&h.m);
}

void __wrap_nvmet_sq_destroy(struct nvmet_sq *sq)
{
	pthread_mutex_lock(&h.m);
	h.sq_destroys++;
	pthread_mutex_unlock(&h.m);
	__real_nvmet_sq_destroy(sq);
}

void __wrap_rdmarw_cm_destroy_id(struct rdma_cm_id *id)
{
	pthread_mutex_lock(&h.m);
	if (id && id == h.window_id)
		h.id_destroys++;
	pthread_mutex_unlock(&h.m);
	__real_rdmarw_cm_destroy_id(id);
}

/*
 * The target's rdma_accept() in M_ACCEPT_FAILS (on the CM's thread): wait
 * until the teardown has claimed the queue, then fail.
 */
int __wrap_rdmarw_cm_accept(struct rdma_cm_id *id,
			    struct rdma_conn_param *param)
{
	struct timespec end = h_end();
	bool claimed;

	pthread_mutex_lock(&h.m);
	if (h.mode != M_ACCEPT_FAILS || h.accept_id || !h.e ||
	    id->device != h.e->tdev) {
		pthread_mutex_unlock(&h.m);
		return __real_rdmarw_cm_accept(id, param);
	}
	h.accept_id = id;
	pthread_cond_broadcast(&h.c);
	claimed = h.window_id == id;
	while (!claimed && !pthread_cond_timedwait(&h.c, &h.m, &end))
		claimed = h.window_id == id;
	pthread_mutex_unlock(&h.m);
	if (!claimed) /* the test fails on h.window_id */
		return __real_rdmarw_cm_accept(id, param);
	/* after the claim, as a peer gone meanwhile */
	h_set(&h.accept_returned);
	return -ECONNRESET;
}

static int barrier_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	(void)id;
	(void)ev;
	h_set(&h.barrier);
	return 0;
}

/*
 * Every CM event queued before this call has been handled: an address
 * resolution's event comes after them on the CM's one thread.
 */
static bool cm_barrier(void)
{
	struct sockaddr_in dst = nv_in4("10.0.0.2", 0);
	struct timespec end = h_end();
	struct rdma_cm_id *id;
	bool ok;

	pthread_mutex_lock(&h.m);
	h.barrier = false;
	pthread_mutex_unlock(&h.m);
	id = rdma_create_id(&init_net, barrier_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return false;
	ok = !rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000);
	pthread_mutex_lock(&h.m);
	ok = ok && h_wait(&h.barrier, &end);
	pthread_mutex_unlock(&h.m);
	rdma_destroy_id(id);
	return ok;
}

/* Wait (at most 10 s) until the target has at most @n queues. */
static bool target_queues_at_most(struct nv_env *e, u32 n)
{
	struct timespec ts = { 0, 1000 * 1000 };
	struct nvmet_target_stats st;
	int i;

	for (i = 0; i < 10000; i++) {
		if (nvmet_target_get_stats(e->t, &st))
			return false;
		if (st.queues <= n)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * The target's hook, on the thread of its stop: called once per queue the
 * teardown found (and claimed); acts at the first.  No assertion here (a
 * failed one would leave the target's stop half done): it records.
 */
void nvmet_rdma_disconnect_window(struct rdma_cm_id *cm_id)
{
	struct timespec end = h_end();
	enum mode mode;
	bool ok = false;

	pthread_mutex_lock(&h.m);
	mode = h.window_id ? M_OFF : h.mode;
	if (mode != M_OFF)
		h.window_id = cm_id;
	pthread_cond_broadcast(&h.c);
	pthread_mutex_unlock(&h.m);
	switch (mode) {
	case M_LINK_DOWN:
		/*
		 * Both queues' ends get DISCONNECTED; the CM's claims release
		 * the one the teardown has not claimed (or, unclaimed, both).
		 */
		ok = soft_cm_link_down(h.e->hdev) >= 2 &&
		     target_queues_at_most(h.e, 1);
		break;
	case M_ACCEPT_FAILS:
		/* the connect path is done with the queue when this returns */
		pthread_mutex_lock(&h.m);
		ok = h_wait(&h.accept_returned, &end);
		pthread_mutex_unlock(&h.m);
		ok = ok && cm_barrier();
		break;
	case M_OFF:
		return;
	}
	if (ok)
		h_set(&h.window_done);
}

static void test_claim_vs_cm_release(void **state)
{
	static struct nv_env e;
	struct nvmet_target_stats st;

	(void)state;
	nv_env_init(&e, "rxe", &(struct nv_cfg){ .nr_io_queues = 1 });
	nv_wait_target(&e, 1, 2);
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.queues_created, 2);
	h_reset(M_LINK_DOWN, &e);

	nvmet_target_destroy(e.t); /* the teardown of every queue */
	e.t = NULL;
	pthread_mutex_lock(&h.m);
	h.mode = M_OFF;
	pthread_mutex_unlock(&h.m);
	assert_non_null(h.window_id);
	assert_true(h.window_done);
	/* each queue released once: the teardown's, the CM's */
	assert_int_equal(h.sq_destroys, 2);
	assert_int_equal(h.id_destroys, 1);
	nv_env_fini(&e);
}

struct create_arg {
	struct nv_env *e;
	struct nvmeh_ctrl *c;
};

static void *create_thread(void *arg)
{
	struct create_arg *a = arg;

	a->c = nvmeh_ctrl_create(&a->e->o);
	return NULL;
}

static void test_accept_fails_claimed(void **state)
{
	static struct nv_env e;
	static struct create_arg a;
	struct nvmet_target_stats st;
	struct timespec end = h_end();
	pthread_t thr;
	bool entered;

	(void)state;
	nv_env_init(&e, "rxe", &(struct nv_cfg){ .no_connect = true });
	h_reset(M_ACCEPT_FAILS, &e);
	a.e = &e;
	a.c = NULL;
	assert_int_equal(pthread_create(&thr, NULL, create_thread, &a), 0);
	/* the admin queue's connection held in the target's rdma_accept() */
	pthread_mutex_lock(&h.m);
	while (!h.accept_id && !pthread_cond_timedwait(&h.c, &h.m, &end))
		;
	entered = h.accept_id;
	pthread_mutex_unlock(&h.m);
	if (!entered) {
		h_reset(M_OFF, &e);
		pthread_join(thr, NULL);
		fail_msg("no rdma_accept() on the target in 10 s");
	}
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.queues_created, 1);

	nvmet_target_destroy(e.t); /* the teardown claims it */
	e.t = NULL;
	/* the host's connect fails */
	end = h_end();
	end.tv_sec += 20;
	if (pthread_timedjoin_np(thr, NULL, &end)) {
		h_reset(M_OFF, &e);
		fail_msg("the host's connect still waits after 30 s");
	}
	if (!IS_ERR_OR_NULL(a.c))
		e.c = a.c; /* nv_env_fini() destroys it */
	pthread_mutex_lock(&h.m);
	h.mode = M_OFF;
	pthread_mutex_unlock(&h.m);
	assert_ptr_equal(h.window_id, h.accept_id);
	assert_true(h.accept_returned);
	assert_true(h.window_done);
	/* released once, by the teardown's release work */
	assert_int_equal(h.sq_destroys, 1);
	assert_int_equal(h.id_destroys, 1);
	assert_true(IS_ERR(a.c));
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_claim_vs_cm_release,
					  nv_teardown),
		cmocka_unit_test_teardown(test_accept_fails_claimed,
					  nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

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
 * Each queue is released once (nvmet_sq_destroy() and rdma_destroy_id() on
 * its id, both wrapped, once each); nothing is freed twice or used after
 * being freed (the ASan and valgrind runs); no verbs object is left.
 */
#include "nvmet_env.h"

#include <rdmarw/rdma_cm.h>

#include <pthread.h>

struct nvmet_sq;

/* rdma_destroy_id() is this (rdmarw/rdma_cm.h) */
void __real_rdmarw_cm_destroy_id(struct rdma_cm_id *id);
void __wrap_rdmarw_cm_destroy_id(struct rdma_cm_id *id);
void __real_nvmet_sq_destroy(struct nvmet_sq *sq);
void __wrap_nvmet_sq_destroy(struct nvmet_sq *sq);
void nvmet_rdma_disconnect_window(struct rdma_cm_id *cm_id);

enum mode { M_OFF, M_LINK_DOWN };

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	enum mode mode;
	struct nv_env *e;
	struct rdma_cm_id *window_id; /* the first queue in the window */
	bool window_done; /* the hook did its part */
	int id_destroys; /* rdma_destroy_id() on window_id */
	int sq_destroys;
} h = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };

static void h_reset(enum mode mode, struct nv_env *e)
{
	pthread_mutex_lock(&h.m);
	h.mode = mode;
	h.e = e;
	h.window_id = NULL;
	h.window_done = false;
	h.id_destroys = 0;
	h.sq_destroys = 0;
	pthread_mutex_unlock(&h.m);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_claim_vs_cm_release,
					  nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

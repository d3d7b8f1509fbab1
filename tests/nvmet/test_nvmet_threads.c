// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The threaded case (also run under ThreadSanitizer): devices that execute
 * on their own threads, six user threads doing synchronous random I/O on
 * three queues (two threads per queue), each thread on its own LBA region
 * with its own shadow, and a controller reset while they run.  A command
 * the reset aborted is done again once the controller is live; at the end
 * every region is read back and compared with its shadow.
 */
#include "nvmet_env.h"

#include <pthread.h>

enum { NTHREADS = 6, NQ = 3, REGION = 512, OPS = 60, MAXNLB = 64 };

struct worker {
	struct nv_env *e;
	int idx;
	u64 rng;
	u8 *shadow;
	u8 *buf;
	int aborted;
	int failed;
	int done_ops;
};

static pthread_barrier_t start;

static u64 next(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	u64 base = (u64)w->idx * REGION;
	unsigned int qid = 1 + w->idx % NQ;
	int i, ret;

	pthread_barrier_wait(&start);
	for (i = 0; i < OPS; i++) {
		u32 nlb = 1 + (u32)(next(&w->rng) % MAXNLB);
		u64 off = next(&w->rng) % (REGION - nlb + 1);
		bool write = next(&w->rng) & 1;
		u32 len = nlb * 512;

		if (write)
			nv_fill(w->buf, len, next(&w->rng));
		for (;;) {
			ret = nvmeh_rw(w->e->c, qid, write, base + off, nlb,
				       w->buf);
			if (ret != -ECONNABORTED && ret != -ENOTCONN)
				break;
			w->aborted++;
			if (nvmeh_ctrl_wait_live(w->e->c, 5000)) {
				w->failed++;
				return NULL;
			}
		}
		if (ret) {
			w->failed++;
			return NULL;
		}
		if (write)
			memcpy(w->shadow + off * 512, w->buf, len);
		else if (memcmp(w->shadow + off * 512, w->buf, len))
			w->failed++;
		w->done_ops++;
	}
	return NULL;
}

static void threads_case(const char *profile, bool reset)
{
	static struct nv_env e;
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	struct nvmeh_stats hs;
	u8 *r;
	int i;

	nv_env_init(&e, profile,
		    &(struct nv_cfg){ .threaded = true,
				      .nr_io_queues = NQ,
				      .queue_size = 16,
				      .ns_size = NTHREADS * REGION * 512 });
	pthread_barrier_init(&start, NULL, NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .e = &e, .idx = i, .rng = 77 + i };
		w[i].shadow = calloc(1, REGION * 512);
		w[i].buf = malloc(MAXNLB * 512);
		assert_non_null(w[i].shadow);
		assert_non_null(w[i].buf);
		assert_int_equal(
			pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	pthread_barrier_wait(&start);
	if (reset)
		assert_int_equal(nvmeh_ctrl_reset(e.c), 0);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);

	r = malloc(REGION * 512);
	assert_non_null(r);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(w[i].failed, 0);
		assert_int_equal(w[i].done_ops, OPS);
		assert_int_equal(nvmeh_rw(e.c, 1 + i % NQ, false,
					  (u64)i * REGION, REGION, r),
				 0);
		assert_memory_equal(r, w[i].shadow, REGION * 512);
		free(w[i].shadow);
		free(w[i].buf);
	}
	free(r);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, reset ? 1 : 0);
	assert_int_equal(hs.reconnects, reset ? 1 : 0);
	nv_env_fini(&e);
}

static void test_threads_rxe(void **state)
{
	threads_case("rxe", false);
}

static void test_threads_reset_mlx5(void **state)
{
	threads_case("mlx5", true);
}

static void test_threads_reset_siw(void **state)
{
	threads_case("siw", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_threads_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_threads_reset_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_threads_reset_siw, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

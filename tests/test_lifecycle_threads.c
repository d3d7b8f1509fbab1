// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 16: "invalidation and registration stay exactly as safe: the
 * reliability tests and the fuzzer with an invariant checker must pass
 * with many threads, under TSan."  The life-cycle fuzzer's engine
 * (fuzz/fuzz_lifecycle.c, the libFuzzer target's own decoding and checks)
 * replays its seed corpus (fuzz/corpus/lifecycle) on N threads at once, in
 * rounds:
 *  - each round makes ONE fabric of two software devices (a profile, inline
 *    or threaded, force_mr off or on: round r takes configuration r % 12),
 *    shared by every thread, so the MR state, the key tables and the
 *    big-reader lock that guards them are shared;
 *  - each thread runs its own instance of the engine (its own PDs, CQs,
 *    QPs, MRs and arenas) on its own inputs of the corpus, one after the
 *    other, with every per-thread invariant (shadow/grant, stale keys of
 *    its own grant nothing, every posted context completes once, pools
 *    full, no leaks);
 *  - one more thread, the cross attacker, has for each instance a QP on B
 *    connected to a QP in that instance's PD on A, and tries the keys the
 *    instances publish in their key logs (fuzz/fuzz_lifecycle.h): a key of
 *    another thread's context that was destroyed before the attacker
 *    looked must grant neither a WRITE nor a READ, and a live one no READ.
 *    A WRITE that landed would also be caught by its owner's shadow check;
 *  - when every thread is done, what only the whole fabric can tell: no MR,
 *    QP or IOVA range left on either device, nothing DMA-mapped.
 *
 * Rounds run until RDMARW_LIFECYCLE_SECONDS (default 4) have passed, at
 * least RDMARW_LIFECYCLE_MIN_ROUNDS (default 12: every configuration once)
 * and at most 240; each thread runs RDMARW_LIFECYCLE_PER_ROUND inputs
 * (default 3) a round, and stops early once the time is up (the minimum
 * rounds still run, one input per thread).
 * RDMARW_LIFECYCLE_THREADS (default 4, at most 16) sets N, and
 * RDMARW_LIFECYCLE_CROSS=0 leaves the cross attacker out.  Every wait is
 * bounded: the engine's own (2 s), and the joins (120 s a round).  A broken
 * invariant aborts with its message; a data race aborts under TSan.
 */
#include "fuzz_common.h"
#include "fuzz_lifecycle.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#ifndef LIFECYCLE_CORPUS
#define LIFECYCLE_CORPUS "fuzz/corpus/lifecycle"
#endif

#define MAX_THREADS 16
#define MAX_ROUNDS 240
#define JOIN_SECONDS 120

struct input {
	char *name;
	u8 *data;
	size_t size;
};

static struct input *inputs;
static int ninputs;

static int env_int(const char *name, int def, int lo, int hi)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	FUZZ_CHECK(!*end && v >= lo && v <= hi, "%s=%s: want %d to %d", name, s,
		   lo, hi);
	return (int)v;
}

static int name_cmp(const void *a, const void *b)
{
	const struct input *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Every regular file of @dir, sorted by name (the replay is repeatable). */
static void load_corpus(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int cap = 0;

	FUZZ_CHECK(d, "corpus %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		char path[4096];
		struct input *in;
		FILE *f;
		long n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		FUZZ_CHECK(f, "%s: %s", path, strerror(errno));
		if (ninputs == cap) {
			cap = cap ? 2 * cap : 64;
			inputs = realloc(inputs, (size_t)cap * sizeof(*inputs));
			FUZZ_CHECK(inputs, "inputs");
		}
		in = &inputs[ninputs++];
		FUZZ_CHECK(!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
				   !fseek(f, 0, SEEK_SET),
			   "%s: size", path);
		in->name = strdup(de->d_name);
		in->size = (size_t)n;
		in->data = malloc(in->size + 1);
		FUZZ_CHECK(in->name && in->data, "input");
		FUZZ_CHECK(fread(in->data, 1, in->size, f) == in->size,
			   "%s: read", path);
		fclose(f);
	}
	closedir(d);
	FUZZ_CHECK(ninputs > 0, "corpus %s is empty", dir);
	qsort(inputs, (size_t)ninputs, sizeof(*inputs), name_cmp);
}

struct worker {
	pthread_t th;
	struct lc *lc;
	int first, count; /* inputs first, first + 1, ... (cyclic) */
	u64 deadline_ms;
	int ran;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	int j;

	for (j = 0; j < wk->count; j++) {
		const struct input *in = &inputs[(wk->first + j) % ninputs];

		/* At least one input a round, then only while time is left. */
		if (j && fuzz_now_ms() > wk->deadline_ms)
			break;
		lc_run(wk->lc, in->data, in->size);
		wk->ran++;
	}
	return NULL;
}

struct cross {
	pthread_t th;
	struct lc_cross *x;
	int stop; /* atomic: the workers are done */
	unsigned long probes;
};

static void *cross_main(void *arg)
{
	struct cross *cr = arg;

	const struct timespec idle = { 0, 50000 };

	while (!__atomic_load_n(&cr->stop, __ATOMIC_ACQUIRE)) {
		if (lc_cross_probe(cr->x))
			cr->probes++;
		else
			nanosleep(&idle, NULL); /* no key published yet */
		sched_yield(); /* the workers are the point */
	}
	return NULL;
}

static void join_bounded(pthread_t th, const char *who, int round)
{
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += JOIN_SECONDS;
	ret = pthread_timedjoin_np(th, NULL, &ts);
	FUZZ_CHECK(!ret, "round %d: %s still running after %d s (%s)", round,
		   who, JOIN_SECONDS, strerror(ret));
}

/* Nothing left on the fabric's devices once every thread is done. */
static void check_devices(const struct two_hosts *h, int round)
{
	struct soft_stats st;
	int s;

	for (s = 0; s < 2; s++) {
		FUZZ_CHECK(!soft_device_stats(h->dev[s], &st), "stats");
		FUZZ_CHECK(!st.mrs && !st.qps && !st.iova_ranges,
			   "round %d: left on device %d: %u MRs, %u QPs, %u "
			   "IOVA ranges",
			   round, s, st.mrs, st.qps, st.iova_ranges);
		FUZZ_CHECK(rdmarw_dma_mapped(h->dev[s]) == 0,
			   "round %d: device %d still DMA-mapped: %ld", round,
			   s, rdmarw_dma_mapped(h->dev[s]));
	}
}

int main(int argc, char **argv)
{
	int nthreads = env_int("RDMARW_LIFECYCLE_THREADS", 4, 1, MAX_THREADS);
	int seconds = env_int("RDMARW_LIFECYCLE_SECONDS", 4, 0, 3600);
	int min_rounds =
		env_int("RDMARW_LIFECYCLE_MIN_ROUNDS", 12, 1, MAX_ROUNDS);
	int per_round = env_int("RDMARW_LIFECYCLE_PER_ROUND", 3, 1, 1000);
	bool cross = env_int("RDMARW_LIFECYCLE_CROSS", 1, 0, 1);
	struct worker wk[MAX_THREADS];
	struct lc *lcs[MAX_THREADS];
	struct lc_cross_stats tot = { 0 }, st;
	unsigned long probes = 0;
	u64 start = fuzz_now_ms(), deadline = start + (u64)seconds * 1000;
	int t, r, ran = 0, next = 0;

	load_corpus(argc > 1 ? argv[1] : LIFECYCLE_CORPUS);
	for (t = 0; t < nthreads; t++)
		lcs[t] = lc_new((unsigned int)per_round * 64);
	for (r = 0;
	     r < MAX_ROUNDS && (r < min_rounds || fuzz_now_ms() < deadline);
	     r++) {
		int conf = r % 12;
		struct soft_profile prof;
		struct two_hosts shared = { 0 };
		struct cross cr = { 0 };

		FUZZ_CHECK(!soft_profile_get(fuzz_profiles[conf % 3], &prof),
			   "profile");
		prof.threaded = conf / 3 % 2;
		rdma_rw_set_force_mr(conf / 6);
		FUZZ_CHECK(!two_hosts_devices(&shared, &prof, NULL, false),
			   "%s", shared.failed);
		for (t = 0; t < nthreads; t++) {
			FUZZ_CHECK(!lc_attach(lcs[t], &shared, &prof),
				   "attach");
			wk[t] = (struct worker){
				.lc = lcs[t],
				.first = next,
				.count = per_round,
				/* the minimum rounds may overrun it */
				.deadline_ms = deadline,
			};
			next = (next + per_round) % ninputs;
		}
		if (cross) {
			cr.x = lc_cross_new(&shared, &prof, lcs, nthreads,
					    0x5eed0000ULL + (u64)r);
			FUZZ_CHECK(
				!pthread_create(&cr.th, NULL, cross_main, &cr),
				"cross thread");
		}
		for (t = 0; t < nthreads; t++)
			FUZZ_CHECK(!pthread_create(&wk[t].th, NULL, worker_main,
						   &wk[t]),
				   "thread");
		for (t = 0; t < nthreads; t++) {
			join_bounded(wk[t].th, "a worker", r);
			ran += wk[t].ran;
		}
		if (cross) {
			__atomic_store_n(&cr.stop, 1, __ATOMIC_RELEASE);
			join_bounded(cr.th, "the cross attacker", r);
			lc_cross_free(cr.x, &st);
			probes += cr.probes;
			tot.stale += st.stale;
			tot.renewed += st.renewed;
			tot.live += st.live;
			tot.nokey += st.nokey;
		}
		for (t = 0; t < nthreads; t++)
			lc_detach(lcs[t]);
		check_devices(&shared, r);
		FUZZ_CHECK(!two_hosts_close(&shared), "%s", shared.failed);
		rdma_rw_set_force_mr(false);
	}
	for (t = 0; t < nthreads; t++)
		lc_free(lcs[t]);
	printf("lifecycle: %d threads on one fabric, %d rounds, %d inputs of "
	       "%d in the corpus, %.1f s\n",
	       nthreads, r, ran, ninputs, (fuzz_now_ms() - start) / 1000.0);
	if (cross) {
		printf("cross attacker: %lu probes: %lu stale keys refused, "
		       "%lu live keys refused a READ, %lu renewed; %lu "
		       "waits for a first key\n",
		       probes, tot.stale, tot.live, tot.renewed, tot.nokey);
		/* The cross-thread checks ran, or this test proved nothing. */
		FUZZ_CHECK(tot.stale > 0 && tot.live > 0,
			   "the cross attacker met no stale or no live key");
	}
	for (t = 0; t < ninputs; t++) {
		free(inputs[t].name);
		free(inputs[t].data);
	}
	free(inputs);
	return 0;
}

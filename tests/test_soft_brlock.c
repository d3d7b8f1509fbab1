// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The big-reader lock of the MR state (soft_lock.h, struct soft_brlock):
 * a writer does not get in while a reader is inside its section; a
 * reader that enters after the writer's return sees what the writer
 * wrote; readers never see a writer's half-done update; and once a
 * writer that unpublished a buffer has returned, no reader touches that
 * buffer again (the guarantee of invalidate and dereg); a publisher
 * (REG_MR) keeps other writers out but no reader; a grace period
 * (invalidation's) waits for the sections in progress and for no new one,
 * and once it returned no reader touches what it unpublished.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "soft/soft_lock.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define READERS 3

static struct soft_br_reader *reader_new(struct soft_brlock *l)
{
	struct soft_br_reader *r = soft_br_add(l);

	assert_non_null(r);
	return r;
}

/* Release @r (soft_br_destroy() frees it with its lock). */
static void reader_free(struct soft_brlock *l, struct soft_br_reader *r)
{
	soft_br_del(l, r);
}

/*
 * *@flag stays 0 over 2000 turns of this thread (with @l, each turn is
 * also a read section of @r, which must not wait).
 */
static void assert_stays_zero(const int *flag, struct soft_brlock *l,
			      struct soft_br_reader *r)
{
	int i;

	for (i = 0; i < 2000; i++) {
		if (l) {
			soft_br_read_lock(l, r);
			soft_br_read_unlock(r);
		}
		sched_yield();
		assert_int_equal(__atomic_load_n(flag, __ATOMIC_ACQUIRE), 0);
	}
}

/*
 * A read section of @r held open on a thread of its own, as a transfer in
 * flight on another queue's thread: the test's thread, which then enters
 * sections of its own or waits for readers, is inside none (sections do
 * not nest, and a build without NDEBUG checks it).
 */
struct held {
	struct soft_brlock *l;
	struct soft_br_reader *r;
	pthread_t t;
	int in;
	int leave;
};

static void *held_run(void *arg)
{
	struct held *h = arg;

	soft_br_read_lock(h->l, h->r);
	__atomic_store_n(&h->in, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->leave, __ATOMIC_ACQUIRE))
		sched_yield();
	soft_br_read_unlock(h->r);
	return NULL;
}

/* Return once @r's section is open on @h's thread. */
static void section_hold(struct held *h, struct soft_brlock *l,
			 struct soft_br_reader *r)
{
	*h = (struct held){ .l = l, .r = r };
	assert_int_equal(pthread_create(&h->t, NULL, held_run, h), 0);
	while (!__atomic_load_n(&h->in, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* End the section and the thread: @r is outside once this returns. */
static void section_release(struct held *h)
{
	__atomic_store_n(&h->leave, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(h->t, NULL), 0);
}

/* ---- a writer waits for a reader inside ------------------------------- */

struct wait_case {
	struct soft_brlock lock;
	pthread_t t;
	int writer_in;
	int writer_started;
};

static void *writer_enter(void *arg)
{
	struct wait_case *c = arg;

	__atomic_store_n(&c->writer_started, 1, __ATOMIC_RELEASE);
	soft_br_write_lock(&c->lock);
	__atomic_store_n(&c->writer_in, 1, __ATOMIC_RELEASE);
	soft_br_write_unlock(&c->lock);
	return NULL;
}

/* Start a writer on a thread of its own: however long it tries (2000
 * turns of this thread), it does not get in. */
static void writer_kept_out(struct wait_case *c)
{
	assert_int_equal(pthread_create(&c->t, NULL, writer_enter, c), 0);
	while (!__atomic_load_n(&c->writer_started, __ATOMIC_ACQUIRE))
		sched_yield();
	assert_stays_zero(&c->writer_in, NULL, NULL);
}

/* What kept the writer out is gone: it gets in, and leaves. */
static void writer_got_in(struct wait_case *c)
{
	assert_int_equal(pthread_join(c->t, NULL), 0);
	assert_int_equal(c->writer_in, 1);
}

static void writer_waits_for_reader(void **state)
{
	struct wait_case c = { 0 };
	struct soft_br_reader *r;

	soft_br_init(&c.lock);
	r = reader_new(&c.lock);
	soft_br_read_lock(&c.lock, r);
	/* However long the reader stays, the writer is not in. */
	writer_kept_out(&c);
	soft_br_read_unlock(r);
	writer_got_in(&c);
	reader_free(&c.lock, r);
	soft_br_destroy(&c.lock);
}

/* ---- a publisher keeps writers out, and no reader --------------------- */

/*
 * soft_br_publish_lock() (REG_MR's): taken while a reader is inside (on
 * another thread: it would not return if it waited for it), and a reader
 * enters while it is held; another writer waits until it is released.
 */
static void publisher_excludes_writers_only(void **state)
{
	struct wait_case c = { 0 };
	struct soft_br_reader *r;
	struct held h;

	soft_br_init(&c.lock);
	r = reader_new(&c.lock);
	section_hold(&h, &c.lock, r);
	soft_br_publish_lock(&c.lock);
	section_release(&h);
	soft_br_read_lock(&c.lock, r);
	soft_br_read_unlock(r);
	writer_kept_out(&c);
	soft_br_write_unlock(&c.lock);
	writer_got_in(&c);
	reader_free(&c.lock, r);
	soft_br_destroy(&c.lock);
}

/* ---- a reader after the writer's return sees the new state ------------ */

struct after_case {
	struct soft_brlock lock;
	struct soft_br_reader *r;
	int value; /* under the lock */
	int seen;
};

static void *read_value(void *arg)
{
	struct after_case *c = arg;

	soft_br_read_lock(&c->lock, c->r);
	c->seen = c->value;
	soft_br_read_unlock(c->r);
	return NULL;
}

static void reader_after_writer_sees_it(void **state)
{
	struct after_case c = { .value = 1 };
	pthread_t t;

	soft_br_init(&c.lock);
	c.r = reader_new(&c.lock);
	soft_br_write_lock(&c.lock);
	c.value = 42;
	soft_br_write_unlock(&c.lock);
	assert_int_equal(pthread_create(&t, NULL, read_value, &c), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(c.seen, 42);
	reader_free(&c.lock, c.r);
	soft_br_destroy(&c.lock);
}

/* ---- many readers, a writer unpublishing buffers ----------------------- */

#define BUF 256
#define ROUNDS 300

struct stress;

struct reader_arg {
	struct stress *s;
	int i;
};

/* READERS threads, each with its own indicator, over one lock. */
struct stress {
	struct soft_brlock lock;
	struct soft_br_reader *r[READERS];
	struct reader_arg args[READERS];
	pthread_t t[READERS];
	/* under the lock: the live buffer and its generation, twice */
	u8 *live;
	u64 gen_a, gen_b;
	int stop;
	int torn;
};

/* Start @s's readers, each running @fn until stress_stop(). */
static void stress_start(struct stress *s, void *(*fn)(void *))
{
	int i;

	memset(s, 0, sizeof(*s));
	soft_br_init(&s->lock);
	for (i = 0; i < READERS; i++) {
		s->r[i] = reader_new(&s->lock);
		s->args[i] = (struct reader_arg){ .s = s, .i = i };
	}
	for (i = 0; i < READERS; i++)
		assert_int_equal(
			pthread_create(&s->t[i], NULL, fn, &s->args[i]), 0);
}

/* Stop and join @s's readers, then free the lock. */
static void stress_stop(struct stress *s)
{
	int i;

	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < READERS; i++)
		assert_int_equal(pthread_join(s->t[i], NULL), 0);
	for (i = 0; i < READERS; i++)
		reader_free(&s->lock, s->r[i]);
	soft_br_destroy(&s->lock);
}

/* No reader wrote into the @n buffers of @old (NULL: none) after they
 * were cleared; free them. */
static void assert_untouched(u8 **old, int n)
{
	u8 zero[BUF] = { 0 };
	int k;

	for (k = 0; k < n; k++) {
		if (!old[k])
			continue;
		assert_memory_equal(old[k], zero, BUF);
		free(old[k]);
	}
}

static void *stress_reader(void *arg)
{
	struct reader_arg *a = arg;
	struct stress *s = a->s;
	struct soft_br_reader *r = s->r[a->i];

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		soft_br_read_lock(&s->lock, r);
		if (s->gen_a != s->gen_b)
			__atomic_store_n(&s->torn, 1, __ATOMIC_RELAXED);
		if (s->live) /* "DMA" into the grant: each reader its slice */
			memset(s->live + a->i * (BUF / READERS), 0x5a,
			       BUF / READERS);
		soft_br_read_unlock(r);
	}
	return NULL;
}

static void invalidate_then_no_access(void **state)
{
	static struct stress s;
	u8 *old[ROUNDS];
	int k;

	stress_start(&s, stress_reader);
	for (k = 0; k < ROUNDS; k++) {
		u8 *b = malloc(BUF);

		assert_non_null(b);
		soft_br_write_lock(&s.lock);
		old[k] = s.live;
		s.gen_a++;
		sched_yield(); /* a reader would see the half-done update */
		s.gen_b++;
		s.live = b;
		soft_br_write_unlock(&s.lock);
		/* Returned: the previous buffer is nobody's now. */
		if (old[k])
			memset(old[k], 0, BUF);
		sched_yield();
	}
	soft_br_write_lock(&s.lock);
	old[0] = s.live; /* round 0 had none: reuse its slot */
	s.live = NULL;
	soft_br_write_unlock(&s.lock);
	memset(old[0], 0, BUF);
	stress_stop(&s);
	assert_int_equal(s.torn, 0);
	/* No reader wrote into a buffer after its writer returned. */
	assert_untouched(old, ROUNDS);
}

/* ---- a grace period: the sections in progress, not the new ones ------- */

/*
 * A grace period on a thread of its own, over a lock with two readers:
 * soft_br_grace() under soft_br_publish_lock() (invalidation's, the old
 * way), or with @mask set soft_br_grace_mask() of those bits (one MR's).
 */
struct grace_case {
	struct soft_brlock lock;
	struct soft_br_reader *r, *r2;
	const u64 *mask;
	pthread_t t;
	int started, done;
};

static void grace_case_init(struct grace_case *c)
{
	*c = (struct grace_case){ 0 };
	soft_br_init(&c->lock);
	c->r = reader_new(&c->lock);
	c->r2 = reader_new(&c->lock);
	assert_int_not_equal(c->r->bit, c->r2->bit);
}

static void grace_case_fini(struct grace_case *c)
{
	reader_free(&c->lock, c->r);
	reader_free(&c->lock, c->r2);
	soft_br_destroy(&c->lock);
}

static void *grace_run(void *arg)
{
	struct grace_case *c = arg;

	if (!c->mask)
		soft_br_publish_lock(&c->lock);
	__atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
	if (c->mask)
		soft_br_grace_mask(&c->lock, c->mask);
	else
		soft_br_grace(&c->lock);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	if (!c->mask)
		soft_br_write_unlock(&c->lock);
	return NULL;
}

/* Start @c's grace period; return once it has begun. */
static void grace_start(struct grace_case *c)
{
	c->started = c->done = 0;
	assert_int_equal(pthread_create(&c->t, NULL, grace_run, c), 0);
	while (!__atomic_load_n(&c->started, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* Wait for @c's grace period to end. */
static void grace_end(struct grace_case *c)
{
	assert_int_equal(pthread_join(c->t, NULL), 0);
	assert_int_equal(c->done, 1);
}

/*
 * A reader inside when the grace period begins holds it until that
 * section ends; meanwhile another reader enters and leaves 2000 times
 * without waiting (the word is not set).  The period ends once the first
 * reader leaves.
 */
static void grace_waits_for_sections_in_progress(void **state)
{
	struct grace_case c;
	struct held h;

	grace_case_init(&c);
	section_hold(&h, &c.lock, c.r);
	grace_start(&c);
	/* another reader enters and leaves meanwhile: it never waits */
	assert_stays_zero(&c.done, &c.lock, c.r2);
	section_release(&h);
	grace_end(&c);
	grace_case_fini(&c);
}

static u8 *grace_live; /* seq_cst: the buffer readers may write */

static void *grace_reader(void *arg)
{
	struct reader_arg *a = arg;
	struct stress *s = a->s;
	struct soft_br_reader *r = s->r[a->i];
	u8 *p;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		soft_br_read_lock(&s->lock, r);
		p = __atomic_load_n(&grace_live, __ATOMIC_SEQ_CST);
		if (p)
			memset(p + a->i * (BUF / READERS), 0x5a, BUF / READERS);
		soft_br_read_unlock(r);
	}
	return NULL;
}

/*
 * Readers that never stop re-entering: each round unpublishes the buffer
 * with one seq_cst store and a grace period, and then clears it; none is
 * written after (the guarantee an invalidation gives), and every period
 * ends although some reader is always inside.
 */
static void grace_then_no_access(void **state)
{
	static struct stress s;
	u8 *old[ROUNDS + 1];
	int k;

	stress_start(&s, grace_reader);
	for (k = 0; k <= ROUNDS; k++) {
		u8 *b = k < ROUNDS ? malloc(BUF) : NULL;

		assert_true(k == ROUNDS || b);
		soft_br_publish_lock(&s.lock);
		old[k] = __atomic_load_n(&grace_live, __ATOMIC_RELAXED);
		__atomic_store_n(&grace_live, b, __ATOMIC_SEQ_CST);
		soft_br_grace(&s.lock);
		soft_br_write_unlock(&s.lock);
		if (old[k]) /* the period ended: nobody's now */
			memset(old[k], 0, BUF);
		sched_yield();
	}
	stress_stop(&s);
	assert_untouched(old, ROUNDS + 1);
}

/* ---- one MR's grace period: the sections of its readers only ---------- */

/*
 * soft_br_grace_mask() (an MR's invalidation) ends with a section of an
 * indicator outside the mask held open all along (another queue's), and
 * waits for one inside it until that section ends.
 */
static void grace_mask_waits_for_its_readers_only(void **state)
{
	struct grace_case c;
	struct held h;
	u64 mask;

	grace_case_init(&c);
	mask = c.r2->bit;
	c.mask = &mask;
	section_hold(&h, &c.lock, c.r);
	grace_start(&c);
	grace_end(&c);
	section_release(&h);

	section_hold(&h, &c.lock, c.r2);
	grace_start(&c);
	assert_stays_zero(&c.done, NULL, NULL);
	section_release(&h);
	grace_end(&c);
	grace_case_fini(&c);
}

/* A released indicator is the next one given, outside any section, with
 * its bit: the list a grace period walks unlocked never loses a member. */
static void released_reader_is_reused(void **state)
{
	struct soft_brlock l;
	struct soft_br_reader *r, *r2;
	u64 bit;

	soft_br_init(&l);
	r = reader_new(&l);
	bit = r->bit;
	soft_br_read_lock(&l, r);
	soft_br_read_unlock(r);
	reader_free(&l, r);
	r2 = reader_new(&l);
	assert_ptr_equal(r2, r);
	assert_int_equal(r2->bit, bit);
	assert_int_equal(r2->active & 1, 0);
	reader_free(&l, r2);
	soft_br_destroy(&l);
}

/* ---- sections do not nest: checked where NDEBUG is unset -------------- */

#ifndef NDEBUG
/* Run @f on a new lock in a child: true when it died of abort(). */
static bool dies(void (*f)(struct soft_brlock *l))
{
	struct rlimit no_core = { 0, 0 };
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct soft_brlock l;
		int fd = open("/dev/null", O_WRONLY);

		/* the BUG report is expected: keep the test's output clean */
		if (fd >= 0)
			dup2(fd, 2);
		setrlimit(RLIMIT_CORE, &no_core);
		soft_br_init(&l);
		f(&l);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

/* What the library does: sections one after the other, waits outside. */
static void in_turn(struct soft_brlock *l)
{
	struct soft_br_reader *r = soft_br_add(l), *r2 = soft_br_add(l);
	u64 mask = r->bit | r2->bit;

	soft_br_read_lock(l, r);
	soft_br_read_unlock(r);
	soft_br_read_lock(l, r2);
	soft_br_read_unlock(r2);
	soft_br_grace_mask(l, &mask);
	soft_br_write_lock(l);
	soft_br_write_unlock(l);
	soft_br_publish_lock(l);
	soft_br_grace(l);
	soft_br_write_unlock(l);
}

/* A section inside another: the outer one's bit would be left behind. */
static void nested(struct soft_brlock *l)
{
	struct soft_br_reader *r = soft_br_add(l), *r2 = soft_br_add(l);

	soft_br_read_lock(l, r);
	soft_br_read_lock(l, r2);
}

/* One MR's grace period from inside a section (a REG_MR or LOCAL_INV
 * posted by a thread that holds one). */
static void grace_inside(struct soft_brlock *l)
{
	struct soft_br_reader *r = soft_br_add(l);
	u64 mask = 0;

	soft_br_read_lock(l, r);
	soft_br_grace_mask(l, &mask);
}

/* A writer that would wait for its own section, for ever. */
static void write_inside(struct soft_brlock *l)
{
	struct soft_br_reader *r = soft_br_add(l);

	soft_br_read_lock(l, r);
	soft_br_write_lock(l);
}

/* A publisher inside a section: a writer excluding the readers would
 * wait for it while it waits for that writer. */
static void publish_inside(struct soft_brlock *l)
{
	struct soft_br_reader *r = soft_br_add(l);

	soft_br_read_lock(l, r);
	soft_br_publish_lock(l);
}

/* Leaving a section this thread is not in. */
static void leave_other(struct soft_brlock *l)
{
	struct soft_br_reader *r = soft_br_add(l), *r2 = soft_br_add(l);

	soft_br_read_lock(l, r);
	soft_br_read_unlock(r2);
}
#endif

/*
 * The per-MR grace period relies on a thread being in one read section at
 * most (rdmarw__soft_br_bit is that section's bit): a build without
 * NDEBUG (Debug, the sanitizer builds) aborts at a breach, and lets the
 * library's own sequence run.
 */
static void nested_sections_abort(void **state)
{
#ifdef NDEBUG
	skip();
#else
	assert_false(dies(in_turn));
	assert_true(dies(nested));
	assert_true(dies(grace_inside));
	assert_true(dies(write_inside));
	assert_true(dies(publish_inside));
	assert_true(dies(leave_other));
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writer_waits_for_reader),
		cmocka_unit_test(publisher_excludes_writers_only),
		cmocka_unit_test(reader_after_writer_sees_it),
		cmocka_unit_test(invalidate_then_no_access),
		cmocka_unit_test(grace_waits_for_sections_in_progress),
		cmocka_unit_test(grace_then_no_access),
		cmocka_unit_test(grace_mask_waits_for_its_readers_only),
		cmocka_unit_test(released_reader_is_reused),
		cmocka_unit_test(nested_sections_abort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * spinlock_t, struct mutex and struct completion (<rdmarw/spinlock.h>,
 * mutex.h, completion.h) between threads: mutual exclusion under
 * contention, the kernel's trylock convention, complete() waking exactly
 * one waiter per call, complete_all() every waiter, and the jiffies
 * timeout, also one too large for the clock (it waits, it does not expire
 * at once).  Every wait in the test is bounded.  Runs under ThreadSanitizer
 * (TSAN_TESTS).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <time.h>

#include <rdmarw/completion.h>
#include <rdmarw/kernel.h>
#include <rdmarw/mutex.h>
#include <rdmarw/spinlock.h>

#define THREADS 4
#define ROUNDS 20000

static DEFINE_SPINLOCK(slock);
static DEFINE_MUTEX(mlock);
static long counter_s, counter_m;

static void *hammer(void *arg)
{
	unsigned long flags;

	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		switch (i % 4) {
		case 0:
			spin_lock(&slock);
			counter_s++;
			spin_unlock(&slock);
			break;
		case 1:
			spin_lock_irqsave(&slock, flags);
			counter_s++;
			spin_unlock_irqrestore(&slock, flags);
			break;
		case 2:
			spin_lock_bh(&slock);
			counter_s++;
			spin_unlock_bh(&slock);
			break;
		default:
			spin_lock_irq(&slock);
			counter_s++;
			spin_unlock_irq(&slock);
		}
		mutex_lock(&mlock);
		counter_m++;
		mutex_unlock(&mlock);
	}
	return NULL;
}

static void locks_exclude(void **state)
{
	pthread_t t[THREADS];

	(void)state;
	counter_s = counter_m = 0;
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(counter_s, THREADS * ROUNDS);
	assert_int_equal(counter_m, THREADS * ROUNDS);
}

static void *try_other(void *arg)
{
	int *res = arg;

	res[0] = spin_trylock(&slock);
	res[1] = mutex_trylock(&mlock);
	return NULL;
}

static void trylock_convention(void **state)
{
	spinlock_t s;
	struct mutex m;
	int res[2] = { -1, -1 };
	pthread_t t;

	(void)state;
	spin_lock_init(&s);
	mutex_init(&m);
	assert_int_equal(spin_trylock(&s), 1);
	spin_unlock(&s);
	assert_int_equal(mutex_trylock(&m), 1);
	mutex_unlock(&m);
	mutex_destroy(&m);
	/* held by this thread: another thread's trylock fails with 0 */
	spin_lock(&slock);
	mutex_lock(&mlock);
	pthread_create(&t, NULL, try_other, res);
	pthread_join(t, NULL);
	mutex_unlock(&mlock);
	spin_unlock(&slock);
	assert_int_equal(res[0], 0);
	assert_int_equal(res[1], 0);
}

static struct completion comp;
static int woken;
static pthread_mutex_t woken_lock = PTHREAD_MUTEX_INITIALIZER;

static void *waiter(void *arg)
{
	unsigned long left =
		wait_for_completion_timeout(&comp, msecs_to_jiffies(10000));

	(void)arg;
	pthread_mutex_lock(&woken_lock);
	if (left)
		woken++;
	pthread_mutex_unlock(&woken_lock);
	return NULL;
}

static int woken_now(void)
{
	int n;

	pthread_mutex_lock(&woken_lock);
	n = woken;
	pthread_mutex_unlock(&woken_lock);
	return n;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void complete_counts_events(void **state)
{
	(void)state;
	init_completion(&comp);
	assert_false(completion_done(&comp));
	assert_false(try_wait_for_completion(&comp));
	complete(&comp);
	complete(&comp);
	assert_true(completion_done(&comp));
	wait_for_completion(&comp); /* consumes one ... */
	assert_true(try_wait_for_completion(&comp)); /* ... and the other */
	assert_false(completion_done(&comp));
	complete(&comp);
	reinit_completion(&comp);
	assert_false(completion_done(&comp));
}

static void complete_wakes_one_per_call(void **state)
{
	pthread_t t[3];
	long long deadline;

	(void)state;
	init_completion(&comp);
	woken = 0;
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, waiter, NULL);
	sleep_ms(50);
	assert_int_equal(woken_now(), 0);
	complete(&comp);
	deadline = now_ms() + 5000;
	while (woken_now() < 1 && now_ms() < deadline)
		sleep_ms(1);
	sleep_ms(50);
	assert_int_equal(woken_now(), 1); /* exactly one */
	complete(&comp);
	complete(&comp);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(woken, 3);
	assert_false(completion_done(&comp));
}

static void complete_all_releases_everyone(void **state)
{
	pthread_t t[3];
	long long t0;

	(void)state;
	init_completion(&comp);
	woken = 0;
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, waiter, NULL);
	sleep_ms(20);
	t0 = now_ms();
	complete_all(&comp);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(woken, 3);
	/* all at once, not one by one as their 10 s timeouts expire */
	assert_true(now_ms() - t0 < 5000);
	/* and every later waiter, until reinit */
	assert_true(wait_for_completion_timeout(&comp, 1) > 0);
	wait_for_completion(&comp);
	assert_true(completion_done(&comp));
	reinit_completion(&comp);
	assert_false(completion_done(&comp));
}

static void timeout_in_jiffies(void **state)
{
	long long t0;
	unsigned long left;

	(void)state;
	init_completion(&comp);
	t0 = now_ms();
	left = wait_for_completion_timeout(&comp, msecs_to_jiffies(100));
	assert_int_equal(left, 0);
	assert_true(now_ms() - t0 >= 100);
	assert_true(now_ms() - t0 < 5000);
	assert_int_equal(wait_for_completion_timeout(&comp, 0), 0);
	complete(&comp);
	left = wait_for_completion_timeout(&comp, msecs_to_jiffies(3000));
	assert_true(left > 0 && left <= 3000);
	complete(&comp);
	assert_true(wait_for_completion_timeout(&comp, 0) > 0);
}

static void *complete_later(void *arg)
{
	sleep_ms(50);
	complete(arg);
	return NULL;
}

static void huge_timeout_waits(void **state)
{
	unsigned long huge = (unsigned long)MAX_SCHEDULE_TIMEOUT - 1;
	long long t0;
	pthread_t t;

	(void)state;
	init_completion(&comp);
	t0 = now_ms();
	assert_int_equal(pthread_create(&t, NULL, complete_later, &comp), 0);
	/* its deadline overflowed: the wait spun holding the lock */
	assert_true(wait_for_completion_timeout(&comp, huge) > 0);
	assert_true(now_ms() - t0 >= 50);
	pthread_join(t, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(locks_exclude),
		cmocka_unit_test(trylock_convention),
		cmocka_unit_test(complete_counts_events),
		cmocka_unit_test(complete_wakes_one_per_call),
		cmocka_unit_test(complete_all_releases_everyone),
		cmocka_unit_test(timeout_in_jiffies),
		cmocka_unit_test(huge_timeout_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

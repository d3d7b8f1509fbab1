// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * atomic_t, refcount_t and kref (<rdmarw/atomic.h>, refcount.h, kref.h),
 * and the WARN/BUG path (<rdmarw/kernel.h>): return values of every call,
 * saturation with a warning on each misuse of a refcount, WARN_ON_ONCE
 * printing once per call site, BUG_ON aborting.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdmarw/atomic.h>
#include <rdmarw/kernel.h>
#include <rdmarw/kref.h>
#include <rdmarw/refcount.h>

static void atomics(void **state)
{
	atomic_t a = ATOMIC_INIT(5);

	(void)state;
	assert_int_equal(atomic_read(&a), 5);
	atomic_set(&a, 1);
	atomic_inc(&a);
	atomic_add(3, &a);
	assert_int_equal(atomic_read(&a), 5);
	atomic_sub(2, &a);
	atomic_dec(&a);
	assert_int_equal(atomic_read(&a), 2);
	assert_int_equal(atomic_inc_return(&a), 3);
	assert_int_equal(atomic_dec_return(&a), 2);
	assert_int_equal(atomic_add_return(10, &a), 12);
	assert_int_equal(atomic_sub_return(11, &a), 1);
	assert_true(atomic_dec_and_test(&a));
	assert_false(atomic_dec_and_test(&a)); /* -1 */
	assert_true(atomic_inc_and_test(&a));
	/* cmpxchg returns the old value, exchanging only on a match */
	assert_int_equal(atomic_cmpxchg(&a, 7, 9), 0);
	assert_int_equal(atomic_read(&a), 0);
	assert_int_equal(atomic_cmpxchg(&a, 0, 9), 0);
	assert_int_equal(atomic_read(&a), 9);
	assert_int_equal(atomic_xchg(&a, 4), 9);
	assert_int_equal(atomic_read(&a), 4);
}

static void refcount_counts(void **state)
{
	refcount_t r = REFCOUNT_INIT(1);
	unsigned long w = rdmarw_warn_count();

	(void)state;
	refcount_inc(&r);
	assert_int_equal(refcount_read(&r), 2);
	assert_true(refcount_inc_not_zero(&r));
	assert_int_equal(refcount_read(&r), 3);
	refcount_dec(&r);
	assert_false(refcount_dec_and_test(&r));
	assert_true(refcount_dec_and_test(&r));
	assert_int_equal(refcount_read(&r), 0);
	assert_false(refcount_inc_not_zero(&r));
	assert_int_equal(refcount_read(&r), 0);
	assert_int_equal(rdmarw_warn_count(), w); /* no misuse so far */
}

static void refcount_saturates(void **state)
{
	refcount_t r;
	unsigned long w = rdmarw_warn_count();

	(void)state;
	/* increment from 0: use after free */
	refcount_set(&r, 0);
	refcount_inc(&r);
	assert_int_equal((int)refcount_read(&r), REFCOUNT_SATURATED);
	assert_int_equal(rdmarw_warn_count(), w + 1);
	/* a saturated count stays there and is never "last" */
	assert_false(refcount_dec_and_test(&r));
	assert_int_equal((int)refcount_read(&r), REFCOUNT_SATURATED);
	assert_true(refcount_inc_not_zero(&r));
	assert_int_equal((int)refcount_read(&r), REFCOUNT_SATURATED);
	/* overflow */
	refcount_set(&r, INT_MAX);
	refcount_inc(&r);
	assert_int_equal((int)refcount_read(&r), REFCOUNT_SATURATED);
	refcount_set(&r, INT_MAX);
	assert_true(refcount_inc_not_zero(&r));
	assert_int_equal((int)refcount_read(&r), REFCOUNT_SATURATED);
	/* underflow */
	refcount_set(&r, 0);
	assert_false(refcount_dec_and_test(&r));
	assert_int_equal((int)refcount_read(&r), REFCOUNT_SATURATED);
	/* refcount_dec() dropping the last reference */
	refcount_set(&r, 1);
	refcount_dec(&r);
	assert_int_equal((int)refcount_read(&r), REFCOUNT_SATURATED);
	assert_true(rdmarw_warn_count() >= w + 5);
}

struct obj {
	struct kref ref;
	int released;
};

static void obj_release(struct kref *kref)
{
	container_of(kref, struct obj, ref)->released++;
}

static void kref_lifecycle(void **state)
{
	struct obj o = { .released = 0 };

	(void)state;
	kref_init(&o.ref);
	assert_int_equal(kref_read(&o.ref), 1);
	kref_get(&o.ref);
	assert_true(kref_get_unless_zero(&o.ref));
	assert_int_equal(kref_read(&o.ref), 3);
	assert_int_equal(kref_put(&o.ref, obj_release), 0);
	assert_int_equal(kref_put(&o.ref, obj_release), 0);
	assert_int_equal(o.released, 0);
	assert_int_equal(kref_put(&o.ref, obj_release), 1);
	assert_int_equal(o.released, 1);
	assert_false(kref_get_unless_zero(&o.ref));
	assert_int_equal(kref_read(&o.ref), 0);
}

/* Run @fn in a child with stderr in a pipe; return what it printed. */
static char *child_stderr(void (*fn)(void), int *status)
{
	static char out[4096];
	int fds[2];
	ssize_t n, len = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
		len += n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return out;
}

static void warn_three_times(void)
{
	unsigned long w0 = rdmarw_warn_count();
	int i, hits = 0;

	for (i = 0; i < 3; i++) {
		if (WARN_ON(i >= 0))
			hits++;
		if (WARN_ON_ONCE(i == i))
			hits++;
	}
	if (WARN_ON(hits < 0) || WARN_ON_ONCE(0))
		hits = 100;
	_exit(hits == 6 && rdmarw_warn_count() - w0 == 6 ? 0 : 1);
}

static void warn_on_and_once(void **state)
{
	int status;
	char *out = child_stderr(warn_three_times, &status);
	const char *p = out;
	int warns = 0, onces = 0;

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	while ((p = strstr(p, "rdmarw: WARNING: at "))) {
		const char *eol = strchr(p, '\n');

		assert_non_null(eol);
		if (strstr(p, ": i >= 0\n") == eol - strlen(": i >= 0"))
			warns++;
		else if (strstr(p, ": i == i\n") == eol - strlen(": i == i"))
			onces++;
		p = eol;
	}
	assert_int_equal(warns, 3);
	assert_int_equal(onces, 1);
	assert_non_null(strstr(out, "test_compat_kref.c:"));
}

static void bug_on_false(void)
{
	BUG_ON(1 == 2);
	_exit(7);
}

static void bug_on_true(void)
{
	BUG_ON(2 > 1);
	_exit(7);
}

static void bug_on_aborts(void **state)
{
	int status;
	char *out;

	(void)state;
	out = child_stderr(bug_on_false, &status);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	assert_string_equal(out, "");
	out = child_stderr(bug_on_true, &status);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(out, "rdmarw: BUG: at "));
	assert_non_null(strstr(out, ": 2 > 1\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(atomics),
		cmocka_unit_test(refcount_counts),
		cmocka_unit_test(refcount_saturates),
		cmocka_unit_test(kref_lifecycle),
		cmocka_unit_test(warn_on_and_once),
		cmocka_unit_test(bug_on_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

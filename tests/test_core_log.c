// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The library's log: messages reach an installed callback with their level
 * and text, the level filters them (rdmarw_set_log_level(), and
 * RDMARW_LOG_LEVEL: CTest runs this program a second time as
 * test_core_log_env with RDMARW_LOG_LEVEL=err), and without a callback
 * they go to stderr as one prefixed line; with one, nothing goes to stderr.
 * A value of RDMARW_LOG_LEVEL that names no level is reported once on
 * stderr and taken as warn (this program run again with such a value).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdmarw/log.h>
#include <rdmarw/rw.h>

#include "core/provider.h"

struct seen {
	int calls;
	enum rdmarw_log_level level;
	char msg[256];
};

static void record(enum rdmarw_log_level level, const char *msg, void *arg)
{
	struct seen *s = arg;

	s->calls++;
	s->level = level;
	snprintf(s->msg, sizeof(s->msg), "%s", msg);
}

/* Runs fn with stderr redirected to a file; returns what was written. */
static void capture_stderr(void (*fn)(void), char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	assert_int_equal(dup2(fileno(tmp), 2), 2);
	fn();
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

static void env_level_is_default(void **state)
{
	const char *env = getenv("RDMARW_LOG_LEVEL");

	(void)state;
	if (env && !strcmp(env, "err"))
		assert_int_equal(rdmarw_get_log_level(), RDMARW_LOG_ERR);
	else
		assert_int_equal(rdmarw_get_log_level(), RDMARW_LOG_WARN);
}

static void env_filters(void **state)
{
	const char *env = getenv("RDMARW_LOG_LEVEL");
	struct seen s = { 0 };

	(void)state;
	rdmarw_set_log_fn(record, &s);
	rdmarw__log(RDMARW_LOG_WARN, "a warning %d", 1);
	rdmarw__log(RDMARW_LOG_ERR, "an error %d", 2);
	rdmarw_set_log_fn(NULL, NULL);
	if (env && !strcmp(env, "err")) {
		assert_int_equal(s.calls, 1); /* the warning was filtered */
	} else {
		assert_int_equal(s.calls, 2);
	}
	assert_int_equal(s.level, RDMARW_LOG_ERR);
	assert_string_equal(s.msg, "an error 2");
}

static void callback_gets_library_warning(void **state)
{
	struct seen s = { 0 };
	struct rdma_rw_ctx ctx;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(rdmarw_set_log_level(RDMARW_LOG_WARN), 0);
	rdmarw_set_log_fn(record, &s);
	/* a caller bug the library reports once, through the log */
	rdma_rw_ctx_destroy(&ctx, NULL, 1, NULL, 0, DMA_TO_DEVICE);
	rdma_rw_ctx_destroy(&ctx, NULL, 1, NULL, 0, DMA_TO_DEVICE);
	rdmarw_set_log_fn(NULL, NULL);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.level, RDMARW_LOG_WARN);
	assert_non_null(strstr(s.msg, "rdma_rw_ctx_destroy"));
	assert_null(strchr(s.msg, '\n'));
}

static void levels_filter(void **state)
{
	struct seen s = { 0 };

	(void)state;
	rdmarw_set_log_fn(record, &s);
	assert_int_equal(rdmarw_set_log_level(RDMARW_LOG_DEBUG), 0);
	rdmarw__log(RDMARW_LOG_DEBUG, "debug");
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.level, RDMARW_LOG_DEBUG);
	assert_int_equal(rdmarw_set_log_level(RDMARW_LOG_INFO), 0);
	rdmarw__log(RDMARW_LOG_DEBUG, "debug");
	rdmarw__log(RDMARW_LOG_INFO, "info");
	assert_int_equal(s.calls, 2);
	assert_string_equal(s.msg, "info");
	assert_int_equal(rdmarw_set_log_level(RDMARW_LOG_NONE), 0);
	rdmarw__log(RDMARW_LOG_ERR, "err");
	assert_int_equal(s.calls, 2);
	assert_int_equal(rdmarw_set_log_level((enum rdmarw_log_level)5),
			 -EINVAL);
	assert_int_equal(rdmarw_get_log_level(), RDMARW_LOG_NONE);
	assert_int_equal(rdmarw_set_log_level(RDMARW_LOG_WARN), 0);
	rdmarw_set_log_fn(NULL, NULL);
}

static struct seen quiet_seen;

static void emit_warning(void)
{
	rdmarw__log(RDMARW_LOG_WARN, "to stderr %d", 3);
}

static void emit_warning_with_fn(void)
{
	rdmarw_set_log_fn(record, &quiet_seen);
	rdmarw__log(RDMARW_LOG_WARN, "to the callback");
	rdmarw_set_log_fn(NULL, NULL);
}

static void stderr_only_without_callback(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(rdmarw_set_log_level(RDMARW_LOG_WARN), 0);
	capture_stderr(emit_warning, buf, sizeof(buf));
	assert_string_equal(buf, "rdmarw: WARNING: to stderr 3\n");
	capture_stderr(emit_warning_with_fn, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(quiet_seen.calls, 1);
}

/* The child of bad_env_reported_once: the level, three more reads, a warning. */
static int bad_env_child(void)
{
	int level = rdmarw_get_log_level();

	rdmarw_get_log_level();
	rdmarw__log(RDMARW_LOG_INFO, "an info line");
	rdmarw__log(RDMARW_LOG_WARN, "a warning");
	return level == RDMARW_LOG_WARN ? 0 : 10 + level;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

/* This program's path: under valgrind /proc/self/exe is valgrind's tool. */
static const char *self_path = "/proc/self/exe";

static void bad_env_reported_once(void **state)
{
	char out[1024];
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		setenv("RDMARW_LOG_LEVEL", "loud", 1);
		execl(self_path, "test_core_log", "bad-env-child",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(count_of(out, "RDMARW_LOG_LEVEL='loud'"), 1);
	assert_int_equal(count_of(out, "\n"), 2);
	assert_non_null(strstr(out, "rdmarw: WARNING: RDMARW_LOG_LEVEL='loud' "
				    "is none of none, err, warn, info, "
				    "debug, 0-4: using warn\n"));
	assert_non_null(strstr(out, "rdmarw: WARNING: a warning\n"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_level_is_default),
		cmocka_unit_test(env_filters),
		cmocka_unit_test(callback_gets_library_warning),
		cmocka_unit_test(levels_filter),
		cmocka_unit_test(stderr_only_without_callback),
		cmocka_unit_test(bad_env_reported_once),
	};

	if (argc == 2 && !strcmp(argv[1], "bad-env-child"))
		return bad_env_child();
	if (argc >= 1 && argv[0] && strchr(argv[0], '/'))
		self_path = argv[0];

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The library's log: messages reach an installed callback with their level
 * and text, the level filters them (rdmarw_set_log_level(), and
 * RDMARW_LOG_LEVEL: CTest runs this program a second time as
 * test_core_log_env with RDMARW_LOG_LEVEL=err), and without a callback
 * they go to stderr as one prefixed line; with one, nothing goes to stderr.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_level_is_default),
		cmocka_unit_test(env_filters),
		cmocka_unit_test(callback_gets_library_warning),
		cmocka_unit_test(levels_filter),
		cmocka_unit_test(stderr_only_without_callback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

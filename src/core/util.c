// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Name tables and small helpers of the verbs core. */
#include "core/core.h"

#include <rdmarw/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RDMARW_NAME_ITEM(name) [name] = #name,
static const char *const wc_status_names[] = { RDMARW_WC_STATUS_LIST(
	RDMARW_NAME_ITEM) };

const char *ib_wc_status_msg(enum ib_wc_status status)
{
	size_t i = (size_t)status;

	if (i >= sizeof(wc_status_names) / sizeof(wc_status_names[0]))
		return "UNKNOWN";
	return wc_status_names[i];
}

const char *ib_wr_opcode_str(enum ib_wr_opcode opcode)
{
	switch (opcode) {
#define RDMARW_OPCODE_CASE(name, value) \
	case name:                      \
		return #name;
		RDMARW_WR_OPCODE_LIST(RDMARW_OPCODE_CASE)
	}
	return "UNKNOWN";
}

/*
 * The log.  The level comes from rdmarw_set_log_level(), else from
 * RDMARW_LOG_LEVEL (read once), else RDMARW_LOG_WARN.  -1: not decided yet.
 */
static int log_level = -1;
static rdmarw_log_fn log_fn;
static void *log_arg;

static int log_level_from_env(void)
{
	static const char *const names[] = { "none", "err", "warn", "info",
					     "debug" };
	const char *env = getenv("RDMARW_LOG_LEVEL");
	size_t i;

	if (!env || !*env)
		return RDMARW_LOG_WARN;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(env, names[i]) ||
		    (env[0] == (char)('0' + i) && !env[1]))
			return (int)i;
	return RDMARW_LOG_WARN;
}

enum rdmarw_log_level rdmarw_get_log_level(void)
{
	int level = __atomic_load_n(&log_level, __ATOMIC_RELAXED);

	if (level < 0) {
		int unset = -1;

		level = log_level_from_env();
		/* a concurrent rdmarw_set_log_level() wins */
		if (!__atomic_compare_exchange_n(&log_level, &unset, level,
						 false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			level = unset;
	}
	return (enum rdmarw_log_level)level;
}

int rdmarw_set_log_level(enum rdmarw_log_level level)
{
	if ((int)level < RDMARW_LOG_NONE || level > RDMARW_LOG_DEBUG)
		return -EINVAL;
	__atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
	return 0;
}

void rdmarw_set_log_fn(rdmarw_log_fn fn, void *arg)
{
	log_arg = arg;
	log_fn = fn;
}

static void rdmarw__vlog(enum rdmarw_log_level level, const char *fmt,
			 va_list ap) __attribute__((format(printf, 2, 0)));

static void rdmarw__vlog(enum rdmarw_log_level level, const char *fmt,
			 va_list ap)
{
	char msg[512];

	if (level <= RDMARW_LOG_NONE || level > rdmarw_get_log_level())
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_fn)
		log_fn(level, msg, log_arg);
	else
		fprintf(stderr, "rdmarw: %s%s\n",
			level == RDMARW_LOG_ERR	 ? "ERROR: " :
			level == RDMARW_LOG_WARN ? "WARNING: " :
						   "",
			msg);
}

void rdmarw__log(enum rdmarw_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rdmarw__vlog(level, fmt, ap);
	va_end(ap);
}

void rdmarw__warn_once(bool *warned, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(warned, true, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	rdmarw__vlog(RDMARW_LOG_WARN, fmt, ap);
	va_end(ap);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Name tables and small helpers of the verbs core. */
#include "core/core.h"

#include <rdmarw/kernel.h>
#include <rdmarw/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * The kernel's texts for completion statuses and asynchronous events
 * (drivers/infiniband/core/verbs.c), indexed by value.  A value without a
 * text (a hole, or past the end) gets the kernel's fallback.
 */
static const char *const wc_status_text[] = {
	[IB_WC_SUCCESS] = "success",
	[IB_WC_LOC_LEN_ERR] = "local length error",
	[IB_WC_LOC_QP_OP_ERR] = "local QP operation error",
	[IB_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
	[IB_WC_LOC_PROT_ERR] = "local protection error",
	[IB_WC_WR_FLUSH_ERR] = "WR flushed",
	[IB_WC_MW_BIND_ERR] = "memory bind operation error",
	[IB_WC_BAD_RESP_ERR] = "bad response error",
	[IB_WC_LOC_ACCESS_ERR] = "local access error",
	[IB_WC_REM_INV_REQ_ERR] = "remote invalid request error",
	[IB_WC_REM_ACCESS_ERR] = "remote access error",
	[IB_WC_REM_OP_ERR] = "remote operation error",
	[IB_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[IB_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	[IB_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
	[IB_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
	[IB_WC_REM_ABORT_ERR] = "operation aborted",
	[IB_WC_INV_EECN_ERR] = "invalid EE context number",
	[IB_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
	[IB_WC_FATAL_ERR] = "fatal error",
	[IB_WC_RESP_TIMEOUT_ERR] = "response timeout error",
	[IB_WC_GENERAL_ERR] = "general error",
};

static const char *const event_text[] = {
	[IB_EVENT_CQ_ERR] = "CQ error",
	[IB_EVENT_QP_FATAL] = "QP fatal error",
	[IB_EVENT_QP_REQ_ERR] = "QP request error",
	[IB_EVENT_QP_ACCESS_ERR] = "QP access error",
	[IB_EVENT_COMM_EST] = "communication established",
	[IB_EVENT_SQ_DRAINED] = "send queue drained",
	[IB_EVENT_PATH_MIG] = "path migration successful",
	[IB_EVENT_PATH_MIG_ERR] = "path migration error",
	[IB_EVENT_DEVICE_FATAL] = "device fatal error",
	[IB_EVENT_PORT_ACTIVE] = "port active",
	[IB_EVENT_PORT_ERR] = "port error",
	[IB_EVENT_LID_CHANGE] = "LID change",
	[IB_EVENT_PKEY_CHANGE] = "P_key change",
	[IB_EVENT_SM_CHANGE] = "SM change",
	[IB_EVENT_SRQ_ERR] = "SRQ error",
	[IB_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
	[IB_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
	[IB_EVENT_CLIENT_REREGISTER] = "client reregister",
	[IB_EVENT_GID_CHANGE] = "GID changed",
	/* IB_EVENT_WQ_FATAL has no text in the kernel either */
};

/* The entry of @table at @index, or NULL for a hole or an index past it. */
static const char *text_at(const char *const *table, size_t len, size_t index)
{
	return index < len ? table[index] : NULL;
}

const char *ib_wc_status_msg(enum ib_wc_status status)
{
	const char *text = text_at(wc_status_text, ARRAY_SIZE(wc_status_text),
				   (size_t)status);

	return text ? text : "unrecognized status";
}

const char *ib_event_msg(enum ib_event_type event)
{
	const char *text =
		text_at(event_text, ARRAY_SIZE(event_text), (size_t)event);

	return text ? text : "unrecognized event";
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
 * RDMARW_LOG_LEVEL (read once, when the library is loaded), else
 * RDMARW_LOG_WARN.  -1: not decided yet.
 */
static int log_level = -1;
static rdmarw_log_fn log_fn;
static void *log_arg;

static const char *const log_level_names[] = { "none", "err", "warn", "info",
					       "debug" };

/*
 * The level RDMARW_LOG_LEVEL names.  A value that names none is taken as
 * the default, and *@bad points at it so that the caller can say so once
 * the level is settled.
 */
static int log_level_from_env(const char **bad)
{
	const char *env = getenv("RDMARW_LOG_LEVEL");
	size_t i;

	*bad = NULL;
	if (!env || !*env)
		return RDMARW_LOG_WARN;
	for (i = 0; i < ARRAY_SIZE(log_level_names); i++)
		if (!strcasecmp(env, log_level_names[i]) ||
		    (env[0] == (char)('0' + i) && !env[1]))
			return (int)i;
	*bad = env;
	return RDMARW_LOG_WARN;
}

enum rdmarw_log_level rdmarw_get_log_level(void)
{
	static bool bad_env_warned;
	int level = __atomic_load_n(&log_level, __ATOMIC_RELAXED);
	const char *bad;

	if (level < 0) {
		int unset = -1;

		level = log_level_from_env(&bad);
		/* a concurrent rdmarw_set_log_level() wins */
		if (!__atomic_compare_exchange_n(&log_level, &unset, level,
						 false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			level = unset;
		/* the level is settled: the message cannot come back here */
		if (bad)
			rdmarw__warn_once(&bad_env_warned,
					  "RDMARW_LOG_LEVEL='%.32s' is none of "
					  "none, err, warn, info, debug, 0-4: "
					  "using warn",
					  bad);
	}
	return (enum rdmarw_log_level)level;
}

/*
 * Settle the level when the library is loaded, so that a value of
 * RDMARW_LOG_LEVEL that names no level is reported even by a program
 * that never gets a message.
 */
__attribute__((constructor)) static void log_level_at_load(void)
{
	rdmarw_get_log_level();
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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The library's messages.  Every message rdmarw emits goes through one log
 * function with a level.  By default messages at RDMARW_LOG_WARN and above
 * are written to stderr, one line each prefixed "rdmarw: ", as libibverbs
 * writes its warnings; the environment variable RDMARW_LOG_LEVEL (read
 * once, when the library is loaded) sets the level: "none", "err", "warn",
 * "info", "debug", or 0 to 4; any other value is reported once on stderr
 * and taken as "warn".  A program that installs a callback
 * with rdmarw_set_log_fn() receives every message that passes the level
 * instead, and nothing is written to stderr.
 *
 * Thread safety: messages may be emitted from any thread (the device's
 * progress thread, a CQ's thread); the callback must be thread-safe.  Install
 * or change it while no other thread calls into the library.
 */
#ifndef RDMARW_LOG_H
#define RDMARW_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum rdmarw_log_level - how important a message is
 * @RDMARW_LOG_NONE: (as a level to set) no message passes
 * @RDMARW_LOG_ERR: an operation failed in a way the caller may not see
 * @RDMARW_LOG_WARN: a caller bug or a suspicious use, as the kernel's
 *                   WARN_ON_ONCE (the default level)
 * @RDMARW_LOG_INFO: what the library decided (paths, fallbacks)
 * @RDMARW_LOG_DEBUG: details for debugging the library
 */
enum rdmarw_log_level {
	RDMARW_LOG_NONE = 0,
	RDMARW_LOG_ERR = 1,
	RDMARW_LOG_WARN = 2,
	RDMARW_LOG_INFO = 3,
	RDMARW_LOG_DEBUG = 4,
};

/**
 * typedef rdmarw_log_fn - a program's log callback
 * @level: the message's level (%RDMARW_LOG_ERR .. %RDMARW_LOG_DEBUG)
 * @msg: the message, one line without a trailing newline or prefix; valid
 *       only during the call
 * @arg: the pointer given to rdmarw_set_log_fn()
 */
typedef void (*rdmarw_log_fn)(enum rdmarw_log_level level, const char *msg,
			      void *arg);

/**
 * rdmarw_set_log_fn() - send the library's messages to a callback
 * @fn: the callback, or NULL to go back to stderr
 * @arg: passed to @fn
 *
 * Messages filtered out by the level (rdmarw_set_log_level(),
 * RDMARW_LOG_LEVEL) do not reach @fn.
 *
 * Environment: RDMARW_LOG_LEVEL, as for rdmarw_get_log_level().
 */
void rdmarw_set_log_fn(rdmarw_log_fn fn, void *arg);

/**
 * rdmarw_set_log_level() - set the lowest level that is emitted
 * @level: %RDMARW_LOG_NONE (silence) .. %RDMARW_LOG_DEBUG
 *
 * Overrides RDMARW_LOG_LEVEL.
 *
 * Environment: RDMARW_LOG_LEVEL is what this call overrides.
 *
 * Return: 0, -EINVAL for a value outside the enum (the level is unchanged).
 */
int rdmarw_set_log_level(enum rdmarw_log_level level);

/**
 * rdmarw_get_log_level() - the level in force
 *
 * Return: the level set by rdmarw_set_log_level(), else the one from
 * RDMARW_LOG_LEVEL, else %RDMARW_LOG_WARN.
 *
 * Environment: RDMARW_LOG_LEVEL, read once when the library is loaded:
 * "none", "err", "warn", "info", "debug" (any case) or 0 to 4.  Any other
 * value is reported once on stderr and taken as "warn".  The tools'
 * -v/--verbose raise it (-v info, -vv debug).
 */
enum rdmarw_log_level rdmarw_get_log_level(void);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_LOG_H */

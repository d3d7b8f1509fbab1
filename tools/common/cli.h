/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the three tools share on their command lines: one number parser
 * (K/M/G suffixes, reasons for every refusal), errno names from the C
 * library, one-line warnings and refusals, and --version.
 */
#ifndef RDMARW_TOOLS_CLI_H
#define RDMARW_TOOLS_CLI_H

#include <rdmarw/compat.h>
#include <rdmarw/ib_verbs.h>

/**
 * cli_parse_u64() - parse an unsigned number with an optional K/M/G suffix
 * @s: the text (decimal, 0x hex or 0 octal; K, M, G are powers of 1024)
 * @min: the smallest value accepted
 * @max: the largest value accepted
 * @out: the value, set only on success
 *
 * Return: NULL on success, or the reason for the refusal ("not a
 * number", "negative numbers are refused", "must be at least 1", "must be
 * at most 4096", ...), a string that lives until the next call.
 */
const char *cli_parse_u64(const char *s, u64 min, u64 max, u64 *out);

/**
 * cli_parse_seconds() - parse a positive number of seconds
 * @s: the text, a decimal number
 * @max: the largest value accepted
 * @out: the value, set only on success
 *
 * Return: NULL on success, or the reason for the refusal ("must be at
 * most 3600 seconds", ...), a string that lives until the next call.
 */
const char *cli_parse_seconds(const char *s, double max, double *out);

/**
 * cli_errno_name() - the symbolic name of an errno value, as "-EINVAL"
 * @err: a negative (or positive) errno value, or 0
 *
 * Return: "0", "-NAME" from strerrorname_np(), or "-E?" for an unknown
 * value; the string lives until the next call.
 */
const char *cli_errno_name(int err);

/**
 * cli_wc_status_name() - the enumerator name of a completion status
 * @status: the status
 *
 * The tools print "IB_WC_REM_ACCESS_ERR" where ib_wc_status_msg() says
 * "remote access error" (the kernel's text); their output formats keep the
 * names.
 *
 * Return: a static string, "UNKNOWN" for a value outside the enum.
 */
const char *cli_wc_status_name(enum ib_wc_status status);

/**
 * cli_warn() - print one line "TOOL: MESSAGE" on stderr
 * @tool: the program's name
 * @fmt: printf format of the message, one line
 */
void cli_warn(const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * cli_refuse() - print one line "TOOL: REASON" on stderr and exit 2
 * @tool: the program's name
 * @fmt: printf format of the reason, one line
 */
void cli_refuse(const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/**
 * cli_version() - print the --version line and exit 0
 * @tool: the program's name
 *
 * Prints the tool's version (the headers it was built with), the running
 * library's (rdmarw_version()) and whether the libibverbs backend is in.
 */
void cli_version(const char *tool) __attribute__((noreturn));

#endif /* RDMARW_TOOLS_CLI_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The JSON writer of the three tools: objects and arrays nested with two
 * spaces of indent, a container opened with jw_open_inline() kept on one
 * line, strings escaped; written to stdout.  In compact mode (for records,
 * as rdmarw-perf writes them) the outermost container holds one member per
 * line without indent, and everything inside it is on that line without
 * spaces: "[", then {"key":1,"other":"x"}, per line, then "]".  A writer
 * with a file writes there instead (rdmarw-perf's --out_json_file).
 */
#ifndef RDMARW_TOOLS_JSON_H
#define RDMARW_TOOLS_JSON_H

#include <rdmarw/compat.h>

#include <stdio.h>

/**
 * struct jw - the writer's state; zero it before the first jw_open()
 * @depth: containers open
 * @inline_depth: from this depth on, containers stay on one line (0: none)
 * @first: nothing written yet in the innermost container
 * @compact: set before the first jw_open(): one record per line, no spaces
 * @out: where to write; NULL: stdout
 */
struct jw {
	int depth;
	int inline_depth;
	bool first;
	bool compact;
	FILE *out;
};

/**
 * jw_key() - start a member: the comma, the indent and "key": (no key in arrays)
 * @j: the writer
 * @key: the member's name, or NULL in an array
 */
void jw_key(struct jw *j, const char *key);

/**
 * jw_open() - open an object ('{') or an array ('[')
 * @j: the writer
 * @key: the member's name, or NULL
 * @brace: '{' or '['
 */
void jw_open(struct jw *j, const char *key, char brace);

/**
 * jw_open_inline() - open a container written on one line
 * @j: the writer
 * @key: the member's name, or NULL
 * @brace: '{' or '['
 */
void jw_open_inline(struct jw *j, const char *key, char brace);

/**
 * jw_close() - close the innermost container (a newline after the outermost)
 * @j: the writer
 * @brace: '}' or ']'
 */
void jw_close(struct jw *j, char brace);

/**
 * jw_str() - a string member, escaped, or null
 * @j: the writer
 * @key: the member's name, or NULL
 * @v: the string, or NULL for null
 */
void jw_str(struct jw *j, const char *key, const char *v);

/**
 * jw_u64() - an unsigned number member
 * @j: the writer
 * @key: the member's name, or NULL
 * @v: the value
 */
void jw_u64(struct jw *j, const char *key, u64 v);

/**
 * jw_int() - a signed number member
 * @j: the writer
 * @key: the member's name, or NULL
 * @v: the value
 */
void jw_int(struct jw *j, const char *key, long long v);

/**
 * jw_bool() - a true/false member
 * @j: the writer
 * @key: the member's name, or NULL
 * @v: the value
 */
void jw_bool(struct jw *j, const char *key, bool v);

/**
 * jw_double() - a number with three decimals, or null when not finite
 * @j: the writer
 * @key: the member's name, or NULL
 * @v: the value
 */
void jw_double(struct jw *j, const char *key, double v);

/**
 * jw_fixed() - a number with @decimals decimals, or null when not finite
 * @j: the writer
 * @key: the member's name, or NULL
 * @v: the value
 * @decimals: digits after the point (0 to 9)
 */
void jw_fixed(struct jw *j, const char *key, double v, int decimals);

#endif /* RDMARW_TOOLS_JSON_H */

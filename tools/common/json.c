// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tools' JSON writer (json.h): indented, small containers inline; or
 * compact, one record per line.
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

void jw_key(struct jw *j, const char *key)
{
	if (j->inline_depth && j->depth >= j->inline_depth)
		fputs(j->first ? "" : j->compact ? "," : ", ", stdout);
	else if (j->depth)
		printf("%s\n%*s", j->first ? "" : ",",
		       j->compact ? 0 : 2 * j->depth, "");
	j->first = false;
	if (key)
		printf(j->compact ? "\"%s\":" : "\"%s\": ", key);
}

void jw_open(struct jw *j, const char *key, char brace)
{
	jw_key(j, key);
	putchar(brace);
	j->depth++;
	j->first = true;
	/* compact: a member of the outermost container is one line */
	if (j->compact && j->depth == 2 && !j->inline_depth)
		j->inline_depth = j->depth;
}

/* A small container (an SGE, a flag list) on one line. */
void jw_open_inline(struct jw *j, const char *key, char brace)
{
	jw_open(j, key, brace);
	if (!j->inline_depth)
		j->inline_depth = j->depth;
}

void jw_close(struct jw *j, char brace)
{
	bool in_line = j->inline_depth && j->depth >= j->inline_depth;

	if (in_line && j->depth == j->inline_depth)
		j->inline_depth = 0;
	j->depth--;
	if (!j->first && !in_line)
		printf("\n%*s", 2 * j->depth, "");
	putchar(brace);
	j->first = false;
	if (!j->depth)
		putchar('\n');
}

void jw_str(struct jw *j, const char *key, const char *v)
{
	jw_key(j, key);
	if (!v) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			printf("\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			printf("\\u%04x", *v);
		else
			putchar(*v);
	}
	putchar('"');
}

void jw_u64(struct jw *j, const char *key, u64 v)
{
	jw_key(j, key);
	printf("%" PRIu64, v);
}

void jw_int(struct jw *j, const char *key, long long v)
{
	jw_key(j, key);
	printf("%lld", v);
}

void jw_bool(struct jw *j, const char *key, bool v)
{
	jw_key(j, key);
	fputs(v ? "true" : "false", stdout);
}

void jw_fixed(struct jw *j, const char *key, double v, int decimals)
{
	jw_key(j, key);
	if (isfinite(v))
		printf("%.*f", decimals, v);
	else
		fputs("null", stdout);
}

void jw_double(struct jw *j, const char *key, double v)
{
	jw_fixed(j, key, v, 3);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tools' JSON writer (json.h): indented, small containers inline; or
 * compact, one record per line.
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* Where @j writes: its file, stdout without one. */
static FILE *out(const struct jw *j)
{
	return j->out ? j->out : stdout;
}

void jw_key(struct jw *j, const char *key)
{
	if (j->inline_depth && j->depth >= j->inline_depth)
		fputs(j->first ? "" : j->compact ? "," : ", ", out(j));
	else if (j->depth)
		fprintf(out(j), "%s\n%*s", j->first ? "" : ",",
			j->compact ? 0 : 2 * j->depth, "");
	j->first = false;
	if (key)
		fprintf(out(j), j->compact ? "\"%s\":" : "\"%s\": ", key);
}

void jw_open(struct jw *j, const char *key, char brace)
{
	jw_key(j, key);
	fputc(brace, out(j));
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
		fprintf(out(j), "\n%*s", 2 * j->depth, "");
	fputc(brace, out(j));
	j->first = false;
	if (!j->depth)
		fputc('\n', out(j));
}

void jw_str(struct jw *j, const char *key, const char *v)
{
	jw_key(j, key);
	if (!v) {
		fputs("null", out(j));
		return;
	}
	fputc('"', out(j));
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fprintf(out(j), "\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			fprintf(out(j), "\\u%04x", *v);
		else
			fputc(*v, out(j));
	}
	fputc('"', out(j));
}

void jw_u64(struct jw *j, const char *key, u64 v)
{
	jw_key(j, key);
	fprintf(out(j), "%" PRIu64, v);
}

void jw_int(struct jw *j, const char *key, long long v)
{
	jw_key(j, key);
	fprintf(out(j), "%lld", v);
}

void jw_bool(struct jw *j, const char *key, bool v)
{
	jw_key(j, key);
	fputs(v ? "true" : "false", out(j));
}

void jw_fixed(struct jw *j, const char *key, double v, int decimals)
{
	jw_key(j, key);
	if (isfinite(v))
		fprintf(out(j), "%.*f", decimals, v);
	else
		fputs("null", out(j));
}

void jw_double(struct jw *j, const char *key, double v)
{
	jw_fixed(j, key, v, 3);
}

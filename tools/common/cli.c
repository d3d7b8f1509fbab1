// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The tools' shared command-line helpers (cli.h). */
#include "cli.h"

#include <rdmarw/version.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_parse_u64(const char *s, u64 min, u64 max, u64 *out)
{
	static char range[48];
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	while (s && isspace((unsigned char)*s))
		s++;
	if (!s || !*s)
		return "empty value";
	if (*s == '-')
		return "negative numbers are refused";
	if (!isdigit((unsigned char)*s))
		return "not a number";
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return "too large";
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		return "not a number (digits and an optional K, M or G)";
	if (shift && v > ULLONG_MAX >> shift)
		return "too large";
	v <<= shift;
	if (v < min || v > max) {
		snprintf(range, sizeof(range), "must be at %s %llu",
			 v < min ? "least" : "most",
			 (unsigned long long)(v < min ? min : max));
		return range;
	}
	*out = v;
	return NULL;
}

const char *cli_parse_seconds(const char *s, double max, double *out)
{
	static char range[48];
	char *end;
	double v;

	if (!s || !*s)
		return "empty value";
	if (*s == '-')
		return "negative numbers are refused";
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return "not a number of seconds";
	if (!(v > 0))
		return "must be more than 0 seconds";
	if (v > max) {
		snprintf(range, sizeof(range), "must be at most %g seconds",
			 max);
		return range;
	}
	*out = v;
	return NULL;
}

const char *cli_errno_name(int err)
{
	static char buf[32];
	const char *name;

	if (!err)
		return "0";
	name = strerrorname_np(err < 0 ? -err : err);
	snprintf(buf, sizeof(buf), "-%s", name ? name : "E?");
	return buf;
}

#define CLI_WC_STATUS_NAME(name) [name] = #name,
static const char *const wc_status_names[] = { RDMARW_WC_STATUS_LIST(
	CLI_WC_STATUS_NAME) };

const char *cli_wc_status_name(enum ib_wc_status status)
{
	size_t i = (size_t)status;

	if (i >= sizeof(wc_status_names) / sizeof(wc_status_names[0]))
		return "UNKNOWN";
	return wc_status_names[i];
}

static __attribute__((format(printf, 2, 0))) void
vwarn(const char *tool, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", tool);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_warn(const char *tool, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(tool, fmt, ap);
	va_end(ap);
}

void cli_refuse(const char *tool, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(tool, fmt, ap);
	va_end(ap);
	exit(2);
}

void cli_version(const char *tool)
{
	printf("%s (rdmarw) %s, library %s, ibv backend %s\n", tool,
	       RDMARW_VERSION_STRING, rdmarw_version(),
#ifdef RDMARW_HAVE_IBV
	       "yes"
#else
	       "no"
#endif
	);
	exit(0);
}

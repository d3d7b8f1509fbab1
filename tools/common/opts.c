// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The tools' command-line engine (opts.h): getopt and --help from a table. */
#include "opts.h"

#include "cli.h"

#include <rdmarw/log.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_MAX_OPTS 64 /* rows of a table, at most */
#define CLI_VAL 256 /* getopt_long()'s value for row i: CLI_VAL + i */
#define CLI_NAME_W 18 /* --help: the width of "--name ARG" */
#define CLI_HELP_COL 25 /* --help: where an option's text starts */
#define CLI_NAMES_LEN 64

/* The engine's own options, after the table's. */
static const struct cli_opt cli_help = { "help", 'h', CLI_FLAG, NULL,
					 "this text" };
static const struct cli_opt cli_ver = {
	"version", 'V', CLI_FLAG, NULL, "the tool's and the library's version"
};
static const struct cli_opt cli_verbose = {
	"verbose", 'v', CLI_FLAG, NULL,
	"the library's messages: -v info, -vv debug\n(RDMARW_LOG_LEVEL)"
};

/* The tool's own -v/--verbose row (it also raises the log level), or NULL. */
static const struct cli_opt *verbose_row(const struct cli_tool *tool)
{
	size_t i;

	for (i = 0; i < tool->nr_opts; i++)
		if (tool->opts[i].name &&
		    !strcmp(tool->opts[i].name, cli_verbose.name))
			return &tool->opts[i];
	return NULL;
}

/* A mistake in a tool's table: say which row and stop. */
static void table_error(const struct cli_tool *tool, const struct cli_opt *t,
			const char *what)
{
	fprintf(stderr, "%s: option table: --%s: %s\n", tool->name,
		t ? t->name : "", what);
	abort();
}

/* Each row's field fits its kind; the letters h and V are the engine's. */
static void check_row(const struct cli_tool *tool, const struct cli_opt *t)
{
	size_t want = 0;

	if (t->kind == CLI_FLAG)
		want = sizeof(bool);
	else if (t->kind == CLI_SECONDS)
		want = sizeof(double);
	else if (t->kind == CLI_STR)
		want = sizeof(const char *);
	else if (t->kind == CLI_NUM)
		want = t->size == sizeof(u32) && t->max <= UINT32_MAX ?
			       sizeof(u32) :
			       sizeof(u64);
	if (want && t->size != want)
		table_error(tool, t, "the field does not fit the option");
	if (!t->name || (t->kind == CLI_CALL && !t->call))
		table_error(tool, t, "no name or no parser");
	if (!t->arg != (t->kind == CLI_FLAG) ||
	    (t->arg_optional && t->kind != CLI_CALL))
		table_error(tool, t, "the argument does not fit the option");
	if (t->short_name == 'h' || t->short_name == 'V')
		table_error(tool, t, "-h and -V are --help and --version");
	if ((t->short_name == 'v') != !strcmp(t->name, cli_verbose.name) ||
	    (t->short_name == 'v' && t->kind != CLI_FLAG))
		table_error(tool, t, "-v is --verbose, a flag");
}

/* getopt_long()'s lists: every row's long name and alias, its letter. */
static void build_lists(const struct cli_tool *tool, struct option *lo,
			char *shorts)
{
	const struct cli_opt *t;
	int has, n = 0;
	size_t i;

	if (tool->nr_opts > CLI_MAX_OPTS)
		table_error(tool, NULL, "too many options");
	for (i = 0; i < tool->nr_opts; i++) {
		t = &tool->opts[i];
		if (t->kind == CLI_HEAD)
			continue;
		check_row(tool, t);
		has = !t->arg	      ? no_argument :
		      t->arg_optional ? optional_argument :
					required_argument;
		lo[n++] =
			(struct option){ t->name, has, NULL, CLI_VAL + (int)i };
		if (t->alias)
			lo[n++] = (struct option){ t->alias, has, NULL,
						   CLI_VAL + (int)i };
		if (!t->short_name)
			continue;
		*shorts++ = t->short_name;
		if (t->arg)
			shorts = stpcpy(shorts, t->arg_optional ? "::" : ":");
	}
	lo[n++] = (struct option){ cli_help.name, no_argument, NULL, 'h' };
	lo[n++] = (struct option){ cli_ver.name, no_argument, NULL, 'V' };
	if (!verbose_row(tool))
		lo[n++] = (struct option){ cli_verbose.name, no_argument, NULL,
					   'v' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	strcpy(shorts, verbose_row(tool) ? "hV" : "hVv");
}

/* One option's lines of --help: its names and argument, then the text. */
static void usage_opt(FILE *f, const struct cli_opt *t, const char *name,
		      const char *help)
{
	char names[CLI_NAMES_LEN];
	const char *nl;

	snprintf(names, sizeof(names), "--%s%s%s%s", name,
		 !t->arg	 ? "" :
		 t->arg_optional ? "[=" :
				   " ",
		 t->arg ? t->arg : "", t->arg && t->arg_optional ? "]" : "");
	if (t->short_name && name == t->name)
		fprintf(f, "  -%c, ", t->short_name);
	else
		fputs("      ", f);
	if (strlen(names) > CLI_NAME_W)
		fprintf(f, "%s\n%*s", names, CLI_HELP_COL, "");
	else
		fprintf(f, "%-*s ", CLI_NAME_W, names);
	for (; (nl = strchr(help, '\n')); help = nl + 1)
		fprintf(f, "%.*s\n%*s", (int)(nl - help), help, CLI_HELP_COL,
			"");
	fprintf(f, "%s\n", help);
}

/* --help: the usage line, the table's rows in order, then the epilog. */
static void usage(FILE *f, const struct cli_tool *tool)
{
	char same[CLI_NAMES_LEN];
	const struct cli_opt *t;

	fprintf(f, "Usage: %s %s\n%s\n\n", tool->name, tool->synopsis,
		tool->about);
	for (t = tool->opts; t < tool->opts + tool->nr_opts; t++) {
		if (t->kind == CLI_HEAD) {
			fprintf(f, "%s\n", t->help);
			continue;
		}
		usage_opt(f, t, t->name, t->help);
		if (!t->alias)
			continue;
		snprintf(same, sizeof(same), "the same as --%s", t->name);
		usage_opt(f, t, t->alias, same);
	}
	if (!verbose_row(tool))
		usage_opt(f, &cli_verbose, cli_verbose.name, cli_verbose.help);
	usage_opt(f, &cli_help, cli_help.name, cli_help.help);
	usage_opt(f, &cli_ver, cli_ver.name, cli_ver.help);
	if (tool->epilog)
		fprintf(f, "\n%s", tool->epilog);
}

/* The one wording of a refused value: "-s/--size '0': REASON". */
static void refuse(const struct cli_tool *tool, const struct cli_opt *t,
		   const char *arg, const char *why)
{
	char names[CLI_NAMES_LEN];

	if (t->short_name)
		snprintf(names, sizeof(names), "-%c/--%s", t->short_name,
			 t->name);
	else
		snprintf(names, sizeof(names), "--%s", t->name);
	if (arg)
		cli_refuse(tool->name, "%s '%s': %s", names, arg, why);
	cli_refuse(tool->name, "%s: %s", names, why);
}

/* Do what row @t says with @arg (NULL: none given). */
static void apply(const struct cli_tool *tool, const struct cli_opt *t,
		  void *opts, const char *arg)
{
	char *field = (char *)opts + t->field;
	const char *why = NULL;
	u64 v;

	switch (t->kind) {
	case CLI_FLAG:
		*(bool *)field = true;
		break;
	case CLI_NUM:
		why = cli_parse_u64(arg, t->min, t->max, &v);
		if (!why && t->size == sizeof(u32))
			*(u32 *)field = (u32)v;
		else if (!why)
			*(u64 *)field = v;
		break;
	case CLI_SECONDS:
		why = cli_parse_seconds(arg, (double)t->max, (double *)field);
		break;
	case CLI_STR:
		*(const char **)field = arg;
		break;
	case CLI_CALL:
		why = t->call(opts, arg);
		break;
	case CLI_HEAD:
		break;
	}
	if (why)
		refuse(tool, t, arg, why);
}

/*
 * -v/--verbose, each time given, raises the library's log level a step
 * above the default (warn): -v info, -vv debug.  A more verbose
 * RDMARW_LOG_LEVEL is kept.
 */
static void raise_log_level(unsigned int verbose)
{
	int want = RDMARW_LOG_WARN + (int)verbose;

	if (want > RDMARW_LOG_DEBUG)
		want = RDMARW_LOG_DEBUG;
	if ((int)rdmarw_get_log_level() < want)
		rdmarw_set_log_level((enum rdmarw_log_level)want);
}

int cli_opts_parse(const struct cli_tool *tool, void *opts, int argc,
		   char **argv)
{
	struct option lo[2 * CLI_MAX_OPTS + 4];
	char shorts[3 * CLI_MAX_OPTS + 4];
	unsigned int verbose = 0;
	const struct cli_opt *t;
	int c;

	build_lists(tool, lo, shorts);
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout, tool);
			exit(0);
		}
		if (c == 'V')
			cli_version(tool->name);
		if (c == '?')
			exit(2); /* getopt said what, on one line */
		if (c == 'v' ||
		    (c >= CLI_VAL && tool->opts[c - CLI_VAL].name &&
		     !strcmp(tool->opts[c - CLI_VAL].name, cli_verbose.name)))
			verbose++;
		if (c == 'v' && !verbose_row(tool))
			continue;
		if (c >= CLI_VAL) {
			t = &tool->opts[c - CLI_VAL];
		} else {
			for (t = tool->opts; t->short_name != c; t++)
				;
		}
		apply(tool, t, opts, optarg);
	}
	if (verbose)
		raise_log_level(verbose);
	return optind;
}

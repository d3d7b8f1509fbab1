/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tools' one command-line engine.  A tool declares its options once,
 * in a table of struct cli_opt; cli_opts_parse() builds getopt_long()'s
 * long and short lists and --help from it, answers -h/--help and
 * -V/--version, stores each value where the table says and refuses a bad
 * value with one wording for every tool:
 *
 *	rdmarw-perf: -s/--size '0': must be at least 1
 *	rdmarw-chain: --repeat '-1': negative numbers are refused
 *
 * getopt's own messages (an unknown option, a missing argument, an
 * ambiguous abbreviation) are left as getopt prints them; all of these
 * exit with status 2.  Checks that span options, and the positional
 * arguments, stay in the tool.
 *
 * -v/--verbose is the engine's too, in every tool: each -v raises the
 * library's log level a step above warn (-v info, -vv debug; a more
 * verbose RDMARW_LOG_LEVEL is kept).  A tool that has more to say with it
 * declares its own "verbose" row (a CLI_FLAG on 'v'), which then also
 * raises the level; no other row may use the letter v.
 */
#ifndef RDMARW_TOOLS_OPTS_H
#define RDMARW_TOOLS_OPTS_H

#include <stddef.h>

#include <rdmarw/compat.h>

/**
 * enum cli_opt_kind - what an option does with its value
 * @CLI_HEAD: no option: a heading line of --help (the row's @help)
 * @CLI_FLAG: set a bool to true
 * @CLI_NUM: a number (cli_parse_u64(): K/M/G suffixes) in [min, max] into
 *	a 4- or 8-byte integer field
 * @CLI_SECONDS: seconds (cli_parse_seconds()), up to max, into a double
 * @CLI_STR: the argument itself into a const char * field
 * @CLI_CALL: the tool's @call decides, and stores what it parsed
 */
enum cli_opt_kind {
	CLI_HEAD,
	CLI_FLAG,
	CLI_NUM,
	CLI_SECONDS,
	CLI_STR,
	CLI_CALL
};

/**
 * struct cli_opt - one option (or heading) of a tool
 * @name: the long name, without "--" (NULL for a heading)
 * @short_name: the short letter, or 0
 * @kind: what the option does
 * @arg: the argument's name in --help; NULL: the option takes none
 * @help: --help's text: one or more lines separated by '\n'
 * @arg_optional: the argument may be left out (given as --name=ARG or
 *	-xARG); @call is then called with NULL
 * @alias: another long name for the same option (perftest's), or NULL
 * @field: where the value goes: the offset in the tool's options struct
 * @size: the size of that field
 * @min: the smallest number accepted (CLI_NUM)
 * @max: the largest number (CLI_NUM), or seconds (CLI_SECONDS)
 * @call: CLI_CALL's parser: given the options struct and the argument,
 *	returns NULL or the reason of a refusal (a static string)
 *
 * Rows are written as { name, short_name, kind, arg, help, ... } followed
 * by designated members: CLI_FIELD(), CLI_RANGE(), .call, .alias.
 */
struct cli_opt {
	const char *name;
	char short_name;
	enum cli_opt_kind kind;
	const char *arg;
	const char *help;
	bool arg_optional;
	const char *alias;
	size_t field, size;
	u64 min, max;
	const char *(*call)(void *opts, const char *arg);
};

/* The field of @type an option stores into. */
#define CLI_FIELD(type, member) \
	.field = offsetof(type, member), .size = sizeof(((type *)0)->member)

/* The range of a CLI_NUM option. */
#define CLI_RANGE(lo, hi) .min = (lo), .max = (hi)

/**
 * struct cli_tool - a tool's command line
 * @name: the program's name, first on every refusal and in --version
 * @synopsis: what follows "Usage: NAME " on --help's first line
 * @about: the line under it
 * @epilog: text after the options (lines ending in '\n'), or NULL
 * @opts: the options, in --help's order
 * @nr_opts: how many rows @opts has
 *
 * The engine adds -v/--verbose (unless the table has it), -h/--help and
 * -V/--version after the last row.
 */
struct cli_tool {
	const char *name;
	const char *synopsis;
	const char *about;
	const char *epilog;
	const struct cli_opt *opts;
	size_t nr_opts;
};

/* A table of struct cli_opt as cli_tool's @opts and @nr_opts. */
#define CLI_OPTS(table) \
	.opts = (table), .nr_opts = sizeof(table) / sizeof((table)[0])

/**
 * cli_opts_parse() - parse a tool's command line with its option table
 * @tool: the tool and its options
 * @opts: the tool's options struct, which the rows' fields point into
 * @argc: main()'s argc
 * @argv: main()'s argv
 *
 * Stores every option given into @opts, in command-line order (a later
 * value wins); fields of options not given keep what the caller set.
 * Exits 0 after --help and --version, 2 after a refusal (one line on
 * stderr).
 *
 * Return: the index in @argv of the first positional argument (argc when
 * there is none).
 */
int cli_opts_parse(const struct cli_tool *tool, void *opts, int argc,
		   char **argv);

#endif /* RDMARW_TOOLS_OPTS_H */

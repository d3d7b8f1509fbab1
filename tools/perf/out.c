// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-perf's records (perf.h): each is built member by member, then the
 * run's meta data (role, version, host, device, time, command line) and
 * options are appended and it goes, whole and under one lock, to the JSON
 * array on stdout (--json), to the JSON file (--out_json, --out_json_file)
 * and to CSV on stdout (--csv: a header line before the first record and
 * before every record whose members differ from the one before).
 */
#include "perf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdmarw/version.h>

#include "cli.h"
#include "json.h"

#define PERF_JSON_DEFAULT "perftest_out.json" /* perftest's --out_json */
#define PERF_ARGS_LEN 1024

static struct {
	pthread_mutex_t lock;
	bool json, csv;
	struct jw j; /* --json: stdout */
	struct jw jf; /* --out_json(_file) */
	FILE *file;
	char device[64];
	char host[256];
	char time[32];
	char args[PERF_ARGS_LEN];
	/* --csv: the members of the last record, for the header */
	const char *csv_keys[PERF_REC_FIELDS];
	unsigned int csv_n;
} out = { .lock = PTHREAD_MUTEX_INITIALIZER };

double perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double perf_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct perf_field *rec_add(struct perf_rec *r, const char *key,
				  enum perf_field_kind kind)
{
	struct perf_field *f;

	if (r->n == PERF_REC_FIELDS) {
		fprintf(stderr,
			PERF_TOOL ": a record of more than %d members\n",
			PERF_REC_FIELDS);
		abort();
	}
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->key = key;
	f->kind = kind;
	return f;
}

void perf_rec_init(struct perf_rec *r, const char *mode)
{
	r->n = 0;
	rec_str(r, "mode", mode);
}

void rec_str(struct perf_rec *r, const char *key, const char *v)
{
	rec_add(r, key, PF_STR)->s = v;
}

void rec_u64(struct perf_rec *r, const char *key, u64 v)
{
	rec_add(r, key, PF_U64)->u = v;
}

void rec_int(struct perf_rec *r, const char *key, long long v)
{
	rec_add(r, key, PF_INT)->i = v;
}

void rec_bool(struct perf_rec *r, const char *key, bool v)
{
	rec_add(r, key, PF_BOOL)->u = v;
}

void rec_fixed(struct perf_rec *r, const char *key, double v, int decimals)
{
	struct perf_field *f = rec_add(r, key, PF_FIXED);

	f->d = v;
	f->decimals = decimals;
}

void rec_double(struct perf_rec *r, const char *key, double v)
{
	rec_fixed(r, key, v, 3);
}

/* The command line, quoted where a shell would need it, into out.args. */
static void note_args(int argc, char **argv)
{
	size_t len = 0;
	int i;

	out.args[0] = '\0';
	for (i = 0; i < argc && len < sizeof(out.args) - 1; i++) {
		bool quote = strpbrk(argv[i], " \t\"'\\$") || !*argv[i];

		len += (size_t)snprintf(out.args + len, sizeof(out.args) - len,
					quote ? "%s'%s'" : "%s%s", i ? " " : "",
					argv[i]);
	}
}

void perf_out_open(const struct perf_opts *o, int argc, char **argv)
{
	const char *path = o->json_file;
	time_t t = time(NULL);
	struct tm tm;

	if (!path && o->out_json)
		path = PERF_JSON_DEFAULT;
	if (gethostname(out.host, sizeof(out.host)))
		strcpy(out.host, "?");
	out.host[sizeof(out.host) - 1] = '\0';
	gmtime_r(&t, &tm);
	strftime(out.time, sizeof(out.time), "%Y-%m-%dT%H:%M:%SZ", &tm);
	note_args(argc, argv);
	if (o->device)
		snprintf(out.device, sizeof(out.device), "%s", o->device);
	else
		snprintf(out.device, sizeof(out.device), "soft_%s", o->profile);
	out.json = o->json;
	out.csv = o->csv;
	out.j = (struct jw){ .compact = true };
	if (out.json)
		jw_open(&out.j, NULL, '[');
	if (path) {
		out.file = fopen(path, "w");
		if (!out.file) {
			fprintf(stderr, PERF_TOOL ": --out_json_file %s: %s\n",
				path, strerror(errno));
			exit(1);
		}
		out.jf = (struct jw){ .compact = true, .out = out.file };
		jw_open(&out.jf, NULL, '[');
	}
}

void perf_out_close(void)
{
	pthread_mutex_lock(&out.lock);
	if (out.json && out.j.depth)
		jw_close(&out.j, ']');
	if (out.file) {
		jw_close(&out.jf, ']');
		if (fclose(out.file))
			cli_warn(PERF_TOOL, "the JSON file: %s",
				 strerror(errno));
		out.file = NULL;
	}
	fflush(stdout);
	pthread_mutex_unlock(&out.lock);
}

bool perf_out_table(void)
{
	return !out.json && !out.csv;
}

/* The options every record ends with (the command line has them all). */
static void rec_opts(struct perf_rec *r, const struct perf_opts *o)
{
	rec_str(r, "profile", o->profile);
	rec_bool(r, "iommu", o->iommu);
	rec_bool(r, "threaded", o->threaded);
	rec_u64(r, "sge", o->sge);
	rec_u64(r, "entry", o->entry);
	rec_u64(r, "gap", o->gap);
	rec_u64(r, "offset", o->offset);
	rec_u64(r, "ctxs", o->ctxs);
	rec_u64(r, "qps", o->qps);
	rec_bool(r, "force_mr", o->force_mr);
	rec_bool(r, "bvec", o->bvec);
	rec_u64(r, "pi", o->pi);
	rec_fixed(r, "duration", o->duration, 3);
	rec_bool(r, "bidirectional", o->bidir);
	if (o->mode != PERF_LOCAL)
		rec_u64(r, "port", o->port);
}

static void json_rec(struct jw *j, const struct perf_rec *r)
{
	const struct perf_field *f;

	jw_open(j, NULL, '{');
	for (f = r->f; f < r->f + r->n; f++) {
		switch (f->kind) {
		case PF_STR:
			jw_str(j, f->key, f->s);
			break;
		case PF_U64:
			jw_u64(j, f->key, f->u);
			break;
		case PF_INT:
			jw_int(j, f->key, f->i);
			break;
		case PF_BOOL:
			jw_bool(j, f->key, f->u != 0);
			break;
		case PF_FIXED:
			jw_fixed(j, f->key, f->d, f->decimals);
			break;
		}
	}
	jw_close(j, '}');
	fflush(j->out ? j->out : stdout);
}

/* A CSV value: quoted when it holds a comma, a quote or a line break. */
static void csv_str(const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void csv_rec(const struct perf_rec *r)
{
	const struct perf_field *f;
	unsigned int i;
	bool same = r->n == out.csv_n;

	for (i = 0; same && i < r->n; i++)
		same = !strcmp(r->f[i].key, out.csv_keys[i]);
	if (!same) {
		for (i = 0; i < r->n; i++) {
			printf("%s", i ? "," : "");
			csv_str(r->f[i].key);
			out.csv_keys[i] = r->f[i].key;
		}
		out.csv_n = r->n;
		putchar('\n');
	}
	for (f = r->f; f < r->f + r->n; f++) {
		if (f != r->f)
			putchar(',');
		switch (f->kind) {
		case PF_STR:
			csv_str(f->s ? f->s : "");
			break;
		case PF_U64:
			printf("%llu", (unsigned long long)f->u);
			break;
		case PF_INT:
			printf("%lld", f->i);
			break;
		case PF_BOOL:
			fputs(f->u ? "true" : "false", stdout);
			break;
		case PF_FIXED:
			if (isfinite(f->d)) /* null: an empty field */
				printf("%.*f", f->decimals, f->d);
			break;
		}
	}
	putchar('\n');
	fflush(stdout);
}

void perf_rec_emit(struct perf_rec *r, const struct perf_opts *o,
		   const char *role, const char *device)
{
	pthread_mutex_lock(&out.lock);
	rec_opts(r, o);
	rec_str(r, "role", role);
	rec_str(r, "version", rdmarw_version());
	rec_str(r, "host", out.host);
	rec_str(r, "device", device ? device : out.device);
	rec_str(r, "time", out.time);
	rec_str(r, "args", out.args);
	if (out.json)
		json_rec(&out.j, r);
	if (out.file)
		json_rec(&out.jf, r);
	if (out.csv)
		csv_rec(r);
	pthread_mutex_unlock(&out.lock);
}

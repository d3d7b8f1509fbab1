/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What rdmarw-perf's files share: the options, the clocks, the records of
 * the output (out.c: the table's sink, --json, --out_json_file, --csv) and
 * the client/server and latency runs (cs.c, lat.c).
 */
#ifndef RDMARW_TOOLS_PERF_H
#define RDMARW_TOOLS_PERF_H

#include <stdio.h>

#include <rdmarw/compat.h>

#define PERF_TOOL "rdmarw-perf"
#define PERF_DEFAULT_PORT 18515 /* perftest's */

/*
 * Where the two ends of a run are:
 * @PERF_LOCAL: both in this process, on two software devices (or, with
 *	-d and --addr, two QPs on one ibv device), with memcpy beside
 * @PERF_SERVER: listen (ibv devices), serve one client, report
 * @PERF_CLIENT: connect to HOST (ibv devices) and run the tests
 * @PERF_SOFT_CS: client and server in this process, each on its own
 *	software device and thread, connected through rdma_cm: the software
 *	device's connection manager does not reach other processes
 */
enum perf_mode { PERF_LOCAL, PERF_SERVER, PERF_CLIENT, PERF_SOFT_CS };

struct perf_opts {
	bool write;
	bool read;
	bool send; /* --dir send: SEND/RECV (client/server runs) */
	u64 size_min;
	u64 size_max;
	u32 sge;
	u32 entry;
	u32 gap;
	u32 offset;
	u32 ctxs; /* -t: contexts in flight per QP */
	u32 qps; /* -q */
	u64 iters;
	double duration;
	const char *profile;
	bool profile_set; /* --profile given */
	const char *device; /* -d: an ibv device instead of the software one */
	const char *addr; /* --addr: with -d, both ends on it here */
	const char *host; /* HOST: the server to connect to */
	u32 port; /* -p: the server's rdma_cm port */
	u32 ib_port; /* -i: 1 */
	u32 inline_size; /* -I: 0 */
	bool server; /* --server */
	bool lat; /* --lat */
	bool bidir; /* -b */
	bool iommu;
	bool threaded;
	bool force_mr;
	bool bvec;
	u32 pi; /* --pi: T10-DIF interval in bytes, 0 without PI */
	bool ctl;
	bool json;
	bool csv;
	bool out_json; /* --out_json: also into perftest_out.json */
	const char *json_file; /* --out_json_file */
	bool quiet;
	bool gbits; /* --report_gbits: BW in Gb/s (10^9 bits), as perftest */
	bool cpu_freq; /* -F: accepted */
	bool rdma_cm; /* -R: accepted */
	bool duration_set; /* -D given: a limit on each size's I/O time */
	bool dir_set; /* --dir given */
	bool perftest; /* --perftest: perftest's programs at the other end */
	u64 rx_depth; /* -r: --perftest --dir send, perftest's receive depth */
	u32 threads; /* --threads: QP pairs on as many threads, 0 without */
	enum perf_mode mode;
};

/* Seconds on the monotonic clock, and this thread's CPU seconds. */
double perf_now(void);
double perf_cpu(void);

/* ---- records: --json, --out_json_file, --csv (out.c) ----------------- */

#define PERF_REC_FIELDS 112

enum perf_field_kind { PF_STR, PF_U64, PF_INT, PF_BOOL, PF_FIXED };

struct perf_field {
	const char *key;
	enum perf_field_kind kind;
	int decimals;
	const char *s;
	u64 u;
	long long i;
	double d;
};

/**
 * struct perf_rec - one record of the output, built member by member
 * @f: the members, in order
 * @n: how many
 *
 * A record is written whole by perf_rec_emit(): one line of JSON (one
 * member of the array) and one line of CSV, so records of two threads
 * never mix.
 */
struct perf_rec {
	struct perf_field f[PERF_REC_FIELDS];
	unsigned int n;
};

void perf_rec_init(struct perf_rec *r, const char *mode);
void rec_str(struct perf_rec *r, const char *key, const char *v);
void rec_u64(struct perf_rec *r, const char *key, u64 v);
void rec_int(struct perf_rec *r, const char *key, long long v);
void rec_bool(struct perf_rec *r, const char *key, bool v);
/* a number with @decimals decimals; null when not finite */
void rec_fixed(struct perf_rec *r, const char *key, double v, int decimals);
/* three decimals */
void rec_double(struct perf_rec *r, const char *key, double v);

/**
 * perf_out_open() - set up the outputs of a run
 * @o: the options (--json, --csv, --out_json, --out_json_file)
 * @argc: main()'s argc
 * @argv: main()'s argv: the command line goes into every record
 *
 * Opens the JSON array on stdout (--json) and in the file, and notes the
 * time, the host and the library's version.  Exits 1 when the file cannot
 * be created.
 */
void perf_out_open(const struct perf_opts *o, int argc, char **argv);

/* Close the JSON arrays and the file. */
void perf_out_close(void);

/* Whether the human table goes to stdout (neither --json nor --csv). */
bool perf_out_table(void);

/**
 * perf_rec_emit() - complete a record and write it to every output
 * @r: the record; the run's meta data and options are appended
 * @o: the options
 * @role: "local", "client" or "server"
 * @device: the device the record's side ran on; NULL: -d's, or "soft_"
 *	and the profile
 *
 * Thread-safe: the in-process server writes records beside the client.
 */
void perf_rec_emit(struct perf_rec *r, const struct perf_opts *o,
		   const char *role, const char *device);

/* ---- client/server (cs.c) --------------------------------------------- */

/**
 * perf_cs_soft() - does this client/server run use a software device
 * @o: the options, mode picked
 *
 * Return: true for both ends in this process, and for one end on a
 * software device over TCP (--profile siw-tcp, no -d).
 */
bool perf_cs_soft(const struct perf_opts *o);

/**
 * perf_cs_run() - a run of @o->mode PERF_SERVER, PERF_CLIENT or PERF_SOFT_CS
 * @o: the options
 *
 * Return: 0, or 1 after a failure that was reported on stderr.
 */
int perf_cs_run(const struct perf_opts *o);

#endif /* RDMARW_TOOLS_PERF_H */

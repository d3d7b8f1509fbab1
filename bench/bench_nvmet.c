// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench-nvmet: the in-process NVMe-oF host driving rdmarw-nvmet on the
 * software device, without qemu.  Two figures, as fio's anchor runs in the
 * lab: random 4 KiB reads (IOPS) and 128 KiB reads (bandwidth), each with
 * @depth commands outstanding per queue, and per core: I/Os per second of
 * the process's CPU time (host, target, CM and device threads together).
 * Beside each, rdmarw-perf's raw figure for the same data movement (an
 * NVMe READ is the target's RDMA WRITE into the host's buffer) on the same
 * profile, so that the cost of the NVMe layer is a ratio.  --write measures
 * writes instead (the target's RDMA READ; in-capsule at 4 KiB).  And
 * memcpy over the same footprint (memcpy_peer(): the namespace's size, a
 * buffer per slot, random blocks): rdmarw-perf reuses one buffer per side,
 * which stays in cache, so at 128 KiB the raw figure is a cache's and the
 * memcpy one the floor of this footprint (--no-perf skips both).
 *
 *   bench-nvmet [-p rxe] [-q 1] [-d 32] [-D 1.0] [--write] [--json]
 *               [--perf PATH | --no-perf] [--poll] [--poll-groups N]
 *               [--poll-target] [--poll-host] [--poll-busy]
 *               [--one-thread] [--size BYTES] [--ns-mib MIB] [--prefill]
 *               [--queue-regions] [--host-registered] [--ios N]
 *
 * --poll: the I/O queues are polled on both sides: the target's by poll
 * groups (as many as queues unless --poll-groups says), the host's each by
 * a thread of its own, instead of a CQ thread each woken per completion;
 * --poll-target or --poll-host: one side only.
 *
 * --one-thread: SPDK's run-to-completion shape: each target poll group
 * also polls its host queue (nvmet_target_poll_hook() calling
 * nvmeh_poll()), so one thread per queue runs both sides: the host's
 * completions, its next submission, the software device and the target.
 *
 * --ns-mib: the RAM namespace's size (64 MiB by default); --prefill: every
 * block written (and the last 128 KiB read back) before the figures, so
 * that reads read the namespace's own pages rather than the kernel's one
 * zero page, and writes fault none in.
 *
 * --queue-regions: queue k of N chooses its blocks in the k-th of N equal
 * slices of the namespace instead of anywhere in it, so that two queues
 * never read or write the same block (what writes from two cores into one
 * small namespace share: the lines of the blocks both store to).  Off by
 * default: the figures without it keep their meaning.
 *
 * --host-registered: each I/O slot's data buffer is registered with the
 * host once (nvmeh_buf_reg(), SPDK's memory map) and every command names
 * it: no fast registration before the capsule, no invalidation after the
 * response.  Off by default: the kernel host's registration per command
 * is what the wire looks like from the kernel.
 *
 * --ios N: each size's run ends after N I/Os in total (all queues
 * together), or at --duration if that comes first (--ios alone: 600 s at
 * most; rdmarw-perf and memcpy beside it then run 1 s).  A slot issues an
 * I/O only with one of the N tickets, so exactly N complete unless the
 * duration ends the run first, and the work counted does not depend on
 * how fast the machine ran: instructions counted over two such runs
 * (bench/README.md, "Instructions per I/O with --ios") differ by the
 * cost of the I/Os between the two counts.
 *
 * $RDMARW_NVMET_BENCH_FILE_BUFFERED=1, with $RDMARW_NVMET_BENCH_FILE_DIR
 * (nvme/target/backend.c: the namespace an unnamed file in that
 * directory): the file's namespace is buffered (the kernel's buffered_io,
 * rdmarw-nvmet's --buffered: never O_DIRECT), through the page cache.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/mman.h>

#include <rdmarw/soft.h>

#include "nvme_host.h"
#include "nvmet.h"

struct bench_opts {
	const char *profile;
	unsigned int queues;
	unsigned int depth;
	double duration;
	bool write;
	bool json;
	const char *perf;
	bool no_perf;
	u32 size; /* 0: both 4 KiB and 128 KiB */
	unsigned int poll_groups; /* 0: threaded target */
	bool poll_busy;
	bool host_poll;
	bool one_thread;
	u32 ns_mib; /* the RAM namespace's size */
	bool prefill; /* write every block before the figures */
	bool queue_regions; /* a slice of the namespace per queue */
	bool host_registered; /* data buffers registered once (nvmeh_buf_reg) */
	bool duration_set; /* -D given */
	u64 max_ios; /* --ios: I/Os per size, all queues (0: no bound) */
};

/* --one-thread: the host queues a target poll group polls. */
struct bench_hook {
	struct nvmeh_ctrl *c;
	unsigned int group;
	unsigned int groups;
	unsigned int queues;
};

/* Run from the poll group's thread after each sweep of its CQs. */
static int bench_host_pass(void *arg)
{
	struct bench_hook *h = arg;
	unsigned int qid;
	int n, done = 0;

	for (qid = 1 + h->group; qid <= h->queues; qid += h->groups) {
		n = nvmeh_poll(h->c, qid, 32);
		if (n > 0)
			done += n;
	}
	return done;
}

/* Hook (@c) or unhook (NULL) the host's queues into the target's groups. */
static int bench_hooks(struct nvmet_target *t, const struct bench_opts *o,
		       struct bench_hook *hooks, struct nvmeh_ctrl *c)
{
	unsigned int g;
	int ret;

	for (g = 0; g < o->poll_groups; g++) {
		hooks[g] = (struct bench_hook){ .c = c,
						.group = g,
						.groups = o->poll_groups,
						.queues = o->queues };
		ret = nvmet_target_poll_hook(t, g, c ? bench_host_pass : NULL,
					     c ? &hooks[g] : NULL);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * One I/O in flight.  A slot's completions run one at a time on its
 * queue's thread; slots of different queues sit side by side in the
 * array, so each has lines of its own (no store of one queue's thread
 * lands on a line another queue's thread writes) and counts its own I/Os
 * (summed once every slot has ended).
 */
struct bench_slot {
	struct bench_run *run;
	struct nvmeh_request rq;
	unsigned int qid;
	u8 *buf;
	struct nvmeh_buf *reg; /* --host-registered: @buf's region */
	u64 rng;
	u64 ios;
} __attribute__((aligned(64)));

struct bench_run {
	struct nvmeh_ctrl *c;
	u32 bs;
	u64 lbas; /* blocks each slot chooses among */
	unsigned int queues; /* --queue-regions: slices, else 1 */
	bool write;
	volatile bool stop;
	u64 max_ios; /* --ios: tickets to issue (0: no bound) */
	u64 tickets; /* taken so far (atomic) */
	pthread_mutex_t m;
	pthread_cond_t cv;
	unsigned int active;
	int errors;
};

static double now_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static u64 xrand(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void slot_done(struct nvmeh_request *rq);

/* --ios: whether @r lets one more I/O be issued (a ticket taken). */
static bool run_ticket(struct bench_run *r)
{
	return !r->max_ios || __atomic_fetch_add(&r->tickets, 1,
						 __ATOMIC_RELAXED) < r->max_ios;
}

static int slot_issue(struct bench_slot *s)
{
	struct bench_run *r = s->run;
	u32 nlb = r->bs / 512;
	u64 slba = (xrand(&s->rng) % (r->lbas / nlb)) * nlb;

	/* --queue-regions: the slot's queue's own slice */
	if (r->queues > 1)
		slba += (s->qid - 1) * r->lbas;

	memset(&s->rq, 0, sizeof(s->rq));
	s->rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		r->write ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, nsid),
		      1);
	nvme_put_le64(s->rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      slba);
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      nlb - 1);
	s->rq.data = s->buf;
	s->rq.buf = s->reg;
	s->rq.data_len = r->bs;
	s->rq.write = r->write;
	s->rq.done = slot_done;
	s->rq.priv = s;
	return nvmeh_submit(r->c, s->qid, &s->rq);
}

static void slot_end(struct bench_run *r, bool error)
{
	pthread_mutex_lock(&r->m);
	r->active--;
	r->errors += error;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->m);
}

static void slot_done(struct nvmeh_request *rq)
{
	struct bench_slot *s = rq->priv;
	struct bench_run *r = s->run;

	if (rq->error || rq->status) {
		slot_end(r, true);
		return;
	}
	s->ios++;
	if (__atomic_load_n(&r->stop, __ATOMIC_RELAXED) || !run_ticket(r) ||
	    slot_issue(s))
		slot_end(r, false);
}

struct bench_result {
	u64 ios;
	double secs;
	double cpu;
	int errors;
};

static int bench_case(struct nvmeh_ctrl *c, const struct bench_opts *o, u32 bs,
		      struct bench_result *res)
{
	const struct nvmeh_info *info = nvmeh_ctrl_info(c);
	unsigned int n = o->queues * o->depth, issue, i;
	struct bench_slot *slots = aligned_alloc(64, n * sizeof(*slots));
	struct bench_run r = {
		.c = c, .bs = bs, .write = o->write, .max_ios = o->max_ios
	};
	/* --ios alone: bounded by the longest duration -D takes */
	double limit = o->max_ios && !o->duration_set ? 600 : o->duration;
	struct timespec end;
	pthread_condattr_t ca;
	double t0, c0;

	if (!slots)
		return -ENOMEM;
	memset(slots, 0, n * sizeof(*slots));
	r.lbas = info->ns_lbas;
	r.queues = o->queue_regions ? o->queues : 1;
	r.lbas /= r.queues;
	if (r.lbas < bs / 512) {
		fprintf(stderr, "bench-nvmet: --queue-regions: a queue's slice "
				"of the namespace is smaller than one I/O\n");
		free(slots);
		return -EINVAL;
	}
	pthread_mutex_init(&r.m, NULL);
	/* the wait below is bounded on the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r.cv, &ca);
	pthread_condattr_destroy(&ca);
	for (i = 0; i < n; i++) {
		slots[i].run = &r;
		slots[i].qid = 1 + i % o->queues;
		slots[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
		slots[i].buf = aligned_alloc(4096, bs);
		if (!slots[i].buf) {
			while (i--)
				free(slots[i].buf);
			free(slots);
			pthread_mutex_destroy(&r.m);
			pthread_cond_destroy(&r.cv);
			return -ENOMEM;
		}
		memset(slots[i].buf, (int)i, bs);
	}
	for (i = 0; o->host_registered && i < n; i++) {
		slots[i].reg = nvmeh_buf_reg(c, slots[i].buf, bs);
		if (IS_ERR(slots[i].reg)) {
			fprintf(stderr, "bench-nvmet: nvmeh_buf_reg: %ld\n",
				PTR_ERR(slots[i].reg));
			slots[i].reg = NULL;
			r.errors++;
		}
	}
	issue = r.errors ? 0 : n; /* a region refused: no I/O */
	t0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	r.active = issue;
	for (i = 0; i < issue; i++) {
		if (!run_ticket(&r))
			slot_end(&r, false); /* --ios below the slots */
		else if (slot_issue(&slots[i]))
			slot_end(&r, true);
	}
	/*
	 * Until the duration ends, or every slot has ended (--ios: the
	 * tickets are gone; an error); each slot's end wakes this wait.
	 */
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)limit;
	end.tv_nsec += (long)((limit - (double)(time_t)limit) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r.m);
	while (r.active &&
	       pthread_cond_timedwait(&r.cv, &r.m, &end) != ETIMEDOUT)
		;
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	while (r.active)
		pthread_cond_wait(&r.cv, &r.m);
	pthread_mutex_unlock(&r.m);
	res->secs = now_s(CLOCK_MONOTONIC) - t0;
	res->cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	res->ios = 0;
	res->errors = r.errors;
	for (i = 0; i < n; i++) {
		res->ios += slots[i].ios;
		/* every request has ended: nothing holds the region */
		if (slots[i].reg && nvmeh_buf_dereg(slots[i].reg))
			res->errors++;
		free(slots[i].buf);
	}
	free(slots);
	pthread_mutex_destroy(&r.m);
	pthread_cond_destroy(&r.cv);
	return 0;
}

/*
 * --prefill: write every block of the namespace once, 128 KiB at a time
 * on queue 1, before any figure, and read the last run back: the RAM
 * namespace's pages are then its own (a block never written reads the
 * kernel's zero page, the same 4 KiB for every LBA, always in cache; and
 * the first write to a page faults it in).
 */
static int prefill(struct nvmeh_ctrl *c)
{
	const struct nvmeh_info *info = nvmeh_ctrl_info(c);
	u32 chunk = 131072, nlb;
	u64 slba = 0, i;
	u8 *buf, *back;
	int ret = 0;

	if (!info->lba_size || chunk % info->lba_size || !info->ns_lbas)
		return -EINVAL;
	buf = aligned_alloc(4096, chunk);
	back = aligned_alloc(4096, chunk);
	if (!buf || !back) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < chunk; i++)
		buf[i] = (u8)(i * 131 + 7) | 1; /* no byte is zero */
	nlb = chunk / info->lba_size;
	for (; slba < info->ns_lbas && !ret; slba += nlb) {
		if (info->ns_lbas - slba < nlb)
			nlb = (u32)(info->ns_lbas - slba);
		ret = nvmeh_rw(c, 1, true, slba, nlb, buf);
	}
	slba -= nlb;
	if (!ret)
		ret = nvmeh_rw(c, 1, false, slba, nlb, back);
	if (!ret && memcmp(buf, back, (size_t)nlb * info->lba_size))
		ret = -EIO;
out:
	free(back);
	free(buf);
	return ret;
}

/* rdmarw-perf's mpps and cpu_mpps for the same size; 0 when it failed. */
static int perf_raw(const struct bench_opts *o, u32 bs, double *mpps,
		    double *cpu_mpps)
{
	char cmd[PATH_MAX + 256], line[8192];
	const char *p;
	FILE *f;
	int ok = 0;

	snprintf(cmd, sizeof(cmd),
		 "'%s' --profile %s --size %u --dir %s --ctxs %u "
		 "--duration %.3f --json --quiet 2>/dev/null",
		 o->perf, o->profile, bs, o->write ? "read" : "write",
		 o->queues * o->depth, o->duration);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "\"mode\":\"io\""))
			continue;
		p = strstr(line, "\"mpps\":");
		if (p)
			*mpps = strtod(p + 7, NULL);
		p = strstr(line, "\"cpu_mpps\":");
		if (p)
			*cpu_mpps = strtod(p + 11, NULL);
		ok = p != NULL;
	}
	return pclose(f) == 0 && ok ? 0 : -EIO;
}

/*
 * memcpy over the same footprint, the software device's baseline: a
 * namespace-sized region (in transparent huge pages and written first, as
 * the RAM namespace with --prefill) and one @bs buffer per I/O slot; each
 * copy takes a random block of the region to the next slot's buffer
 * (--write: the other way), for the run's duration on this thread.  *@per_core:
 * copies per second of this thread's CPU.  The NVMe figure's floor: every
 * 4 KiB or 128 KiB I/O moves its data once between the same kinds of
 * buffers (a read from the namespace into a slot's buffer).
 */
static int memcpy_peer(const struct bench_opts *o, u32 bs, double *per_core)
{
	size_t nslots = (size_t)o->queues * o->depth,
	       region = (size_t)o->ns_mib << 20;
	u64 blocks = region / bs, rng = 0x9e3779b97f4a7c15ull, n = 0;
	double c0, t_end;
	u8 *ns, *bufs;
	size_t i;

	if (!blocks)
		return -EINVAL;
	ns = mmap(NULL, region, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ns == MAP_FAILED)
		return -ENOMEM;
	madvise(ns, region, MADV_HUGEPAGE);
	bufs = aligned_alloc(4096, nslots * bs);
	if (!bufs) {
		munmap(ns, region);
		return -ENOMEM;
	}
	for (i = 0; i < region; i += 8)
		*(u64 *)(ns + i) = i * 0x2545f4914f6cdd1dull;
	memset(bufs, 0x5a, nslots * bs);
	t_end = now_s(CLOCK_MONOTONIC) + o->duration;
	c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	do {
		for (i = 0; i < 64; i++, n++) {
			u8 *blk = ns + (xrand(&rng) % blocks) * bs;
			u8 *buf = bufs + (n % nslots) * bs;

			if (o->write)
				memcpy(blk, buf, bs);
			else
				memcpy(buf, blk, bs);
		}
		/* the compiler may not drop what nobody reads */
		__asm__ volatile("" : : "r"(bufs), "r"(ns) : "memory");
	} while (now_s(CLOCK_MONOTONIC) < t_end);
	*per_core = (double)n / (now_s(CLOCK_THREAD_CPUTIME_ID) - c0);
	free(bufs);
	munmap(ns, region);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-nvmet [-p mlx5|rxe|siw] [-q queues] "
		   "[-d depth] [-D seconds] [--write] [--json]\n"
		   "                   [--perf PATH | --no-perf] [--poll] "
		   "[--poll-target] [--poll-host]\n"
		   "                   [--poll-groups N] [--poll-busy] "
		   "[--one-thread]\n"
		   "                   [--size 4096|131072] [--ns-mib MIB] "
		   "[--prefill] [--queue-regions]\n"
		   "                   [--host-registered] [--ios N]\n");
}

/*
 * A decimal option in [@min, @max] into *@out: false for anything else
 * (empty, trailing bytes, a sign, out of range: nothing is truncated).
 */
static bool parse_uint(const char *arg, unsigned long min, unsigned long max,
		       unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!*arg || *arg == '-' || *arg == '+')
		return false;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*end || errno || v < min || v > max)
		return false;
	*out = (unsigned int)v;
	return true;
}

static int parse(int argc, char **argv, struct bench_opts *o)
{
	static const struct option lo[] = {
		{ "profile", 1, NULL, 'p' },
		{ "queues", 1, NULL, 'q' },
		{ "depth", 1, NULL, 'd' },
		{ "duration", 1, NULL, 'D' },
		{ "write", 0, NULL, 'w' },
		{ "json", 0, NULL, 'j' },
		{ "perf", 1, NULL, 'P' },
		{ "no-perf", 0, NULL, 'N' },
		{ "help", 0, NULL, 'h' },
		{ "poll", 0, NULL, 'o' },
		{ "poll-groups", 1, NULL, 'g' },
		{ "poll-busy", 0, NULL, 'b' },
		{ "size", 1, NULL, 's' },
		{ "poll-target", 0, NULL, 't' },
		{ "poll-host", 0, NULL, 'H' },
		{ "one-thread", 0, NULL, '1' },
		{ "ns-mib", 1, NULL, 'm' },
		{ "prefill", 0, NULL, 'f' },
		{ "queue-regions", 0, NULL, 'r' },
		{ "host-registered", 0, NULL, 'R' },
		{ "ios", 1, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int ios;
	bool poll = false;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "p:q:d:D:h", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->profile = optarg;
			break;
		case 'q':
			if (!parse_uint(optarg, 1, 16, &o->queues))
				goto bad;
			break;
		case 'd':
			if (!parse_uint(optarg, 1, 128, &o->depth))
				goto bad;
			break;
		case 'D':
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0) || o->duration > 600)
				goto bad;
			o->duration_set = true;
			break;
		case 'n':
			if (!parse_uint(optarg, 1, UINT_MAX, &ios))
				goto bad;
			o->max_ios = ios;
			break;
		case 'w':
			o->write = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'P':
			o->perf = optarg;
			break;
		case 'N':
			o->no_perf = true;
			break;
		case 'o':
			poll = true;
			o->host_poll = true;
			break;
		case 't':
			poll = true;
			break;
		case 'H':
			o->host_poll = true;
			break;
		case '1':
			o->one_thread = true;
			break;
		case 'g':
			if (!parse_uint(optarg, 1, 64, &o->poll_groups))
				goto bad;
			break;
		case 'b':
			o->poll_busy = true;
			break;
		case 'm':
			if (!parse_uint(optarg, 1, 4096, &o->ns_mib))
				goto bad;
			break;
		case 'f':
			o->prefill = true;
			break;
		case 'r':
			o->queue_regions = true;
			break;
		case 'R':
			o->host_registered = true;
			break;
		case 's':
			if (!parse_uint(optarg, 4096, 131072, &o->size) ||
			    (o->size != 4096 && o->size != 131072))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc)
		goto bad;
	if (o->one_thread) {
		/* a group per queue: each polls its host queue too */
		if (o->poll_groups && o->poll_groups != o->queues)
			goto bad;
		poll = o->host_poll = true;
	}
	if ((poll || o->poll_busy) && !o->poll_groups)
		o->poll_groups = o->queues;
	return 0;
bad:
	fprintf(stderr, "bench-nvmet: bad option value (see --help)\n");
	return -1;
}

int main(int argc, char **argv)
{
	static const u32 sizes[] = { 4096, 131072 };
	struct bench_opts o = { .profile = "rxe",
				.queues = 1,
				.depth = 32,
				.duration = 1.0,
				.ns_mib = 64 };
	struct sockaddr_in a0 = { .sin_family = AF_INET };
	struct sockaddr_in a1 = { .sin_family = AF_INET };
	struct sockaddr_in dst;
	struct nvmet_target_opts to;
	struct nvmet_target_stats tst;
	struct soft_profile p;
	struct soft_fabric *fab;
	struct ib_device *hdev, *tdev;
	struct nvmet_target *t;
	struct nvmeh_opts ho;
	struct nvmeh_ctrl *c;
	struct bench_hook hooks[16];
	char self[PATH_MAX], perf[PATH_MAX + 32];
	const char *bufd;
	unsigned int i;
	int ret = 0;

	if (parse(argc, argv, &o))
		return 2;
	if (!o.perf && !o.no_perf) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n > 0) {
			self[n] = 0;
			snprintf(perf, sizeof(perf), "%s/../tools/rdmarw-perf",
				 dirname(self));
			o.perf = perf;
		} else {
			o.no_perf = true;
		}
	}
	if (soft_profile_get(o.profile, &p)) {
		fprintf(stderr, "bench-nvmet: unknown profile %s\n", o.profile);
		return 2;
	}
	inet_pton(AF_INET, "10.0.0.1", &a0.sin_addr);
	inet_pton(AF_INET, "10.0.0.2", &a1.sin_addr);
	dst = a1;
	dst.sin_port = htons(4420);
	fab = soft_fabric_create();
	hdev = soft_device_create(fab, "bnh_%d", &p);
	tdev = soft_device_create(fab, "bnt_%d", &p);
	if (IS_ERR(fab) || IS_ERR(hdev) || IS_ERR(tdev) ||
	    soft_device_add_addr(hdev, (void *)&a0) ||
	    soft_device_add_addr(tdev, (void *)&a1)) {
		fprintf(stderr, "bench-nvmet: software devices\n");
		return 1;
	}
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = 4420;
	to.ns[0].type = NVMET_BACKEND_RAM;
	to.ns[0].size = (u64)o.ns_mib << 20;
	to.hosts = (const char *const[]){ NVMEH_DEFAULT_HOSTNQN };
	to.nr_hosts = 1;
	to.poll_groups = o.poll_groups;
	to.poll_busy = o.poll_busy;
	bufd = getenv("RDMARW_NVMET_BENCH_FILE_BUFFERED");
	to.ns[0].buffered = bufd && !strcmp(bufd, "1");
	t = nvmet_target_create(&to);
	if (IS_ERR_OR_NULL(t)) {
		fprintf(stderr, "bench-nvmet: target: %ld\n", PTR_ERR(t));
		return 1;
	}
	nvmeh_opts_init(&ho, (void *)&a0, (void *)&dst, NVMET_DEFAULT_SUBNQN);
	ho.nr_io_queues = o.queues;
	ho.queue_size = o.depth < 2 ? 2 : o.depth;
	ho.poll = o.host_poll;
	ho.poll_external = o.one_thread;
	c = nvmeh_ctrl_create(&ho);
	if (IS_ERR(c)) {
		fprintf(stderr, "bench-nvmet: host: %ld\n", PTR_ERR(c));
		nvmet_target_destroy(t);
		return 1;
	}
	if (o.prefill && prefill(c)) {
		fprintf(stderr, "bench-nvmet: writing the namespace failed\n");
		ret = 1;
		goto out_host;
	}
	if (o.one_thread && bench_hooks(t, &o, hooks, c)) {
		fprintf(stderr, "bench-nvmet: poll group hooks\n");
		ret = 1;
		goto out;
	}
	if (!o.json)
		printf("%-4s %-5s %7s %3s %3s %11s %10s %12s %11s %12s %7s "
		       "%7s %12s %7s\n",
		       "prof", "op", "bs", "q", "qd", "nvme_iops", "nvme_mib",
		       "nvme_iops/c", "raw_iops", "raw_iops/c", "ratio",
		       "ratio/c", "memcpy/c", "r_mc/c");
	for (i = 0; i < 2; i++) {
		struct bench_result r;
		double iops, percore, mpps = 0, cpu_mpps = 0, mc_per_core = 0;
		bool raw, mc;

		if (o.size && sizes[i] != o.size)
			continue;
		if (bench_case(c, &o, sizes[i], &r) || r.errors) {
			fprintf(stderr, "bench-nvmet: %u errors at %u bytes\n",
				r.errors, sizes[i]);
			ret = 1;
			break;
		}
		iops = (double)r.ios / r.secs;
		percore = r.cpu > 0 ? (double)r.ios / r.cpu : 0;
		raw = !o.no_perf && !perf_raw(&o, sizes[i], &mpps, &cpu_mpps);
		mc = !o.no_perf && !memcpy_peer(&o, sizes[i], &mc_per_core);
		if (o.json) {
			printf("{\"profile\":\"%s\",\"op\":\"%s\",\"bytes\":%u,"
			       "\"queues\":%u,\"depth\":%u,"
			       "\"poll_groups\":%u,\"host_poll\":%s,"
			       "\"one_thread\":%s,"
			       "\"ns_mib\":%u,\"prefill\":%s,"
			       "\"queue_regions\":%s,"
			       "\"host_registered\":%s,"
			       "\"ios\":%llu,"
			       "\"secs\":%.6f,\"cpu_secs\":%.6f,"
			       "\"nvme_iops\":%.1f,\"nvme_mib\":%.2f,"
			       "\"nvme_iops_per_core\":%.1f",
			       o.profile, o.write ? "write" : "read", sizes[i],
			       o.queues, o.depth, o.poll_groups,
			       o.host_poll ? "true" : "false",
			       o.one_thread ? "true" : "false", o.ns_mib,
			       o.prefill ? "true" : "false",
			       o.queue_regions ? "true" : "false",
			       o.host_registered ? "true" : "false",
			       (unsigned long long)r.ios, r.secs, r.cpu, iops,
			       iops * sizes[i] / 1048576.0, percore);
			if (raw)
				printf(",\"raw_iops\":%.1f,"
				       "\"raw_iops_per_core\":%.1f,"
				       "\"ratio\":%.4f,\"ratio_per_core\":%.4f",
				       mpps * 1e6, cpu_mpps * 1e6,
				       mpps > 0 ? iops / (mpps * 1e6) : 0,
				       cpu_mpps > 0 ?
					       percore / (cpu_mpps * 1e6) :
					       0);
			if (mc)
				printf(",\"memcpy_per_core\":%.1f,"
				       "\"ratio_memcpy_per_core\":%.4f",
				       mc_per_core,
				       mc_per_core > 0 ? percore / mc_per_core :
							 0);
			printf("}\n");
		} else {
			printf("%-4s %-5s %7u %3u %3u %11.0f %10.1f %12.0f",
			       o.profile, o.write ? "write" : "read", sizes[i],
			       o.queues, o.depth, iops,
			       iops * sizes[i] / 1048576.0, percore);
			if (raw)
				printf(" %11.0f %12.0f %7.4f %7.4f", mpps * 1e6,
				       cpu_mpps * 1e6, iops / (mpps * 1e6),
				       percore / (cpu_mpps * 1e6));
			else
				printf(" %11s %12s %7s %7s", "-", "-", "-",
				       "-");
			if (mc)
				printf(" %12.0f %7.4f\n", mc_per_core,
				       mc_per_core > 0 ? percore / mc_per_core :
							 0);
			else
				printf(" %12s %7s\n", "-", "-");
		}
		fflush(stdout);
	}
out:
	/* the groups call into the host no more before it goes */
	if (o.one_thread && bench_hooks(t, &o, hooks, NULL))
		ret = 1;
out_host:
	nvmeh_ctrl_destroy(c);
	if (!nvmet_target_get_stats(t, &tst) && tst.data_waits)
		fprintf(stderr,
			"bench-nvmet: %llu commands waited for data buffers\n",
			(unsigned long long)tst.data_waits);
	if (o.poll_groups && !nvmet_target_get_stats(t, &tst))
		fprintf(stderr,
			"bench-nvmet: %u poll groups slept %llu times, woken "
			"by a completion %llu times\n",
			o.poll_groups, (unsigned long long)tst.poll_sleeps,
			(unsigned long long)tst.poll_wakeups);
	nvmet_target_destroy(t);
	if (soft_device_destroy(hdev) || soft_device_destroy(tdev) ||
	    soft_fabric_destroy(fab))
		ret = 1;
	return ret;
}

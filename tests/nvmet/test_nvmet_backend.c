// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The backends' submit-with-completion (nvme/target/backend.c, io-cmd.c):
 *
 * - a backend that completes later: the tests' delay holds every Read,
 *   Write and Flush of namespace 1 until the test lets it go; the command
 *   has not completed while it is held, completes with success once
 *   released (on the delay's thread, not the capsule's), and the data
 *   read back is what was written;
 * - errors from the backend become the NVMe status: -EIO a Write Fault
 *   or an Unrecovered Read Error, -ENOSPC Capacity Exceeded (DNR), on a
 *   Read, a Write and a Flush;
 * - a slow namespace stalls no other: while namespace 1's commands are
 *   held (by event: the delay counts them), namespace 2's complete on the
 *   other queue and on the same one, and namespace 1's complete only when
 *   released; also with namespace 2 a file through io_uring;
 * - io_uring (file namespaces): random reads and writes on two queues,
 *   every byte checked against the host's shadow and then the file's own
 *   bytes (pread) against it too, on tmpfs (/dev/shm) and on the
 *   worktree's file system (the test's directory under build/), with
 *   O_DIRECT (every Read and Write went O_DIRECT, the in-capsule ones
 *   through a bounce slot: counted; a Flush at the end succeeds: mixing
 *   O_DIRECT and the page cache on one file made it fail with -EIO) and
 *   buffered (none went O_DIRECT);
 *   the fallback ($RDMARW_NVMET_NO_URING=1, as io_uring_queue_init()
 *   failing) and the synchronous engine give the same bytes;
 * - no heap allocation per I/O through io_uring (the allocation counter
 *   of test_nvmet_pool.c, after its warm-up);
 * - a ring per submitting thread (issue 30): two queues write and read a
 *   file namespace (a shadow, the file's bytes, LBA-tagged blocks read
 *   back on the other queue) and the namespace has one ring per queue
 *   thread (one with a poll group); bounded by $RDMARW_NVMET_URING_RINGS,
 *   the other threads share the namespace's ring with the same bytes;
 *   the host gone and back (threads exit, new ones submit) and the
 *   namespace removed by a reload: every ring closed; both namespaces
 *   files through io_uring, namespace 1's I/O held: namespace 2's go by,
 *   namespace 1's backend saw one thread (the delay's); a completion that
 *   submits to another namespace (the reaper makes its ring); ring
 *   creation failing for real (no descriptor left: EMFILE): the threads
 *   share the namespace's ring, same bytes (skipped under valgrind, which
 *   keeps the descriptor limit);
 * - the reaper (whose bounded sleep is an hour here: a completion left to
 *   it is lost for these tests): a submitter that reaps with the ring's
 *   eventfd off and stops, its I/O still in flight, every I/O completes;
 *   a thread that found every slot taken gets a ring of its own once a
 *   slot is given back.
 */
#include "config.h"
#include "nv_io.h"
#include "nvmet_int.h"
#include "nv_allocs.h"
#include "nv_rq.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>

/*
 * The target with namespaces @ns (RAM ones get 4 MiB), the host with two
 * queues and a command timeout longer than any hold.
 */
/* The target's poll groups for the next nv_start() (0: CQ threads). */
static unsigned int nv_poll_groups;

static void nv_start(struct nv_env *e, const struct nvmet_ns_opts *ns,
		     unsigned int nr_ns)
{
	static struct nvmet_target_opts to;
	unsigned int i;

	nvmet_target_opts_init(&to);
	to.poll_groups = nv_poll_groups;
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	for (i = 0; i < nr_ns; i++) {
		to.ns[i] = ns[i];
		if (to.ns[i].type == NVMET_BACKEND_RAM && !to.ns[i].size)
			to.ns[i].size = 4u << 20;
	}
	to.hosts = nv_hosts;
	to.nr_hosts = 1;
	nv_env_init(e, "mlx5",
		    &(struct nv_cfg){ .nr_io_queues = 2,
				      .queue_size = 16,
				      .io_timeout_ms = 120000,
				      .topts = &to });
}

/* A write and a read of namespace 1 held, each completing only when let go. */
static void test_later_done(void **state)
{
	static struct nv_env e;
	static u8 wbuf[4096], rbuf[4096];
	struct nvmet_ns_opts ns[1] = { { .type = NVMET_BACKEND_RAM,
					 .test_delay_ms = NV_HELD_MS } };
	struct nvmet_ns *n;
	struct nv_rq r;
	unsigned int i;

	(void)state;
	nv_start(&e, ns, 1);
	n = nv_ns(&e, 1);
	for (i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (u8)(i * 7 + 3);

	nv_rq_init(&r, nvme_cmd_write, 1, 8, 8, wbuf, 512);
	nv_submit(&e, 1, &r);
	nv_wait_for(nvmet_ns_delay_held(n) == 1);
	assert_false(nv_rq_is_done(&r));
	nvmet_ns_delay_release(n, 1);
	nv_wait_for(nv_rq_is_done(&r));
	assert_int_equal(r.rq.error, 0);
	assert_int_equal(r.rq.status, 0);

	memset(rbuf, 0xee, sizeof(rbuf));
	nv_rq_init(&r, nvme_cmd_read, 1, 8, 8, rbuf, 512);
	nv_submit(&e, 2, &r);
	nv_wait_for(nvmet_ns_delay_held(n) == 1);
	assert_false(nv_rq_is_done(&r));
	nvmet_ns_delay_release(n, 1);
	nv_wait_for(nv_rq_is_done(&r));
	assert_int_equal(r.rq.error, 0);
	assert_int_equal(r.rq.status, 0);
	assert_memory_equal(rbuf, wbuf, sizeof(wbuf));

	nv_rq_init(&r, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	nvmet_ns_delay_release(n, 1);
	assert_int_equal(nv_exec(&e, 1, &r), 0);
	assert_int_equal(nvmet_ns_delay_held(n), 0);
	nv_env_fini(&e);
}

/*
 * A command its backend completes after the host has gone: the host
 * ends its request (aborted) without waiting for it, the target keeps
 * the command's queue (its controller too) while the backend holds the
 * command and frees both once it ends, on the delay's thread (ASan and
 * TSan watch that end against the release's free of the queue).
 */
static void test_done_after_host_gone(void **state)
{
	static struct nv_env e;
	static u8 buf[4096];
	struct nvmet_ns_opts ns[1] = { { .type = NVMET_BACKEND_RAM,
					 .test_delay_ms = NV_HELD_MS } };
	struct nvmet_ns *n;
	struct nv_rq r;

	(void)state;
	nv_start(&e, ns, 1);
	n = nv_ns(&e, 1);
	memset(buf, 0x3c, sizeof(buf));
	nv_rq_init(&r, nvme_cmd_write, 1, 8, 8, buf, 512);
	nv_submit(&e, 1, &r);
	nv_wait_for(nvmet_ns_delay_held(n) == 1);
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	assert_true(nv_rq_is_done(&r));
	assert_int_equal(r.rq.error, -ECONNABORTED);
	/* the admin queue and the idle I/O queue go; the held one stays */
	nv_wait_target(&e, 1, 1);
	nvmet_ns_delay_release(n, 1);
	nv_wait_target(&e, 0, 0);
	nv_env_fini(&e);
}

/* -EIO and -ENOSPC from the backend, as the NVMe statuses. */
static void test_errors(void **state)
{
	static struct nv_env e;
	static u8 buf[4096];
	struct nvmet_ns_opts ns[2] = {
		{ .type = NVMET_BACKEND_RAM, .test_errno = -EIO },
		{ .type = NVMET_BACKEND_RAM, .test_errno = -ENOSPC },
	};
	struct nv_rq r;

	(void)state;
	nv_start(&e, ns, 2);
	nv_rq_init(&r, nvme_cmd_write, 1, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 1, &r), NVME_SC_WRITE_FAULT);
	nv_rq_init(&r, nvme_cmd_read, 1, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 1, &r), NVME_SC_READ_ERROR);
	nv_rq_init(&r, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	assert_int_equal(nv_exec(&e, 2, &r), NVME_SC_WRITE_FAULT);
	nv_rq_init(&r, nvme_cmd_write, 2, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 2, &r),
			 NVME_SC_CAP_EXCEEDED | NVME_SC_DNR);
	nv_env_fini(&e);
}

/*
 * A build without liburing (RDMARW_HAVE_URING unset) has no ring: the
 * cases that need one skip, the others run on the synchronous engine.
 */
#ifdef RDMARW_HAVE_URING
#define NV_HAVE_URING 1
#define nv_uring_direct(n) nvmet_uring_direct(n)
#define nv_uring_counts(n, out) nvmet_uring_counts(n, out)
#define nv_uring_stats(n, st) nvmet_uring_stats(n, st)
#else
#define NV_HAVE_URING 0
#define nv_uring_direct(n) ((void)(n), false)
#define nv_uring_counts(n, out) memset(out, 0, 3 * sizeof(u64))
#define nv_uring_stats(n, st) memset(st, 0, sizeof(*(st)))
#endif

#define NV_SLOW 4

/*
 * Namespace 1 holds NV_SLOW writes (queue 1); namespace 2's writes and
 * reads on queue 2 and on queue 1 complete meanwhile, byte for byte.
 */
static void slow_case2(const struct nvmet_ns_opts *ns1,
		       const struct nvmet_ns_opts *ns2)
{
	static struct nv_env e;
	static struct nv_rq slow[NV_SLOW];
	static u8 sbuf[NV_SLOW][4096], wbuf[4096], rbuf[4096];
	struct nvmet_ns_opts ns[2] = { *ns1, *ns2 };
	struct nvmet_uring_stats st;
	struct nvmet_ns *n;
	struct nv_rq r;
	unsigned int i, q;

	nv_start(&e, ns, 2);
	n = nv_ns(&e, 1);
	for (i = 0; i < NV_SLOW; i++) {
		memset(sbuf[i], (int)i + 1, sizeof(sbuf[i]));
		nv_rq_init(&slow[i], nvme_cmd_write, 1, i * 8, 8, sbuf[i], 512);
		nv_submit(&e, 1, &slow[i]);
	}
	nv_wait_for(nvmet_ns_delay_held(n) == NV_SLOW);
	for (q = 2; q >= 1; q--) {
		for (i = 0; i < sizeof(wbuf); i++)
			wbuf[i] = (u8)(i + q * 11);
		nv_rq_init(&r, nvme_cmd_write, 2, q * 8, 8, wbuf, 512);
		assert_int_equal(nv_exec(&e, q, &r), 0);
		nv_rq_init(&r, nvme_cmd_read, 2, q * 8, 8, rbuf, 512);
		assert_int_equal(nv_exec(&e, q, &r), 0);
		assert_memory_equal(rbuf, wbuf, sizeof(wbuf));
	}
	/* namespace 2 went by; namespace 1's are all still held */
	assert_int_equal(nvmet_ns_delay_held(n), NV_SLOW);
	for (i = 0; i < NV_SLOW; i++)
		assert_false(nv_rq_is_done(&slow[i]));
	nvmet_ns_delay_release(n, NV_SLOW);
	for (i = 0; i < NV_SLOW; i++) {
		nv_wait_for(nv_rq_is_done(&slow[i]));
		assert_int_equal(slow[i].rq.error, 0);
		assert_int_equal(slow[i].rq.status, 0);
	}
	for (i = 0; i < NV_SLOW; i++) {
		nv_rq_init(&r, nvme_cmd_read, 1, i * 8, 8, rbuf, 512);
		nvmet_ns_delay_release(n, 1);
		assert_int_equal(nv_exec(&e, 2, &r), 0);
		assert_memory_equal(rbuf, sbuf[i], sizeof(rbuf));
	}
	/*
	 * Through io_uring: namespace 1's backend saw only the delay's
	 * thread (one ring), namespace 2's both queues' threads (two).
	 */
	if (n->uring) {
		nv_uring_stats(n, &st);
		assert_int_equal(st.rings, 1);
		assert_int_equal(st.fallbacks, 0);
	}
	if (nv_ns(&e, 2)->uring) {
		nv_uring_stats(nv_ns(&e, 2), &st);
		assert_int_equal(st.rings, 2);
		assert_int_equal(st.fallbacks, 0);
	}
	nv_env_fini(&e);
}

static void slow_case(const struct nvmet_ns_opts *ns2)
{
	struct nvmet_ns_opts ns1 = { .type = NVMET_BACKEND_RAM,
				     .test_delay_ms = NV_HELD_MS };

	slow_case2(&ns1, ns2);
}

static void test_slow_ns_ram(void **state)
{
	struct nvmet_ns_opts ns2 = { .type = NVMET_BACKEND_RAM };

	(void)state;
	slow_case(&ns2);
}

/* ---- io_uring ---------------------------------------------------------- */

/* A fresh file under @dir for namespace 1 (removed by nv_env_fini()). */
static void nv_file(struct nv_env *e, const char *dir, struct nvmet_ns_opts *o)
{
	int fd;

	snprintf(e->path, sizeof(e->path), "%s/nvmet-backend-XXXXXX", dir);
	fd = mkstemp(e->path);
	if (fd < 0)
		fail_msg("mkstemp %s: %s", e->path, strerror(errno));
	close(fd);
	o->type = NVMET_BACKEND_FILE;
	o->path = e->path;
	o->size = 4u << 20;
}

/*
 * Two fresh files under "." for namespaces 1 and 2 of @ns (zeroed first),
 * their names kept in @path; nv_files_unlink() removes them.
 */
static void nv_two_files(struct nvmet_ns_opts ns[2], char path[2][256])
{
	struct nv_env tmp;
	unsigned int i;

	memset(ns, 0, 2 * sizeof(*ns));
	for (i = 0; i < 2; i++) {
		nv_file(&tmp, ".", &ns[i]);
		snprintf(path[i], sizeof(path[i]), "%s", tmp.path);
		ns[i].path = path[i];
	}
}

static void nv_files_unlink(char path[2][256])
{
	unlink(path[0]);
	unlink(path[1]);
}

/* The file's bytes, read directly, against the host's shadow. */
static void nv_file_matches(const char *path, const u8 *shadow, u64 size)
{
	u8 *buf = malloc(size);
	int fd = open(path, O_RDONLY);

	assert_non_null(buf);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, size, 0), (ssize_t)size);
	close(fd);
	assert_memory_equal(buf, shadow, size);
	free(buf);
}

enum nv_mode {
	NV_DIRECT, /* io_uring, O_DIRECT where the file system takes it */
	NV_BUFFERED, /* io_uring, buffered */
	NV_FALLBACK, /* io_uring unavailable */
	NV_SYNC, /* the synchronous engine, asked */
};

static void uring_case(const char *dir, enum nv_mode mode, bool want_direct)
{
	static struct nv_env e;
	static struct nvmet_ns_opts ns[1];
	struct nvmet_uring_stats st;
	struct nvmet_ns *n;
	static char path[256];
	struct nv_run run;
	struct nv_rq r;
	u64 n_io[3];

	if (!NV_HAVE_URING && (mode == NV_DIRECT || mode == NV_BUFFERED))
		skip();
	memset(ns, 0, sizeof(ns));
	memset(&e, 0, sizeof(e));
	nv_file(&e, dir, &ns[0]);
	/* nv_env_init() clears e.path: the options point elsewhere */
	snprintf(path, sizeof(path), "%s", e.path);
	ns[0].path = path;
	ns[0].buffered = mode == NV_BUFFERED;
	ns[0].io_engine =
		mode == NV_SYNC ? NVMET_IO_ENGINE_SYNC : NVMET_IO_ENGINE_AUTO;
	if (mode == NV_FALLBACK)
		setenv("RDMARW_NVMET_NO_URING", "1", 1);
	nv_start(&e, ns, 1);
	unsetenv("RDMARW_NVMET_NO_URING");
	snprintf(e.path, sizeof(e.path), "%s", path);
	n = nv_ns(&e, 1);
	if (mode == NV_FALLBACK || mode == NV_SYNC) {
		assert_null(n->uring);
	} else {
		assert_non_null(n->uring);
		if (mode == NV_BUFFERED)
			assert_false(nv_uring_direct(n));
		else if (want_direct)
			assert_true(nv_uring_direct(n));
	}
	nv_io_run(&run, &e, 2, 8, 24, 77);
	if (run.failed)
		fail_msg("%d failures; first: %s", run.failed, run.why);
	assert_true(run.reads > 0);
	assert_true(run.writes > 0);
	nv_io_verify(&run);
	nv_rq_init(&r, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	assert_int_equal(nv_exec(&e, 1, &r), 0);
	nv_file_matches(path, run.shadow, e.ns_size);
	if (n->uring) {
		nv_uring_counts(n, n_io);
		nv_uring_stats(n, &st);
		if (nv_uring_direct(n)) {
			/* in-capsule writes bounce, pool buffers go as is */
			assert_true(n_io[0] > 0);
			assert_true(n_io[1] > 0);
			assert_int_equal(n_io[2], 0);
			assert_int_equal(st.inline_ios, 0);
		} else {
			/* through the ring or inline (cached, tmpfs) */
			assert_int_equal(n_io[0] + n_io[1], 0);
			assert_true(n_io[2] + st.inline_ios > 0);
		}
	}
	nv_io_free(&run);
	nv_env_fini(&e);
}

static void test_uring_tmpfs_direct(void **state)
{
	(void)state;
	uring_case("/dev/shm", NV_DIRECT, false);
}

static void test_uring_tmpfs_buffered(void **state)
{
	(void)state;
	uring_case("/dev/shm", NV_BUFFERED, false);
}

static void test_uring_disk_direct(void **state)
{
	(void)state;
	uring_case(".", NV_DIRECT, true);
}

static void test_uring_disk_buffered(void **state)
{
	(void)state;
	uring_case(".", NV_BUFFERED, false);
}

static void test_uring_fallback(void **state)
{
	(void)state;
	uring_case(".", NV_FALLBACK, false);
}

static void test_sync_engine(void **state)
{
	(void)state;
	uring_case("/dev/shm", NV_SYNC, false);
}

/* Namespace 2 a file through io_uring while namespace 1 holds its I/O. */
#define NV_BURST 8

/* NV_BURST commands of @nlb blocks at once on queue 1, waited for. */
static void nv_burst(struct nv_env *e, u8 opcode, u32 nlb, u8 *buf)
{
	static struct nv_rq r[NV_BURST];
	unsigned int i;

	for (i = 0; i < NV_BURST; i++) {
		nv_rq_init(&r[i], opcode, 1, (u64)i * nlb, nlb,
			   buf + (size_t)i * nlb * 512, 512);
		nv_submit(e, 1, &r[i]);
	}
	for (i = 0; i < NV_BURST; i++) {
		nv_wait_for(nv_rq_is_done(&r[i]));
		assert_int_equal(r[i].rq.error, 0);
		assert_int_equal(r[i].rq.status, 0);
	}
}

static void nv_bursts(struct nv_env *e, u8 *buf)
{
	nv_burst(e, nvme_cmd_write, 8, buf);
	nv_burst(e, nvme_cmd_read, 8, buf);
	nv_burst(e, nvme_cmd_write, 256, buf);
	nv_burst(e, nvme_cmd_read, 256, buf);
	nv_burst(e, nvme_cmd_write, 1, buf);
	nv_burst(e, nvme_cmd_read, 1, buf);
}

/*
 * No heap allocation per I/O through io_uring (O_DIRECT and buffered:
 * 4 KiB and 128 KiB keyed and in-capsule, 512 B unaligned, Flush), once
 * warmed up as test_nvmet_pool does.
 */
static void no_alloc_case(bool buffered)
{
	static struct nv_env e;
	static struct nvmet_ns_opts ns[1];
	static char path[256];
	unsigned long before, after;
	struct nv_rq r;
	u8 *buf;
	int i;

	if (!nv_counting() || !NV_HAVE_URING)
		skip();
	memset(ns, 0, sizeof(ns));
	nv_file(&e, ".", &ns[0]);
	ns[0].buffered = buffered;
	snprintf(path, sizeof(path), "%s", e.path);
	ns[0].path = path;
	nv_start(&e, ns, 1);
	snprintf(e.path, sizeof(e.path), "%s", path);
	assert_non_null(nv_ns(&e, 1)->uring);
	buf = aligned_alloc(4096, NV_BURST * 128 * 1024);
	assert_non_null(buf);
	memset(buf, 0x3c, NV_BURST * 128 * 1024);
	for (i = 0; i < 4; i++)
		nv_bursts(&e, buf);
	before = nv_allocs_now();
	nv_bursts(&e, buf);
	for (i = 0; i < 16; i++) {
		nv_rq_init(&r, i & 1 ? nvme_cmd_read : nvme_cmd_write, 1,
			   (u64)i * 8, 8, buf, 512);
		assert_int_equal(nv_exec(&e, 1, &r), 0);
	}
	nv_rq_init(&r, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	assert_int_equal(nv_exec(&e, 1, &r), 0);
	after = nv_allocs_now();
	assert_int_equal(after - before, 0);
	free(buf);
	nv_env_fini(&e);
}

static void test_uring_no_alloc_direct(void **state)
{
	(void)state;
	no_alloc_case(false);
}

static void test_uring_no_alloc_buffered(void **state)
{
	(void)state;
	no_alloc_case(true);
}

static void test_slow_ns_uring(void **state)
{
	static char path[256];
	struct nvmet_ns_opts ns2 = { 0 };
	struct nv_env tmp;

	(void)state;
	nv_file(&tmp, ".", &ns2);
	snprintf(path, sizeof(path), "%s", tmp.path);
	ns2.path = path;
	slow_case(&ns2);
	unlink(path);
}

/* ---- the plug: one submission per batch ------------------------------- */

#define NV_PLUG_IOS 8

/* The test thread's plug: ended by the teardown when a check failed in it. */
static struct nvmet_plug nv_plug;

static int nv_plug_teardown(void **state)
{
	nvmet_plug_finish(&nv_plug); /* nothing unless it is still on */
	return nv_teardown(state);
}

/* A backend I/O submitted by the test itself, its end watched. */
struct nv_bio {
	struct nvmet_backend_io io;
	int err; /* 1 until done */
};

static void nv_bio_done(struct nvmet_backend_io *io, int err)
{
	struct nv_bio *b = container_of(io, struct nv_bio, io);

	__atomic_store_n(&b->err, err, __ATOMIC_RELEASE);
}

static int nv_bio_err(struct nv_bio *b)
{
	return __atomic_load_n(&b->err, __ATOMIC_ACQUIRE);
}

static void nv_bio_submit(struct nvmet_ns *ns, struct nv_bio *b,
			  enum nvmet_io_op op, void *buf, u64 len, u64 off)
{
	memset(b, 0, sizeof(*b));
	b->err = 1;
	b->io.op = op;
	b->io.buf = buf;
	b->io.len = len;
	b->io.off = off;
	b->io.done = nv_bio_done;
	nvmet_ns_submit(ns, &b->io);
}

/* A file namespace through io_uring under @dir; its namespace. */
static struct nvmet_ns *nv_uring_start(struct nv_env *e, const char *dir,
				       bool buffered)
{
	static struct nvmet_ns_opts ns[1];
	static char path[256];

	memset(ns, 0, sizeof(ns));
	memset(e, 0, sizeof(*e));
	nv_file(e, dir, &ns[0]);
	snprintf(path, sizeof(path), "%s", e->path);
	ns[0].path = path;
	ns[0].buffered = buffered;
	nv_start(e, ns, 1);
	snprintf(e->path, sizeof(e->path), "%s", path);
	assert_non_null(nv_ns(e, 1)->uring);
	return nv_ns(e, 1);
}

/*
 * NV_PLUG_IOS writes, then as many reads, each set inside one plug of
 * this thread: nothing reaches the ring's kernel side before the plug
 * ends (no io_uring_submit(), nothing completes), then one submission
 * for the set (@full: the ring is smaller than the set, so it is
 * submitted early, as often as it fills, and still completes); the bytes
 * read back are those written.  Buffered, the reads find the writes'
 * pages cached: they go to the ring as the writes do (the kernel reads
 * them inside the batch's io_uring_enter()), or, with @pread
 * ($RDMARW_NVMET_URING_READ_RING=0), are done inline without the ring.
 */
static void plug_case(const char *dir, bool buffered, bool full, bool pread)
{
	static struct nv_env e;
	static struct nv_bio b[NV_PLUG_IOS];
	struct nvmet_uring_stats st0, st;
	struct nvmet_plug *plug = &nv_plug;
	enum nvmet_io_op op;
	struct nvmet_ns *ns;
	u8 *wbuf, *rbuf;
	unsigned int i, round;

	if (!NV_HAVE_URING)
		skip();
	if (full)
		setenv("RDMARW_NVMET_URING_SQ", "2", 1);
	if (pread)
		setenv("RDMARW_NVMET_URING_READ_RING", "0", 1);
	ns = nv_uring_start(&e, dir, buffered);
	unsetenv("RDMARW_NVMET_URING_SQ");
	unsetenv("RDMARW_NVMET_URING_READ_RING");
	wbuf = aligned_alloc(4096, NV_PLUG_IOS * 4096);
	rbuf = aligned_alloc(4096, NV_PLUG_IOS * 4096);
	assert_non_null(wbuf);
	assert_non_null(rbuf);
	for (i = 0; i < NV_PLUG_IOS * 4096; i++)
		wbuf[i] = (u8)(i * 13 + 5);
	memset(rbuf, 0xee, NV_PLUG_IOS * 4096);
	for (round = 0; round < 2; round++) { /* write, then read */
		op = round ? NVMET_IO_READ : NVMET_IO_WRITE;
		nv_uring_stats(ns, &st0);
		nvmet_plug_start(plug);
		for (i = 0; i < NV_PLUG_IOS; i++)
			nv_bio_submit(ns, &b[i], op,
				      (round ? rbuf : wbuf) + i * 4096, 4096,
				      (u64)i * 8192);
		nv_uring_stats(ns, &st);
		if (round && buffered && pread) { /* cached: inline */
			assert_int_equal(st.inline_ios - st0.inline_ios,
					 NV_PLUG_IOS);
			assert_int_equal(st.sqes - st0.sqes, 0);
			nvmet_plug_finish(plug);
			continue;
		}
		if (!full) {
			assert_int_equal(st.submits - st0.submits, 0);
			for (i = 0; i < NV_PLUG_IOS; i++)
				assert_int_equal(nv_bio_err(&b[i]), 1);
		}
		nvmet_plug_finish(plug);
		for (i = 0; i < NV_PLUG_IOS; i++) {
			nv_wait_for(nv_bio_err(&b[i]) != 1);
			assert_int_equal(nv_bio_err(&b[i]), 0);
		}
		nv_uring_stats(ns, &st);
		assert_int_equal(st.sqes - st0.sqes, NV_PLUG_IOS);
		assert_int_equal(st.unplugged - st0.unplugged, 0);
		assert_int_equal(st.batches - st0.batches, 1);
		if (full) {
			assert_true(st.full - st0.full >= NV_PLUG_IOS / 2 - 1);
			assert_int_equal(st.submits - st0.submits,
					 st.full - st0.full + 1);
		} else {
			assert_int_equal(st.full - st0.full, 0);
			assert_int_equal(st.submits - st0.submits, 1);
		}
	}
	assert_memory_equal(rbuf, wbuf, NV_PLUG_IOS * 4096);
	free(wbuf);
	free(rbuf);
	nv_env_fini(&e);
}

static void test_plug_disk_direct(void **state)
{
	(void)state;
	plug_case(".", false, false, false);
}

static void test_plug_disk_buffered(void **state)
{
	(void)state;
	plug_case(".", true, false, false);
}

static void test_plug_disk_buffered_pread(void **state)
{
	(void)state;
	plug_case(".", true, false, true);
}

static void test_plug_ring_full(void **state)
{
	(void)state;
	plug_case(".", false, true, false);
}

/*
 * Through the transport: bursts of commands on both queues, each burst's
 * last command one the target refuses (an LBA past the end): every good
 * one completes with its bytes, the bad one with LBA Out of Range, and
 * the ring was only ever handed SQEs at the end of a CQ thread's batch:
 * none submitted outside a plug, at most one submission per batch.
 */
static void transport_batch_case(const char *dir, unsigned int groups)
{
	static struct nv_env e;
	static struct nv_rq r[2][NV_BURST + 1];
	static u8 wbuf[2][NV_BURST][4096], rbuf[2][NV_BURST][4096];
	struct nvmet_uring_stats st;
	struct nvmet_ns *ns;
	unsigned int i, q, round;
	u8 opc;

	if (!NV_HAVE_URING)
		skip();
	nv_poll_groups = groups;
	ns = nv_uring_start(&e, dir, false);
	nv_poll_groups = 0;
	for (q = 0; q < 2; q++)
		for (i = 0; i < NV_BURST; i++)
			memset(wbuf[q][i], (int)(q * 16 + i + 1), 4096);
	for (round = 0; round < 2; round++) {
		opc = round ? nvme_cmd_read : nvme_cmd_write;
		for (q = 0; q < 2; q++) {
			for (i = 0; i < NV_BURST; i++)
				nv_rq_init(&r[q][i], opc, 1,
					   (u64)(q * NV_BURST + i) * 8, 8,
					   round ? rbuf[q][i] : wbuf[q][i],
					   512);
			nv_rq_init(&r[q][NV_BURST], opc, 1, e.ns_size / 512, 8,
				   rbuf[q][0], 512);
			for (i = 0; i <= NV_BURST; i++)
				nv_submit(&e, q + 1, &r[q][i]);
		}
		for (q = 0; q < 2; q++)
			for (i = 0; i <= NV_BURST; i++) {
				nv_wait_for(nv_rq_is_done(&r[q][i]));
				assert_int_equal(r[q][i].rq.error, 0);
				assert_int_equal(r[q][i].rq.status,
						 i < NV_BURST ?
							 0 :
							 NVME_SC_LBA_RANGE |
								 NVME_SC_DNR);
			}
	}
	for (q = 0; q < 2; q++)
		for (i = 0; i < NV_BURST; i++)
			assert_memory_equal(rbuf[q][i], wbuf[q][i], 4096);
	nv_uring_stats(ns, &st);
	/* tmpfs: inline, no ring; ext4 O_DIRECT: the ring */
	assert_int_equal(st.sqes + st.inline_ios, 4 * NV_BURST);
	assert_int_equal(st.unplugged, 0);
	assert_true(st.batches >= 1 || !st.sqes);
	assert_true(st.submits <= st.batches + st.full);
	nv_env_fini(&e);
}

static void test_batch_transport_tmpfs(void **state)
{
	(void)state;
	transport_batch_case("/dev/shm", 0);
}

static void test_batch_transport_disk(void **state)
{
	(void)state;
	transport_batch_case(".", 0);
}

/* The same with the I/O queues polled by a poll group (its turn a batch). */
static void test_batch_transport_polled(void **state)
{
	(void)state;
	transport_batch_case(".", 1);
}

/*
 * Buffered reads done inline where the data is cached (on tmpfs always,
 * Writes too; on ext4 with @pread: RWF_NOWAIT, $RDMARW_NVMET_URING_READ_RING
 * =0), through the ring where it is not (ext4, after the file's pages were
 * dropped): the same bytes either way.  On ext4 without @pread a cached
 * read (one per CQ thread's batch here) goes to the ring as well.
 */
static void inline_case(const char *dir, bool tmpfs, bool pread)
{
	static struct nv_env e;
	static struct nv_rq r[NV_BURST];
	static u8 wbuf[NV_BURST][4096], rbuf[NV_BURST][4096];
	struct nvmet_uring_stats st0, st;
	struct nvmet_ns *ns;
	unsigned int i, pass;
	struct nv_rq f;
	int fd;

	if (!NV_HAVE_URING)
		skip();
	if (pread)
		setenv("RDMARW_NVMET_URING_READ_RING", "0", 1);
	ns = nv_uring_start(&e, dir, true);
	unsetenv("RDMARW_NVMET_URING_READ_RING");
	assert_false(nv_uring_direct(ns));
	for (i = 0; i < NV_BURST; i++) {
		memset(wbuf[i], (int)(0x40 + i), 4096);
		nv_rq_init(&r[i], nvme_cmd_write, 1, (u64)i * 16, 8, wbuf[i],
			   512);
		assert_int_equal(nv_exec(&e, 1 + i % 2, &r[i]), 0);
	}
	nv_rq_init(&f, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	assert_int_equal(nv_exec(&e, 1, &f), 0);
	for (pass = 0; pass < 2; pass++) {
		if (pass && tmpfs)
			break;
		if (pass) { /* ext4: out of the page cache, to the ring */
			fd = open(e.path, O_RDONLY);
			assert_true(fd >= 0);
			assert_int_equal(
				posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED),
				0);
			close(fd);
		}
		nv_uring_stats(ns, &st0);
		memset(rbuf, 0xee, sizeof(rbuf));
		for (i = 0; i < NV_BURST; i++) {
			nv_rq_init(&r[i], nvme_cmd_read, 1, (u64)i * 16, 8,
				   rbuf[i], 512);
			assert_int_equal(nv_exec(&e, 1 + i % 2, &r[i]), 0);
			assert_memory_equal(rbuf[i], wbuf[i], 4096);
		}
		nv_uring_stats(ns, &st);
		if (!pass && (tmpfs || pread)) {
			assert_int_equal(st.inline_ios - st0.inline_ios,
					 NV_BURST);
			assert_int_equal(st.sqes - st0.sqes, 0);
		} else if (!pass) {
			assert_int_equal(st.inline_ios - st0.inline_ios, 0);
			assert_int_equal(st.sqes - st0.sqes, NV_BURST);
		} else {
			assert_true(st.sqes - st0.sqes > 0);
		}
	}
	if (tmpfs) /* Writes too, and nothing but the Flush on the ring */
		assert_int_equal(st.inline_ios, 2 * NV_BURST);
	nv_env_fini(&e);
}

static void test_inline_tmpfs(void **state)
{
	(void)state;
	inline_case("/dev/shm", true, false);
}

static void test_inline_disk(void **state)
{
	(void)state;
	inline_case(".", false, true);
}

static void test_inline_disk_ring(void **state)
{
	(void)state;
	inline_case(".", false, false);
}

/*
 * Teardown with I/O on the ring: bursts of 128 KiB writes to an O_DIRECT
 * file on both queues, then, without waiting for them, the host and the
 * target destroyed (nv_env_fini(): every device object gone; ASan and
 * valgrind: nothing leaked); or the namespace removed by a reload, which
 * waits for the requests that found it: each completes (Success, the
 * data is then the file's), later ones get Invalid Namespace.
 */
#define NV_FLIGHT 12

static void flight_case(bool reload)
{
	static struct nv_env e;
	static struct nv_rq r[2][NV_FLIGHT];
	static struct nvmet_ns_opts ns[2];
	static struct nvmet_target_opts to;
	static char path[256];
	static u8 buf[128 * 1024];
	unsigned int i, q;
	char why[256];
	struct nv_rq x;

	if (!NV_HAVE_URING)
		skip();
	memset(ns, 0, sizeof(ns));
	memset(&e, 0, sizeof(e));
	ns[0].type = NVMET_BACKEND_RAM;
	nv_file(&e, ".", &ns[1]);
	snprintf(path, sizeof(path), "%s", e.path);
	ns[1].path = path;
	nv_start(&e, ns, 2);
	snprintf(e.path, sizeof(e.path), "%s", path);
	assert_non_null(nv_ns(&e, 2)->uring);
	memset(buf, 0x5a, sizeof(buf));
	for (q = 0; q < 2; q++)
		for (i = 0; i < NV_FLIGHT; i++) {
			nv_rq_init(&r[q][i], nvme_cmd_write, 2,
				   (u64)(q * NV_FLIGHT + i) * 256, 256, buf,
				   512);
			nv_submit(&e, q + 1, &r[q][i]);
		}
	if (!reload) {
		nv_env_fini(&e);
		return;
	}
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	to.ns[0] = ns[0];
	to.ns[0].size = 4u << 20;
	to.hosts = nv_hosts;
	to.nr_hosts = 1;
	assert_int_equal(nvmet_target_reload(e.t, &to, why, sizeof(why)), 0);
	for (q = 0; q < 2; q++)
		for (i = 0; i < NV_FLIGHT; i++) {
			nv_wait_for(nv_rq_is_done(&r[q][i]));
			assert_int_equal(r[q][i].rq.error, 0);
			assert_true(r[q][i].rq.status == 0 ||
				    (r[q][i].rq.status & 0x7ff) ==
					    NVME_SC_INVALID_NS);
		}
	nv_rq_init(&x, nvme_cmd_read, 2, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 1, &x) & 0x7ff, NVME_SC_INVALID_NS);
	nv_env_fini(&e);
}

static void test_teardown_in_flight(void **state)
{
	(void)state;
	flight_case(false);
}

static void test_ns_removed_in_flight(void **state)
{
	(void)state;
	flight_case(true);
}

/* Both namespaces files through io_uring, namespace 1's I/O held. */
static void test_slow_ns_uring_both(void **state)
{
	static char path[2][256];
	struct nvmet_ns_opts ns[2];

	(void)state;
	if (!NV_HAVE_URING)
		skip();
	nv_two_files(ns, path);
	ns[0].test_delay_ms = NV_HELD_MS;
	slow_case2(&ns[0], &ns[1]);
	nv_files_unlink(path);
}

/* ---- a ring per submitting thread (issue 30) -------------------------- */

#define NV_TAG_CMDS 8 /* per queue and pass */

/* Each 16 bytes of LBA @lba's block: the LBA, @pass, the offset. */
static void nv_tag(u8 *b, u64 lba, u32 pass)
{
	u32 i;

	for (i = 0; i < 512; i += 16) {
		memcpy(b + i, &lba, 8);
		memcpy(b + i + 8, &pass, 4);
		memcpy(b + i + 12, &i, 4);
	}
}

/* The first block of @nlb at @b whose tag is not (@lba + k, @pass), or -1. */
static int nv_tag_check(const u8 *b, u64 lba, u32 nlb, u32 pass)
{
	u8 want[512];
	u32 k;

	for (k = 0; k < nlb; k++) {
		nv_tag(want, lba + k, pass);
		if (memcmp(b + (size_t)k * 512, want, 512))
			return (int)k;
	}
	return -1;
}

/*
 * One pass: each queue writes NV_TAG_CMDS commands at once into its own
 * LBAs (1 to 8 blocks: in-capsule and keyed), every block tagged with its
 * LBA and the pass; then each queue reads the other queue's blocks back,
 * all at once, and every block must carry its own LBA and this pass.
 */
static void nv_tag_pass(struct nv_env *e, u32 pass)
{
	static struct nv_rq r[2][NV_TAG_CMDS];
	static u8 buf[2][NV_TAG_CMDS][8 * 512];
	u32 nlb[2][NV_TAG_CMDS];
	u64 lba[2][NV_TAG_CMDS];
	unsigned int q, i, k, round;
	int bad;

	for (q = 0; q < 2; q++)
		for (i = 0; i < NV_TAG_CMDS; i++) {
			nlb[q][i] = 1 + (i * 3 + pass) % 8;
			lba[q][i] = (u64)(q * NV_TAG_CMDS + i) * 8;
		}
	for (round = 0; round < 2; round++) {
		for (q = 0; q < 2; q++)
			for (i = 0; i < NV_TAG_CMDS; i++) {
				/* round 1: queue q reads what q ^ 1 wrote */
				unsigned int w = round ? q ^ 1 : q;

				if (!round)
					for (k = 0; k < nlb[w][i]; k++)
						nv_tag(buf[q][i] + k * 512,
						       lba[w][i] + k, pass);
				else
					memset(buf[q][i], 0xee,
					       sizeof(buf[q][i]));
				nv_rq_init(&r[q][i],
					   round ? nvme_cmd_read :
						   nvme_cmd_write,
					   1, lba[w][i], nlb[w][i], buf[q][i],
					   512);
				nv_submit(e, q + 1, &r[q][i]);
			}
		for (q = 0; q < 2; q++)
			for (i = 0; i < NV_TAG_CMDS; i++) {
				nv_wait_for(nv_rq_is_done(&r[q][i]));
				assert_int_equal(r[q][i].rq.error, 0);
				assert_int_equal(r[q][i].rq.status, 0);
				if (!round)
					continue;
				bad = nv_tag_check(buf[q][i], lba[q ^ 1][i],
						   nlb[q ^ 1][i], pass);
				if (bad >= 0)
					fail_msg("pass %u: LBA %llu read on "
						 "queue %u is not its own",
						 pass,
						 (unsigned long long)(lba[q ^ 1]
									 [i] +
								      (u64)bad),
						 q + 1);
			}
	}
}

/*
 * Two queues write and read a file namespace (random I/O against a
 * shadow, the file's own bytes, then LBA-tagged blocks): the namespace
 * has one ring per thread that submitted to it (@rings: each queue's CQ
 * thread, or one poll group's), or, with $RDMARW_NVMET_URING_RINGS at
 * @limit (>= 0), that many, the other threads sharing the namespace's
 * ring (@fallbacks) with the same bytes.  @reconnect: the host goes and
 * comes back (the queues' threads exit and new ones submit), and the
 * namespace is then removed by a reload while the rings of threads gone
 * and of threads running are still there: it closes them all (ASan,
 * valgrind: nothing leaked; no wait).
 */
static void rings_case(const char *dir, unsigned int groups, int limit,
		       u32 rings, u32 fallbacks, bool reconnect)
{
	static struct nv_env e;
	static struct nvmet_target_opts to;
	struct nvmet_uring_stats st;
	struct nvmet_ns *ns;
	struct nv_run run;
	struct nv_rq x;
	char why[256], lim[16];
	u8 buf[4096];
	u32 pass;

	if (!NV_HAVE_URING)
		skip();
	if (limit >= 0) {
		snprintf(lim, sizeof(lim), "%d", limit);
		setenv("RDMARW_NVMET_URING_RINGS", lim, 1);
	}
	nv_poll_groups = groups;
	ns = nv_uring_start(&e, dir, false);
	nv_poll_groups = 0;
	unsetenv("RDMARW_NVMET_URING_RINGS");
	/* the shadow's run first: it starts from a namespace of zeroes */
	nv_io_run(&run, &e, 2, 8, 24, 31);
	if (run.failed)
		fail_msg("%d failures; first: %s", run.failed, run.why);
	nv_io_verify(&run);
	nv_rq_init(&x, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	assert_int_equal(nv_exec(&e, 2, &x), 0);
	nv_file_matches(e.path, run.shadow, e.ns_size);
	for (pass = 1; pass <= 3; pass++)
		nv_tag_pass(&e, pass);
	nv_uring_stats(ns, &st);
	assert_int_equal(st.rings, rings);
	assert_int_equal(st.fallbacks, fallbacks);
	nv_io_free(&run);
	if (!reconnect) {
		nv_env_fini(&e);
		return;
	}
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	e.c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR_OR_NULL(e.c));
	nv_tag_pass(&e, 4);
	nv_uring_stats(ns, &st);
	/* the new threads took the slots back, or new ones: bounded */
	assert_true(st.rings >= rings && st.rings <= 2 * rings);
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	/* namespace 1 (the file) removed, a namespace 2 (RAM) added */
	to.ns[0].type = NVMET_BACKEND_NONE;
	to.ns[1].type = NVMET_BACKEND_RAM;
	to.ns[1].size = 4u << 20;
	to.hosts = nv_hosts;
	to.nr_hosts = 1;
	assert_int_equal(nvmet_target_reload(e.t, &to, why, sizeof(why)), 0);
	nv_rq_init(&x, nvme_cmd_read, 1, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 1, &x) & 0x7ff, NVME_SC_INVALID_NS);
	nv_env_fini(&e);
}

/*
 * A completion that submits (as a command whose data pages came back
 * does, from whoever reaps): writes to namespace 1 whose done writes the
 * same bytes to namespace 2, a namespace the thread (or its reaper) has
 * no ring for yet.  Whichever thread reaps makes the ring then, or sends
 * that one I/O to the shared ring when the slot is busy; every write
 * completes, both files hold the bytes.
 */
#define NV_CHAIN 16

struct nv_chain {
	struct nv_bio first, second;
	struct nvmet_ns *next;
};

static void nv_chain_done(struct nvmet_backend_io *io, int err)
{
	struct nv_chain *c = container_of(io, struct nv_chain, first.io);

	if (err) {
		__atomic_store_n(&c->second.err, err, __ATOMIC_RELEASE);
		return;
	}
	/* @second.err stays 1 (the test reads it meanwhile) until done */
	c->second.io.op = NVMET_IO_WRITE;
	c->second.io.buf = io->buf;
	c->second.io.len = io->len;
	c->second.io.off = io->off;
	c->second.io.done = nv_bio_done;
	nvmet_ns_submit(c->next, &c->second.io);
}

static void test_rings_chained_submit(void **state)
{
	static struct nv_env e;
	static struct nvmet_ns_opts ns[2];
	static struct nv_chain c[NV_CHAIN];
	static char path[2][256];
	struct nvmet_uring_stats st;
	struct nv_rq r;
	unsigned int i, k;
	u8 *wbuf, *rbuf;

	(void)state;
	if (!NV_HAVE_URING)
		skip();
	nv_two_files(ns, path);
	nv_start(&e, ns, 2);
	wbuf = aligned_alloc(4096, NV_CHAIN * 4096);
	rbuf = aligned_alloc(4096, 4096);
	assert_non_null(wbuf);
	assert_non_null(rbuf);
	for (i = 0; i < NV_CHAIN * 4096; i++)
		wbuf[i] = (u8)(i * 29 + 1);
	for (i = 0; i < NV_CHAIN; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].next = nv_ns(&e, 2);
		c[i].second.err = 1;
		c[i].first.err = 1;
		c[i].first.io.op = NVMET_IO_WRITE;
		c[i].first.io.buf = wbuf + i * 4096;
		c[i].first.io.len = 4096;
		c[i].first.io.off = (u64)i * 8192;
		c[i].first.io.done = nv_chain_done;
		nvmet_ns_submit(nv_ns(&e, 1), &c[i].first.io);
	}
	for (i = 0; i < NV_CHAIN; i++) {
		nv_wait_for(nv_bio_err(&c[i].second) != 1);
		assert_int_equal(nv_bio_err(&c[i].second), 0);
	}
	for (k = 1; k <= 2; k++)
		for (i = 0; i < NV_CHAIN; i++) {
			memset(rbuf, 0xee, 4096);
			nv_rq_init(&r, nvme_cmd_read, k, (u64)i * 16, 8, rbuf,
				   512);
			assert_int_equal(nv_exec(&e, 1 + i % 2, &r), 0);
			assert_memory_equal(rbuf, wbuf + i * 4096, 4096);
		}
	nv_uring_stats(nv_ns(&e, 2), &st);
	assert_int_equal(st.fallbacks, 0);
	free(wbuf);
	free(rbuf);
	nv_env_fini(&e);
	nv_files_unlink(path);
}

/* ---- the reaper: woken for what nobody else reaps --------------------- */

#define NV_QUIET_IOS 8
#define NV_QUIET_LEN (256 * 1024)

/*
 * A submitter reaps what finished inside its submission with its ring's
 * eventfd off (IORING_CQ_EVENTFD_DISABLED), turns it back on, and stops:
 * every I/O it left in flight still completes, its reaper woken by the
 * eventfd.  Large O_DIRECT writes and reads in one plug each, so that some
 * are in flight when the submission returns; 20 rounds.  The reaper's
 * bounded sleep is longer than the wait here (main()): a completion only
 * it would find fails the test.  Left off after the reap (a submitter
 * that does not turn it back on), the first round never ends.
 */
static void test_quiet_reap_then_stop(void **state)
{
	static struct nv_env e;
	static struct nv_bio b[NV_QUIET_IOS];
	struct nvmet_ns *ns;
	unsigned int i, round;
	u8 *buf;

	(void)state;
	if (!NV_HAVE_URING)
		skip();
	ns = nv_uring_start(&e, ".", false);
	buf = aligned_alloc(4096, NV_QUIET_IOS * NV_QUIET_LEN);
	assert_non_null(buf);
	memset(buf, 0x5c, NV_QUIET_IOS * NV_QUIET_LEN);
	for (round = 0; round < 20; round++) {
		nvmet_plug_start(&nv_plug);
		for (i = 0; i < NV_QUIET_IOS; i++)
			nv_bio_submit(ns, &b[i],
				      round % 2 ? NVMET_IO_READ :
						  NVMET_IO_WRITE,
				      buf + (size_t)i * NV_QUIET_LEN,
				      NV_QUIET_LEN, (u64)i * NV_QUIET_LEN);
		nvmet_plug_finish(&nv_plug);
		/* the submitter stops here: only the reaper reaps now */
		for (i = 0; i < NV_QUIET_IOS; i++) {
			nv_wait_for(nv_bio_err(&b[i]) != 1);
			assert_int_equal(nv_bio_err(&b[i]), 0);
		}
	}
	free(buf);
	nv_env_fini(&e);
}

/*
 * A thread that submits one read to @first, says so, waits for the test's
 * word, then (@then not NULL) one to @then, says so, and exits.
 */
struct nv_holder {
	pthread_t t;
	struct nvmet_ns *first, *then;
	int step; /* 1: first done, 2: go on, 3: then done (nv_hold_m) */
	int err;
};

static pthread_mutex_t nv_hold_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nv_hold_c = PTHREAD_COND_INITIALIZER;

/* One 4 KiB read of @ns, waited for (10 s at most): 0 or the error. */
static int nv_hold_read(struct nvmet_ns *ns)
{
	struct timespec ts = { 0, 1000 * 1000 };
	struct nv_bio b;
	int i, err;
	u8 *buf = aligned_alloc(4096, 4096);

	if (!buf)
		return -ENOMEM;
	nv_bio_submit(ns, &b, NVMET_IO_READ, buf, 4096, 0);
	for (i = 0; i < 10000 && nv_bio_err(&b) == 1; i++)
		nanosleep(&ts, NULL);
	err = nv_bio_err(&b);
	free(buf);
	return err == 1 ? -ETIMEDOUT : err;
}

static void nv_hold_step(struct nv_holder *h, int step)
{
	pthread_mutex_lock(&nv_hold_m);
	h->step = step;
	pthread_cond_broadcast(&nv_hold_c);
	pthread_mutex_unlock(&nv_hold_m);
}

/* Wait (10 s at most) until @h reached @step: whether it did. */
static bool nv_hold_wait(struct nv_holder *h, int step)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&nv_hold_m);
	while (h->step < step)
		if (pthread_cond_timedwait(&nv_hold_c, &nv_hold_m, &ts))
			break;
	ok = h->step >= step;
	pthread_mutex_unlock(&nv_hold_m);
	return ok;
}

static void *nv_holder_fn(void *arg)
{
	struct nv_holder *h = arg;

	h->err = nv_hold_read(h->first);
	nv_hold_step(h, 1);
	if (!nv_hold_wait(h, 2))
		return NULL; /* the test gave up on it */
	if (h->then && !h->err)
		h->err = nv_hold_read(h->then);
	nv_hold_step(h, 3);
	return NULL;
}

static void nv_holder_start(struct nv_holder *h, struct nvmet_ns *first)
{
	memset(h, 0, sizeof(*h));
	h->first = first;
	assert_int_equal(pthread_create(&h->t, NULL, nv_holder_fn, h), 0);
	assert_true(nv_hold_wait(h, 1));
	assert_int_equal(h->err, 0);
}

#define NV_HOLDERS 80 /* more than the backend's slots (64) */

/*
 * Every slot taken: threads submit to namespace 2 one after the other,
 * each holding its slot, until one finds none (namespace 2 has no ring
 * more for it: it shares the namespace's ring).  A holder exits (its slot
 * given back); the thread that found none then submits to namespace 1
 * and gets a ring of its own there (the freed slot's), instead of sharing
 * for life.  Every read completes.
 */
static void test_rings_slot_freed(void **state)
{
	static struct nv_env e;
	static struct nvmet_ns_opts ns[2];
	static struct nv_holder h[NV_HOLDERS];
	static char path[2][256];
	struct nvmet_uring_stats st;
	struct nv_holder *x = NULL;
	unsigned int i, n, rings = 0;

	(void)state;
	if (!NV_HAVE_URING)
		skip();
	nv_two_files(ns, path);
	nv_start(&e, ns, 2);
	for (n = 0; n < NV_HOLDERS && !x; n++) {
		nv_holder_start(&h[n], nv_ns(&e, 2));
		nv_uring_stats(nv_ns(&e, 2), &st);
		if (st.rings == rings)
			x = &h[n]; /* no slot: the shared ring */
		rings = st.rings;
	}
	assert_non_null(x);
	assert_true(n >= 2); /* one to give its slot back, and x */
	nv_uring_stats(nv_ns(&e, 1), &st);
	assert_int_equal(st.rings, 0);
	nv_hold_step(&h[0], 2);
	assert_int_equal(pthread_join(h[0].t, NULL), 0);
	x->then = nv_ns(&e, 1);
	nv_hold_step(x, 2);
	assert_true(nv_hold_wait(x, 3));
	assert_int_equal(x->err, 0);
	nv_uring_stats(nv_ns(&e, 1), &st);
	assert_int_equal(st.rings, 1);
	for (i = 1; i < n; i++) {
		if (&h[i] != x)
			nv_hold_step(&h[i], 2);
		assert_int_equal(pthread_join(h[i].t, NULL), 0);
		assert_int_equal(h[i].err, 0);
	}
	nv_env_fini(&e);
	nv_files_unlink(path);
}

/*
 * Ring creation failing for real: no descriptor left (RLIMIT_NOFILE at
 * the highest one open, the holes below it filled), so the queue
 * threads' first submissions cannot make a ring (io_uring_setup():
 * EMFILE): they share the namespace's ring, every command completes with
 * its bytes; with descriptors again, nothing changes (the fallback holds).
 */
#define NV_FDS_MAX 4096

static void test_rings_make_fails(void **state)
{
	static struct nv_env e;
	static int held[NV_FDS_MAX];
	static u8 wbuf[4096], rbuf[4096];
	struct nvmet_uring_stats st;
	struct rlimit old, lim;
	struct nvmet_ns *ns;
	unsigned int i, nheld = 0;
	struct dirent *d;
	struct nv_rq r;
	int fd, maxfd = 0;
	DIR *dir;

	(void)state;
	if (!NV_HAVE_URING)
		skip();
	ns = nv_uring_start(&e, ".", false);
	dir = opendir("/proc/self/fd");
	assert_non_null(dir);
	while ((d = readdir(dir)))
		if (atoi(d->d_name) > maxfd)
			maxfd = atoi(d->d_name);
	closedir(dir);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)maxfd + 1;
	if (setrlimit(RLIMIT_NOFILE, &lim)) { /* valgrind keeps the limit */
		nv_env_fini(&e);
		skip();
	}
	while (nheld < NV_FDS_MAX && (fd = open("/dev/null", O_RDONLY)) >= 0)
		held[nheld++] = fd;
	for (i = 0; i < 8; i++) {
		memset(wbuf, (int)(0x10 + i), sizeof(wbuf));
		nv_rq_init(&r, nvme_cmd_write, 1, (u64)i * 8, 8, wbuf, 512);
		assert_int_equal(nv_exec(&e, 1 + i % 2, &r), 0);
		memset(rbuf, 0xee, sizeof(rbuf));
		nv_rq_init(&r, nvme_cmd_read, 1, (u64)i * 8, 8, rbuf, 512);
		assert_int_equal(nv_exec(&e, 2 - i % 2, &r), 0);
		assert_memory_equal(rbuf, wbuf, sizeof(wbuf));
	}
	for (i = 0; i < nheld; i++)
		close(held[i]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	nv_uring_stats(ns, &st);
	assert_int_equal(st.rings, 0);
	assert_int_equal(st.fallbacks, 2);
	nv_rq_init(&r, nvme_cmd_read, 1, 0, 8, rbuf, 512);
	assert_int_equal(nv_exec(&e, 1, &r), 0);
	nv_uring_stats(ns, &st);
	assert_int_equal(st.rings, 0);
	nv_env_fini(&e);
}

static void test_rings_per_thread_disk(void **state)
{
	(void)state;
	rings_case(".", 0, -1, 2, 0, false);
}

static void test_rings_per_thread_tmpfs(void **state)
{
	(void)state;
	rings_case("/dev/shm", 0, -1, 2, 0, false);
}

static void test_rings_poll_group(void **state)
{
	(void)state;
	rings_case(".", 1, -1, 1, 0, false);
}

/* One thread gets a ring, the other shares the namespace's: same bytes. */
static void test_rings_limit(void **state)
{
	(void)state;
	rings_case(".", 0, 1, 1, 1, false);
}

static void test_rings_none(void **state)
{
	(void)state;
	rings_case(".", 0, 0, 0, 2, false);
}

static void test_rings_reconnect_reload(void **state)
{
	(void)state;
	rings_case(".", 0, -1, 2, 0, true);
}

/*
 * The VmFlags of the one mapping of exactly @len bytes in this process
 * ("" when none is, NULL when more than one is).
 */
static const char *vma_flags(u64 len, char *out, size_t outlen)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo, hi;
	bool in = false;
	int found = 0;

	assert_non_null(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = hi - lo == len;
			found += in;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(out, outlen, "%s", line + 8);
		}
	}
	fclose(f);
	return found > 1 ? NULL : out;
}

/*
 * A RAM namespace asks for transparent huge pages (MADV_HUGEPAGE: "hg" in
 * its mapping's VmFlags): random 4 KiB I/O over a namespace larger than
 * the TLB's reach then misses it far less often.
 */
static void test_ram_hugepage_advice(void **state)
{
	static struct nv_env e;
	const u64 size =
		(7ull << 20) + (512u << 10); /* a size nobody else maps */
	char flags[512];
	const char *got;

	(void)state;
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
		skip(); /* a kernel without THP refuses the advice */
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .nr_io_queues = 1, .ns_size = size });
	got = vma_flags(size, flags, sizeof(flags));
	assert_non_null(got);
	if (!strstr(got, " hg"))
		fail_msg("the namespace's mapping: VmFlags:%s", got);
	nv_env_fini(&e);
}

/* rdmarw-nvmet's --io-engine and --buffered: the namespaces that follow. */
static void test_config_options(void **state)
{
	static const char *const argv[] = {
		"rdmarw-nvmet", "--addr",      "10.1.2.3", "--file",
		"/a",		"--io-engine", "sync",	   "--file",
		"/b",		"--io-engine", "auto",	   "--buffered",
		"--bdev",	"/dev/null",
	};
	static const char *const bad[] = { "rdmarw-nvmet", "--addr", "10.1.2.3",
					   "--io-engine", "uring2" };
	struct nvmet_config c;

	(void)state;
	nvmet_config_init(&c);
	assert_int_equal(
		nvmet_config_args(&c, (int)ARRAY_SIZE(argv), (char **)argv), 0);
	assert_int_equal(c.nr_ns, 3);
	assert_int_equal(c.o.ns[0].io_engine, NVMET_IO_ENGINE_AUTO);
	assert_false(c.o.ns[0].buffered);
	assert_int_equal(c.o.ns[1].io_engine, NVMET_IO_ENGINE_SYNC);
	assert_false(c.o.ns[1].buffered);
	assert_int_equal(c.o.ns[2].io_engine, NVMET_IO_ENGINE_AUTO);
	assert_true(c.o.ns[2].buffered);
	nvmet_config_free(&c);
	nvmet_config_init(&c);
	assert_int_equal(
		nvmet_config_args(&c, (int)ARRAY_SIZE(bad), (char **)bad),
		-EINVAL);
	nvmet_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_later_done, nv_teardown),
		cmocka_unit_test_teardown(test_done_after_host_gone,
					  nv_teardown),
		cmocka_unit_test_teardown(test_errors, nv_teardown),
		cmocka_unit_test_teardown(test_ram_hugepage_advice,
					  nv_teardown),
		cmocka_unit_test_teardown(test_slow_ns_ram, nv_teardown),
		cmocka_unit_test_teardown(test_slow_ns_uring, nv_teardown),
		cmocka_unit_test_teardown(test_uring_tmpfs_direct, nv_teardown),
		cmocka_unit_test_teardown(test_uring_tmpfs_buffered,
					  nv_teardown),
		cmocka_unit_test_teardown(test_uring_disk_direct, nv_teardown),
		cmocka_unit_test_teardown(test_uring_disk_buffered,
					  nv_teardown),
		cmocka_unit_test_teardown(test_uring_fallback, nv_teardown),
		cmocka_unit_test_teardown(test_sync_engine, nv_teardown),
		cmocka_unit_test_teardown(test_uring_no_alloc_direct,
					  nv_teardown),
		cmocka_unit_test_teardown(test_uring_no_alloc_buffered,
					  nv_teardown),
		cmocka_unit_test_teardown(test_plug_disk_direct,
					  nv_plug_teardown),
		cmocka_unit_test_teardown(test_plug_disk_buffered,
					  nv_plug_teardown),
		cmocka_unit_test_teardown(test_plug_ring_full,
					  nv_plug_teardown),
		cmocka_unit_test_teardown(test_batch_transport_tmpfs,
					  nv_teardown),
		cmocka_unit_test_teardown(test_plug_disk_buffered_pread,
					  nv_plug_teardown),
		cmocka_unit_test_teardown(test_batch_transport_disk,
					  nv_teardown),
		cmocka_unit_test_teardown(test_batch_transport_polled,
					  nv_teardown),
		cmocka_unit_test_teardown(test_inline_tmpfs, nv_teardown),
		cmocka_unit_test_teardown(test_inline_disk, nv_teardown),
		cmocka_unit_test_teardown(test_inline_disk_ring, nv_teardown),
		cmocka_unit_test_teardown(test_teardown_in_flight, nv_teardown),
		cmocka_unit_test_teardown(test_ns_removed_in_flight,
					  nv_teardown),
		cmocka_unit_test_teardown(test_slow_ns_uring_both, nv_teardown),
		cmocka_unit_test_teardown(test_rings_per_thread_disk,
					  nv_teardown),
		cmocka_unit_test_teardown(test_rings_per_thread_tmpfs,
					  nv_teardown),
		cmocka_unit_test_teardown(test_rings_poll_group, nv_teardown),
		cmocka_unit_test_teardown(test_rings_limit, nv_teardown),
		cmocka_unit_test_teardown(test_rings_none, nv_teardown),
		cmocka_unit_test_teardown(test_rings_reconnect_reload,
					  nv_teardown),
		cmocka_unit_test_teardown(test_rings_chained_submit,
					  nv_teardown),
		cmocka_unit_test_teardown(test_rings_make_fails, nv_teardown),
		cmocka_unit_test_teardown(test_quiet_reap_then_stop,
					  nv_plug_teardown),
		cmocka_unit_test_teardown(test_rings_slot_freed, nv_teardown),
		cmocka_unit_test(test_config_options),
	};

	/*
	 * The reapers' bounded sleep (while I/O is in flight) longer than
	 * any wait of these tests: a completion left to it is a lost one.
	 */
	setenv("RDMARW_NVMET_URING_BACKSTOP_MS", "3600000", 1);
	/*
	 * The tmpfs cases test the fd's engines there; the shared mapping a
	 * tmpfs file gets by default is test_nvmet_tmpfsmap's.
	 */
	setenv("RDMARW_NVMET_TMPFS_MAP", "0", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

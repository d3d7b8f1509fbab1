// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A file namespace on tmpfs served from a shared mapping of the file
 * under a write lease (nvme/target/backend.c, "a tmpfs file mapped"), the
 * file made by the test in /dev/shm, every 512-byte block tagged with its
 * LBA and a generation:
 *
 * - mapped: the namespace says so; Reads (without a copy, aligned or not)
 *   return the file's bytes, Writes land in the file (read back through
 *   the host, and from the file after the target is gone); a deallocated
 *   range (a hole punched through the fd) reads zeroes through the mapping;
 *   read-only, mapped too, and Writes refused;
 * - the lease's break: another open of the file (a thread of the test)
 *   completes, the namespace is no longer mapped, and later I/O returns
 *   the right bytes: those written through the mapping before, those the
 *   other opener wrote through its fd after; the target's writes reach the
 *   opener's fd; a truncation by the opener then costs nothing (a read
 *   past the new end reads zeroes: the fd serves);
 * - a read held (the tests' delay) when the lease breaks, one that found
 *   the namespace in its queue's view and one that holds a reference (a
 *   queue's first command): the switch waits for it, the opener stays
 *   blocked until the read is let go, and the read returns the right
 *   bytes;
 * - a reload that changes the namespace: the new one's open breaks the old
 *   one's lease, the new one is not mapped at first and takes the lease as
 *   soon as the old one closes (the retry's interval made an hour: the
 *   old one's close wakes it), the bytes are right;
 * - a file someone else holds open: not mapped, the fd serves, right
 *   bytes; $RDMARW_NVMET_TMPFS_MAP=0: not mapped either;
 * - read-only, the file open elsewhere at the start: the mapping made at
 *   the retake serves reads, Writes refused before and after;
 * - the lease taken again (the watcher's retry) once no one else has the
 *   file open: after the other opener at the start closes; after a break,
 *   before any I/O command, and after a second break; after a reload
 *   while the file was open elsewhere; not while the file is shorter than
 *   the namespace (the fd serves zeroes past its end), and once it is
 *   long enough again; the bytes right on both sides of each switch, the
 *   takes and breaks counted;
 * - a break before the namespace has a slot (nvmet_ns_create() alone):
 *   the watcher keeps the opener waiting until the slot is set, then
 *   switches (and takes the lease again after the opener closed); or
 *   until the namespace closes.
 */
#include "nvmet_env.h"
#include "config.h"
#include "nvmet_int.h"
#include "nv_rq.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define TM_LBA 512u
#define TM_NS_SIZE (4u << 20)
#define TM_BLOCKS (TM_NS_SIZE / TM_LBA)
#define TM_MAX_NLB 256u /* 128 KiB */

static char tm_path[64];

/* Byte @i of block @lba, generation @gen: the LBA, the generation, more. */
static u8 tm_byte(u64 lba, u8 gen, u32 i)
{
	if (i < 8)
		return (u8)(lba >> (8 * i));
	if (i == 8)
		return gen;
	return (u8)(lba * 31 + i * 7 + gen * 13 + 1);
}

static void tm_fill(u8 *p, u64 slba, u32 nlb, u8 gen)
{
	u32 b, i;

	for (b = 0; b < nlb; b++)
		for (i = 0; i < TM_LBA; i++)
			p[b * TM_LBA + i] = tm_byte(slba + b, gen, i);
}

/* @p holds blocks @slba..+@nlb of generation @gen (0xff: zeroes). */
static void tm_check(const u8 *p, u64 slba, u32 nlb, u8 gen)
{
	u32 b, i;
	u8 want;

	for (b = 0; b < nlb; b++)
		for (i = 0; i < TM_LBA; i++) {
			want = gen == 0xff ? 0 : tm_byte(slba + b, gen, i);
			if (p[b * TM_LBA + i] != want)
				fail_msg("lba %llu byte %u is %#x, want %#x "
					 "(generation %u)",
					 (unsigned long long)(slba + b), i,
					 p[b * TM_LBA + i], want, gen);
		}
}

/* Blocks @slba..+@nlb of generation @gen written to @fd. */
static void tm_pwrite(int fd, u64 slba, u32 nlb, u8 gen)
{
	static u8 buf[TM_MAX_NLB * TM_LBA];

	tm_fill(buf, slba, nlb, gen);
	assert_int_equal(
		pwrite(fd, buf, (size_t)nlb * TM_LBA, (off_t)(slba * TM_LBA)),
		(ssize_t)nlb * TM_LBA);
}

/* @fd's blocks @slba..+@nlb are of generation @gen. */
static void tm_pread_check(int fd, u64 slba, u32 nlb, u8 gen)
{
	static u8 buf[TM_MAX_NLB * TM_LBA];

	assert_int_equal(
		pread(fd, buf, (size_t)nlb * TM_LBA, (off_t)(slba * TM_LBA)),
		(ssize_t)nlb * TM_LBA);
	tm_check(buf, slba, nlb, gen);
}

/* The file, every block of generation 0, closed again. */
static void tm_make_file(void)
{
	int fd;
	u64 lba;

	snprintf(tm_path, sizeof(tm_path), "/dev/shm/rdmarw-tmpfsmap-%d",
		 (int)getpid());
	fd = open(tm_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, TM_NS_SIZE), 0);
	for (lba = 0; lba < TM_BLOCKS; lba += TM_MAX_NLB)
		tm_pwrite(fd, lba, TM_MAX_NLB, 0);
	close(fd);
}

static struct nvmet_target_opts tm_to;

/*
 * The target with the file as namespace 1 (@delay_ms: the tests' delay;
 * @ro: read-only).
 */
static void tm_start_ro(struct nv_env *e, u32 delay_ms, bool ro)
{
	nvmet_target_opts_init(&tm_to);
	tm_to.addr = "10.0.0.2";
	tm_to.port = NV_PORT;
	tm_to.subnqn = NV_NQN;
	tm_to.ns[0].type = NVMET_BACKEND_FILE;
	tm_to.ns[0].path = tm_path;
	tm_to.ns[0].size = TM_NS_SIZE;
	tm_to.ns[0].test_delay_ms = delay_ms;
	tm_to.ns[0].readonly = ro;
	tm_to.hosts = nv_hosts;
	tm_to.nr_hosts = 1;
	nv_env_init(e, "mlx5",
		    &(struct nv_cfg){ .nr_io_queues = 2,
				      .queue_size = 16,
				      .io_timeout_ms = 120000,
				      .topts = &tm_to });
}

static void tm_start(struct nv_env *e, u32 delay_ms)
{
	tm_start_ro(e, delay_ms, false);
}

static u8 tm_buf[TM_MAX_NLB * TM_LBA];

/* Read @nlb blocks at @slba: generation @gen (0xff: zeroes) expected. */
static void tm_read(struct nv_env *e, unsigned int qid, u64 slba, u32 nlb,
		    u8 gen)
{
	struct nv_rq r;

	memset(tm_buf, 0xa5, sizeof(tm_buf));
	nv_rq_init(&r, nvme_cmd_read, 1, slba, nlb, tm_buf, TM_LBA);
	assert_int_equal(nv_exec(e, qid, &r), 0);
	tm_check(tm_buf, slba, nlb, gen);
}

static void tm_write(struct nv_env *e, unsigned int qid, u64 slba, u32 nlb,
		     u8 gen)
{
	struct nv_rq r;

	tm_fill(tm_buf, slba, nlb, gen);
	nv_rq_init(&r, nvme_cmd_write, 1, slba, nlb, tm_buf, TM_LBA);
	assert_int_equal(nv_exec(e, qid, &r), 0);
}

/* Reads across the namespace, aligned and not, of generation @gen. */
static void tm_read_some(struct nv_env *e, u8 gen)
{
	tm_read(e, 1, 1000, 8, gen);
	tm_read(e, 2, 1001, 8, gen); /* not page aligned */
	tm_read(e, 1, 3, 1, gen);
	tm_read(e, 2, 4096, TM_MAX_NLB, gen);
	tm_read(e, 1, TM_BLOCKS - TM_MAX_NLB, TM_MAX_NLB, gen); /* the end */
}

/* Deallocate @nlb blocks at @slba (a hole punched through the fd). */
static void tm_dealloc(struct nv_env *e, u64 slba, u32 nlb)
{
	struct nvmeh_request rq = { 0 };
	u8 range[16] = { 0 };

	nvme_put_le32(range + 4, nlb);
	nvme_put_le64(range + 8, slba);
	rq.sqe[offsetof(struct nvme_common_command, opcode)] = nvme_cmd_dsm;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid), 1);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw11),
		      NVME_DSMGMT_AD);
	rq.data = range;
	rq.data_len = sizeof(range);
	rq.write = true;
	assert_int_equal(nvmeh_exec(e->c, 1, &rq), 0);
	assert_int_equal(rq.error, 0);
	assert_int_equal(rq.status, 0);
}

/* @ns's lease was taken @takes times and broken @breaks times. */
static void tm_counts(struct nvmet_ns *ns, u64 takes, u64 breaks)
{
	u64 t, b;

	assert_int_equal(nvmet_ns_lease_counts(ns, &t, &b), 0);
	assert_int_equal(t, takes);
	assert_int_equal(b, breaks);
}

/*
 * The stats JSON's namespace 1 (nvmet_target_stats_json()): backend "file"
 * and its lease as nvmet_ns_lease_counts() and nvmet_ns_mapped() say, or
 * no "lease" when @serves is NULL.
 */
static void tm_stats_lease(struct nv_env *e, const char *serves, u64 takes,
			   u64 breaks)
{
	const struct json *ns, *lease;
	struct json *root;
	char *text = NULL;
	size_t len = 0;
	u64 v;
	FILE *f;

	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(nvmet_target_stats_json(e->t, f), 0);
	assert_int_equal(fclose(f), 0);
	if (nvmet_json_parse(text, len, &root))
		fail_msg("the stats do not parse:\n%s", text);
	free(text);
	ns = nvmet_json_at(
		nvmet_json_get(
			nvmet_json_at(nvmet_json_get(root, "subsystems"), 0),
			"namespaces"),
		0);
	assert_int_equal(nvmet_json_u64(nvmet_json_get(ns, "nsid"), &v), 0);
	assert_int_equal(v, 1);
	assert_string_equal(nvmet_json_string(nvmet_json_get(ns, "backend")),
			    "file");
	lease = nvmet_json_get(ns, "lease");
	if (!serves) {
		assert_null(lease);
		nvmet_json_free(root);
		return;
	}
	assert_string_equal(nvmet_json_string(nvmet_json_get(lease, "serves")),
			    serves);
	assert_int_equal(nvmet_json_u64(nvmet_json_get(lease, "takes"), &v), 0);
	assert_int_equal(v, takes);
	assert_int_equal(nvmet_json_u64(nvmet_json_get(lease, "breaks"), &v),
			 0);
	assert_int_equal(v, breaks);
	nvmet_json_free(root);
}

static int tm_teardown(void **state)
{
	nv_teardown(state);
	unsetenv("RDMARW_NVMET_TMPFS_RETRY_MS");
	if (tm_path[0])
		unlink(tm_path);
	tm_path[0] = 0;
	return 0;
}

static void test_map_bytes(void **state)
{
	static struct nv_env e;
	int fd;

	(void)state;
	tm_make_file();
	tm_start(&e, 0);
	assert_true(nvmet_ns_mapped(nv_ns(&e, 1)));
	tm_read_some(&e, 0);
	tm_write(&e, 1, 0, TM_MAX_NLB, 1);
	tm_write(&e, 2, 777, 100, 1);
	tm_read(&e, 2, 0, TM_MAX_NLB, 1);
	tm_read(&e, 1, 777, 100, 1);
	tm_read(&e, 2, 877, 8, 0);
	/* a hole punched through the fd reads zeroes through the mapping */
	tm_dealloc(&e, 16, 16);
	tm_read(&e, 1, 16, 16, 0xff);
	tm_read(&e, 2, 8, 8, 1);
	tm_read(&e, 2, 32, 8, 1);
	assert_true(nvmet_ns_mapped(nv_ns(&e, 1)));
	nv_env_fini(&e);
	/* the writes are the file's */
	fd = open(tm_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	tm_pread_check(fd, 0, 16, 1);
	tm_pread_check(fd, 16, 16, 0xff);
	tm_pread_check(fd, 32, TM_MAX_NLB - 32, 1);
	tm_pread_check(fd, 777, 100, 1);
	tm_pread_check(fd, 877, 100, 0);
	close(fd);
}

/* Read-only: mapped all the same (read only), Writes refused. */
static void test_map_readonly(void **state)
{
	static struct nv_env e;
	struct nv_rq r;

	(void)state;
	tm_make_file();
	tm_start_ro(&e, 0, true);
	assert_true(nvmet_ns_mapped(nv_ns(&e, 1)));
	tm_read_some(&e, 0);
	tm_fill(tm_buf, 0, 8, 1);
	nv_rq_init(&r, nvme_cmd_write, 1, 0, 8, tm_buf, TM_LBA);
	assert_int_equal(nv_exec(&e, 1, &r),
			 NVME_SC_NS_WRITE_PROTECTED | NVME_SC_DNR);
	tm_read(&e, 2, 0, 8, 0);
	nv_env_fini(&e);
}

/*
 * Read-only, the file open elsewhere at the start: the fd serves; the
 * mapping made at the retake is read-only too, and Writes are refused on
 * both sides.
 */
static void test_map_readonly_retake(void **state)
{
	static struct nv_env e;
	struct nvmet_ns *n;
	struct nv_rq r;
	int fd;

	(void)state;
	tm_make_file();
	fd = open(tm_path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	tm_start_ro(&e, 0, true);
	n = nv_ns(&e, 1);
	assert_false(nvmet_ns_mapped(n));
	tm_pwrite(fd, 0, 8, 1);
	tm_read(&e, 1, 0, 8, 1);
	tm_fill(tm_buf, 0, 8, 2);
	nv_rq_init(&r, nvme_cmd_write, 1, 0, 8, tm_buf, TM_LBA);
	assert_int_equal(nv_exec(&e, 1, &r),
			 NVME_SC_NS_WRITE_PROTECTED | NVME_SC_DNR);
	close(fd);
	nv_wait_for(nvmet_ns_mapped(n));
	tm_counts(n, 1, 0);
	tm_read(&e, 2, 0, 8, 1);
	tm_read(&e, 1, 1001, 8, 0);
	tm_read(&e, 2, TM_BLOCKS - TM_MAX_NLB, TM_MAX_NLB, 0);
	nv_rq_init(&r, nvme_cmd_write, 1, 0, 8, tm_buf, TM_LBA);
	assert_int_equal(nv_exec(&e, 2, &r),
			 NVME_SC_NS_WRITE_PROTECTED | NVME_SC_DNR);
	tm_read(&e, 1, 0, 8, 1);
	nv_env_fini(&e);
}

/* Another opener of the file, on a thread of its own (the open blocks). */
struct tm_opener {
	int fd; /* atomic: -1 until the open returned */
	int err;
};

static void *tm_open_thread(void *arg)
{
	struct tm_opener *o = arg;
	int fd = open(tm_path, O_RDWR | O_CLOEXEC);

	o->err = fd < 0 ? errno : 0;
	__atomic_store_n(&o->fd, fd < 0 ? -2 : fd, __ATOMIC_RELEASE);
	return NULL;
}

static int tm_opened(struct tm_opener *o)
{
	return __atomic_load_n(&o->fd, __ATOMIC_ACQUIRE);
}

/* Break the lease: another open of the file, its fd once it returned. */
static int tm_break(void)
{
	struct tm_opener o = { .fd = -1 };
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, tm_open_thread, &o), 0);
	nv_wait_for(tm_opened(&o) != -1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(o.err, 0);
	return o.fd;
}

static void test_map_lease_break(void **state)
{
	static struct nv_env e;
	struct tm_opener o = { .fd = -1 };
	pthread_t th;
	int fd;

	(void)state;
	tm_make_file();
	tm_start(&e, 0);
	assert_true(nvmet_ns_mapped(nv_ns(&e, 1)));
	tm_write(&e, 1, 0, TM_MAX_NLB, 1); /* through the mapping */
	/* the open breaks the lease; it returns once the target let go */
	assert_int_equal(pthread_create(&th, NULL, tm_open_thread, &o), 0);
	nv_wait_for(tm_opened(&o) != -1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(o.err, 0);
	fd = o.fd;
	assert_false(nvmet_ns_mapped(nv_ns(&e, 1)));
	tm_pread_check(fd, 0, TM_MAX_NLB, 1);
	tm_pwrite(fd, 256, TM_MAX_NLB, 2); /* the opener's, after the switch */
	tm_read(&e, 1, 0, TM_MAX_NLB, 1);
	tm_read(&e, 2, 256, TM_MAX_NLB, 2);
	tm_read(&e, 1, 200, 56, 1); /* up to the opener's blocks */
	tm_read(&e, 1, 256, 44, 2);
	tm_read(&e, 2, 4097, TM_MAX_NLB, 0); /* untouched, not page aligned */
	tm_read(&e, 1, TM_BLOCKS - TM_MAX_NLB, TM_MAX_NLB, 0);
	tm_write(&e, 2, 512, TM_MAX_NLB, 3);
	tm_pread_check(fd, 512, TM_MAX_NLB, 3);
	/* the opener shrinks the file: past its end the target reads zeroes */
	assert_int_equal(ftruncate(fd, TM_NS_SIZE / 4), 0);
	tm_read(&e, 1, TM_BLOCKS - 8, 8, 0xff);
	tm_read(&e, 2, 512, TM_MAX_NLB, 3);
	close(fd);
	nv_env_fini(&e);
}

/*
 * A read held by the tests' delay when the lease breaks: the switch waits
 * for it (the opener stays blocked) until it is let go.  @warm: a read
 * before it, so that it finds the namespace in its queue's view;
 * otherwise it is the queue's first and holds a reference.
 */
static void tm_break_waits(bool warm)
{
	static struct nv_env e;
	static struct nv_rq r;
	struct tm_opener o = { .fd = -1 };
	struct nvmet_ns *n;
	pthread_t th;
	int i;

	tm_make_file();
	tm_start(&e, NV_HELD_MS);
	n = nv_ns(&e, 1);
	assert_true(nvmet_ns_mapped(n));
	for (i = !warm; i < 2; i++) { /* a first finds no view */
		memset(tm_buf, 0xa5, sizeof(tm_buf));
		nv_rq_init(&r, nvme_cmd_read, 1, 300, TM_MAX_NLB, tm_buf,
			   TM_LBA);
		nv_submit(&e, 1, &r);
		nv_wait_for(nvmet_ns_delay_held(n) == 1);
		if (i)
			break;
		nvmet_ns_delay_release(n, 1);
		nv_wait_for(nv_rq_is_done(&r));
		tm_check(tm_buf, 300, TM_MAX_NLB, 0);
	}
	assert_int_equal(pthread_create(&th, NULL, tm_open_thread, &o), 0);
	nv_wait_for(!nvmet_ns_mapped(n)); /* the watcher saw the break */
	/* the held read holds the namespace (view or reference): no lease given up */
	nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
	assert_int_equal(tm_opened(&o), -1);
	assert_false(nv_rq_is_done(&r));
	nvmet_ns_delay_release(n, 1);
	nv_wait_for(nv_rq_is_done(&r));
	assert_int_equal(r.rq.error, 0);
	assert_int_equal(r.rq.status, 0);
	tm_check(tm_buf, 300, TM_MAX_NLB, 0);
	nv_wait_for(tm_opened(&o) != -1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(o.err, 0);
	close(o.fd);
	nv_env_fini(&e);
}

static void test_map_break_waits_view(void **state)
{
	(void)state;
	tm_break_waits(true);
}

static void test_map_break_waits_ref(void **state)
{
	(void)state;
	tm_break_waits(false);
}

/*
 * A reload that changes the namespace's options opens the file again
 * while the mapped namespace holds it: that open breaks the old one's
 * lease (the reload waits for its switch), the new one is not mapped at
 * its open (the old one's fd was open), and takes the lease once the old
 * one has closed: its close wakes the new one's watcher, whose timed
 * retry is an hour away here.  The bytes written through the old
 * mapping are the new one's.
 */
static void test_map_reload(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nvmet_ns *n;
	char why[256];

	(void)state;
	setenv("RDMARW_NVMET_TMPFS_RETRY_MS", "3600000", 1);
	tm_make_file();
	tm_start(&e, 0);
	assert_true(nvmet_ns_mapped(nv_ns(&e, 1)));
	tm_write(&e, 1, 0, TM_MAX_NLB, 1);
	to = tm_to;
	to.ns[0].nguid[0] = 0x42; /* changed: opened again */
	assert_int_equal(nvmet_target_reload(e.t, &to, why, sizeof(why)), 0);
	n = nv_ns(&e, 1);
	assert_int_equal(n->nguid[0], 0x42);
	tm_read(&e, 2, 0, TM_MAX_NLB, 1); /* either side of the retake */
	nv_wait_for(nvmet_ns_mapped(n));
	tm_counts(n, 1, 0);
	tm_read(&e, 2, 0, TM_MAX_NLB, 1);
	tm_read(&e, 1, 4096, TM_MAX_NLB, 0);
	tm_write(&e, 2, 512, 8, 2);
	tm_read(&e, 1, 512, 8, 2);
	nv_env_fini(&e);
	unsetenv("RDMARW_NVMET_TMPFS_RETRY_MS");
}

/*
 * A reload while the file is open elsewhere (the namespace on the fd):
 * the new namespace is not mapped either, and takes the lease once the
 * other opener closes.
 */
static void test_map_reload_unmapped(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nvmet_ns *n;
	char why[256];
	int fd;

	(void)state;
	tm_make_file();
	fd = open(tm_path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	tm_start(&e, 0);
	assert_false(nvmet_ns_mapped(nv_ns(&e, 1)));
	tm_write(&e, 1, 0, TM_MAX_NLB, 1); /* through the fd */
	to = tm_to;
	to.ns[0].nguid[0] = 0x43;
	assert_int_equal(nvmet_target_reload(e.t, &to, why, sizeof(why)), 0);
	n = nv_ns(&e, 1);
	assert_int_equal(n->nguid[0], 0x43);
	assert_false(nvmet_ns_mapped(n)); /* the opener still has the file */
	tm_counts(n, 0, 0);
	tm_read(&e, 2, 0, TM_MAX_NLB, 1);
	tm_pwrite(fd, 256, TM_MAX_NLB, 2);
	tm_read(&e, 1, 256, TM_MAX_NLB, 2);
	close(fd);
	nv_wait_for(nvmet_ns_mapped(n));
	tm_counts(n, 1, 0);
	tm_read(&e, 2, 0, TM_MAX_NLB, 1);
	tm_read(&e, 1, 256, TM_MAX_NLB, 2);
	tm_read(&e, 2, 4097, TM_MAX_NLB, 0);
	tm_write(&e, 1, 512, TM_MAX_NLB, 3); /* through the mapping */
	tm_read(&e, 2, 512, TM_MAX_NLB, 3);
	nv_env_fini(&e);
	fd = open(tm_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	tm_pread_check(fd, 512, TM_MAX_NLB, 3);
	close(fd);
}

/* The fd path: not mapped, and the bytes right both ways. */
static void tm_fd_path(int fd)
{
	static struct nv_env e;

	tm_start(&e, 0);
	assert_false(nvmet_ns_mapped(nv_ns(&e, 1)));
	tm_read_some(&e, 0);
	tm_write(&e, 1, 0, TM_MAX_NLB, 1);
	tm_read(&e, 2, 0, TM_MAX_NLB, 1);
	if (fd >= 0)
		tm_pread_check(fd, 0, TM_MAX_NLB, 1);
	else /* $RDMARW_NVMET_TMPFS_MAP=0: no watcher, no lease */
		tm_stats_lease(&e, NULL, 0, 0);
	nv_env_fini(&e);
}

static void test_map_open_elsewhere(void **state)
{
	int fd;

	(void)state;
	tm_make_file();
	fd = open(tm_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	tm_fd_path(fd);
	close(fd);
}

/*
 * The file open elsewhere at the start: the fd serves; once the other
 * opener closes, the watcher takes the lease and the mapping serves; a
 * break then works as it does from the start.
 */
static void test_map_retake_open_elsewhere(void **state)
{
	static struct nv_env e;
	struct nvmet_ns *n;
	int fd;

	(void)state;
	tm_make_file();
	fd = open(tm_path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	tm_start(&e, 0);
	n = nv_ns(&e, 1);
	assert_false(nvmet_ns_mapped(n));
	tm_counts(n, 0, 0);
	tm_read_some(&e, 0);
	tm_write(&e, 1, 0, TM_MAX_NLB, 1); /* through the fd */
	tm_pread_check(fd, 0, TM_MAX_NLB, 1);
	tm_pwrite(fd, 256, TM_MAX_NLB, 2); /* the opener's */
	tm_read(&e, 2, 256, TM_MAX_NLB, 2);
	close(fd);
	nv_wait_for(nvmet_ns_mapped(n)); /* the watcher took the lease */
	tm_counts(n, 1, 0);
	tm_read(&e, 1, 0, TM_MAX_NLB, 1);
	tm_read(&e, 2, 256, TM_MAX_NLB, 2);
	tm_read(&e, 1, 1001, 8, 0);
	tm_read(&e, 2, TM_BLOCKS - TM_MAX_NLB, TM_MAX_NLB, 0);
	tm_write(&e, 1, 512, TM_MAX_NLB, 3); /* through the mapping */
	tm_read(&e, 2, 512, TM_MAX_NLB, 3);
	fd = tm_break();
	assert_false(nvmet_ns_mapped(n));
	tm_counts(n, 1, 1);
	tm_pread_check(fd, 512, TM_MAX_NLB, 3);
	tm_read(&e, 1, 256, TM_MAX_NLB, 2);
	close(fd);
	nv_env_fini(&e);
}

/*
 * A break before any I/O command, the lease taken again once the opener
 * closed, broken again, taken again: each switch keeps the bytes, either
 * side's.
 */
static void test_map_break_retake_break(void **state)
{
	static struct nv_env e;
	struct nvmet_ns *n;
	int fd;

	(void)state;
	tm_make_file();
	tm_start(&e, 0);
	n = nv_ns(&e, 1);
	assert_true(nvmet_ns_mapped(n));
	tm_counts(n, 1, 0);
	tm_stats_lease(&e, "mapping", 1, 0);
	fd = tm_break(); /* no I/O command yet */
	assert_false(nvmet_ns_mapped(n));
	tm_counts(n, 1, 1);
	tm_stats_lease(&e, "fd", 1, 1);
	tm_write(&e, 1, 0, TM_MAX_NLB, 1); /* through the fd */
	tm_pread_check(fd, 0, TM_MAX_NLB, 1);
	tm_pwrite(fd, 256, TM_MAX_NLB, 2);
	tm_read(&e, 2, 256, TM_MAX_NLB, 2);
	close(fd);
	nv_wait_for(nvmet_ns_mapped(n));
	tm_counts(n, 2, 1);
	tm_read(&e, 1, 0, TM_MAX_NLB, 1);
	tm_read(&e, 2, 256, TM_MAX_NLB, 2);
	tm_read(&e, 1, 512, TM_MAX_NLB, 0);
	tm_write(&e, 2, 768, TM_MAX_NLB, 3); /* through the mapping */
	fd = tm_break();
	assert_false(nvmet_ns_mapped(n));
	tm_counts(n, 2, 2);
	tm_pread_check(fd, 768, TM_MAX_NLB, 3);
	tm_pread_check(fd, 0, TM_MAX_NLB, 1);
	tm_pwrite(fd, 1024, TM_MAX_NLB, 4);
	tm_read(&e, 1, 1024, TM_MAX_NLB, 4);
	tm_read(&e, 2, 768, TM_MAX_NLB, 3);
	close(fd);
	nv_wait_for(nvmet_ns_mapped(n));
	tm_counts(n, 3, 2);
	tm_stats_lease(&e, "mapping", 3, 2);
	tm_read(&e, 2, 1024, TM_MAX_NLB, 4);
	tm_read(&e, 1, 768, TM_MAX_NLB, 3);
	tm_read(&e, 2, 2001, 8, 0);
	nv_env_fini(&e);
}

/*
 * The opener shrinks the file and closes: the lease could be taken, but
 * the file no longer covers the namespace, so the fd keeps serving (past
 * the end: zeroes; through the mapping that would be SIGBUS).  Once the
 * file is long enough again, the mapping serves, the new end's zeroes
 * too.
 */
static void test_map_retake_short_file(void **state)
{
	static struct nv_env e;
	struct nvmet_ns *n;
	int fd;

	(void)state;
	tm_make_file();
	tm_start(&e, 0);
	n = nv_ns(&e, 1);
	fd = tm_break();
	assert_false(nvmet_ns_mapped(n));
	tm_write(&e, 1, 0, 8, 1);
	assert_int_equal(ftruncate(fd, TM_NS_SIZE / 4), 0);
	close(fd);
	/* a retry or more (1 s each) find the file short */
	nanosleep(&(struct timespec){ 1, 500 * 1000 * 1000 }, NULL);
	assert_false(nvmet_ns_mapped(n));
	tm_counts(n, 1, 1);
	tm_read(&e, 1, TM_BLOCKS - 8, 8, 0xff);
	tm_read(&e, 2, 0, 8, 1);
	fd = open(tm_path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, TM_NS_SIZE), 0);
	close(fd);
	nv_wait_for(nvmet_ns_mapped(n));
	tm_counts(n, 2, 1);
	tm_read(&e, 1, TM_BLOCKS - TM_MAX_NLB, TM_MAX_NLB, 0xff);
	tm_read(&e, 2, 0, 8, 1);
	tm_read(&e, 1, 8, 8, 0);
	tm_write(&e, 2, TM_BLOCKS - 8, 8, 2);
	tm_read(&e, 1, TM_BLOCKS - 8, 8, 2);
	nv_env_fini(&e);
}

/*
 * A namespace opened alone (nvmet_ns_create(), as a reload prepares one):
 * no slot yet.  A break then leaves it mapped and the opener waiting (no
 * command can have it, but one may once the slot is set) until the slot
 * is set; then the switch, and the retake once the opener closed.  A
 * second one is closed while the opener waits: the opener proceeds.
 */
static void test_map_break_before_slot(void **state)
{
	static struct nvmet_subsys s;
	struct tm_opener o = { .fd = -1 };
	struct nvmet_target_opts to;
	struct nvmet_ns *ns;
	pthread_t th;
	int err = 0;

	(void)state;
	tm_make_file();
	nvmet_target_opts_init(&to);
	to.ns[0].type = NVMET_BACKEND_FILE;
	to.ns[0].path = tm_path;
	to.ns[0].size = TM_NS_SIZE;
	/* no ring: a ring's file is let go late, after the namespace closed */
	to.ns[0].io_engine = NVMET_IO_ENGINE_SYNC;
	spin_lock_init(&s.ns_lock);
	INIT_LIST_HEAD(&s.ns_caches);
	ns = nvmet_ns_create(NV_NQN, 1, &to.ns[0], &err);
	assert_non_null(ns);
	assert_true(nvmet_ns_mapped(ns));
	tm_counts(ns, 1, 0);
	assert_int_equal(pthread_create(&th, NULL, tm_open_thread, &o), 0);
	/* a few of the watcher's polls: it saw the break, waits for a slot */
	nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	assert_int_equal(tm_opened(&o), -1);
	assert_true(nvmet_ns_mapped(ns));
	__atomic_store_n(&ns->subsys, &s, __ATOMIC_RELEASE);
	nv_wait_for(tm_opened(&o) != -1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(o.err, 0);
	assert_false(nvmet_ns_mapped(ns));
	tm_counts(ns, 1, 1);
	tm_pread_check(o.fd, 0, TM_MAX_NLB, 0);
	close(o.fd);
	nv_wait_for(nvmet_ns_mapped(ns));
	tm_counts(ns, 2, 1);
	nvmet_ns_release(ns);

	/* closed while the opener waits: the lease goes with it */
	ns = nvmet_ns_create(NV_NQN, 1, &to.ns[0], &err);
	assert_non_null(ns);
	assert_true(nvmet_ns_mapped(ns));
	o.fd = -1;
	assert_int_equal(pthread_create(&th, NULL, tm_open_thread, &o), 0);
	nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	assert_int_equal(tm_opened(&o), -1);
	nvmet_ns_release(ns);
	nv_wait_for(tm_opened(&o) != -1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(o.err, 0);
	tm_pread_check(o.fd, 0, TM_MAX_NLB, 0);
	close(o.fd);
}

static void test_map_knob_off(void **state)
{
	(void)state;
	tm_make_file();
	setenv("RDMARW_NVMET_TMPFS_MAP", "0", 1);
	tm_fd_path(-1);
	unsetenv("RDMARW_NVMET_TMPFS_MAP");
}

/* argv[1]: run the cases that match this pattern only (cmocka's filter). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_map_bytes, tm_teardown),
		cmocka_unit_test_teardown(test_map_readonly, tm_teardown),
		cmocka_unit_test_teardown(test_map_lease_break, tm_teardown),
		cmocka_unit_test_teardown(test_map_break_waits_view,
					  tm_teardown),
		cmocka_unit_test_teardown(test_map_break_waits_ref,
					  tm_teardown),
		cmocka_unit_test_teardown(test_map_reload, tm_teardown),
		cmocka_unit_test_teardown(test_map_open_elsewhere, tm_teardown),
		cmocka_unit_test_teardown(test_map_knob_off, tm_teardown),
		cmocka_unit_test_teardown(test_map_retake_open_elsewhere,
					  tm_teardown),
		cmocka_unit_test_teardown(test_map_break_retake_break,
					  tm_teardown),
		cmocka_unit_test_teardown(test_map_retake_short_file,
					  tm_teardown),
		cmocka_unit_test_teardown(test_map_reload_unmapped,
					  tm_teardown),
		cmocka_unit_test_teardown(test_map_break_before_slot,
					  tm_teardown),
		cmocka_unit_test_teardown(test_map_readonly_retake,
					  tm_teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

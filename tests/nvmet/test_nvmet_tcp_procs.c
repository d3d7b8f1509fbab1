// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet and the in-process host in two processes over the TCP
 * transport (issue 28): the build's rdmarw-nvmet (RDMARW_NVMET) runs with
 * --soft siw-tcp on 127.0.0.1 and a port the kernel just handed out, its
 * namespace a file in a temporary directory (so that what was written
 * survives a kill -9); this process's host connects from a siw-tcp device
 * on 127.0.0.2.  READY=1 on a private NOTIFY_SOCKET says when it serves.
 *
 * Each 512-byte sector written carries its LBA and a generation number
 * (and bytes derived from both): the exact sectors written read back.
 * Then kill -9 of the target with writes of a new generation in flight:
 * every request completes once, with an error or not (no hang: the host's
 * I/O timeout and the hang guard bound it); the target restarted on the
 * same port, the host reconnects by itself, and every sector holds the
 * new generation where its write completed and the old or the new one
 * where it failed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/soft.h>

#include "nvme_host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NQN "nqn.2026-12.io.rdmarw:tcp-procs"
#define SECT 512u
#define NBLK 2048u /* the blocks the test writes (1 MiB) */
#define CHUNK 16u /* blocks per request */
#define HANG_S 120

static struct {
	const char *prog;
	char dir[64];
	char file[96];
	char notify[64];
	int nfd;
	u16 port;
	pid_t pid;
	struct soft_fabric *f;
	struct ib_device *dev;
	struct nvmeh_ctrl *c;
	u32 lba_size;
} t;

/*
 * A loopback port nobody holds, below the kernel's ephemeral range: the
 * target listens on it from another process a moment later, and the
 * suite's connections beside this test take their local ports from that
 * range (listen() on a port one of them took fails).
 */
static u16 free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	unsigned int lo = 32768, hi, span, i;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

	if (f) {
		if (fscanf(f, "%u %u", &lo, &hi) != 2)
			lo = 32768;
		fclose(f);
	}
	if (lo < 12000 || lo > 65535)
		lo = 12000;
	span = lo - 10000;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < 1000; i++) {
		u16 port = (u16)(10000 +
				 ((unsigned int)getpid() * 7919u + i * 131u) %
					 span);
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		int ret;

		assert_true(fd >= 0);
		a.sin_port = htons(port);
		ret = bind(fd, (struct sockaddr *)&a, sizeof(a));
		close(fd);
		if (!ret)
			return port;
	}
	fail_msg("no free loopback port below %u", lo);
	return 0;
}

static int bind_notify(const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	strcpy(sun.sun_path, name);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			  strlen(name));
	sun.sun_path[0] = '\0'; /* abstract */
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
	return fd;
}

/* Start the target; true once it said READY=1. */
static void target_start(void)
{
	char port[8], buf[1024];
	struct pollfd p = { .fd = t.nfd, .events = POLLIN };
	time_t start = time(NULL);

	snprintf(port, sizeof(port), "%u", t.port);
	t.pid = fork();
	assert_true(t.pid >= 0);
	if (!t.pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		setenv("NOTIFY_SOCKET", t.notify, 1);
		setenv("STATE_DIRECTORY", t.dir, 1);
		execl(t.prog, t.prog, "--soft", "siw-tcp", "--addr",
		      "127.0.0.1", "--port", port, "--file-size", "4M",
		      "--file", t.file, "--nqn", NQN, "--allow-any-host",
		      (char *)NULL);
		_exit(127);
	}
	for (;;) {
		ssize_t n;

		assert_true(time(NULL) - start < HANG_S); /* hang guard */
		assert_int_equal(waitpid(t.pid, NULL, WNOHANG), 0); /* alive */
		if (poll(&p, 1, 1000) != 1)
			continue;
		n = recv(t.nfd, buf, sizeof(buf) - 1, 0);
		assert_true(n > 0);
		buf[n] = '\0';
		if (strstr(buf, "READY=1"))
			return;
	}
}

static void target_kill(void)
{
	int st;

	assert_int_equal(kill(t.pid, SIGKILL), 0);
	assert_int_equal(waitpid(t.pid, &st, 0), t.pid);
	assert_true(WIFSIGNALED(st));
	t.pid = 0;
}

static void fill_sector(u8 *s, u64 lba, u64 gen)
{
	memcpy(s, &lba, 8);
	memcpy(s + 8, &gen, 8);
	for (u32 i = 16; i < SECT; i++)
		s[i] = (u8)(lba * 131 + gen * 17 + i);
}

/* The sector's generation, or -1 when it is not a valid tagged one. */
static int64_t sector_gen(const u8 *s, u64 lba)
{
	u8 want[SECT];
	u64 got_lba, gen;

	memcpy(&got_lba, s, 8);
	memcpy(&gen, s + 8, 8);
	if (got_lba != lba)
		return -1;
	fill_sector(want, lba, gen);
	return memcmp(want, s, SECT) ? -1 : (int64_t)gen;
}

static void fill(u8 *buf, u64 slba, u32 nlb, u64 gen)
{
	for (u32 i = 0; i < nlb * (t.lba_size / SECT); i++)
		fill_sector(buf + (size_t)i * SECT,
			    slba * (t.lba_size / SECT) + i, gen);
}

static int setup(void **state)
{
	struct sockaddr_in src = { .sin_family = AF_INET },
			   dst = { .sin_family = AF_INET };
	struct soft_profile p;
	struct nvmeh_opts o;

	(void)state;
	t.prog = getenv("RDMARW_NVMET");
	if (!t.prog || !*t.prog) {
		print_message("skipped: RDMARW_NVMET names no rdmarw-nvmet\n");
		return 0;
	}
	strcpy(t.dir, "/tmp/rdmarw-tcp-procs-XXXXXX");
	assert_non_null(mkdtemp(t.dir));
	snprintf(t.file, sizeof(t.file), "%s/ns.img", t.dir);
	snprintf(t.notify, sizeof(t.notify), "@rdmarw-tcp-procs-%d",
		 (int)getpid());
	t.nfd = bind_notify(t.notify);
	t.port = free_port();
	target_start();

	assert_int_equal(soft_profile_get("siw", &p), 0);
	p.tcp = true;
	t.f = soft_fabric_create();
	assert_false(IS_ERR_OR_NULL(t.f));
	t.dev = soft_device_create(t.f, "tcph%d", &p);
	assert_false(IS_ERR(t.dev));
	inet_pton(AF_INET, "127.0.0.2", &src.sin_addr);
	assert_int_equal(soft_device_add_addr(t.dev, (struct sockaddr *)&src),
			 0);
	inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
	dst.sin_port = htons(t.port);
	nvmeh_opts_init(&o, (struct sockaddr *)&src, (struct sockaddr *)&dst,
			NQN);
	o.nr_io_queues = 2;
	o.io_timeout_ms = 2000;
	o.reconnect_delay_ms = 100;
	o.max_reconnects = 600; /* a minute of attempts */
	t.c = nvmeh_ctrl_create(&o);
	assert_false(IS_ERR(t.c));
	t.lba_size = nvmeh_ctrl_info(t.c)->lba_size;
	assert_true(t.lba_size >= SECT && t.lba_size % SECT == 0);
	assert_true(nvmeh_ctrl_info(t.c)->ns_lbas * t.lba_size >=
		    (u64)NBLK * SECT);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!t.prog || !*t.prog)
		return 0;
	if (!IS_ERR_OR_NULL(t.c))
		nvmeh_ctrl_destroy(t.c);
	assert_int_equal(soft_device_destroy(t.dev), 0);
	assert_int_equal(soft_fabric_destroy(t.f), 0);
	if (t.pid)
		target_kill();
	close(t.nfd);
	unlink(t.file);
	{
		char id[128];

		/* what the target may keep there (its machine ID) */
		snprintf(id, sizeof(id), "rm -rf '%s'", t.dir);
		assert_int_equal(system(id), 0);
	}
	return 0;
}

static u32 blocks(void)
{
	return NBLK / (t.lba_size / SECT);
}

static void write_all(u64 gen)
{
	u32 nlb = CHUNK, n = blocks();
	u8 *buf = malloc((size_t)nlb * t.lba_size);

	assert_non_null(buf);
	for (u32 b = 0; b < n; b += nlb) {
		fill(buf, b, nlb, gen);
		assert_int_equal(
			nvmeh_rw(t.c, 1 + b / nlb % 2, true, b, nlb, buf), 0);
	}
	free(buf);
}

/* Read everything back: each sector's generation into @gens. */
static void read_all(int64_t *gens)
{
	u32 nlb = CHUNK, n = blocks(), spb = t.lba_size / SECT;
	u8 *buf = malloc((size_t)nlb * t.lba_size);

	assert_non_null(buf);
	for (u32 b = 0; b < n; b += nlb) {
		assert_int_equal(nvmeh_rw(t.c, 1, false, b, nlb, buf), 0);
		for (u32 i = 0; i < nlb * spb; i++)
			gens[(u64)b * spb + i] = sector_gen(
				buf + (size_t)i * SECT, (u64)b * spb + i);
	}
	free(buf);
}

static void test_lba_tagged(void **state)
{
	int64_t *gens = calloc(NBLK, sizeof(*gens));

	(void)state;
	if (!t.prog || !*t.prog)
		skip();
	assert_non_null(gens);
	write_all(1);
	read_all(gens);
	for (u32 i = 0; i < NBLK; i++)
		assert_int_equal(gens[i], 1);
	write_all(2);
	read_all(gens);
	for (u32 i = 0; i < NBLK; i++)
		assert_int_equal(gens[i], 2);
	free(gens);
}

/* ---- kill -9 mid-I/O ----------------------------------------------------- */

struct inflight {
	struct nvmeh_request rq;
	u8 *buf;
	u64 slba;
	int done; /* completions seen */
};

static int finished;

static void io_done(struct nvmeh_request *rq)
{
	struct inflight *f = rq->priv;

	__atomic_add_fetch(&f->done, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

/* Submit; a refusal (the host saw the target go) counts as a failure
 * completed at once. */
static void submit_write(struct inflight *f, u64 slba, u64 gen)
{
	int ret;

	struct nvme_command *cmd = (struct nvme_command *)f->rq.sqe;
	u32 nlb = CHUNK;

	memset(&f->rq, 0, sizeof(f->rq));
	f->slba = slba;
	fill(f->buf, slba, nlb, gen);
	cmd->rw.opcode = nvme_cmd_write;
	cmd->rw.nsid = cpu_to_le32(1);
	cmd->rw.slba = cpu_to_le64(slba);
	cmd->rw.length = cpu_to_le16((u16)(nlb - 1));
	f->rq.data = f->buf;
	f->rq.data_len = nlb * t.lba_size;
	f->rq.write = true;
	f->rq.done = io_done;
	f->rq.priv = f;
	ret = nvmeh_submit(t.c, 1 + (unsigned int)(slba / nlb % 2), &f->rq);
	if (ret) {
		assert_true(ret == -ENOTCONN || ret == -EBUSY);
		f->rq.error = ret;
		io_done(&f->rq);
	}
}

static void test_kill_restart(void **state)
{
	u32 n = blocks() / CHUNK, spb;
	struct inflight *fl = calloc(n, sizeof(*fl));
	int64_t *gens = calloc(NBLK, sizeof(*gens));
	time_t start;
	int ok = 0, failed = 0;

	(void)state;
	if (!t.prog || !*t.prog)
		skip();
	assert_non_null(fl);
	assert_non_null(gens);
	spb = t.lba_size / SECT;
	write_all(3);
	finished = 0;
	/* a quarter in flight; the kill once some of them are done; the
	 * rest after it */
	start = time(NULL);
	for (u32 i = 0; i < n; i++) {
		fl[i].buf = malloc((size_t)CHUNK * t.lba_size);
		assert_non_null(fl[i].buf);
		submit_write(&fl[i], (u64)i * CHUNK, 4);
		if (i != n / 4)
			continue;
		while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < 4) {
			assert_true(time(NULL) - start < HANG_S);
			sched_yield();
		}
		target_kill();
	}
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < (int)n) {
		assert_true(time(NULL) - start < HANG_S); /* hang guard */
		sched_yield();
	}
	for (u32 i = 0; i < n; i++) {
		assert_int_equal(fl[i].done, 1); /* each exactly once */
		if (!fl[i].rq.error && !fl[i].rq.status)
			ok++;
		else
			failed++;
	}
	assert_true(ok >= 4);
	assert_true(failed > 0); /* the kill hit I/O in flight */
	/* the same port again; the host reconnects by itself */
	target_start();
	assert_int_equal(nvmeh_ctrl_wait_live(t.c, HANG_S * 1000), 0);
	read_all(gens);
	for (u32 i = 0; i < n; i++) {
		bool done_ok = !fl[i].rq.error && !fl[i].rq.status;

		for (u32 s = 0; s < CHUNK * spb; s++) {
			int64_t g = gens[(u64)i * CHUNK * spb + s];

			if (done_ok)
				assert_int_equal(g, 4);
			else
				assert_true(g == 3 || g == 4);
		}
		free(fl[i].buf);
	}
	print_message("kill -9: %d writes done before, %d failed\n", ok,
		      failed);
	free(fl);
	free(gens);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lba_tagged),
		cmocka_unit_test(test_kill_restart),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}

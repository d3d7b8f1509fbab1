// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet's live counters (issue 27, Running; nvme/target/stats.c):
 * I/O of known counts and sizes on two namespaces and two queues, errors
 * of known statuses, then the JSON file (nvmet_target_stats_write())
 * parsed and its numbers checked exactly per subsystem, namespace,
 * controller and queue; the counts of a controller that went stay in its
 * subsystem's; the log summary has a line per object.
 */
#include "nvmet_env.h"
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#define NS_SIZE (4u << 20)

static char stats_path[64];

/* Read (or write, flush) on queue @qid; the status field or -errno. */
static int io(struct nv_env *e, unsigned int qid, u8 opcode, u32 nsid, u64 slba,
	      u32 nlb, void *buf)
{
	struct nvmeh_request rq;
	int ret;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] = opcode;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	if (opcode != nvme_cmd_flush) {
		nvme_put_le64(
			rq.sqe + offsetof(struct nvme_common_command, cdw10),
			slba);
		nvme_put_le32(
			rq.sqe + offsetof(struct nvme_common_command, cdw12),
			nlb - 1);
		rq.data = buf;
		rq.data_len = nlb * 512;
		rq.write = opcode == nvme_cmd_write;
	}
	ret = nvmeh_exec(e->c, qid, &rq);
	if (ret)
		return ret;
	if (rq.error)
		return rq.error;
	return rq.status & NVME_SCT_SC_MASK;
}

/* The stats file, parsed. */
static struct json *read_stats(struct nv_env *e)
{
	struct json *root;
	struct stat sb;
	char *text;
	int fd;

	assert_int_equal(nvmet_target_stats_write(e->t, stats_path), 0);
	fd = open(stats_path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644);
	text = malloc((size_t)sb.st_size + 1);
	assert_non_null(text);
	assert_int_equal(read(fd, text, (size_t)sb.st_size), sb.st_size);
	close(fd);
	text[sb.st_size] = '\0';
	if (nvmet_json_parse(text, (size_t)sb.st_size, &root))
		fail_msg("the stats file does not parse:\n%s", text);
	free(text);
	return root;
}

static u64 num(const struct json *o, const char *key)
{
	u64 v;

	if (nvmet_json_u64(nvmet_json_get(o, key), &v))
		fail_msg("no whole number %s", key);
	return v;
}

static u64 err_of(const struct json *o, const char *status)
{
	return num(nvmet_json_get(o, "io_error"), status);
}

/* The element of array @key of @o whose @field is @val. */
static const struct json *find(const struct json *o, const char *key,
			       const char *field, u64 val)
{
	const struct json *a = nvmet_json_get(o, key);
	u32 i;

	for (i = 0; i < nvmet_json_len(a); i++)
		if (num(nvmet_json_at(a, i), field) == val)
			return nvmet_json_at(a, i);
	fail_msg("no %s with %s %llu", key, field, (unsigned long long)val);
	return NULL;
}

struct expect {
	u64 reads, writes, flushes, other, bytes_read, bytes_written;
};

static void assert_counters(const struct json *o, const struct expect *x)
{
	assert_int_equal(num(o, "num_read_ops"), x->reads);
	assert_int_equal(num(o, "num_write_ops"), x->writes);
	assert_int_equal(num(o, "num_flush_ops"), x->flushes);
	assert_int_equal(num(o, "num_other_ops"), x->other);
	assert_int_equal(num(o, "bytes_read"), x->bytes_read);
	assert_int_equal(num(o, "bytes_written"), x->bytes_written);
}

/*
 * Namespace 1: 10 writes of 8 blocks (queue 1), 5 reads of 8 (queue 1),
 * 3 flushes (queue 2); namespace 2: 4 writes of 1 block and a read past
 * its end (queue 2); a read of NSID 7 (queue 1): exact counts everywhere.
 */
static void test_stats_counts(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts o;
	struct json *root;
	const struct json *sub, *ns, *ctrl, *q;
	u8 buf[4096];
	int i;

	(void)state;
	nvmet_target_opts_init(&o);
	o.addr = "10.0.0.2";
	o.port = NV_PORT;
	o.subnqn = NV_NQN;
	o.hosts = nv_hosts;
	o.nr_hosts = 1;
	o.ns[0].size = NS_SIZE;
	o.ns[1].type = NVMET_BACKEND_RAM;
	o.ns[1].size = NS_SIZE;
	nv_env_init(&e, "rxe", &(struct nv_cfg){ .topts = &o });
	memset(buf, 0x3c, sizeof(buf));
	for (i = 0; i < 10; i++)
		assert_int_equal(io(&e, 1, nvme_cmd_write, 1, 8 * i, 8, buf),
				 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(io(&e, 1, nvme_cmd_read, 1, 8 * i, 8, buf), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(io(&e, 2, nvme_cmd_flush, 1, 0, 0, NULL), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(io(&e, 2, nvme_cmd_write, 2, i, 1, buf), 0);
	assert_int_equal(io(&e, 2, nvme_cmd_read, 2, NS_SIZE / 512, 1, buf),
			 NVME_SC_LBA_RANGE);
	assert_int_equal(io(&e, 1, nvme_cmd_read, 7, 0, 1, buf),
			 NVME_SC_INVALID_NS);

	root = read_stats(&e);
	assert_int_equal(num(root, "version"), 1);
	assert_int_equal(num(nvmet_json_get(root, "target"), "current_ctrls"),
			 1);
	sub = nvmet_json_at(nvmet_json_get(root, "subsystems"), 0);
	assert_non_null(sub);
	assert_string_equal(nvmet_json_string(nvmet_json_get(sub, "nqn")),
			    NV_NQN);
	/* reads: 5 + the two that failed; writes 14 */
	assert_counters(sub, &(struct expect){ 7, 14, 3, 0, 5 * 4096,
					       10 * 4096 + 4 * 512 });
	assert_int_equal(err_of(sub, "lba_out_of_range"), 1);
	assert_int_equal(err_of(sub, "invalid_namespace"), 1);
	assert_int_equal(err_of(sub, "other"), 0);
	assert_int_equal(num(sub, "keep_alive_expiries"), 0);

	ns = find(sub, "namespaces", "nsid", 1);
	assert_counters(ns,
			&(struct expect){ 5, 10, 3, 0, 5 * 4096, 10 * 4096 });
	assert_string_equal(nvmet_json_string(nvmet_json_get(ns, "backend")),
			    "ram");
	assert_null(nvmet_json_get(ns, "lease")); /* a tmpfs file's only */
	assert_int_equal(err_of(ns, "lba_out_of_range"), 0);
	ns = find(sub, "namespaces", "nsid", 2);
	assert_counters(ns, &(struct expect){ 1, 4, 0, 0, 0, 4 * 512 });
	assert_int_equal(err_of(ns, "lba_out_of_range"), 1);
	assert_int_equal(err_of(ns, "invalid_namespace"), 0);

	ctrl = find(sub, "controllers", "cntlid", nvmeh_ctrl_info(e.c)->cntlid);
	assert_string_equal(nvmet_json_string(nvmet_json_get(ctrl, "hostnqn")),
			    NVMEH_DEFAULT_HOSTNQN);
	assert_int_equal(num(ctrl, "current_admin_qpairs"), 1);
	assert_int_equal(num(ctrl, "current_io_qpairs"), 2);
	assert_counters(ctrl, &(struct expect){ 7, 14, 3, 0, 5 * 4096,
						10 * 4096 + 4 * 512 });
	q = find(ctrl, "queues", "qid", 1);
	assert_counters(q,
			&(struct expect){ 6, 10, 0, 0, 5 * 4096, 10 * 4096 });
	assert_int_equal(err_of(q, "invalid_namespace"), 1);
	q = find(ctrl, "queues", "qid", 2);
	assert_counters(q, &(struct expect){ 1, 4, 3, 0, 0, 4 * 512 });
	assert_int_equal(err_of(q, "lba_out_of_range"), 1);
	q = find(ctrl, "queues", "qid", 0);
	assert_true(num(q, "num_admin_ops") > 0);
	assert_counters(q, &(struct expect){ 0 });
	nvmet_json_free(root);

	/* the controller goes: its counts stay with the subsystem's */
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	root = read_stats(&e);
	sub = nvmet_json_at(nvmet_json_get(root, "subsystems"), 0);
	assert_counters(sub, &(struct expect){ 7, 14, 3, 0, 5 * 4096,
					       10 * 4096 + 4 * 512 });
	assert_int_equal(nvmet_json_len(nvmet_json_get(sub, "controllers")), 0);
	ns = find(sub, "namespaces", "nsid", 2);
	assert_counters(ns, &(struct expect){ 1, 4, 0, 0, 0, 4 * 512 });
	nvmet_json_free(root);
	nv_env_fini(&e);
	unlink(stats_path);
}

/*
 * The target-wide command counters (nvmet_target_get_stats()) are summed
 * from per-queue counters when read (issue 30: no counter shared by two
 * queues on the data path): exact after 40 commands on each of two I/O
 * queues, none left in flight, and a controller that goes takes none of
 * its counts with it; the host's data-path counters likewise.
 */
static void test_stats_target_sums(void **state)
{
	static struct nv_env e;
	struct nvmet_target_stats st0, st1, st2;
	struct nvmeh_stats h0, h1;
	u8 buf[4096];
	int i;

	(void)state;
	nv_env_init(&e, "rxe", &(struct nv_cfg){ .nr_io_queues = 2 });
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(nvmet_target_get_stats(e.t, &st0), 0);
	nvmeh_ctrl_stats(e.c, &h0);
	for (i = 0; i < 40; i++) {
		assert_int_equal(io(&e, 1, nvme_cmd_write, 1, 8 * i, 8, buf),
				 0);
		assert_int_equal(io(&e, 2, nvme_cmd_read, 1, 8 * i, 8, buf), 0);
	}
	assert_int_equal(io(&e, 2, nvme_cmd_read, 1, e.ns_size / 512, 1, buf),
			 NVME_SC_LBA_RANGE);
	assert_int_equal(nvmet_target_get_stats(e.t, &st1), 0);
	assert_int_equal(st1.cmds - st0.cmds, 81);
	assert_int_equal(st1.errors - st0.errors, 1);
	/* a request is released when its response SEND completes, which
	 * may be after the host saw the response: bounded wait (5 s) */
	for (i = 0; i < 2500 && st1.reqs_inflight; i++) {
		nanosleep(&(struct timespec){ 0, 2 * 1000 * 1000 }, NULL);
		assert_int_equal(nvmet_target_get_stats(e.t, &st1), 0);
	}
	assert_int_equal(st1.reqs_inflight, 0);
	assert_int_equal(st1.cmds - st0.cmds, 81);
	/* the host's, per queue too: 40 in-capsule writes, 41 keyed reads */
	nvmeh_ctrl_stats(e.c, &h1);
	assert_int_equal(h1.inline_writes - h0.inline_writes, 40);
	assert_int_equal(h1.remote_invs - h0.remote_invs, 41);
	assert_int_equal(h1.local_invs, h0.local_invs);
	assert_int_equal(h1.bad_cqes + h1.aborted + h1.resets, 0);

	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	nv_wait_target(&e, 0, 0);
	assert_int_equal(nvmet_target_get_stats(e.t, &st2), 0);
	/* and the shutdown's own commands on the admin queue */
	assert_true(st2.cmds > st1.cmds);
	assert_int_equal(st2.reqs_inflight, 0);
	nv_env_fini(&e);
}

struct waiter {
	pthread_mutex_t m;
	pthread_cond_t cv;
	unsigned int left;
	int errors;
};

static void waiter_done(struct nvmeh_request *rq)
{
	struct waiter *w = rq->priv;

	pthread_mutex_lock(&w->m);
	if (rq->error || rq->status)
		w->errors++;
	w->left--;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->m);
}

/*
 * 32 reads of 128 KiB at once on one queue whose pool holds about one:
 * the commands wait for pages; the waits are counted the same on the
 * queue, the controller, the namespace, the subsystem and the target.
 */
static void test_stats_data_waits(void **state)
{
	static struct nv_env e;
	static struct nvmeh_request rq[32];
	static u8 buf[32][128 * 1024];
	struct nvmet_target_stats ts;
	struct nvmet_target_opts o;
	struct waiter w;
	struct json *root;
	const struct json *sub, *ctrl;
	u64 waits;
	unsigned int i;

	(void)state;
	nvmet_target_opts_init(&o);
	o.addr = "10.0.0.2";
	o.port = NV_PORT;
	o.subnqn = NV_NQN;
	o.hosts = nv_hosts;
	o.nr_hosts = 1;
	o.ns[0].size = NS_SIZE;
	o.mdts_max = 5; /* 128 KiB */
	o.data_buf_size = 4096;
	/* reads through the pool (a RAM namespace's go without it) */
	setenv("RDMARW_NVMET_ZCOPY", "0", 1);
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){
			    .topts = &o, .threaded = true, .queue_size = 32 });
	unsetenv("RDMARW_NVMET_ZCOPY");
	memset(&w, 0, sizeof(w));
	pthread_mutex_init(&w.m, NULL);
	pthread_cond_init(&w.cv, NULL);
	w.left = 32;
	for (i = 0; i < 32; i++) {
		memset(&rq[i], 0, sizeof(rq[i]));
		rq[i].sqe[offsetof(struct nvme_common_command, opcode)] =
			nvme_cmd_read;
		nvme_put_le32(
			rq[i].sqe + offsetof(struct nvme_common_command, nsid),
			1);
		nvme_put_le64(
			rq[i].sqe + offsetof(struct nvme_common_command, cdw10),
			256 * i);
		nvme_put_le32(
			rq[i].sqe + offsetof(struct nvme_common_command, cdw12),
			255);
		rq[i].data = buf[i];
		rq[i].data_len = sizeof(buf[i]);
		rq[i].done = waiter_done;
		rq[i].priv = &w;
		assert_int_equal(nvmeh_submit(e.c, 1, &rq[i]), 0);
	}
	pthread_mutex_lock(&w.m);
	while (w.left)
		pthread_cond_wait(&w.cv, &w.m);
	pthread_mutex_unlock(&w.m);
	assert_int_equal(w.errors, 0);

	assert_int_equal(nvmet_target_get_stats(e.t, &ts), 0);
	waits = ts.data_waits;
	assert_true(waits > 0);
	root = read_stats(&e);
	assert_int_equal(num(nvmet_json_get(root, "target"), "data_waits"),
			 waits);
	sub = nvmet_json_at(nvmet_json_get(root, "subsystems"), 0);
	assert_int_equal(num(sub, "data_waits"), waits);
	assert_int_equal(num(sub, "num_read_ops"), 32);
	assert_int_equal(num(sub, "bytes_read"), 32 * 128 * 1024);
	assert_int_equal(num(find(sub, "namespaces", "nsid", 1), "data_waits"),
			 waits);
	ctrl = nvmet_json_at(nvmet_json_get(sub, "controllers"), 0);
	assert_int_equal(num(ctrl, "data_waits"), waits);
	assert_int_equal(num(find(ctrl, "queues", "qid", 1), "data_waits"),
			 waits);
	nvmet_json_free(root);
	nv_env_fini(&e);
	pthread_mutex_destroy(&w.m);
	pthread_cond_destroy(&w.cv);
	unlink(stats_path);
}

/*
 * A host NQN with '"' and '\' is escaped in the JSON; the log summary has
 * a line per subsystem, namespace, controller and queue.
 */
static void test_stats_escape_and_log(void **state)
{
	static const char *const any[] = { "nqn.2026-01.x:a\"b\\c" };
	static struct nv_env e;
	struct nvmet_target_opts o;
	struct json *root;
	const struct json *sub, *ctrl;
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	nvmet_target_opts_init(&o);
	o.addr = "10.0.0.2";
	o.port = NV_PORT;
	o.subnqn = NV_NQN;
	o.hosts = any;
	o.nr_hosts = 1;
	o.ns[0].size = NS_SIZE;
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .topts = &o, .no_connect = true });
	snprintf(e.o.hostnqn, sizeof(e.o.hostnqn), "%s", any[0]);
	e.c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(e.c));
	root = read_stats(&e);
	sub = nvmet_json_at(nvmet_json_get(root, "subsystems"), 0);
	ctrl = nvmet_json_at(nvmet_json_get(sub, "controllers"), 0);
	assert_string_equal(nvmet_json_string(nvmet_json_get(ctrl, "hostnqn")),
			    any[0]);
	nvmet_json_free(root);

	m = open_memstream(&text, &len);
	assert_non_null(m);
	assert_int_equal(nvmet_target_stats_log(e.t, m), 0);
	fclose(m);
	assert_non_null(strstr(text, "stats: subsystem " NV_NQN ": reads"));
	assert_non_null(strstr(text, "stats: subsystem " NV_NQN " nsid 1:"));
	assert_non_null(strstr(text, "host nqn.2026-01.x:a\"b\\c: reads"));
	assert_non_null(strstr(text, " queue 0: "));
	assert_non_null(strstr(text, " queue 2: "));
	free(text);

	assert_int_equal(nvmet_target_stats_write(NULL, stats_path), -EINVAL);
	assert_int_equal(nvmet_target_stats_write(e.t, ""), -EINVAL);
	assert_int_equal(nvmet_target_stats_write(e.t, "/nonexistent/dir/s"),
			 -ENOENT);
	assert_int_equal(nvmet_target_stats_json(e.t, NULL), -EINVAL);
	nv_env_fini(&e);
	unlink(stats_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_stats_counts, nv_teardown),
		cmocka_unit_test_teardown(test_stats_escape_and_log,
					  nv_teardown),
		cmocka_unit_test_teardown(test_stats_data_waits, nv_teardown),
		cmocka_unit_test_teardown(test_stats_target_sums, nv_teardown),
	};
	const char *dir = getenv("TMPDIR");

	snprintf(stats_path, sizeof(stats_path), "%s/nvmet-stats-%d.json",
		 dir && dir[0] && strlen(dir) < 30 ? dir : "/tmp",
		 (int)getpid());
	return cmocka_run_group_tests(tests, NULL, NULL);
}

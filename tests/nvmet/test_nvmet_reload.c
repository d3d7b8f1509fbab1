// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reloading a running rdmarw-nvmet (issue 27, Running; nvme/target/
 * reload.c): namespaces added and removed with the Namespace Attribute
 * Changed event and the Changed Namespace List, I/O on another namespace
 * undisturbed, a removed namespace answering Invalid Namespace, a host no
 * longer allowed and a removed subsystem losing their controllers while
 * the others keep theirs, and bad configurations refused with their
 * reason and the old one serving.
 */
#include "nvmet_env.h"
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>

#define NS_SIZE (4u << 20)
#define OTHER_HOST "nqn.2026-01.io.rdmarw:other-host"
#define NQN_B "nqn.2026-01.io.rdmarw:b"
#define NQN_C "nqn.2026-01.io.rdmarw:c"

static const char *const two_hosts[] = { NVMEH_DEFAULT_HOSTNQN, OTHER_HOST };
static const char *const other_only[] = { OTHER_HOST };

/* The quick start with namespaces @mask (bit 0: NSID 1), 4 MiB of RAM. */
static void opts_ns(struct nvmet_target_opts *o, unsigned int mask)
{
	unsigned int i;

	nvmet_target_opts_init(o);
	o->addr = "10.0.0.2";
	o->port = NV_PORT;
	o->subnqn = NV_NQN;
	o->hosts = nv_hosts;
	o->nr_hosts = 1;
	memset(o->ns, 0, sizeof(o->ns));
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
		if (!(mask & (1u << i)))
			continue;
		o->ns[i].type = NVMET_BACKEND_RAM;
		o->ns[i].size = NS_SIZE;
	}
}

static void env_start(struct nv_env *e, const struct nvmet_target_opts *o,
		      bool threaded)
{
	nv_env_init(e, "rxe",
		    &(struct nv_cfg){ .threaded = threaded,
				      .topts = o,
				      .no_connect = true });
	e->ns_size = NS_SIZE;
	e->o.io_timeout_ms = 60000; /* an AER stays open */
	e->c = nvmeh_ctrl_create(&e->o);
	if (IS_ERR(e->c))
		fail_msg("nvmeh_ctrl_create: %ld", PTR_ERR(e->c));
}

/* ---- commands ---------------------------------------------------------------- */

static int admin(struct nvmeh_ctrl *c, u8 opcode, u32 nsid, u32 cdw10,
		 u32 cdw11, void *buf, u32 len, u64 *result)
{
	struct nvmeh_request rq;
	int ret;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] = opcode;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      cdw10);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw11),
		      cdw11);
	rq.data = buf;
	rq.data_len = len;
	ret = nvmeh_exec(c, 0, &rq);
	if (ret)
		return ret;
	if (rq.error)
		return rq.error;
	if (result)
		*result = rq.result;
	return rq.status & NVME_SCT_SC_MASK;
}

/* Read (or write) @nlb blocks of namespace @nsid; the status or -errno. */
static int ns_rw(struct nvmeh_ctrl *c, u32 nsid, bool write, u64 slba, u32 nlb,
		 void *buf, u16 *full_status)
{
	struct nvmeh_request rq;
	int ret;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		write ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	nvme_put_le64(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      slba);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      nlb - 1);
	rq.data = buf;
	rq.data_len = nlb * 512;
	rq.write = write;
	ret = nvmeh_exec(c, 1, &rq);
	if (ret)
		return ret;
	if (rq.error)
		return rq.error;
	if (full_status)
		*full_status = rq.status;
	return rq.status & NVME_SCT_SC_MASK;
}

/* 8 blocks of namespace @nsid on queue @qid; the status or -errno. */
static int nv_rw_q(struct nvmeh_ctrl *c, unsigned int qid, u32 nsid, bool write,
		   u64 slba, void *buf, u16 *full_status)
{
	struct nvmeh_request rq;
	int ret;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		write ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	nvme_put_le64(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      slba);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw12), 7);
	rq.data = buf;
	rq.data_len = 4096;
	rq.write = write;
	ret = nvmeh_exec(c, qid, &rq);
	if (ret)
		return ret;
	if (rq.error)
		return rq.error;
	if (full_status)
		*full_status = rq.status;
	return rq.status & NVME_SCT_SC_MASK;
}

/* The active namespace list: how many, into @ids (16 at most). */
static unsigned int ns_list(struct nvmeh_ctrl *c, u32 *ids)
{
	u8 *buf = calloc(1, 4096);
	unsigned int n = 0;

	assert_non_null(buf);
	assert_int_equal(admin(c, nvme_admin_identify, 0,
			       NVME_ID_CNS_NS_ACTIVE_LIST, 0, buf, 4096, NULL),
			 0);
	while (n < 16 && nvme_get_le32(buf + n * 4))
		ids[n] = nvme_get_le32(buf + n * 4), n++;
	free(buf);
	return n;
}

static void assert_ns_list(struct nvmeh_ctrl *c, unsigned int n, ...)
{
	u32 ids[16];
	unsigned int i;
	va_list ap;

	assert_int_equal(ns_list(c, ids), n);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		assert_int_equal(ids[i], va_arg(ap, u32));
	va_end(ap);
}

/* The Changed Namespace List log: how many entries, into @ids. */
static unsigned int changed_log(struct nvmeh_ctrl *c, u32 *ids)
{
	u8 *buf = calloc(1, 4096);
	unsigned int n = 0;

	assert_non_null(buf);
	memset(buf, 0xee, 4096);
	{
		assert_int_equal(admin(c, nvme_admin_get_log_page,
				       NVME_NSID_ALL,
				       NVME_LOG_CHANGED_NS | (1023u << 16), 0,
				       buf, 4096, NULL),
				 0);
		unsigned int k;

		while (n < 1024 && nvme_get_le32(buf + n * 4))
			ids[n] = nvme_get_le32(buf + n * 4), n++;
		for (k = n; k < 1024; k++) /* zeroes after the list */
			assert_int_equal(nvme_get_le32(buf + k * 4), 0);
	}
	free(buf);
	return n;
}

/* ---- the asynchronous event request -------------------------------------------- */

struct aer {
	struct nvmeh_request rq;
	pthread_mutex_t m;
	pthread_cond_t cv;
	bool done;
};

static void aer_done(struct nvmeh_request *rq)
{
	struct aer *a = rq->priv;

	pthread_mutex_lock(&a->m);
	a->done = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->m);
}

/* Enable the namespace notice and leave an AER with the controller. */
static void aer_arm(struct nvmeh_ctrl *c, struct aer *a)
{
	assert_int_equal(admin(c, nvme_admin_set_features, 0,
			       NVME_FEAT_ASYNC_EVENT, NVME_AEN_CFG_NS_ATTR,
			       NULL, 0, NULL),
			 0);
	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->m, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_admin_async_event;
	a->rq.done = aer_done;
	a->rq.priv = a;
	assert_int_equal(nvmeh_submit(c, 0, &a->rq), 0);
}

/* Has the AER completed (waiting up to @ms for it)? */
static bool aer_wait(struct aer *a, unsigned int ms)
{
	struct timespec ts;
	bool done;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&a->m);
	while (!a->done)
		if (pthread_cond_timedwait(&a->cv, &a->m, &ts))
			break;
	done = a->done;
	pthread_mutex_unlock(&a->m);
	return done;
}

/* Namespace Attribute Changed: notice (2), info 0, log page 04h. */
static void assert_ns_aen(struct aer *a)
{
	assert_true(aer_wait(a, 5000));
	assert_int_equal(a->rq.error, 0);
	assert_int_equal(a->rq.status, 0);
	assert_int_equal((u32)a->rq.result, 0x00040002);
}

static int reload(struct nv_env *e, const struct nvmet_target_opts *o,
		  char *why)
{
	return nvmet_target_reload(e->t, o, why, 256);
}

/* ---- namespaces --------------------------------------------------------------------- */

/* A namespace added: the event, the log lists it, it is active and works. */
static void test_reload_add_ns(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts o;
	u8 w[4096], r[4096];
	char why[256];
	struct aer a;
	u32 ids[1024];

	(void)state;
	opts_ns(&o, 0x3);
	env_start(&e, &o, false);
	assert_ns_list(e.c, 2, 1, 2);
	aer_arm(e.c, &a);
	assert_false(aer_wait(&a, 0));

	opts_ns(&o, 0x7);
	assert_int_equal(reload(&e, &o, why), 0);
	assert_string_equal(why, "");
	assert_ns_aen(&a);
	assert_int_equal(changed_log(e.c, ids), 1);
	assert_int_equal(ids[0], 3);
	assert_int_equal(changed_log(e.c, ids), 0); /* read: emptied */
	assert_ns_list(e.c, 3, 1, 2, 3);
	nv_fill(w, sizeof(w), 3);
	assert_int_equal(ns_rw(e.c, 3, true, 100, 8, w, NULL), 0);
	assert_int_equal(ns_rw(e.c, 3, false, 100, 8, r, NULL), 0);
	assert_memory_equal(w, r, sizeof(w));

	/* the same again: nothing changed, no event, nothing listed */
	aer_arm(e.c, &a);
	assert_int_equal(reload(&e, &o, why), 0);
	assert_int_equal(changed_log(e.c, ids), 0);
	assert_false(aer_wait(&a, 0));
	nv_env_fini(&e);
	pthread_mutex_destroy(&a.m);
	pthread_cond_destroy(&a.cv);
}

/* A namespace whose given NGUID changes is replaced: the event, listed. */
static void test_reload_new_nguid(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts o;
	char why[256];
	struct aer a;
	u32 ids[1024];

	(void)state;
	opts_ns(&o, 0x3);
	env_start(&e, &o, false);
	aer_arm(e.c, &a);
	o.ns[1].nguid[0] = 0x5a;
	assert_int_equal(reload(&e, &o, why), 0);
	assert_ns_aen(&a);
	assert_int_equal(changed_log(e.c, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_ns_list(e.c, 2, 1, 2);
	nv_env_fini(&e);
	pthread_mutex_destroy(&a.m);
	pthread_cond_destroy(&a.cv);
}

/*
 * A file namespace whose I/O engine or O_DIRECT choice changes is opened
 * again (the kernel refuses buffered_io on an enabled namespace: disable,
 * set, enable is what a reload does): the event and the log, each time.
 */
static void test_reload_engine(void **state)
{
	static struct nv_env e;
	static char path[64];
	struct nvmet_target_opts o;
	u8 w[4096], r[4096];
	char why[256];
	struct aer a;
	u32 ids[1024];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/nvmet-engine-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, NS_SIZE), 0);
	close(fd);
	opts_ns(&o, 0x1);
	o.ns[1].type = NVMET_BACKEND_FILE;
	o.ns[1].path = path;
	env_start(&e, &o, false);
	nv_fill(w, sizeof(w), 9);
	assert_int_equal(ns_rw(e.c, 2, true, 8, 8, w, NULL), 0);
	aer_arm(e.c, &a);
	o.ns[1].buffered = true;
	assert_int_equal(reload(&e, &o, why), 0);
	assert_ns_aen(&a);
	assert_int_equal(changed_log(e.c, ids), 1);
	assert_int_equal(ids[0], 2);
	aer_arm(e.c, &a);
	o.ns[1].io_engine = NVMET_IO_ENGINE_SYNC;
	assert_int_equal(reload(&e, &o, why), 0);
	assert_ns_aen(&a);
	assert_int_equal(changed_log(e.c, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_int_equal(ns_rw(e.c, 2, false, 8, 8, r, NULL), 0);
	assert_memory_equal(w, r, sizeof(w));
	nv_env_fini(&e);
	pthread_mutex_destroy(&a.m);
	pthread_cond_destroy(&a.cv);
	unlink(path);
}

/*
 * A file namespace grown by a reload: the event, the log lists it,
 * Identify reports the new size, the data written before is still there
 * and the new blocks take writes.
 */
static void test_reload_resize(void **state)
{
	static struct nv_env e;
	static char path[64];
	struct nvmet_target_opts o;
	u8 w[4096], r[4096];
	u8 *id = calloc(1, 4096);
	char why[256];
	struct aer a;
	u32 ids[1024];
	int fd;

	(void)state;
	assert_non_null(id);
	snprintf(path, sizeof(path), "/tmp/nvmet-resize-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	opts_ns(&o, 0x1);
	o.ns[0].type = NVMET_BACKEND_FILE;
	o.ns[0].path = path;
	o.ns[0].size = NS_SIZE;
	env_start(&e, &o, false);
	nv_fill(w, sizeof(w), 21);
	assert_int_equal(ns_rw(e.c, 1, true, 16, 8, w, NULL), 0);
	aer_arm(e.c, &a);

	o.ns[0].size = 2 * NS_SIZE;
	assert_int_equal(reload(&e, &o, why), 0);
	assert_ns_aen(&a);
	assert_int_equal(changed_log(e.c, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(admin(e.c, nvme_admin_identify, 1, NVME_ID_CNS_NS, 0,
			       id, 4096, NULL),
			 0);
	assert_int_equal(nvme_get_le64(id), 2 * NS_SIZE / 512); /* nsze */
	assert_int_equal(ns_rw(e.c, 1, false, 16, 8, r, NULL), 0);
	assert_memory_equal(w, r, sizeof(w));
	assert_int_equal(ns_rw(e.c, 1, true, NS_SIZE / 512 + 8, 8, w, NULL), 0);
	assert_int_equal(ns_rw(e.c, 1, false, NS_SIZE / 512 + 8, 8, r, NULL),
			 0);
	assert_memory_equal(w, r, sizeof(w));
	nv_env_fini(&e);
	unlink(path);
	free(id);
	pthread_mutex_destroy(&a.m);
	pthread_cond_destroy(&a.cv);
}

/* ---- I/O across the reload -------------------------------------------------------- */

/*
 * Writers and readers on one namespace, each slot on its own LBAs: a
 * block written holds its LBA and a generation, and every read must find
 * the block's last write.
 */
struct io_slot {
	struct io_run *run;
	struct nvmeh_request rq;
	u32 nsid;
	u64 lba; /* 8 blocks from here */
	u32 gen;
	bool reading;
	bool saw_invalid; /* its namespace went: every later one fails */
	int left;
	u8 buf[4096];
};

struct io_run {
	struct nvmeh_ctrl *c;
	struct io_slot slot[16];
	unsigned int nslots;
	pthread_mutex_t m;
	pthread_cond_t cv;
	unsigned int active;
	u64 ok, ok_ns2, invalid_ns, errors;
	/* a success sent after its slot saw Invalid Namespace */
	u64 invalid_then_ok;
	bool stop; /* each slot ends at its next completion */
	char why[160];
};

static void io_tag(struct io_slot *s)
{
	u32 i;

	for (i = 0; i < 8; i++) {
		u8 *b = s->buf + i * 512;

		memset(b, (u8)(s->gen + i), 512);
		nvme_put_le64(b, s->lba + i);
		nvme_put_le32(b + 8, s->gen);
		nvme_put_le32(b + 12, s->nsid);
	}
}

static bool io_check(struct io_slot *s)
{
	u32 i;

	for (i = 0; i < 8; i++) {
		const u8 *b = s->buf + i * 512;
		u32 k;

		if (nvme_get_le64(b) != s->lba + i ||
		    nvme_get_le32(b + 8) != s->gen ||
		    nvme_get_le32(b + 12) != s->nsid)
			return false;
		for (k = 16; k < 512; k++)
			if (b[k] != (u8)(s->gen + i))
				return false;
	}
	return true;
}

static void io_issue(struct io_slot *s);

static void io_end(struct io_run *run)
{
	pthread_mutex_lock(&run->m);
	run->active--;
	pthread_cond_broadcast(&run->cv);
	pthread_mutex_unlock(&run->m);
}

static void io_done(struct nvmeh_request *rq)
{
	struct io_slot *s = rq->priv;
	struct io_run *run = s->run;
	u16 sc = rq->status & NVME_SCT_SC_MASK;

	pthread_mutex_lock(&run->m);
	if (s->nsid == 2 && !rq->error && sc == NVME_SC_INVALID_NS &&
	    (rq->status & NVME_SC_DNR)) {
		run->invalid_ns++;
		s->saw_invalid = true;
	} else if (rq->error || rq->status) {
		if (!run->errors++)
			snprintf(run->why, sizeof(run->why),
				 "ns %u lba %llu: error %d status %#x", s->nsid,
				 (unsigned long long)s->lba, rq->error,
				 rq->status);
	} else if (s->reading && !io_check(s)) {
		if (!run->errors++)
			snprintf(run->why, sizeof(run->why),
				 "ns %u lba %llu gen %u: read back differs",
				 s->nsid, (unsigned long long)s->lba, s->gen);
	} else {
		run->ok++;
		if (s->nsid == 2)
			run->ok_ns2++;
		if (s->saw_invalid)
			run->invalid_then_ok++;
	}
	if (run->stop)
		s->left = 1;
	pthread_cond_broadcast(&run->cv);
	pthread_mutex_unlock(&run->m);
	if (--s->left <= 0) {
		io_end(run);
		return;
	}
	if (!rq->error && !rq->status) {
		if (s->reading)
			s->gen++;
		s->reading = !s->reading;
	}
	io_issue(s);
}

static void io_issue(struct io_slot *s)
{
	memset(&s->rq, 0, sizeof(s->rq));
	s->rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		s->reading ? nvme_cmd_read : nvme_cmd_write;
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, nsid),
		      s->nsid);
	nvme_put_le64(s->rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      s->lba);
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      7);
	s->rq.data = s->buf;
	s->rq.data_len = sizeof(s->buf);
	s->rq.write = !s->reading;
	s->rq.done = io_done;
	s->rq.priv = s;
	if (s->reading)
		memset(s->buf, 0x5a, sizeof(s->buf));
	else
		io_tag(s);
	if (nvmeh_submit(s->run->c, 1 + (unsigned int)(s - s->run->slot) % 2,
			 &s->rq)) {
		pthread_mutex_lock(&s->run->m);
		if (!s->run->errors++)
			snprintf(s->run->why, sizeof(s->run->why),
				 "submit failed");
		pthread_mutex_unlock(&s->run->m);
		io_end(s->run);
	}
}

/* @n slots on namespace 3, @n on namespace 2; @ops commands each. */
static void io_start(struct io_run *run, struct nvmeh_ctrl *c, unsigned int n,
		     int ops)
{
	unsigned int i;

	memset(run, 0, sizeof(*run));
	pthread_mutex_init(&run->m, NULL);
	pthread_cond_init(&run->cv, NULL);
	run->c = c;
	run->nslots = 2 * n;
	run->active = run->nslots;
	for (i = 0; i < run->nslots; i++) {
		struct io_slot *s = &run->slot[i];

		s->run = run;
		s->nsid = i < n ? 3 : 2;
		s->lba = 64 * (u64)i;
		s->gen = 1;
		s->left = ops;
	}
	for (i = 0; i < run->nslots; i++)
		io_issue(&run->slot[i]);
}

/* Until namespace 2 has completed @n commands (or the run ended). */
static void io_wait_ns2(struct io_run *run, u64 n)
{
	pthread_mutex_lock(&run->m);
	while (run->active && run->ok_ns2 < n)
		pthread_cond_wait(&run->cv, &run->m);
	pthread_mutex_unlock(&run->m);
}

static void io_wait(struct io_run *run)
{
	pthread_mutex_lock(&run->m);
	while (run->active)
		pthread_cond_wait(&run->cv, &run->m);
	pthread_mutex_unlock(&run->m);
}

/*
 * Namespace 2 removed while I/O runs on 2 and 3: its requests either
 * complete as usual (before the removal) or get Invalid Namespace with
 * DNR (after it), never anything else; namespace 3's I/O has no error and
 * reads back what it wrote; the event and the log name NSID 2.
 */
static void remove_ns_under_io(bool threaded)
{
	static struct nv_env e;
	static struct io_run run;
	struct nvmet_target_opts o;
	u8 buf[4096];
	char why[256];
	u16 st = 0;
	struct aer a;
	u32 ids[1024];

	opts_ns(&o, 0x7);
	env_start(&e, &o, threaded);
	aer_arm(e.c, &a);
	io_start(&run, e.c, 4, 400);
	io_wait_ns2(&run, 200); /* in the middle of it */
	opts_ns(&o, 0x5);
	assert_int_equal(reload(&e, &o, why), 0);
	io_wait(&run);
	if (run.errors)
		fail_msg("%llu errors: %s", (unsigned long long)run.errors,
			 run.why);
	assert_int_equal(run.invalid_then_ok, 0);
	/* every command on namespace 3, namespace 2's until the removal */
	assert_true(run.ok >= 4 * 400 + 200);
	assert_true(run.invalid_ns > 0);
	assert_ns_aen(&a);
	assert_int_equal(changed_log(e.c, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_ns_list(e.c, 2, 1, 3);
	assert_int_equal(ns_rw(e.c, 2, false, 0, 8, buf, &st),
			 NVME_SC_INVALID_NS);
	assert_true(st & NVME_SC_DNR);
	assert_int_equal(admin(e.c, nvme_admin_identify, 2, NVME_ID_CNS_NS, 0,
			       buf, 4096, NULL),
			 0);
	assert_int_equal(nvme_get_le64(buf), 0); /* inactive: zeroes */
	/* namespace 3 still holds every slot's last generation */
	for (unsigned int i = 0; i < 4; i++) {
		struct io_slot *s = &run.slot[i];

		/* @gen is the last command's, read or write */
		assert_int_equal(ns_rw(e.c, 3, false, s->lba, 8, s->buf, NULL),
				 0);
		assert_true(io_check(s));
	}
	nv_env_fini(&e);
	pthread_mutex_destroy(&run.m);
	pthread_cond_destroy(&run.cv);
	pthread_mutex_destroy(&a.m);
	pthread_cond_destroy(&a.cv);
}

static void test_reload_remove_ns_io(void **state)
{
	(void)state;
	remove_ns_under_io(false);
}

static void test_reload_remove_ns_io_threaded(void **state)
{
	(void)state;
	remove_ns_under_io(true);
}

/*
 * Namespace 2 removed and added again, ten times, while 8 slots write and
 * read back namespace 3 on both I/O queues: namespace 3's I/O never
 * fails and reads back its own LBAs; between two reloads namespace 2
 * answers on both queues as the configuration says: Invalid Namespace
 * once removed (no queue's view of the slots still finds it), and once
 * added again the new namespace (zeroes, then what was just written), not
 * the old one.
 */
static void flap_ns_under_io(bool threaded)
{
	static struct nv_env e;
	static struct io_run run;
	struct nvmet_target_opts o;
	u8 w[4096], r[4096], zero[4096] = { 0 };
	char why[256];
	unsigned int i, q;

	opts_ns(&o, 0x7);
	env_start(&e, &o, threaded);
	memset(&run, 0, sizeof(run));
	pthread_mutex_init(&run.m, NULL);
	pthread_cond_init(&run.cv, NULL);
	run.c = e.c;
	run.nslots = 8;
	run.active = run.nslots;
	for (i = 0; i < run.nslots; i++) {
		run.slot[i] = (struct io_slot){ .run = &run,
						.nsid = 3,
						.lba = 64 * (u64)i,
						.gen = 1,
						.left = 100000 };
	}
	for (i = 0; i < run.nslots; i++)
		io_issue(&run.slot[i]);
	for (i = 0; i < 10; i++) {
		opts_ns(&o, 0x5);
		assert_int_equal(reload(&e, &o, why), 0);
		for (q = 1; q <= 2; q++) {
			u16 st = 0;
			int ret = nv_rw_q(e.c, q, 2, false, 0, r, &st);

			assert_int_equal(ret, NVME_SC_INVALID_NS);
			assert_true(st & NVME_SC_DNR);
		}
		opts_ns(&o, 0x7);
		assert_int_equal(reload(&e, &o, why), 0);
		for (q = 1; q <= 2; q++) {
			assert_int_equal(
				nv_rw_q(e.c, q, 2, false, 8 * q, r, NULL), 0);
			assert_memory_equal(r, zero, sizeof(r)); /* a new one */
			nv_fill(w, sizeof(w), (u8)(i * 2 + q));
			assert_int_equal(
				nv_rw_q(e.c, q, 2, true, 8 * q, w, NULL), 0);
			assert_int_equal(
				nv_rw_q(e.c, q, 2, false, 8 * q, r, NULL), 0);
			assert_memory_equal(r, w, sizeof(r));
		}
	}
	pthread_mutex_lock(&run.m); /* let them end */
	run.stop = true;
	pthread_mutex_unlock(&run.m);
	io_wait(&run);
	if (run.errors)
		fail_msg("%llu errors: %s", (unsigned long long)run.errors,
			 run.why);
	assert_true(run.ok > 0);
	assert_int_equal(run.invalid_ns, 0);
	nv_env_fini(&e);
	pthread_mutex_destroy(&run.m);
	pthread_cond_destroy(&run.cv);
}

static void test_reload_flap_ns_io(void **state)
{
	(void)state;
	flap_ns_under_io(false);
}

static void test_reload_flap_ns_io_threaded(void **state)
{
	(void)state;
	flap_ns_under_io(true);
}

/* How many of this process's descriptors are open on @path. */
static unsigned int fds_on(const char *path)
{
	char target[PATH_MAX];
	unsigned int n = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	ssize_t len;

	assert_non_null(dir);
	while ((d = readdir(dir))) {
		len = readlinkat(dirfd(dir), d->d_name, target,
				 sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strcmp(target, path);
	}
	closedir(dir);
	return n;
}

/*
 * A namespace removed while both I/O queues are idle: each queue has
 * looked it up (its view of the namespaces holds it), then nothing runs.
 * The reload still closes it (its file is no longer open) and frees it:
 * the removal's grace period does not wait for a command that an idle
 * queue would never run (nvmet_subsys_ns_sync()).
 */
static void remove_ns_idle(bool threaded)
{
	static struct nv_env e;
	static char path[64];
	struct nvmet_target_opts o;
	u8 w[4096], r[4096];
	char why[256];
	unsigned int q;
	u16 st = 0;
	int fd;

	snprintf(path, sizeof(path), "/tmp/nvmet-idle-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, NS_SIZE), 0);
	close(fd);
	opts_ns(&o, 0x1);
	o.ns[1].type = NVMET_BACKEND_FILE;
	o.ns[1].path = path;
	env_start(&e, &o, threaded);
	for (q = 1; q <= 2; q++) {
		struct nvmeh_request rq;

		nv_fill(w, sizeof(w), q);
		memset(&rq, 0, sizeof(rq));
		rq.sqe[offsetof(struct nvme_common_command, opcode)] =
			nvme_cmd_write;
		nvme_put_le32(
			rq.sqe + offsetof(struct nvme_common_command, nsid), 2);
		nvme_put_le64(
			rq.sqe + offsetof(struct nvme_common_command, cdw10),
			8 * q);
		nvme_put_le32(
			rq.sqe + offsetof(struct nvme_common_command, cdw12),
			7);
		rq.data = w;
		rq.data_len = sizeof(w);
		rq.write = true;
		assert_int_equal(nvmeh_exec(e.c, q, &rq), 0);
		assert_int_equal(rq.error, 0);
		assert_int_equal(rq.status, 0);
	}
	/* namespace 1 on queue 1 too: the view is in use until now */
	nv_fill(w, sizeof(w), 7);
	assert_int_equal(ns_rw(e.c, 1, true, 0, 8, w, NULL), 0);
	assert_true(fds_on(path) >= 1);
	opts_ns(&o, 0x1);
	assert_int_equal(reload(&e, &o, why), 0);
	assert_int_equal(fds_on(path), 0); /* closed, not left open */
	assert_int_equal(ns_rw(e.c, 2, false, 8, 8, r, &st),
			 NVME_SC_INVALID_NS);
	assert_true(st & NVME_SC_DNR);
	assert_int_equal(ns_rw(e.c, 1, false, 0, 8, r, NULL), 0);
	assert_memory_equal(w, r, sizeof(w));
	nv_env_fini(&e);
	unlink(path);
}

static void test_reload_remove_ns_idle(void **state)
{
	(void)state;
	remove_ns_idle(false);
}

static void test_reload_remove_ns_idle_threaded(void **state)
{
	(void)state;
	remove_ns_idle(true);
}

/* ---- hosts and subsystems ------------------------------------------------------------ */

static bool wait_dead(struct nvmeh_ctrl *c)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int i;

	for (i = 0; i < 2500; i++) {
		if (!nvmeh_ctrl_live(c))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * A host taken off the allowed list loses its controller and cannot
 * connect again; the other host's controller keeps its queues and data.
 */
static void test_reload_remove_host(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts o;
	struct nvmeh_stats hs;
	struct nvmeh_opts ho;
	struct nvmeh_ctrl *other;
	u8 w[4096], r[4096];
	char why[256];
	u16 cntlid;

	(void)state;
	opts_ns(&o, 0x1);
	o.hosts = two_hosts;
	o.nr_hosts = 2;
	env_start(&e, &o, true);
	ho = e.o;
	snprintf(ho.hostnqn, sizeof(ho.hostnqn), "%s", OTHER_HOST);
	ho.hostid[0] ^= 1;
	other = nvmeh_ctrl_create(&ho);
	assert_false(IS_ERR(other));
	cntlid = nvmeh_ctrl_info(other)->cntlid;
	nv_fill(w, sizeof(w), 9);
	assert_int_equal(nvmeh_rw(other, 1, true, 8, 8, w), 0);
	/* no reconnect in the test's time: the refusal is checked below */
	nvmeh_ctrl_destroy(e.c);
	e.o.reconnect_delay_ms = 600000;
	e.c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(e.c));
	nv_wait_target(&e, 2, 6);

	o.hosts = other_only;
	o.nr_hosts = 1;
	assert_int_equal(reload(&e, &o, why), 0);
	assert_true(wait_dead(e.c));
	nv_wait_target(&e, 1, 3);
	assert_true(nvmeh_ctrl_live(other));
	nvmeh_ctrl_stats(other, &hs);
	assert_int_equal(hs.resets, 0);
	assert_int_equal(nvmeh_ctrl_info(other)->cntlid, cntlid);
	assert_int_equal(nvmeh_rw(other, 1, false, 8, 8, r), 0);
	assert_memory_equal(w, r, sizeof(w));
	nvmeh_ctrl_destroy(e.c);
	e.c = nvmeh_ctrl_create(&e.o);
	assert_true(IS_ERR(e.c));
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_CONNECT_INVALID_HOST | NVME_SC_DNR);
	e.c = NULL;
	nvmeh_ctrl_destroy(other);
	nv_env_fini(&e);
}

/*
 * Subsystem B removed and C added in one reload: B's controller goes, A's
 * keeps its queues, C takes Connects.
 */
static void test_reload_subsystems(void **state)
{
	static struct nv_env e;
	struct nvmet_subsys_opts so[2];
	struct nvmet_target_opts o;
	struct nvmeh_stats hs;
	struct nvmeh_opts ho;
	struct nvmeh_ctrl *b, *c;
	u8 w[4096], r[4096];
	char why[256];

	(void)state;
	opts_ns(&o, 0x1);
	memset(so, 0, sizeof(so));
	so[0].nqn = NV_NQN;
	so[0].ns[0] = o.ns[0];
	so[0].hosts = nv_hosts;
	so[0].nr_hosts = 1;
	so[1] = so[0];
	so[1].nqn = NQN_B;
	o.subsys = so;
	o.nr_subsys = 2;
	env_start(&e, &o, true);
	ho = nv_host_opts(&e, NV_PORT, NQN_B);
	ho.reconnect_delay_ms = 600000;
	b = nvmeh_ctrl_create(&ho);
	assert_false(IS_ERR(b));
	nv_fill(w, sizeof(w), 5);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 0, 8, w), 0);

	so[1].nqn = NQN_C;
	assert_int_equal(reload(&e, &o, why), 0);
	assert_true(wait_dead(b));
	nv_wait_target(&e, 1, 3);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 0);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 8, r), 0);
	assert_memory_equal(w, r, sizeof(w));
	nvmeh_ctrl_destroy(b);
	b = nvmeh_ctrl_create(&ho);
	assert_true(IS_ERR(b));
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR);
	ho = nv_host_opts(&e, NV_PORT, NQN_C);
	c = nvmeh_ctrl_create(&ho);
	assert_false(IS_ERR(c));
	assert_int_equal(nvmeh_rw(c, 1, false, 0, 8, r), 0);
	nvmeh_ctrl_destroy(c);
	nv_env_fini(&e);
}

/*
 * Two subsystems: a namespace added to B notifies B's controller only;
 * nvmet_target_subsys_ns_changed() reaches A's (not only the first
 * subsystem's, as nvmet_target_ns_changed()).
 */
static void test_reload_ns_per_subsys(void **state)
{
	static struct nv_env e;
	struct nvmet_subsys_opts so[2];
	struct nvmet_target_opts o;
	struct nvmeh_opts ho;
	struct nvmeh_ctrl *b;
	struct aer aa, ab;
	char why[256];
	u32 ids[1024];

	(void)state;
	opts_ns(&o, 0x1);
	memset(so, 0, sizeof(so));
	so[0].nqn = NV_NQN;
	so[0].ns[0] = o.ns[0];
	so[0].hosts = nv_hosts;
	so[0].nr_hosts = 1;
	so[1] = so[0];
	so[1].nqn = NQN_B;
	o.subsys = so;
	o.nr_subsys = 2;
	env_start(&e, &o, true);
	ho = nv_host_opts(&e, NV_PORT, NQN_B);
	ho.io_timeout_ms = 60000;
	b = nvmeh_ctrl_create(&ho);
	assert_false(IS_ERR(b));
	aer_arm(e.c, &aa);
	aer_arm(b, &ab);

	so[1].ns[1] = so[1].ns[0];
	assert_int_equal(reload(&e, &o, why), 0);
	assert_ns_aen(&ab);
	assert_int_equal(changed_log(b, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_ns_list(b, 2, 1, 2);
	assert_false(aer_wait(&aa, 0)); /* A never gets one */
	assert_int_equal(changed_log(e.c, ids), 0);
	assert_ns_list(e.c, 1, 1);

	assert_int_equal(nvmet_target_subsys_ns_changed(e.t, NQN_B, 3),
			 -EINVAL);
	assert_int_equal(nvmet_target_subsys_ns_changed(e.t, "nqn.x:none", 1),
			 -EINVAL);
	assert_int_equal(nvmet_target_subsys_ns_changed(NULL, NQN_B, 1),
			 -EINVAL);
	assert_int_equal(nvmet_target_subsys_ns_changed(e.t, NV_NQN, 1), 0);
	assert_ns_aen(&aa);
	assert_int_equal(changed_log(e.c, ids), 1);
	assert_int_equal(ids[0], 1);
	nvmeh_ctrl_destroy(b);
	nv_env_fini(&e);
	pthread_mutex_destroy(&aa.m);
	pthread_cond_destroy(&aa.cv);
	pthread_mutex_destroy(&ab.m);
	pthread_cond_destroy(&ab.cv);
}

/*
 * A port added by a reload takes Connects at once; removed again, its
 * controller goes while the first port's keeps its queues; a port that
 * cannot listen is refused with its address.
 */
static void test_reload_ports(void **state)
{
	static struct nv_env e;
	static const char *const subs[] = { NV_NQN };
	struct nvmet_port_opts po[2];
	struct nvmet_target_opts o;
	struct nvmeh_stats hs;
	struct nvmeh_opts ho;
	struct nvmeh_ctrl *c2;
	u8 w[4096], r[4096];
	char why[256];

	(void)state;
	opts_ns(&o, 0x1);
	memset(po, 0, sizeof(po));
	po[0].addr = "10.0.0.2";
	po[0].port = NV_PORT;
	po[1] = po[0];
	po[1].port = NV_PORT + 1;
	po[1].subsys = subs;
	po[1].nr_subsys = 1;
	o.ports = po;
	o.nr_ports = 1;
	env_start(&e, &o, true);
	ho = nv_host_opts(&e, NV_PORT + 1, NV_NQN);
	ho.reconnect_delay_ms = 600000;
	c2 = nvmeh_ctrl_create(&ho);
	assert_true(IS_ERR(c2)); /* nobody listens there yet */
	assert_int_equal(nvmeh_last_status(NULL), 0); /* no Connect sent */

	o.nr_ports = 2;
	assert_int_equal(reload(&e, &o, why), 0);
	c2 = nvmeh_ctrl_create(&ho);
	assert_false(IS_ERR(c2));
	nv_fill(w, sizeof(w), 31);
	assert_int_equal(nvmeh_rw(c2, 1, true, 0, 8, w), 0);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 8, r), 0);
	assert_memory_equal(w, r, sizeof(w)); /* one namespace, two ports */

	o.nr_ports = 1;
	assert_int_equal(reload(&e, &o, why), 0);
	assert_true(wait_dead(c2));
	nv_wait_target(&e, 1, 3);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 0);
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 8, r), 0);
	assert_memory_equal(w, r, sizeof(w));
	nvmeh_ctrl_destroy(c2);
	c2 = nvmeh_ctrl_create(&ho);
	assert_true(IS_ERR(c2));
	assert_int_equal(nvmeh_last_status(NULL), 0); /* not listening */

	po[1].addr = "10.0.0.9"; /* no device answers to it */
	o.nr_ports = 2;
	assert_int_equal(reload(&e, &o, why), -EADDRNOTAVAIL);
	assert_non_null(strstr(why, "10.0.0.9"));
	assert_int_equal(nvmeh_rw(e.c, 1, false, 0, 8, r), 0);
	nv_env_fini(&e);
}

/* ---- refused configurations ------------------------------------------------------------ */

/* Still what it was: namespaces 1 and 2, data in place. */
static void assert_serving(struct nv_env *e, const u8 *w)
{
	u8 r[4096];

	assert_ns_list(e->c, 2, 1, 2);
	assert_int_equal(ns_rw(e->c, 1, false, 40, 8, r, NULL), 0);
	assert_memory_equal(w, r, sizeof(r));
	assert_true(nvmeh_ctrl_live(e->c));
}

/*
 * A missing backing file, a setting that cannot change live, an invalid
 * host NQN: refused with the reason, nothing changed.
 */
static void test_reload_refused(void **state)
{
	static struct nv_env e;
	static const char *const bad_host[] = { "not an nqn\x01" };
	struct nvmet_target_opts o;
	struct nvmeh_stats hs;
	char why[256];
	u8 w[4096];

	(void)state;
	opts_ns(&o, 0x3);
	env_start(&e, &o, false);
	nv_fill(w, sizeof(w), 11);
	assert_int_equal(ns_rw(e.c, 1, true, 40, 8, w, NULL), 0);

	/* namespace 2 removed, 3 of a file that is not there */
	opts_ns(&o, 0x1);
	o.ns[2].type = NVMET_BACKEND_FILE;
	o.ns[2].path = "/nonexistent/rdmarw-reload.img";
	assert_int_equal(reload(&e, &o, why), -ENOENT);
	assert_non_null(strstr(why, "namespace 3"));
	assert_non_null(strstr(why, "/nonexistent/rdmarw-reload.img"));
	assert_non_null(strstr(why, strerror(ENOENT)));
	assert_serving(&e, w);

	opts_ns(&o, 0x1);
	o.max_queue_size = 64;
	assert_int_equal(reload(&e, &o, why), -EOPNOTSUPP);
	assert_non_null(strstr(why, "max_queue_size"));
	assert_serving(&e, w);

	opts_ns(&o, 0x1);
	o.hosts = bad_host;
	assert_int_equal(reload(&e, &o, why), -EINVAL);
	assert_non_null(strstr(why, "invalid"));
	assert_serving(&e, w);

	opts_ns(&o, 0x1);
	o.serial = "ANOTHER";
	assert_int_equal(reload(&e, &o, why), -EOPNOTSUPP);
	assert_non_null(strstr(why, "serial"));
	assert_serving(&e, w);

	assert_int_equal(nvmet_target_reload(NULL, &o, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(nvmet_target_reload(e.t, NULL, NULL, 0), -EINVAL);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 0);
	nv_env_fini(&e);
}

/* ---- the configuration file read again (SIGHUP's path) --------------------------------- */

static char img[3][64], json_path[64], err_path[64];

static void make_file(char *path, size_t len, off_t size)
{
	int fd;

	snprintf(path, len, "/tmp/nvmet-reload-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

/* nvmetcli's JSON: subsystem NV_NQN with namespaces @a and @b (NSIDs). */
static void write_json(const char *extra, u32 a, const char *pa, u32 b,
		       const char *pb)
{
	FILE *f = fopen(json_path, "w");

	assert_non_null(f);
	fprintf(f,
		"{\n \"hosts\": [ { \"nqn\": \"%s\" } ],\n"
		" \"ports\": [ { \"addr\": { \"adrfam\": \"ipv4\",\n"
		"   \"traddr\": \"10.0.0.2\", \"trsvcid\": \"%u\",\n"
		"   \"trtype\": \"rdma\" }, \"portid\": 1,\n"
		"   \"subsystems\": [ \"%s\" ] } ],\n"
		" \"subsystems\": [ { \"allowed_hosts\": [ \"%s\" ],\n"
		"   \"attr\": { \"allow_any_host\": \"0\" },\n"
		"   \"namespaces\": [\n"
		"    { \"device\": { \"path\": \"%s\" }, \"enable\": 1,"
		" \"nsid\": %u }%s\n",
		NVMEH_DEFAULT_HOSTNQN, NV_PORT, NV_NQN, NVMEH_DEFAULT_HOSTNQN,
		pa, a, pb ? "," : "");
	if (pb)
		fprintf(f,
			"    { \"device\": { \"path\": \"%s\" }, \"enable\": 1,"
			" \"nsid\": %u }\n",
			pb, b);
	fprintf(f, "   ], \"nqn\": \"%s\" } ]%s\n}\n", NV_NQN, extra);
	assert_int_equal(fclose(f), 0);
}

/* nvmet_config_reload() with stderr into err_path; what it printed. */
static int reload_file(struct nv_env *e, const struct nvmet_config *start,
		       char *why, char *printed, size_t len)
{
	static char prog[] = "rdmarw-nvmet", opt[] = "--config";
	char *argv[] = { prog, opt, json_path, NULL };
	int saved, fd, ret;
	ssize_t n;

	fflush(stderr);
	saved = dup(2);
	fd = open(err_path, O_WRONLY | O_TRUNC);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	ret = nvmet_config_reload(e->t, start, 3, argv, why, 256);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fd = open(err_path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, printed, len - 1);
	close(fd);
	printed[n > 0 ? n : 0] = '\0';
	return ret;
}

/*
 * The JSON read again: a syntax error and two namespaces of one NSID are
 * refused (the reader names the cause), the target serves on; a good one
 * applies (namespace 2 added).
 */
static void test_reload_json(void **state)
{
	static struct nv_env e;
	static struct nvmet_config c;
	char why[256], printed[4096];
	struct nvmet_target_opts o;
	u8 w[4096], r[4096];
	struct aer a;

	(void)state;
	make_file(img[0], sizeof(img[0]), NS_SIZE);
	make_file(img[1], sizeof(img[1]), NS_SIZE);
	make_file(err_path, sizeof(err_path), 0);
	make_file(json_path, sizeof(json_path), 0);
	write_json("", 1, img[0], 0, NULL);
	nvmet_config_init(&c);
	assert_int_equal(nvmet_config_read(&c, json_path), 0);
	o = c.o;
	env_start(&e, &o, false);
	assert_ns_list(e.c, 1, 1);
	nv_fill(w, sizeof(w), 17);
	assert_int_equal(ns_rw(e.c, 1, true, 0, 8, w, NULL), 0);
	aer_arm(e.c, &a);

	write_json(",,", 1, img[0], 2, img[1]); /* a syntax error */
	assert_int_equal(reload_file(&e, NULL, why, printed, sizeof(printed)),
			 -EINVAL);
	assert_non_null(strstr(printed, json_path));
	assert_non_null(strstr(why, "does not parse"));
	assert_ns_list(e.c, 1, 1);

	write_json("", 1, img[0], 1, img[1]); /* NSID 1 twice */
	assert_int_equal(reload_file(&e, NULL, why, printed, sizeof(printed)),
			 -EINVAL);
	assert_non_null(strstr(printed, "nsid given twice"));
	assert_ns_list(e.c, 1, 1);
	assert_false(aer_wait(&a, 0));

	write_json("", 1, img[0], 2, img[1]);
	assert_int_equal(reload_file(&e, NULL, why, printed, sizeof(printed)),
			 0);
	assert_ns_aen(&a);
	assert_ns_list(e.c, 2, 1, 2);
	assert_int_equal(ns_rw(e.c, 1, false, 0, 8, r, NULL), 0);
	assert_memory_equal(w, r, sizeof(w));
	nv_env_fini(&e);
	nvmet_config_free(&c);
	pthread_mutex_destroy(&a.m);
	pthread_cond_destroy(&a.cv);
	unlink(img[0]);
	unlink(img[1]);
	unlink(json_path);
	unlink(err_path);
}

/* Namespace @nsid's NGUID as Identify Namespace reports it. */
static void ns_nguid(struct nvmeh_ctrl *c, u32 nsid, u8 nguid[16])
{
	struct nvme_id_ns *id = calloc(1, 4096);

	assert_non_null(id);
	assert_int_equal(admin(c, nvme_admin_identify, nsid, NVME_ID_CNS_NS, 0,
			       id, 4096, NULL),
			 0);
	memcpy(nguid, id->nguid, 16);
	free(id);
}

/*
 * The identifiers derived from the machine's ID at start are derived for
 * what a reload adds too (a namespace added by SIGHUP keeps its NGUID
 * across a restart, as the kernel host needs to reattach it), and the
 * kept namespace is not touched.
 */
static void test_reload_derived_ids(void **state)
{
	static struct nv_env e;
	static struct nvmet_config c;
	char why[256], printed[4096], id_path[64];
	u8 got[16], uuid[16], nguid[16];
	struct nvmet_target_opts o;
	struct aer a;
	u32 ids[1024];
	FILE *f;

	(void)state;
	make_file(img[0], sizeof(img[0]), NS_SIZE);
	make_file(img[1], sizeof(img[1]), NS_SIZE);
	make_file(err_path, sizeof(err_path), 0);
	make_file(json_path, sizeof(json_path), 0);
	make_file(id_path, sizeof(id_path), 0);
	f = fopen(id_path, "w");
	assert_non_null(f);
	fputs("0123456789abcdef0123456789abcdef\n", f);
	assert_int_equal(fclose(f), 0);
	write_json("", 1, img[0], 0, NULL);
	nvmet_config_init(&c);
	assert_int_equal(nvmet_config_read(&c, json_path), 0);
	assert_int_equal(nvmet_config_fill_ids(&c, id_path), 0);
	o = c.o;
	env_start(&e, &o, false);
	ns_nguid(e.c, 1, got);
	assert_memory_equal(got, c.subsys[0].ns[0].nguid, 16);
	aer_arm(e.c, &a);

	write_json("", 1, img[0], 2, img[1]);
	assert_int_equal(reload_file(&e, &c, why, printed, sizeof(printed)), 0);
	assert_ns_aen(&a);
	assert_int_equal(changed_log(e.c, ids), 1); /* namespace 1 kept */
	assert_int_equal(ids[0], 2);
	ns_nguid(e.c, 1, got);
	assert_memory_equal(got, c.subsys[0].ns[0].nguid, 16);
	assert_int_equal(nvmet_ns_ids_derive(c.machine_id, NV_NQN, 2, img[1],
					     uuid, nguid),
			 0);
	ns_nguid(e.c, 2, got);
	assert_memory_equal(got, nguid, 16);
	nv_env_fini(&e);
	nvmet_config_free(&c);
	pthread_mutex_destroy(&a.m);
	pthread_cond_destroy(&a.cv);
	unlink(img[0]);
	unlink(img[1]);
	unlink(json_path);
	unlink(err_path);
	unlink(id_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_reload_add_ns, nv_teardown),
		cmocka_unit_test_teardown(test_reload_new_nguid, nv_teardown),
		cmocka_unit_test_teardown(test_reload_engine, nv_teardown),
		cmocka_unit_test_teardown(test_reload_resize, nv_teardown),
		cmocka_unit_test_teardown(test_reload_remove_ns_io,
					  nv_teardown),
		cmocka_unit_test_teardown(test_reload_remove_ns_io_threaded,
					  nv_teardown),
		cmocka_unit_test_teardown(test_reload_flap_ns_io, nv_teardown),
		cmocka_unit_test_teardown(test_reload_flap_ns_io_threaded,
					  nv_teardown),
		cmocka_unit_test_teardown(test_reload_remove_ns_idle,
					  nv_teardown),
		cmocka_unit_test_teardown(test_reload_remove_ns_idle_threaded,
					  nv_teardown),
		cmocka_unit_test_teardown(test_reload_remove_host, nv_teardown),
		cmocka_unit_test_teardown(test_reload_subsystems, nv_teardown),
		cmocka_unit_test_teardown(test_reload_ns_per_subsys,
					  nv_teardown),
		cmocka_unit_test_teardown(test_reload_ports, nv_teardown),
		cmocka_unit_test_teardown(test_reload_refused, nv_teardown),
		cmocka_unit_test_teardown(test_reload_json, nv_teardown),
		cmocka_unit_test_teardown(test_reload_derived_ids, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

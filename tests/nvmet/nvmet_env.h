/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the tests/nvmet programs: a fabric with a host device
 * (10.0.0.1) and a target device (10.0.0.2) of one profile, rdmarw-nvmet
 * listening on the target device, and the in-process host connected to
 * it.  nv_env_fini() tears everything down and asserts that no PD, CQ, QP
 * or MR is left on either device (soft_device_destroy() refuses then).
 */
#ifndef RDMARW_TESTS_NVMET_ENV_H
#define RDMARW_TESTS_NVMET_ENV_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/soft.h>

#include "nvme_host.h"
#include "nvmet.h"

#include <rdmarw/kernel.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NV_PORT 4420
#define NV_NQN "nqn.2026-01.io.rdmarw:test"

/* The hosts the tests' targets allow: the in-process host's NQN. */
static const char *const nv_hosts[] = { NVMEH_DEFAULT_HOSTNQN };

/**
 * struct nv_cfg - what a test wants (zero: defaults)
 * @threaded: the devices execute on their own threads
 * @nr_io_queues: host I/O queues (default 2)
 * @queue_size: host I/O queue depth (default 32)
 * @ns_size: namespace bytes (default 4 MiB)
 * @mdts_max: the target's MDTS limit (0: its default)
 * @inline_size: the target's in-capsule size (0: its default)
 * @data_buf_size: the target's data buffer per queue entry (0: default)
 * @no_inline: the host sends no in-capsule data
 * @io_timeout_ms: host command timeout (default 2000)
 * @kato_ms: keep-alive (default 0: none)
 * @no_connect: do not create the host controller
 * @file_backend: namespace 1 is a file (created under $TMPDIR or /tmp,
 *                removed by nv_env_fini()) instead of the target's RAM
 * @connect_timeout_ms: the target's bound on a connection without a
 *                      Connect (0: its default)
 * @topts: the target's options, used as they are (the fields above that
 *         set target options are ignored then)
 */
struct nv_cfg {
	bool threaded;
	unsigned int nr_io_queues;
	unsigned int queue_size;
	u64 ns_size;
	u32 mdts_max;
	u32 inline_size;
	u32 data_buf_size;
	bool no_inline;
	unsigned int io_timeout_ms;
	unsigned int kato_ms;
	bool no_connect;
	bool file_backend;
	/* The target device's SGE limits (0: the profile's). */
	int tdev_max_sge_rd;
	int tdev_max_send_sge;
	unsigned int connect_timeout_ms;
	const struct nvmet_target_opts *topts;
};

struct nv_env {
	struct soft_fabric *fab;
	struct ib_device *hdev;
	struct ib_device *tdev;
	struct nvmet_target *t;
	struct nvmeh_opts o;
	struct nvmeh_ctrl *c;
	u64 ns_size;
	char path[256]; /* the file backend's, "" for none */
};

/*
 * The environment of the running test, for nv_teardown() (a failed
 * assertion leaves the test function; the env must be static).
 */
static struct nv_env *nv_cur;

/* cmocka teardown: release what a failed test left behind. */
static inline int nv_teardown(void **state)
{
	struct nv_env *e = nv_cur;

	(void)state;
	if (!e)
		return 0;
	nv_cur = NULL;
	if (!IS_ERR_OR_NULL(e->c))
		nvmeh_ctrl_destroy(e->c);
	if (!IS_ERR_OR_NULL(e->t))
		nvmet_target_destroy(e->t);
	if (!IS_ERR_OR_NULL(e->hdev))
		soft_device_destroy(e->hdev);
	if (!IS_ERR_OR_NULL(e->tdev))
		soft_device_destroy(e->tdev);
	if (!IS_ERR_OR_NULL(e->fab))
		soft_fabric_destroy(e->fab);
	if (e->path[0])
		unlink(e->path);
	memset(e, 0, sizeof(*e));
	return 0;
}

static inline struct sockaddr_in nv_in4(const char *ip, u16 port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

/*
 * The tests' target: NV_NQN at 10.0.0.2:NV_PORT, namespace 1 in RAM of
 * @ns_size bytes, nv_hosts allowed; the rest nvmet_target_opts_init()'s.
 */
static inline void nv_target_opts(struct nvmet_target_opts *to, u64 ns_size)
{
	nvmet_target_opts_init(to);
	to->addr = "10.0.0.2";
	to->port = NV_PORT;
	to->subnqn = NV_NQN;
	to->ns[0].type = NVMET_BACKEND_RAM;
	to->ns[0].size = ns_size;
	to->hosts = nv_hosts;
	to->nr_hosts = 1;
}

static inline void nv_target_start(struct nv_env *e, const struct nv_cfg *cfg)
{
	struct nvmet_target_opts to;

	if (cfg->topts) {
		e->t = nvmet_target_create(cfg->topts);
		assert_false(IS_ERR_OR_NULL(e->t));
		return;
	}
	nv_target_opts(&to, e->ns_size);
	if (cfg->file_backend) {
		const char *dir = getenv("TMPDIR");
		int fd;

		snprintf(e->path, sizeof(e->path), "%s/nvmet-test-XXXXXX",
			 dir && dir[0] ? dir : "/tmp");
		fd = mkstemp(e->path);
		if (fd < 0)
			fail_msg("mkstemp %s: %s", e->path, strerror(errno));
		close(fd);
		to.ns[0].type = NVMET_BACKEND_FILE;
		to.ns[0].path = e->path;
	}
	to.mdts_max = cfg->mdts_max;
	to.inline_data_size = cfg->inline_size;
	to.data_buf_size = cfg->data_buf_size;
	to.connect_timeout_ms = cfg->connect_timeout_ms;
	e->t = nvmet_target_create(&to);
	assert_false(IS_ERR_OR_NULL(e->t));
}

static inline void nv_env_init(struct nv_env *e, const char *profile,
			       const struct nv_cfg *cfg)
{
	struct sockaddr_in a0 = nv_in4("10.0.0.1", 0);
	struct sockaddr_in a1 = nv_in4("10.0.0.2", 0);
	struct sockaddr_in dst = nv_in4("10.0.0.2", NV_PORT);
	struct soft_profile p;

	memset(e, 0, sizeof(*e));
	nv_cur = e;
	e->ns_size = cfg->ns_size ? cfg->ns_size : 4u << 20;
	assert_int_equal(soft_profile_get(profile, &p), 0);
	p.threaded = cfg->threaded;
	e->fab = soft_fabric_create();
	assert_false(IS_ERR_OR_NULL(e->fab));
	e->hdev = soft_device_create(e->fab, "nvh_%d", &p);
	assert_false(IS_ERR_OR_NULL(e->hdev));
	if (cfg->tdev_max_sge_rd)
		p.attrs.max_sge_rd = cfg->tdev_max_sge_rd;
	if (cfg->tdev_max_send_sge)
		p.attrs.max_send_sge = cfg->tdev_max_send_sge;
	e->tdev = soft_device_create(e->fab, "nvt_%d", &p);
	assert_false(IS_ERR_OR_NULL(e->tdev));
	assert_int_equal(soft_device_add_addr(e->hdev, (void *)&a0), 0);
	assert_int_equal(soft_device_add_addr(e->tdev, (void *)&a1), 0);
	nv_target_start(e, cfg);

	nvmeh_opts_init(&e->o, (void *)&a0, (void *)&dst, NV_NQN);
	e->o.nr_io_queues = cfg->nr_io_queues ? cfg->nr_io_queues : 2;
	e->o.queue_size = cfg->queue_size ? cfg->queue_size : 32;
	e->o.no_inline = cfg->no_inline;
	e->o.io_timeout_ms = cfg->io_timeout_ms ? cfg->io_timeout_ms : 2000;
	e->o.kato_ms = cfg->kato_ms;
	e->o.reconnect_delay_ms = 5;
	if (cfg->no_connect)
		return;
	e->c = nvmeh_ctrl_create(&e->o);
	if (IS_ERR(e->c))
		fail_msg("nvmeh_ctrl_create: %ld (status 0x%x)", PTR_ERR(e->c),
			 nvmeh_last_status(NULL));
}

static inline void nv_env_fini(struct nv_env *e)
{
	struct soft_stats st;

	if (!IS_ERR_OR_NULL(e->c))
		nvmeh_ctrl_destroy(e->c);
	e->c = NULL;
	nvmet_target_destroy(e->t);
	e->t = NULL;
	assert_int_equal(soft_device_stats(e->hdev, &st), 0);
	assert_int_equal(st.pds + st.cqs + st.qps + st.mrs, 0);
	assert_int_equal(soft_device_stats(e->tdev, &st), 0);
	assert_int_equal(st.pds + st.cqs + st.qps + st.mrs, 0);
	assert_int_equal(soft_device_destroy(e->hdev), 0);
	e->hdev = NULL;
	assert_int_equal(soft_device_destroy(e->tdev), 0);
	e->tdev = NULL;
	assert_int_equal(soft_fabric_destroy(e->fab), 0);
	e->fab = NULL;
	if (e->path[0])
		unlink(e->path);
	memset(e, 0, sizeof(*e));
	nv_cur = NULL;
}

/*
 * Wait (bounded: 5 s) until the target has @ctrls controllers and @queues
 * queues: a dropped queue and its controller are released on the target's
 * work queue, after the host may already have reconnected.
 */
static inline void nv_wait_target(struct nv_env *e, u32 ctrls, u32 queues)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmet_target_stats st;
	int i;

	for (i = 0; i < 2500; i++) {
		assert_int_equal(nvmet_target_get_stats(e->t, &st), 0);
		if (st.ctrls == ctrls && st.queues == queues)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("target has %u controllers, %u queues (want %u, %u)", st.ctrls,
		 st.queues, ctrls, queues);
}

/*
 * The host options for @subnqn on the target's port @port, from the
 * environment's (10.0.0.1 to 10.0.0.2).
 */
static inline struct nvmeh_opts nv_host_opts(struct nv_env *e, u16 port,
					     const char *subnqn)
{
	struct sockaddr_in dst = nv_in4("10.0.0.2", port);
	struct nvmeh_opts o = e->o;

	memcpy(&o.dst_addr, &dst, sizeof(dst));
	snprintf(o.subsysnqn, sizeof(o.subsysnqn), "%s", subnqn);
	return o;
}

/*
 * Read the discovery log page (4 KiB at most) through @c's admin queue
 * into @buf; returns the status field (or -errno).
 */
static inline int nv_disc_log(struct nvmeh_ctrl *c, u8 *buf, u32 len)
{
	struct nvmeh_request rq;
	u32 numd = len / 4 - 1;
	int ret;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_admin_get_log_page;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      NVME_LOG_DISC | (numd & 0xffff) << 16);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw11),
		      numd >> 16);
	rq.data = buf;
	rq.data_len = len;
	ret = nvmeh_exec(c, 0, &rq);
	if (ret)
		return ret;
	if (rq.error)
		return rq.error;
	return rq.status & NVME_SCT_SC_MASK;
}

/* Deterministic bytes: xorshift from a seed. */
static inline void nv_fill(u8 *buf, size_t len, u64 seed)
{
	u64 x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (u8)x;
	}
}

/*
 * @rq zeroed, then a Read or Write (@write) of @nlb blocks of @lba bytes at
 * @slba of @nsid, data at @buf; the caller sets done, priv and the rest.
 */
static inline void nv_rw_init(struct nvmeh_request *rq, bool write, u32 nsid,
			      u64 slba, u32 nlb, void *buf, u32 lba)
{
	memset(rq, 0, sizeof(*rq));
	rq->sqe[offsetof(struct nvme_common_command, opcode)] =
		write ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	nvme_put_le64(rq->sqe + offsetof(struct nvme_common_command, cdw10),
		      slba);
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, cdw12),
		      nlb - 1);
	rq->data = buf;
	rq->data_len = nlb * lba;
	rq->write = write;
}

/* A synchronous command on @qid; returns the status field (or -errno). */
static inline int nv_cmd(struct nv_env *e, unsigned int qid,
			 struct nvmeh_request *rq)
{
	int ret = nvmeh_exec(e->c, qid, rq);

	if (ret)
		return ret;
	if (rq->error)
		return rq->error;
	return rq->status & NVME_SCT_SC_MASK;
}

#endif /* RDMARW_TESTS_NVMET_ENV_H */

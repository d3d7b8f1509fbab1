// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet in this process on the software device: a host written
 * with rdma_cm and raw verbs connects the admin queue, sends a fabrics
 * Connect (its data fetched by the target with RDMA READ), Property Gets
 * and a few bad commands, and checks every completion; the target's
 * counters say what it holds before and after the disconnect.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cm_env.h"

#include "nvme_proto.h"
#include "nvmet.h"

#define PORT 4430
#define DATA_LEN (2u << 20)

struct host {
	struct soft_env env;
	struct nvmet_target *tgt;
	struct rdma_cm_id *id; /* the queue commands go to */
	struct rdma_cm_id *ids[3]; /* admin, I/O 1, I/O 2 */
	struct ib_mr *mr; /* over @data, remote read/write */
	u8 *data; /* DATA_LEN bytes */
	u8 capsule[64 + 4096]; /* an SQE and in-capsule data */
	struct nvme_command sqe;
	struct nvme_completion cqe;
	struct ib_wc last_wc; /* the last response's receive completion */
	int nev;
};

static u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

/*
 * Wait (2 s at most) for the completions of @a and @b on the host's CQ,
 * in whichever order they come.
 */
static void wait_wcs(struct host *h, u64 a, struct ib_wc *wa, u64 b,
		     struct ib_wc *wb)
{
	u64 end = now_ms() + 2000;
	bool got_a = false, got_b = false;
	struct ib_wc wc;

	while (!(got_a && got_b) && now_ms() < end) {
		int n = ib_poll_cq(h->env.cq[0], 1, &wc);

		if (n == 1 && wc.wr_id == a) {
			*wa = wc;
			got_a = true;
		} else if (n == 1 && wc.wr_id == b) {
			*wb = wc;
			got_b = true;
		} else if (n == 0) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
	}
	if (!got_a || !got_b)
		fail_msg("no completion for wr_id %llu",
			 (unsigned long long)(got_a ? b : a));
}

static void target_start(struct host *h, const char *profile)
{
	struct nvmet_target_opts o;

	cm_env_init(&h->env, profile, false);
	nvmet_target_opts_init(&o);
	o.addr = "10.0.0.2";
	o.port = PORT;
	o.ns[0].size = 1 << 20;
	o.hosts = (const char *const[]){ "nqn.2026-01.test:host",
					 "nqn.2026-01.test:other" };
	o.nr_hosts = 2;
	o.verbose = getenv("NVMET_VERBOSE") != NULL;
	h->tgt = nvmet_target_create(&o);
	assert_false(IS_ERR(h->tgt));
	h->data = aligned_alloc(4096, DATA_LEN);
	assert_non_null(h->data);
	memset(h->data, 0, DATA_LEN);
	h->mr = soft_env_reg(&h->env, 0, h->data, DATA_LEN, SOFT_PAIR_ACCESS);
}

/* Wait (10 s at most) for event @ev on @id, from record @from on. */
static struct cm_rec *wait_event(struct rdma_cm_id *id,
				 enum rdma_cm_event_type ev, int from)
{
	u64 end = now_ms() + 10000;
	int i;

	do {
		pthread_mutex_lock(&cm_log.m);
		for (i = from; i < cm_log.n; i++) {
			if (cm_log.r[i].id == id && cm_log.r[i].ev == ev) {
				pthread_mutex_unlock(&cm_log.m);
				return &cm_log.r[i];
			}
		}
		pthread_mutex_unlock(&cm_log.m);
		cm_settle();
	} while (now_ms() < end);
	fail_msg("no %s event", rdma_event_msg(ev));
	return NULL;
}

static int nr_events(void)
{
	int n;

	pthread_mutex_lock(&cm_log.m);
	n = cm_log.n;
	pthread_mutex_unlock(&cm_log.m);
	return n;
}

/* The RDMA connection of queue @qid (hrqsize @hrq, hsqsize @hsq + 1). */
static struct rdma_cm_id *host_connect_q(struct host *h, u16 qid, u16 hrq,
					 u16 hsq)
{
	struct nvme_rdma_cm_req req = {
		.recfmt = 0,
		.qid = cpu_to_le16(qid),
		.hrqsize = cpu_to_le16(hrq),
		.hsqsize = cpu_to_le16(hsq - 1),
	};
	struct rdma_conn_param cp = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.responder_resources = 16,
		.initiator_depth = 0,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_id *id;
	struct cm_rec *r;
	int from;

	h->nev = nr_events();
	id = cm_client(&h->env, h, PORT, &h->nev);
	from = nr_events();
	assert_int_equal(rdma_connect(id, &cp), 0);
	r = wait_event(id, RDMA_CM_EVENT_ESTABLISHED, from);
	assert_true(r->len >= sizeof(struct nvme_rdma_cm_rep));
	/* crqsize: the target's receive queue, hsqsize + 1 */
	assert_int_equal(r->pdata[2] | r->pdata[3] << 8, hsq);
	if (qid < sizeof(h->ids) / sizeof(h->ids[0]))
		h->ids[qid] = id; /* else the caller's to destroy */
	h->id = id;
	return id;
}

/* A queue's RDMA connection request the target rejects: its status. */
static u16 host_refused_q(struct host *h, u16 qid, u16 hrq, u16 hsq)
{
	struct nvme_rdma_cm_req req = {
		.qid = cpu_to_le16(qid),
		.hrqsize = cpu_to_le16(hrq),
		.hsqsize = cpu_to_le16(hsq - 1),
	};
	struct rdma_conn_param cp = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.responder_resources = 16,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_id *id;
	struct cm_rec *r;
	u16 sts;
	int from;

	h->nev = nr_events();
	id = cm_client(&h->env, h, PORT, &h->nev);
	from = nr_events();
	assert_int_equal(rdma_connect(id, &cp), 0);
	r = wait_event(id, RDMA_CM_EVENT_REJECTED, from);
	assert_true(r->len >= 4);
	sts = (u16)(r->pdata[2] | r->pdata[3] << 8);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	return sts;
}

/* The admin queue's RDMA connection: hrqsize 32, hsqsize 31. */
static void host_connect(struct host *h)
{
	host_connect_q(h, 0, 32, 32);
}

/* Wait until the target holds no queue, controller or request. */
static void wait_target_idle(struct host *h)
{
	struct nvmet_target_stats st;
	u64 end = now_ms() + 10000;

	do {
		assert_int_equal(nvmet_target_get_stats(h->tgt, &st), 0);
		if (!st.queues && !st.ctrls && !st.reqs_inflight)
			break;
		cm_settle();
	} while (now_ms() < end);
	assert_int_equal(st.queues, 0);
	assert_int_equal(st.ctrls, 0);
	assert_int_equal(st.reqs_inflight, 0);
}

/* Close every host queue (I/O first, as the Linux host does). */
static void host_disconnect(struct host *h)
{
	int i;

	for (i = 2; i >= 0; i--)
		if (h->ids[i])
			rdma_disconnect(h->ids[i]); /* may be down already */
	wait_target_idle(h);
	for (i = 2; i >= 0; i--) {
		if (!h->ids[i])
			continue;
		rdma_destroy_qp(h->ids[i]);
		rdma_destroy_id(h->ids[i]);
		h->ids[i] = NULL;
	}
	h->id = NULL;
}

static void target_stop(struct host *h)
{
	soft_env_dereg(h->mr);
	free(h->data);
	nvmet_target_destroy(h->tgt);
	cm_env_fini(&h->env);
}

static u64 seq = 100;

/* Post a receive for the next CQE and send the capsule; the ids. */
static void post_capsule(struct host *h, const void *capsule, u32 len,
			 u64 *recv_id, u64 *send_id)
{
	*recv_id = ++seq;
	*send_id = ++seq;
	memset(&h->cqe, 0xee, sizeof(h->cqe));
	soft_env_post_recv(h->id->qp, *recv_id, &h->cqe, sizeof(h->cqe),
			   h->env.pd[0]->local_dma_lkey);
	assert_int_equal(soft_env_send(h->id->qp, *send_id, (void *)capsule,
				       len, h->env.pd[0]->local_dma_lkey),
			 0);
}

/* Send @len bytes of capsule and wait for the command's completion. */
static u16 submit_capsule(struct host *h, const void *capsule, u32 len)
{
	struct ib_wc wc, swc;
	u64 recv_id, send_id;

	post_capsule(h, capsule, len, &recv_id, &send_id);
	wait_wcs(h, send_id, &swc, recv_id, &wc);
	assert_int_equal(swc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.byte_len, sizeof(struct nvme_completion));
	assert_int_equal(h->cqe.command_id, h->sqe.common.command_id);
	h->last_wc = wc;
	return le16_to_cpu(h->cqe.status) >> 1;
}

/* h->sqe with a keyed descriptor of @type over h->data + @off. */
static void set_keyed(struct host *h, u32 off, u32 len, u8 type)
{
	struct nvme_keyed_sgl_desc *k = &h->sqe.common.dptr.ksgl;

	h->sqe.common.flags = NVME_CMD_SGL_METABUF;
	k->addr = cpu_to_le64((u64)(uintptr_t)(h->data + off));
	nvme_put_le24(k->length, len);
	nvme_put_le32(k->key, h->mr->rkey);
	k->type = type;
}

/*
 * Send h->sqe and wait for its completion; @len bytes of h->data are the
 * command's data (keyed SGL, no invalidation), or none.
 */
static u16 submit(struct host *h, u32 len)
{
	set_keyed(h, 0, len, NVME_KEY_SGL_FMT_DATA_DESC << 4);
	return submit_capsule(h, &h->sqe, sizeof(h->sqe));
}

/* Send h->sqe with @len bytes of @data in the capsule. */
static u16 submit_inline(struct host *h, const void *data, u32 len)
{
	struct nvme_sgl_desc *d = &h->sqe.common.dptr.sgl;

	h->sqe.common.flags = NVME_CMD_SGL_METABUF;
	d->addr = 0;
	d->length = cpu_to_le32(len);
	memset(d->rsvd, 0, sizeof(d->rsvd));
	d->type = NVME_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_OFFSET;
	memcpy(h->capsule, &h->sqe, sizeof(h->sqe));
	memcpy(h->capsule + sizeof(h->sqe), data, len);
	return submit_capsule(h, h->capsule, (u32)sizeof(h->sqe) + len);
}

static u16 admin_connect_kato(struct host *h, const char *subnqn, u32 kato)
{
	struct nvmf_connect_data *d = (struct nvmf_connect_data *)h->data;

	memset(&h->sqe, 0, sizeof(h->sqe));
	h->sqe.connect.opcode = nvme_fabrics_command;
	h->sqe.connect.command_id = 0;
	h->sqe.connect.fctype = nvme_fabrics_type_connect;
	h->sqe.connect.qid = 0;
	h->sqe.connect.sqsize = cpu_to_le16(31);
	h->sqe.connect.kato = cpu_to_le32(kato);
	memset(d, 0, sizeof(*d));
	memset(d->hostid, 0x5a, sizeof(d->hostid));
	d->cntlid = cpu_to_le16(0xffff);
	snprintf(d->subsysnqn, sizeof(d->subsysnqn), "%s", subnqn);
	snprintf(d->hostnqn, sizeof(d->hostnqn), "nqn.2026-01.test:host");
	return submit(h, sizeof(*d));
}

static u16 admin_connect(struct host *h, const char *subnqn)
{
	return admin_connect_kato(h, subnqn, 5000);
}

static u16 prop_get(struct host *h, u32 offset, bool eight, u16 cid)
{
	memset(&h->sqe, 0, sizeof(h->sqe));
	h->sqe.prop_get.opcode = nvme_fabrics_command;
	h->sqe.prop_get.command_id = cid;
	h->sqe.prop_get.fctype = nvme_fabrics_type_property_get;
	h->sqe.prop_get.attrib = eight ? 1 : 0;
	h->sqe.prop_get.offset = cpu_to_le32(offset);
	return submit(h, 0);
}

static void smoke(const char *profile)
{
	struct nvmet_target_stats st;
	struct host h;
	u64 cap;

	memset(&h, 0, sizeof(h));
	target_start(&h, profile);
	host_connect(&h);

	assert_int_equal(admin_connect(&h, NVMET_DEFAULT_SUBNQN), 0);
	assert_int_equal(le16_to_cpu(h.cqe.result.u16), 1); /* cntlid */
	assert_int_equal(le16_to_cpu(h.cqe.sq_id), 0);
	assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
	assert_int_equal(st.ctrls, 1);
	assert_int_equal(st.queues, 1);

	/* CAP: MQES 127, TO 15, CSS NVM and I/O command sets */
	assert_int_equal(prop_get(&h, NVME_REG_CAP, true, 0x1001), 0);
	cap = le64_to_cpu(h.cqe.result.u64);
	assert_int_equal(cap, 0x8200f00007fULL);
	assert_int_equal(prop_get(&h, NVME_REG_VS, false, 0x2002), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), 0x10300);
	assert_int_equal(prop_get(&h, NVME_REG_CSTS, false, 3), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), 0); /* not ready */
	/* no property at 0x40, and CAP is 8 bytes */
	assert_int_equal(prop_get(&h, 0x40, false, 4),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	assert_int_equal(prop_get(&h, NVME_REG_CAP, false, 5),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	/* the SQ head moves one entry per command */
	assert_int_equal(le16_to_cpu(h.cqe.sq_head), 6);

	/* an unknown fabrics command type */
	memset(&h.sqe, 0, sizeof(h.sqe));
	h.sqe.fabrics.opcode = nvme_fabrics_command;
	h.sqe.fabrics.command_id = 6;
	h.sqe.fabrics.fctype = 0x7e;
	assert_int_equal(submit(&h, 0), NVME_SC_INVALID_OPCODE | NVME_SC_DNR);
	/* Identify before CC.EN: a command sequence error */
	memset(&h.sqe, 0, sizeof(h.sqe));
	h.sqe.common.opcode = nvme_admin_identify;
	h.sqe.common.command_id = 7;
	h.sqe.common.cdw10 = cpu_to_le32(NVME_ID_CNS_CTRL);
	assert_int_equal(submit(&h, 4096), NVME_SC_CMD_SEQ_ERROR | NVME_SC_DNR);
	assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
	assert_int_equal(st.errors, 4);

	host_disconnect(&h);
	target_stop(&h);
}

static void test_smoke_rxe(void **s)
{
	smoke("rxe");
}

static void test_smoke_mlx5(void **s)
{
	smoke("mlx5");
}

static void test_smoke_siw(void **s)
{
	smoke("siw");
}

/* A Connect to a subsystem the target does not have. */
static void test_connect_unknown_nqn(void **s)
{
	struct nvmet_target_stats st;
	struct host h;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	host_connect(&h);
	assert_int_equal(admin_connect(&h, "nqn.2026-01.test:nobody"),
			 NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR);
	/* IPO: the subsystem NQN field of the Connect data */
	assert_int_equal(le32_to_cpu(h.cqe.result.u32),
			 (1u << 16) |
				 offsetof(struct nvmf_connect_data, subsysnqn));
	assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
	assert_int_equal(st.ctrls, 0);
	/* a Property Get on the unconnected queue: Connect comes first */
	assert_int_equal(prop_get(&h, NVME_REG_CAP, true, 9),
			 NVME_SC_INVALID_OPCODE | NVME_SC_DNR);
	host_disconnect(&h);
	target_stop(&h);
}

/*
 * Connection requests the target refuses, with the NVMe/RDMA status.  (A
 * short private data cannot be sent on RoCE: the target sees the REQ's
 * whole field, zero padded.)
 */
static void test_cm_rejects(void **s)
{
	static const struct {
		u16 recfmt, qid, hrqsize, hsqsize;
		u8 len;
		u16 sts;
	} cases[] = {
		{ 1, 0, 32, 31, 32, NVME_RDMA_CM_INVALID_RECFMT },
		{ 0, 0, 32, 32, 32, NVME_RDMA_CM_INVALID_HSQSIZE }, /* 33 */
		{ 0, 1, 128, 128, 32, NVME_RDMA_CM_INVALID_HSQSIZE },
		{ 0, 1, 0, 127, 32, NVME_RDMA_CM_INVALID_HRQSIZE },
		{ 0, 1, 129, 127, 32, NVME_RDMA_CM_INVALID_HRQSIZE },
	};
	struct nvmet_target_stats st;
	struct host h;
	size_t i;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvme_rdma_cm_req req = {
			.recfmt = cpu_to_le16(cases[i].recfmt),
			.qid = cpu_to_le16(cases[i].qid),
			.hrqsize = cpu_to_le16(cases[i].hrqsize),
			.hsqsize = cpu_to_le16(cases[i].hsqsize),
		};
		struct rdma_conn_param cp = {
			.private_data = &req,
			.private_data_len = cases[i].len,
			.responder_resources = 16,
		};
		struct rdma_cm_id *id;
		struct cm_rec *r;
		int from;

		h.nev = nr_events();
		id = cm_client(&h.env, &h, PORT, &h.nev);
		from = nr_events();
		assert_int_equal(rdma_connect(id, &cp), 0);
		r = wait_event(id, RDMA_CM_EVENT_REJECTED, from);
		assert_int_equal(r->status, IB_CM_REJ_CONSUMER_DEFINED);
		assert_true(r->len >= 4);
		assert_int_equal(r->pdata[0] | r->pdata[1] << 8, 0);
		assert_int_equal(r->pdata[2] | r->pdata[3] << 8, cases[i].sts);
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
	assert_int_equal(st.rejects, sizeof(cases) / sizeof(cases[0]));
	assert_int_equal(st.queues, 0);
	target_stop(&h);
}

/*
 * An I/O queue id beyond what the controller has is Connect's to refuse
 * (the kernel's nvmet_execute_io_connect()), with Invalid Parameter
 * pointing at the qid; the RDMA CM exchange, where no subsystem is known
 * yet, accepts it.
 */
static void test_io_qid_in_connect(void **s)
{
	struct nvmf_connect_data d;
	struct rdma_cm_id *id;
	struct host h;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	host_connect(&h);
	assert_int_equal(admin_connect(&h, NVMET_DEFAULT_SUBNQN), 0);
	memset(&d, 0, sizeof(d));
	memset(d.hostid, 0x5a, sizeof(d.hostid));
	d.cntlid = cpu_to_le16(1);
	snprintf(d.subsysnqn, sizeof(d.subsysnqn), "%s", NVMET_DEFAULT_SUBNQN);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "nqn.2026-01.test:host");
	id = host_connect_q(&h, 129, 128, 128);
	memset(&h.sqe, 0, sizeof(h.sqe));
	h.sqe.connect.opcode = nvme_fabrics_command;
	h.sqe.connect.fctype = nvme_fabrics_type_connect;
	h.sqe.connect.qid = cpu_to_le16(129);
	h.sqe.connect.sqsize = cpu_to_le16(127);
	assert_int_equal(submit_inline(&h, &d, sizeof(d)),
			 NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32),
			 IPO_IATTR_CONNECT_SQE(
				 offsetof(struct nvmf_connect_command, qid)));
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	h.id = h.ids[0];
	host_disconnect(&h);
	target_stop(&h);
}

/* Options the target refuses. */
static void test_bad_opts(void **s)
{
	struct nvmet_target_opts o;

	assert_int_equal(PTR_ERR(nvmet_target_create(NULL)), -EINVAL);
	nvmet_target_opts_init(&o);
	assert_int_equal(PTR_ERR(nvmet_target_create(&o)), -EINVAL); /* addr */
	o.addr = "10.0.0.300";
	assert_int_equal(PTR_ERR(nvmet_target_create(&o)), -EINVAL);
	o.addr = "10.9.9.9"; /* no device answers */
	assert_int_equal(PTR_ERR(nvmet_target_create(&o)), -EADDRNOTAVAIL);
	o.ns[0].type = NVMET_BACKEND_NONE;
	assert_int_equal(PTR_ERR(nvmet_target_create(&o)), -EINVAL);
	o.ns[0].type = NVMET_BACKEND_FILE;
	o.ns[0].path = "/nonexistent/dir/file";
	o.ns[0].size = 0;
	o.addr = "0.0.0.0";
	assert_int_equal(PTR_ERR(nvmet_target_create(&o)), -ENOENT);
	nvmet_target_opts_init(&o);
	o.addr = "0.0.0.0";
	o.max_queue_size = 129;
	assert_int_equal(PTR_ERR(nvmet_target_create(&o)), -EINVAL);
}

/* ---- enabled controllers, I/O ------------------------------------------ */

static u16 prop_set(struct host *h, u32 offset, u64 val, u16 cid)
{
	memset(&h->sqe, 0, sizeof(h->sqe));
	h->sqe.prop_set.opcode = nvme_fabrics_command;
	h->sqe.prop_set.command_id = cid;
	h->sqe.prop_set.fctype = nvme_fabrics_type_property_set;
	h->sqe.prop_set.offset = cpu_to_le32(offset);
	h->sqe.prop_set.value = cpu_to_le64(val);
	return submit(h, 0);
}

/* CC as the Linux host writes it, then CSTS.RDY. */
static void enable(struct host *h)
{
	assert_int_equal(prop_set(h, NVME_REG_CC, 0x460061, 20), 0);
	assert_int_equal(prop_get(h, NVME_REG_CSTS, false, 21), 0);
	assert_int_equal(le32_to_cpu(h->cqe.result.u32), NVME_CSTS_RDY);
}

static void admin_cmd(struct host *h, u8 opcode, u32 nsid, u32 cdw10, u32 cdw11,
		      u16 cid)
{
	memset(&h->sqe, 0, sizeof(h->sqe));
	h->sqe.common.opcode = opcode;
	h->sqe.common.command_id = cid;
	h->sqe.common.nsid = cpu_to_le32(nsid);
	h->sqe.common.cdw10 = cpu_to_le32(cdw10);
	h->sqe.common.cdw11 = cpu_to_le32(cdw11);
}

static u16 identify(struct host *h, u8 cns, u32 nsid, u32 len)
{
	admin_cmd(h, nvme_admin_identify, nsid, cns, 0, 30);
	memset(h->data, 0xcc, 4096);
	return submit(h, len);
}

/* The I/O queue @qid, connected as the Linux host does (data in-capsule). */
/*
 * The I/O queue Connect of queue @qid for controller @cntlid, as host
 * @hostnqn with a host ID of bytes @id, its data in-capsule; the status.
 */
static u16 io_connect_as(struct host *h, u16 qid, u16 cntlid,
			 const char *hostnqn, u8 id)
{
	struct nvmf_connect_data d;

	memset(&h->sqe, 0, sizeof(h->sqe));
	h->sqe.connect.opcode = nvme_fabrics_command;
	h->sqe.connect.fctype = nvme_fabrics_type_connect;
	h->sqe.connect.qid = cpu_to_le16(qid);
	h->sqe.connect.sqsize = cpu_to_le16(127);
	memset(&d, 0, sizeof(d));
	memset(d.hostid, id, sizeof(d.hostid));
	d.cntlid = cpu_to_le16(cntlid);
	snprintf(d.subsysnqn, sizeof(d.subsysnqn), "%s", NVMET_DEFAULT_SUBNQN);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", hostnqn);
	return submit_inline(h, &d, sizeof(d));
}

static void io_connect(struct host *h, u16 qid, u16 cntlid)
{
	u16 st;

	host_connect_q(h, qid, 128, 128);
	st = io_connect_as(h, qid, cntlid, "nqn.2026-01.test:host", 0x5a);
	assert_int_equal(st, 0);
	assert_int_equal(le16_to_cpu(h->cqe.result.u16), cntlid);
	assert_int_equal(le16_to_cpu(h->cqe.sq_id), qid);
}

/*
 * An I/O queue's Connect joins only a live, enabled controller of the
 * same host NQN and host ID, through the admin queue's port: another
 * (allowed) host naming its cntlid finds no controller (Invalid
 * Parameter, pointing at the cntlid, as the kernel's
 * nvmet_ctrl_find_get()); the same NQN with another host ID is refused as
 * Connect Invalid Host pointing at the host ID; before CC.EN the queue is
 * refused with Command Sequence Error; a queue of no controller at all
 * finds none.
 */
static void test_io_connect_checks(void **s)
{
	struct rdma_cm_id *ids[3];
	struct host h;
	int i;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	host_connect(&h);
	/*
	 * An I/O queue before any admin queue of this address was admitted:
	 * refused at the request (a stranger gets no I/O queue)
	 */
	assert_int_equal(host_refused_q(&h, 1, 128, 128), NVME_RDMA_CM_NO_RSC);
	h.id = h.ids[0];
	assert_int_equal(admin_connect(&h, NVMET_DEFAULT_SUBNQN), 0);
	assert_int_equal(le16_to_cpu(h.cqe.result.u16), 1);
	/* then one naming a controller that does not exist */
	ids[0] = host_connect_q(&h, 1, 128, 128);
	assert_int_equal(io_connect_as(&h, 1, 7, "nqn.2026-01.test:host", 0x5a),
			 NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32),
			 IPO_IATTR_CONNECT_DATA(
				 offsetof(struct nvmf_connect_data, cntlid)));

	/* not enabled yet */
	ids[1] = host_connect_q(&h, 2, 128, 128);
	assert_int_equal(io_connect_as(&h, 2, 1, "nqn.2026-01.test:host", 0x5a),
			 NVME_SC_CMD_SEQ_ERROR | NVME_SC_DNR);
	h.id = h.ids[0];
	enable(&h);

	/* another host, allowed on the subsystem, naming controller 1 */
	ids[2] = host_connect_q(&h, 1, 128, 128);
	assert_int_equal(
		io_connect_as(&h, 1, 1, "nqn.2026-01.test:other", 0x5a),
		NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32),
			 IPO_IATTR_CONNECT_DATA(
				 offsetof(struct nvmf_connect_data, cntlid)));
	/* the same NQN, another host ID */
	assert_int_equal(io_connect_as(&h, 1, 1, "nqn.2026-01.test:host", 0x77),
			 NVME_SC_CONNECT_INVALID_HOST | NVME_SC_DNR);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32),
			 IPO_IATTR_CONNECT_DATA(
				 offsetof(struct nvmf_connect_data, hostid)));
	/* and the right one joins */
	assert_int_equal(io_connect_as(&h, 1, 1, "nqn.2026-01.test:host", 0x5a),
			 0);
	assert_int_equal(le16_to_cpu(h.cqe.result.u16), 1);
	/* the refused queues go; ids[2] is h.ids[1], host_disconnect()'s */
	for (i = 0; i < 2; i++) {
		rdma_disconnect(ids[i]);
		rdma_destroy_qp(ids[i]);
		rdma_destroy_id(ids[i]);
	}
	h.ids[2] = NULL;
	h.id = h.ids[0];
	host_disconnect(&h);
	target_stop(&h);
}

static void rw_cmd(struct host *h, u8 opcode, u32 nsid, u64 slba, u32 nlb,
		   u16 cid)
{
	memset(&h->sqe, 0, sizeof(h->sqe));
	h->sqe.rw.opcode = opcode;
	h->sqe.rw.command_id = cid;
	h->sqe.rw.nsid = cpu_to_le32(nsid);
	h->sqe.rw.slba = cpu_to_le64(slba);
	h->sqe.rw.length = cpu_to_le16((u16)(nlb - 1));
}

/* Connected, enabled, one I/O queue; h->id is the I/O queue. */
static void setup_io(struct host *h, const char *profile)
{
	target_start(h, profile);
	host_connect(h);
	assert_int_equal(admin_connect(h, NVMET_DEFAULT_SUBNQN), 0);
	enable(h);
	io_connect(h, 1, 1);
}

static void fill(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 31 + seed + (i >> 9));
}

static void test_admin(void **s)
{
	struct nvme_id_ctrl *id;
	struct nvme_id_ns *ns;
	struct nvme_ns_id_desc *desc;
	struct host h;
	u8 *p;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	host_connect(&h);
	assert_int_equal(admin_connect(&h, NVMET_DEFAULT_SUBNQN), 0);
	/* CC with 128-byte SQEs: the controller reports a fatal status */
	assert_int_equal(prop_set(&h, NVME_REG_CC, 0x470061, 10), 0);
	assert_int_equal(prop_get(&h, NVME_REG_CSTS, false, 11), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), NVME_CSTS_CFS);
	assert_int_equal(prop_set(&h, NVME_REG_CC, 0, 12), 0);
	enable(&h);

	assert_int_equal(identify(&h, NVME_ID_CNS_CTRL, 0, 4096), 0);
	id = (struct nvme_id_ctrl *)h.data;
	assert_int_equal(le16_to_cpu(id->cntlid), 1);
	assert_int_equal(id->mdts, 8);
	assert_int_equal(id->sqes, 0x66);
	assert_int_equal(id->cqes, 0x44);
	assert_int_equal(le32_to_cpu(id->sgls), 0x100005);
	assert_int_equal(le32_to_cpu(id->ioccsz), (64 + 4096) / 16);
	assert_int_equal(le16_to_cpu(id->icdoff), 0);
	assert_true(le16_to_cpu(id->kas) > 0);
	assert_int_equal(le32_to_cpu(id->nn), NVMET_MAX_NAMESPACES);
	assert_int_equal(id->cntrltype, NVME_CNTRLTYPE_IO);
	assert_string_equal(id->subnqn, NVMET_DEFAULT_SUBNQN);
	assert_int_equal(le32_to_cpu(id->ver), 0x10300);

	assert_int_equal(identify(&h, NVME_ID_CNS_NS_ACTIVE_LIST, 0, 4096), 0);
	assert_int_equal(nvme_get_le32(h.data), 1);
	assert_int_equal(nvme_get_le32(h.data + 4), 0);

	assert_int_equal(identify(&h, NVME_ID_CNS_NS, 1, 4096), 0);
	ns = (struct nvme_id_ns *)h.data;
	assert_int_equal(le64_to_cpu(ns->nsze), (1 << 20) / 512);
	assert_int_equal(le64_to_cpu(ns->ncap), (1 << 20) / 512);
	assert_int_equal(ns->lbaf[0].ds, 9);
	/* an inactive namespace reads as zeroes */
	assert_int_equal(identify(&h, NVME_ID_CNS_NS, 2, 4096), 0);
	assert_int_equal(le64_to_cpu(ns->nsze), 0);
	assert_int_equal(identify(&h, NVME_ID_CNS_NS, NVME_NSID_ALL, 4096),
			 NVME_SC_INVALID_NS | NVME_SC_DNR);

	/* descriptors: UUID, NGUID, CSI (NVM) */
	assert_int_equal(identify(&h, NVME_ID_CNS_NS_DESC_LIST, 1, 4096), 0);
	p = h.data;
	desc = (struct nvme_ns_id_desc *)p;
	assert_int_equal(desc->nidt, NVME_NIDT_UUID);
	p += sizeof(*desc) + desc->nidl;
	desc = (struct nvme_ns_id_desc *)p;
	assert_int_equal(desc->nidt, NVME_NIDT_NGUID);
	p += sizeof(*desc) + desc->nidl;
	desc = (struct nvme_ns_id_desc *)p;
	assert_int_equal(desc->nidt, NVME_NIDT_CSI);
	assert_int_equal(desc->nidl, 1);
	assert_int_equal(p[4], NVME_CSI_NVM);
	assert_int_equal(identify(&h, NVME_ID_CNS_NS_DESC_LIST, 3, 4096),
			 NVME_SC_INVALID_NS | NVME_SC_DNR);
	/* Identify moves 4 KiB, no less */
	assert_int_equal(identify(&h, NVME_ID_CNS_CTRL, 0, 2048),
			 NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
	assert_int_equal(identify(&h, 0x42, 0, 4096),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);

	/* 2 + 2 queues asked (0-based), 128 granted */
	admin_cmd(&h, nvme_admin_set_features, 0, NVME_FEAT_NUM_QUEUES,
		  0x00010001, 40);
	assert_int_equal(submit(&h, 0), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), 0x007f007f);
	/* the effects log: Identify and Read supported */
	admin_cmd(&h, nvme_admin_get_log_page, 0,
		  NVME_LOG_CMD_EFFECTS | (1023u << 16), 0, 41);
	assert_int_equal(submit(&h, 4096), 0);
	assert_int_equal(nvme_get_le32(h.data + 4 * nvme_admin_identify) & 1,
			 1);
	assert_int_equal(nvme_get_le32(h.data + 1024 + 4 * nvme_cmd_read) & 1,
			 1);
	admin_cmd(&h, nvme_admin_get_log_page, NVME_NSID_ALL,
		  NVME_LOG_SMART | (127u << 16), 0, 42);
	assert_int_equal(submit(&h, 512), 0);
	admin_cmd(&h, nvme_admin_get_log_page, 0, 0xbe | (127u << 16), 0, 43);
	assert_int_equal(submit(&h, 512), NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	/* the length the command asks for must be the SGL's */
	admin_cmd(&h, nvme_admin_get_log_page, NVME_NSID_ALL,
		  NVME_LOG_SMART | (127u << 16), 0, 44);
	assert_int_equal(submit(&h, 4096),
			 NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
	admin_cmd(&h, 0xc1, 0, 0, 0, 45);
	assert_int_equal(submit(&h, 0), NVME_SC_INVALID_OPCODE | NVME_SC_DNR);
	admin_cmd(&h, nvme_admin_keep_alive, 0, 0, 0, 46);
	assert_int_equal(submit(&h, 0), 0);
	host_disconnect(&h);
	target_stop(&h);
}

static void io_paths(const char *profile)
{
	static const u32 sizes[] = { 512, 4096, 8192, 65536 + 512, 1 << 20 };
	struct nvme_dsm_range r;
	struct host h;
	u8 *expect;
	size_t i;

	memset(&h, 0, sizeof(h));
	setup_io(&h, profile);
	expect = malloc(1 << 20);
	assert_non_null(expect);

	/* keyed writes then keyed reads, of every shape, every byte checked */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		u32 len = sizes[i], nlb = len / 512;

		fill(h.data, len, (u32)i + 1);
		memcpy(expect, h.data, len);
		rw_cmd(&h, nvme_cmd_write, 1, 0, nlb, (u16)(100 + i));
		assert_int_equal(submit(&h, len), 0);
		memset(h.data, 0, len);
		rw_cmd(&h, nvme_cmd_read, 1, 0, nlb, (u16)(200 + i));
		assert_int_equal(submit(&h, len), 0);
		assert_memory_equal(h.data, expect, len);
	}
	/* an in-capsule write, read back with a keyed read */
	fill(expect, 4096, 77);
	rw_cmd(&h, nvme_cmd_write, 1, 100, 8, 300);
	assert_int_equal(submit_inline(&h, expect, 4096), 0);
	memset(h.data, 0, 4096);
	rw_cmd(&h, nvme_cmd_read, 1, 100, 8, 301);
	assert_int_equal(submit(&h, 4096), 0);
	assert_memory_equal(h.data, expect, 4096);
	/* the neighbours are untouched: block 99 is from the 1 MiB write */
	rw_cmd(&h, nvme_cmd_read, 1, 99, 1, 302);
	assert_int_equal(submit(&h, 512), 0);
	fill(expect, 1 << 20, 5);
	assert_memory_equal(h.data, expect + 99 * 512, 512);

	rw_cmd(&h, nvme_cmd_flush, 1, 0, 1, 303);
	h.sqe.rw.length = 0;
	assert_int_equal(submit(&h, 0), 0);
	/* Write Zeroes over blocks 8..23, then read them */
	rw_cmd(&h, nvme_cmd_write_zeroes, 1, 8, 16, 304);
	assert_int_equal(submit(&h, 0), 0);
	rw_cmd(&h, nvme_cmd_read, 1, 7, 18, 305);
	assert_int_equal(submit(&h, 18 * 512), 0);
	assert_memory_equal(h.data, expect + 7 * 512, 512);
	for (i = 512; i < 17 * 512; i++)
		assert_int_equal(h.data[i], 0);
	assert_memory_equal(h.data + 17 * 512, expect + 24 * 512, 512);
	/* deallocate blocks 100..107 (the in-capsule write): zeroes after */
	r.cattr = 0;
	r.nlb = cpu_to_le32(8);
	r.slba = cpu_to_le64(100);
	memcpy(h.data, &r, sizeof(r));
	memset(&h.sqe, 0, sizeof(h.sqe));
	h.sqe.common.opcode = nvme_cmd_dsm;
	h.sqe.common.command_id = 306;
	h.sqe.common.nsid = cpu_to_le32(1);
	h.sqe.common.cdw10 = 0; /* one range */
	h.sqe.common.cdw11 = cpu_to_le32(NVME_DSMGMT_AD);
	assert_int_equal(submit(&h, sizeof(r)), 0);
	memset(h.data, 0xff, 4096);
	rw_cmd(&h, nvme_cmd_read, 1, 100, 8, 307);
	assert_int_equal(submit(&h, 4096), 0);
	for (i = 0; i < 4096; i++)
		assert_int_equal(h.data[i], 0);

	/* bad input: the status a controller gives, and the queue lives on */
	rw_cmd(&h, nvme_cmd_read, 1, 2047, 2, 400); /* past the end */
	assert_int_equal(submit(&h, 1024), NVME_SC_LBA_RANGE | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_read, 1, ~0ULL, 1, 401); /* wraps */
	assert_int_equal(submit(&h, 512), NVME_SC_LBA_RANGE | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_write, 1, 0, 4096, 402); /* 2 MiB, over MDTS */
	assert_int_equal(submit(&h, 2u << 20),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_read, 1, 0, 8, 403); /* 8 blocks, 1 in the SGL */
	assert_int_equal(submit(&h, 512),
			 NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_read, 2, 0, 1, 404); /* no namespace 2 */
	assert_int_equal(submit(&h, 512), NVME_SC_INVALID_NS | NVME_SC_DNR);
	rw_cmd(&h, 0x55, 1, 0, 1, 405);
	assert_int_equal(submit(&h, 0), NVME_SC_INVALID_OPCODE | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_read, 1, 0, 1, 406); /* in-capsule read */
	assert_int_equal(submit_inline(&h, expect, 512),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_read, 1, 0, 1, 407); /* SGL segment descriptor */
	set_keyed(&h, 0, 512, NVME_SGL_FMT_SEG_DESC << 4);
	assert_int_equal(submit_capsule(&h, &h.sqe, sizeof(h.sqe)),
			 NVME_SC_SGL_INVALID_TYPE | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_read, 1, 0, 1, 408); /* keyed, subtype 5 */
	set_keyed(&h, 0, 512, NVME_KEY_SGL_FMT_DATA_DESC << 4 | 5);
	assert_int_equal(submit_capsule(&h, &h.sqe, sizeof(h.sqe)),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	rw_cmd(&h, nvme_cmd_write, 1, 0, 1, 409); /* data beyond the capsule */
	{
		struct nvme_sgl_desc *d = &h.sqe.common.dptr.sgl;

		h.sqe.common.flags = NVME_CMD_SGL_METABUF;
		d->length = cpu_to_le32(512);
		d->type = NVME_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_OFFSET;
		memcpy(h.capsule, &h.sqe, sizeof(h.sqe));
		assert_int_equal(
			submit_capsule(&h, h.capsule, sizeof(h.sqe) + 100),
			NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
		d->addr = cpu_to_le64(4000); /* past the in-capsule size */
		assert_int_equal(submit_capsule(&h, &h.sqe, sizeof(h.sqe)),
				 NVME_SC_SGL_INVALID_OFFSET | NVME_SC_DNR);
	}
	rw_cmd(&h, nvme_cmd_read, 1, 0, 1, 410); /* a fused command */
	h.sqe.common.flags = NVME_CMD_SGL_METABUF | NVME_CMD_FUSE_FIRST;
	assert_int_equal(submit_capsule(&h, &h.sqe, sizeof(h.sqe)),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	/* a truncated capsule: answered by its command id */
	rw_cmd(&h, nvme_cmd_read, 1, 0, 1, 411);
	assert_int_equal(submit_capsule(&h, &h.sqe, 40),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	/* and the queue still works */
	rw_cmd(&h, nvme_cmd_read, 1, 100, 8, 412);
	assert_int_equal(submit(&h, 4096), 0);

	free(expect);
	host_disconnect(&h);
	target_stop(&h);
}

static void test_io_rxe(void **s)
{
	io_paths("rxe");
}

static void test_io_mlx5(void **s)
{
	io_paths("mlx5");
}

static void test_io_siw(void **s)
{
	io_paths("siw");
}

/*
 * The Linux host's way: a fast-registration MR per command, descriptor
 * 0x4F; the response is a SEND_WITH_INVALIDATE of that rkey.
 */
static void send_inv(const char *profile)
{
	struct ib_reg_wr reg;
	struct scatterlist sg;
	struct ib_wc wc;
	struct ib_mr *mr;
	struct host h;
	u64 id;
	u8 *expect;
	int round;

	memset(&h, 0, sizeof(h));
	setup_io(&h, profile);
	expect = malloc(8192);
	assert_non_null(expect);
	mr = ib_alloc_mr(h.env.pd[0], IB_MR_TYPE_MEM_REG, 2);
	assert_false(IS_ERR(mr));
	for (round = 0; round < 2; round++) {
		u8 op = round ? nvme_cmd_read : nvme_cmd_write;

		sg_init_one(&sg, h.data + 8192, 8192);
		assert_int_equal(
			ib_dma_map_sg(h.env.dev[0], &sg, 1, DMA_BIDIRECTIONAL),
			1);
		assert_int_equal(ib_map_mr_sg(mr, &sg, 1, NULL, 4096), 1);
		ib_update_fast_reg_key(mr, (u8)(ib_inc_rkey(mr->rkey) & 0xff));
		memset(&reg, 0, sizeof(reg));
		reg.wr.opcode = IB_WR_REG_MR;
		reg.wr.wr_id = id = ++seq;
		reg.wr.send_flags = IB_SEND_SIGNALED;
		reg.mr = mr;
		reg.key = mr->rkey;
		reg.access = SOFT_PAIR_ACCESS;
		assert_int_equal(ib_post_send(h.id->qp, &reg.wr, NULL), 0);
		{
			u64 end = now_ms() + 2000;

			while (ib_poll_cq(h.env.cq[0], 1, &wc) != 1 &&
			       now_ms() < end)
				cm_settle();
		}
		assert_int_equal(wc.wr_id, id);
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		if (!round) {
			fill(h.data + 8192, 8192, 9);
			memcpy(expect, h.data + 8192, 8192);
		} else {
			memset(h.data + 8192, 0, 8192);
		}
		rw_cmd(&h, op, 1, 64, 16, (u16)(600 + round));
		set_keyed(&h, 8192, 8192,
			  NVME_KEY_SGL_FMT_DATA_DESC << 4 |
				  NVME_SGL_FMT_INVALIDATE);
		h.sqe.common.dptr.ksgl.addr = cpu_to_le64(mr->iova);
		nvme_put_le32(h.sqe.common.dptr.ksgl.key, mr->rkey);
		assert_int_equal(submit_capsule(&h, &h.sqe, sizeof(h.sqe)), 0);
		assert_true(h.last_wc.wc_flags & IB_WC_WITH_INVALIDATE);
		assert_int_equal(h.last_wc.ex.invalidate_rkey, mr->rkey);
		ib_dma_unmap_sg(h.env.dev[0], &sg, 1, DMA_BIDIRECTIONAL);
	}
	assert_memory_equal(h.data + 8192, expect, 8192);
	/* the rkey is invalid now: using it again ends the queue */
	free(expect);
	host_disconnect(&h);
	assert_int_equal(ib_dereg_mr(mr), 0);
	target_stop(&h);
}

static void test_send_inv_rxe(void **s)
{
	send_inv("rxe");
}

static void test_send_inv_siw(void **s)
{
	send_inv("siw");
}

/* A Write whose rkey the host never gave: the I/O queue is torn down. */
static void test_bad_rkey(void **s)
{
	struct nvmet_target_stats st;
	u64 recv_id, send_id, end;
	struct host h;
	int from;

	memset(&h, 0, sizeof(h));
	setup_io(&h, "rxe");
	rw_cmd(&h, nvme_cmd_write, 1, 0, 8, 500);
	set_keyed(&h, 0, 4096, NVME_KEY_SGL_FMT_DATA_DESC << 4);
	nvme_put_le32(h.sqe.common.dptr.ksgl.key, h.mr->rkey ^ 0x5500);
	from = nr_events();
	post_capsule(&h, &h.sqe, sizeof(h.sqe), &recv_id, &send_id);
	wait_event(h.ids[1], RDMA_CM_EVENT_DISCONNECTED, from);
	end = now_ms() + 5000;
	do {
		assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
		if (st.queues == 1)
			break;
		cm_settle();
	} while (now_ms() < end);
	assert_int_equal(st.queues, 1);
	assert_int_equal(st.reqs_inflight, 0);
	/* the admin queue and its controller live on */
	h.id = h.ids[0];
	assert_int_equal(prop_get(&h, NVME_REG_CSTS, false, 501), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), NVME_CSTS_RDY);
	host_disconnect(&h);
	target_stop(&h);
}

/*
 * A host whose receive queue is tiny (hrqsize 2) but which has 14 reads
 * in flight: the target's Send Queue runs out of credits and the reads
 * wait their turn; every one is answered, with its own data.
 */
static void burst(u16 hrq, u16 hsq)
{
	enum { N = 14 };
	struct nvme_completion cqes[N];
	struct nvme_command sqes[N];
	u64 recv_ids[N], send_ids[N];
	bool got[N];
	struct host h;
	int i, left;
	u64 end;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	host_connect(&h);
	assert_int_equal(admin_connect(&h, NVMET_DEFAULT_SUBNQN), 0);
	enable(&h);
	host_connect_q(&h, 1, hrq, hsq);
	{
		struct nvmf_connect_data d;

		memset(&h.sqe, 0, sizeof(h.sqe));
		h.sqe.connect.opcode = nvme_fabrics_command;
		h.sqe.connect.fctype = nvme_fabrics_type_connect;
		h.sqe.connect.qid = cpu_to_le16(1);
		h.sqe.connect.sqsize = cpu_to_le16(hsq - 1);
		memset(&d, 0, sizeof(d));
		memset(d.hostid, 0x5a, sizeof(d.hostid));
		d.cntlid = cpu_to_le16(1);
		snprintf(d.subsysnqn, sizeof(d.subsysnqn), "%s",
			 NVMET_DEFAULT_SUBNQN);
		snprintf(d.hostnqn, sizeof(d.hostnqn), "nqn.2026-01.test:host");
		assert_int_equal(submit_inline(&h, &d, sizeof(d)), 0);
	}
	/* 14 blocks of 8 KiB, each its own pattern */
	for (i = 0; i < N; i++) {
		fill(h.data, 8192, (u32)i * 7 + 3);
		rw_cmd(&h, nvme_cmd_write, 1, (u64)i * 16, 16, (u16)(800 + i));
		assert_int_equal(submit(&h, 8192), 0);
	}
	memset(h.data, 0, (size_t)N * 8192);
	for (i = 0; i < N; i++) {
		struct nvme_keyed_sgl_desc *k = &sqes[i].common.dptr.ksgl;

		memset(&sqes[i], 0, sizeof(sqes[i]));
		sqes[i].rw.opcode = nvme_cmd_read;
		sqes[i].rw.command_id = (u16)(900 + i);
		sqes[i].rw.nsid = cpu_to_le32(1);
		sqes[i].rw.slba = cpu_to_le64((u64)i * 16);
		sqes[i].rw.length = cpu_to_le16(15);
		sqes[i].common.flags = NVME_CMD_SGL_METABUF;
		k->addr = cpu_to_le64((u64)(uintptr_t)(h.data + i * 8192));
		nvme_put_le24(k->length, 8192);
		nvme_put_le32(k->key, h.mr->rkey);
		k->type = NVME_KEY_SGL_FMT_DATA_DESC << 4;
		recv_ids[i] = ++seq;
		send_ids[i] = ++seq;
		soft_env_post_recv(h.id->qp, recv_ids[i], &cqes[i],
				   sizeof(cqes[i]),
				   h.env.pd[0]->local_dma_lkey);
		got[i] = false;
	}
	for (i = 0; i < N; i++)
		assert_int_equal(soft_env_send(h.id->qp, send_ids[i], &sqes[i],
					       sizeof(sqes[i]),
					       h.env.pd[0]->local_dma_lkey),
				 0);
	left = 2 * N;
	end = now_ms() + 5000;
	while (left && now_ms() < end) {
		struct ib_wc wc;

		if (ib_poll_cq(h.env.cq[0], 1, &wc) != 1) {
			cm_settle();
			continue;
		}
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		for (i = 0; i < N; i++)
			if (wc.wr_id == recv_ids[i])
				got[i] = true;
		left--;
	}
	assert_int_equal(left, 0);
	for (i = 0; i < N; i++) {
		u8 want[8192];

		assert_true(got[i]);
		/* receives complete in order: the i-th CQE answers some cid */
		assert_int_equal(le16_to_cpu(cqes[i].status), 0);
		fill(want, 8192, (u32)i * 7 + 3);
		assert_memory_equal(h.data + i * 8192, want, 8192);
	}
	host_disconnect(&h);
	target_stop(&h);
}

static void test_sq_credits(void **s)
{
	burst(2, 32);
}

/*
 * A host that sends 14 commands to a queue of 2 entries: the target has
 * two receives posted, the extra SENDs wait (RNR, retried without end as
 * rnr_retry 7 asks) until it reposts them; all are answered.
 */
static void test_over_depth(void **s)
{
	burst(32, 2);
}

/*
 * The target's device goes away under a live controller: its queues and
 * listener are torn down, nothing of the target is left on the device.
 */
static void test_device_removal(void **s)
{
	struct nvmet_target_stats st;
	u64 end;
	struct host h;
	int ret, i;

	memset(&h, 0, sizeof(h));
	setup_io(&h, "rxe");
	rw_cmd(&h, nvme_cmd_write, 1, 0, 8, 700);
	assert_int_equal(submit(&h, 4096), 0);
	/* the fixture's own objects on the target's device go first */
	assert_int_equal(ib_free_cq(h.env.cq[1]), 0);
	assert_int_equal(ib_dealloc_pd(h.env.pd[1]), 0);
	h.env.cq[1] = NULL;
	h.env.pd[1] = NULL;
	end = now_ms() + 10000;
	do {
		/* the first call delivers DEVICE_REMOVAL */
		ret = soft_device_destroy(h.env.dev[1]);
		if (ret != -EBUSY)
			break;
		cm_settle();
		assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
	} while (now_ms() < end);
	assert_int_equal(ret, 0);
	h.env.dev[1] = NULL;
	assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
	assert_int_equal(st.queues, 0);
	assert_int_equal(st.ctrls, 0);
	assert_int_equal(st.reqs_inflight, 0);
	/* the target stops cleanly without its device */
	nvmet_target_destroy(h.tgt);
	for (i = 2; i >= 0; i--) {
		if (!h.ids[i])
			continue;
		rdma_destroy_qp(h.ids[i]);
		rdma_destroy_id(h.ids[i]);
	}
	soft_env_dereg(h.mr);
	free(h.data);
	assert_int_equal(ib_free_cq(h.env.cq[0]), 0);
	assert_int_equal(ib_dealloc_pd(h.env.pd[0]), 0);
	assert_int_equal(soft_device_destroy(h.env.dev[0]), 0);
	assert_int_equal(soft_fabric_destroy(h.env.fabric), 0);
}

/* No command for longer than KATO: the controller is torn down. */
static void test_kato_expiry(void **s)
{
	struct nvmet_target_stats st;
	struct host h;
	int from;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	host_connect(&h);
	from = nr_events();
	assert_int_equal(admin_connect_kato(&h, NVMET_DEFAULT_SUBNQN, 1000), 0);
	enable(&h);
	wait_event(h.ids[0], RDMA_CM_EVENT_DISCONNECTED, from);
	wait_target_idle(&h);
	assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
	assert_int_equal(st.kato_expired, 1);
	{
		/* the subsystem's counter (stats.c), not only the target's */
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		assert_non_null(m);
		assert_int_equal(nvmet_target_stats_json(h.tgt, m), 0);
		fclose(m);
		assert_non_null(strstr(text, "\"target\": {"));
		assert_non_null(
			strstr(text, "\n      \"keep_alive_expiries\": 1,\n"));
		free(text);
	}
	host_disconnect(&h);
	target_stop(&h);
}

/* An AER completes with a namespace change; one left open is failed. */
static void test_aer(void **s)
{
	struct ib_wc wc, swc;
	u64 recv_id, send_id;
	struct host h;

	memset(&h, 0, sizeof(h));
	target_start(&h, "rxe");
	host_connect(&h);
	assert_int_equal(admin_connect(&h, NVMET_DEFAULT_SUBNQN), 0);
	enable(&h);
	admin_cmd(&h, nvme_admin_set_features, 0, NVME_FEAT_ASYNC_EVENT,
		  NVME_AEN_CFG_NS_ATTR, 50);
	assert_int_equal(submit(&h, 0), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), NVME_AEN_CFG_NS_ATTR);
	admin_cmd(&h, nvme_admin_set_features, 0, NVME_FEAT_ASYNC_EVENT,
		  1u << 30, 51);
	assert_int_equal(submit(&h, 0), NVME_SC_INVALID_FIELD | NVME_SC_DNR);

	admin_cmd(&h, nvme_admin_async_event, 0, 0, 0, 31);
	set_keyed(&h, 0, 0, NVME_KEY_SGL_FMT_DATA_DESC << 4);
	post_capsule(&h, &h.sqe, sizeof(h.sqe), &recv_id, &send_id);
	cm_settle();
	assert_int_equal(ib_poll_cq(h.env.cq[0], 1, &swc), 1);
	assert_int_equal(swc.wr_id, send_id);
	assert_int_equal(ib_poll_cq(h.env.cq[0], 1, &wc), 0); /* held */
	assert_int_equal(nvmet_target_ns_changed(h.tgt, 1), 0);
	assert_int_equal(nvmet_target_ns_changed(h.tgt, 9), -EINVAL);
	{
		u64 end = now_ms() + 2000;

		while (ib_poll_cq(h.env.cq[0], 1, &wc) != 1 && now_ms() < end)
			cm_settle();
	}
	assert_int_equal(wc.wr_id, recv_id);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(h.cqe.command_id, 31);
	assert_int_equal(le16_to_cpu(h.cqe.status), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), 0x00040002);
	/* another, held (the target counts it) and failed at the disconnect */
	admin_cmd(&h, nvme_admin_async_event, 0, 0, 0, 31);
	set_keyed(&h, 0, 0, NVME_KEY_SGL_FMT_DATA_DESC << 4);
	post_capsule(&h, &h.sqe, sizeof(h.sqe), &recv_id, &send_id);
	{
		struct nvmet_target_stats st;
		u64 end = now_ms() + 2000;

		do {
			cm_settle();
			assert_int_equal(nvmet_target_get_stats(h.tgt, &st), 0);
		} while (st.reqs_inflight != 1 && now_ms() < end);
		assert_int_equal(st.reqs_inflight, 1);
	}
	host_disconnect(&h);
	target_stop(&h);
}

/* The discovery controller and its log page. */
static void test_discovery(void **s)
{
	struct nvmf_disc_rsp_page_entry *e;
	struct nvmf_disc_rsp_page_hdr *hdr;
	struct nvme_id_ctrl *id;
	struct host h;

	memset(&h, 0, sizeof(h));
	target_start(&h, "siw");
	host_connect(&h);
	assert_int_equal(admin_connect_kato(&h, NVME_DISC_SUBSYS_NAME, 0), 0);
	enable(&h);
	assert_int_equal(identify(&h, NVME_ID_CNS_CTRL, 0, 4096), 0);
	id = (struct nvme_id_ctrl *)h.data;
	assert_int_equal(id->cntrltype, NVME_CNTRLTYPE_DISC);
	assert_string_equal(id->subnqn, NVME_DISC_SUBSYS_NAME);
	/* the header first (1 KiB, RAE), then the whole log (3 KiB) */
	admin_cmd(&h, nvme_admin_get_log_page, 0,
		  NVME_LOG_DISC | NVME_LOG_RAE | (255u << 16), 0, 60);
	assert_int_equal(submit(&h, 1024), 0);
	hdr = (struct nvmf_disc_rsp_page_hdr *)h.data;
	assert_int_equal(le64_to_cpu(hdr->numrec), 2);
	admin_cmd(&h, nvme_admin_get_log_page, 0, NVME_LOG_DISC | (767u << 16),
		  0, 61);
	assert_int_equal(submit(&h, 3072), 0);
	e = (struct nvmf_disc_rsp_page_entry *)(h.data + 1024);
	assert_int_equal(e[0].trtype, NVMF_TRTYPE_RDMA);
	assert_int_equal(e[0].adrfam, NVMF_ADDR_FAMILY_IP4);
	assert_int_equal(e[0].subtype, NVME_NQN_NVME);
	assert_string_equal(e[0].subnqn, NVMET_DEFAULT_SUBNQN);
	assert_string_equal(e[0].traddr, "10.0.0.2");
	assert_string_equal(e[0].trsvcid, "4430");
	assert_int_equal(e[0].tsas.rdma.cms, NVMF_RDMA_CMS_RDMA_CM);
	assert_int_equal(e[1].subtype, NVME_NQN_CURR);
	/* a discovery controller has no namespaces or I/O queues */
	assert_int_equal(identify(&h, NVME_ID_CNS_NS, 1, 4096),
			 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	admin_cmd(&h, nvme_admin_set_features, 0, NVME_FEAT_NUM_QUEUES, 0, 62);
	assert_int_equal(submit(&h, 0), NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	/* shutdown, as nvme-cli ends a discovery */
	assert_int_equal(prop_set(&h, NVME_REG_CC, 0x464061, 63), 0);
	assert_int_equal(prop_get(&h, NVME_REG_CSTS, false, 64), 0);
	assert_int_equal(le32_to_cpu(h.cqe.result.u32), NVME_CSTS_SHST_CMPLT);
	host_disconnect(&h);
	target_stop(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke_rxe),
		cmocka_unit_test(test_smoke_mlx5),
		cmocka_unit_test(test_smoke_siw),
		cmocka_unit_test(test_connect_unknown_nqn),
		cmocka_unit_test(test_cm_rejects),
		cmocka_unit_test(test_io_qid_in_connect),
		cmocka_unit_test(test_io_connect_checks),
		cmocka_unit_test(test_bad_opts),
		cmocka_unit_test(test_admin),
		cmocka_unit_test(test_io_rxe),
		cmocka_unit_test(test_io_mlx5),
		cmocka_unit_test(test_io_siw),
		cmocka_unit_test(test_send_inv_rxe),
		cmocka_unit_test(test_send_inv_siw),
		cmocka_unit_test(test_bad_rkey),
		cmocka_unit_test(test_sq_credits),
		cmocka_unit_test(test_over_depth),
		cmocka_unit_test(test_device_removal),
		cmocka_unit_test(test_kato_expiry),
		cmocka_unit_test(test_aer),
		cmocka_unit_test(test_discovery),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

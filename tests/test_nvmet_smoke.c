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

#include "nvmet/nvme_proto.h"
#include "nvmet/nvmet.h"

#define PORT 4430

struct host {
	struct soft_env env;
	struct nvmet_target *tgt;
	struct rdma_cm_id *id;
	struct ib_mr *mr; /* over @data, remote read/write */
	u8 data[8192];
	struct nvme_command sqe;
	struct nvme_completion cqe;
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
	o.verbose = getenv("NVMET_VERBOSE") != NULL;
	h->tgt = nvmet_target_create(&o);
	assert_false(IS_ERR(h->tgt));
	h->mr = soft_env_reg(&h->env, 0, h->data, sizeof(h->data),
			     SOFT_PAIR_ACCESS);
}

/* The admin queue's RDMA connection: hrqsize 32, hsqsize 31. */
static void host_connect(struct host *h)
{
	struct nvme_rdma_cm_req req = {
		.recfmt = 0,
		.qid = 0,
		.hrqsize = cpu_to_le16(32),
		.hsqsize = cpu_to_le16(31),
	};
	struct rdma_conn_param cp = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.responder_resources = 16,
		.initiator_depth = 0,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct cm_rec *r;

	h->nev = 0;
	h->id = cm_client(&h->env, h, PORT, &h->nev);
	assert_int_equal(rdma_connect(h->id, &cp), 0);
	r = cm_wait(++h->nev);
	assert_int_equal(r->ev, RDMA_CM_EVENT_ESTABLISHED);
	assert_true(r->len >= sizeof(struct nvme_rdma_cm_rep));
	/* crqsize: the target's receive queue, hsqsize + 1 */
	assert_int_equal(r->pdata[2] | r->pdata[3] << 8, 32);
}

static void host_disconnect(struct host *h)
{
	struct nvmet_target_stats st;
	u64 end = now_ms() + 5000;

	assert_int_equal(rdma_disconnect(h->id), 0);
	do {
		assert_int_equal(nvmet_target_get_stats(h->tgt, &st), 0);
		if (!st.queues && !st.ctrls)
			break;
		cm_settle();
	} while (now_ms() < end);
	assert_int_equal(st.queues, 0);
	assert_int_equal(st.ctrls, 0);
	assert_int_equal(st.reqs_inflight, 0);
	rdma_destroy_qp(h->id);
	rdma_destroy_id(h->id);
	h->id = NULL;
}

static void target_stop(struct host *h)
{
	soft_env_dereg(h->mr);
	nvmet_target_destroy(h->tgt);
	cm_env_fini(&h->env);
}

/*
 * Send h->sqe and wait for its completion; @len bytes of h->data are the
 * command's data (keyed SGL, no invalidation), or none.
 */
static u16 submit(struct host *h, u32 len)
{
	static u64 seq = 100;
	struct nvme_keyed_sgl_desc *k = &h->sqe.common.dptr.ksgl;
	u64 recv_id = ++seq, send_id = ++seq;
	struct ib_wc wc, swc;

	h->sqe.common.flags = NVME_CMD_SGL_METABUF;
	k->addr = cpu_to_le64((u64)(uintptr_t)h->data);
	nvme_put_le24(k->length, len);
	nvme_put_le32(k->key, h->mr->rkey);
	k->type = NVME_KEY_SGL_FMT_DATA_DESC << 4;
	memset(&h->cqe, 0xee, sizeof(h->cqe));
	soft_env_post_recv(h->id->qp, recv_id, &h->cqe, sizeof(h->cqe),
			   h->env.pd[0]->local_dma_lkey);
	assert_int_equal(soft_env_send(h->id->qp, send_id, &h->sqe,
				       sizeof(h->sqe),
				       h->env.pd[0]->local_dma_lkey),
			 0);
	wait_wcs(h, send_id, &swc, recv_id, &wc);
	assert_int_equal(swc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.byte_len, sizeof(struct nvme_completion));
	assert_int_equal(h->cqe.command_id, h->sqe.common.command_id);
	return le16_to_cpu(h->cqe.status) >> 1;
}

static u16 admin_connect(struct host *h, const char *subnqn)
{
	struct nvmf_connect_data *d = (struct nvmf_connect_data *)h->data;

	memset(&h->sqe, 0, sizeof(h->sqe));
	h->sqe.connect.opcode = nvme_fabrics_command;
	h->sqe.connect.command_id = 0;
	h->sqe.connect.fctype = nvme_fabrics_type_connect;
	h->sqe.connect.qid = 0;
	h->sqe.connect.sqsize = cpu_to_le16(31);
	h->sqe.connect.kato = cpu_to_le32(5000);
	memset(d, 0, sizeof(*d));
	memset(d->hostid, 0x5a, sizeof(d->hostid));
	d->cntlid = cpu_to_le16(0xffff);
	snprintf(d->subsysnqn, sizeof(d->subsysnqn), "%s", subnqn);
	snprintf(d->hostnqn, sizeof(d->hostnqn), "nqn.2026-01.test:host");
	return submit(h, sizeof(*d));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke_rxe),
		cmocka_unit_test(test_smoke_mlx5),
		cmocka_unit_test(test_smoke_siw),
		cmocka_unit_test(test_connect_unknown_nqn),
		cmocka_unit_test(test_bad_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A storage-target-style request, served the way NVMe-oF (nvmet-rdma) and
 * iSER (isert) targets serve theirs, between two software devices: an
 * initiator host and a target host.
 *
 *   initiator                                target
 *   ---------                                ------
 *   register the data buffer                 post a receive for a command
 *   (remote read + write), post a
 *   receive for the response,
 *   SEND the command  ---------------------> recv done: parse the command,
 *   {address, rkey, length}                  rdma_rw_ctx_init(READ),
 *                                            rdma_rw_ctx_post(cqe)
 *                     <--- RDMA READ ------
 *                                            read done: destroy the context,
 *                                            process the data,
 *                                            rdma_rw_ctx_init(WRITE),
 *                                            rdma_rw_ctx_post(chain_wr =
 *                                            the response SEND): one post
 *                     <--- RDMA WRITE -----
 *   recv done: the response  <--- SEND ---- send done (the only completion
 *   arrived, so the data did:                of the chain): destroy the
 *   verify every byte                        context
 *
 * The target's buffer is a scatterlist of separate pages, as a target's
 * would be.  Every step is driven by a completion through its ib_cqe's
 * done(), and the example runs once per software profile: on rxe the READ
 * is one RDMA READ with one SGE per page, on mlx5 (max_sgl_rd 3) it goes
 * through a registered MR, on siw (iWARP) through an MR and
 * RDMA_READ_WITH_INV.  Run rdmarw-chain to see any of these chains in
 * detail.
 *
 * Exit status: 0 when every byte arrived as expected on every profile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#define PORT 1
#define DATA_LEN (4 * 4096 + 1000) /* not a whole number of pages */
#define TARGET_MAX_PAGES 16 /* the largest command the target takes */
#define MAX_ROUNDS 100 /* CQ polling rounds before giving up */

/*
 * What travels in the SENDs.  A real protocol fixes the byte order
 * (little-endian in NVMe-oF); both hosts share one here.
 */
struct demo_cmd {
	u64 addr; /* the initiator's buffer, as registered */
	u32 rkey; /* its remote key */
	u32 length; /* bytes to process */
};

struct demo_rsp {
	u32 status; /* 0: done */
	u32 length; /* bytes written back */
};

/* One host: a device, a PD, a CQ and a QP connected to the other host. */
struct host {
	const char *name;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

struct initiator {
	struct host h;
	unsigned char *data; /* the target reads and writes it */
	struct ib_mr *data_mr;
	struct demo_cmd cmd;
	struct demo_rsp rsp;
	struct ib_cqe cmd_cqe; /* the command SEND completed */
	struct ib_cqe rsp_cqe; /* the response arrived */
	bool got_response;
};

struct target {
	struct host h;
	struct scatterlist sgl[TARGET_MAX_PAGES];
	void *pages[TARGET_MAX_PAGES];
	u32 nents;
	struct demo_cmd cmd; /* receive buffer for the command */
	struct demo_rsp rsp; /* the response SEND's payload */
	struct ib_send_wr rsp_wr;
	struct ib_sge rsp_sge;
	struct rdma_rw_ctx ctx; /* the READ, then the WRITE */
	bool ctx_live;
	enum dma_data_direction ctx_dir;
	bool replied; /* the response SEND completed */
	u32 wqes; /* WQEs the last post should execute */
	struct ib_cqe recv_cqe; /* a command arrived */
	struct ib_cqe read_cqe; /* the RDMA READ completed */
	struct ib_cqe send_cqe; /* the response SEND went */
	u64 wrs_before;
	bool failed;
};

static int errors;

#define say(h, fmt, ...) printf("  %-9s " fmt "\n", (h)->name, ##__VA_ARGS__)

static void fail(struct host *h, const char *what, int err)
{
	say(h, "FAILED: %s (%d)", what, err);
	errors++;
}

static const char *path_name(const struct rdma_rw_ctx *ctx)
{
	switch (ctx->type) {
	case RDMA_RW_SINGLE_WR:
		return "one RDMA WR with one SGE";
	case RDMA_RW_MULTI_WR:
		return "one SGE per page";
	case RDMA_RW_MR:
		return "memory registration";
	case RDMA_RW_IOVA:
		return "one IOVA range";
	default:
		return "?";
	}
}

static const char *opname(enum ib_wr_opcode op)
{
	return ib_wr_opcode_str(op) + strlen("IB_WR_");
}

/* Append "-> NAME" (with its SGE count for RDMA WRs) to @buf. */
static void add(char *buf, size_t len, const char *name, int sges)
{
	size_t used = strlen(buf);
	const char *sep = used ? " -> " : "";

	if (sges)
		snprintf(buf + used, len - used, "%s%s(%d SGE%s)", sep, name,
			 sges, sges == 1 ? "" : "s");
	else
		snprintf(buf + used, len - used, "%s%s", sep, name);
}

/*
 * The chain a posted context put on the Send Queue, read back from the
 * context (rdmarw-chain shows any chain in every detail).
 */
static const char *describe_chain(const struct rdma_rw_ctx *ctx,
				  const struct ib_send_wr *chain_wr, char *buf,
				  size_t len)
{
	const struct ib_rdma_wr *wr;
	u32 i;

	buf[0] = '\0';
	for (i = 0; i < ctx->nr_ops; i++) {
		if (ctx->type == RDMA_RW_MR) {
			if (ctx->reg[i].inv_wr.next)
				add(buf, len, "LOCAL_INV", 0);
			add(buf, len, "REG_MR", 0);
			wr = &ctx->reg[i].wr;
		} else if (ctx->type == RDMA_RW_MULTI_WR) {
			wr = &ctx->map.wrs[i];
		} else {
			wr = &ctx->single.wr;
		}
		add(buf, len, opname(wr->wr.opcode), wr->wr.num_sge);
	}
	if (chain_wr)
		add(buf, len, opname(chain_wr->opcode), 0);
	return buf;
}

/* The target's work requests executed so far (soft device counter). */
static u64 wrs_executed(struct host *h)
{
	struct soft_stats st;

	return soft_device_stats(h->dev, &st) ? 0 : st.wrs_executed;
}

/* ---- target ------------------------------------------------------------ */

static int target_post_recv(struct target *t)
{
	struct ib_sge sge = {
		.addr = (u64)(uintptr_t)&t->cmd,
		.length = sizeof(t->cmd),
		.lkey = t->h.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &t->recv_cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(t->h.qp, &wr, NULL);
}

static void target_destroy_ctx(struct target *t)
{
	if (!t->ctx_live)
		return;
	rdma_rw_ctx_destroy(&t->ctx, t->h.qp, PORT, t->sgl, t->nents,
			    t->ctx_dir);
	t->ctx_live = false;
}

/*
 * Set up a context over the target's pages and post it.  For the READ the
 * completion comes through @cqe; for the WRITE the response SEND follows
 * the RDMA WRITEs in the same post (@chain_wr) and only it completes.
 */
static int target_rw(struct target *t, enum dma_data_direction dir,
		     struct ib_cqe *cqe, struct ib_send_wr *chain_wr)
{
	const char *op = dir == DMA_FROM_DEVICE ? "READ" : "WRITE";
	char chain[160];
	int ret;

	ret = rdma_rw_ctx_init(&t->ctx, t->h.qp, PORT, t->sgl, t->nents, 0,
			       t->cmd.addr, t->cmd.rkey, dir);
	if (ret < 0) {
		fail(&t->h, "rdma_rw_ctx_init", ret);
		return ret;
	}
	t->ctx_live = true;
	t->ctx_dir = dir;
	say(&t->h, "rdma_rw_ctx_init(%s, %u pages) = %d WQE%s: %s", op,
	    t->nents, ret, ret == 1 ? "" : "s", path_name(&t->ctx));
	t->wqes = (u32)ret + (chain_wr ? 1 : 0);
	t->wrs_before = wrs_executed(&t->h);
	ret = rdma_rw_ctx_post(&t->ctx, t->h.qp, PORT, cqe, chain_wr);
	if (ret) {
		fail(&t->h, "rdma_rw_ctx_post", ret);
		return ret;
	}
	say(&t->h, "rdma_rw_ctx_post(%s): %s",
	    chain_wr ? "chain_wr = response SEND" : "cqe = read_done",
	    describe_chain(&t->ctx, chain_wr, chain, sizeof(chain)));
	return 0;
}

/*
 * The target's buffer for a command: separate pages, one scatterlist entry
 * each, as a target allocates them (nvmet's sgl_alloc()).
 */
static int target_alloc_pages(struct target *t, u32 len)
{
	u32 i;

	t->nents = (len + 4095) / 4096;
	sg_init_table(t->sgl, t->nents);
	for (i = 0; i < t->nents; i++, len -= 4096) {
		t->pages[i] = aligned_alloc(4096, 4096);
		if (!t->pages[i])
			return -1;
		sg_set_buf(&t->sgl[i], t->pages[i], len < 4096 ? len : 4096);
	}
	return 0;
}

/* Step 2: a command arrived.  Fetch the initiator's data. */
static void target_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct target *t = container_of(wc->wr_cqe, struct target, recv_cqe);

	if (wc->status != IB_WC_SUCCESS || wc->byte_len != sizeof(t->cmd) ||
	    !t->cmd.length || t->cmd.length > TARGET_MAX_PAGES * 4096) {
		fail(&t->h, "bad command", wc->status);
		t->failed = true;
		return;
	}
	say(&t->h, "recv done: command {addr, rkey, length %u}", t->cmd.length);
	if (target_alloc_pages(t, t->cmd.length) ||
	    target_rw(t, DMA_FROM_DEVICE, &t->read_cqe, NULL))
		t->failed = true;
}

/* The "processing": every byte transformed, so the initiator can tell. */
static void process(struct target *t)
{
	u32 i, j, left = t->cmd.length;

	for (i = 0; i < t->nents; i++) {
		unsigned char *p = t->pages[i];
		u32 n = left < t->sgl[i].length ? left : t->sgl[i].length;

		for (j = 0; j < n; j++)
			p[j] = (unsigned char)(p[j] ^ 0xa5);
		left -= n;
	}
}

/* The post executed exactly the WQEs rdma_rw_ctx_init() announced. */
static bool check_wqes(struct target *t, const char *what)
{
	u64 done = wrs_executed(&t->h) - t->wrs_before;

	say(&t->h, "%s (%llu WR%s executed)", what, (unsigned long long)done,
	    done == 1 ? "" : "s");
	if (done == t->wqes)
		return true;
	fail(&t->h, "WRs executed differ from the WQEs announced", (int)done);
	t->failed = true;
	return false;
}

/* Step 3: the data is here.  Process it and send it back with the reply. */
static void target_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct target *t = container_of(wc->wr_cqe, struct target, read_cqe);

	if (wc->status != IB_WC_SUCCESS) {
		fail(&t->h, ib_wc_status_msg(wc->status), -1);
		t->failed = true;
		return;
	}
	if (!check_wqes(t, "read done: one completion for the whole READ"))
		return;
	target_destroy_ctx(t);
	process(t);
	say(&t->h, "processed %u bytes (each byte XOR 0xa5)", t->cmd.length);

	t->rsp.status = 0;
	t->rsp.length = t->cmd.length;
	t->rsp_sge.addr = (u64)(uintptr_t)&t->rsp;
	t->rsp_sge.length = sizeof(t->rsp);
	t->rsp_sge.lkey = t->h.pd->local_dma_lkey;
	memset(&t->rsp_wr, 0, sizeof(t->rsp_wr));
	t->rsp_wr.opcode = IB_WR_SEND;
	t->rsp_wr.sg_list = &t->rsp_sge;
	t->rsp_wr.num_sge = 1;
	t->rsp_wr.send_flags = IB_SEND_SIGNALED;
	t->rsp_wr.wr_cqe = &t->send_cqe;
	if (target_rw(t, DMA_TO_DEVICE, NULL, &t->rsp_wr))
		t->failed = true;
}

/*
 * Step 4: the response SEND completed.  Work on a QP completes in order,
 * so the RDMA WRITEs before it are done too: release their context.
 */
static void target_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct target *t = container_of(wc->wr_cqe, struct target, send_cqe);

	if (wc->status != IB_WC_SUCCESS) {
		fail(&t->h, ib_wc_status_msg(wc->status), -1);
		t->failed = true;
		return;
	}
	if (!check_wqes(t, "send done: the only completion of WRITE + SEND"))
		return;
	target_destroy_ctx(t);
	t->replied = true;
}

/* ---- initiator ---------------------------------------------------------- */

static void initiator_cmd_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct initiator *in =
		container_of(wc->wr_cqe, struct initiator, cmd_cqe);

	if (wc->status != IB_WC_SUCCESS)
		fail(&in->h, "command SEND", wc->status);
	else
		say(&in->h, "send done: command delivered");
}

/* Step 5: the response.  The data arrived before it: check every byte. */
static void initiator_rsp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct initiator *in =
		container_of(wc->wr_cqe, struct initiator, rsp_cqe);
	u32 i, bad = 0;

	in->got_response = true;
	if (wc->status != IB_WC_SUCCESS || in->rsp.status ||
	    in->rsp.length != DATA_LEN) {
		fail(&in->h, "bad response", wc->status);
		return;
	}
	for (i = 0; i < DATA_LEN; i++)
		if (in->data[i] != (unsigned char)((i * 7 + 3) ^ 0xa5))
			bad++;
	if (bad) {
		fail(&in->h, "bytes differ from the expected reply", (int)bad);
		return;
	}
	say(&in->h, "recv done: response status 0; %u bytes verified",
	    DATA_LEN);
}

static int initiator_start(struct initiator *in, struct ib_pd *pd)
{
	struct ib_sge rsp_sge = {
		.addr = (u64)(uintptr_t)&in->rsp,
		.length = sizeof(in->rsp),
		.lkey = pd->local_dma_lkey,
	};
	struct ib_recv_wr rsp_wr = {
		.wr_cqe = &in->rsp_cqe,
		.sg_list = &rsp_sge,
		.num_sge = 1,
	};
	struct ib_sge cmd_sge = {
		.addr = (u64)(uintptr_t)&in->cmd,
		.length = sizeof(in->cmd),
		.lkey = pd->local_dma_lkey,
	};
	struct ib_send_wr cmd_wr = {
		.wr_cqe = &in->cmd_cqe,
		.sg_list = &cmd_sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	u32 i;
	int ret;

	for (i = 0; i < DATA_LEN; i++)
		in->data[i] = (unsigned char)(i * 7 + 3);
	in->data_mr =
		ib_reg_user_mr(pd, (u64)(uintptr_t)in->data, DATA_LEN,
			       (u64)(uintptr_t)in->data,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(in->data_mr)) {
		ret = (int)PTR_ERR(in->data_mr);
		in->data_mr = NULL;
		return ret;
	}
	say(&in->h, "registered %u bytes for remote read and write", DATA_LEN);
	ret = ib_post_recv(in->h.qp, &rsp_wr, NULL);
	if (ret)
		return ret;
	in->cmd.addr = (u64)(uintptr_t)in->data;
	in->cmd.rkey = in->data_mr->rkey;
	in->cmd.length = DATA_LEN;
	ret = ib_post_send(in->h.qp, &cmd_wr, NULL);
	if (!ret)
		say(&in->h, "SEND command {addr, rkey, length %u}", DATA_LEN);
	return ret;
}

/* ---- set-up and tear-down ----------------------------------------------- */

static int host_open(struct host *h, struct soft_fabric *fabric,
		     const struct soft_profile *prof, u32 rdma_ctxs)
{
	struct ib_qp_init_attr attr = {
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = (u32)prof->attrs.max_send_sge,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = rdma_ctxs },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = PORT,
	};

	h->dev = soft_device_create(fabric, NULL, prof);
	if (IS_ERR(h->dev)) {
		h->dev = NULL;
		return -1;
	}
	h->pd = ib_alloc_pd(h->dev, 0);
	if (IS_ERR(h->pd)) {
		h->pd = NULL;
		return -1;
	}
	h->cq = ib_alloc_cq(h->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(h->cq)) {
		h->cq = NULL;
		return -1;
	}
	attr.send_cq = attr.recv_cq = h->cq;
	h->qp = ib_create_qp(h->pd, &attr);
	if (IS_ERR(h->qp)) {
		h->qp = NULL;
		return -1;
	}
	return 0;
}

static void host_close(struct host *h)
{
	if (h->qp && ib_destroy_qp(h->qp))
		fail(h, "ib_destroy_qp", -1);
	if (h->cq && ib_free_cq(h->cq))
		fail(h, "ib_free_cq", -1);
	if (h->pd && ib_dealloc_pd(h->pd))
		fail(h, "ib_dealloc_pd", -1);
	if (h->dev && soft_device_destroy(h->dev))
		fail(h, "soft_device_destroy", -1);
}

/*
 * Poll both CQs, calling each completion's done(), until the target has
 * seen its response go and the initiator has it.
 */
static void run_request(struct initiator *in, struct target *t)
{
	int round;

	for (round = 0; round < MAX_ROUNDS && !t->failed &&
			!(in->got_response && t->replied);
	     round++) {
		ib_process_cq_direct(t->h.cq, -1);
		ib_process_cq_direct(in->h.cq, -1);
	}
	if (!in->got_response || !t->replied)
		fail(&in->h, "the request did not complete", -1);
}

static void serve_one(const char *profile)
{
	struct initiator in = {
		.h.name = "initiator",
		.cmd_cqe.done = initiator_cmd_done,
		.rsp_cqe.done = initiator_rsp_done,
	};
	struct target t = {
		.h.name = "target",
		.recv_cqe.done = target_recv_done,
		.read_cqe.done = target_read_done,
		.send_cqe.done = target_send_done,
	};
	struct soft_fabric *fabric;
	struct soft_profile prof;
	u32 i;

	printf("%s:\n", profile);
	fabric = soft_fabric_create();
	if (IS_ERR(fabric) || soft_profile_get(profile, &prof)) {
		errors++;
		return;
	}
	in.data = aligned_alloc(4096, (DATA_LEN + 4095) / 4096 * 4096);
	/* The target sizes its QP for one R/W context: MR pool, SQ depth. */
	if (!in.data || host_open(&in.h, fabric, &prof, 0) ||
	    host_open(&t.h, fabric, &prof, 1) ||
	    soft_qp_connect(in.h.qp, t.h.qp)) {
		fail(&t.h, "set-up", -1);
		goto out;
	}
	if (target_post_recv(&t)) {
		fail(&t.h, "ib_post_recv", -1);
		goto out;
	}
	say(&t.h, "posted a receive for the command");
	if (initiator_start(&in, in.h.pd)) {
		fail(&in.h, "start", -1);
		goto out;
	}
	run_request(&in, &t);
out:
	target_destroy_ctx(&t);
	if (in.data_mr && ib_dereg_mr(in.data_mr))
		fail(&in.h, "ib_dereg_mr", -1);
	host_close(&t.h);
	host_close(&in.h);
	if (soft_fabric_destroy(fabric))
		fail(&t.h, "soft_fabric_destroy", -1);
	for (i = 0; i < TARGET_MAX_PAGES; i++)
		free(t.pages[i]);
	free(in.data);
}

int main(void)
{
	static const char *const profiles[] = { "rxe", "mlx5", "siw" };
	size_t i;

	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		serve_one(profiles[i]);
	printf("%s\n", errors ? "FAILED" : "all requests served and verified");
	return errors ? 1 : 0;
}

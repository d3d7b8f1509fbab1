// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nvmeof_pi: an NVMe-oF-style exchange with end-to-end protection
 * information, on two software devices (mlx5 profile, which offers
 * integrity MRs).
 *
 * The host owns a namespace format of 4096-byte blocks with 8 bytes of
 * T10-DIF type 1 PI in a separate buffer.  For each I/O it registers an
 * integrity MR over its data and PI (memory and wire T10-DIF), as nvme-rdma
 * does, and SENDs a command capsule with the MR's rkey.  The target serves
 * it through rdma_rw_ctx_signature_init() with the attributes nvmet-rdma
 * builds (PRCHK guard and reference tag: pass and check), into a backing
 * store that keeps data and PI apart, and SENDs back a status.
 *
 *   1. WRITE 8 blocks: the target READs them, both MRs check every tuple.
 *   2. One byte of block 5 goes bad in the backing store.
 *   3. READ 8 blocks: the target WRITEs them; its MR catches the bad guard
 *      of block 5 and the command fails with a guard check status.
 *
 * Exit status 0 when everything happened as described.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#define LBA_SIZE 4096u
#define NLB 8u
#define PI_SIZE 8u
#define SLBA 0x2000u

/* NVMe status codes of the end-to-end protection checks. */
#define NVME_SC_SUCCESS 0x0
#define NVME_SC_GUARD_CHECK 0x282
#define NVME_SC_APPTAG_CHECK 0x283
#define NVME_SC_REFTAG_CHECK 0x284

enum { CMD_WRITE = 1, CMD_READ = 2 };

/* The command capsule and the response, as they travel in SENDs. */
struct capsule {
	u32 opcode;
	u32 slba;
	u32 nlb;
	u32 rkey;
};

struct response {
	u32 status;
	u32 bad_block; /* the failing block, from sig_err_offset */
};

struct side {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

static struct soft_fabric *fabric;
static struct side host, target;
/* Target backing store: data and PI of the namespace, apart. */
static u8 store_data[NLB * LBA_SIZE] __attribute__((aligned(4096)));
static u8 store_pi[NLB * PI_SIZE] __attribute__((aligned(64)));
/* Host buffers. */
static u8 host_data[NLB * LBA_SIZE] __attribute__((aligned(4096)));
static u8 host_pi[NLB * PI_SIZE] __attribute__((aligned(64)));
static struct capsule cmd_buf, cmd_rx;
static struct response rsp_buf, rsp_rx;

static int fail(const char *what, long err)
{
	fprintf(stderr, "nvmeof_pi: %s: %s\n", what, strerror((int)-err));
	exit(1);
}

static void make_side(struct side *s, struct soft_profile *p)
{
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 2 },
		/* nvme-rdma and nvmet-rdma ask for it when PI is offloaded */
		.create_flags = IB_QP_CREATE_INTEGRITY_EN,
	};

	s->dev = soft_device_create(fabric, NULL, p);
	if (IS_ERR(s->dev))
		fail("soft_device_create", PTR_ERR(s->dev));
	s->pd = ib_alloc_pd(s->dev, 0);
	if (IS_ERR(s->pd))
		fail("ib_alloc_pd", PTR_ERR(s->pd));
	s->cq = ib_alloc_cq(s->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		fail("ib_alloc_cq", PTR_ERR(s->cq));
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = ib_create_qp(s->pd, &qa);
	if (IS_ERR(s->qp))
		fail("ib_create_qp", PTR_ERR(s->qp));
}

/* The T10-DIF domain both sides use: CRC guard, type 1 reference tags. */
static void dif_domain(struct ib_sig_domain *d, u32 slba)
{
	memset(d, 0, sizeof(*d));
	d->sig_type = IB_SIG_TYPE_T10_DIF;
	d->sig.dif.bg_type = IB_T10DIF_CRC;
	d->sig.dif.pi_interval = LBA_SIZE;
	d->sig.dif.ref_tag = slba;
	d->sig.dif.ref_remap = true;
	d->sig.dif.apptag_check_mask = 0xffff;
	d->sig.dif.app_escape = true;
}

static void pass_attrs(struct ib_sig_attrs *a, u32 slba)
{
	memset(a, 0, sizeof(*a));
	dif_domain(&a->mem, slba);
	dif_domain(&a->wire, slba);
	/* PRCHK_GUARD | PRCHK_REF */
	a->check_mask = IB_SIG_CHECK_GUARD | IB_SIG_CHECK_REFTAG;
}

/* What the host's block layer would do: PI for each block of data. */
static void host_generate_pi(u32 slba)
{
	u32 b;

	for (b = 0; b < NLB; b++) {
		u16 g = crc16_t10dif(0, host_data + b * LBA_SIZE, LBA_SIZE);
		u32 ref = slba + b;
		u8 *pi = host_pi + b * PI_SIZE;

		pi[0] = (u8)(g >> 8);
		pi[1] = (u8)g;
		pi[2] = pi[3] = 0;
		pi[4] = (u8)(ref >> 24);
		pi[5] = (u8)(ref >> 16);
		pi[6] = (u8)(ref >> 8);
		pi[7] = (u8)ref;
	}
}

static void post_recv(struct side *s, void *buf, u32 len)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf,
			      .length = len,
			      .lkey = s->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	int ret = ib_post_recv(s->qp, &wr, NULL);

	if (ret)
		fail("ib_post_recv", ret);
}

static void send_buf(struct side *s, void *buf, u32 len)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf,
			      .length = len,
			      .lkey = s->pd->local_dma_lkey };
	struct ib_send_wr wr = { .opcode = IB_WR_SEND,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .send_flags = IB_SEND_SIGNALED };
	int ret = ib_post_send(s->qp, &wr, NULL);

	if (ret)
		fail("ib_post_send", ret);
}

/* Take every completion of @s, failing on an error; return how many. */
static int drain(struct side *s)
{
	struct ib_wc wc[8];
	int n, i, total = 0;

	while ((n = ib_poll_cq(s->cq, 8, wc)) > 0) {
		for (i = 0; i < n; i++)
			if (wc[i].status != IB_WC_SUCCESS)
				fail(ib_wc_status_msg(wc[i].status), -EIO);
		total += n;
	}
	return total;
}

/* ---- host ------------------------------------------------------------- */

/*
 * Register the host buffers in an integrity MR for the target to reach,
 * as nvme_rdma_map_sg_pi() does: LOCAL_WRITE and remote READ and WRITE.
 */
static struct ib_mr *host_map(struct scatterlist *ds, struct scatterlist *ps,
			      u32 slba)
{
	struct ib_mr *mr = ib_alloc_mr_integrity(host.pd, 1, 1);
	struct ib_reg_wr reg;
	int ret;

	if (IS_ERR(mr))
		fail("ib_alloc_mr_integrity", PTR_ERR(mr));
	pass_attrs(mr->sig_attrs, slba);
	sg_init_one(ds, host_data, sizeof(host_data));
	sg_init_one(ps, host_pi, sizeof(host_pi));
	if (ib_dma_map_sg(host.dev, ds, 1, DMA_BIDIRECTIONAL) != 1 ||
	    ib_dma_map_sg(host.dev, ps, 1, DMA_BIDIRECTIONAL) != 1)
		fail("ib_dma_map_sg", -EINVAL);
	ret = ib_map_mr_sg_pi(mr, ds, 1, NULL, ps, 1, NULL, SZ_4K);
	if (ret)
		fail("ib_map_mr_sg_pi", ret);
	ib_update_fast_reg_key(mr, (u8)ib_inc_rkey(mr->lkey));
	reg = (struct ib_reg_wr){
		.wr = { .opcode = IB_WR_REG_MR_INTEGRITY },
		.mr = mr,
		.key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	ret = ib_post_send(host.qp, &reg.wr, NULL);
	if (ret)
		fail("REG_MR_INTEGRITY", ret);
	return mr;
}

static void host_unmap(struct ib_mr *mr, struct scatterlist *ds,
		       struct scatterlist *ps)
{
	struct ib_mr_status st;

	/* nvme_rdma_check_pi_status(): the host MR saw the wire side. */
	if (ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st) == 0 &&
	    st.fail_status)
		printf("  host MR:   PI error type %d at block %llu\n",
		       st.sig_err.err_type,
		       (unsigned long long)(st.sig_err.sig_err_offset /
					    (LBA_SIZE + PI_SIZE)));
	ib_dma_unmap_sg(host.dev, ds, 1, DMA_BIDIRECTIONAL);
	ib_dma_unmap_sg(host.dev, ps, 1, DMA_BIDIRECTIONAL);
	if (ib_dereg_mr(mr))
		fail("ib_dereg_mr", -EBUSY);
}

/* ---- target ------------------------------------------------------------ */

struct target_io {
	struct ib_cqe cqe;
	bool done;
	enum ib_wc_status status;
};

static void target_rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct target_io *io = container_of(wc->wr_cqe, struct target_io, cqe);

	io->done = true;
	io->status = wc->status;
}

/* nvmet_rdma_check_pi_status(). */
static u32 target_pi_status(struct ib_mr *mr, u32 *bad_block)
{
	struct ib_mr_status st;

	if (ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st))
		return NVME_SC_GUARD_CHECK;
	if (!(st.fail_status & IB_MR_CHECK_SIG_STATUS))
		return NVME_SC_SUCCESS;
	*bad_block = (u32)(st.sig_err.sig_err_offset / (LBA_SIZE + PI_SIZE));
	printf("  target MR: PI error type %d, expected 0x%x, actual 0x%x, block %u\n",
	       st.sig_err.err_type, st.sig_err.expected, st.sig_err.actual,
	       *bad_block);
	switch (st.sig_err.err_type) {
	case IB_SIG_BAD_GUARD:
		return NVME_SC_GUARD_CHECK;
	case IB_SIG_BAD_REFTAG:
		return NVME_SC_REFTAG_CHECK;
	default:
		return NVME_SC_APPTAG_CHECK;
	}
}

/* Serve the capsule in cmd_rx: move the data, check, respond. */
static void target_serve(void)
{
	enum dma_data_direction dir =
		cmd_rx.opcode == CMD_WRITE ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	struct target_io io = { .cqe.done = target_rw_done };
	struct scatterlist ds, ps;
	struct ib_sig_attrs attrs;
	struct rdma_rw_ctx ctx;
	int ret;

	sg_init_one(&ds, store_data, cmd_rx.nlb * LBA_SIZE);
	sg_init_one(&ps, store_pi, cmd_rx.nlb * PI_SIZE);
	pass_attrs(&attrs, cmd_rx.slba);
	ret = rdma_rw_ctx_signature_init(&ctx, target.qp, 1, &ds, 1, &ps, 1,
					 &attrs, 0, cmd_rx.rkey, dir);
	if (ret < 0)
		fail("rdma_rw_ctx_signature_init", ret);
	ret = rdma_rw_ctx_post(&ctx, target.qp, 1, &io.cqe, NULL);
	if (ret)
		fail("rdma_rw_ctx_post", ret);
	ib_process_cq_direct(target.cq, -1);
	if (!io.done || io.status != IB_WC_SUCCESS)
		fail("RDMA", -EIO);
	rsp_buf.bad_block = ~0u;
	rsp_buf.status = target_pi_status(ctx.reg->mr, &rsp_buf.bad_block);
	rdma_rw_ctx_destroy_signature(&ctx, target.qp, 1, &ds, 1, &ps, 1, dir);
	post_recv(&target, &cmd_rx, sizeof(cmd_rx));
	send_buf(&target, &rsp_buf, sizeof(rsp_buf));
	drain(&target);
}

/* One command from the host, served; returns the response. */
static struct response run_command(u32 opcode)
{
	struct scatterlist ds, ps;
	struct ib_mr *mr = host_map(&ds, &ps, SLBA);

	cmd_buf = (struct capsule){
		.opcode = opcode, .slba = SLBA, .nlb = NLB, .rkey = mr->rkey
	};
	post_recv(&host, &rsp_rx, sizeof(rsp_rx));
	send_buf(&host, &cmd_buf, sizeof(cmd_buf));
	drain(&target); /* the capsule arrived */
	target_serve();
	drain(&host);
	host_unmap(mr, &ds, &ps);
	return rsp_rx;
}

int main(void)
{
	struct soft_profile p;
	struct response r;
	int ret, i;

	if (soft_profile_get("mlx5", &p))
		return 1;
	fabric = soft_fabric_create();
	if (IS_ERR(fabric))
		fail("soft_fabric_create", PTR_ERR(fabric));
	make_side(&host, &p);
	make_side(&target, &p);
	ret = soft_qp_connect(host.qp, target.qp);
	if (ret)
		fail("soft_qp_connect", ret);
	post_recv(&target, &cmd_rx, sizeof(cmd_rx));

	for (i = 0; i < (int)sizeof(host_data); i++)
		host_data[i] = (u8)(i * 7 + i / LBA_SIZE);
	host_generate_pi(SLBA);
	printf("WRITE %u blocks at LBA 0x%x with PI\n", NLB, SLBA);
	r = run_command(CMD_WRITE);
	printf("  status 0x%x\n", r.status);
	if (r.status != NVME_SC_SUCCESS ||
	    memcmp(store_data, host_data, sizeof(store_data)) ||
	    memcmp(store_pi, host_pi, sizeof(store_pi)))
		return 1;

	printf("block 5 of the backing store goes bad\n");
	store_data[5 * LBA_SIZE + 100] ^= 0x04;

	memset(host_data, 0, sizeof(host_data));
	memset(host_pi, 0, sizeof(host_pi));
	printf("READ %u blocks at LBA 0x%x with PI\n", NLB, SLBA);
	r = run_command(CMD_READ);
	printf("  status 0x%x (guard check error: 0x%x), block %u\n", r.status,
	       NVME_SC_GUARD_CHECK, r.bad_block);
	if (r.status != NVME_SC_GUARD_CHECK || r.bad_block != 5)
		return 1;

	if (ib_destroy_qp(host.qp) || ib_destroy_qp(target.qp) ||
	    ib_free_cq(host.cq) || ib_free_cq(target.cq) ||
	    ib_dealloc_pd(host.pd) || ib_dealloc_pd(target.pd) ||
	    soft_device_destroy(host.dev) || soft_device_destroy(target.dev) ||
	    soft_fabric_destroy(fabric))
		return 1;
	printf("the corrupted block was caught\n");
	return 0;
}

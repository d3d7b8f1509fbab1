// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Fixture and reference model of the signature tests (see sig_env.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/sig_env.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- reference ------------------------------------------------------ */

u16 sig_ref_crc(u16 seed, const u8 *buf, size_t len)
{
	u16 crc = seed;
	size_t i;
	int b;

	for (i = 0; i < len; i++) {
		crc ^= (u16)(buf[i] << 8);
		for (b = 0; b < 8; b++)
			crc = (crc & 0x8000) ? (u16)((crc << 1) ^ 0x8bb7) :
					       (u16)(crc << 1);
	}
	return crc;
}

u16 sig_ref_csum(u16 seed, const u8 *buf, size_t len)
{
	u32 sum = seed;
	size_t i;

	for (i = 0; i < len; i += 2) {
		sum += (u32)buf[i] << 8;
		if (i + 1 < len)
			sum += buf[i + 1];
		sum = (sum & 0xffff) + (sum >> 16);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

u16 sig_ref_guard(const struct ib_t10_dif_domain *d, const u8 *data)
{
	if (d->bg_type == IB_T10DIF_CRC)
		return sig_ref_crc(d->bg, data, d->pi_interval);
	return sig_ref_csum(d->bg, data, d->pi_interval);
}

void sig_ref_pi(const struct ib_t10_dif_domain *d, const u8 *data, u64 blk,
		u8 *pi)
{
	u16 g = sig_ref_guard(d, data);
	u32 ref = d->ref_tag + (d->ref_remap ? (u32)blk : 0);

	pi[0] = (u8)(g >> 8);
	pi[1] = (u8)g;
	pi[2] = (u8)(d->app_tag >> 8);
	pi[3] = (u8)d->app_tag;
	pi[4] = (u8)(ref >> 24);
	pi[5] = (u8)(ref >> 16);
	pi[6] = (u8)(ref >> 8);
	pi[7] = (u8)ref;
}

void sig_ref_protect(const struct ib_t10_dif_domain *d, const u8 *data,
		     u64 nblk, u8 *pi)
{
	u64 b;

	for (b = 0; b < nblk; b++)
		sig_ref_pi(d, data + b * d->pi_interval, b, pi + b * 8);
}

void sig_ref_interleave(u32 interval, const u8 *data, const u8 *pi, u64 nblk,
			u8 *wire)
{
	u64 b;

	for (b = 0; b < nblk; b++) {
		memcpy(wire + b * (interval + 8), data + b * interval,
		       interval);
		memcpy(wire + b * (interval + 8) + interval, pi + b * 8, 8);
	}
}

struct ib_t10_dif_domain sig_dif(u32 interval, u32 ref, u16 app)
{
	return (struct ib_t10_dif_domain){
		.bg_type = IB_T10DIF_CRC,
		.pi_interval = (u16)interval,
		.ref_tag = ref,
		.ref_remap = true,
		.app_tag = app,
		.apptag_check_mask = 0xffff,
	};
}

void sig_fill(u8 *buf, size_t len, u64 seed)
{
	u64 x = seed | 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (u8)(x >> 24);
	}
}

/* ---- fixture -------------------------------------------------------- */

/* The two hosts (tools/common/two_hosts.c), sized for signature I/O. */
void sig_env_init(struct sig_env *e, const struct sig_env_cfg *cfg)
{
	static const struct sig_env_cfg defaults;
	struct two_hosts_cfg hc = { .cqe = { 256, 256 } };
	struct soft_profile p;
	int side, ret;

	if (!cfg)
		cfg = &defaults;
	memset(e, 0, sizeof(*e));
	if (cfg->custom)
		p = *cfg->custom;
	else
		assert_int_equal(
			soft_profile_get(cfg->profile ? cfg->profile : "mlx5",
					 &p),
			0);
	hc.profile = &p;
	for (side = 0; side < 2; side++) {
		hc.attr[side].sq_sig_type = IB_SIGNAL_REQ_WR;
		hc.attr[side].cap = (struct ib_qp_cap){ .max_send_wr = 32,
							.max_recv_wr = 8,
							.max_send_sge = 4,
							.max_recv_sge = 4 };
	}
	hc.attr[0].cap.max_rdma_ctxs =
		cfg->max_rdma_ctxs ? cfg->max_rdma_ctxs : 4;
	if (!cfg->no_integrity)
		hc.attr[0].create_flags = IB_QP_CREATE_INTEGRITY_EN;
	if (cfg->host_integrity)
		hc.attr[1].create_flags = IB_QP_CREATE_INTEGRITY_EN;
	ret = two_hosts_open(&e->hosts, &hc);
	if (ret)
		fail_msg("%s: %d", e->hosts.failed, ret);
	e->len = cfg->arena ? cfg->arena : 1 << 20;
	e->local = aligned_alloc(PAGE_SIZE, e->len);
	e->remote = aligned_alloc(PAGE_SIZE, e->len);
	assert_non_null(e->local);
	assert_non_null(e->remote);
	memset(e->local, 0, e->len);
	memset(e->remote, 0, e->len);
	e->remote_mr = ib_reg_user_mr(
		e->pd[1], (uintptr_t)e->remote, e->len, (uintptr_t)e->remote,
		IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			IB_ACCESS_REMOTE_WRITE);
	assert_false(IS_ERR(e->remote_mr));
}

void sig_env_fini(struct sig_env *e)
{
	struct soft_stats st;
	int side;

	assert_int_equal(e->qp[0]->mrs_used, 0);
	assert_int_equal(ib_dereg_mr(e->remote_mr), 0);
	assert_int_equal(two_hosts_close_objects(&e->hosts), 0);
	for (side = 0; side < 2; side++) {
		assert_int_equal(soft_device_stats(e->dev[side], &st), 0);
		assert_int_equal(st.mrs, 0);
		assert_int_equal(rdmarw_dma_mapped(e->dev[side]), 0);
	}
	assert_int_equal(two_hosts_close(&e->hosts), 0);
	free(e->local);
	free(e->remote);
	memset(e, 0, sizeof(*e));
}

struct scatterlist *sig_sgl(u8 *buf, u32 len, const u32 *cuts, u32 ncuts,
			    u32 *nents)
{
	struct scatterlist *sg;
	u32 n = 0, pos = 0, k;

	while (pos < len) {
		k = cuts ? cuts[n % ncuts] : len;
		pos += k < len - pos ? k : len - pos;
		n++;
	}
	sg = calloc(n ? n : 1, sizeof(*sg));
	assert_non_null(sg);
	sg_init_table(sg, n ? n : 1);
	for (pos = 0, k = 0; k < n; k++) {
		u32 c = cuts ? cuts[k % ncuts] : len;

		if (c > len - pos)
			c = len - pos;
		sg_set_buf(&sg[k], buf + pos, c);
		pos += c;
	}
	*nents = n;
	return sg;
}

#define SIG_GAP 64u

/* The scratch copy of @io's data, entries SIG_GAP bytes apart. */
static u8 *scatter_out(const struct sig_io *io, struct scatterlist *sg, u32 n)
{
	u8 *scratch = malloc(io->data_len + (size_t)n * SIG_GAP);
	u32 k, pos = 0;

	assert_non_null(scratch);
	for (k = 0; k < n; k++) {
		u8 *p = scratch + pos + (size_t)k * SIG_GAP;

		memcpy(p, io->data + pos, sg[k].length);
		sg_set_buf(&sg[k], p, sg[k].length);
		pos += sg[k].length;
	}
	return scratch;
}

static void scatter_back(const struct sig_io *io, struct scatterlist *sg, u32 n)
{
	u32 k, pos = 0;

	for (k = 0; k < n; k++) {
		memcpy(io->data + pos, sg_virt(&sg[k]), sg[k].length);
		pos += sg[k].length;
	}
}

struct run_done {
	struct ib_cqe cqe;
	int count;
	enum ib_wc_status status;
};

static void run_done_fn(struct ib_cq *cq, struct ib_wc *wc)
{
	struct run_done *d = container_of(wc->wr_cqe, struct run_done, cqe);

	d->count++;
	d->status = wc->status;
}

int sig_env_run(struct sig_env *e, const struct sig_io *io,
		struct ib_mr_status *st, u32 *key)
{
	struct run_done done = { .cqe.done = run_done_fn };
	struct scatterlist *sg, *psg = NULL;
	struct ib_sig_attrs attrs = io->attrs;
	struct rdma_rw_ctx ctx;
	u8 *scratch = NULL;
	u32 n, pn = 0, spins;
	int ret;

	sg = sig_sgl(io->data, io->data_len, io->cuts, io->ncuts, &n);
	if (io->scatter)
		scratch = scatter_out(io, sg, n);
	if (io->pi)
		psg = sig_sgl(io->pi, io->pi_len, NULL, 0, &pn);
	ret = rdma_rw_ctx_signature_init(&ctx, e->qp[0], 1, sg, n, psg, pn,
					 &attrs, sig_env_raddr(e, io->roff),
					 e->remote_mr->rkey, io->dir);
	assert_true(ret > 0);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e->qp[0], 1, &done.cqe, NULL),
			 0);
	/* Inline devices complete at once; threaded ones a little later. */
	for (spins = 0; !done.count; spins++) {
		assert_true(ib_process_cq_direct(e->cq[0], -1) >= 0);
		assert_true(spins < 50000000u); /* hang guard only */
		if (!done.count)
			sched_yield();
	}
	assert_int_equal(done.count, 1);
	assert_int_equal(done.status, IB_WC_SUCCESS);
	if (key)
		*key = ctx.reg->mr->lkey;
	assert_int_equal(
		ib_check_mr_status(ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, st), 0);
	rdma_rw_ctx_destroy_signature(&ctx, e->qp[0], 1, sg, n, psg, pn,
				      io->dir);
	if (scratch) {
		scatter_back(io, sg, n);
		free(scratch);
	}
	free(sg);
	free(psg);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Byte-exact transfers on the software device.  A model of each side's
 * buffer is kept next to the real one; after every work request the whole
 * buffer must equal the model, so a byte placed where it does not belong
 * (or missing) fails.  Scatter/gather lists are random (seeded PRNG): SGE
 * counts up to the QP's limit, random lengths including empty SGEs,
 * random local keys (MR or local DMA key), remote ranges in a user MR or a
 * fast-registration MR of shuffled pages.
 *
 * Also: immediate data, SEND_WITH_INV and RDMA_READ_WITH_INV with each
 * profile's invalidation rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <stdlib.h>
#include <string.h>

#define PG 4096u
#define BUF_PAGES 16u
#define BUF_LEN (BUF_PAGES * PG)
#define MAX_MSG (3 * PG + 123)
#define ALL_ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

struct side {
	u8 *buf; /* the real memory */
	u8 *model; /* what it must hold */
	struct ib_mr *mr;
};

struct xfer {
	struct soft_env env;
	struct side s[2];
	struct ib_mr *fmr; /* side 1: fast MR over shuffled pages */
	u32 perm[BUF_PAGES];
	bool use_fmr;
	u64 rng;
};

static u32 rnd(struct xfer *x, u32 n)
{
	return n ? (u32)(soft_env_rand(&x->rng) % n) : 0;
}

static void side_init(struct xfer *x, int i)
{
	struct side *s = &x->s[i];
	u32 k;

	s->buf = aligned_alloc(PG, BUF_LEN);
	s->model = malloc(BUF_LEN);
	assert_non_null(s->buf);
	assert_non_null(s->model);
	for (k = 0; k < BUF_LEN; k++)
		s->buf[k] = (u8)(k * 31 + 7 + i); /* guard pattern */
	memcpy(s->model, s->buf, BUF_LEN);
	s->mr = soft_env_reg(&x->env, i, s->buf, BUF_LEN, ALL_ACCESS);
}

/* Register side 1's buffer again through a fast MR, pages shuffled. */
static void fmr_init(struct xfer *x)
{
	struct scatterlist sg[BUF_PAGES];
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 77,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = ALL_ACCESS,
	};
	u32 i;

	for (i = 0; i < BUF_PAGES; i++)
		x->perm[i] = i;
	for (i = BUF_PAGES - 1; i > 0; i--) {
		u32 j = rnd(x, i + 1), t = x->perm[i];

		x->perm[i] = x->perm[j];
		x->perm[j] = t;
	}
	x->fmr = ib_alloc_mr(x->env.pd[1], IB_MR_TYPE_MEM_REG, BUF_PAGES);
	assert_false(IS_ERR(x->fmr));
	sg_init_table(sg, BUF_PAGES);
	for (i = 0; i < BUF_PAGES; i++) {
		u8 *pg = x->s[1].buf + x->perm[i] * PG;

		sg_set_buf(&sg[i], pg, PG);
		sg[i].dma_address = (uintptr_t)pg;
		sg[i].dma_length = PG;
	}
	assert_int_equal(ib_map_mr_sg(x->fmr, sg, BUF_PAGES, NULL, PG),
			 BUF_PAGES);
	ib_update_fast_reg_key(x->fmr, ib_inc_rkey(x->fmr->rkey));
	wr.mr = x->fmr;
	wr.key = x->fmr->rkey;
	assert_int_equal(ib_post_send(x->env.qp[1], &wr.wr, NULL), 0);
	soft_env_expect(x->env.cq[1], 77, IB_WC_SUCCESS, IB_WC_REG_MR);
}

static void xfer_init(struct xfer *x, const struct soft_env_cfg *cfg, u64 seed)
{
	memset(x, 0, sizeof(*x));
	x->rng = seed;
	soft_env_init(&x->env, cfg);
	side_init(x, 0);
	side_init(x, 1);
	fmr_init(x);
}

static void xfer_fini(struct xfer *x)
{
	int i;

	soft_env_dereg(x->fmr);
	for (i = 0; i < 2; i++) {
		soft_env_dereg(x->s[i].mr);
		free(x->s[i].buf);
		free(x->s[i].model);
	}
	soft_env_fini(&x->env);
}

static void check_side(struct xfer *x, int i, u32 step)
{
	struct side *s = &x->s[i];
	u32 k;

	for (k = 0; k < BUF_LEN; k++)
		if (s->buf[k] != s->model[k])
			fail_msg("step %u: side %d byte %u is %#x, want %#x",
				 step, i, k, s->buf[k], s->model[k]);
}

/* Offset in side 1's buffer of byte @o of the remote range. */
static u32 remote_off(struct xfer *x, u64 o)
{
	if (!x->use_fmr)
		return (u32)o;
	return x->perm[o / PG] * PG + (u32)(o % PG);
}

/*
 * Random SGEs over side @i's buffer carrying @len bytes, in disjoint zones
 * (so that sinks never overlap).  Returns the count.
 */
static int random_sgl(struct xfer *x, int i, u32 len, int max,
		      struct ib_sge *sge, bool mr_only)
{
	int n = 1 + (int)rnd(x, (u32)max), k;
	u32 zone = BUF_LEN / (u32)n, left = len;

	for (k = 0; k < n; k++) {
		u32 part = k == n - 1 ? left : rnd(x, left + 1);
		u32 pos;

		if (part > zone)
			part = zone;
		if (k == n - 1 && part < left)
			return -1; /* does not fit: caller retries */
		pos = (u32)k * zone + rnd(x, zone - part + 1);
		sge[k].addr = (uintptr_t)x->s[i].buf + pos;
		sge[k].length = part;
		sge[k].lkey = (mr_only || rnd(x, 2)) ?
				      x->s[i].mr->lkey :
				      x->env.pd[i]->local_dma_lkey;
		left -= part;
	}
	return n;
}

static u32 sge_off(struct xfer *x, int i, const struct ib_sge *sge)
{
	return (u32)(sge->addr - (uintptr_t)x->s[i].buf);
}

/* Fill the source SGEs with fresh bytes (and the model with them). */
static void refresh(struct xfer *x, int i, const struct ib_sge *sge, int n)
{
	int k;
	u32 b;

	for (k = 0; k < n; k++) {
		u32 off = sge_off(x, i, &sge[k]);

		for (b = 0; b < sge[k].length; b++) {
			u8 v = (u8)soft_env_rand(&x->rng);

			x->s[i].buf[off + b] = v;
			x->s[i].model[off + b] = v;
		}
	}
}

/* Gather @n SGEs of side @i's model into @msg. */
static void gather(struct xfer *x, int i, const struct ib_sge *sge, int n,
		   u8 *msg)
{
	int k;

	for (k = 0; k < n; k++) {
		memcpy(msg, x->s[i].model + sge_off(x, i, &sge[k]),
		       sge[k].length);
		msg += sge[k].length;
	}
}

static void scatter(struct xfer *x, int i, const struct ib_sge *sge, int n,
		    const u8 *msg, u32 len)
{
	int k;

	for (k = 0; k < n && len; k++) {
		u32 c = sge[k].length < len ? sge[k].length : len;

		memcpy(x->s[i].model + sge_off(x, i, &sge[k]), msg, c);
		msg += c;
		len -= c;
	}
}

static int sgl(struct xfer *x, int i, u32 len, int max, struct ib_sge *sge,
	       bool mr_only)
{
	int n;

	do {
		n = random_sgl(x, i, len, max, sge, mr_only);
	} while (n < 0);
	return n;
}

static void one_write(struct xfer *x, u32 len, u64 raddr, u32 rkey, u64 roff,
		      int max, u8 *msg, bool imm, u32 step)
{
	struct ib_sge sge[32];
	struct ib_rdma_wr wr = { 0 };
	struct ib_wc wc;
	int n = sgl(x, 0, len, max, sge, false);
	u32 b;

	refresh(x, 0, sge, n);
	gather(x, 0, sge, n, msg);
	for (b = 0; b < len; b++)
		x->s[1].model[remote_off(x, roff + b)] = msg[b];
	wr.wr.wr_id = step;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = n;
	wr.wr.opcode = imm ? IB_WR_RDMA_WRITE_WITH_IMM : IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.ex.imm_data = step ^ 0xa5a5a5a5u;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	if (imm)
		soft_env_post_recv(x->env.qp[1], step, NULL, 0, 0);
	assert_int_equal(ib_post_send(x->env.qp[0], &wr.wr, NULL), 0);
	if (imm) {
		soft_env_poll(x->env.cq[1], 1, &wc);
		assert_int_equal(wc.status, IB_WC_SUCCESS);
		assert_int_equal(wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(wc.byte_len, len);
		assert_true(wc.wc_flags & IB_WC_WITH_IMM);
		assert_int_equal(wc.ex.imm_data, step ^ 0xa5a5a5a5u);
		assert_int_equal(wc.src_qp, x->env.qp[0]->qp_num);
	}
	soft_env_poll(x->env.cq[0], 1, &wc);
	assert_int_equal(wc.wr_id, step);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.byte_len, len);
}

static void one_read(struct xfer *x, u32 len, u64 raddr, u32 rkey, u64 roff,
		     int max, u8 *msg, u32 step)
{
	struct ib_sge sge[32];
	struct ib_rdma_wr wr = { 0 };
	struct ib_wc wc;
	/* iWARP: the sink must be remotely writable, i.e. an MR. */
	int n = sgl(x, 0, len, max, sge,
		    x->env.profile.protocol == RDMA_PROTOCOL_IWARP);
	u32 b;

	for (b = 0; b < len; b++)
		msg[b] = x->s[1].model[remote_off(x, roff + b)];
	scatter(x, 0, sge, n, msg, len);
	wr.wr.wr_id = step;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = n;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	assert_int_equal(ib_post_send(x->env.qp[0], &wr.wr, NULL), 0);
	soft_env_poll(x->env.cq[0], 1, &wc);
	assert_int_equal(wc.wr_id, step);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.opcode, IB_WC_RDMA_READ);
}

static void one_send(struct xfer *x, u32 len, u8 *msg, bool imm, u32 step)
{
	struct ib_sge sge[32], rsge[32];
	struct ib_send_wr wr = { 0 };
	struct ib_recv_wr rwr = { 0 };
	struct ib_wc wc;
	int n = sgl(x, 0, len, (int)x->env.qp[0]->cap.max_send_sge, sge, false);
	int rn = sgl(x, 1, len + rnd(x, 64),
		     (int)x->env.qp[1]->cap.max_recv_sge, rsge, false);

	refresh(x, 0, sge, n);
	gather(x, 0, sge, n, msg);
	scatter(x, 1, rsge, rn, msg, len);
	rwr.wr_id = step;
	rwr.sg_list = rsge;
	rwr.num_sge = rn;
	assert_int_equal(ib_post_recv(x->env.qp[1], &rwr, NULL), 0);
	wr.wr_id = step;
	wr.sg_list = sge;
	wr.num_sge = n;
	wr.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.imm_data = step;
	assert_int_equal(ib_post_send(x->env.qp[0], &wr, NULL), 0);
	soft_env_poll(x->env.cq[1], 1, &wc);
	assert_int_equal(wc.wr_id, step);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.opcode, IB_WC_RECV);
	assert_int_equal(wc.byte_len, len);
	assert_int_equal(!!(wc.wc_flags & IB_WC_WITH_IMM), imm);
	if (imm)
		assert_int_equal(wc.ex.imm_data, step);
	soft_env_poll(x->env.cq[0], 1, &wc);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
	assert_int_equal(wc.opcode, IB_WC_SEND);
}

static void random_transfers(const struct soft_env_cfg *cfg, u64 seed,
			     u32 steps)
{
	struct xfer x;
	u8 *msg = malloc(BUF_LEN);
	u32 step;

	assert_non_null(msg);
	xfer_init(&x, cfg, seed);
	for (step = 0; step < steps; step++) {
		u32 len = rnd(&x, 8) ? 1 + rnd(&x, MAX_MSG) : rnd(&x, 2);
		u64 roff = rnd(&x, BUF_LEN - len + 1);
		u32 op = rnd(&x, 5);
		u64 raddr;
		u32 rkey;

		x.use_fmr = rnd(&x, 2);
		raddr = x.use_fmr ? x.fmr->iova + roff :
				    (uintptr_t)x.s[1].buf + roff;
		rkey = x.use_fmr ? x.fmr->rkey : x.s[1].mr->rkey;
		if (op <= 1)
			one_write(&x, len, raddr, rkey, roff,
				  (int)x.env.qp[0]->max_write_sge, msg, op == 1,
				  step);
		else if (op == 2)
			one_read(&x, len, raddr, rkey, roff,
				 (int)x.env.qp[0]->max_read_sge, msg, step);
		else
			one_send(&x, len, msg, op == 4, step);
		check_side(&x, 0, step);
		check_side(&x, 1, step);
	}
	assert_int_equal(soft_env_state(x.env.qp[0]), IB_QPS_RTS);
	assert_int_equal(soft_env_state(x.env.qp[1]), IB_QPS_RTS);
	xfer_fini(&x);
	free(msg);
}

static void test_random_mlx5(void **state)
{
	random_transfers(&(struct soft_env_cfg){ .profile = "mlx5",
						 .cap.max_send_sge = 30,
						 .cap.max_recv_sge = 8 },
			 0x1234, 300);
}

static void test_random_rxe(void **state)
{
	random_transfers(&(struct soft_env_cfg){ .profile = "rxe",
						 .cap.max_send_sge = 32,
						 .cap.max_recv_sge = 32 },
			 0xbeef, 300);
}

static void test_random_siw(void **state)
{
	random_transfers(&(struct soft_env_cfg){ .profile = "siw",
						 .cap.max_send_sge = 6,
						 .cap.max_recv_sge = 6 },
			 0x5150, 300);
}

static void test_random_loopback(void **state)
{
	random_transfers(&(struct soft_env_cfg){ .profile = "rxe",
						 .loopback = true,
						 .cap.max_send_sge = 8 },
			 0x777, 200);
	random_transfers(
		&(struct soft_env_cfg){ .profile = "siw", .loopback = true },
		0x778, 200);
}

/* The same on threaded devices: work completes asynchronously. */
static void test_random_threaded(void **state)
{
	random_transfers(&(struct soft_env_cfg){ .profile = "mlx5",
						 .threaded = true,
						 .cap.max_send_sge = 8 },
			 0x999, 200);
	random_transfers(&(struct soft_env_cfg){ .profile = "siw",
						 .threaded = true,
						 .loopback = true },
			 0x99a, 200);
}

/* ---- invalidation -------------------------------------------------------- */

static void post_write(struct xfer *x, u64 id, u32 rkey, u64 raddr,
		       enum ib_wc_status st)
{
	assert_int_equal(soft_env_rdma(x->env.qp[0], IB_WR_RDMA_WRITE, id,
				       x->s[0].buf, 8, x->s[0].mr->lkey, raddr,
				       rkey),
			 0);
	soft_env_expect(x->env.cq[0], id, st, IB_WC_RDMA_WRITE);
}

static void send_inv(struct xfer *x, u32 key, enum ib_wc_status recv_st)
{
	struct ib_send_wr wr = { .wr_id = 5,
				 .opcode = IB_WR_SEND_WITH_INV,
				 .send_flags = IB_SEND_SIGNALED,
				 .ex.invalidate_rkey = key };
	struct ib_wc wc;

	soft_env_post_recv(x->env.qp[1], 6, NULL, 0, 0);
	assert_int_equal(ib_post_send(x->env.qp[0], &wr, NULL), 0);
	soft_env_poll(x->env.cq[1], 1, &wc);
	assert_int_equal(wc.wr_id, 6);
	assert_int_equal(wc.status, recv_st);
	if (recv_st == IB_WC_SUCCESS) {
		assert_true(wc.wc_flags & IB_WC_WITH_INVALIDATE);
		assert_int_equal(wc.ex.invalidate_rkey, key);
	}
	/* The message was delivered: the SEND itself succeeds. */
	soft_env_expect(x->env.cq[0], 5, IB_WC_SUCCESS, IB_WC_SEND);
}

static void test_send_with_inv(void **state)
{
	static const char *const profiles[] = { "mlx5", "rxe", "siw" };
	struct xfer x;
	size_t i;

	for (i = 0; i < 3; i++) {
		bool siw = i == 2;

		xfer_init(&x, &(struct soft_env_cfg){ .profile = profiles[i] },
			  i);
		post_write(&x, 1, x.fmr->rkey, x.fmr->iova, IB_WC_SUCCESS);
		send_inv(&x, x.fmr->rkey, IB_WC_SUCCESS);
		/* iWARP: the WRITE completed when sent, the TERMINATE
		 * stops both QPs */
		post_write(&x, 2, x.fmr->rkey, x.fmr->iova,
			   siw ? IB_WC_SUCCESS : IB_WC_REM_ACCESS_ERR);
		assert_int_equal(soft_env_state(x.env.qp[0]), IB_QPS_ERR);
		xfer_fini(&x);

		/* Wrong variant: rxe refuses (class J), siw goes by index. */
		xfer_init(&x, &(struct soft_env_cfg){ .profile = profiles[i] },
			  i);
		send_inv(&x, ib_inc_rkey(x.fmr->rkey),
			 siw ? IB_WC_SUCCESS : IB_WC_REM_INV_REQ_ERR);
		assert_int_equal(soft_env_state(x.env.qp[1]),
				 siw ? IB_QPS_RTS : IB_QPS_ERR);
		assert_int_equal(soft_env_state(x.env.qp[0]), IB_QPS_RTS);
		xfer_fini(&x);

		/* A key nobody has. */
		xfer_init(&x, &(struct soft_env_cfg){ .profile = profiles[i] },
			  i);
		send_inv(&x, 0x00000100, IB_WC_REM_INV_REQ_ERR);
		assert_int_equal(soft_env_state(x.env.qp[1]), IB_QPS_ERR);
		xfer_fini(&x);
	}
}

/* siw: READ_WITH_INV invalidates the READ's sink STag, whatever the WR's
 * invalidate_rkey says. */
static void test_read_with_inv_siw(void **state)
{
	struct xfer x;
	struct ib_mr *sink;
	struct scatterlist sg[1];
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 1,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_sge sge;
	struct ib_rdma_wr wr = { 0 };

	xfer_init(&x, &(struct soft_env_cfg){ .profile = "siw" }, 9);
	sink = ib_alloc_mr(x.env.pd[0], IB_MR_TYPE_MEM_REG, 1);
	sg_init_table(sg, 1);
	sg_set_buf(sg, x.s[0].buf, PG);
	sg->dma_address = (uintptr_t)x.s[0].buf;
	sg->dma_length = PG;
	assert_int_equal(ib_map_mr_sg(sink, sg, 1, NULL, PG), 1);
	reg.mr = sink;
	reg.key = sink->rkey;
	assert_int_equal(ib_post_send(x.env.qp[0], &reg.wr, NULL), 0);
	soft_env_expect(x.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_REG_MR);

	sge = (struct ib_sge){ sink->iova, 64, sink->lkey };
	wr.wr.wr_id = 2;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.opcode = IB_WR_RDMA_READ_WITH_INV;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.ex.invalidate_rkey = 0xdead00; /* ignored by siw */
	wr.remote_addr = (uintptr_t)x.s[1].buf;
	wr.rkey = x.s[1].mr->rkey;
	assert_int_equal(ib_post_send(x.env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(x.env.cq[0], 2, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	assert_memory_equal(x.s[0].buf, x.s[1].buf, 64);
	/* The sink is invalid now: using its key locally fails. */
	assert_int_equal(soft_env_rdma(x.env.qp[0], IB_WR_RDMA_WRITE, 3,
				       x.s[0].buf, 8, sink->lkey,
				       (uintptr_t)x.s[1].buf + 100,
				       x.s[1].mr->rkey),
			 0);
	soft_env_expect(x.env.cq[0], 3, IB_WC_LOC_PROT_ERR, IB_WC_RDMA_WRITE);
	memcpy(x.s[0].model, x.s[0].buf, BUF_LEN);
	soft_env_dereg(sink);
	xfer_fini(&x);
}

/* Elsewhere READ_WITH_INV invalidates invalidate_rkey, whole key. */
static void test_read_with_inv_rxe(void **state)
{
	struct xfer x;
	struct ib_mr *fm;
	struct scatterlist sg[1];
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 1,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_sge sge;
	struct ib_rdma_wr wr = { 0 };
	int round;

	xfer_init(&x, &(struct soft_env_cfg){ .profile = "rxe" }, 10);
	fm = ib_alloc_mr(x.env.pd[0], IB_MR_TYPE_MEM_REG, 1);
	sg_init_table(sg, 1);
	sg_set_buf(sg, x.s[0].buf + PG, PG);
	sg->dma_address = (uintptr_t)x.s[0].buf + PG;
	sg->dma_length = PG;
	assert_int_equal(ib_map_mr_sg(fm, sg, 1, NULL, PG), 1);
	reg.mr = fm;
	reg.key = fm->rkey;
	assert_int_equal(ib_post_send(x.env.qp[0], &reg.wr, NULL), 0);
	soft_env_expect(x.env.cq[0], 1, IB_WC_SUCCESS, IB_WC_REG_MR);

	for (round = 0; round < 2; round++) {
		sge = (struct ib_sge){ (uintptr_t)x.s[0].buf, 64,
				       x.s[0].mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr.wr_id = 2;
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		wr.wr.opcode = IB_WR_RDMA_READ_WITH_INV;
		wr.wr.send_flags = IB_SEND_SIGNALED;
		/* First the wrong variant, then the registered key. */
		wr.wr.ex.invalidate_rkey =
			round ? fm->rkey : ib_inc_rkey(fm->rkey);
		wr.remote_addr = (uintptr_t)x.s[1].buf;
		wr.rkey = x.s[1].mr->rkey;
		assert_int_equal(ib_post_send(x.env.qp[0], &wr.wr, NULL), 0);
		soft_env_expect(x.env.cq[0], 2,
				round ? IB_WC_SUCCESS : IB_WC_LOC_QP_OP_ERR,
				IB_WC_RDMA_READ);
		assert_memory_equal(x.s[0].buf, x.s[1].buf, 64);
		if (!round) {
			struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

			assert_int_equal(
				ib_modify_qp(x.env.qp[0], &attr, IB_QP_STATE),
				0);
			assert_int_equal(
				ib_modify_qp(x.env.qp[1], &attr, IB_QP_STATE),
				0);
			assert_int_equal(
				soft_qp_connect(x.env.qp[0], x.env.qp[1]), 0);
		}
	}
	/* fm is invalid now. */
	assert_int_equal(soft_env_rdma(x.env.qp[0], IB_WR_RDMA_WRITE, 3,
				       x.s[0].buf + PG, 8, fm->lkey,
				       (uintptr_t)x.s[1].buf, x.s[1].mr->rkey),
			 0);
	soft_env_expect(x.env.cq[0], 3, IB_WC_LOC_PROT_ERR, IB_WC_RDMA_WRITE);
	soft_env_dereg(fm);
	xfer_fini(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_mlx5),
		cmocka_unit_test(test_random_rxe),
		cmocka_unit_test(test_random_siw),
		cmocka_unit_test(test_random_loopback),
		cmocka_unit_test(test_random_threaded),
		cmocka_unit_test(test_send_with_inv),
		cmocka_unit_test(test_read_with_inv_siw),
		cmocka_unit_test(test_read_with_inv_rxe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Each access rule of the software device (src/soft/soft_access.h), reached
 * two ways: the fast path (an RDMA WRITE or READ of one local SGE: the
 * inline checks of the data path) and the list path (the same bytes as two
 * local SGEs, checked by rdmarw__soft_sgl_check(); on siw, whose READs take
 * one SGE, a READ_WITH_INV, which also adds the completer's invalidation
 * step).  Every case runs once per path and asserts the status and the
 * bytes: a refused access moves nothing, a granted one moves everything, so
 * a rule broken either way (too loose or too strict) fails a case on each
 * path.  (Until issue 13 the fast path was a separate "one step" in the
 * requester; the cases were first run against it.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <rdmarw/rw.h>

#include <stdlib.h>
#include <string.h>

#define LEN 4096
#define XLEN 64 /* bytes per transfer */
#define FILL 0x40 /* side i holds FILL + i */

enum path { FAST, SLOW };

static const enum path fast = FAST, slow = SLOW;

static enum path path_of(void **state)
{
	return *(const enum path *)*state;
}

/**
 * struct xfer - one RDMA from side 0
 * @read: RDMA READ (else WRITE)
 * @loc: local address
 * @lkey: its key
 * @raddr: remote address
 * @rkey: its key
 */
struct xfer {
	bool read;
	u64 loc;
	u32 lkey;
	u64 raddr;
	u32 rkey;
};

static void pair_init(struct soft_pair *p, const char *profile)
{
	soft_pair_init(p, &(struct soft_env_cfg){ .profile = profile }, LEN,
		       FILL);
}

/* The usual transfer: side 0's buffer to or from side 1's, by their MRs. */
static struct xfer xfer_std(struct soft_pair *p, bool read)
{
	return (struct xfer){ .read = read,
			      .loc = (uintptr_t)p->buf[0],
			      .lkey = p->mr[0]->lkey,
			      .raddr = (uintptr_t)p->buf[1],
			      .rkey = p->mr[1]->rkey };
}

/*
 * Post @x on @path and expect @st.  FAST: one SGE, plain opcode.  SLOW: two
 * SGEs of the same bytes (one SGE and READ_WITH_INV of key 0 for a siw
 * READ, whose sink STag it would invalidate: only refused READs use it).
 */
static void post_expect(struct soft_pair *p, const struct xfer *x,
			enum path path, enum ib_wc_status st)
{
	bool siw = !strcmp(p->env.profile.name, "siw");
	struct ib_sge sge[2] = {
		{ .addr = x->loc, .length = XLEN, .lkey = x->lkey },
		{ .addr = x->loc + XLEN / 2,
		  .length = XLEN / 2,
		  .lkey = x->lkey },
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 0x5e,
			.sg_list = sge,
			.num_sge = 1,
			.opcode = x->read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = x->raddr,
		.rkey = x->rkey,
	};

	if (path == SLOW && x->read && siw) {
		wr.wr.opcode = IB_WR_RDMA_READ_WITH_INV;
	} else if (path == SLOW) {
		sge[0].length = XLEN / 2;
		wr.wr.num_sge = 2;
	}
	assert_int_equal(ib_post_send(p->env.qp[0], &wr.wr, NULL), 0);
	soft_env_expect(p->env.cq[0], 0x5e, st,
			x->read ? IB_WC_RDMA_READ : IB_WC_RDMA_WRITE);
}

/* Side @side's buffer still holds only its own fill byte. */
static void expect_untouched(struct soft_pair *p, int side)
{
	size_t i;

	for (i = 0; i < LEN; i++)
		if (p->buf[side][i] != (u8)(FILL + side))
			fail_msg("side %d byte %zu changed", side, i);
}

/* XLEN bytes at @dst are the other side's fill byte. */
static void expect_moved(const u8 *dst, int from_side)
{
	size_t i;

	for (i = 0; i < XLEN; i++)
		assert_int_equal(dst[i], (u8)(FILL + from_side));
}

/* A refused @x: status @st, nothing written on either side. */
static void expect_refused(const char *profile, void **state,
			   void (*make)(struct soft_pair *, struct xfer *),
			   enum ib_wc_status st)
{
	struct soft_pair p;
	struct xfer x;

	pair_init(&p, profile);
	make(&p, &x);
	post_expect(&p, &x, path_of(state), st);
	expect_untouched(&p, 0);
	expect_untouched(&p, 1);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_ERR);
	soft_pair_fini(&p);
}

/* ---- every rule says yes: the bytes move ----------------------------- */

static void test_granted(void **state)
{
	static const char *const profiles[] = { "mlx5", "rxe", "siw" };
	struct soft_pair p;
	struct xfer x;
	size_t i;

	for (i = 0; i < 3; i++) {
		pair_init(&p, profiles[i]);
		x = xfer_std(&p, false);
		post_expect(&p, &x, path_of(state), IB_WC_SUCCESS);
		expect_moved(p.buf[1], 0);
		if (i < 2 || path_of(state) == FAST) {
			x = xfer_std(&p, true);
			x.loc += XLEN; /* a fresh sink */
			x.raddr += XLEN;
			post_expect(&p, &x, path_of(state), IB_WC_SUCCESS);
			expect_moved(p.buf[0] + XLEN, 1);
		}
		/* The local DMA key as a WRITE source and (not on iWARP) as
		 * a READ sink. */
		x = xfer_std(&p, false);
		x.lkey = p.env.pd[0]->local_dma_lkey;
		x.loc = (uintptr_t)p.buf[0] + 2 * XLEN;
		x.raddr += 2 * XLEN;
		post_expect(&p, &x, path_of(state), IB_WC_SUCCESS);
		expect_moved(p.buf[1] + 2 * XLEN, 0);
		if (i < 2) {
			x = xfer_std(&p, true);
			x.lkey = p.env.pd[0]->local_dma_lkey;
			x.loc += 3 * XLEN;
			x.raddr += 3 * XLEN;
			post_expect(&p, &x, path_of(state), IB_WC_SUCCESS);
			expect_moved(p.buf[0] + 3 * XLEN, 1);
		}
		assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_RTS);
		soft_pair_fini(&p);
	}
}

/* ---- rule: NULL page and wrap (soft_dma_range_ok) -------------------- */

static void mk_null_source(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, false);
	x->lkey = p->env.pd[0]->local_dma_lkey;
	x->loc = 0x100;
}

static void mk_null_sink(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, true);
	x->lkey = p->env.pd[0]->local_dma_lkey;
	x->loc = 0x100;
}

static void test_null_page_sge(void **state)
{
	expect_refused("rxe", state, mk_null_source, IB_WC_LOC_PROT_ERR);
	expect_refused("mlx5", state, mk_null_sink, IB_WC_LOC_PROT_ERR);
}

/*
 * A page list element in the NULL page: a fast MR mapped over DMA address
 * 0 passes its key check, and translating its bytes refuses the access.
 */
static void test_null_page_in_page_list(void **state)
{
	struct soft_pair p;
	struct scatterlist sg;
	struct ib_mr *mr;
	struct xfer x;
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 0x4e,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};

	pair_init(&p, "rxe");
	mr = ib_alloc_mr(p.env.pd[1], IB_MR_TYPE_MEM_REG, 4);
	assert_false(IS_ERR(mr));
	sg_init_table(&sg, 1);
	sg.dma_address = 0;
	sg.dma_length = 4096;
	sg.length = 4096;
	assert_int_equal(ib_map_mr_sg(mr, &sg, 1, NULL, 4096), 1);
	reg.mr = mr;
	reg.key = mr->rkey;
	assert_int_equal(ib_post_send(p.env.qp[1], &reg.wr, NULL), 0);
	soft_env_expect(p.env.cq[1], 0x4e, IB_WC_SUCCESS, IB_WC_REG_MR);
	x = xfer_std(&p, true);
	x.raddr = mr->iova;
	x.rkey = mr->rkey;
	post_expect(&p, &x, path_of(state), IB_WC_REM_ACCESS_ERR);
	expect_untouched(&p, 0);
	assert_int_equal(ib_dereg_mr(mr), 0);
	soft_pair_fini(&p);
}

/* ---- rule: the local DMA key grants local rights only ---------------- */

/* On iWARP a READ sink must be remotely writable: the local DMA key is
 * not (soft_dma_key_grants() with soft_read_sink_access()). */
static void mk_dma_key_siw_sink(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, true);
	x->lkey = p->env.pd[0]->local_dma_lkey;
}

static void test_dma_key_local_rights(void **state)
{
	expect_refused("siw", state, mk_dma_key_siw_sink, IB_WC_LOC_PROT_ERR);
}

/* ---- rule: READ sink rights (soft_read_sink_access) ------------------ */

static void mk_sink_no_local_write(struct soft_pair *p, struct xfer *x)
{
	struct ib_mr *mr = p->mr[0];

	/* Side 0's MR replaced by one with remote rights but no
	 * LOCAL_WRITE (soft_pair_fini() deregisters it). */
	soft_env_dereg(mr);
	p->mr[0] =
		soft_env_reg(&p->env, 0, p->buf[0], LEN, IB_ACCESS_REMOTE_READ);
	*x = xfer_std(p, true);
}

static void mk_siw_sink_no_remote_write(struct soft_pair *p, struct xfer *x)
{
	soft_env_dereg(p->mr[0]);
	p->mr[0] =
		soft_env_reg(&p->env, 0, p->buf[0], LEN, IB_ACCESS_LOCAL_WRITE);
	*x = xfer_std(p, true);
}

static void test_read_sink_rights(void **state)
{
	expect_refused("rxe", state, mk_sink_no_local_write,
		       IB_WC_LOC_PROT_ERR);
	expect_refused("siw", state, mk_siw_sink_no_remote_write,
		       IB_WC_LOC_PROT_ERR);
}

/* ---- rule: an MR's key, state, PD, rights, bounds (soft_mr_check) ---- */

static void mk_rkey_variant(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, false);
	x->rkey = ib_inc_rkey(x->rkey);
}

static void mk_rkey_index(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, true);
	x->rkey += 0x100;
}

static void mk_lkey_variant(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, false);
	x->lkey = ib_inc_rkey(x->lkey);
}

static void test_mr_key(void **state)
{
	expect_refused("rxe", state, mk_rkey_variant, IB_WC_REM_ACCESS_ERR);
	expect_refused("mlx5", state, mk_rkey_index, IB_WC_REM_ACCESS_ERR);
	expect_refused("rxe", state, mk_lkey_variant, IB_WC_LOC_PROT_ERR);
}

static struct ib_pd *other_pd;

static void mk_rkey_other_pd(struct soft_pair *p, struct xfer *x)
{
	other_pd = ib_alloc_pd(p->env.dev[1], 0);
	assert_false(IS_ERR(other_pd));
	soft_env_dereg(p->mr[1]);
	p->mr[1] = ib_reg_user_mr(other_pd, (uintptr_t)p->buf[1], LEN,
				  (uintptr_t)p->buf[1], SOFT_PAIR_ACCESS);
	assert_false(IS_ERR(p->mr[1]));
	*x = xfer_std(p, false);
}

static void mk_lkey_other_pd(struct soft_pair *p, struct xfer *x)
{
	other_pd = ib_alloc_pd(p->env.dev[0], 0);
	assert_false(IS_ERR(other_pd));
	soft_env_dereg(p->mr[0]);
	p->mr[0] = ib_reg_user_mr(other_pd, (uintptr_t)p->buf[0], LEN,
				  (uintptr_t)p->buf[0], SOFT_PAIR_ACCESS);
	assert_false(IS_ERR(p->mr[0]));
	*x = xfer_std(p, true);
}

static void test_mr_pd(void **state)
{
	struct soft_pair p;
	struct xfer x;
	int i;

	for (i = 0; i < 2; i++) {
		int side = i ? 0 : 1; /* whose MR moved to other_pd */

		pair_init(&p, "rxe");
		(i ? mk_lkey_other_pd : mk_rkey_other_pd)(&p, &x);
		post_expect(&p, &x, path_of(state),
			    i ? IB_WC_LOC_PROT_ERR : IB_WC_REM_ACCESS_ERR);
		expect_untouched(&p, 0);
		expect_untouched(&p, 1);
		soft_env_dereg(p.mr[side]);
		assert_int_equal(ib_dealloc_pd(other_pd), 0);
		p.mr[side] = soft_env_reg(&p.env, side, p.buf[side], LEN,
					  SOFT_PAIR_ACCESS);
		soft_pair_fini(&p);
	}
}

static void mk_rights_write(struct soft_pair *p, struct xfer *x)
{
	soft_env_dereg(p->mr[1]);
	p->mr[1] =
		soft_env_reg(&p->env, 1, p->buf[1], LEN, IB_ACCESS_REMOTE_READ);
	*x = xfer_std(p, false);
}

static void mk_rights_read(struct soft_pair *p, struct xfer *x)
{
	soft_env_dereg(p->mr[1]);
	p->mr[1] = soft_env_reg(&p->env, 1, p->buf[1], LEN,
				IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	*x = xfer_std(p, true);
}

static void test_mr_rights(void **state)
{
	expect_refused("rxe", state, mk_rights_write, IB_WC_REM_ACCESS_ERR);
	expect_refused("mlx5", state, mk_rights_read, IB_WC_REM_ACCESS_ERR);
}

static void mk_bounds_end(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, false);
	x->raddr += LEN - XLEN + 1; /* one byte past the end */
}

static void mk_bounds_start(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, true);
	x->raddr -= 1;
}

static void mk_lkey_bounds(struct soft_pair *p, struct xfer *x)
{
	*x = xfer_std(p, false);
	x->loc += LEN - XLEN + 1;
}

/* An MR shorter than the transfer, which starts at its start. */
static void mk_bounds_len(struct soft_pair *p, struct xfer *x)
{
	soft_env_dereg(p->mr[1]);
	p->mr[1] =
		soft_env_reg(&p->env, 1, p->buf[1], XLEN / 2, SOFT_PAIR_ACCESS);
	*x = xfer_std(p, false);
}

static void test_mr_bounds(void **state)
{
	expect_refused("rxe", state, mk_bounds_len, IB_WC_REM_ACCESS_ERR);
	expect_refused("rxe", state, mk_bounds_end, IB_WC_REM_ACCESS_ERR);
	expect_refused("mlx5", state, mk_bounds_start, IB_WC_REM_ACCESS_ERR);
	expect_refused("rxe", state, mk_lkey_bounds, IB_WC_LOC_PROT_ERR);
}

/* An MR's state: a fast MR works while VALID and not once invalidated. */
static void test_mr_state(void **state)
{
	struct soft_pair p;
	struct scatterlist sg;
	struct ib_mr *mr;
	struct xfer x;
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 0x4e,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = SOFT_PAIR_ACCESS,
	};
	struct ib_send_wr inv = { .wr_id = 0x1e,
				  .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };

	pair_init(&p, "rxe");
	mr = ib_alloc_mr(p.env.pd[1], IB_MR_TYPE_MEM_REG, 4);
	assert_false(IS_ERR(mr));
	sg_init_table(&sg, 1);
	sg_set_buf(&sg, p.buf[1], LEN);
	sg.dma_address = (uintptr_t)p.buf[1];
	sg.dma_length = LEN;
	assert_int_equal(ib_map_mr_sg(mr, &sg, 1, NULL, 4096), 1);
	reg.mr = mr;
	reg.key = mr->rkey;
	assert_int_equal(ib_post_send(p.env.qp[1], &reg.wr, NULL), 0);
	soft_env_expect(p.env.cq[1], 0x4e, IB_WC_SUCCESS, IB_WC_REG_MR);
	x = xfer_std(&p, false);
	x.raddr = mr->iova;
	x.rkey = mr->rkey;
	post_expect(&p, &x, path_of(state), IB_WC_SUCCESS);
	expect_moved(p.buf[1], 0);
	memset(p.buf[1], FILL + 1, LEN);

	inv.ex.invalidate_rkey = mr->rkey;
	assert_int_equal(ib_post_send(p.env.qp[1], &inv, NULL), 0);
	soft_env_expect(p.env.cq[1], 0x1e, IB_WC_SUCCESS, IB_WC_LOCAL_INV);
	post_expect(&p, &x, path_of(state), IB_WC_REM_ACCESS_ERR);
	expect_untouched(&p, 1);
	assert_int_equal(ib_dereg_mr(mr), 0);
	soft_pair_fini(&p);
}

/* ---- rules of the responder QP (soft_resp_ready, soft_resp_grants) --- */

static void test_resp_ready(void **state)
{
	struct soft_pair p;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct xfer x;

	pair_init(&p, "rxe");
	assert_int_equal(ib_modify_qp(p.env.qp[1], &attr, IB_QP_STATE), 0);
	x = xfer_std(&p, false);
	post_expect(&p, &x, path_of(state), IB_WC_RETRY_EXC_ERR);
	expect_untouched(&p, 1);
	soft_pair_fini(&p);
}

static void test_resp_grants(void **state)
{
	struct soft_pair p;
	struct ib_qp_attr attr = { .qp_access_flags = IB_ACCESS_REMOTE_READ };
	struct xfer x;

	pair_init(&p, "rxe");
	assert_int_equal(ib_modify_qp(p.env.qp[1], &attr, IB_QP_ACCESS_FLAGS),
			 0);
	x = xfer_std(&p, true);
	post_expect(&p, &x, path_of(state), IB_WC_SUCCESS);
	expect_moved(p.buf[0], 1);
	memset(p.buf[0], FILL, LEN);
	x = xfer_std(&p, false);
	post_expect(&p, &x, path_of(state), IB_WC_REM_INV_REQ_ERR);
	expect_untouched(&p, 1);
	soft_pair_fini(&p);
}

/* ---- rule: the rights a registration may give (soft_reg_access_ok) --- */

static void test_reg_access(void **state)
{
	static const int access[] = {
		IB_ACCESS_REMOTE_WRITE, /* without LOCAL_WRITE: refused */
		IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	struct soft_pair p;
	struct scatterlist sg;
	struct ib_mr *mr;
	int i;

	for (i = 0; i < 2; i++) {
		struct ib_reg_wr reg = {
			.wr = { .wr_id = 0x4e,
				.opcode = IB_WR_REG_MR,
				.send_flags = IB_SEND_SIGNALED },
			.access = access[i],
		};

		pair_init(&p, "rxe");
		mr = ib_alloc_mr(p.env.pd[0], IB_MR_TYPE_MEM_REG, 4);
		assert_false(IS_ERR(mr));
		sg_init_table(&sg, 1);
		sg_set_buf(&sg, p.buf[0], LEN);
		sg.dma_address = (uintptr_t)p.buf[0];
		sg.dma_length = LEN;
		assert_int_equal(ib_map_mr_sg(mr, &sg, 1, NULL, 4096), 1);
		reg.mr = mr;
		reg.key = mr->rkey;
		assert_int_equal(ib_post_send(p.env.qp[0], &reg.wr, NULL), 0);
		soft_env_expect(p.env.cq[0], 0x4e,
				i ? IB_WC_SUCCESS : IB_WC_LOC_QP_OP_ERR,
				IB_WC_REG_MR);
		assert_int_equal(ib_dereg_mr(mr), 0);
		soft_pair_fini(&p);
	}
}

/* Each case twice, named by its path. */
/* clang-format off */
#define BOTH(t) \
	{ #t "_fast", t, NULL, NULL, (void *)&fast }, \
	{ #t "_slow", t, NULL, NULL, (void *)&slow }
/* clang-format on */

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_granted),
		BOTH(test_null_page_sge),
		BOTH(test_null_page_in_page_list),
		BOTH(test_dma_key_local_rights),
		BOTH(test_read_sink_rights),
		BOTH(test_mr_key),
		BOTH(test_mr_pd),
		BOTH(test_mr_rights),
		BOTH(test_mr_bounds),
		BOTH(test_mr_state),
		BOTH(test_resp_ready),
		BOTH(test_resp_grants),
		cmocka_unit_test(test_reg_access),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Key variants and invalidation of MR contexts: one context posted many
 * times, MRs reused past 256 variants, contexts initialised and destroyed
 * without posting, and a post that fails half-way.  Every chain is checked
 * against the model (LOCAL_INV exactly when the MR is still registered,
 * naming the registered key; REG_MR of the next variant) and every
 * completion must be a success, which the software device only gives when
 * each key used is the one registered.  These need fast registration: on
 * an ibv device (RDMARW_TEST_DEVICE) they skip.  A wrong rkey, last, runs
 * on every profile and on the device: the status the protocol gives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Small MRs (8 pages) so that a 9-page transfer needs two of them. */
#define FR_LEN 8

struct mr_cfg {
	const struct rw_profile *profile;
	bool force;
	enum dma_data_direction dir;
	const char *name;
};

/* Configurations that register memory: READ with max_sgl_rd (mlx5), READ
 * on iWARP (READ_WITH_INV), and force_mr for WRITE on rxe and siw. */
static const struct mr_cfg cfgs[] = {
	{ &rw_profiles[0], false, DMA_FROM_DEVICE, "mlx5 READ" },
	{ &rw_profiles[2], false, DMA_FROM_DEVICE, "siw READ_WITH_INV" },
	{ &rw_profiles[1], true, DMA_TO_DEVICE, "rxe WRITE force_mr" },
	{ &rw_profiles[2], true, DMA_TO_DEVICE, "siw WRITE force_mr" },
	{ &rw_profiles[1], true, DMA_FROM_DEVICE, "rxe READ force_mr" },
};

static void env_for(struct rw_env *e, const struct mr_cfg *c, u32 ctxs,
		    u32 send_wr)
{
	struct rw_env_opts o = {
		.profile = c->profile,
		.max_rdma_ctxs = ctxs,
		.max_send_wr = send_wr,
		.local_len = 256 << 10,
		.remote_len = 256 << 10,
		.fr_len = FR_LEN,
	};

	rdma_rw_set_force_mr(c->force);
	rw_env_setup(e, &o);
}

static void env_done(struct rw_env *e)
{
	rw_env_teardown(e);
	rdma_rw_set_force_mr(false);
}

/* @n page entries from page 1 of the local arena. */
static void pages(struct rw_env *e, struct rw_model_ent *ents, u32 n,
		  u32 first_off)
{
	u32 lens[64], i;

	for (i = 0; i < n; i++)
		lens[i] = PAGE_SIZE;
	lens[0] -= first_off;
	assert_true(rw_place(e, ents, lens, n, PAGE_SIZE + first_off, true, 0));
}

/* One context (two MRs) posted 300 times: keys wrap past 256 variants. */
static void test_repost_one_context(void **state)
{
	struct rw_model_ent ents[FR_LEN + 1];
	unsigned int i;

	rw_skip_on_device(); /* MR keys: no fast registration there */
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct rw_env e;
		struct rw_case c = {
			.name = cfgs[i].name,
			.ents = ents,
			.n = FR_LEN + 1,
			.dir = cfgs[i].dir,
			.roff = 4096 + 8,
			.posts = 300,
		};
		enum rdma_rw_ctx_type type;

		env_for(&e, &cfgs[i], 2, 64);
		pages(&e, ents, FR_LEN + 1, 100);
		assert_true(rw_run_case(&e, &c, &type) > 0);
		assert_int_equal(type, RDMA_RW_MR);
		env_done(&e);
	}
}

/*
 * A pool of one MR reused by 600 contexts in turn: the variant advances by
 * exactly one per post and wraps; LOCAL_INV precedes every REG_MR except
 * the first (and every one after a READ_WITH_INV).
 */
static void test_reuse_past_256(void **state)
{
	struct rw_model_ent ents[4]; /* 4 > mlx5's max_sgl_rd */
	unsigned int i, k;

	rw_skip_on_device(); /* MR keys: no fast registration there */
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct rw_env e;
		struct ib_mr *mr;
		u32 key0, index;

		env_for(&e, &cfgs[i], 1, 16);
		pages(&e, ents, 4, 0);
		mr = list_first_entry(&e.qp->rdma_mrs, struct ib_mr, qp_entry);
		key0 = mr->lkey;
		index = key0 & 0xffffff00u;
		for (k = 0; k < 600; k++) {
			struct rw_case c = {
				.name = cfgs[i].name,
				.ents = ents,
				.n = 4,
				.dir = cfgs[i].dir,
				.roff = (k * 97) % 8192,
				.use_chain = k % 3 == 2,
			};
			enum rdma_rw_ctx_type type;
			int want = mr->need_inval ? 3 : 2;

			/* READ_WITH_INV leaves the MR invalid: never an INV */
			if (cfgs[i].dir == DMA_FROM_DEVICE &&
			    !strcmp(cfgs[i].profile->name, "siw"))
				assert_int_equal(want, 2);
			else if (k)
				assert_int_equal(want, 3);
			assert_int_equal(rw_run_case(&e, &c, &type), want);
			assert_int_equal(type, RDMA_RW_MR);
			assert_int_equal(mr->lkey & 0xffffff00u, index);
			assert_int_equal(mr->lkey & 0xff,
					 (key0 + k + 1) & 0xff);
		}
		env_done(&e);
	}
}

/*
 * Contexts initialised and destroyed without being posted change no MR:
 * the next posted context invalidates the key really registered.
 */
static void test_init_destroy_without_post(void **state)
{
	struct rw_model_ent ents[4]; /* 4 > mlx5's max_sgl_rd */
	unsigned int i, k;

	rw_skip_on_device(); /* MR keys: no fast registration there */
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct rw_env e;
		struct ib_mr *mr;

		env_for(&e, &cfgs[i], 1, 16);
		pages(&e, ents, 4, 0);
		mr = list_first_entry(&e.qp->rdma_mrs, struct ib_mr, qp_entry);
		for (k = 0; k < 6; k++) {
			struct rw_sgl sgl;
			struct rdma_rw_ctx ctx;
			u32 key = mr->lkey;
			bool inval = mr->need_inval;
			struct rw_case c = {
				.name = cfgs[i].name,
				.ents = ents,
				.n = 4,
				.dir = cfgs[i].dir,
			};

			/* init + destroy, never posted */
			rw_sgl_build(&sgl, ents, 4, 0);
			assert_true(rdma_rw_ctx_init(&ctx, e.qp, 1, sgl.sg, 4,
						     0, rw_env_raddr(&e, 0),
						     e.remote_mr->rkey,
						     cfgs[i].dir) > 0);
			assert_int_equal(ctx.type, RDMA_RW_MR);
			assert_ptr_equal(ctx.reg[0].mr, mr);
			rdma_rw_ctx_destroy(&ctx, e.qp, 1, sgl.sg, 4,
					    cfgs[i].dir);
			rw_sgl_free(&sgl);
			assert_int_equal(mr->lkey, key);
			assert_int_equal(mr->need_inval, inval);
			/* every other round, post one for real */
			if (k % 2)
				assert_true(rw_run_case(&e, &c, NULL) > 0);
		}
		env_done(&e);
	}
}

/* Fill the Send Queue with WRITEs so that @left slots stay free. */
static void fill_sq(struct rw_env *e, u32 left, struct rw_done *fd,
		    struct ib_rdma_wr *wrs, struct ib_sge *sge)
{
	u32 n = e->qp->cap.max_send_wr - left, i;

	assert_true(n >= 1 && n <= 64);
	sge->addr = (u64)(uintptr_t)e->local + 200 * 1024;
	sge->length = 64;
	sge->lkey = e->pd->local_dma_lkey;
	for (i = 0; i < n; i++) {
		memset(&wrs[i], 0, sizeof(wrs[i]));
		wrs[i].wr.opcode = IB_WR_RDMA_WRITE;
		wrs[i].wr.sg_list = sge;
		wrs[i].wr.num_sge = 1;
		wrs[i].remote_addr = rw_env_raddr(e, 200 * 1024);
		wrs[i].rkey = e->remote_mr->rkey;
		wrs[i].wr.next = i + 1 < n ? &wrs[i + 1].wr : NULL;
	}
	rw_done_init(fd);
	wrs[n - 1].wr.send_flags = IB_SEND_SIGNALED;
	wrs[n - 1].wr.wr_cqe = &fd->cqe;
	assert_int_equal(ib_post_send(e->qp, &wrs[0].wr, NULL), 0);
	rw_env_expect(e, &(struct rw_model_ent){ sge->addr, 64 }, 1, 0,
		      200 * 1024, DMA_TO_DEVICE);
}

static void run_plain(struct rw_env *e, const struct mr_cfg *cfg,
		      const struct rw_model_ent *ents, u32 n)
{
	struct rw_case c = {
		.name = cfg->name,
		.ents = ents,
		.n = n,
		.dir = cfg->dir,
	};

	assert_true(rw_run_case(e, &c, NULL) > 0);
}

/*
 * A post that fails half-way (Send Queue full after the first MR's WRs):
 * the MR whose REG_MR was not queued keeps its key and state, the one
 * whose WRs went out keeps the new ones, and the QP is in ERR, so what
 * was queued (and a context posted again) flushes.
 */
static void test_failed_post_rolls_back(void **state)
{
	struct rw_model_ent ents[FR_LEN + 1];
	unsigned int i;

	rw_skip_on_device(); /* MR keys: no fast registration there */
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		const struct mr_cfg *cfg = &cfgs[i];
		struct ib_rdma_wr *fill = calloc(64, sizeof(*fill));
		struct rw_done fd, done;
		struct rdma_rw_ctx ctx;
		struct ib_mr *m0, *m1;
		struct ib_sge fsge;
		struct rw_sgl sgl;
		struct rw_env e;
		u32 k0, k1;
		bool i1, rwi;
		int ret;

		assert_non_null(fill);
		env_for(&e, cfg, 2, 8);
		pages(&e, ents, FR_LEN + 1, 0);
		/* warm up: both MRs registered once */
		run_plain(&e, cfg, ents, FR_LEN + 1);
		rw_sgl_build(&sgl, ents, FR_LEN + 1, 0);
		ret = rdma_rw_ctx_init(&ctx, e.qp, 1, sgl.sg, FR_LEN + 1, 0,
				       rw_env_raddr(&e, 8192),
				       e.remote_mr->rkey, cfg->dir);
		assert_true(ret > 0);
		assert_int_equal(ctx.nr_ops, 2);
		m0 = ctx.reg[0].mr;
		m1 = ctx.reg[1].mr;
		assert_int_equal(m0->need_inval, m1->need_inval);
		k0 = m0->lkey;
		k1 = m1->lkey;
		i1 = m1->need_inval;
		rwi = ctx.reg[0].wr.wr.opcode == IB_WR_RDMA_READ_WITH_INV;
		assert_int_equal(ret % 2, 0);
		fill_sq(&e, (u32)ret / 2, &fd, fill, &fsge);
		rw_done_init(&done);
		assert_int_equal(
			rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL),
			-ENOMEM);
		/* the first registration went out */
		assert_int_equal(m0->lkey,
				 (k0 & 0xffffff00u) | ((k0 + 1) & 0xff));
		assert_int_equal(m0->need_inval, !rwi);
		/* the second did not */
		assert_int_equal(m1->lkey, k1);
		assert_int_equal(m1->need_inval, i1);
		/*
		 * Part of the chain was queued: the library moved the QP to
		 * ERR, so the queued WRs flush instead of running after the
		 * destroy (rw.h).
		 */
		assert_int_equal(e.qp->state, IB_QPS_ERR);
		rw_env_wait(&e, &fd.count, 1);
		/* (the fill ran before the failed post, or was flushed) */
		assert_true(fd.status == IB_WC_SUCCESS ||
			    fd.status == IB_WC_WR_FLUSH_ERR);
		assert_int_equal(
			rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL), 0);
		rw_env_wait(&e, &done.count, 1);
		assert_int_equal(done.status, IB_WC_WR_FLUSH_ERR);
		rdma_rw_ctx_destroy(&ctx, e.qp, 1, sgl.sg, FR_LEN + 1,
				    cfg->dir);
		rw_sgl_free(&sgl);
		assert_int_equal(e.qp->mrs_used, 0);
		free(fill);
		env_done(&e);
	}
}

/*
 * What the requester of a context with a wrong rkey sees depends on the
 * protocol: the remote access error on InfiniBand and RoCE; on iWARP
 * (siw) a WRITE completed once it was sent, since nothing acknowledges it,
 * and a READ is flushed by the TERMINATE that stops the QP.
 */
static enum ib_wc_status bad_rkey_status(struct rw_env *e,
					 enum dma_data_direction dir)
{
	if (!rdma_protocol_iwarp(e->dev, 1))
		return IB_WC_REM_ACCESS_ERR;
	return dir == DMA_FROM_DEVICE ? IB_WC_WR_FLUSH_ERR : IB_WC_SUCCESS;
}

static void bad_rkey_case(const struct rw_profile *p,
			  enum dma_data_direction dir)
{
	struct rw_env_opts o = {
		.profile = p,
		.max_rdma_ctxs = 2,
		.local_len = 64 << 10,
		.remote_len = 64 << 10,
	};
	struct rdma_rw_ctx ctx;
	struct scatterlist sg;
	struct ib_rdma_wr rd = { 0 };
	struct ib_sge sge;
	struct rw_done d, r;
	struct rw_env e;

	rw_env_setup(&e, &o);
	sg_init_one(&sg, e.local + PAGE_SIZE, 64);
	assert_true(rdma_rw_ctx_init(&ctx, e.qp, 1, &sg, 1, 0,
				     rw_env_raddr(&e, 128),
				     e.remote_mr->rkey ^ 0x80, dir) > 0);
	rw_done_init(&d);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &d.cqe, NULL), 0);
	rw_env_wait(&e, &d.count, 1);
	if (d.status != bad_rkey_status(&e, dir))
		fail_msg("%s %s: %s", p->label,
			 dir == DMA_TO_DEVICE ? "WRITE" : "READ",
			 ib_wc_status_msg(d.status));
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, &sg, 1, dir);
	/*
	 * The QP has stopped: a good READ posted behind the error flushes.
	 * Not on the kernel's siw: a user-space QP in ERR takes the WR and
	 * never completes it, so none is posted there.
	 */
	if (rw_env_soft(&e) || !rdma_protocol_iwarp(e.dev, 1)) {
		sge = (struct ib_sge){ (u64)(uintptr_t)e.local, 8,
				       e.pd->local_dma_lkey };
		rd.wr.opcode = IB_WR_RDMA_READ;
		rd.wr.sg_list = &sge;
		rd.wr.num_sge = 1;
		rd.wr.send_flags = IB_SEND_SIGNALED;
		rd.remote_addr = rw_env_raddr(&e, 0);
		rd.rkey = e.remote_mr->rkey;
		rw_done_init(&r);
		rd.wr.wr_cqe = &r.cqe;
		assert_int_equal(ib_post_send(e.qp, &rd.wr, NULL), 0);
		rw_env_wait(&e, &r.count, 1);
		assert_int_equal(r.status, IB_WC_WR_FLUSH_ERR);
	}
	/* no byte moved (compared as they are: rw_env_check() would post a
	 * READ to settle them) */
	assert_memory_equal(e.local, e.local_ref, e.local_len);
	assert_memory_equal(e.remote, e.remote_ref, e.remote_len);
	rw_env_teardown(&e);
}

/* A wrong rkey, WRITE and READ, on every profile (or the device). */
static void test_bad_rkey(void **state)
{
	unsigned int i, n;
	const struct rw_profile *p = rw_test_profiles(&n);

	for (i = 0; i < n; i++) {
		bad_rkey_case(&p[i], DMA_TO_DEVICE);
		bad_rkey_case(&p[i], DMA_FROM_DEVICE);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repost_one_context),
		cmocka_unit_test(test_reuse_past_256),
		cmocka_unit_test(test_init_destroy_without_post),
		cmocka_unit_test(test_failed_post_rolls_back),
		cmocka_unit_test(test_bad_rkey),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

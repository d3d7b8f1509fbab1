// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completions of R/W contexts.  With chain_wr, only the appended WR
 * completes, and a SEND appended to a WRITE reaches the peer after the
 * data (checked by the peer at the moment its receive completes, with the
 * devices executing on their own threads).  Without chain_wr, every
 * context completes exactly once, through its cqe->done.  On an ibv device
 * (RDMARW_TEST_DEVICE) the configurations without force_mr run there.
 *
 * A SEND chained after READs is fenced on iWARP: siw completes a SEND once
 * it is sent, before the responses of READs posted ahead of it have been
 * placed, so without the fence its completion says nothing about them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"

#include <errno.h>
#include <string.h>

struct peer_check {
	struct ib_cqe cqe;
	struct rw_env *e;
	u64 roff;
	u64 len;
	int count;
	int data_there;
	enum ib_wc_status status;
};

/* At the moment the SEND arrives, the WRITE's bytes must be in place. */
static void recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct peer_check *pc =
		container_of(wc->wr_cqe, struct peer_check, cqe);

	pc->status = wc->status;
	if (!memcmp(pc->e->remote + pc->roff, pc->e->remote_ref + pc->roff,
		    pc->len))
		pc->data_there++;
	__atomic_add_fetch(&pc->count, 1, __ATOMIC_RELEASE);
}

static void wait_peer(struct rw_env *e, struct peer_check *pc, int want)
{
	unsigned long spins;

	for (spins = 0; __atomic_load_n(&pc->count, __ATOMIC_ACQUIRE) < want;
	     spins++) {
		assert_true(spins < 100000000UL);
		ib_process_cq_direct(e->peer_cq, -1);
	}
}

struct cfg {
	const struct rw_profile *profile;
	bool force;
	u32 n;
};

static const struct cfg soft_cfgs[] = {
	{ &rw_profiles[0], false, 1 }, /* SINGLE */
	{ &rw_profiles[0], false, 40 }, /* MULTI, two WRs */
	{ &rw_profiles[1], false, 40 },
	{ &rw_profiles[2], false, 13 }, /* siw: MULTI of 6 SGEs */
	{ &rw_profiles[1], true, 300 }, /* MR, two registrations */
	{ &rw_profiles[2], true, 9 }, /* MR on iWARP */
	{ &rw_profiles[0], true, 2 },
};

/* The configurations to run: the software profiles', or on a device the
 * same entry counts without force_mr (it has no fast registration). */
static unsigned int configs(const struct cfg **out)
{
	static struct cfg dev_cfgs[3];
	const struct rw_profile *d = rw_test_device();

	if (!d) {
		*out = soft_cfgs;
		return sizeof(soft_cfgs) / sizeof(soft_cfgs[0]);
	}
	dev_cfgs[0] = (struct cfg){ d, false, 1 };
	dev_cfgs[1] = (struct cfg){ d, false, 40 };
	dev_cfgs[2] = (struct cfg){ d, false, 13 };
	*out = dev_cfgs;
	return 3;
}

static void env_for(struct rw_env *e, const struct cfg *c)
{
	struct rw_env_opts o = {
		.profile = c->profile,
		.max_rdma_ctxs = 8,
		.local_len = 2 << 20,
		.remote_len = 2 << 20,
		.threaded = true,
	};

	rdma_rw_set_force_mr(c->force);
	rw_env_setup(e, &o);
}

static void make_pages(struct rw_env *e, struct rw_model_ent *ents, u32 n)
{
	u32 lens[300], i;

	for (i = 0; i < n; i++)
		lens[i] = PAGE_SIZE;
	lens[0] = PAGE_SIZE - 24;
	assert_true(rw_place(e, ents, lens, n, PAGE_SIZE + 24, true, 0));
}

static void send_wr(struct rw_env *e, struct ib_send_wr *w, struct ib_sge *sge,
		    struct rw_done *d, u8 *buf)
{
	memset(w, 0, sizeof(*w));
	sge->addr = (u64)(uintptr_t)buf;
	sge->length = 32;
	sge->lkey = e->pd->local_dma_lkey;
	w->opcode = IB_WR_SEND;
	w->sg_list = sge;
	w->num_sge = 1;
	w->send_flags = IB_SEND_SIGNALED;
	rw_done_init(d);
	w->wr_cqe = &d->cqe;
}

/* See the top of the file. */
static void fence_after_read(struct rw_env *e, struct ib_send_wr *w)
{
	if (rdma_protocol_iwarp(e->dev, 1))
		w->send_flags |= IB_SEND_FENCE;
}

static void post_recv(struct rw_env *e, struct peer_check *pc,
		      struct ib_sge *sge, u8 *buf)
{
	struct ib_recv_wr r = { .sg_list = sge, .num_sge = 1 };

	sge->addr = (u64)(uintptr_t)buf;
	sge->length = 64;
	sge->lkey = e->peer_pd->local_dma_lkey;
	r.wr_cqe = &pc->cqe;
	assert_int_equal(ib_post_recv(e->peer_qp, &r, NULL), 0);
}

/* WRITE + SEND as chain_wr, 20 rounds on each configuration. */
static void test_chain_wr_write_then_send(void **state)
{
	struct rw_model_ent ents[300];
	const struct cfg *cfgs;
	unsigned int c, round, nr = configs(&cfgs);

	for (c = 0; c < nr; c++) {
		struct rw_env e;
		struct peer_check pc = { .cqe.done = recv_done };
		struct rdma_rw_ctx ctx;
		struct rw_sgl sgl;
		struct ib_send_wr send;
		struct ib_sge ssge, rsge;
		struct rw_done sd, cd;
		u8 sbuf[32] = { 1 }, rbuf[64];

		env_for(&e, &cfgs[c]);
		make_pages(&e, ents, cfgs[c].n);
		rw_sgl_build(&sgl, ents, cfgs[c].n, 0);
		pc.e = &e;
		for (round = 0; round < 20; round++) {
			u64 roff = 64 + round * 8;

			rw_env_fill(&e, round + 7 * c);
			pc.roff = roff;
			pc.len = rw_env_expect(&e, ents, cfgs[c].n, 0, roff,
					       DMA_TO_DEVICE);
			assert_true(rdma_rw_ctx_init(&ctx, e.qp, 1, sgl.sg,
						     cfgs[c].n, 0,
						     rw_env_raddr(&e, roff),
						     e.remote_mr->rkey,
						     DMA_TO_DEVICE) > 0);
			post_recv(&e, &pc, &rsge, rbuf);
			send_wr(&e, &send, &ssge, &sd, sbuf);
			rw_done_init(&cd);
			/* a cqe passed with chain_wr is ignored */
			assert_int_equal(
				rdma_rw_ctx_post(&ctx, e.qp, 1, &cd.cqe, &send),
				0);
			wait_peer(&e, &pc, (int)round + 1);
			assert_int_equal(pc.status, IB_WC_SUCCESS);
			assert_int_equal(pc.data_there, (int)round + 1);
			rw_env_wait(&e, &sd.count, 1);
			assert_int_equal(sd.status, IB_WC_SUCCESS);
			assert_int_equal(sd.opcode, IB_WC_SEND);
			assert_int_equal(rw_env_drain_cq(&e), 0);
			assert_int_equal(sd.count, 1);
			assert_int_equal(cd.count, 0);
			rw_env_check(&e);
			rdma_rw_ctx_destroy(&ctx, e.qp, 1, sgl.sg, cfgs[c].n,
					    DMA_TO_DEVICE);
		}
		rw_sgl_free(&sgl);
		rw_env_teardown(&e);
		rdma_rw_set_force_mr(false);
	}
}

/* READ + chain_wr: only the appended WR completes. */
static void test_chain_wr_read(void **state)
{
	struct rw_model_ent ents[300];
	const struct cfg *cfgs;
	unsigned int c, nr = configs(&cfgs);

	for (c = 0; c < nr; c++) {
		struct rw_env e;
		struct rdma_rw_ctx ctx;
		struct rw_sgl sgl;
		struct ib_send_wr send;
		struct ib_sge ssge, rsge;
		struct rw_done sd;
		struct peer_check pc = { .cqe.done = recv_done };
		u8 sbuf[32] = { 2 }, rbuf[64];

		env_for(&e, &cfgs[c]);
		make_pages(&e, ents, cfgs[c].n);
		rw_sgl_build(&sgl, ents, cfgs[c].n, 0);
		pc.e = &e;
		assert_true(rdma_rw_ctx_init(&ctx, e.qp, 1, sgl.sg, cfgs[c].n,
					     0, rw_env_raddr(&e, 0),
					     e.remote_mr->rkey,
					     DMA_FROM_DEVICE) > 0);
		post_recv(&e, &pc, &rsge, rbuf);
		send_wr(&e, &send, &ssge, &sd, sbuf);
		fence_after_read(&e, &send);
		assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, NULL, &send),
				 0);
		rw_env_wait(&e, &sd.count, 1);
		wait_peer(&e, &pc, 1);
		assert_int_equal(sd.status, IB_WC_SUCCESS);
		assert_int_equal(rw_env_drain_cq(&e), 0);
		assert_int_equal(sd.count, 1);
		rw_env_expect(&e, ents, cfgs[c].n, 0, 0, DMA_FROM_DEVICE);
		rw_env_check(&e);
		rdma_rw_ctx_destroy(&ctx, e.qp, 1, sgl.sg, cfgs[c].n,
				    DMA_FROM_DEVICE);
		rw_sgl_free(&sgl);
		rw_env_teardown(&e);
		rdma_rw_set_force_mr(false);
	}
}

/*
 * Eight contexts in flight, READs and WRITEs, without chain_wr: each
 * cqe->done is called exactly once, and there are no other completions.
 * Then the same contexts posted with chain_wr after being posted with a
 * cqe: nothing of theirs is signaled any more.
 */
static void test_one_completion_per_context(void **state)
{
	enum { K = 8 };
	struct rw_model_ent ents[K][24];
	const struct cfg *cfgs;
	unsigned int c, nr = configs(&cfgs);
	int i;

	for (c = 0; c < nr; c++) {
		struct rw_env e;
		struct rdma_rw_ctx ctx[K];
		struct rw_sgl sgl[K];
		struct rw_done d[K], sd;
		enum dma_data_direction dir[K];
		struct ib_send_wr send;
		struct ib_sge ssge, rsge;
		struct peer_check pc = { .cqe.done = recv_done };
		u8 sbuf[32] = { 3 }, rbuf[64];
		u32 n = cfgs[c].n < 24 ? cfgs[c].n : 24;
		int total = 0;

		env_for(&e, &cfgs[c]);
		pc.e = &e;
		for (i = 0; i < K; i++) {
			u64 raddr;
			u32 j;

			for (j = 0; j < n; j++) {
				ents[i][j].addr = (u64)(uintptr_t)e.local +
						  (u64)(i * 24 + j) * PAGE_SIZE;
				ents[i][j].len = PAGE_SIZE;
			}
			dir[i] = i % 2 ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
			rw_sgl_build(&sgl[i], ents[i], n, 0);
			raddr = rw_env_raddr(&e, (u64)i * 24 * PAGE_SIZE);
			assert_true(rdma_rw_ctx_init(&ctx[i], e.qp, 1,
						     sgl[i].sg, n, 0, raddr,
						     e.remote_mr->rkey,
						     dir[i]) > 0);
			rw_done_init(&d[i]);
		}
		for (i = 0; i < K; i++)
			assert_int_equal(rdma_rw_ctx_post(&ctx[i], e.qp, 1,
							  &d[i].cqe, NULL),
					 0);
		for (i = 0; i < K; i++) {
			rw_env_wait(&e, &d[i].count, 1);
			total++;
		}
		total += rw_env_drain_cq(&e);
		assert_int_equal(total, K);
		for (i = 0; i < K; i++) {
			assert_int_equal(d[i].count, 1);
			assert_int_equal(d[i].status, IB_WC_SUCCESS);
			assert_int_equal(d[i].opcode, dir[i] == DMA_TO_DEVICE ?
							      IB_WC_RDMA_WRITE :
							      IB_WC_RDMA_READ);
		}
		for (i = 0; i < K; i++)
			rw_env_expect(&e, ents[i], n, 0,
				      (u64)i * 24 * PAGE_SIZE, dir[i]);
		rw_env_check(&e);
		/* neither cqe nor chain_wr: refused, the completion would be
		 * lost */
		assert_null(rdma_rw_ctx_wrs(&ctx[0], e.qp, 1, NULL, NULL));
		assert_int_equal(rdma_rw_ctx_post(&ctx[0], e.qp, 1, NULL, NULL),
				 -EINVAL);
		/* again, all eight chained before one SEND */
		post_recv(&e, &pc, &rsge, rbuf);
		send_wr(&e, &send, &ssge, &sd, sbuf);
		fence_after_read(&e, &send);
		{
			struct ib_send_wr *next = &send;

			for (i = K - 1; i >= 0; i--)
				next = rdma_rw_ctx_wrs(&ctx[i], e.qp, 1, NULL,
						       next);
			assert_int_equal(ib_post_send(e.qp, next, NULL), 0);
		}
		rw_env_wait(&e, &sd.count, 1);
		wait_peer(&e, &pc, 1);
		assert_int_equal(sd.status, IB_WC_SUCCESS);
		assert_int_equal(rw_env_drain_cq(&e), 0);
		for (i = 0; i < K; i++)
			assert_int_equal(d[i].count, 1);
		rw_env_check(&e);
		for (i = 0; i < K; i++) {
			rdma_rw_ctx_destroy(&ctx[i], e.qp, 1, sgl[i].sg, n,
					    dir[i]);
			rw_sgl_free(&sgl[i]);
		}
		rw_env_teardown(&e);
		rdma_rw_set_force_mr(false);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_wr_write_then_send),
		cmocka_unit_test(test_chain_wr_read),
		cmocka_unit_test(test_one_completion_per_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a peer can reach after an R/W context failed or was torn down
 * (docs/reliability.md, "Teardown").  An attacker QP pair in the same PD
 * as the target's MRs tries the keys it saw; the target's buffers are
 * checked byte for byte.  On 94c91f9 test_read_sink_after_destroy and
 * test_partway_* fail (the WRITE lands / the queued work runs after
 * destroy), test_misuse_* corrupt the DMA-mapping count or the pool list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/mr_pool.h>
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "helpers/rw_env.h"
#include "rw/rw_internal.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#define BUF 8192

/* ---- an attacker: a second RC pair, its target-side QP in e->pd --------- */

struct attacker {
	struct ib_cq *cq, *pcq;
	struct ib_qp *qp, *pqp;
	u8 src[BUF];
};

static struct ib_qp *att_qp(struct ib_pd *pd, struct ib_cq *cq)
{
	struct ib_qp_init_attr a;
	struct ib_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = cq;
	a.qp_type = IB_QPT_RC;
	a.port_num = 1;
	a.cap.max_send_wr = 8;
	a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	qp = ib_create_qp(pd, &a);
	assert_false(IS_ERR(qp));
	return qp;
}

static void att_init(struct attacker *at, struct rw_env *e)
{
	at->cq = ib_alloc_cq(e->dev, NULL, 16, 0, IB_POLL_DIRECT);
	at->pcq = ib_alloc_cq(e->peer_dev, NULL, 16, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(at->cq));
	assert_false(IS_ERR(at->pcq));
	at->qp = att_qp(e->pd, at->cq);
	at->pqp = att_qp(e->peer_pd, at->pcq);
	assert_int_equal(soft_qp_connect(at->pqp, at->qp), 0);
	memset(at->src, 0xa5, sizeof(at->src));
}

static void att_fini(struct attacker *at)
{
	assert_int_equal(ib_destroy_qp(at->qp), 0);
	assert_int_equal(ib_destroy_qp(at->pqp), 0);
	assert_int_equal(ib_free_cq(at->cq), 0);
	assert_int_equal(ib_free_cq(at->pcq), 0);
}

/* One signaled WR on @qp, its status (bounded wait). */
static enum ib_wc_status post_one(struct ib_qp *qp, struct ib_cq *cq,
				  struct ib_rdma_wr *wr)
{
	const struct ib_send_wr *bad;
	time_t end = time(NULL) + 30;
	struct ib_wc wc;

	wr->wr.send_flags = IB_SEND_SIGNALED;
	assert_int_equal(ib_post_send(qp, &wr->wr, &bad), 0);
	while (ib_poll_cq(cq, 1, &wc) < 1) {
		assert_true(time(NULL) < end);
		sched_yield();
	}
	return wc.status;
}

/* The peer RDMA WRITEs @len bytes of 0xa5 at @addr with @rkey. */
static enum ib_wc_status att_write(struct attacker *at, u64 addr, u32 rkey,
				   u32 len)
{
	struct ib_sge sge = { (uintptr_t)at->src, len,
			      at->pqp->pd->local_dma_lkey };
	struct ib_rdma_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = addr;
	wr.rkey = rkey;
	return post_one(at->pqp, at->pcq, &wr);
}

static enum ib_qp_state qp_state(struct ib_qp *qp)
{
	struct ib_qp_attr a;
	struct ib_qp_init_attr ia;

	assert_int_equal(ib_query_qp(qp, &a, IB_QP_STATE, &ia), 0);
	return a.qp_state;
}

/*
 * The peer's WRITE with a stale key is refused.  iWARP does not acknowledge
 * WRITEs, so siw completes it at the sender; the responder terminates its
 * QP instead.  (The bytes are what the callers check.)
 */
static void att_refused(struct attacker *at, u64 addr, u32 rkey)
{
	enum ib_wc_status st = att_write(at, addr, rkey, BUF);

	if (rdma_protocol_iwarp(at->qp->device, 1))
		assert_int_equal(qp_state(at->qp), IB_QPS_ERR);
	else
		assert_int_not_equal(st, IB_WC_SUCCESS);
}

/* The target itself uses @lkey for the source of a WRITE to the peer. */
static enum ib_wc_status local_use(struct attacker *at, u64 addr, u32 lkey,
				   u32 len, struct rw_env *e)
{
	struct ib_sge sge = { addr, len, lkey };
	struct ib_rdma_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = rw_env_raddr(e, 0);
	wr.rkey = e->remote_mr->rkey;
	return post_one(at->qp, at->cq, &wr);
}

/* ---- set-up --------------------------------------------------------------- */

static void env(struct rw_env *e, const char *profile, bool threaded,
		u32 max_send_sge)
{
	static struct rw_profile p;
	struct rw_env_opts o;

	/* fault injection, MR pools and a second QP pair in one fabric */
	rw_skip_on_device();
	memset(&p, 0, sizeof(p));
	p.name = profile;
	p.label = profile;
	memset(&o, 0, sizeof(o));
	o.profile = &p;
	o.max_rdma_ctxs = 4;
	o.threaded = threaded;
	o.max_send_sge = max_send_sge;
	rw_env_setup(e, &o);
	rw_env_fill(e, 11);
}

static void one_sg(struct scatterlist *sg, u8 *buf, u32 len, u32 n)
{
	u32 i;

	sg_init_table(sg, n);
	for (i = 0; i < n; i++)
		sg_set_buf(&sg[i], buf + i * (len / n), len / n);
}

/* Process the initiator CQ for a while: flushes of unsignaled WRs too. */
static void settle(struct rw_env *e)
{
	int i;

	for (i = 0; i < 2000; i++) {
		rw_env_drain_cq(e);
		sched_yield();
	}
}

/* ---- defect 1: a failed iWARP READ leaves its sink registered ------------ */

static void read_sink_after_destroy(const char *profile, bool threaded)
{
	struct scatterlist sg[2];
	struct attacker at;
	struct rw_done done;
	struct rdma_rw_ctx ctx;
	struct rw_env e;
	u8 before[BUF];
	u32 key;
	u64 iova;
	int ret;

	env(&e, profile, threaded, 0);
	att_init(&at, &e);
	one_sg(sg, e.local, BUF, 2);
	/* a READ from a window the peer does not grant: it fails after the
	 * REG_MR of the sink executed */
	ret = rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 2, 0, rw_env_raddr(&e, 0),
			       e.remote_mr->rkey ^ 0x80, DMA_FROM_DEVICE);
	assert_true(ret >= 2);
	assert_int_equal(ctx.type, RDMA_RW_MR);
	rw_done_init(&done);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL), 0);
	rw_env_wait(&e, &done.count, 1);
	assert_int_not_equal(done.status, IB_WC_SUCCESS);
	key = ctx.reg[0].mr->lkey;
	iova = ctx.reg[0].mr->iova;
	memcpy(before, e.local, BUF);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 2, DMA_FROM_DEVICE);

	/* the target's own side may not use the key */
	assert_int_not_equal(local_use(&at, iova, key, 64, &e), IB_WC_SUCCESS);
	/* the ULP reuses the buffer; the peer tries the STag it saw */
	att_refused(&at, iova, key);
	assert_memory_equal(e.local, before, BUF);
	att_fini(&at);
	rw_env_teardown(&e);
}

static void test_read_sink_after_destroy(void **state)
{
	(void)state;
	read_sink_after_destroy("siw", false);
	read_sink_after_destroy("siw", true);
}

/* force_mr on IB and RoCE: the MR grants local access only, and no more. */
static void test_force_mr_key_after_destroy(void **state)
{
	static const char *const profiles[] = { "mlx5", "rxe" };
	unsigned int p;

	(void)state;
	rw_skip_on_device(); /* before force_mr is switched on */
	rdma_rw_set_force_mr(true);
	for (p = 0; p < 2; p++) {
		struct scatterlist sg[2];
		struct attacker at;
		struct rw_done done;
		struct rdma_rw_ctx ctx;
		struct rw_env e;
		u32 key;
		u64 iova;

		env(&e, profiles[p], p == 1, 0);
		att_init(&at, &e);
		one_sg(sg, e.local, BUF, 2);
		assert_true(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 2, 0,
					     rw_env_raddr(&e, 0),
					     e.remote_mr->rkey,
					     DMA_TO_DEVICE) >= 2);
		rw_done_init(&done);
		assert_int_equal(
			rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL), 0);
		rw_env_wait(&e, &done.count, 1);
		assert_int_equal(done.status, IB_WC_SUCCESS);
		key = ctx.reg[0].mr->lkey;
		iova = ctx.reg[0].mr->iova;
		rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 2, DMA_TO_DEVICE);
		assert_int_not_equal(local_use(&at, iova, key, 64, &e),
				     IB_WC_SUCCESS);
		att_fini(&at);
		rw_env_teardown(&e);
	}
	rdma_rw_set_force_mr(false);
}

/* ---- defect 2: a part-way failed post leaves work queued ----------------- */

static void arm(struct ib_qp *qp, enum soft_fault_type type, u64 nth)
{
	struct soft_fault_rule r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.nth = nth;
	r.err = -ENOMEM;
	assert_int_equal(soft_fault_arm_qp(qp, &r), 0);
}

/*
 * siw READ through an MR: the REG_MR is queued (the Send Queue stalled
 * before it), the READ_WITH_INV refused.  The context is destroyed at
 * once, then the Send Queue resumes: the REG_MR must not register the
 * sink with REMOTE_WRITE.
 */
static void partway_reg(bool threaded)
{
	struct scatterlist sg[2];
	struct attacker at;
	struct rw_done done;
	struct rdma_rw_ctx ctx;
	struct rw_env e;
	u8 before[BUF];
	u32 key;
	u64 iova;

	env(&e, "siw", threaded, 0);
	att_init(&at, &e);
	one_sg(sg, e.local, BUF, 2);
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 2, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_FROM_DEVICE),
			 2);
	arm(e.qp, SOFT_FAULT_STALL, 1);
	arm(e.qp, SOFT_FAULT_POST, 2);
	rw_done_init(&done);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL),
			 -ENOMEM);
	assert_int_equal(qp_state(e.qp), IB_QPS_ERR);
	key = ctx.reg[0].mr->lkey;
	iova = ctx.reg[0].mr->iova;
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 2, DMA_FROM_DEVICE);
	memset(e.local, 0x3c, BUF); /* reused */
	memcpy(before, e.local, BUF);
	assert_int_equal(soft_fault_resume(e.qp), 0);
	settle(&e);
	assert_int_equal(done.count, 0);
	att_refused(&at, iova, key);
	assert_memory_equal(e.local, before, BUF);
	att_fini(&at);
	rw_env_teardown(&e);
}

static void test_partway_reg(void **state)
{
	(void)state;
	partway_reg(false);
	partway_reg(true);
}

/*
 * A MULTI READ of two WRs (one SGE per WR) on rxe: the first is queued,
 * the second refused, the context destroyed and the buffer reused: the
 * queued READ must not land in it.
 */
static void partway_read(const char *profile, bool threaded)
{
	struct scatterlist sg[2];
	struct rw_done done;
	struct rdma_rw_ctx ctx;
	struct rw_env e;
	u8 before[BUF];

	env(&e, profile, threaded, 1);
	one_sg(sg, e.local, BUF, 2);
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 2, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_FROM_DEVICE),
			 2);
	assert_int_equal(ctx.type, RDMA_RW_MULTI_WR);
	arm(e.qp, SOFT_FAULT_STALL, 1);
	arm(e.qp, SOFT_FAULT_POST, 2);
	rw_done_init(&done);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL),
			 -ENOMEM);
	assert_int_equal(qp_state(e.qp), IB_QPS_ERR);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 2, DMA_FROM_DEVICE);
	memset(e.local, 0x5a, BUF);
	memcpy(before, e.local, BUF);
	assert_int_equal(soft_fault_resume(e.qp), 0);
	settle(&e);
	assert_int_equal(done.count, 0);
	assert_memory_equal(e.local, before, BUF);
	rw_env_teardown(&e);
}

static void test_partway_read(void **state)
{
	(void)state;
	partway_read("rxe", false);
	partway_read("rxe", true);
	partway_read("mlx5", true);
}

/* Nothing queued: the QP stays usable. */
static void test_post_refused_at_first_wr(void **state)
{
	struct scatterlist sg[1];
	struct rw_done done;
	struct rdma_rw_ctx ctx;
	struct rw_env e;

	(void)state;
	env(&e, "rxe", false, 0);
	one_sg(sg, e.local, 4096, 1);
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 1, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_TO_DEVICE),
			 1);
	arm(e.qp, SOFT_FAULT_POST, 1);
	rw_done_init(&done);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL),
			 -ENOMEM);
	assert_int_equal(qp_state(e.qp), IB_QPS_RTS);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp, 1, &done.cqe, NULL), 0);
	rw_env_wait(&e, &done.count, 1);
	assert_int_equal(done.status, IB_WC_SUCCESS);
	assert_memory_equal(e.remote, e.local, 4096);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 1, DMA_TO_DEVICE);
	rw_env_teardown(&e);
}

/* ---- defect 7: misuse is refused, state unchanged ----------------------- */

static void test_misuse_destroy_args(void **state)
{
	struct scatterlist sg[4];
	struct rdma_rw_ctx ctx;
	struct rw_env e;
	long mapped;

	(void)state;
	env(&e, "rxe", false, 0);
	mapped = rdmarw_dma_mapped(e.dev);
	one_sg(sg, e.local, BUF, 4);
	assert_true(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 4, 0,
				     rw_env_raddr(&e, 0), e.remote_mr->rkey,
				     DMA_TO_DEVICE) > 0);
	assert_int_equal(rdmarw_dma_mapped(e.dev), mapped + 4);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 3, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(e.dev), mapped + 4);
	assert_int_equal(ctx.rdmarw_origin, RDMARW_RW_ORIGIN_SG);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, NULL, 4, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(e.dev), mapped + 4);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg + 1, 3, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(e.dev), mapped + 4);
	assert_int_equal(e.qp->rw_cache->in_use, 1);
	/* the right arguments release everything */
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 4, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(e.dev), mapped);
	assert_int_equal(e.qp->rw_cache->in_use, 0);
	rw_env_teardown(&e);
}

static void test_misuse_copied_ctx(void **state)
{
	struct scatterlist sg[2];
	struct rdma_rw_ctx ctx, copy;
	struct rw_done done;
	struct rw_env e;
	int pool;

	(void)state;
	env(&e, "siw", false, 0);
	pool = ib_mr_pool_count(e.qp, &e.qp->rdma_mrs);
	one_sg(sg, e.local, BUF, 2);
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 2, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_FROM_DEVICE),
			 2);
	memcpy(&copy, &ctx, sizeof(ctx));
	rw_done_init(&done);
	assert_int_equal(rdma_rw_ctx_post(&copy, e.qp, 1, &done.cqe, NULL),
			 -EINVAL);
	assert_null(rdma_rw_ctx_wrs(&copy, e.qp, 1, &done.cqe, NULL));
	rdma_rw_ctx_destroy(&copy, e.qp, 1, sg, 2, DMA_FROM_DEVICE);
	assert_int_equal(e.qp->mrs_used, 1);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), pool - 1);
	rdma_rw_ctx_destroy(&ctx, e.qp, 1, sg, 2, DMA_FROM_DEVICE);
	assert_int_equal(e.qp->mrs_used, 0);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), pool);
	rw_env_teardown(&e);
}

static void test_misuse_pool_put_twice(void **state)
{
	struct ib_mr *mr, *a, *b;
	struct rw_env e;
	int pool;

	(void)state;
	env(&e, "siw", false, 0);
	pool = ib_mr_pool_count(e.qp, &e.qp->rdma_mrs);
	assert_true(pool >= 2);
	mr = ib_mr_pool_get(e.qp, &e.qp->rdma_mrs);
	assert_non_null(mr);
	ib_mr_pool_put(e.qp, &e.qp->rdma_mrs, mr);
	ib_mr_pool_put(e.qp, &e.qp->rdma_mrs, mr);
	assert_int_equal(e.qp->mrs_used, 0);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), pool);
	/* the list is intact: two gets give two MRs */
	a = ib_mr_pool_get(e.qp, &e.qp->rdma_mrs);
	b = ib_mr_pool_get(e.qp, &e.qp->rdma_mrs);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	ib_mr_pool_put(e.qp, &e.qp->rdma_mrs, a);
	ib_mr_pool_put(e.qp, &e.qp->rdma_mrs, b);
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), pool);
	rw_env_teardown(&e);
}

/* ---- force_mr switched on after the QP was created ---------------------- */

static void test_force_mr_without_pool(void **state)
{
	struct scatterlist sg[1];
	struct rdma_rw_ctx ctx;
	struct rw_env e;
	long mapped;

	(void)state;
	env(&e, "rxe", false, 0); /* no MR pool: nothing asked for one */
	assert_int_equal(ib_mr_pool_count(e.qp, &e.qp->rdma_mrs), 0);
	mapped = rdmarw_dma_mapped(e.dev);
	one_sg(sg, e.local, 4096, 1);
	rdma_rw_set_force_mr(true);
	assert_int_equal(rdma_rw_ctx_init(&ctx, e.qp, 1, sg, 1, 0,
					  rw_env_raddr(&e, 0),
					  e.remote_mr->rkey, DMA_TO_DEVICE),
			 -EOPNOTSUPP);
	rdma_rw_set_force_mr(false);
	assert_int_equal(rdmarw_dma_mapped(e.dev), mapped);
	rw_env_teardown(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_sink_after_destroy),
		cmocka_unit_test(test_force_mr_key_after_destroy),
		cmocka_unit_test(test_partway_reg),
		cmocka_unit_test(test_partway_read),
		cmocka_unit_test(test_post_refused_at_first_wr),
		cmocka_unit_test(test_misuse_destroy_args),
		cmocka_unit_test(test_misuse_copied_ctx),
		cmocka_unit_test(test_misuse_pool_put_twice),
		cmocka_unit_test(test_force_mr_without_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

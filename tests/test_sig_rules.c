// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Two rules of rdma_rw_ctx_signature_init() and its MR's reuse:
 * - a domain that carries PI (memory or wire T10-DIF) needs the
 *   protection list: without one, init refuses with -EINVAL and maps and
 *   takes nothing (at 94c91f9 memory NONE with a T10-DIF wire and no list
 *   was accepted; the WRITE then completed with LOC_PROT_ERR and the QP
 *   went to ERR);
 * - as on mlx5, an integrity MR must have its status read with
 *   ib_check_mr_status() before it is registered again: a context that
 *   gets an MR put back unchecked fails its post with -EINVAL (the
 *   context stays usable), and posts once the status was read.  This
 *   documents the behaviour kept at 94c91f9 (the test passes there).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/sig_env.h"
#include "rw/rw_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct done {
	struct ib_cqe cqe;
	int count;
	enum ib_wc_status status;
};

static void done_fn(struct ib_cq *cq, struct ib_wc *wc)
{
	struct done *d = container_of(wc->wr_cqe, struct done, cqe);

	d->count++;
	d->status = wc->status;
}

static struct ib_sig_attrs dif_wire(void)
{
	struct ib_sig_attrs a = { .check_mask = 0xff };

	a.mem.sig_type = IB_SIG_TYPE_NONE;
	a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a.wire.sig.dif = sig_dif(512, 0, 0);
	return a;
}

static void assert_untouched(struct sig_env *e, int pool)
{
	assert_int_equal(ib_mr_pool_count(e->qp[0], &e->qp[0]->sig_mrs), pool);
	assert_int_equal(e->qp[0]->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e->dev[0]), 0);
	if (e->qp[0]->rw_cache)
		assert_int_equal(e->qp[0]->rw_cache->in_use, 0);
}

static void test_pi_needs_prot_list(void **state)
{
	struct ib_sig_attrs a = dif_wire();
	struct done d = { .cqe.done = done_fn };
	struct scatterlist sg, psg;
	struct ib_mr_status st;
	struct rdma_rw_ctx ctx;
	struct sig_env e;
	int dir;

	sig_env_init(&e, &(struct sig_env_cfg){ .max_rdma_ctxs = 2 });
	sg_init_one(&sg, e.local, 4096);
	sg_init_one(&psg, e.local + 65536, 64);
	for (dir = 0; dir < 2; dir++) {
		enum dma_data_direction dd =
			dir ? DMA_FROM_DEVICE : DMA_TO_DEVICE;

		/* Memory NONE, wire T10-DIF, no protection list. */
		a = dif_wire();
		assert_int_equal(rdma_rw_ctx_signature_init(
					 &ctx, e.qp[0], 1, &sg, 1, NULL, 0, &a,
					 sig_env_raddr(&e, 0),
					 e.remote_mr->rkey, dd),
				 -EINVAL);
		assert_untouched(&e, 2);
		/* Memory T10-DIF, no protection list either. */
		a.mem = a.wire;
		assert_int_equal(rdma_rw_ctx_signature_init(
					 &ctx, e.qp[0], 1, &sg, 1, NULL, 0, &a,
					 sig_env_raddr(&e, 0),
					 e.remote_mr->rkey, dd),
				 -EINVAL);
		assert_untouched(&e, 2);
	}
	/* With the list, the same WRITE works and the QP stays up. */
	a = dif_wire();
	assert_int_equal(
		rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, &sg, 1, &psg, 1,
					   &a, sig_env_raddr(&e, 0),
					   e.remote_mr->rkey, DMA_TO_DEVICE),
		2);
	assert_int_equal(rdma_rw_ctx_post(&ctx, e.qp[0], 1, &d.cqe, NULL), 0);
	ib_process_cq_direct(e.cq[0], -1);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
	assert_int_equal(
		ib_check_mr_status(ctx.reg->mr, IB_MR_CHECK_SIG_STATUS, &st),
		0);
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, &sg, 1, &psg, 1,
				      DMA_TO_DEVICE);
	assert_untouched(&e, 2);
	/* No PI anywhere: no list needed. */
	a.wire.sig_type = IB_SIG_TYPE_NONE;
	assert_int_equal(
		rdma_rw_ctx_signature_init(&ctx, e.qp[0], 1, &sg, 1, NULL, 0,
					   &a, sig_env_raddr(&e, 0),
					   e.remote_mr->rkey, DMA_TO_DEVICE),
		3); /* the same MR again: LOCAL_INV first */
	rdma_rw_ctx_destroy_signature(&ctx, e.qp[0], 1, &sg, 1, NULL, 0,
				      DMA_TO_DEVICE);
	assert_untouched(&e, 2);
	sig_env_fini(&e);
}

/* One transfer through a fresh context; the status read or not. */
static int transfer(struct sig_env *e, struct scatterlist *sg,
		    struct scatterlist *psg, bool check, struct ib_mr **mrp)
{
	struct ib_sig_attrs a = dif_wire();
	struct done d = { .cqe.done = done_fn };
	struct ib_mr_status st;
	struct rdma_rw_ctx ctx;
	int ret;

	assert_true(rdma_rw_ctx_signature_init(&ctx, e->qp[0], 1, sg, 1, psg, 1,
					       &a, sig_env_raddr(e, 0),
					       e->remote_mr->rkey,
					       DMA_TO_DEVICE) > 0);
	*mrp = ctx.reg->mr;
	ret = rdma_rw_ctx_post(&ctx, e->qp[0], 1, &d.cqe, NULL);
	if (ret == -EINVAL) {
		/* Refused before anything was queued: read the status of
		 * the MR's previous registration and post again. */
		assert_int_equal(d.count, 0);
		assert_int_equal(ib_check_mr_status(ctx.reg->mr,
						    IB_MR_CHECK_SIG_STATUS,
						    &st),
				 0);
		assert_int_equal(
			rdma_rw_ctx_post(&ctx, e->qp[0], 1, &d.cqe, NULL), 0);
	}
	ib_process_cq_direct(e->cq[0], -1);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.status, IB_WC_SUCCESS);
	if (check) {
		assert_int_equal(ib_check_mr_status(ctx.reg->mr,
						    IB_MR_CHECK_SIG_STATUS,
						    &st),
				 0);
		assert_int_equal(st.fail_status, 0);
	}
	rdma_rw_ctx_destroy_signature(&ctx, e->qp[0], 1, sg, 1, psg, 1,
				      DMA_TO_DEVICE);
	return ret;
}

static void test_unchecked_mr_reuse(void **state)
{
	struct scatterlist sg, psg;
	struct ib_mr *mr0, *mr;
	struct sig_env e;

	/* A pool of one: every context gets the same MR. */
	sig_env_init(&e, &(struct sig_env_cfg){ .max_rdma_ctxs = 1 });
	sg_init_one(&sg, e.local, 4096);
	sg_init_one(&psg, e.local + 65536, 64);
	/* Checked: the next context posts at once. */
	assert_int_equal(transfer(&e, &sg, &psg, true, &mr0), 0);
	assert_int_equal(transfer(&e, &sg, &psg, false, &mr), 0);
	assert_ptr_equal(mr, mr0);
	/* Put back unchecked: the next post is refused with -EINVAL, and
	 * succeeds once ib_check_mr_status() was called. */
	assert_int_equal(transfer(&e, &sg, &psg, true, &mr), -EINVAL);
	assert_ptr_equal(mr, mr0);
	assert_int_equal(transfer(&e, &sg, &psg, true, &mr), 0);
	assert_int_equal(e.qp[0]->mrs_used, 0);
	assert_int_equal(rdmarw_dma_mapped(e.dev[0]), 0);
	sig_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pi_needs_prot_list),
		cmocka_unit_test(test_unchecked_mr_reuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

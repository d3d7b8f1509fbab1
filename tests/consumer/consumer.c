// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An out-of-tree program on an installed rdmarw: two software devices of
 * one fabric, one RDMA WRITE through rdma_rw_ctx_init()/_post()/_destroy(),
 * and the bytes checked on the other side.  With the libibverbs backend
 * built in (RDMARW_HAVE_IBV from <rdmarw/version.h>) it also opens and
 * closes every ibv device, so that a static link needs libibverbs and
 * librdmacm.  tests/consumer/run.sh builds it three ways.
 *
 * Exit status: 0 when the WRITE arrived and the versions agree.
 */
#include <stdio.h>
#include <string.h>

#include <rdmarw/rw.h>
#include <rdmarw/soft.h>
#include <rdmarw/version.h>
#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>
#endif

#define LEN 8192

struct side {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

static int done;

static void write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	done = wc->status == IB_WC_SUCCESS ? 1 : -1;
}

static int side_open(struct side *s, struct soft_fabric *f,
		     const struct soft_profile *p)
{
	struct ib_qp_init_attr attr = {
		.cap = { .max_send_wr = 8,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};

	s->dev = soft_device_create(f, NULL, p);
	if (IS_ERR(s->dev))
		return -1;
	s->pd = ib_alloc_pd(s->dev, 0);
	if (IS_ERR(s->pd))
		return -1;
	s->cq = ib_alloc_cq(s->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		return -1;
	attr.send_cq = attr.recv_cq = s->cq;
	s->qp = ib_create_qp(s->pd, &attr);
	return IS_ERR(s->qp) ? -1 : 0;
}

static void side_close(struct side *s)
{
	ib_destroy_qp(s->qp);
	ib_free_cq(s->cq);
	ib_dealloc_pd(s->pd);
	soft_device_destroy(s->dev);
}

int main(void)
{
	static char src[LEN], dst[LEN];
	struct rdma_rw_ctx ctx;
	struct ib_cqe cqe = { .done = write_done };
	struct scatterlist sg;
	struct soft_profile prof;
	struct soft_fabric *f;
	struct side a, b;
	struct ib_mr *mr;
	int ret, i;

	if (strcmp(rdmarw_version(), RDMARW_VERSION_STRING)) {
		fprintf(stderr, "consumer: library %s, headers %s\n",
			rdmarw_version(), RDMARW_VERSION_STRING);
		return 1;
	}
#ifdef RDMARW_HAVE_IBV
	rdmarw_ibv_open_all(); /* no device is fine: it must link */
#endif
	f = soft_fabric_create();
	if (IS_ERR(f) || soft_profile_get("rxe", &prof) ||
	    side_open(&a, f, &prof) || side_open(&b, f, &prof) ||
	    soft_qp_connect(a.qp, b.qp)) {
		fprintf(stderr, "consumer: cannot set up the devices\n");
		return 1;
	}
	memset(src, 0x5a, LEN);
	mr = ib_reg_user_mr(b.pd, (u64)(uintptr_t)dst, LEN, (u64)(uintptr_t)dst,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr))
		return 1;
	sg_init_one(&sg, src, LEN);
	ret = rdma_rw_ctx_init(&ctx, a.qp, 1, &sg, 1, 0, (u64)(uintptr_t)dst,
			       mr->rkey, DMA_TO_DEVICE);
	if (ret < 0 || rdma_rw_ctx_post(&ctx, a.qp, 1, &cqe, NULL)) {
		fprintf(stderr, "consumer: init/post failed (%d)\n", ret);
		return 1;
	}
	for (i = 0; i < 100 && !done; i++)
		ib_process_cq_direct(a.cq, -1);
	rdma_rw_ctx_destroy(&ctx, a.qp, 1, &sg, 1, DMA_TO_DEVICE);
	ib_dereg_mr(mr);
	side_close(&a);
	side_close(&b);
	soft_fabric_destroy(f);
#ifdef RDMARW_HAVE_IBV
	rdmarw_ibv_close_all();
#endif
	if (done != 1 || memcmp(src, dst, LEN)) {
		fprintf(stderr, "consumer: the WRITE did not arrive\n");
		return 1;
	}
	printf("consumer: rdmarw %s: one %d-byte WRITE ok\n", rdmarw_version(),
	       LEN);
	return 0;
}

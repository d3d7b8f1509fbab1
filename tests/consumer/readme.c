// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * README.md's example ("What a ULP writes"), compiled as written and run:
 * scripts/check-packages.sh copies the README's code block into
 * readme_body.inc (its "#include" lines dropped, its "..." replaced by
 * README_WAIT()), and this file puts it in a function with the names it
 * uses (io, qp, remote_addr, rkey, read_done) and runs that function
 * between two software devices: an RDMA READ of a remote buffer, every
 * byte checked.  The same source is C11 and C++17 (-pedantic -Werror, GCC
 * and clang), so no designated initialisers and no implicit void *.
 *
 * Exit status: 0 when the READ brought the remote bytes.
 */
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>
#include <rdmarw/version.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LEN 16384

struct io {
	struct rdma_rw_ctx rw;
	struct scatterlist sgl[1];
	u32 nents;
	struct ib_cqe cqe;
	int done; /* 1: success, -1: an error completion */
};

static void read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct io *io = container_of(wc->wr_cqe, struct io, cqe);

	(void)cq;
	io->done = wc->status == IB_WC_SUCCESS ? 1 : -1;
}

/* The README's "...": the completion arrives, through read_done(). */
#define README_WAIT() readme_wait(io, qp)

static void readme_wait(struct io *io, struct ib_qp *qp)
{
	int i;

	for (i = 0; i < 1000000 && !io->done; i++)
		ib_process_cq_direct(qp->send_cq, -1);
}

static int readme_read(struct io *io, struct ib_qp *qp, u64 remote_addr,
		       u32 rkey)
{
	int ret;

#include "readme_body.inc"
	return 0;
}

struct side {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

static int side_open(struct side *s, struct soft_fabric *f,
		     const struct soft_profile *p)
{
	struct ib_qp_init_attr attr;

	s->dev = soft_device_create(f, NULL, p);
	if (IS_ERR(s->dev))
		return -1;
	s->pd = ib_alloc_pd(s->dev, 0);
	if (IS_ERR(s->pd))
		return -1;
	s->cq = ib_alloc_cq(s->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = s->cq;
	attr.recv_cq = s->cq;
	attr.cap.max_send_wr = 8;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_rdma_ctxs =
		1; /* "qp was created with cap.max_rdma_ctxs" */
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = 1;
	s->qp = ib_create_qp(s->pd, &attr);
	return IS_ERR(s->qp) ? -1 : 0;
}

int main(void)
{
	static char local[LEN], remote[LEN];
	struct soft_profile prof;
	struct soft_fabric *f;
	struct side a, b;
	struct ib_mr *mr;
	struct io io;
	int ret, i;

	f = soft_fabric_create();
	if (IS_ERR(f) || soft_profile_get("siw", &prof) ||
	    side_open(&a, f, &prof) || side_open(&b, f, &prof) ||
	    soft_qp_connect(a.qp, b.qp)) {
		fprintf(stderr, "readme: cannot set up the devices\n");
		return 1;
	}
	for (i = 0; i < LEN; i++)
		remote[i] = (char)(i * 7 + 1);
	mr = ib_reg_user_mr(b.pd, (u64)(uintptr_t)remote, LEN,
			    (u64)(uintptr_t)remote,
			    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
	if (IS_ERR(mr))
		return 1;
	memset(&io, 0, sizeof(io));
	sg_init_one(io.sgl, local, LEN);
	io.nents = 1;
	ret = readme_read(&io, a.qp, (u64)(uintptr_t)remote, mr->rkey);
	if (ret || io.done != 1 || memcmp(local, remote, LEN)) {
		fprintf(stderr, "readme: the READ failed (%d, %d)\n", ret,
			io.done);
		return 1;
	}
	ib_dereg_mr(mr);
	for (i = 0; i < 2; i++) {
		struct side *s = i ? &b : &a;

		ib_destroy_qp(s->qp);
		ib_free_cq(s->cq);
		ib_dealloc_pd(s->pd);
		soft_device_destroy(s->dev);
	}
	soft_fabric_destroy(f);
	printf("readme: rdmarw %s: the README's READ of %d bytes ok\n",
	       rdmarw_version(), LEN);
	return 0;
}

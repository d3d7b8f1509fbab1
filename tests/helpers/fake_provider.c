// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The fake provider (see fake_provider.h). */
#include "helpers/fake_provider.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static_assert(offsetof(struct fake_dev, ibdev) == 0, "core first");
static_assert(offsetof(struct fake_cq, ibcq) == 0, "core first");
static_assert(offsetof(struct fake_qp, ibqp) == 0, "core first");
static_assert(offsetof(struct fake_mr, ibmr) == 0, "core first");

static struct fake_dev *fdev(struct ib_device *dev)
{
	return to_fake_dev(dev);
}

/* ---- PD ------------------------------------------------------------- */

static int fake_alloc_pd(struct ib_pd *pd)
{
	fdev(pd->device)->live_pds++;
	return 0;
}

static void fake_dealloc_pd(struct ib_pd *pd)
{
	fdev(pd->device)->live_pds--;
}

/* ---- CQ ------------------------------------------------------------- */

static int fake_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *a)
{
	struct fake_cq *cq = to_fake_cq(ibcq);

	cq->ring = calloc(a->cqe, sizeof(*cq->ring));
	if (!cq->ring)
		return -ENOMEM;
	cq->cap = a->cqe;
	pthread_mutex_init(&cq->lock, NULL);
	fdev(ibcq->device)->live_cqs++;
	return 0;
}

static void fake_destroy_cq(struct ib_cq *ibcq)
{
	struct fake_cq *cq = to_fake_cq(ibcq);

	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	fdev(ibcq->device)->live_cqs--;
}

static int fake_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct fake_cq *cq = to_fake_cq(ibcq);
	int n = 0;

	pthread_mutex_lock(&cq->lock);
	if (cq->polls < FAKE_MAX_POLL_LOG)
		cq->poll_log[cq->polls] = num_entries;
	cq->polls++;
	while (n < num_entries && cq->count) {
		wc[n++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	pthread_mutex_unlock(&cq->lock);
	return n;
}

static int fake_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct fake_cq *cq = to_fake_cq(ibcq);
	int ret = 0;

	pthread_mutex_lock(&cq->lock);
	cq->armed = true;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

int fake_cq_push(struct ib_cq *ibcq, const struct ib_wc *wc)
{
	struct fake_cq *cq = to_fake_cq(ibcq);
	bool notify;

	pthread_mutex_lock(&cq->lock);
	if (cq->count == cq->cap) {
		pthread_mutex_unlock(&cq->lock);
		return -ENOSPC;
	}
	cq->ring[(cq->head + cq->count) % cq->cap] = *wc;
	cq->count++;
	notify = cq->armed;
	cq->armed = false;
	pthread_mutex_unlock(&cq->lock);
	if (notify && ibcq->comp_handler)
		ibcq->comp_handler(ibcq, ibcq->cq_context);
	return 0;
}

unsigned int fake_cq_count(struct ib_cq *ibcq)
{
	struct fake_cq *cq = to_fake_cq(ibcq);
	unsigned int n;

	pthread_mutex_lock(&cq->lock);
	n = cq->count;
	pthread_mutex_unlock(&cq->lock);
	return n;
}

/* ---- QP ------------------------------------------------------------- */

static int fake_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr)
{
	struct fake_qp *qp = to_fake_qp(ibqp);

	qp->recv = calloc(attr->cap.max_recv_wr + 1, sizeof(*qp->recv));
	if (!qp->recv)
		return -ENOMEM;
	fdev(ibqp->device)->live_qps++;
	return 0;
}

static void fake_destroy_qp(struct ib_qp *ibqp)
{
	free(to_fake_qp(ibqp)->recv);
	fdev(ibqp->device)->live_qps--;
}

static void complete(struct ib_cq *cq, struct ib_qp *qp, u64 wr_id,
		     enum ib_wc_status status, enum ib_wc_opcode opcode)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.qp = qp,
		.port_num = qp->port,
	};

	fake_cq_push(cq, &wc);
}

static void flush_recvs(struct fake_qp *qp)
{
	unsigned int i;

	for (i = 0; i < qp->nr_recv; i++)
		complete(qp->ibqp.recv_cq, &qp->ibqp, qp->recv[i].wr_id,
			 IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	qp->nr_recv = 0;
}

static int fake_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int attr_mask)
{
	struct fake_qp *qp = to_fake_qp(ibqp);
	int ret = fdev(ibqp->device)->modify_qp_ret;

	qp->last_mask = attr_mask;
	if (ret)
		return ret;
	if ((attr_mask & IB_QP_STATE) && attr->qp_state == IB_QPS_ERR)
		flush_recvs(qp);
	return 0;
}

static enum ib_wc_opcode wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		return IB_WC_RDMA_READ;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
	case IB_WR_REG_MR_INTEGRITY:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

static int fake_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	enum ib_qp_state state =
		__atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE);
	struct fake_qp *qp = to_fake_qp(ibqp);

	for (; wr; wr = wr->next) {
		bool signaled = (wr->send_flags & IB_SEND_SIGNALED) ||
				ibqp->sq_sig_type == IB_SIGNAL_ALL_WR;

		if (state != IB_QPS_RTS && state != IB_QPS_SQD &&
		    state != IB_QPS_ERR) {
			*bad_wr = wr;
			return -EINVAL;
		}
		qp->sends++;
		if (state == IB_QPS_ERR)
			complete(ibqp->send_cq, ibqp, wr->wr_id,
				 IB_WC_WR_FLUSH_ERR, wc_opcode(wr->opcode));
		else if (signaled)
			complete(ibqp->send_cq, ibqp, wr->wr_id, IB_WC_SUCCESS,
				 wc_opcode(wr->opcode));
	}
	return 0;
}

static int fake_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	enum ib_qp_state state =
		__atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE);
	struct fake_qp *qp = to_fake_qp(ibqp);

	for (; wr; wr = wr->next) {
		if (state == IB_QPS_RESET) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (state == IB_QPS_ERR) {
			complete(ibqp->recv_cq, ibqp, wr->wr_id,
				 IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
			continue;
		}
		if (qp->nr_recv == ibqp->cap.max_recv_wr) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		qp->recv[qp->nr_recv++] = *wr;
	}
	return 0;
}

/* ---- MR ------------------------------------------------------------- */

static int mr_alloc_common(struct ib_mr *ibmr, u32 max_pages)
{
	struct fake_dev *fd = fdev(ibmr->device);
	struct fake_mr *mr = to_fake_mr(ibmr);

	fd->mr_alloc_calls++;
	if (fd->mr_alloc_calls == fd->fail_mr_alloc_at)
		return fd->fail_errno;
	if (max_pages) {
		mr->pages = calloc(max_pages, sizeof(*mr->pages));
		if (!mr->pages)
			return -ENOMEM;
	}
	ibmr->lkey = ++fd->next_index << 8;
	ibmr->rkey = ibmr->lkey;
	fd->live_mrs++;
	return 0;
}

static int fake_alloc_mr(struct ib_mr *ibmr, u32 max_num_sg)
{
	return mr_alloc_common(ibmr, max_num_sg);
}

static int fake_alloc_mr_integrity(struct ib_mr *ibmr, u32 max_num_data_sg,
				   u32 max_num_meta_sg)
{
	return mr_alloc_common(ibmr, max_num_data_sg);
}

static int fake_reg_user_mr(struct ib_mr *ibmr, u64 start, u64 length,
			    u64 virt_addr, int access)
{
	struct fake_dev *fd = fdev(ibmr->device);

	ibmr->lkey = ++fd->next_index << 8;
	ibmr->rkey = ibmr->lkey;
	fd->live_mrs++;
	return 0;
}

static int fake_dereg_mr(struct ib_mr *ibmr)
{
	struct fake_dev *fd = fdev(ibmr->device);

	if (fd->dereg_mr_ret)
		return fd->dereg_mr_ret;
	free(to_fake_mr(ibmr)->pages);
	fd->live_mrs--;
	return 0;
}

static int fake_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct fake_mr *mr = to_fake_mr(ibmr);

	if (mr->npages == ibmr->max_num_sg)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

static int fake_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			  int sg_nents, unsigned int *sg_offset)
{
	to_fake_mr(ibmr)->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, fake_set_page);
}

/* ---- device --------------------------------------------------------- */

static const struct ib_device_ops fake_ops = {
	.driver_name = "fake",
	.size_ib_pd = sizeof(struct ib_pd),
	.size_ib_cq = sizeof(struct fake_cq),
	.size_ib_qp = sizeof(struct fake_qp),
	.size_ib_mr = sizeof(struct fake_mr),
	.alloc_mr = fake_alloc_mr,
	.alloc_mr_integrity = fake_alloc_mr_integrity,
	.alloc_pd = fake_alloc_pd,
	.create_cq = fake_create_cq,
	.create_qp = fake_create_qp,
	.dealloc_pd = fake_dealloc_pd,
	.dereg_mr = fake_dereg_mr,
	.destroy_cq = fake_destroy_cq,
	.destroy_qp = fake_destroy_qp,
	.map_mr_sg = fake_map_mr_sg,
	.modify_qp = fake_modify_qp,
	.poll_cq = fake_poll_cq,
	.post_recv = fake_post_recv,
	.post_send = fake_post_send,
	.reg_user_mr = fake_reg_user_mr,
	.req_notify_cq = fake_req_notify_cq,
};

static void fake_attrs(struct ib_device_attr *a)
{
	a->max_mr_size = 1ULL << 40;
	a->max_qp = 1024;
	a->max_qp_wr = 1024;
	a->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	a->kernel_cap_flags = IBK_LOCAL_DMA_LKEY;
	a->max_send_sge = 16;
	a->max_recv_sge = 16;
	a->max_sge_rd = 16;
	a->max_cq = 1024;
	a->max_cqe = 4096;
	a->max_mr = 1 << 20;
	a->max_pd = 1024;
	a->max_fast_reg_page_list_len = 512;
	a->max_pi_fast_reg_page_list_len = 256;
}

struct fake_dev *fake_dev_new(const char *name, enum rdma_protocol proto)
{
	struct ib_device *dev =
		rdmarw__alloc_device(sizeof(struct fake_dev), &fake_ops);
	struct fake_dev *fd;

	if (!dev)
		return NULL;
	fd = to_fake_dev(dev);
	fd->fail_errno = -ENOMEM;
	fake_attrs(&dev->attrs);
	dev->port_protocol[0] = proto;
	dev->local_dma_lkey = FAKE_LOCAL_DMA_LKEY;
	if (rdmarw__register_device(dev, name)) {
		rdmarw__free_device(dev);
		return NULL;
	}
	return fd;
}

int fake_dev_free(struct fake_dev *fd)
{
	int ret;

	if (!fd)
		return 0;
	ret = rdmarw__unregister_device(&fd->ibdev);
	if (ret)
		return ret;
	rdmarw__free_device(&fd->ibdev);
	return 0;
}

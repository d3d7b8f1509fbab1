// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues (the kernel's ib_create_srq_user(),
 * ib_destroy_srq_user(), ib_modify_srq(), ib_query_srq() and
 * ib_post_srq_recv() in verbs.c and ib_verbs.h): the core checks the
 * request, allocates the provider's object, holds the PD, and keeps the
 * list of attached QPs that providers walk to resume a waiting SEND.
 */
#include "core/core.h"
#include "core/srq.h"

/*
 * The device's SRQ limits are its Receive Queue limits (ib_device_attr has
 * no max_srq_wr/max_srq_sge in rdmarw: adding them would move the fields
 * of structures programs allocate, docs/abi.md).
 */
static u32 srq_max_wr(const struct ib_device *dev)
{
	return (u32)dev->attrs.max_qp_wr;
}

static u32 srq_max_sge(const struct ib_device *dev)
{
	return (u32)dev->attrs.max_recv_sge;
}

static int check_srq_attr(struct ib_device *dev,
			  const struct ib_srq_init_attr *a)
{
	if (a->srq_type != IB_SRQT_BASIC)
		return -EINVAL;
	if (!a->attr.max_wr || a->attr.max_wr > srq_max_wr(dev) ||
	    !a->attr.max_sge || a->attr.max_sge > srq_max_sge(dev) ||
	    a->attr.srq_limit > a->attr.max_wr)
		return -EINVAL;
	return 0;
}

struct ib_srq *ib_create_srq(struct ib_pd *pd,
			     struct ib_srq_init_attr *srq_init_attr)
{
	struct ib_device *dev;
	struct ib_srq *srq;
	int ret;

	if (!pd || !srq_init_attr)
		return ERR_PTR(-EINVAL);
	dev = pd->device;
	if (!dev->ops->create_srq || !dev->ops->post_srq_recv ||
	    dev->ops->size_ib_srq < sizeof(*srq))
		return ERR_PTR(-EOPNOTSUPP);
	ret = check_srq_attr(dev, srq_init_attr);
	if (ret)
		return ERR_PTR(ret);
	srq = calloc(1, dev->ops->size_ib_srq);
	if (!srq)
		return ERR_PTR(-ENOMEM);
	srq->device = dev;
	srq->pd = pd;
	srq->event_handler = srq_init_attr->event_handler;
	srq->srq_context = srq_init_attr->srq_context;
	srq->srq_type = srq_init_attr->srq_type;
	srq->attr = srq_init_attr->attr;
	pthread_mutex_init(&srq->qp_lock, NULL);
	INIT_LIST_HEAD(&srq->qp_list);
	ret = dev->ops->create_srq(srq, srq_init_attr);
	if (ret) {
		pthread_mutex_destroy(&srq->qp_lock);
		free(srq);
		return ERR_PTR(ret);
	}
	srq->attr = srq_init_attr->attr;
	rdmarw__inc(&pd->usecnt);
	return srq;
}

int ib_destroy_srq(struct ib_srq *srq)
{
	if (IS_ERR_OR_NULL(srq))
		return -EINVAL;
	if (rdmarw__read(&srq->usecnt))
		return -EBUSY;
	if (srq->device->ops->destroy_srq)
		srq->device->ops->destroy_srq(srq);
	rdmarw__dec(&srq->pd->usecnt);
	pthread_mutex_destroy(&srq->qp_lock);
	free(srq);
	return 0;
}

int ib_modify_srq(struct ib_srq *srq, struct ib_srq_attr *srq_attr,
		  enum ib_srq_attr_mask srq_attr_mask)
{
	int ret;

	if (IS_ERR_OR_NULL(srq) || !srq_attr ||
	    (srq_attr_mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)))
		return -EINVAL;
	/* resizing: no rdmarw device has IB_DEVICE_SRQ_RESIZE */
	if (srq_attr_mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!(srq_attr_mask & IB_SRQ_LIMIT))
		return 0;
	if (srq_attr->srq_limit > srq->attr.max_wr)
		return -EINVAL;
	if (!srq->device->ops->modify_srq)
		return -EOPNOTSUPP;
	ret = srq->device->ops->modify_srq(srq, srq_attr, IB_SRQ_LIMIT);
	if (!ret)
		srq->attr.srq_limit = srq_attr->srq_limit;
	return ret;
}

int ib_query_srq(struct ib_srq *srq, struct ib_srq_attr *srq_attr)
{
	if (IS_ERR_OR_NULL(srq) || !srq_attr)
		return -EINVAL;
	if (!srq->device->ops->query_srq)
		return -EOPNOTSUPP;
	return srq->device->ops->query_srq(srq, srq_attr);
}

int ib_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *recv_wr,
		     const struct ib_recv_wr **bad_recv_wr)
{
	const struct ib_recv_wr *dummy;

	if (!bad_recv_wr)
		bad_recv_wr = &dummy;
	*bad_recv_wr = recv_wr;
	if (IS_ERR_OR_NULL(srq) || !recv_wr)
		return -EINVAL;
	return srq->device->ops->post_srq_recv(srq, recv_wr, bad_recv_wr);
}

void rdmarw__srq_attach(struct ib_qp *qp)
{
	struct ib_srq *srq = qp->srq;

	rdmarw__inc(&srq->usecnt);
	pthread_mutex_lock(&srq->qp_lock);
	list_add_tail(&qp->srq_entry, &srq->qp_list);
	pthread_mutex_unlock(&srq->qp_lock);
}

void rdmarw__srq_detach(struct ib_qp *qp)
{
	struct ib_srq *srq = qp->srq;
	bool attached;

	if (!srq)
		return;
	pthread_mutex_lock(&srq->qp_lock);
	attached = !list_empty(&qp->srq_entry);
	list_del_init(&qp->srq_entry);
	pthread_mutex_unlock(&srq->qp_lock);
	if (attached)
		rdmarw__dec(&srq->usecnt);
}

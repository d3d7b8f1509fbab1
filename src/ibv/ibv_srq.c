// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues on libibverbs: ibv_create_srq() and friends under
 * the core's ib_srq.  Receives are translated one at a time (SGEs with the
 * device's local_dma_lkey get a key from the PD's map, as on a QP's
 * Receive Queue) and posted with ibv_post_srq_recv().  QPs name the ibv
 * SRQ in their ibv_qp_init_attr (ibv_verbs.c).  The limit event is the
 * device's asynchronous event: the device's event thread (ibv_device.c)
 * finds the core SRQ in the ibv SRQ's srq_context and calls its handler.
 */
#include "ibv/ibv_srq.h"

#include <stdlib.h>

static_assert(offsetof(struct ibv_srq_priv, ibsrq) == 0, "core first");

static inline struct ibv_srq_priv *to_isrq(struct ib_srq *srq)
{
	return container_of(srq, struct ibv_srq_priv, ibsrq);
}

struct ibv_srq *rdmarw__ibv_srq(struct ib_srq *srq)
{
	return srq ? to_isrq(srq)->srq : NULL;
}

int rdmarw__ibv_create_srq(struct ib_srq *ibsrq,
			   struct ib_srq_init_attr *init_attr)
{
	struct ibv_srq_priv *isrq = to_isrq(ibsrq);
	struct ibv_srq_init_attr ia = {
		.srq_context = ibsrq,
		.attr = { .max_wr = init_attr->attr.max_wr,
			  .max_sge = init_attr->attr.max_sge,
			  .srq_limit = init_attr->attr.srq_limit },
	};

	isrq->sge = calloc(init_attr->attr.max_sge, sizeof(*isrq->sge));
	if (!isrq->sge)
		return -ENOMEM;
	errno = 0;
	isrq->srq = ibv_create_srq(to_ipd(ibsrq->pd)->pd, &ia);
	if (!isrq->srq) {
		free(isrq->sge);
		return errno ? -errno : -ENOMEM;
	}
	/* the device may round the sizes up: report what it made, but
	 * translate no more SGEs than were allocated */
	init_attr->attr.max_wr = ia.attr.max_wr;
	pthread_mutex_init(&isrq->lock, NULL);
	return 0;
}

void rdmarw__ibv_destroy_srq(struct ib_srq *ibsrq)
{
	struct ibv_srq_priv *isrq = to_isrq(ibsrq);

	ibv_destroy_srq(isrq->srq);
	pthread_mutex_destroy(&isrq->lock);
	free(isrq->sge);
}

int rdmarw__ibv_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask)
{
	struct ibv_srq_attr a = { .srq_limit = attr->srq_limit };

	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	return -ibv_modify_srq(to_isrq(ibsrq)->srq, &a, IBV_SRQ_LIMIT);
}

int rdmarw__ibv_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct ibv_srq_attr a;
	int ret = ibv_query_srq(to_isrq(ibsrq)->srq, &a);

	if (ret)
		return -ret;
	attr->max_wr = a.max_wr;
	attr->max_sge = ibsrq->attr.max_sge;
	attr->srq_limit = a.srq_limit;
	return 0;
}

/* One receive into @o and isrq->sge (isrq->lock held). */
static int recv_to_ibv(struct ibv_srq_priv *isrq, struct ibv_recv_wr *o,
		       const struct ib_recv_wr *wr)
{
	struct ibv_pd_priv *ipd = to_ipd(isrq->ibsrq.pd);
	u32 sentinel = isrq->ibsrq.device->local_dma_lkey;
	int i, ret;

	if (wr->num_sge < 0 || (u32)wr->num_sge > isrq->ibsrq.attr.max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	*o = (struct ibv_recv_wr){ .wr_id = wr->wr_id,
				   .sg_list = isrq->sge,
				   .num_sge = wr->num_sge };
	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *in = &wr->sg_list[i];

		isrq->sge[i] = (struct ibv_sge){ .addr = in->addr,
						 .length = in->length,
						 .lkey = in->lkey };
		if (in->lkey != sentinel)
			continue;
		ret = rdmarw__ibv_map_lkey(ipd, in->addr, in->length,
					   &isrq->sge[i].lkey);
		if (ret)
			return ret;
	}
	return 0;
}

int rdmarw__ibv_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	struct ibv_srq_priv *isrq = to_isrq(ibsrq);
	struct ibv_recv_wr o, *bad;
	int ret = 0;

	pthread_mutex_lock(&isrq->lock);
	for (const struct ib_recv_wr *next; wr; wr = next) {
		next = wr->next; /* before the WR is handed over */
		ret = recv_to_ibv(isrq, &o, wr);
		if (!ret)
			ret = rdmarw__ibv_post_errno(
				ibv_post_srq_recv(isrq->srq, &o, &bad));
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	pthread_mutex_unlock(&isrq->lock);
	return ret;
}

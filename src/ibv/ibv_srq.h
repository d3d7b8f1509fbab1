/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared receive queues of the libibverbs backend (src/ibv/ibv_srq.c). */
#ifndef RDMARW_IBV_SRQ_H
#define RDMARW_IBV_SRQ_H

#include "ibv/ibv_loc.h"

/**
 * struct ibv_srq_priv - an ibv SRQ
 * @ibsrq: the core SRQ (first member)
 * @srq: the ibv SRQ
 * @lock: serialises translation and posting
 * @sge: translation array of attr.max_sge SGEs
 */
struct ibv_srq_priv {
	struct ib_srq ibsrq;
	struct ibv_srq *srq;
	pthread_mutex_t lock;
	struct ibv_sge *sge;
};

int rdmarw__ibv_create_srq(struct ib_srq *srq,
			   struct ib_srq_init_attr *init_attr);
void rdmarw__ibv_destroy_srq(struct ib_srq *srq);
int rdmarw__ibv_modify_srq(struct ib_srq *srq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask);
int rdmarw__ibv_query_srq(struct ib_srq *srq, struct ib_srq_attr *attr);
int rdmarw__ibv_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr);

/* The ibv SRQ under @srq, or NULL (for ibv_qp_init_attr.srq). */
struct ibv_srq *rdmarw__ibv_srq(struct ib_srq *srq);

#endif /* RDMARW_IBV_SRQ_H */

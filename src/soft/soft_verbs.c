// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The software device's operations table (one, sorted, as rxe_verbs.c). */
#include "soft/soft_sig.h"
#include "soft/soft_srq.h"

const struct ib_device_ops rdmarw__soft_ops = {
	.driver_name = "soft",
	.size_ib_cq = sizeof(struct soft_cq),
	.size_ib_mr = sizeof(struct soft_mr),
	.size_ib_pd = sizeof(struct soft_pd),
	.size_ib_qp = sizeof(struct soft_qp),
	.size_ib_srq = sizeof(struct soft_srq),

	.alloc_mr = rdmarw__soft_alloc_mr,
	.alloc_mr_integrity = rdmarw__soft_alloc_mr_integrity,
	.alloc_pd = rdmarw__soft_alloc_pd,
	.check_mr_status = rdmarw__soft_check_mr_status,
	.create_cq = rdmarw__soft_create_cq,
	.create_qp = rdmarw__soft_create_qp,
	.create_srq = rdmarw__soft_create_srq,
	.dealloc_pd = rdmarw__soft_dealloc_pd,
	.dereg_mr = rdmarw__soft_dereg_mr,
	.destroy_cq = rdmarw__soft_destroy_cq,
	.destroy_qp = rdmarw__soft_destroy_qp,
	.destroy_srq = rdmarw__soft_destroy_srq,
	.iova_alloc = rdmarw__soft_iova_alloc,
	.iova_destroy = rdmarw__soft_iova_destroy,
	.iova_link = rdmarw__soft_iova_link,
	.map_mr_sg = rdmarw__soft_map_mr_sg,
	.map_mr_sg_pi = rdmarw__soft_map_mr_sg_pi,
	.modify_qp = rdmarw__soft_modify_qp,
	.modify_srq = rdmarw__soft_modify_srq,
	.poll_cq = rdmarw__soft_poll_cq,
	.post_recv = rdmarw__soft_post_recv,
	.post_send = rdmarw__soft_post_send,
	.post_srq_recv = rdmarw__soft_post_srq_recv,
	.query_srq = rdmarw__soft_query_srq,
	.reg_user_mr = rdmarw__soft_reg_user_mr,
	.req_notify_cq = rdmarw__soft_req_notify_cq,
	.retire_mr = rdmarw__soft_retire_mr,
};

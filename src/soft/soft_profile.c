// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Built-in profiles: attribute sets of real devices, looked up in the
 * kernel.  Every profile also has IB_DEVICE_MEM_MGT_EXTENSIONS and a true
 * local DMA key (IB_DEVICE_LOCAL_DMA_LKEY / IBK_LOCAL_DMA_LKEY): the
 * software device can reach all process memory locally, as mlx5's reserved
 * lkey does, even where rxe and siw have none.
 */
#include <stdio.h>

#include "soft/soft_access.h"

#define SOFT_BASE_CAPS (IB_DEVICE_MEM_MGT_EXTENSIONS | IB_DEVICE_LOCAL_DMA_LKEY)

/*
 * mlx5: mlx5_ib_query_device() on a ConnectX-6 Dx (capabilities as the
 * firmware reports them: log_max_qp_sz 15, max_wqe_sz_sq 1024,
 * max_wqe_sz_rq 512, log_max_klm_list_size 16, log_max_ra_req_qp 4,
 * log_max_cq_sz 22, max_sgl_for_optimized_performance 3).
 */
static const struct soft_profile profile_mlx5 = {
	.name = "mlx5",
	.protocol = RDMA_PROTOCOL_IB,
	.attrs = {
		.max_mr_size = ~0ULL,
		.page_size_cap = ~(u64)(SZ_4K - 1), /* ~(min_page_size - 1) */
		.vendor_id = 0x02c9,
		.vendor_part_id = 4125,
		.max_qp = 1 << 17,
		.max_qp_wr = 1 << 15,		/* 1 << log_max_qp_sz */
		.device_cap_flags = SOFT_BASE_CAPS | IB_DEVICE_BAD_PKEY_CNTR |
				    IB_DEVICE_BAD_QKEY_CNTR |
				    IB_DEVICE_RC_RNR_NAK_GEN |
				    IB_DEVICE_PORT_ACTIVE_EVENT |
				    IB_DEVICE_SYS_IMAGE_GUID,
		/* sho capability: IBK_INTEGRITY_HANDOVER */
		.kernel_cap_flags = IBK_LOCAL_DMA_LKEY | IBK_INTEGRITY_HANDOVER,
		/* (min(max_wqe_sz_sq, 512) - ctrl seg - raddr seg) / 16 */
		.max_send_sge = (512 - 16 - 16) / 16,
		.max_recv_sge = 512 / 16,	/* max_wqe_sz_rq / data seg */
		.max_sge_rd = (512 - 16 - 16) / 16, /* MLX5_MAX_SGE_RD */
		.max_cq = 1 << 24,
		.max_cqe = (1 << 22) - 1,
		.max_mr = 1 << 24,
		.max_pd = 1 << 23,
		.max_qp_rd_atom = 1 << 4,
		.max_qp_init_rd_atom = 1 << 4,
		.max_fast_reg_page_list_len = 1 << 16,
		/* max_fast_reg_page_list_len / 2 */
		.max_pi_fast_reg_page_list_len = 1 << 15,
		.max_sgl_rd = 3,
		/* mlx5_ib_query_device() with the sho capability */
		.sig_prot_cap = IB_PROT_T10DIF_TYPE_1 | IB_PROT_T10DIF_TYPE_2 |
				IB_PROT_T10DIF_TYPE_3,
		.sig_guard_cap = IB_GUARD_T10DIF_CRC | IB_GUARD_T10DIF_CSUM,
	},
};

/* rxe: rxe_param.h (enum rxe_device_param) via rxe_init_device_param(). */
static const struct soft_profile profile_rxe = {
	.name = "rxe",
	.protocol = RDMA_PROTOCOL_ROCE,
	.attrs = {
		.max_mr_size = ~0ULL,		/* RXE_MAX_MR_SIZE */
		.page_size_cap = 0xfffff000,	/* RXE_PAGE_SIZE_CAP */
		.max_qp = 0x10000,		/* RXE_MAX_QP */
		.max_qp_wr = 0x4000,		/* RXE_MAX_QP_WR */
		.device_cap_flags = SOFT_BASE_CAPS | IB_DEVICE_BAD_PKEY_CNTR |
				    IB_DEVICE_BAD_QKEY_CNTR |
				    IB_DEVICE_AUTO_PATH_MIG |
				    IB_DEVICE_CHANGE_PHY_PORT |
				    IB_DEVICE_UD_AV_PORT_ENFORCE |
				    IB_DEVICE_PORT_ACTIVE_EVENT |
				    IB_DEVICE_SYS_IMAGE_GUID |
				    IB_DEVICE_RC_RNR_NAK_GEN |
				    IB_DEVICE_SRQ_RESIZE,
		.kernel_cap_flags = IBK_LOCAL_DMA_LKEY,
		.max_send_sge = 32,		/* RXE_MAX_SGE */
		.max_recv_sge = 32,		/* RXE_MAX_SGE */
		.max_sge_rd = 32,		/* RXE_MAX_SGE_RD */
		.max_cq = 16384,		/* RXE_MAX_CQ */
		.max_cqe = (1 << 15) - 1,	/* 1 << RXE_MAX_LOG_CQE, - 1 */
		.max_mr = 0x40000,		/* RXE_MAX_MR_INDEX */
		.max_pd = 0x7ffc,		/* RXE_MAX_PD */
		.max_qp_rd_atom = 128,		/* RXE_MAX_QP_RD_ATOM */
		.max_qp_init_rd_atom = 128,	/* RXE_MAX_QP_INIT_RD_ATOM */
		/* RXE_MAX_FMR_PAGE_LIST_LEN */
		.max_fast_reg_page_list_len = 512,
	},
};

/*
 * siw: siw.h (SIW_MAX_*), SIW_MAX_SGE 6 from the siw ABI header, and
 * siw_query_device() (max_fast_reg_page_list_len = SIW_MAX_SGE_PBL,
 * page_size_cap = PAGE_SIZE, max_qp_rd_atom = max_ord).
 */
static const struct soft_profile profile_siw = {
	.name = "siw",
	.protocol = RDMA_PROTOCOL_IWARP,
	.attrs = {
		.max_mr_size = ~0ULL,
		.page_size_cap = SZ_4K,
		.vendor_id = 0x626d74,		/* SIW_VENDOR_ID, "bmt" */
		.max_qp = 1024 * 100,		/* SIW_MAX_QP */
		.max_qp_wr = 1024 * 32,		/* SIW_MAX_QP_WR */
		.device_cap_flags = SOFT_BASE_CAPS,
		.kernel_cap_flags = IBK_LOCAL_DMA_LKEY,
		.max_send_sge = 6,		/* SIW_MAX_SGE */
		.max_recv_sge = 6,
		.max_sge_rd = 1,		/* SIW_MAX_SGE_RD */
		.max_cq = 1024 * 100,		/* SIW_MAX_CQ */
		.max_cqe = 1024 * 32 * 100,	/* SIW_MAX_CQE */
		.max_mr = 1024 * 100 * 10,	/* SIW_MAX_MR */
		.max_pd = 1024 * 100,		/* SIW_MAX_PD */
		.max_qp_rd_atom = 128,		/* SIW_MAX_ORD_QP */
		.max_qp_init_rd_atom = 128,	/* SIW_MAX_IRD_QP */
		.max_fast_reg_page_list_len = 256, /* SIW_MAX_SGE_PBL */
	},
};

static const struct soft_profile *const profiles[] = {
	&profile_mlx5,
	&profile_rxe,
	&profile_siw,
};

int soft_profile_get(const char *name, struct soft_profile *out)
{
	size_t i;

	if (!name || !out)
		return -EINVAL;
	/* siw's attributes, its QPs on TCP (issue 28) */
	if (!strcmp(name, "siw-tcp")) {
		*out = profile_siw;
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->tcp = true;
		out->poll_rx = true;
		return 0;
	}
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		if (!strcmp(profiles[i]->name, name)) {
			*out = *profiles[i];
			out->poll_rx = true;
			return 0;
		}
	}
	return -ENOENT;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each send opcode needs (rxe_opcode.c's rxe_wr_opcode_info in our
 * words): its class, the right the responder's memory must grant, whether
 * it consumes a receive, and the completion opcodes.  The data path asks
 * this table, not switch statements.  Atomics, memory windows, LSO and
 * FLUSH are not offered: posting them fails with -EINVAL.
 */
#include "soft/soft_access.h"

/*
 * By pointer, each entry a file-scope compound literal: a hole is NULL, so
 * a lookup is one bounds test and one load (the post's fast path).
 */
static const struct soft_opcode *const opcodes[] = {
	[IB_WR_RDMA_WRITE] =
		&(const struct soft_opcode){
			.name = "RDMA_WRITE",
			.cls = SOFT_OPC_WRITE,
			.rem_access = IB_ACCESS_REMOTE_WRITE,
			.wc_opcode = IB_WC_RDMA_WRITE,
		},
	[IB_WR_RDMA_WRITE_WITH_IMM] =
		&(const struct soft_opcode){
			.name = "RDMA_WRITE_WITH_IMM",
			.cls = SOFT_OPC_WRITE,
			.flags = SOFT_OPF_RECV | SOFT_OPF_IMM,
			.rem_access = IB_ACCESS_REMOTE_WRITE,
			.wc_opcode = IB_WC_RDMA_WRITE,
			.recv_wc_opcode = IB_WC_RECV_RDMA_WITH_IMM,
		},
	[IB_WR_SEND] =
		&(const struct soft_opcode){
			.name = "SEND",
			.cls = SOFT_OPC_SEND,
			.flags = SOFT_OPF_RECV,
			.wc_opcode = IB_WC_SEND,
			.recv_wc_opcode = IB_WC_RECV,
		},
	[IB_WR_SEND_WITH_IMM] =
		&(const struct soft_opcode){
			.name = "SEND_WITH_IMM",
			.cls = SOFT_OPC_SEND,
			.flags = SOFT_OPF_RECV | SOFT_OPF_IMM,
			.wc_opcode = IB_WC_SEND,
			.recv_wc_opcode = IB_WC_RECV,
		},
	[IB_WR_SEND_WITH_INV] =
		&(const struct soft_opcode){
			.name = "SEND_WITH_INV",
			.cls = SOFT_OPC_SEND,
			.flags = SOFT_OPF_RECV | SOFT_OPF_REM_INV,
			.wc_opcode = IB_WC_SEND,
			.recv_wc_opcode = IB_WC_RECV,
		},
	[IB_WR_RDMA_READ] =
		&(const struct soft_opcode){
			.name = "RDMA_READ",
			.cls = SOFT_OPC_READ,
			.rem_access = IB_ACCESS_REMOTE_READ,
			.wc_opcode = IB_WC_RDMA_READ,
		},
	[IB_WR_RDMA_READ_WITH_INV] =
		&(const struct soft_opcode){
			.name = "RDMA_READ_WITH_INV",
			.cls = SOFT_OPC_READ,
			.flags = SOFT_OPF_LOC_INV,
			.rem_access = IB_ACCESS_REMOTE_READ,
			.wc_opcode = IB_WC_RDMA_READ,
		},
	[IB_WR_LOCAL_INV] =
		&(const struct soft_opcode){
			.name = "LOCAL_INV",
			.cls = SOFT_OPC_LOCAL,
			.flags = SOFT_OPF_LOC_INV,
			.wc_opcode = IB_WC_LOCAL_INV,
		},
	[IB_WR_REG_MR] =
		&(const struct soft_opcode){
			.name = "REG_MR",
			.cls = SOFT_OPC_LOCAL,
			.flags = SOFT_OPF_REG,
			.wc_opcode = IB_WC_REG_MR,
		},
	[IB_WR_REG_MR_INTEGRITY] =
		&(const struct soft_opcode){
			.name = "REG_MR_INTEGRITY",
			.cls = SOFT_OPC_LOCAL,
			.flags = SOFT_OPF_REG,
			.wc_opcode = IB_WC_REG_MR,
		},
};

const struct soft_opcode *rdmarw__soft_opcode(int opcode)
{
	if ((unsigned int)opcode >= sizeof(opcodes) / sizeof(opcodes[0]))
		return NULL;
	return opcodes[opcode];
}

/* ---- what each fault completes with -------------------------------- */

/* The status each fault completes with (see soft_loc.h, docs). */
static const struct {
	enum ib_wc_status status;
	u32 vendor_err;
} fault_status[SOFT_F_NR] = {
	[SOFT_OK] = { IB_WC_SUCCESS, 0 },
	[SOFT_F_LOC_PROT] = { IB_WC_LOC_PROT_ERR, 0 },
	[SOFT_F_LOC_LEN] = { IB_WC_LOC_LEN_ERR, 0 },
	[SOFT_F_LOC_QP_OP] = { IB_WC_LOC_QP_OP_ERR, 0 },
	[SOFT_F_LOC_ACCESS] = { IB_WC_LOC_ACCESS_ERR, 0 },
	[SOFT_F_REM_ACCESS] = { IB_WC_REM_ACCESS_ERR, 0 },
	[SOFT_F_REM_INV_REQ] = { IB_WC_REM_INV_REQ_ERR, 0 },
	[SOFT_F_REM_OP] = { IB_WC_REM_OP_ERR, 0 },
	[SOFT_F_RETRY_EXC] = { IB_WC_RETRY_EXC_ERR, 0 },
	[SOFT_F_GENERAL] = { IB_WC_GENERAL_ERR, 0 },
	/* A clean "not supported": vendor_err carries EOPNOTSUPP. */
	[SOFT_F_FLUSH] = { IB_WC_WR_FLUSH_ERR, 0 },
	/* rxe completes a request it has no memory for (no skb) with
	 * LOC_QP_OP_ERR; vendor_err carries ENOMEM. */
	[SOFT_F_LOC_RES] = { IB_WC_LOC_QP_OP_ERR, ENOMEM },
};

enum ib_wc_status rdmarw__soft_status(enum soft_fault f, u32 *vendor_err)
{
	if ((unsigned int)f >= SOFT_F_NR)
		f = SOFT_F_GENERAL;
	*vendor_err = fault_status[f].vendor_err;
	return fault_status[f].status;
}

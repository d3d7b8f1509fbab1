// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each send opcode needs (rxe_opcode.c's rxe_wr_opcode_info in our
 * words): its class, the right the responder's memory must grant, whether
 * it consumes a receive, and the completion opcodes.  The data path asks
 * this table, not switch statements.  Atomics, memory windows, LSO and
 * FLUSH are not offered: posting them fails with -EINVAL.
 */
#include "soft/soft_loc.h"

static const struct soft_opcode opcodes[] = {
	[IB_WR_RDMA_WRITE] = {
		.name = "RDMA_WRITE",
		.cls = SOFT_OPC_WRITE,
		.rem_access = IB_ACCESS_REMOTE_WRITE,
		.wc_opcode = IB_WC_RDMA_WRITE,
	},
	[IB_WR_RDMA_WRITE_WITH_IMM] = {
		.name = "RDMA_WRITE_WITH_IMM",
		.cls = SOFT_OPC_WRITE,
		.flags = SOFT_OPF_RECV | SOFT_OPF_IMM,
		.rem_access = IB_ACCESS_REMOTE_WRITE,
		.wc_opcode = IB_WC_RDMA_WRITE,
		.recv_wc_opcode = IB_WC_RECV_RDMA_WITH_IMM,
	},
	[IB_WR_SEND] = {
		.name = "SEND",
		.cls = SOFT_OPC_SEND,
		.flags = SOFT_OPF_RECV,
		.wc_opcode = IB_WC_SEND,
		.recv_wc_opcode = IB_WC_RECV,
	},
	[IB_WR_SEND_WITH_IMM] = {
		.name = "SEND_WITH_IMM",
		.cls = SOFT_OPC_SEND,
		.flags = SOFT_OPF_RECV | SOFT_OPF_IMM,
		.wc_opcode = IB_WC_SEND,
		.recv_wc_opcode = IB_WC_RECV,
	},
	[IB_WR_SEND_WITH_INV] = {
		.name = "SEND_WITH_INV",
		.cls = SOFT_OPC_SEND,
		.flags = SOFT_OPF_RECV | SOFT_OPF_REM_INV,
		.wc_opcode = IB_WC_SEND,
		.recv_wc_opcode = IB_WC_RECV,
	},
	[IB_WR_RDMA_READ] = {
		.name = "RDMA_READ",
		.cls = SOFT_OPC_READ,
		.rem_access = IB_ACCESS_REMOTE_READ,
		.wc_opcode = IB_WC_RDMA_READ,
	},
	[IB_WR_RDMA_READ_WITH_INV] = {
		.name = "RDMA_READ_WITH_INV",
		.cls = SOFT_OPC_READ,
		.flags = SOFT_OPF_LOC_INV,
		.rem_access = IB_ACCESS_REMOTE_READ,
		.wc_opcode = IB_WC_RDMA_READ,
	},
	[IB_WR_LOCAL_INV] = {
		.name = "LOCAL_INV",
		.cls = SOFT_OPC_LOCAL,
		.flags = SOFT_OPF_LOC_INV,
		.wc_opcode = IB_WC_LOCAL_INV,
	},
	[IB_WR_REG_MR] = {
		.name = "REG_MR",
		.cls = SOFT_OPC_LOCAL,
		.flags = SOFT_OPF_REG,
		.wc_opcode = IB_WC_REG_MR,
	},
	[IB_WR_REG_MR_INTEGRITY] = {
		.name = "REG_MR_INTEGRITY",
		.cls = SOFT_OPC_LOCAL,
		.flags = SOFT_OPF_REG,
		.wc_opcode = IB_WC_REG_MR,
	},
};

const struct soft_opcode *rdmarw__soft_opcode(int opcode)
{
	if (opcode < 0 ||
	    (size_t)opcode >= sizeof(opcodes) / sizeof(opcodes[0]) ||
	    !opcodes[opcode].name)
		return NULL;
	return &opcodes[opcode];
}

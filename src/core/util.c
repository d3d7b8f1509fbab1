// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Name tables and small helpers of the verbs core. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>

#define RDMARW_NAME_ITEM(name) [name] = #name,
static const char *const wc_status_names[] = { RDMARW_WC_STATUS_LIST(
	RDMARW_NAME_ITEM) };

const char *ib_wc_status_msg(enum ib_wc_status status)
{
	size_t i = (size_t)status;

	if (i >= sizeof(wc_status_names) / sizeof(wc_status_names[0]))
		return "UNKNOWN";
	return wc_status_names[i];
}

const char *ib_wr_opcode_str(enum ib_wr_opcode opcode)
{
	switch (opcode) {
#define RDMARW_OPCODE_CASE(name, value) \
	case name:                      \
		return #name;
		RDMARW_WR_OPCODE_LIST(RDMARW_OPCODE_CASE)
	}
	return "UNKNOWN";
}

void rdmarw__warn_once(bool *warned, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(warned, true, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	fputs("rdmarw: WARNING: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/*
 * The IBA QP state table, as ib_modify_qp_is_ok() applies it for RC QPs:
 * any state may go to RESET or ERR; otherwise RESET→INIT, INIT→INIT/RTR,
 * RTR→RTS, RTS→RTS/SQD, SQD→RTS/SQD, SQE→RTS.
 */
bool rdmarw__qp_state_transition_ok(enum ib_qp_state cur, enum ib_qp_state next)
{
	if (next == IB_QPS_RESET || next == IB_QPS_ERR)
		return cur <= IB_QPS_ERR;
	switch (cur) {
	case IB_QPS_RESET:
		return next == IB_QPS_INIT;
	case IB_QPS_INIT:
		return next == IB_QPS_INIT || next == IB_QPS_RTR;
	case IB_QPS_RTR:
		return next == IB_QPS_RTS;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		return next == IB_QPS_RTS || next == IB_QPS_SQD;
	case IB_QPS_SQE:
		return next == IB_QPS_RTS;
	default:
		return false;
	}
}

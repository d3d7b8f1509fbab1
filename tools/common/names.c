// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Names of verbs values for the tools' output (see names.h). */
#include "names.h"

#include <stdio.h>
#include <string.h>

const struct name_bit names_access[] = {
	{ IB_ACCESS_LOCAL_WRITE, "LOCAL_WRITE" },
	{ IB_ACCESS_REMOTE_WRITE, "REMOTE_WRITE" },
	{ IB_ACCESS_REMOTE_READ, "REMOTE_READ" },
	{ IB_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC" },
	{ IB_ACCESS_MW_BIND, "MW_BIND" },
	{ IB_ZERO_BASED, "ZERO_BASED" },
	{ 0, NULL },
};

const struct name_bit names_send_flags[] = {
	{ IB_SEND_FENCE, "FENCE" },	    { IB_SEND_SIGNALED, "SIGNALED" },
	{ IB_SEND_SOLICITED, "SOLICITED" }, { IB_SEND_INLINE, "INLINE" },
	{ IB_SEND_IP_CSUM, "IP_CSUM" },	    { 0, NULL },
};

const char *names_flags(const struct name_bit *t, int v, char *out, size_t n)
{
	size_t used = 0;

	out[0] = '\0';
	for (; t->name && used < n; t++) {
		if (!(v & t->bit))
			continue;
		used += (size_t)snprintf(out + used, n - used, "%s%s",
					 used ? "|" : "", t->name);
		v &= ~t->bit;
	}
	if (v && used < n)
		snprintf(out + used, n - used, "%s0x%x", used ? "|" : "", v);
	else if (!used)
		snprintf(out, n, "0");
	return out;
}

void names_jw_flags(struct jw *j, const char *key, const struct name_bit *t,
		    int v)
{
	jw_open_inline(j, key, '[');
	for (; t->name; t++)
		if (v & t->bit)
			jw_str(j, NULL, t->name);
	jw_close(j, ']');
}

const char *names_wr_opcode(enum ib_wr_opcode op)
{
	const char *s = ib_wr_opcode_str(op);

	return strncmp(s, "IB_WR_", 6) ? s : s + 6;
}

const char *names_wc_opcode(enum ib_wc_opcode op)
{
	static const struct {
		enum ib_wc_opcode op;
		const char *name;
	} t[] = {
		{ IB_WC_SEND, "IB_WC_SEND" },
		{ IB_WC_RDMA_WRITE, "IB_WC_RDMA_WRITE" },
		{ IB_WC_RDMA_READ, "IB_WC_RDMA_READ" },
		{ IB_WC_LOCAL_INV, "IB_WC_LOCAL_INV" },
		{ IB_WC_REG_MR, "IB_WC_REG_MR" },
		{ IB_WC_RECV, "IB_WC_RECV" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].op == op)
			return t[i].name;
	return "IB_WC_OTHER";
}

const char *names_dir(enum dma_data_direction dir)
{
	return dir == DMA_TO_DEVICE ? "DMA_TO_DEVICE" : "DMA_FROM_DEVICE";
}

const char *names_protocol(struct ib_device *dev)
{
	if (rdma_protocol_iwarp(dev, 1))
		return "iWARP";
	return rdma_protocol_roce(dev, 1) ? "RoCE" : "InfiniBand";
}

const char *names_rw_type(unsigned int type)
{
	static const char *const t[] = { "SINGLE", "MULTI", "MR", "SIG_MR",
					 "IOVA" };

	return type < sizeof(t) / sizeof(t[0]) ? t[type] : "none";
}

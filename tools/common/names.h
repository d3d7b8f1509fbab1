/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of verbs values for the tools' output: opcodes, flags, directions,
 * protocols and R/W paths, as text or as JSON arrays of flag names.
 */
#ifndef RDMARW_TOOLS_NAMES_H
#define RDMARW_TOOLS_NAMES_H

#include <rdmarw/ib_verbs.h>

#include "json.h"

/**
 * struct name_bit - one flag bit and its name; a table ends with a NULL name
 * @bit: the bit
 * @name: its name
 */
struct name_bit {
	int bit;
	const char *name;
};

/* IB_ACCESS_* and IB_SEND_* bits, without their prefixes. */
extern const struct name_bit names_access[];
extern const struct name_bit names_send_flags[];

/* "A|B" for the bits of @v (unknown bits in hex); "0" for none. */
const char *names_flags(const struct name_bit *t, int v, char *out, size_t n);

/* The bits of @v as a JSON array of names, member @key. */
void names_jw_flags(struct jw *j, const char *key, const struct name_bit *t,
		    int v);

/* "RDMA_READ" for IB_WR_RDMA_READ (ib_wr_opcode_str() without "IB_WR_"). */
const char *names_wr_opcode(enum ib_wr_opcode op);

/* "IB_WC_RDMA_WRITE"...; "IB_WC_OTHER" for an opcode the tools do not post. */
const char *names_wc_opcode(enum ib_wc_opcode op);

/* "DMA_TO_DEVICE" or "DMA_FROM_DEVICE". */
const char *names_dir(enum dma_data_direction dir);

/* "iWARP", "RoCE" or "InfiniBand" for port 1 of @dev. */
const char *names_protocol(struct ib_device *dev);

/* "SINGLE", "MULTI", "MR", "SIG_MR", "IOVA" for enum rdma_rw_ctx_type. */
const char *names_rw_type(unsigned int type);

#endif /* RDMARW_TOOLS_NAMES_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The SGL shapes every R/W path is checked with: one entry, entries at the
 * QP's SGE limit and one past it, at pages-per-MR and one past it, at the
 * device's max_sgl_rd and one past it, offsets, chained lists, unaligned
 * and multi-page entries.  Sizes follow the QP and the device.
 */
#ifndef RDMARW_TESTS_RW_SHAPES_H
#define RDMARW_TESTS_RW_SHAPES_H

#include "helpers/rw_env.h"

#define RW_MAX_SHAPE_ENTS 600

/**
 * struct rw_shape - one SGL layout in the local arena
 * @name: what it is
 * @ents: the entries
 * @n: how many
 * @offset: sg_offset to use
 * @chunk: chain the scatterlist in arrays of this many slots (0: flat)
 */
struct rw_shape {
	char name[64];
	struct rw_model_ent ents[RW_MAX_SHAPE_ENTS];
	u32 n;
	u32 offset;
	u32 chunk;
};

/*
 * The shapes for @e in direction @dir; returns how many were written to
 * @out (room for @max).
 */
u32 rw_shapes(struct rw_env *e, enum dma_data_direction dir,
	      struct rw_shape *out, u32 max);

/* The QP's SGE limit for @dir, computed from its caps and the device. */
u32 rw_test_max_sge(struct rw_env *e, enum dma_data_direction dir);

/* Pages per MR for the QP: min(max_fast_reg_page_list_len, 256). */
u32 rw_test_pages_per_mr(struct rw_env *e);

#endif /* RDMARW_TESTS_RW_SHAPES_H */

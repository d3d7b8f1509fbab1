// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* SGL shapes for the R/W tests (see rw_shapes.h). */
#include "helpers/rw_shapes.h"

#include <stdio.h>
#include <string.h>

u32 rw_test_max_sge(struct rw_env *e, enum dma_data_direction dir)
{
	u32 send = e->qp->cap.max_send_sge;
	u32 rd = (u32)e->dev->attrs.max_sge_rd;

	return dir == DMA_TO_DEVICE || send < rd ? send : rd;
}

u32 rw_test_pages_per_mr(struct rw_env *e)
{
	u32 len = e->dev->attrs.max_fast_reg_page_list_len;

	return len < 256 ? len : 256;
}

struct spec {
	const char *name;
	u32 n;
	u32 len; /* every entry */
	u32 first_off; /* where the first entry starts in its page */
	u32 first_len; /* first entry's length, when non-zero */
	u32 last_len; /* last entry's length, when non-zero */
	bool aligned; /* entries after the first start on a page */
	u32 gap; /* otherwise: bytes between entries */
	u32 offset; /* sg_offset */
	u32 chunk; /* chained arrays */
};

static bool make(struct rw_env *e, const struct spec *sp, struct rw_shape *s)
{
	u32 lens[RW_MAX_SHAPE_ENTS], i;

	if (!sp->n || sp->n > RW_MAX_SHAPE_ENTS)
		return false;
	for (i = 0; i < sp->n; i++)
		lens[i] = sp->len;
	if (sp->first_len)
		lens[0] = sp->first_len;
	if (sp->last_len && sp->n > 1)
		lens[sp->n - 1] = sp->last_len;
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s (n=%u)", sp->name, sp->n);
	s->n = sp->n;
	s->offset = sp->offset;
	s->chunk = sp->chunk;
	return rw_place(e, s->ents, lens, sp->n, PAGE_SIZE + sp->first_off,
			sp->aligned, sp->gap);
}

u32 rw_shapes(struct rw_env *e, enum dma_data_direction dir,
	      struct rw_shape *out, u32 max)
{
	u32 sge = rw_test_max_sge(e, dir), ppm = rw_test_pages_per_mr(e);
	u32 sgl_rd = e->dev->attrs.max_sgl_rd;
	/* without fast registration (ibv devices) there are no MR shapes */
	u32 ppm1 = ppm ? ppm + 1 : 0;
	const struct spec specs[] = {
		{ "one entry", 1, 5000, 100 },
		{ "one page", 1, 4096, 0, 0, 0, true },
		{ "sge limit", sge, 700, 8, 0, 0, false, 40 },
		{ "sge limit + 1", sge + 1, 700, 8, 0, 0, false, 40 },
		{ "pages per mr", ppm, 4096, 0, 0, 0, true },
		{ "pages per mr + 1", ppm1, 4096, 0, 0, 0, true },
		{ "pages per mr + 1, offset skips one", ppm1, 4096, 0, 0, 0,
		  true, 0, 4096 + 123 },
		{ "offset into second entry", 6, 3000, 64, 0, 0, false, 8,
		  3000 + 100 },
		{ "offset into first entry", 3, 2000, 0, 0, 0, false, 0, 1999 },
		{ "chained", 45, 1000, 0, 0, 0, false, 16, 0, 8 },
		{ "chained pages", ppm + 3, 4096, 0, 0, 0, true, 0, 0, 60 },
		{ "contiguous unaligned", 5, 3000, 300, 0, 0, false, 0 },
		{ "unaligned with gaps", 5, 3000, 300, 0, 0, false, 10 },
		{ "multi-page entries", 4, 10000, 0, 0, 0, true },
		{ "page-friendly, unaligned ends", 20, 4096, 1000, 3096, 100,
		  true },
		{ "max_sgl_rd", sgl_rd, 4096, 0, 0, 0, true },
		{ "max_sgl_rd + 1", sgl_rd + 1, 4096, 0, 0, 0, true },
		{ "max_sgl_rd + 1, odd sizes", sgl_rd + 1, 4096, 512, 3584, 777,
		  true },
	};
	u32 i, n = 0;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]) && n < max; i++)
		if (make(e, &specs[i], &out[n]))
			n++;
	return n;
}

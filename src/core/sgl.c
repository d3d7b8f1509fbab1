// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Scatterlists with their own pages (the kernel's sgl_alloc_order() and
 * sgl_free*() in lib/scatterlist.c): one array of entries, each entry a
 * block of 2^order pages from the heap, page-aligned so that sg_page()
 * names it.  Only lists from sgl_alloc*() may be freed with sgl_free*().
 */
#include "core/core.h"

#include <limits.h>
#include <string.h>

/* The kernel's default MAX_PAGE_ORDER: 4 MiB blocks with 4 KiB pages. */
#define SGL_MAX_ORDER 10U

struct scatterlist *sgl_alloc_order(unsigned long long length,
				    unsigned int order, bool chainable,
				    unsigned int gfp, unsigned int *nent_p)
{
	unsigned long long nent, nalloc;
	struct scatterlist *sgl, *sg;
	size_t block;

	if (!length || order > SGL_MAX_ORDER)
		return NULL;
	block = (size_t)PAGE_SIZE << order;
	nent = length / block + (length % block != 0);
	/* the kernel's bound: the count is an unsigned int, as is *nent_p */
	nalloc = nent + (chainable ? 1 : 0);
	if (nalloc > UINT_MAX || nalloc > SIZE_MAX / sizeof(*sgl))
		return NULL;
	sgl = calloc((size_t)nalloc, sizeof(*sgl));
	if (!sgl)
		return NULL;
	sg_init_table(sgl, (unsigned int)nalloc);
	for (sg = sgl; length; sg = sg_next(sg)) {
		unsigned int len = length < block ? (unsigned int)length :
						    (unsigned int)block;
		void *page = aligned_alloc(PAGE_SIZE, block);

		if (!page) {
			sgl_free_order(sgl, (int)order);
			return NULL;
		}
		if (gfp & __GFP_ZERO)
			memset(page, 0, block);
		sg_set_page(sg, virt_to_page(page), len, 0);
		length -= len;
	}
	if (nent_p)
		*nent_p = (unsigned int)nent;
	return sgl;
}

struct scatterlist *sgl_alloc(unsigned long long length, unsigned int gfp,
			      unsigned int *nent_p)
{
	return sgl_alloc_order(length, 0, false, gfp, nent_p);
}

void sgl_free_n_order(struct scatterlist *sgl, int nents, int order)
{
	struct scatterlist *sg;
	int i;

	(void)order; /* free() needs no size */
	if (!sgl)
		return;
	for_each_sg(sgl, sg, nents, i) {
		if (!sg)
			break;
		if (sg_page(sg))
			free(page_address(sg_page(sg)));
	}
	free(sgl);
}

void sgl_free_order(struct scatterlist *sgl, int order)
{
	sgl_free_n_order(sgl, INT_MAX, order);
}

void sgl_free(struct scatterlist *sgl)
{
	sgl_free_order(sgl, 0);
}

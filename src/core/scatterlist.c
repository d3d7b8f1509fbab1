// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Scatterlist tables (the kernel's lib/scatterlist.c, the parts rdmarw
 * needs). */
#include "core/core.h"

#include <string.h>

/* Entries per allocated array; the last slot chains to the next array. */
#define SG_MAX_SINGLE_ALLOC 128U

void sg_init_table(struct scatterlist *sgl, unsigned int nents)
{
	if (!sgl || !nents)
		return;
	memset(sgl, 0, sizeof(*sgl) * nents);
	sg_mark_end(&sgl[nents - 1]);
}

void sg_init_one(struct scatterlist *sg, const void *buf, unsigned int buflen)
{
	sg_init_table(sg, 1);
	sg_set_buf(sg, buf, buflen);
}

int sg_nents(struct scatterlist *sg)
{
	int n = 0;

	for (; sg; sg = sg_next(sg))
		n++;
	return n;
}

struct scatterlist *sg_last(struct scatterlist *sgl, unsigned int nents)
{
	struct scatterlist *sg, *ret = NULL;
	unsigned int i;

	for_each_sg(sgl, sg, nents, i) {
		if (!sg)
			return NULL;
		ret = sg;
	}
	return ret;
}

static void free_chunks(struct scatterlist *sgl, unsigned int orig_nents)
{
	while (sgl) {
		struct scatterlist *next = NULL;

		if (orig_nents > SG_MAX_SINGLE_ALLOC) {
			next = sg_chain_ptr(&sgl[SG_MAX_SINGLE_ALLOC - 1]);
			orig_nents -= SG_MAX_SINGLE_ALLOC - 1;
		}
		free(sgl);
		sgl = next;
	}
}

void sg_free_table(struct sg_table *table)
{
	if (!table || !table->sgl)
		return;
	free_chunks(table->sgl, table->orig_nents);
	table->sgl = NULL;
	table->nents = 0;
	table->orig_nents = 0;
}

int sg_alloc_table(struct sg_table *table, unsigned int nents,
		   unsigned int gfp_mask)
{
	struct scatterlist *prv = NULL, *sg;
	unsigned int left = nents;

	if (!table)
		return -EINVAL;
	memset(table, 0, sizeof(*table));
	if (!nents)
		return -EINVAL;
	while (left) {
		unsigned int n = left;

		if (left > SG_MAX_SINGLE_ALLOC)
			n = SG_MAX_SINGLE_ALLOC; /* last slot is a link */
		sg = calloc(n, sizeof(*sg));
		if (!sg) {
			sg_free_table(table);
			return -ENOMEM;
		}
		sg_init_table(sg, n);
		if (prv)
			sg_chain(prv, SG_MAX_SINGLE_ALLOC, sg);
		else
			table->sgl = sg;
		table->orig_nents = nents - left + n - (left > n ? 1 : 0);
		left -= left > n ? n - 1 : n;
		prv = sg;
	}
	table->orig_nents = nents;
	table->nents = nents;
	return 0;
}

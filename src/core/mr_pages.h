/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The page walk of ib_sg_to_pages(), inline, so that a provider whose
 * set_page is known at the call (the software device) gets it inlined into
 * the walk instead of one indirect call per page, with its page-list state
 * in an argument of its own (kept in registers) instead of in the MR.
 * ib_sg_to_pages() is this walk with the caller's set_page; both hand the
 * same pages in the same order and leave the MR and *sg_offset_p the same.
 */
#ifndef RDMARW_CORE_MR_PAGES_H
#define RDMARW_CORE_MR_PAGES_H

#include "core/provider.h"

#include <errno.h>

/*
 * Add the pages of one entry, [start, end), beginning at @page.  On a full
 * page list, report in *@mapped how far into the entry the mapping got.
 */
static inline __attribute__((always_inline)) int
rdmarw__mr_add_pages(u64 psz, u64 page, u64 start, u64 end,
		     int (*set_page)(void *, u64), void *arg, u64 *mapped)
{
	int ret;

	for (; page < end; page += psz) {
		ret = set_page(arg, page);
		if (ret < 0) {
			*mapped = page > start ? page - start : 0;
			return ret;
		}
	}
	*mapped = end - start;
	return 0;
}

/*
 * rdmarw__sg_to_pages() - ib_sg_to_pages(), inline: the same result and
 * errnos, with set_page(@arg, page) called for each page.  The page rules
 * of the kernel's ib_sg_to_pages(): an entry after the first is taken only
 * if it starts on a page boundary right after an entry that ended on one,
 * or continues the previous entry byte for byte (then it shares that
 * entry's last page).  The walk stops at the first entry that breaks the
 * rules, at the end of the list, or when set_page() refuses (page list
 * full).  It steps to the next entry only when one more is to be mapped,
 * so it never looks past the @sg_nents-th entry.
 */
static inline __attribute__((always_inline)) int
rdmarw__sg_to_pages(struct ib_mr *mr, struct scatterlist *sgl, int sg_nents,
		    unsigned int *sg_offset_p, int (*set_page)(void *, u64),
		    void *arg)
{
	unsigned int offset = sg_offset_p ? *sg_offset_p : 0;
	u64 page_mask, psz, prev_end, mapped, length = 0, start, end, page;
	struct scatterlist *sg = sgl;
	int i = 0, ret;

	if (!mr || !sgl || sg_nents <= 0 || !set_page || !mr->page_size ||
	    offset >= sg_dma_len(sgl))
		return -EINVAL;
	psz = mr->page_size;
	page_mask = ~(psz - 1);
	start = sg_dma_address(sgl) + offset;
	end = start + sg_dma_len(sgl) - offset;
	page = start & page_mask;
	mr->iova = start;
	mr->length = 0;
	for (;;) {
		ret = rdmarw__mr_add_pages(psz, page, start, end, set_page, arg,
					   &mapped);
		length += mapped;
		mr->length = length;
		if (ret) {
			/* the offset applies to the first entry alone */
			offset = (i ? 0 : offset) + (unsigned int)mapped;
			if (sg_offset_p)
				*sg_offset_p = offset;
			return (i || offset) ? i : ret;
		}
		if (++i == sg_nents)
			break;
		sg = sg_next(sg);
		if (!sg)
			break; /* the list is shorter than sg_nents */
		prev_end = end;
		start = sg_dma_address(sg);
		end = start + sg_dma_len(sg);
		page = start & page_mask;
		if (page != start || (prev_end & ~page_mask)) {
			if (start != prev_end)
				break;
			/* Continues the previous entry: its last page is
			 * already in the list. */
			page += psz;
		}
	}
	if (sg_offset_p)
		*sg_offset_p = 0;
	return i;
}

#endif /* RDMARW_CORE_MR_PAGES_H */

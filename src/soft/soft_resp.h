/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder's fast paths: data placement (soft_resp.c for SEND and
 * WRITE; the completer places READ data with the same copy).
 */
#ifndef RDMARW_SOFT_RESP_H
#define RDMARW_SOFT_RESP_H

#include "soft/soft_proto.h"

/* The data path's copy: one contiguous range to another inline, anything
 * else in rdmarw__soft_copy(). */
static inline int soft_copy(const struct soft_region *src, u32 nsrc,
			    const struct soft_region *dst, u32 ndst, u64 len)
{
	if (nsrc == 1 && ndst == 1 && src->cpu && dst->cpu && len <= src->len &&
	    len <= dst->len) {
		memmove(dst->cpu, src->cpu, len);
		return 0;
	}
	return rdmarw__soft_copy(src, nsrc, dst, ndst, len);
}

/*
 * The regions @rg (@*n of them, checked) less their first @off bytes, for
 * a wire's later segment of a message: trimmed in place, the first region
 * that still holds bytes returned and *@n set to the regions from it.
 */
static inline struct soft_region *soft_rg_skip(struct soft_region *rg, u32 *n,
					       u64 off)
{
	while (*n && off >= rg->len) {
		off -= rg->len;
		rg++;
		(*n)--;
	}
	if (*n && off) {
		rg->addr += off;
		rg->len -= off;
		if (rg->cpu)
			rg->cpu += off;
	}
	return rg;
}

#endif /* RDMARW_SOFT_RESP_H */

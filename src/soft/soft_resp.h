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

#endif /* RDMARW_SOFT_RESP_H */

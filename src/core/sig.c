// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs of integrity MRs (the kernel's ib_map_mr_sg_pi() and
 * ib_check_mr_status() in verbs.c): argument checks, then the provider.
 */
#include "core/core.h"

static bool pi_page_size_ok(const struct ib_mr *mr, unsigned int page_size)
{
	u64 cap = mr->device->attrs.page_size_cap;

	if (page_size < SZ_4K || (page_size & (page_size - 1)))
		return false;
	return !cap || (cap & page_size);
}

/* An offset must fall inside the first entry of its list. */
static bool offset_ok(struct scatterlist *sg, const unsigned int *offset)
{
	return !offset || *offset < sg_dma_len(sg);
}

int ib_map_mr_sg_pi(struct ib_mr *mr, struct scatterlist *data_sg,
		    int data_sg_nents, unsigned int *data_sg_offset,
		    struct scatterlist *meta_sg, int meta_sg_nents,
		    unsigned int *meta_sg_offset, unsigned int page_size)
{
	unsigned int data_dummy = 0, meta_dummy = 0;

	if (!mr || !data_sg || data_sg_nents <= 0 || meta_sg_nents < 0 ||
	    (meta_sg_nents && !meta_sg) || mr->type != IB_MR_TYPE_INTEGRITY ||
	    !mr->sig_attrs || !pi_page_size_ok(mr, page_size))
		return -EINVAL;
	if (!offset_ok(data_sg, data_sg_offset) ||
	    (meta_sg_nents && !offset_ok(meta_sg, meta_sg_offset)))
		return -EINVAL;
	if (!mr->device->ops->map_mr_sg_pi)
		return -EOPNOTSUPP;
	mr->page_size = page_size;
	/* Providers always get offsets to read and update. */
	return mr->device->ops->map_mr_sg_pi(
		mr, data_sg, data_sg_nents, data_sg_offset ?: &data_dummy,
		meta_sg_nents ? meta_sg : NULL, meta_sg_nents,
		meta_sg_offset ?: &meta_dummy);
}

int ib_check_mr_status(struct ib_mr *mr, u32 check_mask,
		       struct ib_mr_status *mr_status)
{
	if (!mr || !mr_status || (check_mask & ~(u32)IB_MR_CHECK_SIG_STATUS) ||
	    mr->type != IB_MR_TYPE_INTEGRITY)
		return -EINVAL;
	if (!mr->device->ops->check_mr_status)
		return -EOPNOTSUPP;
	return mr->device->ops->check_mr_status(mr, check_mask, mr_status);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains: the core does the work; the device only counts. */
#include "soft/soft_access.h"

int rdmarw__soft_alloc_pd(struct ib_pd *pd)
{
	struct soft_dev *sdev = to_sdev(pd->device);

	if (soft_add(&sdev->stats.pds, 1) > (u32)sdev->ibdev.attrs.max_pd) {
		soft_sub(&sdev->stats.pds, 1);
		return -ENOMEM; /* as siw_alloc_pd beyond SIW_MAX_PD */
	}
	return 0;
}

void rdmarw__soft_dealloc_pd(struct ib_pd *pd)
{
	soft_sub(&to_sdev(pd->device)->stats.pds, 1);
}

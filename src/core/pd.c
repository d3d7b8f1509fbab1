// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains. */
#include "core/core.h"

struct ib_pd *ib_alloc_pd(struct ib_device *device, unsigned int flags)
{
	struct ib_pd *pd;
	int ret;

	if (!device || flags)
		return ERR_PTR(-EINVAL);
	if (!device->ops->alloc_pd)
		return ERR_PTR(-EOPNOTSUPP);
	pd = calloc(1, device->ops->size_ib_pd);
	if (!pd)
		return ERR_PTR(-ENOMEM);
	pd->device = device;
	pd->local_dma_lkey = device->local_dma_lkey;
	ret = device->ops->alloc_pd(pd);
	if (ret) {
		free(pd);
		return ERR_PTR(ret);
	}
	rdmarw__device_get(device);
	return pd;
}

int ib_dealloc_pd(struct ib_pd *pd)
{
	struct ib_device *dev;

	if (!pd)
		return -EINVAL;
	if (rdmarw__read(&pd->usecnt))
		return -EBUSY;
	dev = pd->device;
	if (dev->ops->dealloc_pd)
		dev->ops->dealloc_pd(pd);
	free(pd);
	rdmarw__device_put(dev);
	return 0;
}

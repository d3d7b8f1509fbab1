// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_dma_sync_single_for_cpu() and _for_device().  rdmarw's devices share
 * the CPU's memory and caches (a mapping is the CPU address, as with the
 * kernel's virtual-DMA devices, where ib_dma_sync_* return at once), so
 * ownership passes without a copy or a flush: the calls check what they
 * are given and do nothing else.
 */
#include "core/core.h"
#include "core/dma_map.h"

/*
 * The checks both directions share.  Single mappings are counted, not
 * recorded (rdmarw_dma_mapped()), so an address is checked for being a mapping
 * at all (not the error address, a range that does not wrap) on a device
 * with live mappings, not against one particular mapping.
 */
static int dma_sync_check(struct ib_device *dev, u64 addr, size_t size,
			  enum dma_data_direction dir)
{
	if (!dev || !size || !rdmarw__dma_dir_ok(dir))
		return -EINVAL;
	if (addr == DMA_MAPPING_ERROR || !addr || addr + size < addr)
		return -EINVAL;
	if (rdmarw_dma_mapped(dev) <= 0)
		return -EINVAL;
	return 0;
}

int ib_dma_sync_single_for_cpu(struct ib_device *dev, u64 addr, size_t size,
			       enum dma_data_direction dir)
{
	return dma_sync_check(dev, addr, size, dir);
}

int ib_dma_sync_single_for_device(struct ib_device *dev, u64 addr, size_t size,
				  enum dma_data_direction dir)
{
	return dma_sync_check(dev, addr, size, dir);
}

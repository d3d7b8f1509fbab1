// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DMA mapping.  rdmarw's devices address memory virtually (as rxe and siw
 * do): a mapping is the CPU address, nothing is merged, and the device's
 * dma_mapped counter tracks live mappings so that tests can prove that
 * nothing stays mapped.  The emulated IOMMU (software device profile switch)
 * adds contiguous IOVA ranges for the IOVA path of the R/W API.
 */
#include "core/core.h"
#include "core/dma_map.h"

#if !defined(__x86_64__)
__thread unsigned int rdmarw__dma_stripe
	__attribute__((tls_model("initial-exec")));

/* The calling thread's stripe, plus one: threads take them round-robin. */
unsigned int rdmarw__dma_stripe_take(void)
{
	static unsigned int next;

	rdmarw__dma_stripe = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) %
				     RDMARW_DMA_STRIPES +
			     1;
	return rdmarw__dma_stripe;
}
#endif

long rdmarw_dma_mapped(const struct ib_device *dev)
{
	long sum = 0;
	int i;

	if (!dev)
		return 0;
	for (i = 0; i < RDMARW_DMA_STRIPES; i++)
		sum += __atomic_load_n(&dev->dma_mapped[i].n, __ATOMIC_RELAXED);
	return sum;
}

int ib_dma_map_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
		  enum dma_data_direction direction)
{
	return rdmarw__dma_map_sg(dev, sg, nents, direction);
}

void ib_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
		     enum dma_data_direction direction)
{
	(void)direction;
	rdmarw__dma_unmap_sg(dev, sg, nents);
}

int ib_dma_map_sgtable_attrs(struct ib_device *dev, struct sg_table *sgt,
			     enum dma_data_direction direction,
			     unsigned long dma_attrs)
{
	int n;

	if (!sgt)
		return -EINVAL;
	n = ib_dma_map_sg(dev, sgt->sgl, (int)sgt->orig_nents, direction);
	if (n <= 0)
		return -EINVAL;
	sgt->nents = (unsigned int)n;
	return 0;
}

void ib_dma_unmap_sgtable_attrs(struct ib_device *dev, struct sg_table *sgt,
				enum dma_data_direction direction,
				unsigned long dma_attrs)
{
	if (sgt)
		ib_dma_unmap_sg(dev, sgt->sgl, (int)sgt->orig_nents, direction);
}

u64 ib_dma_map_single(struct ib_device *dev, void *cpu_addr, size_t size,
		      enum dma_data_direction direction)
{
	uintptr_t va = (uintptr_t)cpu_addr;

	if (!dev || !cpu_addr || !rdmarw__dma_dir_ok(direction) ||
	    va + size < va)
		return DMA_MAPPING_ERROR;
	rdmarw__dma_mapped_add(dev, 1);
	return va;
}

void ib_dma_unmap_single(struct ib_device *dev, u64 addr, size_t size,
			 enum dma_data_direction direction)
{
	if (dev && addr != DMA_MAPPING_ERROR)
		rdmarw__dma_mapped_add(dev, -1);
}

u64 ib_dma_map_bvec(struct ib_device *dev, struct bio_vec *bvec,
		    enum dma_data_direction direction)
{
	if (!bvec)
		return DMA_MAPPING_ERROR;
	return ib_dma_map_single(dev, (void *)(uintptr_t)bvec_phys(bvec),
				 bvec->bv_len, direction);
}

void ib_dma_unmap_bvec(struct ib_device *dev, u64 addr, size_t size,
		       enum dma_data_direction direction)
{
	ib_dma_unmap_single(dev, addr, size, direction);
}

int ib_dma_mapping_error(struct ib_device *dev, u64 dma_addr)
{
	return dma_addr == DMA_MAPPING_ERROR;
}

bool ib_dma_iova_try_alloc(struct ib_device *dev, struct dma_iova_state *state,
			   phys_addr_t phys, size_t size)
{
	if (!state)
		return false;
	state->addr = 0;
	state->size = 0;
	if (!dev || !size || ib_uses_virt_dma(dev) || !dev->iommu ||
	    !dev->ops->iova_alloc)
		return false;
	return dev->ops->iova_alloc(dev, state, phys, size) == 0;
}

int ib_dma_iova_link(struct ib_device *dev, struct dma_iova_state *state,
		     phys_addr_t phys, size_t offset, size_t size,
		     enum dma_data_direction dir)
{
	if (!dev || !state || !dma_use_iova(state) ||
	    !rdmarw__dma_dir_ok(dir) || !size)
		return -EINVAL;
	if (offset > state->size || size > state->size - offset)
		return -EINVAL;
	if (!dev->ops->iova_link)
		return -EOPNOTSUPP;
	return dev->ops->iova_link(dev, state, phys, offset, size);
}

void ib_dma_iova_destroy(struct ib_device *dev, struct dma_iova_state *state,
			 size_t mapped_len, enum dma_data_direction dir)
{
	if (!dev || !state || !dma_use_iova(state) || !dev->ops->iova_destroy)
		return;
	dev->ops->iova_destroy(dev, state, mapped_len);
	state->addr = 0;
	state->size = 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DMA mapping.  rdmarw's devices address memory virtually (as rxe and siw
 * do): a mapping is the CPU address, nothing is merged, and the device's
 * dma_mapped counter tracks live mappings so that tests can prove that
 * nothing stays mapped.  The emulated IOMMU (software device profile switch)
 * adds contiguous IOVA ranges for the IOVA path of the R/W API.
 */
#include "core/core.h"

static bool dir_ok(enum dma_data_direction dir)
{
	return dir == DMA_TO_DEVICE || dir == DMA_FROM_DEVICE ||
	       dir == DMA_BIDIRECTIONAL;
}

static void mapped_add(struct ib_device *dev, long n)
{
	__atomic_add_fetch(&dev->dma_mapped, n, __ATOMIC_RELAXED);
}

/*
 * One pass over the entries: each entry's fields are read before its DMA
 * fields are written (they share a type with page_link, so the compiler
 * would otherwise read them again), and the step to the next entry is
 * taken only when there is one to map, so the walk never looks past the
 * @nents-th entry.  Returns false for a list shorter than @nents or an
 * entry whose range wraps.
 */
static bool map_entries(struct scatterlist *s, int nents)
{
	int left = nents;

	for (;;) {
		unsigned long link = s->page_link;
		uintptr_t va = (link & ~SG_PAGE_LINK_MASK) + s->offset;
		unsigned int len = s->length;

		if (va + len < va)
			return false;
		s->dma_address = va;
		s->dma_length = len;
		if (!--left)
			return true;
		if (link & SG_END)
			return false; /* shorter than nents: nothing is kept */
		s++;
		if (__builtin_expect(sg_is_chain(s), 0)) {
			s = sg_chain_ptr(s);
			if (!s)
				return false;
		}
	}
}

int ib_dma_map_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
		  enum dma_data_direction direction)
{
	if (!dev || !sg || nents <= 0 || !dir_ok(direction))
		return 0;
	if (!map_entries(sg, nents))
		return 0;
	mapped_add(dev, nents);
	return nents;
}

void ib_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
		     enum dma_data_direction direction)
{
	if (!dev || !sg || nents <= 0)
		return;
	mapped_add(dev, -nents);
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

	if (!dev || !cpu_addr || !dir_ok(direction) || va + size < va)
		return DMA_MAPPING_ERROR;
	mapped_add(dev, 1);
	return va;
}

void ib_dma_unmap_single(struct ib_device *dev, u64 addr, size_t size,
			 enum dma_data_direction direction)
{
	if (dev && addr != DMA_MAPPING_ERROR)
		mapped_add(dev, -1);
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
	if (!dev || !state || !dma_use_iova(state) || !dir_ok(dir) || !size)
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

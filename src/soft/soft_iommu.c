// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulated IOMMU (profile.iommu).
 *
 * IOVA ranges live in the upper half of the 64-bit space (SOFT_IOVA_BIT),
 * which user-space virtual addresses never use, so any DMA address the data
 * path meets (an SGE under the local DMA key, an element of an MR's page
 * list) is either a CPU address or an IOVA, told apart by that bit.  IOVAs
 * translate page by page; an IOVA that is not linked fails the access
 * (LOC_PROT_ERR for the work request).  Ranges are never reused: each
 * allocation takes fresh pages after a one-page gap, so a stale IOVA cannot
 * alias a newer mapping.
 *
 * The mappings are MR-like state: the data path translates an IOVA inside
 * its read section of the fabric's mem_lock (soft_req.c: the requester,
 * the responder and the completer all run in it), and allocating, linking
 * and destroying a range take the write side, so a destroy returns only
 * when no request that could still use the mapping is running (as an
 * invalidation), and readers of different QPs share no written line.
 */
#include "soft/soft_access.h"

/**
 * struct soft_iova_range - one dma_iova_try_alloc() reservation
 * @entry: soft_iommu.ranges
 * @base: first IOVA page
 * @npages: pages reserved
 * @page: CPU page linked at each IOVA page, 0 when unlinked
 */
struct soft_iova_range {
	struct list_head entry;
	u64 base;
	u64 npages;
	u64 *page;
};

#define SOFT_IOVA_PAGE ((u64)PAGE_SIZE)
#define SOFT_IOVA_OFF(a) ((a) & (SOFT_IOVA_PAGE - 1))
#define SOFT_IOVA_LIMIT (1ULL << 40) /* largest single reservation */

void rdmarw__soft_iommu_init(struct soft_iommu *mmu)
{
	INIT_LIST_HEAD(&mmu->ranges);
	mmu->next = SOFT_IOVA_BIT | SOFT_IOVA_PAGE;
}

static void range_free(struct soft_iova_range *r)
{
	free(r->page);
	free(r);
}

void rdmarw__soft_iommu_fini(struct soft_iommu *mmu)
{
	struct soft_iova_range *r, *tmp;

	/* Ranges left by a caller that never destroyed them. */
	list_for_each_entry_safe(r, tmp, &mmu->ranges, entry) {
		list_del(&r->entry);
		range_free(r);
	}
}

static struct soft_iova_range *range_find(struct soft_iommu *mmu, u64 iova)
{
	struct soft_iova_range *r, *tmp;

	list_for_each_entry_safe(r, tmp, &mmu->ranges, entry)
		if (iova >= r->base &&
		    (iova - r->base) / SOFT_IOVA_PAGE < r->npages)
			return r;
	return NULL;
}

int rdmarw__soft_iova_alloc(struct ib_device *dev, struct dma_iova_state *state,
			    phys_addr_t phys, size_t size)
{
	struct soft_dev *sdev = to_sdev(dev);
	struct soft_iommu *mmu = &sdev->iommu;
	struct soft_iova_range *r;
	u64 npages;

	if (!size || size > SOFT_IOVA_LIMIT)
		return -EINVAL;
	npages = (SOFT_IOVA_OFF(phys) + size + SOFT_IOVA_PAGE - 1) /
		 SOFT_IOVA_PAGE;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->page = calloc(npages, sizeof(*r->page));
	if (!r->page) {
		free(r);
		return -ENOMEM;
	}
	r->npages = npages;
	soft_br_write_lock(&sdev->fabric->mem_lock);
	if (mmu->next + (npages + 1) * SOFT_IOVA_PAGE < mmu->next) {
		soft_br_write_unlock(&sdev->fabric->mem_lock);
		range_free(r);
		return -ENOMEM; /* IOVA space used up */
	}
	r->base = mmu->next;
	mmu->next += (npages + 1) * SOFT_IOVA_PAGE;
	list_add_tail(&r->entry, &mmu->ranges);
	mmu->count++;
	soft_br_write_unlock(&sdev->fabric->mem_lock);
	soft_add(&sdev->stats.iova_ranges, 1);
	/* As dma_iova_try_alloc(): the IOVA keeps the in-page offset. */
	state->addr = r->base + SOFT_IOVA_OFF(phys);
	state->size = size;
	return 0;
}

int rdmarw__soft_iova_link(struct ib_device *dev, struct dma_iova_state *state,
			   phys_addr_t phys, size_t offset, size_t size)
{
	struct soft_dev *sdev = to_sdev(dev);
	struct soft_iommu *mmu = &sdev->iommu;
	u64 iova = state->addr + offset, first, last, i;
	struct soft_iova_range *r;
	int ret = 0;

	/* Page-granular: the IOVA and the memory share the in-page offset. */
	if (!phys || SOFT_IOVA_OFF(iova) != SOFT_IOVA_OFF(phys) ||
	    phys + size < phys)
		return -EINVAL;
	soft_br_write_lock(&sdev->fabric->mem_lock);
	r = range_find(mmu, state->addr);
	if (!r || iova < r->base ||
	    (iova + size - 1 - r->base) / SOFT_IOVA_PAGE >= r->npages) {
		ret = -EINVAL;
		goto out;
	}
	first = (iova - r->base) / SOFT_IOVA_PAGE;
	last = (iova + size - 1 - r->base) / SOFT_IOVA_PAGE;
	for (i = first; i <= last; i++) {
		u64 cpu = (phys & ~(SOFT_IOVA_PAGE - 1)) +
			  (i - first) * SOFT_IOVA_PAGE;

		if (r->page[i] && r->page[i] != cpu) {
			ret = -EINVAL; /* already linked elsewhere */
			goto out;
		}
	}
	for (i = first; i <= last; i++)
		r->page[i] = (phys & ~(SOFT_IOVA_PAGE - 1)) +
			     (i - first) * SOFT_IOVA_PAGE;
out:
	soft_br_write_unlock(&sdev->fabric->mem_lock);
	return ret;
}

void rdmarw__soft_iova_destroy(struct ib_device *dev,
			       struct dma_iova_state *state, size_t mapped_len)
{
	struct soft_dev *sdev = to_sdev(dev);
	struct soft_iommu *mmu = &sdev->iommu;
	struct soft_iova_range *r;

	soft_br_write_lock(&sdev->fabric->mem_lock);
	r = range_find(mmu, state->addr);
	if (r) {
		list_del(&r->entry);
		mmu->count--;
	}
	soft_br_write_unlock(&sdev->fabric->mem_lock);
	if (r) {
		range_free(r);
		soft_sub(&sdev->stats.iova_ranges, 1);
	}
}

/* The IOVA half of soft_dma_to_cpu() (soft_access.h), after its range
 * rule: only the translation.  The caller is in a read section of the
 * fabric's mem_lock (above), so nothing here takes a lock. */
int rdmarw__soft_iova_to_cpu(struct soft_dev *sdev, u64 addr, u64 len, u8 **ptr,
			     u64 *n)
{
	struct soft_iommu *mmu = &sdev->iommu;
	struct soft_iova_range *r;
	u64 idx, got;

	if (!sdev->ibdev.iommu)
		return -EFAULT;
	r = range_find(mmu, addr);
	idx = r ? (addr - r->base) / SOFT_IOVA_PAGE : 0;
	if (!r || !r->page[idx])
		return -EFAULT;
	*ptr = (u8 *)(uintptr_t)(r->page[idx] + SOFT_IOVA_OFF(addr));
	got = SOFT_IOVA_PAGE - SOFT_IOVA_OFF(addr);
	/* Extend over IOVA pages linked to consecutive memory. */
	while (got < len && idx + 1 < r->npages &&
	       r->page[idx + 1] == r->page[idx] + SOFT_IOVA_PAGE) {
		idx++;
		got += SOFT_IOVA_PAGE;
	}
	*n = got < len ? got : len;
	return 0;
}

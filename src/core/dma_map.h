/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The bodies of ib_dma_map_sg() and ib_dma_unmap_sg(), inline so that the
 * R/W API's per-I/O mapping makes no call (src/rw/rw.c); dma.c defines the
 * public functions with them, so there is one definition of the rules.
 */
#ifndef RDMARW_CORE_DMA_MAP_H
#define RDMARW_CORE_DMA_MAP_H

#include <rdmarw/ib_verbs.h>
#include <rdmarw/scatterlist.h>

static inline bool rdmarw__dma_dir_ok(enum dma_data_direction dir)
{
	return dir == DMA_TO_DEVICE || dir == DMA_FROM_DEVICE ||
	       dir == DMA_BIDIRECTIONAL;
}

/* This thread's stripe of every device's mapped count, plus one (0: none yet). */
extern __thread unsigned int rdmarw__dma_stripe;
unsigned int rdmarw__dma_stripe_take(void);

/*
 * Count @n entries mapped (or unmapped, @n < 0) in this thread's stripe:
 * threads on different stripes write different cache lines, so QPs on
 * many threads share no counter.  Atomic only because more threads than
 * stripes share stripes; rdmarw_dma_mapped() sums them.
 */
static inline void rdmarw__dma_mapped_add(struct ib_device *dev, long n)
{
	unsigned int s = rdmarw__dma_stripe;

	if (__builtin_expect(!s, 0))
		s = rdmarw__dma_stripe_take();
	__atomic_add_fetch(&dev->dma_mapped[s - 1].n, n, __ATOMIC_RELAXED);
}

/*
 * One pass over the entries: each entry's fields are read before its DMA
 * fields are written (they share a type with page_link, so the compiler
 * would otherwise read them again), and the step to the next entry is
 * taken only when there is one to map, so the walk never looks past the
 * @nents-th entry.  Returns false for a list shorter than @nents or an
 * entry whose range wraps.
 */
static inline bool rdmarw__dma_map_entries(struct scatterlist *s, int nents)
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

/* ib_dma_map_sg(): the entries mapped (@nents), or 0. */
static inline int rdmarw__dma_map_sg(struct ib_device *dev,
				     struct scatterlist *sg, int nents,
				     enum dma_data_direction dir)
{
	if (!dev || !sg || nents <= 0 || !rdmarw__dma_dir_ok(dir))
		return 0;
	if (!rdmarw__dma_map_entries(sg, nents))
		return 0;
	rdmarw__dma_mapped_add(dev, nents);
	return nents;
}

/* ib_dma_unmap_sg(). */
static inline void rdmarw__dma_unmap_sg(struct ib_device *dev,
					struct scatterlist *sg, int nents)
{
	if (!dev || !sg || nents <= 0)
		return;
	rdmarw__dma_mapped_add(dev, -nents);
}

#endif /* RDMARW_CORE_DMA_MAP_H */

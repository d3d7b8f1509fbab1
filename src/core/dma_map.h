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

/*
 * This thread's stripe of every device's mapped count.  On x86-64 the
 * thread pointer (%fs:0, the thread's own control block) picks it: glibc
 * puts each thread's block at the top of its own stack, whole stacks (and
 * so at least 4 KiB) apart, and bits 12-15 differ between neighbours, so
 * no per-thread variable needs setting up.  Elsewhere a thread takes one
 * round-robin at its first count (dma.c).
 */
#if defined(__x86_64__)
static inline unsigned int rdmarw__dma_stripe_of_thread(void)
{
	unsigned long tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (unsigned int)(tp >> 12) % RDMARW_DMA_STRIPES;
}
#else
extern __thread unsigned int rdmarw__dma_stripe
	__attribute__((tls_model("initial-exec")));
unsigned int rdmarw__dma_stripe_take(void);

static inline unsigned int rdmarw__dma_stripe_of_thread(void)
{
	unsigned int s = rdmarw__dma_stripe;

	if (__builtin_expect(!s, 0))
		s = rdmarw__dma_stripe_take();
	return s - 1;
}
#endif

/*
 * Count @n entries mapped (or unmapped, @n < 0) in this thread's stripe:
 * threads on different stripes write different cache lines, so QPs on
 * many threads share no counter.  Atomic because threads may share a
 * stripe; rdmarw_dma_mapped() sums them.
 */
static inline void rdmarw__dma_mapped_add(struct ib_device *dev, long n)
{
	__atomic_add_fetch(&dev->dma_mapped[rdmarw__dma_stripe_of_thread()].n,
			   n, __ATOMIC_RELAXED);
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

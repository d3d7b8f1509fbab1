/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Scatterlists in the kernel's shape.  User space has no struct page: a page
 * is named by its page-aligned virtual address, so "struct page *" is an
 * opaque pointer whose value is that address (virt_to_page, page_address).
 */
#ifndef RDMARW_SCATTERLIST_H
#define RDMARW_SCATTERLIST_H

#include <rdmarw/compat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: a struct page pointer is the page's aligned virtual address. */
struct page;

/**
 * virt_to_page() - the page that holds a virtual address
 * @addr: any address
 *
 * Return: the page-aligned address below @addr, as a struct page pointer.
 */
static inline struct page *virt_to_page(const void *addr)
{
	return (struct page *)((uintptr_t)addr & PAGE_MASK);
}

/**
 * page_address() - the virtual address of a page
 * @page: a page from virt_to_page()
 *
 * Return: the first byte of the page.
 */
static inline void *page_address(const struct page *page)
{
	return (void *)page;
}

#define SG_CHAIN 0x01UL
#define SG_END 0x02UL
#define SG_PAGE_LINK_MASK (SG_CHAIN | SG_END)

/**
 * struct scatterlist - one entry of a scatter/gather list
 * @page_link: page address, or the next array when the entry is a chain link;
 *             the low bits mark a chain link or the last entry
 * @offset: offset of the data in the page (may exceed PAGE_SIZE)
 * @length: bytes of data
 * @dma_address: device address after ib_dma_map_sg()
 * @dma_length: device length after ib_dma_map_sg()
 */
struct scatterlist {
	unsigned long page_link;
	unsigned int offset;
	unsigned int length;
	dma_addr_t dma_address;
	unsigned int dma_length;
};

/**
 * struct sg_table - a scatterlist and its counts
 * @sgl: first entry
 * @nents: entries mapped for DMA
 * @orig_nents: entries in the list
 */
struct sg_table {
	struct scatterlist *sgl;
	unsigned int nents;
	unsigned int orig_nents;
};

#define sg_dma_address(sg) ((sg)->dma_address)
#define sg_dma_len(sg) ((sg)->dma_length)

/**
 * sg_is_chain() - is an entry a link to another array
 * @sg: the entry
 *
 * Return: true for a chain link (set by sg_chain()), which holds no data.
 */
static inline bool sg_is_chain(const struct scatterlist *sg)
{
	return sg->page_link & SG_CHAIN;
}

/**
 * sg_is_last() - is an entry the last of its list
 * @sg: the entry
 *
 * Return: true when the entry carries the end mark.
 */
static inline bool sg_is_last(const struct scatterlist *sg)
{
	return sg->page_link & SG_END;
}

/**
 * sg_chain_ptr() - the array a chain link points to
 * @sg: a chain link
 *
 * Return: the first entry of the next array.
 */
static inline struct scatterlist *sg_chain_ptr(const struct scatterlist *sg)
{
	return (struct scatterlist *)(sg->page_link & ~SG_PAGE_LINK_MASK);
}

/**
 * sg_page() - the page of an entry
 * @sg: a data entry (not a chain link)
 *
 * Return: the page pointer set by sg_set_page() or sg_set_buf().
 */
static inline struct page *sg_page(const struct scatterlist *sg)
{
	return (struct page *)(sg->page_link & ~SG_PAGE_LINK_MASK);
}

/**
 * sg_virt() - the virtual address of an entry's data
 * @sg: a data entry
 *
 * Return: page address plus offset.
 */
static inline void *sg_virt(const struct scatterlist *sg)
{
	return (char *)page_address(sg_page(sg)) + sg->offset;
}

/**
 * sg_assign_page() - set an entry's page, keeping its chain and end marks
 * @sg: the entry
 * @page: a page-aligned address as struct page pointer
 */
static inline void sg_assign_page(struct scatterlist *sg, struct page *page)
{
	sg->page_link =
		(sg->page_link & SG_PAGE_LINK_MASK) | (unsigned long)page;
}

/**
 * sg_set_page() - describe data in a page
 * @sg: the entry
 * @page: the page (page-aligned address)
 * @len: bytes of data
 * @offset: where the data starts in the page
 */
static inline void sg_set_page(struct scatterlist *sg, struct page *page,
			       unsigned int len, unsigned int offset)
{
	sg_assign_page(sg, page);
	sg->offset = offset;
	sg->length = len;
}

/**
 * sg_set_buf() - describe a buffer
 * @sg: the entry
 * @buf: first byte of the buffer
 * @buflen: bytes in the buffer
 */
static inline void sg_set_buf(struct scatterlist *sg, const void *buf,
			      unsigned int buflen)
{
	sg_set_page(sg, virt_to_page(buf), buflen,
		    (unsigned int)((uintptr_t)buf & ~PAGE_MASK));
}

/**
 * sg_mark_end() - make an entry the last of its list
 * @sg: the entry
 */
static inline void sg_mark_end(struct scatterlist *sg)
{
	sg->page_link |= SG_END;
	sg->page_link &= ~SG_CHAIN;
}

/**
 * sg_unmark_end() - clear an entry's end mark
 * @sg: the entry
 */
static inline void sg_unmark_end(struct scatterlist *sg)
{
	sg->page_link &= ~SG_END;
}

/**
 * sg_chain() - link the last slot of one array to another array
 * @prv: the first array
 * @prv_nents: slots in @prv; its last slot becomes the link, not data
 * @sgl: the array that follows
 */
static inline void sg_chain(struct scatterlist *prv, unsigned int prv_nents,
			    struct scatterlist *sgl)
{
	struct scatterlist *link = &prv[prv_nents - 1];

	link->offset = 0;
	link->length = 0;
	link->page_link = ((unsigned long)sgl | SG_CHAIN) & ~SG_END;
}

/**
 * sg_next() - the entry after @sg, following chain links
 * @sg: the current entry
 *
 * Return: the next data entry, or NULL when @sg is the last.
 */
static inline struct scatterlist *sg_next(struct scatterlist *sg)
{
	if (sg_is_last(sg))
		return NULL;
	sg++;
	/* a chain link is rare: the walk stays short without it */
	if (__builtin_expect(sg_is_chain(sg), 0))
		sg = sg_chain_ptr(sg);
	return sg;
}

#define for_each_sg(sglist, sg, nr, __i) \
	for (__i = 0, sg = (sglist); __i < (nr); __i++, sg = sg_next(sg))

#define for_each_sgtable_sg(sgt, sg, i) \
	for_each_sg((sgt)->sgl, sg, (sgt)->orig_nents, i)
#define for_each_sgtable_dma_sg(sgt, sg, i) \
	for_each_sg((sgt)->sgl, sg, (sgt)->nents, i)

/**
 * sg_init_table() - clear an array of entries and mark its last entry
 * @sgl: the array
 * @nents: entries in it (0 does nothing)
 */
void sg_init_table(struct scatterlist *sgl, unsigned int nents);

/**
 * sg_init_one() - a one-entry list describing a buffer
 * @sg: the entry
 * @buf: the buffer
 * @buflen: its length
 */
void sg_init_one(struct scatterlist *sg, const void *buf, unsigned int buflen);

/**
 * sg_nents() - count the data entries of a list
 * @sg: first entry
 *
 * Return: entries up to and including the one marked last; 0 for NULL.
 */
int sg_nents(struct scatterlist *sg);

/**
 * sg_last() - the last data entry of a list
 * @sgl: first entry
 * @nents: entries in the list
 *
 * Return: the @nents-th entry, following chain links, or NULL if the list
 * ends early or @nents is 0.
 */
struct scatterlist *sg_last(struct scatterlist *sgl, unsigned int nents);

/**
 * sg_alloc_table() - allocate a list of @nents entries
 * @table: filled in; sgl is the first entry
 * @nents: entries wanted; the arrays are chained when @nents is large
 * @gfp_mask: ignored in user space (kept for the kernel's signature)
 *
 * Return: 0, -EINVAL for @nents 0 or a NULL @table, -ENOMEM.  On error
 * nothing stays allocated.
 */
int sg_alloc_table(struct sg_table *table, unsigned int nents,
		   unsigned int gfp_mask);

/**
 * sg_free_table() - free what sg_alloc_table() allocated
 * @table: the table; NULL or an empty table does nothing
 */
void sg_free_table(struct sg_table *table);

/**
 * sg_pcopy_to_buffer() - copy from a scatterlist into a buffer
 * @sgl: the list
 * @nents: entries to walk at most
 * @buf: destination
 * @buflen: bytes to copy at most
 * @skip: bytes of the list to skip first
 *
 * Return: bytes copied (less than @buflen when the list ends first).
 */
size_t sg_pcopy_to_buffer(struct scatterlist *sgl, unsigned int nents,
			  void *buf, size_t buflen, size_t skip);

/**
 * sg_pcopy_from_buffer() - copy from a buffer into a scatterlist
 * @sgl: the list
 * @nents: entries to walk at most
 * @buf: source
 * @buflen: bytes to copy at most
 * @skip: bytes of the list to skip first
 *
 * Return: bytes copied (less than @buflen when the list ends first).
 */
size_t sg_pcopy_from_buffer(struct scatterlist *sgl, unsigned int nents,
			    const void *buf, size_t buflen, size_t skip);

/**
 * sg_copy_to_buffer() - copy from the start of a scatterlist into a buffer
 * @sgl: the list
 * @nents: entries to walk at most
 * @buf: destination
 * @buflen: bytes to copy at most
 *
 * Return: bytes copied.
 */
size_t sg_copy_to_buffer(struct scatterlist *sgl, unsigned int nents, void *buf,
			 size_t buflen);

/**
 * sg_copy_from_buffer() - copy a buffer into the start of a scatterlist
 * @sgl: the list
 * @nents: entries to walk at most
 * @buf: source
 * @buflen: bytes to copy at most
 *
 * Return: bytes copied.
 */
size_t sg_copy_from_buffer(struct scatterlist *sgl, unsigned int nents,
			   const void *buf, size_t buflen);

#ifndef GFP_KERNEL
#define GFP_KERNEL 0U
#define GFP_ATOMIC 0U
#endif
#ifndef __GFP_ZERO
/* The one allocation flag rdmarw acts on: zero the memory (sgl_alloc()). */
#define __GFP_ZERO 0x100U
#endif

/**
 * sgl_alloc_order() - allocate a scatterlist and the memory it describes
 * @length: bytes, at least 1
 * @order: each entry is a block of 2^@order pages (0 .. 10)
 * @chainable: allocate one entry more, left empty and marked last, that the
 *             caller may turn into a chain link with sg_chain()
 * @gfp: __GFP_ZERO zeroes the blocks; the other GFP flags are accepted and
 *       ignored (user space has no allocation contexts)
 * @nent_p: set to the entries that hold memory, or NULL
 *
 * One array of entries (never chained), each describing a page-aligned
 * block of PAGE_SIZE << @order bytes at offset 0; the last holds the rest
 * of @length.  Without __GFP_ZERO the contents are undefined, as in the
 * kernel.
 *
 * Return: the list, or NULL for @length 0, an @order above 10, more entries
 * than an unsigned int counts, or when memory runs out (nothing stays
 * allocated then).  Free it with sgl_free_order() and the same @order.
 */
struct scatterlist *sgl_alloc_order(unsigned long long length,
				    unsigned int order, bool chainable,
				    unsigned int gfp, unsigned int *nent_p);

/**
 * sgl_alloc() - allocate a scatterlist of single pages
 * @length: bytes, at least 1
 * @gfp: as for sgl_alloc_order()
 * @nent_p: set to the number of entries, or NULL
 *
 * sgl_alloc_order() with order 0 and no spare entry.
 *
 * Return: the list, or NULL (as sgl_alloc_order()).  Free it with
 * sgl_free().
 */
struct scatterlist *sgl_alloc(unsigned long long length, unsigned int gfp,
			      unsigned int *nent_p);

/**
 * sgl_free_n_order() - free the first entries' memory and the list
 * @sgl: a list from sgl_alloc_order(), or NULL (nothing is done)
 * @nents: entries whose memory is freed, at most (the walk also stops at
 *         the entry marked last)
 * @order: the order given to sgl_alloc_order()
 *
 * The list itself is freed in every case; memory of entries past @nents is
 * not (the caller keeps or frees it).
 */
void sgl_free_n_order(struct scatterlist *sgl, int nents, int order);

/**
 * sgl_free_order() - free a list from sgl_alloc_order() and its memory
 * @sgl: the list, or NULL
 * @order: the order it was allocated with
 */
void sgl_free_order(struct scatterlist *sgl, int order);

/**
 * sgl_free() - free a list from sgl_alloc() and its memory
 * @sgl: the list, or NULL
 */
void sgl_free(struct scatterlist *sgl);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_SCATTERLIST_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * bio_vec arrays and their iterator, in the kernel's shape.  A page is its
 * page-aligned virtual address (see scatterlist.h).
 */
#ifndef RDMARW_BVEC_H
#define RDMARW_BVEC_H

#include <rdmarw/scatterlist.h>

/**
 * struct bio_vec - a contiguous piece of memory
 * @bv_page: first page (page-aligned address)
 * @bv_len: bytes
 * @bv_offset: offset of the data from @bv_page (may exceed PAGE_SIZE:
 *             a multi-page vector)
 */
struct bio_vec {
	struct page *bv_page;
	unsigned int bv_len;
	unsigned int bv_offset;
};

/**
 * struct bvec_iter - a position in an array of bio_vecs
 * @bi_sector: device sector (carried, not used here)
 * @bi_size: bytes left
 * @bi_idx: current vector
 * @bi_bvec_done: bytes already consumed in the current vector
 */
struct bvec_iter {
	sector_t bi_sector;
	unsigned int bi_size;
	unsigned int bi_idx;
	unsigned int bi_bvec_done;
};

/**
 * bvec_phys() - the address of a vector's first byte
 * @bv: the vector
 *
 * Return: page address plus offset, as a phys_addr_t.
 */
static inline phys_addr_t bvec_phys(const struct bio_vec *bv)
{
	return (phys_addr_t)(uintptr_t)bv->bv_page + bv->bv_offset;
}

/**
 * bvec_set_virt() - describe a buffer
 * @bv: the vector
 * @vaddr: first byte
 * @len: bytes
 */
static inline void bvec_set_virt(struct bio_vec *bv, void *vaddr,
				 unsigned int len)
{
	bv->bv_page = virt_to_page(vaddr);
	bv->bv_offset = (unsigned int)((uintptr_t)vaddr & ~PAGE_MASK);
	bv->bv_len = len;
}

#define mp_bvec_iter_len(bvec, iter)                                           \
	((iter).bi_size < (bvec)[(iter).bi_idx].bv_len - (iter).bi_bvec_done ? \
		 (iter).bi_size :                                              \
		 (bvec)[(iter).bi_idx].bv_len - (iter).bi_bvec_done)
#define mp_bvec_iter_offset(bvec, iter) \
	((bvec)[(iter).bi_idx].bv_offset + (iter).bi_bvec_done)

/*
 * mp_bvec_iter_bvec() - the (multi-page) vector at the iterator's position,
 * clipped to what is left.
 */
#define mp_bvec_iter_bvec(bvec, iter)                             \
	((struct bio_vec){                                        \
		.bv_page = (bvec)[(iter).bi_idx].bv_page,         \
		.bv_len = mp_bvec_iter_len((bvec), (iter)),       \
		.bv_offset = mp_bvec_iter_offset((bvec), (iter)), \
	})

/**
 * bvec_iter_advance() - move an iterator forward
 * @bv: the vector array
 * @iter: the iterator
 * @bytes: how far
 *
 * Return: true; false (iterator left at its end) if @bytes is more than is
 * left, as the kernel does after its warning.
 */
static inline bool bvec_iter_advance(const struct bio_vec *bv,
				     struct bvec_iter *iter, unsigned int bytes)
{
	unsigned int idx = iter->bi_idx;

	if (bytes > iter->bi_size) {
		iter->bi_size = 0;
		return false;
	}
	iter->bi_size -= bytes;
	bytes += iter->bi_bvec_done;
	while (bytes && bytes >= bv[idx].bv_len) {
		bytes -= bv[idx].bv_len;
		idx++;
	}
	iter->bi_idx = idx;
	iter->bi_bvec_done = bytes;
	return true;
}

#define for_each_mp_bvec(bvl, bio_vec, iter, start)             \
	for (iter = (start);                                    \
	     (iter).bi_size &&                                  \
	     ((bvl = mp_bvec_iter_bvec((bio_vec), (iter))), 1); \
	     bvec_iter_advance((bio_vec), &(iter), (bvl).bv_len))

#endif /* RDMARW_BVEC_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Signature offload of the software device (soft_sig.c): the state of an
 * integrity MR and the hooks through which the rest of the device reaches
 * it.  Private to src/soft.
 *
 * An integrity MR keeps its data and protection lists in the soft_mr page
 * lists, one after the other: map[0 .. data_n) are the data elements,
 * map[data_n .. data_n + meta_n) the protection elements, each list with its
 * own byte numbering (soft_seg.off from 0).  REG_MR_INTEGRITY snapshots
 * them into reg[] with the attributes, as REG_MR does.  Once registered the
 * MR is zero based and exposes the wire view of the data: soft_mr.iova 0,
 * soft_mr.length the bytes on the wire.
 */
#ifndef RDMARW_SOFT_SIG_H
#define RDMARW_SOFT_SIG_H

#include "soft/soft_access.h"

/**
 * struct soft_sig_mr - an integrity MR's signature state (soft_mr.sig)
 * @lock: @err, @err_exists (taken by transfers and ib_check_mr_status())
 * @checked: ib_check_mr_status() ran since the last REG_MR_INTEGRITY was
 *           posted (mlx5's sig_status_checked; atomic)
 * @err_exists: @err holds an unreported error
 * @err: the last error found
 * @map_data_n: data elements in soft_mr.map
 * @map_meta_n: protection elements after them
 * @map_data_len: data bytes mapped
 * @map_meta_len: protection bytes mapped
 * @reg_data_n: data elements in soft_mr.reg (registration)
 * @reg_meta_n: protection elements after them
 * @attrs: the attributes registered
 * @interval: data bytes per block (0: no domain has PI)
 * @wblk: bytes per block on the wire (interval, plus 8 with wire PI)
 * @nblocks: blocks registered
 * @data_len: data bytes registered
 */
struct soft_sig_mr {
	struct soft_spin lock;
	bool checked;
	bool err_exists;
	struct ib_sig_err err;
	u32 map_data_n;
	u32 map_meta_n;
	u64 map_data_len;
	u64 map_meta_len;
	u32 reg_data_n;
	u32 reg_meta_n;
	struct ib_sig_attrs attrs;
	u32 interval;
	u32 wblk;
	u64 nblocks;
	u64 data_len;
};

/* Allocate / free soft_mr.sig (integrity MRs). */
int rdmarw__soft_sig_mr_init(struct soft_mr *mr);
void rdmarw__soft_sig_mr_fini(struct soft_mr *mr);

/* Provider ops. */
int rdmarw__soft_map_mr_sg_pi(struct ib_mr *mr, struct scatterlist *data_sg,
			      int data_sg_nents, unsigned int *data_sg_offset,
			      struct scatterlist *meta_sg, int meta_sg_nents,
			      unsigned int *meta_sg_offset);
int rdmarw__soft_check_mr_status(struct ib_mr *mr, u32 check_mask,
				 struct ib_mr_status *mr_status);

/*
 * Posting IB_WR_REG_MR_INTEGRITY (sq_lock held): the checks mlx5's
 * set_pi_umr_wr() makes.  Return: 0 or -EINVAL.  Once the WR is queued,
 * rdmarw__soft_sig_posted() clears the MR's checked flag.
 */
int rdmarw__soft_sig_post_check(struct soft_qp *qp,
				const struct ib_send_wr *wr);
void rdmarw__soft_sig_posted(const struct ib_send_wr *wr);

/* Execute REG_MR_INTEGRITY (mem_lock held, write).  0 or -EINVAL. */
int rdmarw__soft_sig_register(struct soft_qp *qp, u32 index, u64 serial,
			      u32 key, int access);

/*
 * An access of @len bytes at @addr through the registered integrity MR
 * @mr, already range checked (mem_lock held): whole wire blocks, and every
 * element translatable.  Return: 0 or -EACCES.
 */
int rdmarw__soft_sig_access(const struct soft_mr *mr, u64 addr, u64 len);

/*
 * A region list with an integrity MR in it may hold only that region
 * (soft_sgl_check refuses the others).
 */
static inline bool soft_regions_sig(const struct soft_region *rg, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (rg[i].mr && rg[i].mr->sig)
			return true;
	return false;
}

/* The copy when either side is an integrity region (mem_lock held).
 * Return: 0, or -ENOMEM when the bounce buffer of a copy between two
 * integrity MRs cannot be allocated (no byte moved). */
int rdmarw__soft_sig_copy(const struct soft_region *src, u32 nsrc,
			  const struct soft_region *dst, u32 ndst, u64 len);

/*
 * The hook of rdmarw__soft_copy(): 1 when the copy went through an
 * integrity MR and is done, 0 when no integrity MR is involved, or
 * -ENOMEM (nothing moved).
 */
static inline int soft_sig_copy(const struct soft_region *src, u32 nsrc,
				const struct soft_region *dst, u32 ndst,
				u64 len)
{
	if (__builtin_expect(!soft_regions_sig(src, nsrc) &&
				     !soft_regions_sig(dst, ndst),
			     1))
		return 0;
	return rdmarw__soft_sig_copy(src, nsrc, dst, ndst, len) ?: 1;
}

/* ---- guards (also used by the tests through the private headers) ------ */

/* CRC-16/T10-DIF of @len bytes, continuing from @crc (ISA-L). */
u16 rdmarw__soft_sig_crc(u16 crc, const u8 *buf, u64 len);

/*
 * The IP checksum guard of @len bytes: ones' complement of the ones'
 * complement sum of big-endian 16-bit words, with @seed added.
 */
u16 rdmarw__soft_sig_csum(u16 seed, const u8 *buf, u64 len);

#endif /* RDMARW_SOFT_SIG_H */

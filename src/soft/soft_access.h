/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every access check of the software device, each rule written once (the
 * device's security checks: a rule with a twin is a fix waiting to miss
 * one copy).  The requester, the responder and the completer all check
 * through these functions; nothing else in src/soft decides whether a
 * byte may be touched.
 *
 * The rules, in the order an access meets them:
 * - soft_dma_range_ok(): a DMA range neither wraps nor touches the NULL
 *   page (every address the device translates, SGE or page list element);
 * - soft_dma_key_grants(): the local DMA key grants local rights only;
 * - soft_mr_check(): an MR's key (index and variant), state, PD, rights
 *   and bounds (rxe's lookup_mr() + mr_check_range(), siw's
 *   siw_check_mem());
 * - soft_resp_ready(), soft_resp_grants(): the responder QP answers
 *   (RTR, RTS, SQD) and grants the operation (qp_access_flags);
 * - soft_read_sink_access(): what a READ's sink must grant (iWARP: remote
 *   write too);
 * - soft_reg_access_ok(): the rights a registration may give.
 *
 * The checks that the data path needs are inline.  What they cannot
 * answer alone (walking a fast MR's page list, the IOMMU, an integrity
 * MR's block rule) is an out-of-line tail that continues from the
 * checked state and repeats none of the checks (soft_access.c,
 * soft_iommu.c, soft_sig.c).
 *
 */
#ifndef RDMARW_SOFT_ACCESS_H
#define RDMARW_SOFT_ACCESS_H

#include "soft/soft_proto.h"

/* The checks of the data path are inlined into it whatever the compiler's
 * size heuristics say: one call per check is what they exist to avoid. */
#define soft_check_inline static inline __attribute__((always_inline))

/* ---- rule: NULL page and wrap ------------------------------------------ */

/*
 * A DMA range the device may translate: it does not wrap, and a CPU
 * address (not an IOVA) is not in the NULL page, which is nobody's memory.
 * An empty range touches no byte and passes.
 */
static inline bool soft_dma_range_ok(u64 addr, u64 len)
{
	if (!len)
		return true;
	if (addr + len < addr)
		return false;
	return (addr & SOFT_IOVA_BIT) || addr >= PAGE_SIZE;
}

/*
 * Translate a DMA address: the rule above, then a CPU address is itself
 * (every byte) and an IOVA goes through the emulated IOMMU, page by page
 * (rdmarw__soft_iova_to_cpu(), which checks nothing again).  @n gets the
 * bytes available contiguously (at most @len).
 * Return: 0, or -EFAULT.
 */
int rdmarw__soft_iova_to_cpu(struct soft_dev *sdev, u64 addr, u64 len, u8 **ptr,
			     u64 *n);

soft_check_inline int soft_dma_to_cpu(struct soft_dev *sdev, u64 addr, u64 len,
				      u8 **ptr, u64 *n)
{
	if (!soft_dma_range_ok(addr, len))
		return -EFAULT;
	if (addr & SOFT_IOVA_BIT)
		return rdmarw__soft_iova_to_cpu(sdev, addr, len, ptr, n);
	*ptr = (u8 *)(uintptr_t)addr;
	*n = len;
	return 0;
}

/* ---- rule: the local DMA key ------------------------------------------- */

/* The local DMA key reaches all memory, with local rights only. */
static inline bool soft_dma_key_grants(int access)
{
	return !(access & ~IB_ACCESS_LOCAL_WRITE);
}

/* Every byte of a checked region translates (soft_access.c): the tail of
 * the checks below for IOVAs and fast MRs.  0 or -EACCES. */
int rdmarw__soft_region_walk(const struct soft_region *rg);

/*
 * An SGE under the local DMA key: its rights, then its range.  A CPU
 * range is answered here; an IOVA range is walked through the IOMMU.
 * Return: 0 and @out filled, or -EACCES.
 */
soft_check_inline int soft_dma_key_check(struct soft_dev *sdev, u64 addr,
					 u64 len, int access,
					 struct soft_region *out)
{
	if (!soft_dma_key_grants(access) || !soft_dma_range_ok(addr, len))
		return -EACCES;
	out->dev = sdev;
	out->mr = NULL;
	out->addr = addr;
	out->len = len;
	if (addr & SOFT_IOVA_BIT) {
		out->cpu = NULL;
		return rdmarw__soft_region_walk(out);
	}
	out->cpu = (u8 *)(uintptr_t)addr;
	return 0;
}

/* ---- rule: an MR's key, state, PD, rights and bounds -------------------- */

/* Key table lookups (fabric->mem_lock held). */
static inline struct soft_mr **soft_kt_chain(struct soft_keytab *kt, u32 index)
{
	return &kt->bucket[index & kt->mask];
}

static inline struct soft_mr *soft_kt_find(struct soft_keytab *kt, u32 index)
{
	struct soft_mr *mr;

	for (mr = *soft_kt_chain(kt, index); mr; mr = mr->hnext)
		if (mr->index == index)
			return mr;
	return NULL;
}

/*
 * An MR's state, read before anything REG_MR writes (acquire: it pairs
 * with rdmarw__soft_mr_register()'s release, which no reader waits for).
 */
static inline enum soft_mr_state soft_mr_state(const struct soft_mr *mr)
{
	/* seq_cst: an invalidation's grace period (soft_br_grace_mask())
	 * pairs its store of FREE with this load, the section's entry and
	 * its bit in the MR (soft_mr_mark()) */
	return __atomic_load_n(&mr->state, __ATOMIC_SEQ_CST);
}

/*
 * Record that the section in progress uses @mr, before its state is
 * loaded: an invalidation's grace period waits for the sections of the
 * indicators in @mr->readers only (soft_br_grace_mask()).  Once a bit is
 * in, a load and a test; the first time, a locked OR (seq_cst: before the
 * state load in the single total order).
 */
static inline void soft_mr_mark(struct soft_mr *mr)
{
	u64 bit = rdmarw__soft_br_bit;

	if (__builtin_expect(
		    !(__atomic_load_n(&mr->readers, __ATOMIC_ACQUIRE) & bit),
		    0))
		__atomic_fetch_or(&mr->readers, bit, __ATOMIC_SEQ_CST);
}

/* What an MR key is checked as. */
enum soft_lookup {
	SOFT_LOOKUP_LOCAL, /* an lkey of an SGE */
	SOFT_LOOKUP_REMOTE, /* an rkey */
};

/*
 * The tail of soft_mr_check() for a fast MR that passed it (soft_access.c):
 * an integrity MR's whole-block rule, or every byte of the page list
 * translatable.  Nothing already checked is checked again.  0 or -EACCES.
 */
int rdmarw__soft_mr_check_tail(struct soft_mr *mr, struct soft_region *out);

/*
 * The one MR check (rxe's lookup_mr(), siw's siw_check_mem()): the MR of
 * the key's index, the whole key (index and variant: siw compares the
 * whole STag on data access too) as the lkey or the rkey, the QP's PD,
 * the rights asked for a subset of the MR's, state VALID, and the range
 * inside the MR without overflow.  A user MR is pinned and contiguous and
 * answered here; a fast MR continues in rdmarw__soft_mr_check_tail().
 * Index 0 is never an MR, so the local DMA key never passes as an rkey.
 * Call with mem_lock held (read).
 * Return: 0 and @out filled, or -EACCES.
 */
soft_check_inline int soft_mr_check(struct soft_dev *sdev, struct ib_pd *pd,
				    u32 key, u64 addr, u64 len, int access,
				    enum soft_lookup type,
				    struct soft_region *out)
{
	struct soft_mr *mr = soft_kt_find(&sdev->keys, SOFT_KEY_INDEX(key));

	/* The section's bit in the MR, then the state, with acquire: REG_MR
	 * publishes the rest with it and excludes no reader.  The bounds
	 * (rxe's mr_check_range()) in two unsigned comparisons that cannot
	 * overflow: an @addr below the MR's start makes addr - iova wrap to
	 * more than any length. */
	if (!mr)
		return -EACCES;
	soft_mr_mark(mr);
	if (soft_mr_state(mr) != SOFT_MR_VALID ||
	    (type == SOFT_LOOKUP_LOCAL ? mr->lkey : mr->rkey) != key ||
	    mr->ibmr.pd != pd || (mr->access & access) != access ||
	    len > mr->length || addr - mr->iova > mr->length - len)
		return -EACCES;
	out->dev = sdev;
	out->mr = mr;
	out->addr = addr;
	out->len = len;
	if (!mr->fast) {
		out->cpu = (u8 *)(uintptr_t)(mr->umem + (addr - mr->iova));
		return 0;
	}
	out->cpu = NULL;
	return rdmarw__soft_mr_check_tail(mr, out);
}

/* Why soft_mr_check() refused a remote key: what a TERMINATE reports. */
enum soft_rkey_why {
	SOFT_RKEY_STAG, /* no such key, or not valid */
	SOFT_RKEY_BOUNDS, /* the range is not inside the MR */
	SOFT_RKEY_ACCESS, /* the MR does not grant the right */
	SOFT_RKEY_PD, /* the MR is of another PD */
};

/* The reason of a refusal of soft_mr_check(..., SOFT_LOOKUP_REMOTE, ...)
 * with the same arguments (mem_lock held, read), in its order. */
static inline enum soft_rkey_why
soft_rkey_why(struct soft_dev *sdev, struct ib_pd *pd, u32 key, int access)
{
	struct soft_mr *mr = soft_kt_find(&sdev->keys, SOFT_KEY_INDEX(key));

	if (!mr || soft_mr_state(mr) != SOFT_MR_VALID || mr->rkey != key)
		return SOFT_RKEY_STAG;
	if (mr->ibmr.pd != pd)
		return SOFT_RKEY_PD;
	if ((mr->access & access) != access)
		return SOFT_RKEY_ACCESS;
	return SOFT_RKEY_BOUNDS;
}

/* An lkey: the local DMA key, or an MR's lkey. */
soft_check_inline int soft_lkey_check(struct soft_dev *sdev, struct ib_pd *pd,
				      const struct ib_sge *sge, int access,
				      struct soft_region *out)
{
	if (sge->lkey == SOFT_LOCAL_DMA_LKEY)
		return soft_dma_key_check(sdev, sge->addr, sge->length, access,
					  out);
	return soft_mr_check(sdev, pd, sge->lkey, sge->addr, sge->length,
			     access, SOFT_LOOKUP_LOCAL, out);
}

/*
 * The SGEs of a WR checked with @access: empty ones are skipped with
 * their key unchecked (rxe's copy_data()), and an integrity MR must be
 * the only region of its WR (soft_sig.c).  One SGE, the common case, is
 * inline; a list goes to rdmarw__soft_sgl_check(), which runs the same
 * per-SGE check.  mem_lock held (read).
 * Return: 0 and @nout regions in @out, or -EACCES.
 */
int rdmarw__soft_sgl_check(struct soft_dev *sdev, struct ib_pd *pd,
			   const struct ib_sge *sge, u32 n, int access,
			   struct soft_region *out, u32 *nout);

soft_check_inline int soft_sgl_check(struct soft_dev *sdev, struct ib_pd *pd,
				     const struct ib_sge *sge, u32 n,
				     int access, struct soft_region *out,
				     u32 *nout)
{
	int ret;

	if (n != 1 || !sge->length)
		return rdmarw__soft_sgl_check(sdev, pd, sge, n, access, out,
					      nout);
	ret = soft_lkey_check(sdev, pd, sge, access, out);
	*nout = 1;
	return ret;
}

/* ---- rules of the responder QP ----------------------------------------- */

/* The responder answers in RTR, RTS and SQD (else the requester retries). */
static inline bool soft_resp_ready(struct soft_qp *qp)
{
	enum ib_qp_state s = soft_qp_state(qp);

	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD;
}

/* The responder QP accepts @op: its qp_access_flags hold the right the
 * opcode needs (none for a SEND). */
static inline bool soft_resp_grants(struct soft_qp *qp,
				    const struct soft_opcode *op)
{
	return !(op->rem_access & ~soft_load(&qp->access_flags));
}

/* ---- rules of local memory by role ------------------------------------- */

/*
 * What a READ's sink must grant: LOCAL_WRITE, and on iWARP REMOTE_WRITE as
 * well, since the Read Response is a tagged message written into the sink
 * STag (RFC 5040; the kernel's rw.c registers iWARP sinks with it).  So
 * the local DMA key, local rights only, cannot be an iWARP sink.
 */
static inline int soft_read_sink_access(const struct soft_qp *qp)
{
	return IB_ACCESS_LOCAL_WRITE |
	       (qp->dev->iwarp ? IB_ACCESS_REMOTE_WRITE : 0);
}

/* IBA: a registration's remote write or atomic rights need local write. */
static inline bool soft_reg_access_ok(int access)
{
	return !(access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) ||
	       (access & IB_ACCESS_LOCAL_WRITE);
}

#endif /* RDMARW_SOFT_ACCESS_H */

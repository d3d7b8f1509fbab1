// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions and keys.
 *
 * Every MR has a 24-bit index, allocated cyclically from a random start as
 * siw does (siw_mem_add), and an 8-bit variant.  The device keeps its own
 * copy of the keys (the ib_mr fields are the caller's view, changed by
 * ib_update_fast_reg_key() before a REG_MR is posted): user MRs get
 * lkey = index << 8 | random variant and rkey = lkey only with a remote
 * right (rxe_mr_init); fast-registration MRs start FREE with lkey = rkey
 * and take the REG_MR's key when it executes.
 *
 * A fast-registration MR has two page lists: the one ib_map_mr_sg() fills
 * and the one REG_MR snapshotted with the iova, length, rights and key.  So
 * a registration never changes under a transfer, and remapping a valid MR
 * does not touch the memory it exposes.
 *
 * Page lists follow the profile's device: rxe and mlx5 hand
 * ib_sg_to_pages() a set_page that stores pages up to max_num_sg
 * (rxe_map_mr_sg); siw keeps one element per scatterlist entry, merging
 * adjacent ones, refuses more entries than max_num_sg (-ENOMEM) and empty
 * entries (-EINVAL), and only uses ib_sg_to_pages() to count, so the page
 * rules still cut the mapping at the first entry that breaks them but the
 * number of pages is unlimited (siw_map_mr_sg).
 */
#include "soft/soft_sig.h"
#include "core/mr_pages.h"

/* ---- key table (fabric->mem_lock held) --------------------------------- */

static int kt_grow(struct soft_keytab *kt)
{
	u32 oldn = kt->bucket ? kt->mask + 1 : 0, n = oldn ? oldn * 2 : 64;
	struct soft_mr **old = kt->bucket, *mr, *next;
	u32 i;

	kt->bucket = calloc(n, sizeof(*kt->bucket));
	if (!kt->bucket) {
		kt->bucket = old;
		return -ENOMEM;
	}
	kt->mask = n - 1;
	for (i = 0; i < oldn; i++) {
		for (mr = old[i]; mr; mr = next) {
			next = mr->hnext;
			mr->hnext = *soft_kt_chain(kt, mr->index);
			*soft_kt_chain(kt, mr->index) = mr;
		}
	}
	free(old);
	return 0;
}

int rdmarw__soft_keytab_init(struct soft_keytab *kt)
{
	return kt_grow(kt);
}

static int kt_insert(struct soft_keytab *kt, struct soft_mr *mr)
{
	u32 tries;

	if (kt->count > kt->mask && kt_grow(kt))
		return -ENOMEM;
	for (tries = 0; tries < SOFT_INDEX_MAX; tries++) {
		u32 index = kt->next;

		kt->next = index == SOFT_INDEX_MAX ? 1 : index + 1;
		if (soft_kt_find(kt, index))
			continue;
		mr->index = index;
		mr->hnext = *soft_kt_chain(kt, index);
		*soft_kt_chain(kt, index) = mr;
		kt->count++;
		return 0;
	}
	return -ENOMEM;
}

static void kt_remove(struct soft_keytab *kt, struct soft_mr *mr)
{
	struct soft_mr **pp = soft_kt_chain(kt, mr->index);

	while (*pp && *pp != mr)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = mr->hnext;
		kt->count--;
	}
}

struct soft_mr *rdmarw__soft_mr_find(struct soft_dev *sdev, u32 index,
				     u64 serial)
{
	struct soft_mr *mr = soft_kt_find(&sdev->keys, index);

	return mr && mr->serial == serial ? mr : NULL;
}

void rdmarw__soft_keytab_free(struct soft_keytab *kt)
{
	free(kt->bucket);
	kt->bucket = NULL;
	kt->mask = 0;
}

/* ---- creating and freeing ---------------------------------------------- */

static u32 first_key(const struct soft_mr *mr)
{
	return mr->index << 8 | (rdmarw__soft_random() & 0xffu);
}

/*
 * Enter @mr, every other field already set, in the key table; its keys are
 * set before the write side is released, so no lookup sees it without
 * them.  The rkey is the lkey with @with_rkey, else 0.
 */
static int mr_add(struct soft_mr *mr, bool with_rkey)
{
	struct soft_dev *sdev = to_sdev(mr->ibmr.device);
	struct soft_fabric *f = sdev->fabric;
	int ret = -ENOMEM;

	mr->wlock.v = 0;
	mr->readers = 0;
	soft_br_write_lock(&f->mem_lock);
	if (sdev->keys.count < (u32)sdev->ibdev.attrs.max_mr)
		ret = kt_insert(&sdev->keys, mr);
	if (!ret) {
		/* unique upper half; a retire counts in the lower one */
		mr->serial = ++sdev->mr_serial << 32;
		mr->lkey = first_key(mr);
		mr->rkey = with_rkey ? mr->lkey : 0;
	}
	soft_br_write_unlock(&f->mem_lock);
	if (!ret)
		soft_add(&sdev->stats.mrs, 1);
	return ret;
}

static int fast_mr_init(struct ib_mr *ibmr, u32 segs)
{
	struct soft_mr *mr = to_smr(ibmr);
	int ret;

	mr->fast = true;
	mr->max_segs = segs;
	mr->map = calloc(segs, sizeof(*mr->map));
	mr->reg = calloc(segs, sizeof(*mr->reg));
	if (!mr->map || !mr->reg) {
		ret = -ENOMEM;
		goto err;
	}
	/* rxe_mr_init_fast(): FREE, and the rkey set as well. */
	mr->state = SOFT_MR_FREE;
	ret = mr_add(mr, true);
	if (ret)
		goto err;
	ibmr->lkey = ibmr->rkey = mr->lkey;
	return 0;
err:
	free(mr->map);
	free(mr->reg);
	return ret;
}

/* A fault-injection rule may refuse the allocation (soft_fault.c). */
static int alloc_fault(struct ib_mr *ibmr)
{
	struct soft_dev *sdev = to_sdev(ibmr->device);

	if (!__atomic_load_n(&sdev->fault.on, __ATOMIC_RELAXED))
		return 0;
	return rdmarw__soft_fault_alloc_mr(sdev);
}

int rdmarw__soft_alloc_mr(struct ib_mr *ibmr, u32 max_num_sg)
{
	int ret = alloc_fault(ibmr);

	return ret ? ret : fast_mr_init(ibmr, max_num_sg);
}

int rdmarw__soft_alloc_mr_integrity(struct ib_mr *ibmr, u32 max_num_data_sg,
				    u32 max_num_meta_sg)
{
	int ret = alloc_fault(ibmr);

	if (!ret)
		ret = rdmarw__soft_sig_mr_init(to_smr(ibmr));
	if (ret)
		return ret;
	ret = fast_mr_init(ibmr, max_num_data_sg + max_num_meta_sg);
	if (ret)
		rdmarw__soft_sig_mr_fini(to_smr(ibmr));
	return ret;
}

#define SOFT_ACCESS_REMOTE                                \
	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
	 IB_ACCESS_REMOTE_ATOMIC)

int rdmarw__soft_reg_user_mr(struct ib_mr *ibmr, u64 start, u64 length,
			     u64 virt_addr, int access)
{
	struct soft_mr *mr = to_smr(ibmr);
	int ret;

	mr->umem = start;
	mr->iova = virt_addr;
	mr->length = length;
	mr->access = access;
	mr->state = SOFT_MR_VALID;
	ret = mr_add(mr, access & SOFT_ACCESS_REMOTE);
	if (ret)
		return ret;
	ibmr->lkey = mr->lkey;
	ibmr->rkey = mr->rkey;
	return 0;
}

int rdmarw__soft_dereg_mr(struct ib_mr *ibmr)
{
	struct soft_mr *mr = to_smr(ibmr);
	struct soft_dev *sdev = to_sdev(ibmr->device);

	/* A REG_MR still queued for it will not find it (serial).  A
	 * writer of this MR that found it before it left the key table
	 * holds its lock: the memory goes once it is done. */
	soft_br_write_lock(&sdev->fabric->mem_lock);
	kt_remove(&sdev->keys, mr);
	soft_spin_lock(&mr->wlock);
	__atomic_store_n(&mr->state, SOFT_MR_FREE, __ATOMIC_RELAXED);
	soft_spin_unlock(&mr->wlock);
	soft_br_write_unlock(&sdev->fabric->mem_lock);
	free(mr->map);
	free(mr->reg);
	rdmarw__soft_sig_mr_fini(mr);
	soft_sub(&sdev->stats.mrs, 1);
	return 0;
}

/*
 * An MR goes back to its pool (ib_mr_pool_put()): whatever happened to the
 * chain that used it (a READ_WITH_INV or LOCAL_INV flushed, a QP that died
 * after the REG_MR), its keys grant nothing from now on.  A VALID MR is
 * made FREE and waits for the sections that used it (its grace period),
 * which also waits for every access that checked it.  A FREE one (its
 * invalidation ran: the common case) has no such access left, and no
 * reader can make it VALID: it needs the MR's lock only.  A new serial
 * makes a REG_MR still queued for it fail, as if the MR had been
 * deregistered, so it cannot register the next user's pages under a key a
 * peer has already seen.  Nothing of the fabric is taken: the caller owns
 * the MR, so it is not freed meanwhile.
 */
void rdmarw__soft_retire_mr(struct ib_mr *ibmr)
{
	struct soft_mr *mr = to_smr(ibmr);
	struct soft_dev *sdev = to_sdev(ibmr->device);

	soft_spin_lock(&mr->wlock);
	if (mr->state != SOFT_MR_FREE) {
		__atomic_store_n(&mr->state, SOFT_MR_FREE, __ATOMIC_SEQ_CST);
		soft_br_grace_mask(&sdev->fabric->mem_lock, &mr->readers);
	}
	/* the lower half counts, wrapping inside it (soft_mr.serial) */
	mr->serial = (mr->serial & ~0xffffffffull) | (u32)(mr->serial + 1);
	soft_spin_unlock(&mr->wlock);
}

/* ---- page lists -------------------------------------------------------- */

static void segs_number(struct soft_seg *segs, u32 n)
{
	u64 off = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		segs[i].off = off;
		off += segs[i].len;
	}
}

/*
 * The state of a page list being built, in locals while ib_sg_to_pages()'s
 * walk runs (it is inlined here) and stored in the MR after: the next free
 * element, the pages so far, and where the last element ends (1 before
 * the first page: no page address is odd, so nothing merges into it).
 */
struct page_cursor {
	struct soft_seg *next;
	u64 psz;
	u64 last_end;
	u32 pages;
	u32 max;
};

/*
 * rxe_set_page(): one page per call until max_num_sg pages are in.  A page
 * that continues the previous one's memory extends its element, so that a
 * contiguous buffer is one element to translate and copy, however many
 * pages it has; the capacity still counts pages.
 */
static int set_page(void *arg, u64 addr)
{
	struct page_cursor *c = arg;

	if (c->pages == c->max)
		return -ENOMEM;
	c->pages++;
	if (c->last_end == addr) {
		c->next[-1].len += c->psz;
	} else {
		c->next->addr = addr;
		c->next->len = c->psz;
		c->next++;
	}
	c->last_end = addr + c->psz;
	return 0;
}

static int map_pages(struct soft_mr *mr, struct scatterlist *sg, int n,
		     unsigned int *sg_offset)
{
	struct ib_mr *ibmr = &mr->ibmr;
	struct page_cursor c = {
		.next = mr->map,
		.psz = ibmr->page_size,
		.last_end = 1,
		.max = mr->max_segs,
	};
	u64 first;
	int ret;

	/* ib_sg_to_pages() with set_page inlined: the same pages */
	ret = rdmarw__sg_to_pages(ibmr, sg, n, sg_offset, set_page, &c);
	mr->map_n = (u32)(c.next - mr->map);
	mr->map_pages = c.pages;
	if (ret <= 0 || !mr->map_n) {
		mr->map_n = 0;
		return ret;
	}
	/* The registered range starts inside the first page. */
	first = ibmr->iova & ((u64)ibmr->page_size - 1);
	mr->map[0].addr += first;
	mr->map[0].len -= first;
	segs_number(mr->map, mr->map_n);
	return ret;
}

/* siw_set_pbl_page(): only counts. */
static int count_page(void *arg, u64 addr)
{
	return 0;
}

static int map_pbl(struct soft_mr *mr, struct scatterlist *sgl, int n,
		   unsigned int *sg_offset)
{
	unsigned int skip = sg_offset ? *sg_offset : 0;
	struct scatterlist *sg;
	struct soft_seg *e = NULL;
	int i;

	if ((u32)n > mr->max_segs)
		return -ENOMEM;
	mr->map_n = 0;
	for_each_sg(sgl, sg, n, i) {
		u64 addr, len;

		if (!sg || !sg_dma_len(sg)) {
			mr->map_n = 0;
			return -EINVAL;
		}
		addr = sg_dma_address(sg) + (i ? 0 : skip);
		len = sg_dma_len(sg) - (i ? 0 : skip);
		if (e && e->addr + e->len == addr) {
			e->len += len; /* adjacent: merged */
			continue;
		}
		e = &mr->map[mr->map_n++];
		e->addr = addr;
		e->len = len;
	}
	segs_number(mr->map, mr->map_n);
	return rdmarw__sg_to_pages(&mr->ibmr, sgl, n, sg_offset, count_page,
				   NULL);
}

int rdmarw__soft_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			   int sg_nents, unsigned int *sg_offset)
{
	struct soft_mr *mr = to_smr(ibmr);

	if (!mr->fast)
		return -EINVAL;
	if (to_sdev(ibmr->device)->iwarp)
		return map_pbl(mr, sg, sg_nents, sg_offset);
	return map_pages(mr, sg, sg_nents, sg_offset);
}

/* ---- lookups and translation (mem_lock held) --------------------------- */

static const struct soft_seg *seg_find(const struct soft_mr *mr, u64 off)
{
	u32 lo = 0, hi = mr->reg_n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct soft_seg *s = &mr->reg[mid];

		if (off < s->off)
			hi = mid;
		else if (off - s->off >= s->len)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

/*
 * The segment of @mr at @off, trying *@hint and the one after it first:
 * walks go through a page list in order, so they find their segment
 * without a search.  *@hint is left at the segment found.
 */
static const struct soft_seg *seg_find_near(const struct soft_mr *mr, u64 off,
					    u32 *hint)
{
	const struct soft_seg *s = &mr->reg[*hint];

	/* off - s->off wraps for an offset before the segment: one test. */
	if (*hint < mr->reg_n && off - s->off < s->len)
		return s;
	if (*hint + 1 < mr->reg_n && off - s[1].off < s[1].len) {
		++*hint;
		return s + 1;
	}
	s = seg_find(mr, off);
	if (s)
		*hint = (u32)(s - mr->reg);
	return s;
}

int rdmarw__soft_region_span_at(const struct soft_region *rg, u64 off,
				u32 *hint, u8 **ptr, u64 *n)
{
	const struct soft_mr *mr = rg->mr;
	const struct soft_seg *s;
	u64 rest = rg->len - off, in, o;

	if (rg->cpu) {
		*ptr = rg->cpu + off;
		*n = rest;
		return 0;
	}
	if (!mr)
		return soft_dma_to_cpu(rg->dev, rg->addr + off, rest, ptr, n);
	o = rg->addr - mr->iova + off;
	if (!mr->fast) {
		*ptr = (u8 *)(uintptr_t)(mr->umem + o);
		*n = rest;
		return 0;
	}
	s = seg_find_near(mr, o, hint);
	if (!s)
		return -EFAULT;
	in = o - s->off;
	return soft_dma_to_cpu(rg->dev, s->addr + in,
			       s->len - in < rest ? s->len - in : rest, ptr, n);
}

int rdmarw__soft_region_span(const struct soft_region *rg, u64 off, u8 **ptr,
			     u64 *n)
{
	u32 hint = 0;

	return rdmarw__soft_region_span_at(rg, off, &hint, ptr, n);
}

/* Every region is CPU memory (which no integrity region is). */
static bool regions_cpu(const struct soft_region *rg, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!rg[i].cpu)
			return false;
	return true;
}

/*
 * Copies between CPU ranges (SGLs under the local DMA key or user MRs): a
 * WRITE gathers many ranges into one, a READ scatters one into many.  The
 * same spans in the same order as the general loop in rdmarw__soft_copy(),
 * without asking each region for its next span.
 */
static void copy_gather(const struct soft_region *src, u32 nsrc,
			const struct soft_region *dst, u64 len)
{
	u8 *d = dst->cpu;
	u64 room = dst->len < len ? dst->len : len, n;
	u32 i;

	for (i = 0; i < nsrc && room; i++) {
		n = src[i].len < room ? src[i].len : room;
		memmove(d, src[i].cpu, n);
		d += n;
		room -= n;
	}
}

static void copy_scatter(const struct soft_region *src,
			 const struct soft_region *dst, u32 ndst, u64 len)
{
	const u8 *p = src->cpu;
	u64 left = src->len < len ? src->len : len, n;
	u32 i;

	for (i = 0; i < ndst && left; i++) {
		n = dst[i].len < left ? dst[i].len : left;
		memmove(dst[i].cpu, p, n);
		p += n;
		left -= n;
	}
}

/*
 * One region to one region, at least one of them a page list (an RDMA
 * through an MR): both advance by the same span, so one offset walks both.
 */
static void copy_one_to_one(const struct soft_region *src,
			    const struct soft_region *dst, u64 len)
{
	u64 off = 0, sn, dn;
	u32 sh = 0, dh = 0;
	u8 *sp, *dp;

	while (off < len) {
		if (rdmarw__soft_region_span_at(src, off, &sh, &sp, &sn) ||
		    rdmarw__soft_region_span_at(dst, off, &dh, &dp, &dn))
			return; /* checked before: cannot happen */
		if (sn > dn)
			sn = dn;
		if (sn > len - off)
			sn = len - off;
		memmove(dp, sp, sn);
		off += sn;
	}
}

int rdmarw__soft_copy(const struct soft_region *src, u32 nsrc,
		      const struct soft_region *dst, u32 ndst, u64 len)
{
	u64 soff = 0, doff = 0, sn = 0, dn = 0, n;
	int ret;
	u32 si = 0, di = 0, shint = 0, dhint = 0;
	u8 *sp = NULL, *dp = NULL;

	/* One contiguous range to another: the common case (never an
	 * integrity MR: those are fast MRs, without a CPU address). */
	if (nsrc == 1 && ndst == 1 && src->cpu && dst->cpu && len <= src->len &&
	    len <= dst->len) {
		memmove(dst->cpu, src->cpu, len);
		return 0;
	}
	if (ndst == 1 && dst->cpu && regions_cpu(src, nsrc)) {
		copy_gather(src, nsrc, dst, len);
		return 0;
	}
	if (nsrc == 1 && src->cpu && regions_cpu(dst, ndst)) {
		copy_scatter(src, dst, ndst, len);
		return 0;
	}
	ret = soft_sig_copy(src, nsrc, dst, ndst, len);
	if (ret)
		return ret < 0 ? ret : 0; /* through an integrity MR */
	if (nsrc == 1 && ndst == 1 && len <= src->len && len <= dst->len) {
		copy_one_to_one(src, dst, len);
		return 0;
	}
	while (len) {
		/* The regions were checked: running out cannot happen. */
		while (!sn) {
			if (si >= nsrc)
				return 0;
			if (soff == src[si].len) {
				si++;
				soff = 0;
				shint = 0;
				continue;
			}
			if (rdmarw__soft_region_span_at(&src[si], soff, &shint,
							&sp, &sn))
				return 0;
		}
		while (!dn) {
			if (di >= ndst)
				return 0;
			if (doff == dst[di].len) {
				di++;
				doff = 0;
				dhint = 0;
				continue;
			}
			if (rdmarw__soft_region_span_at(&dst[di], doff, &dhint,
							&dp, &dn))
				return 0;
		}
		n = sn < dn ? sn : dn;
		if (n > len)
			n = len;
		memmove(dp, sp, n);
		sp += n;
		dp += n;
		sn -= n;
		dn -= n;
		soff += n;
		doff += n;
		len -= n;
	}
	return 0;
}

/* ---- registration and invalidation (the MR's lock) -------------------- */

/*
 * The MR of key index @index with its lock held, or NULL: looked up in a
 * read section of @r (the caller's own indicator, outside any section),
 * so the key table does not change under the lookup, and locked there
 * with a try: on failure the section is left before the next try, since
 * the lock's holder may be in a grace period waiting for it.  Once the
 * section is left, the MR stays: dereg takes its lock before freeing it.
 */
static struct soft_mr *mr_lock_index(struct soft_dev *sdev, u32 index,
				     struct soft_br_reader *r)
{
	struct soft_brlock *l = &sdev->fabric->mem_lock;
	unsigned int spins = 0;
	struct soft_mr *mr;

	for (;;) {
		soft_br_read_lock(l, r);
		mr = soft_kt_find(&sdev->keys, index);
		if (!mr || soft_spin_trylock(&mr->wlock)) {
			soft_br_read_unlock(r);
			return mr;
		}
		soft_br_read_unlock(r);
		soft_relax(&spins);
	}
}

int rdmarw__soft_mr_register(struct soft_qp *qp, u32 index, u64 serial, u32 key,
			     int access)
{
	struct soft_mr *mr = mr_lock_index(qp->dev, index, qp->mem_rd);
	struct ib_mr *ibmr;
	int ret = -EINVAL;

	if (!mr)
		return -EINVAL; /* deregistered since it was posted */
	ibmr = &mr->ibmr;
	/* rxe_reg_fast_mr() and siw_fastreg_mr(): a fast MR, FREE, of the
	 * QP's PD, and only the variant may change. */
	if (mr->serial != serial || !mr->fast ||
	    (ibmr->type != IB_MR_TYPE_MEM_REG &&
	     ibmr->type != IB_MR_TYPE_SG_GAPS))
		goto out;
	if (mr->state != SOFT_MR_FREE || ibmr->pd != qp->ibqp.pd ||
	    SOFT_KEY_INDEX(key) != mr->index)
		goto out;
	if (!soft_reg_access_ok(access))
		goto out;
	memcpy(mr->reg, mr->map, mr->map_n * sizeof(*mr->reg));
	mr->reg_n = mr->map_n;
	mr->iova = ibmr->iova;
	mr->length = mr->map_n ? ibmr->length : 0;
	mr->access = access;
	mr->lkey = mr->rkey = key;
	/* Published: a reader that loads VALID sees every field above. */
	__atomic_store_n(&mr->state, SOFT_MR_VALID, __ATOMIC_RELEASE);
	ret = 0;
out:
	soft_spin_unlock(&mr->wlock);
	return ret;
}

/*
 * The MR of @key made FREE under its lock, then its grace period
 * (soft_br_grace_mask() over the MR's readers): when this returns, no
 * transfer that checked the MR VALID is still running, and no later one
 * finds it VALID.  No reader waits, no other MR's writer is held up.
 */
int rdmarw__soft_mr_invalidate_sync(struct soft_dev *sdev, struct ib_pd *pd,
				    u32 key, struct soft_br_reader *r)
{
	struct soft_mr *mr = mr_lock_index(sdev, SOFT_KEY_INDEX(key), r);
	int ret = -EINVAL;

	if (!mr)
		return -EINVAL;
	/*
	 * siw_invalidate_stag() finds the STag by index and checks only the
	 * PD; rxe_invalidate_mr() wants the whole key of a fast MR.  Neither
	 * minds an MR that is already invalid.
	 */
	if (mr->ibmr.pd == pd &&
	    (sdev->iwarp || (mr->fast && mr->rkey == key))) {
		/* seq_cst: the grace period's load of the readers follows */
		__atomic_store_n(&mr->state, SOFT_MR_FREE, __ATOMIC_SEQ_CST);
		soft_br_grace_mask(&sdev->fabric->mem_lock, &mr->readers);
		ret = 0;
	}
	soft_spin_unlock(&mr->wlock);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Signature offload: integrity MRs that insert, strip, or pass and check
 * T10-DIF protection information while data moves (mlx5's behaviour, as
 * drivers/infiniband/hw/mlx5/{mr,wr,cq}.c program and report it).
 *
 * Mapping (ib_map_mr_sg_pi): like mlx5's KLM mode, one element per entry
 * of each list, no page rules, the MR zero based with length data + PI
 * bytes and sig_attrs->meta_length set to the PI bytes.
 *
 * Registration (REG_MR_INTEGRITY): checked when posted, as mlx5's
 * set_pi_umr_wr() does (no SGE, no remote atomic right, a QP created with
 * IB_QP_CREATE_INTEGRITY_EN, the previous status read with
 * ib_check_mr_status(), valid attributes), and again when it executes,
 * where the page lists and the attributes are snapshotted.
 *
 * Transfers: the registered MR shows the wire view of the data.  Bytes that
 * leave memory through it are checked against the memory domain and leave
 * in the wire domain; bytes that arrive are checked against the wire domain
 * and are stored in the memory domain.  A check failure does not fail the
 * work request (mlx5 consumes its SIGERR CQE inside the driver and the
 * request completes successfully): the first failing block of the transfer
 * is recorded on the MR for ib_check_mr_status().  An access must cover
 * whole wire blocks.
 *
 * Guards: CRC-16/T10-DIF through ISA-L (crc16_t10dif: the PCLMUL/VPCLMUL
 * folding kernels), computed over each piece right after it is copied,
 * from the cache; the IP checksum with a 64-bit accumulator.
 */
#include "soft/soft_sig.h"

#include <isa-l/crc.h>

#define SIG_PI_BYTES 8u
#define SIG_MIN_INTERVAL 512u
#define SIG_MAX_INTERVAL 32768u

/* ---- guards --------------------------------------------------------- */

u16 rdmarw__soft_sig_crc(u16 crc, const u8 *buf, u64 len)
{
	return crc16_t10dif(crc, buf, len);
}

/* Fold a ones' complement sum to 16 bits. */
static u16 csum_fold(u64 s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (u16)s;
}

/*
 * The ones' complement sum of @n bytes read as little-endian 16-bit words
 * (a trailing byte as a word with a zero high byte), folded.  It equals the
 * byte-swapped big-endian sum: ones' complement addition commutes with
 * swapping bytes.
 */
static u16 csum_le(const u8 *p, u64 n)
{
	u64 s = 0, v;
	u16 w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&v, p, 8);
		s += (v & 0xffffffffu) + (v >> 32);
	}
	for (; n >= 2; p += 2, n -= 2) {
		memcpy(&w, p, 2);
		s += w;
	}
	if (n)
		s += *p;
	return csum_fold(s);
}

static u16 swab16(u16 v)
{
	return (u16)(v << 8 | v >> 8);
}

/* A running big-endian ones' complement sum over pieces of a stream. */
struct csum_acc {
	u64 sum;
	bool odd; /* the next byte is the low byte of a word */
};

static void csum_add(struct csum_acc *a, const u8 *p, u64 n)
{
	u16 le = csum_le(p, n);

	/* At an odd position the piece's bytes swap roles. */
	a->sum += a->odd ? le : swab16(le);
	a->odd ^= n & 1;
}

static u16 csum_final(const struct csum_acc *a, u16 seed)
{
	return (u16)~csum_fold(a->sum + seed);
}

u16 rdmarw__soft_sig_csum(u16 seed, const u8 *buf, u64 len)
{
	struct csum_acc a = { 0 };

	csum_add(&a, buf, len);
	return csum_final(&a, seed);
}

/* One guard being computed over a block. */
struct guard {
	enum ib_t10_dif_bg_type type;
	u16 seed;
	u16 crc;
	struct csum_acc cs;
};

static void guard_init(struct guard *g, const struct ib_t10_dif_domain *d)
{
	g->type = d->bg_type;
	g->seed = d->bg;
	g->crc = d->bg;
	g->cs = (struct csum_acc){ 0 };
}

static void guard_add(struct guard *g, const u8 *p, u64 n)
{
	if (g->type == IB_T10DIF_CRC)
		g->crc = crc16_t10dif(g->crc, p, n);
	else
		csum_add(&g->cs, p, n);
}

static u16 guard_value(const struct guard *g)
{
	return g->type == IB_T10DIF_CRC ? g->crc : csum_final(&g->cs, g->seed);
}

/* ---- big-endian PI fields -------------------------------------------- */

static u16 get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

/* ---- attributes -------------------------------------------------------- */

static const struct ib_t10_dif_domain *dif_of(const struct ib_sig_domain *d)
{
	return d->sig_type == IB_SIG_TYPE_T10_DIF ? &d->sig.dif : NULL;
}

static bool domain_ok(const struct ib_sig_domain *d)
{
	const struct ib_t10_dif_domain *dif = dif_of(d);
	u32 iv;

	if (d->sig_type == IB_SIG_TYPE_NONE)
		return true;
	if (!dif)
		return false;
	iv = dif->pi_interval;
	return (dif->bg_type == IB_T10DIF_CRC ||
		dif->bg_type == IB_T10DIF_CSUM) &&
	       iv >= SIG_MIN_INTERVAL && iv <= SIG_MAX_INTERVAL &&
	       !(iv & (iv - 1));
}

/*
 * The attributes make sense for @data_len data bytes and @meta_len PI
 * bytes: known domains, one block structure (mlx5 could re-block between
 * two intervals; the software device does not), whole blocks, room for
 * the memory PI, and a wire view a message can carry.  Sets *@interval (0
 * when no domain has PI) and *@wire_len.
 */
static int attrs_check(const struct ib_sig_attrs *a, u64 data_len, u64 meta_len,
		       u32 *interval, u64 *wire_len)
{
	const struct ib_t10_dif_domain *mem = dif_of(&a->mem);
	const struct ib_t10_dif_domain *wire = dif_of(&a->wire);
	u64 nblocks = 0;
	u32 iv = 0;

	if (!domain_ok(&a->mem) || !domain_ok(&a->wire) || !data_len)
		return -EINVAL;
	if (mem && wire && mem->pi_interval != wire->pi_interval)
		return -EINVAL;
	if (mem || wire) {
		iv = mem ? mem->pi_interval : wire->pi_interval;
		if (data_len % iv)
			return -EINVAL;
		nblocks = data_len / iv;
	}
	if (mem && meta_len < nblocks * SIG_PI_BYTES)
		return -EINVAL;
	*wire_len = data_len + (wire ? nblocks * SIG_PI_BYTES : 0);
	if (*wire_len > SOFT_MAX_MSG)
		return -EINVAL;
	*interval = iv;
	return 0;
}

/* ---- MR state ---------------------------------------------------------- */

int rdmarw__soft_sig_mr_init(struct soft_mr *mr)
{
	struct soft_sig_mr *sig = calloc(1, sizeof(*sig));

	if (!sig)
		return -ENOMEM;
	sig->lock = (struct soft_spin){ 0 };
	/* mlx5_alloc_integrity_descs(): a new MR counts as checked. */
	sig->checked = true;
	mr->sig = sig;
	return 0;
}

void rdmarw__soft_sig_mr_fini(struct soft_mr *mr)
{
	if (!mr->sig)
		return;
	free(mr->sig);
	mr->sig = NULL;
}

/* ---- ib_map_mr_sg_pi ----------------------------------------------------- */

/*
 * Append the entries of one list to mr->map from index @first, one element
 * per entry, adjacent entries merged, numbered from 0.  Returns the
 * elements added (in *@count) and bytes (in *@bytes), or -EINVAL / -ENOMEM.
 */
static int map_list(struct soft_mr *mr, struct scatterlist *sgl, int n,
		    unsigned int skip, u32 first, u32 *count, u64 *bytes)
{
	struct soft_seg *e = NULL;
	struct scatterlist *sg;
	u32 k = first;
	u64 total = 0;
	int i;

	for_each_sg(sgl, sg, n, i) {
		u64 addr, len;

		if (!sg)
			return -EINVAL; /* shorter than n */
		addr = sg_dma_address(sg) + (i ? 0 : skip);
		len = sg_dma_len(sg) - (i ? 0 : skip);
		if (!len)
			return -EINVAL;
		if (e && e->addr + e->len == addr) {
			e->len += len;
		} else {
			if (k == mr->max_segs)
				return -ENOMEM;
			e = &mr->map[k++];
			e->addr = addr;
			e->len = len;
			e->off = total;
		}
		total += len;
	}
	*count = k - first;
	*bytes = total;
	return 0;
}

int rdmarw__soft_map_mr_sg_pi(struct ib_mr *ibmr, struct scatterlist *data_sg,
			      int data_sg_nents, unsigned int *data_sg_offset,
			      struct scatterlist *meta_sg, int meta_sg_nents,
			      unsigned int *meta_sg_offset)
{
	struct soft_mr *mr = to_smr(ibmr);
	struct soft_sig_mr *sig = mr->sig;
	u32 nd = 0, nm = 0;
	u64 dlen = 0, mlen = 0;
	int ret;

	if (!mr->fast || !sig)
		return -EINVAL;
	ret = map_list(mr, data_sg, data_sg_nents, *data_sg_offset, 0, &nd,
		       &dlen);
	if (!ret && meta_sg_nents)
		ret = map_list(mr, meta_sg, meta_sg_nents, *meta_sg_offset, nd,
			       &nm, &mlen);
	if (!ret && dlen + mlen > UINT32_MAX)
		ret = -EINVAL;
	if (ret) {
		mr->map_n = 0;
		sig->map_data_n = sig->map_meta_n = 0;
		sig->map_data_len = sig->map_meta_len = 0;
		return ret;
	}
	mr->map_n = nd + nm;
	sig->map_data_n = nd;
	sig->map_meta_n = nm;
	sig->map_data_len = dlen;
	sig->map_meta_len = mlen;
	*data_sg_offset = 0;
	*meta_sg_offset = 0;
	/* mlx5_ib_map_mr_sg_pi(): zero based, data + PI, meta_length. */
	ibmr->iova = 0;
	ibmr->length = dlen + mlen;
	ibmr->sig_attrs->meta_length = (int)mlen;
	return 0;
}

/* ---- REG_MR_INTEGRITY ------------------------------------------------- */

int rdmarw__soft_sig_post_check(struct soft_qp *qp, const struct ib_send_wr *wr)
{
	const struct ib_reg_wr *r = reg_wr(wr);
	const struct soft_sig_mr *sig;
	u64 wire_len;
	u32 iv;

	if (wr->num_sge || !r->mr || r->mr->device != qp->ibqp.device ||
	    !to_smr(r->mr)->sig || !r->mr->sig_attrs)
		return -EINVAL;
	sig = to_smr(r->mr)->sig;
	if ((r->access & IB_ACCESS_REMOTE_ATOMIC) || !qp->ibqp.integrity_en ||
	    !__atomic_load_n(&sig->checked, __ATOMIC_ACQUIRE))
		return -EINVAL;
	return attrs_check(r->mr->sig_attrs, sig->map_data_len,
			   sig->map_meta_len, &iv, &wire_len);
}

void rdmarw__soft_sig_posted(const struct ib_send_wr *wr)
{
	struct soft_sig_mr *sig = to_smr(reg_wr(wr)->mr)->sig;

	__atomic_store_n(&sig->checked, false, __ATOMIC_RELEASE);
}

int rdmarw__soft_sig_register(struct soft_qp *qp, u32 index, u64 serial,
			      u32 key, int access)
{
	struct soft_mr *mr = rdmarw__soft_mr_find(qp->dev, index, serial);
	struct soft_sig_mr *sig;
	struct ib_mr *ibmr;
	u64 wire_len;
	u32 iv;
	int ret;

	if (!mr || !mr->sig)
		return -EINVAL; /* gone, or not an integrity MR */
	sig = mr->sig;
	ibmr = &mr->ibmr;
	/* the MR's writers too (soft_mr.c): an invalidation in progress */
	soft_spin_lock(&mr->wlock);
	ret = -EINVAL;
	if (mr->state != SOFT_MR_FREE || ibmr->pd != qp->ibqp.pd ||
	    SOFT_KEY_INDEX(key) != mr->index)
		goto out;
	if (!soft_reg_access_ok(access))
		goto out;
	/* The attributes may have changed since the post. */
	if (attrs_check(ibmr->sig_attrs, sig->map_data_len, sig->map_meta_len,
			&iv, &wire_len))
		goto out;
	memcpy(mr->reg, mr->map, mr->map_n * sizeof(*mr->reg));
	mr->reg_n = mr->map_n;
	sig->reg_data_n = sig->map_data_n;
	sig->reg_meta_n = sig->map_meta_n;
	sig->attrs = *ibmr->sig_attrs;
	sig->interval = iv;
	sig->wblk = iv + (dif_of(&sig->attrs.wire) ? SIG_PI_BYTES : 0);
	sig->data_len = sig->map_data_len;
	sig->nblocks = iv ? sig->data_len / iv : 0;
	mr->iova = ibmr->iova;
	mr->length = wire_len;
	mr->access = access;
	mr->lkey = mr->rkey = key;
	/* Atomic: readers load the state with acquire (soft_mr_state()). */
	__atomic_store_n(&mr->state, SOFT_MR_VALID, __ATOMIC_RELEASE);
	ret = 0;
out:
	soft_spin_unlock(&mr->wlock);
	return ret;
}

/* ---- access checks -------------------------------------------------- */

static int segs_walk(struct soft_dev *sdev, const struct soft_seg *s, u32 n)
{
	u64 pos, got;
	u32 i;
	u8 *p;

	for (i = 0; i < n; i++)
		for (pos = 0; pos < s[i].len; pos += got)
			if (soft_dma_to_cpu(sdev, s[i].addr + pos,
					    s[i].len - pos, &p, &got))
				return -EFAULT;
	return 0;
}

int rdmarw__soft_sig_access(const struct soft_mr *mr, u64 addr, u64 len)
{
	const struct soft_sig_mr *sig = mr->sig;
	u64 off = addr - mr->iova;

	if (sig->wblk && (off % sig->wblk || len % sig->wblk))
		return -EACCES;
	if (segs_walk(to_sdev(mr->ibmr.device), mr->reg,
		      sig->reg_data_n + sig->reg_meta_n))
		return -EACCES;
	return 0;
}

/* ---- byte streams ------------------------------------------------------ */

enum cur_kind {
	CUR_REGIONS, /* checked regions of a transfer */
	CUR_SEGS, /* an integrity MR's data or PI elements */
	CUR_FLAT, /* a bounce buffer */
};

/*
 * struct sig_cur - a position in a stream of pieces
 * @kind: enum cur_kind
 * @rg: CUR_REGIONS: the regions
 * @seg: CUR_SEGS: the elements
 * @dev: CUR_SEGS: whose DMA addresses
 * @flat: CUR_FLAT: the buffer
 * @flat_len: CUR_FLAT: its bytes
 * @n: pieces
 * @i: current piece
 * @off: offset in it
 * @p: the contiguous span at the position
 * @avail: bytes of @p
 */
struct sig_cur {
	enum cur_kind kind;
	const struct soft_region *rg;
	const struct soft_seg *seg;
	struct soft_dev *dev;
	u8 *flat;
	u64 flat_len;
	u32 n;
	u32 i;
	u64 off;
	u8 *p;
	u64 avail;
};

static u64 piece_len(const struct sig_cur *c)
{
	switch (c->kind) {
	case CUR_REGIONS:
		return c->rg[c->i].len;
	case CUR_SEGS:
		return c->seg[c->i].len;
	default:
		return c->flat_len;
	}
}

static int piece_span(struct sig_cur *c)
{
	u64 rest = piece_len(c) - c->off;

	switch (c->kind) {
	case CUR_REGIONS:
		return rdmarw__soft_region_span(&c->rg[c->i], c->off, &c->p,
						&c->avail);
	case CUR_SEGS:
		return soft_dma_to_cpu(c->dev, c->seg[c->i].addr + c->off, rest,
				       &c->p, &c->avail);
	default:
		c->p = c->flat + c->off;
		c->avail = rest;
		return 0;
	}
}

/* The span at the position: bytes available (0 at the end or on error). */
static u64 cur_span(struct sig_cur *c, u8 **p)
{
	while (!c->avail) {
		if (c->i >= c->n)
			return 0;
		if (c->off >= piece_len(c)) {
			c->i++;
			c->off = 0;
			continue;
		}
		if (piece_span(c) || !c->avail)
			return 0;
	}
	*p = c->p;
	return c->avail;
}

static void cur_adv(struct sig_cur *c, u64 k)
{
	c->p += k;
	c->avail -= k;
	c->off += k;
}

/* Move to byte @pos of the stream (from its start). */
static void cur_seek(struct sig_cur *c, u64 pos)
{
	c->i = 0;
	c->avail = 0;
	while (c->i < c->n && pos >= piece_len(c)) {
		pos -= piece_len(c);
		c->i++;
	}
	c->off = pos;
}

static void cur_regions(struct sig_cur *c, const struct soft_region *rg, u32 n)
{
	*c = (struct sig_cur){ .kind = CUR_REGIONS, .rg = rg, .n = n };
}

static void cur_segs(struct sig_cur *c, struct soft_dev *dev,
		     const struct soft_seg *seg, u32 n, u64 pos)
{
	*c = (struct sig_cur){
		.kind = CUR_SEGS, .seg = seg, .dev = dev, .n = n
	};
	cur_seek(c, pos);
}

static void cur_flat(struct sig_cur *c, u8 *buf, u64 len)
{
	*c = (struct sig_cur){
		.kind = CUR_FLAT, .flat = buf, .flat_len = len, .n = 1
	};
}

/*
 * Copy @len bytes from @src to @dst and feed them to the guards @g1 and @g2
 * (either may be NULL).  The guards read the destination right after the
 * copy, while it is in the cache: a cold source is then read only once,
 * at memory speed (reading it for the CRC first and copying it after
 * costs a quarter of the bandwidth on large transfers).
 */
static int cur_copy(struct sig_cur *dst, struct sig_cur *src, u64 len,
		    struct guard *g1, struct guard *g2)
{
	u8 *sp, *dp;
	u64 n, sn, dn;

	while (len) {
		sn = cur_span(src, &sp);
		dn = cur_span(dst, &dp);
		if (!sn || !dn)
			return -EFAULT;
		n = sn < dn ? sn : dn;
		if (n > len)
			n = len;
		memmove(dp, sp, n);
		if (g1)
			guard_add(g1, dp, n);
		if (g2)
			guard_add(g2, dp, n);
		cur_adv(src, n);
		cur_adv(dst, n);
		len -= n;
	}
	return 0;
}

/* Read @len bytes (a PI tuple) at the position: one span, or pieces. */
static int cur_read(struct sig_cur *c, u8 *buf, u64 len)
{
	struct sig_cur flat;
	u8 *p;

	if (cur_span(c, &p) >= len) {
		memcpy(buf, p, len);
		cur_adv(c, len);
		return 0;
	}
	cur_flat(&flat, buf, len);
	return cur_copy(&flat, c, len, NULL, NULL);
}

static int cur_write(struct sig_cur *c, u8 *buf, u64 len)
{
	struct sig_cur flat;
	u8 *p;

	if (cur_span(c, &p) >= len) {
		memcpy(p, buf, len);
		cur_adv(c, len);
		return 0;
	}
	cur_flat(&flat, buf, len);
	return cur_copy(c, &flat, len, NULL, NULL);
}

/* ---- the block engine --------------------------------------------------- */

/*
 * struct sig_plan - one direction through one integrity MR
 * @in: the incoming domain's T10-DIF, NULL for NONE
 * @out: the outgoing domain's, NULL for NONE
 * @check_mask: bytes of the incoming PI that are checked
 * @copy_guard: both have PI and the same guard kind: the guard is copied
 * @copy_app: both have PI and the same application tag: copied
 * @copy_ref: both have PI and the same reference tag: copied
 * @interval: data bytes per block
 * @key: the MR's key, for the error
 * @err_set: @err holds the first failure of this transfer
 * @err: that failure
 */
struct sig_plan {
	const struct ib_t10_dif_domain *in;
	const struct ib_t10_dif_domain *out;
	u8 check_mask;
	bool copy_guard;
	bool copy_app;
	bool copy_ref;
	u32 interval;
	u32 key;
	bool err_set;
	struct ib_sig_err err;
};

static void plan_init(struct sig_plan *pl, const struct soft_mr *mr,
		      bool to_wire)
{
	const struct soft_sig_mr *sig = mr->sig;
	const struct ib_t10_dif_domain *mem = dif_of(&sig->attrs.mem);
	const struct ib_t10_dif_domain *wire = dif_of(&sig->attrs.wire);

	*pl = (struct sig_plan){
		.in = to_wire ? mem : wire,
		.out = to_wire ? wire : mem,
		.check_mask = sig->attrs.check_mask,
		.interval = sig->interval,
		.key = mr->lkey,
	};
	/* mlx5_set_bsf(): what both domains agree on is copied. */
	if (mem && wire) {
		pl->copy_guard = mem->bg_type == wire->bg_type;
		pl->copy_app = mem->app_tag == wire->app_tag;
		pl->copy_ref = mem->ref_tag == wire->ref_tag;
	}
}

static u32 ref_of(const struct ib_t10_dif_domain *d, u64 blk)
{
	return d->ref_remap ? d->ref_tag + (u32)blk : d->ref_tag;
}

/* The byte mask of a field from the check_mask bits covering it. */
static u32 bytes_mask(u8 bits, unsigned int nbytes)
{
	u32 m = 0;
	unsigned int i;

	for (i = 0; i < nbytes; i++)
		if (bits & (1u << (nbytes - 1 - i)))
			m |= 0xffu << (8 * (nbytes - 1 - i));
	return m;
}

static void plan_fail(struct sig_plan *pl, enum ib_sig_err_type type,
		      u32 expected, u32 actual, u64 blk)
{
	if (pl->err_set)
		return;
	pl->err_set = true;
	pl->err = (struct ib_sig_err){
		.err_type = type,
		.expected = expected,
		.actual = actual,
		.sig_err_offset = blk * ((u64)pl->interval + SIG_PI_BYTES),
		.key = pl->key,
	};
}

/*
 * Check the incoming PI of block @blk, whose data has guard @guard, as
 * mlx5 reports it: guard, then reference tag, then application tag.
 */
static void pi_check(struct sig_plan *pl, const u8 *pi, u16 guard, u64 blk)
{
	const struct ib_t10_dif_domain *d = pl->in;
	u16 a_guard = get_be16(pi), a_app = get_be16(pi + 2);
	u32 a_ref = get_be32(pi + 4), e_ref = ref_of(d, blk);
	u8 cm = pl->check_mask;
	u32 gm = bytes_mask((u8)(cm >> 6), 2);
	u32 am = bytes_mask((u8)(cm >> 4) & 3, 2) & d->apptag_check_mask;
	u32 rm = bytes_mask(cm & 0xf, 4);

	if (d->app_escape && a_app == 0xffff &&
	    (!d->ref_escape || a_ref == 0xffffffffu))
		return;
	if ((a_guard ^ guard) & gm)
		plan_fail(pl, IB_SIG_BAD_GUARD, guard, a_guard, blk);
	else if ((a_ref ^ e_ref) & rm)
		plan_fail(pl, IB_SIG_BAD_REFTAG, e_ref, a_ref, blk);
	else if ((a_app ^ d->app_tag) & am)
		plan_fail(pl, IB_SIG_BAD_APPTAG, d->app_tag, a_app, blk);
}

/* The outgoing PI of block @blk: copied fields from @in, others made. */
static void pi_make(const struct sig_plan *pl, const u8 *in, u16 guard, u64 blk,
		    u8 *out)
{
	const struct ib_t10_dif_domain *d = pl->out;

	if (pl->copy_guard)
		memcpy(out, in, 2);
	else
		put_be16(out, guard);
	if (pl->copy_app)
		memcpy(out + 2, in + 2, 2);
	else
		put_be16(out + 2, d->app_tag);
	if (pl->copy_ref)
		memcpy(out + 4, in + 4, 4);
	else
		put_be32(out + 4, ref_of(d, blk));
}

static bool same_guard(const struct ib_t10_dif_domain *a,
		       const struct ib_t10_dif_domain *b)
{
	return a->bg_type == b->bg_type && a->bg == b->bg;
}

/*
 * Move @nblk blocks from block @blk0 on: data from @in_data to @out_data,
 * PI read from @in_pi and written to @out_pi (the wire side's cursors are
 * its data cursors: PI follows each interval there).
 */
static int sig_blocks(struct sig_plan *pl, u64 blk0, u64 nblk,
		      struct sig_cur *in_data, struct sig_cur *in_pi,
		      struct sig_cur *out_data, struct sig_cur *out_pi)
{
	bool need_in = pl->in && (pl->check_mask & IB_SIG_CHECK_GUARD);
	bool need_out = pl->out && !pl->copy_guard;
	bool share = need_in && need_out && same_guard(pl->in, pl->out);
	u8 pin[SIG_PI_BYTES] = { 0 }, pout[SIG_PI_BYTES];
	struct guard gin, gout;
	u64 b;

	for (b = blk0; b < blk0 + nblk; b++) {
		if (need_in)
			guard_init(&gin, pl->in);
		if (need_out && !share)
			guard_init(&gout, pl->out);
		if (cur_copy(out_data, in_data, pl->interval,
			     need_in ? &gin : NULL,
			     need_out && !share ? &gout : NULL))
			return -EFAULT;
		if (pl->in) {
			if (cur_read(in_pi, pin, SIG_PI_BYTES))
				return -EFAULT;
			pi_check(pl, pin, need_in ? guard_value(&gin) : 0, b);
		}
		if (pl->out) {
			pi_make(pl, pin,
				!need_out ? 0 :
				share	  ? guard_value(&gin) :
					    guard_value(&gout),
				b, pout);
			if (cur_write(out_pi, pout, SIG_PI_BYTES))
				return -EFAULT;
		}
	}
	return 0;
}

/* Keep the transfer's first failure on the MR (mlx5 keeps the last CQE's). */
static void sig_record(struct soft_mr *mr, const struct sig_plan *pl)
{
	struct soft_sig_mr *sig = mr->sig;

	if (!pl->err_set)
		return;
	soft_spin_lock(&sig->lock);
	sig->err = pl->err;
	sig->err_exists = true;
	soft_spin_unlock(&sig->lock);
}

/*
 * Through the integrity region @rg, between memory and the wire stream
 * @wire: @to_wire when the bytes leave memory.
 */
static int sig_through(const struct soft_region *rg, struct sig_cur *wire,
		       bool to_wire)
{
	struct soft_mr *mr = rg->mr;
	const struct soft_sig_mr *sig = mr->sig;
	struct soft_dev *dev = to_sdev(mr->ibmr.device);
	u64 off = rg->addr - mr->iova, blk0, nblk;
	struct sig_cur data, meta;
	struct sig_plan pl;
	int ret;

	if (!sig->interval) {
		/* No domain carries PI: a plain copy through the data. */
		cur_segs(&data, dev, mr->reg, sig->reg_data_n, off);
		return to_wire ? cur_copy(wire, &data, rg->len, NULL, NULL) :
				 cur_copy(&data, wire, rg->len, NULL, NULL);
	}
	blk0 = off / sig->wblk;
	nblk = rg->len / sig->wblk;
	plan_init(&pl, mr, to_wire);
	cur_segs(&data, dev, mr->reg, sig->reg_data_n, blk0 * sig->interval);
	cur_segs(&meta, dev, mr->reg + sig->reg_data_n, sig->reg_meta_n,
		 blk0 * SIG_PI_BYTES);
	if (to_wire)
		ret = sig_blocks(&pl, blk0, nblk, &data, &meta, wire, wire);
	else
		ret = sig_blocks(&pl, blk0, nblk, wire, wire, &data, &meta);
	sig_record(mr, &pl);
	return ret;
}

static bool region_sig(const struct soft_region *rg)
{
	return rg->mr && rg->mr->sig;
}

int rdmarw__soft_sig_copy(const struct soft_region *src, u32 nsrc,
			  const struct soft_region *dst, u32 ndst, u64 len)
{
	bool s = nsrc == 1 && region_sig(src), d = ndst == 1 && region_sig(dst);
	struct sig_cur wire;
	u8 *bounce;

	/* soft_sgl_check() keeps an integrity region alone on its side. */
	if ((!s && soft_regions_sig(src, nsrc)) ||
	    (!d && soft_regions_sig(dst, ndst)))
		return 0;
	if (s && d) {
		/* Both ends are integrity MRs: through the wire bytes.  No
		 * buffer, no copy: the WR fails (SOFT_F_LOC_RES). */
		bounce = soft_test_point(SOFT_TP_SIG_BOUNCE, NULL) ?
				 NULL :
				 malloc(len ? len : 1);
		if (!bounce)
			return -ENOMEM;
		cur_flat(&wire, bounce, len);
		if (!sig_through(src, &wire, true)) {
			cur_flat(&wire, bounce, len);
			sig_through(dst, &wire, false);
		}
		free(bounce);
	} else if (s) {
		cur_regions(&wire, dst, ndst);
		sig_through(src, &wire, true);
	} else {
		cur_regions(&wire, src, nsrc);
		sig_through(dst, &wire, false);
	}
	return 0;
}

/* ---- ib_check_mr_status -------------------------------------------------- */

int rdmarw__soft_check_mr_status(struct ib_mr *ibmr, u32 check_mask,
				 struct ib_mr_status *st)
{
	struct soft_sig_mr *sig = to_smr(ibmr)->sig;

	if (!sig || (check_mask & ~(u32)IB_MR_CHECK_SIG_STATUS))
		return -EINVAL;
	st->fail_status = 0;
	if (!(check_mask & IB_MR_CHECK_SIG_STATUS))
		return 0;
	soft_spin_lock(&sig->lock);
	__atomic_store_n(&sig->checked, true, __ATOMIC_RELEASE);
	if (sig->err_exists) {
		/* mlx5_ib_check_mr_status(): details for this key only */
		if (ibmr->lkey == sig->err.key)
			st->sig_err = sig->err;
		else
			st->sig_err = (struct ib_sig_err){
				.err_type = IB_SIG_BAD_GUARD,
				.key = sig->err.key,
			};
		sig->err_exists = false;
		st->fail_status |= IB_MR_CHECK_SIG_STATUS;
	}
	soft_spin_unlock(&sig->lock);
	return 0;
}

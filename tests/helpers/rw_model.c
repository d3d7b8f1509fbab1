// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tests' model of the kernel's R/W chain rules (see rw_model.h).  It is
 * deliberately written without looking at src/rw: path choice, MR chunking
 * with the page-list rules, SGE splitting, key variants and chain links are
 * derived here from the rules alone.
 */
#include "helpers/rw_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_PS 4096ULL

static u32 next_variant(u32 key)
{
	return (key & 0xffffff00u) | ((key + 1) & 0xffu);
}

static u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

struct model {
	struct ib_qp *qp;
	struct ib_device *dev;
	u32 port;
	const struct rw_model_in *in;
	struct rw_model_out *out;
	const struct rw_model_ent *ents; /* after the offset skip */
	u32 n;
	u32 off;
	bool iwarp;
};

static struct rw_model_wr *push(struct model *m)
{
	struct rw_model_out *o = m->out;

	if (o->nr_wrs >= RW_MODEL_MAX_WRS) {
		fprintf(stderr, "rw_model: chain too long\n");
		abort();
	}
	memset(&o->wrs[o->nr_wrs], 0, sizeof(o->wrs[0]));
	return &o->wrs[o->nr_wrs++];
}

static u32 model_pages_per_mr(struct model *m)
{
	u32 len = m->qp->integrity_en ?
			  m->dev->attrs.max_pi_fast_reg_page_list_len :
			  m->dev->attrs.max_fast_reg_page_list_len;

	return min_u32(len, 256);
}

static bool fast_reg(struct model *m)
{
	return m->dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS;
}

static bool model_needs_mr(struct model *m)
{
	bool read = m->in->dir == DMA_FROM_DEVICE;

	if (!fast_reg(m))
		return false;
	if (m->in->force_mr || (read && m->iwarp))
		return true;
	return !m->in->bvec && read && m->dev->attrs.max_sgl_rd &&
	       m->n > m->dev->attrs.max_sgl_rd;
}

/*
 * Does a chunk of entries fit one MR of @ppm list elements?  Both kinds of
 * device stop mapping where the kernel's page rules stop (ib_sg_to_pages:
 * a gap, an entry after the first that neither starts on a page after a
 * page-aligned end nor continues the previous one).  rxe-like devices also
 * count pages against the list; siw-like ones keep one element per entry
 * (so the entry count is what is bounded) and refuse empty entries.
 */
static bool chunk_maps(struct model *m, const struct rw_model_ent *e, u32 k,
		       u32 off, u32 ppm)
{
	u64 pages = 0, prev_end = 0;
	u32 j;

	if (m->in->siw_pages && k > ppm)
		return false;
	for (j = 0; j < k; j++) {
		if (m->in->siw_pages && !e[j].len)
			return false;
		u64 start = e[j].addr + (j ? 0 : off);
		u64 end = e[j].addr + e[j].len;
		u64 page = start & ~(MODEL_PS - 1);

		if (j && ((prev_end % MODEL_PS) || (start % MODEL_PS))) {
			if (start != prev_end)
				return false; /* a gap */
			page += MODEL_PS; /* shares the previous last page */
		} else {
			pages++; /* at least the page the entry starts in */
			page += MODEL_PS;
		}
		for (; page < end; page += MODEL_PS)
			pages++;
		prev_end = end;
	}
	return m->in->siw_pages || pages <= ppm;
}

static void finish_last(struct rw_model_wr *w, struct ib_cqe *cqe,
			struct ib_send_wr *chain_wr)
{
	if (!chain_wr) {
		w->send_flags = IB_SEND_SIGNALED;
		w->cqe = cqe;
	}
}

/* The MR path; returns false when the model says it fails with @err. */
static bool model_mr(struct model *m, int *err)
{
	const struct rw_model_in *in = m->in;
	struct rw_model_out *o = m->out;
	u32 ppm = model_pages_per_mr(m), chunks, i, done = 0, off = m->off;
	u64 raddr = in->remote_addr;
	int wqes = 0;

	chunks = (m->n + ppm - 1) / ppm;
	for (i = 0; i < chunks; i++) {
		u32 k = min_u32(ppm, m->n - done), j;
		const struct rw_model_mr *pm;
		struct rw_model_wr *w;
		u64 len = 0;
		u32 nkey;

		if (i >= in->pool_len) {
			*err = -EAGAIN;
			return false;
		}
		if (!chunk_maps(m, &m->ents[done], k, off, ppm)) {
			*err = -EINVAL;
			return false;
		}
		pm = &in->pool[i];
		nkey = next_variant(pm->key);
		for (j = 0; j < k; j++)
			len += m->ents[done + j].len;
		len -= off;
		if (pm->need_inval) {
			w = push(m);
			w->opcode = IB_WR_LOCAL_INV;
			w->invalidate_rkey = pm->key;
			wqes++;
		}
		w = push(m);
		w->opcode = IB_WR_REG_MR;
		w->mr = pm->mr;
		w->key = nkey;
		w->access = IB_ACCESS_LOCAL_WRITE |
			    (m->iwarp ? IB_ACCESS_REMOTE_WRITE : 0);
		w = push(m);
		if (in->dir == DMA_TO_DEVICE)
			w->opcode = IB_WR_RDMA_WRITE;
		else if (m->iwarp)
			w->opcode = IB_WR_RDMA_READ_WITH_INV;
		else
			w->opcode = IB_WR_RDMA_READ;
		if (w->opcode == IB_WR_RDMA_READ_WITH_INV)
			w->invalidate_rkey = nkey;
		w->num_sge = 1;
		w->sge[0].addr = m->ents[done].addr + off;
		w->sge[0].length = (u32)len;
		w->sge[0].lkey = nkey;
		w->remote_addr = raddr;
		w->rkey = in->rkey;
		raddr += len;
		o->total += len;
		wqes += 2;
		done += k;
		off = 0;
	}
	o->type = RDMA_RW_MR;
	o->nr_ops = chunks;
	o->mrs_taken = chunks;
	o->ret = wqes;
	return true;
}

static u32 model_max_sge(struct model *m)
{
	u32 send = m->qp->cap.max_send_sge;
	u32 rd = (u32)m->dev->attrs.max_sge_rd;

	return m->in->dir == DMA_TO_DEVICE ? send : min_u32(send, rd);
}

static void model_sges(struct model *m)
{
	struct rw_model_out *o = m->out;
	u32 max = model_max_sge(m), i = 0, off = m->off;
	u64 raddr = m->in->remote_addr;

	o->nr_ops = 0;
	while (i < m->n) {
		struct rw_model_wr *w = push(m);
		u32 j, k = min_u32(max, m->n - i);

		if (k > 64) {
			fprintf(stderr, "rw_model: > 64 SGEs per WR\n");
			abort();
		}
		w->opcode = m->in->dir == DMA_TO_DEVICE ? IB_WR_RDMA_WRITE :
							  IB_WR_RDMA_READ;
		w->num_sge = (int)k;
		w->remote_addr = raddr;
		w->rkey = m->in->rkey;
		for (j = 0; j < k; j++, i++) {
			w->sge[j].addr = m->ents[i].addr + off;
			w->sge[j].length = m->ents[i].len - off;
			w->sge[j].lkey = m->qp->pd->local_dma_lkey;
			raddr += w->sge[j].length;
			o->total += w->sge[j].length;
			off = 0;
		}
		o->nr_ops++;
	}
	o->type = m->n > 1 ? RDMA_RW_MULTI_WR : RDMA_RW_SINGLE_WR;
	o->ret = (int)o->nr_ops;
}

/*
 * The IOVA path: one range keeps the first segment's in-page offset, and
 * each segment is linked right after the previous one; an IOMMU maps
 * pages, so a segment whose in-page offset differs from its place in the
 * range cannot be linked, and that error is final (no fallback).
 */
static bool model_iova(struct model *m)
{
	struct rw_model_out *o = m->out;
	struct rw_model_wr *w;
	u64 at = m->ents[0].addr % MODEL_PS;
	u32 i;

	for (i = 0; i < m->n; i++) {
		if (m->ents[i].addr % MODEL_PS != at % MODEL_PS) {
			o->ret = -EINVAL;
			return false;
		}
		at += m->ents[i].len;
	}
	w = push(m);

	w->opcode = m->in->dir == DMA_TO_DEVICE ? IB_WR_RDMA_WRITE :
						  IB_WR_RDMA_READ;
	w->num_sge = 1;
	for (i = 0; i < m->n; i++)
		o->total += m->ents[i].len;
	w->sge[0].length = (u32)o->total;
	w->sge[0].lkey = m->qp->pd->local_dma_lkey;
	w->remote_addr = m->in->remote_addr;
	w->rkey = m->in->rkey;
	o->type = RDMA_RW_IOVA;
	o->nr_ops = 1;
	o->ret = 1;
	o->iova = true;
	return true;
}

static void model_skip(struct model *m)
{
	const struct rw_model_in *in = m->in;
	u32 i = 0, off = in->bvec ? 0 : in->offset;

	while (i < in->nents && off >= in->ents[i].len)
		off -= in->ents[i++].len;
	m->ents = &in->ents[i];
	m->n = in->nents - i;
	m->off = off;
}

void rw_model_chain(struct ib_qp *qp, u32 port_num,
		    const struct rw_model_in *in, struct ib_cqe *cqe,
		    struct ib_send_wr *chain_wr, struct rw_model_out *out)
{
	struct model m = {
		.qp = qp,
		.dev = qp->device,
		.port = port_num,
		.in = in,
		.out = out,
	};
	int err;

	memset(out, 0, sizeof(*out));
	out->wrs = calloc(RW_MODEL_MAX_WRS, sizeof(*out->wrs));
	if (!out->wrs)
		abort();
	m.iwarp =
		qp->device->port_protocol[port_num - 1] == RDMA_PROTOCOL_IWARP;
	model_skip(&m);
	if (!m.n) {
		out->ret = -EINVAL;
		return;
	}
	if (model_needs_mr(&m)) {
		if (model_mr(&m, &err))
			goto done;
		out->nr_wrs = 0;
		out->total = 0;
		/* Only max_sgl_rd pool exhaustion falls back to SGEs. */
		if (err != -EAGAIN || in->bvec || m.iwarp || in->force_mr) {
			out->ret = err;
			return;
		}
	}
	if (in->bvec && m.n > 1 && !qp->device->virt_dma && qp->device->iommu) {
		if (!model_iova(&m))
			return;
	} else {
		model_sges(&m);
	}
done:
	finish_last(&out->wrs[out->nr_wrs - 1], cqe, chain_wr);
}

void rw_model_free(struct rw_model_out *out)
{
	free(out->wrs);
	out->wrs = NULL;
}

#define MISMATCH(...)                                \
	do {                                         \
		snprintf(why, why_len, __VA_ARGS__); \
		return false;                        \
	} while (0)

static bool check_one(const struct ib_send_wr *wr, const struct rw_model_wr *w,
		      bool iova, u32 i, char *why, size_t why_len)
{
	int j;

	if (wr->opcode != w->opcode)
		MISMATCH("wr %u: opcode %s, want %s", i,
			 ib_wr_opcode_str(wr->opcode),
			 ib_wr_opcode_str(w->opcode));
	if (wr->num_sge != w->num_sge)
		MISMATCH("wr %u: num_sge %d, want %d", i, wr->num_sge,
			 w->num_sge);
	if (wr->send_flags != w->send_flags)
		MISMATCH("wr %u: send_flags %#x, want %#x", i, wr->send_flags,
			 w->send_flags);
	if (wr->wr_cqe != w->cqe)
		MISMATCH("wr %u: wr_cqe %p, want %p", i, (void *)wr->wr_cqe,
			 (void *)w->cqe);
	for (j = 0; j < w->num_sge; j++) {
		const struct ib_sge *a = &wr->sg_list[j], *b = &w->sge[j];

		if ((!iova && a->addr != b->addr) || a->length != b->length ||
		    a->lkey != b->lkey)
			MISMATCH(
				"wr %u sge %d: (%#llx,%u,%#x), want (%#llx,%u,%#x)",
				i, j, (unsigned long long)a->addr, a->length,
				a->lkey, (unsigned long long)b->addr, b->length,
				b->lkey);
	}
	switch (w->opcode) {
	case IB_WR_LOCAL_INV:
		if (wr->ex.invalidate_rkey != w->invalidate_rkey)
			MISMATCH("wr %u: LOCAL_INV of %#x, want %#x", i,
				 wr->ex.invalidate_rkey, w->invalidate_rkey);
		break;
	case IB_WR_REG_MR: {
		const struct ib_reg_wr *r = reg_wr(wr);

		if (r->mr != w->mr || r->key != w->key ||
		    r->access != w->access)
			MISMATCH(
				"wr %u: REG_MR (%p,%#x,%#x), want (%p,%#x,%#x)",
				i, (void *)r->mr, r->key, r->access,
				(void *)w->mr, w->key, w->access);
		break;
	}
	case IB_WR_RDMA_READ_WITH_INV:
		if (wr->ex.invalidate_rkey != w->invalidate_rkey)
			MISMATCH("wr %u: READ_WITH_INV of %#x, want %#x", i,
				 wr->ex.invalidate_rkey, w->invalidate_rkey);
		/* fall through */
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_WRITE:
		if (rdma_wr(wr)->remote_addr != w->remote_addr ||
		    rdma_wr(wr)->rkey != w->rkey)
			MISMATCH("wr %u: remote (%#llx,%#x), want (%#llx,%#x)",
				 i,
				 (unsigned long long)rdma_wr(wr)->remote_addr,
				 rdma_wr(wr)->rkey,
				 (unsigned long long)w->remote_addr, w->rkey);
		break;
	default:
		MISMATCH("wr %u: unexpected opcode", i);
	}
	return true;
}

bool rw_model_check_chain(const struct ib_send_wr *first,
			  const struct rw_model_out *out,
			  const struct ib_send_wr *chain_wr, char *why,
			  size_t why_len)
{
	const struct ib_send_wr *wr = first;
	u32 i;

	for (i = 0; i < out->nr_wrs; i++) {
		if (!wr || wr == chain_wr)
			MISMATCH("chain has %u WRs, want %u", i, out->nr_wrs);
		if (!check_one(wr, &out->wrs[i], out->iova, i, why, why_len))
			return false;
		wr = wr->next;
	}
	if (wr != chain_wr)
		MISMATCH("after the last RDMA WR: %p, want chain_wr %p",
			 (const void *)wr, (const void *)chain_wr);
	return true;
}

u32 rw_model_pool_snapshot(struct ib_qp *qp, struct rw_model_mr *pool, u32 max)
{
	struct list_head *pos;
	u32 n = 0;

	for (pos = qp->rdma_mrs.next; pos != &qp->rdma_mrs; pos = pos->next) {
		struct ib_mr *mr = container_of(pos, struct ib_mr, qp_entry);

		if (n < max) {
			pool[n].mr = mr;
			pool[n].key = mr->lkey;
			pool[n].need_inval = mr->need_inval;
		}
		n++;
	}
	return n;
}

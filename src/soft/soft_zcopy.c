// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel siw's zero-copy transmit, modelled on the iWARP profiles.
 *
 * siw_qp_prepare_tx() sends an unsignalled SEND or WRITE of at least a page
 * straight from the caller's pages, and siw completes a WQE once TCP has
 * taken it, not once TCP has read it.  A completion that follows such a
 * WQE (the signalled SEND after the unsignalled data WRITEs of a reply)
 * therefore does not free its source buffer: bytes written into it after
 * the completion may still go out (docs/deviations.md, issue 26).
 *
 * The model: from the first zero-copy WQE (wqe->zcopy, the one rule of
 * rdmarw__tx_zcopy() with the guard off) the Send Queue's SENDs and WRITEs
 * complete when they are "handed to TCP" -- held here -- and reach the peer
 * later, in order: a zero-copy one with its sources read then, any other
 * with the payload copied when it was held (siw copies those into the
 * socket).  They go out before a READ or local operation, when the ring is
 * full, and when a poller of the fabric finds its CQ empty or arms it:
 * after the completion was seen, as on the wire.  The requester reaches the
 * model through its per-WQE hook (the QP's fault flag stays on), so the
 * fast path pays nothing.  With rdmarw_tx_guard (the default, read when a
 * QP is created) no WQE is zero-copy and nothing is modelled.
 */
#include "soft/soft_access.h"
#include "soft/soft_resp.h"

#include <stdlib.h>

int rdmarw__soft_zc_init(struct soft_qp *qp)
{
	struct soft_zc *zc;
	u32 i;

	/* Guarded (the default), no WQE is ever zero-copy: nothing to model. */
	if (!qp->ibqp.device->rdmarw_tx_zcopy_min ||
	    qp->ibqp.device->rdmarw_tx_guard)
		return 0;
	zc = calloc(1, sizeof(*zc));
	if (!zc)
		return -ENOMEM;
	zc->n = qp->sq_size ? qp->sq_size : 1;
	zc->max_sge = qp->sq_max_sge ? qp->sq_max_sge : 1;
	zc->rec = calloc(zc->n, sizeof(*zc->rec));
	zc->sges = calloc((size_t)zc->n * zc->max_sge, sizeof(*zc->sges));
	if (!zc->rec || !zc->sges) {
		free(zc->rec);
		free(zc->sges);
		free(zc);
		return -ENOMEM;
	}
	for (i = 0; i < zc->n; i++)
		zc->rec[i].wqe.sge = &zc->sges[(size_t)i * zc->max_sge];
	qp->zc = zc;
	qp->zc_model = true;
	rdmarw__soft_fault_zc(qp);
	return 0;
}

void rdmarw__soft_zc_fini(struct soft_qp *qp)
{
	struct soft_zc *zc = qp->zc;

	if (!zc)
		return;
	rdmarw__soft_zc_drop(qp);
	free(zc->rec);
	free(zc->sges);
	free(zc);
	qp->zc = NULL;
	qp->zc_model = false;
}

static void zc_set_due(struct soft_qp *qp, bool due)
{
	if (soft_load(&qp->zc_due) == (int)due)
		return;
	soft_store(&qp->zc_due, (int)due);
	if (due)
		soft_add(&qp->dev->fabric->zc_due, 1);
	else
		soft_sub(&qp->dev->fabric->zc_due, 1);
}

/* The payload of a WQE that siw copies into the socket: copied now. */
static enum soft_fault zc_snapshot(struct soft_qp *qp,
				   const struct soft_send_wqe *wqe, u8 **snap)
{
	struct soft_fabric *f = qp->dev->fabric;
	struct soft_region dst;
	enum soft_fault fault = SOFT_OK;
	u8 *buf = malloc(wqe->h.length ? wqe->h.length : 1);
	u32 n;

	if (!buf)
		return SOFT_F_LOC_RES;
	dst = (struct soft_region){ .dev = qp->dev,
				    .addr = (u64)(uintptr_t)buf,
				    .len = wqe->h.length,
				    .cpu = buf };
	soft_br_read_lock(&f->mem_lock, qp->mem_rd);
	if (soft_sgl_check(qp->dev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
			   qp->req_rg, &n))
		fault = SOFT_F_LOC_PROT;
	else if (wqe->h.length &&
		 soft_copy(qp->req_rg, n, &dst, 1, wqe->h.length))
		fault = SOFT_F_LOC_RES;
	soft_br_read_unlock(qp->mem_rd);
	if (fault) {
		free(buf);
		return fault;
	}
	*snap = buf;
	return SOFT_OK;
}

enum soft_fault rdmarw__soft_zc_hold(struct soft_qp *qp,
				     struct soft_send_wqe *wqe)
{
	struct soft_zc *zc = qp->zc;
	struct soft_zc_rec *r;
	struct ib_sge *sge;
	u8 *snap = NULL;

	if (zc->count == zc->n) /* the socket's buffer is full: send */
		rdmarw__soft_zc_flush(qp);
	if (!wqe->zcopy) {
		enum soft_fault fault = zc_snapshot(qp, wqe, &snap);

		if (fault)
			return fault;
	}
	r = &zc->rec[(zc->first + zc->count) % zc->n];
	sge = r->wqe.sge;
	r->wqe = *wqe;
	r->wqe.sge = sge;
	memcpy(sge, wqe->sge, wqe->num_sge * sizeof(*sge));
	r->snap = snap;
	qp->zc_held = ++zc->count;
	zc_set_due(qp, true);
	return SOFT_OK;
}

enum soft_fault rdmarw__soft_zc_exec(struct soft_qp *qp,
				     struct soft_send_wqe *wqe)
{
	enum soft_op_class cls = wqe->h.op->cls;
	enum soft_fault fault;

	/* the guard is off on this QP (rdmarw__soft_zc_init()) */
	wqe->zcopy = rdmarw__tx_zcopy(qp->ibqp.device, wqe->opcode,
				      wqe->signaled ? IB_SEND_SIGNALED : 0,
				      wqe->h.length);
	if (cls == SOFT_OPC_WRITE || cls == SOFT_OPC_SEND) {
		if (!wqe->zcopy && !qp->zc_held)
			return SOFT_OK;
		fault = rdmarw__soft_zc_hold(qp, wqe);
		return fault ? fault : SOFT_F_HELD;
	}
	if (qp->zc_held) /* a READ or local operation waits */
		rdmarw__soft_zc_flush(qp);
	return SOFT_OK;
}

void rdmarw__soft_zc_flush(struct soft_qp *qp)
{
	struct soft_zc *zc = qp->zc;

	while (zc->count) {
		struct soft_zc_rec *r = &zc->rec[zc->first];
		enum soft_fault fault = SOFT_OK;

		if (soft_qp_state(qp) != IB_QPS_RTS) {
			rdmarw__soft_zc_drop(qp);
			return;
		}
		fault = rdmarw__soft_req_replay(qp, &r->wqe, r->snap);
		if (r->wqe.zcopy)
			zc->late++;
		free(r->snap);
		r->snap = NULL;
		zc->first = (zc->first + 1) % zc->n;
		qp->zc_held = --zc->count;
		if (fault)
			rdmarw__soft_qp_to_err(qp);
	}
	zc_set_due(qp, false);
}

void rdmarw__soft_zc_drop(struct soft_qp *qp)
{
	struct soft_zc *zc = qp->zc;

	if (!zc)
		return;
	while (zc->count) {
		free(zc->rec[zc->first].snap);
		zc->rec[zc->first].snap = NULL;
		zc->first = (zc->first + 1) % zc->n;
		zc->count--;
	}
	zc->first = 0;
	qp->zc_held = 0;
	zc_set_due(qp, false);
}

/* At most this many QPs are run per empty poll (more wait for the next). */
#define ZC_RUN_BATCH 16

void rdmarw__soft_zc_run_due(struct soft_fabric *f)
{
	struct soft_qp *run[ZC_RUN_BATCH], *qp;
	u32 i, n = 0;

	soft_mutex_lock(&f->lock);
	list_for_each_entry(qp, &f->qps, fabric_entry)
	{
		if (!soft_load(&qp->zc_due) || soft_load(&qp->dying))
			continue;
		qp->refs++;
		run[n++] = qp;
		if (n == ZC_RUN_BATCH)
			break;
	}
	soft_mutex_unlock(&f->lock);
	for (i = 0; i < n; i++)
		rdmarw__soft_qp_zc_flush(run[i]);
	if (!n)
		return;
	soft_mutex_lock(&f->lock);
	for (i = 0; i < n; i++)
		run[i]->refs--;
	soft_mutex_wake(&f->lock);
	soft_mutex_unlock(&f->lock);
}

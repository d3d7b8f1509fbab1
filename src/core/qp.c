// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs.  Creation checks the request against the device, lets the
 * R/W API size the Send Queue (rdma_rw_init_qp()) and, once the provider has
 * created the QP, set up its MR pools (rdma_rw_init_mrs()), as the kernel's
 * create_qp path does.
 */
#include "core/core.h"
#include "core/drain.h"
#include "core/srq.h"
#include "rw/rw_internal.h" /* what R/W contexts hold of a QP */

static int check_caps(struct ib_device *dev, const struct ib_qp_init_attr *a)
{
	const struct ib_device_attr *da = &dev->attrs;

	if (a->cap.max_send_wr > (u32)da->max_qp_wr ||
	    a->cap.max_recv_wr > (u32)da->max_qp_wr ||
	    a->cap.max_send_sge > (u32)da->max_send_sge ||
	    a->cap.max_recv_sge > (u32)da->max_recv_sge ||
	    a->cap.max_inline_data)
		return -EINVAL;
	return 0;
}

static int check_init_attr(struct ib_pd *pd, struct ib_qp_init_attr *a)
{
	struct ib_device *dev = pd->device;

	if (!a->send_cq || !a->recv_cq || a->qp_type != IB_QPT_RC)
		return -EINVAL;
	if (a->srq) { /* no Receive Queue of its own: the SRQ's sizes */
		if (a->srq->device != dev)
			return -EINVAL;
		a->cap.max_recv_wr = 0;
		a->cap.max_recv_sge = a->srq->attr.max_sge;
	}
	if (a->send_cq->device != dev || a->recv_cq->device != dev)
		return -EINVAL;
	if (a->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    a->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	if (!a->port_num)
		a->port_num = 1;
	if (!rdma_is_port_valid(dev, a->port_num))
		return -EINVAL;
	if (a->create_flags & ~(u32)IB_QP_CREATE_INTEGRITY_EN)
		return -EINVAL;
	if ((a->create_flags & IB_QP_CREATE_INTEGRITY_EN) &&
	    !(dev->attrs.kernel_cap_flags & IBK_INTEGRITY_HANDOVER))
		return -EOPNOTSUPP;
	return check_caps(dev, a);
}

static void init_core_fields(struct ib_qp *qp, struct ib_pd *pd,
			     const struct ib_qp_init_attr *a)
{
	struct ib_device *dev = pd->device;

	qp->device = dev;
	qp->pd = pd;
	qp->send_cq = a->send_cq;
	qp->recv_cq = a->recv_cq;
	qp->event_handler = a->event_handler;
	qp->qp_context = a->qp_context;
	qp->qp_type = a->qp_type;
	qp->port = a->port_num;
	qp->sq_sig_type = a->sq_sig_type;
	qp->integrity_en = a->create_flags & IB_QP_CREATE_INTEGRITY_EN;
	qp->srq = a->srq;
	INIT_LIST_HEAD(&qp->srq_entry);
	qp->state = IB_QPS_RESET;
	pthread_spin_init(rdmarw__qp_mr_lock(qp), PTHREAD_PROCESS_PRIVATE);
	INIT_LIST_HEAD(&qp->rdma_mrs);
	INIT_LIST_HEAD(&qp->sig_mrs);
}

static void hold_objects(struct ib_qp *qp)
{
	rdmarw__inc(&qp->pd->usecnt);
	rdmarw__inc(&qp->send_cq->usecnt);
	rdmarw__inc(&qp->recv_cq->usecnt);
	if (qp->srq)
		rdmarw__srq_attach(qp);
}

static void release_objects(struct ib_qp *qp)
{
	rdmarw__dec(&qp->pd->usecnt);
	rdmarw__dec(&qp->send_cq->usecnt);
	rdmarw__dec(&qp->recv_cq->usecnt);
	rdmarw__srq_detach(qp);
}

/* The kernel's per-QP SGE limits for R/W contexts (ib_create_qp). */
static void set_rw_sge_limits(struct ib_qp *qp)
{
	u32 rd = (u32)qp->device->attrs.max_sge_rd;

	qp->max_write_sge = qp->cap.max_send_sge;
	qp->max_read_sge =
		qp->cap.max_send_sge < rd ? qp->cap.max_send_sge : rd;
}

struct ib_qp *ib_create_qp(struct ib_pd *pd, struct ib_qp_init_attr *init_attr)
{
	struct ib_device *dev;
	struct ib_qp *qp;
	int ret;

	if (!pd || !init_attr)
		return ERR_PTR(-EINVAL);
	dev = pd->device;
	ret = check_init_attr(pd, init_attr);
	if (ret)
		return ERR_PTR(ret);
	if (!dev->ops->create_qp || !dev->ops->post_send)
		return ERR_PTR(-EOPNOTSUPP);
	/* Refused before anything is allocated: the storage and pools are
	 * sized by it. */
	if (init_attr->cap.max_rdma_ctxs >
	    rdmarw__rw_max_ctxs(dev, init_attr->port_num,
				init_attr->create_flags))
		return ERR_PTR(-EINVAL);
	if (init_attr->cap.max_rdma_ctxs)
		rdma_rw_init_qp(dev, init_attr);
	qp = calloc(1, dev->ops->size_ib_qp);
	if (!qp)
		return ERR_PTR(-ENOMEM);
	init_core_fields(qp, pd, init_attr);
	ret = dev->ops->create_qp(qp, init_attr);
	if (ret)
		goto err_free;
	qp->cap = init_attr->cap;
	set_rw_sge_limits(qp);
	hold_objects(qp);
	if (init_attr->cap.max_rdma_ctxs) {
		ret = rdma_rw_init_mrs(qp, init_attr);
		if (ret)
			goto err_destroy;
	}
	return qp;

err_destroy:
	release_objects(qp);
	dev->ops->destroy_qp(qp);
err_free:
	pthread_spin_destroy(rdmarw__qp_mr_lock(qp));
	free(qp);
	return ERR_PTR(ret);
}

int ib_destroy_qp(struct ib_qp *qp)
{
	if (!qp)
		return -EINVAL;
	/* A context still holding storage or MRs would use them afterwards. */
	if (rdmarw__rw_qp_busy(qp))
		return -EBUSY;
	if (qp->rdmarw_owner) /* an rdma_cm id's: it lets go first */
		qp->rdmarw_owner->release(qp->rdmarw_owner, qp);
	rdma_rw_cleanup_mrs(qp);
	rdmarw__srq_detach(qp);
	if (qp->device->ops->destroy_qp)
		qp->device->ops->destroy_qp(qp);
	rdmarw__drain_forget_qp(qp);
	release_objects(qp);
	pthread_spin_destroy(rdmarw__qp_mr_lock(qp));
	free(qp);
	return 0;
}

#define IB_QP_KNOWN_MASK ((IB_QP_DEST_QPN << 1) - 1)

/*
 * Checking, the provider and the commit.  The move is checked against the
 * state read here; the provider's op then runs with qp->state still the
 * old state (providers read it as such); the new state is committed last,
 * by rdmarw__qp_move(), a compare-and-swap against the state it checks.
 *
 * Provider first, commit second, because the provider is the one who knows
 * when the new state may be seen: the software device moves to ERR under
 * its Receive Queue lock together with the flush, empties its queues before
 * RESET is seen, and must see RTS before it restarts its Send Queue; it
 * commits those itself, through the same helper.  A commit before the
 * provider would make the provider take the new state for the old one, and
 * its undo after a provider failure would be a second, unchecked write.
 *
 * The only state that can change under us is ERR, set by the device when a
 * work request fails (callers must not run two ib_modify_qp() on one QP at
 * once, as in the kernel).  The commit then sees ERR and checks the move
 * again from ERR: to RESET or ERR it still goes through; any other move
 * (RTS -> SQD, SQD -> RTS, ...) fails with -EINVAL, the answer it would have
 * had a moment later, and the QP stays ERR.  Nothing is undone: what a
 * provider set up for the refused move (access flags, the link to its peer,
 * a restarted Send Queue that then failed) is not used in ERR, where work
 * requests only flush, and the move to RESET that must follow clears it.
 * When the provider committed @next itself, the commit finds it there and
 * has nothing to do.
 */
int ib_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int attr_mask)
{
	enum ib_qp_state cur, next, found;
	int ret;

	if (!qp || !attr || (attr_mask & ~IB_QP_KNOWN_MASK))
		return -EINVAL;
	cur = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
	if ((attr_mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	next = (attr_mask & IB_QP_STATE) ? attr->qp_state : cur;
	ret = rdmarw__qp_move_ok(cur, next, attr_mask);
	if (ret)
		return ret;
	if ((attr_mask & IB_QP_PORT) &&
	    !rdma_is_port_valid(qp->device, attr->port_num))
		return -EINVAL;
	if (qp->device->ops->modify_qp) {
		ret = qp->device->ops->modify_qp(qp, attr, attr_mask);
		if (ret)
			return ret;
	}
	if (!(attr_mask & IB_QP_STATE))
		return 0;
	ret = rdmarw__qp_move(qp, next, attr_mask, &found);
	if (ret && found == next && found != cur)
		ret = 0; /* the provider committed it */
	return ret;
}

int ib_query_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int attr_mask,
		struct ib_qp_init_attr *init_attr)
{
	if (!qp || !attr)
		return -EINVAL;
	attr->qp_state = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = qp->cap;
	attr->port_num = qp->port;
	if (init_attr) {
		init_attr->event_handler = qp->event_handler;
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = qp->cap;
		init_attr->sq_sig_type = qp->sq_sig_type;
		init_attr->qp_type = qp->qp_type;
		init_attr->create_flags =
			qp->integrity_en ? IB_QP_CREATE_INTEGRITY_EN : 0;
		init_attr->port_num = qp->port;
	}
	return 0;
}

int ib_post_send(struct ib_qp *qp, const struct ib_send_wr *send_wr,
		 const struct ib_send_wr **bad_wr)
{
	const struct ib_send_wr *dummy;

	if (!bad_wr)
		bad_wr = &dummy;
	*bad_wr = send_wr;
	if (!qp || !send_wr)
		return -EINVAL;
	return qp->device->ops->post_send(qp, send_wr, bad_wr);
}

int ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *recv_wr,
		 const struct ib_recv_wr **bad_wr)
{
	const struct ib_recv_wr *dummy;

	if (!bad_wr)
		bad_wr = &dummy;
	*bad_wr = recv_wr;
	if (!qp || !recv_wr || qp->srq)
		return -EINVAL;
	if (!qp->device->ops->post_recv)
		return -EOPNOTSUPP;
	return qp->device->ops->post_recv(qp, recv_wr, bad_wr);
}

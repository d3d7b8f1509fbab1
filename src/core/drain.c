// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Draining a QP (the kernel's ib_drain_qp()): move it to ERR, post a marker
 * on each queue and wait until the markers come back flushed, which means
 * every earlier request has completed.
 */
#include "core/core.h"

#include <sched.h>

struct drain_marker {
	struct ib_cqe cqe;
	bool done;
};

static void drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct drain_marker *m =
		container_of(wc->wr_cqe, struct drain_marker, cqe);

	__atomic_store_n(&m->done, true, __ATOMIC_RELEASE);
}

static void wait_marker(struct ib_cq *cq, struct drain_marker *m)
{
	while (!__atomic_load_n(&m->done, __ATOMIC_ACQUIRE)) {
		if (cq->poll_ctx == IB_POLL_DIRECT)
			ib_process_cq_direct(cq, -1);
		else
			sched_yield();
	}
}

int ib_drain_qp(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct drain_marker sm = { .cqe.done = drain_done };
	struct drain_marker rm = { .cqe.done = drain_done };
	struct ib_rdma_wr swr = {
		.wr = { .wr_cqe = &sm.cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
	};
	struct ib_recv_wr rwr = { .wr_cqe = &rm.cqe };
	int ret;

	if (!qp)
		return -EINVAL;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	ret = ib_post_send(qp, &swr.wr, NULL);
	if (!ret)
		wait_marker(qp->send_cq, &sm);
	if (ib_post_recv(qp, &rwr, NULL) == 0)
		wait_marker(qp->recv_cq, &rm);
	return ret;
}

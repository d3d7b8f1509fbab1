// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared parts of the rping server and client (see rping_common.h). */
#include "rping_common.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RPING_WAIT_S 30

int rping_parse(int argc, char **argv, struct rping_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->port = "7174";
	o->size = 64;
	while ((c = getopt(argc, argv, "a:p:C:S:vVd")) != -1) {
		switch (c) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'C':
			o->count = atoi(optarg);
			break;
		case 'S':
			o->size = (unsigned int)atoi(optarg);
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'V':
			o->validate = true;
			break;
		case 'd':
			break;
		default:
			return -EINVAL;
		}
	}
	/* rping's limits: room for "rdma-ping-%d: " and a terminator. */
	if (o->size < 16 || o->size > 64 * 1024 || o->count < 0)
		return -EINVAL;
	return 0;
}

static void wait_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rping_wait *w = container_of(wc->wr_cqe, struct rping_wait, cqe);

	w->wc = *wc;
	w->done = true;
}

void rping_wait_init(struct rping_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->cqe.done = wait_done;
}

static void nap(void)
{
	struct timespec ts = { .tv_nsec = 50 * 1000 };

	nanosleep(&ts, NULL);
}

int rping_wait(struct ib_cq *cq, struct rdmarw_ibv_conn *c,
	       struct rping_wait *w)
{
	time_t end = time(NULL) + RPING_WAIT_S;

	while (!w->done) {
		if (ib_process_cq_direct(cq, -1) > 0)
			continue;
		/* The peer may have gone: its DISCONNECTED event says so. */
		if (rdmarw_ibv_wait_disconnect(c, 0) == 0)
			return -ECONNRESET;
		if (time(NULL) > end)
			return -ETIMEDOUT;
		nap();
	}
	if (w->wc.status != IB_WC_SUCCESS) {
		if (w->wc.status != IB_WC_WR_FLUSH_ERR)
			fprintf(stderr, "completion error: %s\n",
				ib_wc_status_msg(w->wc.status));
		return w->wc.status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
	}
	return 0;
}

/* Messages go through the PD's local DMA key (the registration map). */
int rping_post_recv(struct ib_qp *qp, struct rping_msg *m, struct rping_wait *w)
{
	struct ib_sge sge = { .addr = (uintptr_t)m,
			      .length = sizeof(*m),
			      .lkey = qp->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &w->cqe,
				 .sg_list = &sge,
				 .num_sge = 1 };

	rping_wait_init(w);
	return ib_post_recv(qp, &wr, NULL);
}

int rping_post_send(struct ib_qp *qp, struct rping_msg *m, struct rping_wait *w)
{
	struct ib_sge sge = { .addr = (uintptr_t)m,
			      .length = sizeof(*m),
			      .lkey = qp->pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = &w->cqe,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };

	rping_wait_init(w);
	return ib_post_send(qp, &wr, NULL);
}

struct ib_qp *rping_make_qp(struct rdmarw_ibv_conn *c, struct ib_pd *pd,
			    struct ib_cq *cq)
{
	struct ib_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};

	return rdmarw_ibv_create_qp(c, pd, &a);
}

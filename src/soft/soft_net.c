// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transmit/receive seam between the roles (rxe's rxe_xmit_packet(),
 * rxe_loopback() and rxe_rcv()), with its loopback transport.
 *
 * The roles exchange struct soft_pkt only: a header by value and a
 * payload cursor.  rdmarw__soft_rcv() hands a request to the responder
 * and every answer (READ response, NAK, RNR, TERMINATE) to the completer;
 * the responder answers by transmitting from its own QP.  The loopback is
 * the only code of the data path that follows qp->peer: a transmit is
 * the peer's receive, in the sender's thread, in the read section of the
 * end whose memory is the source (the sender's for a SEND or WRITE, the
 * responder's own for a READ), and the end of the message
 * (rdmarw__soft_xmit_end()) runs the receiver's second half once that
 * section is left.  A QP of a TCP device has no peer on the fabric: its
 * transmit is the wire's (soft_tcp.c), which receives in its device's
 * thread and calls rdmarw__soft_rcv() there (docs/soft-device.md, "The
 * transmit/receive seam", "TCP transport").
 */
#include "soft/soft_net.h"

#include <stdint.h>

static_assert(SOFT_PKT_SEND == 0 && SOFT_PKT_WRITE == 1 && SOFT_PKT_READ == 2,
	      "a request's kind is its class");

int rdmarw__soft_lost(struct soft_qp *qp, const struct soft_pkt *pkt)
{
	struct soft_pkt ans = {
		.h = { .kind = SOFT_PKT_NAK,
		       .syndrome = SOFT_F_RETRY_EXC,
		       .seq = pkt->h.seq },
	};

	rdmarw__soft_comp_rcv(qp, &ans);
	return SOFT_RCV_ANSWERED;
}

int rdmarw__soft_xmit(struct soft_qp *qp, struct soft_pkt *pkt)
{
	/* Atomic: a responder answers from its sender's executor, while
	 * the sender's unlinking may clear this link (qp_quiesce()); an
	 * answer then finds no peer and is lost, as the sender goes. */
	struct soft_qp *peer = soft_load(&qp->peer);
	int ret;

	if (!peer && soft_load(&qp->tcp))
		return rdmarw__soft_tcp_xmit(qp, pkt);
	if (!peer)
		return pkt->h.kind <= SOFT_PKT_READ ?
			       rdmarw__soft_lost(qp, pkt) :
			       0;
	/* A READ request: the responder's own read section (the sender
	 * holds none); anything else runs in the sender's. */
	if (pkt->h.kind == SOFT_PKT_READ) {
		soft_br_read_lock(&qp->dev->fabric->mem_lock, peer->resp_rd);
		ret = rdmarw__soft_rcv(peer, pkt);
		soft_br_read_unlock(peer->resp_rd);
	} else {
		ret = rdmarw__soft_rcv(peer, pkt);
	}
	if (ret > 0 && (ret & SOFT_RCV_DROP))
		return rdmarw__soft_lost(qp, pkt);
	return ret;
}

bool rdmarw__soft_xmit_close(struct soft_qp *qp)
{
	struct soft_qp *peer = qp->peer;

	if (!peer && soft_load(&qp->tcp)) {
		rdmarw__soft_tcp_drop(qp);
		return false;
	}
	return peer && rdmarw__soft_qp_to_err(peer);
}

void rdmarw__soft_xmit_kick(struct soft_qp *qp)
{
	struct soft_fabric *f = qp->dev->fabric;
	struct soft_pkt resume = { .h = { .kind = SOFT_PKT_RESUME } };
	struct soft_qp *peer;

	if (!soft_load(&qp->kick_peer) || !soft_xchg(&qp->kick_peer, false))
		return;
	soft_mutex_lock(&f->lock);
	peer = qp->peer;
	if (peer && !soft_load(&peer->dying))
		peer->refs++;
	else
		peer = NULL;
	soft_mutex_unlock(&f->lock);
	if (!peer)
		return;
	resume.h.src_qpn = qp->ibqp.qp_num;
	rdmarw__soft_rcv(peer, &resume);
	soft_mutex_lock(&f->lock);
	peer->refs--;
	soft_mutex_wake(&f->lock);
	soft_mutex_unlock(&f->lock);
}

bool rdmarw__soft_xmit_end(struct soft_qp *qp)
{
	struct soft_qp *peer = qp->peer;

	return peer && rdmarw__soft_resp_end(peer);
}

/* The bytes a payload cursor holds. */
static u64 cursor_len(const struct soft_cursor *c)
{
	u64 sum = 0;
	u32 i;

	if (c->n && !c->rg)
		return UINT64_MAX;
	for (i = 0; i < c->n; i++) {
		if (c->rg[i].len > SOFT_MAX_MSG)
			return UINT64_MAX;
		sum += c->rg[i].len;
	}
	return sum;
}

/* The header's own rules: what a wire's receive path checks before any
 * role sees the packet.  True when it is well formed. */
static bool hdr_ok(const struct soft_pkt *pkt)
{
	const struct soft_hdr *h = &pkt->h;

	if (h->kind >= SOFT_PKT_NR || h->length > SOFT_MAX_MSG)
		return false;
	if (h->kind <= SOFT_PKT_READ) {
		if (!h->op || h->op->cls != (enum soft_op_class)h->kind)
			return false;
		return h->kind == SOFT_PKT_READ ||
		       cursor_len(&pkt->pay) == h->length;
	}
	if (h->kind == SOFT_PKT_READ_RESP)
		return cursor_len(&pkt->pay) == h->length;
	if (h->kind == SOFT_PKT_NAK || h->kind == SOFT_PKT_TERM)
		return h->syndrome != SOFT_OK && h->syndrome < SOFT_F_NR;
	return true;
}

int rdmarw__soft_rcv(struct soft_qp *qp, struct soft_pkt *pkt)
{
	if (!qp || !pkt || !hdr_ok(pkt))
		return -EINVAL;
	if (pkt->h.kind <= SOFT_PKT_READ)
		return rdmarw__soft_resp_rcv(qp, pkt);
	return rdmarw__soft_comp_rcv(qp, pkt);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester's transmit, inline: the loopback of soft_net.c for a
 * request whose kind the caller knows, so that each kind reaches its one
 * responder entry with no call left after LTO.  Every other packet goes
 * through rdmarw__soft_xmit() and rdmarw__soft_rcv().
 */
#ifndef RDMARW_SOFT_NET_H
#define RDMARW_SOFT_NET_H

#include "soft/soft_proto.h"

/*
 * A READ request holds no section of the sender's (its payload is the
 * responder's memory): the responder reads in its own (resp_rd), in which
 * the completer also places the response (one fabric, one memory lock).
 * Nothing else is held, so the entry may wait for a writer.
 */
static inline int soft_xmit_read(struct soft_qp *qp, struct soft_qp *peer,
				 struct soft_pkt *pkt)
{
	int ret;

	soft_br_read_lock(&qp->dev->fabric->mem_lock, peer->resp_rd);
	ret = rdmarw__soft_resp_read(peer, pkt);
	soft_br_read_unlock(peer->resp_rd);
	return ret;
}

/*
 * Loopback: the peer receives the request now, in this thread: a SEND or
 * WRITE under the sender's read section, which the payload cursor needs
 * and which covers the responder's memory too (one fabric, one memory
 * lock), a READ in the responder's own (soft_xmit_read()).  No peer, or a peer that drops it: RETRY_EXC, as the retry
 * timer of a wire would give.  @cls: @pkt->h.kind, which the caller
 * knows: each kind reaches its responder entry from one call site.
 * @wire: @qp is a TCP device's, which never has a peer on the fabric
 * (soft_qp.c links none): a constant of the requester's instance, so the
 * TCP instance has no loopback in it.
 * Return: 0 or enum soft_rcv_flags.
 */
static inline __attribute__((always_inline)) int
soft_xmit_req(struct soft_qp *qp, struct soft_pkt *pkt, enum soft_op_class cls,
	      bool wire)
{
	struct soft_qp *peer = wire ? NULL : qp->peer;
	int ret;

	/* No peer on the fabric: a TCP QP's wire, or nobody. */
	if (__builtin_expect(!peer, 0))
		return soft_load(&qp->tcp) ? rdmarw__soft_tcp_xmit(qp, pkt) :
					     rdmarw__soft_lost(qp, pkt);
	if (cls == SOFT_OPC_WRITE)
		ret = rdmarw__soft_resp_write(peer, pkt);
	else if (cls == SOFT_OPC_READ)
		ret = soft_xmit_read(qp, peer, pkt);
	else
		ret = rdmarw__soft_resp_send(peer, pkt);
	if (__builtin_expect(ret & SOFT_RCV_DROP, 0))
		return rdmarw__soft_lost(qp, pkt);
	return ret;
}

#endif /* RDMARW_SOFT_NET_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loopback TCP for the tests of the software device's TCP transport (the
 * tests reach rdmarw__soft_tcp_attach() with these sockets, or put a proxy
 * between two pairs), and the QP set-up they share: the siw profile with
 * the transport, an RC QP in INIT, its move to RTS once attached.  Asserts
 * with cmocka: include cmocka first.
 */
#ifndef RDMARW_TESTS_TCP_ENV_H
#define RDMARW_TESTS_TCP_ENV_H

#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

/**
 * tcp_loopback_pair() - two connected TCP sockets on 127.0.0.1
 * @fd: set to the connecting end ([0]) and the accepted end ([1])
 *
 * The listener (an ephemeral port) is closed before this returns; the
 * sockets are blocking, with no timeout: the caller sets what it needs.
 */
void tcp_loopback_pair(int fd[2]);

/* the remote rights the QPs and MRs of these tests grant */
#define TCP_ENV_ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

/**
 * tcp_env_profile() - the siw profile with the TCP transport
 * @p: filled
 * @threaded: progress threads (profile.threaded); the rest is siw's
 *	default (inline progress, profile.poll_rx, on a device that is not
 *	threaded)
 */
void tcp_env_profile(struct soft_profile *p, bool threaded);

/**
 * tcp_env_qp() - an RC QP in INIT, ready to attach to a connection
 * @pd: its PD
 * @cq: its send and receive CQ
 * @max_wr: Send and Receive Queue depth
 * @max_sge: SGEs per WR on both queues
 *
 * Every request signaled as asked by the WR, port 1, TCP_ENV_ACCESS.
 *
 * Return: the QP (asserted).
 */
struct ib_qp *tcp_env_qp(struct ib_pd *pd, struct ib_cq *cq, u32 max_wr,
			 u32 max_sge);

/**
 * tcp_env_rts() - move an attached QP from INIT through RTR to RTS
 * @qp: the QP
 *
 * With the attributes the core asks of these transitions; the
 * destination is the connection's, whatever the numbers say.
 */
void tcp_env_rts(struct ib_qp *qp);

#endif

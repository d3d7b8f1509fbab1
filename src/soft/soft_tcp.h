/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The software device's TCP transport (iWARP: MPA/DDP/RDMAP) as the
 * connection manager sees it: the CM makes the TCP connection and runs the
 * MPA exchange (src/cm), then hands the connected socket to the QP, as the
 * kernel's siw_cm hands its socket to siw_qp_modify().  The data path
 * (framing, placement, READs outstanding, TERMINATE) is src/soft's.
 *
 * Issue 28.  Interface agreed between the data path (soft_tcp.c) and the
 * CM's MPA table (src/cm); see docs/soft-device.md.
 */
#ifndef RDMARW_SOFT_TCP_H
#define RDMARW_SOFT_TCP_H

#include <stdbool.h>
#include <stddef.h>

#include <rdmarw/ib_verbs.h>

/* The ready-to-receive message of MPA v2 (RFC 6581), as siw offers it. */
enum soft_tcp_rtr {
	SOFT_TCP_RTR_NONE, /* MPA v1, or v2 without one */
	SOFT_TCP_RTR_WRITE0, /* a zero-length RDMA WRITE */
	SOFT_TCP_RTR_READ0, /* a zero-length RDMA READ (and its response) */
};

/*
 * Why a connection ended, for the CM's event (soft_tcp_conn.down).
 */
enum soft_tcp_down {
	SOFT_TCP_DOWN_CLOSED, /* the peer closed TCP in order (FIN) */
	SOFT_TCP_DOWN_RESET, /* reset, or an error on the socket */
	SOFT_TCP_DOWN_TERM_SENT, /* we sent a TERMINATE (bad frame) */
	SOFT_TCP_DOWN_TERM_RCVD, /* the peer sent a TERMINATE */
	SOFT_TCP_DOWN_LOCAL, /* our QP moved to ERR or was destroyed */
};

/**
 * struct soft_tcp_conn - a connection the MPA exchange settled
 * @fd: a connected TCP stream socket; the QP owns it once attached
 * @crc: FPDUs carry CRC32c (both ends agreed in MPA)
 * @ird: inbound RDMA READs this end accepts at once (its IRD as sent)
 * @ord: outbound RDMA READs this end may have in flight (the peer's IRD,
 *       at most this end's ORD)
 * @initiator: this end sent the MPA request
 * @rtr: MPA v2: the initiator sends this RTR as its first FPDU; the
 *       responder sends nothing before the peer's first FPDU has arrived
 * @pre: bytes the CM read from the socket after the MPA reply or request
 *       (FPDUs that came with it): the data path parses them first
 * @pre_len: their length
 * @down: called once when the connection ends, from the device's thread,
 *        with no lock of the device held; never after
 *        rdmarw__soft_tcp_forget() returns
 * @ctx: for @down
 */
struct soft_tcp_conn {
	int fd;
	bool crc;
	u32 ird;
	u32 ord;
	bool initiator;
	enum soft_tcp_rtr rtr;
	const void *pre;
	size_t pre_len;
	void (*down)(void *ctx, enum soft_tcp_down why);
	void *ctx;
};

/* Is @dev a software device on TCP (soft_profile.tcp)? */
bool rdmarw__soft_is_tcp(const struct ib_device *dev);

/*
 * Give @qp (INIT or RTR, on a TCP device, not attached before) its
 * connection; the CM then moves it to RTS with ib_modify_qp().  On success
 * the QP owns @c->fd (made non-blocking, TCP_NODELAY; closed when the QP
 * is destroyed); on failure the caller still does.  0, -EINVAL (not a
 * stream socket, @pre_len over 64 KiB, IRD or ORD over 1024, another
 * state), -EBUSY (already attached), -EOPNOTSUPP (not a TCP device),
 * -ENOMEM.
 */
int rdmarw__soft_tcp_attach(struct ib_qp *qp, const struct soft_tcp_conn *c);

/*
 * rdma_disconnect(): send what the Send Queue holds, then close TCP in
 * order (siw's graceful close); the QP moves to ERR and flushes.
 */
int rdmarw__soft_tcp_disconnect(struct ib_qp *qp);

/* The CM lets go of @qp's connection: no call of @down after this. */
void rdmarw__soft_tcp_forget(struct ib_qp *qp);

/**
 * struct soft_tcp_stats - who received on a TCP device's connections
 * @poll_bytes: bytes received by pollers (profile.poll_rx)
 * @poll_fpdus: FPDUs whose end a poller received
 * @thread_bytes: bytes received by the device's thread
 * @thread_fpdus: FPDUs whose end the thread received
 * @quiets: times the thread stopped waiting for a connection's data
 *          because a poller served it
 * @tx_calls: sendmsg() calls that carried framed FPDUs (the transmit
 *            buffer's drains not counted)
 * @tx_fpdus: FPDUs framed for them (a TERMINATE not counted)
 * @rx_copied: payload bytes of placed segments (WRITE, SEND, READ
 *             response) that came through the receive buffer with a
 *             header and were copied into their sink, not read into it
 */
struct soft_tcp_stats {
	u64 poll_bytes;
	u64 poll_fpdus;
	u64 thread_bytes;
	u64 thread_fpdus;
	u64 quiets;
	u64 tx_calls;
	u64 tx_fpdus;
	u64 rx_copied;
};

/* @dev's counters since it was created: 0, -EINVAL (not a TCP device). */
int rdmarw__soft_tcp_stats(struct ib_device *dev, struct soft_tcp_stats *out);

/*
 * Test hook: while @hold, @dev's TCP thread serves no connection (what it
 * would have served it serves once released); its down() calls and the
 * detaches go on.  0, -EINVAL (not a TCP device).
 */
int rdmarw__soft_tcp_hold(struct ib_device *dev, bool hold);

/*
 * Test hook: the thread steps aside for a connection a poller visited within
 * @ns (POLL_FRESH_NS, 50 us, by default), so that a test reaches that state
 * where the machine is too slow for the default (valgrind runs one thread at
 * a time).  0, -EINVAL (not a TCP device, @ns 0).
 */
int rdmarw__soft_tcp_fresh(struct ib_device *dev, u64 ns);

#endif /* RDMARW_SOFT_TCP_H */

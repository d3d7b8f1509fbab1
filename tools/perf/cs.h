/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdmarw-perf's client and server (cs.c) and their latency loops (lat.c):
 * one connection through <rdmarw/rdma_cm.h>, its QP, CQ and buffers, and
 * the messages the two ends exchange.
 *
 * Each end has one buffer of two areas of the largest size: "src", the
 * source of its WRITEs and SENDs, and "dst", which the peer WRITEs to and
 * READs from (advertised in the connection's private data, with its rkey);
 * a READ's sink is the end's own dst.  Every receive has two SGEs: a slot
 * of its own (CS_SLOT bytes) and the shared rest, so a message of up to
 * CS_SLOT bytes (control, credits) stays readable until its receive is
 * posted again while SENDs of any size land.  A control message starts
 * with CS_MAGIC; a data SEND's bytes are src's (0x5a), so the two never
 * mix.
 *
 * The client decides: for each test it sends PLAN, the server answers
 * READY, both run (the server answers pings, counts SENDs, or runs the same
 * test with -b), the client sends DONE with its figures and the server
 * RESULT with its own; BYE ends the run.  A SEND test is flow-controlled:
 * the sender starts with the peer's receive window in credits and each
 * receiver returns CREDIT messages as it posts receives again (iWARP has
 * no RNR retry: a SEND without a receive ends the connection).
 */
#ifndef RDMARW_TOOLS_PERF_CS_H
#define RDMARW_TOOLS_PERF_CS_H

#include <endian.h>
#include <pthread.h>
#include <stdio.h>

#include <rdmarw/kernel.h>
#include <rdmarw/rdma_cm.h>
#include <rdmarw/rw.h>

#include "perf.h"

#define CS_MAGIC 0x46505752U /* "RWPF" */
#define CS_VERSION 1
#define CS_SLOT 256U /* receive slot: a whole control message */
#define CS_RESERVE 16U /* receives beyond the SEND window */
#define CS_TX_SLOTS 32U /* control messages in flight, at most */

enum cs_op { CS_WRITE = 1, CS_READ = 2, CS_SEND = 3 };

enum cs_msg_type {
	CS_PLAN = 1,
	CS_READY,
	CS_DONE,
	CS_RESULT,
	CS_CREDIT,
	CS_BYE,
};

/*
 * The connection's private data, both ways (at most 56 bytes on IB).  On
 * the wire every number of the messages is little-endian.
 */
struct cs_hello {
	u32 magic;
	u16 version;
	u16 flags;
	u64 addr; /* the sender's dst area */
	u32 rkey;
	u32 window; /* SENDs it can take before returning credits */
	u64 area; /* bytes of each area */
};

/* What one end measured in a test (DONE, RESULT). */
struct cs_figures {
	u64 ops; /* I/Os, SENDs or round trips */
	u64 bytes;
	u64 ns; /* the interval */
	u64 peak_bps; /* best 1 ms window, bytes per second */
	/* latency, ns: min, max, typical (median), avg, stdev, 99%, 99.9% */
	u64 lat[7];
};

struct cs_msg {
	u32 magic;
	u32 type;
	/* PLAN */
	u8 op; /* enum cs_op */
	u8 lat;
	u8 bidir;
	u8 limit; /* -D is a limit on -n */
	u32 depth;
	u64 size;
	u64 iters; /* 0: until the duration */
	u64 duration_ns;
	/* CREDIT */
	u32 credits;
	u32 pad2;
	/* DONE, RESULT */
	struct cs_figures fig;
};

/* A transfer in flight: an R/W context or a SEND. */
struct cs_io {
	struct rdma_rw_ctx ctx;
	struct scatterlist sg;
	struct ib_cqe cqe;
	struct ib_sge sge;
	struct ib_send_wr wr;
	struct cs_io *next_free;
	struct cs_conn *c;
	bool rw; /* an R/W context to destroy */
	enum dma_data_direction dir;
};

struct cs_recv {
	struct ib_cqe cqe;
	struct ib_sge sge[2];
	struct ib_recv_wr wr;
	struct cs_conn *c;
	char *slot;
};

struct cs_tx {
	struct ib_cqe cqe;
	struct cs_conn *c;
	bool busy;
	struct cs_msg msg;
};

/**
 * struct cs_conn - one end of a connection
 * @opts: this end's options (the server takes the client's --lat and -b)
 * @o: &@opts
 * @server: the listening end
 * @role: "client" or "server"
 * @tab: where this end's table goes (stdout; the in-process server's is
 *	a memory stream, printed after the client's)
 * @cm_lock: guards what the CM thread's handler writes
 * @cm_cond: signalled on every event
 * @listen_id: the server's listener
 * @req: a CONNECT_REQUEST's new id, not accepted yet
 * @id: the connected id
 * @ev_addr: ADDR_RESOLVED came; @ev_route: ROUTE_RESOLVED; @up:
 *	ESTABLISHED; @down: DISCONNECTED
 * @cm_err: an error event's status (or -ECONNREFUSED), with @cm_what
 * @peer: the peer's hello (the REQ's or the REP's private data)
 * @dev: the device of the connection
 * @devname: its name, for the records
 * @pd: the PD; @cq: one CQ, polled directly; @qp: the RC QP; @mr: @buf's
 * @buf: the src area then the dst area, @area bytes each
 * @window: the receive window (CS_RESERVE more receives are posted)
 * @recvs: the receives; @tx: the control messages' sends; @tx_next
 * @ios: the transfers; @free_io: those not in flight
 * @credits: SENDs the peer can take now
 * @unreturned: receives posted again, not yet returned as credits
 * @inbox: a control message received (valid while @have_msg)
 * @data_*: SENDs received in the current test: count, bytes, first and
 *	last arrival
 * @pong_send: answer each data SEND with one (latency)
 * @no_credit: latency: receives are not returned as credits (the pings
 *	took none)
 * @raw_recv: every receive is a data SEND, none a control message (a
 *	--perftest connection: perftest's bytes may start like CS_MAGIC)
 * @min_window: receives cs_setup() keeps posted at least (perftest's
 *	receive depth), 0 for none
 * @pt_credit: a SEND test's window is perftest's (docs/tools.md): the
 *	word the receiver RDMA WRITEs its receive count into, which with
 *	@pt_rx_depth bounds the SENDs in flight; NULL: CS_CREDIT messages
 * @posted, @completed: transfers of the current loop
 * @err: the first failure; @closing: tearing down; @flushed: a receive
 *	or send was flushed (the QP is in ERR: disconnected, or a failure
 *	that was reported)
 */
struct cs_conn {
	struct perf_opts opts;
	const struct perf_opts *o;
	bool server;
	const char *role;
	FILE *tab;
	pthread_mutex_t cm_lock;
	pthread_cond_t cm_cond;
	struct rdma_cm_id *listen_id, *req, *id;
	bool ev_addr, ev_route, up, down;
	int cm_err;
	const char *cm_what;
	struct cs_hello peer;
	bool have_peer;
	struct ib_device *dev;
	char devname[64];
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;
	char *buf;
	size_t area, buf_len;
	u32 window, nrecv;
	u32 depth;
	struct cs_recv *recvs;
	char *slots, *rx_rest;
	struct cs_tx tx[CS_TX_SLOTS];
	u32 tx_next;
	struct cs_io *ios, *free_io;
	u32 credits, unreturned, credit_batch;
	struct cs_msg inbox;
	bool have_msg;
	u64 data_count, data_bytes;
	double data_first, data_last;
	bool pong_send, no_credit, raw_recv;
	u64 pong_size;
	u32 min_window;
	const u32 *pt_credit;
	u32 pt_rx_depth;
	u64 posted, completed;
	int err;
	bool closing, flushed;
};

/* The peer's dst area. */
static inline u64 cs_raddr(const struct cs_conn *c)
{
	return le64toh(c->peer.addr);
}

static inline char *cs_src(const struct cs_conn *c)
{
	return c->buf;
}

static inline char *cs_dst(const struct cs_conn *c)
{
	return c->buf + c->area;
}

/* cs.c, for lat.c */
int cs_fail(struct cs_conn *c, const char *what, int err);
void cs_cm_record(struct cs_conn *c, const struct rdma_cm_event *ev);
int cs_poll(struct cs_conn *c);
int cs_post_rw(struct cs_conn *c, struct cs_io *io, enum dma_data_direction dir,
	       u64 size);
int cs_post_send(struct cs_conn *c, struct cs_io *io, u64 size);
struct cs_io *cs_get_io(struct cs_conn *c);
void cs_relax(unsigned int *spins);
const char *cs_op_name(enum cs_op op);

/*
 * perftest.c: --perftest, one end of perftest's -R exchange; @dst the
 * server to connect to (a client), or NULL and @addr the address to
 * listen on (a server).  Return: 0 or a negative errno, reported.
 */
int perf_pt_run(const struct perf_opts *o, const struct sockaddr *dst,
		const struct sockaddr *addr);

/* cs.c, for perftest.c (--perftest: perftest's programs on the other end) */
void cs_init(struct cs_conn *c, const struct perf_opts *o, bool server,
	     FILE *tab);
void cs_close(struct cs_conn *c);
/* Wait until *@flag, an error event, or @secs (0: no bound). */
int cs_wait(struct cs_conn *c, const bool *flag, int secs, const char *what);
/*
 * A connecting end's id on @c, events to @handler, resolved to @dst (from
 * @src, or any address) and its route; each step bounded.  0 or reported.
 */
int cs_resolve(struct cs_conn *c, rdma_cm_event_handler handler,
	       const struct sockaddr *src, const struct sockaddr *dst);
/* A listening id on @c, events to @handler, bound to @addr.  0 or reported. */
int cs_listen(struct cs_conn *c, rdma_cm_event_handler handler,
	      const struct sockaddr *addr, int backlog);
/* The QP on @c->id, CQ, buffers of two areas of @area bytes, receives. */
int cs_setup(struct cs_conn *c, u64 area);
/* Register @len bytes at @p for the local DMA key on an ibv device. */
int cs_declare(struct cs_conn *c, void *p, size_t len);
/* READs in flight to ask for, from the device's limit. */
u8 cs_rd_atom(int dev_limit);
/* A bandwidth test of @op as the initiator: its figures into @fig. */
int cs_bw_run(struct cs_conn *c, enum cs_op op, u64 size, u64 iters,
	      double duration, bool limit, struct cs_figures *fig);
void cs_bw_header(const struct cs_conn *c, const char *peer);
/* One bandwidth row (and record): @fig as measured by @by. */
void cs_bw_row(const struct cs_conn *c, enum cs_op op, u64 size,
	       const struct cs_figures *fig, const char *by);
void cs_lat_header(const struct cs_conn *c, const char *peer);
/* One latency row (and record): @fig as measured by @by. */
void cs_lat_row(const struct cs_conn *c, enum cs_op op, u64 size,
		const struct cs_figures *fig, const char *by);

/* lat.c */

/* Latency figures of @n samples (ns), sorted in place, as perftest. */
void lat_stats(double *ns, u64 n, struct cs_figures *fig);

/*
 * The client's ping loop: @op round trips of @size bytes for -n (or -D);
 * each sample is half the round trip for WRITE and SEND, the whole for
 * READ, as ib_*_lat.
 */
int lat_client(struct cs_conn *c, enum cs_op op, u64 size,
	       struct cs_figures *fig);

/*
 * The answering side of a WRITE ping-pong: @count round trips, or with 0
 * until the client's DONE; with @posts (@count of them), the time of each
 * answer.
 */
int lat_server_write(struct cs_conn *c, u64 size, u64 count, double *posts);

#endif /* RDMARW_TOOLS_PERF_CS_H */

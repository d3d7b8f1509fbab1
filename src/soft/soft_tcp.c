// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The software device's TCP transport (issue 28): the roles' packets as
 * iWARP FPDUs (MPA framing with CRC32c, DDP tagged and untagged segments,
 * RDMAP opcodes) on a connected stream socket the CM hands over
 * (rdmarw__soft_tcp_attach()).  soft_net.c switches a QP with no fabric
 * peer and a connection here; every rule stays in its role: the receive
 * path builds a packet per DDP segment and calls rdmarw__soft_rcv().
 *
 * Threads and what each owns:
 * - the receive side of a connection has one owner at a time, the holder
 *   of rx_own (taken by exchange, never waited for): the device's thread
 *   (tcp_thread(), one per TCP device, epoll on its QPs' sockets, edge
 *   triggered) for an event or a kick, or, on an inline device with
 *   profile.poll_rx, a poller whose CQ was empty (rdmarw__soft_tcp_poll(),
 *   one pass).  The owner has the whole receive side (rx, rxb, seg, rr_*,
 *   bad_hdr, failed, why), runs the responder and the completer of a TCP
 *   QP for what arrives (under the QP's resp_rd read section), the IRQ's
 *   transmit (READ responses) and the drain of the transmit buffer; one
 *   that cannot take rx_own sets rx_again first, and the owner, after it
 *   let go, takes it again for another pass when rx_again is set (no edge
 *   of the epoll is lost while a poller owns the socket).  A poller never
 *   calls down(): it sets down_due and kicks the thread, which does.
 *   The thread steps aside while pollers serve: woken for a connection a
 *   poller visited within POLL_FRESH_NS (polled_ns), it turns that
 *   socket's data events off
 *   (quiet) and looks again every QUIET_MS, or at once when the CQ is
 *   armed (rearm, rdmarw__soft_tcp_armed());
 * - a CQ's list of its TCP QPs' connections (struct soft_tcp_cq): its
 *   spinlock, held to add, remove, rotate and count a poller (polling)
 *   only; detach takes a connection off its lists, then waits until no
 *   poller counts it (one pass);
 * - the QP's executor (the poster, or a progress thread): frames its
 *   requests (tcp_request());
 * - tx_lock: everything that goes on the socket (the transmit buffer,
 *   MSNs, the request partly framed, the ORQ: READs in flight, up to the
 *   ORD, answered in order, the IRQ, the RTR hold), so
 *   FPDUs never interleave; innermost: nothing but non-blocking socket
 *   calls under it;
 * - tcp_dev.lock: the connection list, each connection's life (gone,
 *   unreachable, orphan, forgotten, in_down); never taken under tx_lock
 *   (kicked, drop, rx_again, down_due and detached are atomics, set from
 *   anywhere); the thread holds it while it serves a batch of events and
 *   drops it around the down() callback; pollers never take it.
 *
 * Bounded buffers, allocated at attach: the transmit buffer (TX_CAP; a
 * request that finds no room waits in the Send Queue, SOFT_RCV_STALL, and
 * the thread runs the queue again once the buffer drained), the receive
 * buffer (RX_CAP), one FPDU's payload (SEG_CAP: the CRC is checked before
 * a byte is placed) and the IRQ (IRD entries).  Nothing is allocated per
 * packet.  The FPDUs of a message (or of a READ response) are framed into
 * the connection's gather arrays (bt_*: TX_BATCH headers and trailers,
 * TX_BATCH_IOV iovecs) and go in one sendmsg() (tx_flush()) when the
 * message ends, the arrays or the buffer's room are full, or the Send
 * Queue stalls: the gather is empty whenever tx_lock is free.
 */
#include "soft/soft_loc.h"
#include "soft/soft_net.h"
#include "soft/soft_tcp.h"

#include "iwarp/iwarp.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

/* payload bytes per FPDU: the ULPDU (header and payload) fits 16 bits */
#define SEG_MAX 65472u
#define SEG_CAP 65536u
#define TX_CAP (4u * 65536u)
/* what a TERMINATE needs: always kept free for one */
#define TX_TERM_ROOM 128u
#define RX_CAP 65536u
/* a payload this long or longer makes the stream a bulk one: between two
 * FPDUs the socket is read only up to the next header (RX_HDR_READ bytes:
 * a trailer and the longest header), so that the next payload is read
 * into its sink, not copied through the receive buffer */
#define RX_BULK 4096u
#define RX_HDR_READ (3 + IWARP_MPA_CRC_LEN + IWARP_HDR_MAX)
#define TX_IOV 64
/* FPDUs framed and sent together, one sendmsg() (siw_tx_hdt() gathers one
 * FPDU per call; see docs/deviations.md): at most this many, in at most
 * TX_BATCH_IOV iovecs (UIO_MAXIOV), and never more bytes than the
 * transmit buffer could take if TCP took none */
#define TX_BATCH 32
#define TX_BATCH_IOV 1024
/* READs in and out at most (RFC 6581 leaves 14 bits; siw's default 128) */
#define RD_MAX 1024u
/* recv() calls per connection per batch before the others get a turn */
#define RX_BUDGET 16
/* passes over a connection one owner runs while others ask for more */
#define RX_PASSES 4
/* connections an empty poll of a CQ serves at most */
#define POLL_CONNS 4
/* how often the thread looks whether pollers still serve its quiet
 * connections (epoll_wait()'s timeout while it has one), ms */
#define QUIET_MS 1
/* a poller that visited a connection this recently (ns) is a busy one:
 * the thread leaves the connection's data to it; a slower poller (one
 * that sleeps or yields between polls) leaves it to the thread */
#define POLL_FRESH_NS 50000u
/* the socket events the thread waits for, and while pollers serve */
#define EV_ALL (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)
#define EV_QUIET (EPOLLRDHUP | EPOLLET)
/* the payload being received goes straight to its sink (c->direct) */
#define SINK_NONE 0
#define SINK_WRITE 1
#define SINK_RRESP 2
#define SINK_SEND 3

/**
 * struct tcp_irq - a READ request this end answers (siw's IRQ entry)
 * @sink_stag: the requester's sink STag, for the response's tagged header
 * @sink_to: its TO
 * @src_stag: the source STag (checked again when the bytes are read)
 * @src_to: the source TO
 * @len: bytes to send
 * @sent: bytes sent
 */
struct tcp_irq {
	u32 sink_stag;
	u64 sink_to;
	u32 src_stag;
	u64 src_to;
	u32 len;
	u32 sent;
};

/**
 * struct tcp_orq - a READ in flight (siw's ORQ entry)
 * @done: answered (placed, or refused): the requester completes it
 * @rtr: the RTR's zero-length READ: its response is swallowed
 * @fault: what the completer's placement gave
 * @seq: its WQE's sequence number
 * @len: bytes asked
 * @got: bytes placed
 */
struct tcp_orq {
	bool done;
	bool rtr;
	u8 fault;
	u64 seq;
	u64 len;
	u64 got;
};

/**
 * struct soft_tcp_dev - a TCP device's thread
 * @thread: the thread
 * @epfd: its epoll
 * @evfd: eventfd to wake it (epoll data NULL)
 * @lock: below, and each connection's life
 * @cond: a connection became unreachable, or a down() call returned
 * @batch: batches served (an epoll_wait each)
 * @stop: the thread must end
 * @hold: test hook: the thread serves no connection (rdmarw__soft_tcp_hold())
 * @poll: pollers receive (profile.poll_rx on a device that is not threaded)
 * @fresh_ns: a poller's visit this recent makes the thread step aside
 * @st: soft_tcp_stats' counters in its order (tx_calls, tx_fpdus,
 *	rx_copied last)
 * @nquiet: connections whose data events are off (pollers serve them)
 * @looked: when the thread last looked at them (CLOCK_MONOTONIC, ns)
 * @conns: attached connections (soft_tcp.entry)
 * @grave: detached, not yet unreachable
 */
struct soft_tcp_dev {
	pthread_t thread;
	int epfd;
	int evfd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	u64 batch;
	bool stop;
	bool hold;
	bool poll;
	u64 fresh_ns;
	u64 st[8];
	u32 nquiet;
	u64 looked;
	struct list_head conns;
	struct list_head grave;
};

/**
 * struct soft_tcp_cq - a CQ's TCP connections, for its pollers
 * @lock: below; held to add, remove, rotate and count a poller only
 * @conns: struct tcp_cq_link entries of the QPs with this send or recv CQ
 * @n: their number
 */
struct soft_tcp_cq {
	struct soft_spin lock;
	struct list_head conns;
	u32 n;
};

/**
 * struct tcp_cq_link - a connection on one of its QP's CQs' lists
 * @entry: in soft_tcp_cq.conns
 * @c: the connection
 * @cq: the list's owner, NULL when not on one
 */
struct tcp_cq_link {
	struct list_head entry;
	struct soft_tcp *c;
	struct soft_tcp_cq *cq;
};

/**
 * struct soft_tcp - a QP's connection (see the header comment for owners)
 */
struct soft_tcp {
	struct soft_qp *qp;
	struct soft_tcp_dev *td;
	int fd;
	bool crc;
	bool initiator;
	enum soft_tcp_rtr rtr;
	u32 ird;
	u32 ord;
	void (*down)(void *ctx, enum soft_tcp_down why);
	void *ctx;

	/* the CQs' lists: their locks; @polling counted under them */
	struct tcp_cq_link link[2];
	int polling;

	/* any thread: the receive side's owner (atomics) */
	int rx_own;
	bool rx_again;
	u64 polled_ns;
	bool rearm;
	bool quiet;
	bool down_due;
	bool detached;

	/* the holder of rx_own */
	bool rx_poll;
	struct iwarp_rx rx;
	u8 *rxb;
	size_t rx_len;
	size_t rx_pos;
	u8 *seg;
	u32 seg_len;
	u8 direct;
	bool bulk;
	u64 rr_seq;
	u64 rr_off;
	u8 bad_hdr[IWARP_HDR_MAX];
	u8 bad_len;
	struct iwarp_hdr cur;
	bool got_first;
	bool failed;
	bool term_sent;
	enum soft_tcp_down why;

	/* tx_lock */
	pthread_mutex_t tx_lock;
	u8 *txb;
	size_t tx_head;
	size_t tx_len;
	/* the FPDUs framed and not sent yet: empty when tx_lock is free */
	struct iovec bt_iov[TX_BATCH_IOV];
	u8 bt_hdr[TX_BATCH][IWARP_HDR_MAX];
	struct iwarp_tx_trailer bt_trl[TX_BATCH];
	int bt_niov;
	u32 bt_n;
	size_t bt_bytes;
	u32 msn_send;
	u32 msn_rreq;
	u32 msn_term;
	bool tx_hold;
	bool tx_waiting;
	bool tx_err;
	bool closing;
	bool shut;
	bool tx_cur;
	u64 tx_seq;
	u64 tx_off;
	struct tcp_orq *orq;
	u32 orq_cap;
	u32 orq_head;
	u32 orq_count;
	u32 orq_rx;
	struct tcp_irq *irq;
	u32 irq_head;
	u32 irq_count;

	/* soft_tcp_dev.lock */
	struct list_head entry;
	bool gone;
	bool unreachable;
	bool orphan;
	bool kicked;
	bool drop;
	bool forgotten;
	bool in_down;
	bool down_done;
	u64 gone_batch;
};

/* the connection whose receive side this thread holds, if any */
static __thread struct soft_tcp *rx_mine;

static bool on_thread(const struct soft_tcp_dev *td)
{
	return pthread_equal(pthread_self(), td->thread);
}

static u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000u + (u64)ts.tv_nsec;
}

static void td_wake(struct soft_tcp_dev *td)
{
	u64 one = 1;
	ssize_t r = write(td->evfd, &one, sizeof(one));

	(void)r; /* a full counter is a pending wake-up already */
}

/* Ask the thread to serve @c in its next batch (any thread, any lock). */
static void poke(struct soft_tcp *c)
{
	soft_store(&c->kicked, true);
	td_wake(c->td);
}

static void td_lock(struct soft_tcp_dev *td)
{
	if (!on_thread(td))
		pthread_mutex_lock(&td->lock);
}

static void td_unlock(struct soft_tcp_dev *td)
{
	if (!on_thread(td))
		pthread_mutex_unlock(&td->lock);
}

/* ---- the transmit buffer (tx_lock) ------------------------------------ */

static size_t tx_free(const struct soft_tcp *c)
{
	return TX_CAP - c->tx_len;
}

/* Append @len bytes of @iov, from byte @skip on, to the buffer. */
static void tx_put(struct soft_tcp *c, const struct iovec *iov, int n,
		   size_t skip)
{
	for (int i = 0; i < n; i++) {
		const u8 *p = iov[i].iov_base;
		size_t len = iov[i].iov_len;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		p += skip;
		len -= skip;
		skip = 0;
		while (len) {
			size_t tail = (c->tx_head + c->tx_len) % TX_CAP;
			size_t k = TX_CAP - tail;

			if (k > len)
				k = len;
			memcpy(c->txb + tail, p, k);
			c->tx_len += k;
			p += k;
			len -= k;
		}
	}
}

static bool would_block(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

/*
 * Put framed FPDUs (@n iovecs) on the wire: straight to the socket when
 * nothing is buffered before them, the rest (what TCP did not take) into
 * the buffer, which the caller made sure has room for all of it.
 */
static void tx_fpdu(struct soft_tcp *c, struct iovec *iov, int n)
{
	size_t done = 0;

	if (!c->tx_len && !c->tx_err) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t r = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);

		soft_add(&c->td->st[5], 1);
		if (r > 0)
			done = (size_t)r;
		else if (r < 0 && !would_block(errno))
			c->tx_err = true;
	}
	if (!c->tx_err)
		tx_put(c, iov, n, done);
}

/* Send the FPDUs gathered (tx_lock; before it is let go). */
static void tx_flush(struct soft_tcp *c)
{
	if (c->bt_n)
		tx_fpdu(c, c->bt_iov, c->bt_niov);
	c->bt_n = 0;
	c->bt_niov = 0;
	c->bt_bytes = 0;
}

/* Send what the buffer holds while the socket takes it. */
static void tx_drain(struct soft_tcp *c)
{
	while (c->tx_len && !c->tx_err) {
		struct iovec iov[2];
		size_t first = TX_CAP - c->tx_head;
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 1 };
		ssize_t r;

		if (first > c->tx_len)
			first = c->tx_len;
		iov[0] = (struct iovec){ c->txb + c->tx_head, first };
		if (first < c->tx_len) {
			iov[1] = (struct iovec){ c->txb, c->tx_len - first };
			m.msg_iovlen = 2;
		}
		r = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (!would_block(errno))
				c->tx_err = true;
			return;
		}
		c->tx_head = (c->tx_head + (size_t)r) % TX_CAP;
		c->tx_len -= (size_t)r;
	}
	if (!c->tx_len)
		c->tx_head = 0;
}

/* The payload of @cur from @off, at most *@len bytes in at most @max
 * iovecs: *@len is set to the bytes gathered.  0 or -EFAULT. */
static int tx_gather(const struct soft_cursor *cur, u64 off, u32 *len,
		     struct iovec *iov, int max, int *nio)
{
	u64 want = *len, got = 0;
	u32 i = 0;
	int n = 0;

	while (i < cur->n && off >= cur->rg[i].len) {
		off -= cur->rg[i].len;
		i++;
	}
	for (; i < cur->n && got < want && n < max; i++, off = 0) {
		const struct soft_region *rg = &cur->rg[i];
		u32 hint = 0;

		while (off < rg->len && got < want && n < max) {
			u8 *p;
			u64 k;

			if (rg->cpu) {
				p = rg->cpu + off;
				k = rg->len - off;
			} else if (rdmarw__soft_region_span_at(rg, off, &hint,
							       &p, &k)) {
				return -EFAULT;
			}
			if (k > want - got)
				k = want - got;
			iov[n].iov_base = p;
			iov[n++].iov_len = k;
			got += k;
			off += k;
		}
	}
	*len = (u32)got;
	*nio = n;
	return 0;
}

/*
 * Frame @h with @len payload bytes of @cur from @off (fewer when the
 * payload needs more iovecs than one FPDU takes: *@len is set; the segment
 * is the message's last when it ends the @left bytes left) and add it to
 * the FPDUs gathered for one sendmsg() (tx_flush(); the caller flushes
 * before it lets tx_lock go), if the buffer has room for all of them
 * (beside a TERMINATE's, unless @term): what TCP does not take goes there.
 * A full gather is sent first.  0, -EAGAIN (no room), -EFAULT.
 */
static int tx_segment(struct soft_tcp *c, struct iwarp_hdr *h,
		      const struct soft_cursor *cur, u64 off, u32 *len,
		      u64 left, bool term)
{
	struct iovec pay[TX_IOV];
	u8 *hdr;
	int hl, npay = 0, n;
	size_t total, room = term ? 0 : TX_TERM_ROOM;

	if (*len && tx_gather(cur, off, len, pay, TX_IOV, &npay)) {
		c->tx_err = true;
		poke(c);
		return -EFAULT;
	}
	h->pay_len = *len;
	h->last = *len == left;
	total = (size_t)rdmarw__iwarp_hdr_len(h->opcode) + *len + 3 +
		IWARP_MPA_CRC_LEN;
	if (c->bt_n == TX_BATCH ||
	    c->bt_niov + npay + IWARP_TX_IOV_EXTRA > TX_BATCH_IOV ||
	    tx_free(c) < c->bt_bytes + total + room)
		tx_flush(c);
	if (tx_free(c) < total + room)
		return -EAGAIN;
	hdr = c->bt_hdr[c->bt_n];
	hl = rdmarw__iwarp_hdr_build(h, hdr, IWARP_HDR_MAX);
	n = hl < 0 ? hl :
		     rdmarw__iwarp_fpdu_tx(hdr, (size_t)hl, pay, npay, c->crc,
					   &c->bt_trl[c->bt_n],
					   c->bt_iov + c->bt_niov,
					   TX_BATCH_IOV - c->bt_niov);
	if (n < 0) {
		c->tx_err = true; /* cannot happen for a checked packet */
		poke(c);
		return -EFAULT;
	}
	c->bt_niov += n;
	c->bt_n++;
	c->bt_bytes += total;
	soft_add(&c->td->st[6], 1);
	return 0;
}

/* A TERMINATE (@t) for the frame whose header is c->bad_hdr (tx_lock). */
static void tx_term(struct soft_tcp *c, const struct iwarp_term_info *t)
{
	u8 buf[TX_TERM_ROOM];
	struct iovec pay, iov[1 + IWARP_TX_IOV_EXTRA];
	struct iwarp_tx_trailer trl;
	int len, n;

	if (c->term_sent)
		return;
	tx_flush(c); /* nothing gathered is left behind it */
	/* never NULL: the codec memcpy()s from it even when it copies 0
	 * bytes (UB, seen by UBSan) */
	len = rdmarw__iwarp_term_build(t, c->bad_hdr, c->bad_len, c->msn_term,
				       buf, sizeof(buf));
	if (len < (int)sizeof(struct iwarp_term))
		return;
	c->msn_term++;
	pay = (struct iovec){ buf + sizeof(struct iwarp_term),
			      (size_t)len - sizeof(struct iwarp_term) };
	n = rdmarw__iwarp_fpdu_tx(buf, sizeof(struct iwarp_term), &pay, 1,
				  c->crc, &trl, iov, 1 + IWARP_TX_IOV_EXTRA);
	if (n > 0 && tx_free(c) >= (size_t)len + 8)
		tx_fpdu(c, iov, n);
	c->term_sent = true;
}

/* ---- requests (the QP's executor) --------------------------------------- */

static u8 tx_opcode(const struct soft_hdr *h)
{
	if (h->kind == SOFT_PKT_WRITE)
		return IWARP_OP_WRITE;
	if (h->kind == SOFT_PKT_READ)
		return IWARP_OP_READ_REQ;
	if (h->op->flags & SOFT_OPF_REM_INV)
		return h->solicited ? IWARP_OP_SEND_SE_INV : IWARP_OP_SEND_INV;
	return h->solicited ? IWARP_OP_SEND_SE : IWARP_OP_SEND;
}

/* The Send Queue waits at this request; the thread runs it again. */
static int tx_stall(struct soft_tcp *c)
{
	tx_flush(c);
	c->tx_waiting = true;
	pthread_mutex_unlock(&c->tx_lock);
	return SOFT_RCV_STALL;
}

/* The ORQ's entry @i from its oldest (tx_lock). */
static struct tcp_orq *orq_at(struct soft_tcp *c, u32 i)
{
	return &c->orq[(c->orq_head + i) % c->orq_cap];
}

/* READs in flight that count against the ORD (the RTR's does not). */
static u32 orq_reads(struct soft_tcp *c)
{
	return c->orq_count - (c->orq_count && orq_at(c, 0)->rtr);
}

static int tcp_read_req(struct soft_tcp *c, const struct soft_pkt *pkt)
{
	struct iwarp_hdr h = { .opcode = IWARP_OP_READ_REQ, .last = true };
	u32 none = 0;

	/* the ORQ is full: the Send Queue stops at the READ (rxe's
	 * check_init_depth(), siw's ORQ fence) */
	if (orq_reads(c) >= c->ord)
		return tx_stall(c);
	/* The sink is named by order (the ORQ), not by STag: sink STag 0,
	 * TO 0, so a response's TO is its offset (docs/deviations.md). */
	h.msn = c->msn_rreq;
	h.read_size = (u32)pkt->h.length;
	h.src_stag = pkt->h.rkey;
	h.src_to = pkt->h.va;
	if (tx_segment(c, &h, NULL, 0, &none, 0, false))
		return tx_stall(c);
	c->msn_rreq++;
	*orq_at(c, c->orq_count++) =
		(struct tcp_orq){ .seq = pkt->h.seq, .len = pkt->h.length };
	tx_flush(c);
	pthread_mutex_unlock(&c->tx_lock);
	return SOFT_RCV_LATER;
}

bool rdmarw__soft_tcp_orq_done(struct soft_qp *qp, u64 seq, enum soft_fault *f)
{
	struct soft_tcp *c = qp->tcp;
	struct tcp_orq *e;
	bool done = false;

	if (!c)
		return false;
	pthread_mutex_lock(&c->tx_lock);
	e = orq_at(c, 0);
	if (c->orq_count && !e->rtr && e->seq == seq && e->done) {
		*f = (enum soft_fault)e->fault;
		c->orq_head = (c->orq_head + 1) % c->orq_cap;
		c->orq_count--;
		c->orq_rx--;
		done = true;
	}
	pthread_mutex_unlock(&c->tx_lock);
	return done;
}

void rdmarw__soft_tcp_orq_drop(struct soft_qp *qp)
{
	struct soft_tcp *c = qp->tcp;

	if (!c)
		return;
	pthread_mutex_lock(&c->tx_lock);
	c->orq_count = 0;
	c->orq_rx = 0;
	pthread_mutex_unlock(&c->tx_lock);
}

/* A SEND or WRITE from its checked regions, segment by segment; one the
 * buffer cannot take goes on from there when the queue runs again. */
static int tcp_request(struct soft_tcp *c, const struct soft_pkt *pkt)
{
	const struct soft_hdr *s = &pkt->h;
	u64 off = 0;

	pthread_mutex_lock(&c->tx_lock);
	/* A broken or closing connection: the thread moves the QP to ERR
	 * and the queue flushes. */
	if (c->tx_err || c->closing || c->tx_hold)
		return tx_stall(c);
	if (s->kind == SOFT_PKT_READ)
		return tcp_read_req(c, pkt);
	if (c->tx_cur && c->tx_seq == s->seq)
		off = c->tx_off;
	do {
		struct iwarp_hdr h = { .opcode = tx_opcode(s) };
		u64 left = s->length - off;
		u32 len = left > SEG_MAX ? SEG_MAX : (u32)left;

		if (s->kind == SOFT_PKT_WRITE) {
			h.stag = s->rkey;
			h.to = s->va + off;
		} else {
			h.stag = s->ex;
			h.msn = c->msn_send;
			h.mo = (u32)off;
		}
		/* fewer bytes than asked when the regions are scattered */
		if (tx_segment(c, &h, &pkt->pay, off, &len, left, false)) {
			c->tx_cur = true;
			c->tx_seq = s->seq;
			c->tx_off = off;
			return tx_stall(c);
		}
		off += len;
	} while (off < s->length);
	if (s->kind == SOFT_PKT_SEND)
		c->msn_send++;
	c->tx_cur = false;
	/* the WR completes once TCP or the buffer took all of it */
	tx_flush(c);
	pthread_mutex_unlock(&c->tx_lock);
	return 0;
}

/* ---- answers (the device's thread, inside the responder) ---------------- */

/*
 * The TERMINATE for the responder's refusal @f of the segment being
 * received (siw_qp_rx.c's choices: a tagged segment's STag is a DDP
 * tagged error, a READ request's source an RDMAP protection error, a SEND
 * that finds no receive or too short a one a DDP untagged error).  Called
 * inside the responder (the QP's read section held): the key's reason is
 * read as the refusal saw it.
 */
static void term_info(const struct soft_tcp *c, enum soft_fault f,
		      struct iwarp_term_info *t)
{
	u8 op = c->cur.opcode;
	bool send = op >= IWARP_OP_SEND && op <= IWARP_OP_SEND_SE_INV;

	*t = (struct iwarp_term_info){
		.layer = IWARP_LAYER_RDMAP,
		.etype = IWARP_RDMAP_ET_CATASTROPHIC,
		.ecode = IWARP_RDMAP_EC_CATASTROPHIC_STREAM,
	};
	if (f == SOFT_F_REM_ACCESS && op == IWARP_OP_WRITE) {
		/* siw_tagged_error(): DDP has no code for the rights */
		static const u8 code[] = {
			[SOFT_RKEY_STAG] = IWARP_DDP_EC_T_INVALID_STAG,
			[SOFT_RKEY_BOUNDS] = IWARP_DDP_EC_T_BASE_BOUNDS,
			[SOFT_RKEY_ACCESS] = IWARP_DDP_EC_T_INVALID_STAG,
			[SOFT_RKEY_PD] = IWARP_DDP_EC_T_STAG_NOT_ASSOC,
		};

		t->layer = IWARP_LAYER_DDP;
		t->etype = IWARP_DDP_ET_TAGGED;
		t->ecode = code[soft_rkey_why(c->qp->dev, c->qp->ibqp.pd,
					      c->cur.stag,
					      IB_ACCESS_REMOTE_WRITE)];
	} else if (f == SOFT_F_REM_ACCESS && op == IWARP_OP_READ_REQ) {
		/* siw_rdmap_error() */
		static const u8 code[] = {
			[SOFT_RKEY_STAG] = IWARP_RDMAP_EC_INVALID_STAG,
			[SOFT_RKEY_BOUNDS] = IWARP_RDMAP_EC_BASE_BOUNDS,
			[SOFT_RKEY_ACCESS] = IWARP_RDMAP_EC_ACCESS,
			[SOFT_RKEY_PD] = IWARP_RDMAP_EC_STAG_NOT_ASSOC,
		};

		t->etype = IWARP_RDMAP_ET_PROTECTION;
		t->ecode = code[soft_rkey_why(c->qp->dev, c->qp->ibqp.pd,
					      c->cur.src_stag,
					      IB_ACCESS_REMOTE_READ)];
	} else if (f == SOFT_F_REM_ACCESS && send) {
		t->layer = IWARP_LAYER_DDP;
		t->etype = IWARP_DDP_ET_UNTAGGED;
		t->ecode = IWARP_DDP_EC_UT_MSN_NOBUF;
	} else if (f == SOFT_F_REM_INV_REQ && send) {
		t->layer = IWARP_LAYER_DDP;
		t->etype = IWARP_DDP_ET_UNTAGGED;
		t->ecode = IWARP_DDP_EC_UT_TOO_LONG;
	} else if (f == SOFT_F_REM_INV_REQ) {
		t->etype = IWARP_RDMAP_ET_PROTECTION;
		t->ecode = IWARP_RDMAP_EC_ACCESS;
	} else if (f == SOFT_F_REM_OP) {
		t->etype = IWARP_RDMAP_ET_OPERATION;
		t->ecode = IWARP_RDMAP_EC_UNSPECIFIED;
	}
}

/* The responder answers the READ request being received: queue it in the
 * IRQ (room was checked against the IRD before the request was handed
 * over); the thread sends it (irq_pump()). */
static int tcp_irq_add(struct soft_tcp *c, const struct soft_pkt *pkt)
{
	u32 cap = c->ird ? c->ird : 1;

	pthread_mutex_lock(&c->tx_lock);
	if (c->irq_count < cap) {
		c->irq[(c->irq_head + c->irq_count) % cap] = (struct tcp_irq){
			.sink_stag = c->cur.sink_stag,
			.sink_to = c->cur.sink_to,
			.src_stag = c->cur.src_stag,
			.src_to = c->cur.src_to,
			.len = (u32)pkt->h.length,
		};
		c->irq_count++;
	}
	pthread_mutex_unlock(&c->tx_lock);
	return 0;
}

int rdmarw__soft_tcp_xmit(struct soft_qp *qp, struct soft_pkt *pkt)
{
	struct soft_tcp *c = qp->tcp;
	struct iwarp_term_info t;

	switch (pkt->h.kind) {
	case SOFT_PKT_SEND:
	case SOFT_PKT_WRITE:
	case SOFT_PKT_READ:
		return tcp_request(c, pkt);
	case SOFT_PKT_READ_RESP:
		return tcp_irq_add(c, pkt);
	case SOFT_PKT_TERM:
		term_info(c, (enum soft_fault)pkt->h.syndrome, &t);
		pthread_mutex_lock(&c->tx_lock);
		tx_term(c, &t);
		pthread_mutex_unlock(&c->tx_lock);
		return 0;
	default:
		/* no NAK or RNR on iWARP; nothing waits for a RESUME */
		return 0;
	}
}

/* ---- the device's thread: failures --------------------------------------- */

/* Close the sending side once everything buffered went (tx_lock). */
static void maybe_shut(struct soft_tcp *c)
{
	if (c->closing && !c->tx_len && !c->shut) {
		shutdown(c->fd, c->tx_err ? SHUT_RDWR : SHUT_WR);
		c->shut = true;
	}
}

/*
 * The connection ends (@why): the QP moves to ERR and its Send Queue runs
 * to flush; what is buffered (a TERMINATE) still goes, then TCP closes in
 * order.  The CM hears @why once, at the end of the batch.
 */
static void conn_fail(struct soft_tcp *c, enum soft_tcp_down why)
{
	if (c->failed)
		return;
	c->failed = true;
	c->why = why;
	pthread_mutex_lock(&c->tx_lock);
	c->closing = true;
	tx_drain(c);
	maybe_shut(c);
	pthread_mutex_unlock(&c->tx_lock);
	/* A SEND cut short (its last segment never came): the receive it
	 * took is flushed before the others, as siw_rq_flush() does with
	 * the untagged WQE in progress.  qp->rx is this thread's. */
	if (c->qp->rx.recv_taken) {
		c->qp->rx.fault = SOFT_F_FLUSH;
		c->qp->rx.inv_key_set = false;
		rdmarw__soft_resp_end(c->qp);
	}
	rdmarw__soft_qp_to_err(c->qp);
	rdmarw__soft_qp_schedule(c->qp);
	/* the thread calls down(), never a poller (it may be inside the
	 * user's poll) */
	soft_store(&c->down_due, true);
	if (!on_thread(c->td))
		td_wake(c->td);
}

/* A frame refused by the parser or the transport: TERMINATE with @t (or
 * close, when the stream cannot carry one any more). */
static void conn_refuse(struct soft_tcp *c, const struct iwarp_term_info *t)
{
	if (t->close) {
		conn_fail(c, SOFT_TCP_DOWN_RESET);
		return;
	}
	pthread_mutex_lock(&c->tx_lock);
	tx_term(c, t);
	pthread_mutex_unlock(&c->tx_lock);
	conn_fail(c, SOFT_TCP_DOWN_TERM_SENT);
}

static void refuse(struct soft_tcp *c, u8 layer, u8 etype, u8 ecode)
{
	struct iwarp_term_info t = { .layer = layer,
				     .etype = etype,
				     .ecode = ecode };

	conn_refuse(c, &t);
}

/* ---- the device's thread: READ responses out ----------------------------- */

/*
 * Send the IRQ's responses, oldest first, while the buffer has room.  The
 * source is checked again (the responder checked it when the request came;
 * the MR may have been invalidated since): under the QP's responder read
 * section, with tx_lock inside it.
 */
static void irq_pump(struct soft_tcp *c)
{
	struct soft_qp *qp = c->qp;
	struct soft_fabric *f = qp->dev->fabric;
	const struct soft_opcode *rd = rdmarw__soft_opcode(IB_WR_RDMA_READ);
	u32 cap = c->ird ? c->ird : 1;

	while (!c->failed) {
		struct soft_region rg = { .dev = qp->dev };
		struct soft_cursor cur = { .rg = &rg, .n = 1 };
		struct tcp_irq *e;
		bool ok, full = false;

		pthread_mutex_lock(&c->tx_lock);
		if (!c->irq_count || c->tx_err || c->term_sent) {
			pthread_mutex_unlock(&c->tx_lock);
			return;
		}
		pthread_mutex_unlock(&c->tx_lock);
		soft_br_read_lock(&f->mem_lock, qp->resp_rd);
		pthread_mutex_lock(&c->tx_lock);
		e = &c->irq[c->irq_head];
		ok = !e->len ||
		     !soft_mr_check(qp->dev, qp->ibqp.pd, e->src_stag,
				    e->src_to, e->len, rd->rem_access,
				    SOFT_LOOKUP_REMOTE, &rg);
		if (!ok) {
			pthread_mutex_unlock(&c->tx_lock);
			soft_br_read_unlock(qp->resp_rd);
			refuse(c, IWARP_LAYER_RDMAP, IWARP_RDMAP_ET_PROTECTION,
			       IWARP_RDMAP_EC_INVALID_STAG);
			return;
		}
		do {
			struct iwarp_hdr h = { .opcode = IWARP_OP_READ_RESP };
			u32 left = e->len - e->sent;
			u32 len = left > SEG_MAX ? SEG_MAX : left;

			h.stag = e->sink_stag;
			h.to = e->sink_to + e->sent;
			if (tx_segment(c, &h, &cur, e->sent, &len, left,
				       false)) {
				full = true;
				break;
			}
			e->sent += len;
		} while (e->sent < e->len);
		if (!full) {
			c->irq_head = (c->irq_head + 1) % cap;
			c->irq_count--;
		}
		tx_flush(c);
		pthread_mutex_unlock(&c->tx_lock);
		soft_br_read_unlock(qp->resp_rd);
		if (full)
			return;
	}
}

/* ---- the receive side's owner: receive ---------------------------------- */

/* Count @bytes and @fpdus received by the owner (a poller or the thread). */
static void rx_count(struct soft_tcp *c, u64 bytes, u64 fpdus)
{
	u64 *st = &c->td->st[c->rx_poll ? 0 : 2];

	if (bytes)
		soft_add(&st[0], bytes);
	if (fpdus)
		soft_add(&st[1], fpdus);
}

/* After the responder's answer @ret to a segment: finish the message; a
 * refusal has queued its TERMINATE. */
static void rx_after(struct soft_tcp *c, int ret)
{
	struct soft_qp *qp = c->qp;

	if (ret > 0 && (ret & SOFT_RCV_END) && rdmarw__soft_resp_end(qp))
		rdmarw__soft_qp_schedule(qp);
	if (c->term_sent)
		conn_fail(c, SOFT_TCP_DOWN_TERM_SENT);
	else if (ret < 0 || soft_qp_state(qp) == IB_QPS_ERR)
		conn_fail(c, SOFT_TCP_DOWN_LOCAL);
}

/* Hand @pkt to the QP's roles, in its responder read section; finish the
 * message after it; a refusal has queued its TERMINATE. */
static void rx_deliver(struct soft_tcp *c, struct soft_pkt *pkt)
{
	struct soft_qp *qp = c->qp;
	struct soft_fabric *f = qp->dev->fabric;
	int ret;

	soft_br_read_lock(&f->mem_lock, qp->resp_rd);
	ret = rdmarw__soft_rcv(qp, pkt);
	soft_br_read_unlock(qp->resp_rd);
	rx_after(c, ret);
}

/* ---- the device's thread: a WRITE's payload straight into its sink ------ */

/* @pkt: the SEND segment being received, @len bytes from @off in it. */
static void send_hdr(const struct soft_tcp *c, struct soft_pkt *pkt, u32 off,
		     u32 len)
{
	const struct iwarp_hdr *h = &c->cur;

	pkt->h.op = rdmarw__soft_opcode((h->opcode == IWARP_OP_SEND_INV ||
					 h->opcode == IWARP_OP_SEND_SE_INV) ?
						IB_WR_SEND_WITH_INV :
						IB_WR_SEND);
	pkt->h.kind = SOFT_PKT_SEND;
	pkt->h.solicited = h->opcode == IWARP_OP_SEND_SE ||
			   h->opcode == IWARP_OP_SEND_SE_INV;
	pkt->h.ex = h->stag;
	pkt->h.va = (u64)h->mo + off;
	pkt->h.length = len;
	pkt->h.more = !h->last;
}

/*
 * The responder's rules for the rest of the WRITE segment being received,
 * [TO + seg_len, TO + its payload length), with the QP's responder read
 * section held (by the caller, until it has placed its bytes): 0 and *@rg
 * the sink, or the refusal (its TERMINATE queued).
 */
static int sink_check(struct soft_tcp *c, struct soft_region *rg)
{
	struct soft_pkt pkt = { 0 };

	pkt.h.op = rdmarw__soft_opcode(IB_WR_RDMA_WRITE);
	pkt.h.kind = SOFT_PKT_WRITE;
	pkt.h.rkey = c->cur.stag;
	pkt.h.va = c->cur.to + c->seg_len;
	pkt.h.length = c->cur.pay_len - c->seg_len;
	return rdmarw__soft_resp_write_sink(c->qp, &pkt, rg);
}

/*
 * The sink refused @ret: the responder's end, then the connection goes
 * (a dropped segment is one only before its first byte: the rest of the
 * frame is received and dropped whole at its end).
 */
static void sink_refused(struct soft_tcp *c, int ret)
{
	bool first = !c->seg_len;

	c->direct = SINK_NONE;
	rx_after(c, ret);
	if (!first && !c->failed)
		conn_fail(c, SOFT_TCP_DOWN_LOCAL);
}

/*
 * The completer's sinks for the rest of the READ response segment being
 * received (the READ it answers named at its header), while that READ is
 * still the ORQ's next to answer and the QP is not in ERR (read section
 * held): 0 and *@cur, or -ENOENT/-EACCES.
 */
static int rresp_sink(struct soft_tcp *c, struct soft_cursor *cur)
{
	struct soft_hdr h = { .kind = SOFT_PKT_READ_RESP,
			      .seq = c->rr_seq,
			      .va = c->rr_off + c->seg_len,
			      .length = c->cur.pay_len - c->seg_len,
			      .more = !c->cur.last };
	bool live;

	pthread_mutex_lock(&c->tx_lock);
	live = c->orq_rx < c->orq_count &&
	       orq_at(c, c->orq_rx)->seq == c->rr_seq;
	pthread_mutex_unlock(&c->tx_lock);
	if (!live || soft_qp_state(c->qp) == IB_QPS_ERR)
		return -ENOENT;
	return rdmarw__soft_comp_read_sink(c->qp, &h, cur);
}

/*
 * The receive's regions for the rest of the SEND segment being received,
 * [MO + seg_len, MO + its payload length) (read section held): 0 and *@cur,
 * or the refusal (its TERMINATE queued).  The message's first segment takes
 * the receive.
 */
static int send_sink(struct soft_tcp *c, struct soft_cursor *cur)
{
	struct soft_pkt pkt = { 0 };

	send_hdr(c, &pkt, c->seg_len, c->cur.pay_len - c->seg_len);
	return rdmarw__soft_resp_send_sink(c->qp, &pkt, cur);
}

/* The sink of the rest of the segment (read section held): see above. */
static int sink_get(struct soft_tcp *c, struct soft_cursor *cur,
		    struct soft_region *rg)
{
	if (c->direct == SINK_RRESP)
		return rresp_sink(c, cur);
	if (c->direct == SINK_SEND)
		return send_sink(c, cur);
	*cur = (struct soft_cursor){ .rg = rg, .n = 1 };
	return sink_check(c, rg);
}

/* The sink's iovecs for @len bytes from its start (at most @max). */
static int sink_iov(struct soft_tcp *c, const struct soft_cursor *cur, u32 *len,
		    struct iovec *iov, int max, int *n)
{
	(void)c;
	return tx_gather(cur, 0, len, iov, max, n);
}

/* A received piece of the payload (CRC fed already): into the sink, checked
 * again (the MR may have gone since the header). */
static void sink_put(struct soft_tcp *c, const u8 *data, u32 n)
{
	struct soft_qp *qp = c->qp;
	struct iovec iov[TX_IOV];
	struct soft_cursor cur;
	struct soft_region rg;
	int ret, k = 0;

	soft_add(&c->td->st[7], n);
	soft_br_read_lock(&qp->dev->fabric->mem_lock, qp->resp_rd);
	ret = sink_get(c, &cur, &rg);
	while (!ret && n) {
		u32 len = n;

		if (sink_iov(c, &cur, &len, iov, TX_IOV, &k) || !len) {
			ret = -EFAULT;
			break;
		}
		for (int i = 0; i < k; i++) {
			memcpy(iov[i].iov_base, data, iov[i].iov_len);
			data += iov[i].iov_len;
		}
		c->seg_len += len;
		n -= len;
		if (n)
			ret = sink_get(c, &cur, &rg);
	}
	soft_br_read_unlock(qp->resp_rd);
	if (!ret)
		return;
	sink_refused(c, ret);
	if (!c->failed) {
		/* dropped before its first byte: the frame goes whole */
		memcpy(c->seg + c->seg_len, data, n);
		c->seg_len += n;
	}
}

/*
 * Receive the payload left straight into the sink, the CRC fed from it,
 * and after it (when the sink's iovecs hold all of it) the trailer and
 * the next FPDU's header into the receive buffer.  The recv() of at most
 * what the header announced, the range the responder accepted, runs
 * inside the read section: the sink cannot go meanwhile.  Return: what
 * recvmsg() returned.
 */
static ssize_t sink_recv(struct soft_tcp *c, size_t left)
{
	struct soft_qp *qp = c->qp;
	struct iovec iov[TX_IOV + 1];
	struct msghdr m = { .msg_iov = iov };
	struct iwarp_term_info t;
	struct soft_cursor cur;
	struct soft_region rg;
	u32 len = (u32)left;
	size_t placed;
	ssize_t r = -1;
	int ret, err, k = 0;

	soft_br_read_lock(&qp->dev->fabric->mem_lock, qp->resp_rd);
	ret = sink_get(c, &cur, &rg);
	if (ret || sink_iov(c, &cur, &len, iov, TX_IOV, &k) || !len) {
		soft_br_read_unlock(qp->resp_rd);
		sink_refused(c, ret ? ret : SOFT_RCV_DROP);
		errno = EAGAIN;
		return -1;
	}
	/* the trailer and a header as long as this one's (the next FPDU of
	 * a message has the same opcode: a SEND's header is longer than a
	 * WRITE's, and one cut here would send its payload through the
	 * receive buffer) */
	if (len == left)
		iov[k++] = (struct iovec){
			c->rxb,
			3 + IWARP_MPA_CRC_LEN +
				(size_t)rdmarw__iwarp_hdr_len(c->cur.opcode)
		};
	m.msg_iovlen = (size_t)k;
	r = recvmsg(c->fd, &m, MSG_DONTWAIT);
	err = errno;
	if (r > 0) {
		placed = (size_t)r < len ? (size_t)r : len;
		c->seg_len += (u32)placed;
		for (int i = 0; placed; i++) {
			size_t n = iov[i].iov_len < placed ? iov[i].iov_len :
							     placed;

			rdmarw__iwarp_rx_placed(&c->rx, iov[i].iov_base, n, &t);
			placed -= n;
		}
	}
	soft_br_read_unlock(qp->resp_rd);
	errno = err;
	return r;
}

static void rx_request(struct soft_tcp *c, struct soft_pkt *pkt)
{
	const struct iwarp_hdr *h = &c->cur;
	struct soft_region rg = { .dev = c->qp->dev,
				  .addr = (u64)(uintptr_t)c->seg,
				  .len = c->seg_len,
				  .cpu = c->seg };

	pkt->h.src_qpn = 0;
	pkt->h.length = c->seg_len;
	pkt->pay = (struct soft_cursor){ .rg = &rg, .n = 1 };
	switch (h->opcode) {
	case IWARP_OP_WRITE:
		pkt->h.op = rdmarw__soft_opcode(IB_WR_RDMA_WRITE);
		pkt->h.kind = SOFT_PKT_WRITE;
		pkt->h.rkey = h->stag;
		pkt->h.va = h->to;
		break;
	case IWARP_OP_READ_REQ:
		pkt->h.op = rdmarw__soft_opcode(IB_WR_RDMA_READ);
		pkt->h.kind = SOFT_PKT_READ;
		pkt->h.rkey = h->src_stag;
		pkt->h.va = h->src_to;
		pkt->h.length = h->read_size;
		pkt->pay = (struct soft_cursor){ 0 };
		break;
	default: /* the SENDs */
		send_hdr(c, pkt, 0, c->seg_len);
		break;
	}
	rx_deliver(c, pkt);
}

static void rresp_account(struct soft_tcp *c, int ret);

/* A READ response segment: it must continue the oldest READ in flight
 * that is not answered yet. */
static void rx_rresp(struct soft_tcp *c)
{
	const struct iwarp_hdr *h = &c->cur;
	struct soft_region rg = { .dev = c->qp->dev,
				  .addr = (u64)(uintptr_t)c->seg,
				  .len = c->seg_len,
				  .cpu = c->seg };
	struct soft_pkt pkt = { .pay = { .rg = &rg, .n = 1 } };
	struct soft_qp *qp = c->qp;
	struct soft_fabric *f = qp->dev->fabric;
	struct tcp_orq *e = NULL, rd;
	bool ok, wake = false;
	int ret;

	pthread_mutex_lock(&c->tx_lock);
	if (c->orq_rx < c->orq_count)
		e = orq_at(c, c->orq_rx);
	ok = e && h->to == e->got && c->seg_len <= e->len - e->got &&
	     (!h->last || e->got + c->seg_len == e->len);
	if (ok)
		rd = *e;
	if (ok && rd.rtr && h->last) {
		/* the RTR's: swallowed; it was the oldest */
		c->orq_head = (c->orq_head + 1) % c->orq_cap;
		c->orq_count--;
		wake = c->tx_waiting;
		c->tx_waiting = false;
	}
	pthread_mutex_unlock(&c->tx_lock);
	if (!ok) {
		/* siw_proc_rresp(): no READ waits for it (a QP in ERR has
		 * forgotten its READs: the connection is going) */
		if (soft_qp_state(qp) != IB_QPS_ERR)
			refuse(c, IWARP_LAYER_DDP, IWARP_DDP_ET_CATASTROPHIC,
			       0);
		return;
	}
	if (rd.rtr) {
		if (wake)
			rdmarw__soft_qp_schedule(qp);
		return;
	}
	pkt.h.kind = SOFT_PKT_READ_RESP;
	pkt.h.seq = rd.seq;
	pkt.h.va = rd.got;
	pkt.h.length = c->seg_len;
	pkt.h.more = !h->last;
	soft_br_read_lock(&f->mem_lock, qp->resp_rd);
	ret = rdmarw__soft_rcv(qp, &pkt);
	soft_br_read_unlock(qp->resp_rd);
	rresp_account(c, ret);
}

/* The ORQ's account of the READ response segment just placed (the
 * completer's answer @ret). */
static void rresp_account(struct soft_tcp *c, int ret)
{
	const struct iwarp_hdr *h = &c->cur;
	struct soft_qp *qp = c->qp;
	struct tcp_orq *e;
	bool wake = false;

	pthread_mutex_lock(&c->tx_lock);
	/* the entry is where it was (only this thread moves orq_rx, and the
	 * requester pops answered entries only), unless the QP went to ERR
	 * and forgot its READs meanwhile */
	if (c->orq_rx >= c->orq_count) {
		pthread_mutex_unlock(&c->tx_lock);
		return;
	}
	e = orq_at(c, c->orq_rx);
	e->got += c->seg_len;
	if (ret > 0 && (ret & SOFT_RCV_ANSWERED)) {
		e->done = true;
		e->fault = (u8)qp->comp_fault;
		qp->comp_fault = SOFT_OK;
		c->orq_rx++;
		wake = true;
	} else if (h->last) {
		/* its WQE is gone (flushed): the QP is in ERR */
		e->done = true;
		e->fault = SOFT_F_FLUSH;
		c->orq_rx++;
		wake = true;
	}
	pthread_mutex_unlock(&c->tx_lock);
	if (wake)
		rdmarw__soft_qp_schedule(qp);
}

/*
 * A READ response segment's header: when it continues the READ the ORQ
 * answers next and the completer accepts that READ's sinks for the
 * segment's range, its payload goes straight there (siw_proc_rresp()
 * places before the CRC as well).  Anything else keeps the FPDU's buffer
 * and meets the same refusals at its end as before.
 */
static void rresp_begin(struct soft_tcp *c)
{
	const struct iwarp_hdr *h = &c->cur;
	struct soft_qp *qp = c->qp;
	struct soft_cursor cur;
	struct tcp_orq *e = NULL;
	bool ok;
	int ret;

	pthread_mutex_lock(&c->tx_lock);
	if (c->orq_rx < c->orq_count)
		e = orq_at(c, c->orq_rx);
	ok = e && !e->rtr && h->to == e->got && h->pay_len <= e->len - e->got &&
	     (!h->last || e->got + h->pay_len == e->len);
	if (ok) {
		c->rr_seq = e->seq;
		c->rr_off = e->got;
	}
	pthread_mutex_unlock(&c->tx_lock);
	if (!ok)
		return;
	c->direct = SINK_RRESP;
	soft_br_read_lock(&qp->dev->fabric->mem_lock, qp->resp_rd);
	ret = rresp_sink(c, &cur);
	soft_br_read_unlock(qp->resp_rd);
	if (ret)
		c->direct = SINK_NONE;
}

/* A READ response segment placed whole, its CRC right: answer. */
static void rresp_placed(struct soft_tcp *c)
{
	struct soft_hdr h = { .kind = SOFT_PKT_READ_RESP,
			      .seq = c->rr_seq,
			      .va = c->rr_off,
			      .length = c->seg_len,
			      .more = !c->cur.last };
	struct soft_qp *qp = c->qp;
	int ret;

	soft_br_read_lock(&qp->dev->fabric->mem_lock, qp->resp_rd);
	ret = rdmarw__soft_comp_read_placed(qp, &h);
	soft_br_read_unlock(qp->resp_rd);
	rresp_account(c, ret);
}

/* A SEND segment placed whole, its CRC right: the responder ends it. */
static void send_placed(struct soft_tcp *c)
{
	struct soft_pkt pkt = { 0 };
	struct soft_qp *qp = c->qp;
	int ret;

	send_hdr(c, &pkt, 0, c->seg_len);
	soft_br_read_lock(&qp->dev->fabric->mem_lock, qp->resp_rd);
	ret = rdmarw__soft_resp_send_placed(qp, &pkt);
	soft_br_read_unlock(qp->resp_rd);
	rx_after(c, ret);
}

/* The first FPDU from the peer: a responder of an RTR exchange may send. */
static void rx_first(struct soft_tcp *c)
{
	bool wake;

	c->got_first = true;
	pthread_mutex_lock(&c->tx_lock);
	wake = c->tx_hold && c->tx_waiting;
	c->tx_hold = false;
	if (wake)
		c->tx_waiting = false;
	pthread_mutex_unlock(&c->tx_lock);
	if (wake)
		rdmarw__soft_qp_schedule(c->qp);
}

/* A whole FPDU with its CRC right: its payload is in c->seg. */
static void rx_fpdu(struct soft_tcp *c)
{
	const struct iwarp_hdr *h = &c->cur;
	struct soft_pkt pkt = { 0 };
	struct iwarp_hdr bad;
	bool full;

	if (!c->got_first)
		rx_first(c);
	if (c->direct == SINK_WRITE) {
		/* placed already, its CRC right */
		c->direct = SINK_NONE;
		soft_count(&c->qp->st_resp_bytes, c->seg_len);
		return;
	}
	if (c->direct == SINK_RRESP) {
		c->direct = SINK_NONE;
		rresp_placed(c);
		return;
	}
	if (c->direct == SINK_SEND) {
		c->direct = SINK_NONE;
		send_placed(c);
		return;
	}
	switch (h->opcode) {
	case IWARP_OP_READ_RESP:
		rx_rresp(c);
		return;
	case IWARP_OP_TERMINATE:
		rdmarw__iwarp_term_parse(h, c->seg, c->seg_len, &bad);
		conn_fail(c, SOFT_TCP_DOWN_TERM_RCVD);
		return;
	case IWARP_OP_READ_REQ:
		/* beyond the IRD we gave: siw_init_rresp()'s refusal */
		pthread_mutex_lock(&c->tx_lock);
		full = c->irq_count >= c->ird;
		pthread_mutex_unlock(&c->tx_lock);
		if (full) {
			refuse(c, IWARP_LAYER_RDMAP, IWARP_RDMAP_ET_OPERATION,
			       IWARP_RDMAP_EC_CATASTROPHIC_STREAM);
			return;
		}
		break;
	default:
		break;
	}
	rx_request(c, &pkt);
}

/*
 * A header checked by the parser: a WRITE's payload goes straight to its
 * sink once the responder accepted the whole segment's range (siw's
 * siw_proc_write() checks the STag before the data), a SEND's into its
 * receive once the responder took it and accepted its SGEs for the range
 * (siw_proc_send()); a refusal TERMINATEs before a byte is placed.  A READ
 * response goes to its READ's sinks (rresp_begin()).  The CRC is checked
 * at the FPDU's end: a bad one fails the connection, and the receive a
 * SEND took is flushed with only its accepted range written.
 */
static void rx_header(struct soft_tcp *c)
{
	struct soft_qp *qp = c->qp;
	struct soft_cursor cur;
	struct soft_region rg;
	u8 op = c->cur.opcode;
	int ret;

	c->direct = SINK_NONE;
	if (!c->cur.pay_len)
		return;
	if (op == IWARP_OP_READ_RESP) {
		rresp_begin(c);
		return;
	}
	if (op >= IWARP_OP_SEND && op <= IWARP_OP_SEND_SE_INV)
		c->direct = SINK_SEND;
	else if (op == IWARP_OP_WRITE)
		c->direct = SINK_WRITE;
	else
		return;
	soft_br_read_lock(&qp->dev->fabric->mem_lock, qp->resp_rd);
	ret = sink_get(c, &cur, &rg);
	soft_br_read_unlock(qp->resp_rd);
	if (ret)
		sink_refused(c, ret);
}

/* Feed the bytes received to the parser, one event at a time. */
static void rx_parse(struct soft_tcp *c)
{
	while (c->rx_pos < c->rx_len && !c->failed) {
		struct iwarp_term_info t;
		const void *data;
		size_t used, n;
		int ev;

		ev = rdmarw__iwarp_rx_feed(&c->rx, c->rxb + c->rx_pos,
					   c->rx_len - c->rx_pos, &used, &data,
					   &n, &t);
		c->rx_pos += used;
		if (ev < 0) {
			/* a header refused: the TERMINATE copies it */
			if (t.layer != IWARP_LAYER_LLP) {
				c->bad_len = c->rx.have;
				memcpy(c->bad_hdr, c->rx.hdr, c->bad_len);
			}
			conn_refuse(c, &t);
			return;
		}
		switch (ev) {
		case IWARP_RX_HDR:
			c->cur = c->rx.cur;
			c->bad_len = c->rx.cur.hdr_len;
			memcpy(c->bad_hdr, c->rx.hdr, c->bad_len);
			c->seg_len = 0;
			rx_header(c);
			break;
		case IWARP_RX_PAY:
			if (c->direct) {
				sink_put(c, data, (u32)n);
				break;
			}
			/* at most the ULPDU's 16-bit length in all */
			memcpy(c->seg + c->seg_len, data, n);
			c->seg_len += (u32)n;
			break;
		case IWARP_RX_END:
			rx_count(c, 0, 1);
			c->bulk = c->cur.pay_len >= RX_BULK;
			rx_fpdu(c);
			break;
		default:
			break;
		}
	}
}

/* Receive until the socket is empty (or the budget is spent: *@more). */
static void conn_rx(struct soft_tcp *c, bool *more)
{
	for (int i = 0; !c->failed; i++) {
		struct iwarp_term_info t;
		size_t left;
		ssize_t r;

		rx_parse(c);
		if (c->failed)
			return;
		if (i == RX_BUDGET) {
			*more = true;
			return;
		}
		c->rx_pos = 0;
		c->rx_len = 0;
		left = rdmarw__iwarp_rx_pay_left(&c->rx);
		if (left && c->direct) {
			r = sink_recv(c, left);
			if (r > 0)
				rx_count(c, (u64)r, 0);
			if (c->failed)
				return;
			if (!c->direct)
				continue; /* dropped: the FPDU's buffer */
			if (r > 0) {
				/* beyond the payload: trailer, next header */
				if ((size_t)r > left)
					c->rx_len = (size_t)r - left;
				continue;
			}
		} else if (left) {
			/* inside a payload: straight into the FPDU's buffer,
			 * no pass through the receive buffer */
			u8 *p = c->seg + c->seg_len;

			r = recv(c->fd, p, left, MSG_DONTWAIT);
			if (r > 0) {
				rx_count(c, (u64)r, 0);
				rdmarw__iwarp_rx_placed(&c->rx, p, (size_t)r,
							&t);
				c->seg_len += (u32)r;
				continue;
			}
		} else {
			/* small FPDUs: several per call; in a bulk stream
			 * the next header alone (its payload goes to its
			 * sink with the next call) */
			r = recv(c->fd, c->rxb, c->bulk ? RX_HDR_READ : RX_CAP,
				 MSG_DONTWAIT);
		}
		if (r > 0) {
			rx_count(c, (u64)r, 0);
			c->rx_len = (size_t)r;
		} else if (!r) {
			/* in order: cut inside a frame, or between two */
			rdmarw__iwarp_rx_eof(&c->rx, &t);
			conn_fail(c, SOFT_TCP_DOWN_CLOSED);
		} else if (!would_block(errno)) {
			conn_fail(c, SOFT_TCP_DOWN_RESET);
		} else if (errno != EINTR) {
			return;
		}
	}
}

/* Serve @c: a drop asked for, received bytes, READ responses, the buffer. */
static void conn_run(struct soft_tcp *c, bool *more)
{
	bool wake, err;

	if (soft_load(&c->drop))
		conn_fail(c, SOFT_TCP_DOWN_LOCAL);
	if (!c->failed)
		conn_rx(c, more);
	/*
	 * READ responses while the socket takes them: a drain that emptied
	 * the buffer without EAGAIN arms no EPOLLOUT edge, so the IRQ must
	 * not wait for one (the budget spent: next batch).
	 */
	for (int i = 0;; i++) {
		bool left;

		irq_pump(c);
		pthread_mutex_lock(&c->tx_lock);
		tx_drain(c);
		left = c->irq_count && !c->tx_err && !c->term_sent &&
		       !c->failed && tx_free(c) >= TX_CAP / 2;
		pthread_mutex_unlock(&c->tx_lock);
		if (!left)
			break;
		if (i == RX_BUDGET) {
			*more = true;
			break;
		}
	}
	pthread_mutex_lock(&c->tx_lock);
	maybe_shut(c);
	wake = c->tx_waiting && !c->tx_hold &&
	       (c->tx_err || c->closing || tx_free(c) >= TX_CAP / 2);
	if (wake)
		c->tx_waiting = false;
	err = c->tx_err;
	pthread_mutex_unlock(&c->tx_lock);
	if (err)
		conn_fail(c, SOFT_TCP_DOWN_RESET);
	if (wake)
		rdmarw__soft_qp_schedule(c->qp);
}

/* ---- the receive side's owner ------------------------------------------- */

/*
 * Take @c's receive side, or leave its owner a note to run another pass:
 * the note is set before the exchange, and the owner reads it after it let
 * go, so one of the two sees the other (both sequentially consistent).
 */
static bool rx_take(struct soft_tcp *c)
{
	__atomic_store_n(&c->rx_again, true, __ATOMIC_SEQ_CST);
	return !__atomic_exchange_n(&c->rx_own, 1, __ATOMIC_SEQ_CST);
}

/* Let go; true when another pass was asked for and this thread took the
 * receive side back for it. */
static bool rx_release(struct soft_tcp *c)
{
	__atomic_store_n(&c->rx_own, 0, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&c->rx_again, __ATOMIC_SEQ_CST) ||
	    soft_load(&c->detached))
		return false;
	return !__atomic_exchange_n(&c->rx_own, 1, __ATOMIC_SEQ_CST);
}

/*
 * Serve @c (its receive side taken) while someone asks for another pass,
 * at most RX_PASSES, then let go.  *@more: the budget ran out, or a pass
 * is still asked for: the caller makes sure the thread comes back.
 */
static void rx_serve(struct soft_tcp *c, bool poller, bool *more)
{
	struct soft_tcp *outer = rx_mine;

	rx_mine = c;
	for (int i = 1;; i++) {
		c->rx_poll = poller;
		__atomic_store_n(&c->rx_again, false, __ATOMIC_SEQ_CST);
		conn_run(c, more);
		if (*more || i == RX_PASSES) {
			__atomic_store_n(&c->rx_own, 0, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&c->rx_again, __ATOMIC_SEQ_CST))
				*more = true;
			break;
		}
		if (!rx_release(c))
			break;
	}
	rx_mine = outer;
}

/* The thread serves @c, unless its receive side is someone else's (who
 * runs another pass then). */
static void td_serve(struct soft_tcp *c, bool *more)
{
	soft_store(&c->kicked, false);
	if (rx_take(c))
		rx_serve(c, false, more);
}

/* ---- pollers (profile.poll_rx) ------------------------------------------- */

/* The poller's pass over @c (counted in c->polling, its last touch of @c
 * the decrement): its receive side if free; a budget spent or a pass
 * still asked for goes to the thread. */
static void poll_conn(struct soft_tcp *c)
{
	bool more = false;

	/* a poller serves it: the thread may stop waking for its data */
	soft_store(&c->polled_ns, mono_ns());
	if (!__atomic_exchange_n(&c->rx_own, 1, __ATOMIC_SEQ_CST)) {
		rx_serve(c, true, &more);
		/* quiet, the thread looks within QUIET_MS whether a poller
		 * still comes; else no edge may come for what is left */
		if (more && !soft_load(&c->quiet))
			poke(c);
	}
	__atomic_sub_fetch(&c->polling, 1, __ATOMIC_RELEASE);
}

bool rdmarw__soft_tcp_poll(struct soft_cq *cq)
{
	struct soft_tcp_cq *p = soft_load(&cq->tcp);
	u32 visits = POLL_CONNS;
	bool ran = false;

	for (u32 i = 0; i < visits; i++) {
		struct tcp_cq_link *l = NULL;

		soft_spin_lock(&p->lock);
		if (p->n < visits)
			visits = p->n;
		if (i < visits) {
			/* the oldest served goes last */
			l = list_first_entry(&p->conns, struct tcp_cq_link,
					     entry);
			list_move_tail(&l->entry, &p->conns);
			__atomic_add_fetch(&l->c->polling, 1, __ATOMIC_RELAXED);
		}
		soft_spin_unlock(&p->lock);
		if (!l)
			break;
		poll_conn(l->c);
		ran = true;
	}
	return ran;
}

void rdmarw__soft_tcp_armed(struct soft_cq *cq)
{
	struct soft_tcp_cq *p = soft_load(&cq->tcp);
	struct soft_tcp_dev *td = NULL;
	struct tcp_cq_link *l;

	soft_spin_lock(&p->lock);
	list_for_each_entry(l, &p->conns, entry)
	{
		/* its consumer stopped polling: the thread receives what
		 * comes next (an event-driven consumer's polls end with an
		 * arm, which must not leave the thread quiet) */
		if (soft_load(&l->c->polled_ns))
			soft_store(&l->c->polled_ns, 0);
		if (!soft_load(&l->c->quiet))
			continue;
		soft_store(&l->c->rearm, true);
		td = l->c->td;
	}
	soft_spin_unlock(&p->lock);
	if (td)
		td_wake(td);
}

/* The CQ's list, made at the first attach of a QP of it. */
static struct soft_tcp_cq *tcp_cq_get(struct soft_cq *cq)
{
	struct soft_tcp_cq *p = soft_load(&cq->tcp), *old = NULL;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	INIT_LIST_HEAD(&p->conns);
	if (__atomic_compare_exchange_n(&cq->tcp, &old, p, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return p;
	free(p);
	return old;
}

void rdmarw__soft_tcp_cq_free(struct soft_cq *cq)
{
	free(cq->tcp);
	cq->tcp = NULL;
}

/* Put @c on its QP's CQs' lists (they exist: tcp_cq_get()). */
static void cq_link(struct soft_tcp *c)
{
	struct soft_cq *cq[2] = { soft_send_cq(c->qp), soft_recv_cq(c->qp) };

	for (int k = 0; k < 2 && (!k || cq[1] != cq[0]); k++) {
		struct tcp_cq_link *l = &c->link[k];

		l->c = c;
		l->cq = soft_load(&cq[k]->tcp);
		soft_spin_lock(&l->cq->lock);
		list_add_tail(&l->entry, &l->cq->conns);
		l->cq->n++;
		soft_spin_unlock(&l->cq->lock);
	}
}

/* Take @c off its CQs' lists: no poller finds it after this. */
static void cq_unlink(struct soft_tcp *c)
{
	for (int k = 0; k < 2; k++) {
		struct tcp_cq_link *l = &c->link[k];

		if (!l->cq)
			continue;
		soft_spin_lock(&l->cq->lock);
		list_del_init(&l->entry);
		l->cq->n--;
		soft_spin_unlock(&l->cq->lock);
		l->cq = NULL;
	}
}

/* ---- the device's thread: connections pollers serve ---------------------- */

/* Did a poller visit @c within @ns before @now (or after it)? */
static bool polled_within(struct soft_tcp *c, u64 now, u64 ns)
{
	u64 at = soft_load(&c->polled_ns);

	return at && (s64)(now - at) < (s64)ns;
}

/*
 * An event for @c, which a poller visited within POLL_FRESH_NS: the thread
 * stops waiting for its data (NAPI's interrupts off while it polls) and
 * leaves the poller a note to look again.  False: serve it.
 */
static bool td_quiet(struct soft_tcp_dev *td, struct soft_tcp *c)
{
	struct epoll_event ev = { .events = EV_QUIET, .data.ptr = c };

	if (!td->poll || c->quiet ||
	    !polled_within(c, mono_ns(), soft_load(&td->fresh_ns)))
		return false;
	if (epoll_ctl(td->epfd, EPOLL_CTL_MOD, c->fd, &ev))
		return false;
	soft_store(&c->quiet, true);
	soft_add(&td->st[4], 1);
	if (!td->nquiet++)
		td->looked = mono_ns();
	__atomic_store_n(&c->rx_again, true, __ATOMIC_SEQ_CST);
	return true;
}

/* Wait for @c's data again, and serve it in this batch. */
static void td_loud(struct soft_tcp_dev *td, struct soft_tcp *c)
{
	struct epoll_event ev = { .events = EV_ALL, .data.ptr = c };

	/* a modify looks at the socket: what is there is reported */
	epoll_ctl(td->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	soft_store(&c->quiet, false);
	td->nquiet--;
	soft_store(&c->kicked, true);
}

/*
 * The quiet connections: one whose CQ was armed (its consumer waits for
 * an event) waits for data again at once; every QUIET_MS, one no poller
 * visited for QUIET_MS does too.
 */
static void td_look(struct soft_tcp_dev *td)
{
	bool due = false;
	struct soft_tcp *c;
	u64 t;

	if (!td->nquiet)
		return;
	t = mono_ns();
	if (t - td->looked >= QUIET_MS * 1000000u) {
		td->looked = t;
		due = true;
	}
	list_for_each_entry(c, &td->conns, entry)
	{
		if (!c->quiet)
			continue;
		if (__atomic_exchange_n(&c->rearm, false, __ATOMIC_SEQ_CST) ||
		    (due && !polled_within(c, t, QUIET_MS * 1000000u)))
			td_loud(td, c);
	}
}

/* ---- the device's thread -------------------------------------------------- */

/* Tell the CM of each connection that ended, once (td->lock held, dropped
 * around each call: the list is walked again after it). */
static void td_downs(struct soft_tcp_dev *td)
{
	struct soft_tcp *c;

again:
	list_for_each_entry(c, &td->conns, entry)
	{
		void (*down)(void *ctx, enum soft_tcp_down why);

		if (!soft_load(&c->down_due) || c->down_done)
			continue;
		c->down_done = true;
		down = c->forgotten ? NULL : c->down;
		if (!down)
			continue;
		c->in_down = true;
		pthread_mutex_unlock(&td->lock);
		down(c->ctx, c->why);
		pthread_mutex_lock(&td->lock);
		c->in_down = false;
		pthread_cond_broadcast(&td->cond);
		goto again;
	}
}

/* Detached connections no event of an epoll_wait can name any more: two
 * batches after the detach (the second's wait began after it). */
static bool td_bury(struct soft_tcp_dev *td)
{
	struct soft_tcp *c, *tmp;
	bool left = false;

	list_for_each_entry_safe(c, tmp, &td->grave, entry) {
		if (td->batch < c->gone_batch + 2) {
			left = true;
			continue;
		}
		list_del_init(&c->entry);
		c->unreachable = true;
		if (c->orphan)
			free(c); /* its buffers went with the QP's destroy */
	}
	pthread_cond_broadcast(&td->cond);
	return left;
}

static void td_batch(struct soft_tcp_dev *td, struct epoll_event *ev, int n)
{
	bool again, more = false, hold = soft_load(&td->hold);
	struct soft_tcp *c;

	for (int i = 0; i < n; i++) {
		c = ev[i].data.ptr;
		if (!c) {
			u64 v;
			ssize_t r = read(td->evfd, &v, sizeof(v));

			(void)r;
			continue;
		}
		if (c->gone)
			continue;
		if (hold)
			soft_store(&c->kicked, true); /* served once released */
		else if (!td_quiet(td, c))
			td_serve(c, &more);
	}
	td_look(td);
restart:
	list_for_each_entry(c, &td->conns, entry)
	{
		if (!hold && soft_load(&c->kicked)) {
			td_serve(c, &more);
			goto restart;
		}
	}
	td_downs(td);
	again = td_bury(td);
	if (more) {
		/* the budget was spent: serve them again next batch */
		list_for_each_entry(c, &td->conns, entry)
			soft_store(&c->kicked, true);
	}
	if (again || more)
		td_wake(td);
}

static void *tcp_thread(void *arg)
{
	struct soft_tcp_dev *td = arg;
	struct epoll_event ev[32];
	int timeout = -1;

	for (;;) {
		int n = epoll_wait(td->epfd, ev, 32, timeout);

		pthread_mutex_lock(&td->lock);
		td->batch++;
		if (td->stop) {
			pthread_mutex_unlock(&td->lock);
			return NULL;
		}
		td_batch(td, ev, n > 0 ? n : 0);
		/* quiet connections: look at them again soon */
		timeout = td->nquiet ? QUIET_MS : -1;
		pthread_mutex_unlock(&td->lock);
	}
}

int rdmarw__soft_tcp_dev_start(struct soft_dev *sdev)
{
	struct soft_tcp_dev *td = calloc(1, sizeof(*td));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int ret = -ENOMEM;

	if (!td)
		return -ENOMEM;
	td->epfd = epoll_create1(EPOLL_CLOEXEC);
	td->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&td->lock, NULL);
	pthread_cond_init(&td->cond, NULL);
	INIT_LIST_HEAD(&td->conns);
	INIT_LIST_HEAD(&td->grave);
	td->poll = sdev->profile.poll_rx && !sdev->profile.threaded;
	td->fresh_ns = POLL_FRESH_NS;
	if (td->epfd < 0 || td->evfd < 0 ||
	    epoll_ctl(td->epfd, EPOLL_CTL_ADD, td->evfd, &ev)) {
		ret = -errno;
		goto err;
	}
	ret = -pthread_create(&td->thread, NULL, tcp_thread, td);
	if (ret)
		goto err;
	sdev->tcpd = td;
	return 0;

err:
	if (td->epfd >= 0)
		close(td->epfd);
	if (td->evfd >= 0)
		close(td->evfd);
	pthread_cond_destroy(&td->cond);
	pthread_mutex_destroy(&td->lock);
	free(td);
	return ret ? ret : -ENOMEM;
}

void rdmarw__soft_tcp_dev_stop(struct soft_dev *sdev)
{
	struct soft_tcp_dev *td = sdev->tcpd;
	struct soft_tcp *c, *tmp;

	if (!td)
		return;
	pthread_mutex_lock(&td->lock);
	td->stop = true;
	pthread_mutex_unlock(&td->lock);
	td_wake(td);
	pthread_join(td->thread, NULL);
	/* QPs destroyed from the thread left their records to it */
	list_for_each_entry_safe(c, tmp, &td->grave, entry)
		if (c->orphan)
			free(c);
	close(td->epfd);
	close(td->evfd);
	pthread_cond_destroy(&td->cond);
	pthread_mutex_destroy(&td->lock);
	free(td);
	sdev->tcpd = NULL;
}

/* ---- the CM's side (soft_tcp.h) ------------------------------------------ */

bool rdmarw__soft_is_tcp(const struct ib_device *dev)
{
	return soft_device_is_soft(dev) &&
	       to_sdev((struct ib_device *)dev)->tcpd != NULL;
}

static void conn_free_bufs(struct soft_tcp *c)
{
	free(c->txb);
	free(c->rxb);
	free(c->seg);
	free(c->irq);
	free(c->orq);
	c->txb = c->rxb = c->seg = NULL;
	c->irq = NULL;
	c->orq = NULL;
}

static int conn_check(const struct soft_tcp_conn *cc)
{
	int type = 0;
	socklen_t len = sizeof(type);

	if (cc->fd < 0 || (cc->pre_len && !cc->pre) || cc->pre_len > RX_CAP ||
	    cc->ird > RD_MAX || cc->ord > RD_MAX ||
	    (unsigned int)cc->rtr > SOFT_TCP_RTR_READ0)
		return -EINVAL;
	if (getsockopt(cc->fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
	    type != SOCK_STREAM)
		return -EINVAL;
	return 0;
}

/* The initiator's RTR, its first FPDU (tx_lock not needed: nobody else
 * can reach the connection yet). */
static void conn_rtr(struct soft_tcp *c)
{
	struct iwarp_hdr h = { 0 };
	u32 none = 0;

	if (!c->initiator || c->rtr == SOFT_TCP_RTR_NONE)
		return;
	if (c->rtr == SOFT_TCP_RTR_WRITE0) {
		h.opcode = IWARP_OP_WRITE;
		tx_segment(c, &h, NULL, 0, &none, 0, false);
		tx_flush(c);
		return;
	}
	h.opcode = IWARP_OP_READ_REQ;
	h.last = true;
	h.msn = c->msn_rreq++;
	tx_segment(c, &h, NULL, 0, &none, 0, false);
	tx_flush(c);
	*orq_at(c, c->orq_count++) = (struct tcp_orq){ .rtr = true };
}

static struct soft_tcp *conn_alloc(struct soft_qp *qp,
				   const struct soft_tcp_conn *cc)
{
	struct soft_tcp *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->txb = malloc(TX_CAP);
	c->rxb = malloc(RX_CAP);
	c->seg = malloc(SEG_CAP);
	c->irq = calloc(cc->ird ? cc->ird : 1, sizeof(*c->irq));
	/* the ORD's READs, and the RTR's */
	c->orq_cap = cc->ord + 1;
	c->orq = calloc(c->orq_cap, sizeof(*c->orq));
	if (!c->txb || !c->rxb || !c->seg || !c->irq || !c->orq ||
	    rdmarw__iwarp_rx_init(&c->rx, cc->crc, 0xffff)) {
		conn_free_bufs(c);
		free(c);
		return NULL;
	}
	c->qp = qp;
	c->td = qp->dev->tcpd;
	c->fd = cc->fd;
	c->crc = cc->crc;
	c->initiator = cc->initiator;
	c->rtr = cc->rtr;
	c->ird = cc->ird;
	c->ord = cc->ord;
	c->down = cc->down;
	c->ctx = cc->ctx;
	c->msn_send = c->msn_rreq = c->msn_term = 1;
	c->tx_hold = !cc->initiator && cc->rtr != SOFT_TCP_RTR_NONE;
	pthread_mutex_init(&c->tx_lock, NULL);
	INIT_LIST_HEAD(&c->entry);
	if (cc->pre_len)
		memcpy(c->rxb, cc->pre, cc->pre_len);
	c->rx_len = cc->pre_len;
	return c;
}

int rdmarw__soft_tcp_attach(struct ib_qp *ibqp, const struct soft_tcp_conn *cc)
{
	struct epoll_event ev = { .events = EV_ALL };
	struct soft_tcp_dev *td;
	enum ib_qp_state state;
	struct soft_qp *qp;
	struct soft_tcp *c;
	int ret, fl, one = 1;

	if (!ibqp || !cc)
		return -EINVAL;
	if (!rdmarw__soft_is_tcp(ibqp->device))
		return -EOPNOTSUPP;
	qp = to_sqp(ibqp);
	td = qp->dev->tcpd;
	state = soft_qp_state(qp);
	if (state != IB_QPS_INIT && state != IB_QPS_RTR)
		return -EINVAL;
	ret = conn_check(cc);
	if (ret)
		return ret;
	if (soft_load(&qp->tcp))
		return -EBUSY;
	fl = fcntl(cc->fd, F_GETFL);
	if (fl < 0 || fcntl(cc->fd, F_SETFL, fl | O_NONBLOCK))
		return -EINVAL;
	setsockopt(cc->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (td->poll &&
	    (!tcp_cq_get(soft_send_cq(qp)) || !tcp_cq_get(soft_recv_cq(qp))))
		return -ENOMEM;
	c = conn_alloc(qp, cc);
	if (!c)
		return -ENOMEM;
	conn_rtr(c);
	ev.data.ptr = c;
	td_lock(td);
	ret = soft_load(&qp->tcp) ? -EBUSY : 0;
	if (!ret && epoll_ctl(td->epfd, EPOLL_CTL_ADD, cc->fd, &ev))
		ret = -errno;
	if (!ret) {
		list_add_tail(&c->entry, &td->conns);
		/* the connection's ORD, as siw_qp_readq_init() */
		soft_store(&qp->ord, (u8)(cc->ord > 255 ? 255 : cc->ord));
		soft_store(&qp->tcp, c);
		if (td->poll)
			cq_link(c);
		poke(c); /* bytes that came with the MPA exchange, the RTR */
	}
	td_unlock(td);
	if (ret) {
		pthread_mutex_destroy(&c->tx_lock);
		conn_free_bufs(c);
		free(c);
	}
	return ret;
}

void rdmarw__soft_tcp_detach(struct soft_qp *qp)
{
	struct soft_tcp *c = qp->tcp;
	struct soft_tcp_dev *td;

	if (!c)
		return;
	td = c->td;
	/* pollers first: off the CQs' lists, then the passes begun end (not
	 * when this thread is inside one: a handler called by it) */
	cq_unlink(c);
	soft_store(&c->detached, true);
	if (rx_mine != c)
		while (__atomic_load_n(&c->polling, __ATOMIC_ACQUIRE))
			sched_yield();
	td_lock(td);
	if (c->quiet)
		td->nquiet--;
	c->gone = true;
	c->gone_batch = td->batch;
	epoll_ctl(td->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	list_del(&c->entry);
	list_add_tail(&c->entry, &td->grave);
	if (on_thread(td)) {
		c->orphan = true; /* the thread frees the record */
	} else {
		td_wake(td);
		while (!c->unreachable || c->in_down)
			pthread_cond_wait(&td->cond, &td->lock);
	}
	td_unlock(td);
}

void rdmarw__soft_tcp_free(struct soft_qp *qp)
{
	struct soft_tcp *c = qp->tcp;

	if (!c)
		return;
	qp->tcp = NULL;
	close(c->fd);
	pthread_mutex_destroy(&c->tx_lock);
	conn_free_bufs(c);
	if (!c->orphan)
		free(c);
}

int rdmarw__soft_tcp_stats(struct ib_device *dev, struct soft_tcp_stats *out)
{
	struct soft_tcp_dev *td;

	if (!dev || !out || !rdmarw__soft_is_tcp(dev))
		return -EINVAL;
	td = to_sdev(dev)->tcpd;
	out->poll_bytes = soft_load(&td->st[0]);
	out->poll_fpdus = soft_load(&td->st[1]);
	out->thread_bytes = soft_load(&td->st[2]);
	out->thread_fpdus = soft_load(&td->st[3]);
	out->quiets = soft_load(&td->st[4]);
	out->tx_calls = soft_load(&td->st[5]);
	out->tx_fpdus = soft_load(&td->st[6]);
	out->rx_copied = soft_load(&td->st[7]);
	return 0;
}

int rdmarw__soft_tcp_hold(struct ib_device *dev, bool hold)
{
	struct soft_tcp_dev *td;

	if (!dev || !rdmarw__soft_is_tcp(dev))
		return -EINVAL;
	td = to_sdev(dev)->tcpd;
	soft_store(&td->hold, hold);
	td_wake(td);
	return 0;
}

int rdmarw__soft_tcp_fresh(struct ib_device *dev, u64 ns)
{
	if (!dev || !rdmarw__soft_is_tcp(dev) || !ns)
		return -EINVAL;
	soft_store(&to_sdev(dev)->tcpd->fresh_ns, ns);
	return 0;
}

void rdmarw__soft_tcp_drop(struct soft_qp *qp)
{
	struct soft_tcp *c = soft_load(&qp->tcp);

	if (!c)
		return;
	soft_store(&c->drop, true);
	poke(c);
}

int rdmarw__soft_tcp_disconnect(struct ib_qp *ibqp)
{
	struct soft_qp *qp;

	if (!ibqp || !rdmarw__soft_is_tcp(ibqp->device))
		return -EINVAL;
	qp = to_sqp(ibqp);
	if (!soft_load(&qp->tcp))
		return -ENOTCONN;
	rdmarw__soft_tcp_drop(qp);
	return 0;
}

void rdmarw__soft_tcp_forget(struct ib_qp *ibqp)
{
	struct soft_tcp_dev *td;
	struct soft_tcp *c;

	if (!ibqp || !rdmarw__soft_is_tcp(ibqp->device))
		return;
	c = soft_load(&to_sqp(ibqp)->tcp);
	if (!c)
		return;
	td = c->td;
	td_lock(td);
	c->forgotten = true;
	while (c->in_down && !on_thread(td))
		pthread_cond_wait(&td->cond, &td->lock);
	td_unlock(td);
}

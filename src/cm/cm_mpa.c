// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager over TCP (issue 28): the transport table of the
 * software devices with soft_profile.tcp.  A connection is a TCP stream
 * made here and set up with MPA (RFC 5044 7.1, RFC 6581: revision 2, CRC,
 * no markers, IRD/ORD and the peer-to-peer RTR types siw offers), the
 * ULP's private data carried in the MPA request and reply as the kernel's
 * iw_cm carries rdma_cm's; then the socket goes to the QP
 * (rdmarw__soft_tcp_attach(), soft_tcp.h) and the CM moves it to RTS.
 *
 * One thread with epoll runs every socket of the exchange without
 * blocking: listening sockets, connects in progress, requests and replies
 * being read.  It takes cm.lock for each socket that is ready and for the
 * timeouts, so every record here is guarded by cm.lock, as the ids are;
 * epoll carries a record's cookie, never its address.  A handshake not
 * done in time is closed (passive: silently, the ULP never saw it; active:
 * UNREACHABLE with -ETIMEDOUT, as iw_cm maps siw's MPA timeout), a
 * listener holds at most MPA_HALF_OPEN_MAX handshakes whose request has
 * not arrived, and a frame the codec refuses closes the stream (a request
 * asking for markers, or with more private data than rdma_cm carries,
 * gets an MPA reject first, as siw answers).
 *
 * The data path tells of the connection's end through @down (soft_tcp.h),
 * which becomes the id's one DISCONNECTED.
 */
#include "cm/cm.h"
#include "iwarp/iwarp.h"
#include "soft/soft_tcp.h"

#include <rdmarw/soft.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A request or reply with the most private data MPA allows. */
#define MPA_FRAME_MAX (sizeof(struct iwarp_mpa_rr) + IWARP_MPA_PD_MAX)
/* siw's MPA request timeout (MPAREQ_TIMEOUT, 10 s) bounds both sides. */
#define MPA_TIMEOUT_MS 10000
/* Handshakes a listener holds before their request has arrived. */
#define MPA_HALF_OPEN_MAX 64
/* Connections a listener takes from the kernel per wake-up. */
#define MPA_ACCEPT_BATCH 16

enum mpa_state {
	MPA_LISTEN, /* a listener's socket */
	MPA_CONNECTING, /* active: TCP connect in progress */
	MPA_AWAIT_REP, /* active: request sent, reply being read */
	MPA_AWAIT_REQ, /* passive: request being read (no id yet) */
	MPA_RECVD_REQ, /* passive: CONNECT_REQUEST queued, ULP to answer */
	MPA_ATTACHING, /* being handed to the QP (no socket work here) */
	MPA_UP, /* the QP owns the socket; the record waits for @down */
};

/**
 * struct cm_mpa - a socket of the exchange, or a connection handed over
 * @entry: mpa.socks
 * @cookie: what epoll and the data path's @down carry (never 0)
 * @state: enum mpa_state
 * @fd: the socket, or -1 once the QP owns it
 * @id: the id it serves (listener, active id, child), NULL in AWAIT_REQ
 * @lsn: AWAIT_REQ: the listener's record
 * @half_open: LISTEN: its records in AWAIT_REQ
 * @deadline: CLOCK_MONOTONIC ms when the handshake fails, 0 for none
 * @req: the request sent (active) or received (passive, @pdata unset)
 * @down: the data path told of the end (DISCONNECTED queued or due)
 * @len: bytes in @buf
 * @buf: the frame being sent or read, and what came after it
 */
struct cm_mpa {
	struct list_head entry;
	u64 cookie;
	enum mpa_state state;
	int fd;
	struct cm_id_priv *id;
	struct cm_mpa *lsn;
	unsigned int half_open;
	u64 deadline;
	struct iwarp_mpa req;
	bool down;
	size_t len;
	u8 buf[MPA_FRAME_MAX];
};

static struct {
	struct list_head socks; /* cm.lock */
	u64 next_cookie;
	int epfd;
	int evfd;
	pthread_t thread;
	bool started;
	bool stop;
} mpa = {
	.socks = LIST_HEAD_INIT(mpa.socks),
	.next_cookie = 1,
	.epfd = -1,
	.evfd = -1,
};

static u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

static unsigned int mpa_timeout_knob; /* rdmarw__cm_mpa_set_timeout() */

void rdmarw__cm_mpa_set_timeout(unsigned int ms)
{
	__atomic_store_n(&mpa_timeout_knob, ms, __ATOMIC_RELAXED);
}

/*
 * The handshake's bound: the tests' knob, else RDMARW_MPA_TIMEOUT_MS,
 * else siw's.
 */
static u64 mpa_deadline(void)
{
	unsigned long ms = __atomic_load_n(&mpa_timeout_knob, __ATOMIC_RELAXED);
	const char *env;
	char *end;

	if (ms)
		return now_ms() + ms;
	ms = MPA_TIMEOUT_MS;
	env = secure_getenv("RDMARW_MPA_TIMEOUT_MS");
	if (env && *env) {
		ms = strtoul(env, &end, 10);
		if (*end || !ms || ms > 600000)
			ms = MPA_TIMEOUT_MS;
	}
	return now_ms() + ms;
}

/*
 * Whether an active side asks for MPA CRCs: yes unless RDMARW_MPA_CRC is
 * "0".  The kernel's siw never asks (its mpa_crc_required is false) and
 * uses CRCs only when its peer does; rdmarw asks by default, so that two
 * rdmarw ends and rdmarw towards siw check every FPDU.  "0" gives siw's
 * choice (for measuring against siw like for like).  A passive side uses
 * CRCs exactly when the request asks, as siw's.
 */
static bool mpa_want_crc(void)
{
	const char *env = secure_getenv("RDMARW_MPA_CRC");

	return !env || strcmp(env, "0");
}

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

static void sa_set_port(struct sockaddr_storage *ss, u16 port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static u16 sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* ---- the TCP devices' addresses ----------------------------------------- */

/*
 * Is @dev a software device on TCP?  Read from its profile, which it has
 * from its creation: rdmarw__soft_is_tcp() becomes true only once the
 * device's TCP thread runs, after the core has told the CM of the device.
 */
bool rdmarw__cm_dev_tcp(const struct ib_device *dev)
{
	struct soft_profile prof;

	return soft_device_is_soft(dev) &&
	       !soft_device_profile((struct ib_device *)dev, &prof) && prof.tcp;
}

/**
 * struct tcp_query - a walk over the TCP devices' addresses
 * @ss: the address looked for (port 0), or NULL for any of @family
 * @family: see @ss
 * @dev: the device found
 * @found: its address
 */
struct tcp_query {
	const struct sockaddr_storage *ss;
	sa_family_t family;
	struct ib_device *dev;
	struct sockaddr_storage found;
};

static int tcp_match(struct ib_device *dev, const void *space,
		     const struct sockaddr_storage *ss, void *arg)
{
	struct tcp_query *q = arg;

	if (!rdmarw__cm_dev_tcp(dev))
		return 0;
	if (q->ss ? !rdmarw__same_addr(ss, q->ss) : ss->ss_family != q->family)
		return 0;
	q->dev = dev;
	q->found = *ss;
	return 1;
}

static struct ib_device *tcp_find(struct tcp_query *q)
{
	q->dev = NULL;
	rdmarw__device_addr_walk(tcp_match, q);
	return q->dev;
}

/* Has a TCP device an address of @family? */
static bool tcp_family(sa_family_t family)
{
	struct tcp_query q = { .family = family };

	return tcp_find(&q) != NULL;
}

/* The TCP device that answers to @addr (any port), or NULL. */
static struct ib_device *tcp_dev_of(const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct tcp_query q = { .ss = &ss };

	if (rdmarw__addr_key(addr, &ss))
		return NULL;
	return tcp_find(&q);
}

/* ---- records and the thread --------------------------------------------- */

static struct cm_mpa *sock_find(u64 cookie)
{
	struct cm_mpa *m, *n;

	list_for_each_entry_safe(m, n, &mpa.socks, entry)
		if (m->cookie == cookie)
			return m;
	return NULL;
}

static struct cm_mpa *sock_new(int fd, enum mpa_state state)
{
	struct cm_mpa *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cookie = mpa.next_cookie++;
	m->fd = fd;
	m->state = state;
	list_add_tail(&m->entry, &mpa.socks);
	return m;
}

static int sock_watch(struct cm_mpa *m, u32 events, bool add)
{
	struct epoll_event ev = { .events = events, .data.u64 = m->cookie };

	if (epoll_ctl(mpa.epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, m->fd,
		      &ev))
		return -errno;
	return 0;
}

/* Wake the thread: a deadline or a socket was added. */
static void mpa_kick(void)
{
	u64 one = 1;

	if (write(mpa.evfd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the thread wakes anyway */
	}
}

/* Close and free @m (cm.lock held). */
static void sock_free(struct cm_mpa *m)
{
	if (m->fd >= 0)
		close(m->fd); /* leaves the epoll set with it */
	if (m->lsn)
		m->lsn->half_open--;
	if (m->id && m->id->mpa == m)
		m->id->mpa = NULL;
	list_del(&m->entry);
	free(m);
}

/* Stop watching @m's socket (it stays open). */
static void sock_unwatch(struct cm_mpa *m)
{
	if (m->fd >= 0)
		epoll_ctl(mpa.epfd, EPOLL_CTL_DEL, m->fd, NULL);
	m->deadline = 0;
}

static void mpa_handle(struct cm_mpa *m, u32 events);
static void mpa_expire(u64 now);

static void *mpa_main(void *arg)
{
	struct epoll_event evs[16];
	struct cm_mpa *m, *n;
	u64 now, next, val;
	int i, nev, timeout;

	rdmarw__cm_lock();
	while (!mpa.stop) {
		now = now_ms();
		mpa_expire(now);
		next = 0;
		list_for_each_entry_safe(m, n, &mpa.socks, entry)
			if (m->deadline && (!next || m->deadline < next))
				next = m->deadline;
		timeout = !next ? -1 : next <= now ? 0 : (int)(next - now);
		rdmarw__cm_unlock();
		nev = epoll_wait(mpa.epfd, evs, 16, timeout);
		rdmarw__cm_lock();
		for (i = 0; i < nev; i++) {
			if (!evs[i].data.u64) {
				if (read(mpa.evfd, &val, sizeof(val)) < 0)
					val = 0;
				continue;
			}
			m = sock_find(evs[i].data.u64);
			if (m)
				mpa_handle(m, evs[i].events);
		}
	}
	rdmarw__cm_unlock();
	return arg;
}

/* Start the thread once (cm.lock held). */
static int mpa_start(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };
	int ret;

	if (mpa.started)
		return 0;
	mpa.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (mpa.epfd < 0)
		return -errno;
	mpa.evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (mpa.evfd < 0 || epoll_ctl(mpa.epfd, EPOLL_CTL_ADD, mpa.evfd, &ev))
		goto err;
	ret = pthread_create(&mpa.thread, NULL, mpa_main, NULL);
	if (ret) {
		errno = ret;
		goto err;
	}
	mpa.started = true;
	return 0;
err:
	ret = -errno;
	if (mpa.evfd >= 0)
		close(mpa.evfd);
	close(mpa.epfd);
	mpa.evfd = mpa.epfd = -1;
	return ret;
}

static void mpa_stop(void) __attribute__((destructor));
static void mpa_stop(void)
{
	struct cm_mpa *m, *n;

	rdmarw__cm_lock();
	if (!mpa.started) {
		rdmarw__cm_unlock();
		return;
	}
	mpa.stop = true;
	mpa_kick();
	rdmarw__cm_unlock();
	pthread_join(mpa.thread, NULL);
	rdmarw__cm_lock();
	list_for_each_entry_safe(m, n, &mpa.socks, entry)
		sock_free(m);
	close(mpa.evfd);
	close(mpa.epfd);
	mpa.started = false;
	rdmarw__cm_unlock();
}

/* ---- the active side ---------------------------------------------------- */

/*
 * The connect failed with @status: the event iw_cm gives for it
 * (cma_iw_handler(): reset or refused is REJECTED, a timeout UNREACHABLE,
 * anything else CONNECT_ERROR), with the reply's private data if any.
 */
static void active_fail(struct cm_mpa *m, int status, const void *pdata,
			u32 len)
{
	struct cm_id_priv *a = m->id;
	enum rdma_cm_event_type type = RDMA_CM_EVENT_CONNECT_ERROR;
	struct cm_work *w;

	if (status == -ECONNRESET || status == -ECONNREFUSED)
		type = RDMA_CM_EVENT_REJECTED;
	else if (status == -ETIMEDOUT)
		type = RDMA_CM_EVENT_UNREACHABLE;
	if (a) {
		/* @pdata may be in @m->buf: copied before @m goes */
		w = rdmarw__cm_queue_event(a, type, status);
		rdmarw__cm_work_pdata(w, pdata, len, 0);
		a->answered = true;
	}
	sock_free(m);
}

/* The TCP connect is done: send the request. */
static void active_connected(struct cm_mpa *m)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int err = 0;
	ssize_t n;

	if (getsockopt(m->fd, SOL_SOCKET, SO_ERROR, &err, &sl))
		err = errno;
	if (err) {
		active_fail(m, -err, NULL, 0);
		return;
	}
	sl = sizeof(ss);
	if (!getsockname(m->fd, (struct sockaddr *)&ss, &sl))
		sa_set_port(&m->id->id.route.addr.src_addr, sa_port(&ss));
	n = send(m->fd, m->buf, m->len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n != (ssize_t)m->len) {
		/* a fresh stream takes 532 bytes at once, or is broken */
		active_fail(m, n < 0 && errno != EAGAIN ? -errno : -ECONNRESET,
			    NULL, 0);
		return;
	}
	m->len = 0;
	m->state = MPA_AWAIT_REP;
	m->deadline = mpa_deadline();
	if (sock_watch(m, EPOLLIN | EPOLLRDHUP, false))
		active_fail(m, -ECONNRESET, NULL, 0);
}

static enum soft_tcp_rtr rtr_of(const struct iwarp_mpa *rep)
{
	if (!rep->p2p)
		return SOFT_TCP_RTR_NONE;
	return rep->rtr & IWARP_MPA_V2_RTR_READ ? SOFT_TCP_RTR_READ0 :
						  SOFT_TCP_RTR_WRITE0;
}

static void mpa_down(void *ctx, enum soft_tcp_down why);

/* The settled connection of @m as the data path takes it. */
static void conn_of(struct cm_mpa *m, const struct iwarp_mpa *rep, size_t used,
		    bool initiator, struct soft_tcp_conn *tc)
{
	memset(tc, 0, sizeof(*tc));
	tc->fd = m->fd;
	tc->crc = rep->crc;
	if (initiator) {
		/* our IRD as sent; the responder's IRD, at most our ORD */
		tc->ird = m->req.ird;
		tc->ord = rep->ird < m->req.ord ? rep->ird : m->req.ord;
	} else {
		/* the reply's (rdmarw__iwarp_mpa_answer() bounded them) */
		tc->ird = rep->ird;
		tc->ord = rep->ord;
	}
	tc->initiator = initiator;
	tc->rtr = rtr_of(rep);
	tc->pre = used < m->len ? m->buf + used : NULL;
	tc->pre_len = m->len - used;
	tc->down = mpa_down;
	tc->ctx = (void *)(uintptr_t)m->cookie;
}

/*
 * A reply we refuse with a TERMINATE (IRD/ORD short, no matching RTR): as
 * siw, the stream's first and last FPDU, then the close (best effort: a
 * peer that does not read gets the close alone).
 */
static void active_term(struct cm_mpa *m, const struct iwarp_term_info *t,
			bool crc)
{
	u8 buf[sizeof(struct iwarp_term) + IWARP_TERM_DDP_UNTAGGED_LEN +
	       IWARP_TERM_RDMA_LEN];
	struct iovec pay, iov[1 + IWARP_TX_IOV_EXTRA];
	struct iwarp_tx_trailer trl;
	struct msghdr msg = { 0 };
	int len, n;

	len = rdmarw__iwarp_term_build(t, NULL, 0, 1, buf, sizeof(buf));
	if (len < (int)sizeof(struct iwarp_term))
		return;
	pay = (struct iovec){ buf + sizeof(struct iwarp_term),
			      (size_t)len - sizeof(struct iwarp_term) };
	n = rdmarw__iwarp_fpdu_tx(buf, sizeof(struct iwarp_term), &pay, 1, crc,
				  &trl, iov, 1 + IWARP_TX_IOV_EXTRA);
	if (n <= 0)
		return;
	msg.msg_iov = iov;
	msg.msg_iovlen = (size_t)n;
	if (sendmsg(m->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
		shutdown(m->fd, SHUT_WR);
}

/* A whole reply is in @m->buf (@used bytes of it). */
static void active_reply(struct cm_mpa *m, const struct iwarp_mpa *rep,
			 size_t used)
{
	struct cm_id_priv *a = m->id;
	struct iwarp_term_info t;
	enum iwarp_mpa_why why;
	struct cm_work *w;
	int ret;

	ret = rdmarw__iwarp_mpa_check_reply(&m->req, rep, &why, &t);
	if (ret == -ECONNREFUSED) {
		active_fail(m, ret, rep->pdata,
			    rep->pd_len <= RDMA_MAX_PRIVATE_DATA - 1 ?
				    rep->pd_len :
				    0);
		return;
	}
	if (!ret && rep->pd_len > RDMA_MAX_PRIVATE_DATA - 1)
		ret = -EMSGSIZE; /* more than rdma_cm's u8 length carries */
	if (ret) {
		rdmarw__log(RDMARW_LOG_WARN, "MPA reply refused: %s",
			    rdmarw__iwarp_mpa_why_str(why));
		if (why != IWARP_MPA_OK && !t.close)
			active_term(m, &t, rep->crc);
		active_fail(m, ret, NULL, 0);
		return;
	}
	sock_unwatch(m);
	m->state = MPA_ATTACHING;
	w = rdmarw__cm_queue_event(a, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (!w) {
		active_fail(m, -ENOMEM, NULL, 0);
		return;
	}
	w->action = CM_ACT_ATTACH;
	rdmarw__cm_work_pdata(w, rep->pdata, rep->pd_len, 0);
	/* the frame's length and what followed it, for the attach */
	w->dest_qpn = (u32)used;
	a->answered = true;
}

/* Read what the socket has into @m->buf; false when the stream ended. */
static bool sock_fill(struct cm_mpa *m, int *err)
{
	ssize_t n;

	*err = 0;
	for (;;) {
		if (m->len == sizeof(m->buf))
			return true;
		n = recv(m->fd, m->buf + m->len, sizeof(m->buf) - m->len,
			 MSG_DONTWAIT);
		if (n > 0) {
			m->len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		*err = n < 0 ? -errno : 0;
		return false;
	}
}

static void active_read(struct cm_mpa *m)
{
	struct iwarp_mpa rep;
	bool eof;
	int err, ret;

	eof = !sock_fill(m, &err);
	if (eof && err) {
		active_fail(m, err == -EPIPE ? -ECONNRESET : err, NULL, 0);
		return;
	}
	ret = rdmarw__iwarp_mpa_parse(m->buf, m->len, eof, true, &rep, NULL);
	if (ret == -EAGAIN)
		return;
	if (ret == -ECONNABORTED) {
		active_fail(m, -ECONNRESET, NULL, 0); /* siw: peer closed */
		return;
	}
	if (ret < 0) {
		active_fail(m, ret, NULL, 0);
		return;
	}
	active_reply(m, &rep, (size_t)ret);
}

/* ---- the passive side --------------------------------------------------- */

/* Answer a request we refuse with an MPA reject (as siw), then close. */
static void passive_refuse(struct cm_mpa *m, const struct iwarp_mpa *req)
{
	struct iwarp_mpa rep;
	u8 frame[sizeof(struct iwarp_mpa_rr) + sizeof(struct iwarp_mpa_v2)];
	int n;

	if (req && !rdmarw__iwarp_mpa_answer(req, 0, 0, &rep)) {
		rep.reject = true;
		rep.ird = rep.ord = 0;
		rep.p2p = false;
		rep.rtr = 0;
		n = rdmarw__iwarp_mpa_build(&rep, frame, sizeof(frame));
		if (n > 0 && send(m->fd, frame, (size_t)n,
				  MSG_NOSIGNAL | MSG_DONTWAIT) == n)
			shutdown(m->fd, SHUT_WR);
	}
	sock_free(m);
}

/* rdma_conn_param's u8 of an IRD/ORD (14 bits on the wire). */
static u8 depth(int v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (u8)v;
}

/* A whole request arrived on @m: a child and its CONNECT_REQUEST. */
static void passive_request(struct cm_mpa *m, struct iwarp_mpa *req,
			    size_t used)
{
	struct cm_id_priv *l = m->lsn->id, *c;
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	struct ib_device *dev;
	struct cm_work *w;

	if (getsockname(m->fd, (struct sockaddr *)&local, &ll) ||
	    getpeername(m->fd, (struct sockaddr *)&peer, &pl)) {
		sock_free(m);
		return;
	}
	dev = l->id.device ? l->id.device :
			     tcp_dev_of((const struct sockaddr *)&local);
	if (!dev || l->state != CM_LISTEN || l->destroy_pending) {
		sock_free(m);
		return;
	}
	c = rdmarw__cm_new_child(l, dev, &local, &peer);
	w = c ? rdmarw__cm_queue_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0) :
		NULL;
	if (!w) {
		/* no memory: the peer's connect fails (its reply timeout) */
		sock_free(m);
		return;
	}
	rdmarw__cm_work_pdata(w, req->pdata, req->pd_len, 0);
	if (req->enhanced) {
		/* what the peer will read from us, and let us read from it */
		w->ev.param.conn.responder_resources = depth(req->ord);
		w->ev.param.conn.initiator_depth = depth(req->ird);
	} else {
		w->ev.param.conn.responder_resources =
			depth(dev->attrs.max_qp_rd_atom);
		w->ev.param.conn.initiator_depth =
			depth(dev->attrs.max_qp_init_rd_atom);
	}
	sock_unwatch(m);
	m->lsn->half_open--;
	m->lsn = NULL;
	m->id = c;
	c->mpa = m;
	m->req = *req;
	m->req.pdata = NULL;
	m->req.pd_len = 0;
	m->state = MPA_RECVD_REQ;
	/* what followed the request is the data path's (@pre) */
	memmove(m->buf, m->buf + used, m->len - used);
	m->len -= used;
}

static void passive_read(struct cm_mpa *m)
{
	enum iwarp_mpa_why why;
	struct iwarp_mpa req;
	bool eof;
	int err, ret;

	eof = !sock_fill(m, &err);
	ret = rdmarw__iwarp_mpa_parse(m->buf, m->len, eof, false, &req, &why);
	if (ret == -EAGAIN && !eof)
		return;
	if (ret == -EOPNOTSUPP) {
		/* markers asked: refused with a reject, as siw does */
		memset(&req, 0, sizeof(req));
		req.rev = m->buf[17] & 0x0f;
		req.rev = req.rev == IWARP_MPA_REV1 ? IWARP_MPA_REV1 :
						      IWARP_MPA_REV2;
		passive_refuse(m, &req);
		return;
	}
	if (ret < 0) {
		sock_free(m); /* the ULP never saw it: closed, no event */
		return;
	}
	if (req.pd_len > RDMA_MAX_PRIVATE_DATA - 1) {
		passive_refuse(m, &req); /* more than rdma_cm carries */
		return;
	}
	passive_request(m, &req, (size_t)ret);
}

/* The listener's socket is readable: take what connected. */
static void listen_accept(struct cm_mpa *l)
{
	struct cm_mpa *m;
	int i, fd, one = 1;

	for (i = 0; i < MPA_ACCEPT_BATCH; i++) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (l->half_open >= MPA_HALF_OPEN_MAX) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		m = sock_new(fd, MPA_AWAIT_REQ);
		if (!m) {
			close(fd);
			continue;
		}
		m->lsn = l;
		l->half_open++;
		m->deadline = mpa_deadline();
		if (sock_watch(m, EPOLLIN | EPOLLRDHUP, true))
			sock_free(m);
	}
}

/* A ready socket (cm.lock held). */
static void mpa_handle(struct cm_mpa *m, u32 events)
{
	switch (m->state) {
	case MPA_LISTEN:
		listen_accept(m);
		break;
	case MPA_CONNECTING:
		active_connected(m);
		break;
	case MPA_AWAIT_REP:
		active_read(m);
		break;
	case MPA_AWAIT_REQ:
		passive_read(m);
		break;
	default:
		break;
	}
}

/* Handshakes out of time (cm.lock held). */
static void mpa_expire(u64 now)
{
	struct cm_mpa *m, *n;

	list_for_each_entry_safe(m, n, &mpa.socks, entry) {
		if (!m->deadline || m->deadline > now)
			continue;
		if (m->state == MPA_AWAIT_REQ)
			sock_free(m); /* silently: the ULP never saw it */
		else if (m->state == MPA_CONNECTING ||
			 m->state == MPA_AWAIT_REP)
			active_fail(m, -ETIMEDOUT, NULL, 0);
		else
			m->deadline = 0;
	}
}

/* ---- the end of a connection (the data path's @down) ------------------- */

/* Queue @m's id its one DISCONNECTED (cm.lock held). */
static void sock_disconnected(struct cm_mpa *m)
{
	struct cm_id_priv *p = m->id;
	struct cm_work *w;

	if (!p || !p->established || p->destroy_pending ||
	    (p->state != CM_CONNECT && p->state != CM_DISCONNECT))
		return;
	if (p->state == CM_CONNECT)
		p->state = CM_DISCONNECT;
	w = rdmarw__cm_queue_event(p, RDMA_CM_EVENT_DISCONNECTED, 0);
	if (w)
		w->action = CM_ACT_ERR;
}

static void mpa_down(void *ctx, enum soft_tcp_down why)
{
	struct cm_mpa *m;

	rdmarw__cm_lock();
	m = sock_find((u64)(uintptr_t)ctx);
	if (m && !m->down) {
		m->down = true;
		if (m->state == MPA_UP)
			sock_disconnected(m);
		/* ATTACHING: delivered after ESTABLISHED (attach_done()) */
	}
	rdmarw__cm_unlock();
}

/*
 * Give @p's QP the connection and move it to RTS (no lock of the CM
 * held): RTR first, so that what the peer sends as soon as it has our
 * reply (its RTR and first messages) finds a QP that takes it, as siw's
 * one move to RTS with the socket.  *@owned: the QP took the socket.
 */
static int attach_rts(struct cm_id_priv *p, const struct soft_tcp_conn *tc,
		      bool *owned)
{
	int ret;

	*owned = false;
	ret = rdmarw__cm_qp_to_rtr(p, 0);
	if (!ret) {
		pthread_mutex_lock(&p->qp_lock);
		ret = p->id.qp ? rdmarw__soft_tcp_attach(p->id.qp, tc) :
				 -EINVAL;
		pthread_mutex_unlock(&p->qp_lock);
		*owned = !ret;
	}
	if (!ret)
		ret = rdmarw__cm_qp_rtr_to_rts(p);
	if (ret)
		rdmarw__cm_qp_to_err(p); /* the data path closes an owned one */
	return ret;
}

/* After attach_rts() (cm.lock held again): @m is up or gone. */
static int attach_done(struct cm_id_priv *p, struct cm_mpa *m, int ret,
		       bool owned)
{
	if (owned)
		m->fd = -1;
	if (ret) {
		sock_free(m);
		return ret;
	}
	m->state = MPA_UP;
	p->established = true;
	return 0;
}

/* ---- the transport table ------------------------------------------------ */

static bool mpa_owns(const struct ib_device *dev)
{
	return rdmarw__cm_dev_tcp(dev);
}

static struct ib_device *mpa_bind(const struct sockaddr *addr)
{
	return tcp_dev_of(addr);
}

/* The route is where TCP goes: from a TCP device of @dst's family. */
static int mpa_resolve(struct ib_device *src_dev, const struct sockaddr *dst,
		       struct ib_device **src_out,
		       struct sockaddr_storage *src_addr,
		       struct ib_device **dst_out)
{
	struct sockaddr_storage ss;
	struct tcp_query q = { 0 };

	if (rdmarw__addr_key(dst, &ss))
		return -EHOSTUNREACH;
	*dst_out = NULL; /* the peer is not looked up in this process */
	if (src_dev) {
		if (!rdmarw__cm_dev_tcp(src_dev))
			return -EHOSTUNREACH;
		*src_out = src_dev;
		return 0;
	}
	q.family = ss.ss_family;
	if (!tcp_find(&q))
		return -EHOSTUNREACH;
	*src_out = q.dev;
	*src_addr = q.found;
	return 0;
}

static int mpa_addr_fault(struct ib_device *dev)
{
	return 0;
}

/* rdma_cm's u8 lengths; MPA carries up to 508 bytes beside IRD/ORD. */
static u32 mpa_pdata_max(struct ib_device *dev, enum rdmarw__cm_msg msg)
{
	return RDMA_MAX_PRIVATE_DATA;
}

static u32 mpa_pdata_wire(struct ib_device *dev, enum rdmarw__cm_msg msg)
{
	return 0; /* MPA carries what was sent */
}

static int mpa_resolve_route(struct cm_id_priv *p, unsigned long timeout_ms)
{
	p->state = CM_ROUTE_RESOLVED;
	p->id.route.num_pri_alt_paths = 1;
	rdmarw__cm_queue_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

/* A non-blocking stream socket bound to @src (port kept, 0: any). */
static int sock_open(const struct sockaddr_storage *src, u16 port,
		     bool listener, bool afonly)
{
	struct sockaddr_storage ss = *src;
	int fd, one = 1, ret;

	fd = socket(src->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	if (listener)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (src->ss_family == AF_INET6 && afonly)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sa_set_port(&ss, port);
	if (bind(fd, (struct sockaddr *)&ss, sa_len(&ss))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static int mpa_listen(struct cm_id_priv *p, int backlog)
{
	struct sockaddr_storage *src = &p->id.route.addr.src_addr, ss;
	socklen_t sl = sizeof(ss);
	struct cm_mpa *m;
	int fd, ret;

	if (!p->id.device && !tcp_family(src->ss_family) &&
	    !(src->ss_family == AF_INET6 && !p->afonly && tcp_family(AF_INET)))
		return 0; /* a wildcard and no TCP device to hear it */
	ret = mpa_start();
	if (ret)
		return ret;
	fd = sock_open(src, p->port_auto ? 0 : sa_port(src), true, p->afonly);
	if (fd < 0)
		return fd;
	if (listen(fd, backlog > 0 ? backlog : SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	m = sock_new(fd, MPA_LISTEN);
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	ret = sock_watch(m, EPOLLIN, true);
	if (ret) {
		sock_free(m);
		return ret;
	}
	m->id = p;
	p->mpa = m;
	sa_set_port(src, sa_port(&ss)); /* the kernel's, for port 0 */
	return 0;
}

static int mpa_connect(struct cm_id_priv *a, const struct rdma_conn_param *cp)
{
	const struct sockaddr_storage *dst = &a->id.route.addr.dst_addr;
	struct cm_mpa *m;
	int fd, ret;

	if (a->mpa)
		return -EISCONN;
	ret = mpa_start();
	if (ret)
		return ret;
	fd = sock_open(&a->id.route.addr.src_addr, 0, false, false);
	if (fd < 0)
		return fd;
	m = sock_new(fd, MPA_CONNECTING);
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	/* MPA v2: CRC (unless RDMARW_MPA_CRC=0), IRD/ORD, both zero-length RTR
	 * types offered (siw) */
	m->req.rev = IWARP_MPA_REV2;
	m->req.crc = mpa_want_crc();
	m->req.enhanced = true;
	m->req.ird = cp->responder_resources;
	m->req.ord = cp->initiator_depth;
	m->req.p2p = true;
	m->req.rtr = IWARP_MPA_V2_RTR_WRITE | IWARP_MPA_V2_RTR_READ;
	m->req.pdata = cp->private_data;
	m->req.pd_len = cp->private_data_len;
	ret = rdmarw__iwarp_mpa_build(&m->req, m->buf, sizeof(m->buf));
	m->req.pdata = NULL;
	m->req.pd_len = 0;
	if (ret < 0)
		goto err;
	m->len = (size_t)ret;
	if (connect(fd, (const struct sockaddr *)dst, sa_len(dst)) &&
	    errno != EINPROGRESS) {
		ret = -errno; /* as siw's rdma_connect(): at once */
		goto err;
	}
	ret = sock_watch(m, EPOLLOUT, true);
	if (ret)
		goto err;
	m->id = a;
	a->mpa = m;
	m->deadline = mpa_deadline();
	mpa_kick();
	return 0;
err:
	sock_free(m);
	return ret;
}

/* CM_ACT_ATTACH of an active id's ESTABLISHED (in the CM thread). */
static bool mpa_attach(struct cm_id_priv *a, struct cm_work *w)
{
	struct cm_mpa *m = a->mpa;
	struct iwarp_mpa rep;
	struct soft_tcp_conn tc;
	size_t used = w->dest_qpn;
	bool owned;
	int ret;

	w->dest_qpn = 0;
	if (!m || m->state != MPA_ATTACHING || a->state != CM_CONNECT)
		return false;
	if (rdmarw__iwarp_mpa_parse(m->buf, used, false, true, &rep, NULL) !=
	    (int)used)
		return false; /* cannot be: it was parsed before */
	conn_of(m, &rep, used, true, &tc);
	/* the depths the connection has: READs we issue, READs we serve */
	w->ev.param.conn.initiator_depth = (u8)tc.ord;
	w->ev.param.conn.responder_resources = (u8)tc.ird;
	rdmarw__cm_unlock();
	ret = attach_rts(a, &tc, &owned);
	rdmarw__cm_lock();
	ret = attach_done(a, m, ret, owned);
	if (ret) {
		w->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
		w->ev.status = ret;
		w->ev.param.conn.private_data_len = 0;
		return true;
	}
	if (m->down)
		sock_disconnected(m); /* queued after this ESTABLISHED */
	return true;
}

static int mpa_accept(struct cm_id_priv *c, const struct rdma_conn_param *cp)
{
	struct cm_mpa *m = c->mpa;
	u8 frame[MPA_FRAME_MAX];
	struct iwarp_mpa rep;
	struct soft_tcp_conn tc;
	struct cm_work *w;
	bool owned;
	int n, ret;

	if (!m || m->state != MPA_RECVD_REQ)
		return -ECONNRESET;
	ret = rdmarw__iwarp_mpa_answer(&m->req, cp->responder_resources,
				       cp->initiator_depth, &rep);
	if (ret)
		return ret;
	rep.pdata = cp->private_data;
	rep.pd_len = cp->private_data_len;
	n = rdmarw__iwarp_mpa_build(&rep, frame, sizeof(frame));
	if (n < 0)
		return n;
	if (send(m->fd, frame, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		sock_free(m);
		return -ECONNRESET; /* the peer went away meanwhile */
	}
	c->answered = true;
	c->resp_res = cp->responder_resources;
	c->init_depth = cp->initiator_depth;
	m->state = MPA_ATTACHING;
	conn_of(m, &rep, 0, false, &tc);
	rdmarw__cm_unlock();
	ret = attach_rts(c, &tc, &owned);
	rdmarw__cm_lock();
	ret = attach_done(c, m, ret, owned);
	if (ret)
		return ret;
	/* as siw_accept(): ESTABLISHED once the reply is sent */
	w = rdmarw__cm_queue_event(c, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (w) {
		w->ev.param.conn.initiator_depth = (u8)tc.ord;
		w->ev.param.conn.responder_resources = (u8)tc.ird;
	}
	if (m->down)
		sock_disconnected(m);
	return 0;
}

static int mpa_reject(struct cm_id_priv *c, const void *pdata, u8 len,
		      u8 reason)
{
	struct cm_mpa *m = c->mpa;
	u8 frame[MPA_FRAME_MAX];
	struct iwarp_mpa rep;
	int n;

	c->answered = true;
	if (!m || m->state != MPA_RECVD_REQ)
		return 0;
	if (rdmarw__iwarp_mpa_answer(&m->req, 0, 0, &rep)) {
		sock_free(m);
		return 0;
	}
	rep.reject = true;
	rep.pdata = pdata;
	rep.pd_len = len;
	n = rdmarw__iwarp_mpa_build(&rep, frame, sizeof(frame));
	if (n > 0 &&
	    send(m->fd, frame, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n)
		shutdown(m->fd, SHUT_WR);
	sock_free(m);
	return 0;
}

/* rdma_disconnect(): the data path closes in order; its @down is our
 * DISCONNECTED. */
static int mpa_disconnect(struct cm_id_priv *p, bool was_up, bool *qp_err)
{
	struct cm_mpa *m = p->mpa;
	int ret = -ENOTCONN;

	*qp_err = false;
	if (!was_up || !m || m->state != MPA_UP || m->down)
		return 0;
	rdmarw__cm_unlock();
	pthread_mutex_lock(&p->qp_lock);
	if (p->id.qp) {
		struct ib_qp_attr a = { .qp_state = IB_QPS_SQD };

		/* iw_cm_disconnect(): the QP to SQD first (siw: CLOSING), so
		 * that nothing posted from now on goes out; it is ERR (not
		 * RTS) if the connection already ended */
		(void)ib_modify_qp(p->id.qp, &a, IB_QP_STATE);
		ret = rdmarw__soft_tcp_disconnect(p->id.qp);
	}
	pthread_mutex_unlock(&p->qp_lock);
	rdmarw__cm_lock();
	if (ret && p->mpa == m && !m->down) {
		/* no connection left to close: the end is now */
		m->down = true;
		sock_disconnected(m);
		*qp_err = true;
	}
	return 0;
}

/*
 * @p is destroyed: its sockets close; an attached one is the QP's.  A
 * child that never answered its request rejects it first (iw_cm's destroy
 * in CONN_RECV calls the provider's reject): the requester reads REJECTED,
 * -ECONNREFUSED, rather than a reset.
 */
static void mpa_release(struct cm_id_priv *p)
{
	struct cm_mpa *m, *n;

	if (p->is_child && !p->answered)
		mpa_reject(p, NULL, 0, 0);
	list_for_each_entry_safe(m, n, &mpa.socks, entry) {
		if (m->lsn && m->lsn->id == p)
			sock_free(m); /* handshakes of a listener */
	}
	if (p->mpa)
		sock_free(p->mpa);
}

const struct rdmarw__cm_ops rdmarw__cm_mpa_ops = {
	.name = "mpa",
	.owns = mpa_owns,
	.bind = mpa_bind,
	.resolve = mpa_resolve,
	.addr_fault = mpa_addr_fault,
	.pdata_max = mpa_pdata_max,
	.pdata_wire = mpa_pdata_wire,
	.resolve_route = mpa_resolve_route,
	.connect = mpa_connect,
	.accept = mpa_accept,
	.reject = mpa_reject,
	.disconnect = mpa_disconnect,
	.listen = mpa_listen,
	.release = mpa_release,
	.attach = mpa_attach,
};

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the TCP transport's receive path (src/soft/soft_tcp.c)
 * with the software device's roles behind it.  A QP of a siw device with
 * profile.tcp is attached (rdmarw__soft_tcp_attach()) to one end of a
 * stream socket pair; the fuzzer is the peer on the other end.  Before the
 * peer's bytes the QP has two receives, a WRITE and a READ posted; its
 * MRs lie between guard bytes (outside every MR).  Then the peer's end is
 * shut down: the QP must end in ERR with every WR completed.
 *
 * Input: byte 0: bit 0 CRC on, bit 1 the QP is the MPA initiator, bit 2
 * its device is threaded; then operations until the input ends, each a
 * kind byte and its fields (fuzz_tcp_rx_gen.py writes the seeds):
 *  0 WRITE, 2 READ response: STag choice, TO offset (u16, signed 0x8000
 *    below the MR), last, length (u16 % 4200), payload bytes;
 *  1 READ request: sink STag (u32), sink TO (u32), size (u16), source
 *    STag choice, source TO offset;
 *  3 SEND (SEND, SEND_INV, SEND_SE, SEND_SE_INV by a byte): MSN (u8),
 *    MO (u16), last, STag choice to invalidate, length, payload;
 *  4 TERMINATE: layer/type byte, code byte;
 *  5 raw: a length byte and that many bytes, as they are;
 *  6 the next frame's bit (u16 position) flipped on the way;
 *  7 the next frame's queue number and MSN replaced (u8, u32).
 * A STag choice byte: 0 the data MR's rkey, 1 the sink MR's, 2 the receive
 * MR's (the TO: the MR's address plus the offset), 3 a u32 from the input,
 * 4 STag 0 (this end's READs name their sink by order: STag 0, TO 0, as
 * docs/deviations.md says), else 0x100 (the TO: the offset alone).
 *
 * Invariants: the guards never change; every posted WR completes exactly
 * once (its status whatever the peer caused) and nothing else completes;
 * the QP reaches ERR once the peer's end is shut; a destroyed QP leaves
 * nothing (ASan's leak check at exit); the MRs are registered anew per
 * input (nothing carries over); a stall is a finding (abort after
 * a hang guard of 20 s).
 */
#include "fuzz_common.h"

#include "iwarp/iwarp.h"
#include "soft/soft_tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define GUARD 64
#define MR_LEN 4096
#define RECV_LEN 1024
#define PAY_MAX 4200
#define OPS_MAX 48
#define HANG_S 20
#define ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

enum { WR_RECV0 = 1, WR_RECV1, WR_WRITE, WR_READ, WR_N = 4 };

/* The arena: guard | data MR | guard | sink MR | guard | recv MR | guard */
#define A_DATA GUARD
#define A_SINK (A_DATA + MR_LEN + GUARD)
#define A_RECV (A_SINK + MR_LEN + GUARD)
#define A_LEN (A_RECV + 2 * RECV_LEN + GUARD)

static struct {
	bool up;
	struct soft_fabric *f;
	struct ib_device *dev[2]; /* inline, threaded */
	struct ib_pd *pd[2];
	struct ib_cq *cq[2];
	u8 *arena;
	struct ib_mr *mr[2][3]; /* per device: data, sink, recv */
} g;

/* FUZZ_TCP_RX_VERBOSE=1: each WR's completion status on stderr */
static bool verbose;

static bool is_guard(size_t i)
{
	return i < A_DATA || (i >= A_DATA + MR_LEN && i < A_SINK) ||
	       (i >= A_SINK + MR_LEN && i < A_RECV) ||
	       i >= A_RECV + 2 * RECV_LEN;
}

/* The MRs of device @d, registered anew for each input (a SEND with
 * invalidate may have invalidated one: nothing carries over). */
static void mrs_reg(int d)
{
	static const size_t off[3] = { A_DATA, A_SINK, A_RECV };
	static const size_t len[3] = { MR_LEN, MR_LEN, 2 * RECV_LEN };

	for (int i = 0; i < 3; i++) {
		u8 *a = g.arena + off[i];

		g.mr[d][i] = ib_reg_user_mr(g.pd[d], (uintptr_t)a, len[i],
					    (uintptr_t)a, ACCESS);
		FUZZ_CHECK(!IS_ERR(g.mr[d][i]), "mr");
	}
}

static void mrs_dereg(int d)
{
	for (int i = 0; i < 3; i++)
		FUZZ_CHECK(!ib_dereg_mr(g.mr[d][i]), "dereg");
}

static void setup(void)
{
	struct soft_profile p;

	if (g.up)
		return;
	verbose = getenv("FUZZ_TCP_RX_VERBOSE");
	FUZZ_CHECK(!soft_profile_get("siw", &p), "siw profile");
	p.tcp = true;
	g.f = soft_fabric_create();
	FUZZ_CHECK(!IS_ERR_OR_NULL(g.f), "fabric");
	g.arena = aligned_alloc(4096, (A_LEN + 4095) & ~4095ul);
	FUZZ_CHECK(g.arena, "arena");
	for (int d = 0; d < 2; d++) {
		p.threaded = d;
		g.dev[d] = soft_device_create(g.f, NULL, &p);
		FUZZ_CHECK(!IS_ERR(g.dev[d]), "device");
		g.pd[d] = ib_alloc_pd(g.dev[d], 0);
		g.cq[d] = ib_alloc_cq(g.dev[d], NULL, 64, 0, IB_POLL_DIRECT);
		FUZZ_CHECK(!IS_ERR(g.pd[d]) && !IS_ERR(g.cq[d]), "pd/cq");
	}
	g.up = true;
}

/* At exit: the devices and their threads go (no leak left to report). */
__attribute__((destructor)) static void teardown(void)
{
	if (!g.up)
		return;
	for (int d = 0; d < 2; d++) {
		ib_free_cq(g.cq[d]);
		ib_dealloc_pd(g.pd[d]);
		soft_device_destroy(g.dev[d]);
	}
	soft_fabric_destroy(g.f);
	free(g.arena);
	g.up = false;
}

struct peer {
	int fd;
	bool crc;
	int d;
	struct fuzz_in in;
	u32 msn[IWARP_QN_COUNT];
	int flip; /* bit to flip in the next frame, or -1 */
	bool qn_set;
	u32 qn, msn_set;
};

static u32 stag_of(struct peer *p, u32 sel)
{
	switch (sel) {
	case 0:
		return g.mr[p->d][0]->rkey;
	case 1:
		return g.mr[p->d][1]->rkey;
	case 2:
		return g.mr[p->d][2]->rkey;
	case 3:
		return fuzz_u32(&p->in);
	case 4:
		return 0; /* a READ response's sink: named by order */
	default:
		return 0x100;
	}
}

static u64 to_of(u32 sel, u32 off)
{
	static const size_t base[3] = { A_DATA, A_SINK, A_RECV };
	u64 a;

	if (sel >= 3)
		return off; /* no MR: the offset itself */
	a = (uintptr_t)g.arena + base[sel];

	return off & 0x8000 ? a - (off & 0x7fff) : a + off;
}

/* Write all of @buf; the QP's replies are read and dropped meanwhile. */
static void peer_write(struct peer *p, const u8 *buf, size_t len)
{
	static u8 sink[1 << 16];
	time_t start = time(NULL);

	while (len) {
		ssize_t r = send(p->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r > 0) {
			buf += r;
			len -= (size_t)r;
			continue;
		}
		if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return; /* the QP closed its end */
		while (recv(p->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
			;
		FUZZ_CHECK(time(NULL) - start < HANG_S, "peer write stalls");
		sched_yield();
	}
}

/* Frame @h with @len bytes of @pay; the flip and overrides applied. */
static void peer_frame(struct peer *p, struct iwarp_hdr *h, const u8 *pay,
		       u32 len)
{
	static u8 out[PAY_MAX + 128];
	u8 hdr[IWARP_HDR_MAX];
	struct iwarp_tx_trailer trl;
	struct iovec v = { (void *)pay, len }, iov[4];
	size_t n = 0;
	int hl, k;

	if (!h->tagged && h->opcode != IWARP_OP_TERMINATE) {
		if (p->qn_set) {
			h->qn = p->qn;
			h->msn = p->msn_set;
		}
	}
	p->qn_set = false;
	h->pay_len = len;
	hl = rdmarw__iwarp_hdr_build(h, hdr, sizeof(hdr));
	if (hl <= 0)
		return; /* not a header the codec builds: nothing sent */
	k = rdmarw__iwarp_fpdu_tx(hdr, (size_t)hl, &v, len ? 1 : 0, p->crc,
				  &trl, iov, 4);
	if (k <= 0)
		return;
	for (int i = 0; i < k; i++) {
		memcpy(out + n, iov[i].iov_base, iov[i].iov_len);
		n += iov[i].iov_len;
	}
	if (p->flip >= 0) {
		out[(size_t)p->flip / 8 % n] ^= (u8)(1u << (p->flip % 8));
		p->flip = -1;
	}
	peer_write(p, out, n);
}

/* The payload: from the input while it lasts, then a pattern. */
static const u8 *payload(struct peer *p, u32 len)
{
	static u8 buf[PAY_MAX];

	for (u32 i = 0; i < len; i++)
		buf[i] = p->in.n ? (u8)fuzz_u8(&p->in) : (u8)(i * 7 + 1);
	return buf;
}

static void op_tagged(struct peer *p, u8 opcode)
{
	struct iwarp_hdr h = { .opcode = opcode, .tagged = true };
	u32 sel = fuzz_u8(&p->in), off = fuzz_u16(&p->in), len;

	h.stag = stag_of(p, sel);
	h.to = to_of(sel, off);
	h.last = fuzz_u8(&p->in) & 1;
	len = fuzz_u16(&p->in) % PAY_MAX;
	peer_frame(p, &h, payload(p, len), len);
}

static void op_read_req(struct peer *p)
{
	struct iwarp_hdr h = { .opcode = IWARP_OP_READ_REQ, .last = true };
	u32 sel;

	h.qn = IWARP_QN_READ_REQ;
	h.msn = ++p->msn[IWARP_QN_READ_REQ];
	h.sink_stag = fuzz_u32(&p->in);
	h.sink_to = fuzz_u32(&p->in);
	h.read_size = fuzz_u16(&p->in);
	sel = fuzz_u8(&p->in);
	h.src_stag = stag_of(p, sel);
	h.src_to = to_of(sel, fuzz_u16(&p->in));
	peer_frame(p, &h, NULL, 0);
}

static void op_send(struct peer *p)
{
	static const u8 ops[4] = { IWARP_OP_SEND, IWARP_OP_SEND_INV,
				   IWARP_OP_SEND_SE, IWARP_OP_SEND_SE_INV };
	struct iwarp_hdr h = { .opcode = ops[fuzz_u8(&p->in) % 4] };
	u32 len;

	h.qn = IWARP_QN_SEND;
	h.msn = p->msn[IWARP_QN_SEND] + fuzz_u8(&p->in);
	h.mo = fuzz_u16(&p->in);
	h.last = fuzz_u8(&p->in) & 1;
	if (h.last)
		p->msn[IWARP_QN_SEND]++;
	h.stag = stag_of(p, fuzz_u8(&p->in));
	len = fuzz_u16(&p->in) % PAY_MAX;
	peer_frame(p, &h, payload(p, len), len);
}

static void op_term(struct peer *p)
{
	struct iwarp_hdr h = { .opcode = IWARP_OP_TERMINATE, .last = true };
	u32 lt = fuzz_u8(&p->in);

	h.qn = IWARP_QN_TERMINATE;
	h.msn = ++p->msn[IWARP_QN_TERMINATE];
	h.term.layer = lt >> 4;
	h.term.etype = lt & 15;
	h.term.ecode = fuzz_u8(&p->in);
	peer_frame(p, &h, NULL, 0);
}

static void op_raw(struct peer *p)
{
	u8 buf[256];
	u32 n = fuzz_u8(&p->in);

	if (n > p->in.n)
		n = (u32)p->in.n;
	memcpy(buf, p->in.p, n);
	p->in.p += n;
	p->in.n -= n;
	peer_write(p, buf, n);
}

static void run_ops(struct peer *p)
{
	for (int i = 0; i < OPS_MAX && p->in.n; i++) {
		switch (fuzz_u8(&p->in) % 8) {
		case 0:
			op_tagged(p, IWARP_OP_WRITE);
			break;
		case 1:
			op_read_req(p);
			break;
		case 2:
			op_tagged(p, IWARP_OP_READ_RESP);
			break;
		case 3:
			op_send(p);
			break;
		case 4:
			op_term(p);
			break;
		case 5:
			op_raw(p);
			break;
		case 6:
			p->flip = (int)fuzz_u16(&p->in);
			break;
		default:
			p->qn_set = true;
			p->qn = fuzz_u8(&p->in);
			p->msn_set = fuzz_u32(&p->in);
			break;
		}
	}
}

static struct ib_qp *qp_make(int d, int fd, bool crc, bool initiator)
{
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.send_cq = g.cq[d],
		.recv_cq = g.cq[d],
		.cap = { .max_send_wr = 8,
			 .max_recv_wr = 8,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT,
				.qp_access_flags = ACCESS,
				.port_num = 1 };
	struct soft_tcp_conn c = {
		.fd = fd, .crc = crc, .ird = 4, .ord = 4, .initiator = initiator
	};
	struct ib_qp *qp = ib_create_qp(g.pd[d], &qa);

	FUZZ_CHECK(!IS_ERR(qp), "qp");
	FUZZ_CHECK(!ib_modify_qp(qp, &a,
				 IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
					 IB_QP_ACCESS_FLAGS),
		   "INIT");
	FUZZ_CHECK(!rdmarw__soft_tcp_attach(qp, &c), "attach");
	a.qp_state = IB_QPS_RTR;
	FUZZ_CHECK(!ib_modify_qp(qp, &a,
				 IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
					 IB_QP_DEST_QPN | IB_QP_RQ_PSN |
					 IB_QP_MAX_DEST_RD_ATOMIC |
					 IB_QP_MIN_RNR_TIMER),
		   "RTR");
	a.qp_state = IB_QPS_RTS;
	FUZZ_CHECK(!ib_modify_qp(qp, &a,
				 IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
					 IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
					 IB_QP_MAX_QP_RD_ATOMIC),
		   "RTS");
	return qp;
}

/* Two receives, a WRITE to the peer, a READ from it into the sink MR. */
static void post_wrs(struct ib_qp *qp, int d)
{
	struct ib_sge rs[2], ws, rds;
	struct ib_recv_wr rw[2];
	struct ib_rdma_wr w[2];
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *sbad;

	for (int i = 0; i < 2; i++) {
		rs[i] = (struct ib_sge){ (uintptr_t)g.arena + A_RECV +
						 i * RECV_LEN,
					 RECV_LEN, g.mr[d][2]->lkey };
		rw[i] = (struct ib_recv_wr){ .wr_id = WR_RECV0 + i,
					     .sg_list = &rs[i],
					     .num_sge = 1,
					     .next = i ? NULL : &rw[1] };
	}
	FUZZ_CHECK(!ib_post_recv(qp, rw, &rbad), "post recv");
	ws = (struct ib_sge){ (uintptr_t)g.arena + A_DATA, 100,
			      g.mr[d][0]->lkey };
	rds = (struct ib_sge){ (uintptr_t)g.arena + A_SINK, 200,
			       g.mr[d][1]->lkey };
	memset(w, 0, sizeof(w));
	w[0].wr = (struct ib_send_wr){ .wr_id = WR_WRITE,
				       .opcode = IB_WR_RDMA_WRITE,
				       .sg_list = &ws,
				       .num_sge = 1,
				       .next = &w[1].wr };
	w[0].remote_addr = 0x10000;
	w[0].rkey = 0x1234;
	w[1].wr = (struct ib_send_wr){ .wr_id = WR_READ,
				       .opcode = IB_WR_RDMA_READ,
				       .sg_list = &rds,
				       .num_sge = 1 };
	w[1].remote_addr = 0x20000;
	w[1].rkey = 0x5678;
	FUZZ_CHECK(!ib_post_send(qp, &w[0].wr, &sbad), "post send");
}

/* Every WR completes once; nothing else; then the QP is in ERR. */
static void reap(struct ib_qp *qp, int d, struct peer *p)
{
	static u8 sink[1 << 16];
	struct ib_qp_attr attr;
	struct ib_qp_init_attr ia;
	time_t start = time(NULL);
	unsigned int seen = 0;
	struct ib_wc wc;
	int r;

	while (seen != (1u << WR_N) - 1) {
		r = ib_poll_cq(g.cq[d], 1, &wc);
		FUZZ_CHECK(r >= 0, "poll %d", r);
		if (r) {
			FUZZ_CHECK(wc.wr_id >= 1 && wc.wr_id <= WR_N,
				   "unknown wr_id %llu",
				   (unsigned long long)wc.wr_id);
			FUZZ_CHECK(!(seen & 1u << (wc.wr_id - 1)),
				   "wr %llu completed twice",
				   (unsigned long long)wc.wr_id);
			seen |= 1u << (wc.wr_id - 1);
			if (verbose)
				fprintf(stderr, " wr%llu:%d",
					(unsigned long long)wc.wr_id,
					wc.status);
			continue;
		}
		/* keep the QP's sends flowing: read what it writes */
		while (recv(p->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
			;
		FUZZ_CHECK(time(NULL) - start < HANG_S,
			   "WRs never completed: seen %#x", seen);
		sched_yield();
	}
	while (ib_query_qp(qp, &attr, 0, &ia) == 0 &&
	       attr.qp_state != IB_QPS_ERR) {
		FUZZ_CHECK(time(NULL) - start < HANG_S, "QP not in ERR: %d",
			   attr.qp_state);
		sched_yield();
	}
	FUZZ_CHECK(ib_poll_cq(g.cq[d], 1, &wc) == 0, "a completion too many");
	if (verbose)
		fputc('\n', stderr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer p = { .flip = -1 };
	struct ib_qp *qp;
	int sv[2];
	u32 flags;

	setup();
	p.in = (struct fuzz_in){ data, size };
	flags = fuzz_u8(&p.in);
	p.crc = flags & 1;
	p.d = (flags >> 2) & 1;
	for (size_t i = 0; i < A_LEN; i++)
		g.arena[i] = is_guard(i) ? 0xa5 : (u8)(i * 13);
	mrs_reg(p.d);
	FUZZ_CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	qp = qp_make(p.d, sv[0], p.crc, flags & 2);
	p.fd = sv[1];
	post_wrs(qp, p.d);
	run_ops(&p);
	shutdown(p.fd, SHUT_WR);
	reap(qp, p.d, &p);
	for (size_t i = 0; i < A_LEN; i++)
		FUZZ_CHECK(!is_guard(i) || g.arena[i] == 0xa5,
			   "guard byte %zu changed", i);
	FUZZ_CHECK(!ib_destroy_qp(qp), "destroy");
	mrs_dereg(p.d);
	close(p.fd);
	return 0;
}

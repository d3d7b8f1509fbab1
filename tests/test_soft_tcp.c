// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The software device's TCP transport (issue 28, soft_tcp.c): two siw
 * devices with profile.tcp on two fabrics (they share nothing), their QPs
 * attached to the two ends of a loopback TCP connection made here (no
 * MPA: rdmarw__soft_tcp_attach() directly, CRC on, IRD/ORD 8, no RTR),
 * moved INIT -> RTR -> RTS with ib_modify_qp().  SEND/RECV, WRITE and READ
 * of 0, 1, 4096 bytes and 1 MiB, with several SGEs: the exact bytes moved,
 * the bytes next to the sink untouched, each completion's status, opcode
 * and byte_len.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/tcp_env.h"

#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

#include "iwarp/iwarp.h"
#include "soft/soft_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD 64
#define MIB (1u << 20)
#define ACCESS TCP_ENV_ACCESS

struct side {
	struct soft_fabric *f;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

struct pair {
	struct side s[2];
};

/* A connected pair of TCP sockets on 127.0.0.1. */
static void tcp_sockets(int fd[2])
{
	tcp_loopback_pair(fd);
	/* hang guard: a raw peer's blocking read fails instead of waiting */
	for (int i = 0; i < 2; i++) {
		struct timeval tv = { .tv_sec = 60 };

		assert_int_equal(setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv,
					    sizeof(tv)),
				 0);
	}
}

static void side_init(struct side *s, const struct soft_profile *p)
{
	s->f = soft_fabric_create();
	assert_false(IS_ERR(s->f));
	s->dev = soft_device_create(s->f, NULL, p);
	assert_false(IS_ERR(s->dev));
	s->pd = ib_alloc_pd(s->dev, 0);
	assert_false(IS_ERR(s->pd));
	s->cq = ib_alloc_cq(s->dev, NULL, 512, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(s->cq));
	s->qp = tcp_env_qp(s->pd, s->cq, 128, 4);
}

static void side_rts(struct side *s)
{
	tcp_env_rts(s->qp);
}

static void side_fini(struct side *s)
{
	ib_destroy_qp(s->qp);
	ib_free_cq(s->cq);
	ib_dealloc_pd(s->pd);
	assert_int_equal(soft_device_destroy(s->dev), 0);
	assert_int_equal(soft_fabric_destroy(s->f), 0);
}

static void pair_init_conn(struct pair *p, bool threaded, u32 ird, u32 ord)
{
	struct soft_profile prof;
	int fd[2];

	tcp_env_profile(&prof, threaded);
	tcp_sockets(fd);
	for (int i = 0; i < 2; i++) {
		struct soft_tcp_conn c = {
			.fd = fd[i],
			.crc = true,
			.ird = ird,
			.ord = ord,
			.initiator = i == 0,
			.rtr = SOFT_TCP_RTR_NONE,
		};

		side_init(&p->s[i], &prof);
		assert_int_equal(rdmarw__soft_tcp_attach(p->s[i].qp, &c), 0);
	}
	side_rts(&p->s[0]);
	side_rts(&p->s[1]);
}

static void pair_init(struct pair *p)
{
	pair_init_conn(p, false, 8, 8);
}

static void pair_fini(struct pair *p)
{
	side_fini(&p->s[0]);
	side_fini(&p->s[1]);
}

/* Poll @n completions (the device's thread delivers them). */
static void poll_n(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	time_t start = time(NULL);
	int got = 0;

	while (got < n) {
		int r = ib_poll_cq(cq, n - got, wc + got);

		assert_true(r >= 0);
		got += r;
		if (!r) {
			assert_true(time(NULL) - start < 120); /* hang guard */
			sched_yield();
		}
	}
}

static void expect_wc(struct ib_cq *cq, u64 wr_id, enum ib_wc_status st,
		      enum ib_wc_opcode op, u32 byte_len)
{
	struct ib_wc wc;

	poll_n(cq, 1, &wc);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.status, st);
	if (st == IB_WC_SUCCESS) {
		assert_int_equal(wc.opcode, op);
		assert_int_equal(wc.byte_len, byte_len);
	}
}

static void expect_empty(struct ib_cq *cq)
{
	struct ib_wc wc;

	assert_int_equal(ib_poll_cq(cq, 1, &wc), 0);
}

/* A buffer of @len bytes between two guards, registered whole. */
struct buf {
	u8 *mem;
	size_t len;
	struct ib_mr *mr;
};

static void buf_init(struct buf *b, struct side *s, size_t len, u8 seed)
{
	b->len = len;
	b->mem = malloc(len + 2 * GUARD);
	assert_non_null(b->mem);
	memset(b->mem, 0xee, len + 2 * GUARD);
	for (size_t i = 0; i < len; i++)
		b->mem[GUARD + i] = (u8)(seed + i * 7 + (i >> 12));
	b->mr = ib_reg_user_mr(s->pd, (uintptr_t)b->mem, len + 2 * GUARD,
			       (uintptr_t)b->mem, ACCESS);
	assert_false(IS_ERR(b->mr));
}

static void buf_fini(struct buf *b)
{
	assert_int_equal(ib_dereg_mr(b->mr), 0);
	free(b->mem);
}

static u8 *at(struct buf *b)
{
	return b->mem + GUARD;
}

static void guards_intact(struct buf *b)
{
	for (size_t i = 0; i < GUARD; i++) {
		assert_int_equal(b->mem[i], 0xee);
		assert_int_equal(b->mem[GUARD + b->len + i], 0xee);
	}
}

static const u32 sizes[] = { 0, 1, 4096, MIB };

static int post_recv(struct ib_qp *qp, u64 id, struct ib_sge *sge, int n)
{
	struct ib_recv_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = n };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

static int post_send(struct ib_qp *qp, enum ib_wr_opcode op, u64 id,
		     struct ib_sge *sge, int n, u64 raddr, u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = id,
			.opcode = op,
			.sg_list = sge,
			.num_sge = n,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = raddr,
		.rkey = rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

static struct ib_sge sge_of(struct buf *b, size_t off, u32 len)
{
	return (struct ib_sge){ .addr = (uintptr_t)at(b) + off,
				.length = len,
				.lkey = b->mr->lkey };
}

/* SEND/RECV of each size; the receive is larger: its tail is untouched. */
static void test_send_sizes(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		u32 len = sizes[k];
		struct buf src, dst;
		struct ib_sge ss, rs;

		buf_init(&src, &p.s[0], len, (u8)(k + 1));
		buf_init(&dst, &p.s[1], len + 100, 0);
		memset(at(&dst), 0x5a, len + 100);
		rs = sge_of(&dst, 0, len + 100);
		ss = sge_of(&src, 0, len);
		assert_int_equal(post_recv(p.s[1].qp, 10 + k, &rs, 1), 0);
		assert_int_equal(
			post_send(p.s[0].qp, IB_WR_SEND, 20 + k, &ss, 1, 0, 0),
			0);
		expect_wc(p.s[0].cq, 20 + k, IB_WC_SUCCESS, IB_WC_SEND, len);
		expect_wc(p.s[1].cq, 10 + k, IB_WC_SUCCESS, IB_WC_RECV, len);
		assert_memory_equal(at(&dst), at(&src), len);
		for (u32 i = len; i < len + 100; i++)
			assert_int_equal(at(&dst)[i], 0x5a);
		guards_intact(&dst);
		expect_empty(p.s[0].cq);
		expect_empty(p.s[1].cq);
		buf_fini(&src);
		buf_fini(&dst);
	}
	pair_fini(&p);
}

/* WRITE of each size into the middle of the peer's MR. */
static void test_write_sizes(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		u32 len = sizes[k];
		struct buf src, dst;
		struct ib_sge ss;

		buf_init(&src, &p.s[0], len, (u8)(k + 3));
		buf_init(&dst, &p.s[1], len, 0);
		memset(at(&dst), 0x5a, len);
		ss = sge_of(&src, 0, len);
		assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 30 + k,
					   &ss, 1, (uintptr_t)at(&dst),
					   dst.mr->rkey),
				 0);
		expect_wc(p.s[0].cq, 30 + k, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  len);
		/* the WRITE completed once TCP took it; the bytes follow */
		if (len) {
			struct ib_sge z = sge_of(&src, 0, 0);

			/* a zero-length SEND behind it: it lands after */
			assert_int_equal(post_recv(p.s[1].qp, 99, &z, 0), 0);
			assert_int_equal(post_send(p.s[0].qp, IB_WR_SEND, 98,
						   &z, 0, 0, 0),
					 0);
			expect_wc(p.s[0].cq, 98, IB_WC_SUCCESS, IB_WC_SEND, 0);
			expect_wc(p.s[1].cq, 99, IB_WC_SUCCESS, IB_WC_RECV, 0);
		}
		assert_memory_equal(at(&dst), at(&src), len);
		guards_intact(&dst);
		expect_empty(p.s[1].cq);
		buf_fini(&src);
		buf_fini(&dst);
	}
	pair_fini(&p);
}

/*
 * A WRITE's or SEND's completion means its source may be reused (issue 28;
 * the guarantee the kernel's siw does not give): 8 MiB, more than the
 * socket and the transmit buffer hold, so the completion has to wait for
 * the peer to drain; the source is scribbled over the moment each
 * completes, and the peer still gets the bytes as they were at the post.
 */
static void test_source_reuse(void **state)
{
	const u32 len = 8 * MIB;
	struct buf src, src2, dst, rcv;
	struct ib_sge ss, rs, z;
	struct pair p;
	u8 *want;

	(void)state;
	pair_init(&p);
	buf_init(&src, &p.s[0], len, 11);
	buf_init(&src2, &p.s[0], len, 11);
	buf_init(&dst, &p.s[1], len, 0);
	buf_init(&rcv, &p.s[1], len, 0);
	want = malloc(len);
	assert_non_null(want);
	memcpy(want, at(&src), len);
	ss = sge_of(&src, 0, len);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 1, &ss, 1,
				   (uintptr_t)at(&dst), dst.mr->rkey),
			 0);
	expect_wc(p.s[0].cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, len);
	memset(at(&src), 0xab, len);
	rs = sge_of(&rcv, 0, len);
	assert_int_equal(post_recv(p.s[1].qp, 2, &rs, 1), 0);
	ss = sge_of(&src2, 0, len);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_SEND, 3, &ss, 1, 0, 0), 0);
	expect_wc(p.s[0].cq, 3, IB_WC_SUCCESS, IB_WC_SEND, len);
	memset(at(&src2), 0xcd, len);
	expect_wc(p.s[1].cq, 2, IB_WC_SUCCESS, IB_WC_RECV, len);
	/* a zero-length SEND behind both: the WRITE has landed too */
	z = sge_of(&src, 0, 0);
	assert_int_equal(post_recv(p.s[1].qp, 4, &z, 0), 0);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_SEND, 5, &z, 0, 0, 0), 0);
	expect_wc(p.s[0].cq, 5, IB_WC_SUCCESS, IB_WC_SEND, 0);
	expect_wc(p.s[1].cq, 4, IB_WC_SUCCESS, IB_WC_RECV, 0);
	assert_memory_equal(at(&dst), want, len);
	assert_memory_equal(at(&rcv), want, len);
	guards_intact(&dst);
	guards_intact(&rcv);
	free(want);
	buf_fini(&src);
	buf_fini(&src2);
	buf_fini(&dst);
	buf_fini(&rcv);
	pair_fini(&p);
}

/* Several SGEs on both sides, across FPDU boundaries. */
static void test_multi_sge(void **state)
{
	const u32 total = 100 + 70000 + 3;
	struct buf src, dst, wdst;
	struct ib_sge ss[3], rs[2];
	struct pair p;

	(void)state;
	pair_init(&p);
	buf_init(&src, &p.s[0], total + 200, 9);
	buf_init(&dst, &p.s[1], total + 300, 0);
	buf_init(&wdst, &p.s[1], total, 0);
	memset(at(&dst), 0x5a, total + 300);
	memset(at(&wdst), 0x5a, total);
	/* source: three pieces, not adjacent */
	ss[0] = sge_of(&src, 0, 100);
	ss[1] = sge_of(&src, 150, 70000);
	ss[2] = sge_of(&src, 70190, 3);
	/* sink: two pieces with a gap of 100 */
	rs[0] = sge_of(&dst, 0, 50000);
	rs[1] = sge_of(&dst, 50100, total - 50000 + 10);
	assert_int_equal(post_recv(p.s[1].qp, 1, rs, 2), 0);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_SEND, 2, ss, 3, 0, 0), 0);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 3, ss, 3,
				   (uintptr_t)at(&wdst), wdst.mr->rkey),
			 0);
	expect_wc(p.s[0].cq, 2, IB_WC_SUCCESS, IB_WC_SEND, total);
	expect_wc(p.s[0].cq, 3, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, total);
	expect_wc(p.s[1].cq, 1, IB_WC_SUCCESS, IB_WC_RECV, total);
	{
		u8 *want = malloc(total);
		struct ib_sge z = sge_of(&src, 0, 0);

		assert_non_null(want);
		memcpy(want, at(&src), 100);
		memcpy(want + 100, at(&src) + 150, 70000);
		memcpy(want + 70100, at(&src) + 70190, 3);
		assert_memory_equal(at(&dst), want, 50000);
		for (u32 i = 50000; i < 50100; i++)
			assert_int_equal(at(&dst)[i], 0x5a);
		assert_memory_equal(at(&dst) + 50100, want + 50000,
				    total - 50000);
		for (u32 i = 50100 + total - 50000; i < total + 300; i++)
			assert_int_equal(at(&dst)[i], 0x5a);
		/* the WRITE's bytes: a SEND behind it lands after them */
		assert_int_equal(post_recv(p.s[1].qp, 5, &z, 0), 0);
		assert_int_equal(
			post_send(p.s[0].qp, IB_WR_SEND, 4, &z, 0, 0, 0), 0);
		expect_wc(p.s[0].cq, 4, IB_WC_SUCCESS, IB_WC_SEND, 0);
		expect_wc(p.s[1].cq, 5, IB_WC_SUCCESS, IB_WC_RECV, 0);
		assert_memory_equal(at(&wdst), want, total);
		free(want);
	}
	guards_intact(&dst);
	guards_intact(&wdst);
	buf_fini(&src);
	buf_fini(&dst);
	buf_fini(&wdst);
	pair_fini(&p);
}

/* The sender's transmit counters since the device was created. */
static struct soft_tcp_stats tx_stats(struct side *s)
{
	struct soft_tcp_stats st;

	assert_int_equal(rdmarw__soft_tcp_stats(s->dev, &st), 0);
	return st;
}

/* A zero-length SEND behind what was posted: everything before it landed. */
static void fence_send(struct pair *p, struct buf *any, u64 id)
{
	struct ib_sge z = sge_of(any, 0, 0);

	assert_int_equal(post_recv(p->s[1].qp, id, &z, 0), 0);
	assert_int_equal(post_send(p->s[0].qp, IB_WR_SEND, id + 1, &z, 0, 0, 0),
			 0);
	expect_wc(p->s[0].cq, id + 1, IB_WC_SUCCESS, IB_WC_SEND, 0);
	expect_wc(p->s[1].cq, id, IB_WC_SUCCESS, IB_WC_RECV, 0);
}

/*
 * Several FPDUs per sendmsg(): a 1 MiB WRITE is 17 FPDUs (65472 payload
 * bytes at most each); they go in at most 5 calls (4 FPDUs fill the
 * transmit buffer's bound), fewer when TCP took less and the buffer holds
 * the rest.  Then 64 WRITEs of 4 KiB, one call each at most.  Every byte
 * lands where it was written, the bytes beside them untouched.
 */
static void test_fpdus_per_sendmsg(void **state)
{
	struct soft_tcp_stats a, b;
	struct buf src, dst;
	struct ib_sge ss;
	struct pair p;

	(void)state;
	pair_init(&p);
	buf_init(&src, &p.s[0], MIB, 21);
	buf_init(&dst, &p.s[1], MIB + 2 * 4096, 0);
	memset(at(&dst), 0x5a, MIB + 2 * 4096);
	a = tx_stats(&p.s[0]);
	ss = sge_of(&src, 0, MIB);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 1, &ss, 1,
				   (uintptr_t)at(&dst) + 4096, dst.mr->rkey),
			 0);
	expect_wc(p.s[0].cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, MIB);
	b = tx_stats(&p.s[0]);
	assert_int_equal(b.tx_fpdus - a.tx_fpdus, 17);
	assert_true(b.tx_calls - a.tx_calls <= 5);
	fence_send(&p, &src, 2);
	assert_memory_equal(at(&dst) + 4096, at(&src), MIB);
	for (u32 i = 0; i < 4096; i++) {
		assert_int_equal(at(&dst)[i], 0x5a);
		assert_int_equal(at(&dst)[4096 + MIB + i], 0x5a);
	}

	/* 64 x 4 KiB, every other 4 KiB of the sink */
	memset(at(&dst), 0x5a, MIB + 2 * 4096);
	a = tx_stats(&p.s[0]);
	for (u32 k = 0; k < 64; k++) {
		ss = sge_of(&src, k * 4096, 4096);
		assert_int_equal(
			post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 10 + k, &ss, 1,
				  (uintptr_t)at(&dst) + k * 8192, dst.mr->rkey),
			0);
	}
	for (u32 k = 0; k < 64; k++)
		expect_wc(p.s[0].cq, 10 + k, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  4096);
	b = tx_stats(&p.s[0]);
	assert_int_equal(b.tx_fpdus - a.tx_fpdus, 64);
	assert_true(b.tx_calls - a.tx_calls <= 64);
	fence_send(&p, &src, 100);
	for (u32 k = 0; k < 64; k++) {
		assert_memory_equal(at(&dst) + k * 8192, at(&src) + k * 4096,
				    4096);
		for (u32 i = 4096; i < 8192; i++)
			assert_int_equal(at(&dst)[k * 8192 + i], 0x5a);
	}
	guards_intact(&dst);
	expect_empty(p.s[0].cq);
	expect_empty(p.s[1].cq);
	buf_fini(&src);
	buf_fini(&dst);
	pair_fini(&p);
}

/*
 * A SEND of 4 MiB (65 FPDUs) is read from the socket into its receive: the
 * payloads of its FPDUs after the first are not copied through the receive
 * buffer (rx_copied): between two FPDUs of a bulk stream the socket is read
 * up to the next header only, and the read that ends a payload takes the
 * next header whole (a SEND's is longer than a WRITE's).  The first FPDU's
 * header may come with up to 64 KiB of its payload, each later read at
 * most a few bytes beyond a header.
 */
static void test_send_stream_placed(void **state)
{
	const u32 len = 4 * MIB;
	struct soft_tcp_stats a, b;
	struct buf src, dst;
	struct ib_sge ss, rs;
	struct pair p;

	(void)state;
	pair_init(&p);
	buf_init(&src, &p.s[0], len, 5);
	buf_init(&dst, &p.s[1], len, 0);
	a = tx_stats(&p.s[1]);
	rs = sge_of(&dst, 0, len);
	ss = sge_of(&src, 0, len);
	assert_int_equal(post_recv(p.s[1].qp, 1, &rs, 1), 0);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_SEND, 2, &ss, 1, 0, 0), 0);
	expect_wc(p.s[0].cq, 2, IB_WC_SUCCESS, IB_WC_SEND, len);
	expect_wc(p.s[1].cq, 1, IB_WC_SUCCESS, IB_WC_RECV, len);
	b = tx_stats(&p.s[1]);
	assert_true(b.rx_copied - a.rx_copied <= 65536 + 65 * 64);
	assert_memory_equal(at(&dst), at(&src), len);
	guards_intact(&dst);
	buf_fini(&src);
	buf_fini(&dst);
	pair_fini(&p);
}

/* READ of each size from the peer's MR into the middle of a local one. */
static void test_read_sizes(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		u32 len = sizes[k];
		struct buf src, dst;
		struct ib_sge ds;

		buf_init(&src, &p.s[1], len, (u8)(k + 5));
		buf_init(&dst, &p.s[0], len, 0);
		memset(at(&dst), 0x5a, len);
		ds = sge_of(&dst, 0, len);
		assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_READ, 50 + k,
					   &ds, 1, (uintptr_t)at(&src),
					   src.mr->rkey),
				 0);
		expect_wc(p.s[0].cq, 50 + k, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  len);
		assert_memory_equal(at(&dst), at(&src), len);
		guards_intact(&dst);
		expect_empty(p.s[0].cq);
		expect_empty(p.s[1].cq);
		buf_fini(&src);
		buf_fini(&dst);
	}
	pair_fini(&p);
}

/*
 * 1..64 READs posted at once with ORD 4, WRITEs between them: every one
 * completes, in posting order, with its own bytes.
 */
static void test_reads_in_flight(void **state)
{
	enum { N = 64, LEN = 10000 };
	struct buf src, dst, wsrc, wdst;
	struct pair p;

	(void)state;
	pair_init_conn(&p, false, 4, 4);
	buf_init(&src, &p.s[1], N * LEN, 77);
	buf_init(&dst, &p.s[0], N * LEN, 0);
	buf_init(&wsrc, &p.s[0], LEN, 3);
	buf_init(&wdst, &p.s[1], N * LEN, 0);
	for (int n = 1; n <= N; n *= 2) {
		memset(at(&dst), 0, N * LEN);
		for (int k = 0; k < n; k++) {
			struct ib_sge ds = sge_of(&dst, (size_t)k * LEN, LEN);
			struct ib_sge ws = sge_of(&wsrc, 0, LEN);

			assert_int_equal(
				post_send(p.s[0].qp, IB_WR_RDMA_READ, 2 * k,
					  &ds, 1,
					  (uintptr_t)at(&src) + (size_t)k * LEN,
					  src.mr->rkey),
				0);
			assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE,
						   2 * k + 1, &ws, 1,
						   (uintptr_t)at(&wdst) +
							   (size_t)k * LEN,
						   wdst.mr->rkey),
					 0);
		}
		for (int k = 0; k < 2 * n; k++)
			expect_wc(p.s[0].cq, k, IB_WC_SUCCESS,
				  k % 2 ? IB_WC_RDMA_WRITE : IB_WC_RDMA_READ,
				  LEN);
		assert_memory_equal(at(&dst), at(&src), (size_t)n * LEN);
		expect_empty(p.s[0].cq);
	}
	guards_intact(&dst);
	/*
	 * A WRITE's completion says the source may be reused, not that the
	 * peer placed it: the last WRITE went after the last READ.  A READ
	 * behind it is answered after the peer placed it (in order).
	 */
	{
		struct ib_sge ds = sge_of(&dst, 0, LEN);

		assert_int_equal(
			post_send(p.s[0].qp, IB_WR_RDMA_READ, 999, &ds, 1,
				  (uintptr_t)at(&wdst) + (size_t)(N - 1) * LEN,
				  wdst.mr->rkey),
			0);
		expect_wc(p.s[0].cq, 999, IB_WC_SUCCESS, IB_WC_RDMA_READ, LEN);
		assert_memory_equal(at(&dst), at(&wsrc), LEN);
	}
	for (int k = 0; k < N; k++)
		assert_memory_equal(at(&wdst) + (size_t)k * LEN, at(&wsrc),
				    LEN);
	expect_empty(p.s[1].cq);
	buf_fini(&src);
	buf_fini(&dst);
	buf_fini(&wsrc);
	buf_fini(&wdst);
	pair_fini(&p);
}

/*
 * 16 READs of 512 KiB posted at once, IRD/ORD 16: the responder's answers
 * (8 MiB) take many turns of the transmit buffer, each of which the socket
 * may take whole without ever refusing a byte; every READ completes, in
 * order, with its own bytes.
 */
static void test_large_reads_in_flight(void **state)
{
	enum { N = 16, LEN = 512 * 1024 };
	struct buf src, dst;
	struct pair p;

	(void)state;
	pair_init_conn(&p, false, N, N);
	buf_init(&src, &p.s[1], (size_t)N * LEN, 21);
	buf_init(&dst, &p.s[0], (size_t)N * LEN, 0);
	memset(at(&dst), 0, (size_t)N * LEN);
	for (int k = 0; k < N; k++) {
		struct ib_sge ds = sge_of(&dst, (size_t)k * LEN, LEN);

		assert_int_equal(
			post_send(p.s[0].qp, IB_WR_RDMA_READ, k, &ds, 1,
				  (uintptr_t)at(&src) + (size_t)k * LEN,
				  src.mr->rkey),
			0);
	}
	for (int k = 0; k < N; k++)
		expect_wc(p.s[0].cq, k, IB_WC_SUCCESS, IB_WC_RDMA_READ, LEN);
	assert_memory_equal(at(&dst), at(&src), (size_t)N * LEN);
	guards_intact(&dst);
	expect_empty(p.s[0].cq);
	expect_empty(p.s[1].cq);
	buf_fini(&src);
	buf_fini(&dst);
	pair_fini(&p);
}

/*
 * A READ of a key the peer does not have: the peer TERMINATEs, the READ
 * and everything behind it complete once each (siw flushes a READ that
 * waits for its response: WR_FLUSH_ERR, as the loopback's siw profile),
 * the WRITE before it succeeded, both QPs go to ERR.  siw takes one SGE
 * per READ: several are refused at post.
 */
static void test_read_bad_rkey(void **state)
{
	struct buf src, dst;
	struct ib_sge ds[2];
	struct ib_wc wc[8];
	struct pair p;
	int n = 0;

	(void)state;
	pair_init(&p);
	buf_init(&src, &p.s[1], 4096, 1);
	buf_init(&dst, &p.s[0], 4096, 0);
	ds[0] = sge_of(&dst, 0, 2048);
	ds[1] = sge_of(&dst, 2048, 2048);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_READ, 1, ds, 2,
				   (uintptr_t)at(&src), src.mr->rkey),
			 -EINVAL);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 1, ds, 1,
				   (uintptr_t)at(&src), src.mr->rkey),
			 0);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_READ, 2, ds, 1,
				   (uintptr_t)at(&src), src.mr->rkey ^ 0x80),
			 0);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_READ, 3, ds, 1,
				   (uintptr_t)at(&src), src.mr->rkey),
			 0);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 4, ds, 1,
				   (uintptr_t)at(&src), src.mr->rkey),
			 0);
	poll_n(p.s[0].cq, 4, wc);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, IB_WC_SUCCESS);
	for (int i = 1; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, i + 1);
		assert_int_equal(wc[i].status, IB_WC_WR_FLUSH_ERR);
	}
	while (__atomic_load_n(&p.s[1].qp->state, __ATOMIC_ACQUIRE) !=
		       IB_QPS_ERR ||
	       __atomic_load_n(&p.s[0].qp->state, __ATOMIC_ACQUIRE) !=
		       IB_QPS_ERR)
		sched_yield();
	/* exactly once: nothing more comes, a post now flushes */
	expect_empty(p.s[0].cq);
	assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 5, ds, 1,
				   (uintptr_t)at(&src), src.mr->rkey),
			 0);
	expect_wc(p.s[0].cq, 5, IB_WC_WR_FLUSH_ERR, 0, 0);
	expect_empty(p.s[0].cq);
	n = ib_poll_cq(p.s[1].cq, 8, wc);
	assert_int_equal(n, 0);
	buf_fini(&src);
	buf_fini(&dst);
	pair_fini(&p);
}

/* Many SENDs and WRITEs in flight both ways (the transmit buffer fills,
 * the Send Queue waits and resumes), on threaded devices. */
static void test_both_ways_threaded(void **state)
{
	enum { N = 48, LEN = 200000 };
	struct buf src[2], dst[2];
	struct pair p;

	(void)state;
	pair_init_conn(&p, true, 8, 8);
	for (int i = 0; i < 2; i++) {
		buf_init(&src[i], &p.s[i], LEN, (u8)(40 + i));
		buf_init(&dst[i], &p.s[i], LEN * 2, 0);
	}
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < N; k++) {
			struct ib_sge rs = sge_of(&dst[i], LEN, LEN);

			assert_int_equal(post_recv(p.s[i].qp, k, &rs, 1), 0);
		}
	}
	for (int k = 0; k < N; k++) {
		for (int i = 0; i < 2; i++) {
			struct ib_sge ss = sge_of(&src[i], 0, LEN);

			assert_int_equal(
				post_send(p.s[i].qp,
					  k % 2 ? IB_WR_SEND : IB_WR_RDMA_WRITE,
					  1000 + k, &ss, 1,
					  (uintptr_t)at(&dst[!i]),
					  dst[!i].mr->rkey),
				0);
		}
	}
	for (int i = 0; i < 2; i++) {
		int sends = 0, recvs = 0;

		for (int n = 0; n < N + N / 2; n++) {
			struct ib_wc wc;

			poll_n(p.s[i].cq, 1, &wc);
			assert_int_equal(wc.status, IB_WC_SUCCESS);
			if (wc.opcode == IB_WC_RECV) {
				assert_int_equal(wc.wr_id, recvs);
				assert_int_equal(wc.byte_len, LEN);
				recvs++;
			} else {
				assert_int_equal(wc.wr_id, 1000 + sends);
				sends++;
			}
		}
		assert_int_equal(sends, N);
		assert_int_equal(recvs, N / 2);
	}
	for (int i = 0; i < 2; i++) {
		assert_memory_equal(at(&dst[i]), at(&src[!i]), LEN);
		assert_memory_equal(at(&dst[i]) + LEN, at(&src[!i]), LEN);
		guards_intact(&dst[i]);
	}
	for (int i = 0; i < 2; i++) {
		buf_fini(&src[i]);
		buf_fini(&dst[i]);
	}
	pair_fini(&p);
}

/* ---- the test plays the peer: raw bytes on a plain socket --------------- */

/**
 * struct rig - one QP of a TCP device attached to a socket whose other
 * end the test holds
 */
struct rig {
	struct side s;
	int raw;
	int downs;
	int why;
	struct iwarp_rx rx; /* raw_fpdu()'s, from the stream's start */
};

static void rig_down(void *ctx, enum soft_tcp_down why)
{
	struct rig *r = ctx;

	__atomic_store_n(&r->why, (int)why, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->downs, 1, __ATOMIC_RELEASE);
}

static void rig_init(struct rig *r, u32 ird)
{
	struct soft_profile prof;
	int fd[2];

	memset(r, 0, sizeof(*r));
	tcp_env_profile(&prof, false);
	tcp_sockets(fd);
	side_init(&r->s, &prof);
	{
		struct soft_tcp_conn c = { .fd = fd[0],
					   .crc = true,
					   .ird = ird,
					   .ord = 8,
					   .initiator = true,
					   .down = rig_down,
					   .ctx = r };

		assert_int_equal(rdmarw__soft_tcp_attach(r->s.qp, &c), 0);
	}
	side_rts(&r->s);
	r->raw = fd[1];
	assert_int_equal(rdmarw__iwarp_rx_init(&r->rx, true, 0xffff), 0);
}

static void rig_fini(struct rig *r)
{
	side_fini(&r->s);
	close(r->raw);
}

/* Frame @h with @len bytes of @pay (CRC on) into @out; its length. */
static size_t frame(struct iwarp_hdr *h, const void *pay, u32 len, u8 *out)
{
	u8 hdr[IWARP_HDR_MAX];
	struct iwarp_tx_trailer trl;
	struct iovec p = { (void *)pay, len }, iov[4];
	size_t n = 0;
	int hl, k;

	h->pay_len = len;
	hl = rdmarw__iwarp_hdr_build(h, hdr, sizeof(hdr));
	assert_true(hl > 0);
	k = rdmarw__iwarp_fpdu_tx(hdr, (size_t)hl, &p, len ? 1 : 0, true, &trl,
				  iov, 4);
	assert_true(k > 0);
	for (int i = 0; i < k; i++) {
		memcpy(out + n, iov[i].iov_base, iov[i].iov_len);
		n += iov[i].iov_len;
	}
	return n;
}

static void raw_send(struct rig *r, const void *buf, size_t len)
{
	assert_int_equal(send(r->raw, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

/*
 * Read what the QP sends until a TERMINATE (true, its header in *@t and
 * the copied header in @bad) or the end of the stream (false).
 */
static bool raw_term(struct rig *r, struct iwarp_hdr *t, u8 *bad)
{
	static u8 buf[1 << 16], pay[1 << 16];
	struct iwarp_rx rx;
	size_t paylen = 0;

	assert_int_equal(rdmarw__iwarp_rx_init(&rx, true, 0xffff), 0);
	for (;;) {
		ssize_t got = recv(r->raw, buf, sizeof(buf), 0);
		size_t pos = 0;

		assert_true(got >= 0);
		if (!got)
			return false;
		while (pos < (size_t)got) {
			struct iwarp_term_info ti;
			const void *data;
			size_t used, n;
			int ev = rdmarw__iwarp_rx_feed(&rx, buf + pos,
						       (size_t)got - pos, &used,
						       &data, &n, &ti);

			assert_true(ev >= 0);
			pos += used;
			if (ev == IWARP_RX_HDR)
				paylen = 0;
			if (ev == IWARP_RX_PAY) {
				memcpy(pay + paylen, data, n);
				paylen += n;
			}
			if (ev == IWARP_RX_END &&
			    rx.cur.opcode == IWARP_OP_TERMINATE) {
				*t = rx.cur;
				memcpy(bad, pay, paylen);
				return true;
			}
		}
	}
}

static void wait_downs(struct rig *r, int n)
{
	time_t start = time(NULL);

	while (__atomic_load_n(&r->downs, __ATOMIC_ACQUIRE) < n) {
		assert_true(time(NULL) - start < 120); /* hang guard */
		sched_yield();
	}
}

/*
 * The end of a refused frame: a TERMINATE with @layer/@etype/@ecode came
 * back (its copy of our header, when @copy, equal to @sent's first bytes),
 * the stream then closed, the QP is in ERR, down(@why) was called once,
 * and the @nrecv receives posted before were flushed once each.
 */
static void expect_term(struct rig *r, int layer, int etype, int ecode,
			const u8 *sent, size_t copy, int nrecv)
{
	struct iwarp_hdr t;
	u8 bad[256];
	struct ib_wc wc;

	assert_true(raw_term(r, &t, bad));
	assert_int_equal(t.term.layer, layer);
	assert_int_equal(t.term.etype, etype);
	assert_int_equal(t.term.ecode, ecode);
	assert_int_equal(t.qn, IWARP_QN_TERMINATE);
	assert_int_equal(t.msn, 1);
	assert_int_equal(t.term_d, copy != 0);
	if (copy)
		assert_memory_equal(bad, sent, copy);
	/* then TCP closes in order */
	assert_false(raw_term(r, &t, bad));
	wait_downs(r, 1);
	assert_int_equal(r->why, SOFT_TCP_DOWN_TERM_SENT);
	for (int i = 0; i < nrecv; i++) {
		poll_n(r->s.cq, 1, &wc);
		assert_int_equal(wc.wr_id, 700 + i);
		assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
	}
	expect_empty(r->s.cq);
	assert_int_equal(__atomic_load_n(&r->s.qp->state, __ATOMIC_ACQUIRE),
			 IB_QPS_ERR);
	assert_int_equal(r->downs, 1);
}

/* The device serves another connection after one failed. */
static void still_serves(struct rig *r)
{
	struct soft_profile prof;
	struct side peer;
	struct ib_qp *qp;
	struct buf src, dst;
	struct ib_sge ss, rs;
	int fd[2];

	tcp_env_profile(&prof, false);
	side_init(&peer, &prof);
	qp = tcp_env_qp(r->s.pd, r->s.cq, 8, 1);
	tcp_sockets(fd);
	{
		struct soft_tcp_conn c0 = { .fd = fd[0],
					    .crc = true,
					    .ird = 8,
					    .ord = 8,
					    .initiator = true };
		struct soft_tcp_conn c1 = c0;

		c1.fd = fd[1];
		c1.initiator = false;
		assert_int_equal(rdmarw__soft_tcp_attach(qp, &c0), 0);
		assert_int_equal(rdmarw__soft_tcp_attach(peer.qp, &c1), 0);
	}
	tcp_env_rts(qp);
	side_rts(&peer);
	buf_init(&src, &r->s, 3000, 17);
	buf_init(&dst, &peer, 3000, 0);
	ss = sge_of(&src, 0, 3000);
	rs = sge_of(&dst, 0, 3000);
	assert_int_equal(post_recv(peer.qp, 1, &rs, 1), 0);
	assert_int_equal(post_send(qp, IB_WR_SEND, 2, &ss, 1, 0, 0), 0);
	expect_wc(r->s.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, 3000);
	expect_wc(peer.cq, 1, IB_WC_SUCCESS, IB_WC_RECV, 3000);
	assert_memory_equal(at(&dst), at(&src), 3000);
	buf_fini(&src);
	buf_fini(&dst);
	ib_destroy_qp(qp);
	side_fini(&peer);
}

static void post_recvs(struct rig *r, struct buf *b, int n)
{
	for (int i = 0; i < n; i++) {
		struct ib_sge rs = sge_of(b, 0, 64);

		assert_int_equal(post_recv(r->s.qp, 700 + i, &rs, 1), 0);
	}
}

/*
 * A WRITE whose CRC is wrong: LLP/MPA/CRC.  Its payload is read from the
 * socket straight into the sink the responder accepted (siw's rule: the
 * CRC is checked after placement), so the 100 bytes of its range hold
 * what came; not a byte of the MR outside that range is touched.
 */
static void test_bad_crc(void **state)
{
	static u8 out[1 << 12];
	u8 pay[100];
	struct buf dst, rb;
	struct rig r;
	size_t n;

	(void)state;
	rig_init(&r, 8);
	buf_init(&dst, &r.s, 100, 0);
	buf_init(&rb, &r.s, 64, 0);
	memset(at(&dst), 0x5a, 100);
	post_recvs(&r, &rb, 2);
	memset(pay, 0x33, sizeof(pay));
	{
		struct iwarp_hdr h = { .opcode = IWARP_OP_WRITE,
				       .last = true,
				       .stag = dst.mr->rkey,
				       .to = (uintptr_t)at(&dst) };

		n = frame(&h, pay, 100, out);
	}
	out[n - 1] ^= 0x01;
	raw_send(&r, out, n);
	expect_term(&r, IWARP_LAYER_LLP, IWARP_LLP_ET_MPA, IWARP_LLP_EC_CRC,
		    NULL, 0, 2);
	for (int i = 0; i < 100; i++)
		assert_int_equal(at(&dst)[i], 0x33);
	guards_intact(&dst);
	still_serves(&r);
	buf_fini(&dst);
	buf_fini(&rb);
	rig_fini(&r);
}

/*
 * A 60000-byte WRITE into the middle of a 3 x 60000-byte MR, sent in
 * pieces that cut the header, the payload and the CRC, its CRC wrong: the
 * TERMINATE (LLP/MPA/CRC), the accepted range holds the payload, and
 * every byte of the MR before and after it (and the guards around the
 * MR) is untouched.  The same frame with its CRC right: placed, nothing
 * else touched, no TERMINATE (the next, bad, frame gets it).
 */
static void test_write_split_bad_crc(void **state)
{
	enum { LEN = 60000 };
	static u8 out[LEN + 64], pay[LEN];
	static const size_t cut[] = { 5, 17, 4000, 59000, LEN + 20 };

	(void)state;
	for (int i = 0; i < LEN; i++)
		pay[i] = (u8)(i * 13 + 1);
	for (int good = 0; good < 2; good++) {
		struct buf dst;
		struct rig r;
		size_t n, pos = 0;
		struct iwarp_hdr h = { .opcode = IWARP_OP_WRITE, .last = true };

		rig_init(&r, 8);
		buf_init(&dst, &r.s, 3 * LEN, 0);
		memset(at(&dst), 0x5a, 3 * LEN);
		h.stag = dst.mr->rkey;
		h.to = (uintptr_t)at(&dst) + LEN;
		n = frame(&h, pay, LEN, out);
		if (!good)
			out[n - 2] ^= 0x40;
		for (size_t k = 0; k < sizeof(cut) / sizeof(cut[0]); k++) {
			size_t end = cut[k] < n ? cut[k] : n;

			raw_send(&r, out + pos, end - pos);
			pos = end;
			sched_yield();
		}
		raw_send(&r, out + pos, n - pos);
		if (good) {
			/* then a WRITE whose CRC is wrong: its TERMINATE
			 * comes after the first frame was handled */
			u8 bad[64];
			struct iwarp_hdr w = { .opcode = IWARP_OP_WRITE,
					       .last = true,
					       .stag = dst.mr->rkey,
					       .to = (uintptr_t)at(&dst) };
			size_t m = frame(&w, pay, 8, bad);

			bad[m - 1] ^= 1;
			raw_send(&r, bad, m);
		}
		expect_term(&r, IWARP_LAYER_LLP, IWARP_LLP_ET_MPA,
			    IWARP_LLP_EC_CRC, NULL, 0, 0);
		assert_memory_equal(at(&dst) + LEN, pay, LEN);
		for (size_t i = 0; i < LEN; i++) {
			if (!good) /* the second frame may write its 8 */
				assert_int_equal(at(&dst)[i], 0x5a);
			else if (i >= 8)
				assert_int_equal(at(&dst)[i], 0x5a);
			assert_int_equal(at(&dst)[2 * LEN + i], 0x5a);
		}
		guards_intact(&dst);
		buf_fini(&dst);
		rig_fini(&r);
	}
}

/*
 * The sink's MR deregistered while its WRITE is half received: once
 * ib_dereg_mr() returned, not a byte of the buffer changes (the rest of
 * the frame is refused, whether the header was read before or after:
 * DDP/tagged/invalid STag, the header copied), the QP goes to ERR.
 */
static void test_write_mr_gone(void **state)
{
	enum { LEN = 60000 };
	static u8 out[LEN + 64], pay[LEN], snap[3 * LEN + 2 * GUARD];
	struct iwarp_hdr h = { .opcode = IWARP_OP_WRITE, .last = true };
	struct buf dst;
	struct rig r;
	size_t n;

	(void)state;
	for (int i = 0; i < LEN; i++)
		pay[i] = (u8)(i * 7 + 3);
	rig_init(&r, 8);
	buf_init(&dst, &r.s, 3 * LEN, 0);
	memset(at(&dst), 0x5a, 3 * LEN);
	h.stag = dst.mr->rkey;
	h.to = (uintptr_t)at(&dst) + LEN;
	n = frame(&h, pay, LEN, out);
	raw_send(&r, out, LEN / 2);
	sched_yield();
	assert_int_equal(ib_dereg_mr(dst.mr), 0);
	memcpy(snap, dst.mem, sizeof(snap));
	raw_send(&r, out + LEN / 2, n - LEN / 2);
	expect_term(&r, IWARP_LAYER_DDP, IWARP_DDP_ET_TAGGED,
		    IWARP_DDP_EC_T_INVALID_STAG, out, 16, 0);
	assert_memory_equal(dst.mem, snap, sizeof(snap));
	/* what was placed before is the payload's start, nothing else */
	for (size_t i = 0; i < LEN; i++) {
		assert_int_equal(at(&dst)[i], 0x5a);
		assert_int_equal(at(&dst)[2 * LEN + i], 0x5a);
		assert_true(at(&dst)[LEN + i] == 0x5a ||
			    at(&dst)[LEN + i] == pay[i]);
	}
	guards_intact(&dst);
	free(dst.mem);
	rig_fini(&r);
}

/* Tagged frames to a key that is not there, and beyond the MR. */
static void test_bad_stag(void **state)
{
	static u8 out[1 << 12];
	u8 pay[100];

	(void)state;
	memset(pay, 0x33, sizeof(pay));
	for (int k = 0; k < 3; k++) {
		struct buf dst, rb;
		struct rig r;
		size_t n;

		rig_init(&r, 8);
		buf_init(&dst, &r.s, 100, 0);
		buf_init(&rb, &r.s, 64, 0);
		memset(at(&dst), 0x5a, 100);
		post_recvs(&r, &rb, 1);
		{
			struct iwarp_hdr h = {
				.opcode = IWARP_OP_WRITE,
				.last = true,
				.stag = k == 0 ? dst.mr->rkey ^ 0x100 :
					k == 1 ? 0 :
						 dst.mr->rkey,
				.to = (uintptr_t)at(&dst) + (k == 2 ? 1 : 0),
			};

			/* k == 2: one byte past the MR's end (its guard
			 * after the buffer is inside it: go further) */
			if (k == 2)
				h.to += 100 + 2 * GUARD - 100;
			n = frame(&h, pay, 100, out);
		}
		raw_send(&r, out, n);
		expect_term(&r, IWARP_LAYER_DDP, IWARP_DDP_ET_TAGGED,
			    k == 2 ? IWARP_DDP_EC_T_BASE_BOUNDS :
				     IWARP_DDP_EC_T_INVALID_STAG,
			    out, 16, 1);
		for (int i = 0; i < 100; i++)
			assert_int_equal(at(&dst)[i], 0x5a);
		guards_intact(&dst);
		buf_fini(&dst);
		buf_fini(&rb);
		rig_fini(&r);
	}
}

/* A SEND with no receive posted; a SEND whose MSN is out of the window. */
static void test_bad_send(void **state)
{
	static u8 out[1 << 12];
	u8 pay[10] = { 1 };

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct buf rb;
		struct rig r;
		size_t n;
		struct iwarp_hdr h = { .opcode = IWARP_OP_SEND,
				       .last = true,
				       .msn = k ? 5 : 1 };

		rig_init(&r, 8);
		buf_init(&rb, &r.s, 64, 0);
		if (k)
			post_recvs(&r, &rb, 1);
		n = frame(&h, pay, 10, out);
		raw_send(&r, out, n);
		expect_term(&r, IWARP_LAYER_DDP, IWARP_DDP_ET_UNTAGGED,
			    k ? IWARP_DDP_EC_UT_MSN_RANGE :
				IWARP_DDP_EC_UT_MSN_NOBUF,
			    out, 20, k);
		buf_fini(&rb);
		rig_fini(&r);
	}
}

/*
 * A SEND longer than its receive, in one segment or in two whose second
 * goes past it: DDP/untagged/too long, the receive completes with
 * LOC_LEN_ERR, nothing past the receive's 64 bytes is touched.
 */
static void test_send_too_long(void **state)
{
	static u8 out[1 << 12];
	u8 pay[100];

	(void)state;
	memset(pay, 0x33, sizeof(pay));
	for (int k = 0; k < 2; k++) {
		struct iwarp_hdr t;
		struct buf rb;
		struct rig r;
		struct ib_wc wc;
		struct ib_sge rs;
		u8 bad[256];
		size_t n = 0;

		rig_init(&r, 8);
		buf_init(&rb, &r.s, 128, 0);
		memset(at(&rb), 0x5a, 128);
		rs = sge_of(&rb, 0, 64);
		assert_int_equal(post_recv(r.s.qp, 700, &rs, 1), 0);
		if (!k) {
			struct iwarp_hdr h = { .opcode = IWARP_OP_SEND,
					       .last = true,
					       .msn = 1 };

			n = frame(&h, pay, 100, out);
		} else {
			struct iwarp_hdr h = { .opcode = IWARP_OP_SEND,
					       .msn = 1 };

			n = frame(&h, pay, 40, out);
			h.last = true;
			h.mo = 40;
			n += frame(&h, pay, 40, out + n);
		}
		raw_send(&r, out, n);
		assert_true(raw_term(&r, &t, bad));
		assert_int_equal(t.term.layer, IWARP_LAYER_DDP);
		assert_int_equal(t.term.etype, IWARP_DDP_ET_UNTAGGED);
		assert_int_equal(t.term.ecode, IWARP_DDP_EC_UT_TOO_LONG);
		wait_downs(&r, 1);
		assert_int_equal(r.why, SOFT_TCP_DOWN_TERM_SENT);
		poll_n(r.s.cq, 1, &wc);
		assert_int_equal(wc.wr_id, 700);
		assert_int_equal(wc.status, IB_WC_LOC_LEN_ERR);
		expect_empty(r.s.cq);
		for (int i = 0; i < 64; i++)
			assert_int_equal(at(&rb)[i], k && i < 40 ? 0x33 : 0x5a);
		for (int i = 64; i < 128; i++)
			assert_int_equal(at(&rb)[i], 0x5a);
		guards_intact(&rb);
		buf_fini(&rb);
		rig_fini(&r);
	}
}

/*
 * A SEND's payload goes straight into its receive (siw_proc_send()), its
 * CRC checked at the FPDU's end: an 8000-byte SEND sent in two halves
 * completes its receive with the 8000 bytes (solicited, SEND_SE), nothing
 * beyond them written; a SEND_INV of a key nobody has completes it with
 * the invalidation's error; and one whose CRC is wrong (its last byte
 * flipped) has placed its payload when the TERMINATE (LLP/MPA/CRC) comes
 * (the gathered path placed nothing), its receive flushed, nothing beyond
 * the payload written.
 */
static void test_send_placed(void **state)
{
	static u8 out[1 << 14], pay[8000];
	static const u8 ops[] = { IWARP_OP_SEND_SE, IWARP_OP_SEND_INV,
				  IWARP_OP_SEND };
	static const enum ib_wc_status st[] = { IB_WC_SUCCESS,
						IB_WC_REM_INV_REQ_ERR,
						IB_WC_WR_FLUSH_ERR };

	(void)state;
	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = (u8)(i * 13 + 5);
	for (int k = 0; k < 3; k++) {
		struct iwarp_hdr h = {
			.opcode = ops[k], .last = true, .msn = 1, .stag = 0x100
		};
		size_t n = frame(&h, pay, sizeof(pay), out), head = n / 2;
		struct ib_sge rs;
		struct ib_wc wc;
		struct buf rb;
		struct rig r;

		if (k == 2)
			out[n - 1] ^= 0x01; /* the CRC's last byte */
		rig_init(&r, 8);
		buf_init(&rb, &r.s, 9000, 0);
		memset(at(&rb), 0x5a, 9000);
		rs = sge_of(&rb, 0, 8192);
		assert_int_equal(post_recv(r.s.qp, 700, &rs, 1), 0);
		raw_send(&r, out, head);
		raw_send(&r, out + head, n - head);
		poll_n(r.s.cq, 1, &wc);
		assert_int_equal(wc.wr_id, 700);
		assert_int_equal(wc.status, st[k]);
		if (!k) {
			assert_int_equal(wc.opcode, IB_WC_RECV);
			assert_int_equal(wc.byte_len, sizeof(pay));
			assert_false(wc.wc_flags & IB_WC_WITH_INVALIDATE);
		}
		if (k == 2)
			expect_term(&r, IWARP_LAYER_LLP, IWARP_LLP_ET_MPA,
				    IWARP_LLP_EC_CRC, NULL, 0, 0);
		assert_memory_equal(at(&rb), pay, sizeof(pay));
		for (size_t i = sizeof(pay); i < 9000; i++)
			assert_int_equal(at(&rb)[i], 0x5a);
		guards_intact(&rb);
		buf_fini(&rb);
		rig_fini(&r);
	}
}

/* The peer TERMINATEs: QP to ERR, receives flushed, down(TERM_RCVD), no
 * TERMINATE answers it, TCP closes in order. */
static void test_term_received(void **state)
{
	static u8 out[1 << 12];
	struct iwarp_term_info ti = { .layer = IWARP_LAYER_RDMAP,
				      .etype = IWARP_RDMAP_ET_PROTECTION,
				      .ecode = IWARP_RDMAP_EC_INVALID_STAG };
	u8 ulpdu[128], bad[64];
	struct iwarp_hdr t, h;
	struct buf rb;
	struct rig r;
	struct ib_wc wc;
	int len;

	(void)state;
	rig_init(&r, 8);
	buf_init(&rb, &r.s, 64, 0);
	post_recvs(&r, &rb, 2);
	/* no header copied (the codec copies from a non-NULL pointer) */
	len = rdmarw__iwarp_term_build(&ti, bad, 0, 1, ulpdu, sizeof(ulpdu));
	assert_int_equal(len, 24);
	/* frame the 24-byte TERMINATE header as it is (no payload) */
	assert_int_equal(rdmarw__iwarp_hdr_parse(ulpdu, 24, &h, &ti), 24);
	raw_send(&r, out, frame(&h, NULL, 0, out));
	wait_downs(&r, 1);
	assert_int_equal(r.why, SOFT_TCP_DOWN_TERM_RCVD);
	assert_false(raw_term(&r, &t, bad));
	for (int i = 0; i < 2; i++) {
		poll_n(r.s.cq, 1, &wc);
		assert_int_equal(wc.wr_id, 700 + i);
		assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
	}
	expect_empty(r.s.cq);
	assert_int_equal(__atomic_load_n(&r.s.qp->state, __ATOMIC_ACQUIRE),
			 IB_QPS_ERR);
	assert_int_equal(r.downs, 1);
	buf_fini(&rb);
	rig_fini(&r);
}

/* A READ request beyond the IRD we gave (0 here). */
static void test_read_over_ird(void **state)
{
	static u8 out[1 << 12];
	struct buf src;
	struct rig r;
	size_t n;

	(void)state;
	rig_init(&r, 0);
	buf_init(&src, &r.s, 100, 1);
	{
		struct iwarp_hdr h = { .opcode = IWARP_OP_READ_REQ,
				       .last = true,
				       .msn = 1,
				       .read_size = 100,
				       .src_stag = src.mr->rkey,
				       .src_to = (uintptr_t)at(&src) };

		n = frame(&h, NULL, 0, out);
	}
	raw_send(&r, out, n);
	expect_term(&r, IWARP_LAYER_RDMAP, IWARP_RDMAP_ET_OPERATION,
		    IWARP_RDMAP_EC_CATASTROPHIC_STREAM, out, 20, 0);
	buf_fini(&src);
	rig_fini(&r);
}

/* A frame cut short by the end of the stream; a peer that closes. */
static void test_eof(void **state)
{
	static u8 out[1 << 12];
	/* within the receives' 64 bytes: a longer SEND is refused at its
	 * header (DDP's "too long", before a byte is placed) */
	u8 pay[60] = { 0 };

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct iwarp_hdr t;
		struct buf rb;
		struct rig r;
		struct ib_wc wc;
		u8 bad[64];

		rig_init(&r, 8);
		buf_init(&rb, &r.s, 64, 0);
		post_recvs(&r, &rb, 2);
		if (!k) {
			struct iwarp_hdr h = { .opcode = IWARP_OP_SEND,
					       .last = true,
					       .msn = 1 };
			size_t n = frame(&h, pay, sizeof(pay), out);

			raw_send(&r, out, n / 2);
			shutdown(r.raw, SHUT_WR);
		} else {
			shutdown(r.raw, SHUT_WR);
		}
		wait_downs(&r, 1);
		assert_int_equal(r.why, SOFT_TCP_DOWN_CLOSED);
		assert_false(raw_term(&r, &t, bad)); /* closed, no TERMINATE */
		for (int i = 0; i < 2; i++) {
			poll_n(r.s.cq, 1, &wc);
			assert_int_equal(wc.wr_id, 700 + i);
			assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
		}
		/* a SEND posted now flushes, once */
		{
			struct ib_sge ss = sge_of(&rb, 0, 8);

			assert_int_equal(
				post_send(r.s.qp, IB_WR_SEND, 9, &ss, 1, 0, 0),
				0);
			expect_wc(r.s.cq, 9, IB_WC_WR_FLUSH_ERR, 0, 0);
		}
		expect_empty(r.s.cq);
		assert_int_equal(r.downs, 1);
		buf_fini(&rb);
		rig_fini(&r);
	}
}

/* ---- two processes ---------------------------------------------------- */

#define XBLK 512
#define XLEN (4u * MIB)

/* LBA-style blocks: each starts with its side and block number. */
static void lba_fill(u8 *p, size_t len, u64 side, u64 base)
{
	for (size_t b = 0; b < len / XBLK; b++) {
		u64 tag = side << 56 | (base + b);

		memcpy(p + b * XBLK, &tag, sizeof(tag));
		for (size_t j = sizeof(tag); j < XBLK; j++)
			p[b * XBLK + j] = (u8)((base + b) * 31 + j + side);
	}
}

static bool lba_ok(const u8 *p, size_t len, u64 side, u64 base)
{
	for (size_t b = 0; b < len / XBLK; b++) {
		u64 tag;

		memcpy(&tag, p + b * XBLK, sizeof(tag));
		if (tag != (side << 56 | (base + b)))
			return false;
		for (size_t j = sizeof(tag); j < XBLK; j++)
			if (p[b * XBLK + j] != (u8)((base + b) * 31 + j + side))
				return false;
	}
	return true;
}

/* What each process tells the other over the control socket. */
struct xinfo {
	u64 addr;
	u32 rkey;
};

/* A check in a child: exit with the line on failure. */
#define XCHECK(c)                                  \
	do {                                       \
		if (!(c))                          \
			_exit(__LINE__ % 250 + 1); \
	} while (0)

/*
 * One process's side: a TCP device, its QP on @fd, a 3 * XLEN buffer:
 * [0, XLEN) this side's blocks (the peer READs them), [XLEN, 2 XLEN) what
 * the peer WRITEs, [2 XLEN, 3 XLEN) what this side READs.  Each side
 * WRITEs its blocks to the peer, READs the peer's, then SENDs "done"; on
 * the peer's "done" (every byte before it placed) it checks what the peer
 * wrote.  Returns 0 or the failing line.
 */
static int xside(int fd, int ctl, u64 me, bool initiator)
{
	struct soft_profile prof;
	struct soft_fabric *f;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;
	struct xinfo mine, peer;
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT,
				.qp_access_flags = ACCESS,
				.port_num = 1 };
	struct soft_tcp_conn c = { .fd = fd,
				   .crc = true,
				   .ird = 8,
				   .ord = 8,
				   .initiator = initiator };
	struct ib_sge sge;
	struct ib_wc wc;
	u8 *buf, done[8] = { 0 };
	int got;

	if (soft_profile_get("siw", &prof))
		return __LINE__;
	prof.tcp = true;
	prof.threaded = initiator; /* one of each */
	f = soft_fabric_create();
	dev = soft_device_create(f, NULL, &prof);
	if (IS_ERR(f) || IS_ERR(dev))
		return __LINE__;
	pd = ib_alloc_pd(dev, 0);
	cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(pd) || IS_ERR(cq))
		return __LINE__;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ib_create_qp(pd, &qa);
	if (IS_ERR(qp) ||
	    ib_modify_qp(qp, &a,
			 IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
				 IB_QP_ACCESS_FLAGS) ||
	    rdmarw__soft_tcp_attach(qp, &c))
		return __LINE__;
	{
		struct side tmp = { .qp = qp };

		side_rts(&tmp);
	}
	buf = calloc(3, XLEN);
	if (!buf)
		return __LINE__;
	lba_fill(buf, XLEN, me, 0);
	mr = ib_reg_user_mr(pd, (uintptr_t)buf, 3 * XLEN, (uintptr_t)buf,
			    ACCESS);
	if (IS_ERR(mr))
		return __LINE__;
	sge = (struct ib_sge){ (uintptr_t)done, 0, mr->lkey };
	if (post_recv(qp, 1, &sge, 0))
		return __LINE__;
	memset(&mine, 0, sizeof(mine)); /* the padding goes out too */
	mine.addr = (uintptr_t)buf;
	mine.rkey = mr->rkey;
	if (write(ctl, &mine, sizeof(mine)) != sizeof(mine) ||
	    read(ctl, &peer, sizeof(peer)) != sizeof(peer))
		return __LINE__;
	sge = (struct ib_sge){ (uintptr_t)buf, XLEN, mr->lkey };
	if (post_send(qp, IB_WR_RDMA_WRITE, 2, &sge, 1, peer.addr + XLEN,
		      peer.rkey))
		return __LINE__;
	sge = (struct ib_sge){ (uintptr_t)buf + 2 * XLEN, XLEN, mr->lkey };
	if (post_send(qp, IB_WR_RDMA_READ, 3, &sge, 1, peer.addr, peer.rkey))
		return __LINE__;
	sge = (struct ib_sge){ (uintptr_t)done, 0, mr->lkey };
	if (post_send(qp, IB_WR_SEND, 4, &sge, 0, 0, 0))
		return __LINE__;
	for (got = 0; got < 4;) {
		int r = ib_poll_cq(cq, 1, &wc);

		if (r < 0 || (r && wc.status != IB_WC_SUCCESS))
			return __LINE__;
		if (!r)
			sched_yield();
		got += r;
	}
	if (!lba_ok(buf + XLEN, XLEN, !me, 0) ||
	    !lba_ok(buf + 2 * XLEN, XLEN, !me, 0) || !lba_ok(buf, XLEN, me, 0))
		return __LINE__;
	/* both sides checked before either goes */
	if (write(ctl, &mine, 1) != 1 || read(ctl, &peer, 1) != 1)
		return __LINE__;
	ib_dereg_mr(mr);
	free(buf);
	ib_destroy_qp(qp);
	ib_free_cq(cq);
	ib_dealloc_pd(pd);
	if (soft_device_destroy(dev) || soft_fabric_destroy(f))
		return __LINE__;
	return 0;
}

/* A process on each end of a loopback connection: WRITE, READ, SEND. */
static void test_two_processes(void **state)
{
	int fd[2], ctl[2], st;
	pid_t pid;

	(void)state;
	tcp_sockets(fd);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, ctl), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(fd[0]);
		close(ctl[0]);
		_exit(xside(fd[1], ctl[1], 1, false) % 250);
	}
	close(fd[1]);
	close(ctl[1]);
	assert_int_equal(xside(fd[0], ctl[0], 0, true), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(ctl[0]);
}

/*
 * The peer process is killed (SIGKILL) with our WRs outstanding: the QP
 * goes to ERR, each WR completes once (flushed), down(RESET or CLOSED).
 */
static void test_peer_killed(void **state)
{
	struct rig r;
	struct buf b;
	struct ib_wc wc;
	pid_t pid;

	(void)state;
	rig_init(&r, 8);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* the peer: says it is there, then waits to be killed */
		if (write(r.raw, "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(r.raw);
	r.raw = -1;
	buf_init(&b, &r.s, 4096, 1);
	post_recvs(&r, &b, 3);
	{
		struct ib_sge ss = sge_of(&b, 0, 4096);

		/* a READ waits for its response, which never comes */
		assert_int_equal(post_send(r.s.qp, IB_WR_RDMA_READ, 800, &ss, 1,
					   0x1000, 0x1234),
				 0);
		assert_int_equal(
			post_send(r.s.qp, IB_WR_SEND, 801, &ss, 1, 0, 0), 0);
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	wait_downs(&r, 1);
	assert_true(r.why == SOFT_TCP_DOWN_RESET ||
		    r.why == SOFT_TCP_DOWN_CLOSED);
	/* the receives 700..702, the READ 800 and the SEND 801: once each */
	for (int i = 0, seen = 0; i < 5; i++) {
		int bit;

		poll_n(r.s.cq, 1, &wc);
		assert_int_equal(wc.status, IB_WC_WR_FLUSH_ERR);
		bit = wc.wr_id >= 800 ? 3 + (int)(wc.wr_id - 800) :
					(int)(wc.wr_id - 700);
		assert_true(bit >= 0 && bit < 5 && !(seen & 1 << bit));
		seen |= 1 << bit;
	}
	expect_empty(r.s.cq);
	assert_int_equal(__atomic_load_n(&r.s.qp->state, __ATOMIC_ACQUIRE),
			 IB_QPS_ERR);
	assert_int_equal(r.downs, 1);
	buf_fini(&b);
	side_fini(&r.s);
}

/* ---- RTR, disconnect, forget ------------------------------------------ */

/* As rig_init(), with the RTR (and role) the MPA exchange settled. */
static void rig_init_rtr(struct rig *r, bool initiator, enum soft_tcp_rtr rtr)
{
	struct soft_profile prof;
	int fd[2];

	memset(r, 0, sizeof(*r));
	tcp_env_profile(&prof, false);
	tcp_sockets(fd);
	side_init(&r->s, &prof);
	{
		struct soft_tcp_conn c = { .fd = fd[0],
					   .crc = true,
					   .ird = 8,
					   .ord = 8,
					   .initiator = initiator,
					   .rtr = rtr,
					   .down = rig_down,
					   .ctx = r };

		assert_int_equal(rdmarw__soft_tcp_attach(r->s.qp, &c), 0);
	}
	side_rts(&r->s);
	r->raw = fd[1];
	assert_int_equal(rdmarw__iwarp_rx_init(&r->rx, true, 0xffff), 0);
}

/* Read one whole FPDU from the raw socket into *@h (payload dropped). */
static void raw_fpdu(struct rig *r, struct iwarp_hdr *h)
{
	struct iwarp_rx *rx = &r->rx;
	u8 b;

	for (;;) {
		struct iwarp_term_info ti;
		const void *data;
		size_t used, n;
		int ev;

		/* byte by byte: nothing of the next FPDU is taken */
		assert_int_equal(recv(r->raw, &b, 1, 0), 1);
		ev = rdmarw__iwarp_rx_feed(rx, &b, 1, &used, &data, &n, &ti);
		assert_true(ev >= 0);
		if (ev == IWARP_RX_HDR)
			*h = rx->cur;
		if (ev == IWARP_RX_END)
			return;
	}
}

/* Nothing is waiting on the raw socket (a post is inline: what it sends
 * is there when it returns). */
static void raw_nothing(struct rig *r)
{
	u8 b;

	assert_int_equal(recv(r->raw, &b, 1, MSG_DONTWAIT), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

/* The responder of an RTR exchange sends nothing before the peer's first
 * FPDU (here its zero-length WRITE); then what waited goes. */
static void test_rtr_responder_waits(void **state)
{
	static u8 out[256];
	struct iwarp_hdr h;
	struct buf b;
	struct rig r;
	struct ib_sge ss;

	(void)state;
	rig_init_rtr(&r, false, SOFT_TCP_RTR_WRITE0);
	buf_init(&b, &r.s, 10, 1);
	ss = sge_of(&b, 0, 10);
	assert_int_equal(post_send(r.s.qp, IB_WR_SEND, 1, &ss, 1, 0, 0), 0);
	raw_nothing(&r);
	expect_empty(r.s.cq);
	{
		struct iwarp_hdr w = { .opcode = IWARP_OP_WRITE, .last = true };

		raw_send(&r, out, frame(&w, NULL, 0, out));
	}
	raw_fpdu(&r, &h);
	assert_int_equal(h.opcode, IWARP_OP_SEND);
	assert_int_equal(h.msn, 1);
	assert_int_equal(h.pay_len, 10);
	expect_wc(r.s.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, 10);
	expect_empty(r.s.cq);
	buf_fini(&b);
	rig_fini(&r);
}

/* The initiator's first FPDU is its RTR: a zero-length WRITE (STag 0),
 * or a zero-length READ whose response completes nothing. */
static void test_rtr_initiator(void **state)
{
	static u8 out[256];

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct iwarp_hdr h;
		struct buf b;
		struct rig r;
		struct ib_sge ss;

		rig_init_rtr(&r, true,
			     k ? SOFT_TCP_RTR_READ0 : SOFT_TCP_RTR_WRITE0);
		buf_init(&b, &r.s, 10, 1);
		ss = sge_of(&b, 0, 10);
		/* posted before the RTR's answer: it follows the RTR */
		assert_int_equal(post_send(r.s.qp, IB_WR_SEND, 1, &ss, 1, 0, 0),
				 0);
		raw_fpdu(&r, &h);
		assert_int_equal(h.opcode,
				 k ? IWARP_OP_READ_REQ : IWARP_OP_WRITE);
		assert_int_equal(k ? h.read_size : h.pay_len, 0);
		assert_int_equal(k ? h.src_stag : h.stag, 0);
		raw_fpdu(&r, &h);
		assert_int_equal(h.opcode, IWARP_OP_SEND);
		expect_wc(r.s.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, 10);
		if (k) {
			struct iwarp_hdr rr = { .opcode = IWARP_OP_READ_RESP,
						.last = true };

			/* the READ0's response: swallowed, no completion;
			 * a READ after it is answered as usual */
			raw_send(&r, out, frame(&rr, NULL, 0, out));
			assert_int_equal(post_send(r.s.qp, IB_WR_RDMA_READ, 2,
						   &ss, 1, 0x1000, 0x77),
					 0);
			raw_fpdu(&r, &h);
			assert_int_equal(h.opcode, IWARP_OP_READ_REQ);
			assert_int_equal(h.msn, 2);
			rr.pay_len = 10;
			memset(out + 200, 0x42, 10);
			raw_send(&r, out, frame(&rr, out + 200, 10, out));
			expect_wc(r.s.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ,
				  10);
			for (int i = 0; i < 10; i++)
				assert_int_equal(at(&b)[i], 0x42);
		}
		expect_empty(r.s.cq);
		assert_int_equal(r.downs, 0);
		buf_fini(&b);
		rig_fini(&r);
	}
}

/*
 * The ORQ: with ORD 4, four READs go out at once and the fifth waits for
 * an answer; a WRITE behind a READ goes out at once but completes after
 * it; answers (in two segments each) complete everything in order.
 */
static void test_orq_depth(void **state)
{
	static u8 out[1 << 16];
	struct iwarp_hdr h;
	struct buf b;
	struct rig r;
	u32 stag[6];
	u64 to[6];

	(void)state;
	{
		struct soft_profile prof;
		int fd[2];

		memset(&r, 0, sizeof(r));
		tcp_env_profile(&prof, false);
		tcp_sockets(fd);
		side_init(&r.s, &prof);
		{
			struct soft_tcp_conn c = { .fd = fd[0],
						   .crc = true,
						   .ird = 8,
						   .ord = 4,
						   .initiator = true };

			assert_int_equal(rdmarw__soft_tcp_attach(r.s.qp, &c),
					 0);
		}
		side_rts(&r.s);
		r.raw = fd[1];
		assert_int_equal(rdmarw__iwarp_rx_init(&r.rx, true, 0xffff), 0);
	}
	buf_init(&b, &r.s, 6 * 1000, 0);
	for (int k = 0; k < 6; k++) {
		struct ib_sge ds = sge_of(&b, (size_t)k * 1000, 1000);

		assert_int_equal(post_send(r.s.qp, IB_WR_RDMA_READ, k, &ds, 1,
					   0x10000 + k * 1000, 0x500 + k),
				 0);
		if (k == 0) {
			struct ib_sge ws = sge_of(&b, 0, 8);

			assert_int_equal(post_send(r.s.qp, IB_WR_RDMA_WRITE,
						   100, &ws, 1, 0x9000, 0x77),
					 0);
		}
	}
	/* four READs and the WRITE between the first two are on the wire */
	for (int k = 0; k < 5; k++) {
		raw_fpdu(&r, &h);
		if (k == 1) {
			assert_int_equal(h.opcode, IWARP_OP_WRITE);
			continue;
		}
		assert_int_equal(h.opcode, IWARP_OP_READ_REQ);
		stag[k - (k > 1)] = h.sink_stag;
		to[k - (k > 1)] = h.sink_to;
		assert_int_equal(h.src_stag, 0x500 + k - (k > 1));
	}
	raw_nothing(&r);
	expect_empty(r.s.cq); /* the WRITE waits behind the READ */
	for (int k = 0; k < 6; k++) {
		u8 pay[1000];

		memset(pay, 0x10 + k, sizeof(pay));
		for (int half = 0; half < 2; half++) {
			struct iwarp_hdr rr = { .opcode = IWARP_OP_READ_RESP,
						.last = half == 1,
						.stag = stag[k],
						.to = to[k] + half * 500 };

			raw_send(&r, out, frame(&rr, pay, 500, out));
		}
		expect_wc(r.s.cq, k, IB_WC_SUCCESS, IB_WC_RDMA_READ, 1000);
		if (k == 0)
			expect_wc(r.s.cq, 100, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
				  8);
		/* each answer lets one more READ out */
		if (k < 2) {
			raw_fpdu(&r, &h);
			assert_int_equal(h.opcode, IWARP_OP_READ_REQ);
			assert_int_equal(h.src_stag, 0x500 + 4 + k);
			stag[4 + k] = h.sink_stag;
			to[4 + k] = h.sink_to;
		}
		raw_nothing(&r);
	}
	expect_empty(r.s.cq);
	for (int k = 0; k < 6; k++)
		for (int i = 0; i < 1000; i++)
			assert_int_equal(at(&b)[k * 1000 + i], 0x10 + k);
	guards_intact(&b);
	buf_fini(&b);
	rig_fini(&r);
}

/*
 * A READ response whose CRC is wrong: its payload is placed into the
 * READ's sink before the CRC is checked (siw's siw_proc_rresp() too), so
 * the range the response covers holds it and nothing else of the MR is
 * touched; the TERMINATE (LLP/MPA/CRC), the READ flushed once, the QP in
 * ERR.
 */
static void test_rresp_bad_crc(void **state)
{
	enum { LEN = 3000 };
	static u8 out[LEN + 64];
	u8 pay[LEN];
	struct iwarp_hdr h, rr = { .opcode = IWARP_OP_READ_RESP, .last = true };
	struct ib_sge ds;
	struct buf b;
	struct rig r;
	size_t n;

	(void)state;
	rig_init(&r, 8);
	buf_init(&b, &r.s, 3 * LEN, 0);
	memset(at(&b), 0x5a, 3 * LEN);
	ds = sge_of(&b, LEN, LEN);
	assert_int_equal(post_send(r.s.qp, IB_WR_RDMA_READ, 700, &ds, 1,
				   0x10000, 0x1234),
			 0);
	raw_fpdu(&r, &h);
	assert_int_equal(h.opcode, IWARP_OP_READ_REQ);
	for (int i = 0; i < LEN; i++)
		pay[i] = (u8)(i * 5 + 9);
	rr.stag = h.sink_stag;
	rr.to = h.sink_to;
	n = frame(&rr, pay, LEN, out);
	out[n - 1] ^= 0x10;
	raw_send(&r, out, n);
	expect_term(&r, IWARP_LAYER_LLP, IWARP_LLP_ET_MPA, IWARP_LLP_EC_CRC,
		    NULL, 0, 1);
	assert_memory_equal(at(&b) + LEN, pay, LEN);
	for (int i = 0; i < LEN; i++) {
		assert_int_equal(at(&b)[i], 0x5a);
		assert_int_equal(at(&b)[2 * LEN + i], 0x5a);
	}
	guards_intact(&b);
	buf_fini(&b);
	rig_fini(&r);
}

static int pair_downs[2], pair_why[2];

static void pair_down(void *ctx, enum soft_tcp_down why)
{
	int i = (int)(uintptr_t)ctx;

	__atomic_store_n(&pair_why[i], (int)why, __ATOMIC_RELAXED);
	__atomic_add_fetch(&pair_downs[i], 1, __ATOMIC_RELEASE);
}

static void wait_pair_down(int i)
{
	time_t start = time(NULL);

	while (!__atomic_load_n(&pair_downs[i], __ATOMIC_ACQUIRE)) {
		assert_true(time(NULL) - start < 120); /* hang guard */
		sched_yield();
	}
}

/*
 * rdmarw__soft_tcp_disconnect(): what was posted before still reaches the
 * peer (a 1 MiB WRITE, then a SEND), TCP closes in order, both QPs end in
 * ERR; down(LOCAL) here, down(CLOSED) there, once each; after
 * rdmarw__soft_tcp_forget() no down() comes.
 */
static void test_disconnect(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		struct soft_profile prof;
		struct buf src, dst, rb;
		struct ib_sge ss, rs;
		struct ib_wc wc;
		struct pair p;
		int fd[2];

		pair_downs[0] = pair_downs[1] = 0;
		tcp_env_profile(&prof, false);
		tcp_sockets(fd);
		for (int i = 0; i < 2; i++) {
			struct soft_tcp_conn c = {
				.fd = fd[i],
				.crc = true,
				.ird = 8,
				.ord = 8,
				.initiator = i == 0,
				.down = pair_down,
				.ctx = (void *)(uintptr_t)i,
			};

			side_init(&p.s[i], &prof);
			assert_int_equal(rdmarw__soft_tcp_attach(p.s[i].qp, &c),
					 0);
			side_rts(&p.s[i]);
		}
		buf_init(&src, &p.s[0], MIB, 5);
		buf_init(&dst, &p.s[1], MIB, 0);
		buf_init(&rb, &p.s[1], 64, 0);
		ss = sge_of(&src, 0, MIB);
		rs = sge_of(&rb, 0, 64);
		assert_int_equal(post_recv(p.s[1].qp, 1, &rs, 1), 0);
		assert_int_equal(post_recv(p.s[1].qp, 2, &rs, 1), 0);
		assert_int_equal(post_send(p.s[0].qp, IB_WR_RDMA_WRITE, 3, &ss,
					   1, (uintptr_t)at(&dst),
					   dst.mr->rkey),
				 0);
		ss.length = 64;
		assert_int_equal(
			post_send(p.s[0].qp, IB_WR_SEND, 4, &ss, 1, 0, 0), 0);
		expect_wc(p.s[0].cq, 3, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, MIB);
		expect_wc(p.s[0].cq, 4, IB_WC_SUCCESS, IB_WC_SEND, 64);
		if (k)
			rdmarw__soft_tcp_forget(p.s[0].qp);
		assert_int_equal(rdmarw__soft_tcp_disconnect(p.s[0].qp), 0);
		wait_pair_down(1);
		assert_int_equal(pair_why[1], SOFT_TCP_DOWN_CLOSED);
		/* the SEND arrived before the close; the other receive
		 * flushed */
		expect_wc(p.s[1].cq, 1, IB_WC_SUCCESS, IB_WC_RECV, 64);
		expect_wc(p.s[1].cq, 2, IB_WC_WR_FLUSH_ERR, 0, 0);
		assert_memory_equal(at(&dst), at(&src), MIB);
		while (__atomic_load_n(&p.s[0].qp->state, __ATOMIC_ACQUIRE) !=
		       IB_QPS_ERR)
			sched_yield();
		if (!k) {
			wait_pair_down(0);
			assert_int_equal(pair_why[0], SOFT_TCP_DOWN_LOCAL);
		}
		assert_int_equal(ib_poll_cq(p.s[0].cq, 1, &wc), 0);
		expect_empty(p.s[1].cq);
		buf_fini(&src);
		buf_fini(&dst);
		buf_fini(&rb);
		pair_fini(&p);
		assert_int_equal(pair_downs[0], k ? 0 : 1);
		assert_int_equal(pair_downs[1], 1);
	}
}

/* What the attach and the loopback's connect refuse. */
static void test_attach_refusals(void **state)
{
	struct soft_profile prof;
	struct side s, plain;
	struct soft_tcp_conn c = { .crc = true, .ird = 8, .ord = 8 };
	int fd[2];

	(void)state;
	/* TCP carries iWARP only */
	assert_int_equal(soft_profile_get("rxe", &prof), 0);
	prof.tcp = true;
	{
		struct soft_fabric *f = soft_fabric_create();

		assert_ptr_equal(soft_device_create(f, NULL, &prof),
				 ERR_PTR(-EINVAL));
		assert_int_equal(soft_fabric_destroy(f), 0);
	}
	tcp_env_profile(&prof, false);
	side_init(&s, &prof);
	assert_int_equal(soft_profile_get("siw", &prof), 0);
	side_init(&plain, &prof);
	tcp_sockets(fd);
	c.fd = fd[0];
	assert_int_equal(rdmarw__soft_tcp_attach(NULL, &c), -EINVAL);
	assert_int_equal(rdmarw__soft_tcp_attach(s.qp, NULL), -EINVAL);
	assert_int_equal(rdmarw__soft_tcp_attach(plain.qp, &c), -EOPNOTSUPP);
	assert_false(rdmarw__soft_is_tcp(plain.dev));
	assert_true(rdmarw__soft_is_tcp(s.dev));
	c.fd = -1;
	assert_int_equal(rdmarw__soft_tcp_attach(s.qp, &c), -EINVAL);
	c.fd = fd[0];
	c.ird = 1u << 20;
	assert_int_equal(rdmarw__soft_tcp_attach(s.qp, &c), -EINVAL);
	c.ird = 8;
	c.pre_len = 10;
	assert_int_equal(rdmarw__soft_tcp_attach(s.qp, &c), -EINVAL);
	c.pre_len = 0;
	assert_int_equal(soft_qp_connect(s.qp, plain.qp), -EINVAL);
	assert_int_equal(rdmarw__soft_tcp_attach(s.qp, &c), 0);
	assert_int_equal(rdmarw__soft_tcp_attach(s.qp, &c), -EBUSY);
	side_fini(&s); /* closes fd[0] */
	side_fini(&plain);
	close(fd[1]);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_refusals),
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_write_sizes),
		cmocka_unit_test(test_source_reuse),
		cmocka_unit_test(test_multi_sge),
		cmocka_unit_test(test_fpdus_per_sendmsg),
		cmocka_unit_test(test_send_stream_placed),
		cmocka_unit_test(test_both_ways_threaded),
		cmocka_unit_test(test_read_sizes),
		cmocka_unit_test(test_reads_in_flight),
		cmocka_unit_test(test_large_reads_in_flight),
		cmocka_unit_test(test_read_bad_rkey),
		cmocka_unit_test(test_bad_crc),
		cmocka_unit_test(test_write_split_bad_crc),
		cmocka_unit_test(test_write_mr_gone),
		cmocka_unit_test(test_bad_stag),
		cmocka_unit_test(test_bad_send),
		cmocka_unit_test(test_send_too_long),
		cmocka_unit_test(test_send_placed),
		cmocka_unit_test(test_read_over_ird),
		cmocka_unit_test(test_term_received),
		cmocka_unit_test(test_eof),
		cmocka_unit_test(test_rtr_responder_waits),
		cmocka_unit_test(test_rtr_initiator),
		cmocka_unit_test(test_disconnect),
		cmocka_unit_test(test_orq_depth),
		cmocka_unit_test(test_rresp_bad_crc),
		cmocka_unit_test(test_two_processes),
		cmocka_unit_test(test_peer_killed),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* one test, by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}

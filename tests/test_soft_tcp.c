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

#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

#include "soft/soft_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GUARD 64
#define MIB (1u << 20)
#define ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

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
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(l >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &len), 0);
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd[0] >= 0);
	assert_int_equal(connect(fd[0], (struct sockaddr *)&a, sizeof(a)), 0);
	fd[1] = accept(l, NULL, NULL);
	assert_true(fd[1] >= 0);
	close(l);
}

static void side_init(struct side *s, const struct soft_profile *p)
{
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 128,
			 .max_recv_wr = 128,
			 .max_send_sge = 4,
			 .max_recv_sge = 4 },
	};
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.qp_access_flags = ACCESS,
		.port_num = 1,
	};

	s->f = soft_fabric_create();
	assert_false(IS_ERR(s->f));
	s->dev = soft_device_create(s->f, NULL, p);
	assert_false(IS_ERR(s->dev));
	s->pd = ib_alloc_pd(s->dev, 0);
	assert_false(IS_ERR(s->pd));
	s->cq = ib_alloc_cq(s->dev, NULL, 512, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(s->cq));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	s->qp = ib_create_qp(s->pd, &qa);
	assert_false(IS_ERR(s->qp));
	assert_int_equal(ib_modify_qp(s->qp, &a,
				      IB_QP_STATE | IB_QP_PKEY_INDEX |
					      IB_QP_PORT | IB_QP_ACCESS_FLAGS),
			 0);
}

static void side_rts(struct side *s)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTR };

	/* the attributes the core asks of these transitions; the
	 * destination is the connection's, whatever the number says */
	assert_int_equal(ib_modify_qp(s->qp, &a,
				      IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
					      IB_QP_DEST_QPN | IB_QP_RQ_PSN |
					      IB_QP_MAX_DEST_RD_ATOMIC |
					      IB_QP_MIN_RNR_TIMER),
			 0);
	a.qp_state = IB_QPS_RTS;
	assert_int_equal(ib_modify_qp(s->qp, &a,
				      IB_QP_STATE | IB_QP_TIMEOUT |
					      IB_QP_RETRY_CNT |
					      IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
					      IB_QP_MAX_QP_RD_ATOMIC),
			 0);
}

static void side_fini(struct side *s)
{
	ib_destroy_qp(s->qp);
	ib_free_cq(s->cq);
	ib_dealloc_pd(s->pd);
	assert_int_equal(soft_device_destroy(s->dev), 0);
	assert_int_equal(soft_fabric_destroy(s->f), 0);
}

static void tcp_profile(struct soft_profile *p, bool threaded)
{
	assert_int_equal(soft_profile_get("siw", p), 0);
	p->tcp = true;
	p->threaded = threaded;
}

static void pair_init_conn(struct pair *p, bool threaded, u32 ird, u32 ord)
{
	struct soft_profile prof;
	int fd[2];

	tcp_profile(&prof, threaded);
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
		buf_fini(&src[i]);
		buf_fini(&dst[i]);
	}
	pair_fini(&p);
}

/* What the attach and the loopback's connect refuse. */
static void test_attach_refusals(void **state)
{
	struct soft_profile prof;
	struct side s, plain;
	struct soft_tcp_conn c = { .crc = true, .ird = 8, .ord = 8 };
	int fd[2];

	(void)state;
	tcp_profile(&prof, false);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_refusals),
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_write_sizes),
		cmocka_unit_test(test_multi_sge),
		cmocka_unit_test(test_both_ways_threaded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A frame corrupted on the way (issue 28): two siw devices with the TCP
 * transport on two fabrics, each attached to its own loopback connection
 * to a proxy thread here that forwards every byte, FPDU by FPDU, and flips
 * one payload bit of the Nth tagged WRITE FPDU from A to B.
 *
 * Then: B's CRC check catches it and B sends a TERMINATE (LLP, MPA, CRC)
 * that the proxy sees on its way to A; both QPs go to ERR; every WR on
 * both sides completes exactly once (A's WRs behind the WRITE flushed,
 * B's receives flushed); in B's MR nothing outside the WRITE's range
 * changes, nor the guards around the MR.  Inside the range each byte is
 * the old one, the new one or the corrupted one (tagged placement may
 * place before it checks the CRC, as siw does, or check first): only that
 * is asserted there.
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
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ACCESS TCP_ENV_ACCESS
#define GUARD 4096
#define WLEN (200u * 1024) /* four FPDUs */
#define MRLEN (3 * WLEN) /* the WRITE goes to the middle third */
#define HANG_S 60
/* an FPDU: the MPA length, a ULPDU of at most 65535 bytes, pad, CRC */
#define FPDU_MAX (2 + 65535 + 3 + 4)

struct side {
	struct soft_fabric *f;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *mem; /* GUARD | MR | GUARD */
	struct ib_mr *mr;
};

/* The proxy's record of what went by. */
static struct {
	pthread_t thread;
	int a, b; /* its ends: towards A, towards B */
	u8 flip_op; /* the opcode (WRITE or SEND) of the FPDU it flips */
	int flip_nth; /* the FPDU of that opcode from A it flips (from 1) */
	int writes; /* FPDUs of that opcode from A seen */
	bool flipped;
	int terms; /* TERMINATEs from B */
	struct iwarp_hdr term; /* the first one */
} px;

/* A direction of the proxy: bytes read, FPDUs cut out and forwarded. */
struct dir {
	int from, to;
	bool a_to_b;
	bool eof;
	u8 buf[2 * FPDU_MAX];
	size_t len;
};

static bool send_all(int fd, const u8 *p, size_t n)
{
	while (n) {
		ssize_t r = send(fd, p, n, MSG_NOSIGNAL);

		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

/* Look at one whole FPDU of @n bytes (CRC on) before it goes on. */
static void see_fpdu(struct dir *d, u8 *f, size_t n)
{
	struct iwarp_hdr h;
	int hl;

	if (rdmarw__iwarp_hdr_decode(f, n, &h) < 0)
		return;
	hl = rdmarw__iwarp_hdr_len(h.opcode);
	if (d->a_to_b && h.opcode == px.flip_op && ++px.writes == px.flip_nth &&
	    hl > 0 && (size_t)hl + 8 < n) {
		f[hl + 7] ^= 0x08; /* a payload bit */
		px.flipped = true;
	}
	if (!d->a_to_b && h.opcode == IWARP_OP_TERMINATE && !px.terms++)
		px.term = h;
}

static void dir_pump(struct dir *d)
{
	ssize_t r = recv(d->from, d->buf + d->len, sizeof(d->buf) - d->len,
			 MSG_DONTWAIT);

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
		d->eof = true;
		shutdown(d->to, SHUT_WR);
		return;
	}
	if (r < 0)
		return;
	d->len += (size_t)r;
	for (;;) {
		size_t ulpdu, n;

		if (d->len < 2)
			break;
		ulpdu = (size_t)d->buf[0] << 8 | d->buf[1];
		n = ((2 + ulpdu + 3) & ~(size_t)3) + 4;
		if (d->len < n)
			break;
		see_fpdu(d, d->buf, n);
		if (!send_all(d->to, d->buf, n)) {
			d->eof = true;
			return;
		}
		memmove(d->buf, d->buf + n, d->len - n);
		d->len -= n;
	}
}

static void *proxy(void *arg)
{
	static struct dir ab, ba;

	(void)arg;
	ab = (struct dir){ .from = px.a, .to = px.b, .a_to_b = true };
	ba = (struct dir){ .from = px.b, .to = px.a };
	while (!ab.eof || !ba.eof) {
		struct pollfd p[2] = { { ab.eof ? -1 : px.a, POLLIN, 0 },
				       { ba.eof ? -1 : px.b, POLLIN, 0 } };

		if (poll(p, 2, 1000) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			dir_pump(&ab);
		if (p[1].revents)
			dir_pump(&ba);
	}
	return NULL;
}

static void side_init(struct side *s, int fd, bool initiator, bool threaded)
{
	struct soft_profile prof;
	struct soft_tcp_conn c = { .fd = fd,
				   .crc = true,
				   .ird = 8,
				   .ord = 8,
				   .initiator = initiator };

	tcp_env_profile(&prof, threaded);
	s->f = soft_fabric_create();
	assert_false(IS_ERR_OR_NULL(s->f));
	s->dev = soft_device_create(s->f, NULL, &prof);
	assert_false(IS_ERR(s->dev));
	s->pd = ib_alloc_pd(s->dev, 0);
	assert_false(IS_ERR(s->pd));
	s->cq = ib_alloc_cq(s->dev, NULL, 64, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(s->cq));
	s->qp = tcp_env_qp(s->pd, s->cq, 16, 1);
	assert_int_equal(rdmarw__soft_tcp_attach(s->qp, &c), 0);
	tcp_env_rts(s->qp);
	s->mem = malloc(MRLEN + 2 * GUARD);
	assert_non_null(s->mem);
	for (size_t i = 0; i < MRLEN + 2 * GUARD; i++)
		s->mem[i] = (u8)(i * 31 + initiator);
	s->mr = ib_reg_user_mr(s->pd, (uintptr_t)s->mem + GUARD, MRLEN,
			       (uintptr_t)s->mem + GUARD, ACCESS);
	assert_false(IS_ERR(s->mr));
}

static void side_fini(struct side *s)
{
	assert_int_equal(ib_dereg_mr(s->mr), 0);
	if (s->qp)
		assert_int_equal(ib_destroy_qp(s->qp), 0);
	ib_free_cq(s->cq);
	ib_dealloc_pd(s->pd);
	assert_int_equal(soft_device_destroy(s->dev), 0);
	assert_int_equal(soft_fabric_destroy(s->f), 0);
	free(s->mem);
}

static u8 *mr_at(struct side *s, size_t off)
{
	return s->mem + GUARD + off;
}

static void post(struct ib_qp *qp, enum ib_wr_opcode op, u64 id, void *buf,
		 u32 len, u32 lkey, u64 raddr, u32 rkey)
{
	struct ib_sge sge = { (uintptr_t)buf, len, lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = id,
			.opcode = op,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = raddr,
		.rkey = rkey,
	};
	const struct ib_send_wr *bad;

	assert_int_equal(ib_post_send(qp, &wr.wr, &bad), 0);
}

static void post_recv_len(struct side *s, u64 id, size_t off, u32 len)
{
	struct ib_sge sge = { (uintptr_t)mr_at(s, off), len, s->mr->lkey };
	struct ib_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	assert_int_equal(ib_post_recv(s->qp, &wr, &bad), 0);
}

static void post_recv(struct side *s, u64 id, size_t off)
{
	post_recv_len(s, id, off, 64);
}

/* Poll @n completions; each of @ids exactly once; their statuses out. */
static void reap(struct side *s, const u64 *ids, int n, enum ib_wc_status *st)
{
	time_t start = time(NULL);
	unsigned int seen = 0;
	struct ib_wc wc;

	while (seen != (1u << n) - 1) {
		int r = ib_poll_cq(s->cq, 1, &wc), k;

		assert_true(r >= 0);
		if (!r) {
			assert_true(time(NULL) - start < HANG_S); /* guard */
			sched_yield();
			continue;
		}
		for (k = 0; k < n && ids[k] != wc.wr_id; k++)
			;
		assert_true(k < n); /* one of ours */
		assert_false(seen & 1u << k); /* once */
		seen |= 1u << k;
		st[k] = wc.status;
	}
	assert_int_equal(ib_poll_cq(s->cq, 1, &wc), 0);
}

static void wait_err(struct side *s)
{
	time_t start = time(NULL);

	while (__atomic_load_n(&s->qp->state, __ATOMIC_ACQUIRE) != IB_QPS_ERR) {
		assert_true(time(NULL) - start < HANG_S); /* hang guard */
		sched_yield();
	}
}

/*
 * A (the requester) and B over the proxy, which flips a bit in the @nth
 * FPDU of opcode @op: returns a copy of B's MR as it was.
 */
static u8 *corrupt_begin(struct side *A, struct side *B, u8 op, int nth,
			 bool threaded)
{
	int fa[2], fb[2];
	u8 *before;

	memset(&px, 0, sizeof(px));
	px.flip_op = op;
	px.flip_nth = nth;
	tcp_loopback_pair(fa);
	tcp_loopback_pair(fb);
	px.a = fa[1];
	px.b = fb[0];
	assert_int_equal(pthread_create(&px.thread, NULL, proxy, NULL), 0);
	side_init(A, fa[0], true, threaded);
	side_init(B, fb[1], false, !threaded);
	before = malloc(MRLEN);
	assert_non_null(before);
	memcpy(before, mr_at(B, 0), MRLEN);
	return before;
}

/*
 * A posted ids 1-3 (the corrupted message, a SEND, a READ of B), B ids 11
 * and 12 (receives): both QPs end in ERR, the proxy saw the bit flipped and
 * B's TERMINATE for the CRC (LLP, MPA, CRC).  At A a WRITE or SEND
 * completes once its bytes are in the socket (the source may be reused):
 * success, or flushed if still queued; the READ was never answered.  B's
 * two receives are flushed.
 */
static void corrupt_end(struct side *A, struct side *B)
{
	static const u64 a_ids[] = { 1, 2, 3 }, b_ids[] = { 11, 12 };
	enum ib_wc_status ast[3], bst[2];

	reap(A, a_ids, 3, ast);
	reap(B, b_ids, 2, bst);
	wait_err(A);
	wait_err(B);
	/* the QPs close their sockets: the proxy ends */
	assert_int_equal(ib_destroy_qp(A->qp), 0);
	assert_int_equal(ib_destroy_qp(B->qp), 0);
	A->qp = NULL;
	B->qp = NULL;
	assert_int_equal(pthread_join(px.thread, NULL), 0);
	assert_true(px.flipped);
	assert_true(px.terms >= 1);
	assert_int_equal(px.term.term.layer, IWARP_LAYER_LLP);
	assert_int_equal(px.term.term.etype, IWARP_LLP_ET_MPA);
	assert_int_equal(px.term.term.ecode, IWARP_LLP_EC_CRC);
	assert_true(ast[0] == IB_WC_SUCCESS || ast[0] == IB_WC_WR_FLUSH_ERR);
	assert_true(ast[1] == IB_WC_SUCCESS || ast[1] == IB_WC_WR_FLUSH_ERR);
	assert_int_equal(ast[2], IB_WC_WR_FLUSH_ERR);
	assert_int_equal(bst[0], IB_WC_WR_FLUSH_ERR);
	assert_int_equal(bst[1], IB_WC_WR_FLUSH_ERR);
}

/* B's guards as they were; both sides and the proxy's sockets go. */
static void corrupt_fini(struct side *A, struct side *B, u8 *before)
{
	for (size_t i = 0; i < GUARD; i++) {
		assert_int_equal(B->mem[i], (u8)(i * 31));
		assert_int_equal(B->mem[GUARD + MRLEN + i],
				 (u8)((GUARD + MRLEN + i) * 31));
	}
	free(before);
	side_fini(A);
	side_fini(B);
	close(px.a);
	close(px.b);
}

static void corrupt_nth_write(int nth, bool threaded)
{
	struct side A, B;
	u8 *before, *src;

	before = corrupt_begin(&A, &B, IWARP_OP_WRITE, nth, threaded);
	src = mr_at(&A, 0);

	/* B: two receives (in the last third, outside the WRITE's range) */
	post_recv(&B, 11, 2 * WLEN);
	post_recv(&B, 12, 2 * WLEN + 64);
	/* A: the WRITE to B's middle third, a SEND and a READ behind it */
	post(A.qp, IB_WR_RDMA_WRITE, 1, src, WLEN, A.mr->lkey,
	     (uintptr_t)mr_at(&B, WLEN), B.mr->rkey);
	post(A.qp, IB_WR_SEND, 2, src, 16, A.mr->lkey, 0, 0);
	post(A.qp, IB_WR_RDMA_READ, 3, mr_at(&A, WLEN), 64, A.mr->lkey,
	     (uintptr_t)mr_at(&B, 0), B.mr->rkey);

	/* nothing behind the corrupted WRITE ran at B: the SEND took no
	 * receive (both flushed), the READ was never answered */
	corrupt_end(&A, &B);
	/* B's MR: outside the WRITE's range as it was; inside, each byte
	 * old, new, or the corrupted one (a design that places before it
	 * checks the CRC places the bit flipped too, as siw does) */
	assert_memory_equal(mr_at(&B, 0), before, WLEN);
	assert_memory_equal(mr_at(&B, 2 * WLEN), before + 2 * WLEN, WLEN);
	for (size_t i = 0; i < WLEN; i++) {
		u8 v = mr_at(&B, WLEN)[i];

		assert_true(v == before[WLEN + i] || v == src[i] ||
			    v == (src[i] ^ 0x08));
	}
	/* A's READ sink untouched */
	for (size_t i = 0; i < 64; i++)
		assert_int_equal(mr_at(&A, WLEN)[i],
				 (u8)((GUARD + WLEN + i) * 31 + 1));
	corrupt_fini(&A, &B, before);
}

/*
 * A SEND of SLEN bytes (two FPDUs) into a receive of RLEN at B's middle
 * third, its @nth FPDU corrupted: its payload is read from the socket
 * straight into the receive's SGEs (siw_proc_send()), the CRC checked at
 * the FPDU's end: TERMINATE (LLP, MPA, CRC), the receive it took flushed
 * as the one behind it, and not a byte of B's MR outside the receive's
 * SGE changed (inside it: old, new or corrupted bytes).
 */
#define SLEN (100u * 1024)
#define RLEN (SLEN + 1000)
static void corrupt_nth_send(int nth, bool threaded)
{
	struct side A, B;
	u8 *before, *src;

	before = corrupt_begin(&A, &B, IWARP_OP_SEND, nth, threaded);
	src = mr_at(&A, 0);

	post_recv_len(&B, 11, WLEN, RLEN);
	post_recv(&B, 12, 2 * WLEN + 64);
	post(A.qp, IB_WR_SEND, 1, src, SLEN, A.mr->lkey, 0, 0);
	post(A.qp, IB_WR_SEND, 2, src, 16, A.mr->lkey, 0, 0);
	post(A.qp, IB_WR_RDMA_READ, 3, mr_at(&A, WLEN), 64, A.mr->lkey,
	     (uintptr_t)mr_at(&B, 0), B.mr->rkey);

	/* the corrupted SEND's receive and the one behind it: flushed */
	corrupt_end(&A, &B);
	assert_memory_equal(mr_at(&B, 0), before, WLEN);
	assert_memory_equal(mr_at(&B, WLEN + RLEN), before + WLEN + RLEN,
			    MRLEN - WLEN - RLEN);
	for (size_t i = 0; i < RLEN; i++) {
		u8 v = mr_at(&B, WLEN)[i];

		assert_true(
			v == before[WLEN + i] ||
			(i < SLEN && (v == src[i] || v == (src[i] ^ 0x08))));
	}
	corrupt_fini(&A, &B, before);
}

static void test_send_first_fpdu(void **state)
{
	(void)state;
	corrupt_nth_send(1, false);
}

static void test_send_last_fpdu(void **state)
{
	(void)state;
	corrupt_nth_send(2, true);
}

/* The first FPDU of the WRITE, its second, its last. */
static void test_first_fpdu(void **state)
{
	(void)state;
	corrupt_nth_write(1, false);
}

static void test_second_fpdu(void **state)
{
	(void)state;
	corrupt_nth_write(2, true);
}

static void test_last_fpdu(void **state)
{
	(void)state;
	corrupt_nth_write(4, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_fpdu),
		cmocka_unit_test(test_second_fpdu),
		cmocka_unit_test(test_last_fpdu),
		cmocka_unit_test(test_send_first_fpdu),
		cmocka_unit_test(test_send_last_fpdu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

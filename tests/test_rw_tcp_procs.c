// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The R/W API between two processes over loopback TCP (issue 28): the
 * test forks; the child is the responder (a siw device with profile.tcp,
 * one MR over a remote region with guard bytes at both ends, which it
 * reports through a control socket), the parent posts rdma_rw_ctx_init()
 * and its WR chain for READ and WRITE on the other end of the connection
 * (rdmarw__soft_tcp_attach(), CRC on, IRD/ORD 8): one SGE, many SGEs
 * (MULTI_WR for a WRITE; a READ on iWARP always takes the MR path) and
 * force_mr, 1 B to 4 MiB.
 *
 * Each I/O: one completion, IB_WC_SUCCESS, nothing more on the CQ; the
 * exact bytes moved; every byte around the local entries unchanged (guard
 * pages between them), and after a WRITE the whole remote region equal to
 * what the child expects (the WRITE's range changed, nothing else).  The
 * child learns of a WRITE from a SEND posted behind it, so it checks only
 * after the WRITE was placed (RDMAP orders a SEND after the WRITEs before
 * it).  And the WR chain built on the TCP QP is the one rdma_rw builds for
 * the same scatterlist on an in-process siw QP (opcodes, flags, SGE
 * addresses and lengths, remote addresses and keys, registrations).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/tcp_env.h"

#include <rdmarw/ib_verbs.h>
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "soft/soft_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG 4096u
#define MIB (1u << 20)
#define RMAX (4u * MIB)
/* the remote region: a guard page, room for any I/O at any offset in a
 * page, a guard page; one MR over all of it */
#define RLEN (RMAX + 3 * PG)
#define ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)
#define SEED_REMOTE 0x5eed
#define MAX_ENTS 7
#define CHAIN_MAX 64
/* hang guard (not a timed assertion: a stalled I/O fails the test) */
#ifndef HANG_S
#define HANG_S 120
#endif

enum { CMD_WRITTEN = 1, CMD_QUIT = 2 };

/* What the parent SENDs after a WRITE: the range and the bytes' seed. */
struct cmd {
	u32 op;
	u32 pad;
	u64 off;
	u64 len;
	u64 seed;
};

struct remote {
	u64 addr;
	u32 rkey;
	u32 pad;
};

/* The bytes of stream @seed at @i: every process computes the same. */
static u8 pat(u64 seed, u64 i)
{
	u64 x = (seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return (u8)(x >> 32);
}

static void fill(u8 *p, u64 len, u64 seed, u64 from)
{
	for (u64 i = 0; i < len; i++)
		p[i] = pat(seed, from + i);
}

/* One end: its fabric, device, PD, CQ and QP (moved to RTS). */
struct end {
	struct soft_fabric *f;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

/* 0 or the failing line (the child cannot use cmocka's asserts). */
static int end_init(struct end *e, bool tcp, int fd, bool initiator)
{
	struct soft_profile prof;
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = 16,
			 .max_send_sge = 4,
			 .max_recv_sge = 1,
			 .max_rdma_ctxs = 2 },
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT,
				.qp_access_flags = ACCESS,
				.port_num = 1 };
	struct soft_tcp_conn c = { .fd = fd,
				   .crc = true,
				   .ird = 8,
				   .ord = 8,
				   .initiator = initiator };

	memset(e, 0, sizeof(*e));
	if (soft_profile_get("siw", &prof))
		return __LINE__;
	prof.tcp = tcp;
	e->f = soft_fabric_create();
	if (IS_ERR_OR_NULL(e->f))
		return __LINE__;
	e->dev = soft_device_create(e->f, NULL, &prof);
	if (IS_ERR(e->dev))
		return __LINE__;
	e->pd = ib_alloc_pd(e->dev, 0);
	e->cq = ib_alloc_cq(e->dev, NULL, 256, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->pd) || IS_ERR(e->cq))
		return __LINE__;
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ib_create_qp(e->pd, &qa);
	if (IS_ERR(e->qp))
		return __LINE__;
	if (!tcp)
		return 0; /* the reference QP only builds chains */
	if (ib_modify_qp(e->qp, &a,
			 IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
				 IB_QP_ACCESS_FLAGS) ||
	    rdmarw__soft_tcp_attach(e->qp, &c))
		return __LINE__;
	a.qp_state = IB_QPS_RTR;
	if (ib_modify_qp(e->qp, &a,
			 IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
				 IB_QP_DEST_QPN | IB_QP_RQ_PSN |
				 IB_QP_MAX_DEST_RD_ATOMIC |
				 IB_QP_MIN_RNR_TIMER))
		return __LINE__;
	a.qp_state = IB_QPS_RTS;
	if (ib_modify_qp(e->qp, &a,
			 IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				 IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
				 IB_QP_MAX_QP_RD_ATOMIC))
		return __LINE__;
	return 0;
}

static int end_fini(struct end *e)
{
	if (ib_destroy_qp(e->qp))
		return __LINE__;
	ib_free_cq(e->cq);
	ib_dealloc_pd(e->pd);
	if (soft_device_destroy(e->dev) || soft_fabric_destroy(e->f))
		return __LINE__;
	return 0;
}

/* ---- the child: the responder ---------------------------------------- */

static int child_post_recv(struct end *e, struct cmd *c, struct ib_mr *mr)
{
	struct ib_sge sge = { (uintptr_t)c, sizeof(*c), mr->lkey };
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(e->qp, &wr, &bad);
}

/* Wait for the RECV of the next command; 0 when it came. */
static int child_wait(struct end *e)
{
	struct ib_wc wc;
	int r;

	while ((r = ib_poll_cq(e->cq, 1, &wc)) == 0)
		sched_yield(); /* the parent's end closing flushes it */
	if (r != 1 || wc.status != IB_WC_SUCCESS ||
	    wc.byte_len != sizeof(struct cmd))
		return __LINE__;
	return 0;
}

static int child(int fd, int ctl)
{
	struct end e;
	struct remote me = { 0 };
	struct cmd *c;
	struct ib_mr *mr, *cmr;
	u8 *rb, *shadow;
	int ret;

	ret = end_init(&e, true, fd, false);
	if (ret)
		return ret;
	rb = aligned_alloc(PG, RLEN);
	shadow = malloc(RLEN);
	c = calloc(1, sizeof(*c));
	if (!rb || !shadow || !c)
		return __LINE__;
	fill(rb, RLEN, SEED_REMOTE, 0);
	memcpy(shadow, rb, RLEN);
	mr = ib_reg_user_mr(e.pd, (uintptr_t)rb, RLEN, (uintptr_t)rb, ACCESS);
	cmr = ib_reg_user_mr(e.pd, (uintptr_t)c, sizeof(*c), (uintptr_t)c,
			     IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(mr) || IS_ERR(cmr) || child_post_recv(&e, c, cmr))
		return __LINE__;
	me.addr = (uintptr_t)rb;
	me.rkey = mr->rkey;
	if (write(ctl, &me, sizeof(me)) != sizeof(me))
		return __LINE__;
	for (;;) {
		u8 ok;

		ret = child_wait(&e);
		if (ret)
			return ret;
		if (c->op == CMD_QUIT)
			break;
		if (c->op != CMD_WRITTEN || c->off > RLEN ||
		    c->len > RLEN - c->off)
			return __LINE__;
		fill(shadow + c->off, c->len, c->seed, 0);
		/* the WRITE's range as written, everything else as it was */
		ok = !memcmp(rb, shadow, RLEN);
		if (child_post_recv(&e, c, cmr) || write(ctl, &ok, 1) != 1)
			return __LINE__;
		if (!ok)
			return __LINE__;
	}
	if (ib_dereg_mr(mr) || ib_dereg_mr(cmr))
		return __LINE__;
	ret = end_fini(&e);
	free(rb);
	free(shadow);
	free(c);
	return ret;
}

/* ---- the parent: rdma_rw ---------------------------------------------- */

static struct {
	struct end tcp, ref;
	int ctl;
	pid_t pid;
	struct remote rem;
	u8 *rshadow; /* the remote region as the parent expects it */
	struct cmd *cmd;
	struct ib_mr *cmd_mr;
	int done;
	enum ib_wc_status status;
} t;

static void rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	(void)cq;
	t.done++;
	t.status = wc->status;
}

static struct ib_cqe rw_cqe = { .done = rw_done };

static int setup(void **state)
{
	int fd[2], ctl[2], st;

	(void)state;
	tcp_loopback_pair(fd);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, ctl), 0);
	t.pid = fork();
	assert_true(t.pid >= 0);
	if (!t.pid) {
		close(fd[0]);
		close(ctl[0]);
		st = child(fd[1], ctl[1]);
		if (st)
			fprintf(stderr, "child: failed at line %d\n", st);
		_exit(st ? 1 : 0);
	}
	close(fd[1]);
	close(ctl[1]);
	t.ctl = ctl[0];
	{
		struct timeval tv = { .tv_sec = 120 }; /* hang guard */

		assert_int_equal(setsockopt(t.ctl, SOL_SOCKET, SO_RCVTIMEO, &tv,
					    sizeof(tv)),
				 0);
	}
	assert_int_equal(end_init(&t.tcp, true, fd[0], true), 0);
	assert_int_equal(end_init(&t.ref, false, -1, false), 0);
	assert_int_equal(read(t.ctl, &t.rem, sizeof(t.rem)), sizeof(t.rem));
	t.rshadow = malloc(RLEN);
	assert_non_null(t.rshadow);
	fill(t.rshadow, RLEN, SEED_REMOTE, 0);
	t.cmd = calloc(1, sizeof(*t.cmd));
	assert_non_null(t.cmd);
	t.cmd_mr = ib_reg_user_mr(t.tcp.pd, (uintptr_t)t.cmd, sizeof(*t.cmd),
				  (uintptr_t)t.cmd, IB_ACCESS_LOCAL_WRITE);
	assert_false(IS_ERR(t.cmd_mr));
	return 0;
}

/* SEND @op (and a WRITE's range) to the child; its SEND completes. */
static void send_cmd(u32 op, u64 off, u64 len, u64 seed)
{
	struct ib_sge sge = { (uintptr_t)t.cmd, sizeof(*t.cmd),
			      t.cmd_mr->lkey };
	struct ib_send_wr wr = { .wr_id = 77,
				 .opcode = IB_WR_SEND,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .send_flags = IB_SEND_SIGNALED };
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	time_t start = time(NULL);
	int r;

	*t.cmd = (struct cmd){ .op = op, .off = off, .len = len, .seed = seed };
	assert_int_equal(ib_post_send(t.tcp.qp, &wr, &bad), 0);
	while ((r = ib_poll_cq(t.tcp.cq, 1, &wc)) == 0) {
		assert_true(time(NULL) - start < 120); /* hang guard */
		sched_yield();
	}
	assert_int_equal(r, 1);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.status, IB_WC_SUCCESS);
}

static int teardown(void **state)
{
	int st;

	(void)state;
	send_cmd(CMD_QUIT, 0, 0, 0);
	assert_int_equal(waitpid(t.pid, &st, 0), t.pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(ib_dereg_mr(t.cmd_mr), 0);
	assert_int_equal(end_fini(&t.tcp), 0);
	assert_int_equal(end_fini(&t.ref), 0);
	close(t.ctl);
	free(t.rshadow);
	free(t.cmd);
	return 0;
}

/*
 * The local side of one I/O: @n entries of an arena, each starting on a
 * page (the first @lead bytes in), guard pages before, between and after;
 * @want is the whole arena as it must be after the I/O.
 */
struct io {
	u8 *arena;
	u8 *want;
	size_t alen;
	struct scatterlist sg[MAX_ENTS];
	int n;
};

static void io_init(struct io *io, u64 len, int n, u32 lead, bool read,
		    u64 seed)
{
	u64 part, done = 0, pos = PG;

	assert_true(n >= 1 && n <= MAX_ENTS);
	part = n == 1 ? len : (len / n) & ~(u64)(PG - 1);
	assert_true(n == 1 || part >= PG);
	io->n = n;
	io->alen = (PG + lead + len + (u64)n * 2 * PG + PG + PG - 1) &
		   ~(u64)(PG - 1);
	io->arena = aligned_alloc(PG, io->alen);
	io->want = malloc(io->alen);
	assert_non_null(io->arena);
	assert_non_null(io->want);
	fill(io->arena, io->alen, seed ^ 0xa5a5, 0); /* the guards' bytes */
	sg_init_table(io->sg, n);
	for (int i = 0; i < n; i++) {
		u64 l = i == n - 1 ? len - done : part;
		u8 *p = io->arena + pos + (i ? 0 : lead);

		if (!read)
			fill(p, l, seed, done);
		sg_set_buf(&io->sg[i], p, (unsigned int)l);
		done += l;
		pos = ((u64)(p + l - io->arena) + 2 * PG - 1) & ~(u64)(PG - 1);
	}
	assert_true(pos <= io->alen);
	memcpy(io->want, io->arena, io->alen);
}

static void io_fini(struct io *io)
{
	free(io->arena);
	free(io->want);
}

/* A WR as compared between the two QPs (local keys differ: left out). */
struct wr_sig {
	int opcode;
	int flags;
	int num_sge;
	u64 addr[8];
	u32 len[8];
	u64 raddr;
	u32 rkey;
	u64 iova;
	u64 mr_len;
	int access;
};

static int chain_sig(struct ib_send_wr *wr, struct wr_sig *s, u32 rkey)
{
	int n = 0;

	for (; wr; wr = wr->next, n++) {
		assert_true(n < CHAIN_MAX);
		memset(&s[n], 0, sizeof(s[n]));
		s[n].opcode = wr->opcode;
		s[n].flags = wr->send_flags;
		s[n].num_sge = wr->num_sge;
		assert_true(wr->num_sge <= 8);
		for (int i = 0; i < wr->num_sge; i++) {
			s[n].addr[i] = wr->sg_list[i].addr;
			s[n].len[i] = wr->sg_list[i].length;
		}
		if (wr->opcode == IB_WR_RDMA_READ ||
		    wr->opcode == IB_WR_RDMA_WRITE) {
			s[n].raddr = rdma_wr(wr)->remote_addr;
			/* the remote key is the peer's, the same in both */
			assert_int_equal(rdma_wr(wr)->rkey, rkey);
			s[n].rkey = rdma_wr(wr)->rkey;
		} else if (wr->opcode == IB_WR_REG_MR) {
			s[n].iova = reg_wr(wr)->mr->iova;
			s[n].mr_len = reg_wr(wr)->mr->length;
			s[n].access = reg_wr(wr)->access;
		}
	}
	return n;
}

/* The chain of @ctx on the reference QP for the same I/O equals @s. */
static void same_as_in_process(struct io *io, u64 raddr, bool read,
			       const struct wr_sig *s, int n, u8 type)
{
	struct wr_sig r[CHAIN_MAX];
	struct rdma_rw_ctx ctx;
	struct ib_send_wr *first;
	enum dma_data_direction dir = read ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	int ret, m;

	ret = rdma_rw_ctx_init(&ctx, t.ref.qp, 1, io->sg, io->n, 0, raddr,
			       t.rem.rkey, dir);
	assert_true(ret > 0);
	assert_int_equal(ctx.type, type);
	first = rdma_rw_ctx_wrs(&ctx, t.ref.qp, 1, &rw_cqe, NULL);
	m = chain_sig(first, r, t.rem.rkey);
	assert_int_equal(m, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(r[i].opcode, s[i].opcode);
		assert_int_equal(r[i].flags, s[i].flags);
		assert_int_equal(r[i].num_sge, s[i].num_sge);
		for (int j = 0; j < s[i].num_sge; j++) {
			assert_int_equal(r[i].addr[j], s[i].addr[j]);
			assert_int_equal(r[i].len[j], s[i].len[j]);
		}
		assert_int_equal(r[i].raddr, s[i].raddr);
		assert_int_equal(r[i].rkey, s[i].rkey);
		assert_int_equal(r[i].iova, s[i].iova);
		assert_int_equal(r[i].mr_len, s[i].mr_len);
		assert_int_equal(r[i].access, s[i].access);
	}
	rdma_rw_ctx_destroy(&ctx, t.ref.qp, 1, io->sg, io->n, dir);
}

/* Process the CQ until the I/O's one completion; nothing else comes. */
static void wait_done(void)
{
	time_t start = time(NULL);

	while (!t.done) {
		assert_true(ib_process_cq_direct(t.tcp.cq, 16) >= 0);
		if (!t.done) {
			assert_true(time(NULL) - start <
				    HANG_S); /* hang guard */
			sched_yield();
		}
	}
	assert_int_equal(t.done, 1);
	assert_int_equal(t.status, IB_WC_SUCCESS);
	assert_int_equal(ib_process_cq_direct(t.tcp.cq, 16), 0);
}

/*
 * One I/O of @len bytes in @n entries at remote offset @roff, through the
 * TCP QP; *@type is the path rdma_rw took.
 */
static void one_io(bool rd, u64 len, int n, u32 lead, u64 roff, u64 seed,
		   u8 *type)
{
	enum dma_data_direction dir = rd ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	u64 raddr = t.rem.addr + roff;
	struct wr_sig s[CHAIN_MAX];
	struct ib_send_wr *first;
	const struct ib_send_wr *bad = NULL;
	struct rdma_rw_ctx ctx;
	struct io io;
	int ret, nwr;
	u64 done = 0;
	u8 ok = 0;

	assert_true(roff >= PG && roff + len <= RLEN - PG);
	io_init(&io, len, n, lead, rd, seed);
	ret = rdma_rw_ctx_init(&ctx, t.tcp.qp, 1, io.sg, io.n, 0, raddr,
			       t.rem.rkey, dir);
	assert_true(ret > 0);
	*type = ctx.type;
	first = rdma_rw_ctx_wrs(&ctx, t.tcp.qp, 1, &rw_cqe, NULL);
	nwr = chain_sig(first, s, t.rem.rkey);
	same_as_in_process(&io, raddr, rd, s, nwr, ctx.type);
	t.done = 0;
	assert_int_equal(ib_post_send(t.tcp.qp, first, &bad), 0);
	wait_done();
	rdma_rw_ctx_destroy(&ctx, t.tcp.qp, 1, io.sg, io.n, dir);

	/* the exact bytes, in the entries, nothing around them */
	for (int i = 0; i < io.n; i++) {
		u8 *p = sg_virt(&io.sg[i]);
		u64 l = io.sg[i].length;

		if (rd)
			memcpy(io.want + (p - io.arena),
			       t.rshadow + roff + done, l);
		done += l;
	}
	assert_int_equal(done, len);
	assert_memory_equal(io.arena, io.want, io.alen);
	if (!rd) {
		fill(t.rshadow + roff, len, seed, 0);
		send_cmd(CMD_WRITTEN, roff, len, seed);
		assert_int_equal(read(t.ctl, &ok, 1), 1);
		assert_int_equal(ok, 1); /* the child's whole region */
	}
	io_fini(&io);
}

static const u64 sizes[] = { 1, 513, PG, 65536 + 17, MIB, RMAX };

static void run_sizes(bool read, int n_max, u8 expect_type)
{
	u64 seed = read ? 100 : 200;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		u64 len = sizes[k];
		int n = n_max;
		u32 lead = (u32)(k * 129) % PG;
		u64 roff = PG + (k * 1237) % PG;
		u8 type;

		if (n > 1) {
			/* whole pages in all but the last entry */
			if ((u64)n > len / PG)
				n = (int)(len / PG);
			if (n < 1)
				n = 1;
			lead = 0;
		}
		if (lead + len > RMAX + PG)
			lead = 0;
		one_io(read, len, n, lead, roff, seed + k, &type);
		if (expect_type == RDMA_RW_MULTI_WR && n == 1)
			assert_int_equal(type, RDMA_RW_SINGLE_WR);
		else
			assert_int_equal(type, expect_type);
	}
}

static void test_write_single(void **state)
{
	(void)state;
	run_sizes(false, 1, RDMA_RW_SINGLE_WR);
}

static void test_write_multi(void **state)
{
	(void)state;
	run_sizes(false, MAX_ENTS, RDMA_RW_MULTI_WR);
}

/* iWARP: a READ goes through an MR whatever its shape (the sink's key) */
static void test_read_single(void **state)
{
	(void)state;
	run_sizes(true, 1, RDMA_RW_MR);
}

static void test_read_multi(void **state)
{
	(void)state;
	run_sizes(true, MAX_ENTS, RDMA_RW_MR);
}

/*
 * READs of 4 MiB one after the other: each response is 65 FPDUs, more
 * than the responder's transmit buffer holds, which the loopback socket
 * may take whole each time it is drained (no EAGAIN, so no EPOLLOUT edge
 * to come back on): the responder must go on by itself.
 */
static void test_read_4mib_repeated(void **state)
{
	u8 type;

	(void)state;
	for (int i = 0; i < 32; i++) {
		one_io(true, RMAX, 1, 0, PG + (u64)(i * 97) % PG, 300 + i,
		       &type);
		assert_int_equal(type, RDMA_RW_MR);
	}
}

static void test_write_force_mr(void **state)
{
	(void)state;
	rdma_rw_set_force_mr(true);
	run_sizes(false, 3, RDMA_RW_MR);
	rdma_rw_set_force_mr(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_single),
		cmocka_unit_test(test_write_multi),
		cmocka_unit_test(test_read_single),
		cmocka_unit_test(test_read_multi),
		cmocka_unit_test(test_read_4mib_repeated),
		cmocka_unit_test(test_write_force_mr),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}

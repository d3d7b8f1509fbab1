// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: rdma_rw_ctx_init() and rdma_rw_ctx_init_bvec() with
 * arbitrary SGLs (entry lengths, gaps, alignment), sg_offset or bio_vec
 * iterators, directions, profiles (mlx5, rxe, siw, rxe with IOMMU), device
 * attributes (max_sgl_rd, page-list length, SGE limits) and force_mr.
 * Every init either fails with -EINVAL, -EAGAIN or -ENOMEM leaving nothing
 * mapped or taken, or gives a context that is posted (alone or with a
 * chained SEND, once or twice) and must complete successfully with every
 * byte of both buffers as a byte model says; canaries around the buffers
 * must stay intact; destroy gives everything back.
 */
#include "fuzz_common.h"

#include <errno.h>

#define ARENA_PAGES 40
#define ARENA (ARENA_PAGES * PAGE_SIZE)
#define MAX_ENTS 24

static u8 *loc_mem, *rem_mem; /* GUARD + ARENA + GUARD, page aligned */
static u8 *loc_exp, *rem_exp;
#define GUARD PAGE_SIZE

struct piece {
	u64 off;
	u32 len;
};

static void setup_once(void)
{
	size_t total = ARENA + 2 * GUARD;

	if (loc_mem)
		return;
	FUZZ_CHECK(!posix_memalign((void **)&loc_mem, PAGE_SIZE, total) &&
			   !posix_memalign((void **)&rem_mem, PAGE_SIZE, total),
		   "arenas");
	loc_exp = malloc(total);
	rem_exp = malloc(total);
	FUZZ_CHECK(loc_exp && rem_exp, "arenas");
}

static void fill(u8 *p, size_t n, u32 seed)
{
	u64 x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static void check_mem(const u8 *got, const u8 *want, const char *what)
{
	size_t i;

	if (!memcmp(got, want, ARENA + 2 * GUARD))
		return;
	for (i = 0; got[i] == want[i]; i++)
		;
	FUZZ_CHECK(0, "%s byte %zd (arena offset) is %#x, want %#x", what,
		   (ssize_t)i - GUARD, got[i], want[i]);
}

/* Apply a transfer of @pieces to the expected images. */
static void model_apply(const struct piece *pc, u32 npc, u64 roff, bool write)
{
	u64 r = roff;
	u32 i;

	for (i = 0; i < npc; i++) {
		u8 *l = loc_exp + GUARD + pc[i].off;
		u8 *rm = rem_exp + GUARD + r;

		if (write)
			memcpy(rm, loc_mem + GUARD + pc[i].off, pc[i].len);
		else
			memcpy(l, rem_mem + GUARD + r, pc[i].len);
		r += pc[i].len;
	}
}

/* The bytes a transfer moves: skip @skip, then at most @size bytes. */
static u32 model_pieces(const u64 *off, const u32 *len, u32 n, u64 skip,
			u64 size, struct piece *pc, u64 *total)
{
	u32 i, npc = 0;

	*total = 0;
	for (i = 0; i < n && size; i++) {
		u64 take;

		if (skip >= len[i]) {
			skip -= len[i];
			continue;
		}
		take = len[i] - skip < size ? len[i] - skip : size;
		pc[npc++] = (struct piece){ off[i] + skip, (u32)take };
		*total += take;
		size -= take;
		skip = 0;
	}
	return npc;
}

struct done {
	struct ib_cqe cqe;
	int count;
	enum ib_wc_status status;
};

static void on_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct done *d = container_of(wc->wr_cqe, struct done, cqe);

	d->count++;
	d->status = wc->status;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct soft_profile prof;
	struct fuzz_env e;
	struct scatterlist sg[MAX_ENTS];
	struct bio_vec bv[MAX_ENTS];
	struct bvec_iter it = { 0 };
	struct piece pc[MAX_ENTS];
	struct rdma_rw_ctx ctx;
	struct done d = { .cqe.done = on_done };
	struct ib_send_wr send = { 0 }, *chain = NULL;
	struct ib_recv_wr recv = { 0 };
	struct ib_sge ssge, rsge;
	struct ib_mr *rmr, *rcv_mr;
	u8 msg[16] = "rdmarw-fuzz-msg", rcv[16] = { 0 };
	u64 off[MAX_ENTS], cursor, skip, total, want, roff;
	u32 len[MAX_ENTS], flags, n, i, npc, posts, sge;
	enum dma_data_direction dir;
	bool bvec, force;
	int ret, p;

	setup_once();
	flags = fuzz_u16(&in);
	p = (int)(flags & 3);
	force = flags & 4;
	bvec = flags & 8;
	dir = flags & 16 ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	posts = flags & 32 ? 2 : 1;
	FUZZ_CHECK(!soft_profile_get(fuzz_profiles[p == 3 ? 1 : p], &prof),
		   "profile");
	prof.iommu = p == 3;
	if (flags & 64)
		prof.attrs.max_sgl_rd = fuzz_below(&in, 8);
	if (flags & 128)
		prof.attrs.max_fast_reg_page_list_len = 1 + fuzz_below(&in, 8);
	sge = 1 + fuzz_below(&in, (u32)prof.attrs.max_send_sge);

	/* The SGL: lengths and gaps from the input, in the local arena. */
	n = 1 + fuzz_below(&in, MAX_ENTS);
	cursor = fuzz_below(&in, 2 * PAGE_SIZE);
	for (i = 0; i < n; i++) {
		u32 shape = fuzz_u8(&in);

		if (shape & 1) /* start on a page boundary */
			cursor = (cursor + PAGE_SIZE - 1) & PAGE_MASK;
		else
			cursor += fuzz_below(&in, shape & 2 ? 64 : PAGE_SIZE);
		len[i] = shape & 4 ? (1 + (shape >> 6)) * PAGE_SIZE :
				     fuzz_below(&in, 3 * PAGE_SIZE);
		if (shape & 8 && i) /* contiguous with the previous entry */
			cursor = off[i - 1] + len[i - 1];
		if (cursor + len[i] > ARENA)
			break;
		off[i] = cursor;
		cursor += len[i];
	}
	n = i;
	if (!n)
		return 0;
	skip = fuzz_u32(&in) % (PAGE_SIZE * 4);
	want = fuzz_u32(&in);
	roff = fuzz_below(&in, ARENA);

	rdma_rw_set_force_mr(force);
	ret = fuzz_env_init(&e, &prof, sge, 4);
	if (ret) {
		rdma_rw_set_force_mr(false);
		fuzz_env_fini(&e);
		return 0;
	}
	fill(loc_mem, ARENA + 2 * GUARD, (u32)size);
	fill(rem_mem, ARENA + 2 * GUARD, (u32)size * 7 + 1);
	memcpy(loc_exp, loc_mem, ARENA + 2 * GUARD);
	memcpy(rem_exp, rem_mem, ARENA + 2 * GUARD);
	rmr = ib_reg_user_mr(e.pd[1], (uintptr_t)rem_mem + GUARD, ARENA,
			     (uintptr_t)rem_mem + GUARD,
			     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				     IB_ACCESS_REMOTE_WRITE);
	rcv_mr = ib_reg_user_mr(e.pd[1], (uintptr_t)rcv, sizeof(rcv),
				(uintptr_t)rcv, IB_ACCESS_LOCAL_WRITE);
	FUZZ_CHECK(!IS_ERR(rmr) && !IS_ERR(rcv_mr), "reg");

	if (bvec) {
		for (i = 0; i < n; i++)
			bvec_set_virt(&bv[i], loc_mem + GUARD + off[i], len[i]);
		it.bi_bvec_done = (unsigned int)(len[0] ? skip % len[0] : 0);
		it.bi_size = (unsigned int)(want % (4 * ARENA));
		npc = model_pieces(off, len, n, it.bi_bvec_done, it.bi_size, pc,
				   &total);
	} else {
		sg_init_table(sg, n);
		for (i = 0; i < n; i++)
			sg_set_buf(&sg[i], loc_mem + GUARD + off[i], len[i]);
		npc = model_pieces(off, len, n, skip, ~0ULL, pc, &total);
	}
	if (roff + total > ARENA)
		roff = ARENA - total < ARENA ? ARENA - total : 0;
	if (bvec)
		ret = rdma_rw_ctx_init_bvec(&ctx, e.qp[0], 1, bv, n, it,
					    (uintptr_t)rem_mem + GUARD + roff,
					    rmr->rkey, dir);
	else
		ret = rdma_rw_ctx_init(&ctx, e.qp[0], 1, sg, n, (u32)skip,
				       (uintptr_t)rem_mem + GUARD + roff,
				       rmr->rkey, dir);
	if (ret < 0) {
		FUZZ_CHECK(ret == -EINVAL || ret == -EAGAIN || ret == -ENOMEM,
			   "init: %d", ret);
		FUZZ_CHECK(rdmarw_dma_mapped(e.dev[0]) == 0,
			   "mapped after error");
		FUZZ_CHECK(e.qp[0]->mrs_used == 0, "MRs taken after error");
		goto out;
	}
	FUZZ_CHECK(total > 0 && total <= ARENA, "init took %llu bytes",
		   (unsigned long long)total);
	if (flags & 256) {
		ssge = (struct ib_sge){ (uintptr_t)msg, sizeof(msg),
					e.pd[0]->local_dma_lkey };
		rsge = (struct ib_sge){ (uintptr_t)rcv, sizeof(rcv),
					rcv_mr->lkey };
		send.opcode = IB_WR_SEND;
		send.sg_list = &ssge;
		send.num_sge = 1;
		send.send_flags = IB_SEND_SIGNALED;
		send.wr_cqe = &d.cqe;
		chain = &send;
	}
	for (i = 0; i < posts; i++) {
		if (chain) {
			recv.sg_list = &rsge;
			recv.num_sge = 1;
			FUZZ_CHECK(!ib_post_recv(e.qp[1], &recv, NULL), "recv");
		}
		ret = rdma_rw_ctx_post(&ctx, e.qp[0], 1, chain ? NULL : &d.cqe,
				       chain);
		FUZZ_CHECK(!ret, "post: %d", ret);
		FUZZ_CHECK(ib_process_cq_direct(e.cq[0], -1) >= 1 &&
				   d.count == (int)i + 1,
			   "completions: %d", d.count);
		FUZZ_CHECK(d.status == IB_WC_SUCCESS, "status %s",
			   ib_wc_status_msg(d.status));
		model_apply(pc, npc, roff, dir == DMA_TO_DEVICE);
		if (chain) {
			struct ib_wc wc;

			FUZZ_CHECK(fuzz_poll(e.cq[1], &wc, 1) == 1 &&
					   wc.status == IB_WC_SUCCESS &&
					   !memcmp(rcv, msg, sizeof(msg)),
				   "chained SEND");
		}
	}
	check_mem(loc_mem, loc_exp, "local");
	check_mem(rem_mem, rem_exp, "remote");
	if (bvec)
		rdma_rw_ctx_destroy_bvec(&ctx, e.qp[0], 1, bv, n, dir);
	else
		rdma_rw_ctx_destroy(&ctx, e.qp[0], 1, sg, n, dir);
out:
	check_mem(loc_mem, loc_exp, "local");
	check_mem(rem_mem, rem_exp, "remote");
	FUZZ_CHECK(!ib_dereg_mr(rmr) && !ib_dereg_mr(rcv_mr), "dereg");
	rdma_rw_set_force_mr(false);
	fuzz_env_fini(&e);
	return 0;
}

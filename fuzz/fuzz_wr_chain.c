// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: arbitrary chains of send WRs posted to the software
 * device (every opcode, valid or not, flags, SGE counts including negative
 * ones, keys that are right, stale, of the other side or random, addresses
 * in and out of bounds, REG_MR of MRs mapped from the input, invalidations,
 * receives or none, a QP moved to ERR between two chains).  Nothing may
 * crash or leak; ib_post_send() returns 0, -EINVAL or -ENOMEM with bad_wr
 * inside the chain; every completion is sane (a known status, a WR that was
 * posted, at most once, on the right QP) and none is missing once the QPs
 * are flushed; no byte outside the registered arenas changes.
 */
#include "fuzz_common.h"

#include <errno.h>

#define PAGES 8
#define ARENA (PAGES * PAGE_SIZE)
#define CANARY PAGE_SIZE
#define MAX_WRS 16
#define MAX_SGE 4
#define FAST 2

static u8 *mem[2]; /* CANARY + ARENA + CANARY */

static u8 canary_byte(size_t i)
{
	return (u8)(0xc3 ^ i);
}

static void setup(void)
{
	size_t i;
	int s;

	for (s = 0; s < 2; s++) {
		if (!mem[s])
			FUZZ_CHECK(!posix_memalign((void **)&mem[s], PAGE_SIZE,
						   ARENA + 2 * CANARY),
				   "arena");
		for (i = 0; i < ARENA + 2 * CANARY; i++)
			mem[s][i] = canary_byte(i);
	}
}

static void check_canaries(void)
{
	size_t i;
	int s;

	for (s = 0; s < 2; s++)
		for (i = 0; i < ARENA + 2 * CANARY; i++) {
			if (i == CANARY)
				i = CANARY + ARENA;
			FUZZ_CHECK(
				mem[s][i] == canary_byte(i),
				"side %d: byte %zd outside the arena changed",
				s, (ssize_t)i - CANARY);
		}
}

static u8 *arena(int side)
{
	return mem[side] + CANARY;
}

struct world {
	struct fuzz_env e;
	struct ib_mr *umr[2];
	struct ib_mr *fast[2][FAST];
	struct scatterlist fsg[2][FAST][2];
	int fsg_n[2][FAST];
};

static u32 pick_key(struct fuzz_in *in, struct world *w, int side, bool r)
{
	u32 c = fuzz_u8(in) % 8;
	struct ib_mr *mr;

	switch (c) {
	case 0:
		return w->e.pd[side]->local_dma_lkey;
	case 1:
	case 2:
		mr = w->umr[side];
		break;
	case 3:
	case 4:
		mr = w->fast[side][c - 3];
		break;
	case 5:
		mr = w->umr[!side];
		break;
	default:
		return fuzz_u32(in);
	}
	return (r ? mr->rkey : mr->lkey) + (fuzz_u8(in) < 16 ? 1 : 0);
}

/* An SGE: within the arena for the local DMA key (it reaches anything). */
static void make_sge(struct fuzz_in *in, struct world *w, struct ib_sge *s)
{
	u32 off = fuzz_below(in, ARENA + 256), len = fuzz_below(in, ARENA);

	s->lkey = pick_key(in, w, 0, false);
	if (s->lkey == w->e.pd[0]->local_dma_lkey) {
		off %= ARENA;
		if (len > ARENA - off)
			len = ARENA - off;
	}
	s->addr = (uintptr_t)arena(0) + off;
	s->length = len;
}

static void map_fast(struct fuzz_in *in, struct world *w, int side, int k)
{
	struct scatterlist *sg = w->fsg[side][k];
	u32 n = 1 + fuzz_below(in, 2), i, off = 0;

	sg_init_table(sg, n);
	for (i = 0; i < n; i++) {
		u32 page = fuzz_below(in, PAGES - 1);
		u32 len = fuzz_below(in, 2 * PAGE_SIZE) + 1;

		if (i)
			len = PAGE_SIZE;
		else if (n > 1)
			len = PAGE_SIZE; /* ends on a boundary */
		sg_set_buf(&sg[i], arena(side) + page * PAGE_SIZE, len);
	}
	w->fsg_n[side][k] = (int)n;
	FUZZ_CHECK(ib_dma_map_sg(w->e.dev[side], sg, (int)n,
				 DMA_BIDIRECTIONAL) == (int)n,
		   "map");
	if (fuzz_u8(in) & 1)
		off = fuzz_below(in, 64);
	ib_map_mr_sg(w->fast[side][k], sg, (int)n, &off, PAGE_SIZE);
}

static const int rights[] = {
	0,
	IB_ACCESS_LOCAL_WRITE,
	IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE,
	IB_ACCESS_REMOTE_READ,
	IB_ACCESS_REMOTE_WRITE, /* without LOCAL_WRITE: refused */
};

static void world_init(struct fuzz_in *in, struct world *w)
{
	int s, k;

	for (s = 0; s < 2; s++) {
		int acc = rights[fuzz_u8(in) % 6] | IB_ACCESS_LOCAL_WRITE;

		w->umr[s] = ib_reg_user_mr(w->e.pd[s], (uintptr_t)arena(s),
					   ARENA, (uintptr_t)arena(s), acc);
		FUZZ_CHECK(!IS_ERR(w->umr[s]), "reg_user_mr");
		for (k = 0; k < FAST; k++) {
			w->fast[s][k] =
				ib_alloc_mr(w->e.pd[s], IB_MR_TYPE_MEM_REG, 4);
			FUZZ_CHECK(!IS_ERR(w->fast[s][k]), "alloc_mr");
			map_fast(in, w, s, k);
		}
	}
}

static void world_fini(struct world *w)
{
	int s, k;

	for (s = 0; s < 2; s++) {
		FUZZ_CHECK(!ib_dereg_mr(w->umr[s]), "dereg");
		for (k = 0; k < FAST; k++) {
			ib_dma_unmap_sg(w->e.dev[s], w->fsg[s][k],
					w->fsg_n[s][k], DMA_BIDIRECTIONAL);
			FUZZ_CHECK(!ib_dereg_mr(w->fast[s][k]), "dereg");
		}
	}
}

/* The raw opcodes worth trying: every real one, and some that are not. */
static const int opcodes[] = {
	IB_WR_RDMA_WRITE,
	IB_WR_RDMA_WRITE_WITH_IMM,
	IB_WR_SEND,
	IB_WR_SEND_WITH_IMM,
	IB_WR_RDMA_READ,
	IB_WR_ATOMIC_CMP_AND_SWP,
	IB_WR_ATOMIC_FETCH_AND_ADD,
	IB_WR_LOCAL_INV,
	IB_WR_BIND_MW,
	IB_WR_SEND_WITH_INV,
	IB_WR_LSO,
	IB_WR_RDMA_READ_WITH_INV,
	IB_WR_MASKED_ATOMIC_CMP_AND_SWP,
	IB_WR_FLUSH,
	IB_WR_ATOMIC_WRITE,
	IB_WR_REG_MR,
	IB_WR_REG_MR_INTEGRITY,
	99,
	-1,
};

struct wrs {
	union {
		struct ib_rdma_wr rdma;
		struct ib_reg_wr reg;
	} u[MAX_WRS];
	struct ib_sge sge[MAX_WRS][MAX_SGE];
	int n;
	bool seen[2 * MAX_WRS + 1];
};

static void build_chain(struct fuzz_in *in, struct world *w, struct wrs *c,
			u64 id0)
{
	int i, j;

	c->n = 1 + (int)fuzz_below(in, MAX_WRS);
	memset(c->u, 0, sizeof(c->u));
	for (i = 0; i < c->n; i++) {
		struct ib_send_wr *wr = &c->u[i].rdma.wr;
		u32 sel = fuzz_u8(in);

		wr->opcode = opcodes[sel % (sizeof(opcodes) / sizeof(int))];
		wr->wr_id = id0 + (u64)i;
		wr->send_flags = (int)(fuzz_u8(in) & 0x0f);
		wr->num_sge = (int)fuzz_below(in, MAX_SGE + 2) - 1;
		wr->sg_list = fuzz_u8(in) == 0 ? NULL : c->sge[i];
		for (j = 0; j < MAX_SGE; j++)
			make_sge(in, w, &c->sge[i][j]);
		wr->ex.invalidate_rkey = pick_key(in, w, fuzz_u8(in) & 1, true);
		/* A REG WR's MR is a valid pointer (or NULL): anything else
		 * is a caller bug the kernel does not survive either. */
		if (wr->opcode == IB_WR_REG_MR ||
		    wr->opcode == IB_WR_REG_MR_INTEGRITY) {
			struct ib_reg_wr *r = &c->u[i].reg;
			u32 k = fuzz_u8(in);

			r->mr = k % 4 < 2 ? w->fast[0][k % 2] :
					    (k % 4 == 2 ? w->fast[1][0] : NULL);
			if (r->mr)
				r->key = (r->mr->lkey & ~0xffu) | fuzz_u8(in);
			r->access = rights[fuzz_u8(in) % 6];
		} else {
			c->u[i].rdma.remote_addr = (uintptr_t)arena(1) +
						   fuzz_below(in, ARENA + 64);
			c->u[i].rdma.rkey = pick_key(in, w, 1, true);
		}
		wr->next = i + 1 < c->n ? &c->u[i + 1].rdma.wr : NULL;
	}
}

static void post_chain(struct world *w, struct wrs *c, int *posted)
{
	const struct ib_send_wr *bad = NULL;
	int ret, i;

	ret = ib_post_send(w->e.qp[0], &c->u[0].rdma.wr, &bad);
	FUZZ_CHECK(ret == 0 || ret == -EINVAL || ret == -ENOMEM,
		   "ib_post_send: %d", ret);
	if (!ret) {
		*posted = c->n;
		return;
	}
	for (i = 0; i < c->n && bad != &c->u[i].rdma.wr; i++)
		;
	FUZZ_CHECK(i < c->n, "bad_wr outside the chain");
	*posted = i;
}

/*
 * Check the completions of @side: chain k's WRs have ids k * 100 + i, and
 * only the first posted[k] of them were queued.
 */
static void drain(struct world *w, struct wrs *c, const int *posted, int side)
{
	struct ib_wc wc[64];
	int n, i;

	while ((n = ib_poll_cq(w->e.cq[side], 64, wc)) > 0) {
		for (i = 0; i < n; i++) {
			u64 k = wc[i].wr_id / 100, j = wc[i].wr_id % 100;

			FUZZ_CHECK(wc[i].status <= IB_WC_GENERAL_ERR,
				   "status %d", wc[i].status);
			FUZZ_CHECK(wc[i].qp == w->e.qp[side], "qp");
			if (side)
				continue; /* receives: checked for sanity */
			FUZZ_CHECK(k < 2 && j < (u64)posted[k],
				   "completion of a WR not posted: %llu",
				   (unsigned long long)wc[i].wr_id);
			FUZZ_CHECK(!c[k].seen[j], "WR completed twice");
			c[k].seen[j] = true;
		}
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct soft_profile prof;
	struct world w;
	static struct wrs c[2];
	u32 flags, nrecv, i;
	int posted[2] = { 0, 0 }, k;

	setup();
	flags = fuzz_u8(&in);
	FUZZ_CHECK(!soft_profile_get(fuzz_profiles[flags % 3], &prof), "p");
	memset(&w, 0, sizeof(w));
	if (fuzz_env_init(&w.e, &prof, MAX_SGE, 0)) {
		fuzz_env_fini(&w.e);
		return 0;
	}
	world_init(&in, &w);
	nrecv = fuzz_below(&in, 4);
	for (i = 0; i < nrecv; i++) {
		struct ib_sge s;
		struct ib_recv_wr r = { .wr_id = 1000 + i,
					.sg_list = &s,
					.num_sge = 1 };

		s.addr = (uintptr_t)arena(1) + fuzz_below(&in, ARENA / 2);
		s.length = fuzz_below(&in, ARENA / 2);
		s.lkey = fuzz_u8(&in) & 1 ? w.umr[1]->lkey :
					    w.e.pd[1]->local_dma_lkey;
		ib_post_recv(w.e.qp[1], &r, NULL);
	}
	memset(c, 0, sizeof(c));
	for (k = 0; k < 2; k++) {
		build_chain(&in, &w, &c[k], (u64)k * 100);
		if (k && (flags & 8))
			ib_modify_qp(w.e.qp[0], &err, IB_QP_STATE);
		post_chain(&w, &c[k], &posted[k]);
		if (!(flags & 16))
			drain(&w, c, posted, 0);
	}
	/* Flush everything: every WR ends up completed at most once. */
	ib_modify_qp(w.e.qp[0], &err, IB_QP_STATE);
	ib_modify_qp(w.e.qp[1], &err, IB_QP_STATE);
	drain(&w, c, posted, 0);
	drain(&w, c, posted, 1);
	world_fini(&w);
	fuzz_env_fini(&w.e);
	check_canaries();
	return 0;
}

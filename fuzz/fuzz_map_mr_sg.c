// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: ib_map_mr_sg() on the software device's fast MRs
 * (mlx5, rxe and siw page lists) with arbitrary entries, sg_offset, page
 * sizes and page-list capacities, against an independent model of the page
 * rules: only the first entry may start inside a page, an entry must start
 * on a page boundary unless it continues the previous one byte for byte,
 * only the last may end inside a page, the longest prefix is mapped;
 * mlx5/rxe bound the list by pages (a full list maps part of an entry),
 * siw by entries (more entries than max_num_sg: -ENOMEM; an empty entry:
 * -EINVAL).  The model predicts the return value, iova and length; then the
 * MR is registered and an RDMA WRITE through it must place its bytes
 * exactly into the mapped entries, in order, and nowhere else.
 */
#include "fuzz_common.h"

#include <errno.h>

#define ARENA (4u << 20)
#define MAX_ENTS 16

static u8 *arena, *exp_img, *src;

static const unsigned int page_sizes[] = { SZ_4K, 8192, 65536, 2u << 20 };

static void setup_once(void)
{
	u32 i;

	if (arena)
		return;
	FUZZ_CHECK(!posix_memalign((void **)&arena, 2u << 20, ARENA), "arena");
	exp_img = malloc(ARENA);
	src = malloc(2 * ARENA); /* random bytes, read at varying offsets */
	FUZZ_CHECK(exp_img && src, "arena");
	for (i = 0; i < ARENA; i++)
		arena[i] = (u8)(i * 7 + (i >> 12));
	for (i = 0; i < 2 * ARENA; i++)
		src[i] = (u8)((i * 2654435761u) >> 13);
	memcpy(exp_img, arena, ARENA);
}

/**
 * struct model - what ib_map_mr_sg() must do
 * @ret: its return value
 * @full: entries mapped whole (bytes from them: @bytes)
 * @bytes: mapped bytes of the whole entries
 * @partial: the page list filled up inside an entry
 */
struct model {
	int ret;
	u32 full;
	u64 bytes;
	bool partial;
};

static u64 pages_over(u64 s, u64 e, u64 ps)
{
	return e > s ? ((e - 1) / ps) - (s / ps) + 1 : 0;
}

static void model(const u64 *a, const u32 *l, u32 n, u32 off, bool has_off,
		  u64 ps, u32 max, bool siw, bool ps_ok, struct model *m)
{
	u64 prev_end = 0, pages = 0;
	u32 i;

	memset(m, 0, sizeof(*m));
	/* The core checks the page size and a given offset, siw its
	 * capacity and empty entries, then the walk an empty first entry. */
	if (!ps_ok || (has_off && off >= l[0])) {
		m->ret = -EINVAL;
		return;
	}
	if (siw && n > max) {
		m->ret = -ENOMEM;
		return;
	}
	for (i = 0; siw && i < n; i++) {
		if (!l[i]) {
			m->ret = -EINVAL;
			return;
		}
	}
	if (off >= l[0]) {
		m->ret = -EINVAL;
		return;
	}
	for (i = 0; i < n; i++) {
		u64 s = a[i] + (i ? 0 : off), e = a[i] + l[i], need;
		bool cont = false;

		if (i && (s % ps || prev_end % ps)) {
			if (s != prev_end)
				break; /* a gap where the rules allow none */
			cont = true;
		}
		need = pages_over(s, e, ps);
		if (cont && need)
			need--; /* shares the previous entry's last page */
		if (!siw && pages + need > max) {
			m->partial = true;
			break;
		}
		pages += need;
		m->bytes += e - s;
		m->full++;
		prev_end = e;
	}
	m->ret = (int)m->full;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct soft_profile prof;
	struct scatterlist sg[MAX_ENTS];
	struct fuzz_env e;
	struct model m;
	struct ib_mr *mr;
	u64 a[MAX_ENTS], cursor, ps;
	u32 l[MAX_ENTS], flags, n, i, max, off;
	unsigned int offv;
	bool siw, has_off, ps_ok;
	int ret;

	setup_once();
	flags = fuzz_u16(&in);
	FUZZ_CHECK(!soft_profile_get(fuzz_profiles[flags % 3], &prof), "p");
	siw = prof.protocol == RDMA_PROTOCOL_IWARP;
	ps = page_sizes[(flags >> 2) & 3];
	ps_ok = prof.attrs.page_size_cap & ps;
	max = 1 + fuzz_below(&in, 16);
	has_off = flags & 16;
	n = 1 + fuzz_below(&in, MAX_ENTS);
	cursor = fuzz_below(&in, 2 * PAGE_SIZE);
	for (i = 0; i < n; i++) {
		u32 shape = fuzz_u8(&in);

		if (shape & 1)
			cursor = (cursor + ps - 1) & ~(ps - 1);
		else
			cursor += fuzz_below(&in, shape & 2 ? 64 : 3 * SZ_4K);
		if (shape & 8 && i)
			cursor = a[i - 1] + l[i - 1];
		if (shape & 4) /* whole pages, ending on a boundary */
			l[i] = (u32)(((cursor + ps * (1 + (shape >> 6))) &
				      ~(ps - 1)) -
				     cursor);
		else
			l[i] = fuzz_below(&in, (shape & 16) ? 64 : 3 * SZ_4K);
		if (cursor + l[i] > ARENA)
			break;
		a[i] = cursor;
		cursor += l[i];
	}
	n = i;
	if (!n)
		return 0;
	off = has_off ? fuzz_below(&in, l[0] + 2) : 0;
	model((u64 *)a, l, n, off, has_off, ps, max, siw, ps_ok, &m);
	for (i = 0; i < n; i++)
		a[i] += (uintptr_t)arena;

	if (fuzz_env_init(&e, &prof, 1, 0)) {
		fuzz_env_fini(&e);
		return 0;
	}
	mr = ib_alloc_mr(e.pd[1], IB_MR_TYPE_MEM_REG, max);
	FUZZ_CHECK(!IS_ERR(mr), "alloc_mr");
	sg_init_table(sg, n);
	for (i = 0; i < n; i++)
		sg_set_buf(&sg[i], (void *)(uintptr_t)a[i], l[i]);
	/* Streaming mappings are identity on the soft device (no merging). */
	ret = ib_dma_map_sg(e.dev[1], sg, (int)n, DMA_BIDIRECTIONAL);
	FUZZ_CHECK(ret == (int)n, "ib_dma_map_sg: %d of %u", ret, n);
	offv = off;
	ret = ib_map_mr_sg(mr, sg, (int)n, has_off ? &offv : NULL,
			   (unsigned int)ps);
	if (ret != m.ret)
		for (i = 0; i < n; i++)
			fprintf(stderr, "entry %u: +%#llx len %u\n", i,
				(unsigned long long)(a[i] - (uintptr_t)arena),
				l[i]);
	FUZZ_CHECK(ret == m.ret,
		   "%s: ib_map_mr_sg %d, model %d (n %u max %u ps %llu)",
		   prof.name, ret, m.ret, n, max, (unsigned long long)ps);
	if (ret > 0) {
		FUZZ_CHECK(mr->iova == a[0] + off, "iova");
		FUZZ_CHECK(m.partial ? mr->length >= m.bytes :
				       mr->length == m.bytes,
			   "length %llu, model %llu",
			   (unsigned long long)mr->length,
			   (unsigned long long)m.bytes);
		if (has_off && !m.partial)
			FUZZ_CHECK(offv == 0, "sg_offset left at %u", offv);
	}
	if (ret > 0 && m.bytes) {
		struct ib_reg_wr reg = { .wr.opcode = IB_WR_REG_MR,
					 .wr.send_flags = IB_SEND_SIGNALED };
		struct ib_rdma_wr w = { .wr.opcode = IB_WR_RDMA_WRITE,
					.wr.send_flags = IB_SEND_SIGNALED };
		struct ib_sge sge = { (uintptr_t)src, (u32)m.bytes,
				      e.pd[0]->local_dma_lkey };
		struct ib_wc wc;
		u64 done = 0;
		u8 *from;

		ib_update_fast_reg_key(mr, (u8)ib_inc_rkey(mr->rkey));
		reg.mr = mr;
		reg.key = mr->rkey;
		reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		FUZZ_CHECK(!ib_post_send(e.qp[1], &reg.wr, NULL), "reg");
		FUZZ_CHECK(fuzz_poll(e.cq[1], &wc, 1) == 1 &&
				   wc.status == IB_WC_SUCCESS,
			   "REG_MR: %s", ib_wc_status_msg(wc.status));
		from = src + (size * 4099 + m.bytes) % ARENA;
		sge.addr = (uintptr_t)from;
		w.wr.sg_list = &sge;
		w.wr.num_sge = 1;
		w.remote_addr = mr->iova;
		w.rkey = mr->rkey;
		FUZZ_CHECK(!ib_post_send(e.qp[0], &w.wr, NULL), "write");
		FUZZ_CHECK(fuzz_poll(e.cq[0], &wc, 1) == 1 &&
				   wc.status == IB_WC_SUCCESS,
			   "WRITE through the MR: %s",
			   ib_wc_status_msg(wc.status));
		for (i = 0; i < m.full; i++) {
			u64 s = a[i] + (i ? 0 : off) - (uintptr_t)arena;
			u64 len = l[i] - (i ? 0 : off);

			memcpy(exp_img + s, from + done, len);
			done += len;
		}
		i = ARENA;
		if (memcmp(arena, exp_img, ARENA))
			for (i = 0; arena[i] == exp_img[i]; i++)
				;
		FUZZ_CHECK(i == ARENA,
			   "%s: byte %u of the arena is %#x, want %#x",
			   prof.name, i, arena[i], exp_img[i]);
	}
	ib_dma_unmap_sg(e.dev[1], sg, (int)n, DMA_BIDIRECTIONAL);
	FUZZ_CHECK(!ib_dereg_mr(mr), "dereg");
	fuzz_env_fini(&e);
	return 0;
}

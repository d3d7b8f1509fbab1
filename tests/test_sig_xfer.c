// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the software device does to data passing an integrity MR, checked
 * byte for byte against the reference model of helpers/sig_env.c: insert
 * (memory NONE, wire T10-DIF, RDMA WRITE), strip (wire T10-DIF, memory
 * NONE, RDMA READ), pass in both directions, memory PI with no wire PI, for
 * 512- and 4096-byte intervals and data lists cut at odd places; the first
 * failing check of a transfer with its type, offset, expected and actual
 * values and key, for one-byte corruptions of the guard, the application
 * tag, the reference tag and the data at several blocks; escapes, the check
 * mask and the application tag mask; the IP checksum guard and re-tagging
 * between domains that differ.  Every data WR completes successfully: the
 * errors are found through ib_check_mr_status(), as on mlx5.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/sig_env.h"

#include <stdlib.h>
#include <string.h>

#define NBLK 8u

static const u32 intervals[] = { 512, 4096 };
/* Data entries cut at odd places (the guards run across the cuts). */
static const u32 odd_cuts[] = { 1001, 3095, 4096, 7 };

struct buffers {
	u8 *data; /* original data */
	u8 *pi; /* reference PI of the memory domain */
	u8 *wire; /* reference wire image */
	u8 *ldata; /* local data (in the target arena) */
	u8 *lpi; /* local PI list */
	u32 iv;
	u32 dlen;
	u32 plen;
	u32 wlen;
};

static void bufs_init(struct buffers *b, struct sig_env *e, u32 iv,
		      const struct ib_t10_dif_domain *mem,
		      const struct ib_t10_dif_domain *wire, u64 seed)
{
	u8 *wpi;

	b->iv = iv;
	b->dlen = iv * NBLK;
	b->plen = 8 * NBLK;
	b->wlen = (iv + 8) * NBLK;
	b->data = malloc(b->dlen);
	b->pi = malloc(b->plen);
	b->wire = malloc(b->wlen);
	wpi = malloc(b->plen);
	assert_non_null(b->data);
	assert_non_null(b->pi);
	assert_non_null(b->wire);
	assert_non_null(wpi);
	sig_fill(b->data, b->dlen, seed);
	memset(b->pi, 0, b->plen);
	if (mem)
		sig_ref_protect(mem, b->data, NBLK, b->pi);
	if (wire)
		sig_ref_protect(wire, b->data, NBLK, wpi);
	sig_ref_interleave(iv, b->data, wpi, NBLK, b->wire);
	free(wpi);
	/* Local buffers in the target arena: data at 0, PI after it. */
	b->ldata = e->local;
	b->lpi = e->local + b->dlen + 64;
	memset(e->local, 0, b->dlen + 64 + b->plen);
	memset(e->remote, 0, b->wlen);
}

static void bufs_fini(struct buffers *b)
{
	free(b->data);
	free(b->pi);
	free(b->wire);
}

static void set_domains(struct ib_sig_attrs *a,
			const struct ib_t10_dif_domain *mem,
			const struct ib_t10_dif_domain *wire, u8 check)
{
	memset(a, 0, sizeof(*a));
	a->check_mask = check;
	a->mem.sig_type = mem ? IB_SIG_TYPE_T10_DIF : IB_SIG_TYPE_NONE;
	if (mem)
		a->mem.sig.dif = *mem;
	a->wire.sig_type = wire ? IB_SIG_TYPE_T10_DIF : IB_SIG_TYPE_NONE;
	if (wire)
		a->wire.sig.dif = *wire;
}

static struct sig_io io_of(const struct buffers *b,
			   const struct ib_sig_attrs *a,
			   enum dma_data_direction dir, bool cut)
{
	return (struct sig_io){
		.attrs = *a,
		.dir = dir,
		.data = b->ldata,
		.data_len = b->dlen,
		.cuts = cut ? odd_cuts : NULL,
		.ncuts = cut ? 4 : 0,
		.scatter = cut,
		.pi = b->lpi,
		.pi_len = b->plen,
	};
}

#define ALL_CHECKS \
	(IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG | IB_SIG_CHECK_REFTAG)

static void assert_no_error(const struct ib_mr_status *st)
{
	assert_int_equal(st->fail_status, 0);
}

static void assert_error(const struct ib_mr_status *st,
			 enum ib_sig_err_type type, u32 expected, u32 actual,
			 u64 offset, u32 key)
{
	assert_int_equal(st->fail_status, IB_MR_CHECK_SIG_STATUS);
	assert_int_equal(st->sig_err.err_type, type);
	assert_int_equal(st->sig_err.expected, expected);
	assert_int_equal(st->sig_err.actual, actual);
	assert_int_equal(st->sig_err.sig_err_offset, offset);
	assert_int_equal(st->sig_err.key, key);
}

/* Memory NONE, wire T10-DIF, RDMA WRITE: PI inserted per interval. */
static void test_insert_write(void **state)
{
	struct sig_env e;
	unsigned int i, cut;

	sig_env_init(&e, NULL);
	for (i = 0; i < 2; i++) {
		for (cut = 0; cut < 2; cut++) {
			struct ib_t10_dif_domain w =
				sig_dif(intervals[i], 0x1000, 0x77);
			struct ib_sig_attrs a;
			struct ib_mr_status st;
			struct buffers b;
			struct sig_io io;

			bufs_init(&b, &e, intervals[i], NULL, &w, 1 + i);
			memcpy(b.ldata, b.data, b.dlen);
			set_domains(&a, NULL, &w, ALL_CHECKS);
			io = io_of(&b, &a, DMA_TO_DEVICE, cut);
			sig_env_run(&e, &io, &st, NULL);
			assert_no_error(&st);
			assert_memory_equal(e.remote, b.wire, b.wlen);
			/* Not a byte beyond the wire image. */
			assert_int_equal(e.remote[b.wlen], 0);
			bufs_fini(&b);
		}
	}
	sig_env_fini(&e);
}

/* Wire T10-DIF, memory NONE, RDMA READ: PI checked and stripped. */
static void test_strip_read(void **state)
{
	struct sig_env e;
	unsigned int i, cut;

	sig_env_init(&e, NULL);
	for (i = 0; i < 2; i++) {
		for (cut = 0; cut < 2; cut++) {
			struct ib_t10_dif_domain w =
				sig_dif(intervals[i], 77, 0x1234);
			struct ib_sig_attrs a;
			struct ib_mr_status st;
			struct buffers b;
			struct sig_io io;

			bufs_init(&b, &e, intervals[i], NULL, &w, 3 + i);
			memcpy(e.remote, b.wire, b.wlen);
			set_domains(&a, NULL, &w, ALL_CHECKS);
			io = io_of(&b, &a, DMA_FROM_DEVICE, cut);
			sig_env_run(&e, &io, &st, NULL);
			assert_no_error(&st);
			assert_memory_equal(b.ldata, b.data, b.dlen);
			/* The PI list is not touched by a NONE memory. */
			assert_int_equal(b.lpi[0], 0);
			bufs_fini(&b);
		}
	}
	sig_env_fini(&e);
}

/* Both T10-DIF: memory PI checked and passed to the wire, and back. */
static void test_pass_both_ways(void **state)
{
	struct sig_env e;
	unsigned int i;

	sig_env_init(&e, NULL);
	for (i = 0; i < 2; i++) {
		struct ib_t10_dif_domain d = sig_dif(intervals[i], 9, 0xabcd);
		struct ib_sig_attrs a;
		struct ib_mr_status st;
		struct buffers b;
		struct sig_io io;

		bufs_init(&b, &e, intervals[i], &d, &d, 5 + i);
		set_domains(&a, &d, &d, ALL_CHECKS);
		memcpy(b.ldata, b.data, b.dlen);
		memcpy(b.lpi, b.pi, b.plen);
		io = io_of(&b, &a, DMA_TO_DEVICE, true);
		sig_env_run(&e, &io, &st, NULL);
		assert_no_error(&st);
		assert_memory_equal(e.remote, b.wire, b.wlen);

		memset(b.ldata, 0, b.dlen);
		memset(b.lpi, 0, b.plen);
		io.dir = DMA_FROM_DEVICE;
		sig_env_run(&e, &io, &st, NULL);
		assert_no_error(&st);
		assert_memory_equal(b.ldata, b.data, b.dlen);
		assert_memory_equal(b.lpi, b.pi, b.plen);
		bufs_fini(&b);
	}
	sig_env_fini(&e);
}

/* Memory T10-DIF, wire NONE: checked and stripped on the way out, made
 * on the way in; the RDMA carries the data bytes only. */
static void test_memory_pi_plain_wire(void **state)
{
	struct sig_env e;
	unsigned int i;

	sig_env_init(&e, NULL);
	for (i = 0; i < 2; i++) {
		struct ib_t10_dif_domain d = sig_dif(intervals[i], 500, 3);
		struct ib_sig_attrs a;
		struct ib_mr_status st;
		struct buffers b;
		struct sig_io io;

		bufs_init(&b, &e, intervals[i], &d, NULL, 7 + i);
		set_domains(&a, &d, NULL, ALL_CHECKS);
		memcpy(b.ldata, b.data, b.dlen);
		memcpy(b.lpi, b.pi, b.plen);
		io = io_of(&b, &a, DMA_TO_DEVICE, false);
		sig_env_run(&e, &io, &st, NULL);
		assert_no_error(&st);
		assert_memory_equal(e.remote, b.data, b.dlen);
		assert_int_equal(e.remote[b.dlen], 0);

		memset(b.ldata, 0, b.dlen);
		memset(b.lpi, 0, b.plen);
		io.dir = DMA_FROM_DEVICE;
		sig_env_run(&e, &io, &st, NULL);
		assert_no_error(&st);
		assert_memory_equal(b.ldata, b.data, b.dlen);
		assert_memory_equal(b.lpi, b.pi, b.plen);
		bufs_fini(&b);
	}
	sig_env_fini(&e);
}

static u16 be16_at(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 be32_at(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/*
 * Strip with one byte of block @blk corrupted at @pos of its wire block
 * (0 .. iv-1 data, iv.. iv+7 PI): the error reported.
 */
static void corrupt_one(struct sig_env *e, u32 iv, u32 blk, u32 pos)
{
	struct ib_t10_dif_domain w = sig_dif(iv, 0x2000, 0x5555);
	u8 *wb, *pi;
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_io io;
	u32 key;

	bufs_init(&b, e, iv, NULL, &w, 100 + blk * 31 + pos);
	memcpy(e->remote, b.wire, b.wlen);
	wb = e->remote + (u64)blk * (iv + 8);
	pi = wb + iv;
	wb[pos] ^= 0x5a;
	set_domains(&a, NULL, &w, ALL_CHECKS);
	io = io_of(&b, &a, DMA_FROM_DEVICE, true);
	sig_env_run(e, &io, &st, &key);
	if (pos < iv + 2) /* data or guard */
		assert_error(&st, IB_SIG_BAD_GUARD, sig_ref_crc(0, wb, iv),
			     be16_at(pi), (u64)blk * (iv + 8), key);
	else if (pos < iv + 4)
		assert_error(&st, IB_SIG_BAD_APPTAG, 0x5555, be16_at(pi + 2),
			     (u64)blk * (iv + 8), key);
	else
		assert_error(&st, IB_SIG_BAD_REFTAG, 0x2000 + blk,
			     be32_at(pi + 4), (u64)blk * (iv + 8), key);
	/* The data is placed all the same (corruption included). */
	assert_memory_equal(b.ldata + (u64)blk * iv, wb, iv);
	bufs_fini(&b);
}

static void test_corruption_each_field(void **state)
{
	const u32 blocks[] = { 0, 3, NBLK - 1 };
	struct sig_env e;
	unsigned int i, k;
	u32 iv, pos;

	sig_env_init(&e, NULL);
	for (i = 0; i < 2; i++) {
		iv = intervals[i];
		for (k = 0; k < 3; k++) {
			/* Data bytes, both guard bytes, app and ref bytes. */
			const u32 where[] = { 0,      iv / 2 + 1, iv - 1,
					      iv,     iv + 1,	  iv + 2,
					      iv + 3, iv + 4,	  iv + 7 };

			for (pos = 0; pos < 9; pos++)
				corrupt_one(&e, iv, blocks[k], where[pos]);
		}
	}
	sig_env_fini(&e);
}

/* The first failing block is reported, once; a clean transfer after it
 * reports nothing. */
static void test_first_error_reported_once(void **state)
{
	struct ib_t10_dif_domain w = sig_dif(512, 0, 0);
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_env e;
	struct sig_io io;
	u32 key;

	sig_env_init(&e, &(struct sig_env_cfg){ .max_rdma_ctxs = 1 });
	bufs_init(&b, &e, 512, NULL, &w, 42);
	memcpy(e.remote, b.wire, b.wlen);
	e.remote[5 * 520 + 512 + 6] ^= 1; /* ref tag of block 5 */
	e.remote[2 * 520 + 512 + 3] ^= 1; /* app tag of block 2 */
	set_domains(&a, NULL, &w, ALL_CHECKS);
	io = io_of(&b, &a, DMA_FROM_DEVICE, false);
	sig_env_run(&e, &io, &st, &key);
	assert_error(&st, IB_SIG_BAD_APPTAG, 0, 1, 2 * 520, key);
	/* Same MR (pool of one), clean data: nothing left over. */
	memcpy(e.remote, b.wire, b.wlen);
	sig_env_run(&e, &io, &st, NULL);
	assert_no_error(&st);
	bufs_fini(&b);
	sig_env_fini(&e);
}

/* Guard, reference and application tag all wrong in one block: the guard
 * is reported, then the reference tag when the guard is right. */
static void test_error_priority(void **state)
{
	struct ib_t10_dif_domain w = sig_dif(512, 10, 20);
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_env e;
	struct sig_io io;
	u8 *pi;
	u32 key;

	sig_env_init(&e, NULL);
	bufs_init(&b, &e, 512, NULL, &w, 43);
	memcpy(e.remote, b.wire, b.wlen);
	pi = e.remote + 512;
	pi[1] ^= 1;
	pi[3] ^= 1;
	pi[7] ^= 1;
	set_domains(&a, NULL, &w, ALL_CHECKS);
	io = io_of(&b, &a, DMA_FROM_DEVICE, false);
	sig_env_run(&e, &io, &st, &key);
	assert_int_equal(st.sig_err.err_type, IB_SIG_BAD_GUARD);
	pi[1] ^= 1;
	sig_env_run(&e, &io, &st, &key);
	assert_error(&st, IB_SIG_BAD_REFTAG, 10, 11, 0, key);
	bufs_fini(&b);
	sig_env_fini(&e);
}

/* Strip block 4 of @w with its guard broken and its tags set to @app and
 * @ref; returns whether an error was reported. */
static bool escaped_run(struct sig_env *e, struct ib_t10_dif_domain *w, u16 app,
			u32 ref)
{
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_io io;
	u8 *pi;

	bufs_init(&b, e, 512, NULL, w, 44);
	memcpy(e->remote, b.wire, b.wlen);
	pi = e->remote + 4 * 520 + 512;
	pi[0] ^= 0xff;
	pi[2] = (u8)(app >> 8);
	pi[3] = (u8)app;
	pi[4] = (u8)(ref >> 24);
	pi[5] = (u8)(ref >> 16);
	pi[6] = (u8)(ref >> 8);
	pi[7] = (u8)ref;
	set_domains(&a, NULL, w, ALL_CHECKS);
	io = io_of(&b, &a, DMA_FROM_DEVICE, false);
	sig_env_run(e, &io, &st, NULL);
	bufs_fini(&b);
	return st.fail_status != 0;
}

static void test_escapes(void **state)
{
	struct ib_t10_dif_domain w = sig_dif(512, 0x300, 0x11);
	struct sig_env e;

	sig_env_init(&e, NULL);
	/* No escape: the broken guard is reported. */
	assert_true(escaped_run(&e, &w, 0xffff, 0x304));
	/* app_escape: an application tag of 0xffff skips the block. */
	w.app_escape = true;
	assert_false(escaped_run(&e, &w, 0xffff, 0x304));
	assert_false(escaped_run(&e, &w, 0xffff, 0xffffffff));
	assert_true(escaped_run(&e, &w, 0x11, 0x304));
	/* With ref_escape, both tags must be all ones (type 3). */
	w.ref_escape = true;
	assert_true(escaped_run(&e, &w, 0xffff, 0x304));
	assert_false(escaped_run(&e, &w, 0xffff, 0xffffffff));
	assert_true(escaped_run(&e, &w, 0x11, 0xffffffff));
	/* ref_escape alone escapes nothing (mlx5_fill_inl_bsf()). */
	w.app_escape = false;
	assert_true(escaped_run(&e, &w, 0xffff, 0xffffffff));
	sig_env_fini(&e);
}

/* Strip with byte @pos of block 1's PI flipped; was an error reported? */
static bool masked_run(struct sig_env *e, u8 check, struct ib_t10_dif_domain *w,
		       u32 pos)
{
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_io io;

	bufs_init(&b, e, 512, NULL, w, 45);
	memcpy(e->remote, b.wire, b.wlen);
	e->remote[520 + 512 + pos] ^= 0x81;
	set_domains(&a, NULL, w, check);
	io = io_of(&b, &a, DMA_FROM_DEVICE, false);
	sig_env_run(e, &io, &st, NULL);
	bufs_fini(&b);
	return st.fail_status != 0;
}

static void test_masks(void **state)
{
	struct ib_t10_dif_domain w = sig_dif(512, 1, 2);
	struct sig_env e;
	u32 pos;

	sig_env_init(&e, NULL);
	/* check_mask 0: nothing is checked. */
	for (pos = 0; pos < 8; pos++)
		assert_false(masked_run(&e, 0, &w, pos));
	/* One field at a time: only its bytes count. */
	for (pos = 0; pos < 8; pos++) {
		assert_int_equal(masked_run(&e, IB_SIG_CHECK_GUARD, &w, pos),
				 pos < 2);
		assert_int_equal(masked_run(&e, IB_SIG_CHECK_APPTAG, &w, pos),
				 pos == 2 || pos == 3);
		assert_int_equal(masked_run(&e, IB_SIG_CHECK_REFTAG, &w, pos),
				 pos >= 4);
		/* One bit per byte: 0x80 is byte 0, 0x01 byte 7. */
		assert_int_equal(masked_run(&e, (u8)(0x80 >> pos), &w, pos),
				 true);
		assert_int_equal(
			masked_run(&e, (u8)(0x80 >> ((pos + 1) % 8)), &w, pos),
			false);
	}
	/* apptag_check_mask: only the high byte of the tag is compared. */
	w.apptag_check_mask = 0xff00;
	assert_true(masked_run(&e, ALL_CHECKS, &w, 2));
	assert_false(masked_run(&e, ALL_CHECKS, &w, 3));
	sig_env_fini(&e);
}

/* The IP checksum guard, inserted and checked. */
static void test_csum_guard(void **state)
{
	struct ib_t10_dif_domain w = sig_dif(4096, 0, 0);
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_env e;
	struct sig_io io;
	u32 key;

	w.bg_type = IB_T10DIF_CSUM;
	sig_env_init(&e, NULL);
	bufs_init(&b, &e, 4096, NULL, &w, 46);
	memcpy(b.ldata, b.data, b.dlen);
	set_domains(&a, NULL, &w, ALL_CHECKS);
	io = io_of(&b, &a, DMA_TO_DEVICE, true);
	sig_env_run(&e, &io, &st, NULL);
	assert_no_error(&st);
	assert_memory_equal(e.remote, b.wire, b.wlen);
	assert_int_equal(be16_at(e.remote + 4096),
			 sig_ref_csum(0, b.data, 4096));
	/* Checked on the way back: one byte of block 6's data changed. */
	e.remote[6 * 4104 + 10] ^= 0x10;
	io.dir = DMA_FROM_DEVICE;
	sig_env_run(&e, &io, &st, &key);
	assert_error(&st, IB_SIG_BAD_GUARD,
		     sig_ref_csum(0, e.remote + 6 * 4104, 4096),
		     be16_at(e.remote + 6 * 4104 + 4096), 6 * 4104, key);
	bufs_fini(&b);
	sig_env_fini(&e);
}

/*
 * Domains that differ: memory CRC with application tag 0x10 and reference
 * tags from 1000, wire checksum with 0x20 and from 1000: the guard and the
 * application tag are made anew, the reference tag (the same in both) is
 * copied, wrong or not.
 */
static void test_retag(void **state)
{
	struct ib_t10_dif_domain m = sig_dif(512, 1000, 0x10);
	struct ib_t10_dif_domain w = sig_dif(512, 1000, 0x20);
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_env e;
	struct sig_io io;
	u8 *expect;
	u32 k;

	w.bg_type = IB_T10DIF_CSUM;
	sig_env_init(&e, NULL);
	bufs_init(&b, &e, 512, &m, &w, 47);
	memcpy(b.ldata, b.data, b.dlen);
	memcpy(b.lpi, b.pi, b.plen);
	b.lpi[3 * 8 + 7] ^= 0x40; /* ref tag of block 3, not checked */
	set_domains(&a, &m, &w, IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG);
	io = io_of(&b, &a, DMA_TO_DEVICE, false);
	sig_env_run(&e, &io, &st, NULL);
	assert_no_error(&st);
	expect = malloc(b.wlen);
	assert_non_null(expect);
	memcpy(expect, b.wire, b.wlen);
	expect[3 * 520 + 512 + 7] ^= 0x40; /* copied as it was */
	assert_memory_equal(e.remote, expect, b.wlen);
	for (k = 0; k < NBLK; k++)
		assert_int_equal(be16_at(e.remote + k * 520 + 512 + 2), 0x20);

	/* Back to memory: CRC guard and tag 0x10 made again. */
	memset(b.ldata, 0, b.dlen);
	memset(b.lpi, 0, b.plen);
	io.dir = DMA_FROM_DEVICE;
	sig_env_run(&e, &io, &st, NULL);
	assert_no_error(&st);
	b.pi[3 * 8 + 7] ^= 0x40;
	assert_memory_equal(b.lpi, b.pi, b.plen);
	free(expect);
	bufs_fini(&b);
	sig_env_fini(&e);
}

/* Both domains with different reference tags: checked against the memory
 * domain's, the wire gets its own. */
static void test_ref_remap_between_domains(void **state)
{
	struct ib_t10_dif_domain m = sig_dif(4096, 7, 1);
	struct ib_t10_dif_domain w = sig_dif(4096, 0x10000, 1);
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_env e;
	struct sig_io io;
	u32 key;

	w.ref_remap = false; /* type 3 on the wire: one tag for all */
	sig_env_init(&e, NULL);
	bufs_init(&b, &e, 4096, &m, &w, 48);
	memcpy(b.ldata, b.data, b.dlen);
	memcpy(b.lpi, b.pi, b.plen);
	set_domains(&a, &m, &w, ALL_CHECKS);
	io = io_of(&b, &a, DMA_TO_DEVICE, false);
	sig_env_run(&e, &io, &st, NULL);
	assert_no_error(&st);
	assert_memory_equal(e.remote, b.wire, b.wlen);
	assert_int_equal(be32_at(e.remote + 5 * 4104 + 4100), 0x10000);
	/* A memory PI with the wire's tag is wrong for the memory domain. */
	b.lpi[2 * 8 + 7] = 0;
	b.lpi[2 * 8 + 6] = 0;
	b.lpi[2 * 8 + 5] = 1;
	b.lpi[2 * 8 + 4] = 0;
	sig_env_run(&e, &io, &st, &key);
	assert_error(&st, IB_SIG_BAD_REFTAG, 9, 0x10000, 2 * 4104, key);
	bufs_fini(&b);
	sig_env_fini(&e);
}

/* A nonzero guard seed (bg) seeds the CRC. */
static void test_guard_seed(void **state)
{
	struct ib_t10_dif_domain w = sig_dif(512, 0, 0);
	struct ib_sig_attrs a;
	struct ib_mr_status st;
	struct buffers b;
	struct sig_env e;
	struct sig_io io;

	w.bg = 0xffff;
	sig_env_init(&e, NULL);
	bufs_init(&b, &e, 512, NULL, &w, 49);
	memcpy(b.ldata, b.data, b.dlen);
	set_domains(&a, NULL, &w, ALL_CHECKS);
	io = io_of(&b, &a, DMA_TO_DEVICE, false);
	sig_env_run(&e, &io, &st, NULL);
	assert_no_error(&st);
	assert_int_equal(be16_at(e.remote + 512),
			 sig_ref_crc(0xffff, b.data, 512));
	assert_memory_equal(e.remote, b.wire, b.wlen);
	bufs_fini(&b);
	sig_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_write),
		cmocka_unit_test(test_strip_read),
		cmocka_unit_test(test_pass_both_ways),
		cmocka_unit_test(test_memory_pi_plain_wire),
		cmocka_unit_test(test_corruption_each_field),
		cmocka_unit_test(test_first_error_reported_once),
		cmocka_unit_test(test_error_priority),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_csum_guard),
		cmocka_unit_test(test_retag),
		cmocka_unit_test(test_ref_remap_between_domains),
		cmocka_unit_test(test_guard_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

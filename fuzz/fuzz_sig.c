// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the signature path of the R/W API.
 * rdma_rw_ctx_signature_init() / rdma_rw_ctx_destroy_signature() on an
 * integrity QP of the mlx5 profile (inline or threaded) with T10-DIF or no
 * PI in each domain, PI intervals of 512 to 4096 bytes, CRC or checksum
 * guards with seeds, tags, reference remapping, check masks, data split
 * over one to three entries, READ or WRITE, and at most one PI byte
 * corrupted in the domain that is checked on the way in.
 *
 * Invariant: a transfer either succeeds with the right bytes (data, and
 * the PI the model computes where the device generates it) and a clean
 * ib_check_mr_status(), or ib_check_mr_status() reports the corrupted
 * block and field; no byte outside the destination changes (a shadow of
 * both arenas, PROT_NONE guard pages around them).  Init refuses what it
 * cannot do with -EINVAL, -EAGAIN or -ENOMEM, leaving nothing mapped or
 * taken.  Known-defect classes (issue 11) can be switched off with
 * FUZZ_SIG_SKIP=name,... (compile-time default FUZZ_SIG_SKIP_DEFAULT):
 * sig_noprot (insertion without a protection list is accepted and the
 * WRITE then fails), sig_nocheck (a signature MR put back without
 * ib_check_mr_status(): with the check on, the next post must fail with
 * -EINVAL, as on mlx5, and succeed once the status is read).
 */
#include "fuzz_common.h"

#include <rdmarw/signature.h>

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>

#ifndef FUZZ_SIG_SKIP_DEFAULT
#define FUZZ_SIG_SKIP_DEFAULT ""
#endif

#define ARENA (16 * PAGE_SIZE)
#define GUARD PAGE_SIZE
#define PROT_OFF (12 * PAGE_SIZE) /* local protection list */
#define MAX_BLK 8

static u8 *mem[2], *shadow[2];
static bool skip_noprot, skip_nocheck;

static u8 *arena(int s)
{
	return mem[s] + GUARD;
}

static void setup_once(void)
{
	const char *sk = getenv("FUZZ_SIG_SKIP");
	int s;

	if (mem[0])
		return;
	if (!sk)
		sk = FUZZ_SIG_SKIP_DEFAULT;
	skip_noprot = strstr(sk, "sig_noprot");
	skip_nocheck = strstr(sk, "sig_nocheck");
	for (s = 0; s < 2; s++) {
		void *p = mmap(NULL, ARENA + 2 * GUARD, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		FUZZ_CHECK(p != MAP_FAILED, "mmap");
		mem[s] = p;
		FUZZ_CHECK(!mprotect(mem[s], GUARD, PROT_NONE) &&
				   !mprotect(mem[s] + GUARD + ARENA, GUARD,
					     PROT_NONE),
			   "guards");
		shadow[s] = malloc(ARENA);
		FUZZ_CHECK(shadow[s], "shadow");
	}
}

/* ---- the PI model ---------------------------------------------------- */

static u16 crc16_t10(u16 crc, const u8 *p, size_t n)
{
	int b;

	while (n--) {
		crc ^= (u16)(*p++ << 8);
		for (b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (u16)(crc << 1 ^ 0x8bb7) :
					     (u16)(crc << 1);
	}
	return crc;
}

static u16 ip_csum(u16 seed, const u8 *p, size_t n)
{
	u32 sum = seed;
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		sum += (u32)p[i] << 8 | p[i + 1];
		sum = (sum & 0xffff) + (sum >> 16);
	}
	if (n & 1)
		sum += (u32)p[n - 1] << 8;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

static void model_pi(const struct ib_t10_dif_domain *d, const u8 *data, u32 blk,
		     u8 *pi)
{
	u16 g = d->bg_type == IB_T10DIF_CRC ?
			crc16_t10(d->bg, data, d->pi_interval) :
			ip_csum(d->bg, data, d->pi_interval);
	u32 ref = d->ref_tag + (d->ref_remap ? blk : 0);

	pi[0] = (u8)(g >> 8);
	pi[1] = (u8)g;
	pi[2] = (u8)(d->app_tag >> 8);
	pi[3] = (u8)d->app_tag;
	pi[4] = (u8)(ref >> 24);
	pi[5] = (u8)(ref >> 16);
	pi[6] = (u8)(ref >> 8);
	pi[7] = (u8)ref;
}

static void fill(u8 *p, size_t n, u64 x)
{
	size_t i;

	x |= 1;
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (u8)(x >> 17);
	}
}

/* ---- the run --------------------------------------------------------- */

struct env {
	TWO_HOSTS_EMBED;
	struct ib_mr *rmr;
	int pool;
	bool threaded;
};

struct done {
	struct ib_cqe cqe;
	int n;
	enum ib_wc_status status;
};

static void on_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct done *d = container_of(wc->wr_cqe, struct done, cqe);

	d->n++;
	FUZZ_CHECK(d->n == 1, "signature context completed twice");
	d->status = wc->status;
}

/* The two hosts (tools/common/two_hosts.c); qp[0] does integrity. */
static void env_init(struct env *e, bool threaded)
{
	struct two_hosts_cfg c = { .cqe = { 64, 64 } };
	struct soft_profile p;
	int s, ret;

	memset(e, 0, sizeof(*e));
	FUZZ_CHECK(!soft_profile_get("mlx5", &p), "profile");
	p.threaded = threaded;
	e->threaded = threaded;
	c.profile = &p;
	for (s = 0; s < 2; s++) {
		c.attr[s].sq_sig_type = IB_SIGNAL_REQ_WR;
		c.attr[s].cap = (struct ib_qp_cap){ .max_send_wr = 16,
						    .max_recv_wr = 4,
						    .max_send_sge = 4,
						    .max_recv_sge = 1 };
	}
	c.attr[0].cap.max_rdma_ctxs = 1;
	c.attr[0].create_flags = IB_QP_CREATE_INTEGRITY_EN;
	ret = two_hosts_open(&e->hosts, &c);
	FUZZ_CHECK(!ret, "%s: %d", e->hosts.failed, ret);
	e->pool = ib_mr_pool_count(e->qp[0], &e->qp[0]->sig_mrs);
	e->rmr = ib_reg_user_mr(e->pd[1], (uintptr_t)arena(1), ARENA,
				(uintptr_t)arena(1),
				IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
					IB_ACCESS_REMOTE_WRITE);
	FUZZ_CHECK(!IS_ERR(e->rmr), "reg");
}

static void env_fini(struct env *e)
{
	FUZZ_CHECK(e->qp[0]->mrs_used == 0 &&
			   ib_mr_pool_count(e->qp[0], &e->qp[0]->sig_mrs) ==
				   e->pool &&
			   rdmarw_dma_mapped(e->dev[0]) == 0,
		   "leak: MRs %d, pool %d of %d, mapped %ld",
		   e->qp[0]->mrs_used,
		   ib_mr_pool_count(e->qp[0], &e->qp[0]->sig_mrs), e->pool,
		   rdmarw_dma_mapped(e->dev[0]));
	FUZZ_CHECK(!ib_dereg_mr(e->rmr), "dereg");
	FUZZ_CHECK(!two_hosts_close(&e->hosts), "teardown: %s",
		   e->hosts.failed);
}

/* Inline devices complete within the post; a threaded one within 10 s. */
static bool wait_done(struct env *e, struct done *d)
{
	u64 end = fuzz_now_ms() + 10000;

	for (;;) {
		ib_process_cq_direct(e->cq[0], -1);
		if (d->n)
			return true;
		if (!e->threaded || fuzz_now_ms() > end)
			return false;
		sched_yield();
	}
}

/* Check everything but [@off, @off + @len) of @side against its shadow. */
static void check_outside(int s, u64 off, u64 len, u64 off2, u64 len2)
{
	size_t i;

	for (i = 0; i < ARENA; i++) {
		if ((i >= off && i < off + len) ||
		    (i >= off2 && i < off2 + len2))
			continue;
		FUZZ_CHECK(arena(s)[i] == shadow[s][i],
			   "side %d byte %zu changed outside the destination",
			   s, i);
	}
}

static const u8 *data_at(u8 *base, const u32 *eoff, const u32 *elen, u32 nent,
			 u32 at)
{
	u32 i;

	for (i = 0; i < nent; i++) {
		if (at < elen[i])
			return base + eoff[i] + at;
		at -= elen[i];
	}
	return NULL;
}

/* One transfer; returns false when init refused it. */
static bool transfer(struct env *e, struct fuzz_in *in, bool *checked)
{
	u32 f = fuzz_u16(in), t = fuzz_u16(in);
	u32 iv = 512u << (f & 3), nblk = 1 + (f >> 2) % MAX_BLK;
	bool write = f & 0x20, mem_dif = f & 0x40, wire_dif = f & 0x80;
	bool noprot = false;
	struct ib_sig_attrs a = { 0 };
	struct ib_t10_dif_domain d = {
		.bg_type = f & 0x100 ? IB_T10DIF_CSUM : IB_T10DIF_CRC,
		.pi_interval = (u16)iv,
		.bg = f & 0x200 ? (u16)fuzz_u16(in) : 0,
		.app_tag = (u16)fuzz_u16(in),
		.ref_tag = fuzz_u32(in),
		.ref_remap = f & 0x400,
		.apptag_check_mask = 0xffff,
	};
	u32 total = iv * nblk, nent = 1 + (f >> 11) % 3, i, b;
	u32 eoff[3], elen[3], roff = fuzz_below(in, 64) * 8;
	u32 wire_len = total + (wire_dif ? 8 * nblk : 0);
	int corrupt_blk = (t & 0xff) < 0x60 ? (int)((t >> 8) % nblk) : -1;
	u32 corrupt_byte = (t >> 4) & 7, prot_len = 8 * nblk;
	struct scatterlist sg[3], psg;
	struct done dn = { .cqe.done = on_done };
	struct rdma_rw_ctx ctx;
	struct ib_mr_status st;
	struct ib_mr *mr;
	static u8 pi[MAX_BLK * 8];
	bool expect_err = false;
	int ret;

	a.check_mask = (u8)(t >> 0) | (f & 0x8000 ? 0xff : 0);
	if (mem_dif) {
		a.mem.sig_type = IB_SIG_TYPE_T10_DIF;
		a.mem.sig.dif = d;
	}
	if (wire_dif) {
		a.wire.sig_type = IB_SIG_TYPE_T10_DIF;
		a.wire.sig.dif = d;
	}
	if (!mem_dif && wire_dif && f & 0x4000 && !skip_noprot)
		noprot = true;
	/* Data entries: interval-aligned splits, each in its own page run. */
	{
		u32 at = 0;

		for (i = 0; i < nent; i++) {
			u32 take = i + 1 == nent ? total - at :
						   (total - at) / (nent - i);

			take &= ~7u;
			if (!take && i + 1 < nent) {
				nent = i + 1;
				take = total - at;
			}
			eoff[i] = at + i * 64; /* gaps between entries */
			elen[i] = take;
			at += take;
		}
		FUZZ_CHECK(at == total, "split");
	}
	memcpy(shadow[0], arena(0), ARENA);
	memcpy(shadow[1], arena(1), ARENA);
	/* The source: the model's image, at most one PI byte corrupted. */
	if (write) {
		if (mem_dif) {
			for (b = 0; b < nblk; b++) {
				u8 blk[4096];

				for (i = 0; i < iv; i++)
					blk[i] = *data_at(arena(0), eoff, elen,
							  nent, b * iv + i);
				model_pi(&d, blk, b,
					 arena(0) + PROT_OFF + b * 8);
			}
			if (corrupt_blk >= 0) {
				arena(0)[PROT_OFF + corrupt_blk * 8 +
					 corrupt_byte] ^= 0xff;
				expect_err =
					a.check_mask & (0x80 >> corrupt_byte);
			}
		}
	} else if (wire_dif) {
		for (b = 0; b < nblk; b++)
			model_pi(&d, arena(1) + roff + b * (iv + 8), b,
				 arena(1) + roff + b * (iv + 8) + iv);
		if (corrupt_blk >= 0) {
			arena(1)[roff + corrupt_blk * (iv + 8) + iv +
				 corrupt_byte] ^= 0xff;
			expect_err = a.check_mask & (0x80 >> corrupt_byte);
		}
	}
	memcpy(shadow[0], arena(0), ARENA);
	memcpy(shadow[1], arena(1), ARENA);
	sg_init_table(sg, nent);
	for (i = 0; i < nent; i++)
		sg_set_buf(&sg[i], arena(0) + eoff[i], elen[i]);
	sg_init_one(&psg, arena(0) + PROT_OFF, prot_len);
	ret = rdma_rw_ctx_signature_init(
		&ctx, e->qp[0], 1, sg, nent, noprot ? NULL : &psg,
		noprot ? 0 : 1, &a, (uintptr_t)arena(1) + roff, e->rmr->rkey,
		write ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	if (ret < 0) {
		FUZZ_CHECK(ret == -EINVAL || ret == -EAGAIN || ret == -ENOMEM,
			   "signature init: %d", ret);
		FUZZ_CHECK(e->qp[0]->mrs_used == 0 &&
				   rdmarw_dma_mapped(e->dev[0]) == 0,
			   "refused init left something");
		return false;
	}
	mr = ctx.reg->mr;
	ret = rdma_rw_ctx_post(&ctx, e->qp[0], 1, &dn.cqe, NULL);
	if (ret == -EINVAL && !*checked && !skip_nocheck) {
		/*
		 * The MR came back unchecked: as on mlx5 the registration is
		 * refused until its status is read (rdma_rw.h); the QP stays
		 * usable, and after the check the same context posts.
		 */
		FUZZ_CHECK(!ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st),
			   "check_mr_status after a refused post");
		*checked = true;
		ret = rdma_rw_ctx_post(&ctx, e->qp[0], 1, &dn.cqe, NULL);
	}
	FUZZ_CHECK(!ret, "signature post: %d%s", ret,
		   *checked ? "" :
			      " (the MR was put back without "
			      "ib_check_mr_status())");
	FUZZ_CHECK(wait_done(e, &dn), "no completion");
	FUZZ_CHECK(dn.status == IB_WC_SUCCESS,
		   "transfer failed with %s (%s mem %d wire %d prot %d): a PI "
		   "error must be reported by ib_check_mr_status()",
		   ib_wc_status_msg(dn.status), write ? "WRITE" : "READ",
		   mem_dif, wire_dif, !noprot);
	*checked = skip_nocheck || !(t & 0x8000);
	if (*checked) {
		FUZZ_CHECK(!ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st),
			   "check_mr_status");
		if (expect_err) {
			static const enum ib_sig_err_type ty[8] = {
				IB_SIG_BAD_GUARD,  IB_SIG_BAD_GUARD,
				IB_SIG_BAD_APPTAG, IB_SIG_BAD_APPTAG,
				IB_SIG_BAD_REFTAG, IB_SIG_BAD_REFTAG,
				IB_SIG_BAD_REFTAG, IB_SIG_BAD_REFTAG,
			};

			FUZZ_CHECK(st.fail_status == IB_MR_CHECK_SIG_STATUS,
				   "corrupted PI byte %u of block %d not "
				   "reported (mask %#x)",
				   corrupt_byte, corrupt_blk, a.check_mask);
			FUZZ_CHECK(
				st.sig_err.err_type == ty[corrupt_byte] &&
					st.sig_err.sig_err_offset ==
						(u64)corrupt_blk * (iv + 8),
				"reported type %d at %llu, want %d at %llu",
				st.sig_err.err_type,
				(unsigned long long)st.sig_err.sig_err_offset,
				ty[corrupt_byte],
				(unsigned long long)corrupt_blk * (iv + 8));
		} else if (corrupt_blk < 0) {
			FUZZ_CHECK(
				st.fail_status == 0,
				"clean transfer reported a PI error "
				"(type %d at %llu)",
				st.sig_err.err_type,
				(unsigned long long)st.sig_err.sig_err_offset);
		}
	}
	/* Bytes: data always; PI where the device generates it. */
	for (b = 0; b < nblk; b++) {
		u8 *wire = arena(1) + roff + b * (wire_dif ? iv + 8 : iv);

		for (i = 0; i < iv; i++)
			FUZZ_CHECK(*data_at(arena(0), eoff, elen, nent,
					    b * iv + i) == wire[i],
				   "%s: data byte %u of block %u differs",
				   write ? "WRITE" : "READ", i, b);
		if (write && wire_dif && !mem_dif) {
			model_pi(&d, wire, b, pi);
			FUZZ_CHECK(!memcmp(wire + iv, pi, 8),
				   "inserted PI of block %u wrong", b);
		}
		if (!write && mem_dif && !wire_dif) {
			u8 blk[4096];

			for (i = 0; i < iv; i++)
				blk[i] = wire[i];
			model_pi(&d, blk, b, pi);
			FUZZ_CHECK(!memcmp(arena(0) + PROT_OFF + b * 8, pi, 8),
				   "PI of block %u stored wrong", b);
		}
	}
	if (write)
		check_outside(1, roff, wire_len, 0, 0);
	else
		check_outside(0, 0, eoff[nent - 1] + elen[nent - 1], PROT_OFF,
			      mem_dif ? prot_len : 0);
	check_outside(write ? 0 : 1, 0, 0, 0, 0);
	rdma_rw_ctx_destroy_signature(&ctx, e->qp[0], 1, sg, nent,
				      noprot ? NULL : &psg, noprot ? 0 : 1,
				      write ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	return true;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct env e;
	bool checked = true;
	u32 h, n, i;

	setup_once();
	h = fuzz_u8(&in);
	env_init(&e, h & 1);
	fill(arena(0), ARENA, size * 31 + h);
	fill(arena(1), ARENA, size * 17 + 5);
	n = 1 + (h >> 1) % 3;
	for (i = 0; i < n && in.n; i++)
		transfer(&e, &in, &checked);
	if (!checked) {
		struct ib_mr *mr, *tmp;
		struct ib_mr_status st;

		/* What the ULP would do before reusing a pool MR. */
		list_for_each_entry_safe(mr, tmp, &e.qp[0]->sig_mrs, qp_entry)
			ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS, &st);
	}
	env_fini(&e);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test fixture and reference model of the signature tests (test_sig_*.c).
 *
 * Fixture: two software devices on a fabric, "target" (side 0: the R/W
 * contexts, QP created with IB_QP_CREATE_INTEGRITY_EN and max_rdma_ctxs) and
 * "host" (side 1: an arena registered for remote READ and WRITE), plus a
 * local arena on the target.
 *
 * Reference: a slow, bit-by-bit CRC-16/T10-DIF, a byte-by-byte IP
 * checksum, and PI generation written from the T10 rules, independent of
 * the device's code (which uses ISA-L).
 */
#ifndef RDMARW_TESTS_SIG_ENV_H
#define RDMARW_TESTS_SIG_ENV_H

#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "two_hosts.h"

/* ---- reference ------------------------------------------------------ */

/* CRC-16/T10-DIF (poly 0x8BB7, init @seed, no reflection, no xorout). */
u16 sig_ref_crc(u16 seed, const u8 *buf, size_t len);
/* ~(ones' complement sum of big-endian words + @seed). */
u16 sig_ref_csum(u16 seed, const u8 *buf, size_t len);
/* The guard of one interval in domain @d. */
u16 sig_ref_guard(const struct ib_t10_dif_domain *d, const u8 *data);
/* The 8 PI bytes domain @d gives block @blk with data @data. */
void sig_ref_pi(const struct ib_t10_dif_domain *d, const u8 *data, u64 blk,
		u8 *pi);
/* PI of @nblk blocks into @pi (8 bytes each, separate list). */
void sig_ref_protect(const struct ib_t10_dif_domain *d, const u8 *data,
		     u64 nblk, u8 *pi);
/* Interleave @nblk blocks of @data with their PI @pi into @wire. */
void sig_ref_interleave(u32 interval, const u8 *data, const u8 *pi, u64 nblk,
			u8 *wire);

/* A T10-DIF domain: CRC, @interval, ref tag @ref (remapped), app @app. */
struct ib_t10_dif_domain sig_dif(u32 interval, u32 ref, u16 app);

/* Fill @buf with bytes from @seed. */
void sig_fill(u8 *buf, size_t len, u64 seed);

/* ---- fixture -------------------------------------------------------- */

/**
 * struct sig_env_cfg - what to build (zero fields take the default)
 * @profile: "mlx5" (default); @custom wins when set
 * @custom: a whole profile
 * @max_rdma_ctxs: of the target QP (default 4)
 * @no_integrity: create the target QP without IB_QP_CREATE_INTEGRITY_EN
 * @host_integrity: create the host QP with IB_QP_CREATE_INTEGRITY_EN too
 * @arena: bytes of each arena (default 1 MiB)
 */
struct sig_env_cfg {
	const char *profile;
	const struct soft_profile *custom;
	u32 max_rdma_ctxs;
	bool no_integrity;
	bool host_integrity;
	size_t arena;
};

/**
 * struct sig_env - the objects
 * @fabric: the fabric
 * @dev: [0] target, [1] host
 * @pd: PDs
 * @cq: CQs (IB_POLL_DIRECT)
 * @qp: connected RC QPs
 * @local: target arena (page aligned)
 * @remote: host arena (page aligned), registered as @remote_mr
 * @len: bytes of each arena
 * @remote_mr: @remote for remote READ and WRITE
 * @hosts: the same objects as tools/common/two_hosts.c built them
 */
struct sig_env {
	TWO_HOSTS_EMBED;
	u8 *local;
	u8 *remote;
	size_t len;
	struct ib_mr *remote_mr;
};

void sig_env_init(struct sig_env *e, const struct sig_env_cfg *cfg);
/* Destroy everything; asserts nothing is left (MRs, mappings, pools). */
void sig_env_fini(struct sig_env *e);

/* Remote address of @off in the host arena. */
static inline u64 sig_env_raddr(const struct sig_env *e, u64 off)
{
	return (u64)(uintptr_t)e->remote + off;
}

/*
 * A scatterlist over @len bytes at @buf cut in entries of the sizes in
 * @cuts (cycled; NULL: one entry).  Free with free().
 */
struct scatterlist *sig_sgl(u8 *buf, u32 len, const u32 *cuts, u32 ncuts,
			    u32 *nents);

/**
 * struct sig_io - one signature transfer through the R/W API
 * @attrs: signature attributes
 * @dir: DMA_TO_DEVICE (RDMA WRITE to the host) or DMA_FROM_DEVICE
 * @data: local data
 * @data_len: its bytes
 * @cuts: data entry sizes (see sig_sgl()), NULL for one entry
 * @ncuts: entries of @cuts
 * @scatter: place the data entries apart from each other (64 bytes between
 *           them) in a scratch buffer, so that they cannot merge: copied
 *           from @data before and back to it after the transfer
 * @pi: local protection list, NULL for none
 * @pi_len: its bytes
 * @roff: offset in the host arena
 */
struct sig_io {
	struct ib_sig_attrs attrs;
	enum dma_data_direction dir;
	u8 *data;
	u32 data_len;
	const u32 *cuts;
	u32 ncuts;
	bool scatter;
	u8 *pi;
	u32 pi_len;
	u64 roff;
};

/*
 * Run @io: rdma_rw_ctx_signature_init(), post, one completion (asserted
 * successful), ib_check_mr_status() into @st, destroy; *@key (if set) gets
 * the MR's key of the transfer.  Returns init's value (asserted positive).
 */
int sig_env_run(struct sig_env *e, const struct sig_io *io,
		struct ib_mr_status *st, u32 *key);

#endif /* RDMARW_TESTS_SIG_ENV_H */

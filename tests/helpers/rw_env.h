/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test fixture of the R/W tests: two software devices of one profile on a
 * fabric (initiator and target), a connected RC QP pair, patterned local and
 * remote arenas (the remote one registered for remote access), completion
 * helpers, and scatterlist/bio_vec builders.
 *
 * The same tests run on a real device: when RDMARW_TEST_DEVICE names an ibv
 * device ("rxe0", "siw0") and RDMARW_TEST_ADDR the IP address its rdma_cm
 * listens on, rw_test_device() is that device's profile and the fixture
 * sets up two QPs on it connected through rdma_cm (the local arena
 * declared in the initiator PD's registration map).  Tests of what only
 * the software device has (its profiles' attributes, fast registration,
 * the IOMMU, statistics, fault hooks) skip there; without the variable
 * everything runs on the software device.
 */
#ifndef RDMARW_TESTS_RW_ENV_H
#define RDMARW_TESTS_RW_ENV_H

#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "helpers/rw_model.h"
#include "two_hosts.h"

/* The profiles every R/W test runs on: name and IOMMU switch. */
struct rw_profile {
	const char *name; /* "mlx5", "rxe", "siw"; an ibv device's name */
	bool iommu;
	const char *label; /* "rxe+iommu" etc. */
	bool ibv; /* a real device through the libibverbs backend */
};

extern const struct rw_profile rw_profiles[];
extern const unsigned int rw_nr_profiles;

/*
 * The ibv device named by RDMARW_TEST_DEVICE (opened on first use), or
 * NULL: the tests run on the software device.  A device that cannot be
 * opened, or a missing RDMARW_TEST_ADDR, ends the program (status 2).
 */
const struct rw_profile *rw_test_device(void);

/* What tests that loop over every profile run on: the software profiles,
 * or only the device.  Sets *@n to how many. */
const struct rw_profile *rw_test_profiles(unsigned int *n);

/* skip() the calling test on a device (it checks the software device's
 * own features), or on the software device (it is the device's twin of a
 * profile-specific test). */
void rw_skip_on_device(void);
void rw_skip_on_soft(void);

/* For a test that needs some device but not a particular profile: the
 * device when there is one, else @soft. */
const struct rw_profile *rw_test_pick(const struct rw_profile *soft);

/**
 * struct rw_env_opts - what to set up
 * @profile: which profile
 * @max_rdma_ctxs: cap.max_rdma_ctxs of the initiator QP
 * @max_send_wr: cap.max_send_wr before the R/W sizing (0: 256, unless
 *               @exact_send_wr)
 * @exact_send_wr: use @max_send_wr even when it is 0
 * @max_send_sge: cap.max_send_sge (0: the device's maximum)
 * @local_len: bytes of the local arena (rounded up to pages)
 * @remote_len: bytes of the remote arena
 * @max_sgl_rd: override the profile's max_sgl_rd when @set_max_sgl_rd
 *              (software devices only)
 * @set_max_sgl_rd: see @max_sgl_rd
 * @fr_len: override max_fast_reg_page_list_len when non-zero (software
 *          devices; ibv devices have no fast registration anyway)
 * @no_fast_reg: clear IB_DEVICE_MEM_MGT_EXTENSIONS (as @fr_len)
 * @threaded: devices execute on progress threads (software devices)
 * @cq_thread: the initiator CQ is processed by its own thread
 *             (IB_POLL_WORKQUEUE); rw_env_wait() then only waits
 */
struct rw_env_opts {
	const struct rw_profile *profile;
	u32 max_rdma_ctxs;
	u32 max_send_wr;
	bool exact_send_wr;
	u32 max_send_sge;
	size_t local_len;
	size_t remote_len;
	u32 max_sgl_rd;
	bool set_max_sgl_rd;
	u32 fr_len;
	bool no_fast_reg;
	bool threaded;
	bool cq_thread;
};

/**
 * struct rw_env - the fixture
 * @fabric: the fabric
 * @dev: initiator device
 * @peer_dev: target device
 * @pd: initiator PD
 * @peer_pd: target PD
 * @cq: initiator CQ (IB_POLL_DIRECT)
 * @peer_cq: target CQ
 * @qp: initiator QP (the R/W contexts' QP)
 * @peer_qp: target QP
 * @local: local arena (page aligned)
 * @local_len: its length
 * @remote: remote arena (page aligned)
 * @remote_len: its length
 * @remote_mr: @remote registered on @peer_dev for remote READ and WRITE
 * @local_ref: expected contents of @local
 * @remote_ref: expected contents of @remote
 * @siw_pages: the profile maps MRs by siw's rules
 * @profile: what it runs on
 * @pair: on an ibv device, the connected QPs (struct ibv_pair)
 * @scratch: a page for rw_env_settle()'s READ
 * @hosts: on the software device, what built the objects
 *         (tools/common/two_hosts.c)
 */
struct rw_env {
	struct soft_fabric *fabric;
	struct ib_device *dev, *peer_dev;
	struct ib_pd *pd, *peer_pd;
	struct ib_cq *cq, *peer_cq;
	struct ib_qp *qp, *peer_qp;
	u8 *local;
	size_t local_len;
	u8 *remote;
	size_t remote_len;
	struct ib_mr *remote_mr;
	u8 *local_ref;
	u8 *remote_ref;
	bool siw_pages;
	const struct rw_profile *profile;
	void *pair;
	u8 *scratch;
	struct two_hosts hosts;
};

/* Is @e on the software device (else an ibv device). */
static inline bool rw_env_soft(const struct rw_env *e)
{
	return !e->profile->ibv;
}

/* Set up; asserts (cmocka) on failure. */
void rw_env_setup(struct rw_env *e, const struct rw_env_opts *o);
/* Destroy everything; asserts that nothing leaked (MRs, mappings, IOVA). */
void rw_env_teardown(struct rw_env *e);

/* Fill both arenas (and their references) from @seed. */
void rw_env_fill(struct rw_env *e, unsigned int seed);
/* Assert both arenas equal their references (after rw_env_settle()). */
void rw_env_check(struct rw_env *e);

/*
 * Make the remote arena final before it is looked at.  On iWARP a WRITE
 * completes once it is sent (siw), not once the target has placed it; a
 * READ posted behind it is answered only after the target processed every
 * earlier request, so waiting for one settles them.  The software device
 * places before it completes, and RoCE acknowledges a WRITE once placed:
 * nothing to do there.  Threads may call it at once.
 */
void rw_env_settle(struct rw_env *e);

/*
 * Apply a transfer to the references: the local pieces @ents (@n of them,
 * the first @offset bytes skipped) moved to or from remote offset @roff.
 * Returns the bytes moved.
 */
u64 rw_env_expect(struct rw_env *e, const struct rw_model_ent *ents, u32 n,
		  u32 offset, u64 roff, enum dma_data_direction dir);

/* A completion counter with an ib_cqe. */
struct rw_done {
	struct ib_cqe cqe;
	int count;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
};

void rw_done_init(struct rw_done *d);
/* Process the initiator CQ until nothing is left; return completions. */
int rw_env_drain_cq(struct rw_env *e);

/* Remote address of offset @off in the remote arena. */
static inline u64 rw_env_raddr(const struct rw_env *e, u64 off)
{
	return (u64)(uintptr_t)e->remote + off;
}

/* ---- buffers -------------------------------------------------------- */

/**
 * struct rw_sgl - a scatterlist over the local arena
 * @ents: the entries (addresses in the local arena), for the model
 * @n: entries
 * @sg: the scatterlist (chained in pieces of @chunk entries when @chunk)
 * @arrays: the arrays of the chained list
 * @nr_arrays: how many
 */
struct rw_sgl {
	struct rw_model_ent *ents;
	u32 n;
	struct scatterlist *sg;
	struct scatterlist **arrays;
	u32 nr_arrays;
};

/*
 * Build a scatterlist of @n entries from @ents; @chunk > 1 chains arrays of
 * @chunk slots (the last slot of each a link), 0 one flat array.
 */
void rw_sgl_build(struct rw_sgl *s, const struct rw_model_ent *ents, u32 n,
		  u32 chunk);
void rw_sgl_free(struct rw_sgl *s);

/*
 * Place @n entries in the local arena starting at @start: entry i has
 * length @lens[i]; @aligned puts each entry after the first on a page
 * boundary, otherwise entries follow with @gap bytes between them.
 * Returns false if they do not fit.
 */
bool rw_place(struct rw_env *e, struct rw_model_ent *ents, const u32 *lens,
	      u32 n, u64 start, bool aligned, u32 gap);

/* Fill @in for the model from the QP's pool and the switches. */
void rw_model_in_init(struct rw_model_in *in, struct rw_env *e,
		      struct rw_model_mr *pool, u32 pool_max,
		      const struct rw_model_ent *ents, u32 n, u32 offset,
		      bool bvec, enum dma_data_direction dir, u64 roff);

/* ---- one transfer, checked end to end -------------------------------- */

/**
 * struct rw_case - one transfer
 * @name: for failure messages
 * @ents: local pieces in the local arena
 * @n: how many
 * @offset: sg_offset (scatterlist input)
 * @chunk: chain the scatterlist in arrays of @chunk slots (0: flat)
 * @bvec: use rdma_rw_ctx_init_bvec() with one bio_vec per piece
 * @skip: (bvec) the iterator starts @skip bytes into the array
 * @trim: (bvec) the iterator ends @trim bytes before the array's end
 * @dir: direction
 * @roff: offset in the remote arena
 * @use_chain: append a signaled SEND to the peer as chain_wr
 * @posts: times to post the context (0 means 1)
 */
struct rw_case {
	const char *name;
	const struct rw_model_ent *ents;
	u32 n;
	u32 offset;
	u32 chunk;
	bool bvec;
	u32 skip;
	u32 trim;
	enum dma_data_direction dir;
	u64 roff;
	bool use_chain;
	u32 posts;
};

/*
 * Run @c: init, compare the context and every WR with the model, post,
 * check the completion(s) and every byte of both arenas, destroy, check
 * that nothing stays mapped or taken.  Returns init's return value (the
 * model's, which is asserted) and, on success, the context's type in
 * *@type (may be NULL).
 */
int rw_run_case(struct rw_env *e, const struct rw_case *c,
		enum rdma_rw_ctx_type *type);

/* Wait (polling the initiator CQ) until *@count reaches @want. */
void rw_env_wait(struct rw_env *e, const int *count, int want);

#endif /* RDMARW_TESTS_RW_ENV_H */

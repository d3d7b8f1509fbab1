/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A test fixture on the software device: a fabric, two devices of one
 * profile (or one device in loopback), a PD, a CQ and a QP on each side,
 * the QPs connected as an RC pair.  Every helper asserts with cmocka, so a
 * test reads as a list of steps; soft_env_fini() asserts that everything
 * was freed (no MR, QP or IOVA range left, nothing DMA-mapped).
 *
 *	struct soft_env env;
 *	soft_env_init(&env, &(struct soft_env_cfg){ .profile = "siw" });
 *	... env.qp[0] talks to env.qp[1] ...
 *	soft_env_fini(&env);
 */
#ifndef RDMARW_TESTS_SOFT_ENV_H
#define RDMARW_TESTS_SOFT_ENV_H

#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

#include "two_hosts.h"

/**
 * struct soft_env_cfg - what to build (zero fields take the default)
 * @profile: "mlx5", "rxe" (default) or "siw"
 * @custom: a whole profile to use instead of @profile, or NULL
 * @loopback: one device, both QPs on it
 * @threaded: set profile.threaded
 * @iommu: set profile.iommu
 * @cap: QP sizes; zero fields: 64 WRs each way, 4 SGEs each way (capped by
 *       the device), max_rdma_ctxs 0
 * @cqe: entries per CQ (default 1024)
 * @sig_all: IB_SIGNAL_ALL_WR instead of IB_SIGNAL_REQ_WR
 * @no_connect: leave the QPs in RESET
 */
struct soft_env_cfg {
	const char *profile;
	const struct soft_profile *custom;
	bool loopback;
	bool threaded;
	bool iommu;
	struct ib_qp_cap cap;
	int cqe;
	bool sig_all;
	bool no_connect;
};

/**
 * struct soft_env - the objects, side 0 and side 1
 * @fabric: the fabric
 * @dev: devices (equal in loopback)
 * @pd: a PD per side
 * @cq: a CQ per side (IB_POLL_DIRECT), for send and receive completions
 * @qp: the connected QPs
 * @profile: the profile used
 * @hosts: the same objects as tools/common/two_hosts.c built them
 */
struct soft_env {
	TWO_HOSTS_EMBED;
	struct soft_profile profile;
};

/* Build everything (asserts on failure). */
void soft_env_init(struct soft_env *env, const struct soft_env_cfg *cfg);

/* Destroy everything and assert nothing is left (MRs must be gone). */
void soft_env_fini(struct soft_env *env);

/* ib_reg_user_mr() of @buf on @side's PD (asserts success). */
struct ib_mr *soft_env_reg(struct soft_env *env, int side, void *buf,
			   size_t len, int access);

/* ib_dereg_mr() (asserts success). */
void soft_env_dereg(struct ib_mr *mr);

/*
 * Poll @cq until exactly @n completions are in @wc (waits for a threaded
 * device; gives up after a minute so that a bug cannot hang the suite).
 * Asserts that no further completion is waiting when @n were taken and
 * the device is not threaded.
 */
void soft_env_poll(struct ib_cq *cq, int n, struct ib_wc *wc);

/* Poll one completion and assert its wr_id, status and opcode. */
void soft_env_expect(struct ib_cq *cq, u64 wr_id, enum ib_wc_status status,
		     enum ib_wc_opcode opcode);

/* Assert that nothing is waiting in @cq. */
void soft_env_expect_empty(struct ib_cq *cq);

/* The QP's state as ib_query_qp() reports it. */
enum ib_qp_state soft_env_state(struct ib_qp *qp);

/* Post one receive of one SGE (asserts success). */
void soft_env_post_recv(struct ib_qp *qp, u64 wr_id, void *buf, u32 len,
			u32 lkey);

/* Post one RDMA WRITE or READ of one SGE, signaled; returns the errno. */
int soft_env_rdma(struct ib_qp *qp, enum ib_wr_opcode opcode, u64 wr_id,
		  void *buf, u32 len, u32 lkey, u64 raddr, u32 rkey);

/* Post one SEND of one SGE, signaled; returns the errno. */
int soft_env_send(struct ib_qp *qp, u64 wr_id, void *buf, u32 len, u32 lkey);

/**
 * struct soft_pair - a fixture plus one buffer and one user MR per side
 * @env: the fixture
 * @buf: a buffer of @len bytes per side
 * @mr: a user MR over each buffer with SOFT_PAIR_ACCESS
 * @len: bytes per buffer
 */
struct soft_pair {
	struct soft_env env;
	u8 *buf[2];
	struct ib_mr *mr[2];
	size_t len;
};

#define SOFT_PAIR_ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

/*
 * soft_env_init() with @cfg, then a buffer of @len bytes and its MR on each
 * side; side i is filled with the byte @fill + i, or zeroed when @fill < 0.
 */
void soft_pair_init(struct soft_pair *p, const struct soft_env_cfg *cfg,
		    size_t len, int fill);

/* Deregister the MRs, free the buffers, soft_env_fini(). */
void soft_pair_fini(struct soft_pair *p);

/* A small seeded PRNG (xorshift64*): deterministic across runs. */
u64 soft_env_rand(u64 *state);

struct timespec;
/* Whether CLOCK_MONOTONIC has reached @deadline (a hang guard's bound). */
bool soft_env_past(const struct timespec *deadline);

#endif /* RDMARW_TESTS_SOFT_ENV_H */

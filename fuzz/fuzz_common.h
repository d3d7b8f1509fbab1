/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the libFuzzer targets: a reader that turns the fuzzer's bytes
 * into bounded choices (running out of input yields zeros), a software
 * fabric with two devices of a profile and a connected QP pair, and a
 * check that aborts with a message (libFuzzer then saves the input).
 */
#ifndef RDMARW_FUZZ_COMMON_H
#define RDMARW_FUZZ_COMMON_H

#include <rdmarw/ib_verbs.h>
#include <rdmarw/mr_pool.h>
#include <rdmarw/rw.h>
#include <rdmarw/soft.h>

#include "two_hosts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FUZZ_CHECK(cond, ...)                                           \
	do {                                                            \
		if (!(cond)) {                                          \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                   \
			fputc('\n', stderr);                            \
			abort();                                        \
		}                                                       \
	} while (0)

struct fuzz_in {
	const u8 *p;
	size_t n;
};

static inline u64 fuzz_bits(struct fuzz_in *in, unsigned int bytes)
{
	u64 v = 0;

	while (bytes--) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

static inline u32 fuzz_u8(struct fuzz_in *in)
{
	return (u32)fuzz_bits(in, 1);
}

static inline u32 fuzz_u16(struct fuzz_in *in)
{
	return (u32)fuzz_bits(in, 2);
}

static inline u32 fuzz_u32(struct fuzz_in *in)
{
	return (u32)fuzz_bits(in, 4);
}

/* A value in [0, n). */
static inline u32 fuzz_below(struct fuzz_in *in, u32 n)
{
	return n ? fuzz_u32(in) % n : 0;
}

static const char *const fuzz_profiles[] = { "mlx5", "rxe", "siw" };

/**
 * struct fuzz_env - two devices of one profile, a QP pair between them
 * @fabric: the fabric
 * @dev: initiator (0) and target (1)
 * @pd: a PD each
 * @cq: a CQ each (IB_POLL_DIRECT)
 * @qp: the connected QPs; qp[0] has max_rdma_ctxs contexts
 * @hosts: the same objects as tools/common/two_hosts.c built them
 */
struct fuzz_env {
	TWO_HOSTS_EMBED;
};

static inline int fuzz_env_init(struct fuzz_env *e,
				const struct soft_profile *p, u32 send_sge,
				u32 max_rdma_ctxs)
{
	struct ib_qp_init_attr a[2] = { 0 };
	int i, ret;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < 2; i++) {
		a[i].sq_sig_type = IB_SIGNAL_REQ_WR;
		a[i].cap.max_send_wr = 64;
		a[i].cap.max_recv_wr = 16;
		a[i].cap.max_recv_sge = 1;
		a[i].cap.max_send_sge = i ? 1 : send_sge;
		a[i].cap.max_rdma_ctxs = i ? 0 : max_rdma_ctxs;
	}
	ret = two_hosts_devices(&e->hosts, p, NULL, false);
	if (ret) {
		/* a profile the device refuses: not a finding */
		FUZZ_CHECK(e->hosts.fabric, "fabric");
		FUZZ_CHECK(!two_hosts_close(&e->hosts), "close");
		return -1;
	}
	for (i = 0; i < 2; i++)
		FUZZ_CHECK(!two_hosts_side(&e->hosts, i, 1024, IB_POLL_DIRECT),
			   "pd/cq");
	ret = two_hosts_qps(&e->hosts, a, true);
	FUZZ_CHECK(!ret, "%s: %d", e->hosts.failed, ret);
	return 0;
}

static inline void fuzz_env_fini(struct fuzz_env *e)
{
	struct soft_stats st;
	int i;

	if (!e->fabric) /* fuzz_env_init() refused the profile */
		return;
	for (i = 0; i < 2; i++) {
		FUZZ_CHECK(!e->qp[i] || e->qp[i]->mrs_used == 0, "mrs_used");
		FUZZ_CHECK(rdmarw_dma_mapped(e->dev[i]) == 0, "dma_mapped %ld",
			   rdmarw_dma_mapped(e->dev[i]));
		FUZZ_CHECK(!soft_device_stats(e->dev[i], &st) &&
				   st.iova_ranges == 0,
			   "IOVA ranges left");
	}
	FUZZ_CHECK(!two_hosts_close_objects(&e->hosts), "%s", e->hosts.failed);
	for (i = 0; i < 2; i++)
		FUZZ_CHECK(!soft_device_stats(e->dev[i], &st) && !st.mrs,
			   "MRs left: %u", st.mrs);
	FUZZ_CHECK(!two_hosts_close(&e->hosts), "%s", e->hosts.failed);
}

/* Poll @cq until @n completions are in @wc (inline devices: all are). */
static inline int fuzz_poll(struct ib_cq *cq, struct ib_wc *wc, int max)
{
	int got = 0, n;

	while (got < max && (n = ib_poll_cq(cq, max - got, wc + got)) > 0)
		got += n;
	return got;
}

/* CLOCK_MONOTONIC in milliseconds: the bound of a wait for a threaded
 * device, which a loaded machine may delay by more than any count of
 * polls. */
static inline u64 fuzz_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

#endif /* RDMARW_FUZZ_COMMON_H */

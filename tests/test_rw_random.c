// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Randomised (seeded, reproducible) transfers on every profile, with and
 * without force_mr, with normal and small MRs: random entry counts, sizes,
 * gaps and alignments, sg_offset, chained lists, bio_vec iterator windows,
 * directions, chain_wr and remote offsets.  Each case is checked against
 * the model (path, every WR) and byte for byte, guards included.  On an
 * ibv device (RDMARW_TEST_DEVICE) two seeds run there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/rw_shapes.h"

#include <stdio.h>
#include <string.h>

#define ITERS 80
#define MAX_N 48

static u32 rnd(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (u32)(*s >> 11);
}

/* Lay out @n entries: 0 random gaps and sizes, 1 page-friendly (pages
 * between an unaligned start and end), 2 contiguous unaligned. */
static bool layout(struct rw_env *e, u64 *s, struct rw_model_ent *ents, u32 n,
		   int mode)
{
	u64 pos = PAGE_SIZE + rnd(s) % PAGE_SIZE;
	u32 i;

	for (i = 0; i < n; i++) {
		u32 len;

		if (mode == 1) {
			if (i)
				pos = (pos + PAGE_SIZE - 1) & PAGE_MASK;
			len = (1 + rnd(s) % 2) * PAGE_SIZE;
			if (!i)
				len -= pos % PAGE_SIZE;
			if (i + 1 == n)
				len = 1 + rnd(s) % (2 * PAGE_SIZE);
		} else {
			len = 1 + rnd(s) % 9000;
			if (mode == 0 && i)
				pos += rnd(s) % 300;
		}
		if (pos + len > e->local_len)
			return false;
		ents[i].addr = (u64)(uintptr_t)e->local + pos;
		ents[i].len = len;
		pos += len;
	}
	return true;
}

static void run_config(const struct rw_profile *p, bool force, u32 fr_len,
		       u64 seed)
{
	struct rw_env_opts o = {
		.profile = p,
		.max_rdma_ctxs = 4,
		.local_len = 1 << 20,
		.remote_len = 1 << 20,
		.fr_len = fr_len,
	};
	unsigned int paths[RDMA_RW_IOVA + 1] = { 0 }, errors = 0;
	struct rw_model_ent ents[MAX_N];
	struct rw_env e;
	u64 s = seed;
	int it;

	rdma_rw_set_force_mr(force);
	rw_env_setup(&e, &o);
	rw_env_fill(&e, (unsigned int)seed);
	for (it = 0; it < ITERS; it++) {
		u32 n = 1 + rnd(&s) % MAX_N, i;
		int mode = (int)(rnd(&s) % 3);
		u64 total = 0;
		char name[96];
		struct rw_case c = { .name = name, .ents = ents };
		enum rdma_rw_ctx_type type;

		if (!layout(&e, &s, ents, n, mode))
			continue;
		for (i = 0; i < n; i++)
			total += ents[i].len;
		c.n = n;
		c.dir = rnd(&s) % 2 ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
		c.use_chain = rnd(&s) % 4 == 0;
		c.bvec = rnd(&s) % 2;
		if (c.bvec) {
			if (rnd(&s) % 3 == 0)
				c.skip = rnd(&s) % (u32)(total / 2 + 1);
			if (rnd(&s) % 3 == 0)
				c.trim = rnd(&s) %
					 (u32)((total - c.skip) / 2 + 1);
		} else {
			if (rnd(&s) % 2)
				c.offset = rnd(&s) % (u32)total;
			if (rnd(&s) % 3 == 0)
				c.chunk = 2 + rnd(&s) % 9;
		}
		c.roff = rnd(&s) % (e.remote_len - total);
		snprintf(name, sizeof(name),
			 "%s%s fr %u seed %#llx iter %d (n %u mode %d)",
			 p->label, force ? " force_mr" : "", fr_len,
			 (unsigned long long)seed, it, n, mode);
		if (rw_run_case(&e, &c, &type) < 0)
			errors++;
		else
			paths[type]++;
	}
	rw_env_teardown(&e);
	rdma_rw_set_force_mr(false);
	print_message(
		"%-10s force %d fr %3u: single %u multi %u mr %u iova %u errors %u\n",
		p->label, force, fr_len, paths[RDMA_RW_SINGLE_WR],
		paths[RDMA_RW_MULTI_WR], paths[RDMA_RW_MR], paths[RDMA_RW_IOVA],
		errors);
	/* the random mix reached the paths this configuration has */
	if (force)
		assert_true(paths[RDMA_RW_MR] >= ITERS / 8);
	else
		assert_true(paths[RDMA_RW_MULTI_WR] + paths[RDMA_RW_IOVA] >=
			    ITERS / 8);
}

static void test_random(void **state)
{
	const struct rw_profile *dev = rw_test_device();
	unsigned int i;

	if (dev) {
		/* no fast registration: force_mr and MR sizes change nothing */
		run_config(dev, false, 0, 0x5eed0001ULL);
		run_config(dev, false, 0, 0x5eed0101ULL);
		return;
	}
	for (i = 0; i < rw_nr_profiles; i++) {
		run_config(&rw_profiles[i], false, 0, 0x5eed0001ULL + i);
		run_config(&rw_profiles[i], false, 16, 0x5eed0101ULL + i);
		run_config(&rw_profiles[i], true, 0, 0x5eed0201ULL + i);
		run_config(&rw_profiles[i], true, 16, 0x5eed0301ULL + i);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

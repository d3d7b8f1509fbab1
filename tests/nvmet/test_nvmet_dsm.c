// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Dataset Management (deallocate) as the two hosts a user has send it:
 * the Linux kernel's nvme_setup_discard() always sends a whole page of
 * ranges (NVME_DSM_MAX_RANGES * 16 = 4096 bytes is the SGL's length)
 * whatever NR says, nvme-cli sends NR * 16 bytes.  Both must deallocate
 * exactly the ranges NR names (they read back as zeroes: DLFEAT says so)
 * and leave alone what the page holds past them (garbage ranges here, one
 * of them out of the namespace); a payload shorter than NR * 16 bytes is
 * refused with SGL Data Length Invalid and DNR (the kernel's
 * nvmet_check_data_len_lte()) and deallocates nothing.  In-capsule and
 * keyed, on each profile.
 */
#include "nvmet_env.h"

#define NBLK 128u /* blocks written before each case: 64 KiB */

struct dsm_range {
	u64 slba;
	u32 nlb;
};

/* Range @i of a DSM payload: context attributes, LBA count, start LBA. */
static void put_range(u8 *buf, unsigned int i, u64 slba, u32 nlb)
{
	u8 *r = buf + (size_t)i * sizeof(struct nvme_dsm_range);

	nvme_put_le32(r, 0);
	nvme_put_le32(r + 4, nlb);
	nvme_put_le64(r + 8, slba);
}

/*
 * Deallocate with @nr ranges (1-based) and a payload of @len bytes; the
 * status field with its DNR bit, or -errno.
 */
static int dsm(struct nv_env *e, unsigned int nr, u8 *payload, u32 len)
{
	struct nvmeh_request rq = { 0 };
	int ret;

	rq.sqe[offsetof(struct nvme_common_command, opcode)] = nvme_cmd_dsm;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid), 1);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      nr - 1);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw11),
		      NVME_DSMGMT_AD);
	rq.data = payload;
	rq.data_len = len;
	rq.write = true;
	ret = nvmeh_exec(e->c, 1, &rq);
	if (ret)
		return ret;
	return rq.error ? rq.error :
			  rq.status & (NVME_SCT_SC_MASK | NVME_SC_DNR);
}

/* Blocks 0..NBLK-1 hold @shadow again. */
static void write_all(struct nv_env *e, u8 *shadow, u64 seed)
{
	nv_fill(shadow, NBLK * 512, seed);
	assert_int_equal(nvmeh_rw(e->c, 1, true, 0, NBLK, shadow), 0);
}

/* Zero @shadow's copy of the ranges, as the target should have. */
static void dealloc_shadow(u8 *shadow, const struct dsm_range *r,
			   unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		memset(shadow + r[i].slba * 512, 0, (size_t)r[i].nlb * 512);
}

static bool all_zero(const u8 *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

/* Blocks 0..NBLK-1 read back as @shadow, else the first that does not. */
static void check_all(struct nv_env *e, const u8 *shadow, const char *what)
{
	u8 *r = malloc(NBLK * 512);
	u32 b;

	assert_non_null(r);
	memset(r, 0xa5, NBLK * 512);
	assert_int_equal(nvmeh_rw(e->c, 2, false, 0, NBLK, r), 0);
	for (b = 0; b < NBLK; b++) {
		const u8 *got = r + b * 512, *want = shadow + b * 512;

		if (!memcmp(got, want, 512))
			continue;
		fail_msg("%s: block %u reads as %s, expected %s", what, b,
			 all_zero(got, 512) ? "zeroes" : "other data",
			 all_zero(want, 512) ? "zeroes" : "its data");
	}
	free(r);
}

static void dsm_case(const char *profile, bool keyed)
{
	static struct nv_env e;
	static const struct dsm_range one[] = { { 10, 6 } };
	static const struct dsm_range two[] = { { 20, 4 }, { 40, 1 } };
	static const struct dsm_range last[] = { { 60, 2 } };
	struct nvmeh_stats before, after;
	u8 *page, *shadow;
	unsigned int i;

	nv_env_init(&e, profile, &(struct nv_cfg){ .no_inline = keyed });
	page = aligned_alloc(4096, 4096);
	shadow = malloc(NBLK * 512);
	assert_non_null(page);
	assert_non_null(shadow);
	nvmeh_ctrl_stats(e.c, &before);

	/*
	 * The kernel host: one range, a page of payload.  The page's tail
	 * names blocks that must stay, and one range past the namespace.
	 */
	write_all(&e, shadow, 1);
	memset(page, 0, 4096);
	put_range(page, 0, one[0].slba, one[0].nlb);
	for (i = 1; i < NVME_DSM_MAX_RANGES; i++)
		put_range(page, i, 100 + i % 16, 4);
	put_range(page, 2, ~0ull - 8, 4);
	assert_int_equal(dsm(&e, 1, page, 4096), 0);
	dealloc_shadow(shadow, one, ARRAY_SIZE(one));
	check_all(&e, shadow, "1 range in 4096 bytes");

	/* nvme-cli: exactly NR * 16 bytes, one range and two */
	write_all(&e, shadow, 2);
	put_range(page, 0, one[0].slba, one[0].nlb);
	assert_int_equal(dsm(&e, 1, page, sizeof(struct nvme_dsm_range)), 0);
	dealloc_shadow(shadow, one, ARRAY_SIZE(one));
	check_all(&e, shadow, "1 range in 16 bytes");
	put_range(page, 0, two[0].slba, two[0].nlb);
	put_range(page, 1, two[1].slba, two[1].nlb);
	assert_int_equal(dsm(&e, 2, page, 2 * sizeof(struct nvme_dsm_range)),
			 0);
	dealloc_shadow(shadow, two, ARRAY_SIZE(two));
	check_all(&e, shadow, "2 ranges in 32 bytes");

	/* 256 ranges, the most there is: empty ones and then one */
	write_all(&e, shadow, 3);
	memset(page, 0, 4096);
	put_range(page, NVME_DSM_MAX_RANGES - 1, last[0].slba, last[0].nlb);
	assert_int_equal(dsm(&e, NVME_DSM_MAX_RANGES, page, 4096), 0);
	dealloc_shadow(shadow, last, ARRAY_SIZE(last));
	check_all(&e, shadow, "256 ranges in 4096 bytes");

	/* shorter than NR * 16: refused, nothing deallocated */
	write_all(&e, shadow, 4);
	put_range(page, 0, 70, 8);
	put_range(page, 1, 80, 8);
	put_range(page, 2, 90, 8);
	assert_int_equal(dsm(&e, 3, page, 2 * sizeof(struct nvme_dsm_range)),
			 NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
	assert_int_equal(dsm(&e, 1, page, 8),
			 NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
	assert_int_equal(dsm(&e, NVME_DSM_MAX_RANGES, page, 4096 - 16),
			 NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
	check_all(&e, shadow, "refused payloads");

	nvmeh_ctrl_stats(e.c, &after);
	if (keyed)
		assert_int_equal(after.inline_writes, before.inline_writes);
	else
		assert_true(after.inline_writes > before.inline_writes);
	assert_int_equal(after.resets, 0);
	free(page);
	free(shadow);
	nv_env_fini(&e);
}

static void test_dsm_rxe_inline(void **state)
{
	dsm_case("rxe", false);
}

static void test_dsm_siw_keyed(void **state)
{
	dsm_case("siw", true);
}

static void test_dsm_mlx5_inline(void **state)
{
	dsm_case("mlx5", false);
}

static void test_dsm_mlx5_keyed(void **state)
{
	dsm_case("mlx5", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_dsm_rxe_inline, nv_teardown),
		cmocka_unit_test_teardown(test_dsm_siw_keyed, nv_teardown),
		cmocka_unit_test_teardown(test_dsm_mlx5_inline, nv_teardown),
		cmocka_unit_test_teardown(test_dsm_mlx5_keyed, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

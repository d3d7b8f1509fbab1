// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reads from a RAM namespace without a copy (nvme/target/backend.c,
 * io-cmd.c, rdma.c: the namespace's own memory is the RDMA WRITE's
 * source, no page of the queue's pool is taken):
 *
 * - the bytes: every 512-byte block of the namespace written (NVMe
 *   Writes, which keep their copy) with its LBA and a pattern, then read
 *   back at page-aligned and unaligned LBAs, 1 block to 128 KiB, the last
 *   block and the last 128 KiB: exact, and the host's bytes on either side
 *   of the transfer untouched; a range that crosses the end, or starts
 *   past it, is refused (LBA Out of Range) and not one byte is sent;
 * - no pool page: with a pool that holds one 128 KiB command (MDTS 128
 *   KiB, 4 KiB of data buffer per entry) and every Read held by the tests'
 *   delay, four 128 KiB reads are held at once (a read that takes pool
 *   pages waits for them instead: one held, three waiting); once let go,
 *   each one's bytes are exact;
 * - a failed read (the backend's -EIO) sends nothing: Unrecovered Read
 *   Error, the host's buffer untouched;
 * - the namespace outlives the transfer: a read held while a reload
 *   removes the namespace (the reload waits for it) completes with the
 *   namespace's bytes after it is let go; later commands get Invalid
 *   Namespace.
 */
#include "nvmet_env.h"
#include "nvmet_int.h"
#include "nv_rq.h"

#include <pthread.h>

#define ZC_LBA 512u
#define ZC_NS_SIZE (4u << 20)
#define ZC_BLOCKS (ZC_NS_SIZE / ZC_LBA)
#define ZC_MAX_NLB 256u /* 128 KiB */
#define ZC_GUARD 64u
/* Byte @i of block @lba: its LBA first (8 bytes), then a pattern. */
static u8 zc_byte(u64 lba, u32 i)
{
	if (i < 8)
		return (u8)(lba >> (8 * i));
	return (u8)(lba * 31 + i * 7 + 1);
}

static void zc_fill(u8 *p, u64 slba, u32 nlb)
{
	u32 b, i;

	for (b = 0; b < nlb; b++)
		for (i = 0; i < ZC_LBA; i++)
			p[b * ZC_LBA + i] = zc_byte(slba + b, i);
}

/* @p holds blocks @slba..+@nlb, byte for byte (the first wrong one named). */
static void zc_check(const u8 *p, u64 slba, u32 nlb)
{
	u32 b, i;

	for (b = 0; b < nlb; b++)
		for (i = 0; i < ZC_LBA; i++)
			if (p[b * ZC_LBA + i] != zc_byte(slba + b, i))
				fail_msg(
					"read at lba %llu: block %u byte %u is "
					"%#x, want %#x (lba %llu's)",
					(unsigned long long)slba, b, i,
					p[b * ZC_LBA + i], zc_byte(slba + b, i),
					(unsigned long long)(slba + b));
}

/* @n bytes at @p all @v. */
static void zc_all(const u8 *p, size_t n, u8 v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			fail_msg("byte %zu is %#x, want %#x (untouched)", i,
				 p[i], v);
}

static struct nvmet_target_opts zc_to;

/*
 * The target with @nr_ns RAM namespaces of 4 MiB (@ns: their options),
 * MDTS @mdts (0: the default) and @data_buf bytes of pool per entry (0:
 * the default); the host with two queues of 16.
 */
static void zc_start(struct nv_env *e, const struct nvmet_ns_opts *ns,
		     unsigned int nr_ns, u32 mdts, u32 data_buf)
{
	unsigned int i;

	nvmet_target_opts_init(&zc_to);
	zc_to.addr = "10.0.0.2";
	zc_to.port = NV_PORT;
	zc_to.subnqn = NV_NQN;
	zc_to.mdts_max = mdts;
	zc_to.data_buf_size = data_buf;
	for (i = 0; i < nr_ns; i++) {
		zc_to.ns[i] = ns[i];
		zc_to.ns[i].type = NVMET_BACKEND_RAM;
		zc_to.ns[i].size = ZC_NS_SIZE;
	}
	zc_to.hosts = nv_hosts;
	zc_to.nr_hosts = 1;
	nv_env_init(e, "mlx5",
		    &(struct nv_cfg){ .nr_io_queues = 2,
				      .queue_size = 16,
				      .io_timeout_ms = 120000,
				      .topts = &zc_to });
}

/* Every block of namespace @nsid written with its tag (Writes: copied). */
static void zc_write_all(struct nv_env *e, u32 nsid)
{
	static u8 wbuf[ZC_MAX_NLB * ZC_LBA];
	struct nv_rq r;
	u64 lba;

	for (lba = 0; lba < ZC_BLOCKS; lba += ZC_MAX_NLB) {
		zc_fill(wbuf, lba, ZC_MAX_NLB);
		nv_rq_init(&r, nvme_cmd_write, nsid, lba, ZC_MAX_NLB, wbuf,
			   ZC_LBA);
		assert_int_equal(nv_exec(e, 1 + (unsigned int)(lba & 1), &r),
				 0);
	}
}

static u8 zc_area[ZC_GUARD + ZC_MAX_NLB * ZC_LBA + ZC_GUARD];

/* Read @nlb blocks at @slba between guards: the status; bytes checked. */
static u16 zc_read(struct nv_env *e, unsigned int qid, u64 slba, u32 nlb)
{
	u8 *data = zc_area + ZC_GUARD;
	size_t len = (size_t)nlb * ZC_LBA;
	struct nv_rq r;
	u16 status;

	memset(zc_area, 0xa5, sizeof(zc_area));
	nv_rq_init(&r, nvme_cmd_read, 1, slba, nlb, data, ZC_LBA);
	status = nv_exec(e, qid, &r);
	zc_all(zc_area, ZC_GUARD, 0xa5);
	zc_all(data + len, sizeof(zc_area) - ZC_GUARD - len, 0xa5);
	if (status)
		zc_all(data, len, 0xa5); /* nothing sent */
	else
		zc_check(data, slba, nlb);
	return status;
}

static void test_zcopy_bytes(void **state)
{
	static struct nv_env e;
	struct nvmet_ns_opts ns[1] = { { 0 } };

	(void)state;
	zc_start(&e, ns, 1, 0, 0);
	zc_write_all(&e, 1);
	assert_int_equal(zc_read(&e, 1, 0, 8), 0);
	assert_int_equal(zc_read(&e, 2, 1, 8), 0); /* not page aligned */
	assert_int_equal(zc_read(&e, 1, 3, 1), 0);
	assert_int_equal(zc_read(&e, 2, 777, ZC_MAX_NLB), 0);
	assert_int_equal(zc_read(&e, 1, 4096, ZC_MAX_NLB), 0);
	assert_int_equal(zc_read(&e, 2, ZC_BLOCKS - 1, 1), 0); /* the last */
	assert_int_equal(zc_read(&e, 1, ZC_BLOCKS - ZC_MAX_NLB, ZC_MAX_NLB), 0);
	/* across the end, past it: refused, nothing sent */
	assert_int_equal(zc_read(&e, 2, ZC_BLOCKS - 7, 8),
			 NVME_SC_LBA_RANGE | NVME_SC_DNR);
	assert_int_equal(zc_read(&e, 1, ZC_BLOCKS - 1, ZC_MAX_NLB),
			 NVME_SC_LBA_RANGE | NVME_SC_DNR);
	assert_int_equal(zc_read(&e, 2, ZC_BLOCKS, 1),
			 NVME_SC_LBA_RANGE | NVME_SC_DNR);
	assert_int_equal(zc_read(&e, 1, ~0ull - 2, 8),
			 NVME_SC_LBA_RANGE | NVME_SC_DNR);
	nv_env_fini(&e);
}

#define ZC_HELD 4

/*
 * A pool of 32 pages (one 128 KiB command): ZC_HELD 128 KiB reads of a
 * held namespace are all held at once, taking no pool page.
 */
static void test_zcopy_no_pool_pages(void **state)
{
	static struct nv_env e;
	static struct nv_rq r[ZC_HELD];
	static u8 buf[ZC_HELD][ZC_MAX_NLB * ZC_LBA];
	struct nvmet_ns_opts ns[2] = { { .test_delay_ms = NV_HELD_MS }, { 0 } };
	struct nvmet_ns *n;
	unsigned int i;

	(void)state;
	zc_start(&e, ns, 2, 5, 4096);
	n = nv_ns(&e, 1);
	/* the tags go in directly: the delay would hold the Writes too */
	for (i = 0; i < ZC_BLOCKS; i += ZC_MAX_NLB)
		zc_fill((u8 *)n->ram + (size_t)i * ZC_LBA, i, ZC_MAX_NLB);
	for (i = 0; i < ZC_HELD; i++) {
		memset(buf[i], 0xa5, sizeof(buf[i]));
		nv_rq_init(&r[i], nvme_cmd_read, 1, 1 + i * 1000, ZC_MAX_NLB,
			   buf[i], ZC_LBA);
		nv_submit(&e, 1, &r[i]);
	}
	nv_wait_for(nvmet_ns_delay_held(n) == ZC_HELD);
	for (i = 0; i < ZC_HELD; i++)
		assert_false(nv_rq_is_done(&r[i]));
	nvmet_ns_delay_release(n, ZC_HELD);
	for (i = 0; i < ZC_HELD; i++) {
		nv_wait_for(nv_rq_is_done(&r[i]));
		assert_int_equal(r[i].rq.error, 0);
		assert_int_equal(r[i].rq.status, 0);
		zc_check(buf[i], 1 + i * 1000, ZC_MAX_NLB);
	}
	nv_env_fini(&e);
}

/* The backend fails the read: its status, and no byte reaches the host. */
static void test_zcopy_error_sends_nothing(void **state)
{
	static struct nv_env e;
	struct nvmet_ns_opts ns[1] = { { .test_errno = -EIO } };

	(void)state;
	zc_start(&e, ns, 1, 0, 0);
	assert_int_equal(zc_read(&e, 1, 0, 8), NVME_SC_READ_ERROR);
	assert_int_equal(zc_read(&e, 2, 100, ZC_MAX_NLB), NVME_SC_READ_ERROR);
	nv_env_fini(&e);
}

struct zc_reload {
	struct nv_env *e;
	int ret; /* atomic: 1 until the reload returns */
};

static void *zc_reload_thread(void *arg)
{
	struct zc_reload *z = arg;
	struct nvmet_target_opts to;
	char why[256];
	int ret;

	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	to.ns[0].type = NVMET_BACKEND_NONE; /* namespace 1 removed */
	to.ns[1] = zc_to.ns[1]; /* 2 kept */
	to.hosts = nv_hosts;
	to.nr_hosts = 1;
	ret = nvmet_target_reload(z->e->t, &to, why, sizeof(why));
	__atomic_store_n(&z->ret, ret, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A read held (the namespace's memory its source) while a reload removes
 * the namespace: the reload waits for it; let go, it completes with the
 * namespace's bytes; afterwards the namespace is gone.
 */
static void test_zcopy_ns_removed_in_flight(void **state)
{
	static struct nv_env e;
	static struct nv_rq r;
	static u8 buf[ZC_MAX_NLB * ZC_LBA];
	struct nvmet_ns_opts ns[2] = { { .test_delay_ms = NV_HELD_MS }, { 0 } };
	struct zc_reload z = { .e = &e, .ret = 1 };
	struct nvmet_ns *n;
	pthread_t th;
	unsigned int i;

	(void)state;
	zc_start(&e, ns, 2, 0, 0);
	n = nv_ns(&e, 1);
	for (i = 0; i < ZC_BLOCKS; i += ZC_MAX_NLB)
		zc_fill((u8 *)n->ram + (size_t)i * ZC_LBA, i, ZC_MAX_NLB);
	memset(buf, 0xa5, sizeof(buf));
	nv_rq_init(&r, nvme_cmd_read, 1, 4000, ZC_MAX_NLB, buf, ZC_LBA);
	nv_submit(&e, 2, &r);
	nv_wait_for(nvmet_ns_delay_held(n) == 1);
	assert_int_equal(pthread_create(&th, NULL, zc_reload_thread, &z), 0);
	/* the slot's reference dropped: the reload waits for the read's */
	nv_wait_for(__atomic_load_n(&n->ref, __ATOMIC_ACQUIRE) == 1);
	assert_int_equal(__atomic_load_n(&z.ret, __ATOMIC_ACQUIRE), 1);
	assert_false(nv_rq_is_done(&r));
	nvmet_ns_delay_release(n, 1);
	nv_wait_for(nv_rq_is_done(&r));
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(z.ret, 0);
	assert_int_equal(r.rq.error, 0);
	assert_int_equal(r.rq.status, 0);
	zc_check(buf, 4000, ZC_MAX_NLB);
	nv_rq_init(&r, nvme_cmd_read, 1, 0, 8, buf, ZC_LBA);
	assert_int_equal(nv_exec(&e, 1, &r) & 0x7ff, NVME_SC_INVALID_NS);
	nv_env_fini(&e);
}

/* argv[1]: run the cases that match this pattern only (cmocka's filter). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_zcopy_bytes, nv_teardown),
		cmocka_unit_test_teardown(test_zcopy_no_pool_pages,
					  nv_teardown),
		cmocka_unit_test_teardown(test_zcopy_error_sends_nothing,
					  nv_teardown),
		cmocka_unit_test_teardown(test_zcopy_ns_removed_in_flight,
					  nv_teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Bad input from a host: each case expects the NVMe status a controller
 * gives, or a clean disconnect after which the host reconnects, and in
 * every case a target that still serves I/O with the data intact:
 * unknown opcodes, LBAs out of range, an SGL type the target does not
 * support, a data length over MDTS, a truncated capsule, more commands
 * than the queue depth, a bad rkey on a write and on a read.
 */
#include "nvmet_env.h"

#include <pthread.h>

struct nv_async {
	pthread_mutex_t m;
	pthread_cond_t c;
	int done;
};

static void async_done(struct nvmeh_request *rq)
{
	struct nv_async *a = rq->priv;

	pthread_mutex_lock(&a->m);
	a->done++;
	pthread_cond_broadcast(&a->c);
	pthread_mutex_unlock(&a->m);
}

static void io_sqe(u8 *sqe, u8 op, u64 slba, u32 nlb)
{
	memset(sqe, 0, sizeof(struct nvme_command));
	sqe[offsetof(struct nvme_common_command, opcode)] = op;
	sqe[offsetof(struct nvme_common_command, flags)] = NVME_CMD_SGL_METABUF;
	nvme_put_le32(sqe + offsetof(struct nvme_common_command, nsid), 1);
	nvme_put_le64(sqe + offsetof(struct nvme_common_command, cdw10), slba);
	nvme_put_le32(sqe + offsetof(struct nvme_common_command, cdw12),
		      nlb - 1);
}

/* The target still serves: write, read back. */
static void still_serves(struct nv_env *e, u64 lba, u64 seed)
{
	u8 w[8192], r[8192];

	assert_int_equal(nvmeh_ctrl_wait_live(e->c, 5000), 0);
	nv_fill(w, sizeof(w), seed);
	assert_int_equal(nvmeh_rw(e->c, 1, true, lba, 16, w), 0);
	assert_int_equal(nvmeh_rw(e->c, 2, false, lba, 16, r), 0);
	assert_memory_equal(w, r, sizeof(w));
}

static void test_unknown_opcode(void **state)
{
	static struct nv_env e;
	struct nvmeh_request rq = { 0 };
	struct nvmeh_stats hs;

	nv_env_init(&e, "rxe", &(struct nv_cfg){ 0 });
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		0x7e; /* no I/O command */
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid), 1);
	assert_int_equal(nv_cmd(&e, 1, &rq), NVME_SC_INVALID_OPCODE);
	assert_true(rq.status & NVME_SC_DNR);
	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		0x3f; /* no admin command */
	assert_int_equal(nv_cmd(&e, 0, &rq), NVME_SC_INVALID_OPCODE);
	/* a Fabrics command type nobody defined */
	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_fabrics_command;
	rq.sqe[offsetof(struct nvmf_common_command, fctype)] = 0x7a;
	assert_int_equal(nv_cmd(&e, 0, &rq), NVME_SC_INVALID_OPCODE);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 0);
	still_serves(&e, 40, 1);
	nv_env_fini(&e);
}

static void test_lba_out_of_range(void **state)
{
	static struct nv_env e;
	u8 buf[1024] = { 0 };
	u64 n;

	nv_env_init(&e, "mlx5", &(struct nv_cfg){ 0 });
	n = nvmeh_ctrl_info(e.c)->ns_lbas;
	assert_int_equal(nvmeh_rw(e.c, 1, false, n, 1, buf), NVME_SC_LBA_RANGE);
	assert_int_equal(nvmeh_rw(e.c, 1, false, n - 1, 2, buf),
			 NVME_SC_LBA_RANGE);
	assert_int_equal(nvmeh_rw(e.c, 2, true, n - 1, 2, buf),
			 NVME_SC_LBA_RANGE);
	assert_int_equal(nvmeh_rw(e.c, 2, true, ~0ull - 1, 2, buf),
			 NVME_SC_LBA_RANGE);
	/* the last block is fine */
	assert_int_equal(nvmeh_rw(e.c, 2, true, n - 1, 1, buf), 0);
	still_serves(&e, 0, 2);
	nv_env_fini(&e);
}

/*
 * SGL descriptor types a keyed-SGL RDMA target does not support: a type it
 * does not know is SGL Descriptor Type Invalid, a subtype of a type it
 * knows is Invalid Field (as the kernel's nvmet_rdma_map_sgl()), all DNR.
 */
static void test_bad_sgl_type(void **state)
{
	static const struct {
		u8 type;
		u16 status;
	} cases[] = {
		{ 0x20, NVME_SC_SGL_INVALID_TYPE }, /* segment */
		{ 0x30, NVME_SC_SGL_INVALID_TYPE }, /* last segment */
		{ 0x50, NVME_SC_SGL_INVALID_TYPE }, /* reserved */
		{ 0xf0, NVME_SC_SGL_INVALID_TYPE }, /* vendor specific */
		{ 0x02, NVME_SC_INVALID_FIELD }, /* data block, subtype 2 */
		{ 0x0a, NVME_SC_INVALID_FIELD }, /* data block, transport */
		{ 0x41, NVME_SC_INVALID_FIELD }, /* keyed, offset subtype */
	};
	static struct nv_env e;
	struct nvmeh_request rq;
	u8 sqe[sizeof(struct nvme_command)];
	unsigned int i;
	int st;

	nv_env_init(&e, "rxe", &(struct nv_cfg){ 0 });
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		io_sqe(sqe, nvme_cmd_read, 0, 8);
		nvme_put_le64(sqe + offsetof(struct nvme_common_command, dptr),
			      0x1000);
		nvme_put_le32(sqe + offsetof(struct nvme_common_command, dptr) +
				      8,
			      4096);
		sqe[offsetof(struct nvme_common_command, dptr) + 15] =
			cases[i].type;
		memset(&rq, 0, sizeof(rq));
		rq.flags = NVMEH_RQ_RAW;
		rq.raw = sqe;
		rq.raw_len = sizeof(sqe);
		st = nv_cmd(&e, 1, &rq);
		if (st != cases[i].status || !(rq.status & NVME_SC_DNR))
			fail_msg("SGL type 0x%02x: status 0x%x, want 0x%x|DNR",
				 cases[i].type, rq.status, cases[i].status);
	}
	/* PSDT 00b (PRPs) on a fabrics queue */
	io_sqe(sqe, nvme_cmd_read, 0, 1);
	sqe[offsetof(struct nvme_common_command, flags)] = 0;
	memset(&rq, 0, sizeof(rq));
	rq.flags = NVMEH_RQ_RAW;
	rq.raw = sqe;
	rq.raw_len = sizeof(sqe);
	assert_int_equal(nv_cmd(&e, 1, &rq), NVME_SC_INVALID_FIELD);
	still_serves(&e, 64, 3);
	nv_env_fini(&e);
}

/* Over the device's limit (MDTS 8, 1 MiB by default). */
static void test_over_mdts_default(void **state)
{
	static struct nv_env e;
	struct nvmeh_request rq = { 0 };
	u8 sqe[sizeof(struct nvme_command)];
	u32 nlb = (1u << 20) / 512 + 8;

	nv_env_init(&e, "rxe", &(struct nv_cfg){ 0 });
	assert_int_equal(nvmeh_ctrl_info(e.c)
				 ->id_ctrl[offsetof(struct nvme_id_ctrl, mdts)],
			 8);
	io_sqe(sqe, nvme_cmd_write, 0, nlb);
	nvme_put_le64(sqe + offsetof(struct nvme_common_command, dptr),
		      0x10000);
	nvme_put_le24(sqe + offsetof(struct nvme_common_command, dptr) + 8,
		      nlb * 512);
	nvme_put_le32(sqe + offsetof(struct nvme_common_command, dptr) + 11,
		      0x1234);
	sqe[offsetof(struct nvme_common_command, dptr) + 15] =
		(NVME_KEY_SGL_FMT_DATA_DESC << 4); /* no inv: the key is fake */
	rq.flags = NVMEH_RQ_RAW;
	rq.raw = sqe;
	rq.raw_len = sizeof(sqe);
	assert_int_equal(nv_cmd(&e, 1, &rq), NVME_SC_INVALID_FIELD);
	still_serves(&e, 128, 5);
	nv_env_fini(&e);
}

/*
 * The same refusal with the invalidate subtype (0x4F) and a key the host
 * never registered: the response must carry Invalid Field in a plain SEND,
 * as nvmet answers a command it refused before mapping (it sets the
 * invalidate only once the data is mapped); a SEND_WITH_INV of the fake key
 * would end the host's queue instead.
 */
static void test_over_mdts_inv(void **state)
{
	static struct nv_env e;
	struct nvmeh_request rq = { 0 };
	u8 sqe[sizeof(struct nvme_command)];
	u32 nlb = (1u << 20) / 512 + 8;

	nv_env_init(&e, "rxe", &(struct nv_cfg){ 0 });
	io_sqe(sqe, nvme_cmd_write, 0, nlb);
	nvme_put_le64(sqe + offsetof(struct nvme_common_command, dptr),
		      0x10000);
	nvme_put_le24(sqe + offsetof(struct nvme_common_command, dptr) + 8,
		      nlb * 512);
	nvme_put_le32(sqe + offsetof(struct nvme_common_command, dptr) + 11,
		      0x1234);
	sqe[offsetof(struct nvme_common_command, dptr) + 15] =
		(NVME_KEY_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_INVALIDATE);
	rq.flags = NVMEH_RQ_RAW;
	rq.raw = sqe;
	rq.raw_len = sizeof(sqe);
	assert_int_equal(nv_cmd(&e, 1, &rq), NVME_SC_INVALID_FIELD);
	still_serves(&e, 128, 5);
	nv_env_fini(&e);
}

/*
 * A keyed data length over the MDTS the target offers (mdts_max 5), and
 * one that disagrees with NLB.
 */
static void test_over_mdts(void **state)
{
	static struct nv_env e;
	struct nvmeh_request rq;
	u8 sqe[sizeof(struct nvme_command)];
	u32 mdts_bytes, nlb;
	u8 mdts;
	int st;

	nv_env_init(&e, "mlx5", &(struct nv_cfg){ .mdts_max = 5 });
	mdts = nvmeh_ctrl_info(e.c)
		       ->id_ctrl[offsetof(struct nvme_id_ctrl, mdts)];
	assert_int_equal(mdts, 5);
	mdts_bytes = 4096u << mdts;
	nlb = mdts_bytes / 512 + 8;
	io_sqe(sqe, nvme_cmd_read, 0, nlb);
	nvme_put_le64(sqe + offsetof(struct nvme_common_command, dptr),
		      0x10000);
	nvme_put_le24(sqe + offsetof(struct nvme_common_command, dptr) + 8,
		      nlb * 512);
	nvme_put_le32(sqe + offsetof(struct nvme_common_command, dptr) + 11,
		      0x1234);
	sqe[offsetof(struct nvme_common_command, dptr) + 15] =
		(NVME_KEY_SGL_FMT_DATA_DESC << 4); /* no inv: the key is fake */
	memset(&rq, 0, sizeof(rq));
	rq.flags = NVMEH_RQ_RAW;
	rq.raw = sqe;
	rq.raw_len = sizeof(sqe);
	st = nv_cmd(&e, 1, &rq);
	assert_int_equal(st, NVME_SC_INVALID_FIELD);
	/* the host itself refuses what is over its limit */
	{
		u8 *big = malloc(nlb * 512);

		assert_non_null(big);
		assert_int_equal(nvmeh_rw(e.c, 1, false, 0, nlb, big), -EINVAL);
		free(big);
	}
	/* SGL length smaller than NLB says */
	io_sqe(sqe, nvme_cmd_read, 0, 8);
	nvme_put_le64(sqe + offsetof(struct nvme_common_command, dptr),
		      0x10000);
	nvme_put_le24(sqe + offsetof(struct nvme_common_command, dptr) + 8,
		      512);
	nvme_put_le32(sqe + offsetof(struct nvme_common_command, dptr) + 11,
		      0x1234);
	sqe[offsetof(struct nvme_common_command, dptr) + 15] =
		(NVME_KEY_SGL_FMT_DATA_DESC << 4); /* no inv: the key is fake */
	memset(&rq, 0, sizeof(rq));
	rq.flags = NVMEH_RQ_RAW;
	rq.raw = sqe;
	rq.raw_len = sizeof(sqe);
	st = nv_cmd(&e, 1, &rq);
	assert_int_equal(st, NVME_SC_SGL_INVALID_DATA);
	still_serves(&e, 128, 4);
	nv_env_fini(&e);
}

/*
 * Capsules shorter than an SQE: with a command id (4 bytes and more) the
 * target answers Invalid Field; without one it can only drop the queue
 * (the host reconnects).  The kernel's nvmet drops the queue for both.
 */
static void test_truncated_capsule(void **state)
{
	static const u32 lens[] = { 63, 40, 16, 4, 3, 1 };
	static struct nv_env e;
	struct nvmeh_request rq;
	struct nvmeh_stats hs;
	u8 sqe[sizeof(struct nvme_command)];
	unsigned int i;
	u64 resets = 0;

	nv_env_init(&e, "siw", &(struct nv_cfg){ .io_timeout_ms = 5000 });
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		io_sqe(sqe, nvme_cmd_read, 0, 1);
		memset(&rq, 0, sizeof(rq));
		rq.flags = NVMEH_RQ_RAW;
		rq.raw = sqe;
		rq.raw_len = lens[i];
		assert_int_equal(nvmeh_exec(e.c, 1, &rq), 0);
		nvmeh_ctrl_stats(e.c, &hs);
		if (lens[i] >= 4) {
			assert_int_equal(rq.error, 0);
			assert_int_equal(rq.status,
					 NVME_SC_INVALID_FIELD | NVME_SC_DNR);
		} else {
			assert_int_equal(rq.error, -ECONNABORTED);
			resets++;
		}
		assert_int_equal(hs.resets, resets);
		still_serves(&e, 8 * i, 10 + i);
	}
	/* One controller (with its admin and two I/O queues) once the
	 * dropped ones are released (asynchronously, on the target's work
	 * queue). */
	nv_wait_target(&e, 1, 3);
	nv_env_fini(&e);
}

/* queue_size + NVMEH_EXTRA_SLOTS commands outstanding at once. */
static void test_over_queue_depth(void **state)
{
	enum { DEPTH = 8, N = DEPTH + NVMEH_EXTRA_SLOTS };
	static struct nv_env e;
	struct nvmeh_request rq[N];
	struct nv_async a = { PTHREAD_MUTEX_INITIALIZER,
			      PTHREAD_COND_INITIALIZER, 0 };
	static u8 bufs[N][4096], expect[4096];
	struct nvmeh_request extra = { 0 };
	int i, ok = 0, failed = 0, aborted = 0;

	nv_env_init(&e, "mlx5",
		    &(struct nv_cfg){ .queue_size = DEPTH,
				      .nr_io_queues = 2,
				      .io_timeout_ms = 1000 });
	assert_int_equal(nvmeh_ctrl_info(e.c)->queue_size, DEPTH);
	for (i = 0; i < N; i++) {
		nv_fill(expect, sizeof(expect), 500 + i);
		assert_int_equal(nvmeh_rw(e.c, 2, true, (u64)i * 8, 8, expect),
				 0);
		memset(bufs[i], 0xa5, sizeof(bufs[i]));
	}
	/*
	 * The host's Send Queue stalls before the first WR, so that all N
	 * commands leave together when it is released.
	 */
	assert_int_equal(
		soft_fault_arm_qp(nvmeh_ctrl_qp(e.c, 1),
				  &(struct soft_fault_rule){
					  .type = SOFT_FAULT_STALL, .nth = 1 }),
		0);
	/* without the flag the host keeps to its depth */
	for (i = 0; i < N; i++) {
		memset(&rq[i], 0, sizeof(rq[i]));
		io_sqe(rq[i].sqe, nvme_cmd_read, (u64)i * 8, 8);
		rq[i].data = bufs[i];
		rq[i].data_len = sizeof(bufs[i]);
		rq[i].done = async_done;
		rq[i].priv = &a;
		rq[i].flags = i >= DEPTH ? NVMEH_RQ_OVERDEPTH : 0;
		assert_int_equal(nvmeh_submit(e.c, 1, &rq[i]), 0);
		if (i == DEPTH - 1) {
			extra = rq[0];
			extra.flags = 0;
			assert_int_equal(nvmeh_submit(e.c, 1, &extra), -EBUSY);
		}
	}
	assert_int_equal(soft_fault_resume(nvmeh_ctrl_qp(e.c, 1)), 0);
	pthread_mutex_lock(&a.m);
	while (a.done < N)
		pthread_cond_wait(&a.c, &a.m);
	pthread_mutex_unlock(&a.m);
	for (i = 0; i < N; i++) {
		if (rq[i].error)
			aborted++;
		else if (rq[i].status)
			failed++;
		else
			ok++;
	}
	/*
	 * The SENDs past the target's receives wait (RNR) until it reposts
	 * them: every command is served, with its data.
	 */
	assert_int_equal(failed, 0);
	assert_int_equal(aborted, 0);
	assert_int_equal(ok, N);
	for (i = 0; i < N; i++) {
		nv_fill(expect, sizeof(expect), 500 + i);
		assert_memory_equal(bufs[i], expect, sizeof(expect));
	}
	still_serves(&e, 512, 20);
	nv_env_fini(&e);
}

/* A wrong rkey: the target's RDMA READ (write) or WRITE (read) fails. */
static void bad_rkey(const char *profile, bool write)
{
	static struct nv_env e;
	struct nvmeh_request rq = { 0 };
	struct nvmeh_stats hs;
	u8 *good = malloc(16384), *buf = malloc(16384), *back = malloc(16384);

	assert_non_null(good);
	assert_non_null(buf);
	assert_non_null(back);
	nv_env_init(&e, profile, &(struct nv_cfg){ .io_timeout_ms = 1000 });
	nv_fill(good, 16384, 99);
	assert_int_equal(nvmeh_rw(e.c, 1, true, 1000, 32, good), 0);

	io_sqe(rq.sqe, write ? nvme_cmd_write : nvme_cmd_read, 1000, 32);
	nv_fill(buf, 16384, 100);
	memcpy(back, buf, 16384);
	rq.data = buf;
	rq.data_len = 16384; /* over the in-capsule size: keyed */
	rq.write = write;
	rq.flags = NVMEH_RQ_BAD_RKEY;
	assert_int_equal(nvmeh_exec(e.c, 1, &rq), 0);
	/*
	 * The target's RDMA READ (WRITE) fails with a remote access error:
	 * on RC that ends the connection, so no status can come; the host
	 * sees the disconnect and reconnects.
	 */
	assert_int_equal(rq.error, -ECONNABORTED);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 1);
	/* a read moved nothing into the buffer */
	if (!write)
		assert_memory_equal(buf, back, 16384);
	/* a write changed nothing on the namespace */
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	memset(back, 0, 16384);
	assert_int_equal(nvmeh_rw(e.c, 2, false, 1000, 32, back), 0);
	assert_memory_equal(back, good, 16384);
	still_serves(&e, 2000, 30);
	nv_env_fini(&e);
	free(good);
	free(buf);
	free(back);
}

static void test_bad_rkey_write_rxe(void **state)
{
	bad_rkey("rxe", true);
}

static void test_bad_rkey_read_rxe(void **state)
{
	bad_rkey("rxe", false);
}

static void test_bad_rkey_write_siw(void **state)
{
	bad_rkey("siw", true);
}

static void test_bad_rkey_read_mlx5(void **state)
{
	bad_rkey("mlx5", false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_unknown_opcode, nv_teardown),
		cmocka_unit_test_teardown(test_lba_out_of_range, nv_teardown),
		cmocka_unit_test_teardown(test_bad_sgl_type, nv_teardown),
		cmocka_unit_test_teardown(test_over_mdts_default, nv_teardown),
		cmocka_unit_test_teardown(test_over_mdts_inv, nv_teardown),
		cmocka_unit_test_teardown(test_over_mdts, nv_teardown),
		cmocka_unit_test_teardown(test_truncated_capsule, nv_teardown),
		cmocka_unit_test_teardown(test_over_queue_depth, nv_teardown),
		cmocka_unit_test_teardown(test_bad_rkey_write_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_bad_rkey_read_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_bad_rkey_write_siw, nv_teardown),
		cmocka_unit_test_teardown(test_bad_rkey_read_mlx5, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

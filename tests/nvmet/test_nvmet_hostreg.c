// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's registered regions (nvmeh_buf_reg(), issue 30): commands
 * whose data lies in a region registered once carry the queue's rkey for
 * the region, with no fast registration before the capsule and no
 * invalidation after the response.  Checked here: the bytes (LBA-tagged
 * blocks written from one place of a region and read back into another,
 * everything else in the region untouched), the work requests the host's
 * device executes (one SEND per command), refused input, a deregistration
 * refused while a command is out, a reset (the regions registered again on
 * the new PDs), a target that invalidates a region's rkey (not taken for
 * the host's own: a reset), and the controller's destroy freeing what is
 * left (nv_env_fini() asserts no MR is left on the device).
 */
#include "nvmet_env.h"

#define REG_LEN (256u * 1024)
#define REG_FILL 0xee

/* A block's bytes: its LBA and @seed, so that a misplaced block shows. */
static void tag_blocks(u8 *p, u64 slba, u32 nlb, u32 seed)
{
	u32 i, k;

	for (i = 0; i < nlb; i++)
		for (k = 0; k < 512; k += 8) {
			u64 v = (slba + i) << 16 ^ (u64)seed << 40 ^ k;

			memcpy(p + (size_t)i * 512 + k, &v, 8);
		}
}

static u64 host_wrs(struct nv_env *e)
{
	struct soft_stats st;

	assert_int_equal(soft_device_stats(e->hdev, &st), 0);
	return st.wrs_executed;
}

static u32 host_mrs(struct nv_env *e)
{
	struct soft_stats st;

	assert_int_equal(soft_device_stats(e->hdev, &st), 0);
	return st.mrs;
}

/* A read or write of namespace 1 through @buf (NULL: the default path). */
static void rw_rq(struct nvmeh_request *rq, bool write, u64 slba, u32 nlb,
		  void *data, struct nvmeh_buf *buf)
{
	nv_rw_init(rq, write, 1, slba, nlb, data, 512);
	rq->buf = buf;
}

static int rw(struct nv_env *e, unsigned int qid, bool write, u64 slba, u32 nlb,
	      void *data, struct nvmeh_buf *buf)
{
	struct nvmeh_request rq;

	rw_rq(&rq, write, slba, nlb, data, buf);
	return nv_cmd(e, qid, &rq);
}

/* One I/O of the table below: where in the region, which blocks. */
struct reg_io {
	unsigned int qid;
	size_t off; /* of the written data in the region */
	size_t back; /* where it is read back */
	u64 slba;
	u32 nlb;
};

static const struct reg_io reg_ios[] = {
	{ 1, 0, 128 * 1024, 0, 8 }, /* 4 KiB, page aligned */
	{ 2, 4096 + 100, 136 * 1024 + 12, 64, 1 }, /* 512 B, in-capsule */
	{ 1, 8192 + 3, 140 * 1024 + 7, 200, 128 }, /* 64 KiB, unaligned */
	{ 2, 124 * 1024, REG_LEN - 2048, 500, 4 }, /* back at the very end */
};

/*
 * Each I/O of reg_ios through @buf: write tagged blocks from one place,
 * read them back into another; then every byte of the region is what it
 * should be (the fill outside the data and the read-back places).  The
 * host's device executes one work request per command (the capsule's
 * SEND): no REG_MR, no LOCAL_INV; the target invalidated nothing.
 */
static void reg_rw_check(struct nv_env *e, u8 *region, struct nvmeh_buf *buf,
			 u32 seed)
{
	u8 *want = malloc(REG_LEN);
	struct nvmeh_stats s0, s1;
	u64 w0, n = 0;
	size_t i;

	assert_non_null(want);
	memset(region, REG_FILL, REG_LEN);
	memset(want, REG_FILL, REG_LEN);
	nvmeh_ctrl_stats(e->c, &s0);
	w0 = host_wrs(e);
	for (i = 0; i < ARRAY_SIZE(reg_ios); i++) {
		const struct reg_io *io = &reg_ios[i];

		tag_blocks(region + io->off, io->slba, io->nlb, seed);
		tag_blocks(want + io->off, io->slba, io->nlb, seed);
		tag_blocks(want + io->back, io->slba, io->nlb, seed);
		assert_int_equal(rw(e, io->qid, true, io->slba, io->nlb,
				    region + io->off, buf),
				 0);
		n++;
	}
	for (i = 0; i < ARRAY_SIZE(reg_ios); i++) {
		const struct reg_io *io = &reg_ios[i];

		assert_int_equal(rw(e, 3 - io->qid, false, io->slba, io->nlb,
				    region + io->back, buf),
				 0);
		n++;
	}
	assert_memory_equal(region, want, REG_LEN);
	assert_int_equal(host_wrs(e) - w0, n);
	nvmeh_ctrl_stats(e->c, &s1);
	assert_int_equal(s1.local_invs, s0.local_invs);
	assert_int_equal(s1.remote_invs, s0.remote_invs);
	assert_int_equal(s1.bad_invs, s0.bad_invs);
	assert_int_equal(s1.resets, s0.resets);
	free(want);
}

/*
 * The peer: the same blocks read on the default path (registered per
 * command) come back the same, and there each keyed read costs the
 * host's device a REG_MR beside its SEND (and a LOCAL_INV where the
 * target did not invalidate).
 */
static void default_read_check(struct nv_env *e, const u8 *region)
{
	const struct reg_io *io = &reg_ios[2];
	struct nvmeh_stats s0, s1;
	u8 *b = aligned_alloc(4096, io->nlb * 512);
	u64 w0;

	assert_non_null(b);
	nvmeh_ctrl_stats(e->c, &s0);
	w0 = host_wrs(e);
	assert_int_equal(rw(e, 1, false, io->slba, io->nlb, b, NULL), 0);
	nvmeh_ctrl_stats(e->c, &s1);
	assert_int_equal(s1.remote_invs + s1.local_invs -
				 (s0.remote_invs + s0.local_invs),
			 1);
	assert_int_equal(host_wrs(e) - w0, 2 + s1.local_invs - s0.local_invs);
	assert_memory_equal(b, region + io->back, io->nlb * 512);
	free(b);
}

static void reg_rw(const char *profile)
{
	static struct nv_env e;
	struct nvmeh_buf *buf;
	u8 *region = aligned_alloc(4096, REG_LEN);
	u32 mrs;

	assert_non_null(region);
	nv_env_init(&e, profile, &(struct nv_cfg){ .nr_io_queues = 2 });
	mrs = host_mrs(&e);
	buf = nvmeh_buf_reg(e.c, region, REG_LEN);
	assert_false(IS_ERR_OR_NULL(buf));
	/* one MR per queue: the admin queue and two I/O queues */
	assert_int_equal(host_mrs(&e), mrs + 3);
	reg_rw_check(&e, region, buf, 1);
	default_read_check(&e, region);
	assert_int_equal(nvmeh_buf_dereg(buf), 0);
	assert_int_equal(host_mrs(&e), mrs);
	nv_env_fini(&e);
	free(region);
}

static void test_rw_rxe(void **state)
{
	(void)state;
	reg_rw("rxe");
}

static void test_rw_siw(void **state)
{
	(void)state;
	reg_rw("siw");
}

static void test_rw_mlx5(void **state)
{
	(void)state;
	reg_rw("mlx5");
}

static void never_done(struct nvmeh_request *rq)
{
	(void)rq;
	fail_msg("a refused request ended");
}

/* Out of the region, or with the wrong flags: -EINVAL, nothing sent. */
static void test_bad_input(void **state)
{
	static struct nv_env e;
	struct nvmeh_request rq;
	struct nvmeh_buf *buf;
	u8 *mem = aligned_alloc(4096, 3 * 4096);
	u8 *region, t[4096];
	u64 w0;

	(void)state;
	assert_non_null(mem);
	region = mem + 4096;
	nv_env_init(&e, "rxe", &(struct nv_cfg){ .nr_io_queues = 1 });
	assert_int_equal(PTR_ERR(nvmeh_buf_reg(NULL, region, 4096)), -EINVAL);
	assert_int_equal(PTR_ERR(nvmeh_buf_reg(e.c, NULL, 4096)), -EINVAL);
	assert_int_equal(PTR_ERR(nvmeh_buf_reg(e.c, region, 0)), -EINVAL);
	assert_int_equal(
		PTR_ERR(nvmeh_buf_reg(e.c, (void *)(UINTPTR_MAX - 99), 200)),
		-EINVAL);
	assert_int_equal(nvmeh_buf_dereg(NULL), -EINVAL);
	buf = nvmeh_buf_reg(e.c, region, 4096);
	assert_false(IS_ERR_OR_NULL(buf));
	w0 = host_wrs(&e);

	/* starts a byte before the region */
	rw_rq(&rq, false, 0, 1, region - 1, buf);
	rq.done = never_done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), -EINVAL);
	/* ends a byte past it */
	rw_rq(&rq, false, 0, 1, region + 4096 - 511, buf);
	rq.done = never_done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), -EINVAL);
	/* longer than the region */
	rw_rq(&rq, true, 0, 9, region, buf);
	rq.done = never_done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), -EINVAL);
	/* wholly past it */
	rw_rq(&rq, true, 0, 1, region + 4096, buf);
	rq.done = never_done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), -EINVAL);
	/* no data */
	rw_rq(&rq, false, 0, 1, region, buf);
	rq.data_len = 0;
	rq.done = never_done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), -EINVAL);
	/* a raw capsule names no data */
	rw_rq(&rq, false, 0, 1, region, buf);
	rq.flags = NVMEH_RQ_RAW;
	rq.raw = rq.sqe;
	rq.raw_len = sizeof(rq.sqe);
	rq.done = never_done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), -EINVAL);
	assert_int_equal(host_wrs(&e), w0);

	/* the whole region, first and last byte included: accepted */
	memset(mem, 0x5c, 3 * 4096);
	tag_blocks(region, 0, 8, 7);
	assert_int_equal(rw(&e, 1, true, 0, 8, region, buf), 0);
	memset(region, 0, 4096);
	assert_int_equal(rw(&e, 1, false, 0, 8, region, buf), 0);
	tag_blocks(t, 0, 8, 7);
	assert_memory_equal(region, t, 4096);
	memset(t, 0x5c, 4096); /* the bytes around it: untouched */
	assert_memory_equal(mem, t, 4096);
	assert_memory_equal(mem + 8192, t, 4096);
	assert_int_equal(nvmeh_buf_dereg(buf), 0);
	nv_env_fini(&e);
	free(mem);
}

static void count_done(struct nvmeh_request *rq)
{
	__atomic_fetch_add((int *)rq->priv, 1, __ATOMIC_RELEASE);
}

/*
 * Deregistration while a command is out: refused, and the region keeps
 * working.  The I/O queue is polled by this thread only
 * (poll_external), so the command stays out until it polls.  Then the
 * controller is destroyed with the region registered and a command out:
 * the command ends aborted and nothing is left.
 */
static void test_dereg_busy(void **state)
{
	static struct nv_env e;
	struct nvmeh_request rq, rq2;
	struct nvmeh_buf *buf, *other;
	u8 *region = aligned_alloc(4096, REG_LEN);
	int done = 0, i;

	(void)state;
	assert_non_null(region);
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .nr_io_queues = 1, .no_connect = true });
	e.o.poll = true;
	e.o.poll_external = true;
	e.c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR_OR_NULL(e.c));
	buf = nvmeh_buf_reg(e.c, region, REG_LEN);
	assert_false(IS_ERR_OR_NULL(buf));
	other = nvmeh_buf_reg(e.c, region, 4096); /* overlapping: allowed */
	assert_false(IS_ERR_OR_NULL(other));

	rw_rq(&rq, false, 0, 8, region + 4096, buf);
	rq.done = count_done;
	rq.priv = &done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), 0);
	assert_int_equal(nvmeh_buf_dereg(buf), -EBUSY);
	/* still usable: a second command through it goes out too */
	rw_rq(&rq2, false, 8, 8, region + 8192, buf);
	rq2.done = count_done;
	rq2.priv = &done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq2), 0);
	assert_int_equal(nvmeh_buf_dereg(buf), -EBUSY);
	/* another region is not held by them */
	assert_int_equal(nvmeh_buf_dereg(other), 0);
	/* bounded: 10 s of 1 ms naps when nothing came */
	for (i = 0; i < 10000 && __atomic_load_n(&done, __ATOMIC_ACQUIRE) < 2;)
		if (nvmeh_poll(e.c, 1, 32) == 0) {
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			i++;
		}
	assert_int_equal(done, 2);
	assert_int_equal(rq.error, 0);
	assert_int_equal(rq.status, 0);
	assert_int_equal(rq2.error, 0);
	assert_int_equal(nvmeh_buf_dereg(buf), 0);

	/* destroyed with a region registered and a command out */
	buf = nvmeh_buf_reg(e.c, region, REG_LEN);
	assert_false(IS_ERR_OR_NULL(buf));
	done = 0;
	rw_rq(&rq, true, 0, 8, region, buf);
	rq.done = count_done;
	rq.priv = &done;
	assert_int_equal(nvmeh_submit(e.c, 1, &rq), 0);
	nvmeh_ctrl_destroy(e.c);
	e.c = NULL;
	assert_int_equal(done, 1);
	nv_env_fini(&e); /* asserts no MR is left on either device */
	free(region);
}

/*
 * A reset: the queues' PDs go and come back; the regions' MRs with them.
 * One region is registered while the controller is live, one while it
 * is resetting (whichever queues are up then register it at once, the
 * others when they connect).
 */
static void test_after_reset(void **state)
{
	static struct nv_env e;
	struct nvmeh_buf *buf, *late;
	struct nvmeh_stats hs;
	u8 *region = aligned_alloc(4096, REG_LEN);
	u8 *r2 = aligned_alloc(4096, REG_LEN);
	u32 mrs;

	(void)state;
	assert_non_null(region);
	assert_non_null(r2);
	nv_env_init(&e, "siw", &(struct nv_cfg){ .nr_io_queues = 2 });
	mrs = host_mrs(&e);
	buf = nvmeh_buf_reg(e.c, region, REG_LEN);
	assert_false(IS_ERR_OR_NULL(buf));
	reg_rw_check(&e, region, buf, 2);

	assert_int_equal(nvmeh_ctrl_reset(e.c), 0);
	late = nvmeh_buf_reg(e.c, r2, REG_LEN);
	assert_false(IS_ERR_OR_NULL(late));
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 1);
	assert_int_equal(hs.reconnects, 1);
	/* the old MRs went with the old PDs: two regions on three queues */
	assert_int_equal(host_mrs(&e), mrs + 6);
	reg_rw_check(&e, region, buf, 3);
	reg_rw_check(&e, r2, late, 4);
	assert_int_equal(nvmeh_buf_dereg(buf), 0);
	assert_int_equal(nvmeh_buf_dereg(late), 0);
	assert_int_equal(host_mrs(&e), mrs);
	nv_env_fini(&e);
	free(region);
	free(r2);
}

/*
 * A target that invalidates a region's rkey (here asked to by the test
 * hook; a hostile one would unasked).  rxe and mlx5 refuse to invalidate
 * an MR that is not a fast-registration MR: the host's receive fails and
 * the host resets.  siw invalidates any MR of the PD (siw_invalidate_stag()
 * checks the PD only): the response arrives with the invalidation, which
 * the host does not take for its own (bad_invs, not remote_invs) and
 * resets; the reconnect registers the region again, and it works.
 */
static void hostile_inv(const char *profile, bool honoured)
{
	static struct nv_env e;
	struct nvmeh_request rq;
	struct nvmeh_buf *buf;
	struct nvmeh_stats s0, hs;
	u8 *region = aligned_alloc(4096, REG_LEN);
	u64 reconnect_invs;
	int ret;

	assert_non_null(region);
	nv_env_init(&e, profile, &(struct nv_cfg){ .nr_io_queues = 2 });
	buf = nvmeh_buf_reg(e.c, region, REG_LEN);
	assert_false(IS_ERR_OR_NULL(buf));
	/* the peer: what a plain reset's reconnect counts in remote_invs
	 * (its Connect and Identify commands, registered per command) */
	nvmeh_ctrl_stats(e.c, &s0);
	assert_int_equal(nvmeh_ctrl_reset(e.c), 0);
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	reconnect_invs = hs.remote_invs - s0.remote_invs;
	assert_true(reconnect_invs > 0);

	rw_rq(&rq, false, 0, 8, region, buf);
	rq.flags = NVMEH_RQ_ASK_INV;
	nvmeh_ctrl_stats(e.c, &s0);
	ret = nvmeh_exec(e.c, 1, &rq);
	assert_int_equal(ret, 0);
	if (honoured) {
		/* the data came, the response too: the command succeeded */
		assert_int_equal(rq.error, 0);
		assert_int_equal(rq.status, 0);
	} else {
		assert_int_equal(rq.error, -ECONNABORTED);
	}
	assert_int_equal(nvmeh_ctrl_wait_live(e.c, 5000), 0);
	nvmeh_ctrl_stats(e.c, &hs);
	assert_int_equal(hs.resets, 2);
	/* the reconnect's, and not one for the region's rkey */
	assert_int_equal(hs.remote_invs - s0.remote_invs, reconnect_invs);
	assert_int_equal(hs.bad_invs, honoured ? 1 : 0);
	reg_rw_check(&e, region, buf, 5);
	nv_env_fini(&e); /* the region deregistered by the destroy */
	free(region);
}

static void test_hostile_inv_siw(void **state)
{
	(void)state;
	hostile_inv("siw", true);
}

static void test_hostile_inv_rxe(void **state)
{
	(void)state;
	hostile_inv("rxe", false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_rw_rxe, nv_teardown),
		cmocka_unit_test_teardown(test_rw_siw, nv_teardown),
		cmocka_unit_test_teardown(test_rw_mlx5, nv_teardown),
		cmocka_unit_test_teardown(test_bad_input, nv_teardown),
		cmocka_unit_test_teardown(test_dereg_busy, nv_teardown),
		cmocka_unit_test_teardown(test_after_reset, nv_teardown),
		cmocka_unit_test_teardown(test_hostile_inv_siw, nv_teardown),
		cmocka_unit_test_teardown(test_hostile_inv_rxe, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

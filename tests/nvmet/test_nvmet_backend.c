// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The backends' submit-with-completion (nvme/target/backend.c, io-cmd.c):
 *
 * - a backend that completes later: the tests' delay holds every Read,
 *   Write and Flush of namespace 1 until the test lets it go; the command
 *   has not completed while it is held, completes with success once
 *   released (on the delay's thread, not the capsule's), and the data
 *   read back is what was written;
 * - errors from the backend become the NVMe status: -EIO a Write Fault
 *   or an Unrecovered Read Error, -ENOSPC Capacity Exceeded (DNR), on a
 *   Read, a Write and a Flush;
 * - a slow namespace stalls no other: while namespace 1's commands are
 *   held (by event: the delay counts them), namespace 2's complete on the
 *   other queue and on the same one, and namespace 1's complete only when
 *   released.
 */
#include "nvmet_env.h"
#include "nvmet_int.h"

#include <pthread.h>

#define NV_HELD_MS 600000 /* held until released, in practice */

/* A request whose end is watched. */
struct nv_rq {
	struct nvmeh_request rq;
	int done; /* atomic */
};

static void nv_rq_done(struct nvmeh_request *rq)
{
	struct nv_rq *r = rq->priv;

	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

static bool nv_rq_is_done(struct nv_rq *r)
{
	return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

/* Wait (bounded: 10 s) for @cond; the test fails when it never holds. */
#define nv_wait_for(cond)                                  \
	do {                                               \
		struct timespec ts_ = { 0, 1000 * 1000 };  \
		int i_;                                    \
		for (i_ = 0; i_ < 10000 && !(cond); i_++)  \
			nanosleep(&ts_, NULL);             \
		if (!(cond))                               \
			fail_msg("never came: %s", #cond); \
	} while (0)

static void nv_rq_init(struct nv_rq *r, u8 opcode, u32 nsid, u64 slba, u32 nlb,
		       void *buf, u32 lba)
{
	struct nvmeh_request *rq = &r->rq;

	memset(r, 0, sizeof(*r));
	rq->sqe[offsetof(struct nvme_common_command, opcode)] = opcode;
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	if (opcode != nvme_cmd_flush) {
		nvme_put_le64(
			rq->sqe + offsetof(struct nvme_common_command, cdw10),
			slba);
		nvme_put_le32(
			rq->sqe + offsetof(struct nvme_common_command, cdw12),
			nlb - 1);
		rq->data = buf;
		rq->data_len = nlb * lba;
		rq->write = opcode == nvme_cmd_write;
	}
	rq->done = nv_rq_done;
	rq->priv = r;
}

static void nv_submit(struct nv_env *e, unsigned int qid, struct nv_rq *r)
{
	assert_int_equal(nvmeh_submit(e->c, qid, &r->rq), 0);
}

/* Submit and wait for the end; the NVMe status. */
static u16 nv_exec(struct nv_env *e, unsigned int qid, struct nv_rq *r)
{
	nv_submit(e, qid, r);
	nv_wait_for(nv_rq_is_done(r));
	assert_int_equal(r->rq.error, 0);
	return r->rq.status;
}

/* Namespace @nsid of the target's one subsystem. */
static struct nvmet_ns *nv_ns(struct nv_env *e, u32 nsid)
{
	struct nvmet_subsys *s =
		list_first_entry(&e->t->subsystems, struct nvmet_subsys, entry);

	assert_non_null(s->ns[nsid - 1]);
	return s->ns[nsid - 1];
}

/*
 * The target with namespaces @ns (RAM ones get 4 MiB), the host with two
 * queues and a command timeout longer than any hold.
 */
static void nv_start(struct nv_env *e, const struct nvmet_ns_opts *ns,
		     unsigned int nr_ns)
{
	static struct nvmet_target_opts to;
	unsigned int i;

	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	for (i = 0; i < nr_ns; i++) {
		to.ns[i] = ns[i];
		if (to.ns[i].type == NVMET_BACKEND_RAM && !to.ns[i].size)
			to.ns[i].size = 4u << 20;
	}
	to.hosts = nv_hosts;
	to.nr_hosts = 1;
	nv_env_init(e, "mlx5",
		    &(struct nv_cfg){ .nr_io_queues = 2,
				      .queue_size = 16,
				      .io_timeout_ms = 120000,
				      .topts = &to });
}

/* A write and a read of namespace 1 held, each completing only when let go. */
static void test_later_done(void **state)
{
	static struct nv_env e;
	static u8 wbuf[4096], rbuf[4096];
	struct nvmet_ns_opts ns[1] = { { .type = NVMET_BACKEND_RAM,
					 .test_delay_ms = NV_HELD_MS } };
	struct nvmet_ns *n;
	struct nv_rq r;
	unsigned int i;

	(void)state;
	nv_start(&e, ns, 1);
	n = nv_ns(&e, 1);
	for (i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (u8)(i * 7 + 3);

	nv_rq_init(&r, nvme_cmd_write, 1, 8, 8, wbuf, 512);
	nv_submit(&e, 1, &r);
	nv_wait_for(nvmet_ns_delay_held(n) == 1);
	assert_false(nv_rq_is_done(&r));
	nvmet_ns_delay_release(n, 1);
	nv_wait_for(nv_rq_is_done(&r));
	assert_int_equal(r.rq.error, 0);
	assert_int_equal(r.rq.status, 0);

	memset(rbuf, 0xee, sizeof(rbuf));
	nv_rq_init(&r, nvme_cmd_read, 1, 8, 8, rbuf, 512);
	nv_submit(&e, 2, &r);
	nv_wait_for(nvmet_ns_delay_held(n) == 1);
	assert_false(nv_rq_is_done(&r));
	nvmet_ns_delay_release(n, 1);
	nv_wait_for(nv_rq_is_done(&r));
	assert_int_equal(r.rq.error, 0);
	assert_int_equal(r.rq.status, 0);
	assert_memory_equal(rbuf, wbuf, sizeof(wbuf));

	nv_rq_init(&r, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	nvmet_ns_delay_release(n, 1);
	assert_int_equal(nv_exec(&e, 1, &r), 0);
	assert_int_equal(nvmet_ns_delay_held(n), 0);
	nv_env_fini(&e);
}

/* -EIO and -ENOSPC from the backend, as the NVMe statuses. */
static void test_errors(void **state)
{
	static struct nv_env e;
	static u8 buf[4096];
	struct nvmet_ns_opts ns[2] = {
		{ .type = NVMET_BACKEND_RAM, .test_errno = -EIO },
		{ .type = NVMET_BACKEND_RAM, .test_errno = -ENOSPC },
	};
	struct nv_rq r;

	(void)state;
	nv_start(&e, ns, 2);
	nv_rq_init(&r, nvme_cmd_write, 1, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 1, &r), NVME_SC_WRITE_FAULT);
	nv_rq_init(&r, nvme_cmd_read, 1, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 1, &r), NVME_SC_READ_ERROR);
	nv_rq_init(&r, nvme_cmd_flush, 1, 0, 0, NULL, 512);
	assert_int_equal(nv_exec(&e, 2, &r), NVME_SC_WRITE_FAULT);
	nv_rq_init(&r, nvme_cmd_write, 2, 0, 8, buf, 512);
	assert_int_equal(nv_exec(&e, 2, &r),
			 NVME_SC_CAP_EXCEEDED | NVME_SC_DNR);
	nv_env_fini(&e);
}

#define NV_SLOW 4

/*
 * Namespace 1 holds NV_SLOW writes (queue 1); namespace 2's writes and
 * reads on queue 2 and on queue 1 complete meanwhile, byte for byte.
 */
static void slow_case(const struct nvmet_ns_opts *ns2)
{
	static struct nv_env e;
	static struct nv_rq slow[NV_SLOW];
	static u8 sbuf[NV_SLOW][4096], wbuf[4096], rbuf[4096];
	struct nvmet_ns_opts ns[2] = {
		{ .type = NVMET_BACKEND_RAM, .test_delay_ms = NV_HELD_MS }, *ns2
	};
	struct nvmet_ns *n;
	struct nv_rq r;
	unsigned int i, q;

	nv_start(&e, ns, 2);
	n = nv_ns(&e, 1);
	for (i = 0; i < NV_SLOW; i++) {
		memset(sbuf[i], (int)i + 1, sizeof(sbuf[i]));
		nv_rq_init(&slow[i], nvme_cmd_write, 1, i * 8, 8, sbuf[i], 512);
		nv_submit(&e, 1, &slow[i]);
	}
	nv_wait_for(nvmet_ns_delay_held(n) == NV_SLOW);
	for (q = 2; q >= 1; q--) {
		for (i = 0; i < sizeof(wbuf); i++)
			wbuf[i] = (u8)(i + q * 11);
		nv_rq_init(&r, nvme_cmd_write, 2, q * 8, 8, wbuf, 512);
		assert_int_equal(nv_exec(&e, q, &r), 0);
		nv_rq_init(&r, nvme_cmd_read, 2, q * 8, 8, rbuf, 512);
		assert_int_equal(nv_exec(&e, q, &r), 0);
		assert_memory_equal(rbuf, wbuf, sizeof(wbuf));
	}
	/* namespace 2 went by; namespace 1's are all still held */
	assert_int_equal(nvmet_ns_delay_held(n), NV_SLOW);
	for (i = 0; i < NV_SLOW; i++)
		assert_false(nv_rq_is_done(&slow[i]));
	nvmet_ns_delay_release(n, NV_SLOW);
	for (i = 0; i < NV_SLOW; i++) {
		nv_wait_for(nv_rq_is_done(&slow[i]));
		assert_int_equal(slow[i].rq.error, 0);
		assert_int_equal(slow[i].rq.status, 0);
	}
	for (i = 0; i < NV_SLOW; i++) {
		nv_rq_init(&r, nvme_cmd_read, 1, i * 8, 8, rbuf, 512);
		nvmet_ns_delay_release(n, 1);
		assert_int_equal(nv_exec(&e, 2, &r), 0);
		assert_memory_equal(rbuf, sbuf[i], sizeof(rbuf));
	}
	nv_env_fini(&e);
}

static void test_slow_ns_ram(void **state)
{
	struct nvmet_ns_opts ns2 = { .type = NVMET_BACKEND_RAM };

	(void)state;
	slow_case(&ns2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_later_done, nv_teardown),
		cmocka_unit_test_teardown(test_errors, nv_teardown),
		cmocka_unit_test_teardown(test_slow_ns_ram, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

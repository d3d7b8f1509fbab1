// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * siw's zero-copy transmit (issue 26).  The kernel's siw sends an
 * unsignalled SEND or WRITE of at least a page from the caller's pages and
 * completes it -- and the signalled SEND chained after it -- once TCP holds
 * the pages, before TCP has read them.  The software device's iWARP profile
 * models that (src/soft/soft_zcopy.c); rdmarw's guard (rdmarw_tx_guard,
 * the default) has the device copy such a WR before it completes, as a
 * signalled one is copied, and keeps its completion from the caller.
 *
 * Each case posts the reply shape of an NVMe read -- an unsignalled data
 * WRITE, then a signalled SEND -- sees the SEND's completion, reuses the
 * source buffer at once (as a target returns it to its pool) and then
 * looks at what the peer received:
 * - guarded: the bytes that were in the buffer when the WRITE was posted;
 * - unguarded (the kernel's behaviour): the bytes written after the
 *   completion, which is the corruption the kernel host saw.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <stdlib.h>
#include <string.h>

#define PG 4096u
#define DATA (2 * PG) /* the WRITE */
#define RSP 16u /* the SEND */
#define LEN (DATA + PG) /* each side's buffer: data, then the reply */
#define OLD 0xa5
#define NEW 0x5a

#define ACCESS SOFT_PAIR_ACCESS

/* soft_pair's layout, built step by step: the guard is taken off (as
 * RDMARW_TX_ZCOPY=allow would) between the devices and the QPs, which
 * follow the value they see when they are created. */
struct zc {
	struct soft_pair p;
};

static void zc_init(struct zc *z, const char *profile, bool threaded,
		    bool guard)
{
	struct soft_pair *p = &z->p;
	struct ib_qp_init_attr attr[2];
	int i;

	memset(z, 0, sizeof(*z));
	assert_int_equal(soft_profile_get(profile, &p->env.profile), 0);
	p->env.profile.threaded = threaded;
	assert_int_equal(
		two_hosts_devices(&p->env.hosts, &p->env.profile, NULL, false),
		0);
	p->env.dev[0]->rdmarw_tx_guard = guard;
	for (i = 0; i < 2; i++) {
		assert_int_equal(
			two_hosts_side(&p->env.hosts, i, 256, IB_POLL_DIRECT),
			0);
		attr[i] = (struct ib_qp_init_attr){
			.sq_sig_type = IB_SIGNAL_REQ_WR,
			.cap = { .max_send_wr = 16,
				 .max_recv_wr = 16,
				 .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
	}
	assert_int_equal(two_hosts_qps(&p->env.hosts, attr, true), 0);
	p->len = LEN;
	for (i = 0; i < 2; i++) {
		p->buf[i] = aligned_alloc(PG, LEN);
		assert_non_null(p->buf[i]);
		p->mr[i] = soft_env_reg(&p->env, i, p->buf[i], LEN, ACCESS);
	}
	memset(p->buf[0], OLD, LEN);
	memset(p->buf[1], 0, LEN);
}

static void zc_fini(struct zc *z)
{
	soft_pair_fini(&z->p);
}

/*
 * Side 0: WRITE @len bytes of its buffer to side 1's (unsignalled unless
 * @signal), then SEND the reply (signalled); wait for the SEND's
 * completion only, then overwrite the source.  Side 1: the reply's
 * receive completes; its buffer is returned for checks.
 */
static const u8 *reply(struct zc *z, u32 len, bool signal)
{
	struct soft_pair *p = &z->p;
	struct ib_sge dsge = { .addr = (u64)(uintptr_t)p->buf[0],
			       .length = len,
			       .lkey = p->mr[0]->lkey };
	struct ib_sge rsge = { .addr = (u64)(uintptr_t)(p->buf[0] + DATA),
			       .length = RSP,
			       .lkey = p->mr[0]->lkey };
	struct ib_send_wr send = { .wr_id = 2,
				   .sg_list = &rsge,
				   .num_sge = 1,
				   .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct ib_rdma_wr write = {
		.wr = { .wr_id = 1,
			.next = &send,
			.sg_list = &dsge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = signal ? IB_SEND_SIGNALED : 0 },
		.remote_addr = (u64)(uintptr_t)p->buf[1],
		.rkey = p->mr[1]->rkey,
	};
	const struct ib_send_wr *bad = NULL;

	soft_env_post_recv(p->env.qp[1], 9, p->buf[1] + DATA, RSP,
			   p->mr[1]->lkey);
	assert_int_equal(ib_post_send(p->env.qp[0], &write.wr, &bad), 0);
	if (signal)
		soft_env_expect(p->env.cq[0], 1, IB_WC_SUCCESS,
				IB_WC_RDMA_WRITE);
	/* The SEND's completion, and nothing for the unsignalled WRITE. */
	soft_env_expect(p->env.cq[0], 2, IB_WC_SUCCESS, IB_WC_SEND);
	memset(p->buf[0], NEW, DATA); /* the buffer goes back to its pool */
	soft_env_expect(p->env.cq[1], 9, IB_WC_SUCCESS, IB_WC_RECV);
	soft_env_expect_empty(p->env.cq[0]);
	return p->buf[1];
}

static void assert_all(const u8 *b, u32 len, u8 v)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (b[i] != v)
			fail_msg("byte %u is 0x%02x, not 0x%02x", i, b[i], v);
}

/* ---- the rule's facts ----------------------------------------------------- */

static void test_rule_per_profile(void **state)
{
	static const struct {
		const char *profile;
		u32 min;
	} cases[] = { { "siw", PG }, { "rxe", 0 }, { "mlx5", 0 } };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct soft_pair p;

		soft_pair_init(
			&p,
			&(struct soft_env_cfg){ .profile = cases[i].profile },
			PG, 0);
		assert_int_equal(p.env.dev[0]->rdmarw_tx_zcopy_min,
				 cases[i].min);
		/* guarded by default wherever the device sends zero-copy */
		assert_int_equal(p.env.dev[0]->rdmarw_tx_guard,
				 cases[i].min != 0);
		soft_pair_fini(&p);
	}
}

/* ---- guarded: a completion frees the buffer -------------------------------- */

static void guarded(bool threaded)
{
	struct zc z;
	const u8 *got;

	zc_init(&z, "siw", threaded, true);
	got = reply(&z, DATA, false);
	assert_all(got, DATA, OLD);
	assert_all(got + DATA, RSP, OLD);
	zc_fini(&z);
}

static void test_guarded_inline(void **state)
{
	(void)state;
	guarded(false);
}

static void test_guarded_threaded(void **state)
{
	(void)state;
	guarded(true);
}

/* ---- unguarded: the kernel siw's hole, reproduced --------------------------- */

static void test_unguarded_reads_late(void **state)
{
	struct zc z;
	const u8 *got;

	(void)state;
	zc_init(&z, "siw", false, false);
	got = reply(&z, DATA, false);
	/* what was written after the completion went out */
	assert_all(got, DATA, NEW);
	/* the SEND, signalled, was copied when it was posted */
	assert_all(got + DATA, RSP, OLD);
	zc_fini(&z);
}

/* The rule's edges: one byte under a page, or signalled: copied. */
static void test_unguarded_edges(void **state)
{
	struct zc z;
	const u8 *got;

	(void)state;
	zc_init(&z, "siw", false, false);
	got = reply(&z, PG - 1, false);
	assert_all(got, PG - 1, OLD);
	zc_fini(&z);

	zc_init(&z, "siw", false, false);
	got = reply(&z, DATA, true);
	assert_all(got, DATA, OLD);
	zc_fini(&z);

	zc_init(&z, "siw", false, false);
	got = reply(&z, PG, false); /* exactly a page: zero-copy */
	assert_all(got, PG, NEW);
	zc_fini(&z);
}

/* Not iWARP: a completion frees the buffer, guard or not. */
static void test_unguarded_rxe(void **state)
{
	struct zc z;
	const u8 *got;

	(void)state;
	zc_init(&z, "rxe", false, false);
	got = reply(&z, DATA, false);
	assert_all(got, DATA, OLD);
	zc_fini(&z);
}

/*
 * Held WQEs keep their order: a READ posted behind an unguarded zero-copy
 * WRITE to the same bytes reads what the WRITE placed.
 */
static void test_unguarded_read_after_write(void **state)
{
	struct zc z;
	struct soft_pair *p;
	struct ib_sge wsge, rsge;
	struct ib_rdma_wr rd, wr;
	const struct ib_send_wr *bad = NULL;

	(void)state;
	zc_init(&z, "siw", false, false);
	p = &z.p;
	wsge = (struct ib_sge){ .addr = (u64)(uintptr_t)p->buf[0],
				.length = DATA,
				.lkey = p->mr[0]->lkey };
	rsge = (struct ib_sge){ .addr = (u64)(uintptr_t)(p->buf[0] + DATA),
				.length = PG,
				.lkey = p->mr[0]->lkey };
	rd = (struct ib_rdma_wr){
		.wr = { .wr_id = 4,
			.sg_list = &rsge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (u64)(uintptr_t)p->buf[1],
		.rkey = p->mr[1]->rkey,
	};
	wr = (struct ib_rdma_wr){
		.wr = { .wr_id = 3,
			.next = &rd.wr,
			.sg_list = &wsge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE },
		.remote_addr = (u64)(uintptr_t)p->buf[1],
		.rkey = p->mr[1]->rkey,
	};
	memset(p->buf[0] + DATA, 0, PG);
	assert_int_equal(ib_post_send(p->env.qp[0], &wr.wr, &bad), 0);
	soft_env_expect(p->env.cq[0], 4, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	assert_all(p->buf[1], DATA, OLD);
	assert_all(p->buf[0] + DATA, PG, OLD);
	zc_fini(&z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_per_profile),
		cmocka_unit_test(test_guarded_inline),
		cmocka_unit_test(test_guarded_threaded),
		cmocka_unit_test(test_unguarded_reads_late),
		cmocka_unit_test(test_unguarded_edges),
		cmocka_unit_test(test_unguarded_rxe),
		cmocka_unit_test(test_unguarded_read_after_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The software device's queues and states under races (issue 11): QP
 * numbers unique among live QPs and soft_qp_connect() linking exactly the
 * QPs it is handed; every receive completing exactly once when the QP
 * moves to ERR while receives (and sends) are posted; ib_modify_qp() to
 * ERR as a barrier (nothing executes after it returns, everything queued
 * is flushed, memory and MR state unchanged), also from a completion
 * handler running on the executor.  Each case runs on mlx5, rxe and siw,
 * inline and threaded where it applies.
 *
 * The race of the move to ERR is made deterministic with the software
 * device's internal test hook (soft_loc.h), which runs code at the point
 * where rdmarw__soft_qp_to_err() is about to lock the Receive Queue.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"
#include "soft/soft_loc.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static const char *const profiles[] = { "mlx5", "rxe", "siw" };

#define NPROF (sizeof(profiles) / sizeof(profiles[0]))

static struct ib_qp *make_qp(struct ib_pd *pd, struct ib_cq *cq)
{
	struct ib_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = { .max_send_wr = 8,
			 .max_recv_wr = 8,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ib_create_qp(pd, &qa);
}

static struct soft_fabric *fab(struct soft_env *env)
{
	return env->fabric;
}

/* ---- A: QP numbers ------------------------------------------------------ */

static void qpn_case(const char *profile, bool threaded)
{
	struct soft_env_cfg cfg = { .profile = profile,
				    .threaded = threaded,
				    .no_connect = true };
	struct soft_env env;
	struct ib_qp *b, *c, *d;
	struct soft_fabric *f;
	u32 a_num;

	soft_env_init(&env, &cfg);
	f = fab(&env);
	a_num = env.qp[0]->qp_num;
	/* 2^24 creations later the counter comes back to qp[0]'s number. */
	soft_mutex_lock(&f->lock);
	f->next_qpn = a_num + 0x1000000u;
	soft_mutex_unlock(&f->lock);
	b = make_qp(env.pd[1], env.cq[1]);
	assert_false(IS_ERR(b));
	assert_int_not_equal(b->qp_num, a_num);
	assert_int_not_equal(b->qp_num, env.qp[1]->qp_num);
	assert_true(b->qp_num >= SOFT_QPN_FIRST && b->qp_num <= SOFT_QPN_LAST);

	/* Exhaust a narrowed space: the next creation fails cleanly. */
	soft_mutex_lock(&f->lock);
	f->qpn_last = SOFT_QPN_FIRST + 3; /* 4 numbers, 3 taken */
	f->next_qpn = SOFT_QPN_FIRST;
	soft_mutex_unlock(&f->lock);
	assert_int_equal(ib_destroy_qp(b), 0);
	b = make_qp(env.pd[1], env.cq[1]);
	assert_false(IS_ERR(b));
	c = make_qp(env.pd[1], env.cq[1]);
	assert_false(IS_ERR(c));
	d = make_qp(env.pd[1], env.cq[1]);
	assert_true(IS_ERR(d));
	assert_int_equal(PTR_ERR(d), -ENOMEM);
	assert_int_not_equal(b->qp_num, c->qp_num);
	/* A number freed is taken again. */
	a_num = c->qp_num;
	assert_int_equal(ib_destroy_qp(c), 0);
	c = make_qp(env.pd[1], env.cq[1]);
	assert_false(IS_ERR(c));
	assert_int_equal(c->qp_num, a_num);
	assert_int_equal(ib_destroy_qp(c), 0);
	assert_int_equal(ib_destroy_qp(b), 0);
	soft_mutex_lock(&f->lock);
	f->qpn_last = SOFT_QPN_LAST;
	soft_mutex_unlock(&f->lock);
	soft_env_fini(&env);
}

static void test_qpn_unique(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		qpn_case(profiles[i], false);
		qpn_case(profiles[i], true);
	}
}

/*
 * soft_qp_connect(c, d) while a newer QP on c's own device (another PD)
 * carries d's number: the WRITE must land in d's memory.
 */
static void connect_case(const char *profile, bool threaded)
{
	struct soft_env_cfg cfg = { .profile = profile,
				    .threaded = threaded,
				    .no_connect = true };
	struct soft_pair p;
	struct ib_pd *pd_e;
	struct ib_qp *e;
	u32 e_num;

	soft_pair_init(&p, &cfg, 4096, 0x20);
	pd_e = ib_alloc_pd(p.env.dev[0], 0);
	assert_false(IS_ERR(pd_e));
	e = make_qp(pd_e, p.env.cq[0]);
	assert_false(IS_ERR(e));
	e_num = e->qp_num;
	e->qp_num = p.env.qp[1]->qp_num; /* what the 24-bit wrap did */
	assert_int_equal(soft_qp_connect(p.env.qp[0], p.env.qp[1]), 0);
	assert_ptr_equal(to_sqp(p.env.qp[0])->peer, to_sqp(p.env.qp[1]));
	assert_ptr_equal(to_sqp(p.env.qp[1])->peer, to_sqp(p.env.qp[0]));
	assert_int_equal(soft_env_rdma(p.env.qp[0], IB_WR_RDMA_WRITE, 7,
				       p.buf[0], 64, p.mr[0]->lkey,
				       (u64)(uintptr_t)p.buf[1], p.mr[1]->rkey),
			 0);
	soft_env_expect(p.env.cq[0], 7, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	assert_int_equal(p.buf[1][0], 0x20);
	assert_int_equal(p.buf[1][63], 0x20);
	e->qp_num = e_num;
	assert_int_equal(ib_destroy_qp(e), 0);
	assert_int_equal(ib_dealloc_pd(pd_e), 0);
	soft_pair_fini(&p);
}

static void test_connect_exact(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		connect_case(profiles[i], false);
		connect_case(profiles[i], true);
	}
}

/* ---- B: a post racing the move to ERR ----------------------------------- */

struct race {
	struct soft_qp *target;
	int armed;
	struct ib_qp *qp;
	struct ib_recv_wr rwr;
	struct ib_rdma_wr swr;
	struct ib_sge rsge, ssge;
	int rret, sret;
};

static struct race race;

/* In the gap: post a receive and a WRITE, as the ULP's thread would. */
static int race_hook(enum soft_test_point tp, struct soft_qp *qp)
{
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *sbad;

	if (tp != SOFT_TP_TO_ERR || qp != race.target ||
	    !__atomic_exchange_n(&race.armed, 0, __ATOMIC_ACQ_REL))
		return 0;
	race.rret = ib_post_recv(race.qp, &race.rwr, &rbad);
	race.sret = ib_post_send(race.qp, &race.swr.wr, &sbad);
	return 0;
}

static void recv_race_case(const char *profile, bool threaded)
{
	struct soft_env_cfg cfg = { .profile = profile, .threaded = threaded };
	int seen_recv[5] = { 0 }, seen_send[2] = { 0 };
	struct ib_wc wc[8];
	struct soft_pair p;
	u64 id;
	int i;

	soft_pair_init(&p, &cfg, 4096, 0x30);
	for (id = 1; id <= 3; id++)
		soft_env_post_recv(p.env.qp[0], id, p.buf[0] + 1024, 256,
				   p.mr[0]->lkey);
	memset(&race, 0, sizeof(race));
	race.target = to_sqp(p.env.qp[0]);
	race.qp = p.env.qp[0];
	race.rsge = (struct ib_sge){ .addr = (u64)(uintptr_t)p.buf[0] + 2048,
				     .length = 256,
				     .lkey = p.mr[0]->lkey };
	race.rwr = (struct ib_recv_wr){ .wr_id = 4,
					.sg_list = &race.rsge,
					.num_sge = 1 };
	race.ssge = (struct ib_sge){ .addr = (u64)(uintptr_t)p.buf[0],
				     .length = 64,
				     .lkey = p.mr[0]->lkey };
	race.swr = (struct ib_rdma_wr){
		.wr = { .wr_id = 101,
			.opcode = IB_WR_RDMA_WRITE,
			.sg_list = &race.ssge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (u64)(uintptr_t)p.buf[1] + 512,
		.rkey = p.mr[1]->rkey,
	};
	race.armed = 1;
	__atomic_store_n(&rdmarw__soft_test_hook, race_hook, __ATOMIC_RELEASE);
	/* A bad lkey: the executor moves qp[0] to ERR. */
	assert_int_equal(soft_env_rdma(p.env.qp[0], IB_WR_RDMA_WRITE, 100,
				       p.buf[0], 64, 0x00dead00u,
				       (u64)(uintptr_t)p.buf[1], p.mr[1]->rkey),
			 0);
	soft_env_poll(p.env.cq[0], 6, wc);
	__atomic_store_n(&rdmarw__soft_test_hook, NULL, __ATOMIC_RELEASE);
	assert_int_equal(race.armed, 0);
	assert_int_equal(race.rret, 0);
	assert_int_equal(race.sret, 0);
	for (i = 0; i < 6; i++) {
		if (wc[i].opcode == IB_WC_RECV) {
			assert_true(wc[i].wr_id >= 1 && wc[i].wr_id <= 4);
			assert_int_equal(wc[i].status, IB_WC_WR_FLUSH_ERR);
			seen_recv[wc[i].wr_id]++;
		} else {
			assert_true(wc[i].wr_id == 100 || wc[i].wr_id == 101);
			assert_int_equal(wc[i].status,
					 wc[i].wr_id == 100 ?
						 IB_WC_LOC_PROT_ERR :
						 IB_WC_WR_FLUSH_ERR);
			seen_send[wc[i].wr_id - 100]++;
		}
	}
	for (i = 1; i <= 4; i++)
		assert_int_equal(seen_recv[i], 1);
	assert_int_equal(seen_send[0], 1);
	assert_int_equal(seen_send[1], 1);
	/* Nothing outstanding, nothing more to come; no byte moved. */
	assert_true(to_sqp(p.env.qp[0])->rq_cons ==
		    to_sqp(p.env.qp[0])->rq_prod);
	for (i = 0; threaded && i < 1000; i++)
		sched_yield();
	soft_env_expect_empty(p.env.cq[0]);
	/* A drain returns, and still nothing is outstanding. */
	assert_int_equal(ib_drain_qp(p.env.qp[0]), 0);
	assert_true(to_sqp(p.env.qp[0])->rq_cons ==
		    to_sqp(p.env.qp[0])->rq_prod);
	soft_env_expect_empty(p.env.cq[0]);
	for (i = 0; i < 4096; i++)
		assert_int_equal(p.buf[1][i], 0x31);
	soft_pair_fini(&p);
}

static void test_recv_flush_race(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		recv_race_case(profiles[i], false);
		recv_race_case(profiles[i], true);
	}
}

/*
 * The same race without the hook, for ThreadSanitizer: on a threaded
 * device the progress thread moves qp[0] to ERR (a bad lkey) while this
 * thread keeps posting receives; each receive completes exactly once.
 */
#define STRESS_ROUNDS 40
#define STRESS_RECVS 48

static void recv_stress_case(const char *profile)
{
	struct soft_env_cfg cfg = {
		.profile = profile,
		.threaded = true,
		.cap = { .max_recv_wr = STRESS_RECVS, .max_send_wr = 4 },
		.no_connect = true,
	};
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	int seen[STRESS_RECVS], round, i, got, want;
	struct ib_wc wc[16];
	struct soft_pair p;
	long spins;

	soft_pair_init(&p, &cfg, 4096, 0x10);
	for (round = 0; round < STRESS_ROUNDS; round++) {
		assert_int_equal(soft_qp_connect(p.env.qp[0], p.env.qp[1]), 0);
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < STRESS_RECVS / 2; i++)
			soft_env_post_recv(p.env.qp[0], (u64)i, p.buf[0] + 2048,
					   64, p.mr[0]->lkey);
		assert_int_equal(soft_env_rdma(p.env.qp[0], IB_WR_RDMA_WRITE,
					       1000, p.buf[0], 64, 0x00dead00u,
					       (u64)(uintptr_t)p.buf[1],
					       p.mr[1]->rkey),
				 0);
		for (; i < STRESS_RECVS; i++) {
			soft_env_post_recv(p.env.qp[0], (u64)i, p.buf[0] + 2048,
					   64, p.mr[0]->lkey);
			if (i % 4 == 0)
				sched_yield();
		}
		/* Every receive and the failed WRITE, each once. */
		want = STRESS_RECVS + 1;
		for (got = 0, spins = 0; got < want;) {
			int k, n = ib_poll_cq(p.env.cq[0], 16, wc);

			for (k = 0; k < n; k++) {
				if (wc[k].opcode != IB_WC_RECV) {
					assert_int_equal(wc[k].wr_id, 1000);
					continue;
				}
				assert_true(wc[k].wr_id < STRESS_RECVS);
				assert_int_equal(wc[k].status,
						 IB_WC_WR_FLUSH_ERR);
				seen[wc[k].wr_id]++;
			}
			got += n;
			if (!n) {
				assert_true(++spins < 100000000L);
				sched_yield();
			}
		}
		for (i = 0; i < STRESS_RECVS; i++)
			assert_int_equal(seen[i], 1);
		for (i = 0; i < 200; i++)
			sched_yield();
		soft_env_expect_empty(p.env.cq[0]);
		assert_int_equal(ib_modify_qp(p.env.qp[0], &reset, IB_QP_STATE),
				 0);
		assert_int_equal(ib_modify_qp(p.env.qp[1], &reset, IB_QP_STATE),
				 0);
	}
	soft_pair_fini(&p);
}

static void test_recv_flush_stress(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++)
		recv_stress_case(profiles[i]);
}

/* ---- C: modify to ERR is a barrier -------------------------------------- */

#define CHAIN 192
#define SLOT 16

static struct ib_qp *modify_err(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	assert_int_equal(ib_modify_qp(qp, &attr, IB_QP_STATE), 0);
	return qp;
}

static struct soft_fault_stats fstats(struct ib_qp *qp)
{
	struct soft_fault_stats s;

	assert_int_equal(soft_fault_qp_stats(qp, &s), 0);
	return s;
}

/*
 * A chain: a REG_MR of @mr, then alternately WRITEs (buf0 slot i -> buf1
 * slot i) and READs (buf1 slot i -> buf0 second half slot i), all
 * signaled, with a stall before WR @stall_at.  Then modify to ERR.
 */
static void barrier_round(struct soft_pair *p, struct ib_mr *mr, int stall_at)
{
	static struct ib_rdma_wr wr[CHAIN];
	static struct ib_sge sge[CHAIN];
	struct soft_fault_rule r = { .type = SOFT_FAULT_STALL,
				     .nth = (u64)stall_at + 1 };
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 1000,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc[CHAIN + 1];
	u8 *snap0, *snap1;
	int i, n = 0, got, ok = 0, flushed = 0;
	size_t half = p->len / 2;

	memset(p->buf[0], 0x41, half);
	memset(p->buf[0] + half, 0, half);
	memset(p->buf[1], 0x52, p->len);
	assert_int_equal(soft_fault_arm_qp(p->env.qp[0], &r), 0);
	reg.key = mr->rkey;
	for (i = 0; i < CHAIN; i++) {
		bool write = i % 2 == 0;

		sge[i] = (struct ib_sge){
			.addr = (u64)(uintptr_t)p->buf[0] + (write ? 0 : half) +
				(u64)i * SLOT,
			.length = SLOT,
			.lkey = p->mr[0]->lkey,
		};
		wr[i] = (struct ib_rdma_wr){
			.wr = { .wr_id = (u64)i,
				.opcode = write ? IB_WR_RDMA_WRITE :
						  IB_WR_RDMA_READ,
				.sg_list = &sge[i],
				.num_sge = 1,
				.send_flags = IB_SEND_SIGNALED,
				.next = i + 1 < CHAIN ? &wr[i + 1].wr : NULL },
			.remote_addr =
				(u64)(uintptr_t)p->buf[1] + (u64)i * SLOT,
			.rkey = p->mr[1]->rkey,
		};
	}
	/* The REG_MR sits just behind the stall. */
	reg.wr.next = &wr[stall_at].wr;
	if (stall_at)
		wr[stall_at - 1].wr.next = &reg.wr;
	assert_int_equal(ib_post_send(p->env.qp[0],
				      stall_at ? &wr[0].wr : &reg.wr, &bad),
			 0);
	/* The first stall_at WRs execute; then the queue waits. */
	while (!fstats(p->env.qp[0]).stalled)
		sched_yield();
	modify_err(p->env.qp[0]);
	/* Returned: every WR has completed, once, and nothing moves. */
	got = ib_poll_cq(p->env.cq[0], CHAIN + 1, wc);
	snap0 = malloc(p->len);
	snap1 = malloc(p->len);
	assert_non_null(snap0);
	assert_non_null(snap1);
	memcpy(snap0, p->buf[0], p->len);
	memcpy(snap1, p->buf[1], p->len);
	assert_int_equal(got, CHAIN + 1);
	for (i = 0; i < got; i++) {
		if (wc[i].status == IB_WC_SUCCESS) {
			assert_true(wc[i].wr_id < (u64)stall_at);
			ok++;
		} else {
			assert_int_equal(wc[i].status, IB_WC_WR_FLUSH_ERR);
			assert_true(wc[i].wr_id >= (u64)stall_at);
			flushed++;
		}
		n++;
	}
	assert_int_equal(ok, stall_at);
	assert_int_equal(flushed, CHAIN + 1 - stall_at);
	/* The REG_MR did not register. */
	soft_br_write_lock(&to_sdev(p->env.dev[0])->fabric->mem_lock);
	assert_int_equal(to_smr(mr)->state, SOFT_MR_FREE);
	soft_br_write_unlock(&to_sdev(p->env.dev[0])->fabric->mem_lock);
	for (i = 0; i < 2000; i++)
		sched_yield();
	soft_env_expect_empty(p->env.cq[0]);
	assert_memory_equal(snap0, p->buf[0], p->len);
	assert_memory_equal(snap1, p->buf[1], p->len);
	/* Flushed READs did not land, flushed WRITEs did not either. */
	for (i = stall_at; i < CHAIN; i++) {
		u8 want = i % 2 == 0 ? 0x52 : 0;
		const u8 *at = i % 2 == 0 ? p->buf[1] + (size_t)i * SLOT :
					    p->buf[0] + half + (size_t)i * SLOT;

		assert_int_equal(at[0], want);
		assert_int_equal(at[SLOT - 1], want);
	}
	free(snap0);
	free(snap1);
	assert_int_equal(soft_fault_clear_qp(p->env.qp[0]), 0);
	(void)n;
}

static void barrier_case(const char *profile, bool threaded)
{
	struct soft_env_cfg cfg = {
		.profile = profile,
		.threaded = threaded,
		.cap = { .max_send_wr = CHAIN + 1, .max_recv_wr = 4 },
		.cqe = 2 * CHAIN + 8,
	};
	struct scatterlist sg;
	struct soft_pair p;
	struct ib_mr *mr;
	int round, stalls[] = { 0, 1, 2, 7 };
	u8 *page = aligned_alloc(4096, 4096);

	assert_non_null(page);
	for (round = 0; round < 4; round++) {
		soft_pair_init(&p, &cfg, 2 * CHAIN * SLOT, 0);
		mr = ib_alloc_mr(p.env.pd[0], IB_MR_TYPE_MEM_REG, 1);
		assert_false(IS_ERR(mr));
		sg_init_table(&sg, 1);
		sg_set_buf(&sg, page, 4096);
		sg.dma_address = (u64)(uintptr_t)page;
		sg.dma_length = 4096;
		assert_int_equal(ib_map_mr_sg(mr, &sg, 1, NULL, 4096), 1);
		barrier_round(&p, mr, stalls[round]);
		assert_int_equal(ib_dereg_mr(mr), 0);
		soft_pair_fini(&p);
	}
	free(page);
}

static void test_err_barrier(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		barrier_case(profiles[i], false);
		barrier_case(profiles[i], true);
	}
}

/*
 * Modify to ERR from a completion handler run by the executor itself (an
 * armed CQ): no deadlock, the WR being completed has moved its bytes, the
 * rest flushes before any of it executes.
 */
static struct ib_qp *handler_qp;
static int handler_calls;

static void err_handler(struct ib_cq *cq, void *ctx)
{
	(void)cq;
	(void)ctx;
	if (handler_calls++ == 0)
		modify_err(handler_qp);
}

static void handler_case(const char *profile, bool threaded)
{
	struct soft_env_cfg cfg = {
		.profile = profile,
		.threaded = threaded,
		.cap = { .max_send_wr = 32, .max_recv_wr = 4 },
	};
	struct ib_rdma_wr wr[16];
	struct ib_sge sge[16];
	struct ib_wc wc[16];
	struct soft_pair p;
	int i;

	soft_pair_init(&p, &cfg, 16 * SLOT, 0x60);
	handler_qp = p.env.qp[0];
	handler_calls = 0;
	p.env.cq[0]->comp_handler = err_handler;
	assert_int_equal(ib_req_notify_cq(p.env.cq[0], IB_CQ_NEXT_COMP), 0);
	for (i = 0; i < 16; i++) {
		sge[i] = (struct ib_sge){ .addr = (u64)(uintptr_t)p.buf[0] +
						  (u64)i * SLOT,
					  .length = SLOT,
					  .lkey = p.mr[0]->lkey };
		wr[i] = (struct ib_rdma_wr){
			.wr = { .wr_id = (u64)i,
				.opcode = IB_WR_RDMA_WRITE,
				.sg_list = &sge[i],
				.num_sge = 1,
				.send_flags = IB_SEND_SIGNALED,
				.next = i + 1 < 16 ? &wr[i + 1].wr : NULL },
			.remote_addr = (u64)(uintptr_t)p.buf[1] + (u64)i * SLOT,
			.rkey = p.mr[1]->rkey,
		};
	}
	assert_int_equal(ib_post_send(p.env.qp[0], &wr[0].wr, NULL), 0);
	soft_env_poll(p.env.cq[0], 16, wc);
	assert_int_equal(wc[0].wr_id, 0);
	assert_int_equal(wc[0].status, IB_WC_SUCCESS);
	for (i = 1; i < 16; i++) {
		assert_int_equal(wc[i].wr_id, (u64)i);
		assert_int_equal(wc[i].status, IB_WC_WR_FLUSH_ERR);
	}
	assert_int_equal(p.buf[1][0], 0x60);
	for (i = SLOT; i < 16 * SLOT; i++)
		assert_int_equal(p.buf[1][i], 0x61);
	assert_int_equal(soft_env_state(p.env.qp[0]), IB_QPS_ERR);
	p.env.cq[0]->comp_handler = NULL;
	soft_pair_fini(&p);
}

static void test_err_from_handler(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		handler_case(profiles[i], false);
		handler_case(profiles[i], true);
	}
}

/*
 * From another QP's executor: qp[0]'s completion handler (run by its
 * executor) moves qp[1], whose stalled queue holds four WRs, to ERR.  The
 * role of qp[1] is free, so the four flush at once; nothing deadlocks.
 */
static struct ib_qp *other_qp;
static int other_calls;

static void other_handler(struct ib_cq *cq, void *ctx)
{
	(void)cq;
	(void)ctx;
	if (other_calls++ == 0)
		modify_err(other_qp);
}

static void other_case(const char *profile, bool threaded)
{
	struct soft_env_cfg cfg = { .profile = profile, .threaded = threaded };
	struct soft_fault_rule r = { .type = SOFT_FAULT_STALL, .nth = 1 };
	struct ib_rdma_wr wr[4];
	struct ib_sge sge[4];
	struct ib_wc wc[4];
	struct soft_pair p;
	int i;

	soft_pair_init(&p, &cfg, 4096, 0x70);
	assert_int_equal(soft_fault_arm_qp(p.env.qp[1], &r), 0);
	for (i = 0; i < 4; i++) {
		sge[i] = (struct ib_sge){ .addr = (u64)(uintptr_t)p.buf[1] +
						  (u64)i * SLOT,
					  .length = SLOT,
					  .lkey = p.mr[1]->lkey };
		wr[i] = (struct ib_rdma_wr){
			.wr = { .wr_id = (u64)i,
				.opcode = IB_WR_RDMA_WRITE,
				.sg_list = &sge[i],
				.num_sge = 1,
				.send_flags = IB_SEND_SIGNALED,
				.next = i + 1 < 4 ? &wr[i + 1].wr : NULL },
			.remote_addr = (u64)(uintptr_t)p.buf[0] + (u64)i * SLOT,
			.rkey = p.mr[0]->rkey,
		};
	}
	assert_int_equal(ib_post_send(p.env.qp[1], &wr[0].wr, NULL), 0);
	while (!fstats(p.env.qp[1]).stalled)
		sched_yield();
	other_qp = p.env.qp[1];
	other_calls = 0;
	p.env.cq[0]->comp_handler = other_handler;
	assert_int_equal(ib_req_notify_cq(p.env.cq[0], IB_CQ_NEXT_COMP), 0);
	assert_int_equal(soft_env_rdma(p.env.qp[0], IB_WR_RDMA_WRITE, 50,
				       p.buf[0] + 2048, 64, p.mr[0]->lkey,
				       (u64)(uintptr_t)p.buf[1] + 2048,
				       p.mr[1]->rkey),
			 0);
	soft_env_expect(p.env.cq[0], 50, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	soft_env_poll(p.env.cq[1], 4, wc);
	for (i = 0; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, (u64)i);
		assert_int_equal(wc[i].status, IB_WC_WR_FLUSH_ERR);
	}
	for (i = 0; i < 4 * SLOT; i++)
		assert_int_equal(p.buf[0][i], 0x70);
	assert_int_equal(other_calls, 1);
	p.env.cq[0]->comp_handler = NULL;
	assert_int_equal(soft_fault_clear_qp(p.env.qp[1]), 0);
	soft_pair_fini(&p);
}

static void test_err_from_other_executor(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NPROF; i++) {
		other_case(profiles[i], false);
		other_case(profiles[i], true);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qpn_unique),
		cmocka_unit_test(test_connect_exact),
		cmocka_unit_test(test_recv_flush_race),
		cmocka_unit_test(test_recv_flush_stress),
		cmocka_unit_test(test_err_barrier),
		cmocka_unit_test(test_err_from_handler),
		cmocka_unit_test(test_err_from_other_executor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

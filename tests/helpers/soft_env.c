// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The software-device test fixture (see soft_env.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "helpers/soft_env.h"

#include <sched.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

static u32 cap_or(u32 v, u32 def, int limit)
{
	if (!v)
		v = def;
	return v > (u32)limit ? (u32)limit : v;
}

static void make_profile(struct soft_env *env, const struct soft_env_cfg *cfg)
{
	if (cfg->custom)
		env->profile = *cfg->custom;
	else
		assert_int_equal(
			soft_profile_get(cfg->profile ? cfg->profile : "rxe",
					 &env->profile),
			0);
	if (cfg->threaded)
		env->profile.threaded = true;
	if (cfg->iommu)
		env->profile.iommu = true;
}

/* The two hosts from tools/common/two_hosts.c, sized as @cfg says. */
void soft_env_init(struct soft_env *env, const struct soft_env_cfg *cfg)
{
	static const struct soft_env_cfg defaults;
	const struct ib_device_attr *a;
	struct two_hosts_cfg hc = { 0 };
	int side, ret;

	if (!cfg)
		cfg = &defaults;
	memset(env, 0, sizeof(*env));
	make_profile(env, cfg);
	a = &env->profile.attrs;
	hc.profile = &env->profile;
	hc.loopback = cfg->loopback;
	hc.no_connect = cfg->no_connect;
	for (side = 0; side < 2; side++) {
		struct ib_qp_init_attr *qa = &hc.attr[side];

		hc.cqe[side] = cfg->cqe;
		qa->sq_sig_type =
			cfg->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
		qa->cap.max_send_wr =
			cap_or(cfg->cap.max_send_wr, 64, a->max_qp_wr);
		qa->cap.max_recv_wr =
			cap_or(cfg->cap.max_recv_wr, 64, a->max_qp_wr);
		qa->cap.max_send_sge =
			cap_or(cfg->cap.max_send_sge, 4, a->max_send_sge);
		qa->cap.max_recv_sge =
			cap_or(cfg->cap.max_recv_sge, 4, a->max_recv_sge);
		qa->cap.max_rdma_ctxs = cfg->cap.max_rdma_ctxs;
	}
	ret = two_hosts_open(&env->hosts, &hc);
	if (ret)
		fail_msg("%s: %d", env->hosts.failed, ret);
}

/* env->qp and the others are env->hosts' members under their names */
_Static_assert(offsetof(struct soft_env, qp) ==
		       offsetof(struct soft_env, hosts.qp),
	       "soft_env mirrors struct two_hosts");

static void assert_dev_clean(struct ib_device *dev)
{
	struct soft_stats st;

	assert_int_equal(soft_device_stats(dev, &st), 0);
	assert_int_equal(st.mrs, 0);
	assert_int_equal(st.qps, 0);
	assert_int_equal(st.iova_ranges, 0);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
}

void soft_env_fini(struct soft_env *env)
{
	assert_int_equal(two_hosts_close_objects(&env->hosts), 0);
	assert_dev_clean(env->dev[0]);
	if (env->dev[1] != env->dev[0])
		assert_dev_clean(env->dev[1]);
	assert_int_equal(two_hosts_close(&env->hosts), 0);
	memset(env, 0, sizeof(*env));
}

struct ib_mr *soft_env_reg(struct soft_env *env, int side, void *buf,
			   size_t len, int access)
{
	struct ib_mr *mr = ib_reg_user_mr(env->pd[side], (uintptr_t)buf, len,
					  (uintptr_t)buf, access);

	assert_false(IS_ERR(mr));
	return mr;
}

void soft_env_dereg(struct ib_mr *mr)
{
	assert_int_equal(ib_dereg_mr(mr), 0);
}

void soft_pair_init(struct soft_pair *p, const struct soft_env_cfg *cfg,
		    size_t len, int fill)
{
	int i;

	soft_env_init(&p->env, cfg);
	p->len = len;
	for (i = 0; i < 2; i++) {
		p->buf[i] = malloc(len);
		assert_non_null(p->buf[i]);
		memset(p->buf[i], fill < 0 ? 0 : fill + i, len);
		p->mr[i] = soft_env_reg(&p->env, i, p->buf[i], len,
					SOFT_PAIR_ACCESS);
	}
}

void soft_pair_fini(struct soft_pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		soft_env_dereg(p->mr[i]);
		free(p->buf[i]);
	}
	soft_env_fini(&p->env);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void soft_env_poll(struct ib_cq *cq, int n, struct ib_wc *wc)
{
	struct soft_profile p;
	double start = now_s();
	struct ib_wc extra;
	int got = 0, r;

	assert_int_equal(soft_device_profile(cq->device, &p), 0);
	while (got < n) {
		r = ib_poll_cq(cq, n - got, wc + got);
		assert_true(r >= 0);
		got += r;
		if (r)
			continue;
		/* Inline execution: everything is there already (a TCP
		 * device's thread delivers what comes from the wire). */
		assert_true(p.threaded || p.tcp);
		assert_true(now_s() - start < 60.0); /* hang guard only */
		sched_yield();
	}
	if (!p.threaded && !p.tcp)
		assert_int_equal(ib_poll_cq(cq, 1, &extra), 0);
}

void soft_env_expect(struct ib_cq *cq, u64 wr_id, enum ib_wc_status status,
		     enum ib_wc_opcode opcode)
{
	struct ib_wc wc;
	struct soft_profile p;
	double start = now_s();
	int r;

	assert_int_equal(soft_device_profile(cq->device, &p), 0);
	while ((r = ib_poll_cq(cq, 1, &wc)) == 0) {
		assert_true(p.threaded || p.tcp);
		assert_true(now_s() - start < 60.0);
		sched_yield();
	}
	assert_int_equal(r, 1);
	assert_int_equal(wc.wr_id, wr_id);
	if (wc.status != status)
		fail_msg("wr_id %llu: status %s, expected %s",
			 (unsigned long long)wr_id, ib_wc_status_msg(wc.status),
			 ib_wc_status_msg(status));
	assert_int_equal(wc.opcode, opcode);
}

void soft_env_expect_empty(struct ib_cq *cq)
{
	struct ib_wc wc;

	assert_int_equal(ib_poll_cq(cq, 1, &wc), 0);
}

enum ib_qp_state soft_env_state(struct ib_qp *qp)
{
	struct ib_qp_attr attr;

	assert_int_equal(ib_query_qp(qp, &attr, 0, NULL), 0);
	return attr.qp_state;
}

void soft_env_post_recv(struct ib_qp *qp, u64 wr_id, void *buf, u32 len,
			u32 lkey)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf,
			      .length = len,
			      .lkey = lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1 };

	assert_int_equal(ib_post_recv(qp, &wr, NULL), 0);
}

int soft_env_rdma(struct ib_qp *qp, enum ib_wr_opcode opcode, u64 wr_id,
		  void *buf, u32 len, u32 lkey, u64 raddr, u32 rkey)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf,
			      .length = len,
			      .lkey = lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

int soft_env_send(struct ib_qp *qp, u64 wr_id, void *buf, u32 len, u32 lkey)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf,
			      .length = len,
			      .lkey = lkey };
	struct ib_send_wr wr = { .wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };

	return ib_post_send(qp, &wr, NULL);
}

u64 soft_env_rand(u64 *state)
{
	u64 x = *state ? *state : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

bool soft_env_past(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec &&
		now.tv_nsec >= deadline->tv_nsec);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Admission before resources (issue 27): a connection that has sent no
 * Connect holds no data-buffer pool and no MR (they come with the install
 * hook, once a Connect is valid), only the receive buffer and response
 * slots its Connect needs; the target bounds such connections per host
 * address and in all (rejecting more with the NVMe/RDMA status "no
 * resources"), and closes one that sends no Connect in time (3 s here;
 * the waits on it are bounded, not measured).  (One R/W
 * context, an MR on iWARP, is set up with the QP for the Connect's data.)  Measured
 * with the target's own accounting (buf_bytes, pool_bytes, unadmitted)
 * and the target device's MR count, not with the process's RSS.
 */
#include "nvmet_env.h"

#include <pthread.h>

#define NR_HALF 24

/* A host queue connected by rdma_cm that never sends a capsule. */
struct half {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	pthread_mutex_t m;
	pthread_cond_t c;
	bool resolved, routed, established, rejected, disconnected, failed;
	u16 rej_sts;
};

static int half_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct half *h = id->context;
	const u8 *p = ev->param.conn.private_data;

	pthread_mutex_lock(&h->m);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		h->resolved = true;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		h->routed = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		h->established = true;
		break;
	case RDMA_CM_EVENT_REJECTED:
		h->rejected = true;
		if (p && ev->param.conn.private_data_len >= 4)
			h->rej_sts = (u16)(p[2] | p[3] << 8);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		h->disconnected = true;
		break;
	default:
		h->failed = true;
		break;
	}
	pthread_cond_broadcast(&h->c);
	pthread_mutex_unlock(&h->m);
	return 0;
}

/*
 * Wait (10 s at most: a bound, not a measure) until *@flag is set, or the
 * connection was rejected or failed.
 */
static bool half_wait(struct half *h, const bool *flag)
{
	struct timespec ts;
	bool ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&h->m);
	while (!*flag && !h->failed && !h->rejected &&
	       pthread_cond_timedwait(&h->c, &h->m, &ts) == 0)
		;
	ret = *flag;
	pthread_mutex_unlock(&h->m);
	return ret;
}

/* Connect queue @qid (128 deep, 32 for the admin queue) from @src; true
 * when established. */
static bool half_open_q(struct half *h, const char *src, u16 qid)
{
	struct sockaddr_in s = nv_in4(src, 0);
	struct sockaddr_in d = nv_in4("10.0.0.2", NV_PORT);
	struct nvme_rdma_cm_req req = {
		.qid = cpu_to_le16(qid),
		.hrqsize = cpu_to_le16(qid ? 128 : 32),
		.hsqsize = cpu_to_le16(qid ? 127 : 31),
	};
	struct rdma_conn_param cp = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.responder_resources = 16,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct ib_qp_init_attr qa;

	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->m, NULL);
	pthread_cond_init(&h->c, NULL);
	h->id = rdma_create_id(&init_net, half_handler, h, RDMA_PS_TCP,
			       IB_QPT_RC);
	assert_false(IS_ERR(h->id));
	assert_int_equal(rdma_resolve_addr(h->id, (void *)&s, (void *)&d, 1000),
			 0);
	assert_true(half_wait(h, &h->resolved));
	assert_int_equal(rdma_resolve_route(h->id, 1000), 0);
	assert_true(half_wait(h, &h->routed));
	h->pd = ib_alloc_pd(h->id->device, 0);
	assert_false(IS_ERR(h->pd));
	h->cq = ib_alloc_cq(h->id->device, NULL, 8, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(h->cq));
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = h->cq;
	qa.recv_cq = h->cq;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	assert_int_equal(rdma_create_qp(h->id, h->pd, &qa), 0);
	assert_int_equal(rdma_connect(h->id, &cp), 0);
	half_wait(h, &h->established);
	if (!h->established)
		assert_true(half_wait(h, &h->rejected));
	return h->established;
}

/* An I/O queue (1) from @src. */
static bool half_open(struct half *h, const char *src)
{
	return half_open_q(h, src, 1);
}

static void half_close(struct half *h)
{
	if (h->established && !h->disconnected)
		rdma_disconnect(h->id);
	rdma_destroy_qp(h->id);
	rdma_destroy_id(h->id);
	ib_free_cq(h->cq);
	ib_dealloc_pd(h->pd);
	pthread_cond_destroy(&h->c);
	pthread_mutex_destroy(&h->m);
}

static u32 tdev_mrs(struct nv_env *e)
{
	struct soft_stats st;

	assert_int_equal(soft_device_stats(e->tdev, &st), 0);
	return st.mrs;
}

/* Wait (bounded) until the target has @n connections waiting. */
static void wait_unadmitted(struct nv_env *e, u64 n)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct nvmet_target_stats st;
	int i;

	for (i = 0; i < 5000; i++) {
		assert_int_equal(nvmet_target_get_stats(e->t, &st), 0);
		if (st.unadmitted == n)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("%llu connections wait for a Connect, not %llu",
		 (unsigned long long)st.unadmitted, (unsigned long long)n);
}

/* A 4 KiB write read back through @c's queue 1. */
static void still_works(struct nvmeh_ctrl *c, u64 seed)
{
	u8 w[4096], r[4096];

	nv_fill(w, sizeof(w), seed);
	assert_int_equal(nvmeh_rw(c, 1, true, 8 * seed, 8, w), 0);
	memset(r, 0, sizeof(r));
	assert_int_equal(nvmeh_rw(c, 1, false, 8 * seed, 8, r), 0);
	assert_memory_equal(r, w, sizeof(r));
}

/*
 * 24 connection requests of 128-deep I/O queues that never send a
 * Connect: no pool, one MR (for the Connect's data) at most, a few KiB
 * each; the connected host and a new
 * one go on.  On siw, where READs need MRs, the QP's R/W MRs were set up
 * with the QP, and each queue's pool (128 x 160 KiB) at the request.
 */
static void test_half_open_cost(void **state)
{
	static struct half h[NR_HALF];
	static struct nv_env e;
	struct nvmet_target_stats st0, st1;
	struct nvmeh_ctrl *later;
	u32 mrs0, i;

	(void)state;
	/* the timer must not close them while they are counted */
	nv_env_init(&e, "siw",
		    &(struct nv_cfg){ .queue_size = 128,
				      .connect_timeout_ms = 3600000 });
	assert_int_equal(nvmet_target_get_stats(e.t, &st0), 0);
	assert_int_equal(st0.unadmitted, 0);
	assert_true(st0.pool_bytes > 0); /* the connected host's queues */
	mrs0 = tdev_mrs(&e);
	for (i = 0; i < NR_HALF; i++)
		assert_true(half_open(&h[i], "10.0.0.1"));
	assert_int_equal(nvmet_target_get_stats(e.t, &st1), 0);
	print_message("%u connections without a Connect: %llu bytes of "
		      "buffers, %llu of pools, %u MRs\n",
		      NR_HALF,
		      (unsigned long long)(st1.buf_bytes - st0.buf_bytes),
		      (unsigned long long)(st1.pool_bytes - st0.pool_bytes),
		      tdev_mrs(&e) - mrs0);
	assert_int_equal(st1.queues, st0.queues + NR_HALF);
	assert_int_equal(st1.unadmitted, NR_HALF);
	assert_int_equal(st1.pool_bytes, st0.pool_bytes);
	/* at most the one a Connect's data needs (an MR on iWARP) */
	assert_true(tdev_mrs(&e) - mrs0 <= NR_HALF);
	assert_true(st1.buf_bytes - st0.buf_bytes <= 1u << 20);

	still_works(e.c, 1);
	later = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(later));
	still_works(later, 2);
	nvmeh_ctrl_destroy(later);

	for (i = 0; i < NR_HALF; i++)
		half_close(&h[i]);
	wait_unadmitted(&e, 0);
	nv_wait_target(&e, 1, 3);
	assert_int_equal(nvmet_target_get_stats(e.t, &st1), 0);
	assert_int_equal(st1.buf_bytes, st0.buf_bytes);
	nv_env_fini(&e);
}

/* The bounds: 3 per address, 5 in all; a slot freed is taken again. */
static void test_unadmitted_bounds(void **state)
{
	struct sockaddr_in third = nv_in4("10.0.0.3", 0);
	static struct half h[8];
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nvmet_target_stats st;
	struct nvmeh_ctrl *c;
	u32 i;

	(void)state;
	memset(h, 0, sizeof(h));
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	to.ns[0].size = 1u << 20;
	to.hosts = nv_hosts;
	to.nr_hosts = 1;
	to.max_unadmitted = 5;
	to.max_unadmitted_per_addr = 3;
	to.connect_timeout_ms = 3600000; /* not while they are counted */
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .no_connect = true, .topts = &to });
	assert_int_equal(soft_device_add_addr(e.hdev, (void *)&third), 0);
	/* admin queues: no controller of these addresses exists yet */
	for (i = 0; i < 3; i++)
		assert_true(half_open_q(&h[i], "10.0.0.1", 0));
	assert_false(half_open_q(&h[3], "10.0.0.1", 0)); /* 4th from .1 */
	assert_int_equal(h[3].rej_sts, NVME_RDMA_CM_NO_RSC);
	assert_true(half_open_q(&h[4], "10.0.0.3", 0));
	assert_true(half_open_q(&h[5], "10.0.0.3", 0));
	assert_false(half_open_q(&h[6], "10.0.0.3", 0)); /* 6th in all */
	assert_int_equal(h[6].rej_sts, NVME_RDMA_CM_NO_RSC);
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.unadmitted, 5);
	assert_int_equal(st.rejects, 2);

	/* one slot back: a host connects through it, queue by queue */
	half_close(&h[0]);
	wait_unadmitted(&e, 4);
	c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(c));
	still_works(c, 3);
	wait_unadmitted(&e, 4); /* its queues were admitted */
	nvmeh_ctrl_destroy(c);
	for (i = 1; i < 7; i++)
		half_close(&h[i]);
	nv_env_fini(&e);
}

/*
 * A stranger (an address none of whose queues a Connect admitted) gets no
 * I/O queue at all and at most 4 admin queues waiting for their Connect,
 * whatever the per-address bound; 24 requests of each kind cost the
 * target 4 small queues.  Once a controller of that address is admitted,
 * its I/O queues connect (the Linux host's order).
 */
static void test_stranger(void **state)
{
	struct sockaddr_in third = nv_in4("10.0.0.3", 0);
	static struct half h[NR_HALF], a[NR_HALF];
	static struct nv_env e;
	struct nvmet_target_stats st0, st1;
	struct nvmeh_ctrl *c;
	u32 i, up = 0;

	(void)state;
	memset(h, 0, sizeof(h));
	memset(a, 0, sizeof(a));
	nv_env_init(&e, "siw",
		    &(struct nv_cfg){ .queue_size = 128,
				      .connect_timeout_ms = 3600000 });
	assert_int_equal(soft_device_add_addr(e.hdev, (void *)&third), 0);
	assert_int_equal(nvmet_target_get_stats(e.t, &st0), 0);
	for (i = 0; i < NR_HALF; i++) {
		assert_false(half_open(&h[i], "10.0.0.3"));
		assert_int_equal(h[i].rej_sts, NVME_RDMA_CM_NO_RSC);
	}
	for (i = 0; i < NR_HALF; i++)
		up += half_open_q(&a[i], "10.0.0.3", 0);
	assert_int_equal(up, 4);
	assert_int_equal(nvmet_target_get_stats(e.t, &st1), 0);
	print_message("a stranger's %u requests: %u admin queues wait, "
		      "%llu bytes of buffers\n",
		      2 * NR_HALF, up,
		      (unsigned long long)(st1.buf_bytes - st0.buf_bytes));
	assert_int_equal(st1.unadmitted, 4);
	assert_int_equal(st1.queues, st0.queues + 4);
	assert_int_equal(st1.rejects, st0.rejects + 2 * NR_HALF - 4);
	assert_int_equal(st1.pool_bytes, st0.pool_bytes);
	/* the known host (10.0.0.1) still connects another controller */
	c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(c));
	still_works(c, 5);
	nvmeh_ctrl_destroy(c);
	for (i = 0; i < NR_HALF; i++) {
		half_close(&h[i]);
		half_close(&a[i]);
	}
	wait_unadmitted(&e, 0);
	nv_env_fini(&e);
}

/* A connection silent for connect_timeout_ms is closed; others stay. */
static void test_connect_timeout(void **state)
{
	static struct half h;
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nvmet_target_stats st;
	struct nvmeh_ctrl *c;

	(void)state;
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	to.ns[0].size = 1u << 20;
	to.hosts = nv_hosts;
	to.nr_hosts = 1;
	to.connect_timeout_ms = 3000; /* the real host's queues need less */
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .no_connect = true, .topts = &to });
	c = nvmeh_ctrl_create(&e.o);
	assert_false(IS_ERR(c));
	assert_true(half_open(&h, "10.0.0.1"));
	assert_true(half_wait(&h, &h.disconnected));
	wait_unadmitted(&e, 0);
	nv_wait_target(&e, 1, 3);
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.connect_timeouts, 1);
	/* the admitted queues were not closed, whatever their age */
	still_works(c, 4);
	nvmeh_ctrl_destroy(c);
	half_close(&h);
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_half_open_cost, nv_teardown),
		cmocka_unit_test_teardown(test_unadmitted_bounds, nv_teardown),
		cmocka_unit_test_teardown(test_stranger, nv_teardown),
		cmocka_unit_test_teardown(test_connect_timeout, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the tests of the in-process host's post sites share
 * (test_nvmet_host_plug.c, test_nvmet_host_postfail.c): a wrap of
 * ib_post_send() that tells the host's posts from the target's (each test
 * handles the host's; the target's SENDs, its responses, are counted
 * here), and NCMD commands whose write's @done submits a read of the same
 * blocks, so that one polling pass's callbacks submit NCMD reads (the
 * pass's plug).
 */
#ifndef NV_HOSTPLUG_H
#define NV_HOSTPLUG_H

#include "nvmet_env.h"

#define NCMD 8
#define NLB 8 /* 4 KiB of 512 B blocks */
#define BLK (NLB * 512)

int __real_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad);
int __wrap_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad);

static struct ib_device *host_dev, *tgt_dev; /* atomic */
static u64 tgt_resps; /* atomic: the target's SENDs */

static bool is_send(const struct ib_send_wr *w)
{
	return w->opcode == IB_WR_SEND || w->opcode == IB_WR_SEND_WITH_INV;
}

/* Whether @qp is the host's: the test's wrap handles its posts. */
static inline bool hp_host_qp(const struct ib_qp *qp,
			      const struct ib_send_wr *wr)
{
	return qp && wr &&
	       qp->device == __atomic_load_n(&host_dev, __ATOMIC_ACQUIRE);
}

/* Any other post (the target's): posted, its SENDs counted. */
static inline int hp_other_post(struct ib_qp *qp, const struct ib_send_wr *wr,
				const struct ib_send_wr **bad)
{
	const struct ib_send_wr *w;
	int ret = __real_ib_post_send(qp, wr, bad);

	if (!ret && qp && wr &&
	    qp->device == __atomic_load_n(&tgt_dev, __ATOMIC_ACQUIRE))
		for (w = wr; w; w = w->next)
			if (is_send(w))
				__atomic_fetch_add(&tgt_resps, 1,
						   __ATOMIC_RELEASE);
	return ret;
}

struct cmd {
	struct nvmeh_request rq;
	struct nv_env *e;
	u64 slba;
	u8 *wbuf;
	u8 *rbuf;
	int ends; /* @done calls of the read */
	int error; /* the read's first end */
	u16 status;
	bool retry; /* its first end, an error, sends it again */
	int submit_ret; /* the resubmission's return */
};

/* A read's end; one with @retry that failed is sent again at once. */
static void read_done(struct nvmeh_request *rq)
{
	struct cmd *c = container_of(rq, struct cmd, rq);

	if (c->ends++)
		return;
	c->error = rq->error;
	c->status = rq->status;
	if (c->retry && rq->error) {
		memset(c->rbuf, 0xa5, BLK);
		nv_rw_init(&c->rq, false, 1, c->slba, NLB, c->rbuf, 512);
		c->rq.done = read_done;
		c->submit_ret = nvmeh_submit(c->e->c, 1, &c->rq);
	}
}

/* A write's @done submits a read of its blocks (in the pass: plugged). */
static void write_done(struct nvmeh_request *rq)
{
	struct cmd *c = container_of(rq, struct cmd, rq);

	assert_int_equal(rq->error, 0);
	assert_int_equal(rq->status, 0);
	nv_rw_init(&c->rq, false, 1, c->slba, NLB, c->rbuf, 512);
	c->rq.done = read_done;
	c->submit_ret = nvmeh_submit(c->e->c, 1, &c->rq);
}

/* Bounded (10 s): until the target has posted @n responses. */
static void wait_resps(u64 n)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (__atomic_load_n(&tgt_resps, __ATOMIC_ACQUIRE) >= n)
			return;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	fail_msg("the target posted %llu responses, not %llu",
		 (unsigned long long)tgt_resps, (unsigned long long)n);
}

/*
 * NCMD writes of their own blocks from @mem (2 * NCMD * BLK: each
 * command's write buffer, then its read buffer, filled with 0xa5), each
 * @done a write_done(); command @retry_at (-1: none) retries its read.
 */
static void hp_cmds_init(struct nv_env *e, struct cmd *cmds, u8 *mem,
			 int retry_at)
{
	int i;

	for (i = 0; i < NCMD; i++) {
		struct cmd *c = &cmds[i];

		*c = (struct cmd){ .e = e,
				   .slba = (u64)i * 3 * NLB,
				   .wbuf = mem + (size_t)i * 2 * BLK,
				   .rbuf = mem + ((size_t)i * 2 + 1) * BLK,
				   .retry = i == retry_at,
				   .submit_ret = -1 };
		nv_fill(c->wbuf, BLK, 100 + i);
		memset(c->rbuf, 0xa5, BLK);
		nv_rw_init(&c->rq, true, 1, c->slba, NLB, c->wbuf, 512);
		c->rq.done = write_done;
	}
}

/* One polled I/O queue, no inline data (every command registers). */
static void hp_env_up(struct nv_env *e)
{
	nv_env_init(e, "rxe",
		    &(struct nv_cfg){ .nr_io_queues = 1,
				      .no_connect = true,
				      .no_inline = true });
	e->o.poll = true;
	e->o.poll_external = true;
	e->c = nvmeh_ctrl_create(&e->o);
	assert_false(IS_ERR_OR_NULL(e->c));
	__atomic_store_n(&host_dev, e->hdev, __ATOMIC_RELEASE);
	__atomic_store_n(&tgt_dev, e->tdev, __ATOMIC_RELEASE);
}

static void hp_env_down(struct nv_env *e)
{
	__atomic_store_n(&host_dev, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&tgt_dev, NULL, __ATOMIC_RELEASE);
	nv_env_fini(e);
}

#endif /* NV_HOSTPLUG_H */

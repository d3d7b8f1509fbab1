/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One NVMe command through the in-process host whose end a test watches:
 * built, submitted, waited for (bounded), and the target's namespace it
 * reaches.  Include after nvmet_int.h.
 */
#ifndef RDMARW_TESTS_NV_RQ_H
#define RDMARW_TESTS_NV_RQ_H

#include "nvmet_env.h"

#define NV_HELD_MS 600000 /* a backend delay held until released, in practice */

/* A request whose end is watched. */
struct nv_rq {
	struct nvmeh_request rq;
	int done; /* atomic */
};

static inline void nv_rq_done(struct nvmeh_request *rq)
{
	struct nv_rq *r = rq->priv;

	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

static inline bool nv_rq_is_done(struct nv_rq *r)
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

/* @opcode of @nlb blocks of @lba bytes at @slba of @nsid, data at @buf. */
static inline void nv_rq_init(struct nv_rq *r, u8 opcode, u32 nsid, u64 slba,
			      u32 nlb, void *buf, u32 lba)
{
	struct nvmeh_request *rq = &r->rq;

	memset(r, 0, sizeof(*r));
	if (opcode != nvme_cmd_flush) /* a Read's or Write's layout */
		nv_rw_init(rq, opcode == nvme_cmd_write, nsid, slba, nlb, buf,
			   lba);
	rq->sqe[offsetof(struct nvme_common_command, opcode)] = opcode;
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	rq->done = nv_rq_done;
	rq->priv = r;
}

static inline void nv_submit(struct nv_env *e, unsigned int qid,
			     struct nv_rq *r)
{
	assert_int_equal(nvmeh_submit(e->c, qid, &r->rq), 0);
}

/* Submit and wait for the end; the NVMe status. */
static inline u16 nv_exec(struct nv_env *e, unsigned int qid, struct nv_rq *r)
{
	nv_submit(e, qid, r);
	nv_wait_for(nv_rq_is_done(r));
	assert_int_equal(r->rq.error, 0);
	return r->rq.status;
}

/* Namespace @nsid of the target's one subsystem. */
static inline struct nvmet_ns *nv_ns(struct nv_env *e, u32 nsid)
{
	struct nvmet_subsys *s =
		list_first_entry(&e->t->subsystems, struct nvmet_subsys, entry);

	assert_non_null(s->ns[nsid - 1]);
	return s->ns[nsid - 1];
}

#endif

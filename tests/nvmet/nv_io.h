/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Random READ/WRITE against a shadow copy of the namespace, with @depth
 * commands outstanding on each of @nq queues.  Each outstanding slot owns
 * a disjoint LBA region (so the shadow is exact while commands overlap in
 * time); every read is compared byte for byte with the shadow when it
 * completes, and nv_io_verify() reads the whole namespace back at the end
 * (bytes written where they should not have been show up there).
 */
#ifndef RDMARW_TESTS_NV_IO_H
#define RDMARW_TESTS_NV_IO_H

#include "nvmet_env.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

struct nv_run;

struct nv_slot {
	struct nv_run *run;
	unsigned int qid;
	u64 region;
	u32 region_lbas;
	u8 *buf;
	struct nvmeh_request rq;
	u64 slba;
	u32 nlb;
	u64 rng;
	int left;
};

struct nv_run {
	struct nv_env *e;
	u8 *shadow;
	u32 lba_size;
	u32 max_nlb;
	struct nv_slot *slots;
	unsigned int nslots;
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned int active;
	u64 reads, writes, bytes_checked;
	int failed;
	char why[256];
};

static inline u64 nv_rand(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static inline __attribute__((format(printf, 2, 3))) void
nv_run_fail(struct nv_run *run, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&run->m);
	if (!run->failed++) {
		va_start(ap, fmt);
		vsnprintf(run->why, sizeof(run->why), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&run->m);
}

static void nv_slot_done(struct nvmeh_request *rq);

static inline int nv_slot_issue(struct nv_slot *s)
{
	struct nv_run *run = s->run;
	u32 maxn =
		s->region_lbas < run->max_nlb ? s->region_lbas : run->max_nlb;
	bool write = nv_rand(&s->rng) & 1;

	s->nlb = 1 + (u32)(nv_rand(&s->rng) % maxn);
	/* small ones often: they go in-capsule */
	if (!(nv_rand(&s->rng) & 3))
		s->nlb = 1 + (u32)(nv_rand(&s->rng) % 8);
	s->slba = s->region + nv_rand(&s->rng) % (s->region_lbas - s->nlb + 1);
	memset(&s->rq, 0, sizeof(s->rq));
	s->rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		write ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, nsid),
		      1);
	nvme_put_le64(s->rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      s->slba);
	nvme_put_le32(s->rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      s->nlb - 1);
	s->rq.data = s->buf;
	s->rq.data_len = s->nlb * run->lba_size;
	s->rq.write = write;
	s->rq.done = nv_slot_done;
	s->rq.priv = s;
	if (write)
		nv_fill(s->buf, s->rq.data_len, nv_rand(&s->rng));
	else
		memset(s->buf, 0xa5, s->rq.data_len);
	return nvmeh_submit(run->e->c, s->qid, &s->rq);
}

static void nv_slot_end(struct nv_slot *s)
{
	struct nv_run *run = s->run;

	pthread_mutex_lock(&run->m);
	run->active--;
	pthread_cond_broadcast(&run->c);
	pthread_mutex_unlock(&run->m);
}

static void nv_slot_done(struct nvmeh_request *rq)
{
	struct nv_slot *s = rq->priv;
	struct nv_run *run = s->run;
	u8 *sh = run->shadow + s->slba * run->lba_size;
	int ret;

	if (rq->error || rq->status) {
		nv_run_fail(run, "qid %u lba %llu: error %d status 0x%x",
			    s->qid, (unsigned long long)s->slba, rq->error,
			    rq->status);
		nv_slot_end(s);
		return;
	}
	if (rq->write) {
		memcpy(sh, s->buf, rq->data_len);
		__atomic_add_fetch(&run->writes, 1, __ATOMIC_RELAXED);
	} else {
		if (memcmp(sh, s->buf, rq->data_len)) {
			u32 i = 0;

			while (sh[i] == s->buf[i])
				i++;
			nv_run_fail(run, "read lba %llu + byte %u differs",
				    (unsigned long long)s->slba, i);
			nv_slot_end(s);
			return;
		}
		__atomic_add_fetch(&run->reads, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&run->bytes_checked, rq->data_len,
				   __ATOMIC_RELAXED);
	}
	if (--s->left <= 0) {
		nv_slot_end(s);
		return;
	}
	ret = nv_slot_issue(s);
	if (ret) {
		nv_run_fail(run, "submit qid %u: %d", s->qid, ret);
		nv_slot_end(s);
	}
}

/*
 * @ops commands per slot, @depth slots on each of queues 1..@nq; regions
 * cover the namespace.  Returns when every slot is done.
 */
static inline void nv_io_run(struct nv_run *run, struct nv_env *e,
			     unsigned int nq, unsigned int depth, int ops,
			     u64 seed)
{
	const struct nvmeh_info *info = nvmeh_ctrl_info(e->c);
	u32 region;
	unsigned int i;
	int ret;

	memset(run, 0, sizeof(*run));
	pthread_mutex_init(&run->m, NULL);
	pthread_cond_init(&run->c, NULL);
	run->e = e;
	run->lba_size = info->lba_size;
	run->max_nlb = info->max_xfer / info->lba_size;
	if (run->max_nlb > 256)
		run->max_nlb = 256; /* 128 KiB at most: keeps it quick */
	run->shadow = calloc(1, e->ns_size);
	assert_non_null(run->shadow);
	run->nslots = nq * depth;
	run->slots = calloc(run->nslots, sizeof(*run->slots));
	assert_non_null(run->slots);
	region = (u32)(info->ns_lbas / run->nslots);
	assert_true(region >= 8);
	/* the namespace starts zeroed (a RAM backend) */
	run->active = run->nslots;
	for (i = 0; i < run->nslots; i++) {
		struct nv_slot *s = &run->slots[i];

		s->run = run;
		s->qid = 1 + i % nq;
		s->region = (u64)i * region;
		s->region_lbas = region;
		s->buf = aligned_alloc(4096, (size_t)run->max_nlb * 512 + 4096);
		assert_non_null(s->buf);
		s->rng = seed * 7919 + i + 1;
		s->left = ops;
	}
	for (i = 0; i < run->nslots; i++) {
		ret = nv_slot_issue(&run->slots[i]);
		if (ret) {
			nv_run_fail(run, "first submit %u: %d", i, ret);
			nv_slot_end(&run->slots[i]);
		}
	}
	pthread_mutex_lock(&run->m);
	while (run->active)
		pthread_cond_wait(&run->c, &run->m);
	pthread_mutex_unlock(&run->m);
}

/* Read the whole namespace back (128 KiB at a time) against the shadow. */
static inline void nv_io_verify(struct nv_run *run)
{
	struct nv_env *e = run->e;
	u32 chunk = 128 * 1024;
	u8 *buf = malloc(chunk);
	u64 off;

	assert_non_null(buf);
	for (off = 0; off < e->ns_size; off += chunk) {
		memset(buf, 0x5a, chunk);
		assert_int_equal(
			nvmeh_rw(e->c, 1, false, off / 512, chunk / 512, buf),
			0);
		if (memcmp(buf, run->shadow + off, chunk))
			fail_msg("namespace differs from the shadow in "
				 "[%llu, +128K)",
				 (unsigned long long)off);
	}
	free(buf);
}

static inline void nv_io_free(struct nv_run *run)
{
	unsigned int i;

	for (i = 0; i < run->nslots; i++)
		free(run->slots[i].buf);
	free(run->slots);
	free(run->shadow);
	pthread_mutex_destroy(&run->m);
	pthread_cond_destroy(&run->c);
}

#endif /* RDMARW_TESTS_NV_IO_H */

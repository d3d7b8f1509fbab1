// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * End-to-end integrity, as fio --verify=crc32c checks it but stricter:
 * every 512-byte block the in-process host writes carries a tag (its LBA,
 * the round's generation, a write id unique to the command that wrote it,
 * the job) and a CRC-32C (ISA-L's crc32_iscsi()) over the tag and a
 * payload patterned from the LBA and the write id.  Every block read is
 * checked against what its last write put there: a block from another
 * LBA, an older write of the same LBA, a torn or zeroed block all fail,
 * with the LBA expected and the tag found.
 *
 * NJOBS threads (fio's jobs), each on its own I/O queue with DEPTH
 * commands outstanding, each command slot on its own LBA region (so what
 * a block holds is known exactly while commands overlap in time); a mix of
 * 4 KiB and 128 KiB commands, at any LBA.  ROUNDS rounds, each with a new
 * generation: write every region, random reads, writes and deallocates
 * (a 4096-byte DSM payload, as the Linux host sends it; deallocated blocks
 * must read as zeroes), then read every region back.
 *
 * Cases: each software profile (mlx5, rxe, siw), devices executing inline
 * or on their own threads, namespace in the target's RAM or in a file.
 * One case: `test_nvmet_integrity 'siw_threaded_*'` (a glob on the case
 * names, also from RDMARW_INTEGRITY_CASE); `RDMARW_INTEGRITY_ROUNDS=n`
 * runs n rounds instead of ROUNDS.
 */
#include "nvmet_env.h"

#include <isa-l/crc.h>
#include <pthread.h>

enum {
	NJOBS = 4,
	DEPTH = 32,
	BLK = 512,
	SMALL = 8, /* 4 KiB */
	LARGE = 256, /* 128 KiB */
	REGION = 2 * LARGE, /* blocks per slot */
	ROUNDS = 3,
	OPS = 12, /* random commands per slot and round */
};

#define NS_BLOCKS ((u64)NJOBS * DEPTH * REGION)

/* A block's tag, at its start; the CRC covers bytes 8..511. */
#define TAG_MAGIC 0x54495752u /* "RWIT" */
#define T_MAGIC 0
#define T_CRC 4
#define T_LBA 8
#define T_GEN 16
#define T_WID 20
#define T_JOB 24
#define T_PAYLOAD 28

enum phase { P_FILL, P_RANDOM, P_VERIFY, P_NR };
static const char *const phase_name[] = { "fill", "random", "verify" };

struct icase {
	const char *profile;
	bool threaded;
	bool file;
};

struct job;

struct slot {
	struct job *job;
	u64 region; /* first block */
	u32 pos; /* next block of a fill or verify pass */
	int left; /* random commands left */
	u8 *buf;
	u8 *dsm; /* a 4096-byte DSM payload */
	struct nvmeh_request rq;
	u64 slba;
	u32 nlb;
	enum { OP_READ, OP_WRITE, OP_DEALLOC } op;
	u32 wid;
	struct slot *next_done;
};

struct job {
	struct nv_env *e;
	int id;
	unsigned int qid;
	u64 rng;
	u32 next_wid;
	u32 gen;
	/* what each block holds: the write id (0: deallocated or never
	 * written, zeroes) and the generation of that write */
	u32 *wid;
	u32 *wgen;
	struct slot slots[DEPTH];
	pthread_mutex_t m;
	pthread_cond_t c;
	struct slot *done; /* slots whose command ended */
	unsigned int inflight;
	u64 reads, writes, deallocs, blocks_checked;
	int failed;
	char why[320];
	pthread_t th;
};

static unsigned int rounds = ROUNDS;

static u64 next_rand(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static u32 block_crc(const u8 *b)
{
	return crc32_iscsi((unsigned char *)b + T_LBA, BLK - T_LBA, ~0u);
}

static void block_fill(u8 *b, u64 lba, u32 gen, u32 wid, u32 job)
{
	u64 x = lba * 0x9e3779b97f4a7c15ull ^ ((u64)wid << 32 | gen) ^ 1;
	unsigned int i;

	nvme_put_le32(b + T_MAGIC, TAG_MAGIC);
	nvme_put_le64(b + T_LBA, lba);
	nvme_put_le32(b + T_GEN, gen);
	nvme_put_le32(b + T_WID, wid);
	nvme_put_le32(b + T_JOB, job);
	for (i = T_PAYLOAD; i + 8 <= BLK; i += 8)
		nvme_put_le64(b + i, next_rand(&x));
	memset(b + i, 0, BLK - i);
	nvme_put_le32(b + T_CRC, block_crc(b));
}

static bool block_zero(const u8 *b)
{
	unsigned int i;

	for (i = 0; i < BLK; i++)
		if (b[i])
			return false;
	return true;
}

static __attribute__((format(printf, 2, 3))) void job_fail(struct job *j,
							   const char *fmt, ...)
{
	va_list ap;

	if (j->failed++)
		return;
	va_start(ap, fmt);
	vsnprintf(j->why, sizeof(j->why), fmt, ap);
	va_end(ap);
}

/* Block @lba as read into @b against what its last write put there. */
static void block_check(struct job *j, struct slot *s, u64 lba, const u8 *b)
{
	u64 i = lba - (u64)j->id * DEPTH * REGION;
	u32 wid = j->wid[i], gen = j->wgen[i];
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "job %d q%u, read of %u blocks at %llu",
		 j->id, j->qid, s->nlb, (unsigned long long)s->slba);
	j->blocks_checked++;
	if (!wid) {
		if (!block_zero(b))
			job_fail(
				j,
				"LBA %llu (%s): expected zeroes (deallocated), found tag LBA %llu gen %u write %#x",
				(unsigned long long)lba, cmd,
				(unsigned long long)nvme_get_le64(b + T_LBA),
				nvme_get_le32(b + T_GEN),
				nvme_get_le32(b + T_WID));
		return;
	}
	if (nvme_get_le32(b + T_MAGIC) != TAG_MAGIC) {
		job_fail(
			j,
			"LBA %llu (%s): no tag (%s), expected gen %u write %#x",
			(unsigned long long)lba, cmd,
			block_zero(b) ? "zeroes" : "not a tag", gen, wid);
		return;
	}
	if (nvme_get_le32(b + T_CRC) != block_crc(b)) {
		job_fail(
			j,
			"LBA %llu (%s): CRC-32C %#x, block says %#x (tag LBA %llu gen %u write %#x), expected gen %u write %#x",
			(unsigned long long)lba, cmd, block_crc(b),
			nvme_get_le32(b + T_CRC),
			(unsigned long long)nvme_get_le64(b + T_LBA),
			nvme_get_le32(b + T_GEN), nvme_get_le32(b + T_WID), gen,
			wid);
		return;
	}
	if (nvme_get_le64(b + T_LBA) != lba ||
	    nvme_get_le32(b + T_GEN) != gen || nvme_get_le32(b + T_WID) != wid)
		job_fail(
			j,
			"LBA %llu (%s): found tag LBA %llu gen %u write %#x job %u, expected LBA %llu gen %u write %#x",
			(unsigned long long)lba, cmd,
			(unsigned long long)nvme_get_le64(b + T_LBA),
			nvme_get_le32(b + T_GEN), nvme_get_le32(b + T_WID),
			nvme_get_le32(b + T_JOB), (unsigned long long)lba, gen,
			wid);
}

static void slot_done(struct nvmeh_request *rq)
{
	struct slot *s = rq->priv;
	struct job *j = s->job;

	pthread_mutex_lock(&j->m);
	s->next_done = j->done;
	j->done = s;
	pthread_cond_signal(&j->c);
	pthread_mutex_unlock(&j->m);
}

/* The next command of @s in @phase; false when the slot is through. */
static bool slot_plan(struct job *j, struct slot *s, enum phase phase)
{
	u64 r;

	switch (phase) {
	case P_FILL:
	case P_VERIFY:
		if (s->pos >= REGION)
			return false;
		s->nlb = SMALL;
		if (s->pos % LARGE == 0 && next_rand(&j->rng) % 3)
			s->nlb = LARGE;
		s->slba = s->region + s->pos;
		s->pos += s->nlb;
		s->op = phase == P_FILL ? OP_WRITE : OP_READ;
		return true;
	case P_RANDOM:
		if (s->left-- <= 0)
			return false;
		r = next_rand(&j->rng);
		s->nlb = r % 4 ? SMALL : LARGE;
		s->slba = s->region + (r >> 8) % (REGION - s->nlb + 1);
		s->op = (r >> 4) % 16 == 0 ? OP_DEALLOC :
			(r >> 2) & 1	   ? OP_WRITE :
					     OP_READ;
		return true;
	default:
		return false;
	}
}

static int slot_issue(struct job *j, struct slot *s)
{
	struct nvmeh_request *rq = &s->rq;
	u32 i;

	memset(rq, 0, sizeof(*rq));
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, nsid), 1);
	rq->done = slot_done;
	rq->priv = s;
	if (s->op == OP_DEALLOC) {
		/* one range, in a page of them: the Linux host's discard */
		memset(s->dsm, 0, 4096);
		nvme_put_le32(s->dsm + 4, s->nlb);
		nvme_put_le64(s->dsm + 8, s->slba);
		rq->sqe[offsetof(struct nvme_common_command, opcode)] =
			nvme_cmd_dsm;
		nvme_put_le32(
			rq->sqe + offsetof(struct nvme_common_command, cdw11),
			NVME_DSMGMT_AD);
		rq->data = s->dsm;
		rq->data_len = 4096;
		rq->write = true;
	} else {
		rq->sqe[offsetof(struct nvme_common_command, opcode)] =
			s->op == OP_WRITE ? nvme_cmd_write : nvme_cmd_read;
		nvme_put_le64(
			rq->sqe + offsetof(struct nvme_common_command, cdw10),
			s->slba);
		nvme_put_le32(
			rq->sqe + offsetof(struct nvme_common_command, cdw12),
			s->nlb - 1);
		rq->data = s->buf;
		rq->data_len = s->nlb * BLK;
		rq->write = s->op == OP_WRITE;
	}
	if (s->op == OP_WRITE) {
		s->wid = (u32)j->id << 24 | ++j->next_wid;
		for (i = 0; i < s->nlb; i++)
			block_fill(s->buf + i * BLK, s->slba + i, j->gen,
				   s->wid, (u32)j->id);
	} else if (s->op == OP_READ) {
		memset(s->buf, 0xa5, rq->data_len);
	}
	return nvmeh_submit(j->e->c, j->qid, rq);
}

/* A command of @s ended: check it, and note what its blocks hold now. */
static void slot_end(struct job *j, struct slot *s, enum phase phase)
{
	struct nvmeh_request *rq = &s->rq;
	u64 base = (u64)j->id * DEPTH * REGION;
	u32 i;

	if (rq->error || rq->status) {
		job_fail(
			j,
			"job %d q%u, %s of %u blocks at %llu (%s): error %d status %#x",
			j->id, j->qid,
			s->op == OP_WRITE ? "write" :
			s->op == OP_READ  ? "read" :
					    "deallocate",
			s->nlb, (unsigned long long)s->slba, phase_name[phase],
			rq->error, rq->status);
		return;
	}
	switch (s->op) {
	case OP_WRITE:
		for (i = 0; i < s->nlb; i++) {
			j->wid[s->slba + i - base] = s->wid;
			j->wgen[s->slba + i - base] = j->gen;
		}
		j->writes++;
		break;
	case OP_DEALLOC:
		for (i = 0; i < s->nlb; i++)
			j->wid[s->slba + i - base] = 0;
		j->deallocs++;
		break;
	case OP_READ:
		for (i = 0; i < s->nlb && !j->failed; i++)
			block_check(j, s, s->slba + i, s->buf + i * BLK);
		j->reads++;
		break;
	}
}

/* Every slot through @phase, DEPTH commands outstanding while they last. */
static void job_phase(struct job *j, enum phase phase)
{
	struct slot *s;
	unsigned int i;

	for (i = 0; i < DEPTH; i++) {
		s = &j->slots[i];
		s->pos = 0;
		s->left = OPS;
		if (j->failed || !slot_plan(j, s, phase))
			continue;
		if (slot_issue(j, s))
			job_fail(j, "job %d: submit failed", j->id);
		else
			j->inflight++;
	}
	while (j->inflight) {
		pthread_mutex_lock(&j->m);
		while (!j->done)
			pthread_cond_wait(&j->c, &j->m);
		s = j->done;
		j->done = s->next_done;
		pthread_mutex_unlock(&j->m);
		j->inflight--;
		slot_end(j, s, phase);
		if (j->failed || !slot_plan(j, s, phase))
			continue;
		if (slot_issue(j, s))
			job_fail(j, "job %d: submit failed", j->id);
		else
			j->inflight++;
	}
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	unsigned int r;
	int p;

	for (r = 0; r < rounds && !j->failed; r++) {
		j->gen = r + 1;
		for (p = 0; p < P_NR && !j->failed; p++)
			job_phase(j, (enum phase)p);
	}
	return NULL;
}

static void integrity_case(void **state)
{
	const struct icase *ic = *state;
	static struct nv_env e;
	struct job *jobs;
	struct nvmeh_stats hs;
	u64 reads = 0, writes = 0, deallocs = 0, checked = 0;
	char why[400] = "";
	int i, k, failed = 0;

	nv_env_init(&e, ic->profile,
		    &(struct nv_cfg){ .threaded = ic->threaded,
				      .file_backend = ic->file,
				      .nr_io_queues = NJOBS,
				      .queue_size = DEPTH,
				      .ns_size = NS_BLOCKS * BLK });
	assert_int_equal(nvmeh_ctrl_info(e.c)->lba_size, BLK);
	assert_true(nvmeh_ctrl_info(e.c)->max_xfer >= LARGE * BLK);
	jobs = calloc(NJOBS, sizeof(*jobs));
	assert_non_null(jobs);
	for (i = 0; i < NJOBS; i++) {
		struct job *j = &jobs[i];

		j->e = &e;
		j->id = i;
		j->qid = 1 + (unsigned int)i;
		j->rng = 0x5eed + (u64)i * 7919;
		j->wid = calloc(DEPTH * REGION, sizeof(*j->wid));
		j->wgen = calloc(DEPTH * REGION, sizeof(*j->wgen));
		assert_non_null(j->wid);
		assert_non_null(j->wgen);
		pthread_mutex_init(&j->m, NULL);
		pthread_cond_init(&j->c, NULL);
		for (k = 0; k < DEPTH; k++) {
			struct slot *s = &j->slots[k];

			s->job = j;
			s->region = ((u64)i * DEPTH + (u64)k) * REGION;
			s->buf = aligned_alloc(4096, LARGE * BLK);
			s->dsm = aligned_alloc(4096, 4096);
			assert_non_null(s->buf);
			assert_non_null(s->dsm);
		}
	}
	for (i = 0; i < NJOBS; i++)
		assert_int_equal(
			pthread_create(&jobs[i].th, NULL, job_main, &jobs[i]),
			0);
	for (i = 0; i < NJOBS; i++)
		pthread_join(jobs[i].th, NULL);

	nvmeh_ctrl_stats(e.c, &hs);
	for (i = 0; i < NJOBS; i++) {
		struct job *j = &jobs[i];

		if (j->failed && !failed)
			snprintf(why, sizeof(why), "job %d's: %s", i, j->why);
		failed += j->failed;
		reads += j->reads;
		writes += j->writes;
		deallocs += j->deallocs;
		checked += j->blocks_checked;
		for (k = 0; k < DEPTH; k++) {
			free(j->slots[k].buf);
			free(j->slots[k].dsm);
		}
		free(j->wid);
		free(j->wgen);
		pthread_mutex_destroy(&j->m);
		pthread_cond_destroy(&j->c);
	}
	free(jobs);
	if (failed)
		fail_msg("%d failure(s) (a job stops at its first); %s", failed,
			 why);
	print_message(
		"%llu reads, %llu writes, %llu deallocates, %llu blocks checked\n",
		(unsigned long long)reads, (unsigned long long)writes,
		(unsigned long long)deallocs, (unsigned long long)checked);
	/* every block was read back at least once per round */
	assert_true(checked >= rounds * NS_BLOCKS);
	assert_true(deallocs > 0);
	assert_int_equal(hs.resets, 0);
	assert_int_equal(hs.aborted, 0);
	nv_env_fini(&e);
}

static int case_teardown(void **state)
{
	return nv_teardown(state);
}

int main(int argc, char **argv)
{
	static const char *const profiles[] = { "mlx5", "rxe", "siw" };
	static struct icase cases[12];
	static char names[12][40];
	struct CMUnitTest tests[12];
	const char *filter = getenv("RDMARW_INTEGRITY_CASE");
	const char *nr = getenv("RDMARW_INTEGRITY_ROUNDS");
	unsigned int i, n = 0;

	if (argc > 1)
		filter = argv[1];
	if (nr && atoi(nr) > 0)
		rounds = (unsigned int)atoi(nr);
	for (i = 0; i < 12; i++) {
		struct icase *c = &cases[n];

		c->profile = profiles[i / 4];
		c->threaded = i & 2;
		c->file = i & 1;
		snprintf(names[n], sizeof(names[n]), "%s_%s_%s", c->profile,
			 c->threaded ? "threaded" : "inline",
			 c->file ? "file" : "ram");
		tests[n] = (struct CMUnitTest){
			.name = names[n],
			.test_func = integrity_case,
			.teardown_func = case_teardown,
			.initial_state = c,
		};
		n++;
	}
	if (filter && filter[0])
		cmocka_set_test_filter(filter);
	return _cmocka_run_group_tests("test_nvmet_integrity", tests, n, NULL,
				       NULL);
}

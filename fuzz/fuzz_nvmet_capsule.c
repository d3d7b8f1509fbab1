// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capsules against rdmarw-nvmet on the software device: each input is a
 * few capsules (queue, length, bytes: any opcode, any SGL, any length,
 * truncated or over-long) sent by the in-process host as they are, with
 * only the command id replaced.  After them the oracle asks:
 *   - every capsule ended (a CQE, or the queue's teardown after the
 *     host's command timeout), once: no hang;
 *   - the target still serves: a write and a read back on a fresh block,
 *     byte for byte, after a reconnect if the capsules disabled or killed
 *     the controller (a new controller must work);
 *   - the target holds no request of the old ones (reqs_inflight == 0
 *     once idle) and at most the host's queues.
 * ASan and UBSan catch the rest.  One fabric, target and host for the
 * whole run (LLVMFuzzerInitialize).
 *
 * Input: repeated { u8 sel; ... }, at most 8 of them:
 *   - sel bit 6 clear: a capsule { u16 len; len bytes }: queue = (sel &
 *     0x3f) % (1 + I/O queues), sel bit 7 allows a slot past the queue
 *     depth; capsule length = 1 + len % (64 + 4096);
 *   - sel bit 6 set, an operation (sel & 3) while the capsules are out:
 *     0: reset the controller now (error recovery: the queues are torn
 *     down under what is in flight); 1, 2: a 4 KiB read (1) or write (2)
 *     through the host's data path { u8 nsid; u8 lba }, on I/O queue 1 +
 *     (sel >> 2 & 1), nsid % 3 (0 and 2 are refused before the data is
 *     mapped: the target answers with a plain SEND and the host
 *     invalidates its MR itself); 3: let 1 ms pass.
 */
#include "fuzz_common.h"

#include "nvme_host.h"
#include "nvmet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#define NQ 2
#define MAX_CAPSULES 8
#define CAPSULE_MAX (64 + 4096)

static struct {
	struct soft_fabric *fab;
	struct ib_device *hdev, *tdev;
	struct nvmet_target *t;
	struct nvmeh_opts o;
	struct nvmeh_ctrl *c;
	u64 round;
} fz;

struct pending {
	pthread_mutex_t m;
	pthread_cond_t cv;
	int left;
};

static void fz_done(struct nvmeh_request *rq)
{
	struct pending *p = rq->priv;

	pthread_mutex_lock(&p->m);
	/* a request ends once (the host's teardown race of issue 26 ended
	 * some twice: the wait below then never returned) */
	FUZZ_CHECK(p->left > 0, "request cid %#x ended twice", rq->cid);
	p->left--;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->m);
}

static struct sockaddr_in in4(const char *ip, u16 port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in a0 = in4("10.0.0.1", 0), a1 = in4("10.0.0.2", 0);
	struct sockaddr_in dst = in4("10.0.0.2", 4420);
	struct nvmet_target_opts to;
	struct soft_profile p;

	(void)argc;
	(void)argv;
	FUZZ_CHECK(!soft_profile_get("rxe", &p), "profile");
	fz.fab = soft_fabric_create();
	fz.tdev = soft_device_create(fz.fab, "fzt_%d", &p);
	/*
	 * The host's device executes on its own thread: its Send Queue runs
	 * behind its posts, as a NIC's, so completions of a queue being torn
	 * down come in the orders a real device gives (a LOCAL_INV posted by
	 * a late response flushed after the drain's markers).
	 */
	p.threaded = true;
	fz.hdev = soft_device_create(fz.fab, "fzh_%d", &p);
	FUZZ_CHECK(!IS_ERR(fz.hdev) && !IS_ERR(fz.tdev), "devices");
	FUZZ_CHECK(!soft_device_add_addr(fz.hdev, (void *)&a0), "addr");
	FUZZ_CHECK(!soft_device_add_addr(fz.tdev, (void *)&a1), "addr");
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = 4420;
	to.subnqn = "nqn.2026-01.io.rdmarw:fuzz";
	to.ns[0].type = NVMET_BACKEND_RAM;
	to.ns[0].size = 1 << 20;
	to.hosts = (const char *const[]){ NVMEH_DEFAULT_HOSTNQN };
	to.nr_hosts = 1;
	fz.t = nvmet_target_create(&to);
	FUZZ_CHECK(!IS_ERR_OR_NULL(fz.t), "target: %ld", PTR_ERR(fz.t));
	nvmeh_opts_init(&fz.o, (void *)&a0, (void *)&dst, to.subnqn);
	fz.o.nr_io_queues = NQ;
	fz.o.queue_size = 8;
	fz.o.io_timeout_ms = 200;
	fz.o.reconnect_delay_ms = 1;
	fz.c = nvmeh_ctrl_create(&fz.o);
	FUZZ_CHECK(!IS_ERR(fz.c), "host: %ld", PTR_ERR(fz.c));
	return 0;
}

/* A write and its read back on block @lba; 0 when both are right. */
static int fz_serves(u64 lba)
{
	u8 w[512], r[512];
	unsigned int qid = 1 + (unsigned int)(lba % NQ);

	memset(w, (int)(lba * 37 + 1), sizeof(w));
	w[0] = (u8)lba;
	memset(r, 0, sizeof(r));
	if (nvmeh_rw(fz.c, qid, true, lba, 1, w))
		return -1;
	if (nvmeh_rw(fz.c, qid, false, lba, 1, r))
		return -1;
	return memcmp(w, r, sizeof(w)) ? -2 : 0;
}

static void fz_wait_idle(void)
{
	struct timespec ts = { 0, 1000 * 1000 };
	struct nvmet_target_stats st;
	int i;

	for (i = 0; i < 2000; i++) {
		FUZZ_CHECK(!nvmet_target_get_stats(fz.t, &st), "stats");
		if (!st.reqs_inflight && st.queues <= NQ + 1)
			return;
		nanosleep(&ts, NULL);
	}
	FUZZ_CHECK(0, "target idle: %llu requests in flight, %u queues",
		   (unsigned long long)st.reqs_inflight, st.queues);
}

/*
 * Operation @sel (bit 6 set) of the input: 1 when it made request @rq
 * (on queue *@qid), else 0.
 */
static int fz_op(u32 sel, struct fuzz_in *in, struct nvmeh_request *rq, u8 *buf,
		 unsigned int *qid)
{
	static const struct timespec ms = { 0, 1000 * 1000 };
	u32 nsid, lba;

	switch (sel & 3) {
	case 0:
		nvmeh_ctrl_reset(fz.c); /* -EBUSY when not live */
		return 0;
	case 3:
		nanosleep(&ms, NULL);
		return 0;
	default:
		break;
	}
	nsid = fuzz_u8(in) % 3;
	lba = fuzz_u8(in) * 8;
	memset(rq, 0, sizeof(*rq));
	rq->sqe[offsetof(struct nvme_common_command, opcode)] =
		(sel & 3) == 2 ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	nvme_put_le64(rq->sqe + offsetof(struct nvme_common_command, cdw10),
		      lba);
	nvme_put_le32(rq->sqe + offsetof(struct nvme_common_command, cdw12),
		      8 - 1);
	memset(buf, (int)sel, 4096);
	rq->data = buf;
	rq->data_len = 4096;
	rq->write = (sel & 3) == 2;
	*qid = 1 + (sel >> 2 & 1);
	return 1;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);
int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static u8 caps[MAX_CAPSULES][CAPSULE_MAX];
	static u8 bufs[MAX_CAPSULES][4096];
	struct nvmeh_request rq[MAX_CAPSULES];
	struct pending p = { PTHREAD_MUTEX_INITIALIZER,
			     PTHREAD_COND_INITIALIZER, 0 };
	struct fuzz_in in = { data, size };
	int n = 0, ret;
	u64 lba;

	while (in.n && n < MAX_CAPSULES) {
		u32 sel = fuzz_u8(&in);
		unsigned int qid;

		if (sel & 0x40) {
			if (!fz_op(sel, &in, &rq[n], bufs[n], &qid)) {
				n++;
				continue;
			}
		} else {
			u32 len = 1 + fuzz_u16(&in) % CAPSULE_MAX;
			u32 k;

			for (k = 0; k < len; k++)
				caps[n][k] = (u8)fuzz_u8(&in);
			memset(&rq[n], 0, sizeof(rq[n]));
			rq[n].flags = NVMEH_RQ_RAW |
				      (sel & 0x80 ? NVMEH_RQ_OVERDEPTH : 0);
			rq[n].raw = caps[n];
			rq[n].raw_len = len;
			qid = (sel & 0x3f) % (NQ + 1);
		}
		rq[n].done = fz_done;
		rq[n].priv = &p;
		pthread_mutex_lock(&p.m);
		p.left++;
		pthread_mutex_unlock(&p.m);
		ret = nvmeh_submit(fz.c, qid, &rq[n]);
		if (ret) {
			/* a full queue, or a queue down after a reset */
			FUZZ_CHECK(ret == -EBUSY || ret == -ENOTCONN,
				   "submit: %d", ret);
			pthread_mutex_lock(&p.m);
			p.left--;
			pthread_mutex_unlock(&p.m);
		}
		n++;
	}
	/* every capsule ends: answered, or aborted by the host's timeout */
	pthread_mutex_lock(&p.m);
	while (p.left)
		pthread_cond_wait(&p.cv, &p.m);
	pthread_mutex_unlock(&p.m);

	lba = 1 + fz.round++ % 2000;
	if (nvmeh_ctrl_wait_live(fz.c, 3000) || fz_serves(lba)) {
		/* the capsules disabled or killed the controller: a new one */
		if (nvmeh_ctrl_live(fz.c))
			nvmeh_ctrl_reset(fz.c);
		FUZZ_CHECK(!nvmeh_ctrl_wait_live(fz.c, 5000),
			   "no reconnect to the target");
		ret = fz_serves(lba);
		FUZZ_CHECK(!ret,
			   "the target does not serve a new controller"
			   " (%d)",
			   ret);
	}
	fz_wait_idle();
	return 0;
}

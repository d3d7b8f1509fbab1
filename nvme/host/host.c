// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The in-process NVMe-oF/RDMA host: queues (rdma_cm id, QP, CQ, MR pool,
 * capsule and response slots), the data path, the controller bring-up
 * sequence of the Linux host and its error recovery.  The shape follows
 * drivers/nvme/host/rdma.c: a request is done when its send completed
 * and its response arrived (and, when the target did not invalidate the
 * MR, when the LOCAL_INV posted for it completed).
 */
#include "nvme_host.h"

#include "auth.h"

#include <rdmarw/atomic.h>
#include <rdmarw/completion.h>
#include <rdmarw/kernel.h>
#include <rdmarw/list.h>
#include <rdmarw/mr_pool.h>
#include <rdmarw/mutex.h>
#include <rdmarw/rw.h>
#include <rdmarw/scatterlist.h>
#include <rdmarw/workqueue.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The largest capsule a raw request may carry (SQE plus 4 KiB). */
#define NVMEH_CAPSULE_MAX (sizeof(struct nvme_command) + 4096)
/* Pages of one MR, as NVME_RDMA_MAX_SEGMENTS. */
#define NVMEH_MAX_PAGES 256u
/* rdma_cm address and route resolution bound, as the kernel's. */
#define NVMEH_CM_TIMEOUT_MS 3000
/* Internal request flag: allowed on a queue that is connecting. */
#define NVMEH_RQ_SETUP (1u << 16)
/*
 * A slot's response word (struct nvmeh_slot.rsp): the command id in the
 * low 16 bits and one of these: a response for that cid is awaited, it
 * arrived (the slot's @cqe holds it), or the teardown dropped the
 * response's reference.
 */
#define NVMEH_RSP_WAITING (1u << 16)
#define NVMEH_RSP_GOT (1u << 17)
#define NVMEH_RSP_CANCELLED (1u << 18)
#define NVMEH_ALIGN(x, a) (((x) + (a)-1) / (a) * (a))

enum nvmeh_qstate { Q_DOWN, Q_CONNECTING, Q_LIVE };

enum nvmeh_cstate {
	C_NEW,
	C_LIVE,
	C_RESETTING,
	C_CONNECTING,
	C_DELETING,
	C_DEAD,
};

struct nvmeh_queue;

/*
 * A region registered with nvmeh_buf_reg(): one MR per queue, in the
 * queue's PD, for the whole region (@mrs[qid], set and cleared under the
 * controller's buf_lock and the queue's lock; NULL while the queue has no
 * PD).  A request naming the region sits in its slot's @buf until it ends
 * (no counter: the deregistration looks at the slots).
 */
struct nvmeh_buf {
	struct nvmeh_ctrl *ctrl;
	struct list_head entry; /* ctrl->bufs, under ctrl->buf_lock */
	u64 addr;
	u64 len;
	bool closing; /* atomic: a deregistration is looking at the slots */
	struct ib_mr *mrs[];
};

/*
 * A command slot.  Its request ends once, when @ref goes to zero
 * (nvme_rdma's req->ref): the SEND holds a reference until its completion,
 * the response holds one until it arrives, and hands it to the LOCAL_INV
 * it posts when the target did not invalidate the MR.  A queue's teardown
 * drops the reference of a response that can no longer come
 * (NVMEH_RSP_CANCELLED).
 *
 * @rsp decides between the response and the teardown without a lock: the
 * submission stores "cid, waiting" in it, and whichever of the response
 * for that cid and the teardown's cancel changes that value first (a
 * compare-and-exchange) owns the response's reference; the other finds
 * the value changed and ends nothing.
 *
 * A slot whose chain a post refused at the SEND after its REG_MR is @held
 * without a request, its one reference the REG_MR's, until that REG_MR's
 * flush or the queue's teardown frees it (nvmeh_slot_refused()).
 */
struct nvmeh_slot {
	struct nvmeh_queue *q;
	struct nvmeh_request *rq;
	u16 tag;
	u8 gen;
	bool busy; /* atomic: set under the queue's lock, cleared without */
	u32 rsp; /* atomic: cid | NVMEH_RSP_* */
	u64 deadline; /* ms (CLOCK_MONOTONIC) after which it has timed out */
	atomic_t ref;
	struct ib_mr *mr; /* atomic where a late response may read it */
	/* the region the request names (atomic: set under the queue's lock,
	 * cleared without it when the request ends) */
	struct nvmeh_buf *buf;
	bool mapped;
	/* atomic: the request has ended but its refused chain's REG_MR is
	 * queued: the slot keeps its MR (nvmeh_slot_refused()) */
	bool held;
	enum dma_data_direction dir;
	struct scatterlist sg;
	u8 *capsule;
	u64 capsule_dma;
	u8 cqe[sizeof(struct nvme_completion)];
	struct ib_cqe send_cqe;
	struct ib_cqe reg_cqe;
	struct ib_cqe inv_cqe;
	struct ib_sge sge[2];
	struct ib_send_wr send_wr;
	struct ib_reg_wr reg_wr;
	struct ib_send_wr inv_wr;
	/* in a pass's plug (nvmeh_plug_add()): the chain's first WR, the next
	 * slot of the plug (the owner's, under the queue's lock) */
	struct ib_send_wr *first;
	struct nvmeh_slot *plug_next;
};

struct nvmeh_rsp {
	struct nvmeh_queue *q;
	u8 *buf;
	struct ib_cqe cqe;
	struct ib_sge sge;
	struct ib_recv_wr wr;
};

/*
 * The thread of a polled I/O queue (nvmeh_opts.poll): it polls the queue's
 * IB_POLL_DIRECT CQ and, idle for poll_idle_us, arms it and sleeps on
 * @wake until the CQ's comp_handler sets @kick.
 */
struct nvmeh_poller {
	pthread_t thread;
	bool started;
	bool inited; /* @lock and @wake, until the CQ is freed */
	pthread_mutex_t lock; /* kick, sleeping */
	pthread_cond_t wake;
	bool kick;
	bool sleeping;
	bool stop; /* atomic */
	u64 idle_ns;
	u64 sleeps; /* atomic; kept across reconnects, summed by stats */
};

/*
 * A queue's data-path counters: relaxed adds by the threads that submit
 * and complete on the queue, so that no line is written by two queues (the
 * controller's state_lock was taken per command for them); kept across
 * reconnects, summed by nvmeh_ctrl_stats().
 */
struct nvmeh_qstats {
	u64 aborted;
	u64 local_invs;
	u64 remote_invs;
	u64 inline_writes;
	u64 bad_cqes;
};

#define nvmeh_qstat_inc(q, field) \
	__atomic_fetch_add(&(q)->st.field, 1, __ATOMIC_RELAXED)

struct nvmeh_queue {
	struct nvmeh_ctrl *ctrl;
	unsigned int qid;
	u32 depth;
	u32 nslots;
	struct nvmeh_slot *slots;
	struct nvmeh_rsp *rsps;
	u8 *capbuf;
	u8 *rspbuf;
	u64 capbuf_dma;
	u64 rspbuf_dma;
	bool capbuf_mapped;
	bool rspbuf_mapped;
	struct mutex lock; /* state, slot allocation, posting */
	enum nvmeh_qstate state;
	u32 next_tag;
	u32 max_xfer; /* data per command (under @lock) */
	u32 inline_max; /* in-capsule write limit (under @lock) */
	struct rdma_cm_id *cm_id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct nvmeh_poller poller; /* polled I/O queues */
	/*
	 * poll_external: the CQ nvmeh_poll() polls, set once the CQ exists
	 * and cleared before the teardown drains it, under @poll_lock, which
	 * a pass holds (a pass that finds it taken skips the queue).
	 */
	pthread_mutex_t poll_lock;
	struct ib_cq *pcq;
	/*
	 * The plug of the pass in progress (nvmeh_plug_start()): @plug_owner
	 * (atomic) is the polling thread while a pass is under way, else 0;
	 * the rest is that thread's, touched under @lock.
	 */
	pthread_t plug_owner;
	struct nvmeh_slot *plug_head;
	struct nvmeh_slot **plug_tail;
	struct ib_send_wr **plug_wr_tail;
	struct nvmeh_qstats st;
	struct ib_qp *qp;
	bool pool;
	bool connected;
	/* every region has its MR in @pd (under @lock and ctrl->buf_lock) */
	bool bufs_ready;
	/* CM events, written by the handler */
	struct completion cm_done;
	enum rdma_cm_event_type cm_event;
	int cm_status;
	u16 rej_sts;
};

struct nvmeh_ctrl {
	struct nvmeh_opts opts;
	/* opts.io_timeout_ms plus a tick of the deadlines' clock (nvmeh_now_ms) */
	u32 deadline_ms;
	struct nvmeh_queue *queues;
	unsigned int nr_queues; /* admin + I/O queues allocated */
	struct nvmeh_info info; /* published by nvmeh_set_live() */
	struct nvmeh_info sinfo; /* what the bring-up in progress learns */
	struct mutex state_lock; /* state, stats, reconnect attempts */
	enum nvmeh_cstate state;
	unsigned int attempts;
	struct completion live;
	struct nvmeh_stats stats;
	struct workqueue_struct *wq;
	struct work_struct err_work;
	struct delayed_work reconnect_work;
	struct delayed_work ka_work;
	struct delayed_work timeout_work;
	struct nvmeh_request ka_rq;
	atomic_t ka_busy;
	u8 *cdata;
	struct mutex auth_lock; /* auth_tid, the authentications */
	u16 auth_tid; /* the next DH-HMAC-CHAP transaction id */
	/* registered regions; regions' MRs; bufs_closed: being destroyed */
	struct mutex buf_lock;
	struct list_head bufs;
	bool bufs_closed;
};

static _Thread_local u16 nvmeh_status_tls, nvmeh_reject_tls;
static _Thread_local u64 nvmeh_result_tls;

/*
 * Milliseconds for the commands' deadlines, read once per submission: the
 * coarse clock (the last tick, as the kernel's blk-mq stamps jiffies), a
 * fifth of CLOCK_MONOTONIC's cost here (9.5 against 45.6 ns under load,
 * bench/README.md); stamps and the timeout work's checks read the same
 * clock.  A stamp lags the submission by up to a tick (1-10 ms), so a
 * deadline is the timeout plus a tick (nvmeh_deadline_ms()): never early,
 * at most two ticks late.
 */
static u64 nvmeh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

/* @timeout_ms plus the coarse clock's resolution, rounded up to a ms. */
static u32 nvmeh_deadline_ms(u32 timeout_ms)
{
	struct timespec res = { .tv_nsec = 10000000 }; /* if unknown: 10 ms */
	u64 tick;

	clock_getres(CLOCK_MONOTONIC_COARSE, &res);
	tick = ((u64)res.tv_sec * 1000000000 + (u64)res.tv_nsec + 999999) /
	       1000000;
	tick = tick ? tick : 1;
	return timeout_ms > UINT32_MAX - tick ? UINT32_MAX :
						timeout_ms + (u32)tick;
}

static void nvmeh_error_recovery(struct nvmeh_ctrl *ctrl);

static void nvmeh_stat_add(struct nvmeh_ctrl *ctrl, u64 *field)
{
	mutex_lock(&ctrl->state_lock);
	(*field)++;
	mutex_unlock(&ctrl->state_lock);
}

/* ---- slots: the end of a request --------------------------------------- */

/*
 * Give back what a request's data took: its DMA mapping, its MR, its hold
 * on a registered region (release: nvmeh_buf_dereg() reads it acquire).
 */
static inline __attribute__((always_inline)) void
nvmeh_unmap_slot(struct nvmeh_queue *q, struct nvmeh_slot *slot)
{
	if (slot->mapped) {
		ib_dma_unmap_sg(q->dev, &slot->sg, 1, slot->dir);
		slot->mapped = false;
	}
	if (slot->mr) {
		ib_mr_pool_put(q->qp, &q->qp->rdma_mrs, slot->mr);
		__atomic_store_n(&slot->mr, NULL, __ATOMIC_RELAXED);
	}
	if (slot->buf)
		__atomic_store_n(&slot->buf, NULL, __ATOMIC_RELEASE);
}

/* The same, out of the submission's way: its error paths. */
static __attribute__((noinline, cold)) void
nvmeh_unmap_failed(struct nvmeh_queue *q, struct nvmeh_slot *slot)
{
	nvmeh_unmap_slot(q, slot);
}

/* The end of every request that was submitted: @rq's @done, last. */
static void nvmeh_slot_release(struct nvmeh_slot *slot,
			       struct nvmeh_request *rq)
{
	/*
	 * Free the slot without the queue's lock: a release store, which the
	 * next submission's look (under the lock, acquire) pairs with.
	 * @rsp keeps its value (this cid, answered or cancelled) until that
	 * submission stores its own, so a response for this cid that comes
	 * now is still refused, and a teardown that looks at the slot
	 * meanwhile ends nothing twice (the reference count decides, see
	 * nvmeh_slot_abort()).
	 */
	slot->rq = NULL;
	__atomic_store_n(&slot->busy, false, __ATOMIC_RELEASE);
	rq->done(rq);
}

static void nvmeh_slot_finish(struct nvmeh_slot *slot)
{
	struct nvmeh_queue *q = slot->q;
	struct nvmeh_request *rq = slot->rq;

	nvmeh_unmap_slot(q, slot);
	/* acquire: the response stored the CQE before it marked it GOT */
	if (__atomic_load_n(&slot->rsp, __ATOMIC_ACQUIRE) & NVMEH_RSP_GOT) {
		rq->error = 0;
		rq->status = nvme_get_le16(slot->cqe +
					   offsetof(struct nvme_completion,
						    status)) >>
			     1;
		rq->result = nvme_get_le64(
			slot->cqe + offsetof(struct nvme_completion, result));
	} else {
		rq->error = -ECONNABORTED;
		rq->status = NVME_SC_HOST_ABORTED_CMD;
		rq->result = 0;
		nvmeh_qstat_inc(q, aborted);
	}
	nvmeh_slot_release(slot, rq);
}

/*
 * Drop a reference; the last one ends the request.  A slot whose count
 * nvmeh_slot_abort() took to zero goes below it here and ends nothing.
 */
static void nvmeh_slot_put(struct nvmeh_slot *slot)
{
	if (atomic_dec_and_test(&slot->ref))
		nvmeh_slot_finish(slot);
}

/*
 * End the request now, whatever references are left, unless it has ended
 * already: taking the count to zero in one exchange decides between this
 * and a completion's nvmeh_slot_put() (the blk-mq state change that makes
 * nvme_cancel_request() and a late completion end a request once).
 */
static void nvmeh_slot_abort(struct nvmeh_slot *slot)
{
	if (atomic_xchg(&slot->ref, 0) > 0)
		nvmeh_slot_finish(slot);
}

/* nvme_rdma_wr_error(): any failed WR, flushed ones too, resets a live ctrl */
static void nvmeh_wr_error(struct nvmeh_queue *q, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS)
		nvmeh_error_recovery(q->ctrl);
}

static void nvmeh_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nvmeh_slot *slot =
		container_of(wc->wr_cqe, struct nvmeh_slot, send_cqe);

	(void)cq;
	nvmeh_wr_error(slot->q, wc);
	nvmeh_slot_put(slot);
}

/*
 * Free a held slot (nvmeh_slot_refused()) once: its request has ended, its
 * REG_MR is done (flushed, or drained).  Its one reference decides between
 * the REG_MR's completion and the queue's teardown.
 */
static void nvmeh_slot_unhold(struct nvmeh_slot *slot)
{
	if (atomic_xchg(&slot->ref, 0) <= 0)
		return;
	nvmeh_unmap_slot(slot->q, slot);
	__atomic_store_n(&slot->held, false, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->busy, false, __ATOMIC_RELEASE);
}

/*
 * Unsignaled: called only when the registration failed or flushed.  A held
 * slot's REG_MR (a chain refused at its SEND) gives the slot's MR back
 * here: nothing of the chain is queued any more.
 */
static void nvmeh_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nvmeh_slot *slot =
		container_of(wc->wr_cqe, struct nvmeh_slot, reg_cqe);

	(void)cq;
	nvmeh_wr_error(slot->q, wc);
	/* acquire: the hold's stores (nvmeh_slot_refused()) */
	if (__atomic_load_n(&slot->held, __ATOMIC_ACQUIRE))
		nvmeh_slot_unhold(slot);
}

static void nvmeh_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nvmeh_slot *slot =
		container_of(wc->wr_cqe, struct nvmeh_slot, inv_cqe);

	(void)cq;
	nvmeh_wr_error(slot->q, wc);
	nvmeh_slot_put(slot);
}

static int nvmeh_post_recv(struct nvmeh_rsp *rsp)
{
	const struct ib_recv_wr *bad;

	return ib_post_recv(rsp->q->qp, &rsp->wr, &bad);
}

static void nvmeh_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nvmeh_rsp *rsp = container_of(wc->wr_cqe, struct nvmeh_rsp, cqe);
	struct nvmeh_queue *q = rsp->q;
	struct nvmeh_slot *slot = NULL;
	struct ib_mr *mr = NULL;
	u32 want;
	u16 cid, tag;

	(void)cq;
	if (wc->status != IB_WC_SUCCESS) {
		nvmeh_wr_error(q, wc);
		return;
	}
	if (wc->byte_len < sizeof(struct nvme_completion)) {
		nvmeh_qstat_inc(q, bad_cqes);
		nvmeh_error_recovery(q->ctrl);
		return;
	}
	cid = nvme_get_le16(rsp->buf +
			    offsetof(struct nvme_completion, command_id));
	tag = cid & 0xfff;
	/*
	 * The cid's slot awaits this response: its word holds exactly this
	 * cid, waiting (a free slot, another generation, an answered or a
	 * cancelled one hold something else).  The responses of a queue are
	 * processed one at a time (its CQ's one poller), so only the
	 * teardown's cancel can change the word between this look and the
	 * exchange below; while it has not, no one reads the slot's CQE or
	 * ends the request.  So: copy the CQE and read the request's MR
	 * first, then mark the response in one compare-and-exchange
	 * (release: nvmeh_slot_finish() reads the CQE after seeing GOT).  If
	 * the cancel came first, the copy is never read (the request ends
	 * without a response) and the response is refused as before.
	 */
	want = cid | NVMEH_RSP_WAITING;
	if (tag < q->nslots &&
	    __atomic_load_n(&q->slots[tag].rsp, __ATOMIC_RELAXED) == want) {
		slot = &q->slots[tag];
		memcpy(slot->cqe, rsp->buf, sizeof(struct nvme_completion));
		/* the request's MR while the response holds its reference
		 * (a teardown whose drain failed may end the request after
		 * the exchange) */
		mr = __atomic_load_n(&slot->mr, __ATOMIC_RELAXED);
		if (!__atomic_compare_exchange_n(
			    &slot->rsp, &want, cid | NVMEH_RSP_GOT, false,
			    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			slot = NULL;
	}
	if (!slot) {
		/* nvme_rdma_process_nvme_rsp(): a bogus cid is fatal */
		nvmeh_qstat_inc(q, bad_cqes);
		nvmeh_error_recovery(q->ctrl);
		return;
	}
	if (nvmeh_post_recv(rsp))
		nvmeh_error_recovery(q->ctrl);
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		/*
		 * nvme_rdma_process_nvme_rsp(): only the command's own MR may
		 * be invalidated; a command without one (no data, in-capsule,
		 * a registered region's: nvmeh_buf_reg()) asked for nothing,
		 * and another key is bogus.  The response still ends the
		 * command; the reset replaces what was invalidated.
		 */
		if (!mr || wc->ex.invalidate_rkey != mr->rkey) {
			/* an error: the controller's count (a queue's stays
			 * within its 512 bytes) */
			nvmeh_stat_add(q->ctrl, &q->ctrl->stats.bad_invs);
			nvmeh_error_recovery(q->ctrl);
		} else {
			nvmeh_qstat_inc(q, remote_invs);
		}
	} else if (mr) {
		const struct ib_send_wr *bad;

		slot->inv_wr = (struct ib_send_wr){
			.wr_cqe = &slot->inv_cqe,
			.opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = mr->rkey,
		};
		nvmeh_qstat_inc(q, local_invs);
		if (!ib_post_send(q->qp, &slot->inv_wr, &bad))
			return; /* nvmeh_inv_done() puts the slot */
		nvmeh_error_recovery(q->ctrl);
	}
	nvmeh_slot_put(slot);
}

/* ---- queues ------------------------------------------------------------ */

static int nvmeh_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct nvmeh_queue *q = id->context;
	const u8 *rej;
	u8 len = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		nvmeh_error_recovery(q->ctrl);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		rej = rdma_consumer_reject_data(id, ev, &len);
		q->rej_sts = rej && len >= sizeof(struct nvme_rdma_cm_rej) ?
				     nvme_get_le16(rej + 2) :
				     0;
		break;
	default:
		break;
	}
	q->cm_event = ev->event;
	q->cm_status = ev->status;
	complete(&q->cm_done);
	return 0;
}

/* Wait for the CM's answer to a step; 0 when it is @want. */
static int nvmeh_cm_wait(struct nvmeh_queue *q, enum rdma_cm_event_type want)
{
	if (!wait_for_completion_timeout(&q->cm_done,
					 msecs_to_jiffies(NVMEH_CM_TIMEOUT_MS)))
		return -ETIMEDOUT;
	if (q->cm_event == want)
		return 0;
	if (q->cm_event == RDMA_CM_EVENT_REJECTED) {
		nvmeh_reject_tls = q->rej_sts;
		return -ECONNREFUSED;
	}
	return q->cm_status < 0 ? q->cm_status : -ECONNRESET;
}

/*
 * End the requests of a queue whose QP is drained: nvme_rdma's
 * nvme_cancel_tagset() after its queues are stopped.  No response comes
 * any more, so the teardown drops the reference each request still holds
 * for its response; a request whose SEND or LOCAL_INV has completed (as
 * the drains make sure) ends there, with -ECONNABORTED.  If a drain
 * failed (it ran out of time: completions not processed yet), a request
 * may still hold other references: it ends here too, once; its
 * completions, when they come, end nothing.  A slot held for the REG_MR
 * of a refused chain (nvmeh_slot_refused()) has no request: it is freed,
 * its MR given back.
 */
static void nvmeh_cancel_slots(struct nvmeh_queue *q, bool drained)
{
	u32 i;

	for (i = 0; i < q->nslots; i++) {
		struct nvmeh_slot *slot = &q->slots[i];
		u32 cur = __atomic_load_n(&slot->rsp, __ATOMIC_RELAXED);
		bool cancel = false;

		/* against a response being processed: one exchange wins */
		while ((cur & NVMEH_RSP_WAITING) && !cancel)
			cancel = __atomic_compare_exchange_n(
				&slot->rsp, &cur,
				(cur & 0xffff) | NVMEH_RSP_CANCELLED, false,
				__ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
		if (cancel)
			nvmeh_slot_put(slot);
	}
	for (i = 0; i < q->nslots; i++) {
		struct nvmeh_slot *slot = &q->slots[i];
		bool busy;

		mutex_lock(&q->lock);
		busy = __atomic_load_n(&slot->busy, __ATOMIC_ACQUIRE);
		mutex_unlock(&q->lock);
		if (!busy)
			continue;
		/* a held slot whose REG_MR ran (unsignaled: no completion)
		 * is freed by the drain, which ran everything queued */
		if (__atomic_load_n(&slot->held, __ATOMIC_ACQUIRE)) {
			nvmeh_slot_unhold(slot);
			continue;
		}
		/* a drain that succeeded leaves none */
		WARN_ON_ONCE(drained);
		nvmeh_slot_abort(slot);
	}
}

/* ---- a refused post ---------------------------------------------------- */

/*
 * Move @q's QP to ERR after a post that queued part of a chain, so that
 * the queued part flushes (rdma_rw_ctx_post()'s rule); allowed beside other
 * posts, as rdma_disconnect() does it.
 */
static void nvmeh_qp_stop(struct nvmeh_queue *q)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	WARN_ON_ONCE(ib_modify_qp(q->qp, &attr, IB_QP_STATE));
}

/**
 * nvmeh_slot_refused() - what a slot whose chain a post refused keeps
 * @q: the slot's queue (its lock held)
 * @slot: a submitted slot whose SEND the post did not queue
 * @first: the slot's chain's first WR (its REG_MR, or its SEND)
 * @bad: the WR the post refused (ib_post_send()'s @bad_wr; NULL: unknown)
 *
 * The one rule for both post sites (nvmeh_submit(), nvmeh_plug_flush()).
 * No response can come: the slot stops waiting for one and has no request
 * any more (the caller ends it with the post's error: the target never saw
 * it).  Refused at the chain's first WR (or before it, in a plug), nothing
 * of it is queued: the slot gives back its mapping and MR and is free.
 * Refused at the SEND after the slot's REG_MR was accepted, the chain
 * stopped part-way: the REG_MR is queued and will run or flush, and an MR
 * given back now could be registered again by another command while it is.
 * So the slot stays taken with its MR and one reference, the QP goes to
 * ERR (what is queued flushes) and the controller starts error recovery;
 * the REG_MR's flush completion (nvmeh_reg_done()) or the queue's teardown
 * after its drain (nvmeh_cancel_slots()) frees the slot.  The kernel's
 * nvme_rdma_queue_rq() unmaps at once; see docs/deviations.md.
 */
static void nvmeh_slot_refused(struct nvmeh_queue *q, struct nvmeh_slot *slot,
			       const struct ib_send_wr *first,
			       const struct ib_send_wr *bad)
{
	__atomic_store_n(&slot->rsp, slot->rq->cid, __ATOMIC_RELAXED);
	slot->rq = NULL;
	if (first == &slot->send_wr || (bad && bad != &slot->send_wr)) {
		atomic_set(&slot->ref, 0);
		nvmeh_unmap_failed(q, slot);
		__atomic_store_n(&slot->busy, false, __ATOMIC_RELEASE);
		return;
	}
	atomic_set(&slot->ref, 1);
	/* release: a completion that reads it frees the slot (rq NULL) */
	__atomic_store_n(&slot->held, true, __ATOMIC_RELEASE);
	nvmeh_qp_stop(q);
	nvmeh_error_recovery(q->ctrl);
}

/* ---- a pass's plug: one post per pass ---------------------------------- */

/*
 * A pass over a queue's completions (nvmeh_poll(), a poller's turn) plugs
 * the queue for its thread: what the pass's @done callbacks submit to that
 * queue is linked into one chain and posted with one ib_post_send() when
 * the pass ends (nvmeh_plug_flush()): blk-mq's plug and bd->last, one
 * doorbell per pass instead of one per command.  Other threads' submissions
 * are not held.  The wait is the rest of the pass: no request waits for a
 * later one.
 */
static void nvmeh_plug_start(struct nvmeh_queue *q)
{
	q->plug_head = NULL;
	q->plug_tail = &q->plug_head;
	q->plug_wr_tail = NULL;
	__atomic_store_n(&q->plug_owner, pthread_self(), __ATOMIC_RELAXED);
}

/* Whether a submission to @q is this thread's during its pass (q->lock). */
static inline bool nvmeh_plugged(struct nvmeh_queue *q)
{
	return pthread_equal(__atomic_load_n(&q->plug_owner, __ATOMIC_RELAXED),
			     pthread_self());
}

/* Link @slot's chain (@first to its send_wr) after the plug's (q->lock). */
static void nvmeh_plug_add(struct nvmeh_queue *q, struct nvmeh_slot *slot,
			   struct ib_send_wr *first)
{
	slot->first = first;
	slot->plug_next = NULL;
	*q->plug_tail = slot;
	q->plug_tail = &slot->plug_next;
	if (q->plug_wr_tail)
		*q->plug_wr_tail = first;
	q->plug_wr_tail = &slot->send_wr.next;
}

/* Whether @wr is one of @slot's chain (its REG_MR, its SEND). */
static bool nvmeh_slot_has_wr(const struct nvmeh_slot *slot,
			      const struct ib_send_wr *wr)
{
	return wr == slot->first || wr == &slot->send_wr;
}

/*
 * A request the plug could not send: as nvme_host_path_error() ends one
 * whose queue_rq() failed to post, with the post's error (its slot is
 * nvmeh_slot_refused()'s already).
 */
static void nvmeh_rq_unsent(struct nvmeh_request *rq, int err)
{
	rq->error = err;
	rq->status = NVME_SC_HOST_PATH_ERROR;
	rq->result = 0;
	rq->done(rq);
}

/*
 * End the pass's plug: post its chain.  The slots wholly before the WR the
 * post refused were sent; that WR's slot and every later one were not
 * (nvmeh_slot_refused() says what each keeps), and end with the error
 * (their @done may submit again: not plugged any more).
 */
static void nvmeh_plug_flush(struct nvmeh_queue *q)
{
	struct nvmeh_slot *head = q->plug_head, *slot, *next;
	const struct ib_send_wr *bad = NULL;
	struct nvmeh_request *rq;
	int ret;

	__atomic_store_n(&q->plug_owner, (pthread_t)0, __ATOMIC_RELAXED);
	if (!head)
		return;
	q->plug_head = NULL;
	mutex_lock(&q->lock);
	ret = ib_post_send(q->qp, head->first, &bad);
	mutex_unlock(&q->lock);
	if (!ret)
		return;
	slot = head;
	while (slot && bad && !nvmeh_slot_has_wr(slot, bad))
		slot = slot->plug_next;
	if (WARN_ON_ONCE(!slot))
		slot = head; /* a refused WR that is none of the chain's */
	/*
	 * The slots are this pass's until freed: the teardown waits for the
	 * pass (poll_lock, the poller's stop), and no one else polls the CQ.
	 */
	for (; slot; slot = next) {
		next = slot->plug_next;
		rq = slot->rq;
		mutex_lock(&q->lock);
		nvmeh_slot_refused(q, slot, slot->first, bad);
		mutex_unlock(&q->lock);
		nvmeh_rq_unsent(rq, ret);
	}
}

/* ---- polled I/O queues (nvmeh_opts.poll) ---------------------------------------------- */

/* Completions per ib_process_cq_direct() call of a poller. */
#define NVMEH_POLL_BUDGET 32
#define NVMEH_POLL_IDLE_US 50 /* default poll_idle_us */

static u64 nvmeh_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* The comp_handler of a polled queue's CQ: armed, its poller sleeps. */
static void nvmeh_poll_kick(struct ib_cq *cq, void *ctx)
{
	struct nvmeh_queue *q = ctx;
	struct nvmeh_poller *p = &q->poller;

	(void)cq;
	pthread_mutex_lock(&p->lock);
	p->kick = true;
	if (p->sleeping)
		pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

/* Idle: arm the CQ (a missed completion says so) and sleep until a kick. */
static void nvmeh_poll_sleep(struct nvmeh_queue *q)
{
	struct nvmeh_poller *p = &q->poller;

	if (ib_req_notify_cq(q->cq,
			     IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS) > 0)
		return;
	pthread_mutex_lock(&p->lock);
	if (!p->kick && !__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&p->sleeps, 1, __ATOMIC_RELAXED);
		p->sleeping = true;
		while (!p->kick && !__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
			pthread_cond_wait(&p->wake, &p->lock);
		p->sleeping = false;
	}
	p->kick = false;
	pthread_mutex_unlock(&p->lock);
}

/*
 * A polled queue's own thread: ib_process_cq_direct() in a loop; after
 * poll_idle_us without a completion, nvmeh_poll_sleep().
 */
static void *nvmeh_poll_thread(void *arg)
{
	struct nvmeh_queue *q = arg;
	struct nvmeh_poller *p = &q->poller;
	u64 idle_since = 0, now;
	int n;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		nvmeh_plug_start(q);
		n = ib_process_cq_direct(q->cq, NVMEH_POLL_BUDGET);
		nvmeh_plug_flush(q);
		if (n > 0) {
			idle_since = 0;
			continue;
		}
		sched_yield();
		now = nvmeh_now_ns();
		if (!idle_since)
			idle_since = now;
		else if (now - idle_since >= p->idle_ns) {
			nvmeh_poll_sleep(q);
			idle_since = 0;
		}
	}
	return NULL;
}

/* Start @q's poller on its IB_POLL_DIRECT CQ. */
static int nvmeh_poll_start(struct nvmeh_queue *q)
{
	struct nvmeh_poller *p = &q->poller;
	unsigned int us = q->ctrl->opts.poll_idle_us;
	int ret;

	p->idle_ns = 1000ull * (us ? us : NVMEH_POLL_IDLE_US);
	p->kick = p->sleeping = p->stop = false;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->inited = true;
	q->cq->comp_handler = nvmeh_poll_kick;
	ret = -pthread_create(&p->thread, NULL, nvmeh_poll_thread, q);
	if (ret)
		return ret; /* nvmeh_poll_fini() in the teardown */
	p->started = true;
	return 0;
}

/*
 * Stop @q's poller (before the drain, which then polls the CQ itself).
 * Never from the poller: a done() does not tear its queue down.  The lock
 * stays until the CQ is freed (nvmeh_poll_fini()): an armed CQ may still
 * call nvmeh_poll_kick(), for the drain's markers for one.
 */
static void nvmeh_poll_stop(struct nvmeh_queue *q)
{
	struct nvmeh_poller *p = &q->poller;

	if (!p->started)
		return;
	if (WARN_ON_ONCE(pthread_equal(pthread_self(), p->thread)))
		return;
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->started = false;
}

/* After the CQ is freed: nothing calls nvmeh_poll_kick() any more. */
static void nvmeh_poll_fini(struct nvmeh_queue *q)
{
	struct nvmeh_poller *p = &q->poller;

	if (!p->inited)
		return;
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	p->inited = false;
}

/* ---- registered regions (nvmeh_buf_reg()) ------------------------------ */

/* The region's MR in @q's PD: remote read and write, the region only. */
static struct ib_mr *nvmeh_buf_mr(struct nvmeh_queue *q, struct nvmeh_buf *buf)
{
	return ib_reg_user_mr(q->pd, buf->addr, buf->len, buf->addr,
			      IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				      IB_ACCESS_REMOTE_WRITE);
}

/* Take @buf's MR on @q away (@q's lock, the controller's buf_lock held). */
static void nvmeh_buf_put_mr(struct nvmeh_queue *q, struct nvmeh_buf *buf)
{
	struct ib_mr *mr;

	mutex_lock(&q->lock);
	mr = buf->mrs[q->qid];
	buf->mrs[q->qid] = NULL;
	mutex_unlock(&q->lock);
	if (mr)
		WARN_ON_ONCE(ib_dereg_mr(mr));
}

/*
 * A queue's connect, once its PD exists: register every region in it.
 * On an error the MRs made so far stay for nvmeh_queue_bufs_put().
 */
static int nvmeh_queue_bufs_get(struct nvmeh_queue *q)
{
	struct nvmeh_ctrl *ctrl = q->ctrl;
	struct nvmeh_buf *buf;
	struct ib_mr *mr;
	int ret = 0;

	mutex_lock(&ctrl->buf_lock);
	list_for_each_entry(buf, &ctrl->bufs, entry)
	{
		mr = nvmeh_buf_mr(q, buf);
		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			break;
		}
		mutex_lock(&q->lock);
		buf->mrs[q->qid] = mr;
		mutex_unlock(&q->lock);
	}
	mutex_lock(&q->lock);
	q->bufs_ready = !ret;
	mutex_unlock(&q->lock);
	mutex_unlock(&ctrl->buf_lock);
	return ret;
}

/* A queue's teardown, before its PD goes: deregister the regions' MRs. */
static void nvmeh_queue_bufs_put(struct nvmeh_queue *q)
{
	struct nvmeh_ctrl *ctrl = q->ctrl;
	struct nvmeh_buf *buf;

	mutex_lock(&ctrl->buf_lock);
	mutex_lock(&q->lock);
	q->bufs_ready = false;
	mutex_unlock(&q->lock);
	list_for_each_entry(buf, &ctrl->bufs, entry)
	{
		nvmeh_buf_put_mr(q, buf);
	}
	mutex_unlock(&ctrl->buf_lock);
}

struct nvmeh_buf *nvmeh_buf_reg(struct nvmeh_ctrl *ctrl, void *addr, size_t len)
{
	struct nvmeh_buf *buf;
	struct ib_mr *mr;
	unsigned int i;
	bool ready;
	int ret = 0;

	if (!ctrl || !addr || !len || (uintptr_t)addr + len < (uintptr_t)addr)
		return ERR_PTR(-EINVAL);
	buf = calloc(1, sizeof(*buf) + ctrl->nr_queues * sizeof(buf->mrs[0]));
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->ctrl = ctrl;
	buf->addr = (uintptr_t)addr;
	buf->len = len;
	mutex_lock(&ctrl->buf_lock);
	if (ctrl->bufs_closed)
		ret = -ENODEV;
	/* the queues that connect later register it in their connect */
	for (i = 0; i < ctrl->nr_queues && !ret; i++) {
		struct nvmeh_queue *q = &ctrl->queues[i];

		mutex_lock(&q->lock);
		ready = q->bufs_ready;
		mutex_unlock(&q->lock);
		if (!ready)
			continue;
		mr = nvmeh_buf_mr(q, buf);
		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			break;
		}
		mutex_lock(&q->lock);
		buf->mrs[i] = mr;
		mutex_unlock(&q->lock);
	}
	if (ret) {
		for (i = 0; i < ctrl->nr_queues; i++)
			nvmeh_buf_put_mr(&ctrl->queues[i], buf);
		mutex_unlock(&ctrl->buf_lock);
		free(buf);
		return ERR_PTR(ret);
	}
	list_add_tail(&buf->entry, &ctrl->bufs);
	mutex_unlock(&ctrl->buf_lock);
	return buf;
}

int nvmeh_buf_dereg(struct nvmeh_buf *buf)
{
	struct nvmeh_ctrl *ctrl;
	bool busy = false;
	unsigned int i;
	u32 k;

	if (!buf)
		return -EINVAL;
	ctrl = buf->ctrl;
	mutex_lock(&ctrl->buf_lock);
	/*
	 * Closed first: a submission that found it open did so under its
	 * queue's lock, and had its slot hold the region before letting go
	 * of the lock; the ones after see it closed.  So once each queue's
	 * lock has been taken below, no slot takes the region any more, and
	 * a request that ends lets go of it (release, read acquire here).
	 */
	__atomic_store_n(&buf->closing, true, __ATOMIC_RELAXED);
	for (i = 0; i < ctrl->nr_queues && !busy; i++) {
		struct nvmeh_queue *q = &ctrl->queues[i];

		mutex_lock(&q->lock);
		for (k = 0; k < q->nslots && !busy; k++)
			busy = __atomic_load_n(&q->slots[k].buf,
					       __ATOMIC_ACQUIRE) == buf;
		mutex_unlock(&q->lock);
	}
	if (busy) {
		__atomic_store_n(&buf->closing, false, __ATOMIC_RELAXED);
		mutex_unlock(&ctrl->buf_lock);
		return -EBUSY;
	}
	for (i = 0; i < ctrl->nr_queues; i++)
		nvmeh_buf_put_mr(&ctrl->queues[i], buf);
	list_del(&buf->entry);
	mutex_unlock(&ctrl->buf_lock);
	free(buf);
	return 0;
}

/*
 * After a drain that ran out of time: wait until the CQ's thread has left
 * every done() it was in, before the MR pool, the QP and the CQ go.
 *
 * The drain times out when that thread stays in a done() (a ULP's, or
 * nvmeh_recv_done() itself) for the drain timeout.  It may be inside
 * nvmeh_recv_done() past its exchange: that response is the slot's now,
 * so nvmeh_cancel_slots() ends its request, and the thread then reposts
 * the buffer on q->qp, reads the MR's key and posts a LOCAL_INV on q->qp.
 * Freeing the pool and the QP under it is a use after free.  Waiting is
 * what the kernel does (its ib_drain_qp() never gives up, and
 * ib_free_cq() flushes the CQ's work), and adds no hang: ib_free_cq()
 * below joins that thread too (src/core/cq.c, stop_thread()), with no
 * bound; what changes is that the wait comes before what the thread uses
 * goes.  It comes after nvmeh_cancel_slots(): the requests' ends
 * (their done()s) may be what the thread waits for.
 *
 * The wait is a drain of the Send Queue, again until it succeeds: its
 * marker's completion is delivered by that same thread, after the done()
 * it is in, so once it came the thread has left it; what it processes
 * later uses neither the pool nor the QP (every slot has ended and no
 * response can be taken any more: nvmeh_cancel_slots()).  Each round that
 * runs out of time is a warning (counted, printed once:
 * rdmarw_warn_count()).  Any other answer ends the wait: -EDEADLK (torn
 * down from a done() of this very thread, which is then in no other) or a
 * QP that cannot be drained.  A polled queue has no such thread: its
 * poller was stopped and the drain polled the CQ on this thread.
 */
static void nvmeh_wait_cq_thread(struct nvmeh_queue *q)
{
	int ret;

	if (!q->qp || !q->cq || q->cq->poll_ctx == IB_POLL_DIRECT)
		return;
	while ((ret = ib_drain_sq(q->qp)) == -ETIMEDOUT || ret == -ENOMEM)
		rdmarw_warn(1, 1, __FILE__, __LINE__,
			    "nvme host: queue teardown waits for a done() of "
			    "the CQ's thread (its drain timed out)");
}

static void nvmeh_queue_teardown(struct nvmeh_queue *q)
{
	bool drained = true;

	mutex_lock(&q->lock);
	q->state = Q_DOWN;
	mutex_unlock(&q->lock);
	if (q->connected) {
		rdma_disconnect(q->cm_id);
		q->connected = false;
	}
	/* a polled queue's drain polls its CQ here, its thread no more */
	nvmeh_poll_stop(q);
	pthread_mutex_lock(&q->poll_lock);
	q->pcq = NULL; /* nor nvmeh_poll() (poll_external) */
	pthread_mutex_unlock(&q->poll_lock);
	if (q->qp) {
		/*
		 * A response processed while the Receive Queue drains can
		 * post a LOCAL_INV behind the Send Queue's marker: drain the
		 * Send Queue again for it.
		 */
		drained = !ib_drain_qp(q->qp);
		drained = !ib_drain_sq(q->qp) && drained;
	}
	nvmeh_cancel_slots(q, drained);
	if (!drained)
		nvmeh_wait_cq_thread(q);
	if (q->pool) {
		ib_mr_pool_destroy(q->qp, &q->qp->rdma_mrs);
		q->pool = false;
	}
	if (q->qp) {
		rdma_destroy_qp(q->cm_id);
		q->qp = NULL;
	}
	if (q->cq) {
		ib_free_cq(q->cq);
		q->cq = NULL;
	}
	nvmeh_poll_fini(q);
	if (q->capbuf_mapped)
		ib_dma_unmap_single(q->dev, q->capbuf_dma,
				    (size_t)q->nslots * NVMEH_CAPSULE_MAX,
				    DMA_TO_DEVICE);
	if (q->rspbuf_mapped)
		ib_dma_unmap_single(q->dev, q->rspbuf_dma,
				    (size_t)q->nslots *
					    sizeof(struct nvme_completion),
				    DMA_FROM_DEVICE);
	q->capbuf_mapped = q->rspbuf_mapped = false;
	nvmeh_queue_bufs_put(q);
	if (q->pd) {
		ib_dealloc_pd(q->pd);
		q->pd = NULL;
	}
	if (q->cm_id) {
		rdma_destroy_id(q->cm_id);
		q->cm_id = NULL;
	}
	q->dev = NULL;
}

static u32 nvmeh_max_pages(struct ib_device *dev)
{
	return min_t(u32, NVMEH_MAX_PAGES,
		     dev->attrs.max_fast_reg_page_list_len);
}

static int nvmeh_queue_create_res(struct nvmeh_queue *q)
{
	bool polled = q->qid && q->ctrl->opts.poll;
	struct ib_device *dev = q->cm_id->device;
	struct ib_qp_init_attr qa = { 0 };
	u32 i;
	int ret;

	q->dev = dev;
	q->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(q->pd)) {
		ret = PTR_ERR(q->pd);
		q->pd = NULL;
		return ret;
	}
	q->cq = ib_alloc_cq(dev, q, (int)(q->nslots * 4 + 2), 0,
			    polled ? IB_POLL_DIRECT : IB_POLL_WORKQUEUE);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		return ret;
	}
	if (polled && q->ctrl->opts.poll_external) {
		pthread_mutex_lock(&q->poll_lock);
		q->pcq = q->cq;
		pthread_mutex_unlock(&q->poll_lock);
	} else if (polled) {
		ret = nvmeh_poll_start(q);
		if (ret)
			return ret;
	}
	qa.send_cq = q->cq;
	qa.recv_cq = q->cq;
	/* REG_MR + SEND + LOCAL_INV per request, and the drain's WR */
	qa.cap.max_send_wr = q->nslots * 3 + 1;
	qa.cap.max_recv_wr = q->nslots + 1;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(q->cm_id, q->pd, &qa);
	if (ret)
		return ret;
	q->qp = q->cm_id->qp;
	ret = ib_mr_pool_init(q->qp, &q->qp->rdma_mrs, (int)q->nslots,
			      IB_MR_TYPE_MEM_REG, nvmeh_max_pages(dev), 0);
	if (ret)
		return ret;
	q->pool = true;

	q->capbuf_dma = ib_dma_map_single(dev, q->capbuf,
					  (size_t)q->nslots * NVMEH_CAPSULE_MAX,
					  DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, q->capbuf_dma))
		return -ENOMEM;
	q->capbuf_mapped = true;
	q->rspbuf_dma = ib_dma_map_single(
		dev, q->rspbuf,
		(size_t)q->nslots * sizeof(struct nvme_completion),
		DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, q->rspbuf_dma))
		return -ENOMEM;
	q->rspbuf_mapped = true;

	for (i = 0; i < q->nslots; i++) {
		struct nvmeh_slot *slot = &q->slots[i];
		struct nvmeh_rsp *rsp = &q->rsps[i];

		slot->capsule_dma = q->capbuf_dma + (u64)i * NVMEH_CAPSULE_MAX;
		/* the capsule's SEND, built once: a submission sets its sizes */
		slot->send_wr = (struct ib_send_wr){
			.wr_cqe = &slot->send_cqe,
			.sg_list = slot->sge,
			.num_sge = 1,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		};
		slot->sge[0] = (struct ib_sge){
			.addr = slot->capsule_dma,
			.length = sizeof(struct nvme_command),
			.lkey = q->pd->local_dma_lkey,
		};
		rsp->sge = (struct ib_sge){
			.addr = q->rspbuf_dma +
				(u64)i * sizeof(struct nvme_completion),
			.length = sizeof(struct nvme_completion),
			.lkey = q->pd->local_dma_lkey,
		};
		rsp->wr = (struct ib_recv_wr){ .wr_cqe = &rsp->cqe,
					       .sg_list = &rsp->sge,
					       .num_sge = 1 };
		ret = nvmeh_post_recv(rsp);
		if (ret)
			return ret;
	}
	return nvmeh_queue_bufs_get(q);
}

/* rdma_cm part of a queue connect: resolve, create, connect. */
static int nvmeh_queue_cm_connect(struct nvmeh_queue *q)
{
	struct nvmeh_opts *o = &q->ctrl->opts;
	struct rdma_conn_param param = { 0 };
	u8 pdata[sizeof(struct nvme_rdma_cm_req)] = { 0 };
	int ret;

	init_completion(&q->cm_done);
	q->rej_sts = 0;
	q->cm_id = rdma_create_id(&init_net, nvmeh_cm_handler, q, RDMA_PS_TCP,
				  IB_QPT_RC);
	if (IS_ERR(q->cm_id)) {
		ret = PTR_ERR(q->cm_id);
		q->cm_id = NULL;
		return ret;
	}
	ret = rdma_resolve_addr(q->cm_id, (struct sockaddr *)&o->src_addr,
				(struct sockaddr *)&o->dst_addr,
				NVMEH_CM_TIMEOUT_MS);
	if (!ret)
		ret = nvmeh_cm_wait(q, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ret)
		ret = rdma_resolve_route(q->cm_id, NVMEH_CM_TIMEOUT_MS);
	if (!ret)
		ret = nvmeh_cm_wait(q, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ret)
		ret = nvmeh_queue_create_res(q);
	if (ret)
		return ret;

	/* NVMe/RDMA CM REQ private data: recfmt, qid, hrqsize, hsqsize */
	nvme_put_le16(pdata + 0, 0);
	nvme_put_le16(pdata + 2, (u16)q->qid);
	nvme_put_le16(pdata + 4, (u16)q->depth);
	nvme_put_le16(pdata + 6, (u16)(q->depth - 1));
	param.private_data = pdata;
	param.private_data_len = sizeof(pdata);
	param.responder_resources =
		(u8)min_t(int, q->dev->attrs.max_qp_rd_atom, 255);
	param.initiator_depth = 0;
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	mutex_lock(&q->lock);
	q->state = Q_CONNECTING;
	q->max_xfer =
		q->qid ? q->ctrl->sinfo.max_xfer : NVME_IDENTIFY_DATA_SIZE;
	q->inline_max = q->qid ? q->ctrl->sinfo.inline_max : 0;
	mutex_unlock(&q->lock);
	ret = rdma_connect(q->cm_id, &param);
	if (!ret)
		ret = nvmeh_cm_wait(q, RDMA_CM_EVENT_ESTABLISHED);
	if (!ret)
		q->connected = true;
	return ret;
}

/* ---- submission ------------------------------------------------------- */

/*
 * An in-capsule write (nvme_rdma_map_sg_inline()): small enough, and no
 * test hook that wants a key on the wire.
 */
static bool nvmeh_inline_ok(const struct nvmeh_queue *q,
			    const struct nvmeh_request *rq)
{
	return rq->write && q->inline_max && rq->data_len <= q->inline_max &&
	       !(rq->flags & (NVMEH_RQ_BAD_RKEY | NVMEH_RQ_ASK_INV));
}

/* The data as the capsule's second SGE, an offset SGL in the command. */
static void nvmeh_sgl_inline(struct nvmeh_queue *q, struct nvmeh_slot *slot,
			     u8 *dptr, u64 addr, u32 len, u32 lkey)
{
	slot->sge[1] = (struct ib_sge){
		.addr = addr,
		.length = len,
		.lkey = lkey,
	};
	slot->send_wr.num_sge = 2;
	nvme_put_le64(dptr, 0);
	nvme_put_le32(dptr + 8, len);
	dptr[15] = (NVME_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_OFFSET);
	nvmeh_qstat_inc(q, inline_writes);
}

/* A keyed SGL data block: @subtype asks for invalidation or not. */
static void nvmeh_sgl_keyed(u8 *dptr, const struct nvmeh_request *rq, u64 addr,
			    u32 len, u32 rkey, u8 subtype)
{
	nvme_put_le64(dptr, addr);
	nvme_put_le24(dptr + 8, len);
	nvme_put_le32(dptr + 11, (rq->flags & NVMEH_RQ_BAD_RKEY) ?
					 rkey ^ 0x5a5a5a00 :
					 rkey);
	dptr[15] = (u8)(NVME_KEY_SGL_FMT_DATA_DESC << 4 | subtype);
}

/*
 * Data in a registered region: wholly inside it, a region of this
 * controller's that is not being deregistered.  The queue's MR for the
 * region, the CPU address as its address; no registration, no
 * invalidation asked (unless the test hook asks).  The slot holds the
 * region until the request ends.
 */
static int nvmeh_map_buf(struct nvmeh_queue *q, struct nvmeh_slot *slot,
			 struct nvmeh_request *rq, u8 *dptr)
{
	struct nvmeh_buf *buf = rq->buf;
	u64 addr = (uintptr_t)rq->data, off = addr - buf->addr;
	struct ib_mr *mr;

	if (buf->ctrl != q->ctrl || addr < buf->addr || off > buf->len ||
	    rq->data_len > buf->len - off)
		return -EINVAL;
	mr = buf->mrs[q->qid];
	if (!mr || __atomic_load_n(&buf->closing, __ATOMIC_RELAXED))
		return -EINVAL;
	__atomic_store_n(&slot->buf, buf, __ATOMIC_RELAXED);
	if (nvmeh_inline_ok(q, rq))
		nvmeh_sgl_inline(q, slot, dptr, addr, rq->data_len, mr->lkey);
	else
		nvmeh_sgl_keyed(dptr, rq, addr, rq->data_len, mr->rkey,
				(rq->flags & NVMEH_RQ_ASK_INV) ?
					NVME_SGL_FMT_INVALIDATE :
					NVME_SGL_FMT_ADDRESS);
	return 0;
}

static int nvmeh_map_data(struct nvmeh_queue *q, struct nvmeh_slot *slot,
			  struct nvmeh_request *rq, struct ib_send_wr **first)
{
	u8 *dptr = slot->capsule + offsetof(struct nvme_common_command, dptr);
	int n;

	memset(dptr, 0, 16);
	slot->capsule[offsetof(struct nvme_common_command, flags)] =
		NVME_CMD_SGL_METABUF;
	if (!rq->data_len) {
		if (rq->buf)
			return -EINVAL; /* no data to lie in it */
		dptr[15] = (NVME_KEY_SGL_FMT_DATA_DESC << 4);
		return 0;
	}
	if (rq->buf)
		return nvmeh_map_buf(q, slot, rq, dptr);
	slot->dir = rq->write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	sg_init_one(&slot->sg, rq->data, rq->data_len);
	n = ib_dma_map_sg(q->dev, &slot->sg, 1, slot->dir);
	if (n <= 0)
		return -EIO;
	slot->mapped = true;

	if (nvmeh_inline_ok(q, rq)) {
		nvmeh_sgl_inline(q, slot, dptr, sg_dma_address(&slot->sg),
				 sg_dma_len(&slot->sg), q->pd->local_dma_lkey);
		return 0;
	}

	slot->mr = ib_mr_pool_get(q->qp, &q->qp->rdma_mrs);
	if (!slot->mr)
		return -EAGAIN;
	ib_update_fast_reg_key(slot->mr, (u8)ib_inc_rkey(slot->mr->rkey));
	n = ib_map_mr_sg(slot->mr, &slot->sg, 1, NULL, 4096);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	slot->reg_wr = (struct ib_reg_wr){
		.wr = { .wr_cqe = &slot->reg_cqe,
			.opcode = IB_WR_REG_MR,
			.next = &slot->send_wr },
		.mr = slot->mr,
		.key = slot->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	*first = &slot->reg_wr.wr;
	nvmeh_sgl_keyed(dptr, rq, slot->mr->iova, (u32)slot->mr->length,
			slot->mr->rkey, NVME_SGL_FMT_INVALIDATE);
	return 0;
}

int nvmeh_submit(struct nvmeh_ctrl *ctrl, unsigned int qid,
		 struct nvmeh_request *rq)
{
	struct nvmeh_queue *q;
	struct nvmeh_slot *slot = NULL;
	struct ib_send_wr *first;
	const struct ib_send_wr *bad;
	u32 limit, start, i;
	int ret;

	if (!ctrl || !rq || !rq->done || qid >= ctrl->nr_queues)
		return -EINVAL;
	if (rq->data_len && !rq->data)
		return -EINVAL;
	if (rq->flags & NVMEH_RQ_RAW) {
		if (!rq->raw || !rq->raw_len ||
		    rq->raw_len > NVMEH_CAPSULE_MAX || rq->buf)
			return -EINVAL;
	}
	q = &ctrl->queues[qid];

	mutex_lock(&q->lock);
	if (!(rq->flags & NVMEH_RQ_RAW) && rq->data_len > q->max_xfer) {
		ret = -EINVAL;
		goto out;
	}
	if (q->state != Q_LIVE &&
	    !(q->state == Q_CONNECTING && (rq->flags & NVMEH_RQ_SETUP))) {
		ret = -ENOTCONN;
		goto out;
	}
	limit = (rq->flags & NVMEH_RQ_OVERDEPTH) ? q->nslots : q->depth;
	start = q->next_tag < limit ? q->next_tag : 0;
	for (i = 0; i < limit; i++) {
		/* (start + i) % limit, without a division per submission */
		u32 t = start + i >= limit ? start + i - limit : start + i;

		if (!__atomic_load_n(&q->slots[t].busy, __ATOMIC_ACQUIRE)) {
			slot = &q->slots[t];
			q->next_tag = t + 1;
			break;
		}
	}
	if (!slot) {
		ret = -EBUSY;
		goto out;
	}
	slot->gen = (slot->gen + 1) & 0xf;
	rq->cid = (u16)(slot->gen << 12 | slot->tag);
	slot->rq = rq;
	/* the rest of send_wr and sge[0] as nvmeh_queue_create_res() built */
	slot->send_wr.num_sge = 1;
	first = &slot->send_wr;
	slot->sge[0].length = sizeof(struct nvme_command);
	if (rq->flags & NVMEH_RQ_RAW) {
		memcpy(slot->capsule, rq->raw, rq->raw_len);
		if (rq->raw_len >= 4)
			nvme_put_le16(
				slot->capsule +
					offsetof(struct nvme_common_command,
						 command_id),
				rq->cid);
		slot->sge[0].length = rq->raw_len;
	} else {
		memcpy(slot->capsule, rq->sqe, sizeof(struct nvme_command));
		nvme_put_le16(slot->capsule +
				      offsetof(struct nvme_common_command,
					       command_id),
			      rq->cid);
		ret = nvmeh_map_data(q, slot, rq, &first);
		if (ret) {
			nvmeh_unmap_failed(q, slot);
			slot->rq = NULL;
			goto out;
		}
	}
	atomic_set(&slot->ref, 2);
	slot->deadline = nvmeh_now_ms() + q->ctrl->deadline_ms;
	/* before the post: the response may be processed before it returns */
	__atomic_store_n(&slot->rsp, rq->cid | NVMEH_RSP_WAITING,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&slot->busy, true, __ATOMIC_RELAXED);
	slot->send_wr.next = NULL; /* a plug may have linked it */
	if (nvmeh_plugged(q)) {
		nvmeh_plug_add(q, slot, first);
		goto out;
	}
	ret = ib_post_send(q->qp, first, &bad);
	if (ret)
		nvmeh_slot_refused(q, slot, first, bad);
out:
	mutex_unlock(&q->lock);
	return ret;
}

static void nvmeh_sync_done(struct nvmeh_request *rq)
{
	complete(rq->priv);
}

/* A queue no thread of the host's polls (nvmeh_opts.poll_external). */
static bool nvmeh_polled_by_caller(struct nvmeh_ctrl *ctrl, unsigned int qid)
{
	return qid && ctrl->opts.poll && ctrl->opts.poll_external;
}

int nvmeh_poll(struct nvmeh_ctrl *ctrl, unsigned int qid, int budget)
{
	struct nvmeh_queue *q;
	int n = 0;

	if (!ctrl || qid >= ctrl->nr_queues || budget <= 0 ||
	    !nvmeh_polled_by_caller(ctrl, qid))
		return -EINVAL;
	q = &ctrl->queues[qid];
	if (pthread_mutex_trylock(&q->poll_lock))
		return 0; /* another thread's pass, or the teardown */
	if (q->pcq) {
		nvmeh_plug_start(q);
		n = ib_process_cq_direct(q->pcq, budget);
		nvmeh_plug_flush(q);
	}
	pthread_mutex_unlock(&q->poll_lock);
	return n;
}

/*
 * Wait for @done, bounded by the I/O timeout; on a queue polled by its
 * caller, polling it meanwhile (nobody else may: the bring-up's Connect).
 */
static bool nvmeh_exec_wait(struct nvmeh_ctrl *ctrl, unsigned int qid,
			    struct completion *done)
{
	unsigned long tmo = msecs_to_jiffies(ctrl->opts.io_timeout_ms);
	u64 end;

	if (!nvmeh_polled_by_caller(ctrl, qid))
		return wait_for_completion_timeout(done, tmo) != 0;
	end = nvmeh_now_ms() + ctrl->deadline_ms;
	while (!try_wait_for_completion(done)) {
		if (nvmeh_poll(ctrl, qid, NVMEH_POLL_BUDGET) > 0)
			continue;
		if (nvmeh_now_ms() > end)
			return false;
		sched_yield();
	}
	return true;
}

int nvmeh_exec(struct nvmeh_ctrl *ctrl, unsigned int qid,
	       struct nvmeh_request *rq)
{
	struct completion done;
	int ret;

	if (!ctrl || !rq || qid >= ctrl->nr_queues)
		return -EINVAL;
	init_completion(&done);
	rq->done = nvmeh_sync_done;
	rq->priv = &done;
	ret = nvmeh_submit(ctrl, qid, rq);
	if (ret)
		return ret;
	if (!nvmeh_exec_wait(ctrl, qid, &done)) {
		/* nvme_rdma_timeout(): tear the queue(s) down */
		if (rq->flags & NVMEH_RQ_SETUP)
			nvmeh_queue_teardown(&ctrl->queues[qid]);
		else
			nvmeh_error_recovery(ctrl);
		wait_for_completion(&done);
	}
	return 0;
}

int nvmeh_rw(struct nvmeh_ctrl *ctrl, unsigned int qid, bool write, u64 slba,
	     u32 nlb, void *buf)
{
	struct nvmeh_request rq = { 0 };
	u32 lba_size;
	int ret;

	if (!ctrl || !buf || !qid || !nlb || nlb > 65536)
		return -EINVAL;
	mutex_lock(&ctrl->state_lock);
	lba_size = ctrl->info.lba_size;
	mutex_unlock(&ctrl->state_lock);
	if (!lba_size)
		return -EINVAL;
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		write ? nvme_cmd_write : nvme_cmd_read;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid), 1);
	nvme_put_le64(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      slba);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw12),
		      nlb - 1);
	rq.data = buf;
	rq.data_len = nlb * lba_size;
	rq.write = write;
	ret = nvmeh_exec(ctrl, qid, &rq);
	if (ret)
		return ret;
	if (rq.error)
		return rq.error;
	return rq.status & NVME_SCT_SC_MASK;
}

/* ---- controller bring-up (fabrics.c and core.c steps) ------------------ */

static int nvmeh_setup_cmd(struct nvmeh_ctrl *ctrl, unsigned int qid,
			   struct nvmeh_request *rq)
{
	int ret;

	rq->flags |= NVMEH_RQ_SETUP;
	ret = nvmeh_exec(ctrl, qid, rq);
	if (ret)
		return ret;
	if (rq->error)
		return rq->error;
	if (rq->status & NVME_SCT_SC_MASK) {
		nvmeh_status_tls = rq->status;
		nvmeh_result_tls = rq->result;
		return -EREMOTEIO;
	}
	return 0;
}

static int nvmeh_prop_get(struct nvmeh_ctrl *ctrl, u32 off, bool is64, u64 *val)
{
	struct nvmeh_request rq = { 0 };
	int ret;

	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_fabrics_command;
	rq.sqe[offsetof(struct nvmf_common_command, fctype)] =
		nvme_fabrics_type_property_get;
	rq.sqe[offsetof(struct nvmf_property_get_command, attrib)] =
		is64 ? 1 : 0;
	nvme_put_le32(
		rq.sqe + offsetof(struct nvmf_property_get_command, offset),
		off);
	ret = nvmeh_setup_cmd(ctrl, 0, &rq);
	if (!ret)
		*val = is64 ? rq.result : (u32)rq.result;
	return ret;
}

static int nvmeh_prop_set(struct nvmeh_ctrl *ctrl, u32 off, u32 val)
{
	struct nvmeh_request rq = { 0 };

	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_fabrics_command;
	rq.sqe[offsetof(struct nvmf_common_command, fctype)] =
		nvme_fabrics_type_property_set;
	nvme_put_le32(
		rq.sqe + offsetof(struct nvmf_property_get_command, offset),
		off);
	nvme_put_le64(rq.sqe +
			      offsetof(struct nvmf_property_set_command, value),
		      val);
	return nvmeh_setup_cmd(ctrl, 0, &rq);
}

/* ---- DH-HMAC-CHAP (the kernel's host/auth.c) -------------------------- */

/* AUTH_Send (@send) of @len bytes at @buf, or AUTH_Receive into it. */
static int nvmeh_auth_cmd(struct nvmeh_ctrl *ctrl, unsigned int qid, bool send,
			  void *buf, u32 len)
{
	struct nvmeh_request rq = { 0 };

	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_fabrics_command;
	rq.sqe[offsetof(struct nvmf_common_command, fctype)] =
		send ? nvme_fabrics_type_auth_send :
		       nvme_fabrics_type_auth_receive;
	rq.sqe[offsetof(struct nvmf_auth_command, secp)] =
		NVME_AUTH_DHCHAP_PROTOCOL_IDENTIFIER;
	rq.sqe[offsetof(struct nvmf_auth_command, spsp0)] =
		NVME_AUTH_DHCHAP_SPSP;
	rq.sqe[offsetof(struct nvmf_auth_command, spsp1)] =
		NVME_AUTH_DHCHAP_SPSP;
	nvme_put_le32(rq.sqe + offsetof(struct nvmf_auth_command, len), len);
	rq.data = buf;
	rq.data_len = len;
	rq.write = send;
	return nvmeh_setup_cmd(ctrl, qid, &rq);
}

/* The buffers of one transaction: the controller's message, the answer. */
struct nvmeh_auth_bufs {
	struct nvme_auth_host h;
	u8 in[NVME_AUTH_BUF_SIZE];
	u8 out[NVME_AUTH_MAX_MSG];
};

/* One transaction's messages: Negotiate, then at most two answers. */
static int nvmeh_auth_run(struct nvmeh_ctrl *ctrl, unsigned int qid,
			  struct nvmeh_auth_bufs *b)
{
	enum nvme_auth_status st = NVME_AUTH_IN_PROGRESS;
	uint8_t reason = 0;
	ssize_t n;
	int i, ret;

	n = nvme_auth_host_negotiate(&b->h, b->out, sizeof(b->out));
	if (n < 0)
		return (int)n;
	ret = nvmeh_auth_cmd(ctrl, qid, true, b->out, (u32)n);
	for (i = 0; !ret && i < 2 && st == NVME_AUTH_IN_PROGRESS; i++) {
		memset(b->in, 0, sizeof(b->in));
		ret = nvmeh_auth_cmd(ctrl, qid, false, b->in, sizeof(b->in));
		if (ret)
			break;
		n = nvme_auth_host_recv(&b->h, b->in, sizeof(b->in), b->out,
					sizeof(b->out));
		if (n < 0)
			return (int)n;
		if (n > 0)
			ret = nvmeh_auth_cmd(ctrl, qid, true, b->out, (u32)n);
		st = nvme_auth_host_status(&b->h, &reason);
	}
	if (ret)
		return ret;
	if (st == NVME_AUTH_SUCCESS)
		return 0;
	/* the kernel's: "Key was rejected by service" for a wrong key */
	return reason == NVME_AUTH_DHCHAP_FAILURE_FAILED ? -EKEYREJECTED :
							   -ECONNREFUSED;
}

/* Authenticate queue @qid (nvme_auth_negotiate() and nvme_auth_wait()). */
static int nvmeh_auth_queue(struct nvmeh_ctrl *ctrl, unsigned int qid)
{
	const struct nvmeh_opts *o = &ctrl->opts;
	struct nvme_auth_params p = { 0 };
	struct nvmeh_auth_bufs *b;
	int ret;

	if (!o->dhchap_secret[0])
		return -ENOKEY;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	p.hostnqn = o->hostnqn;
	p.subsysnqn = o->subsysnqn;
	p.host_secret = o->dhchap_secret;
	p.ctrl_secret = o->dhchap_ctrl_secret[0] ? o->dhchap_ctrl_secret : NULL;
	mutex_lock(&ctrl->auth_lock);
	p.transaction = ctrl->auth_tid++;
	mutex_unlock(&ctrl->auth_lock);
	ret = nvme_auth_host_init(&b->h, &p);
	if (!ret)
		ret = nvmeh_auth_run(ctrl, qid, b);
	nvme_auth_host_clear(&b->h);
	nvme_auth_wipe(b, sizeof(*b));
	free(b);
	return ret;
}

/*
 * After a Connect: authenticate when the result asks (AUTHREQ.ATR), and
 * always with a controller key (the kernel's host would skip it when not
 * asked: a controller that never proves its key).
 */
static int nvmeh_connect_auth(struct nvmeh_ctrl *ctrl, unsigned int qid,
			      u32 result)
{
	unsigned int skip = qid ? NVMEH_AUTH_SKIP_IO : NVMEH_AUTH_SKIP_ADMIN;

	if (result & NVME_CONNECT_AUTHREQ_ASCR)
		return -EOPNOTSUPP; /* secure channel concatenation */
	if (ctrl->opts.dhchap_skip & skip)
		return 0;
	if (!(result & NVME_CONNECT_AUTHREQ_ATR) &&
	    !ctrl->opts.dhchap_ctrl_secret[0])
		return 0;
	return nvmeh_auth_queue(ctrl, qid);
}

int nvmeh_ctrl_reauth(struct nvmeh_ctrl *ctrl, unsigned int qid)
{
	if (!ctrl || qid >= ctrl->nr_queues || !ctrl->opts.dhchap_secret[0])
		return -EINVAL;
	return nvmeh_auth_queue(ctrl, qid);
}

static int nvmeh_fabrics_connect(struct nvmeh_ctrl *ctrl, unsigned int qid)
{
	struct nvmeh_queue *q = &ctrl->queues[qid];
	struct nvmeh_request rq = { 0 };
	u8 *d = ctrl->cdata;
	int ret;

	memset(d, 0, NVMF_CONNECT_DATA_SIZE);
	memcpy(d + offsetof(struct nvmf_connect_data, hostid),
	       ctrl->opts.hostid, 16);
	nvme_put_le16(d + offsetof(struct nvmf_connect_data, cntlid),
		      qid ? ctrl->sinfo.cntlid : 0xffff);
	/* the fields stay NUL padded (zeroed above) */
	memcpy(d + offsetof(struct nvmf_connect_data, subsysnqn),
	       ctrl->opts.subsysnqn,
	       strnlen(ctrl->opts.subsysnqn, NVMF_NQN_FIELD_LEN - 1));
	memcpy(d + offsetof(struct nvmf_connect_data, hostnqn),
	       ctrl->opts.hostnqn,
	       strnlen(ctrl->opts.hostnqn, NVMF_NQN_FIELD_LEN - 1));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_fabrics_command;
	rq.sqe[offsetof(struct nvmf_common_command, fctype)] =
		nvme_fabrics_type_connect;
	nvme_put_le16(rq.sqe + offsetof(struct nvmf_connect_command, recfmt),
		      0);
	nvme_put_le16(rq.sqe + offsetof(struct nvmf_connect_command, qid),
		      (u16)qid);
	nvme_put_le16(rq.sqe + offsetof(struct nvmf_connect_command, sqsize),
		      (u16)(q->depth - 1));
	nvme_put_le32(rq.sqe + offsetof(struct nvmf_connect_command, kato),
		      qid ? 0 : ctrl->opts.kato_ms);
	rq.data = d;
	rq.data_len = NVMF_CONNECT_DATA_SIZE;
	rq.write = true;
	ret = nvmeh_setup_cmd(ctrl, qid, &rq);
	if (ret)
		return ret;
	if (!qid)
		ctrl->sinfo.cntlid = (u16)rq.result;
	ret = nvmeh_connect_auth(ctrl, qid, (u32)rq.result);
	if (ret)
		return ret;
	mutex_lock(&q->lock);
	if (q->state == Q_CONNECTING)
		q->state = Q_LIVE;
	mutex_unlock(&q->lock);
	return 0;
}

static int nvmeh_queue_connect(struct nvmeh_ctrl *ctrl, unsigned int qid,
			       u32 depth)
{
	struct nvmeh_queue *q = &ctrl->queues[qid];
	int ret;

	q->depth = depth;
	ret = nvmeh_queue_cm_connect(q);
	if (!ret)
		ret = nvmeh_fabrics_connect(ctrl, qid);
	if (ret) {
		nvmeh_queue_teardown(q);
		nvmeh_stat_add(ctrl, &ctrl->stats.failed_connects);
	}
	return ret;
}

static int nvmeh_identify(struct nvmeh_ctrl *ctrl, u8 cns, u32 nsid, u8 *buf)
{
	struct nvmeh_request rq = { 0 };

	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_admin_identify;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid),
		      nsid);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      cns);
	rq.data = buf;
	rq.data_len = NVME_IDENTIFY_DATA_SIZE;
	return nvmeh_setup_cmd(ctrl, 0, &rq);
}

static int nvmeh_wait_csts(struct nvmeh_ctrl *ctrl, u32 mask, u32 want,
			   unsigned int ms)
{
	struct timespec ts = { 0, 1000 * 1000 };
	u64 csts = 0;
	unsigned int i;
	int ret;

	for (i = 0; i <= ms; i++) {
		ret = nvmeh_prop_get(ctrl, NVME_REG_CSTS, false, &csts);
		if (ret)
			return ret;
		if (csts & NVME_CSTS_CFS)
			return -EIO;
		if ((csts & mask) == want)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

static void nvmeh_teardown_all(struct nvmeh_ctrl *ctrl)
{
	unsigned int i;

	for (i = ctrl->nr_queues; i-- > 0;)
		nvmeh_queue_teardown(&ctrl->queues[i]);
}

static int nvmeh_setup_ctrl(struct nvmeh_ctrl *ctrl)
{
	struct nvmeh_info *info = &ctrl->sinfo;
	u8 *idns = NULL;
	u64 cap, vs, granted;
	u32 cc, mdts_bytes, ioccsz, sgls, want;
	unsigned int i, to_ms;
	struct nvmeh_request rq = { 0 };
	int ret;

	nvmeh_status_tls = 0;
	nvmeh_result_tls = 0;
	nvmeh_reject_tls = 0;
	info->inline_max = 0;
	ret = nvmeh_queue_connect(ctrl, 0, NVMEH_AQ_DEPTH);
	if (ret)
		return ret;
	ret = nvmeh_prop_get(ctrl, NVME_REG_CAP, true, &cap);
	if (ret)
		goto fail;
	info->cap = cap;
	if ((cap >> 48) & 0xf) { /* MPSMIN must be 4 KiB */
		ret = -EINVAL;
		goto fail;
	}
	cc = (NVME_NVM_IOSQES << NVME_CC_IOSQES_SHIFT) |
	     (NVME_NVM_IOCQES << NVME_CC_IOCQES_SHIFT);
	if ((cap >> 37) & (1u << 6))
		cc |= NVME_CC_CSS_CSI;
	ret = nvmeh_prop_set(ctrl, NVME_REG_CC, cc);
	if (!ret)
		ret = nvmeh_prop_set(ctrl, NVME_REG_CC, cc | NVME_CC_ENABLE);
	if (ret)
		goto fail;
	to_ms = (unsigned int)((cap >> 24) & 0xff) * 500;
	ret = nvmeh_wait_csts(ctrl, NVME_CSTS_RDY, NVME_CSTS_RDY,
			      clamp(to_ms, 500u, 5000u));
	if (ret)
		goto fail;
	ret = nvmeh_prop_get(ctrl, NVME_REG_VS, false, &vs);
	if (ret)
		goto fail;
	info->vs = (u32)vs;

	ret = nvmeh_identify(ctrl, 0x01, 0, info->id_ctrl);
	if (ret)
		goto fail;
	sgls = nvme_get_le32(info->id_ctrl +
			     offsetof(struct nvme_id_ctrl, sgls));
	if (!(sgls & (1u << 2)) ||
	    nvme_get_le16(info->id_ctrl +
			  offsetof(struct nvme_id_ctrl, icdoff))) {
		ret = -EINVAL; /* keyed SGLs are mandatory, icdoff must be 0 */
		goto fail;
	}
	info->max_xfer = (nvmeh_max_pages(ctrl->queues[0].dev) - 1) * 4096u;
	if (info->id_ctrl[offsetof(struct nvme_id_ctrl, mdts)]) {
		mdts_bytes = 4096u << min_t(u32,
					    info->id_ctrl[offsetof(
						    struct nvme_id_ctrl, mdts)],
					    19);
		info->max_xfer = min(info->max_xfer, mdts_bytes);
	}
	mutex_lock(&ctrl->queues[0].lock);
	ctrl->queues[0].max_xfer =
		max_t(u32, info->max_xfer, NVME_IDENTIFY_DATA_SIZE);
	mutex_unlock(&ctrl->queues[0].lock);
	ioccsz = nvme_get_le32(info->id_ctrl +
			       offsetof(struct nvme_id_ctrl, ioccsz));
	if (!ctrl->opts.no_inline && (sgls & (1u << 20)) && ioccsz * 16 > 64)
		info->inline_max = min_t(u32, ioccsz * 16 - 64, 1u << 20);

	/* Set Features, Number of Queues: 0-based counts in cdw11 */
	want = ctrl->opts.nr_io_queues;
	granted = 0;
	if (want) {
		memset(&rq, 0, sizeof(rq));
		rq.sqe[offsetof(struct nvme_common_command, opcode)] =
			nvme_admin_set_features;
		nvme_put_le32(
			rq.sqe + offsetof(struct nvme_common_command, cdw10),
			NVME_FEAT_NUM_QUEUES);
		nvme_put_le32(
			rq.sqe + offsetof(struct nvme_common_command, cdw11),
			(want - 1) | (want - 1) << 16);
		ret = nvmeh_setup_cmd(ctrl, 0, &rq);
		if (ret)
			goto fail;
		granted = min_t(u64, (rq.result & 0xffff) + 1,
				((rq.result >> 16) & 0xffff) + 1);
	}
	info->nr_io_queues = (unsigned int)min_t(u64, want, granted);

	idns = calloc(1, NVME_IDENTIFY_DATA_SIZE);
	if (!idns) {
		ret = -ENOMEM;
		goto fail;
	}
	info->ns_lbas = 0;
	info->lba_size = 0;
	if (nvme_get_le32(info->id_ctrl + offsetof(struct nvme_id_ctrl, nn)) &&
	    !nvmeh_identify(ctrl, 0x00, 1, idns)) {
		u8 lbaf = idns[offsetof(struct nvme_id_ns, flbas)] & 0xf;
		u8 lbads =
			idns[offsetof(struct nvme_id_ns, lbaf) + 4 * lbaf + 2];

		info->ns_lbas =
			nvme_get_le64(idns + offsetof(struct nvme_id_ns, nsze));
		info->lba_size = lbads >= 9 && lbads < 20 ? 1u << lbads : 0;
	}
	free(idns);
	nvmeh_status_tls = 0;

	info->queue_size =
		ctrl->queues[1 % ctrl->nr_queues].nslots - NVMEH_EXTRA_SLOTS;
	info->queue_size = min_t(u32, info->queue_size, (cap & 0xffff) + 1);
	i = nvme_get_le16(info->id_ctrl +
			  offsetof(struct nvme_id_ctrl, maxcmd));
	if (i)
		info->queue_size = min(info->queue_size, i);
	for (i = 1; i <= info->nr_io_queues; i++) {
		ret = nvmeh_queue_connect(ctrl, i, info->queue_size);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	nvmeh_teardown_all(ctrl);
	return ret;
}

/* ---- keep-alive and error recovery ------------------------------------ */

static void nvmeh_ka_done(struct nvmeh_request *rq)
{
	struct nvmeh_ctrl *ctrl = rq->priv;

	if (!rq->error && (rq->status & NVME_SCT_SC_MASK))
		nvmeh_error_recovery(ctrl);
	/*
	 * Ordered: the request's last reads (here and in the slot's finish)
	 * come before the next keep-alive work rewrites it.
	 */
	atomic_cmpxchg(&ctrl->ka_busy, 1, 0);
}

static void nvmeh_ka_work(struct work_struct *work)
{
	struct nvmeh_ctrl *ctrl =
		container_of(to_delayed_work(work), struct nvmeh_ctrl, ka_work);
	bool live;

	mutex_lock(&ctrl->state_lock);
	live = ctrl->state == C_LIVE;
	mutex_unlock(&ctrl->state_lock);
	if (!live)
		return;
	if (!atomic_cmpxchg(&ctrl->ka_busy, 0, 1)) {
		memset(&ctrl->ka_rq, 0, sizeof(ctrl->ka_rq));
		ctrl->ka_rq.sqe[offsetof(struct nvme_common_command, opcode)] =
			nvme_admin_keep_alive;
		ctrl->ka_rq.done = nvmeh_ka_done;
		ctrl->ka_rq.priv = ctrl;
		if (nvmeh_submit(ctrl, 0, &ctrl->ka_rq))
			atomic_set(&ctrl->ka_busy, 0);
	}
	queue_delayed_work(ctrl->wq, &ctrl->ka_work,
			   msecs_to_jiffies(max(ctrl->opts.kato_ms / 2, 1u)));
}

static unsigned long nvmeh_timeout_period(struct nvmeh_ctrl *ctrl)
{
	return msecs_to_jiffies(max_t(u32, ctrl->opts.io_timeout_ms / 4, 10));
}

/*
 * The blk-mq timeout of every outstanding command, as nvme_rdma_timeout():
 * one past its deadline on a live controller starts error recovery (the
 * teardown then completes it with -ECONNABORTED).
 */
static void nvmeh_timeout_work(struct work_struct *work)
{
	struct nvmeh_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct nvmeh_ctrl, timeout_work);
	u64 now = nvmeh_now_ms();
	bool expired = false, live;
	unsigned int i;
	u32 k;

	mutex_lock(&ctrl->state_lock);
	live = ctrl->state == C_LIVE;
	mutex_unlock(&ctrl->state_lock);
	if (!live)
		return;
	for (i = 0; i < ctrl->nr_queues && !expired; i++) {
		struct nvmeh_queue *q = &ctrl->queues[i];

		mutex_lock(&q->lock);
		for (k = 0; k < q->nslots; k++)
			if (__atomic_load_n(&q->slots[k].busy,
					    __ATOMIC_ACQUIRE) &&
			    now > q->slots[k].deadline && q->state == Q_LIVE)
				expired = true;
		mutex_unlock(&q->lock);
	}
	if (expired)
		nvmeh_error_recovery(ctrl);
	else
		queue_delayed_work(ctrl->wq, &ctrl->timeout_work,
				   nvmeh_timeout_period(ctrl));
}

/* Called with state_lock held. */
static void nvmeh_set_live(struct nvmeh_ctrl *ctrl)
{
	ctrl->info = ctrl->sinfo;
	ctrl->state = C_LIVE;
	ctrl->attempts = 0;
	complete_all(&ctrl->live);
	if (ctrl->opts.kato_ms)
		queue_delayed_work(ctrl->wq, &ctrl->ka_work,
				   msecs_to_jiffies(ctrl->opts.kato_ms / 2));
	queue_delayed_work(ctrl->wq, &ctrl->timeout_work,
			   nvmeh_timeout_period(ctrl));
}

static void nvmeh_reconnect_work(struct work_struct *work)
{
	struct nvmeh_ctrl *ctrl = container_of(
		to_delayed_work(work), struct nvmeh_ctrl, reconnect_work);
	int ret;

	mutex_lock(&ctrl->state_lock);
	if (ctrl->state != C_CONNECTING) {
		mutex_unlock(&ctrl->state_lock);
		return;
	}
	mutex_unlock(&ctrl->state_lock);
	ret = nvmeh_setup_ctrl(ctrl);
	mutex_lock(&ctrl->state_lock);
	if (ctrl->state != C_CONNECTING) {
		mutex_unlock(&ctrl->state_lock);
		return;
	}
	if (!ret) {
		ctrl->stats.reconnects++;
		nvmeh_set_live(ctrl);
	} else if (++ctrl->attempts >= ctrl->opts.max_reconnects) {
		ctrl->state = C_DEAD;
		complete_all(&ctrl->live);
	} else {
		queue_delayed_work(
			ctrl->wq, &ctrl->reconnect_work,
			msecs_to_jiffies(ctrl->opts.reconnect_delay_ms));
	}
	mutex_unlock(&ctrl->state_lock);
}

static void nvmeh_err_work(struct work_struct *work)
{
	struct nvmeh_ctrl *ctrl =
		container_of(work, struct nvmeh_ctrl, err_work);

	cancel_delayed_work(&ctrl->ka_work);
	cancel_delayed_work(&ctrl->timeout_work);
	nvmeh_teardown_all(ctrl);
	mutex_lock(&ctrl->state_lock);
	if (ctrl->state == C_RESETTING) {
		ctrl->state = C_CONNECTING;
		ctrl->attempts = 0;
		queue_delayed_work(
			ctrl->wq, &ctrl->reconnect_work,
			msecs_to_jiffies(ctrl->opts.reconnect_delay_ms));
	}
	mutex_unlock(&ctrl->state_lock);
}

static void nvmeh_error_recovery(struct nvmeh_ctrl *ctrl)
{
	mutex_lock(&ctrl->state_lock);
	if (ctrl->state == C_LIVE) {
		ctrl->state = C_RESETTING;
		ctrl->stats.resets++;
		reinit_completion(&ctrl->live);
		queue_work(ctrl->wq, &ctrl->err_work);
	}
	mutex_unlock(&ctrl->state_lock);
}

/* ---- the controller's life -------------------------------------------- */

void nvmeh_opts_init(struct nvmeh_opts *o, const struct sockaddr *src,
		     const struct sockaddr *dst, const char *subsysnqn)
{
	size_t len;

	memset(o, 0, sizeof(*o));
	if (src) {
		len = src->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						   sizeof(struct sockaddr_in);
		memcpy(&o->src_addr, src, len);
	}
	if (dst) {
		len = dst->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						   sizeof(struct sockaddr_in);
		memcpy(&o->dst_addr, dst, len);
	}
	if (subsysnqn)
		strncpy(o->subsysnqn, subsysnqn, NVMF_NQN_FIELD_LEN - 1);
	strncpy(o->hostnqn, NVMEH_DEFAULT_HOSTNQN, NVMF_NQN_FIELD_LEN - 1);
	memcpy(o->hostid, "rdmarw-nvmehost!", 16);
	o->queue_size = 128;
}

static void nvmeh_queue_free(struct nvmeh_queue *q)
{
	free(q->slots);
	free(q->rsps);
	free(q->capbuf);
	free(q->rspbuf);
	mutex_destroy(&q->lock);
	pthread_mutex_destroy(&q->poll_lock);
}

static int nvmeh_queue_alloc(struct nvmeh_ctrl *ctrl, unsigned int qid,
			     u32 depth)
{
	struct nvmeh_queue *q = &ctrl->queues[qid];
	u32 i;

	q->ctrl = ctrl;
	q->qid = qid;
	q->depth = depth;
	q->nslots = depth + NVMEH_EXTRA_SLOTS;
	mutex_init(&q->lock);
	pthread_mutex_init(&q->poll_lock, NULL);
	q->slots = calloc(q->nslots, sizeof(*q->slots));
	q->rsps = calloc(q->nslots, sizeof(*q->rsps));
	q->capbuf = aligned_alloc(
		4096, NVMEH_ALIGN((size_t)q->nslots * NVMEH_CAPSULE_MAX, 4096));
	q->rspbuf = aligned_alloc(
		64,
		NVMEH_ALIGN((size_t)q->nslots * sizeof(struct nvme_completion),
			    64));
	if (!q->slots || !q->rsps || !q->capbuf || !q->rspbuf)
		return -ENOMEM;
	memset(q->capbuf, 0, (size_t)q->nslots * NVMEH_CAPSULE_MAX);
	memset(q->rspbuf, 0,
	       (size_t)q->nslots * sizeof(struct nvme_completion));
	for (i = 0; i < q->nslots; i++) {
		struct nvmeh_slot *slot = &q->slots[i];
		struct nvmeh_rsp *rsp = &q->rsps[i];

		slot->q = q;
		slot->tag = (u16)i;
		slot->capsule = q->capbuf + (size_t)i * NVMEH_CAPSULE_MAX;
		slot->send_cqe.done = nvmeh_send_done;
		slot->reg_cqe.done = nvmeh_reg_done;
		slot->inv_cqe.done = nvmeh_inv_done;
		rsp->q = q;
		rsp->buf =
			q->rspbuf + (size_t)i * sizeof(struct nvme_completion);
		rsp->cqe.done = nvmeh_recv_done;
	}
	return 0;
}

static void nvmeh_ctrl_free(struct nvmeh_ctrl *ctrl)
{
	struct nvmeh_buf *buf, *tmp;
	unsigned int i;

	if (ctrl->wq)
		destroy_workqueue(ctrl->wq);
	/* the queues' teardowns deregistered the regions' MRs */
	list_for_each_entry_safe(buf, tmp, &ctrl->bufs, entry) {
		list_del(&buf->entry);
		free(buf);
	}
	mutex_destroy(&ctrl->buf_lock);
	for (i = 0; ctrl->queues && i < ctrl->nr_queues; i++)
		nvmeh_queue_free(&ctrl->queues[i]);
	free(ctrl->queues);
	free(ctrl->cdata);
	mutex_destroy(&ctrl->state_lock);
	mutex_destroy(&ctrl->auth_lock);
	nvme_auth_wipe(&ctrl->opts, sizeof(ctrl->opts));
	free(ctrl);
}

/* DHHC-1 keys that parse, NUL terminated; no controller key alone. */
static bool nvmeh_secrets_valid(const struct nvmeh_opts *o)
{
	struct nvme_dhchap_key k;
	bool ok = true;

	if (strnlen(o->dhchap_secret, sizeof(o->dhchap_secret)) ==
		    sizeof(o->dhchap_secret) ||
	    strnlen(o->dhchap_ctrl_secret, sizeof(o->dhchap_ctrl_secret)) ==
		    sizeof(o->dhchap_ctrl_secret))
		return false;
	if (o->dhchap_secret[0])
		ok = !nvme_auth_parse_key(o->dhchap_secret, &k);
	if (ok && o->dhchap_ctrl_secret[0])
		ok = o->dhchap_secret[0] &&
		     !nvme_auth_parse_key(o->dhchap_ctrl_secret, &k);
	nvme_auth_wipe(&k, sizeof(k));
	return ok;
}

struct nvmeh_ctrl *nvmeh_ctrl_create(const struct nvmeh_opts *opts)
{
	struct nvmeh_ctrl *ctrl;
	unsigned int i;
	int ret;

	nvmeh_status_tls = 0;
	nvmeh_result_tls = 0;
	nvmeh_reject_tls = 0;
	if (!opts || !opts->subsysnqn[0] || opts->nr_io_queues > 64 ||
	    opts->queue_size > 1024 ||
	    (opts->queue_size && opts->queue_size < 2) ||
	    !nvmeh_secrets_valid(opts))
		return ERR_PTR(-EINVAL);
	ctrl = calloc(1, sizeof(*ctrl));
	if (!ctrl)
		return ERR_PTR(-ENOMEM);
	ctrl->opts = *opts;
	if (!ctrl->opts.queue_size)
		ctrl->opts.queue_size = 128;
	if (!ctrl->opts.io_timeout_ms)
		ctrl->opts.io_timeout_ms = 5000;
	ctrl->deadline_ms = nvmeh_deadline_ms(ctrl->opts.io_timeout_ms);
	if (!ctrl->opts.reconnect_delay_ms)
		ctrl->opts.reconnect_delay_ms = 10;
	if (!ctrl->opts.max_reconnects)
		ctrl->opts.max_reconnects = 100;
	mutex_init(&ctrl->state_lock);
	mutex_init(&ctrl->auth_lock);
	mutex_init(&ctrl->buf_lock);
	INIT_LIST_HEAD(&ctrl->bufs);
	init_completion(&ctrl->live);
	rdmarw_init_work(&ctrl->err_work, nvmeh_err_work);
	rdmarw_init_delayed_work(&ctrl->reconnect_work, nvmeh_reconnect_work);
	rdmarw_init_delayed_work(&ctrl->ka_work, nvmeh_ka_work);
	rdmarw_init_delayed_work(&ctrl->timeout_work, nvmeh_timeout_work);
	ctrl->nr_queues = opts->nr_io_queues + 1;
	ctrl->queues = calloc(ctrl->nr_queues, sizeof(*ctrl->queues));
	ctrl->cdata = calloc(1, NVMF_CONNECT_DATA_SIZE);
	ctrl->wq = alloc_ordered_workqueue("nvmeh", 0);
	if (!ctrl->queues || !ctrl->cdata || IS_ERR_OR_NULL(ctrl->wq)) {
		if (IS_ERR(ctrl->wq))
			ctrl->wq = NULL;
		if (!ctrl->queues)
			ctrl->nr_queues = 0;
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < ctrl->nr_queues; i++) {
		ret = nvmeh_queue_alloc(
			ctrl, i, i ? ctrl->opts.queue_size : NVMEH_AQ_DEPTH);
		if (ret) {
			ctrl->nr_queues = i + 1;
			goto fail;
		}
	}
	ret = nvmeh_setup_ctrl(ctrl);
	if (ret)
		goto fail;
	mutex_lock(&ctrl->state_lock);
	nvmeh_set_live(ctrl);
	mutex_unlock(&ctrl->state_lock);
	return ctrl;
fail:
	nvmeh_ctrl_free(ctrl);
	return ERR_PTR(ret);
}

u64 nvmeh_last_result(void)
{
	return nvmeh_result_tls;
}

u16 nvmeh_last_status(u16 *reject)
{
	if (reject)
		*reject = nvmeh_reject_tls;
	return nvmeh_status_tls;
}

static void nvmeh_shutdown(struct nvmeh_ctrl *ctrl)
{
	u32 cc = (NVME_NVM_IOSQES << NVME_CC_IOSQES_SHIFT) |
		 (NVME_NVM_IOCQES << NVME_CC_IOCQES_SHIFT) | NVME_CC_ENABLE |
		 NVME_CC_SHN_NORMAL;
	struct nvmeh_queue *q = &ctrl->queues[0];
	bool live;

	mutex_lock(&q->lock);
	live = q->state == Q_LIVE;
	mutex_unlock(&q->lock);
	if (!live)
		return;
	if ((ctrl->info.cap >> 37) & (1u << 6))
		cc |= NVME_CC_CSS_CSI;
	if (!nvmeh_prop_set(ctrl, NVME_REG_CC, cc))
		nvmeh_wait_csts(ctrl, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_CMPLT,
				1000);
}

void nvmeh_ctrl_destroy(struct nvmeh_ctrl *ctrl)
{
	if (!ctrl)
		return;
	mutex_lock(&ctrl->state_lock);
	ctrl->state = C_DELETING;
	complete_all(&ctrl->live);
	mutex_unlock(&ctrl->state_lock);
	cancel_delayed_work_sync(&ctrl->ka_work);
	cancel_delayed_work_sync(&ctrl->timeout_work);
	cancel_work_sync(&ctrl->err_work);
	cancel_delayed_work_sync(&ctrl->reconnect_work);
	mutex_lock(&ctrl->buf_lock);
	ctrl->bufs_closed = true; /* nvmeh_ctrl_free() frees the regions */
	mutex_unlock(&ctrl->buf_lock);
	/* a keep-alive still out is answered or aborted below */
	nvmeh_shutdown(ctrl);
	nvmeh_teardown_all(ctrl);
	nvmeh_ctrl_free(ctrl);
}

const struct nvmeh_info *nvmeh_ctrl_info(struct nvmeh_ctrl *ctrl)
{
	return &ctrl->info;
}

void nvmeh_ctrl_stats(struct nvmeh_ctrl *ctrl, struct nvmeh_stats *out)
{
	unsigned int i;

	mutex_lock(&ctrl->state_lock);
	*out = ctrl->stats;
	mutex_unlock(&ctrl->state_lock);
	/* per queue, so that no two queues share a counter: summed here */
	for (i = 0; i < ctrl->nr_queues; i++) {
		struct nvmeh_queue *q = &ctrl->queues[i];

		out->poll_sleeps +=
			__atomic_load_n(&q->poller.sleeps, __ATOMIC_RELAXED);
		out->aborted +=
			__atomic_load_n(&q->st.aborted, __ATOMIC_RELAXED);
		out->local_invs +=
			__atomic_load_n(&q->st.local_invs, __ATOMIC_RELAXED);
		out->remote_invs +=
			__atomic_load_n(&q->st.remote_invs, __ATOMIC_RELAXED);
		out->inline_writes +=
			__atomic_load_n(&q->st.inline_writes, __ATOMIC_RELAXED);
		out->bad_cqes +=
			__atomic_load_n(&q->st.bad_cqes, __ATOMIC_RELAXED);
	}
}

bool nvmeh_ctrl_live(struct nvmeh_ctrl *ctrl)
{
	bool live;

	mutex_lock(&ctrl->state_lock);
	live = ctrl->state == C_LIVE;
	mutex_unlock(&ctrl->state_lock);
	return live;
}

bool nvmeh_ctrl_dead(struct nvmeh_ctrl *ctrl)
{
	bool dead;

	mutex_lock(&ctrl->state_lock);
	dead = ctrl->state == C_DEAD;
	mutex_unlock(&ctrl->state_lock);
	return dead;
}

int nvmeh_ctrl_wait_live(struct nvmeh_ctrl *ctrl, unsigned int timeout_ms)
{
	wait_for_completion_timeout(&ctrl->live, msecs_to_jiffies(timeout_ms));
	mutex_lock(&ctrl->state_lock);
	switch (ctrl->state) {
	case C_LIVE:
		mutex_unlock(&ctrl->state_lock);
		return 0;
	case C_DEAD:
	case C_DELETING:
		mutex_unlock(&ctrl->state_lock);
		return -ENODEV;
	default:
		mutex_unlock(&ctrl->state_lock);
		return -ETIMEDOUT;
	}
}

int nvmeh_ctrl_reset(struct nvmeh_ctrl *ctrl)
{
	if (!nvmeh_ctrl_live(ctrl))
		return -EBUSY;
	nvmeh_error_recovery(ctrl);
	return 0;
}

struct ib_qp *nvmeh_ctrl_qp(struct nvmeh_ctrl *ctrl, unsigned int qid)
{
	struct ib_qp *qp = NULL;

	if (qid >= ctrl->nr_queues)
		return NULL;
	mutex_lock(&ctrl->queues[qid].lock);
	if (ctrl->queues[qid].state != Q_DOWN)
		qp = ctrl->queues[qid].qp;
	mutex_unlock(&ctrl->queues[qid].lock);
	return qp;
}

struct ib_device *nvmeh_ctrl_device(struct nvmeh_ctrl *ctrl)
{
	return ctrl->queues[0].dev;
}

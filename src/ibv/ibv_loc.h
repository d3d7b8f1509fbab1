/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private declarations of the libibverbs backend (src/ibv), sectioned by
 * source file.
 */
#ifndef RDMARW_IBV_LOC_H
#define RDMARW_IBV_LOC_H

#include "core/provider.h"

#include <rdmarw/ibv.h>

#include <assert.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stddef.h>

/*
 * Work requests translated per ibv_post_send()/ibv_post_recv() call: 64, a
 * poll group turn of 32 read responses (an RDMA WRITE and a SEND each) in
 * one doorbell.
 */
#define IBV_POST_BATCH 64

/* Default on-demand entries per PD. */
#define IBV_CACHE_LIMIT 1024U

/**
 * struct ibv_dev - an ibv device
 * @ibdev: the core device (first member)
 * @ctx: librdmacm's verbs context (shared with every rdma_cm id on it)
 * @own_ctx: @ctx was opened here (no rdma_cm) and must be closed
 * @port_attr: port 1 as queried at open
 * @qps_lock: protects @qps
 * @qps: every QP of the device, to find a completion's QP by number
 * @async_stop_fd: eventfd that stops @async_thread (-1: not running)
 * @async_thread: reads @ctx's asynchronous events (ibv_device.c)
 */
struct ibv_dev {
	struct ib_device ibdev;
	struct ibv_context *ctx;
	bool own_ctx;
	struct ibv_port_attr port_attr;
	pthread_mutex_t qps_lock;
	struct list_head qps;
	int async_stop_fd;
	pthread_t async_thread;
};
static_assert(offsetof(struct ibv_dev, ibdev) == 0, "core first");

/*
 * struct ibv_map_entry - one registration of a PD's map
 * @start: first byte covered
 * @end: one past the last byte
 * @mr: the registration
 * @declared: from rdmarw_ibv_declare() (else on demand)
 * @next: list link
 */
struct ibv_map_entry {
	uintptr_t start;
	uintptr_t end;
	struct ibv_mr *mr;
	bool declared;
	struct ibv_map_entry *next;
};

/**
 * struct ibv_pd_priv - an ibv PD
 * @ibpd: the core PD (first member)
 * @pd: the ibv PD
 * @map_lock: protects the map
 * @map: entries, most recently used first
 * @nr_cached: on-demand entries in @map
 * @nr_declared: declared entries in @map
 * @cache_limit: most on-demand entries
 * @map_access: access flags of map registrations
 */
struct ibv_pd_priv {
	struct ib_pd ibpd;
	struct ibv_pd *pd;
	pthread_mutex_t map_lock;
	struct ibv_map_entry *map;
	unsigned int nr_cached;
	unsigned int nr_declared;
	unsigned int cache_limit;
	int map_access;
};
static_assert(offsetof(struct ibv_pd_priv, ibpd) == 0, "core first");

struct ibv_cq_priv;

/**
 * struct ibv_flushq - flushed completions made here for one queue of a QP
 *	(ibv_flush.c), written and read under @cq's lock
 * @wc: @size completions, a ring
 * @size: capacity (the queue's max_send_wr or max_recv_wr)
 * @head: next to write (free-running)
 * @tail: next to poll (free-running)
 * @cq: the CQ they complete on
 * @entry: link in @cq's flushing list while @queued
 * @queued: on that list (the ring is not empty)
 */
struct ibv_flushq {
	struct ib_wc *wc;
	u32 size;
	u32 head;
	u32 tail;
	struct ibv_cq_priv *cq;
	struct list_head entry;
	bool queued;
};

/**
 * struct ibv_zc_ring - the caller's wr_ids of a QP's WRs signalled only so
 * that the device copies them (rdmarw_tx_guard, zc_signal())
 * @entry: link in the send CQ's @zc_retired list once parked
 * @qp_num: the QP's number, to know its completions after it is gone
 * @n: number of @ids (twice the Send Queue)
 * @next: the next slot (under the QP's send_lock)
 * @out: WRs posted through a slot whose completion was not yet polled
 *       (atomic: posting counts up, polling down)
 * @dead: the QP was destroyed; the last completion polled frees the ring
 * @ids: the slots; such a WR's ibv wr_id is its slot's address, so its
 *       completion is known: dropped when it succeeded, given back the
 *       caller's wr_id when it failed
 *
 * A QP destroyed before its completions were polled (no drain) parks its
 * ring on the send CQ until they are, or until the CQ goes, so that no
 * slot address ever reaches the caller as a wr_id.
 */
struct ibv_zc_ring {
	struct list_head entry;
	u32 qp_num;
	u32 n;
	u32 next;
	u32 out;
	bool dead;
	u64 ids[];
};

/**
 * struct ibv_cq_priv - an ibv CQ
 * @ibcq: the core CQ (first member)
 * @cq: the ibv CQ
 * @channel: completion channel (non-blocking)
 * @ctl_fd: eventfd that wakes @thread to look at @ev_taken and @ev_stop
 * @thread: waits for completion events and calls comp_handler
 * @kick_fd: eventfd that wakes @thread (or the poll() of the events' taker)
 *	for completions made here
 * @ev_lock: protects @ev_taken and @ev_stop, and is held by whoever reads
 *	@channel or @kick_fd (one reader at a time)
 * @ev_taken: the events are the caller's (rdmarw_cq_events_take()): @thread
 *	waits on @ctl_fd alone
 * @ev_stop: @thread is asked to end (destroy_cq)
 * @lock: protects @stash, @flushing and @zc_retired
 * @stash: one completion taken to answer IB_CQ_REPORT_MISSED_EVENTS
 * @stashed: @stash holds a completion
 * @last_qp: QP of the last completion (lookup cache)
 * @flushing: struct ibv_flushq.entry of the queues with completions made
 *	here (ibv_flush.c), oldest first
 * @zc_retired: struct ibv_zc_ring.entry of destroyed QPs' rings whose
 *	completions were not all polled
 */
struct ibv_cq_priv {
	struct ib_cq ibcq;
	struct ibv_cq *cq;
	struct ibv_comp_channel *channel;
	int ctl_fd;
	int kick_fd;
	pthread_t thread;
	pthread_mutex_t ev_lock;
	bool ev_taken;
	bool ev_stop;
	pthread_mutex_t lock;
	struct ibv_wc stash;
	bool stashed;
	struct ib_qp *last_qp;
	struct list_head flushing;
	struct list_head zc_retired;
};
static_assert(offsetof(struct ibv_cq_priv, ibcq) == 0, "core first");

/**
 * struct ibv_qp_priv - an ibv QP
 * @ibqp: the core QP (first member)
 * @qp: the ibv QP
 * @cmid: the librdmacm id it was given to (rdma_create_qp()), or NULL
 * @zc: on a device with rdmarw_tx_guard, the slots of the WRs signalled
 *      only so that the device copies them (struct ibv_zc_ring)
 * @entry: link in the device's QP list
 * @send_lock: serialises translation and posting on the Send Queue
 * @recv_lock: same for the Receive Queue
 * @swr: translation array for send work requests
 * @ssge: SGEs of @swr (IBV_POST_BATCH * max_send_sge)
 * @rwr: translation array for receive work requests
 * @rsge: SGEs of @rwr (IBV_POST_BATCH * max_recv_sge)
 * @sflush: flushed completions of sends posted in ERR (ibv_flush.c)
 * @rflush: the same for receives
 * @in_err: the provider's QP is known to be in ERR, so posts are flushed
 *	by rdmarw (ibv_flush.c): set (release) by a move to ERR holding both
 *	@send_lock and @recv_lock (rdmarw__ibv_err_end()) or by the poll that
 *	finds an error completion of the QP (rdmarw__ibv_err_seen()), never
 *	cleared (no move out of ERR on this path), read by the posts under
 *	either lock
 */
struct ibv_qp_priv {
	struct ib_qp ibqp;
	struct ibv_qp *qp;
	struct rdma_cm_id *cmid;
	struct list_head entry;
	pthread_mutex_t send_lock;
	pthread_mutex_t recv_lock;
	struct ibv_send_wr swr[IBV_POST_BATCH];
	struct ibv_sge *ssge;
	struct ibv_recv_wr rwr[IBV_POST_BATCH];
	struct ibv_sge *rsge;
	struct ibv_flushq sflush;
	struct ibv_flushq rflush;
	struct ibv_zc_ring *zc;
	bool in_err;
};
static_assert(offsetof(struct ibv_qp_priv, ibqp) == 0, "core first");

/**
 * struct ibv_mr_priv - an ibv MR (user registrations)
 * @ibmr: the core MR (first member)
 * @mr: the ibv MR
 */
struct ibv_mr_priv {
	struct ib_mr ibmr;
	struct ibv_mr *mr;
};
static_assert(offsetof(struct ibv_mr_priv, ibmr) == 0, "core first");

static inline struct ibv_dev *to_idev(const struct ib_device *d)
{
	return container_of(d, struct ibv_dev, ibdev);
}

static inline struct ibv_pd_priv *to_ipd(const struct ib_pd *p)
{
	return container_of(p, struct ibv_pd_priv, ibpd);
}

static inline struct ibv_cq_priv *to_icq(const struct ib_cq *c)
{
	return container_of(c, struct ibv_cq_priv, ibcq);
}

static inline struct ibv_qp_priv *to_iqp(const struct ib_qp *q)
{
	return container_of(q, struct ibv_qp_priv, ibqp);
}

static inline struct ibv_mr_priv *to_imr(const struct ib_mr *m)
{
	return container_of(m, struct ibv_mr_priv, ibmr);
}

/* ---- ibv_device.c ------------------------------------------------------- */
extern const struct ib_device_ops rdmarw__ibv_ops;
struct ib_device *rdmarw__ibv_dev_of_ctx(struct ibv_context *ctx);

/* ---- ibv_map.c --------------------------------------------------------- */
int rdmarw__ibv_map_init(struct ibv_pd_priv *ipd);
void rdmarw__ibv_map_release(struct ibv_pd_priv *ipd);
int rdmarw__ibv_map_lkey(struct ibv_pd_priv *ipd, u64 addr, u32 len, u32 *lkey);

/* ---- ibv_flush.c: WRs posted to a QP in ERR ----------------------------- */

/*
 * A provider's refusal of a post (QP or SRQ) as a negative errno.
 * libibverbs says a positive errno, but libsiw answers a full queue with
 * -ENOMEM (and a bad WR with -EINVAL): the sign is not trusted.
 */
static inline int rdmarw__ibv_post_errno(int ret)
{
	return ret < 0 ? ret : -ret;
}

int rdmarw__ibv_flushq_init(struct ibv_flushq *q, struct ibv_cq_priv *cq,
			    u32 size);
void rdmarw__ibv_flushq_fini(struct ibv_flushq *q);
bool rdmarw__ibv_flush_posts(const struct ibv_qp_priv *iqp);
void rdmarw__ibv_err_begin(struct ibv_qp_priv *iqp);
void rdmarw__ibv_err_end(struct ibv_qp_priv *iqp, bool moved);
void rdmarw__ibv_err_seen(struct ibv_qp_priv *iqp);
int rdmarw__ibv_flush_send(struct ibv_qp_priv *iqp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr);
int rdmarw__ibv_flush_recv(struct ibv_qp_priv *iqp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr);
int rdmarw__ibv_flush_poll(struct ibv_cq_priv *cq, struct ib_wc *wc, int n);

#endif /* RDMARW_IBV_LOC_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A fake provider for the verbs core's own tests: an ib_device_ops table
 * that keeps just enough state to exercise the core's rules (reference
 * counts, refusals, page lists, completion dispatch) without moving any
 * data.  Completions are injected with fake_cq_push(), or produced by
 * ib_post_send()/ib_post_recv() as documented below.  Every counter is
 * public so that tests can assert that nothing leaked.
 */
#ifndef RDMARW_TESTS_FAKE_PROVIDER_H
#define RDMARW_TESTS_FAKE_PROVIDER_H

#include "core/provider.h"

#define FAKE_LOCAL_DMA_LKEY 0x1234u
#define FAKE_MAX_POLL_LOG 256

/**
 * struct fake_dev - the fake device
 * @ibdev: the core part (first member)
 * @fail_mr_alloc_at: make the Nth MR allocation (alloc_mr and
 *                    alloc_mr_integrity, counted from 1) fail; 0 never
 * @fail_errno: the error it fails with (negative; -ENOMEM by default)
 * @mr_alloc_calls: MR allocations attempted so far
 * @modify_qp_ret: what modify_qp answers (0 by default)
 * @dereg_mr_ret: what dereg_mr answers (0 by default)
 * @live_pds: PDs the provider holds
 * @live_cqs: CQs the provider holds
 * @live_qps: QPs the provider holds
 * @live_mrs: MRs the provider holds
 * @next_index: next MR key index
 */
struct fake_dev {
	struct ib_device ibdev;
	int fail_mr_alloc_at;
	int fail_errno;
	int mr_alloc_calls;
	int modify_qp_ret;
	int dereg_mr_ret;
	long live_pds;
	long live_cqs;
	long live_qps;
	long live_mrs;
	u32 next_index;
};

/**
 * struct fake_cq - the fake CQ: a ring of injected completions
 * @ibcq: the core part (first member)
 * @lock: protects everything below
 * @ring: @cap entries
 * @cap: ring size (the CQ's nr_cqe)
 * @head: oldest entry
 * @count: entries waiting
 * @armed: the next completion calls comp_handler
 * @poll_log: num_entries of each poll_cq call, in order (first
 *            FAKE_MAX_POLL_LOG calls)
 * @polls: poll_cq calls
 */
struct fake_cq {
	struct ib_cq ibcq;
	pthread_mutex_t lock;
	struct ib_wc *ring;
	unsigned int cap;
	unsigned int head;
	unsigned int count;
	bool armed;
	int poll_log[FAKE_MAX_POLL_LOG];
	int polls;
};

/**
 * struct fake_qp - the fake QP
 * @ibqp: the core part (first member)
 * @recv: receives posted and not yet flushed (up to cap.max_recv_wr)
 * @nr_recv: entries in @recv
 * @sends: send WRs accepted
 * @last_mask: attr_mask of the last modify_qp
 */
struct fake_qp {
	struct ib_qp ibqp;
	struct ib_recv_wr *recv;
	unsigned int nr_recv;
	int sends;
	int last_mask;
};

/**
 * struct fake_mr - the fake MR: the page list ib_sg_to_pages() built
 * @ibmr: the core part (first member)
 * @pages: page addresses, max_num_sg of them
 * @npages: pages set by the last map_mr_sg
 */
struct fake_mr {
	struct ib_mr ibmr;
	u64 *pages;
	u32 npages;
};

/**
 * fake_dev_new() - allocate and register a fake device
 * @name: registry name, "%d" allowed
 * @proto: protocol of its one port
 *
 * Attributes: max_qp_wr 1024, 16 SGEs each way and for READ, max_cqe 4096,
 * fast registration with 512 pages per MR, virtual DMA, a local DMA lkey.
 * Tests may change ibdev.attrs before creating objects.
 *
 * Return: the device, or NULL (allocation failure or a refused name).
 */
struct fake_dev *fake_dev_new(const char *name, enum rdma_protocol proto);

/**
 * fake_dev_free() - unregister and free a fake device
 * @fd: the device; NULL does nothing
 *
 * Return: 0, or -EBUSY (nothing freed) while PDs or CQs exist on it.
 */
int fake_dev_free(struct fake_dev *fd);

/**
 * fake_cq_push() - inject a completion
 * @cq: a CQ of a fake device
 * @wc: the completion (copied)
 *
 * If the CQ is armed it is disarmed and its comp_handler called, outside
 * the CQ's lock, as a device interrupt would.
 *
 * Return: 0, or -ENOSPC when the ring is full.
 */
int fake_cq_push(struct ib_cq *cq, const struct ib_wc *wc);

/**
 * fake_cq_count() - completions waiting in a fake CQ
 * @cq: the CQ
 *
 * Return: the count.
 */
unsigned int fake_cq_count(struct ib_cq *cq);

static inline struct fake_dev *to_fake_dev(struct ib_device *dev)
{
	return container_of(dev, struct fake_dev, ibdev);
}

static inline struct fake_cq *to_fake_cq(struct ib_cq *cq)
{
	return container_of(cq, struct fake_cq, ibcq);
}

static inline struct fake_qp *to_fake_qp(struct ib_qp *qp)
{
	return container_of(qp, struct fake_qp, ibqp);
}

static inline struct fake_mr *to_fake_mr(struct ib_mr *mr)
{
	return container_of(mr, struct fake_mr, ibmr);
}

/*
 * Posting: send WRs are accepted in RTS (SQD too) and complete at once with
 * IB_WC_SUCCESS on the send CQ when signaled (or on an IB_SIGNAL_ALL_WR
 * QP); in ERR they complete with IB_WC_WR_FLUSH_ERR, signaled or not; in
 * other states they are refused with -EINVAL.  Receives wait on the QP
 * until it moves to ERR (then each is flushed on the receive CQ, in order)
 * and complete flushed at once when posted in ERR; in RESET they are
 * refused.
 */

#endif /* RDMARW_TESTS_FAKE_PROVIDER_H */

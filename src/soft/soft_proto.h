/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The software device's cross-file functions (rdmarw__soft_*), sectioned
 * by the file that defines them.  Inline fast paths live in the header of
 * their role (soft_cq.h, soft_req.h, soft_resp.h), the access checks in
 * soft_access.h.
 */
#ifndef RDMARW_SOFT_PROTO_H
#define RDMARW_SOFT_PROTO_H

#include "soft/soft_types.h"

/* ---- soft_device.c ------------------------------------------------- */

extern const struct ib_device_ops rdmarw__soft_ops;

/* Random bits for key indexes and variants. */
u32 rdmarw__soft_random(void);

/* ---- soft_task.c (the progress thread) ------------------------------- */

/* Run @qp's Send Queue: inline, or on its device's progress thread. */
void rdmarw__soft_qp_schedule(struct soft_qp *qp);
/* Remove @qp from its device's thread and wait until it is not running. */
void rdmarw__soft_task_forget(struct soft_qp *qp);
int rdmarw__soft_task_start(struct soft_dev *sdev);
void rdmarw__soft_task_stop(struct soft_dev *sdev);
/* A new QP joins a progress thread's group, round-robin (soft_qp.task). */
void rdmarw__soft_task_join(struct soft_qp *qp);
/* A poller found @qp's send CQ empty: run @qp's Send Queue here if it is
 * pending and this thread runs no other; true when it ran. */
bool rdmarw__soft_task_help(struct soft_qp *qp);

/* ---- soft_pd.c ------------------------------------------------------ */

int rdmarw__soft_alloc_pd(struct ib_pd *pd);
void rdmarw__soft_dealloc_pd(struct ib_pd *pd);

/* ---- soft_cq.c ------------------------------------------------------ */

int rdmarw__soft_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *a);
void rdmarw__soft_destroy_cq(struct ib_cq *cq);
int rdmarw__soft_poll_cq(struct ib_cq *cq, int num_entries, struct ib_wc *wc);
int rdmarw__soft_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags);
/* Add a completion.  Return: 0, or -ENOSPC when the ring is full (the
 * completion is dropped and counted; nothing is overwritten). */
int rdmarw__soft_cq_post(struct soft_cq *cq, const struct soft_cqe *cqe);
/* The same in two steps, to build the entry in place: claim takes the CQ
 * lock and returns the next free slot, or NULL (lock released, overflow
 * counted) when the ring is full; commit publishes the slot claimed,
 * wakes an armed CQ and releases the lock.  Nothing but filling the slot
 * may happen in between. */
struct soft_cqe *rdmarw__soft_cq_full(struct soft_cq *cq);
void rdmarw__soft_cq_commit_armed(struct soft_cq *cq,
				  const struct soft_cqe *cqe);

/* Remove every entry of @qp (QP reset or destroy, as mlx5_ib_cq_clean). */
void rdmarw__soft_cq_clean(struct soft_cq *cq, struct soft_qp *qp);

/* ---- soft_mr.c ------------------------------------------------------ */

int rdmarw__soft_alloc_mr(struct ib_mr *mr, u32 max_num_sg);
int rdmarw__soft_alloc_mr_integrity(struct ib_mr *mr, u32 max_num_data_sg,
				    u32 max_num_meta_sg);
int rdmarw__soft_reg_user_mr(struct ib_mr *mr, u64 start, u64 length,
			     u64 virt_addr, int access);
int rdmarw__soft_dereg_mr(struct ib_mr *mr);
int rdmarw__soft_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg,
			   int sg_nents, unsigned int *sg_offset);

/* The CPU bytes of @rg at @off: a pointer and how many bytes follow it
 * contiguously (at least 1, at most @rg->len - @off).  0, or -EFAULT. */
int rdmarw__soft_region_span(const struct soft_region *rg, u64 off, u8 **ptr,
			     u64 *n);
/* The same for a walk in order: *@hint (start at 0) remembers where in a
 * fast MR's page list the last span was, so the next one is found at once. */
int rdmarw__soft_region_span_at(const struct soft_region *rg, u64 off,
				u32 *hint, u8 **ptr, u64 *n);

/* Copy @len bytes from the regions @src to the regions @dst (checked).
 * Return: 0, or -ENOMEM when a copy between two integrity MRs finds no
 * bounce buffer (no byte moved). */
int rdmarw__soft_copy(const struct soft_region *src, u32 nsrc,
		      const struct soft_region *dst, u32 ndst, u64 len);

/*
 * Register (REG_MR) or invalidate (LOCAL_INV, SEND_WITH_INV,
 * READ_WITH_INV) under the MR's own lock (soft_mr.wlock), found by key
 * index in a read section of the caller's own indicator (@qp's mem_rd for
 * REG_MR, @r for the invalidation: mem_rd for the requester and completer,
 * resp_rd for the responder).  REG_MR stores the state last, with release,
 * and waits for no reader; the MR to register is named by index and
 * serial (it may be gone by now).  An invalidation stores FREE and waits
 * for the sections that used the MR (soft_br_grace_mask()).  Not inside a
 * read section.
 * Return: 0, or -EINVAL when the device refuses (rxe_reg_fast_mr,
 * rxe_invalidate_mr, siw_fastreg_mr, siw_invalidate_stag rules).
 */
int rdmarw__soft_mr_register(struct soft_qp *qp, u32 index, u64 serial, u32 key,
			     int access);
int rdmarw__soft_mr_invalidate_sync(struct soft_dev *sdev, struct ib_pd *pd,
				    u32 key, struct soft_br_reader *r);
/* ops->retire_mr: FREE now, and a queued REG_MR of it fails (serial). */
void rdmarw__soft_retire_mr(struct ib_mr *ibmr);

/* The first buckets, at device creation: a table is never empty, so a
 * lookup needs no test for it.  0 or -ENOMEM. */
int rdmarw__soft_keytab_init(struct soft_keytab *kt);
void rdmarw__soft_keytab_free(struct soft_keytab *kt);

/* The MR of key index @index if its serial is @serial (mem_lock held). */
struct soft_mr *rdmarw__soft_mr_find(struct soft_dev *sdev, u32 index,
				     u64 serial);

/* ---- soft_iommu.c --------------------------------------------------- */

int rdmarw__soft_iova_alloc(struct ib_device *dev, struct dma_iova_state *state,
			    phys_addr_t phys, size_t size);
int rdmarw__soft_iova_link(struct ib_device *dev, struct dma_iova_state *state,
			   phys_addr_t phys, size_t offset, size_t size);
void rdmarw__soft_iova_destroy(struct ib_device *dev,
			       struct dma_iova_state *state, size_t mapped_len);
void rdmarw__soft_iommu_init(struct soft_iommu *mmu);
void rdmarw__soft_iommu_fini(struct soft_iommu *mmu);

/* ---- soft_opcode.c -------------------------------------------------- */

/* The entry for @opcode, or NULL for an opcode the device does not take. */
const struct soft_opcode *rdmarw__soft_opcode(int opcode);

/* ---- soft_qp.c ------------------------------------------------------ */

int rdmarw__soft_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *attr);
int rdmarw__soft_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask);
void rdmarw__soft_destroy_qp(struct ib_qp *qp);
int rdmarw__soft_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr);
int rdmarw__soft_recv_fill(struct soft_recv_wqe *w, u32 max_sge, bool full,
			   const struct ib_recv_wr *wr);
int rdmarw__soft_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr);

/*
 * Move @qp to ERR (idempotent) and flush its Receive Queue.  The state
 * changes under rq_lock, so a receive posted at the same time is either
 * queued before (and flushed here) or sees ERR and is flushed by its post:
 * each completes once.  The Send Queue is flushed by its executor; the
 * caller makes it run.  If the peer's Send Queue waited for a receive,
 * kick_peer is set.  A QP attached to an SRQ with no receive of it in
 * flight hears IB_EVENT_QP_LAST_WQE_REACHED here, after rq_lock is
 * dropped (soft_srq.h).  Return: true if the QP was not in ERR before.
 */
bool rdmarw__soft_qp_to_err(struct soft_qp *qp);
/* Execute the Send Queue in this thread (unless another thread does). */
void rdmarw__soft_qp_run(struct soft_qp *qp);
/* Under the executor role (unless another thread has it): what siw's
 * zero-copy model holds goes out (soft_zcopy.c), then any posted work. */
void rdmarw__soft_qp_zc_flush(struct soft_qp *qp);
/*
 * Move @qp's counters into its device's counters (the QP is going).  Call
 * with fabric->lock and the QP's executor role held, once no QP names it
 * as its peer, or on a QP nobody runs.
 */
void rdmarw__soft_stats_fold(struct soft_qp *qp);

/* ---- soft_req.c (requester) ----------------------------------------- */

/* Execute posted WQEs until the queue is empty or stalls (executor role). */
void rdmarw__soft_requester(struct soft_qp *qp);
/*
 * Send a WQE held by the zero-copy model (soft_zcopy.c) to the peer now,
 * its payload from @snap (copied when it completed) or, when @wqe->zcopy,
 * from its sources as they are now.  Executor role.  Return: its fault (the
 * caller moves the QP to ERR: the WQE has completed already).
 */
enum soft_fault rdmarw__soft_req_replay(struct soft_qp *qp,
					struct soft_send_wqe *wqe, u8 *snap);

/* ---- soft_zcopy.c (siw's zero-copy transmit, iWARP profiles) -------- */

/* At QP creation on a device with rdmarw_tx_zcopy_min: 0 or -ENOMEM. */
int rdmarw__soft_zc_init(struct soft_qp *qp);
/* soft_fault.c: the per-WQE hook of @qp stays on for the model. */
void rdmarw__soft_fault_zc(struct soft_qp *qp);
void rdmarw__soft_zc_fini(struct soft_qp *qp);
/* The requester, for a SEND or WRITE that must wait behind held WQEs or
 * is zero-copy itself: hold it (it then completes as sent).  SOFT_OK, or
 * the local protection fault of a payload that cannot be copied. */
enum soft_fault rdmarw__soft_zc_hold(struct soft_qp *qp,
				     struct soft_send_wqe *wqe);
/* The requester's hook (through rdmarw__soft_fault_exec(), the QP's fault
 * flag is on): a SEND or WRITE that is zero-copy or finds WQEs held is held
 * (SOFT_F_HELD, or the hold's fault); anything else first lets what is held
 * go out and then executes (SOFT_OK). */
enum soft_fault rdmarw__soft_zc_exec(struct soft_qp *qp,
				     struct soft_send_wqe *wqe);
/* Send what is held, oldest first (executor role). */
void rdmarw__soft_zc_flush(struct soft_qp *qp);
/* Forget what is held (reset, destroy; nobody runs the executor). */
void rdmarw__soft_zc_drop(struct soft_qp *qp);
/* A poller found a CQ empty or armed it: held WQEs of the fabric's QPs go
 * out (the wire between its devices is the fabric). */
void rdmarw__soft_zc_run_due(struct soft_fabric *f);

/* ---- soft_net.c (the transmit/receive seam, loopback transport) ----- */

/*
 * Send @pkt from @qp (the loopback: @qp's peer receives it now, in this
 * thread; with no peer the packet is lost, and a request's sender hears
 * RETRY_EXC as from a retry timer).  Return: the receiver's flags (enum
 * soft_rcv_flags), or a negative errno for a packet the receiver refuses
 * as malformed.  The requester's fast path is the same loopback, inline:
 * soft_xmit_req() in soft_net.h.
 */
int rdmarw__soft_xmit(struct soft_qp *qp, struct soft_pkt *pkt);
/*
 * Receive @pkt at @qp: a request goes to the responder, an answer to the
 * completer.  The header is checked first (kind, opcode entry of the
 * request's class, length, a payload of exactly @pkt->h.length bytes, a
 * NAK's syndrome): -EINVAL, nothing touched.  Return: 0 or enum
 * soft_rcv_flags.
 */
int rdmarw__soft_rcv(struct soft_qp *qp, struct soft_pkt *pkt);
/* The sender @qp has left its read section: the receiver finishes the
 * message (rdmarw__soft_resp_end()).  True: the peer moved to ERR and its
 * Send Queue must run (the caller sets kick_peer). */
bool rdmarw__soft_xmit_end(struct soft_qp *qp);
/*
 * What @qp owes its peer once no read section and no executor role of
 * @qp is held, when qp->kick_peer is set: a SOFT_PKT_RESUME, on which the
 * peer's Send Queue runs (its SEND waited for a receive of @qp's, or @qp's
 * refusal moved it to ERR and it must flush).  The loopback finds the peer
 * under fabric->lock and holds it by a kick reference while it delivers.
 */
void rdmarw__soft_xmit_kick(struct soft_qp *qp);
/*
 * @qp drops its connection (siw_qp_cm_drop()): the peer learns it as a
 * closed connection and moves to ERR (loopback: now).  True: the peer's
 * Send Queue must run to flush (the caller sets kick_peer).
 */
bool rdmarw__soft_xmit_close(struct soft_qp *qp);
/* A request of @qp that nobody answers: its completer hears RETRY_EXC.
 * Returns SOFT_RCV_ANSWERED. */
int rdmarw__soft_lost(struct soft_qp *qp, const struct soft_pkt *pkt);

/* ---- soft_tcp.c (the TCP transport, soft_tcp.h for the CM's side) ---- */

/*
 * Send @pkt from @qp, which is attached to a TCP connection: a request
 * (the requester's executor) or an answer (the responder in the device's
 * thread).  Return: 0 when the wire took the request whole (a SEND or
 * WRITE completes), SOFT_RCV_ANSWERED when a READ's response has been
 * placed (qp->comp_fault), SOFT_RCV_STALL when the Send Queue must wait
 * at it (the transport runs it again).
 */
int rdmarw__soft_tcp_xmit(struct soft_qp *qp, struct soft_pkt *pkt);
/*
 * The requester asks whether the READ @seq, the oldest in flight, has been
 * answered: true (it leaves the ORQ) with *@f its placement's fault.
 */
bool rdmarw__soft_tcp_orq_done(struct soft_qp *qp, u64 seq, enum soft_fault *f);
/* The QP is in ERR: the READs in flight are forgotten (they flush). */
void rdmarw__soft_tcp_orq_drop(struct soft_qp *qp);
/* @qp drops its connection (siw_qp_cm_drop()): it is closed. */
void rdmarw__soft_tcp_drop(struct soft_qp *qp);
/* Destroy, first: the device's thread lets go of @qp (it serves it no
 * more once this returns). */
void rdmarw__soft_tcp_detach(struct soft_qp *qp);
/* Destroy, last (no executor runs): close the socket, free the buffers. */
void rdmarw__soft_tcp_free(struct soft_qp *qp);
/* A poller found @cq (cq->tcp set) empty: receive from some of its QPs'
 * connections (at most 4, in turn).  True when it served one. */
bool rdmarw__soft_tcp_poll(struct soft_cq *cq);
/* @cq (cq->tcp set) was armed: its consumer waits for an event, so the
 * device's thread waits for its connections' data again. */
void rdmarw__soft_tcp_armed(struct soft_cq *cq);
/* Destroy a CQ: its list of connections (empty by then) goes. */
void rdmarw__soft_tcp_cq_free(struct soft_cq *cq);
/* A TCP device's thread: start at creation, stop at destroy. */
int rdmarw__soft_tcp_dev_start(struct soft_dev *sdev);
void rdmarw__soft_tcp_dev_stop(struct soft_dev *sdev);

/* ---- soft_resp.c (responder) ---------------------------------------- */

/*
 * The responder, one entry per request kind, reached only through the
 * receive (mem_lock held, read): its rules in order (QP state, QP rights, a
 * receive where the opcode consumes one, then the rkey or the receive
 * buffers), each refusal answered with a packet (NAK, RNR, TERMINATE) where
 * it is found; SEND and WRITE data placed; a READ answered with a READ
 * response whose cursor is its own checked region.  Return: 0 (accepted
 * whole, nothing to finish) or enum soft_rcv_flags.
 */
int rdmarw__soft_resp_write(struct soft_qp *resp, struct soft_pkt *pkt);
int rdmarw__soft_resp_read(struct soft_qp *resp, struct soft_pkt *pkt);
int rdmarw__soft_resp_send(struct soft_qp *resp, struct soft_pkt *pkt);
/* The same for any request kind, out of line: the checked receive of
 * rdmarw__soft_rcv() and the zero-copy model's late sends (soft_zcopy.c),
 * so that the loopback's inline calls stay the fast entries' only callers
 * (a second caller kept LTO from inlining rdmarw__soft_resp_write(): +25
 * instructions per 64 B WRITE). */
int rdmarw__soft_resp_rcv(struct soft_qp *resp, struct soft_pkt *pkt);
/*
 * The WRITE's rules alone, for a transport that places the payload itself
 * (soft_tcp.c: read from the socket into the sink): @pkt a WRITE of
 * h.length > 0 bytes at h.rkey/h.va, its payload cursor unused.  Return: 0
 * and *@rg the checked sink (place under the same read section), or the
 * refusal's enum soft_rcv_flags, its answer (TERMINATE) sent.
 */
int rdmarw__soft_resp_write_sink(struct soft_qp *resp, struct soft_pkt *pkt,
				 struct soft_region *rg);
/*
 * The same for a SEND segment (soft_tcp.c places it from the socket, as
 * siw_proc_send() does): @pkt a SEND of h.length > 0 bytes at message
 * offset h.va, h.more set but on the message's last; the message's first
 * segment takes its receive.  Return: 0 and *@sink the receive's checked
 * regions from h.va on (qp->resp_rg: place under the same read section),
 * or the refusal's enum soft_rcv_flags, its answer (TERMINATE) sent.  Once
 * the segment is placed whole and its CRC is right,
 * rdmarw__soft_resp_send_placed() (@pkt the whole segment) ends the
 * message on its last: its flags, as the responder's.
 */
int rdmarw__soft_resp_send_sink(struct soft_qp *resp, struct soft_pkt *pkt,
				struct soft_cursor *sink);
int rdmarw__soft_resp_send_placed(struct soft_qp *resp,
				  const struct soft_pkt *pkt);
/* The responder's second half (qp->rx), with no read section held:
 * invalidate (SEND_WITH_INV), complete the receive, move to ERR.  True:
 * it moved to ERR and its Send Queue must run. */
bool rdmarw__soft_resp_end(struct soft_qp *resp);

/* ---- soft_opcode.c: the status each fault completes with ------------- */

/* The one place a fault becomes a completion status (beside the opcode
 * table). */
enum ib_wc_status rdmarw__soft_status(enum soft_fault f, u32 *vendor_err);

/* ---- soft_comp.c (completer) ---------------------------------------- */

/* An answer (READ response, NAK, RNR, TERMINATE) for @qp's request in
 * flight (mem_lock held, read): a READ response is placed into the sinks
 * of the READ it answers, which it must match (sequence number, length),
 * else it is ignored; the outcome is left in qp->comp_fault.  Return:
 * SOFT_RCV_ANSWERED when it answered the request in flight, else 0. */
int rdmarw__soft_comp_rcv(struct soft_qp *qp, const struct soft_pkt *pkt);
/*
 * For a transport that places a READ response segment itself (soft_tcp.c:
 * from the socket into the sink): the READ @h answers (as
 * rdmarw__soft_comp_rcv() matches it) and its sinks checked, from offset
 * @h->va on, in *@sink (qp->comp_rg: place under the same read section).
 * 0, -ENOENT (no such READ), -EACCES (a sink refused).  Then, once the
 * segment is placed whole and its CRC is right,
 * rdmarw__soft_comp_read_placed() answers like rdmarw__soft_comp_rcv().
 */
int rdmarw__soft_comp_read_sink(struct soft_qp *qp, const struct soft_hdr *h,
				struct soft_cursor *sink);
int rdmarw__soft_comp_read_placed(struct soft_qp *qp, const struct soft_hdr *h);
/* READ_WITH_INV's invalidation (no mem_lock held). */
enum soft_fault rdmarw__soft_comp_read_inv(struct soft_qp *qp,
					   struct soft_send_wqe *wqe);
/* Complete a send WQE: always on error, on success when signaled. */
void rdmarw__soft_comp_send(struct soft_qp *qp, struct soft_send_wqe *wqe,
			    enum soft_fault f);
/* The CQ of @qp was full: the QP's owner hears IB_EVENT_CQ_ERR, QP to ERR. */
void rdmarw__soft_comp_overflow(struct soft_qp *qp, struct soft_cq *cq);

/* A WQE that succeeded: its completion if signaled (the data path's). */
void rdmarw__soft_comp_send_ok(struct soft_qp *qp, struct soft_send_wqe *wqe);
/* Complete a receive: @rx, the responder's message that consumed it, or
 * NULL for a flush. */
void rdmarw__soft_comp_recv(struct soft_qp *qp, const struct soft_recv_wqe *w,
			    enum soft_fault f, const struct soft_rx *rx,
			    u64 byte_len);

/* ---- soft_fault.c (fault injection) --------------------------------- */

/* A WR is about to be queued (sq_lock held): 0, or the errno to fail the
 * post with at this WR. */
int rdmarw__soft_fault_post(struct soft_qp *qp, const struct ib_send_wr *wr);
/* A WQE is about to execute (exec_lock held): SOFT_OK, the fault to
 * complete it with, or *stall set to stop the Send Queue before it. */
enum soft_fault rdmarw__soft_fault_exec(struct soft_qp *qp,
					struct soft_send_wqe *wqe, bool *stall);
/* An MR is about to be allocated on @sdev: 0, or the errno to fail with. */
int rdmarw__soft_fault_alloc_mr(struct soft_dev *sdev);

/* ---- test hooks (soft_device.c) ------------------------------------ */

/*
 * Points where a test may run code, to make a race deterministic or to
 * fail an allocation.  Not an API: the pointer is NULL except in tests,
 * and no work request's fast path reaches a hook.
 */
extern int (*rdmarw__soft_test_hook)(enum soft_test_point tp,
				     struct soft_qp *qp);

static inline int soft_test_point(enum soft_test_point tp, struct soft_qp *qp)
{
	int (*hook)(enum soft_test_point, struct soft_qp *) =
		__atomic_load_n(&rdmarw__soft_test_hook, __ATOMIC_ACQUIRE);

	return hook ? hook(tp, qp) : 0;
}

#endif /* RDMARW_SOFT_PROTO_H */

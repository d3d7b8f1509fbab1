/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The software device's types: its structs, enums and key constants, and
 * the accessors from a core object to the device's (to_sqp() and the
 * like).  No function of another file is declared here (soft_proto.h) and
 * no data path (the role headers: soft_cq.h, soft_req.h, soft_resp.h;
 * the access checks: soft_access.h).  Sectioned by the file that owns
 * each type, as rxe's rxe_loc.h and rxe_verbs.h.
 */
#ifndef RDMARW_SOFT_TYPES_H
#define RDMARW_SOFT_TYPES_H

#include "core/provider.h"

#include <rdmarw/soft.h>

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "soft/soft_lock.h"

/*
 * Slots of a ring that holds @n entries: the next power of two, so that a
 * sequence number finds its slot with a mask, not a division.  The ring's
 * capacity is still @n: callers compare their counters with @n.
 */
static inline u32 soft_ring_slots(u32 n)
{
	u32 slots = 1;

	while (slots < n)
		slots <<= 1;
	return slots;
}

/*
 * Keys: 24-bit index, 8-bit variant.  Index 0 is never given to an MR: the
 * local DMA key lives there, so it can never resolve as an rkey, and a user
 * MR without remote rights (rkey 0, as rxe) can never be reached remotely.
 */
#define SOFT_KEY_INDEX(key) ((key) >> 8)
#define SOFT_KEY_VARIANT(key) ((key)&0xffu)
#define SOFT_INDEX_MAX 0x00ffffffu
#define SOFT_LOCAL_DMA_LKEY 0x00000001u

/* IOVAs of the emulated IOMMU: the upper half, which user VAs never use. */
#define SOFT_IOVA_BIT (1ULL << 63)

/* IBA: a message is at most 2^31 bytes. */
#define SOFT_MAX_MSG (1ULL << 31)

struct soft_dev;
struct soft_qp;
struct soft_tcp;
struct soft_tcp_dev;
struct soft_tcp_cq;
struct soft_cq;
struct soft_mr;
struct soft_sig_mr;

/* ---- soft_fault.c: fault-injection state (one per QP, one per device) -- */

/**
 * struct soft_fault_slot - an armed rule
 * @rule: as armed
 * @fault: SOFT_FAULT_WC: the internal fault giving rule.status
 * @seen: events counted since arming
 * @fired: times it fired
 * @rng: its generator's state
 * @live: still armed (a spent rule is removed)
 */
struct soft_fault_slot {
	struct soft_fault_rule rule;
	int fault;
	u64 seen;
	u64 fired;
	u64 rng;
	bool live;
};

/**
 * struct soft_fault_state - fault injection of a QP or a device (zeroed
 * with its object; nothing to set up or free)
 * @on: something is armed: the hooks' one test (atomic)
 * @lock: everything below (taken only when @on)
 * @slots: the rules, @nr_live of them, in arming order
 * @nr_live: rules armed
 * @sq_depth: QP: Send Queue depth limit, 0 for none
 * @stalled: QP: the Send Queue waits for soft_fault_resume()
 * @exec_next: QP: lowest WQE sequence number not yet counted
 * @fired: per type, times fired (atomic: a device's is shared by its QPs)
 * @sq_full: posts refused by @sq_depth (atomic)
 */
struct soft_fault_state {
	int on;
	bool zc;
	struct soft_spin lock;
	struct soft_fault_slot slots[SOFT_FAULT_MAX_RULES];
	u32 nr_live;
	u32 sq_depth;
	bool stalled;
	u64 exec_next;
	u64 fired[SOFT_FAULT_NR];
	u64 sq_full;
};

/* ---- soft_device.c ------------------------------------------------- */

/**
 * struct soft_fabric - devices that can reach each other
 * @lock: @devices, @qps, @next_qpn, QP connections and @refs of QPs; its
 *        wake-up: a QP's kick reference was dropped
 * @mem_lock: MR state, key tables and IOMMU mappings of every device of
 *            the fabric: a big-reader lock, each QP reads through its own
 *            indicators (soft_qp.mem_rd, soft_qp.resp_rd); MR creation
 *            and removal, REG_MR_INTEGRITY and IOVA link/unlink write;
 *            REG_MR and invalidation change one MR under its own lock
 *            (soft_mr.wlock) and wait for that MR's readers only
 *            (soft_br_grace_mask())
 * @devices: soft_dev.fabric_entry
 * @qps: soft_qp.fabric_entry
 * @next_qpn: the next QP number to try (cyclic, as MR key indexes)
 * @qpn_last: the highest QP number given (SOFT_QPN_LAST; tests may lower it
 *            to exhaust the space quickly)
 *
 * QP numbers are unique among the live QPs of the fabric: creation skips
 * numbers in use and fails with -ENOMEM when none is free.
 */
struct soft_fabric {
	struct soft_mutex lock;
	struct soft_brlock mem_lock;
	struct list_head devices;
	struct list_head qps;
	u32 next_qpn;
	u32 qpn_last;
	int zc_due;
};

/* QP numbers: 24 bits; 0 and 1 are the special QPs, rxe starts at 0x11. */
#define SOFT_QPN_FIRST 0x11u
#define SOFT_QPN_LAST 0x00ffffffu

/**
 * struct soft_keytab - a device's MRs by key index (under mem_lock)
 * @bucket: hash chains through soft_mr.hnext
 * @mask: the number of buckets (a power of two, never 0 after
 *        rdmarw__soft_keytab_init()) less one: an index's bucket is
 *        index & mask, one AND on the lookup of every access
 * @count: MRs in the table
 * @next: next index to try (cyclic, random start, as siw's xarray)
 */
struct soft_keytab {
	struct soft_mr **bucket;
	u32 mask;
	u32 count;
	u32 next;
};

/**
 * struct soft_iommu - the emulated IOMMU of a device (under the fabric's
 *	mem_lock: the data path translates inside its read section)
 * @ranges: soft_iova_range.entry
 * @next: next free IOVA (page aligned, SOFT_IOVA_BIT set)
 * @count: live ranges
 */
struct soft_iommu {
	struct list_head ranges;
	u64 next;
	u32 count;
};

/**
 * struct soft_task - the progress thread of a threaded device's QP group
 * @thread: the thread
 * @lock: @qps, @running, @forgetting, @naps, @kicked, @stop, and the
 *        thread's waits (its wake-up: a kick to a sleeping thread, or
 *        @running finished while @forgetting)
 * @qps: the group's QPs that were ever scheduled (soft_qp.task_entry)
 * @running: the QP the thread runs, or NULL
 * @forgetting: threads waiting in rdmarw__soft_task_forget()
 * @naps: timed waits in a row after which the thread found no work
 * @state: SOFT_TASK_RUNNING, SOFT_TASK_NAPPING or SOFT_TASK_SLEEPING;
 *         written by the thread under @lock, read by kickers without it
 * @kicked: a kicker woke the thread (it looks at @qps before it waits)
 * @stop: the thread is asked to end
 * @started: @thread exists
 * @pad: keeps the fields of two groups, each written by its own thread,
 *       off one cache line (and line pair)
 */
struct soft_task {
	pthread_t thread;
	struct soft_mutex lock;
	struct list_head qps;
	struct soft_qp *running;
	u32 forgetting;
	u32 naps;
	int state;
	bool kicked;
	bool stop;
	bool started;
	char pad[128];
};

/* soft_task.state */
enum {
	SOFT_TASK_RUNNING, /* looks at every QP of the group before it waits */
	SOFT_TASK_NAPPING, /* waits at most one nap */
	SOFT_TASK_SLEEPING, /* waits until kicked */
};

/* At most this many progress threads (QP groups) per threaded device. */
#define SOFT_TASK_GROUPS 8

/**
 * struct soft_dev - a software device (a host)
 * @ibdev: the core device (first member)
 * @fabric: the fabric it belongs to
 * @iwarp: siw rules apply (the port speaks iWARP)
 * @threaded: the progress thread runs (set and cleared with task.started,
 *            while the device has no QP)
 * @keys: MR key table
 * @fault: fault injection (soft_fault.c)
 * @fabric_entry: soft_fabric.devices
 * @profile: as created
 * @mr_serial: last soft_mr.serial given (under mem_lock)
 * @iommu: emulated IOMMU
 * @task: progress threads (profile.threaded), one per QP group: @ntasks
 *        of them, one per online CPU up to SOFT_TASK_GROUPS; a QP joins
 *        group (creation order) % @ntasks (soft_qp.task)
 * @tcpd: profile.tcp: the TCP transport's thread and epoll (soft_tcp.c)
 * @ntasks: progress threads started (0 on an inline device)
 * @next_task: QPs created so far, for the round-robin
 * @stats: counters (atomic)
 *
 * What every work request reads comes first, after the core device, so
 * that it shares as few cache lines as possible.
 */
struct soft_dev {
	struct ib_device ibdev;
	struct soft_fabric *fabric;
	bool iwarp;
	bool threaded;
	struct soft_tcp_dev *tcpd;
	struct soft_keytab keys;
	struct soft_fault_state fault;
	struct list_head fabric_entry;
	struct soft_profile profile;
	u64 mr_serial;
	struct soft_iommu iommu;
	struct soft_task task[SOFT_TASK_GROUPS];
	u32 ntasks;
	u32 next_task;
	struct soft_stats stats;
};
static_assert(offsetof(struct soft_dev, ibdev) == 0, "core struct first");

static inline struct soft_dev *to_sdev(struct ib_device *dev)
{
	return container_of(dev, struct soft_dev, ibdev);
}

/* ---- soft_pd.c ------------------------------------------------------ */

struct soft_pd {
	struct ib_pd ibpd;
};
static_assert(offsetof(struct soft_pd, ibpd) == 0, "core struct first");

/* ---- soft_cq.c ------------------------------------------------------ */

/**
 * struct soft_cqe - a ring entry
 * @wc: the completion
 * @sq_release: the counter the poller advances past @sq_seq: for send
 *              completions the Send Queue's "slots free below" (mlx5
 *              frees SQ space only when the CQE is consumed), else the
 *              CQ's own no_release; the CQ knows nothing else of the QP
 * @sq_seq: the completed WQE's sequence number
 * @solicited: a solicited receive (for IB_CQ_SOLICITED arming)
 */
struct soft_cqe {
	struct ib_wc wc;
	u64 *sq_release;
	u64 sq_seq;
	bool solicited;
};

/**
 * struct soft_cq - a completion queue
 * @ibcq: the core CQ (first member)
 * @lock: everything below
 * @ring: soft_ring_slots(@size) slots
 * @size: capacity (the cqe asked for)
 * @mask: slots - 1
 * @head: entries produced
 * @tail: entries consumed
 * @notify: armed flags (IB_CQ_SOLICITED_MASK bits), 0 when not armed
 * @no_release: the sq_release cell of entries that release nothing
 *              (receives): the poller advances every entry's cell
 * @help: threaded devices: the QP (with this send CQ) whose pending Send
 *        Queue a poller that finds the CQ empty runs itself (soft_task.c);
 *        set by a kick without @lock (from NULL), cleared under it
 * @helping: pollers running @help's Send Queue
 * @polled: a thread polled the CQ empty since it was last armed: a kick
 *          to @help need not wake the progress thread.  Not under @lock.
 * @tcp: a TCP device with profile.poll_rx: the connections a poller that
 *       finds the CQ empty receives from (soft_tcp.c); set once, from
 *       NULL, at the first attach of a QP of this CQ.  Not under @lock.
 */
struct soft_cq {
	struct ib_cq ibcq;
	struct soft_spin lock;
	struct soft_cqe *ring;
	u32 size;
	u32 mask;
	u64 head;
	u64 tail;
	int notify;
	u64 no_release;
	struct soft_qp *help;
	u32 helping;
	int polled;
	struct soft_tcp_cq *tcp;
};
static_assert(offsetof(struct soft_cq, ibcq) == 0, "core struct first");

static inline struct soft_cq *to_scq(struct ib_cq *cq)
{
	return container_of(cq, struct soft_cq, ibcq);
}

/* ---- soft_mr.c ------------------------------------------------------ */

enum soft_mr_state {
	SOFT_MR_FREE, /* fast-reg MR not registered, or invalidated */
	SOFT_MR_VALID,
};

/**
 * struct soft_seg - one element of a page list
 * @addr: DMA address (CPU address or IOVA)
 * @len: bytes
 * @off: offset of its first byte in the registered range
 */
struct soft_seg {
	u64 addr;
	u64 len;
	u64 off;
};

/**
 * struct soft_mr - a memory region
 * @ibmr: the core MR (first member)
 * @hnext: key table chain
 * @index: 24-bit key index
 * @lkey: device-side local key (fast-reg: changes with REG_MR)
 * @rkey: device-side remote key (0 when not remotely accessible, as rxe)
 * @state: SOFT_MR_VALID or SOFT_MR_FREE
 * @access: rights of the registration
 * @fast: fast-registration MR (page lists below)
 * @sig: integrity MRs: the signature state (soft_sig.h), else NULL
 * @iova: registered range start
 * @length: registered range bytes
 * @umem: user MR: the CPU address of @iova
 * @max_segs: page-list capacity
 * @map: the list ib_map_mr_sg() builds (@map_n used)
 * @reg: the list REG_MR snapshotted (@reg_n used)
 * @map_n: elements in @map (pages that continue the previous element's
 *         memory extend it: one element per contiguous run)
 * @map_pages: pages ib_map_mr_sg() put in @map (the capacity counts pages)
 * @reg_n: elements in @reg
 * @serial: unique on the device: a REG_MR WQE names its MR by index and
 *          serial, so an MR freed before the WQE runs is simply not found
 *          (upper 32 bits: given at creation; lower: counts the retires)
 * @readers: the bits of every reader indicator whose section checked the
 *           MR (soft_mr_check()), only ever set: what its grace period
 *           waits for (soft_br_grace_mask())
 * @wlock: serializes the changes of this MR's state (REG_MR, invalidation,
 *         retire; also taken by dereg and REG_MR_INTEGRITY, inside the
 *         fabric's writers' lock)
 *
 * The key check reads @hnext to @umem (and the core MR's pd): they are
 * together, after the core MR.
 */
struct soft_mr {
	struct ib_mr ibmr;
	struct soft_mr *hnext;
	u32 index;
	u32 lkey;
	u32 rkey;
	enum soft_mr_state state;
	int access;
	struct soft_spin wlock;
	bool fast;
	u64 readers;
	struct soft_sig_mr *sig;
	u64 iova;
	u64 length;
	u64 umem;
	u32 max_segs;
	struct soft_seg *map;
	struct soft_seg *reg;
	u32 map_n;
	u32 map_pages;
	u32 reg_n;
	u64 serial;
};
static_assert(offsetof(struct soft_mr, ibmr) == 0, "core struct first");

static inline struct soft_mr *to_smr(struct ib_mr *mr)
{
	return container_of(mr, struct soft_mr, ibmr);
}

/**
 * struct soft_region - a checked range of one device's memory
 * @dev: whose memory
 * @mr: the MR it lies in, or NULL for the local DMA key (DMA addresses)
 * @addr: IOVA inside @mr, or DMA address
 * @len: bytes
 * @cpu: the CPU address of @addr when all @len bytes are contiguous in
 *       process memory (a CPU DMA address, a user MR), else NULL: the
 *       bytes are found page list and IOMMU step by step
 */
struct soft_region {
	struct soft_dev *dev;
	struct soft_mr *mr;
	u64 addr;
	u64 len;
	u8 *cpu;
};

/* ---- soft_opcode.c -------------------------------------------------- */

enum soft_op_class {
	SOFT_OPC_SEND,
	SOFT_OPC_WRITE,
	SOFT_OPC_READ,
	SOFT_OPC_LOCAL,
};

enum soft_op_flags {
	SOFT_OPF_RECV = 1 << 0, /* consumes a receive at the responder */
	SOFT_OPF_IMM = 1 << 1, /* carries immediate data */
	SOFT_OPF_REM_INV = 1 << 2, /* responder invalidates ex's key */
	SOFT_OPF_LOC_INV = 1 << 3, /* requester invalidates after the READ */
	SOFT_OPF_REG = 1 << 4, /* fast registration */
};

/**
 * struct soft_opcode - what a send opcode needs (rxe_opcode.c style)
 * @name: for messages
 * @cls: enum soft_op_class
 * @flags: enum soft_op_flags
 * @rem_access: right the responder's memory must grant
 * @wc_opcode: the send completion's opcode
 * @recv_wc_opcode: the receive completion's opcode (SOFT_OPF_RECV)
 */
struct soft_opcode {
	const char *name;
	enum soft_op_class cls;
	unsigned int flags;
	int rem_access;
	enum ib_wc_opcode wc_opcode;
	enum ib_wc_opcode recv_wc_opcode;
};

/* ---- soft_resp.c (responder) ---------------------------------------- */

/*
 * Everything that can go wrong, each picked once into a completion status
 * by rdmarw__soft_status() (soft_opcode.c).
 */
enum soft_fault {
	SOFT_OK,
	SOFT_F_LOC_PROT, /* bad local key, PD, rights, bounds, IOVA */
	SOFT_F_LOC_LEN, /* receive buffer too small (responder) */
	SOFT_F_LOC_QP_OP, /* REG_MR / LOCAL_INV refused */
	SOFT_F_LOC_ACCESS, /* responder: receive consumed by a bad access */
	SOFT_F_REM_ACCESS, /* bad rkey, PD, rights or bounds at responder */
	SOFT_F_REM_INV_REQ, /* request the responder cannot take */
	SOFT_F_REM_OP, /* responder failed on its own receive */
	SOFT_F_RETRY_EXC, /* nobody answers (no peer, peer not ready) */
	SOFT_F_GENERAL, /* siw: READ_WITH_INV could not invalidate */
	SOFT_F_FLUSH, /* QP in ERR */
	SOFT_F_LOC_RES, /* no memory for the copy (integrity bounce) */
	SOFT_F_NR,
	/* Not a completion: the responder found no receive (RNR); the
	 * requester waits.  It never reaches rdmarw__soft_status(). */
	SOFT_F_RNR = SOFT_F_NR,
	/* Not a completion either: siw's zero-copy model held the WQE
	 * (soft_zcopy.c); it completes as sent. */
	SOFT_F_HELD,
	/* Not a completion: a wire's READ went out and its response comes
	 * later (the ORQ); the WQE completes then, in order (soft_req.c). */
	SOFT_F_LATER,
};

/*
 * soft_hdr.kind: what the packet is, and so who receives it
 * (rdmarw__soft_rcv()).  The requests have the values of their class.
 */
enum soft_pkt_kind {
	SOFT_PKT_SEND = SOFT_OPC_SEND, /* requests: to the responder */
	SOFT_PKT_WRITE = SOFT_OPC_WRITE,
	SOFT_PKT_READ = SOFT_OPC_READ,
	SOFT_PKT_READ_RESP, /* answers: to the completer; READ data */
	SOFT_PKT_NAK, /* refused: @syndrome is the requester's fault */
	SOFT_PKT_RNR, /* no receive posted: the requester waits */
	SOFT_PKT_TERM, /* iWARP TERMINATE: @syndrome as for a NAK */
	SOFT_PKT_RESUME, /* the peer can take what it waited for: run */
	SOFT_PKT_NR,
};

/* What a receive (and so a loopback transmit) returns: 0 or these flags. */
enum soft_rcv_flags {
	/* an answer reached the sender's completer (qp->comp_fault) */
	SOFT_RCV_ANSWERED = 1 << 0,
	/* the receiver finishes the message once the sender has left its
	 * read section: call rdmarw__soft_xmit_end() */
	SOFT_RCV_END = 1 << 1,
	/* the receiver does not answer (not ready): the loopback turns it
	 * into the retry timer's RETRY_EXC */
	SOFT_RCV_DROP = 1 << 2,
	/* a wire transport cannot take the request now (its transmit buffer
	 * is full, an RTR is awaited, a READ's response has not come): the
	 * Send Queue waits at it and the transport runs it again */
	SOFT_RCV_STALL = 1 << 3,
	/* a wire transport sent the READ; its response comes later, and the
	 * requester completes it (and what follows it) then, in order */
	SOFT_RCV_LATER = 1 << 4,
};

/**
 * struct soft_hdr - a packet's header, by value: nothing in it points
 * into the sender's queues or QP (a wire transport sends it as it is)
 * @op: a request's opcode entry (class, flags, rights, WC opcodes); a
 *      wire's receive path decodes it from the opcode on the wire
 * @kind: enum soft_pkt_kind
 * @syndrome: NAK and TERM: the enum soft_fault the requester completes with
 * @solicited: IB_SEND_SOLICITED (the receive completion is solicited)
 * @more: a wire's segment that is not its message's last (TCP: a SEND or
 *        READ response cut into DDP segments; then @va is the segment's
 *        offset in the message and @length its bytes); false on the
 *        loopback, which moves whole messages
 * @src_qpn: the sending QP's number (the receive completion's src_qp)
 * @rkey: WRITE and READ: the responder's key
 * @ex: the immediate data, or SEND_WITH_INV's key to invalidate
 * @seq: the request's sequence number on its Send Queue (PSN, MSN); an
 *       answer carries its request's
 * @va: WRITE and READ: the address under @rkey; SEND and READ_RESP: the
 *      payload's offset in its message (0 but for a wire's later segment)
 * @length: the message's bytes (a READ: the bytes asked for)
 */
struct soft_hdr {
	const struct soft_opcode *op;
	u8 kind;
	u8 syndrome;
	bool solicited;
	bool more;
	u32 src_qpn;
	u32 rkey;
	u32 ex;
	u64 seq;
	u64 va;
	u64 length;
};

/**
 * struct soft_cursor - a packet's payload
 * @rg: loopback: the sender's regions, checked under its read section
 *      (a wire transport reads the payload from its socket instead)
 * @n: regions in @rg
 */
struct soft_cursor {
	const struct soft_region *rg;
	u32 n;
};

/**
 * struct soft_pkt - a packet between the roles (rdmarw__soft_xmit(),
 * rdmarw__soft_rcv()): a header by value and a payload cursor.  It lives
 * on the sender's stack for the time of the transmit.
 * @h: the header
 * @pay: SEND, WRITE, READ_RESP: the payload (@h.length bytes)
 */
struct soft_pkt {
	struct soft_hdr h;
	struct soft_cursor pay;
};

/**
 * struct soft_rx - the responder's message in progress, which it finishes
 * in rdmarw__soft_resp_end() (all zero between messages)
 * @h: the request's header (for the receive's completion)
 * @fault: what the consumed receive completes with
 * @recv_taken: a receive was consumed (qp->resp_wqe)
 * @resp_err: the responder QP moves to ERR
 * @nak: the requester was refused (nothing to invalidate, no bytes counted)
 * @inv_key_set: @inv_key is to be (and then was) invalidated
 * @inv_key: SEND_WITH_INV: the key to invalidate after placement
 */
struct soft_rx {
	struct soft_hdr h;
	enum soft_fault fault;
	bool recv_taken;
	bool resp_err;
	bool nak;
	bool inv_key_set;
	u32 inv_key;
};

/* ---- soft_qp.c ------------------------------------------------------ */

/**
 * struct soft_send_wqe - a posted send work request (snapshot)
 * @h: what a request of it carries on the wire, built at post (the
 *     opcode entry, kind, solicited, source QPN, rkey, immediate data or
 *     key to invalidate, sequence number, remote address, length): the
 *     requester sends a copy of it (struct soft_pkt)
 * @opcode: enum ib_wr_opcode
 * @wr_id: the caller's id (or wr_cqe)
 * @signaled: a success completion is wanted
 * @num_sge: SGEs in @sge
 * @sge: copies of the SGEs (qp->sq_sges)
 * @reg_index: REG_MR: the MR's key index
 * @reg_serial: REG_MR: the MR's serial
 * @reg_key: REG_MR: the key
 * @reg_access: REG_MR: the rights
 * @zcopy: siw's zero-copy model: sent from its sources (soft_zcopy.c)
 * @wait: executed behind (or as) a READ in flight (qp->defer): a READ
 *        that waits for its response
 * @res: executed behind a READ in flight: the fault it completes with
 *
 * @h.ex is also LOCAL_INV's key and READ_WITH_INV's invalidate_rkey.
 */
struct soft_send_wqe {
	struct soft_hdr h;
	int opcode;
	u64 wr_id;
	bool signaled;
	u32 num_sge;
	struct ib_sge *sge;
	u32 reg_index;
	u64 reg_serial;
	u32 reg_key;
	int reg_access;
	bool zcopy;
	bool wait;
	u8 res;
};

/**
 * struct soft_recv_wqe - a posted receive
 * @wr_id: the caller's id
 * @num_sge: SGEs
 * @sge: copies (qp->rq_sges)
 * @length: capacity
 */
struct soft_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge *sge;
	u64 length;
};

/**
 * struct soft_zc_rec - a WQE that completed but has not gone out yet
 * @wqe: a copy (its Send Queue slot is free once its completion is polled);
 *       @wqe.sge points at the record's own SGEs
 * @snap: the payload as it was when the WQE completed (a signalled or short
 *        WQE: siw copies it into the socket); NULL when @wqe.zcopy: the
 *        bytes are read from the sources when it goes out
 */
struct soft_zc_rec {
	struct soft_send_wqe wqe;
	u8 *snap;
};

/**
 * struct soft_zc - siw's zero-copy transmit on one QP (soft_zcopy.c)
 * @rec: @n records, a ring from @first, @count held
 * @sges: @max_sge SGEs per record
 * @n: records (the Send Queue's depth)
 * @max_sge: SGEs per record
 * @first: the oldest record
 * @count: records held
 * @late: zero-copy WQEs whose sources were read after their completion
 */
struct soft_zc {
	struct soft_zc_rec *rec;
	struct ib_sge *sges;
	u32 n;
	u32 max_sge;
	u32 first;
	u32 count;
	u64 late;
};

/**
 * struct soft_qp - a queue pair
 * @ibqp: the core QP (first member)
 * @dev: its device
 * @fabric_entry: soft_fabric.qps
 * @task: the progress thread of its group (soft_dev.task)
 * @task_entry: soft_task.qps, from the QP's first kick (@task_member)
 * @task_member: on soft_task.qps
 * @task_pending: kicked: the Send Queue must run (taken by whoever runs it,
 *                the group's thread or a poller of the send CQ)
 * @refs: kick references (fabric->lock)
 * @dying: being destroyed: no more kicks or scheduling
 * @peer: the connected QP (changed under fabric->lock and this QP's
 *        executor role; read by the executor)
 * @tcp: a TCP device's QP: its connection once attached (soft_tcp.c),
 *       else NULL; set by rdmarw__soft_tcp_attach() before the QP can
 *       send, cleared only by destroy
 * @access_flags: remote operations this QP accepts as responder
 * @sq_lock: Send Queue producers, @exec_busy and @run_req
 * @sq: soft_ring_slots(@sq_size) slots
 * @sq_sges: @sq_max_sge SGEs per slot
 * @sq_size: depth (cap.max_send_wr)
 * @sq_mask: slots - 1
 * @sq_max_sge: cap.max_send_sge
 * @sig_all: IB_SEND_SIGNALED when sq_sig_type is IB_SIGNAL_ALL_WR, else 0
 *	(or-ed into each WR's send_flags)
 * @sq_prod: next sequence number to post
 * @sq_exec: next sequence number to execute (executor only)
 * @sq_done: slots below this sequence number are free (advanced when CQEs
 *           are polled)
 * @exec_busy: a thread holds the executor role (runs the Send Queue, or
 *             keeps it from running while it resets or unlinks the QP)
 * @run_req: more work arrived while the executor role was taken
 * @kick_peer: the peer's Send Queue must run once the executor is done
 * @req_rg: executor scratch: checked local SGEs
 * @comp_rg: completer scratch: a READ's checked sinks (a wire's responses
 *           are placed by its receive thread while the executor runs)
 * @sq_comp: the first WQE executed and not completed, while @defer
 * @defer: WQEs executed and not completed: a wire's READ in flight and
 *         what followed it (executor only; 0 on the loopback)
 * @rq_lock: Receive Queue
 * @rq: soft_ring_slots(@rq_size) slots
 * @rq_sges: @rq_max_sge SGEs per slot
 * @rq_size: depth (cap.max_recv_wr)
 * @rq_mask: slots - 1
 * @rq_max_sge: cap.max_recv_sge
 * @rq_prod: receives posted
 * @rq_cons: receives consumed
 * @rq_waiter: the peer's Send Queue waits for a receive (RNR)
 * @srq_busy: SRQ: the responder holds a receive it took from the SRQ and
 *            has not completed yet (rq_lock)
 * @last_wqe: SRQ: IB_EVENT_QP_LAST_WQE_REACHED was raised since the QP
 *            last entered ERR (rq_lock; cleared by RESET)
 * @link_to: soft_qp_connect(): the QP to link to at RTR (it has the
 *           number the modify names; set only during the connect)
 * @resp_wqe: responder scratch: the receive being filled
 * @resp_sge: responder scratch: its SGEs
 * @resp_rg: responder scratch: its checked SGEs
 * @rx: responder: the message it finishes in rdmarw__soft_resp_end()
 * @comp_fault: completer: the answer to the request in flight (a NAK's or
 *              TERMINATE's syndrome, SOFT_F_RNR, the READ placement's
 *              fault); the requester reads it and sets it back to SOFT_OK
 * @fault: fault injection (soft_fault.c)
 * @mem_rd: its reader indicator of fabric->mem_lock, for the requester
 *          and the completer (own cache line, written only by the thread
 *          holding its executor role)
 * @resp_rd: the responder's reader indicator, for a READ it answers (own
 *           cache line, written only by the thread holding its sender's
 *           executor role)
 * @st_wrs: requester: WRs it executed (its device's wrs_executed)
 * @st_comp_bytes: completer: READ response bytes it placed
 * @st_resp_bytes: responder: SEND and WRITE bytes it placed
 * @zc: iWARP profiles: siw's zero-copy transmit, modelled (soft_zcopy.c);
 *      NULL elsewhere (executor only)
 * @zc_due: @zc holds WQEs that went out but have not reached the peer
 *          (written by the executor, read by pollers)
 *
 * Each role counts in its own counter, bytes in its own device's memory.
 * A counter has one writer (soft_count()): the requester and the
 * completer run in the QP's executor, the responder in its one
 * requester's executor (an RC QP answers one QP, and unlinking it takes
 * that QP's executor role).  soft_device_stats() sums them under
 * fabric->lock; destroy folds them into the device's counters
 * (rdmarw__soft_stats_fold()).
 */
struct soft_qp {
	struct ib_qp ibqp;
	/* read or written by every work request: together, after ibqp */
	struct soft_dev *dev;
	struct soft_qp *peer;
	struct soft_tcp *tcp;
	int access_flags;
	struct soft_spin sq_lock;
	struct soft_send_wqe *sq;
	u32 sq_size;
	u32 sq_mask;
	u32 sq_max_sge;
	u32 sig_all;
	bool exec_busy;
	bool kick_peer;
	bool zc_model; /* unguarded iWARP: siw's zero copy, modelled (@zc) */
	u8 ord; /* READs the requester may have outstanding (soft_qp_ord()) */
	u32 zc_held; /* WQEs @zc holds (executor only) */
	int run_req;
	u64 sq_prod;
	u64 sq_exec;
	u64 sq_done;
	struct soft_region *req_rg;
	struct soft_region *comp_rg;
	u64 sq_comp;
	u32 defer;
	struct soft_br_reader *mem_rd;
	struct soft_br_reader *resp_rd;
	u64 st_wrs;
	u64 st_comp_bytes;
	u64 st_resp_bytes;
	struct soft_fault_state fault;
	struct soft_zc *zc;
	int zc_due;

	struct list_head fabric_entry;
	struct soft_task *task;
	struct list_head task_entry;
	bool task_member;
	int task_pending;
	long refs;
	bool dying;
	struct ib_sge *sq_sges;

	struct soft_spin rq_lock;
	struct soft_recv_wqe *rq;
	struct ib_sge *rq_sges;
	u32 rq_size;
	u32 rq_mask;
	u32 rq_max_sge;
	u64 rq_prod;
	u64 rq_cons;
	bool rq_waiter;
	bool srq_busy;
	bool last_wqe;
	struct soft_qp *link_to;
	struct soft_recv_wqe resp_wqe;
	struct ib_sge *resp_sge;
	struct soft_region *resp_rg;
	struct soft_rx rx;
	enum soft_fault comp_fault;
};
static_assert(offsetof(struct soft_qp, ibqp) == 0, "core struct first");

static inline struct soft_qp *to_sqp(struct ib_qp *qp)
{
	return container_of(qp, struct soft_qp, ibqp);
}

static inline struct soft_cq *soft_send_cq(struct soft_qp *qp)
{
	return to_scq(qp->ibqp.send_cq);
}

static inline struct soft_cq *soft_recv_cq(struct soft_qp *qp)
{
	return to_scq(qp->ibqp.recv_cq);
}

static inline enum ib_qp_state soft_qp_state(struct soft_qp *qp)
{
	return soft_load(&qp->ibqp.state);
}

/* ---- test hooks (soft_device.c) ------------------------------------ */

/*
 * Points where a test may run code, to make a race deterministic or to
 * fail an allocation.  Not an API: the pointer is NULL except in tests,
 * and no work request's fast path reaches a hook.
 */
enum soft_test_point {
	/* rdmarw__soft_qp_to_err(): the Receive Queue is about to be
	 * locked for the flush (returned value ignored) */
	SOFT_TP_TO_ERR,
	/* the integrity copy's bounce buffer: nonzero fails its allocation */
	SOFT_TP_SIG_BOUNCE,
};

#endif /* RDMARW_SOFT_TYPES_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The built-in software RDMA device ("soft" provider).
 *
 * A fabric holds software devices; each device is a host with its own PDs,
 * MRs, keys and QPs.  Two RC QPs on devices of one fabric (or on one device:
 * loopback) are connected with soft_qp_connect() and then move real bytes
 * between the two hosts' memories for SEND (+IMM, +INV), RDMA WRITE (+IMM),
 * RDMA READ (+INV), LOCAL_INV and REG_MR, enforcing keys with their 8-bit
 * variant, MR state, PD, access rights, bounds, SGE limits and queue depths
 * the way rxe and siw do, and reporting errors as completions with the
 * status those devices report (docs/soft-device.md lists every choice).
 *
 * Profiles give realistic attribute sets (mlx5 InfiniBand, rxe RoCE v2, siw
 * iWARP); the caller passes the whole profile, so every attribute can be
 * overridden.  The iWARP protocol selects siw's rules (STag invalidation by
 * index, READ sinks must be remotely writable, one SGE per READ, siw's page
 * list), the others rxe's.
 *
 * Execution: by default a work request executes inside ib_post_send() (and a
 * SEND stalled for want of a receive resumes inside the peer's
 * ib_post_recv()), so single-threaded tests are deterministic.  With
 * profile.threaded each device runs a progress thread that executes posted
 * work asynchronously.
 *
 * Thread safety: ib_post_send(), ib_post_recv(), ib_poll_cq() and
 * ib_req_notify_cq() may be called from several threads at once on the same
 * QP or CQ: the Send Queue, the Receive Queue and each CQ have their own
 * lock, and one QP's Send Queue is executed by one thread at a time.  Lock
 * order inside the device: a QP's executor, then the peer's Receive Queue,
 * then a CQ; memory (MR state) is guarded by one read/write lock per fabric.
 * Creating and destroying fabrics, devices and objects, ib_modify_qp() and
 * soft_qp_connect() must not race with other calls on the same objects.  A
 * CQ's comp_handler is called from the thread that executes the work (the
 * poster's, or the device's progress thread) with no CQ lock held; it must
 * not call verbs on the QPs feeding that CQ.
 */
#ifndef RDMARW_SOFT_H
#define RDMARW_SOFT_H

#include <rdmarw/ib_verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

struct soft_fabric;

/**
 * struct soft_profile - what a software device looks like
 * @name: profile name: "mlx5", "rxe", "siw" (informational once created)
 * @protocol: transport of the device's port; RDMA_PROTOCOL_IWARP selects
 *            siw's rules, the others rxe's
 * @attrs: the device attributes, used as given
 * @iommu: emulated IOMMU: ib_uses_virt_dma() is false and the IOVA calls
 *         (ib_dma_iova_try_alloc() and friends) work
 * @threaded: execute on a progress thread per device instead of inline
 * @tcp: the device's QPs reach their peers over TCP, as iWARP (MPA, DDP and
 *       RDMAP: RFC 5044, 5041, 5040), in this process or another one, or the
 *       kernel's siw; the protocol must be RDMA_PROTOCOL_IWARP. Connections
 *       are made by the rdma_cm (rdma_connect(), rdma_accept()) on the
 *       device's addresses; soft_qp_connect() refuses such a QP (issue 28)
 * @poll_rx: with @tcp and without @threaded, a thread whose ib_poll_cq()
 *           finds a CQ empty receives from the sockets of that CQ's QPs
 *           itself (inline progress); soft_profile_get() sets it; cleared,
 *           the device's thread receives everything
 */
struct soft_profile {
	char name[16];
	enum rdma_protocol protocol;
	struct ib_device_attr attrs;
	bool iommu;
	bool threaded;
	bool tcp;
	bool poll_rx;
};

/**
 * soft_profile_get() - fetch a built-in profile
 * @name: "mlx5", "rxe", "siw", or "siw-tcp" (siw's with @tcp set: its QPs
 *        reach peers in other processes, on other machines or the kernel's
 *        siw over TCP)
 * @out: filled in; change any field before soft_device_create()
 *
 * Return: 0, -EINVAL for a NULL argument, -ENOENT for an unknown name.
 */
int soft_profile_get(const char *name, struct soft_profile *out);

/**
 * soft_fabric_create() - create an empty fabric
 *
 * Return: the fabric, or ERR_PTR(-ENOMEM).
 *
 * Environment: RDMARW_SOFT_MEMBARRIER set (to anything; ignored in a
 * set-user-ID program) when the first fabric is created makes the fabrics'
 * memory-key lock give its readers their barrier with membarrier(2), where
 * the kernel allows it, instead of a fence on each reader
 * (docs/soft-device.md).
 */
struct soft_fabric *soft_fabric_create(void);

/**
 * soft_fabric_destroy() - free a fabric
 * @fabric: the fabric
 *
 * Return: 0, -EINVAL for NULL, -EBUSY while devices exist on it.
 */
int soft_fabric_destroy(struct soft_fabric *fabric);

/**
 * soft_device_create() - create and register a software device
 * @fabric: the fabric the device joins
 * @name: device name; "%d" is replaced by the first free number
 *        ("soft_rxe_%d"); NULL means "soft_<profile name>_%d"
 * @profile: attributes and switches (copied)
 *
 * Return: the device, or ERR_PTR(-EINVAL) for a NULL fabric or profile, a
 * bad name, an unknown protocol or attributes a device cannot work with
 * (zero max_qp_wr, max_send_sge, max_recv_sge, max_sge_rd, max_cqe, max_qp,
 * max_pd or max_mr; MEM_MGT_EXTENSIONS with a zero
 * max_fast_reg_page_list_len; IBK_INTEGRITY_HANDOVER with a zero
 * max_pi_fast_reg_page_list_len); ERR_PTR(-EEXIST) for a taken name;
 * ERR_PTR(-ENOMEM); the error of starting the progress thread; @profile->tcp
 * with a protocol other than iWARP is ERR_PTR(-EINVAL).  A TCP device has a
 * thread of its own for its sockets (docs/soft-device.md, "TCP transport").
 */
struct ib_device *soft_device_create(struct soft_fabric *fabric,
				     const char *name,
				     const struct soft_profile *profile);

/**
 * soft_device_destroy() - unregister and free a software device
 * @dev: a device from soft_device_create()
 *
 * Connection-manager ids bound to the device first get DEVICE_REMOVAL
 * (rdma_cm.h), and the call waits until their handlers have run (unless
 * it is made from a handler).
 *
 * Return: 0, -EINVAL for NULL or a device that is not a software device,
 * -EBUSY while PDs or CQs exist on it or CM ids are bound to it.
 */
int soft_device_destroy(struct ib_device *dev);

/**
 * soft_qp_connect() - connect two RC QPs
 * @a: a QP of a software device, in RESET
 * @b: another QP in RESET, on the same device (loopback) or on another
 *     device of the same fabric
 *
 * Moves both QPs RESET -> INIT -> RTR -> RTS with ib_modify_qp(), granting
 * remote READ and WRITE on both (qp_access_flags).  A QP moved to RESET
 * later is disconnected and may be connected again.
 *
 * Return: 0, -EINVAL for NULL, @a == @b, a QP not on a software device or
 * not in RESET; -EXDEV for QPs on different fabrics; an ib_modify_qp()
 * error (both QPs are then back in RESET).
 */
int soft_qp_connect(struct ib_qp *a, struct ib_qp *b);

/**
 * struct soft_stats - a device's live objects and counters (for tests)
 * @pds: PDs
 * @cqs: CQs
 * @qps: QPs
 * @mrs: MRs (all kinds)
 * @iova_ranges: IOVA ranges of the emulated IOMMU not yet destroyed
 * @wrs_executed: send work requests executed (successfully or not); a WR
 *                is counted when its executor is done with it, which can be
 *                after its completion or the peer's has been polled
 * @bytes_moved: payload bytes placed by SEND, WRITE and READ
 * @rnr_stalls: times a SEND or WRITE_WITH_IMM waited for a receive
 * @cq_overflows: completions lost because a CQ was full
 */
struct soft_stats {
	u32 pds;
	u32 cqs;
	u32 qps;
	u32 mrs;
	u32 iova_ranges;
	u64 wrs_executed;
	u64 bytes_moved;
	u64 rnr_stalls;
	u64 cq_overflows;
};

/**
 * soft_device_stats() - read a software device's counters
 * @dev: the device
 * @out: filled in
 *
 * Return: 0, -EINVAL for NULL or a device that is not a software device.
 */
int soft_device_stats(struct ib_device *dev, struct soft_stats *out);

/**
 * soft_device_profile() - the profile a software device was created with
 * @dev: the device
 * @out: filled in
 *
 * Return: 0, -EINVAL for NULL or a device that is not a software device.
 */
int soft_device_profile(struct ib_device *dev, struct soft_profile *out);

/**
 * soft_device_is_soft() - is @dev a software device
 * @dev: any device, or NULL
 *
 * Return: true for a device made by soft_device_create().
 */
bool soft_device_is_soft(const struct ib_device *dev);

/* ---- fault injection ----------------------------------------------------
 *
 * Rules armed on a QP or on a device make the device misbehave on purpose,
 * deterministically from a seed: a work request completes with a chosen
 * error status, the QP moves to ERR between two work requests of a chain,
 * ib_post_send() fails part-way with *bad_wr, the Send Queue looks full,
 * the Send Queue stalls until released, ib_alloc_mr() fails.  Each rule
 * counts the events it applies to (send WRs posted, send WRs about to
 * execute, MR allocations) and fires at the Nth one, or at each one with a
 * probability drawn from its own seeded generator.  Rules are evaluated in
 * the order they were armed, the QP's before its device's; the first that
 * fires decides and later ones do not see the event.  A WR waiting for a
 * receive or behind a stall is counted once, when it first comes up.
 * With nothing armed the device pays one predictable branch per WR.  Every
 * function here may be called from any thread, also while others post.
 * docs/reliability.md shows how the tests use them.
 */

/**
 * enum soft_fault_type - what a fault-injection rule does when it fires
 * @SOFT_FAULT_WC: (execution) the WR completes with the rule's status
 *                 without executing, even when unsignaled, and the QP moves
 *                 to ERR; the peer is not told
 * @SOFT_FAULT_QP_ERR: (execution) the QP moves to ERR just before the WR
 *                     executes: it and every WR after it complete with
 *                     IB_WC_WR_FLUSH_ERR, its receives are flushed
 * @SOFT_FAULT_POST: (posting) ib_post_send() refuses the WR with the rule's
 *                   errno and sets *bad_wr to it; earlier WRs of the chain
 *                   stay posted
 * @SOFT_FAULT_STALL: (execution) the Send Queue stops before the WR, as if
 *                    the peer did not answer, until soft_fault_resume()
 *                    (or soft_fault_clear_qp()); a move to ERR flushes it
 * @SOFT_FAULT_ALLOC_MR: (device rules only) ib_alloc_mr() and
 *                       ib_alloc_mr_integrity() on the device fail with the
 *                       rule's errno (MR pools set up by ib_create_qp()
 *                       then fail part-way)
 * @SOFT_FAULT_NR: number of types
 */
enum soft_fault_type {
	SOFT_FAULT_WC,
	SOFT_FAULT_QP_ERR,
	SOFT_FAULT_POST,
	SOFT_FAULT_STALL,
	SOFT_FAULT_ALLOC_MR,
	SOFT_FAULT_NR,
};

/* Rules per QP and per device. */
#define SOFT_FAULT_MAX_RULES 8

/* soft_fault_rule.ppm of a rule that fires at every event. */
#define SOFT_FAULT_PPM_ALL 1000000u

/**
 * struct soft_fault_rule - when and how a fault fires
 * @type: enum soft_fault_type
 * @nth: fire at the @nth counted event after arming (1 is the next one);
 *       0 to use @ppm instead
 * @ppm: with @nth 0: probability of firing at each counted event, in parts
 *       per million (1 to %SOFT_FAULT_PPM_ALL)
 * @count: with @ppm: fire at most this many times (0: no limit); an @nth
 *         rule fires once
 * @seed: seed of the rule's own generator (@ppm rules): the same seed and
 *        the same sequence of events give the same faults
 * @opcodes: WR rules: count only WRs whose opcode bit (1ULL << opcode) is
 *           set; 0 counts every WR
 * @status: %SOFT_FAULT_WC: the completion status, one the device reports
 *          itself: IB_WC_LOC_LEN_ERR, LOC_QP_OP_ERR, LOC_PROT_ERR,
 *          WR_FLUSH_ERR, LOC_ACCESS_ERR, REM_INV_REQ_ERR, REM_ACCESS_ERR,
 *          REM_OP_ERR, RETRY_EXC_ERR or GENERAL_ERR
 * @err: %SOFT_FAULT_POST and %SOFT_FAULT_ALLOC_MR: the negative errno to
 *       return (0 means -ENOMEM)
 */
struct soft_fault_rule {
	enum soft_fault_type type;
	u64 nth;
	u32 ppm;
	u32 count;
	u64 seed;
	u64 opcodes;
	enum ib_wc_status status;
	int err;
};

/**
 * struct soft_fault_stats - faults injected
 * @fired: per enum soft_fault_type, times a rule fired
 * @sq_full: posts refused by a Send Queue depth limit (soft_fault_sq_depth())
 * @armed: rules armed now
 * @stalled: (QP) the Send Queue waits for soft_fault_resume()
 *
 * A QP's figures count what hit that QP (its rules and its device's); a
 * device's count what hit the device and every QP on it.
 */
struct soft_fault_stats {
	u64 fired[SOFT_FAULT_NR];
	u64 sq_full;
	u32 armed;
	bool stalled;
};

/**
 * soft_fault_arm_qp() - arm a fault-injection rule on a QP
 * @qp: a QP of a software device
 * @rule: the rule (copied); its event count starts now
 *
 * Return: 0; -EINVAL for NULL, a QP not on a software device, an unknown
 * type, %SOFT_FAULT_ALLOC_MR (a device rule), neither @nth nor a @ppm of
 * 1 to %SOFT_FAULT_PPM_ALL, a %SOFT_FAULT_WC status the device does not
 * report, or an @err that is not a negative errno; -ENOSPC when
 * %SOFT_FAULT_MAX_RULES rules are armed on @qp.
 */
int soft_fault_arm_qp(struct ib_qp *qp, const struct soft_fault_rule *rule);

/**
 * soft_fault_arm_device() - arm a fault-injection rule on a whole device
 * @dev: a software device
 * @rule: the rule (copied); it counts the events of every QP of @dev (and,
 *        for %SOFT_FAULT_ALLOC_MR, the device's MR allocations)
 *
 * Return: 0; -EINVAL for NULL, a device that is not a software device, or
 * a bad rule (as soft_fault_arm_qp(), %SOFT_FAULT_ALLOC_MR allowed);
 * -ENOSPC when %SOFT_FAULT_MAX_RULES rules are armed on @dev.
 */
int soft_fault_arm_device(struct ib_device *dev,
			  const struct soft_fault_rule *rule);

/**
 * soft_fault_clear_qp() - disarm everything on a QP
 * @qp: a QP of a software device
 *
 * Removes the QP's rules and its Send Queue depth limit, and releases a
 * stalled Send Queue (as soft_fault_resume()).  The statistics stay.
 *
 * Return: 0, -EINVAL for NULL or a QP not on a software device.
 */
int soft_fault_clear_qp(struct ib_qp *qp);

/**
 * soft_fault_clear_device() - disarm a device's rules
 * @dev: a software device
 *
 * Removes the rules armed with soft_fault_arm_device().  Rules armed on
 * its QPs, and Send Queues a device rule stalled, are left alone.
 *
 * Return: 0, -EINVAL for NULL or a device that is not a software device.
 */
int soft_fault_clear_device(struct ib_device *dev);

/**
 * soft_fault_resume() - release a Send Queue stalled by %SOFT_FAULT_STALL
 * @qp: a QP of a software device
 *
 * The WR the queue stopped at executes next (it is not counted again).
 * Nothing happens when the queue is not stalled.
 *
 * Return: 0, -EINVAL for NULL or a QP not on a software device.
 */
int soft_fault_resume(struct ib_qp *qp);

/**
 * soft_fault_sq_depth() - make a QP's Send Queue fill up early
 * @qp: a QP of a software device
 * @depth: WRs the Send Queue holds from now on (outstanding as counted by
 *         the device: until their completion, or a later signaled one, is
 *         polled); 0 removes the limit
 *
 * ib_post_send() refuses a WR with -ENOMEM and *bad_wr, as for a full
 * queue, once @depth WRs are outstanding.  A test that sets @depth to the
 * credits it hands out proves its accounting: any -ENOMEM is a leak.
 *
 * Return: 0, -EINVAL for NULL, a QP not on a software device, or a @depth
 * above the QP's cap.max_send_wr.
 */
int soft_fault_sq_depth(struct ib_qp *qp, u32 depth);

/**
 * soft_fault_qp_stats() - faults injected on a QP
 * @qp: a QP of a software device
 * @out: filled in
 *
 * Return: 0, -EINVAL for NULL or a QP not on a software device.
 */
int soft_fault_qp_stats(struct ib_qp *qp, struct soft_fault_stats *out);

/**
 * soft_fault_device_stats() - faults injected on a device and its QPs
 * @dev: a software device
 * @out: filled in (@out->stalled is false)
 *
 * Return: 0, -EINVAL for NULL or a device that is not a software device.
 */
int soft_fault_device_stats(struct ib_device *dev,
			    struct soft_fault_stats *out);

/* ---- the connection manager on software devices (rdma_cm.h) -------------
 *
 * Each fabric is an address space: a device answers to the IPv4 and IPv6
 * addresses given to it, rdma_bind_addr() finds the device of a local
 * address and rdma_resolve_addr() the device of a remote one among the
 * devices of the source's fabric.  Connections between devices of one
 * fabric follow each profile's transport: IB CM rules (private-data sizes,
 * reject reasons, TIMEWAIT_EXIT) on InfiniBand and RoCE, MPA rules on
 * iWARP.  The calls below may be made from any thread, and from a CM
 * event handler.
 */

struct sockaddr;

/**
 * soft_device_add_addr() - make a software device answer to an address
 * @dev: a software device
 * @addr: an AF_INET or AF_INET6 address (the port is ignored)
 *
 * Return: 0; -EINVAL for NULL, a device that is not a software device, a
 * wildcard address; -EAFNOSUPPORT for another family; -EADDRINUSE when a
 * device of the same fabric answers to it already; -ENOMEM.
 */
int soft_device_add_addr(struct ib_device *dev, const struct sockaddr *addr);

/**
 * soft_device_del_addr() - stop answering to an address
 * @dev: a software device
 * @addr: an address given with soft_device_add_addr()
 *
 * Ids bound to the address stay bound; new binds and resolutions fail.
 *
 * Return: 0; -EINVAL for NULL or a device that is not a software device;
 * -EADDRNOTAVAIL when @dev does not answer to @addr.
 */
int soft_device_del_addr(struct ib_device *dev, const struct sockaddr *addr);

/**
 * enum soft_cm_fault_type - what a CM fault rule does
 * @SOFT_CM_FAULT_REJECT: a connection request sent from the device is
 *                        rejected by the peer's CM before any listener
 *                        sees it: REJECTED with the rule's reason (IB,
 *                        RoCE) or -ECONNREFUSED (iWARP)
 * @SOFT_CM_FAULT_UNREACHABLE: a connection request sent from the device is
 *                             lost: UNREACHABLE with -ETIMEDOUT
 * @SOFT_CM_FAULT_ADDR_ERROR: an address resolution from the device fails:
 *                            ADDR_ERROR with the rule's reason as status
 *                            (-EHOSTUNREACH when 0)
 * @SOFT_CM_FAULT_NR: number of types
 */
enum soft_cm_fault_type {
	SOFT_CM_FAULT_REJECT,
	SOFT_CM_FAULT_UNREACHABLE,
	SOFT_CM_FAULT_ADDR_ERROR,
	SOFT_CM_FAULT_NR,
};

/**
 * struct soft_cm_fault - a CM fault rule
 * @type: enum soft_cm_fault_type
 * @nth: fire at the @nth request (or resolution) after arming, once; 0
 *       fires at every one until soft_cm_fault_clear()
 * @reason: %SOFT_CM_FAULT_REJECT: the IB CM reject reason (0 means
 *          IB_CM_REJ_CONSUMER_DEFINED); %SOFT_CM_FAULT_ADDR_ERROR: the
 *          negative errno
 */
struct soft_cm_fault {
	enum soft_cm_fault_type type;
	u32 nth;
	int reason;
};

/**
 * soft_cm_fault_arm() - arm a CM fault rule on a software device
 * @dev: a software device (the active side's)
 * @fault: the rule (copied); rules are evaluated in arming order, each
 *         counting the events of its type
 *
 * Return: 0; -EINVAL for NULL, a device that is not a software device, an
 * unknown type; -ENOSPC when %SOFT_FAULT_MAX_RULES rules are armed on @dev.
 */
int soft_cm_fault_arm(struct ib_device *dev, const struct soft_cm_fault *fault);

/**
 * soft_cm_fault_clear() - disarm a device's CM fault rules
 * @dev: a software device
 *
 * Return: 0, -EINVAL for NULL or a device that is not a software device.
 */
int soft_cm_fault_clear(struct ib_device *dev);

/**
 * soft_cm_link_down() - cut every connection of a device now
 * @dev: a software device
 *
 * As a cable pulled: both ends of each established connection of @dev
 * have their QPs moved to ERR and get DISCONNECTED (then TIMEWAIT_EXIT on
 * IB and RoCE); a connection being set up fails with UNREACHABLE
 * (-ETIMEDOUT) on the active side and CONNECT_ERROR (-ETIMEDOUT) on the
 * passive one.  Addresses stay; new connections may be made.
 *
 * Return: the number of ids of @dev that were told, -EINVAL for NULL or a
 * device that is not a software device.
 */
int soft_cm_link_down(struct ib_device *dev);
#ifdef __cplusplus
}
#endif

#endif /* RDMARW_SOFT_H */

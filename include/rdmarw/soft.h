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
 */
struct soft_profile {
	char name[16];
	enum rdma_protocol protocol;
	struct ib_device_attr attrs;
	bool iommu;
	bool threaded;
};

/**
 * soft_profile_get() - fetch a built-in profile
 * @name: "mlx5", "rxe" or "siw"
 * @out: filled in; change any field before soft_device_create()
 *
 * Return: 0, -EINVAL for a NULL argument, -ENOENT for an unknown name.
 */
int soft_profile_get(const char *name, struct soft_profile *out);

/**
 * soft_fabric_create() - create an empty fabric
 *
 * Return: the fabric, or ERR_PTR(-ENOMEM).
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
 * ERR_PTR(-ENOMEM); the error of starting the progress thread.
 */
struct ib_device *soft_device_create(struct soft_fabric *fabric,
				     const char *name,
				     const struct soft_profile *profile);

/**
 * soft_device_destroy() - unregister and free a software device
 * @dev: a device from soft_device_create()
 *
 * Return: 0, -EINVAL for NULL or a device that is not a software device,
 * -EBUSY while PDs or CQs exist on it.
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
 * @wrs_executed: send work requests executed (successfully or not)
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

#endif /* RDMARW_SOFT_H */

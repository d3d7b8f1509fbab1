/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The interface between the verbs core and a provider (the software device,
 * libibverbs).  The core allocates every object with the provider's size,
 * fills the core part (the first member) and then calls the provider's
 * operation to initialise the rest; on destroy the provider releases its part
 * and the core frees the memory.  Missing optional operations answer
 * -EOPNOTSUPP.  Nothing here is public.
 */
#ifndef RDMARW_PROVIDER_H
#define RDMARW_PROVIDER_H

#include <rdmarw/log.h>
#include <rdmarw/ib_verbs.h>

#include <pthread.h>
#include <sys/socket.h>

/**
 * struct ib_device_ops - one static const table per provider
 *
 * Sizes: bytes to allocate for each object; the core struct must be the
 * provider struct's first member (checked with static_assert by providers).
 * Every create op receives a zeroed object with the core fields set.
 */
struct ib_device_ops {
	const char *driver_name;
	size_t size_ib_pd;
	size_t size_ib_cq;
	size_t size_ib_qp;
	size_t size_ib_mr;

	void (*dealloc_driver)(struct ib_device *dev);

	int (*alloc_pd)(struct ib_pd *pd);
	void (*dealloc_pd)(struct ib_pd *pd);

	int (*create_cq)(struct ib_cq *cq, const struct ib_cq_init_attr *attr);
	void (*destroy_cq)(struct ib_cq *cq);
	int (*poll_cq)(struct ib_cq *cq, int num_entries, struct ib_wc *wc);
	int (*req_notify_cq)(struct ib_cq *cq, enum ib_cq_notify_flags flags);
	/*
	 * The provider calls a CQ's comp_handler only from a thread of that
	 * CQ's own, one call at a time, never from inside a post or a poll,
	 * and once more when destroy_cq stops that thread (before the device's
	 * CQ goes).  Then a CQ with a polling context runs its poll work on
	 * that thread and the core starts none: one wake-up per batch of
	 * completions instead of two (the libibverbs backend's event thread).
	 */
	bool cq_handler_thread;

	/*
	 * Optional (rdmarw_cq_events_take(), missing: -EOPNOTSUPP): an
	 * IB_POLL_DIRECT CQ's events go to the caller's poll() instead of
	 * its comp_handler.  The core checked @cq (not NULL, direct); the
	 * provider answers -EBUSY (taken twice) and -EINVAL (consume or give
	 * without a take) and destroy_cq frees a CQ whose events are taken.
	 */
	int (*cq_events_take)(struct ib_cq *cq, struct rdmarw_cq_events *ev);
	int (*cq_events_consume)(struct ib_cq *cq);
	int (*cq_events_give)(struct ib_cq *cq);

	int (*create_qp)(struct ib_qp *qp, struct ib_qp_init_attr *init_attr);
	/* Called after the core checked the transition; qp->state is the old
	 * state.  The core commits the new state when the op returns 0; an op
	 * that needs the new state visible earlier (to restart its Send
	 * Queue, or to flush under its own lock) commits it itself with
	 * rdmarw__qp_move().  See ib_modify_qp() in src/core/qp.c. */
	int (*modify_qp)(struct ib_qp *qp, struct ib_qp_attr *attr,
			 int attr_mask);
	void (*destroy_qp)(struct ib_qp *qp);
	int (*post_send)(struct ib_qp *qp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr);
	int (*post_recv)(struct ib_qp *qp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);

	int (*alloc_mr)(struct ib_mr *mr, u32 max_num_sg);
	int (*alloc_mr_integrity)(struct ib_mr *mr, u32 max_num_data_sg,
				  u32 max_num_meta_sg);
	int (*reg_user_mr)(struct ib_mr *mr, u64 start, u64 length,
			   u64 virt_addr, int access);
	/* Return -EBUSY to refuse (e.g. an MR still in use by the device). */
	int (*dereg_mr)(struct ib_mr *mr);
	int (*map_mr_sg)(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
			 unsigned int *sg_offset);
	/* Integrity MRs (signature.h): the core checked the arguments. */
	int (*map_mr_sg_pi)(struct ib_mr *mr, struct scatterlist *data_sg,
			    int data_sg_nents, unsigned int *data_sg_offset,
			    struct scatterlist *meta_sg, int meta_sg_nents,
			    unsigned int *meta_sg_offset);
	int (*check_mr_status)(struct ib_mr *mr, u32 check_mask,
			       struct ib_mr_status *mr_status);
	/*
	 * Optional, for devices with fast-registration MRs: when it returns,
	 * no key of @mr grants any access (local or remote), no access through
	 * it is still in progress, and a REG_MR of it that is still queued will
	 * fail instead of registering.  The MR keeps its key and page list; a
	 * LOCAL_INV of it stays valid.  Called by ib_mr_pool_put().
	 */
	void (*retire_mr)(struct ib_mr *mr);

	/* Emulated IOMMU: only devices with dev->iommu set. */
	int (*iova_alloc)(struct ib_device *dev, struct dma_iova_state *state,
			  phys_addr_t phys, size_t size);
	int (*iova_link)(struct ib_device *dev, struct dma_iova_state *state,
			 phys_addr_t phys, size_t offset, size_t size);
	void (*iova_destroy)(struct ib_device *dev,
			     struct dma_iova_state *state, size_t mapped_len);

	/*
	 * Shared receive queues (optional: ib_create_srq() answers
	 * -EOPNOTSUPP without create_srq).  The core checked the sizes and
	 * holds the PD; QPs attached to an SRQ are on its qp_list.
	 */
	size_t size_ib_srq;
	int (*create_srq)(struct ib_srq *srq,
			  struct ib_srq_init_attr *init_attr);
	void (*destroy_srq)(struct ib_srq *srq);
	/* Only IB_SRQ_LIMIT reaches the provider; the limit is checked. */
	int (*modify_srq)(struct ib_srq *srq, struct ib_srq_attr *attr,
			  enum ib_srq_attr_mask mask);
	int (*query_srq)(struct ib_srq *srq, struct ib_srq_attr *attr);
	int (*post_srq_recv)(struct ib_srq *srq, const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad_wr);
};

/**
 * rdmarw__alloc_device() - allocate a zeroed device of @size bytes
 * @size: the provider's device struct, whose first member is struct ib_device
 * @ops: the provider's table
 *
 * Return: the device, or NULL on allocation failure.
 */
struct ib_device *rdmarw__alloc_device(size_t size,
				       const struct ib_device_ops *ops);

/**
 * rdmarw__free_device() - free a device that is not registered
 * @dev: the device
 */
void rdmarw__free_device(struct ib_device *dev);

/**
 * rdmarw__register_device() - make a device visible by name
 * @dev: attributes, ports and protocol filled in
 * @name: unique name; "%d" is replaced by the first free number
 *
 * Return: 0, -EEXIST for a taken name, -EINVAL for a bad name.
 */
int rdmarw__register_device(struct ib_device *dev, const char *name);

/**
 * rdmarw__unregister_device() - remove a device from the registry
 * @dev: the device
 *
 * As the kernel's disable_device(): the device leaves the lookups, every
 * client the device was added to gets its remove, in the reverse order of
 * the clients' registration (a client destroys its objects on the device
 * there), then the device's CQ pools are freed (ib_cq_pool_get()).  If the
 * device is still in use after that, it is registered again, as it was,
 * and the clients get their add again (the kernel cannot fail here).
 *
 * Return: 0 (also for a device that is not registered), -EBUSY while PDs,
 * CQs or connection manager ids are on it once the clients were told,
 * while entries of a pool CQ are reserved or a QP uses one, or while
 * another unregistration of @dev runs (a client's remove unregistering the
 * device it is told of); -EINVAL for NULL.
 */
int rdmarw__unregister_device(struct ib_device *dev);

/*
 * A reference that makes rdmarw__unregister_device() refuse (-EBUSY): PDs,
 * CQs and the connection manager's ids on the device hold one.
 */
void rdmarw__device_get(struct ib_device *dev);
void rdmarw__device_put(struct ib_device *dev);

/* ---- a device's addresses (the kernel: its net devices' IP addresses) -- */

/**
 * rdmarw__addr_key() - an address as the device tables keep it
 * @addr: an AF_INET or AF_INET6 address
 * @ss: set to it with port 0 (and, for IPv6, no flow label or scope)
 *
 * Return: 0, -EINVAL for the wildcard address, -EAFNOSUPPORT for another
 * family.
 */
int rdmarw__addr_key(const struct sockaddr *addr, struct sockaddr_storage *ss);

/* Whether two addresses of one family are the same host address (the port
 * is not compared).  The one comparison of the devices and the CM. */
bool rdmarw__same_addr(const struct sockaddr_storage *a,
		       const struct sockaddr_storage *b);

/**
 * rdmarw__device_add_addr() - give a device an address
 * @dev: a registered device
 * @space: the address space (the software device's fabric), compared by
 *         pointer: the same address may exist in two spaces
 * @addr: the address
 *
 * Return: 0, -EINVAL/-EAFNOSUPPORT for a bad address (rdmarw__addr_key()),
 * -EADDRINUSE when a device has it in @space already, -ENOMEM.
 */
int rdmarw__device_add_addr(struct ib_device *dev, const void *space,
			    const struct sockaddr *addr);

/**
 * rdmarw__device_del_addr() - take an address from a device
 * @dev: the device
 * @space: as given to rdmarw__device_add_addr()
 * @addr: the address
 *
 * Return: 0, or -EADDRNOTAVAIL when @dev does not have it.
 */
int rdmarw__device_del_addr(struct ib_device *dev, const void *space,
			    const struct sockaddr *addr);

/**
 * rdmarw__device_addr_walk() - visit the addresses of the registered devices
 * @fn: called per address, devices in registration order, each device's
 *      addresses in the order given; a non-zero return stops the walk
 * @arg: passed to @fn
 *
 * The one way to read the address tables.  Devices being unregistered are
 * skipped.  @fn runs under the registry's lock: it must not look up,
 * register or unregister devices, nor change addresses.
 *
 * Return: the value that stopped the walk, or 0.
 */
int rdmarw__device_addr_walk(int (*fn)(struct ib_device *dev, const void *space,
				       const struct sockaddr_storage *ss,
				       void *arg),
			     void *arg);

/* struct ib_qp's mr_lock is opaque storage for a pthread_spinlock_t. */
_Static_assert(sizeof(struct rdmarw_spinlock) == sizeof(pthread_spinlock_t) &&
		       _Alignof(struct rdmarw_spinlock) >=
			       _Alignof(pthread_spinlock_t),
	       "struct rdmarw_spinlock does not hold a pthread_spinlock_t");
#define rdmarw__qp_mr_lock(qp) ((pthread_spinlock_t *)&(qp)->mr_lock.opaque)

/* Shared helpers (src/core).  Messages go through rdmarw__log() (log.h). */
void rdmarw__log(enum rdmarw_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rdmarw__warn_once(bool *warned, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/**
 * rdmarw__qp_move_ok() - check a state move against the IBA table for RC
 * @cur: the state the QP is in
 * @next: the state asked for (@cur when @attr_mask has no IB_QP_STATE)
 * @attr_mask: enum ib_qp_attr_mask of the move
 *
 * The kernel's ib_modify_qp_is_ok() for IB_QPT_RC: the pair must exist in
 * the table (any state may go to RESET, any but RESET to ERR), @attr_mask
 * must hold the bits the pair requires and no bit it does not accept, and
 * IB_QP_CUR_STATE is accepted only from RTR, RTS, SQD and SQE.
 *
 * Return: 0, or -EINVAL (the kernel drivers' answer to a refused move).
 */
int rdmarw__qp_move_ok(enum ib_qp_state cur, enum ib_qp_state next,
		       int attr_mask);

/**
 * rdmarw__qp_move() - change @qp's state: the only writer of qp->state
 * @qp: the QP
 * @next: the new state
 * @attr_mask: the mask the move is checked with (a device's own move to ERR
 *             or RESET passes IB_QP_STATE)
 * @old: set to the state replaced, or on failure to the state found; may
 *       be NULL
 *
 * Checks the move from the state the QP is in with rdmarw__qp_move_ok()
 * and commits it with a compare-and-swap against that state; if another
 * thread changed the state in between (a device moving the QP to ERR), the
 * move is checked again from the new state, so that it fails rather than
 * overwrite an ERR it may not leave.
 *
 * Return: 0, or -EINVAL when the table refuses the move from the state
 * found.
 */
int rdmarw__qp_move(struct ib_qp *qp, enum ib_qp_state next, int attr_mask,
		    enum ib_qp_state *old);
/*
 * Tests only (NULL otherwise, not an API): called by rdmarw__qp_move()
 * between its check and its compare-and-swap, to make a race with the
 * commit deterministic.
 */
extern void (*rdmarw__qp_move_test_hook)(struct ib_qp *qp,
					 enum ib_qp_state next);
/* Whether @qp has an MR pool for R/W registrations (taken or free MRs). */
bool rdmarw__qp_has_mr_pool(struct ib_qp *qp);

/*
 * The one rule of zero-copy transmit, as siw_qp_prepare_tx() decides it:
 * on a device with rdmarw_tx_zcopy_min, an unsignalled, non-inline SEND or
 * WRITE of at least that many bytes goes out from its own pages, and its
 * completion -- or a later WQE's -- means TCP took the pages, not that it
 * has read them.  A signalled one is copied into the socket first.
 * @send_flags: the WR's, with IB_SEND_SIGNALED or-ed in on a QP that
 * signals every WR; @len: its payload bytes.  Providers ask this (with
 * rdmarw_tx_guard: signal it to the device and keep its completion from
 * the caller; the software device: model the late read when unguarded).
 */
static inline bool rdmarw__tx_zcopy(const struct ib_device *dev,
				    enum ib_wr_opcode opcode, int send_flags,
				    u64 len)
{
	u32 min = dev->rdmarw_tx_zcopy_min;

	if (__builtin_expect(!min, 1) || len < min ||
	    (send_flags & (IB_SEND_SIGNALED | IB_SEND_INLINE)))
		return false;
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		return true;
	default:
		return false;
	}
}

/**
 * struct rdmarw_qp_owner - who holds a QP besides its creator's caller
 * @release: told by ib_destroy_qp(), before the QP goes, to let go of @qp
 *	     (it must not call ib_destroy_qp())
 *
 * The CM sets &ib_qp.rdmarw_owner for the QP an id made with
 * rdma_create_qp() and clears it when the id lets go of it (rdma_destroy_qp(),
 * rdma_destroy_id()).  A ULP that destroys such a QP with ib_destroy_qp()
 * (the kernel leaves the id pointing at freed memory) then leaves an id
 * without a QP, as after rdma_destroy_qp().
 */
struct rdmarw_qp_owner {
	void (*release)(struct rdmarw_qp_owner *owner, struct ib_qp *qp);
};

#endif /* RDMARW_PROVIDER_H */

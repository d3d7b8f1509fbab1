/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The slice of the kernel's verbs API (include/rdma/ib_verbs.h) that the R/W
 * context API needs: devices, PDs, CQs with ib_cqe dispatch, RC QPs, MRs,
 * MR pools and DMA mapping.  Names, fields and semantics follow the kernel;
 * docs/deviations.md lists where user space differs.
 *
 * Errors: int functions return 0 or a negative errno; constructors return an
 * object or ERR_PTR(-errno), never NULL.
 *
 * Thread safety: ib_post_send(), ib_post_recv(), ib_poll_cq(),
 * ib_req_notify_cq() and ib_process_cq_direct() may be called from several
 * threads at once on the same QP or CQ (each object serialises itself).
 * ib_modify_qp() to IB_QPS_ERR may run beside all of them and beside one
 * other ib_modify_qp() of the QP, as the kernel's ULPs do (a CM handler's
 * disconnect, a failed post's error path); the rule for the other moves
 * and what a racing post sees are under ib_modify_qp().  Creating and
 * destroying an object must not race with other calls on it.
 * ib_mr_pool_get()/ib_mr_pool_put() are serialised by the QP's mr_lock.
 * An MR's state (register/invalidate) is changed by work requests, never
 * concurrently with ib_map_mr_sg() on the same MR.
 */
#ifndef RDMARW_IB_VERBS_H
#define RDMARW_IB_VERBS_H

#include <pthread.h>
#include <rdmarw/bvec.h>
#include <rdmarw/compat.h>
#include <rdmarw/scatterlist.h>
#include <rdmarw/signature.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ib_device;
struct ib_pd;
struct ib_cq;
struct ib_qp;
struct ib_mr;
struct ib_wc;
struct ib_sig_attrs;
struct ib_device_ops;
struct rdmarw_rw_cache;
struct rdmarw_cq_pools;
struct rdmarw_dev_core;
struct ib_srq;

/**
 * struct rdmarw_spinlock - storage of a lock the library uses inside
 * @opaque: a pthread_spinlock_t to the library; do not touch
 *
 * Opaque so that the header needs no POSIX feature macro (an ISO C program
 * does not see pthread_spinlock_t).  The library checks at build time that
 * the size and alignment match.
 */
struct rdmarw_spinlock {
	int opaque;
};

/* ---- device ---------------------------------------------------------- */

/* Capability flags (ib_device_attr.device_cap_flags), kernel values. */
enum ib_device_cap_flags {
	IB_DEVICE_RESIZE_MAX_WR = 1 << 0,
	IB_DEVICE_BAD_PKEY_CNTR = 1 << 1,
	IB_DEVICE_BAD_QKEY_CNTR = 1 << 2,
	IB_DEVICE_RAW_MULTI = 1 << 3,
	IB_DEVICE_AUTO_PATH_MIG = 1 << 4,
	IB_DEVICE_CHANGE_PHY_PORT = 1 << 5,
	IB_DEVICE_UD_AV_PORT_ENFORCE = 1 << 6,
	IB_DEVICE_CURR_QP_STATE_MOD = 1 << 7,
	IB_DEVICE_SHUTDOWN_PORT = 1 << 8,
	IB_DEVICE_PORT_ACTIVE_EVENT = 1 << 10,
	IB_DEVICE_SYS_IMAGE_GUID = 1 << 11,
	IB_DEVICE_RC_RNR_NAK_GEN = 1 << 12,
	IB_DEVICE_SRQ_RESIZE = 1 << 13,
	IB_DEVICE_N_NOTIFY_CQ = 1 << 14,
	IB_DEVICE_LOCAL_DMA_LKEY = 1 << 15,
	IB_DEVICE_MEM_WINDOW = 1 << 17,
	IB_DEVICE_UD_IP_CSUM = 1 << 18,
	IB_DEVICE_XRC = 1 << 20,
	IB_DEVICE_MEM_MGT_EXTENSIONS = 1 << 21,
	IB_DEVICE_MEM_WINDOW_TYPE_2A = 1 << 23,
	IB_DEVICE_MEM_WINDOW_TYPE_2B = 1 << 24,
	IB_DEVICE_RC_IP_CSUM = 1 << 25,
	IB_DEVICE_RAW_IP_CSUM = 1 << 26,
	IB_DEVICE_MANAGED_FLOW_STEERING = 1 << 29,
};

/*
 * The kernel's two flags above bit 31 are enumerators there; ISO C allows
 * only int values in an enum, so they are macros here (same values).
 */
#define IB_DEVICE_RAW_SCATTER_FCS (1ULL << 34)
#define IB_DEVICE_PCI_WRITE_END_PADDING (1ULL << 36)

/* Kernel-only capability flags (ib_device_attr.kernel_cap_flags). */
enum ib_kernel_cap_flags {
	IBK_LOCAL_DMA_LKEY = 1 << 0,
	IBK_INTEGRITY_HANDOVER = 1 << 1,
	IBK_ON_DEMAND_PAGING = 1 << 2,
	IBK_SG_GAPS_REG = 1 << 3,
	IBK_BLOCK_MULTICAST_LOOPBACK = 1 << 4,
};

/**
 * struct ib_device_attr - what a device can do (the fields rdmarw uses)
 * @fw_ver: firmware version
 * @max_mr_size: largest MR in bytes
 * @page_size_cap: supported MR page sizes (bit per size)
 * @vendor_id: vendor
 * @vendor_part_id: part
 * @max_qp: QPs
 * @max_qp_wr: work requests per queue
 * @device_cap_flags: enum ib_device_cap_flags
 * @kernel_cap_flags: enum ib_kernel_cap_flags
 * @max_send_sge: SGEs per send work request
 * @max_recv_sge: SGEs per receive work request
 * @max_sge_rd: SGEs per RDMA READ
 * @max_cq: CQs
 * @max_cqe: entries per CQ
 * @max_mr: MRs
 * @max_pd: PDs
 * @max_qp_rd_atom: outstanding RDMA READs as responder
 * @max_qp_init_rd_atom: outstanding RDMA READs as requester
 * @max_fast_reg_page_list_len: pages per fast-registration MR
 * @max_pi_fast_reg_page_list_len: pages per integrity MR
 * @max_sgl_rd: entries above which an RDMA READ is better done through an
 *              MR (0: never)
 * @sig_prot_cap: enum ib_signature_prot_cap: T10-DIF types offloaded
 * @sig_guard_cap: enum ib_signature_guard_cap: guards computed
 */
struct ib_device_attr {
	u64 fw_ver;
	u64 max_mr_size;
	u64 page_size_cap;
	u32 vendor_id;
	u32 vendor_part_id;
	int max_qp;
	int max_qp_wr;
	u64 device_cap_flags;
	u64 kernel_cap_flags;
	int max_send_sge;
	int max_recv_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_qp_init_rd_atom;
	u32 max_fast_reg_page_list_len;
	u32 max_pi_fast_reg_page_list_len;
	u32 max_sgl_rd;
	int sig_prot_cap;
	int sig_guard_cap;
};

/**
 * enum rdma_protocol - the transport a port speaks
 * @RDMA_PROTOCOL_IB: InfiniBand
 * @RDMA_PROTOCOL_ROCE: RoCE (v1 or v2)
 * @RDMA_PROTOCOL_IWARP: iWARP
 */
enum rdma_protocol {
	RDMA_PROTOCOL_IB = 0,
	RDMA_PROTOCOL_ROCE = 1,
	RDMA_PROTOCOL_IWARP = 2,
};

#define RDMARW_MAX_PORTS 2
#define IB_DEVICE_NAME_MAX 64

/*
 * One stripe of a device's DMA-mapped count: 128 bytes, so that two
 * stripes' counters never share a 64-byte cache line whatever the
 * device's own alignment.  A thread adds to its own stripe (src/core).
 */
#define RDMARW_DMA_STRIPES 16
struct rdmarw_dma_stripe {
	long n;
	long pad[15];
};

/**
 * struct ib_device - an RDMA device
 * @name: unique name ("soft0", "rxe0", ...)
 * @ops: the provider's operations (one table per provider)
 * @attrs: attributes, fixed at registration
 * @phys_port_cnt: ports, numbered from 1
 * @port_protocol: transport per port, index port_num - 1
 * @local_dma_lkey: key for local access to all memory (software device)
 * @virt_dma: DMA addresses are CPU virtual addresses (ib_uses_virt_dma())
 * @iommu: the device offers the emulated IOMMU's IOVA API
 * @dma_mapped: entries currently DMA-mapped, counted by stripes so that
 *              threads mapping on one device share no cache line; read
 *              the sum with rdmarw_dma_mapped() (leak checks in tests)
 * @refcount: objects that hold the device (PDs, CQs), plus the registry's
 * @lock: serialises object creation counts
 * @list: registry link
 * @provider_data: the provider's private pointer
 * @num_comp_vectors: completion vectors (0 counts as 1); CQ pools keep CQs
 *                    per vector
 * @cq_pools: the shared CQs of ib_cq_pool_get(), per poll context; created
 *            on first use, freed at device removal (under @lock)
 * @rdmarw_tx_zcopy_min: set by the provider: the device transmits an
 *            unsignalled SEND or WRITE of at least this many bytes from
 *            its pages after completing it (the kernel's siw and the
 *            software device's iWARP profiles: 4096); 0: never
 * @rdmarw_tx_guard: set at registration: rdmarw asks the device to copy
 *            such work requests before they complete (they are signalled
 *            to the device, their completions kept from the caller), so a
 *            completion frees the buffers as verbs promise; off only with
 *            RDMARW_TX_ZCOPY=allow (docs/deviations.md).  Each QP follows
 *            the value it saw when it was created
 * @core: the core's private part (clients, addresses); do not touch
 */
struct ib_device {
	char name[IB_DEVICE_NAME_MAX];
	const struct ib_device_ops *ops;
	struct ib_device_attr attrs;
	u32 phys_port_cnt;
	enum rdma_protocol port_protocol[RDMARW_MAX_PORTS];
	u32 local_dma_lkey;
	bool virt_dma;
	bool iommu;
	struct rdmarw_dma_stripe dma_mapped[RDMARW_DMA_STRIPES];
	long refcount;
	pthread_mutex_t lock;
	struct list_head list;
	void *provider_data;
	int num_comp_vectors;
	struct rdmarw_cq_pools *cq_pools;
	u32 rdmarw_tx_zcopy_min;
	bool rdmarw_tx_guard;
	struct rdmarw_dev_core *core;
};

/**
 * rdmarw_dma_mapped() - how many entries of a device are DMA-mapped
 * @dev: the device
 *
 * The sum of the device's stripes (each thread counts its mappings in its
 * own).  Exact when no mapping or unmapping runs at the same time; tests
 * use it to prove that nothing stays mapped.
 *
 * Return: the number of mapped entries (0 for a NULL @dev).
 */
long rdmarw_dma_mapped(const struct ib_device *dev);

/**
 * rdma_protocol_iwarp() - does the port speak iWARP
 * @device: the device
 * @port_num: port, from 1
 *
 * Return: true for an iWARP port; false otherwise or for a bad port.
 */
bool rdma_protocol_iwarp(const struct ib_device *device, u32 port_num);

/**
 * rdma_protocol_ib() - does the port speak InfiniBand
 * @device: the device
 * @port_num: port, from 1
 *
 * Return: true for an InfiniBand port.
 */
bool rdma_protocol_ib(const struct ib_device *device, u32 port_num);

/**
 * rdma_protocol_roce() - does the port speak RoCE
 * @device: the device
 * @port_num: port, from 1
 *
 * Return: true for a RoCE port.
 */
bool rdma_protocol_roce(const struct ib_device *device, u32 port_num);

/**
 * rdma_cap_read_inv() - does the port support RDMA READ with invalidate
 * @device: the device
 * @port_num: port, from 1
 *
 * Return: true on iWARP ports, as in the kernel.
 */
bool rdma_cap_read_inv(const struct ib_device *device, u32 port_num);

/**
 * rdma_is_port_valid() - is @port_num a port of @device
 * @device: the device
 * @port_num: port, from 1
 *
 * Return: true if 1 <= @port_num <= phys_port_cnt.
 */
bool rdma_is_port_valid(const struct ib_device *device, u32 port_num);

/**
 * ib_uses_virt_dma() - are DMA addresses CPU virtual addresses
 * @dev: the device
 *
 * Return: true for devices without the emulated IOMMU (rxe, siw and the
 * software device's default profiles).
 */
bool ib_uses_virt_dma(const struct ib_device *dev);

/**
 * ib_device_get_by_name() - find a registered device
 * @name: its name
 *
 * Return: the device, or NULL if none has that name.
 */
struct ib_device *ib_device_get_by_name(const char *name);

/**
 * struct ib_client - a user of devices told when they come and go
 * @name: the client's name, for messages (required)
 * @add: called for each device once the device is registered, and for
 *       every device already registered when the client registers; a
 *       non-zero return (-EOPNOTSUPP: not interested) means the client
 *       does not use that device and gets no @remove for it.  May be NULL
 * @remove: called for each device @add accepted, when the device is
 *          unregistered (before its resources go: the client destroys
 *          its objects on it here) or when the client unregisters;
 *          @client_data is what ib_set_client_data() stored.  May be NULL
 * @list: the core's (registration order); do not touch
 * @client_id: the core's; do not touch
 * @rdmarw_seq: the core's; do not touch
 * @rdmarw_going: the core's; do not touch
 *
 * The kernel's struct ib_client, without its netlink and rename hooks.
 * Clients are told of a device in registration order (@add) and in the
 * reverse order (@remove).  The callbacks run one at a time per device,
 * with no lock held that verbs, device lookups or ib_get_client_data()
 * take; they must not register or unregister a client, nor wait for a
 * thread that does.
 */
struct ib_client {
	const char *name;
	int (*add)(struct ib_device *ibdev);
	void (*remove)(struct ib_device *ibdev, void *client_data);
	struct list_head list;
	u32 client_id;
	unsigned long long rdmarw_seq;
	bool rdmarw_going;
};

/**
 * ib_register_client() - register a client of the device core
 * @client: the client; its memory stays the caller's and must live until
 *          ib_unregister_client() returns
 *
 * The client's @add is called for every device already registered, in
 * registration order, before this returns; devices registered later are
 * added as they come.  At most 64 clients are registered at once.
 *
 * Return: 0, -EINVAL for a NULL @client or a NULL name, -EEXIST if
 * @client is registered already, -ENOSPC when 64 clients are.
 */
int ib_register_client(struct ib_client *client);

/**
 * ib_unregister_client() - unregister a client
 * @client: a registered client (anything else is warned about and left)
 *
 * Calls @remove for every device the client was added to.  A full fence:
 * once it returns no callback of @client runs or will run.
 */
void ib_unregister_client(struct ib_client *client);

/**
 * ib_set_client_data() - store a client's pointer for a device
 * @device: a device the client was added to (from its @add on, until its
 *          @remove returns)
 * @client: the client
 * @data: the pointer
 *
 * Outside that window, or for bad arguments, nothing is stored and a
 * warning is logged once (the kernel's WARN).
 */
void ib_set_client_data(struct ib_device *device, struct ib_client *client,
			void *data);

/**
 * ib_get_client_data() - a client's pointer for a device
 * @device: the device
 * @client: the client
 *
 * Return: what ib_set_client_data() stored (NULL before that), or NULL
 * when @client is not added to @device or an argument is NULL.
 */
void *ib_get_client_data(struct ib_device *device, struct ib_client *client);

/**
 * ib_device_foreach() - visit every registered device
 * @fn: called per device, in registration order; a non-zero return stops
 * @arg: passed to @fn
 *
 * Return: the value that stopped the walk, or 0.
 */
int ib_device_foreach(int (*fn)(struct ib_device *dev, void *arg), void *arg);

/* ---- PD -------------------------------------------------------------- */

/**
 * struct ib_pd - a protection domain
 * @local_dma_lkey: key for local access through this PD
 * @flags: allocation flags
 * @device: owner
 * @usecnt: objects in the PD (QPs, MRs); dealloc fails with -EBUSY above 0
 */
struct ib_pd {
	u32 local_dma_lkey;
	u32 flags;
	struct ib_device *device;
	long usecnt;
};

/**
 * ib_alloc_pd() - allocate a protection domain
 * @device: the device
 * @flags: 0 (IB_PD_UNSAFE_GLOBAL_RKEY is refused with -EINVAL)
 *
 * Return: the PD, or ERR_PTR(-EINVAL) for a NULL device or unknown flags,
 * ERR_PTR(-ENOMEM), or the provider's error.
 */
struct ib_pd *ib_alloc_pd(struct ib_device *device, unsigned int flags);

/**
 * ib_dealloc_pd() - free a protection domain
 * @pd: the PD
 *
 * Return: 0, -EINVAL for NULL, -EBUSY while QPs or MRs use it.
 */
int ib_dealloc_pd(struct ib_pd *pd);

/* ---- work completions ------------------------------------------------ */

#define RDMARW_WC_STATUS_LIST(X)    \
	X(IB_WC_SUCCESS)            \
	X(IB_WC_LOC_LEN_ERR)        \
	X(IB_WC_LOC_QP_OP_ERR)      \
	X(IB_WC_LOC_EEC_OP_ERR)     \
	X(IB_WC_LOC_PROT_ERR)       \
	X(IB_WC_WR_FLUSH_ERR)       \
	X(IB_WC_MW_BIND_ERR)        \
	X(IB_WC_BAD_RESP_ERR)       \
	X(IB_WC_LOC_ACCESS_ERR)     \
	X(IB_WC_REM_INV_REQ_ERR)    \
	X(IB_WC_REM_ACCESS_ERR)     \
	X(IB_WC_REM_OP_ERR)         \
	X(IB_WC_RETRY_EXC_ERR)      \
	X(IB_WC_RNR_RETRY_EXC_ERR)  \
	X(IB_WC_LOC_RDD_VIOL_ERR)   \
	X(IB_WC_REM_INV_RD_REQ_ERR) \
	X(IB_WC_REM_ABORT_ERR)      \
	X(IB_WC_INV_EECN_ERR)       \
	X(IB_WC_INV_EEC_STATE_ERR)  \
	X(IB_WC_FATAL_ERR)          \
	X(IB_WC_RESP_TIMEOUT_ERR)   \
	X(IB_WC_GENERAL_ERR)

#define RDMARW_ENUM_ITEM(name) name,
/* Completion statuses, in the kernel's order and values. */
enum ib_wc_status { RDMARW_WC_STATUS_LIST(RDMARW_ENUM_ITEM) };

/**
 * ib_wc_status_msg() - describe a completion status in words
 * @status: the status
 *
 * The texts are the kernel's (drivers/infiniband/core/verbs.c), e.g.
 * "remote access error" for IB_WC_REM_ACCESS_ERR and "WR flushed" for
 * IB_WC_WR_FLUSH_ERR; the enumerator's name is not returned.
 *
 * Return: a static string; "unrecognized status" for a value outside the
 * enum.
 */
const char *ib_wc_status_msg(enum ib_wc_status status);

/* Completion opcodes, kernel values. */
enum ib_wc_opcode {
	IB_WC_SEND = 0,
	IB_WC_RDMA_WRITE = 1,
	IB_WC_RDMA_READ = 2,
	IB_WC_COMP_SWAP = 3,
	IB_WC_FETCH_ADD = 4,
	IB_WC_BIND_MW = 5,
	IB_WC_LOCAL_INV = 6,
	IB_WC_LSO = 7,
	IB_WC_ATOMIC_WRITE = 9,
	IB_WC_REG_MR = 10,
	IB_WC_MASKED_COMP_SWAP = 11,
	IB_WC_MASKED_FETCH_ADD = 12,
	IB_WC_FLUSH = 8,
	IB_WC_RECV = 1 << 7,
	IB_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1,
};

enum ib_wc_flags {
	IB_WC_GRH = 1,
	IB_WC_WITH_IMM = 1 << 1,
	IB_WC_WITH_INVALIDATE = 1 << 2,
	IB_WC_IP_CSUM_OK = 1 << 3,
};

/**
 * struct ib_cqe - completion entry a work request carries
 * @done: called once per completion of the work request, from
 *        ib_process_cq_direct() or the CQ's thread
 *
 * Embed it in the request's context and use container_of() in @done.
 */
struct ib_cqe {
	void (*done)(struct ib_cq *cq, struct ib_wc *wc);
};

/**
 * struct ib_wc - a work completion
 * @wr_id: caller's id (union with @wr_cqe)
 * @wr_cqe: the completed request's cqe
 * @status: enum ib_wc_status
 * @opcode: enum ib_wc_opcode
 * @vendor_err: provider detail for errors (0 on success)
 * @byte_len: bytes received (receive completions) or moved
 * @qp: the QP the request was posted on
 * @ex: immediate data or invalidated rkey, per @wc_flags
 * @src_qp: sender's QP number (receive completions)
 * @slid: 0 (no fabric addresses in rdmarw)
 * @wc_flags: enum ib_wc_flags
 * @pkey_index: 0
 * @sl: 0
 * @dlid_path_bits: 0
 * @port_num: port of the QP
 */
struct ib_wc {
	union {
		u64 wr_id;
		struct ib_cqe *wr_cqe;
	};
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 vendor_err;
	u32 byte_len;
	struct ib_qp *qp;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	u32 src_qp;
	u32 slid;
	int wc_flags;
	u16 pkey_index;
	u8 sl;
	u8 dlid_path_bits;
	u32 port_num;
};

/* ---- CQ -------------------------------------------------------------- */

/**
 * enum ib_poll_context - who processes a CQ's completions
 * @IB_POLL_DIRECT: the caller, with ib_process_cq_direct()
 * @IB_POLL_SOFTIRQ: as IB_POLL_WORKQUEUE in user space
 * @IB_POLL_WORKQUEUE: a thread of the CQ's, woken by the device
 * @IB_POLL_UNBOUND_WORKQUEUE: as IB_POLL_WORKQUEUE
 */
enum ib_poll_context {
	IB_POLL_SOFTIRQ,
	IB_POLL_WORKQUEUE,
	IB_POLL_UNBOUND_WORKQUEUE,
	IB_POLL_LAST_POOL_TYPE = IB_POLL_UNBOUND_WORKQUEUE,
	IB_POLL_DIRECT,
};

enum ib_cq_notify_flags {
	IB_CQ_SOLICITED = 1 << 0,
	IB_CQ_NEXT_COMP = 1 << 1,
	IB_CQ_SOLICITED_MASK = IB_CQ_SOLICITED | IB_CQ_NEXT_COMP,
	IB_CQ_REPORT_MISSED_EVENTS = 1 << 2,
};

/**
 * struct ib_cq_init_attr - what a provider needs to create a CQ
 * @cqe: entries
 * @comp_vector: completion vector (ignored by the software device)
 * @flags: 0
 */
struct ib_cq_init_attr {
	unsigned int cqe;
	u32 comp_vector;
	u32 flags;
};

typedef void (*ib_comp_handler)(struct ib_cq *cq, void *cq_context);

/**
 * struct ib_cq - a completion queue
 * @device: owner
 * @comp_handler: called by the provider when an armed CQ gets a completion
 * @cq_context: the private pointer given at allocation
 * @cqe: entries
 * @usecnt: QPs that use the CQ; ib_free_cq() refuses with -EBUSY above 0
 * @poll_ctx: enum ib_poll_context
 * @wc: batch buffer for ib_process_cq_direct() and the CQ thread
 * @thread: the IB_POLL_WORKQUEUE thread
 * @wait_lock: protects @pending and @stopping
 * @wait: the thread sleeps here
 * @pending: completions signalled to the thread
 * @stopping: the thread is asked to end
 * @comp_vector: completion vector it was allocated on (shared CQs)
 * @cqe_used: entries reserved by ib_cq_pool_get() users (shared CQs)
 * @shared: belongs to a CQ pool: ib_free_cq() refuses it, ib_cq_pool_put()
 *          gives entries back
 * @pool_entry: link in its pool (under the device's lock)
 */
struct ib_cq {
	struct ib_device *device;
	ib_comp_handler comp_handler;
	void *cq_context;
	int cqe;
	long usecnt;
	enum ib_poll_context poll_ctx;
	struct ib_wc *wc;
	pthread_t thread;
	pthread_mutex_t wait_lock;
	pthread_cond_t wait;
	bool pending;
	bool stopping;
	u32 comp_vector;
	unsigned int cqe_used;
	bool shared;
	struct list_head pool_entry;
};

#define IB_POLL_BATCH 16
#define IB_POLL_BATCH_DIRECT 8

/**
 * ib_alloc_cq() - allocate a completion queue
 * @dev: the device
 * @cq_context: stored in the CQ's cq_context
 * @nr_cqe: entries (1 .. max_cqe)
 * @comp_vector: completion vector
 * @poll_ctx: IB_POLL_DIRECT, or a thread context (completions delivered to
 *            wr_cqe->done from a thread of the CQ's)
 *
 * Return: the CQ, or ERR_PTR(-EINVAL) for a NULL device, @nr_cqe 0 or above
 * max_cqe, or an unknown @poll_ctx; ERR_PTR(-ENOMEM); the provider's error.
 */
struct ib_cq *ib_alloc_cq(struct ib_device *dev, void *cq_context, int nr_cqe,
			  int comp_vector, enum ib_poll_context poll_ctx);

/**
 * ib_free_cq() - free a completion queue
 * @cq: the CQ
 *
 * Return: 0, -EINVAL for NULL, an ERR_PTR or a CQ of a pool
 * (ib_cq_pool_get(): give it back with ib_cq_pool_put()), -EBUSY while QPs
 * use it, -EDEADLK (with one warning) when called from a done() that the
 * CQ's own thread runs.  (The kernel returns void and warns; rdmarw refuses
 * instead.)
 */
int ib_free_cq(struct ib_cq *cq);

/* Entries a pool CQ is created with at least (the kernel's value). */
#define IB_MAX_SHARED_CQ_SZ 4096U

/**
 * ib_cq_pool_get() - reserve entries on a shared completion queue
 * @dev: the device
 * @nr_cqe: entries to reserve, 1 .. max_cqe
 * @comp_vector_hint: completion vector wanted (taken modulo the device's
 *                    vectors, themselves at most the online CPUs); negative:
 *                    the next vector, round robin
 * @poll_ctx: IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE or IB_POLL_UNBOUND_WORKQUEUE
 *            (each has its own pool; IB_POLL_DIRECT CQs are not shared)
 *
 * As the kernel's (drivers/infiniband/core/cq.c): among the device's pool
 * CQs of @poll_ctx on that vector with @nr_cqe entries free, the least used
 * is picked and @nr_cqe are added to its cqe_used.  When none has room, the
 * pool grows by one CQ per vector, each of max(@nr_cqe,
 * IB_MAX_SHARED_CQ_SZ) entries (at most max_cqe), and the reservation is
 * taken on the new CQ of the vector.  Several users' QPs then share a CQ;
 * the CQ's cq_context is NULL.  Give the entries back with
 * ib_cq_pool_put(); the pool's CQs are freed when the device is removed.
 * Safe to call from several threads at once.
 *
 * Return: the CQ; ERR_PTR(-EINVAL) for a NULL device, @nr_cqe 0 or above
 * max_cqe, or another @poll_ctx; the error of ib_alloc_cq() when the pool
 * must grow and cannot (nothing is left allocated then).
 */
struct ib_cq *ib_cq_pool_get(struct ib_device *dev, unsigned int nr_cqe,
			     int comp_vector_hint,
			     enum ib_poll_context poll_ctx);

/**
 * ib_cq_pool_put() - give back entries reserved with ib_cq_pool_get()
 * @cq: the CQ it returned
 * @nr_cqe: the entries reserved
 *
 * The CQ stays in its pool for later users, also when no entry is
 * reserved any more.  (The kernel's returns void and warns on a bad count.)
 *
 * Return: 0; -EINVAL for NULL or an ERR_PTR, a CQ not from a pool, or
 * @nr_cqe above the entries reserved on it (nothing changes then).
 */
int ib_cq_pool_put(struct ib_cq *cq, unsigned int nr_cqe);

/**
 * ib_poll_cq() - take completions
 * @cq: the CQ
 * @num_entries: room in @wc
 * @wc: filled in
 *
 * Return: completions taken (0 .. @num_entries), or -EINVAL for NULL
 * arguments or a negative @num_entries.
 */
int ib_poll_cq(struct ib_cq *cq, int num_entries, struct ib_wc *wc);

/**
 * ib_req_notify_cq() - arm a CQ
 * @cq: the CQ
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, optionally
 *         IB_CQ_REPORT_MISSED_EVENTS
 *
 * Return: 0; 1 with IB_CQ_REPORT_MISSED_EVENTS when completions are already
 * waiting; -EINVAL for NULL.
 */
int ib_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags);

/**
 * ib_process_cq_direct() - poll a CQ and call each completion's done
 * @cq: an IB_POLL_DIRECT CQ
 * @budget: most completions to process; -1 means no limit
 *
 * Completions whose wr_cqe is NULL are consumed without a call.
 *
 * Return: completions processed, or -EINVAL for NULL or a CQ that has its
 * own thread.
 */
int ib_process_cq_direct(struct ib_cq *cq, int budget);

/* Most descriptors a CQ's events come on (struct rdmarw_cq_events). */
#define RDMARW_CQ_EVENT_FDS 2

/**
 * struct rdmarw_cq_events - where a CQ's completion events arrive
 * @fd: descriptors that turn readable (POLLIN) on an event of the CQ, to
 *      put in the caller's poll(); never read them directly
 * @nfds: how many of @fd are set (1 .. RDMARW_CQ_EVENT_FDS)
 */
struct rdmarw_cq_events {
	int fd[RDMARW_CQ_EVENT_FDS];
	int nfds;
};

/**
 * rdmarw_cq_events_take() - take a CQ's completion events over
 * @cq: an IB_POLL_DIRECT CQ
 * @ev: filled in with the descriptors to poll()
 *
 * An rdmarw extension (the kernel has none: its comp_handler runs in
 * interrupt context and costs no thread).  Until rdmarw_cq_events_give()
 * or ib_free_cq(), @cq's comp_handler is no longer called for its events:
 * the caller arms the CQ with ib_req_notify_cq() and waits in poll() on
 * @ev's descriptors itself, so that a completion wakes one thread (the
 * caller's) instead of the device's event thread and then the caller.
 * After a wake-up, rdmarw_cq_events_consume() clears the events, then the
 * caller polls the CQ and arms it again.  An event that arrives between
 * the arm and poll() leaves a descriptor readable: no wake-up is lost.
 * A spurious wake-up is possible (consume, poll, find nothing, arm).
 * Call take, consume and give from one thread at a time.  ib_free_cq()
 * frees a CQ whose events are taken (nothing to give back first).
 *
 * Return: 0; -EINVAL for NULL @cq, @ev or an ERR_PTR @cq, or a CQ that is
 * not IB_POLL_DIRECT; -EBUSY when its events are already taken;
 * -EOPNOTSUPP on a device whose comp_handler runs on the thread that made
 * the completion (the software device: there is no second thread to save).
 */
int rdmarw_cq_events_take(struct ib_cq *cq, struct rdmarw_cq_events *ev);

/**
 * rdmarw_cq_events_consume() - clear the events that made a CQ's
 *				descriptors readable
 * @cq: a CQ whose events are taken (rdmarw_cq_events_take())
 *
 * Never blocks: reads and acknowledges what is there and returns.  The
 * caller polls the CQ afterwards (the completions are not taken here).
 *
 * Return: events cleared (0: none was waiting, a spurious wake-up);
 * -EINVAL for NULL, an ERR_PTR or a CQ whose events are not taken;
 * -EOPNOTSUPP as rdmarw_cq_events_take(); -EIO when the device's event
 * could not be read.
 */
int rdmarw_cq_events_consume(struct ib_cq *cq);

/**
 * rdmarw_cq_events_give() - give a CQ's completion events back
 * @cq: a CQ whose events are taken (rdmarw_cq_events_take())
 *
 * From here the CQ's comp_handler is called for its events again, as
 * before the take; an event that was waiting unconsumed calls it.  Stop
 * polling @ev's descriptors before giving back.
 *
 * Return: 0; -EINVAL for NULL, an ERR_PTR or a CQ whose events are not
 * taken; -EOPNOTSUPP as rdmarw_cq_events_take().
 */
int rdmarw_cq_events_give(struct ib_cq *cq);

/* ---- work requests --------------------------------------------------- */

/* Send work request opcodes, kernel values. */
#define RDMARW_WR_OPCODE_LIST(X)                 \
	X(IB_WR_RDMA_WRITE, 0)                   \
	X(IB_WR_RDMA_WRITE_WITH_IMM, 1)          \
	X(IB_WR_SEND, 2)                         \
	X(IB_WR_SEND_WITH_IMM, 3)                \
	X(IB_WR_RDMA_READ, 4)                    \
	X(IB_WR_ATOMIC_CMP_AND_SWP, 5)           \
	X(IB_WR_ATOMIC_FETCH_AND_ADD, 6)         \
	X(IB_WR_BIND_MW, 8)                      \
	X(IB_WR_LSO, 10)                         \
	X(IB_WR_SEND_WITH_INV, 9)                \
	X(IB_WR_RDMA_READ_WITH_INV, 11)          \
	X(IB_WR_LOCAL_INV, 7)                    \
	X(IB_WR_MASKED_ATOMIC_CMP_AND_SWP, 12)   \
	X(IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, 13) \
	X(IB_WR_FLUSH, 14)                       \
	X(IB_WR_ATOMIC_WRITE, 15)                \
	X(IB_WR_REG_MR, 0x20)                    \
	X(IB_WR_REG_MR_INTEGRITY, 0x21)

#define RDMARW_ENUM_VALUE(name, value) name = (value),
enum ib_wr_opcode { RDMARW_WR_OPCODE_LIST(RDMARW_ENUM_VALUE) };

/**
 * ib_wr_opcode_str() - the name of a send opcode
 * @opcode: the opcode
 *
 * Return: a static string such as "IB_WR_REG_MR"; "UNKNOWN" otherwise.
 */
const char *ib_wr_opcode_str(enum ib_wr_opcode opcode);

enum ib_send_flags {
	IB_SEND_FENCE = 1,
	IB_SEND_SIGNALED = 1 << 1,
	IB_SEND_SOLICITED = 1 << 2,
	IB_SEND_INLINE = 1 << 3,
	IB_SEND_IP_CSUM = 1 << 4,
};

/**
 * struct ib_sge - a local scatter/gather element
 * @addr: DMA address
 * @length: bytes
 * @lkey: local key covering [@addr, @addr + @length)
 */
struct ib_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

/**
 * struct ib_send_wr - a send queue work request
 * @next: following request, or NULL
 * @wr_id: caller's id (union with @wr_cqe)
 * @wr_cqe: completion entry, for the ib_cqe model
 * @sg_list: local SGEs
 * @num_sge: entries in @sg_list
 * @opcode: enum ib_wr_opcode
 * @send_flags: enum ib_send_flags
 * @ex: immediate data, or the rkey to invalidate (SEND_WITH_INV,
 *      LOCAL_INV, RDMA_READ_WITH_INV)
 */
struct ib_send_wr {
	struct ib_send_wr *next;
	union {
		u64 wr_id;
		struct ib_cqe *wr_cqe;
	};
	struct ib_sge *sg_list;
	int num_sge;
	enum ib_wr_opcode opcode;
	int send_flags;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
};

/**
 * struct ib_rdma_wr - RDMA READ or WRITE
 * @wr: the generic part; opcode RDMA_WRITE(_WITH_IMM), RDMA_READ or
 *      RDMA_READ_WITH_INV
 * @remote_addr: remote virtual address (or IOVA of a remote MR)
 * @rkey: remote key
 */
struct ib_rdma_wr {
	struct ib_send_wr wr;
	u64 remote_addr;
	u32 rkey;
};

/**
 * rdma_wr() - the RDMA work request that embeds a generic one
 * @wr: the wr member of a struct ib_rdma_wr
 *
 * Return: the enclosing &struct ib_rdma_wr.
 */
static inline const struct ib_rdma_wr *rdma_wr(const struct ib_send_wr *wr)
{
	return container_of(wr, struct ib_rdma_wr, wr);
}

/**
 * struct ib_reg_wr - fast registration (IB_WR_REG_MR)
 * @wr: the generic part
 * @mr: the MR, mapped with ib_map_mr_sg()
 * @key: the key to register: the MR's current key with a new variant
 * @access: enum ib_access_flags granted
 */
struct ib_reg_wr {
	struct ib_send_wr wr;
	struct ib_mr *mr;
	u32 key;
	int access;
};

/**
 * reg_wr() - the registration work request that embeds a generic one
 * @wr: the wr member of a struct ib_reg_wr
 *
 * Return: the enclosing &struct ib_reg_wr.
 */
static inline const struct ib_reg_wr *reg_wr(const struct ib_send_wr *wr)
{
	return container_of(wr, struct ib_reg_wr, wr);
}

/**
 * struct ib_recv_wr - a receive queue work request
 * @next: following request, or NULL
 * @wr_id: caller's id (union with @wr_cqe)
 * @wr_cqe: completion entry
 * @sg_list: local SGEs (sinks)
 * @num_sge: entries in @sg_list
 */
struct ib_recv_wr {
	struct ib_recv_wr *next;
	union {
		u64 wr_id;
		struct ib_cqe *wr_cqe;
	};
	struct ib_sge *sg_list;
	int num_sge;
};

/* ---- QP -------------------------------------------------------------- */

enum ib_qp_type {
	IB_QPT_SMI,
	IB_QPT_GSI,
	IB_QPT_RC = 2,
	IB_QPT_UC,
	IB_QPT_UD,
};

enum ib_sig_type {
	IB_SIGNAL_ALL_WR,
	IB_SIGNAL_REQ_WR,
};

enum ib_qp_create_flags {
	IB_QP_CREATE_IPOIB_UD_LSO = 1 << 0,
	IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK = 1 << 1,
	IB_QP_CREATE_INTEGRITY_EN = 1 << 6,
};

/**
 * struct ib_qp_cap - queue sizes
 * @max_send_wr: Send Queue depth
 * @max_recv_wr: Receive Queue depth
 * @max_send_sge: SGEs per send request
 * @max_recv_sge: SGEs per receive request
 * @max_inline_data: inline bytes (0: not supported by rdmarw)
 * @max_rdma_ctxs: R/W contexts the QP must hold at once; when set,
 *                 ib_create_qp() grows @max_send_wr and sets up MR pools
 *                 (rdma_rw_init_qp(), rdma_rw_init_mrs()).  At most what
 *                 the device can queue: max_qp_wr divided by the WRs of
 *                 one context, rdma_rw_max_send_wr(dev, port, 1,
 *                 create_flags); more is -EINVAL (rdmarw: the kernel has
 *                 no bound)
 */
struct ib_qp_cap {
	u32 max_send_wr;
	u32 max_recv_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline_data;
	u32 max_rdma_ctxs;
};

enum ib_event_type {
	IB_EVENT_CQ_ERR,
	IB_EVENT_QP_FATAL,
	IB_EVENT_QP_REQ_ERR,
	IB_EVENT_QP_ACCESS_ERR,
	IB_EVENT_COMM_EST,
	IB_EVENT_SQ_DRAINED,
	IB_EVENT_PATH_MIG,
	IB_EVENT_PATH_MIG_ERR,
	IB_EVENT_DEVICE_FATAL,
	IB_EVENT_PORT_ACTIVE,
	IB_EVENT_PORT_ERR,
	IB_EVENT_LID_CHANGE,
	IB_EVENT_PKEY_CHANGE,
	IB_EVENT_SM_CHANGE,
	IB_EVENT_SRQ_ERR,
	IB_EVENT_SRQ_LIMIT_REACHED,
	IB_EVENT_QP_LAST_WQE_REACHED,
	IB_EVENT_CLIENT_REREGISTER,
	IB_EVENT_GID_CHANGE,
	IB_EVENT_WQ_FATAL,
};

/**
 * ib_event_msg() - describe an asynchronous event in words
 * @event: the event type
 *
 * The texts are the kernel's (drivers/infiniband/core/verbs.c), e.g. "SRQ
 * limit reached" for IB_EVENT_SRQ_LIMIT_REACHED.
 *
 * Return: a static string; "unrecognized event" for a value outside the
 * enum or one the kernel has no text for (IB_EVENT_WQ_FATAL).
 */
const char *ib_event_msg(enum ib_event_type event);

/**
 * struct ib_event - an asynchronous event
 * @device: the device
 * @element: the QP, CQ or SRQ it concerns
 * @event: what happened
 */
struct ib_event {
	struct ib_device *device;
	union {
		struct ib_cq *cq;
		struct ib_qp *qp;
		struct ib_srq *srq;
		u32 port_num;
	} element;
	enum ib_event_type event;
};

/**
 * struct ib_qp_init_attr - what ib_create_qp() creates
 * @event_handler: asynchronous events, or NULL
 * @qp_context: passed to @event_handler
 * @send_cq: CQ for send completions
 * @recv_cq: CQ for receive completions
 * @srq: a shared receive queue the QP takes its receives from, or NULL;
 *       the QP then has no Receive Queue of its own (cap.max_recv_wr and
 *       cap.max_recv_sge are ignored)
 * @cap: queue sizes; updated to what was created
 * @sq_sig_type: IB_SIGNAL_REQ_WR (signal on request) or IB_SIGNAL_ALL_WR
 * @qp_type: IB_QPT_RC
 * @create_flags: enum ib_qp_create_flags
 * @port_num: port, from 1; used by the R/W sizing
 */
struct ib_qp_init_attr {
	void (*event_handler)(struct ib_event *event, void *context);
	void *qp_context;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct ib_srq *srq;
	struct ib_qp_cap cap;
	enum ib_sig_type sq_sig_type;
	enum ib_qp_type qp_type;
	u32 create_flags;
	u32 port_num;
};

enum ib_qp_state {
	IB_QPS_RESET,
	IB_QPS_INIT,
	IB_QPS_RTR,
	IB_QPS_RTS,
	IB_QPS_SQD,
	IB_QPS_SQE,
	IB_QPS_ERR,
};

enum ib_qp_attr_mask {
	IB_QP_STATE = 1,
	IB_QP_CUR_STATE = 1 << 1,
	IB_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	IB_QP_ACCESS_FLAGS = 1 << 3,
	IB_QP_PKEY_INDEX = 1 << 4,
	IB_QP_PORT = 1 << 5,
	IB_QP_QKEY = 1 << 6,
	IB_QP_AV = 1 << 7,
	IB_QP_PATH_MTU = 1 << 8,
	IB_QP_TIMEOUT = 1 << 9,
	IB_QP_RETRY_CNT = 1 << 10,
	IB_QP_RNR_RETRY = 1 << 11,
	IB_QP_RQ_PSN = 1 << 12,
	IB_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	IB_QP_ALT_PATH = 1 << 14,
	IB_QP_MIN_RNR_TIMER = 1 << 15,
	IB_QP_SQ_PSN = 1 << 16,
	IB_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	IB_QP_PATH_MIG_STATE = 1 << 18,
	IB_QP_CAP = 1 << 19,
	IB_QP_DEST_QPN = 1 << 20,
};

/**
 * struct ib_qp_attr - QP attributes for ib_modify_qp() / ib_query_qp()
 * @qp_state: new state (IB_QP_STATE)
 * @cur_qp_state: assumed current state (IB_QP_CUR_STATE)
 * @qp_access_flags: remote access allowed on the QP (IB_QP_ACCESS_FLAGS)
 * @dest_qp_num: peer QP number (IB_QP_DEST_QPN)
 * @port_num: port (IB_QP_PORT)
 * @max_rd_atomic: outstanding READs as requester
 * @max_dest_rd_atomic: outstanding READs as responder
 * @cap: sizes (query only)
 */
struct ib_qp_attr {
	enum ib_qp_state qp_state;
	enum ib_qp_state cur_qp_state;
	int qp_access_flags;
	u32 dest_qp_num;
	u32 port_num;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	struct ib_qp_cap cap;
};

struct rdmarw_qp_owner;

/**
 * struct ib_qp - a queue pair (RC)
 * @device: owner
 * @pd: protection domain
 * @send_cq: CQ for send completions
 * @recv_cq: CQ for receive completions
 * @mr_lock: protects @rdma_mrs, @sig_mrs and @mrs_used
 * @mrs_used: MRs taken from the QP's pools
 * @rdma_mrs: pool of fast-registration MRs for R/W contexts
 * @sig_mrs: pool of integrity MRs for signature contexts
 * @event_handler: asynchronous events
 * @qp_context: passed to @event_handler
 * @qp_num: QP number, unique on the device
 * @max_write_sge: SGEs per RDMA WRITE (cap.max_send_sge)
 * @max_read_sge: SGEs per RDMA READ (min of cap.max_send_sge, max_sge_rd)
 * @qp_type: IB_QPT_RC
 * @port: port, from 1
 * @integrity_en: created with IB_QP_CREATE_INTEGRITY_EN
 * @state: current state, as the core last saw it
 * @cap: sizes created
 * @sq_sig_type: IB_SIGNAL_ALL_WR or IB_SIGNAL_REQ_WR
 * @rw_cache: R/W context storage (rdmarw extension; see rw.h)
 * @srq: the shared receive queue it takes receives from, or NULL
 * @srq_entry: link in the SRQ's list of QPs (the SRQ's qp_lock)
 * @rdmarw_owner: the rdma_cm id that made it (rdma_create_qp()) while the
 *	id holds it, or NULL (rdmarw extension, for the core and the CM
 *	only): ib_destroy_qp() on such a QP has the id let go of it first
 */
struct ib_qp {
	struct ib_device *device;
	struct ib_pd *pd;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct rdmarw_spinlock mr_lock;
	int mrs_used;
	struct list_head rdma_mrs;
	struct list_head sig_mrs;
	void (*event_handler)(struct ib_event *event, void *context);
	void *qp_context;
	u32 qp_num;
	u32 max_write_sge;
	u32 max_read_sge;
	enum ib_qp_type qp_type;
	u32 port;
	bool integrity_en;
	enum ib_qp_state state;
	struct ib_qp_cap cap;
	enum ib_sig_type sq_sig_type;
	struct rdmarw_rw_cache *rw_cache;
	struct ib_srq *srq;
	struct list_head srq_entry;
	struct rdmarw_qp_owner *rdmarw_owner;
};

/**
 * ib_create_qp() - create an RC queue pair
 * @pd: protection domain
 * @init_attr: what to create; @init_attr->cap is updated to what was
 *             created.  With cap.max_rdma_ctxs set, max_send_wr grows by
 *             rdma_rw_init_qp() and MR pools are set up by
 *             rdma_rw_init_mrs().
 *
 * The QP starts in IB_QPS_RESET.
 *
 * Return: the QP, or ERR_PTR(-EINVAL) for NULL arguments, a missing CQ, a
 * QP type other than RC, an SRQ of another device, caps above the
 * device's (max_send_sge, max_recv_sge, max_qp_wr; the receive caps are
 * not checked with an SRQ), cap.max_rdma_ctxs above max_qp_wr divided by
 * rdma_rw_max_send_wr() of one context (refused before anything is
 * allocated), a bad port, IB_QP_CREATE_INTEGRITY_EN on a
 * device without IBK_INTEGRITY_HANDOVER (-EOPNOTSUPP), other create flags;
 * ERR_PTR(-ENOMEM); the provider's error; or the MR-pool error.
 */
struct ib_qp *ib_create_qp(struct ib_pd *pd, struct ib_qp_init_attr *init_attr);

/**
 * ib_destroy_qp() - destroy a queue pair
 * @qp: the QP
 *
 * Frees its R/W MR pools and context storage.  R/W contexts borrow both
 * until rdma_rw_ctx_destroy*(), so the QP is not destroyed while any
 * context holds a block of its context storage (MULTI and MR contexts,
 * signature contexts, bio_vec MULTI and MR contexts) or an MR of its pools:
 * nothing is freed or changed then, and the call succeeds once those
 * contexts are destroyed.  SINGLE and IOVA contexts hold nothing of the QP
 * but name it; destroy them first as well.  (The kernel's ib_destroy_qp()
 * does not look at R/W contexts; rdmarw refuses, as for ib_free_cq().)
 *
 * Return: 0, -EINVAL for NULL, -EBUSY while R/W contexts hold MRs of its
 * pools (mrs_used > 0) or blocks of its context storage.
 */
int ib_destroy_qp(struct ib_qp *qp);

/**
 * ib_modify_qp() - change a QP's state or attributes
 * @qp: the QP
 * @attr: new values
 * @attr_mask: enum ib_qp_attr_mask: which of @attr to apply
 *
 * Transitions follow the IBA state table for RC QPs as the kernel's
 * ib_modify_qp_is_ok() applies it, with its required and optional mask
 * bits: RESET→INIT→RTR→RTS, RTS↔SQD, any state→RESET, any but RESET→ERR.
 * Moving to ERR flushes outstanding work requests.  When the device moves
 * the QP to ERR during the call (a failed work request), a move to other
 * than RESET or ERR fails and the QP stays ERR.
 *
 * Concurrency.  A move to ERR may run while other threads post to the QP
 * and poll or arm its CQs, and beside one other ib_modify_qp() of the QP
 * (another move to ERR, an RTS↔SQD move or an attribute change): ERR
 * stays, the other call fails with -EINVAL when it finds ERR (an attribute
 * change that ERR overtakes has no effect).  RTS↔SQD and attribute
 * changes in RTS or SQD may also run beside posts and polls.  The caller
 * serialises everything else: the set-up moves (RESET→INIT→RTR→RTS) and a
 * move to RESET run with nothing else on the QP (no post, no poll that may
 * return its completions, no other ib_modify_qp()), two moves other than
 * to ERR never overlap, and ib_destroy_qp() races nothing.  (The kernel's
 * rxe and siw serialise their modify and their posts with the QP's
 * state_lock; siw refuses a post that meets the move half-way with
 * -ENOTCONN.)
 *
 * A work request posted while the QP moves to ERR either executes
 * (posted before the move reached the queue) or completes with
 * IB_WC_WR_FLUSH_ERR; each completes exactly once, the Send Queue in
 * posting order, none successfully after a flushed one.  The software
 * device accepts such a post (0), it refuses none because of the race;
 * only its usual answers remain (-ENOMEM for a full queue, whose flushed
 * slots free as they are polled; -EINVAL for a bad WR; -ENOTCONN on a TCP
 * device's QP in SQD).  On the libibverbs path a move to ERR holds the
 * QP's send and receive locks around the provider's move, and a post
 * decides under its queue's lock: it either reached the provider before
 * the move (the provider flushes it with the rest) or is flushed by rdmarw
 * itself (no provider call), so it completes on every device, also on
 * Debian 12's rxe and the kernel's siw, which never complete a WR posted
 * to a user QP already in ERR.  librdmacm's own move in rdma_disconnect()
 * (IB, RoCE) is held the same way.  An ERR the provider enters on its own
 * (a failed work request, the peer's TERMINATE or disconnect) is seen at
 * the first error completion of the QP that a poll returns (the failed
 * WR's, or the provider's flush of an earlier WR) or when the CM's
 * DISCONNECTED moves the QP, whichever comes first: a WR posted after it
 * is flushed by rdmarw as above; one posted before it reaches the
 * provider, and siw and 6.1's rxe never complete it (a drain still ends
 * at its marker).
 *
 * Return: 0, -EINVAL for NULL, an unknown mask bit, a transition or mask
 * the table does not allow (also from an ERR that came during the call);
 * the provider's error (the software device: -ECONNABORTED for SQD -> RTS
 * of a TCP device's QP, whose SQD is siw's CLOSING; -EINVAL for RESET of a
 * QP a connection was attached to, which stays its connection's until it
 * is destroyed).
 */
int ib_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int attr_mask);

/**
 * ib_query_qp() - read a QP's attributes
 * @qp: the QP
 * @attr: filled in (state, cap, port)
 * @attr_mask: ignored, as by most providers
 * @init_attr: filled in with the creation attributes, or NULL
 *
 * Return: 0, -EINVAL for NULL.
 */
int ib_query_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int attr_mask,
		struct ib_qp_init_attr *init_attr);

/**
 * ib_post_send() - post send work requests
 * @qp: the QP
 * @send_wr: a chain of requests
 * @bad_wr: set to the first request not posted on error; may be NULL
 *
 * Requests are checked as they are queued; queuing stops at the first bad
 * one and earlier ones stay posted.  Execution errors are reported as
 * completions, not here.
 *
 * Return: 0; -EINVAL for a NULL argument, a bad opcode, num_sge above
 * cap.max_send_sge (or max_read_sge for READs), or a QP in RESET, INIT or
 * RTR; -ENOTCONN for a TCP device's QP in SQD (siw's CLOSING: after
 * rdma_disconnect()); -ENOMEM when the Send Queue is full (unsignaled
 * requests hold their slot until a later signaled one completes and is
 * polled).
 */
int ib_post_send(struct ib_qp *qp, const struct ib_send_wr *send_wr,
		 const struct ib_send_wr **bad_wr);

/**
 * ib_post_recv() - post receive work requests
 * @qp: the QP
 * @recv_wr: a chain of requests
 * @bad_wr: set to the first request not posted on error; may be NULL
 *
 * Return: 0; -EINVAL for a NULL argument, num_sge above cap.max_recv_sge,
 * a QP in RESET or a QP attached to an SRQ (ib_post_srq_recv());
 * -ENOTCONN for a TCP device's QP in SQD (siw's CLOSING); -ENOMEM when the
 * Receive Queue is full.
 */
int ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *recv_wr,
		 const struct ib_recv_wr **bad_wr);

/* ---- SRQ ------------------------------------------------------------- */

enum ib_srq_type {
	IB_SRQT_BASIC,
	IB_SRQT_XRC,
	IB_SRQT_TM,
};

enum ib_srq_attr_mask {
	IB_SRQ_MAX_WR = 1 << 0,
	IB_SRQ_LIMIT = 1 << 1,
};

/**
 * struct ib_srq_attr - the sizes and the limit of a shared receive queue
 * @max_wr: receives it holds
 * @max_sge: SGEs per receive
 * @srq_limit: armed limit: when fewer receives than this are left after
 *             one is taken, IB_EVENT_SRQ_LIMIT_REACHED is raised once and
 *             the limit disarms (0: not armed)
 */
struct ib_srq_attr {
	u32 max_wr;
	u32 max_sge;
	u32 srq_limit;
};

/**
 * struct ib_srq_init_attr - what ib_create_srq() creates
 * @event_handler: asynchronous events (IB_EVENT_SRQ_LIMIT_REACHED), or NULL;
 *                 called from the thread that executes the SEND that took
 *                 the receive: it must not call verbs on the SRQ or its QPs
 * @srq_context: passed to @event_handler
 * @attr: sizes and initial limit; updated to what was created
 * @srq_type: IB_SRQT_BASIC
 */
struct ib_srq_init_attr {
	void (*event_handler)(struct ib_event *event, void *context);
	void *srq_context;
	struct ib_srq_attr attr;
	enum ib_srq_type srq_type;
};

/**
 * struct ib_srq - a shared receive queue
 * @device: owner
 * @pd: protection domain (its receives' buffers are checked in it)
 * @event_handler: asynchronous events
 * @srq_context: passed to @event_handler
 * @srq_type: IB_SRQT_BASIC
 * @usecnt: QPs attached; ib_destroy_srq() refuses with -EBUSY above 0
 * @attr: sizes created (max_wr, max_sge; srq_limit as last set)
 * @qp_lock: protects @qp_list
 * @qp_list: the attached QPs (ib_qp.srq_entry)
 */
struct ib_srq {
	struct ib_device *device;
	struct ib_pd *pd;
	void (*event_handler)(struct ib_event *event, void *context);
	void *srq_context;
	enum ib_srq_type srq_type;
	long usecnt;
	struct ib_srq_attr attr;
	pthread_mutex_t qp_lock;
	struct list_head qp_list;
};

/**
 * ib_create_srq() - create a shared receive queue
 * @pd: protection domain
 * @srq_init_attr: what to create; attr is updated to what was created
 *
 * QPs created with ib_qp_init_attr.srq set take their receives from it, in
 * the order they were posted, whichever QP the message arrives on.
 *
 * Return: the SRQ, or ERR_PTR(-EINVAL) for NULL arguments, a type other
 * than IB_SRQT_BASIC, max_wr or max_sge 0 or above the device's Receive
 * Queue limits (max_qp_wr, max_recv_sge), or srq_limit above max_wr;
 * ERR_PTR(-EOPNOTSUPP) when the device has no SRQs; ERR_PTR(-ENOMEM); the
 * provider's error.
 */
struct ib_srq *ib_create_srq(struct ib_pd *pd,
			     struct ib_srq_init_attr *srq_init_attr);

/**
 * ib_destroy_srq() - destroy a shared receive queue
 * @srq: the SRQ
 *
 * Receives still posted are dropped without a completion (as the kernel's
 * providers do); destroy or drain the QPs first.
 *
 * Return: 0, -EINVAL for NULL or an ERR_PTR, -EBUSY while QPs are attached
 * (destroy them first).
 */
int ib_destroy_srq(struct ib_srq *srq);

/**
 * ib_modify_srq() - arm the limit of a shared receive queue
 * @srq: the SRQ
 * @srq_attr: srq_limit is read with IB_SRQ_LIMIT
 * @srq_attr_mask: enum ib_srq_attr_mask
 *
 * IB_SRQ_LIMIT arms the limit (0 disarms it).  IB_SRQ_MAX_WR (resizing)
 * needs IB_DEVICE_SRQ_RESIZE, which rdmarw's devices do not offer.
 *
 * Return: 0; -EINVAL for NULL, an unknown mask bit, or a limit above
 * max_wr; -EOPNOTSUPP for IB_SRQ_MAX_WR or a provider without the op.
 */
int ib_modify_srq(struct ib_srq *srq, struct ib_srq_attr *srq_attr,
		  enum ib_srq_attr_mask srq_attr_mask);

/**
 * ib_query_srq() - read the attributes of a shared receive queue
 * @srq: the SRQ
 * @srq_attr: filled in: max_wr, max_sge and the armed limit (0 once it
 *            fired)
 *
 * Return: 0, -EINVAL for NULL; -EOPNOTSUPP for a provider without the op.
 */
int ib_query_srq(struct ib_srq *srq, struct ib_srq_attr *srq_attr);

/**
 * ib_post_srq_recv() - post receives to a shared receive queue
 * @srq: the SRQ
 * @recv_wr: a chain of requests
 * @bad_recv_wr: set to the first request not posted on error; may be NULL
 *
 * A SEND that waited for a receive on an attached QP (RNR) resumes.
 * ib_post_recv() on an attached QP is refused.
 *
 * Return: 0; -EINVAL for a NULL argument or num_sge above max_sge; -ENOMEM
 * when the SRQ is full (earlier requests of the chain stay posted).
 */
int ib_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *recv_wr,
		     const struct ib_recv_wr **bad_recv_wr);

/**
 * ib_drain_sq() - move a QP to ERR and wait until its Send Queue is flushed
 * @qp: the QP; its send CQ is IB_POLL_DIRECT (processed here, so done()
 *      callbacks run on the caller's thread, as in the kernel) or
 *      thread-polled
 *
 * Posts a marker (a signaled zero-length RDMA WRITE) behind every request
 * on the Send Queue and returns once its flush completion has been
 * delivered: every earlier request has completed and been delivered then.
 * The wait is bounded by rdmarw_get_drain_timeout() milliseconds (the
 * kernel waits without bound).  A full Send Queue is not an error at
 * once: moving to ERR flushes its requests, and their slots come free as
 * their completions are polled, so the marker is posted again until the
 * bound.  rdmarw does not reserve a slot for the marker at ib_create_qp():
 * size the QP one WR larger for it, as the kernel's ULPs do.
 *
 * A marker that did not complete in time is given up; if its completion
 * comes later it is consumed (and dropped) as usual, and ib_destroy_qp()
 * frees whatever is left of it.
 *
 * Return: 0; -EINVAL for NULL; the error of ib_modify_qp() (the move to
 * ERR) or of ib_post_send() (-EINVAL in RESET); -ENOMEM when no Send Queue
 * slot came free before the bound (a queue of unsignaled requests whose
 * slots wait for a signaled completion, or completions lost when the CQ
 * overflowed), or when the marker cannot be allocated; -ETIMEDOUT when the
 * marker was posted but its completion did not arrive before the bound
 * (lost to a CQ overflow, or a CQ that nobody processes); -EDEADLK (with one
 * warning, nothing posted) when called from a done() that the thread of the
 * queue's CQ runs: that thread would wait for itself.  After an error the
 * QP is in ERR and some completions may never come: destroy it.
 */
int ib_drain_sq(struct ib_qp *qp);

/**
 * ib_drain_rq() - move a QP to ERR and wait until its Receive Queue is
 * flushed
 * @qp: the QP; its receive CQ as for ib_drain_sq()
 *
 * As ib_drain_sq(), with a receive as the marker: returns once every
 * receive posted before it has completed and been delivered.
 *
 * Return: 0; -EINVAL for NULL; the error of ib_modify_qp() or of
 * ib_post_recv() (-EINVAL in RESET); -ENOMEM when the Receive Queue stayed
 * full until the bound or the marker cannot be allocated; -ETIMEDOUT when
 * the marker's completion did not arrive before the bound.
 */
int ib_drain_rq(struct ib_qp *qp);

/**
 * ib_drain_qp() - move a QP to ERR and wait until both its queues are
 * flushed
 * @qp: the QP; its CQs as for ib_drain_sq()
 *
 * ib_drain_sq(), then ib_drain_rq() whatever the first returned (not for
 * a QP on an SRQ, which has no Receive Queue: only its Send Queue is
 * drained, as in the kernel); each queue has its own bound of
 * rdmarw_get_drain_timeout() milliseconds.
 *
 * Return: 0; -EINVAL for NULL; otherwise the first error of
 * ib_drain_sq() and ib_drain_rq() (-ENOMEM, -ETIMEDOUT and the errors of
 * ib_modify_qp(), ib_post_send() and ib_post_recv(), as listed there).
 */
int ib_drain_qp(struct ib_qp *qp);

/**
 * rdmarw_set_drain_timeout() - bound the waits of the drain functions
 * @ms: milliseconds each of ib_drain_sq(), ib_drain_rq() (and each half of
 *      ib_drain_qp()) may wait for its marker; 0 waits not at all: only a
 *      marker that completes while it is posted counts (rdmarw extension)
 *
 * The default is 10000 ms.  Affects drains started afterwards, on every
 * QP; safe to call from any thread.
 */
void rdmarw_set_drain_timeout(unsigned int ms);

/**
 * rdmarw_get_drain_timeout() - the bound of the drain functions' waits
 *
 * Return: milliseconds (rdmarw_set_drain_timeout()).
 */
unsigned int rdmarw_get_drain_timeout(void);

/* ---- MR -------------------------------------------------------------- */

enum ib_access_flags {
	IB_ACCESS_LOCAL_WRITE = 1,
	IB_ACCESS_REMOTE_WRITE = 1 << 1,
	IB_ACCESS_REMOTE_READ = 1 << 2,
	IB_ACCESS_REMOTE_ATOMIC = 1 << 3,
	IB_ACCESS_MW_BIND = 1 << 4,
	IB_ZERO_BASED = 1 << 5,
	IB_ACCESS_ON_DEMAND = 1 << 6,
	IB_ACCESS_HUGETLB = 1 << 7,
	IB_ACCESS_RELAXED_ORDERING = 1 << 20,
	IB_ACCESS_SUPPORTED = (IB_ACCESS_RELAXED_ORDERING << 1) - 1,
};

enum ib_mr_type {
	IB_MR_TYPE_MEM_REG,
	IB_MR_TYPE_SG_GAPS,
	IB_MR_TYPE_DM,
	IB_MR_TYPE_USER,
	IB_MR_TYPE_DMA,
	IB_MR_TYPE_INTEGRITY,
};

/**
 * struct ib_mr - a memory region
 * @device: owner
 * @pd: protection domain
 * @lkey: local key (24-bit index, 8-bit variant)
 * @rkey: remote key (equal to @lkey on the software device)
 * @iova: first mapped address
 * @length: mapped bytes
 * @page_size: page size of the mapping
 * @type: enum ib_mr_type
 * @need_inval: the MR must be invalidated before it is registered again
 * @qp_entry: link in a QP's MR pool
 * @sig_attrs: integrity attributes (IB_MR_TYPE_INTEGRITY)
 * @max_num_sg: page-list capacity (fast-registration MRs)
 * @max_num_meta_sg: protection page-list capacity (integrity MRs)
 * @access: access rights (user MRs; fast MRs: of the last REG_MR)
 * @in_pool: belongs to a pool; ib_dereg_mr() refuses with -EBUSY
 */
struct ib_mr {
	struct ib_device *device;
	struct ib_pd *pd;
	u32 lkey;
	u32 rkey;
	u64 iova;
	u64 length;
	unsigned int page_size;
	enum ib_mr_type type;
	bool need_inval;
	struct list_head qp_entry;
	struct ib_sig_attrs *sig_attrs;
	u32 max_num_sg;
	u32 max_num_meta_sg;
	int access;
	bool in_pool;
};

/**
 * ib_alloc_mr() - allocate a fast-registration MR
 * @pd: protection domain
 * @mr_type: IB_MR_TYPE_MEM_REG (or IB_MR_TYPE_SG_GAPS where supported)
 * @max_num_sg: page-list capacity, 1 .. max_fast_reg_page_list_len
 *
 * The MR starts invalid (free state) with need_inval false.
 *
 * Return: the MR, or ERR_PTR(-EINVAL) for a NULL PD, @max_num_sg 0 or above
 * the device's limit, or another type; ERR_PTR(-EOPNOTSUPP) when the device
 * cannot fast-register; ERR_PTR(-ENOMEM).
 */
struct ib_mr *ib_alloc_mr(struct ib_pd *pd, enum ib_mr_type mr_type,
			  u32 max_num_sg);

/**
 * ib_alloc_mr_integrity() - allocate an integrity MR
 * @pd: protection domain
 * @max_num_data_sg: data page-list capacity
 * @max_num_meta_sg: protection page-list capacity
 *
 * Return: the MR, or ERR_PTR(-EOPNOTSUPP) without IBK_INTEGRITY_HANDOVER,
 * ERR_PTR(-EINVAL) for a NULL PD or capacities of 0 or above
 * max_pi_fast_reg_page_list_len, ERR_PTR(-ENOMEM).
 */
struct ib_mr *ib_alloc_mr_integrity(struct ib_pd *pd, u32 max_num_data_sg,
				    u32 max_num_meta_sg);

/**
 * ib_reg_user_mr() - register memory for local and remote access
 * @pd: protection domain
 * @start: first byte (CPU address)
 * @length: bytes, 1 .. max_mr_size
 * @virt_addr: the address remote peers use for @start (usually @start)
 * @access_flags: enum ib_access_flags; remote write needs local write
 *
 * The MR is valid at once; lkey and rkey are returned in the MR.
 *
 * Return: the MR, or ERR_PTR(-EINVAL) for a NULL PD or @start, zero
 * @length, an address range that wraps, unknown flags, or REMOTE_WRITE
 * without LOCAL_WRITE; ERR_PTR(-ENOMEM).
 */
struct ib_mr *ib_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
			     u64 virt_addr, int access_flags);

/**
 * ib_dereg_mr() - free an MR
 * @mr: the MR
 *
 * Return: 0, -EINVAL for NULL, -EBUSY while it belongs to a pool.
 */
int ib_dereg_mr(struct ib_mr *mr);

/**
 * ib_map_mr_sg() - map a DMA-mapped scatterlist into an MR's page list
 * @mr: a fast-registration MR, not currently registered
 * @sg: DMA-mapped list
 * @sg_nents: entries to map
 * @sg_offset: bytes to skip in the first entry, or NULL; updated to the
 *             offset into the first unmapped entry when not all fit
 * @page_size: page size of the mapping (a power of two, at least 4 KiB)
 *
 * Maps the longest prefix the rules allow (ib_sg_to_pages()): only the first
 * entry may start inside a page; an entry must start on a page boundary
 * unless it continues the previous one; only the last may end inside a page;
 * at most max_num_sg pages (iWARP devices such as siw count scatterlist
 * entries instead of pages).  Sets iova, length and page_size.
 *
 * Return: entries mapped (possibly fewer than @sg_nents); -EINVAL for NULL
 * arguments, @sg_nents <= 0, a bad @page_size, an offset at or beyond the
 * first entry's length, an MR that is not a fast-registration MR, or when
 * not even the first entry fits; the provider's error when its list is full
 * before the first entry is mapped (-ENOMEM on siw-like devices).
 */
int ib_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
		 unsigned int *sg_offset, unsigned int page_size);

/**
 * ib_sg_to_pages() - walk a DMA-mapped list as MR pages
 * @mr: the MR: its page_size is the page size; iova and length are set
 * @sgl: DMA-mapped list
 * @sg_nents: entries
 * @sg_offset_p: offset into the first entry, or NULL; updated as in
 *               ib_map_mr_sg()
 * @set_page: called per page address; a negative return stops the walk
 *
 * For providers' map_mr_sg.
 *
 * Return: entries mapped (as ib_map_mr_sg()); -EINVAL for a NULL @mr,
 * @sgl or @set_page, @sg_nents <= 0, a zero page_size, or an offset at or
 * beyond the first entry's length; set_page()'s error when not even the
 * first page fits.
 */
int ib_sg_to_pages(struct ib_mr *mr, struct scatterlist *sgl, int sg_nents,
		   unsigned int *sg_offset_p,
		   int (*set_page)(struct ib_mr *, u64));

/**
 * ib_inc_rkey() - the next key variant
 * @rkey: a key
 *
 * Return: @rkey with its low 8 bits incremented (wrapping), index unchanged.
 */
static inline u32 ib_inc_rkey(u32 rkey)
{
	const u32 mask = 0x000000ff;

	return ((rkey + 1) & mask) | (rkey & ~mask);
}

/**
 * ib_update_fast_reg_key() - set the variant of an MR's keys
 * @mr: the MR
 * @newkey: the variant (low 8 bits used)
 */
static inline void ib_update_fast_reg_key(struct ib_mr *mr, u8 newkey)
{
	mr->lkey = (mr->lkey & 0xffffff00) | newkey;
	mr->rkey = (mr->rkey & 0xffffff00) | newkey;
}

/* ---- DMA mapping ------------------------------------------------------ */

/**
 * ib_dma_map_sg() - map a scatterlist for the device
 * @dev: the device
 * @sg: first entry
 * @nents: entries
 * @direction: DMA_TO_DEVICE, DMA_FROM_DEVICE or DMA_BIDIRECTIONAL
 *
 * Sets each entry's dma_address and dma_length.  rdmarw's devices use
 * virtual DMA: nothing is merged, so the mapped count equals @nents.
 *
 * Return: entries mapped, or 0 on failure (NULL arguments, @nents 0, a bad
 * direction, a list shorter than @nents, an entry whose range wraps).
 */
int ib_dma_map_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
		  enum dma_data_direction direction);

/**
 * ib_dma_unmap_sg() - undo ib_dma_map_sg()
 * @dev: the device
 * @sg: the list as given to ib_dma_map_sg()
 * @nents: the count given to ib_dma_map_sg() (not the mapped count)
 * @direction: as given to ib_dma_map_sg()
 */
void ib_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
		     enum dma_data_direction direction);

/**
 * ib_dma_map_sgtable_attrs() - map an sg_table
 * @dev: the device
 * @sgt: the table; nents is set to the mapped count
 * @direction: DMA direction
 * @dma_attrs: ignored
 *
 * Return: 0, -EINVAL when mapping fails.
 */
int ib_dma_map_sgtable_attrs(struct ib_device *dev, struct sg_table *sgt,
			     enum dma_data_direction direction,
			     unsigned long dma_attrs);

/**
 * ib_dma_unmap_sgtable_attrs() - undo ib_dma_map_sgtable_attrs()
 * @dev: the device
 * @sgt: the table
 * @direction: DMA direction
 * @dma_attrs: ignored
 */
void ib_dma_unmap_sgtable_attrs(struct ib_device *dev, struct sg_table *sgt,
				enum dma_data_direction direction,
				unsigned long dma_attrs);

/**
 * ib_dma_map_bvec() - map one bio_vec
 * @dev: the device
 * @bvec: the vector
 * @direction: DMA direction
 *
 * Return: its DMA address; check with ib_dma_mapping_error().
 */
u64 ib_dma_map_bvec(struct ib_device *dev, struct bio_vec *bvec,
		    enum dma_data_direction direction);

/**
 * ib_dma_unmap_bvec() - undo ib_dma_map_bvec()
 * @dev: the device
 * @addr: the address it returned
 * @size: the vector's length
 * @direction: DMA direction
 */
void ib_dma_unmap_bvec(struct ib_device *dev, u64 addr, size_t size,
		       enum dma_data_direction direction);

/**
 * ib_dma_map_single() - map a buffer
 * @dev: the device
 * @cpu_addr: the buffer
 * @size: its length
 * @direction: DMA direction
 *
 * Return: its DMA address; check with ib_dma_mapping_error().
 */
u64 ib_dma_map_single(struct ib_device *dev, void *cpu_addr, size_t size,
		      enum dma_data_direction direction);

/**
 * ib_dma_unmap_single() - undo ib_dma_map_single()
 * @dev: the device
 * @addr: the address it returned
 * @size: the length given
 * @direction: DMA direction
 */
void ib_dma_unmap_single(struct ib_device *dev, u64 addr, size_t size,
			 enum dma_data_direction direction);

/**
 * ib_dma_sync_single_for_cpu() - give a mapped buffer back to the CPU
 * @dev: the device
 * @addr: an address from ib_dma_map_single() (or inside its range)
 * @size: bytes to hand over
 * @dir: the direction it was mapped with
 *
 * Call before the CPU reads what the device wrote (DMA_FROM_DEVICE,
 * DMA_BIDIRECTIONAL).  rdmarw's devices see the CPU's memory coherently,
 * so nothing is copied or flushed; the arguments are checked.  (The
 * kernel's returns void.)
 *
 * Return: 0; -EINVAL for a NULL @dev, @size 0, a bad direction, the error
 * address or 0, a range that wraps, or a device with no live mapping.
 */
int ib_dma_sync_single_for_cpu(struct ib_device *dev, u64 addr, size_t size,
			       enum dma_data_direction dir);

/**
 * ib_dma_sync_single_for_device() - give a mapped buffer to the device
 * @dev: the device
 * @addr: an address from ib_dma_map_single() (or inside its range)
 * @size: bytes to hand over
 * @dir: the direction it was mapped with
 *
 * Call after the CPU wrote what the device will read (DMA_TO_DEVICE,
 * DMA_BIDIRECTIONAL).  As ib_dma_sync_single_for_cpu(): checked, nothing
 * to copy.
 *
 * Return: 0, or -EINVAL as ib_dma_sync_single_for_cpu().
 */
int ib_dma_sync_single_for_device(struct ib_device *dev, u64 addr, size_t size,
				  enum dma_data_direction dir);

#define DMA_MAPPING_ERROR (~(dma_addr_t)0)

/**
 * ib_dma_mapping_error() - did a map call fail
 * @dev: the device
 * @dma_addr: the address it returned
 *
 * Return: non-zero for the error address.
 */
int ib_dma_mapping_error(struct ib_device *dev, u64 dma_addr);

/**
 * struct dma_iova_state - an IOVA range from the emulated IOMMU
 * @addr: first IOVA, 0 when none is allocated
 * @size: bytes reserved
 */
struct dma_iova_state {
	dma_addr_t addr;
	u64 size;
};

/**
 * dma_use_iova() - does a state hold an IOVA range
 * @state: filled in by ib_dma_iova_try_alloc()
 *
 * Return: true when a range is reserved.
 */
static inline bool dma_use_iova(const struct dma_iova_state *state)
{
	return state->size != 0;
}

/**
 * ib_dma_iova_try_alloc() - reserve a contiguous IOVA range
 * @dev: the device
 * @state: filled in
 * @phys: address of the first byte to be linked (its in-page offset is kept)
 * @size: bytes
 *
 * Return: true when reserved; false when the device has no IOMMU (virtual
 * DMA) or space runs out.
 */
bool ib_dma_iova_try_alloc(struct ib_device *dev, struct dma_iova_state *state,
			   phys_addr_t phys, size_t size);

/**
 * ib_dma_iova_link() - map memory at an offset of a reserved range
 * @dev: the device
 * @state: the range
 * @phys: memory to map
 * @offset: where in the range
 * @size: bytes
 * @dir: DMA direction
 *
 * Return: 0, -EINVAL when it does not fit the range, -ENOMEM.
 */
int ib_dma_iova_link(struct ib_device *dev, struct dma_iova_state *state,
		     phys_addr_t phys, size_t offset, size_t size,
		     enum dma_data_direction dir);

/**
 * ib_dma_iova_destroy() - unmap and release a range
 * @dev: the device
 * @state: the range
 * @mapped_len: bytes linked
 * @dir: DMA direction
 */
void ib_dma_iova_destroy(struct ib_device *dev, struct dma_iova_state *state,
			 size_t mapped_len, enum dma_data_direction dir);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_IB_VERBS_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The target's private header, sectioned like the kernel's
 * drivers/nvme/target/nvmet.h: the objects (subsystem, namespace,
 * controller, submission and completion queue, request), the transport
 * operations, and the functions each file exports to the others.
 *
 * Lifetimes: a controller is created by the admin queue's Connect and
 * referenced by each submission queue bound to it (kref); the transport
 * owns its queues and drops the controller reference when a queue is
 * released.  A subsystem is referenced by the target while it is
 * configured and by each of its controllers (kref): a reload that removes
 * it frees it when its last controller goes.  A namespace is referenced by
 * its subsystem's slot and by each admin lookup that found it
 * (nvmet_find_get_ns()); a command finds it in its queue's view of the
 * slots (struct nvmet_ns_cache) and counts itself there, or, when no view
 * is ready, takes a reference (dropped by nvmet_req_uninit()).  Removing
 * it waits (bounded) first for the views older than the removal to have
 * no users (nvmet_subsys_ns_sync()), then for the references, as the
 * kernel's nvmet_ns_disable() waits for its percpu_ref.
 *
 * Locking: ctrl->lock protects the controller's registers, its queue table,
 * its asynchronous events and its changed-namespace list; subsys->lock its
 * controller list; subsys->ns_lock its namespace slots, their generation
 * and the queues' view fills; tgt->lock what a
 * reload changes besides: the subsystem list, each port's subsystem links
 * and each subsystem's allowed hosts (taken before subsys->lock).  A
 * request belongs to one thread at a time (the queue's CQ thread, or the
 * work queue for asynchronous events).
 */
#ifndef RDMARW_NVMET_INT_H
#define RDMARW_NVMET_INT_H

#include <rdmarw/atomic.h>
#include <rdmarw/completion.h>
#include <rdmarw/kernel.h>
#include <rdmarw/kref.h>
#include <rdmarw/list.h>
#include <rdmarw/mutex.h>
#include <rdmarw/scatterlist.h>
#include <rdmarw/spinlock.h>
#include <rdmarw/workqueue.h>

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "auth.h"
#include "nvme_proto.h"
#include "nvmet.h"

#define NVMET_ASYNC_EVENTS 4 /* AERs a controller holds (aerl + 1) */
#define NVMET_KAS 10 /* keep alive granularity, 100 ms units */
#define NVMET_DEFAULT_KATO_S 5 /* Identify kas and the spec's default */
#define NVMET_MAX_CNTLID 0xffef
/* ctrl->nr_changed_ns: the list overflowed (the log's first entry all 1s) */
#define NVMET_CHANGED_NS_OVERFLOW 0xffffffffu
/* How long removing a namespace waits for the requests that use it. */
#define NVMET_NS_DRAIN_MS 30000
#define NVMET_DISC_KATO_MS 120000 /* discovery controllers without one */
#define NVMET_MAX_INLINE_DATA 16384
#define NVMET_DEFAULT_INLINE_DATA 4096
#define NVMET_DEFAULT_MDTS 8 /* 256 pages of 4 KiB */
#define NVMET_MAX_SG_PAGES (1u << NVMET_DEFAULT_MDTS)
/* Admission defaults (struct nvmet_target_opts): see docs/deviations.md. */
#define NVMET_DEFAULT_CONNECT_TIMEOUT_MS 10000
#define NVMET_DEFAULT_MAX_UNADMITTED 512
#define NVMET_DEFAULT_MAX_UNADMITTED_PER_ADDR 160
/* Data-buffer bytes per I/O queue entry (struct nvmet_rdma_pool). */
#define NVMET_DEFAULT_DATA_BUF (128u * 1024)

#ifndef ALIGN
#define ALIGN(x, a) (((x) + (a)-1) / (a) * (a))
#endif

/* ---- logging ------------------------------------------------------------- */

#include "log.h"

extern bool nvmet_verbose;

/* log.c: "<6>" / "<3>" before the line when standard error is the journal */
#define nvmet_log(fmt, ...)                                         \
	do {                                                        \
		if (nvmet_verbose)                                  \
			nvmet_printk(NVMET_LOG_INFO, "nvmet: " fmt, \
				     ##__VA_ARGS__);                \
	} while (0)
#define nvmet_err(fmt, ...) \
	nvmet_printk(NVMET_LOG_ERR, "rdmarw-nvmet: " fmt, ##__VA_ARGS__)

/* ---- backends -------------------------------------------------------------- */

struct nvmet_ns;

/* What a struct nvmet_backend_io asks for. */
enum nvmet_io_op {
	NVMET_IO_READ,
	NVMET_IO_WRITE,
	NVMET_IO_FLUSH,
	NVMET_IO_READ_ZCOPY, /* hand out the namespace's own bytes (@zcopy) */
};

/**
 * struct nvmet_backend_io - one I/O handed to a backend's @submit
 * @op: read, write, flush, or a read without a copy
 * @buf: the data (read: filled; write: copied out); page aligned when it
 *       is the transport's data pool, anywhere in a receive buffer when the
 *       data came in the capsule; NVMET_IO_READ_ZCOPY: NULL, and set by
 *       the backend to the namespace's own @len bytes at @off (valid, and
 *       to be only read, while the submitter holds its namespace
 *       reference)
 * @len: bytes (a whole number of blocks; 0 for a flush)
 * @off: byte offset in the namespace (checked by io-cmd.c: within it)
 * @done: called exactly once when the I/O is over, with 0 or -errno, on
 *        the submitting thread before @submit returns (synchronous
 *        backends) or later on another (io_uring's reaper, the test delay)
 * @resid: the backend's: bytes already moved (a continued short transfer)
 * @next: the backend's: a list it keeps the I/O on while it holds it
 * @bounce: the backend's: an aligned copy of @buf (O_DIRECT)
 * @state: the backend's: a release/acquire hand-off between the thread
 *         that submits and the one that completes (what the kernel's ring
 *         orders is invisible to ThreadSanitizer)
 *
 * It lives in struct nvmet_req: a backend allocates nothing per I/O.
 */
struct nvmet_backend_io {
	enum nvmet_io_op op;
	void *buf;
	u64 len;
	u64 off;
	void (*done)(struct nvmet_backend_io *io, int err);
	u64 resid;
	struct nvmet_backend_io *next;
	void *bounce;
	int state;
};

/**
 * struct nvmet_backend_ops - how a namespace's data is stored
 * @name: "ram", "file", "bdev"
 * @open: set ns->size (bytes) and whatever the backend keeps
 * @close: release it (no I/O is in flight: each holds a namespace
 *         reference)
 * @submit: start @io; 0 when it was taken (@io->done is then called once,
 *          maybe before @submit returns), or -errno when it was not (and
 *          @io->done is not called)
 * @poll: optional: reap what has completed without sleeping, calling each
 *        one's @done on the caller's thread; returns how many (io_uring:
 *        the caller's own ring of the namespace).  For a transport thread
 *        that polls (a poll group): not called today, each asynchronous
 *        backend reaps on its own threads and after its own submissions
 * @unplug: optional: submit what @submit held back for the caller's plug
 *          (nvmet_plug_defer()), at the end of the plug's batch
 * @zcopy: @submit takes NVMET_IO_READ_ZCOPY: the namespace's data is
 *         memory of this process that stays put while the namespace is
 *         open (SPDK's spdk_bdev_zcopy_start() for reads; RAM, and a
 *         tmpfs file while it is mapped: nvmet_ns_zcopy())
 * @write_zeroes: zero a range, synchronously (NULL: not supported)
 * @discard: deallocate a range, synchronously (NULL: not supported)
 */
struct nvmet_backend_ops {
	const char *name;
	int (*open)(struct nvmet_ns *ns, const struct nvmet_ns_opts *o);
	void (*close)(struct nvmet_ns *ns);
	int (*submit)(struct nvmet_ns *ns, struct nvmet_backend_io *io);
	int (*poll)(struct nvmet_ns *ns);
	void (*unplug)(struct nvmet_ns *ns);
	int (*write_zeroes)(struct nvmet_ns *ns, u64 len, u64 off);
	int (*discard)(struct nvmet_ns *ns, u64 len, u64 off);
	bool zcopy;
};

/*
 * The plug (the kernel's struct blk_plug, blk_start_plug() and
 * blk_finish_plug()): a thread that runs a batch of commands (a CQ
 * thread's poll pass, a poll group's turn) starts a plug on its stack and
 * finishes it when the batch ends; in between a backend may hold its
 * submissions back (nvmet_plug_defer()) and the finish hands each
 * namespace that did to its @unplug once.  A backend that is about to
 * wait flushes the plug first (nvmet_plug_flush(), as the kernel's
 * schedule() flushes the task's plug), so no command waits unsubmitted.
 * The transport says only where a batch begins and ends; what to hold
 * back and when to submit stays in the backend.
 */
#define NVMET_PLUG_NS 8 /* namespaces one plug holds back at once */

/**
 * struct nvmet_plug - one thread's batch of backend submissions
 * @ns: the namespaces holding submissions back for this plug
 * @nr: how many of @ns
 */
struct nvmet_plug {
	struct nvmet_ns *ns[NVMET_PLUG_NS];
	unsigned int nr;
};

void nvmet_plug_start(struct nvmet_plug *plug);
void nvmet_plug_finish(struct nvmet_plug *plug);
bool nvmet_plug_defer(struct nvmet_ns *ns);
void nvmet_plug_flush(void);
void nvmet_plug_cq_hooks(void);

/*
 * src/core/cq.c (librdmarw's, linked statically): called by every CQ
 * thread before and after each poll pass (docs/deviations.md).
 */
void rdmarw__cq_set_batch_hooks(void (*begin)(void), void (*end)(void));

/* backend-uring.c (with liburing: RDMARW_HAVE_URING) */
int nvmet_uring_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o);
void nvmet_uring_close(struct nvmet_ns *ns);
bool nvmet_uring_direct(const struct nvmet_ns *ns);
int nvmet_uring_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io);
int nvmet_uring_poll(struct nvmet_ns *ns);
void nvmet_uring_counts(struct nvmet_ns *ns, u64 out[3]);
void nvmet_uring_unplug(struct nvmet_ns *ns);

/**
 * struct nvmet_uring_stats - what a namespace's rings' submission sides did
 * (tests)
 * @sqes: SQEs put on the ring (I/Os, continuations, retries)
 * @submits: io_uring_submit() calls that had SQEs to hand over
 * @batches: plugs that ended with SQEs of this ring held back
 * @unplugged: SQEs submitted at once, from a thread without a plug
 * @full: early submissions inside a plug (the ring or the plug's share
 *        of it full, or the thread about to wait)
 * @inline_ios: Reads (and tmpfs Writes) done on the submitter's thread
 *              without the ring
 * @rings: rings of the namespace's own for submitting threads (one per
 *         thread that submitted to it; the shared ring is not counted)
 * @fallbacks: submitting threads that share the namespace's ring instead
 *             (no slot, or their ring could not be made)
 *
 * The counters are the sums over the namespace's rings.
 */
struct nvmet_uring_stats {
	u64 sqes;
	u64 submits;
	u64 batches;
	u64 unplugged;
	u64 full;
	u64 inline_ios;
	u32 rings;
	u32 fallbacks;
};

void nvmet_uring_stats(struct nvmet_ns *ns, struct nvmet_uring_stats *st);

/* ---- statistics (stats.c) ---------------------------------------------------- */

/* The statuses counted one by one; every other under NVMET_SST_OTHER. */
enum nvmet_stat_status {
	NVMET_SST_INVALID_OPCODE,
	NVMET_SST_INVALID_FIELD,
	NVMET_SST_INTERNAL,
	NVMET_SST_INVALID_NS,
	NVMET_SST_CMD_SEQ_ERROR,
	NVMET_SST_SGL_INVALID,
	NVMET_SST_NS_WRITE_PROTECTED,
	NVMET_SST_LBA_RANGE,
	NVMET_SST_CAP_EXCEEDED,
	NVMET_SST_ASYNC_LIMIT,
	NVMET_SST_WRITE_FAULT,
	NVMET_SST_READ_ERROR,
	NVMET_SST_AUTH_REQUIRED,
	NVMET_SST_OTHER,
	NVMET_SST_NR,
};

/*
 * The counters of one queue (and, summed, of a namespace, a controller, a
 * subsystem).  A queue's are its own: only the threads that complete its
 * requests add to them (its CQ thread, the work queue for AERs), with
 * relaxed atomic adds on its own cache lines; readers sum them with
 * relaxed loads (each counter exact, the set a moment's snapshot).
 */
struct nvmet_io_stats {
	u64 read_ops;
	u64 write_ops;
	u64 flush_ops;
	u64 other_ops; /* other I/O commands (Write Zeroes, DSM, ...) */
	u64 admin_ops; /* admin commands, fabrics commands on any queue */
	u64 bytes_read;
	u64 bytes_written;
	u64 data_waits;
	u64 errors[NVMET_SST_NR];
};

/* ---- objects ---------------------------------------------------------------- */

struct nvmet_ns {
	u32 nsid;
	int ref; /* the slot's and the requests' (atomic) */
	struct completion released; /* @ref reached 0 */
	struct nvmet_ns_opts opts; /* as configured; .path is @path */
	char *path; /* owned */
	u64 size; /* bytes, a whole number of blocks */
	u8 blksize_shift;
	bool readonly;
	u8 nguid[16];
	u8 uuid[16];
	u8 eui64[8];
	const struct nvmet_backend_ops *ops;
	int fd; /* file and bdev */
	void *ram; /* ram; a tmpfs file's shared mapping (nvmet_ns_mapped()) */
	/*
	 * @mapped (atomic): the bytes are memory of this process: RAM (from
	 * open), a mapped tmpfs file (backend.c) while its lease holds (off
	 * at a break, on again when the watcher takes the lease back);
	 * @fd_ops what serves it otherwise (the file's ops, io_uring or
	 * synchronous); @map its lease watcher.  @subsys (atomic) the
	 * subsystem whose slot holds it, set with the slot (NULL until then):
	 * the lease's break waits for the commands its queues' views hold
	 * (nvmet_subsys_ns_sync()).
	 */
	bool mapped;
	const struct nvmet_backend_ops *fd_ops;
	struct nvmet_ns_map *map;
	struct nvmet_subsys *subsys;
	struct nvmet_uring *uring; /* file, bdev: io_uring's (NULL: none) */
	struct nvmet_ns_delay *delay; /* opts.test_delay_ms, test_errno */
};

/*
 * Whether @ns is served as memory: a RAM namespace always; a tmpfs file
 * namespace served from a shared mapping of the file (backend.c, "a tmpfs
 * file mapped") while its write lease holds: Reads and Writes are memcpy
 * (Reads may name the mapping's bytes); a break of the lease (someone
 * else opens or truncates the file) turns @ns->mapped off, and the fd
 * serves until the watcher takes the lease again (no one else has the
 * file open then).
 */
static inline bool nvmet_ns_mapped(const struct nvmet_ns *ns)
{
	return __atomic_load_n(&ns->mapped, __ATOMIC_ACQUIRE);
}

/*
 * Reads of @ns may name its own bytes (NVMET_IO_READ_ZCOPY): its bytes
 * are memory of this process, @ns->mapped (RAM always, set at open; a
 * tmpfs file until its lease breaks; the backend's ops->zcopy then).  A
 * command that saw it true holds @ns in a view or by reference, so the
 * lease's break waits for it to end.
 */
static inline bool nvmet_ns_zcopy(const struct nvmet_ns *ns)
{
	return nvmet_ns_mapped(ns);
}

enum nvmet_subsys_type {
	NVMET_SUBSYS_NVME,
	NVMET_SUBSYS_DISC,
};

struct nvmet_subsys {
	struct nvmet_target *tgt;
	struct list_head entry; /* tgt->subsystems */
	enum nvmet_subsys_type type;
	char subsysnqn[NVMF_NQN_FIELD_LEN];
	char serial[21];
	char model[41];
	struct nvmet_ns *ns[NVMET_MAX_NAMESPACES];
	u32 max_nsid;
	u16 max_qid; /* I/O queues a controller may have */
	bool allow_any_host;
	char (*hosts)[NVMF_NQN_FIELD_LEN]; /* the allowed host NQNs */
	u32 nr_hosts;
	struct mutex lock;
	struct list_head ctrls;
	struct kref ref; /* the target's while configured, each controller's */
	spinlock_t ns_lock; /* @ns, @ns_gen's changes, @ns_caches */
	/*
	 * Moved at every change of @ns (atomic; 1 at the start): what a
	 * queue's view of @ns was read at (struct nvmet_ns_cache).
	 */
	u64 ns_gen;
	struct list_head ns_caches; /* of the queues that hold a view */
	/* counters of the queues gone (@lock) */
	struct nvmet_io_stats retired;
	struct nvmet_io_stats retired_ns[NVMET_MAX_NAMESPACES];
	u64 kato_expired; /* atomic */
};

struct nvmet_port {
	struct nvmet_target *tgt;
	struct list_head entry; /* tgt->ports */
	struct nvmet_subsys **subsys; /* reached through this port */
	u32 nr_subsys;
	char *device; /* the device the address must be on, or NULL */
	const struct nvmet_fabrics_ops *tr_ops; /* set while it is enabled */
	u8 trtype; /* NVMF_TRTYPE_*: picks tr_ops */
	struct sockaddr_storage addr;
	u8 adrfam;
	u16 portid;
	char traddr[NVMF_TRADDR_SIZE];
	char trsvcid[NVMF_TRSVCID_SIZE];
	u32 inline_data_size;
	u32 max_queue_size;
	u8 mdts_max;
	u32 data_buf_pages; /* pool pages per I/O queue entry */
	void *priv; /* the transport's listener */
};

struct nvmet_cq {
	u16 qid;
	u16 size;
};

/*
 * A host that must authenticate (struct nvmet_host_opts, checked and
 * copied; the keys are wiped when the target is freed).
 */
struct nvmet_host_auth {
	char nqn[NVMF_NQN_FIELD_LEN];
	char *key;
	char *ctrl_key; /* NULL: none */
	u8 hash_id;
	u8 dhgroup_id;
};

/* Transactions (Negotiates) one queue may start: re-authentication. */
#define NVMET_AUTH_MAX_TRANSACTIONS 16

/*
 * A queue's share of the target-wide command counters (the kernel's
 * percpu_counter shape): written by the queue's own threads only (relaxed
 * atomic adds on the queue's cache lines), summed with the counts of the
 * queues gone when read (nvmet_qcount_sum()).
 */
struct nvmet_qcount {
	u64 cmds; /* commands received */
	u64 inflight; /* requests taken and not yet released */
	struct list_head entry; /* tgt->qcounts, under tgt->qc_lock */
};

/*
 * A queue's copy of its subsystem's namespace table, read at one @gen of
 * nvmet_subsys.ns_gen (0: being filled, or never).  It holds no
 * reference: a request that found its namespace here counts itself in
 * @users instead of in the namespace's count, and the removal of a
 * namespace waits until no view older than the removal has users
 * (nvmet_subsys_ns_sync()).  Every field is atomic.
 */
struct nvmet_ns_view {
	u64 gen;
	u32 users;
	struct nvmet_ns *ns[NVMET_MAX_NAMESPACES];
};

/*
 * Two views per queue (core.c, "namespaces"): new requests take
 * view[@cur]; after a change of the table the other one is filled (when
 * its requests are gone) and becomes current, while the requests of the
 * old one end.  Filled under the subsystem's ns_lock; read without a
 * lock.  Listed in @subsys->ns_caches from the first fill to
 * nvmet_sq_destroy().
 */
struct nvmet_ns_cache {
	struct nvmet_ns_view view[2];
	u32 cur; /* atomic */
	struct nvmet_subsys *subsys; /* listed there (NULL: not listed) */
	struct list_head entry; /* subsys->ns_caches */
};

struct nvmet_sq {
	struct nvmet_ctrl *ctrl;
	u16 qid;
	u16 size;
	u32 sqhd;
	bool sqhd_disabled;
	bool dead; /* no new requests */
	struct nvmet_qcount count; /* nvmet_qcount_add() lists it */
	/* DH-HMAC-CHAP (fabrics-cmd-auth.c): the queue's CQ thread only */
	struct nvme_auth_ctrl *auth; /* NULL: no authentication */
	bool auth_ready; /* @auth set up (the first AUTH command) */
	bool authenticated;
	u32 auth_transactions;
	struct nvmet_ns_cache nsc; /* the namespace lookup's (core.c) */
	/*
	 * counters (stats.c): a command counts on one of these lines, the
	 * queue's own or its namespace's (nvmet_req_stats())
	 */
	struct nvmet_io_stats st;
	struct nvmet_io_stats ns_st[NVMET_MAX_NAMESPACES];
	/*
	 * The transaction timer (the kernel's auth_expired_work): armed by
	 * the Connect that asks for authentication and by each AUTH_Send
	 * that leaves the transaction open, it tears the controller down
	 * when it expires with @auth_open set.
	 */
	struct delayed_work auth_expired_work;
	bool auth_timer; /* @auth_expired_work initialized */
	bool auth_open; /* a transaction is under way (or due) */
};

struct nvmet_req;

/**
 * struct nvmet_fabrics_ops - what the core needs from a transport (the
 * kernel's, with the hooks this target uses)
 * @owner_name: the transport's name ("rdma")
 * @type: NVMF_TRTYPE_* (the registry's key, a port's trtype)
 * @msdbd: SGL data block descriptors per command
 * @add_port: listen on @port (0 or -errno); port->priv is the transport's
 * @remove_port: stop listening on @port, disconnect every queue that came
 *               through it and wait (bounded) until they are released; 0,
 *               or -EBUSY when some were not (@port and its target must
 *               then not be freed).  The kernel's returns nothing and
 *               leaves the queues to the controllers' teardown.
 * @install_queue: a Connect named a live controller (or made one) for
 *                 @sq: set up what the queue needs beyond the Connect
 *                 (0 or a status: the Connect fails with it)
 * @queue_response: send @req's completion (and its data to the host)
 * @delete_ctrl: disconnect every queue of @ctrl (it is being torn down)
 * @get_mdts: the MDTS the transport can serve for @ctrl
 * @poll_hook: run @fn(@arg) once per pass of poll group @group of @port,
 *             after its sweep, from its thread (NULL: none); returns once
 *             the old one is no longer run (0 or -errno)
 */
struct nvmet_fabrics_ops {
	const char *owner_name;
	u8 type;
	u8 msdbd;
	int (*add_port)(struct nvmet_port *port);
	int (*remove_port)(struct nvmet_port *port);
	u16 (*install_queue)(struct nvmet_sq *sq);
	void (*queue_response)(struct nvmet_req *req);
	void (*delete_ctrl)(struct nvmet_ctrl *ctrl);
	u8 (*get_mdts)(const struct nvmet_ctrl *ctrl);
	int (*poll_hook)(struct nvmet_port *port, u32 group,
			 int (*fn)(void *arg), void *arg);
};

struct nvmet_async_event {
	struct list_head entry;
	u8 event_type;
	u8 event_info;
	u8 log_page;
};

struct nvmet_ctrl {
	struct nvmet_subsys *subsys;
	struct nvmet_port *port;
	const struct nvmet_fabrics_ops *ops;
	struct list_head subsys_entry;
	struct kref ref;
	u16 cntlid;
	u32 kato; /* seconds; 0: none */
	u64 cap;
	u32 cc;
	u32 csts;
	u32 aen_enabled;
	u32 aen_masked;
	u16 max_qid; /* granted I/O queues */
	struct mutex lock;
	struct nvmet_sq **sqs; /* [0 .. max_qid] */
	struct nvmet_req *async_event_cmds[NVMET_ASYNC_EVENTS];
	u32 nr_async_event_cmds;
	struct list_head async_events;
	struct work_struct async_event_work;
	struct delayed_work ka_work;
	bool reset_tbkas;
	bool fatal;
	bool freeing; /* the last reference is gone: no timer re-arms */
	struct work_struct fatal_err_work;
	char hostnqn[NVMF_NQN_FIELD_LEN];
	u8 hostid[16];
	const struct nvmet_host_auth *host_auth; /* NULL: no authentication */
	u32 err_counter;
	u64 disc_genctr;
	/* the Changed Namespace List log (ctrl->lock) */
	u32 changed_ns[NVMET_MAX_NAMESPACES];
	u32 nr_changed_ns; /* U32_MAX: more changed than the list holds */
	struct nvmet_io_stats retired; /* of its queues gone (ctrl->lock) */
};

struct nvmet_req {
	struct nvme_command *cmd;
	struct nvme_completion *cqe;
	struct nvmet_sq *sq;
	struct nvmet_cq *cq;
	struct nvmet_ns *ns;
	u32 *ns_users; /* @ns from a view: its users; NULL: a reference */
	struct nvmet_port *port;
	const struct nvmet_fabrics_ops *ops;
	void (*execute)(struct nvmet_req *req);
	/* the data: @buf, @data_len bytes, the transport's */
	void *buf;
	u32 data_len; /* from the SGL */
	u32 transfer_len; /* what the command moves */
	u16 error_loc;
	bool data_to_host; /* the transport sends @buf before the CQE */
	/*
	 * A Read whose data the transport sends from the namespace itself
	 * (nvmet_req_zcopy_read()): set by the transport before execute,
	 * with no buffer; @buf is the namespace's memory once it succeeded.
	 */
	bool zcopy;
	struct nvmet_backend_io io; /* Read, Write, Flush (io-cmd.c) */
	/* tear the controller down once the CQE is sent (auth failure) */
	bool fatal_after_send;
};

/* ---- the target ---------------------------------------------------------------- */

/*
 * The target: its subsystems and ports, set up by nvmet_target_create()
 * and changed only by nvmet_target_reload() (under @lock, see the
 * locking rules above; @reload_lock serializes reloads).  opts keeps the
 * scalar options; its pointers are cleared.
 */
struct nvmet_target {
	struct nvmet_target_opts opts;
	struct list_head ports; /* struct nvmet_port */
	struct list_head subsystems; /* the NVM subsystems */
	struct nvmet_subsys *disc; /* the discovery subsystem */
	struct workqueue_struct *wq; /* teardown, keep alive, events */
	struct mutex lock;
	struct mutex reload_lock;
	u64 reloads; /* applied (@lock): the discovery log's genctr */
	u16 next_cntlid;
	struct nvmet_host_auth *auth_hosts; /* DH-HMAC-CHAP hosts */
	u32 nr_auth_hosts;
	/* the queues' command counters (struct nvmet_qcount) */
	spinlock_t qc_lock;
	struct list_head qcounts;
	u64 cmds; /* of the queues gone (@qc_lock) */
	u64 reqs_inflight; /* of the queues gone (@qc_lock) */
	/* counters (nvmet_stat_add()), none written per command */
	u64 ctrls_created;
	u64 ctrls;
	u64 errors; /* per failed command only */
	u64 kato_expired;
	u64 rejects;
	u64 queues_created;
	u64 queues;
	u64 data_waits;
	u64 unadmitted; /* queues waiting for their Connect */
	u64 connect_timeouts;
	u64 buf_bytes; /* queues' receive buffers, slots, pools */
	u64 pool_bytes; /* ... of which data-buffer pools */
	u64 poll_sleeps; /* poll groups (rdma.c): on the idle path only */
	u64 poll_wakeups;
	u64 poll_asleep;
	u64 poll_members;
	u8 mdts;
};

/*
 * Counters; release on update and acquire on read, so that whoever sees
 * a queue counted out also sees everything its release did (a test that
 * then destroys the device, for one).
 */
#define nvmet_stat_add(x, n) __atomic_fetch_add(&(x), (n), __ATOMIC_ACQ_REL)
#define nvmet_stat_read(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)

/* ---- core.c ---------------------------------------------------------------- */

bool nvmet_req_init(struct nvmet_req *req, struct nvmet_cq *cq,
		    struct nvmet_sq *sq, const struct nvmet_fabrics_ops *ops);
void nvmet_req_uninit(struct nvmet_req *req);
void nvmet_req_complete(struct nvmet_req *req, u16 status);
bool nvmet_check_transfer_len(struct nvmet_req *req, u32 len);
bool nvmet_check_data_len_lte(struct nvmet_req *req, u32 len);
u16 nvmet_copy_to_req(struct nvmet_req *req, u32 off, const void *buf, u32 len);
u16 nvmet_copy_from_req(struct nvmet_req *req, u32 off, void *buf, u32 len);
u16 nvmet_zero_req(struct nvmet_req *req, u32 off, u32 len);

void nvmet_sq_init(struct nvmet_sq *sq);
void nvmet_sq_destroy(struct nvmet_sq *sq);
void nvmet_cq_setup(struct nvmet_ctrl *ctrl, struct nvmet_cq *cq, u16 qid,
		    u16 size);
void nvmet_sq_setup(struct nvmet_ctrl *ctrl, struct nvmet_sq *sq, u16 qid,
		    u16 size);

u16 nvmet_alloc_ctrl(struct nvmet_target *t, const struct nvmf_connect_data *d,
		     struct nvmet_req *req, u32 kato,
		     struct nvmet_ctrl **ctrlp);
u16 nvmet_ctrl_find_get(struct nvmet_target *t,
			const struct nvmf_connect_data *d,
			struct nvmet_req *req, struct nvmet_ctrl **ret);
void nvmet_ctrl_put(struct nvmet_ctrl *ctrl);
void nvmet_ctrl_fatal_error(struct nvmet_ctrl *ctrl);
u16 nvmet_check_ctrl_status(struct nvmet_req *req);
void nvmet_update_cc(struct nvmet_ctrl *ctrl, u32 new);
void nvmet_start_keep_alive_timer(struct nvmet_ctrl *ctrl);
void nvmet_stop_keep_alive_timer(struct nvmet_ctrl *ctrl);
void nvmet_add_async_event(struct nvmet_ctrl *ctrl, u8 event_type,
			   u8 event_info, u8 log_page);
void nvmet_async_events_failall(struct nvmet_ctrl *ctrl);
u16 nvmet_set_feat_kato(struct nvmet_req *req);
u16 nvmet_set_feat_async_event(struct nvmet_req *req, u32 mask);
void nvmet_get_feat_kato(struct nvmet_req *req);
void nvmet_get_feat_async_event(struct nvmet_req *req);
struct nvmet_ns *nvmet_find_get_ns(struct nvmet_subsys *subsys, u32 nsid);
void nvmet_put_namespace(struct nvmet_ns *ns);
u16 nvmet_req_find_ns(struct nvmet_req *req);
int nvmet_subsys_ns_sync(struct nvmet_subsys *subsys, unsigned int ms);
void nvmet_subsys_ns_changed(struct nvmet_subsys *subsys, u32 nsid);
void nvmet_subsys_put(struct nvmet_subsys *subsys);
void nvmet_set_result(struct nvmet_req *req, u32 result);
u8 nvmet_ctrl_mdts(const struct nvmet_ctrl *ctrl);
u32 nvmet_max_data_len(struct nvmet_req *req);
bool nvmet_subsys_is_disc(const struct nvmet_subsys *s);
bool nvmet_host_allowed(const struct nvmet_subsys *subsys, const char *hostnqn);

/* ---- target.c (what reload.c builds a new configuration with) ------------------- */

void nvmet_quick_subsys(const struct nvmet_target_opts *o,
			struct nvmet_subsys_opts *s);
void nvmet_quick_port(const struct nvmet_target_opts *o,
		      struct nvmet_port_opts *p);
const struct nvmet_subsys_opts *
nvmet_subsys_opts_of(const struct nvmet_target_opts *o,
		     const struct nvmet_subsys_opts *quick, u32 i);
int nvmet_check_opts(const struct nvmet_target_opts *o,
		     const struct nvmet_subsys_opts *quick);
struct nvmet_ns *nvmet_ns_create(const char *nqn, u32 nsid,
				 const struct nvmet_ns_opts *o, int *err);
void nvmet_ns_release(struct nvmet_ns *ns);
int nvmet_hosts_dup(const struct nvmet_subsys_opts *so,
		    char (**hosts)[NVMF_NQN_FIELD_LEN]);
struct nvmet_subsys *nvmet_subsys_build(struct nvmet_target *t,
					const struct nvmet_subsys_opts *so,
					int *err);
struct nvmet_subsys *nvmet_subsys_by_nqn(struct nvmet_target *t,
					 const char *nqn);
u32 nvmet_port_fill_links(struct nvmet_target *t,
			  const struct nvmet_port_opts *po,
			  struct nvmet_subsys **arr);
struct nvmet_port *nvmet_port_build(struct nvmet_target *t,
				    const struct nvmet_port_opts *po,
				    u16 portid, int *err);
void nvmet_port_free(struct nvmet_port *port);

/* ---- fabrics-cmd.c -------------------------------------------------------------- */

u16 nvmet_parse_connect_cmd(struct nvmet_req *req);
u16 nvmet_parse_fabrics_admin_cmd(struct nvmet_req *req);
u16 nvmet_parse_fabrics_io_cmd(struct nvmet_req *req);

/* ---- fabrics-cmd-auth.c ---------------------------------------------------------- */

int nvmet_auth_hosts_setup(struct nvmet_target *t,
			   const struct nvmet_target_opts *o);
void nvmet_auth_hosts_free(struct nvmet_target *t);
const struct nvmet_host_auth *nvmet_auth_host_find(const struct nvmet_target *t,
						   const char *hostnqn);
u16 nvmet_auth_sq_setup(struct nvmet_req *req, struct nvmet_ctrl *ctrl,
			const struct nvmf_connect_data *d, u32 *result);
void nvmet_auth_sq_free(struct nvmet_sq *sq);
bool nvmet_check_auth_status(struct nvmet_req *req);
void nvmet_execute_auth_send(struct nvmet_req *req);
void nvmet_execute_auth_receive(struct nvmet_req *req);

/* ---- admin-cmd.c ------------------------------------------------------------------ */

u16 nvmet_parse_admin_cmd(struct nvmet_req *req);
void nvmet_execute_keep_alive(struct nvmet_req *req);
void nvmet_execute_async_event(struct nvmet_req *req);
void nvmet_execute_set_features_common(struct nvmet_req *req);
void nvmet_execute_get_features(struct nvmet_req *req);
void nvmet_id_ctrl_common(struct nvmet_ctrl *ctrl, struct nvme_id_ctrl *id);
u32 nvmet_get_log_page_len(struct nvme_command *cmd);
u16 nvmet_copy_log(struct nvmet_req *req, const void *buf, u32 len);

/* ---- discovery.c ------------------------------------------------------------------- */

u16 nvmet_parse_discovery_cmd(struct nvmet_req *req);

/* ---- io-cmd.c ------------------------------------------------------------------------ */

u16 nvmet_parse_io_cmd(struct nvmet_req *req);
bool nvmet_req_zcopy_read(const struct nvmet_req *req);

/* ---- backend.c ------------------------------------------------------------------------- */

int nvmet_ns_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o);
void nvmet_ns_close(struct nvmet_ns *ns);
void nvmet_ns_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io);
unsigned int nvmet_ns_delay_held(struct nvmet_ns *ns);
void nvmet_ns_delay_release(struct nvmet_ns *ns, unsigned int n);
int nvmet_ns_lease_counts(struct nvmet_ns *ns, u64 *takes, u64 *breaks);

/* ---- stats.c ------------------------------------------------------------------------------- */

void nvmet_stats_req_done(struct nvmet_req *req, u16 status);
void nvmet_stats_add(struct nvmet_io_stats *to,
		     const struct nvmet_io_stats *from);
void nvmet_stats_sq_retire(struct nvmet_sq *sq);
void nvmet_stats_ctrl_retire(struct nvmet_ctrl *ctrl);
void nvmet_qcount_add(struct nvmet_target *t, struct nvmet_qcount *c);
void nvmet_qcount_del(struct nvmet_target *t, struct nvmet_qcount *c);
void nvmet_qcount_sum(struct nvmet_target *t, u64 *cmds, u64 *inflight);

/* A per-queue counter: its completing threads only, relaxed. */
#define nvmet_qstat_add(x, n) __atomic_fetch_add(&(x), (n), __ATOMIC_RELAXED)

/* Fabrics commands (Connect, AUTH) count with the admin ones. */
static inline bool nvmet_req_admin(const struct nvmet_req *req)
{
	return req->sq->qid == 0 ||
	       req->cmd->common.opcode == nvme_fabrics_command;
}

/**
 * nvmet_req_stats() - the counters @req counts on
 * @req: a request of a queue
 *
 * Return: its queue's line of its namespace for an I/O command that
 * found one, else its queue's own line (struct nvmet_sq @ns_st, @st).
 * One line per command: a queue's figures are the sum of its lines
 * (nvmet_sq_stats() in stats.c), so a command is counted once, by one
 * atomic add per counter.
 */
static inline struct nvmet_io_stats *nvmet_req_stats(struct nvmet_req *req)
{
	if (req->ns && !nvmet_req_admin(req))
		return &req->sq->ns_st[req->ns->nsid - 1];
	return &req->sq->st;
}

/* ---- transports ---------------------------------------------------------------------------- */

/*
 * The transports the core's registry knows (core.c, nvmet_transports[]):
 * the kernel's register themselves from their module init with
 * nvmet_register_transport(); a static library has no module init, so the
 * table is the registry and the core reaches a transport only through
 * port->tr_ops.
 */
extern const struct nvmet_fabrics_ops nvmet_rdma_ops;

int nvmet_enable_port(struct nvmet_port *port);
int nvmet_disable_port(struct nvmet_port *port);

/* ---- helpers ---------------------------------------------------------------------------- */

/* Copy @src into a fixed-size field, space padded (Identify strings). */
static inline void nvmet_copy_padded(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len);

	memcpy(dst, src, n);
	memset(dst + n, ' ', len - n);
}

/* Copy @src into a fixed-size field, NUL padded and NUL terminated. */
static inline void nvmet_copy_nul(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	memset(dst + n, 0, len - n);
}

#endif /* RDMARW_NVMET_INT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An in-process NVMe over Fabrics host on RDMA, shaped as the kernel's
 * nvme-rdma (drivers/nvme/host/rdma.c) with the fabrics and core steps it
 * relies on (fabrics.c, core.c): one rdma_cm id and one RC QP per queue,
 * the admin queue first, a fast-registration MR per data command (keyed
 * SGL 0x4F, invalidated remotely by SEND_WITH_INVALIDATE or locally) or,
 * for data in a region registered once (nvmeh_buf_reg(), SPDK's shape),
 * the region's rkey (keyed SGL 0x40, nothing to invalidate), in-capsule
 * data for small writes on I/O queues, error recovery that tears every
 * queue down, fails what was outstanding and reconnects.
 *
 * Written against the public rdmarw API only: rdma_cm.h, the verbs and
 * MR pools under rw.h, and the kernel primitives (mutex, completion,
 * workqueue).  Used by the tests, the capsule fuzzer and bench-nvmet.
 *
 * Threads: nvmeh_submit() and the calls built on it may be made from any
 * thread, also several at once on one queue; completions call the
 * request's @done from the queue's CQ thread (its poller with @poll).
 * nvmeh_ctrl_destroy() must not race any other call on the controller.
 */
#ifndef RDMARW_NVME_HOST_H
#define RDMARW_NVME_HOST_H

#include <rdmarw/rdma_cm.h>

#include "nvme_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Admin queue depth, as the kernel's NVME_AQ_DEPTH. */
#define NVMEH_AQ_DEPTH NVME_AQ_DEPTH
/* The host NQN nvmeh_opts_init() sets (a target must allow it). */
#define NVMEH_DEFAULT_HOSTNQN \
	"nqn.2014-08.org.nvmexpress:uuid:8b5c2a64-6c5e-4d0e-9f0a-72646d617277"
/* Room for a DHHC-1 key string and its NUL. */
#define NVMEH_DHCHAP_SECRET_MAX 128

/* Slots past the depth that only NVMEH_RQ_OVERDEPTH requests may use. */
#define NVMEH_EXTRA_SLOTS 4

struct nvmeh_ctrl;

/**
 * struct nvmeh_opts - what to connect to and how
 * @src_addr: local address (selects the host's device)
 * @dst_addr: the target's address and port
 * @subsysnqn: subsystem NQN
 * @hostnqn: host NQN
 * @hostid: host identifier
 * @nr_io_queues: I/O queues wanted (0: admin queue only)
 * @queue_size: I/O queue depth wanted (1-based; 0 means 128)
 * @kato_ms: keep-alive timeout sent in the admin Connect (0: none)
 * @io_timeout_ms: a command not answered in this time starts error
 *                 recovery (0 means 5000)
 * @reconnect_delay_ms: between reconnect attempts (0 means 10)
 * @max_reconnects: attempts before the controller is declared dead (0
 *                  means 100)
 * @no_inline: never send write data in the capsule
 * @dhchap_secret: the host's DHHC-1 key, nvme connect's --dhchap-secret
 *                 ("": none); the host authenticates every queue whose
 *                 Connect result asks for it (AUTHREQ.ATR)
 * @dhchap_ctrl_secret: the controller's DHHC-1 key, --dhchap-ctrl-secret
 *                      ("": none): the controller must prove it holds it
 *                      on every queue (bidirectional), asked or not
 * @dhchap_skip: tests only: NVMEH_AUTH_SKIP_* bits, queues left
 *               unauthenticated although the target asks
 * @poll: each I/O queue's CQ is IB_POLL_DIRECT, polled by a thread of the
 *        queue's, which sleeps after @poll_idle_us without a completion
 *        (false: a CQ thread woken per completion; the admin queue always)
 * @poll_idle_us: see @poll (0: 50)
 * @poll_external: with @poll, no thread of the host's polls the I/O
 *                 queues: the caller does, with nvmeh_poll() (SPDK's
 *                 run-to-completion shape; bench-nvmet --one-thread);
 *                 nvmeh_exec() on such a queue polls it while it waits
 */
struct nvmeh_opts {
	struct sockaddr_storage src_addr;
	struct sockaddr_storage dst_addr;
	char subsysnqn[NVMF_NQN_FIELD_LEN];
	char hostnqn[NVMF_NQN_FIELD_LEN];
	u8 hostid[16];
	unsigned int nr_io_queues;
	unsigned int queue_size;
	unsigned int kato_ms;
	unsigned int io_timeout_ms;
	unsigned int reconnect_delay_ms;
	unsigned int max_reconnects;
	bool no_inline;
	char dhchap_secret[NVMEH_DHCHAP_SECRET_MAX];
	char dhchap_ctrl_secret[NVMEH_DHCHAP_SECRET_MAX];
	unsigned int dhchap_skip;
	bool poll;
	unsigned int poll_idle_us;
	bool poll_external;
};

/* struct nvmeh_opts.dhchap_skip: the admin queue, the I/O queues. */
#define NVMEH_AUTH_SKIP_ADMIN (1u << 0)
#define NVMEH_AUTH_SKIP_IO (1u << 1)

/**
 * enum nvmeh_rq_flags - how a request is sent
 * @NVMEH_RQ_RAW: send @raw/@raw_len as the capsule, untouched except for
 *                the command id (bytes 2-3, when the capsule has them);
 *                no data is mapped
 * @NVMEH_RQ_BAD_RKEY: register the data as usual, then send a wrong rkey
 * @NVMEH_RQ_OVERDEPTH: may use the slots past the queue depth (a host that
 *                      sends more commands than it announced)
 * @NVMEH_RQ_ASK_INV: with @buf (tests only): ask the target to invalidate
 *                    the region's rkey (keyed SGL subtype Fh), as a
 *                    hostile target would do unasked; the host must not
 *                    take that invalidation for its own.  Without @buf it
 *                    only keeps a write out of the capsule (a registration
 *                    per command asks for invalidation anyway)
 */
enum nvmeh_rq_flags {
	NVMEH_RQ_RAW = 1 << 0,
	NVMEH_RQ_BAD_RKEY = 1 << 1,
	NVMEH_RQ_OVERDEPTH = 1 << 2,
	NVMEH_RQ_ASK_INV = 1 << 3,
};

struct nvmeh_buf;

/**
 * struct nvmeh_request - one command, owned by the caller until @done
 * @sqe: the command; the host fills the command id, PSDT and data pointer
 * @data: data buffer or NULL
 * @data_len: its length in bytes
 * @write: true when @data goes to the controller
 * @buf: NULL, or the region (nvmeh_buf_reg()) @data lies in: the command
 *       then carries the region's rkey on its queue and is neither
 *       registered nor invalidated on its own
 * @flags: enum nvmeh_rq_flags
 * @raw: capsule bytes for %NVMEH_RQ_RAW
 * @raw_len: their count (1 to the capsule size)
 * @done: called once, from a completion thread (or from the thread that
 *        tore the queue down); may submit again
 * @priv: the caller's
 * @error: 0 when the controller answered; -ECONNABORTED when the queue
 *         went down first, -ETIMEDOUT never (a timeout tears the queue down)
 * @status: the CQE's status field (bits 15:1), or NVME_SC_HOST_ABORTED_CMD
 * @result: the CQE's result (dwords 0 and 1)
 * @cid: the command id sent
 */
struct nvmeh_request {
	u8 sqe[sizeof(struct nvme_command)];
	void *data;
	u32 data_len;
	bool write;
	struct nvmeh_buf *buf;
	unsigned int flags;
	const void *raw;
	u32 raw_len;
	void (*done)(struct nvmeh_request *rq);
	void *priv;
	int error;
	u16 status;
	u64 result;
	u16 cid;
};

/**
 * struct nvmeh_info - what the controller said
 * @cntlid: controller id (from Connect)
 * @cap: CAP property
 * @vs: VS property
 * @nr_io_queues: I/O queues in use
 * @queue_size: I/O queue depth in use
 * @max_xfer: largest data transfer per command (MDTS and the MR limit)
 * @inline_max: largest in-capsule write (0: none)
 * @ns_lbas: namespace 1 size in blocks (0 when there is none)
 * @lba_size: namespace 1 block size
 * @id_ctrl: the Identify Controller data
 */
struct nvmeh_info {
	u16 cntlid;
	u64 cap;
	u32 vs;
	unsigned int nr_io_queues;
	unsigned int queue_size;
	u32 max_xfer;
	u32 inline_max;
	u64 ns_lbas;
	u32 lba_size;
	u8 id_ctrl[NVME_IDENTIFY_DATA_SIZE];
};

/**
 * struct nvmeh_stats - what happened to a controller
 * @resets: error recoveries started
 * @reconnects: reconnects that brought the controller back
 * @failed_connects: connect attempts that failed
 * @aborted: requests failed by a queue teardown
 * @local_invs: LOCAL_INV posted because the target did not invalidate
 * @remote_invs: completions that invalidated the MR (SEND_WITH_INVALIDATE)
 * @inline_writes: writes sent in-capsule
 * @bad_cqes: CQEs that matched no outstanding command
 * @bad_invs: responses that invalidated a key the command did not hand
 *            out for invalidation (none, or another MR's: a registered
 *            region's); each starts error recovery
 * @poll_sleeps: times a polled queue's thread slept, idle (nvmeh_opts.poll)
 */
struct nvmeh_stats {
	u64 resets;
	u64 reconnects;
	u64 failed_connects;
	u64 aborted;
	u64 local_invs;
	u64 remote_invs;
	u64 inline_writes;
	u64 bad_cqes;
	u64 bad_invs;
	u64 poll_sleeps;
};

/**
 * nvmeh_opts_init() - fill options with defaults
 * @o: the options
 * @src: local address (AF_INET or AF_INET6; copied)
 * @dst: the target's address and port (copied)
 * @subsysnqn: subsystem NQN (copied, truncated to 255 bytes)
 */
void nvmeh_opts_init(struct nvmeh_opts *o, const struct sockaddr *src,
		     const struct sockaddr *dst, const char *subsysnqn);

/**
 * nvmeh_ctrl_create() - connect to a controller and bring it live
 * @opts: options (copied)
 *
 * Connects the admin queue, reads CAP, enables the controller, identifies
 * it and namespace 1, sets the number of queues, starts keep-alive and
 * connects the I/O queues: the sequence of the Linux host.
 *
 * Return: the controller, or ERR_PTR(): -EINVAL for bad options (a
 * DHHC-1 key that does not parse, a controller key without a host key),
 * -ECONNREFUSED when the target rejected a queue or an authentication
 * failed other than by a key, -EKEYREJECTED when the target refused the
 * host's key or the controller did not prove the controller key, -ENOKEY
 * when the target asks for authentication and no key is set, -EREMOTEIO when a
 * command failed (nvmeh_last_status() says which status), -ETIMEDOUT,
 * -ENOMEM, a verbs or CM error.
 */
struct nvmeh_ctrl *nvmeh_ctrl_create(const struct nvmeh_opts *opts);

/**
 * nvmeh_last_status() - the NVMe status that made the last create fail
 * @reject: set to the CM reject status (sts) of the last rejected queue
 *          connect, 0 if none (may be NULL)
 *
 * Return: the status field, 0 if no command failed.
 */
u16 nvmeh_last_status(u16 *reject);

/**
 * nvmeh_last_result() - the result of the command nvmeh_last_status() names
 *
 * For a refused Connect, where the target points at the field it refused
 * (IATTR/IPO in dword 0).
 *
 * Return: dwords 0 and 1 of its completion (this thread's last create).
 */
u64 nvmeh_last_result(void);

/**
 * nvmeh_ctrl_reauth() - authenticate a live queue again (DH-HMAC-CHAP)
 * @ctrl: the controller (created with a dhchap_secret)
 * @qid: the queue
 *
 * A new transaction on the queue, as the kernel host's re-authentication;
 * the queue stays usable meanwhile.  A failure makes the target tear the
 * controller down (error recovery follows).
 *
 * Return: 0; -EINVAL without a key or for a bad queue; the errors of
 * nvmeh_ctrl_create()'s authentication.
 */
int nvmeh_ctrl_reauth(struct nvmeh_ctrl *ctrl, unsigned int qid);

/**
 * nvmeh_ctrl_destroy() - shut the controller down and disconnect
 * @ctrl: the controller (NULL is ignored)
 *
 * Stops keep-alive and recovery, writes CC.SHN and waits (bounded) for
 * CSTS.SHST, disconnects every queue; outstanding requests complete with
 * -ECONNABORTED.  Regions still registered (nvmeh_buf_reg()) are
 * deregistered and their handles freed.
 */
void nvmeh_ctrl_destroy(struct nvmeh_ctrl *ctrl);

/**
 * nvmeh_submit() - send a command
 * @ctrl: the controller
 * @qid: queue (0 admin, 1..nr_io_queues)
 * @rq: the request; its @done is called once, unless this returns an error
 *
 * Return: 0; -EINVAL for a bad queue, a missing @done, data over max_xfer
 * (unless %NVMEH_RQ_RAW), a raw capsule of a bad size, a @buf of another
 * controller or one being deregistered, no data or data not wholly inside
 * @buf, @buf with %NVMEH_RQ_RAW; -ENOTCONN while the controller is not
 * live; -EBUSY when every slot of the queue is taken; a DMA-mapping, MR or
 * post error.  A post refused at the command's SEND after its REG_MR was
 * queued also moves the queue's QP to ERR and starts error recovery (the
 * MR stays taken until the REG_MR has flushed); the command was not sent.
 */
int nvmeh_submit(struct nvmeh_ctrl *ctrl, unsigned int qid,
		 struct nvmeh_request *rq);

/**
 * nvmeh_buf_reg() - register a buffer region with the controller, once
 * @ctrl: the controller
 * @addr: the region's first byte
 * @len: its length in bytes (1 to the device's max_mr_size)
 *
 * SPDK's memory map instead of the kernel host's registration per command:
 * the region is registered for local write and remote read and write on
 * every queue's PD (one MR per queue; a queue that connects later, after a
 * reset too, registers it when it connects), and a request whose @buf names
 * it sends a keyed SGL with the queue's rkey for the region and the data's
 * address in it, without IB_WR_REG_MR before the capsule and without an
 * invalidation after the response.  No global rkey is involved: each MR
 * covers this region only and is valid on its queue's QP only.
 *
 * The price: while the region is registered, the target may read and write
 * all of it, on every queue, at any time, not only the bytes of a command
 * while it is outstanding (the kernel host's per-command registration
 * exposes those only).  Register only memory the target may see whole.  A
 * target that invalidates the region's rkey (SEND_WITH_INVALIDATE: siw
 * honours it for any MR of the PD) is refused: the host counts it in
 * bad_invs and resets the controller, whose reconnect registers the region
 * again.
 *
 * Return: the handle (valid until nvmeh_buf_dereg() or
 * nvmeh_ctrl_destroy()), or ERR_PTR(): -EINVAL for a NULL @ctrl or @addr,
 * a zero @len or a range that wraps; -ENODEV once the controller is being
 * destroyed; -ENOMEM; ib_reg_user_mr()'s error on a queue's PD.
 */
struct nvmeh_buf *nvmeh_buf_reg(struct nvmeh_ctrl *ctrl, void *addr,
				size_t len);

/**
 * nvmeh_buf_dereg() - deregister a region nvmeh_buf_reg() registered
 * @buf: the handle
 *
 * Refused while a request naming @buf has not ended (its @done not yet
 * called): the target may still be moving its data.  Must not race
 * submissions naming @buf (one that does fails with -EINVAL, or makes the
 * deregistration fail with -EBUSY).
 *
 * Return: 0 (@buf is freed); -EINVAL for NULL; -EBUSY while requests
 * naming it are outstanding (nothing changed).
 */
int nvmeh_buf_dereg(struct nvmeh_buf *buf);

/**
 * nvmeh_poll() - process the completions of a queue polled by its caller
 * @ctrl: the controller (created with poll and poll_external)
 * @qid: an I/O queue
 * @budget: at most this many completions
 *
 * One ib_process_cq_direct() pass over the queue's CQ on the calling
 * thread: the @done of the requests it ends run here (and may submit).
 * What they submit to this queue is posted in one ib_post_send() when the
 * pass ends (a queue's own poller does the same); if that post is
 * refused, the requests it did not send end there, each once, with the
 * post's error in @error and %NVME_SC_HOST_PATH_ERROR in @status.
 * Any thread may call it; a pass that finds another thread's under way,
 * or the queue down, does nothing.  Not from a @done of this queue.
 *
 * Return: completions processed (0 when none, or the queue is down or
 * busy); -EINVAL for a bad controller, queue or budget, or a queue that
 * is not polled by its caller.
 */
int nvmeh_poll(struct nvmeh_ctrl *ctrl, unsigned int qid, int budget);

/**
 * nvmeh_exec() - send a command and wait for its end
 * @ctrl: the controller
 * @qid: queue
 * @rq: the request (@done is the host's own)
 *
 * Return: as nvmeh_submit(), or 0 with @rq->error and @rq->status set.
 */
int nvmeh_exec(struct nvmeh_ctrl *ctrl, unsigned int qid,
	       struct nvmeh_request *rq);

/**
 * nvmeh_rw() - read or write blocks of namespace 1
 * @ctrl: the controller
 * @qid: an I/O queue
 * @write: true to write
 * @slba: first block
 * @nlb: number of blocks (1 to 65536)
 * @buf: data, nlb * lba_size bytes
 *
 * Return: 0, the NVMe status (> 0) when the controller failed it, or a
 * negative errno (-ECONNABORTED when the queue went down).
 */
int nvmeh_rw(struct nvmeh_ctrl *ctrl, unsigned int qid, bool write, u64 slba,
	     u32 nlb, void *buf);

/**
 * nvmeh_ctrl_info() - what the controller said at the last connect
 * @ctrl: the controller
 *
 * Return: the information (valid until nvmeh_ctrl_destroy()).
 */
const struct nvmeh_info *nvmeh_ctrl_info(struct nvmeh_ctrl *ctrl);

/**
 * nvmeh_ctrl_stats() - counters of a controller
 * @ctrl: the controller
 * @out: filled in
 */
void nvmeh_ctrl_stats(struct nvmeh_ctrl *ctrl, struct nvmeh_stats *out);

/**
 * nvmeh_ctrl_live() - is the controller live
 * @ctrl: the controller
 *
 * Return: true when every queue is connected.
 */
bool nvmeh_ctrl_live(struct nvmeh_ctrl *ctrl);

/**
 * nvmeh_ctrl_dead() - did the controller give up reconnecting
 * @ctrl: the controller
 *
 * Return: true after max_reconnects failed attempts.
 */
bool nvmeh_ctrl_dead(struct nvmeh_ctrl *ctrl);

/**
 * nvmeh_ctrl_wait_live() - wait until the controller is live again
 * @ctrl: the controller
 * @timeout_ms: at most this long
 *
 * Return: 0 when live, -ENODEV when dead, -ETIMEDOUT.
 */
int nvmeh_ctrl_wait_live(struct nvmeh_ctrl *ctrl, unsigned int timeout_ms);

/**
 * nvmeh_ctrl_reset() - start error recovery (as a transport error would)
 * @ctrl: the controller
 *
 * Return: 0, -EBUSY when the controller is not live.
 */
int nvmeh_ctrl_reset(struct nvmeh_ctrl *ctrl);

/**
 * nvmeh_ctrl_qp() - the QP of a queue (for fault injection)
 * @ctrl: the controller
 * @qid: the queue
 *
 * Return: the QP, NULL while the queue is down.
 */
struct ib_qp *nvmeh_ctrl_qp(struct nvmeh_ctrl *ctrl, unsigned int qid);

/**
 * nvmeh_ctrl_device() - the host's device
 * @ctrl: the controller
 *
 * Return: the device of the admin queue, NULL while it is down.
 */
struct ib_device *nvmeh_ctrl_device(struct nvmeh_ctrl *ctrl);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_NVME_HOST_H */

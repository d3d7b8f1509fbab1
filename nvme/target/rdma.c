// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RDMA transport (the kernel's drivers/nvme/target/rdma.c), on the
 * kernel-style rdma_cm and R/W API of rdmarw.
 *
 * One rdma_cm id, RC QP and CQ per NVMe queue.  The CQ is thread-polled
 * (every completion of a queue runs on its CQ's thread) or, with
 * poll_groups set, an I/O queue's CQ is an IB_POLL_DIRECT one that a poll
 * group of the transport's polls (see "poll groups" below); there a command
 * is parsed, its data fetched, executed on the (synchronous) backend and
 * answered:
 *
 *   host WRITE: pages from the queue's pool, rdma_rw_ctx_init(
 *               DMA_FROM_DEVICE), posted with read_cqe; read_done: the
 *               backend write, then the response SEND
 *   host READ:  pages from the queue's pool, the backend read, then
 *               rdma_rw_ctx_init(DMA_TO_DEVICE), posted with the response
 *               SEND as chain_wr (one post); from a RAM namespace on the
 *               software device, no pages: the WRITE's source is the
 *               namespace itself (nvmet_rdma_map_zcopy())
 *   no data or in-capsule data: execute, then the response SEND
 *
 * In a poll group's turn on a queue, the chains of all its requests are
 * posted together when the turn ends, one ib_post_send() (see "posting").
 *
 * The response is a SEND_WITH_INV of the host's rkey when its descriptor
 * asked for invalidation (0x4F) and the device can.
 *
 * Send Queue credits: sq_wr_avail starts at the QP's Send Queue depth less
 * one (the drain marker's); a post takes the WQEs rdma_rw_ctx_init()
 * announced (plus one for a SEND) and its completion gives them back.  A
 * request that finds too few credits, -EAGAIN from rdma_rw_ctx_init()
 * (MR pool empty) or too few free pages in the data-buffer pool (struct
 * nvmet_rdma_pool) waits on rsp_wr_wait_list and is retried, in order,
 * whenever a completion returns credits or MRs or a release pages.
 *
 * Teardown (disconnect, keep-alive expiry, device removal, target stop):
 * the queue goes DISCONNECTING under its state lock, after which nothing
 * is posted on it; the release work disconnects, drains the QP (every
 * completion delivered), fails what is left, waits until every request
 * of the queue is released, and only then frees the QP, the CQ, the id,
 * the data-buffer pool and the queue.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <rdmarw/rdma_cm.h>
#include <rdmarw/rw.h>
#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>
#endif

#include "nvmet_int.h"

#define NVMET_RDMA_RELEASE_WAIT_MS 20000 /* bound on a queue's release */
#define NVMET_RDMA_STOP_WAIT_MS 30000 /* bound on the target's stop */
/* admin queues of an address with none admitted that may wait at once */
#define NVMET_RDMA_STRANGER_UNADMITTED 4
/* after a Failure1 went out: the host's time to close the queue itself */
#define NVMET_RDMA_AUTH_FAIL_MS 1000

enum nvmet_rdma_queue_state {
	NVMET_RDMA_Q_CONNECTING,
	NVMET_RDMA_Q_LIVE,
	NVMET_RDMA_Q_DISCONNECTING,
};

struct nvmet_rdma_device {
	struct ib_device *device;
	struct ib_pd *pd;
	struct kref ref;
	struct list_head entry;
	struct nvmet_rdma_transport *tr;
	u8 mdts;
	bool send_inv; /* SEND_WITH_INV is available */
	bool reg_per_cmd; /* iWARP on libibverbs: see struct nvmet_rdma_pool */
	bool zcopy; /* reads may send from the namespace: see map_zcopy */
};

struct nvmet_rdma_cmd {
	struct ib_sge sge;
	struct ib_cqe cqe;
	struct ib_recv_wr wr;
	struct nvme_command *nvme_cmd; /* the capsule, then in-capsule data */
	u32 byte_len; /* what arrived */
	struct nvmet_rdma_queue *queue;
};

/*
 * Each queue's keyed data comes from a pool set up with the queue, so that
 * the I/O path neither allocates nor registers (the kernel's sgl_alloc()
 * per command has no cost of a system call; here a fresh buffer meant an
 * ibv_reg_mr() and an ibv_dereg_mr()): one arena of whole pages, declared
 * once to the PD's registration map on a libibverbs device (the software
 * device reaches any memory through the local DMA key), and a scatterlist
 * with one entry per arena page, set up once.  A command takes a run of
 * contiguous free pages, first fit (the backends see one buffer), and
 * uses that window of the scatterlist; it gives them back when its data
 * is no longer needed (a host write's once the backend has it, a read's
 * when the response SEND completes).  A command that finds no run waits
 * on rsp_data_wait_list, in order, and is retried when pages return.  A
 * list of its own: a response waiting for credits behind a command that
 * waits for the pages that response holds would never be sent.
 *
 * Sizing (nvmet_rdma_pool_pages()): the queue's depth times the port's
 * data_buf_pages (--data-buf, default 128 KiB: a full queue of 128 KiB
 * commands fits), plus a quarter: a read's pages are held until its
 * response SEND completes, and by then the host, which saw the response,
 * may have sent the next command (without the quarter, 128 KiB reads at
 * the full depth waited about once in two in bench-nvmet; with it, not
 * once).  The admin queue's depth times one page (its data is an
 * Identify or a log page).  Never less than the largest transfer (MDTS),
 * so that the first waiter always fits once the commands before it are
 * done.
 *
 * Except on an iWARP device through libibverbs (reg_per_cmd): there an RDMA
 * READ's sink must be remotely writable, so a registration of the whole
 * arena would let a peer that learns its key write into every command's
 * pages, at any time, for the queue's life.  There each host write's pages
 * (the sinks of its RDMA READs, whose key goes to the host in the READ
 * request) are registered when it gets them (outside any lock) and the
 * registration dropped when it gives them back: remotely writable for that
 * command's life only, at one ibv_reg_mr() and one ibv_dereg_mr() per
 * command (the kernel's rw.c registers and invalidates an MR per READ on
 * iWARP).  The commands that only send data (host reads: RDMA WRITE
 * sources) take their pages from a second arena of the same size,
 * registered once for local access only, as the command buffers and the
 * responses are (nvmet_rdma_declare()): no peer reaches them whatever key
 * it tries (rpool).  The registration per command had cost a fifth
 * of the queue thread's time in 4 KiB random reads over the lab's siw0
 * (bench/README.md).  That doubles the pinned data pages on such a queue.
 * If registering rpool fails, its npages stays 0 and the reads take pages
 * from the first pool, registered per command, as before.
 */
struct nvmet_rdma_pool {
	spinlock_t lock; /* map */
	size_t bytes; /* counted in tgt->buf_bytes and pool_bytes */
	void *base;
	u64 *map; /* a set bit: the page is taken */
	u32 npages;
	bool declared; /* registered once, whole */
};

/* What a request does next (a wait list retries it there). */
enum nvmet_rdma_step {
	NVMET_RDMA_RESPOND, /* post the data (reads) and the response */
	NVMET_RDMA_FETCH, /* RDMA READ the host's data */
	NVMET_RDMA_EXECUTE, /* execute (data to the host) */
};

struct nvmet_rdma_rsp {
	struct ib_sge send_sge;
	struct ib_cqe send_cqe;
	struct ib_send_wr send_wr;
	struct ib_cqe read_cqe;
	struct nvmet_rdma_cmd *cmd;
	struct nvmet_rdma_queue *queue;
	struct rdma_rw_ctx rw;
	int n_rdma; /* WQEs of the live R/W context; 0: none */
	enum dma_data_direction dir;
	int credits; /* Send Queue credits held */
	bool keyed;
	bool invalidate;
	bool data_declared; /* reg_per_cmd: @data is registered */
	bool allocated; /* beyond the queue's array */
	u32 invalidate_rkey;
	u64 remote_addr;
	u32 rkey;
	void *data; /* keyed data buffer: pages of the queue's pool */
	struct nvmet_rdma_pool *data_pool; /* which pool @data is from */
	u32 pages; /* pages taken (0: none) */
	/*
	 * @data as one entry: a run of the pool is contiguous, so a command's
	 * transfer is one SGE (one RDMA READ or WRITE where the device's SGE
	 * limits would split a list of pages: siw takes one SGE per READ).
	 */
	struct scatterlist data_sg;
	struct scatterlist *sgl; /* &data_sg or NULL */
	u32 sg_cnt; /* entries in @sgl: 1, or 0 without data */
	struct list_head wait_list; /* rsp_wr_wait_list, rsp_wait_list */
	struct list_head free_list; /* free_rsps */
	struct nvmet_rdma_rsp *back_next; /* rsps_back */
	/* its queue's batch (nvmet_rdma_post()): the next, its first WR */
	struct nvmet_rdma_rsp *batch_next;
	struct ib_send_wr *batch_wr;
	enum nvmet_rdma_step step;
	struct nvmet_req req;
	struct nvme_completion cqe;
};

/* What an rdma_cm id's context points to: a listener's, or a queue's. */
enum nvmet_rdma_ctx_kind {
	NVMET_RDMA_CTX_LISTENER = 0x4c49, /* children inherit it */
	NVMET_RDMA_CTX_QUEUE = 0x5155,
};

/* Receive buffers and response slots allocated together. */
struct nvmet_rdma_chunk {
	void *cmd_bufs;
	u32 nr_cmds;
	struct nvmet_rdma_rsp *rsps;
	u32 nr_rsps;
	size_t bytes; /* counted in tgt->buf_bytes */
};

/* What a queue asks of its poll group (struct nvmet_rdma_poll_group). */
enum nvmet_rdma_pg_op {
	NVMET_RDMA_PG_NONE,
	NVMET_RDMA_PG_ADD,
	NVMET_RDMA_PG_DEL,
};

struct nvmet_rdma_poll_group;

struct nvmet_rdma_queue {
	enum nvmet_rdma_ctx_kind kind; /* first: the id's context */
	struct rdma_cm_id *cm_id;
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct nvmet_port *port;
	struct nvmet_rdma_transport *tr;
	struct nvmet_rdma_device *dev;
	atomic_t sq_wr_avail;
	spinlock_t state_lock; /* state; held across every post */
	enum nvmet_rdma_queue_state state;
	struct nvmet_cq nvme_cq;
	struct nvmet_sq nvme_sq;
	/*
	 * Receive buffers and response slots, in two chunks: [0] set up at
	 * the connection request, for the Connect alone (one receive, two
	 * slots); [1] by the install hook once a Connect is valid, for the
	 * rest of the queue (see nvmet_rdma_install_queue()).
	 */
	struct nvmet_rdma_chunk chunk[2];
	/*
	 * Free response slots: @free_rsps is the receive completion's own
	 * (nvmet_rdma_get_rsp(), the queue's CQ context only: no lock);
	 * slots come back on @rsps_back, a stack any thread pushes on
	 * (atomic), which the receive side takes whole when its list is
	 * empty (see nvmet_rdma_put_rsp()).
	 */
	struct list_head free_rsps;
	struct nvmet_rdma_rsp *rsps_back;
	struct nvmet_rdma_cmd *cmds;
	u32 cmd_buf_size;
	u32 inline_data_size;
	struct work_struct release_work;
	struct list_head rsp_wait_list; /* commands before ESTABLISHED */
	struct list_head rsp_wr_wait_list; /* for credits, MRs or pages */
	spinlock_t rsp_wr_wait_lock; /* both wait lists, their flags */
	bool wr_wait_busy; /* someone runs rsp_wr_wait_list */
	bool wr_wait_again; /* retry: something came back meanwhile */
	struct list_head rsp_data_wait_list; /* for data pages */
	bool data_wait_busy; /* someone runs rsp_data_wait_list */
	/*
	 * Requests on each list or being retried from it (atomic): a release
	 * that finds none skips the lock (nvmet_rdma_nothing_waits()).
	 */
	u32 nr_wr_waiting;
	u32 nr_data_waiting;
	struct nvmet_rdma_pool pool;
	struct nvmet_rdma_pool rpool; /* reg_per_cmd: host reads' pages */
	struct nvmet_rdma_pool cpool; /* the Connect's data, before install */
	bool admitted; /* a Connect installed the queue */
	bool mrs_ready; /* rdma_rw_init_mrs() done */
	bool counted; /* in tgt->unadmitted */
	struct delayed_work connect_work; /* the bound on waiting for it */
	struct delayed_work
		auth_fail_work; /* an authentication failure's end */
	struct ib_qp_init_attr qp_attr; /* cap.max_rdma_ctxs for install */
	struct sockaddr_storage peer; /* the host's address */
	u64 buf_bytes; /* what it added to tgt->buf_bytes */
	u16 host_qid;
	int recv_queue_size;
	int send_queue_size;
	struct list_head queue_list;
	/* polled I/O queues: the group (kept to the end), its links */
	struct nvmet_rdma_poll_group *pg;
	struct list_head pg_entry; /* the group's members (its thread's) */
	struct list_head pg_req; /* the group's pending (its lock) */
	enum nvmet_rdma_pg_op pg_op; /* the group's lock */
	bool pg_member; /* the group's lock */
	/* its CQ's events, taken by the group (the group's thread's) */
	bool pg_ev_taken;
	struct rdmarw_cq_events pg_ev;
	/* chains to post at the end of its turn (the group's thread's) */
	struct nvmet_rdma_rsp *batch;
	struct nvmet_rdma_rsp *batch_last;
};

/*
 * A poll group (SPDK's nvmf_rdma_poll_group): one thread of the
 * transport's that polls the IB_POLL_DIRECT CQs of its member queues in
 * turn, so that a completion costs no wake-up of a thread.  Only that
 * thread walks and changes @members: a queue joins or leaves through
 * @pending, which the thread applies between two sweeps; leaving waits
 * until it has (after that the thread never touches the queue).  No lock
 * is taken per completion: @lock is taken on joins and leaves, and on the
 * idle path.  After @idle_ns without a completion the thread arms every
 * member's CQ (reporting missed events, as the kernel's ib_poll_handler
 * re-arms) and sleeps on @wake until a CQ's comp_handler sets @kick, or a
 * queue joins or leaves; with @busy it never sleeps.  On a device that
 * hands a CQ's events out (rdmarw_cq_events_take(): libibverbs), the group
 * takes its members' and sleeps in poll() on them and @wake_fd instead, so
 * that a completion wakes this thread alone, not the CQ's event thread
 * first (see nvmet_rdma_pg_sleep_fds()).
 */
struct nvmet_rdma_poll_group {
	struct nvmet_rdma_transport *tr;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock; /* pending, kick, sleeping, stop, pg_* */
	pthread_cond_t wake; /* the thread sleeps here */
	pthread_cond_t applied; /* a leaving queue waits here */
	struct list_head members; /* the thread's own: pg_entry */
	struct list_head pending; /* to apply: pg_req */
	bool changed; /* @pending not empty or @stop (atomic) */
	bool kick; /* an armed CQ got a completion */
	bool sleeping;
	bool stop;
	bool busy;
	u64 idle_ns;
	/* a caller's work run after each sweep (the thread's own) */
	int (*hook)(void *arg);
	void *hook_arg;
	/* what nvmet_rdma_poll_hook() asks (@lock), applied with @pending */
	int (*new_hook)(void *arg);
	void *new_hook_arg;
	bool hook_asked;
	/*
	 * Sleeping in poll(): @wake_fd (an eventfd, -1: none) is written where
	 * @wake is signalled when @sleep_fds (@lock); @pfds holds @wake_fd
	 * then the descriptors of the members whose events are taken, in
	 * @members' order (the thread's own, rebuilt on joins and leaves;
	 * @npfds 0: no member's are taken, sleep on @wake).
	 */
	int wake_fd;
	bool sleep_fds;
	struct pollfd *pfds;
	u32 npfds;
	u32 pfds_cap;
	/* the thread's own: sleeps in poll(), and those a CQ's event ended */
	u64 fd_sleeps;
	u64 fd_wakeups;
};

struct nvmet_rdma_transport {
	enum nvmet_rdma_ctx_kind kind; /* first: the listener's context */
	struct nvmet_target *tgt;
	struct nvmet_port *port;
	struct rdma_cm_id *listen_id;
	struct mutex lock; /* queue_list, dev_list, listen_id, stopping */
	struct list_head queue_list;
	struct list_head dev_list;
	bool stopping;
	struct nvmet_rdma_poll_group *groups; /* poll_groups of them */
	u32 nr_groups;
	u32 next_group; /* round robin (atomic) */
};

static void nvmet_rdma_queue_disconnect(struct nvmet_rdma_queue *queue);
static void nvmet_rdma_process_wr_wait_list(struct nvmet_rdma_queue *queue);
static void nvmet_rdma_process_data_wait_list(struct nvmet_rdma_queue *queue);
static void nvmet_rdma_handle_command(struct nvmet_rdma_queue *queue,
				      struct nvmet_rdma_rsp *rsp);

static void nvmet_rdma_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- devices ------------------------------------------------------------------- */

/*
 * MDTS for a device: the largest transfer (up to the port's limit) whose
 * contexts, one per Send Queue entry of the deepest queue, fit the
 * device's Send Queue with rdma_rw_mr_factor() MRs (or READ WRs) each.
 */
static u8 nvmet_rdma_pick_mdts(struct ib_device *dev, u32 port_num,
			       struct nvmet_port *port)
{
	u32 qsize = port->max_queue_size;
	int mdts;

	for (mdts = port->mdts_max; mdts > 0; mdts--) {
		unsigned int factor =
			rdma_rw_mr_factor(dev, port_num, 1u << mdts);
		unsigned int wrs;

		if (!factor)
			continue;
		wrs = rdma_rw_max_send_wr(dev, port_num, qsize * factor, 0);
		if (wrs && (u64)wrs + qsize + 1 <= (u64)dev->attrs.max_qp_wr)
			break;
	}
	return (u8)mdts;
}

/*
 * RDMARW_NVMET_REG_PER_CMD=1 makes any device register host writes' pages
 * per command, as an iWARP device through libibverbs does (struct
 * nvmet_rdma_pool), so that the tests run the two pools on the software
 * device, where registering is a no-op.
 */
static bool nvmet_rdma_force_reg_per_cmd(void)
{
	const char *v = getenv("RDMARW_NVMET_REG_PER_CMD");

	return v && !strcmp(v, "1");
}

/*
 * $RDMARW_NVMET_ZCOPY=0: every read through a page of the pool, as before
 * reads without a copy (bench/README.md compares the two).
 */
static bool nvmet_rdma_zcopy_allowed(void)
{
	const char *v = getenv("RDMARW_NVMET_ZCOPY");

	return !v || strcmp(v, "0");
}

static struct nvmet_rdma_device *
nvmet_rdma_find_get_device(struct nvmet_rdma_transport *tr,
			   struct rdma_cm_id *cm_id)
{
	struct nvmet_rdma_device *ndev;

	mutex_lock(&tr->lock);
	list_for_each_entry(ndev, &tr->dev_list, entry)
	{
		if (ndev->device == cm_id->device &&
		    kref_get_unless_zero(&ndev->ref)) {
			mutex_unlock(&tr->lock);
			return ndev;
		}
	}
	ndev = calloc(1, sizeof(*ndev));
	if (!ndev)
		goto out;
	ndev->device = cm_id->device;
	ndev->tr = tr;
	ndev->pd = ib_alloc_pd(ndev->device, 0);
	if (IS_ERR(ndev->pd)) {
		free(ndev);
		ndev = NULL;
		goto out;
	}
	ndev->mdts =
		nvmet_rdma_pick_mdts(ndev->device, cm_id->port_num, tr->port);
	ndev->send_inv = ndev->device->attrs.device_cap_flags &
			 IB_DEVICE_MEM_MGT_EXTENSIONS;
	ndev->reg_per_cmd = nvmet_rdma_force_reg_per_cmd();
#ifdef RDMARW_HAVE_IBV
	ndev->reg_per_cmd |= rdmarw_ibv_is_ibv(ndev->device) &&
			     rdma_protocol_iwarp(ndev->device, cm_id->port_num);
#endif
	ndev->zcopy = !ndev->reg_per_cmd && nvmet_rdma_zcopy_allowed();
#ifdef RDMARW_HAVE_IBV
	/* its local key reaches only what was registered (map_zcopy) */
	ndev->zcopy &= !rdmarw_ibv_is_ibv(ndev->device);
#endif
	WRITE_ONCE(tr->tgt->mdts, ndev->mdts);
	kref_init(&ndev->ref);
	list_add(&ndev->entry, &tr->dev_list);
	nvmet_log("device %s: mdts %u (%u KiB)", ndev->device->name, ndev->mdts,
		  4u << ndev->mdts);
out:
	mutex_unlock(&tr->lock);
	return ndev;
}

static void nvmet_rdma_free_dev(struct kref *ref)
{
	struct nvmet_rdma_device *ndev =
		container_of(ref, struct nvmet_rdma_device, ref);

	list_del(&ndev->entry);
	if (ib_dealloc_pd(ndev->pd))
		nvmet_err("device %s: PD still busy", ndev->device->name);
	free(ndev);
}

static void nvmet_rdma_put_device(struct nvmet_rdma_device *ndev)
{
	struct nvmet_rdma_transport *tr = ndev->tr;

	mutex_lock(&tr->lock);
	kref_put(&ndev->ref, nvmet_rdma_free_dev);
	mutex_unlock(&tr->lock);
}

/*
 * On a libibverbs device, memory reached through the local DMA key is
 * registered on demand and must be forgotten before it is freed (ibv.h);
 * the queue's long-lived buffers are declared up front instead.  @local:
 * the memory is never an RDMA READ's sink (receive buffers, responses,
 * what only host reads send), so it is registered for local access only
 * and no peer reaches it, on iWARP either (rdmarw_ibv_declare_local()).
 */
static int nvmet_rdma_declare(struct nvmet_rdma_device *ndev, void *p,
			      size_t len, bool local)
{
#ifdef RDMARW_HAVE_IBV
	if (p && len && rdmarw_ibv_is_ibv(ndev->device))
		return local ? rdmarw_ibv_declare_local(ndev->pd, p, len) :
			       rdmarw_ibv_declare(ndev->pd, p, len);
#endif
	return 0;
}

static void nvmet_rdma_forget(struct nvmet_rdma_device *ndev, const void *p,
			      size_t len)
{
#ifdef RDMARW_HAVE_IBV
	if (p && len && rdmarw_ibv_is_ibv(ndev->device))
		rdmarw_ibv_forget(ndev->pd, p, len);
#endif
}

/* ---- the data-buffer pool --------------------------------------------------------- */

/* The first bit in [@from, @end) that is @taken, or @end. */
static u32 nvmet_rdma_pool_next(const u64 *map, u32 from, u32 end, bool taken)
{
	while (from < end) {
		u64 w = taken ? map[from / 64] : ~map[from / 64];

		w &= ~0ull << (from % 64);
		if (w) {
			u32 i = (from & ~63u) + (u32)__builtin_ctzll(w);

			return min(i, end);
		}
		from = (from & ~63u) + 64;
	}
	return end;
}

static void nvmet_rdma_pool_mark(u64 *map, u32 first, u32 n, bool taken)
{
	u32 i = first, end = first + n;

	while (i < end) {
		u32 b = i % 64, k = min(64 - b, end - i);
		u64 m = (k == 64 ? ~0ull : (1ull << k) - 1) << b;

		if (taken)
			map[i / 64] |= m;
		else
			map[i / 64] &= ~m;
		i += k;
	}
}

/* The first run of @n free pages (first fit), or -1. */
static int nvmet_rdma_pool_find(const struct nvmet_rdma_pool *pool, u32 n)
{
	u32 i = 0, busy;

	for (;;) {
		i = nvmet_rdma_pool_next(pool->map, i, pool->npages, false);
		if (n > pool->npages - i)
			return -1;
		busy = nvmet_rdma_pool_next(pool->map, i, i + n, true);
		if (busy == i + n)
			return (int)i;
		i = busy + 1;
	}
}

/* Pages of a queue's pool: see struct nvmet_rdma_pool. */
static u32 nvmet_rdma_pool_pages(const struct nvmet_rdma_queue *queue)
{
	u32 per_cmd = queue->host_qid ? queue->port->data_buf_pages : 1;
	u32 max_cmd = 1u << queue->dev->mdts;
	u32 depth = (u32)queue->recv_queue_size;

	return max(depth * per_cmd + depth * per_cmd / 4, max_cmd);
}

/* @n pages for @pool, registered whole when @declare. */
static int nvmet_rdma_pool_init(struct nvmet_rdma_queue *queue,
				struct nvmet_rdma_pool *pool, u32 n,
				bool declare)
{
	int ret;

	spin_lock_init(&pool->lock);
	pool->base = aligned_alloc(PAGE_SIZE, (size_t)n * PAGE_SIZE);
	pool->map = calloc(DIV_ROUND_UP(n, 64), sizeof(*pool->map));
	if (!pool->base || !pool->map)
		return -ENOMEM;
	pool->npages = n;
	pool->bytes = (size_t)n * PAGE_SIZE;
	nvmet_stat_add(queue->tr->tgt->buf_bytes, pool->bytes);
	if (pool != &queue->cpool) /* data pools proper */
		nvmet_stat_add(queue->tr->tgt->pool_bytes, pool->bytes);
	if (!declare)
		return 0;
	/* rpool only sends (host reads): local access only */
	ret = nvmet_rdma_declare(queue->dev, pool->base, (size_t)n * PAGE_SIZE,
				 pool == &queue->rpool);
	if (ret) {
		nvmet_err("q%u: registering %u KiB of data buffers: %d",
			  queue->host_qid, n * ((u32)PAGE_SIZE / 1024), ret);
		pool->npages = 0; /* no pages to take */
		return ret;
	}
	pool->declared = true;
	return 0;
}

static void nvmet_rdma_pool_release(struct nvmet_rdma_queue *queue,
				    struct nvmet_rdma_pool *pool)
{
	/* declared whole, or per command: anything left is released too */
	if (queue->dev && pool->npages)
		nvmet_rdma_forget(queue->dev, pool->base,
				  (size_t)pool->npages * PAGE_SIZE);
	nvmet_stat_add(queue->tr->tgt->buf_bytes, (u64) - (s64)pool->bytes);
	if (pool != &queue->cpool)
		nvmet_stat_add(queue->tr->tgt->pool_bytes,
			       (u64) - (s64)pool->bytes);
	free(pool->map);
	free(pool->base);
	memset(pool, 0, sizeof(*pool));
}

static int nvmet_rdma_alloc_pool(struct nvmet_rdma_queue *queue)
{
	u32 n = nvmet_rdma_pool_pages(queue);
	int ret;

	if (!queue->dev->reg_per_cmd)
		return nvmet_rdma_pool_init(queue, &queue->pool, n, true);
	/* per command: see struct nvmet_rdma_pool */
	ret = nvmet_rdma_pool_init(queue, &queue->pool, n, false);
	if (ret)
		return ret;
	ret = nvmet_rdma_pool_init(queue, &queue->rpool, n, true);
	if (ret == -ENOMEM)
		return ret;
	if (ret) /* refused: the reads register per command too */
		nvmet_rdma_pool_release(queue, &queue->rpool);
	return 0;
}

static void nvmet_rdma_free_pool(struct nvmet_rdma_queue *queue)
{
	nvmet_rdma_pool_release(queue, &queue->pool);
	nvmet_rdma_pool_release(queue, &queue->rpool);
	nvmet_rdma_pool_release(queue, &queue->cpool);
}

/*
 * The pool @rsp takes its pages from: rpool for what only sends data on a
 * reg_per_cmd device whose rpool is registered (struct nvmet_rdma_pool).
 */
static struct nvmet_rdma_pool *
nvmet_rdma_rsp_pool(const struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;

	if (!queue->admitted)
		return &queue->cpool; /* the Connect's data */
	if (queue->rpool.npages && rsp->step != NVMET_RDMA_FETCH)
		return &queue->rpool;
	return &queue->pool;
}

/*
 * Give @rsp the pages for its req.data_len bytes (nothing for none):
 * false when the pool has no run that long now (the request waits).
 */
static bool nvmet_rdma_get_data(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_pool *pool = nvmet_rdma_rsp_pool(rsp);
	u32 len = rsp->req.data_len;
	u32 nents = DIV_ROUND_UP(len, (u32)PAGE_SIZE);
	int first;

	if (rsp->pages || !len)
		return true;
	spin_lock(&pool->lock);
	first = nvmet_rdma_pool_find(pool, nents);
	if (first >= 0)
		nvmet_rdma_pool_mark(pool->map, (u32)first, nents, true);
	spin_unlock(&pool->lock);
	if (first < 0)
		return false;
	rsp->pages = nents;
	rsp->data_pool = pool;
	rsp->data = (char *)pool->base + (size_t)first * PAGE_SIZE;
	sg_init_one(&rsp->data_sg, rsp->data, len);
	rsp->sgl = &rsp->data_sg;
	rsp->sg_cnt = 1;
	rsp->req.buf = rsp->data;
	return true;
}

/*
 * Give @rsp's pages back (once: a request without pages has none; a read
 * without a copy lets go of the namespace's entry).
 */
static void nvmet_rdma_put_data(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_pool *pool = rsp->data_pool;
	u32 first;

	if (!rsp->pages) {
		rsp->sgl = NULL;
		rsp->sg_cnt = 0;
		return;
	}
	if (rsp->data_declared)
		nvmet_rdma_forget(rsp->queue->dev, rsp->data,
				  (size_t)rsp->pages * PAGE_SIZE);
	rsp->data_declared = false;
	first = (u32)(((char *)rsp->data - (char *)pool->base) / PAGE_SIZE);
	spin_lock(&pool->lock);
	nvmet_rdma_pool_mark(pool->map, first, rsp->pages, false);
	spin_unlock(&pool->lock);
	rsp->sgl = NULL;
	rsp->data = NULL;
	rsp->data_pool = NULL;
	rsp->pages = 0;
	rsp->sg_cnt = 0;
}

/* ---- receives ---------------------------------------------------------------------- */

/* Post @cmd's receive, unless the queue is going away (state_lock held). */
static int nvmet_rdma_post_recv_locked(struct nvmet_rdma_cmd *cmd)
{
	if (cmd->queue->state == NVMET_RDMA_Q_DISCONNECTING)
		return -ESHUTDOWN;
	cmd->wr.next = NULL; /* a batch's link (nvmet_rdma_post_list()) */
	return ib_post_recv(cmd->queue->qp, &cmd->wr, NULL);
}

static int nvmet_rdma_post_recv(struct nvmet_rdma_cmd *cmd)
{
	struct nvmet_rdma_queue *queue = cmd->queue;
	int ret;

	spin_lock(&queue->state_lock);
	ret = nvmet_rdma_post_recv_locked(cmd);
	spin_unlock(&queue->state_lock);
	return ret;
}

static void nvmet_rdma_recv_done(struct ib_cq *cq, struct ib_wc *wc);

/* The command array (receive buffers come with the chunks). */
static int nvmet_rdma_alloc_cmds(struct nvmet_rdma_queue *queue)
{
	queue->cmd_buf_size = (u32)ALIGN(
		sizeof(struct nvme_command) + queue->inline_data_size, 64);
	queue->cmds =
		calloc((size_t)queue->recv_queue_size, sizeof(*queue->cmds));
	return queue->cmds ? 0 : -ENOMEM;
}

/* Receive buffers for cmds[@first ..] (@c->nr_cmds of them). */
static int nvmet_rdma_alloc_cmd_bufs(struct nvmet_rdma_queue *queue,
				     struct nvmet_rdma_chunk *c, u32 first)
{
	size_t len = (size_t)queue->cmd_buf_size * c->nr_cmds;
	u32 i;
	int ret;

	c->cmd_bufs = aligned_alloc(64, len);
	if (!c->cmd_bufs)
		return -ENOMEM;
	/*
	 * Refused: the queue is rejected.  Going on would register the
	 * receive buffers on demand, remotely writable on iWARP.
	 */
	ret = nvmet_rdma_declare(queue->dev, c->cmd_bufs, len, true);
	if (ret)
		return ret;
	for (i = 0; i < c->nr_cmds; i++) {
		struct nvmet_rdma_cmd *cmd = &queue->cmds[first + i];

		cmd->queue = queue;
		cmd->nvme_cmd =
			(struct nvme_command *)((char *)c->cmd_bufs +
						(size_t)i *
							queue->cmd_buf_size);
		cmd->sge.addr = (u64)(uintptr_t)cmd->nvme_cmd;
		cmd->sge.length = queue->cmd_buf_size;
		cmd->sge.lkey = queue->dev->pd->local_dma_lkey;
		cmd->cqe.done = nvmet_rdma_recv_done;
		cmd->wr.wr_cqe = &cmd->cqe;
		cmd->wr.sg_list = &cmd->sge;
		cmd->wr.num_sge = 1;
	}
	return 0;
}

/* ---- responses ---------------------------------------------------------------------- */

static void nvmet_rdma_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void nvmet_rdma_read_data_done(struct ib_cq *cq, struct ib_wc *wc);

static void nvmet_rdma_init_rsp(struct nvmet_rdma_queue *queue,
				struct nvmet_rdma_rsp *r)
{
	r->queue = queue;
	r->req.cqe = &r->cqe;
	r->send_sge.addr = (u64)(uintptr_t)&r->cqe;
	r->send_sge.length = sizeof(r->cqe);
	r->send_sge.lkey = queue->dev->pd->local_dma_lkey;
	/* the response's SEND, built once: each response sets its opcode */
	r->send_wr = (struct ib_send_wr){
		.wr_cqe = &r->send_cqe,
		.sg_list = &r->send_sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	r->send_cqe.done = nvmet_rdma_send_done;
	r->read_cqe.done = nvmet_rdma_read_data_done;
	INIT_LIST_HEAD(&r->wait_list);
}

/*
 * Give @rsp back to its queue's free slots, from any thread: a push on
 * rsps_back (lock-free; the kernel's nvmet_rdma_put_rsp() takes the
 * queue's rsps_lock, needed there because a slot is taken in the
 * receive's softirq and given back wherever the command ends).
 */
static void nvmet_rdma_rsp_back(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;
	struct nvmet_rdma_rsp *head =
		__atomic_load_n(&queue->rsps_back, __ATOMIC_RELAXED);

	do {
		rsp->back_next = head;
	} while (!__atomic_compare_exchange_n(&queue->rsps_back, &head, rsp,
					      true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/* @c->nr_rsps response slots, on the free list. */
static int nvmet_rdma_alloc_rsps(struct nvmet_rdma_queue *queue,
				 struct nvmet_rdma_chunk *c)
{
	u32 i;
	int ret;

	c->rsps = calloc(c->nr_rsps, sizeof(*c->rsps));
	if (!c->rsps)
		return -ENOMEM;
	/* as the receive buffers': refused, the queue is rejected */
	ret = nvmet_rdma_declare(queue->dev, c->rsps,
				 (size_t)c->nr_rsps * sizeof(*c->rsps), true);
	if (ret)
		return ret;
	for (i = 0; i < c->nr_rsps; i++) {
		nvmet_rdma_init_rsp(queue, &c->rsps[i]);
		nvmet_rdma_rsp_back(&c->rsps[i]);
	}
	return 0;
}

/*
 * Chunk @k: @nr_cmds receive buffers from cmds[@first] and two response
 * slots per receive (a receive is posted again before its response SEND
 * completes: see nvmet_rdma_repost_recv()).
 */
static int nvmet_rdma_alloc_chunk(struct nvmet_rdma_queue *queue, int k,
				  u32 first, u32 nr_cmds)
{
	struct nvmet_rdma_chunk *c = &queue->chunk[k];
	int ret;

	c->nr_cmds = nr_cmds;
	c->nr_rsps = 2 * nr_cmds;
	c->bytes = (size_t)nr_cmds * queue->cmd_buf_size +
		   (size_t)c->nr_rsps * sizeof(*c->rsps);
	nvmet_stat_add(queue->tr->tgt->buf_bytes, c->bytes);
	ret = nvmet_rdma_alloc_cmd_bufs(queue, c, first);
	if (!ret)
		ret = nvmet_rdma_alloc_rsps(queue, c);
	return ret;
}

static void nvmet_rdma_free_chunk(struct nvmet_rdma_queue *queue, int k)
{
	struct nvmet_rdma_chunk *c = &queue->chunk[k];

	if (queue->dev) {
		nvmet_rdma_forget(queue->dev, c->rsps,
				  (size_t)c->nr_rsps * sizeof(*c->rsps));
		nvmet_rdma_forget(queue->dev, c->cmd_bufs,
				  (size_t)c->nr_cmds * queue->cmd_buf_size);
	}
	free(c->rsps);
	free(c->cmd_bufs);
	nvmet_stat_add(queue->tr->tgt->buf_bytes, (u64) - (s64)c->bytes);
	memset(c, 0, sizeof(*c));
}

/*
 * A response slot for a command.  There are two per receive (a command's
 * receive is posted again before its response SEND completes, so a slot
 * may still wait for that completion while the receive takes the next
 * command), so the list only runs dry when a host sends more than the
 * queue's depth; the kernel then allocates, and so does this.  Called by
 * the receive completion only, so on the queue's CQ context (its CQ
 * thread, its poll group's thread, or the teardown's drain once the CQ
 * is no longer polled elsewhere): one consumer of the free list.
 */
static struct nvmet_rdma_rsp *nvmet_rdma_get_rsp(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_rsp *rsp = NULL, *back;

	if (unlikely(list_empty(&queue->free_rsps))) {
		/* take what came back, whole (one consumer: no ABA) */
		back = __atomic_exchange_n(&queue->rsps_back, NULL,
					   __ATOMIC_ACQUIRE);
		for (; back; back = back->back_next)
			list_add_tail(&back->free_list, &queue->free_rsps);
	}
	if (likely(!list_empty(&queue->free_rsps))) {
		rsp = list_first_entry(&queue->free_rsps, struct nvmet_rdma_rsp,
				       free_list);
		list_del(&rsp->free_list);
	}
	if (unlikely(!rsp)) {
		rsp = calloc(1, sizeof(*rsp));
		if (!rsp)
			return NULL;
		nvmet_rdma_init_rsp(queue, rsp);
		rsp->allocated = true;
	}
	rsp->n_rdma = 0;
	rsp->credits = 0;
	rsp->keyed = false;
	rsp->invalidate = false;
	rsp->step = NVMET_RDMA_RESPOND;
	rsp->data = NULL;
	rsp->data_pool = NULL;
	rsp->pages = 0;
	rsp->sgl = NULL;
	rsp->sg_cnt = 0;
	rsp->req.buf = NULL;
	rsp->req.data_len = 0;
	nvmet_qstat_add(queue->nvme_sq.count.inflight, 1);
	return rsp;
}

static void nvmet_rdma_put_rsp(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;

	if (unlikely(rsp->allocated)) {
		nvmet_rdma_forget(queue->dev, rsp, sizeof(*rsp));
		free(rsp);
	} else {
		nvmet_rdma_rsp_back(rsp);
	}
	/* release: the queue's release work reads it, then frees */
	__atomic_sub_fetch(&queue->nvme_sq.count.inflight, 1, __ATOMIC_RELEASE);
}

static void nvmet_rdma_destroy_ctx(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;

	if (!rsp->n_rdma)
		return;
	rdma_rw_ctx_destroy(&rsp->rw, queue->qp, queue->cm_id->port_num,
			    rsp->sgl, rsp->sg_cnt, rsp->dir);
	rsp->n_rdma = 0;
}

/*
 * Post @rsp's command receive again, once: just before the response SEND,
 * in the section that posts it (one lock for both), or at once when the
 * response has to wait for credits or MRs, as nvmet-rdma does before its
 * response: a host that sees the
 * response may send its next command at once, and on iWARP (no RNR) a
 * SEND that finds no receive terminates the connection.  By then the
 * command buffer is no longer needed: the SQE was read by the handler and
 * in-capsule data (host writes only) consumed by the backend before the
 * command completed; the response lives in the rsp, read data in its own
 * buffer.  A request released without a response posts it there.
 */
static struct nvmet_rdma_cmd *nvmet_rdma_take_cmd(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_cmd *cmd = rsp->cmd;

	rsp->cmd = NULL;
	rsp->req.cmd = NULL;
	rsp->req.buf = NULL;
	return cmd;
}

static void nvmet_rdma_repost_recv(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_cmd *cmd = nvmet_rdma_take_cmd(rsp);

	if (cmd)
		nvmet_rdma_post_recv(cmd);
}

/*
 * The end of a request: credits back, the R/W context destroyed and the
 * data pages returned, the receive posted again (unless the response
 * did); whoever waits for credits, MRs or pages is retried, then the slot
 * returned: the commands waiting for pages only when this one gave
 * some back (an in-capsule write or a read without a copy has none, and
 * a host write's went back with its response, which looked then).
 */
static void nvmet_rdma_release_rsp(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;
	bool pages = rsp->pages;

	if (rsp->credits)
		atomic_add(rsp->credits, &queue->sq_wr_avail);
	rsp->credits = 0;
	nvmet_rdma_destroy_ctx(rsp);
	nvmet_rdma_put_data(rsp);
	nvmet_req_uninit(&rsp->req);
	nvmet_rdma_repost_recv(rsp);
	if (pages)
		nvmet_rdma_process_data_wait_list(queue);
	nvmet_rdma_process_wr_wait_list(queue);
	/*
	 * Last, as the kernel's: the slot's return is the count the queue's
	 * release work waits on before it frees the queue, which the wait
	 * lists above still read.
	 */
	nvmet_rdma_put_rsp(rsp);
}

/* Take @n credits; false (nothing taken) when the Send Queue lacks them. */
static bool nvmet_rdma_take_credits(struct nvmet_rdma_rsp *rsp, int n)
{
	struct nvmet_rdma_queue *queue = rsp->queue;

	if (atomic_sub_return(n, &queue->sq_wr_avail) < 0) {
		atomic_add(n, &queue->sq_wr_avail);
		return false;
	}
	rsp->credits += n;
	return true;
}

static void nvmet_rdma_put_credits(struct nvmet_rdma_rsp *rsp, int n)
{
	atomic_add(n, &rsp->queue->sq_wr_avail);
	rsp->credits -= n;
}

enum nvmet_rdma_try {
	NVMET_RDMA_DONE, /* posted, or finished otherwise */
	NVMET_RDMA_WAIT, /* out of credits or MRs: retry later */
};

/*
 * A read without a copy (nvmet_rdma_zcopy()): the namespace's bytes the
 * read named (req.buf, exactly the command's transfer_len: its LBA range,
 * checked within the namespace) are the RDMA WRITE's one entry, reached
 * through the local DMA key as the pool's pages are: no page of the pool,
 * no memcpy.  They stay mapped until the request drops its namespace
 * reference (nvmet_req_uninit() in release, after the SEND behind the
 * WRITE completed: the WRITE has read them by then, on siw too, see
 * rdmarw__tx_zcopy()).  Once only: a response retried from the wait list
 * keeps its entry (req.buf is cleared when the receive goes back, which
 * a response that waits does before it waits: so this runs as the read
 * completes, in nvmet_rdma_queue_response()).
 */
static void nvmet_rdma_map_zcopy(struct nvmet_rdma_rsp *rsp)
{
	if (rsp->sg_cnt || !rsp->req.buf)
		return;
	sg_init_one(&rsp->data_sg, rsp->req.buf, rsp->req.transfer_len);
	rsp->sgl = &rsp->data_sg;
	rsp->sg_cnt = 1;
}

/* ---- posting ----------------------------------------------------------------------- */

/*
 * One doorbell per poll pass.  In a poll group's turn on a queue
 * (nvmet_rdma_pg_sweep()) the chains its requests post (a response's RDMA
 * WRITEs and SEND, a host write's RDMA READs) are collected on the
 * queue's batch, in the order the requests got there, and posted with one
 * ib_post_send() when the turn ends: on rxe through libibverbs a post is
 * a system call (its doorbell), and on the software device each post has
 * a fixed entry cost.  At the turn's end rather than the pass's (the
 * plug's finish): a queue's responses do not wait for the other members'
 * turns, and a queue is polled once per pass, so the batch is the same.
 * The turn is this thread's (nvmet_rdma_turn): a request of the queue
 * that ends on another thread (an asynchronous backend's, the teardown's)
 * posts at once, as does everything on a CQ thread (its pass has no
 * queue to name; poll groups are the fast mode) and the hook's work.
 * The kernel's nvmet-rdma posts per command (docs/deviations.md).
 */
static __thread struct nvmet_rdma_queue *nvmet_rdma_turn;

/*
 * Does @rsp's R/W context register memory (an iWARP READ's MR, or
 * force_mr)?  Its chain then posts alone, through rdma_rw_ctx_post(),
 * whose failure rolls the MRs' key variants back: rdma_rw_ctx_wrs() has
 * bumped them for a chain that must be posted (rw.h).
 */
static bool nvmet_rdma_regs(const struct nvmet_rdma_rsp *rsp)
{
	return rsp->n_rdma &&
	       (rsp->rw.type == RDMA_RW_MR || rsp->rw.type == RDMA_RW_SIG_MR);
}

/*
 * What @rsp's R/W context ends with: a host write's READs signal read_cqe;
 * a response's WRITEs are followed by its SEND, which is returned (the
 * chain_wr; its next is cleared: the last batch linked it on).
 */
static struct ib_send_wr *nvmet_rdma_chain_end(struct nvmet_rdma_rsp *rsp,
					       struct ib_cqe **cqe)
{
	if (rsp->step == NVMET_RDMA_FETCH) {
		*cqe = &rsp->read_cqe;
		return NULL;
	}
	*cqe = NULL;
	rsp->send_wr.next = NULL;
	return &rsp->send_wr;
}

/* A request that was not posted: what a failed post gives it (@ret). */
static void nvmet_rdma_unposted(struct nvmet_rdma_rsp *rsp, int ret)
{
	if (rsp->step != NVMET_RDMA_FETCH) {
		nvmet_rdma_put_credits(rsp, 1 + rsp->n_rdma);
		nvmet_rdma_release_rsp(rsp);
		return;
	}
	nvmet_rdma_put_credits(rsp, rsp->n_rdma);
	nvmet_rdma_destroy_ctx(rsp);
	if (ret == -ESHUTDOWN)
		nvmet_rdma_release_rsp(rsp);
	else
		nvmet_req_complete(&rsp->req, NVME_SC_DATA_XFER_ERROR);
}

/*
 * Which request holds @bad, the first WR ib_post_send() did not queue, in
 * the chains of @head (each begins at its batch_wr)?  @part: some of its
 * chain's WRs, before @bad, were queued.  NULL when @bad is in none (a
 * provider that did not say where it stopped): then every WR may have
 * been queued, as rdma_rw_ctx_post() reads a NULL @bad, and @part is set.
 */
static struct nvmet_rdma_rsp *nvmet_rdma_find_bad(struct nvmet_rdma_rsp *head,
						  const struct ib_send_wr *bad,
						  bool *part)
{
	const struct ib_send_wr *wr, *end;
	struct nvmet_rdma_rsp *rsp;

	for (rsp = head; rsp; rsp = rsp->batch_next) {
		end = rsp->batch_next ? rsp->batch_next->batch_wr : NULL;
		for (wr = rsp->batch_wr; wr && wr != end; wr = wr->next) {
			if (wr == bad) {
				*part = wr != rsp->batch_wr;
				return rsp;
			}
		}
	}
	*part = true;
	return NULL;
}

/*
 * The post of the requests from @rsp on failed with @ret: out of line.
 * When part of @rsp's chain was queued, the QP goes to ERR before any of
 * them is released (rdma_rw_ctx_post()'s rule for its own chains, rw.h:
 * the queued WRs flush instead of reading or writing pages that go back
 * now) and the queue is torn down.  The requests before @rsp were posted
 * and end with their completions.
 */
static __attribute__((noinline, cold)) void
nvmet_rdma_post_failed(struct nvmet_rdma_queue *queue,
		       struct nvmet_rdma_rsp *rsp, bool part, int ret)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct nvmet_rdma_rsp *next;

	if (ret != -ESHUTDOWN)
		nvmet_err("q%u: posting failed: %d%s", queue->host_qid, ret,
			  part ? " (part-way: the QP goes to ERR)" : "");
	if (part) {
		ib_modify_qp(queue->qp, &attr, IB_QP_STATE);
		nvmet_rdma_queue_disconnect(queue);
	}
	/* each one's end may take its slot again: the link is read first */
	for (; rsp; rsp = next) {
		next = rsp->batch_next;
		nvmet_rdma_unposted(rsp, ret);
	}
}

/*
 * Post the chains of @head and of the requests batch_next links after it,
 * all of @queue's, holding their credits, in order, with one
 * ib_post_send(); @alone: @head comes alone and its context registers
 * memory (nvmet_rdma_regs()), so it posts through rdma_rw_ctx_post().
 * Under state_lock, once: nothing is posted on a queue that is no longer
 * LIVE, and the responses' command receives are posted again first, with
 * one ib_post_recv() (a host that sees a response may send its next
 * command at once: nvmet_rdma_repost_recv(); a receive that fails to post
 * is not retried, as before).  A posted SEND may complete and its slot be
 * taken again on the CQ's thread at once: a batch's CQ is this thread's
 * (the turn's), so the walk of a failed post after it reads no slot taken
 * again; a post at once is of one request.  The requests from the first
 * one ib_post_send() did not post on get what a failed post gives
 * (nvmet_rdma_unposted()); the ones before were posted.
 */
static void nvmet_rdma_post_list(struct nvmet_rdma_queue *queue,
				 struct nvmet_rdma_rsp *head, bool alone)
{
	u32 port_num = queue->cm_id->port_num;
	struct nvmet_rdma_rsp *rsp, *failed = NULL;
	struct ib_send_wr *first = NULL, **link = &first, *chain_wr = NULL;
	struct ib_recv_wr *recvs = NULL, **rlink = &recvs;
	const struct ib_send_wr *bad = NULL;
	struct nvmet_rdma_cmd *cmd;
	struct ib_cqe *cqe = NULL;
	bool part = false;
	int ret = 0;

	spin_lock(&queue->state_lock);
	if (queue->state != NVMET_RDMA_Q_LIVE) {
		ret = -ESHUTDOWN;
		failed = head;
		goto out;
	}
	for (rsp = head; rsp; rsp = rsp->batch_next) {
		if (rsp->step != NVMET_RDMA_FETCH) {
			cmd = nvmet_rdma_take_cmd(rsp);
			if (cmd) {
				*rlink = &cmd->wr;
				rlink = &cmd->wr.next;
			}
		}
		chain_wr = nvmet_rdma_chain_end(rsp, &cqe);
		if (unlikely(alone))
			break;
		*link = rsp->n_rdma ? rdma_rw_ctx_wrs(&rsp->rw, queue->qp,
						      port_num, cqe, chain_wr) :
				      chain_wr;
		if (unlikely(!*link)) {
			/* not a context of this QP: as rdma_rw_ctx_post() */
			ret = -EINVAL;
			failed = rsp;
			break;
		}
		rsp->batch_wr = *link;
		if (chain_wr) {
			link = &chain_wr->next; /* a response ends with its SEND */
		} else {
			while (*link)
				link = &(*link)->next;
		}
	}
	*rlink = NULL;
	if (recvs)
		ib_post_recv(queue->qp, recvs, NULL);
	if (unlikely(alone && !ret)) {
		ret = rdma_rw_ctx_post(&rsp->rw, queue->qp, port_num, cqe,
				       chain_wr);
		failed = ret ? rsp : NULL;
	} else if (first) {
		int err = ib_post_send(queue->qp, first, &bad);

		if (unlikely(err)) {
			ret = err;
			failed = nvmet_rdma_find_bad(head, bad, &part);
		}
	}
out:
	spin_unlock(&queue->state_lock);
	if (unlikely(ret))
		nvmet_rdma_post_failed(queue, failed, part, ret);
}

/* Post what @queue's batch holds (the end of its turn). */
static void nvmet_rdma_flush(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_rsp *head = queue->batch;

	if (!head)
		return;
	queue->batch = NULL;
	nvmet_rdma_post_list(queue, head, false);
}

/*
 * Post @rsp's chain (its credits taken): on its queue's batch during the
 * queue's turn on this thread, else at once.  A chain that registers
 * memory posts alone, after the batch (in order).
 */
static void nvmet_rdma_post(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;
	bool regs = nvmet_rdma_regs(rsp);

	rsp->batch_next = NULL;
	if (queue == nvmet_rdma_turn) {
		if (likely(!regs)) {
			if (queue->batch)
				queue->batch_last->batch_next = rsp;
			else
				queue->batch = rsp;
			queue->batch_last = rsp;
			return;
		}
		nvmet_rdma_flush(queue);
	}
	nvmet_rdma_post_list(queue, rsp, regs);
}

/*
 * Send the response of @rsp: after its data (RDMA WRITEs, chained before
 * the SEND, one post) when the command read from the namespace.
 */
static enum nvmet_rdma_try nvmet_rdma_try_respond(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;
	u32 port_num = queue->cm_id->port_num;
	int ret;

	if (rsp->req.data_to_host && rsp->keyed && rsp->sg_cnt &&
	    !rsp->n_rdma) {
		ret = rdma_rw_ctx_init(&rsp->rw, queue->qp, port_num, rsp->sgl,
				       rsp->sg_cnt, 0, rsp->remote_addr,
				       rsp->rkey, DMA_TO_DEVICE);
		if (ret == -EAGAIN)
			return NVMET_RDMA_WAIT;
		if (ret < 0) {
			nvmet_err("q%u: rdma_rw_ctx_init(WRITE): %d",
				  queue->host_qid, ret);
			rsp->req.data_to_host = false;
			rsp->cqe.status = cpu_to_le16(NVME_SC_INTERNAL << 1);
			nvmet_stat_add(queue->tr->tgt->errors, 1);
		} else {
			rsp->n_rdma = ret;
			rsp->dir = DMA_TO_DEVICE;
		}
	}
	if (!nvmet_rdma_take_credits(rsp, 1 + rsp->n_rdma))
		return NVMET_RDMA_WAIT;

	/* the rest of send_wr is as nvmet_rdma_init_rsp() built it */
	if (rsp->invalidate && queue->dev->send_inv) {
		rsp->send_wr.opcode = IB_WR_SEND_WITH_INV;
		rsp->send_wr.ex.invalidate_rkey = rsp->invalidate_rkey;
	} else {
		rsp->send_wr.opcode = IB_WR_SEND;
	}
	nvmet_rdma_post(rsp);
	return NVMET_RDMA_DONE;
}

/* Fetch a host write's data: RDMA READ into the request's buffer. */
static enum nvmet_rdma_try nvmet_rdma_try_fetch(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;
	u32 port_num = queue->cm_id->port_num;
	int ret;

	if (!rsp->n_rdma) {
		ret = rdma_rw_ctx_init(&rsp->rw, queue->qp, port_num, rsp->sgl,
				       rsp->sg_cnt, 0, rsp->remote_addr,
				       rsp->rkey, DMA_FROM_DEVICE);
		if (ret == -EAGAIN)
			return NVMET_RDMA_WAIT;
		if (ret < 0) {
			nvmet_err("q%u: rdma_rw_ctx_init(READ): %d",
				  queue->host_qid, ret);
			nvmet_req_complete(&rsp->req, NVME_SC_INTERNAL);
			return NVMET_RDMA_DONE;
		}
		rsp->n_rdma = ret;
		rsp->dir = DMA_FROM_DEVICE;
	}
	if (!nvmet_rdma_take_credits(rsp, rsp->n_rdma))
		return NVMET_RDMA_WAIT;
	nvmet_rdma_post(rsp);
	return NVMET_RDMA_DONE;
}

static enum nvmet_rdma_try nvmet_rdma_try(struct nvmet_rdma_rsp *rsp)
{
	return rsp->step == NVMET_RDMA_FETCH ? nvmet_rdma_try_fetch(rsp) :
					       nvmet_rdma_try_respond(rsp);
}

/*
 * Put @rsp at the end of a wait list and count it in @nr (rsp_wr_wait_lock
 * held); the count drops when it leaves the list for good.
 */
static void nvmet_rdma_wait_add(struct nvmet_rdma_rsp *rsp,
				struct list_head *list, u32 *nr)
{
	list_add_tail(&rsp->wait_list, list);
	__atomic_add_fetch(nr, 1, __ATOMIC_SEQ_CST);
}

/* Move a wait list's requests to @to, uncounted (rsp_wr_wait_lock held). */
static void nvmet_rdma_wait_take(struct list_head *list, u32 *nr,
				 struct list_head *to)
{
	struct list_head *pos;
	u32 n = 0;

	list_for_each(pos, list) n++;
	__atomic_sub_fetch(nr, n, __ATOMIC_SEQ_CST);
	list_splice_tail_init(list, to);
}

/*
 * Does nothing wait on the list @nr counts?  The lock-free look of the
 * releases and completions that give credits, MRs or pages back, made
 * after the return (an atomic add, or the pool's unlock): a read-modify-
 * write, so it reads the newest count.  A waiter counts itself before it
 * tries again, so either that count comes after this look in @nr's order,
 * and then synchronizes with it (the waiter's retry sees what came back),
 * or this sees the waiter and runs the list under the lock as before.
 */
static bool nvmet_rdma_nothing_waits(u32 *nr)
{
	return !__atomic_fetch_add(nr, 0, __ATOMIC_SEQ_CST);
}

/*
 * Run @rsp's next step now, or queue it behind those already waiting (in
 * order: a request never overtakes one that waits).
 */
static void nvmet_rdma_run_or_wait(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;

	/*
	 * Nothing waits (the count covers the list and the one being
	 * retried): go ahead without the lock.  A request that starts to
	 * wait just after this look could be overtaken, as it could after
	 * a look under the lock that is let go before the try.
	 */
	if (nvmet_rdma_nothing_waits(&queue->nr_wr_waiting) &&
	    nvmet_rdma_try(rsp) == NVMET_RDMA_DONE)
		return;
	/* a response that waits gives its command's receive back now */
	if (rsp->step == NVMET_RDMA_RESPOND)
		nvmet_rdma_repost_recv(rsp);
	spin_lock(&queue->rsp_wr_wait_lock);
	nvmet_rdma_wait_add(rsp, &queue->rsp_wr_wait_list,
			    &queue->nr_wr_waiting);
	spin_unlock(&queue->rsp_wr_wait_lock);
	/* credits may have come back in between */
	nvmet_rdma_process_wr_wait_list(queue);
}

/*
 * Retry the waiting requests in order, until one still waits.  One caller
 * at a time runs the list: a step run from it can end in another call
 * (an execute's response queued behind the others), and a request
 * released on another thread calls it too; such a call only asks the
 * runner to go on (wr_wait_again), so the stack stays flat and a return
 * of credits, MRs or pages while the head was being tried is not missed.
 */
static void nvmet_rdma_process_wr_wait_list(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_rsp *rsp;

	if (nvmet_rdma_nothing_waits(&queue->nr_wr_waiting))
		return;
	spin_lock(&queue->rsp_wr_wait_lock);
	if (queue->wr_wait_busy) {
		queue->wr_wait_again = true;
		spin_unlock(&queue->rsp_wr_wait_lock);
		return;
	}
	queue->wr_wait_busy = true;
	while (!list_empty(&queue->rsp_wr_wait_list) &&
	       READ_ONCE(queue->state) == NVMET_RDMA_Q_LIVE) {
		rsp = list_first_entry(&queue->rsp_wr_wait_list,
				       struct nvmet_rdma_rsp, wait_list);
		list_del_init(&rsp->wait_list);
		queue->wr_wait_again = false;
		spin_unlock(&queue->rsp_wr_wait_lock);
		if (nvmet_rdma_try(rsp) == NVMET_RDMA_WAIT) {
			spin_lock(&queue->rsp_wr_wait_lock);
			list_add(&rsp->wait_list, &queue->rsp_wr_wait_list);
			if (!queue->wr_wait_again)
				break;
			continue;
		}
		/* it waits no more (counted until its try succeeded) */
		__atomic_sub_fetch(&queue->nr_wr_waiting, 1, __ATOMIC_SEQ_CST);
		spin_lock(&queue->rsp_wr_wait_lock);
	}
	queue->wr_wait_busy = false;
	spin_unlock(&queue->rsp_wr_wait_lock);
}

/* A command's data pages are there: fetch (host write) or execute. */
static void nvmet_rdma_data_ready(struct nvmet_rdma_rsp *rsp)
{
	/* only a host write's pages are an RDMA READ's sink */
	if (rsp->queue->dev->reg_per_cmd && !rsp->data_pool->declared) {
		if (nvmet_rdma_declare(rsp->queue->dev, rsp->data,
				       (size_t)rsp->pages * PAGE_SIZE,
				       rsp->step != NVMET_RDMA_FETCH)) {
			nvmet_log("q%u: registering %u pages of data failed",
				  rsp->queue->host_qid, rsp->pages);
			nvmet_req_complete(&rsp->req, NVME_SC_INTERNAL);
			return;
		}
		rsp->data_declared = true;
	}
	if (rsp->step == NVMET_RDMA_FETCH)
		nvmet_rdma_run_or_wait(rsp);
	else
		rsp->req.execute(&rsp->req);
}

/*
 * Retry the commands waiting for pages, in order, one runner at a time
 * (as the list above).  The pages are tried under rsp_wr_wait_lock, so a
 * release that finds the list busy either gave its pages back before the
 * runner's next try, or runs the list itself once the runner has let go.
 */
static void nvmet_rdma_process_data_wait_list(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_rsp *rsp;

	if (nvmet_rdma_nothing_waits(&queue->nr_data_waiting))
		return;
	spin_lock(&queue->rsp_wr_wait_lock);
	if (queue->data_wait_busy) {
		spin_unlock(&queue->rsp_wr_wait_lock);
		return;
	}
	queue->data_wait_busy = true;
	while (!list_empty(&queue->rsp_data_wait_list) &&
	       READ_ONCE(queue->state) == NVMET_RDMA_Q_LIVE) {
		rsp = list_first_entry(&queue->rsp_data_wait_list,
				       struct nvmet_rdma_rsp, wait_list);
		if (!nvmet_rdma_get_data(rsp))
			break;
		list_del_init(&rsp->wait_list);
		__atomic_sub_fetch(&queue->nr_data_waiting, 1,
				   __ATOMIC_SEQ_CST);
		spin_unlock(&queue->rsp_wr_wait_lock);
		nvmet_rdma_data_ready(rsp);
		spin_lock(&queue->rsp_wr_wait_lock);
	}
	queue->data_wait_busy = false;
	spin_unlock(&queue->rsp_wr_wait_lock);
}

/*
 * Take @rsp's data pages and go on, or wait for them behind those already
 * waiting.
 */
static void nvmet_rdma_get_data_or_wait(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;
	bool waiting;

	/* no one waits for pages: take them without the wait lists' lock */
	if (nvmet_rdma_nothing_waits(&queue->nr_data_waiting) &&
	    nvmet_rdma_get_data(rsp)) {
		nvmet_rdma_data_ready(rsp);
		return;
	}
	spin_lock(&queue->rsp_wr_wait_lock);
	waiting = !list_empty(&queue->rsp_data_wait_list);
	if (waiting || !nvmet_rdma_get_data(rsp)) {
		nvmet_rdma_wait_add(rsp, &queue->rsp_data_wait_list,
				    &queue->nr_data_waiting);
		waiting = true;
	}
	spin_unlock(&queue->rsp_wr_wait_lock);
	if (!waiting) {
		nvmet_rdma_data_ready(rsp);
		return;
	}
	nvmet_stat_add(queue->tr->tgt->data_waits, 1);
	nvmet_qstat_add(nvmet_req_stats(&rsp->req)->data_waits, 1);
	/* pages may have come back in between */
	nvmet_rdma_process_data_wait_list(queue);
}

/* The core's queue_response: the CQE is filled in. */
static void nvmet_rdma_queue_response(struct nvmet_req *req)
{
	struct nvmet_rdma_rsp *rsp =
		container_of(req, struct nvmet_rdma_rsp, req);

	rsp->step = NVMET_RDMA_RESPOND;
	if (req->data_to_host && req->zcopy && rsp->keyed)
		nvmet_rdma_map_zcopy(rsp);
	/*
	 * A failed command sends no data: no WRITE context; and a host
	 * write's data is in the backend: its pages go back now.
	 */
	if (!req->data_to_host) {
		nvmet_rdma_destroy_ctx(rsp);
		if (rsp->pages) {
			nvmet_rdma_put_data(rsp);
			nvmet_rdma_process_data_wait_list(rsp->queue);
		}
	}
	/* the receive goes back with the response, or at once if it waits */
	nvmet_rdma_run_or_wait(rsp);
}

static void nvmet_rdma_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nvmet_rdma_rsp *rsp =
		container_of(wc->wr_cqe, struct nvmet_rdma_rsp, send_cqe);
	struct nvmet_rdma_queue *queue = rsp->queue;

	/*
	 * An authentication failure: the host has its answer; it closes the
	 * queue itself, or the controller goes after a grace period.
	 */
	if (unlikely(rsp->req.fatal_after_send)) {
		rsp->req.fatal_after_send = false;
		queue_delayed_work(queue->tr->tgt->wq, &queue->auth_fail_work,
				   msecs_to_jiffies(NVMET_RDMA_AUTH_FAIL_MS));
	}
	nvmet_rdma_release_rsp(rsp);
	if (unlikely(wc->status != IB_WC_SUCCESS &&
		     wc->status != IB_WC_WR_FLUSH_ERR)) {
		nvmet_err("q%u: response SEND failed: %s", queue->host_qid,
			  ib_wc_status_msg(wc->status));
		nvmet_rdma_queue_disconnect(queue);
	}
}

static void nvmet_rdma_read_data_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nvmet_rdma_rsp *rsp =
		container_of(wc->wr_cqe, struct nvmet_rdma_rsp, read_cqe);
	struct nvmet_rdma_queue *queue = rsp->queue;

	nvmet_rdma_put_credits(rsp, rsp->n_rdma);
	nvmet_rdma_destroy_ctx(rsp);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status == IB_WC_WR_FLUSH_ERR) {
			nvmet_rdma_release_rsp(rsp);
			return;
		}
		/*
		 * A bad rkey or a host gone mid-transfer: the QP is in
		 * error, so the status most likely never arrives; the queue
		 * is torn down either way.
		 */
		nvmet_err("q%u: RDMA READ failed: %s", queue->host_qid,
			  ib_wc_status_msg(wc->status));
		nvmet_rdma_queue_disconnect(queue);
		nvmet_req_complete(&rsp->req, NVME_SC_DATA_XFER_ERROR);
		return;
	}
	nvmet_rdma_process_wr_wait_list(queue);
	rsp->req.execute(&rsp->req);
}

/* ---- commands ------------------------------------------------------------------------ */

static u16 nvmet_rdma_map_sgl_inline(struct nvmet_rdma_rsp *rsp)
{
	struct nvme_sgl_desc *sgl = &rsp->req.cmd->common.dptr.sgl;
	u64 off = le64_to_cpu(sgl->addr);
	u32 len = le32_to_cpu(sgl->length);
	u32 avail = rsp->cmd->byte_len - (u32)sizeof(struct nvme_command);

	if (!nvme_opcode_is_write(rsp->req.cmd->common.opcode)) {
		rsp->req.error_loc = offsetof(struct nvme_common_command, dptr);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	if (off > rsp->queue->inline_data_size ||
	    len > rsp->queue->inline_data_size - off) {
		rsp->req.error_loc = offsetof(struct nvme_common_command, dptr);
		return NVME_SC_SGL_INVALID_OFFSET | NVME_SC_DNR;
	}
	/* the capsule must hold what the descriptor says it holds */
	if (off > avail || len > avail - off) {
		rsp->req.error_loc = offsetof(struct nvme_common_command, dptr);
		return NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR;
	}
	if (!len)
		return 0;
	rsp->req.buf = (char *)(rsp->req.cmd + 1) + off;
	rsp->req.data_len = len;
	return 0;
}

static u16 nvmet_rdma_map_sgl_keyed(struct nvmet_rdma_rsp *rsp, bool inv)
{
	struct nvme_keyed_sgl_desc *sgl = &rsp->req.cmd->common.dptr.ksgl;
	u32 len = nvme_get_le24(sgl->length);
	u32 max = (u32)PAGE_SIZE << rsp->queue->dev->mdts;

	rsp->keyed = true;
	rsp->remote_addr = le64_to_cpu(sgl->addr);
	rsp->rkey = nvme_get_le32(sgl->key);
	if (!len)
		return 0;
	if (len > max) {
		nvmet_log("q%u: %u bytes over MDTS (%u)", rsp->queue->host_qid,
			  len, max);
		rsp->req.error_loc = offsetof(struct nvme_common_command, dptr);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	/*
	 * The pages come from the queue's pool when the command runs
	 * (nvmet_rdma_get_data(): it may wait for them, never fails).
	 */
	rsp->req.data_len = len;
	/*
	 * Only a command whose data is mapped answers with SEND_WITH_INV, as
	 * nvmet does: a refused one (no data, over MDTS) may name a key the
	 * host never registered.
	 */
	if (inv) {
		rsp->invalidate = true;
		rsp->invalidate_rkey = rsp->rkey;
	}
	return 0;
}

static u16 nvmet_rdma_map_sgl(struct nvmet_rdma_rsp *rsp)
{
	u8 type = rsp->req.cmd->common.dptr.sgl.type;

	switch (type >> 4) {
	case NVME_SGL_FMT_DATA_DESC:
		switch (type & 0x0f) {
		case NVME_SGL_FMT_OFFSET:
			return nvmet_rdma_map_sgl_inline(rsp);
		default:
			nvmet_log("q%u: invalid in-capsule SGL subtype %#x",
				  rsp->queue->host_qid, type);
			rsp->req.error_loc =
				offsetof(struct nvme_common_command, dptr);
			return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		}
	case NVME_KEY_SGL_FMT_DATA_DESC:
		switch (type & 0x0f) {
		case NVME_SGL_FMT_ADDRESS | NVME_SGL_FMT_INVALIDATE:
			return nvmet_rdma_map_sgl_keyed(rsp, true);
		case NVME_SGL_FMT_ADDRESS:
			return nvmet_rdma_map_sgl_keyed(rsp, false);
		default:
			nvmet_log("q%u: invalid keyed SGL subtype %#x",
				  rsp->queue->host_qid, type);
			rsp->req.error_loc =
				offsetof(struct nvme_common_command, dptr);
			return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		}
	default:
		nvmet_log("q%u: invalid SGL type %#x", rsp->queue->host_qid,
			  type);
		rsp->req.error_loc = offsetof(struct nvme_common_command, dptr);
		return NVME_SC_SGL_INVALID_TYPE | NVME_SC_DNR;
	}
}

/*
 * May @rsp's Read go out of the namespace itself (no pool page): on a
 * device whose local key reaches any memory of the process (the software
 * device; not a libibverbs one, whose key reaches what was registered),
 * for an admitted queue's Read of a namespace that hands out its bytes.
 */
static bool nvmet_rdma_zcopy(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;

	if (!queue->dev->zcopy || !queue->admitted ||
	    !nvmet_req_zcopy_read(&rsp->req))
		return false;
	rsp->req.zcopy = true;
	return true;
}

static void nvmet_rdma_handle_command(struct nvmet_rdma_queue *queue,
				      struct nvmet_rdma_rsp *rsp)
{
	u16 status;

	rsp->req.zcopy = false;
	if (!nvmet_req_init(&rsp->req, &queue->nvme_cq, &queue->nvme_sq,
			    &nvmet_rdma_ops))
		return;
	status = nvmet_rdma_map_sgl(rsp);
	if (status) {
		nvmet_req_complete(&rsp->req, status);
		return;
	}
	/* before a Connect: its 1 KiB, from a page of its own (cpool) */
	if (!queue->admitted && rsp->req.data_len > PAGE_SIZE) {
		rsp->req.error_loc = offsetof(struct nvme_common_command, dptr);
		nvmet_req_complete(&rsp->req,
				   NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
		return;
	}
	/* keyed data: pages from the pool first (in order with waiters) */
	if (rsp->keyed && rsp->req.data_len && !nvmet_rdma_zcopy(rsp)) {
		rsp->step = nvme_opcode_is_write(rsp->req.cmd->common.opcode) ?
				    NVMET_RDMA_FETCH :
				    NVMET_RDMA_EXECUTE;
		nvmet_rdma_get_data_or_wait(rsp);
		return;
	}
	rsp->req.execute(&rsp->req);
}

/*
 * A capsule too short for its SQE: answered with Invalid Field when it
 * holds a command id to answer to, else the queue is torn down.
 */
static bool nvmet_rdma_short_capsule(struct nvmet_rdma_queue *queue,
				     struct nvmet_rdma_rsp *rsp, u32 len)
{
	nvmet_log("q%u: capsule of %u bytes (an SQE is 64)", queue->host_qid,
		  len);
	if (len < 4 || !queue->nvme_sq.ctrl)
		return false;
	memset((char *)rsp->cmd->nvme_cmd + len, 0,
	       sizeof(struct nvme_command) - len);
	memset(&rsp->cqe, 0, sizeof(rsp->cqe));
	rsp->req.cq = &queue->nvme_cq;
	rsp->req.sq = &queue->nvme_sq;
	rsp->req.ops = &nvmet_rdma_ops;
	rsp->req.data_to_host = false;
	nvmet_qstat_add(queue->nvme_sq.count.cmds, 1);
	nvmet_req_complete(&rsp->req, NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	return true;
}

static void nvmet_rdma_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct nvmet_rdma_cmd *cmd =
		container_of(wc->wr_cqe, struct nvmet_rdma_cmd, cqe);
	struct nvmet_rdma_queue *queue = cmd->queue;
	struct nvmet_rdma_rsp *rsp;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			nvmet_err("q%u: receive failed: %s", queue->host_qid,
				  ib_wc_status_msg(wc->status));
			nvmet_rdma_queue_disconnect(queue);
		}
		return;
	}
	cmd->byte_len = wc->byte_len;
	rsp = nvmet_rdma_get_rsp(queue);
	if (unlikely(!rsp)) {
		nvmet_err("q%u: no memory for a command", queue->host_qid);
		nvmet_rdma_queue_disconnect(queue);
		return;
	}
	rsp->cmd = cmd;
	rsp->req.cmd = cmd->nvme_cmd;
	rsp->req.port = queue->port;
	rsp->req.cqe = &rsp->cqe;

	if (unlikely(wc->byte_len < sizeof(struct nvme_command))) {
		if (!nvmet_rdma_short_capsule(queue, rsp, wc->byte_len)) {
			nvmet_rdma_queue_disconnect(queue);
			nvmet_rdma_release_rsp(rsp);
		}
		return;
	}
	/*
	 * Live: no lock.  A live queue only ever goes DISCONNECTING, which
	 * may as well happen just after an unlock, and every post checks the
	 * state again under the lock; the lock is for the way to LIVE.
	 */
	if (likely(__atomic_load_n(&queue->state, __ATOMIC_ACQUIRE) ==
		   NVMET_RDMA_Q_LIVE)) {
		nvmet_rdma_handle_command(queue, rsp);
		return;
	}
	spin_lock(&queue->state_lock);
	if (queue->state == NVMET_RDMA_Q_CONNECTING) {
		/* the host's Connect can beat our ESTABLISHED */
		list_add_tail(&rsp->wait_list, &queue->rsp_wait_list);
		spin_unlock(&queue->state_lock);
		return;
	}
	if (queue->state != NVMET_RDMA_Q_LIVE) {
		spin_unlock(&queue->state_lock);
		nvmet_rdma_release_rsp(rsp);
		return;
	}
	spin_unlock(&queue->state_lock);
	nvmet_rdma_handle_command(queue, rsp);
}

/* ---- poll groups ----------------------------------------------------------------------- */

/* Completions a member's CQ gives per sweep: the others' turn comes. */
#define NVMET_RDMA_PG_BUDGET 32
#define NVMET_RDMA_PG_IDLE_US 50 /* default poll_idle_us */

static u64 nvmet_rdma_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* Wake @g's thread if it sleeps (@lock held). */
static void nvmet_rdma_pg_wake(struct nvmet_rdma_poll_group *g)
{
	u64 one = 1;

	if (!g->sleeping)
		return;
	if (!g->sleep_fds)
		pthread_cond_signal(&g->wake);
	else if (write(g->wake_fd, &one, sizeof(one)) != sizeof(one))
		return; /* full: readable already */
}

/* The comp_handler of a polled queue's CQ: it was armed, the group sleeps. */
static void nvmet_rdma_pg_kick(struct ib_cq *cq, void *ctx)
{
	struct nvmet_rdma_queue *queue = ctx;
	struct nvmet_rdma_poll_group *g = queue->pg;

	pthread_mutex_lock(&g->lock);
	g->kick = true;
	nvmet_rdma_pg_wake(g);
	pthread_mutex_unlock(&g->lock);
}

/* All members' events back to their CQs; the group sleeps on @wake. */
static void nvmet_rdma_pg_give_all(struct nvmet_rdma_poll_group *g)
{
	struct nvmet_rdma_queue *queue;

	list_for_each_entry(queue, &g->members, pg_entry)
	{
		if (queue->pg_ev_taken)
			rdmarw_cq_events_give(queue->cq);
		queue->pg_ev_taken = false;
	}
	g->npfds = 0;
}

/*
 * What the group's poll() waits on, after joins and leaves (the group's
 * thread, not asleep): @wake_fd and the members' event descriptors.  A
 * member whose events stay its CQ's (another device) wakes the group
 * through nvmet_rdma_pg_kick(), which writes @wake_fd then.  None taken:
 * the group sleeps on @wake, as on the software device.
 */
static void nvmet_rdma_pg_fds(struct nvmet_rdma_poll_group *g)
{
	struct nvmet_rdma_queue *queue;
	struct pollfd *p;
	u32 n = 1;
	int i;

	list_for_each_entry(queue, &g->members, pg_entry)
	{
		if (queue->pg_ev_taken)
			n += (u32)queue->pg_ev.nfds;
	}
	g->npfds = 0;
	if (n == 1)
		return;
	if (n > g->pfds_cap) {
		p = realloc(g->pfds, n * sizeof(*p));
		if (!p) {
			nvmet_err("poll group: no memory for its poll(): "
				  "its CQs wake it through their threads");
			nvmet_rdma_pg_give_all(g);
			return;
		}
		g->pfds = p;
		g->pfds_cap = n;
	}
	p = g->pfds;
	*p++ = (struct pollfd){ .fd = g->wake_fd, .events = POLLIN };
	list_for_each_entry(queue, &g->members, pg_entry)
	{
		if (!queue->pg_ev_taken)
			continue;
		for (i = 0; i < queue->pg_ev.nfds; i++)
			*p++ = (struct pollfd){ .fd = queue->pg_ev.fd[i],
						.events = POLLIN };
	}
	g->npfds = n;
}

/* Joins and leaves, on the group's thread; returns whether to stop. */
static bool nvmet_rdma_pg_apply(struct nvmet_rdma_poll_group *g)
{
	struct nvmet_rdma_queue *queue;
	bool stop;

	pthread_mutex_lock(&g->lock);
	while (!list_empty(&g->pending)) {
		queue = list_first_entry(&g->pending, struct nvmet_rdma_queue,
					 pg_req);
		list_del_init(&queue->pg_req);
		if (queue->pg_op == NVMET_RDMA_PG_ADD) {
			list_add_tail(&queue->pg_entry, &g->members);
			queue->pg_member = true;
			/* -EOPNOTSUPP on the software device */
			queue->pg_ev_taken = g->wake_fd >= 0 &&
					     !rdmarw_cq_events_take(
						     queue->cq, &queue->pg_ev);
			if (queue->pg_ev_taken)
				nvmet_log("q%u: its CQ's events go to its "
					  "poll group's poll()",
					  queue->host_qid);
			nvmet_stat_add(g->tr->tgt->poll_members, 1);
		} else {
			list_del_init(&queue->pg_entry);
			/* no longer polled: its comp_handler again, before
			 * the leaving queue's caller goes on */
			if (queue->pg_ev_taken)
				rdmarw_cq_events_give(queue->cq);
			queue->pg_ev_taken = false;
			queue->pg_member = false;
			nvmet_stat_add(g->tr->tgt->poll_members, (u64)-1);
		}
		queue->pg_op = NVMET_RDMA_PG_NONE;
	}
	if (g->hook_asked) {
		g->hook = g->new_hook;
		g->hook_arg = g->new_hook_arg;
		g->hook_asked = false;
	}
	stop = g->stop;
	__atomic_store_n(&g->changed, stop, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&g->applied);
	pthread_mutex_unlock(&g->lock);
	nvmet_rdma_pg_fds(g);
	return stop;
}

/*
 * One turn over the members, a batch for the backends (a plug: their
 * submissions go at its end); returns the completions processed.
 */
static int nvmet_rdma_pg_sweep(struct nvmet_rdma_poll_group *g)
{
	struct nvmet_rdma_queue *queue;
	struct nvmet_plug plug;
	int n, done = 0;

	nvmet_plug_start(&plug);
	list_for_each_entry(queue, &g->members, pg_entry)
	{
		/* its turn: what its requests post goes in one post at the end */
		nvmet_rdma_turn = queue;
		n = ib_process_cq_direct(queue->cq, NVMET_RDMA_PG_BUDGET);
		nvmet_rdma_turn = NULL;
		nvmet_rdma_flush(queue);
		if (n > 0)
			done += n;
	}
	nvmet_plug_finish(&plug);
	return done;
}

/*
 * Asleep in poll() (@lock not held, @sleep_fds set): until @wake_fd or a
 * member's event descriptor is readable.  An event raised between the arm
 * and poll() keeps its descriptor readable, so none is lost.  Clears what
 * woke it; returns whether a member's CQ event did.  A wake-up with
 * nothing to do is harmless: the sweep finds nothing, the group sleeps
 * again.
 */
static bool nvmet_rdma_pg_sleep_fds(struct nvmet_rdma_poll_group *g)
{
	struct nvmet_rdma_queue *queue;
	struct pollfd *p = g->pfds + 1;
	bool woken = false;
	u64 val;
	int i, ready;

	g->fd_sleeps++;
	do
		ready = poll(g->pfds, g->npfds, -1);
	while (ready < 0 && errno == EINTR);
	if (ready < 0) /* out of memory: sweep, then sleep again */
		return false;
	if (g->pfds[0].revents &&
	    read(g->wake_fd, &val, sizeof(val)) != sizeof(val))
		val = 0; /* drained already */
	list_for_each_entry(queue, &g->members, pg_entry)
	{
		bool ready_q = false;

		if (!queue->pg_ev_taken)
			continue;
		for (i = 0; i < queue->pg_ev.nfds; i++, p++)
			ready_q |= p->revents != 0;
		if (ready_q && rdmarw_cq_events_consume(queue->cq) > 0)
			woken = true;
	}
	g->fd_wakeups += woken;
	return woken;
}

/*
 * Idle: arm every member's CQ and sleep until one gets a completion or the
 * members change.  A completion that came before its CQ was armed is
 * reported by the arm (missed event): then no sleep.
 */
static void nvmet_rdma_pg_sleep(struct nvmet_rdma_poll_group *g)
{
	struct nvmet_target *t = g->tr->tgt;
	struct nvmet_rdma_queue *queue;
	bool woken = false;

	list_for_each_entry(queue, &g->members, pg_entry) if (
		ib_req_notify_cq(queue->cq,
				 IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS) >
		0) return;
	pthread_mutex_lock(&g->lock);
	if (!g->kick && !__atomic_load_n(&g->changed, __ATOMIC_RELAXED)) {
		g->sleeping = true;
		nvmet_stat_add(t->poll_sleeps, 1);
		nvmet_stat_add(t->poll_asleep, 1);
		if (g->npfds) {
			g->sleep_fds = true;
			pthread_mutex_unlock(&g->lock);
			woken = nvmet_rdma_pg_sleep_fds(g);
			pthread_mutex_lock(&g->lock);
			g->sleep_fds = false;
		} else {
			while (!g->kick &&
			       !__atomic_load_n(&g->changed, __ATOMIC_RELAXED))
				pthread_cond_wait(&g->wake, &g->lock);
		}
		g->sleeping = false;
		nvmet_stat_add(t->poll_asleep, (u64)-1);
		if (g->kick || woken)
			nvmet_stat_add(t->poll_wakeups, 1);
	}
	g->kick = false;
	pthread_mutex_unlock(&g->lock);
}

/* The caller's work of a pass (nvmet_target_poll_hook()): its count. */
static int nvmet_rdma_pg_hook(struct nvmet_rdma_poll_group *g)
{
	int n;

	if (!g->hook)
		return 0;
	n = g->hook(g->hook_arg);
	return n > 0 ? n : 0;
}

static void *nvmet_rdma_pg_thread(void *arg)
{
	struct nvmet_rdma_poll_group *g = arg;
	u64 idle_since = 0, now;

	for (;;) {
		if (__atomic_load_n(&g->changed, __ATOMIC_RELAXED) &&
		    nvmet_rdma_pg_apply(g))
			break;
		if (nvmet_rdma_pg_sweep(g) + nvmet_rdma_pg_hook(g) > 0) {
			idle_since = 0;
			continue;
		}
		/* a peer on this CPU (the host of bench-nvmet) runs now */
		sched_yield();
		if (g->busy)
			continue;
		now = nvmet_rdma_now_ns();
		if (!idle_since) {
			idle_since = now;
		} else if (now - idle_since >= g->idle_ns) {
			nvmet_rdma_pg_sleep(g);
			idle_since = 0;
		}
	}
	return NULL;
}

/* Ask @g's thread to apply @pending (lock held). */
static void nvmet_rdma_pg_changed(struct nvmet_rdma_poll_group *g)
{
	__atomic_store_n(&g->changed, true, __ATOMIC_RELAXED);
	nvmet_rdma_pg_wake(g);
}

/* @queue (its CQ IB_POLL_DIRECT, not yet polled) joins a group. */
static void nvmet_rdma_pg_add(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_transport *tr = queue->tr;
	u32 i = __atomic_fetch_add(&tr->next_group, 1, __ATOMIC_RELAXED);
	struct nvmet_rdma_poll_group *g = &tr->groups[i % tr->nr_groups];

	queue->pg = g;
	queue->cq->comp_handler = nvmet_rdma_pg_kick;
	pthread_mutex_lock(&g->lock);
	queue->pg_op = NVMET_RDMA_PG_ADD;
	list_add_tail(&queue->pg_req, &g->pending);
	nvmet_rdma_pg_changed(g);
	pthread_mutex_unlock(&g->lock);
}

/*
 * @queue leaves its group: when this returns true, the group's thread no
 * longer polls its CQ (the CQ may still call nvmet_rdma_pg_kick() when it
 * was armed: the group outlives its queues).  Bounded: false when the
 * thread has not let go after NVMET_RDMA_RELEASE_WAIT_MS (a done() that
 * never returns); the caller leaks the queue then.
 */
static bool nvmet_rdma_pg_del(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_poll_group *g = queue->pg;
	struct timespec end;
	bool gone;

	if (!g)
		return true;
	if (pthread_equal(pthread_self(), g->thread)) {
		nvmet_err("q%u: left its poll group from the group's thread",
			  queue->host_qid);
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += NVMET_RDMA_RELEASE_WAIT_MS / 1000;
	pthread_mutex_lock(&g->lock);
	if (queue->pg_op == NVMET_RDMA_PG_ADD) {
		/* it never joined */
		list_del_init(&queue->pg_req);
		queue->pg_op = NVMET_RDMA_PG_NONE;
	} else if (queue->pg_member && queue->pg_op == NVMET_RDMA_PG_NONE) {
		queue->pg_op = NVMET_RDMA_PG_DEL;
		list_add_tail(&queue->pg_req, &g->pending);
		nvmet_rdma_pg_changed(g);
	}
	while (queue->pg_member &&
	       pthread_cond_timedwait(&g->applied, &g->lock, &end) != ETIMEDOUT)
		;
	gone = !queue->pg_member;
	pthread_mutex_unlock(&g->lock);
	if (!gone)
		nvmet_err("q%u: its poll group does not let go",
			  queue->host_qid);
	return gone;
}

/*
 * Set group @group's hook; returns once its thread runs the new one and
 * never the old one again (bounded as nvmet_rdma_pg_del()).
 */
static int nvmet_rdma_poll_hook(struct nvmet_port *port, u32 group,
				int (*fn)(void *arg), void *arg)
{
	struct nvmet_rdma_transport *tr = port->priv;
	struct nvmet_rdma_poll_group *g;
	struct timespec end;
	int ret = 0;

	if (!tr || group >= tr->nr_groups)
		return -EINVAL;
	g = &tr->groups[group];
	if (pthread_equal(pthread_self(), g->thread))
		return -EDEADLK;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += NVMET_RDMA_RELEASE_WAIT_MS / 1000;
	pthread_mutex_lock(&g->lock);
	g->new_hook = fn;
	g->new_hook_arg = arg;
	g->hook_asked = true;
	nvmet_rdma_pg_changed(g);
	while (g->hook_asked &&
	       pthread_cond_timedwait(&g->applied, &g->lock, &end) != ETIMEDOUT)
		;
	if (g->hook_asked) {
		/* not taken: nothing changes, the old hook stays */
		g->hook_asked = false;
		ret = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&g->lock);
	return ret;
}

static void nvmet_rdma_pg_stop(struct nvmet_rdma_transport *tr)
{
	struct nvmet_rdma_poll_group *g;
	u32 i;

	for (i = 0; i < tr->nr_groups; i++) {
		g = &tr->groups[i];
		if (g->started) {
			pthread_mutex_lock(&g->lock);
			g->stop = true;
			nvmet_rdma_pg_changed(g);
			pthread_mutex_unlock(&g->lock);
			pthread_join(g->thread, NULL);
			nvmet_log("poll group %u: %llu sleeps in poll(), %llu "
				  "ended by a CQ's event",
				  i, (unsigned long long)g->fd_sleeps,
				  (unsigned long long)g->fd_wakeups);
		}
		if (g->wake_fd >= 0)
			close(g->wake_fd);
		free(g->pfds);
		pthread_cond_destroy(&g->applied);
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
	}
	free(tr->groups);
	tr->groups = NULL;
	tr->nr_groups = 0;
}

/* The transport's poll groups, from the target's options (none: 0). */
static int nvmet_rdma_pg_start(struct nvmet_rdma_transport *tr)
{
	const struct nvmet_target_opts *o = &tr->tgt->opts;
	struct nvmet_rdma_poll_group *g;
	pthread_condattr_t ca;
	u32 i;
	int ret = 0;

	if (!o->poll_groups)
		return 0;
	tr->groups = calloc(o->poll_groups, sizeof(*tr->groups));
	if (!tr->groups)
		return -ENOMEM;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (i = 0; i < o->poll_groups; i++) {
		g = &tr->groups[i];
		g->tr = tr;
		g->busy = o->poll_busy;
		g->idle_ns =
			1000ull * (o->poll_idle_us ? o->poll_idle_us :
						     NVMET_RDMA_PG_IDLE_US);
		INIT_LIST_HEAD(&g->members);
		INIT_LIST_HEAD(&g->pending);
		/* none: the group sleeps on @wake */
		g->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_mutex_init(&g->lock, NULL);
		pthread_cond_init(&g->wake, NULL);
		pthread_cond_init(&g->applied, &ca);
		tr->nr_groups = i + 1;
		ret = -pthread_create(&g->thread, NULL, nvmet_rdma_pg_thread,
				      g);
		if (ret)
			break;
		g->started = true;
	}
	pthread_condattr_destroy(&ca);
	if (ret)
		nvmet_rdma_pg_stop(tr);
	return ret;
}

/* ---- queues ---------------------------------------------------------------------------- */

static void nvmet_rdma_free_queue(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_rsp *rsp, *tmp;

	if (!nvmet_rdma_pg_del(queue))
		return; /* its group still polls the CQ: leaked */
	cancel_delayed_work_sync(&queue->connect_work);
	cancel_delayed_work_sync(&queue->auth_fail_work);
	if (queue->qp)
		rdma_destroy_qp(queue->cm_id);
	queue->qp = NULL;
	if (queue->cq && ib_free_cq(queue->cq))
		nvmet_err("q%u: CQ still busy", queue->host_qid);
	queue->cq = NULL;
	list_for_each_entry_safe(rsp, tmp, &queue->free_rsps, free_list)
		list_del(&rsp->free_list);
	queue->rsps_back = NULL; /* in the chunks, freed next */
	nvmet_rdma_free_chunk(queue, 0);
	nvmet_rdma_free_chunk(queue, 1);
	nvmet_rdma_free_pool(queue);
	free(queue->cmds);
	/* its counts stay in the target's sums */
	nvmet_qcount_del(queue->tr->tgt, &queue->nvme_sq.count);
	if (queue->counted)
		nvmet_stat_add(queue->tr->tgt->unadmitted, (u64)-1);
	if (queue->dev)
		nvmet_rdma_put_device(queue->dev);
	free(queue);
}

/* Release what waits (credits, pages, or ESTABLISHED) on a dead queue. */
static void nvmet_rdma_drop_waiting(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_rsp *rsp;
	LIST_HEAD(list);

	spin_lock(&queue->rsp_wr_wait_lock);
	nvmet_rdma_wait_take(&queue->rsp_wr_wait_list, &queue->nr_wr_waiting,
			     &list);
	nvmet_rdma_wait_take(&queue->rsp_data_wait_list,
			     &queue->nr_data_waiting, &list);
	spin_unlock(&queue->rsp_wr_wait_lock);
	spin_lock(&queue->state_lock);
	list_splice_tail_init(&queue->rsp_wait_list, &list);
	spin_unlock(&queue->state_lock);
	while (!list_empty(&list)) {
		rsp = list_first_entry(&list, struct nvmet_rdma_rsp, wait_list);
		list_del_init(&rsp->wait_list);
		nvmet_rdma_release_rsp(rsp);
	}
}

/* Requests of @queue taken and not yet released. */
static u64 nvmet_rdma_inflight(struct nvmet_rdma_queue *queue)
{
	return __atomic_load_n(&queue->nvme_sq.count.inflight,
			       __ATOMIC_ACQUIRE);
}

static void nvmet_rdma_release_queue_work(struct work_struct *w)
{
	struct nvmet_rdma_queue *queue =
		container_of(w, struct nvmet_rdma_queue, release_work);
	struct nvmet_rdma_transport *tr = queue->tr;
	struct nvmet_target *t = tr->tgt;
	int waited = 0;

	nvmet_log("q%u: releasing", queue->host_qid);
	/* the drain polls a polled queue's CQ here, its group no more */
	if (!nvmet_rdma_pg_del(queue)) {
		nvmet_err("q%u: queue leaked", queue->host_qid);
		return;
	}
	if (queue->qp)
		ib_drain_qp(queue->qp);
	/* after the drain: no send completion can arm it again */
	cancel_delayed_work_sync(&queue->auth_fail_work);
	/* the admin queue fails its AERs here; its I/O queues go too */
	if (queue->nvme_sq.ctrl && queue->nvme_sq.qid == 0) {
		nvmet_async_events_failall(queue->nvme_sq.ctrl);
		nvmet_ctrl_fatal_error(queue->nvme_sq.ctrl);
	}
	nvmet_rdma_drop_waiting(queue);
	while (nvmet_rdma_inflight(queue) &&
	       waited < NVMET_RDMA_RELEASE_WAIT_MS) {
		nvmet_rdma_sleep_ms(1);
		nvmet_rdma_drop_waiting(queue);
		waited++;
	}
	if (nvmet_rdma_inflight(queue)) {
		/* something still uses the queue: leak it rather than crash */
		nvmet_err("q%u: %llu requests never released; queue leaked",
			  queue->host_qid,
			  (unsigned long long)nvmet_rdma_inflight(queue));
		return;
	}
	nvmet_sq_destroy(&queue->nvme_sq);

	mutex_lock(&tr->lock);
	list_del_init(&queue->queue_list);
	mutex_unlock(&tr->lock);
	if (queue->qp)
		rdma_destroy_qp(queue->cm_id);
	queue->qp = NULL;
	rdma_destroy_id(queue->cm_id);
	nvmet_rdma_free_queue(queue);
	/* last: the queue's PD and CQ are gone when it is counted out */
	nvmet_stat_add(t->queues, (u64)-1);
}

/*
 * Claim @queue's teardown: true for the one caller that moves it to
 * DISCONNECTING, who must then call nvmet_rdma_queue_release_start(); the
 * queue lives until that release work frees it.  A caller that found the
 * queue on tr->queue_list claims it before it lets go of tr->lock (as the
 * kernel's nvmet_rdma_delete_ctrl() takes a queue off the list under its
 * mutex): once unlocked, another claimer's release may free the queue.
 */
static bool nvmet_rdma_queue_claim(struct nvmet_rdma_queue *queue)
{
	bool mine = false;

	spin_lock(&queue->state_lock);
	if (queue->state != NVMET_RDMA_Q_DISCONNECTING) {
		WRITE_ONCE(queue->state, NVMET_RDMA_Q_DISCONNECTING);
		mine = true;
	}
	spin_unlock(&queue->state_lock);
	return mine;
}

/* The claimer's part: disconnect; the release work frees the queue. */
static void nvmet_rdma_queue_release_start(struct nvmet_rdma_queue *queue)
{
	rdma_disconnect(queue->cm_id);
	queue_work(queue->tr->tgt->wq, &queue->release_work);
}

/* Start a queue's teardown (once); nothing is posted on it afterwards. */
static void nvmet_rdma_queue_disconnect(struct nvmet_rdma_queue *queue)
{
	if (nvmet_rdma_queue_claim(queue))
		nvmet_rdma_queue_release_start(queue);
}

static int nvmet_rdma_cm_reject(struct nvmet_rdma_transport *tr,
				struct rdma_cm_id *cm_id,
				enum nvme_rdma_cm_status status)
{
	struct nvme_rdma_cm_rej rej = {
		.recfmt = cpu_to_le16(NVME_RDMA_CM_FMT_1_0),
		.sts = cpu_to_le16(status),
	};

	nvmet_log("rejecting connect request: status %d", status);
	nvmet_stat_add(tr->tgt->rejects, 1);
	return rdma_reject(cm_id, &rej, sizeof(rej),
			   IB_CM_REJ_CONSUMER_DEFINED);
}

/* ---- admission ---------------------------------------------------------------------- */

static u32 nvmet_rdma_connect_ms(const struct nvmet_target *t)
{
	return t->opts.connect_timeout_ms ? t->opts.connect_timeout_ms :
					    NVMET_DEFAULT_CONNECT_TIMEOUT_MS;
}

/* The same host address (the port number aside)? */
static bool nvmet_rdma_same_host(const struct sockaddr_storage *a,
				 const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

/*
 * Admission's first step, before anything is allocated for @queue: the
 * connections not yet admitted by a Connect stay under the target's bound
 * in all and under the per-address bound on this port.  An address none
 * of whose queues a Connect admitted is a stranger: its I/O queues are
 * refused (a host connects its admin queue first, and that one's Connect
 * comes before it asks for I/O queues), and at most
 * NVMET_RDMA_STRANGER_UNADMITTED of its admin queues wait, which are small
 * (NVME_AQ_DEPTH): what a QP of 128 commands costs a real device (~4 MiB
 * of queue memory on siw) only a known host can make it spend.  True (and
 * @queue counted) when it may go on; the caller rejects it otherwise.
 */
static bool nvmet_rdma_may_connect(struct nvmet_rdma_transport *tr,
				   struct nvmet_rdma_queue *queue)
{
	struct nvmet_target *t = tr->tgt;
	u32 max_all = t->opts.max_unadmitted ? t->opts.max_unadmitted :
					       NVMET_DEFAULT_MAX_UNADMITTED;
	u32 max_addr = t->opts.max_unadmitted_per_addr ?
			       t->opts.max_unadmitted_per_addr :
			       NVMET_DEFAULT_MAX_UNADMITTED_PER_ADDR;
	struct nvmet_rdma_queue *q;
	u32 from_addr = 0;
	bool known = false;
	bool ok;

	mutex_lock(&tr->lock);
	list_for_each_entry(q, &tr->queue_list, queue_list)
	{
		if (!nvmet_rdma_same_host(&q->peer, &queue->peer))
			continue;
		if (READ_ONCE(q->admitted))
			known = true;
		else
			from_addr++;
	}
	if (!known)
		max_addr = queue->host_qid ?
				   0 :
				   min_t(u32, max_addr,
					 NVMET_RDMA_STRANGER_UNADMITTED);
	ok = from_addr < max_addr &&
	     nvmet_stat_add(t->unadmitted, 1) < (u64)max_all;
	if (from_addr < max_addr && !ok)
		nvmet_stat_add(t->unadmitted, (u64)-1);
	mutex_unlock(&tr->lock);
	queue->counted = ok;
	if (!ok && !known && queue->host_qid)
		nvmet_log("connection request for I/O queue %u refused: no "
			  "controller of that address was admitted",
			  queue->host_qid);
	else if (!ok)
		nvmet_log(
			"connection request refused: %u waiting for a Connect "
			"from that address (most %u%s), %llu in all (most %u)",
			from_addr, max_addr, known ? "" : ", a stranger",
			(unsigned long long)nvmet_stat_read(t->unadmitted),
			max_all);
	return ok;
}

/*
 * The grace after an authentication failure is over and the host has not
 * closed the queue: its controller goes (the kernel's nvmet tears it down
 * at once, which loses the Failure1 on siw now and then: docs/deviations.md).
 */
static void nvmet_rdma_auth_fail_timeout(struct work_struct *w)
{
	struct delayed_work *dw = to_delayed_work(w);
	struct nvmet_rdma_queue *queue =
		container_of(dw, struct nvmet_rdma_queue, auth_fail_work);
	struct nvmet_ctrl *ctrl = READ_ONCE(queue->nvme_sq.ctrl);

	nvmet_log("q%u: the host kept the queue after failing to "
		  "authenticate: closing",
		  queue->host_qid);
	if (ctrl)
		nvmet_ctrl_fatal_error(ctrl);
	else
		nvmet_rdma_queue_disconnect(queue);
}

/* No Connect installed the queue in time: close it. */
static void nvmet_rdma_connect_timeout(struct work_struct *w)
{
	struct delayed_work *dw = to_delayed_work(w);
	struct nvmet_rdma_queue *queue =
		container_of(dw, struct nvmet_rdma_queue, connect_work);

	if (READ_ONCE(queue->admitted))
		return;
	nvmet_log("q%u: no Connect in %u ms: closing", queue->host_qid,
		  nvmet_rdma_connect_ms(queue->tr->tgt));
	nvmet_stat_add(queue->tr->tgt->connect_timeouts, 1);
	nvmet_rdma_queue_disconnect(queue);
}

/*
 * The core's install hook, from a Connect that named a live controller
 * (or made one): what the rest of the queue needs, then the queue counts
 * as admitted.  Each step is kept when a later one fails, and skipped
 * when a second Connect comes (the queue is torn down with what it has).
 * On the queue's CQ thread, before the Connect's response is sent, so the
 * receives are posted before the host may send its next command.
 */
static u16 nvmet_rdma_install_queue(struct nvmet_sq *sq)
{
	struct nvmet_rdma_queue *queue =
		container_of(sq, struct nvmet_rdma_queue, nvme_sq);
	u32 i, n = (u32)queue->recv_queue_size;
	int ret = 0;

	if (queue->admitted)
		return NVME_SC_CONNECT_CTRL_BUSY | NVME_SC_DNR;
	if (!queue->chunk[1].cmd_bufs && n > 1)
		ret = nvmet_rdma_alloc_chunk(queue, 1, 1, n - 1);
	if (!ret && !queue->pool.base)
		ret = nvmet_rdma_alloc_pool(queue);
	if (!ret && queue->qp_attr.cap.max_rdma_ctxs && !queue->mrs_ready) {
		ret = rdma_rw_init_mrs(queue->qp, &queue->qp_attr);
		queue->mrs_ready = !ret;
	}
	if (ret) {
		nvmet_err("q%u: installing the queue: %s", queue->host_qid,
			  strerror(-ret));
		return NVME_SC_INTERNAL;
	}
	spin_lock(&queue->state_lock);
	for (i = 1; i < n && !ret; i++)
		ret = nvmet_rdma_post_recv_locked(&queue->cmds[i]);
	WRITE_ONCE(queue->admitted, true);
	spin_unlock(&queue->state_lock);
	if (queue->counted)
		nvmet_stat_add(queue->tr->tgt->unadmitted, (u64)-1);
	queue->counted = false;
	cancel_delayed_work(&queue->connect_work);
	return ret ? NVME_SC_INTERNAL : 0;
}

/* Check the REQ's private data; 0 or the reject status. */
static int nvmet_rdma_parse_cm_connect_req(struct nvmet_rdma_transport *tr,
					   struct rdma_conn_param *param,
					   struct nvmet_rdma_queue *queue)
{
	const struct nvme_rdma_cm_req *req = param->private_data;
	struct nvmet_port *port = tr->port;
	int hsq, hrq;

	if (!req || param->private_data_len < sizeof(*req))
		return NVME_RDMA_CM_INVALID_LEN;
	if (le16_to_cpu(req->recfmt) != NVME_RDMA_CM_FMT_1_0)
		return NVME_RDMA_CM_INVALID_RECFMT;
	queue->host_qid = le16_to_cpu(req->qid);
	hsq = le16_to_cpu(req->hsqsize) + 1;
	hrq = le16_to_cpu(req->hrqsize);
	/* no check of the qid here: Connect checks it against the controller */
	if (hsq < 2 ||
	    hsq > (queue->host_qid ? (int)port->max_queue_size : NVME_AQ_DEPTH))
		return NVME_RDMA_CM_INVALID_HSQSIZE;
	if (hrq < 1 ||
	    hrq > (queue->host_qid ? (int)port->max_queue_size : NVME_AQ_DEPTH))
		return NVME_RDMA_CM_INVALID_HRQSIZE;
	queue->recv_queue_size = hsq;
	queue->send_queue_size = hrq;
	return 0;
}

static int nvmet_rdma_create_queue_ib(struct nvmet_rdma_queue *queue)
{
	struct ib_device *dev = queue->dev->device;
	u32 port_num = queue->cm_id->port_num;
	bool polled = queue->host_qid && queue->tr->nr_groups;
	struct ib_qp_init_attr qa;
	unsigned int factor;
	int nr_cqe, ret;

	factor = rdma_rw_mr_factor(dev, port_num, 1u << queue->dev->mdts);
	if (!factor)
		factor = 1;
	/*
	 * Signaled completions in flight: every receive, and one SEND or
	 * READ per response slot (one per receive, whatever hrqsize says),
	 * plus the two drain markers.  nvmet's recv + 2 * send can be short
	 * for a host whose hrqsize is below its hsqsize.
	 */
	nr_cqe = 2 * queue->recv_queue_size + 2 * queue->send_queue_size + 2;
	queue->cq = ib_alloc_cq(dev, queue, min(nr_cqe, dev->attrs.max_cqe), 0,
				polled ? IB_POLL_DIRECT : IB_POLL_WORKQUEUE);
	if (IS_ERR(queue->cq)) {
		ret = (int)PTR_ERR(queue->cq);
		queue->cq = NULL;
		return ret;
	}
	/* the admin queue stays on a thread of its CQ's */
	if (polled)
		nvmet_rdma_pg_add(queue);
	memset(&qa, 0, sizeof(qa));
	qa.qp_context = queue;
	qa.send_cq = queue->cq;
	qa.recv_cq = queue->cq;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	/* +1 for the drain marker */
	qa.cap.max_send_wr = (u32)queue->send_queue_size + 1;
	qa.cap.max_rdma_ctxs = (u32)queue->send_queue_size * factor;
	qa.cap.max_send_sge = (u32)dev->attrs.max_send_sge;
	qa.cap.max_recv_wr = (u32)queue->recv_queue_size + 1;
	qa.cap.max_recv_sge = 1;
	/*
	 * The Send Queue sized for every R/W context now, but the MRs and
	 * storage of one context only, for the Connect's data (an RDMA READ
	 * needs an MR on iWARP); the others' when a Connect installs the
	 * queue (nvmet_rdma_install_queue(): rdma_rw_init_mrs() adds to the
	 * QP's pools and storage).  A connection that never sends a valid
	 * Connect holds one context.  The kernel's nvmet-rdma sets them all
	 * up here.
	 */
	rdma_rw_init_qp(dev, &qa);
	queue->qp_attr = qa;
	queue->qp_attr.port_num = port_num;
	queue->qp_attr.cap.max_rdma_ctxs = qa.cap.max_rdma_ctxs - 1;
	qa.cap.max_rdma_ctxs = 1;
	ret = rdma_create_qp(queue->cm_id, queue->dev->pd, &qa);
	if (ret) {
		nvmet_err("q%u: rdma_create_qp: %d (send %u, recv %u, ctxs %u)",
			  queue->host_qid, ret, qa.cap.max_send_wr,
			  qa.cap.max_recv_wr, qa.cap.max_rdma_ctxs);
		return ret;
	}
	queue->qp = queue->cm_id->qp;
	atomic_set(&queue->sq_wr_avail, (int)qa.cap.max_send_wr - 1);
	/* one receive, for the Connect (chunk 0) */
	return ib_post_recv(queue->qp, &queue->cmds[0].wr, NULL);
}

static int nvmet_rdma_queue_connect(struct nvmet_rdma_transport *tr,
				    struct rdma_cm_id *cm_id,
				    struct rdma_cm_event *event)
{
	struct nvme_rdma_cm_rep rep = {
		.recfmt = cpu_to_le16(NVME_RDMA_CM_FMT_1_0),
	};
	struct rdma_conn_param param;
	struct nvmet_rdma_queue *queue;
	int ret, sts;

	queue = calloc(1, sizeof(*queue));
	if (!queue) {
		nvmet_rdma_cm_reject(tr, cm_id, NVME_RDMA_CM_NO_RSC);
		return -ENOMEM;
	}
	queue->kind = NVMET_RDMA_CTX_QUEUE;
	queue->cm_id = cm_id;
	queue->tr = tr;
	queue->port = tr->port;
	queue->state = NVMET_RDMA_Q_CONNECTING;
	spin_lock_init(&queue->state_lock);
	spin_lock_init(&queue->rsp_wr_wait_lock);
	INIT_LIST_HEAD(&queue->free_rsps);
	INIT_LIST_HEAD(&queue->rsp_wait_list);
	INIT_LIST_HEAD(&queue->rsp_wr_wait_list);
	INIT_LIST_HEAD(&queue->rsp_data_wait_list);
	INIT_LIST_HEAD(&queue->queue_list);
	INIT_LIST_HEAD(&queue->pg_entry);
	INIT_LIST_HEAD(&queue->pg_req);
	INIT_WORK(&queue->release_work, nvmet_rdma_release_queue_work);
	INIT_DELAYED_WORK(&queue->connect_work, nvmet_rdma_connect_timeout);
	INIT_DELAYED_WORK(&queue->auth_fail_work, nvmet_rdma_auth_fail_timeout);
	nvmet_sq_init(&queue->nvme_sq);
	memcpy(&queue->peer, &cm_id->route.addr.dst_addr, sizeof(queue->peer));

	sts = nvmet_rdma_parse_cm_connect_req(tr, &event->param.conn, queue);
	if (sts) {
		nvmet_rdma_cm_reject(tr, cm_id, sts);
		free(queue);
		return -EINVAL;
	}
	/* the transport queue id: Connect must name the same */
	queue->nvme_sq.qid = queue->host_qid;
	queue->inline_data_size =
		queue->host_qid ? queue->port->inline_data_size : 0;
	if (!nvmet_rdma_may_connect(tr, queue)) {
		nvmet_rdma_cm_reject(tr, cm_id, NVME_RDMA_CM_NO_RSC);
		free(queue);
		return -EBUSY;
	}
	queue->dev = nvmet_rdma_find_get_device(tr, cm_id);
	ret = -ENOMEM;
	if (!queue->dev)
		goto reject;
	/* only what the Connect needs: see nvmet_rdma_install_queue() */
	ret = nvmet_rdma_alloc_cmds(queue);
	if (!ret)
		ret = nvmet_rdma_alloc_chunk(queue, 0, 0, 1);
	if (!ret)
		ret = nvmet_rdma_pool_init(queue, &queue->cpool, 1, false);
	if (!ret)
		ret = nvmet_rdma_create_queue_ib(queue);
	if (ret)
		goto reject;

	mutex_lock(&tr->lock);
	if (tr->stopping) {
		mutex_unlock(&tr->lock);
		ret = -ESHUTDOWN;
		goto reject;
	}
	list_add_tail(&queue->queue_list, &tr->queue_list);
	nvmet_qcount_add(tr->tgt, &queue->nvme_sq.count);
	nvmet_stat_add(tr->tgt->queues, 1);
	nvmet_stat_add(tr->tgt->queues_created, 1);
	cm_id->context = queue;
	mutex_unlock(&tr->lock);
	queue_delayed_work(tr->tgt->wq, &queue->connect_work,
			   msecs_to_jiffies(nvmet_rdma_connect_ms(tr->tgt)));

	rep.crqsize = cpu_to_le16((u16)queue->recv_queue_size);
	memset(&param, 0, sizeof(param));
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	param.rnr_retry_count = 7;
	param.flow_control = 1;
	param.initiator_depth =
		(u8)min_t(int, event->param.conn.initiator_depth,
			  queue->dev->device->attrs.max_qp_init_rd_atom);
	param.responder_resources = 0;
	ret = rdma_accept(cm_id, &param);
	if (ret) {
		nvmet_log("q%u: rdma_accept: %d", queue->host_qid, ret);
		mutex_lock(&tr->lock);
		if (!nvmet_rdma_queue_claim(queue)) {
			/*
			 * A teardown of every queue (a controller's fatal
			 * error, a stop) claimed it meanwhile and has its
			 * release work coming: that frees the queue and
			 * destroys the id, so the CM must not (return 0).
			 */
			mutex_unlock(&tr->lock);
			return 0;
		}
		/* the id is the CM's to destroy (non-zero return) */
		list_del_init(&queue->queue_list);
		mutex_unlock(&tr->lock);
		nvmet_stat_add(tr->tgt->queues, (u64)-1);
		cm_id->context = NULL;
		nvmet_rdma_free_queue(queue);
		return ret;
	}
	nvmet_log("q%u: accepted (recv %d, send %d)", queue->host_qid,
		  queue->recv_queue_size, queue->send_queue_size);
	return 0;

reject:
	nvmet_rdma_cm_reject(tr, cm_id, NVME_RDMA_CM_NO_RSC);
	nvmet_rdma_free_queue(queue);
	return ret ? ret : -EINVAL;
}

static void nvmet_rdma_queue_established(struct nvmet_rdma_queue *queue)
{
	struct nvmet_rdma_rsp *rsp;
	LIST_HEAD(list);

	spin_lock(&queue->state_lock);
	if (queue->state != NVMET_RDMA_Q_CONNECTING) {
		spin_unlock(&queue->state_lock);
		return;
	}
	WRITE_ONCE(queue->state, NVMET_RDMA_Q_LIVE);
	list_splice_init(&queue->rsp_wait_list, &list);
	spin_unlock(&queue->state_lock);
	while (!list_empty(&list)) {
		rsp = list_first_entry(&list, struct nvmet_rdma_rsp, wait_list);
		list_del_init(&rsp->wait_list);
		nvmet_rdma_handle_command(queue, rsp);
	}
}

static int nvmet_rdma_cm_handler(struct rdma_cm_id *cm_id,
				 struct rdma_cm_event *event)
{
	enum nvmet_rdma_ctx_kind *kind = cm_id->context;
	struct nvmet_rdma_transport *tr;
	struct nvmet_rdma_queue *queue;

	/*
	 * A listener's context is the transport, and a CONNECT_REQUEST's
	 * child inherits it; an accepted queue's id has the queue.
	 */
	if (!kind)
		return 0;
	if (*kind == NVMET_RDMA_CTX_LISTENER) {
		tr = cm_id->context;
		if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return nvmet_rdma_queue_connect(tr, cm_id, event);
		/* an unaccepted child has nothing to tear down */
		if (READ_ONCE(tr->listen_id) != cm_id)
			return 0;
		if (event->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			nvmet_err("the listener's device is going away");
			mutex_lock(&tr->lock);
			tr->listen_id = NULL;
			mutex_unlock(&tr->lock);
			return 1; /* the CM destroys the listener */
		}
		return 0;
	}
	queue = cm_id->context;
	switch (event->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		nvmet_rdma_queue_established(queue);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		nvmet_log("q%u: %s", queue->host_qid,
			  rdma_event_msg(event->event));
		nvmet_rdma_queue_disconnect(queue);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the transport's operations ------------------------------------------------------- */

static struct nvmet_rdma_queue *nvmet_rdma_sq_queue(struct nvmet_sq *sq)
{
	return container_of(sq, struct nvmet_rdma_queue, nvme_sq);
}

void nvmet_rdma_disconnect_window(struct rdma_cm_id *cm_id);

/**
 * nvmet_rdma_disconnect_window() - a test's hook; does nothing here
 * @cm_id: the id of the queue nvmet_rdma_disconnect_queues() claimed
 *
 * Called by nvmet_rdma_disconnect_queues() after it let go of tr->lock and
 * before it starts the release of the queue it found: where the queue was
 * found but not yet claimed before the claim moved under tr->lock, so that
 * a CM event's release could free it.  tests/nvmet/test_nvmet_claim.c
 * defines its own, which runs a CM disconnect or an rdma_accept() failure
 * in this window.
 */
__attribute__((weak)) void
nvmet_rdma_disconnect_window(struct rdma_cm_id *cm_id)
{
	(void)cm_id;
}

/*
 * Disconnect every queue of @tr that is not going away already, only those
 * of @ctrl when it is not NULL.  Queues leave the list only in their
 * release work, so the list is walked again after each disconnect.
 */
static void nvmet_rdma_disconnect_queues(struct nvmet_rdma_transport *tr,
					 const struct nvmet_ctrl *ctrl)
{
	struct nvmet_rdma_queue *queue, *found;

	do {
		found = NULL;
		mutex_lock(&tr->lock);
		list_for_each_entry(queue, &tr->queue_list, queue_list)
		{
			/* claimed under tr->lock: see nvmet_rdma_queue_claim() */
			if ((!ctrl || READ_ONCE(queue->nvme_sq.ctrl) == ctrl) &&
			    nvmet_rdma_queue_claim(queue)) {
				found = queue;
				break;
			}
		}
		mutex_unlock(&tr->lock);
		if (found) {
			nvmet_rdma_disconnect_window(found->cm_id);
			nvmet_rdma_queue_release_start(found);
		}
	} while (found);
}

static void nvmet_rdma_delete_ctrl(struct nvmet_ctrl *ctrl)
{
	nvmet_rdma_disconnect_queues(ctrl->port->priv, ctrl);
}

static u8 nvmet_rdma_get_mdts(const struct nvmet_ctrl *ctrl)
{
	struct nvmet_ctrl *c = (struct nvmet_ctrl *)ctrl;
	struct nvmet_sq *sq;
	u8 mdts = ctrl->port->mdts_max;

	mutex_lock(&c->lock);
	sq = c->sqs[0];
	if (sq)
		mdts = nvmet_rdma_sq_queue(sq)->dev->mdts;
	mutex_unlock(&c->lock);
	return mdts;
}

/* ---- ports ------------------------------------------------------------------------------ */

static int nvmet_rdma_add_port(struct nvmet_port *port)
{
	struct nvmet_target *t = port->tgt;
	struct nvmet_rdma_transport *tr;
	struct rdma_cm_id *id;
	int ret;

	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->kind = NVMET_RDMA_CTX_LISTENER;
	tr->tgt = t;
	tr->port = port;
	mutex_init(&tr->lock);
	INIT_LIST_HEAD(&tr->queue_list);
	INIT_LIST_HEAD(&tr->dev_list);
	port->priv = tr;
	ret = nvmet_rdma_pg_start(tr);
	if (ret)
		goto out_free;

	id = rdma_create_id(&init_net, nvmet_rdma_cm_handler, tr, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = (int)PTR_ERR(id);
		goto out_free;
	}
	/* a listener on a v6 wildcard takes IPv6 only, as nvmet sets it */
	if (port->addr.ss_family == AF_INET6) {
		ret = rdma_set_afonly(id, 1);
		if (ret)
			goto out_destroy;
	}
	ret = rdma_set_reuseaddr(id, 1);
	if (ret)
		goto out_destroy;
	ret = rdma_bind_addr(id, (struct sockaddr *)&port->addr);
	if (ret) {
		nvmet_err("binding %s:%s: %s", port->traddr, port->trsvcid,
			  strerror(-ret));
		goto out_destroy;
	}
	if (port->device &&
	    (!id->device || strcmp(id->device->name, port->device))) {
		nvmet_err("address %s is not on device %s (%s)", port->traddr,
			  port->device,
			  id->device ? id->device->name : "no device");
		ret = -ENODEV;
		goto out_destroy;
	}
	if (id->device)
		t->mdts = nvmet_rdma_pick_mdts(id->device, id->port_num, port);
	else
		t->mdts = port->mdts_max;
	mutex_lock(&tr->lock);
	tr->listen_id = id;
	mutex_unlock(&tr->lock);
	ret = rdma_listen(id, 128);
	if (ret) {
		nvmet_err("listening on %s:%s: %s", port->traddr, port->trsvcid,
			  strerror(-ret));
		mutex_lock(&tr->lock);
		tr->listen_id = NULL;
		mutex_unlock(&tr->lock);
		goto out_destroy;
	}
	nvmet_log("listening on %s:%s (%s)", port->traddr, port->trsvcid,
		  id->device ? id->device->name : "every device");
	return 0;

out_destroy:
	rdma_destroy_id(id);
out_free:
	nvmet_rdma_pg_stop(tr);
	mutex_destroy(&tr->lock);
	free(tr);
	port->priv = NULL;
	return ret;
}

/* Stop listening: no queue comes through @tr any more. */
static void nvmet_rdma_disable_port(struct nvmet_rdma_transport *tr)
{
	struct rdma_cm_id *id;

	mutex_lock(&tr->lock);
	tr->stopping = true;
	id = tr->listen_id;
	tr->listen_id = NULL;
	mutex_unlock(&tr->lock);
	if (id)
		rdma_destroy_id(id);
}

/* Wait (bounded) until every queue of @tr is released: true when so. */
static bool nvmet_rdma_wait_released(struct nvmet_rdma_transport *tr)
{
	int waited = 0;
	bool empty;

	for (;;) {
		mutex_lock(&tr->lock);
		empty = list_empty(&tr->queue_list);
		mutex_unlock(&tr->lock);
		if (empty || waited >= NVMET_RDMA_STOP_WAIT_MS)
			break;
		nvmet_rdma_sleep_ms(1);
		waited++;
	}
	flush_workqueue(tr->tgt->wq);
	return empty;
}

static int nvmet_rdma_remove_port(struct nvmet_port *port)
{
	struct nvmet_rdma_transport *tr = port->priv;
	bool empty;

	if (!tr)
		return 0;
	nvmet_rdma_disable_port(tr);
	nvmet_rdma_disconnect_queues(tr, NULL);
	if (!nvmet_rdma_wait_released(tr)) {
		nvmet_err("%s:%s: queues still alive after %d ms: leaking them",
			  port->traddr, port->trsvcid, NVMET_RDMA_STOP_WAIT_MS);
		return -EBUSY;
	}
	mutex_lock(&tr->lock);
	empty = list_empty(&tr->dev_list);
	mutex_unlock(&tr->lock);
	if (!empty)
		nvmet_err("devices still referenced at stop");
	nvmet_rdma_pg_stop(tr);
	mutex_destroy(&tr->lock);
	free(tr);
	port->priv = NULL;
	return 0;
}

const struct nvmet_fabrics_ops nvmet_rdma_ops = {
	.owner_name = "rdma",
	.type = NVMF_TRTYPE_RDMA,
	.msdbd = 1,
	.add_port = nvmet_rdma_add_port,
	.remove_port = nvmet_rdma_remove_port,
	.install_queue = nvmet_rdma_install_queue,
	.queue_response = nvmet_rdma_queue_response,
	.delete_ctrl = nvmet_rdma_delete_ctrl,
	.get_mdts = nvmet_rdma_get_mdts,
	.poll_hook = nvmet_rdma_poll_hook,
};

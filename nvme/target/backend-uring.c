// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * io_uring for file and block-device namespaces (liburing): Read, Write
 * and Flush are submitted from the thread that executes the command (the
 * queue's) and completed from the ring's completion queue by the
 * namespace's reaper thread (woken by the ring's eventfd), which calls io->done (the kernel's
 * nvmet_file_io_done() and nvmet_bio_done(): submit, then a callback from
 * another context).  A slow device thus holds only its own commands.
 *
 * One ring per namespace: its file descriptors and O_DIRECT choice live
 * there, the reaper count is bounded by the namespaces, and a namespace
 * is closed only when no request holds it, so nothing is in flight when
 * the ring goes.  Submitters (the queues' threads) share the ring's
 * submission side under @sq_lock, held for one SQE and one
 * io_uring_enter(); a ring per queue thread would remove that lock and is
 * what a poll group would bring (the @poll hook reaps on the caller's
 * thread, without sleeping).
 *
 * O_DIRECT when the file system or device takes it (a probe read at
 * open) and every LBA is aligned as it asks (statx's DIO alignment, else
 * 4096); then every Read and Write of the namespace goes O_DIRECT, never
 * some through the page cache beside it: a direct write that finds pages
 * of its range cached and busy cannot drop them, and the kernel then
 * reports -EIO to the next fsync ("Page cache invalidation failure on
 * direct I/O").  The transport's data pool is page aligned; in-capsule
 * data is not, and is copied through one of the ring's bounce slots.
 * Short transfers are continued, -EAGAIN resubmitted (a bounded number
 * of times), a read past the end of a shorter file reads zeroes (as the
 * synchronous backend), a write that moves nothing fails with -EIO.
 *
 * Inside a batch (a plug of the thread's, nvmet_plug_start()) the SQEs
 * are only queued, and nvmet_uring_unplug() submits them when the batch
 * ends: one io_uring_enter() per batch.  Buffered, what is cached is read
 * on the submitter's thread first (RWF_NOWAIT); on tmpfs every Read and
 * Write is (io_uring would punt each one to io-wq).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>

#include "nvmet_int.h"

/*
 * What the kernel writes into a buffer through the ring is invisible to
 * valgrind's memcheck (it sees the read(2) family, not io_uring): a
 * read's bytes are declared defined once it completes (nothing when not
 * under valgrind, nor built without its header).
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_DEFINED
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#define NVMET_URING_SQ 256
/* SQEs a plug holds back on one ring before it submits them anyway */
#define NVMET_URING_PLUG_MAX 32
#define NVMET_URING_CQ 4096 /* the most I/Os in flight on one ring */
#define NVMET_URING_RETRIES 16 /* -EAGAIN resubmissions of one I/O */
#define NVMET_URING_WAIT_US 5000000 /* bound of a full ring's wait */
#define NVMET_URING_DIO_ALIGN 4096
/* O_DIRECT's bounce slots for unaligned buffers (in-capsule data) */
#define NVMET_URING_BOUNCE 64
#define NVMET_URING_BOUNCE_SIZE NVMET_MAX_INLINE_DATA

/*
 * Buffered I/O the submitter does itself before (or instead of) the ring,
 * as the kernel's nvmet file backend tries IOCB_NOWAIT before it punts to
 * a work queue: io_uring would hand these to its io-wq threads.
 */
enum nvmet_uring_inline {
	NVMET_URING_INLINE_NONE, /* O_DIRECT, or a file system without it */
	NVMET_URING_INLINE_NOWAIT, /* Reads: preadv2(RWF_NOWAIT), the ring on EAGAIN */
	NVMET_URING_INLINE_MEM, /* tmpfs: Reads and Writes, pread/pwrite */
};

struct nvmet_uring {
	struct io_uring ring;
	enum nvmet_uring_inline inl; /* set at open */
	pthread_t reaper;
	pthread_mutex_t sq_lock; /* the submission queue, @free */
	pthread_mutex_t cq_lock; /* the completion queue: reaper or @poll */
	int dfd; /* O_DIRECT descriptor, -1: buffered */
	int efd; /* eventfd the ring signals per completion: the reaper's */
	u32 mem_align; /* O_DIRECT's buffer alignment */
	u32 off_align; /* ... and offset and length's */
	int inflight; /* submitted, not reaped (atomic) */
	bool stop; /* the close's NOP was reaped (@cq_lock) */
	/* NVMET_URING_BOUNCE + 1 slots; the last @cq_lock's holder's */
	char *bounce;
	u8 free[NVMET_URING_BOUNCE]; /* free slots, a stack (@sq_lock) */
	u32 nr_free;
	u64 direct_ios, buffered_ios, bounced_ios; /* (@sq_lock) */
	struct nvmet_uring_stats st; /* (@sq_lock) */
};

/*
 * The thread that holds @cq_lock (the reaper, or one in poll): what it
 * submits never waits for a completion to be reaped.
 */
static __thread bool nvmet_uring_reaping;

static bool nvmet_uring_mem_aligned(const struct nvmet_uring *u,
				    const void *buf)
{
	return !((uintptr_t)buf % u->mem_align);
}

/* Sleep 50 us toward a bound: false when it is reached. */
static bool nvmet_uring_wait(u32 *waited)
{
	struct timespec ts = { 0, 50 * 1000 };

	if (*waited >= NVMET_URING_WAIT_US)
		return false;
	nanosleep(&ts, NULL);
	*waited += 50;
	return true;
}

/* A full ring: wait (bounded) until the reaper makes room. */
static int nvmet_uring_room(struct nvmet_uring *u)
{
	u32 waited = 0;

	while (__atomic_load_n(&u->inflight, __ATOMIC_ACQUIRE) >=
	       NVMET_URING_CQ) {
		if (nvmet_uring_reaping)
			return 0; /* the kernel keeps overflowed CQEs */
		nvmet_plug_flush(); /* what this thread held back goes first */
		if (!nvmet_uring_wait(&waited))
			return -EBUSY;
	}
	return 0;
}

/*
 * A bounce slot for @io (O_DIRECT, a buffer it cannot take), @buf's data
 * copied in for a write.  None free: wait (bounded) for the reaper to
 * give one back; the reaper itself never waits (-EAGAIN: it bounces
 * synchronously in its own slot).
 */
static int nvmet_uring_bounce_get(struct nvmet_uring *u,
				  struct nvmet_backend_io *io)
{
	u32 waited = 0;
	int slot = -1;

	if (io->len > NVMET_URING_BOUNCE_SIZE)
		return -EINVAL; /* in-capsule data is smaller */
	for (;;) {
		pthread_mutex_lock(&u->sq_lock);
		if (u->nr_free)
			slot = u->free[--u->nr_free];
		pthread_mutex_unlock(&u->sq_lock);
		if (slot >= 0)
			break;
		if (nvmet_uring_reaping)
			return -EAGAIN;
		nvmet_plug_flush(); /* their completions give slots back */
		if (!nvmet_uring_wait(&waited))
			return -EBUSY;
	}
	io->bounce = u->bounce + (size_t)slot * NVMET_URING_BOUNCE_SIZE;
	if (io->op == NVMET_IO_WRITE)
		memcpy(io->bounce, io->buf, io->len);
	return 0;
}

/* @io is over: its bounce slot back (a read's data out of it), done. */
static void nvmet_uring_end(struct nvmet_ns *ns, struct nvmet_backend_io *io,
			    int err)
{
	struct nvmet_uring *u = ns->uring;
	size_t slot;

	if (io->bounce) {
		if (!err && io->op == NVMET_IO_READ)
			memcpy(io->buf, io->bounce, io->len);
		slot = (size_t)((char *)io->bounce - u->bounce) /
		       NVMET_URING_BOUNCE_SIZE;
		io->bounce = NULL;
		pthread_mutex_lock(&u->sq_lock);
		u->free[u->nr_free++] = (u8)slot;
		pthread_mutex_unlock(&u->sq_lock);
	}
	io->done(io, err);
}

/*
 * The reaper (or a poller) found no bounce slot: the I/O is done here,
 * synchronously, through the slot of @cq_lock's holder (O_DIRECT still: never the page cache
 * beside it, whose invalidation would then fail and report -EIO).
 */
static void nvmet_uring_bounce_sync(struct nvmet_ns *ns,
				    struct nvmet_backend_io *io)
{
	struct nvmet_uring *u = ns->uring;
	char *b = u->bounce +
		  (size_t)NVMET_URING_BOUNCE * NVMET_URING_BOUNCE_SIZE;
	ssize_t n;
	int err = 0;

	if (io->op == NVMET_IO_WRITE)
		memcpy(b, io->buf, io->len);
	do {
		n = io->op == NVMET_IO_WRITE ?
			    pwrite(u->dfd, b, io->len, (off_t)io->off) :
			    pread(u->dfd, b, io->len, (off_t)io->off);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if (io->op == NVMET_IO_READ && (u64)n < io->len)
		memset(b + n, 0,
		       io->len - (u64)n); /* past a short file's end */
	else if ((u64)n != io->len)
		err = -EIO;
	if (!err && io->op == NVMET_IO_READ)
		memcpy(io->buf, b, io->len);
	io->done(io, err);
}

/*
 * Hand the ring's SQEs to the kernel (@sq_lock held): 0 or -errno.  A
 * failed enter leaves them on the ring for the next one.
 */
static int nvmet_uring_enter(struct nvmet_uring *u)
{
	int tries = 0, ret;

	if (!io_uring_sq_ready(&u->ring))
		return 0;
	u->st.submits++;
	do {
		ret = io_uring_submit(&u->ring);
	} while ((ret == -EINTR || ret == -EAGAIN || ret == -EBUSY) &&
		 ++tries < 1000);
	return ret < 0 ? ret : 0;
}

/*
 * Put @io (what is left of it) on the ring: 0 when it was submitted, 1
 * when this thread's plug holds it back (nvmet_uring_unplug() submits
 * it when the batch ends), -errno when it could not be queued.
 */
static int nvmet_uring_queue(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	struct nvmet_uring *u = ns->uring;
	char *buf = (char *)(io->bounce ? io->bounce : io->buf) + io->resid;
	u64 len = io->len - io->resid, off = io->off + io->resid;
	int fd = u->dfd >= 0 ? u->dfd : ns->fd, ret;
	struct io_uring_sqe *sqe;
	bool plugged;

	ret = nvmet_uring_room(u);
	if (ret)
		return ret;
	plugged = nvmet_plug_defer(ns);
	pthread_mutex_lock(&u->sq_lock);
	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) { /* a full ring: what is queued goes first */
		u->st.full++;
		nvmet_uring_enter(u);
		sqe = io_uring_get_sqe(&u->ring);
	}
	if (!sqe) {
		pthread_mutex_unlock(&u->sq_lock);
		return -EBUSY;
	}
	if (io->op == NVMET_IO_READ)
		io_uring_prep_read(sqe, fd, buf, (unsigned int)len, off);
	else if (io->op == NVMET_IO_WRITE)
		io_uring_prep_write(sqe, fd, buf, (unsigned int)len, off);
	else
		io_uring_prep_fsync(sqe, ns->fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data(sqe, io);
	if (io->op != NVMET_IO_FLUSH && !io->state) {
		if (u->dfd < 0)
			u->buffered_ios++;
		else if (io->bounce)
			u->bounced_ios++;
		else
			u->direct_ios++;
	}
	__atomic_add_fetch(&u->inflight, 1, __ATOMIC_RELAXED);
	/* what this thread wrote to the request, seen by the reaper */
	__atomic_store_n(&io->state, io->state + 1, __ATOMIC_RELEASE);
	u->st.sqes++;
	if (plugged && io_uring_sq_ready(&u->ring) < NVMET_URING_PLUG_MAX) {
		pthread_mutex_unlock(&u->sq_lock);
		return 1;
	}
	if (plugged)
		u->st.full++;
	else
		u->st.unplugged++;
	ret = nvmet_uring_enter(u);
	pthread_mutex_unlock(&u->sq_lock);
	/*
	 * The SQE is on the ring either way: a failed enter leaves it for
	 * the next one, and it completes then; it is not failed here.
	 */
	if (ret < 0)
		nvmet_err("namespace %u: io_uring_submit: %s", ns->nsid,
			  strerror(-ret));
	return 0;
}

/*
 * nvmet_uring_unplug() - the end of a batch whose plug held back @ns's
 * SQEs: submit them (one io_uring_enter()), then reap on this thread what
 * the kernel finished inside it.
 */
void nvmet_uring_unplug(struct nvmet_ns *ns)
{
	struct nvmet_uring *u = ns->uring;
	bool any;
	int ret;

	pthread_mutex_lock(&u->sq_lock);
	any = io_uring_sq_ready(&u->ring);
	if (any)
		u->st.batches++;
	ret = nvmet_uring_enter(u);
	pthread_mutex_unlock(&u->sq_lock);
	if (ret < 0)
		nvmet_err("namespace %u: io_uring_submit: %s", ns->nsid,
			  strerror(-ret));
	if (any)
		nvmet_uring_poll(ns);
}

/*
 * @io done on this thread without the ring (@u->inl): true when it is
 * over (io->done called), false when the ring must do it or its rest
 * (io->resid: the bytes already read).
 */
static bool nvmet_uring_inline(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	struct nvmet_uring *u = ns->uring;
	char *p = (char *)io->buf + io->resid;
	u64 len = io->len - io->resid;
	ssize_t n;

	if (u->inl == NVMET_URING_INLINE_NONE || io->op == NVMET_IO_FLUSH ||
	    (u->inl == NVMET_URING_INLINE_NOWAIT && io->op != NVMET_IO_READ))
		return false;
	do {
		if (u->inl == NVMET_URING_INLINE_MEM)
			n = io->op == NVMET_IO_READ ?
				    pread(ns->fd, p, len,
					  (off_t)(io->off + io->resid)) :
				    pwrite(ns->fd, p, len,
					   (off_t)(io->off + io->resid));
		else
			n = preadv2(ns->fd, &(struct iovec){ p, len }, 1,
				    (off_t)(io->off + io->resid), RWF_NOWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0 || (n == 0 && io->op == NVMET_IO_WRITE))
		return false; /* EAGAIN (not cached) or an error: the ring's */
	if (n == 0) /* past the end of a shorter file: zeroes */
		memset(p, 0, len);
	io->resid += n ? (u64)n : len;
	if (io->resid < io->len)
		return false; /* a short one: the ring does the rest */
	pthread_mutex_lock(&u->sq_lock);
	u->st.inline_ios++;
	pthread_mutex_unlock(&u->sq_lock);
	io->done(io, 0);
	return true;
}

/*
 * nvmet_uring_submit() - the io_uring backend's submit: 0, io->done
 * called later (by the reaper, or before this returns when the reaper
 * itself submits and must bounce); or -errno (not taken).
 */
int nvmet_uring_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	struct nvmet_uring *u = ns->uring;
	int ret;

	io->resid = 0;
	io->state = 0;
	io->bounce = NULL;
	if (nvmet_uring_inline(ns, io))
		return 0;
	if (u->dfd >= 0 && io->op != NVMET_IO_FLUSH &&
	    !nvmet_uring_mem_aligned(u, io->buf)) {
		ret = nvmet_uring_bounce_get(u, io);
		if (ret == -EAGAIN) {
			nvmet_uring_bounce_sync(ns, io);
			return 0;
		}
		if (ret)
			return ret;
	}
	ret = nvmet_uring_queue(ns, io);
	if (ret < 0 && io->bounce) {
		nvmet_uring_end(ns, io, ret);
		return 0;
	}
	/*
	 * What the kernel finished inside io_uring_enter() (a page-cache
	 * hit) is done here, without waking the reaper's thread for it.
	 */
	if (!ret)
		nvmet_uring_poll(ns);
	return ret < 0 ? ret : 0;
}

/* What the ring said of @io: done, continued or resubmitted. */
static void nvmet_uring_complete(struct nvmet_ns *ns,
				 struct nvmet_backend_io *io, int res)
{
	int tries = __atomic_load_n(&io->state, __ATOMIC_ACQUIRE);
	int ret;

	if (res == -EAGAIN || res == -EINTR) {
		if (tries >= NVMET_URING_RETRIES) {
			nvmet_uring_end(ns, io, -EIO);
			return;
		}
		goto again;
	}
	if (res < 0 || io->op == NVMET_IO_FLUSH) {
		nvmet_uring_end(ns, io, res < 0 ? res : 0);
		return;
	}
	if (res == 0) {
		if (io->op == NVMET_IO_WRITE) {
			nvmet_uring_end(ns, io, -EIO);
			return;
		}
		/* past the end of a shorter file: zeroes */
		memset((char *)(io->bounce ? io->bounce : io->buf) + io->resid,
		       0, io->len - io->resid);
		nvmet_uring_end(ns, io, 0);
		return;
	}
	if (io->op == NVMET_IO_READ)
		VALGRIND_MAKE_MEM_DEFINED(
			(char *)(io->bounce ? io->bounce : io->buf) + io->resid,
			(size_t)res);
	io->resid += (u64)res;
	if (io->resid >= io->len) {
		nvmet_uring_end(ns, io, 0);
		return;
	}
	/* a short O_DIRECT transfer's rest may be unaligned: then it fails */
again:
	ret = nvmet_uring_queue(ns, io);
	if (ret < 0)
		nvmet_uring_end(ns, io, ret);
}

/* Reap what is there (@cq_lock held); how many. */
static int nvmet_uring_reap(struct nvmet_ns *ns)
{
	struct nvmet_uring *u = ns->uring;
	struct io_uring_cqe *cqe;
	struct nvmet_backend_io *io;
	int n = 0, res;

	while (!io_uring_peek_cqe(&u->ring, &cqe)) {
		io = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
		if (!io) { /* the close's NOP */
			u->stop = true;
			continue;
		}
		__atomic_sub_fetch(&u->inflight, 1, __ATOMIC_RELEASE);
		nvmet_uring_complete(ns, io, res);
		n++;
	}
	return n;
}

/*
 * The reaper sleeps on the ring's eventfd, not in io_uring_wait_cqe():
 * the completion queue has one consumer at a time (@cq_lock), and a
 * poller may be it; the reaper touches the queue only under the lock.
 */
static void *nvmet_uring_reaper(void *arg)
{
	struct nvmet_ns *ns = arg;
	struct nvmet_uring *u = ns->uring;
	bool stop;
	u64 n;

	nvmet_uring_reaping = true;
	for (;;) {
		if (read(u->efd, &n, sizeof(n)) < 0 && errno != EINTR &&
		    errno != EAGAIN) {
			nvmet_err("namespace %u: io_uring eventfd: %s",
				  ns->nsid, strerror(errno));
			break;
		}
		pthread_mutex_lock(&u->cq_lock);
		nvmet_uring_reap(ns);
		stop = u->stop;
		pthread_mutex_unlock(&u->cq_lock);
		if (stop)
			break;
	}
	return NULL;
}

/*
 * nvmet_uring_poll() - reap @ns's completions on the caller's thread,
 * without sleeping (for a transport thread that polls; the reaper does it
 * otherwise).  Returns how many were reaped; 0 when another thread is
 * reaping.
 */
int nvmet_uring_poll(struct nvmet_ns *ns)
{
	struct nvmet_uring *u = ns->uring;
	bool reaping = nvmet_uring_reaping;
	int n;

	if (!u || pthread_mutex_trylock(&u->cq_lock))
		return 0;
	/* what the completions submit must not wait for the reaper now */
	nvmet_uring_reaping = true;
	n = nvmet_uring_reap(ns);
	nvmet_uring_reaping = reaping;
	pthread_mutex_unlock(&u->cq_lock);
	return n;
}

/* Whether @fd does O_DIRECT: its alignment, and one aligned read. */
static bool nvmet_uring_probe_direct(struct nvmet_uring *u, int fd)
{
	void *p = NULL;
	ssize_t n;
#ifdef STATX_DIOALIGN
	struct statx stx;

	if (!statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) &&
	    (stx.stx_mask & STATX_DIOALIGN)) {
		if (!stx.stx_dio_mem_align || !stx.stx_dio_offset_align)
			return false; /* the file system says no */
		u->mem_align = stx.stx_dio_mem_align;
		u->off_align = stx.stx_dio_offset_align;
	}
#endif
	if (u->mem_align > NVMET_URING_DIO_ALIGN ||
	    u->off_align > NVMET_URING_DIO_ALIGN)
		return false; /* larger than the data pool's pages */
	if (posix_memalign(&p, NVMET_URING_DIO_ALIGN, NVMET_URING_DIO_ALIGN))
		return false;
	n = pread(fd, p, NVMET_URING_DIO_ALIGN, 0);
	free(p);
	return n >= 0;
}

/*
 * What a buffered ring does without the ring (@fd: its file): tmpfs
 * (whose page cache is the store, and which takes no RWF_NOWAIT: io_uring
 * would punt every I/O to io-wq) everything; a file system that takes
 * RWF_NOWAIT the Reads it has cached; otherwise nothing.
 */
static enum nvmet_uring_inline nvmet_uring_probe_inline(int fd)
{
	struct statfs sfs;
	char b[512];
	ssize_t n;

	if (!fstatfs(fd, &sfs) && sfs.f_type == TMPFS_MAGIC)
		return NVMET_URING_INLINE_MEM;
	n = preadv2(fd, &(struct iovec){ b, sizeof(b) }, 1, 0, RWF_NOWAIT);
	if (n < 0 && (errno == EOPNOTSUPP || errno == EINVAL))
		return NVMET_URING_INLINE_NONE;
	return NVMET_URING_INLINE_NOWAIT;
}

/* The O_DIRECT descriptor of @ns's file or device, or -1. */
static int nvmet_uring_open_direct(struct nvmet_ns *ns,
				   const struct nvmet_ns_opts *o,
				   struct nvmet_uring *u)
{
	int flags = (o->readonly ? O_RDONLY : O_RDWR) | O_DIRECT | O_CLOEXEC;
	char self[64];
	int fd;

	if (o->buffered)
		return -1;
	/* the very file ns->fd is (the path may have changed since) */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", ns->fd);
	fd = open(self, flags);
	if (fd < 0 && o->path)
		fd = open(o->path, flags);
	if (fd < 0)
		return -1;
	u->mem_align = NVMET_URING_DIO_ALIGN;
	u->off_align = NVMET_URING_DIO_ALIGN;
	/* every LBA aligned as O_DIRECT asks, or none of it O_DIRECT */
	if (!nvmet_uring_probe_direct(u, fd) ||
	    (1u << ns->blksize_shift) % u->off_align ||
	    posix_memalign((void **)&u->bounce, NVMET_URING_DIO_ALIGN,
			   (NVMET_URING_BOUNCE + 1) *
				   NVMET_URING_BOUNCE_SIZE)) {
		close(fd);
		return -1;
	}
	for (u->nr_free = 0; u->nr_free < NVMET_URING_BOUNCE; u->nr_free++)
		u->free[u->nr_free] = (u8)u->nr_free;
	return fd;
}

/*
 * nvmet_uring_open() - give @ns (its file or device open in ns->fd) a ring
 * and its reaper: 0, or -errno when io_uring cannot be had (the caller
 * then does synchronous I/O).  $RDMARW_NVMET_NO_URING set to 1 makes it
 * fail as a kernel without io_uring would (-ENOSYS), for tests.
 */
int nvmet_uring_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE,
				     .cq_entries = NVMET_URING_CQ };
	const char *no = getenv("RDMARW_NVMET_NO_URING");
	const char *sq = getenv("RDMARW_NVMET_URING_SQ");
	unsigned int entries = NVMET_URING_SQ;
	struct nvmet_uring *u;
	int ret;

	if (no && !strcmp(no, "1"))
		return -ENOSYS;
	/* tests: a smaller submission queue, to fill it within a batch */
	if (sq && atoi(sq) >= 1 && atoi(sq) <= NVMET_URING_SQ)
		entries = (unsigned int)atoi(sq);
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	ret = io_uring_queue_init_params(entries, &u->ring, &p);
	if (ret) {
		free(u);
		return ret;
	}
	u->efd = eventfd(0, EFD_CLOEXEC);
	if (u->efd < 0 || io_uring_register_eventfd(&u->ring, u->efd)) {
		ret = u->efd < 0 ? -errno : -EINVAL;
		if (u->efd >= 0)
			close(u->efd);
		io_uring_queue_exit(&u->ring);
		free(u);
		return ret;
	}
	u->dfd = nvmet_uring_open_direct(ns, o, u);
	if (u->dfd < 0)
		u->inl = nvmet_uring_probe_inline(ns->fd);
	pthread_mutex_init(&u->sq_lock, NULL);
	pthread_mutex_init(&u->cq_lock, NULL);
	ns->uring = u;
	ret = pthread_create(&u->reaper, NULL, nvmet_uring_reaper, ns);
	if (ret) {
		ns->uring = NULL;
		pthread_mutex_destroy(&u->sq_lock);
		pthread_mutex_destroy(&u->cq_lock);
		if (u->dfd >= 0)
			close(u->dfd);
		free(u->bounce);
		io_uring_queue_exit(&u->ring);
		close(u->efd);
		free(u);
		return -ret;
	}
	return 0;
}

/*
 * nvmet_uring_direct() - whether @ns's ring does O_DIRECT (all its Reads
 * and Writes then).
 */
bool nvmet_uring_direct(const struct nvmet_ns *ns)
{
	return ns->uring && ns->uring->dfd >= 0;
}

/*
 * nvmet_uring_counts() - Reads and Writes submitted to @ns's ring so far:
 * O_DIRECT from the request's buffer (@out[0]), O_DIRECT through a bounce
 * slot (@out[1]), buffered (@out[2]); zeroes without a ring.
 */
void nvmet_uring_counts(struct nvmet_ns *ns, u64 out[3])
{
	struct nvmet_uring *u = ns->uring;

	out[0] = out[1] = out[2] = 0;
	if (!u)
		return;
	pthread_mutex_lock(&u->sq_lock);
	out[0] = u->direct_ios;
	out[1] = u->bounced_ios;
	out[2] = u->buffered_ios;
	pthread_mutex_unlock(&u->sq_lock);
}

/*
 * nvmet_uring_stats() - @ns's ring's submission counters (zeroes without a
 * ring), for tests
 */
void nvmet_uring_stats(struct nvmet_ns *ns, struct nvmet_uring_stats *st)
{
	struct nvmet_uring *u = ns->uring;

	memset(st, 0, sizeof(*st));
	if (!u)
		return;
	pthread_mutex_lock(&u->sq_lock);
	*st = u->st;
	pthread_mutex_unlock(&u->sq_lock);
}

/*
 * nvmet_uring_close() - stop @ns's reaper and free its ring (nothing is
 * in flight: each I/O holds a namespace reference).
 */
void nvmet_uring_close(struct nvmet_ns *ns)
{
	struct nvmet_uring *u = ns->uring;
	struct io_uring_sqe *sqe;
	int tries = 0;

	if (!u)
		return;
	pthread_mutex_lock(&u->sq_lock);
	while (!(sqe = io_uring_get_sqe(&u->ring)) && tries++ < 1000)
		io_uring_submit(&u->ring);
	if (sqe) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, NULL);
		while (io_uring_submit(&u->ring) < 0 && tries++ < 1000)
			;
	}
	pthread_mutex_unlock(&u->sq_lock);
	if (!sqe) { /* the reaper cannot be told: leak rather than crash */
		nvmet_err("namespace %u: io_uring: no room to stop", ns->nsid);
		ns->uring = NULL;
		return;
	}
	pthread_join(u->reaper, NULL);
	pthread_mutex_destroy(&u->sq_lock);
	pthread_mutex_destroy(&u->cq_lock);
	if (u->dfd >= 0)
		close(u->dfd);
	free(u->bounce);
	io_uring_queue_exit(&u->ring);
	close(u->efd);
	free(u);
	ns->uring = NULL;
}

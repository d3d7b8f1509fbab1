// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Namespace backends: memory (anonymous mapping, so untouched blocks cost
 * nothing), a regular file (pread/pwrite, fallocate for Write Zeroes and
 * deallocate; on tmpfs a shared mapping of it while a write lease holds
 * everyone else off, below) and a block device (pread/pwrite, BLKZEROOUT
 * and BLKDISCARD).  Read, Write and Flush go through ops->submit, which ends
 * in io->done: these backends call it before they return; an
 * asynchronous one (backend-uring.c) from its reaper, and the test delay
 * below from its own thread.  Write Zeroes and deallocate stay
 * synchronous; every call returns 0 or -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "nvmet_int.h"

static int nvmet_blksize_shift(const struct nvmet_ns_opts *o)
{
	return o->block_size == 4096 ? 12 : 9;
}

/* ---- RAM ---------------------------------------------------------------------- */

static int ram_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	void *p;

	ns->size = o->size >> ns->blksize_shift << ns->blksize_shift;
	if (!ns->size)
		return -EINVAL;
	p = mmap(NULL, ns->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	/*
	 * Transparent huge pages where the kernel allows them (best effort):
	 * random 4 KiB commands over a namespace larger than the TLB's reach
	 * then walk the page tables far less (64 MiB: reads per core +15-20 %,
	 * bench/README.md); first writes take 2 MiB at a time.
	 */
	madvise(p, ns->size, MADV_HUGEPAGE);
	ns->ram = p;
	ns->mapped = true; /* reads may name its bytes: nvmet_ns_zcopy() */
	return 0;
}

static void ram_close(struct nvmet_ns *ns)
{
	if (ns->ram)
		munmap(ns->ram, ns->size);
	ns->ram = NULL;
}

/*
 * @io on the namespace's bytes at @base (RAM, or a tmpfs file mapped).  A
 * read without a copy hands out the namespace's own bytes: a RAM mapping
 * stays until ram_close(), which runs only once every request that found
 * the namespace has dropped its reference (after its data was sent); a
 * file's, see map_switch().
 */
static int mem_submit(void *base, struct nvmet_backend_io *io)
{
	char *p = (char *)base + io->off;

	switch (io->op) {
	case NVMET_IO_READ_ZCOPY:
		io->buf = p;
		/*
		 * The device copies from here soon: the first lines on
		 * their way now (the hardware's streamer fetches the rest
		 * once the copy runs).  Cold data (a namespace past the
		 * caches) gains 0-8 % per core, data in cache pays 29
		 * instructions (bench/README.md).
		 */
		for (u32 i = 0; i < io->len && i < 256; i += 64)
			__builtin_prefetch(p + i, 0, 3);
		break;
	case NVMET_IO_READ:
		memcpy(io->buf, p, io->len);
		break;
	case NVMET_IO_WRITE:
		memcpy(p, io->buf, io->len);
		break;
	default: /* flush: memory is as durable as it gets */
		break;
	}
	io->done(io, 0);
	return 0;
}

static int ram_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	return mem_submit(ns->ram, io);
}

static int ram_zero(struct nvmet_ns *ns, u64 len, u64 off)
{
	memset((char *)ns->ram + off, 0, len);
	return 0;
}

static const struct nvmet_backend_ops nvmet_ram_ops = {
	.name = "ram",
	.open = ram_open,
	.close = ram_close,
	.submit = ram_submit,
	.write_zeroes = ram_zero,
	.discard = ram_zero,
	.zcopy = true,
};

/* ---- file and block device: shared I/O ---------------------------------------- */

static int fd_read(struct nvmet_ns *ns, void *buf, u64 len, u64 off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(ns->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) { /* past the end of a file: zeroes */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		off += (u64)n;
		len -= (u64)n;
	}
	return 0;
}

static int fd_write(struct nvmet_ns *ns, const void *buf, u64 len, u64 off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(ns->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		off += (u64)n;
		len -= (u64)n;
	}
	return 0;
}

static int fd_flush(struct nvmet_ns *ns)
{
	return fdatasync(ns->fd) ? -errno : 0;
}

/* The synchronous file and block-device I/O: done before it returns. */
static int fd_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	int ret;

	if (io->op == NVMET_IO_READ)
		ret = fd_read(ns, io->buf, io->len, io->off);
	else if (io->op == NVMET_IO_WRITE)
		ret = fd_write(ns, io->buf, io->len, io->off);
	else
		ret = fd_flush(ns);
	io->done(io, ret);
	return 0;
}

/* Zeroes by writing them, when the file system cannot allocate them. */
static int fd_write_zeroes_slow(struct nvmet_ns *ns, u64 len, u64 off)
{
	static const char zero[65536];
	int ret;

	while (len) {
		u64 n = min_t(u64, len, sizeof(zero));

		ret = fd_write(ns, zero, n, off);
		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

/* The whole of @ns written with zeroes (every block allocated, written). */
static int file_write_zeroes_written(struct nvmet_ns *ns)
{
	return fd_write_zeroes_slow(ns, ns->size, 0);
}

static void fd_close(struct nvmet_ns *ns)
{
	if (ns->fd >= 0)
		close(ns->fd);
	ns->fd = -1;
}

/* ---- file -------------------------------------------------------------------------- */

static int file_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	int flags = o->readonly ? O_RDONLY : O_RDWR;
	struct stat st;
	u64 size;

	if (o->size && !o->readonly)
		flags |= O_CREAT;
	/* a file it creates is the owner's alone unless asked (issue 27) */
	ns->fd = open(o->path, flags | O_CLOEXEC,
		      o->create_mode ? (mode_t)o->create_mode : 0600);
	if (ns->fd < 0)
		return -errno;
	/* a block device wants --bdev, anything else is refused too */
	if (fstat(ns->fd, &st) || !S_ISREG(st.st_mode)) {
		fd_close(ns);
		return -EINVAL;
	}
	size = o->size ? o->size : (u64)st.st_size;
	if (o->size && (u64)st.st_size < o->size &&
	    ftruncate(ns->fd, (off_t)o->size)) {
		int err = -errno;

		fd_close(ns);
		return err;
	}
	ns->size = size >> ns->blksize_shift << ns->blksize_shift;
	if (!ns->size) {
		fd_close(ns);
		return -EINVAL;
	}
	return 0;
}

static int file_write_zeroes(struct nvmet_ns *ns, u64 len, u64 off)
{
	if (!fallocate(ns->fd, FALLOC_FL_ZERO_RANGE, (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	return fd_write_zeroes_slow(ns, len, off);
}

static int file_discard(struct nvmet_ns *ns, u64 len, u64 off)
{
	if (!fallocate(ns->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	/* deallocated blocks must read as zeroes (DLFEAT says so) */
	return fd_write_zeroes_slow(ns, len, off);
}

static const struct nvmet_backend_ops nvmet_file_ops = {
	.name = "file",
	.open = file_open,
	.close = fd_close,
	.submit = fd_submit,
	.write_zeroes = file_write_zeroes,
	.discard = file_discard,
};

/* ---- block device ---------------------------------------------------------------- */

static int bdev_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	struct stat st;
	u64 size = 0;
	int lbs = 0;

	ns->fd = open(o->path, (o->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (ns->fd < 0)
		return -errno;
	if (fstat(ns->fd, &st) || !S_ISBLK(st.st_mode) ||
	    ioctl(ns->fd, BLKGETSIZE64, &size) || !size) {
		fd_close(ns);
		return -ENOTBLK;
	}
	/* the LBA size cannot be below the device's logical block size */
	if (!ioctl(ns->fd, BLKSSZGET, &lbs) && lbs > (1 << ns->blksize_shift)) {
		if (lbs != 4096) {
			fd_close(ns);
			return -EINVAL;
		}
		ns->blksize_shift = 12;
	}
	ns->size = size >> ns->blksize_shift << ns->blksize_shift;
	if (!ns->size) { /* less than one LBA */
		fd_close(ns);
		return -EINVAL;
	}
	return 0;
}

static int bdev_write_zeroes(struct nvmet_ns *ns, u64 len, u64 off)
{
	u64 range[2] = { off, len };

	if (!ioctl(ns->fd, BLKZEROOUT, range))
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOTTY)
		return -errno;
	return fd_write_zeroes_slow(ns, len, off);
}

/*
 * Deallocate: BLKDISCARD does not promise zeroes, DLFEAT does; zero the
 * range instead (BLKZEROOUT unmaps where the device can).
 */
static int bdev_discard(struct nvmet_ns *ns, u64 len, u64 off)
{
	return bdev_write_zeroes(ns, len, off);
}

static const struct nvmet_backend_ops nvmet_bdev_ops = {
	.name = "bdev",
	.open = bdev_open,
	.close = fd_close,
	.submit = fd_submit,
	.write_zeroes = bdev_write_zeroes,
	.discard = bdev_discard,
};

/* ---- the tests' delay ------------------------------------------------------ */

/*
 * opts.test_delay_ms and test_errno: each Read, Write and Flush waits on
 * a list of the namespace's (in order) until its time is up or a test
 * lets it go (nvmet_ns_delay_release()), then the namespace's thread
 * submits it to the backend, or fails it with test_errno.  Its done thus
 * runs on another thread than the capsule's, later, as io_uring's does.
 * The list links the I/Os themselves: nothing is allocated per I/O.
 */
struct nvmet_ns_delay {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nvmet_backend_io *head, *tail;
	unsigned int held; /* on the list */
	unsigned int release; /* to let go before their time */
	bool stop;
	u64 delay_ns;
	int err;
};

static u64 nvmet_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* Take the head when it is due (@d->lock held); NULL otherwise. */
static struct nvmet_backend_io *delay_pop(struct nvmet_ns_delay *d)
{
	struct nvmet_backend_io *io = d->head;

	if (!io)
		return NULL;
	if (d->stop || d->release)
		d->release -= !!d->release;
	else if (nvmet_now_ns() < io->resid)
		return NULL;
	d->head = io->next;
	if (!d->head)
		d->tail = NULL;
	d->held--;
	return io;
}

static void delay_wait(struct nvmet_ns_delay *d)
{
	struct timespec ts;

	if (!d->head) {
		pthread_cond_wait(&d->cond, &d->lock);
		return;
	}
	ts.tv_sec = (time_t)(d->head->resid / 1000000000ull);
	ts.tv_nsec = (long)(d->head->resid % 1000000000ull);
	pthread_cond_timedwait(&d->cond, &d->lock, &ts);
}

static void *delay_thread(void *arg)
{
	struct nvmet_ns *ns = arg;
	struct nvmet_ns_delay *d = ns->delay;
	struct nvmet_backend_io *io;
	int ret;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		io = delay_pop(d);
		if (!io) {
			if (d->stop)
				break;
			delay_wait(d);
			continue;
		}
		pthread_mutex_unlock(&d->lock);
		io->resid = 0;
		ret = d->err;
		if (!ret)
			ret = ns->ops->submit(ns, io);
		if (ret)
			io->done(io, ret);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static void delay_queue(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	struct nvmet_ns_delay *d = ns->delay;

	io->next = NULL;
	io->resid = nvmet_now_ns() + d->delay_ns;
	pthread_mutex_lock(&d->lock);
	if (d->tail)
		d->tail->next = io;
	else
		d->head = io;
	d->tail = io;
	d->held++;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static int delay_start(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	struct nvmet_ns_delay *d = calloc(1, sizeof(*d));
	pthread_condattr_t ca;

	if (!d)
		return -ENOMEM;
	d->delay_ns = (u64)o->test_delay_ms * 1000000ull;
	d->err = o->test_errno > 0 ? -o->test_errno : o->test_errno;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cond, &ca);
	pthread_condattr_destroy(&ca);
	ns->delay = d;
	if (pthread_create(&d->thread, NULL, delay_thread, ns)) {
		ns->delay = NULL;
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -EAGAIN;
	}
	return 0;
}

/* Nothing is held by then (each I/O holds a namespace reference). */
static void delay_stop(struct nvmet_ns *ns)
{
	struct nvmet_ns_delay *d = ns->delay;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
	ns->delay = NULL;
}

/*
 * nvmet_ns_delay_held() - how many I/Os the tests' delay of @ns holds
 * (0 without one).
 */
unsigned int nvmet_ns_delay_held(struct nvmet_ns *ns)
{
	struct nvmet_ns_delay *d = ns->delay;
	unsigned int n;

	if (!d)
		return 0;
	pthread_mutex_lock(&d->lock);
	n = d->held;
	pthread_mutex_unlock(&d->lock);
	return n;
}

/*
 * nvmet_ns_delay_release() - let the next @n I/Os the tests' delay holds
 * (or will hold) go now, in order.
 */
void nvmet_ns_delay_release(struct nvmet_ns *ns, unsigned int n)
{
	struct nvmet_ns_delay *d = ns->delay;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->release += n;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/*
 * $RDMARW_NVMET_BENCH_FILE_ALLOC=written: the bench file's blocks written
 * (zeroes) before the run, so that no write of the run lands in a hole or
 * an unwritten extent; otherwise the file is sparse.
 */
static int bench_file_fill(struct nvmet_ns *ns)
{
	const char *a = getenv("RDMARW_NVMET_BENCH_FILE_ALLOC");

	if (!a || strcmp(a, "written"))
		return 0;
	return file_write_zeroes_written(ns) ?: fd_flush(ns);
}

/*
 * $RDMARW_NVMET_BENCH_FILE_DIR (bench/README.md): a RAM namespace is an
 * unnamed file of its size in that directory instead (O_TMPFILE), so that
 * bench-nvmet compares a file system with memory unchanged.
 */
static int bench_file_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	const char *dir = getenv("RDMARW_NVMET_BENCH_FILE_DIR");
	int ret;

	ns->size = o->size >> ns->blksize_shift << ns->blksize_shift;
	if (!ns->size)
		return -EINVAL;
	ns->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (ns->fd < 0)
		return -errno;
	if (ftruncate(ns->fd, (off_t)ns->size)) {
		int err = -errno;

		fd_close(ns);
		return err;
	}
	ret = bench_file_fill(ns);
	if (ret)
		fd_close(ns);
	return ret;
}

/* ---- io_uring --------------------------------------------------------------------- */

#ifdef RDMARW_HAVE_URING
static void uring_close(struct nvmet_ns *ns)
{
	nvmet_uring_close(ns);
	fd_close(ns);
}

static const struct nvmet_backend_ops nvmet_file_uring_ops = {
	.name = "file",
	.open = file_open,
	.close = uring_close,
	.submit = nvmet_uring_submit,
	.poll = nvmet_uring_poll,
	.unplug = nvmet_uring_unplug,
	.write_zeroes = file_write_zeroes,
	.discard = file_discard,
};

static const struct nvmet_backend_ops nvmet_bdev_uring_ops = {
	.name = "bdev",
	.open = bdev_open,
	.close = uring_close,
	.submit = nvmet_uring_submit,
	.poll = nvmet_uring_poll,
	.unplug = nvmet_uring_unplug,
	.write_zeroes = bdev_write_zeroes,
	.discard = bdev_discard,
};
#endif

/*
 * A file or block device is open: io_uring for its Read, Write and Flush
 * unless asked not to or unavailable, said either way.
 */
static void nvmet_ns_pick_io(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	const char *why = "asked";
#ifdef RDMARW_HAVE_URING
	int ret;

	if (o->io_engine != NVMET_IO_ENGINE_SYNC) {
		ret = nvmet_uring_open(ns, o);
		if (!ret) {
			nvmet_plug_cq_hooks();
			ns->ops = ns->ops == &nvmet_bdev_ops ?
					  &nvmet_bdev_uring_ops :
					  &nvmet_file_uring_ops;
			nvmet_printk(NVMET_LOG_NOTICE,
				     "rdmarw-nvmet: namespace %u: io_uring, %s",
				     ns->nsid,
				     nvmet_uring_direct(ns) ? "O_DIRECT" :
							      "buffered");
			return;
		}
		why = ret == -ENOSYS ? "ENOSYS" :
		      ret == -EPERM  ? "EPERM" :
				       strerror(-ret);
		nvmet_printk(NVMET_LOG_NOTICE,
			     "rdmarw-nvmet: namespace %u: io_uring unavailable "
			     "(%s): synchronous file I/O",
			     ns->nsid, why);
		return;
	}
#else
	if (o->io_engine != NVMET_IO_ENGINE_SYNC)
		why = "built without liburing";
#endif
	nvmet_printk(NVMET_LOG_NOTICE,
		     "rdmarw-nvmet: namespace %u: synchronous file I/O (%s)",
		     ns->nsid, why);
}

/* ---- a tmpfs file mapped ------------------------------------------------------ */

/*
 * A file namespace on tmpfs is memory already: each pread/pwrite of it is
 * a system call (~0.5 us) where a RAM namespace's command is a memcpy, and
 * io_uring cannot batch them (it hands shmem I/O to io-wq: no RWF_NOWAIT
 * on shmem).  So such a file is served like RAM, from a MAP_SHARED mapping
 * of it: Reads without a copy (the mapping's bytes are the RDMA WRITE's
 * source) or by memcpy, Writes by memcpy, Flush nothing (the mapping is
 * the file's page cache); Write Zeroes and deallocate stay fallocate()
 * through the fd, coherent with the mapping on tmpfs (a punched hole reads
 * zeroes through it; the size stays).
 *
 * The danger: a page of the mapping past the file's end (someone
 * truncated it) turns an access into SIGBUS, which would end the target.
 * So the mapping is used only under a write lease of the file
 * (fcntl(F_SETLEASE, F_WRLCK), fcntl(2)): the kernel grants it only while
 * no one else has the file open (EAGAIN otherwise: then no mapping), and
 * anyone's later open() or truncate() of it must first break the lease:
 * the opener blocks (up to /proc/sys/fs/lease-break-time, 45 s by
 * default) until the holder gives it up.  F_SETLEASE also makes the
 * process the fd's signal owner, the break notice being SIGIO, which
 * ends a process by default (fs/locks.c lease_setup() calls
 * __f_setown(), lease_break_callback() kill_fasync()).  F_SETOWN 0 right
 * after the lease leaves no owner, and send_sigio() (fs/fcntl.c) then
 * signals no one; the lease stays (checked on 6.18: a child's open
 * blocks, F_GETLEASE reads F_UNLCK or F_RDLCK, no signal).  For the
 * instant between the two calls, F_SETSIG first makes the notice
 * SIGWINCH, which is ignored unless handled.  The break is seen by
 * polling F_GETLEASE (the downgraded type while a break is pending) from
 * a watcher thread per tmpfs namespace, every NVMET_MAP_POLL_MS.
 *
 * At a break (map_switch()) the watcher turns ns->mapped off (new commands
 * go to the fd: ns->fd_ops, io_uring or synchronous as the namespace was
 * opened), waits for the commands that may still use the mapping, then
 * gives the lease up (F_SETLEASE F_UNLCK) and the opener proceeds.  The
 * commands it waits for hold the namespace either in their queue's view
 * of the slots or by reference (core.c): the watcher moves the
 * subsystem's generation and waits for the older views' users
 * (nvmet_subsys_ns_sync(), the grace a removal uses), then for the
 * references to fall back to the slot's own.  A zero-copy read holds its
 * view or reference until its data was sent, so it is covered; nothing
 * is added to the data path but a load of ns->mapped (no store shared by
 * two queues).  The mapping stays until close and is not touched while
 * the fd serves.  Bounded: after NVMET_MAP_GRACE_MS the lease is given up
 * anyway (a command that never ends; the kernel would break the lease at
 * lease-break-time regardless), said in the log.
 *
 * While the fd serves (after a break, or from the start when the file was
 * open elsewhere then) the watcher tries to take the lease again every
 * NVMET_MAP_RETRY_MS, and at once when another namespace of the same file
 * closes (a reload's old one: map_kick_peers()), then every
 * NVMET_MAP_POLL_MS for NVMET_MAP_KICK_MS: the closed one's file may stay
 * open a little longer in the kernel (its io_uring rings registered it,
 * and a ring's teardown there ends on a work queue).  It turns the mapping
 * back on only as the start does (map_lease_and_map()): the lease held
 * first, then the file's size checked to cover the namespace (someone may
 * have truncated it meanwhile), the mapping made if there was none, and
 * only then ns->mapped set (a release: a command that sees it sees the
 * mapping).  A command that went to the fd meanwhile ends there; NVMe
 * orders no two outstanding commands, and on tmpfs the fd and the mapping
 * are one page cache.  One failed fcntl() a second while someone holds
 * the file open; nothing per command.
 *
 * $RDMARW_NVMET_TMPFS_MAP=0 keeps every tmpfs file on the fd;
 * $RDMARW_NVMET_TMPFS_RETRY_MS sets the retry's interval (0: never, a
 * break then is for good and a file open elsewhere at the start is never
 * mapped).
 */
#define NVMET_MAP_POLL_MS 50
#define NVMET_MAP_RETRY_MS 1000
#define NVMET_MAP_KICK_MS 2000
#define NVMET_MAP_GRACE_MS 30000

struct nvmet_ns_map {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct list_head entry; /* on nvmet_maps, under nvmet_maps_lock */
	dev_t dev; /* the file's, for map_kick_peers() */
	ino_t ino;
	bool stop; /* under @lock: close asks the watcher to end */
	bool kick; /* under @lock: try the lease now (a peer closed) */
	bool leased; /* the lease held (the watcher's, close's after the join) */
	bool said; /* a retry's other failure than EAGAIN logged (the watcher's) */
	unsigned int retry_ms; /* how often the lease is tried (0: never) */
	u64 takes; /* atomic: leases taken, the first one included */
	u64 breaks; /* atomic: breaks switched to the fd at */
};

/* Every tmpfs namespace's watcher, so that a closing one can wake its peers. */
static pthread_mutex_t nvmet_maps_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(nvmet_maps);

static int map_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	/*
	 * A read without a copy was decided while the mapping served (it
	 * holds the namespace since: the switch waits for it).
	 */
	if (likely(nvmet_ns_mapped(ns)) || io->op == NVMET_IO_READ_ZCOPY)
		return mem_submit(ns->ram, io);
	return ns->fd_ops->submit(ns, io);
}

static int map_poll(struct nvmet_ns *ns)
{
	return ns->fd_ops->poll ? ns->fd_ops->poll(ns) : 0;
}

/* Only ever called for what fd_ops->submit held back (it has an unplug). */
static void map_unplug(struct nvmet_ns *ns)
{
	ns->fd_ops->unplug(ns);
}

/* Wait until @ms have passed, or close or a peer asks (@m->lock held). */
static void map_sleep(struct nvmet_ns_map *m, unsigned int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	if (!m->stop && !m->kick)
		pthread_cond_timedwait(&m->cond, &m->lock, &ts);
}

static u64 map_now_ms(void)
{
	return nvmet_now_ns() / 1000000ull;
}

/*
 * Wait (until @deadline, map_now_ms()'s) for the moment no request holds
 * @ns by reference: then none that found it before the switch does.
 */
static bool map_refs_drained(struct nvmet_ns *ns, u64 deadline)
{
	struct timespec ts = { 0, 200 * 1000 };

	/* the slot's reference (1); with the slot gone, the requests' end */
	while (__atomic_load_n(&ns->ref, __ATOMIC_ACQUIRE) > 1) {
		if (map_now_ms() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

/* Give @ns's lease up, if held (fcntl errors: the close of the fd does). */
static void map_unlease(struct nvmet_ns *ns)
{
	if (fcntl(ns->fd, F_SETLEASE, F_UNLCK))
		nvmet_err("namespace %u: giving the lease up: %s", ns->nsid,
			  strerror(errno));
}

/*
 * The lease is breaking: new commands to the fd, wait for those that may
 * still use the mapping, give the lease up (the opener proceeds).
 */
static void map_switch(struct nvmet_ns *ns, struct nvmet_subsys *s)
{
	u64 t0 = map_now_ms();
	bool drained = true;

	/* before the generation moves: a command that sees it sees this */
	__atomic_store_n(&ns->mapped, false, __ATOMIC_SEQ_CST);
	nvmet_printk(NVMET_LOG_NOTICE,
		     "rdmarw-nvmet: namespace %u: the file's lease is breaking "
		     "(opened or truncated elsewhere): %s file I/O until it "
		     "can be taken again",
		     ns->nsid, ns->fd_ops->unplug ? "io_uring" : "synchronous");
	if (s) {
		spin_lock(&s->ns_lock);
		__atomic_add_fetch(&s->ns_gen, 1, __ATOMIC_SEQ_CST);
		spin_unlock(&s->ns_lock);
		drained = !nvmet_subsys_ns_sync(s, NVMET_MAP_GRACE_MS);
	}
	drained = map_refs_drained(ns, t0 + NVMET_MAP_GRACE_MS) && drained;
	map_unlease(ns);
	ns->map->leased = false;
	__atomic_add_fetch(&ns->map->breaks, 1, __ATOMIC_RELAXED);
	if (drained)
		nvmet_printk(NVMET_LOG_NOTICE,
			     "rdmarw-nvmet: namespace %u: the mapping's "
			     "commands ended in %llu ms, lease given up",
			     ns->nsid, (unsigned long long)(map_now_ms() - t0));
	else
		nvmet_err("namespace %u: commands still use the mapping after "
			  "%u ms: lease given up anyway",
			  ns->nsid, NVMET_MAP_GRACE_MS);
}

/*
 * Lease @ns's file and map it, or find its mapping still good (the lease
 * first: no one else has the file open from then on, so its size checked
 * after it stays).  0 when the lease is held and ns->ram maps the whole
 * namespace; -EAGAIN when someone else has the file open; another -errno
 * otherwise (*@why says which; the lease not held either way).
 */
static int map_lease_and_map(struct nvmet_ns *ns, const char **why)
{
	struct stat st;
	void *p;
	int err;

	/* the break's notice, should it come before F_SETOWN: ignored */
	if (fcntl(ns->fd, F_SETSIG, SIGWINCH))
		goto fail;
	if (fcntl(ns->fd, F_SETLEASE, F_WRLCK)) {
		if (errno != EAGAIN)
			goto fail;
		*why = "the file is open elsewhere";
		return -EAGAIN;
	}
	/* F_SETLEASE made this process the fd's owner again: none */
	if (fcntl(ns->fd, F_SETOWN, 0) || fstat(ns->fd, &st))
		goto unlease;
	if ((u64)st.st_size < ns->size) {
		map_unlease(ns);
		*why = "the file is shorter than the namespace";
		return -ERANGE;
	}
	if (ns->ram) /* the shared mapping of the file stays good */
		return 0;
	p = mmap(NULL, ns->size, PROT_READ | (ns->readonly ? 0 : PROT_WRITE),
		 MAP_SHARED, ns->fd, 0);
	if (p == MAP_FAILED)
		goto unlease;
	ns->ram = p;
	return 0;
unlease:
	err = -errno;
	map_unlease(ns);
	*why = strerror(-err);
	return err;
fail:
	*why = strerror(errno);
	return -errno;
}

/*
 * The fd serves @ns: take the lease again, and with it the mapping (the
 * watcher, @m->lock not held).  A failure other than the file's being
 * open elsewhere is logged once until the next success.
 */
static void map_retake(struct nvmet_ns *ns)
{
	struct nvmet_ns_map *m = ns->map;
	const char *why;
	int ret = map_lease_and_map(ns, &why);

	if (ret) {
		if (ret != -EAGAIN && !m->said)
			nvmet_printk(
				NVMET_LOG_NOTICE,
				"rdmarw-nvmet: namespace %u: tmpfs file "
				"still not mapped (%s), retried every %u ms",
				ns->nsid, why, m->retry_ms);
		m->said |= ret != -EAGAIN;
		return;
	}
	m->said = false;
	m->leased = true;
	__atomic_add_fetch(&m->takes, 1, __ATOMIC_RELAXED);
	/* after the mapping is made: a command that sees it, sees that */
	__atomic_store_n(&ns->mapped, true, __ATOMIC_SEQ_CST);
	nvmet_printk(
		NVMET_LOG_NOTICE,
		"rdmarw-nvmet: namespace %u: the file's lease taken again: "
		"mapped",
		ns->nsid);
}

/* After a retry at @now, the next one's time (faster until @fast_until). */
static u64 map_next_try(const struct nvmet_ns_map *m, u64 now, u64 fast_until)
{
	if (now < fast_until)
		return now + min_t(u64, m->retry_ms, NVMET_MAP_POLL_MS);
	return now + m->retry_ms;
}

/* How long the watcher sleeps, at @now, while the fd serves. */
static unsigned int map_retry_wait(const struct nvmet_ns_map *m, u64 now,
				   u64 next_try)
{
	if (!m->retry_ms) /* no retry: until close */
		return 3600000u;
	return next_try > now ? (unsigned int)(next_try - now) : 0;
}

/*
 * The watcher: poll the lease while it holds, until it breaks; at a break
 * before the namespace is in a slot (no command can have it yet) wait for
 * the slot, or for close.  While the fd serves, try the lease every
 * NVMET_MAP_RETRY_MS or when kicked.  Until close.
 */
static void *map_watch(void *arg)
{
	struct nvmet_ns *ns = arg;
	struct nvmet_ns_map *m = ns->map;
	struct nvmet_subsys *s;
	u64 t0 = 0, next_try = map_now_ms() + m->retry_ms, fast_until = 0, now;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		if (!m->leased) {
			now = map_now_ms();
			if (m->kick) { /* (never set without a retry) */
				m->kick = false;
				next_try = now;
				fast_until = now + NVMET_MAP_KICK_MS;
			}
			if (m->retry_ms && now >= next_try) {
				pthread_mutex_unlock(&m->lock);
				map_retake(ns);
				pthread_mutex_lock(&m->lock);
				now = map_now_ms();
				next_try = map_next_try(m, now, fast_until);
			}
			if (!m->leased) {
				map_sleep(m, map_retry_wait(m, now, next_try));
				continue;
			}
		}
		if (!t0 && fcntl(ns->fd, F_GETLEASE) != F_WRLCK)
			t0 = map_now_ms();
		if (t0) {
			s = __atomic_load_n(&ns->subsys, __ATOMIC_ACQUIRE);
			if (s || map_now_ms() - t0 >= NVMET_MAP_GRACE_MS) {
				pthread_mutex_unlock(&m->lock);
				map_switch(ns, s);
				pthread_mutex_lock(&m->lock);
				t0 = 0;
				next_try = map_now_ms() + m->retry_ms;
				continue;
			}
		}
		/* a peer's close: nothing to try while leased */
		m->kick = false;
		map_sleep(m, NVMET_MAP_POLL_MS);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/*
 * A namespace of the file (@dev, @ino) closed: the other namespaces of it
 * try the lease now rather than at their next retry (a reload's new
 * namespace, which found the old one's fd open).
 */
static void map_kick_peers(dev_t dev, ino_t ino)
{
	struct nvmet_ns_map *m;

	pthread_mutex_lock(&nvmet_maps_lock);
	list_for_each_entry(m, &nvmet_maps, entry)
	{
		if (m->dev != dev || m->ino != ino || !m->retry_ms)
			continue;
		pthread_mutex_lock(&m->lock);
		m->kick = true;
		pthread_cond_signal(&m->cond);
		pthread_mutex_unlock(&m->lock);
	}
	pthread_mutex_unlock(&nvmet_maps_lock);
}

/* Undo the mapping of @ns (its watcher not running): lease, mapping, map. */
static void map_free(struct nvmet_ns *ns, bool leased)
{
	struct nvmet_ns_map *m = ns->map;

	if (leased)
		map_unlease(ns);
	if (ns->ram)
		munmap(ns->ram, ns->size);
	ns->ram = NULL;
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
	ns->map = NULL;
}

static void map_close(struct nvmet_ns *ns)
{
	struct nvmet_ns_map *m = ns->map;
	dev_t dev = m->dev;
	ino_t ino = m->ino;

	pthread_mutex_lock(&nvmet_maps_lock);
	list_del(&m->entry);
	pthread_mutex_unlock(&nvmet_maps_lock);
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	map_free(ns, m->leased);
	ns->fd_ops->close(ns);
	map_kick_peers(dev, ino); /* once this fd is closed */
}

static const struct nvmet_backend_ops nvmet_file_map_ops = {
	.name = "file",
	.open = file_open,
	.close = map_close,
	.submit = map_submit,
	.poll = map_poll,
	.unplug = map_unplug,
	.write_zeroes = file_write_zeroes,
	.discard = file_discard,
	.zcopy = true,
};

/**
 * nvmet_ns_lease_counts() - how often a tmpfs namespace's lease was taken
 * and broken
 * @ns: the namespace (open)
 * @takes: leases taken, the first included (0: never mapped)
 * @breaks: breaks after which the fd served
 *
 * Return: 0, or -ENOENT when @ns has no watcher (not a tmpfs file, or
 * $RDMARW_NVMET_TMPFS_MAP=0, or the mapping failed at open).
 */
int nvmet_ns_lease_counts(struct nvmet_ns *ns, u64 *takes, u64 *breaks)
{
	struct nvmet_ns_map *m = ns->map;

	if (!m)
		return -ENOENT;
	*takes = __atomic_load_n(&m->takes, __ATOMIC_RELAXED);
	*breaks = __atomic_load_n(&m->breaks, __ATOMIC_RELAXED);
	return 0;
}

/*
 * $RDMARW_NVMET_TMPFS_RETRY_MS: how often the watcher tries the lease
 * while the fd serves, 0 to 3600000 (0: never); NVMET_MAP_RETRY_MS
 * without it or when it does not parse.
 */
static unsigned int map_retry_ms(void)
{
	const char *v = getenv("RDMARW_NVMET_TMPFS_RETRY_MS");
	unsigned long ms;
	char *end;

	if (!v || !*v)
		return NVMET_MAP_RETRY_MS;
	errno = 0;
	ms = strtoul(v, &end, 10);
	if (errno || *end || ms > 3600000)
		return NVMET_MAP_RETRY_MS;
	return (unsigned int)ms;
}

/*
 * A file namespace on tmpfs is opened (its ops the file's, io_uring or
 * synchronous): serve it from a shared mapping under a lease where it can
 * be, said either way.  A file open elsewhere gets the watcher all the
 * same, unmapped (it retries); any other failure leaves the file's ops as
 * they were.
 */
static void nvmet_ns_try_map(struct nvmet_ns *ns)
{
	const char *knob = getenv("RDMARW_NVMET_TMPFS_MAP");
	pthread_condattr_t ca;
	struct nvmet_ns_map *m;
	struct statfs sfs;
	struct stat st;
	const char *why;
	int ret;

	/* (a device node's file system is devtmpfs: TMPFS_MAGIC too) */
	if (fstat(ns->fd, &st) || !S_ISREG(st.st_mode) ||
	    fstatfs(ns->fd, &sfs) || sfs.f_type != TMPFS_MAGIC)
		return;
	if (knob && !strcmp(knob, "0")) {
		why = "RDMARW_NVMET_TMPFS_MAP=0";
		goto no;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		why = strerror(ENOMEM);
		goto no;
	}
	m->retry_ms = map_retry_ms();
	ret = map_lease_and_map(ns, &why);
	if (ret && (ret != -EAGAIN || !m->retry_ms)) {
		free(m);
		goto no;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->leased = !ret;
	m->takes = !ret;
	ns->map = m;
	ns->fd_ops = ns->ops;
	ns->ops = &nvmet_file_map_ops;
	ns->mapped = !ret;
	if (pthread_create(&m->thread, NULL, map_watch, ns)) {
		ns->ops = ns->fd_ops;
		ns->fd_ops = NULL;
		ns->mapped = false;
		map_free(ns, !ret);
		why = "no watcher thread";
		goto no;
	}
	pthread_mutex_lock(&nvmet_maps_lock);
	list_add_tail(&m->entry, &nvmet_maps);
	pthread_mutex_unlock(&nvmet_maps_lock);
	if (ret) {
		nvmet_printk(
			NVMET_LOG_NOTICE,
			"rdmarw-nvmet: namespace %u: tmpfs file not mapped "
			"yet (%s): file I/O, the lease tried every %u ms",
			ns->nsid, why, m->retry_ms);
		return;
	}
	nvmet_printk(NVMET_LOG_NOTICE,
		     "rdmarw-nvmet: namespace %u: tmpfs file mapped (shared, "
		     "under a write lease)",
		     ns->nsid);
	return;
no:
	nvmet_printk(NVMET_LOG_NOTICE,
		     "rdmarw-nvmet: namespace %u: tmpfs file not mapped (%s)",
		     ns->nsid, why);
}

/* ---- the plug ------------------------------------------------------------------ */

/* The plug of this thread's current batch (NULL: none, submit at once). */
static __thread struct nvmet_plug *nvmet_current_plug;

/**
 * nvmet_plug_start() - begin a batch on this thread (blk_start_plug())
 * @plug: the caller's, until nvmet_plug_finish(@plug)
 *
 * Inside a batch already (a plug of an outer caller), nothing: the outer
 * one's finish flushes, as the kernel's nested plugs.
 */
void nvmet_plug_start(struct nvmet_plug *plug)
{
	if (nvmet_current_plug)
		return;
	plug->nr = 0;
	nvmet_current_plug = plug;
}

/*
 * Hand each namespace that held back I/O to its backend's unplug, then
 * drop the reference the plug took on it (nvmet_plug_defer()).
 */
static void nvmet_plug_run(struct nvmet_plug *plug)
{
	struct nvmet_ns *ns;

	/* an unplug's completions may hold back more: taken in this loop */
	while (plug->nr) {
		ns = plug->ns[--plug->nr];
		ns->ops->unplug(ns);
		nvmet_put_namespace(ns);
	}
}

/**
 * nvmet_plug_finish() - end the batch @plug began: submit what it held back
 * @plug: the plug given to nvmet_plug_start() (a nested one: nothing)
 */
void nvmet_plug_finish(struct nvmet_plug *plug)
{
	if (nvmet_current_plug != plug)
		return;
	nvmet_plug_run(plug);
	nvmet_current_plug = NULL;
}

/**
 * nvmet_plug_flush() - submit what this thread's plug holds back now, the
 * plug staying on (a backend about to wait; the kernel's schedule())
 */
void nvmet_plug_flush(void)
{
	if (nvmet_current_plug)
		nvmet_plug_run(nvmet_current_plug);
}

/**
 * nvmet_plug_defer() - may @ns's backend hold a submission back?
 * @ns: the namespace (its backend has @unplug)
 *
 * Return: true when this thread has a plug, which then hands @ns to the
 * backend's unplug when it ends (holding a reference of @ns until then);
 * false (submit now) without a plug, or when the plug is full.
 */
bool nvmet_plug_defer(struct nvmet_ns *ns)
{
	struct nvmet_plug *plug = nvmet_current_plug;
	unsigned int i;

	if (!plug)
		return false;
	for (i = 0; i < plug->nr; i++)
		if (plug->ns[i] == ns)
			return true;
	if (plug->nr == NVMET_PLUG_NS)
		return false;
	/*
	 * The plug keeps @ns until its unplug: what it holds back may be
	 * submitted meanwhile (the backend's own thread flushes the ring),
	 * complete, and end the last command that held @ns, and a removal
	 * then closes it.  The caller's command holds it now (a view's user,
	 * or a reference), so the count is not 0 here.  Once per namespace
	 * and batch.
	 */
	__atomic_fetch_add(&ns->ref, 1, __ATOMIC_RELAXED);
	plug->ns[plug->nr++] = ns;
	return true;
}

/*
 * A CQ thread's poll pass as a batch (rdmarw__cq_set_batch_hooks()): a
 * plug per thread, started by the outermost pass only.
 */
static __thread struct nvmet_plug nvmet_cq_plug;
static __thread unsigned int nvmet_cq_depth;

static void nvmet_cq_batch_begin(void)
{
	if (!nvmet_cq_depth++)
		nvmet_plug_start(&nvmet_cq_plug);
}

static void nvmet_cq_batch_end(void)
{
	if (nvmet_cq_depth && !--nvmet_cq_depth)
		nvmet_plug_finish(&nvmet_cq_plug);
}

/**
 * nvmet_plug_cq_hooks() - make every CQ thread's poll pass a batch (a plug
 * around it); idempotent
 */
void nvmet_plug_cq_hooks(void)
{
	rdmarw__cq_set_batch_hooks(nvmet_cq_batch_begin, nvmet_cq_batch_end);
}

/* ---- entry ------------------------------------------------------------------------- */

/*
 * Start @io on @ns: it ends in io->done, called once, on this thread
 * before this returns or later on another.
 */
void nvmet_ns_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	int ret;

	if (unlikely(io->op == NVMET_IO_READ_ZCOPY && !ns->ops->zcopy)) {
		io->done(io, -EOPNOTSUPP);
		return;
	}
	if (unlikely(ns->delay)) {
		delay_queue(ns, io);
		return;
	}
	ret = ns->ops->submit(ns, io);
	if (unlikely(ret))
		io->done(io, ret);
}

int nvmet_ns_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	int ret;

	ns->blksize_shift = (u8)nvmet_blksize_shift(o);
	ns->readonly = o->readonly;
	ns->fd = -1;
	switch (o->type) {
	case NVMET_BACKEND_RAM:
		ns->ops = &nvmet_ram_ops;
		if (getenv("RDMARW_NVMET_BENCH_FILE_DIR")) {
			ret = bench_file_open(ns, o);
			ns->ops = ret ? NULL : &nvmet_file_ops;
			if (ret)
				return ret;
			goto opened;
		}
		break;
	case NVMET_BACKEND_FILE:
		ns->ops = &nvmet_file_ops;
		break;
	case NVMET_BACKEND_BDEV:
		ns->ops = &nvmet_bdev_ops;
		break;
	default:
		return -EINVAL;
	}
	ret = ns->ops->open(ns, o);
	if (ret) {
		ns->ops = NULL;
		return ret;
	}
opened:
	if (ns->ops != &nvmet_ram_ops) {
		nvmet_ns_pick_io(ns, o);
		if (o->type != NVMET_BACKEND_BDEV) /* a file */
			nvmet_ns_try_map(ns);
	}
	if (o->test_delay_ms || o->test_errno) {
		ret = delay_start(ns, o);
		if (ret) {
			ns->ops->close(ns);
			ns->ops = NULL;
		}
	}
	return ret;
}

void nvmet_ns_close(struct nvmet_ns *ns)
{
	delay_stop(ns);
	if (ns->ops)
		ns->ops->close(ns);
	ns->ops = NULL;
}

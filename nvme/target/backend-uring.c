// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * io_uring for file and block-device namespaces (liburing): Read, Write
 * and Flush are submitted from the thread that executes the command (the
 * queue's) and completed from the ring's completion queue, by the
 * submitting thread itself when it reaps after its io_uring_enter(), else
 * by its reaper thread (woken by an eventfd, which is off while the
 * submitter reaps: nvmet_uring_reaper_fn()), which calls io->done (the
 * kernel's nvmet_file_io_done() and nvmet_bio_done(): submit, then a
 * callback from another context).  A slow device thus holds only its own
 * commands.
 *
 * A ring per (namespace, submitting thread), made on the thread's first
 * submission to the namespace (issue 30): two queues on two threads share
 * no lock and no counter on the data path.  A submitting thread holds one
 * of NVMET_URING_THREADS slots (given back when it exits, through a
 * thread-specific key's destructor; a thread that found none tries again
 * once one is given back); the slot has one eventfd, registered
 * on every ring of the slot, and one reaper, which acts as the slot's
 * thread for what it submits itself.  A ring's submission side is under
 * its @sq_lock, its completion side under its @cq_lock: each taken only
 * by that slot's thread and its reaper (the submitter only tries the
 * latter).  The namespace keeps its rings by slot and closes them all
 * (rings of threads that exited too); a namespace is closed only when no
 * request holds it, so nothing is in flight then.  Beside them each
 * namespace has a shared ring, made at open (so that io_uring is known to
 * work, or the namespace does synchronous I/O): a thread without a slot,
 * or whose ring could not be made, submits there, under that ring's lock.
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
 * ends: one io_uring_enter() per batch and ring.  Buffered, a Read in a
 * batch on the thread's own ring goes to the ring too: the kernel reads
 * what is cached inside the batch's io_uring_enter() (IOCB_NOWAIT); a
 * Read outside a batch (or with $RDMARW_NVMET_URING_READ_RING=0) is read
 * on the submitter's thread first (preadv2(RWF_NOWAIT): a system call per
 * Read) and only what is not cached goes to the ring; on tmpfs every Read
 * and Write is done there (io_uring would punt each one to io-wq).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
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
/* O_DIRECT's bounce slots for unaligned buffers (in-capsule data): a mask */
#define NVMET_URING_BOUNCE 64
#define NVMET_URING_BOUNCE_SIZE NVMET_MAX_INLINE_DATA
/* submitting threads with rings of their own; any other shares a ring */
#define NVMET_URING_THREADS 64
#define NVMET_URING_SHARED NVMET_URING_THREADS /* the shared ring's slot */
/*
 * A reaper's sleep while its rings have I/O in flight (see the reaper);
 * $RDMARW_NVMET_URING_BACKSTOP_MS for tests (a completion left to it then
 * comes after their bound: they see it as lost).
 */
#define NVMET_URING_BACKSTOP_MS 100

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

/*
 * A submitting thread's slot: its reaper, the eventfd its rings signal,
 * the rings (one per namespace it submitted to).  The last slot,
 * NVMET_URING_SHARED, is the shared rings' (every namespace's), used by
 * any thread without a slot of its own.
 */
struct nvmet_uring_slot {
	unsigned int idx;
	bool taken; /* by a live thread (nvmet_uring_slots_lock) */
	pthread_mutex_t life; /* @reaper's start and stop, @running */
	pthread_mutex_t lock; /* @rings, @stop: held for a reaper's pass */
	struct list_head rings;
	bool running;
	bool stop;
	int idle; /* the reaper sleeps unbounded, nothing in flight (atomic) */
	int efd;
	pthread_t reaper;
};

/* One ring: of a namespace, for one slot. */
struct nvmet_uring_ring {
	struct io_uring ring;
	struct nvmet_ns *ns;
	struct nvmet_uring_slot *slot; /* whose eventfd the ring signals */
	struct list_head entry; /* slot->rings */
	pthread_mutex_t sq_lock; /* the submission queue, the counters */
	pthread_mutex_t cq_lock; /* the completion queue: reaper, or trylock */
	pthread_mutex_t sync_lock; /* the last bounce slot (synchronous) */
	bool fixed; /* the namespace's descriptors registered: 0, 1 (O_DIRECT) */
	bool quiet; /* the kernel takes IORING_CQ_EVENTFD_DISABLED */
	int inflight; /* submitted, not reaped (atomic) */
	u64 bounce_free; /* free bounce slots, a mask (atomic) */
	/* NVMET_URING_BOUNCE + 1 slots (O_DIRECT only) */
	char *bounce;
	u64 direct_ios, buffered_ios, bounced_ios; /* (@sq_lock) */
	struct nvmet_uring_stats st; /* (@sq_lock; inline_ios atomic) */
};

struct nvmet_uring {
	enum nvmet_uring_inline inl; /* set at open */
	int dfd; /* O_DIRECT descriptor, -1: buffered */
	u32 mem_align; /* O_DIRECT's buffer alignment */
	u32 off_align; /* ... and offset and length's */
	unsigned int sq_entries;
	unsigned int max_rings; /* rings of their own for threads */
	bool quiet; /* submitters reaping turn the eventfd off (default) */
	bool read_ring; /* NOWAIT: a batch's Reads to the ring, not preadv2 */
	pthread_mutex_t lock; /* stores to @rings, the counts below */
	unsigned int nr_rings, fallbacks;
	bool warned;
	/* by slot (atomic loads); [NVMET_URING_SHARED] made at open */
	struct nvmet_uring_ring *rings[NVMET_URING_THREADS + 1];
};

static struct nvmet_uring_slot nvmet_uring_slots[NVMET_URING_THREADS + 1];
static pthread_mutex_t nvmet_uring_slots_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t nvmet_uring_once = PTHREAD_ONCE_INIT;
static pthread_key_t nvmet_uring_key;
static bool nvmet_uring_key_ok;
/* slots given back so far (stored under nvmet_uring_slots_lock; atomic) */
static unsigned int nvmet_uring_freed;
/* ... when this thread last found every slot taken (it shares the rings) */
static __thread unsigned int nvmet_uring_freed_seen;
static int nvmet_uring_backstop_ms = NVMET_URING_BACKSTOP_MS;

/* This thread's slot (a reaper: its submitter's), NULL until it submits */
static __thread struct nvmet_uring_slot *nvmet_uring_me;
/* A reaper in its pass: its slot, whose @lock it holds */
static __thread struct nvmet_uring_slot *nvmet_uring_pass;
/*
 * The thread holds a ring's @cq_lock (a reaper, or a submitter reaping):
 * what it submits never waits for a completion to be reaped, nor for a
 * slot's locks.
 */
static __thread bool nvmet_uring_reaping;

/* A thread that held a slot exits: the slot is free, its rings stay. */
static void nvmet_uring_slot_exit(void *arg)
{
	struct nvmet_uring_slot *s = arg;

	pthread_mutex_lock(&nvmet_uring_slots_lock);
	s->taken = false;
	__atomic_store_n(&nvmet_uring_freed, nvmet_uring_freed + 1,
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&nvmet_uring_slots_lock);
	nvmet_uring_me = NULL;
}

/* A number from the environment, when it is one within [lo, hi]. */
static bool nvmet_uring_env(const char *name, int lo, int hi, int *out)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return false;
	n = strtol(v, &end, 10);
	if (*end || n < lo || n > hi)
		return false;
	*out = (int)n;
	return true;
}

static void nvmet_uring_init_once(void)
{
	struct nvmet_uring_slot *s;
	unsigned int i;

	for (i = 0; i <= NVMET_URING_SHARED; i++) {
		s = &nvmet_uring_slots[i];
		s->idx = i;
		s->efd = -1;
		pthread_mutex_init(&s->life, NULL);
		pthread_mutex_init(&s->lock, NULL);
		INIT_LIST_HEAD(&s->rings);
	}
	nvmet_uring_env("RDMARW_NVMET_URING_BACKSTOP_MS", 1, 3600 * 1000,
			&nvmet_uring_backstop_ms);
	/* without the key a slot could not be given back: all share */
	nvmet_uring_key_ok =
		!pthread_key_create(&nvmet_uring_key, nvmet_uring_slot_exit);
}

/*
 * The calling thread's slot, taken on its first submission.  A thread that
 * finds every slot taken shares the rings until a slot is given back (a
 * thread exited): then it tries again, at its next submission (until then
 * one load of a counter per I/O), after its plug handed what it held back
 * on the shared rings to the kernel (its unplug will look for the rings
 * of its new slot).  A reaper stays its submitter's.
 */
static struct nvmet_uring_slot *nvmet_uring_self(void)
{
	struct nvmet_uring_slot *s = nvmet_uring_me;
	unsigned int i;

	if (likely(s)) {
		if (likely(s->idx != NVMET_URING_SHARED) ||
		    nvmet_uring_reaping ||
		    __atomic_load_n(&nvmet_uring_freed, __ATOMIC_RELAXED) ==
			    nvmet_uring_freed_seen)
			return s;
		nvmet_plug_flush();
		nvmet_uring_me = NULL;
	}
	s = &nvmet_uring_slots[NVMET_URING_SHARED];
	pthread_mutex_lock(&nvmet_uring_slots_lock);
	for (i = 0; nvmet_uring_key_ok && i < NVMET_URING_THREADS; i++) {
		if (!nvmet_uring_slots[i].taken) {
			s = &nvmet_uring_slots[i];
			s->taken = true;
			break;
		}
	}
	nvmet_uring_freed_seen = nvmet_uring_freed;
	pthread_mutex_unlock(&nvmet_uring_slots_lock);
	if (s->idx != NVMET_URING_SHARED &&
	    pthread_setspecific(nvmet_uring_key, s)) {
		nvmet_uring_slot_exit(s);
		s = &nvmet_uring_slots[NVMET_URING_SHARED];
	}
	nvmet_uring_me = s;
	return s;
}

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

/* A full ring: wait (bounded) until its reaper makes room. */
static int nvmet_uring_room(struct nvmet_uring_ring *r)
{
	u32 waited = 0;

	while (__atomic_load_n(&r->inflight, __ATOMIC_ACQUIRE) >=
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
 * A bounce slot of @r for @io (O_DIRECT, a buffer it cannot take), @buf's
 * data copied in for a write.  None free: wait (bounded) for a reap to
 * give one back; a thread that reaps never waits (-EAGAIN: it bounces
 * synchronously in the ring's last slot).
 */
static int nvmet_uring_bounce_get(struct nvmet_uring_ring *r,
				  struct nvmet_backend_io *io)
{
	u32 waited = 0;
	int slot;
	u64 m;

	if (io->len > NVMET_URING_BOUNCE_SIZE)
		return -EINVAL; /* in-capsule data is smaller */
	for (;;) {
		m = __atomic_load_n(&r->bounce_free, __ATOMIC_ACQUIRE);
		while (m) {
			slot = __builtin_ctzll(m);
			if (__atomic_compare_exchange_n(
				    &r->bounce_free, &m, m & ~(1ull << slot),
				    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				goto got;
		}
		if (nvmet_uring_reaping)
			return -EAGAIN;
		nvmet_plug_flush(); /* their completions give slots back */
		if (!nvmet_uring_wait(&waited))
			return -EBUSY;
	}
got:
	io->bounce = r->bounce + (size_t)slot * NVMET_URING_BOUNCE_SIZE;
	if (io->op == NVMET_IO_WRITE)
		memcpy(io->bounce, io->buf, io->len);
	return 0;
}

/* @io is over: its bounce slot back (a read's data out of it), done. */
static void nvmet_uring_end(struct nvmet_uring_ring *r,
			    struct nvmet_backend_io *io, int err)
{
	size_t slot;

	if (io->bounce) {
		if (!err && io->op == NVMET_IO_READ)
			memcpy(io->buf, io->bounce, io->len);
		slot = (size_t)((char *)io->bounce - r->bounce) /
		       NVMET_URING_BOUNCE_SIZE;
		io->bounce = NULL;
		__atomic_fetch_or(&r->bounce_free, 1ull << slot,
				  __ATOMIC_RELEASE);
	}
	io->done(io, err);
}

/*
 * A thread that reaps found no bounce slot: the I/O is done here,
 * synchronously, through the ring's last slot (O_DIRECT still: never the
 * page cache beside it, whose invalidation would then fail and report
 * -EIO).
 */
static void nvmet_uring_bounce_sync(struct nvmet_uring_ring *r,
				    struct nvmet_backend_io *io)
{
	int dfd = r->ns->uring->dfd;
	char *b = r->bounce +
		  (size_t)NVMET_URING_BOUNCE * NVMET_URING_BOUNCE_SIZE;
	ssize_t n;
	int err = 0;

	pthread_mutex_lock(&r->sync_lock);
	if (io->op == NVMET_IO_WRITE)
		memcpy(b, io->buf, io->len);
	do {
		n = io->op == NVMET_IO_WRITE ?
			    pwrite(dfd, b, io->len, (off_t)io->off) :
			    pread(dfd, b, io->len, (off_t)io->off);
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
	pthread_mutex_unlock(&r->sync_lock);
	io->done(io, err);
}

/*
 * Hand the ring's SQEs to the kernel (@sq_lock held): 0 or -errno.  A
 * failed enter leaves them on the ring for the next one.
 */
static int nvmet_uring_enter(struct nvmet_uring_ring *r)
{
	int tries = 0, ret;

	if (!io_uring_sq_ready(&r->ring))
		return 0;
	r->st.submits++;
	do {
		ret = io_uring_submit(&r->ring);
	} while ((ret == -EINTR || ret == -EAGAIN || ret == -EBUSY) &&
		 ++tries < 1000);
	return ret < 0 ? ret : 0;
}

static void nvmet_uring_ring_free(struct nvmet_uring_ring *r)
{
	pthread_mutex_destroy(&r->sq_lock);
	pthread_mutex_destroy(&r->cq_lock);
	pthread_mutex_destroy(&r->sync_lock);
	io_uring_queue_exit(&r->ring);
	free(r->bounce);
	free(r);
}

static int nvmet_uring_reap(struct nvmet_uring_ring *r);

/*
 * How long @s's reaper may sleep after its pass (@s->lock held): unbounded
 * (-1, @s->idle set) when no quiet ring of the slot has I/O in flight,
 * else NVMET_URING_BACKSTOP_MS (nvmet_uring_reaper_fn()).
 */
static int nvmet_uring_sleep(struct nvmet_uring_slot *s)
{
	struct nvmet_uring_ring *r;

	__atomic_store_n(&s->idle, 1, __ATOMIC_SEQ_CST);
	list_for_each_entry(r, &s->rings, entry)
	{
		if (r->quiet &&
		    __atomic_load_n(&r->inflight, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&s->idle, 0, __ATOMIC_RELAXED);
			return nvmet_uring_backstop_ms;
		}
	}
	return -1;
}

/*
 * A slot's reaper sleeps on the slot's eventfd, not in io_uring_wait_cqe():
 * a completion queue has one consumer at a time (its @cq_lock), and the
 * submitter may be it.  Each wake-up is a pass over the slot's rings,
 * under the slot's lock (which a ring's make and close take): what the
 * reaper submits goes to its slot's rings (nvmet_uring_me).
 *
 * A submitter that reaps its ring itself keeps the kernel from signalling
 * the eventfd meanwhile, from before its io_uring_enter() to the end of
 * its reap (nvmet_uring_quiet(), nvmet_uring_reap_unlock()): the reaper
 * wakes for completions nobody else reaps, not for those.  The race: the kernel
 * publishes a CQE (the tail), then reads the ring's flag to decide
 * whether to signal, and not every kernel puts a full barrier between the
 * two (a store, then a load: the load may pass it).  As the submitter
 * clears the flag and looks at the queue once more, a CQE posted at that
 * moment may be seen by neither: the kernel read the flag still set, the
 * submitter's look missed the CQE.  Nobody would ever reap it.  So, while
 * a quiet ring of the slot has I/O in flight, the reaper sleeps at most
 * NVMET_URING_BACKSTOP_MS: such a completion is late, never lost.  With
 * nothing in flight it sleeps unbounded, @idle set first (then it loads
 * the rings' @inflight); a submitter that leaves I/O in flight after a
 * quiet reap (it raised @inflight, then a full fence, then it loads
 * @idle) and finds @idle set writes the eventfd.  One of the two sees the
 * other's store: the reaper sleeps bounded, or is woken.
 */
static void *nvmet_uring_reaper_fn(void *arg)
{
	struct nvmet_uring_slot *s = arg;
	struct pollfd pfd = { .fd = s->efd, .events = POLLIN };
	struct nvmet_uring_ring *r;
	int timeout = -1, ret;
	bool stop;
	u64 n;

	nvmet_uring_me = s;
	nvmet_uring_reaping = true;
	for (;;) {
		ret = poll(&pfd, 1, timeout);
		if ((ret < 0 && errno != EINTR) ||
		    (ret > 0 && read(s->efd, &n, sizeof(n)) < 0 &&
		     errno != EINTR && errno != EAGAIN)) {
			nvmet_err("io_uring eventfd: %s", strerror(errno));
			break;
		}
		__atomic_store_n(&s->idle, 0, __ATOMIC_RELAXED);
		pthread_mutex_lock(&s->lock);
		nvmet_uring_pass = s;
		list_for_each_entry(r, &s->rings, entry)
		{
			pthread_mutex_lock(&r->cq_lock);
			nvmet_uring_reap(r);
			pthread_mutex_unlock(&r->cq_lock);
		}
		nvmet_uring_pass = NULL;
		timeout = nvmet_uring_sleep(s);
		stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
	}
	return NULL;
}

/* Start @s's reaper if it has none (@s->life held): 0 or -errno. */
static int nvmet_uring_start_reaper(struct nvmet_uring_slot *s)
{
	int ret;

	if (s->running)
		return 0;
	s->efd = eventfd(0, EFD_CLOEXEC);
	if (s->efd < 0)
		return -errno;
	s->stop = false;
	ret = pthread_create(&s->reaper, NULL, nvmet_uring_reaper_fn, s);
	if (ret) {
		close(s->efd);
		s->efd = -1;
		return -ret;
	}
	s->running = true;
	return 0;
}

/*
 * Stop @s's reaper, its rings all gone (@s->life held, not @s->lock; the
 * caller is not the reaper, nor holds a ring's @cq_lock of the slot).
 */
static void nvmet_uring_stop_reaper(struct nvmet_uring_slot *s)
{
	u64 one = 1;

	if (!s->running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_mutex_unlock(&s->lock);
	if (write(s->efd, &one, sizeof(one)) < 0)
		nvmet_err("io_uring eventfd: %s", strerror(errno));
	pthread_join(s->reaper, NULL);
	close(s->efd);
	s->efd = -1;
	s->running = false;
	s->stop = false;
}

/*
 * A ring of slot @s for @ns, listed on the slot (@s->lock held; @s->life
 * too unless the slot's reaper makes it in its pass, its reaper then
 * running): 0, or -errno (nothing made; a reaper it started is left
 * running, for the caller to stop if the slot has no ring).
 */
static int nvmet_uring_ring_make(struct nvmet_ns *ns,
				 struct nvmet_uring_slot *s,
				 struct nvmet_uring_ring **out)
{
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE,
				     .cq_entries = NVMET_URING_CQ };
	struct nvmet_uring *u = ns->uring;
	struct nvmet_uring_ring *r;
	int fds[2], ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = io_uring_queue_init_params(u->sq_entries, &r->ring, &p);
	if (ret) {
		free(r);
		return ret;
	}
	pthread_mutex_init(&r->sq_lock, NULL);
	pthread_mutex_init(&r->cq_lock, NULL);
	pthread_mutex_init(&r->sync_lock, NULL);
	r->ns = ns;
	/*
	 * The ring's own references to the files: no fget()/fput() of the
	 * namespace's shared struct file per I/O in the kernel (a count two
	 * queues would write); without them, the descriptors as they are.
	 */
	fds[0] = ns->fd;
	fds[1] = u->dfd;
	r->fixed = !io_uring_register_files(&r->ring, fds, u->dfd >= 0 ? 2 : 1);
	if (u->dfd >= 0) {
		if (posix_memalign((void **)&r->bounce, NVMET_URING_DIO_ALIGN,
				   (NVMET_URING_BOUNCE + 1) *
					   NVMET_URING_BOUNCE_SIZE)) {
			r->bounce = NULL;
			ret = -ENOMEM;
		}
		r->bounce_free = ~0ull;
	}
	if (!ret && nvmet_uring_pass != s)
		ret = nvmet_uring_start_reaper(s);
	if (!ret)
		ret = io_uring_register_eventfd(&r->ring, s->efd);
	if (ret) {
		nvmet_uring_ring_free(r);
		return ret;
	}
	r->slot = s;
	/* the flag's word mapped (a kernel since 5.8), unless told not to */
	r->quiet = u->quiet && !io_uring_cq_eventfd_toggle(&r->ring, false) &&
		   !io_uring_cq_eventfd_toggle(&r->ring, true);
	list_add_tail(&r->entry, &s->rings);
	*out = r;
	return 0;
}

/*
 * The first submission of slot @s's thread (or reaper) to @ns: a ring of
 * its own, or the shared ring when it cannot have one (said once per
 * namespace; then for good), or, for a thread that reaps and finds the
 * slot busy, the shared ring this time (it never waits for a slot's locks:
 * the slot's reaper may wait for its ring).
 */
static struct nvmet_uring_ring *nvmet_uring_ring_new(struct nvmet_ns *ns,
						     struct nvmet_uring_slot *s)
{
	struct nvmet_uring *u = ns->uring;
	struct nvmet_uring_ring *shared = __atomic_load_n(
		&u->rings[NVMET_URING_SHARED], __ATOMIC_ACQUIRE);
	struct nvmet_uring_ring *r;
	bool in_pass = nvmet_uring_pass == s, stop = false;
	int ret = 0;

	if (!in_pass) {
		if (!nvmet_uring_reaping) {
			pthread_mutex_lock(&s->life);
		} else if (pthread_mutex_trylock(&s->life)) {
			return shared;
		}
		if (!nvmet_uring_reaping) {
			pthread_mutex_lock(&s->lock);
		} else if (pthread_mutex_trylock(&s->lock)) {
			pthread_mutex_unlock(&s->life);
			return shared;
		}
	}
	pthread_mutex_lock(&u->lock);
	r = __atomic_load_n(&u->rings[s->idx], __ATOMIC_ACQUIRE);
	if (r) /* the slot's reaper, or its thread, made it first */
		goto out;
	if (u->nr_rings >= u->max_rings)
		ret = -ENOSPC;
	else
		ret = nvmet_uring_ring_make(ns, s, &r);
	if (ret) {
		r = shared;
		u->fallbacks++;
		stop = !in_pass && list_empty(&s->rings);
		if (!u->warned)
			nvmet_printk(NVMET_LOG_NOTICE,
				     "rdmarw-nvmet: namespace %u: a thread "
				     "shares the namespace's io_uring (%s)",
				     ns->nsid, strerror(-ret));
		u->warned = true;
	} else {
		u->nr_rings++;
	}
	__atomic_store_n(&u->rings[s->idx], r, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&u->lock);
	if (!in_pass) {
		pthread_mutex_unlock(&s->lock);
		if (stop) /* started for the ring that failed */
			nvmet_uring_stop_reaper(s);
		pthread_mutex_unlock(&s->life);
	}
	return r;
}

/* The calling thread's ring for @ns, made on its first submission. */
static struct nvmet_uring_ring *nvmet_uring_ring(struct nvmet_ns *ns)
{
	struct nvmet_uring_slot *s = nvmet_uring_self();
	struct nvmet_uring_ring *r =
		__atomic_load_n(&ns->uring->rings[s->idx], __ATOMIC_ACQUIRE);

	if (likely(r))
		return r;
	return nvmet_uring_ring_new(ns, s);
}

/* The calling thread's ring for @ns if it has one, else NULL. */
static struct nvmet_uring_ring *nvmet_uring_ring_mine(struct nvmet_ns *ns)
{
	struct nvmet_uring_slot *s = nvmet_uring_me;

	if (!s || !ns->uring)
		return NULL;
	return __atomic_load_n(&ns->uring->rings[s->idx], __ATOMIC_ACQUIRE);
}

static int nvmet_uring_poll_ring(struct nvmet_uring_ring *r);
static bool nvmet_uring_quiet(struct nvmet_uring_ring *r);
static int nvmet_uring_reap_unlock(struct nvmet_uring_ring *r, bool quiet);

/*
 * Put @io (what is left of it) on @r: 0 when it was submitted, 1 when
 * this thread's plug holds it back (nvmet_uring_unplug() submits it when
 * the batch ends), -errno when it could not be queued.  Only on the ring
 * the thread's unplug will find is an SQE held back.
 */
static int nvmet_uring_queue(struct nvmet_uring_ring *r,
			     struct nvmet_backend_io *io)
{
	struct nvmet_ns *ns = r->ns;
	struct nvmet_uring *u = ns->uring;
	char *buf = (char *)(io->bounce ? io->bounce : io->buf) + io->resid;
	u64 len = io->len - io->resid, off = io->off + io->resid;
	int fd = u->dfd >= 0 ? u->dfd : ns->fd, ret;
	struct io_uring_sqe *sqe;
	bool plugged, quiet;

	if (r->fixed) /* the registered table's index */
		fd = u->dfd >= 0 ? 1 : 0;

	ret = nvmet_uring_room(r);
	if (ret)
		return ret;
	plugged = nvmet_uring_ring_mine(ns) == r && nvmet_plug_defer(ns);
	pthread_mutex_lock(&r->sq_lock);
	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe) { /* a full ring: what is queued goes first */
		r->st.full++;
		nvmet_uring_enter(r);
		sqe = io_uring_get_sqe(&r->ring);
	}
	if (!sqe) {
		pthread_mutex_unlock(&r->sq_lock);
		return -EBUSY;
	}
	if (io->op == NVMET_IO_READ)
		io_uring_prep_read(sqe, fd, buf, (unsigned int)len, off);
	else if (io->op == NVMET_IO_WRITE)
		io_uring_prep_write(sqe, fd, buf, (unsigned int)len, off);
	else
		io_uring_prep_fsync(sqe, r->fixed ? 0 : ns->fd,
				    IORING_FSYNC_DATASYNC);
	if (r->fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data(sqe, io);
	if (io->op != NVMET_IO_FLUSH && !io->state) {
		if (u->dfd < 0)
			r->buffered_ios++;
		else if (io->bounce)
			r->bounced_ios++;
		else
			r->direct_ios++;
	}
	__atomic_add_fetch(&r->inflight, 1, __ATOMIC_RELAXED);
	/* what this thread wrote to the request, seen by the reaper */
	__atomic_store_n(&io->state, io->state + 1, __ATOMIC_RELEASE);
	r->st.sqes++;
	if (plugged && io_uring_sq_ready(&r->ring) < NVMET_URING_PLUG_MAX) {
		pthread_mutex_unlock(&r->sq_lock);
		return 1;
	}
	if (plugged)
		r->st.full++;
	else
		r->st.unplugged++;
	quiet = nvmet_uring_quiet(r);
	ret = nvmet_uring_enter(r);
	pthread_mutex_unlock(&r->sq_lock);
	/*
	 * The SQE is on the ring either way: a failed enter leaves it for
	 * the next one, and it completes then; it is not failed here.
	 */
	if (ret < 0)
		nvmet_err("namespace %u: io_uring_submit: %s", ns->nsid,
			  strerror(-ret));
	/*
	 * What the kernel finished inside io_uring_enter() (a page-cache
	 * hit, the task_work of earlier I/O) is done here, without waking
	 * the reaper's thread for it.
	 */
	if (quiet)
		nvmet_uring_reap_unlock(r, true);
	else
		nvmet_uring_poll_ring(r);
	return 0;
}

/*
 * nvmet_uring_unplug() - the end of a batch whose plug held back @ns's
 * SQEs on this thread's ring: submit them (one io_uring_enter()), then
 * reap on this thread what the kernel finished inside it.
 */
void nvmet_uring_unplug(struct nvmet_ns *ns)
{
	struct nvmet_uring_ring *r = nvmet_uring_ring_mine(ns);
	bool any, quiet = false;
	int ret;

	if (!r)
		return;
	pthread_mutex_lock(&r->sq_lock);
	any = io_uring_sq_ready(&r->ring);
	if (any) {
		r->st.batches++;
		quiet = nvmet_uring_quiet(r);
	}
	ret = nvmet_uring_enter(r);
	pthread_mutex_unlock(&r->sq_lock);
	if (ret < 0)
		nvmet_err("namespace %u: io_uring_submit: %s", ns->nsid,
			  strerror(-ret));
	if (quiet)
		nvmet_uring_reap_unlock(r, true);
	else if (any)
		nvmet_uring_poll_ring(r);
}

/*
 * @io done on this thread without the ring (@u->inl): true when it is
 * over (io->done called), false when the ring must do it or its rest
 * (io->resid: the bytes already read).
 */
static bool nvmet_uring_inline(struct nvmet_uring_ring *r,
			       struct nvmet_backend_io *io)
{
	struct nvmet_ns *ns = r->ns;
	struct nvmet_uring *u = ns->uring;
	char *p = (char *)io->buf + io->resid;
	u64 len = io->len - io->resid;
	ssize_t n;

	if (u->inl == NVMET_URING_INLINE_NONE || io->op == NVMET_IO_FLUSH ||
	    (u->inl == NVMET_URING_INLINE_NOWAIT && io->op != NVMET_IO_READ))
		return false;
	/*
	 * In a batch on this thread's own ring, a Read goes to the ring too:
	 * the kernel reads what is cached inside the batch's one
	 * io_uring_enter() (IOCB_NOWAIT), where preadv2() here is a system
	 * call per Read (bench/README.md, "ext4 buffered through io_uring":
	 * fewer wake-ups of CQ threads, the same CPU polled).
	 */
	if (u->read_ring && nvmet_uring_ring_mine(ns) == r &&
	    nvmet_plug_defer(ns))
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
	__atomic_add_fetch(&r->st.inline_ios, 1, __ATOMIC_RELAXED);
	io->done(io, 0);
	return true;
}

/*
 * nvmet_uring_submit() - the io_uring backend's submit, on the calling
 * thread's ring for @ns (made now if this is its first): 0, io->done
 * called later (by whoever reaps the ring, or before this returns); or
 * -errno (not taken).
 */
int nvmet_uring_submit(struct nvmet_ns *ns, struct nvmet_backend_io *io)
{
	struct nvmet_uring_ring *r = nvmet_uring_ring(ns);
	int ret;

	io->resid = 0;
	io->state = 0;
	io->bounce = NULL;
	if (nvmet_uring_inline(r, io))
		return 0;
	if (ns->uring->dfd >= 0 && io->op != NVMET_IO_FLUSH &&
	    !nvmet_uring_mem_aligned(ns->uring, io->buf)) {
		ret = nvmet_uring_bounce_get(r, io);
		if (ret == -EAGAIN) {
			nvmet_uring_bounce_sync(r, io);
			return 0;
		}
		if (ret)
			return ret;
	}
	ret = nvmet_uring_queue(r, io);
	if (ret < 0 && io->bounce) {
		nvmet_uring_end(r, io, ret);
		return 0;
	}
	return ret < 0 ? ret : 0;
}

/* What @r said of @io: done, continued or resubmitted (on @r). */
static void nvmet_uring_complete(struct nvmet_uring_ring *r,
				 struct nvmet_backend_io *io, int res)
{
	int tries = __atomic_load_n(&io->state, __ATOMIC_ACQUIRE);
	int ret;

	if (res == -EAGAIN || res == -EINTR) {
		if (tries >= NVMET_URING_RETRIES) {
			nvmet_uring_end(r, io, -EIO);
			return;
		}
		goto again;
	}
	if (res < 0 || io->op == NVMET_IO_FLUSH) {
		nvmet_uring_end(r, io, res < 0 ? res : 0);
		return;
	}
	if (res == 0) {
		if (io->op == NVMET_IO_WRITE) {
			nvmet_uring_end(r, io, -EIO);
			return;
		}
		/* past the end of a shorter file: zeroes */
		memset((char *)(io->bounce ? io->bounce : io->buf) + io->resid,
		       0, io->len - io->resid);
		nvmet_uring_end(r, io, 0);
		return;
	}
	if (io->op == NVMET_IO_READ)
		VALGRIND_MAKE_MEM_DEFINED(
			(char *)(io->bounce ? io->bounce : io->buf) + io->resid,
			(size_t)res);
	io->resid += (u64)res;
	if (io->resid >= io->len) {
		nvmet_uring_end(r, io, 0);
		return;
	}
	/* a short O_DIRECT transfer's rest may be unaligned: then it fails */
again:
	ret = nvmet_uring_queue(r, io);
	if (ret < 0)
		nvmet_uring_end(r, io, ret);
}

/* Reap what is there (@r->cq_lock held); how many. */
static int nvmet_uring_reap(struct nvmet_uring_ring *r)
{
	struct io_uring_cqe *cqe;
	struct nvmet_backend_io *io;
	int n = 0, res;

	while (!io_uring_peek_cqe(&r->ring, &cqe)) {
		io = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		__atomic_sub_fetch(&r->inflight, 1, __ATOMIC_RELEASE);
		nvmet_uring_complete(r, io, res);
		n++;
	}
	return n;
}

/*
 * A submitter about to hand @r its SQEs (@r->sq_lock held) that will reap
 * what they give at once: true when it now holds @r->cq_lock with the
 * eventfd off (IORING_CQ_EVENTFD_DISABLED), for nvmet_uring_reap_unlock();
 * false when @r is not quiet or another thread reaps it (a trylock: the
 * lock order is @cq_lock, then @sq_lock).  What the kernel posts inside
 * the enter (the task_work of earlier I/O runs there) and until the reap
 * ends then wakes nobody: this thread reaps it.
 */
static bool nvmet_uring_quiet(struct nvmet_uring_ring *r)
{
	if (!r->quiet || pthread_mutex_trylock(&r->cq_lock))
		return false;
	io_uring_cq_eventfd_toggle(&r->ring, false);
	return true;
}

/*
 * Reap @r (@r->cq_lock held; @quiet: its eventfd off), then unlock it:
 * how many.  A quiet reap turns the eventfd back on, looks at the queue
 * once more (what the kernel posted while it was off signalled nobody),
 * and wakes an idle reaper if I/O is left in flight: the race is in
 * nvmet_uring_reaper_fn()'s comment.
 */
static int nvmet_uring_reap_unlock(struct nvmet_uring_ring *r, bool quiet)
{
	bool reaping = nvmet_uring_reaping;
	struct nvmet_uring_slot *s = r->slot;
	u64 one = 1;
	int n;

	/* what the completions submit must not wait for the reaper now */
	nvmet_uring_reaping = true;
	n = nvmet_uring_reap(r);
	if (quiet) {
		io_uring_cq_eventfd_toggle(&r->ring, true);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		n += nvmet_uring_reap(r);
		if (__atomic_load_n(&r->inflight, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&s->idle, __ATOMIC_RELAXED) &&
		    write(s->efd, &one, sizeof(one)) < 0)
			nvmet_err("io_uring eventfd: %s", strerror(errno));
	}
	nvmet_uring_reaping = reaping;
	pthread_mutex_unlock(&r->cq_lock);
	return n;
}

/* Reap @r on this thread unless another one is (quietly): how many. */
static int nvmet_uring_poll_ring(struct nvmet_uring_ring *r)
{
	if (pthread_mutex_trylock(&r->cq_lock))
		return 0;
	if (r->quiet)
		io_uring_cq_eventfd_toggle(&r->ring, false);
	return nvmet_uring_reap_unlock(r, r->quiet);
}

/*
 * nvmet_uring_poll() - reap the calling thread's ring for @ns without
 * sleeping (for a transport thread that polls; the slot's reaper does it
 * otherwise).  Returns how many were reaped; 0 when the thread has no
 * ring there or its reaper is reaping it.
 */
int nvmet_uring_poll(struct nvmet_ns *ns)
{
	struct nvmet_uring_ring *r = nvmet_uring_ring_mine(ns);

	return r ? nvmet_uring_poll_ring(r) : 0;
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
	    (1u << ns->blksize_shift) % u->off_align) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Unlist @r from its slot; its slot's reaper stopped if it was the last. */
static void nvmet_uring_ring_unlist(struct nvmet_uring_slot *s,
				    struct nvmet_uring_ring *r)
{
	bool last;

	pthread_mutex_lock(&s->life);
	pthread_mutex_lock(&s->lock);
	list_del_init(&r->entry);
	last = list_empty(&s->rings);
	pthread_mutex_unlock(&s->lock);
	if (last)
		nvmet_uring_stop_reaper(s);
	pthread_mutex_unlock(&s->life);
}

/*
 * @r, unlisted, has nothing in flight (each I/O holds a namespace
 * reference): true.  Otherwise what is left is reaped here, for at most
 * NVMET_URING_WAIT_US; false when some still is (the ring is then leaked
 * rather than freed under the kernel).
 */
static bool nvmet_uring_ring_drain(struct nvmet_uring_ring *r)
{
	struct __kernel_timespec ts = { 0, 50 * 1000 * 1000 };
	struct io_uring_cqe *cqe;
	u32 waited = 0;

	pthread_mutex_lock(&r->cq_lock);
	nvmet_uring_reap(r);
	while (__atomic_load_n(&r->inflight, __ATOMIC_ACQUIRE) &&
	       waited < NVMET_URING_WAIT_US) {
		io_uring_wait_cqe_timeout(&r->ring, &cqe, &ts);
		nvmet_uring_reap(r);
		waited += 50 * 1000;
	}
	pthread_mutex_unlock(&r->cq_lock);
	return !__atomic_load_n(&r->inflight, __ATOMIC_ACQUIRE);
}

/*
 * nvmet_uring_open() - give @ns (its file or device open in ns->fd) its
 * shared ring (the other rings come with the threads that submit): 0, or
 * -errno when io_uring cannot be had (the caller then does synchronous
 * I/O).  $RDMARW_NVMET_NO_URING set to 1 makes it fail as a kernel without
 * io_uring would (-ENOSYS), for tests; $RDMARW_NVMET_URING_RINGS (0 to 64)
 * bounds the threads that get a ring of their own (tests);
 * $RDMARW_NVMET_URING_QUIET=0 leaves the eventfd on while a submitter
 * reaps (the reaper then wakes for those completions too: benchmarks);
 * $RDMARW_NVMET_URING_READ_RING=0 makes a buffered ring's Reads inside a
 * batch go through preadv2(RWF_NOWAIT) each first, as outside a batch
 * (tests, benchmarks: bench/nvmet_file.sh's disk-uring-buffered-pread).
 */
int nvmet_uring_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	struct nvmet_uring_slot *s = &nvmet_uring_slots[NVMET_URING_SHARED];
	const char *no = getenv("RDMARW_NVMET_NO_URING");
	struct nvmet_uring_ring *r = NULL;
	struct nvmet_uring *u;
	int n, ret;

	if (no && !strcmp(no, "1"))
		return -ENOSYS;
	pthread_once(&nvmet_uring_once, nvmet_uring_init_once);
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->sq_entries = NVMET_URING_SQ;
	/* tests: a smaller submission queue, to fill it within a batch */
	if (nvmet_uring_env("RDMARW_NVMET_URING_SQ", 1, NVMET_URING_SQ, &n))
		u->sq_entries = (unsigned int)n;
	u->max_rings = NVMET_URING_THREADS;
	if (nvmet_uring_env("RDMARW_NVMET_URING_RINGS", 0, NVMET_URING_THREADS,
			    &n))
		u->max_rings = (unsigned int)n;
	/* benchmarks: 0 leaves the eventfd on while submitters reap */
	u->quiet = !nvmet_uring_env("RDMARW_NVMET_URING_QUIET", 0, 1, &n) || n;
	u->dfd = nvmet_uring_open_direct(ns, o, u);
	if (u->dfd < 0)
		u->inl = nvmet_uring_probe_inline(ns->fd);
	/* tests, benchmarks: 0 reads a batch's cached Reads with preadv2() */
	u->read_ring =
		u->inl == NVMET_URING_INLINE_NOWAIT &&
		(!nvmet_uring_env("RDMARW_NVMET_URING_READ_RING", 0, 1, &n) ||
		 n);
	pthread_mutex_init(&u->lock, NULL);
	ns->uring = u;
	pthread_mutex_lock(&s->life);
	pthread_mutex_lock(&s->lock);
	ret = nvmet_uring_ring_make(ns, s, &r);
	n = !ret || !list_empty(&s->rings);
	pthread_mutex_unlock(&s->lock);
	if (!n) /* started for this ring */
		nvmet_uring_stop_reaper(s);
	pthread_mutex_unlock(&s->life);
	if (ret) {
		ns->uring = NULL;
		pthread_mutex_destroy(&u->lock);
		if (u->dfd >= 0)
			close(u->dfd);
		free(u);
		return ret;
	}
	u->rings[NVMET_URING_SHARED] = r;
	return 0;
}

/*
 * nvmet_uring_direct() - whether @ns's rings do O_DIRECT (all its Reads
 * and Writes then).
 */
bool nvmet_uring_direct(const struct nvmet_ns *ns)
{
	return ns->uring && ns->uring->dfd >= 0;
}

/*
 * Each ring of @ns once (@u->lock held): the shared one, then the
 * threads' (an entry that points to the shared ring is a fallback).
 */
#define nvmet_uring_for_each_ring(u, r, i)                       \
	for ((i) = NVMET_URING_SHARED + 1; (i)-- > 0;)           \
		if (((r) = __atomic_load_n(&(u)->rings[i],       \
					   __ATOMIC_ACQUIRE)) && \
		    ((i) == NVMET_URING_SHARED ||                \
		     (r) != (u)->rings[NVMET_URING_SHARED]))

/*
 * nvmet_uring_counts() - Reads and Writes submitted to @ns's rings so
 * far: O_DIRECT from the request's buffer (@out[0]), O_DIRECT through a
 * bounce slot (@out[1]), buffered (@out[2]); zeroes without a ring.
 */
void nvmet_uring_counts(struct nvmet_ns *ns, u64 out[3])
{
	struct nvmet_uring *u = ns->uring;
	struct nvmet_uring_ring *r;
	unsigned int i;

	out[0] = out[1] = out[2] = 0;
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	nvmet_uring_for_each_ring(u, r, i)
	{
		pthread_mutex_lock(&r->sq_lock);
		out[0] += r->direct_ios;
		out[1] += r->bounced_ios;
		out[2] += r->buffered_ios;
		pthread_mutex_unlock(&r->sq_lock);
	}
	pthread_mutex_unlock(&u->lock);
}

/*
 * nvmet_uring_stats() - @ns's rings' submission counters, summed, with how
 * many rings threads have of their own and how many threads share the
 * namespace's ring instead (zeroes without io_uring), for tests
 */
void nvmet_uring_stats(struct nvmet_ns *ns, struct nvmet_uring_stats *st)
{
	struct nvmet_uring *u = ns->uring;
	struct nvmet_uring_ring *r;
	unsigned int i;

	memset(st, 0, sizeof(*st));
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	nvmet_uring_for_each_ring(u, r, i)
	{
		pthread_mutex_lock(&r->sq_lock);
		st->sqes += r->st.sqes;
		st->submits += r->st.submits;
		st->batches += r->st.batches;
		st->unplugged += r->st.unplugged;
		st->full += r->st.full;
		pthread_mutex_unlock(&r->sq_lock);
		st->inline_ios +=
			__atomic_load_n(&r->st.inline_ios, __ATOMIC_RELAXED);
	}
	st->rings = u->nr_rings;
	st->fallbacks = u->fallbacks;
	pthread_mutex_unlock(&u->lock);
}

/*
 * nvmet_uring_close() - close every ring of @ns (the shared one and those
 * of the threads that submitted, running or gone), each unlisted from its
 * slot (whose reaper stops with its last ring), drained and freed; nothing
 * is in flight by then (each I/O holds a namespace reference).
 */
void nvmet_uring_close(struct nvmet_ns *ns)
{
	struct nvmet_uring *u = ns->uring;
	struct nvmet_uring_ring *r;
	unsigned int i;

	if (!u)
		return;
	nvmet_uring_for_each_ring(u, r, i)
	{
		nvmet_uring_ring_unlist(&nvmet_uring_slots[i], r);
		if (nvmet_uring_ring_drain(r))
			nvmet_uring_ring_free(r);
		else /* the kernel may still write there: leaked, said */
			nvmet_err("namespace %u: io_uring: I/O still in flight "
				  "at close; ring leaked",
				  ns->nsid);
	}
	pthread_mutex_destroy(&u->lock);
	if (u->dfd >= 0)
		close(u->dfd);
	free(u);
	ns->uring = NULL;
}

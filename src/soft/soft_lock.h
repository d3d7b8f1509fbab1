/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The software device's atomics and its one lock vocabulary: one spinlock
 * type (struct soft_spin) for every lock held only for a short section,
 * data path and control path alike, one reader/writer lock, the big-reader
 * lock (struct soft_brlock), for the memory state every I/O reads (MRs,
 * keys, IOMMU mappings), and one sleeping lock (struct soft_mutex) for the
 * locks a thread waits with.
 *
 * Lock order (outer first): fabric->lock (QP list, connections, kick
 * references) -> a QP's executor role (exec_busy: the one thread executing
 * its Send Queue, taken and dropped under sq_lock) -> fabric->mem_lock (MR
 * state and IOMMU mappings of every device, read for data movement, write
 * for MR creation and removal, REG_MR_INTEGRITY and IOVA link/unlink)
 * -> an MR's wlock (REG_MR, invalidation, retire: taken with a try inside
 * the caller's own read section, then held outside any; dereg takes it
 * inside the write side) -> a QP's rq_lock
 * -> a CQ's lock.  A QP's sq_lock (producers, and the executor role's flag) and a
 * device's task.lock are leaves: nothing else is taken while holding them.
 * Executors only ever try to take another QP's executor role, so nested
 * runs cannot deadlock; ib_modify_qp() to ERR waits for the role only in a
 * thread that holds none (soft_qp.c, qp_err_barrier()).
 */
#ifndef RDMARW_SOFT_LOCK_H
#define RDMARW_SOFT_LOCK_H

#include "core/provider.h"

#include <rdmarw/kernel.h> /* rdmarw_bug() */

#include <pthread.h>
#include <sched.h>
#include <time.h>

#define soft_load(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define soft_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define soft_xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define soft_add(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define soft_sub(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_RELAXED)

/*
 * Add to a counter that only one thread writes (the QP's executor): a load
 * and a store, no locked read-modify-write.  Readers load it atomically.
 */
static inline void soft_count(u64 *c, u64 n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/* ---- the spinning locks ---------------------------------------------- */

/*
 * An uncontended pthread mutex or rwlock costs two atomic instructions and
 * two calls per critical section, and the data path of one work request
 * takes several.  These locks cost one atomic instruction to take and a
 * release store to drop (the memory lock's reader side: one atomic each
 * way).  A waiter spins briefly, then yields.  Critical sections are short
 * (queue indexes, one ring entry, a flush of one queue, a list edit of
 * the control path), except the memory lock's read side,
 * held while bytes move: its writers (registration, invalidation, MR
 * creation and removal) yield meanwhile.
 */
static inline void soft_relax(unsigned int *spins)
{
	if (++*spins < 128) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#elif defined(__aarch64__)
		__asm__ volatile("yield" ::: "memory");
#endif
		return;
	}
	sched_yield();
}

/* A spinlock: @v is 1 while held. */
struct soft_spin {
	int v;
};

/* The contended halves, out of line (soft_lock.c): wait, then take. */
void rdmarw__soft_spin_wait(struct soft_spin *l);

static inline void soft_spin_lock(struct soft_spin *l)
{
	if (__builtin_expect(__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE),
			     0))
		rdmarw__soft_spin_wait(l);
}

/* Take @l if it is free: true when taken (never waits). */
static inline bool soft_spin_trylock(struct soft_spin *l)
{
	return !__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE);
}

static inline void soft_spin_unlock(struct soft_spin *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

/* ---- the sleeping lock ------------------------------------------------ */

/*
 * A "big reader" lock for state that every QP reads on every I/O and that
 * changes only on the control path (the MR key tables and MR state: see
 * docs/soft-device.md, "MR state without shared atomics").  Each reader
 * (a QP) has its own indicator on its own cache line; a reader enters by
 * storing to that line and reading the lock's writer word, which only a
 * writer ever stores to, so readers of different QPs share no written
 * line and no atomic read-modify-write.  A writer announces itself in the
 * writer word and then waits until every registered reader is outside.
 *
 * Memory ordering.  Enter is "store my indicator, then load the writer
 * word"; the writer's is "store the writer word, then load every
 * indicator": a store-load pattern (Dekker), which needs a full barrier on
 * both sides, else both could miss the other.  The writer always has one
 * (a sequentially consistent fence).  The reader's is either
 * - asymmetric: the writer calls membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
 *   after its store, which runs a full barrier on every CPU running a
 *   thread of this process; a reader whose indicator store the writer's
 *   loads miss is then ordered after that barrier, so its load of the
 *   writer word sees the writer.  The reader needs only a compiler
 *   barrier: no fence, no atomic RMW;
 * - or, by default and wherever membarrier cannot be registered, an
 *   atomic exchange on its own indicator (a locked instruction, a full
 *   barrier on x86 and with seq_cst everywhere, on the reader's own line:
 *   still nothing shared), inline, so the fast path makes no call.
 * The reader's loads of the protected state are after its acquire load of
 * the writer word; a writer's stores are after it saw each indicator 0
 * with acquire, which reads from the reader's release on leaving: the
 * reader's section happens before the writer's, or the writer's release
 * of the writer word happens before the reader's entry.
 *
 * An indicator is written only by one thread at a time (a QP's mem_rd by
 * the thread holding its executor role, its resp_rd by the one holding its
 * sender's), so it needs no RMW.  Sections do not nest (a transfer runs in
 * the section of the end whose memory is its source), and no writer runs
 * inside a read section.  Readers are added and removed under the write
 * side.
 */
struct soft_br_reader {
	/* odd inside a read section; +1 at each entry and each exit */
	unsigned int active;
	/* released by soft_br_del(), reused by the next soft_br_add() */
	bool idle;
	/* 1 << (creation number % 64): what soft_mr_check() records */
	u64 bit;
	struct soft_br_reader *next;
	/* the next older indicator with the same bit (soft_brlock.by_bit) */
	struct soft_br_reader *bnext;
} __attribute__((aligned(64)));

/*
 * The bit of the indicator whose read section this thread is in (set at
 * each entry: sections do not nest), which soft_mr_check() records in the
 * MR it checks so that the MR's grace period waits for this indicator
 * (soft_br_grace_mask()).
 */
extern __thread u64 rdmarw__soft_br_bit
	__attribute__((tls_model("initial-exec")));

/*
 * The rule that bit relies on, checked where NDEBUG is unset (Debug and
 * sanitizer builds; a release build compiles none of it): sections do not
 * nest.  A thread enters a read section only outside any, leaves only the
 * one it is in, and takes the writers' side (soft_br_write_lock(),
 * soft_br_publish_lock(), soft_br_exclude()) or waits for a grace period
 * only outside any.  A breach is a BUG: the message names the call, then
 * abort().
 */
#ifdef NDEBUG
static inline void soft_br_debug_enter(const struct soft_br_reader *r)
{
}

static inline void soft_br_debug_leave(const struct soft_br_reader *r)
{
}

static inline void soft_br_debug_outside(const char *call)
{
}
#else
/* The indicator whose read section this thread is in, NULL outside. */
extern __thread const struct soft_br_reader *rdmarw__soft_br_in
	__attribute__((tls_model("initial-exec")));

static inline void soft_br_debug_outside(const char *call)
{
	if (rdmarw__soft_br_in)
		rdmarw_bug(__FILE__, __LINE__, call);
}

static inline void soft_br_debug_enter(const struct soft_br_reader *r)
{
	soft_br_debug_outside(
		"soft_br_read_lock() inside a read section: they do not nest");
	rdmarw__soft_br_in = r;
}

static inline void soft_br_debug_leave(const struct soft_br_reader *r)
{
	if (rdmarw__soft_br_in != r)
		rdmarw_bug(__FILE__, __LINE__,
			   "soft_br_read_unlock() of a section this thread "
			   "is not in");
	rdmarw__soft_br_in = NULL;
}
#endif

/*
 * The lock's word, what a reader tests: SOFT_BR_WRITER while a writer
 * excludes readers or waits to.  @fence, fixed at init, says which barrier
 * a reader's entry uses (above); it shares the word's line, which only
 * writers store to, and only those that exclude readers.
 *
 * Writers are serialized by @wr, a spinlock on a line of its own.  Most
 * take it and then exclude the readers (soft_br_write_lock()).  A writer
 * that only publishes takes @wr alone (soft_br_publish_lock()) and waits
 * for no reader: what it writes is state no reader may use yet, made
 * usable by one release store that readers load with acquire before they
 * read the rest.  Taking something away from readers (deregistration, an
 * IOMMU unmap) excludes them.  One MR's state (REG_MR, invalidation) no
 * longer goes through @wr at all: it changes under the MR's own lock, and
 * an invalidation waits for a grace period of the indicators that used
 * the MR (soft_br_grace_mask(); docs/soft-device.md), so a reader that
 * found an MR VALID still keeps it so until its section ends.
 */
#define SOFT_BR_WRITER 1u

struct soft_brlock {
	unsigned int word;
	unsigned int fence; /* 1: readers exchange; 0: membarrier() */
	/* every indicator ever added, newest first: the head is stored with
	 * release under @wr, an indicator is never unlinked before
	 * soft_br_destroy(), so a grace period walks the list unlocked */
	struct soft_br_reader *readers;
	unsigned int nreaders; /* indicators made (their bits), under @wr */
	unsigned char pad[64 - 3 * sizeof(unsigned int) -
			  sizeof(struct soft_br_reader *)];
	struct soft_spin wr; /* the writers' mutex, 64 bytes from @word */
	/* the indicators of each bit, newest first (as @readers): a grace
	 * period of a mask walks only its bits' */
	struct soft_br_reader *by_bit[64];
};

/* A reader's entry: mark the indicator, then the store-load barrier. */
static inline void soft_br_enter(const struct soft_brlock *l,
				 struct soft_br_reader *r)
{
	/* only this thread writes it: the next value is its own + 1 */
	unsigned int in = __atomic_load_n(&r->active, __ATOMIC_RELAXED) + 1;

	if (__builtin_expect(l->fence, 1)) {
		__atomic_exchange_n(&r->active, in, __ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(&r->active, in, __ATOMIC_RELAXED);
		/* The compiler keeps the store before the load; the CPU
		 * does, by the writer's membarrier() (see above). */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
}

void rdmarw__soft_br_read_wait(struct soft_brlock *l, struct soft_br_reader *r);

static inline void soft_br_read_lock(struct soft_brlock *l,
				     struct soft_br_reader *r)
{
	soft_br_debug_enter(r);
	rdmarw__soft_br_bit = r->bit;
	soft_br_enter(l, r);
	/* seq_cst: with the exchange, a store-load pair in the single total
	 * order (C11 does not order an acquire load after a seq_cst RMW);
	 * on x86 and arm64 it costs what an acquire load does. */
	if (__builtin_expect(__atomic_load_n(&l->word, __ATOMIC_SEQ_CST), 0))
		rdmarw__soft_br_read_wait(l, r);
}

/* A reader's exit: the indicator even again (release: the section's end). */
static inline void soft_br_leave(struct soft_br_reader *r)
{
	__atomic_store_n(&r->active,
			 __atomic_load_n(&r->active, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELEASE);
}

static inline void soft_br_read_unlock(struct soft_br_reader *r)
{
	soft_br_debug_leave(r);
	soft_br_leave(r);
}

/**
 * soft_br_init() - make a big-reader lock with no reader
 * @l: the lock
 *
 * Also registers the process for membarrier() once when
 * RDMARW_SOFT_MEMBARRIER asks for it; without it, every reader's entry
 * is an exchange on its own indicator.
 */
void soft_br_init(struct soft_brlock *l);

/**
 * soft_br_write_lock() - exclude every reader and every other writer
 * @l: the lock
 *
 * Returns when no registered reader is inside a read section; new readers
 * wait until soft_br_write_unlock().  Not from inside a read section.
 */
void soft_br_write_lock(struct soft_brlock *l);

/**
 * soft_br_publish_lock() - exclude every other writer, but no reader
 * @l: the lock
 *
 * For a change readers cannot see half of: fields no reader reads until
 * one release store makes them valid (above).  Readers keep entering and
 * leaving; soft_br_exclude() upgrades to soft_br_write_lock()'s hold.  End
 * with soft_br_write_unlock().  Not from inside a read section.
 */
void soft_br_publish_lock(struct soft_brlock *l);

/**
 * soft_br_exclude() - with soft_br_publish_lock() held, exclude the readers
 * @l: the lock
 *
 * Returns as soft_br_write_lock() does: no reader inside, new ones wait.
 */
void soft_br_exclude(struct soft_brlock *l);

/**
 * soft_br_grace() - with soft_br_publish_lock() held, wait for the read
 * sections in progress
 * @l: the lock
 *
 * For a change that takes something away with one sequentially consistent
 * store that readers load, sequentially consistent, inside their section
 * before they use what it guards (an MR's state made FREE: invalidation):
 * returns once every section that was in progress at the call has ended,
 * so none that may have seen the old value is left; sections that begin
 * meanwhile see the new one, and no reader waits (the word is not set).
 */
void soft_br_grace(struct soft_brlock *l);

/**
 * soft_br_grace_mask() - wait for the read sections in progress of the
 * indicators in a mask
 * @mask: a mask of indicator bits (struct soft_br_reader.bit) that only
 *        grows, loaded after the barrier: an MR's readers
 *
 * soft_br_grace() for the indicators whose bit is in *@mask only, with no
 * lock of @l held or needed: for a change made under a lock of its own to
 * state that only those indicators' sections can have seen (one MR's
 * state: its readers set their bit in the mask, seq_cst, before they load
 * the state; soft_mr_check()).  Not from inside a read section.
 */
void soft_br_grace_mask(struct soft_brlock *l, const u64 *mask);

/**
 * soft_br_write_unlock() - let readers and the next writer in
 * @l: the lock, held by soft_br_write_lock() or soft_br_publish_lock()
 */
void soft_br_write_unlock(struct soft_brlock *l);

/**
 * soft_br_add() - a new reader's indicator (taking the write side)
 * @l: the lock
 *
 * The indicator belongs to @l: one released by soft_br_del() is reused,
 * else one is made, and it stays in @l's list (a grace period walks it
 * unlocked) until soft_br_destroy().
 * Return: the indicator, outside any section, or NULL (no memory).
 */
struct soft_br_reader *soft_br_add(struct soft_brlock *l);

/**
 * soft_br_del() - release a reader's indicator (taking the write side)
 * @l: the lock
 * @r: an indicator soft_br_add() gave, outside any section; NULL is a
 *     no-op
 */
void soft_br_del(struct soft_brlock *l, struct soft_br_reader *r);

/**
 * soft_br_destroy() - free every indicator of a lock nobody uses any more
 * @l: the lock, with no reader left in use and no writer
 */
void soft_br_destroy(struct soft_brlock *l);

/*
 * A mutex with its one wake-up condition.  Only the locks a thread holds
 * while it waits for another thread are sleeping ones, since a spinning
 * waiter would burn a core for as long as the wait lasts:
 * - fabric->lock: destroying a QP waits, with it held, until the kicks in
 *   flight drop their references (soft_qp.c);
 * - a device's task.lock: the progress thread waits for work, and
 *   rdmarw__soft_task_forget() for the QP being run (soft_task.c).
 * Everything else (sq_lock, rq_lock, an SRQ's and a CQ's lock, a signature
 * MR's status, the fault state) is a soft_spin; mem_lock is the
 * big-reader lock.
 */
struct soft_mutex {
	pthread_mutex_t m;
	pthread_cond_t wake;
};

static inline void soft_mutex_init(struct soft_mutex *l)
{
	pthread_mutex_init(&l->m, NULL);
	pthread_cond_init(&l->wake, NULL);
}

static inline void soft_mutex_destroy(struct soft_mutex *l)
{
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->m);
}

static inline void soft_mutex_lock(struct soft_mutex *l)
{
	pthread_mutex_lock(&l->m);
}

static inline void soft_mutex_unlock(struct soft_mutex *l)
{
	pthread_mutex_unlock(&l->m);
}

/* Wait (held) until soft_mutex_wake(); the caller tests its condition
 * again, as with any condition variable. */
static inline void soft_mutex_wait(struct soft_mutex *l)
{
	pthread_cond_wait(&l->wake, &l->m);
}

/* Take @l if it is free: true when taken. */
static inline bool soft_mutex_trylock(struct soft_mutex *l)
{
	return pthread_mutex_trylock(&l->m) == 0;
}

/* As soft_mutex_wait(), but for at most @ns nanoseconds. */
static inline void soft_mutex_nap(struct soft_mutex *l, long ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ns;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
	}
	pthread_cond_timedwait(&l->wake, &l->m, &ts);
}

/* Wake every waiter of @l (held or not). */
static inline void soft_mutex_wake(struct soft_mutex *l)
{
	pthread_cond_broadcast(&l->wake);
}

#endif /* RDMARW_SOFT_LOCK_H */

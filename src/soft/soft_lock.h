/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The software device's atomics and its one lock vocabulary: one spinlock
 * type (struct soft_spin) and one reader/writer lock (struct soft_rwlock)
 * for every lock held only for a short section, data path and control
 * path alike, and one sleeping lock (struct soft_mutex) for the locks a
 * thread waits with.
 *
 * Lock order (outer first): fabric->lock (QP list, connections, kick
 * references) -> a QP's executor role (exec_busy: the one thread executing
 * its Send Queue, taken and dropped under sq_lock) -> fabric->mem_lock (MR
 * state of every device, read for data movement, write for registration
 * and invalidation) -> a device's iommu.lock -> a QP's rq_lock -> a CQ's
 * lock.  A QP's sq_lock (producers, and the executor role's flag) and a
 * device's task.lock are leaves: nothing else is taken while holding them.
 * Executors only ever try to take another QP's executor role, so nested
 * runs cannot deadlock; ib_modify_qp() to ERR waits for the role only in a
 * thread that holds none (soft_qp.c, qp_err_barrier()).
 */
#ifndef RDMARW_SOFT_LOCK_H
#define RDMARW_SOFT_LOCK_H

#include "core/provider.h"

#include <pthread.h>
#include <sched.h>

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

static inline void soft_spin_unlock(struct soft_spin *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

/*
 * A reader-writer lock in one word: readers are counted in the low bits,
 * a writer holds SOFT_RW_WRITER.  A reader that finds the writer bit backs
 * out and waits, so writers are never starved by a stream of readers.
 */
#define SOFT_RW_WRITER 0x80000000u

struct soft_rwlock {
	unsigned int v;
};

void rdmarw__soft_read_wait(struct soft_rwlock *l);

static inline void soft_read_lock(struct soft_rwlock *l)
{
	if (__builtin_expect(__atomic_fetch_add(&l->v, 1, __ATOMIC_ACQUIRE) &
				     SOFT_RW_WRITER,
			     0))
		rdmarw__soft_read_wait(l);
}

static inline void soft_read_unlock(struct soft_rwlock *l)
{
	__atomic_fetch_sub(&l->v, 1, __ATOMIC_RELEASE);
}

static inline void soft_write_lock(struct soft_rwlock *l)
{
	unsigned int spins = 0, v;

	for (;;) {
		v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if (!(v & SOFT_RW_WRITER) &&
		    __atomic_compare_exchange_n(&l->v, &v, v | SOFT_RW_WRITER,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		soft_relax(&spins);
	}
	/* Readers already inside finish; new ones wait for us. */
	while (__atomic_load_n(&l->v, __ATOMIC_ACQUIRE) & ~SOFT_RW_WRITER)
		soft_relax(&spins);
}

static inline void soft_write_unlock(struct soft_rwlock *l)
{
	__atomic_fetch_sub(&l->v, SOFT_RW_WRITER, __ATOMIC_RELEASE);
}

/* ---- the sleeping lock ------------------------------------------------ */

/*
 * A mutex with its one wake-up condition.  Only the locks a thread holds
 * while it waits for another thread are sleeping ones, since a spinning
 * waiter would burn a core for as long as the wait lasts:
 * - fabric->lock: destroying a QP waits, with it held, until the kicks in
 *   flight drop their references (soft_qp.c);
 * - a device's task.lock: the progress thread waits for work, and
 *   rdmarw__soft_task_forget() for the QP being run (soft_task.c).
 * Everything else (sq_lock, rq_lock, an SRQ's and a CQ's lock, a signature
 * MR's status, the fault state, mem_lock, the IOMMU's lock) is a
 * soft_spin or a soft_rwlock.
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

/* Wake every waiter of @l (held or not). */
static inline void soft_mutex_wake(struct soft_mutex *l)
{
	pthread_cond_broadcast(&l->wake);
}

#endif /* RDMARW_SOFT_LOCK_H */

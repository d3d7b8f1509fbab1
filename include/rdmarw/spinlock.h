/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's spinlock_t calls.  User space has no interrupts and no
 * bottom halves: the _irq, _irqsave and _bh forms are the plain lock, and
 * the flags word is set to 0.  The lock is a pthread mutex underneath (a
 * preempted holder must not make the other threads spin); as in the kernel,
 * it is not recursive and must be released by the thread that took it.
 */
#ifndef RDMARW_SPINLOCK_H
#define RDMARW_SPINLOCK_H

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/* spinlock_t: a short-held lock (kernel shape). */
typedef struct {
	pthread_mutex_t m;
} spinlock_t;

/**
 * DEFINE_SPINLOCK() - define an unlocked spinlock
 * @x: name of the variable
 */
#define DEFINE_SPINLOCK(x) spinlock_t x = { PTHREAD_MUTEX_INITIALIZER }

/**
 * spin_lock_init() - initialize a spinlock, unlocked
 * @lock: the lock
 *
 * No destruction is needed (none in the kernel either).
 */
static inline void spin_lock_init(spinlock_t *lock)
{
	pthread_mutex_init(&lock->m, NULL);
}

/**
 * spin_lock() - take a spinlock
 * @lock: the lock
 */
static inline void spin_lock(spinlock_t *lock)
{
	pthread_mutex_lock(&lock->m);
}

/**
 * spin_unlock() - release a spinlock
 * @lock: the lock, held by this thread
 */
static inline void spin_unlock(spinlock_t *lock)
{
	pthread_mutex_unlock(&lock->m);
}

/**
 * spin_trylock() - take a spinlock if it is free
 * @lock: the lock
 *
 * Return: 1 when taken, 0 when it is held.
 */
static inline int spin_trylock(spinlock_t *lock)
{
	return pthread_mutex_trylock(&lock->m) == 0;
}

/**
 * spin_lock_irqsave() - take a spinlock, saving the interrupt state
 * @lock: the lock
 * @flags: unsigned long lvalue; set to 0 (there are no interrupts)
 */
#define spin_lock_irqsave(lock, flags) \
	do {                           \
		(flags) = 0;           \
		spin_lock(lock);       \
	} while (0)

/**
 * spin_unlock_irqrestore() - release a spinlock, restoring the interrupt
 *	state
 * @lock: the lock
 * @flags: the value spin_lock_irqsave() stored (unused)
 */
#define spin_unlock_irqrestore(lock, flags) \
	do {                                \
		(void)(flags);              \
		spin_unlock(lock);          \
	} while (0)

/**
 * spin_lock_irq() - take a spinlock (there are no interrupts to disable)
 * @lock: the lock
 */
static inline void spin_lock_irq(spinlock_t *lock)
{
	spin_lock(lock);
}

/**
 * spin_unlock_irq() - release a spinlock taken with spin_lock_irq()
 * @lock: the lock
 */
static inline void spin_unlock_irq(spinlock_t *lock)
{
	spin_unlock(lock);
}

/**
 * spin_lock_bh() - take a spinlock (there are no bottom halves)
 * @lock: the lock
 */
static inline void spin_lock_bh(spinlock_t *lock)
{
	spin_lock(lock);
}

/**
 * spin_unlock_bh() - release a spinlock taken with spin_lock_bh()
 * @lock: the lock
 */
static inline void spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock(lock);
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_SPINLOCK_H */

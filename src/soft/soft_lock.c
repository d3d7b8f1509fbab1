// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The contended halves of the data path's locks (soft_lock.h): a waiter
 * spins briefly, then yields.
 */
#include "soft/soft_access.h"

/* soft_spin_lock() found the lock held: spin, then yield, until it is ours. */
void rdmarw__soft_spin_wait(struct soft_spin *l)
{
	unsigned int spins = 0;

	do {
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
			soft_relax(&spins);
	} while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE));
}

/* soft_read_lock() met a writer: back out, wait for it, count in again. */
void rdmarw__soft_read_wait(struct soft_rwlock *l)
{
	unsigned int spins = 0;

	do {
		__atomic_fetch_sub(&l->v, 1, __ATOMIC_RELAXED);
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED) &
		       SOFT_RW_WRITER)
			soft_relax(&spins);
	} while (__atomic_fetch_add(&l->v, 1, __ATOMIC_ACQUIRE) &
		 SOFT_RW_WRITER);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The contended halves of the data path's locks (soft_lock.h): a waiter
 * spins briefly, then yields.
 */
#include "soft/soft_access.h"

#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* soft_spin_lock() found the lock held: spin, then yield, until it is ours. */
void rdmarw__soft_spin_wait(struct soft_spin *l)
{
	unsigned int spins = 0;

	do {
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
			soft_relax(&spins);
	} while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE));
}

/* ---- the big-reader lock (soft_lock.h) ---------------------------------- */

__thread u64 rdmarw__soft_br_bit __attribute__((tls_model("initial-exec")));

#ifndef NDEBUG
__thread const struct soft_br_reader *rdmarw__soft_br_in
	__attribute__((tls_model("initial-exec")));
#endif

/* True when membarrier() gives the readers their barrier. */
static bool br_asym;

static pthread_once_t br_once = PTHREAD_ONCE_INIT;

/* membarrier(2) for this process, if the kernel and the sandbox allow it. */
static void br_register(void)
{
	long cmds;

	/*
	 * membarrier() only on request: it makes every writer a system call
	 * that interrupts each CPU running the process, and REG_MR and
	 * LOCAL_INV are writers on the I/O path of every MR-based transfer
	 * (siw READs 4 KiB: 3x slower).  The default is the reader's fence
	 * on its own line.
	 */
	if (!secure_getenv("RDMARW_SOFT_MEMBARRIER"))
		return;
	cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0))
		return;
	/* One call now: a registration that does not work is found here. */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return;
	br_asym = true;
}

void soft_br_init(struct soft_brlock *l)
{
	pthread_once(&br_once, br_register);
	l->fence = !br_asym;
	l->word = 0;
	l->readers = NULL;
	l->nreaders = 0;
	l->wr.v = 0;
	memset(l->by_bit, 0, sizeof(l->by_bit));
}

/* The writer's side of the store-load barrier. */
static void br_writer_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (br_asym &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		abort(); /* registered and checked: cannot fail */
}

/* soft_br_read_lock() met a writer: leave, wait for it, enter again. */
void rdmarw__soft_br_read_wait(struct soft_brlock *l, struct soft_br_reader *r)
{
	unsigned int spins = 0;

	/* still this thread's one section (soft_br_debug_enter()) */
	do {
		soft_br_leave(r);
		while (__atomic_load_n(&l->word, __ATOMIC_RELAXED) &
		       SOFT_BR_WRITER)
			soft_relax(&spins);
		soft_br_enter(l, r);
	} while (__atomic_load_n(&l->word, __ATOMIC_SEQ_CST) & SOFT_BR_WRITER);
}

void soft_br_publish_lock(struct soft_brlock *l)
{
	/* a writer holding @wr may be waiting for its section */
	soft_br_debug_outside("soft_br_publish_lock() inside a read section");
	soft_spin_lock(&l->wr);
}

void soft_br_exclude(struct soft_brlock *l)
{
	unsigned int spins = 0;
	struct soft_br_reader *r;

	/* its own section would be waited for, for ever */
	soft_br_debug_outside("soft_br_exclude() inside a read section");
	/* Only @wr's holder stores the word: no compare-and-swap. */
	__atomic_store_n(&l->word, SOFT_BR_WRITER, __ATOMIC_SEQ_CST);
	br_writer_fence();
	for (r = l->readers; r; r = r->next)
		while (__atomic_load_n(&r->active, __ATOMIC_ACQUIRE) & 1)
			soft_relax(&spins);
}

/* Wait until @r, if inside a section now, has left it. */
static void br_wait_out(struct soft_br_reader *r, unsigned int *spins)
{
	unsigned int v = __atomic_load_n(&r->active, __ATOMIC_SEQ_CST);

	if (!(v & 1))
		return;
	/* any change is that section's end (acquire: its release) */
	while (__atomic_load_n(&r->active, __ATOMIC_ACQUIRE) == v)
		soft_relax(spins);
}

/* Wait for the sections in progress of the indicators in @mask: the
 * chains of its bits only. */
static void br_grace(struct soft_brlock *l, u64 mask)
{
	unsigned int spins = 0;
	struct soft_br_reader *r;
	int b;

	while (mask) {
		b = __builtin_ctzll(mask);
		mask &= mask - 1;
		for (r = __atomic_load_n(&l->by_bit[b], __ATOMIC_ACQUIRE); r;
		     r = r->bnext)
			br_wait_out(r, &spins);
	}
}

void soft_br_grace(struct soft_brlock *l)
{
	soft_br_debug_outside("soft_br_grace() inside a read section");
	/* the caller's store before the looks (store-load, as exclude) */
	br_writer_fence();
	br_grace(l, ~0ull);
}

void soft_br_grace_mask(struct soft_brlock *l, const u64 *mask)
{
	/* its own section, if the MR's, would be waited for, for ever; if
	 * not, its bit was left behind for an outer one */
	soft_br_debug_outside("soft_br_grace_mask() inside a read section");
	br_writer_fence();
	/* seq_cst: after the caller's store in the single total order, so a
	 * reader that loaded the old state set its bit before this load */
	br_grace(l, __atomic_load_n(mask, __ATOMIC_SEQ_CST));
}

void soft_br_write_lock(struct soft_brlock *l)
{
	soft_spin_lock(&l->wr);
	soft_br_exclude(l);
}

void soft_br_write_unlock(struct soft_brlock *l)
{
	if (__atomic_load_n(&l->word, __ATOMIC_RELAXED))
		__atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
	soft_spin_unlock(&l->wr);
}

struct soft_br_reader *soft_br_add(struct soft_brlock *l)
{
	struct soft_br_reader *r;

	soft_br_write_lock(l);
	for (r = l->readers; r; r = r->next)
		if (r->idle)
			break;
	if (r) {
		/* even: it left its last section before soft_br_del() */
		r->idle = false;
	} else {
		r = aligned_alloc(sizeof(*r), sizeof(*r));
		if (r) {
			r->active = 0;
			r->idle = false;
			r->bit = 1ull << (l->nreaders % 64);
			r->bnext = l->by_bit[l->nreaders % 64];
			r->next = l->readers;
			/* a grace period walks the lists unlocked */
			__atomic_store_n(&l->by_bit[l->nreaders % 64], r,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&l->readers, r, __ATOMIC_RELEASE);
			l->nreaders++;
		}
	}
	soft_br_write_unlock(l);
	return r;
}

void soft_br_del(struct soft_brlock *l, struct soft_br_reader *r)
{
	if (!r)
		return;
	soft_br_write_lock(l);
	r->idle = true;
	soft_br_write_unlock(l);
}

void soft_br_destroy(struct soft_brlock *l)
{
	struct soft_br_reader *r, *next;

	for (r = l->readers; r; r = next) {
		next = r->next;
		free(r);
	}
	l->readers = NULL;
	l->nreaders = 0;
	memset(l->by_bit, 0, sizeof(l->by_bit));
}

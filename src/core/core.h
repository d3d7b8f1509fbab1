/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Private helpers shared by the verbs core's files. */
#ifndef RDMARW_CORE_H
#define RDMARW_CORE_H

#include "core/provider.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Lifetime counts (a device's references, PD/CQ use counts): a holder's
 * accesses happen before its release decrement, and the destroyer's acquire
 * read that sees the count drop orders its free after them.  Taking a
 * reference needs no order: the taker already holds a live pointer.
 */
#define rdmarw__inc(p) __atomic_add_fetch((p), 1, __ATOMIC_RELAXED)
#define rdmarw__dec(p) __atomic_sub_fetch((p), 1, __ATOMIC_RELEASE)
#define rdmarw__read(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

/* Is this thread delivering @cq's completions from its CQ thread (a done()
 * of @cq is running)?  It must then not free @cq nor wait for it. */
bool rdmarw__cq_self(const struct ib_cq *cq);

/* Calls around each CQ thread's poll pass, for the NVMe target's plug. */
void rdmarw__cq_set_batch_hooks(void (*begin)(void), void (*end)(void));

#include <rdmarw/rw.h> /* ib_create_qp() calls the R/W sizing, as the kernel does */

#endif /* RDMARW_CORE_H */

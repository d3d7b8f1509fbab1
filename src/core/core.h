/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Private helpers shared by the verbs core's files. */
#ifndef RDMARW_CORE_H
#define RDMARW_CORE_H

#include "core/provider.h"

#include <errno.h>
#include <stdlib.h>

#define rdmarw__inc(p) __atomic_add_fetch((p), 1, __ATOMIC_RELAXED)
#define rdmarw__dec(p) __atomic_sub_fetch((p), 1, __ATOMIC_RELAXED)
#define rdmarw__read(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* struct ib_qp's mr_lock is opaque storage for a pthread_spinlock_t. */
_Static_assert(sizeof(struct rdmarw_spinlock) == sizeof(pthread_spinlock_t) &&
		       _Alignof(struct rdmarw_spinlock) >=
			       _Alignof(pthread_spinlock_t),
	       "struct rdmarw_spinlock does not hold a pthread_spinlock_t");
#define rdmarw__qp_mr_lock(qp) ((pthread_spinlock_t *)&(qp)->mr_lock.opaque)

void rdmarw__device_get(struct ib_device *dev);
void rdmarw__device_put(struct ib_device *dev);

#include <rdmarw/rw.h> /* ib_create_qp() calls the R/W sizing, as the kernel does */

#endif /* RDMARW_CORE_H */

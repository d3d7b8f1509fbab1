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

void rdmarw__device_get(struct ib_device *dev);
void rdmarw__device_put(struct ib_device *dev);

#include <rdmarw/rw.h> /* ib_create_qp() calls the R/W sizing, as the kernel does */

#endif /* RDMARW_CORE_H */

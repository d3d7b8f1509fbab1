/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Private declarations of the R/W API (src/rw). */
#ifndef RDMARW_RW_INTERNAL_H
#define RDMARW_RW_INTERNAL_H

#include <rdmarw/rw.h>

/* The kernel caps pages per MR for R/W contexts at 256. */
#define RDMARW_RW_MAX_PAGES 256U

u32 rdmarw__fr_page_list_len(struct ib_device *dev, bool pi_support);
bool rdmarw__can_use_mr(struct ib_device *dev, u32 port_num);

#endif /* RDMARW_RW_INTERNAL_H */

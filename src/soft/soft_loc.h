/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Everything private to the software device in one include, for the few
 * files outside src/soft that reach into it (the CM's loopback glue, white
 * box tests).  Files of src/soft include the headers they need:
 *
 *   soft_lock.h    atomics, the lock types, the lock order
 *   soft_types.h   structs, enums, constants, to_*() accessors
 *   soft_proto.h   rdmarw__soft_* functions, by defining file
 *   soft_access.h  every access check, once
 *   soft_cq.h      CQ fast paths (claim, commit, SQ release)
 *   soft_req.h     requester fast paths
 *   soft_resp.h    responder fast paths (the data path's copy)
 *   soft_sig.h, soft_srq.h   signature MRs, shared receive queues
 */
#ifndef RDMARW_SOFT_LOC_H
#define RDMARW_SOFT_LOC_H

#include "soft/soft_types.h"
#include "soft/soft_proto.h"
#include "soft/soft_access.h"
#include "soft/soft_cq.h"
#include "soft/soft_req.h"
#include "soft/soft_resp.h"

#endif /* RDMARW_SOFT_LOC_H */

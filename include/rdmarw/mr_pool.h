/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-QP pools of MRs (the kernel's mr_pool.c).  All calls on one QP are
 * serialised by the QP's mr_lock: safe from several threads.
 */
#ifndef RDMARW_MR_POOL_H
#define RDMARW_MR_POOL_H

#include <rdmarw/ib_verbs.h>

/**
 * ib_mr_pool_get() - take an MR from a pool
 * @qp: the QP that owns the pool
 * @list: the pool (&qp->rdma_mrs or &qp->sig_mrs)
 *
 * Takes the MR at the head of the list and counts it in qp->mrs_used.
 *
 * Return: the MR, or NULL when the pool is empty or an argument is NULL.
 */
struct ib_mr *ib_mr_pool_get(struct ib_qp *qp, struct list_head *list);

/**
 * ib_mr_pool_put() - return an MR to its pool
 * @qp: the QP that owns the pool
 * @list: the pool it came from
 * @mr: the MR; it goes back to the head of the list (LIFO)
 *
 * Before the MR is listed again the device retires it (rdmarw extension):
 * none of its keys grants local or remote access any more, no access
 * through it is still running, and a REG_MR of it that is still queued
 * fails instead of registering.  A LOCAL_INV of its current key stays
 * valid, so the next chain may carry one as the kernel's does.  An MR that
 * is not taken from a pool of @qp (put twice, or never taken) is refused
 * with a warning, printed once, and nothing changes.
 */
void ib_mr_pool_put(struct ib_qp *qp, struct list_head *list, struct ib_mr *mr);

/**
 * ib_mr_pool_init() - fill a pool
 * @qp: the QP that owns the pool
 * @list: the pool
 * @nr: MRs to allocate
 * @type: IB_MR_TYPE_MEM_REG or IB_MR_TYPE_INTEGRITY
 * @max_num_sg: page-list capacity of each MR
 * @max_num_meta_sg: protection page-list capacity (integrity MRs)
 *
 * Return: 0; on error every MR allocated so far is freed and the error of
 * ib_alloc_mr()/ib_alloc_mr_integrity() is returned; -EINVAL for NULL.
 */
int ib_mr_pool_init(struct ib_qp *qp, struct list_head *list, int nr,
		    enum ib_mr_type type, u32 max_num_sg, u32 max_num_meta_sg);

/**
 * ib_mr_pool_destroy() - free every MR in a pool
 * @qp: the QP that owns the pool
 * @list: the pool; MRs taken and not returned are not on it and stay
 *        allocated (callers check qp->mrs_used first)
 */
void ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list);

/**
 * ib_mr_pool_count() - MRs currently in a pool (rdmarw extension)
 * @qp: the QP that owns the pool
 * @list: the pool
 *
 * Return: MRs on the list, or -EINVAL for NULL arguments.
 */
int ib_mr_pool_count(struct ib_qp *qp, struct list_head *list);

#endif /* RDMARW_MR_POOL_H */

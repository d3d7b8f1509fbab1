// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-QP MR pools (the kernel's mr_pool.c), under the QP's mr_lock. */
#include "core/core.h"

#include <rdmarw/mr_pool.h>

struct ib_mr *ib_mr_pool_get(struct ib_qp *qp, struct list_head *list)
{
	struct ib_mr *mr;

	if (!qp || !list)
		return NULL;
	pthread_spin_lock(&qp->mr_lock);
	mr = list_first_entry_or_null(list, struct ib_mr, qp_entry);
	if (mr) {
		list_del_init(&mr->qp_entry);
		qp->mrs_used++;
	}
	pthread_spin_unlock(&qp->mr_lock);
	return mr;
}

/*
 * An MR on a pool's list is linked; one taken out is not (list_del_init()):
 * a second put of the same MR would link it twice and make the list loop.
 */
static bool mr_taken(const struct ib_mr *mr)
{
	return list_empty(&mr->qp_entry);
}

void ib_mr_pool_put(struct ib_qp *qp, struct list_head *list, struct ib_mr *mr)
{
	static bool warned;
	bool taken;

	if (!qp || !list || !mr)
		return;
	pthread_spin_lock(&qp->mr_lock);
	taken = mr->pd == qp->pd && mr_taken(mr) && qp->mrs_used > 0;
	pthread_spin_unlock(&qp->mr_lock);
	if (!taken) {
		rdmarw__warn_once(
			&warned,
			"ib_mr_pool_put: MR is not taken from a pool of this QP (put twice?)");
		return;
	}
	/* Nothing the last user registered stays reachable (provider.h). */
	if (mr->device->ops->retire_mr)
		mr->device->ops->retire_mr(mr);
	pthread_spin_lock(&qp->mr_lock);
	list_add(&mr->qp_entry, list);
	qp->mrs_used--;
	pthread_spin_unlock(&qp->mr_lock);
}

bool rdmarw__qp_has_mr_pool(struct ib_qp *qp)
{
	bool has;

	pthread_spin_lock(&qp->mr_lock);
	has = qp->mrs_used > 0 || !list_empty(&qp->rdma_mrs);
	pthread_spin_unlock(&qp->mr_lock);
	return has;
}

static struct ib_mr *pool_alloc_one(struct ib_qp *qp, enum ib_mr_type type,
				    u32 max_num_sg, u32 max_num_meta_sg)
{
	if (type == IB_MR_TYPE_INTEGRITY)
		return ib_alloc_mr_integrity(qp->pd, max_num_sg,
					     max_num_meta_sg);
	return ib_alloc_mr(qp->pd, type, max_num_sg);
}

int ib_mr_pool_init(struct ib_qp *qp, struct list_head *list, int nr,
		    enum ib_mr_type type, u32 max_num_sg, u32 max_num_meta_sg)
{
	struct ib_mr *mr;
	int i;

	if (!qp || !list || nr < 0)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		mr = pool_alloc_one(qp, type, max_num_sg, max_num_meta_sg);
		if (IS_ERR(mr)) {
			ib_mr_pool_destroy(qp, list);
			return (int)PTR_ERR(mr);
		}
		__atomic_store_n(&mr->in_pool, true, __ATOMIC_RELEASE);
		pthread_spin_lock(&qp->mr_lock);
		list_add_tail(&mr->qp_entry, list);
		pthread_spin_unlock(&qp->mr_lock);
	}
	return 0;
}

void ib_mr_pool_destroy(struct ib_qp *qp, struct list_head *list)
{
	struct ib_mr *mr;

	if (!qp || !list)
		return;
	for (;;) {
		pthread_spin_lock(&qp->mr_lock);
		mr = list_first_entry_or_null(list, struct ib_mr, qp_entry);
		if (mr)
			list_del_init(&mr->qp_entry);
		pthread_spin_unlock(&qp->mr_lock);
		if (!mr)
			break;
		__atomic_store_n(&mr->in_pool, false, __ATOMIC_RELEASE);
		ib_dereg_mr(mr);
	}
}

int ib_mr_pool_count(struct ib_qp *qp, struct list_head *list)
{
	struct list_head *pos;
	int n = 0;

	if (!qp || !list)
		return -EINVAL;
	pthread_spin_lock(&qp->mr_lock);
	for (pos = list->next; pos != list; pos = pos->next)
		n++;
	pthread_spin_unlock(&qp->mr_lock);
	return n;
}

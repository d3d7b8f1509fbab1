// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared CQ pools (the kernel's ib_cq_pool_get()/ib_cq_pool_put() in
 * drivers/infiniband/core/cq.c).  A device has one list of shared CQs per
 * thread poll context; users reserve entries (cqe_used) on the least used
 * CQ of their completion vector with room, and the pool grows by one CQ
 * per vector when none has.  The lists are created on first use and freed
 * by rdmarw__cq_pool_cleanup() when the device is removed.
 *
 * Locking: dev->lock protects dev->cq_pools, the lists, and each pool CQ's
 * cqe_used and pool_entry.  CQs are allocated and freed outside it.
 */
#include "core/core.h"
#include "core/cq_pool.h"

#include <unistd.h>

struct rdmarw_cq_pools {
	struct list_head lists[IB_POLL_LAST_POOL_TYPE + 1];
};

/* The vectors CQs are spread over: the device's, at most the online CPUs
 * (as the kernel's min(num_comp_vectors, num_online_cpus())). */
static unsigned int pool_vectors(const struct ib_device *dev)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int n = dev->num_comp_vectors > 0 ?
				 (unsigned int)dev->num_comp_vectors :
				 1;

	if (cpus > 0 && (unsigned long)cpus < n)
		n = (unsigned int)cpus;
	return n;
}

/* Called with dev->lock held. */
static struct list_head *pool_list(struct ib_device *dev,
				   enum ib_poll_context ctx)
{
	unsigned int i;

	if (!dev->cq_pools) {
		dev->cq_pools = calloc(1, sizeof(*dev->cq_pools));
		if (!dev->cq_pools)
			return NULL;
		for (i = 0; i <= IB_POLL_LAST_POOL_TYPE; i++)
			INIT_LIST_HEAD(&dev->cq_pools->lists[i]);
	}
	return &dev->cq_pools->lists[ctx];
}

/* Called with dev->lock held: the least used CQ of @vector with room for
 * @nr_cqe entries, its reservation taken; NULL when none has room. */
static struct ib_cq *reserve_locked(struct list_head *list, u32 vector,
				    unsigned int nr_cqe)
{
	struct ib_cq *cq, *best = NULL;

	list_for_each_entry(cq, list, pool_entry)
	{
		if (cq->comp_vector != vector ||
		    (unsigned int)cq->cqe - cq->cqe_used < nr_cqe)
			continue;
		if (!best || cq->cqe_used < best->cqe_used)
			best = cq;
	}
	if (best)
		best->cqe_used += nr_cqe;
	return best;
}

static void free_pool_cqs(struct list_head *list)
{
	struct ib_cq *cq, *tmp;

	list_for_each_entry_safe(cq, tmp, list, pool_entry) {
		list_del_init(&cq->pool_entry);
		cq->shared = false;
		ib_free_cq(cq);
	}
}

/* One new CQ per vector, on @batch; 0 or the first allocation error (the
 * CQs allocated before it are freed). */
static int alloc_batch(struct ib_device *dev, unsigned int nr_cqe,
		       enum ib_poll_context ctx, unsigned int vectors,
		       struct list_head *batch)
{
	unsigned int size =
		nr_cqe > IB_MAX_SHARED_CQ_SZ ? nr_cqe : IB_MAX_SHARED_CQ_SZ;
	unsigned int i;

	if (size > (unsigned int)dev->attrs.max_cqe)
		size = (unsigned int)dev->attrs.max_cqe;
	for (i = 0; i < vectors; i++) {
		struct ib_cq *cq =
			ib_alloc_cq(dev, NULL, (int)size, (int)i, ctx);

		if (IS_ERR(cq)) {
			free_pool_cqs(batch);
			return PTR_ERR(cq);
		}
		cq->comp_vector = i;
		cq->shared = true;
		list_add_tail(&cq->pool_entry, batch);
	}
	return 0;
}

struct ib_cq *ib_cq_pool_get(struct ib_device *dev, unsigned int nr_cqe,
			     int comp_vector_hint,
			     enum ib_poll_context poll_ctx)
{
	static unsigned int next_vector;
	struct list_head *list;
	unsigned int vectors;
	struct ib_cq *cq;
	LIST_HEAD(batch);
	u32 vector;
	int ret;

	if (!dev || !nr_cqe || nr_cqe > (unsigned int)dev->attrs.max_cqe ||
	    (int)poll_ctx < 0 || poll_ctx > IB_POLL_LAST_POOL_TYPE)
		return ERR_PTR(-EINVAL);
	vectors = pool_vectors(dev);
	if (comp_vector_hint < 0)
		vector = __atomic_fetch_add(&next_vector, 1, __ATOMIC_RELAXED) %
			 vectors;
	else
		vector = (u32)comp_vector_hint % vectors;

	pthread_mutex_lock(&dev->lock);
	list = pool_list(dev, poll_ctx);
	cq = list ? reserve_locked(list, vector, nr_cqe) : NULL;
	pthread_mutex_unlock(&dev->lock);
	if (!list)
		return ERR_PTR(-ENOMEM);
	if (cq)
		return cq;

	ret = alloc_batch(dev, nr_cqe, poll_ctx, vectors, &batch);
	if (ret)
		return ERR_PTR(ret);
	/* The new CQ of @vector has room and is still unused while the lock
	 * is held: this pick cannot fail. */
	pthread_mutex_lock(&dev->lock);
	list = pool_list(dev, poll_ctx);
	if (list) {
		list_splice_tail(&batch, list);
		cq = reserve_locked(list, vector, nr_cqe);
	}
	pthread_mutex_unlock(&dev->lock);
	if (!list) {
		free_pool_cqs(&batch);
		return ERR_PTR(-ENOMEM);
	}
	return cq;
}

int ib_cq_pool_put(struct ib_cq *cq, unsigned int nr_cqe)
{
	struct ib_device *dev;
	int ret = 0;

	if (IS_ERR_OR_NULL(cq))
		return -EINVAL;
	dev = cq->device;
	pthread_mutex_lock(&dev->lock);
	if (!cq->shared || nr_cqe > cq->cqe_used)
		ret = -EINVAL;
	else
		cq->cqe_used -= nr_cqe;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

int rdmarw__cq_pool_cleanup(struct ib_device *dev)
{
	struct rdmarw_cq_pools *pools;
	struct ib_cq *cq;
	unsigned int i;

	pthread_mutex_lock(&dev->lock);
	pools = dev->cq_pools;
	for (i = 0; pools && i <= IB_POLL_LAST_POOL_TYPE; i++)
		list_for_each_entry(cq, &pools->lists[i],
				    pool_entry) if (cq->cqe_used ||
						    rdmarw__read(&cq->usecnt))
		{
			pthread_mutex_unlock(&dev->lock);
			return -EBUSY;
		}
	dev->cq_pools = NULL;
	pthread_mutex_unlock(&dev->lock);
	if (!pools)
		return 0;
	for (i = 0; i <= IB_POLL_LAST_POOL_TYPE; i++)
		free_pool_cqs(&pools->lists[i]);
	free(pools);
	return 0;
}

void rdmarw__cq_pool_count(struct ib_device *dev, enum ib_poll_context ctx,
			   unsigned int *cqs, unsigned long *cqe_used)
{
	struct ib_cq *cq;

	*cqs = 0;
	*cqe_used = 0;
	if ((int)ctx < 0 || ctx > IB_POLL_LAST_POOL_TYPE)
		return;
	pthread_mutex_lock(&dev->lock);
	if (dev->cq_pools)
		list_for_each_entry(cq, &dev->cq_pools->lists[ctx], pool_entry)
		{
			(*cqs)++;
			*cqe_used += cq->cqe_used;
		}
	pthread_mutex_unlock(&dev->lock);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues and the ib_cqe model (the kernel's cq.c): completions
 * are taken in batches and each one's wr_cqe->done is called, either by the
 * caller (IB_POLL_DIRECT) or by a thread of the CQ's that the device wakes.
 */
#include "core/core.h"

/* Inline in each caller: ib_process_cq_direct() is on the fast path of
 * every IB_POLL_DIRECT poller (out of line, GCC's choice once it had three
 * callers, it cost rdmarw-perf 0.5 instructions per 64 B WRITE). */
static inline __attribute__((always_inline)) int
process_batch(struct ib_cq *cq, struct ib_wc *wcs, int batch, int budget)
{
	int i, n, completed = 0;

	while (budget < 0 || completed < budget) {
		int want = batch;

		if (budget >= 0 && budget - completed < want)
			want = budget - completed;
		n = cq->device->ops->poll_cq(cq, want, wcs);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			struct ib_wc *wc = &wcs[i];

			if (wc->wr_cqe)
				wc->wr_cqe->done(cq, wc);
		}
		completed += n;
		if (n < want)
			break;
	}
	return completed;
}

static void cq_thread_wake(struct ib_cq *cq, void *ctx)
{
	pthread_mutex_lock(&cq->wait_lock);
	cq->pending = true;
	pthread_cond_signal(&cq->wait);
	pthread_mutex_unlock(&cq->wait_lock);
}

/* The CQ whose completions this thread is delivering from its CQ thread
 * (NULL elsewhere): what it must not wait for or free (rdmarw__cq_self()). */
static __thread const struct ib_cq *cq_serving;

bool rdmarw__cq_self(const struct ib_cq *cq)
{
	return cq && cq_serving == cq;
}

/* A ULP's calls around each poll pass of a CQ thread (NULL: none); set
 * once by the NVMe target to plug its backend's submissions per pass
 * (docs/deviations.md: the kernel has no such hook). */
static void (*cq_batch_begin)(void);
static void (*cq_batch_end)(void);

void rdmarw__cq_set_batch_hooks(void (*begin)(void), void (*end)(void))
{
	__atomic_store_n(&cq_batch_end, end, __ATOMIC_RELEASE);
	__atomic_store_n(&cq_batch_begin, begin, __ATOMIC_RELEASE);
}

/* The kernel's ib_cq_poll_work(): process, re-arm, and go again on a miss. */
static void cq_poll_work(struct ib_cq *cq)
{
	void (*begin)(void) =
		__atomic_load_n(&cq_batch_begin, __ATOMIC_ACQUIRE);
	void (*end)(void) = __atomic_load_n(&cq_batch_end, __ATOMIC_ACQUIRE);
	const struct ib_cq *outer = cq_serving;

	cq_serving = cq;
	if (begin)
		begin();
	do {
		process_batch(cq, cq->wc, IB_POLL_BATCH, -1);
	} while (cq->device->ops->req_notify_cq(
			 cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS) > 0);
	if (begin && end)
		end();
	cq_serving = outer;
}

/* The comp_handler of a CQ whose provider has a thread for it. */
static void cq_handler_work(struct ib_cq *cq, void *ctx)
{
	cq_poll_work(cq);
}

static void *cq_thread(void *arg)
{
	struct ib_cq *cq = arg;

	for (;;) {
		pthread_mutex_lock(&cq->wait_lock);
		while (!cq->pending && !cq->stopping)
			pthread_cond_wait(&cq->wait, &cq->wait_lock);
		cq->pending = false;
		if (cq->stopping) {
			pthread_mutex_unlock(&cq->wait_lock);
			break;
		}
		pthread_mutex_unlock(&cq->wait_lock);
		cq_poll_work(cq);
	}
	process_batch(cq, cq->wc, IB_POLL_BATCH, -1);
	return NULL;
}

static int start_thread(struct ib_cq *cq)
{
	int ret;

	pthread_mutex_init(&cq->wait_lock, NULL);
	pthread_cond_init(&cq->wait, NULL);
	cq->comp_handler = cq_thread_wake;
	ret = pthread_create(&cq->thread, NULL, cq_thread, cq);
	if (ret)
		return -ret;
	cq->device->ops->req_notify_cq(cq, IB_CQ_NEXT_COMP);
	return 0;
}

static void stop_thread(struct ib_cq *cq)
{
	pthread_mutex_lock(&cq->wait_lock);
	cq->stopping = true;
	pthread_cond_signal(&cq->wait);
	pthread_mutex_unlock(&cq->wait_lock);
	pthread_join(cq->thread, NULL);
	pthread_cond_destroy(&cq->wait);
	pthread_mutex_destroy(&cq->wait_lock);
}

static bool poll_ctx_ok(enum ib_poll_context ctx)
{
	return ctx == IB_POLL_DIRECT || ctx == IB_POLL_SOFTIRQ ||
	       ctx == IB_POLL_WORKQUEUE || ctx == IB_POLL_UNBOUND_WORKQUEUE;
}

struct ib_cq *ib_alloc_cq(struct ib_device *dev, void *private, int nr_cqe,
			  int comp_vector, enum ib_poll_context poll_ctx)
{
	struct ib_cq_init_attr attr = { .comp_vector = (u32)comp_vector };
	struct ib_cq *cq;
	int ret;

	if (!dev || nr_cqe <= 0 || nr_cqe > dev->attrs.max_cqe ||
	    !poll_ctx_ok(poll_ctx))
		return ERR_PTR(-EINVAL);
	if (!dev->ops->create_cq || !dev->ops->poll_cq ||
	    !dev->ops->req_notify_cq)
		return ERR_PTR(-EOPNOTSUPP);
	cq = calloc(1, dev->ops->size_ib_cq);
	if (!cq)
		return ERR_PTR(-ENOMEM);
	cq->wc = calloc(IB_POLL_BATCH, sizeof(*cq->wc));
	if (!cq->wc) {
		free(cq);
		return ERR_PTR(-ENOMEM);
	}
	cq->device = dev;
	cq->cq_context = private;
	cq->cqe = nr_cqe;
	cq->poll_ctx = poll_ctx;
	attr.cqe = (unsigned int)nr_cqe;
	/* Set before the provider's thread starts (in create_cq). */
	if (poll_ctx != IB_POLL_DIRECT && dev->ops->cq_handler_thread)
		cq->comp_handler = cq_handler_work;
	ret = dev->ops->create_cq(cq, &attr);
	if (ret)
		goto err_free;
	if (cq->comp_handler == cq_handler_work) {
		dev->ops->req_notify_cq(cq, IB_CQ_NEXT_COMP);
	} else if (poll_ctx != IB_POLL_DIRECT) {
		ret = start_thread(cq);
		if (ret) {
			dev->ops->destroy_cq(cq);
			goto err_free;
		}
	}
	rdmarw__device_get(dev);
	return cq;

err_free:
	free(cq->wc);
	free(cq);
	return ERR_PTR(ret);
}

int ib_free_cq(struct ib_cq *cq)
{
	struct ib_device *dev;

	/* An ERR_PTR (a failed ib_alloc_cq() passed on) is refused too; that
	 * also tells the compiler that no CQ lives at such an address. */
	if (IS_ERR_OR_NULL(cq))
		return -EINVAL;
	if (cq->shared) /* a pool's: ib_cq_pool_put() */
		return -EINVAL;
	if (rdmarw__read(&cq->usecnt))
		return -EBUSY;
	if (rdmarw__cq_self(cq)) {
		static bool warned;

		/* its thread would join itself, then run on freed memory */
		rdmarw__warn_once(
			&warned,
			"ib_free_cq() from a done() of the same CQ: refused");
		return -EDEADLK;
	}
	dev = cq->device;
	if (cq->poll_ctx != IB_POLL_DIRECT &&
	    cq->comp_handler != cq_handler_work)
		stop_thread(cq);
	if (dev->ops->destroy_cq)
		dev->ops->destroy_cq(cq);
	free(cq->wc);
	free(cq);
	rdmarw__device_put(dev);
	return 0;
}

int ib_poll_cq(struct ib_cq *cq, int num_entries, struct ib_wc *wc)
{
	if (!cq || !wc || num_entries < 0)
		return -EINVAL;
	if (!num_entries)
		return 0;
	return cq->device->ops->poll_cq(cq, num_entries, wc);
}

int ib_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags)
{
	if (!cq)
		return -EINVAL;
	return cq->device->ops->req_notify_cq(cq, flags);
}

int ib_process_cq_direct(struct ib_cq *cq, int budget)
{
	struct ib_wc wcs[IB_POLL_BATCH_DIRECT];

	if (!cq || cq->poll_ctx != IB_POLL_DIRECT)
		return -EINVAL;
	if (!budget)
		return 0;
	/* A batch on the stack: callers on several threads never share one,
	 * and a done() callback may poll the same CQ again. */
	return process_batch(cq, wcs, IB_POLL_BATCH_DIRECT, budget);
}

int rdmarw_cq_events_take(struct ib_cq *cq, struct rdmarw_cq_events *ev)
{
	if (IS_ERR_OR_NULL(cq) || !ev || cq->poll_ctx != IB_POLL_DIRECT)
		return -EINVAL;
	if (!cq->device->ops->cq_events_take)
		return -EOPNOTSUPP;
	return cq->device->ops->cq_events_take(cq, ev);
}

int rdmarw_cq_events_consume(struct ib_cq *cq)
{
	if (IS_ERR_OR_NULL(cq))
		return -EINVAL;
	if (!cq->device->ops->cq_events_consume)
		return -EOPNOTSUPP;
	return cq->device->ops->cq_events_consume(cq);
}

int rdmarw_cq_events_give(struct ib_cq *cq)
{
	if (IS_ERR_OR_NULL(cq))
		return -EINVAL;
	if (!cq->device->ops->cq_events_give)
		return -EOPNOTSUPP;
	return cq->device->ops->cq_events_give(cq);
}

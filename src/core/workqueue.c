// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queues: a list of items to run and a list of armed timers per queue,
 * both under the queue's lock, and max_active worker threads.  A worker
 * moves expired timers to the run list, takes the first item no other
 * worker is running (non-reentrance), runs it unlocked, and broadcasts
 * "idle" after each item so that flushes and cancels can re-check.
 *
 * A wait that only the waiting worker could end (destroying, flushing or
 * synchronously cancelling from inside one of the queue's own items, which
 * the kernel's lockdep reports and which then deadlocks) is refused with
 * one warning per kind, and the call returns without waiting or freeing.
 */
#include "core/core.h"

#include <rdmarw/kernel.h>
#include <rdmarw/workqueue.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WQ_DEFAULT_ACTIVE 4

struct workqueue_struct {
	char name[32];
	pthread_mutex_t lock;
	pthread_cond_t more; /* workers: an item or a timer was added */
	pthread_cond_t idle; /* waiters: an item finished */
	struct list_head works;
	struct list_head timers;
	int nthreads;
	pthread_t *threads;
	struct work_struct **running; /* per worker, under lock */
	bool stop;
};

/* The queue and the item this thread runs, when it is a worker. */
static __thread struct workqueue_struct *cur_wq;
static __thread const struct work_struct *cur_work;

static struct workqueue_struct *system_wq_ptr;

struct worker_arg {
	struct workqueue_struct *wq;
	int idx;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec ms_to_ts(long long ms)
{
	struct timespec ts = { (time_t)(ms / 1000),
			       (long)(ms % 1000) * 1000000 };

	return ts;
}

void rdmarw_init_work(struct work_struct *work, work_func_t func)
{
	INIT_LIST_HEAD(&work->entry);
	work->func = func;
	work->wq = NULL;
	work->pending = false;
}

void rdmarw_init_delayed_work(struct delayed_work *dwork, work_func_t func)
{
	rdmarw_init_work(&dwork->work, func);
	INIT_LIST_HEAD(&dwork->timer);
	dwork->due_ms = 0;
	dwork->timer_armed = false;
}

/* Under wq->lock. */
static bool work_running(struct workqueue_struct *wq,
			 const struct work_struct *work)
{
	for (int i = 0; i < wq->nthreads; i++)
		if (wq->running[i] == work)
			return true;
	return false;
}

/* Under wq->lock: expire timers; returns the earliest still armed, or -1. */
static long long expire_timers(struct workqueue_struct *wq)
{
	struct delayed_work *d, *n;
	long long now = now_ms(), next = -1;

	list_for_each_entry_safe(d, n, &wq->timers, timer) {
		if (d->due_ms <= now) {
			list_del_init(&d->timer);
			d->timer_armed = false;
			d->work.pending = true;
			list_add_tail(&d->work.entry, &wq->works);
		} else if (next < 0 || d->due_ms < next) {
			next = d->due_ms;
		}
	}
	return next;
}

static void *worker(void *p)
{
	struct worker_arg *arg = p;
	struct workqueue_struct *wq = arg->wq;
	int me = arg->idx;

	free(arg);
	cur_wq = wq;
	pthread_mutex_lock(&wq->lock);
	for (;;) {
		struct work_struct *w, *found = NULL;
		long long next = expire_timers(wq);

		list_for_each_entry(w, &wq->works,
				    entry) if (!work_running(wq, w))
		{
			found = w;
			break;
		}
		if (found) {
			list_del_init(&found->entry);
			found->pending = false;
			wq->running[me] = found;
			pthread_mutex_unlock(&wq->lock);
			cur_work = found;
			found->func(found); /* may free or requeue it */
			cur_work = NULL;
			pthread_mutex_lock(&wq->lock);
			wq->running[me] = NULL;
			pthread_cond_broadcast(&wq->idle);
			/* an item skipped for non-reentrance may run now */
			pthread_cond_broadcast(&wq->more);
			continue;
		}
		if (wq->stop && list_empty(&wq->works))
			break;
		if (next >= 0) {
			struct timespec ts = ms_to_ts(next);

			pthread_cond_timedwait(&wq->more, &wq->lock, &ts);
		} else {
			pthread_cond_wait(&wq->more, &wq->lock);
		}
	}
	pthread_mutex_unlock(&wq->lock);
	return NULL;
}

struct workqueue_struct *alloc_workqueue(const char *fmt, unsigned int flags,
					 int max_active, ...)
{
	struct workqueue_struct *wq = calloc(1, sizeof(*wq));
	pthread_condattr_t attr;
	va_list ap;
	int i;

	if (!wq)
		return NULL;
	va_start(ap, max_active);
	vsnprintf(wq->name, sizeof(wq->name), fmt, ap);
	va_end(ap);
	if (flags & __WQ_ORDERED)
		max_active = 1;
	else if (max_active <= 0)
		max_active = WQ_DEFAULT_ACTIVE;
	pthread_mutex_init(&wq->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&wq->more, &attr);
	pthread_cond_init(&wq->idle, NULL);
	pthread_condattr_destroy(&attr);
	INIT_LIST_HEAD(&wq->works);
	INIT_LIST_HEAD(&wq->timers);
	wq->threads = calloc((size_t)max_active, sizeof(*wq->threads));
	wq->running = calloc((size_t)max_active, sizeof(*wq->running));
	if (!wq->threads || !wq->running)
		goto fail;
	for (i = 0; i < max_active; i++) {
		struct worker_arg *arg = malloc(sizeof(*arg));

		if (!arg)
			goto fail;
		arg->wq = wq;
		arg->idx = i;
		if (pthread_create(&wq->threads[i], NULL, worker, arg)) {
			free(arg);
			goto fail;
		}
		wq->nthreads = i + 1;
	}
	return wq;
fail:
	destroy_workqueue(wq);
	return NULL;
}

void destroy_workqueue(struct workqueue_struct *wq)
{
	static bool own_warned, system_warned;
	struct delayed_work *d, *n;
	int i;

	if (!wq)
		return;
	/* a worker would join itself, then run on in the freed queue */
	if (wq == cur_wq) {
		rdmarw__warn_once(&own_warned,
				  "destroy_workqueue(%s) from one of its own "
				  "work items: refused, the queue is left as "
				  "it is",
				  wq->name);
		return;
	}
	if (wq == __atomic_load_n(&system_wq_ptr, __ATOMIC_ACQUIRE)) {
		rdmarw__warn_once(&system_warned,
				  "destroy_workqueue(system_wq): refused, the "
				  "shared queue lives as long as the process");
		return;
	}
	pthread_mutex_lock(&wq->lock);
	list_for_each_entry_safe(d, n, &wq->timers, timer) {
		WARN_ON_ONCE("destroy_workqueue() with a delayed work armed");
		list_del_init(&d->timer);
		d->timer_armed = false;
	}
	wq->stop = true;
	pthread_cond_broadcast(&wq->more);
	pthread_mutex_unlock(&wq->lock);
	for (i = 0; i < wq->nthreads; i++)
		pthread_join(wq->threads[i], NULL);
	pthread_cond_destroy(&wq->more);
	pthread_cond_destroy(&wq->idle);
	pthread_mutex_destroy(&wq->lock);
	free(wq->threads);
	free(wq->running);
	free(wq);
}

/*
 * Under wq->lock: whether queueing on @wq must be refused because
 * destroy_workqueue() is emptying it.  Its own items may still queue
 * items to run at once (the kernel's chained work); anything else would
 * be left on the list of a freed queue, or on an armed timer.
 */
static bool queue_refused(struct workqueue_struct *wq, bool timer,
			  const char *what)
{
	static bool warned;

	if (!wq->stop || (wq == cur_wq && !timer))
		return false;
	rdmarw__warn_once(&warned,
			  "%s() on %s while destroy_workqueue() empties it: "
			  "refused",
			  what, wq->name);
	return true;
}

bool queue_work(struct workqueue_struct *wq, struct work_struct *work)
{
	bool ret = false;

	pthread_mutex_lock(&wq->lock);
	if (!work->pending && !queue_refused(wq, false, "queue_work")) {
		work->pending = true;
		__atomic_store_n(&work->wq, wq, __ATOMIC_RELEASE);
		list_add_tail(&work->entry, &wq->works);
		pthread_cond_signal(&wq->more);
		ret = true;
	}
	pthread_mutex_unlock(&wq->lock);
	return ret;
}

/* Under wq->lock: take @dwork off both lists; whether it was pending. */
static bool dwork_unqueue(struct delayed_work *dwork)
{
	bool was = dwork->timer_armed || dwork->work.pending;

	if (dwork->timer_armed) {
		list_del_init(&dwork->timer);
		dwork->timer_armed = false;
	}
	if (dwork->work.pending) {
		list_del_init(&dwork->work.entry);
		dwork->work.pending = false;
	}
	return was;
}

/* Under wq->lock: queue at once or arm the timer. */
static void dwork_queue(struct workqueue_struct *wq, struct delayed_work *dwork,
			unsigned long delay)
{
	__atomic_store_n(&dwork->work.wq, wq, __ATOMIC_RELEASE);
	if (!delay) {
		dwork->work.pending = true;
		list_add_tail(&dwork->work.entry, &wq->works);
	} else {
		dwork->due_ms = now_ms() + (long long)delay;
		dwork->timer_armed = true;
		list_add_tail(&dwork->timer, &wq->timers);
	}
	/* every worker recomputes its timeout */
	pthread_cond_broadcast(&wq->more);
}

bool queue_delayed_work(struct workqueue_struct *wq, struct delayed_work *dwork,
			unsigned long delay)
{
	bool ret = false;

	pthread_mutex_lock(&wq->lock);
	if (!dwork->timer_armed && !dwork->work.pending &&
	    !queue_refused(wq, delay, "queue_delayed_work")) {
		dwork_queue(wq, dwork, delay);
		ret = true;
	}
	pthread_mutex_unlock(&wq->lock);
	return ret;
}

bool mod_delayed_work(struct workqueue_struct *wq, struct delayed_work *dwork,
		      unsigned long delay)
{
	bool was = false;

	pthread_mutex_lock(&wq->lock);
	if (!queue_refused(wq, delay, "mod_delayed_work")) {
		was = dwork_unqueue(dwork);
		dwork_queue(wq, dwork, delay);
	}
	pthread_mutex_unlock(&wq->lock);
	return was;
}

/* Why waiting for an item would wait for the calling worker itself. */
enum self_wait {
	SELF_WAIT_NONE,
	SELF_WAIT_ITSELF, /* the item is the one this worker runs */
	SELF_WAIT_BEHIND, /* pending on this worker's one-worker queue */
};

/* Under wq->lock. */
static enum self_wait self_wait(struct workqueue_struct *wq,
				const struct work_struct *work)
{
	if (wq != cur_wq)
		return SELF_WAIT_NONE;
	if (work == cur_work)
		return SELF_WAIT_ITSELF;
	if (work->pending && wq->nthreads == 1)
		return SELF_WAIT_BEHIND;
	return SELF_WAIT_NONE;
}

/* One warning per call site and kind: @warned has one flag per kind. */
static void warn_self_wait(bool warned[3], enum self_wait why, const char *what,
			   struct workqueue_struct *wq)
{
	rdmarw__warn_once(&warned[why],
			  "%s() from a work item of %s would wait for "
			  "itself%s: refused, not waited for",
			  what, wq->name,
			  why == SELF_WAIT_BEHIND ?
				  " (the item is queued behind it on the "
				  "queue's one worker)" :
				  "");
}

bool flush_work(struct work_struct *work)
{
	static bool warned[3];
	struct workqueue_struct *wq =
		__atomic_load_n(&work->wq, __ATOMIC_ACQUIRE);
	enum self_wait why;
	bool waited = false;

	if (!wq)
		return false;
	pthread_mutex_lock(&wq->lock);
	why = self_wait(wq, work);
	if (why) {
		pthread_mutex_unlock(&wq->lock);
		warn_self_wait(warned, why, "flush_work", wq);
		return false;
	}
	while (work->pending || work_running(wq, work)) {
		waited = true;
		pthread_cond_wait(&wq->idle, &wq->lock);
	}
	pthread_mutex_unlock(&wq->lock);
	return waited;
}

bool flush_delayed_work(struct delayed_work *dwork)
{
	static bool warned[3];
	struct workqueue_struct *wq =
		__atomic_load_n(&dwork->work.wq, __ATOMIC_ACQUIRE);
	enum self_wait why;
	bool armed;

	if (!wq)
		return false;
	pthread_mutex_lock(&wq->lock);
	why = self_wait(wq, &dwork->work);
	/* an armed timer would become pending on this one-worker queue */
	if (!why && dwork->timer_armed && wq == cur_wq && wq->nthreads == 1)
		why = SELF_WAIT_BEHIND;
	if (why) {
		pthread_mutex_unlock(&wq->lock);
		warn_self_wait(warned, why, "flush_delayed_work", wq);
		return false;
	}
	armed = dwork->timer_armed;
	if (armed) {
		list_del_init(&dwork->timer);
		dwork->timer_armed = false;
		dwork->work.pending = true;
		list_add_tail(&dwork->work.entry, &wq->works);
		pthread_cond_signal(&wq->more);
	}
	pthread_mutex_unlock(&wq->lock);
	/* a worker may finish it before flush_work() looks: that counts */
	return flush_work(&dwork->work) || armed;
}

/*
 * Cancel under the lock; with @sync, then wait until it is not running
 * (unless the caller is the item: what is pending is cancelled, and the
 * caller's own run is not waited for).
 */
static bool cancel_common(struct work_struct *work, struct delayed_work *dwork,
			  bool sync)
{
	static bool warned[2][3];
	struct workqueue_struct *wq =
		__atomic_load_n(&work->wq, __ATOMIC_ACQUIRE);
	enum self_wait why = SELF_WAIT_NONE;
	bool was;

	if (!wq)
		return false;
	pthread_mutex_lock(&wq->lock);
	if (dwork) {
		was = dwork_unqueue(dwork);
	} else {
		was = work->pending;
		if (was) {
			list_del_init(&work->entry);
			work->pending = false;
		}
	}
	/* what was pending is gone: only the caller's own run is left */
	if (sync)
		why = self_wait(wq, work);
	if (why) {
		pthread_mutex_unlock(&wq->lock);
		warn_self_wait(warned[!!dwork], why,
			       dwork ? "cancel_delayed_work_sync" :
				       "cancel_work_sync",
			       wq);
		return was;
	}
	while (sync && work_running(wq, work))
		pthread_cond_wait(&wq->idle, &wq->lock);
	pthread_mutex_unlock(&wq->lock);
	return was;
}

bool cancel_work_sync(struct work_struct *work)
{
	return cancel_common(work, NULL, true);
}

bool cancel_delayed_work(struct delayed_work *dwork)
{
	return cancel_common(&dwork->work, dwork, false);
}

bool cancel_delayed_work_sync(struct delayed_work *dwork)
{
	return cancel_common(&dwork->work, dwork, true);
}

void flush_workqueue(struct workqueue_struct *wq)
{
	static bool warned[3];

	if (wq == cur_wq) {
		warn_self_wait(warned, SELF_WAIT_ITSELF, "flush_workqueue", wq);
		return;
	}
	pthread_mutex_lock(&wq->lock);
	for (;;) {
		bool busy = !list_empty(&wq->works);

		for (int i = 0; !busy && i < wq->nthreads; i++)
			busy = wq->running[i] != NULL;
		if (!busy)
			break;
		pthread_cond_wait(&wq->idle, &wq->lock);
	}
	pthread_mutex_unlock(&wq->lock);
}

static pthread_once_t system_wq_once = PTHREAD_ONCE_INIT;

static void system_wq_create(void)
{
	__atomic_store_n(&system_wq_ptr, alloc_workqueue("events", 0, 0),
			 __ATOMIC_RELEASE);
}

struct workqueue_struct *rdmarw_system_wq(void)
{
	pthread_once(&system_wq_once, system_wq_create);
	if (!system_wq_ptr) {
		fputs("rdmarw: BUG: cannot create system_wq\n", stderr);
		abort();
	}
	return system_wq_ptr;
}

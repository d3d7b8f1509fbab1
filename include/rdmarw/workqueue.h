/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's work queues: work items run by the worker threads of a
 * workqueue_struct, and delayed work (timers such as a keep-alive) whose
 * delay is counted in jiffies (kernel.h: HZ is 1000) on CLOCK_MONOTONIC.
 * As in the kernel, a work item is queued at most once at a time, never
 * runs on two workers at once, and may requeue itself.  The waiting calls
 * (flush_work(), cancel_work_sync(), flush_workqueue(), destroy_workqueue())
 * wait for work functions to return: they are bounded by the work the
 * caller queued, and must not be called from a work item of the same
 * queue for itself (it would wait for itself, as in the kernel).
 */
#ifndef RDMARW_WORKQUEUE_H
#define RDMARW_WORKQUEUE_H

#include <stdbool.h>

#include <rdmarw/list.h>

#ifdef __cplusplus
extern "C" {
#endif

struct work_struct;
struct workqueue_struct;

/* work_func_t: the function a work item runs. */
typedef void (*work_func_t)(struct work_struct *work);

/**
 * struct work_struct - a work item (kernel shape)
 * @entry: on the queue's list of pending items
 * @func: run by a worker thread
 * @wq: queue it was last queued on (atomic: read by cancels unlocked)
 * @pending: on the queue's list of items to run, not yet started
 */
struct work_struct {
	struct list_head entry;
	work_func_t func;
	struct workqueue_struct *wq;
	bool pending;
};

/**
 * struct delayed_work - a work item queued when a timer expires
 * @work: the work item
 * @timer: on the queue's list of armed timers
 * @due_ms: CLOCK_MONOTONIC milliseconds at which it is queued
 * @timer_armed: on @timer's list
 */
struct delayed_work {
	struct work_struct work;
	struct list_head timer;
	long long due_ms;
	bool timer_armed;
};

/* alloc_workqueue() flags: accepted and ignored, except __WQ_ORDERED. */
#define WQ_UNBOUND (1U << 1)
#define WQ_FREEZABLE (1U << 2)
#define WQ_MEM_RECLAIM (1U << 3)
#define WQ_HIGHPRI (1U << 4)
#define WQ_CPU_INTENSIVE (1U << 5)
#define WQ_SYSFS (1U << 6)
#define __WQ_ORDERED (1U << 17)

/**
 * INIT_WORK() - initialize a work item
 * @w: the &struct work_struct
 * @f: its work_func_t
 */
#define INIT_WORK(w, f) rdmarw_init_work(w, f)

/**
 * INIT_DELAYED_WORK() - initialize a delayed work item
 * @w: the &struct delayed_work
 * @f: its work_func_t (called with &@w->work)
 */
#define INIT_DELAYED_WORK(w, f) rdmarw_init_delayed_work(w, f)

/**
 * rdmarw_init_work() - the function behind INIT_WORK()
 * @work: the work item
 * @func: what it runs
 */
void rdmarw_init_work(struct work_struct *work, work_func_t func);

/**
 * rdmarw_init_delayed_work() - the function behind INIT_DELAYED_WORK()
 * @dwork: the delayed work item
 * @func: what it runs
 */
void rdmarw_init_delayed_work(struct delayed_work *dwork, work_func_t func);

/**
 * to_delayed_work() - the delayed work that embeds a work item
 * @work: &struct delayed_work.work
 *
 * Return: the &struct delayed_work.
 */
static inline struct delayed_work *to_delayed_work(struct work_struct *work)
{
	return container_of(work, struct delayed_work, work);
}

/**
 * alloc_workqueue() - create a work queue with its worker threads
 * @fmt: name (printf format)
 * @flags: WQ_* flags; only __WQ_ORDERED changes anything
 * @max_active: worker threads (items run at once); 0 for the default (4)
 * @...: arguments of @fmt
 *
 * Return: the queue, or NULL when threads or memory are lacking.
 */
struct workqueue_struct *alloc_workqueue(const char *fmt, unsigned int flags,
					 int max_active, ...)
	__attribute__((format(printf, 1, 4)));

/**
 * alloc_ordered_workqueue() - create a queue that runs one item at a time,
 *	in queueing order
 * @fmt: name (printf format, without arguments here)
 * @flags: WQ_* flags (ignored)
 */
#define alloc_ordered_workqueue(fmt, flags) \
	alloc_workqueue(fmt, (flags) | __WQ_ORDERED, 1)

/**
 * destroy_workqueue() - run what is queued, stop the workers, free
 * @wq: the queue; no one may queue on it any more
 *
 * Items already queued run first.  Timers still armed are cancelled with
 * a warning (the kernel requires none).  Called from one of @wq's own work
 * items, or on system_wq, it is refused with a warning and does nothing
 * (the kernel deadlocks); queueing on @wq from outside while it runs is
 * refused too.
 */
void destroy_workqueue(struct workqueue_struct *wq);

/**
 * queue_work() - queue a work item
 * @wq: the queue
 * @work: the item
 *
 * Return: false when @work was already pending (nothing done), else true.
 */
bool queue_work(struct workqueue_struct *wq, struct work_struct *work);

/**
 * queue_delayed_work() - queue a work item after a delay
 * @wq: the queue
 * @dwork: the item
 * @delay: jiffies (milliseconds); 0 queues at once
 *
 * Return: false when @dwork was already pending (its delay unchanged).
 */
bool queue_delayed_work(struct workqueue_struct *wq, struct delayed_work *dwork,
			unsigned long delay);

/**
 * mod_delayed_work() - queue a work item after a delay, or change the delay
 *	of one pending
 * @wq: the queue
 * @dwork: the item
 * @delay: jiffies (milliseconds) from now
 *
 * Return: true when @dwork was pending before (its delay replaced).
 */
bool mod_delayed_work(struct workqueue_struct *wq, struct delayed_work *dwork,
		      unsigned long delay);

/**
 * flush_work() - wait until a work item is neither pending nor running
 * @work: the item
 *
 * A pending delayed item's timer is not waited for (see
 * flush_delayed_work()).  Called from @work itself, or from another item
 * of a one-worker queue on which @work is pending, it would wait for
 * itself: it warns and returns false without waiting.
 *
 * Return: true when it had to wait.
 */
bool flush_work(struct work_struct *work);

/**
 * flush_delayed_work() - queue a delayed item at once and wait for it
 * @dwork: the item
 *
 * Return: true when its timer was armed or it had to wait.
 */
bool flush_delayed_work(struct delayed_work *dwork);

/**
 * cancel_work_sync() - cancel a work item and wait for it to stop running
 * @work: the item
 *
 * Called from @work itself, it cancels what is pending, warns, and does
 * not wait for its caller.
 *
 * Return: true when it was pending (and will not run).
 */
bool cancel_work_sync(struct work_struct *work);

/**
 * cancel_delayed_work() - cancel a delayed item without waiting
 * @dwork: the item; it may still be running on return
 *
 * Return: true when it was pending (timer armed or queued).
 */
bool cancel_delayed_work(struct delayed_work *dwork);

/**
 * cancel_delayed_work_sync() - cancel a delayed item and wait for it
 * @dwork: the item
 *
 * Return: true when it was pending.
 */
bool cancel_delayed_work_sync(struct delayed_work *dwork);

/**
 * flush_workqueue() - wait until every item queued on a queue has run
 * @wq: the queue
 *
 * Items that requeue themselves keep it waiting; armed timers do not.
 * Called from one of @wq's own items, it warns and returns at once.
 */
void flush_workqueue(struct workqueue_struct *wq);

/**
 * rdmarw_system_wq() - the shared queue behind system_wq
 *
 * Created on first use; its workers live until the process exits.
 *
 * Return: the queue (the process aborts if it cannot be created).
 */
struct workqueue_struct *rdmarw_system_wq(void);

/* system_wq: the kernel's shared queue (a function call here). */
#define system_wq rdmarw_system_wq()

/**
 * schedule_work() - queue a work item on system_wq
 * @work: the item
 *
 * Return: as queue_work().
 */
static inline bool schedule_work(struct work_struct *work)
{
	return queue_work(system_wq, work);
}

/**
 * schedule_delayed_work() - queue a delayed item on system_wq
 * @dwork: the item
 * @delay: jiffies (milliseconds)
 *
 * Return: as queue_delayed_work().
 */
static inline bool schedule_delayed_work(struct delayed_work *dwork,
					 unsigned long delay)
{
	return queue_delayed_work(system_wq, dwork, delay);
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_WORKQUEUE_H */

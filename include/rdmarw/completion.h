/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's struct completion: a count of "done" events that threads
 * wait for.  Timeouts are in jiffies (kernel.h: HZ is 1000) measured on
 * CLOCK_MONOTONIC.  There is no DECLARE_COMPLETION(): init_completion()
 * sets the clock of the condition variable, which a static initializer
 * cannot do.
 */
#ifndef RDMARW_COMPLETION_H
#define RDMARW_COMPLETION_H

#include <stdbool.h>
#include <pthread.h>

#include <rdmarw/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct completion - a completion (kernel shape)
 * @done: events not yet consumed; UINT_MAX after complete_all()
 * @lock: protects @done
 * @wait: signalled by complete() and complete_all()
 */
struct completion {
	unsigned int done;
	pthread_mutex_t lock;
	pthread_cond_t wait;
};

/**
 * init_completion() - initialize a completion, not done
 * @x: the completion
 *
 * No destruction is needed: a completion nobody waits on may be freed.
 */
void init_completion(struct completion *x);

/**
 * reinit_completion() - make a completion not done again
 * @x: the completion; nobody may be waiting on it
 */
void reinit_completion(struct completion *x);

/**
 * complete() - signal one event: wakes one waiter
 * @x: the completion
 *
 * Context: any thread, also with locks held (it never sleeps for long).
 */
void complete(struct completion *x);

/**
 * complete_all() - signal every current and future waiter
 * @x: the completion; done until reinit_completion()
 */
void complete_all(struct completion *x);

/**
 * wait_for_completion() - wait until a completion is signalled
 * @x: the completion
 *
 * Waits without a bound: use wait_for_completion_timeout() when the event
 * may never come.  Consumes one complete() (none after complete_all()).
 */
void wait_for_completion(struct completion *x);

/**
 * wait_for_completion_timeout() - wait for a completion, with a bound
 * @x: the completion
 * @timeout: jiffies (milliseconds) to wait at most; MAX_SCHEDULE_TIMEOUT
 *	waits without a bound
 *
 * Return: 0 when @timeout passed first, otherwise the jiffies left
 * (at least 1).
 */
unsigned long wait_for_completion_timeout(struct completion *x,
					  unsigned long timeout);

/**
 * try_wait_for_completion() - consume a completion without waiting
 * @x: the completion
 *
 * Return: true when an event was consumed (or complete_all() was called).
 */
bool try_wait_for_completion(struct completion *x);

/**
 * completion_done() - whether a completion has events to consume
 * @x: the completion
 *
 * Return: true when a wait would not block.
 */
bool completion_done(struct completion *x);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_COMPLETION_H */

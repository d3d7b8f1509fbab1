// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * <rdmarw/workqueue.h>: queueing returns false while pending, an ordered
 * queue runs items in order one at a time, a work item never runs on two
 * workers at once, flush_work()/cancel_work_sync() wait for a running item,
 * delayed work fires after its delay and not before, mod_delayed_work()
 * moves it, cancel_delayed_work() stops it, a self-requeuing keep-alive
 * timer is stopped by cancel_delayed_work_sync(), system_wq runs
 * schedule_work() items.  Misuse the kernel would deadlock on (destroying,
 * flushing or synchronously cancelling from inside the queue's own item,
 * destroying system_wq, queueing from outside on a queue being destroyed)
 * is refused with one warning per kind, and the queue still works.  Every
 * wait is bounded (completions with timeouts).  Runs under
 * ThreadSanitizer (TSAN_TESTS).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rdmarw/atomic.h>
#include <rdmarw/completion.h>
#include <rdmarw/kernel.h>
#include <rdmarw/log.h>
#include <rdmarw/workqueue.h>

#define BOUND msecs_to_jiffies(5000)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct job {
	struct work_struct work;
	struct delayed_work dwork;
	struct completion started, release, done;
	atomic_t runs, inside, overlap;
	int order_slot;
	long long ran_at;
};

static atomic_t order_next;
static atomic_t g_inside, g_overlap; /* across all jobs */
static int order[8];

static void job_init(struct job *j)
{
	init_completion(&j->started);
	init_completion(&j->release);
	init_completion(&j->done);
	atomic_set(&j->runs, 0);
	atomic_set(&j->inside, 0);
	atomic_set(&j->overlap, 0);
}

static void count_fn(struct work_struct *w)
{
	struct job *j = container_of(w, struct job, work);
	int slot = atomic_inc_return(&order_next) - 1;

	if (atomic_inc_return(&j->inside) > 1)
		atomic_inc(&j->overlap);
	if (atomic_inc_return(&g_inside) > 1)
		atomic_inc(&g_overlap);
	if (slot < 8)
		order[slot] = j->order_slot;
	atomic_inc(&j->runs);
	sleep_ms(2);
	atomic_dec(&g_inside);
	atomic_dec(&j->inside);
	complete(&j->done);
}

static void blocking_fn(struct work_struct *w)
{
	struct job *j = container_of(w, struct job, work);

	atomic_inc(&j->runs);
	complete(&j->started);
	wait_for_completion_timeout(&j->release, BOUND);
	sleep_ms(50); /* a cancel or flush that does not wait sees !done */
	complete(&j->done);
}

static void ordered_queue_runs_in_order(void **state)
{
	struct workqueue_struct *wq = alloc_ordered_workqueue("ord", 0);
	struct job j[8];
	int i;

	(void)state;
	assert_non_null(wq);
	atomic_set(&order_next, 0);
	for (i = 0; i < 8; i++) {
		job_init(&j[i]);
		j[i].order_slot = i;
		INIT_WORK(&j[i].work, count_fn);
	}
	atomic_set(&g_overlap, 0);
	for (i = 0; i < 8; i++)
		assert_true(queue_work(wq, &j[i].work));
	flush_workqueue(wq);
	assert_int_equal(atomic_read(&g_overlap), 0); /* one at a time */
	for (i = 0; i < 8; i++) {
		assert_int_equal(order[i], i);
		assert_int_equal(atomic_read(&j[i].runs), 1);
	}
	destroy_workqueue(wq);
}

static void pending_work_is_queued_once(void **state)
{
	struct workqueue_struct *wq = alloc_workqueue("pend", 0, 2);
	struct job b, c;

	(void)state;
	job_init(&b);
	job_init(&c);
	INIT_WORK(&b.work, blocking_fn);
	INIT_WORK(&c.work, count_fn);
	/* b blocks one of the two workers */
	assert_true(queue_work(wq, &b.work));
	assert_true(wait_for_completion_timeout(&b.started, BOUND));
	/* b runs: queueing it again succeeds (not pending any more) ... */
	assert_true(queue_work(wq, &b.work));
	/* ... and a second time while pending fails */
	assert_false(queue_work(wq, &b.work));
	/* the requeued b does not start on the other worker while b runs */
	sleep_ms(50);
	assert_int_equal(atomic_read(&b.runs), 1);
	complete_all(&b.release);
	flush_work(&b.work);
	/* flush_work returned after the second run, not at its start */
	assert_int_equal(atomic_read(&b.runs), 2);
	assert_true(try_wait_for_completion(&b.done));
	assert_true(try_wait_for_completion(&b.done));
	assert_false(flush_work(&b.work)); /* idle: no wait */
	destroy_workqueue(wq);
}

static void no_reentrance(void **state)
{
	struct workqueue_struct *wq = alloc_workqueue("reent", 0, 4);
	struct job j;
	int i;

	(void)state;
	job_init(&j);
	INIT_WORK(&j.work, count_fn);
	atomic_set(&order_next, 0);
	for (i = 0; i < 200; i++) {
		queue_work(wq, &j.work);
		sleep_ms(i % 3);
	}
	flush_work(&j.work);
	assert_int_equal(atomic_read(&j.overlap), 0);
	assert_true(atomic_read(&j.runs) >= 1);
	destroy_workqueue(wq);
}

static void cancel_work_sync_waits(void **state)
{
	struct workqueue_struct *wq = alloc_workqueue("cancel", 0, 1);
	struct job b, c;
	long long t0;

	(void)state;
	job_init(&b);
	job_init(&c);
	INIT_WORK(&b.work, blocking_fn);
	INIT_WORK(&c.work, count_fn);
	queue_work(wq, &b.work);
	assert_true(wait_for_completion_timeout(&b.started, BOUND));
	queue_work(wq, &c.work); /* behind b on the only worker */
	assert_true(cancel_work_sync(&c.work)); /* was pending: never runs */
	assert_false(cancel_work_sync(&c.work));
	/* cancel of the running b waits for it to return */
	t0 = now_ms();
	complete(&b.release);
	assert_false(cancel_work_sync(&b.work)); /* running, not pending */
	assert_true(completion_done(&b.done)); /* it returned first */
	assert_true(now_ms() - t0 < 5000);
	flush_workqueue(wq);
	assert_int_equal(atomic_read(&c.runs), 0);
	destroy_workqueue(wq);
}

static void delayed_fn(struct work_struct *w)
{
	struct job *j = container_of(to_delayed_work(w), struct job, dwork);

	j->ran_at = now_ms();
	atomic_inc(&j->runs);
	complete(&j->done);
}

static void delayed_work_fires_after_delay(void **state)
{
	struct workqueue_struct *wq = alloc_workqueue("delay", 0, 2);
	struct job j;
	long long t0;

	(void)state;
	job_init(&j);
	INIT_DELAYED_WORK(&j.dwork, delayed_fn);
	t0 = now_ms();
	assert_true(queue_delayed_work(wq, &j.dwork, msecs_to_jiffies(100)));
	assert_false(queue_delayed_work(wq, &j.dwork, 1)); /* pending */
	assert_true(wait_for_completion_timeout(&j.done, BOUND));
	assert_true(j.ran_at - t0 >= 100);
	/* mod_delayed_work pushes a pending timer later */
	reinit_completion(&j.done);
	t0 = now_ms();
	assert_false(mod_delayed_work(wq, &j.dwork, msecs_to_jiffies(30)));
	assert_true(mod_delayed_work(wq, &j.dwork, msecs_to_jiffies(200)));
	assert_true(wait_for_completion_timeout(&j.done, BOUND));
	assert_true(j.ran_at - t0 >= 200);
	assert_int_equal(atomic_read(&j.runs), 2);
	/* cancel_delayed_work before expiry: it never runs */
	assert_true(queue_delayed_work(wq, &j.dwork, msecs_to_jiffies(50)));
	assert_true(cancel_delayed_work(&j.dwork));
	assert_false(cancel_delayed_work(&j.dwork));
	sleep_ms(120);
	assert_int_equal(atomic_read(&j.runs), 2);
	/* flush_delayed_work runs an armed one at once */
	reinit_completion(&j.done);
	t0 = now_ms();
	assert_true(queue_delayed_work(wq, &j.dwork, msecs_to_jiffies(60000)));
	assert_true(flush_delayed_work(&j.dwork));
	assert_true(completion_done(&j.done));
	assert_true(now_ms() - t0 < 5000);
	destroy_workqueue(wq);
}

static struct workqueue_struct *ka_wq;
static atomic_t ka_beats;

static void keep_alive(struct work_struct *w)
{
	atomic_inc(&ka_beats);
	queue_delayed_work(ka_wq, to_delayed_work(w), msecs_to_jiffies(5));
}

static void keep_alive_timer_stops(void **state)
{
	struct delayed_work ka;
	long long deadline;
	int beats;

	(void)state;
	ka_wq = alloc_workqueue("ka", 0, 2);
	atomic_set(&ka_beats, 0);
	INIT_DELAYED_WORK(&ka, keep_alive);
	queue_delayed_work(ka_wq, &ka, msecs_to_jiffies(5));
	deadline = now_ms() + 5000;
	while (atomic_read(&ka_beats) < 5 && now_ms() < deadline)
		sleep_ms(5);
	assert_true(atomic_read(&ka_beats) >= 5);
	cancel_delayed_work_sync(&ka); /* may catch it running: it rearms */
	cancel_delayed_work_sync(&ka);
	beats = atomic_read(&ka_beats);
	sleep_ms(50);
	assert_int_equal(atomic_read(&ka_beats), beats);
	destroy_workqueue(ka_wq);
}

static void system_wq_runs_schedule_work(void **state)
{
	struct job j;

	(void)state;
	job_init(&j);
	INIT_WORK(&j.work, count_fn);
	INIT_DELAYED_WORK(&j.dwork, delayed_fn);
	assert_true(schedule_work(&j.work));
	assert_true(wait_for_completion_timeout(&j.done, BOUND));
	assert_true(schedule_delayed_work(&j.dwork, 1));
	assert_true(wait_for_completion_timeout(&j.done, BOUND));
	flush_work(&j.work);
	cancel_delayed_work_sync(&j.dwork);
	assert_ptr_equal(system_wq, rdmarw_system_wq());
}

/* The library's messages, kept to count the warnings of each kind. */
static pthread_mutex_t msgs_lock = PTHREAD_MUTEX_INITIALIZER;
static char msgs[32][160];
static int nmsgs;

static void keep_msg(enum rdmarw_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	pthread_mutex_lock(&msgs_lock);
	if (nmsgs < 32)
		snprintf(msgs[nmsgs++], sizeof(msgs[0]), "%s", msg);
	pthread_mutex_unlock(&msgs_lock);
}

static int msgs_with(const char *what)
{
	int i, n = 0;

	pthread_mutex_lock(&msgs_lock);
	for (i = 0; i < nmsgs; i++)
		n += strstr(msgs[i], what) != NULL;
	pthread_mutex_unlock(&msgs_lock);
	return n;
}

enum misuse_op {
	DESTROY_OWN,
	FLUSH_OWN_QUEUE,
	FLUSH_SELF,
	FLUSH_PENDING_OTHER, /* behind the caller on its one-worker queue */
	CANCEL_SELF_SYNC, /* after requeueing itself */
	CANCEL_DELAYED_SELF_SYNC, /* after rearming itself */
	FLUSH_DELAYED_SELF,
};

struct misuse {
	struct work_struct work;
	struct delayed_work dwork;
	struct workqueue_struct *wq;
	enum misuse_op op;
	struct job *other;
	bool ret;
	atomic_t runs;
	struct completion done;
};

static void misuse_do(struct misuse *m)
{
	atomic_inc(&m->runs);
	if (atomic_read(&m->runs) > 1) /* a requeued run that must not be */
		goto out;
	switch (m->op) {
	case DESTROY_OWN:
		destroy_workqueue(m->wq);
		break;
	case FLUSH_OWN_QUEUE:
		flush_workqueue(m->wq);
		m->ret = false; /* returned */
		break;
	case FLUSH_SELF:
		m->ret = flush_work(&m->work);
		break;
	case FLUSH_PENDING_OTHER:
		assert_true(queue_work(m->wq, &m->other->work));
		m->ret = flush_work(&m->other->work);
		/* it has not run: it waits for this item */
		assert_int_equal(atomic_read(&m->other->runs), 0);
		break;
	case CANCEL_SELF_SYNC:
		assert_true(queue_work(m->wq, &m->work));
		m->ret = cancel_work_sync(&m->work);
		break;
	case CANCEL_DELAYED_SELF_SYNC:
		assert_true(queue_delayed_work(m->wq, &m->dwork,
					       msecs_to_jiffies(60000)));
		m->ret = cancel_delayed_work_sync(&m->dwork);
		break;
	case FLUSH_DELAYED_SELF:
		m->ret = flush_delayed_work(&m->dwork);
		break;
	}
out:
	complete(&m->done);
}

static void misuse_fn(struct work_struct *w)
{
	misuse_do(container_of(w, struct misuse, work));
}

static void misuse_dfn(struct work_struct *w)
{
	misuse_do(container_of(to_delayed_work(w), struct misuse, dwork));
}

/* Run @op in an item of @wq, @times times in a row; whether each returned. */
static bool run_misuse(struct workqueue_struct *wq, enum misuse_op op,
		       struct job *other, int times, struct misuse *m)
{
	bool delayed =
		op == CANCEL_DELAYED_SELF_SYNC || op == FLUSH_DELAYED_SELF;

	memset(m, 0, sizeof(*m));
	m->wq = wq;
	m->op = op;
	m->other = other;
	init_completion(&m->done);
	INIT_WORK(&m->work, misuse_fn);
	INIT_DELAYED_WORK(&m->dwork, misuse_dfn);
	while (times--) {
		atomic_set(&m->runs, 0);
		m->ret = true;
		if (delayed)
			assert_true(queue_delayed_work(wq, &m->dwork, 0));
		else
			assert_true(queue_work(wq, &m->work));
		if (!wait_for_completion_timeout(&m->done, BOUND))
			return false; /* deadlocked: the queue is lost */
	}
	return true;
}

static void destroy_from_own_item_is_refused(void **state)
{
	struct workqueue_struct *wq = alloc_workqueue("selfdestroy", 0, 2);
	struct misuse m;
	struct job j;

	(void)state;
	assert_true(run_misuse(wq, DESTROY_OWN, NULL, 2, &m));
	assert_int_equal(msgs_with("destroy_workqueue(selfdestroy) from one "
				   "of its own work items: refused"),
			 1);
	/* the queue is whole: it runs an item, then is destroyed */
	job_init(&j);
	INIT_WORK(&j.work, count_fn);
	assert_true(queue_work(wq, &j.work));
	assert_true(wait_for_completion_timeout(&j.done, BOUND));
	destroy_workqueue(wq);
}

static void self_waits_are_refused(void **state)
{
	static const struct {
		enum misuse_op op;
		const char *what;
	} cases[] = {
		{ FLUSH_OWN_QUEUE,
		  "flush_workqueue() from a work item of ord1" },
		{ FLUSH_SELF, "flush_work() from a work item of ord1" },
		{ CANCEL_SELF_SYNC, "cancel_work_sync() from a work item" },
		{ CANCEL_DELAYED_SELF_SYNC,
		  "cancel_delayed_work_sync() from a work item" },
		{ FLUSH_DELAYED_SELF, "flush_delayed_work() from a work item" },
	};
	struct workqueue_struct *wq = alloc_ordered_workqueue("ord1", 0);
	unsigned long warns = rdmarw_warn_count();
	struct misuse m;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_true(run_misuse(wq, cases[i].op, NULL, 2, &m));
		assert_int_equal(msgs_with(cases[i].what), 1);
		flush_workqueue(wq);
		/* nothing ran again: the cancels took what was pending */
		assert_int_equal(atomic_read(&m.runs), 1);
		if (cases[i].op == CANCEL_SELF_SYNC ||
		    cases[i].op == CANCEL_DELAYED_SELF_SYNC)
			assert_true(m.ret);
		else
			assert_false(m.ret);
	}
	/* no delayed work was left armed */
	destroy_workqueue(wq);
	assert_int_equal(rdmarw_warn_count(), warns);
}

static void flush_of_item_behind_caller_is_refused(void **state)
{
	struct workqueue_struct *wq = alloc_ordered_workqueue("ord2", 0);
	struct misuse m;
	struct job j;

	(void)state;
	job_init(&j);
	INIT_WORK(&j.work, count_fn);
	assert_true(run_misuse(wq, FLUSH_PENDING_OTHER, &j, 1, &m));
	assert_false(m.ret);
	assert_int_equal(
		msgs_with("flush_work() from a work item of ord2 would "
			  "wait for itself (the item is queued "
			  "behind it"),
		1);
	/* the other item runs once the caller returned */
	assert_true(wait_for_completion_timeout(&j.done, BOUND));
	destroy_workqueue(wq);
}

struct destroyer {
	struct workqueue_struct *wq;
	pthread_t thread;
};

static void *destroy_thread(void *p)
{
	struct destroyer *d = p;

	destroy_workqueue(d->wq);
	return NULL;
}

static void queue_while_destroyed_is_refused(void **state)
{
	struct destroyer d = { alloc_workqueue("dying", 0, 2) };
	struct delayed_work dw;
	long long deadline;
	struct job b, c;
	bool refused = false;

	(void)state;
	job_init(&b);
	job_init(&c);
	INIT_WORK(&b.work, blocking_fn);
	INIT_WORK(&c.work, count_fn);
	INIT_DELAYED_WORK(&dw, delayed_fn);
	/* b holds one worker, so the destroy waits for it */
	assert_true(queue_work(d.wq, &b.work));
	assert_true(wait_for_completion_timeout(&b.started, BOUND));
	assert_int_equal(pthread_create(&d.thread, NULL, destroy_thread, &d),
			 0);
	/* until the destroy has begun, c is queued and run by the other */
	deadline = now_ms() + 5000;
	while (!refused && now_ms() < deadline) {
		refused = !queue_work(d.wq, &c.work);
		if (!refused)
			assert_true(
				wait_for_completion_timeout(&c.done, BOUND));
	}
	assert_true(refused);
	assert_false(queue_delayed_work(d.wq, &dw, 10));
	assert_int_equal(msgs_with("queue_work() on dying while "
				   "destroy_workqueue() empties it: refused"),
			 1);
	complete(&b.release);
	assert_int_equal(pthread_join(d.thread, NULL), 0);
	assert_true(completion_done(&b.done));
	assert_false(c.work.pending);
}

static void destroying_system_wq_is_refused(void **state)
{
	struct job j;

	(void)state;
	destroy_workqueue(system_wq);
	assert_int_equal(msgs_with("destroy_workqueue(system_wq): refused"), 1);
	job_init(&j);
	INIT_WORK(&j.work, count_fn);
	assert_true(schedule_work(&j.work));
	assert_true(wait_for_completion_timeout(&j.done, BOUND));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ordered_queue_runs_in_order),
		cmocka_unit_test(pending_work_is_queued_once),
		cmocka_unit_test(no_reentrance),
		cmocka_unit_test(cancel_work_sync_waits),
		cmocka_unit_test(delayed_work_fires_after_delay),
		cmocka_unit_test(keep_alive_timer_stops),
		cmocka_unit_test(system_wq_runs_schedule_work),
		cmocka_unit_test(destroy_from_own_item_is_refused),
		cmocka_unit_test(self_waits_are_refused),
		cmocka_unit_test(flush_of_item_behind_caller_is_refused),
		cmocka_unit_test(queue_while_destroyed_is_refused),
		cmocka_unit_test(destroying_system_wq_is_refused),
	};

	rdmarw_set_log_fn(keep_msg, NULL);

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The progress threads of a threaded device (profile.threaded): one per QP
 * group, one group per online CPU (at most SOFT_TASK_GROUPS); a QP joins
 * the groups round-robin in creation order.  On an inline device
 * scheduling a QP runs its Send Queue in the calling thread.
 *
 * A kick (rdmarw__soft_qp_schedule()) marks the QP pending, one exchange
 * on the QP's own field, and wakes the group's thread only if it sleeps.
 * Whoever takes the mark runs the Send Queue: the group's thread, which
 * looks at every QP of its group before it waits, or a thread polling the
 * QP's send CQ that finds it empty (rdmarw__soft_task_help(), called by
 * soft_cq.c), as a NAPI poll runs the device's work in the caller.  A
 * thread with no work naps (waits with a timeout, SOFT_TASK_NAP_NS): a
 * kick to the QP a poller helps need not wake a napping thread, since the
 * poller or the end of the nap runs it.  After SOFT_TASK_NAPS naps in a
 * row without work the thread sleeps until kicked.  So a pending QP runs
 * within one nap even when no one ever polls, and a busy-polling
 * application does its own QPs' work without a wake-up or a context
 * switch per kick (docs/soft-device.md, "Progress threads").
 */
#include "soft/soft_access.h"

#include <unistd.h>

/* A nap: how long a pending QP left to a poller waits if it stops. */
#define SOFT_TASK_NAP_NS 1000000L
/* Naps in a row without work before the thread sleeps until kicked. */
#define SOFT_TASK_NAPS 64

/* This thread runs a QP's Send Queue for its group (a progress thread or
 * a helping poller): a completion handler polling inside it helps none. */
static __thread bool task_in_run;

static void task_run(struct soft_qp *qp)
{
	task_in_run = true;
	rdmarw__soft_qp_run(qp);
	task_in_run = false;
}

/*
 * One pass over the group (lock held, dropped while a QP runs): run each
 * pending QP once, in the group's order.  A QP being run stays on the list
 * (rdmarw__soft_task_forget() waits for @running), so the walk goes on
 * from it.  True when one ran.
 */
static bool task_pass(struct soft_task *t)
{
	struct list_head *pos;
	struct soft_qp *qp;
	bool ran = false;

	for (pos = t->qps.next; pos != &t->qps; pos = pos->next) {
		qp = list_entry(pos, struct soft_qp, task_entry);
		if (!__atomic_load_n(&qp->task_pending, __ATOMIC_SEQ_CST) ||
		    !soft_xchg(&qp->task_pending, 0))
			continue;
		t->running = qp;
		soft_mutex_unlock(&t->lock);
		task_run(qp);
		soft_mutex_lock(&t->lock);
		t->running = NULL;
		if (t->forgetting)
			soft_mutex_wake(&t->lock);
		ran = true;
	}
	return ran;
}

static void task_set_state(struct soft_task *t, int state)
{
	__atomic_store_n(&t->state, state, __ATOMIC_SEQ_CST);
}

/*
 * Wait for work (lock held, nothing pending at the last pass).  The state
 * is published before a last pass: a kicker marks its QP pending before it
 * reads the state (both sequentially consistent), so either that pass sees
 * the mark, or the kicker sees the state and wakes a sleeping thread.
 */
static void task_wait(struct soft_task *t)
{
	bool nap = t->naps < SOFT_TASK_NAPS;

	task_set_state(t, nap ? SOFT_TASK_NAPPING : SOFT_TASK_SLEEPING);
	if (task_pass(t)) {
		t->naps = 0;
	} else if (!t->kicked && !t->stop) {
		if (nap)
			soft_mutex_nap(&t->lock, SOFT_TASK_NAP_NS);
		else
			soft_mutex_wait(&t->lock);
		t->naps = t->kicked || !nap ? 0 : t->naps + 1;
	}
	t->kicked = false;
	task_set_state(t, SOFT_TASK_RUNNING);
}

static void *task_main(void *arg)
{
	struct soft_task *t = arg;

	soft_mutex_lock(&t->lock);
	for (;;) {
		if (task_pass(t)) {
			t->naps = 0;
			continue;
		}
		if (t->stop)
			break; /* stop, and nothing left to run */
		task_wait(t);
	}
	soft_mutex_unlock(&t->lock);
	return NULL;
}

static void task_wake(struct soft_task *t)
{
	soft_mutex_lock(&t->lock);
	t->kicked = true;
	soft_mutex_wake(&t->lock);
	soft_mutex_unlock(&t->lock);
}

static void task_stop(struct soft_task *t)
{
	if (!t->started)
		return;
	soft_mutex_lock(&t->lock);
	t->stop = true;
	soft_mutex_wake(&t->lock);
	soft_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	t->started = false;
	t->stop = false;
	t->naps = 0;
}

int rdmarw__soft_task_start(struct soft_dev *sdev)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	u32 n = cpus < 1		? 1 :
		cpus > SOFT_TASK_GROUPS ? SOFT_TASK_GROUPS :
					  cpus;
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = pthread_create(&sdev->task[i].thread, NULL, task_main,
				     &sdev->task[i]);
		if (ret) {
			while (i--)
				task_stop(&sdev->task[i]);
			return -ret;
		}
		sdev->task[i].started = true;
	}
	sdev->ntasks = n;
	sdev->threaded = true;
	return 0;
}

void rdmarw__soft_task_stop(struct soft_dev *sdev)
{
	u32 i;

	for (i = 0; i < SOFT_TASK_GROUPS; i++)
		task_stop(&sdev->task[i]);
	sdev->ntasks = 0;
	sdev->threaded = false;
}

void rdmarw__soft_task_join(struct soft_qp *qp)
{
	struct soft_dev *sdev = qp->dev;
	u32 n = sdev->ntasks ? sdev->ntasks : 1;

	qp->task = &sdev->task[(soft_add(&sdev->next_task, 1) - 1) % n];
}

/*
 * May a poller of @qp's send CQ run it, so that a napping thread need not
 * be woken?  The CQ's help names one QP; the first kicked QP of a CQ (or
 * the first after that one is destroyed) takes it.
 */
static bool task_helped(struct soft_qp *qp)
{
	struct soft_cq *cq = soft_send_cq(qp);
	struct soft_qp *h = soft_load(&cq->help);

	if (!h &&
	    __atomic_compare_exchange_n(&cq->help, &h, qp, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		h = qp;
	return h == qp && soft_load(&cq->polled);
}

/* The first kick of @qp puts it on its group's list: false if dying. */
static bool task_enter(struct soft_task *t, struct soft_qp *qp)
{
	bool in;

	soft_mutex_lock(&t->lock);
	if (!qp->task_member && !soft_load(&qp->dying)) {
		list_add_tail(&qp->task_entry, &t->qps);
		soft_store(&qp->task_member, true);
	}
	in = qp->task_member;
	soft_mutex_unlock(&t->lock);
	task_helped(qp); /* let its send CQ's pollers help it */
	return in;
}

void rdmarw__soft_qp_schedule(struct soft_qp *qp)
{
	struct soft_task *t = qp->task;
	int state;

	if (!t->started) {
		rdmarw__soft_qp_run(qp);
		return;
	}
	if (!soft_load(&qp->task_member) && !task_enter(t, qp))
		return;
	/* Already pending: its taker runs the queue after this exchange,
	 * so it sees what was posted before it. */
	if (__atomic_exchange_n(&qp->task_pending, 1, __ATOMIC_SEQ_CST))
		return;
	state = __atomic_load_n(&t->state, __ATOMIC_SEQ_CST);
	if (state == SOFT_TASK_RUNNING ||
	    (state == SOFT_TASK_NAPPING && task_helped(qp)))
		return;
	task_wake(t);
}

bool rdmarw__soft_task_help(struct soft_qp *qp)
{
	if (task_in_run || !soft_load(&qp->task_pending) ||
	    !soft_xchg(&qp->task_pending, 0))
		return false;
	task_run(qp);
	return true;
}

void rdmarw__soft_task_forget(struct soft_qp *qp)
{
	struct soft_task *t = qp->task;
	struct soft_cq *cq = soft_send_cq(qp);

	/* No poller starts helping it; wait for those that did. */
	soft_spin_lock(&cq->lock);
	if (soft_load(&cq->help) == qp) {
		soft_store(&cq->help, NULL);
		while (cq->helping) {
			soft_spin_unlock(&cq->lock);
			sched_yield();
			soft_spin_lock(&cq->lock);
		}
	}
	soft_spin_unlock(&cq->lock);
	soft_mutex_lock(&t->lock);
	t->forgetting++;
	while (t->running == qp)
		soft_mutex_wait(&t->lock);
	t->forgetting--;
	if (qp->task_member) {
		list_del_init(&qp->task_entry);
		soft_store(&qp->task_member, false);
	}
	soft_store(&qp->task_pending, 0);
	soft_mutex_unlock(&t->lock);
}

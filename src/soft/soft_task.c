// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The progress threads of a threaded device (profile.threaded): one per QP
 * group, one group per online CPU (at most SOFT_TASK_GROUPS); a QP joins
 * the groups round-robin in creation order.  Each thread runs the Send
 * Queues of its group's QPs that were scheduled, one at a time, in the
 * order they were scheduled; groups share nothing.  On an inline device
 * scheduling a QP runs its Send Queue in the calling thread.
 */
#include "soft/soft_access.h"

#include <unistd.h>

static void *task_main(void *arg)
{
	struct soft_task *t = arg;
	struct soft_qp *qp;

	soft_mutex_lock(&t->lock);
	for (;;) {
		while (list_empty(&t->queue) && !t->stop)
			soft_mutex_wait(&t->lock);
		if (list_empty(&t->queue))
			break; /* stop, and nothing left to run */
		qp = list_first_entry(&t->queue, struct soft_qp, task_entry);
		list_del_init(&qp->task_entry);
		qp->task_queued = false;
		t->running = qp;
		soft_mutex_unlock(&t->lock);
		rdmarw__soft_qp_run(qp);
		soft_mutex_lock(&t->lock);
		t->running = NULL;
		soft_mutex_wake(&t->lock);
	}
	soft_mutex_unlock(&t->lock);
	return NULL;
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

void rdmarw__soft_qp_schedule(struct soft_qp *qp)
{
	struct soft_task *t = qp->task;

	if (!t->started) {
		rdmarw__soft_qp_run(qp);
		return;
	}
	soft_mutex_lock(&t->lock);
	if (!qp->task_queued && !qp->dying) {
		list_add_tail(&qp->task_entry, &t->queue);
		qp->task_queued = true;
		soft_mutex_wake(&t->lock);
	}
	soft_mutex_unlock(&t->lock);
}

void rdmarw__soft_task_forget(struct soft_qp *qp)
{
	struct soft_task *t = qp->task;

	soft_mutex_lock(&t->lock);
	qp->dying = true;
	if (qp->task_queued) {
		list_del_init(&qp->task_entry);
		qp->task_queued = false;
	}
	while (t->running == qp)
		soft_mutex_wait(&t->lock);
	soft_mutex_unlock(&t->lock);
}

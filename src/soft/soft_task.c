// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The progress thread of a threaded device (profile.threaded): it runs the
 * Send Queues of the device's QPs that were scheduled, one at a time, in
 * the order they were scheduled.  On an inline device scheduling a QP runs
 * its Send Queue in the calling thread.
 */
#include "soft/soft_access.h"

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

int rdmarw__soft_task_start(struct soft_dev *sdev)
{
	int ret = pthread_create(&sdev->task.thread, NULL, task_main,
				 &sdev->task);

	if (ret)
		return -ret;
	sdev->task.started = true;
	sdev->threaded = true;
	return 0;
}

void rdmarw__soft_task_stop(struct soft_dev *sdev)
{
	struct soft_task *t = &sdev->task;

	if (!t->started)
		return;
	soft_mutex_lock(&t->lock);
	t->stop = true;
	soft_mutex_wake(&t->lock);
	soft_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	t->started = false;
	sdev->threaded = false;
}

void rdmarw__soft_qp_schedule(struct soft_qp *qp)
{
	struct soft_task *t = &qp->dev->task;

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
	struct soft_task *t = &qp->dev->task;

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

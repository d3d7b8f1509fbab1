// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared CQ pools (ib_cq_pool_get()/ib_cq_pool_put()) on the fake
 * provider: users share a CQ, cqe_used accounts for each reservation, the
 * least used CQ with room is picked, the pool grows by one CQ per vector,
 * each poll context has its own pool, bad input is refused, and device
 * removal frees the pool (refused while entries are reserved or a QP uses
 * a pool CQ).  Every test ends with the provider holding no CQ.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <rdmarw/soft.h>

#include "core/cq_pool.h"
#include "helpers/fake_provider.h"

static struct fake_dev *new_dev(int vectors)
{
	struct fake_dev *fd = fake_dev_new("cqpool%d", RDMA_PROTOCOL_ROCE);

	assert_non_null(fd);
	fd->ibdev.num_comp_vectors = vectors;
	return fd;
}

/* Remove the device, check that the pool went with it, free it. */
static void remove_dev(struct fake_dev *fd)
{
	assert_int_equal(rdmarw__unregister_device(&fd->ibdev), 0);
	assert_int_equal(fd->live_cqs, 0);
	assert_null(fd->ibdev.cq_pools);
	assert_int_equal(fd->ibdev.refcount, 1);
	rdmarw__free_device(&fd->ibdev);
}

static unsigned int online_vectors(int want)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus > 0 && cpus < want ? (unsigned int)cpus :
					 (unsigned int)want;
}

static void users_share_a_cq(void **state)
{
	struct fake_dev *fd = new_dev(1);
	struct ib_device *dev = &fd->ibdev;
	struct ib_cq *a, *b, *c;

	a = ib_cq_pool_get(dev, 100, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(a));
	assert_true(a->shared);
	assert_int_equal(a->cqe, IB_MAX_SHARED_CQ_SZ);
	assert_int_equal(a->cqe_used, 100);
	assert_null(a->cq_context);
	assert_int_equal(fd->live_cqs, 1);
	/* a second user gets the same CQ, its entries added */
	b = ib_cq_pool_get(dev, 200, 0, IB_POLL_WORKQUEUE);
	assert_ptr_equal(b, a);
	assert_int_equal(a->cqe_used, 300);
	assert_int_equal(fd->live_cqs, 1);
	/* another poll context has its own pool */
	c = ib_cq_pool_get(dev, 10, 0, IB_POLL_SOFTIRQ);
	assert_false(IS_ERR(c));
	assert_ptr_not_equal(c, a);
	assert_int_equal(c->poll_ctx, IB_POLL_SOFTIRQ);
	assert_int_equal(fd->live_cqs, 2);
	/* a pool CQ is not freed by hand */
	assert_int_equal(ib_free_cq(a), -EINVAL);
	assert_int_equal(fd->live_cqs, 2);

	assert_int_equal(ib_cq_pool_put(a, 200), 0);
	assert_int_equal(a->cqe_used, 100);
	assert_int_equal(ib_cq_pool_put(a, 100), 0);
	assert_int_equal(ib_cq_pool_put(c, 10), 0);
	assert_int_equal(a->cqe_used, 0);
	/* unused CQs stay in the pool until the device goes */
	assert_int_equal(fd->live_cqs, 2);
	assert_ptr_equal(ib_cq_pool_get(dev, 1, 0, IB_POLL_WORKQUEUE), a);
	assert_int_equal(ib_cq_pool_put(a, 1), 0);
	remove_dev(fd);
}

static void growth_and_least_used(void **state)
{
	struct fake_dev *fd = new_dev(1);
	struct ib_device *dev = &fd->ibdev;
	struct ib_cq *a, *b;

	a = ib_cq_pool_get(dev, 400, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(a));
	/* 3696 left on a: 4000 needs a new CQ */
	b = ib_cq_pool_get(dev, 4000, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(b));
	assert_ptr_not_equal(b, a);
	assert_int_equal(fd->live_cqs, 2);
	assert_int_equal(b->cqe_used, 4000);
	/* a fits, b does not: a */
	assert_ptr_equal(ib_cq_pool_get(dev, 100, 0, IB_POLL_WORKQUEUE), a);
	assert_int_equal(a->cqe_used, 500);
	/* b now less used than a (first in the list): b is picked */
	assert_int_equal(ib_cq_pool_put(b, 3900), 0);
	assert_ptr_equal(ib_cq_pool_get(dev, 50, 0, IB_POLL_WORKQUEUE), b);
	assert_int_equal(b->cqe_used, 150);
	assert_int_equal(a->cqe_used, 500);
	/* exactly the rest of a CQ fits */
	assert_ptr_equal(ib_cq_pool_get(dev, 4096 - 150, 0, IB_POLL_WORKQUEUE),
			 b);
	assert_int_equal(b->cqe_used, 4096);
	assert_int_equal(fd->live_cqs, 2);

	assert_int_equal(ib_cq_pool_put(a, 500), 0);
	assert_int_equal(ib_cq_pool_put(b, 4096), 0);
	remove_dev(fd);
}

static void vectors(void **state)
{
	struct fake_dev *fd = new_dev(4);
	struct ib_device *dev = &fd->ibdev;
	unsigned int n = online_vectors(4), i;
	struct ib_cq *cq[8];

	/* the first get grows the pool by one CQ per vector */
	cq[0] = ib_cq_pool_get(dev, 10, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(cq[0]));
	assert_int_equal(fd->live_cqs, n);
	assert_int_equal(cq[0]->comp_vector, 0);
	for (i = 1; i < n; i++) {
		cq[i] = ib_cq_pool_get(dev, 10, (int)i, IB_POLL_WORKQUEUE);
		assert_int_equal(cq[i]->comp_vector, i);
		assert_ptr_not_equal(cq[i], cq[0]);
	}
	/* hints are taken modulo the vectors */
	cq[n] = ib_cq_pool_get(dev, 10, (int)(n + 1), IB_POLL_WORKQUEUE);
	assert_int_equal(cq[n]->comp_vector, 1 % n);
	assert_int_equal(fd->live_cqs, n);
	/* no hint: round robin over the vectors */
	cq[n + 1] = ib_cq_pool_get(dev, 10, -1, IB_POLL_WORKQUEUE);
	cq[n + 2] = ib_cq_pool_get(dev, 10, -1, IB_POLL_WORKQUEUE);
	assert_int_equal(cq[n + 2]->comp_vector,
			 (cq[n + 1]->comp_vector + 1) % n);
	for (i = 0; i < n + 3; i++)
		assert_int_equal(ib_cq_pool_put(cq[i], 10), 0);
	remove_dev(fd);
}

static void bad_input(void **state)
{
	struct fake_dev *fd = new_dev(1);
	struct ib_device *dev = &fd->ibdev;
	struct ib_cq *cq, *plain;

	assert_ptr_equal(ib_cq_pool_get(NULL, 1, 0, IB_POLL_WORKQUEUE),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_cq_pool_get(dev, 0, 0, IB_POLL_WORKQUEUE),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_cq_pool_get(dev, 4097, 0, IB_POLL_WORKQUEUE),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_cq_pool_get(dev, 1, 0, IB_POLL_DIRECT),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_cq_pool_get(dev, 1, 0, (enum ib_poll_context) - 1),
			 ERR_PTR(-EINVAL));
	assert_ptr_equal(ib_cq_pool_get(dev, 1, 0, (enum ib_poll_context)9),
			 ERR_PTR(-EINVAL));
	assert_int_equal(fd->live_cqs, 0);

	cq = ib_cq_pool_get(dev, 8, 0, IB_POLL_UNBOUND_WORKQUEUE);
	assert_false(IS_ERR(cq));
	/* more than reserved: refused, nothing changes */
	assert_int_equal(ib_cq_pool_put(cq, 9), -EINVAL);
	assert_int_equal(cq->cqe_used, 8);
	assert_int_equal(ib_cq_pool_put(NULL, 1), -EINVAL);
	assert_int_equal(ib_cq_pool_put(ERR_PTR(-ENOMEM), 1), -EINVAL);
	/* a CQ of ib_alloc_cq() is no pool's */
	plain = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(plain));
	assert_int_equal(ib_cq_pool_put(plain, 0), -EINVAL);
	assert_int_equal(ib_free_cq(plain), 0);
	/* the largest reservation the device allows */
	assert_int_equal(ib_cq_pool_put(cq, 8), 0);
	assert_int_equal(ib_cq_pool_put(cq, 1), -EINVAL);
	cq = ib_cq_pool_get(dev, 4096, 0, IB_POLL_UNBOUND_WORKQUEUE);
	assert_false(IS_ERR(cq));
	assert_int_equal(cq->cqe_used, 4096);
	assert_int_equal(ib_cq_pool_put(cq, 4096), 0);
	remove_dev(fd);
}

static void removal_frees_the_pool(void **state)
{
	struct fake_dev *fd = new_dev(1);
	struct ib_device *dev = &fd->ibdev;
	struct ib_qp_init_attr attr = {
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};
	struct ib_cq *cq;
	struct ib_pd *pd;
	struct ib_qp *qp;

	cq = ib_cq_pool_get(dev, 32, 0, IB_POLL_WORKQUEUE);
	assert_false(IS_ERR(cq));
	/* reserved entries keep the device */
	assert_int_equal(rdmarw__unregister_device(dev), -EBUSY);
	assert_int_equal(fd->live_cqs, 1);
	assert_non_null(ib_device_get_by_name(dev->name));
	assert_int_equal(ib_cq_pool_put(cq, 32), 0);
	/* so does a QP on a pool CQ */
	pd = ib_alloc_pd(dev, 0);
	assert_false(IS_ERR(pd));
	attr.send_cq = attr.recv_cq = cq;
	qp = ib_create_qp(pd, &attr);
	assert_false(IS_ERR(qp));
	assert_int_equal(rdmarw__unregister_device(dev), -EBUSY);
	assert_int_equal(fd->live_cqs, 1);
	assert_int_equal(ib_destroy_qp(qp), 0);
	assert_int_equal(ib_dealloc_pd(pd), 0);
	/* a pool in each context, then removal frees all */
	assert_false(IS_ERR(ib_cq_pool_get(dev, 1, 0, IB_POLL_SOFTIRQ)));
	assert_int_equal(
		ib_cq_pool_put(ib_cq_pool_get(dev, 1, 0, IB_POLL_SOFTIRQ), 2),
		0);
	assert_int_equal(fd->live_cqs, 2);
	remove_dev(fd);
}

struct done_ctx {
	struct ib_cqe cqe;
	int done;
	enum ib_wc_status status;
};

static void on_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct done_ctx *d = container_of(wc->wr_cqe, struct done_ctx, cqe);

	d->status = wc->status;
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
}

/* Completions of two users on one pool CQ reach each user's done(). */
static void completions_dispatched(void **state)
{
	struct fake_dev *fd = new_dev(1);
	struct done_ctx d1 = { .cqe.done = on_done }, d2 = d1;
	struct ib_wc wc = { .status = IB_WC_SUCCESS };
	struct ib_cq *cq1, *cq2;
	int spins;

	cq1 = ib_cq_pool_get(&fd->ibdev, 4, 0, IB_POLL_WORKQUEUE);
	cq2 = ib_cq_pool_get(&fd->ibdev, 4, 0, IB_POLL_WORKQUEUE);
	assert_ptr_equal(cq1, cq2);
	wc.wr_cqe = &d1.cqe;
	assert_int_equal(fake_cq_push(cq1, &wc), 0);
	wc.wr_cqe = &d2.cqe;
	wc.status = IB_WC_WR_FLUSH_ERR;
	assert_int_equal(fake_cq_push(cq2, &wc), 0);
	for (spins = 0; spins < 10000; spins++) {
		if (__atomic_load_n(&d1.done, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&d2.done, __ATOMIC_ACQUIRE))
			break;
		usleep(1000);
	}
	assert_int_equal(d1.done, 1);
	assert_int_equal(d2.done, 1);
	assert_int_equal(d1.status, IB_WC_SUCCESS);
	assert_int_equal(d2.status, IB_WC_WR_FLUSH_ERR);
	assert_int_equal(ib_cq_pool_put(cq1, 4), 0);
	assert_int_equal(ib_cq_pool_put(cq2, 4), 0);
	remove_dev(fd);
}

#define NR_THREADS 4
#define ROUNDS 300

struct worker {
	struct ib_device *dev;
	int id;
	int errors;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		unsigned int n = 1 + (unsigned int)((i * 7 + w->id * 13) % 900);
		struct ib_cq *cq =
			ib_cq_pool_get(w->dev, n, w->id + i, IB_POLL_WORKQUEUE);

		if (IS_ERR(cq)) {
			w->errors++;
			continue;
		}
		if (i % 5 == 0)
			sched_yield();
		if (ib_cq_pool_put(cq, n))
			w->errors++;
	}
	return NULL;
}

/*
 * Concurrent users on the software device (whose CQ creation is thread
 * safe): every reservation given back, the pool bounded, and
 * soft_device_destroy() frees the pool.
 */
static void threaded_get_put(void **state)
{
	struct soft_fabric *fabric = soft_fabric_create();
	struct worker w[NR_THREADS];
	pthread_t t[NR_THREADS];
	struct soft_profile prof;
	struct ib_device *dev;
	unsigned long used;
	unsigned int n;
	int i;

	assert_false(IS_ERR(fabric));
	assert_int_equal(soft_profile_get("rxe", &prof), 0);
	dev = soft_device_create(fabric, "cqpool_soft_%d", &prof);
	assert_false(IS_ERR(dev));
	dev->num_comp_vectors = 2;
	for (i = 0; i < NR_THREADS; i++) {
		w[i] = (struct worker){ .dev = dev, .id = i };
		assert_int_equal(pthread_create(&t[i], NULL, worker_fn, &w[i]),
				 0);
	}
	for (i = 0; i < NR_THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].errors, 0);
	}
	/* at most 4 x 900 entries are held at once: a few CQs per vector */
	rdmarw__cq_pool_count(dev, IB_POLL_WORKQUEUE, &n, &used);
	assert_int_equal(used, 0);
	assert_true(n >= 1 && n <= 2 * NR_THREADS);
	assert_int_equal(soft_device_destroy(dev), 0);
	assert_int_equal(soft_fabric_destroy(fabric), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(users_share_a_cq),
		cmocka_unit_test(growth_and_least_used),
		cmocka_unit_test(vectors),
		cmocka_unit_test(bad_input),
		cmocka_unit_test(removal_frees_the_pool),
		cmocka_unit_test(completions_dispatched),
		cmocka_unit_test(threaded_get_put),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

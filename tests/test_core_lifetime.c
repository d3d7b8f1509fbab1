// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The counts that keep an object alive (a device's references, a PD's and a
 * CQ's use counts) order a holder's last access before the free of the
 * object it held: a destroy that sees the count drop frees memory the other
 * thread touched just before.  Run under ThreadSanitizer (make test-tsan):
 * with relaxed counts it reports the free racing the holder's last reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>

struct holder {
	struct ib_pd *pd;
	struct ib_cq *cq;
};

static void *drop(void *arg)
{
	struct holder *h = arg;

	ib_free_cq(h->cq);
	ib_dealloc_pd(h->pd);
	return NULL;
}

/* A device destroyed as soon as its last PD and CQ are gone, by another
 * thread that polls for it: every destroy either refuses or frees. */
static void test_device_freed_after_last_put(void **state)
{
	struct soft_profile prof;
	int round;

	(void)state;
	assert_int_equal(soft_profile_get("rxe", &prof), 0);
	for (round = 0; round < 50; round++) {
		struct soft_fabric *fab = soft_fabric_create();
		struct ib_device *dev;
		struct holder h;
		pthread_t t;
		int ret;

		assert_non_null(fab);
		dev = soft_device_create(fab, "lt0", &prof);
		assert_false(IS_ERR_OR_NULL(dev));
		h.pd = ib_alloc_pd(dev, 0);
		assert_false(IS_ERR_OR_NULL(h.pd));
		h.cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
		assert_false(IS_ERR_OR_NULL(h.cq));
		assert_int_equal(soft_device_destroy(dev), -EBUSY);
		assert_int_equal(pthread_create(&t, NULL, drop, &h), 0);
		while ((ret = soft_device_destroy(dev)) == -EBUSY) {
			sched_yield();
		}
		assert_int_equal(ret, 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_int_equal(soft_fabric_destroy(fab), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_freed_after_last_put),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

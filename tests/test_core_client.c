// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * struct ib_client: the order clients are told of devices (add in
 * registration order, remove in reverse), devices registered before and
 * after a client, client data per device, a client unregistered while its
 * devices live, a device whose client holds PDs and CQs (freed by its
 * remove; refused and added again when it keeps them), a client that
 * declines a device, bad input, a client's remove unregistering its own
 * device, and clients registered and unregistered while devices come and
 * go on other threads (run under ThreadSanitizer by make test-tsan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "helpers/fake_provider.h"

/* ---- a log of the callbacks, in call order ------------------------------ */

#define LOG_MAX 64

struct call {
	char op; /* 'a' add, 'r' remove */
	struct ib_client *client;
	struct ib_device *dev;
	void *data;
};

static struct {
	struct call c[LOG_MAX];
	int n;
} calls;

static void log_call(char op, struct ib_client *client, struct ib_device *dev,
		     void *data)
{
	assert_true(calls.n < LOG_MAX);
	calls.c[calls.n++] = (struct call){ op, client, dev, data };
}

static void expect_call(int i, char op, struct ib_client *client,
			struct ib_device *dev)
{
	assert_true(i < calls.n);
	assert_int_equal(calls.c[i].op, op);
	assert_ptr_equal(calls.c[i].client, client);
	assert_ptr_equal(calls.c[i].dev, dev);
}

static struct ib_client cl_a, cl_b, cl_c;

/* Each client stores a pointer of its own per device: dev->name + index. */
static void *tag(struct ib_client *client, struct ib_device *dev)
{
	return dev->name + (client == &cl_a ? 1 : client == &cl_b ? 2 : 3);
}

#define CLIENT_OPS(x)                                                     \
	static int add_##x(struct ib_device *dev)                         \
	{                                                                 \
		log_call('a', &cl_##x, dev, NULL);                        \
		assert_null(ib_get_client_data(dev, &cl_##x));            \
		ib_set_client_data(dev, &cl_##x, tag(&cl_##x, dev));      \
		return 0;                                                 \
	}                                                                 \
	static void remove_##x(struct ib_device *dev, void *data)         \
	{                                                                 \
		log_call('r', &cl_##x, dev, data);                        \
		assert_ptr_equal(ib_get_client_data(dev, &cl_##x), data); \
	}

CLIENT_OPS(a)
CLIENT_OPS(b)
CLIENT_OPS(c)

static void clients_init(void)
{
	cl_a = (struct ib_client){ .name = "a",
				   .add = add_a,
				   .remove = remove_a };
	cl_b = (struct ib_client){ .name = "b",
				   .add = add_b,
				   .remove = remove_b };
	cl_c = (struct ib_client){ .name = "c",
				   .add = add_c,
				   .remove = remove_c };
	calls.n = 0;
}

static void add_in_order_remove_in_reverse(void **state)
{
	struct fake_dev *d;

	clients_init();
	assert_int_equal(ib_register_client(&cl_a), 0);
	assert_int_equal(ib_register_client(&cl_b), 0);
	assert_int_equal(ib_register_client(&cl_c), 0);
	assert_int_equal(calls.n, 0);
	d = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);
	assert_non_null(d);
	assert_int_equal(calls.n, 3);
	expect_call(0, 'a', &cl_a, &d->ibdev);
	expect_call(1, 'a', &cl_b, &d->ibdev);
	expect_call(2, 'a', &cl_c, &d->ibdev);
	assert_int_equal(fake_dev_free(d), 0);
	assert_int_equal(calls.n, 6);
	expect_call(3, 'r', &cl_c, &d->ibdev);
	expect_call(4, 'r', &cl_b, &d->ibdev);
	expect_call(5, 'r', &cl_a, &d->ibdev);
	ib_unregister_client(&cl_c);
	ib_unregister_client(&cl_b);
	ib_unregister_client(&cl_a);
	assert_int_equal(calls.n, 6); /* no device left to remove from */
}

static void devices_before_and_after(void **state)
{
	struct fake_dev *d1, *d2;

	clients_init();
	d1 = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);
	assert_non_null(d1);
	assert_int_equal(ib_register_client(&cl_a), 0);
	assert_int_equal(calls.n, 1); /* told of the device already there */
	expect_call(0, 'a', &cl_a, &d1->ibdev);
	d2 = fake_dev_new("cli%d", RDMA_PROTOCOL_ROCE);
	assert_non_null(d2);
	assert_int_equal(calls.n, 2);
	expect_call(1, 'a', &cl_a, &d2->ibdev);
	/* the client goes first: removed from every device, in order */
	ib_unregister_client(&cl_a);
	assert_int_equal(calls.n, 4);
	expect_call(2, 'r', &cl_a, &d1->ibdev);
	expect_call(3, 'r', &cl_a, &d2->ibdev);
	assert_ptr_equal(calls.c[2].data, tag(&cl_a, &d1->ibdev));
	assert_ptr_equal(calls.c[3].data, tag(&cl_a, &d2->ibdev));
	/* nothing more when the devices go */
	assert_int_equal(fake_dev_free(d1), 0);
	assert_int_equal(fake_dev_free(d2), 0);
	assert_int_equal(calls.n, 4);
}

static void data_per_device_and_client(void **state)
{
	struct fake_dev *d1, *d2;

	clients_init();
	d1 = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);
	d2 = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);
	assert_int_equal(ib_register_client(&cl_a), 0);
	assert_int_equal(ib_register_client(&cl_b), 0);
	assert_ptr_equal(ib_get_client_data(&d1->ibdev, &cl_a),
			 tag(&cl_a, &d1->ibdev));
	assert_ptr_equal(ib_get_client_data(&d2->ibdev, &cl_a),
			 tag(&cl_a, &d2->ibdev));
	assert_ptr_equal(ib_get_client_data(&d1->ibdev, &cl_b),
			 tag(&cl_b, &d1->ibdev));
	/* a client not registered has no data anywhere */
	assert_null(ib_get_client_data(&d1->ibdev, &cl_c));
	ib_set_client_data(&d1->ibdev, &cl_a, &calls);
	assert_ptr_equal(ib_get_client_data(&d1->ibdev, &cl_a), &calls);
	assert_ptr_equal(ib_get_client_data(&d2->ibdev, &cl_a),
			 tag(&cl_a, &d2->ibdev));
	/* the device's unregistration hands each client its own pointer */
	calls.n = 0;
	assert_int_equal(fake_dev_free(d1), 0);
	assert_int_equal(calls.n, 2);
	expect_call(0, 'r', &cl_b, &d1->ibdev);
	assert_ptr_equal(calls.c[0].data, tag(&cl_b, &d1->ibdev));
	expect_call(1, 'r', &cl_a, &d1->ibdev);
	assert_ptr_equal(calls.c[1].data, &calls);
	ib_unregister_client(&cl_a);
	assert_null(ib_get_client_data(&d2->ibdev, &cl_a));
	assert_ptr_equal(ib_get_client_data(&d2->ibdev, &cl_b),
			 tag(&cl_b, &d2->ibdev));
	ib_unregister_client(&cl_b);
	assert_null(ib_get_client_data(&d2->ibdev, &cl_b));
	assert_int_equal(fake_dev_free(d2), 0);
}

/* ---- a client holding objects on the device ----------------------------- */

static struct {
	struct ib_pd *pd;
	struct ib_cq *cq;
	bool keep; /* remove leaves them */
	int adds;
	int removes;
	bool name_seen; /* the device was found by name during remove */
} held;

static struct ib_client holder;

/* A PD and a CQ on the device, once (an add after a refusal reuses them). */
static int holder_add(struct ib_device *dev)
{
	held.adds++;
	ib_set_client_data(dev, &holder, &held);
	if (held.pd)
		return 0;
	held.pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(held.pd))
		return (int)PTR_ERR(held.pd);
	held.cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(held.cq)) {
		ib_dealloc_pd(held.pd);
		held.pd = NULL;
		return (int)PTR_ERR(held.cq);
	}
	return 0;
}

static void holder_remove(struct ib_device *dev, void *data)
{
	held.removes++;
	assert_ptr_equal(data, &held);
	held.name_seen = ib_device_get_by_name(dev->name) != NULL;
	if (held.keep)
		return;
	ib_free_cq(held.cq);
	assert_int_equal(ib_dealloc_pd(held.pd), 0);
	held.cq = NULL;
	held.pd = NULL;
}

static struct ib_client holder = { .name = "holder",
				   .add = holder_add,
				   .remove = holder_remove };

static void remove_frees_the_clients_objects(void **state)
{
	struct fake_dev *d;

	memset(&held, 0, sizeof(held));
	assert_int_equal(ib_register_client(&holder), 0);
	d = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);
	assert_non_null(d);
	assert_int_equal(held.adds, 1);
	assert_int_equal(d->live_pds, 1);
	assert_int_equal(d->live_cqs, 1);
	/* the client keeps them: refused, and the device is as it was */
	held.keep = true;
	assert_int_equal(fake_dev_free(d), -EBUSY);
	assert_int_equal(held.removes, 1);
	assert_false(held.name_seen); /* out of the lookups meanwhile */
	assert_ptr_equal(ib_device_get_by_name(d->ibdev.name), &d->ibdev);
	assert_int_equal(held.adds, 2); /* told of the device again */
	assert_ptr_equal(ib_get_client_data(&d->ibdev, &holder), &held);
	assert_int_equal(d->live_pds, 1);
	assert_int_equal(d->live_cqs, 1);
	/* its remove frees them: the device goes (0 needs both freed) */
	held.keep = false;
	assert_int_equal(fake_dev_free(d), 0);
	assert_int_equal(held.removes, 2);
	assert_int_equal(held.adds, 2);
	assert_null(held.pd);
	ib_unregister_client(&holder);
	assert_int_equal(held.removes, 2);
}

/* ---- declining a device ------------------------------------------------- */

static int picky_adds, picky_removes;
static struct ib_client picky;

static int picky_add(struct ib_device *dev)
{
	picky_adds++;
	if (rdma_protocol_iwarp(dev, 1))
		return -EOPNOTSUPP;
	ib_set_client_data(dev, &picky, dev);
	return 0;
}

static void picky_remove(struct ib_device *dev, void *data)
{
	picky_removes++;
	assert_ptr_equal(data, dev);
}

static struct ib_client picky = { .name = "picky",
				  .add = picky_add,
				  .remove = picky_remove };

static void a_client_declines_a_device(void **state)
{
	struct fake_dev *iw, *ib;

	assert_int_equal(ib_register_client(&picky), 0);
	iw = fake_dev_new("cli%d", RDMA_PROTOCOL_IWARP);
	ib = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);
	assert_int_equal(picky_adds, 2);
	assert_null(ib_get_client_data(&iw->ibdev, &picky));
	assert_ptr_equal(ib_get_client_data(&ib->ibdev, &picky), &ib->ibdev);
	/* not added: its data cannot be set either (a warning, no store) */
	ib_set_client_data(&iw->ibdev, &picky, iw);
	assert_null(ib_get_client_data(&iw->ibdev, &picky));
	assert_int_equal(fake_dev_free(iw), 0);
	assert_int_equal(picky_removes, 0);
	assert_int_equal(fake_dev_free(ib), 0);
	assert_int_equal(picky_removes, 1);
	ib_unregister_client(&picky);
	assert_int_equal(picky_removes, 1);
}

/* ---- bad input ---------------------------------------------------------- */

static void bad_input(void **state)
{
	struct ib_client noname = { .name = NULL };
	struct ib_client never = { .name = "never" };
	struct ib_client many[65];
	struct fake_dev *d;
	int i;

	clients_init();
	assert_int_equal(ib_register_client(NULL), -EINVAL);
	assert_int_equal(ib_register_client(&noname), -EINVAL);
	assert_int_equal(ib_register_client(&cl_a), 0);
	assert_int_equal(ib_register_client(&cl_a), -EEXIST);
	ib_unregister_client(NULL);
	ib_unregister_client(&never); /* a warning, nothing else */
	d = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);
	assert_null(ib_get_client_data(NULL, &cl_a));
	assert_null(ib_get_client_data(&d->ibdev, NULL));
	assert_null(ib_get_client_data(&d->ibdev, &never));
	never.client_id = 1000000; /* garbage in a client never registered */
	assert_null(ib_get_client_data(&d->ibdev, &never));
	ib_set_client_data(NULL, &cl_a, d);
	ib_set_client_data(&d->ibdev, NULL, d);
	ib_set_client_data(&d->ibdev, &never, d);
	assert_ptr_equal(ib_get_client_data(&d->ibdev, &cl_a),
			 tag(&cl_a, &d->ibdev));
	assert_int_equal(rdmarw__unregister_device(NULL), -EINVAL);
	/* 64 clients at once, not 65; a freed slot is taken again */
	memset(many, 0, sizeof(many));
	for (i = 0; i < 63; i++) {
		many[i].name = "many";
		assert_int_equal(ib_register_client(&many[i]), 0);
	}
	many[63].name = "many";
	assert_int_equal(ib_register_client(&many[63]), -ENOSPC);
	ib_unregister_client(&many[5]);
	assert_int_equal(ib_register_client(&many[63]), 0);
	ib_unregister_client(&many[63]);
	for (i = 0; i < 63; i++)
		if (i != 5)
			ib_unregister_client(&many[i]);
	ib_unregister_client(&cl_a);
	ib_unregister_client(&cl_a); /* twice: a warning */
	assert_int_equal(fake_dev_free(d), 0);
}

/* ---- a remove that unregisters its own device --------------------------- */

static int self_ret = 1;

static void self_remove(struct ib_device *dev, void *data)
{
	self_ret = rdmarw__unregister_device(dev);
}

static struct ib_client selfish = { .name = "selfish", .remove = self_remove };

static void remove_unregistering_its_device(void **state)
{
	struct fake_dev *d = fake_dev_new("cli%d", RDMA_PROTOCOL_IB);

	assert_int_equal(ib_register_client(&selfish), 0);
	assert_int_equal(fake_dev_free(d), 0);
	assert_int_equal(self_ret, -EBUSY); /* refused, no deadlock */
	ib_unregister_client(&selfish);
}

/* ---- clients and devices on several threads ----------------------------- */

#define RACE_CLIENTS 4
#define RACE_ROUNDS 200

/*
 * Per client and device slot: added and not yet removed.  A remove without
 * an add, a second add, or a callback after ib_unregister_client()
 * returned fails the test.
 */
static struct {
	pthread_mutex_t lock;
	struct ib_device *added[RACE_CLIENTS][4];
	bool closed[RACE_CLIENTS];
	int adds, removes;
	int errors;
} race = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct ib_client race_cl[RACE_CLIENTS];

static void race_fail(void)
{
	__atomic_add_fetch(&race.errors, 1, __ATOMIC_RELAXED);
}

static void race_note(struct ib_client *c, struct ib_device *dev, bool add)
{
	int i = (int)(c - race_cl), j, hit = -1;

	pthread_mutex_lock(&race.lock);
	if (race.closed[i])
		race_fail();
	for (j = 0; add && j < 4; j++)
		if (race.added[i][j] == dev)
			race_fail(); /* added twice */
	for (j = 0; j < 4 && hit < 0; j++)
		if (race.added[i][j] == (add ? NULL : dev))
			hit = j;
	if (hit < 0)
		race_fail();
	else
		race.added[i][hit] = add ? dev : NULL;
	if (add)
		race.adds++;
	else
		race.removes++;
	pthread_mutex_unlock(&race.lock);
}

#define RACE_OPS(n)                                                    \
	static int race_add_##n(struct ib_device *dev)                 \
	{                                                              \
		race_note(&race_cl[n], dev, true);                     \
		ib_set_client_data(dev, &race_cl[n], &race_cl[n]);     \
		return 0;                                              \
	}                                                              \
	static void race_remove_##n(struct ib_device *dev, void *data) \
	{                                                              \
		if (data != &race_cl[n])                               \
			race_fail();                                   \
		race_note(&race_cl[n], dev, false);                    \
	}

RACE_OPS(0)
RACE_OPS(1)
RACE_OPS(2)
RACE_OPS(3)

static int (*const race_adds[])(struct ib_device *) = { race_add_0, race_add_1,
							race_add_2,
							race_add_3 };
static void (*const race_removes[])(struct ib_device *,
				    void *) = { race_remove_0, race_remove_1,
						race_remove_2, race_remove_3 };

static void *client_churn(void *arg)
{
	int n = (int)(intptr_t)arg, r, j;

	for (r = 0; r < RACE_ROUNDS; r++) {
		pthread_mutex_lock(&race.lock);
		race.closed[n] = false;
		pthread_mutex_unlock(&race.lock);
		if (ib_register_client(&race_cl[n]))
			race_fail();
		ib_unregister_client(&race_cl[n]);
		pthread_mutex_lock(&race.lock);
		race.closed[n] = true; /* no callback of it from here on */
		for (j = 0; j < 4; j++)
			if (race.added[n][j])
				race_fail(); /* a device it was not removed from */
		pthread_mutex_unlock(&race.lock);
	}
	return NULL;
}

static void *device_churn(void *arg)
{
	struct fake_dev *d;
	int r;

	(void)arg;
	for (r = 0; r < RACE_ROUNDS; r++) {
		d = fake_dev_new("race%d", RDMA_PROTOCOL_IB);
		if (!d || fake_dev_free(d))
			race_fail();
	}
	return NULL;
}

static void clients_and_devices_race(void **state)
{
	pthread_t t[RACE_CLIENTS + 2];
	struct fake_dev *steady;
	int i;

	for (i = 0; i < RACE_CLIENTS; i++) {
		race_cl[i] = (struct ib_client){ .name = "race",
						 .add = race_adds[i],
						 .remove = race_removes[i] };
		race.closed[i] = true;
	}
	/* a device that lives throughout: every registration is told of it */
	steady = fake_dev_new("steady%d", RDMA_PROTOCOL_IB);
	assert_non_null(steady);
	for (i = 0; i < RACE_CLIENTS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, client_churn,
						(void *)(intptr_t)i),
				 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[RACE_CLIENTS + i], NULL,
						device_churn, NULL),
				 0);
	for (i = 0; i < RACE_CLIENTS + 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(fake_dev_free(steady), 0);
	assert_int_equal(__atomic_load_n(&race.errors, __ATOMIC_RELAXED), 0);
	assert_int_equal(race.adds, race.removes);
	assert_true(race.adds >= RACE_CLIENTS * RACE_ROUNDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_in_order_remove_in_reverse),
		cmocka_unit_test(devices_before_and_after),
		cmocka_unit_test(data_per_device_and_client),
		cmocka_unit_test(remove_frees_the_clients_objects),
		cmocka_unit_test(a_client_declines_a_device),
		cmocka_unit_test(bad_input),
		cmocka_unit_test(remove_unregistering_its_device),
		cmocka_unit_test(clients_and_devices_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

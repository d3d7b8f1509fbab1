// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device registry (names with %d, -EEXIST, lookup, foreach, refusal to
 * unregister a device in use), the port queries, and the name tables of
 * completion statuses and send opcodes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "helpers/fake_provider.h"

static void names_with_a_number(void **state)
{
	struct fake_dev *a = fake_dev_new("reg%d", RDMA_PROTOCOL_IB);
	struct fake_dev *b = fake_dev_new("reg%d", RDMA_PROTOCOL_IB);
	struct fake_dev *c = fake_dev_new("x%d-y", RDMA_PROTOCOL_IB);
	struct fake_dev *d;

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_string_equal(a->ibdev.name, "reg0");
	assert_string_equal(b->ibdev.name, "reg1");
	assert_string_equal(c->ibdev.name, "x0-y");
	/* The first free number is reused. */
	assert_int_equal(fake_dev_free(a), 0);
	d = fake_dev_new("reg%d", RDMA_PROTOCOL_IB);
	assert_non_null(d);
	assert_string_equal(d->ibdev.name, "reg0");
	assert_ptr_equal(ib_device_get_by_name("reg0"), &d->ibdev);
	assert_ptr_equal(ib_device_get_by_name("reg1"), &b->ibdev);
	assert_null(ib_device_get_by_name("reg2"));
	assert_null(ib_device_get_by_name(NULL));
	assert_int_equal(fake_dev_free(b), 0);
	assert_int_equal(fake_dev_free(c), 0);
	assert_int_equal(fake_dev_free(d), 0);
	assert_null(ib_device_get_by_name("reg0"));
}

static void fixed_names_and_bad_names(void **state)
{
	struct fake_dev *a = fake_dev_new("fixed", RDMA_PROTOCOL_IB);
	struct ib_device *dev;
	char longname[IB_DEVICE_NAME_MAX + 1];

	assert_non_null(a);
	dev = rdmarw__alloc_device(sizeof(struct fake_dev), a->ibdev.ops);
	assert_non_null(dev);
	assert_int_equal(rdmarw__register_device(dev, "fixed"), -EEXIST);
	assert_int_equal(rdmarw__register_device(dev, ""), -EINVAL);
	assert_int_equal(rdmarw__register_device(dev, NULL), -EINVAL);
	assert_int_equal(rdmarw__register_device(NULL, "x"), -EINVAL);
	assert_int_equal(rdmarw__register_device(dev, "a%s"), -EINVAL);
	assert_int_equal(rdmarw__register_device(dev, "a%d%d"), -EINVAL);
	assert_int_equal(rdmarw__register_device(dev, "a%"), -EINVAL);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(rdmarw__register_device(dev, longname), -EINVAL);
	assert_int_equal(rdmarw__register_device(dev, "fixed2"), 0);
	assert_ptr_equal(ib_device_get_by_name("fixed2"), dev);
	assert_int_equal(rdmarw__unregister_device(dev), 0);
	assert_null(ib_device_get_by_name("fixed2"));
	assert_int_equal(rdmarw__unregister_device(NULL), -EINVAL);
	rdmarw__free_device(dev);
	assert_null(rdmarw__alloc_device(sizeof(struct ib_device) - 1,
					 a->ibdev.ops));
	assert_null(rdmarw__alloc_device(sizeof(struct fake_dev), NULL));
	assert_int_equal(fake_dev_free(a), 0);
}

struct walk {
	const char *seen[8];
	int n;
	int stop_at;
};

static int visit(struct ib_device *dev, void *arg)
{
	struct walk *w = arg;

	w->seen[w->n++] = dev->name;
	return w->n == w->stop_at ? 42 : 0;
}

static void foreach_in_registration_order(void **state)
{
	struct fake_dev *d[3];
	struct walk w = { .stop_at = -1 };
	int i;

	for (i = 0; i < 3; i++)
		assert_non_null(
			d[i] = fake_dev_new("walk%d", RDMA_PROTOCOL_IB));
	assert_int_equal(ib_device_foreach(visit, &w), 0);
	assert_int_equal(w.n, 3);
	for (i = 0; i < 3; i++)
		assert_ptr_equal(w.seen[i], d[i]->ibdev.name);

	w = (struct walk){ .stop_at = 2 };
	assert_int_equal(ib_device_foreach(visit, &w), 42);
	assert_int_equal(w.n, 2);
	assert_int_equal(ib_device_foreach(NULL, &w), -EINVAL);

	for (i = 0; i < 3; i++)
		assert_int_equal(fake_dev_free(d[i]), 0);
	w = (struct walk){ .stop_at = -1 };
	assert_int_equal(ib_device_foreach(visit, &w), 0);
	assert_int_equal(w.n, 0);
}

/* PDs and CQs hold the device: it cannot leave the registry under them. */
static void unregister_refused_while_in_use(void **state)
{
	struct fake_dev *fd = fake_dev_new("busy%d", RDMA_PROTOCOL_IB);
	struct ib_pd *pd;
	struct ib_cq *cq;

	assert_non_null(fd);
	pd = ib_alloc_pd(&fd->ibdev, 0);
	assert_false(IS_ERR(pd));
	assert_int_equal(fake_dev_free(fd), -EBUSY);
	assert_ptr_equal(ib_device_get_by_name("busy0"), &fd->ibdev);
	assert_int_equal(ib_dealloc_pd(pd), 0);
	cq = ib_alloc_cq(&fd->ibdev, NULL, 8, 0, IB_POLL_DIRECT);
	assert_false(IS_ERR(cq));
	assert_int_equal(fake_dev_free(fd), -EBUSY);
	assert_int_equal(ib_free_cq(cq), 0);
	assert_int_equal(fake_dev_free(fd), 0);
}

static void port_queries(void **state)
{
	struct fake_dev *ib = fake_dev_new("pib", RDMA_PROTOCOL_IB);
	struct fake_dev *roce = fake_dev_new("proce", RDMA_PROTOCOL_ROCE);
	struct fake_dev *iw = fake_dev_new("piw", RDMA_PROTOCOL_IWARP);

	assert_non_null(ib);
	assert_non_null(roce);
	assert_non_null(iw);
	assert_true(rdma_protocol_ib(&ib->ibdev, 1));
	assert_false(rdma_protocol_roce(&ib->ibdev, 1));
	assert_false(rdma_protocol_iwarp(&ib->ibdev, 1));
	assert_true(rdma_protocol_roce(&roce->ibdev, 1));
	assert_false(rdma_protocol_ib(&roce->ibdev, 1));
	assert_true(rdma_protocol_iwarp(&iw->ibdev, 1));
	assert_true(rdma_cap_read_inv(&iw->ibdev, 1));
	assert_false(rdma_cap_read_inv(&roce->ibdev, 1));
	assert_false(rdma_cap_read_inv(&ib->ibdev, 1));

	/* Ports count from 1; a bad port answers false. */
	assert_true(rdma_is_port_valid(&ib->ibdev, 1));
	assert_false(rdma_is_port_valid(&ib->ibdev, 0));
	assert_false(rdma_is_port_valid(&ib->ibdev, 2));
	assert_false(rdma_is_port_valid(NULL, 1));
	assert_false(rdma_protocol_iwarp(&iw->ibdev, 2));
	assert_false(rdma_protocol_ib(&ib->ibdev, 0));
	assert_false(rdma_protocol_ib(NULL, 1));
	ib->ibdev.phys_port_cnt = 2;
	ib->ibdev.port_protocol[1] = RDMA_PROTOCOL_IWARP;
	assert_true(rdma_protocol_iwarp(&ib->ibdev, 2));
	assert_false(rdma_is_port_valid(&ib->ibdev, 3));

	assert_true(ib_uses_virt_dma(&ib->ibdev));
	assert_false(ib_uses_virt_dma(NULL));
	assert_int_equal(fake_dev_free(ib), 0);
	assert_int_equal(fake_dev_free(roce), 0);
	assert_int_equal(fake_dev_free(iw), 0);
}

static void wc_status_names(void **state)
{
	/* The kernel's wc_statuses[] texts (drivers/infiniband/core/verbs.c) */
	static const char *const want[] = {
		"success",
		"local length error",
		"local QP operation error",
		"local EE context operation error",
		"local protection error",
		"WR flushed",
		"memory bind operation error",
		"bad response error",
		"local access error",
		"remote invalid request error",
		"remote access error",
		"remote operation error",
		"transport retry counter exceeded",
		"RNR retry counter exceeded",
		"local RDD violation error",
		"remote invalid RD request",
		"operation aborted",
		"invalid EE context number",
		"invalid EE context state",
		"fatal error",
		"response timeout error",
		"general error",
	};
	int i;

	/* The kernel's values: the position in the list is the status. */
	assert_int_equal(IB_WC_REM_ACCESS_ERR, 10);
	assert_int_equal(IB_WC_GENERAL_ERR, 21);
	for (i = 0; i < 22; i++)
		assert_string_equal(ib_wc_status_msg((enum ib_wc_status)i),
				    want[i]);
	assert_string_equal(ib_wc_status_msg(IB_WC_WR_FLUSH_ERR), "WR flushed");
	assert_string_equal(ib_wc_status_msg((enum ib_wc_status)22),
			    "unrecognized status");
	assert_string_equal(ib_wc_status_msg((enum ib_wc_status) - 1),
			    "unrecognized status");
}

static void event_names(void **state)
{
	/* The kernel's ib_events[] texts, in enum ib_event_type order */
	static const char *const want[] = {
		"CQ error",
		"QP fatal error",
		"QP request error",
		"QP access error",
		"communication established",
		"send queue drained",
		"path migration successful",
		"path migration error",
		"device fatal error",
		"port active",
		"port error",
		"LID change",
		"P_key change",
		"SM change",
		"SRQ error",
		"SRQ limit reached",
		"last WQE reached",
		"client reregister",
		"GID changed",
	};
	int i;

	/* the kernel's values */
	assert_int_equal(IB_EVENT_SRQ_LIMIT_REACHED, 15);
	assert_int_equal(IB_EVENT_GID_CHANGE, 18);
	assert_int_equal(IB_EVENT_WQ_FATAL, 19);
	for (i = 0; i < 19; i++)
		assert_string_equal(ib_event_msg((enum ib_event_type)i),
				    want[i]);
	/* the kernel has no text for IB_EVENT_WQ_FATAL */
	assert_string_equal(ib_event_msg(IB_EVENT_WQ_FATAL),
			    "unrecognized event");
	assert_string_equal(ib_event_msg((enum ib_event_type)20),
			    "unrecognized event");
	assert_string_equal(ib_event_msg((enum ib_event_type) - 1),
			    "unrecognized event");
}

static void wr_opcode_names(void **state)
{
	static const struct {
		int op;
		const char *name;
	} want[] = {
		{ 0, "IB_WR_RDMA_WRITE" },
		{ 1, "IB_WR_RDMA_WRITE_WITH_IMM" },
		{ 2, "IB_WR_SEND" },
		{ 3, "IB_WR_SEND_WITH_IMM" },
		{ 4, "IB_WR_RDMA_READ" },
		{ 5, "IB_WR_ATOMIC_CMP_AND_SWP" },
		{ 6, "IB_WR_ATOMIC_FETCH_AND_ADD" },
		{ 7, "IB_WR_LOCAL_INV" },
		{ 8, "IB_WR_BIND_MW" },
		{ 9, "IB_WR_SEND_WITH_INV" },
		{ 10, "IB_WR_LSO" },
		{ 11, "IB_WR_RDMA_READ_WITH_INV" },
		{ 12, "IB_WR_MASKED_ATOMIC_CMP_AND_SWP" },
		{ 13, "IB_WR_MASKED_ATOMIC_FETCH_AND_ADD" },
		{ 14, "IB_WR_FLUSH" },
		{ 15, "IB_WR_ATOMIC_WRITE" },
		{ 0x20, "IB_WR_REG_MR" },
		{ 0x21, "IB_WR_REG_MR_INTEGRITY" },
		{ 16, "UNKNOWN" },
		{ 0x1f, "UNKNOWN" },
		{ 0x22, "UNKNOWN" },
		{ -1, "UNKNOWN" },
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(
			ib_wr_opcode_str((enum ib_wr_opcode)want[i].op),
			want[i].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_with_a_number),
		cmocka_unit_test(fixed_names_and_bad_names),
		cmocka_unit_test(foreach_in_registration_order),
		cmocka_unit_test(unregister_refused_while_in_use),
		cmocka_unit_test(port_queries),
		cmocka_unit_test(wc_status_names),
		cmocka_unit_test(event_names),
		cmocka_unit_test(wr_opcode_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

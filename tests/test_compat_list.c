// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * <rdmarw/list.h> and <rdmarw/kernel.h>: every list operation against the
 * order it must leave, iteration in both directions and with removal, the
 * splices, and the helper macros (single evaluation of min/max arguments).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmarw/compat.h>
#include <rdmarw/kernel.h>
#include <rdmarw/list.h>

struct item {
	int v;
	struct list_head node;
};

/* Check @head holds exactly @vals in order, walking both ways. */
static void expect(struct list_head *head, const int *vals, int n)
{
	struct item *it;
	int i = 0;

	list_for_each_entry(it, head, node)
	{
		assert_true(i < n);
		assert_int_equal(it->v, vals[i]);
		i++;
	}
	assert_int_equal(i, n);
	list_for_each_entry_reverse(it, head, node)
	{
		i--;
		assert_int_equal(it->v, vals[i]);
	}
	assert_int_equal(i, 0);
	assert_int_equal(list_empty(head), n == 0);
	assert_int_equal(list_is_singular(head), n == 1);
}

static void add_and_add_tail_order(void **state)
{
	struct item it[4] = { { 0 }, { 1 }, { 2 }, { 3 } };
	LIST_HEAD(h);
	const int want[] = { 1, 0, 2, 3 };

	(void)state;
	expect(&h, NULL, 0);
	list_add(&it[0].node, &h);
	list_add(&it[1].node, &h);
	list_add_tail(&it[2].node, &h);
	list_add_tail(&it[3].node, &h);
	expect(&h, want, 4);
	assert_ptr_equal(list_first_entry(&h, struct item, node), &it[1]);
	assert_ptr_equal(list_last_entry(&h, struct item, node), &it[3]);
	assert_ptr_equal(list_next_entry(&it[1], node), &it[0]);
	assert_ptr_equal(list_prev_entry(&it[2], node), &it[0]);
	assert_true(list_is_last(&it[3].node, &h));
	assert_false(list_is_last(&it[2].node, &h));
}

static void del_and_del_init(void **state)
{
	struct item it[3] = { { 0 }, { 1 }, { 2 } };
	struct list_head h;
	const int w1[] = { 0, 2 }, w2[] = { 2 };

	(void)state;
	INIT_LIST_HEAD(&h);
	for (int i = 0; i < 3; i++)
		list_add_tail(&it[i].node, &h);
	list_del(&it[1].node);
	expect(&h, w1, 2);
	/* list_del leaves the node unusable: poisoned, as in the kernel. */
	assert_null(it[1].node.next);
	assert_null(it[1].node.prev);
	list_del_init(&it[0].node);
	assert_true(list_empty(&it[0].node));
	expect(&h, w2, 1);
	list_del_init(&it[2].node);
	expect(&h, NULL, 0);
	assert_null(list_first_entry_or_null(&h, struct item, node));
	list_add(&it[2].node, &h);
	assert_ptr_equal(list_first_entry_or_null(&h, struct item, node),
			 &it[2]);
}

static void move_between_lists(void **state)
{
	struct item it[4] = { { 0 }, { 1 }, { 2 }, { 3 } };
	LIST_HEAD(a);
	LIST_HEAD(b);
	const int wa[] = { 1 }, wb[] = { 2, 0, 3 };

	(void)state;
	for (int i = 0; i < 4; i++)
		list_add_tail(&it[i].node, &a);
	list_move_tail(&it[0].node, &b);
	list_move(&it[2].node, &b);
	list_move_tail(&it[3].node, &b);
	expect(&a, wa, 1);
	expect(&b, wb, 3);
}

static void splices(void **state)
{
	struct item it[6] = { { 0 }, { 1 }, { 2 }, { 3 }, { 4 }, { 5 } };
	LIST_HEAD(a);
	LIST_HEAD(b);
	LIST_HEAD(e);
	const int w1[] = { 3, 4, 0, 1, 2 };
	const int w2[] = { 3, 4, 0, 1, 2, 5 };

	(void)state;
	for (int i = 0; i < 3; i++)
		list_add_tail(&it[i].node, &a);
	list_add_tail(&it[3].node, &b);
	list_add_tail(&it[4].node, &b);
	list_splice_init(&b, &a);
	assert_true(list_empty(&b));
	expect(&a, w1, 5);
	list_splice(&e, &a); /* empty: nothing changes */
	list_splice_tail_init(&e, &a);
	expect(&a, w1, 5);
	list_add_tail(&it[5].node, &b);
	list_splice_tail(&b, &a);
	expect(&a, w2, 6);
	/* list_splice leaves the source head stale, splice_init empties it */
	INIT_LIST_HEAD(&b);
	list_splice_init(&a, &b);
	assert_true(list_empty(&a));
	expect(&b, w2, 6);
	list_splice(&b, &a);
	expect(&a, w2, 6);
}

static void safe_iteration_removes(void **state)
{
	struct item it[5] = { { 0 }, { 1 }, { 2 }, { 3 }, { 4 } };
	struct item *p, *n;
	struct list_head *pos, *nx;
	LIST_HEAD(h);
	const int odd[] = { 1, 3 };
	int count = 0;

	(void)state;
	for (int i = 0; i < 5; i++)
		list_add_tail(&it[i].node, &h);
	list_for_each_entry_safe(p, n, &h, node)
		if (p->v % 2 == 0)
			list_del(&p->node);
	expect(&h, odd, 2);
	list_for_each(pos, &h) count++;
	assert_int_equal(count, 2);
	list_for_each_safe(pos, nx, &h) list_del_init(pos);
	expect(&h, NULL, 0);
}

static int evaluations;

static int once(int v)
{
	evaluations++;
	return v;
}

static void helper_macros(void **state)
{
	int arr[7];
	unsigned int u = 3;
	int x = 0;

	(void)state;
	assert_int_equal(ARRAY_SIZE(arr), 7);
	assert_int_equal(DIV_ROUND_UP(9, 4), 3);
	assert_int_equal(DIV_ROUND_UP(8, 4), 2);
	evaluations = 0;
	assert_int_equal(min(once(2), once(5)), 2);
	assert_int_equal(max(once(2), once(5)), 5);
	assert_int_equal(evaluations, 4);
	/* min_t converts before comparing: -1 as unsigned is the largest. */
	assert_int_equal(min_t(unsigned int, -1, u), 3);
	assert_int_equal(max_t(int, -1, (int)u), 3);
	assert_int_equal(clamp(10, 1, 4), 4);
	assert_int_equal(clamp(-3, 1, 4), 1);
	assert_int_equal(clamp(2, 1, 4), 2);
	assert_true(likely(1));
	assert_false(unlikely(0));
	WRITE_ONCE(x, 42);
	assert_int_equal(READ_ONCE(x), 42);
	assert_int_equal(msecs_to_jiffies(1500), 1500);
	assert_int_equal(jiffies_to_msecs(HZ), 1000);
	assert_ptr_equal(container_of(&arr[0], struct item, v),
			 (struct item *)(void *)arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_and_add_tail_order),
		cmocka_unit_test(del_and_del_init),
		cmocka_unit_test(move_between_lists),
		cmocka_unit_test(splices),
		cmocka_unit_test(safe_iteration_removes),
		cmocka_unit_test(helper_macros),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DMA mapping on a virtual-DMA device: identity addresses, no merging, and
 * the live-mapping counter (rdmarw_dma_mapped(dev)) back to 0 after every unmap.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>

#include "helpers/fake_provider.h"

static char mem[4 * 4096] __attribute__((aligned(4096)));

static int setup(void **state)
{
	struct fake_dev *fd = fake_dev_new("dma%d", RDMA_PROTOCOL_ROCE);

	*state = fd;
	return fd ? 0 : -1;
}

static int teardown(void **state)
{
	struct fake_dev *fd = *state;

	assert_int_equal(rdmarw_dma_mapped(&fd->ibdev), 0);
	return fake_dev_free(fd);
}

static void map_sg_is_identity_and_never_merges(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	struct scatterlist sg[4];
	int i;

	sg_init_table(sg, 4);
	/* Four contiguous pages: a real IOMMU might merge them; we do not. */
	for (i = 0; i < 4; i++)
		sg_set_buf(&sg[i], mem + i * 4096, 4096);
	assert_int_equal(ib_dma_map_sg(dev, sg, 4, DMA_TO_DEVICE), 4);
	assert_int_equal(rdmarw_dma_mapped(dev), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(sg_dma_address(&sg[i]),
				 (dma_addr_t)(uintptr_t)(mem + i * 4096));
		assert_int_equal(sg_dma_len(&sg[i]), 4096);
	}
	/* A second mapping of part of the list counts separately. */
	assert_int_equal(ib_dma_map_sg(dev, sg, 2, DMA_BIDIRECTIONAL), 2);
	assert_int_equal(rdmarw_dma_mapped(dev), 6);
	ib_dma_unmap_sg(dev, sg, 2, DMA_BIDIRECTIONAL);
	ib_dma_unmap_sg(dev, sg, 4, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
}

/*
 * The count is kept in per-thread stripes: entries mapped on threads and
 * unmapped on another still sum to the truth, and threads counting at once
 * lose nothing.
 */
#define STRIPE_THREADS (RDMARW_DMA_STRIPES + 3) /* some share a stripe */
#define STRIPE_ROUNDS 2000

struct stripe_arg {
	struct ib_device *dev;
	struct scatterlist sg[2];
	bool churn;
};

static void *stripe_thread(void *p)
{
	struct stripe_arg *a = p;
	int i;

	if (!a->churn)
		return (void *)(long)ib_dma_map_sg(a->dev, a->sg, 2,
						   DMA_TO_DEVICE);
	for (i = 0; i < STRIPE_ROUNDS; i++) {
		if (ib_dma_map_sg(a->dev, a->sg, 2, DMA_TO_DEVICE) != 2)
			return (void *)-1L;
		ib_dma_unmap_sg(a->dev, a->sg, 2, DMA_TO_DEVICE);
	}
	return NULL;
}

static void count_sums_over_thread_stripes(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	static struct stripe_arg a[STRIPE_THREADS];
	pthread_t t[STRIPE_THREADS];
	void *ret;
	int i;

	for (i = 0; i < STRIPE_THREADS; i++) {
		a[i].dev = dev;
		sg_init_table(a[i].sg, 2);
		sg_set_buf(&a[i].sg[0], mem, 512);
		sg_set_buf(&a[i].sg[1], mem + 4096, 512);
	}
	/* Mapped on other threads, counted on theirs. */
	for (i = 0; i < STRIPE_THREADS; i++) {
		a[i].churn = false;
		assert_int_equal(
			pthread_create(&t[i], NULL, stripe_thread, &a[i]), 0);
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_int_equal((long)ret, 2);
	}
	assert_int_equal(rdmarw_dma_mapped(dev), 2 * STRIPE_THREADS);
	/* Unmapped here: this thread's stripe goes negative, the sum to 0. */
	for (i = 0; i < STRIPE_THREADS; i++)
		ib_dma_unmap_sg(dev, a[i].sg, 2, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
	/* Many threads at once, some on one stripe: nothing lost. */
	for (i = 0; i < STRIPE_THREADS; i++) {
		a[i].churn = true;
		assert_int_equal(
			pthread_create(&t[i], NULL, stripe_thread, &a[i]), 0);
	}
	for (i = 0; i < STRIPE_THREADS; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
	assert_int_equal(rdmarw_dma_mapped(NULL), 0);
}

static void map_sg_follows_chains_and_offsets(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	struct scatterlist a[2], b[1];

	sg_init_table(a, 2);
	sg_init_table(b, 1);
	sg_set_buf(&a[0], mem + 10, 100);
	sg_set_page(&b[0], virt_to_page(mem), 50, 4096 + 7);
	sg_chain(a, 2, b);
	assert_int_equal(ib_dma_map_sg(dev, a, 2, DMA_FROM_DEVICE), 2);
	assert_int_equal(sg_dma_address(&a[0]), (uintptr_t)(mem + 10));
	assert_int_equal(sg_dma_address(&b[0]), (uintptr_t)(mem + 4096 + 7));
	assert_int_equal(sg_dma_len(&b[0]), 50);
	ib_dma_unmap_sg(dev, a, 2, DMA_FROM_DEVICE);
}

static void map_sg_errors_map_nothing(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	struct scatterlist sg[2];

	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], mem, 10);
	sg_set_buf(&sg[1], mem + 10, 10);
	assert_int_equal(ib_dma_map_sg(NULL, sg, 2, DMA_TO_DEVICE), 0);
	assert_int_equal(ib_dma_map_sg(dev, NULL, 2, DMA_TO_DEVICE), 0);
	assert_int_equal(ib_dma_map_sg(dev, sg, 0, DMA_TO_DEVICE), 0);
	assert_int_equal(ib_dma_map_sg(dev, sg, -1, DMA_TO_DEVICE), 0);
	assert_int_equal(ib_dma_map_sg(dev, sg, 2, DMA_NONE), 0);
	assert_int_equal(ib_dma_map_sg(dev, sg, 2, 7), 0);
	assert_int_equal(ib_dma_map_sg(dev, sg, 3, DMA_TO_DEVICE), 0);
	/* An entry whose range wraps around the address space. */
	sg[1].page_link = (~0UL & PAGE_MASK) | SG_END;
	sg[1].offset = 0xff0;
	sg[1].length = 0x20;
	assert_int_equal(ib_dma_map_sg(dev, sg, 2, DMA_TO_DEVICE), 0);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
	/* Unmapping bad arguments changes nothing. */
	ib_dma_unmap_sg(NULL, sg, 2, DMA_TO_DEVICE);
	ib_dma_unmap_sg(dev, NULL, 2, DMA_TO_DEVICE);
	ib_dma_unmap_sg(dev, sg, 0, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
}

static void sgtable_mapping(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	struct scatterlist *sg;
	struct sg_table t;
	unsigned int i;

	assert_int_equal(sg_alloc_table(&t, 200, GFP_KERNEL), 0);
	for_each_sgtable_sg(&t, sg, i)
		sg_set_buf(sg, mem + i, 1);
	t.nents = 0;
	assert_int_equal(ib_dma_map_sgtable_attrs(dev, &t, DMA_TO_DEVICE, 0),
			 0);
	assert_int_equal(t.nents, 200);
	assert_int_equal(rdmarw_dma_mapped(dev), 200);
	for_each_sgtable_dma_sg(&t, sg, i)
		assert_int_equal(sg_dma_address(sg), (uintptr_t)(mem + i));
	ib_dma_unmap_sgtable_attrs(dev, &t, DMA_TO_DEVICE, 0);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
	assert_int_equal(ib_dma_map_sgtable_attrs(dev, &t, DMA_NONE, 0),
			 -EINVAL);
	assert_int_equal(ib_dma_map_sgtable_attrs(dev, NULL, DMA_TO_DEVICE, 0),
			 -EINVAL);
	ib_dma_unmap_sgtable_attrs(dev, NULL, DMA_TO_DEVICE, 0);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
	sg_free_table(&t);
}

static void single_and_bvec(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	struct bio_vec bv;
	u64 a, b;

	a = ib_dma_map_single(dev, mem + 5, 100, DMA_TO_DEVICE);
	assert_false(ib_dma_mapping_error(dev, a));
	assert_int_equal(a, (uintptr_t)(mem + 5));
	bvec_set_virt(&bv, mem + 4096 + 3, 20);
	b = ib_dma_map_bvec(dev, &bv, DMA_FROM_DEVICE);
	assert_int_equal(b, (uintptr_t)(mem + 4096 + 3));
	assert_int_equal(rdmarw_dma_mapped(dev), 2);
	ib_dma_unmap_bvec(dev, b, 20, DMA_FROM_DEVICE);
	ib_dma_unmap_single(dev, a, 100, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);

	assert_true(ib_dma_mapping_error(
		dev, ib_dma_map_single(NULL, mem, 1, DMA_TO_DEVICE)));
	assert_true(ib_dma_mapping_error(
		dev, ib_dma_map_single(dev, NULL, 1, DMA_TO_DEVICE)));
	assert_true(ib_dma_mapping_error(
		dev, ib_dma_map_single(dev, mem, 1, DMA_NONE)));
	assert_true(ib_dma_mapping_error(
		dev, ib_dma_map_single(dev, (void *)(uintptr_t)-16, 32,
				       DMA_TO_DEVICE)));
	assert_true(ib_dma_mapping_error(
		dev, ib_dma_map_bvec(dev, NULL, DMA_TO_DEVICE)));
	/* Unmapping the error address does not count. */
	ib_dma_unmap_single(dev, DMA_MAPPING_ERROR, 1, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
}

/* A virtual-DMA device has no IOMMU: the IOVA API says so. */
static void no_iova_on_virtual_dma(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	struct dma_iova_state st = { .addr = 1, .size = 1 };

	assert_true(ib_uses_virt_dma(dev));
	assert_false(ib_dma_iova_try_alloc(dev, &st, (uintptr_t)mem, 4096));
	assert_false(dma_use_iova(&st));
	assert_int_equal(st.addr, 0);
	assert_false(ib_dma_iova_try_alloc(dev, NULL, (uintptr_t)mem, 4096));
	assert_int_equal(ib_dma_iova_link(dev, &st, (uintptr_t)mem, 0, 4096,
					  DMA_TO_DEVICE),
			 -EINVAL);
	ib_dma_iova_destroy(dev, &st, 0, DMA_TO_DEVICE);
	assert_int_equal(rdmarw_dma_mapped(dev), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			map_sg_is_identity_and_never_merges, setup, teardown),
		cmocka_unit_test_setup_teardown(
			map_sg_follows_chains_and_offsets, setup, teardown),
		cmocka_unit_test_setup_teardown(map_sg_errors_map_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(sgtable_mapping, setup,
						teardown),
		cmocka_unit_test_setup_teardown(single_and_bvec, setup,
						teardown),
		cmocka_unit_test_setup_teardown(count_sums_over_thread_stripes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(no_iova_on_virtual_dma, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_dma_sync_single_for_cpu() and _for_device(): accepted for a live
 * single mapping (no copy: the bytes the CPU sees are the buffer's), and
 * refused with -EINVAL for what no mapping can be.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "helpers/fake_provider.h"

static char buf[8192] __attribute__((aligned(4096)));

static int setup(void **state)
{
	struct fake_dev *fd = fake_dev_new("sync%d", RDMA_PROTOCOL_ROCE);

	*state = fd;
	return fd ? 0 : -1;
}

static int teardown(void **state)
{
	struct fake_dev *fd = *state;

	assert_int_equal(rdmarw_dma_mapped(&fd->ibdev), 0);
	return fake_dev_free(fd);
}

static void sync_live_mapping(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	u64 addr = ib_dma_map_single(dev, buf, sizeof(buf), DMA_BIDIRECTIONAL);

	assert_false(ib_dma_mapping_error(dev, addr));
	/* the "device" writes through the DMA address... */
	memset((void *)(uintptr_t)addr, 0x3c, sizeof(buf));
	assert_int_equal(ib_dma_sync_single_for_cpu(dev, addr, sizeof(buf),
						    DMA_BIDIRECTIONAL),
			 0);
	/* ...and the CPU sees it without a copy */
	assert_int_equal((unsigned char)buf[0], 0x3c);
	assert_int_equal((unsigned char)buf[sizeof(buf) - 1], 0x3c);
	buf[100] = 0x11;
	/* a part of the mapping, for the device */
	assert_int_equal(ib_dma_sync_single_for_device(dev, addr + 64, 128,
						       DMA_TO_DEVICE),
			 0);
	assert_int_equal(((unsigned char *)(uintptr_t)addr)[100], 0x11);
	assert_int_equal(
		ib_dma_sync_single_for_cpu(dev, addr, 1, DMA_FROM_DEVICE), 0);
	ib_dma_unmap_single(dev, addr, sizeof(buf), DMA_BIDIRECTIONAL);
}

static void sync_refusals(void **state)
{
	struct ib_device *dev = &((struct fake_dev *)*state)->ibdev;
	u64 addr;

	/* no live mapping on the device */
	assert_int_equal(ib_dma_sync_single_for_cpu(dev, (uintptr_t)buf, 16,
						    DMA_FROM_DEVICE),
			 -EINVAL);
	assert_int_equal(ib_dma_sync_single_for_device(dev, (uintptr_t)buf, 16,
						       DMA_TO_DEVICE),
			 -EINVAL);
	addr = ib_dma_map_single(dev, buf, 64, DMA_TO_DEVICE);
	assert_false(ib_dma_mapping_error(dev, addr));
	/* the error address, 0, a wrapping range, size 0, a bad direction,
	 * no device */
	assert_int_equal(ib_dma_sync_single_for_cpu(dev, DMA_MAPPING_ERROR, 1,
						    DMA_FROM_DEVICE),
			 -EINVAL);
	assert_int_equal(
		ib_dma_sync_single_for_device(dev, 0, 1, DMA_TO_DEVICE),
		-EINVAL);
	assert_int_equal(
		ib_dma_sync_single_for_cpu(dev, ~0ULL - 8, 64, DMA_FROM_DEVICE),
		-EINVAL);
	assert_int_equal(
		ib_dma_sync_single_for_cpu(dev, addr, 0, DMA_FROM_DEVICE),
		-EINVAL);
	assert_int_equal(ib_dma_sync_single_for_device(
				 dev, addr, 64, (enum dma_data_direction)7),
			 -EINVAL);
	assert_int_equal(
		ib_dma_sync_single_for_device(NULL, addr, 64, DMA_TO_DEVICE),
		-EINVAL);
	assert_int_equal(
		ib_dma_sync_single_for_device(dev, addr, 64, DMA_TO_DEVICE), 0);
	ib_dma_unmap_single(dev, addr, 64, DMA_TO_DEVICE);
	/* unmapped again: refused */
	assert_int_equal(
		ib_dma_sync_single_for_device(dev, addr, 64, DMA_TO_DEVICE),
		-EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(sync_live_mapping, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sync_refusals, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel vocabulary for user space: fixed-width types, error pointers, and
 * (from list.h) container_of and the doubly linked list, so that code
 * written against the kernel's RDMA headers compiles unchanged.  The other
 * kernel primitives have their own headers: kernel.h, atomic.h, kref.h,
 * spinlock.h, mutex.h, completion.h, workqueue.h.  Every name is guarded so that a
 * program which already defines it keeps its own.
 */
#ifndef RDMARW_COMPAT_H
#define RDMARW_COMPAT_H

#include <linux/types.h> /* __be16/32/64, as libibverbs also sees them */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmarw/list.h> /* list_head, container_of */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The kernel's short names.  The big-endian types come from the UAPI header
 * above, so that a program including both rdmarw and <infiniband/verbs.h>
 * sees one definition of each.  Define RDMARW_NO_KERNEL_TYPES to provide
 * u8 ... s64 and sector_t yourself.
 */
#ifndef RDMARW_NO_KERNEL_TYPES
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef uint64_t sector_t;
#endif

/* A DMA address as the device sees it (virtual, or an emulated IOVA). */
typedef uint64_t dma_addr_t;
/* A "physical" address: in user space, the CPU virtual address. */
typedef uint64_t phys_addr_t;

/**
 * enum dma_data_direction - direction of a DMA transfer
 * @DMA_BIDIRECTIONAL: both ways
 * @DMA_TO_DEVICE: memory is read by the device (RDMA WRITE source)
 * @DMA_FROM_DEVICE: memory is written by the device (RDMA READ sink)
 * @DMA_NONE: no transfer; invalid for mapping
 */
enum dma_data_direction {
	DMA_BIDIRECTIONAL = 0,
	DMA_TO_DEVICE = 1,
	DMA_FROM_DEVICE = 2,
	DMA_NONE = 3,
};

#ifndef PAGE_SHIFT
#define PAGE_SHIFT 12
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#endif
#ifndef PAGE_MASK
#define PAGE_MASK (~(PAGE_SIZE - 1))
#endif
#ifndef SZ_4K
#define SZ_4K 0x1000U
#endif

#ifndef MAX_ERRNO
#define MAX_ERRNO 4095
#endif

static inline void *ERR_PTR(long error)
{
	return (void *)error;
}

static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}

static inline bool IS_ERR(const void *ptr)
{
	return (uintptr_t)ptr >= (uintptr_t)-MAX_ERRNO;
}

static inline bool IS_ERR_OR_NULL(const void *ptr)
{
	return !ptr || IS_ERR(ptr);
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_COMPAT_H */

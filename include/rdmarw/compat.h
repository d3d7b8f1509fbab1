/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel vocabulary for user space: fixed-width types, error pointers,
 * container_of and a doubly linked list, so that code written against the
 * kernel's RDMA headers compiles unchanged.  Every name is guarded so that a
 * program which already defines it keeps its own.
 */
#ifndef RDMARW_COMPAT_H
#define RDMARW_COMPAT_H

#include <linux/types.h> /* __be16/32/64, as libibverbs also sees them */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))
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

/**
 * struct list_head - node of a circular doubly linked list (kernel shape)
 * @next: following node
 * @prev: preceding node
 */
struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)     \
	{                        \
		&(name), &(name) \
	}

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list;
	list->prev = list;
}

static inline void rdmarw_list_insert(struct list_head *entry,
				      struct list_head *prev,
				      struct list_head *next)
{
	next->prev = entry;
	entry->next = next;
	entry->prev = prev;
	prev->next = entry;
}

static inline void list_add(struct list_head *entry, struct list_head *head)
{
	rdmarw_list_insert(entry, head, head->next);
}

static inline void list_add_tail(struct list_head *entry,
				 struct list_head *head)
{
	rdmarw_list_insert(entry, head->prev, head);
}

static inline void list_del_init(struct list_head *entry)
{
	entry->prev->next = entry->next;
	entry->next->prev = entry->prev;
	INIT_LIST_HEAD(entry);
}

static inline void list_del(struct list_head *entry)
{
	list_del_init(entry);
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) \
	list_entry((head)->next, type, member)
#define list_first_entry_or_null(head, type, member) \
	(list_empty(head) ? NULL : list_first_entry(head, type, member))
#define list_for_each_entry_safe(pos, n, head, member)                  \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),  \
	    n = list_entry(pos->member.next, __typeof__(*pos), member); \
	     &pos->member != (head);                                    \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#endif /* RDMARW_COMPAT_H */

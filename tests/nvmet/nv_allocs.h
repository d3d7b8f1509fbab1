/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Heap allocations counted, for the tests that check the I/O path makes
 * none: malloc, calloc, realloc and the aligned allocators are interposed
 * in the program that includes this (one file per program: it defines
 * them) and counted over the whole process.  Not under ASan or TSan, whose
 * allocators own malloc (an interposer here would hand their memory to
 * glibc's free), nor under valgrind, which replaces this program's malloc
 * with its own: nv_counting() says whether the counter sees allocations.
 */
#ifndef RDMARW_TESTS_NV_ALLOCS_H
#define RDMARW_TESTS_NV_ALLOCS_H

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NV_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NV_COUNT_ALLOCS 0
#endif
#endif
#ifndef NV_COUNT_ALLOCS
#define NV_COUNT_ALLOCS 1
#endif

static unsigned long nv_allocs;

#if NV_COUNT_ALLOCS
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t nmemb, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static inline void nv_count(void)
{
	__atomic_add_fetch(&nv_allocs, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
	nv_count();
	return __libc_malloc(n);
}

void *calloc(size_t nmemb, size_t n)
{
	nv_count();
	return __libc_calloc(nmemb, n);
}

void *realloc(void *p, size_t n)
{
	nv_count();
	return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
	nv_count();
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	nv_count();
	return __libc_memalign(align, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	void *q;

	nv_count();
	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	q = __libc_memalign(align, n);
	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}
#endif

static inline unsigned long nv_allocs_now(void)
{
	return __atomic_load_n(&nv_allocs, __ATOMIC_RELAXED);
}

static inline bool nv_counting(void)
{
	void *(*volatile alloc)(size_t) = malloc;
	unsigned long before = nv_allocs_now();
	void *p = alloc(16);

	free(p);
	return NV_COUNT_ALLOCS && nv_allocs_now() != before;
}

#endif

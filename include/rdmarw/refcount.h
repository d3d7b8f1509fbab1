/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's refcount_t: a reference count that saturates instead of
 * wrapping.  An increment from 0 (a use after free), an overflow or a
 * decrement below 0 warns through the library's log (printed for the first
 * misuse in the process, counted every time)
 * and leaves the count at REFCOUNT_SATURATED, where it stays: the object
 * leaks rather than being freed twice.  Ordering as in the kernel: the
 * increments are relaxed, refcount_dec_and_test() releases and, when it
 * returns true, acquires.
 */
#ifndef RDMARW_REFCOUNT_H
#define RDMARW_REFCOUNT_H

#include <limits.h>
#include <stdbool.h>

#include <rdmarw/atomic.h>
#include <rdmarw/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

/* refcount_t: a saturating reference count (kernel shape). */
typedef struct {
	atomic_t refs;
} refcount_t;

/* The value a misused count is pinned to (half-way into the negatives). */
#define REFCOUNT_SATURATED (INT_MIN / 2)

/**
 * REFCOUNT_INIT() - static initializer of a refcount_t
 * @n: initial count
 */
#define REFCOUNT_INIT(n)       \
	{                      \
		ATOMIC_INIT(n) \
	}

/**
 * rdmarw__refcount_saturate() - pin a misused count and warn
 * @r: the count
 * @what: what went wrong
 */
static inline void rdmarw__refcount_saturate(refcount_t *r, const char *what)
{
	atomic_set(&r->refs, REFCOUNT_SATURATED);
	rdmarw_warn(1, 1, __FILE__, __LINE__, what);
}

/**
 * refcount_set() - set a count
 * @r: the count
 * @n: new value
 */
static inline void refcount_set(refcount_t *r, int n)
{
	atomic_set(&r->refs, n);
}

/**
 * refcount_read() - read a count
 * @r: the count
 *
 * Return: the current value (REFCOUNT_SATURATED after a misuse).
 */
static inline unsigned int refcount_read(const refcount_t *r)
{
	return (unsigned int)atomic_read(&r->refs);
}

/**
 * refcount_inc_not_zero() - take a reference unless the count is 0
 * @r: the count
 *
 * Return: false when the count was 0 (the object is being freed: no
 * reference taken), true otherwise.
 */
static inline bool refcount_inc_not_zero(refcount_t *r)
{
	int old = atomic_read(&r->refs);

	do {
		if (!old)
			return false;
		if (old < 0 || old == INT_MAX) {
			rdmarw__refcount_saturate(
				r, "refcount_t: saturated; leaking memory");
			return true;
		}
	} while (!__atomic_compare_exchange_n(&r->refs.counter, &old, old + 1,
					      true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

/**
 * refcount_inc() - take a reference
 * @r: the count; must not be 0
 *
 * An increment from 0 warns ("addition on 0; use-after-free") and
 * saturates, as an overflow does.
 */
static inline void refcount_inc(refcount_t *r)
{
	int old = __atomic_fetch_add(&r->refs.counter, 1, __ATOMIC_RELAXED);

	if (unlikely(!old))
		rdmarw__refcount_saturate(
			r, "refcount_t: addition on 0; use-after-free");
	else if (unlikely(old < 0 || old == INT_MAX))
		rdmarw__refcount_saturate(
			r, "refcount_t: saturated; leaking memory");
}

/**
 * refcount_dec_and_test() - drop a reference and test for the last one
 * @r: the count
 *
 * A decrement of a count at or below 0 warns ("underflow;
 * use-after-free"), saturates and returns false.
 *
 * Return: true when this dropped the last reference (free the object).
 */
static inline bool refcount_dec_and_test(refcount_t *r)
{
	int old = __atomic_fetch_sub(&r->refs.counter, 1, __ATOMIC_RELEASE);

	if (old == 1) {
		/*
		 * Order the caller's free after every other holder's last
		 * access: an acquire load of the count reads the end of the
		 * release sequence all decrements belong to.  A fence would
		 * do the same for the compiler, but ThreadSanitizer models
		 * only atomic operations, not stand-alone fences.
		 */
		(void)__atomic_load_n(&r->refs.counter, __ATOMIC_ACQUIRE);
		return true;
	}
	if (unlikely(old <= 0))
		rdmarw__refcount_saturate(
			r, "refcount_t: underflow; use-after-free");
	return false;
}

/**
 * refcount_dec() - drop a reference that is not the last one
 * @r: the count; must stay above 0
 *
 * Dropping the last reference here warns ("decrement hit 0; leaking
 * memory") as in the kernel.
 */
static inline void refcount_dec(refcount_t *r)
{
	int old = __atomic_fetch_sub(&r->refs.counter, 1, __ATOMIC_RELEASE);

	if (unlikely(old <= 1))
		rdmarw__refcount_saturate(
			r,
			old == 1 ?
				"refcount_t: decrement hit 0; leaking memory" :
				"refcount_t: underflow; use-after-free");
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_REFCOUNT_H */

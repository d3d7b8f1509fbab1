/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's atomic_t: an int changed only by these calls.  As in the
 * kernel, atomic_read() and atomic_set() are unordered (relaxed); the calls
 * that change the value and return something are fully ordered (seq_cst);
 * atomic_inc(), atomic_dec(), atomic_add() and atomic_sub() are relaxed.
 * Built on the GCC/Clang __atomic builtins (accepted by -std=c11 -pedantic
 * and in C++).
 */
#ifndef RDMARW_ATOMIC_H
#define RDMARW_ATOMIC_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* atomic_t: an atomically accessed int (kernel shape). */
typedef struct {
	int counter;
} atomic_t;

/**
 * ATOMIC_INIT() - static initializer of an atomic_t
 * @i: initial value
 */
#define ATOMIC_INIT(i) \
	{              \
		(i)    \
	}

/**
 * atomic_read() - read an atomic_t (relaxed)
 * @v: the atomic
 *
 * Return: the current value.
 */
static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

/**
 * atomic_set() - set an atomic_t (relaxed)
 * @v: the atomic
 * @i: new value
 */
static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

/**
 * atomic_add() - add to an atomic_t (relaxed)
 * @i: value to add
 * @v: the atomic
 */
static inline void atomic_add(int i, atomic_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

/**
 * atomic_sub() - subtract from an atomic_t (relaxed)
 * @i: value to subtract
 * @v: the atomic
 */
static inline void atomic_sub(int i, atomic_t *v)
{
	__atomic_fetch_sub(&v->counter, i, __ATOMIC_RELAXED);
}

/**
 * atomic_inc() - increment an atomic_t (relaxed)
 * @v: the atomic
 */
static inline void atomic_inc(atomic_t *v)
{
	atomic_add(1, v);
}

/**
 * atomic_dec() - decrement an atomic_t (relaxed)
 * @v: the atomic
 */
static inline void atomic_dec(atomic_t *v)
{
	atomic_sub(1, v);
}

/**
 * atomic_add_return() - add to an atomic_t (fully ordered)
 * @i: value to add
 * @v: the atomic
 *
 * Return: the new value.
 */
static inline int atomic_add_return(int i, atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

/**
 * atomic_sub_return() - subtract from an atomic_t (fully ordered)
 * @i: value to subtract
 * @v: the atomic
 *
 * Return: the new value.
 */
static inline int atomic_sub_return(int i, atomic_t *v)
{
	return __atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

/**
 * atomic_inc_return() - increment an atomic_t (fully ordered)
 * @v: the atomic
 *
 * Return: the new value.
 */
static inline int atomic_inc_return(atomic_t *v)
{
	return atomic_add_return(1, v);
}

/**
 * atomic_dec_return() - decrement an atomic_t (fully ordered)
 * @v: the atomic
 *
 * Return: the new value.
 */
static inline int atomic_dec_return(atomic_t *v)
{
	return atomic_sub_return(1, v);
}

/**
 * atomic_dec_and_test() - decrement an atomic_t and test for zero
 * @v: the atomic
 *
 * Return: true when the new value is 0.
 */
static inline bool atomic_dec_and_test(atomic_t *v)
{
	return atomic_sub_return(1, v) == 0;
}

/**
 * atomic_inc_and_test() - increment an atomic_t and test for zero
 * @v: the atomic
 *
 * Return: true when the new value is 0.
 */
static inline bool atomic_inc_and_test(atomic_t *v)
{
	return atomic_add_return(1, v) == 0;
}

/**
 * atomic_cmpxchg() - compare and exchange (fully ordered)
 * @v: the atomic
 * @old: expected value
 * @newv: value stored when @v holds @old
 *
 * Return: the value @v held before: @old when the exchange took place.
 */
static inline int atomic_cmpxchg(atomic_t *v, int old, int newv)
{
	__atomic_compare_exchange_n(&v->counter, &old, newv, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

/**
 * atomic_xchg() - exchange (fully ordered)
 * @v: the atomic
 * @newv: value to store
 *
 * Return: the value @v held before.
 */
static inline int atomic_xchg(atomic_t *v, int newv)
{
	return __atomic_exchange_n(&v->counter, newv, __ATOMIC_SEQ_CST);
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_ATOMIC_H */

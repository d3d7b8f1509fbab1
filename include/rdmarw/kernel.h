/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small kernel helpers: WARN_ON, WARN_ON_ONCE and BUG_ON through the
 * library's warning path, min/max/min_t/max_t/clamp, DIV_ROUND_UP,
 * ARRAY_SIZE, likely/unlikely, READ_ONCE/WRITE_ONCE, and jiffies at HZ=1000.
 *
 * Dialects: with GCC or Clang every macro here is accepted by -std=c11
 * -pedantic (the statement expressions and __typeof__ are marked
 * __extension__) and in C++.  With another compiler min(), max(), min_t(),
 * max_t() and clamp() fall back to forms that evaluate their arguments more
 * than once, and READ_ONCE()/WRITE_ONCE() to volatile accesses.
 */
#ifndef RDMARW_KERNEL_H
#define RDMARW_KERNEL_H

#include <stddef.h>

#include <rdmarw/list.h> /* container_of */

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rdmarw_warn() - report a kernel-style warning through the library's log
 * @cond: the tested condition (non-zero: warn)
 * @once: non-zero: print only the first warning of this call site
 * @file: source file of the call site (its address identifies the site)
 * @line: line of the call site
 * @expr: text of the condition
 *
 * The backend of WARN_ON() and WARN_ON_ONCE().  Emits "at FILE:LINE: EXPR"
 * at %RDMARW_LOG_WARN through the library's log, as its other warnings (by
 * default the line "rdmarw: WARNING: at FILE:LINE: EXPR" on stderr), and
 * counts the warning (rdmarw_warn_count()) even when @once or the log
 * level suppresses the message.
 *
 * Context: any thread.
 * Return: @cond, so that the macro can be used in an if.
 */
int rdmarw_warn(int cond, int once, const char *file, int line,
		const char *expr);

/**
 * rdmarw_warn_count() - number of warnings raised so far
 *
 * Every WARN_ON() or WARN_ON_ONCE() whose condition held, including the
 * silenced repeats of WARN_ON_ONCE() and refcount_t saturations.
 *
 * Return: the count since the process started.
 */
unsigned long rdmarw_warn_count(void);

/**
 * rdmarw_bug() - report a BUG_ON() and abort the process
 * @file: source file of the call site
 * @line: line of the call site
 * @expr: text of the condition
 */
void rdmarw_bug(const char *file, int line, const char *expr)
	__attribute__((noreturn));

/**
 * WARN_ON() - warn when a condition holds
 * @cond: condition, evaluated once
 *
 * Return: whether @cond held (as an int).
 */
#define WARN_ON(cond) rdmarw_warn(!!(cond), 0, __FILE__, __LINE__, #cond)

/**
 * WARN_ON_ONCE() - warn the first time a condition holds at this call site
 * @cond: condition, evaluated once
 *
 * Return: whether @cond held, on every call.
 */
#define WARN_ON_ONCE(cond) rdmarw_warn(!!(cond), 1, __FILE__, __LINE__, #cond)

/**
 * BUG_ON() - abort the process when a condition holds
 * @cond: condition, evaluated once
 */
#define BUG_ON(cond) ((cond) ? rdmarw_bug(__FILE__, __LINE__, #cond) : (void)0)

#if defined(__GNUC__) || defined(__clang__)
#define rdmarw__expect(x, v) __builtin_expect(!!(x), v)
#else
#define rdmarw__expect(x, v) (!!(x))
#endif

#ifndef likely
/**
 * likely() - hint that a condition is usually true
 * @x: the condition
 */
#define likely(x) rdmarw__expect(x, 1)
#endif

#ifndef unlikely
/**
 * unlikely() - hint that a condition is usually false
 * @x: the condition
 */
#define unlikely(x) rdmarw__expect(x, 0)
#endif

#ifndef ARRAY_SIZE
/**
 * ARRAY_SIZE() - number of elements of an array
 * @arr: an array (not a pointer)
 */
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))
#endif

#ifndef DIV_ROUND_UP
/**
 * DIV_ROUND_UP() - quotient rounded up
 * @n: dividend (evaluated once)
 * @d: divisor (evaluated twice)
 */
#define DIV_ROUND_UP(n, d) (((n) + (d)-1) / (d))
#endif

#if defined(__GNUC__) || defined(__clang__)
/**
 * min() - the smaller of two values, each evaluated once
 * @x: first value
 * @y: second value
 */
#define min(x, y)                                                              \
	__extension__({                                                        \
		__typeof__(x) rdmarw__min_x = (x);                             \
		__typeof__(y) rdmarw__min_y = (y);                             \
		rdmarw__min_x < rdmarw__min_y ? rdmarw__min_x : rdmarw__min_y; \
	})
/**
 * max() - the larger of two values, each evaluated once
 * @x: first value
 * @y: second value
 */
#define max(x, y)                                                              \
	__extension__({                                                        \
		__typeof__(x) rdmarw__max_x = (x);                             \
		__typeof__(y) rdmarw__max_y = (y);                             \
		rdmarw__max_x > rdmarw__max_y ? rdmarw__max_x : rdmarw__max_y; \
	})
/**
 * min_t() - the smaller of two values converted to a type
 * @type: the type both are converted to
 * @x: first value
 * @y: second value
 */
#define min_t(type, x, y)                                          \
	__extension__({                                            \
		type rdmarw__mint_x = (x);                         \
		type rdmarw__mint_y = (y);                         \
		rdmarw__mint_x < rdmarw__mint_y ? rdmarw__mint_x : \
						  rdmarw__mint_y;  \
	})
/**
 * max_t() - the larger of two values converted to a type
 * @type: the type both are converted to
 * @x: first value
 * @y: second value
 */
#define max_t(type, x, y)                                          \
	__extension__({                                            \
		type rdmarw__maxt_x = (x);                         \
		type rdmarw__maxt_y = (y);                         \
		rdmarw__maxt_x > rdmarw__maxt_y ? rdmarw__maxt_x : \
						  rdmarw__maxt_y;  \
	})
/**
 * READ_ONCE() - read a scalar once, untorn, without a data race
 * @x: the lvalue (1, 2, 4 or 8 bytes)
 *
 * A relaxed atomic load, so that ThreadSanitizer sees no race.
 */
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
/**
 * WRITE_ONCE() - write a scalar once, untorn, without a data race
 * @x: the lvalue (1, 2, 4 or 8 bytes)
 * @val: the value
 */
#define WRITE_ONCE(x, val) __atomic_store_n(&(x), (val), __ATOMIC_RELAXED)
#else
#define min(x, y) ((x) < (y) ? (x) : (y))
#define max(x, y) ((x) > (y) ? (x) : (y))
#define min_t(type, x, y) ((type)(x) < (type)(y) ? (type)(x) : (type)(y))
#define max_t(type, x, y) ((type)(x) > (type)(y) ? (type)(x) : (type)(y))
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val) ((void)(*(volatile __typeof__(x) *)&(x) = (val)))
#endif

/**
 * clamp() - a value limited to a range
 * @val: the value
 * @lo: lowest result
 * @hi: highest result
 */
#define clamp(val, lo, hi) min(max(val, lo), hi)

/* HZ: jiffies per second; one jiffy is a millisecond. */
#ifndef HZ
#define HZ 1000
#endif

/* MAX_SCHEDULE_TIMEOUT: a timeout that never expires. */
#ifndef MAX_SCHEDULE_TIMEOUT
#define MAX_SCHEDULE_TIMEOUT ((long)(~0UL >> 1))
#endif

/**
 * msecs_to_jiffies() - convert milliseconds to jiffies
 * @m: milliseconds
 *
 * Return: @m, as HZ is 1000.
 */
static inline unsigned long msecs_to_jiffies(unsigned int m)
{
	return m;
}

/**
 * jiffies_to_msecs() - convert jiffies to milliseconds
 * @j: jiffies
 *
 * Return: @j in milliseconds (saturated at UINT_MAX).
 */
static inline unsigned int jiffies_to_msecs(unsigned long j)
{
	return j > 0xffffffffUL ? 0xffffffffU : (unsigned int)j;
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_KERNEL_H */

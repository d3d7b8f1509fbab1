/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's kref: a refcount_t embedded in an object, with a release
 * function called when the last reference goes.
 */
#ifndef RDMARW_KREF_H
#define RDMARW_KREF_H

#include <rdmarw/refcount.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct kref - reference count of an object (kernel shape)
 * @refcount: the count
 */
struct kref {
	refcount_t refcount;
};

/**
 * KREF_INIT() - static initializer of a kref
 * @n: initial count
 */
#define KREF_INIT(n)             \
	{                        \
		REFCOUNT_INIT(n) \
	}

/**
 * kref_init() - set a kref's count to 1
 * @kref: the kref
 */
static inline void kref_init(struct kref *kref)
{
	refcount_set(&kref->refcount, 1);
}

/**
 * kref_read() - the current count
 * @kref: the kref
 *
 * Return: the count (for diagnostics: it may change at once).
 */
static inline unsigned int kref_read(const struct kref *kref)
{
	return refcount_read(&kref->refcount);
}

/**
 * kref_get() - take a reference
 * @kref: the kref; the caller must already hold one
 */
static inline void kref_get(struct kref *kref)
{
	refcount_inc(&kref->refcount);
}

/**
 * kref_put() - drop a reference, releasing the object on the last
 * @kref: the kref
 * @release: called with @kref when the count reaches 0; must not be NULL
 *
 * Return: 1 when @release was called, 0 otherwise.
 */
static inline int kref_put(struct kref *kref,
			   void (*release)(struct kref *kref))
{
	if (refcount_dec_and_test(&kref->refcount)) {
		release(kref);
		return 1;
	}
	return 0;
}

/**
 * kref_get_unless_zero() - take a reference unless the count is 0
 * @kref: the kref, found through a lookup structure whose lock the caller
 *	holds (the release function takes the object out under that lock)
 *
 * Return: non-zero when a reference was taken.
 */
static inline int kref_get_unless_zero(struct kref *kref)
{
	return refcount_inc_not_zero(&kref->refcount);
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_KREF_H */

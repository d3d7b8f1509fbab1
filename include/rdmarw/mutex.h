/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's struct mutex calls over a pthread mutex.  As in the kernel,
 * a mutex is not recursive and is released by the thread that took it.
 */
#ifndef RDMARW_MUTEX_H
#define RDMARW_MUTEX_H

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct mutex - a sleeping lock (kernel shape)
 * @m: the pthread mutex
 */
struct mutex {
	pthread_mutex_t m;
};

/**
 * DEFINE_MUTEX() - define an unlocked mutex
 * @x: name of the variable
 */
#define DEFINE_MUTEX(x) struct mutex x = { PTHREAD_MUTEX_INITIALIZER }

/**
 * mutex_init() - initialize a mutex, unlocked
 * @lock: the mutex
 */
static inline void mutex_init(struct mutex *lock)
{
	pthread_mutex_init(&lock->m, NULL);
}

/**
 * mutex_destroy() - mark a mutex unusable
 * @lock: the mutex; unlocked
 */
static inline void mutex_destroy(struct mutex *lock)
{
	pthread_mutex_destroy(&lock->m);
}

/**
 * mutex_lock() - take a mutex, sleeping while another thread holds it
 * @lock: the mutex
 */
static inline void mutex_lock(struct mutex *lock)
{
	pthread_mutex_lock(&lock->m);
}

/**
 * mutex_unlock() - release a mutex
 * @lock: the mutex, held by this thread
 */
static inline void mutex_unlock(struct mutex *lock)
{
	pthread_mutex_unlock(&lock->m);
}

/**
 * mutex_trylock() - take a mutex if it is free
 * @lock: the mutex
 *
 * Return: 1 when taken, 0 when it is held (the kernel's convention, the
 * opposite of pthread_mutex_trylock()).
 */
static inline int mutex_trylock(struct mutex *lock)
{
	return pthread_mutex_trylock(&lock->m) == 0;
}

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_MUTEX_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Library side of the kernel primitives: the WARN/BUG reporting path and
 * struct completion.
 */
#include "core/core.h"

#include <rdmarw/completion.h>
#include <rdmarw/kernel.h>
#include <rdmarw/log.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* WARN_ON_ONCE call sites already reported: (file address, line) pairs. */
struct warn_site {
	const char *file;
	int line;
};

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct warn_site *warn_sites;
static size_t warn_nsites, warn_cap;
static unsigned long warn_total;

/* True the first time a site asks; false (also on ENOMEM) afterwards. */
static bool warn_site_first(const char *file, int line)
{
	struct warn_site *s;
	size_t i;

	for (i = 0; i < warn_nsites; i++)
		if (warn_sites[i].file == file && warn_sites[i].line == line)
			return false;
	if (warn_nsites == warn_cap) {
		size_t cap = warn_cap ? 2 * warn_cap : 16;

		s = realloc(warn_sites, cap * sizeof(*s));
		if (!s)
			return true; /* print again rather than never */
		warn_sites = s;
		warn_cap = cap;
	}
	warn_sites[warn_nsites].file = file;
	warn_sites[warn_nsites].line = line;
	warn_nsites++;
	return true;
}

int rdmarw_warn(int cond, int once, const char *file, int line,
		const char *expr)
{
	bool print = true;

	if (!cond)
		return 0;
	pthread_mutex_lock(&warn_lock);
	warn_total++;
	if (once)
		print = warn_site_first(file, line);
	pthread_mutex_unlock(&warn_lock);
	/* through the log (level, callback), with no lock held */
	if (print)
		rdmarw__log(RDMARW_LOG_WARN, "at %s:%d: %s", file, line, expr);
	return cond;
}

unsigned long rdmarw_warn_count(void)
{
	unsigned long n;

	pthread_mutex_lock(&warn_lock);
	n = warn_total;
	pthread_mutex_unlock(&warn_lock);
	return n;
}

void rdmarw_bug(const char *file, int line, const char *expr)
{
	fprintf(stderr, "rdmarw: BUG: at %s:%d: %s\n", file, line, expr);
	fflush(stderr);
	abort();
}

void init_completion(struct completion *x)
{
	pthread_condattr_t attr;

	x->done = 0;
	pthread_mutex_init(&x->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&x->wait, &attr);
	pthread_condattr_destroy(&attr);
}

void reinit_completion(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	x->done = 0;
	pthread_mutex_unlock(&x->lock);
}

void complete(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	if (x->done != UINT_MAX)
		x->done++;
	pthread_cond_signal(&x->wait);
	pthread_mutex_unlock(&x->lock);
}

void complete_all(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	x->done = UINT_MAX;
	pthread_cond_broadcast(&x->wait);
	pthread_mutex_unlock(&x->lock);
}

/* Under x->lock: take one event. */
static void completion_consume(struct completion *x)
{
	if (x->done != UINT_MAX)
		x->done--;
}

void wait_for_completion(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	while (!x->done)
		pthread_cond_wait(&x->wait, &x->lock);
	completion_consume(x);
	pthread_mutex_unlock(&x->lock);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

unsigned long wait_for_completion_timeout(struct completion *x,
					  unsigned long timeout)
{
	unsigned long left = 0;
	struct timespec dl;
	long long end;

	if (timeout >= (unsigned long)MAX_SCHEDULE_TIMEOUT) {
		wait_for_completion(x);
		return timeout;
	}
	/* a bound past the clock's range waits as long as the clock goes */
	end = now_ms();
	end = end > LLONG_MAX - (long long)timeout ? LLONG_MAX :
						     end + (long long)timeout;
	dl.tv_sec = (time_t)(end / 1000);
	dl.tv_nsec = (long)(end % 1000) * 1000000;
	pthread_mutex_lock(&x->lock);
	while (!x->done) {
		if (pthread_cond_timedwait(&x->wait, &x->lock, &dl) ==
			    ETIMEDOUT &&
		    !x->done)
			break;
	}
	if (x->done) {
		long long rem = end - now_ms();

		completion_consume(x);
		left = rem > 0 ? (unsigned long)rem : 1;
	}
	pthread_mutex_unlock(&x->lock);
	return left;
}

bool try_wait_for_completion(struct completion *x)
{
	bool ret;

	pthread_mutex_lock(&x->lock);
	ret = x->done != 0;
	if (ret)
		completion_consume(x);
	pthread_mutex_unlock(&x->lock);
	return ret;
}

bool completion_done(struct completion *x)
{
	bool ret;

	pthread_mutex_lock(&x->lock);
	ret = x->done != 0;
	pthread_mutex_unlock(&x->lock);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A PD's registration map: what stands in for the kernel's local DMA key.
 * An SGE that carries RDMARW_IBV_LOCAL_DMA_LKEY is given, at post time, the
 * lkey of an ibv MR covering it: a region declared up front, or a cached
 * on-demand registration of the pages under the SGE.  Entries are kept most
 * recently used first, so a hot buffer is found at the head of the list.
 * Cached entries leave only through rdmarw_ibv_forget() or when the PD goes
 * (include/rdmarw/ibv.h says why there is no silent eviction).
 */
#include "ibv/ibv_loc.h"
#include "ibv/ibv_key.h"

#include <stdlib.h>
#include <unistd.h>

int rdmarw__ibv_map_init(struct ibv_pd_priv *ipd)
{
	struct ib_device *dev = ipd->ibpd.device;

	pthread_mutex_init(&ipd->map_lock, NULL);
	ipd->map = NULL;
	ipd->nr_cached = 0;
	ipd->nr_declared = 0;
	ipd->cache_limit = IBV_CACHE_LIMIT;
	ipd->map_access = IBV_ACCESS_LOCAL_WRITE;
	/* iWARP places RDMA READ responses like remote writes: the sink must
	 * be remotely writable (the kernel's rw.c does the same for MRs). */
	if (rdma_protocol_iwarp(dev, 1))
		ipd->map_access |= IBV_ACCESS_REMOTE_WRITE;
	return 0;
}

static void entry_free(struct ibv_map_entry *e)
{
	ibv_dereg_mr(e->mr);
	free(e);
}

void rdmarw__ibv_map_release(struct ibv_pd_priv *ipd)
{
	struct ibv_map_entry *e, *next;

	for (e = ipd->map; e; e = next) {
		next = e->next;
		entry_free(e);
	}
	ipd->map = NULL;
	ipd->nr_cached = 0;
	ipd->nr_declared = 0;
	pthread_mutex_destroy(&ipd->map_lock);
}

static int entry_new(struct ibv_pd_priv *ipd, uintptr_t start, uintptr_t end,
		     bool declared, int access, struct ibv_map_entry **out)
{
	struct ibv_map_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	errno = 0;
	e->mr = ibv_reg_mr(ipd->pd, (void *)start, end - start, access);
	if (!e->mr) {
		int err = errno ? errno : ENOMEM;

		free(e);
		return -err;
	}
	e->start = start;
	e->end = end;
	e->declared = declared;
	e->next = ipd->map;
	ipd->map = e;
	if (declared)
		ipd->nr_declared++;
	else
		ipd->nr_cached++;
	*out = e;
	return 0;
}

/* The entry covering [start, end), moved to the head; NULL if none. */
static struct ibv_map_entry *lookup(struct ibv_pd_priv *ipd, uintptr_t start,
				    uintptr_t end)
{
	struct ibv_map_entry **pp, *e;

	for (pp = &ipd->map; (e = *pp); pp = &e->next) {
		if (e->start <= start && end <= e->end) {
			*pp = e->next;
			e->next = ipd->map;
			ipd->map = e;
			return e;
		}
	}
	return NULL;
}

int rdmarw__ibv_map_lkey(struct ibv_pd_priv *ipd, u64 addr, u32 len, u32 *lkey)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr, end;
	struct ibv_map_entry *e;
	int ret = 0;

	/* A zero-length SGE still needs a key valid at its address. */
	end = start + (len ? len : 1);
	if (!start || end < start)
		return -EINVAL;
	pthread_mutex_lock(&ipd->map_lock);
	e = lookup(ipd, start, end);
	if (!e) {
		if (ipd->nr_cached >= ipd->cache_limit)
			ret = -ENOMEM;
		else
			ret = entry_new(ipd, start & ~(page - 1),
					(end + page - 1) & ~(page - 1), false,
					ipd->map_access, &e);
	}
	if (!ret)
		*lkey = e->mr->lkey;
	pthread_mutex_unlock(&ipd->map_lock);
	return ret;
}

static struct ibv_pd_priv *ibv_pd_of(struct ib_pd *pd)
{
	if (!pd || !rdmarw_ibv_is_ibv(pd->device))
		return NULL;
	return to_ipd(pd);
}

/* A declared region, with the map's access or local write only. */
static int declare(struct ib_pd *pd, void *addr, size_t len, bool local)
{
	struct ibv_pd_priv *ipd = ibv_pd_of(pd);
	uintptr_t start = (uintptr_t)addr;
	struct ibv_map_entry *e;
	int ret;

	if (!ipd || !addr || !len || start + len < start)
		return -EINVAL;
	pthread_mutex_lock(&ipd->map_lock);
	ret = entry_new(ipd, start, start + len, true,
			local ? IBV_ACCESS_LOCAL_WRITE : ipd->map_access, &e);
	pthread_mutex_unlock(&ipd->map_lock);
	return ret;
}

int rdmarw_ibv_declare(struct ib_pd *pd, void *addr, size_t len)
{
	return declare(pd, addr, len, false);
}

int rdmarw_ibv_declare_local(struct ib_pd *pd, void *addr, size_t len)
{
	return declare(pd, addr, len, true);
}

int rdmarw_ibv_forget(struct ib_pd *pd, const void *addr, size_t len)
{
	struct ibv_pd_priv *ipd = ibv_pd_of(pd);
	uintptr_t start = (uintptr_t)addr, end = start + len;
	struct ibv_map_entry **pp, *e;
	int n = 0;

	if (!ipd)
		return -EINVAL;
	if (end < start)
		end = UINTPTR_MAX;
	pthread_mutex_lock(&ipd->map_lock);
	pp = &ipd->map;
	while ((e = *pp)) {
		if (e->start < end && start < e->end) {
			*pp = e->next;
			if (e->declared)
				ipd->nr_declared--;
			else
				ipd->nr_cached--;
			entry_free(e);
			n++;
		} else {
			pp = &e->next;
		}
	}
	pthread_mutex_unlock(&ipd->map_lock);
	return n;
}

int rdmarw_ibv_cache_limit(struct ib_pd *pd, unsigned int limit)
{
	struct ibv_pd_priv *ipd = ibv_pd_of(pd);
	int ret;

	if (!ipd)
		return -EINVAL;
	pthread_mutex_lock(&ipd->map_lock);
	if (limit)
		ipd->cache_limit = limit > INT32_MAX ? INT32_MAX : limit;
	ret = (int)ipd->cache_limit;
	pthread_mutex_unlock(&ipd->map_lock);
	return ret;
}

int rdmarw_ibv_map_entries(struct ib_pd *pd, int *cached)
{
	struct ibv_pd_priv *ipd = ibv_pd_of(pd);
	int ret;

	if (!ipd)
		return -EINVAL;
	pthread_mutex_lock(&ipd->map_lock);
	ret = (int)(ipd->nr_cached + ipd->nr_declared);
	if (cached)
		*cached = (int)ipd->nr_cached;
	pthread_mutex_unlock(&ipd->map_lock);
	return ret;
}

int rdmarw__ibv_map_key(struct ib_pd *pd, const void *addr, u32 *key)
{
	struct ibv_pd_priv *ipd = ibv_pd_of(pd);
	uintptr_t a = (uintptr_t)addr;
	struct ibv_map_entry *e;
	int ret = -ENOENT;

	if (!ipd || !key)
		return -EINVAL;
	pthread_mutex_lock(&ipd->map_lock);
	for (e = ipd->map; e; e = e->next) {
		if (e->start <= a && a < e->end) {
			*key = e->mr->lkey;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ipd->map_lock);
	return ret;
}

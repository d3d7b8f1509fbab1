// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-QP storage for R/W contexts (rdmarw extension).  The kernel allocates
 * the SGE, WR and registration arrays of every MULTI and MR context; rdmarw
 * keeps them in blocks owned by the QP, sorted into power-of-two size
 * classes.  A block goes back to its class when the context is destroyed and
 * is freed only with the QP, so once every class in use has seen its peak,
 * no context allocates.
 */
#include "rw/rw_internal.h"
#include "core/provider.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int size_class(size_t size)
{
	size_t cap = RDMARW_RW_MIN_BLOCK;
	unsigned int c;

	for (c = 0; c < RDMARW_RW_NR_CLASSES; c++, cap <<= 1)
		if (size <= cap)
			return (int)c;
	return -1;
}

static size_t class_bytes(unsigned int cls)
{
	return (size_t)RDMARW_RW_MIN_BLOCK << cls;
}

static struct rdmarw_rw_cache *cache_new(struct ib_qp *qp)
{
	struct rdmarw_rw_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->qp = qp;
	return c;
}

static void cache_delete(struct rdmarw_rw_cache *c)
{
	struct rdmarw_rw_block *b = c->all, *next;

	for (; b; b = next) {
		next = b->next_all;
		free(b);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/*
 * The QP's cache, created on first use.  Several threads may race to create
 * it: one wins the exchange, the others free theirs.
 */
static struct rdmarw_rw_cache *cache_of(struct ib_qp *qp)
{
	struct rdmarw_rw_cache *c, *expected = NULL;

	c = __atomic_load_n(&qp->rw_cache, __ATOMIC_ACQUIRE);
	if (c)
		return c;
	c = cache_new(qp);
	if (!c)
		return NULL;
	if (__atomic_compare_exchange_n(&qp->rw_cache, &expected, c, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return c;
	cache_delete(c);
	return expected;
}

/* A new block of class @cls, linked into the cache's list of blocks. */
static struct rdmarw_rw_block *block_new(struct rdmarw_rw_cache *c,
					 unsigned int cls)
{
	struct rdmarw_rw_block *b;

	b = malloc(sizeof(*b) + class_bytes(cls));
	if (!b)
		return NULL;
	b->cache = c;
	b->cls = cls;
	b->next_free = NULL;
	pthread_mutex_lock(&c->lock);
	b->next_all = c->all;
	c->all = b;
	c->nr_blocks++;
	pthread_mutex_unlock(&c->lock);
	return b;
}

int rdmarw__rw_cache_setup(struct ib_qp *qp, u32 nr, size_t size)
{
	bool created = !__atomic_load_n(&qp->rw_cache, __ATOMIC_ACQUIRE);
	struct rdmarw_rw_cache *c = cache_of(qp);
	struct rdmarw_rw_block *b;
	int cls = size_class(size);
	u32 i;

	if (!c || cls < 0)
		goto err;
	for (i = 0; i < nr; i++) {
		b = block_new(c, (unsigned int)cls);
		if (!b)
			goto err;
		pthread_mutex_lock(&c->lock);
		b->next_free = c->free[cls];
		c->free[cls] = b;
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
err:
	if (created)
		rdmarw__rw_cache_free(qp);
	return -ENOMEM;
}

void rdmarw__rw_cache_free(struct ib_qp *qp)
{
	struct rdmarw_rw_cache *c;

	c = __atomic_exchange_n(&qp->rw_cache, NULL, __ATOMIC_ACQ_REL);
	if (c)
		cache_delete(c);
}

void *rdmarw__rw_block_get_raw(struct ib_qp *qp, size_t size,
			       struct rdmarw_rw_block **blk)
{
	struct rdmarw_rw_cache *c = cache_of(qp);
	struct rdmarw_rw_block *b;
	int cls = size_class(size);

	if (!c || cls < 0)
		return NULL;
	pthread_mutex_lock(&c->lock);
	b = c->free[cls];
	if (b) { /* the steady state: one critical section */
		c->free[cls] = b->next_free;
		b->next_free = NULL;
		c->in_use++;
	}
	pthread_mutex_unlock(&c->lock);
	if (!b) {
		b = block_new(c, (unsigned int)cls);
		if (!b)
			return NULL;
		pthread_mutex_lock(&c->lock);
		c->in_use++;
		pthread_mutex_unlock(&c->lock);
	}
	*blk = b;
	return b->data;
}

void *rdmarw__rw_block_get(struct ib_qp *qp, size_t size,
			   struct rdmarw_rw_block **blk)
{
	void *data = rdmarw__rw_block_get_raw(qp, size, blk);

	if (data)
		memset(data, 0, size);
	return data;
}

void rdmarw__rw_block_put(struct rdmarw_rw_block *b)
{
	struct rdmarw_rw_cache *c;

	if (!b)
		return;
	c = b->cache;
	pthread_mutex_lock(&c->lock);
	b->next_free = c->free[b->cls];
	c->free[b->cls] = b;
	c->in_use--;
	pthread_mutex_unlock(&c->lock);
}

unsigned long rdmarw__rw_cache_in_use(struct ib_qp *qp)
{
	struct rdmarw_rw_cache *c =
		__atomic_load_n(&qp->rw_cache, __ATOMIC_ACQUIRE);
	unsigned long n;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	n = c->in_use;
	pthread_mutex_unlock(&c->lock);
	return n;
}

bool rdmarw__rw_qp_busy(struct ib_qp *qp)
{
	int mrs;

	pthread_spin_lock(rdmarw__qp_mr_lock(qp));
	mrs = qp->mrs_used;
	pthread_spin_unlock(rdmarw__qp_mr_lock(qp));
	return mrs || rdmarw__rw_cache_in_use(qp);
}

size_t rdmarw__rw_base_block_size(struct ib_qp *qp)
{
	u32 sges = qp->max_write_sge > qp->max_read_sge ? qp->max_write_sge :
							  qp->max_read_sge;
	size_t multi = sges * sizeof(struct ib_sge) + sizeof(struct ib_rdma_wr);
	size_t reg = sizeof(struct rdma_rw_reg_ctx);

	return multi > reg ? multi : reg;
}

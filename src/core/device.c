// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device registry, its clients (struct ib_client), the devices'
 * addresses, and the port/protocol queries.
 */
#include "core/core.h"
#include "core/cq_pool.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

/*
 * The registry: devices and clients, in registration order.  registry_lock
 * guards both lists, the client slots, each device's state, pins and
 * addresses; it is never held while a client's callback runs.  Lock order:
 * a device's cb_lock -> registry_lock -> a device's data_lock.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_cond = PTHREAD_COND_INITIALIZER;
static struct list_head registry = LIST_HEAD_INIT(registry);
static struct list_head clients = LIST_HEAD_INIT(clients);
static u64 client_slots;
static unsigned long long next_seq;

#define MAX_CLIENTS 64

enum dev_state {
	DEV_OFF, /* allocated, or unregistered */
	DEV_LIVE, /* registered: in the lookups, clients added */
	DEV_GOING, /* being unregistered: clients are told */
};

/**
 * struct client_ctx - a client added to a device
 * @client: the client, NULL for a free slot
 * @data: ib_set_client_data()'s pointer
 */
struct client_ctx {
	struct ib_client *client;
	void *data;
};

/**
 * struct dev_addr - an address of a device
 * @entry: rdmarw_dev_core.addrs
 * @space: the address space
 * @ss: the address (rdmarw__addr_key())
 */
struct dev_addr {
	struct list_head entry;
	const void *space;
	struct sockaddr_storage ss;
};

/**
 * struct rdmarw_dev_core - the core's private part of a device
 * @cb_lock: held while a client's add or remove runs for the device, so
 *           that one runs at a time and each add is matched by one remove
 * @data_lock: @ctx
 * @ctx: the clients added, by client_id
 * @state: enum dev_state (registry_lock)
 * @seq: registration order (registry_lock)
 * @pins: walkers that hold the device between two lookups (registry_lock)
 * @addrs: struct dev_addr (registry_lock)
 */
struct rdmarw_dev_core {
	pthread_mutex_t cb_lock;
	pthread_mutex_t data_lock;
	struct client_ctx ctx[MAX_CLIENTS];
	enum dev_state state;
	unsigned long long seq;
	unsigned int pins;
	struct list_head addrs;
};

struct ib_device *rdmarw__alloc_device(size_t size,
				       const struct ib_device_ops *ops)
{
	struct ib_device *dev;

	if (size < sizeof(*dev) || !ops)
		return NULL;
	dev = calloc(1, size);
	if (!dev)
		return NULL;
	dev->core = calloc(1, sizeof(*dev->core));
	if (!dev->core) {
		free(dev);
		return NULL;
	}
	pthread_mutex_init(&dev->core->cb_lock, NULL);
	pthread_mutex_init(&dev->core->data_lock, NULL);
	INIT_LIST_HEAD(&dev->core->addrs);
	dev->ops = ops;
	dev->phys_port_cnt = 1;
	dev->virt_dma = true;
	pthread_mutex_init(&dev->lock, NULL);
	INIT_LIST_HEAD(&dev->list);
	return dev;
}

void rdmarw__free_device(struct ib_device *dev)
{
	struct dev_addr *a, *n;

	if (!dev)
		return;
	list_for_each_entry_safe(a, n, &dev->core->addrs, entry)
		free(a);
	pthread_mutex_destroy(&dev->core->data_lock);
	pthread_mutex_destroy(&dev->core->cb_lock);
	free(dev->core);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

static struct ib_device *find_locked(const char *name)
{
	struct ib_device *dev, *tmp;

	list_for_each_entry_safe(dev, tmp, &registry, list)
		if (!strcmp(dev->name, name))
			return dev;
	return NULL;
}

static int pick_name(struct ib_device *dev, const char *fmt)
{
	char buf[IB_DEVICE_NAME_MAX];
	int i;

	if (!strstr(fmt, "%d")) {
		if (find_locked(fmt))
			return -EEXIST;
		snprintf(dev->name, sizeof(dev->name), "%s", fmt);
		return 0;
	}
	size_t pre = (size_t)(strstr(fmt, "%d") - fmt);

	for (i = 0; i < 1 << 16; i++) {
		snprintf(buf, sizeof(buf), "%.*s%d%s", (int)pre, fmt, i,
			 fmt + pre + 2);
		if (!find_locked(buf)) {
			memcpy(dev->name, buf, sizeof(buf));
			return 0;
		}
	}
	return -ENFILE;
}

/*
 * RDMARW_TX_ZCOPY (read once): "allow" lets a zero-copy device complete
 * unsignalled sends before it has read their pages, as the kernel's siw
 * does for kernel ULPs (tests reproduce the defect with it, benchmarks
 * measure the guard's cost); unset or "guard": rdmarw_tx_guard.
 */
static bool tx_zcopy_allowed(void)
{
	static int allowed = -1;
	int v = __atomic_load_n(&allowed, __ATOMIC_RELAXED);

	if (v < 0) {
		const char *env = getenv("RDMARW_TX_ZCOPY");

		v = env && !strcmp(env, "allow");
		if (env && *env && !v && strcmp(env, "guard"))
			rdmarw__log(
				RDMARW_LOG_WARN,
				"RDMARW_TX_ZCOPY='%s' is neither 'guard' nor 'allow': guarding",
				env);
		__atomic_store_n(&allowed, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* ---- clients (the kernel's ib_client) ---------------------------------- */

/* Is @client on the client list (registry_lock held)? */
static bool client_listed(const struct ib_client *client)
{
	struct ib_client *c, *n;

	list_for_each_entry_safe(c, n, &clients, list)
		if (c == client)
			return true;
	return false;
}

/*
 * Pin the first device registered after @seq (only live ones unless @any),
 * so that it is not freed before unpin(); NULL when there is none.
 */
static struct ib_device *pin_next(unsigned long long *seq, bool any)
{
	struct ib_device *dev, *n, *found = NULL;

	pthread_mutex_lock(&registry_lock);
	list_for_each_entry_safe(dev, n, &registry, list) {
		if (dev->core->seq > *seq &&
		    (any || dev->core->state == DEV_LIVE)) {
			found = dev;
			break;
		}
	}
	if (found) {
		found->core->pins++;
		*seq = found->core->seq;
	}
	pthread_mutex_unlock(&registry_lock);
	return found;
}

static void unpin(struct ib_device *dev)
{
	pthread_mutex_lock(&registry_lock);
	if (!--dev->core->pins)
		pthread_cond_broadcast(&registry_cond);
	pthread_mutex_unlock(&registry_lock);
}

/* Add @client to @dev (cb_lock held): its add decides. */
static void add_ctx(struct ib_device *dev, struct ib_client *client)
{
	struct client_ctx *ctx = &dev->core->ctx[client->client_id];
	int ret = 0;

	pthread_mutex_lock(&dev->core->data_lock);
	if (ctx->client) {
		pthread_mutex_unlock(&dev->core->data_lock);
		return; /* added already */
	}
	ctx->client = client; /* ib_set_client_data() works in add */
	ctx->data = NULL;
	pthread_mutex_unlock(&dev->core->data_lock);
	if (client->add)
		ret = client->add(dev);
	if (!ret)
		return;
	if (ret != -EOPNOTSUPP)
		rdmarw__log(RDMARW_LOG_INFO, "client %s refused device %s: %d",
			    client->name, dev->name, ret);
	pthread_mutex_lock(&dev->core->data_lock);
	ctx->client = NULL;
	ctx->data = NULL;
	pthread_mutex_unlock(&dev->core->data_lock);
}

/* Tell @client that @dev goes, if it was added (cb_lock held). */
static void remove_ctx(struct ib_device *dev, struct ib_client *client)
{
	struct client_ctx *ctx = &dev->core->ctx[client->client_id];
	void *data;

	pthread_mutex_lock(&dev->core->data_lock);
	if (ctx->client != client) {
		pthread_mutex_unlock(&dev->core->data_lock);
		return;
	}
	data = ctx->data;
	pthread_mutex_unlock(&dev->core->data_lock);
	if (client->remove)
		client->remove(dev, data);
	pthread_mutex_lock(&dev->core->data_lock);
	ctx->client = NULL;
	ctx->data = NULL;
	pthread_mutex_unlock(&dev->core->data_lock);
}

/* Add every registered client to @dev, in registration order. */
static void enable_device(struct ib_device *dev)
{
	unsigned long long seq = 0;
	struct ib_client *c, *n, *next;

	pthread_mutex_lock(&dev->core->cb_lock);
	for (;;) {
		next = NULL;
		pthread_mutex_lock(&registry_lock);
		list_for_each_entry_safe(c, n, &clients, list) {
			if (c->rdmarw_seq > seq && !c->rdmarw_going) {
				next = c;
				seq = c->rdmarw_seq;
				break;
			}
		}
		if (dev->core->state != DEV_LIVE)
			next = NULL;
		pthread_mutex_unlock(&registry_lock);
		if (!next)
			break;
		/* @next stays valid: its unregistration needs our cb_lock */
		add_ctx(dev, next);
	}
	pthread_mutex_unlock(&dev->core->cb_lock);
}

/* Tell every client of @dev that it goes, newest client first. */
static void disable_device(struct ib_device *dev)
{
	struct rdmarw_dev_core *core = dev->core;
	unsigned long long below = ~0ULL;
	struct ib_client *last;
	int i;

	pthread_mutex_lock(&core->cb_lock);
	for (;;) {
		last = NULL;
		pthread_mutex_lock(&core->data_lock);
		for (i = 0; i < MAX_CLIENTS; i++) {
			struct ib_client *c = core->ctx[i].client;

			if (c && c->rdmarw_seq < below &&
			    (!last || c->rdmarw_seq > last->rdmarw_seq))
				last = c;
		}
		pthread_mutex_unlock(&core->data_lock);
		if (!last)
			break;
		below = last->rdmarw_seq;
		remove_ctx(dev, last);
	}
	pthread_mutex_unlock(&core->cb_lock);
}

int ib_register_client(struct ib_client *client)
{
	unsigned long long seq = 0;
	struct ib_device *dev;
	bool live;
	int slot;

	if (!client || !client->name)
		return -EINVAL;
	pthread_mutex_lock(&registry_lock);
	if (client_listed(client)) {
		pthread_mutex_unlock(&registry_lock);
		return -EEXIST;
	}
	slot = __builtin_ffsll((long long)~client_slots) - 1;
	if (slot < 0) {
		pthread_mutex_unlock(&registry_lock);
		return -ENOSPC;
	}
	client_slots |= 1ULL << slot;
	client->client_id = (u32)slot;
	client->rdmarw_seq = ++next_seq;
	client->rdmarw_going = false;
	list_add_tail(&client->list, &clients);
	pthread_mutex_unlock(&registry_lock);

	while ((dev = pin_next(&seq, false))) {
		pthread_mutex_lock(&dev->core->cb_lock);
		pthread_mutex_lock(&registry_lock);
		live = dev->core->state == DEV_LIVE && !client->rdmarw_going;
		pthread_mutex_unlock(&registry_lock);
		if (live)
			add_ctx(dev, client);
		pthread_mutex_unlock(&dev->core->cb_lock);
		unpin(dev);
	}
	return 0;
}

void ib_unregister_client(struct ib_client *client)
{
	static bool warned;
	unsigned long long seq = 0;
	struct ib_device *dev;
	bool ok;

	if (!client)
		return;
	pthread_mutex_lock(&registry_lock);
	ok = client_listed(client) && !client->rdmarw_going;
	if (ok)
		client->rdmarw_going = true;
	pthread_mutex_unlock(&registry_lock);
	if (!ok) {
		rdmarw__warn_once(
			&warned, "ib_unregister_client: client not registered");
		return;
	}
	/* every device still listed, live or going, is fenced */
	while ((dev = pin_next(&seq, true))) {
		pthread_mutex_lock(&dev->core->cb_lock);
		remove_ctx(dev, client);
		pthread_mutex_unlock(&dev->core->cb_lock);
		unpin(dev);
	}
	pthread_mutex_lock(&registry_lock);
	list_del_init(&client->list);
	client_slots &= ~(1ULL << client->client_id);
	pthread_mutex_unlock(&registry_lock);
}

/* The slot of @client on @dev, if @client is added to it (data_lock held). */
static struct client_ctx *ctx_of(struct ib_device *dev,
				 struct ib_client *client)
{
	struct client_ctx *ctx;

	if (client->client_id >= MAX_CLIENTS)
		return NULL;
	ctx = &dev->core->ctx[client->client_id];
	return ctx->client == client ? ctx : NULL;
}

void ib_set_client_data(struct ib_device *device, struct ib_client *client,
			void *data)
{
	static bool warned;
	struct client_ctx *ctx = NULL;

	if (device && device->core && client) {
		pthread_mutex_lock(&device->core->data_lock);
		ctx = ctx_of(device, client);
		if (ctx)
			ctx->data = data;
		pthread_mutex_unlock(&device->core->data_lock);
	}
	if (!ctx)
		rdmarw__warn_once(
			&warned,
			"ib_set_client_data: the client is not added to the device");
}

void *ib_get_client_data(struct ib_device *device, struct ib_client *client)
{
	struct client_ctx *ctx;
	void *data = NULL;

	if (!device || !device->core || !client)
		return NULL;
	pthread_mutex_lock(&device->core->data_lock);
	ctx = ctx_of(device, client);
	if (ctx)
		data = ctx->data;
	pthread_mutex_unlock(&device->core->data_lock);
	return data;
}

/* ---- registration -------------------------------------------------------- */

int rdmarw__register_device(struct ib_device *dev, const char *name)
{
	int ret;

	if (!dev || !dev->core || !name || !*name ||
	    strlen(name) >= IB_DEVICE_NAME_MAX ||
	    strchr(name, '%') != strrchr(name, '%') ||
	    (strchr(name, '%') && !strstr(name, "%d")))
		return -EINVAL;
	dev->rdmarw_tx_guard = dev->rdmarw_tx_zcopy_min && !tx_zcopy_allowed();
	pthread_mutex_lock(&registry_lock);
	ret = dev->core->state == DEV_OFF ? pick_name(dev, name) : -EEXIST;
	if (!ret) {
		list_add_tail(&dev->list, &registry);
		dev->refcount = 1;
		dev->core->seq = ++next_seq;
		dev->core->state = DEV_LIVE;
	}
	pthread_mutex_unlock(&registry_lock);
	if (!ret)
		enable_device(dev);
	return ret;
}

int rdmarw__unregister_device(struct ib_device *dev)
{
	int ret = 0;

	if (!dev || !dev->core)
		return -EINVAL;
	pthread_mutex_lock(&registry_lock);
	if (dev->core->state == DEV_GOING)
		ret = -EBUSY;
	else if (dev->core->state == DEV_LIVE)
		dev->core->state = DEV_GOING;
	else
		ret = 1; /* not registered: nothing to do */
	pthread_mutex_unlock(&registry_lock);
	if (ret)
		return ret < 0 ? ret : 0;
	disable_device(dev);
	ret = rdmarw__cq_pool_cleanup(dev);
	pthread_mutex_lock(&registry_lock);
	if (!ret && rdmarw__read(&dev->refcount) > 1)
		ret = -EBUSY;
	if (ret) {
		dev->core->state = DEV_LIVE;
	} else {
		list_del_init(&dev->list);
		while (dev->core->pins)
			pthread_cond_wait(&registry_cond, &registry_lock);
		dev->core->state = DEV_OFF;
	}
	pthread_mutex_unlock(&registry_lock);
	if (ret)
		enable_device(dev); /* as it was: the clients get add again */
	return ret;
}

void rdmarw__device_get(struct ib_device *dev)
{
	rdmarw__inc(&dev->refcount);
}

void rdmarw__device_put(struct ib_device *dev)
{
	rdmarw__dec(&dev->refcount);
}

struct ib_device *ib_device_get_by_name(const char *name)
{
	struct ib_device *dev;

	if (!name)
		return NULL;
	pthread_mutex_lock(&registry_lock);
	dev = find_locked(name);
	if (dev && dev->core->state != DEV_LIVE)
		dev = NULL; /* being unregistered */
	pthread_mutex_unlock(&registry_lock);
	return dev;
}

int ib_device_foreach(int (*fn)(struct ib_device *dev, void *arg), void *arg)
{
	struct ib_device *dev, *tmp;
	int ret = 0;

	if (!fn)
		return -EINVAL;
	pthread_mutex_lock(&registry_lock);
	list_for_each_entry_safe(dev, tmp, &registry, list) {
		if (dev->core->state != DEV_LIVE)
			continue;
		ret = fn(dev, arg);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

/* ---- addresses ----------------------------------------------------------- */

int rdmarw__addr_key(const struct sockaddr *addr, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (addr->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		memcpy(in, addr, sizeof(*in));
		in->sin_port = 0;
		return in->sin_addr.s_addr == htonl(INADDR_ANY) ? -EINVAL : 0;
	}
	if (addr->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		memcpy(in6, addr, sizeof(*in6));
		in6->sin6_port = 0;
		in6->sin6_flowinfo = 0;
		in6->sin6_scope_id = 0;
		return IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) ? -EINVAL : 0;
	}
	return -EAFNOSUPPORT;
}

bool rdmarw__same_addr(const struct sockaddr_storage *a,
		       const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr,
		       sizeof(struct in6_addr));
}

/* @dev's entry for @ss in @space (registry_lock held). */
static struct dev_addr *addr_find(struct ib_device *dev, const void *space,
				  const struct sockaddr_storage *ss)
{
	struct dev_addr *a, *n;

	list_for_each_entry_safe(a, n, &dev->core->addrs, entry)
		if (a->space == space && rdmarw__same_addr(&a->ss, ss))
			return a;
	return NULL;
}

int rdmarw__device_add_addr(struct ib_device *dev, const void *space,
			    const struct sockaddr *addr)
{
	struct ib_device *d, *n;
	struct dev_addr *a;
	int ret;

	if (!dev || !dev->core || !addr)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	ret = rdmarw__addr_key(addr, &a->ss);
	a->space = space;
	pthread_mutex_lock(&registry_lock);
	list_for_each_entry_safe(d, n, &registry, list)
		if (!ret && addr_find(d, space, &a->ss))
			ret = -EADDRINUSE;
	if (!ret && list_empty(&dev->list))
		ret = -EINVAL; /* not registered */
	if (!ret)
		list_add_tail(&a->entry, &dev->core->addrs);
	pthread_mutex_unlock(&registry_lock);
	if (ret)
		free(a);
	return ret;
}

int rdmarw__device_del_addr(struct ib_device *dev, const void *space,
			    const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct dev_addr *a;

	if (!dev || !dev->core || !addr || rdmarw__addr_key(addr, &ss))
		return -EADDRNOTAVAIL;
	pthread_mutex_lock(&registry_lock);
	a = addr_find(dev, space, &ss);
	if (a)
		list_del(&a->entry);
	pthread_mutex_unlock(&registry_lock);
	if (!a)
		return -EADDRNOTAVAIL;
	free(a);
	return 0;
}

int rdmarw__device_addr_walk(int (*fn)(struct ib_device *dev, const void *space,
				       const struct sockaddr_storage *ss,
				       void *arg),
			     void *arg)
{
	struct ib_device *dev, *n;
	struct dev_addr *a, *an;
	int ret = 0;

	pthread_mutex_lock(&registry_lock);
	list_for_each_entry_safe(dev, n, &registry, list) {
		if (dev->core->state != DEV_LIVE)
			continue;
		list_for_each_entry_safe(a, an, &dev->core->addrs, entry) {
			ret = fn(dev, a->space, &a->ss, arg);
			if (ret)
				goto out;
		}
	}
out:
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

/* ---- ports --------------------------------------------------------------- */

bool rdma_is_port_valid(const struct ib_device *device, u32 port_num)
{
	return device && port_num >= 1 && port_num <= device->phys_port_cnt &&
	       port_num <= RDMARW_MAX_PORTS;
}

static bool port_is(const struct ib_device *device, u32 port_num,
		    enum rdma_protocol proto)
{
	return rdma_is_port_valid(device, port_num) &&
	       device->port_protocol[port_num - 1] == proto;
}

bool rdma_protocol_iwarp(const struct ib_device *device, u32 port_num)
{
	return port_is(device, port_num, RDMA_PROTOCOL_IWARP);
}

bool rdma_protocol_ib(const struct ib_device *device, u32 port_num)
{
	return port_is(device, port_num, RDMA_PROTOCOL_IB);
}

bool rdma_protocol_roce(const struct ib_device *device, u32 port_num)
{
	return port_is(device, port_num, RDMA_PROTOCOL_ROCE);
}

/* The kernel: READ with invalidate is an iWARP feature. */
bool rdma_cap_read_inv(const struct ib_device *device, u32 port_num)
{
	return rdma_protocol_iwarp(device, port_num);
}

bool ib_uses_virt_dma(const struct ib_device *dev)
{
	return dev && dev->virt_dma;
}

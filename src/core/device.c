// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The device registry and the port/protocol queries. */
#include "core/core.h"
#include "core/cq_pool.h"

#include <stdio.h>
#include <string.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list_head registry = LIST_HEAD_INIT(registry);

struct ib_device *rdmarw__alloc_device(size_t size,
				       const struct ib_device_ops *ops)
{
	struct ib_device *dev;

	if (size < sizeof(*dev) || !ops)
		return NULL;
	dev = calloc(1, size);
	if (!dev)
		return NULL;
	dev->ops = ops;
	dev->phys_port_cnt = 1;
	dev->virt_dma = true;
	pthread_mutex_init(&dev->lock, NULL);
	INIT_LIST_HEAD(&dev->list);
	return dev;
}

void rdmarw__free_device(struct ib_device *dev)
{
	if (!dev)
		return;
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

int rdmarw__register_device(struct ib_device *dev, const char *name)
{
	int ret;

	if (!dev || !name || !*name || strlen(name) >= IB_DEVICE_NAME_MAX ||
	    strchr(name, '%') != strrchr(name, '%') ||
	    (strchr(name, '%') && !strstr(name, "%d")))
		return -EINVAL;
	dev->rdmarw_tx_guard = dev->rdmarw_tx_zcopy_min && !tx_zcopy_allowed();
	pthread_mutex_lock(&registry_lock);
	ret = pick_name(dev, name);
	if (!ret) {
		list_add_tail(&dev->list, &registry);
		dev->refcount = 1;
	}
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

int rdmarw__unregister_device(struct ib_device *dev)
{
	int ret = 0;

	if (!dev)
		return -EINVAL;
	ret = rdmarw__cq_pool_cleanup(dev);
	if (ret)
		return ret;
	pthread_mutex_lock(&registry_lock);
	if (rdmarw__read(&dev->refcount) > 1)
		ret = -EBUSY;
	else if (!list_empty(&dev->list))
		list_del_init(&dev->list);
	pthread_mutex_unlock(&registry_lock);
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
		ret = fn(dev, arg);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

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

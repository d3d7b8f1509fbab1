// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ibv devices: opening rdma-core devices by name, their attributes, and the
 * provider's operations table.  Contexts come from librdmacm
 * (rdma_get_devices()) so that QPs created on them can be connected through
 * rdma_cm ids, which live on librdmacm's own contexts.  Each open device
 * has a thread that reads its context's asynchronous events and hands them
 * to the QP's and SRQ's event handlers, as the kernel's drivers do.
 */
#include "ibv/ibv_loc.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- asynchronous events ------------------------------------------------ */

/*
 * One event to the handler of its QP or SRQ.  libibverbs' ibv_destroy_qp()
 * and ibv_destroy_srq() wait until their events are acknowledged, so the
 * object and the core's one around it (its qp_context / srq_context) live
 * until ibv_ack_async_event(), which follows the handler's return.  CQ,
 * port and device events have no handler in rdmarw (no
 * ib_register_event_handler()): they are logged.
 */
static void async_dispatch(struct ibv_dev *dev, struct ibv_async_event *e)
{
	struct ib_event ev = { .device = &dev->ibdev };
	struct ib_srq *srq;
	struct ib_qp *qp;

	switch (e->event_type) {
	case IBV_EVENT_QP_FATAL:
		ev.event = IB_EVENT_QP_FATAL;
		goto qp;
	case IBV_EVENT_QP_REQ_ERR:
		ev.event = IB_EVENT_QP_REQ_ERR;
		goto qp;
	case IBV_EVENT_QP_ACCESS_ERR:
		ev.event = IB_EVENT_QP_ACCESS_ERR;
		goto qp;
	case IBV_EVENT_COMM_EST:
		ev.event = IB_EVENT_COMM_EST;
		goto qp;
	case IBV_EVENT_SQ_DRAINED:
		ev.event = IB_EVENT_SQ_DRAINED;
		goto qp;
	case IBV_EVENT_PATH_MIG:
		ev.event = IB_EVENT_PATH_MIG;
		goto qp;
	case IBV_EVENT_PATH_MIG_ERR:
		ev.event = IB_EVENT_PATH_MIG_ERR;
		goto qp;
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		ev.event = IB_EVENT_QP_LAST_WQE_REACHED;
		goto qp;
	case IBV_EVENT_SRQ_ERR:
		ev.event = IB_EVENT_SRQ_ERR;
		goto srq;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		goto srq;
	default:
		rdmarw__log(RDMARW_LOG_INFO, "%s: %s", dev->ibdev.name,
			    ibv_event_type_str(e->event_type));
		return;
	}
qp:
	qp = e->element.qp ? e->element.qp->qp_context : NULL;
	if (qp && qp->event_handler) {
		ev.element.qp = qp;
		qp->event_handler(&ev, qp->qp_context);
	}
	return;
srq:
	srq = e->element.srq ? e->element.srq->srq_context : NULL;
	if (srq && srq->event_handler) {
		ev.element.srq = srq;
		srq->event_handler(&ev, srq->srq_context);
	}
}

static void *async_thread(void *arg)
{
	struct ibv_dev *dev = arg;
	struct pollfd fds[2] = {
		{ .fd = dev->ctx->async_fd, .events = POLLIN },
		{ .fd = dev->async_stop_fd, .events = POLLIN },
	};
	struct ibv_async_event e;

	for (;;) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			break;
		/* a context whose device went away: nothing more to read */
		if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL) &&
		    !(fds[0].revents & POLLIN))
			break;
		if (!(fds[0].revents & POLLIN))
			continue;
		/* non-blocking: another reader may have taken it */
		if (ibv_get_async_event(dev->ctx, &e))
			continue;
		async_dispatch(dev, &e);
		ibv_ack_async_event(&e);
	}
	return NULL;
}

static int async_start(struct ibv_dev *dev)
{
	int fl, ret;

	fl = fcntl(dev->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(dev->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	dev->async_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (dev->async_stop_fd < 0)
		return -errno;
	ret = -pthread_create(&dev->async_thread, NULL, async_thread, dev);
	if (ret) {
		close(dev->async_stop_fd);
		dev->async_stop_fd = -1;
	}
	return ret;
}

static void async_stop(struct ibv_dev *dev)
{
	u64 one = 1;

	if (dev->async_stop_fd < 0)
		return;
	if (write(dev->async_stop_fd, &one, sizeof(one)) != sizeof(one))
		abort();
	pthread_join(dev->async_thread, NULL);
	close(dev->async_stop_fd);
	dev->async_stop_fd = -1;
}

/* ---- devices ------------------------------------------------------------ */

static void dealloc_driver(struct ib_device *ibdev)
{
	struct ibv_dev *dev = to_idev(ibdev);

	async_stop(dev);
	if (dev->own_ctx)
		ibv_close_device(dev->ctx);
	pthread_mutex_destroy(&dev->qps_lock);
}

bool rdmarw_ibv_is_ibv(const struct ib_device *dev)
{
	return dev && dev->ops == &rdmarw__ibv_ops;
}

static enum rdma_protocol port_protocol(struct ibv_context *ctx,
					const struct ibv_port_attr *pa)
{
	if (ctx->device->transport_type == IBV_TRANSPORT_IWARP)
		return RDMA_PROTOCOL_IWARP;
	if (pa->link_layer == IBV_LINK_LAYER_ETHERNET)
		return RDMA_PROTOCOL_ROCE;
	return RDMA_PROTOCOL_IB;
}

/* Capability bits the backend can honour (no fast registration). */
#define IBV_CAPS_KEPT                                                          \
	(IB_DEVICE_RESIZE_MAX_WR | IB_DEVICE_BAD_PKEY_CNTR |                   \
	 IB_DEVICE_BAD_QKEY_CNTR | IB_DEVICE_AUTO_PATH_MIG |                   \
	 IB_DEVICE_CHANGE_PHY_PORT | IB_DEVICE_UD_AV_PORT_ENFORCE |            \
	 IB_DEVICE_CURR_QP_STATE_MOD | IB_DEVICE_SHUTDOWN_PORT |               \
	 IB_DEVICE_PORT_ACTIVE_EVENT | IB_DEVICE_SYS_IMAGE_GUID |              \
	 IB_DEVICE_RC_RNR_NAK_GEN | IB_DEVICE_SRQ_RESIZE |                     \
	 IB_DEVICE_N_NOTIFY_CQ | IB_DEVICE_MEM_WINDOW | IB_DEVICE_UD_IP_CSUM | \
	 IB_DEVICE_XRC | IB_DEVICE_MEM_WINDOW_TYPE_2A |                        \
	 IB_DEVICE_MEM_WINDOW_TYPE_2B | IB_DEVICE_RC_IP_CSUM |                 \
	 IB_DEVICE_RAW_IP_CSUM | IB_DEVICE_MANAGED_FLOW_STEERING)

/* siw's vendor id ("bmt", SIW_VENDOR_ID) */
#define IBV_SIW_VENDOR_ID 0x626d74

/*
 * The kernel's siw sends an unsignalled WQE of at least a page from the
 * user's pages and completes it once TCP holds them (siw_qp_prepare_tx(),
 * SENDPAGE_THRESH = PAGE_SIZE): rdmarw__tx_zcopy()'s rule.  Hardware
 * iWARP devices complete from their own copy or after the ACK.
 */
static u32 tx_zcopy_min(const struct ib_device *dev)
{
	long page = sysconf(_SC_PAGESIZE);

	if (dev->attrs.vendor_id != IBV_SIW_VENDOR_ID ||
	    !rdma_protocol_iwarp(dev, 1))
		return 0;
	return page > 0 ? (u32)page : 4096;
}

static void fill_attrs(struct ib_device_attr *a,
		       const struct ibv_device_attr_ex *x)
{
	const struct ibv_device_attr *o = &x->orig_attr;

	memset(a, 0, sizeof(*a));
	a->fw_ver = 0;
	a->max_mr_size = o->max_mr_size;
	a->page_size_cap = o->page_size_cap;
	a->vendor_id = o->vendor_id;
	a->vendor_part_id = o->vendor_part_id;
	a->max_qp = o->max_qp;
	a->max_qp_wr = o->max_qp_wr;
	/* libibverbs has no REG_MR work request: never MEM_MGT_EXTENSIONS,
	 * and no local DMA key (IBK_LOCAL_DMA_LKEY) in user space. */
	a->device_cap_flags = (u64)o->device_cap_flags & IBV_CAPS_KEPT;
	a->kernel_cap_flags = 0;
	a->max_send_sge = o->max_sge;
	a->max_recv_sge = o->max_sge;
	a->max_sge_rd = o->max_sge_rd;
	a->max_cq = o->max_cq;
	a->max_cqe = o->max_cqe;
	a->max_mr = o->max_mr;
	a->max_pd = o->max_pd;
	a->max_qp_rd_atom = o->max_qp_rd_atom;
	a->max_qp_init_rd_atom = o->max_qp_init_rd_atom;
	a->max_fast_reg_page_list_len = 0;
	a->max_pi_fast_reg_page_list_len = 0;
	a->max_sgl_rd = 0;
}

static int query(struct ibv_dev *dev)
{
	struct ibv_device_attr_ex x;
	struct ib_device *ibdev = &dev->ibdev;
	u32 p;
	int ret;

	memset(&x, 0, sizeof(x));
	ret = ibv_query_device_ex(dev->ctx, NULL, &x);
	if (ret)
		return -ret;
	fill_attrs(&ibdev->attrs, &x);
	/* ib_cq_pool_get() keeps CQs per vector, as on the kernel's device */
	ibdev->num_comp_vectors =
		dev->ctx->num_comp_vectors > 0 ? dev->ctx->num_comp_vectors : 1;
	ibdev->phys_port_cnt = x.orig_attr.phys_port_cnt;
	if (ibdev->phys_port_cnt > RDMARW_MAX_PORTS)
		ibdev->phys_port_cnt = RDMARW_MAX_PORTS;
	if (!ibdev->phys_port_cnt)
		return -ENODEV;
	for (p = 1; p <= ibdev->phys_port_cnt; p++) {
		struct ibv_port_attr pa;

		memset(&pa, 0, sizeof(pa));
		ret = ibv_query_port(dev->ctx, (u8)p, &pa);
		if (ret)
			return -ret;
		ibdev->port_protocol[p - 1] = port_protocol(dev->ctx, &pa);
		if (p == 1)
			dev->port_attr = pa;
	}
	return 0;
}

/* librdmacm's context for @name, or one of our own if rdma_cm is absent. */
static struct ibv_context *find_ctx(const char *name, bool *own)
{
	struct ibv_context **list, *ctx = NULL;
	struct ibv_device **devs;
	int i, n = 0;

	*own = false;
	list = rdma_get_devices(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]->device), name))
			ctx = list[i];
	if (list)
		rdma_free_devices(list);
	if (ctx)
		return ctx;
	devs = ibv_get_device_list(&n);
	for (i = 0; devs && i < n; i++)
		if (!strcmp(ibv_get_device_name(devs[i]), name))
			ctx = ibv_open_device(devs[i]);
	if (devs)
		ibv_free_device_list(devs);
	*own = ctx != NULL;
	return ctx;
}

static struct ib_device *open_locked(const char *name)
{
	struct ib_device *found = ib_device_get_by_name(name);
	struct ibv_dev *dev;
	int ret;

	if (found)
		return rdmarw_ibv_is_ibv(found) ? found : ERR_PTR(-EEXIST);
	dev = (struct ibv_dev *)rdmarw__alloc_device(sizeof(*dev),
						     &rdmarw__ibv_ops);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	pthread_mutex_init(&dev->qps_lock, NULL);
	INIT_LIST_HEAD(&dev->qps);
	dev->async_stop_fd = -1;
	dev->ctx = find_ctx(name, &dev->own_ctx);
	ret = dev->ctx ? query(dev) : -ENODEV;
	if (!ret)
		ret = async_start(dev);
	if (!ret) {
		dev->ibdev.local_dma_lkey = RDMARW_IBV_LOCAL_DMA_LKEY;
		dev->ibdev.virt_dma = true;
		dev->ibdev.provider_data = dev->ctx;
		dev->ibdev.rdmarw_tx_zcopy_min = tx_zcopy_min(&dev->ibdev);
		ret = rdmarw__register_device(&dev->ibdev, name);
	}
	if (ret) {
		if (dev->ctx)
			dealloc_driver(&dev->ibdev);
		else
			pthread_mutex_destroy(&dev->qps_lock);
		rdmarw__free_device(&dev->ibdev);
		return ERR_PTR(ret);
	}
	return &dev->ibdev;
}

struct ib_device *rdmarw_ibv_open(const char *name)
{
	struct ib_device *dev;

	if (!name || !*name || strlen(name) >= IB_DEVICE_NAME_MAX)
		return ERR_PTR(-EINVAL);
	pthread_mutex_lock(&open_lock);
	dev = open_locked(name);
	pthread_mutex_unlock(&open_lock);
	return dev;
}

int rdmarw_ibv_open_all(void)
{
	struct ibv_device **devs;
	int i, n = 0, opened = 0;

	devs = ibv_get_device_list(&n);
	for (i = 0; devs && i < n; i++)
		if (!IS_ERR(rdmarw_ibv_open(ibv_get_device_name(devs[i]))))
			opened++;
	if (devs)
		ibv_free_device_list(devs);
	return opened;
}

int rdmarw_ibv_close(struct ib_device *ibdev)
{
	int ret;

	if (!rdmarw_ibv_is_ibv(ibdev))
		return -EINVAL;
	/*
	 * The core tells the clients (the CM: DEVICE_REMOVAL to the ids on
	 * the device, waiting for their handlers) with open_lock not held:
	 * the librdmacm event thread may be opening a device meanwhile.  The
	 * device is out of the lookups from the start, so an open of its
	 * name cannot return it.
	 */
	ret = rdmarw__unregister_device(ibdev);
	if (ret)
		return ret;
	pthread_mutex_lock(&open_lock);
	dealloc_driver(ibdev);
	rdmarw__free_device(ibdev);
	pthread_mutex_unlock(&open_lock);
	return 0;
}

#define IBV_CLOSE_MAX 64

struct ibv_collect {
	struct ib_device *devs[IBV_CLOSE_MAX];
	int n;
};

static int collect_ibv(struct ib_device *dev, void *arg)
{
	struct ibv_collect *c = arg;

	if (rdmarw_ibv_is_ibv(dev) && c->n < IBV_CLOSE_MAX)
		c->devs[c->n++] = dev;
	return 0;
}

int rdmarw_ibv_close_all(void)
{
	struct ibv_collect c = { .n = 0 };
	int i, busy = 0;

	ib_device_foreach(collect_ibv, &c);
	for (i = 0; i < c.n; i++)
		if (rdmarw_ibv_close(c.devs[i]))
			busy++;
	return busy;
}

static int match_ctx(struct ib_device *dev, void *arg)
{
	struct ib_device **io = arg;

	if (rdmarw_ibv_is_ibv(dev) &&
	    to_idev(dev)->ctx == (struct ibv_context *)(void *)*io) {
		*io = dev;
		return 1;
	}
	return 0;
}

struct ib_device *rdmarw__ibv_dev_of_ctx(struct ibv_context *ctx)
{
	struct ib_device *io = (struct ib_device *)(void *)ctx;
	struct ib_device *dev;

	if (ib_device_foreach(match_ctx, &io) == 1)
		return io;
	dev = rdmarw_ibv_open(ibv_get_device_name(ctx->device));
	if (IS_ERR(dev))
		return dev;
	return to_idev(dev)->ctx == ctx ? dev : ERR_PTR(-ENODEV);
}

static const char *protocol_name(enum rdma_protocol p)
{
	switch (p) {
	case RDMA_PROTOCOL_IWARP:
		return "iWARP";
	case RDMA_PROTOCOL_ROCE:
		return "RoCE";
	default:
		return "InfiniBand";
	}
}

int rdmarw_ibv_describe(const struct ib_device *ibdev, char *buf, size_t len)
{
	const struct ibv_dev *dev;

	if (!rdmarw_ibv_is_ibv(ibdev) || !buf)
		return -EINVAL;
	dev = to_idev(ibdev);
	return snprintf(buf, len,
			"ibv %s: %s, port 1 %s, mtu %d, max_qp_wr %d, "
			"max_send_sge %d, max_sge_rd %d, node guid %016llx",
			ibdev->name, protocol_name(ibdev->port_protocol[0]),
			ibv_port_state_str(dev->port_attr.state),
			128 << dev->port_attr.active_mtu,
			ibdev->attrs.max_qp_wr, ibdev->attrs.max_send_sge,
			ibdev->attrs.max_sge_rd,
			(unsigned long long)be64toh(
				ibv_get_device_guid(dev->ctx->device)));
}

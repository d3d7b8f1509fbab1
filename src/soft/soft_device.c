// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fabrics and software devices (and their addresses), and the progress
 * thread of threaded devices.
 */
#include "soft/soft_access.h"

#include <stdio.h>
#include <sys/random.h>
#include <time.h>

int (*rdmarw__soft_test_hook)(enum soft_test_point tp, struct soft_qp *qp);

u32 rdmarw__soft_random(void)
{
	static u32 fallback;
	u32 v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	/* No entropy yet: a time-seeded LCG step is enough for key variants. */
	v = soft_add(&fallback, 0x9e3779b9u) ^ (u32)time(NULL);
	return v * 1103515245u + 12345u;
}

/* ---- fabric ----------------------------------------------------------- */

struct soft_fabric *soft_fabric_create(void)
{
	struct soft_fabric *f = calloc(1, sizeof(*f));

	if (!f)
		return ERR_PTR(-ENOMEM);
	soft_mutex_init(&f->lock);
	soft_br_init(&f->mem_lock);
	INIT_LIST_HEAD(&f->devices);
	INIT_LIST_HEAD(&f->qps);
	f->next_qpn = SOFT_QPN_FIRST; /* rxe: RXE_MIN_QP_INDEX 16 + 1 */
	f->qpn_last = SOFT_QPN_LAST;
	return f;
}

int soft_fabric_destroy(struct soft_fabric *fabric)
{
	bool busy;

	if (!fabric)
		return -EINVAL;
	soft_mutex_lock(&fabric->lock);
	busy = !list_empty(&fabric->devices);
	soft_mutex_unlock(&fabric->lock);
	if (busy)
		return -EBUSY;
	soft_mutex_destroy(&fabric->lock);
	soft_br_destroy(&fabric->mem_lock);
	free(fabric);
	return 0;
}

/* ---- device ----------------------------------------------------------- */

static bool attrs_ok(const struct ib_device_attr *a)
{
	if (a->max_qp_wr <= 0 || a->max_send_sge <= 0 || a->max_recv_sge <= 0 ||
	    a->max_sge_rd <= 0 || a->max_cqe <= 0 || a->max_qp <= 0 ||
	    a->max_pd <= 0 || a->max_mr <= 0 || a->max_cq <= 0 ||
	    a->max_qp_rd_atom < 0 || a->max_qp_init_rd_atom < 0)
		return false;
	if ((a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) &&
	    !a->max_fast_reg_page_list_len)
		return false;
	if ((a->kernel_cap_flags & IBK_INTEGRITY_HANDOVER) &&
	    !a->max_pi_fast_reg_page_list_len)
		return false;
	return true;
}

static bool profile_ok(const struct soft_profile *p)
{
	return (p->protocol == RDMA_PROTOCOL_IB ||
		p->protocol == RDMA_PROTOCOL_ROCE ||
		p->protocol == RDMA_PROTOCOL_IWARP) &&
	       attrs_ok(&p->attrs);
}

static void sdev_free(struct soft_dev *sdev)
{
	rdmarw__soft_keytab_free(&sdev->keys);
	rdmarw__soft_iommu_fini(&sdev->iommu);
	for (int i = 0; i < SOFT_TASK_GROUPS; i++)
		soft_mutex_destroy(&sdev->task[i].lock);
	rdmarw__free_device(&sdev->ibdev);
}

static struct soft_dev *sdev_alloc(struct soft_fabric *fabric,
				   const struct soft_profile *profile)
{
	struct ib_device *dev;
	struct soft_dev *sdev;

	dev = rdmarw__alloc_device(sizeof(*sdev), &rdmarw__soft_ops);
	if (!dev)
		return NULL;
	sdev = to_sdev(dev);
	sdev->fabric = fabric;
	INIT_LIST_HEAD(&sdev->fabric_entry);
	sdev->profile = *profile;
	sdev->profile.name[sizeof(sdev->profile.name) - 1] = '\0';
	sdev->iwarp = profile->protocol == RDMA_PROTOCOL_IWARP;
	sdev->keys.next = rdmarw__soft_random() % SOFT_INDEX_MAX + 1;
	rdmarw__soft_iommu_init(&sdev->iommu);
	for (int i = 0; i < SOFT_TASK_GROUPS; i++) {
		soft_mutex_init(&sdev->task[i].lock);
		INIT_LIST_HEAD(&sdev->task[i].qps);
	}

	dev->attrs = profile->attrs;
	dev->phys_port_cnt = 1;
	dev->port_protocol[0] = profile->protocol;
	dev->local_dma_lkey = SOFT_LOCAL_DMA_LKEY;
	dev->iommu = profile->iommu;
	dev->virt_dma = !profile->iommu;
	/* iWARP profiles send as the kernel's siw: large unsignalled WQEs
	 * from their pages (soft_zcopy.c; SENDPAGE_THRESH = PAGE_SIZE); on
	 * TCP sendmsg() copies, so a completion frees the source at once */
	dev->rdmarw_tx_zcopy_min = sdev->iwarp && !profile->tcp ? SZ_4K : 0;
	dev->provider_data = sdev;
	return sdev;
}

struct ib_device *soft_device_create(struct soft_fabric *fabric,
				     const char *name,
				     const struct soft_profile *profile)
{
	char defname[IB_DEVICE_NAME_MAX];
	struct soft_dev *sdev;
	int ret;

	if (!fabric || !profile || !profile_ok(profile))
		return ERR_PTR(-EINVAL);
	/* TCP carries iWARP only (MPA/DDP/RDMAP, soft_tcp.c). */
	if (profile->tcp && profile->protocol != RDMA_PROTOCOL_IWARP)
		return ERR_PTR(-EINVAL);
	if (!name) {
		snprintf(defname, sizeof(defname), "soft_%.15s_%%d",
			 profile->name[0] ? profile->name : "dev");
		name = defname;
	}
	sdev = sdev_alloc(fabric, profile);
	if (!sdev)
		return ERR_PTR(-ENOMEM);
	ret = rdmarw__soft_keytab_init(&sdev->keys);
	if (!ret)
		ret = rdmarw__register_device(&sdev->ibdev, name);
	if (ret)
		goto err_free;
	if (profile->threaded) {
		ret = rdmarw__soft_task_start(sdev);
		if (ret)
			goto err_unregister;
	}
	if (profile->tcp) {
		ret = rdmarw__soft_tcp_dev_start(sdev);
		if (ret) {
			rdmarw__soft_task_stop(sdev);
			goto err_unregister;
		}
	}
	soft_mutex_lock(&fabric->lock);
	list_add_tail(&sdev->fabric_entry, &fabric->devices);
	soft_mutex_unlock(&fabric->lock);
	return &sdev->ibdev;

err_unregister:
	rdmarw__unregister_device(&sdev->ibdev);
err_free:
	sdev_free(sdev);
	return ERR_PTR(ret);
}

bool soft_device_is_soft(const struct ib_device *dev)
{
	return dev && dev->ops == &rdmarw__soft_ops;
}

int soft_device_destroy(struct ib_device *dev)
{
	struct soft_dev *sdev;
	int ret;

	if (!soft_device_is_soft(dev))
		return -EINVAL;
	sdev = to_sdev(dev);
	/* the core tells its clients (the CM: DEVICE_REMOVAL to its ids) */
	ret = rdmarw__unregister_device(dev);
	if (ret)
		return ret;
	rdmarw__soft_task_stop(sdev);
	rdmarw__soft_tcp_dev_stop(sdev);
	soft_mutex_lock(&sdev->fabric->lock);
	list_del_init(&sdev->fabric_entry);
	soft_mutex_unlock(&sdev->fabric->lock);
	sdev_free(sdev);
	return 0;
}

/*
 * A device's addresses are the device's (the core keeps them, freed with
 * the device); a fabric is their address space.
 */
int soft_device_add_addr(struct ib_device *dev, const struct sockaddr *addr)
{
	if (!soft_device_is_soft(dev) || !addr)
		return -EINVAL;
	return rdmarw__device_add_addr(dev, to_sdev(dev)->fabric, addr);
}

int soft_device_del_addr(struct ib_device *dev, const struct sockaddr *addr)
{
	if (!soft_device_is_soft(dev) || !addr)
		return -EINVAL;
	return rdmarw__device_del_addr(dev, to_sdev(dev)->fabric, addr);
}

int soft_device_stats(struct ib_device *dev, struct soft_stats *out)
{
	struct soft_dev *sdev;
	struct soft_stats *s;
	struct soft_qp *q, *tmp;
	u64 wrs = 0, bytes = 0;

	if (!soft_device_is_soft(dev) || !out)
		return -EINVAL;
	sdev = to_sdev(dev);
	s = &sdev->stats;
	/* Live QPs keep their own counters (written by their executors). */
	soft_mutex_lock(&sdev->fabric->lock);
	list_for_each_entry_safe(q, tmp, &sdev->fabric->qps, fabric_entry) {
		if (q->dev != sdev)
			continue;
		wrs += __atomic_load_n(&q->st_wrs, __ATOMIC_RELAXED);
		bytes += __atomic_load_n(&q->st_comp_bytes, __ATOMIC_RELAXED);
		bytes += __atomic_load_n(&q->st_resp_bytes, __ATOMIC_RELAXED);
	}
	out->wrs_executed = soft_load(&s->wrs_executed) + wrs;
	out->bytes_moved = soft_load(&s->bytes_moved) + bytes;
	soft_mutex_unlock(&sdev->fabric->lock);
	out->pds = soft_load(&s->pds);
	out->cqs = soft_load(&s->cqs);
	out->qps = soft_load(&s->qps);
	out->mrs = soft_load(&s->mrs);
	out->iova_ranges = soft_load(&s->iova_ranges);
	out->rnr_stalls = soft_load(&s->rnr_stalls);
	out->cq_overflows = soft_load(&s->cq_overflows);
	return 0;
}

int soft_device_profile(struct ib_device *dev, struct soft_profile *out)
{
	if (!soft_device_is_soft(dev) || !out)
		return -EINVAL;
	*out = to_sdev(dev)->profile;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Memory regions: fast-registration, integrity and user MRs, and the
 * page-list rules of ib_map_mr_sg(). */
#include "core/core.h"
#include "core/mr_pages.h"

static struct ib_mr *mr_new(struct ib_pd *pd, enum ib_mr_type type)
{
	struct ib_mr *mr = calloc(1, pd->device->ops->size_ib_mr);

	if (!mr)
		return NULL;
	mr->device = pd->device;
	mr->pd = pd;
	mr->type = type;
	INIT_LIST_HEAD(&mr->qp_entry);
	return mr;
}

static struct ib_mr *mr_finish(struct ib_mr *mr, int ret)
{
	if (ret) {
		free(mr->sig_attrs);
		free(mr);
		return ERR_PTR(ret);
	}
	rdmarw__inc(&mr->pd->usecnt);
	return mr;
}

static bool can_fast_reg(const struct ib_device *dev)
{
	return (dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) &&
	       dev->ops->alloc_mr && dev->ops->map_mr_sg;
}

struct ib_mr *ib_alloc_mr(struct ib_pd *pd, enum ib_mr_type mr_type,
			  u32 max_num_sg)
{
	struct ib_device *dev;
	struct ib_mr *mr;

	if (!pd)
		return ERR_PTR(-EINVAL);
	dev = pd->device;
	if (!can_fast_reg(dev))
		return ERR_PTR(-EOPNOTSUPP);
	if (mr_type == IB_MR_TYPE_SG_GAPS &&
	    !(dev->attrs.kernel_cap_flags & IBK_SG_GAPS_REG))
		return ERR_PTR(-EOPNOTSUPP);
	if ((mr_type != IB_MR_TYPE_MEM_REG && mr_type != IB_MR_TYPE_SG_GAPS) ||
	    !max_num_sg || max_num_sg > dev->attrs.max_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);
	mr = mr_new(pd, mr_type);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->max_num_sg = max_num_sg;
	return mr_finish(mr, dev->ops->alloc_mr(mr, max_num_sg));
}

struct ib_mr *ib_alloc_mr_integrity(struct ib_pd *pd, u32 max_num_data_sg,
				    u32 max_num_meta_sg)
{
	struct ib_device *dev;
	struct ib_mr *mr;
	u32 limit;

	if (!pd)
		return ERR_PTR(-EINVAL);
	dev = pd->device;
	if (!(dev->attrs.kernel_cap_flags & IBK_INTEGRITY_HANDOVER) ||
	    !dev->ops->alloc_mr_integrity)
		return ERR_PTR(-EOPNOTSUPP);
	limit = dev->attrs.max_pi_fast_reg_page_list_len;
	if (!max_num_data_sg || !max_num_meta_sg || max_num_data_sg > limit ||
	    max_num_meta_sg > limit)
		return ERR_PTR(-EINVAL);
	mr = mr_new(pd, IB_MR_TYPE_INTEGRITY);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* The core owns the attributes, as the kernel's verbs.c does. */
	mr->sig_attrs = calloc(1, sizeof(*mr->sig_attrs));
	if (!mr->sig_attrs) {
		free(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_num_sg = max_num_data_sg;
	mr->max_num_meta_sg = max_num_meta_sg;
	return mr_finish(mr, dev->ops->alloc_mr_integrity(mr, max_num_data_sg,
							  max_num_meta_sg));
}

struct ib_mr *ib_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
			     u64 virt_addr, int access_flags)
{
	struct ib_device *dev;
	struct ib_mr *mr;

	if (!pd || !start || !length || start + length < start ||
	    virt_addr + length < virt_addr)
		return ERR_PTR(-EINVAL);
	dev = pd->device;
	if (access_flags & ~IB_ACCESS_SUPPORTED)
		return ERR_PTR(-EINVAL);
	/* IBA: remote write (and atomic) require local write. */
	if ((access_flags &
	     (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access_flags & IB_ACCESS_LOCAL_WRITE))
		return ERR_PTR(-EINVAL);
	if (dev->attrs.max_mr_size && length > dev->attrs.max_mr_size)
		return ERR_PTR(-EINVAL);
	if (!dev->ops->reg_user_mr)
		return ERR_PTR(-EOPNOTSUPP);
	mr = mr_new(pd, IB_MR_TYPE_USER);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->iova = virt_addr;
	mr->length = length;
	mr->page_size = PAGE_SIZE;
	mr->access = access_flags;
	return mr_finish(mr, dev->ops->reg_user_mr(mr, start, length, virt_addr,
						   access_flags));
}

int ib_dereg_mr(struct ib_mr *mr)
{
	struct ib_pd *pd;
	int ret = 0;

	if (!mr)
		return -EINVAL;
	if (__atomic_load_n(&mr->in_pool, __ATOMIC_ACQUIRE))
		return -EBUSY;
	pd = mr->pd;
	if (mr->device->ops->dereg_mr)
		ret = mr->device->ops->dereg_mr(mr);
	if (ret)
		return ret;
	free(mr->sig_attrs);
	free(mr);
	rdmarw__dec(&pd->usecnt);
	return 0;
}

static bool page_size_ok(const struct ib_mr *mr, unsigned int page_size)
{
	u64 cap = mr->device->attrs.page_size_cap;

	if (page_size < SZ_4K || (page_size & (page_size - 1)))
		return false;
	return !cap || (cap & page_size);
}

int ib_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
		 unsigned int *sg_offset, unsigned int page_size)
{
	if (!mr || !sg || sg_nents <= 0 || !page_size_ok(mr, page_size))
		return -EINVAL;
	if (mr->type != IB_MR_TYPE_MEM_REG && mr->type != IB_MR_TYPE_SG_GAPS)
		return -EINVAL;
	if (sg_offset && *sg_offset >= sg_dma_len(sg))
		return -EINVAL;
	if (!mr->device->ops->map_mr_sg)
		return -EOPNOTSUPP;
	mr->page_size = page_size;
	return mr->device->ops->map_mr_sg(mr, sg, sg_nents, sg_offset);
}

/* The caller's set_page, called through the walk's argument. */
struct set_page_call {
	struct ib_mr *mr;
	int (*set_page)(struct ib_mr *mr, u64 addr);
};

static int call_set_page(void *arg, u64 addr)
{
	struct set_page_call *c = arg;

	return c->set_page(c->mr, addr);
}

/*
 * The walk itself (page rules included) is rdmarw__sg_to_pages() in
 * mr_pages.h, shared with providers that inline their set_page into it.
 */
int ib_sg_to_pages(struct ib_mr *mr, struct scatterlist *sgl, int sg_nents,
		   unsigned int *sg_offset_p,
		   int (*set_page)(struct ib_mr *, u64))
{
	struct set_page_call c = { mr, set_page };

	if (!set_page)
		return -EINVAL;
	return rdmarw__sg_to_pages(mr, sgl, sg_nents, sg_offset_p,
				   call_set_page, &c);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * R/W sizing: how many WRs and MRs a QP needs for its contexts, the QP's MR
 * pools and context storage, and the force_mr switch (the kernel's rw.c,
 * sizing half).
 */
#include "rw/rw_internal.h"
#include "core/provider.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool force_mr;

__attribute__((constructor)) static void force_mr_from_env(void)
{
	const char *v = getenv("RDMARW_FORCE_MR");

	force_mr = v && (!strcmp(v, "1") || !strcmp(v, "y") ||
			 !strcmp(v, "Y") || !strcmp(v, "true"));
}

void rdma_rw_set_force_mr(bool force)
{
	__atomic_store_n(&force_mr, force, __ATOMIC_RELAXED);
}

bool rdma_rw_get_force_mr(void)
{
	return __atomic_load_n(&force_mr, __ATOMIC_RELAXED);
}

u32 rdmarw__fr_page_list_len(struct ib_device *dev, bool pi_support)
{
	u32 max = pi_support ? dev->attrs.max_pi_fast_reg_page_list_len :
			       dev->attrs.max_fast_reg_page_list_len;

	return max < RDMARW_RW_MAX_PAGES ? max : RDMARW_RW_MAX_PAGES;
}

/*
 * The kernel's rdma_rw_can_use_mr(): iWARP, a device that prefers MRs for
 * long READ lists (max_sgl_rd), or force_mr.  rdmarw adds one condition: the
 * device must be able to fast-register (the libibverbs backend cannot).
 */
bool rdmarw__can_use_mr(struct ib_device *dev, u32 port_num)
{
	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return false;
	return rdma_protocol_iwarp(dev, port_num) || dev->attrs.max_sgl_rd ||
	       rdma_rw_get_force_mr();
}

unsigned int rdma_rw_mr_factor(struct ib_device *device, u32 port_num,
			       unsigned int maxpages)
{
	u32 per;

	if (!device || !rdma_is_port_valid(device, port_num) || !maxpages)
		return 0;
	if (rdmarw__can_use_mr(device, port_num))
		per = rdmarw__fr_page_list_len(device, false);
	else
		per = (u32)device->attrs.max_sge_rd;
	if (!per)
		return 0;
	/* ceil without the overflow of maxpages + per - 1 near UINT_MAX */
	return maxpages / per + (maxpages % per != 0);
}

unsigned int rdma_rw_max_send_wr(struct ib_device *dev, u32 port_num,
				 unsigned int max_rdma_ctxs, u32 create_flags)
{
	unsigned int factor = 1;

	if (!dev || !rdma_is_port_valid(dev, port_num))
		return 0;
	if ((create_flags & IB_QP_CREATE_INTEGRITY_EN) ||
	    rdmarw__can_use_mr(dev, port_num))
		factor += 2; /* LOCAL_INV and REG_MR */
	if (max_rdma_ctxs > UINT_MAX / factor)
		return UINT_MAX;
	return factor * max_rdma_ctxs;
}

u32 rdmarw__rw_max_ctxs(struct ib_device *dev, u32 port_num, u32 create_flags)
{
	unsigned int per = rdma_rw_max_send_wr(dev, port_num, 1, create_flags);

	if (!per || dev->attrs.max_qp_wr <= 0)
		return 0;
	return (u32)dev->attrs.max_qp_wr / per;
}

void rdma_rw_init_qp(struct ib_device *dev, struct ib_qp_init_attr *attr)
{
	unsigned int extra, wr;
	u32 port;

	if (!dev || !attr)
		return;
	port = attr->port_num ? attr->port_num : 1;
	extra = rdma_rw_max_send_wr(dev, port, attr->cap.max_rdma_ctxs,
				    attr->create_flags);
	wr = attr->cap.max_send_wr;
	wr = extra > UINT_MAX - wr ? UINT_MAX : wr + extra;
	if (wr > (unsigned int)dev->attrs.max_qp_wr)
		wr = (unsigned int)dev->attrs.max_qp_wr;
	attr->cap.max_send_wr = wr;
}

int rdma_rw_init_mrs(struct ib_qp *qp, struct ib_qp_init_attr *attr)
{
	struct ib_device *dev;
	u32 nr_mrs = 0, nr_sig_mrs = 0, pages = 0;
	int ret;

	if (!qp || !attr)
		return -EINVAL;
	dev = qp->pd->device;
	if (attr->cap.max_rdma_ctxs >
	    rdmarw__rw_max_ctxs(dev, attr->port_num ? attr->port_num : 1,
				attr->create_flags))
		return -EINVAL;
	if (attr->create_flags & IB_QP_CREATE_INTEGRITY_EN) {
		nr_sig_mrs = attr->cap.max_rdma_ctxs;
		nr_mrs = attr->cap.max_rdma_ctxs;
		pages = rdmarw__fr_page_list_len(dev, true);
	} else if (rdmarw__can_use_mr(dev, attr->port_num)) {
		nr_mrs = attr->cap.max_rdma_ctxs;
		pages = rdmarw__fr_page_list_len(dev, false);
	}
	if (nr_mrs) {
		ret = ib_mr_pool_init(qp, &qp->rdma_mrs, (int)nr_mrs,
				      IB_MR_TYPE_MEM_REG, pages, 0);
		if (ret)
			return ret;
	}
	if (nr_sig_mrs) {
		ret = ib_mr_pool_init(qp, &qp->sig_mrs, (int)nr_sig_mrs,
				      IB_MR_TYPE_INTEGRITY, pages, pages);
		if (ret)
			goto err_rdma_mrs;
	}
	ret = rdmarw__rw_cache_setup(qp, attr->cap.max_rdma_ctxs,
				     rdmarw__rw_base_block_size(qp));
	if (ret)
		goto err_sig_mrs;
	return 0;

err_sig_mrs:
	ib_mr_pool_destroy(qp, &qp->sig_mrs);
err_rdma_mrs:
	ib_mr_pool_destroy(qp, &qp->rdma_mrs);
	return ret;
}

void rdma_rw_cleanup_mrs(struct ib_qp *qp)
{
	static bool warned;

	if (!qp)
		return;
	if (rdmarw__rw_qp_busy(qp)) {
		rdmarw__warn_once(
			&warned,
			"rdma_rw_cleanup_mrs: contexts still hold storage or MRs of the QP");
		return;
	}
	ib_mr_pool_destroy(qp, &qp->sig_mrs);
	ib_mr_pool_destroy(qp, &qp->rdma_mrs);
	rdmarw__rw_cache_free(qp);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What ibv ULPs put in their connections' private data: a buffer's address,
 * rkey and length in wire order.  The connections themselves are made with
 * <rdmarw/rdma_cm.h>, over librdmacm (src/cm/cm_ibv_rdmacm.c).
 */
#include "ibv/ibv_loc.h"

void rdmarw_ibv_peer_info_set(struct rdmarw_ibv_peer_info *info, u64 addr,
			      u32 rkey, u32 len)
{
	if (!info)
		return;
	info->addr = htobe64(addr);
	info->rkey = htobe32(rkey);
	info->len = htobe32(len);
}

int rdmarw_ibv_peer_info_get(const struct rdmarw_ibv_peer_info *info, u64 *addr,
			     u32 *rkey, u32 *len)
{
	if (!info || !addr || !rkey || !len)
		return -EINVAL;
	*addr = be64toh(info->addr);
	*rkey = be32toh(info->rkey);
	*len = be32toh(info->len);
	return 0;
}

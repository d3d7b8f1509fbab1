// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What ibv ULPs put in their connections' private data: a buffer's address,
 * rkey and length in wire order.  The connections themselves are made with
 * <rdmarw/rdma_cm.h>, over librdmacm (src/cm/cm_ibv_rdmacm.c).
 */
#include "ibv/ibv_loc.h"

#include <string.h>

/*
 * Private data sits wherever the CM put it: the fields are copied, never
 * read or written in place (no alignment is assumed).
 */
void rdmarw_ibv_peer_info_set(struct rdmarw_ibv_peer_info *info, u64 addr,
			      u32 rkey, u32 len)
{
	struct rdmarw_ibv_peer_info v;

	if (!info)
		return;
	v.addr = htobe64(addr);
	v.rkey = htobe32(rkey);
	v.len = htobe32(len);
	memcpy(info, &v, sizeof(v));
}

int rdmarw_ibv_peer_info_get(const struct rdmarw_ibv_peer_info *info, u64 *addr,
			     u32 *rkey, u32 *len)
{
	struct rdmarw_ibv_peer_info v;

	if (!info || !addr || !rkey || !len)
		return -EINVAL;
	memcpy(&v, info, sizeof(v));
	*addr = be64toh(v.addr);
	*rkey = be32toh(v.rkey);
	*len = be32toh(v.len);
	return 0;
}

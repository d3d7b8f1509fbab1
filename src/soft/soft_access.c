// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The out-of-line halves of the access rules (soft_access.h): what the
 * inline checks hand on once they have said yes.  Each function starts
 * from a checked key and range and repeats none of the checks.
 */
#include "soft/soft_sig.h"

int rdmarw__soft_region_walk(const struct soft_region *rg)
{
	u64 off = 0, n;
	u32 hint = 0;
	u8 *p;

	/* Every byte translates: page list holes, unlinked IOVAs, page list
	 * elements in the NULL page (soft_dma_to_cpu() per span). */
	while (off < rg->len) {
		if (rdmarw__soft_region_span_at(rg, off, &hint, &p, &n))
			return -EACCES;
		off += n;
	}
	return 0;
}

int rdmarw__soft_mr_check_tail(struct soft_mr *mr, struct soft_region *out)
{
	if (mr->sig)
		return rdmarw__soft_sig_access(mr, out->addr, out->len);
	return rdmarw__soft_region_walk(out);
}

int rdmarw__soft_sgl_check(struct soft_dev *sdev, struct ib_pd *pd,
			   const struct ib_sge *sge, u32 n, int access,
			   struct soft_region *out, u32 *nout)
{
	bool sig = false;
	u32 i, k = 0;

	for (i = 0; i < n; i++) {
		if (!sge[i].length)
			continue;
		if (soft_lkey_check(sdev, pd, &sge[i], access, &out[k]))
			return -EACCES;
		sig |= out[k].mr && out[k].mr->sig;
		k++;
	}
	/* An integrity MR must be the only SGE of its WR (soft_sig.c). */
	if (sig && k > 1)
		return -EACCES;
	*nout = k;
	return 0;
}

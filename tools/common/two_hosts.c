// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Two connected hosts on the software device (see two_hosts.h). */
#include "two_hosts.h"

#include <string.h>

/* Record the failed call; returns its errno. */
static int failed(struct two_hosts *h, const char *what, int err)
{
	h->failed = what;
	return err;
}

int two_hosts_devices(struct two_hosts *h, const struct soft_profile *profile,
		      const char *const *name, bool loopback)
{
	struct ib_device *dev;
	int side;

	memset(h, 0, sizeof(*h));
	h->fabric = soft_fabric_create();
	if (IS_ERR(h->fabric)) {
		int err = (int)PTR_ERR(h->fabric);

		h->fabric = NULL;
		return failed(h, "soft_fabric_create", err);
	}
	for (side = 0; side < 2; side++) {
		if (side && loopback) {
			h->dev[1] = h->dev[0];
			break;
		}
		dev = soft_device_create(h->fabric, name ? name[side] : NULL,
					 profile);
		if (IS_ERR(dev))
			return failed(h, "soft_device_create",
				      (int)PTR_ERR(dev));
		h->dev[side] = dev;
	}
	return 0;
}

int two_hosts_side(struct two_hosts *h, int side, int cqe,
		   enum ib_poll_context poll)
{
	struct ib_pd *pd;
	struct ib_cq *cq;

	pd = ib_alloc_pd(h->dev[side], 0);
	if (IS_ERR(pd))
		return failed(h, "ib_alloc_pd", (int)PTR_ERR(pd));
	h->pd[side] = pd;
	cq = ib_alloc_cq(h->dev[side], NULL, cqe ? cqe : 1024, 0, poll);
	if (IS_ERR(cq))
		return failed(h, "ib_alloc_cq", (int)PTR_ERR(cq));
	h->cq[side] = cq;
	return 0;
}

int two_hosts_qps(struct two_hosts *h, const struct ib_qp_init_attr *attr,
		  bool connect)
{
	struct ib_qp *qp;
	int side, ret;

	for (side = 0; side < 2; side++) {
		struct ib_qp_init_attr a = attr[side];

		if (!a.send_cq)
			a.send_cq = h->cq[side];
		if (!a.recv_cq)
			a.recv_cq = h->cq[side];
		if (!a.qp_type)
			a.qp_type = IB_QPT_RC;
		if (!a.port_num)
			a.port_num = 1;
		qp = ib_create_qp(h->pd[side], &a);
		if (IS_ERR(qp))
			return failed(h, "ib_create_qp", (int)PTR_ERR(qp));
		h->qp[side] = qp;
	}
	ret = connect ? soft_qp_connect(h->qp[0], h->qp[1]) : 0;
	return ret ? failed(h, "soft_qp_connect", ret) : 0;
}

int two_hosts_open(struct two_hosts *h, const struct two_hosts_cfg *cfg)
{
	int ret, side;

	ret = two_hosts_devices(h, cfg->profile, cfg->name, cfg->loopback);
	for (side = 0; !ret && side < 2; side++)
		ret = two_hosts_side(h, side, cfg->cqe[side],
				     cfg->cq_thread[side] ? IB_POLL_WORKQUEUE :
							    IB_POLL_DIRECT);
	return ret ? ret : two_hosts_qps(h, cfg->attr, !cfg->no_connect);
}

/* Keep the first error. */
static void step(struct two_hosts *h, int *first, const char *what, int ret)
{
	if (ret && !*first) {
		*first = ret;
		h->failed = what;
	}
}

int two_hosts_close_objects(struct two_hosts *h)
{
	int side, first = 0;

	h->failed = NULL;
	for (side = 0; side < 2; side++)
		if (h->qp[side])
			step(h, &first, "ib_destroy_qp",
			     ib_destroy_qp(h->qp[side]));
	for (side = 0; side < 2; side++) {
		if (h->cq[side])
			step(h, &first, "ib_free_cq", ib_free_cq(h->cq[side]));
		if (h->pd[side])
			step(h, &first, "ib_dealloc_pd",
			     ib_dealloc_pd(h->pd[side]));
		h->qp[side] = NULL;
		h->cq[side] = NULL;
		h->pd[side] = NULL;
	}
	return first;
}

int two_hosts_close(struct two_hosts *h)
{
	int first = two_hosts_close_objects(h);

	if (h->dev[1] && h->dev[1] != h->dev[0])
		step(h, &first, "soft_device_destroy",
		     soft_device_destroy(h->dev[1]));
	if (h->dev[0])
		step(h, &first, "soft_device_destroy",
		     soft_device_destroy(h->dev[0]));
	if (h->fabric)
		step(h, &first, "soft_fabric_destroy",
		     soft_fabric_destroy(h->fabric));
	if (!first) {
		memset(h, 0, sizeof(*h));
	} else {
		const char *what = h->failed;

		memset(h, 0, sizeof(*h));
		h->failed = what;
	}
	return first;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdmarw-perf on an ibv device: two RC QPs on one device (rxe0, siw0,
 * mlx5_0...) connected to each other through <rdmarw/rdma_cm.h>, in one
 * process (the CM thread makes and accepts the passive side while the
 * caller waits), so that the same loop that drives two software devices drives real RDMA.
 */
#ifndef RDMARW_TOOLS_PERF_IBV_H
#define RDMARW_TOOLS_PERF_IBV_H

#include <rdmarw/ib_verbs.h>

#include <stddef.h>

/**
 * struct perf_ibv - the device and the connected pair
 * @dev: the device
 * @pd: the active side's PD (its local buffer is declared in its map)
 * @peer_pd: the passive side's PD (the remote buffer's MR)
 * @cq: the active side's CQ (IB_POLL_DIRECT)
 * @peer_cq: the passive side's CQ
 * @qp: the active side's QP: the one the R/W contexts post on
 * @peer_qp: the passive side's QP
 * @priv: the connections and the listener
 */
struct perf_ibv {
	struct ib_device *dev;
	struct ib_pd *pd, *peer_pd;
	struct ib_cq *cq, *peer_cq;
	struct ib_qp *qp, *peer_qp;
	void *priv;
};

/**
 * perf_ibv_device() - open an ibv device (to size the QP before the pair)
 * @name: the device's name
 *
 * Return: the device (perf_ibv_open() opens the same one), or an ERR_PTR:
 * -EOPNOTSUPP without the libibverbs backend, or rdmarw_ibv_open()'s.
 */
struct ib_device *perf_ibv_device(const char *name);

/**
 * perf_ibv_open() - open a device and connect two QPs on it
 * @p: filled in
 * @name: the device's name
 * @addr: the IP address its rdma_cm listens on
 * @attr: the active QP's attributes, as for ib_create_qp() (send_cq and
 *        recv_cq are set here)
 * @cqe: entries of the active side's CQ
 *
 * Return: 0, or a negative errno: -EOPNOTSUPP without the libibverbs
 * backend, -EINVAL for NULL arguments, -ENODEV for an unknown device, or
 * what a failed step returned (everything made is undone).
 */
int perf_ibv_open(struct perf_ibv *p, const char *name, const char *addr,
		  struct ib_qp_init_attr *attr, int cqe);

/**
 * perf_ibv_declare() - register the local buffer for the local DMA key
 * @p: an open pair
 * @buf: the buffer
 * @len: its length
 *
 * Return: 0, or the negative errno of rdmarw_ibv_declare().
 */
int perf_ibv_declare(struct perf_ibv *p, void *buf, size_t len);

/**
 * perf_ibv_close() - disconnect and free everything perf_ibv_open() made
 * @p: an open pair; MRs the caller registered on its PDs, and QPs it made
 *     on them, must be gone
 */
void perf_ibv_close(struct perf_ibv *p);

#endif /* RDMARW_TOOLS_PERF_IBV_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test helper for ibv devices: two RC QPs on one device connected to each
 * other through rdma_cm (a listener on the device's address; the passive
 * side is accepted on a thread while the calling thread connects), and
 * their orderly teardown.  Built only with the libibverbs backend.
 */
#ifndef RDMARW_TESTS_IBV_ENV_H
#define RDMARW_TESTS_IBV_ENV_H

#include <rdmarw/ib_verbs.h>

#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>

/**
 * struct ibv_pair - a connected pair of QPs
 * @l: the listener the passive side came through
 * @conn: the active side's connection
 * @peer_conn: the passive side's connection
 * @qp: the active side's QP
 * @peer_qp: the passive side's QP
 * @port: the port listened on
 */
struct ibv_pair {
	struct rdmarw_ibv_listener *l;
	struct rdmarw_ibv_conn *conn, *peer_conn;
	struct ib_qp *qp, *peer_qp;
	char port[16];
};

/**
 * ibv_pair_connect() - connect two QPs through rdma_cm
 * @p: the pair (zeroed by the call)
 * @addr: the device's IP address (rdma_cm finds the device from it)
 * @pd: the active side's PD
 * @attr: the active side's QP attributes (as ib_create_qp())
 * @peer_pd: the passive side's PD
 * @peer_attr: the passive side's QP attributes
 * @priv: private data the passive side sends back, or NULL
 * @priv_len: its length
 *
 * Listens on a port of its own choosing (the next free one of a range
 * that depends on the process id).  Both QPs are in RTS on success.
 *
 * Return: 0, or the negative errno of the first step that failed (then
 * everything made is destroyed again).
 */
int ibv_pair_connect(struct ibv_pair *p, const char *addr, struct ib_pd *pd,
		     struct ib_qp_init_attr *attr, struct ib_pd *peer_pd,
		     struct ib_qp_init_attr *peer_attr, const void *priv,
		     u8 priv_len);

/**
 * ibv_pair_destroy() - disconnect and destroy a pair
 * @p: a pair from ibv_pair_connect() (or a partly made one)
 *
 * The active side disconnects, the passive side answers; then both QPs,
 * both connections and the listener are destroyed.
 *
 * Return: 0, or the first negative errno of a destroy step.
 */
int ibv_pair_destroy(struct ibv_pair *p);

#endif /* RDMARW_HAVE_IBV */
#endif /* RDMARW_TESTS_IBV_ENV_H */

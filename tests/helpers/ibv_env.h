/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test helper for ibv devices: two RC QPs on one device connected to each
 * other through <rdmarw/rdma_cm.h> (over librdmacm: a listener on the
 * device's address whose CONNECT_REQUEST handler makes the passive QP and
 * accepts, while the active id resolves, makes its QP and connects from its
 * own handler), and their orderly teardown.  Built only with the libibverbs
 * backend.
 */
#ifndef RDMARW_TESTS_IBV_ENV_H
#define RDMARW_TESTS_IBV_ENV_H

#include <rdmarw/ib_verbs.h>

#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>
#include <rdmarw/rdma_cm.h>

#include <pthread.h>

/**
 * struct ibv_pair - a connected pair of QPs
 * @listen_id: the listener the passive side came through
 * @id: the active side's id
 * @peer_id: the passive side's (child) id
 * @qp: the active side's QP
 * @peer_qp: the passive side's QP
 * @port: the port listened on
 * @lock: the fields below, written by the handlers
 * @cond: a handler changed them
 * @up: ESTABLISHED events seen (2: both sides)
 * @down: DISCONNECTED events seen
 * @err: the first error event's status (or -ECONNREFUSED for a status 0)
 * @pdata: the private data the active side's ESTABLISHED carried
 * @pdata_len: its length
 * @req_pdata_len: the private data length of the CONNECT_REQUEST
 * @pd: the active side's PD (for its handler)
 * @attr: the active side's QP attributes
 * @peer_pd: the passive side's PD
 * @peer_attr: the passive side's QP attributes
 * @priv: what the passive side accepts with
 * @priv_len: its length
 */
struct ibv_pair {
	struct rdma_cm_id *listen_id, *id, *peer_id;
	struct ib_qp *qp, *peer_qp;
	u16 port;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int up, down, err;
	u8 pdata[256];
	u8 pdata_len;
	u8 req_pdata_len;
	struct ib_pd *pd, *peer_pd;
	struct ib_qp_init_attr *attr, *peer_attr;
	const void *priv;
	u8 priv_len;
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
 * Listens on a port the kernel picks.  Both QPs are in RTS on success.
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
 * The active side disconnects; once both sides saw DISCONNECTED (or after
 * 5 s) both QPs and all three ids are destroyed.
 *
 * Return: 0, or the first negative errno of a destroy step.
 */
int ibv_pair_destroy(struct ibv_pair *p);

#endif /* RDMARW_HAVE_IBV */
#endif /* RDMARW_TESTS_IBV_ENV_H */

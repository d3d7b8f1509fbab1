/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * White-box access for the lab tests to a PD's registration map and to the
 * posts' window before their queue's lock, without libibverbs' and
 * librdmacm's headers (which clash with rdmarw's own <rdmarw/rdma_cm.h> in
 * a test).
 */
#ifndef RDMARW_IBV_KEY_H
#define RDMARW_IBV_KEY_H

#include <rdmarw/ib_verbs.h>

/**
 * rdmarw__ibv_map_key() - the key of the map's registration covering a byte
 * @pd: a PD of an ibv device
 * @addr: the byte
 * @key: the registration's lkey (on siw its rkey too; rxe gives a
 *       registration without remote access an rkey of 0)
 *
 * Return: 0, -EINVAL for a PD of another provider, -ENOENT when no
 * registration covers @addr (none is made).
 */
int rdmarw__ibv_map_key(struct ib_pd *pd, const void *addr, u32 *key);

/*
 * Tests only (NULL otherwise, not an API): called by the post ops of
 * ibv_verbs.c after their unlocked checks of the QP's state, just before
 * they take their queue's lock (@send: the Send Queue's), to widen that
 * window at will.
 */
extern void (*rdmarw__ibv_post_test_hook)(struct ib_qp *qp, bool send);

/*
 * Tests only (NULL otherwise): called by rdma_disconnect() on an ibv
 * device (src/cm/cm_ibv_rdmacm.c) once librdmacm's rdma_disconnect()
 * returned, before the CM moves @qp to ERR, with the CM's lock held: it
 * may post to @qp, nothing else.
 */
extern void (*rdmarw__ibv_disconnect_test_hook)(struct ib_qp *qp);

#endif /* RDMARW_IBV_KEY_H */

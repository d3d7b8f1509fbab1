/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test helper for ibv devices, the set-up the lab tests share
 * (test_ibv_rw, test_ibv_srq, test_cm_ibv; rw_env.c connects with the pair): a
 * group of tests run on rxe0 and then siw0 at the lab's addresses; each
 * side's PD and CQ on the device; two RC QPs on one device connected to
 * each other through <rdmarw/rdma_cm.h> (over librdmacm: a listener on the
 * device's address whose CONNECT_REQUEST handler makes the passive QP and
 * accepts, while the active id resolves, makes its QP and connects from its
 * own handler), and their orderly teardown.  Everything but
 * ibv_lab_no_backend() is built only with the libibverbs backend.
 */
#ifndef RDMARW_TESTS_IBV_ENV_H
#define RDMARW_TESTS_IBV_ENV_H

#include <rdmarw/ib_verbs.h>

#include <stddef.h>

struct CMUnitTest;

/**
 * ibv_lab_no_backend() - main() of a lab test built without libibverbs
 *
 * Runs one test that skips, as on a machine without RDMA.
 *
 * Return: cmocka's status (0).
 */
int ibv_lab_no_backend(void);

#ifdef RDMARW_HAVE_IBV
#include <rdmarw/ibv.h>
#include <rdmarw/rdma_cm.h>

#include <pthread.h>

/*
 * The lab device the running group is on ("rxe0", "siw0") and the address
 * its rdma_cm listens on (NULL outside the lab: every test skips).
 */
extern const char *ibv_lab_dev;
extern const char *ibv_lab_addr;

/**
 * ibv_lab_run() - run a group of tests on rxe0, then on siw0
 * @name: the groups' name; the device's follows it ("ibv_rw rxe0")
 * @tests: the tests
 * @n: how many
 *
 * Opens every ibv device, sets ibv_lab_dev and ibv_lab_addr (from
 * LAB_RXE_ADDR, then LAB_SIW_ADDR) for each run of @tests, and closes the
 * devices at the end.
 *
 * Return: the failed tests, plus one when a device is still busy at exit.
 */
int ibv_lab_run(const char *name, const struct CMUnitTest *tests, size_t n);

/**
 * struct ibv_ends - the two sides of a test on the lab device
 * @dev: ibv_lab_dev
 * @pd: the active side's PD
 * @peer_pd: the passive side's
 * @cq: the active side's CQ
 * @peer_cq: the passive side's (polled directly)
 */
struct ibv_ends {
	struct ib_device *dev;
	struct ib_pd *pd, *peer_pd;
	struct ib_cq *cq, *peer_cq;
};

/**
 * ibv_ends_open() - the lab device, a PD and a CQ for each side
 * @e: the ends (zeroed by the call)
 * @cqe: each CQ's entries
 * @poll_ctx: how the active side's CQ is polled
 *
 * Asserts that each PD and CQ was made.
 *
 * Return: false when there is no lab device (not in the lab, or no such
 * device): the test skips.
 */
bool ibv_ends_open(struct ibv_ends *e, int cqe, enum ib_poll_context poll_ctx);

/**
 * ibv_ends_close() - free the CQs and the PDs of ibv_ends_open()
 * @e: the ends; their QPs and MRs are gone
 *
 * Asserts that each one is freed.
 */
void ibv_ends_close(struct ibv_ends *e);

/**
 * ibv_remote_mr() - register a buffer for the peer's READs and WRITEs
 * @pd: the PD
 * @buf: the buffer (its address is the MR's iova)
 * @len: its length
 *
 * Return: the MR (asserted to be one).
 */
struct ib_mr *ibv_remote_mr(struct ib_pd *pd, void *buf, size_t len);

/**
 * struct ibv_done - a cqe that records its completions
 * @cqe: what a work request carries (wr_cqe)
 * @calls: how often its done() ran
 * @wc: the last completion
 */
struct ibv_done {
	struct ib_cqe cqe;
	int calls;
	struct ib_wc wc;
};

/**
 * ibv_done_init() - zero @d and point its cqe's done() at the recorder
 * @d: the cqe to post with
 */
void ibv_done_init(struct ibv_done *d);

/**
 * ibv_done_wait() - process completions until @d's done() ran @n times
 * @cq: the CQ @d's work requests complete on (polled here when it is
 *      IB_POLL_DIRECT; otherwise its thread calls done())
 * @d: the cqe
 * @n: how many calls
 *
 * Gives up after 30 s (never expected) and asserts that there were @n.
 */
void ibv_done_wait(struct ib_cq *cq, struct ibv_done *d, int n);

/**
 * ibv_conn_param() - the connection parameters the lab tests use
 * @cp: filled
 * @priv: private data, or NULL
 * @len: its length
 *
 * One READ in flight each way, the longest retries.
 */
void ibv_conn_param(struct rdma_conn_param *cp, const void *priv, u8 len);

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

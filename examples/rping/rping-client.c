// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rping-client: the client side of rdma-core's rping protocol over
 * rdmarw's libibverbs backend.  Per ping it fills its source buffer with
 * "rdma-ping-N: " and a rotating alphabet, advertises it, waits for the
 * server's READ to be done, advertises its sink buffer, waits for the
 * server's WRITE and (with -V) checks that the two buffers agree.
 *
 * Usage: rping-client -a addr [-p port] [-C count] [-S size] [-v] [-V]
 */
#include "rping_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REMOTE_RW \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

struct client {
	struct rping_opts o;
	struct rping_cm cm;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	char *start_buf, *rdma_buf;
	struct ib_mr *start_mr, *rdma_mr;
	struct rping_msg rx, tx;
	struct rping_wait rx_w, tx_w;
};

/* rping's pattern: the header, then 'A'..'z' from a start that moves. */
static void fill(struct client *c, int ping, char *start)
{
	char ch = *start;
	int i = snprintf(c->start_buf, c->o.size, "rdma-ping-%d: ", ping);

	for (; i < (int)c->o.size; i++) {
		c->start_buf[i] = ch++;
		if (ch > 122)
			ch = 65;
	}
	if (++*start > 122)
		*start = 65;
	c->start_buf[c->o.size - 1] = '\0';
}

/* Advertise a buffer and wait for the server's answer. */
static int advertise(struct client *c, char *buf, struct ib_mr *mr)
{
	int ret;

	c->tx.buf = htobe64((uintptr_t)buf);
	c->tx.rkey = htobe32(mr->rkey);
	c->tx.size = htobe32(c->o.size);
	ret = rping_post_send(c->qp, &c->tx, &c->tx_w);
	if (!ret)
		ret = rping_wait(c->cq, &c->cm, &c->tx_w);
	if (!ret)
		ret = rping_wait(c->cq, &c->cm, &c->rx_w);
	if (!ret && c->rx_w.wc.byte_len != sizeof(c->rx))
		ret = -EPROTO;
	return ret ? ret : rping_post_recv(c->qp, &c->rx, &c->rx_w);
}

static int one_ping(struct client *c, int ping, char *start)
{
	int ret;

	fill(c, ping, start);
	ret = advertise(c, c->start_buf, c->start_mr);
	if (!ret)
		ret = advertise(c, c->rdma_buf, c->rdma_mr);
	if (ret)
		return ret;
	if (c->o.validate && memcmp(c->start_buf, c->rdma_buf, c->o.size)) {
		fprintf(stderr, "data mismatch on ping %d\n", ping);
		return -EBADMSG;
	}
	if (c->o.verbose)
		printf("ping data: %s\n", c->rdma_buf);
	return 0;
}

static struct ib_mr *reg(struct client *c, char **buf)
{
	*buf = calloc(1, c->o.size);
	if (!*buf)
		return ERR_PTR(-ENOMEM);
	return ib_reg_user_mr(c->pd, (uintptr_t)*buf, c->o.size,
			      (uintptr_t)*buf, REMOTE_RW);
}

static int setup(struct client *c)
{
	struct rdma_conn_param cp;
	struct ib_device *dev;
	int ret = rping_cm_resolve(&c->cm, c->o.addr, c->o.port);

	if (ret)
		return ret;
	dev = c->cm.id->device; /* the one that reaches the server */
	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd))
		return (int)PTR_ERR(c->pd);
	c->cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq))
		return (int)PTR_ERR(c->cq);
	c->qp = rping_make_qp(&c->cm, c->pd, c->cq);
	if (IS_ERR(c->qp))
		return (int)PTR_ERR(c->qp);
	c->start_mr = reg(c, &c->start_buf);
	if (IS_ERR(c->start_mr))
		return (int)PTR_ERR(c->start_mr);
	c->rdma_mr = reg(c, &c->rdma_buf);
	if (IS_ERR(c->rdma_mr))
		return (int)PTR_ERR(c->rdma_mr);
	ret = rping_post_recv(c->qp, &c->rx, &c->rx_w);
	rping_conn_param(&cp);
	if (!ret)
		ret = rdma_connect(c->cm.id, &cp);
	return ret ? ret : rping_cm_wait_up(&c->cm);
}

static void cleanup(struct client *c)
{
	rping_cm_close(&c->cm); /* destroys the QP too */
	if (!IS_ERR_OR_NULL(c->start_mr))
		ib_dereg_mr(c->start_mr);
	if (!IS_ERR_OR_NULL(c->rdma_mr))
		ib_dereg_mr(c->rdma_mr);
	if (!IS_ERR_OR_NULL(c->cq))
		ib_free_cq(c->cq);
	if (!IS_ERR_OR_NULL(c->pd))
		ib_dealloc_pd(c->pd);
	free(c->start_buf);
	free(c->rdma_buf);
	rdmarw_ibv_close_all();
	rping_soft_close();
}

int main(int argc, char **argv)
{
	struct client c;
	char start = 65;
	int ret, ping;

	memset(&c, 0, sizeof(c));
	if (rping_parse(argc, argv, &c.o) || !c.o.addr ||
	    (c.o.profile && !c.o.src)) {
		fprintf(stderr,
			"usage: %s -a addr [-p port] [-C count] "
			"[-S size] [-v] [-V] [-I src] [-P profile -I src]\n",
			argv[0]);
		return 2;
	}
	rping_src = c.o.src;
	ret = rping_soft_open(&c.o, c.o.src);
	if (ret)
		fprintf(stderr, "rping-client: -P %s: %s\n", c.o.profile,
			strerror(-ret));
	else
		ret = setup(&c);
	for (ping = 0; !ret && (!c.o.count || ping < c.o.count); ping++)
		ret = one_ping(&c, ping, &start);
	if (ret)
		fprintf(stderr, "rping-client: %s\n", strerror(-ret));
	cleanup(&c);
	return ret ? 1 : 0;
}

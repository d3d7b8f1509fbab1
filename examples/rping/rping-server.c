// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rping-server: the server side of rdma-core's rping protocol, written on
 * rdmarw's R/W API over the libibverbs backend.  Per ping the client
 * advertises its source buffer (SEND of address, rkey, size); the server
 * RDMA-READs it with an rdma_rw_ctx, answers with a SEND; the client
 * advertises its sink buffer; the server RDMA-WRITEs the string back with
 * another rdma_rw_ctx and answers again.  Serves one client and exits 0
 * when that client disconnects.
 *
 * Usage: rping-server [-a addr] [-p port] [-S size] [-v] [-V] [-C count]
 */
#include "rping_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct server {
	struct rping_opts o;
	struct rping_cm cm;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	char *buf;
	struct rping_msg rx, tx;
	struct rping_wait rx_w, tx_w;
};

/* One RDMA READ or WRITE of @len bytes of the buffer, by an R/W context. */
static int rw_xfer(struct server *s, u64 addr, u32 rkey, u32 len,
		   enum dma_data_direction dir)
{
	struct rdma_rw_ctx ctx;
	struct rping_wait w;
	struct scatterlist sg;
	int ret;

	sg_init_one(&sg, s->buf, len);
	ret = rdma_rw_ctx_init(&ctx, s->qp, 1, &sg, 1, 0, addr, rkey, dir);
	if (ret < 0)
		return ret;
	rping_wait_init(&w);
	ret = rdma_rw_ctx_post(&ctx, s->qp, 1, &w.cqe, NULL);
	if (!ret)
		ret = rping_wait(s->cq, &s->cm, &w);
	rdma_rw_ctx_destroy(&ctx, s->qp, 1, &sg, 1, dir);
	return ret;
}

/* Wait for the client's advertisement and post the next receive. */
static int next_adv(struct server *s, u64 *addr, u32 *rkey, u32 *len)
{
	int ret = rping_wait(s->cq, &s->cm, &s->rx_w);

	if (ret)
		return ret;
	if (s->rx_w.wc.byte_len != sizeof(s->rx))
		return -EPROTO;
	*addr = be64toh(s->rx.buf);
	*rkey = be32toh(s->rx.rkey);
	*len = be32toh(s->rx.size);
	if (!*len || *len > s->o.size)
		return -EMSGSIZE;
	return rping_post_recv(s->qp, &s->rx, &s->rx_w);
}

static int tell_client(struct server *s)
{
	int ret = rping_post_send(s->qp, &s->tx, &s->tx_w);

	return ret ? ret : rping_wait(s->cq, &s->cm, &s->tx_w);
}

static int one_ping(struct server *s)
{
	u64 addr;
	u32 rkey, len;
	int ret;

	ret = next_adv(s, &addr, &rkey, &len);
	if (!ret)
		ret = rw_xfer(s, addr, rkey, len, DMA_FROM_DEVICE);
	if (ret)
		return ret;
	s->buf[len - 1] = '\0';
	if (s->o.verbose)
		printf("server ping data: %s\n", s->buf);
	ret = tell_client(s);
	if (!ret)
		ret = next_adv(s, &addr, &rkey, &len);
	if (ret)
		return ret;
	/* Echo the string and its terminator, as rping does. */
	len = (u32)strnlen(s->buf, len - 1) + 1;
	ret = rw_xfer(s, addr, rkey, len, DMA_TO_DEVICE);
	return ret ? ret : tell_client(s);
}

static int setup(struct server *s)
{
	struct rdma_conn_param cp;
	struct ib_device *dev;
	int ret;

	ret = rping_cm_listen(&s->cm, s->o.addr, s->o.port);
	if (ret)
		return ret;
	dev = s->cm.id->device; /* the one the request came on */
	s->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(s->pd))
		return (int)PTR_ERR(s->pd);
	s->cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		return (int)PTR_ERR(s->cq);
	s->qp = rping_make_qp(&s->cm, s->pd, s->cq);
	if (IS_ERR(s->qp))
		return (int)PTR_ERR(s->qp);
	s->buf = calloc(1, s->o.size);
	if (!s->buf)
		return -ENOMEM;
	ret = rping_post_recv(s->qp, &s->rx, &s->rx_w);
	rping_conn_param(&cp);
	if (!ret)
		ret = rdma_accept(s->cm.id, &cp);
	return ret ? ret : rping_cm_wait_up(&s->cm);
}

static void cleanup(struct server *s)
{
	rping_cm_close(&s->cm); /* destroys the QP too */
	if (!IS_ERR_OR_NULL(s->cq))
		ib_free_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd); /* releases the registration map */
	free(s->buf);
	rdmarw_ibv_close_all();
	rping_soft_close();
}

int main(int argc, char **argv)
{
	struct server s;
	int ret, pings = 0;

	memset(&s, 0, sizeof(s));
	if (rping_parse(argc, argv, &s.o) || (s.o.profile && !s.o.addr)) {
		fprintf(stderr,
			"usage: %s [-a addr] [-p port] [-S size] "
			"[-v] [-V] [-C count] [-P profile -a addr]\n",
			argv[0]);
		return 2;
	}
	ret = rping_soft_open(&s.o, s.o.addr);
	if (ret)
		fprintf(stderr, "rping-server: -P %s: %s\n", s.o.profile,
			strerror(-ret));
	else
		ret = setup(&s);
	while (!ret) {
		ret = one_ping(&s);
		if (!ret)
			pings++;
	}
	if (ret == -ECONNRESET)
		ret = 0; /* the client is done */
	if (ret)
		fprintf(stderr, "rping-server: %s\n", strerror(-ret));
	else if (s.o.verbose)
		printf("rping-server: %d pings served\n", pings);
	cleanup(&s);
	return ret ? 1 : 0;
}

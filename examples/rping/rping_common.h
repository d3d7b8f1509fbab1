/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the rping server and client share: rping's wire message (a buffer
 * advertisement: address, rkey, size, each big-endian, sent by SEND), the
 * command line, and waiting for a completion while watching the connection.
 */
#ifndef RPING_COMMON_H
#define RPING_COMMON_H

#include <rdmarw/ibv.h>
#include <rdmarw/rw.h>

#include <stdbool.h>

/* rping's message: 16 bytes, as the stock rping sends them. */
struct rping_msg {
	__be64 buf;
	__be32 rkey;
	__be32 size;
};

struct rping_opts {
	const char *addr;
	const char *port;
	int count; /* pings (client); 0: until interrupted */
	unsigned int size;
	bool verbose;
	bool validate;
};

/*
 * struct rping_wait - one outstanding request's completion
 * @cqe: its ib_cqe (done() records the completion)
 * @done: set by done()
 * @wc: the completion
 */
struct rping_wait {
	struct ib_cqe cqe;
	bool done;
	struct ib_wc wc;
};

int rping_parse(int argc, char **argv, struct rping_opts *o);
void rping_wait_init(struct rping_wait *w);
/* 0 on a successful completion; -ECONNRESET when the peer disconnected,
 * -EIO on an error completion, -ETIMEDOUT after 30 s. */
int rping_wait(struct ib_cq *cq, struct rdmarw_ibv_conn *c,
	       struct rping_wait *w);
int rping_post_recv(struct ib_qp *qp, struct rping_msg *m,
		    struct rping_wait *w);
int rping_post_send(struct ib_qp *qp, struct rping_msg *m,
		    struct rping_wait *w);
struct ib_qp *rping_make_qp(struct rdmarw_ibv_conn *c, struct ib_pd *pd,
			    struct ib_cq *cq);

#endif /* RPING_COMMON_H */

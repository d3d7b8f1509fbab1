/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the rping server and client share: rping's wire message (a buffer
 * advertisement: address, rkey, size, each big-endian, sent by SEND), the
 * command line, the connection (through <rdmarw/rdma_cm.h>, whose handler
 * records what happened for the main thread), and waiting for a completion
 * while watching the connection.
 */
#ifndef RPING_COMMON_H
#define RPING_COMMON_H

#include <rdmarw/ibv.h>
#include <rdmarw/rdma_cm.h>
#include <rdmarw/rw.h>

#include <pthread.h>
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
	const char *src; /* -I: the client's source address */
	const char *profile; /* -P: a software device of this profile */
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

/* Where a connection is (enum order: later states are further on). */
enum rping_state {
	RPING_IDLE,
	RPING_ROUTE, /* client: address and route resolved */
	RPING_REQUEST, /* server: a client asked */
	RPING_UP, /* established */
	RPING_DOWN, /* disconnected */
	RPING_ERROR, /* an error event (@err) */
};

/*
 * struct rping_cm - the connection
 * @listen_id: the server's listener
 * @id: the connection's id (the server's: the request's child)
 * @lock: @state and @err (the handler runs on the CM thread)
 * @cond: @state changed
 * @state: enum rping_state
 * @err: the error event's status
 */
struct rping_cm {
	struct rdma_cm_id *listen_id, *id;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum rping_state state;
	int err;
};

/* Server: listen on @addr (NULL: any) and wait for a client's request. */
int rping_cm_listen(struct rping_cm *cm, const char *addr, const char *port);
/* Client: resolve the server's address and route. */
int rping_cm_resolve(struct rping_cm *cm, const char *addr, const char *port);
/* Wait until the connection is up (after rdma_accept()/rdma_connect()). */
int rping_cm_wait_up(struct rping_cm *cm);
/* Disconnect (if up), wait for DISCONNECTED, destroy QP and ids. */
void rping_cm_close(struct rping_cm *cm);
/* The connection parameters both sides use (rping's). */
void rping_conn_param(struct rdma_conn_param *cp);

int rping_parse(int argc, char **argv, struct rping_opts *o);
/*
 * -P PROFILE: a software device of that profile (siw-tcp: iWARP over TCP,
 * to another process or machine, or the kernel's siw) answering to @addr;
 * 0 without -P.  rping_soft_close() destroys it.
 */
int rping_soft_open(const struct rping_opts *o, const char *addr);
void rping_soft_close(void);
/* The source address of a client's resolution (-I), or none. */
extern const char *rping_src;
void rping_wait_init(struct rping_wait *w);
/* 0 on a successful completion; -ECONNRESET when the peer disconnected,
 * -EIO on an error completion, -ETIMEDOUT after 30 s. */
int rping_wait(struct ib_cq *cq, struct rping_cm *cm, struct rping_wait *w);
int rping_post_recv(struct ib_qp *qp, struct rping_msg *m,
		    struct rping_wait *w);
int rping_post_send(struct ib_qp *qp, struct rping_msg *m,
		    struct rping_wait *w);
/* rdma_create_qp() on the connection's id: the QP, or an ERR_PTR. */
struct ib_qp *rping_make_qp(struct rping_cm *cm, struct ib_pd *pd,
			    struct ib_cq *cq);

#endif /* RPING_COMMON_H */

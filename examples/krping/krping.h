/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * krping: the ping of the kernel's out-of-tree krping module, as a ULP
 * written only with rdma_cm.h, rw.h, ib_verbs.h and the kernel primitives.
 *
 * The ULP (krping.c) never names a provider: its device is the one rdma_cm
 * binds its id to (after address resolution on the client, in the
 * CONNECT_REQUEST on the server).  main() (krping_main.c) decides which
 * devices exist: two software devices in one process, or the real ones.
 */
#ifndef KRPING_H
#define KRPING_H

#include <rdmarw/compat.h>

#include <stdbool.h>
#include <sys/socket.h>

/* Exit statuses of the program (and what krping_exit_status() maps). */
#define KRPING_EXIT_OK 0
#define KRPING_EXIT_FAIL 1 /* I/O error, bad data, protocol error, timeout */
#define KRPING_EXIT_USAGE 2
#define KRPING_EXIT_REFUSED 3 /* REJECTED, UNREACHABLE, no address/route */

/**
 * struct krping_opts - what one end does
 * @addr: the server's address and port (the server binds it, the client
 *        connects to it)
 * @size: bytes per ping (the client's buffers; the server's buffer bounds
 *        what it accepts)
 * @count: pings the client makes
 * @validate: the client checks every byte that came back
 * @verbose: one line per ping
 * @user_mr: the client registers with ib_reg_user_mr() instead of
 *           ib_alloc_mr() + IB_WR_REG_MR (taken anyway when the device
 *           has no fast registration)
 * @timeout_ms: bound of every wait for the peer or the device
 */
struct krping_opts {
	struct sockaddr_storage addr;
	u32 size;
	int count;
	bool validate;
	bool verbose;
	bool user_mr;
	unsigned int timeout_ms;
};

/**
 * struct krping_stats - what one end did
 * @pings: pings completed (client: READ and WRITE round trips; server:
 *         WRITEs done)
 * @validated: pings whose data the client checked and found equal
 * @bytes_read: bytes the server RDMA READ from the client
 * @bytes_written: bytes the server RDMA WRITE to the client
 * @fast_reg: the client registered with IB_WR_REG_MR
 */
struct krping_stats {
	long pings;
	long validated;
	long long bytes_read;
	long long bytes_written;
	bool fast_reg;
};

struct krping_server;

/**
 * krping_server_start() - listen on @o->addr
 * @o: options (kept by reference until krping_server_stop())
 * @out: set to the server
 *
 * The first connection request is accepted and served on a work queue;
 * later ones are rejected while it runs.
 *
 * Return: 0, or a negative errno (of rdma_create_id(), rdma_bind_addr(),
 * rdma_listen(), -ENOMEM).
 */
int krping_server_start(const struct krping_opts *o,
			struct krping_server **out);

/**
 * krping_server_wait() - wait until one client has been served
 * @s: the server
 * @st: filled in with what the served connection did
 *
 * Return: 0 when a client connected and left after its pings; -ETIMEDOUT
 * when no request came within the timeout; the connection's error.
 */
int krping_server_wait(struct krping_server *s, struct krping_stats *st);

/**
 * krping_server_stop() - stop listening and free the server
 * @s: the server, or NULL
 *
 * Waits for a connection being served to end (its waits are bounded).
 */
void krping_server_stop(struct krping_server *s);

/**
 * krping_client() - connect to @o->addr and ping @o->count times
 * @o: options
 * @st: filled in with what was done
 *
 * Return: 0; -ECONNREFUSED (REJECTED), -EHOSTUNREACH (no address, no
 * route, UNREACHABLE), -ECONNRESET (CONNECT_ERROR or the server left),
 * -EBADMSG (data differ), -EPROTO, -ETIMEDOUT, -EIO (a work request
 * failed), or the errno of a verb.
 */
int krping_client(const struct krping_opts *o, struct krping_stats *st);

/**
 * krping_exit_status() - the program's exit status for a result
 * @err: 0 or a negative errno from the calls above
 *
 * Return: KRPING_EXIT_OK, KRPING_EXIT_REFUSED for refusals, else
 * KRPING_EXIT_FAIL.
 */
int krping_exit_status(int err);

#endif /* KRPING_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdmarw-nvmet's messages to its service manager (notify.c): systemd's
 * sd_notify protocol, written here so the program needs no libsystemd.
 */
#ifndef RDMARW_NVMET_NOTIFY_H
#define RDMARW_NVMET_NOTIFY_H

/* The longest message nvmet_notify() sends. */
#define NVMET_NOTIFY_MAX 1024

/**
 * nvmet_notify() - send a state change to the service manager
 * @fmt: printf format of newline-separated VAR=VALUE assignments
 *       ("READY=1", "STATUS=...", "STOPPING=1", "RELOADING=1")
 *
 * One datagram to the AF_UNIX socket $NOTIFY_SOCKET names: a path, or an
 * abstract name when it starts with '@'.  Blocks at most as long as one
 * sendto() on a datagram socket; never raises SIGPIPE.
 *
 * Return: 1 when sent; 0 when $NOTIFY_SOCKET is unset or empty (not run
 * by a service manager, nothing to do); -EINVAL for a $NOTIFY_SOCKET that
 * is neither a path nor an abstract name; -ENAMETOOLONG when it does not
 * fit a socket address; -EMSGSIZE when the message is longer than
 * NVMET_NOTIFY_MAX; another negative errno when the socket refused it.
 */
int nvmet_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * nvmet_notify_reloading() - tell the service manager a reload begins
 *
 * Sends RELOADING=1 with MONOTONIC_USEC (CLOCK_MONOTONIC, as systemd
 * wants it); send READY=1 (nvmet_notify()) when the reload is over,
 * whether it was taken or refused.
 *
 * Return: as nvmet_notify().
 */
int nvmet_notify_reloading(void);

#endif /* RDMARW_NVMET_NOTIFY_H */

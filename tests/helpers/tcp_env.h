/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loopback TCP for the tests of the software device's TCP transport (the
 * tests reach rdmarw__soft_tcp_attach() with these sockets, or put a proxy
 * between two pairs).  Asserts with cmocka: include cmocka first.
 */
#ifndef RDMARW_TESTS_TCP_ENV_H
#define RDMARW_TESTS_TCP_ENV_H

/**
 * tcp_loopback_pair() - two connected TCP sockets on 127.0.0.1
 * @fd: set to the connecting end ([0]) and the accepted end ([1])
 *
 * The listener (an ephemeral port) is closed before this returns; the
 * sockets are blocking, with no timeout: the caller sets what it needs.
 */
void tcp_loopback_pair(int fd[2]);

#endif

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers/tcp_env.h"

void tcp_loopback_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(l >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &len), 0);
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd[0] >= 0);
	assert_int_equal(connect(fd[0], (struct sockaddr *)&a, sizeof(a)), 0);
	fd[1] = accept(l, NULL, NULL);
	assert_true(fd[1] >= 0);
	close(l);
}

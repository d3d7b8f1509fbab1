// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sd_notify without libsystemd: the service manager passes the address
 * of an AF_UNIX datagram socket in $NOTIFY_SOCKET ("/run/..." or, for a
 * name in the abstract namespace, "@..."), and each state change is one
 * datagram of newline-separated assignments (sd_notify(3)).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "notify.h"

/* $NOTIFY_SOCKET as a socket address; 0 unset, 1 set, or -errno. */
static int notify_addr(struct sockaddr_un *sun, socklen_t *len)
{
	const char *e = getenv("NOTIFY_SOCKET");
	size_t n;

	if (!e || !*e)
		return 0;
	if (e[0] != '/' && e[0] != '@')
		return -EINVAL; /* vsock:... and others: not served */
	n = strlen(e);
	if (n >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, e, n);
	if (e[0] == '@') /* abstract: a leading NUL, no terminating one */
		sun->sun_path[0] = '\0';
	else
		n++;
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	return 1;
}

static int notify_send(const char *msg, size_t len)
{
	struct sockaddr_un sun;
	socklen_t alen = 0;
	ssize_t sent;
	int fd, ret;

	ret = notify_addr(&sun, &alen);
	if (ret <= 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sent = sendto(fd, msg, len, MSG_NOSIGNAL, (struct sockaddr *)&sun,
		      alen);
	ret = sent < 0 ? -errno : (size_t)sent == len ? 1 : -EIO;
	close(fd);
	return ret;
}

int nvmet_notify(const char *fmt, ...)
{
	char msg[NVMET_NOTIFY_MAX + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(msg))
		return -EMSGSIZE;
	return notify_send(msg, (size_t)n);
}

int nvmet_notify_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return nvmet_notify("RELOADING=1\nMONOTONIC_USEC=%llu",
			    (unsigned long long)ts.tv_sec * 1000000ULL +
				    (unsigned long long)ts.tv_nsec / 1000);
}

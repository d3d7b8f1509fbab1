// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet under systemd (issue 27, Running; nvme/target/notify.c):
 * the sd_notify datagrams on a path and on an abstract socket, refusals of
 * what is not a socket address, and the program itself (RDMARW_NVMET names
 * it) sending READY=1 with a STATUS= line once it serves, and STOPPING=1
 * on SIGTERM before it exits 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "notify.h"

/* A bound for a message that never comes (not a timing assertion). */
#define WAIT_MS 60000

static char sock_path[108];

/* An AF_UNIX datagram socket bound to @name ('@': abstract). */
static int bind_notify(const char *name)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, name);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			  strlen(name) + (name[0] == '/'));
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
	return fd;
}

/* The next datagram, NUL terminated; its length, or -1 when none came. */
static int recv_msg(int fd, char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, WAIT_MS) != 1)
		return -1;
	n = recv(fd, buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

static void test_not_under_systemd(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(nvmet_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(nvmet_notify("READY=1"), 0);
}

static void test_refusals(void **state)
{
	char lng[200], msg[NVMET_NOTIFY_MAX + 2];

	(void)state;
	setenv("NOTIFY_SOCKET", "run/notify", 1); /* relative */
	assert_int_equal(nvmet_notify("READY=1"), -EINVAL);
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	assert_int_equal(nvmet_notify("READY=1"), -EINVAL);
	memset(lng, 'a', sizeof(lng) - 1);
	lng[0] = '/';
	lng[sizeof(lng) - 1] = '\0';
	setenv("NOTIFY_SOCKET", lng, 1);
	assert_int_equal(nvmet_notify("READY=1"), -ENAMETOOLONG);
	setenv("NOTIFY_SOCKET", "/nonexistent-dir/notify", 1);
	assert_int_equal(nvmet_notify("READY=1"), -ENOENT);
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	assert_int_equal(nvmet_notify("STATUS=%s", msg), -EMSGSIZE);
	unsetenv("NOTIFY_SOCKET");
}

static void test_path_socket(void **state)
{
	char buf[NVMET_NOTIFY_MAX + 1];
	int fd;

	(void)state;
	snprintf(sock_path, sizeof(sock_path), "/tmp/nvmet-notify-%d",
		 (int)getpid());
	unlink(sock_path);
	fd = bind_notify(sock_path);
	assert_int_equal(nvmet_notify("READY=1\nSTATUS=%s", "serving"), 1);
	assert_int_equal(recv_msg(fd, buf, sizeof(buf)), 22);
	assert_string_equal(buf, "READY=1\nSTATUS=serving");
	assert_int_equal(nvmet_notify_reloading(), 1);
	assert_true(recv_msg(fd, buf, sizeof(buf)) > 0);
	assert_int_equal(strncmp(buf, "RELOADING=1\nMONOTONIC_USEC=", 27), 0);
	assert_true(strtoull(buf + 27, NULL, 10) > 0);
	close(fd);
	unlink(sock_path);
	unsetenv("NOTIFY_SOCKET");
}

static void test_abstract_socket(void **state)
{
	char name[64], buf[64];
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "@rdmarw-nvmet-notify-%d", (int)getpid());
	fd = bind_notify(name);
	assert_int_equal(nvmet_notify("STOPPING=1"), 1);
	assert_int_equal(recv_msg(fd, buf, sizeof(buf)), 10);
	assert_string_equal(buf, "STOPPING=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

/* rdmarw-nvmet: READY=1 and STATUS once it serves, STOPPING=1 on SIGTERM. */
static void test_program(void **state)
{
	const char *prog = getenv("RDMARW_NVMET");
	char name[64], buf[NVMET_NOTIFY_MAX + 1],
		stop_buf[NVMET_NOTIFY_MAX + 1];
	int fd, status, got, stop;
	pid_t pid;

	(void)state;
	if (!prog || !*prog)
		skip();
	snprintf(name, sizeof(name), "@rdmarw-nvmet-prog-%d", (int)getpid());
	fd = bind_notify(name);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execl(prog, prog, "--soft", "rxe", "--ram", "1M",
		      "--allow-any-host", (char *)NULL);
		_exit(127);
	}
	unsetenv("NOTIFY_SOCKET");
	/* the program is stopped before any assertion can end the test */
	got = recv_msg(fd, buf, sizeof(buf));
	kill(pid, SIGTERM);
	stop = recv_msg(fd, stop_buf, sizeof(stop_buf));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(got > 0);
	assert_non_null(strstr(buf, "READY=1\n"));
	assert_non_null(strstr(buf, "STATUS=serving 1 subsystem on 1 port"));
	assert_true(stop > 0);
	assert_non_null(strstr(stop_buf, "STOPPING=1"));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_under_systemd),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_path_socket),
		cmocka_unit_test(test_abstract_socket),
		cmocka_unit_test(test_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

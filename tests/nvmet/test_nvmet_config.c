// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet's configuration model (nvme/target/config.c, lifted out of
 * main.c for issue 27): the command line and a config file turn into
 * exactly these target options; refusals leave -EINVAL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static int args(struct nvmet_config *c, int argc, const char *const *argv)
{
	return nvmet_config_args(c, argc, (char **)argv);
}

static void test_command_line(void **state)
{
	static const char *const argv[] = {
		"rdmarw-nvmet",
		"--addr",
		"10.1.2.3",
		"--port",
		"4421",
		"--nqn",
		"nqn.2026-01.a:b",
		"--host",
		"nqn.2026-01.h:1",
		"--host",
		"nqn.2026-01.h:2",
		"--block-size",
		"4096",
		"--ram",
		"8M",
		"--readonly",
		"--ram",
		"1M",
		"--connect-timeout",
		"2500",
	};
	struct nvmet_config c;

	(void)state;
	nvmet_config_init(&c);
	assert_int_equal(args(&c, (int)(sizeof(argv) / sizeof(argv[0])), argv),
			 0);
	assert_string_equal(c.o.addr, "10.1.2.3");
	assert_int_equal(c.o.port, 4421);
	assert_string_equal(c.o.subnqn, "nqn.2026-01.a:b");
	assert_int_equal(c.o.nr_hosts, 2);
	assert_string_equal(c.o.hosts[1], "nqn.2026-01.h:2");
	assert_false(c.o.allow_any_host);
	assert_int_equal(c.nr_ns, 2);
	assert_int_equal(c.o.ns[0].type, NVMET_BACKEND_RAM);
	assert_int_equal(c.o.ns[0].size, 8u << 20);
	assert_int_equal(c.o.ns[0].block_size, 4096);
	assert_false(c.o.ns[0].readonly);
	assert_true(c.o.ns[1].readonly);
	assert_int_equal(c.o.connect_timeout_ms, 2500);
	assert_int_equal(nvmet_config_add_default_ns(&c), 0);
	assert_int_equal(c.nr_ns, 2); /* given: no default */
	nvmet_config_free(&c);
}

static void test_config_file(void **state)
{
	char path[] = "/tmp/nvmet-config-XXXXXX";
	struct nvmet_config c;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "addr = 10.9.8.7 # a comment\n\nallow-any-host\n"
		   "queue-size = 64\nfile-size = 1M\nfile = /srv/a.img\n");
	fclose(f);
	nvmet_config_init(&c);
	assert_int_equal(nvmet_config_read(&c, path), 0);
	assert_string_equal(c.o.addr, "10.9.8.7");
	assert_true(c.o.allow_any_host);
	assert_int_equal(c.o.max_queue_size, 64);
	assert_int_equal(c.o.ns[0].type, NVMET_BACKEND_FILE);
	assert_string_equal(c.o.ns[0].path, "/srv/a.img");
	assert_int_equal(c.o.ns[0].size, 1u << 20);
	nvmet_config_free(&c);

	/* the same key again is refused, and so is it on the command line */
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "queue-size = 32\n");
	fclose(f);
	nvmet_config_init(&c);
	assert_int_equal(nvmet_config_read(&c, path), -EINVAL);
	nvmet_config_free(&c);
	unlink(path);
}

static void test_refusals(void **state)
{
	static const char *const twice[] = { "p", "--addr", "10.0.0.1",
					     "--addr", "10.0.0.2" };
	static const char *const disc[] = {
		"p", "--nqn", "nqn.2014-08.org.nvmexpress.discovery"
	};
	static const char *const both[] = { "p", "--allow-any-host", "--host",
					    "nqn.2026-01.h:1" };
	static const char *const defaults[] = { "p", "--addr", "10.0.0.1" };
	struct nvmet_config c;

	(void)state;
	nvmet_config_init(&c);
	assert_int_equal(args(&c, 5, twice), -EINVAL);
	nvmet_config_free(&c);
	nvmet_config_init(&c);
	assert_int_equal(args(&c, 3, disc), -EINVAL);
	nvmet_config_free(&c);
	nvmet_config_init(&c);
	assert_int_equal(args(&c, 4, both), -EINVAL);
	nvmet_config_free(&c);
	/* no namespace given: one of 64 MiB in memory */
	nvmet_config_init(&c);
	assert_int_equal(args(&c, 3, defaults), 0);
	assert_int_equal(nvmet_config_add_default_ns(&c), 0);
	assert_int_equal(c.nr_ns, 1);
	assert_int_equal(c.o.ns[0].type, NVMET_BACKEND_RAM);
	assert_int_equal(c.o.ns[0].size, 64u << 20);
	assert_int_equal(c.o.nr_hosts, 0); /* none allowed by default */
	assert_false(c.o.allow_any_host);
	nvmet_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_line),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

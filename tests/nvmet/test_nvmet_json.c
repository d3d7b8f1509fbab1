// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nvmetcli's JSON read as rdmarw-nvmet's configuration (issue 27,
 * Configuration; nvme/target/config_json.c): subsystems with allowed
 * hosts, allow_any_host and namespaces, ports with their subsystems; a
 * target started from it admits what it says; malformed or unservable
 * files are refused.
 */
#include "nvmet_env.h"

#include "config.h"

static char img[2][64], json_path[64];

static void make_file(char *path, size_t len, off_t size)
{
	int fd;

	snprintf(path, len, "/tmp/nvmet-json-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static int read_json(struct nvmet_config *c, const char *text)
{
	FILE *f = fopen(json_path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	nvmet_config_init(c);
	return nvmet_config_read(c, json_path);
}

/* Written back as nvmetcli's JSON and read again: the same lists. */
static void round_trip(const struct nvmet_config *c)
{
	struct nvmet_config again;
	char out[64];
	FILE *f;
	u32 i, j;

	make_file(out, sizeof(out), 0);
	f = fopen(out, "w");
	assert_non_null(f);
	assert_int_equal(nvmet_config_write_json(&c->o, f), 0);
	fclose(f);
	nvmet_config_init(&again);
	assert_int_equal(nvmet_config_read(&again, out), 0);
	assert_int_equal(again.o.nr_subsys, c->o.nr_subsys);
	assert_int_equal(again.o.nr_ports, c->o.nr_ports);
	for (i = 0; i < c->o.nr_subsys; i++) {
		const struct nvmet_subsys_opts *a = &c->o.subsys[i],
					       *b = &again.o.subsys[i];

		assert_string_equal(a->nqn, b->nqn);
		assert_int_equal(a->allow_any_host, b->allow_any_host);
		assert_int_equal(a->nr_hosts, b->nr_hosts);
		for (j = 0; j < a->nr_hosts; j++)
			assert_string_equal(a->hosts[j], b->hosts[j]);
		if (a->serial)
			assert_string_equal(a->serial, b->serial);
		for (j = 0; j < NVMET_MAX_NAMESPACES; j++) {
			assert_int_equal(a->ns[j].type, b->ns[j].type);
			if (a->ns[j].type)
				assert_string_equal(a->ns[j].path,
						    b->ns[j].path);
		}
	}
	for (i = 0; i < c->o.nr_ports; i++) {
		assert_string_equal(c->o.ports[i].addr, again.o.ports[i].addr);
		assert_int_equal(c->o.ports[i].port, again.o.ports[i].port);
		assert_int_equal(c->o.ports[i].nr_subsys,
				 again.o.ports[i].nr_subsys);
	}
	nvmet_config_free(&again);
	unlink(out);
}

/* The quick start written as JSON; a namespace in memory cannot be. */
static void test_save_quick_start(void **state)
{
	static const char *const hosts[] = { "nqn.2026-01.h:1" };
	struct nvmet_target_opts o;
	struct nvmet_config c;
	char out[64];
	FILE *f;

	(void)state;
	make_file(img[0], sizeof(img[0]), 1 << 20);
	make_file(out, sizeof(out), 0);
	nvmet_target_opts_init(&o);
	o.addr = "10.0.0.2";
	o.port = 4421;
	o.subnqn = "nqn.2026-01.a:quick";
	o.hosts = hosts;
	o.nr_hosts = 1;
	f = fopen(out, "w");
	assert_non_null(f);
	assert_int_equal(nvmet_config_write_json(&o, f), -EINVAL); /* RAM */
	rewind(f);
	o.ns[0].type = NVMET_BACKEND_FILE;
	o.ns[0].path = img[0];
	assert_int_equal(nvmet_config_write_json(&o, f), 0);
	fclose(f);
	nvmet_config_init(&c);
	assert_int_equal(nvmet_config_read(&c, out), 0);
	assert_int_equal(c.o.nr_subsys, 1);
	assert_string_equal(c.o.subsys[0].nqn, "nqn.2026-01.a:quick");
	assert_string_equal(c.o.subsys[0].hosts[0], "nqn.2026-01.h:1");
	assert_string_equal(c.o.subsys[0].ns[0].path, img[0]);
	assert_string_equal(c.o.ports[0].addr, "10.0.0.2");
	assert_int_equal(c.o.ports[0].port, 4421);
	assert_string_equal(c.o.ports[0].subsys[0], "nqn.2026-01.a:quick");
	nvmet_config_free(&c);
	unlink(out);
	unlink(img[0]);
}

static void test_nvmetcli_json(void **state)
{
	static struct nv_env e;
	static struct nvmet_config c;
	struct nvmeh_opts o;
	struct nvmeh_ctrl *h;
	char text[4096];

	(void)state;
	make_file(img[0], sizeof(img[0]), 1 << 20);
	make_file(img[1], sizeof(img[1]), 2 << 20);
	make_file(json_path, sizeof(json_path), 0);
	snprintf(
		text, sizeof(text),
		"{\n \"hosts\": [ { \"nqn\": \"%s\" } ],\n"
		" \"ports\": [ { \"addr\": { \"adrfam\": \"ipv4\",\n"
		"   \"traddr\": \"10.0.0.2\", \"treq\": \"not specified\",\n"
		"   \"trsvcid\": \"4420\", \"trtype\": \"rdma\" },\n"
		"   \"portid\": 1, \"referrals\": [],\n"
		"   \"subsystems\": [ \"%s\", \"nqn.2026-01.io.rdmarw:b\" ] } ],\n"
		" \"subsystems\": [\n"
		"  { \"allowed_hosts\": [ \"%s\" ],\n"
		"    \"attr\": { \"allow_any_host\": \"0\", \"serial\": \"SN-A\" },\n"
		"    \"namespaces\": [ { \"device\": { \"nguid\": \"\",\n"
		"      \"path\": \"%s\" }, \"enable\": 1, \"nsid\": 1 } ],\n"
		"    \"nqn\": \"%s\" },\n"
		"  { \"allowed_hosts\": [], \"attr\": { \"allow_any_host\": \"1\" },\n"
		"    \"namespaces\": [\n"
		"     { \"device\": { \"path\": \"%s\" }, \"enable\": 1, \"nsid\": 2 },\n"
		"     { \"device\": { \"path\": \"/nonexistent\" }, \"enable\": 0,\n"
		"       \"nsid\": 3 } ],\n"
		"    \"nqn\": \"nqn.2026-01.io.rdmarw:b\" } ]\n}\n",
		NVMEH_DEFAULT_HOSTNQN, NV_NQN, NVMEH_DEFAULT_HOSTNQN, img[0],
		NV_NQN, img[1]);
	assert_int_equal(read_json(&c, text), 0);
	assert_int_equal(c.o.nr_subsys, 2);
	assert_int_equal(c.o.nr_ports, 1);
	assert_string_equal(c.o.subsys[0].nqn, NV_NQN);
	assert_string_equal(c.o.subsys[0].serial, "SN-A");
	assert_int_equal(c.o.subsys[0].nr_hosts, 1);
	assert_false(c.o.subsys[0].allow_any_host);
	assert_int_equal(c.o.subsys[0].ns[0].type, NVMET_BACKEND_FILE);
	assert_true(c.o.subsys[1].allow_any_host);
	assert_int_equal(c.o.subsys[1].ns[0].type, NVMET_BACKEND_NONE);
	assert_int_equal(c.o.subsys[1].ns[1].type, NVMET_BACKEND_FILE);
	assert_int_equal(c.o.subsys[1].ns[2].type, NVMET_BACKEND_NONE);
	assert_int_equal(c.o.ports[0].port, 4420);
	assert_int_equal(c.o.ports[0].nr_subsys, 2);
	assert_int_equal(nvmet_config_add_default_ns(&c), 0);
	round_trip(&c);

	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .no_connect = true, .topts = &c.o });
	e.c = nvmeh_ctrl_create(&e.o); /* the allowed host, subsystem A */
	assert_false(IS_ERR(e.c));
	assert_int_equal(nvmeh_ctrl_info(e.c)->ns_lbas * 512, 1 << 20);
	o = e.o;
	snprintf(o.hostnqn, sizeof(o.hostnqn), "nqn.2026-01.io.rdmarw:x");
	h = nvmeh_ctrl_create(&o); /* another host: not on A */
	assert_true(IS_ERR(h));
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_CONNECT_INVALID_HOST | NVME_SC_DNR);
	snprintf(o.subsysnqn, sizeof(o.subsysnqn), "nqn.2026-01.io.rdmarw:b");
	h = nvmeh_ctrl_create(&o); /* B allows any host */
	assert_false(IS_ERR(h));
	nvmeh_ctrl_destroy(h);
	nv_env_fini(&e);
	nvmet_config_free(&c);
	unlink(img[0]);
	unlink(img[1]);
	unlink(json_path);
}

static void test_refused_json(void **state)
{
	static const char *const bad[] = {
		"{ \"subsystems\": [ ], }", /* trailing comma */
		"{ \"subsystems\": \"a\" } x", /* text after */
		"[ ]", /* not an object */
		"{ \"a\": \"\x01\" }", /* control byte */
		"{ \"a\": \"\\u00e9\" }", /* not ASCII */
		"{ \"subsystems\": [ { \"nqn\": \"nqn.2026-01.a:b\" } ],"
		" \"ports\": [ { \"addr\": { \"trtype\": \"tcp\","
		" \"traddr\": \"10.0.0.2\" }, \"subsystems\": [\"x\"] } ] }",
		"{ \"subsystems\": [ { \"nqn\": \"nqn.2026-01.a:b\","
		" \"namespaces\": [ { \"nsid\": 17, \"device\":"
		" { \"path\": \"/x\" } } ] } ], \"ports\": [ { } ] }",
		"{ \"subsystems\": [ { \"nqn\": \"nqn.2026-01.a:b\" } ],"
		" \"ports\": [ { \"addr\": { \"trtype\": \"rdma\","
		" \"traddr\": \"10.0.0.2\", \"trsvcid\": \"99999\" },"
		" \"subsystems\": [\"nqn.2026-01.a:b\"] } ] }",
	};
	struct nvmet_config c;
	size_t i;

	(void)state;
	make_file(json_path, sizeof(json_path), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (read_json(&c, bad[i]) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		nvmet_config_free(&c);
	}
	/* nested deeper than 16 */
	assert_int_equal(read_json(&c, "{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]"
				       "]]]]]]]]]]}"),
			 -EINVAL);
	nvmet_config_free(&c);
	unlink(json_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_nvmetcli_json, nv_teardown),
		cmocka_unit_test(test_refused_json),
		cmocka_unit_test(test_save_quick_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

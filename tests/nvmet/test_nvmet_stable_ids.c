// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Identifiers unique per machine and stable (issue 27, Configuration;
 * nvme/target/config_ids.c): a namespace's UUID and NGUID and a
 * subsystem's serial derived from the machine's ID are the same for the
 * same inputs and differ for another machine, NQN, NSID or path; what the
 * configuration gives wins; --save-config's JSON keeps them; the target
 * reports the given ones (Identify Namespace, the NS descriptor list).
 */
#include "nvmet_env.h"

#include <unistd.h>

#include <limits.h>

#include <sys/stat.h>

#include "config.h"

#define ID_A "0123456789abcdef0123456789abcdef\n"
#define ID_B "0123456789abcdef0123456789abcdee\n"

static char file_a[64], file_b[64], img_path[64], json_path[64];

static void write_file(char *path, size_t len, const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/nvmet-ids-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_machine_id(void **state)
{
	u8 id[NVMET_MACHINE_ID_LEN];
	char bad[64];

	(void)state;
	write_file(file_a, sizeof(file_a), ID_A);
	assert_int_equal(nvmet_machine_id(file_a, id, sizeof(id)), 0);
	assert_int_equal(id[0], 0x01);
	assert_int_equal(id[15], 0xef);
	assert_int_equal(nvmet_machine_id(file_a, id, 8), -EINVAL);
	assert_int_equal(
		nvmet_machine_id("/nonexistent/machine-id", id, sizeof(id)),
		-ENOENT);
	write_file(bad, sizeof(bad), "uninitialized\n");
	assert_int_equal(nvmet_machine_id(bad, id, sizeof(id)), -EINVAL);
	unlink(bad);
	write_file(bad, sizeof(bad), "00000000000000000000000000000000\n");
	assert_int_equal(nvmet_machine_id(bad, id, sizeof(id)), -EINVAL);
	unlink(bad);
	write_file(bad, sizeof(bad), "0123456789ABCDEF0123456789ABCDEF\n");
	assert_int_equal(nvmet_machine_id(bad, id, sizeof(id)), -EINVAL);
	unlink(bad);
	write_file(bad, sizeof(bad), "0123456789abcdef0123456789abcdef0\n");
	assert_int_equal(nvmet_machine_id(bad, id, sizeof(id)), -EINVAL);
	unlink(bad);
	write_file(bad, sizeof(bad), "");
	assert_int_equal(nvmet_machine_id(bad, id, sizeof(id)), -ENODATA);
	unlink(bad);
	unlink(file_a);
}

static void test_derive(void **state)
{
	u8 m1[NVMET_MACHINE_ID_LEN], m2[NVMET_MACHINE_ID_LEN];
	u8 u1[16], n1[16], u2[16], n2[16];
	char s1[NVMET_SERIAL_LEN + 1], s2[NVMET_SERIAL_LEN + 1];
	const char *nqn = "nqn.2026-01.a:b";

	(void)state;
	memset(m1, 0x11, sizeof(m1));
	memcpy(m2, m1, sizeof(m2));
	m2[15] ^= 1;
	/* the same inputs: the same identifiers */
	assert_int_equal(nvmet_ns_ids_derive(m1, nqn, 1, "/srv/a.img", u1, n1),
			 0);
	assert_int_equal(nvmet_ns_ids_derive(m1, nqn, 1, "/srv/a.img", u2, n2),
			 0);
	assert_memory_equal(u1, u2, 16);
	assert_memory_equal(n1, n2, 16);
	assert_int_equal(u1[6] >> 4, 8); /* version 8 */
	assert_int_equal(u1[8] >> 6, 2); /* variant 10 */
	assert_memory_not_equal(u1, n1, 16);
	/* another machine, NSID, path or NQN: others */
	assert_int_equal(nvmet_ns_ids_derive(m2, nqn, 1, "/srv/a.img", u2, n2),
			 0);
	assert_memory_not_equal(u1, u2, 16);
	assert_memory_not_equal(n1, n2, 16);
	assert_int_equal(nvmet_ns_ids_derive(m1, nqn, 2, "/srv/a.img", u2, n2),
			 0);
	assert_memory_not_equal(n1, n2, 16);
	assert_int_equal(nvmet_ns_ids_derive(m1, nqn, 1, "/srv/b.img", u2, n2),
			 0);
	assert_memory_not_equal(n1, n2, 16);
	assert_int_equal(nvmet_ns_ids_derive(m1, nqn, 1, NULL, u2, n2), 0);
	assert_memory_not_equal(n1, n2, 16);
	assert_int_equal(nvmet_ns_ids_derive(m1, "nqn.2026-01.a:c", 1,
					     "/srv/a.img", u2, n2),
			 0);
	assert_memory_not_equal(n1, n2, 16);
	assert_int_equal(nvmet_ns_ids_derive(NULL, nqn, 1, NULL, u2, n2),
			 -EINVAL);
	assert_int_equal(nvmet_ns_ids_derive(m1, nqn, 0, NULL, u2, n2),
			 -EINVAL);

	assert_int_equal(nvmet_serial_derive(m1, nqn, s1), 0);
	assert_int_equal(strlen(s1), NVMET_SERIAL_LEN);
	assert_int_equal(strspn(s1, "0123456789abcdef"), NVMET_SERIAL_LEN);
	assert_int_equal(nvmet_serial_derive(m1, nqn, s2), 0);
	assert_string_equal(s1, s2);
	assert_int_equal(nvmet_serial_derive(m2, nqn, s2), 0);
	assert_string_not_equal(s1, s2);
	assert_int_equal(nvmet_serial_derive(m1, "nqn.2026-01.a:c", s2), 0);
	assert_string_not_equal(s1, s2);
}

static int args(struct nvmet_config *c, const char *serial)
{
	const char *argv[] = { "rdmarw-nvmet",
			       "--addr",
			       "10.0.0.2",
			       "--nqn",
			       "nqn.2026-01.a:ids",
			       "--ram",
			       "1M",
			       "--ram",
			       "1M",
			       "--serial",
			       serial };

	nvmet_config_init(c);
	return nvmet_config_args(c, serial ? 11 : 9, (char **)argv);
}

/* The command line's namespaces and serial, on two machines. */
static void test_fill_quick_start(void **state)
{
	struct nvmet_config a, b;
	static const u8 none[16];

	(void)state;
	write_file(file_a, sizeof(file_a), ID_A);
	write_file(file_b, sizeof(file_b), ID_B);
	assert_int_equal(args(&a, NULL), 0);
	assert_int_equal(nvmet_config_fill_ids(&a, file_a), 0);
	assert_false(a.random_ids);
	assert_non_null(a.o.serial);
	assert_int_equal(strlen(a.o.serial), NVMET_SERIAL_LEN);
	assert_memory_not_equal(a.o.ns[0].uuid, none, 16);
	assert_memory_not_equal(a.o.ns[0].nguid, none, 16);
	assert_memory_not_equal(a.o.ns[0].nguid, a.o.ns[1].nguid, 16);
	assert_memory_equal(a.o.ns[2].nguid, none, 16); /* no namespace 3 */

	/* the same machine, another start: the same */
	assert_int_equal(args(&b, NULL), 0);
	assert_int_equal(nvmet_config_fill_ids(&b, file_a), 0);
	assert_string_equal(a.o.serial, b.o.serial);
	assert_memory_equal(a.o.ns[0].uuid, b.o.ns[0].uuid, 16);
	assert_memory_equal(a.o.ns[1].nguid, b.o.ns[1].nguid, 16);
	nvmet_config_free(&b);

	/* another machine: others */
	assert_int_equal(args(&b, NULL), 0);
	assert_int_equal(nvmet_config_fill_ids(&b, file_b), 0);
	assert_string_not_equal(a.o.serial, b.o.serial);
	assert_memory_not_equal(a.o.ns[0].uuid, b.o.ns[0].uuid, 16);
	assert_memory_not_equal(a.o.ns[0].nguid, b.o.ns[0].nguid, 16);
	nvmet_config_free(&b);

	/* no machine ID: random, and two starts differ */
	assert_int_equal(args(&b, NULL), 0);
	assert_int_equal(nvmet_config_fill_ids(&b, "/nonexistent/id"), 0);
	assert_true(b.random_ids);
	assert_memory_not_equal(a.o.ns[0].nguid, b.o.ns[0].nguid, 16);
	nvmet_config_free(&b);

	/*
	 * no machine ID but a state directory: an ID of its own, made once
	 * (0600), so a restart (the lab's guest, a container) keeps them
	 */
	{
		char dir[] = "/tmp/nvmet-state-XXXXXX", kept[PATH_MAX];
		struct nvmet_config c2;
		struct stat st;

		assert_non_null(mkdtemp(dir));
		assert_int_equal(args(&b, NULL), 0);
		b.state_dir = dir;
		assert_int_equal(nvmet_config_fill_ids(&b, "/nonexistent/id"),
				 0);
		assert_false(b.random_ids);
		snprintf(kept, sizeof(kept), "%s/machine-id", dir);
		assert_string_equal(b.id_source, kept);
		assert_int_equal(stat(kept, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		assert_int_equal(args(&c2, NULL), 0);
		c2.state_dir = dir;
		assert_int_equal(nvmet_config_fill_ids(&c2, "/nonexistent/id"),
				 0);
		assert_string_equal(b.o.serial, c2.o.serial);
		assert_memory_equal(b.o.ns[0].nguid, c2.o.ns[0].nguid, 16);
		assert_memory_not_equal(a.o.ns[0].nguid, c2.o.ns[0].nguid, 16);
		nvmet_config_free(&c2);
		nvmet_config_free(&b);
		/* a machine ID wins over it */
		assert_int_equal(args(&b, NULL), 0);
		b.state_dir = dir;
		assert_int_equal(nvmet_config_fill_ids(&b, file_a), 0);
		assert_string_equal(b.id_source, file_a);
		assert_string_equal(a.o.serial, b.o.serial);
		nvmet_config_free(&b);
		unlink(kept);
		rmdir(dir);
	}

	/* --serial wins */
	assert_int_equal(args(&b, "SN-GIVEN"), 0);
	assert_int_equal(nvmet_config_fill_ids(&b, file_a), 0);
	assert_string_equal(b.o.serial, "SN-GIVEN");
	nvmet_config_free(&b);
	nvmet_config_free(&a);
	unlink(file_a);
	unlink(file_b);
}

static int read_json(struct nvmet_config *c, const char *text)
{
	write_file(json_path, sizeof(json_path), text);
	nvmet_config_init(c);
	return nvmet_config_read(c, json_path);
}

static const u8 given_uuid[16] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
				   0x4d, 0xef, 0x80, 0x11, 0x22, 0x33,
				   0x44, 0x55, 0x66, 0x77 };

/* nvmetcli's device.uuid wins; --save-config's JSON keeps every one. */
static void test_json_round_trip(void **state)
{
	struct nvmet_config c, again;
	char text[1024], out[64];
	static const u8 none[16];
	FILE *f;
	int fd;

	(void)state;
	write_file(file_a, sizeof(file_a), ID_A);
	write_file(img_path, sizeof(img_path), "");
	snprintf(text, sizeof(text),
		 "{ \"ports\": [ { \"addr\": { \"trtype\": \"rdma\",\n"
		 "  \"traddr\": \"10.0.0.2\" }, \"subsystems\": [\n"
		 "  \"nqn.2026-01.a:j\" ] } ], \"subsystems\": [ {\n"
		 "  \"nqn\": \"nqn.2026-01.a:j\", \"namespaces\": [\n"
		 "  { \"nsid\": 1, \"device\": { \"path\": \"%s\",\n"
		 "    \"uuid\": \"12345678-9abc-4def-8011-223344556677\" } },\n"
		 "  { \"nsid\": 2, \"device\": { \"path\": \"%s\",\n"
		 "    \"nguid\": \"\" } } ] } ] }\n",
		 img_path, img_path);
	assert_int_equal(read_json(&c, text), 0);
	unlink(json_path);
	assert_memory_equal(c.subsys[0].ns[0].uuid, given_uuid, 16);
	assert_memory_equal(c.subsys[0].ns[0].nguid, none, 16);
	assert_null(c.subsys[0].serial);
	assert_int_equal(nvmet_config_fill_ids(&c, file_a), 0);
	assert_memory_equal(c.subsys[0].ns[0].uuid, given_uuid, 16);
	assert_memory_not_equal(c.subsys[0].ns[0].nguid, none, 16);
	assert_memory_not_equal(c.subsys[0].ns[1].uuid, none, 16);
	assert_non_null(c.subsys[0].serial);

	/* written and read back (without a machine ID): the same */
	snprintf(out, sizeof(out), "/tmp/nvmet-ids-XXXXXX");
	fd = mkstemp(out);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(nvmet_config_write_json(&c.o, f), 0);
	fclose(f);
	nvmet_config_init(&again);
	assert_int_equal(nvmet_config_read(&again, out), 0);
	assert_int_equal(nvmet_config_fill_ids(&again, "/nonexistent/id"), 0);
	assert_string_equal(again.subsys[0].serial, c.subsys[0].serial);
	assert_memory_equal(again.subsys[0].ns[0].uuid, given_uuid, 16);
	assert_memory_equal(again.subsys[0].ns[0].nguid,
			    c.subsys[0].ns[0].nguid, 16);
	assert_memory_equal(again.subsys[0].ns[1].uuid, c.subsys[0].ns[1].uuid,
			    16);
	assert_memory_equal(again.subsys[0].ns[1].nguid,
			    c.subsys[0].ns[1].nguid, 16);
	nvmet_config_free(&again);
	nvmet_config_free(&c);
	unlink(out);

	/* not a UUID: refused */
	snprintf(
		text, sizeof(text),
		"{ \"ports\": [ { \"addr\": { \"trtype\": \"rdma\",\n"
		"  \"traddr\": \"10.0.0.2\" }, \"subsystems\": [\n"
		"  \"nqn.2026-01.a:j\" ] } ],\n"
		"  \"subsystems\": [ { \"nqn\": \"nqn.2026-01.a:j\",\n"
		"  \"namespaces\": [ { \"nsid\": 1, \"device\": {\n"
		"  \"path\": \"%s\", \"uuid\": \"12345678-9abc\" } } ] } ] }\n",
		img_path);
	assert_int_equal(read_json(&c, text), -EINVAL);
	nvmet_config_free(&c);
	unlink(json_path);
	unlink(img_path);
	unlink(file_a);
}

static void identify(struct nv_env *e, u8 cns, void *buf)
{
	struct nvmeh_request rq;

	memset(&rq, 0, sizeof(rq));
	rq.sqe[offsetof(struct nvme_common_command, opcode)] =
		nvme_admin_identify;
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, nsid), 1);
	nvme_put_le32(rq.sqe + offsetof(struct nvme_common_command, cdw10),
		      cns);
	rq.data = buf;
	rq.data_len = NVME_IDENTIFY_DATA_SIZE;
	assert_int_equal(nv_cmd(e, 0, &rq), 0);
}

/* The target reports the identifiers its options give. */
static void test_reported(void **state)
{
	static const char *const hosts[] = { NVMEH_DEFAULT_HOSTNQN };
	struct nvmet_target_opts to;
	struct nv_cfg cfg = { .topts = &to };
	struct nvme_id_ns *id;
	u8 buf[NVME_IDENTIFY_DATA_SIZE], nguid[16];
	struct nv_env e;
	int i;

	(void)state;
	for (i = 0; i < 16; i++)
		nguid[i] = (u8)(0xa0 + i);
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	to.ns[0].type = NVMET_BACKEND_RAM;
	to.ns[0].size = 1 << 20;
	memcpy(to.ns[0].uuid, given_uuid, 16);
	memcpy(to.ns[0].nguid, nguid, 16);
	to.hosts = hosts;
	to.nr_hosts = 1;
	nv_env_init(&e, "rxe", &cfg);
	identify(&e, NVME_ID_CNS_NS, buf);
	id = (struct nvme_id_ns *)buf;
	assert_memory_equal(id->nguid, nguid, 16);
	assert_memory_equal(id->eui64, nguid, 8);
	identify(&e, NVME_ID_CNS_NS_DESC_LIST, buf);
	/* UUID first: type 3, length 16, two reserved bytes, the UUID */
	assert_int_equal(buf[0], NVME_NIDT_UUID);
	assert_int_equal(buf[1], 16);
	assert_memory_equal(buf + 4, given_uuid, 16);
	assert_int_equal(buf[20], NVME_NIDT_NGUID);
	assert_memory_equal(buf + 24, nguid, 16);
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_machine_id),
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_fill_quick_start),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test_teardown(test_reported, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

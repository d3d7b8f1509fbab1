// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Several NVM subsystems and several ports (issue 27): each subsystem has
 * its own namespaces, a host reaches a subsystem only through a port that
 * lists it (Connect Invalid Parameter, pointing at the subsystem NQN,
 * otherwise, as the kernel's nvmet_find_get_subsys() refuses), and the
 * discovery log lists the subsystems of the port the host asked, then the
 * discovery subsystem itself.  Also: the I/O queue id is checked by
 * Connect against the controller, not by the RDMA CM exchange.
 */
#include "nvmet_env.h"

#define NQN_A "nqn.2026-01.io.rdmarw:subsys-a"
#define NQN_B "nqn.2026-01.io.rdmarw:subsys-b"
#define PORT_1 4420
#define PORT_2 4421

static struct nvmet_subsys_opts so[2];
static struct nvmet_port_opts po[2];
static const char *const only_b[] = { NQN_B };

/* Subsystem A (4 MiB) on port 1; B (8 MiB + 1 MiB) on ports 1 and 2. */
static void two_by_two(struct nv_env *e, struct nvmet_target_opts *to)
{
	struct nv_cfg cfg = { .no_connect = true, .topts = to };

	nvmet_target_opts_init(to);
	memset(so, 0, sizeof(so));
	memset(po, 0, sizeof(po));
	so[0].nqn = NQN_A;
	so[0].hosts = nv_hosts;
	so[0].nr_hosts = 1;
	so[0].ns[0].type = NVMET_BACKEND_RAM;
	so[0].ns[0].size = 4u << 20;
	so[1].nqn = NQN_B;
	so[1].allow_any_host = true;
	so[1].ns[0].type = NVMET_BACKEND_RAM;
	so[1].ns[0].size = 8u << 20;
	so[1].ns[1].type = NVMET_BACKEND_RAM;
	so[1].ns[1].size = 1u << 20;
	so[1].max_io_queues = 1;
	po[0].addr = "10.0.0.2";
	po[0].port = PORT_1;
	po[1].addr = "10.0.0.2";
	po[1].port = PORT_2;
	po[1].subsys = only_b;
	po[1].nr_subsys = 1;
	to->subsys = so;
	to->nr_subsys = 2;
	to->ports = po;
	to->nr_ports = 2;
	nv_env_init(e, "rxe", &cfg);
}

static struct nvmeh_ctrl *host_on(struct nv_env *e, u16 port, const char *nqn,
				  unsigned int nr_io_queues)
{
	struct nvmeh_opts o = nv_host_opts(e, port, nqn);

	o.nr_io_queues = nr_io_queues;
	return nvmeh_ctrl_create(&o);
}

static void test_subsystems_on_ports(void **state)
{
	static struct nv_env e;
	const struct nvmeh_info *info;
	struct nvmet_target_opts to;
	struct nvmeh_ctrl *a, *b, *bad;

	(void)state;
	two_by_two(&e, &to);
	a = host_on(&e, PORT_1, NQN_A, 2);
	assert_false(IS_ERR(a));
	info = nvmeh_ctrl_info(a);
	assert_string_equal((const char *)info->id_ctrl +
				    offsetof(struct nvme_id_ctrl, subnqn),
			    NQN_A);
	assert_int_equal(info->ns_lbas * info->lba_size, 4u << 20);
	assert_int_equal(info->nr_io_queues, 2);

	b = host_on(&e, PORT_2, NQN_B, 2);
	assert_false(IS_ERR(b));
	info = nvmeh_ctrl_info(b);
	assert_string_equal((const char *)info->id_ctrl +
				    offsetof(struct nvme_id_ctrl, subnqn),
			    NQN_B);
	assert_int_equal(info->ns_lbas * info->lba_size, 8u << 20);
	assert_int_equal(nvme_get_le32(info->id_ctrl +
				       offsetof(struct nvme_id_ctrl, nn)),
			 NVMET_MAX_NAMESPACES);
	assert_int_equal(info->nr_io_queues, 1); /* B grants one */

	/* A is not on port 2: refused as an unknown subsystem */
	bad = host_on(&e, PORT_2, NQN_A, 1);
	assert_true(IS_ERR(bad));
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR);

	nvmeh_ctrl_destroy(a);
	nvmeh_ctrl_destroy(b);
	nv_env_fini(&e);
}

/* The entries of a discovery log read through @port. */
static void check_disc(struct nv_env *e, u16 port, const char *const *nqns,
		       u32 nr)
{
	const struct nvmf_disc_rsp_page_entry *ent;
	const struct nvmf_disc_rsp_page_hdr *hdr;
	struct nvmeh_ctrl *d;
	char svc[8];
	u8 *buf;
	u32 i;

	d = host_on(e, port, NVME_DISC_SUBSYS_NAME, 0);
	assert_false(IS_ERR(d));
	buf = calloc(1, 4096);
	assert_non_null(buf);
	assert_int_equal(nv_disc_log(d, buf, 4096), 0);
	hdr = (const void *)buf;
	ent = (const void *)(hdr + 1);
	assert_int_equal(le64_to_cpu(hdr->numrec), nr + 1);
	snprintf(svc, sizeof(svc), "%u", port);
	for (i = 0; i <= nr; i++) {
		assert_string_equal(ent[i].subnqn,
				    i < nr ? nqns[i] : NVME_DISC_SUBSYS_NAME);
		assert_int_equal(ent[i].subtype,
				 i < nr ? NVME_NQN_NVME : NVME_NQN_CURR);
		assert_string_equal(ent[i].trsvcid, svc);
		assert_string_equal(ent[i].traddr, "10.0.0.2");
		assert_int_equal(le16_to_cpu(ent[i].portid),
				 port == PORT_1 ? 1 : 2);
	}
	/* nothing past the last entry */
	for (i = (u32)(sizeof(*hdr) + (nr + 1) * sizeof(*ent)); i < 4096; i++)
		assert_int_equal(buf[i], 0);
	free(buf);
	nvmeh_ctrl_destroy(d);
}

static void test_discovery_per_port(void **state)
{
	static const char *const both[] = { NQN_A, NQN_B };
	static struct nv_env e;
	struct nvmet_target_opts to;

	(void)state;
	two_by_two(&e, &to);
	check_disc(&e, PORT_1, both, 2);
	check_disc(&e, PORT_2, only_b, 1);
	nv_env_fini(&e);
}

/* Lists the target refuses. */
static void test_bad_lists(void **state)
{
	struct nvmet_target_opts to;
	struct nvmet_subsys_opts s[2];
	struct nvmet_port_opts p;
	static const char *const unknown[] = { "nqn.2026-01.io.rdmarw:none" };

	(void)state;
	nvmet_target_opts_init(&to);
	memset(s, 0, sizeof(s));
	s[0].nqn = NQN_A;
	s[0].ns[0].type = NVMET_BACKEND_RAM;
	s[0].ns[0].size = 1u << 20;
	s[1] = s[0];
	to.addr = "10.0.0.2";
	to.subsys = s;
	to.nr_subsys = 2; /* the same NQN twice */
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	s[1].nqn = NQN_B;
	s[1].ns[0].type = NVMET_BACKEND_NONE; /* no namespace */
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	s[1].ns[0].type = NVMET_BACKEND_RAM;
	to.nr_subsys = NVMET_MAX_SUBSYS + 1;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.nr_subsys = 2;
	memset(&p, 0, sizeof(p));
	p.addr = "10.0.0.2";
	p.subsys = unknown; /* a subsystem the target does not have */
	p.nr_subsys = 1;
	to.ports = &p;
	to.nr_ports = 1;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.ports = NULL; /* a count without an array */
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_subsystems_on_ports,
					  nv_teardown),
		cmocka_unit_test_teardown(test_discovery_per_port, nv_teardown),
		cmocka_unit_test(test_bad_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

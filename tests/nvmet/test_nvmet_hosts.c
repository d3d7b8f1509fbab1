// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Allowed hosts per subsystem, none by default (issue 27), as the kernel's
 * nvmet_host_allowed() in nvmet_alloc_ctrl(): a Connect from a host the
 * subsystem does not list is refused with Connect Invalid Host and DNR
 * (0x4184 in the status field), the result's IATTR/IPO pointing at the
 * host NQN in the Connect data; allow_any_host admits everyone; the
 * discovery subsystem admits everyone and its log shows a host only the
 * subsystems it may connect to.
 */
#include "nvmet_env.h"

#define OTHER \
	"nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000aa"
#define NQN_B "nqn.2026-01.io.rdmarw:other-subsys"

/* A target of NV_NQN (1 MiB) allowing @hosts (or any host). */
static void start(struct nv_env *e, struct nvmet_target_opts *to,
		  const char *const *hosts, u32 nr, bool any)
{
	nvmet_target_opts_init(to);
	to->addr = "10.0.0.2";
	to->port = NV_PORT;
	to->subnqn = NV_NQN;
	to->ns[0].size = 1u << 20;
	to->hosts = hosts;
	to->nr_hosts = nr;
	to->allow_any_host = any;
	nv_env_init(e, "rxe",
		    &(struct nv_cfg){ .no_connect = true, .topts = to });
}

static struct nvmeh_ctrl *connect_as(struct nv_env *e, const char *hostnqn,
				     const char *subnqn)
{
	struct nvmeh_opts o = nv_host_opts(e, NV_PORT, subnqn);

	snprintf(o.hostnqn, sizeof(o.hostnqn), "%s", hostnqn);
	if (!strcmp(subnqn, NVME_DISC_SUBSYS_NAME))
		o.nr_io_queues = 0;
	return nvmeh_ctrl_create(&o);
}

static void assert_refused(struct nvmeh_ctrl *c)
{
	assert_true(IS_ERR(c));
	assert_int_equal(PTR_ERR(c), -EREMOTEIO);
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_CONNECT_INVALID_HOST | NVME_SC_DNR);
	assert_int_equal((u32)nvmeh_last_result(),
			 IPO_IATTR_CONNECT_DATA(
				 offsetof(struct nvmf_connect_data, hostnqn)));
}

/* No host listed: nobody connects. */
static void test_none_by_default(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nvmet_target_stats st;

	(void)state;
	start(&e, &to, NULL, 0, false);
	assert_refused(connect_as(&e, NVMEH_DEFAULT_HOSTNQN, NV_NQN));
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.ctrls_created, 0);
	nv_env_fini(&e);
}

/* Listed hosts connect, another is refused; any host when allowed. */
static void test_listed_hosts(void **state)
{
	static const char *const hosts[] = { OTHER, NVMEH_DEFAULT_HOSTNQN };
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nvmeh_ctrl *a, *b;

	(void)state;
	start(&e, &to, hosts, 2, false);
	a = connect_as(&e, NVMEH_DEFAULT_HOSTNQN, NV_NQN);
	assert_false(IS_ERR(a));
	b = connect_as(&e, OTHER, NV_NQN);
	assert_false(IS_ERR(b));
	assert_refused(
		connect_as(&e, "nqn.2026-01.io.rdmarw:stranger", NV_NQN));
	/* a prefix of a listed NQN is another NQN */
	assert_refused(
		connect_as(&e, "nqn.2014-08.org.nvmexpress:uuid:", NV_NQN));
	nvmeh_ctrl_destroy(a);
	nvmeh_ctrl_destroy(b);
	nv_env_fini(&e);

	start(&e, &to, NULL, 0, true);
	a = connect_as(&e, "nqn.2026-01.io.rdmarw:stranger", NV_NQN);
	assert_false(IS_ERR(a));
	nvmeh_ctrl_destroy(a);
	nv_env_fini(&e);
}

/* Allowed hosts beside allow_any_host, or not NQNs: refused options. */
static void test_bad_host_opts(void **state)
{
	static const char *const one[] = { OTHER };
	static const char *const twice[] = { OTHER, OTHER };
	static const char *const ctl[] = { "nqn.2026-01.x:\x01" };
	static const char *const empty[] = { "" };
	struct nvmet_target_opts to;

	(void)state;
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.hosts = one;
	to.nr_hosts = 1;
	to.allow_any_host = true;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.allow_any_host = false;
	to.hosts = twice;
	to.nr_hosts = 2;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.hosts = ctl;
	to.nr_hosts = 1;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.hosts = empty;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.hosts = NULL;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
}

/* The discovery log shows a host the subsystems it may connect to. */
static void test_discovery_filtered(void **state)
{
	static const char *const only_default[] = { NVMEH_DEFAULT_HOSTNQN };
	static const char *const only_other[] = { OTHER };
	static struct nvmet_subsys_opts so[2];
	static struct nv_env e;
	const struct nvmf_disc_rsp_page_entry *ent;
	struct nvmet_target_opts to;
	struct nvmeh_ctrl *d;
	u8 *buf;

	(void)state;
	memset(so, 0, sizeof(so));
	so[0].nqn = NV_NQN;
	so[0].ns[0].type = NVMET_BACKEND_RAM;
	so[0].ns[0].size = 1u << 20;
	so[0].hosts = only_default;
	so[0].nr_hosts = 1;
	so[1] = so[0];
	so[1].nqn = NQN_B;
	so[1].hosts = only_other;
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subsys = so;
	to.nr_subsys = 2;
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .no_connect = true, .topts = &to });
	buf = calloc(1, 4096);
	assert_non_null(buf);
	ent = (const void *)(buf + sizeof(struct nvmf_disc_rsp_page_hdr));

	d = connect_as(&e, OTHER, NVME_DISC_SUBSYS_NAME); /* anyone */
	assert_false(IS_ERR(d));
	assert_int_equal(nv_disc_log(d, buf, 4096), 0);
	assert_int_equal(
		le64_to_cpu(((struct nvmf_disc_rsp_page_hdr *)buf)->numrec), 2);
	assert_string_equal(ent[0].subnqn, NQN_B);
	assert_string_equal(ent[1].subnqn, NVME_DISC_SUBSYS_NAME);
	nvmeh_ctrl_destroy(d);

	memset(buf, 0, 4096);
	d = connect_as(&e, "nqn.2026-01.io.rdmarw:stranger",
		       NVME_DISC_SUBSYS_NAME);
	assert_false(IS_ERR(d));
	assert_int_equal(nv_disc_log(d, buf, 4096), 0);
	assert_int_equal(
		le64_to_cpu(((struct nvmf_disc_rsp_page_hdr *)buf)->numrec), 1);
	assert_string_equal(ent[0].subnqn, NVME_DISC_SUBSYS_NAME);
	nvmeh_ctrl_destroy(d);

	assert_refused(connect_as(&e, OTHER, NV_NQN));
	d = connect_as(&e, OTHER, NQN_B);
	assert_false(IS_ERR(d));
	nvmeh_ctrl_destroy(d);
	free(buf);
	nv_env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_none_by_default, nv_teardown),
		cmocka_unit_test_teardown(test_listed_hosts, nv_teardown),
		cmocka_unit_test(test_bad_host_opts),
		cmocka_unit_test_teardown(test_discovery_filtered, nv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

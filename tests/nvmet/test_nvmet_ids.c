// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Identifiers checked (issue 27): NQNs and serial numbers are 1 to their
 * length of printable ASCII (nvme/common/nvme_ids.c), a wire NQN field
 * hides nothing behind its NUL; a Connect whose NQN field is not such is
 * refused with Invalid Parameter pointing at the field; a target's
 * options with such an NQN or serial, or a namespace of less than one
 * block, are refused.
 */
#include "nvmet_env.h"

#include "nvme_ids.h"

static void test_nqn_rules(void **state)
{
	char field[NVMF_NQN_FIELD_LEN], lng[NVMF_NQN_SIZE + 2];

	(void)state;
	assert_true(nvme_nqn_valid("nqn.2014-08.org.nvmexpress:uuid:x"));
	assert_false(nvme_nqn_valid(NULL));
	assert_false(nvme_nqn_valid(""));
	assert_false(nvme_nqn_valid("nqn.a:\x1b[2J")); /* a control byte */
	assert_false(nvme_nqn_valid("nqn.a:\x7f"));
	assert_false(nvme_nqn_valid("nqn.a:\xc3\xa9"));
	memset(lng, 'a', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	assert_false(nvme_nqn_valid(lng)); /* 224 bytes */
	lng[NVMF_NQN_SIZE] = '\0';
	assert_true(nvme_nqn_valid(lng)); /* 223 */

	memset(field, 0, sizeof(field));
	strcpy(field, "nqn.2026-01.a:b");
	assert_true(nvme_nqn_field_valid(field));
	field[100] = 'x'; /* behind the NUL */
	assert_false(nvme_nqn_field_valid(field));
	memset(field, 'a', sizeof(field)); /* no NUL at all */
	assert_false(nvme_nqn_field_valid(field));
	memset(field, 0, sizeof(field));
	assert_false(nvme_nqn_field_valid(field)); /* empty */
	memset(field, 'a', NVMF_NQN_SIZE + 1); /* 224 bytes, then NULs */
	assert_false(nvme_nqn_field_valid(field));

	assert_true(nvme_serial_valid("SN 0001"));
	assert_true(nvme_serial_valid("12345678901234567890"));
	assert_false(nvme_serial_valid("123456789012345678901"));
	assert_false(nvme_serial_valid(""));
	assert_false(nvme_serial_valid("sn\n"));
	assert_false(nvme_serial_valid(NULL));
}

static struct nvmeh_ctrl *connect_as(struct nv_env *e, const char *hostnqn)
{
	struct nvmeh_opts o = e->o;

	memset(o.hostnqn, 0, sizeof(o.hostnqn));
	memcpy(o.hostnqn, hostnqn, strnlen(hostnqn, sizeof(o.hostnqn) - 1));
	return nvmeh_ctrl_create(&o);
}

static void assert_bad_field(struct nvmeh_ctrl *c, size_t field)
{
	assert_true(IS_ERR(c));
	assert_int_equal(nvmeh_last_status(NULL),
			 NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR);
	assert_int_equal((u32)nvmeh_last_result(),
			 IPO_IATTR_CONNECT_DATA(field));
}

/* Host NQNs that are no NQN: refused before any ACL is looked at. */
static void test_connect_bad_nqn(void **state)
{
	static struct nv_env e;
	struct nvmet_target_opts to;
	struct nvmet_target_stats st;
	char lng[240];

	(void)state;
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.port = NV_PORT;
	to.subnqn = NV_NQN;
	to.ns[0].size = 1u << 20;
	to.allow_any_host = true;
	nv_env_init(&e, "rxe",
		    &(struct nv_cfg){ .no_connect = true, .topts = &to });
	assert_bad_field(connect_as(&e, "nqn.2026-01.a:\x01"),
			 offsetof(struct nvmf_connect_data, hostnqn));
	memset(lng, 'n', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	assert_bad_field(connect_as(&e, lng),
			 offsetof(struct nvmf_connect_data, hostnqn));
	assert_int_equal(nvmet_target_get_stats(e.t, &st), 0);
	assert_int_equal(st.ctrls_created, 0);
	/* a good one still connects */
	e.c = connect_as(&e, "nqn.2026-01.a:good");
	assert_false(IS_ERR(e.c));
	nv_env_fini(&e);
}

static void test_bad_ids_in_opts(void **state)
{
	struct nvmet_target_opts to;

	(void)state;
	nvmet_target_opts_init(&to);
	to.addr = "10.0.0.2";
	to.allow_any_host = true;
	to.subnqn = "nqn.2026-01.a:\x7f";
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.subnqn = NVME_DISC_SUBSYS_NAME;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.subnqn = NULL;
	to.serial = "SN\x07";
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.serial = "";
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.serial = NULL;
	/* a namespace of less than one block */
	to.ns[0].size = 511;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
	to.ns[0].size = 2048;
	to.ns[0].block_size = 4096;
	assert_int_equal(PTR_ERR(nvmet_target_create(&to)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nqn_rules),
		cmocka_unit_test_teardown(test_connect_bad_nqn, nv_teardown),
		cmocka_unit_test(test_bad_ids_in_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The host's wire constants (nvmet/host/nvmeh_wire.h, byte offsets and
 * values) checked against the target's definitions (nvmet/nvme_proto.h,
 * the kernel's structs and names): one spec, two spellings, no drift.
 */
#ifndef RDMARW_TESTS_NV_WIRE_CHECK_H
#define RDMARW_TESTS_NV_WIRE_CHECK_H

#include <stddef.h>

#include "nvme_host.h"
#include "nvme_proto.h"

#define NV_SAME(a, b) _Static_assert((long)(a) == (long)(b), #a " != " #b)

NV_SAME(NVMEH_SQE_SIZE, sizeof(struct nvme_command));
NV_SAME(NVMEH_CQE_SIZE, sizeof(struct nvme_completion));
NV_SAME(NVMEH_CONNECT_DATA_SIZE, sizeof(struct nvmf_connect_data));
NV_SAME(NVMEH_SQE_DPTR, offsetof(struct nvme_common_command, dptr));
NV_SAME(NVMEH_SQE_CDW10, offsetof(struct nvme_common_command, cdw10));
NV_SAME(NVMEH_SQE_NSID, offsetof(struct nvme_common_command, nsid));
NV_SAME(NVMEH_CONNECT_QID, offsetof(struct nvmf_connect_command, qid));
NV_SAME(NVMEH_CONNECT_SQSIZE, offsetof(struct nvmf_connect_command, sqsize));
NV_SAME(NVMEH_CONNECT_KATO, offsetof(struct nvmf_connect_command, kato));
NV_SAME(NVMEH_PROP_OFFSET, offsetof(struct nvmf_property_get_command, offset));
NV_SAME(NVMEH_PROP_VALUE, offsetof(struct nvmf_property_set_command, value));
NV_SAME(NVMEH_CDATA_CNTLID, offsetof(struct nvmf_connect_data, cntlid));
NV_SAME(NVMEH_CDATA_SUBNQN, offsetof(struct nvmf_connect_data, subsysnqn));
NV_SAME(NVMEH_CDATA_HOSTNQN, offsetof(struct nvmf_connect_data, hostnqn));
NV_SAME(NVMEH_CQE_CID, offsetof(struct nvme_completion, command_id));
NV_SAME(NVMEH_CQE_STATUS, offsetof(struct nvme_completion, status));
NV_SAME(NVMEH_IDC_MDTS, offsetof(struct nvme_id_ctrl, mdts));
NV_SAME(NVMEH_IDC_SGLS, offsetof(struct nvme_id_ctrl, sgls));
NV_SAME(NVMEH_IDC_IOCCSZ, offsetof(struct nvme_id_ctrl, ioccsz));
NV_SAME(NVMEH_IDC_ICDOFF, offsetof(struct nvme_id_ctrl, icdoff));
NV_SAME(NVMEH_IDC_MAXCMD, offsetof(struct nvme_id_ctrl, maxcmd));
NV_SAME(NVMEH_IDC_SUBNQN, offsetof(struct nvme_id_ctrl, subnqn));
NV_SAME(NVMEH_IDNS_FLBAS, offsetof(struct nvme_id_ns, flbas));
NV_SAME(NVMEH_IDNS_LBAF, offsetof(struct nvme_id_ns, lbaf));
NV_SAME(NVMEH_SGL_KEYED_INV,
	NVME_KEY_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_INVALIDATE);
NV_SAME(NVMEH_SGL_INCAPSULE, NVME_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_OFFSET);
NV_SAME(NVMEH_REG_CSTS, NVME_REG_CSTS);
NV_SAME(NVMEH_CC_SHN_NORMAL, NVME_CC_SHN_NORMAL);
NV_SAME(NVMEH_CSTS_SHST_CMPLT, NVME_CSTS_SHST_CMPLT);
NV_SAME(NVMEH_OP_READ, nvme_cmd_read);
NV_SAME(NVMEH_ADMIN_IDENTIFY, nvme_admin_identify);
NV_SAME(NVMEH_ADMIN_KEEP_ALIVE, nvme_admin_keep_alive);
NV_SAME(NVMEH_FCTYPE_CONNECT, nvme_fabrics_type_connect);
NV_SAME(NVMEH_SC_INVALID_OPCODE, NVME_SC_INVALID_OPCODE);
NV_SAME(NVMEH_SC_INVALID_FIELD, NVME_SC_INVALID_FIELD);
NV_SAME(NVMEH_SC_DATA_XFER_ERROR, NVME_SC_DATA_XFER_ERROR);
NV_SAME(NVMEH_SC_SGL_INVALID_DATA, NVME_SC_SGL_INVALID_DATA);
NV_SAME(NVMEH_SC_SGL_INVALID_TYPE, NVME_SC_SGL_INVALID_TYPE);
NV_SAME(NVMEH_SC_LBA_RANGE, NVME_SC_LBA_RANGE);
NV_SAME(NVMEH_SC_CONNECT_INVALID_PARAM, NVME_SC_CONNECT_INVALID_PARAM);
NV_SAME(NVMEH_SC_HOST_ABORTED_CMD, NVME_SC_HOST_ABORTED_CMD);
NV_SAME(NVMEH_SC_DNR, NVME_SC_DNR);

#endif /* RDMARW_TESTS_NV_WIRE_CHECK_H */

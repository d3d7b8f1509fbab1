// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Admin commands of an NVM subsystem's controller (the kernel's
 * drivers/nvme/target/admin-cmd.c): Identify, Get Log Page, Get and Set
 * Features, Asynchronous Event Request, Keep Alive, Abort.
 */
#include <stdlib.h>

#include "nvmet_int.h"

#define NVMET_FW_REV "0.1.0"

/* Bytes a Get Log Page asks for: (NUMDU:NUMDL + 1) dwords. */
u32 nvmet_get_log_page_len(struct nvme_command *cmd)
{
	u32 numdl = le32_to_cpu(cmd->common.cdw10) >> 16;
	u32 numdu = le32_to_cpu(cmd->common.cdw11) & 0xffff;
	u64 len = ((u64)(numdu << 16 | numdl) + 1) * 4;

	return len > 0xffffffffu ? 0xffffffffu : (u32)len;
}

static u64 nvmet_get_log_page_offset(struct nvme_command *cmd)
{
	return (u64)le32_to_cpu(cmd->common.cdw13) << 32 |
	       le32_to_cpu(cmd->common.cdw12);
}

/*
 * Copy the log @buf (@len bytes) from the command's offset into the
 * request's data, zero-filling past the end of the log.
 */
u16 nvmet_copy_log(struct nvmet_req *req, const void *buf, u32 len)
{
	u64 off = nvmet_get_log_page_offset(req->cmd);
	u32 n;
	u16 status;

	if (off & 3 || off > len) {
		req->error_loc = offsetof(struct nvme_common_command, cdw12);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	n = min_t(u32, len - (u32)off, req->transfer_len);
	status = nvmet_copy_to_req(req, 0, (const char *)buf + off, n);
	if (!status)
		status = nvmet_zero_req(req, n, req->transfer_len - n);
	return status;
}

static u16 nvmet_log_smart(struct nvmet_req *req)
{
	struct nvme_smart_log log;
	u32 nsid = le32_to_cpu(req->cmd->common.nsid);
	struct nvmet_ns *ns;

	if (nsid != NVME_NSID_ALL && nsid != 0) {
		ns = nvmet_find_get_ns(req->sq->ctrl->subsys, nsid);
		if (!ns) {
			req->error_loc =
				offsetof(struct nvme_common_command, nsid);
			return NVME_SC_INVALID_NS | NVME_SC_DNR;
		}
		nvmet_put_namespace(ns);
	}
	memset(&log, 0, sizeof(log));
	log.temperature[0] = 0x3f; /* 319 K (46 C): a plausible value */
	log.temperature[1] = 0x01;
	log.avail_spare = 100;
	log.spare_thresh = 10;
	return nvmet_copy_log(req, &log, sizeof(log));
}

static u16 nvmet_log_effects(struct nvmet_req *req)
{
	static const u8 admin[] = {
		nvme_admin_get_log_page, nvme_admin_identify,
		nvme_admin_abort_cmd,	 nvme_admin_set_features,
		nvme_admin_get_features, nvme_admin_async_event,
		nvme_admin_keep_alive,
	};
	static const u8 io[] = {
		nvme_cmd_read,	       nvme_cmd_write, nvme_cmd_flush,
		nvme_cmd_write_zeroes, nvme_cmd_dsm,
	};
	struct nvme_effects_log *log = calloc(1, sizeof(*log));
	u16 status;
	size_t i;

	if (!log)
		return NVME_SC_INTERNAL;
	for (i = 0; i < ARRAY_SIZE(admin); i++)
		log->acs[admin[i]] = cpu_to_le32(NVME_CMD_EFFECTS_CSUPP);
	for (i = 0; i < ARRAY_SIZE(io); i++)
		log->iocs[io[i]] = cpu_to_le32(NVME_CMD_EFFECTS_CSUPP);
	log->iocs[nvme_cmd_write] |= cpu_to_le32(NVME_CMD_EFFECTS_LBCC);
	log->iocs[nvme_cmd_write_zeroes] |= cpu_to_le32(NVME_CMD_EFFECTS_LBCC);
	log->iocs[nvme_cmd_dsm] |= cpu_to_le32(NVME_CMD_EFFECTS_LBCC);
	status = nvmet_copy_log(req, log, sizeof(*log));
	free(log);
	return status;
}

static u16 nvmet_log_fw_slot(struct nvmet_req *req)
{
	struct nvme_fw_slot_info_log log;

	memset(&log, 0, sizeof(log));
	log.afi = 1;
	memcpy(&log.frs[0], NVMET_FW_REV, sizeof(NVMET_FW_REV) - 1);
	return nvmet_copy_log(req, &log, sizeof(log));
}

/*
 * The Changed Namespace List (1024 NSIDs): what changed since the host
 * last read it, then emptied; unless Retain Asynchronous Event is set,
 * the Namespace Attribute Changed notice is unmasked again (the kernel's
 * nvmet_execute_get_log_changed_ns()).
 */
static u16 nvmet_log_changed_ns(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	bool rae = le32_to_cpu(req->cmd->common.cdw10) & (1u << 15);
	__le32 list[1024];
	u32 i, n;
	u16 status;

	memset(list, 0, sizeof(list));
	mutex_lock(&ctrl->lock);
	n = ctrl->nr_changed_ns;
	if (n == NVMET_CHANGED_NS_OVERFLOW)
		list[0] = cpu_to_le32(0xffffffffu);
	else
		for (i = 0; i < n; i++)
			list[i] = cpu_to_le32(ctrl->changed_ns[i]);
	ctrl->nr_changed_ns = 0;
	if (!rae)
		ctrl->aen_masked &= ~(u32)NVME_AEN_CFG_NS_ATTR;
	mutex_unlock(&ctrl->lock);
	status = nvmet_copy_log(req, list, sizeof(list));
	return status;
}

static void nvmet_execute_get_log_page(struct nvmet_req *req)
{
	u8 lid = le32_to_cpu(req->cmd->common.cdw10) & 0xff;
	u8 zeroes[4096];
	u16 status;

	if (!nvmet_check_transfer_len(req, nvmet_get_log_page_len(req->cmd)))
		return;
	switch (lid) {
	case NVME_LOG_CHANGED_NS:
		status = nvmet_log_changed_ns(req);
		break;
	case NVME_LOG_ERROR:
		/* no error information is kept: every entry is empty */
		memset(zeroes, 0, sizeof(zeroes));
		status = nvmet_copy_log(req, zeroes, sizeof(zeroes));
		break;
	case NVME_LOG_SMART:
		status = nvmet_log_smart(req);
		break;
	case NVME_LOG_FW_SLOT:
		status = nvmet_log_fw_slot(req);
		break;
	case NVME_LOG_CMD_EFFECTS:
		status = nvmet_log_effects(req);
		break;
	default:
		nvmet_log("unsupported log page %#x", lid);
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	nvmet_req_complete(req, status);
}

/* ---- Identify -------------------------------------------------------------- */

void nvmet_id_ctrl_common(struct nvmet_ctrl *ctrl, struct nvme_id_ctrl *id)
{
	struct nvmet_subsys *s = ctrl->subsys;

	nvmet_copy_padded(id->sn, sizeof(id->sn), s->serial);
	nvmet_copy_padded(id->mn, sizeof(id->mn), s->model);
	nvmet_copy_padded(id->fr, sizeof(id->fr), NVMET_FW_REV);
	id->mdts = nvmet_ctrl_mdts(ctrl);
	id->cntlid = cpu_to_le16(ctrl->cntlid);
	id->ver = cpu_to_le32(NVME_VS(1, 3, 0));
	id->aerl = NVMET_ASYNC_EVENTS - 1;
	id->kas = cpu_to_le16(NVMET_KAS);
	id->sqes = NVME_NVM_IOSQES << 4 | NVME_NVM_IOSQES;
	id->cqes = NVME_NVM_IOCQES << 4 | NVME_NVM_IOCQES;
	id->maxcmd = cpu_to_le16((u16)ctrl->port->max_queue_size);
	id->sgls = cpu_to_le32(NVME_CTRL_SGLS_SUPPORTED | NVME_CTRL_SGLS_KEYED);
	if (ctrl->port->inline_data_size)
		id->sgls |= cpu_to_le32(NVME_CTRL_SGLS_OFFSET);
	nvmet_copy_nul(id->subnqn, sizeof(id->subnqn), s->subsysnqn);
	id->ioccsz = cpu_to_le32((u32)(sizeof(struct nvme_command) +
				       ctrl->port->inline_data_size) /
				 16);
	id->iorcsz = cpu_to_le32(sizeof(struct nvme_completion) / 16);
	id->icdoff = 0;
	id->msdbd = ctrl->ops->msdbd;
}

/* Identify Controller of an NVM subsystem's controller. */
static void nvmet_fill_id_ctrl(struct nvmet_ctrl *ctrl, struct nvme_id_ctrl *id)
{
	memset(id, 0, sizeof(*id));
	nvmet_id_ctrl_common(ctrl, id);
	id->rab = 6;
	id->cmic = NVME_CTRL_CMIC_MULTI_CTRL;
	id->oaes = cpu_to_le32(NVME_AEN_CFG_NS_ATTR);
	id->ctratt =
		cpu_to_le32(NVME_CTRL_CTRATT_128_ID | NVME_CTRL_CTRATT_TBKAS);
	id->cntrltype = NVME_CNTRLTYPE_IO;
	id->acl = 3;
	id->frmw = 0x3; /* one slot, read only */
	id->lpa = NVME_CTRL_LPA_CMD_EFFECTS_LOG | NVME_CTRL_LPA_EXTENDED_DATA;
	id->elpe = 0;
	id->npss = 0;
	id->nn = cpu_to_le32(ctrl->subsys->max_nsid);
	id->mnan = cpu_to_le32(ctrl->subsys->max_nsid);
	id->oncs =
		cpu_to_le16(NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WRITE_ZEROES);
	id->vwc = NVME_CTRL_VWC_PRESENT;
	id->psd[0].max_power = cpu_to_le16(0x9c4); /* 25 W */
	id->psd[0].entry_lat = cpu_to_le32(0x10);
	id->psd[0].exit_lat = cpu_to_le32(0x4);
}

static void nvmet_execute_identify_ctrl(struct nvmet_req *req)
{
	struct nvme_id_ctrl *id = malloc(sizeof(*id));
	u16 status;

	if (!id) {
		nvmet_req_complete(req, NVME_SC_INTERNAL);
		return;
	}
	nvmet_fill_id_ctrl(req->sq->ctrl, id);
	status = nvmet_copy_to_req(req, 0, id, sizeof(*id));
	free(id);
	nvmet_req_complete(req, status);
}

static void nvmet_execute_identify_ns(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	u32 nsid = le32_to_cpu(req->cmd->common.nsid);
	struct nvme_id_ns *id;
	struct nvmet_ns *ns;
	u64 blocks;
	u16 status;

	if (nsid == 0 || nsid == NVME_NSID_ALL) {
		req->error_loc = offsetof(struct nvme_common_command, nsid);
		nvmet_req_complete(req, NVME_SC_INVALID_NS | NVME_SC_DNR);
		return;
	}
	id = calloc(1, sizeof(*id));
	if (!id) {
		nvmet_req_complete(req, NVME_SC_INTERNAL);
		return;
	}
	/* an inactive namespace reads as zeroes, and that is no error */
	ns = nvmet_find_get_ns(ctrl->subsys, nsid);
	if (ns) {
		blocks = ns->size >> ns->blksize_shift;
		id->nsze = cpu_to_le64(blocks);
		id->ncap = id->nsze;
		id->nuse = id->nsze;
		/* deallocated blocks read as zeroes on every backend here */
		id->dlfeat = ns->ops->discard ? 1 | (1 << 3) : 0;
		id->nsfeat = ns->ops->discard ? 1 << 2 : 0;
		id->nlbaf = 0;
		id->flbas = 0;
		id->nmic = 1; /* may be shared by controllers */
		id->lbaf[0].ds = ns->blksize_shift;
		id->nsattr = ns->readonly ? 1 : 0;
		memcpy(id->nguid, ns->nguid, sizeof(id->nguid));
		memcpy(id->eui64, ns->eui64, sizeof(id->eui64));
		nvmet_put_namespace(ns);
	}
	status = nvmet_copy_to_req(req, 0, id, sizeof(*id));
	free(id);
	nvmet_req_complete(req, status);
}

static void nvmet_execute_identify_nslist(struct nvmet_req *req)
{
	struct nvmet_subsys *s = req->sq->ctrl->subsys;
	u32 min_nsid = le32_to_cpu(req->cmd->common.nsid);
	__le32 list[1024];
	u32 i, n = 0;
	u16 status;

	if (min_nsid >= 0xfffffffeu) {
		req->error_loc = offsetof(struct nvme_common_command, nsid);
		nvmet_req_complete(req, NVME_SC_INVALID_NS | NVME_SC_DNR);
		return;
	}
	memset(list, 0, sizeof(list));
	spin_lock(&s->ns_lock);
	for (i = 0; i < s->max_nsid && n < ARRAY_SIZE(list); i++)
		if (s->ns[i] && s->ns[i]->nsid > min_nsid)
			list[n++] = cpu_to_le32(s->ns[i]->nsid);
	spin_unlock(&s->ns_lock);
	status = nvmet_copy_to_req(req, 0, list, sizeof(list));
	nvmet_req_complete(req, status);
}

static size_t nvmet_add_desc(u8 *buf, size_t off, u8 type, u8 len,
			     const void *id)
{
	struct nvme_ns_id_desc d = { .nidt = type, .nidl = len };

	memcpy(buf + off, &d, sizeof(d));
	memcpy(buf + off + sizeof(d), id, len);
	return off + sizeof(d) + len;
}

static void nvmet_execute_identify_desclist(struct nvmet_req *req)
{
	u8 buf[NVME_IDENTIFY_DATA_SIZE];
	u8 csi = NVME_CSI_NVM;
	size_t off = 0;
	u16 status;

	status = nvmet_req_find_ns(req);
	if (status)
		goto out;
	memset(buf, 0, sizeof(buf));
	off = nvmet_add_desc(buf, off, NVME_NIDT_UUID, NVME_NIDT_UUID_LEN,
			     req->ns->uuid);
	off = nvmet_add_desc(buf, off, NVME_NIDT_NGUID, NVME_NIDT_NGUID_LEN,
			     req->ns->nguid);
	off = nvmet_add_desc(buf, off, NVME_NIDT_CSI, NVME_NIDT_CSI_LEN, &csi);
	status = nvmet_copy_to_req(req, 0, buf, sizeof(buf));
out:
	nvmet_req_complete(req, status);
}

/* CNS 05h and 06h for the NVM command set: no fields defined, zeroes. */
static void nvmet_execute_identify_cs(struct nvmet_req *req)
{
	u8 cns = le32_to_cpu(req->cmd->common.cdw10) & 0xff;
	u8 csi = le32_to_cpu(req->cmd->common.cdw11) >> 24;
	u16 status;

	if (csi != NVME_CSI_NVM) {
		req->error_loc = offsetof(struct nvme_common_command, cdw11);
		nvmet_req_complete(req, NVME_SC_INVALID_FIELD | NVME_SC_DNR);
		return;
	}
	if (cns == NVME_ID_CNS_CS_NS) {
		status = nvmet_req_find_ns(req);
		if (status) {
			nvmet_req_complete(req, status);
			return;
		}
	}
	status = nvmet_zero_req(req, 0, NVME_IDENTIFY_DATA_SIZE);
	nvmet_req_complete(req, status);
}

static void nvmet_execute_identify(struct nvmet_req *req)
{
	u8 cns = le32_to_cpu(req->cmd->common.cdw10) & 0xff;

	if (!nvmet_check_transfer_len(req, NVME_IDENTIFY_DATA_SIZE))
		return;
	switch (cns) {
	case NVME_ID_CNS_NS:
		nvmet_execute_identify_ns(req);
		return;
	case NVME_ID_CNS_CTRL:
		nvmet_execute_identify_ctrl(req);
		return;
	case NVME_ID_CNS_NS_ACTIVE_LIST:
		nvmet_execute_identify_nslist(req);
		return;
	case NVME_ID_CNS_NS_DESC_LIST:
		nvmet_execute_identify_desclist(req);
		return;
	case NVME_ID_CNS_CS_NS:
	case NVME_ID_CNS_CS_CTRL:
		nvmet_execute_identify_cs(req);
		return;
	default:
		nvmet_log("unsupported identify cns %#x", cns);
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		nvmet_req_complete(req, NVME_SC_INVALID_FIELD | NVME_SC_DNR);
	}
}

/* ---- features ------------------------------------------------------------------- */

#define NVMET_AEN_CFG_NVM (NVME_AEN_CFG_NS_ATTR | 0xff)

static u16 nvmet_set_feat_num_queues(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	u32 cdw11 = le32_to_cpu(req->cmd->common.cdw11);

	/* 65535 (0-based) is reserved in either half */
	if ((cdw11 & 0xffff) == 0xffff || (cdw11 >> 16) == 0xffff) {
		req->error_loc = offsetof(struct nvme_common_command, cdw11);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	nvmet_set_result(req, (u32)(ctrl->max_qid - 1) |
				      (u32)(ctrl->max_qid - 1) << 16);
	return 0;
}

void nvmet_execute_set_features_common(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	bool disc = nvmet_subsys_is_disc(ctrl->subsys);
	u32 cdw10 = le32_to_cpu(req->cmd->common.cdw10);
	u8 fid = cdw10 & 0xff;
	u16 status = 0;

	if (!nvmet_check_data_len_lte(req, 0))
		return;
	if (cdw10 & (1u << 31)) { /* SV: nothing is saveable */
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		nvmet_req_complete(req,
				   NVME_SC_FEATURE_NOT_SAVEABLE | NVME_SC_DNR);
		return;
	}
	switch (fid) {
	case NVME_FEAT_KATO:
		status = nvmet_set_feat_kato(req);
		break;
	case NVME_FEAT_ASYNC_EVENT:
		status = nvmet_set_feat_async_event(
			req,
			disc ? NVME_AEN_CFG_DISC_CHANGE : NVMET_AEN_CFG_NVM);
		break;
	case NVME_FEAT_NUM_QUEUES:
		if (disc)
			goto bad;
		status = nvmet_set_feat_num_queues(req);
		break;
	case NVME_FEAT_VOLATILE_WC:
		if (disc)
			goto bad;
		/* the cache stays on: flushes are what make data durable */
		nvmet_set_result(req, 1);
		break;
	case NVME_FEAT_HOST_ID:
		status = NVME_SC_CMD_SEQ_ERROR | NVME_SC_DNR;
		break;
	default:
	bad:
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	nvmet_req_complete(req, status);
}

void nvmet_execute_get_features(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	bool disc = nvmet_subsys_is_disc(ctrl->subsys);
	u8 fid = le32_to_cpu(req->cmd->common.cdw10) & 0xff;
	u16 status = 0;

	if (fid == NVME_FEAT_HOST_ID) {
		if (!nvmet_check_transfer_len(req, sizeof(ctrl->hostid)))
			return;
		/* EXHID: only the 128-bit host identifier exists */
		if (!(le32_to_cpu(req->cmd->common.cdw11) & 1)) {
			req->error_loc =
				offsetof(struct nvme_common_command, cdw11);
			status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		} else {
			status = nvmet_copy_to_req(req, 0, ctrl->hostid,
						   sizeof(ctrl->hostid));
		}
		nvmet_req_complete(req, status);
		return;
	}
	if (!nvmet_check_data_len_lte(req, 0))
		return;
	switch (fid) {
	case NVME_FEAT_KATO:
		nvmet_get_feat_kato(req);
		break;
	case NVME_FEAT_ASYNC_EVENT:
		nvmet_get_feat_async_event(req);
		break;
	case NVME_FEAT_NUM_QUEUES:
		if (disc)
			goto bad;
		nvmet_set_result(req, (u32)(ctrl->max_qid - 1) |
					      (u32)(ctrl->max_qid - 1) << 16);
		break;
	case NVME_FEAT_VOLATILE_WC:
		if (disc)
			goto bad;
		nvmet_set_result(req, 1);
		break;
	case NVME_FEAT_ARBITRATION:
	case NVME_FEAT_POWER_MGMT:
	case NVME_FEAT_TEMP_THRESH:
	case NVME_FEAT_ERR_RECOVERY:
	case NVME_FEAT_IRQ_COALESCE:
	case NVME_FEAT_WRITE_ATOMIC:
		if (disc)
			goto bad;
		/* mandatory features without anything to configure here */
		break;
	default:
	bad:
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	nvmet_req_complete(req, status);
}

/* ---- the rest ----------------------------------------------------------------- */

void nvmet_execute_keep_alive(struct nvmet_req *req)
{
	if (!nvmet_check_transfer_len(req, 0))
		return;
	/* nvmet_req_init() has reset the traffic-based timer already */
	nvmet_req_complete(req, 0);
}

static void nvmet_execute_abort(struct nvmet_req *req)
{
	if (!nvmet_check_transfer_len(req, 0))
		return;
	nvmet_set_result(req, 1); /* command not aborted */
	nvmet_req_complete(req, 0);
}

u16 nvmet_parse_admin_cmd(struct nvmet_req *req)
{
	struct nvme_command *cmd = req->cmd;
	u16 ret;

	if (cmd->common.opcode == nvme_fabrics_command)
		return nvmet_parse_fabrics_admin_cmd(req);
	if (unlikely(!nvmet_check_auth_status(req)))
		return NVME_SC_AUTH_REQUIRED | NVME_SC_DNR;
	if (nvmet_subsys_is_disc(req->sq->ctrl->subsys))
		return nvmet_parse_discovery_cmd(req);
	ret = nvmet_check_ctrl_status(req);
	if (unlikely(ret))
		return ret;
	switch (cmd->common.opcode) {
	case nvme_admin_get_log_page:
		req->execute = nvmet_execute_get_log_page;
		return 0;
	case nvme_admin_identify:
		req->execute = nvmet_execute_identify;
		return 0;
	case nvme_admin_abort_cmd:
		req->execute = nvmet_execute_abort;
		return 0;
	case nvme_admin_set_features:
		req->execute = nvmet_execute_set_features_common;
		return 0;
	case nvme_admin_get_features:
		req->execute = nvmet_execute_get_features;
		return 0;
	case nvme_admin_async_event:
		req->execute = nvmet_execute_async_event;
		return 0;
	case nvme_admin_keep_alive:
		req->execute = nvmet_execute_keep_alive;
		return 0;
	default:
		nvmet_log("unsupported admin opcode %#x", cmd->common.opcode);
		req->error_loc = offsetof(struct nvme_common_command, opcode);
		return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
	}
}

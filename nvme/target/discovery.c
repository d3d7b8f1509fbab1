// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The discovery subsystem (the kernel's drivers/nvme/target/discovery.c):
 * its controller's Identify, and the discovery log page that lists the
 * NVM subsystems of the port the host asked, then the discovery subsystem
 * itself.
 */
#include <stdlib.h>

#include "nvmet_int.h"

static void nvmet_format_discovery_entry(struct nvmf_disc_rsp_page_entry *e,
					 struct nvmet_port *port,
					 const char *subsysnqn, u8 type)
{
	memset(e, 0, sizeof(*e));
	e->trtype = NVMF_TRTYPE_RDMA;
	e->adrfam = port->adrfam;
	e->subtype = type;
	e->treq = NVMF_TREQ_NOT_SPECIFIED | NVMF_TREQ_DISABLE_SQFLOW;
	e->portid = cpu_to_le16(port->portid);
	e->cntlid = cpu_to_le16(NVME_CNTLID_DYNAMIC);
	e->asqsz = cpu_to_le16(NVME_AQ_DEPTH);
	nvmet_copy_nul(e->trsvcid, sizeof(e->trsvcid), port->trsvcid);
	nvmet_copy_nul(e->subnqn, sizeof(e->subnqn), subsysnqn);
	nvmet_copy_nul(e->traddr, sizeof(e->traddr), port->traddr);
	e->tsas.rdma.qptype = NVMF_RDMA_QPTYPE_CONNECTED;
	e->tsas.rdma.prtype = NVMF_RDMA_PRTYPE_NOT_SPECIFIED;
	e->tsas.rdma.cms = NVMF_RDMA_CMS_RDMA_CM;
}

/*
 * Does the discovery log of @ctrl's port show @subsys to its host?  Only
 * when the host may connect to it, as the kernel filters the log.
 */
static bool nvmet_disc_shows(const struct nvmet_ctrl *ctrl,
			     const struct nvmet_subsys *subsys)
{
	return nvmet_host_allowed(subsys, ctrl->hostnqn);
}

/* The entries of @ctrl's log: its port's subsystems shown, then itself. */
static u32 nvmet_disc_nr_entries(const struct nvmet_ctrl *ctrl)
{
	const struct nvmet_port *port = ctrl->port;
	u32 i, n = 1;

	for (i = 0; i < port->nr_subsys; i++)
		n += nvmet_disc_shows(ctrl, port->subsys[i]);
	return n;
}

static void nvmet_disc_fill(const struct nvmet_ctrl *ctrl,
			    struct nvmf_disc_rsp_page_entry *e, u32 nr)
{
	struct nvmet_port *port = ctrl->port;
	u32 i, n = 0;

	for (i = 0; i < port->nr_subsys && n + 1 < nr; i++)
		if (nvmet_disc_shows(ctrl, port->subsys[i]))
			nvmet_format_discovery_entry(&e[n++], port,
						     port->subsys[i]->subsysnqn,
						     NVME_NQN_NVME);
	nvmet_format_discovery_entry(&e[n], port, ctrl->subsys->subsysnqn,
				     NVME_NQN_CURR);
}

static void nvmet_execute_disc_get_log_page(struct nvmet_req *req)
{
	const struct nvmet_ctrl *ctrl = req->sq->ctrl;
	u8 lid = le32_to_cpu(req->cmd->common.cdw10) & 0xff;
	struct nvmet_target *t = ctrl->port->tgt;
	struct nvmf_disc_rsp_page_hdr *hdr;
	u32 nr, len;
	u16 status;
	void *buf;

	if (!nvmet_check_transfer_len(req, nvmet_get_log_page_len(req->cmd)))
		return;
	if (lid != NVME_LOG_DISC) {
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		nvmet_req_complete(req, NVME_SC_INVALID_FIELD | NVME_SC_DNR);
		return;
	}
	/* LSP: no log specific field is defined for the discovery log */
	if ((le32_to_cpu(req->cmd->common.cdw10) >> 8) & 0x7f) {
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		nvmet_req_complete(req, NVME_SC_INVALID_FIELD | NVME_SC_DNR);
		return;
	}
	/* a reload changes the port's links and hosts */
	mutex_lock(&t->lock);
	nr = nvmet_disc_nr_entries(ctrl);
	len = (u32)(sizeof(*hdr) +
		    nr * sizeof(struct nvmf_disc_rsp_page_entry));
	buf = calloc(1, len);
	if (!buf) {
		mutex_unlock(&t->lock);
		nvmet_req_complete(req, NVME_SC_INTERNAL);
		return;
	}
	hdr = buf;
	nvmet_disc_fill(ctrl, (struct nvmf_disc_rsp_page_entry *)(hdr + 1), nr);
	/* the log changes with each reload that was applied */
	hdr->genctr = cpu_to_le64(1 + t->reloads);
	mutex_unlock(&t->lock);
	hdr->numrec = cpu_to_le64(nr);
	hdr->recfmt = 0;
	status = nvmet_copy_log(req, buf, len);
	free(buf);
	nvmet_req_complete(req, status);
}

static void nvmet_execute_disc_identify(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	struct nvme_id_ctrl *id;
	u16 status;

	if (!nvmet_check_transfer_len(req, NVME_IDENTIFY_DATA_SIZE))
		return;
	if ((le32_to_cpu(req->cmd->common.cdw10) & 0xff) != NVME_ID_CNS_CTRL) {
		req->error_loc = offsetof(struct nvme_common_command, cdw10);
		nvmet_req_complete(req, NVME_SC_INVALID_FIELD | NVME_SC_DNR);
		return;
	}
	id = calloc(1, sizeof(*id));
	if (!id) {
		nvmet_req_complete(req, NVME_SC_INTERNAL);
		return;
	}
	nvmet_id_ctrl_common(ctrl, id);
	id->cntrltype = NVME_CNTRLTYPE_DISC;
	id->lpa = NVME_CTRL_LPA_EXTENDED_DATA;
	id->oaes = cpu_to_le32(NVME_AEN_CFG_DISC_CHANGE);
	status = nvmet_copy_to_req(req, 0, id, sizeof(*id));
	free(id);
	nvmet_req_complete(req, status);
}

u16 nvmet_parse_discovery_cmd(struct nvmet_req *req)
{
	struct nvme_command *cmd = req->cmd;
	u16 ret;

	ret = nvmet_check_ctrl_status(req);
	if (unlikely(ret))
		return ret;
	switch (cmd->common.opcode) {
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
	case nvme_admin_get_log_page:
		req->execute = nvmet_execute_disc_get_log_page;
		return 0;
	case nvme_admin_identify:
		req->execute = nvmet_execute_disc_identify;
		return 0;
	default:
		nvmet_log("unsupported discovery opcode %#x",
			  cmd->common.opcode);
		req->error_loc = offsetof(struct nvme_common_command, opcode);
		return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fabrics commands (the kernel's drivers/nvme/target/fabrics-cmd.c):
 * Connect on an unconnected queue, Property Get and Set on the admin queue.
 */
#include <stdlib.h>

#include "nvme_ids.h"
#include "nvmet_int.h"

/* ---- Property Get / Set ------------------------------------------------------ */

static void nvmet_execute_prop_set(struct nvmet_req *req)
{
	struct nvmf_property_set_command *c = &req->cmd->prop_set;
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	u64 val = le64_to_cpu(c->value);
	u16 status = 0;

	if (!nvmet_check_transfer_len(req, 0))
		return;
	if (c->attrib & 1) {
		req->error_loc =
			offsetof(struct nvmf_property_set_command, attrib);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		goto out;
	}
	switch (le32_to_cpu(c->offset)) {
	case NVME_REG_CC:
		mutex_lock(&ctrl->lock);
		nvmet_update_cc(ctrl, (u32)val);
		mutex_unlock(&ctrl->lock);
		break;
	default:
		req->error_loc =
			offsetof(struct nvmf_property_set_command, offset);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
out:
	nvmet_req_complete(req, status);
}

static void nvmet_execute_prop_get(struct nvmet_req *req)
{
	struct nvmf_property_get_command *c = &req->cmd->prop_get;
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	u16 status = 0;
	u64 val = 0;

	if (!nvmet_check_transfer_len(req, 0))
		return;
	mutex_lock(&ctrl->lock);
	if (c->attrib & 1) {
		switch (le32_to_cpu(c->offset)) {
		case NVME_REG_CAP:
			val = ctrl->cap;
			break;
		default:
			status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		}
	} else {
		switch (le32_to_cpu(c->offset)) {
		case NVME_REG_VS:
			val = NVME_VS(1, 3, 0);
			break;
		case NVME_REG_CC:
			val = ctrl->cc;
			break;
		case NVME_REG_CSTS:
			val = ctrl->csts;
			break;
		default:
			status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		}
	}
	mutex_unlock(&ctrl->lock);
	if (status)
		req->error_loc =
			offsetof(struct nvmf_property_get_command, offset);
	req->cqe->result.u64 = cpu_to_le64(val);
	nvmet_req_complete(req, status);
}

u16 nvmet_parse_fabrics_admin_cmd(struct nvmet_req *req)
{
	switch (req->cmd->fabrics.fctype) {
	case nvme_fabrics_type_property_set:
		/* CC not before authentication: the kernel's does allow it */
		if (!nvmet_check_auth_status(req))
			return NVME_SC_AUTH_REQUIRED | NVME_SC_DNR;
		req->execute = nvmet_execute_prop_set;
		return 0;
	case nvme_fabrics_type_auth_send:
		req->execute = nvmet_execute_auth_send;
		return 0;
	case nvme_fabrics_type_auth_receive:
		req->execute = nvmet_execute_auth_receive;
		return 0;
	case nvme_fabrics_type_property_get:
		req->execute = nvmet_execute_prop_get;
		return 0;
	default:
		nvmet_log("unsupported fabrics command %#x on the admin queue",
			  req->cmd->fabrics.fctype);
		req->error_loc = offsetof(struct nvmf_common_command, fctype);
		return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
	}
}

u16 nvmet_parse_fabrics_io_cmd(struct nvmet_req *req)
{
	switch (req->cmd->fabrics.fctype) {
	case nvme_fabrics_type_auth_send:
		req->execute = nvmet_execute_auth_send;
		return 0;
	case nvme_fabrics_type_auth_receive:
		req->execute = nvmet_execute_auth_receive;
		return 0;
	default:
		break;
	}
	nvmet_log("unsupported fabrics command %#x on I/O queue %u",
		  req->cmd->fabrics.fctype, req->sq->qid);
	req->error_loc = offsetof(struct nvmf_common_command, fctype);
	return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
}

/* ---- Connect ------------------------------------------------------------------- */

/*
 * The Connect data, checked: record format 0, NUL-terminated NQNs.
 * Returns a status; on success *@dp is the caller's to free.
 */
static u16 nvmet_connect_data(struct nvmet_req *req,
			      struct nvmf_connect_data **dp)
{
	struct nvmf_connect_command *c = &req->cmd->connect;
	struct nvmf_connect_data *d;
	u16 status;

	if (le16_to_cpu(c->recfmt) != 0) {
		nvmet_log("connect: bad record format %u",
			  le16_to_cpu(c->recfmt));
		return NVME_SC_CONNECT_FORMAT | NVME_SC_DNR;
	}
	d = malloc(sizeof(*d));
	if (!d)
		return NVME_SC_INTERNAL;
	status = nvmet_copy_from_req(req, 0, d, sizeof(*d));
	if (status) {
		free(d);
		return status;
	}
	/*
	 * 1 to 223 printable ASCII bytes, NUL padded: the kernel only cuts
	 * the fields at their last byte; what hides behind a NUL, or bytes a
	 * log line would carry to a terminal, are refused here.
	 */
	if (!nvme_nqn_field_valid(d->subsysnqn)) {
		nvmet_log("connect: invalid subsystem NQN");
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_DATA(offsetof(
					 struct nvmf_connect_data, subsysnqn)));
		free(d);
		return NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
	}
	if (!nvme_nqn_field_valid(d->hostnqn)) {
		nvmet_log("connect: invalid host NQN");
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_DATA(offsetof(
					 struct nvmf_connect_data, hostnqn)));
		free(d);
		return NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
	}
	*dp = d;
	return 0;
}

static u16 nvmet_check_sqsize(struct nvmet_req *req, u16 max)
{
	u16 sqsize = le16_to_cpu(req->cmd->connect.sqsize);

	/* 0-based: 0 would be a queue of one entry, which cannot work */
	if (!sqsize || sqsize >= max) {
		nvmet_log("connect: bad sqsize %u (most %u)", sqsize, max - 1);
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_SQE(offsetof(
					 struct nvmf_connect_command, sqsize)));
		return NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
	}
	return 0;
}

/*
 * The transport's install hook (the kernel's nvmet_install_queue() calls
 * it): the queue's resources once a Connect is found valid.
 */
static u16 nvmet_install_queue(struct nvmet_req *req)
{
	if (!req->ops->install_queue)
		return 0;
	return req->ops->install_queue(req->sq);
}

static void nvmet_execute_admin_connect(struct nvmet_req *req)
{
	struct nvmf_connect_command *c = &req->cmd->connect;
	struct nvmet_target *t = req->port->tgt;
	struct nvmf_connect_data *d = NULL;
	struct nvmet_ctrl *ctrl = NULL;
	u32 result = 0;
	u16 status;

	if (!nvmet_check_transfer_len(req, sizeof(struct nvmf_connect_data)))
		return;
	status = nvmet_connect_data(req, &d);
	if (status)
		goto out;
	if (le16_to_cpu(d->cntlid) != NVME_CNTLID_DYNAMIC) {
		nvmet_log("connect: admin queue with cntlid %u (not dynamic)",
			  le16_to_cpu(d->cntlid));
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_DATA(offsetof(
					 struct nvmf_connect_data, cntlid)));
		status = NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
		goto out;
	}
	status = nvmet_check_sqsize(req, NVME_AQ_DEPTH);
	if (status)
		goto out;
	status = nvmet_alloc_ctrl(t, d, req, le32_to_cpu(c->kato), &ctrl);
	if (status)
		goto out;
	status = nvmet_auth_sq_setup(req, ctrl, d, &result);
	if (!status)
		status = nvmet_install_queue(req);
	if (status) {
		nvmet_auth_sq_free(req->sq);
		nvmet_ctrl_put(ctrl);
		goto out;
	}
	nvmet_cq_setup(ctrl, req->cq, 0, le16_to_cpu(c->sqsize) + 1);
	nvmet_sq_setup(ctrl, req->sq, 0, le16_to_cpu(c->sqsize) + 1);
	req->sq->sqhd_disabled = c->cattr & NVME_CONNECT_DISABLE_SQFLOW;
	nvmet_log("controller %u: %.223s connected to %.223s (kato %u s%s)",
		  ctrl->cntlid, ctrl->hostnqn, ctrl->subsys->subsysnqn,
		  ctrl->kato, result ? ", must authenticate" : "");
	req->cqe->result.u32 = cpu_to_le32(result | ctrl->cntlid);
out:
	free(d);
	nvmet_req_complete(req, status);
}

/* The admin queue is bound and the controller enabled and ready. */
static bool nvmet_ctrl_ready_for_io(struct nvmet_ctrl *ctrl)
{
	bool ready;

	mutex_lock(&ctrl->lock);
	ready = ctrl->sqs[0] && (ctrl->cc & NVME_CC_ENABLE) &&
		(ctrl->csts & NVME_CSTS_RDY) && !ctrl->fatal;
	mutex_unlock(&ctrl->lock);
	return ready;
}

static void nvmet_execute_io_connect(struct nvmet_req *req)
{
	struct nvmf_connect_command *c = &req->cmd->connect;
	struct nvmet_target *t = req->port->tgt;
	struct nvmf_connect_data *d = NULL;
	struct nvmet_ctrl *ctrl = NULL;
	u16 qid = le16_to_cpu(c->qid);
	u32 result = 0;
	bool taken;
	u16 status;

	if (!nvmet_check_transfer_len(req, sizeof(struct nvmf_connect_data)))
		return;
	status = nvmet_connect_data(req, &d);
	if (status)
		goto out;
	status = nvmet_ctrl_find_get(t, d, req, &ctrl);
	if (status)
		goto out;
	if (qid > ctrl->max_qid) {
		nvmet_log("connect: controller %u has no queue %u",
			  ctrl->cntlid, qid);
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_SQE(offsetof(
					 struct nvmf_connect_command, qid)));
		status = NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
		goto out_put;
	}
	status = nvmet_check_sqsize(req, (u16)req->port->max_queue_size);
	if (status)
		goto out_put;
	/* no I/O queue before the admin queue has enabled the controller */
	if (!nvmet_ctrl_ready_for_io(ctrl)) {
		nvmet_log("connect: controller %u is not enabled for queue %u",
			  ctrl->cntlid, qid);
		status = NVME_SC_CMD_SEQ_ERROR | NVME_SC_DNR;
		goto out_put;
	}
	mutex_lock(&ctrl->lock);
	taken = ctrl->sqs[qid] != NULL;
	mutex_unlock(&ctrl->lock);
	if (taken) {
		nvmet_log("connect: controller %u queue %u exists already",
			  ctrl->cntlid, qid);
		status = NVME_SC_CMD_SEQ_ERROR | NVME_SC_DNR;
		goto out_put;
	}
	status = nvmet_auth_sq_setup(req, ctrl, d, &result);
	if (!status)
		status = nvmet_install_queue(req);
	if (status) {
		nvmet_auth_sq_free(req->sq);
		goto out_put;
	}
	nvmet_cq_setup(ctrl, req->cq, qid, le16_to_cpu(c->sqsize) + 1);
	nvmet_sq_setup(ctrl, req->sq, qid, le16_to_cpu(c->sqsize) + 1);
	req->sq->sqhd_disabled = c->cattr & NVME_CONNECT_DISABLE_SQFLOW;
	req->cqe->result.u32 = cpu_to_le32(result | ctrl->cntlid);
	nvmet_log("controller %u: I/O queue %u", ctrl->cntlid, qid);
	goto out; /* the queue keeps the reference */
out_put:
	nvmet_ctrl_put(ctrl);
out:
	free(d);
	nvmet_req_complete(req, status);
}

/* The only command an unconnected queue takes is Connect. */
u16 nvmet_parse_connect_cmd(struct nvmet_req *req)
{
	struct nvme_command *cmd = req->cmd;

	if (cmd->common.opcode != nvme_fabrics_command) {
		nvmet_log("opcode %#x on an unconnected queue",
			  cmd->common.opcode);
		req->error_loc = offsetof(struct nvme_common_command, opcode);
		return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
	}
	if (cmd->fabrics.fctype != nvme_fabrics_type_connect) {
		nvmet_log("fabrics command %#x on an unconnected queue",
			  cmd->fabrics.fctype);
		req->error_loc = offsetof(struct nvmf_common_command, fctype);
		return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
	}
	/* the queue id the transport connected with (RDMA CM data) */
	if (le16_to_cpu(cmd->connect.qid) != req->sq->qid) {
		nvmet_log("connect: qid %u on transport queue %u",
			  le16_to_cpu(cmd->connect.qid), req->sq->qid);
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_SQE(offsetof(
					 struct nvmf_connect_command, qid)));
		return NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
	}
	if (cmd->connect.qid == 0)
		req->execute = nvmet_execute_admin_connect;
	else
		req->execute = nvmet_execute_io_connect;
	return 0;
}

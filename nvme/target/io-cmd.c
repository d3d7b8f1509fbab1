// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * NVM I/O commands (the kernel's drivers/nvme/target/io-cmd-bdev.c and
 * io-cmd-file.c in one, over the backend operations of backend.c): Read,
 * Write, Flush, Write Zeroes, Dataset Management.  Read, Write and Flush
 * are submitted to the backend with req->io and complete from its done
 * (the kernel's nvmet_file_io_done()): on the thread that delivered the
 * capsule (or its data) before the submit returns for a synchronous
 * backend, later on the backend's thread for io_uring.  Write Zeroes and
 * Dataset Management are synchronous.
 */
#include <errno.h>
#include <stdlib.h>

#include "nvmet_int.h"

/* A backend's -errno as the NVMe status a controller would give. */
static u16 nvmet_errno_to_status(int err, bool write)
{
	switch (err) {
	case 0:
		return NVME_SC_SUCCESS;
	case -ENOSPC:
		return NVME_SC_CAP_EXCEEDED | NVME_SC_DNR;
	case -EROFS:
	case -EPERM:
	case -EACCES:
		return NVME_SC_NS_WRITE_PROTECTED | NVME_SC_DNR;
	case -EOPNOTSUPP:
		return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
	case -EIO:
		return write ? NVME_SC_WRITE_FAULT : NVME_SC_READ_ERROR;
	default:
		return NVME_SC_INTERNAL;
	}
}

/* @slba and @nlb blocks within the namespace (no wrap). */
static u16 nvmet_check_lba_range(struct nvmet_req *req, u64 slba, u64 nlb)
{
	u64 blocks = req->ns->size >> req->ns->blksize_shift;

	if (slba >= blocks || nlb > blocks - slba) {
		req->error_loc = offsetof(struct nvme_rw_command, slba);
		return NVME_SC_LBA_RANGE | NVME_SC_DNR;
	}
	return 0;
}

/*
 * The backend is done with req->io: the command's status from its errno.
 * A read without a copy names the namespace's bytes in io->buf: they
 * become the data the transport sends (only on success: a failed read
 * sends nothing).
 */
static void nvmet_io_done(struct nvmet_backend_io *io, int err)
{
	struct nvmet_req *req = container_of(io, struct nvmet_req, io);
	bool read = io->op == NVMET_IO_READ || io->op == NVMET_IO_READ_ZCOPY;

	if (io->op == NVMET_IO_READ_ZCOPY && !err) {
		req->buf = io->buf;
		if (unlikely(!req->buf))
			err = -EIO; /* never sent as success without data */
	}
	if (read)
		req->data_to_host = !err;
	nvmet_req_complete(req, nvmet_errno_to_status(err, !read));
}

static void nvmet_io_submit(struct nvmet_req *req, enum nvmet_io_op op, u64 len,
			    u64 off)
{
	struct nvmet_backend_io *io = &req->io;

	io->op = op;
	io->buf = op == NVMET_IO_READ_ZCOPY ? NULL : req->buf;
	io->len = len;
	io->off = off;
	io->done = nvmet_io_done;
	io->resid = 0;
	io->next = NULL;
	io->state = 0;
	nvmet_ns_submit(req->ns, io);
}

static void nvmet_execute_rw(struct nvmet_req *req)
{
	struct nvme_rw_command *rw = &req->cmd->rw;
	struct nvmet_ns *ns = req->ns;
	bool write = rw->opcode == nvme_cmd_write;
	u64 nlb = (u64)le16_to_cpu(rw->length) + 1;
	u64 slba = le64_to_cpu(rw->slba);
	u64 len = nlb << ns->blksize_shift;
	enum nvmet_io_op op;
	u16 status;

	if (!nvmet_check_transfer_len(req, (u32)len))
		return;
	status = nvmet_check_lba_range(req, slba, nlb);
	if (status)
		goto out;
	if (write && ns->readonly) {
		status = NVME_SC_NS_WRITE_PROTECTED | NVME_SC_DNR;
		goto out;
	}
	op = write ? NVMET_IO_WRITE : NVMET_IO_READ;
	if (!write && req->zcopy)
		op = NVMET_IO_READ_ZCOPY;
	nvmet_io_submit(req, op, len, slba << ns->blksize_shift);
	return;
out:
	nvmet_req_complete(req, status);
}

/**
 * nvmet_req_zcopy_read() - may @req's data go to the host from the
 * namespace itself, without a buffer of the transport's?
 * @req: a command nvmet_req_init() accepted, not yet executed
 *
 * The kernel's nvmet always reads into the request's own pages (its sg,
 * filled by the block layer or the page cache); SPDK's bdev zero-copy
 * (spdk_bdev_zcopy_start()) lets a backend hand out its own buffer.  Here
 * a RAM namespace does, and a tmpfs file while it is mapped, for Reads
 * only (docs/deviations.md: writes keep their copy).
 *
 * Return: true for a Read of a namespace whose backend hands out its
 * bytes (nvmet_ns_zcopy()).  The transport may then set req->zcopy and execute
 * without a buffer; once the command succeeded, req->buf points to the
 * namespace's req->transfer_len bytes, which stay mapped while @req holds
 * req->ns (nvmet_req_uninit()), and which the transport only reads.
 */
bool nvmet_req_zcopy_read(const struct nvmet_req *req)
{
	return req->ns && req->execute == nvmet_execute_rw &&
	       req->cmd->rw.opcode == nvme_cmd_read && nvmet_ns_zcopy(req->ns);
}

static void nvmet_execute_flush(struct nvmet_req *req)
{
	if (!nvmet_check_transfer_len(req, 0))
		return;
	nvmet_io_submit(req, NVMET_IO_FLUSH, 0, 0);
}

static void nvmet_execute_write_zeroes(struct nvmet_req *req)
{
	struct nvme_rw_command *rw = &req->cmd->rw;
	struct nvmet_ns *ns = req->ns;
	u64 nlb = (u64)le16_to_cpu(rw->length) + 1;
	u64 slba = le64_to_cpu(rw->slba);
	u16 status;

	if (!nvmet_check_transfer_len(req, 0))
		return;
	status = nvmet_check_lba_range(req, slba, nlb);
	if (!status && ns->readonly)
		status = NVME_SC_NS_WRITE_PROTECTED | NVME_SC_DNR;
	if (!status)
		status = nvmet_errno_to_status(
			ns->ops->write_zeroes(ns, nlb << ns->blksize_shift,
					      slba << ns->blksize_shift),
			true);
	nvmet_req_complete(req, status);
}

static void nvmet_execute_dsm(struct nvmet_req *req)
{
	u32 nr = (le32_to_cpu(req->cmd->common.cdw10) & 0xff) + 1;
	u32 attr = le32_to_cpu(req->cmd->common.cdw11);
	struct nvmet_ns *ns = req->ns;
	struct nvme_dsm_range r;
	u16 status = 0;
	u32 i;

	/* the ranges NR names, and nothing past them, are read */
	if (!nvmet_check_data_len_lte(req, nr * sizeof(r)))
		return;
	/* only deallocate does anything; the other attributes are hints */
	if (!(attr & NVME_DSMGMT_AD))
		goto out;
	if (ns->readonly) {
		status = NVME_SC_NS_WRITE_PROTECTED | NVME_SC_DNR;
		goto out;
	}
	for (i = 0; i < nr && !status; i++) {
		u64 slba, nlb;

		status = nvmet_copy_from_req(req, i * sizeof(r), &r, sizeof(r));
		if (status)
			break;
		slba = le64_to_cpu(r.slba);
		nlb = le32_to_cpu(r.nlb);
		if (!nlb)
			continue;
		status = nvmet_check_lba_range(req, slba, nlb);
		if (status)
			break;
		status = nvmet_errno_to_status(
			ns->ops->discard(ns, nlb << ns->blksize_shift,
					 slba << ns->blksize_shift),
			true);
	}
out:
	nvmet_req_complete(req, status);
}

u16 nvmet_parse_io_cmd(struct nvmet_req *req)
{
	struct nvme_command *cmd = req->cmd;
	u16 ret;

	if (cmd->common.opcode == nvme_fabrics_command)
		return nvmet_parse_fabrics_io_cmd(req);
	if (unlikely(!nvmet_check_auth_status(req)))
		return NVME_SC_AUTH_REQUIRED | NVME_SC_DNR;
	ret = nvmet_check_ctrl_status(req);
	if (unlikely(ret))
		return ret;
	ret = nvmet_req_find_ns(req);
	if (unlikely(ret))
		return ret;
	switch (cmd->common.opcode) {
	case nvme_cmd_read:
	case nvme_cmd_write:
		req->execute = nvmet_execute_rw;
		return 0;
	case nvme_cmd_flush:
		req->execute = nvmet_execute_flush;
		return 0;
	case nvme_cmd_write_zeroes:
		if (!req->ns->ops->write_zeroes)
			break;
		req->execute = nvmet_execute_write_zeroes;
		return 0;
	case nvme_cmd_dsm:
		if (!req->ns->ops->discard)
			break;
		req->execute = nvmet_execute_dsm;
		return 0;
	default:
		break;
	}
	nvmet_log("unsupported I/O opcode %#x", cmd->common.opcode);
	req->error_loc = offsetof(struct nvme_common_command, opcode);
	return NVME_SC_INVALID_OPCODE | NVME_SC_DNR;
}

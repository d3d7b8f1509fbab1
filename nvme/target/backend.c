// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Namespace backends: memory (anonymous mapping, so untouched blocks cost
 * nothing), a regular file (pread/pwrite, fallocate for Write Zeroes and
 * deallocate) and a block device (pread/pwrite, BLKZEROOUT and
 * BLKDISCARD).  All synchronous; every call returns 0 or -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "nvmet_int.h"

static int nvmet_blksize_shift(const struct nvmet_ns_opts *o)
{
	return o->block_size == 4096 ? 12 : 9;
}

/* ---- RAM ---------------------------------------------------------------------- */

static int ram_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	void *p;

	ns->size = o->size >> ns->blksize_shift << ns->blksize_shift;
	if (!ns->size)
		return -EINVAL;
	p = mmap(NULL, ns->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	ns->ram = p;
	return 0;
}

static void ram_close(struct nvmet_ns *ns)
{
	if (ns->ram)
		munmap(ns->ram, ns->size);
	ns->ram = NULL;
}

static int ram_read(struct nvmet_ns *ns, void *buf, u64 len, u64 off)
{
	memcpy(buf, (char *)ns->ram + off, len);
	return 0;
}

static int ram_write(struct nvmet_ns *ns, const void *buf, u64 len, u64 off)
{
	memcpy((char *)ns->ram + off, buf, len);
	return 0;
}

static int ram_flush(struct nvmet_ns *ns)
{
	return 0;
}

static int ram_zero(struct nvmet_ns *ns, u64 len, u64 off)
{
	memset((char *)ns->ram + off, 0, len);
	return 0;
}

static const struct nvmet_backend_ops nvmet_ram_ops = {
	.name = "ram",
	.open = ram_open,
	.close = ram_close,
	.read = ram_read,
	.write = ram_write,
	.flush = ram_flush,
	.write_zeroes = ram_zero,
	.discard = ram_zero,
};

/* ---- file and block device: shared I/O ---------------------------------------- */

static int fd_read(struct nvmet_ns *ns, void *buf, u64 len, u64 off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(ns->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) { /* past the end of a file: zeroes */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		off += (u64)n;
		len -= (u64)n;
	}
	return 0;
}

static int fd_write(struct nvmet_ns *ns, const void *buf, u64 len, u64 off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(ns->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		off += (u64)n;
		len -= (u64)n;
	}
	return 0;
}

static int fd_flush(struct nvmet_ns *ns)
{
	return fdatasync(ns->fd) ? -errno : 0;
}

/* Zeroes by writing them, when the file system cannot allocate them. */
static int fd_write_zeroes_slow(struct nvmet_ns *ns, u64 len, u64 off)
{
	static const char zero[65536];
	int ret;

	while (len) {
		u64 n = min_t(u64, len, sizeof(zero));

		ret = fd_write(ns, zero, n, off);
		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

static void fd_close(struct nvmet_ns *ns)
{
	if (ns->fd >= 0)
		close(ns->fd);
	ns->fd = -1;
}

/* ---- file -------------------------------------------------------------------------- */

static int file_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	int flags = o->readonly ? O_RDONLY : O_RDWR;
	struct stat st;
	u64 size;

	if (o->size && !o->readonly)
		flags |= O_CREAT;
	/* a file it creates is the owner's alone unless asked (issue 27) */
	ns->fd = open(o->path, flags | O_CLOEXEC,
		      o->create_mode ? (mode_t)o->create_mode : 0600);
	if (ns->fd < 0)
		return -errno;
	/* a block device wants --bdev, anything else is refused too */
	if (fstat(ns->fd, &st) || !S_ISREG(st.st_mode)) {
		fd_close(ns);
		return -EINVAL;
	}
	size = o->size ? o->size : (u64)st.st_size;
	if (o->size && (u64)st.st_size < o->size &&
	    ftruncate(ns->fd, (off_t)o->size)) {
		int err = -errno;

		fd_close(ns);
		return err;
	}
	ns->size = size >> ns->blksize_shift << ns->blksize_shift;
	if (!ns->size) {
		fd_close(ns);
		return -EINVAL;
	}
	return 0;
}

static int file_write_zeroes(struct nvmet_ns *ns, u64 len, u64 off)
{
	if (!fallocate(ns->fd, FALLOC_FL_ZERO_RANGE, (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	return fd_write_zeroes_slow(ns, len, off);
}

static int file_discard(struct nvmet_ns *ns, u64 len, u64 off)
{
	if (!fallocate(ns->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	/* deallocated blocks must read as zeroes (DLFEAT says so) */
	return fd_write_zeroes_slow(ns, len, off);
}

static const struct nvmet_backend_ops nvmet_file_ops = {
	.name = "file",
	.open = file_open,
	.close = fd_close,
	.read = fd_read,
	.write = fd_write,
	.flush = fd_flush,
	.write_zeroes = file_write_zeroes,
	.discard = file_discard,
};

/* ---- block device ---------------------------------------------------------------- */

static int bdev_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	struct stat st;
	u64 size = 0;
	int lbs = 0;

	ns->fd = open(o->path, (o->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (ns->fd < 0)
		return -errno;
	if (fstat(ns->fd, &st) || !S_ISBLK(st.st_mode) ||
	    ioctl(ns->fd, BLKGETSIZE64, &size) || !size) {
		fd_close(ns);
		return -ENOTBLK;
	}
	/* the LBA size cannot be below the device's logical block size */
	if (!ioctl(ns->fd, BLKSSZGET, &lbs) && lbs > (1 << ns->blksize_shift)) {
		if (lbs != 4096) {
			fd_close(ns);
			return -EINVAL;
		}
		ns->blksize_shift = 12;
	}
	ns->size = size >> ns->blksize_shift << ns->blksize_shift;
	if (!ns->size) { /* less than one LBA */
		fd_close(ns);
		return -EINVAL;
	}
	return 0;
}

static int bdev_write_zeroes(struct nvmet_ns *ns, u64 len, u64 off)
{
	u64 range[2] = { off, len };

	if (!ioctl(ns->fd, BLKZEROOUT, range))
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOTTY)
		return -errno;
	return fd_write_zeroes_slow(ns, len, off);
}

/*
 * Deallocate: BLKDISCARD does not promise zeroes, DLFEAT does; zero the
 * range instead (BLKZEROOUT unmaps where the device can).
 */
static int bdev_discard(struct nvmet_ns *ns, u64 len, u64 off)
{
	return bdev_write_zeroes(ns, len, off);
}

static const struct nvmet_backend_ops nvmet_bdev_ops = {
	.name = "bdev",
	.open = bdev_open,
	.close = fd_close,
	.read = fd_read,
	.write = fd_write,
	.flush = fd_flush,
	.write_zeroes = bdev_write_zeroes,
	.discard = bdev_discard,
};

/* ---- entry ------------------------------------------------------------------------- */

int nvmet_ns_open(struct nvmet_ns *ns, const struct nvmet_ns_opts *o)
{
	int ret;

	ns->blksize_shift = (u8)nvmet_blksize_shift(o);
	ns->readonly = o->readonly;
	ns->fd = -1;
	switch (o->type) {
	case NVMET_BACKEND_RAM:
		ns->ops = &nvmet_ram_ops;
		break;
	case NVMET_BACKEND_FILE:
		ns->ops = &nvmet_file_ops;
		break;
	case NVMET_BACKEND_BDEV:
		ns->ops = &nvmet_bdev_ops;
		break;
	default:
		return -EINVAL;
	}
	ret = ns->ops->open(ns, o);
	if (ret)
		ns->ops = NULL;
	return ret;
}

void nvmet_ns_close(struct nvmet_ns *ns)
{
	if (ns->ops)
		ns->ops->close(ns);
	ns->ops = NULL;
}

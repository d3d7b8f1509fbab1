// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet's identifiers (issue 27): the namespaces' UUID and NGUID
 * (and so the EUI-64, the NGUID's first 8 bytes) and each subsystem's
 * default serial number, derived once per machine and kept by
 * --save-config.  The key is the machine's ID (/etc/machine-id, or 16
 * random bytes when it has none), never written out: each identifier is
 * HMAC-SHA-256 of it over a label, the subsystem NQN, the NSID and the
 * namespace's path, so two machines never share one and one machine gets
 * the same ones every start.  The kernel's nvmet makes them random at
 * creation (uuid_gen() for a namespace, a random serial per subsystem)
 * and nvmetcli keeps them in its JSON; the saved JSON does the same here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <rdmarw/kernel.h>

#include "auth.h"
#include "auth_wire.h"
#include "config.h"
#include "nvme_proto.h"

/* 32 hex digits and a newline, as machine-id(5) says. */
int nvmet_machine_id(const char *path, u8 *id, size_t len)
{
	char line[64];
	FILE *f;
	size_t i;

	if (!path || !id || len != NVMET_MACHINE_ID_LEN)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -ENODATA;
	}
	fclose(f);
	for (i = 0; i < 32; i++) {
		char ch = line[i];

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return -EINVAL;
	}
	if (line[32] != '\n' && line[32] != '\0')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned int v;

		sscanf(line + 2 * i, "%2x", &v);
		id[i] = (u8)v;
	}
	/* "uninitialized" and all zeroes are not an ID */
	for (i = 0; i < len && !id[i]; i++)
		;
	return i == len ? -EINVAL : 0;
}

/* HMAC-SHA-256 keyed by the machine over "label\0nqn\0nsid\0path". */
static int ids_hmac(const u8 *machine, const char *label, const char *nqn,
		    u32 nsid, const char *path, u8 out[32])
{
	char msg[NVMF_NQN_SIZE + PATH_MAX + 64];
	int n;

	n = snprintf(msg, sizeof(msg), "%s%c%s%c%u%c%s", label, 0, nqn, 0, nsid,
		     0, path ? path : "");
	if (n < 0 || (size_t)n >= sizeof(msg))
		return -ENAMETOOLONG;
	return nvme_auth_hmac(NVME_AUTH_HASH_SHA256, machine,
			      NVMET_MACHINE_ID_LEN, msg, (size_t)n, out);
}

int nvmet_ns_ids_derive(const u8 *machine, const char *subnqn, u32 nsid,
			const char *path, u8 uuid[16], u8 nguid[16])
{
	u8 h[32];
	int ret;

	if (!machine || !subnqn || !nsid || !uuid || !nguid)
		return -EINVAL;
	ret = ids_hmac(machine, "rdmarw-nvmet namespace", subnqn, nsid, path,
		       h);
	if (ret)
		return ret;
	memcpy(nguid, h, 16);
	memcpy(uuid, h + 16, 16);
	/* RFC 9562 version 8 (the layout is ours), variant 10 */
	uuid[6] = (u8)((uuid[6] & 0x0f) | 0x80);
	uuid[8] = (u8)((uuid[8] & 0x3f) | 0x80);
	nvme_auth_wipe(h, sizeof(h));
	return 0;
}

int nvmet_serial_derive(const u8 *machine, const char *subnqn,
			char out[NVMET_SERIAL_LEN + 1])
{
	u8 h[32];
	int ret, i;

	if (!machine || !subnqn || !out)
		return -EINVAL;
	ret = ids_hmac(machine, "rdmarw-nvmet serial", subnqn, 0, NULL, h);
	if (ret)
		return ret;
	for (i = 0; i < NVMET_SERIAL_LEN / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
	nvme_auth_wipe(h, sizeof(h));
	return 0;
}

static bool all_zero(const u8 *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

/* A subsystem's missing serial and namespace identifiers. */
static int fill_subsys(struct nvmet_config *c, const char *nqn,
		       const char **serial, struct nvmet_ns_opts *ns,
		       char *serial_buf)
{
	u32 i;
	int ret;

	if (!*serial) {
		ret = nvmet_serial_derive(c->machine_id, nqn, serial_buf);
		if (ret)
			return ret;
		*serial = serial_buf;
	}
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
		u8 uuid[16], nguid[16];

		if (ns[i].type == NVMET_BACKEND_NONE)
			continue;
		ret = nvmet_ns_ids_derive(c->machine_id, nqn, i + 1, ns[i].path,
					  uuid, nguid);
		if (ret)
			return ret;
		if (all_zero(ns[i].uuid, 16))
			memcpy(ns[i].uuid, uuid, 16);
		if (all_zero(ns[i].nguid, 16))
			memcpy(ns[i].nguid, nguid, 16);
	}
	return 0;
}

/* mkdir -p @dir: the missing ones 0700 (/var/lib may be missing too). */
static int mkdir_parents(const char *dir)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
		p[i] = dir[i];
	}
	return 0;
}

int nvmet_state_machine_id(const char *dir, u8 *id, size_t len, char *path,
			   size_t path_len)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[PATH_MAX], line[33];
	u8 rnd[NVMET_MACHINE_ID_LEN];
	ssize_t n;
	size_t i;
	int fd, ret;

	if (!dir || !*dir || !id || len != NVMET_MACHINE_ID_LEN || !path)
		return -EINVAL;
	if ((size_t)snprintf(path, path_len, "%s/machine-id", dir) >=
		    path_len ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.machine-id.%d", dir,
			     (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (!nvmet_machine_id(path, id, len))
		return 0;
	ret = mkdir_parents(dir);
	if (ret)
		return ret;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	rnd[0] |= 1; /* never all zeroes */
	for (i = 0; i < sizeof(rnd); i++) {
		line[2 * i] = hex[rnd[i] >> 4];
		line[2 * i + 1] = hex[rnd[i] & 15];
	}
	line[32] = '\n';
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	n = write(fd, line, sizeof(line));
	ret = n == (ssize_t)sizeof(line) && !fsync(fd) ? 0 : -EIO;
	close(fd);
	/* the first to link it wins; the others read what it wrote */
	if (!ret && link(tmp, path) && errno != EEXIST)
		ret = -errno;
	unlink(tmp);
	return ret ? ret : nvmet_machine_id(path, id, len);
}

int nvmet_config_fill_ids(struct nvmet_config *c, const char *machine_id_path)
{
	int ret;

	ret = nvmet_machine_id(machine_id_path, c->machine_id,
			       sizeof(c->machine_id));
	snprintf(c->id_source, sizeof(c->id_source), "%s",
		 ret ? "" : machine_id_path);
	if (ret && c->state_dir)
		ret = nvmet_state_machine_id(
			c->state_dir, c->machine_id, sizeof(c->machine_id),
			c->id_source, sizeof(c->id_source));
	if (ret)
		c->id_source[0] = '\0';
	c->random_ids = ret != 0;
	if (ret && getrandom(c->machine_id, sizeof(c->machine_id), 0) !=
			   (ssize_t)sizeof(c->machine_id))
		return -EIO;
	return nvmet_config_derive_ids(c);
}

int nvmet_config_derive_ids(struct nvmet_config *c)
{
	u32 i;
	int ret;

	if (!c->o.nr_subsys)
		return fill_subsys(
			c, c->o.subnqn ? c->o.subnqn : NVMET_DEFAULT_SUBNQN,
			&c->o.serial, c->o.ns, c->serials[0]);
	for (i = 0; i < c->o.nr_subsys; i++) {
		ret = fill_subsys(c, c->subsys[i].nqn, &c->subsys[i].serial,
				  c->subsys[i].ns, c->serials[i]);
		if (ret)
			return ret;
	}
	return 0;
}

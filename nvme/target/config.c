// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet's configuration (config.h): the command-line options and
 * the key = value config file, checked and applied to the target's
 * options, lifted out of main.c.  Every refusal prints one line on
 * standard error that names the option (or the file, line and key).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rdmarw/kernel.h>
#include <rdmarw/version.h>

#include "auth.h"
#include <rdmarw/soft.h>

#include "config.h"
#include "log.h"
#include "nvme_ids.h"
#include "nvme_proto.h"

#define PROG "rdmarw-nvmet"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options]\n"
		"  --device NAME      the rdmarw device the address is on\n"
		"  --addr IP          address to listen on (IPv4 or IPv6)\n"
		"  --port N           port (default 4420)\n"
		"  --ram SIZE         a namespace in memory (default: 64M)\n"
		"  --file PATH        a namespace backed by a file\n"
		"  --file-size SIZE   create or grow the next --file to SIZE\n"
		"  --bdev PATH        a namespace backed by a block device\n"
		"  --block-size N     LBA size of the next namespaces: 512, 4096\n"
		"  --readonly         the next namespaces refuse writes\n"
		"  --io-engine E      I/O of the next file and block device\n"
		"                     namespaces: auto (io_uring where the\n"
		"                     kernel allows, default) or sync\n"
		"  --buffered         ... with io_uring, never O_DIRECT\n"
		"  --ns-mode MODE     mode of namespace files it creates\n"
		"                     (octal, default 0600; e.g. 0644)\n"
		"  --nqn NQN          the subsystem NQN (default %s)\n"
		"  --serial SN        the serial number (1-20 printable ASCII)\n"
		"  --host NQN         a host allowed to connect (repeatable;\n"
		"                     none by default)\n"
		"  --allow-any-host   every host may connect\n"
		"  --dhchap-key NQN=KEY  host NQN must authenticate with this\n"
		"                     DH-HMAC-CHAP key (DHHC-1:...), also when\n"
		"                     any host may connect (repeatable)\n"
		"  --dhchap-ctrl-key NQN=KEY  the controller's key for NQN\n"
		"                     (bidirectional authentication)\n"
		"  --dhchap-hash NQN=H   hmac(sha256) (default), hmac(sha384),\n"
		"                     hmac(sha512)\n"
		"  --dhchap-dhgroup NQN=G  null (default), ffdhe2048..ffdhe8192\n"
		"  --queues N         I/O queues per host, 1..128 (default 128)\n"
		"  --queue-size N     I/O queue depth, 2..128 (default 128)\n"
		"  --inline SIZE      in-capsule data bytes (0: none; 4096)\n"
		"  --mdts N           largest transfer, 4 KiB << N, 1..8\n"
		"  --kato-grace MS    extra time before keep-alive expiry\n"
		"  --data-buf SIZE    data buffer per I/O queue entry, 4K..1M\n"
		"                     (default 128K)\n"
		"  --connect-timeout MS  close a connection that sends no\n"
		"                     valid Connect in MS (default 10000)\n"
		"  --max-unadmitted N connections waiting for their Connect,\n"
		"                     in all (default 512)\n"
		"  --max-unadmitted-per-addr N  ... per host address (160)\n"
		"  --poll-groups N    threads that poll the I/O queues, 1..64\n"
		"                     (default 0: a CQ thread per queue)\n"
		"  --poll-idle-us US  a poll group sleeps after US without a\n"
		"                     completion (default 50)\n"
		"  --poll-busy        poll groups never sleep\n"
		"  --config FILE      read options from FILE (key = value, or\n"
		"                     nvmetcli's JSON)\n"
		"  --save-config FILE write the configuration as nvmetcli's\n"
		"                     JSON to FILE and exit\n"
		"  --soft PROFILE     create a software device (mlx5, rxe, siw,\n"
		"                     siw-tcp: iWARP over TCP, other machines)\n"
		"                     with --addr (default 127.0.0.1)\n"
		"  --duration SEC     stop after SEC seconds\n"
		"  --stats            print the target's counters at the end\n"
		"  --stats-file PATH  write the counters as JSON to PATH on\n"
		"                     SIGUSR1 and every --stats-interval\n"
		"  --stats-interval SEC  rewrite --stats-file every SEC seconds\n"
		"                     (1 to 86400; default: on SIGUSR1 only)\n"
		"  -v, --verbose      log connections and command errors\n"
		"                     (--log-level info)\n"
		"  --log-level L      err, warning, notice (default), info,\n"
		"                     debug, or 3..7\n"
		"      --version      the program's and the library's version\n"
		"  -h, --help         this text\n",
		NVMET_DEFAULT_SUBNQN);
}

/* "64M", "1G", "4096", "512k": bytes, binary units. */
static int parse_size(const char *s, u64 *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))
		return -EINVAL;
	if (shift && v > (~0ULL >> shift))
		return -ERANGE;
	*out = (u64)v << shift;
	return 0;
}

static int parse_uint(const char *s, u32 lo, u32 hi, u32 *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (u32)v;
	return 0;
}

static int add_ns(struct nvmet_config *c, enum nvmet_backend_type type,
		  const char *path, u64 size, const char *what)
{
	struct nvmet_ns_opts *n;

	if (c->nr_ns >= NVMET_MAX_NAMESPACES) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": %s: at most %d namespaces",
			     what, NVMET_MAX_NAMESPACES);
		return -EINVAL;
	}
	n = &c->o.ns[c->nr_ns++];
	n->type = type;
	n->path = path;
	n->size = size;
	n->block_size = c->block_size;
	n->readonly = c->readonly;
	n->io_engine = c->io_engine;
	n->buffered = c->buffered;
	return 0;
}

/* --host NQN: a valid NQN, not twice, not beside --allow-any-host. */
static int add_host(struct nvmet_config *c, const char *nqn, const char *where)
{
	u32 i;

	if (!nvme_nqn_valid(nqn)) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": %s: bad value '%s'", where,
			     nqn);
		return -EINVAL;
	}
	for (i = 0; i < c->o.nr_hosts; i++) {
		if (!strcmp(c->hosts[i], nqn)) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": %s: '%s' given twice", where, nqn);
			return -EINVAL;
		}
	}
	if (c->o.nr_hosts >= NVMET_MAX_HOSTS) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": %s: at most %d hosts",
			     where, NVMET_MAX_HOSTS);
		return -EINVAL;
	}
	c->hosts[c->o.nr_hosts++] = nqn;
	c->o.hosts = c->hosts;
	return 0;
}

enum {
	OPT_DEVICE = 256,
	OPT_ADDR,
	OPT_PORT,
	OPT_RAM,
	OPT_FILE,
	OPT_FILE_SIZE,
	OPT_BDEV,
	OPT_BLOCK_SIZE,
	OPT_READONLY,
	OPT_IO_ENGINE,
	OPT_BUFFERED,
	OPT_NS_MODE,
	OPT_NQN,
	OPT_SERIAL,
	OPT_HOST,
	OPT_ALLOW_ANY_HOST,
	OPT_DHCHAP_KEY,
	OPT_DHCHAP_CTRL_KEY,
	OPT_DHCHAP_HASH,
	OPT_DHCHAP_DHGROUP,
	OPT_QUEUES,
	OPT_QUEUE_SIZE,
	OPT_INLINE,
	OPT_MDTS,
	OPT_KATO_GRACE,
	OPT_DATA_BUF,
	OPT_CONNECT_TIMEOUT,
	OPT_MAX_UNADMITTED,
	OPT_MAX_UNADMITTED_PER_ADDR,
	OPT_POLL_GROUPS,
	OPT_POLL_IDLE_US,
	OPT_POLL_BUSY,
	OPT_CONFIG,
	OPT_SAVE_CONFIG,
	OPT_SOFT,
	OPT_DURATION,
	OPT_STATS,
	OPT_STATS_FILE,
	OPT_STATS_INTERVAL,
	OPT_LOG_LEVEL,
	OPT_VERSION,
	OPT_VERBOSE = 'v',
	OPT_HELP = 'h',
};

static const struct option long_opts[] = {
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "addr", required_argument, NULL, OPT_ADDR },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "ram", required_argument, NULL, OPT_RAM },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "file-size", required_argument, NULL, OPT_FILE_SIZE },
	{ "bdev", required_argument, NULL, OPT_BDEV },
	{ "block-size", required_argument, NULL, OPT_BLOCK_SIZE },
	{ "readonly", no_argument, NULL, OPT_READONLY },
	{ "io-engine", required_argument, NULL, OPT_IO_ENGINE },
	{ "buffered", no_argument, NULL, OPT_BUFFERED },
	{ "ns-mode", required_argument, NULL, OPT_NS_MODE },
	{ "nqn", required_argument, NULL, OPT_NQN },
	{ "serial", required_argument, NULL, OPT_SERIAL },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "allow-any-host", no_argument, NULL, OPT_ALLOW_ANY_HOST },
	{ "dhchap-key", required_argument, NULL, OPT_DHCHAP_KEY },
	{ "dhchap-ctrl-key", required_argument, NULL, OPT_DHCHAP_CTRL_KEY },
	{ "dhchap-hash", required_argument, NULL, OPT_DHCHAP_HASH },
	{ "dhchap-dhgroup", required_argument, NULL, OPT_DHCHAP_DHGROUP },
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "queue-size", required_argument, NULL, OPT_QUEUE_SIZE },
	{ "inline", required_argument, NULL, OPT_INLINE },
	{ "mdts", required_argument, NULL, OPT_MDTS },
	{ "kato-grace", required_argument, NULL, OPT_KATO_GRACE },
	{ "data-buf", required_argument, NULL, OPT_DATA_BUF },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "max-unadmitted", required_argument, NULL, OPT_MAX_UNADMITTED },
	{ "max-unadmitted-per-addr", required_argument, NULL,
	  OPT_MAX_UNADMITTED_PER_ADDR },
	{ "poll-groups", required_argument, NULL, OPT_POLL_GROUPS },
	{ "poll-idle-us", required_argument, NULL, OPT_POLL_IDLE_US },
	{ "poll-busy", no_argument, NULL, OPT_POLL_BUSY },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "save-config", required_argument, NULL, OPT_SAVE_CONFIG },
	{ "soft", required_argument, NULL, OPT_SOFT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "stats-file", required_argument, NULL, OPT_STATS_FILE },
	{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The entry of @nqn in the DH-HMAC-CHAP table, added when new (@nqn kept). */
static struct nvmet_host_opts *host_key_entry(struct nvmet_config *c, char *nqn,
					      const char *where)
{
	u32 i, n = c->o.nr_host_keys;

	for (i = 0; i < n; i++) {
		if (!strcmp(c->host_keys[i].nqn, nqn)) {
			free(nqn);
			return &c->host_keys[i];
		}
	}
	if (n >= NVMET_MAX_HOSTS) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": %s: at most %d hosts",
			     where, NVMET_MAX_HOSTS);
		free(nqn);
		return NULL;
	}
	c->host_key_nqns[n] = nqn;
	c->host_keys[n].nqn = nqn;
	c->o.nr_host_keys = n + 1;
	c->o.host_keys = c->host_keys;
	return &c->host_keys[n];
}

/* A value that parses for its --dhchap-* option. */
static bool dhchap_value_valid(int opt, const char *v)
{
	struct nvme_dhchap_key k;
	int ret;

	switch (opt) {
	case OPT_DHCHAP_KEY:
	case OPT_DHCHAP_CTRL_KEY:
		ret = nvme_auth_parse_key(v, &k);
		nvme_auth_wipe(&k, sizeof(k));
		return !ret;
	case OPT_DHCHAP_HASH:
		return nvme_auth_hmac_id(v) != NVME_AUTH_HASH_INVALID;
	default:
		return nvme_auth_dhgroup_id(v) != NVME_AUTH_DHGROUP_INVALID;
	}
}

/*
 * Where NQN=VALUE splits: an NQN may hold '=' (nvme_nqn_valid() allows
 * any printable byte) and a key's base64 ends with '=' padding, so a key
 * splits at the last "=DHHC-1:" (no key holds a second one), a hash or
 * group name (never an '=') at the last '='.
 */
static const char *dhchap_split(int opt, const char *arg)
{
	const char *at = NULL, *p = arg;

	if (!arg)
		return NULL;
	if (opt != OPT_DHCHAP_KEY && opt != OPT_DHCHAP_CTRL_KEY)
		return strrchr(arg, '=');
	while ((p = strstr(p, "=DHHC-1:"))) {
		at = p;
		p++;
	}
	return at ? at : strchr(arg, '=');
}

/* --dhchap-key, -ctrl-key, -hash, -dhgroup NQN=VALUE (each once a host). */
static int add_dhchap(struct nvmet_config *c, int opt, const char *arg,
		      const char *where)
{
	const char *eq = dhchap_split(opt, arg);
	struct nvmet_host_opts *h;
	const char **field;
	char *nqn;

	if (!eq || eq == arg || !eq[1])
		goto bad;
	nqn = strndup(arg, (size_t)(eq - arg));
	if (!nqn)
		return -ENOMEM;
	if (!nvme_nqn_valid(nqn) || !dhchap_value_valid(opt, eq + 1)) {
		free(nqn);
		goto bad;
	}
	h = host_key_entry(c, nqn, where);
	if (!h)
		return -EINVAL;
	field = opt == OPT_DHCHAP_KEY	   ? &h->dhchap_key :
		opt == OPT_DHCHAP_CTRL_KEY ? &h->dhchap_ctrl_key :
		opt == OPT_DHCHAP_HASH	   ? &h->dhchap_hash :
					     &h->dhchap_dhgroup;
	if (*field) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": %s: given twice for %s",
			     where, h->nqn);
		return -EINVAL;
	}
	*field = eq + 1;
	return 0;
bad:
	/* the value may be a secret: not echoed */
	nvmet_printk(NVMET_LOG_ERR, PROG ": %s: bad value (NQN=VALUE)", where);
	return -EINVAL;
}

static int read_config(struct nvmet_config *c, const char *path, int depth);

/*
 * An option that sets one value may be given once, on the command line
 * and in the config file together: a second would silently win.
 */
static int once_only(struct nvmet_config *c, int opt, const char *where)
{
	static const int single[] = {
		OPT_DEVICE,	    OPT_ADDR,
		OPT_PORT,	    OPT_NQN,
		OPT_SERIAL,	    OPT_QUEUES,
		OPT_QUEUE_SIZE,	    OPT_INLINE,
		OPT_MDTS,	    OPT_KATO_GRACE,
		OPT_DATA_BUF,	    OPT_CONNECT_TIMEOUT,
		OPT_MAX_UNADMITTED, OPT_MAX_UNADMITTED_PER_ADDR,
		OPT_SOFT,	    OPT_DURATION,
		OPT_SAVE_CONFIG,    OPT_ALLOW_ANY_HOST,
		OPT_STATS_FILE,	    OPT_STATS_INTERVAL,
		OPT_NS_MODE,	    OPT_LOG_LEVEL,
		OPT_POLL_GROUPS,    OPT_POLL_IDLE_US,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(single); i++) {
		if (single[i] != opt)
			continue;
		if (c->seen[i]) {
			nvmet_printk(NVMET_LOG_ERR, PROG ": %s: given twice",
				     where);
			return -EINVAL;
		}
		c->seen[i] = true;
	}
	return 0;
}

/*
 * Apply one option; @where names it in messages ("--port" or
 * "FILE:LINE: port").  0, or -EINVAL after printing why.
 */
static int apply(struct nvmet_config *c, int opt, const char *arg,
		 const char *where, int depth)
{
	struct in6_addr a6;
	struct in_addr a4;
	u64 size;
	u32 v;

	if (once_only(c, opt, where))
		return -EINVAL;
	switch (opt) {
	case OPT_DEVICE:
		c->o.device = arg;
		return 0;
	case OPT_ADDR:
		if (inet_pton(AF_INET, arg, &a4) != 1 &&
		    inet_pton(AF_INET6, arg, &a6) != 1)
			goto bad;
		c->o.addr = arg;
		return 0;
	case OPT_PORT:
		if (parse_uint(arg, 1, 65535, &v))
			goto bad;
		c->o.port = (u16)v;
		return 0;
	case OPT_RAM:
		if (parse_size(arg, &size) || size < 4096)
			goto bad;
		return add_ns(c, NVMET_BACKEND_RAM, NULL, size, where);
	case OPT_FILE:
		if (!*arg)
			goto bad;
		size = c->pending_file_size;
		c->pending_file_size = 0;
		return add_ns(c, NVMET_BACKEND_FILE, arg, size, where);
	case OPT_FILE_SIZE:
		if (parse_size(arg, &size) || size < 4096)
			goto bad;
		c->pending_file_size = size;
		return 0;
	case OPT_BDEV:
		if (!*arg)
			goto bad;
		return add_ns(c, NVMET_BACKEND_BDEV, arg, 0, where);
	case OPT_BLOCK_SIZE:
		if (parse_uint(arg, 512, 4096, &v) || (v != 512 && v != 4096))
			goto bad;
		c->block_size = v;
		return 0;
	case OPT_READONLY:
		c->readonly = true;
		return 0;
	case OPT_IO_ENGINE:
		if (!strcmp(arg, "auto"))
			c->io_engine = NVMET_IO_ENGINE_AUTO;
		else if (!strcmp(arg, "sync"))
			c->io_engine = NVMET_IO_ENGINE_SYNC;
		else
			goto bad;
		return 0;
	case OPT_BUFFERED:
		c->buffered = true;
		return 0;
	case OPT_NS_MODE:
		/* read and write for the owner; never execute or set-id */
		if (parse_uint(arg, 0, 0666, &v) || (v & 0600) != 0600 ||
		    arg[0] != '0')
			goto bad;
		c->ns_mode = v;
		return 0;
	case OPT_NQN:
		if (!nvme_nqn_valid(arg) || strncmp(arg, "nqn.", 4))
			goto bad;
		if (!strcmp(arg, NVME_DISC_SUBSYS_NAME)) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG
				     ": %s: '%s' is the discovery subsystem's "
				     "NQN",
				     where, arg);
			return -EINVAL;
		}
		c->o.subnqn = arg;
		return 0;
	case OPT_SERIAL:
		if (!nvme_serial_valid(arg))
			goto bad;
		c->o.serial = arg;
		return 0;
	case OPT_HOST:
		return add_host(c, arg, where);
	case OPT_ALLOW_ANY_HOST:
		c->o.allow_any_host = true;
		return 0;
	case OPT_DHCHAP_KEY:
	case OPT_DHCHAP_CTRL_KEY:
	case OPT_DHCHAP_HASH:
	case OPT_DHCHAP_DHGROUP:
		return add_dhchap(c, opt, arg, where);
	case OPT_QUEUES:
		if (parse_uint(arg, 1, NVMET_MAX_IO_QUEUES, &v))
			goto bad;
		c->o.max_io_queues = v;
		return 0;
	case OPT_QUEUE_SIZE:
		if (parse_uint(arg, 2, NVMET_MAX_QUEUE_SIZE, &v))
			goto bad;
		c->o.max_queue_size = v;
		return 0;
	case OPT_INLINE:
		if (parse_size(arg, &size) || size > 16384)
			goto bad;
		c->o.inline_data_size = size ? (u32)size : NVMET_NO_INLINE;
		return 0;
	case OPT_MDTS:
		if (parse_uint(arg, 1, 8, &v))
			goto bad;
		c->o.mdts_max = v;
		return 0;
	case OPT_KATO_GRACE:
		if (parse_uint(arg, 0, 3600000, &v))
			goto bad;
		c->o.kato_grace_ms = v;
		return 0;
	case OPT_DATA_BUF:
		if (parse_size(arg, &size) || size < 4096 ||
		    size > NVMET_MAX_DATA_BUF)
			goto bad;
		c->o.data_buf_size = (u32)size;
		return 0;
	case OPT_CONNECT_TIMEOUT:
		if (parse_uint(arg, 1, 3600000, &v))
			goto bad;
		c->o.connect_timeout_ms = v;
		return 0;
	case OPT_MAX_UNADMITTED:
		if (parse_uint(arg, 1, 65536, &v))
			goto bad;
		c->o.max_unadmitted = v;
		return 0;
	case OPT_POLL_GROUPS:
		if (parse_uint(arg, 1, NVMET_MAX_POLL_GROUPS, &v))
			goto bad;
		c->o.poll_groups = v;
		return 0;
	case OPT_POLL_IDLE_US:
		if (parse_uint(arg, 1, 1000000, &v))
			goto bad;
		c->o.poll_idle_us = v;
		return 0;
	case OPT_POLL_BUSY:
		c->o.poll_busy = true;
		return 0;
	case OPT_MAX_UNADMITTED_PER_ADDR:
		if (parse_uint(arg, 1, 65536, &v))
			goto bad;
		c->o.max_unadmitted_per_addr = v;
		return 0;
	case OPT_CONFIG:
		if (depth > 0) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": %s: config files do not nest",
				     where);
			return -EINVAL;
		}
		return read_config(c, arg, depth + 1);
	case OPT_SAVE_CONFIG:
		if (!*arg)
			goto bad;
		c->save_path = arg;
		return 0;
	case OPT_SOFT: {
		struct soft_profile p;

		if (soft_profile_get(arg, &p))
			goto bad;
		c->soft = arg;
		return 0;
	}
	case OPT_DURATION: {
		char *end;

		c->duration = strtod(arg, &end);
		if (end == arg || *end || c->duration <= 0 || c->duration > 1e7)
			goto bad;
		return 0;
	}
	case OPT_STATS:
		c->print_stats = true;
		return 0;
	case OPT_STATS_FILE:
		if (!*arg)
			goto bad;
		c->stats_file = arg;
		return 0;
	case OPT_STATS_INTERVAL:
		if (parse_uint(arg, 1, 86400, &v))
			goto bad;
		c->stats_interval = v;
		return 0;
	case OPT_VERBOSE:
		c->o.verbose = true;
		return 0;
	case OPT_LOG_LEVEL: {
		int level = nvmet_log_parse_level(arg);

		if (level < 0)
			goto bad;
		c->log_level = level;
		if (level >= NVMET_LOG_INFO)
			c->o.verbose = true;
		return 0;
	}
	default:
		nvmet_printk(NVMET_LOG_ERR, PROG ": %s: unknown option", where);
		return -EINVAL;
	}
bad:
	nvmet_printk(NVMET_LOG_ERR, PROG ": %s: bad value '%s'", where, arg);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* "key = value" lines (or "key" for flags); '#' starts a comment. */
/* A file that starts with '{' is nvmetcli's JSON (config_json.c). */
static int read_json(struct nvmet_config *c, const char *path, FILE *f)
{
	size_t max = (1u << 20) + 1, len;
	char *text = malloc(max + 1);
	int ret;

	if (!text)
		return -ENOMEM;
	len = fread(text, 1, max, f);
	text[len] = '\0';
	if (ferror(f) || memchr(text, '\0', len)) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": %s: cannot read it as JSON",
			     path);
		free(text);
		return -EINVAL;
	}
	ret = nvmet_config_read_json(c, path, text, len);
	free(text);
	return ret;
}

static int is_json(FILE *f)
{
	int ch;

	do
		ch = getc(f);
	while (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r');
	rewind(f);
	return ch == '{';
}

static int read_config(struct nvmet_config *c, const char *path, int depth)
{
	char line[1024], where[PATH_MAX + 64];
	const struct option *o;
	int lineno = 0, ret = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		nvmet_printk(NVMET_LOG_ERR, PROG ": --config %s: %s", path,
			     strerror(errno));
		return -EINVAL;
	}
	if (is_json(f)) {
		ret = read_json(c, path, f);
		fclose(f);
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *val, *hash, *eq, *copy;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": %s:%d: line too long", path,
				     lineno);
			ret = -EINVAL;
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		val = NULL;
		if (eq) {
			*eq = '\0';
			val = trim(eq + 1);
			key = trim(key);
		}
		snprintf(where, sizeof(where), "%s:%d: %s", path, lineno, key);
		for (o = long_opts; o->name; o++)
			if (!strcmp(o->name, key))
				break;
		if (!o->name || o->val == OPT_HELP || o->val == OPT_VERSION) {
			nvmet_printk(NVMET_LOG_ERR, PROG ": %s: unknown key",
				     where);
			ret = -EINVAL;
			break;
		}
		if ((o->has_arg == required_argument) != (val != NULL) ||
		    (val && !*val)) {
			nvmet_printk(NVMET_LOG_ERR, PROG ": %s: %s", where,
				     o->has_arg == required_argument ?
					     "needs a value (key = value)" :
					     "takes no value");
			ret = -EINVAL;
			break;
		}
		copy = NULL;
		if (val) {
			if (c->nr_owned >=
			    sizeof(c->owned) / sizeof(c->owned[0])) {
				nvmet_printk(NVMET_LOG_ERR,
					     PROG ": %s: too many lines",
					     where);
				ret = -EINVAL;
				break;
			}
			copy = strdup(val);
			if (!copy) {
				ret = -ENOMEM;
				break;
			}
			c->owned[c->nr_owned++] = copy;
		}
		ret = apply(c, o->val, copy, where, depth);
		if (ret)
			break;
	}
	fclose(f);
	return ret;
}

int nvmet_config_args(struct nvmet_config *c, int argc, char **argv)
{
	u32 i;
	int opt;

	opterr = 0;
	optind = 0; /* glibc: start over (the tests call it again) */
	while ((opt = getopt_long(argc, argv, ":vh", long_opts, NULL)) != -1) {
		char where[64];

		if (opt == OPT_HELP) {
			usage(stdout);
			return NVMET_CONFIG_DONE;
		}
		if (opt == OPT_VERSION) {
			printf(PROG " %s (librdmarw %s)\n",
			       RDMARW_VERSION_STRING, rdmarw_version());
			return NVMET_CONFIG_DONE;
		}
		if (opt == '?') {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": unknown option '%s' (--help)",
				     argv[optind - 1]);
			return -EINVAL;
		}
		if (opt == ':') {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": option '%s' needs a value",
				     argv[optind - 1]);
			return -EINVAL;
		}
		snprintf(where, sizeof(where), "--%s",
			 opt == OPT_VERBOSE ? "verbose" :
					      long_opts[opt - OPT_DEVICE].name);
		if (apply(c, opt, optarg, where, 0))
			return -EINVAL;
	}
	if (optind < argc) {
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": unexpected argument '%s' (--help)",
			     argv[optind]);
		return -EINVAL;
	}
	if (c->pending_file_size) {
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": --file-size must come before its --file");
		return -EINVAL;
	}
	for (i = 0; c->json && i < c->o.nr_host_keys; i++) {
		if (c->host_key_nqns[i]) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": a JSON configuration takes no "
					  "--dhchap-* (its hosts[].dhchap)");
			return -EINVAL;
		}
	}
	for (i = 0; i < c->o.nr_host_keys; i++) {
		if (!c->host_keys[i].dhchap_key) {
			nvmet_printk(NVMET_LOG_ERR,
				     PROG ": %s: --dhchap-key missing",
				     c->host_keys[i].nqn);
			return -EINVAL;
		}
	}
	if (c->json && (c->nr_ns || c->o.addr || c->o.nr_hosts ||
			c->o.allow_any_host || c->soft)) {
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": a JSON configuration takes no --ram, "
				  "--file, --bdev, --addr, --host, "
				  "--allow-any-host or --soft");
		return -EINVAL;
	}
	for (i = 0; i < c->nr_ns; i++)
		c->o.ns[i].create_mode = c->ns_mode;
	if (c->o.allow_any_host && c->o.nr_hosts) {
		nvmet_printk(NVMET_LOG_ERR,
			     PROG ": --host and --allow-any-host exclude "
				  "each other");
		return -EINVAL;
	}
	return 0;
}

void nvmet_config_init(struct nvmet_config *c)
{
	memset(c, 0, sizeof(*c));
	nvmet_target_opts_init(&c->o);
	c->o.ns[0].type = NVMET_BACKEND_NONE;
}

int nvmet_config_read(struct nvmet_config *c, const char *path)
{
	return read_config(c, path, 1);
}

int nvmet_config_add_default_ns(struct nvmet_config *c)
{
	if (c->nr_ns || c->o.nr_subsys)
		return 0;
	return add_ns(c, NVMET_BACKEND_RAM, NULL, 64ULL << 20, "--ram");
}

void nvmet_config_free(struct nvmet_config *c)
{
	u32 i;

	for (i = 0; i < c->nr_owned; i++)
		free(c->owned[i]);
	c->nr_owned = 0;
	for (i = 0; i < NVMET_MAX_HOSTS; i++) {
		free(c->host_key_nqns[i]);
		c->host_key_nqns[i] = NULL;
	}
	nvmet_config_free_json(c);
	nvme_auth_wipe(c->machine_id, sizeof(c->machine_id));
}

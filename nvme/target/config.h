/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdmarw-nvmet's configuration model: what the command line and the
 * key = value config file say, as the target's options plus what the
 * program does with them (config.c).  Not part of librdmarw's ABI.
 */
#ifndef RDMARW_NVMET_CONFIG_H
#define RDMARW_NVMET_CONFIG_H

#include <rdmarw/compat.h>

#include <limits.h>
#include <stdio.h>

#include "nvmet.h"

/* nvmet_config_args(): --help or --version was printed, nothing to run. */
#define NVMET_CONFIG_DONE 1

/* Bytes of a machine ID (/etc/machine-id: 32 hex digits). */
#define NVMET_MACHINE_ID_LEN 16
/* Characters of a derived serial number (hex; the field holds 20). */
#define NVMET_SERIAL_LEN 20
/* Where the machine ID is read. */
#define NVMET_MACHINE_ID_PATH "/etc/machine-id"
/* where an ID of its own is kept when the machine has none */
#define NVMET_STATE_DIR "/var/lib/rdmarw"

/**
 * struct nvmet_config - the program's configuration
 * @o: the target's options
 * @soft: --soft PROFILE, or NULL
 * @duration: --duration in seconds (0: until a signal)
 * @nr_ns: namespaces given
 * @block_size: the LBA size of the namespaces that follow
 * @readonly: the namespaces that follow refuse writes
 * @print_stats: --stats
 * @stats_file: --stats-file PATH, or NULL
 * @stats_interval: --stats-interval in seconds (0: on SIGUSR1 only)
 * @hosts: the --host NQNs (@o.hosts points here)
 * @seen: the single-value options given
 * @pending_file_size: --file-size for the next --file
 * @owned: the config file's strings the options point to
 * @nr_owned: how many
 * @subsys: the subsystems of a JSON configuration (@o.subsys points here)
 * @nr_subsys: how many
 * @ports: its ports (@o.ports points here)
 * @nr_ports: how many
 * @json_hosts: each subsystem's allowed hosts (strings in @json)
 * @json_port_subsys: each port's subsystem NQNs (strings in @json)
 * @json: the parsed JSON, or NULL
 * @save_path: --save-config FILE, or NULL
 * @host_keys: the hosts that must authenticate (--dhchap-*, or the JSON's
 *             hosts[].dhchap); @o.host_keys points here
 * @host_key_nqns: the NQNs of @host_keys the command line gave (owned)
 * @log_level: --log-level (0: not given)
 * @ns_mode: --ns-mode, the mode of namespace files it creates (0: 0600)
 * @machine_id: the key of the derived identifiers (nvmet_config_fill_ids())
 * @random_ids: the machine has no ID: @machine_id is random, the derived
 *              identifiers last only as long as a --save-config keeps them
 * @state_dir: where an ID of rdmarw-nvmet's own is kept when the machine
 *             has none (NULL: nowhere; the program: $STATE_DIRECTORY or
 *             /var/lib/rdmarw)
 * @id_source: the file the ID came from (NULL: random)
 * @serials: the derived serial numbers (the subsystems' serial points here)
 */
struct nvmet_config {
	struct nvmet_target_opts o;
	const char *soft; /* --soft PROFILE */
	double duration; /* seconds; 0: until a signal */
	u32 nr_ns;
	u32 block_size; /* for the namespaces that follow */
	bool readonly;
	enum nvmet_io_engine io_engine; /* for the namespaces that follow */
	bool buffered; /* ... */
	bool print_stats;
	const char *stats_file;
	u32 stats_interval;
	const char *hosts[NVMET_MAX_HOSTS]; /* --host */
	bool seen[32]; /* single-value options given (once_only()) */
	u64 pending_file_size; /* --file-size, for the next --file */
	/* strings the options point to (config file values) */
	char *owned[64];
	u32 nr_owned;
	struct nvmet_subsys_opts subsys[NVMET_MAX_SUBSYS];
	u32 nr_subsys;
	struct nvmet_port_opts ports[NVMET_MAX_PORTS];
	u32 nr_ports;
	const char **json_hosts[NVMET_MAX_SUBSYS];
	const char **json_port_subsys[NVMET_MAX_PORTS];
	struct json *json;
	const char *save_path;
	struct nvmet_host_opts host_keys[NVMET_MAX_HOSTS];
	char *host_key_nqns[NVMET_MAX_HOSTS];
	int log_level;
	u32 ns_mode;
	u8 machine_id[NVMET_MACHINE_ID_LEN];
	bool random_ids;
	const char *state_dir;
	char id_source[PATH_MAX];
	char serials[NVMET_MAX_SUBSYS][NVMET_SERIAL_LEN + 1];
};

/**
 * nvmet_config_init() - an empty configuration (the target's defaults,
 * no namespace yet)
 * @c: the configuration
 */
void nvmet_config_init(struct nvmet_config *c);

/**
 * nvmet_config_args() - apply the command line
 * @c: the configuration
 * @argc: argument count
 * @argv: arguments (argv[0] is the program)
 *
 * Return: 0; NVMET_CONFIG_DONE after printing --help or --version;
 * -EINVAL after printing one line that names the refused option, value
 * or config line.
 */
int nvmet_config_args(struct nvmet_config *c, int argc, char **argv);

/**
 * nvmet_config_read() - apply a config file (key = value lines)
 * @c: the configuration
 * @path: the file
 *
 * Return: 0, or -EINVAL (-ENOMEM) after printing why.
 */
int nvmet_config_read(struct nvmet_config *c, const char *path);

/**
 * nvmet_config_read_json() - apply nvmetcli's JSON configuration
 * @c: the configuration
 * @path: where it came from (for messages)
 * @text: the JSON, NUL terminated
 * @len: its length (at most 1 MiB)
 *
 * Subsystems (nqn, allowed_hosts, attr.allow_any_host, attr.serial,
 * namespaces: nsid 1..16, enable, device.path, device.uuid,
 * device.nguid) and ports (addr.trtype
 * "rdma", traddr, trsvcid, subsystems) become @c->o's lists; the strings
 * stay in @c until nvmet_config_free().
 *
 * Return: 0, or -EINVAL (-ENOMEM) after printing why.
 */
int nvmet_config_read_json(struct nvmet_config *c, const char *path,
			   const char *text, size_t len);

/**
 * nvmet_config_write_json() - write target options as nvmetcli's JSON
 * @o: the options (the quick start's fields, or the lists)
 * @f: where to
 *
 * Each allowed host is written once under "hosts"; a namespace's
 * device.uuid and device.nguid when they are set (not all zeroes).
 *
 * Return: 0; -EINVAL (after a message) for a namespace in memory, which
 * nvmetcli cannot express, or a port without an address; -EIO when
 * writing failed.
 */
int nvmet_config_write_json(const struct nvmet_target_opts *o, FILE *f);

/**
 * nvmet_config_free_json() - free what nvmet_config_read_json() kept
 * @c: the configuration
 */
void nvmet_config_free_json(struct nvmet_config *c);

/**
 * nvmet_config_add_default_ns() - a 64 MiB RAM namespace when none is given
 * @c: the configuration
 *
 * Return: 0, or -EINVAL when it cannot be added.
 */
int nvmet_config_add_default_ns(struct nvmet_config *c);

/**
 * nvmet_machine_id() - read the machine's ID
 * @path: the file (NVMET_MACHINE_ID_PATH), as machine-id(5): 32 lower-case
 *        hex digits and a newline
 * @id: where to put it
 * @len: NVMET_MACHINE_ID_LEN
 *
 * Return: 0; -EINVAL for a bad @len or a file that holds no ID (other
 * text, "uninitialized", all zeroes); -ENODATA for an empty file; the
 * negative errno of fopen() (-ENOENT).
 */
int nvmet_machine_id(const char *path, u8 *id, size_t len);

/**
 * nvmet_state_machine_id() - rdmarw-nvmet's own machine ID, made once
 * @dir: the state directory (made 0700 when missing)
 * @id: where to put it
 * @len: NVMET_MACHINE_ID_LEN
 * @path: the file's name is written here
 * @path_len: its size
 *
 * Reads @dir/machine-id; when there is none, writes 16 random bytes there
 * (as machine-id(5), mode 0600, through a rename so that two starting
 * processes agree) and reads it back.
 *
 * Return: 0, or a negative errno (-EINVAL for bad arguments).
 */
int nvmet_state_machine_id(const char *dir, u8 *id, size_t len, char *path,
			   size_t path_len);

/**
 * nvmet_ns_ids_derive() - a namespace's UUID and NGUID on this machine
 * @machine: the machine's ID, NVMET_MACHINE_ID_LEN bytes
 * @subnqn: the subsystem's NQN
 * @nsid: the namespace's ID (1..)
 * @path: its backing file or device, or NULL (in memory)
 * @uuid: the UUID (RFC 9562 version 8, variant 10)
 * @nguid: the NGUID (its first 8 bytes are the EUI-64)
 *
 * HMAC-SHA-256 keyed by @machine over a label, @subnqn, @nsid and @path:
 * the same inputs give the same identifiers, another machine others.
 *
 * Return: 0; -EINVAL for a NULL pointer or NSID 0; -ENAMETOOLONG for a
 * path longer than PATH_MAX; another negative errno from libcrypto.
 */
int nvmet_ns_ids_derive(const u8 *machine, const char *subnqn, u32 nsid,
			const char *path, u8 uuid[16], u8 nguid[16]);

/**
 * nvmet_serial_derive() - a subsystem's serial number on this machine
 * @machine: the machine's ID, NVMET_MACHINE_ID_LEN bytes
 * @subnqn: the subsystem's NQN
 * @out: NVMET_SERIAL_LEN lower-case hex digits and a NUL
 *
 * Return: 0, or -EINVAL for a NULL pointer (a negative errno from
 * libcrypto).
 */
int nvmet_serial_derive(const u8 *machine, const char *subnqn,
			char out[NVMET_SERIAL_LEN + 1]);

/**
 * nvmet_config_fill_ids() - give every subsystem and namespace the
 * identifiers the configuration does not set
 * @c: the configuration (after nvmet_config_args() and
 *     nvmet_config_add_default_ns())
 * @machine_id_path: NVMET_MACHINE_ID_PATH (tests: another file)
 *
 * Serial numbers, namespace UUIDs and NGUIDs not given (--serial,
 * attr.serial, device.uuid, device.nguid) are derived from the machine's
 * ID; without one (no file, or no ID in it) from the ID kept in
 * @c->state_dir (made once, random, mode 0600: so a restart keeps them);
 * without that from 16 random bytes, and @c->random_ids says so.  What is
 * given wins.
 *
 * Return: 0, or a negative errno (-EIO when no random bytes came).
 */
int nvmet_config_fill_ids(struct nvmet_config *c, const char *machine_id_path);

/**
 * nvmet_config_derive_ids() - fill the missing identifiers with @c's key
 * @c: a configuration whose @machine_id is set (nvmet_config_fill_ids()
 *     at start; a reload copies the key the running target started with)
 *
 * Every subsystem without a serial number and every namespace without a
 * UUID or NGUID gets the one derived from @c->machine_id; what the
 * configuration gives is kept.
 *
 * Return: 0, or nvmet_ns_ids_derive()'s and nvmet_serial_derive()'s errors.
 */
int nvmet_config_derive_ids(struct nvmet_config *c);

/**
 * nvmet_config_free() - free the strings the configuration holds
 * @c: the configuration (its options point into them until then)
 */
void nvmet_config_free(struct nvmet_config *c);

/**
 * nvmet_config_reload() - read the configuration again and apply it
 * @t: the running target
 * @start: the configuration it started with (main()'s, after
 *         nvmet_config_fill_ids()), or NULL
 * @argc: argument count of the command line that started it
 * @argv: its arguments (a --config file is read again)
 * @why: where the reason of a refusal is written (may be NULL)
 * @why_len: its size
 *
 * Parses as at start-up, completes the result as main() did for @start
 * (the --soft device's name; the identifiers derived with @start's
 * machine key, so what a reload adds has the identifiers a restart gives
 * it), then nvmet_target_reload(); a configuration that does not parse
 * (the reader prints the line it refused) changes nothing.  With @start
 * NULL nothing is derived and no software device is named.
 *
 * Return: 0 when applied; -EINVAL for a configuration that does not parse
 * or NULL arguments; nvmet_target_reload()'s errors.
 */
int nvmet_config_reload(struct nvmet_target *t,
			const struct nvmet_config *start, int argc, char **argv,
			char *why, size_t why_len);

/**
 * nvmet_json_parse() - parse a JSON text with the config file's reader
 * @text: the text
 * @len: its length (at most 1 MiB)
 * @out: the value, for nvmet_json_free()
 *
 * Return: 0, -EINVAL (after a message) for text that does not parse,
 * -ENOMEM.
 */
int nvmet_json_parse(const char *text, size_t len, struct json **out);

/**
 * nvmet_json_free() - free a parsed value
 * @v: the value (NULL: nothing happens)
 */
void nvmet_json_free(struct json *v);

/**
 * nvmet_json_get() - an object's member
 * @o: the object
 * @key: the member's name
 *
 * Return: the member, NULL when @o is no object or has no @key.
 */
const struct json *nvmet_json_get(const struct json *o, const char *key);

/**
 * nvmet_json_len() - how many elements an array (or members an object) has
 * @a: the array
 *
 * Return: the count, 0 for anything else.
 */
u32 nvmet_json_len(const struct json *a);

/**
 * nvmet_json_at() - an array's element
 * @a: the array
 * @i: its index
 *
 * Return: the element, NULL past the end.
 */
const struct json *nvmet_json_at(const struct json *a, u32 i);

/**
 * nvmet_json_string() - a string value
 * @v: the value
 *
 * Return: the string, NULL when @v is no string.
 */
const char *nvmet_json_string(const struct json *v);

/**
 * nvmet_json_u64() - a number that is a whole number
 * @v: the value
 * @out: its value
 *
 * Return: 0, -EINVAL when @v is no whole number in 0..2^53.
 */
int nvmet_json_u64(const struct json *v, u64 *out);

#endif /* RDMARW_NVMET_CONFIG_H */

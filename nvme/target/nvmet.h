/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdmarw-nvmet as a library: an NVMe over Fabrics (RDMA) target that runs
 * inside the calling process, on any rdmarw device the rdma_cm reaches.
 *
 * The in-process entry, for tests and for programs that want a target of
 * their own:
 *
 *	struct nvmet_target_opts o;
 *	struct nvmet_target *t;
 *
 *	nvmet_target_opts_init(&o);          // defaults: port 4420, 64 MiB RAM
 *	o.addr = "10.0.0.2";                 // a device must answer to it
 *	o.ns[0].type = NVMET_BACKEND_RAM;    // or FILE / BDEV with .path
 *	o.ns[0].size = 16 << 20;
 *	t = nvmet_target_create(&o);         // listens when it returns
 *	if (IS_ERR(t)) ...                   // a negative errno
 *	...                                  // hosts connect, do I/O
 *	nvmet_target_destroy(t);             // disconnects every host, frees
 *
 * nvmet_target_create() binds an rdma_cm id to @addr:@port (the device is
 * the one that answers to the address; @device, when set, must be its
 * name), listens, and returns.  From then on the target runs on threads
 * that are not the caller's: connection events on the CM's thread, each
 * queue's completions on its CQ's thread, teardown and keep-alive on a
 * work queue of the target's.  nvmet_target_destroy() stops listening,
 * disconnects every queue, waits until all of them are released and frees
 * everything; the device must outlive the target (a device removed first
 * tears its queues down and leaves the listener dead, see DEVICE_REMOVAL
 * in docs/architecture.md).
 *
 * The target serves NVM subsystems, each with up to NVMET_MAX_NAMESPACES
 * namespaces, on ports (an address and a TCP-space port each, listing the
 * subsystems a host reaches through it), plus the discovery subsystem
 * (NVME_DISC_SUBSYS_NAME), whose log lists the subsystems of the port the
 * host asked that the host may connect to.  A subsystem admits only the
 * hosts it lists (a Connect from another gets Connect Invalid Host),
 * unless it allows any host.  The quick start is one subsystem (@subnqn, @serial, @ns)
 * on one port (@addr, @port) with every subsystem; @subsys and @ports
 * describe more.
 *
 * Not part of librdmarw's ABI: the library is built from nvme/target/ into
 * librdmarw_nvmet.a and the rdmarw-nvmet program.
 */
#ifndef RDMARW_NVMET_NVMET_H
#define RDMARW_NVMET_NVMET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Namespaces one target's subsystem can have (NSIDs 1..). */
#define NVMET_MAX_NAMESPACES 16
/* The most I/O queues and the deepest queue a host gets. */
#define NVMET_MAX_IO_QUEUES 128
#define NVMET_MAX_QUEUE_SIZE 128
/* The most data-buffer bytes per I/O queue entry (@data_buf_size). */
#define NVMET_MAX_DATA_BUF (1024u * 1024)
/* The default subsystem NQN. */
#define NVMET_DEFAULT_SUBNQN "nqn.2026-01.io.rdmarw:nvmet"
/* The most NVM subsystems and ports one target has. */
#define NVMET_MAX_SUBSYS 32
#define NVMET_MAX_PORTS 16
/* The most allowed hosts of one subsystem. */
#define NVMET_MAX_HOSTS 256

/**
 * enum nvmet_backend_type - what backs a namespace
 * @NVMET_BACKEND_NONE: no namespace in this slot
 * @NVMET_BACKEND_RAM: memory of the target's own (@size bytes, zeroed)
 * @NVMET_BACKEND_FILE: a regular file (@path; its size, or @size when
 *                      nonzero, which then grows or keeps the file)
 * @NVMET_BACKEND_BDEV: a block device (@path; its size)
 */
enum nvmet_backend_type {
	NVMET_BACKEND_NONE,
	NVMET_BACKEND_RAM,
	NVMET_BACKEND_FILE,
	NVMET_BACKEND_BDEV,
};

/**
 * enum nvmet_io_engine - how a file or block device namespace does its I/O
 * @NVMET_IO_ENGINE_AUTO: io_uring where the kernel gives one, else
 *                        synchronous (said at start)
 * @NVMET_IO_ENGINE_SYNC: pread/pwrite/fdatasync on the capsule's thread
 */
enum nvmet_io_engine {
	NVMET_IO_ENGINE_AUTO,
	NVMET_IO_ENGINE_SYNC,
};

/**
 * struct nvmet_ns_opts - one namespace
 * @type: the backend (NVMET_BACKEND_NONE: slot unused)
 * @path: file or block device (FILE, BDEV)
 * @size: bytes (RAM: required; FILE: 0 for the file's size)
 * @block_size: LBA size, 512 or 4096 (0: 512)
 * @readonly: refuse writes (Write, Write Zeroes, DSM deallocate)
 * @create_mode: the mode of a file this creates (0: 0600; the umask
 *               may narrow it)
 * @uuid: the namespace UUID (all zeroes: derived from the subsystem NQN
 *        and the NSID)
 * @nguid: the namespace NGUID, whose first 8 bytes are its EUI-64 (all
 *         zeroes: derived as @uuid)
 * @io_engine: FILE and BDEV: io_uring where there is one, or synchronous
 * @buffered: FILE and BDEV: never O_DIRECT (the kernel's buffered_io)
 * @test_delay_ms: tests: each Read, Write and Flush is held that long (or
 *                 until nvmet_ns_delay_release()), then runs on another
 *                 thread
 * @test_errno: tests: each held I/O fails with this errno (0: none)
 */
struct nvmet_ns_opts {
	enum nvmet_backend_type type;
	const char *path;
	uint64_t size;
	uint32_t block_size;
	bool readonly;
	uint32_t create_mode;
	uint8_t uuid[16];
	uint8_t nguid[16];
	enum nvmet_io_engine io_engine;
	bool buffered;
	uint32_t test_delay_ms;
	int32_t test_errno;
};

/**
 * struct nvmet_subsys_opts - one NVM subsystem
 * @nqn: its NQN (required; 1 to 223 printable ASCII bytes, not the
 *       discovery NQN, unique in the target)
 * @serial: the serial number (NULL: derived from the NQN)
 * @ns: the namespaces, NSID = index + 1 (at least one)
 * @max_io_queues: I/O queues granted to a host (0: NVMET_MAX_IO_QUEUES)
 * @hosts: the host NQNs allowed to connect (each 1 to 223 printable ASCII
 *         bytes); none by default, as the kernel's nvmet
 * @nr_hosts: how many (at most NVMET_MAX_HOSTS)
 * @allow_any_host: every host may connect (then @hosts must be empty, as
 *                  configfs refuses a host link while it is set)
 */
struct nvmet_subsys_opts {
	const char *nqn;
	const char *serial;
	struct nvmet_ns_opts ns[NVMET_MAX_NAMESPACES];
	uint32_t max_io_queues;
	const char *const *hosts;
	uint32_t nr_hosts;
	bool allow_any_host;
};

/**
 * struct nvmet_host_opts - a host's DH-HMAC-CHAP settings (nvmetcli's
 * hosts[].dhchap, the kernel's configfs hosts/<nqn>/dhchap_*)
 * @nqn: the host NQN
 * @dhchap_key: its DHHC-1 key (required): the host must authenticate on
 *              every queue of every NVM subsystem it connects to, also
 *              one that allows any host (docs/nvme-auth.md)
 * @dhchap_ctrl_key: the controller's DHHC-1 key, for a host that asks the
 *                   controller to authenticate itself (NULL: none)
 * @dhchap_hash: "hmac(sha256)" (NULL), "hmac(sha384)", "hmac(sha512)"
 * @dhchap_dhgroup: "null" (NULL), "ffdhe2048" ... "ffdhe8192"
 */
struct nvmet_host_opts {
	const char *nqn;
	const char *dhchap_key;
	const char *dhchap_ctrl_key;
	const char *dhchap_hash;
	const char *dhchap_dhgroup;
};

/**
 * struct nvmet_port_opts - one port (a listener)
 * @device: the rdmarw device name the address must belong to, or NULL
 * @addr: the IPv4 or IPv6 address to listen on (required)
 * @port: the port (0: 4420)
 * @subsys: the NQNs of the subsystems reached through it (each one of
 *          the target's; NULL with @nr_subsys 0: every subsystem)
 * @nr_subsys: how many
 */
struct nvmet_port_opts {
	const char *device;
	const char *addr;
	uint16_t port;
	const char *const *subsys;
	uint32_t nr_subsys;
};

/**
 * struct nvmet_target_opts - what nvmet_target_create() sets up
 * @device: the rdmarw device name the address must belong to, or NULL
 * @addr: the IPv4 or IPv6 address to listen on (required; "0.0.0.0" and
 *        "::" listen on every device)
 * @port: the port (0: 4420)
 * @subnqn: the NVM subsystem's NQN (NULL: NVMET_DEFAULT_SUBNQN)
 * @serial: the serial number (NULL: derived from the NQN)
 * @ns: the namespaces, NSID = index + 1
 * @max_io_queues: I/O queues granted to a host (0: NVMET_MAX_IO_QUEUES)
 * @max_queue_size: entries of an I/O queue (0: NVMET_MAX_QUEUE_SIZE;
 *                  at most NVMET_MAX_QUEUE_SIZE)
 * @inline_data_size: in-capsule data bytes per command (0: 4096;
 *                    NVMET_NO_INLINE: none; else rounded up to 16 bytes,
 *                    at most 16384)
 * @mdts_max: the largest MDTS to offer, log2 of 4 KiB pages (0: 8, 1 MiB;
 *            the device's registration limit may lower it)
 * @kato_grace_ms: extra time after the host's keep-alive timeout before
 *                 the controller is torn down (0: none)
 * @data_buf_size: data-buffer bytes per I/O queue entry: each queue's pool
 *                 of pages for keyed data, set up (and registered) when
 *                 it connects, holds its depth times this plus a quarter,
 *                 at least the largest transfer (0: 128 KiB; rounded up
 *                 to 4 KiB; at most 1 MiB); a command that finds too few
 *                 free pages waits for them
 * @hosts: the hosts the quick start's subsystem allows (see
 *         struct nvmet_subsys_opts; none by default)
 * @nr_hosts: how many
 * @allow_any_host: the quick start's subsystem allows every host
 * @connect_timeout_ms: a connection that has not been admitted by a valid
 *                      Connect this long after its request is closed (0:
 *                      10000)
 * @max_unadmitted: connections not yet admitted by a Connect, in all;
 *                  more are rejected, NVMe/RDMA status "no resources" (0:
 *                  512)
 * @max_unadmitted_per_addr: the same per host address and port (0: 160;
 *                           the Linux host connects every I/O queue
 *                           before it sends their Connects); an address
 *                           none of whose queues was admitted gets no I/O
 *                           queue and at most 4 admin queues waiting
 * @subsys: the NVM subsystems (NULL with @nr_subsys 0: one, of @subnqn,
 *          @serial, @ns and @max_io_queues)
 * @nr_subsys: how many (at most NVMET_MAX_SUBSYS)
 * @ports: the ports (NULL with @nr_ports 0: one, of @device, @addr and
 *         @port, with every subsystem); portid = index + 1
 * @nr_ports: how many (at most NVMET_MAX_PORTS)
 * @host_keys: hosts that must authenticate (DH-HMAC-CHAP), each NQN once
 * @nr_host_keys: how many (at most NVMET_MAX_HOSTS)
 * @verbose: log connections and errors to stderr
 * @poll_groups: threads of the target's that poll the I/O queues' CQs,
 *               each a poll group that the queues join round robin as
 *               they connect (0: each queue's CQ has a thread of its own,
 *               woken per completion; at most NVMET_MAX_POLL_GROUPS);
 *               per port
 * @poll_idle_us: a poll group that found no completion for this long arms
 *                its CQs and sleeps until the next one (0: 50)
 * @poll_busy: poll groups never sleep (a core each at 100 %)
 *
 * The strings and arrays are read by nvmet_target_create() only.
 */
struct nvmet_target_opts {
	const char *device;
	const char *addr;
	uint16_t port;
	const char *subnqn;
	const char *serial;
	struct nvmet_ns_opts ns[NVMET_MAX_NAMESPACES];
	uint32_t max_io_queues;
	uint32_t max_queue_size;
	uint32_t inline_data_size;
	uint32_t mdts_max;
	uint32_t kato_grace_ms;
	uint32_t data_buf_size;
	const char *const *hosts;
	uint32_t nr_hosts;
	bool allow_any_host;
	uint32_t connect_timeout_ms;
	uint32_t max_unadmitted;
	uint32_t max_unadmitted_per_addr;
	const struct nvmet_subsys_opts *subsys;
	uint32_t nr_subsys;
	const struct nvmet_port_opts *ports;
	uint32_t nr_ports;
	const struct nvmet_host_opts *host_keys;
	uint32_t nr_host_keys;
	bool verbose;
	uint32_t poll_groups;
	uint32_t poll_idle_us;
	bool poll_busy;
};

/* The most poll groups per port (@poll_groups). */
#define NVMET_MAX_POLL_GROUPS 64

#define NVMET_NO_INLINE 0xffffffffu

/**
 * struct nvmet_target_stats - counters of a running target
 * @ctrls: controllers alive now
 * @queues: RDMA queues alive now (connecting, live or being released)
 * @ctrls_created: controllers created since the start
 * @queues_created: queues accepted since the start
 * @cmds: commands received
 * @errors: commands completed with a non-zero status
 * @kato_expired: controllers torn down by keep-alive expiry
 * @rejects: connection requests rejected
 * @reqs_inflight: commands received and not yet released
 * @data_waits: commands that waited for pages of their queue's pool
 * @mdts: the MDTS offered (log2 of 4 KiB pages)
 * @unadmitted: connections waiting for their Connect now
 * @connect_timeouts: connections closed for sending no valid Connect in
 *                    time
 * @buf_bytes: bytes the queues hold now in receive buffers, response
 *             slots and data-buffer pools
 * @pool_bytes: of which data-buffer pools (set up by a valid Connect)
 * @poll_sleeps: times a poll group went to sleep, idle
 * @poll_wakeups: times a sleeping poll group was woken by a completion
 * @poll_asleep: poll groups asleep now
 * @poll_members: I/O queues in a poll group now
 */
struct nvmet_target_stats {
	uint32_t ctrls;
	uint32_t queues;
	uint64_t ctrls_created;
	uint64_t queues_created;
	uint64_t cmds;
	uint64_t errors;
	uint64_t kato_expired;
	uint64_t rejects;
	uint64_t reqs_inflight;
	uint64_t data_waits;
	uint32_t mdts;
	uint64_t unadmitted;
	uint64_t connect_timeouts;
	uint64_t buf_bytes;
	uint64_t pool_bytes;
	uint64_t poll_sleeps;
	uint64_t poll_wakeups;
	uint64_t poll_asleep;
	uint64_t poll_members;
};

struct nvmet_target;

/**
 * nvmet_target_opts_init() - fill options with the defaults
 * @opts: the options (NULL: nothing happens)
 *
 * Port 4420, NVMET_DEFAULT_SUBNQN, one 64 MiB RAM namespace, 128 I/O
 * queues of 128 entries, 4096 bytes of in-capsule data; @addr is NULL and
 * must be set.
 */
void nvmet_target_opts_init(struct nvmet_target_opts *opts);

/**
 * nvmet_target_create() - start a target
 * @opts: the options
 *
 * Opens the namespaces' backends, binds to @opts->addr and @opts->port,
 * listens; hosts may connect as soon as it returns.
 *
 * Return: the target, or ERR_PTR(): -EINVAL for NULL @opts, no address,
 * an address that does not parse, an NQN that is not 1 to 223 printable
 * ASCII bytes or is the discovery NQN, two subsystems of one NQN, a port
 * naming a subsystem the target does not have, too many subsystems or
 * ports, a serial number that is not 1 to 20 printable ASCII bytes, a
 * subsystem with no namespace, an allowed host that is not a valid NQN,
 * allowed hosts beside allow_any_host, a host key entry with a bad NQN,
 * a malformed key, an unknown hash or DH group, or an NQN twice, a bad block, queue or data-buffer
 * size, more than NVMET_MAX_POLL_GROUPS poll groups or a poll idle time
 * over one second; -ENODEV when @device
 * names no device or not the address's device; -EADDRNOTAVAIL when no
 * device answers to the address; -EADDRINUSE when someone listens there;
 * a backend's open error (-ENOENT...); -ENOMEM.
 */
struct nvmet_target *nvmet_target_create(const struct nvmet_target_opts *opts);

/**
 * nvmet_target_destroy() - stop a target and free it
 * @t: the target (NULL or an ERR_PTR: nothing happens)
 *
 * Stops listening, disconnects every queue, fails the open asynchronous
 * event requests, waits (bounded) until every queue and controller is
 * released, closes the backends.
 */
void nvmet_target_destroy(struct nvmet_target *t);

/**
 * nvmet_target_poll_hook() - run a caller's work in a poll group's passes
 * @t: the target (created with poll_groups)
 * @group: the poll group (0 to poll_groups - 1), of every port
 * @fn: called once per pass, after the group's sweep of its queues' CQs,
 *      from the group's thread; returns the work it did (> 0 keeps the
 *      group from going idle); NULL removes the hook
 * @arg: its argument
 *
 * SPDK's run-to-completion shape: an in-process host polls its own queues
 * from @fn (nvmeh_poll()), so that one thread runs both sides.  Returns
 * once the group runs the new hook and never the old one again.  Not from
 * a poll group's thread.
 *
 * Return: 0; -EINVAL for a bad target or group; -ENODEV without a port;
 * -EDEADLK from the group's own thread; -ETIMEDOUT when the group did not
 * take it in 20 s (a pass that never returns): then nothing changed.
 */
int nvmet_target_poll_hook(struct nvmet_target *t, unsigned int group,
			   int (*fn)(void *arg), void *arg);

/**
 * nvmet_target_get_stats() - read a target's counters
 * @t: the target
 * @st: filled in
 *
 * Return: 0, -EINVAL for NULL.
 */
int nvmet_target_get_stats(struct nvmet_target *t,
			   struct nvmet_target_stats *st);

/**
 * nvmet_target_port() - the port a target's first port listens on
 * @t: the target
 *
 * Return: the port, 0 for NULL.
 */
uint16_t nvmet_target_port(const struct nvmet_target *t);

/**
 * nvmet_target_ns_changed() - report that namespace @nsid changed
 * @t: the target
 * @nsid: the namespace, of the first subsystem
 *
 * Queues a Namespace Attribute Changed event for every controller of the
 * first subsystem that enabled it (Set Features 0Bh); an open
 * Asynchronous Event Request completes with it.
 *
 * Return: 0, -EINVAL for NULL or an NSID that is not a namespace's.
 */
int nvmet_target_ns_changed(struct nvmet_target *t, uint32_t nsid);

/**
 * nvmet_target_subsys_ns_changed() - report that a namespace of a
 * subsystem changed
 * @t: the target
 * @subnqn: the subsystem's NQN
 * @nsid: the namespace
 *
 * As nvmet_target_ns_changed(), for the controllers of the subsystem
 * @subnqn: each lists @nsid in its Changed Namespace List log; those that
 * enabled the notice get one Namespace Attribute Changed event until the
 * host reads that log.
 *
 * Return: 0, -EINVAL for NULL, an unknown subsystem or an NSID that is
 * not one of its namespaces.
 */
int nvmet_target_subsys_ns_changed(struct nvmet_target *t, const char *subnqn,
				   uint32_t nsid);

/**
 * nvmet_target_reload() - apply a new configuration to a running target
 * @t: the target
 * @opts: the new options, checked as nvmet_target_create() checks them
 * @why: where a refusal's reason is written, NUL terminated (may be NULL)
 * @why_len: its size
 *
 * Everything the new options need (namespaces' backends, new ports'
 * listeners) is opened first; a failure leaves the target as it was.
 * Then the difference is applied: subsystems, namespaces, allowed hosts
 * and ports added or removed (a namespace whose options differ is opened
 * again); the controllers of a subsystem whose namespaces changed get a
 * Namespace Attribute Changed event and the Changed Namespace List; the
 * controllers of a removed subsystem, of a removed port, and those of a
 * host no longer allowed are disconnected; the others keep their queues
 * and I/O.  A removed namespace completes the requests that found it and
 * is closed after them (waiting 30 s at most); later ones get Invalid
 * Namespace.  Reloads are serialized; the options are not kept.
 *
 * Return: 0 when applied; -EINVAL for NULL or options
 * nvmet_target_create() would refuse; -EOPNOTSUPP for what cannot change
 * on a running target (@max_queue_size, @inline_data_size, @mdts_max,
 * @kato_grace_ms, @data_buf_size, the admission bounds, a subsystem's
 * serial number, the DH-HMAC-CHAP hosts); a backend's open error
 * (-ENOENT...); a new port's listen error; -ENOMEM.  The reason is also
 * logged to stderr.
 */
int nvmet_target_reload(struct nvmet_target *t,
			const struct nvmet_target_opts *opts, char *why,
			size_t why_len);

/**
 * nvmet_target_stats_json() - write a running target's counters as JSON
 * @t: the target
 * @f: where to
 *
 * The target's totals, then per subsystem, namespace, controller (host
 * NQN, cntlid) and queue: commands read/write/flush/other/admin, bytes
 * read and written, waits for data buffers, errors by status, keep-alive
 * expiries (docs/nvmet-operations.md has the shape).  Counts of queues
 * and controllers that went are kept in their subsystem's.  Safe while
 * hosts do I/O: each number is exact, the set a snapshot.
 *
 * Return: 0; -EINVAL for NULL; -ENOMEM; -EIO when writing failed.
 */
int nvmet_target_stats_json(struct nvmet_target *t, FILE *f);

/**
 * nvmet_target_stats_log() - write a running target's counters as lines
 * @t: the target
 * @f: where to (rdmarw-nvmet: stderr, on SIGUSR1)
 *
 * One line per subsystem, namespace, controller and queue.
 *
 * Return: as nvmet_target_stats_json().
 */
int nvmet_target_stats_log(struct nvmet_target *t, FILE *f);

/**
 * nvmet_target_stats_write() - replace a file with the counters' JSON
 * @t: the target
 * @path: the file; written as @path.tmp (mode 0644, not through a
 *        symbolic link), then renamed over @path, so a reader sees the
 *        old document or the new one, whole
 *
 * Return: 0; -EINVAL for NULL or an empty path; -ENAMETOOLONG; an open,
 * write or rename error (the temporary file is removed then).
 */
int nvmet_target_stats_write(struct nvmet_target *t, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_NVMET_NVMET_H */

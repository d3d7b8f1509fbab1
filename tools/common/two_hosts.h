/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Two connected hosts on the software device, built once for the tools,
 * bench/, fuzz/ and tests/: a fabric, two devices of one profile (or one
 * device in loopback), a PD and a CQ per side, an RC QP per side connected
 * to the other.  Only the public API is used.  Each step returns 0 or a
 * negative errno and names the call that failed in two_hosts.failed; what
 * was built stays in the struct for two_hosts_close(), which takes down
 * whatever is there.  Steps for callers that size a later object from an
 * earlier one (a CQ from the device's attributes), or two_hosts_open() for
 * everything at once:
 *
 *	struct two_hosts h;
 *	two_hosts_devices(&h, &profile, NULL, false);
 *	two_hosts_side(&h, 0, 256, IB_POLL_DIRECT);
 *	two_hosts_side(&h, 1, 64, IB_POLL_DIRECT);
 *	two_hosts_qps(&h, attr, true);
 *	...
 *	two_hosts_close(&h);
 */
#ifndef RDMARW_TOOLS_TWO_HOSTS_H
#define RDMARW_TOOLS_TWO_HOSTS_H

#include <rdmarw/ib_verbs.h>
#include <rdmarw/soft.h>

/**
 * struct two_hosts - the objects, side 0 (initiator) and side 1 (target)
 * @fabric: the fabric
 * @dev: the devices (equal in loopback)
 * @pd: a PD per side
 * @cq: a CQ per side, for its send and receive completions
 * @qp: the QPs
 * @failed: the call that failed last ("ib_create_qp"...), or NULL
 */
/* The objects, in this order, also named directly by TWO_HOSTS_EMBED. */
#define TWO_HOSTS_OBJECTS           \
	struct soft_fabric *fabric; \
	struct ib_device *dev[2];   \
	struct ib_pd *pd[2];        \
	struct ib_cq *cq[2];        \
	struct ib_qp *qp[2]

struct two_hosts {
	TWO_HOSTS_OBJECTS;
	const char *failed;
};

/*
 * A fixture's first member: the struct two_hosts (@hosts) whose objects
 * are also the fixture's own fabric, dev[], pd[], cq[] and qp[] (a union
 * over the common initial members, so nothing is copied).
 */
#define TWO_HOSTS_EMBED                    \
	union {                            \
		struct two_hosts hosts;    \
		struct {                   \
			TWO_HOSTS_OBJECTS; \
		};                         \
	}

/**
 * struct two_hosts_cfg - everything at once (two_hosts_open())
 * @profile: the devices' profile
 * @name: soft_device_create() name formats per side, or NULL (default)
 * @loopback: one device, both QPs on it
 * @cqe: CQ entries per side (0: 1024)
 * @cq_thread: per side, a CQ processed by its own thread
 *             (IB_POLL_WORKQUEUE) instead of IB_POLL_DIRECT
 * @attr: the QPs' attributes; zero send_cq/recv_cq take the side's CQ, a
 *        zero qp_type is RC and a zero port_num is 1
 * @no_connect: leave the QPs in RESET
 */
struct two_hosts_cfg {
	const struct soft_profile *profile;
	const char *name[2];
	bool loopback;
	int cqe[2];
	bool cq_thread[2];
	struct ib_qp_init_attr attr[2];
	bool no_connect;
};

/* The fabric and the devices (@name: formats per side, or NULL). */
int two_hosts_devices(struct two_hosts *h, const struct soft_profile *profile,
		      const char *const *name, bool loopback);

/* A PD and a CQ of @cqe entries (0: 1024) on @side. */
int two_hosts_side(struct two_hosts *h, int side, int cqe,
		   enum ib_poll_context poll);

/*
 * The QPs, from @attr[side] completed as for two_hosts_cfg.attr, and, if
 * @connect, soft_qp_connect() of the pair.
 */
int two_hosts_qps(struct two_hosts *h, const struct ib_qp_init_attr *attr,
		  bool connect);

/* All three steps from @cfg. */
int two_hosts_open(struct two_hosts *h, const struct two_hosts_cfg *cfg);

/*
 * Destroy the QPs, CQs and PDs that are there (a caller may then look at
 * the devices, e.g. that nothing is left on them, before two_hosts_close()).
 * Returns 0 or the first error (two_hosts.failed names it).
 */
int two_hosts_close_objects(struct two_hosts *h);

/*
 * Destroy what is there (QPs, CQs, PDs, devices, fabric) and clear @h.
 * Returns 0 or the first error (two_hosts.failed names it).
 */
int two_hosts_close(struct two_hosts *h);

#endif /* RDMARW_TOOLS_TWO_HOSTS_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The libibverbs backend ("ibv" provider): real RDMA devices (hardware NICs,
 * the kernel's rxe and siw) through rdma-core's libibverbs and librdmacm.
 *
 * Devices: rdmarw_ibv_open() registers one rdma-core device by its name
 * ("rxe0", "siw0", "mlx5_0") in the same registry as the software devices,
 * so ib_device_get_by_name() finds it; rdmarw_ibv_open_all() registers every
 * device rdma-core sees.  Attributes come from ibv_query_device_ex() and the
 * port; the protocol from the transport and the port's link layer.
 *
 * Memory: user space has no local DMA key.  The device's local_dma_lkey (and
 * every PD's) is a sentinel, RDMARW_IBV_LOCAL_DMA_LKEY; a work request's SGE
 * that carries it is translated when it is posted to the lkey of an ibv MR
 * covering [addr, addr + length).  Each PD keeps a registration map:
 * - regions declared up front with rdmarw_ibv_declare() (registered at once,
 *   released by rdmarw_ibv_forget() or when the PD is freed);
 * - for any other address, an on-demand registration of the pages that
 *   cover the SGE, kept in a cache of at most rdmarw_ibv_cache_limit()
 *   entries.  Cache entries are released only by rdmarw_ibv_forget() over a
 *   range they overlap, or when the PD is freed; when the cache is full,
 *   posting an SGE that needs a new entry fails with -ENOMEM.  An entry pins
 *   the pages it registered: call rdmarw_ibv_forget() before memory that
 *   was used through the local DMA key is unmapped or handed back to the
 *   system (free() of a large block), or a later mapping at the same
 *   address would be reached through the stale registration.
 * On iWARP the map registers with remote write access, so RDMA READ sinks
 * are legal (siw requires it); elsewhere with local write only.
 *
 * Fast registration: libibverbs has no REG_MR work request, so the device
 * does not advertise IB_DEVICE_MEM_MGT_EXTENSIONS, ib_alloc_mr() answers
 * -EOPNOTSUPP and the R/W API uses its SGE paths (on iWARP: one SGE per
 * READ, max_sge_rd 1).  docs/deviations.md records this.
 *
 * Connections: RC QPs are connected with the kernel's connection manager
 * API, <rdmarw/rdma_cm.h>, exactly as on the software device: an id bound
 * to (or resolving) an address of an ibv device is carried by librdmacm,
 * its events reach the handler from the CM thread, rdma_create_qp() makes
 * an ibv QP on the id's device and librdmacm moves it to RTS.  struct
 * rdmarw_ibv_peer_info describes a buffer (address, rkey, length) for the
 * private data.
 *
 * Thread safety: as ib_verbs.h.
 */
#ifndef RDMARW_IBV_H
#define RDMARW_IBV_H

#include <rdmarw/ib_verbs.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The sentinel local DMA key of ibv devices, translated at post time. */
#define RDMARW_IBV_LOCAL_DMA_LKEY 0xfffffff0U

/**
 * rdmarw_ibv_open() - register an rdma-core device by its name
 * @name: the device's rdma-core name, e.g. "rxe0"
 *
 * The device is registered under the same name.  Opening a device that is
 * already registered returns it again.
 *
 * Return: the device, or ERR_PTR(-EINVAL) for a NULL or empty @name,
 * ERR_PTR(-ENODEV) when rdma-core has no such device, ERR_PTR(-EEXIST)
 * when another provider's device has that name, ERR_PTR(-ENOMEM), or the
 * negative errno of a failed ibv_query_device_ex()/ibv_query_port().
 */
struct ib_device *rdmarw_ibv_open(const char *name);

/**
 * rdmarw_ibv_open_all() - register every device rdma-core sees
 *
 * Devices that fail to open are skipped.
 *
 * Return: the number of ibv devices registered (0 when there are none).
 */
int rdmarw_ibv_open_all(void);

/**
 * rdmarw_ibv_close() - unregister and close an ibv device
 * @dev: a device from rdmarw_ibv_open()
 *
 * Return: 0, -EINVAL for NULL or a device of another provider, -EBUSY while
 * PDs or CQs exist on it.
 */
int rdmarw_ibv_close(struct ib_device *dev);

/**
 * rdmarw_ibv_close_all() - close every ibv device that has no objects left
 *
 * Return: the number of devices that stayed open because they are busy.
 */
int rdmarw_ibv_close_all(void);

/**
 * rdmarw_ibv_is_ibv() - is @dev an ibv device
 * @dev: any device, or NULL
 *
 * Return: true for a device of this provider.
 */
bool rdmarw_ibv_is_ibv(const struct ib_device *dev);

/**
 * rdmarw_ibv_describe() - one line about an ibv device, for rdmarw-info
 * @dev: a device
 * @buf: output
 * @len: size of @buf
 *
 * Writes e.g. "ibv rxe0: RoCE, port 1 ACTIVE, fw 0.0.0, node guid ...".
 *
 * Return: the length of the line (as snprintf), -EINVAL for NULL arguments
 * or a device of another provider.
 */
int rdmarw_ibv_describe(const struct ib_device *dev, char *buf, size_t len);

/* ---- the PD's registration map ------------------------------------------ */

/**
 * rdmarw_ibv_declare() - register a region for the local DMA key up front
 * @pd: a PD of an ibv device
 * @addr: first byte
 * @len: bytes (> 0)
 *
 * SGEs inside the region that carry the local DMA key use this
 * registration.  It stays until rdmarw_ibv_forget() or ib_dealloc_pd().
 *
 * Return: 0, -EINVAL for NULL, zero length, a wrapping range or a PD of
 * another provider, -ENOMEM, or the negative errno of ibv_reg_mr().
 */
int rdmarw_ibv_declare(struct ib_pd *pd, void *addr, size_t len);

/**
 * rdmarw_ibv_declare_local() - register, up front, a region no peer may reach
 * @pd: a PD of an ibv device
 * @addr: first byte
 * @len: bytes (> 0)
 *
 * As rdmarw_ibv_declare(), but the registration grants local access only
 * (local write) on every device, iWARP included: what the kernel's local
 * DMA key grants.  For memory that is never the sink of an RDMA READ:
 * receive buffers, SEND and RDMA WRITE sources.  On iWARP the map's other
 * registrations are remotely writable (a READ's sink must be); a region
 * declared here is not, so a peer that guesses its key reaches nothing.
 * An RDMA READ into it on an iWARP device may fail.  Declare it before
 * any SGE reaches it through the local DMA key, or rdmarw_ibv_forget() it
 * first: an on-demand registration made earlier stays (remotely writable
 * on iWARP) until forgotten, and is not checked for here.
 *
 * Return: as rdmarw_ibv_declare().
 */
int rdmarw_ibv_declare_local(struct ib_pd *pd, void *addr, size_t len);

/**
 * rdmarw_ibv_forget() - release every map entry overlapping a range
 * @pd: a PD of an ibv device
 * @addr: first byte
 * @len: bytes
 *
 * Releases declared regions and cached on-demand registrations alike.  No
 * posted work request may still use them.
 *
 * Return: the number of entries released, or -EINVAL for NULL or a PD of
 * another provider.
 */
int rdmarw_ibv_forget(struct ib_pd *pd, const void *addr, size_t len);

/**
 * rdmarw_ibv_cache_limit() - on-demand entries a PD may hold
 * @pd: a PD of an ibv device
 * @limit: the new limit (> 0), or 0 to only read it
 *
 * The default is 1024.  Lowering it below the entries held releases none.
 *
 * Return: the limit in force, or -EINVAL for NULL or a PD of another
 * provider.
 */
int rdmarw_ibv_cache_limit(struct ib_pd *pd, unsigned int limit);

/**
 * rdmarw_ibv_map_entries() - entries in a PD's registration map
 * @pd: a PD of an ibv device
 * @cached: set to the on-demand entries among them, or NULL
 *
 * Return: declared plus cached entries, or -EINVAL.
 */
int rdmarw_ibv_map_entries(struct ib_pd *pd, int *cached);

/* ---- connections ------------------------------------------------------- */

/**
 * struct rdmarw_ibv_peer_info - a buffer offered to the peer (private data)
 * @addr: its remote address, big-endian
 * @rkey: its rkey, big-endian
 * @len: its length, big-endian
 *
 * Fill it with rdmarw_ibv_peer_info_set(), read it with
 * rdmarw_ibv_peer_info_get().
 */
struct rdmarw_ibv_peer_info {
	__be64 addr;
	__be32 rkey;
	__be32 len;
};

/**
 * rdmarw_ibv_peer_info_set() - describe a buffer in wire order
 * @info: filled in (any alignment)
 * @addr: remote address
 * @rkey: rkey
 * @len: length
 */
void rdmarw_ibv_peer_info_set(struct rdmarw_ibv_peer_info *info, u64 addr,
			      u32 rkey, u32 len);

/**
 * rdmarw_ibv_peer_info_get() - read a buffer description
 * @info: as received (any alignment: private data is where the CM put it)
 * @addr: set to the remote address
 * @rkey: set to the rkey
 * @len: set to the length
 *
 * Return: 0, -EINVAL for a NULL argument.
 */
int rdmarw_ibv_peer_info_get(const struct rdmarw_ibv_peer_info *info, u64 *addr,
			     u32 *rkey, u32 *len);

#ifdef __cplusplus
}
#endif

#endif /* RDMARW_IBV_H */

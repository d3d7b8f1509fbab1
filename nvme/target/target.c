// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The target object behind nvmet.h: its options checked, its NVM
 * subsystems (namespaces opened), the discovery subsystem and its ports
 * (each enabled through its transport), and their teardown.  The kernel
 * builds the same objects from configfs (drivers/nvme/target/configfs.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "nvme_ids.h"
#include "nvmet_int.h"

void nvmet_target_opts_init(struct nvmet_target_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->port = NVMF_RDMA_DEFAULT_PORT;
	opts->subnqn = NVMET_DEFAULT_SUBNQN;
	opts->ns[0].type = NVMET_BACKEND_RAM;
	opts->ns[0].size = 64ULL << 20;
	opts->max_io_queues = NVMET_MAX_IO_QUEUES;
	opts->max_queue_size = NVMET_MAX_QUEUE_SIZE;
	opts->inline_data_size = NVMET_DEFAULT_INLINE_DATA;
}

/* ---- the options: the quick start's fields or the lists ----------------- */

/* The one subsystem of the quick start (@subnqn, @serial, @ns). */
void nvmet_quick_subsys(const struct nvmet_target_opts *o,
			struct nvmet_subsys_opts *s)
{
	memset(s, 0, sizeof(*s));
	s->nqn = o->subnqn ? o->subnqn : NVMET_DEFAULT_SUBNQN;
	s->serial = o->serial;
	memcpy(s->ns, o->ns, sizeof(s->ns));
	s->max_io_queues = o->max_io_queues;
	s->hosts = o->hosts;
	s->nr_hosts = o->nr_hosts;
	s->allow_any_host = o->allow_any_host;
}

/* The one port of the quick start (@device, @addr, @port). */
void nvmet_quick_port(const struct nvmet_target_opts *o,
		      struct nvmet_port_opts *p)
{
	memset(p, 0, sizeof(*p));
	p->device = o->device;
	p->addr = o->addr;
	p->port = o->port;
}

static int nvmet_check_ns(const struct nvmet_ns_opts *ns)
{
	u32 i, nr = 0;

	for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
		const struct nvmet_ns_opts *n = &ns[i];

		if (n->type == NVMET_BACKEND_NONE)
			continue;
		if (n->type > NVMET_BACKEND_BDEV)
			return -EINVAL;
		if (n->block_size && n->block_size != 512 &&
		    n->block_size != 4096)
			return -EINVAL;
		/* less than one LBA is no namespace */
		if (n->type == NVMET_BACKEND_RAM &&
		    n->size < (n->block_size ? n->block_size : 512))
			return -EINVAL;
		if (n->type != NVMET_BACKEND_RAM && (!n->path || !n->path[0]))
			return -EINVAL;
		nr++;
	}
	return nr ? 0 : -EINVAL;
}

/* Valid NQNs, none twice, and no list beside allow_any_host. */
static int nvmet_check_hosts(const struct nvmet_subsys_opts *s)
{
	u32 i, j;

	if (s->nr_hosts > NVMET_MAX_HOSTS || (s->nr_hosts && !s->hosts) ||
	    (s->nr_hosts && s->allow_any_host))
		return -EINVAL;
	for (i = 0; i < s->nr_hosts; i++) {
		if (!nvme_nqn_valid(s->hosts[i]))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(s->hosts[i], s->hosts[j]))
				return -EINVAL;
	}
	return 0;
}

static int nvmet_check_subsys(const struct nvmet_subsys_opts *s)
{
	if (!nvme_nqn_valid(s->nqn) || !strcmp(s->nqn, NVME_DISC_SUBSYS_NAME))
		return -EINVAL;
	if (s->serial && !nvme_serial_valid(s->serial))
		return -EINVAL;
	if (s->max_io_queues > NVMET_MAX_IO_QUEUES)
		return -EINVAL;
	if (nvmet_check_hosts(s))
		return -EINVAL;
	return nvmet_check_ns(s->ns);
}

const struct nvmet_subsys_opts *
nvmet_subsys_opts_of(const struct nvmet_target_opts *o,
		     const struct nvmet_subsys_opts *quick, u32 i)
{
	return o->nr_subsys ? &o->subsys[i] : quick;
}

/* Every subsystem valid, no NQN twice, every port's NQNs known. */
static int nvmet_check_lists(const struct nvmet_target_opts *o,
			     const struct nvmet_subsys_opts *quick)
{
	u32 nr_subsys = o->nr_subsys ? o->nr_subsys : 1;
	u32 i, j, k;

	if (o->nr_subsys > NVMET_MAX_SUBSYS || o->nr_ports > NVMET_MAX_PORTS)
		return -EINVAL;
	if ((o->nr_subsys && !o->subsys) || (o->nr_ports && !o->ports))
		return -EINVAL;
	for (i = 0; i < nr_subsys; i++) {
		const struct nvmet_subsys_opts *s =
			nvmet_subsys_opts_of(o, quick, i);

		if (nvmet_check_subsys(s))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(s->nqn,
				    nvmet_subsys_opts_of(o, quick, j)->nqn))
				return -EINVAL;
	}
	for (k = 0; k < o->nr_ports; k++) {
		const struct nvmet_port_opts *p = &o->ports[k];

		if (!p->addr || (p->nr_subsys && !p->subsys))
			return -EINVAL;
		for (i = 0; i < p->nr_subsys; i++) {
			for (j = 0; j < nr_subsys; j++)
				if (p->subsys[i] &&
				    !strcmp(p->subsys[i],
					    nvmet_subsys_opts_of(o, quick, j)
						    ->nqn))
					break;
			if (j == nr_subsys)
				return -EINVAL;
		}
	}
	return 0;
}

int nvmet_check_opts(const struct nvmet_target_opts *o,
		     const struct nvmet_subsys_opts *quick)
{
	if (!o || (!o->nr_ports && !o->addr))
		return -EINVAL;
	if (o->max_queue_size > NVMET_MAX_QUEUE_SIZE ||
	    (o->max_queue_size && o->max_queue_size < 2))
		return -EINVAL;
	if (o->inline_data_size != NVMET_NO_INLINE &&
	    o->inline_data_size > NVMET_MAX_INLINE_DATA)
		return -EINVAL;
	if (o->mdts_max > NVMET_DEFAULT_MDTS)
		return -EINVAL;
	if (o->data_buf_size > NVMET_MAX_DATA_BUF)
		return -EINVAL;
	if (o->poll_groups > NVMET_MAX_POLL_GROUPS || o->poll_idle_us > 1000000)
		return -EINVAL;
	return nvmet_check_lists(o, quick);
}

/* ---- subsystems --------------------------------------------------------------- */

static struct nvmet_subsys *nvmet_subsys_alloc(struct nvmet_target *t,
					       const char *nqn,
					       enum nvmet_subsys_type type)
{
	struct nvmet_subsys *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->tgt = t;
	s->type = type;
	nvmet_copy_nul(s->subsysnqn, sizeof(s->subsysnqn), nqn);
	mutex_init(&s->lock);
	spin_lock_init(&s->ns_lock);
	s->ns_gen = 1; /* a queue's view starts at 0: never current */
	INIT_LIST_HEAD(&s->ns_caches);
	kref_init(&s->ref);
	INIT_LIST_HEAD(&s->ctrls);
	INIT_LIST_HEAD(&s->entry);
	snprintf(s->model, sizeof(s->model), "rdmarw-nvmet");
	return s;
}

/*
 * Drop the slot's reference of @ns (out of its slot already), wait for
 * the requests that found it, close it.  A request that does not end in
 * NVMET_NS_DRAIN_MS (a queue that never completes) leaves it open and
 * allocated rather than freed under it.
 */
void nvmet_ns_release(struct nvmet_ns *ns)
{
	nvmet_put_namespace(ns);
	if (!wait_for_completion_timeout(&ns->released, NVMET_NS_DRAIN_MS)) {
		nvmet_err("namespace %u: requests still hold it, not closed",
			  ns->nsid);
		return;
	}
	nvmet_ns_close(ns);
	free(ns->path);
	free(ns);
}

static void nvmet_subsys_free(struct nvmet_subsys *s)
{
	u32 i;

	if (!s)
		return;
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
		if (!s->ns[i])
			continue;
		nvmet_ns_release(s->ns[i]);
	}
	free(s->hosts);
	mutex_destroy(&s->lock);
	free(s);
}

static void nvmet_subsys_release(struct kref *ref)
{
	nvmet_subsys_free(container_of(ref, struct nvmet_subsys, ref));
}

void nvmet_subsys_put(struct nvmet_subsys *subsys)
{
	kref_put(&subsys->ref, nvmet_subsys_release);
}

/* A serial number from the NQN (FNV-1a), as stable as the name. */
static void nvmet_default_serial(const char *nqn, char *out, size_t len)
{
	u64 h = 0xcbf29ce484222325ULL;

	for (; *nqn; nqn++)
		h = (h ^ (u8)*nqn) * 0x100000001b3ULL;
	snprintf(out, len, "%016llx", (unsigned long long)h);
}

/*
 * A namespace's identifiers: the options' (rdmarw-nvmet derives them per
 * machine, config_ids.c), else stable for a subsystem NQN and an NSID.
 */
static void nvmet_ns_ids(struct nvmet_ns *ns, const char *nqn,
			 const struct nvmet_ns_opts *o)
{
	static const u8 none[16];
	u64 h = 0xcbf29ce484222325ULL;
	int i;

	for (; *nqn; nqn++)
		h = (h ^ (u8)*nqn) * 0x100000001b3ULL;
	h = (h ^ ns->nsid) * 0x100000001b3ULL;
	for (i = 0; i < 16; i++) {
		h = (h ^ (u64)i) * 0x100000001b3ULL;
		ns->nguid[i] = (u8)(h >> 24);
	}
	memcpy(ns->uuid, ns->nguid, 16);
	ns->uuid[6] = (u8)((ns->uuid[6] & 0x0f) | 0x40); /* version 4 */
	ns->uuid[8] = (u8)((ns->uuid[8] & 0x3f) | 0x80); /* variant */
	if (memcmp(o->uuid, none, 16))
		memcpy(ns->uuid, o->uuid, 16);
	if (memcmp(o->nguid, none, 16))
		memcpy(ns->nguid, o->nguid, 16);
	memcpy(ns->eui64, ns->nguid, 8);
}

/*
 * Open namespace @nsid of subsystem @nqn as @o says (not in any slot yet):
 * the slot's reference taken, its identifiers derived.
 */
struct nvmet_ns *nvmet_ns_create(const char *nqn, u32 nsid,
				 const struct nvmet_ns_opts *o, int *err)
{
	struct nvmet_ns *ns = calloc(1, sizeof(*ns));
	int ret;

	if (!ns || (o->path && !(ns->path = strdup(o->path)))) {
		free(ns);
		*err = -ENOMEM;
		return NULL;
	}
	ns->nsid = nsid;
	ns->fd = -1;
	ns->ref = 1;
	init_completion(&ns->released);
	ns->opts = *o;
	ns->opts.path = ns->path;
	ret = nvmet_ns_open(ns, o);
	if (ret) {
		nvmet_err("%s: namespace %u (%s): %s", nqn, nsid,
			  o->path ? o->path : "ram",
			  ret == -EINVAL ? "less than one block" :
					   strerror(-ret));
		free(ns->path);
		free(ns);
		*err = ret;
		return NULL;
	}
	nvmet_ns_ids(ns, nqn, o);
	return ns;
}

static int nvmet_subsys_open_ns(struct nvmet_subsys *s,
				const struct nvmet_subsys_opts *so)
{
	u32 i;
	int ret;

	for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
		if (so->ns[i].type == NVMET_BACKEND_NONE)
			continue;
		s->ns[i] =
			nvmet_ns_create(s->subsysnqn, i + 1, &so->ns[i], &ret);
		if (!s->ns[i])
			return ret;
		/* a mapped tmpfs namespace's lease break syncs @s's views */
		__atomic_store_n(&s->ns[i]->subsys, s, __ATOMIC_RELEASE);
	}
	s->max_nsid = NVMET_MAX_NAMESPACES;
	return 0;
}

/* A copy of @so's allowed hosts (NULL with 0 hosts); -ENOMEM. */
int nvmet_hosts_dup(const struct nvmet_subsys_opts *so,
		    char (**hosts)[NVMF_NQN_FIELD_LEN])
{
	u32 i;

	*hosts = NULL;
	if (!so->nr_hosts)
		return 0;
	*hosts = calloc(so->nr_hosts, sizeof(**hosts));
	if (!*hosts)
		return -ENOMEM;
	for (i = 0; i < so->nr_hosts; i++)
		nvmet_copy_nul((*hosts)[i], sizeof((*hosts)[i]), so->hosts[i]);
	return 0;
}

/*
 * The NVM subsystem @so of @t, its namespaces open, on no list yet; NULL
 * with *@err set when it cannot be.
 */
struct nvmet_subsys *nvmet_subsys_build(struct nvmet_target *t,
					const struct nvmet_subsys_opts *so,
					int *err)
{
	struct nvmet_subsys *s;

	s = nvmet_subsys_alloc(t, so->nqn, NVMET_SUBSYS_NVME);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->max_qid = (u16)(so->max_io_queues ? so->max_io_queues :
					       NVMET_MAX_IO_QUEUES);
	s->allow_any_host = so->allow_any_host;
	*err = nvmet_hosts_dup(so, &s->hosts);
	if (*err)
		goto out_put;
	s->nr_hosts = so->nr_hosts;
	if (so->serial)
		snprintf(s->serial, sizeof(s->serial), "%s", so->serial);
	else
		nvmet_default_serial(s->subsysnqn, s->serial,
				     sizeof(s->serial));
	*err = nvmet_subsys_open_ns(s, so);
	if (*err)
		goto out_put;
	return s;

out_put:
	nvmet_subsys_put(s);
	return NULL;
}

/* Add the NVM subsystem @so to @t. */
static int nvmet_add_subsys(struct nvmet_target *t,
			    const struct nvmet_subsys_opts *so)
{
	struct nvmet_subsys *s;
	int ret;

	s = nvmet_subsys_build(t, so, &ret);
	if (!s)
		return ret;
	list_add_tail(&s->entry, &t->subsystems);
	return 0;
}

struct nvmet_subsys *nvmet_subsys_by_nqn(struct nvmet_target *t,
					 const char *nqn)
{
	struct nvmet_subsys *s;

	list_for_each_entry(s, &t->subsystems, entry)
	{
		if (!strcmp(s->subsysnqn, nqn))
			return s;
	}
	return NULL;
}

/* ---- ports --------------------------------------------------------------------- */

static int nvmet_parse_addr(const struct nvmet_port_opts *o,
			    struct nvmet_port *port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&port->addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&port->addr;
	u16 p = o->port ? o->port : NVMF_RDMA_DEFAULT_PORT;

	memset(&port->addr, 0, sizeof(port->addr));
	if (inet_pton(AF_INET, o->addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(p);
		port->adrfam = NVMF_ADDR_FAMILY_IP4;
	} else if (inet_pton(AF_INET6, o->addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(p);
		port->adrfam = NVMF_ADDR_FAMILY_IP6;
	} else {
		return -EINVAL;
	}
	snprintf(port->traddr, sizeof(port->traddr), "%s", o->addr);
	snprintf(port->trsvcid, sizeof(port->trsvcid), "%u", p);
	return 0;
}

/* The transport settings every port shares (the target's options). */
static void nvmet_port_params(struct nvmet_port *port,
			      const struct nvmet_target_opts *o)
{
	if (o->inline_data_size == NVMET_NO_INLINE)
		port->inline_data_size = 0;
	else if (!o->inline_data_size)
		port->inline_data_size = NVMET_DEFAULT_INLINE_DATA;
	else
		port->inline_data_size = ALIGN(o->inline_data_size, 16);
	port->max_queue_size =
		o->max_queue_size ? o->max_queue_size : NVMET_MAX_QUEUE_SIZE;
	port->mdts_max = (u8)(o->mdts_max ? o->mdts_max : NVMET_DEFAULT_MDTS);
	port->data_buf_pages = DIV_ROUND_UP(
		o->data_buf_size ? o->data_buf_size : NVMET_DEFAULT_DATA_BUF,
		4096u);
}

/*
 * Fill @arr, room for every subsystem of @t, with those @po names (every
 * one when it names none), each once; returns how many.
 */
u32 nvmet_port_fill_links(struct nvmet_target *t,
			  const struct nvmet_port_opts *po,
			  struct nvmet_subsys **arr)
{
	struct nvmet_subsys *s;
	u32 n = 0, i, j;

	if (!po->nr_subsys) {
		list_for_each_entry(s, &t->subsystems, entry)
		{
			arr[n++] = s;
		}
		return n;
	}
	for (i = 0; i < po->nr_subsys; i++) {
		s = nvmet_subsys_by_nqn(t, po->subsys[i]);
		if (!s)
			continue;
		for (j = 0; j < n; j++)
			if (arr[j] == s)
				break;
		if (j == n)
			arr[n++] = s;
	}
	return n;
}

/* Link @po's subsystems to @port. */
static int nvmet_port_link(struct nvmet_target *t, struct nvmet_port *port,
			   const struct nvmet_port_opts *po)
{
	struct nvmet_subsys *s;
	u32 n = 0;

	list_for_each_entry(s, &t->subsystems, entry)
	{
		n++;
	}
	port->subsys = calloc(n ? n : 1, sizeof(*port->subsys));
	if (!port->subsys)
		return -ENOMEM;
	port->nr_subsys = nvmet_port_fill_links(t, po, port->subsys);
	return 0;
}

void nvmet_port_free(struct nvmet_port *port)
{
	list_del(&port->entry);
	free(port->subsys);
	free(port->device);
	free(port);
}

/*
 * Port number @portid as @po says, neither linked nor enabled, on no
 * list; NULL with *@err set when @po does not parse.
 */
struct nvmet_port *nvmet_port_build(struct nvmet_target *t,
				    const struct nvmet_port_opts *po,
				    u16 portid, int *err)
{
	struct nvmet_port *port = calloc(1, sizeof(*port));

	*err = -ENOMEM;
	if (!port)
		return NULL;
	INIT_LIST_HEAD(&port->entry);
	port->tgt = t;
	port->portid = portid;
	port->trtype = NVMF_TRTYPE_RDMA;
	nvmet_port_params(port, &t->opts);
	*err = nvmet_parse_addr(po, port);
	if (!*err && po->device) {
		port->device = strdup(po->device);
		if (!port->device)
			*err = -ENOMEM;
	}
	if (*err) {
		nvmet_port_free(port);
		return NULL;
	}
	return port;
}

/* Add and enable port number @portid (on the list even when it fails). */
static int nvmet_add_port(struct nvmet_target *t,
			  const struct nvmet_port_opts *po, u16 portid)
{
	struct nvmet_port *port;
	int ret;

	port = nvmet_port_build(t, po, portid, &ret);
	if (!port)
		return ret;
	list_add_tail(&port->entry, &t->ports);
	ret = nvmet_port_link(t, port, po);
	if (ret)
		return ret;
	return nvmet_enable_port(port);
}

/* ---- the target ------------------------------------------------------------------ */

/*
 * Stop every port (its queues released) and free what the target holds:
 * false when a port's queues were not all released (then nothing is
 * freed, rather than memory in use).
 */
static bool nvmet_target_free(struct nvmet_target *t)
{
	struct nvmet_port *port, *ptmp;
	struct nvmet_subsys *s, *stmp;
	bool busy = false;

	list_for_each_entry(port, &t->ports, entry)
	{
		if (nvmet_disable_port(port))
			busy = true;
	}
	if (busy)
		return false;
	flush_workqueue(t->wq);
	destroy_workqueue(t->wq);
	if (nvmet_stat_read(t->ctrls))
		nvmet_err("%llu controllers still alive at destroy",
			  (unsigned long long)nvmet_stat_read(t->ctrls));
	list_for_each_entry_safe(port, ptmp, &t->ports, entry)
		nvmet_port_free(port);
	list_for_each_entry_safe(s, stmp, &t->subsystems, entry) {
		list_del(&s->entry);
		nvmet_subsys_put(s);
	}
	nvmet_subsys_put(t->disc);
	nvmet_auth_hosts_free(t);
	mutex_destroy(&t->reload_lock);
	mutex_destroy(&t->lock);
	free(t);
	return true;
}

/* The subsystems, then the ports (listening when this returns 0). */
static int nvmet_target_setup(struct nvmet_target *t,
			      const struct nvmet_target_opts *o,
			      const struct nvmet_subsys_opts *quick)
{
	struct nvmet_port_opts quick_port;
	struct nvmet_subsys *first;
	u32 i, nr;
	int ret;

	nr = o->nr_subsys ? o->nr_subsys : 1;
	for (i = 0; i < nr; i++) {
		ret = nvmet_add_subsys(t, nvmet_subsys_opts_of(o, quick, i));
		if (ret)
			return ret;
	}
	first = list_first_entry(&t->subsystems, struct nvmet_subsys, entry);
	memcpy(t->disc->serial, first->serial, sizeof(t->disc->serial));
	nvmet_quick_port(o, &quick_port);
	nr = o->nr_ports ? o->nr_ports : 1;
	for (i = 0; i < nr; i++) {
		ret = nvmet_add_port(t,
				     o->nr_ports ? &o->ports[i] : &quick_port,
				     (u16)(i + 1));
		if (ret)
			return ret;
	}
	return 0;
}

struct nvmet_target *nvmet_target_create(const struct nvmet_target_opts *opts)
{
	struct nvmet_subsys_opts quick;
	struct nvmet_target *t;
	int ret;

	if (!opts)
		return ERR_PTR(-EINVAL);
	nvmet_quick_subsys(opts, &quick);
	ret = nvmet_check_opts(opts, &quick);
	if (ret)
		return ERR_PTR(ret);
	t = calloc(1, sizeof(*t));
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->opts = *opts;
	/* the caller's strings and arrays are not kept */
	t->opts.device = t->opts.addr = t->opts.subnqn = t->opts.serial = NULL;
	t->opts.subsys = NULL;
	t->opts.ports = NULL;
	t->opts.hosts = NULL;
	t->opts.host_keys = NULL;
	memset(t->opts.ns, 0, sizeof(t->opts.ns));
	if (opts->verbose)
		nvmet_verbose = true;
	mutex_init(&t->lock);
	mutex_init(&t->reload_lock);
	spin_lock_init(&t->qc_lock);
	INIT_LIST_HEAD(&t->qcounts);
	t->next_cntlid = 1;
	INIT_LIST_HEAD(&t->ports);
	INIT_LIST_HEAD(&t->subsystems);
	t->disc =
		nvmet_subsys_alloc(t, NVME_DISC_SUBSYS_NAME, NVMET_SUBSYS_DISC);
	t->wq = alloc_workqueue("nvmet", 0, 4);
	if (!t->disc || !t->wq) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = nvmet_auth_hosts_setup(t, opts);
	if (!ret)
		ret = nvmet_target_setup(t, opts, &quick);
	if (ret)
		goto out_free;
	return t;

out_free:
	if (!t->wq) {
		if (t->disc)
			nvmet_subsys_put(t->disc);
		nvmet_auth_hosts_free(t);
		mutex_destroy(&t->reload_lock);
		mutex_destroy(&t->lock);
		free(t);
	} else if (!nvmet_target_free(t)) {
		nvmet_err("target not freed: queues are still in use");
	}
	return ERR_PTR(ret);
}

void nvmet_target_destroy(struct nvmet_target *t)
{
	if (IS_ERR_OR_NULL(t))
		return;
	/* a queue still uses the target: leak it rather than crash */
	if (!nvmet_target_free(t))
		nvmet_err("target not freed: queues are still in use");
}

int nvmet_target_poll_hook(struct nvmet_target *t, unsigned int group,
			   int (*fn)(void *arg), void *arg)
{
	struct nvmet_port *port;
	int ret = -ENODEV;

	if (!t || group >= t->opts.poll_groups)
		return -EINVAL;
	/*
	 * The reload lock keeps the ports (a reload changes them under it
	 * and tgt->lock), not tgt->lock: a group may be in a Connect, which
	 * takes tgt->lock, when it is asked to take the hook.
	 */
	mutex_lock(&t->reload_lock);
	list_for_each_entry(port, &t->ports, entry)
	{
		if (!port->tr_ops || !port->tr_ops->poll_hook)
			continue;
		ret = port->tr_ops->poll_hook(port, group, fn, arg);
		if (ret)
			break;
	}
	mutex_unlock(&t->reload_lock);
	return ret;
}

int nvmet_target_get_stats(struct nvmet_target *t,
			   struct nvmet_target_stats *st)
{
	if (!t || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->ctrls = (u32)nvmet_stat_read(t->ctrls);
	st->queues = (u32)nvmet_stat_read(t->queues);
	st->ctrls_created = nvmet_stat_read(t->ctrls_created);
	st->queues_created = nvmet_stat_read(t->queues_created);
	nvmet_qcount_sum(t, &st->cmds, &st->reqs_inflight);
	st->errors = nvmet_stat_read(t->errors);
	st->kato_expired = nvmet_stat_read(t->kato_expired);
	st->rejects = nvmet_stat_read(t->rejects);
	st->data_waits = nvmet_stat_read(t->data_waits);
	st->mdts = READ_ONCE(t->mdts);
	st->unadmitted = nvmet_stat_read(t->unadmitted);
	st->connect_timeouts = nvmet_stat_read(t->connect_timeouts);
	st->buf_bytes = nvmet_stat_read(t->buf_bytes);
	st->pool_bytes = nvmet_stat_read(t->pool_bytes);
	st->poll_sleeps = nvmet_stat_read(t->poll_sleeps);
	st->poll_wakeups = nvmet_stat_read(t->poll_wakeups);
	st->poll_asleep = nvmet_stat_read(t->poll_asleep);
	st->poll_members = nvmet_stat_read(t->poll_members);
	return 0;
}

uint16_t nvmet_target_port(const struct nvmet_target *t)
{
	struct nvmet_target *mt = (struct nvmet_target *)t;
	const struct nvmet_port *port;
	u16 p = 0;

	if (!t)
		return 0;
	mutex_lock(&mt->lock); /* a reload changes the list */
	if (!list_empty(&t->ports)) {
		port = list_first_entry(&t->ports, struct nvmet_port, entry);
		p = (u16)ntohs(
			((const struct sockaddr_in *)&port->addr)->sin_port);
	}
	mutex_unlock(&mt->lock);
	return p;
}

/* Report namespace @nsid of @s changed: 0, or -EINVAL when it is none. */
static int nvmet_ns_changed_of(struct nvmet_subsys *s, uint32_t nsid)
{
	struct nvmet_ns *ns = s ? nvmet_find_get_ns(s, nsid) : NULL;

	if (!ns)
		return -EINVAL;
	nvmet_put_namespace(ns);
	nvmet_subsys_ns_changed(s, nsid);
	return 0;
}

int nvmet_target_ns_changed(struct nvmet_target *t, uint32_t nsid)
{
	struct nvmet_subsys *s = NULL;
	int ret;

	if (!t)
		return -EINVAL;
	mutex_lock(&t->lock);
	if (!list_empty(&t->subsystems))
		s = list_first_entry(&t->subsystems, struct nvmet_subsys,
				     entry);
	ret = nvmet_ns_changed_of(s, nsid);
	mutex_unlock(&t->lock);
	return ret;
}

int nvmet_target_subsys_ns_changed(struct nvmet_target *t, const char *subnqn,
				   uint32_t nsid)
{
	int ret;

	if (!t || !subnqn)
		return -EINVAL;
	mutex_lock(&t->lock);
	ret = nvmet_ns_changed_of(nvmet_subsys_by_nqn(t, subnqn), nsid);
	mutex_unlock(&t->lock);
	return ret;
}

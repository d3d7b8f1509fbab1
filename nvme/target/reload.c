// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reloading a running target's configuration (SIGHUP in rdmarw-nvmet):
 * the new options are checked and everything they need is opened (the
 * namespaces' backends, the new ports' listeners) before anything live
 * changes; then, under tgt->lock, the difference is applied at once, and
 * the consequences follow as the kernel's configfs has them:
 *
 *  - a namespace added, removed or changed (its options differ: it is
 *    opened again, with a new size or backend) is reported to every
 *    controller of its subsystem (Changed Namespace List log, Namespace
 *    Attribute Changed event: nvmet_ns_changed()); a removed one serves
 *    the requests that found it and is closed when they end, later ones
 *    get Invalid Namespace (nvmet_ns_disable());
 *  - a host no longer allowed (or a subsystem no longer linked to the port
 *    a controller came through) loses its controllers, as the kernel's
 *    nvmet_port_del_ctrls(); new Connects are refused;
 *  - a removed subsystem loses its controllers (nvmet_subsys_del_ctrls())
 *    and is freed with the last of them;
 *  - a removed port stops listening and its queues are disconnected
 *    (nvmet_disable_port()); an added one listens.
 *
 * Controllers nothing of this touches keep their queues and their I/O.
 * What cannot change on a live target is refused, with the reason: the
 * transport settings every port shares, a subsystem's serial number, the
 * hosts' DH-HMAC-CHAP keys (docs/nvmet-operations.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "config.h"
#include "nvmet_int.h"

/* What a reload will do, prepared before anything live changes. */
struct nvmet_reload {
	struct nvmet_subsys_opts quick;
	struct nvmet_port_opts quick_port;
	/* the new subsystems, in order: an existing one or one built */
	u32 nr_subsys;
	const struct nvmet_subsys_opts *so[NVMET_MAX_SUBSYS];
	struct nvmet_subsys *cur[NVMET_MAX_SUBSYS];
	struct nvmet_subsys *built[NVMET_MAX_SUBSYS];
	/* an existing subsystem's slots: changed, and the new namespace */
	bool ns_changed[NVMET_MAX_SUBSYS][NVMET_MAX_NAMESPACES];
	struct nvmet_ns *ns_new[NVMET_MAX_SUBSYS][NVMET_MAX_NAMESPACES];
	struct nvmet_ns *ns_old[NVMET_MAX_SUBSYS][NVMET_MAX_NAMESPACES];
	char (*hosts[NVMET_MAX_SUBSYS])[NVMF_NQN_FIELD_LEN];
	/* the new ports, in order: an existing one or one enabled */
	u32 nr_ports;
	const struct nvmet_port_opts *po[NVMET_MAX_PORTS];
	struct nvmet_port *port_cur[NVMET_MAX_PORTS];
	struct nvmet_port *port_new[NVMET_MAX_PORTS];
	struct nvmet_subsys **links[NVMET_MAX_PORTS];
	/* taken out by the commit, handled after it */
	struct nvmet_subsys *gone_subsys[NVMET_MAX_SUBSYS];
	u32 nr_gone_subsys;
	struct nvmet_port *gone_port[NVMET_MAX_PORTS];
	u32 nr_gone_ports;
	char *why;
	size_t why_len;
};

static __attribute__((format(printf, 3, 4))) int
nvmet_reload_refuse(struct nvmet_reload *r, int err, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nvmet_err("reload refused, the configuration stays: %s", buf);
	if (r->why && r->why_len)
		snprintf(r->why, r->why_len, "%s", buf);
	return err;
}

/* ---- checks ---------------------------------------------------------------- */

/* The settings every port shares and the admission bounds stay. */
static int nvmet_reload_check_scalars(struct nvmet_target *t,
				      const struct nvmet_target_opts *o,
				      struct nvmet_reload *r)
{
	const struct nvmet_target_opts *c = &t->opts;
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
#define F(x) { #x, offsetof(struct nvmet_target_opts, x) }
		F(max_queue_size), F(inline_data_size),
		F(mdts_max),	   F(kato_grace_ms),
		F(data_buf_size),  F(connect_timeout_ms),
		F(max_unadmitted), F(max_unadmitted_per_addr),
#undef F
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		u32 a, b;

		memcpy(&a, (const char *)c + f[i].off, sizeof(a));
		memcpy(&b, (const char *)o + f[i].off, sizeof(b));
		if (a != b)
			return nvmet_reload_refuse(
				r, -EOPNOTSUPP,
				"%s cannot change on a running target (%u to %u): restart it",
				f[i].name, a, b);
	}
	return 0;
}

static bool nvmet_str_same(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

/* The DH-HMAC-CHAP hosts are those the target has (checked as at start). */
static int nvmet_reload_check_auth(struct nvmet_target *t,
				   const struct nvmet_target_opts *o,
				   struct nvmet_reload *r)
{
	struct nvmet_target *tmp = calloc(1, sizeof(*tmp));
	bool same;
	u32 i, j;
	int ret;

	if (!tmp)
		return -ENOMEM;
	ret = nvmet_auth_hosts_setup(tmp, o);
	if (ret) {
		nvmet_auth_hosts_free(tmp);
		free(tmp);
		return nvmet_reload_refuse(
			r, ret, "a DH-HMAC-CHAP host entry is invalid");
	}
	same = tmp->nr_auth_hosts == t->nr_auth_hosts;
	for (i = 0; same && i < tmp->nr_auth_hosts; i++) {
		const struct nvmet_host_auth *a = &tmp->auth_hosts[i];

		for (j = 0; j < t->nr_auth_hosts; j++) {
			const struct nvmet_host_auth *b = &t->auth_hosts[j];

			if (!strcmp(a->nqn, b->nqn))
				break;
		}
		if (j == t->nr_auth_hosts) {
			same = false;
			break;
		}
		same = nvmet_str_same(a->key, t->auth_hosts[j].key) &&
		       nvmet_str_same(a->ctrl_key, t->auth_hosts[j].ctrl_key) &&
		       a->hash_id == t->auth_hosts[j].hash_id &&
		       a->dhgroup_id == t->auth_hosts[j].dhgroup_id;
	}
	nvmet_auth_hosts_free(tmp);
	free(tmp);
	if (!same)
		return nvmet_reload_refuse(
			r, -EOPNOTSUPP,
			"the DH-HMAC-CHAP hosts or keys cannot change on a running target: restart it");
	return 0;
}

/* ---- subsystems and namespaces ------------------------------------------------ */

static bool nvmet_ns_opts_same(const struct nvmet_ns_opts *a,
			       const struct nvmet_ns_opts *b)
{
	u32 abs = a->block_size ? a->block_size : 512;
	u32 bbs = b->block_size ? b->block_size : 512;

	return a->type == b->type && a->size == b->size && abs == bbs &&
	       a->readonly == b->readonly && nvmet_str_same(a->path, b->path) &&
	       a->io_engine == b->io_engine && a->buffered == b->buffered &&
	       !memcmp(a->uuid, b->uuid, sizeof(a->uuid)) &&
	       !memcmp(a->nguid, b->nguid, sizeof(a->nguid));
}

/* Open what subsystem @i (existing) needs: namespaces new or changed. */
static int nvmet_reload_prepare_ns(struct nvmet_reload *r, u32 i)
{
	const struct nvmet_subsys_opts *so = r->so[i];
	struct nvmet_subsys *s = r->cur[i];
	u32 k;
	int ret;

	for (k = 0; k < NVMET_MAX_NAMESPACES; k++) {
		const struct nvmet_ns_opts *no = &so->ns[k];
		struct nvmet_ns *old = s->ns[k]; /* reloads are serialized */

		if (old && no->type != NVMET_BACKEND_NONE &&
		    nvmet_ns_opts_same(&old->opts, no))
			continue;
		if (!old && no->type == NVMET_BACKEND_NONE)
			continue;
		r->ns_changed[i][k] = true;
		if (no->type == NVMET_BACKEND_NONE)
			continue;
		r->ns_new[i][k] =
			nvmet_ns_create(s->subsysnqn, k + 1, no, &ret);
		if (!r->ns_new[i][k])
			return nvmet_reload_refuse(
				r, ret, "subsystem %s namespace %u (%s): %s",
				s->subsysnqn, k + 1,
				no->path ? no->path : "ram",
				ret == -EINVAL ? "less than one block" :
						 strerror(-ret));
	}
	return 0;
}

static int nvmet_reload_prepare_subsys(struct nvmet_target *t,
				       const struct nvmet_target_opts *o,
				       struct nvmet_reload *r)
{
	u32 i;
	int ret;

	r->nr_subsys = o->nr_subsys ? o->nr_subsys : 1;
	for (i = 0; i < r->nr_subsys; i++) {
		const struct nvmet_subsys_opts *so =
			nvmet_subsys_opts_of(o, &r->quick, i);
		struct nvmet_subsys *s = nvmet_subsys_by_nqn(t, so->nqn);

		r->so[i] = so;
		if (!s) {
			r->built[i] = nvmet_subsys_build(t, so, &ret);
			if (!r->built[i])
				return nvmet_reload_refuse(
					r, ret, "new subsystem %s: %s", so->nqn,
					strerror(-ret));
			continue;
		}
		r->cur[i] = s;
		if (so->serial && strcmp(so->serial, s->serial))
			return nvmet_reload_refuse(
				r, -EOPNOTSUPP,
				"subsystem %s: the serial number cannot change on a running target",
				s->subsysnqn);
		ret = nvmet_hosts_dup(so, &r->hosts[i]);
		if (ret)
			return ret;
		ret = nvmet_reload_prepare_ns(r, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- ports ---------------------------------------------------------------------- */

static struct nvmet_port *nvmet_reload_port_match(struct nvmet_target *t,
						  const struct nvmet_port *p)
{
	struct nvmet_port *port;

	list_for_each_entry(port, &t->ports, entry)
	{
		if (!strcmp(port->traddr, p->traddr) &&
		    !strcmp(port->trsvcid, p->trsvcid) &&
		    nvmet_str_same(port->device, p->device))
			return port;
	}
	return NULL;
}

/* The lowest port ID neither a kept port nor a new one has. */
static u16 nvmet_reload_portid(struct nvmet_reload *r, u32 upto)
{
	u16 id;
	u32 i;

	for (id = 1;; id++) {
		for (i = 0; i < upto; i++) {
			struct nvmet_port *p = r->port_cur[i] ? r->port_cur[i] :
								r->port_new[i];

			if (p && p->portid == id)
				break;
		}
		if (i == upto)
			return id;
	}
}

/*
 * Match the new ports with the live ones (address, service, device); a
 * new one is enabled here, linked to nothing until the commit.
 */
static int nvmet_reload_prepare_ports(struct nvmet_target *t,
				      const struct nvmet_target_opts *o,
				      struct nvmet_reload *r)
{
	u32 i, j;
	int ret;

	r->nr_ports = o->nr_ports ? o->nr_ports : 1;
	for (i = 0; i < r->nr_ports; i++) {
		struct nvmet_port *p;

		r->po[i] = o->nr_ports ? &o->ports[i] : &r->quick_port;
		p = nvmet_port_build(t, r->po[i], 0, &ret); /* ID below */
		if (!p)
			return nvmet_reload_refuse(
				r, ret, "port %u: address %s: %s", i + 1,
				r->po[i]->addr, strerror(-ret));
		r->port_cur[i] = nvmet_reload_port_match(t, p);
		for (j = 0; j < i && r->port_cur[i]; j++)
			if (r->port_cur[j] == r->port_cur[i])
				r->port_cur[i] = NULL; /* twice: a new one */
		r->links[i] = calloc(r->nr_subsys, sizeof(*r->links[i]));
		if (!r->links[i]) {
			nvmet_port_free(p);
			return -ENOMEM;
		}
		if (r->port_cur[i]) {
			nvmet_port_free(p);
			continue;
		}
		r->port_new[i] = p;
	}
	/* IDs once every kept port is known; then listen */
	for (i = 0; i < r->nr_ports; i++) {
		if (!r->port_new[i])
			continue;
		r->port_new[i]->portid = nvmet_reload_portid(r, r->nr_ports);
		ret = nvmet_enable_port(r->port_new[i]);
		if (ret)
			return nvmet_reload_refuse(
				r, ret, "port %s:%s: cannot listen: %s",
				r->port_new[i]->traddr, r->port_new[i]->trsvcid,
				strerror(-ret));
	}
	return 0;
}

/* ---- abort, commit, finish ------------------------------------------------------ */

static void nvmet_reload_abort(struct nvmet_target *t, struct nvmet_reload *r)
{
	u32 i, k;

	for (i = 0; i < r->nr_ports; i++) {
		struct nvmet_port *p = r->port_new[i];

		free(r->links[i]);
		if (!p)
			continue;
		if (nvmet_disable_port(p)) {
			nvmet_err("port %s:%s: queues still in use, kept",
				  p->traddr, p->trsvcid);
			continue;
		}
		flush_workqueue(t->wq);
		nvmet_port_free(p);
	}
	for (i = 0; i < r->nr_subsys; i++) {
		for (k = 0; k < NVMET_MAX_NAMESPACES; k++)
			if (r->ns_new[i][k])
				nvmet_ns_release(r->ns_new[i][k]);
		free(r->hosts[i]);
		if (r->built[i])
			nvmet_subsys_put(r->built[i]);
	}
}

/* Swap an existing subsystem's namespaces and hosts (tgt->lock held). */
static void nvmet_reload_commit_subsys(struct nvmet_reload *r, u32 i)
{
	struct nvmet_subsys *s = r->cur[i];
	char(*old_hosts)[NVMF_NQN_FIELD_LEN] = s->hosts;
	bool changed = false;
	u32 k;

	spin_lock(&s->ns_lock);
	for (k = 0; k < NVMET_MAX_NAMESPACES; k++) {
		if (!r->ns_changed[i][k])
			continue;
		r->ns_old[i][k] = s->ns[k];
		s->ns[k] = r->ns_new[i][k];
		r->ns_new[i][k] = NULL;
		if (s->ns[k]) /* for a mapped tmpfs file's lease break */
			__atomic_store_n(&s->ns[k]->subsys, s,
					 __ATOMIC_RELEASE);
		changed = true;
	}
	if (changed) /* the queues' views are stale (nvmet_subsys_ns_sync()) */
		__atomic_add_fetch(&s->ns_gen, 1, __ATOMIC_SEQ_CST);
	spin_unlock(&s->ns_lock);
	s->hosts = r->hosts[i];
	r->hosts[i] = old_hosts; /* freed after the commit */
	s->nr_hosts = r->so[i]->nr_hosts;
	s->allow_any_host = r->so[i]->allow_any_host;
	s->max_qid = (u16)(r->so[i]->max_io_queues ? r->so[i]->max_io_queues :
						     NVMET_MAX_IO_QUEUES);
}

static bool nvmet_reload_kept(struct nvmet_reload *r, struct nvmet_subsys *s)
{
	u32 i;

	for (i = 0; i < r->nr_subsys; i++)
		if (r->cur[i] == s)
			return true;
	return false;
}

static bool nvmet_reload_port_kept(struct nvmet_reload *r, struct nvmet_port *p)
{
	u32 i;

	for (i = 0; i < r->nr_ports; i++)
		if (r->port_cur[i] == p)
			return true;
	return false;
}

/* Apply the prepared difference at once (tgt->lock held). */
static void nvmet_reload_commit(struct nvmet_target *t, struct nvmet_reload *r)
{
	struct nvmet_subsys *s, *stmp;
	struct nvmet_port *p, *ptmp;
	u32 i;

	list_for_each_entry_safe(s, stmp, &t->subsystems, entry) {
		list_del_init(&s->entry);
		if (nvmet_reload_kept(r, s))
			continue;
		r->gone_subsys[r->nr_gone_subsys++] = s;
	}
	for (i = 0; i < r->nr_subsys; i++) {
		if (r->cur[i])
			nvmet_reload_commit_subsys(r, i);
		s = r->cur[i] ? r->cur[i] : r->built[i];
		r->built[i] = NULL;
		list_add_tail(&s->entry, &t->subsystems);
	}
	list_for_each_entry_safe(p, ptmp, &t->ports, entry) {
		list_del_init(&p->entry);
		if (nvmet_reload_port_kept(r, p))
			continue;
		/* listening until disabled: reaches nothing meanwhile */
		p->nr_subsys = 0;
		r->gone_port[r->nr_gone_ports++] = p;
	}
	for (i = 0; i < r->nr_ports; i++) {
		struct nvmet_subsys **old;

		p = r->port_cur[i] ? r->port_cur[i] : r->port_new[i];
		r->port_new[i] = NULL;
		list_add_tail(&p->entry, &t->ports);
		old = p->subsys;
		p->subsys = r->links[i];
		p->nr_subsys = nvmet_port_fill_links(t, r->po[i], p->subsys);
		r->links[i] = old; /* freed after the commit */
	}
	t->reloads++;
}

/* Does @ctrl's port still link @s? */
static bool nvmet_port_links(const struct nvmet_port *port,
			     const struct nvmet_subsys *s)
{
	u32 i;

	for (i = 0; i < port->nr_subsys; i++)
		if (port->subsys[i] == s)
			return true;
	return false;
}

/* Tear down @s's controllers (all, or those no longer admitted). */
static void nvmet_reload_del_ctrls(struct nvmet_subsys *s, bool all)
{
	struct nvmet_ctrl *ctrl;

	mutex_lock(&s->lock);
	list_for_each_entry(ctrl, &s->ctrls, subsys_entry)
	{
		if (!all && nvmet_host_allowed(s, ctrl->hostnqn) &&
		    nvmet_port_links(ctrl->port, s))
			continue;
		nvmet_log("controller %u (host %s): no longer admitted to %s",
			  ctrl->cntlid, ctrl->hostnqn, s->subsysnqn);
		nvmet_ctrl_fatal_error(ctrl);
	}
	mutex_unlock(&s->lock);
}

/*
 * Before the namespaces that left subsystem @i are released: the queues'
 * views of the slots that held them are no longer in use (a grace period,
 * where the kernel's nvmet_ns_disable() has percpu_ref_kill() and its
 * RCU grace period).  A queue that never lets its old view go (a request
 * that never ends) leaves them open and allocated, as nvmet_ns_release()
 * does for a reference never dropped.
 */
static bool nvmet_reload_ns_sync(struct nvmet_reload *r, u32 i)
{
	struct nvmet_subsys *s = r->cur[i];
	bool removed = false;
	u32 k;

	for (k = 0; k < NVMET_MAX_NAMESPACES; k++)
		removed |= r->ns_changed[i][k] && r->ns_old[i][k];
	if (!removed || !nvmet_subsys_ns_sync(s, NVMET_NS_DRAIN_MS))
		return true;
	nvmet_err("%s: queues still use removed namespaces, not closed",
		  s->subsysnqn);
	return false;
}

/* What follows the commit: disconnects, events, closes, frees. */
static void nvmet_reload_finish(struct nvmet_target *t, struct nvmet_reload *r)
{
	u32 i, k;

	/* first, while every controller's port is still allocated */
	for (i = 0; i < r->nr_subsys; i++)
		if (r->cur[i])
			nvmet_reload_del_ctrls(r->cur[i], false);
	for (i = 0; i < r->nr_gone_subsys; i++) {
		nvmet_reload_del_ctrls(r->gone_subsys[i], true);
		nvmet_subsys_put(r->gone_subsys[i]);
	}
	for (i = 0; i < r->nr_gone_ports; i++) {
		struct nvmet_port *p = r->gone_port[i];

		if (nvmet_disable_port(p)) {
			nvmet_err("port %s:%s: queues still in use, kept",
				  p->traddr, p->trsvcid);
			continue;
		}
		flush_workqueue(t->wq);
		nvmet_port_free(p);
	}
	for (i = 0; i < r->nr_subsys; i++) {
		bool synced = !r->cur[i] || nvmet_reload_ns_sync(r, i);

		for (k = 0; r->cur[i] && k < NVMET_MAX_NAMESPACES; k++) {
			if (!r->ns_changed[i][k])
				continue;
			nvmet_subsys_ns_changed(r->cur[i], k + 1);
			if (r->ns_old[i][k] && synced)
				nvmet_ns_release(r->ns_old[i][k]);
		}
		free(r->hosts[i]);
	}
	for (i = 0; i < r->nr_ports; i++)
		free(r->links[i]);
}

int nvmet_target_reload(struct nvmet_target *t,
			const struct nvmet_target_opts *opts, char *why,
			size_t why_len)
{
	struct nvmet_reload *r;
	int ret;

	if (why && why_len)
		why[0] = '\0';
	if (!t || !opts)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->why = why;
	r->why_len = why_len;
	nvmet_quick_subsys(opts, &r->quick);
	nvmet_quick_port(opts, &r->quick_port);
	mutex_lock(&t->reload_lock);
	ret = nvmet_check_opts(opts, &r->quick);
	if (ret) {
		nvmet_reload_refuse(
			r, ret,
			"the new configuration is invalid (as at start: %s)",
			strerror(-ret));
		goto out;
	}
	ret = nvmet_reload_check_scalars(t, opts, r);
	if (!ret)
		ret = nvmet_reload_check_auth(t, opts, r);
	if (!ret)
		ret = nvmet_reload_prepare_subsys(t, opts, r);
	if (!ret)
		ret = nvmet_reload_prepare_ports(t, opts, r);
	if (ret) {
		nvmet_reload_abort(t, r);
		goto out;
	}
	mutex_lock(&t->lock);
	nvmet_reload_commit(t, r);
	mutex_unlock(&t->lock);
	nvmet_reload_finish(t, r);
	nvmet_log("configuration reloaded: %u subsystems, %u ports",
		  r->nr_subsys, r->nr_ports);
out:
	mutex_unlock(&t->reload_lock);
	free(r);
	return ret;
}

int nvmet_config_reload(struct nvmet_target *t,
			const struct nvmet_config *start, int argc, char **argv,
			char *why, size_t why_len)
{
	struct nvmet_config *c;
	int ret;

	if (why && why_len)
		why[0] = '\0';
	if (!t || !argv)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	nvmet_config_init(c);
	ret = nvmet_config_args(c, argc, argv);
	if (!ret && nvmet_config_add_default_ns(c))
		ret = -EINVAL;
	if (ret) {
		/* the reader printed the line or the value it refused */
		nvmet_err("reload refused, the configuration stays: the "
			  "command line or config file does not parse");
		if (why && why_len)
			snprintf(
				why, why_len,
				"the command line or config file does not parse");
		ret = ret > 0 ? -EINVAL : ret;
		goto out;
	}
	/* as main() completed @start: --soft, the identifiers */
	if (start && start->soft) {
		if (!c->o.addr && !c->o.nr_ports)
			c->o.addr = "127.0.0.1";
		c->o.device = start->o.device;
	}
	if (start) {
		memcpy(c->machine_id, start->machine_id, sizeof(c->machine_id));
		c->random_ids = start->random_ids;
		ret = nvmet_config_derive_ids(c);
		if (ret) {
			nvmet_err(
				"reload refused: cannot derive identifiers: %s",
				strerror(-ret));
			if (why && why_len)
				snprintf(why, why_len,
					 "cannot derive identifiers");
			goto out;
		}
	}
	ret = nvmet_target_reload(t, &c->o, why, why_len);
out:
	nvmet_config_free(c);
	free(c);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The target core (the kernel's drivers/nvme/target/core.c): requests from
 * init to completion, controllers (creation, lookup, the CC/CSTS state
 * machine, keep-alive, asynchronous events, fatal errors), and the target
 * object behind nvmet.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdmarw/ib_verbs.h>

#include "nvmet_int.h"

bool nvmet_verbose;

/* ---- requests --------------------------------------------------------------- */

static void nvmet_update_sq_head(struct nvmet_req *req)
{
	struct nvmet_sq *sq = req->sq;
	u32 old, new;

	old = __atomic_load_n(&sq->sqhd, __ATOMIC_RELAXED);
	do {
		/* (old + 1) % size without a division; size 0: 0 */
		new = old + 1 >= sq->size ? 0 : old + 1;
	} while (!__atomic_compare_exchange_n(&sq->sqhd, &old, new, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	req->cqe->sq_head = cpu_to_le16((u16) new);
}

/*
 * Complete @req with @status: fill in the CQE and hand it to the transport,
 * which sends it (after the data, for a successful read) and releases the
 * request.
 */
void nvmet_req_complete(struct nvmet_req *req, u16 status)
{
	struct nvmet_target *t = req->port->tgt;

	if (!req->sq->sqhd_disabled)
		nvmet_update_sq_head(req);
	else
		req->cqe->sq_head = 0;
	req->cqe->sq_id = cpu_to_le16(req->sq->qid);
	req->cqe->command_id = req->cmd->common.command_id;
	if (status) {
		nvmet_stat_add(t->errors, 1);
		req->data_to_host = false;
		if (req->sq->ctrl)
			__atomic_fetch_add(&req->sq->ctrl->err_counter, 1,
					   __ATOMIC_RELAXED);
		nvmet_log("q%u cid %u opcode %#x: status %#x", req->sq->qid,
			  req->cmd->common.command_id, req->cmd->common.opcode,
			  status);
	}
	req->cqe->status = cpu_to_le16((u16)(status << 1));
	nvmet_stats_req_done(req, status);
	req->ops->queue_response(req);
}

void nvmet_set_result(struct nvmet_req *req, u32 result)
{
	req->cqe->result.u32 = cpu_to_le32(result);
}

/*
 * Parse a command that arrived on @sq.  On a parse error the request is
 * completed with the error here (the transport then releases it) and false
 * is returned; on success the transport moves the data and calls
 * req->execute.
 */
bool nvmet_req_init(struct nvmet_req *req, struct nvmet_cq *cq,
		    struct nvmet_sq *sq, const struct nvmet_fabrics_ops *ops)
{
	u8 flags = req->cmd->common.flags;
	u16 status;

	req->cq = cq;
	req->sq = sq;
	req->ops = ops;
	req->ns = NULL;
	req->ns_users = NULL;
	req->execute = NULL;
	req->transfer_len = 0;
	req->error_loc = 0xffff;
	req->data_to_host = false;
	req->fatal_after_send = false;
	memset(req->cqe, 0, sizeof(*req->cqe));
	nvmet_qstat_add(sq->count.cmds, 1);

	/* no support for fused commands yet */
	if (unlikely(flags & (NVME_CMD_FUSE_FIRST | NVME_CMD_FUSE_SECOND))) {
		req->error_loc = offsetof(struct nvme_common_command, flags);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		goto fail;
	}
	/* fabrics carry SGLs only, with the metadata in one buffer */
	if (unlikely((flags & NVME_CMD_SGL_ALL) != NVME_CMD_SGL_METABUF)) {
		req->error_loc = offsetof(struct nvme_common_command, flags);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		goto fail;
	}
	if (unlikely(!sq->ctrl))
		status = nvmet_parse_connect_cmd(req);
	else if (sq->qid == 0)
		status = nvmet_parse_admin_cmd(req);
	else
		status = nvmet_parse_io_cmd(req);
	if (status)
		goto fail;
	/* a store only when keep-alive cleared it: the line stays shared */
	if (sq->ctrl && !READ_ONCE(sq->ctrl->reset_tbkas))
		WRITE_ONCE(sq->ctrl->reset_tbkas, true);
	return true;
fail:
	nvmet_req_complete(req, status);
	return false;
}

void nvmet_req_uninit(struct nvmet_req *req)
{
	if (req->ns && req->ns_users) /* from a view: nvmet_req_find_ns() */
		__atomic_sub_fetch(req->ns_users, 1, __ATOMIC_RELEASE);
	else if (req->ns)
		nvmet_put_namespace(req->ns);
	req->ns = NULL;
	req->ns_users = NULL;
}

/* The data length the SGL gave must be exactly what the command moves. */
bool nvmet_check_transfer_len(struct nvmet_req *req, u32 len)
{
	if (unlikely(len != req->data_len)) {
		req->error_loc = offsetof(struct nvme_common_command, dptr);
		nvmet_req_complete(req, NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
		return false;
	}
	req->transfer_len = len;
	return true;
}

/*
 * ... or at least it: the command uses @len bytes and the SGL may describe
 * more (the kernel's nvmet_check_data_len_lte()).  Dataset Management needs
 * this: the Linux host always sends a page of ranges (NVME_DSM_MAX_RANGES
 * of them) whatever the number of ranges says.  Only @len bytes are used;
 * the transport has bounded the SGL (MDTS, the in-capsule size).
 */
bool nvmet_check_data_len_lte(struct nvmet_req *req, u32 len)
{
	if (unlikely(len > req->data_len)) {
		req->error_loc = offsetof(struct nvme_common_command, dptr);
		nvmet_req_complete(req, NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR);
		return false;
	}
	req->transfer_len = len;
	return true;
}

u16 nvmet_copy_to_req(struct nvmet_req *req, u32 off, const void *buf, u32 len)
{
	if (off > req->data_len || len > req->data_len - off || !req->buf)
		return len ? NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR : 0;
	memcpy((char *)req->buf + off, buf, len);
	req->data_to_host = true;
	return 0;
}

u16 nvmet_copy_from_req(struct nvmet_req *req, u32 off, void *buf, u32 len)
{
	if (off > req->data_len || len > req->data_len - off || !req->buf)
		return len ? NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR : 0;
	memcpy(buf, (char *)req->buf + off, len);
	return 0;
}

u16 nvmet_zero_req(struct nvmet_req *req, u32 off, u32 len)
{
	if (off > req->data_len || len > req->data_len - off || !req->buf)
		return len ? NVME_SC_SGL_INVALID_DATA | NVME_SC_DNR : 0;
	memset((char *)req->buf + off, 0, len);
	req->data_to_host = true;
	return 0;
}

u8 nvmet_ctrl_mdts(const struct nvmet_ctrl *ctrl)
{
	return ctrl->ops->get_mdts(ctrl);
}

/* The most bytes one command may move on this request's controller. */
u32 nvmet_max_data_len(struct nvmet_req *req)
{
	u8 mdts = req->sq->ctrl ? nvmet_ctrl_mdts(req->sq->ctrl) :
				  req->port->mdts_max;

	return (u32)PAGE_SIZE << mdts;
}

/* ---- namespaces ---------------------------------------------------------------- */

/*
 * The namespace @nsid of @subsys, referenced (NULL: none active).  The
 * reference keeps it and its backend open until nvmet_put_namespace(),
 * also when a reload removes it meanwhile.
 */
struct nvmet_ns *nvmet_find_get_ns(struct nvmet_subsys *subsys, u32 nsid)
{
	struct nvmet_ns *ns;

	if (!nsid || nsid > NVMET_MAX_NAMESPACES)
		return NULL;
	spin_lock(&subsys->ns_lock);
	ns = subsys->ns[nsid - 1];
	if (ns)
		__atomic_fetch_add(&ns->ref, 1, __ATOMIC_RELAXED);
	spin_unlock(&subsys->ns_lock);
	return ns;
}

void nvmet_put_namespace(struct nvmet_ns *ns)
{
	if (__atomic_sub_fetch(&ns->ref, 1, __ATOMIC_ACQ_REL) == 0)
		complete(&ns->released);
}

/*
 * The lookup of a command's namespace (the kernel's nvmet_req_find_ns():
 * an xarray read under RCU and a percpu_ref get).  No store shared by two
 * queues: the command reads its queue's current view (struct
 * nvmet_ns_cache) and counts itself in that view's @users, a line of its
 * own queue's.  It counts itself first, then checks that the view was read
 * at the subsystem's current generation (both sequentially consistent):
 * a removal moves the generation first and then reads @users
 * (nvmet_subsys_ns_sync()), so either the removal sees this user and
 * waits for it, or this command sees the new generation and does not use
 * the view.  The view's generation is read again after its slot (a
 * seqlock's check): a view being filled again reads 0 or a newer one.
 */
static struct nvmet_ns_view *nvmet_ns_view_get(struct nvmet_sq *sq,
					       struct nvmet_subsys *subsys)
{
	struct nvmet_ns_cache *c = &sq->nsc;
	struct nvmet_ns_view *v;
	u64 gen;

	v = &c->view[__atomic_load_n(&c->cur, __ATOMIC_RELAXED) & 1];
	__atomic_add_fetch(&v->users, 1, __ATOMIC_SEQ_CST);
	gen = __atomic_load_n(&subsys->ns_gen, __ATOMIC_SEQ_CST);
	if (likely(__atomic_load_n(&v->gen, __ATOMIC_ACQUIRE) == gen))
		return v;
	__atomic_sub_fetch(&v->users, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Fill the view that is not current with @subsys's slots and make it
 * current, if no request uses it any more (ns_lock held: one filler at a
 * time).  Readers that took it before see generation 0 while it changes.
 */
static void nvmet_ns_view_fill(struct nvmet_sq *sq, struct nvmet_subsys *subsys)
{
	struct nvmet_ns_cache *c = &sq->nsc;
	u32 next = (__atomic_load_n(&c->cur, __ATOMIC_RELAXED) + 1) & 1;
	struct nvmet_ns_view *v = &c->view[next];
	u32 k;

	if (!c->subsys) {
		c->subsys = subsys;
		list_add_tail(&c->entry, &subsys->ns_caches);
	}
	if (__atomic_load_n(&v->users, __ATOMIC_SEQ_CST))
		return; /* its requests still run: next time */
	__atomic_store_n(&v->gen, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (k = 0; k < NVMET_MAX_NAMESPACES; k++)
		__atomic_store_n(&v->ns[k], subsys->ns[k], __ATOMIC_RELAXED);
	__atomic_store_n(&v->gen,
			 __atomic_load_n(&subsys->ns_gen, __ATOMIC_RELAXED),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&c->cur, next, __ATOMIC_RELAXED);
}

/* @nsid's namespace in view @v (counted there), or NULL: try elsewhere. */
static struct nvmet_ns *nvmet_ns_view_find(struct nvmet_ns_view *v, u32 nsid)
{
	struct nvmet_ns *ns;
	u64 gen = __atomic_load_n(&v->gen, __ATOMIC_RELAXED);

	ns = __atomic_load_n(&v->ns[nsid - 1], __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (unlikely(__atomic_load_n(&v->gen, __ATOMIC_RELAXED) != gen))
		return NULL;
	return ns;
}

/*
 * Find @nsid for @req: from its queue's view when one is ready (then
 * @req->ns_users counts it); otherwise, and for an NSID the view has no
 * namespace for, under the lock with a reference, filling the other view
 * for the next commands on the way.
 */
u16 nvmet_req_find_ns(struct nvmet_req *req)
{
	u32 nsid = le32_to_cpu(req->cmd->common.nsid);
	struct nvmet_subsys *subsys = req->sq->ctrl->subsys;
	struct nvmet_ns_view *v;

	req->ns_users = NULL;
	req->ns = NULL;
	if (unlikely(!nsid || nsid > NVMET_MAX_NAMESPACES))
		goto invalid;
	v = nvmet_ns_view_get(req->sq, subsys);
	if (likely(v)) {
		req->ns = nvmet_ns_view_find(v, nsid);
		if (likely(req->ns)) {
			req->ns_users = &v->users;
			return 0;
		}
		__atomic_sub_fetch(&v->users, 1, __ATOMIC_RELEASE);
	} else {
		spin_lock(&subsys->ns_lock);
		nvmet_ns_view_fill(req->sq, subsys);
		spin_unlock(&subsys->ns_lock);
	}
	req->ns = nvmet_find_get_ns(subsys, nsid);
	if (likely(req->ns))
		return 0;
invalid:
	req->error_loc = offsetof(struct nvme_common_command, nsid);
	return NVME_SC_INVALID_NS | NVME_SC_DNR;
}

/*
 * nvmet_subsys_ns_sync() - wait until no queue of @subsys uses a view of
 * its namespaces older than the current generation (a grace period: call
 * it after a change of the slots, before freeing what left them).  A
 * queue whose views are idle passes at once; one that runs commands moves
 * to a new view at its next command, and its old view's users end.
 * Bounded: -ETIMEDOUT after @ms (a request that never ends), 0 otherwise.
 */
int nvmet_subsys_ns_sync(struct nvmet_subsys *subsys, unsigned int ms)
{
	u64 gen = __atomic_load_n(&subsys->ns_gen, __ATOMIC_SEQ_CST);
	struct timespec ts = { 0, 200 * 1000 };
	struct nvmet_ns_cache *c;
	unsigned int waited_us = 0;
	bool busy;
	int i;

	for (;;) {
		busy = false;
		spin_lock(&subsys->ns_lock);
		list_for_each_entry(c, &subsys->ns_caches, entry)
		{
			for (i = 0; i < 2 && !busy; i++)
				busy = __atomic_load_n(&c->view[i].users,
						       __ATOMIC_SEQ_CST) &&
				       __atomic_load_n(&c->view[i].gen,
						       __ATOMIC_ACQUIRE) < gen;
			if (busy)
				break;
		}
		spin_unlock(&subsys->ns_lock);
		if (!busy)
			return 0;
		if (waited_us / 1000 >= ms)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
		waited_us += 200;
	}
}

/* Add @nsid to @ctrl's Changed Namespace List (ctrl->lock held). */
static void nvmet_add_to_changed_ns_log(struct nvmet_ctrl *ctrl, u32 nsid)
{
	u32 i;

	if (ctrl->nr_changed_ns == NVMET_CHANGED_NS_OVERFLOW)
		return;
	for (i = 0; i < ctrl->nr_changed_ns; i++)
		if (ctrl->changed_ns[i] == nsid)
			return;
	if (ctrl->nr_changed_ns == ARRAY_SIZE(ctrl->changed_ns)) {
		ctrl->nr_changed_ns = NVMET_CHANGED_NS_OVERFLOW;
		return;
	}
	ctrl->changed_ns[ctrl->nr_changed_ns++] = nsid;
}

/*
 * Namespace @nsid of @subsys was added, removed or changed (the kernel's
 * nvmet_ns_changed()): every controller of @subsys lists it in its
 * Changed Namespace List log; those that enabled the notice get a
 * Namespace Attribute Changed event, one until the host reads the log.
 */
void nvmet_subsys_ns_changed(struct nvmet_subsys *subsys, u32 nsid)
{
	struct nvmet_ctrl *ctrl;
	bool send;

	mutex_lock(&subsys->lock);
	list_for_each_entry(ctrl, &subsys->ctrls, subsys_entry)
	{
		mutex_lock(&ctrl->lock);
		nvmet_add_to_changed_ns_log(ctrl, nsid);
		send = (READ_ONCE(ctrl->aen_enabled) & NVME_AEN_CFG_NS_ATTR) &&
		       !(ctrl->aen_masked & NVME_AEN_CFG_NS_ATTR);
		if (send)
			ctrl->aen_masked |= NVME_AEN_CFG_NS_ATTR;
		mutex_unlock(&ctrl->lock);
		if (send)
			nvmet_add_async_event(ctrl, NVME_AER_TYPE_NOTICE,
					      NVME_AER_NOTICE_NS_CHANGED,
					      NVME_LOG_CHANGED_NS);
	}
	mutex_unlock(&subsys->lock);
}

bool nvmet_subsys_is_disc(const struct nvmet_subsys *s)
{
	return s->type == NVMET_SUBSYS_DISC;
}

/*
 * May @hostnqn connect to @subsys (the kernel's nvmet_host_allowed())?
 * Any host reaches the discovery subsystem; an NVM subsystem admits the
 * hosts it lists, or every host when it allows any.
 */
bool nvmet_host_allowed(const struct nvmet_subsys *subsys, const char *hostnqn)
{
	u32 i;

	if (subsys->allow_any_host || nvmet_subsys_is_disc(subsys))
		return true;
	for (i = 0; i < subsys->nr_hosts; i++)
		if (!strncmp(subsys->hosts[i], hostnqn, NVMF_NQN_FIELD_LEN))
			return true;
	return false;
}

/* A Connect from a host @subsys does not admit: Connect Invalid Host. */
static u16 nvmet_host_refused(struct nvmet_req *req,
			      const struct nvmet_subsys *subsys,
			      const char *hostnqn)
{
	nvmet_err("connect by host %.223s for subsystem %.223s not allowed",
		  hostnqn, subsys->subsysnqn);
	nvmet_set_result(req, IPO_IATTR_CONNECT_DATA(offsetof(
				      struct nvmf_connect_data, hostnqn)));
	req->error_loc = offsetof(struct nvme_common_command, dptr);
	return NVME_SC_CONNECT_INVALID_HOST | NVME_SC_DNR;
}

/* ---- queues --------------------------------------------------------------------- */

void nvmet_sq_init(struct nvmet_sq *sq)
{
	memset(sq, 0, sizeof(*sq));
	INIT_LIST_HEAD(&sq->count.entry);
}

void nvmet_cq_setup(struct nvmet_ctrl *ctrl, struct nvmet_cq *cq, u16 qid,
		    u16 size)
{
	cq->qid = qid;
	cq->size = size;
}

/* Bind @sq to @ctrl (whose reference it takes over). */
void nvmet_sq_setup(struct nvmet_ctrl *ctrl, struct nvmet_sq *sq, u16 qid,
		    u16 size)
{
	sq->sqhd = 0;
	sq->qid = qid;
	sq->size = size;
	mutex_lock(&ctrl->lock);
	ctrl->sqs[qid] = sq;
	mutex_unlock(&ctrl->lock);
	WRITE_ONCE(sq->ctrl, ctrl); /* the transport's delete_ctrl reads it */
}

/*
 * The transport has released every request of @sq: unbind it and drop
 * its controller reference.  The admin queue going away takes the
 * controller down with it: its I/O queues are disconnected.
 */
void nvmet_sq_destroy(struct nvmet_sq *sq)
{
	struct nvmet_ctrl *ctrl = sq->ctrl;

	sq->dead = true;
	nvmet_auth_sq_free(sq);
	if (sq->nsc.subsys) { /* every request is released: no users */
		spin_lock(&sq->nsc.subsys->ns_lock);
		list_del(&sq->nsc.entry);
		spin_unlock(&sq->nsc.subsys->ns_lock);
		sq->nsc.subsys = NULL;
	}
	if (!ctrl)
		return;
	if (sq->qid == 0) {
		nvmet_async_events_failall(ctrl);
		nvmet_ctrl_fatal_error(ctrl);
	}
	/* its counters move to the sums as it leaves the table (stats.c) */
	mutex_lock(&ctrl->subsys->lock);
	mutex_lock(&ctrl->lock);
	nvmet_stats_sq_retire(sq);
	if (ctrl->sqs[sq->qid] == sq)
		ctrl->sqs[sq->qid] = NULL;
	mutex_unlock(&ctrl->lock);
	mutex_unlock(&ctrl->subsys->lock);
	WRITE_ONCE(sq->ctrl, NULL);
	nvmet_ctrl_put(ctrl);
}

/* ---- asynchronous events --------------------------------------------------------- */

static void nvmet_async_event_work(struct work_struct *work)
{
	struct nvmet_ctrl *ctrl =
		container_of(work, struct nvmet_ctrl, async_event_work);
	struct nvmet_async_event *aen;
	struct nvmet_req *req;

	for (;;) {
		mutex_lock(&ctrl->lock);
		if (list_empty(&ctrl->async_events) ||
		    !ctrl->nr_async_event_cmds) {
			mutex_unlock(&ctrl->lock);
			return;
		}
		aen = list_first_entry(&ctrl->async_events,
				       struct nvmet_async_event, entry);
		req = ctrl->async_event_cmds[--ctrl->nr_async_event_cmds];
		nvmet_set_result(req, (u32)aen->event_type |
					      (u32)aen->event_info << 8 |
					      (u32)aen->log_page << 16);
		list_del(&aen->entry);
		free(aen);
		mutex_unlock(&ctrl->lock);
		nvmet_req_complete(req, 0);
	}
}

void nvmet_add_async_event(struct nvmet_ctrl *ctrl, u8 event_type,
			   u8 event_info, u8 log_page)
{
	struct nvmet_async_event *aen = calloc(1, sizeof(*aen));

	if (!aen)
		return;
	aen->event_type = event_type;
	aen->event_info = event_info;
	aen->log_page = log_page;
	mutex_lock(&ctrl->lock);
	if (ctrl->fatal) {
		mutex_unlock(&ctrl->lock);
		free(aen);
		return;
	}
	list_add_tail(&aen->entry, &ctrl->async_events);
	mutex_unlock(&ctrl->lock);
	queue_work(ctrl->subsys->tgt->wq, &ctrl->async_event_work);
}

/* Fail every held AER (the controller is going away). */
void nvmet_async_events_failall(struct nvmet_ctrl *ctrl)
{
	struct nvmet_req *req;

	mutex_lock(&ctrl->lock);
	while (ctrl->nr_async_event_cmds) {
		req = ctrl->async_event_cmds[--ctrl->nr_async_event_cmds];
		mutex_unlock(&ctrl->lock);
		nvmet_req_complete(req, NVME_SC_INTERNAL | NVME_SC_DNR);
		mutex_lock(&ctrl->lock);
	}
	mutex_unlock(&ctrl->lock);
}

static void nvmet_async_events_free(struct nvmet_ctrl *ctrl)
{
	struct nvmet_async_event *aen, *tmp;

	mutex_lock(&ctrl->lock);
	list_for_each_entry_safe(aen, tmp, &ctrl->async_events, entry) {
		list_del(&aen->entry);
		free(aen);
	}
	mutex_unlock(&ctrl->lock);
}

void nvmet_execute_async_event(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;

	if (!nvmet_check_transfer_len(req, 0))
		return;
	mutex_lock(&ctrl->lock);
	if (ctrl->nr_async_event_cmds >= NVMET_ASYNC_EVENTS || ctrl->fatal) {
		bool fatal = ctrl->fatal;

		mutex_unlock(&ctrl->lock);
		nvmet_req_complete(req,
				   fatal ? NVME_SC_INTERNAL | NVME_SC_DNR :
					   NVME_SC_ASYNC_LIMIT | NVME_SC_DNR);
		return;
	}
	ctrl->async_event_cmds[ctrl->nr_async_event_cmds++] = req;
	mutex_unlock(&ctrl->lock);
	queue_work(ctrl->subsys->tgt->wq, &ctrl->async_event_work);
}

/* ---- keep alive -------------------------------------------------------------------- */

static unsigned long nvmet_kato_delay(struct nvmet_ctrl *ctrl)
{
	return (unsigned long)ctrl->kato * 1000 +
	       ctrl->subsys->tgt->opts.kato_grace_ms;
}

static void nvmet_keep_alive_timer(struct work_struct *work)
{
	struct delayed_work *dw = to_delayed_work(work);
	struct nvmet_ctrl *ctrl = container_of(dw, struct nvmet_ctrl, ka_work);
	bool reset_tbkas = READ_ONCE(ctrl->reset_tbkas);

	WRITE_ONCE(ctrl->reset_tbkas, false);
	if (READ_ONCE(ctrl->freeing))
		return;
	if (reset_tbkas) {
		queue_delayed_work(ctrl->subsys->tgt->wq, &ctrl->ka_work,
				   nvmet_kato_delay(ctrl));
		return;
	}
	nvmet_err("controller %u: keep-alive timer (%u s) expired",
		  ctrl->cntlid, ctrl->kato);
	nvmet_stat_add(ctrl->subsys->tgt->kato_expired, 1);
	nvmet_stat_add(ctrl->subsys->kato_expired, 1);
	nvmet_ctrl_fatal_error(ctrl);
}

void nvmet_start_keep_alive_timer(struct nvmet_ctrl *ctrl)
{
	if (!ctrl->kato)
		return;
	queue_delayed_work(ctrl->subsys->tgt->wq, &ctrl->ka_work,
			   nvmet_kato_delay(ctrl));
}

void nvmet_stop_keep_alive_timer(struct nvmet_ctrl *ctrl)
{
	cancel_delayed_work_sync(&ctrl->ka_work);
}

u16 nvmet_set_feat_kato(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	u32 val32 = le32_to_cpu(req->cmd->common.cdw11);

	nvmet_stop_keep_alive_timer(ctrl);
	ctrl->kato = DIV_ROUND_UP(val32, 1000);
	nvmet_start_keep_alive_timer(ctrl);
	nvmet_set_result(req, ctrl->kato);
	return 0;
}

void nvmet_get_feat_kato(struct nvmet_req *req)
{
	nvmet_set_result(req, req->sq->ctrl->kato * 1000);
}

u16 nvmet_set_feat_async_event(struct nvmet_req *req, u32 mask)
{
	u32 val32 = le32_to_cpu(req->cmd->common.cdw11);

	if (val32 & ~mask) {
		req->error_loc = offsetof(struct nvme_common_command, cdw11);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	WRITE_ONCE(req->sq->ctrl->aen_enabled, val32);
	nvmet_set_result(req, val32);
	return 0;
}

void nvmet_get_feat_async_event(struct nvmet_req *req)
{
	nvmet_set_result(req, READ_ONCE(req->sq->ctrl->aen_enabled));
}

/* ---- controller state -------------------------------------------------------------- */

static bool nvmet_css_supported(struct nvmet_ctrl *ctrl, u32 cc)
{
	switch (cc & NVME_CC_CSS_MASK) {
	case NVME_CC_CSS_NVM:
		return true;
	case NVME_CC_CSS_CSI:
		return ctrl->cap & NVME_CAP_CSS_CSI;
	default:
		return false;
	}
}

/* CC.EN 0 -> 1: check the queue entry sizes and page size, then RDY. */
static void nvmet_start_ctrl(struct nvmet_ctrl *ctrl)
{
	u32 cc = ctrl->cc;

	if (NVME_CC_IOSQES(cc) != NVME_NVM_IOSQES ||
	    NVME_CC_IOCQES(cc) != NVME_NVM_IOCQES ||
	    ((cc & NVME_CC_MPS_MASK) >> NVME_CC_MPS_SHIFT) != 0 ||
	    (cc & NVME_CC_AMS_MASK) || !nvmet_css_supported(ctrl, cc)) {
		WRITE_ONCE(ctrl->csts, NVME_CSTS_CFS);
		return;
	}
	WRITE_ONCE(ctrl->csts, NVME_CSTS_RDY);
	if (ctrl->kato)
		mod_delayed_work(ctrl->subsys->tgt->wq, &ctrl->ka_work,
				 nvmet_kato_delay(ctrl));
}

static void nvmet_clear_ctrl(struct nvmet_ctrl *ctrl)
{
	WRITE_ONCE(ctrl->csts, ctrl->csts & ~(u32)NVME_CSTS_RDY);
	WRITE_ONCE(ctrl->cc, 0);
}

/* Property Set CC (ctrl->lock held by the caller). */
void nvmet_update_cc(struct nvmet_ctrl *ctrl, u32 new)
{
	u32 old = ctrl->cc;

	WRITE_ONCE(ctrl->cc, new);
	if ((new &NVME_CC_ENABLE) && !(old & NVME_CC_ENABLE))
		nvmet_start_ctrl(ctrl);
	if (!(new &NVME_CC_ENABLE) && (old & NVME_CC_ENABLE))
		nvmet_clear_ctrl(ctrl);
	if ((new &NVME_CC_SHN_MASK) && !(old & NVME_CC_SHN_MASK)) {
		nvmet_clear_ctrl(ctrl);
		WRITE_ONCE(ctrl->csts, ctrl->csts | NVME_CSTS_SHST_CMPLT);
	}
	if (!(new &NVME_CC_SHN_MASK) && (old & NVME_CC_SHN_MASK))
		WRITE_ONCE(ctrl->csts, ctrl->csts & ~(u32)NVME_CSTS_SHST_CMPLT);
}

/*
 * Commands other than the fabrics ones need an enabled, ready controller.
 * Read without ctrl->lock, as the kernel's nvmet_check_ctrl_status(): a
 * lock per command would be one line written by every queue of the
 * controller.  The writers hold the lock and store each word once, so a
 * command sees a state the controller was in (CC.EN is cleared before
 * CSTS.RDY, and set before it: never RDY with EN clear on the way up).
 */
u16 nvmet_check_ctrl_status(struct nvmet_req *req)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	u32 cc = READ_ONCE(ctrl->cc), csts = READ_ONCE(ctrl->csts);

	if (unlikely(!(cc & NVME_CC_ENABLE) || !(csts & NVME_CSTS_RDY)))
		return NVME_SC_CMD_SEQ_ERROR | NVME_SC_DNR;
	return 0;
}

static void nvmet_fatal_error_handler(struct work_struct *work)
{
	struct nvmet_ctrl *ctrl =
		container_of(work, struct nvmet_ctrl, fatal_err_work);

	nvmet_log("controller %u: fatal error, disconnecting", ctrl->cntlid);
	ctrl->ops->delete_ctrl(ctrl);
}

/* Tear @ctrl down: CSTS.CFS, then every queue disconnected (once). */
void nvmet_ctrl_fatal_error(struct nvmet_ctrl *ctrl)
{
	bool first;

	mutex_lock(&ctrl->lock);
	first = !ctrl->fatal;
	ctrl->fatal = true;
	WRITE_ONCE(ctrl->csts, ctrl->csts | NVME_CSTS_CFS);
	mutex_unlock(&ctrl->lock);
	/*
	 * A reference for the work, dropped when it has run; none when the
	 * controller is being freed already (keep-alive racing the release
	 * of its last queue: nothing is left to disconnect then).
	 */
	if (first && kref_get_unless_zero(&ctrl->ref)) {
		if (!queue_work(ctrl->subsys->tgt->wq, &ctrl->fatal_err_work))
			nvmet_ctrl_put(ctrl);
	}
}

/* ---- controllers ------------------------------------------------------------------- */

/*
 * The subsystem @nqn names among those reached through @port (the
 * kernel's nvmet_find_get_subsys()): the discovery subsystem on any port.
 * The caller holds tgt->lock (a reload changes the links).
 */
static struct nvmet_subsys *nvmet_find_subsys(struct nvmet_port *port,
					      const char *nqn)
{
	struct nvmet_target *t = port->tgt;
	u32 i;

	if (!strncmp(nqn, t->disc->subsysnqn, NVMF_NQN_FIELD_LEN))
		return t->disc;
	for (i = 0; i < port->nr_subsys; i++)
		if (!strncmp(nqn, port->subsys[i]->subsysnqn,
			     NVMF_NQN_FIELD_LEN))
			return port->subsys[i];
	return NULL;
}

static void nvmet_fatal_work_done(struct work_struct *work);

/*
 * A controller of the subsystem the admin queue's Connect data @d names,
 * for its host (the kernel's nvmet_alloc_ctrl()): the subsystem must be
 * reached through the request's port and admit the host.
 */
u16 nvmet_alloc_ctrl(struct nvmet_target *t, const struct nvmf_connect_data *d,
		     struct nvmet_req *req, u32 kato, struct nvmet_ctrl **ctrlp)
{
	const char *hostnqn = d->hostnqn;
	struct nvmet_subsys *subsys;
	struct nvmet_ctrl *ctrl;
	u16 cntlid;

	u16 status;

	/* a reload changes the links and hosts: held until it is listed */
	mutex_lock(&t->lock);
	subsys = nvmet_find_subsys(req->port, d->subsysnqn);
	if (!subsys) {
		mutex_unlock(&t->lock);
		nvmet_log("connect to unknown subsystem %.223s", d->subsysnqn);
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_DATA(offsetof(
					 struct nvmf_connect_data, subsysnqn)));
		return NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
	}
	if (!nvmet_host_allowed(subsys, hostnqn)) {
		status = nvmet_host_refused(req, subsys, hostnqn);
		mutex_unlock(&t->lock);
		return status;
	}
	ctrl = calloc(1, sizeof(*ctrl));
	if (!ctrl)
		goto out_nomem;
	ctrl->sqs = calloc((size_t)subsys->max_qid + 1, sizeof(*ctrl->sqs));
	if (!ctrl->sqs) {
		free(ctrl);
		goto out_nomem;
	}
	cntlid = t->next_cntlid++;
	if (t->next_cntlid > NVMET_MAX_CNTLID)
		t->next_cntlid = 1;

	ctrl->subsys = subsys;
	ctrl->port = req->port;
	ctrl->ops = req->ops;
	ctrl->cntlid = cntlid;
	ctrl->max_qid = subsys->max_qid;
	kref_init(&ctrl->ref);
	mutex_init(&ctrl->lock);
	INIT_LIST_HEAD(&ctrl->async_events);
	INIT_WORK(&ctrl->async_event_work, nvmet_async_event_work);
	INIT_WORK(&ctrl->fatal_err_work, nvmet_fatal_work_done);
	INIT_DELAYED_WORK(&ctrl->ka_work, nvmet_keep_alive_timer);
	nvmet_copy_nul(ctrl->hostnqn, sizeof(ctrl->hostnqn), hostnqn);
	memcpy(ctrl->hostid, d->hostid, sizeof(ctrl->hostid));
	/*
	 * A host with a key authenticates on every NVM subsystem, also one
	 * that allows any host (the kernel's skips it there: a downgrade).
	 */
	if (!nvmet_subsys_is_disc(subsys))
		ctrl->host_auth = nvmet_auth_host_find(t, hostnqn);
	/* as nvmet: the Linux host then writes CC.CSS 110b, discovery too */
	ctrl->cap = NVME_CAP_CSS_NVM | NVME_CAP_CSS_CSI |
		    (15ULL << NVME_CAP_TIMEOUT_SHIFT) |
		    (u64)(req->port->max_queue_size - 1);
	/* the discovery controller has no keep-alive of its own: 2 min */
	if (nvmet_subsys_is_disc(subsys) && !kato)
		kato = NVMET_DISC_KATO_MS;
	ctrl->kato = DIV_ROUND_UP(kato, 1000);

	kref_get(&subsys->ref);
	mutex_lock(&subsys->lock);
	list_add_tail(&ctrl->subsys_entry, &subsys->ctrls);
	mutex_unlock(&subsys->lock);
	mutex_unlock(&t->lock);
	nvmet_stat_add(t->ctrls, 1);
	nvmet_stat_add(t->ctrls_created, 1);
	nvmet_start_keep_alive_timer(ctrl);
	*ctrlp = ctrl;
	return 0;

out_nomem:
	mutex_unlock(&t->lock);
	return NVME_SC_INTERNAL;
}

static void nvmet_fatal_work_done(struct work_struct *work)
{
	struct nvmet_ctrl *ctrl =
		container_of(work, struct nvmet_ctrl, fatal_err_work);

	nvmet_fatal_error_handler(work);
	nvmet_ctrl_put(ctrl);
}

/*
 * The live controller an I/O queue's Connect data @d names, referenced
 * (the kernel's nvmet_ctrl_find_get()): of the subsystem it names on the
 * request's port, which must still admit the host, with the cntlid, host
 * NQN and host ID of the admin queue's Connect, and not being torn down.
 * Another host cannot join a controller by naming its cntlid.
 */
u16 nvmet_ctrl_find_get(struct nvmet_target *t,
			const struct nvmf_connect_data *d,
			struct nvmet_req *req, struct nvmet_ctrl **ret)
{
	u16 cntlid = le16_to_cpu(d->cntlid);
	struct nvmet_ctrl *ctrl, *found = NULL;
	struct nvmet_subsys *subsys;
	bool other_hostid = false;
	u16 status;

	mutex_lock(&t->lock);
	subsys = nvmet_find_subsys(req->port, d->subsysnqn);
	if (!subsys) {
		mutex_unlock(&t->lock);
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_DATA(offsetof(
					 struct nvmf_connect_data, subsysnqn)));
		return NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
	}
	if (!nvmet_host_allowed(subsys, d->hostnqn)) {
		status = nvmet_host_refused(req, subsys, d->hostnqn);
		mutex_unlock(&t->lock);
		return status;
	}
	mutex_lock(&subsys->lock);
	list_for_each_entry(ctrl, &subsys->ctrls, subsys_entry)
	{
		/* through the admin queue's port: its teardown finds them */
		if (ctrl->cntlid != cntlid || ctrl->port != req->port ||
		    strncmp(d->hostnqn, ctrl->hostnqn, NVMF_NQN_FIELD_LEN))
			continue;
		if (memcmp(d->hostid, ctrl->hostid, sizeof(ctrl->hostid))) {
			other_hostid = true;
			continue;
		}
		if (!READ_ONCE(ctrl->fatal) && kref_get_unless_zero(&ctrl->ref))
			found = ctrl;
		break;
	}
	mutex_unlock(&subsys->lock);
	mutex_unlock(&t->lock);
	if (found) {
		*ret = found;
		return 0;
	}
	if (other_hostid) {
		nvmet_err(
			"controller %u: I/O queue connect with another host ID",
			cntlid);
		nvmet_set_result(req,
				 IPO_IATTR_CONNECT_DATA(offsetof(
					 struct nvmf_connect_data, hostid)));
		return NVME_SC_CONNECT_INVALID_HOST | NVME_SC_DNR;
	}
	nvmet_log("no controller %u for host %.223s", cntlid, d->hostnqn);
	nvmet_set_result(req, IPO_IATTR_CONNECT_DATA(offsetof(
				      struct nvmf_connect_data, cntlid)));
	return NVME_SC_CONNECT_INVALID_PARAM | NVME_SC_DNR;
}

static void nvmet_ctrl_free(struct kref *ref)
{
	struct nvmet_ctrl *ctrl = container_of(ref, struct nvmet_ctrl, ref);
	struct nvmet_subsys *subsys = ctrl->subsys;
	struct nvmet_target *t = subsys->tgt;

	mutex_lock(&subsys->lock);
	list_del(&ctrl->subsys_entry);
	nvmet_stats_ctrl_retire(ctrl);
	mutex_unlock(&subsys->lock);
	WRITE_ONCE(ctrl->freeing, true);
	/* twice: a timer run that missed the flag may have re-armed */
	nvmet_stop_keep_alive_timer(ctrl);
	nvmet_stop_keep_alive_timer(ctrl);
	cancel_work_sync(&ctrl->async_event_work);
	/* the fatal work holds a reference: it is not pending here */
	nvmet_async_events_free(ctrl);
	nvmet_log("controller %u freed", ctrl->cntlid);
	mutex_destroy(&ctrl->lock);
	free(ctrl->sqs);
	free(ctrl);
	/* a subsystem a reload removed goes with its last controller */
	nvmet_subsys_put(subsys);
	nvmet_stat_add(t->ctrls, (u64)-1);
}

void nvmet_ctrl_put(struct nvmet_ctrl *ctrl)
{
	kref_put(&ctrl->ref, nvmet_ctrl_free);
}

/* ---- transports and ports ------------------------------------------------------- */

/* The registry: see nvmet_rdma_ops in nvmet_int.h. */
static const struct nvmet_fabrics_ops *const nvmet_transports[] = {
	&nvmet_rdma_ops,
};

static const struct nvmet_fabrics_ops *nvmet_find_transport(u8 trtype)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nvmet_transports); i++)
		if (nvmet_transports[i]->type == trtype)
			return nvmet_transports[i];
	return NULL;
}

/* Start listening on @port with the transport its trtype names. */
int nvmet_enable_port(struct nvmet_port *port)
{
	const struct nvmet_fabrics_ops *ops =
		nvmet_find_transport(port->trtype);
	int ret;

	if (!ops) {
		nvmet_err("transport type %u is not built in", port->trtype);
		return -EPROTONOSUPPORT;
	}
	ret = ops->add_port(port);
	if (ret)
		return ret;
	port->tr_ops = ops;
	return 0;
}

/*
 * Stop @port: no new queue, its queues disconnected and released; -EBUSY
 * when some were not (the port must then stay allocated).
 */
int nvmet_disable_port(struct nvmet_port *port)
{
	int ret;

	if (!port->tr_ops)
		return 0;
	ret = port->tr_ops->remove_port(port);
	if (!ret)
		port->tr_ops = NULL;
	return ret;
}

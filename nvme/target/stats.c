// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Live counters of a running target: per queue (and per namespace of the
 * queue), summed per controller, namespace and subsystem when read; a
 * summary line per object for the log (SIGUSR1) and a JSON document for
 * a monitoring agent (--stats-file), whose field names follow SPDK's
 * bdev_get_iostat and nvmf_get_stats where they mean the same
 * (docs/nvmet-operations.md).
 *
 * Writers: the threads that complete a queue's requests, each adding to
 * that queue's counters only (relaxed atomic adds: no cache line is shared
 * between queues on the data path).  A command counts once, on one line of
 * its queue (nvmet_req_stats()): an I/O command that found its namespace
 * on the queue's line of that namespace, any other on the queue's own; the
 * queue's figures are the sum of its lines (nvmet_sq_stats()).  A queue going away folds its
 * counters into its controller's and its subsystem's "retired" sums in
 * the same critical section that unlists it, and a controller's into its
 * subsystem's likewise, so a reader holding the locks counts every
 * completed command once.  Readers hold tgt->lock, subsys->lock and
 * ctrl->lock (that order) and load each counter relaxed: every number is
 * one the counter had, the set of them a snapshot up to the commands
 * completing meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "nvmet_int.h"

static const char *const nvmet_sst_names[NVMET_SST_NR] = {
	[NVMET_SST_INVALID_OPCODE] = "invalid_opcode",
	[NVMET_SST_INVALID_FIELD] = "invalid_field",
	[NVMET_SST_INTERNAL] = "internal_error",
	[NVMET_SST_INVALID_NS] = "invalid_namespace",
	[NVMET_SST_CMD_SEQ_ERROR] = "command_sequence_error",
	[NVMET_SST_SGL_INVALID] = "sgl_invalid",
	[NVMET_SST_NS_WRITE_PROTECTED] = "namespace_write_protected",
	[NVMET_SST_LBA_RANGE] = "lba_out_of_range",
	[NVMET_SST_CAP_EXCEEDED] = "capacity_exceeded",
	[NVMET_SST_ASYNC_LIMIT] = "async_event_limit",
	[NVMET_SST_WRITE_FAULT] = "write_fault",
	[NVMET_SST_READ_ERROR] = "read_error",
	[NVMET_SST_AUTH_REQUIRED] = "authentication_required",
	[NVMET_SST_OTHER] = "other",
};

static enum nvmet_stat_status nvmet_sst_of(u16 status)
{
	switch (status & NVME_SCT_SC_MASK) {
	case NVME_SC_INVALID_OPCODE:
		return NVMET_SST_INVALID_OPCODE;
	case NVME_SC_INVALID_FIELD:
		return NVMET_SST_INVALID_FIELD;
	case NVME_SC_INTERNAL:
		return NVMET_SST_INTERNAL;
	case NVME_SC_INVALID_NS:
		return NVMET_SST_INVALID_NS;
	case NVME_SC_CMD_SEQ_ERROR:
		return NVMET_SST_CMD_SEQ_ERROR;
	case NVME_SC_SGL_INVALID_LAST:
	case NVME_SC_SGL_INVALID_COUNT:
	case NVME_SC_SGL_INVALID_DATA:
	case NVME_SC_SGL_INVALID_METADATA:
	case NVME_SC_SGL_INVALID_TYPE:
	case NVME_SC_SGL_INVALID_OFFSET:
	case NVME_SC_SGL_INVALID_SUBTYPE:
		return NVMET_SST_SGL_INVALID;
	case NVME_SC_NS_WRITE_PROTECTED:
		return NVMET_SST_NS_WRITE_PROTECTED;
	case NVME_SC_LBA_RANGE:
		return NVMET_SST_LBA_RANGE;
	case NVME_SC_CAP_EXCEEDED:
		return NVMET_SST_CAP_EXCEEDED;
	case NVME_SC_ASYNC_LIMIT:
		return NVMET_SST_ASYNC_LIMIT;
	case NVME_SC_WRITE_FAULT:
		return NVMET_SST_WRITE_FAULT;
	case NVME_SC_READ_ERROR:
		return NVMET_SST_READ_ERROR;
	case NVME_SC_AUTH_REQUIRED:
		return NVMET_SST_AUTH_REQUIRED;
	default:
		return NVMET_SST_OTHER;
	}
}

/* Count one command of @st: what it was, what it moved, how it ended. */
static void nvmet_stats_count(struct nvmet_io_stats *st, bool admin, u8 op,
			      u32 len, u16 status)
{
	if (admin)
		nvmet_qstat_add(st->admin_ops, 1);
	else if (op == nvme_cmd_read)
		nvmet_qstat_add(st->read_ops, 1);
	else if (op == nvme_cmd_write)
		nvmet_qstat_add(st->write_ops, 1);
	else if (op == nvme_cmd_flush)
		nvmet_qstat_add(st->flush_ops, 1);
	else
		nvmet_qstat_add(st->other_ops, 1);
	if (status) {
		nvmet_qstat_add(st->errors[nvmet_sst_of(status)], 1);
		return;
	}
	if (admin)
		return;
	if (op == nvme_cmd_read)
		nvmet_qstat_add(st->bytes_read, len);
	else if (op == nvme_cmd_write)
		nvmet_qstat_add(st->bytes_written, len);
}

/*
 * @req completes with @status: counted on its line (nvmet_req_stats()).
 * Connect and the other commands before a controller exists are not
 * (they belong to no controller).
 */
void nvmet_stats_req_done(struct nvmet_req *req, u16 status)
{
	if (!READ_ONCE(req->sq->ctrl))
		return;
	nvmet_stats_count(nvmet_req_stats(req), nvmet_req_admin(req),
			  req->cmd->common.opcode, req->transfer_len, status);
}

/* @to += @from, loading @from's counters relaxed. */
void nvmet_stats_add(struct nvmet_io_stats *to,
		     const struct nvmet_io_stats *from)
{
	const u64 *f = (const u64 *)from;
	u64 *t = (u64 *)to;
	size_t i;

	for (i = 0; i < sizeof(*to) / sizeof(u64); i++)
		t[i] += __atomic_load_n(&f[i], __ATOMIC_RELAXED);
}

/* @to += @sq's figures: its own line and its lines of each namespace. */
static void nvmet_sq_stats(struct nvmet_io_stats *to, const struct nvmet_sq *sq)
{
	u32 i;

	nvmet_stats_add(to, &sq->st);
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++)
		nvmet_stats_add(to, &sq->ns_st[i]);
}

/*
 * @sq is going (no request of it is left): its counters into its
 * controller's and its subsystem's sums.  The caller holds subsys->lock
 * and ctrl->lock and unlists the queue in the same section.
 */
void nvmet_stats_sq_retire(struct nvmet_sq *sq)
{
	struct nvmet_ctrl *ctrl = sq->ctrl;
	u32 i;

	nvmet_sq_stats(&ctrl->retired, sq);
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++)
		nvmet_stats_add(&ctrl->subsys->retired_ns[i], &sq->ns_st[i]);
}

/* @ctrl is freed (subsys->lock held): its sums into its subsystem's. */
void nvmet_stats_ctrl_retire(struct nvmet_ctrl *ctrl)
{
	nvmet_stats_add(&ctrl->subsys->retired, &ctrl->retired);
}

/* ---- reading ------------------------------------------------------------------- */

/* @ctrl's counters: its queues gone and alive (ctrl->lock held). */
static void nvmet_ctrl_sum(struct nvmet_ctrl *ctrl, struct nvmet_io_stats *st,
			   struct nvmet_io_stats *ns)
{
	u32 q, i;

	memset(st, 0, sizeof(*st));
	nvmet_stats_add(st, &ctrl->retired);
	for (q = 0; q <= ctrl->max_qid; q++) {
		struct nvmet_sq *sq = ctrl->sqs[q];

		if (!sq)
			continue;
		nvmet_sq_stats(st, sq);
		for (i = 0; ns && i < NVMET_MAX_NAMESPACES; i++)
			nvmet_stats_add(&ns[i], &sq->ns_st[i]);
	}
}

/* @str as a JSON string: an NQN from the wire may hold '"' or '\\'. */
static void nvmet_json_str(FILE *f, const char *str)
{
	const unsigned char *p = (const unsigned char *)str;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void nvmet_json_counters(FILE *f, const struct nvmet_io_stats *st,
				const char *indent)
{
	u32 i;

	fprintf(f,
		"%s\"num_read_ops\": %" PRIu64 ",\n"
		"%s\"num_write_ops\": %" PRIu64 ",\n"
		"%s\"num_flush_ops\": %" PRIu64 ",\n"
		"%s\"num_other_ops\": %" PRIu64 ",\n"
		"%s\"num_admin_ops\": %" PRIu64 ",\n"
		"%s\"bytes_read\": %" PRIu64 ",\n"
		"%s\"bytes_written\": %" PRIu64 ",\n"
		"%s\"data_waits\": %" PRIu64 ",\n"
		"%s\"io_error\": {",
		indent, st->read_ops, indent, st->write_ops, indent,
		st->flush_ops, indent, st->other_ops, indent, st->admin_ops,
		indent, st->bytes_read, indent, st->bytes_written, indent,
		st->data_waits, indent);
	for (i = 0; i < NVMET_SST_NR; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : " ",
			nvmet_sst_names[i], st->errors[i]);
	fprintf(f, " }");
}

static u64 nvmet_errors_of(const struct nvmet_io_stats *st)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < NVMET_SST_NR; i++)
		n += st->errors[i];
	return n;
}

/* One line of the log summary. */
static void nvmet_log_counters(FILE *f, const char *what,
			       const struct nvmet_io_stats *st)
{
	u32 i;

	fprintf(f,
		"rdmarw-nvmet: stats: %s: reads %" PRIu64 " (%" PRIu64
		" bytes), writes %" PRIu64 " (%" PRIu64
		" bytes), flushes %" PRIu64 ", other %" PRIu64
		", admin %" PRIu64 ", data waits %" PRIu64 ", errors %" PRIu64,
		what, st->read_ops, st->bytes_read, st->write_ops,
		st->bytes_written, st->flush_ops, st->other_ops, st->admin_ops,
		st->data_waits, nvmet_errors_of(st));
	for (i = 0; i < NVMET_SST_NR; i++)
		if (st->errors[i])
			fprintf(f, " %s=%" PRIu64, nvmet_sst_names[i],
				st->errors[i]);
	fprintf(f, "\n");
}

/* A tmpfs namespace's lease (nvmet_json_backend()), one more log line. */
static void nvmet_log_lease(FILE *f, const char *what, struct nvmet_ns *ns)
{
	u64 takes, breaks;

	if (nvmet_ns_lease_counts(ns, &takes, &breaks))
		return;
	fprintf(f,
		"rdmarw-nvmet: stats: %s: the %s serves, lease taken %" PRIu64
		", broken %" PRIu64 "\n",
		what, nvmet_ns_mapped(ns) ? "mapping" : "fd", takes, breaks);
}

/* What one pass over a subsystem gathers (its locks held). */
struct nvmet_subsys_sum {
	struct nvmet_io_stats total;
	struct nvmet_io_stats ns[NVMET_MAX_NAMESPACES];
	struct nvmet_io_stats ctrl; /* scratch */
};

static void nvmet_subsys_sum(struct nvmet_subsys *s,
			     struct nvmet_subsys_sum *sum)
{
	struct nvmet_ctrl *ctrl;
	u32 i;

	memset(sum, 0, sizeof(*sum));
	nvmet_stats_add(&sum->total, &s->retired);
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++)
		nvmet_stats_add(&sum->ns[i], &s->retired_ns[i]);
	list_for_each_entry(ctrl, &s->ctrls, subsys_entry)
	{
		mutex_lock(&ctrl->lock);
		nvmet_ctrl_sum(ctrl, &sum->ctrl, sum->ns);
		mutex_unlock(&ctrl->lock);
		nvmet_stats_add(&sum->total, &sum->ctrl);
	}
}

static void nvmet_json_ctrl(FILE *f, struct nvmet_ctrl *ctrl,
			    struct nvmet_io_stats *scratch, bool first)
{
	u32 q, nq = 0;

	mutex_lock(&ctrl->lock);
	nvmet_ctrl_sum(ctrl, scratch, NULL);
	for (q = 1; q <= ctrl->max_qid; q++)
		nq += ctrl->sqs[q] != NULL;
	fprintf(f,
		"%s\n        { \"cntlid\": %u, \"hostnqn\": ", first ? "" : ",",
		ctrl->cntlid);
	nvmet_json_str(f, ctrl->hostnqn);
	fprintf(f,
		",\n          \"current_admin_qpairs\": %u,\n"
		"          \"current_io_qpairs\": %u,\n",
		ctrl->sqs[0] ? 1 : 0, nq);
	nvmet_json_counters(f, scratch, "          ");
	fprintf(f, ",\n          \"queues\": [");
	first = true;
	for (q = 0; q <= ctrl->max_qid; q++) {
		struct nvmet_io_stats st;

		if (!ctrl->sqs[q])
			continue;
		memset(&st, 0, sizeof(st));
		nvmet_sq_stats(&st, ctrl->sqs[q]);
		fprintf(f, "%s\n            { \"qid\": %u,\n", first ? "" : ",",
			q);
		nvmet_json_counters(f, &st, "              ");
		fprintf(f, " }");
		first = false;
	}
	mutex_unlock(&ctrl->lock);
	fprintf(f, " ] }");
}

/*
 * What serves namespace @ns (@s->ns_lock held): its backend, and a tmpfs
 * file's lease (backend.c): whether the mapping or the fd serves now, how
 * often the lease was taken and broken.
 */
static void nvmet_json_backend(FILE *f, struct nvmet_ns *ns)
{
	u64 takes, breaks;

	fprintf(f, ",\n          \"backend\": ");
	nvmet_json_str(f, ns->ops->name);
	if (nvmet_ns_lease_counts(ns, &takes, &breaks))
		return;
	fprintf(f,
		",\n          \"lease\": { \"serves\": \"%s\", \"takes\": %" PRIu64
		", \"breaks\": %" PRIu64 " }",
		nvmet_ns_mapped(ns) ? "mapping" : "fd", takes, breaks);
}

static void nvmet_json_subsys(FILE *f, struct nvmet_subsys *s,
			      struct nvmet_subsys_sum *sum, bool first)
{
	struct nvmet_ctrl *ctrl;
	bool one = true;
	u32 i;

	mutex_lock(&s->lock);
	nvmet_subsys_sum(s, sum);
	fprintf(f, "%s\n    { \"nqn\": ", first ? "" : ",");
	nvmet_json_str(f, s->subsysnqn);
	fprintf(f, ",\n");
	fprintf(f, "      \"keep_alive_expiries\": %" PRIu64 ",\n",
		__atomic_load_n(&s->kato_expired, __ATOMIC_RELAXED));
	nvmet_json_counters(f, &sum->total, "      ");
	fprintf(f, ",\n      \"namespaces\": [");
	spin_lock(&s->ns_lock);
	for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
		if (!s->ns[i])
			continue;
		fprintf(f, "%s\n        { \"nsid\": %u,\n", one ? "" : ",",
			i + 1);
		nvmet_json_counters(f, &sum->ns[i], "          ");
		nvmet_json_backend(f, s->ns[i]);
		fprintf(f, " }");
		one = false;
	}
	spin_unlock(&s->ns_lock);
	fprintf(f, " ],\n      \"controllers\": [");
	one = true;
	list_for_each_entry(ctrl, &s->ctrls, subsys_entry)
	{
		nvmet_json_ctrl(f, ctrl, &sum->ctrl, one);
		one = false;
	}
	mutex_unlock(&s->lock);
	fprintf(f, " ] }");
}

static int nvmet_stats_render_json(struct nvmet_target *t, FILE *f)
{
	struct nvmet_target_stats ts;
	struct nvmet_subsys_sum *sum;
	struct nvmet_subsys *s;
	bool first = true;

	sum = malloc(sizeof(*sum));
	if (!sum)
		return -ENOMEM;
	nvmet_target_get_stats(t, &ts);
	fprintf(f,
		"{\n  \"version\": 1,\n"
		"  \"target\": { \"current_ctrls\": %u, \"current_qpairs\": %u,"
		" \"ctrls\": %" PRIu64 ", \"qpairs\": %" PRIu64 ",\n"
		"    \"cmds\": %" PRIu64 ", \"errors\": %" PRIu64
		", \"keep_alive_expiries\": %" PRIu64 ",\n"
		"    \"rejects\": %" PRIu64 ", \"connect_timeouts\": %" PRIu64
		", \"data_waits\": %" PRIu64 " },\n"
		"  \"subsystems\": [",
		ts.ctrls, ts.queues, ts.ctrls_created, ts.queues_created,
		ts.cmds, ts.errors, ts.kato_expired, ts.rejects,
		ts.connect_timeouts, ts.data_waits);
	mutex_lock(&t->lock);
	list_for_each_entry(s, &t->subsystems, entry)
	{
		nvmet_json_subsys(f, s, sum, first);
		first = false;
	}
	mutex_unlock(&t->lock);
	fprintf(f, " ]\n}\n");
	free(sum);
	return ferror(f) ? -EIO : 0;
}

static int nvmet_stats_render_log(struct nvmet_target *t, FILE *f)
{
	struct nvmet_subsys_sum *sum;
	struct nvmet_subsys *s;
	struct nvmet_ctrl *ctrl;
	char what[512];
	u32 i, q;

	sum = malloc(sizeof(*sum));
	if (!sum)
		return -ENOMEM;
	mutex_lock(&t->lock);
	list_for_each_entry(s, &t->subsystems, entry)
	{
		mutex_lock(&s->lock);
		nvmet_subsys_sum(s, sum);
		snprintf(what, sizeof(what), "subsystem %s", s->subsysnqn);
		nvmet_log_counters(f, what, &sum->total);
		for (i = 0; i < NVMET_MAX_NAMESPACES; i++) {
			if (!READ_ONCE(s->ns[i]))
				continue;
			snprintf(what, sizeof(what), "subsystem %s nsid %u",
				 s->subsysnqn, i + 1);
			nvmet_log_counters(f, what, &sum->ns[i]);
			spin_lock(&s->ns_lock);
			if (s->ns[i])
				nvmet_log_lease(f, what, s->ns[i]);
			spin_unlock(&s->ns_lock);
		}
		list_for_each_entry(ctrl, &s->ctrls, subsys_entry)
		{
			mutex_lock(&ctrl->lock);
			nvmet_ctrl_sum(ctrl, &sum->ctrl, NULL);
			snprintf(what, sizeof(what), "controller %u host %s",
				 ctrl->cntlid, ctrl->hostnqn);
			nvmet_log_counters(f, what, &sum->ctrl);
			for (q = 0; q <= ctrl->max_qid; q++) {
				if (!ctrl->sqs[q])
					continue;
				memset(&sum->ctrl, 0, sizeof(sum->ctrl));
				nvmet_sq_stats(&sum->ctrl, ctrl->sqs[q]);
				snprintf(what, sizeof(what),
					 "controller %u queue %u", ctrl->cntlid,
					 q);
				nvmet_log_counters(f, what, &sum->ctrl);
			}
			mutex_unlock(&ctrl->lock);
		}
		mutex_unlock(&s->lock);
	}
	mutex_unlock(&t->lock);
	free(sum);
	return ferror(f) ? -EIO : 0;
}

/*
 * Render into memory under the locks (a Connect waits for tgt->lock),
 * then write @f without them.
 */
static int nvmet_stats_out(struct nvmet_target *t, FILE *f, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int ret;

	if (!t || !f)
		return -EINVAL;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	ret = json ? nvmet_stats_render_json(t, m) :
		     nvmet_stats_render_log(t, m);
	if (fclose(m) && !ret)
		ret = -ENOMEM;
	if (!ret && len && fwrite(buf, 1, len, f) != len)
		ret = -EIO;
	if (!ret && fflush(f))
		ret = -EIO;
	free(buf);
	return ret;
}

int nvmet_target_stats_json(struct nvmet_target *t, FILE *f)
{
	return nvmet_stats_out(t, f, true);
}

int nvmet_target_stats_log(struct nvmet_target *t, FILE *f)
{
	return nvmet_stats_out(t, f, false);
}

int nvmet_target_stats_write(struct nvmet_target *t, const char *path)
{
	char tmp[4096];
	FILE *f;
	int fd, ret;

	if (!t || !path || !path[0])
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	ret = nvmet_target_stats_json(t, f);
	if (fflush(f) && !ret)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/**
 * nvmet_qcount_add() - list a queue's command counters in the target's sums
 * @t: the target
 * @c: the queue's counters (struct nvmet_sq.count), zeroed and unlisted
 *
 * Control path (a queue's connection); from here nvmet_qcount_sum()
 * counts them.
 */
void nvmet_qcount_add(struct nvmet_target *t, struct nvmet_qcount *c)
{
	spin_lock(&t->qc_lock);
	list_add_tail(&c->entry, &t->qcounts);
	spin_unlock(&t->qc_lock);
}

/**
 * nvmet_qcount_del() - a queue goes: its counts move to the target's own
 * @t: the target
 * @c: the queue's counters (unlisted ones are ignored)
 *
 * In one critical section with the readers, so a sum counts each command
 * once whether its queue is gone or not.
 */
void nvmet_qcount_del(struct nvmet_target *t, struct nvmet_qcount *c)
{
	spin_lock(&t->qc_lock);
	if (!list_empty(&c->entry)) {
		t->cmds += __atomic_load_n(&c->cmds, __ATOMIC_RELAXED);
		t->reqs_inflight +=
			__atomic_load_n(&c->inflight, __ATOMIC_RELAXED);
		list_del_init(&c->entry);
	}
	spin_unlock(&t->qc_lock);
}

/**
 * nvmet_qcount_sum() - the target-wide command counters
 * @t: the target
 * @cmds: set to the commands received
 * @inflight: set to the requests taken and not yet released
 *
 * Each queue's counter is loaded once, relaxed (the kernel's
 * percpu_counter_sum()): every number one the counter had, the sum a
 * snapshot up to the commands arriving meanwhile.
 */
void nvmet_qcount_sum(struct nvmet_target *t, u64 *cmds, u64 *inflight)
{
	struct nvmet_qcount *c;
	u64 n, f;

	spin_lock(&t->qc_lock);
	n = t->cmds;
	f = t->reqs_inflight;
	list_for_each_entry(c, &t->qcounts, entry)
	{
		n += __atomic_load_n(&c->cmds, __ATOMIC_RELAXED);
		f += __atomic_load_n(&c->inflight, __ATOMIC_RELAXED);
	}
	spin_unlock(&t->qc_lock);
	*cmds = n;
	*inflight = f;
}

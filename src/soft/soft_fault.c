// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection (the public half is at the end of rdmarw/soft.h).
 *
 * Rules live in a struct soft_fault_state embedded in each QP and each
 * device, zeroed with its object.  The hooks in soft_qp.c (posting),
 * soft_req.c (execution) and soft_mr.c (MR allocation) test one flag,
 * soft_fault_on(), and come here only when something is armed.
 *
 * Locking: each state has a spin flag taken for a few instructions; the QP's
 * is never held while the device's is taken, and neither is held while a
 * decision is carried out (moving a QP to ERR writes completions, which may
 * call a comp_handler that arms or clears rules).  Decisions are made under
 * the flag, so a rule's count is exact even when several threads post, and
 * an @nth rule fires exactly once.
 */
#include "soft/soft_access.h"
#include "soft/soft_req.h"

#include <sched.h>

enum fault_event {
	EV_POST,
	EV_EXEC,
	EV_ALLOC,
};

/* ---- the state and its lock ------------------------------------------- */

static void fs_lock(struct soft_fault_state *s)
{
	soft_spin_lock(&s->lock);
}

static void fs_unlock(struct soft_fault_state *s)
{
	soft_spin_unlock(&s->lock);
}

/* Recompute the hooks' flag (lock held). */
static void fs_update_on(struct soft_fault_state *s)
{
	int on = s->nr_live || s->sq_depth || s->stalled || s->zc;

	__atomic_store_n(&s->on, on, __ATOMIC_RELEASE);
}

static void fs_count(struct soft_fault_state *s, enum soft_fault_type t)
{
	__atomic_add_fetch(&s->fired[t], 1, __ATOMIC_RELAXED);
}

/* splitmix64: each rule draws from its own sequence. */
static u64 fault_rand(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static enum fault_event type_event(enum soft_fault_type t)
{
	switch (t) {
	case SOFT_FAULT_POST:
		return EV_POST;
	case SOFT_FAULT_ALLOC_MR:
		return EV_ALLOC;
	default:
		return EV_EXEC;
	}
}

static bool slot_counts(const struct soft_fault_slot *sl, enum fault_event ev,
			int opcode)
{
	if (type_event(sl->rule.type) != ev)
		return false;
	if (ev == EV_ALLOC || !sl->rule.opcodes)
		return true;
	return opcode >= 0 && opcode < 64 &&
	       (sl->rule.opcodes & (1ULL << opcode));
}

/* Count the event on @sl and say whether it fires (lock held). */
static bool slot_fires(struct soft_fault_slot *sl)
{
	const struct soft_fault_rule *r = &sl->rule;
	bool fire;

	sl->seen++;
	if (r->nth) {
		fire = sl->seen == r->nth;
	} else {
		fire = fault_rand(&sl->rng) % SOFT_FAULT_PPM_ALL < r->ppm;
		if (r->count && sl->fired >= r->count)
			fire = false;
	}
	if (fire)
		sl->fired++;
	/* A spent rule goes away and stops costing anything. */
	sl->live = !(r->nth && sl->seen >= r->nth) &&
		   !(r->count && sl->fired >= r->count);
	return fire;
}

/* Remove slot @i, keeping the others in arming order (lock held). */
static void fs_remove(struct soft_fault_state *s, u32 i)
{
	memmove(&s->slots[i], &s->slots[i + 1],
		(s->nr_live - i - 1) * sizeof(s->slots[0]));
	s->nr_live--;
	memset(&s->slots[s->nr_live], 0, sizeof(s->slots[0]));
	fs_update_on(s);
}

/*
 * Offer an event to the rules of @s in arming order; the first that fires
 * decides.  Returns true and a copy of that rule in @out when one fired.
 */
static bool fs_event(struct soft_fault_state *s, enum fault_event ev,
		     int opcode, struct soft_fault_slot *out)
{
	bool fired = false;
	u32 i = 0;

	fs_lock(s);
	while (i < s->nr_live && !fired) {
		struct soft_fault_slot *sl = &s->slots[i];

		if (!slot_counts(sl, ev, opcode)) {
			i++;
			continue;
		}
		fired = slot_fires(sl);
		if (fired) {
			*out = *sl;
			fs_count(s, sl->rule.type);
		}
		if (sl->live)
			i++;
		else
			fs_remove(s, i);
	}
	fs_unlock(s);
	return fired;
}

/*
 * The QP's rules, then its device's.  A fault counts in the figures of both
 * the QP and the device.
 */
static bool qp_event(struct soft_qp *qp, enum fault_event ev, int opcode,
		     struct soft_fault_slot *out)
{
	if (fs_event(&qp->fault, ev, opcode, out)) {
		fs_count(&qp->dev->fault, out->rule.type);
		return true;
	}
	if (fs_event(&qp->dev->fault, ev, opcode, out)) {
		fs_count(&qp->fault, out->rule.type);
		return true;
	}
	return false;
}

static int rule_err(const struct soft_fault_rule *r)
{
	return r->err ? r->err : -ENOMEM;
}

/* ---- the hooks ------------------------------------------------------- */

int rdmarw__soft_fault_post(struct soft_qp *qp, const struct ib_send_wr *wr)
{
	struct soft_fault_state *s = &qp->fault;
	struct soft_fault_slot sl;
	u32 depth;

	fs_lock(s);
	depth = s->sq_depth;
	fs_unlock(s);
	/* sq_lock is held: sq_prod is ours, sq_done only grows. */
	if (depth && qp->sq_prod - soft_load(&qp->sq_done) >= depth) {
		__atomic_add_fetch(&s->sq_full, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&qp->dev->fault.sq_full, 1,
				   __ATOMIC_RELAXED);
		return -ENOMEM;
	}
	if (!qp_event(qp, EV_POST, wr->opcode, &sl))
		return 0;
	return rule_err(&sl.rule);
}

/* Is this WQE seen for the first time?  Then it counts (QP lock held). */
static bool exec_first_time(struct soft_fault_state *s, u64 seq)
{
	if (seq < s->exec_next)
		return false;
	s->exec_next = seq + 1;
	return true;
}

void rdmarw__soft_fault_zc(struct soft_qp *qp)
{
	struct soft_fault_state *s = &qp->fault;

	fs_lock(s);
	s->zc = true;
	fs_update_on(s);
	fs_unlock(s);
}

static enum soft_fault exec_rules(struct soft_qp *qp, struct soft_send_wqe *wqe,
				  bool *stall);

/* The rules, then (unguarded iWARP) siw's zero-copy model (soft_zcopy.c). */
enum soft_fault rdmarw__soft_fault_exec(struct soft_qp *qp,
					struct soft_send_wqe *wqe, bool *stall)
{
	enum soft_fault f = exec_rules(qp, wqe, stall);

	if (f != SOFT_OK || *stall || !qp->zc_model)
		return f;
	return rdmarw__soft_zc_exec(qp, wqe);
}

static enum soft_fault exec_rules(struct soft_qp *qp, struct soft_send_wqe *wqe,
				  bool *stall)
{
	struct soft_fault_state *s = &qp->fault;
	struct soft_fault_slot sl;
	bool first;

	fs_lock(s);
	if (s->stalled) {
		fs_unlock(s);
		*stall = true;
		return SOFT_OK;
	}
	first = exec_first_time(s, wqe->h.seq);
	fs_unlock(s);
	if (!first || !qp_event(qp, EV_EXEC, wqe->opcode, &sl))
		return SOFT_OK;
	switch (sl.rule.type) {
	case SOFT_FAULT_WC:
		return (enum soft_fault)sl.fault;
	case SOFT_FAULT_QP_ERR:
		/* Between the previous WQE and this one. */
		rdmarw__soft_qp_to_err(qp);
		return SOFT_F_FLUSH;
	case SOFT_FAULT_STALL:
		fs_lock(s);
		s->stalled = true;
		fs_update_on(s);
		fs_unlock(s);
		*stall = true;
		return SOFT_OK;
	default:
		return SOFT_OK;
	}
}

int rdmarw__soft_fault_alloc_mr(struct soft_dev *sdev)
{
	struct soft_fault_slot sl;

	if (!fs_event(&sdev->fault, EV_ALLOC, -1, &sl))
		return 0;
	return rule_err(&sl.rule);
}

/* ---- arming ---------------------------------------------------------- */

/* The internal fault that completes with @status, or SOFT_OK if none. */
static enum soft_fault status_fault(enum ib_wc_status status)
{
	u32 vendor;
	int f;

	for (f = SOFT_OK + 1; f < SOFT_F_NR; f++)
		if (rdmarw__soft_status((enum soft_fault)f, &vendor) ==
			    status &&
		    !vendor)
			return (enum soft_fault)f;
	return SOFT_OK;
}

static int rule_check(const struct soft_fault_rule *r, bool device,
		      struct soft_fault_slot *sl)
{
	if (!r || (unsigned int)r->type >= SOFT_FAULT_NR)
		return -EINVAL;
	if (r->type == SOFT_FAULT_ALLOC_MR && !device)
		return -EINVAL;
	if (!r->nth && (!r->ppm || r->ppm > SOFT_FAULT_PPM_ALL))
		return -EINVAL;
	if (r->err > 0 || r->err < -4095)
		return -EINVAL;
	memset(sl, 0, sizeof(*sl));
	sl->rule = *r;
	sl->rng = r->seed;
	sl->live = true;
	if (r->type == SOFT_FAULT_WC) {
		sl->fault = status_fault(r->status);
		if (sl->fault == SOFT_OK)
			return -EINVAL;
	}
	return 0;
}

static int fs_arm(struct soft_fault_state *s, const struct soft_fault_slot *sl)
{
	int ret = 0;

	fs_lock(s);
	if (s->nr_live == SOFT_FAULT_MAX_RULES)
		ret = -ENOSPC;
	else
		s->slots[s->nr_live++] = *sl;
	fs_update_on(s);
	fs_unlock(s);
	return ret;
}

static bool qp_ok(struct ib_qp *qp)
{
	return qp && soft_device_is_soft(qp->device);
}

int soft_fault_arm_qp(struct ib_qp *qp, const struct soft_fault_rule *rule)
{
	struct soft_fault_slot sl;
	int ret;

	if (!qp_ok(qp))
		return -EINVAL;
	ret = rule_check(rule, false, &sl);
	if (ret)
		return ret;
	return fs_arm(&to_sqp(qp)->fault, &sl);
}

int soft_fault_arm_device(struct ib_device *dev,
			  const struct soft_fault_rule *rule)
{
	struct soft_fault_slot sl;
	int ret;

	if (!dev || !soft_device_is_soft(dev))
		return -EINVAL;
	ret = rule_check(rule, true, &sl);
	if (ret)
		return ret;
	return fs_arm(&to_sdev(dev)->fault, &sl);
}

/* Drop the rules; with @qp, also the depth limit and a stall. */
static bool fs_clear(struct soft_fault_state *s, bool qp)
{
	bool was_stalled;

	fs_lock(s);
	memset(s->slots, 0, sizeof(s->slots));
	s->nr_live = 0;
	was_stalled = s->stalled;
	if (qp) {
		s->sq_depth = 0;
		s->stalled = false;
	}
	fs_update_on(s);
	fs_unlock(s);
	return qp && was_stalled;
}

int soft_fault_clear_qp(struct ib_qp *qp)
{
	if (!qp_ok(qp))
		return -EINVAL;
	if (fs_clear(&to_sqp(qp)->fault, true))
		rdmarw__soft_qp_schedule(to_sqp(qp));
	return 0;
}

int soft_fault_clear_device(struct ib_device *dev)
{
	if (!dev || !soft_device_is_soft(dev))
		return -EINVAL;
	fs_clear(&to_sdev(dev)->fault, false);
	return 0;
}

int soft_fault_resume(struct ib_qp *qp)
{
	struct soft_fault_state *s;
	bool was_stalled;

	if (!qp_ok(qp))
		return -EINVAL;
	s = &to_sqp(qp)->fault;
	fs_lock(s);
	was_stalled = s->stalled;
	s->stalled = false;
	fs_update_on(s);
	fs_unlock(s);
	if (was_stalled)
		rdmarw__soft_qp_schedule(to_sqp(qp));
	return 0;
}

int soft_fault_sq_depth(struct ib_qp *qp, u32 depth)
{
	struct soft_fault_state *s;

	if (!qp_ok(qp) || depth > to_sqp(qp)->sq_size)
		return -EINVAL;
	s = &to_sqp(qp)->fault;
	fs_lock(s);
	s->sq_depth = depth;
	fs_update_on(s);
	fs_unlock(s);
	return 0;
}

/* ---- figures --------------------------------------------------------- */

static void fs_stats(struct soft_fault_state *s, struct soft_fault_stats *out)
{
	int t;

	memset(out, 0, sizeof(*out));
	fs_lock(s);
	for (t = 0; t < SOFT_FAULT_NR; t++)
		out->fired[t] = __atomic_load_n(&s->fired[t], __ATOMIC_RELAXED);
	out->sq_full = __atomic_load_n(&s->sq_full, __ATOMIC_RELAXED);
	out->armed = s->nr_live;
	out->stalled = s->stalled;
	fs_unlock(s);
}

int soft_fault_qp_stats(struct ib_qp *qp, struct soft_fault_stats *out)
{
	if (!qp_ok(qp) || !out)
		return -EINVAL;
	fs_stats(&to_sqp(qp)->fault, out);
	return 0;
}

int soft_fault_device_stats(struct ib_device *dev, struct soft_fault_stats *out)
{
	if (!dev || !soft_device_is_soft(dev) || !out)
		return -EINVAL;
	fs_stats(&to_sdev(dev)->fault, out);
	return 0;
}

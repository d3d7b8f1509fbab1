// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one owner of a QP's state.  Every change of qp->state, whoever makes
 * it (ib_modify_qp(), a provider's modify op, a device moving a QP to ERR
 * when a work request fails or the peer goes away, the ibv backend), goes
 * through rdmarw__qp_move(), which checks the move against the IBA state
 * table for RC QPs, as the kernel's ib_modify_qp_is_ok() applies it, and
 * commits it with a compare-and-swap against the state it checked.  A state
 * that changed in between is checked again: a device's ERR can therefore
 * never be overwritten by a move that ERR does not allow (to SQD or RTS),
 * only by the moves the table allows from ERR (to RESET, to ERR).
 */
#include "core/core.h"

/*
 * One cell of the table: whether @cur -> @next exists for RC, the mask bits
 * it requires and those it accepts besides (IB_QP_STATE is always
 * accepted).  The values are the kernel's qp_state_table[][] for IB_QPT_RC.
 */
struct qp_move_rule {
	bool valid;
	int req;
	int opt;
};

#define RC_RTS_OPT                                               \
	(IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | IB_QP_ALT_PATH | \
	 IB_QP_PATH_MIG_STATE | IB_QP_MIN_RNR_TIMER)

static const struct qp_move_rule rc_rules[IB_QPS_ERR + 1][IB_QPS_ERR + 1] = {
	[IB_QPS_RESET] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_INIT] = {
			.valid = true,
			.req = IB_QP_PKEY_INDEX | IB_QP_PORT |
			       IB_QP_ACCESS_FLAGS,
		},
	},
	[IB_QPS_INIT] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_ERR] = { .valid = true },
		[IB_QPS_INIT] = {
			.valid = true,
			.opt = IB_QP_PKEY_INDEX | IB_QP_PORT |
			       IB_QP_ACCESS_FLAGS,
		},
		[IB_QPS_RTR] = {
			.valid = true,
			.req = IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			       IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
			       IB_QP_MIN_RNR_TIMER,
			.opt = IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS |
			       IB_QP_PKEY_INDEX,
		},
	},
	[IB_QPS_RTR] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_ERR] = { .valid = true },
		[IB_QPS_RTS] = {
			.valid = true,
			.req = IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			       IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			       IB_QP_MAX_QP_RD_ATOMIC,
			.opt = RC_RTS_OPT,
		},
	},
	[IB_QPS_RTS] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_ERR] = { .valid = true },
		[IB_QPS_RTS] = { .valid = true, .opt = RC_RTS_OPT },
		[IB_QPS_SQD] = {
			.valid = true,
			.opt = IB_QP_EN_SQD_ASYNC_NOTIFY,
		},
	},
	[IB_QPS_SQD] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_ERR] = { .valid = true },
		[IB_QPS_RTS] = { .valid = true, .opt = RC_RTS_OPT },
		[IB_QPS_SQD] = {
			.valid = true,
			.opt = IB_QP_PORT | IB_QP_AV | IB_QP_TIMEOUT |
			       IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			       IB_QP_MAX_QP_RD_ATOMIC |
			       IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_ALT_PATH |
			       IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX |
			       IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE,
		},
	},
	/* An RC QP never enters SQE; the kernel lists no option for it. */
	[IB_QPS_SQE] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_ERR] = { .valid = true },
		[IB_QPS_RTS] = { .valid = true },
	},
	[IB_QPS_ERR] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_ERR] = { .valid = true },
	},
};

void (*rdmarw__qp_move_test_hook)(struct ib_qp *qp, enum ib_qp_state next);

static bool qp_state_known(enum ib_qp_state s)
{
	return (unsigned int)s <= IB_QPS_ERR;
}

int rdmarw__qp_move_ok(enum ib_qp_state cur, enum ib_qp_state next,
		       int attr_mask)
{
	const struct qp_move_rule *r;

	if (!qp_state_known(cur) || !qp_state_known(next))
		return -EINVAL;
	/* IB_QP_CUR_STATE only where the IBA lets software assert it. */
	if ((attr_mask & IB_QP_CUR_STATE) && cur != IB_QPS_RTR &&
	    cur != IB_QPS_RTS && cur != IB_QPS_SQD && cur != IB_QPS_SQE)
		return -EINVAL;
	r = &rc_rules[cur][next];
	if (!r->valid)
		return -EINVAL;
	if ((attr_mask & r->req) != r->req)
		return -EINVAL;
	if (attr_mask & ~(r->req | r->opt | IB_QP_STATE))
		return -EINVAL;
	return 0;
}

int rdmarw__qp_move(struct ib_qp *qp, enum ib_qp_state next, int attr_mask,
		    enum ib_qp_state *old)
{
	enum ib_qp_state s = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
	void (*hook)(struct ib_qp *, enum ib_qp_state);
	int ret;

	for (;;) {
		ret = rdmarw__qp_move_ok(s, next, attr_mask);
		if (ret)
			break;
		hook = __atomic_load_n(&rdmarw__qp_move_test_hook,
				       __ATOMIC_ACQUIRE);
		if (hook)
			hook(qp, next);
		/* On failure @s is reloaded and the move checked again. */
		if (__atomic_compare_exchange_n(&qp->state, &s, next, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	if (old)
		*old = s;
	return ret;
}

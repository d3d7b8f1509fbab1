// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DH-HMAC-CHAP on the target (the kernel's drivers/nvme/target/auth.c and
 * fabrics-cmd-auth.c): the hosts that must authenticate, one controller
 * engine (nvme/common/auth.h) per queue of such a host, AUTH_Send and
 * AUTH_Receive driving it, and the check that keeps every other command
 * off a queue until its host has authenticated.  docs/nvme-auth.md.
 */
#include <errno.h>
#include <stdlib.h>

#include "nvme_ids.h"
#include "nvmet_int.h"

/* ---- the hosts' keys ---------------------------------------------------------- */

static void nvmet_auth_free_str(char *s)
{
	if (s) {
		nvme_auth_wipe(s, strlen(s));
		free(s);
	}
}

void nvmet_auth_hosts_free(struct nvmet_target *t)
{
	u32 i;

	for (i = 0; i < t->nr_auth_hosts; i++) {
		nvmet_auth_free_str(t->auth_hosts[i].key);
		nvmet_auth_free_str(t->auth_hosts[i].ctrl_key);
	}
	free(t->auth_hosts);
	t->auth_hosts = NULL;
	t->nr_auth_hosts = 0;
}

/* A DHHC-1 string that parses (the parsed key is not kept). */
static bool nvmet_auth_key_valid(const char *secret)
{
	struct nvme_dhchap_key k;
	int ret = nvme_auth_parse_key(secret, &k);

	nvme_auth_wipe(&k, sizeof(k));
	return !ret;
}

static int nvmet_auth_host_copy(struct nvmet_host_auth *h,
				const struct nvmet_host_opts *o)
{
	h->hash_id = NVME_AUTH_HASH_SHA256;
	h->dhgroup_id = NVME_AUTH_DHGROUP_NULL;
	if (!o->nqn || !nvme_nqn_valid(o->nqn) || !o->dhchap_key ||
	    !nvmet_auth_key_valid(o->dhchap_key))
		return -EINVAL;
	if (o->dhchap_ctrl_key && !nvmet_auth_key_valid(o->dhchap_ctrl_key))
		return -EINVAL;
	if (o->dhchap_hash)
		h->hash_id = nvme_auth_hmac_id(o->dhchap_hash);
	if (o->dhchap_dhgroup)
		h->dhgroup_id = nvme_auth_dhgroup_id(o->dhchap_dhgroup);
	if (h->hash_id == NVME_AUTH_HASH_INVALID ||
	    h->dhgroup_id == NVME_AUTH_DHGROUP_INVALID)
		return -EINVAL;
	nvmet_copy_nul(h->nqn, sizeof(h->nqn), o->nqn);
	h->key = strdup(o->dhchap_key);
	if (o->dhchap_ctrl_key)
		h->ctrl_key = strdup(o->dhchap_ctrl_key);
	if (!h->key || (o->dhchap_ctrl_key && !h->ctrl_key))
		return -ENOMEM;
	return 0;
}

/*
 * Check and copy the hosts that must authenticate; on failure what was
 * copied stays for nvmet_auth_hosts_free().
 */
int nvmet_auth_hosts_setup(struct nvmet_target *t,
			   const struct nvmet_target_opts *o)
{
	u32 i, j;
	int ret;

	if (!o->nr_host_keys)
		return 0;
	if (!o->host_keys || o->nr_host_keys > NVMET_MAX_HOSTS)
		return -EINVAL;
	t->auth_hosts = calloc(o->nr_host_keys, sizeof(*t->auth_hosts));
	if (!t->auth_hosts)
		return -ENOMEM;
	for (i = 0; i < o->nr_host_keys; i++) {
		t->nr_auth_hosts = i + 1;
		ret = nvmet_auth_host_copy(&t->auth_hosts[i], &o->host_keys[i]);
		if (ret)
			return ret;
		for (j = 0; j < i; j++)
			if (!strcmp(t->auth_hosts[j].nqn, t->auth_hosts[i].nqn))
				return -EINVAL;
	}
	return 0;
}

const struct nvmet_host_auth *nvmet_auth_host_find(const struct nvmet_target *t,
						   const char *hostnqn)
{
	u32 i;

	for (i = 0; i < t->nr_auth_hosts; i++)
		if (!strncmp(t->auth_hosts[i].nqn, hostnqn, NVMF_NQN_FIELD_LEN))
			return &t->auth_hosts[i];
	return NULL;
}

/* ---- the transaction timer ------------------------------------------------------ */

/*
 * How long a transaction may wait for the host's next message: the
 * controller's keep-alive timeout, 120 s without one (the kernel's
 * auth_expire_secs).
 */
static unsigned long nvmet_auth_expiry_ms(const struct nvmet_ctrl *ctrl)
{
	u32 kato = READ_ONCE(ctrl->kato);

	return kato ? (unsigned long)kato * 1000 : 120000;
}

/*
 * A host that stopped in the middle of a transaction (or never began
 * the one its Connect was told to run): the kernel resets the
 * transaction and leaves the queue, which keeps what it holds until the
 * keep-alive timer (if any) goes; here the controller is torn down, as
 * the kernel does when a transaction fails.
 */
static void nvmet_auth_expired_work(struct work_struct *work)
{
	struct nvmet_sq *sq = container_of(to_delayed_work(work),
					   struct nvmet_sq, auth_expired_work);
	struct nvmet_ctrl *ctrl = READ_ONCE(sq->ctrl);

	/* nvmet_auth_sq_free() clears @auth_open before the queue goes */
	if (!ctrl || !READ_ONCE(sq->auth_open))
		return;
	nvmet_err("controller %u q%u: host %.223s: authentication "
		  "transaction expired (%lu ms)",
		  ctrl->cntlid, sq->qid, ctrl->hostnqn,
		  nvmet_auth_expiry_ms(ctrl));
	nvmet_ctrl_fatal_error(ctrl);
}

/* A transaction is open (again): expire it if the host stops. */
static void nvmet_auth_timer_arm(struct nvmet_sq *sq, struct nvmet_ctrl *ctrl)
{
	if (!sq->auth_timer) {
		INIT_DELAYED_WORK(&sq->auth_expired_work,
				  nvmet_auth_expired_work);
		sq->auth_timer = true;
	}
	WRITE_ONCE(sq->auth_open, true);
	mod_delayed_work(ctrl->subsys->tgt->wq, &sq->auth_expired_work,
			 nvmet_auth_expiry_ms(ctrl));
}

/* The transaction ended (authenticated, or failed and going down). */
static void nvmet_auth_timer_stop(struct nvmet_sq *sq)
{
	WRITE_ONCE(sq->auth_open, false);
	if (sq->auth_timer)
		cancel_delayed_work(&sq->auth_expired_work);
}

/* ---- queues ------------------------------------------------------------------- */

/*
 * A Connect for @ctrl is valid: when its host must authenticate, give the
 * queue an engine and set AUTHREQ.ATR in *@result (the kernel's
 * nvmet_setup_auth() and nvmet_connect_result()).  Discovery controllers
 * take no authentication, as the kernel's.
 */
u16 nvmet_auth_sq_setup(struct nvmet_req *req, struct nvmet_ctrl *ctrl,
			const struct nvmf_connect_data *d, u32 *result)
{
	struct nvmet_sq *sq = req->sq;

	(void)d;
	sq->authenticated = false;
	sq->auth_ready = false;
	sq->auth_transactions = 0;
	if (!ctrl->host_auth)
		return 0;
	sq->auth = calloc(1, sizeof(*sq->auth));
	if (!sq->auth)
		return NVME_SC_INTERNAL;
	*result |= NVME_CONNECT_AUTHREQ_ATR;
	/* the host must begin at once: the timer runs from the Connect */
	nvmet_auth_timer_arm(sq, ctrl);
	return 0;
}

/*
 * The engine is set up by the queue's first AUTH command, on the queue's
 * completion thread: libcrypto keeps per-thread state, and a Connect may
 * run on the rdma_cm's thread, which lives as long as the process.
 */
static u16 nvmet_auth_sq_ready(struct nvmet_sq *sq)
{
	const struct nvmet_host_auth *h = sq->ctrl->host_auth;
	struct nvme_auth_params p = { 0 };

	if (sq->auth_ready)
		return 0;
	p.hostnqn = sq->ctrl->hostnqn;
	p.subsysnqn = sq->ctrl->subsys->subsysnqn;
	p.host_secret = h->key;
	p.ctrl_secret = h->ctrl_key;
	p.hash_id = h->hash_id;
	p.dhgroup_id = h->dhgroup_id;
	if (nvme_auth_ctrl_init(sq->auth, &p))
		return NVME_SC_INTERNAL;
	sq->auth_ready = true;
	return 0;
}

void nvmet_auth_sq_free(struct nvmet_sq *sq)
{
	/* the work reads @sq: gone (or never to run) before @sq is */
	WRITE_ONCE(sq->auth_open, false);
	if (sq->auth_timer) {
		cancel_delayed_work_sync(&sq->auth_expired_work);
		sq->auth_timer = false;
	}
	if (!sq->auth)
		return;
	nvme_auth_ctrl_clear(sq->auth);
	free(sq->auth);
	sq->auth = NULL;
}

/*
 * May @req's command run on its queue (the kernel's
 * nvmet_check_auth_status())?  Not before the queue's host authenticated.
 */
bool nvmet_check_auth_status(struct nvmet_req *req)
{
	return !req->sq->auth || READ_ONCE(req->sq->authenticated);
}

/* ---- AUTH_Send / AUTH_Receive ------------------------------------------------ */

/* SECP, SPSP0, SPSP1 and the length, as the kernel checks them. */
static u16 nvmet_auth_check_cmd(struct nvmet_req *req, u32 max, u32 *len)
{
	struct nvmf_auth_command *c = &req->cmd->auth;

	if (c->secp != NVME_AUTH_DHCHAP_PROTOCOL_IDENTIFIER) {
		req->error_loc = offsetof(struct nvmf_auth_command, secp);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	if (c->spsp0 != NVME_AUTH_DHCHAP_SPSP) {
		req->error_loc = offsetof(struct nvmf_auth_command, spsp0);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	if (c->spsp1 != NVME_AUTH_DHCHAP_SPSP) {
		req->error_loc = offsetof(struct nvmf_auth_command, spsp1);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	*len = le32_to_cpu(c->len);
	if (!*len || *len > max) {
		req->error_loc = offsetof(struct nvmf_auth_command, len);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	/* a host with no key has nothing to authenticate with */
	if (!req->sq->auth) {
		nvmet_log("q%u: AUTH command from a host without a key",
			  req->sq->qid);
		return NVME_SC_INVALID_FIELD | NVME_SC_DNR;
	}
	return nvmet_auth_sq_ready(req->sq);
}

static void nvmet_auth_failed(struct nvmet_req *req, const char *what)
{
	struct nvmet_ctrl *ctrl = req->sq->ctrl;
	uint8_t reason = 0;

	nvme_auth_ctrl_status(req->sq->auth, &reason);
	nvmet_err("controller %u q%u: host %.223s %s (reason %#x)",
		  ctrl->cntlid, req->sq->qid, ctrl->hostnqn, what, reason);
	WRITE_ONCE(req->sq->authenticated, false);
	nvmet_auth_timer_stop(req->sq);
	req->fatal_after_send = true;
}

/* After an AUTH command: the timer follows the transaction's state. */
static void nvmet_auth_timer_update(struct nvmet_sq *sq)
{
	if (nvme_auth_ctrl_status(sq->auth, NULL) == NVME_AUTH_IN_PROGRESS)
		nvmet_auth_timer_arm(sq, sq->ctrl);
	else
		nvmet_auth_timer_stop(sq);
}

/*
 * Once per transaction that ends with the host authenticated (Success1
 * received, or Success2 sent when bidirectional): say so.  A queue that
 * re-authenticates stays authenticated meanwhile, as the kernel's.
 */
static void nvmet_auth_note_success(struct nvmet_sq *sq, bool was_open)
{
	if (was_open && !READ_ONCE(sq->auth_open) &&
	    nvme_auth_ctrl_status(sq->auth, NULL) == NVME_AUTH_SUCCESS)
		nvmet_log("controller %u q%u: host authenticated",
			  sq->ctrl->cntlid, sq->qid);
}

void nvmet_execute_auth_send(struct nvmet_req *req)
{
	u8 msg[NVME_AUTH_MAX_MSG];
	struct nvmet_sq *sq = req->sq;
	bool was_open;
	u16 status;
	u32 tl;
	int ret;

	status = nvmet_auth_check_cmd(req, sizeof(msg), &tl);
	if (status)
		goto out;
	if (!nvmet_check_transfer_len(req, tl))
		return;
	status = nvmet_copy_from_req(req, 0, msg, tl);
	if (status)
		goto out;
	if (msg[0] == NVME_AUTH_COMMON_MESSAGES &&
	    msg[1] == NVME_AUTH_DHCHAP_MESSAGE_NEGOTIATE &&
	    ++sq->auth_transactions > NVMET_AUTH_MAX_TRANSACTIONS) {
		nvmet_err("q%u: more than %u authentication transactions",
			  sq->qid, NVMET_AUTH_MAX_TRANSACTIONS);
		req->fatal_after_send = true;
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		goto out;
	}
	was_open = READ_ONCE(sq->auth_open);
	ret = nvme_auth_ctrl_send(sq->auth, msg, tl);
	if (ret) {
		req->error_loc = offsetof(struct nvmf_auth_command, len);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		goto out;
	}
	WRITE_ONCE(sq->authenticated, nvme_auth_ctrl_authenticated(sq->auth));
	/* a Failure1 still due keeps the timer: the host must fetch it */
	if (nvme_auth_ctrl_failure_due(sq->auth))
		nvmet_auth_timer_arm(sq, sq->ctrl);
	else
		nvmet_auth_timer_update(sq);
	nvmet_auth_note_success(sq, was_open);
	/* the host's Failure2 ends it now; a Failure1 waits for Receive */
	if (nvme_auth_ctrl_status(sq->auth, NULL) == NVME_AUTH_FAILED &&
	    !nvme_auth_ctrl_failure_due(sq->auth))
		nvmet_auth_failed(req, "aborted authentication");
out:
	nvme_auth_wipe(msg, sizeof(msg));
	nvmet_req_complete(req, status);
}

void nvmet_execute_auth_receive(struct nvmet_req *req)
{
	u8 msg[NVME_AUTH_MAX_MSG];
	struct nvmet_sq *sq = req->sq;
	bool was_open;
	ssize_t n;
	u16 status;
	u32 al;

	status = nvmet_auth_check_cmd(req, NVME_AUTH_BUF_SIZE, &al);
	if (status)
		goto out;
	if (!nvmet_check_transfer_len(req, al))
		return;
	was_open = READ_ONCE(sq->auth_open);
	n = nvme_auth_ctrl_receive(sq->auth, msg, min_t(u32, al, sizeof(msg)));
	if (n < 0) {
		req->error_loc = offsetof(struct nvmf_auth_command, len);
		status = NVME_SC_INVALID_FIELD | NVME_SC_DNR;
		goto out;
	}
	status = nvmet_copy_to_req(req, 0, msg, (u32)n);
	if (!status)
		status = nvmet_zero_req(req, (u32)n, al - (u32)n);
	WRITE_ONCE(sq->authenticated, nvme_auth_ctrl_authenticated(sq->auth));
	nvmet_auth_timer_update(sq);
	/* the Failure1 goes out first; the controller goes down after it */
	if (nvme_auth_ctrl_status(sq->auth, NULL) == NVME_AUTH_FAILED)
		nvmet_auth_failed(req, "failed to authenticate");
	nvmet_auth_note_success(sq, was_open);
out:
	nvme_auth_wipe(msg, sizeof(msg));
	nvmet_req_complete(req, status);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The controller's DH-HMAC-CHAP engine, the state of the kernel's
 * nvmet_execute_auth_send()/nvmet_execute_auth_receive()
 * (drivers/nvme/target/fabrics-cmd-auth.c) without the transport.  Each
 * AUTH_Send payload goes to nvme_auth_ctrl_send(), each AUTH_Receive is
 * answered by nvme_auth_ctrl_receive():
 *
 *   send(Negotiate)  -> receive: Challenge
 *   send(Reply)      -> receive: Success1, or Failure1 with the reason
 *   send(Success2)      (bidirectional only)
 *
 * A host's message that fails a check makes the next AUTH_Receive a
 * Failure1 with the kernel's reason code; after it the transaction has
 * failed for good (the transport tears the queue down).  A Failure2 from
 * the host ends it the same way, with nothing more to send.
 */
#include "auth_int.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

enum ctrl_step {
	CTRL_WAIT_NEGOTIATE,
	CTRL_SEND_CHALLENGE,
	CTRL_WAIT_REPLY,
	CTRL_SEND_SUCCESS1,
	CTRL_WAIT_SUCCESS2,
	CTRL_SEND_FAILURE1,
	CTRL_DONE,
};

/* Forget the transaction's secrets and DH key. */
static void ctrl_forget(struct nvme_auth_ctrl *c)
{
	nvme_auth_dh_free(&c->dh);
	nvme_auth_wipe(c->c1, sizeof(c->c1));
	nvme_auth_wipe(c->c2, sizeof(c->c2));
	nvme_auth_wipe(c->skey, sizeof(c->skey));
	c->skey_len = 0;
}

/* The transaction failed: the next AUTH_Receive carries Failure1. */
static void ctrl_fail(struct nvme_auth_ctrl *c, uint8_t reason)
{
	ctrl_forget(c);
	c->step = CTRL_SEND_FAILURE1;
	c->status = NVME_AUTH_FAILED;
	c->reason = reason;
	c->authenticated = false;
}

static void ctrl_end(struct nvme_auth_ctrl *c, uint8_t status, uint8_t reason)
{
	ctrl_forget(c);
	c->step = CTRL_DONE;
	c->status = status;
	c->reason = reason;
	c->authenticated = status == NVME_AUTH_SUCCESS;
}

/**
 * nvme_auth_ctrl_clear() - forget an engine's keys, secrets and DH key
 * @c: the engine (may be NULL)
 *
 * Leaves it all zero, as nvme_auth_ctrl_init() found it.
 */
void nvme_auth_ctrl_clear(struct nvme_auth_ctrl *c)
{
	if (!c)
		return;
	nvme_auth_dh_free(&c->dh);
	nvme_auth_wipe(c, sizeof(*c));
}

static int ctrl_load(struct nvme_auth_ctrl *c, const struct nvme_auth_params *p)
{
	int ret;

	ret = rdmarw__auth_copy_nqn(c->hostnqn, p->hostnqn);
	if (!ret)
		ret = rdmarw__auth_copy_nqn(c->subsysnqn, p->subsysnqn);
	if (!ret && !p->host_secret)
		ret = -ENOKEY;
	if (!ret)
		ret = rdmarw__auth_load_key(p->host_secret, c->hostnqn,
					    &c->host_key);
	if (!ret && p->ctrl_secret) {
		ret = rdmarw__auth_load_key(p->ctrl_secret, c->subsysnqn,
					    &c->ctrl_key);
		c->has_ctrl_key = !ret;
	}
	return ret;
}

/**
 * nvme_auth_ctrl_init() - set up the controller's engine for one queue
 * @c: the engine
 * @p: the NQNs of the Connect, the host's DHHC-1 key, the controller's
 *	(optional: without it, a host that asks for bidirectional
 *	authentication fails), the preferred hash (0: SHA-256) and DH group
 *
 * Return: 0; -EINVAL for a missing argument, a bad NQN, key, hash or
 * group; -ENOKEY without a host key; -EKEYREJECTED for a key whose CRC
 * does not match.  The engine is cleared on error.
 */
int nvme_auth_ctrl_init(struct nvme_auth_ctrl *c,
			const struct nvme_auth_params *p)
{
	uint8_t hash;
	int ret;

	if (!c || !p)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	hash = p->hash_id ? p->hash_id : NVME_AUTH_HASH_SHA256;
	ret = ctrl_load(c, p);
	if (!ret && (!nvme_auth_hmac_hash_len(hash) ||
		     !nvme_auth_dhgroup_name(p->dhgroup_id)))
		ret = -EINVAL;
	if (ret) {
		nvme_auth_ctrl_clear(c);
		return ret;
	}
	c->conf_hash = hash;
	c->conf_dhgid = p->dhgroup_id;
	c->step = CTRL_WAIT_NEGOTIATE;
	c->status = NVME_AUTH_IN_PROGRESS;
	return 0;
}

/* The configured hash if the host offers it, else its first usable one. */
static uint8_t
ctrl_pick_hash(struct nvme_auth_ctrl *c,
	       const struct nvmf_auth_dhchap_protocol_descriptor *d)
{
	uint8_t pick = 0;
	int i;

	for (i = 0; i < d->halen; i++) {
		if (d->idlist[i] == c->conf_hash)
			pick = c->conf_hash;
		else if (!pick && nvme_auth_hmac_hash_len(d->idlist[i]))
			pick = d->idlist[i];
		if (pick == c->conf_hash)
			break;
	}
	if (!pick)
		return NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE;
	c->hash_id = pick;
	c->hl = (uint8_t)nvme_auth_hmac_hash_len(pick);
	return 0;
}

/*
 * The configured group if the host offers it, else the host's first known
 * one, but never the NULL group in place of a configured FFDHE group (no
 * silent downgrade).
 */
static uint8_t
ctrl_pick_dhgroup(struct nvme_auth_ctrl *c,
		  const struct nvmf_auth_dhchap_protocol_descriptor *d)
{
	int i, pick = -1;
	uint8_t id;

	for (i = 0; i < d->dhlen; i++) {
		id = d->idlist[NVME_AUTH_DHCHAP_MAX_HASH_IDS + i];
		if (id == c->conf_dhgid) {
			pick = id;
			break;
		}
		if (pick < 0 && nvme_auth_dhgroup_name(id) &&
		    (id != NVME_AUTH_DHGROUP_NULL ||
		     c->conf_dhgid == NVME_AUTH_DHGROUP_NULL))
			pick = id;
	}
	if (pick < 0)
		return NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE;
	c->dhgid = (uint8_t)pick;
	return 0;
}

/* Negotiate: the kernel's nvmet_auth_negotiate() (a reason or 0). */
static uint8_t ctrl_negotiate(struct nvme_auth_ctrl *c, const uint8_t *msg,
			      size_t tl)
{
	struct nvmf_auth_dhchap_negotiate_data n;
	struct nvmf_auth_dhchap_protocol_descriptor d;
	uint8_t reason;

	if (tl < sizeof(n))
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	memcpy(&n, msg, sizeof(n));
	c->tid = le16toh(n.t_id);
	if (n.sc_c != NVME_AUTH_SECP_NOSC)
		return NVME_AUTH_DHCHAP_FAILURE_CONCAT_MISMATCH;
	if (n.napd != 1)
		return NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE;
	if (tl != sizeof(n) + sizeof(d))
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	memcpy(&d, msg + sizeof(n), sizeof(d));
	if (d.authid != NVME_AUTH_DHCHAP_AUTH_ID ||
	    d.halen > NVME_AUTH_DHCHAP_MAX_HASH_IDS ||
	    d.dhlen > NVME_AUTH_DHCHAP_MAX_DH_IDS)
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	reason = ctrl_pick_hash(c, &d);
	if (!reason)
		reason = ctrl_pick_dhgroup(c, &d);
	return reason;
}

/* The challenge a response covers: C as it is, or augmented. */
static int ctrl_challenge_value(const struct nvme_auth_ctrl *c,
				const uint8_t *ch, uint8_t *aug,
				const uint8_t **value)
{
	*value = ch;
	if (!c->skey_len)
		return 0;
	*value = aug;
	return nvme_auth_augmented_challenge(c->hash_id, c->skey, c->skey_len,
					     ch, aug, c->hl);
}

/* Whether the Reply's response is the host's (a reason or 0). */
static uint8_t ctrl_check_host(struct nvme_auth_ctrl *c, const uint8_t *rval)
{
	uint8_t aug[NVME_AUTH_MAX_DIGEST_SIZE], want[NVME_AUTH_MAX_DIGEST_SIZE];
	struct nvme_auth_resp_args a = {
		.hmac_id = c->hash_id,
		.key = &c->host_key,
		.seqnum = c->s1,
		.tid = c->tid,
		.hostnqn = c->hostnqn,
		.subsysnqn = c->subsysnqn,
	};
	uint8_t reason = NVME_AUTH_DHCHAP_FAILURE_FAILED;

	if (!ctrl_challenge_value(c, c->c1, aug, &a.challenge) &&
	    !nvme_auth_host_response(&a, want) &&
	    !CRYPTO_memcmp(want, rval, c->hl))
		reason = 0;
	nvme_auth_wipe(aug, sizeof(aug));
	nvme_auth_wipe(want, sizeof(want));
	return reason;
}

/* The host's DH value: the session key (a reason or 0). */
static uint8_t ctrl_sesskey(struct nvme_auth_ctrl *c, const uint8_t *dhv,
			    size_t dhvlen)
{
	size_t glen = nvme_auth_dhgroup_len(c->dhgid);

	if (c->dhgid == NVME_AUTH_DHGROUP_NULL)
		return dhvlen ? NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD : 0;
	if (dhvlen != glen)
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	if (nvme_auth_dh_shared(&c->dh, dhv, dhvlen, c->skey, glen))
		return NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE;
	c->skey_len = glen;
	nvme_auth_dh_free(&c->dh);
	return 0;
}

/* Reply: the kernel's nvmet_auth_reply() (a reason or 0). */
static uint8_t ctrl_reply(struct nvme_auth_ctrl *c, const uint8_t *msg,
			  size_t tl)
{
	struct nvmf_auth_dhchap_reply_data r;
	size_t dhvlen;
	uint8_t reason;

	if (tl < sizeof(r))
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	memcpy(&r, msg, sizeof(r));
	dhvlen = le16toh(r.dhvlen);
	if (sizeof(r) + 2 * (size_t)r.hl + dhvlen != tl || r.cvalid > 1)
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	if (r.hl != c->hl)
		return NVME_AUTH_DHCHAP_FAILURE_FAILED;
	reason = ctrl_sesskey(c, msg + sizeof(r) + 2 * (size_t)r.hl, dhvlen);
	if (!reason)
		reason = ctrl_check_host(c, msg + sizeof(r));
	if (reason)
		return reason;
	c->s2 = le32toh(r.seqnum);
	/* S2 = 0: no controller authentication, whatever cvalid says */
	c->bidirectional = r.cvalid && c->s2;
	if (!c->bidirectional)
		return 0;
	if (!c->has_ctrl_key)
		return NVME_AUTH_DHCHAP_FAILURE_FAILED;
	memcpy(c->c2, msg + sizeof(r) + c->hl, c->hl);
	return 0;
}

static bool ctrl_final_failure(const struct nvme_auth_ctrl *c)
{
	return c->step == CTRL_DONE && c->status == NVME_AUTH_FAILED;
}

/* A DH-HMAC-CHAP message in the step that expects it (a reason or 0). */
static uint8_t ctrl_step_msg(struct nvme_auth_ctrl *c, uint8_t type, uint8_t id,
			     const uint8_t *msg, size_t tl)
{
	uint16_t tid;

	memcpy(&tid, msg + 4, sizeof(tid));
	if (type != NVME_AUTH_DHCHAP_MESSAGES ||
	    (id == NVME_AUTH_DHCHAP_MESSAGE_REPLY &&
	     c->step != CTRL_WAIT_REPLY) ||
	    (id == NVME_AUTH_DHCHAP_MESSAGE_SUCCESS2 &&
	     c->step != CTRL_WAIT_SUCCESS2) ||
	    (id != NVME_AUTH_DHCHAP_MESSAGE_REPLY &&
	     id != NVME_AUTH_DHCHAP_MESSAGE_SUCCESS2))
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE;
	if (le16toh(tid) != c->tid)
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	if (id == NVME_AUTH_DHCHAP_MESSAGE_REPLY) {
		uint8_t reason = ctrl_reply(c, msg, tl);

		if (!reason)
			c->step = CTRL_SEND_SUCCESS1;
		return reason;
	}
	if (tl != sizeof(struct nvmf_auth_dhchap_success2_data))
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	ctrl_end(c, NVME_AUTH_SUCCESS, 0);
	return 0;
}

/* The host's Failure2: the transaction ends with its reason. */
static uint8_t ctrl_failure2(struct nvme_auth_ctrl *c, const uint8_t *msg,
			     size_t tl)
{
	struct nvmf_auth_dhchap_failure_data f;

	if (c->step != CTRL_WAIT_REPLY && c->step != CTRL_WAIT_SUCCESS2)
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE;
	if (tl != sizeof(f))
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	memcpy(&f, msg, sizeof(f));
	if (le16toh(f.t_id) != c->tid)
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	ctrl_end(c, NVME_AUTH_FAILED, f.rescode_exp);
	return 0;
}

/**
 * nvme_auth_ctrl_send() - a host's AUTH_Send payload
 * @c: the engine
 * @msg: the payload
 * @tl: its length (the command's TL): exactly the message's length
 *
 * A Negotiate starts a transaction in any state but a failed one (a host
 * re-authenticates that way; the queue stays authenticated until a
 * transaction fails); a Reply or a Success2 must come in its step, with
 * the transaction's id.  Every field is checked against @tl before use;
 * nothing past @msg + @tl is read.  A message that fails a check ends the
 * transaction: the next AUTH_Receive carries Failure1 with the reason
 * (NVME_AUTH_DHCHAP_FAILURE_*) the kernel gives.
 *
 * Return: 0 when the payload was taken (whatever its verdict: read it with
 * nvme_auth_ctrl_status()); -EINVAL for a missing argument or a zero @tl
 * (the kernel's Invalid Field in Command); -EPERM once the transaction
 * has failed for good.
 */
int nvme_auth_ctrl_send(struct nvme_auth_ctrl *c, const void *msg, size_t tl)
{
	const uint8_t *m = msg;
	uint8_t reason;

	if (!c || !msg || !tl || !c->host_key.len)
		return -EINVAL;
	if (ctrl_final_failure(c) || c->step == CTRL_SEND_FAILURE1)
		return -EPERM;
	if (tl < 6) {
		reason = NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	} else if (m[0] == NVME_AUTH_COMMON_MESSAGES &&
		   m[1] == NVME_AUTH_DHCHAP_MESSAGE_NEGOTIATE) {
		ctrl_forget(c);
		c->status = NVME_AUTH_IN_PROGRESS;
		c->reason = 0;
		c->bidirectional = false;
		reason = ctrl_negotiate(c, m, tl);
		if (!reason)
			c->step = CTRL_SEND_CHALLENGE;
	} else if (m[0] == NVME_AUTH_COMMON_MESSAGES &&
		   m[1] == NVME_AUTH_DHCHAP_MESSAGE_FAILURE2) {
		reason = ctrl_failure2(c, m, tl);
	} else {
		reason = ctrl_step_msg(c, m[0], m[1], m, tl);
	}
	if (reason)
		ctrl_fail(c, reason);
	return 0;
}

static ssize_t ctrl_failure1(struct nvme_auth_ctrl *c, uint8_t *out)
{
	struct nvmf_auth_dhchap_failure_data f = { 0 };

	f.auth_type = NVME_AUTH_COMMON_MESSAGES;
	f.auth_id = NVME_AUTH_DHCHAP_MESSAGE_FAILURE1;
	f.t_id = htole16(c->tid);
	f.rescode = NVME_AUTH_DHCHAP_FAILURE_REASON_FAILED;
	f.rescode_exp = c->reason;
	memcpy(out, &f, sizeof(f));
	c->step = CTRL_DONE;
	return sizeof(f);
}

/* Challenge: S1, C1 and our DH value (the kernel's nvmet_auth_challenge). */
static ssize_t ctrl_challenge(struct nvme_auth_ctrl *c, uint8_t *out, size_t al)
{
	struct nvmf_auth_dhchap_challenge_data ch = { 0 };
	size_t glen = nvme_auth_dhgroup_len(c->dhgid);
	size_t need = sizeof(ch) + c->hl + glen;

	if (al < need)
		return -ENOSPC;
	c->s1 = nvme_auth_get_seqnum();
	if (rdmarw__auth_random(c->c1, c->hl) ||
	    (glen &&
	     (nvme_auth_dh_generate(&c->dh, c->dhgid) ||
	      nvme_auth_dh_public(&c->dh, out + sizeof(ch) + c->hl, glen)))) {
		ctrl_fail(c, NVME_AUTH_DHCHAP_FAILURE_FAILED);
		return ctrl_failure1(c, out);
	}
	ch.auth_type = NVME_AUTH_DHCHAP_MESSAGES;
	ch.auth_id = NVME_AUTH_DHCHAP_MESSAGE_CHALLENGE;
	ch.t_id = htole16(c->tid);
	ch.hl = c->hl;
	ch.hashid = c->hash_id;
	ch.dhgid = c->dhgid;
	ch.dhvlen = htole16((uint16_t)glen);
	ch.seqnum = htole32(c->s1);
	memcpy(out, &ch, sizeof(ch));
	memcpy(out + sizeof(ch), c->c1, c->hl);
	c->step = CTRL_WAIT_REPLY;
	return (ssize_t)need;
}

/* The controller's response to C2, at @rval (0 or -errno). */
static int ctrl_response(struct nvme_auth_ctrl *c, uint8_t *rval)
{
	uint8_t aug[NVME_AUTH_MAX_DIGEST_SIZE];
	struct nvme_auth_resp_args a = {
		.hmac_id = c->hash_id,
		.key = &c->ctrl_key,
		.seqnum = c->s2,
		.tid = c->tid,
		.hostnqn = c->hostnqn,
		.subsysnqn = c->subsysnqn,
	};
	int ret;

	ret = ctrl_challenge_value(c, c->c2, aug, &a.challenge);
	if (!ret)
		ret = nvme_auth_ctrl_response(&a, rval);
	nvme_auth_wipe(aug, sizeof(aug));
	return ret;
}

/* Success1, with our response when the host asked for it. */
static ssize_t ctrl_success1(struct nvme_auth_ctrl *c, uint8_t *out, size_t al)
{
	struct nvmf_auth_dhchap_success1_data s = { 0 };
	size_t need = sizeof(s) + (c->bidirectional ? c->hl : 0);

	if (al < need)
		return -ENOSPC;
	if (c->bidirectional && ctrl_response(c, out + sizeof(s))) {
		ctrl_fail(c, NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE);
		return ctrl_failure1(c, out);
	}
	s.auth_type = NVME_AUTH_DHCHAP_MESSAGES;
	s.auth_id = NVME_AUTH_DHCHAP_MESSAGE_SUCCESS1;
	s.t_id = htole16(c->tid);
	s.hl = c->hl;
	s.rvalid = c->bidirectional ? 1 : 0;
	memcpy(out, &s, sizeof(s));
	if (c->bidirectional) {
		ctrl_forget(c);
		c->step = CTRL_WAIT_SUCCESS2;
	} else {
		ctrl_end(c, NVME_AUTH_SUCCESS, 0);
	}
	return (ssize_t)need;
}

/**
 * nvme_auth_ctrl_receive() - the controller's AUTH_Receive payload
 * @c: the engine
 * @out: where the message goes
 * @al: bytes at @out (the command's AL)
 *
 * Writes the message the transaction is at: Challenge after a Negotiate,
 * Success1 after a good Reply, Failure1 after a failed check.  Asked at
 * any other point (no message due), the transaction fails and Failure1
 * (reason FAILED) is the answer, as the kernel's.  Nothing past
 * @out + @al is written; bytes after the returned length are untouched
 * (the transport zero-fills the rest of AL).
 *
 * Return: the message's length; -EINVAL for a missing argument;
 * -ENOSPC when @al is too small for it (the engine is unchanged then).
 */
ssize_t nvme_auth_ctrl_receive(struct nvme_auth_ctrl *c, void *out, size_t al)
{
	if (!c || !out || !c->host_key.len)
		return -EINVAL;
	switch (c->step) {
	case CTRL_SEND_CHALLENGE:
		return ctrl_challenge(c, out, al);
	case CTRL_SEND_SUCCESS1:
		return ctrl_success1(c, out, al);
	default:
		break;
	}
	if (al < sizeof(struct nvmf_auth_dhchap_failure_data))
		return -ENOSPC;
	if (c->status != NVME_AUTH_FAILED)
		ctrl_fail(c, NVME_AUTH_DHCHAP_FAILURE_FAILED);
	return ctrl_failure1(c, out);
}

/**
 * nvme_auth_ctrl_status() - where the controller's transaction stands
 * @c: the engine
 * @reason: if not NULL, the failure's reason code (the controller's own,
 *	sent in Failure1, or the host's from its Failure2), 0 unless failed
 *
 * Return: NVME_AUTH_IN_PROGRESS, NVME_AUTH_SUCCESS or NVME_AUTH_FAILED
 * (also for a NULL or uninitialised engine).
 */
enum nvme_auth_status nvme_auth_ctrl_status(const struct nvme_auth_ctrl *c,
					    uint8_t *reason)
{
	enum nvme_auth_status s = NVME_AUTH_FAILED;
	uint8_t r = NVME_AUTH_DHCHAP_FAILURE_FAILED;

	if (c && c->host_key.len) {
		s = (enum nvme_auth_status)c->status;
		r = s == NVME_AUTH_FAILED ? c->reason : 0;
	}
	if (reason)
		*reason = r;
	return s;
}

/**
 * nvme_auth_ctrl_authenticated() - whether the queue may carry commands
 * @c: the engine
 *
 * True from the end of a successful transaction until a later one fails
 * (a re-authentication in progress keeps it).
 *
 * Return: true when the host is authenticated on this queue.
 */
bool nvme_auth_ctrl_authenticated(const struct nvme_auth_ctrl *c)
{
	return c && c->host_key.len && c->authenticated;
}

/**
 * nvme_auth_ctrl_failure_due() - whether a Failure1 waits for AUTH_Receive
 * @c: the engine
 *
 * A transport reads it after AUTH_Send: a failed transaction with a
 * Failure1 due ends when that message has gone out; one without (the
 * host sent Failure2) ends at once.
 *
 * Return: true when the next AUTH_Receive carries a Failure1.
 */
bool nvme_auth_ctrl_failure_due(const struct nvme_auth_ctrl *c)
{
	return c && c->host_key.len && c->step == CTRL_SEND_FAILURE1;
}

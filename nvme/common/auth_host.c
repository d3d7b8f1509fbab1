// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host's DH-HMAC-CHAP engine, the steps of the kernel's
 * nvme_queue_auth_work() (drivers/nvme/host/auth.c) without the transport:
 *
 *   nvme_auth_host_negotiate()  -> Negotiate        (AUTH_Send)
 *   nvme_auth_host_recv(Challenge) -> Reply         (AUTH_Receive, Send)
 *   nvme_auth_host_recv(Success1)  -> Success2 or nothing
 *
 * Any check that fails on a Challenge or Success1 ends the transaction
 * with a Failure2 to send (reason code as the kernel's); a Failure1 from
 * the controller, or a message that is not the one expected, ends it with
 * nothing to send, as the kernel's host does.
 */
#include "auth_int.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

enum host_step {
	HOST_IDLE,
	HOST_WAIT_CHALLENGE,
	HOST_WAIT_SUCCESS1,
	HOST_DONE,
};

/* Forget the transaction's secrets. */
static void host_forget(struct nvme_auth_host *h)
{
	nvme_auth_wipe(h->c1, sizeof(h->c1));
	nvme_auth_wipe(h->c2, sizeof(h->c2));
	nvme_auth_wipe(h->skey, sizeof(h->skey));
	h->skey_len = 0;
}

static void host_end(struct nvme_auth_host *h, uint8_t status, uint8_t reason)
{
	host_forget(h);
	h->step = HOST_DONE;
	h->status = status;
	h->reason = reason;
}

/**
 * nvme_auth_host_clear() - forget an engine's keys and secrets
 * @h: the engine (may be NULL)
 *
 * Leaves it as nvme_auth_host_init() found it: all zero.
 */
void nvme_auth_host_clear(struct nvme_auth_host *h)
{
	if (h)
		nvme_auth_wipe(h, sizeof(*h));
}

/**
 * nvme_auth_host_init() - set up the host's engine for one queue
 * @h: the engine
 * @p: the NQNs, the host key and, for bidirectional authentication, the
 *	controller key (DHHC-1 strings), and the first transaction id
 *
 * Both keys are parsed and transformed here (host key with the host NQN,
 * controller key with the subsystem NQN), as the kernel host does when
 * it computes a response.
 *
 * Return: 0; -EINVAL for a missing argument, a bad NQN or a malformed key;
 * -ENOKEY without a host key; -EKEYREJECTED for a key whose CRC does not
 * match.  The engine is cleared on error.
 */
int nvme_auth_host_init(struct nvme_auth_host *h,
			const struct nvme_auth_params *p)
{
	int ret;

	if (!h || !p)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	ret = rdmarw__auth_copy_nqn(h->hostnqn, p->hostnqn);
	if (!ret)
		ret = rdmarw__auth_copy_nqn(h->subsysnqn, p->subsysnqn);
	if (!ret && !p->host_secret)
		ret = -ENOKEY;
	if (!ret)
		ret = rdmarw__auth_load_key(p->host_secret, h->hostnqn,
					    &h->host_key);
	if (!ret && p->ctrl_secret) {
		ret = rdmarw__auth_load_key(p->ctrl_secret, h->subsysnqn,
					    &h->ctrl_key);
		h->bidirectional = true;
	}
	if (ret) {
		nvme_auth_host_clear(h);
		return ret;
	}
	h->next_tid = p->transaction;
	h->step = HOST_IDLE;
	return 0;
}

#define NEGOTIATE_LEN                                     \
	(sizeof(struct nvmf_auth_dhchap_negotiate_data) + \
	 sizeof(struct nvmf_auth_dhchap_protocol_descriptor))

/**
 * nvme_auth_host_negotiate() - start a transaction: the Negotiate message
 * @h: an initialised engine (in any state: a new transaction restarts it,
 *	which is how a host re-authenticates)
 * @out: where the message goes
 * @size: bytes at @out
 *
 * The message offers what the kernel's host offers: DH-HMAC-CHAP with
 * SHA-256/384/512 and the NULL and ffdhe2048..8192 groups, no secure
 * channel concatenation.  Its transaction id is the next one.
 *
 * Return: the message's length (72) to send with AUTH_Send; -EINVAL for a
 * missing argument or an engine not initialised; -ENOSPC when @size is
 * under 72.
 */
ssize_t nvme_auth_host_negotiate(struct nvme_auth_host *h, void *out,
				 size_t size)
{
	struct nvmf_auth_dhchap_negotiate_data n = { 0 };
	struct nvmf_auth_dhchap_protocol_descriptor d = { 0 };
	int i;

	if (!h || !out || !h->host_key.len)
		return -EINVAL;
	if (size < NEGOTIATE_LEN)
		return -ENOSPC;
	host_forget(h);
	h->tid = h->next_tid++;
	h->status = NVME_AUTH_IN_PROGRESS;
	h->reason = 0;
	n.auth_type = NVME_AUTH_COMMON_MESSAGES;
	n.auth_id = NVME_AUTH_DHCHAP_MESSAGE_NEGOTIATE;
	n.t_id = htole16(h->tid);
	n.sc_c = NVME_AUTH_SECP_NOSC;
	n.napd = 1;
	d.authid = NVME_AUTH_DHCHAP_AUTH_ID;
	d.halen = 3;
	d.dhlen = 6;
	for (i = 0; i < 3; i++)
		d.idlist[i] = (uint8_t)(NVME_AUTH_HASH_SHA256 + i);
	for (i = 0; i < 6; i++)
		d.idlist[NVME_AUTH_DHCHAP_MAX_HASH_IDS + i] =
			(uint8_t)(NVME_AUTH_DHGROUP_NULL + i);
	memcpy(out, &n, sizeof(n));
	memcpy((uint8_t *)out + sizeof(n), &d, sizeof(d));
	h->step = HOST_WAIT_CHALLENGE;
	return (ssize_t)NEGOTIATE_LEN;
}

/* Failure2 with the reason; ends the transaction. */
static ssize_t host_fail(struct nvme_auth_host *h, uint8_t reason, void *out)
{
	struct nvmf_auth_dhchap_failure_data f = { 0 };

	f.auth_type = NVME_AUTH_COMMON_MESSAGES;
	f.auth_id = NVME_AUTH_DHCHAP_MESSAGE_FAILURE2;
	f.t_id = htole16(h->tid);
	f.rescode = NVME_AUTH_DHCHAP_FAILURE_REASON_FAILED;
	f.rescode_exp = reason;
	memcpy(out, &f, sizeof(f));
	host_end(h, NVME_AUTH_FAILED, reason);
	return sizeof(f);
}

/*
 * The kernel's nvme_auth_receive_validate(): a Failure1 ends the
 * transaction with the controller's reason; anything but the expected
 * message of this transaction ends it as an incorrect message.  Either way
 * the host sends nothing.  Returns true when the transaction ended.
 */
static bool host_unexpected(struct nvme_auth_host *h, const uint8_t *msg,
			    size_t len, uint8_t expected)
{
	struct nvmf_auth_dhchap_failure_data f;
	uint8_t reason = NVME_AUTH_DHCHAP_FAILURE_INCORRECT_MESSAGE;

	if (len < sizeof(f)) {
		host_end(h, NVME_AUTH_FAILED, reason);
		return true;
	}
	memcpy(&f, msg, sizeof(f));
	if (f.auth_type == NVME_AUTH_COMMON_MESSAGES &&
	    f.auth_id == NVME_AUTH_DHCHAP_MESSAGE_FAILURE1) {
		if (le16toh(f.t_id) == h->tid)
			reason = f.rescode_exp;
		host_end(h, NVME_AUTH_FAILED, reason);
		return true;
	}
	if (f.auth_type != NVME_AUTH_DHCHAP_MESSAGES || f.auth_id != expected ||
	    le16toh(f.t_id) != h->tid) {
		host_end(h, NVME_AUTH_FAILED, reason);
		return true;
	}
	return false;
}

/* The challenge the response covers: C as it is, or augmented. */
static int host_challenge_value(const struct nvme_auth_host *h,
				const uint8_t *c, uint8_t *aug,
				const uint8_t **value)
{
	*value = c;
	if (!h->skey_len)
		return 0;
	*value = aug;
	return nvme_auth_augmented_challenge(h->hash_id, h->skey, h->skey_len,
					     c, aug, h->hl);
}

/* The challenge's fixed header: hash, group and lengths (a reason or 0). */
static uint8_t
host_check_challenge(const struct nvmf_auth_dhchap_challenge_data *c,
		     size_t len)
{
	size_t hl = nvme_auth_hmac_hash_len(c->hashid);
	size_t dhvlen = le16toh(c->dhvlen);

	if (!hl || c->hl != hl)
		return NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE;
	if (!nvme_auth_dhgroup_name(c->dhgid))
		return NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE;
	if (c->dhgid == NVME_AUTH_DHGROUP_NULL) {
		if (dhvlen)
			return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	} else if (!dhvlen) {
		return NVME_AUTH_DHCHAP_FAILURE_DHGROUP_UNUSABLE;
	} else if (dhvlen != nvme_auth_dhgroup_len(c->dhgid)) {
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	}
	if (sizeof(*c) + hl + dhvlen > len)
		return NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	return 0;
}

/* Our DH value into @dhv, the shared secret into h->skey (a reason or 0). */
static uint8_t host_exponential(struct nvme_auth_host *h, const uint8_t *peer,
				uint8_t *dhv)
{
	size_t glen = nvme_auth_dhgroup_len(h->dhgid);
	struct nvme_auth_dh dh;
	uint8_t reason = 0;

	if (nvme_auth_dh_generate(&dh, h->dhgid) ||
	    nvme_auth_dh_public(&dh, dhv, glen))
		reason = NVME_AUTH_DHCHAP_FAILURE_FAILED;
	else if (nvme_auth_dh_shared(&dh, peer, glen, h->skey, glen))
		reason = NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	else
		h->skey_len = glen;
	nvme_auth_dh_free(&dh);
	return reason;
}

/* The Reply's response (and C2 when bidirectional) at @rval. */
static uint8_t host_response(struct nvme_auth_host *h, uint8_t *rval)
{
	uint8_t aug[NVME_AUTH_MAX_DIGEST_SIZE];
	struct nvme_auth_resp_args a = {
		.hmac_id = h->hash_id,
		.key = &h->host_key,
		.seqnum = h->s1,
		.tid = h->tid,
		.hostnqn = h->hostnqn,
		.subsysnqn = h->subsysnqn,
	};
	int ret;

	ret = host_challenge_value(h, h->c1, aug, &a.challenge);
	if (!ret)
		ret = nvme_auth_host_response(&a, rval);
	if (!ret && h->bidirectional) {
		ret = rdmarw__auth_random(h->c2, h->hl);
		h->s2 = nvme_auth_get_seqnum();
	}
	memcpy(rval + h->hl, h->c2, h->hl); /* zeros when unidirectional */
	nvme_auth_wipe(aug, sizeof(aug));
	return ret ? NVME_AUTH_DHCHAP_FAILURE_FAILED : 0;
}

/* Challenge -> Reply; returns the Reply's length or 0 with a reason. */
static size_t host_challenge(struct nvme_auth_host *h, const uint8_t *msg,
			     size_t len, uint8_t *out, uint8_t *reason)
{
	struct nvmf_auth_dhchap_challenge_data c;
	struct nvmf_auth_dhchap_reply_data r = { 0 };
	size_t glen, rlen;

	if (len < sizeof(c)) {
		*reason = NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
		return 0;
	}
	memcpy(&c, msg, sizeof(c));
	*reason = host_check_challenge(&c, len);
	if (*reason)
		return 0;
	h->hash_id = c.hashid;
	h->hl = c.hl;
	h->dhgid = c.dhgid;
	h->s1 = le32toh(c.seqnum);
	h->s2 = 0;
	memcpy(h->c1, msg + sizeof(c), h->hl);
	glen = nvme_auth_dhgroup_len(h->dhgid);
	rlen = sizeof(r) + 2 * (size_t)h->hl + glen;
	if (glen)
		*reason = host_exponential(h, msg + sizeof(c) + h->hl,
					   out + sizeof(r) + 2 * h->hl);
	if (!*reason)
		*reason = host_response(h, out + sizeof(r));
	if (*reason)
		return 0;
	r.auth_type = NVME_AUTH_DHCHAP_MESSAGES;
	r.auth_id = NVME_AUTH_DHCHAP_MESSAGE_REPLY;
	r.t_id = htole16(h->tid);
	r.hl = h->hl;
	r.cvalid = h->bidirectional ? 1 : 0;
	r.dhvlen = htole16((uint16_t)glen);
	r.seqnum = htole32(h->s2);
	memcpy(out, &r, sizeof(r));
	h->step = HOST_WAIT_SUCCESS1;
	return rlen;
}

/* Whether Success1's response is the controller's (a reason or 0). */
static uint8_t host_check_ctrl(struct nvme_auth_host *h, const uint8_t *rval)
{
	uint8_t aug[NVME_AUTH_MAX_DIGEST_SIZE], want[NVME_AUTH_MAX_DIGEST_SIZE];
	struct nvme_auth_resp_args a = {
		.hmac_id = h->hash_id,
		.key = &h->ctrl_key,
		.seqnum = h->s2,
		.tid = h->tid,
		.hostnqn = h->hostnqn,
		.subsysnqn = h->subsysnqn,
	};
	uint8_t reason = NVME_AUTH_DHCHAP_FAILURE_FAILED;

	if (!host_challenge_value(h, h->c2, aug, &a.challenge) &&
	    !nvme_auth_ctrl_response(&a, want) &&
	    !CRYPTO_memcmp(want, rval, h->hl))
		reason = 0;
	nvme_auth_wipe(aug, sizeof(aug));
	nvme_auth_wipe(want, sizeof(want));
	return reason;
}

/* Success1 -> Success2 (bidirectional) or nothing; a reason or 0. */
static size_t host_success1(struct nvme_auth_host *h, const uint8_t *msg,
			    size_t len, uint8_t *out, uint8_t *reason)
{
	struct nvmf_auth_dhchap_success1_data s;
	struct nvmf_auth_dhchap_success2_data s2 = { 0 };

	*reason = NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
	if (len < sizeof(s))
		return 0;
	memcpy(&s, msg, sizeof(s));
	if (s.hl != h->hl) {
		*reason = NVME_AUTH_DHCHAP_FAILURE_HASH_UNUSABLE;
		return 0;
	}
	if (s.rvalid > 1 || (s.rvalid && !h->bidirectional))
		return 0;
	if (!h->bidirectional) {
		*reason = 0;
		host_end(h, NVME_AUTH_SUCCESS, 0);
		return 0;
	}
	/* asked to, the controller must prove it knows its key */
	*reason = NVME_AUTH_DHCHAP_FAILURE_FAILED;
	if (!s.rvalid)
		return 0;
	if (len < sizeof(s) + h->hl) {
		*reason = NVME_AUTH_DHCHAP_FAILURE_INCORRECT_PAYLOAD;
		return 0;
	}
	*reason = host_check_ctrl(h, msg + sizeof(s));
	if (*reason)
		return 0;
	s2.auth_type = NVME_AUTH_DHCHAP_MESSAGES;
	s2.auth_id = NVME_AUTH_DHCHAP_MESSAGE_SUCCESS2;
	s2.t_id = htole16(h->tid);
	memcpy(out, &s2, sizeof(s2));
	host_end(h, NVME_AUTH_SUCCESS, 0);
	return sizeof(s2);
}

/**
 * nvme_auth_host_recv() - the controller's message, and the host's answer
 * @h: an engine waiting for a Challenge or a Success1
 * @msg: the AUTH_Receive data (may be longer than the message: the
 *	transport's allocation length, zero-filled)
 * @len: bytes at @msg
 * @out: where the answer goes
 * @size: bytes at @out: NVME_AUTH_MAX_MSG at least
 *
 * Everything in @msg is checked before use: message type and id, the
 * transaction id, the hash and group ids against the lengths they imply,
 * hl and dhvlen against @len, the controller's DH value, and in Success1
 * the controller's response when the host asked for one (bidirectional).
 * Nothing past @msg + @len is read, nothing past @out + @size written.
 *
 * Return: the length of the message to send with AUTH_Send (a Reply, a
 * Success2 or a Failure2), or 0 when there is none; nvme_auth_host_status()
 * tells whether the transaction goes on (then an AUTH_Receive follows), or
 * ended.  -EINVAL for a missing argument or an engine that waits for
 * nothing; -ENOSPC when @size is too small (the engine is unchanged then).
 */
ssize_t nvme_auth_host_recv(struct nvme_auth_host *h, const void *msg,
			    size_t len, void *out, size_t size)
{
	uint8_t expected, reason = 0;
	size_t n;

	if (!h || !msg || !out)
		return -EINVAL;
	if (h->step != HOST_WAIT_CHALLENGE && h->step != HOST_WAIT_SUCCESS1)
		return -EINVAL;
	if (size < NVME_AUTH_MAX_MSG)
		return -ENOSPC;
	expected = h->step == HOST_WAIT_CHALLENGE ?
			   NVME_AUTH_DHCHAP_MESSAGE_CHALLENGE :
			   NVME_AUTH_DHCHAP_MESSAGE_SUCCESS1;
	if (host_unexpected(h, msg, len, expected))
		return 0;
	if (expected == NVME_AUTH_DHCHAP_MESSAGE_CHALLENGE)
		n = host_challenge(h, msg, len, out, &reason);
	else
		n = host_success1(h, msg, len, out, &reason);
	if (reason)
		return host_fail(h, reason, out);
	return (ssize_t)n;
}

/**
 * nvme_auth_host_status() - where the host's transaction stands
 * @h: the engine
 * @reason: if not NULL, the failure's reason code
 *	(NVME_AUTH_DHCHAP_FAILURE_*: the host's own, or the controller's from
 *	its Failure1), 0 unless failed
 *
 * Return: NVME_AUTH_IN_PROGRESS, NVME_AUTH_SUCCESS (the controller
 * accepted the host and, when asked, proved itself) or NVME_AUTH_FAILED
 * (also for a NULL or uninitialised engine).
 */
enum nvme_auth_status nvme_auth_host_status(const struct nvme_auth_host *h,
					    uint8_t *reason)
{
	enum nvme_auth_status s = NVME_AUTH_FAILED;
	uint8_t r = NVME_AUTH_DHCHAP_FAILURE_FAILED;

	if (h && h->host_key.len) {
		s = (enum nvme_auth_status)h->status;
		r = s == NVME_AUTH_FAILED ? h->reason : 0;
	}
	if (reason)
		*reason = r;
	return s;
}

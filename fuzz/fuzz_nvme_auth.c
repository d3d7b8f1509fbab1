// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The controller's DH-HMAC-CHAP engine (nvme/common) against whatever a
 * host may send: each input is a configuration and a few AUTH_Send and
 * AUTH_Receive commands, either written by the fuzzer as they are, or the
 * messages of a genuine host engine changed in flight.  The oracle:
 *   - nvme_auth_ctrl_receive() writes at most AL bytes and answers with a
 *     message whose header is a Challenge, a Success1 or a Failure1;
 *   - in the first mode the controller never ends authenticated (the
 *     fuzzer does not know how to compute a response), and in either
 *     mode it never is after a Failure1;
 *   - in the second mode, when nothing changed in flight, both ends
 *     succeed;
 *   - statuses stay in range; ASan and UBSan catch the rest (each
 *     AUTH_Send payload lives in a heap buffer of exactly its length).
 *
 * Input: u8 cfg, then at most 16 of { u8 op; ... }:
 *   cfg: hash 1 + (cfg & 3) % 3; bit 2: ffdhe2048, else the NULL group;
 *   bit 3: the controller has a controller key; bit 4: the second mode
 *   (a genuine host, bidirectional when bit 5).
 *   first mode: op bit 0 clear: AUTH_Send { u16 len; len % 1300 bytes };
 *   set: AUTH_Receive with AL = 1 + ((op >> 1) * 37) % 1400.
 *   second mode: { u8 op; u16 off; u8 xor; u8 cut }: the next message in
 *   flight gets byte off % len xor'ed, and is cut to len - cut % 8 when
 *   op bit 0 is set; when no message changed, both ends must succeed
 *   (the controller is given the controller key the host asks for).
 */
#include "fuzz_common.h"

#include "auth.h"

#include <errno.h>

#define MAX_OPS 16

static const char host_key[] =
	"DHHC-1:01:vpq37fuC3dXlrFdBeL3l55rZX5frlPLAL6XiWUcBs2JLmx7/:";
static const char ctrl_key[] =
	"DHHC-1:00:iIWo9tHjp1G1MJWa+ZzeFMhtZeAfajZ2qwsCC36LpKXSmCbi:";
#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:fuzz-host"
#define SUBNQN "nqn.2014-08.org.nvmexpress:fuzz-subsys"

static void check_answer(const struct nvme_auth_ctrl *c, const u8 *out,
			 ssize_t n, size_t al)
{
	uint8_t type, id;

	if (n == -ENOSPC)
		return;
	FUZZ_CHECK(n >= 8 && (size_t)n <= al, "receive: %zd for AL %zu", n, al);
	type = out[0];
	id = out[1];
	FUZZ_CHECK((type == NVME_AUTH_DHCHAP_MESSAGES &&
		    (id == NVME_AUTH_DHCHAP_MESSAGE_CHALLENGE ||
		     id == NVME_AUTH_DHCHAP_MESSAGE_SUCCESS1)) ||
			   (type == NVME_AUTH_COMMON_MESSAGES &&
			    id == NVME_AUTH_DHCHAP_MESSAGE_FAILURE1),
		   "receive: message %02x/%02x", type, id);
	if (id == NVME_AUTH_DHCHAP_MESSAGE_FAILURE1)
		FUZZ_CHECK(!nvme_auth_ctrl_authenticated(c),
			   "authenticated after Failure1");
}

static void send_copy(struct nvme_auth_ctrl *c, const u8 *msg, size_t len)
{
	u8 *m = malloc(len ? len : 1);
	int ret;

	FUZZ_CHECK(m, "malloc");
	memcpy(m, msg, len);
	ret = nvme_auth_ctrl_send(c, m, len);
	FUZZ_CHECK(ret == 0 || ret == -EPERM || (ret == -EINVAL && !len),
		   "send: %d", ret);
	free(m);
}

static void raw_mode(struct nvme_auth_ctrl *c, struct fuzz_in *in)
{
	u8 buf[1400];
	ssize_t n;
	size_t len, al;
	int i;

	for (i = 0; i < MAX_OPS && in->n; i++) {
		u32 op = fuzz_u8(in);

		if (!(op & 1)) {
			len = fuzz_u16(in) % 1300;
			if (len > in->n)
				len = in->n;
			send_copy(c, in->p, len);
			in->p += len;
			in->n -= len;
			continue;
		}
		al = 1 + ((op >> 1) * 37) % sizeof(buf);
		n = nvme_auth_ctrl_receive(c, buf, al);
		check_answer(c, buf, n, al);
	}
	FUZZ_CHECK(!nvme_auth_ctrl_authenticated(c),
		   "authenticated without the key");
}

/* Returns whether the message changed. */
static bool mutate(struct fuzz_in *in, u8 *msg, size_t *len)
{
	u32 op = fuzz_u8(in), off = fuzz_u16(in), x = fuzz_u8(in);
	u32 cut = fuzz_u8(in) % 8;

	if (!*len)
		return false;
	msg[off % *len] ^= (u8)x;
	if ((op & 1) && cut && cut < *len) {
		*len -= cut;
		return true;
	}
	return x != 0;
}

/* A genuine host; every message in flight may be changed. */
static void relay_mode(struct nvme_auth_ctrl *c, struct nvme_auth_host *h,
		       struct fuzz_in *in)
{
	u8 out[NVME_AUTH_MAX_MSG], buf[NVME_AUTH_BUF_SIZE];
	bool changed = false;
	size_t len;
	ssize_t n;
	int i;

	n = nvme_auth_host_negotiate(h, out, sizeof(out));
	FUZZ_CHECK(n == 72, "negotiate: %zd", n);
	len = (size_t)n;
	for (i = 0; i < MAX_OPS; i++) {
		changed |= mutate(in, out, &len);
		send_copy(c, out, len);
		n = nvme_auth_ctrl_receive(c, buf, sizeof(buf));
		check_answer(c, buf, n, sizeof(buf));
		len = (size_t)n;
		changed |= mutate(in, buf, &len);
		n = nvme_auth_host_recv(h, buf, len, out, sizeof(out));
		if (n <= 0)
			break;
		len = (size_t)n;
		if (nvme_auth_host_status(h, NULL) != NVME_AUTH_IN_PROGRESS) {
			changed |= mutate(in, out, &len);
			send_copy(c, out, len);
			break;
		}
	}
	/* nothing changed in flight: the genuine exchange succeeds */
	if (!changed)
		FUZZ_CHECK(nvme_auth_host_status(h, NULL) ==
					   NVME_AUTH_SUCCESS &&
				   nvme_auth_ctrl_authenticated(c),
			   "unchanged exchange failed");
	FUZZ_CHECK(nvme_auth_ctrl_status(c, NULL) <= NVME_AUTH_FAILED &&
			   nvme_auth_host_status(h, NULL) <= NVME_AUTH_FAILED,
		   "status out of range");
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	u32 cfg = fuzz_u8(&in);
	bool relay = cfg & 0x10, bidir = relay && (cfg & 0x20);
	struct nvme_auth_params p = {
		.hostnqn = HOSTNQN,
		.subsysnqn = SUBNQN,
		.host_secret = host_key,
		.ctrl_secret = ((cfg & 8) || bidir) ? ctrl_key : NULL,
		.hash_id = (u8)(1 + (cfg & 3) % 3),
		.dhgroup_id = (cfg & 4) ? NVME_AUTH_DHGROUP_2048 : 0,
	};
	struct nvme_auth_ctrl c;
	struct nvme_auth_host h;

	FUZZ_CHECK(nvme_auth_ctrl_init(&c, &p) == 0, "ctrl init");
	if (!relay) {
		raw_mode(&c, &in);
	} else {
		p.ctrl_secret = bidir ? ctrl_key : NULL;
		FUZZ_CHECK(nvme_auth_host_init(&h, &p) == 0, "host init");
		relay_mode(&c, &h, &in);
		nvme_auth_host_clear(&h);
	}
	nvme_auth_ctrl_clear(&c);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA connection setup (RFC 5044 7.1, RFC 6581): the request and reply
 * frames and the checks siw applies to them (siw_cm.c: siw_connect(),
 * siw_recv_mpa_rr(), siw_proc_mpareq(), siw_proc_mpareply()).
 *
 * A frame: 16 bytes of key, the flags/revision word, the private data
 * length, then the private data.  With enhanced setup (revision 2, flag
 * ENHANCED) the private data starts with the IRD/ORD word, which counts in
 * the length; the ULP's private data (rdma_cm's) follows it.  Markers are
 * never offered and refused when asked, as siw does.
 */
#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"

#define RR_LEN ((size_t)sizeof(struct iwarp_mpa_rr))
#define V2_LEN ((size_t)sizeof(struct iwarp_mpa_v2))
#define RTR_ANY (IWARP_MPA_V2_RTR_WRITE | IWARP_MPA_V2_RTR_READ)

static int mpa_check(const struct iwarp_mpa *m)
{
	if (m->rev != IWARP_MPA_REV1 && m->rev != IWARP_MPA_REV2)
		return -EINVAL;
	if (m->markers)
		return -EOPNOTSUPP;
	if (m->enhanced && m->rev != IWARP_MPA_REV2)
		return -EINVAL;
	if (!m->enhanced && (m->ird || m->ord || m->p2p || m->rtr))
		return -EINVAL;
	if (m->ird > IWARP_MPA_V2_MASK || m->ord > IWARP_MPA_V2_MASK)
		return -EINVAL;
	if (m->rtr & ~RTR_ANY)
		return -EINVAL;
	if (m->p2p != !!m->rtr)
		return -EINVAL;
	/* a reply picks one RTR type */
	if (m->reply && m->rtr == RTR_ANY)
		return -EINVAL;
	if (m->pd_len && !m->pdata)
		return -EINVAL;
	if (m->pd_len + (m->enhanced ? V2_LEN : 0) > IWARP_MPA_PD_MAX)
		return -EMSGSIZE;
	return 0;
}

/**
 * rdmarw__iwarp_mpa_build() - write an MPA request or reply frame
 * @m: what to send (@m->reply picks the key)
 * @buf: where to write it
 * @len: bytes at @buf
 *
 * Return: the frame's length, -EINVAL for inconsistent fields (revision
 * other than 1 or 2, enhanced with revision 1, IRD/ORD over 14 bits, RTR
 * flags without peer-to-peer or both in a reply, private data length
 * without data), -EOPNOTSUPP for markers, -EMSGSIZE when the private data
 * (with the IRD/ORD word) exceeds 512 bytes, -ENOSPC when @len is short.
 */
int rdmarw__iwarp_mpa_build(const struct iwarp_mpa *m, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t pd, total;
	uint16_t bits;
	int ret;

	if (!m || !buf)
		return -EINVAL;
	ret = mpa_check(m);
	if (ret)
		return ret;
	pd = m->pd_len + (m->enhanced ? V2_LEN : 0);
	total = RR_LEN + pd;
	if (len < total)
		return -ENOSPC;
	memcpy(p, m->reply ? IWARP_MPA_KEY_REP : IWARP_MPA_KEY_REQ,
	       IWARP_MPA_KEY_LEN);
	bits = m->rev;
	if (m->crc)
		bits |= IWARP_MPA_F_CRC;
	if (m->reject)
		bits |= IWARP_MPA_F_REJECT;
	if (m->enhanced)
		bits |= IWARP_MPA_F_ENHANCED;
	if (m->gso)
		bits |= IWARP_MPA_F_GSO;
	iwarp_st16(p + 16, bits);
	iwarp_st16(p + 18, (uint16_t)pd);
	p += RR_LEN;
	if (m->enhanced) {
		iwarp_st16(p, m->ird | (m->p2p ? IWARP_MPA_V2_P2P : 0));
		iwarp_st16(p + 2, m->ord | m->rtr);
		p += V2_LEN;
	}
	if (m->pd_len)
		memcpy(p, m->pdata, m->pd_len);
	return (int)total;
}

static int mpa_refuse(enum iwarp_mpa_why *why, enum iwarp_mpa_why w, int err)
{
	if (why)
		*why = w;
	return err;
}

/**
 * rdmarw__iwarp_mpa_parse() - decode and check an MPA request or reply
 * @buf: the bytes received so far, starting at the frame
 * @len: their number
 * @eof: the stream has ended after them
 * @reply: expect the reply's key (else the request's)
 * @m: the decoded frame; @m->pdata points into @buf
 * @why: the reason of a refusal (IWARP_MPA_OK otherwise); may be NULL
 *
 * The checks run in siw_recv_mpa_rr()'s and siw_proc_mpareq()'s order:
 * private data length, revision, key, then (whole frame) markers and the
 * IRD/ORD word.  The ENHANCED flag of a revision 1 frame is ignored, as
 * siw ignores it.  A reply whose key is wrong is answered by siw with the
 * TERMINATE LLP/MPA/INVALID_REQ_RESP; a wrong request is just closed.
 *
 * Return: the frame's length (bytes of @buf it used), -EAGAIN when more
 * bytes are needed, -ECONNABORTED when @eof cuts the frame short,
 * -EMSGSIZE (private data over 512), -EPROTO (key, revision, IRD/ORD word
 * missing), -EOPNOTSUPP (markers asked), -EINVAL (NULL arguments).
 */
int rdmarw__iwarp_mpa_parse(const void *buf, size_t len, bool eof, bool reply,
			    struct iwarp_mpa *m, enum iwarp_mpa_why *why)
{
	const uint8_t *p = buf;
	uint16_t bits, pd;
	size_t total;

	if (why)
		*why = IWARP_MPA_OK;
	if ((!buf && len) || !m)
		return -EINVAL;
	if (len < RR_LEN)
		return eof ? mpa_refuse(why, IWARP_MPA_CUT_SHORT,
					-ECONNABORTED) :
			     -EAGAIN;
	bits = iwarp_ld16(p + 16);
	pd = iwarp_ld16(p + 18);
	if (pd > IWARP_MPA_PD_MAX)
		return mpa_refuse(why, IWARP_MPA_PD_TOO_LONG, -EMSGSIZE);
	if ((bits & IWARP_MPA_REV_MASK) != IWARP_MPA_REV1 &&
	    (bits & IWARP_MPA_REV_MASK) != IWARP_MPA_REV2)
		return mpa_refuse(why, IWARP_MPA_BAD_REV, -EPROTO);
	if (memcmp(p, reply ? IWARP_MPA_KEY_REP : IWARP_MPA_KEY_REQ,
		   IWARP_MPA_KEY_LEN))
		return mpa_refuse(why, IWARP_MPA_BAD_KEY, -EPROTO);
	total = RR_LEN + pd;
	if (len < total)
		return eof ? mpa_refuse(why, IWARP_MPA_CUT_SHORT,
					-ECONNABORTED) :
			     -EAGAIN;
	if (bits & IWARP_MPA_F_MARKERS)
		return mpa_refuse(why, IWARP_MPA_MARKERS, -EOPNOTSUPP);
	memset(m, 0, sizeof(*m));
	m->reply = reply;
	m->rev = bits & IWARP_MPA_REV_MASK;
	m->crc = bits & IWARP_MPA_F_CRC;
	m->reject = bits & IWARP_MPA_F_REJECT;
	m->gso = bits & IWARP_MPA_F_GSO;
	m->enhanced = m->rev == IWARP_MPA_REV2 && (bits & IWARP_MPA_F_ENHANCED);
	p += RR_LEN;
	if (m->enhanced) {
		uint16_t ird, ord;

		if (pd < V2_LEN)
			return mpa_refuse(why, IWARP_MPA_SHORT_V2, -EPROTO);
		ird = iwarp_ld16(p);
		ord = iwarp_ld16(p + 2);
		m->ird = ird & IWARP_MPA_V2_MASK;
		m->ord = ord & IWARP_MPA_V2_MASK;
		m->p2p = ird & IWARP_MPA_V2_P2P;
		m->rtr = m->p2p ? (ord & RTR_ANY) : 0;
		p += V2_LEN;
		pd -= V2_LEN;
	}
	m->pdata = pd ? p : NULL;
	m->pd_len = pd;
	return (int)total;
}

/**
 * rdmarw__iwarp_mpa_answer() - the reply siw gives to a request
 * @req: the request as parsed
 * @max_ird: the most inbound READs the accepting side allows
 * @max_ord: the most outbound READs the accepting side allows
 * @rep: the reply to build (private data unset: the accepter's to add)
 *
 * As siw_proc_mpareq(): the reply echoes the request's revision, CRC and
 * enhanced flags; its ORD is the peer's IRD and its IRD the peer's ORD,
 * each limited by the local maximum; in peer-to-peer mode it picks a
 * zero-length WRITE when offered, else a READ, else proposes a WRITE.
 *
 * Return: 0, or -EINVAL for a request that parse would refuse.
 */
int rdmarw__iwarp_mpa_answer(const struct iwarp_mpa *req, uint16_t max_ird,
			     uint16_t max_ord, struct iwarp_mpa *rep)
{
	if (!req || !rep || req->reply || mpa_check(req))
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	rep->reply = true;
	rep->rev = req->rev;
	rep->crc = req->crc;
	rep->enhanced = req->enhanced;
	if (!req->enhanced)
		return 0;
	rep->ord = req->ird < max_ord ? req->ird : max_ord;
	rep->ird = req->ord < max_ird ? req->ord : max_ird;
	rep->ird &= IWARP_MPA_V2_MASK;
	rep->ord &= IWARP_MPA_V2_MASK;
	if (req->p2p) {
		rep->p2p = true;
		if (req->rtr & IWARP_MPA_V2_RTR_WRITE)
			rep->rtr = IWARP_MPA_V2_RTR_WRITE;
		else if (req->rtr & IWARP_MPA_V2_RTR_READ)
			rep->rtr = IWARP_MPA_V2_RTR_READ;
		else
			rep->rtr = IWARP_MPA_V2_RTR_WRITE;
	}
	return 0;
}

static int reply_refuse(enum iwarp_mpa_why *why, enum iwarp_mpa_why w,
			struct iwarp_term_info *t, uint8_t ecode, int err)
{
	if (why)
		*why = w;
	if (t) {
		memset(t, 0, sizeof(*t));
		t->close = !ecode;
		if (ecode) {
			t->layer = IWARP_LAYER_LLP;
			t->etype = IWARP_LLP_ET_MPA;
			t->ecode = ecode;
		}
	}
	return err;
}

/**
 * rdmarw__iwarp_mpa_check_reply() - the initiator's checks of a reply
 * @req: the request it sent
 * @rep: the reply as parsed
 * @why: the reason of a refusal; may be NULL
 * @t: what to answer a refusal with (TERMINATE or close); may be NULL
 *
 * As siw_proc_mpareply(): a reject is -ECONNREFUSED; a reply to an
 * enhanced request that is not revision 2 enhanced is -EPROTO (closed);
 * IRD/ORD that do not cover ours is -EPROTO with LLP/MPA/INSUFFICIENT_IRD;
 * an RTR type we did not offer is -EPROTO with LLP/MPA/NO_MATCHING_RTR.
 *
 * Return: 0 when the connection may go to RTS, else a negative errno.
 */
int rdmarw__iwarp_mpa_check_reply(const struct iwarp_mpa *req,
				  const struct iwarp_mpa *rep,
				  enum iwarp_mpa_why *why,
				  struct iwarp_term_info *t)
{
	if (why)
		*why = IWARP_MPA_OK;
	if (t)
		memset(t, 0, sizeof(*t));
	if (!req || !rep || req->reply || !rep->reply)
		return -EINVAL;
	if (rep->reject)
		return reply_refuse(why, IWARP_MPA_OK, t, 0, -ECONNREFUSED);
	if (rep->markers)
		return reply_refuse(why, IWARP_MPA_MARKERS, t, 0, -EOPNOTSUPP);
	if (!req->enhanced)
		return 0;
	if (rep->rev != IWARP_MPA_REV2 || !rep->enhanced)
		return reply_refuse(why, IWARP_MPA_NOT_ENHANCED, t, 0, -EPROTO);
	if (rep->ord > req->ird || req->ord > rep->ird)
		return reply_refuse(why, IWARP_MPA_IRD, t,
				    IWARP_LLP_EC_INSUFFICIENT_IRD, -EPROTO);
	if (req->p2p && req->rtr && !(req->rtr & rep->rtr))
		return reply_refuse(why, IWARP_MPA_NO_RTR, t,
				    IWARP_LLP_EC_NO_MATCHING_RTR, -EPROTO);
	return 0;
}

/**
 * rdmarw__iwarp_mpa_why_str() - a refusal reason's name
 * @why: the reason
 *
 * Return: a static string ("?" for an unknown value).
 */
const char *rdmarw__iwarp_mpa_why_str(enum iwarp_mpa_why why)
{
	static const char *const names[] = {
		[IWARP_MPA_OK] = "ok",
		[IWARP_MPA_BAD_KEY] = "bad key",
		[IWARP_MPA_BAD_REV] = "bad revision",
		[IWARP_MPA_MARKERS] = "markers asked",
		[IWARP_MPA_PD_TOO_LONG] = "private data over 512 bytes",
		[IWARP_MPA_SHORT_V2] = "no IRD/ORD word",
		[IWARP_MPA_CUT_SHORT] = "frame cut short",
		[IWARP_MPA_NOT_ENHANCED] = "reply not enhanced",
		[IWARP_MPA_IRD] = "insufficient IRD/ORD",
		[IWARP_MPA_NO_RTR] = "no matching RTR",
	};

	if ((unsigned int)why >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[why];
}

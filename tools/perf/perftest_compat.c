// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perftest's exchange messages (perftest_compat.h): encoding and bounded
 * parsing, nothing else.  Every parser takes exactly its message's length
 * and refuses what perftest itself would never send.
 */
#include "perftest_compat.h"

#include <endian.h>
#include <errno.h>
#include <math.h>
#include <string.h>

/* struct pingpong_dest's offsets on LP64 */
enum {
	PT_OFF_LID = 0,
	PT_OFF_OUT_READS = 4,
	PT_OFF_QPN = 8,
	PT_OFF_PSN = 12,
	PT_OFF_RKEY = 16,
	PT_OFF_VADDR = 24, /* after 4 bytes of padding */
	PT_OFF_GID = 32,
	PT_OFF_SRQN = 48,
	PT_OFF_GID_INDEX = 52,
};

static void put_be32(u8 *p, u32 v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static u32 get_be32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static void put_be64(u8 *p, u64 v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

static u64 get_be64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

void pt_dest_encode(const struct pt_dest *d, u8 *out)
{
	memset(out, 0, PT_DEST_LEN);
	put_be32(out + PT_OFF_LID, d->lid);
	put_be32(out + PT_OFF_OUT_READS, d->out_reads);
	put_be32(out + PT_OFF_QPN, d->qpn);
	put_be32(out + PT_OFF_PSN, d->psn);
	put_be32(out + PT_OFF_RKEY, d->rkey);
	put_be64(out + PT_OFF_VADDR, d->vaddr);
	memcpy(out + PT_OFF_GID, d->gid, sizeof(d->gid));
	put_be32(out + PT_OFF_SRQN, d->srqn);
	put_be32(out + PT_OFF_GID_INDEX, (u32)d->gid_index);
}

int pt_dest_parse(const void *buf, size_t len, struct pt_dest *d)
{
	const u8 *p = buf;
	struct pt_dest v;

	if (len != PT_DEST_LEN)
		return -EMSGSIZE;
	v.lid = get_be32(p + PT_OFF_LID);
	v.out_reads = get_be32(p + PT_OFF_OUT_READS);
	v.qpn = get_be32(p + PT_OFF_QPN);
	v.psn = get_be32(p + PT_OFF_PSN);
	v.rkey = get_be32(p + PT_OFF_RKEY);
	v.vaddr = get_be64(p + PT_OFF_VADDR);
	memcpy(v.gid, p + PT_OFF_GID, sizeof(v.gid));
	v.srqn = get_be32(p + PT_OFF_SRQN);
	v.gid_index = (s32)get_be32(p + PT_OFF_GID_INDEX);
	if (v.lid > 0xffff || v.qpn > 0xffffff || v.psn > 0xffffff ||
	    v.out_reads > 0xffff)
		return -EPROTO;
	*d = v;
	return 0;
}

void pt_version_encode(char *out)
{
	memset(out, 0, PT_VERSION_LEN);
	memcpy(out, PT_VERSION, sizeof(PT_VERSION) - 1);
}

/* Digits of @s from @i on, at most @max of them: how many, their value. */
static size_t digits(const char *s, size_t i, size_t end, size_t max,
		     unsigned int *val)
{
	size_t n = 0;

	*val = 0;
	while (i + n < end && n < max && s[i + n] >= '0' && s[i + n] <= '9') {
		*val = *val * 10 + (unsigned int)(s[i + n] - '0');
		n++;
	}
	return n;
}

int pt_version_parse(const void *buf, size_t len, unsigned int *hundredths)
{
	const char *s = buf;
	unsigned int major, frac, tens = 0, ones = 0;
	size_t n, f, i;

	if (len != PT_VERSION_LEN)
		return -EMSGSIZE;
	n = digits(s, 0, len, 3, &major);
	if (!n || n >= len || s[n] != '.')
		return -EPROTO;
	f = digits(s, n + 1, len, len, &frac);
	if (!f)
		return -EPROTO;
	for (i = n + 1 + f; i < len; i++) /* then only the padding */
		if (s[i])
			return -EPROTO;
	tens = (unsigned int)(s[n + 1] - '0');
	if (f > 1)
		ones = (unsigned int)(s[n + 2] - '0');
	*hundredths = major * 100 + tens * 10 + ones;
	return 0;
}

void pt_int_encode(u32 v, u8 *out)
{
	put_be32(out, v);
}

int pt_int_parse(const void *buf, size_t len, u32 lo, u32 hi, u32 *v)
{
	u32 x;

	if (len != PT_INT_LEN)
		return -EMSGSIZE;
	x = get_be32(buf);
	if (x < lo || x > hi)
		return -ERANGE;
	*v = x;
	return 0;
}

void pt_mtu_encode(unsigned int mtu, char *out)
{
	out[0] = (char)('0' + (mtu <= 9 ? mtu : 0));
	out[1] = '\0';
}

int pt_mtu_parse(const void *buf, size_t len, unsigned int *mtu)
{
	const char *s = buf;

	if (len != PT_MTU_LEN)
		return -EMSGSIZE;
	if (s[0] < '0' || s[0] > '9' || s[1])
		return -EPROTO;
	*mtu = (unsigned int)(s[0] - '0');
	return 0;
}

void pt_u64_encode(u64 v, u8 *out)
{
	put_be64(out, v);
}

int pt_u64_parse(const void *buf, size_t len, u64 max, u64 *v)
{
	u64 x;

	if (len != PT_U64_LEN)
		return -EMSGSIZE;
	x = get_be64(buf);
	if (x > max)
		return -ERANGE;
	*v = x;
	return 0;
}

void pt_double_encode(double v, u8 *out)
{
	u64 bits;

	memcpy(&bits, &v, sizeof(bits));
	put_be64(out, bits);
}

int pt_double_parse(const void *buf, size_t len, double *v)
{
	u64 bits;
	double x;

	if (len != PT_U64_LEN)
		return -EMSGSIZE;
	bits = get_be64(buf);
	memcpy(&x, &bits, sizeof(x));
	if (!isfinite(x) || x < 0)
		return -ERANGE;
	*v = x;
	return 0;
}

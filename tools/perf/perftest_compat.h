/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdmarw-perf --perftest: the messages perftest's programs (ib_write_bw,
 * ib_read_bw... with -R) exchange over their rdma_cm "communication" QP,
 * as perftest 4.5-0.17 (Debian 12's, which calls itself 6.06) sends them:
 * their encoding and bounded parsers.  No I/O here (perftest.c does it);
 * tests/test_perftest_compat.c feeds the parsers bad input.
 *
 * Every message is one SEND of exactly its length into a receive of
 * PT_DEST_LEN bytes; perftest reads the length it expects without looking
 * at the completion's byte count, so a sender must send exactly that, and
 * a parser here takes exactly that (-EMSGSIZE otherwise).  Numbers are
 * big-endian (perftest's HAVE_ENDIAN build, every Linux distribution's).
 */
#ifndef RDMARW_TOOLS_PERFTEST_COMPAT_H
#define RDMARW_TOOLS_PERFTEST_COMPAT_H

#include <stddef.h>

#include <rdmarw/compat.h>

#define PT_VERSION "6.06" /* the exchange spoken: perftest 6.06's */
#define PT_VERSION_LEN 16 /* char version[16], NUL-padded */
#define PT_MIN_VERSION 570 /* perftest refuses peers below 5.70 */
#define PT_DEST_LEN 56 /* struct pingpong_dest on LP64, its padding sent */
#define PT_INT_LEN 4 /* an int: cycle buffer, cache line size */
#define PT_MTU_LEN 2 /* the MTU as a decimal digit and its NUL */
#define PT_U64_LEN 8 /* a report's size, iterations, doubles */
#define PT_MAX_CYCLE (64U << 20) /* a cycle buffer taken from a peer */
#define PT_MAX_CACHE_LINE 4096U

/**
 * struct pt_dest - perftest's struct pingpong_dest: one QP's address
 * @lid: the port's LID (0 on iWARP and RoCE)
 * @out_reads: the READs the QP lets in flight
 * @qpn: the QP number (24 bits)
 * @psn: the first packet sequence number (24 bits)
 * @rkey: the key of the buffer the peer WRITEs to and READs from
 * @vaddr: that buffer's address
 * @gid: the port's GID (perftest fills it; -R does not use it)
 * @srqn: XRC's SRQ number (0 here)
 * @gid_index: perftest's -x (sent, not read back, by perftest)
 *
 * On the wire: lid, out_reads, qpn, psn, rkey (big-endian 32-bit), 4
 * bytes of padding (perftest sends whatever its stack held), vaddr
 * (big-endian 64-bit), the 16 bytes of gid, srqn and gid_index.
 */
struct pt_dest {
	u32 lid;
	u32 out_reads;
	u32 qpn;
	u32 psn;
	u32 rkey;
	u64 vaddr;
	u8 gid[16];
	u32 srqn;
	s32 gid_index;
};

/**
 * struct pt_report - one end's bandwidth report (xchg_bw_reports())
 * @size: the message size
 * @iters: the transfers counted
 * @bw_peak: the peak, in the sender's unit (MiB/s, or Gb/s)
 * @bw_avg: the average, likewise
 * @msg_rate: millions of messages per second
 *
 * Exchanged as five messages of 8 bytes each: @size and @iters as
 * big-endian integers, the doubles byte-swapped as perftest's
 * bswap_double() does (big-endian IEEE 754).
 */
struct pt_report {
	u64 size;
	u64 iters;
	double bw_peak;
	double bw_avg;
	double msg_rate;
};

/**
 * pt_dest_encode() - a pingpong_dest as perftest sends it
 * @d: the address
 * @out: PT_DEST_LEN bytes (the padding is zeroed)
 */
void pt_dest_encode(const struct pt_dest *d, u8 *out);

/**
 * pt_dest_parse() - a received pingpong_dest
 * @buf: the bytes received
 * @len: how many
 * @d: the address, when valid
 *
 * Return: 0; -EMSGSIZE unless @len is PT_DEST_LEN; -EPROTO for a LID over
 * 16 bits, a QPN or PSN over 24 bits, or out_reads over 65535.
 */
int pt_dest_parse(const void *buf, size_t len, struct pt_dest *d);

/**
 * pt_version_encode() - this end's version string, PT_VERSION
 * @out: PT_VERSION_LEN bytes, NUL-padded
 */
void pt_version_encode(char *out);

/**
 * pt_version_parse() - a received version string ("5.70", "6.06")
 * @buf: the bytes received
 * @len: how many
 * @hundredths: the version times 100 ("5.7" is 570, as atof() reads it)
 *
 * Return: 0; -EMSGSIZE unless @len is PT_VERSION_LEN; -EPROTO unless the
 * bytes are 1 to 3 digits, '.', 1 or more digits, then only NULs.
 */
int pt_version_parse(const void *buf, size_t len, unsigned int *hundredths);

/**
 * pt_int_encode() - a 32-bit number, big-endian
 * @v: the number
 * @out: PT_INT_LEN bytes
 */
void pt_int_encode(u32 v, u8 *out);

/**
 * pt_int_parse() - a received 32-bit number within bounds
 * @buf: the bytes received
 * @len: how many
 * @lo: the smallest value taken
 * @hi: the largest value taken
 * @v: the number
 *
 * Return: 0; -EMSGSIZE unless @len is PT_INT_LEN; -ERANGE outside
 * [@lo, @hi] (a negative int is above any @hi below 2^31).
 */
int pt_int_parse(const void *buf, size_t len, u32 lo, u32 hi, u32 *v);

/**
 * pt_mtu_encode() - an MTU (enum ib_mtu, 1 to 5) as perftest sends it
 * @mtu: the MTU's enum value
 * @out: PT_MTU_LEN bytes: one decimal digit, then NUL
 */
void pt_mtu_encode(unsigned int mtu, char *out);

/**
 * pt_mtu_parse() - a received MTU
 * @buf: the bytes received
 * @len: how many
 * @mtu: the digit's value (perftest ignores a value outside 1 to 5, and
 *	so does the caller)
 *
 * Return: 0; -EMSGSIZE unless @len is PT_MTU_LEN; -EPROTO unless the
 * bytes are one decimal digit and a NUL.
 */
int pt_mtu_parse(const void *buf, size_t len, unsigned int *mtu);

/**
 * pt_u64_encode() - a 64-bit number, big-endian
 * @v: the number
 * @out: PT_U64_LEN bytes
 */
void pt_u64_encode(u64 v, u8 *out);

/**
 * pt_u64_parse() - a received 64-bit number
 * @buf: the bytes received
 * @len: how many
 * @max: the largest value taken
 * @v: the number
 *
 * Return: 0; -EMSGSIZE unless @len is PT_U64_LEN; -ERANGE above @max.
 */
int pt_u64_parse(const void *buf, size_t len, u64 max, u64 *v);

/**
 * pt_double_encode() - a double as perftest's hton_double() sends it
 * @v: the number
 * @out: PT_U64_LEN bytes
 */
void pt_double_encode(double v, u8 *out);

/**
 * pt_double_parse() - a received figure
 * @buf: the bytes received
 * @len: how many
 * @v: the number
 *
 * Return: 0; -EMSGSIZE unless @len is PT_U64_LEN; -ERANGE for a NaN, an
 * infinity or a negative number (no bandwidth or rate is).
 */
int pt_double_parse(const void *buf, size_t len, double *v);

#endif /* RDMARW_TOOLS_PERFTEST_COMPAT_H */

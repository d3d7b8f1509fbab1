/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The life-cycle fuzzer's engine (fuzz_lifecycle.c): its decoding, its
 * world and its invariant checks, for two drivers.
 *  - The libFuzzer target (LLVMFuzzerTestOneInput() in fuzz_lifecycle.c):
 *    one instance, a fabric of its own for every input, the profile and
 *    force_mr chosen by the input.
 *  - The many-thread replay (tests/test_lifecycle_threads.c, issue 16):
 *    one instance per thread, all attached to one fabric (two software
 *    devices shared by every thread: MR state, key tables and the
 *    big-reader lock are shared), each with its own PDs, CQs, QPs, MRs
 *    and arenas; plus a cross-thread attacker (struct lc_cross) that
 *    tries the keys the other instances published.
 *
 * The key log.  An instance publishes every key a post puts on the wire
 * before the post (the entry, then the count with a release store), and
 * marks the entry dead with a release store once the context's destroy
 * has returned.  A reader loads the count with acquire, then reads only
 * entries below it; an entry's key, address and length never change once
 * published.  A key whose every entry was dead when the reader looked, and
 * that was not published again by the time its probe completed, grants
 * nothing.
 */
#ifndef RDMARW_FUZZ_LIFECYCLE_H
#define RDMARW_FUZZ_LIFECYCLE_H

#include <rdmarw/soft.h>

#include "two_hosts.h"

#include <stddef.h>

struct lc;
struct lc_cross;

/**
 * lc_new() - an instance of the engine, with its arenas
 * @log_keys: entries of its key log; at least what one input can publish
 *            (64) times the inputs run between two lc_attach() calls
 *
 * Return: the instance (aborts when out of memory).
 */
struct lc *lc_new(unsigned int log_keys);

/**
 * lc_free() - free an instance that is not attached
 * @c: the instance, or NULL
 */
void lc_free(struct lc *c);

/**
 * lc_attach() - run the next inputs on a shared fabric
 * @c: an instance that is not attached
 * @shared: the fabric and its two devices (pd, cq and qp unused)
 * @prof: the profile @shared's devices were made with
 *
 * Makes a PD and a CQ of the instance's own on each device and empties
 * its key log.  While attached, lc_run() takes the fabric, the profile and
 * force_mr from the caller, whatever the input's first byte says, switches
 * force_mr never (op 13 does nothing: it is the process's), and leaves
 * what only the whole fabric can tell (DMA-mapped entries, MRs and QPs
 * left on a device) to the caller, once every instance is done.
 *
 * Return: 0, or a negative errno from the PD or CQ.
 */
int lc_attach(struct lc *c, const struct two_hosts *shared,
	      const struct soft_profile *prof);

/**
 * lc_detach() - destroy the instance's PDs and CQs
 * @c: an attached instance, nothing running on it (no lc_cross attached to
 *     it either)
 */
void lc_detach(struct lc *c);

/**
 * lc_run() - decode and run one input, checking every invariant
 * @c: the instance (attached or not)
 * @data: the input
 * @size: its length
 *
 * Aborts with a message on the first broken invariant.
 */
void lc_run(struct lc *c, const u8 *data, size_t size);

/**
 * struct lc_cross_stats - what a cross-thread attacker tried
 * @stale: keys dead when looked at: each WRITE or READ refused
 * @renewed: keys dead when looked at but published again meanwhile (no
 *           verdict)
 * @live: keys not yet dead: READs, each refused (no MR that rw registers
 *        has a remote read right)
 * @nokey: probes given up, the victim had published nothing yet
 */
struct lc_cross_stats {
	unsigned long stale, renewed, live, nokey;
};

/**
 * lc_cross_new() - a cross-thread attacker on a shared fabric
 * @shared: the fabric and its devices
 * @prof: their profile
 * @victims: attached instances whose keys it tries
 * @n: how many (at most 16)
 * @seed: its choices
 *
 * Makes its own PD and CQ on each device, a buffer and its MR on B, and
 * for each victim a QP on B connected to a QP on A in the victim's PD, so
 * that only the key decides.
 *
 * Return: the attacker (aborts on failure).
 */
struct lc_cross *lc_cross_new(const struct two_hosts *shared,
			      const struct soft_profile *prof,
			      struct lc *const *victims, int n, u64 seed);

/**
 * lc_cross_probe() - one attack on a key some victim published
 * @x: the attacker
 *
 * Aborts when a dead key grants access, or a live one grants a READ.
 *
 * Return: false when the victim chosen had no key yet.
 */
bool lc_cross_probe(struct lc_cross *x);

/**
 * lc_cross_free() - destroy the attacker's QPs, MR, CQs and PDs
 * @x: the attacker, or NULL; its victims still attached
 * @st: where to store what it tried, or NULL
 */
void lc_cross_free(struct lc_cross *x, struct lc_cross_stats *st);

#endif /* RDMARW_FUZZ_LIFECYCLE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdmarw-nvmet's log (log.c): standard error, one line a message, with
 * sd-daemon(3)'s "<N>" level prefix when standard error is the journal.
 */
#ifndef RDMARW_NVMET_LOG_H
#define RDMARW_NVMET_LOG_H

#include <stdbool.h>

/* syslog(3)'s levels, which the journal's prefixes carry. */
enum nvmet_log_level {
	NVMET_LOG_ERR = 3,
	NVMET_LOG_WARNING = 4,
	NVMET_LOG_NOTICE = 5,
	NVMET_LOG_INFO = 6,
	NVMET_LOG_DEBUG = 7,
};

/* The most verbose level written (default NVMET_LOG_NOTICE). */
extern int nvmet_log_max;
/* Standard error is the journal: lines carry "<N>". */
extern bool nvmet_log_journal;

/**
 * nvmet_log_init() - look whether standard error is the journal
 *
 * systemd sets $JOURNAL_STREAM to "DEVICE:INODE" of the stream it
 * connected to the journal; standard error is the journal when its
 * fstat() gives the same pair (a redirected one does not).
 *
 * Return: true when it is (nvmet_log_journal).
 */
bool nvmet_log_init(void);

/**
 * nvmet_log_parse_level() - a --log-level value
 * @s: "err", "warning", "notice", "info", "debug", or "3".."7"
 *
 * Return: the level, or -EINVAL.
 */
int nvmet_log_parse_level(const char *s);

/**
 * nvmet_printk() - write one line to standard error
 * @level: its level; nothing is written when above nvmet_log_max (but
 *         NVMET_LOG_INFO is when the target's options say verbose)
 * @fmt: printf format, without the trailing newline
 *
 * The line is written whole (one write) with the "<N>" prefix when
 * nvmet_log_journal, plain otherwise; a longer one than 1 KiB is cut
 * and ends with "...".
 */
void nvmet_printk(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* RDMARW_NVMET_LOG_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdmarw-nvmet's log: leveled lines on standard error, journald-friendly
 * (sd-daemon(3): a "<N>" prefix gives the line syslog level N when the
 * stream is the journal's).  The target's nvmet_log() and nvmet_err()
 * (nvmet_int.h) write through nvmet_printk().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "log.h"

int nvmet_log_max = NVMET_LOG_NOTICE;
bool nvmet_log_journal;
/* core.c: the target's options asked for its connection log */
extern bool nvmet_verbose;

bool nvmet_log_init(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	nvmet_log_journal = false;
	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	nvmet_log_journal = (unsigned long long)st.st_dev == dev &&
			    (unsigned long long)st.st_ino == ino;
	return nvmet_log_journal;
}

int nvmet_log_parse_level(const char *s)
{
	static const char *const names[] = { "err", "warning", "notice", "info",
					     "debug" };
	size_t i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return NVMET_LOG_ERR + (int)i;
	if (s[0] >= '3' && s[0] <= '7' && !s[1])
		return s[0] - '0';
	return -EINVAL;
}

void nvmet_printk(int level, const char *fmt, ...)
{
	char line[1024 + 8];
	size_t off = 0, room;
	va_list ap;
	int n;

	if (level > nvmet_log_max &&
	    !(level == NVMET_LOG_INFO && nvmet_verbose))
		return;
	if (nvmet_log_journal)
		off = (size_t)snprintf(line, sizeof(line), "<%d>", level & 7);
	room = sizeof(line) - off - 1; /* the newline */
	va_start(ap, fmt);
	n = vsnprintf(line + off, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= room) {
		n = (int)room - 1;
		memcpy(line + off + n - 3, "...", 3);
	}
	off += (size_t)n;
	line[off++] = '\n';
	/* one write: lines of threads do not interleave */
	if (write(STDERR_FILENO, line, off) < 0)
		return;
}

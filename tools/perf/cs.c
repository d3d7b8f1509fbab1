// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rdmarw-perf's client/server runs (perf.h). */
#include "perf.h"

int perf_cs_run(const struct perf_opts *o)
{
	(void)o;
	fprintf(stderr, PERF_TOOL ": client/server runs are not built yet\n");
	return 2;
}

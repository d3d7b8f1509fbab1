#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Issue 16's scaling matrix in one run: rdmarw-perf --threads N (N
# independent QP pairs on N pinned threads) for 1, 2, 4 and 8 threads, 64 B,
# 64 KiB and 1 MiB WRITEs, with the software device inline and threaded
# (--threaded).  Each invocation measures its own one-thread reference and
# memcpy on one and on N threads in the same minutes (bench/README.md, "Scaling across cores").
#
#   bench/scaling.sh [PERF_BINARY]     (default build/tools/rdmarw-perf)
#
# DURATION (default 0.5 s per phase), PROFILE (rxe), DIR (write), SIZES
# ("64 64K 1M") and THREADS ("1 2 4 8") choose the matrix.  One line per
# cell: mode, size, threads, summed MiB/s, scaling against thread 0 alone,
# fairness (slowest / fastest thread), and memcpy's own scaling and
# fairness on the same threads.
set -eu

PERF=${1:-build/tools/rdmarw-perf}
DURATION=${DURATION:-0.5}
PROFILE=${PROFILE:-rxe}
DIR=${DIR:-write}
SIZES=${SIZES:-64 64K 1M}
THREADS=${THREADS:-1 2 4 8}

[ -x "$PERF" ] || {
	echo "scaling.sh: $PERF is not built (make build)" >&2
	exit 2
}
echo "# $(date -u '+%F %T') UTC, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"profile $PROFILE, $DIR, ${DURATION} s per phase"
printf '%-8s %6s %3s %12s %8s %6s %8s %6s\n' mode size thr 'MiB/s sum' scaling \
	fair 'memcpy' 'fair'
for mode in inline threaded; do
	flag=
	[ $mode = threaded ] && flag=--threaded
	for s in $SIZES; do
		for t in $THREADS; do
			# The summary row: OP BYTES THREADS BW Mpps BW-one
			# SCALING FAIR MEMCPY-BW MEMCPY-SCALING MEMCPY-FAIR.
			# shellcheck disable=SC2086 # $flag: empty or --threaded
			"$PERF" --quiet --profile "$PROFILE" --threads "$t" \
				--dir "$DIR" -s "$s" \
				-D "$DURATION" $flag |
				awk -v mode=$mode -v s="$s" -v t="$t" '
				$1 ~ /^(READ|WRITE)$/ && $3 == t {
					printf "%-8s %6s %3s %12.0f %8s %6s %8s %6s\n",
					       mode, s, t, $4, $7, $8, $10, $11
				}'
		done
	done
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Instructions per I/O of a benchmark's I/O loop, the steady figure on a
# noisy machine: callgrind counts the instructions run inside one function
# (and what it calls) at two I/O counts, and the difference divided by the
# difference in I/Os is the marginal cost of one I/O (set-up and teardown
# cancel out).
#
#   bench/callgrind.sh [BINARY...]        (default build/tools/rdmarw-perf)
#
# By default rdmarw-perf's run_ios(): PERF_ARGS (default "--quiet -s 64
# --dir write": long options, which binaries before and after the
# perftest letters both take), N1 (20000) and N2 (40000) choose the shape.
# TOGGLE (default run_ios) names the functions counted (space separated)
# and COUNT (default
# -n) the option that takes the I/O count; for bench-nvmet:
#
#   TOGGLE=nvmet_rdma_pg_thread COUNT=--ios N1=20000 N2=120000 \
#   PERF_ARGS="-p rxe -q 1 -d 32 --one-thread --no-perf --size 4096 \
#   --prefill --ns-mib 2 --json" bench/callgrind.sh build/bench/bench-nvmet
#
# (bench/README.md, "Instructions per I/O with --ios").  Where the output
# has a JSON "ios", that count is the run's (bench-nvmet's --ios stops at
# exactly N unless its duration ran out first).  Each binary is measured in
# turn, in the same minutes; one line per binary: "BINARY  INSTRUCTIONS_PER_IO".
set -eu

PERF_ARGS=${PERF_ARGS:---quiet -s 64 --dir write}
N1=${N1:-20000}
N2=${N2:-40000}
TOGGLE=${TOGGLE:-run_ios}
COUNT=${COUNT:--n}
[ $# -gt 0 ] || set -- build/tools/rdmarw-perf

command -v valgrind >/dev/null || {
	echo "callgrind.sh: valgrind is missing (apt-get install valgrind)" >&2
	exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "IR IOS": the "summary:" line of a callgrind output file is the total
# Ir; the I/Os are the JSON's "ios" if the binary printed one, else N.
ir() {
	tg=
	for f in $TOGGLE; do
		tg="$tg --toggle-collect=$f"
	done
	# shellcheck disable=SC2086 # PERF_ARGS and $tg are lists of words
	valgrind --tool=callgrind $tg \
		--callgrind-out-file="$tmp/out" "$1" $PERF_ARGS $COUNT "$2" \
		>"$tmp/stdout" 2>/dev/null
	n=$(sed -n 's/.*"ios":\([0-9]*\).*/\1/p' "$tmp/stdout" | head -n 1)
	echo "$(awk '/^summary:/ { print $2 }' "$tmp/out") ${n:-$2}"
}

for bin in "$@"; do
	a=$(ir "$bin" "$N1")
	b=$(ir "$bin" "$N2")
	awk -v a="$a" -v b="$b" -v bin="$bin" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%s  %.2f\n", bin, (y[1] - x[1]) / (y[2] - x[2]) }'
done

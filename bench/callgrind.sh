#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Instructions per I/O of rdmarw-perf's I/O loop, the steady figure on a
# noisy machine: callgrind counts the instructions run inside run_ios() at
# two I/O counts, and the difference divided by the difference in I/Os is
# the marginal cost of one I/O (set-up and teardown cancel out).
#
#   bench/callgrind.sh [PERF_BINARY...]        (default build/tools/rdmarw-perf)
#
# PERF_ARGS (default "--quiet -s 64 --dir write": long options, which
# binaries before and after the perftest letters both take), N1 (20000) and
# N2 (40000) choose the shape.  Each binary is measured in turn, in the
# same minutes; one line per binary: "BINARY  INSTRUCTIONS_PER_IO".
set -eu

PERF_ARGS=${PERF_ARGS:---quiet -s 64 --dir write}
N1=${N1:-20000}
N2=${N2:-40000}
[ $# -gt 0 ] || set -- build/tools/rdmarw-perf

command -v valgrind >/dev/null || {
	echo "callgrind.sh: valgrind is missing (apt-get install valgrind)" >&2
	exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The "summary:" line of a callgrind output file is the total Ir.
ir() {
	# shellcheck disable=SC2086 # PERF_ARGS is a list of words
	valgrind --tool=callgrind --toggle-collect=run_ios \
		--callgrind-out-file="$tmp/out" "$1" $PERF_ARGS -n "$2" \
		>/dev/null 2>&1
	awk '/^summary:/ { print $2 }' "$tmp/out"
}

for bin in "$@"; do
	a=$(ir "$bin" "$N1")
	b=$(ir "$bin" "$N2")
	awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" -v bin="$bin" \
		'BEGIN { printf "%s  %.2f\n", bin, (b - a) / (n2 - n1) }'
done

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs one libFuzzer target of build-fuzz/ for SECS seconds on a copy of its
# seed corpus (make test-fuzz runs one per core); a crash prints the log's
# end, leaves its input in build-fuzz/ and exits 1.
# Usage: scripts/fuzz-run.sh TARGET SECS
set -u
t=$1 secs=$2
log=build-fuzz/fuzz_$t.log
mkdir -p "build-fuzz/corpus-$t" || exit 1
if ! "build-fuzz/fuzz/fuzz_$t" -max_total_time="$secs" \
	-print_final_stats=1 -artifact_prefix=build-fuzz/ \
	"build-fuzz/corpus-$t" "fuzz/corpus/$t" >"$log" 2>&1; then
	echo "fuzz_$t: FAILED"
	tail -40 "$log"
	exit 1
fi
echo "fuzz_$t: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log"), 0 crashes"

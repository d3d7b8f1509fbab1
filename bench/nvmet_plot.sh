#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Issue 30's figures with their spread, plotted: bench-nvmet's NVMe I/Os per
# core of process CPU over rdmarw-perf's raw RDMA WRITE of the same size per
# core, measured in the same invocation (bench-nvmet runs both), ROUNDS
# times per case, the cases interleaved round by round so that a busy
# minute lands on every case alike.
#
#   bench/nvmet_plot.sh [OUTDIR]        (default bench/results-nvmet)
#
# Cases: 4 KiB and 128 KiB, read and write, the host's registered regions
# (--host-registered) and the kernel host's registration per command; one
# queue, QD32, run to completion on one thread (--one-thread), the data in
# cache (--ns-mib 2 --prefill).  ROUNDS (5), DURATION (2 s per run), BENCH
# (build/bench/bench-nvmet) and PROFILE (rxe) choose.  Writes:
# - nvmet.csv: one line per run (case, round, I/Os per core, raw per core,
#   their ratio);
# - nvmet_summary.csv: per case the median, lowest and highest ratio over
#   each peer, and issue 30's target over the raw transfer;
# - nvmet_ratio.png/.svg: the ratios with bars from the lowest to the
#   highest round, and the targets (4 KiB: the NVMe layer <= 6x the raw
#   transfer, a ratio >= 1/6; 128 KiB: >= 0.5 of its bandwidth).  The
#   peers: rdmarw-perf's raw RDMA WRITE (one buffer per side, so in cache)
#   and memcpy over the NVMe run's footprint (bench-nvmet's memcpy_peer()).
set -eu

out=${1:-bench/results-nvmet}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-2}
BENCH=${BENCH:-build/bench/bench-nvmet}
PROFILE=${PROFILE:-rxe}

[ -x "$BENCH" ] || {
	echo "nvmet_plot.sh: $BENCH is not built (make build)" >&2
	exit 2
}
command -v gnuplot >/dev/null 2>&1 || scripts/deps.sh bench
mkdir -p "$out"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date -u '+%F %T')
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)

# name|options (the name is the plot's label)
cases='4K read reg|--size 4096 --host-registered
4K write reg|--size 4096 --write --host-registered
4K read|--size 4096
4K write|--size 4096 --write
128K read reg|--size 131072 --host-registered
128K write reg|--size 131072 --write --host-registered
128K read|--size 131072
128K write|--size 131072 --write'

echo "case,round,nvme_iops_per_core,raw_iops_per_core,ratio_per_core,memcpy_per_core,ratio_memcpy_per_core" \
	>"$out/nvmet.csv"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	echo "$cases" | while IFS='|' read -r name opts; do
		# shellcheck disable=SC2086 # $opts: several options
		json=$("$BENCH" -p "$PROFILE" -q 1 -d 32 -D "$DURATION" \
			--one-thread --ns-mib 2 --prefill --json $opts 2>/dev/null |
			grep '^{')
		echo "$json" | awk -v name="$name" -v r="$r" '
		function field(k,   m) {
			if (match($0, "\"" k "\":[0-9.]+")) {
				m = substr($0, RSTART, RLENGTH)
				sub(/.*:/, "", m)
				return m
			}
			return "null"
		}
		{ printf "%s,%d,%s,%s,%s,%s,%s\n", name, r,
			 field("nvme_iops_per_core"), field("raw_iops_per_core"),
			 field("ratio_per_core"), field("memcpy_per_core"),
			 field("ratio_memcpy_per_core") }' \
			>>"$out/nvmet.csv"
	done
	echo "nvmet_plot: round $r of $ROUNDS done" >&2
	r=$((r + 1))
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# Median, lowest, highest of each ratio per case, in the cases' order.
stats() { # FILE-COLUMN CASE: "median,lowest,highest" of that column
	grep "^$2," "$out/nvmet.csv" | cut -d, -f"$1" | grep -v null | sort -g |
		awk '{ v[NR] = $1 }
		END {
			if (!NR) { printf "null,null,null"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.4f,%.4f,%.4f", m, v[1], v[NR]
		}'
}
echo "index,case,raw_median,raw_lowest,raw_highest,raw_target,memcpy_median,memcpy_lowest,memcpy_highest" \
	>"$out/nvmet_summary.csv"
i=0
echo "$cases" | while IFS='|' read -r name opts; do
	i=$((i + 1))
	case $name in
	4K*) target=0.1667 ;;
	*) target=0.5 ;;
	esac
	echo "$i,$name,$(stats 5 "$name"),$target,$(stats 7 "$name")" \
		>>"$out/nvmet_summary.csv"
done

caption="$commit, $(nproc) CPUs, $t0 UTC, load $load0 -> $load1, $ROUNDS rounds of ${DURATION} s, profile $PROFILE"
for fmt in png svg; do
	case $fmt in
	png) term="pngcairo size 1000,560 font ',10'" ;;
	svg) term="svg size 1000,560 font 'sans,10'" ;;
	esac
	gnuplot <<GP
set terminal $term
set output "$out/nvmet_ratio.$fmt"
set datafile separator ","
set datafile missing "null"
set termoption noenhanced
set key top left box opaque
set grid ytics
set bmargin 6
set yrange [0:1.2]
set xrange [0.4:8.6]
set label 1 "$caption" at screen 0.01, 0.02 left
set ylabel "NVMe I/Os per core / the peer's copies per core, same size"
set title "bench-nvmet (1 queue, QD32, one thread) over its peers: median, bars lowest to highest round"
set style fill solid 0.5
set boxwidth 0.36
plot "$out/nvmet_summary.csv" every ::1 using (\$1-0.19):3:xticlabels(2) with boxes lc rgb "#4477aa" title "over the raw RDMA WRITE (rdmarw-perf: one buffer per side, in cache)", \
     "" every ::1 using (\$1-0.19):3:4:5 with yerrorbars lc rgb "#000000" pt 7 ps 0.4 notitle, \
     "" every ::1 using (\$1+0.19):7 with boxes lc rgb "#ee7733" title "over memcpy, the same footprint (namespace, a buffer per slot)", \
     "" every ::1 using (\$1+0.19):7:8:9 with yerrorbars lc rgb "#000000" pt 7 ps 0.4 notitle, \
     "" every ::1 using (\$1-0.19):6 with points pt 6 ps 2 lc rgb "#cc3311" title "issue 30's target over the raw transfer (4 KiB 1/6, 128 KiB 0.5)"
GP
done
echo "nvmet_plot: results in $out (nvmet.csv, nvmet_summary.csv, nvmet_ratio.png/.svg)"

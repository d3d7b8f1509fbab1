#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The full benchmark sweep: rdmarw-perf READ and WRITE on the software
# device with memcpy over the same buffers (measured by rdmarw-perf in the
# same run, interleaved with the I/O), the control path per path
# (rdmarw-perf --ctl), and UCX's ucx_perftest put/get over shared memory
# between two processes on this machine.  Writes CSV files, a side-by-side
# summary and PNG and SVG plots.  bench/README.md explains every figure.
#
# Usage: bench/run.sh [outdir]   (default: $BUILD/bench)
# Env:   PROFILE=rxe SGE=1 CTXS=16 DURATION=0.3 MAX=8M UCX=1 BUILD=build
#        UCX_TLS (default sm,self: shared-memory transports only)
#        RDMARW_BENCH_QUICK=1: a check of the script and its plots in a
#        few seconds (DURATION=0.02 MAX=64K UCX=0 unless set), no figures
#        to quote
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) bdir=$BUILD ;; *) bdir=$top/$BUILD ;; esac
out=${1:-$bdir/bench}
PROFILE=${PROFILE:-rxe}
SGE=${SGE:-1}
CTXS=${CTXS:-16}
if [ "${RDMARW_BENCH_QUICK:-0}" = 1 ]; then
	DURATION=${DURATION:-0.02}
	MAX=${MAX:-64K}
	UCX=${UCX:-0}
fi
DURATION=${DURATION:-0.3}
MAX=${MAX:-8M}
UCX=${UCX:-1}
UCX_TLS=${UCX_TLS:-sm,self}
export UCX_TLS
mkdir -p "$out"

# gnuplot (and ucx_perftest) through scripts/deps.sh, which installs only
# what is missing and says what it installs.
if [ "$UCX" = 1 ]; then
	"$top/scripts/deps.sh" bench-ucx
else
	"$top/scripts/deps.sh" bench
fi

make -C "$top" build BUILD="$BUILD" >/dev/null
perf="$bdir/tools/rdmarw-perf"

# One flat JSON object per line -> the named fields, comma-separated.
json_csv() {
	sed -n 's/^,*{\(.*\)}.*$/\1/p' | tr -d '"' | awk -F, -v keys="$1" '{
		delete v
		for (i = 1; i <= NF; i++) {
			k = substr($i, 1, index($i, ":") - 1)
			v[k] = substr($i, index($i, ":") + 1)
		}
		n = split(keys, ks, ",")
		line = ""
		for (i = 1; i <= n; i++)
			line = line (i > 1 ? "," : "") v[ks[i]]
		print line
	}'
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)
t_start=$(date +%s)
commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)

# 1. rdmarw-perf: READ and WRITE at every size, memcpy beside them.
csv="$out/rdmarw.csv"
keys="op,bytes,iters,bw_peak_mib,bw_avg_mib,mpps,ns_per_io,memcpy_mib,ratio,ctl_ns,path,cpu_ns_per_io,cpu_ratio"
keys="$keys,ratio_min,ratio_max,cpu_ratio_min,cpu_ratio_max"
echo "$keys" >"$csv"
"$perf" --quiet --json --profile "$PROFILE" --sge "$SGE" --ctxs "$CTXS" \
	-D "$DURATION" --sweep="2:$MAX" | json_csv "$keys" >>"$csv"

# 2. The control path per path (init + wrs + destroy, nothing posted).
ctl="$out/ctl.csv"
ckeys="what,path,nents,sge_len,wrs,mrs,ns_per_io,ns_per_io_min,ns_per_sge,ns_per_mr"
echo "$ckeys" >"$ctl"
"$perf" --quiet --json --ctl --profile "$PROFILE" -D "$DURATION" |
	grep '"mode":"ctl"' |
	json_csv "$ckeys" >>"$ctl"
ctl_sum=$("$perf" --quiet --ctl --profile "$PROFILE" -D "$DURATION" | tail -1)

# 3. ucx_perftest over shared memory, two processes, the same sizes.
ucsv="$out/ucx.csv"
echo "op,bytes,bw_mib,mpps" >"$ucsv"
if [ "$UCX" = 1 ]; then
	port=$((13500 + $$ % 1000))
	for size in $(awk -F, 'NR > 1 && $1 == "WRITE" { print $2 }' "$csv"); do
		for t in ucp_put_bw ucp_get; do
			port=$((port + 1))
			n=$((size >= 1048576 ? 2000 : (size >= 65536 ? 20000 : 200000)))
			timeout 120 ucx_perftest -p $port >/dev/null 2>&1 &
			srv=$!
			sleep 0.3
			line=$(timeout 120 ucx_perftest 127.0.0.1 -t $t -s "$size" \
				-n $n -p $port -f -v 2>/dev/null | tail -1 || true)
			wait $srv 2>/dev/null || true
			op=PUT
			[ $t = ucp_get ] && op=GET
			# iterations,lat50,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr
			echo "$line" | awk -F, -v op=$op -v sz="$size" \
				'NF >= 8 && $1 ~ /^[0-9]+$/ {
					printf "%s,%s,%s,%.4f\n", op, sz, $6, $8 / 1e6 }' >>"$ucsv"
		done
	done
fi

# 4. Side by side.
tab="$out/summary.txt"
{
	echo "# rdmarw bench: commit $commit, $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo |
		cut -d: -f2 | sed 's/^ *//'), load $load_start at start, $(load) at end"
	echo "# rdmarw-perf: profile $PROFILE, $SGE SGE, $CTXS in flight, $DURATION s per size;" \
		"ucx_perftest: UCX_TLS=$UCX_TLS, two processes"
	echo "# BW in MiB/s.  ratio = rdmarw / memcpy (same run, wall clock); CPU ns and"
	echo "# cpu ratio: the same in this thread's CPU time; vs ucx = rdmarw BW / ucx BW"
	printf "%-6s %9s %11s %9s %7s %7s %11s %7s %6s | %-4s %11s %9s | %7s\n" \
		op bytes "rdmarw BW" Mpps "ns/IO" "CPU ns" "memcpy BW" ratio \
		"cpu r" ucx "ucx BW" "ucx Mpps" "vs ucx"
	awk -F, 'FNR == NR { if (FNR > 1) { u[$1 "," $2] = $3; m[$1 "," $2] = $4 }
			next }
		FNR > 1 {
			uop = ($1 == "WRITE") ? "PUT" : "GET"; k = uop "," $2
			ub = (k in u) ? u[k] : ""
			printf "%-6s %9s %11.1f %9.3f %7.1f %7.1f %11.1f %7.3f %6.3f | %-4s %11s %9s | %7s\n",
				$1, $2, $5, $6, $7, $12, $8, $9, $13, uop,
				(ub == "" ? "-" : sprintf("%.1f", ub)),
				(ub == "" ? "-" : sprintf("%.3f", m[k])),
				(ub == "" || ub == 0 ? "-" : sprintf("%.3f", $5 / ub))
		}' "$ucsv" "$csv"
	echo
	echo "# control path (rdmarw-perf --ctl): init + wrs + destroy, nothing posted"
	printf "%-8s %-6s %6s %8s %4s %4s %9s %9s %8s %8s\n" shape path "#SGE" \
		"SGE len" WRs MRs "ns/IO" min "ns/SGE" "ns/MR"
	awk -F, 'NR > 1 { printf "%-8s %-6s %6s %8s %4s %4s %9.1f %9.1f %8.2f %8s\n",
		$1, $2, $3, $4, $5, $6, $7, $8, $9, ($6 > 0 ? sprintf("%.1f", $10) : "-") }' \
		"$ctl"
	echo "$ctl_sum"
} | tee "$tab"

# 5. Plots: bandwidth, message rate and the ratio to memcpy against size,
# PNG and SVG.  One file per series, so that gnuplot draws each as a line;
# one colour per series, the same in every figure; every figure captioned
# with the commit, the load at the start and the duration of the run.
c_write="#1f77b4"   # rdmarw WRITE
c_read="#d62728"    # rdmarw READ
c_mc_write="#6baed6" # memcpy, same bytes as the WRITE run
c_mc_read="#fc9272" # memcpy, same bytes as the READ run
c_put="#2ca02c"     # ucx_perftest put
c_get="#9467bd"     # ucx_perftest get
for op in WRITE READ; do
	awk -F, -v op=$op 'NR > 1 && $1 == op' "$csv" >"$out/.rdmarw_$op.csv"
done
for op in PUT GET; do
	awk -F, -v op=$op 'NR > 1 && $1 == op' "$ucsv" >"$out/.ucx_$op.csv"
done
# the UCX series only when there is something to draw
ucx_bw="" ucx_mr=""
if [ -s "$out/.ucx_PUT.csv" ]; then
	ucx_bw="$ucx_bw, \"$out/.ucx_PUT.csv\" using 2:3 with linespoints lw 2 lc rgb \"$c_put\" title \"ucx_perftest put (shm)\""
	ucx_mr="$ucx_mr, \"$out/.ucx_PUT.csv\" using 2:4 with linespoints lw 2 lc rgb \"$c_put\" title \"ucx_perftest put (shm)\""
fi
if [ -s "$out/.ucx_GET.csv" ]; then
	ucx_bw="$ucx_bw, \"$out/.ucx_GET.csv\" using 2:3 with linespoints lw 2 lc rgb \"$c_get\" title \"ucx_perftest get (shm)\""
	ucx_mr="$ucx_mr, \"$out/.ucx_GET.csv\" using 2:4 with linespoints lw 2 lc rgb \"$c_get\" title \"ucx_perftest get (shm)\""
fi
xtics=$(awk -F, 'NR > 1 { print $2 }' "$csv" | sort -n | uniq | awk '
	NR % 2 == 1 {
		b = $1; u = "B"
		if (b >= 1048576) { b /= 1048576; u = "MiB" }
		else if (b >= 1024) { b /= 1024; u = "KiB" }
		s = s (s == "" ? "" : ", ") "\"" b " " u "\" " $1
	} END { print s }')
secs=$(($(date +%s) - t_start))
caption="commit $commit, $(date -u +%Y-%m-%d), load $load_start at start, run of ${secs} s ($DURATION s per size); $(nproc) cores; profile $PROFILE, $SGE SGE, $CTXS in flight"
for fmt in png svg; do
	term="pngcairo size 1100,650 font ',10'"
	[ $fmt = svg ] && term="svg size 1100,650 font 'sans,10'"
	gnuplot <<GP
set terminal $term
set datafile separator ","
set datafile missing "null"
set termoption noenhanced
set logscale x 2
set logscale y 10
set xtics ($xtics)
set key top left box opaque
set grid
set bmargin 5
set offsets graph 0.02, graph 0.02, 0, 0
set label 1 "$caption" at screen 0.01, 0.02 left
set xlabel "message size"
set output "$out/bandwidth.$fmt"
set ylabel "bandwidth (MiB/s)"
set title "rdmarw on the software device vs memcpy and UCX over shared memory"
plot "$out/.rdmarw_WRITE.csv" using 2:5 with linespoints lw 2 lc rgb "$c_write" title "rdmarw WRITE", \
     "$out/.rdmarw_READ.csv" using 2:5 with linespoints lw 2 lc rgb "$c_read" title "rdmarw READ", \
     "$out/.rdmarw_WRITE.csv" using 2:8 with lines dt 2 lw 2 lc rgb "$c_mc_write" title "memcpy, same bytes (WRITE run)", \
     "$out/.rdmarw_READ.csv" using 2:8 with lines dt 3 lw 2 lc rgb "$c_mc_read" title "memcpy, same bytes (READ run)"$ucx_bw
set output "$out/msgrate.$fmt"
set ylabel "million messages per second"
set key top right box opaque
set title "message rate: one I/O = init + post + completion + destroy (rdmarw), one put/get (UCX)"
plot "$out/.rdmarw_WRITE.csv" using 2:6 with linespoints lw 2 lc rgb "$c_write" title "rdmarw WRITE", \
     "$out/.rdmarw_READ.csv" using 2:6 with linespoints lw 2 lc rgb "$c_read" title "rdmarw READ"$ucx_mr
set output "$out/ratio.$fmt"
unset logscale y
set yrange [0:*]
set ylabel "rdmarw / memcpy, CPU time (1.0 = the copy alone)"
set key top left box opaque
set title "ratio to memcpy over the same bytes: the whole run, bars from the lowest to the highest of its rounds"
plot "$out/.rdmarw_WRITE.csv" using 2:13:16:17 with yerrorlines lw 2 lc rgb "$c_write" title "rdmarw WRITE", \
     "$out/.rdmarw_READ.csv" using 2:13:16:17 with yerrorlines lw 2 lc rgb "$c_read" title "rdmarw READ", \
     0.95 with lines dt 2 lw 1 lc rgb "#555555" title "target 0.95 (from 64 KiB)"
GP
done
rm -f "$out"/.rdmarw_*.csv "$out"/.ucx_*.csv
echo "bench: results in $out (rdmarw.csv, ctl.csv, ucx.csv, summary.txt, bandwidth, msgrate and ratio .png/.svg)"

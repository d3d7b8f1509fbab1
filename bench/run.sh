#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The full benchmark sweep: rdmarw-perf READ and WRITE on the software
# device, memcpy over the same buffers (printed by rdmarw-perf in the same
# run), and UCX's ucx_perftest put/get over shared memory between two
# processes on this machine.  Writes CSV files and draws PNG and SVG plots.
#
# Usage: bench/run.sh [outdir]   (default: build/bench)
# Env:   PROFILE=rxe SGE=1 CTXS=16 DURATION=0.3 MAX=8M UCX=1
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/bench}
PROFILE=${PROFILE:-rxe}
SGE=${SGE:-1}
CTXS=${CTXS:-16}
DURATION=${DURATION:-0.3}
MAX=${MAX:-8M}
UCX=${UCX:-1}
mkdir -p "$out"

need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "bench: installing $2"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
need gnuplot gnuplot-nox
[ "$UCX" = 1 ] && need ucx_perftest ucx-utils

make -C "$top" build >/dev/null
perf="$top/build/tools/rdmarw-perf"

# 1. rdmarw-perf: one JSON object per size and direction -> CSV.
csv="$out/rdmarw.csv"
echo "op,bytes,iters,bw_peak_mib,bw_avg_mib,mpps,memcpy_mib,ratio,ctl_ns,path" >"$csv"
"$perf" -q -j -p "$PROFILE" -e "$SGE" -c "$CTXS" -D "$DURATION" -a "2:$MAX" |
	sed -n 's/^,*{\(.*\)}.*$/\1/p' | tr -d '"' |
	awk -F, '{
		for (i = 1; i <= NF; i++) { split($i, kv, ":"); v[kv[1]] = kv[2] }
		printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", v["op"], v["bytes"],
			v["iters"], v["bw_peak_mib"], v["bw_avg_mib"], v["mpps"],
			v["memcpy_mib"], v["ratio"], v["ctl_ns"], v["path"]
	}' >>"$csv"

# 2. ucx_perftest over shared memory, two processes, same sizes.
ucsv="$out/ucx.csv"
echo "op,bytes,bw_mib,mpps" >"$ucsv"
if [ "$UCX" = 1 ]; then
	port=13500
	for size in $(awk -F, 'NR > 1 && $1 == "WRITE" { print $2 }' "$csv"); do
		for t in ucp_put_bw ucp_get; do
			port=$((port + 1))
			n=$(( size >= 1048576 ? 2000 : (size >= 65536 ? 20000 : 200000) ))
			ucx_perftest -t $t -s "$size" -n $n -p $port >/dev/null 2>&1 &
			srv=$!
			sleep 0.3
			line=$(timeout 120 ucx_perftest localhost -t $t -s "$size" -n $n \
				-p $port -f -v 2>/dev/null | tail -1 || true)
			wait $srv 2>/dev/null || true
			op=PUT; [ $t = ucp_get ] && op=GET
			echo "$line" | awk -F, -v op=$op -v sz="$size" \
				'NF >= 8 { printf "%s,%s,%s,%.4f\n", op, sz, $6, $8 / 1e6 }' >>"$ucsv"
		done
	done
fi

# 3. Side by side, and plots.
tab="$out/summary.txt"
{
	printf "%-6s %10s %12s %12s %7s | %-4s %12s %9s | %7s\n" op bytes \
		"rdmarw MiB/s" "memcpy MiB/s" ratio ucx "ucx MiB/s" "ucx Mpps" "vs ucx"
	awk -F, 'FNR == NR { if (FNR > 1) u[$1 "," $2] = $3; next }
		FNR > 1 {
			uop = ($1 == "WRITE") ? "PUT" : "GET"; ub = u[uop "," $2]
			printf "%-6s %10s %12.1f %12.1f %7.3f | %-4s %12s %9s | %7s\n",
				$1, $2, $5, $7, $8, uop, (ub == "" ? "-" : ub), "",
				(ub == "" || ub == 0 ? "-" : sprintf("%.3f", $5 / ub))
		}' "$ucsv" "$csv"
} | tee "$tab"

for fmt in png svg; do
	term="pngcairo size 1000,600"
	[ $fmt = svg ] && term="svg size 1000,600"
	gnuplot <<GP
set terminal $term
set datafile separator ","
set logscale x 2
set logscale y 10
set key top left
set grid
set xlabel "message size (bytes)"
set output "$out/bandwidth.$fmt"
set ylabel "MiB/s"
set title "rdmarw on the software device ($PROFILE, $SGE SGE, $CTXS in flight) vs memcpy and UCX shm"
plot "$csv" using (\$1 eq "WRITE" ? \$2 : 1/0):5 with linespoints title "rdmarw WRITE", \
     "$csv" using (\$1 eq "READ" ? \$2 : 1/0):5 with linespoints title "rdmarw READ", \
     "$csv" using (\$1 eq "WRITE" ? \$2 : 1/0):7 with lines dt 2 title "memcpy", \
     "$ucsv" using (\$1 eq "PUT" ? \$2 : 1/0):3 with linespoints title "ucx put (shm)", \
     "$ucsv" using (\$1 eq "GET" ? \$2 : 1/0):3 with linespoints title "ucx get (shm)"
set output "$out/msgrate.$fmt"
set ylabel "M messages/s"
set title "message rate"
plot "$csv" using (\$1 eq "WRITE" ? \$2 : 1/0):6 with linespoints title "rdmarw WRITE", \
     "$csv" using (\$1 eq "READ" ? \$2 : 1/0):6 with linespoints title "rdmarw READ", \
     "$ucsv" using (\$1 eq "PUT" ? \$2 : 1/0):4 with linespoints title "ucx put (shm)", \
     "$ucsv" using (\$1 eq "GET" ? \$2 : 1/0):4 with linespoints title "ucx get (shm)"
GP
done
echo "bench: results in $out (rdmarw.csv, ucx.csv, summary.txt, bandwidth.png/svg, msgrate.png/svg)"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (tests/lab/lab.sh bench, make lab-bench):
# rdmarw-perf against perftest's ib_write_bw / ib_read_bw (both over
# rdma_cm, -R) on rxe0 and siw0, the same message sizes and iterations,
# alternating one run of each ROUNDS times; prints the median BW average
# of each (MiB/s, 2^20 bytes per second, as both print it), the ratio
# rdmarw-perf / perftest, and how many runs of each gave a figure.
# Usage: sh tests/lab/bench.sh PERF_BINARY [ROUNDS] [DEVICES]
# Exit status: measurements that failed.
perf=${1:-build-lab/tools/rdmarw-perf}
rounds=${2:-3}
devs=${3:-rxe0 siw0}
port=19100
fails=0
# size:iterations; each run takes about a second under emulation
SIZES=${RDMARW_BENCH_SIZES:-4096:1500 65536:600 1048576:60}
DEPTH=128
. "${0%/*}/lib.sh"

# perftest OP DEV ADDR SIZE ITERS: the client's BW average.
perftest() {
	port=$((port + 1))
	# a side whose peer failed would wait for ever: bound both
	timeout 60 "ib_$1_bw" -d "$2" -R -F -s "$4" -n "$5" -t $DEPTH \
		-p $port >/tmp/pt-srv.log 2>&1 &
	srv=$!
	sleep 0.5
	timeout 60 "ib_$1_bw" -d "$2" -R -F -s "$4" -n "$5" -t $DEPTH \
		-p $port "$3" >/tmp/pt-cli.log 2>&1
	wait $srv
	awk -v s="$4" '$1 == s && NF >= 5 { print $4 }' /tmp/pt-cli.log
}

# rdmarw OP DEV ADDR SIZE ITERS: rdmarw-perf's BW average.
rdmarw() {
	timeout 60 "$perf" --ib-dev "$2" --addr "$3" --dir "$1" -s "$4" \
		-n "$5" --ctxs $DEPTH --quiet --json >/tmp/rw.log 2>&1
	sed -n 's/.*"bw_avg_mib":\([0-9.]*\).*/\1/p' /tmp/rw.log | head -n 1
}

printf '%-5s %-5s %8s %6s %12s %12s %6s %5s\n' dev op bytes iters \
	"perftest" "rdmarw-perf" ratio runs
for dev in $devs; do
	addr=$(lab_addr "$dev")
	for op in write read; do
		for si in $SIZES; do
			size=${si%%:*}
			iters=${si#*:}
			pt=""
			rw=""
			k=0
			while [ $k -lt "$rounds" ]; do
				pt="$pt $(perftest $op "$dev" "$addr" "$size" "$iters")"
				rw="$rw $(rdmarw $op "$dev" "$addr" "$size" "$iters")"
				k=$((k + 1))
			done
			# lib.sh's valid and median: a run without a figure
			# (perftest now and then prints a BW average of 0.00)
			# does not count
			ptn=$(echo "$pt" | valid)
			rwn=$(echo "$rw" | valid)
			# a figure needs most of its runs
			[ $((2 * ptn)) -gt "$rounds" ] || fails=$((fails + 1))
			[ $((2 * rwn)) -gt "$rounds" ] || fails=$((fails + 1))
			ptm=$(echo "$pt" | median)
			rwm=$(echo "$rw" | median)
			printf '%-5s %-5s %8s %6s %12s %12s %6s %5s\n' "$dev" \
				$op "$size" "$iters" "$ptm" "$rwm" \
				"$(awk -v a="$rwm" -v b="$ptm" \
					'BEGIN { if (b > 0) printf "%.2f", a / b;
						 else print "-" }')" \
				"$ptn/$rwn"
			if [ -n "${RDMARW_BENCH_VERBOSE:-}" ]; then
				echo "  perftest:$pt  rdmarw-perf:$rw"
			fi
		done
	done
done
echo "bench: $fails measurements failed"
exit $fails

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (tests/lab/lab.sh bench, part "tcp"; issue 28):
# rdmarw's iWARP over TCP between two processes (rdmarw-perf --profile
# siw-tcp, server and client) against the kernel's siw (perftest's
# ib_write_bw / ib_read_bw -R on siw0) on siw0's address, the same sizes,
# iterations and depth, alternating one run of each ROUNDS times; and the
# physical limit, a plain TCP socket pair moving the same bytes
# (bench-tcp's second figure).  Prints the median BW average of each
# (MiB/s), the ratios rdmarw / kernel siw and rdmarw / socket pair, and
# 64 B latency (ib_write_lat / ib_read_lat -R against rdmarw-perf --lat,
# median of the typical figure: WRITE half the round trip, READ the whole).
# rdmarw runs twice: asking for MPA CRCs (its default) and not
# (RDMARW_MPA_CRC=0: like two kernel siw ends, which never ask).
# Usage: sh tests/lab/tcp-bench.sh BUILD_DIR [ROUNDS]
# Exit status: measurements that failed.
build=${1:-build-lab}
rounds=${2:-3}
perf=$build/tools/rdmarw-perf
btcp=$build/bench/bench-tcp
port=19300
fails=0
SIZES=${RDMARW_BENCH_TCP_SIZES:-65536:600 262144:200 1048576:60}
DEPTH=16
. "${0%/*}/lib.sh"
addr=$(lab_addr siw0)

# kernel OP SIZE ITERS: perftest's client BW average over siw0.
kernel() {
	port=$((port + 1))
	timeout 60 "ib_$1_bw" -d siw0 -R -F -s "$2" -n "$3" -t $DEPTH \
		-p $port >/tmp/pt-srv.log 2>&1 &
	srv=$!
	sleep 0.5
	timeout 60 "ib_$1_bw" -d siw0 -R -F -s "$2" -n "$3" -t $DEPTH \
		-p $port "$addr" >/tmp/pt-cli.log 2>&1
	wait $srv
	awk -v s="$2" '$1 == s && NF >= 5 { print $4 }' /tmp/pt-cli.log
}

# rdmarw OP SIZE ITERS [--lat]: rdmarw-perf's client figure, two processes
# on siw-tcp (BW average, or with --lat the typical latency).  The client
# asks for MPA CRCs unless $crc is 0 (RDMARW_MPA_CRC: two kernel siw ends
# run without them, siw never asks).
rdmarw() {
	port=$((port + 1))
	timeout 60 "$perf" --profile siw-tcp -p $port --json \
		>/tmp/rw-srv.log 2>&1 &
	srv=$!
	sleep 0.5
	RDMARW_MPA_CRC=${crc:-1} timeout 60 "$perf" --profile siw-tcp \
		-p $port --json --dir "$1" \
		-s "$2" -n "$3" -t $DEPTH $4 "$addr" >/tmp/rw-cli.log 2>&1
	wait $srv
	if [ "$4" = --lat ]; then
		sed -n 's/.*"t_typical":\([0-9.]*\).*/\1/p' /tmp/rw-cli.log
	else
		sed -n 's/.*"bw_avg_mib":\([0-9.]*\).*/\1/p' /tmp/rw-cli.log
	fi | head -n 1
}

# socket SIZE ITERS: bench-tcp's socket pair, MB/s as MiB/s.
socket() {
	timeout 60 "$btcp" -s "$1" -n "$2" -q $DEPTH 2>/dev/null |
		sed -n 's/.*socket pair \([0-9.]*\) MB\/s.*/\1/p' |
		awk '{ printf "%.2f\n", $1 * 1e6 / 1048576 }'
}

# kernel_lat OP: ib_OP_lat's typical latency, 64 B.
kernel_lat() {
	port=$((port + 1))
	timeout 60 "ib_$1_lat" -d siw0 -R -F -s 64 -n 1000 -p $port \
		>/tmp/pl-srv.log 2>&1 &
	srv=$!
	sleep 0.5
	timeout 60 "ib_$1_lat" -d siw0 -R -F -s 64 -n 1000 -p $port "$addr" \
		>/tmp/pl-cli.log 2>&1
	wait $srv
	# #bytes #iterations t_min t_max t_typical ...
	awk '$1 == 64 && NF >= 5 { print $5 }' /tmp/pl-cli.log
}

ratio() {
	awk -v a="$1" -v b="$2" \
		'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}

# enough OF: fails unless most of the runs gave a figure
enough() {
	[ $((2 * $(echo "$1" | valid))) -gt "$rounds" ] || fails=$((fails + 1))
}

printf '%-5s %8s %6s %12s %12s %12s %12s %9s %9s %9s\n' op bytes iters \
	"kernel-siw" "rdmarw-tcp" "rdmarw-nocrc" "socketpair" "/siw" \
	"nocrc/siw" "/socket"
for op in write read; do
	for si in $SIZES; do
		size=${si%%:*}
		iters=${si#*:}
		k=0
		ks=""
		rs=""
		ns=""
		ss=""
		while [ $k -lt "$rounds" ]; do
			ks="$ks $(kernel $op "$size" "$iters")"
			rs="$rs $(rdmarw $op "$size" "$iters")"
			ns="$ns $(crc=0 rdmarw $op "$size" "$iters")"
			ss="$ss $(socket "$size" "$iters")"
			k=$((k + 1))
		done
		enough "$ks"
		enough "$rs"
		enough "$ns"
		enough "$ss"
		km=$(echo "$ks" | median)
		rm=$(echo "$rs" | median)
		nm=$(echo "$ns" | median)
		sm=$(echo "$ss" | median)
		printf '%-5s %8s %6s %12s %12s %12s %12s %9s %9s %9s\n' $op \
			"$size" "$iters" "$km" "$rm" "$nm" "$sm" \
			"$(ratio "$rm" "$km")" "$(ratio "$nm" "$km")" \
			"$(ratio "$rm" "$sm")"
		echo "  runs: kernel-siw:$ks rdmarw-tcp:$rs" \
			"rdmarw-nocrc:$ns socketpair:$ss"
	done
done
printf '%-5s %8s %12s %12s %12s %9s %9s  (usec, median of %s)\n' op \
	bytes "kernel-siw" "rdmarw-tcp" "rdmarw-nocrc" "/siw" "nocrc/siw" \
	"$rounds"
for op in write read; do
	k=0
	ks=""
	rs=""
	ns=""
	while [ $k -lt "$rounds" ]; do
		ks="$ks $(kernel_lat $op)"
		rs="$rs $(rdmarw $op 64 1000 --lat)"
		ns="$ns $(crc=0 rdmarw $op 64 1000 --lat)"
		k=$((k + 1))
	done
	enough "$ks"
	enough "$rs"
	enough "$ns"
	km=$(echo "$ks" | median)
	rm=$(echo "$rs" | median)
	nm=$(echo "$ns" | median)
	printf '%-5s %8s %12s %12s %12s %9s %9s\n' $op 64 "$km" "$rm" "$nm" \
		"$(ratio "$rm" "$km")" "$(ratio "$nm" "$km")"
	echo "  runs: kernel-siw:$ks rdmarw-tcp:$rs rdmarw-nocrc:$ns"
done
echo "tcp-bench: $fails measurements failed"
exit $fails

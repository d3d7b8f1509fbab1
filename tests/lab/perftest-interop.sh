#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (tests/lab/lab.sh bench, part "perftest"; issue
# 28): perftest's own ib_write_bw, ib_read_bw and ib_send_bw -R on the kernel's siw
# (siw0) against rdmarw-perf --perftest on rdmarw's iWARP over TCP
# (--profile siw-tcp, a user process with no RDMA device open), both ways:
#   pt>rw  perftest's client, rdmarw-perf --perftest's server
#   rw>pt  rdmarw-perf --perftest's client, perftest's server
# and perftest on both ends (pt>pt) for reference, the same sizes,
# iterations and depth.  Prints each run's BW average (MiB/s) as each end
# printed it: the client's own, and the server's print of the client's
# report (the exchange carries it), so every figure of a mixed WRITE or
# READ run is also perftest's own; a SEND server prints what it received
# (ib_send_bw's receiver WRITEs credits to the sender: both ends of a
# mixed run speak them).  Then ib_write_lat, ib_read_lat and ib_send_lat
# -R against rdmarw-perf --perftest --lat the same three ways: the
# client's typical latency.
# Usage: sh tests/lab/perftest-interop.sh BUILD_DIR [ROUNDS]
# Exit status: runs that failed or gave no figure.
build=${1:-build-lab}
rounds=${2:-1}
perf=$build/tools/rdmarw-perf
port=19500
fails=0
SIZES=${RDMARW_PERFTEST_SIZES:-4096:1000 65536:400 1048576:40}
DEPTH=16
. "${0%/*}/lib.sh"
addr=$(lab_addr siw0)

# wait_listen PORT: until a TCP socket listens on PORT (/proc/net/tcp:
# local port in hex, state 0A), at most 10 s.
wait_listen() {
	hex=$(printf '%04X' "$1")
	i=0
	while [ $i -lt 100 ] && ! awk -v p=":$hex" \
		'$2 ~ p "$" && $4 == "0A" { f = 1 } END { exit !f }' \
		/proc/net/tcp; do
		sleep 0.1
		i=$((i + 1))
	done
}

# figure LOG SIZE: the BW average of SIZE's row in LOG, perftest's
# ("#bytes #iterations peak average rate") or rdmarw-perf's ("op #bytes
# #iterations peak average rate by"); "none" without such a row.
figure() {
	awk -v s="$2" '$1 == s && NF >= 5 { v = $4 }
		$2 == s && NF >= 7 { v = $5 }
		END { if (v == "") print "none"; else print v + 0 }' "$1"
}

# lat_figure LOG SIZE: the typical latency of SIZE's row in LOG,
# perftest's ("#bytes #iterations t_min t_max t_typical ...") or
# rdmarw-perf's ("op #bytes #iterations t_min t_max t_typical ...").
lat_figure() {
	awk -v s="$2" '$1 == s && NF >= 7 { v = $5 }
		$2 == s && NF >= 9 { v = $6 }
		END { if (v == "") print "none"; else print v + 0 }' "$1"
}

# pt_lserver, rw_lserver, pt_lclient, rw_lclient OP SIZE ITERS: the same
# for ib_OP_lat and rdmarw-perf --perftest --lat (both ends count -n)
pt_lserver() {
	timeout 90 "ib_$1_lat" -d siw0 -R -F -s "$2" -n "$3" -p $port \
		>/tmp/pi-srv.log 2>&1 &
	srv=$!
	wait_listen $port
}

rw_lserver() {
	timeout 90 "$perf" --perftest --lat --profile siw-tcp -p $port \
		--dir "$1" -s "$2" -n "$3" >/tmp/pi-srv.log 2>&1 &
	srv=$!
	wait_listen $port
}

pt_lclient() {
	timeout 90 "ib_$1_lat" -d siw0 -R -F -s "$2" -n "$3" -p $port \
		"$addr" >/tmp/pi-cli.log 2>&1
}

rw_lclient() {
	timeout 90 "$perf" --perftest --lat --profile siw-tcp -p $port \
		--dir "$1" -s "$2" -n "$3" --quiet "$addr" >/tmp/pi-cli.log 2>&1
}

# lat_pair SERVER CLIENT OP SIZE ITERS: one latency run; prints the
# client's typical latency, or "fail" (and the logs).
lat_pair() {
	port=$((port + 1))
	"$1" "$3" "$4" "$5"
	"$2" "$3" "$4" "$5"
	c=$?
	wait $srv
	s=$?
	cf=$(lat_figure /tmp/pi-cli.log "$4")
	if [ $c -ne 0 ] || [ $s -ne 0 ] || [ "$cf" = none ]; then
		{
			echo "FAIL: $1 $2 $3 $4: client $c, server $s"
			sed 's/^/  client| /' /tmp/pi-cli.log | tail -15
			sed 's/^/  server| /' /tmp/pi-srv.log | tail -15
		} >&2
		echo fail
		return
	fi
	echo "$cf"
}

# pt_server OP SIZE ITERS: perftest's server on siw0, in the background
pt_server() {
	timeout 90 "ib_$1_bw" -d siw0 -R -F -s "$2" -n "$3" -t $DEPTH \
		-p $port >/tmp/pi-srv.log 2>&1 &
	srv=$!
	wait_listen $port
}

# rw_server OP SIZE ITERS: rdmarw-perf --perftest's server, in the
# background (a SEND server counts -n SENDs, as ib_send_bw's)
rw_server() {
	n=
	[ "$1" != send ] || n="-n $3"
	# shellcheck disable=SC2086 # $n: an option and its value, or nothing
	timeout 90 "$perf" --perftest --profile siw-tcp -p $port --dir "$1" \
		-s "$2" $n >/tmp/pi-srv.log 2>&1 &
	srv=$!
	wait_listen $port
}

# pt_client OP SIZE ITERS
pt_client() {
	timeout 90 "ib_$1_bw" -d siw0 -R -F -s "$2" -n "$3" -t $DEPTH \
		-p $port "$addr" >/tmp/pi-cli.log 2>&1
}

# rw_client OP SIZE ITERS
rw_client() {
	timeout 90 "$perf" --perftest --profile siw-tcp -p $port --dir "$1" \
		-s "$2" -n "$3" -t $DEPTH --quiet "$addr" >/tmp/pi-cli.log 2>&1
}

# pair SERVER CLIENT OP SIZE ITERS: one run; prints "client/server"
# figures, "fail" (and the logs) when either end failed or printed no row.
# A figure of 0 is perftest's: now and then it prints a BW average of
# 0.00 under qemu (its own pair too), which is no failure of the exchange.
pair() {
	port=$((port + 1))
	"$1" "$3" "$4" "$5"
	"$2" "$3" "$4" "$5"
	c=$?
	wait $srv
	s=$?
	cf=$(figure /tmp/pi-cli.log "$4")
	sf=$(figure /tmp/pi-srv.log "$4")
	if [ $c -ne 0 ] || [ $s -ne 0 ] || [ "$cf" = none ] || [ "$sf" = none ]; then
		{
			echo "FAIL: $1 $2 $3 $4: client $c, server $s"
			sed 's/^/  client| /' /tmp/pi-cli.log | tail -15
			sed 's/^/  server| /' /tmp/pi-srv.log | tail -15
		} >&2
		echo fail
		return
	fi
	echo "$cf/$sf"
}

echo "perftest -R on siw0 (kernel) against rdmarw-perf --perftest on" \
	"siw-tcp (user space), $addr, depth $DEPTH"
echo "BW average in MiB/s, client/server (the server prints the" \
	"client's report)"
printf '%-5s %8s %6s %19s %19s %19s\n' op bytes iters "pt>pt" "pt>rw" \
	"rw>pt"
for op in write read send; do
	for si in $SIZES; do
		size=${si%%:*}
		iters=${si#*:}
		k=0
		while [ $k -lt "$rounds" ]; do
			a=$(pair pt_server pt_client $op "$size" "$iters")
			b=$(pair rw_server pt_client $op "$size" "$iters")
			c=$(pair pt_server rw_client $op "$size" "$iters")
			for r in "$a" "$b" "$c"; do
				[ "$r" != fail ] || fails=$((fails + 1))
			done
			printf '%-5s %8s %6s %19s %19s %19s\n' $op "$size" \
				"$iters" "$a" "$b" "$c"
			k=$((k + 1))
		done
	done
done
echo "latency (typical, usec; WRITE and SEND half the round trip, READ" \
	"the whole), the client's figure"
printf '%-5s %8s %6s %12s %12s %12s\n' op bytes iters "pt>pt" "pt>rw" "rw>pt"
for op in write read send; do
	for si in ${RDMARW_PERFTEST_LAT_SIZES:-64:1000 4096:500}; do
		size=${si%%:*}
		iters=${si#*:}
		k=0
		while [ $k -lt "$rounds" ]; do
			a=$(lat_pair pt_lserver pt_lclient $op "$size" "$iters")
			b=$(lat_pair rw_lserver pt_lclient $op "$size" "$iters")
			c=$(lat_pair pt_lserver rw_lclient $op "$size" "$iters")
			for r in "$a" "$b" "$c"; do
				[ "$r" != fail ] || fails=$((fails + 1))
			done
			printf '%-5s %8s %6s %12s %12s %12s\n' $op "$size" \
				"$iters" "$a" "$b" "$c"
			k=$((k + 1))
		done
	done
done
echo "perftest-interop: $fails runs failed"
exit $fails

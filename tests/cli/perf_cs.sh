#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdmarw-perf's client and server: latency (--lat) and bandwidth of WRITE,
# READ and SEND, -b, the server's report, the JSON records.
#
# On the software device the two ends are threads of one process, each on
# its own device, connected through rdma_cm; on siw-tcp (iWARP over TCP)
# the server and the client also run as two processes over loopback.  With
# RDMARW_TEST_DEVICE and RDMARW_TEST_ADDR (an ibv device and its IP, as
# the conformance tests take them: tests/lab/README.md) the server and the
# client also run as two processes on that device.
# Usage: perf_cs.sh RDMARW_PERF
set -u
perf=$1
checker=$(dirname "$0")/perf_check.awk
out=$(mktemp) srv=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$srv" "$err"' EXIT
fails=0

# check NAME WHAT FILE...: the records of FILE(s) (JSON arrays) against
# WHAT: "lat:OPS" (a client and a server record per op, percentiles
# ordered and positive) or "bw:OPS[:bidir]" (a positive BW per op and
# end, and with bidir a "both" row on each end) or "secs:LO:HI";
# perf_check.awk checks them (POSIX awk: it runs in the lab guest too)
check() {
	name=$1 what=$2
	shift 2
	${AWK:-awk} -v what="$what" -f "$checker" "$@" || {
		echo "FAIL: $name:" >&2
		for f in "$@"; do sed 's/^/  | /' "$f" >&2; done
		fails=$((fails + 1))
	}
}

# run NAME ARGS...: rdmarw-perf ARGS --json into $out, bounded
run() {
	name=$1
	shift
	if ! timeout 60 "$perf" --json "$@" >"$out" 2>"$err"; then
		echo "FAIL: $name: rdmarw-perf --json $*: exit $?" >&2
		sed 's/^/  | /' "$err" >&2
		fails=$((fails + 1))
		return 1
	fi
}

# The servers' ports: below the kernel's ephemeral range, where the
# suite's other connections (run beside this one) take their local ports:
# listen() on a port an established connection holds fails (EADDRINUSE).
# $PERF_CS_PORT sets the first.
eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
case "$eph" in '' | *[!0-9]*) eph=32768 ;; esac
[ "$eph" -gt 12000 ] || eph=12000
port=${PERF_CS_PORT:-$((10000 + $$ % (eph - 10100)))}

# serve ARGS...: rdmarw-perf --profile siw-tcp -p $port --json ARGS in the
# background (pid $spid, records in $srv, messages in $err) until its
# socket listens (/proc/net/tcp*: local port in hex, state 0A), at most
# 10 s; a port another socket holds moves it to the next, at most 5 times
serve() {
	tries=0
	while :; do
		timeout 60 "$perf" --profile siw-tcp -p $port --json "$@" \
			>"$srv" 2>"$err" &
		spid=$!
		hex=$(printf '%04X' $port) i=0
		while [ $i -lt 100 ]; do
			if grep -q 'Address already in use' "$err"; then
				break
			fi
			cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
				awk -v p=":$hex" '$2 ~ p "$" && $4 == "0A" {
					f = 1 } END { exit !f }' && return 0
			sleep 0.1
			i=$((i + 1))
		done
		[ $i -lt 100 ] && [ $tries -lt 5 ] || return 0
		wait $spid
		echo "perf_cs: port $port is taken; the next" >&2
		port=$((port + 1)) tries=$((tries + 1))
	done
}

# the software device: client and server in this process (ctest runs
# these; the lab's guest, where every CPU cycle is emulated, skips them)
[ -n "${RDMARW_LAB:-}" ] || {
run soft_lat --lat -n 300 -s 64 --dir write,read,send &&
	check soft_lat lat:WRITE,READ,SEND "$out"
run soft_lat_siw --lat -n 100 -s 4K --dir write,send --profile siw 10.7.0.2 &&
	check soft_lat_siw lat:WRITE,SEND "$out"
run soft_bw_siw -n 3000 -s 4K --dir write,read,send --profile siw 10.7.0.2 &&
	check soft_bw_siw bw:WRITE,READ,SEND "$out"
run soft_bw_sweep -n 200 --sweep=64:1K --dir send -t 4 &&
	check soft_bw_sweep bw:SEND "$out"
run soft_bidir -b -n 1000 -s 16K --dir write,send --profile mlx5 &&
	check soft_bidir bw:WRITE,SEND:bidir "$out"
# -D: each test runs that long, as in the local run
run soft_duration -s 1K -D 0.2 --dir write &&
	check soft_duration secs:0.2:0.5 "$out"
# the table: the client's, then the server's
if ! timeout 60 "$perf" --lat -n 50 -s 8 >"$out" 2>"$err" ||
   ! grep -q '^WRITE  *8  *50 ' "$out" ||
   ! grep -q '^# the server (a thread of this process' "$out" ||
   [ "$(grep -c '^READ  *8  *50 ' "$out")" -ne 2 ]; then
	echo "FAIL: the table:" >&2
	sed 's/^/  | /' "$out" "$err" >&2
	fails=$((fails + 1))
fi
}

# two processes on the software device over TCP (siw-tcp, issue 28): the
# server with no HOST, the client given 127.0.0.1
[ -n "${RDMARW_LAB:-}" ] || {
for t in "--lat -n 100 -s 64 --dir write,read,send" \
	 "-n 300 -s 64K --dir write,read,send" "-b -n 200 -s 4K"; do
	serve
	# shellcheck disable=SC2086 # $t: the options
	if ! timeout 60 "$perf" --profile siw-tcp -p $port --json $t \
		127.0.0.1 >"$out" 2>>"$err" || ! wait $spid; then
		echo "FAIL: two processes on siw-tcp: $t" >&2
		sed 's/^/  | /' "$err" >&2
		fails=$((fails + 1))
		wait $spid
		port=$((port + 1))
		continue
	fi
	case "$t" in
	--lat*) check "siw-tcp $t" lat:WRITE,READ,SEND "$out" "$srv" ;;
	-b*) check "siw-tcp $t" bw:WRITE,READ:bidir "$out" "$srv" ;;
	*) check "siw-tcp $t" bw:WRITE,READ,SEND "$out" "$srv" ;;
	esac
	port=$((port + 1))
done

# --perftest (perftest's -R exchange, the one ib_write_bw, ib_read_bw,
# ib_send_bw and their _lat siblings speak with -R) on both ends, two
# processes: a WRITE or READ bandwidth server prints the client's report,
# which the exchange carries (the same iterations and size), and the
# client's figures are its own; a SEND bandwidth server counts what it
# received (its own row: every SEND of every size, the sender held to the
# credits it WRITEs: 2000 SENDs through a receive depth of 64, and a sweep
# whose sizes each start the credit word again); a WRITE latency server
# answers exactly -n pings (through the marks' wrap from 255 to 0), a SEND
# latency server -n SENDs, which the client counts.
for t in "--dir write -n 300 -s 64K" "--dir read -n 200 -s 4K" \
	 "--dir send -n 2000 -r 64 -s 4K" "--dir send -n 300 -a2:64K" \
	 "--lat --dir write -n 600 -s 64" "--lat --dir read -n 100 -s 64" \
	 "--lat --dir send -n 300 -s 64"; do
	# shellcheck disable=SC2086 # $t: the options
	serve --perftest $t
	op=$(echo "${t#*--dir }" | cut -d' ' -f1 | tr a-z A-Z)
	iters=$(echo "$t" | sed 's/.*-n \([0-9]*\).*/\1/')
	# ib_*_lat's server reports nothing: only the client's record; a
	# SEND bandwidth server measures what it received
	srole=server by=client
	case "$t" in
	--lat*) srole=client ;;
	*send*) by=server ;;
	esac
	# shellcheck disable=SC2086 # $t: the options
	if ! timeout 60 "$perf" --perftest --profile siw-tcp -p $port --json \
		$t 127.0.0.1 >"$out" 2>>"$err" || ! wait $spid ||
	   ! grep -q "\"op\":\"$op\".*\"iters\":$iters,.*\"role\":\"client\"" \
		"$out" ||
	   { [ $srole = server ] &&
	     ! grep -q "\"op\":\"$op\".*\"iters\":$iters,.*\"measured_by\":\"$by\".*\"role\":\"server\"" \
		"$srv"; } ||
	   { case "$t" in *-a2:64K*) true ;; *) false ;; esac &&
	     { [ "$(grep -c '"op":"SEND"' "$out")" -ne 16 ] ||
	       [ "$(grep -c '"op":"SEND"' "$srv")" -ne 16 ]; }; }; then
		echo "FAIL: --perftest on siw-tcp: $t" >&2
		sed 's/^/  | /' "$out" "$srv" "$err" >&2
		fails=$((fails + 1))
		wait $spid
		port=$((port + 1))
		continue
	fi
	case "$t" in
	--lat*) ;; # one end's record: perf_check.awk wants both
	*) check "--perftest $t" "bw:$op" "$out" "$srv" ;;
	esac
	port=$((port + 1))
done
# a --perftest client meets rdmarw-perf's own server (not perftest's):
# refused at the connection, within the bound
serve
timeout 60 "$perf" --perftest --profile siw-tcp -p $port -n 10 127.0.0.1 \
	>"$out" 2>>"$err"
rc=$?
{ kill $spid && wait $spid; } 2>/dev/null
if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
	echo "FAIL: --perftest against rdmarw-perf's own server: exit $rc" >&2
	sed 's/^/  | /' "$out" "$err" >&2
	fails=$((fails + 1))
fi
port=$((port + 1))
}

# two processes on an ibv device
dev=${RDMARW_TEST_DEVICE:-} addr=${RDMARW_TEST_ADDR:-}
if [ -n "$dev" ] && [ -n "$addr" ]; then
	for t in "--lat -n 50 -s 64 --dir write,read,send" \
		 "-n 100 -s 64K --dir write,read,send" "-b -n 100 -s 4K"; do
		timeout 60 "$perf" -d "$dev" -p $port --json >"$srv" 2>"$err" &
		spid=$!
		sleep 1
		# shellcheck disable=SC2086 # $t: the options
		if ! timeout 60 "$perf" -d "$dev" -p $port --json $t "$addr" \
			>"$out" 2>>"$err" || ! wait $spid; then
			echo "FAIL: two processes on $dev: $t" >&2
			sed 's/^/  | /' "$err" >&2
			fails=$((fails + 1))
			wait $spid
			continue
		fi
		case "$t" in
		--lat*) check "ibv $t" lat:WRITE,READ,SEND "$out" "$srv" ;;
		-b*) check "ibv $t" bw:WRITE,READ:bidir "$out" "$srv" ;;
		*) check "ibv $t" bw:WRITE,READ,SEND "$out" "$srv" ;;
		esac
		port=$((port + 1))
	done
else
	echo "perf_cs: two processes on an ibv device skipped" \
		"(RDMARW_TEST_DEVICE and RDMARW_TEST_ADDR name one)"
fi
[ "$fails" -eq 0 ] || exit 1
echo "perf_cs: latency ordered and positive, every end reported"

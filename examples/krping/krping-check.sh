#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# One ctest case of krping on the software device: runs the program and
# checks its exit status and what each end says it moved.
# Usage: krping-check.sh MODE KRPING PROFILE SIZE
#   ok       both ends in one process, --validate: exit 0, every ping
#            validated, the server read and wrote count x size bytes
#   user-mr  the same with --user-mr (the path without fast registration)
#   ipv6     the same over IPv6 addresses
#   refused  --client alone (nobody listens): exit 3, "rejected", 0 pings
#   too-big  a size one client MR cannot hold: exit 1 and the reason
#   alone    --server alone (no client comes): exit 1 after --timeout
#   usage    bad options: exit 2 each
#   tcp      PROFILE siw-tcp: the server and the client in two processes
#            over 127.0.0.1 (tcp6: ::1), --validate: both exit 0, every
#            ping validated, the server read and wrote count x size bytes
mode=$1
krping=$2
profile=$3
size=$4
out=${TMPDIR:-/tmp}/krping-check.$$
trap 'rm -f "$out" "$out.srv"' EXIT

fail() {
	echo "FAIL: $*"
	sed 's/^/  | /' "$out"
	exit 1
}

# bytes in SIZE (a number with an optional k/M suffix)
case $size in
*k | *K) bytes=$((${size%?} * 1024)) ;;
*m | *M) bytes=$((${size%?} * 1048576)) ;;
*) bytes=$size ;;
esac
count=10
[ "$bytes" -ge 1048576 ] && count=3

run() {
	"$krping" "$@" >"$out" 2>&1
	rc=$?
	echo "krping $* -> exit $rc"
}

case $mode in
ok | user-mr | ipv6)
	addr=10.0.0.2
	reg="fast registration"
	extra=
	[ "$mode" = user-mr ] && extra=--user-mr && reg="user MRs"
	[ "$mode" = ipv6 ] && addr=fd00::2
	run --soft "$profile" --addr $addr --size "$size" --count $count \
		--validate $extra
	[ $rc = 0 ] || fail "exit status $rc, expected 0"
	want="krping: client: $count pings of $bytes bytes, $count validated, $reg"
	grep -qx "$want" "$out" || fail "no line '$want'"
	moved=$((count * bytes))
	want="krping: server: $count pings served, $moved bytes read, $moved bytes written"
	grep -qx "$want" "$out" || fail "no line '$want'"
	;;
tcp | tcp6)
	addr=127.0.0.1
	[ "$mode" = tcp6 ] && addr=::1
	port=$((20000 + $$ % 20000))
	"$krping" --server --soft "$profile" --addr $addr --port $port \
		--size "$size" --timeout 60000 >"$out.srv" 2>&1 &
	srv=$!
	# the client is refused (exit 3) until the server listens
	tries=0
	while :; do
		run --client --soft "$profile" --addr $addr --port $port \
			--size "$size" --count $count --validate
		[ $rc = 3 ] && [ $tries -lt 200 ] || break
		tries=$((tries + 1))
		sleep 0.1
	done
	wait $srv
	src=$?
	cat "$out.srv" >>"$out"
	[ $rc = 0 ] || fail "client exit status $rc, expected 0"
	[ $src = 0 ] || fail "server exit status $src, expected 0"
	want="krping: client: $count pings of $bytes bytes, $count validated, fast registration"
	grep -qx "$want" "$out" || fail "no line '$want'"
	moved=$((count * bytes))
	want="krping: server: $count pings served, $moved bytes read, $moved bytes written"
	grep -qx "$want" "$out" || fail "no line '$want'"
	;;
refused)
	run --client --soft "$profile" --addr 10.0.0.2 --port 7999 --size "$size"
	[ $rc = 3 ] || fail "exit status $rc, expected 3 (refused)"
	grep -q '^krping: client: connection to 10.0.0.2:7999 rejected: ' "$out" ||
		fail "no rejection message"
	grep -q '^krping: client: 0 pings' "$out" || fail "pings were counted"
	;;
too-big)
	run --soft "$profile" --addr 10.0.0.2 --size "$size" --count 1
	[ $rc = 1 ] || fail "exit status $rc, expected 1"
	grep -q "^krping: client: $bytes bytes are [0-9]* pages; one MR of .* holds [0-9]*\$" "$out" ||
		fail "no reason given"
	;;
alone)
	start=$(date +%s)
	run --server --soft "$profile" --addr 10.0.0.2 --timeout 300
	[ $rc = 1 ] || fail "exit status $rc, expected 1"
	grep -qx 'krping: server: no connection request within 300 ms' "$out" ||
		fail "no timeout message"
	[ $(($(date +%s) - start)) -le 5 ] || fail "the wait was not bounded"
	;;
usage)
	for args in "--soft $profile" "--addr 10.0.0.2" \
		"--soft nosuch --addr 10.0.0.2" \
		"--soft $profile --addr 10.0.0.2 --size 0" \
		"--soft $profile --addr 10.0.0.2 --count x" \
		"--soft $profile --addr 10.0.0.300" \
		"--server --client --soft $profile --addr 10.0.0.2"; do
		# shellcheck disable=SC2086
		run $args
		[ $rc = 2 ] || fail "exit status $rc, expected 2"
		grep -q '^usage: krping' "$out" || fail "no usage line"
	done
	;;
*)
	echo "unknown mode $mode"
	exit 2
	;;
esac
echo "PASS"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rping-server and rping-client in two processes on software devices of
# the siw-tcp profile (iWARP over TCP, issue 28) over 127.0.0.1: 10
# verified pings of 4 KiB, each printed by both ends; a client whose server
# is gone is refused (exit 1).
# Usage: rping-tcp-check.sh RPING_SERVER RPING_CLIENT
srv=$1
cli=$2
out=${TMPDIR:-/tmp}/rping-tcp.$$
port=$((30000 + $$ % 20000))
trap 'rm -f "$out".*' EXIT

timeout 60 "$srv" -P siw-tcp -a 127.0.0.1 -p $port -S 4096 -v \
	>"$out.srv" 2>&1 &
spid=$!
# the server listens once its device is up: retry while refused
n=0
while :; do
	timeout 60 "$cli" -P siw-tcp -I 127.0.0.1 -a 127.0.0.1 -p $port \
		-S 4096 -C 10 -V -v >"$out.cli" 2>&1 && break
	n=$((n + 1))
	[ $n -lt 50 ] || { cat "$out.cli"; echo "FAIL: no connection"; exit 1; }
	sleep 0.1
done
wait $spid || { cat "$out.srv"; echo "FAIL: server"; exit 1; }
c=$(grep -c '^ping data: rdma-ping-' "$out.cli")
s=$(grep -c '^server ping data: rdma-ping-' "$out.srv")
[ "$c" = 10 ] && [ "$s" = 10 ] || {
	cat "$out.srv" "$out.cli"
	echo "FAIL: $c pings at the client, $s at the server"
	exit 1
}
# nobody listens now: refused
if timeout 30 "$cli" -P siw-tcp -I 127.0.0.1 -a 127.0.0.1 -p $port -C 1 \
	>"$out.cli" 2>&1; then
	echo "FAIL: a client connected to nobody"
	exit 1
fi
echo "rping over siw-tcp: 10 pings of 4 KiB verified at both ends"

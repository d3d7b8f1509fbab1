#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest: rdmarw's rping server and client against the
# stock rping of rdma-core, 10 verified pings each way, on rxe0 and siw0;
# and on siw0's address, rdmarw's on its own iWARP over TCP (-P siw-tcp: a
# software device, no RDMA device file) against the stock rping on the
# kernel's siw, both ways (issue 28).
# Usage: sh tests/lab/interop.sh BUILD_DIR.  Exit status: failures.
bin=${1:-build-lab}/examples/rping
fails=0
port=7300

# pair NAME SERVER_CMD CLIENT_CMD: run both, the client's pings counted.
pair() {
	name=$1
	port=$((port + 1))
	# A server whose client failed would wait for ever: bound it.
	timeout 120 $2 -p $port >/tmp/srv.log 2>&1 &
	spid=$!
	sleep 1
	timeout 120 $3 -p $port >/tmp/cli.log 2>&1
	crc=$?
	wait $spid
	src=$?
	pings=$(grep -c '^ping data: rdma-ping-' /tmp/cli.log)
	if [ $crc = 0 ] && [ $src = 0 ] && [ "$pings" = 10 ]; then
		echo "PASS: $name ($(tail -n 1 /tmp/cli.log | cut -c1-40)...)"
	else
		echo "FAIL: $name (server $src, client $crc, $pings pings)"
		sed 's/^/  server: /' /tmp/srv.log | tail -n 5
		sed 's/^/  client: /' /tmp/cli.log | tail -n 5
		fails=$((fails + 1))
	fi
}

for dev in rxe0:$LAB_RXE_ADDR siw0:$LAB_SIW_ADDR; do
	d=${dev%%:*}
	a=${dev#*:}
	pair "$d: stock rping -c -V -C 10 against rping-server" \
		"$bin/rping-server -a $a -v" "rping -c -a $a -V -C 10 -v"
	pair "$d: rping-client -V -C 10 against stock rping -s" \
		"rping -s -a $a -v" "$bin/rping-client -a $a -V -C 10 -v"
done
a=$LAB_SIW_ADDR
pair "siw0: stock rping -c (kernel siw) against rping-server -P siw-tcp" \
	"$bin/rping-server -P siw-tcp -a $a -v" "rping -c -a $a -V -C 10 -v"
pair "siw0: rping-client -P siw-tcp against stock rping -s (kernel siw)" \
	"rping -s -a $a -v" "$bin/rping-client -P siw-tcp -I $a -a $a -V -C 10 -v"
echo "interop: $fails failed"
exit $fails

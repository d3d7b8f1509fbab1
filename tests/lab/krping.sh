#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest: examples/krping (the ULP on rdma_cm + rw.h) with
# its server and client as two processes over rxe0 and over siw0, 10
# validated pings at a few sizes, then a client refused by a port nobody
# listens on.  It needs rdma_cm's librdmacm backend (src/cm) to reach the
# ibv devices; the ULP and the program are the ones ctest runs on the
# software device, unchanged.
# Usage: sh tests/lab/krping.sh BUILD_DIR.  Exit status: failures.
bin=${1:-build-lab}/examples/krping/krping
fails=0
port=7400

# pair DEV ADDR SIZE: a server and a client, both must report 10 pings.
pair() {
	port=$((port + 1))
	name="$1: krping --size $3"
	# the server's waits are bounded by --timeout; timeout(1) is a backstop
	timeout 300 "$bin" --server --addr "$2" --port $port --size "$3" \
		--timeout 60000 >/tmp/krping-srv.log 2>&1 &
	spid=$!
	sleep 1
	timeout 300 "$bin" --client --addr "$2" --port $port --size "$3" \
		--count 10 --validate --timeout 60000 >/tmp/krping-cli.log 2>&1
	crc=$?
	wait $spid
	src=$?
	if [ $crc = 0 ] && [ $src = 0 ] &&
		grep -q "^krping: client: 10 pings of $3 bytes, 10 validated" \
			/tmp/krping-cli.log &&
		grep -q '^krping: server: 10 pings served' /tmp/krping-srv.log; then
		echo "PASS: $name ($(grep '^krping: client: 10' /tmp/krping-cli.log | cut -d, -f3))"
	else
		echo "FAIL: $name (server exit $src, client exit $crc)"
		sed 's/^/  server: /' /tmp/krping-srv.log | tail -n 5
		sed 's/^/  client: /' /tmp/krping-cli.log | tail -n 5
		fails=$((fails + 1))
	fi
}

# refused DEV ADDR: nobody listens on the port: exit 3 and the reason (on
# iWARP, siw0, rdma_connect() itself fails with -ECONNREFUSED, as in the kernel).
refused() {
	timeout 60 "$bin" --client --addr "$2" --port 7499 --timeout 10000 \
		>/tmp/krping-cli.log 2>&1
	crc=$?
	if [ $crc = 3 ] && grep -q 'rejected\|unreachable\|refused' /tmp/krping-cli.log; then
		echo "PASS: $1: krping refused ($(grep -m1 'rejected\|unreachable\|refused' /tmp/krping-cli.log))"
	else
		echo "FAIL: $1: krping to a port nobody listens on (exit $crc)"
		sed 's/^/  client: /' /tmp/krping-cli.log | tail -n 5
		fails=$((fails + 1))
	fi
}

for dev in rxe0:$LAB_RXE_ADDR siw0:$LAB_SIW_ADDR; do
	d=${dev%%:*}
	a=${dev#*:}
	for size in 64 4096 100000; do
		pair "$d" "$a" $size
	done
	refused "$d" "$a"
done
echo "krping: $fails failed"
exit $fails

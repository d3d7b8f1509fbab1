#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest: the devices are there, and the stock rping
# server and client talk over each of them.  Exit status: failures.
fails=0

check() {
	if "$@"; then
		echo "PASS: $*"
	else
		echo "FAIL: $*"
		fails=$((fails + 1))
	fi
}

has_dev() {
	ibv_devinfo -l | grep -qw "$1"
}

# rping_once ADDR COUNT: stock server and stock client, client verifies;
# each bounded (a stock pair on 6.1's siw0 once hung the whole guest run).
rping_once() {
	timeout 60 rping -s -a "$1" -C "$2" >/tmp/rping-s.log 2>&1 &
	spid=$!
	sleep 1
	timeout 60 rping -c -a "$1" -V -C "$2" -v >/tmp/rping-c.log 2>&1
	crc=$?
	wait $spid
	src=$?
	tail -n 1 /tmp/rping-c.log
	[ $crc = 0 ] && [ $src = 0 ] && [ "$(grep -c 'ping data' /tmp/rping-c.log)" = "$2" ]
}

# rping_pair ADDR COUNT: the kernel-to-kernel pair, a second try when the
# first stalls.  No rdmarw code runs here: this checks the guest's devices.
# The stock pair on the kernel's siw0 stalled once in 6.1 (session 13) and
# once in 6.12 ("wait for RDMA_WRITE_ADV state 10", CI 2026-12-06) and
# passed when run again; a second failure is a failure.
rping_pair() {
	rping_once "$1" "$2" && return 0
	echo "rping_pair $1: the stock pair failed, trying once more"
	sleep 2
	rping_once "$1" "$2"
}

ibv_devinfo -l
ibv_devinfo -d rxe0 | grep -E 'transport|link_layer|state'
ibv_devinfo -d siw0 | grep -E 'transport|link_layer|state'
check has_dev rxe0
check has_dev siw0
check rping_pair "$LAB_RXE_ADDR" 3
check rping_pair "$LAB_SIW_ADDR" 3
echo "smoke: $fails failed"
exit $fails

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (check.sh, part nvmeof-reload): the kernel's
# NVMe-oF host against rdmarw-nvmet started from nvmetcli's JSON with
# namespaces 1, 2 and 3 (files); fio writes NS 3 while SIGHUP reloads a
# JSON with namespace 2 removed and 4 added: the host sees nsid 4 appear
# and nsid 2 go (Namespace Attribute Changed, /sys/block/*/nsid), fio ends
# without an error and its verify pass finds 0 bad blocks; SIGUSR1 writes
# the --stats-file, whose JSON names the subsystem and counts the writes.
# Usage: sh tests/lab/nvmeof-reload.sh BUILD_DIR [rxe0|siw0]...
# Exit status: the number of failed steps.
build=${1:-build-lab}
shift
devs=$*
[ -n "$devs" ] || devs="rxe0 siw0"
target=$build/nvme/target/rdmarw-nvmet
NQN=nqn.2026-01.io.rdmarw:reload
PORT=4423
FIO="fio --ioengine=libaio --direct=1 --group_reporting --output-format=terse
--terse-version=3 --verify=crc32c --verify_fatal=0 --verify_state_save=0"
kernel=$(uname -r)
failed=0
tpid=
work=/tmp/nvmeof-reload
mkdir -p "$work"
. "${0%/*}/lib.sh"

say() { echo "nvmeof-reload [$kernel $name]: $*"; }
bad() {
	say "FAILED: $*"
	failed=$((failed + 1))
	say "the target's last messages:"
	tail -8 "$work/target.log"
	say "the host's:"
	dmesg | grep -i nvme | tail -8
}

step() {
	local what=$1 t0=$(date +%s)

	shift
	if "$@"; then
		say "ok: $what ($(($(date +%s) - t0)) s)"
	else
		bad "$what ($(($(date +%s) - t0)) s)"
		return 1
	fi
}

# write_json NSID... : the configuration with those namespaces (img.N).
write_json() {
	local n sep=

	{
		printf '{ "hosts": [ { "nqn": "%s" } ],\n' "$(cat /etc/nvme/hostnqn)"
		printf ' "ports": [ { "addr": { "adrfam": "ipv4", "traddr": "%s",\n' "$addr"
		printf '   "trsvcid": "%s", "trtype": "rdma" }, "portid": 1,\n' $PORT
		printf '   "subsystems": [ "%s" ] } ],\n' $NQN
		printf ' "subsystems": [ { "allowed_hosts": [ "%s" ],\n' "$(cat /etc/nvme/hostnqn)"
		printf '   "attr": { "allow_any_host": "0" }, "nqn": "%s",\n' $NQN
		printf '   "namespaces": ['
		for n in "$@"; do
			printf '%s\n    { "device": { "path": "%s/img.%s" }, "enable": 1, "nsid": %s }' \
				"$sep" "$work" "$n" "$n"
			sep=,
		done
		printf ' ] } ] }\n'
	} >"$work/config.json"
}

# The block device of our subsystem's namespace NSID, if the host has it.
ns_dev() {
	local s b

	for s in /sys/class/nvme-subsystem/nvme-subsys*; do
		grep -qx "$NQN" "$s/subsysnqn" 2>/dev/null || continue
		for b in "$s"/nvme*n*; do
			[ -e "$b/nsid" ] || continue
			[ "$(cat "$b/nsid")" = "$1" ] && echo "${b##*/}" && return 0
		done
	done
	return 1
}

# wait_ns NSID present|gone: up to 20 s.
wait_ns() {
	for _ in $(seq 100); do
		if ns_dev "$1" >/dev/null; then
			[ "$2" = present ] && return 0
		else
			[ "$2" = gone ] && return 0
		fi
		sleep 0.2
	done
	return 1
}

start_target() {
	: >"$work/target.log"
	for n in 1 2 3 4; do
		rm -f "$work/img.$n"
		truncate -s 64M "$work/img.$n" || return 1
	done
	write_json 1 2 3
	nvmet_start "$target" "$work/target.log" --config "$work/config.json" \
		--stats-file "$work/stats.json" -v
}

connect() {
	nvme connect -t rdma -a "$addr" -s $PORT -n $NQN >/dev/null ||
		return 1
	wait_ns 1 present && wait_ns 2 present && wait_ns 3 present ||
		return 1
	dev3=$(ns_dev 3)
	say "connected: nsid 3 is /dev/$dev3"
}

# fio on NS 3 across the reload (write, then fio's own read-back
# verify of every block): no error, 0 bad blocks.
reload_under_io() {
	local fpid rc=0 nbad n0

	timeout 600 $FIO --name=r --filename="/dev/$dev3" --rw=randwrite \
		--bs=4k --iodepth=32 --numjobs=2 --size=32M \
		--offset_increment=32M --do_verify=1 \
		--randseed=$(($(date +%s) % 100000)) >"$work/fio.log" 2>&1 &
	fpid=$!
	sleep 2
	kill -0 "$fpid" 2>/dev/null || {
		say "fio ended before the reload (make it longer)"
		return 1
	}
	n0=$(grep -c "configuration reloaded" "$work/target.log")
	write_json 1 3 4
	kill -HUP "$tpid"
	for _ in $(seq 50); do
		[ "$(grep -c "configuration reloaded" "$work/target.log")" -gt "$n0" ] &&
			break
		sleep 0.2
	done
	[ "$(grep -c "configuration reloaded" "$work/target.log")" -gt "$n0" ] || {
		say "the target did not reload"
		rc=1
	}
	kill -0 "$fpid" 2>/dev/null || say "(fio ended before the reload was done)"
	wait_ns 4 present || { say "nsid 4 did not appear"; rc=1; }
	wait_ns 2 gone || { say "nsid 2 did not go"; rc=1; }
	wait "$fpid" || {
		say "fio failed across the reload"
		rc=1
	}
	nbad=$(grep -cE "verify: |: verify failed" "$work/fio.log")
	[ "$(fio_field "$work/fio.log" 6)" = 65536 ] || {
		say "fio read back $(fio_field "$work/fio.log" 6) KiB, not 65536"
		tail -20 "$work/fio.log"
		rc=1
	}
	say "result: check=reload-under-fio bad=$nbad ns4=$(ns_dev 4) ns2=$(ns_dev 2 || echo gone)"
	[ "$nbad" = 0 ] || rc=1
	return $rc
}

# SIGUSR1: the summary in the log and the JSON file rewritten; NS 3 has
# every byte the run wrote (2 x 32 MiB), exactly.
stats_file() {
	local w

	rm -f "$work/stats.json"
	kill -USR1 "$tpid"
	for _ in $(seq 50); do
		[ -s "$work/stats.json" ] && break
		sleep 0.2
	done
	grep -q "\"nqn\": \"$NQN\"" "$work/stats.json" || return 1
	grep -q '"nsid": 3' "$work/stats.json" || return 1
	w=$(sed -n "s/.*stats: subsystem $NQN nsid 3: .* writes [0-9]* (\([0-9]*\) bytes).*/\1/p" \
		"$work/target.log" | tail -1)
	say "stats: nsid 3 bytes written ${w:-none}"
	[ "${w:-0}" = 67108864 ]
}

for name in $devs; do
	addr=$(lab_addr "$name") || {
		bad "unknown device $name"
		continue
	}
	say "=== $name ($addr port $PORT)"
	if step "target starts (JSON, namespaces 1 2 3)" start_target &&
		step "connect: nsid 1 2 3" connect; then
		step "SIGHUP during fio on nsid 3: nsid 4 added, 2 removed, 0 bad blocks" \
			reload_under_io
		step "SIGUSR1: the stats file" stats_file
	fi
	nvme disconnect -n $NQN >/dev/null 2>&1
	nvmet_stop
done
name=all
say "$failed failed"
exit $failed

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (check.sh): the Linux kernel's NVMe-oF host
# (nvme-rdma, nvme-cli, fio, ext4) against rdmarw-nvmet, on each device:
#   discover and connect; fio random writes then a verify pass with crc32c
#   (4 KiB and 128 KiB, depth 32, 4 jobs on their own regions); mkfs.ext4,
#   files checksummed after a remount and again after a disconnect and a
#   reconnect; then, on a file backend, the target killed (SIGKILL) while a
#   fio job writes and restarted on the same file: the host reconnects, the
#   job ends without an error and every block written before and across the
#   restart verifies.
# Usage: sh tests/lab/nvmeof.sh BUILD_DIR [rxe0|siw0]...
# Exit status: the number of failed steps.
build=${1:-build-lab}
shift
[ $# -gt 0 ] || set -- rxe0 siw0
target=$build/nvmet/rdmarw-nvmet
NQN=nqn.2026-01.io.rdmarw:nvmet
PORT=4421
FIO="fio --ioengine=libaio --direct=1 --group_reporting --output-format=terse
--terse-version=3 --verify=crc32c --verify_fatal=1 --randrepeat=1
--verify_state_save=0"
failed=0
tpid=
work=/tmp/nvmeof
mkdir -p "$work" /mnt/nvmeof
. "${0%/*}/lib.sh"

say() { echo "nvmeof: $*"; }
bad() {
	say "FAILED: $*"
	failed=$((failed + 1))
	say "the target's last messages:"
	grep -v "accepted\|I/O queue\|releasing\|timewait" "$work/target.log" |
		tail -15
	say "the host's:"
	dmesg | grep -i nvme | tail -15
}

# The target on $addr, ready when it says so (at most 30 s).
start_target() {
	nvmet_start "$target" "$work/target.log" --addr "$addr" --port $PORT \
		-v "$@"
}

connect() {
	nvme connect -t rdma -a "$addr" -s $PORT -n $NQN "$@" >/dev/null ||
		return 1
	dev=$(nvme_ns_dev "$NQN") || return 1
	say "connected: /dev/$dev"
}

disconnect() {
	nvme disconnect -n $NQN | grep -q "disconnected 1 controller" || return 1
	# The block device goes away with the controller.
	for _ in $(seq 25); do
		[ -b "/dev/$dev" ] || return 0
		sleep 0.2
	done
	return 1
}

# fio random writes on 4 regions, then a separate verify-only pass.
# $1 block size, $2 bytes per job.
fio_verify() {
	local args="--name=v$1 --filename=/dev/$dev --rw=randwrite --bs=$1
--iodepth=32 --numjobs=4 --size=$2 --offset_increment=$2"

	# shellcheck disable=SC2086
	timeout 180 $FIO $args --do_verify=0 >"$work/fio-w.log" 2>&1 || {
		cat "$work/fio-w.log"
		return 1
	}
	# shellcheck disable=SC2086
	timeout 180 $FIO $args --verify_only=1 >"$work/fio-v.log" 2>&1 || {
		cat "$work/fio-v.log"
		return 1
	}
	say "fio $1: wrote $(fio_field "$work/fio-w.log" 47) KiB," \
		"verified $(fio_field "$work/fio-v.log" 6) KiB"
}

discover() {
	nvme discover -t rdma -a "$addr" -s $PORT >"$work/disc.log" || return 1
	grep -q "subnqn: *$NQN" "$work/disc.log" &&
		grep -q "trsvcid: *$PORT" "$work/disc.log"
}

ext4_files() {
	local i

	mkfs.ext4 -q -F "/dev/$dev" || return 1
	mount "/dev/$dev" /mnt/nvmeof || return 1
	for i in 1 2 3 4; do
		dd if=/dev/urandom of=/mnt/nvmeof/f$i bs=64k count=$((i * 8)) \
			2>/dev/null || return 1
	done
	(cd /mnt/nvmeof && sha256sum f1 f2 f3 f4) >"$work/sums"
	umount /mnt/nvmeof || return 1
	mount "/dev/$dev" /mnt/nvmeof || return 1
	(cd /mnt/nvmeof && sha256sum -c "$work/sums") || return 1
	umount /mnt/nvmeof
}

# After a reconnect: the files of ext4_files are still there, byte for byte.
ext4_again() {
	mount "/dev/$dev" /mnt/nvmeof || return 1
	(cd /mnt/nvmeof && sha256sum -c "$work/sums") || return 1
	umount /mnt/nvmeof
}

# The target killed during I/O and restarted on its file.
kill_restart() {
	local img=$work/ns.img fpid rc
	local pre="--name=pre --filename=/dev/$dev --rw=write --bs=64k
--iodepth=8 --size=16M"
	local dur="--name=dur --filename=/dev/$dev --rw=randwrite --bs=4k
--iodepth=32 --numjobs=2 --size=24M --offset=16M --offset_increment=24M"

	rm -f "$img"
	start_target --file-size 64M --file "$img" || return 1
	# Queued I/O waits for the path; the host retries every second.
	connect -c 1 -l 120 || return 1
	# shellcheck disable=SC2086
	$FIO $pre --do_verify=0 >"$work/fio-pre.log" 2>&1 || return 1
	# shellcheck disable=SC2086
	timeout 240 $FIO $dur --do_verify=0 >"$work/fio-dur.log" 2>&1 &
	fpid=$!
	sleep 2
	kill -0 "$fpid" 2>/dev/null || {
		say "the writer ended before the kill (make it longer)"
		return 1
	}
	kill -9 "$tpid"
	wait "$tpid"
	say "target killed during I/O"
	tpid=
	sleep 1
	start_target --file "$img" || return 1
	wait "$fpid"
	rc=$?
	[ $rc = 0 ] || {
		say "the writer failed across the restart ($rc)"
		cat "$work/fio-dur.log"
		return 1
	}
	say "writer done after the restart"
	# shellcheck disable=SC2086
	$FIO $pre --verify_only=1 >"$work/fio-v.log" 2>&1 || {
		cat "$work/fio-v.log"
		return 1
	}
	# shellcheck disable=SC2086
	$FIO $dur --verify_only=1 >"$work/fio-v.log" 2>&1 || {
		cat "$work/fio-v.log"
		return 1
	}
	say "all acknowledged blocks verify after the restart"
	disconnect
}

step() {
	local what=$1

	shift
	if "$@"; then
		say "ok: $what ($name)"
	else
		bad "$what ($name)"
		return 1
	fi
}

for name in "$@"; do
	addr=$(lab_addr "$name") || {
		bad "unknown device $name"
		continue
	}
	: >"$work/target.log"
	say "=== $name ($addr port $PORT)"
	if ! step "target starts" start_target --ram 64M; then
		continue
	fi
	if step "discover" discover && step "connect" connect; then
		step "fio 4k randwrite + verify, qd32 x4" fio_verify 4k 4M
		step "fio 128k randwrite + verify, qd32 x4" fio_verify 128k 8M
		step "ext4: files checksummed after a remount" ext4_files
		step "disconnect" disconnect &&
			step "reconnect" connect &&
			step "ext4: files intact after the reconnect" ext4_again
		step "disconnect again" disconnect
	fi
	nvmet_stop
	step "kill -9 during I/O, restart on the file" kill_restart
	nvmet_stop
	nvme disconnect -n $NQN >/dev/null 2>&1
done
say "$failed failed"
exit $failed

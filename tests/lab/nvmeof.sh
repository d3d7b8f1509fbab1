#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (check.sh): the Linux kernel's NVMe-oF host
# (nvme-rdma, nvme-cli, fio, ext4, util-linux) against rdmarw-nvmet, on each
# device, every result line naming the kernel and the device:
#   discover and connect;
#   fio random writes, then a verify-only pass, crc32c (fio's header holds
#   the block's offset, so a block carrying another block's data is caught:
#   "verify: bad header offset"): 4 KiB and 128 KiB, depth 32, 2 and 4 jobs
#   on regions of their own; the bad blocks are counted, each write pass
#   has its own seed (so data of an earlier round cannot verify);
#   blkdiscard beside a written region (util-linux's), no failed DISCARD in
#   the host's log, the region still verifies;
#   mkfs.ext4, files checksummed, e2fsck after the unmount, fstrim
#   (util-linux's: the host's log must show no failed DISCARD, fstrim's
#   word is not enough), checksums and e2fsck again; a disconnect, a
#   reconnect, the checksums and e2fsck again;
#   DH-HMAC-CHAP (issue 27): no key, a wrong key, a wrong controller key
#   refused; the right key one way and both ways connects and verifies, and
#   every queue re-authenticates (6.1's host has no DH-HMAC-CHAP: refusal
#   only);
#   a stranger's 24 I/O and 24 admin queue requests (no Connect) cost the
#   target < 8 MiB of resident, locked and pinned memory (I/O queues
#   refused, 4 admin queues wait), the host connects beside them, the
#   target closes them after its connect timeout;
#   on a file backend, the target killed (SIGKILL) while fio writes and
#   restarted on the same file: the host reconnects, the job ends without
#   an error and every block written before and across the restart
#   verifies.
#   polled I/O queues (--poll-groups 1): fio verify;
#   on siw0, rdmarw-nvmet on its own iWARP over TCP (--soft siw-tcp) as an
#   unprivileged user with no RDMA device of the kernel open: the kernel
#   host connects through the kernel's siw, fio verifies, ext4, kill -9 and
#   restart (issue 28).
# NVMEOF_ONLY=auth,halfopen,tcp,kill,poll runs those steps alone.
# Usage: sh tests/lab/nvmeof.sh BUILD_DIR [rxe0|siw0|full]...
#   "full": three rounds of the fio checks (NVMEOF_ROUNDS overrides; the
#   default is one).  NVMEOF_SCALE (1 to 4, default 1) multiplies the fio
#   checks' regions: 4 KiB: 2 jobs of 8 MiB, 4 of 4 MiB (4096 blocks);
#   128 KiB: 2 of 16 MiB, 4 of 8 MiB (256 blocks).
# Exit status: the number of failed steps.
build=${1:-build-lab}
shift
devs=
rounds=${NVMEOF_ROUNDS:-1}
scale=${NVMEOF_SCALE:-1}
for w in "$@"; do
	case $w in
	full) rounds=${NVMEOF_ROUNDS:-3} ;;
	*) devs="$devs $w" ;;
	esac
done
[ -n "$devs" ] || devs="rxe0 siw0"
target=$build/nvme/target/rdmarw-nvmet
NQN=nqn.2026-01.io.rdmarw:nvmet
PORT=4421
# verify_fatal=0: every bad block is reported (one "verify:" line each),
# and fio still exits 0; the lines are counted.
FIO="fio --ioengine=libaio --direct=1 --group_reporting --output-format=terse
--terse-version=3 --verify=crc32c --verify_fatal=0 --verify_state_save=0"
# Busybox has applets of these names (mke2fs, fstrim, blkdiscard): the
# real ones, by path.
MKFS=/usr/sbin/mkfs.ext4
E2FSCK=/usr/sbin/e2fsck
BLKDISCARD=/usr/sbin/blkdiscard
FSTRIM=/usr/sbin/fstrim
SETPRIV=/usr/bin/setpriv
kernel=$(uname -r)
failed=0
tpid=
seed=0
work=/tmp/nvmeof
mkdir -p "$work" /mnt/nvmeof
: >"$work/results"
. "${0%/*}/lib.sh"

say() { echo "nvmeof [$kernel $name]: $*"; }
bad() {
	say "FAILED: $*"
	failed=$((failed + 1))
	say "the target's last messages:"
	grep -v "accepted\|I/O queue\|releasing\|timewait" "$work/target.log" |
		tail -8
	say "the host's:"
	dmesg | grep -i nvme | tail -8
}

# result WHAT...: a line for the summary at the end.
result() {
	say "result: $*"
	echo "kernel=$kernel dev=$name $*" >>"$work/results"
}

# The target on $addr, ready when it says so (at most 30 s).
start_target() {
	nvmet_start "$target" "$work/target.log" --addr "$addr" --port $PORT \
		--host "$(cat /etc/nvme/hostnqn)" -v "$@"
}

# A host NQN the target was not told to allow (start_target allows this
# guest's /etc/nvme/hostnqn only).
STRANGER=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-00000000dead

# The stranger is refused at once, as by the kernel's target (Connect
# Invalid Host: nvme connect exits non-zero, no namespace appears), and
# its discovery log lists no subsystem.
stranger_refused() {
	local rc=0 n0

	n0=$(host_log_lines)
	if timeout 60 nvme connect -t rdma -a "$addr" -s $PORT -n $NQN \
		-q $STRANGER >"$work/stranger.log" 2>&1; then
		say "a host that is not allowed connected"
		nvme disconnect -n $NQN >/dev/null 2>&1
		rc=1
	fi
	# the host says why: "Connect for subsystem ... is not allowed"
	dmesg | tail -n +"$((n0 + 1))" | grep "is not allowed" ||
		{ say "the host logged no refused Connect"; rc=1; }
	grep -qs "$NQN" /sys/class/nvme-subsystem/*/subsysnqn && rc=1
	timeout 60 nvme discover -t rdma -a "$addr" -s $PORT -q $STRANGER \
		>"$work/disc-stranger.log" 2>&1
	if grep -q "subnqn: *$NQN" "$work/disc-stranger.log"; then
		say "the stranger's discovery log lists $NQN"
		rc=1
	fi
	result "check=stranger status=$([ $rc = 0 ] && echo refused || echo ADMITTED)"
	return $rc
}

# The host's DH-HMAC-CHAP support: 6.12 builds it (CONFIG_NVME_HOST_AUTH,
# nvme-auth.ko), Debian's 6.1 does not.
host_auth() {
	[ -d /sys/module/nvme_auth ]
}

# connect_fails WHAT ARGS...: nvme connect with ARGS is refused within
# 20 s (a host whose Failure1 was lost waits for its admin timeout, 60 s,
# several times over) and no namespace of $NQN appears.
connect_fails() {
	local what=$1 rc=0 t0 secs

	shift
	t0=$(date +%s)
	if timeout 60 nvme connect -t rdma -a "$addr" -s $PORT -n $NQN "$@" \
		>"$work/refused.log" 2>&1; then
		say "connected $what"
		nvme disconnect -n $NQN >/dev/null 2>&1
		rc=1
	fi
	secs=$(($(date +%s) - t0))
	[ "$secs" -le 20 ] || { say "refused only after $secs s"; rc=1; }
	grep -qs "$NQN" /sys/class/nvme-subsystem/*/subsysnqn && rc=1
	result "check=auth case=$what seconds=$secs" \
		"status=$([ $rc = 0 ] && echo refused || echo FAILED)"
	return $rc
}

# The controller (/sys/class/nvme/nvmeN) of the connected $NQN.
auth_ctrl() {
	local c

	for c in /sys/class/nvme/nvme*; do
		grep -qx "$NQN" "$c/subsysnqn" 2>/dev/null && echo "$c" && return 0
	done
	return 1
}

# authenticated: the queues the target says authenticated so far.
authenticated() {
	grep -c "host authenticated" "$work/target.log"
}

# DH-HMAC-CHAP (issue 27) with keys as nvme gen-dhchap-key writes them: the
# host's key transformed with SHA-256 and the host NQN, the controller's
# with SHA-384 and the subsystem NQN, FFDHE-2048.  With the host's support:
# no key, a wrong key and a wrong controller key are refused; the right key
# (one way, then both ways) connects, moves verified data, and a
# re-authentication of every queue (the key written again to the
# controller's dhchap_secret, as nvme-cli's users do) succeeds while the
# namespace stays usable.  Without it (6.1): refused, as the host cannot
# answer the AUTHREQ.
auth_checks() {
	local hnqn key ckey wrong wrongc rc=0 c n0 a0 q

	hnqn=$(cat /etc/nvme/hostnqn)
	key=$(nvme gen-dhchap-key -n "$hnqn" -m 1) &&
		ckey=$(nvme gen-dhchap-key -n "$NQN" -m 2) &&
		wrong=$(nvme gen-dhchap-key -n "$hnqn" -m 1) &&
		wrongc=$(nvme gen-dhchap-key -n "$NQN" -m 2) || return 1
	start_target --ram 64M --dhchap-key "$hnqn=$key" \
		--dhchap-ctrl-key "$hnqn=$ckey" \
		--dhchap-dhgroup "$hnqn=ffdhe2048" || return 1
	connect_fails no-key || rc=1
	if ! host_auth; then
		say "this kernel's host has no DH-HMAC-CHAP: refusal only"
		nvmet_stop
		return $rc
	fi
	connect_fails wrong-key --dhchap-secret="$wrong" || rc=1
	connect_fails wrong-ctrl-key --dhchap-secret="$key" \
		--dhchap-ctrl-secret="$wrongc" || rc=1
	dmesg | grep -iE "authentication failed|auth.*fail" | tail -3
	# one way
	a0=$(authenticated)
	if connect --dhchap-secret="$key"; then
		c=$(auth_ctrl) && q=$(cat "$c/queue_count")
		[ $(($(authenticated) - a0)) = "${q:-x}" ] || rc=1
		result "check=auth case=unidirectional status=connected" \
			"queues=${q:-x} authenticated=$(($(authenticated) - a0))"
		fio_verify 4k 2 4 auth1 || rc=1
		disconnect || rc=1
	else
		result "check=auth case=unidirectional status=REFUSED"
		rc=1
	fi
	# both ways, then every queue again
	a0=$(authenticated)
	if connect --dhchap-secret="$key" --dhchap-ctrl-secret="$ckey"; then
		c=$(auth_ctrl) || { say "no controller for $NQN"; rc=1; }
		q=$(cat "$c/queue_count")
		[ $(($(authenticated) - a0)) = "$q" ] || rc=1
		result "check=auth case=bidirectional status=connected" \
			"queues=$q authenticated=$(($(authenticated) - a0))"
		a0=$(authenticated)
		n0=$(host_log_lines)
		printf %s "$key" >"$c/dhchap_secret" || rc=1
		for _ in $(seq 50); do
			[ $(($(authenticated) - a0)) -ge "$q" ] && break
			sleep 0.2
		done
		sleep 1
		dmesg | tail -n +"$((n0 + 1))" | grep -i auth
		# one transaction per queue, each counted once
		if [ $(($(authenticated) - a0)) != "$q" ] ||
			dmesg | tail -n +"$((n0 + 1))" |
			grep -q "authentication failed"; then
			say "re-authentication: $(($(authenticated) - a0)) of $q queues"
			rc=1
		fi
		result "check=auth case=reauth queues=$q" \
			"reauthenticated=$(($(authenticated) - a0))"
		fio_verify 4k 2 4 auth2 || rc=1
		disconnect || rc=1
	else
		result "check=auth case=bidirectional status=REFUSED"
		rc=1
	fi
	nvmet_stop
	return $rc
}

# vm_kib FIELD: the target's FIELD (VmRSS, VmLck, VmPin) in KiB.
vm_kib() {
	awk -v f="$1:" '$1 == f { print $2 }' "/proc/$tpid/status"
}

# A stranger's 24 I/O queue and 24 admin queue requests that never send a
# Connect (tests/nvmet/nvmet_halfopen), from a second address of the
# device's interface: the I/O queues are refused at once, at most 4 admin
# queues wait; the target's resident, locked and pinned memory grow by less
# than 8 MiB for all of it (a QP of 128 commands maps ~4 MiB of siw's
# queues, one of 32 ~1 MiB; 6.12: rxe0 +2.5 MiB, siw0 +4.2 MiB); the kernel
# host (the first address) connects and moves verified
# data beside them; the target closes the waiting ones once its
# --connect-timeout (10 s) has passed.
half_open() {
	local ho=$build/tests/nvmet/nvmet_halfopen rc=0 hpid netdev src
	local rss0 rss1 lck0 lck1 pin0 pin1 io est closed

	[ -x "$ho" ] || { say "no $ho"; return 1; }
	netdev=$(ip -o -4 addr show | awk -v a="$addr" \
		'index($4, a "/") == 1 { print $2 }')
	src=${addr%.*}.77
	ip addr add "$src/24" dev "$netdev" 2>/dev/null
	start_target --ram 64M || return 1
	rss0=$(vm_kib VmRSS) lck0=$(vm_kib VmLck) pin0=$(vm_kib VmPin)
	"$ho" "$src" "$addr" $PORT 24 0 1 </dev/null >"$work/ho-io.log" 2>&1
	cat "$work/ho-io.log"
	io=$(sed -n 's/.*established \([0-9]*\).*/\1/p' "$work/ho-io.log")
	rm -f "$work/ho.in"
	mkfifo "$work/ho.in"
	"$ho" "$src" "$addr" $PORT 24 60 0 <"$work/ho.in" >"$work/ho.log" 2>&1 &
	hpid=$!
	exec 3>"$work/ho.in"
	for _ in $(seq 150); do
		grep -q "established" "$work/ho.log" && break
		sleep 0.2
	done
	est=$(sed -n 's/.*established \([0-9]*\).*/\1/p' "$work/ho.log")
	rss1=$(vm_kib VmRSS) lck1=$(vm_kib VmLck) pin1=$(vm_kib VmPin)
	cat "$work/ho.log"
	say "a stranger's 48 requests: VmRSS +$((rss1 - rss0)) KiB," \
		"VmLck +$((lck1 - lck0)) KiB, VmPin +$((pin1 - pin0)) KiB"
	[ "${io:-x}" = 0 ] || { say "$io I/O queues established"; rc=1; }
	[ "${est:-x}" = 4 ] || { say "$est admin queues established"; rc=1; }
	[ $((rss1 - rss0)) -lt 8192 ] && [ $((lck1 - lck0)) -lt 8192 ] &&
		[ $((pin1 - pin0)) -lt 8192 ] || rc=1
	if connect; then
		fio_verify 4k 2 4 halfopen || rc=1
		disconnect || rc=1
	else
		say "the host could not connect beside the stranger"
		rc=1
	fi
	# the target's connect timeout (10 s from their request) closes them
	sleep 12
	exec 3>&-
	wait "$hpid"
	cat "$work/ho.log"
	closed=$(sed -n 's/.*closed by the target \([0-9]*\).*/\1/p' \
		"$work/ho.log")
	[ "${closed:-0}" = "${est:-x}" ] || rc=1
	result "check=half-open io=${io:-x}/24 admin=${est:-x}/24" \
		"rss_kib=$((rss1 - rss0)) lck_kib=$((lck1 - lck0))" \
		"pin_kib=$((pin1 - pin0)) closed=${closed:-0}" \
		"status=$([ $rc = 0 ] && echo ok || echo FAILED)"
	nvmet_stop
	ip addr del "$src/24" dev "$netdev" 2>/dev/null
	return $rc
}

# rdmarw's own wire (issue 28): rdmarw-nvmet on a software device whose
# QPs run iWARP over TCP (--soft siw-tcp), as an unprivileged user (uid
# 65534 through util-linux's setpriv: no capability, no RDMA device file of
# the kernel open), on siw0's address and port 4422; the kernel's host
# reaches it through the kernel's siw: discover, connect, fio random writes
# and their verify (4 KiB and 128 KiB, depth 32, 2 jobs), ext4 with
# checksummed files and e2fsck, disconnect; then the target killed (SIGKILL)
# during writes and restarted on its file, every block verifies.
TCP_PORT=4422
TCP_UID=65534

# The TCP target as $TCP_UID; its state directory (the kept machine ID:
# the guest has no /etc/machine-id, and a restart must give the namespace
# the same NGUID) and its files in $work/tcp, which that user owns.
start_target_tcp() {
	local rc

	export STATE_DIRECTORY="$work/tcp/state"
	nvmet_start "$SETPRIV" "$work/target.log" --reuid=$TCP_UID \
		--regid=$TCP_UID --clear-groups --inh-caps=-all \
		--bounding-set=-all -- "$target" --soft siw-tcp \
		--addr "$addr" --port $TCP_PORT \
		--host "$(cat /etc/nvme/hostnqn)" -v "$@"
	rc=$?
	unset STATE_DIRECTORY
	return $rc
}

# The target runs as $TCP_UID with no capability and no RDMA device file.
tcp_unprivileged() {
	local uid cap ndev

	uid=$(awk '/^Uid:/ { print $2 }' "/proc/$tpid/status")
	cap=$(awk '/^CapEff:/ { print $2 }' "/proc/$tpid/status")
	ndev=$(ls -l "/proc/$tpid/fd" | grep -c infiniband)
	say "the target runs as uid $uid, CapEff $cap, $ndev RDMA device files"
	[ "$uid" = $TCP_UID ] && [ "$cap" = 0000000000000000 ] &&
		[ "$ndev" = 0 ]
}

tcp_wire() {
	local rc=0 port=$PORT

	[ -x "$SETPRIV" ] || {
		say "$SETPRIV is missing from the guest"
		return 1
	}
	rm -rf "$work/tcp"
	mkdir -p "$work/tcp/state"
	chown -R $TCP_UID:$TCP_UID "$work/tcp"
	start_target_tcp --ram 128M || return 1
	tcp_unprivileged || rc=1
	PORT=$TCP_PORT
	if discover && connect; then
		say "connected over siw0 to rdmarw's TCP transport: /dev/$dev"
		fio_verify 4k 2 8 tcp || rc=1
		fio_verify 128k 2 16 tcp || rc=1
		ext4_files || rc=1
		disconnect || rc=1
	else
		say "discovery or connect over TCP failed"
		rc=1
	fi
	nvmet_stop
	if [ $rc = 0 ]; then
		starter=start_target_tcp kimg=$work/tcp/ns.img kill_restart ||
			rc=1
		starter= kimg=
		tcp_unprivileged || rc=1
		nvmet_stop
	fi
	PORT=$port
	result "check=tcp-wire status=$([ $rc = 0 ] && echo ok || echo FAILED)"
	return $rc
}

# Polled I/O queues (issue 30, --poll-groups 1: a target thread polls the
# I/O queues' IB_POLL_DIRECT CQs and sleeps when idle, woken through the
# CQ's event): the host connects, fio verifies, disconnects.
# On these ibv devices the group takes its queues' CQ events and sleeps in
# poll() on them (rdmarw_cq_events_take()): its wake-ups come from there,
# not through the CQs' event threads (the target's -v log says so).
polled() {
	local rc=0 n0 woken

	n0=$(wc -l <"$work/target.log" 2>/dev/null || echo 0)
	start_target --ram 128M --poll-groups 1 || return 1
	connect || return 1
	fio_verify 4k 2 8 poll || rc=1
	fio_verify 128k 2 16 poll || rc=1
	disconnect || rc=1
	nvmet_stop
	tail -n +"$((n0 + 1))" "$work/target.log" >"$work/polled.log"
	grep -m 2 "events go to its poll group" "$work/polled.log" ||
		{ say "no queue's CQ events went to its poll group"; rc=1; }
	grep "poll group 0: .* sleeps in poll()" "$work/polled.log" ||
		{ say "the poll group never slept in poll()"; rc=1; }
	grep "poll groups slept" "$work/polled.log"
	woken=$(sed -n 's/.*poll(), \([0-9]*\) ended by a CQ.s event.*/\1/p' \
		"$work/polled.log")
	[ "${woken:-0}" -gt 0 ] ||
		{ say "no sleep in poll() was ended by a CQ's event"; rc=1; }
	result "check=polled status=$([ $rc = 0 ] && echo ok || echo FAILED)"
	return $rc
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

# The host's log from line $1 on: a failed command (a DISCARD refused with
# an NVMe status, an I/O error) fails the step; prints what it found.
host_log_clean() {
	dmesg | tail -n +"$(($1 + 1))" >"$work/dmesg.new"
	! grep -E "I/O Error|I/O error|critical .*error|error, dev|\(DISCARD\)|Dataset Management" \
		"$work/dmesg.new"
}

host_log_lines() {
	dmesg | wc -l
}

# verify_pass LOG KIB: the verify pass's output in LOG: the bad blocks
# (fio's "verify: bad header offset X, wanted Y" and "crc32c: verify
# failed" lines) in $nbad, the first ones printed; fails when there is
# any, or when fio read other than KIB KiB.
verify_pass() {
	local kib

	nbad=$(grep -cE "verify: |: verify failed" "$1")
	kib=$(fio_field "$1" 6)
	if [ "$nbad" != 0 ]; then
		grep -E "verify: |: verify failed" "$1" | head -3
		return 1
	fi
	[ "$kib" = "$2" ] || {
		say "the verify pass read ${kib:-no} KiB, not $2"
		tail -20 "$1"
		return 1
	}
}

# fio_verify BS JOBS MIB ROUND: JOBS jobs of random writes of BS, MIB MiB
# each on a region of its own, depth 32, then the same jobs' verify-only
# pass; one result line with the bad blocks.
fio_verify() {
	local bs=$1 jobs=$2 size=$3M round=$4 args rc=0 blocks
	local bsb

	seed=$((seed + 1))
	case $bs in
	*k) bsb=$((${bs%k} * 1024)) ;;
	*) bsb=$bs ;;
	esac
	blocks=$(($3 * 1048576 * jobs / bsb))
	args="--name=v$bs --filename=/dev/$dev --rw=randwrite --bs=$bs
--iodepth=32 --numjobs=$jobs --size=$size --offset_increment=$size
--randseed=$((seed * 7919 + ${kseed:-0}))"
	# shellcheck disable=SC2086
	timeout 300 $FIO $args --do_verify=0 >"$work/fio-w.log" 2>&1 || {
		tail -20 "$work/fio-w.log"
		result "check=fio bs=$bs jobs=$jobs round=$round write-failed"
		return 1
	}
	# shellcheck disable=SC2086
	timeout 300 $FIO $args --verify_only=1 >"$work/fio-v.log" 2>&1 || rc=$?
	verify_pass "$work/fio-v.log" $(($3 * 1024 * jobs)) || rc=1
	result "check=fio bs=$bs jobs=$jobs round=$round blocks=$blocks" \
		"bad=$nbad"
	return $rc
}

discover() {
	nvme discover -t rdma -a "$addr" -s $PORT >"$work/disc.log" || return 1
	grep -q "subnqn: *$NQN" "$work/disc.log" &&
		grep -q "trsvcid: *$PORT" "$work/disc.log"
}

# blkdiscard (util-linux) of 256 KiB right after an 8 MiB region fio wrote,
# then of everything from 16 MiB on (as many Dataset Management commands as
# the host makes of it): both succeed, the host's log shows no failed
# command, the region verifies.
discard_raw() {
	local n0 rc=0
	local args="--name=keep --filename=/dev/$dev --rw=write --bs=64k
--iodepth=8 --size=8M"

	seed=$((seed + 1))
	args="$args --randseed=$((seed * 7919 + ${kseed:-0}))"
	# shellcheck disable=SC2086
	$FIO $args --do_verify=0 >"$work/fio-w.log" 2>&1 || {
		tail -20 "$work/fio-w.log"
		return 1
	}
	n0=$(host_log_lines)
	$BLKDISCARD -o 8M -l 256K "/dev/$dev" || rc=1
	$BLKDISCARD -o 16M "/dev/$dev" || rc=1
	host_log_clean "$n0" || rc=1
	# shellcheck disable=SC2086
	$FIO $args --verify_only=1 >"$work/fio-v.log" 2>&1 || rc=1
	verify_pass "$work/fio-v.log" 8192 || rc=1
	result "check=blkdiscard bad=$nbad status=$([ $rc = 0 ] && echo ok || echo FAILED)"
	return $rc
}

# e2fsck -f -n: a clean file system exits 0.
fsck_clean() {
	$E2FSCK -f -n "/dev/$dev" >"$work/fsck.log" 2>&1 || {
		cat "$work/fsck.log"
		return 1
	}
}

# mkfs.ext4 (it discards the whole device first and says nothing when that
# fails: mkfs_discard says what the host's log said), files checksummed,
# e2fsck after the unmount, the checksums after a mount, e2fsck again.
ext4_files() {
	local i n0

	n0=$(host_log_lines)
	$MKFS -q -F "/dev/$dev" || return 1
	mkfs_discard=ok
	host_log_clean "$n0" || mkfs_discard=FAILED
	mount "/dev/$dev" /mnt/nvmeof || return 1
	for i in 1 2 3 4; do
		dd if=/dev/urandom of=/mnt/nvmeof/f$i bs=64k count=$((i * 8)) \
			2>/dev/null || return 1
	done
	(cd /mnt/nvmeof && sha256sum f1 f2 f3 f4) >"$work/sums"
	umount /mnt/nvmeof || return 1
	fsck_clean || return 1
	mount "/dev/$dev" /mnt/nvmeof || return 1
	(cd /mnt/nvmeof && sha256sum -c "$work/sums") || return 1
	umount /mnt/nvmeof || return 1
	fsck_clean
}

# fstrim (util-linux) on the mounted file system: it trims some bytes (ext4
# counts none when the discards fail, and fstrim exits 0 all the same), the
# host's log shows no failed DISCARD; the files and the file system are
# intact after it.
ext4_fstrim() {
	local n0 rc=0 bytes

	mount "/dev/$dev" /mnt/nvmeof || return 1
	# The free blocks of a deleted file are trimmed too.
	dd if=/dev/urandom of=/mnt/nvmeof/gone bs=64k count=16 2>/dev/null &&
		sync && rm /mnt/nvmeof/gone && sync || return 1
	n0=$(host_log_lines)
	$FSTRIM -v /mnt/nvmeof >"$work/fstrim.log" 2>&1 || rc=1
	cat "$work/fstrim.log"
	# "/mnt/nvmeof: 60.5 MiB (63438848 bytes) trimmed"
	bytes=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' "$work/fstrim.log")
	[ "${bytes:-0}" -gt 0 ] || rc=1
	host_log_clean "$n0" || rc=1
	(cd /mnt/nvmeof && sha256sum -c "$work/sums" >/dev/null) || rc=1
	umount /mnt/nvmeof || return 1
	fsck_clean || rc=1
	result "check=fstrim bytes=${bytes:-0} status=$([ $rc = 0 ] && echo ok || echo FAILED)"
	return $rc
}

# After a reconnect: the files of ext4_files are still there, byte for byte.
ext4_again() {
	mount "/dev/$dev" /mnt/nvmeof || return 1
	(cd /mnt/nvmeof && sha256sum -c "$work/sums") || return 1
	umount /mnt/nvmeof || return 1
	fsck_clean
}

# The target killed during I/O and restarted on its file.
# starter (default start_target) starts it, on kimg (default $work/ns.img).
kill_restart() {
	local img=${kimg:-$work/ns.img} fpid rc bad1 bad2
	local pre="--name=pre --filename=/dev/$dev --rw=write --bs=64k
--iodepth=8 --size=16M"
	local dur="--name=dur --filename=/dev/$dev --rw=randwrite --bs=4k
--iodepth=32 --numjobs=2 --size=24M --offset=16M --offset_increment=24M"

	seed=$((seed + 1))
	pre="$pre --randseed=$((seed * 7919 + ${kseed:-0}))"
	seed=$((seed + 1))
	dur="$dur --randseed=$((seed * 7919 + ${kseed:-0}))"
	rm -f "$img"
	${starter:-start_target} --file-size 64M --file "$img" || return 1
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
	${starter:-start_target} --file "$img" || return 1
	wait "$fpid"
	rc=$?
	[ $rc = 0 ] || {
		say "the writer failed across the restart ($rc)"
		cat "$work/fio-dur.log"
		return 1
	}
	say "writer done after the restart"
	rc=0
	# shellcheck disable=SC2086
	$FIO $pre --verify_only=1 >"$work/fio-v.log" 2>&1 || rc=1
	verify_pass "$work/fio-v.log" 16384 || rc=1
	bad1=$nbad
	# shellcheck disable=SC2086
	$FIO $dur --verify_only=1 >"$work/fio-v.log" 2>&1 || rc=1
	verify_pass "$work/fio-v.log" 49152 || rc=1
	bad2=$nbad
	result "check=kill-restart blocks=$((256 + 12288)) bad=$((bad1 + bad2))"
	[ $rc = 0 ] || return 1
	say "all acknowledged blocks verify after the restart"
	disconnect
}

# step WHAT CMD...: CMD's outcome, and how long it took.
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

# A seed of its own for each boot (and so each kernel): a block of an
# earlier run cannot verify either.
kseed=$(($(date +%s) % 100000))
for name in $devs; do
	addr=$(lab_addr "$name") || {
		bad "unknown device $name"
		continue
	}
	: >"$work/target.log"
	say "=== $name ($addr port $PORT), $rounds round(s), scale $scale"
	# NVMEOF_ONLY=auth,halfopen: those steps alone (to try them quickly)
	if [ -n "${NVMEOF_ONLY:-}" ]; then
		for o in $(echo "$NVMEOF_ONLY" | tr , ' '); do
			case $o in
			auth) step "DH-HMAC-CHAP" auth_checks ;;
			halfopen) step "a stranger's half-open connections" \
				half_open ;;
			kill) step "kill -9 during I/O, restart on the file" \
				kill_restart ;;
			poll) step "polled I/O queues" polled ;;
			tcp) [ "$name" != siw0 ] ||
				step "the kernel host to rdmarw's TCP" tcp_wire ;;
			*) bad "NVMEOF_ONLY: unknown step $o" ;;
			esac
			nvmet_stop
		done
		continue
	fi
	if ! step "target starts" start_target --ram 128M; then
		continue
	fi
	step "a host not allowed: refused, and discovers nothing" \
		stranger_refused
	if step "discover" discover && step "connect" connect; then
		r=1
		while [ $r -le "$rounds" ]; do
			step "fio 4k randwrite + verify, qd32 x2, round $r" \
				fio_verify 4k 2 $((8 * scale)) $r
			step "fio 4k randwrite + verify, qd32 x4, round $r" \
				fio_verify 4k 4 $((4 * scale)) $r
			step "fio 128k randwrite + verify, qd32 x2, round $r" \
				fio_verify 128k 2 $((16 * scale)) $r
			step "fio 128k randwrite + verify, qd32 x4, round $r" \
				fio_verify 128k 4 $((8 * scale)) $r
			r=$((r + 1))
		done
		step "blkdiscard beside a written region" discard_raw
		mkfs_discard=
		if step "ext4: files checksummed and e2fsck after a remount" \
			ext4_files; then
			result "check=mkfs-discard status=$mkfs_discard"
			step "mkfs.ext4's discard of the device" \
				test "$mkfs_discard" = ok
			step "ext4: fstrim, then the files and e2fsck" ext4_fstrim
		fi
		step "disconnect" disconnect &&
			step "reconnect" connect &&
			step "ext4: files intact and e2fsck after the reconnect" \
				ext4_again
		step "disconnect again" disconnect
	fi
	nvmet_stop
	step "DH-HMAC-CHAP: refused without the key, connects with it" \
		auth_checks
	nvmet_stop
	step "a stranger's half-open connections cost < 8 MiB" half_open
	nvmet_stop
	step "polled I/O queues (--poll-groups 1): fio verify" polled
	nvmet_stop
	if [ "$name" = siw0 ]; then
		step "the kernel host over siw0 to rdmarw's iWARP over TCP" \
			tcp_wire
		nvmet_stop
	fi
	step "kill -9 during I/O, restart on the file, verify" kill_restart
	nvmet_stop
	nvme disconnect -n $NQN >/dev/null 2>&1
done
name=all
say "summary:"
sed 's/^/nvmeof-result: /' "$work/results"
say "$failed failed"
exit $failed

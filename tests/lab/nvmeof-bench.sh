#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (tests/lab/lab.sh bench, make lab-bench):
# rdmarw-nvmet beside the kernel's nvmet-rdma, on each device, through the
# kernel's NVMe-oF host (nvme-rdma) and fio (libaio, direct=1, time_based):
#   rdmarw-nvmet --ram SIZE on port 4421, and nvmet-rdma (configfs) on
#   port 4420 over the brd ramdisk /dev/ram0 of the same size;
#   4 KiB randread depth 32 (IOPS), 128 KiB sequential read and write
#   depth 32 (MiB/s); one run of the kernel's target then one of
#   rdmarw-nvmet, ROUNDS times, each run on a fresh connect.
# Prints the medians and the ratio rdmarw-nvmet / kernel as a table, and a
# line "nvmeof-bench: dev=... figure=... kernel=... rdmarw=... ratio=..."
# per figure.  Everything is torn down at the end, on failure too (a trap),
# brd unloaded last.
# Usage: sh tests/lab/nvmeof-bench.sh BUILD_DIR [ROUNDS] [DEVICES]
# Environment: NVMEOF_BENCH_RUNTIME (s, default 8), NVMEOF_BENCH_RAMP
#              (s, default 2).
# Exit status: the number of figures that did not get most of their runs.
build=${1:-build-lab}
rounds=${2:-3}
devs=${3:-rxe0 siw0}
target=$build/nvmet/rdmarw-nvmet
RUNTIME=${NVMEOF_BENCH_RUNTIME:-8}
RAMP=${NVMEOF_BENCH_RAMP:-2}
# brd's size (init.sh: rd_size=131072 KiB): both targets serve as much RAM.
RAM=128M
RW_NQN=nqn.2026-01.io.rdmarw:nvmet
RW_PORT=4421
K_NQN=nqn.2026-01.io.rdmarw:kernel
K_PORT=4420
CFS=/sys/kernel/config/nvmet
work=/tmp/nvmeof-bench
fails=0
tpid=
mkdir -p "$work"
. "${0%/*}/lib.sh"

say() { echo "nvmeof-bench: $*"; }

# The kernel target's configfs tree: subsystem, namespace on /dev/ram0,
# one port on $1; each made only once it is absent, so cleanup can run
# from any point.
kernel_up() {
	local s=$CFS/subsystems/$K_NQN p=$CFS/ports/1

	[ -b /dev/ram0 ] || { say "no /dev/ram0 (brd)"; return 1; }
	[ -d $CFS ] || { say "no $CFS (nvmet)"; return 1; }
	mkdir -p "$s" || return 1
	echo 1 >"$s/attr_allow_any_host" || return 1
	mkdir -p "$s/namespaces/1" || return 1
	echo /dev/ram0 >"$s/namespaces/1/device_path" || return 1
	echo 1 >"$s/namespaces/1/enable" || return 1
	mkdir -p "$p" || return 1
	echo rdma >"$p/addr_trtype" &&
		echo ipv4 >"$p/addr_adrfam" &&
		echo "$1" >"$p/addr_traddr" &&
		echo $K_PORT >"$p/addr_trsvcid" || return 1
	ln -s "$s" "$p/subsystems/$K_NQN" || return 1
}

kernel_down() {
	local s=$CFS/subsystems/$K_NQN p=$CFS/ports/1

	[ -L "$p/subsystems/$K_NQN" ] && rm "$p/subsystems/$K_NQN"
	[ -d "$p" ] && rmdir "$p"
	if [ -d "$s/namespaces/1" ]; then
		echo 0 >"$s/namespaces/1/enable"
		rmdir "$s/namespaces/1"
	fi
	[ -d "$s" ] && rmdir "$s"
	return 0
}

rdmarw_up() {
	: >"$work/target.log"
	nvmet_start "$target" "$work/target.log" --addr "$1" --port $RW_PORT \
		--ram $RAM
}

cleanup() {
	nvme disconnect -n $K_NQN >/dev/null 2>&1
	nvme disconnect -n $RW_NQN >/dev/null 2>&1
	nvmet_stop
	kernel_down
}
# At the very end brd goes too (its pages are the guest's RAM).
trap 'cleanup; rmmod brd 2>/dev/null' EXIT
trap 'exit 130' INT TERM

# run NQN PORT RW BS: connect, one fio run, disconnect; prints the figure
# (IOPS for randread, MiB/s otherwise) or nothing.
run() {
	local nqn=$1 port=$2 rw=$3 bs=$4 dev f

	nvme connect -t rdma -a "$addr" -s "$port" -n "$nqn" >/dev/null 2>&1 ||
		return 0
	if dev=$(nvme_ns_dev "$nqn"); then
		timeout $((RUNTIME + RAMP + 60)) fio --name=b --filename="/dev/$dev" \
			--ioengine=libaio --direct=1 --rw="$rw" --bs="$bs" \
			--iodepth=32 --numjobs=1 --time_based \
			--runtime="$RUNTIME" --ramp_time="$RAMP" \
			--output-format=terse --terse-version=3 \
			>"$work/fio.log" 2>&1 || cat "$work/fio.log" >&2
		case $rw in
		randread) f=8 ;;
		read) f=7 ;;
		write) f=48 ;;
		esac
		fio_field "$work/fio.log" $f | awk -v f=$f '$1 > 0 {
				if (f == 8) printf "%d\n", $1;
				else printf "%.1f\n", $1 / 1024 }'
	fi
	nvme disconnect -n "$nqn" >/dev/null 2>&1
}

# figure NAME RW BS UNIT
figure() {
	local k="" r="" i=0 km rwm kn rn ratio

	while [ $i -lt "$rounds" ]; do
		k="$k $(run $K_NQN $K_PORT "$2" "$3")"
		r="$r $(run $RW_NQN $RW_PORT "$2" "$3")"
		i=$((i + 1))
	done
	kn=$(echo "$k" | valid)
	rn=$(echo "$r" | valid)
	[ $((2 * kn)) -gt "$rounds" ] || fails=$((fails + 1))
	[ $((2 * rn)) -gt "$rounds" ] || fails=$((fails + 1))
	km=$(echo "$k" | median)
	rwm=$(echo "$r" | median)
	ratio=$(awk -v a="$rwm" -v b="$km" \
		'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }')
	printf '%-5s %-18s %-5s %10s %10s %6s %5s\n' "$name" "$1" "$4" \
		"$km" "$rwm" "$ratio" "$kn/$rn" >>"$work/table"
	say "dev=$name figure=$1 unit=$4 kernel=$km rdmarw=$rwm ratio=$ratio" \
		"runs=$kn/$rn kernel_runs=[$(echo $k)] rdmarw_runs=[$(echo $r)]"
}

[ -x "$target" ] || { say "no $target (build it first)"; exit 1; }
printf '%-5s %-18s %-5s %10s %10s %6s %5s\n' dev figure unit kernel \
	rdmarw ratio runs >"$work/table"
for name in $devs; do
	addr=$(lab_addr "$name") || {
		say "unknown device $name"
		fails=$((fails + 1))
		continue
	}
	say "=== $name ($addr): kernel nvmet-rdma port $K_PORT on /dev/ram0," \
		"rdmarw-nvmet port $RW_PORT --ram $RAM; fio ${RUNTIME}s + ${RAMP}s ramp"
	if ! kernel_up "$addr" || ! rdmarw_up "$addr"; then
		say "FAILED: targets on $name"
		fails=$((fails + 3))
		cleanup
		continue
	fi
	figure "randread-4k-qd32" randread 4k IOPS
	figure "read-128k-qd32" read 128k MiB/s
	figure "write-128k-qd32" write 128k MiB/s
	cleanup
done
cat "$work/table"
say "$fails figures failed"
exit $fails

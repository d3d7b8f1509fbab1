# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Sourced by the lab's scripts in the guest (nvmeof.sh, nvmeof-bench.sh,
# bench.sh): what they share.

# lab_addr DEV: the address rdma_cm listens on for the lab's device DEV
# (rxe0 or siw0; init.sh puts them on dummy0 and dummy1); fails for any
# other device.
lab_addr() {
	case $1 in
	rxe0) echo "${LAB_RXE_ADDR:-10.11.12.1}" ;;
	siw0) echo "${LAB_SIW_ADDR:-10.11.13.1}" ;;
	*) return 1 ;;
	esac
}

# nvme_ns_dev NQN: the block device of the first namespace of the connected
# subsystem NQN (e.g. nvme0n1), found through /sys/class/nvme-subsystem;
# waits up to 10 s for it to appear, fails after that.
nvme_ns_dev() {
	local s n

	for _ in $(seq 50); do
		for s in /sys/class/nvme-subsystem/nvme-subsys*; do
			grep -qx "$1" "$s/subsysnqn" 2>/dev/null || continue
			for n in "$s"/nvme*n*; do
				[ -e "$n" ] || continue
				n=${n##*/}
				[ -b "/dev/$n" ] && echo "$n" && return 0
			done
		done
		sleep 0.2
	done
	return 1
}

# nvmet_start BIN LOG ARG...: start rdmarw-nvmet (BIN) with ARGs in the
# background, its output appended to LOG, its pid in $tpid; returns once
# LOG has one more "serving" line than before (at most 30 s); fails, with
# LOG printed, when the target exits or does not say so in time.
nvmet_start() {
	local bin=$1 log=$2 n

	shift 2
	n=$(grep -c "serving" "$log" 2>/dev/null)
	"$bin" "$@" >>"$log" 2>&1 &
	tpid=$!
	for _ in $(seq 150); do
		[ "$(grep -c "serving" "$log")" -gt "${n:-0}" ] && return 0
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.2
	done
	echo "rdmarw-nvmet did not start:"
	cat "$log"
	return 1
}

# nvmet_stop: stop the target of nvmet_start ($tpid) and wait for it.
nvmet_stop() {
	[ -n "$tpid" ] || return 0
	kill "$tpid" 2>/dev/null
	wait "$tpid"
	tpid=
}

# fio_field LOG N: field N of the last terse line of fio's output in LOG
# (--output-format=terse --terse-version=3: 6 the KiB read, 7 read KiB/s,
# 8 read IOPS; 47 the KiB written, 48 write KiB/s).
fio_field() {
	grep -v '^fio:' "$1" | grep ';' | tail -1 | cut -d';' -f"$2"
}

# median: the median of the figures on stdin (one or more per line) that
# are above 0 (a run that gave none or 0 does not count); 0 when none is.
median() {
	tr ' ' '\n' | awk '$1 > 0' | sort -n | awk '{ v[NR] = $1 }
		END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'
}

# valid: how many figures on stdin are above 0.
valid() {
	tr ' ' '\n' | awk '$1 > 0' | wc -l
}

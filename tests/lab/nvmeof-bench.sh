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
# Beside each figure, the guest's CPU time per I/O over the fio run (both
# sides: host, target, softirqs; /proc/stat's busy time, microseconds per
# I/O, 1 MiB counted as 256 I/Os of 4 KiB for the MiB/s figures), medians.
# Environment: NVMEOF_BENCH_RUNTIME (s, default 8), NVMEOF_BENCH_RAMP
#              (s, default 2), NVMEOF_BENCH_ARGS (more options for
#              rdmarw-nvmet, e.g. "--poll-groups 1"),
#              NVMEOF_BENCH_PROF="DEV:RW:BS ..." (e.g. "rxe0:read:128k
#              siw0:randread:4k"): instead of the figures, one fio run per
#              case against each target under `perf record -a -g -e
#              cpu-clock` (perf in the initramfs: RDMARW_LAB_PERF=1), the
#              reports written to NVMEOF_BENCH_PROF_DIR (default
#              BUILD_DIR/nvmeof-prof, on the host through the shared
#              repository): DEV-RW-BS-TARGET.sym (comm, dso, symbol),
#              .dso (comm, dso), .tid (per thread), .cpu (per CPU and
#              comm), .tidsym (the top symbols of each thread), .graph
#              (call chains of the top symbols),
#              .cpustat (CPU time by /proc/stat and by thread from
#              schedstat, independent of perf's sampling),
#              .counters (the device's hw_counters over the run: rxe's
#              packets, retries, ...), .fio, and the perf.data (.data)
#              with the guest's kallsyms for more reports on the host.
# Exit status: the number of figures that did not get most of their runs
# (profiles: the number of cases without a profile).
build=${1:-build-lab}
rounds=${2:-3}
devs=${3:-rxe0 siw0}
target=$build/nvme/target/rdmarw-nvmet
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

	# an earlier run in this boot unloaded brd at its end: load it again
	# as init.sh does
	[ -b /dev/ram0 ] || [ ! -e /lab/ko/brd.ko ] ||
		insmod /lab/ko/brd.ko rd_nr=1 rd_size=131072
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
	# shellcheck disable=SC2086 # a list of options
	nvmet_start "$target" "$work/target.log" --addr "$1" --port $RW_PORT \
		--host "$(cat /etc/nvme/hostnqn)" --ram $RAM \
		${NVMEOF_BENCH_ARGS:-}
}

# busy: the guest's busy CPU time so far (/proc/stat, in USER_HZ ticks).
busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
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

# run NQN PORT RW BS [JOBS]: connect, one fio run (JOBS jobs, default 1,
# each pinned to its own CPU, so each submits on its own I/O queue),
# disconnect; prints the figure (IOPS for randread, MiB/s otherwise; all
# jobs together) or nothing.
run() {
	local nqn=$1 port=$2 rw=$3 bs=$4 jobs=${5:-1} dev f pin=""

	# one job runs where the scheduler puts it, as before the two-job figure
	[ "$jobs" -gt 1 ] &&
		pin="--cpus_allowed=0-$((jobs - 1)) --cpus_allowed_policy=split"

	nvme connect -t rdma -a "$addr" -s "$port" -n "$nqn" >/dev/null 2>&1 ||
		return 0
	if dev=$(nvme_ns_dev "$nqn"); then
		b0=$(busy)
		timeout $((RUNTIME + RAMP + 60)) fio --name=b --filename="/dev/$dev" \
			--ioengine=libaio --direct=1 --rw="$rw" --bs="$bs" \
			--iodepth=32 --numjobs="$jobs" --group_reporting \
			$pin --time_based \
			--runtime="$RUNTIME" --ramp_time="$RAMP" \
			--output-format=terse --terse-version=3 \
			>"$work/fio.log" 2>&1 || cat "$work/fio.log" >&2
		b1=$(busy)
		case $rw in
		randread) f=8 ;;
		read) f=7 ;;
		write) f=48 ;;
		esac
		fio_field "$work/fio.log" $f | awk -v f=$f '$1 > 0 {
				if (f == 8) printf "%d\n", $1;
				else printf "%.1f\n", $1 / 1024 }' >"$work/fig"
		cat "$work/fig"
		# CPU us per I/O over the whole run (ramp included: fio's
		# figure is an average, so is this); 4 KiB I/Os for MiB/s
		awk -v b=$((b1 - b0)) -v hz="$(getconf CLK_TCK 2>/dev/null ||
			echo 100)" -v t=$((RUNTIME + RAMP)) -v f=$f '$1 > 0 {
				n = (f == 8 ? $1 : $1 * 256) * t
				printf "%.1f\n", b / hz * 1e6 / n }' \
			"$work/fig" >>"$work/cpu"
	fi
	nvme disconnect -n "$nqn" >/dev/null 2>&1
}

# figure NAME RW BS UNIT [JOBS]
figure() {
	local k="" r="" i=0 km rwm kn rn ratio kc="" rc=""

	while [ $i -lt "$rounds" ]; do
		: >"$work/cpu"
		k="$k $(run $K_NQN $K_PORT "$2" "$3" "${5:-1}")"
		kc="$kc $(cat "$work/cpu")"
		: >"$work/cpu"
		r="$r $(run $RW_NQN $RW_PORT "$2" "$3" "${5:-1}")"
		rc="$rc $(cat "$work/cpu")"
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
		"runs=$kn/$rn kernel_runs=[$(echo $k)] rdmarw_runs=[$(echo $r)]" \
		"cpu_us_per_io kernel=$(echo "$kc" | median)" \
		"rdmarw=$(echo "$rc" | median)"
}

# prof_tasks: every thread in the guest, kernel threads (kworkers,
# ksoftirqd) too: tid, comm, CPU time so far (ns) and the times it was
# scheduled in (about its wake-ups), from schedstat.  Two processes, not
# one per thread: under TCG a fork takes milliseconds.
prof_tasks() {
	{
		grep -H . /proc/[0-9]*/task/[0-9]*/comm
		grep -H . /proc/[0-9]*/task/[0-9]*/schedstat
	} 2>/dev/null | awk '{
		split($0, p, "/"); i = index($0, ":"); v = substr($0, i + 1)
		if (p[6] ~ /^comm/) { gsub(" ", "_", v); c[p[5]] = v }
		else { split(v, f, " "); t[p[5]] = f[1] " " f[3] } }
		END { for (k in t) print k, (k in c ? c[k] : "?"), t[k] }'
}

# io_started: wait (at most 60 s) until the nvme block devices have
# completed 100 I/Os more than when called (fio under TCG takes seconds to
# start; the partition scan after the connect reads a few blocks).  All of
# them: the namespace's multipath node counts nothing, its path
# (nvmeXcYnZ) does.
nvme_ios() {
	cat /sys/block/nvme*/stat 2>/dev/null | awk '{ n += $1 + $5 } END { print n + 0 }'
}

io_started() {
	local n0

	n0=$(nvme_ios)
	for _ in $(seq 300); do
		[ "$(nvme_ios)" -ge $((n0 + 100)) ] && return 0
		sleep 0.2
	done
	return 1
}

# prof_cpu BEFORE AFTER: /proc/stat's cpu lines over the run, in shares of
# each CPU's time (user, system, irq+softirq, idle).
prof_cpu() {
	awk 'NR == FNR { for (i = 2; i <= 9; i++) v[$1, i] = $i; next }
	     /^cpu/ { t = 0; for (i = 2; i <= 9; i++) { d[i] = $i - v[$1, i]; t += d[i] }
	       if (t > 0) printf "%-5s user %5.1f%%  system %5.1f%%  irq+softirq %5.1f%%  idle %5.1f%%\n",
		 $1, 100 * (d[2] + d[3]) / t, 100 * d[4] / t,
		 100 * (d[7] + d[8]) / t, 100 * (d[5] + d[6]) / t }' "$1" "$2"
}

# prof_run TAG NQN PORT RW BS: connect, fio for RAMP + RUNTIME + 2 s with
# perf recording the whole guest for RUNTIME - 1 s once the I/O has started
# and RAMP s passed (fio's own figure, in .fio, includes the recording's
# cost), disconnect;
# the reports go to $pdir/TAG.*.
prof_run() {
	local tag=$1 nqn=$2 port=$3 rw=$4 bs=$5 dev fpid out=$pdir/$1
	local data=$pdir/$1.data rep c=/sys/class/infiniband/$name/ports/1/hw_counters

	nvme connect -t rdma -a "$addr" -s "$port" -n "$nqn" >/dev/null 2>&1 ||
		{ say "$tag: no connect"; return 1; }
	dev=$(nvme_ns_dev "$nqn") || { say "$tag: no namespace"; return 1; }
	fio --name=b --filename="/dev/$dev" --ioengine=libaio --direct=1 \
		--rw="$rw" --bs="$bs" --iodepth=32 --numjobs=1 --time_based \
		--runtime="$((RUNTIME + 2))" --ramp_time="$RAMP" >"$out.fio" 2>&1 &
	fpid=$!
	io_started || say "$tag: no I/O within 60 s"
	sleep "$RAMP"
	[ -d "$c" ] && grep -H . "$c"/* >"$work/counters.before" 2>/dev/null
	prof_tasks >"$work/tasks.before"
	grep -E '^(cpu|ctxt|intr)' /proc/stat >"$work/stat.before"
	perf record -a -g -e cpu-clock -F 999 -N -B -q -o "$data" \
		-- sleep $((RUNTIME - 1)) >"$work/perf.log" 2>&1 ||
		cat "$work/perf.log"
	grep -E '^(cpu|ctxt|intr)' /proc/stat >"$work/stat.after"
	prof_tasks >"$work/tasks.after"
	{
		echo "# CPU time over the $((RUNTIME - 1)) s recorded (/proc/stat)"
		prof_cpu "$work/stat.before" "$work/stat.after"
		awk 'NR == FNR { v[$1] = $2; next }
		     $1 == "ctxt" || $1 == "intr" {
			 printf "%s %d\n", $1, $2 - v[$1] }' \
			"$work/stat.before" "$work/stat.after"
		echo "# threads by CPU time over it (schedstat): s, times scheduled in"
		awk 'NR == FNR { t[$1] = $3; n[$1] = $4; next }
		     ($1 in t) && $3 - t[$1] > 0 {
			 printf "%8.3f %7d %-8s %s\n", ($3 - t[$1]) / 1e9,
				 $4 - n[$1], $1, $2 }' \
			"$work/tasks.before" "$work/tasks.after" | sort -rn | head -20
	} >"$out.cpustat"
	if [ -d "$c" ]; then
		grep -H . "$c"/* 2>/dev/null |
			awk -F: 'NR == FNR { v[$1] = $2; next }
				 { n = $1; sub(".*/", "", n);
				   printf "%-24s %d\n", n, $2 - v[$1] }' \
				"$work/counters.before" - >"$out.counters"
	fi
	wait "$fpid"
	nvme disconnect -n "$nqn" >/dev/null 2>&1
	rep="perf report -i $data --stdio --no-children -g none"
	$rep --sort comm,dso,sym --percent-limit 0.3 2>/dev/null |
		sed '/^$/d' | head -70 >"$out.sym"
	$rep --sort comm,dso 2>/dev/null | sed '/^$/d' | head -40 >"$out.dso"
	$rep --sort pid 2>/dev/null | sed '/^$/d' | head -40 >"$out.tid"
	$rep --sort cpu,comm 2>/dev/null | sed '/^$/d' | head -40 >"$out.cpu"
	$rep --sort pid,sym --percent-limit 0.5 2>/dev/null |
		sed '/^$/d' | head -80 >"$out.tidsym"
	# Who calls the kernel's hottest symbols from each thread.
	perf report -i "$data" --stdio --no-children -G --sort comm,sym \
		--percent-limit 2 2>/dev/null | sed '/^$/d' | head -400 \
		>"$out.graph"
	# perf.data stays for perf report on the host:
	# perf report -i TAG.data --kallsyms=kallsyms --symfs=/ ...
	say "$tag: $(grep -E 'iops|IOPS|bw=' "$out.fio" | head -1 | sed 's/^ *//')"
}

# prof CASE: DEV:RW:BS against the kernel's target then rdmarw-nvmet.
prof() {
	local rw bs tag

	name=${1%%:*}
	rw=${1#*:}
	bs=${rw#*:}
	rw=${rw%%:*}
	addr=$(lab_addr "$name") || { say "unknown device $name"; return 1; }
	kernel_up "$addr" && rdmarw_up "$addr" || { cleanup; return 1; }
	tag=$name-$rw-$bs
	prof_run "$tag-kernel" $K_NQN $K_PORT "$rw" "$bs" &&
		prof_run "$tag-rdmarw" $RW_NQN $RW_PORT "$rw" "$bs"
	local rc=$?
	cleanup
	return $rc
}

[ -x "$target" ] || { say "no $target (build it first)"; exit 1; }
if [ -n "${NVMEOF_BENCH_PROF:-}" ]; then
	command -v perf >/dev/null ||
		{ say "no perf in the guest (RDMARW_LAB_PERF=1)"; exit 1; }
	pdir=${NVMEOF_BENCH_PROF_DIR:-$build/nvmeof-prof}
	mkdir -p "$pdir"
	echo 0 >/proc/sys/kernel/kptr_restrict
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	cat /proc/kallsyms >"$pdir/kallsyms"
	for c in $NVMEOF_BENCH_PROF; do
		prof "$c" || fails=$((fails + 1))
	done
	say "profiles in $pdir; $fails cases failed"
	exit $fails
fi
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
	# two jobs on two CPUs: two I/O queues, each with its own QP
	figure "read-128k-qd32-2jobs" read 128k MiB/s 2
	cleanup
done
cat "$work/table"
say "$fails figures failed"
exit $fails

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest (tests/lab/lab.sh check): the stock smoke, the
# ibv backend's test, the rdma_cm test, the R/W conformance suite on rxe0
# and siw0, krping (examples/krping) over both, rping interop both ways, and
# the kernel's NVMe-oF host against rdmarw-nvmet (nvmeof.sh).
# Usage: sh tests/lab/check.sh BUILD_DIR.  Exit status: failed parts.
# RDMARW_LAB_PARTS names the parts to run (default all: smoke info ibv srq
# cm conformance krping interop perf nvmeof nvmeof-reload); lab.sh sets it
# per kernel
# (RDMARW_LAB_KERNELS="6.1 6.12:nvmeof").
build=${1:-build-lab}
passed=0
failed=0
kernel=$(uname -r)

part() {
	case " ${RDMARW_LAB_PARTS:-$1} " in
	*" $1 "*) ;;
	*) return 0 ;;
	esac
	shift
	echo "=== [$kernel] $1"
	shift
	t0=$(date +%s)
	if "$@"; then
		passed=$((passed + 1))
		echo "=== [$kernel] passed in $(($(date +%s) - t0)) s"
	else
		failed=$((failed + 1))
		echo "=== [$kernel] FAILED in $(($(date +%s) - t0)) s: $*"
	fi
}

part smoke "smoke: devices and stock rping" sh tests/lab/smoke.sh
# rdmarw-info lists the ibv devices next to the software ones.
info() {
	"$build/tools/rdmarw-info" >/tmp/info.log || return 1
	grep -E '^(rxe0|siw0) ' /tmp/info.log
	grep -q '^rxe0 (ibv)' /tmp/info.log && grep -q '^siw0 (ibv)' /tmp/info.log
}
part info "rdmarw-info: rxe0 and siw0 listed" info
# test_ibv_cq_events: a DIRECT CQ's events taken over (rdmarw-nvmet's poll
# groups sleep in poll() on them).
ibv_tests() {
	rc=0
	"$build/tests/test_ibv_rw" || rc=1
	"$build/tests/test_ibv_cq_events" || rc=1
	return $rc
}
part ibv "ibv backend: test_ibv_rw and test_ibv_cq_events on rxe0 and siw0" \
	ibv_tests
part srq "ibv backend: SRQs (test_ibv_srq) on rxe0 and siw0" "$build/tests/test_ibv_srq"
part cm "rdma_cm over librdmacm: test_cm_ibv on rxe0 and siw0" \
	"$build/tests/test_cm_ibv"
part conformance "conformance: tests/test_rw_*.c on rxe0 and siw0" \
	sh tests/lab/conformance.sh "$build" rxe0 siw0
part krping "examples/krping: server and client over rxe0 and siw0" \
	sh tests/lab/krping.sh "$build"
part interop "interop: rping-server/-client against stock rping" \
	sh tests/lab/interop.sh "$build"
# rdmarw-perf's server and client as two processes on each device
# (tests/cli/perf_cs.sh: latency percentiles ordered, every end's JSON).
perf_cs() {
	RDMARW_TEST_DEVICE=rxe0 RDMARW_TEST_ADDR=$LAB_RXE_ADDR \
		sh tests/cli/perf_cs.sh "$build/tools/rdmarw-perf" || return 1
	RDMARW_TEST_DEVICE=siw0 RDMARW_TEST_ADDR=$LAB_SIW_ADDR \
		sh tests/cli/perf_cs.sh "$build/tools/rdmarw-perf"
}
part perf "rdmarw-perf: server and client processes on rxe0 and siw0" perf_cs
# RDMARW_LAB_NVMEOF names the devices (default both: "rxe0 siw0"), and
# "full" there runs three rounds of the fio checks (nvmeof.sh).
# shellcheck disable=SC2086
part nvmeof "nvmeof: the kernel's NVMe-oF host against rdmarw-nvmet" \
	sh tests/lab/nvmeof.sh "$build" ${RDMARW_LAB_NVMEOF:-rxe0 siw0}
# SIGHUP reload under fio and SIGUSR1 stats (nvmeof-reload.sh; issue 27).
# shellcheck disable=SC2086
part nvmeof-reload "nvmeof-reload: namespaces added and removed under fio" \
	sh tests/lab/nvmeof-reload.sh "$build" ${RDMARW_LAB_NVMEOF_RELOAD:-rxe0 siw0}
echo "lab: [$kernel] $passed passed, $failed failed"
exit $failed

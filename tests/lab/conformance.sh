#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs in the lab's guest: the project's R/W conformance suite (the
# tests/test_rw_*.c programs the software device runs) on rxe0 and siw0,
# through RDMARW_TEST_DEVICE / RDMARW_TEST_ADDR.  Tests of what only the
# software device has skip there (cmocka's SKIPPED, not a failure).
# Usage: sh tests/lab/conformance.sh BUILD_DIR [DEVICE...]
# Exit status: the number of programs that failed.
build=${1:-build-lab}
shift
devs=${*:-rxe0 siw0}
fails=0

addr_of() {
	case $1 in
	rxe*) echo "$LAB_RXE_ADDR" ;;
	siw*) echo "$LAB_SIW_ADDR" ;;
	esac
}

for dev in $devs; do
	addr=$(addr_of "$dev")
	for t in "$build"/tests/test_rw_*; do
		[ -x "$t" ] || continue
		name=${t##*/}
		start=$(date +%s)
		RDMARW_TEST_DEVICE=$dev RDMARW_TEST_ADDR=$addr "$t" \
			>/tmp/conf.log 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		ran=$(sed -n 's/^\[==========\] \([0-9]*\) test(s) run\./\1/p' \
			/tmp/conf.log)
		skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s).*/\1/p' \
			/tmp/conf.log)
		passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s).*/\1/p' \
			/tmp/conf.log)
		if [ $rc = 0 ] && [ "${passed:-0}" -gt 0 ]; then
			echo "PASS: $dev $name: ${passed} passed," \
				"${skipped:-0} skipped of ${ran:-?} (${secs} s)"
		elif [ $rc = 0 ] && [ -n "$ran" ] && [ "$ran" -gt 0 ] &&
		     [ "${skipped:-0}" = "$ran" ]; then
			# every case needs the software device (its pools,
			# faults or internals): nothing to check here
			echo "SKIP: $dev $name: all ${ran} cases are software-device only"
		else
			echo "FAIL: $dev $name (status $rc, ${secs} s)"
			grep -E 'ERROR|FAILED|error:|differs|^RDMARW' \
				/tmp/conf.log | head -n 20 | sed 's/^/  /'
			fails=$((fails + 1))
		fi
	done
done
echo "conformance: $fails failed"
exit $fails

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdmarw-nvmet's signals on a software device: SIGUSR1 logs a line per
# object and rewrites --stats-file (JSON); SIGHUP reads the config file
# again and applies it ("configuration reloaded"), or refuses a bad one
# with its reason and serves on; SIGTERM stops it with status 0.
# Usage: nvmet_signals.sh PROGRAM
set -u
prog=$1
fails=0
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
log=$tmp/log conf=$tmp/target.conf stats=$tmp/stats.json

fail() {
	echo "FAIL: $*" >&2
	sed 's/^/  | /' "$log" >&2
	fails=$((fails + 1))
}

# wait_for COUNT TEXT: until the log has COUNT lines with TEXT (10 s).
wait_for() {
	for _ in $(seq 200); do
		[ "$(grep -cF -- "$2" "$log")" -ge "$1" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

printf 'ram = 1M\n' >"$conf"
"$prog" --soft rxe --config "$conf" --stats-file "$stats" >"$log" 2>&1 &
pid=$!
wait_for 1 "serving" || fail "the target did not start"

kill -USR1 "$pid"
wait_for 1 "stats: subsystem nqn.2026-01.io.rdmarw:nvmet nsid 1: reads 0" ||
	fail "SIGUSR1: no summary line for namespace 1"
for _ in $(seq 200); do
	[ -s "$stats" ] && break
	sleep 0.05
done
grep -q '"nqn": "nqn.2026-01.io.rdmarw:nvmet"' "$stats" ||
	fail "SIGUSR1: no subsystem in $stats"
grep -q '"nsid": 2' "$stats" && fail "a namespace 2 before the reload"
[ -e "$stats.tmp" ] && fail "the temporary stats file is left"

printf 'ram = 1M\nram = 2M\n' >"$conf"
kill -HUP "$pid"
wait_for 1 "configuration reloaded" || fail "SIGHUP: no reload"
kill -USR1 "$pid"
wait_for 1 "nsid 2: reads 0" || fail "namespace 2 not there after the reload"

printf 'ram = 1M\nram = 12x\n' >"$conf"
kill -HUP "$pid"
wait_for 1 "reload refused, the configuration stays" ||
	fail "SIGHUP with a bad config: not refused"
grep -qF -- "ram = 12x" "$log" || grep -qF -- "12x" "$log" ||
	fail "the refusal does not name the bad value"
kill -USR1 "$pid"
wait_for 3 "stats: subsystem nqn.2026-01.io.rdmarw:nvmet: " ||
	fail "no summary after the refused reload"
[ "$(grep -c "nsid 2: reads 0" "$log")" -ge 2 ] ||
	fail "namespace 2 gone after a refused reload"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "SIGTERM: exit status $rc"
grep -q "stopped" "$log" || fail "no 'stopped' line"

[ "$fails" = 0 ] && echo "nvmet signals: ok"
exit "$fails"

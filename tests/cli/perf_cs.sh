#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdmarw-perf's client and server: latency (--lat) and bandwidth of WRITE,
# READ and SEND, -b, the server's report, the JSON records.
#
# On the software device the two ends are threads of one process, each on
# its own device, connected through rdma_cm (the software device's
# connection manager does not reach other processes).  With
# RDMARW_TEST_DEVICE and RDMARW_TEST_ADDR (an ibv device and its IP, as
# the conformance tests take them: tests/lab/README.md) the server and the
# client also run as two processes on that device.
# Usage: perf_cs.sh RDMARW_PERF
set -u
perf=$1
out=$(mktemp) srv=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$srv" "$err"' EXIT
fails=0

# check NAME WHAT FILE...: the records of FILE(s) (JSON arrays) against
# WHAT: "lat:OPS" (a client and a server record per op, percentiles
# ordered and positive) or "bw:OPS[:bidir]" (a positive BW per op and
# end, and with bidir a "both" row on each end)
check() {
	name=$1 what=$2
	shift 2
	python3 -c '
import json, sys
what, files = sys.argv[1].split(":"), sys.argv[2:]
recs = [r for f in files for r in json.load(open(f))]
meta = ["role", "version", "host", "device", "time", "args", "port",
        "profile", "ctxs", "qps", "duration", "bidirectional"]
ops = what[1].split(",")
for r in recs:
    missing = [k for k in meta + ["op", "bytes", "iters", "measured_by"]
               if k not in r]
    assert not missing, "%s lacks %s" % (r, missing)
    for k in ("version", "host", "device", "time", "args"):
        assert isinstance(r[k], str) and r[k], k
    assert r["role"] in ("client", "server"), r["role"]
    assert r["mode"] == what[0], r["mode"]
roles = set((r["role"], r["op"]) for r in recs)
for op in ops:
    for role in ("client", "server"):
        assert (role, op) in roles, "no %s record of %s" % (role, op)
if what[0] == "lat":
    keys = ["t_min", "t_typical", "percentile_99", "percentile_99.9",
            "t_max"]
    for r in recs:
        v = [r[k] for k in keys]
        assert all(x is not None and x > 0 for x in v), r
        assert v == sorted(v), "not ordered: %s" % dict(zip(keys, v))
        assert r["t_median"] == r["t_typical"] and r["t_avg"] > 0, r
        assert r["t_stdev"] >= 0 and r["iters"] > 0, r
        assert r["halved"] == (r["op"] != "READ"), r
else:
    for r in recs:
        assert r["bw_avg_mib"] > 0 and r["bw_peak_mib"] >= r["bw_avg_mib"] * 0.99, r
        assert r["iters"] > 0 and r["mpps"] > 0, r
    if len(what) > 2:
        both = [r for r in recs if r["measured_by"] == "both"]
        assert len(both) == 2 * len(ops), "no both rows"
' "$what" "$@" || {
		echo "FAIL: $name:" >&2
		for f in "$@"; do sed 's/^/  | /' "$f" >&2; done
		fails=$((fails + 1))
	}
}

# run NAME ARGS...: rdmarw-perf ARGS --json into $out, bounded
run() {
	name=$1
	shift
	if ! timeout 60 "$perf" --json "$@" >"$out" 2>"$err"; then
		echo "FAIL: $name: rdmarw-perf --json $*: exit $?" >&2
		sed 's/^/  | /' "$err" >&2
		fails=$((fails + 1))
		return 1
	fi
}

# the software device: client and server in this process
run soft_lat --lat -n 300 -s 64 --dir write,read,send &&
	check soft_lat lat:WRITE,READ,SEND "$out"
run soft_lat_siw --lat -n 100 -s 4K --dir write,send --profile siw 10.7.0.2 &&
	check soft_lat_siw lat:WRITE,SEND "$out"
run soft_bw_siw -n 3000 -s 4K --dir write,read,send --profile siw 10.7.0.2 &&
	check soft_bw_siw bw:WRITE,READ,SEND "$out"
run soft_bw_sweep -n 200 --sweep=64:1K --dir send -t 4 &&
	check soft_bw_sweep bw:SEND "$out"
run soft_bidir -b -n 1000 -s 16K --dir write,send --profile mlx5 &&
	check soft_bidir bw:WRITE,SEND:bidir "$out"
# -D: each test runs that long, as in the local run
run soft_duration -s 1K -D 0.2 --dir write &&
	python3 -c '
import json, sys
for r in json.load(open(sys.argv[1])):
    assert 0.2 <= r["secs"] < 0.5, r["secs"]
' "$out" || { echo "FAIL: soft_duration" >&2; fails=$((fails + 1)); }
# the table: the client's, then the server's
if ! timeout 60 "$perf" --lat -n 50 -s 8 >"$out" 2>"$err" ||
   ! grep -q '^WRITE  *8  *50 ' "$out" ||
   ! grep -q '^# the server (a thread of this process' "$out" ||
   [ "$(grep -c '^READ  *8  *50 ' "$out")" -ne 2 ]; then
	echo "FAIL: the table:" >&2
	sed 's/^/  | /' "$out" "$err" >&2
	fails=$((fails + 1))
fi

# two processes on an ibv device
dev=${RDMARW_TEST_DEVICE:-} addr=${RDMARW_TEST_ADDR:-}
if [ -n "$dev" ] && [ -n "$addr" ]; then
	port=$((20000 + $$ % 20000))
	for t in "--lat -n 500 -s 64 --dir write,read,send" \
		 "-n 2000 -s 64K --dir write,read,send" "-b -n 500 -s 4K"; do
		timeout 60 "$perf" -d "$dev" -p $port --json >"$srv" 2>"$err" &
		spid=$!
		sleep 1
		# shellcheck disable=SC2086 # $t: the options
		if ! timeout 60 "$perf" -d "$dev" -p $port --json $t "$addr" \
			>"$out" 2>>"$err" || ! wait $spid; then
			echo "FAIL: two processes on $dev: $t" >&2
			sed 's/^/  | /' "$err" >&2
			fails=$((fails + 1))
			wait $spid
			continue
		fi
		case "$t" in
		--lat*) check "ibv $t" lat:WRITE,READ,SEND "$out" "$srv" ;;
		-b*) check "ibv $t" bw:WRITE,READ:bidir "$out" "$srv" ;;
		*) check "ibv $t" bw:WRITE,READ,SEND "$out" "$srv" ;;
		esac
		port=$((port + 1))
	done
else
	echo "perf_cs: two processes skipped (RDMARW_TEST_DEVICE and" \
		"RDMARW_TEST_ADDR name an ibv device; the software device's" \
		"connection manager does not reach other processes)"
fi
[ "$fails" -eq 0 ] || exit 1
echo "perf_cs: latency ordered and positive, every end reported"

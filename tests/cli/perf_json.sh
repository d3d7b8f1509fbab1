#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdmarw-perf --json, as bench/run.sh and tests/lab/bench.sh read it: the
# whole output is one JSON array, and every line between "[" and "]" is one
# whole object (a comma after it but the last) with the expected members,
# written without spaces ("key":value, which the scripts grep for).
# Usage: perf_json.sh RDMARW_PERF
set -u
perf=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0

# check NAME MEMBERS ARGS...: MEMBERS is a comma-separated list of the keys
# every record of the mode ("io" or "ctl"; "ctl_summary" has its own) has.
check() {
	name=$1 keys=$2
	shift 2
	if ! "$perf" --quiet --json "$@" >"$out"; then
		echo "FAIL: $name: rdmarw-perf $* exited $?" >&2
		fails=$((fails + 1))
		return
	fi
	python3 -c '
import json, sys
name, keys, path = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
summary = ["mode", "single_ns", "multi_ns_per_sge", "mr_ns_per_mr_small",
           "mr_ns_per_mr_full"]
thread = ["mode", "op", "bytes", "thread", "cpu", "iters", "secs", "bw_mib",
          "mpps", "memcpy_mib"]
text = open(path).read()
doc = json.loads(text)
assert isinstance(doc, list) and doc, "not a non-empty array"
lines = text.splitlines()
assert lines[0] == "[" and lines[-1] == "]", "not one record per line"
body = lines[1:-1]
assert len(body) == len(doc), "%d lines for %d records" % (len(body), len(doc))
for i, line in enumerate(body):
    last = i == len(body) - 1
    assert line.endswith("}" if last else "},"), "line %d: %s" % (i + 2, line)
    rec = json.loads(line if last else line[:-1])
    assert isinstance(rec, dict) and rec == doc[i], "line %d" % (i + 2)
    assert '"'"'": '"'"' not in line and '"'"', "'"'"' not in line, \
        "line %d has spaces" % (i + 2)
    want = {"ctl_summary": summary, "thread": thread}.get(rec.get("mode"),
                                                          keys)
    missing = [k for k in want if k not in rec]
    assert not missing, "line %d lacks %s" % (i + 2, missing)
    for k, v in rec.items():
        assert v is None or isinstance(v, (int, float, str, bool)), k
' "$name" "$keys" "$out" || {
		echo "FAIL: $name: rdmarw-perf --json $*:" >&2
		sed 's/^/  | /' "$out" >&2
		fails=$((fails + 1))
	}
}

opts=profile,iommu,threaded,sge,entry,gap,offset,ctxs,qps,force_mr,bvec,pi
opts=$opts,duration,bidirectional,role,version,host,device,time,args
io=mode,op,bytes,nents,iters,secs,bw_peak_mib,bw_avg_mib,mpps,ns_per_io
io=$io,memcpy_mib,memcpy_secs,ratio,path,cpu_secs,cpu_ns_per_io,cpu_mpps
io=$io,memcpy_cpu_secs,cpu_ratio,ratio_min,ratio_max,cpu_ratio_min
io=$io,cpu_ratio_max,ctl_ns,$opts
ctl=mode,what,path,nents,sge_len,mrs,wrs,ns_per_io,ns_per_io_min,ns_per_sge
ctl=$ctl,ns_per_mr,$opts

check sweep "$io" -n 50 --sweep=2:64K -t 4
check write "$io" -n 100 -s 4K --dir write
check pi "$io" -n 50 -s 16K --sge 4 --profile mlx5 --pi=4096
check ctl "$ctl" --ctl -D 0.02 --profile siw --dir read
check qps "$io" -q 3 -t 4 -D 0.02 -s 4K
# -t: a "thread" record per thread (the list above), then the "threads" one
mt=mode,op,bytes,threads,bw_sum_mib,mpps_sum,one_bw_mib,scaling,min_bw_mib
mt=$mt,max_bw_mib,fairness,memcpy_sum_mib,memcpy_one_mib,memcpy_scaling
mt=$mt,memcpy_fairness,ratio,$opts
check threads "$mt" --threads 3 -D 0.02 -s 4K --threaded
check threads_sweep "$mt" --threads 2 -D 0.01 --sweep=64:256 --profile siw --bvec

# -D: the I/O of a size runs that long (the rounds' times add up to it),
# however fast the first I/Os go
if ! "$perf" --quiet --json -s 4K --dir write -D 0.3 >"$out" ||
   ! python3 -c '
import json, sys
rec = json.load(open(sys.argv[1]))[0]
assert 0.3 <= rec["secs"] < 0.45, rec["secs"]
' "$out"; then
	echo "FAIL: -D 0.3:" >&2
	sed 's/^/  | /' "$out" >&2
	fails=$((fails + 1))
fi

# --out_json_file: the records in the file (the version, host, device,
# time and options in each), the table on stdout; --csv: a header line,
# then one line of as many fields per record
file=$(mktemp)
if ! "$perf" --quiet -n 50 --sweep=64:128 --out_json_file="$file" \
	>"$out" || ! grep -q '^WRITE  *64 ' "$out" || ! python3 -c '
import json, sys
recs = json.load(open(sys.argv[1]))
assert len(recs) == 4, len(recs)
for r in recs:
    for k in ("version", "host", "device", "time", "args", "role"):
        assert isinstance(r[k], str) and r[k], k
    assert r["device"] == "soft_rxe" and r["role"] == "local"
' "$file"; then
	echo "FAIL: --out_json_file:" >&2
	sed 's/^/  | /' "$out" "$file" >&2
	fails=$((fails + 1))
fi
rm -f "$file"
if ! "$perf" --quiet --csv -n 50 -s 4K >"$out" || ! python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 3, rows
assert rows[0][:3] == ["mode", "op", "bytes"], rows[0]
assert all(len(r) == len(rows[0]) for r in rows), "ragged"
assert [r[1] for r in rows[1:]] == ["WRITE", "READ"]
' "$out"; then
	echo "FAIL: --csv:" >&2
	sed 's/^/  | /' "$out" >&2
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] || exit 1
echo "perf_json: every record valid, one per line"

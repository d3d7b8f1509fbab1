# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Checks rdmarw-perf's --json records (one record per line, flat, as
# tools/perf/out.c writes them) with POSIX awk only, so that the same check
# runs in the lab's guest (busybox awk, no python).
# Usage: awk -v what=MODE:OPS[:bidir] -f perf_check.awk FILE...
#   lat:OPS  a client and a server record per op; percentiles positive
#            and ordered
#   bw:OPS   a positive bandwidth per op and end; with :bidir a "both"
#            row per op on each end
#   secs:LO:HI  every record's secs in [LO, HI) (a local run: nothing else
#            checked)
# Prints what is wrong and exits 1; silent and 0 when all holds.

function fail(msg) {
	print "perf_check: " FILENAME ":" FNR ": " msg > "/dev/stderr"
	bad++
}

# parse(line): R[key] = value (strings unquoted), Q[key] = 1 for a string
function parse(line,    s, t, i, k, v) {
	split("", R)
	split("", Q)
	s = line
	while (match(s, /"[^"]*":("[^"]*"|[^,}]*)/)) {
		t = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		i = index(t, "\":")
		k = substr(t, 2, i - 2)
		v = substr(t, i + 2)
		Q[k] = (v ~ /^"/)
		if (Q[k])
			v = substr(v, 2, length(v) - 2)
		R[k] = v
	}
}

function num(k) {
	if (!(k in R) || R[k] == "null" || Q[k] || R[k] !~ /^-?[0-9.eE+-]+$/) {
		fail("field " k " is not a number: " (k in R ? R[k] : "absent"))
		return -1
	}
	return R[k] + 0
}

BEGIN {
	n = split(what, W, ":")
	mode = W[1]
	nops = split(W[2], OPS, ",")
	meta = "role version host device time args port profile ctxs qps " \
	       "duration bidirectional op bytes iters measured_by"
	nmeta = split(meta, META, " ")
	nlat = split("t_min t_typical percentile_99 percentile_99.9 t_max",
		     LAT, " ")
}

/^\{/ {
	parse($0)
	recs++
	if (mode == "secs") {
		v = num("secs")
		if (v < W[2] + 0 || v >= W[3] + 0)
			fail("secs " v " not in [" W[2] ", " W[3] ")")
		next
	}
	for (i = 1; i <= nmeta; i++)
		if (!(META[i] in R))
			fail("no field " META[i])
	split("version host device time args", STR, " ")
	for (i = 1; i <= 5; i++)
		if (!Q[STR[i]] || R[STR[i]] == "")
			fail(STR[i] " is not a non-empty string")
	if (R["role"] != "client" && R["role"] != "server")
		fail("role " R["role"])
	seen[R["role"] "," R["op"]] = 1
	if (R["mode"] != mode)
		fail("mode " R["mode"] ", wanted " mode)
	if (num("iters") <= 0)
		fail("iters " R["iters"])
	if (mode == "lat") {
		prev = 0
		for (i = 1; i <= nlat; i++) {
			v = num(LAT[i])
			if (v <= 0)
				fail(LAT[i] " not positive: " R[LAT[i]])
			if (v < prev)
				fail(LAT[i] " " v " below the previous " prev)
			prev = v
		}
		if (R["t_median"] != R["t_typical"])
			fail("t_median " R["t_median"] " != t_typical")
		if (num("t_avg") <= 0 || num("t_stdev") < 0)
			fail("t_avg/t_stdev " R["t_avg"] "/" R["t_stdev"])
		want = (R["op"] != "READ") ? "true" : "false"
		if (R["halved"] != want)
			fail("halved " R["halved"] " for " R["op"])
	} else if (mode == "bw") {
		avg = num("bw_avg_mib")
		if (avg <= 0 || num("bw_peak_mib") < avg * 0.99)
			fail("bw avg " avg " peak " R["bw_peak_mib"])
		if (num("mpps") <= 0)
			fail("mpps " R["mpps"])
		if (R["measured_by"] == "both")
			both++
	}
}

END {
	if (!recs)
		fail("no record")
	if (mode != "secs")
		for (i = 1; i <= nops; i++) {
			if (!(("client," OPS[i]) in seen))
				fail("no client record of " OPS[i])
			if (!(("server," OPS[i]) in seen))
				fail("no server record of " OPS[i])
		}
	if (W[3] == "bidir" && both != 2 * nops)
		fail(both + 0 " \"both\" rows, wanted " 2 * nops)
	exit bad ? 1 : 0
}

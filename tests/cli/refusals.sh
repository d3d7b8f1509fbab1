#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Every refusal of the tools is one line on stderr that names the option
# and says why, with exit status 2, and nothing on stdout; --version works
# on each tool.  Usage: refusals.sh TOOLS_DIR
set -u
dir=$1
fails=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# refuse TOOL 'EXPECTED TEXT' ARGS...
refuse() {
	tool=$1 want=$2
	shift 2
	# a refusal is immediate: a value let through must not run for long
	timeout 20 "$dir/$tool" "$@" >"$out" 2>"$err" </dev/null
	rc=$?
	lines=$(wc -l <"$err")
	if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ -s "$out" ] ||
	   ! grep -qF -- "$want" "$err"; then
		echo "FAIL: $tool $*: exit $rc, $lines lines:" >&2
		sed 's/^/  | /' "$err" >&2
		echo "  wanted one line with: $want" >&2
		fails=$((fails + 1))
	fi
}

refuse rdmarw-perf "-s/--size '0': must be at least 1" -s 0
refuse rdmarw-perf "-n/--iters '0': must be at least 1" -n 0
refuse rdmarw-perf "-n/--iters '-1': negative numbers are refused" -n -1
refuse rdmarw-perf "-D/--duration 'abc': not a number of seconds" -D abc
refuse rdmarw-perf "-D/--duration '-1': negative" -D -1
refuse rdmarw-perf "--dir 'mlx5_0': the direction is read, write, send or both" --dir mlx5_0
refuse rdmarw-perf "--dir 'write,': the direction is" --dir write,
refuse rdmarw-perf "--addr needs -d/--ib-dev" --addr 10.0.0.1
refuse rdmarw-perf "--profile 'foo': not a software profile" --profile foo
refuse rdmarw-perf "-s/--size '99G': larger than 1G" -s 99G
refuse rdmarw-perf "-s/--size '4X': not a number" --size 4X
refuse rdmarw-perf "--sge '0': must be at least 1" --sge 0
refuse rdmarw-perf "--sge '1025': must be at most 1024" --sge 1025
refuse rdmarw-perf "-D/--duration '3601': must be at most 3600 seconds" -D 3601
refuse rdmarw-perf "--pi '1000': the interval is 512 or 4096" --pi=1000
refuse rdmarw-perf "--pi '256': must be at least 512" --pi=256
refuse rdmarw-perf "-a/--sweep '2X:4': MIN '2X': not a number" --sweep=2X:4
refuse rdmarw-perf "-t/--ctxs '-3': negative" -t -3
refuse rdmarw-perf "-t/--ctxs '0': must be at least 1" --tx-depth 0
refuse rdmarw-perf "-a/--sweep '64K:2': MIN is above MAX" --sweep=64K:2
refuse rdmarw-perf "unrecognized option '--bogus'" --bogus
refuse rdmarw-perf "2097152 bytes do not split into 1 to 1024 entries" -s 2M --entry 1K
refuse rdmarw-perf "--threads '0': must be at least 1" --threads 0
refuse rdmarw-perf "--threads '65': must be at most 64" --threads 65
refuse rdmarw-perf "--threads '100000': must be at most 64" --threads 100000
refuse rdmarw-perf "--threads 'x': not a number" --threads x
refuse rdmarw-perf "--threads: not with --ctl" --threads 2 --ctl
refuse rdmarw-perf "--threads: not with --pi" --threads 2 --profile mlx5 --pi
refuse rdmarw-perf "--threads: not with -n/--iters" --threads 4 -n 100
refuse rdmarw-perf "--threads: needs the software device" --threads 2 -d rxe0 --addr 10.0.0.1
refuse rdmarw-perf "--threads: not with -q/--qp" --threads 2 -q 2
# perftest's letters mean perftest's options (rdmarw-perf(1), MIGRATION)
refuse rdmarw-perf "-q/--qp '0': must be at least 1" -q 0
refuse rdmarw-perf "-q/--qp '65': must be at most 64" -q 65
refuse rdmarw-perf "-q/--qp: one QP pair on an ibv device" -q 2 -d rxe0 --addr 10.0.0.1
refuse rdmarw-perf "-t/--ctxs 1024 times -q/--qp 8: more than 4096 in flight" -t 1024 -q 8
refuse rdmarw-perf "-c/--connection 'UD': the R/W API runs on RC QPs only" -c UD
refuse rdmarw-perf "-I/--inline_size '64': rdmarw has no inline data" -I 64
refuse rdmarw-perf "-i/--ib-port '2': rdmarw-perf's QPs are on port 1" -i 2
refuse rdmarw-perf "-p/--port '0': must be at least 1" -p 0
refuse rdmarw-perf "-p/--port '70000': must be at most 65535" -p 70000
refuse rdmarw-perf "invalid option -- 'e'" -e 4
refuse rdmarw-perf "invalid option -- 'A'" -A 10.0.0.1
# a stray word names the option it was meant for, or is the HOST
refuse rdmarw-perf "-a/--sweep '2:64K': give the value attached, as -a2:64K or --sweep=2:64K" -a 2:64K
refuse rdmarw-perf "--quiet takes no value: unexpected argument '4'" --quiet 4
refuse rdmarw-perf "unexpected argument '8192' after -s/--size, which takes one value" -s 4096 8192
refuse rdmarw-perf "unexpected argument '4096': a HOST is an address or a name, not a number" 4096
refuse rdmarw-perf "unexpected argument '10.0.0.3': one HOST only ('10.0.0.2')" 10.0.0.2 10.0.0.3
# what needs a client and a server, and what a client/server run refuses
refuse rdmarw-perf "--lat needs a client and a server" --lat -d rxe0 --addr 10.0.0.1
refuse rdmarw-perf "--dir send needs a client and a server" --dir send -d rxe0 --addr 10.0.0.1
refuse rdmarw-perf "--server: the client is given a HOST, not the server" --server 10.0.0.1
refuse rdmarw-perf "--addr (both ends in this process) and a HOST" -d rxe0 --addr 10.0.0.1 10.0.0.2
refuse rdmarw-perf "--ctl: not in a client/server run" --ctl --lat
refuse rdmarw-perf "--sge: not in a client/server run" --sge 4 --profile siw 10.0.0.2
refuse rdmarw-perf "-q/--qp: not in a client/server run" -q 2 --lat
refuse rdmarw-perf "--json and --csv: both on stdout" --json --csv
refuse rdmarw-perf "--server listens on ibv devices" --server --profile siw
refuse rdmarw-perf "-b/--bidirectional: not with --lat" -b --lat
refuse rdmarw-info "-d/--ib-dev 'mlx5_nope': no such device" -d mlx5_nope
refuse rdmarw-info "unexpected argument 'x'" x
refuse rdmarw-info "unrecognized option '--bogus'" --bogus
refuse rdmarw-chain "--sgl '0x': COUNT '': empty value" --sgl 0x write
refuse rdmarw-chain "--repeat '-1': negative numbers are refused" --repeat -1 write
refuse rdmarw-chain "give one direction: read or write" sideways
refuse rdmarw-chain "give one direction: read or write" read write
refuse rdmarw-chain "--json and --dot exclude each other" --json --dot read
refuse rdmarw-chain "-p/--profile 'nope': not a software profile (mlx5, rxe or siw)" -p nope read
refuse rdmarw-chain "--pool-free 2: the pool holds 0 MRs (raise --pool-size)" --pool-free 2 write
refuse rdmarw-chain "the buffer layout exceeds 4 GiB" --sgl 1Gx5 write
refuse rdmarw-chain "--misalign '4096': must be at most 4095" --misalign 4096 read
refuse rdmarw-chain "--chain '0': must be at least 1" --chain 0 write
refuse rdmarw-chain "--sgl '4096x70000': COUNT '70000': must be at most 65536" --sgl 4096x70000 write
refuse rdmarw-chain "--sgl '4096,': SIZE '': empty value" --sgl 4096, write
refuse rdmarw-chain "--sgl '4096x40000,512x40000': more than 65536 entries" --sgl 4096x40000,512x40000 write
refuse rdmarw-chain "--rkey '0x100000000': must be at most 4294967295" --rkey 0x100000000 write
refuse rdmarw-chain "unrecognized option '--bogus'" --bogus read
refuse rdmarw-chain "option '--rkey' requires an argument" write --rkey
refuse rdmarw-chain "option '--ch' is ambiguous" --ch write

for t in rdmarw-info rdmarw-perf rdmarw-chain; do
	v=$("$dir/$t" --version) || { echo "FAIL: $t --version" >&2; fails=$((fails + 1)); }
	case "$v" in
	"$t (rdmarw) "*) ;;
	*) echo "FAIL: $t --version: '$v'" >&2; fails=$((fails + 1)) ;;
	esac
done
[ "$fails" -eq 0 ] && echo "refusals: all one line, exit 2"
exit $((fails != 0))

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdmarw-nvmet's options and config file: every refusal is one line on
# stderr that names the option (or the file, line and key), exit status 2,
# nothing on stdout; a target that cannot start exits 1; a software-device
# run serves and stops with 0.  Usage: nvmet.sh PROGRAM
set -u
prog=$1
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err

fail() {
	echo "FAIL: $*" >&2
	sed 's/^/  | /' "$err" >&2
	fails=$((fails + 1))
}

# refuse 'EXPECTED TEXT' ARGS...
refuse() {
	want=$1
	shift
	"$prog" "$@" >"$out" 2>"$err" </dev/null
	rc=$?
	lines=$(wc -l <"$err")
	if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ -s "$out" ] ||
	   ! grep -qF -- "$want" "$err"; then
		fail "$*: exit $rc, $lines lines (wanted one with: $want)"
	fi
}

refuse "--port: bad value '0'" --soft rxe --port 0
refuse "--port: bad value '70000'" --soft rxe --port 70000
refuse "unknown option '--bogus'" --bogus
refuse "option '--addr' needs a value" --addr
refuse "--addr: bad value '10.0.0.300'" --addr 10.0.0.300
refuse "--ram: bad value '12x'" --soft rxe --ram 12x
refuse "--ram: bad value '100'" --soft rxe --ram 100
refuse "--block-size: bad value '1024'" --soft rxe --block-size 1024
refuse "--queue-size: bad value '129'" --soft rxe --queue-size 129
refuse "--queues: bad value '0'" --soft rxe --queues 0
refuse "--nqn: bad value 'disk1'" --soft rxe --nqn disk1
refuse "--serial: bad value '123456789012345678901'" --soft rxe \
	--serial 123456789012345678901
refuse "--inline: bad value '32K'" --soft rxe --inline 32K
refuse "--mdts: bad value '9'" --soft rxe --mdts 9
refuse "--soft: bad value 'mlx4'" --soft mlx4
refuse "--duration: bad value '-1'" --soft rxe --duration -1
refuse "--addr is required" --ram 1M
refuse "unexpected argument 'extra'" --soft rxe extra
refuse "--file-size must come before its --file" --soft rxe --file-size 1M
refuse "--config $tmp/none: No such file or directory" --config "$tmp/none"
refuse "--host: bad value ''" --soft rxe --host ''
refuse "--port: given twice" --soft rxe --port 4421 --port 4422
refuse "--nqn: given twice" --soft rxe --nqn nqn.2026-01.a:b \
	--nqn nqn.2026-01.a:c
refuse "--nqn: 'nqn.2014-08.org.nvmexpress.discovery' is the discovery subsystem's NQN" \
	--soft rxe --nqn nqn.2014-08.org.nvmexpress.discovery
refuse "--serial: bad value 'SN$(printf '\t')1'" --soft rxe \
	--serial "SN$(printf '\t')1"
printf 'port = 4421\n' >"$tmp/c6"
refuse "$tmp/c6:1: port: given twice" --port 4422 --config "$tmp/c6"
refuse "--host: 'nqn.2026-01.a:b' given twice" --soft rxe \
	--host nqn.2026-01.a:b --host nqn.2026-01.a:b
refuse "--host and --allow-any-host exclude each other" --soft rxe \
	--host nqn.2026-01.a:b --allow-any-host

printf 'addr = 10.1.1.1\n# a comment\n\nbogus = 1\n' >"$tmp/c1"
refuse "$tmp/c1:4: bogus: unknown key" --config "$tmp/c1"
printf 'port\n' >"$tmp/c2"
refuse "$tmp/c2:1: port: needs a value (key = value)" --config "$tmp/c2"
printf 'verbose = yes\n' >"$tmp/c3"
refuse "$tmp/c3:1: verbose: takes no value" --config "$tmp/c3"
printf 'port = 4421\nqueue-size = 1\n' >"$tmp/c4"
refuse "$tmp/c4:2: queue-size: bad value '1'" --config "$tmp/c4"
printf 'config = %s\n' "$tmp/c4" >"$tmp/c5"
refuse "$tmp/c5:1: config: config files do not nest" --config "$tmp/c5"

# no device answers to the address: cannot start, exit 1
"$prog" --addr 10.9.9.9 --ram 1M >"$out" 2>"$err" </dev/null
rc=$?
[ "$rc" -eq 1 ] && grep -qF "cannot start on 10.9.9.9 port 4420" "$err" ||
	fail "no device: exit $rc"

# a software device: serves, stops after --duration, exit 0
printf 'soft = siw\naddr = 10.2.2.2 # its address\nport = 4421\nram = 2M\n' \
	>"$tmp/ok"
printf 'file-size = 1M\nfile = %s\nblock-size = 4096\nstats\n' \
	"$tmp/ns.img" >>"$tmp/ok"
"$prog" --config "$tmp/ok" --duration 0.2 >"$out" 2>"$err" </dev/null
rc=$?
if [ "$rc" -ne 0 ] ||
   ! grep -qF "on 10.2.2.2 port 4421 (software device soft_siw_0), 2 namespaces" "$out" ||
   ! grep -qF "0 controllers, 0 queues" "$out" ||
   ! grep -qF "stopped" "$out" || [ "$(stat -c %s "$tmp/ns.img")" -ne 1048576 ]; then
	fail "config run: exit $rc"
	sed 's/^/  > /' "$out" >&2
fi
# nvmetcli's JSON as the config file: a port on an address no device has
# cannot start (exit 1); beside quick-start options it is refused (exit 2)
printf '{ "ports": [ { "addr": { "trtype": "rdma", "traddr": "10.9.9.9",\n' \
	>"$tmp/j.json"
printf '  "trsvcid": "4420" }, "subsystems": [ "nqn.2026-01.a:j" ] } ],\n' \
	>>"$tmp/j.json"
printf '  "subsystems": [ { "nqn": "nqn.2026-01.a:j", "attr":\n' >>"$tmp/j.json"
printf '  { "allow_any_host": "1" }, "namespaces": [ { "nsid": 1,\n' \
	>>"$tmp/j.json"
printf '  "device": { "path": "%s" } } ] } ] }\n' "$tmp/j.img" >>"$tmp/j.json"
head -c 1048576 /dev/zero >"$tmp/j.img"
refuse "a JSON configuration takes no --ram, --file, --bdev, --addr, --host, --allow-any-host or --soft" \
	--soft rxe --config "$tmp/j.json"
"$prog" --config "$tmp/j.json" >"$out" 2>"$err" </dev/null
rc=$?
[ "$rc" -eq 1 ] && grep -qF "cannot start: Cannot assign requested address" \
	"$err" || fail "JSON config on 10.9.9.9: exit $rc"

# --save-config: the quick start as nvmetcli's JSON, read back the same way
"$prog" --addr 10.9.9.9 --file "$tmp/j.img" --nqn nqn.2026-01.a:s \
	--host nqn.2026-01.h:1 --save-config "$tmp/s.json" >"$out" 2>"$err" \
	</dev/null || fail "--save-config: exit $?"
grep -qF '"nqn": "nqn.2026-01.a:s"' "$tmp/s.json" &&
	grep -qF '"trsvcid": "4420"' "$tmp/s.json" ||
	fail "--save-config: content"
"$prog" --config "$tmp/s.json" --save-config "$tmp/s2.json" >"$out" \
	2>"$err" </dev/null && cmp -s "$tmp/s.json" "$tmp/s2.json" ||
	fail "--save-config of a JSON config: not the same"
refuse "nqn.2026-01.io.rdmarw:nvmet: namespace 1 is in memory: nvmetcli has no such device" \
	--addr 10.9.9.9 --save-config "$tmp/s3.json"

# a namespace of less than one block: cannot start, names it
head -c 100 /dev/zero >"$tmp/tiny.img"
"$prog" --soft rxe --file "$tmp/tiny.img" --duration 0.1 >"$out" 2>"$err" \
	</dev/null
rc=$?
[ "$rc" -eq 1 ] && grep -qF "namespace 1 ($tmp/tiny.img): less than one block" \
	"$err" || fail "tiny namespace: exit $rc"
# ... and only the namespace: a backend's failure does not name the port
! grep -q "port 4420" "$err" || fail "tiny namespace: the port is blamed"

# the start-up line says which hosts may connect
"$prog" --soft rxe --ram 1M --duration 0.1 >"$out" 2>"$err" </dev/null
grep -qF "1 namespace, no host allowed (--host, --allow-any-host)" "$out" ||
	fail "no host: start-up line"
"$prog" --soft rxe --ram 1M --duration 0.1 --allow-any-host >"$out" \
	2>"$err" </dev/null
grep -qF "1 namespace, any host may connect" "$out" ||
	fail "--allow-any-host: start-up line"
"$prog" --soft rxe --ram 1M --duration 0.1 --host nqn.2026-01.a:b \
	--host nqn.2026-01.a:c >"$out" 2>"$err" </dev/null
grep -qF "1 namespace, 2 allowed hosts" "$out" || fail "--host: start-up line"
# ... and which must authenticate (DH-HMAC-CHAP)
grep -qF "no host authenticates (--dhchap-key)" "$out" ||
	fail "no key: start-up line"
key="DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"
"$prog" --soft rxe --ram 1M --duration 0.1 --allow-any-host \
	--dhchap-key "nqn.2026-01.a:b=$key" --dhchap-key "nqn.2026-01.a:c=$key" \
	--dhchap-ctrl-key "nqn.2026-01.a:c=$key" >"$out" 2>"$err" </dev/null
grep -qF "DH-HMAC-CHAP required of 2 hosts: nqn.2026-01.a:b nqn.2026-01.a:c (bidirectional)" \
	"$out" || fail "--dhchap-key: start-up line"
refuse "--dhchap-key: bad value (NQN=VALUE)" --soft rxe \
	--dhchap-key "nqn.2026-01.a:b=DHHC-1:00:AAAA:"
refuse "nqn.2026-01.a:b: --dhchap-key missing" --soft rxe \
	--dhchap-hash "nqn.2026-01.a:b=hmac(sha512)"
# an NQN that holds '=' (any printable byte may be in one), a key whose
# base64 ends with '=' padding: split at the '=' before "DHHC-1:"
key48="DHHC-1:02:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vcSEgBQ==:"
"$prog" --soft rxe --ram 1M --duration 0.1 --allow-any-host \
	--dhchap-key "nqn.2026-01.a:x=y=$key48" \
	--dhchap-hash "nqn.2026-01.a:x=y=hmac(sha384)" >"$out" 2>"$err" </dev/null
grep -qF "DH-HMAC-CHAP required of 1 host: nqn.2026-01.a:x=y" "$out" ||
	fail "--dhchap-key with '=' in the NQN: exit $?"

# files it creates for namespaces: 0600 whatever the umask allows, other
# modes only when asked (--ns-mode); an existing file keeps its mode
(
	umask 022
	"$prog" --soft rxe --file-size 1M --file "$tmp/m1.img" --duration 0.1 \
		>"$out" 2>"$err" </dev/null || fail "--file created: exit $?"
	"$prog" --soft rxe --ns-mode 0644 --file-size 1M --file "$tmp/m2.img" \
		--duration 0.1 >"$out" 2>"$err" </dev/null ||
		fail "--ns-mode 0644: exit $?"
	[ "$(stat -c %a "$tmp/m1.img")" = 600 ] ||
		fail "created namespace file: mode $(stat -c %a "$tmp/m1.img")"
	[ "$(stat -c %a "$tmp/m2.img")" = 644 ] ||
		fail "--ns-mode 0644: mode $(stat -c %a "$tmp/m2.img")"
	exit "$fails"
) || fails=$((fails + 1))
refuse "--ns-mode: bad value '0755'" --soft rxe --ns-mode 0755
refuse "--ns-mode: bad value '0400'" --soft rxe --ns-mode 0400
refuse "--ns-mode: bad value '644'" --soft rxe --ns-mode 644
refuse "--ns-mode: given twice" --soft rxe --ns-mode 0600 --ns-mode 0640

# --save-config writes the derived identifiers, and the same ones again
grep -q '"uuid": "[0-9a-f-]\{36\}"' "$tmp/s.json" &&
	grep -q '"nguid": "[0-9a-f-]\{36\}"' "$tmp/s.json" &&
	grep -q '"serial": "[0-9a-f]\{20\}"' "$tmp/s.json" ||
	fail "--save-config: no uuid, nguid or serial"
if grep -qx '[0-9a-f]\{32\}' /etc/machine-id 2>/dev/null; then
	"$prog" --addr 10.9.9.9 --file "$tmp/j.img" --nqn nqn.2026-01.a:s \
		--host nqn.2026-01.h:1 --save-config "$tmp/s4.json" >"$out" \
		2>"$err" </dev/null && cmp -s "$tmp/s.json" "$tmp/s4.json" ||
		fail "--save-config twice: not the same identifiers"
fi

# journald: standard error that is the journal's stream ($JOURNAL_STREAM
# names its device and inode) gets "<N>" level prefixes; another does not
: >"$tmp/jerr"
JOURNAL_STREAM=$(stat -c %d:%i "$tmp/jerr") "$prog" --addr 10.9.9.9 \
	--ram 1M >"$out" 2>>"$tmp/jerr" </dev/null
grep -qx "<3>rdmarw-nvmet: cannot start on 10.9.9.9 port 4420: .*" \
	"$tmp/jerr" && ! grep -qv "^<[3-7]>" "$tmp/jerr" ||
	{ cp "$tmp/jerr" "$err"; fail "JOURNAL_STREAM: no <3> prefix"; }
JOURNAL_STREAM=1:2 "$prog" --addr 10.9.9.9 --ram 1M >"$out" 2>"$err" \
	</dev/null
grep -qx "rdmarw-nvmet: cannot start on 10.9.9.9 port 4420: .*" "$err" ||
	fail "JOURNAL_STREAM of another stream: not plain"
# --log-level: info shows the connection log (as -v), notice does not
"$prog" --soft rxe --ram 1M --duration 0.1 --log-level info >"$out" \
	2>"$err" </dev/null
grep -qF "nvmet: listening on 127.0.0.1:4420" "$err" ||
	fail "--log-level info: no connection log"
"$prog" --soft rxe --ram 1M --duration 0.1 >"$out" 2>"$err" </dev/null
! grep -qF "nvmet: listening" "$err" || fail "default level: connection log"
refuse "--log-level: bad value 'loud'" --soft rxe --log-level loud
refuse "--log-level: given twice" --soft rxe --log-level 3 --log-level 4
# --addr 0.0.0.0 where there is no RDMA device: an error, not silence
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	"$prog" --addr 0.0.0.0 --ram 1M --duration 0.1 >"$out" 2>"$err" \
		</dev/null
	rc=$?
	[ "$rc" -eq 1 ] && grep -qF "cannot start: 0.0.0.0 listens on every RDMA device and there is none" \
		"$err" || fail "--addr 0.0.0.0 without a device: exit $rc"
fi

"$prog" --version >"$out" 2>"$err" </dev/null || fail "--version"
grep -q "^rdmarw-nvmet [0-9]" "$out" || fail "--version output"

[ "$fails" -eq 0 ] && echo "rdmarw-nvmet: refusals and runs as documented"
exit $((fails != 0))

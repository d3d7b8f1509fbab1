#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdmarw-nvmet's systemd unit as built (packaging/systemd): Type=notify,
# started from /etc/rdmarw/nvmet.json, reloaded with SIGHUP, memlock
# unlimited, hardened; systemd-analyze verify finds nothing to say about it
# (with ExecStart pointed at the built program; skipped, exit 77, when
# systemd-analyze is not installed); the example configuration installed
# beside it is one the program reads.
# Usage: nvmet-systemd.sh UNIT PROGRAM EXAMPLE_JSON
set -u
unit=$1 prog=$2 example=$3
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

want() {
	grep -qx -- "$1" "$unit" || { echo "FAIL: $unit lacks: $1" >&2; fails=$((fails + 1)); }
}
want 'Type=notify'
want 'ExecStart=/.*/rdmarw-nvmet --config /etc/rdmarw/nvmet.json'
want 'ExecReload=/bin/kill -HUP $MAINPID'
want 'LimitMEMLOCK=infinity'
want 'RestartPreventExitStatus=2'
want 'NoNewPrivileges=yes'
want 'ProtectSystem=strict'
want 'ProtectHome=yes'
want 'PrivateTmp=yes'
want 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK'
want 'DeviceAllow=char-infiniband_verbs rw'
want 'WantedBy=multi-user.target'
! grep -q '@[A-Z_]*@' "$unit" || { echo "FAIL: unsubstituted @VAR@" >&2; fails=$((fails + 1)); }

"$prog" --config "$example" --save-config "$tmp/saved.json" >"$tmp/out" 2>&1 ||
	{ echo "FAIL: $example: not read" >&2; sed 's/^/  | /' "$tmp/out" >&2; fails=$((fails + 1)); }

if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|^ExecStart=[^ ]*|ExecStart=$prog|" "$unit" >"$tmp/rdmarw-nvmet.service"
	systemd-analyze verify --man=no "$tmp/rdmarw-nvmet.service" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$tmp/out" ]; then
		echo "FAIL: systemd-analyze verify: exit $rc" >&2
		sed 's/^/  | /' "$tmp/out" >&2
		fails=$((fails + 1))
	fi
	verified=", systemd-analyze verify clean"
else
	echo "systemd-analyze not installed: verify skipped"
	[ "$fails" -eq 0 ] && exit 77
fi
[ "$fails" -eq 0 ] && echo "rdmarw-nvmet.service: as documented$verified"
exit $((fails != 0))

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Each package of make deb holds what it must (dpkg -c), and the library's
# files are in no other package.  Usage: check-debs.sh DIR_WITH_DEBS
set -u
d=$1
fails=0
has() { # has PACKAGE PATTERN...
	pkg=$1
	shift
	deb=$(ls "$d"/"$pkg"_*.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || { echo "FAIL: no $pkg package" >&2; fails=$((fails + 1)); return; }
	list=$(dpkg -c "$deb" | awk '{print $6}')
	for p in "$@"; do
		echo "$list" | grep -q -- "$p" ||
			{ echo "FAIL: $pkg lacks $p" >&2; fails=$((fails + 1)); }
	done
}
has librdmarw0 'librdmarw\.so\.0$' 'librdmarw\.so\.0\.'
has librdmarw-dev 'include/rdmarw/rw\.h$' 'include/rdmarw/version\.h$' \
	'librdmarw\.so$' 'librdmarw\.a$' 'pkgconfig/rdmarw\.pc$' \
	'cmake/rdmarw/rdmarwConfig\.cmake$' \
	'cmake/rdmarw/rdmarwConfigVersion\.cmake$' \
	'man3/rdma_rw_ctx_init\.3rdmarw\.gz$' 'man7/rdmarw\.7\.gz$'
has rdmarw-tools 'bin/rdmarw-info$' 'bin/rdmarw-perf$' 'bin/rdmarw-chain$' \
	'bin/rdmarw-nvmet$' \
	'man1/rdmarw-info\.1\.gz$' 'man1/rdmarw-perf\.1\.gz$' \
	'man1/rdmarw-chain\.1\.gz$' 'man8/rdmarw-nvmet\.8\.gz$' \
	'systemd/system/rdmarw-nvmet\.service$' \
	'share/rdmarw/examples/nvmet\.json$'
for p in librdmarw0 librdmarw-dev rdmarw-tools; do
	has $p "doc/$p/README\.md" "doc/$p/changelog\.gz\$"
done
[ "$fails" -eq 0 ] && echo "make deb: librdmarw0, librdmarw-dev, rdmarw-tools hold their files"
exit $((fails != 0))

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The shared library's ABI is the public headers' API, and nothing else:
# every symbol librdmarw.so exports is a function (or variable) declared in
# include/rdmarw/*.h, every declared one is exported, each in the
# version node RDMARW_1.0 (src/rdmarw.map), and the map lists exactly the
# declared functions.  The declarations come from the compiler (-aux-info),
# not from a parse of the headers.
# Usage: abi_check.sh CC INCLUDE_DIR LIBRARY MAP HAVE_IBV(0|1) [GEN_INCLUDE_DIR]
# (GEN_INCLUDE_DIR: the headers generated at configure, <rdmarw/version.h>)
set -eu
cc=$1 inc=$2 lib=$3 map=$4 have_ibv=$5 gen=${6:-$2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for h in "$inc"/rdmarw/*.h "$gen"/rdmarw/*.h; do
	n=${h##*/}
	[ "$n" = ibv.h ] && [ "$have_ibv" != 1 ] && continue
	echo "#include <rdmarw/$n>"
done >"$tmp/all.c"
"$cc" -std=gnu11 -I"$inc" -I"$gen" -fsyntax-only -aux-info "$tmp/all.aux" "$tmp/all.c"
# "/* .../include/rdmarw/rw.h:184:NC */ extern int rdma_rw_ctx_init (...);"
grep "/include/rdmarw/" "$tmp/all.aux" | sort -u | grep -v '\*/ static ' |
	sed -E 's/^.*\*\/ extern [^(]*[ *]([A-Za-z_][A-Za-z0-9_]*) \(.*/\1/' |
	sort -u >"$tmp/declared"
# Variables ("extern struct net init_net;"), which -aux-info does not list.
sed -n 's/^extern [^()]*[ *]\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' \
	"$inc"/rdmarw/*.h >>"$tmp/declared"
sort -u -o "$tmp/declared" "$tmp/declared"
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sort -u \
	>"$tmp/exported_v"
sed 's/@.*//' "$tmp/exported_v" | sort -u >"$tmp/exported"
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map" |
	sort -u >"$tmp/mapped"
if [ "$have_ibv" != 1 ]; then
	grep -v '^rdmarw_ibv_' "$tmp/mapped" >"$tmp/m" || :
	mv "$tmp/m" "$tmp/mapped"
fi

fail=0
report() { # title file
	if [ -s "$2" ]; then
		echo "FAIL: $1:"
		sed 's/^/  /' "$2"
		fail=1
	fi
}
comm -13 "$tmp/declared" "$tmp/exported" >"$tmp/x"
report "exported but not declared in a public header" "$tmp/x"
comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/x"
report "declared in a public header but not exported" "$tmp/x"
grep -v '@@*RDMARW_1\.0$' "$tmp/exported_v" >"$tmp/x" || :
report "exported without the version node RDMARW_1.0" "$tmp/x"
comm -3 "$tmp/declared" "$tmp/mapped" >"$tmp/x"
report "src/rdmarw.map differs from the declarations (<: declared only, >: map only)" "$tmp/x"
[ $fail = 0 ] || exit 1
echo "ABI ok: $(wc -l <"$tmp/declared") functions and variables, all in RDMARW_1.0"

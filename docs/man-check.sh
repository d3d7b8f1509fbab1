#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The hand-written man pages render without a warning (groff -ww), and every
# page their SEE ALSO names is one of ours (docs/man1, docs/man7, the
# generated section 3) or one rdma-core, perftest or man-pages install.
# Usage: man-check.sh SOURCE_DOCS_DIR GENERATED_MAN3_DIR
set -u
src=$1 man3=$2
external="ibv_devinfo.1 ib_write_bw.1 rdma_cm.7"
fails=0
for page in "$src"/man1/*.1 "$src"/man7/*.7; do
	warn=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
	if [ -n "$warn" ]; then
		echo "FAIL: $page: $warn" >&2
		fails=$((fails + 1))
	fi
	refs=$(sed -n '/^\.SH SEE ALSO/,/^\.SH/p' "$page" |
		sed -n 's/^\.BR \([^ ]*\) (\([0-9]\)).*/\1.\2/p')
	[ -n "$refs" ] || { echo "FAIL: $page: no SEE ALSO" >&2; fails=$((fails + 1)); }
	for r in $refs; do
		sec=${r##*.}
		case " $external " in *" $r "*) continue ;; esac
		if [ ! -f "$src/man$sec/$r" ] && [ ! -f "$man3/$r" ]; then
			echo "FAIL: $page: SEE ALSO $r leads nowhere" >&2
			fails=$((fails + 1))
		fi
	done
done
[ "$fails" -eq 0 ] && echo "man pages: render clean, SEE ALSO resolves"
exit $((fails != 0))

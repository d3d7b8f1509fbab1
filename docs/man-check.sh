#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The hand-written man pages render without a warning (groff -ww), and every
# page their SEE ALSO names is one of ours (docs/man1, docs/man7, the
# generated section 3rdmarw) or one rdma-core, perftest, nvme-cli,
# nvmetcli, systemd or man-pages install.
# Each tool's page and rdmarw(7) have an ENVIRONMENT section naming
# RDMARW_LOG_LEVEL; rdmarw(7) names every tool and every RDMARW_ variable
# the library, the tools and rdmarw-nvmet read.  The generated pages are
# all in section 3rdmarw (file name and .TH) and none is of an internal
# rdmarw__ name.
# Usage: man-check.sh SOURCE_DOCS_DIR GENERATED_MAN3_DIR
set -u
src=$1 man3=$2
top=$src/..
sec3=3rdmarw
external="ibv_devinfo.1 ib_write_bw.1 rdma_cm.7 nvme.1 nvmetcli.8"
external="$external systemd.service.5 sd_notify.3"
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

for page in "$src"/man1/*.1 "$src"/man7/*.7 "$src"/man8/*.8; do
	warn=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
	[ -z "$warn" ] || fail "$page: $warn"
	refs=$(sed -n '/^\.SH SEE ALSO/,/^\.SH/p' "$page" |
		sed -n 's/^\.BR \([^ ]*\) (\([0-9][a-z]*\)).*/\1.\2/p')
	[ -n "$refs" ] || fail "$page: no SEE ALSO"
	for r in $refs; do
		sec=${r##*.}
		case " $external " in *" $r "*) continue ;; esac
		[ -f "$src/man${sec%%[a-z]*}/$r" ] || [ -f "$man3/$r" ] ||
			fail "$page: SEE ALSO $r leads nowhere"
	done
	# a plain (3) for a page of ours would show another package's page
	for name in $(sed -n 's/.*\.B[RI]* \([a-z_A-Z0-9]*\) (3)[,.)]*$/\1/p' "$page"); do
		[ ! -f "$man3/$name.$sec3" ] ||
			fail "$page: $name (3): ours is $name ($sec3)"
	done
	sed -n '/^\.SH ENVIRONMENT/,/^\.SH/p' "$page" | grep -q RDMARW_LOG_LEVEL ||
		fail "$page: no ENVIRONMENT section naming RDMARW_LOG_LEVEL"
done

# rdmarw(7) names every tool and every variable the shipped code reads.
overview=$src/man7/rdmarw.7
for page in "$src"/man1/*.1 "$src"/man8/*.8; do
	sec=${page##*.}
	tool=$(basename "$page" ".$sec")
	grep -q "^\.BR $tool ($sec)" "$overview" ||
		fail "rdmarw.7 does not name $tool ($sec)"
	sed -n 2p "$page" | grep -q "^\.TH [^ ]* $sec " ||
		fail "$page: .TH is not in section $sec"
done
# rdmarw-nvmet(8): the sections an operator looks for
for sh in NAME SYNOPSIS DESCRIPTION OPTIONS CONFIGURATION SIGNALS FILES \
	ENVIRONMENT "EXIT STATUS" SECURITY "SEE ALSO"; do
	grep -q "^\.SH $sh\$" "$src/man8/rdmarw-nvmet.8" ||
		fail "rdmarw-nvmet.8: no $sh section"
done
vars=$(grep -rhoE 'getenv\("RDMARW_[A-Z_]+"\)' "$top/src" "$top/tools" \
	"$top/nvme" 2>/dev/null | sed 's/.*("\(.*\)")/\1/' | sort -u)
[ -n "$vars" ] || fail "no getenv() found under $top"
for v in $vars; do
	sed -n '/^\.SH ENVIRONMENT/,/^\.SH/p' "$overview" | grep -q "^\.B $v\$" ||
		fail "rdmarw.7's ENVIRONMENT does not name $v"
done

# The generated pages: section 3rdmarw, no internal names.
n=0
for page in "$man3"/*; do
	[ -e "$page" ] || continue
	n=$((n + 1))
	case $page in
	*.$sec3) ;;
	*) fail "$page: not a .$sec3 page" ;;
	esac
	case $(basename "$page") in rdmarw__*) fail "$page: an internal name" ;; esac
	sed -n 2p "$page" | grep -q "^\.TH \"[^\"]*\" $sec3 " ||
		fail "$page: .TH is not in section $sec3"
done
[ "$n" -gt 0 ] || fail "no generated pages in $man3"
[ "$fails" -eq 0 ] &&
	echo "man pages: render clean, SEE ALSO resolves, ENVIRONMENT and tools named, $n pages in $sec3"
exit $((fails != 0))

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Debian packages as a user meets them (`make check-packages`):
#  1. build them (`make deb`, every core);
#  2. install librdmarw0, librdmarw-dev and rdmarw-tools into a scratch
#     root whose dpkg database holds librdmacm-dev, libibverbs-dev and
#     manpages-dev (their status and file lists, copied from this system):
#     dpkg refuses any file another package owns, as apt install would;
#     and a copy of librdmarw-dev with one page put back in section 3 must
#     be refused there, so the check is seen to fail on a clash;
#  3. man: `man rdma_create_id` (and every name those packages document
#     too) still finds their page with ours first in MANPATH, as after
#     `make install` to /usr/local; `man 3rdmarw NAME` finds ours;
#  4. lintian --pedantic: no error and no warning (overrides carry their
#     reason);
#  5. what the packages hold: check-debs.sh, the tools' description names
#     every program, the tools link librdmarw.so.0 and depend on
#     librdmarw0, pkg-config --static names every library librdmarw.so.0
#     needs;
#  6. README.md's example compiled against the installed files with gcc and
#     clang as C11 and with g++ and clang++ as C++17 (-pedantic -Werror),
#     linked with the shared library and, as rdmarw(7) documents, with
#     librdmarw.a and shared dependencies; every program runs.
# Usage: scripts/check-packages.sh [--no-build]   (--no-build: use the
# packages already in build-deb/)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
debdir=$top/build-deb
beside="librdmacm-dev libibverbs-dev manpages-dev"
t0=$(date +%s)

step() { echo "check-packages: $*"; }
fail() {
	echo "check-packages: FAIL: $*" >&2
	exit 1
}

if [ "${1:-}" != --no-build ]; then
	make -C "$top" --no-print-directory deb
fi
"$top/scripts/deps.sh" deb
for p in $beside; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		fail "$p is not installed here (scripts/deps.sh deb installs it)"
done
deb_of() { # the package's .deb (not its -dbgsym)
	ls "$debdir/$1"_*.deb 2>/dev/null | head -1
}
debs=""
for p in librdmarw0 librdmarw-dev rdmarw-tools; do
	f=$(deb_of $p)
	[ -n "$f" ] || fail "no $p package in $debdir"
	debs="$debs $f"
done
work=$debdir/check
rm -rf "$work"
mkdir -p "$work"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# A scratch root with a dpkg database that knows the neighbours' files
# (dpkg checks ownership in its database, not on the disk).
new_root() { # DIR
	admin=$1/var/lib/dpkg
	mkdir -p "$admin/info" "$admin/updates" "$admin/triggers"
	: >"$admin/available"
	: >"$admin/status"
	for p in $beside; do
		dpkg-query -s "$p" >>"$admin/status"
		echo >>"$admin/status"
		for l in /var/lib/dpkg/info/"$p".list /var/lib/dpkg/info/"$p":*.list; do
			if [ -f "$l" ]; then cp "$l" "$admin/info/"; fi
		done
	done
}
unpack() { # ROOT LOG DEB...
	r=$1 log=$2
	shift 2
	dpkg --root="$r" --force-not-root --force-depends --no-triggers \
		--unpack "$@" >"$log" 2>&1
}

# 2. install beside the neighbours
root=$work/root
new_root "$root"
# shellcheck disable=SC2086
unpack "$root" "$work/unpack.log" $debs ||
	{ cat "$work/unpack.log" >&2; fail "the packages do not install beside $beside"; }
n=$(cat "$root"/var/lib/dpkg/info/*.list | sort -u | wc -l)
step "installed beside $beside in a scratch root (its database: $n paths)"

# ... and the same check refuses a clash: librdmarw-dev with one page in
# section 3 again.
clash=$work/clash
mkdir -p "$clash"
dpkg-deb -R "$(deb_of librdmarw-dev)" "$clash/pkg"
m3=$clash/pkg/usr/share/man/man3
mv "$m3/rdma_create_id.3rdmarw.gz" "$m3/rdma_create_id.3.gz"
sed -i '/rdma_create_id\.3rdmarw\.gz/d' "$clash/pkg/DEBIAN/md5sums"
dpkg-deb -b "$clash/pkg" "$clash/librdmarw-dev-clash.deb" >/dev/null
new_root "$clash/root"
if unpack "$clash/root" "$clash/unpack.log" "$(deb_of librdmarw0)" \
	"$clash/librdmarw-dev-clash.deb"; then
	fail "a librdmarw-dev with rdma_create_id.3.gz installed beside librdmacm-dev: the check is blind"
fi
grep -q "trying to overwrite '/usr/share/man/man3/rdma_create_id.3.gz', which is also in package librdmacm-dev" \
	"$clash/unpack.log" || { cat "$clash/unpack.log" >&2; fail "the clash was refused for another reason"; }
step "a re-introduced clash (rdma_create_id.3.gz) is refused: $(grep -o "trying to overwrite.*" "$clash/unpack.log" | head -1)"

# 3. man: ours never shadows theirs, even first in MANPATH
man3=$root/usr/share/man/man3
mp="$root/usr/share/man:/usr/share/man"
shared=0
for page in "$man3"/*.3rdmarw.gz; do
	name=$(basename "$page" .3rdmarw.gz)
	theirs=$(ls /usr/share/man/man3/"$name".3*.gz 2>/dev/null | head -1)
	[ -n "$theirs" ] || continue
	shared=$((shared + 1))
	want=$(MANPATH=/usr/share/man man -w "$name")
	got=$(MANPATH=$mp man -w "$name")
	[ "$got" = "$want" ] || fail "man $name gives $got, not $want ($theirs)"
	got=$(MANPATH=$mp man -w 3rdmarw "$name")
	[ "$got" = "$page" ] || fail "man 3rdmarw $name gives $got"
done
[ "$shared" -gt 0 ] || fail "no name of ours is documented by $beside: is manpages-dev there?"
for page in "$man3"/*; do
	case $(basename "$page") in
	rdmarw__*) fail "$page: a page of an internal name" ;;
	*.3rdmarw.gz) ;;
	*) fail "$page: a section-3 page outside 3rdmarw" ;;
	esac
done
step "man: $shared names that $beside also document show their page; 'man 3rdmarw NAME' shows ours"

# 4. lintian
changes=$(ls "$debdir"/rdmarw_*.changes | head -1)
lintian --pedantic -I --tag-display-limit 0 "$changes" >"$work/lintian.log" 2>&1 || :
grep -v '^running with root privileges' "$work/lintian.log" || :
errors=$(grep -c '^E: ' "$work/lintian.log" || :)
warnings=$(grep -c '^W: ' "$work/lintian.log" || :)
others=$(grep -cE '^[IPX]: ' "$work/lintian.log" || :)
[ "$errors" -eq 0 ] && [ "$warnings" -eq 0 ] ||
	fail "lintian --pedantic: $errors errors, $warnings warnings"
step "lintian --pedantic: 0 errors, 0 warnings, $others info/pedantic tags"

# 5. what the packages hold
sh "$top/debian/check-debs.sh" "$debdir"
desc=$(dpkg-deb -f "$(deb_of rdmarw-tools)" Description)
linked=""
for prog in "$root"/usr/bin/*; do
	p=$(basename "$prog")
	echo "$desc" | grep -qw -- "$p" || fail "rdmarw-tools' description does not name $p"
	if readelf -d "$prog" | grep -q 'NEEDED.*librdmarw\.so\.0'; then
		linked="$linked $p"
	fi
	LD_LIBRARY_PATH=$root/usr/lib/$multiarch "$prog" --version >/dev/null ||
		fail "$p --version"
done
for p in rdmarw-info rdmarw-chain; do
	case "$linked " in *" $p "*) ;; *) fail "$p does not link librdmarw.so.0" ;; esac
done
dpkg-deb -f "$(deb_of rdmarw-tools)" Depends | grep -q 'librdmarw0' ||
	fail "rdmarw-tools does not depend on librdmarw0"
step "rdmarw-tools: its description names$(ls "$root/usr/bin" | tr '\n' ' ' | sed 's/^/ /;s/ $//'); linked with librdmarw.so.0:$linked"

export PKG_CONFIG_SYSROOT_DIR="$root"
export PKG_CONFIG_LIBDIR="$root/usr/lib/$multiarch/pkgconfig:/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig"
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
pcstatic=$(pkg-config --static --libs rdmarw)
for lib in $(readelf -d "$root/usr/lib/$multiarch/librdmarw.so.0" |
	sed -n 's/.*NEEDED.*\[lib\([^.]*\)\.so.*/\1/p'); do
	case "$lib" in c | pthread | m | dl | rt) continue ;; esac
	echo " $pcstatic " | grep -q -- " -l$lib " ||
		fail "pkg-config --static --libs rdmarw lacks -l$lib, which librdmarw.so.0 needs"
done
step "pkg-config --static --libs rdmarw names every library librdmarw.so.0 needs"

# 6. README.md's example against the installed files
ex=$work/readme
mkdir -p "$ex"
awk '/^## What a ULP writes/ { sect = 1 }
	sect && /^```c$/ { code = 1; next }
	code && /^```$/ { exit }
	code && /^#include/ { next }
	code && /^\.\.\.$/ { print "README_WAIT();"; next }
	code { print }' "$top/README.md" >"$ex/readme_body.inc"
[ -s "$ex/readme_body.inc" ] || fail "no C block under README.md's 'What a ULP writes'"
cp "$top/tests/consumer/readme.c" "$ex/"
libdir=$root/usr/lib/$multiarch
cflags=$(pkg-config --cflags rdmarw)
libs=$(pkg-config --libs rdmarw)
needs() { readelf -d "$1" | grep -q "NEEDED.*\[$2"; }
for cc in "gcc -std=c11" "clang -std=c11" "g++ -std=c++17 -x c++" \
	"clang++ -std=c++17 -x c++"; do
	set -- $cc
	bin=$ex/readme-$1
	# shellcheck disable=SC2086
	$cc -pedantic -Wall -Wextra -Werror $cflags -I"$ex" "$ex/readme.c" \
		-x none $libs -Wl,-rpath,"$libdir" -o "$bin" ||
		fail "README example: $cc"
	needs "$bin" librdmarw.so.0 || fail "README example ($1) is not linked with librdmarw.so.0"
	"$bin" >"$bin.out" || fail "README example ($1) failed: $(cat "$bin.out")"
	# as rdmarw(7) documents: librdmarw.a, the dependencies shared
	# shellcheck disable=SC2086,SC2046
	$cc -pedantic -Wall -Wextra -Werror $cflags -I"$ex" "$ex/readme.c" \
		-x none -Wl,-Bstatic $libs -Wl,-Bdynamic \
		$(pkg-config --libs libisal libibverbs librdmacm) -pthread \
		-o "$bin-static" || fail "README example, static as documented: $cc"
	needs "$bin-static" librdmarw && fail "README example ($1, static) needs the shared library"
	"$bin-static" >"$bin.out" || fail "README example ($1, static) failed"
done
if [ -f "/usr/lib/$multiarch/libisal.a" ]; then
	# shellcheck disable=SC2086,SC2046
	gcc -static -std=c11 $cflags -I"$ex" "$ex/readme.c" $pcstatic -o "$ex/readme-all-static" &&
		"$ex/readme-all-static" >/dev/null || fail "cc -static with pkg-config --static"
	step "cc -static with pkg-config --static --libs: ok"
fi
step "README example: gcc, clang (C11), g++, clang++ (C++17), -pedantic -Werror, shared and static as documented: $(cat "$bin.out")"
step "all checks passed in $(($(date +%s) - t0)) s"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The RDMA lab: boots Debian's own kernels under qemu (TCG, no KVM) with
# the kernel's soft-RoCE (rxe0 on dummy0) and soft-iWARP (siw0 on dummy1)
# and runs one command inside.  The repository is shared into the guest at
# its host path (virtio-9p), so freshly built binaries run without
# rebuilding anything.  Everything fetched or built is cached outside the
# repository, per kernel version.
#
# Usage: tests/lab/lab.sh prepare          fetch, build siw.ko, the initramfs
#        tests/lab/lab.sh run CMD...       run the shell command CMD (from the
#                                          repository root) in the guest;
#                                          builds nothing: build-lab/ as it
#                                          was last built (check and bench
#                                          build it), so rebuild it first
#        tests/lab/lab.sh smoke            ibv_devinfo and stock rping on both
#        tests/lab/lab.sh check            build, then, in each kernel, smoke
#                                          + the ibv backend's tests + the
#                                          rdma_cm test + the R/W
#                                          conformance suite on rxe0 and
#                                          siw0 + krping + rping interop +
#                                          the kernel's NVMe-oF host against
#                                          rdmarw-nvmet (what `make lab`
#                                          runs)
#        tests/lab/lab.sh bench [ROUNDS]   build, then rdmarw-perf against
#                                          perftest, and rdmarw-nvmet
#                                          against the kernel's
#                                          nvmet-rdma, on rxe0 and siw0
#                                          (what `make lab-bench` runs)
#        tests/lab/lab.sh clean            drop the cache
# Environment: RDMARW_LAB_KERNELS (default "6.1 6.12": the Debian kernel
#              series `check` boots, in order; SERIES:PART,... runs only
#              those parts of check.sh there, e.g. "6.1 6.12:nvmeof";
#              prepare, run, smoke and bench boot the first one),
#              RDMARW_LAB_CACHE (default ~/.cache/rdmarw-lab),
#              RDMARW_LAB_TIMEOUT (seconds per guest run, default 600,
#              1200 for check, 1500 for bench),
#              RDMARW_LAB_BOOT_TIMEOUT (seconds a boot may take to reach
#              the command, default 240; then it is booted again),
#              RDMARW_LAB_NVMEOF (check: nvmeof.sh's devices, and "full"
#              for three rounds; NVMEOF_ROUNDS and NVMEOF_SCALE are handed
#              to the guest too),
#              RDMARW_LAB_BENCH (bench's parts, default "perf nvmeof";
#              "tcp": rdmarw's iWARP over TCP against the kernel's siw and a
#              socket pair, tcp-bench.sh;
#              "perftest": perftest's ib_{write,read,send}_{bw,lat} -R on siw0
#              against rdmarw-perf --perftest on siw-tcp, both ways,
#              perftest-interop.sh;
#              "nvmeof-prof": perf profiles of both NVMe-oF targets,
#              NVMEOF_BENCH_PROF the cases, see nvmeof-bench.sh),
#              RDMARW_LAB_VERBOSE=1 (show the kernel's console messages),
#              RDMARW_LAB_APPEND (more words for the kernel's command line),
#              RDMARW_LAB_BINS (more host binaries whose libraries the
#              guest needs; those in build-lab/ are looked at anyway),
#              RDMARW_LAB_PERF=1 (put the host's perf, linux-perf, into the
#              initramfs; RDMARW_LAB_BENCH=nvmeof-prof sets it).
# The exit status of `run` is the command's; 124 if the guest timed out,
# 125 if the guest ended without reporting a status (or three boots died
# before the command).  `check` exits with the sum of the kernels' failed
# parts.
set -euo pipefail

LAB_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$LAB_DIR/../.." && pwd)
CACHE=${RDMARW_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmarw-lab}
TIMEOUT=${RDMARW_LAB_TIMEOUT:-600}
# Seconds a boot may take to reach the command (3 to 60 s seen under TCG).
BOOT_TIMEOUT=${RDMARW_LAB_BOOT_TIMEOUT:-240}
MARK=RDMARW-LAB-EXIT
START_MARK=RDMARW-LAB-START

HOST_PKGS="qemu-system-x86 busybox-static rdma-core ibverbs-providers
ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev iproute2
cpio kmod xz-utils gcc make libcmocka0"

# Kernel modules the guest loads; each one's dependencies and soft
# dependencies (the crc32c implementations before libcrc32c, say) come
# first, in the order `modprobe --show-depends` gives for the kernel at hand
# (names, dependencies and built-in modules differ between 6.1 and 6.12).
# The 9p and virtio ones give the shared folder.  A name the kernel does not
# have as a module (built in, or gone) is skipped.
MODULES="configfs crc32_generic crc32c_generic crc32c-intel libcrc32c
rdma_rxe rdma_ucm ib_umad siw dummy virtio_pci 9pnet_virtio 9p
crct10dif-pclmul crct10dif_generic crc64_rocksoft_generic crc64-rocksoft
t10-pi nvme-rdma nvmet-rdma ext4"
# Loaded by init.sh with its parameters (the kernel target's ramdisk).
PARAM_MODULES="brd"

# NVMe-oF (tests/lab/nvmeof*.sh): the host's nvme-cli and fio, downloaded
# and unpacked (never installed), with the libraries Debian's fio links.
NVME_PKGS="nvme-cli libnvme1 fio libboost-thread1.74.0 libgfapi0 libgfrpc0
libgfxdr0 libglusterfs0 libnbd0 libpmemblk1 librados2 librbd1"
NVME_PROGRAMS="/usr/sbin/nvme /usr/bin/fio"
# ext4 for the file-system part, from the host.
# util-linux's blkdiscard and fstrim for the discard checks: busybox has
# applets of those names, and its fstrim says "0 bytes trimmed" and exits 0
# when every discard failed; nvmeof.sh calls these by their full paths.
# setpriv runs the TCP transport's target as an unprivileged user.
FS_PROGRAMS="/usr/sbin/mke2fs /usr/sbin/mkfs.ext4 /usr/sbin/e2fsck
/usr/bin/sha256sum /usr/sbin/blkdiscard /usr/sbin/fstrim /usr/bin/setpriv"

# Programs copied into the guest, with every library they load.
PROGRAMS="/usr/bin/ibv_devinfo /usr/bin/ibv_devices /usr/bin/rping
/usr/bin/ucmatose /usr/bin/rdma /usr/bin/ip /usr/bin/ib_write_bw
/usr/bin/ib_read_bw /usr/bin/ib_send_bw /usr/bin/ib_write_lat
/usr/bin/ib_read_lat /usr/bin/ib_send_lat $FS_PROGRAMS"
ARCH_LIB=/usr/lib/x86_64-linux-gnu
# Loaded by dlopen (providers, libgcc_s at thread exit) or needed by the
# project's own test binaries (cmocka, the sanitizer runtimes).
EXTRA_LIBS="$ARCH_LIB/libibverbs/librxe-rdmav34.so
$ARCH_LIB/libibverbs/libsiw-rdmav34.so $ARCH_LIB/libgcc_s.so.1
$ARCH_LIB/libcmocka.so.0 $ARCH_LIB/libasan.so.8 $ARCH_LIB/libubsan.so.1"
# RDMARW_LAB_PERF=1: the host's perf (linux-perf, the same 6.1 series as
# the guest's kernel) and its libraries; the image is cached apart
# (initramfs-perf-*), so images with and without perf do not evict each
# other.
PERF_BIN=/usr/bin/perf

log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

need_host_pkgs() {
	local p missing=""

	for p in $HOST_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	log "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# kernel_version SERIES: the Debian kernel of that series, by the meta
# package that points at it: linux-image-SERIES-amd64 when there is one
# (6.12: linux-image-6.12-amd64, 6.12.118+deb12-amd64 on 2026-12-06),
# else linux-image-amd64 when it is of that series (6.1: 6.1.0-57-amd64).
# A full version (ending in -amd64) is taken as it is.
kernel_version() {
	local series=$1 meta kver

	case $series in
	*-amd64) echo "$series"; return 0 ;;
	esac
	for meta in "linux-image-$series-amd64" linux-image-amd64; do
		kver=$(apt-cache depends "$meta" 2>/dev/null |
			sed -n 's/.*Depends: linux-image-//p' | head -1)
		case $kver in
		"$series".*) echo "$kver"; return 0 ;;
		esac
	done
	return 1
}

# Download the kernel packages (never installed: unpacked into the cache).
fetch() {
	local kver=$1 abi=${1%-amd64} series ver kbuild
	local stamp=$CACHE/$kver/fetched

	[ -e "$stamp" ] && return 0
	series=$(echo "$kver" | cut -d. -f1-2)
	# The source of the image's own version; kbuild as the headers name
	# it (linux-kbuild-6.1, but linux-kbuild-6.12.118+deb12).
	ver=$(apt-cache policy "linux-image-$kver" 2>/dev/null |
		sed -n 's/ *Candidate: //p')
	kbuild=$(apt-cache depends "linux-headers-$kver" 2>/dev/null |
		sed -n 's/.*Depends: \(linux-kbuild-.*\)/\1/p' | head -1)
	[ -n "$ver" ] && [ "$ver" != "(none)" ] && [ -n "$kbuild" ] ||
		die "no linux-image-$kver or its kbuild in apt's lists (apt-get update?)"
	rm -rf "$CACHE/$kver/debs"
	mkdir -p "$CACHE/$kver/debs"
	log "fetching the $kver kernel packages ($ver)"
	(cd "$CACHE/$kver/debs" &&
	 apt-get download "linux-image-$kver" "linux-headers-$kver" \
		"linux-headers-$abi-common" "$kbuild" \
		"linux-source-$series=$ver" >/dev/null 2>&1) ||
		die "apt-get download failed (run apt-get update?)"
	touch "$stamp"
}

# nvme-cli, fio and the libraries fio links, unpacked into $CACHE/nvme/root.
fetch_nvme() {
	local stamp=$CACHE/nvme/unpacked d

	[ -e "$stamp" ] && return 0
	log "fetching nvme-cli and fio"
	rm -rf "$CACHE/nvme"
	mkdir -p "$CACHE/nvme/debs" "$CACHE/nvme/root"
	# shellcheck disable=SC2086
	(cd "$CACHE/nvme/debs" && apt-get download $NVME_PKGS >/dev/null 2>&1) ||
		die "apt-get download of $NVME_PKGS failed (run apt-get update?)"
	for d in "$CACHE/nvme/debs"/*.deb; do
		dpkg-deb -x "$d" "$CACHE/nvme/root"
	done
	touch "$stamp"
}

# Copy an unpacked program to its own path in the initramfs, with the
# libraries it loads: the unpacked ones first, the host's for the rest.
put_unpacked_with_libs() {
	local f=$1 dst=$2 root=$CACHE/nvme/root lib rel
	local lp=$root$ARCH_LIB:$root$ARCH_LIB/ceph

	mkdir -p "$dst$(dirname "$f")"
	cp -L "$root$f" "$dst$f"
	for lib in $(LD_LIBRARY_PATH=$lp ldd "$root$f" 2>/dev/null |
		     grep -o '/[^ ]*'); do
		rel=${lib#"$root"}
		[ -e "$dst$rel" ] && continue
		mkdir -p "$dst$(dirname "$rel")"
		cp -L "$lib" "$dst$rel"
	done
}

unpack() {
	local kver=$1 root=$CACHE/$1/root d
	local stamp=$CACHE/$kver/unpacked

	[ -e "$stamp" ] && return 0
	log "unpacking the $kver kernel"
	rm -rf "$root"
	mkdir -p "$root"
	for d in "$CACHE/$kver"/debs/linux-image-* \
		 "$CACHE/$kver"/debs/linux-headers-* \
		 "$CACHE/$kver"/debs/linux-kbuild-*; do
		dpkg-deb -x "$d" "$root"
	done
	# The headers' Makefile names the -common tree by absolute path.
	echo "include $root/usr/src/linux-headers-${kver%-amd64}-common/Makefile" \
		>"$root/usr/src/linux-headers-$kver/Makefile"
	touch "$stamp"
}

# Debian builds without CONFIG_RDMA_SIW: build siw.ko from linux-source.
# No BTF for it (6.12's headers ask for it, and pahole is not there).
build_siw() {
	local kver=$1 series src=$CACHE/$1/src
	local ko=$CACHE/$kver/siw.ko

	[ -e "$ko" ] && return 0
	series=$(echo "$kver" | cut -d. -f1-2)
	log "building siw.ko for $kver"
	rm -rf "$src"
	mkdir -p "$src"
	dpkg-deb --fsys-tarfile "$CACHE/$kver"/debs/linux-source-*.deb |
		tar -x -C "$src" "./usr/src/linux-source-$series.tar.xz"
	tar -xJf "$src/usr/src/linux-source-$series.tar.xz" -C "$src" \
		--wildcards "linux-source-$series/drivers/infiniband/sw/siw/*"
	rm -rf "$src/usr"
	make -s -C "$CACHE/$kver/root/usr/src/linux-headers-$kver" \
		M="$src/linux-source-$series/drivers/infiniband/sw/siw" \
		CONFIG_RDMA_SIW=m CONFIG_DEBUG_INFO_BTF_MODULES= modules -j2 \
		>"$CACHE/$kver/siw-build.log" 2>&1 ||
		die "siw build failed: see $CACHE/$kver/siw-build.log"
	cp "$src/linux-source-$series/drivers/infiniband/sw/siw/siw.ko" "$ko.tmp"
	mv "$ko.tmp" "$ko"
}

# module_order KVER: the modules of $MODULES and their dependencies, one
# path (below the unpacked root) a line, in load order, in
# $CACHE/KVER/modules.list.  siw.ko joins the kernel's own in updates/ and
# depmod writes the modules.dep the image does not ship.
module_order() {
	local kver=$1 root=$CACHE/$1/root m list=$CACHE/$1/modules.list
	local head

	head="# $(echo $MODULES)"
	[ -s "$list" ] && [ "$list" -nt "$CACHE/$kver/siw.ko" ] &&
		[ "$(head -1 "$list")" = "$head" ] && return 0
	mkdir -p "$root/lib/modules/$kver/updates"
	cp "$CACHE/$kver/siw.ko" "$root/lib/modules/$kver/updates/siw.ko"
	depmod -b "$root" "$kver" || die "depmod for $kver failed"
	{
		echo "$head"
		for m in $MODULES; do
			# "insmod PATH [options]" per module, "builtin NAME" for
			# those built in; options are init.sh's business.
			{ modprobe -d "$root" -S "$kver" --show-depends "$m" \
				2>/dev/null || true; } | sed -n "s|^insmod $root\\([^ ]*\\).*|\\1|p"
		done | awk '!seen[$0]++'
	} >"$list.tmp"
	mv "$list.tmp" "$list"
}

# put_module FILE DIR: FILE (.ko, .ko.xz or .ko.zst) as DIR/NAME.ko,
# uncompressed (busybox's insmod reads plain ELF); prints NAME.
put_module() {
	local f=$1 name

	name=${f##*/}
	name=${name%.xz}
	name=${name%.zst}
	name=${name%.ko}
	case $f in
	*.xz) xz -dc "$f" >"$2/$name.ko" ;;
	*.zst) zstd -qdc "$f" >"$2/$name.ko" ;;
	*) cp "$f" "$2/$name.ko" ;;
	esac || die "cannot copy the module $f"
	echo "$name"
}

# Copy a file into the initramfs at the same path (symlinks resolved).
put() {
	local f=$1 dst=$2

	mkdir -p "$dst$(dirname "$f")"
	cp -L "$f" "$dst$f"
}

put_with_libs() {
	local f=$1 dst=$2 lib

	put "$f" "$dst"
	for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$dst$lib" ] || put "$lib" "$dst"
	done
}

# Libraries the project's lab programs load (ISA-L, cmocka, ...): any
# binaries in build-lab/, plus those named in RDMARW_LAB_BINS.
project_libs() {
	local f

	for f in "$REPO"/build-lab/tests/test_ibv_* \
		 "$REPO"/build-lab/tests/test_cm_ibv \
		 "$REPO"/build-lab/tests/test_rw_* \
		 "$REPO"/build-lab/examples/rping/rping-* \
		 "$REPO"/build-lab/tools/rdmarw-* \
		 "$REPO"/build-lab/nvme/target/rdmarw-nvmet \
		 "$REPO"/build-lab/tests/nvmet/nvmet_halfopen ${RDMARW_LAB_BINS:-}; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
	done | sort -u | tr '\n' ' '
}

# What unpack() writes beyond its inputs: bump it when that changes, so a
# cached image is built again (2: / is 0755, an unprivileged process in
# the guest can reach the libraries).
INITRAMFS_LAYOUT=2

initramfs_inputs_hash() {
	{
		echo "layout $INITRAMFS_LAYOUT"
		echo "$MODULES $PARAM_MODULES $PROGRAMS $EXTRA_LIBS $(project_libs)"
		echo "$NVME_PKGS $NVME_PROGRAMS"
		[ "${RDMARW_LAB_PERF:-0}" = 1 ] && sha256sum "$(perf_real)"
		cat "$LAB_DIR/init.sh"
		sha256sum "$CACHE/$1/siw.ko"
		cat "$CACHE/$1/modules.list"
	} | sha256sum | cut -c1-16
}

# The perf binary itself: Debian's /usr/bin/perf may be a wrapper script
# that execs perf_<version>; take the ELF it runs.
perf_real() {
	local f

	f=$(readlink -f "$PERF_BIN")
	if ! head -c 4 "$f" | grep -q ELF; then
		f=$(ls /usr/bin/perf_* 2>/dev/null | sort -V | tail -1)
	fi
	[ -n "$f" ] && [ -e "$f" ] || die "no perf binary (apt-get install linux-perf)"
	echo "$f"
}

build_initramfs() {
	local kver=$1 hash img dst mods=$CACHE/$1/root/lib/modules/$1
	local m f kind=""

	[ "${RDMARW_LAB_PERF:-0}" = 1 ] && kind=perf-
	hash=$(initramfs_inputs_hash "$kver")
	img=$CACHE/$kver/initramfs-$kind$hash.cpio.gz
	INITRAMFS=$img
	# In use: the clean-up below (of another tree's run) leaves it.
	[ -e "$img" ] && touch "$img" && return 0
	log "building the initramfs"
	dst=$(mktemp -d "$CACHE/$kver/initramfs.XXXXXX")
	chmod 755 "$dst" # the guest's /: mktemp made it 0700
	mkdir -p "$dst"/{usr/bin,usr/sbin,usr/lib,usr/lib64,proc,sys,dev,tmp,run,etc,bb,lab}
	ln -s usr/lib "$dst/lib"
	ln -s usr/lib64 "$dst/lib64"
	ln -s usr/bin "$dst/bin"
	ln -s usr/sbin "$dst/sbin"
	cp /bin/busybox "$dst/bb/busybox"
	mkdir -p "$dst/lab/ko"
	for f in $(grep -v '^#' "$CACHE/$kver/modules.list"); do
		put_module "$CACHE/$kver/root$f" "$dst/lab/ko"
	done >"$dst/lab/modules"
	for m in $PARAM_MODULES; do
		f=$(find "$mods/kernel" -name "$m.ko*" | head -1)
		[ -n "$f" ] || die "module $m not found in $kver"
		put_module "$f" "$dst/lab/ko" >/dev/null
	done
	for f in $NVME_PROGRAMS; do
		put_unpacked_with_libs "$f" "$dst"
	done
	[ -e /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$dst/etc/"
	for f in $PROGRAMS $EXTRA_LIBS $(project_libs); do
		[ -e "$f" ] && put_with_libs "$f" "$dst"
	done
	if [ -n "$kind" ]; then
		f=$(perf_real)
		put_with_libs "$f" "$dst"
		[ "$f" = /usr/bin/perf ] || cp "$dst$f" "$dst/usr/bin/perf"
	fi
	mkdir -p "$dst/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/siw.driver \
		"$dst/etc/libibverbs.d/"
	echo "root:x:0:0:root:/root:/bb/sh" >"$dst/etc/passwd"
	echo "127.0.0.1 localhost" >"$dst/etc/hosts"
	install -m 755 "$LAB_DIR/init.sh" "$dst/init"
	(cd "$dst" && find . | cpio -o -H newc --quiet | gzip -1) >"$img.tmp"
	mv "$img.tmp" "$img"
	rm -rf "$dst"
	# Images of this kernel and kind unused for a day are stale (a
	# younger one may be another work tree's, booting now).
	if [ -n "$kind" ]; then
		find "$CACHE/$kver" -maxdepth 1 -name 'initramfs-perf-*.cpio.gz' \
			-mmin +1440 ! -name "initramfs-$kind$hash.cpio.gz" -delete
	else
		find "$CACHE/$kver" -maxdepth 1 -name 'initramfs-*.cpio.gz' \
			! -name 'initramfs-perf-*' -mmin +1440 \
			! -name "initramfs-$hash.cpio.gz" -delete
	fi
}

# The project's lab programs, in build-lab/ (shared with the guest): the
# ibv backend's tests (test_ibv_rw, test_cm_ibv), the R/W conformance suite (tests/test_rw_*.c), the
# rping examples and rdmarw-info.
build_lab() {
	local conf

	log "building the lab's programs in build-lab/"
	"$REPO/scripts/deps.sh" build
	conf=$(cd "$REPO/tests" && ls test_rw_*.c | sed 's/\.c$//')
	cmake -S "$REPO" -B "$REPO/build-lab" -DRDMARW_WERROR=ON >/dev/null
	# shellcheck disable=SC2086
	cmake --build "$REPO/build-lab" -j2 --target test_ibv_rw test_ibv_cq_events test_cm_ibv test_ibv_srq $conf \
		rping-server rping-client rdmarw-info rdmarw-perf krping \
		rdmarw-nvmet nvmet_halfopen bench-tcp >/dev/null
}

# prepare SERIES: the kernel of that series (6.1, 6.12) fetched, siw.ko
# built, the initramfs made; sets KVER and INITRAMFS.
prepare() {
	need_host_pkgs
	KVER=$(kernel_version "$1") ||
		die "no Debian kernel of the $1 series in apt's lists (apt-get update?)"
	mkdir -p "$CACHE"
	fetch "$KVER"
	fetch_nvme
	unpack "$KVER"
	build_siw "$KVER"
	module_order "$KVER"
	build_initramfs "$KVER"
}

# The firmware's screen codes and banner, and the status lines, are noise.
console_filter() {
	sed -u -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g' \
		-e 's/^Booting from ROM\.*//' -e '/^SeaBIOS/d' -e "/^$MARK=/d" \
		-e "/^$START_MARK\$/d" -e '/^$/d' -e '/reboot: Power down/d'
}

# boot_watch RUN: a boot that has not reached the command (the marker
# comes after the firmware's screen codes, on the same line) after
# BOOT_TIMEOUT seconds is stopped (qemu's pid in RUN/qemu.pid; RUN/boot-hung
# says so): under TCG a boot now and then hangs, silently, before init runs.
boot_watch() {
	local run=$1 pid

	for _ in $(seq "$BOOT_TIMEOUT"); do
		sleep 1
		grep -aq "$START_MARK" "$run/console.log" 2>/dev/null && return 0
	done
	pid=$(cat "$run/qemu.pid" 2>/dev/null) || return 0
	touch "$run/boot-hung"
	kill "$pid" 2>/dev/null || true
}

# Boot the guest once and run "$*" inside; prints the guest's output.
# Returns the command's status; 124 when the guest timed out, 125 when it
# gave none, 126 when it died before the command started (its boot).
boot_guest() {
	local run out rc append

	run=$(mktemp -d "$CACHE/run.XXXXXX")
	out=$run/console.log
	printf '%s\n' "$*" >"$run/cmd.sh"
	append="console=ttyS0 panic=-1 lab.share=$REPO ${RDMARW_LAB_APPEND:-}"
	[ "${RDMARW_LAB_VERBOSE:-0}" = 1 ] || append="$append quiet loglevel=3"
	: >"$out"
	boot_watch "$run" &
	watch=$!
	set +e
	timeout --foreground -k 10 "$TIMEOUT" qemu-system-x86_64 \
		-machine q35 -cpu max -smp 2 -m 2G -nodefaults -nographic \
		-no-reboot -serial stdio -pidfile "$run/qemu.pid" \
		-kernel "$CACHE/$KVER/root/boot/vmlinuz-$KVER" \
		-initrd "$INITRAMFS" -append "$append" \
		-virtfs "local,path=$REPO,mount_tag=repo,security_model=none,multidevs=remap" \
		-virtfs "local,path=$run,mount_tag=run,security_model=none,readonly=on" \
		</dev/null 2>&1 | sed -u 's/\r//g' | tee -a "$out" | console_filter
	# (sed -u, not tr: tr holds a quiet boot's few lines in its buffer,
	# and boot_watch would not see the command start.)
	rc=${PIPESTATUS[0]}
	set -e
	kill "$watch" 2>/dev/null || true
	wait "$watch" 2>/dev/null || true
	if [ -e "$run/boot-hung" ]; then
		log "the guest did not reach its command in ${BOOT_TIMEOUT}s: stopped"
		tail -5 "$out" >&2
		rc=126
	elif [ "$rc" = 124 ]; then
		log "guest timed out after ${TIMEOUT}s"
	elif grep -q "^$MARK=" "$out"; then
		rc=$(sed -n "s/^$MARK=\([0-9]*\).*/\1/p" "$out" | tail -1)
	elif ! grep -aq "$START_MARK\$" "$out"; then
		log "the guest died during its boot (qemu status $rc):"
		grep -a -m3 -i 'oops\|panic\|BUG' "$out" >&2 || tail -5 "$out" >&2
		rc=126
	else
		log "guest ended without a status (qemu status $rc)"
		rc=125
	fi
	rm -rf "$run"
	return "$rc"
}

# run_guest CMD: boot_guest, booted again (up to 3 boots) when a boot died
# or hung before the command started: TCG boots now and then end in an
# early "Oops: int3", or hang; that is no result of the command.
run_guest() {
	local n rc

	for n in 1 2 3; do
		rc=0
		boot_guest "$@" || rc=$?
		[ "$rc" = 126 ] || return "$rc"
		log "booting $KVER again ($n of 3 died early)"
	done
	return 125
}

# The kernels `check` boots: RDMARW_LAB_KERNELS, words SERIES[:PART,...].
KERNELS=${RDMARW_LAB_KERNELS:-6.1 6.12}
# The first series named: what run, smoke and bench boot.
first_series() {
	set -- $KERNELS
	echo "${1%%:*}"
}

# Host variables the guest's scripts read, as a prefix to its command
# (their values are words: device names, modes, numbers).
guest_env() {
	local v val

	for v in RDMARW_LAB_NVMEOF NVMEOF_ROUNDS NVMEOF_SCALE NVMEOF_ONLY; do
		eval "val=\${$v:-}"
		[ -n "$val" ] || continue
		case $val in
		*[!A-Za-z0-9\ ._:,-]*) die "$v: only words, please" ;;
		esac
		printf "%s='%s' " "$v" "$val"
	done
}

case "${1:-}" in
prepare)
	prepare "$(first_series)"
	log "ready: $CACHE/$KVER"
	;;
run)
	shift
	[ $# -gt 0 ] || die "usage: $0 run CMD..."
	prepare "$(first_series)"
	run_guest "$@"
	;;
smoke)
	prepare "$(first_series)"
	run_guest "sh tests/lab/smoke.sh"
	;;
check)
	need_host_pkgs
	build_lab
	# Every part on the first kernel: about 8 min; a whole guest run
	# may take 20 min before it counts as hung.
	TIMEOUT=${RDMARW_LAB_TIMEOUT:-1200}
	status=0
	summary=
	for k in $KERNELS; do
		series=${k%%:*}
		parts=
		[ "$k" = "$series" ] || parts=$(echo "${k#*:}" | tr , ' ')
		prepare "$series"
		log "=== $KVER: ${parts:-every part}"
		start=$SECONDS
		rc=0
		run_guest "$(guest_env)RDMARW_LAB_PARTS='$parts' sh tests/lab/check.sh build-lab" ||
			rc=$?
		log "=== $KVER: status $rc in $((SECONDS - start)) s"
		summary="$summary $KVER=$rc"
		status=$((status + rc))
	done
	log "kernels:$summary"
	exit "$status"
	;;
bench)
	need_host_pkgs
	build_lab
	case " ${RDMARW_LAB_BENCH:-} " in
	*" nvmeof-prof "*) export RDMARW_LAB_PERF=1 ;;
	esac
	prepare "$(first_series)"
	log "benchmarks on $KVER"
	# both parts, three rounds: about 2 min 20 s + 9 min under TCG
	TIMEOUT=${RDMARW_LAB_TIMEOUT:-1500}
	cmd="rc=0"
	case " ${RDMARW_LAB_BENCH:-perf nvmeof} " in
	*" perf "*)
		cmd="$cmd; sh tests/lab/bench.sh build-lab/tools/rdmarw-perf ${2:-3} || rc=\$((rc + \$?))"
		;;
	esac
	case " ${RDMARW_LAB_BENCH:-perf nvmeof} " in
	*" tcp "*)
		cmd="$cmd; sh tests/lab/tcp-bench.sh build-lab ${2:-3} || rc=\$((rc + \$?))"
		;;
	esac
	case " ${RDMARW_LAB_BENCH:-perf nvmeof} " in
	*" perftest "*)
		cmd="$cmd; sh tests/lab/perftest-interop.sh build-lab ${2:-3} || rc=\$((rc + \$?))"
		;;
	esac
	case " ${RDMARW_LAB_BENCH:-perf nvmeof} " in
	*" nvmeof "*)
		cmd="$cmd; sh tests/lab/nvmeof-bench.sh build-lab ${2:-3} || rc=\$((rc + \$?))"
		;;
	esac
	# perf record of one fio run per target (nvmeof-bench.sh, PROF).
	case " ${RDMARW_LAB_BENCH:-} " in
	*" nvmeof-prof "*)
		cmd="$cmd; NVMEOF_BENCH_PROF=\"${NVMEOF_BENCH_PROF:-rxe0:read:128k siw0:randread:4k}\" sh tests/lab/nvmeof-bench.sh build-lab 1 || rc=\$((rc + \$?))"
		;;
	esac
	run_guest "$cmd; exit \$rc"
	;;
clean)
	rm -rf "$CACHE"
	;;
*)
	sed -n '3,/^set -e/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac

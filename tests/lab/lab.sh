#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The RDMA lab: boots Debian's own kernel under qemu (TCG, no KVM) with the
# kernel's soft-RoCE (rxe0 on dummy0) and soft-iWARP (siw0 on dummy1) and
# runs one command inside.  The repository is shared into the guest at its
# host path (virtio-9p), so freshly built binaries run without rebuilding
# anything.  Everything fetched or built is cached outside the repository.
#
# Usage: tests/lab/lab.sh prepare          fetch, build siw.ko, the initramfs
#        tests/lab/lab.sh run CMD...       run the shell command CMD (from the
#                                          repository root) in the guest
#        tests/lab/lab.sh smoke            ibv_devinfo and stock rping on both
#        tests/lab/lab.sh check            build, then smoke + the ibv
#                                          backend's test + the rdma_cm
#                                          test + the R/W
#                                          conformance suite on rxe0 and
#                                          siw0 + rping interop
#                                          (what `make lab` runs)
#        tests/lab/lab.sh bench [ROUNDS]   build, then rdmarw-perf against
#                                          perftest, and rdmarw-nvmet
#                                          against the kernel's
#                                          nvmet-rdma, on rxe0 and siw0
#                                          (what `make lab-bench` runs)
#        tests/lab/lab.sh clean            drop the cache
# Environment: RDMARW_LAB_CACHE (default ~/.cache/rdmarw-lab),
#              RDMARW_LAB_TIMEOUT (seconds per guest run, default 600,
#              1500 for bench),
#              RDMARW_LAB_BENCH (bench's parts, default "perf nvmeof";
#              "nvmeof-prof": perf profiles of both NVMe-oF targets,
#              NVMEOF_BENCH_PROF the cases, see nvmeof-bench.sh),
#              RDMARW_LAB_VERBOSE=1 (show the kernel's console messages),
#              RDMARW_LAB_BINS (more host binaries whose libraries the
#              guest needs; those in build-lab/ are looked at anyway),
#              RDMARW_LAB_PERF=1 (put the host's perf, linux-perf, into the
#              initramfs; RDMARW_LAB_BENCH=nvmeof-prof sets it).
# The exit status of `run` is the command's; 124 if the guest timed out,
# 125 if the guest ended without reporting a status.
set -euo pipefail

LAB_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$LAB_DIR/../.." && pwd)
CACHE=${RDMARW_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmarw-lab}
TIMEOUT=${RDMARW_LAB_TIMEOUT:-600}
MARK=RDMARW-LAB-EXIT

HOST_PKGS="qemu-system-x86 busybox-static rdma-core ibverbs-providers
ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev iproute2
cpio kmod xz-utils gcc make libcmocka0"

# Kernel modules in load order (the 9p ones give the shared folder).
MODULES="configfs crc32_generic crc32c_generic crc32c-intel libcrc32c
udp_tunnel ip6_udp_tunnel ib_core ib_uverbs ib_umad iw_cm ib_cm rdma_cm
rdma_ucm rdma_rxe dummy virtio_ring virtio virtio_pci_modern_dev
virtio_pci_legacy_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p
crct10dif_common crc64 crct10dif-pclmul crct10dif_generic crc-t10dif
crc64-rocksoft t10-pi nvme-core nvme-fabrics nvme-rdma nvmet nvmet-rdma
crc16 mbcache jbd2 ext4"
# Loaded by init.sh with its parameters (the kernel target's ramdisk).
PARAM_MODULES="brd"

# NVMe-oF (tests/lab/nvmeof*.sh): the host's nvme-cli and fio, downloaded
# and unpacked (never installed), with the libraries Debian's fio links.
NVME_PKGS="nvme-cli libnvme1 fio libboost-thread1.74.0 libgfapi0 libgfrpc0
libgfxdr0 libglusterfs0 libnbd0 libpmemblk1 librados2 librbd1"
NVME_PROGRAMS="/usr/sbin/nvme /usr/bin/fio"
# ext4 for the file-system part, from the host.
FS_PROGRAMS="/usr/sbin/mke2fs /usr/sbin/mkfs.ext4 /usr/sbin/e2fsck
/usr/bin/sha256sum"

# Programs copied into the guest, with every library they load.
PROGRAMS="/usr/bin/ibv_devinfo /usr/bin/ibv_devices /usr/bin/rping
/usr/bin/ucmatose /usr/bin/rdma /usr/bin/ip /usr/bin/ib_write_bw
/usr/bin/ib_read_bw /usr/bin/ib_send_bw $FS_PROGRAMS"
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

# The kernel that linux-image-amd64 points at, e.g. 6.1.0-57-amd64.
kernel_version() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-image-//p' | head -1
}

# Download the kernel packages (never installed: unpacked into the cache).
fetch() {
	local kver=$1 abi=${1%-amd64} series
	local stamp=$CACHE/$kver/fetched

	[ -e "$stamp" ] && return 0
	series=$(echo "$kver" | cut -d. -f1-2)
	mkdir -p "$CACHE/$kver/debs"
	log "fetching the $kver kernel packages"
	(cd "$CACHE/$kver/debs" &&
	 apt-get download "linux-image-$kver" "linux-headers-$kver" \
		"linux-headers-$abi-common" "linux-kbuild-$series" \
		"linux-source-$series" >/dev/null 2>&1) ||
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
	log "unpacking the kernel"
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
build_siw() {
	local kver=$1 series src=$CACHE/$1/src
	local ko=$CACHE/$kver/siw.ko

	[ -e "$ko" ] && return 0
	series=$(echo "$kver" | cut -d. -f1-2)
	log "building siw.ko"
	rm -rf "$src"
	mkdir -p "$src"
	dpkg-deb --fsys-tarfile "$CACHE/$kver"/debs/linux-source-*.deb |
		tar -x -C "$src" "./usr/src/linux-source-$series.tar.xz"
	tar -xJf "$src/usr/src/linux-source-$series.tar.xz" -C "$src" \
		--wildcards "linux-source-$series/drivers/infiniband/sw/siw/*"
	rm -rf "$src/usr"
	make -s -C "$CACHE/$kver/root/usr/src/linux-headers-$kver" \
		M="$src/linux-source-$series/drivers/infiniband/sw/siw" \
		CONFIG_RDMA_SIW=m modules -j2 >"$CACHE/$kver/siw-build.log" 2>&1 ||
		die "siw build failed: see $CACHE/$kver/siw-build.log"
	cp "$src/linux-source-$series/drivers/infiniband/sw/siw/siw.ko" "$ko"
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
		 "$REPO"/build-lab/nvmet/rdmarw-nvmet ${RDMARW_LAB_BINS:-}; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
	done | sort -u | tr '\n' ' '
}

initramfs_inputs_hash() {
	{
		echo "$MODULES $PARAM_MODULES $PROGRAMS $EXTRA_LIBS $(project_libs)"
		echo "$NVME_PKGS $NVME_PROGRAMS"
		[ "${RDMARW_LAB_PERF:-0}" = 1 ] && sha256sum "$(perf_real)"
		cat "$LAB_DIR/init.sh"
		sha256sum "$CACHE/$1/siw.ko"
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
	[ -e "$img" ] && return 0
	log "building the initramfs"
	dst=$(mktemp -d "$CACHE/$kver/initramfs.XXXXXX")
	mkdir -p "$dst"/{usr/bin,usr/sbin,usr/lib,usr/lib64,proc,sys,dev,tmp,run,etc,bb,lab}
	ln -s usr/lib "$dst/lib"
	ln -s usr/lib64 "$dst/lib64"
	ln -s usr/bin "$dst/bin"
	ln -s usr/sbin "$dst/sbin"
	cp /bin/busybox "$dst/bb/busybox"
	: >"$dst/lab/modules"
	for m in $MODULES; do
		f=$(find "$mods/kernel" -name "$m.ko" | head -1)
		[ -n "$f" ] || die "module $m not found in $kver"
		mkdir -p "$dst/lab/ko"
		cp "$f" "$dst/lab/ko/$m.ko"
		echo "$m" >>"$dst/lab/modules"
	done
	for m in $PARAM_MODULES; do
		f=$(find "$mods/kernel" -name "$m.ko" | head -1)
		[ -n "$f" ] || die "module $m not found in $kver"
		cp "$f" "$dst/lab/ko/$m.ko"
	done
	cp "$CACHE/$kver/siw.ko" "$dst/lab/ko/siw.ko"
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
	# Older images of this kernel and kind are stale now.
	if [ -n "$kind" ]; then
		find "$CACHE/$kver" -maxdepth 1 -name 'initramfs-perf-*.cpio.gz' \
			! -name "initramfs-$kind$hash.cpio.gz" -delete
	else
		find "$CACHE/$kver" -maxdepth 1 -name 'initramfs-*.cpio.gz' \
			! -name 'initramfs-perf-*' \
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
	cmake --build "$REPO/build-lab" -j2 --target test_ibv_rw test_cm_ibv test_ibv_srq $conf \
		rping-server rping-client rdmarw-info rdmarw-perf krping \
		rdmarw-nvmet >/dev/null
}

prepare() {
	need_host_pkgs
	KVER=$(kernel_version)
	[ -n "$KVER" ] || die "cannot tell linux-image-amd64's kernel (apt-get update?)"
	mkdir -p "$CACHE"
	fetch "$KVER"
	fetch_nvme
	unpack "$KVER"
	build_siw "$KVER"
	build_initramfs "$KVER"
}

# The firmware's screen codes and banner, and the status line, are noise.
console_filter() {
	sed -u -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g' \
		-e 's/^Booting from ROM\.*//' -e '/^SeaBIOS/d' -e "/^$MARK=/d" \
		-e '/^$/d' -e '/reboot: Power down/d'
}

# Boot the guest and run "$*" inside; prints the guest's output.
run_guest() {
	local run out rc append

	run=$(mktemp -d "$CACHE/run.XXXXXX")
	out=$run/console.log
	printf '%s\n' "$*" >"$run/cmd.sh"
	append="console=ttyS0 panic=-1 lab.share=$REPO"
	[ "${RDMARW_LAB_VERBOSE:-0}" = 1 ] || append="$append quiet loglevel=3"
	set +e
	timeout --foreground -k 10 "$TIMEOUT" qemu-system-x86_64 \
		-machine q35 -cpu max -smp 2 -m 2G -nodefaults -nographic \
		-no-reboot -serial stdio \
		-kernel "$CACHE/$KVER/root/boot/vmlinuz-$KVER" \
		-initrd "$INITRAMFS" -append "$append" \
		-virtfs "local,path=$REPO,mount_tag=repo,security_model=none,multidevs=remap" \
		-virtfs "local,path=$run,mount_tag=run,security_model=none,readonly=on" \
		</dev/null 2>&1 | tr -d '\r' | tee "$out" | console_filter
	rc=${PIPESTATUS[0]}
	set -e
	if [ "$rc" = 124 ]; then
		log "guest timed out after ${TIMEOUT}s"
	elif grep -q "^$MARK=" "$out"; then
		rc=$(sed -n "s/^$MARK=\([0-9]*\).*/\1/p" "$out" | tail -1)
	else
		log "guest ended without a status (qemu status $rc)"
		rc=125
	fi
	rm -rf "$run"
	return "$rc"
}

case "${1:-}" in
prepare)
	prepare
	log "ready: $CACHE/$KVER"
	;;
run)
	shift
	[ $# -gt 0 ] || die "usage: $0 run CMD..."
	prepare
	run_guest "$@"
	;;
smoke)
	prepare
	run_guest "sh tests/lab/smoke.sh"
	;;
check)
	need_host_pkgs
	build_lab
	prepare
	run_guest "sh tests/lab/check.sh build-lab"
	;;
bench)
	need_host_pkgs
	build_lab
	case " ${RDMARW_LAB_BENCH:-} " in
	*" nvmeof-prof "*) export RDMARW_LAB_PERF=1 ;;
	esac
	prepare
	# both parts, three rounds: about 2 min 20 s + 9 min under TCG
	TIMEOUT=${RDMARW_LAB_TIMEOUT:-1500}
	cmd="rc=0"
	case " ${RDMARW_LAB_BENCH:-perf nvmeof} " in
	*" perf "*)
		cmd="$cmd; sh tests/lab/bench.sh build-lab/tools/rdmarw-perf ${2:-3} || rc=\$((rc + \$?))"
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

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# bench-nvmet's namespace as memory, as a file on tmpfs and as a file on
# the file system of DIR (default: the current directory), through io_uring
# and through the synchronous engine, alternated ROUNDS times, with the
# target's queues on CQ threads and then polled (--poll) (issue 30;
# bench/README.md).  $RDMARW_NVMET_BENCH_FILE_DIR makes the benchmark's RAM
# namespace an unnamed file of the same size in that directory, sparse, or
# written with zeroes first with $RDMARW_NVMET_BENCH_FILE_ALLOC=written;
# $RDMARW_NVMET_NO_URING=1 makes io_uring unavailable (synchronous I/O).
# "disk-uring-buffered" is DIR's file written first and opened buffered
# ($RDMARW_NVMET_BENCH_FILE_BUFFERED=1, the kernel's buffered_io: through
# the page cache, which the writing leaves warm) where the other
# disk-uring phases are O_DIRECT when the file system takes it;
# "disk-uring-buffered-pread" the same with $RDMARW_NVMET_URING_READ_RING=0
# (a batch's cached Reads by a preadv2 each, not through the ring).
# The RAM namespace runs twice: "ram" as the target runs it (reads sent
# from the namespace without a copy) and "ram-copy" with
# $RDMARW_NVMET_ZCOPY=0 (every read copied into a page of the queue's
# pool first, as before).  A file on tmpfs is served from a shared mapping
# of it under a lease by default ("tmpfs-map"); "tmpfs-uring" and
# "tmpfs-sync" turn that off ($RDMARW_NVMET_TMPFS_MAP=0: pread/pwrite).
# $BACKENDS (space separated) picks phases by name (default: all);
# $BENCH_ARGS is added to each bench-nvmet run (e.g. --prefill: every
# block written first, so that no read is of a hole, which RAM and tmpfs's
# pread serve from the zero page and a tmpfs mapping from a new page).
# Usage: bench/nvmet_file.sh BENCH_NVMET [DIR] [ROUNDS] [SECONDS] [PROFILE]
# Prints one JSON line per phase with "backend" and "mode" added.
set -eu
bench=$1
dir=${2:-$PWD}
rounds=${3:-3}
secs=${4:-2}
prof=${5:-rxe}

backends=${BACKENDS:-}
extra=${BENCH_ARGS:-}

run() { # NAME ENV...
	name=$1
	shift
	case " ${backends:-$name} " in
	*" $name "*) ;;
	*) return 0 ;;
	esac
	for mode in threaded poll; do
		p=
		[ "$mode" = poll ] && p=--poll
		for op in "" --write; do
			env "$@" "$bench" -p "$prof" -q 1 -d 32 -D "$secs" \
				--no-perf --size 4096 --json $op $p $extra \
				2>/dev/null |
				sed "s/^{/{\"backend\":\"$name\",\"mode\":\"$mode\",/"
		done
	done
}

echo "# $(date -u '+%F %T') UTC, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
echo "# $dir: $(df -T "$dir" | awk 'NR==2 {print $2}'), /dev/shm: tmpfs"
i=0
while [ "$i" -lt "$rounds" ]; do
	run ram X=1
	run ram-copy RDMARW_NVMET_ZCOPY=0
	run tmpfs-map RDMARW_NVMET_BENCH_FILE_DIR=/dev/shm
	run tmpfs-uring RDMARW_NVMET_BENCH_FILE_DIR=/dev/shm \
		RDMARW_NVMET_TMPFS_MAP=0
	run tmpfs-sync RDMARW_NVMET_BENCH_FILE_DIR=/dev/shm \
		RDMARW_NVMET_TMPFS_MAP=0 \
		RDMARW_NVMET_NO_URING=1
	run disk-uring RDMARW_NVMET_BENCH_FILE_DIR="$dir"
	run disk-uring-written RDMARW_NVMET_BENCH_FILE_DIR="$dir" \
		RDMARW_NVMET_BENCH_FILE_ALLOC=written
	run disk-uring-buffered RDMARW_NVMET_BENCH_FILE_DIR="$dir" \
		RDMARW_NVMET_BENCH_FILE_ALLOC=written \
		RDMARW_NVMET_BENCH_FILE_BUFFERED=1
	run disk-uring-buffered-pread RDMARW_NVMET_BENCH_FILE_DIR="$dir" \
		RDMARW_NVMET_BENCH_FILE_ALLOC=written \
		RDMARW_NVMET_BENCH_FILE_BUFFERED=1 \
		RDMARW_NVMET_URING_READ_RING=0
	run disk-sync RDMARW_NVMET_BENCH_FILE_DIR="$dir" \
		RDMARW_NVMET_NO_URING=1
	i=$((i + 1))
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

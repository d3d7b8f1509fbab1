#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install the build tree into a DESTDIR and build tests/consumer/consumer.c
# against it three ways, then run each program:
#   1. pkg-config, shared:  $(pkg-config --cflags --libs rdmarw)
#   2. pkg-config, static:  librdmarw.a and $(pkg-config --static --libs rdmarw)
#   3. CMake:               find_package(rdmarw CONFIG), rdmarw::rdmarw and
#                           rdmarw::rdmarw_static
# Usage: run.sh BUILD_DIR PREFIX LIBDIR [CC]
set -eu
build=$1 prefix=$2 libdir=$3 cc=${4:-cc}
src=$(cd "$(dirname "$0")" && pwd)
work=$build/consumer
root=$work/root
rm -rf "$work"
mkdir -p "$work"
DESTDIR=$root cmake --install "$build" >"$work/install.log"

lib=$root$prefix/$libdir
export PKG_CONFIG_SYSROOT_DIR="$root"
export PKG_CONFIG_PATH="$lib/pkgconfig"
pkg-config --exists --print-errors rdmarw
needs() { readelf -d "$1" | grep -q "NEEDED.*\[$2"; }
fail() { echo "consumer: $*" >&2; exit 1; }

# 1. shared
# shellcheck disable=SC2046
"$cc" -o "$work/consumer_pc_shared" "$src/consumer.c" \
	$(pkg-config --cflags --libs rdmarw) -Wl,-rpath,"$lib"
needs "$work/consumer_pc_shared" librdmarw.so.0 ||
	fail "pkg-config shared: not linked with librdmarw.so.0"
"$work/consumer_pc_shared"

# 2. static: the archive by name, and everything it needs from
# Requires.private and Libs.private
static_libs=$(pkg-config --static --libs rdmarw | sed 's/-lrdmarw\b/-l:librdmarw.a/')
# shellcheck disable=SC2046,SC2086
"$cc" -o "$work/consumer_pc_static" "$src/consumer.c" \
	$(pkg-config --cflags rdmarw) $static_libs
needs "$work/consumer_pc_static" librdmarw && \
	fail "pkg-config static: linked with the shared library"
"$work/consumer_pc_static"

# 3. CMake
cmake -S "$src" -B "$work/cmake" -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_PREFIX_PATH="$root$prefix" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_BUILD_RPATH="$lib" >"$work/cmake.log"
cmake --build "$work/cmake" >>"$work/cmake.log"
needs "$work/cmake/consumer_cmake" librdmarw.so.0 ||
	fail "CMake: rdmarw::rdmarw is not the shared library"
needs "$work/cmake/consumer_cmake_static" librdmarw && \
	fail "CMake: rdmarw::rdmarw_static linked the shared library"
"$work/cmake/consumer_cmake"
"$work/cmake/consumer_cmake_static"
echo "consumer: pkg-config shared, pkg-config static and CMake: ok"

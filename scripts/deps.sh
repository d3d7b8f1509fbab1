#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install what the build and the tests need, only when something is missing.
# Usage: scripts/deps.sh [build|test|deb|bench|bench-ucx|all]
set -e
want="gcc make cmake pkg-config libcmocka-dev libibverbs-dev librdmacm-dev libisal-dev libssl-dev liburing-dev"
case "${1:-build}" in
test) want="$want valgrind clang clang-format libclang-rt-14-dev groff-base" ;;
deb) want="$want dpkg-dev debhelper fakeroot lintian g++ clang man-db manpages-dev" ;;
bench) want="$want gnuplot-nox" ;;
bench-ucx) want="$want gnuplot-nox ucx-utils" ;;
all) want="$want valgrind clang clang-format libclang-rt-14-dev groff-base dpkg-dev debhelper fakeroot lintian g++ man-db manpages-dev" ;;
esac
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing

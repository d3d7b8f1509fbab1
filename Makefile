# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The front door.  `make run` builds and runs the main job; `make test` builds
# and runs every test: the plain build, then ASan+UBSan, then valgrind, then
# the RDMA lab (the project's conformance and interop tests on the kernel's
# rxe and siw, booted under qemu).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps build run test test-plain test-asan test-valgrind install clean format lab

all: build

deps:
	@scripts/deps.sh build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMARW_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The main job: the devices, then a short READ/WRITE sweep through the R/W
# API on the software device next to memcpy (well under 30 s).
run: build
	@$(BUILD)/tools/rdmarw-info
	@echo
	@$(BUILD)/tools/rdmarw-perf --sweep=64:1M --duration=0.1

test: test-plain test-asan test-valgrind lab

test-plain: build
	@scripts/deps.sh test
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: deps
	@scripts/deps.sh test
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRDMARW_WERROR=ON -DRDMARW_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j$(JOBS)

test-valgrind: build
	@scripts/deps.sh test
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L valgrind -T memcheck \
		--overwrite MemoryCheckCommandOptions="--leak-check=full --error-exitcode=99 --errors-for-leak-kinds=definite" \
		|| { cat Testing/Temporary/MemoryChecker.*.log 2>/dev/null | head -50; exit 1; }

# The RDMA lab (tests/lab/README.md): the kernel's rxe and siw under qemu.
lab:
	tests/lab/lab.sh check

install: build
	cmake --install $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The front door.  `make run` builds and runs the main job; `make test` builds
# and runs every test: the plain build, then ASan+UBSan, then valgrind, then
# the threaded tests under ThreadSanitizer, then each libFuzzer target for
# FUZZ_SECONDS plus its seed corpus (docs/reliability.md), then the RDMA lab
# (the project's conformance and interop tests on the kernel's rxe and siw,
# booted under qemu).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps build run test test-plain test-asan test-valgrind test-tsan \
	test-fuzz install clean format lab lab-bench

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

test: test-plain test-asan test-valgrind test-tsan test-fuzz lab

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

# The threaded tests built with clang -fsanitize=thread.
TSAN_TESTS = test_soft_threaded test_rw_threads test_soak test_fault_soft test_soft_stats test_soft_queues test_soft_sig_bounce test_compat_sync test_compat_workqueue
test-tsan: deps
	@scripts/deps.sh test
	@cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMARW_WERROR=ON \
		-DCMAKE_C_FLAGS=-fsanitize=thread \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
	@cmake --build build-tsan -j$(JOBS) --target $(TSAN_TESTS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --output-on-failure -j$(JOBS) \
		-R '^($(subst $(eval) ,|,$(TSAN_TESTS)))$$'

# libFuzzer (clang): the seed corpus as regression tests, then each target
# for FUZZ_SECONDS on a copy of it; a crash fails and leaves its input in
# build-fuzz/.
FUZZ_SECONDS ?= 40
FUZZ_TARGETS = rw_init map_mr_sg wr_chain
test-fuzz: deps
	@scripts/deps.sh test
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMARW_WERROR=ON \
		-DRDMARW_FUZZ=ON -DRDMARW_TESTS=OFF \
		-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		>/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	cd build-fuzz && ctest --output-on-failure -R '^fuzz_'
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build-fuzz/corpus-$$t && \
		build-fuzz/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 -artifact_prefix=build-fuzz/ \
			build-fuzz/corpus-$$t fuzz/corpus/$$t \
			>build-fuzz/fuzz_$$t.log 2>&1 || \
			{ tail -40 build-fuzz/fuzz_$$t.log; exit 1; }; \
		echo "fuzz_$$t: $$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' build-fuzz/fuzz_$$t.log), 0 crashes"; \
	done

# The RDMA lab (tests/lab/README.md): the kernel's rxe and siw under qemu.
lab:
	tests/lab/lab.sh check

# rdmarw-perf next to perftest on the lab's rxe0 and siw0, as ratios.
lab-bench:
	tests/lab/lab.sh bench

install: build
	cmake --install $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan build-fuzz

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
# Quiet builds: one line per file rebuilt and the compiler's diagnostics,
# nothing when nothing changed (no "Built target" or directory lines);
# V=1 shows the commands.
CMAKE_QUIET = -DCMAKE_TARGET_MESSAGES=OFF
BUILD_VERBOSE = $(if $(V),--verbose)
MAKEFLAGS += --no-print-directory

.PHONY: all deps build run test test-plain test-asan test-valgrind test-tsan \
	test-fuzz install clean format format-check lab lab-bench deb \
	check-packages

all: build

deps:
	@scripts/deps.sh build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMARW_WERROR=ON $(CMAKE_QUIET) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) $(BUILD_VERBOSE)

# The main job: the devices, then a short READ/WRITE sweep through the R/W
# API on the software device next to memcpy (well under 30 s).  Builds only
# the two programs it runs (and the library), not the tests.
RUN_TARGETS = rdmarw-info rdmarw-perf
run: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMARW_WERROR=ON $(CMAKE_QUIET) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) $(BUILD_VERBOSE) $(addprefix --target ,$(RUN_TARGETS))
	@$(BUILD)/tools/rdmarw-info
	@echo
	@$(BUILD)/tools/rdmarw-perf --sweep=64:1M --duration=0.1

test: format-check test-plain test-asan test-valgrind test-tsan test-fuzz \
	check-packages lab

test-plain: build
	@scripts/deps.sh test
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: deps
	@scripts/deps.sh test
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRDMARW_WERROR=ON -DRDMARW_SANITIZE=ON $(CMAKE_QUIET) >/dev/null
	@cmake --build build-asan -j$(JOBS) $(BUILD_VERBOSE)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j$(JOBS)

test-valgrind: build
	@scripts/deps.sh test
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L valgrind -T memcheck \
		--overwrite MemoryCheckCommandOptions="--leak-check=full --error-exitcode=99 --errors-for-leak-kinds=definite" \
		|| { cat Testing/Temporary/MemoryChecker.*.log 2>/dev/null | head -50; exit 1; }

# The threaded tests built with clang -fsanitize=thread.
TSAN_TESTS = test_soft_threaded test_rw_threads test_soak test_fault_soft test_soft_stats test_soft_queues test_soft_sig_bounce test_rw_teardown test_cm_threads test_cm_state test_cm_conn test_cm_rw test_compat_sync test_compat_workqueue
TSAN_TESTS += test_core_qp_state test_core_qp_race test_core_lifetime test_core_client
TSAN_TESTS += test_core_cq_pool test_core_srq test_cm_ord
TSAN_TESTS += test_nvmet_threads test_nvmet_smoke test_nvmet_integrity test_nvmet_host_slots
TSAN_TESTS += test_nvmet_admission test_nvmet_reload test_nvmet_stats test_nvmet_auth_expiry
TSAN_TESTS += test_nvmet_poll test_nvmet_poll_async test_nvmet_backend test_nvmet_backend_zcopy
TSAN_TESTS += test_nvmet_tmpfsmap test_nvmet_claim test_nvmet_host_deadline test_nvmet_host_plug
TSAN_TESTS += test_nvmet_host_postfail
TSAN_TESTS += test_soft_mt test_soft_brlock test_core_dma test_lifecycle_threads test_soft_zcopy test_soft_tcp test_soft_tcp_inline test_cm_mpa
# Programs whose CTest names differ from their target names.
TSAN_EXTRA_TARGETS = krping krping_test
TSAN_EXTRA_TESTS = test_cm_state_tcp test_cm_threads_tcp test_cm_conn_tcp test_cm_rw_tcp test_cm_ord_tcp test_soft_mt_membarrier test_soft_brlock_membarrier example_krping_faults example_krping_mlx5_100000 example_krping_rxe_100000 example_krping_siw_100000
test-tsan: deps
	@scripts/deps.sh test
	@cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMARW_WERROR=ON \
		-DCMAKE_C_FLAGS=-fsanitize=thread \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread $(CMAKE_QUIET) >/dev/null
	@cmake --build build-tsan -j$(JOBS) --target $(TSAN_TESTS) $(TSAN_EXTRA_TARGETS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --output-on-failure -j$(JOBS) \
		-R '^($(subst $(eval) ,|,$(TSAN_TESTS) $(TSAN_EXTRA_TESTS)))$$'

# libFuzzer (clang): the seed corpus as regression tests, then each target
# for FUZZ_SECONDS on a copy of it, one per core, the longest first
# (scripts/fuzz-run.sh); a crash fails and leaves its input in build-fuzz/.
FUZZ_SECONDS ?= 40
# fuzz_nvmet_capsule gets longer: from its 19 first seeds it found the
# in-process host's teardown race (issue 26) after 145, 204 and 530 s; from
# the corpus with the two inputs that hit it, after 10-25 s (4 runs of 5).
FUZZ_SECONDS_NVMET ?= 120
# The iWARP receive path shares its 40 s: the codec (iwarp_rx) and the TCP
# transport with the device behind it (tcp_rx) get half each.
FUZZ_SECONDS_IWARP ?= 20
FUZZ_TARGETS = rw_init map_mr_sg wr_chain lifecycle sig nvmet_capsule nvme_auth \
	iwarp_rx tcp_rx
test-fuzz: deps
	@scripts/deps.sh test
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMARW_WERROR=ON \
		-DRDMARW_FUZZ=ON -DRDMARW_TESTS=OFF \
		-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		$(CMAKE_QUIET) >/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	cd build-fuzz && ctest --output-on-failure -R '^fuzz_'
	@for t in $(FUZZ_TARGETS); do \
		if [ $$t = nvmet_capsule ]; then echo "$$t $(FUZZ_SECONDS_NVMET)"; \
		elif [ $$t = iwarp_rx ] || [ $$t = tcp_rx ]; then \
			echo "$$t $(FUZZ_SECONDS_IWARP)"; \
		else echo "$$t $(FUZZ_SECONDS)"; fi; \
	done | sort -k2,2nr | xargs -P $(JOBS) -n 2 scripts/fuzz-run.sh

# The RDMA lab (tests/lab/README.md): the kernel's rxe and siw under qemu,
# in Debian's 6.1 and 6.12 kernels one after the other
# (RDMARW_LAB_KERNELS="6.1 6.12", RDMARW_LAB_NVMEOF=full: three rounds of
# the NVMe-oF integrity checks).
lab:
	tests/lab/lab.sh check

# rdmarw-perf next to perftest, and rdmarw-nvmet next to the kernel's
# nvmet-rdma, on the lab's rxe0 and siw0, as ratios (about 12 minutes).
lab-bench:
	tests/lab/lab.sh bench

install: build
	cmake --install $(BUILD)

# Debian packages (librdmarw0, librdmarw-dev, rdmarw-tools) from the
# tracked files of this tree, built in build-deb/ (dpkg-buildpackage writes
# next to the source, so the source is copied there first) with every core
# (-j: DEB_BUILD_OPTIONS parallel); dpkg -c lists what each holds.
DEB_SRC = build-deb/rdmarw-$(shell sed -n 's/^rdmarw (\(.*\)).*/\1/p;q' debian/changelog)
deb:
	@scripts/deps.sh deb
	rm -rf build-deb && mkdir -p $(DEB_SRC)
	git ls-files -z | tar --null -T - -cf - | tar -C $(DEB_SRC) -xf -
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -j$(JOBS) >../build.log 2>&1 || \
		{ tail -40 ../build.log; exit 1; }
	@sh debian/check-debs.sh build-deb

# The packages as a user meets them (scripts/check-packages.sh): installed
# in a scratch root beside librdmacm-dev, libibverbs-dev and manpages-dev
# (a file conflict fails), lintian --pedantic, the README's example built
# on the installed files with gcc and clang, C11 and C++17, shared and
# static.  1 to 5 minutes on two cores (measured 52 s idle, 4.6 min loaded).
check-packages:
	@scripts/check-packages.sh

FORMAT_FILES = $$(git ls-files '*.c' '*.h' '*.cpp')

format:
	clang-format -i $(FORMAT_FILES)

# Fails (and lists the differences) when a file is not formatted as the
# repo's .clang-format says; the first step of make test.
format-check:
	@scripts/deps.sh test
	@clang-format --dry-run -Werror $(FORMAT_FILES)
	@! git grep -n -E '^(<<<<<<<|>>>>>>>) ' -- ':!*.orig' || \
		{ echo 'format-check: merge conflict markers (above)'; exit 1; }

clean:
	rm -rf build build-asan build-tsan build-fuzz build-deb

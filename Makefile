# SPDX-License-Identifier: MIT
# Thin wrapper over CMake. `make test` and `make bench` do all their own
# set-up on a fresh Debian machine.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest

.PHONY: all test test-debug test-asan test-valgrind test-tsan test-wine bench bench-quick fuzz format clean

all:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=Release
	$(CMAKE) --build build/release -j$(JOBS)

# scripts/setup-deps.sh installs what is missing (Debian), then
# scripts/test.sh runs the stages: gcc with warnings as errors, ASan+UBSan
# (clang), valgrind memcheck, the thread_* cases under TSan, and the
# mingw-w64 build under wine. Its last line sums them: "N passed, N failed".
# test-<stage> runs one stage (no set-up).
test:
	@scripts/setup-deps.sh
	@JOBS=$(JOBS) CMAKE=$(CMAKE) CTEST=$(CTEST) scripts/test.sh

test-debug test-asan test-valgrind test-tsan test-wine:
	@JOBS=$(JOBS) CMAKE=$(CMAKE) CTEST=$(CTEST) scripts/test.sh $(@:test-%=%)

# Benchmarks write only under build/bench/ (results in build/bench/results/);
# a run changes no tracked file. bench-doc rewrites the dated
# docs/benchmarks.md (and its few charts in docs/img/) from the last full
# run, or from BENCH_CSV.
BENCH_CSV ?= build/bench/results/latest.csv
bench:
	bench/run.sh full

bench-quick:
	bench/run.sh quick

.PHONY: bench-doc
bench-doc:
	@test -f $(BENCH_CSV) || { echo "no $(BENCH_CSV): run make bench first" >&2; exit 1; }
	python3 bench/report.py $(BENCH_CSV) --doc docs/benchmarks.md --doc-charts docs/img

# The single-file distribution: build/single_file/ark.h (stb style; see
# README "Single file"). ctest compiles and runs it (single_file.example).
.PHONY: single-file
single-file:
	python3 scripts/amalgamate -o build/single_file/ark.h

# libFuzzer targets under ASan+UBSan, FUZZ_SECONDS each (default 60).
FUZZ_SECONDS ?= 60
fuzz:
	$(CMAKE) -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DARK_FUZZ=ON \
	    -DARK_TESTS=OFF -DARK_EXAMPLES=OFF -DARK_BENCH=OFF -DARK_SANITIZE=address \
	    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	$(CMAKE) --build build/fuzz -j$(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh build/fuzz

format:
	$(CMAKE) -S . -B build/test -DARK_WERROR=ON
	$(CMAKE) --build build/test --target format

clean:
	rm -rf build

# Thin wrapper over CMake. `make test` and `make bench` do all their own
# set-up on a fresh Debian machine.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest

.PHONY: all test test-debug test-asan test-valgrind test-tsan bench bench-quick fuzz format clean

all:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=Release
	$(CMAKE) --build build/release -j$(JOBS)

# Warnings as errors, then the same suite under ASan+UBSan, then under
# valgrind memcheck, then the tests named thread_* (ctest label "threads")
# under TSan. ctest's summary of the last run is the last thing printed.
test: test-debug test-asan test-valgrind test-tsan

test-debug:
	$(CMAKE) -S . -B build/test -DCMAKE_BUILD_TYPE=Debug -DARK_WERROR=ON -DARK_TESTS=ON -DARK_EXAMPLES=ON
	$(CMAKE) --build build/test -j$(JOBS)
	cd build/test && $(CTEST) --output-on-failure -j$(JOBS)

test-asan:
	$(CMAKE) -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DARK_WERROR=ON -DARK_TESTS=ON -DARK_EXAMPLES=ON \
	    -DARK_SANITIZE=address -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	$(CMAKE) --build build/asan -j$(JOBS)
	cd build/asan && $(CTEST) --output-on-failure -j$(JOBS)

# gcc build, no sanitizer, every test program under memcheck. The bench
# smoke runs and the style checks are not memory tests: excluded here.
test-valgrind:
	$(CMAKE) -S . -B build/valgrind -DCMAKE_BUILD_TYPE=Debug -DARK_WERROR=ON -DARK_TESTS=ON -DARK_EXAMPLES=ON \
	    -DARK_VALGRIND=ON
	$(CMAKE) --build build/valgrind -j$(JOBS)
	cd build/valgrind && $(CTEST) --output-on-failure -j$(JOBS) -E '^(bench|style|readme)\.'

# Only what the thread tests need is built (target ark_thread_tests).
test-tsan:
	$(CMAKE) -S . -B build/tsan -DCMAKE_BUILD_TYPE=Debug -DARK_WERROR=ON -DARK_TESTS=ON -DARK_EXAMPLES=OFF -DARK_BENCH=OFF \
	    -DARK_SANITIZE=thread -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	$(CMAKE) --build build/tsan -j$(JOBS) --target ark_thread_tests
	cd build/tsan && $(CTEST) --output-on-failure -j$(JOBS) -L threads

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

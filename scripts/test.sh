#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the test stages and sum them. Usage: scripts/test.sh [stage...]
# Stages (default: all, in this order):
#   debug     gcc, warnings as errors, every test (consumer projects too)
#   asan      clang, AddressSanitizer + UndefinedBehaviorSanitizer
#   valgrind  gcc, every test program under memcheck
#   tsan      clang, ThreadSanitizer, the thread_* cases only
#   wine      mingw-w64 cross build, every test program under wine
# Each stage configures build/<dir>, builds, and runs ctest; a stage that
# fails to configure or build counts as one failed test. The last line is
# the sum over the stages: "N passed, N failed". Exit status 1 if any
# test failed. JOBS sets the parallelism (default: nproc).
set -uo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
CMAKE=${CMAKE:-cmake}
CTEST=${CTEST:-ctest}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(debug asan valgrind tsan wine)

total_pass=0
total_fail=0
summary=()

# run_stage NAME DIR CONFIGURE_ARGS... -- BUILD_ARGS... -- CTEST_ARGS...
run_stage() {
  local name=$1 dir=$2
  shift 2
  local cfg=() bld=() tst=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do cfg+=("$1"); shift; done
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do bld+=("$1"); shift; done
  shift
  tst=("$@")
  local start=$SECONDS log="$dir.log"
  mkdir -p "$dir"
  echo "=== stage $name ($dir)"
  local pass=0 fail=0 note=""
  if ! "$CMAKE" -S . -B "$dir" "${cfg[@]}" >"$log" 2>&1; then
    tail -n 40 "$log"
    fail=1 note=" (configure failed, see $log)"
  elif ! "$CMAKE" --build "$dir" -j"$JOBS" "${bld[@]}" >>"$log" 2>&1; then
    grep -E 'error|warning' "$log" | head -n 40
    tail -n 20 "$log"
    fail=1 note=" (build failed, see $log)"
  else
    local out="$dir/ctest.out"
    [ -z "${PRE_CTEST:-}" ] || "$PRE_CTEST"
    (cd "$dir" && "$CTEST" --output-on-failure -j"$JOBS" "${tst[@]}") \
      2>&1 | tee "$out"
    [ -z "${POST_CTEST:-}" ] || "$POST_CTEST"
    local line
    line=$(grep -E '[0-9]+ tests? failed out of [0-9]+' "$out" | tail -n 1)
    if [ -z "$line" ]; then
      fail=1 note=" (ctest ran no test)"
    else
      local n_fail n_all
      n_fail=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
      n_all=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
      pass=$((n_all - n_fail)) fail=$n_fail
    fi
  fi
  local secs=$((SECONDS - start))
  summary+=("stage $name: $pass passed, $fail failed, ${secs}s$note")
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
}

# The Windows stage. wine's first start in a fresh WINEPREFIX takes ~10 s,
# so the prefix lives under build/mingw and one wineserver is kept alive
# while ctest runs instead of starting one per test program.
WINE=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
WINESERVER=$(command -v wineserver || echo /usr/lib/wine/wineserver)
# wineboot also starts wine's background services (services.exe, ...)
# with /dev/null as their output: started by the first test instead, they
# would inherit ctest's pipe and ctest would wait for them after the test.
wine_up() {
  if [ -x "$WINE" ] && [ -x "$WINESERVER" ]; then
    mkdir -p "$WINEPREFIX"
    "$WINESERVER" -p
    "$WINE" wineboot </dev/null >/dev/null 2>&1
  fi
}
wine_down() {
  [ ! -x "$WINESERVER" ] || "$WINESERVER" -k >/dev/null 2>&1 || true
}
# A test is run a second time only if its first run fails: wine itself
# occasionally fails to start a process (a 0.01 s failure, seen once in
# ~500 runs); a real failure fails twice.
wine_stage() {
  export WINEPREFIX="$PWD/build/mingw/wineprefix" WINEDEBUG=-all
  PRE_CTEST=wine_up POST_CTEST=wine_down run_stage wine build/mingw \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-mingw64.cmake" \
    -DCMAKE_BUILD_TYPE=Debug -DARK_WERROR=ON -DARK_TESTS=ON \
    -DARK_EXAMPLES=ON -- -- -E '^(style|readme|docs)\.' --repeat until-pass:2
}

debug=(-DCMAKE_BUILD_TYPE=Debug -DARK_WERROR=ON -DARK_TESTS=ON -DARK_EXAMPLES=ON)
clang=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
for s in "${stages[@]}"; do
  case $s in
  debug)
    run_stage debug build/test "${debug[@]}" -- -- ;;
  asan)
    run_stage asan build/asan "${debug[@]}" "${clang[@]}" \
      -DARK_SANITIZE=address -- -- ;;
  valgrind)
    # The bench smoke runs and the style checks are not memory tests.
    run_stage valgrind build/valgrind "${debug[@]}" -DARK_VALGRIND=ON -- -- \
      -E '^(bench|style|readme|docs)\.' ;;
  tsan)
    # Only what the thread tests need is built (target ark_thread_tests).
    run_stage tsan build/tsan "${debug[@]}" "${clang[@]}" -DARK_EXAMPLES=OFF \
      -DARK_BENCH=OFF -DARK_SANITIZE=thread -- --target ark_thread_tests -- \
      -L threads ;;
  wine)
    wine_stage ;;
  *)
    echo "unknown stage $s (debug asan valgrind tsan wine)" >&2
    exit 2 ;;
  esac
done

echo "==="
for l in "${summary[@]}"; do echo "$l"; done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]

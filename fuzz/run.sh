#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every libFuzzer target in BUILD_DIR/fuzz for FUZZ_SECONDS each, seeded
# from fuzz/corpus/<module>/ (read-only: new inputs go to BUILD_DIR), and
# print one line per target: executions, new corpus inputs, crashes.
# Exits non-zero if any target crashed; the crashing input is kept under
# BUILD_DIR/artifacts/ to be added to fuzz/corpus/ once fixed.
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR}
seconds=${FUZZ_SECONDS:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build/artifacts"
status=0
printf '%-10s %12s %8s %8s\n' target execs corpus crashes
for bin in "$build"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  module=${bin##*/fuzz_}
  work="$build/corpus/$module"
  mkdir -p "$work"
  log="$build/fuzz_$module.log"
  "$bin" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$module-" \
    "$work" "$root/fuzz/corpus/$module" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  found=$(ls "$work" | wc -l)
  crashes=0
  if [ $rc -ne 0 ]; then
    crashes=1
    status=1
    echo "fuzz_$module failed (exit $rc); see $log" >&2
    tail -30 "$log" >&2
  fi
  printf '%-10s %12s %8s %8s\n' "$module" "${execs:-?}" "$found" "$crashes"
done
exit $status

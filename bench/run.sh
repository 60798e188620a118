#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh MODE - build and run every benchmark, then write the report.
#   MODE = full  (make bench)        -> build/bench/results/latest.{csv,env,md},
#                                       charts in build/bench/results/latest/
#          quick (make bench-quick)  -> build/bench/results/quick.{csv,env,md},
#                                       charts in build/bench/results/quick/
#          smoke (a check that everything runs) -> build/bench/results/smoke.*
# Everything it writes is under build/ (and cargo's bench/rust/Cargo.lock,
# which git ignores): a run changes no tracked file.
# `make bench-doc` turns the last full run into docs/benchmarks.md.
#
# 1. Installs missing Debian packages (bench/*.deps plus the tools below)
#    with apt-get when root and online; a peer whose package cannot be
#    installed is skipped with a one-line message naming the package.
# 2. Configures build/bench as Release with exactly -O2 -DNDEBUG (no
#    -march=native), builds every bench program and the C++ peers, then the
#    Rust peers (Debian's cargo/rustc, offline, bench/rust) and the Go peers
#    (bench/go/<section>).
# 3. Runs `prog --list-impls`, then `prog --mode MODE --impl NAME` once per
#    implementation (one process each, so peak RSS is that
#    implementation's), for every program found; collects the CSV rows.
#    ROUNDS=k (environment) repeats the whole run k times, interleaved.
# 4. bench/report.py turns the CSV into the markdown tables and charts.
set -uo pipefail

MODE=${1:-}
case "$MODE" in
full | quick | smoke) ;;
*)
    echo "usage: bench/run.sh full|quick|smoke" >&2
    exit 2
    ;;
esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=$ROOT/build/bench
JOBS=${JOBS:-2}
FLAGS="-O2 -DNDEBUG"
mkdir -p "$BUILD"

say() { echo "bench: $*" >&2; }

# ---- 1. packages ---------------------------------------------------------

# Tools the driver itself needs, then every section's peers.
BASE_PKGS="cmake make gcc g++ python3 gnuplot-nox"
PEER_PKGS=$(cat bench/*.deps 2>/dev/null | sed 's/#.*//' | tr -s ' \t\n' '\n' |
    grep -v '^$' | sort -u | tr '\n' ' ')

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in $BASE_PKGS $PEER_PKGS; do
    installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        say "not root, not installing: ${missing[*]}"
    elif ! command -v apt-get >/dev/null 2>&1; then
        say "no apt-get, not installing: ${missing[*]}"
    else
        export DEBIAN_FRONTEND=noninteractive
        say "installing ${missing[*]}"
        timeout 300 apt-get update -qq >/dev/null 2>&1 ||
            say "apt-get update failed (offline?); trying the cached lists"
        if ! timeout 900 apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null 2>&1; then
            # One at a time, so one unavailable package skips one peer.
            for p in "${missing[@]}"; do
                timeout 600 apt-get install -y -qq --no-install-recommends \
                    "$p" >/dev/null 2>&1 || say "could not install $p"
            done
        fi
    fi
fi
for p in $BASE_PKGS $PEER_PKGS; do
    installed "$p" || say "package $p is missing: what needs it is skipped"
done
command -v cmake >/dev/null && command -v cc >/dev/null || {
    say "cmake and a C compiler are required"
    exit 1
}

# ---- machine and toolchains ---------------------------------------------

# Debian's toolchains by absolute path: a rustup or other toolchain earlier
# in PATH must not change what is measured.
CARGO=/usr/bin/cargo
RUSTC=/usr/bin/rustc
GO=/usr/bin/go
first_line() { "$@" 2>/dev/null | head -n 1; }
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
[ -n "$cpu" ] || cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
ENV_LINES=(
    "mode: $MODE, $(date -u '+%Y-%m-%d %H:%M UTC')"
    "machine: ${cpu:-unknown CPU}, $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
    "gcc: $(first_line gcc --version)"
    "g++: $(first_line g++ --version)"
    "rustc: $(first_line $RUSTC --version || echo none)"
    "go: $(first_line $GO version || echo none)"
    "flags: C/C++ $FLAGS (no -march=native); Rust release, lto, codegen-units=1; Go default"
)
# ARK_BENCH_CLOCK=thread (bench_common.h, bench/rust/src/clock.rs): the C,
# C++ and Rust programs time with the thread's CPU clock instead.
if [ "${ARK_BENCH_CLOCK:-}" = thread ]; then
    ENV_LINES+=("clock: thread CPU time (ARK_BENCH_CLOCK=thread; Go peers: wall time)")
else
    ENV_LINES+=("clock: monotonic wall time")
fi
echo "# ark benchmarks"
printf '# %s\n' "${ENV_LINES[@]}"

# ---- 2. build --------------------------------------------------------------

BUILD_LOG=$BUILD/build.log
: >"$BUILD_LOG"
say "building (log: build/bench/build.log)"
if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="$FLAGS" -DCMAKE_CXX_FLAGS_RELEASE="$FLAGS" \
    -DARK_TESTS=OFF -DARK_EXAMPLES=OFF -DARK_BENCH=ON \
    -DARK_BENCH_PEERS=ON >>"$BUILD_LOG" 2>&1; then
    tail -n 30 "$BUILD_LOG" >&2
    say "cmake configure failed"
    exit 1
fi
grep -E "^-- bench" "$BUILD_LOG" | sed 's/^-- /bench: /' >&2
if ! cmake --build "$BUILD" -j"$JOBS" >>"$BUILD_LOG" 2>&1; then
    # Target by target, so one broken program does not hide the others.
    cmake --build "$BUILD" --target ark >>"$BUILD_LOG" 2>&1 || {
        tail -n 30 "$BUILD_LOG" >&2
        say "the ark library failed to build"
        exit 1
    }
    targets=$(cmake --build "$BUILD" --target help 2>/dev/null |
        sed -n 's/^\.\.\. \([A-Za-z0-9_]*\).*/\1/p' |
        grep -Ev '^(all|clean|depend|edit_cache|rebuild_cache|ark)$')
    for t in $targets; do
        cmake --build "$BUILD" -j"$JOBS" --target "$t" >>"$BUILD_LOG" 2>&1 ||
            say "build of $t failed (see build/bench/build.log): skipped"
    done
fi

if [ -f bench/rust/Cargo.toml ]; then
    if [ -x "$CARGO" ] && [ -x "$RUSTC" ]; then
        # From bench/rust so its .cargo/config.toml (Debian's registry as a
        # directory source, offline) applies; CARGO_HOME kept in build/.
        if ! (cd bench/rust && CARGO_HOME=$BUILD/cargo-home RUSTC=$RUSTC \
            "$CARGO" build --release --offline --quiet \
            --target-dir "$BUILD/rust") >>"$BUILD_LOG" 2>&1; then
            say "Rust peers failed to build (see build/bench/build.log; packages cargo rustc librust-slotmap-dev): skipped"
        fi
    else
        say "Rust peers skipped: install cargo and rustc"
    fi
fi

if compgen -G "bench/go/*/*.go" >/dev/null; then
    if [ -x "$GO" ]; then
        for d in bench/go/*/; do
            sec=$(basename "$d")
            (cd bench/go && GOCACHE=$BUILD/go/cache GOPATH=$BUILD/go/path \
                GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on \
                "$GO" build -o "$BUILD/go/bench_${sec}_go" "./$sec") \
                >>"$BUILD_LOG" 2>&1 ||
                say "Go peers of $sec failed to build (see build/bench/build.log): skipped"
        done
    else
        say "Go peers skipped: install golang-go"
    fi
fi

# ---- 3. run ----------------------------------------------------------------

# What first touching memory costs here (bench/probe_memory.c): a machine
# line of the results, and a warning when it is far from a typical host's.
probe=$BUILD/bench/probe_memory
if [ -x "$probe" ] && mem_line=$("$probe" 2>/dev/null); then
    ENV_LINES+=("$mem_line")
    say "$mem_line"
    us=$(printf '%s\n' "$mem_line" | sed -n 's/.*first touch \([0-9.]*\) us.*/\1/p')
    if [ -n "$us" ] && awk -v u="$us" 'BEGIN { exit !(u > 2) }'; then
        say "warning: this machine takes ${us} us to first touch a page (typically"
        say "  under 1): insert rows and first passes measure the host"
        say "  (docs/bench.md, \"Machines whose memory is slow to touch\")"
    fi
fi

RESULTS=$BUILD/results
case "$MODE" in
full) NAME=latest TIMEOUT=900 ;;
quick) NAME=quick TIMEOUT=120 ;;
smoke) NAME=smoke TIMEOUT=120 ;;
esac
CSV=$RESULTS/$NAME.csv
mkdir -p "$(dirname "$CSV")"
TMP=$BUILD/rows.csv
: >"$TMP"
progs=$(find "$BUILD" "$BUILD/bench" "$BUILD/rust/release" "$BUILD/go" \
    -maxdepth 1 -type f -perm -u+x -name 'bench_*' 2>/dev/null | sort -u)
[ -n "$progs" ] || {
    say "no bench program was built"
    exit 1
}
# ROUNDS=k runs every implementation k times, interleaved (all of them,
# then all again), so a load change on a shared machine hits them all;
# the report takes the median of the rounds.
ROUNDS=${ROUNDS:-1}
fail=0
start=$(date +%s)
for round in $(seq 1 "$ROUNDS"); do
[ "$ROUNDS" -gt 1 ] && say "round $round of $ROUNDS"
for prog in $progs; do
    name=$(basename "$prog")
    impls=$("$prog" --list-impls 2>/dev/null) || {
        say "$name --list-impls failed: skipped"
        fail=1
        continue
    }
    for impl in $impls; do
        t0=$(date +%s)
        out=$(timeout "$TIMEOUT" "$prog" --mode "$MODE" --impl "$impl" \
            2>"$BUILD/stderr.txt")
        rc=$?
        rows=$(printf '%s\n' "$out" | grep -v '^#' |
            awk -F, 'NF == 10' || true)
        printf '%s\n' "$rows" | grep -v '^$' >>"$TMP"
        if [ $rc -ne 0 ]; then
            say "$name --impl $impl exited with $rc: $(tail -n 1 "$BUILD/stderr.txt")"
            fail=1
        fi
        say "$name $impl: $(printf '%s\n' "$rows" | grep -c .) rows, $(($(date +%s) - t0)) s"
    done
done
done
# A pool's first fill in a fresh process, ark and the hand-rolled slot
# array alternating, one process each per pair: rows first_fill_p1.. (one
# cell per pair, since what fresh memory costs changes from one process to
# the next; a median would hide the slow ones). bench_pool --first-fill
# prints "first_fill,IMPL,N,X ns/insert,AnonHugePages K kB,CHECK".
pool=$BUILD/bench/bench_pool
if [ -x "$pool" ]; then
    case "$MODE" in
    full) pairs=10 n=10000000 ;;
    quick) pairs=3 n=1000000 ;;
    *) pairs=1 n=10000 ;;
    esac
    for p in $(seq 1 "$pairs"); do
        for impl in ark slotarray; do
            timeout "$TIMEOUT" "$pool" --first-fill "$impl" "$n" |
                awk -F, -v p="$p" 'NF == 6 { v = $4 + 0
                    printf "pool,first_fill_p%d,%s,%s,%s,%s,%s,ns/op,0,%s\n",
                        p, $3, $2, v, v, v, $6 }' >>"$TMP" || fail=1
        done
    done
    say "pool first fill: $pairs fresh processes each"
fi
say "ran everything in $(($(date +%s) - start)) s"
{
    echo "section,workload,n,impl,value,min,max,unit,peak_rss_kib,checksum"
    cat "$TMP"
} >"$CSV"
printf '%s\n' "${ENV_LINES[@]}" >"${CSV%.csv}.env"
say "wrote $CSV"

# ---- lua: bench/lua/bench.lua, once per interpreter the build found -------
for lua in lua54:lua5.4 luajit:luajit; do
    dir=$BUILD/bindings/lua/${lua%%:*} exe=${lua#*:}
    if [ ! -f "$dir/ark.so" ] || ! command -v "$exe" >/dev/null; then
        say "lua: $exe skipped (packages lua5.4 liblua5.4-dev luajit libluajit-5.1-dev)"
        continue
    fi
    (cd bench/lua && LUA_CPATH="$dir/?.so" LUA_PATH="$dir/?.lua;;" \
        timeout "$TIMEOUT" "$exe" bench.lua "$MODE") |
        tee "$RESULTS/lua_${lua%%:*}.txt" || fail=1
done

# ---- 4. report -------------------------------------------------------------

if [ "$MODE" = smoke ]; then
    python3 bench/report.py "$CSV" --md "$RESULTS/$NAME.md"
else
    python3 bench/report.py "$CSV" --md "$RESULTS/$NAME.md" \
        --charts "$RESULTS/$NAME"
fi || {
    say "report failed"
    fail=1
}
say "report: build/bench/results/$NAME.md"
[ "$MODE" = full ] && say "make bench-doc rewrites docs/benchmarks.md from this run"
exit $fail

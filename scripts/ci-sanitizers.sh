#!/usr/bin/env bash
# Checked builds of gpkv for CI (called from .ci/run):
#  1. ASan + UBSan (-DGPKV_SANITIZE=address,undefined, CPU only, clang++-14):
#     builds the gpkv tool and the crash, corruption, limits and fuzz tests,
#     and runs them (`ctest -L 'corruption|crash|limits|fuzz'`). UBSan halts on
#     the first report. The crash suite runs at GPKV_CRASH_SCALE (default 0.1
#     of its sample counts: the sanitizers make each crash state several times
#     slower; the plain build runs the full counts). The same build holds the
#     pool fuzzer (-DGPKV_FUZZER=ON: the library's objects also carry
#     libFuzzer's coverage instrumentation), which scripts/ci-fuzz.sh builds
#     and runs there: the sanitized library is compiled once for both. It is
#     built without NDEBUG, as the fuzzer needs: Abseil's and libcuckoo's
#     assertions stay on.
#  2. TSan (-DGPKV_SANITIZE=thread, g++): builds the concurrency tests and
#     runs them (`ctest -L concurrency`) with one worker per batch
#     (GPKV_CONCURRENCY_CPU_THREADS=1, OMP_NUM_THREADS=1) but several host
#     threads: libgomp is not built with TSan, so an OpenMP team inside a batch
#     gives false reports. The races TSan looks for here are between host
#     threads running batches on one table at once, which this keeps. Races
#     between an atomic and a plain access are not reported (see
#     report_atomic_races below: the kernel's SSE slot snapshots).
#
# Both builds are also -DGPKV_CHECKED=ON: reading a Result that holds an
# error aborts there (include/gpkv/status.h) instead of reading garbage.
#
# Usage: scripts/ci-sanitizers.sh [asan|tsan|all|asan-configure]   (default all)
#   asan-configure only configures the ASan + UBSan build (scripts/ci-fuzz.sh
#   builds its fuzzer there).
# Environment: GPKV_JOBS (build jobs, default nproc), GPKV_ASAN_BUILD /
# GPKV_TSAN_BUILD (build folders, default build-asan / build-tsan),
# GPKV_ASAN_CXX (the ASan build's compiler, default clang++-14: clang-14, its
# runtime libraries and libomp are installed with apt-get when missing),
# GPKV_CRASH_SCALE.
# Exits non-zero when a build or a test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

what=${1:-all}
jobs=${GPKV_JOBS:-$(nproc)}
asan_dir=${GPKV_ASAN_BUILD:-build-asan}
tsan_dir=${GPKV_TSAN_BUILD:-build-tsan}
# -O1 with line tables (-g1) instead of RelWithDebInfo's -O2 -g: ASan + UBSan
# compile 2.3x faster, reports still name file and line, and -O1 is what
# the sanitizers' own documentation recommends.
checked_flags="-O1 -g1"
asan_cxx=${GPKV_ASAN_CXX:-clang++-14}

configure_asan() {
  # clang's, because libFuzzer needs clang: the library is then compiled once
  # for the tests and the fuzzer. Under ASan + UBSan clang also compiles these
  # sources faster than g++ (this stage's targets and the fuzzer: 574 s of
  # CPU against g++'s 977 s for the targets alone). OpenMP is clang's libomp.
  if ! command -v "$asan_cxx" >/dev/null 2>&1 ||
    ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
    [ ! -e /usr/lib/llvm-14/lib/libomp.so ]; then
    echo "ci-sanitizers: installing clang-14, its runtime libraries and libomp with apt-get" >&2
    local as_root=()
    [ "$(id -u)" -ne 0 ] && as_root=(sudo)
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends clang-14 libclang-rt-14-dev libomp-14-dev
  fi
  # Without NDEBUG: the fuzzer's checks include Abseil's and libcuckoo's
  # assertions. UBSan halts at the first report whatever UBSAN_OPTIONS say.
  cmake -S . -B "$asan_dir" -G Ninja \
    -DCMAKE_CXX_COMPILER="$asan_cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPKV_SANITIZE=address,undefined \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$checked_flags -fno-sanitize-recover=undefined" \
    -DGPKV_CHECKED=ON \
    -DGPKV_FUZZER=ON \
    -DGPKV_WITH_CUDA=OFF \
    -DGPKV_BUILD_BENCH=ON \
    -DGPKV_BUILD_TESTS=ON
}

run_asan() {
  echo "== ASan + UBSan build ($asan_dir)" >&2
  configure_asan
  # Only what this stage runs: the tests of its labels and the gpkv tool they
  # call (the plain build compiles everything else).
  targets=(gpkv_tool)
  for source in tests/{corruption,crash,limits,fuzz}/*_test.cc; do
    targets+=("$(basename "$source" .cc)")
  done
  cmake --build "$asan_dir" -j"$jobs" --target "${targets[@]}"
  echo "== ASan + UBSan: ctest -L 'corruption|crash|limits|fuzz'" >&2
  (
    cd "$asan_dir"
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:strict_string_checks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    export GPKV_CRASH_SCALE=${GPKV_CRASH_SCALE:-0.1}
    set +e
    ctest --output-on-failure --verbose -L 'corruption|crash|limits|fuzz' --no-tests=error -j"$jobs" \
      --timeout 3600 2>&1 | tee ctest-asan.log
    status=${PIPESTATUS[0]}
    set -e
    echo "== ASan + UBSan totals" >&2
    grep -E '\[crash totals\]' ctest-asan.log || true
    exit "$status"
  )
}

run_tsan() {
  echo "== TSan build ($tsan_dir)" >&2
  cmake -S . -B "$tsan_dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPKV_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$checked_flags -DNDEBUG" \
    -DGPKV_CHECKED=ON \
    -DGPKV_WITH_CUDA=OFF \
    -DGPKV_BUILD_BENCH=OFF \
    -DGPKV_BUILD_TESTS=ON
  targets=()
  for source in tests/concurrency/*_test.cc; do
    targets+=("$(basename "$source" .cc)")
  done
  cmake --build "$tsan_dir" -j"$jobs" --target "${targets[@]}"
  echo "== TSan: ctest -L concurrency (1 worker per batch, several host threads)" >&2
  (
    cd "$tsan_dir"
    # report_atomic_races=0: the CPU kernel reads a bucket's slot words with
    # aligned 16-byte SSE loads while other threads CAS them, and validates
    # the snapshot afterwards (tables/gphash/cpu/kernel.h TakeSnapshot, a
    # seqlock-style read). TSan cannot see those loads as atomic and reports
    # every CAS against them; this keeps every race between plain accesses
    # (value cells, keys, the engine, allocators). Drop it once TakeSnapshot
    # uses atomic loads (or is annotated) under TSan.
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:report_atomic_races=0}
    export GPKV_CONCURRENCY_CPU_THREADS=1
    export GPKV_CONCURRENCY_BATCHES=${GPKV_CONCURRENCY_BATCHES:-1024}  # still > 1M operations per test
    export OMP_NUM_THREADS=1
    set +e
    ctest --output-on-failure --verbose -L concurrency --no-tests=error -j"$jobs" --timeout 3600 2>&1 |
      tee ctest-tsan.log
    status=${PIPESTATUS[0]}
    set -e
    echo "== TSan totals" >&2
    grep -E '\[crash totals\]' ctest-tsan.log || true
    exit "$status"
  )
}

case "$what" in
  asan) run_asan ;;
  asan-configure) configure_asan ;;
  tsan) run_tsan ;;
  all)
    run_asan
    run_tsan
    ;;
  *)
    echo "usage: $0 [asan|tsan|all|asan-configure]" >&2
    exit 1
    ;;
esac
echo "ci-sanitizers: ok" >&2

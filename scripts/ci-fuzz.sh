#!/usr/bin/env bash
# Coverage-guided fuzzing of pool files (called from .ci/run).
#
# Builds tests/fuzz/pool_fuzzer.cc with clang++ -fsanitize=fuzzer,address,
# undefined directly against the library sources (the CPU-only part of the
# CMakeLists.txt glob: engine/ pm/ format/ util/ recovery/ and each table
# family's shared and cpu/ code; the CMake build uses g++ and cannot link
# libFuzzer),
# writes the seed pools of the current format, then fuzzes a fixed number of
# inputs from fixed seeds over those seeds, the checked-in corpus
# (tests/fuzz/corpus/) and the corpus kept from earlier runs. In a fresh clone
# the run is the same on every machine: its verdict does not depend on how
# fast the machine is (a time bound would make it). Explore further with a
# larger count or another seed. Prints the executions run and the crashes found;
# exits 1 when the fuzzer found a crash or a violated property (its input is
# left in the artifacts folder: turn it into a regression test under
# tests/corruption/).
#
# Usage: scripts/ci-fuzz.sh [runs [seed]]
#   runs: inputs to execute (default GPKV_FUZZ_RUNS or 40000: about 100 s
#   on 2 cores, in two processes); seed: libFuzzer's random seed (default
#   GPKV_FUZZ_SEED or 1; the second process runs from seed + 1).
# Environment: GPKV_FUZZ_PROCESSES (default 2), GPKV_FUZZ_BUILD (folder,
# default build-fuzz), GPKV_FUZZ_CXX (default clang++-14, installed with
# apt-get when missing), GPKV_JOBS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${1:-${GPKV_FUZZ_RUNS:-40000}}
seed=${2:-${GPKV_FUZZ_SEED:-1}}
out=${GPKV_FUZZ_BUILD:-build-fuzz}
cxx=${GPKV_FUZZ_CXX:-clang++-14}
jobs=${GPKV_JOBS:-$(nproc)}

if ! command -v "$cxx" >/dev/null 2>&1 ||
  ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  [ ! -e /usr/lib/llvm-14/lib/libomp.so ]; then
  echo "ci-fuzz: installing clang-14, its runtime libraries and libomp with apt-get" >&2
  as_root=()
  [ "$(id -u)" -ne 0 ] && as_root=(sudo)
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends clang-14 libclang-rt-14-dev libomp-14-dev
fi

mkdir -p "$out/obj" "$out/corpus" "$out/seeds" "$out/artifacts"
common=(-std=c++17 -g1 -O1 -march=x86-64-v2 -fopenmp -fno-omit-frame-pointer
  -fsanitize=address,undefined -fno-sanitize-recover=undefined
  -I. -Iinclude $(pkg-config --cflags libpmem2))

# The library, instrumented for coverage (fuzzer-no-link); rebuilt per file
# when its source or any header is newer than its object.
shopt -s nullglob
# Keep in step with GPKV_SOURCES in CMakeLists.txt and the families' folders
# in tables/CMakeLists.txt, a mode folder such as tables/gphash/logged/
# included (a folder missing here fails the link below, not silently).
sources=(engine/*.cc pm/*.cc format/*.cc util/*.cc recovery/*.cc
  tables/*.cc tables/*/*.cc tables/*/cpu/*.cc tables/gphash/logged/*.cc)
newest_header=$(find include format pm util recovery engine tables -name '*.h' -printf '%T@\n' |
  sort -n | tail -1)
objects=()
pids=()
for source in "${sources[@]}"; do
  object="$out/obj/${source//\//_}.o"
  objects+=("$object")
  if [ -f "$object" ] && [ "$object" -nt "$source" ] &&
    [ "$(stat -c %Y "$object")" -ge "${newest_header%.*}" ]; then
    continue
  fi
  "$cxx" "${common[@]}" -fsanitize=fuzzer-no-link -c "$source" -o "$object" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
echo "ci-fuzz: linking $out/pool_fuzzer" >&2
# Abseil's btree (the B-tree family's CPU backend) logs through absl's
# libraries in a build without NDEBUG, as this one is.
"$cxx" "${common[@]}" -fsanitize=fuzzer -Itests/fuzz tests/fuzz/pool_fuzzer.cc "${objects[@]}" \
  $(pkg-config --libs libpmem2 absl_btree) -lpthread -o "$out/pool_fuzzer"

# Seeds of the current format (the checked-in ones may be older).
rm -f "$out"/seeds/*
GPKV_FUZZ_WRITE_SEEDS="$out/seeds" "$out/pool_fuzzer" >/dev/null

before=$(ls "$out/artifacts" | wc -l)
# The inputs are split between GPKV_FUZZ_PROCESSES fuzzer processes (2: the
# CI machine's cores; a fixed count, not the machine's, so that the run stays
# the same on every machine): process i runs its share from seed + i into a
# corpus folder of its own, each also reading the seeds and the checked-in
# corpus.
workers=${GPKV_FUZZ_PROCESSES:-2}
if [ "$workers" -lt 1 ] || [ "$workers" -gt "$runs" ]; then workers=1; fi
echo "ci-fuzz: fuzzing ${runs} inputs from seed ${seed} in ${workers} processes" >&2
started=$SECONDS
pids=()
for ((worker = 0; worker < workers; ++worker)); do
  share=$(((runs + worker) / workers))
  mkdir -p "$out/corpus-$worker"
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    "$out/pool_fuzzer" -runs="$share" -seed="$((seed + worker))" -max_len=1048576 -timeout=30 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
    "$out/corpus-$worker" "$out/seeds" tests/fuzz/corpus >"$out/fuzz-$worker.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=$?
done
after=$(ls "$out/artifacts" | wc -l)
executions=0
for ((worker = 0; worker < workers; ++worker)); do
  log="$out/fuzz-$worker.log"
  ran=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1 ||
    true)
  if [ -z "$ran" ]; then
    # No final stats (the process stopped at a crash): take its last progress line.
    ran=$(grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  fi
  executions=$((executions + ${ran:-0}))
done
crashes=$((after - before))
corpus=$(find "$out" -path "$out/corpus-*" -type f | wc -l)
# Also kept in $out/fuzz-totals.log for scripts/crash-totals.sh.
echo "[crash totals] fuzz: ${executions} executions in $((SECONDS - started)) s (seed ${seed}," \
  "${workers} processes), ${crashes} crashes or violated properties, corpus ${corpus} inputs" \
  "(logs $out/fuzz-*.log)" | tee "$out/fuzz-totals.log"
if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
  cat "$out"/fuzz-*.log | grep -E 'ERROR|SUMMARY|property violated|runtime error' | head -20 >&2 || true
  echo "ci-fuzz: the fuzzer found a problem (exit $status); inputs in $out/artifacts/:" >&2
  ls -1 "$out/artifacts" | tail -n "$((crashes > 0 ? crashes : 5))" >&2
  exit 1
fi
echo "ci-fuzz: ok" >&2

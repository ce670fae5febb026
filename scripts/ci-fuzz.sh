#!/usr/bin/env bash
# Coverage-guided fuzzing of pool files (called from .ci/run).
#
# Builds the pool fuzzer (tests/fuzz/pool_fuzzer.cc, CMake target pool_fuzzer)
# in the ASan + UBSan build of scripts/ci-sanitizers.sh (clang++-14,
# -DGPKV_FUZZER=ON: its library objects are instrumented for coverage, and the
# fuzzer is linked with -fsanitize=fuzzer,address,undefined against that
# library), so the sanitized library is compiled once for the fuzzer and the
# ASan + UBSan tests. Then writes the seed pools of the current format and
# fuzzes a fixed number of inputs from fixed seeds over those seeds, the
# checked-in corpus (tests/fuzz/corpus/) and the corpus kept from earlier
# runs. In a fresh clone the run is the same on every machine: its verdict
# does not depend on how fast the machine is (a time bound would make it).
# Explore further with a larger count or another seed. Prints the executions
# run and the crashes found; exits 1 when the fuzzer found a crash or a
# violated property (its input is left in the artifacts folder: turn it into
# a regression test under tests/corruption/).
#
# Usage: scripts/ci-fuzz.sh [runs [seed]]
#   runs: inputs to execute (default GPKV_FUZZ_RUNS or 40000: about 100 s
#   on 2 cores, in two processes); seed: libFuzzer's random seed (default
#   GPKV_FUZZ_SEED or 1; the second process runs from seed + 1).
# Environment: GPKV_FUZZ_PROCESSES (default 2), GPKV_FUZZ_BUILD (folder of
# the seeds, corpus, artifacts and logs, default build-fuzz), GPKV_ASAN_BUILD
# (the build folder, default build-asan) and GPKV_ASAN_CXX (its compiler,
# default clang++-14, installed with apt-get when missing), GPKV_JOBS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${1:-${GPKV_FUZZ_RUNS:-40000}}
seed=${2:-${GPKV_FUZZ_SEED:-1}}
out=${GPKV_FUZZ_BUILD:-build-fuzz}
build=${GPKV_ASAN_BUILD:-build-asan}
jobs=${GPKV_JOBS:-$(nproc)}

# The ASan + UBSan build's configuration lives in ci-sanitizers.sh alone, so
# that the two stages share one build (a second configure changes nothing).
GPKV_ASAN_BUILD="$build" bash scripts/ci-sanitizers.sh asan-configure
echo "ci-fuzz: building $build/pool_fuzzer" >&2
cmake --build "$build" -j"$jobs" --target pool_fuzzer
fuzzer="$build/pool_fuzzer"

mkdir -p "$out/corpus" "$out/seeds" "$out/artifacts"
# Seeds of the current format (the checked-in ones may be older).
rm -f "$out"/seeds/*
GPKV_FUZZ_WRITE_SEEDS="$out/seeds" "$fuzzer" >/dev/null

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
    "$fuzzer" -runs="$share" -seed="$((seed + worker))" -max_len=1048576 -timeout=30 \
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

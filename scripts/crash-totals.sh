#!/usr/bin/env bash
# Sums the "[crash totals]" lines of a ctest run and prints them beside the
# reliability targets of docs/GUARANTEES.md (met / missed). Run after
# `ctest -L crash` (or any ctest run that includes the crash, corruption,
# fuzz or concurrency tests); reads that run's Testing/Temporary/LastTest.log
# and any further logs named after it (the TSan stage's ctest-tsan.log with
# the concurrency totals, the fuzzing stage's fuzz-totals.log).
#
# Usage: scripts/crash-totals.sh [BUILD_DIR [LOG...]]     (default build-ci)
# Exits 1 when a target is missed: fewer than GPKV_MIN_CRASH_STATES (default
# 10000) crash states, a lost acknowledged write, a pool failing verify, a
# concurrency violation, or a problem in a corruption trial.
set -euo pipefail
build=${1:-build-ci}
shift || true
extra=()
for file in "$@"; do
  if [ -f "$file" ]; then extra+=("$file"); fi
done
log="$build/Testing/Temporary/LastTest.log"
if [ ! -f "$log" ]; then
  echo "crash-totals: no ctest log at $log (run ctest -L crash in $build first)" >&2
  exit 1
fi

echo "== crash suite totals (from $log${extra[*]:+ ${extra[*]}})"
grep -ho '\[crash totals\].*' "$log" "${extra[@]}" || true

awk -v min_states="${GPKV_MIN_CRASH_STATES:-10000}" '
  function count_before(line, words,    n, i, parts) {
    # The number just before `words` on `line` (0 when absent).
    i = index(line, words)
    if (i == 0) return 0
    n = split(substr(line, 1, i - 1), parts, /[^0-9]+/)
    while (n > 0 && parts[n] == "") n--
    return n > 0 ? parts[n] + 0 : 0
  }
  /\[crash totals\]/ {
    states += count_before($0, " crash states checked")
    lost += count_before($0, " acknowledged writes lost")
    half += count_before($0, " in-flight ops half-applied")
    verify += count_before($0, " pools failing verify")
    damaged += count_before($0, " damaged pools checked")
    problems += count_before($0, " problems")
    if (index($0, "] concurrency")) concurrency_ran = 1
    if (index($0, "] corruption")) corruption_ran = 1
    concurrent += count_before($0, " operations checked (")
    violations += count_before($0, " violations")
    fuzz += count_before($0, " inputs executed")
    if (index($0, "] fuzz: ")) {
      fuzz_ran = 1
      fuzz_runs += count_before($0, " executions in")
      fuzz_crashes += count_before($0, " crashes or violated")
    }
  }
  function row(what, target, value, ok, ran) {
    if (!ran) {
      printf "  %-42s %-14s %-14s %s\n", what, target, "-", "not in this run"
      return
    }
    printf "  %-42s %-14s %-14s %s\n", what, target, value, ok ? "met" : "MISSED"
    if (!ok) missed = 1
  }
  END {
    printf "  %-42s %-14s %-14s %s\n", "target", "wanted", "measured", ""
    row("crash states checked", ">= " min_states, states, states >= min_states, 1)
    row("acknowledged writes lost", "0", lost, lost == 0, 1)
    row("in-flight operations half-applied", "0", half, half == 0, 1)
    row("pools failing verify after recovery", "0", verify, verify == 0, 1)
    row("damaged pools checked / problems", "0 problems", damaged " / " problems, problems == 0, corruption_ran)
    row("concurrent operations checked", ">= 1000000", concurrent, concurrent >= 1000000, concurrency_ran)
    row("concurrency violations", "0", violations, violations == 0, concurrency_ran)
    printf "  %-42s %-14s %-14s\n", "fuzz inputs executed in the tests", "", fuzz
    if (fuzz_ran) printf "  %-42s %-14s %-14s\n", "libFuzzer executions", "reported", fuzz_runs
    row("libFuzzer crashes or violated properties", "0", fuzz_crashes, fuzz_crashes == 0, fuzz_ran)
    exit missed
  }' "$log" "${extra[@]}"

// The suites of gpkv-bench (listed in gpkv_bench.h) and what they share:
// running a sequence of workloads on one fresh table of one system.
//
// Who may call: the suites (bench/gpkv_bench_*.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/gpkv_bench.h"
#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_report.h"
#include "bench/gpkv_bench_workload.h"

namespace gpkv::bench {

// One workload of a sequence.
struct Step {
  WorkloadSpec spec;
  uint64_t ops = 0;
  uint64_t batch = 0;
  double max_seconds = 0.0;
};

// Creates `system` with a table for config.keys keys of key_size / value_size
// bytes, runs the steps in order (each seeded by RunSeed, so every system
// sees the same operations), appends the measurements and the table facts
// after the first step and at the end to `report`. Stops the sequence at the
// first error (recorded in the measurement). Tells `progress` (may be null)
// how each step goes. Returns false if the system could not be created or a
// step failed (the reason is in the report's notes).
bool RunSequence(const BenchConfig& config, const std::string& system, uint32_t key_size,
                 uint32_t value_size, const std::vector<Step>& steps, ProgressSink* progress,
                 BenchReport* report);

// Pool bytes for a table of `keys` keys (plus the inserts of YCSB D) that may
// resize once, and 256 MiB of room; config.pool_size when set.
uint64_t PoolSizeFor(const BenchConfig& config, uint32_t key_size, uint32_t value_size);

// The run seed of a workload: the same for every system and batch size.
uint64_t RunSeed(uint64_t seed, const std::string& workload, const std::string& distribution);

// The driver configuration for `system` at these sizes.
DriverConfig MakeDriverConfig(const BenchConfig& config, uint32_t key_size, uint32_t value_size);

// Adds the ratio "system A / system B" of two measurements to the report
// (not measured if either is missing or failed).
void AddRatio(BenchReport* report, const std::string& name, const std::string& label,
              const Measurement* numerator, const Measurement* denominator,
              const std::string& missing_why);

// The measurement of (system, workload, distribution) at these sizes, or
// nullptr.
const Measurement* FindMeasurement(const BenchReport& report, const std::string& system,
                                   const std::string& workload, const std::string& distribution,
                                   uint32_t key_size, uint32_t value_size);

// Compares every complete read / erase measurement with gpkv's of the same
// case (found counts, read digests, erase counts) and adds the verdict to the
// report (a line for people, sections.read_results_agree for machines).
void AddReadAgreement(BenchReport* report);

// Options as run, for the report header.
nlohmann::ordered_json ConfigJson(const BenchConfig& config,
                                  const std::vector<std::string>& systems);

// The suites. Each fills `report`; false when a system or step failed.
bool RunFoundation(const BenchConfig& config, ProgressSink* progress, BenchReport* report);
bool RunYcsb(const BenchConfig& config, ProgressSink* progress, BenchReport* report);
bool RunSweep(const BenchConfig& config, ProgressSink* progress, BenchReport* report);

}  // namespace gpkv::bench

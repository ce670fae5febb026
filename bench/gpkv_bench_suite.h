// The suites of `gpkv bench` and what they share: the options as parsed, and
// running a sequence of workloads on one fresh table of one system.
//
//   foundation  load, positive / negative get, update, erase on gpkv and
//               libcuckoo; load factor before the first resize; the
//               foundation targets (issue #3).
//   ycsb        YCSB LOAD, A, B, C, F (zipfian and uniform) and D (latest),
//               every system, with the YCSB targets (issue #4).
//   sweep       one workload over batch sizes 2^min .. 2^max.
//
// Who may call: bench/gpkv_bench.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_report.h"
#include "bench/gpkv_bench_workload.h"

namespace gpkv::bench {

struct BenchConfig {
  std::string suite = "foundation";
  std::string pool_path = "/dev/shm/gpkv-bench.gpkv";
  uint64_t pool_size = 0;  // 0: computed from keys and sizes (PoolSizeFor)
  uint64_t keys = uint64_t{16} << 20;
  uint64_t ops = 0;  // 0: keys
  uint64_t batch = 4096;
  int threads = 2;
  std::vector<uint32_t> key_sizes = {8};
  std::vector<uint32_t> value_sizes = {8};
  uint64_t seed = 1;
  bool json = false;
  std::string json_file;                   // also write the JSON report here (one run, both forms)
  std::vector<std::string> systems;        // empty: the suite's default
  std::vector<std::string> workloads;      // empty: the suite's default
  std::vector<std::string> distributions;  // empty: the suite's default
  int sweep_min_log2 = 8;
  int sweep_max_log2 = 22;
  uint64_t lf_keys = uint64_t{1} << 20;  // load-factor probe table; 0: skip the probe
  double max_seconds = -1.0;             // per measurement; < 0: the suite's default
  Backend backend = Backend::kCpu;
  std::string rocksdb_dir = "/dev/shm/gpkv-bench-rocksdb";

  // --ops 0: the sizes GPHash was evaluated with, 16M operations per micro
  // workload and 64M per YCSB workload for 16M records.
  uint64_t ops_or_keys() const {
    if (ops > 0) return ops;
    return suite == "ycsb" ? 4 * keys : keys;
  }
};

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
// first error (recorded in the measurement). Returns false if the system could
// not be created or a step failed (the reason is in the report's notes).
bool RunSequence(const BenchConfig& config, const std::string& system, uint32_t key_size,
                 uint32_t value_size, const std::vector<Step>& steps, BenchReport* report);

// Pool bytes for a table of `keys` keys (plus the inserts of YCSB D) that may
// resize once, and 256 MiB of room; config.pool_size when set.
uint64_t PoolSizeFor(const BenchConfig& config, uint32_t key_size, uint32_t value_size);

// The run seed of a workload: the same for every system and batch size.
uint64_t RunSeed(uint64_t seed, const std::string& workload, const std::string& distribution);

// The driver configuration for `system` at these sizes.
DriverConfig MakeDriverConfig(const BenchConfig& config, uint32_t key_size, uint32_t value_size);

// Adds a "system A / system B >= target" check of two measurements to the
// report (not measured if either is missing or failed).
void AddRatioTarget(BenchReport* report, const std::string& name, const std::string& label,
                    const Measurement* numerator, const Measurement* denominator, double target,
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
bool RunFoundation(const BenchConfig& config, BenchReport* report);
bool RunYcsb(const BenchConfig& config, BenchReport* report);
bool RunSweep(const BenchConfig& config, BenchReport* report);

}  // namespace gpkv::bench

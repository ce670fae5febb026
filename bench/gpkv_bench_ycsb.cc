// The ycsb and sweep suites of gpkv-bench: YCSB core workloads on every
// system, with gpkv's ratios to RocksDB and libcuckoo, and one workload over a
// range of batch sizes.
#include <string>
#include <vector>

#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_suite.h"

namespace gpkv::bench {
namespace {

KeyChoice ParseChoice(const std::string& name) {
  return name == "uniform" ? KeyChoice::kUniform : KeyChoice::kZipfian;
}

std::vector<std::string> DefaultSystems(const BenchConfig& config) {
  if (!config.systems.empty()) return config.systems;
  std::vector<std::string> systems;
  for (const DriverInfo& info : RegisteredDrivers()) systems.push_back(info.name);
  return systems;
}

Step LoadStep(const BenchConfig& config) {
  Step step;
  YcsbWorkload("LOAD", KeyChoice::kUniform, &step.spec);
  step.ops = config.keys;
  step.batch = config.batch;
  return step;
}

// LOAD, then A, B, C, F under each distribution, then D (latest; it inserts,
// so it runs last, as YCSB's recommended order A B C F D).
std::vector<Step> YcsbSteps(const BenchConfig& config, const std::vector<std::string>& workloads,
                            const std::vector<std::string>& distributions, double max_seconds) {
  std::vector<Step> steps = {LoadStep(config)};
  steps.back().max_seconds = 0.0;  // every system must hold the same records
  for (const std::string& distribution : distributions) {
    for (const std::string& name : workloads) {
      if (name == "LOAD" || name == "D") continue;
      Step step;
      YcsbWorkload(name, ParseChoice(distribution), &step.spec);
      step.ops = config.ops_or_keys();
      step.batch = config.batch;
      step.max_seconds = max_seconds;
      steps.push_back(step);
    }
  }
  for (const std::string& name : workloads) {
    if (name != "D") continue;
    Step step;
    YcsbWorkload("D", KeyChoice::kLatest, &step.spec);
    step.ops = config.ops_or_keys();
    step.batch = config.batch;
    step.max_seconds = max_seconds;
    steps.push_back(step);
  }
  return steps;
}

template <typename T>
bool Contains(const std::vector<T>& list, const T& item) {
  for (const T& entry : list) {
    if (entry == item) return true;
  }
  return false;
}

void AddYcsbRatios(const BenchConfig& config, const std::vector<std::string>& systems,
                   const std::vector<std::string>& workloads,
                   const std::vector<std::string>& distributions, BenchReport* report) {
  if (!Contains(config.key_sizes, 8u) || !Contains(config.value_sizes, 8u)) return;
  std::string rocksdb_why = "rocksdb failed in this run (see notes)";
  if (!Contains(systems, std::string("rocksdb"))) {
    bool built_in = false;
    for (const DriverInfo& info : RegisteredDrivers()) built_in |= info.name == "rocksdb";
    rocksdb_why = built_in ? "rocksdb was left out of this run (--systems)"
                           : "rocksdb is not part of this run: this gpkv was built without "
                             "RocksDB (librocksdb was not found when it was configured)";
  }
  for (const std::string name : {"A", "B", "C", "D", "F"}) {
    if (!Contains(workloads, name)) continue;
    for (const std::string& distribution : distributions) {
      std::string dist = name == "D" ? "latest" : distribution;
      AddRatio(report, "YCSB " + std::string(name) + " " + dist + " gpkv vs rocksdb",
               "rocksdb (WAL, sync per batch)", FindMeasurement(*report, "gpkv", name, dist, 8, 8),
               FindMeasurement(*report, "rocksdb", name, dist, 8, 8), rocksdb_why);
      if (name == "D") break;
    }
  }
  if (Contains(workloads, std::string("C"))) {
    for (const std::string& distribution : distributions) {
      AddRatio(report, "YCSB C " + distribution + " gpkv get vs libcuckoo find", "libcuckoo find",
               FindMeasurement(*report, "gpkv", "C", distribution, 8, 8),
               FindMeasurement(*report, "libcuckoo", "C", distribution, 8, 8),
               "gpkv or libcuckoo is missing from this run, or failed");
    }
  }
}

void AddMethodNotes(BenchReport* report) {
  report->notes.push_back(
      "a batch runs its reads (and the reads of its read-modify-writes) against the state "
      "before the batch, then one write (updates, inserts, RMW writes), then its erases; every "
      "system is fed the same operations (same seed) with the same thread count.");
  report->notes.push_back(
      "zipfian = YCSB ScrambledZipfianGenerator (theta 0.99, FNV-scrambled); D reads the "
      "latest records (YCSB SkewedLatestGenerator) and inserts new ones.");
  report->notes.push_back(
      "each batch is timed alone (generation excluded); Mops/s = ops / sum of batch times; "
      "p50/p99 are per-batch latencies.");
}

}  // namespace

bool RunYcsb(const BenchConfig& config, ProgressSink* progress, BenchReport* report) {
  std::vector<std::string> systems = DefaultSystems(config);
  std::vector<std::string> workloads = config.workloads;
  if (workloads.empty()) workloads = {"LOAD", "A", "B", "C", "F", "D"};
  std::vector<std::string> distributions = config.distributions;
  if (distributions.empty()) distributions = {"zipfian", "uniform"};
  report->config = ConfigJson(config, systems);
  report->config["workloads"] = workloads;
  report->config["distributions"] = distributions;
  const double max_seconds = config.max_seconds > 0 ? config.max_seconds : 0.0;
  bool ok = true;
  for (uint32_t key_size : config.key_sizes) {
    for (uint32_t value_size : config.value_sizes) {
      for (const std::string& system : systems) {
        ok &=
            RunSequence(config, system, key_size, value_size,
                        YcsbSteps(config, workloads, distributions, max_seconds), progress, report);
      }
    }
  }
  AddReadAgreement(report);
  AddYcsbRatios(config, systems, workloads, distributions, report);
  AddMethodNotes(report);
  return ok;
}

bool RunSweep(const BenchConfig& config, ProgressSink* progress, BenchReport* report) {
  std::vector<std::string> systems = DefaultSystems(config);
  std::vector<std::string> workloads = config.workloads;
  if (workloads.empty()) workloads = {"C"};
  std::vector<std::string> distributions = config.distributions;
  if (distributions.empty()) distributions = {"zipfian"};
  const double max_seconds = config.max_seconds >= 0 ? config.max_seconds : 5.0;
  report->config = ConfigJson(config, systems);
  report->config["workloads"] = workloads;
  report->config["distributions"] = distributions;
  report->config["batch_sizes"] =
      "2^" + std::to_string(config.sweep_min_log2) + "..2^" + std::to_string(config.sweep_max_log2);
  report->config["max_seconds_per_point"] = max_seconds;
  std::vector<Step> steps = {LoadStep(config)};
  for (const std::string& name : workloads) {
    if (name == "LOAD" || name == "D") continue;  // D inserts: points would differ in size
    for (const std::string& distribution : distributions) {
      for (int log2 = config.sweep_min_log2; log2 <= config.sweep_max_log2; ++log2) {
        Step step;
        YcsbWorkload(name, ParseChoice(distribution), &step.spec);
        step.batch = uint64_t{1} << log2;
        step.ops = std::max(config.ops_or_keys(), step.batch);
        step.max_seconds = max_seconds;
        steps.push_back(step);
      }
    }
  }
  bool ok = true;
  for (uint32_t key_size : config.key_sizes) {
    for (uint32_t value_size : config.value_sizes) {
      for (const std::string& system : systems) {
        ok &= RunSequence(config, system, key_size, value_size, steps, progress, report);
      }
    }
  }
  AddReadAgreement(report);
  AddMethodNotes(report);
  report->notes.push_back(
      "sweep: every point runs the same operations (same seed) batched differently; a point "
      "stops after the batch that passes the time limit (flagged), so such points ran fewer "
      "operations than their peers.");
  return ok;
}

}  // namespace gpkv::bench

// The benchmark engine's entry points (see gpkv_bench.h): checks a
// configuration and runs its suite (gpkv_bench_suite.h).
#include "bench/gpkv_bench.h"

#include <chrono>
#include <string>

#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_ordered.h"
#include "bench/gpkv_bench_suite.h"
#include "bench/gpkv_bench_workload.h"

namespace gpkv::bench {

std::vector<SystemInfo> BuiltInSystems() {
  std::vector<SystemInfo> systems;
  for (const DriverInfo& info : RegisteredDrivers()) {
    systems.push_back({info.name, info.durability});
  }
  return systems;
}

bool RocksdbBuiltIn() { return FindDriver("rocksdb") != nullptr; }

Status ValidateConfig(const BenchConfig& config) {
  auto usage = [](const std::string& message) { return Status::InvalidArgument(message); };
  if (config.suite != "foundation" && config.suite != "ycsb" && config.suite != "sweep" &&
      config.suite != "ordered") {
    return usage("--suite '" + config.suite + "' is not foundation, ycsb, sweep or ordered");
  }
  if (config.keys == 0) return usage("--keys must be at least 1");
  if (config.batch == 0) return usage("--batch must be at least 1");
  if (config.threads < 1) return usage("--threads must be at least 1");
  for (uint32_t key_size : config.key_sizes) {
    if (key_size != 8 && key_size != 16 && key_size != 32) {
      return usage("--key-size " + std::to_string(key_size) + ": gpkv keys are 8, 16 or 32 bytes");
    }
  }
  for (uint32_t value_size : config.value_sizes) {
    if (value_size < 1 || value_size > 128) {
      return usage("--value-size " + std::to_string(value_size) +
                   ": gpkv values are 1 to 128 bytes");
    }
  }
  if (config.sweep_min_log2 < 0 || config.sweep_max_log2 > 30 ||
      config.sweep_min_log2 > config.sweep_max_log2) {
    return usage("--sweep-min / --sweep-max: need 0 <= min <= max <= 30");
  }
  for (const std::string& system : config.systems) {
    if (FindDriver(system) != nullptr) continue;
    if (config.suite == "ordered" &&
        (system.rfind("gpkv-gpu", 0) == 0 || system == "gpkv-btree-cpu")) {
      continue;  // checked below
    }
    if (config.suite == "ordered" && system == "lmdb") {
      if (LmdbBuiltIn()) continue;
      return Status::Unsupported(
          "--systems lmdb: this gpkv-bench was built without LMDB "
          "(liblmdb was not found when it was configured)");
    }
    if (system == "rocksdb" || system == "rocksdb-nosync") {
      return Status::Unsupported("--systems " + system +
                                 ": this gpkv was built without RocksDB (librocksdb was not "
                                 "found when it was configured, or GPKV_WITH_ROCKSDB was off)");
    }
    std::string known;
    for (const DriverInfo& info : RegisteredDrivers()) known += " " + info.name;
    return usage("--systems: no system '" + system + "' (built in:" + known + ")");
  }
  if (config.suite == "ordered") GPKV_RETURN_IF_ERROR(ValidateOrderedConfig(config));
  for (const std::string& workload : config.workloads) {
    if (config.suite == "ordered") break;  // its own names, checked above
    WorkloadSpec spec;
    if (!YcsbWorkload(workload, KeyChoice::kZipfian, &spec)) {
      return usage("--workloads: '" + workload + "' is not one of LOAD, A, B, C, D, F");
    }
  }
  for (const std::string& distribution : config.distributions) {
    if (distribution != "zipfian" && distribution != "uniform") {
      return usage("--distributions: '" + distribution + "' is not zipfian or uniform");
    }
  }
  return Status::OK();
}

bool RunBench(const BenchConfig& config, ProgressSink* progress, BenchReport* report) {
  report->suite = config.suite;
  report->machine = ReadMachineInfo();
  report->date = UtcDate();
  auto start = std::chrono::steady_clock::now();
  CpuSnapshot cpu_start = TakeCpuSnapshot();
  bool ok = config.suite == "ycsb"      ? RunYcsb(config, progress, report)
            : config.suite == "sweep"   ? RunSweep(config, progress, report)
            : config.suite == "ordered" ? RunOrdered(config, progress, report)
                                        : RunFoundation(config, progress, report);
  report->wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report->other_cores = OtherCores(cpu_start, TakeCpuSnapshot(), report->wall_seconds);
  return ok;
}

}  // namespace gpkv::bench

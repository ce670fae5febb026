// `gpkv bench`: the benchmark subcommand of the gpkv tool (see
// gpkv_bench.h). Parses the options and runs one suite
// (gpkv_bench_suite.h); the report goes to stdout, as a table or as JSON.
#include "bench/gpkv_bench.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "bench/gpkv_bench_suite.h"
#include "tools/cli_common.h"

namespace gpkv::bench {
namespace {

using tools::kExitError;
using tools::kExitOk;
using tools::kExitUsage;

// Returns an empty string when the configuration can run, else why not.
std::string Validate(const BenchConfig& config) {
  if (config.keys == 0) return "--keys must be at least 1";
  if (config.batch == 0) return "--batch must be at least 1";
  if (config.threads < 1) return "--threads must be at least 1";
  for (uint32_t key_size : config.key_sizes) {
    if (key_size != 8 && key_size != 16 && key_size != 32) {
      return "--key-size " + std::to_string(key_size) + ": gpkv keys are 8, 16 or 32 bytes";
    }
  }
  for (uint32_t value_size : config.value_sizes) {
    if (value_size < 1 || value_size > 128) {
      return "--value-size " + std::to_string(value_size) + ": gpkv values are 1 to 128 bytes";
    }
  }
  if (config.sweep_min_log2 < 0 || config.sweep_max_log2 > 30 ||
      config.sweep_min_log2 > config.sweep_max_log2) {
    return "--sweep-min / --sweep-max: need 0 <= min <= max <= 30";
  }
  for (const std::string& system : config.systems) {
    if (FindDriver(system) == nullptr) {
      std::string known;
      for (const DriverInfo& info : RegisteredDrivers()) known += " " + info.name;
      return "--systems: no system '" + system + "' in this program (built in:" + known + ")";
    }
  }
  for (const std::string& workload : config.workloads) {
    WorkloadSpec spec;
    if (!YcsbWorkload(workload, KeyChoice::kZipfian, &spec)) {
      return "--workloads: '" + workload + "' is not one of LOAD, A, B, C, D, F";
    }
  }
  for (const std::string& distribution : config.distributions) {
    if (distribution != "zipfian" && distribution != "uniform") {
      return "--distributions: '" + distribution + "' is not zipfian or uniform";
    }
  }
  return "";
}

int Run(const BenchConfig& config) {
  std::string problem = Validate(config);
  if (!problem.empty()) {
    tools::PrintError("bench", problem);
    return kExitUsage;
  }
  BenchReport report;
  report.suite = config.suite;
  report.machine = ReadMachineInfo();
  report.date = UtcDate();
  auto start = std::chrono::steady_clock::now();
  CpuSnapshot cpu_start = TakeCpuSnapshot();
  bool ok = config.suite == "ycsb"    ? RunYcsb(config, &report)
            : config.suite == "sweep" ? RunSweep(config, &report)
                                      : RunFoundation(config, &report);
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.other_cores = OtherCores(cpu_start, TakeCpuSnapshot(), report.wall_seconds);
  if (config.json) {
    PrintJson(report, stdout);
  } else {
    PrintText(report, stdout);
  }
  std::fflush(stdout);
  if (!config.json_file.empty()) {
    std::FILE* file = std::fopen(config.json_file.c_str(), "w");
    if (file == nullptr) {
      tools::PrintError("bench", config.json_file + ": cannot write the JSON report");
      return kExitError;
    }
    PrintJson(report, file);
    std::fclose(file);
  }
  if (!ok) {
    tools::PrintError("bench", "some measurements failed (see the notes in the report)");
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, int* exit_code) {
  auto config = std::make_shared<BenchConfig>();
  auto backend = std::make_shared<std::string>("cpu");
  auto list_systems = std::make_shared<bool>(false);
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Measure gpkv beside libcuckoo (and RocksDB in the gpkv-bench program): a table, or JSON "
      "with --json. Suites: foundation (default: load / get / update / erase and the load "
      "factor before the first resize), ycsb (YCSB A B C D F LOAD), sweep (batch sizes).");
  bench->add_option("--suite", config->suite, "foundation | ycsb | sweep")
      ->check(CLI::IsMember({"foundation", "ycsb", "sweep"}))
      ->capture_default_str();
  bench->add_option("--pool", config->pool_path, "pool file (removed before and after)")
      ->capture_default_str();
  bench->add_option("--pool-size", config->pool_size, "pool bytes; 0 = from keys and sizes")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  bench->add_option("--keys", config->keys, "records loaded (16M = 16777216)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  bench->add_option("--ops", config->ops, "operations per workload; 0 = keys (ycsb: 4 x keys)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  bench->add_option("--batch", config->batch, "operations per batch")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  bench->add_option("--threads", config->threads, "threads of every system")->capture_default_str();
  bench->add_option("--key-size", config->key_sizes, "key bytes: 8, 16, 32 (a list runs each)")
      ->delimiter(',')
      ->capture_default_str();
  bench->add_option("--value-size", config->value_sizes, "value bytes: 1..128 (a list runs each)")
      ->delimiter(',')
      ->capture_default_str();
  bench->add_option("--seed", config->seed, "seed of keys, values and operations")
      ->capture_default_str();
  bench->add_flag("--json", config->json, "print JSON instead of a table");
  bench->add_option("--json-file", config->json_file,
                    "also write the JSON report to this file (the table still goes to stdout)");
  bench
      ->add_option("--systems", config->systems,
                   "systems to run (default: foundation gpkv,libcuckoo; others all built in)")
      ->delimiter(',');
  bench
      ->add_option("--workloads", config->workloads,
                   "ycsb / sweep workloads (default ycsb LOAD,A,B,C,F,D; sweep C)")
      ->delimiter(',');
  bench
      ->add_option("--distributions", config->distributions,
                   "zipfian,uniform (default: ycsb both, sweep zipfian)")
      ->delimiter(',');
  bench->add_option("--sweep-min", config->sweep_min_log2, "sweep: smallest batch, log2")
      ->capture_default_str();
  bench->add_option("--sweep-max", config->sweep_max_log2, "sweep: largest batch, log2")
      ->capture_default_str();
  bench
      ->add_option("--lf-keys", config->lf_keys,
                   "foundation: expected_keys of the load-factor probe table; 0 = skip")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  bench->add_option("--max-seconds", config->max_seconds,
                    "stop a measurement after the batch that passes this (default: sweep 5, "
                    "others none)");
  bench->add_option("--backend", *backend, "gpkv backend: cpu | auto | cuda")
      ->check(CLI::IsMember({"cpu", "auto", "cuda"}))
      ->capture_default_str();
  bench
      ->add_option("--rocksdb-dir", config->rocksdb_dir,
                   "RocksDB directory (removed before and after)")
      ->capture_default_str();
  bench->add_flag("--list-systems", *list_systems, "list the systems built into this program");
  bench->callback([config, backend, list_systems, exit_code]() {
    if (*list_systems) {
      for (const DriverInfo& info : RegisteredDrivers()) {
        std::printf("%-16s %s\n", info.name.c_str(), info.durability.c_str());
      }
      *exit_code = kExitOk;
      return;
    }
    config->backend = *backend == "cuda"   ? Backend::kCuda
                      : *backend == "auto" ? Backend::kAuto
                                           : Backend::kCpu;
    *exit_code = Run(*config);
  });
}

}  // namespace gpkv::bench

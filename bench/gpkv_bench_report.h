// What gpkv-bench prints: the machine, the command and the date, every
// measurement beside its peers with its ratio to gpkv, and the ratios of gpkv
// to its peers that the goals are read from, as a text table for people or
// JSON for machines (scripts/check-targets.py holds the JSON to the goals of
// docs/bench/targets.json).
//
// Who may call: the suites of gpkv-bench, which fill a BenchReport, and
// bench/gpkv_bench_main.cc, which prints it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_runner.h"

namespace gpkv::bench {

struct MachineInfo {
  std::string cpu_model;     // /proc/cpuinfo "model name"
  int cores = 0;             // distinct (physical id, core id) pairs
  int hardware_threads = 0;  // online CPUs
  int usable_threads = 0;    // CPUs in this process's affinity mask
  uint64_t memory_bytes = 0;
  std::string kernel;  // uname: sysname release machine
  std::string hostname;
  std::string load_average;  // /proc/loadavg 1, 5, 15 min: other work on the machine
};

MachineInfo ReadMachineInfo();
// CPU time of the whole machine and of this process, to tell how much other
// work ran beside a benchmark.
struct CpuSnapshot {
  double machine_busy_seconds = 0.0;  // /proc/stat: all CPUs, not idle / iowait
  double self_seconds = 0.0;          // this process, user + system
};
CpuSnapshot TakeCpuSnapshot();
// Cores' worth of CPU that other processes used on average between two
// snapshots `wall_seconds` apart.
double OtherCores(const CpuSnapshot& start, const CpuSnapshot& end, double wall_seconds);

// The command line of this process (/proc/self/cmdline), shell-quoted.
std::string CommandLine();
// Now, UTC, ISO 8601 ("2025-11-23T11:20:33Z").
std::string UtcDate();
// Compiler and whether assertions are compiled in.
std::string BuildInfo();

// The ratio of two measurements of this run: gpkv to a peer.
struct Ratio {
  std::string name;        // "YCSB C zipfian gpkv get vs libcuckoo find"
  std::string comparison;  // "gpkv / libcuckoo"
  double value = 0.0;      // numerator / denominator, Mops/s over Mops/s
  bool measured = false;   // false: a side was not part of this run, or failed
  std::string text;        // the line printed for people
  std::string why;         // when not measured: why
};

// Facts about one system's table at one point of a run.
struct FactsEntry {
  std::string system;
  std::string when;    // "after load", "at end"
  std::string config;  // "8 B keys / 8 B values"
  std::vector<std::pair<std::string, std::string>> facts;
};

// Everything one gpkv-bench run reports.
struct BenchReport {
  std::string suite;
  MachineInfo machine;        // read when the run starts
  std::string date;           // when the run started (UtcDate)
  double wall_seconds = 0.0;  // the whole run
  double other_cores = 0.0;   // CPU other processes used during the run (OtherCores)
  nlohmann::ordered_json config = nlohmann::ordered_json::object();  // options as run
  std::vector<std::pair<std::string, std::string>> systems;          // name, durability
  std::vector<Measurement> results;
  std::vector<FactsEntry> facts;
  std::vector<Ratio> ratios;
  std::vector<std::string> lines;  // extra lines for people (load factor probe ...)
  nlohmann::ordered_json sections = nlohmann::ordered_json::object();  // the same for machines
  std::vector<std::string> notes;
};

// gpkv's measurement of the same (suite, workload, distribution, batch, sizes)
// as m, or nullptr.
const Measurement* FindPeer(const BenchReport& report, const Measurement& m,
                            const std::string& system);

void PrintText(const BenchReport& report, std::FILE* out);
void PrintJson(const BenchReport& report, std::FILE* out);

// "%.*f"
std::string FormatFixed(double value, int precision);

}  // namespace gpkv::bench

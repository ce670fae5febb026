// The workloads of the ordered suite (gpkv_bench_ordered.h): its systems'
// names, a case (one system at one pair of sizes), the insert measurement and
// the queries on a growing table (get, count, range, YCSB E). The suite
// (gpkv_bench_ordered.cc) runs them and reads gpkv's ratios off the report.
//
// Who may call: gpkv_bench_ordered.cc.
#pragma once

#include <cstdint>
#include <string>

#include "bench/gpkv_bench.h"
#include "bench/gpkv_bench_report.h"

namespace gpkv::bench {

inline constexpr uint64_t kDefaultQueries = uint64_t{1} << 20;  // --ops 0
inline constexpr double kDefaultMaxSeconds = 2.0;               // --max-seconds unset
inline constexpr const char* kGpuSystem = "gpkv-gpu";
inline constexpr const char* kGpuDeviceSystem = "gpkv-gpu-dev";
// The volatile ordered table (the B-tree family) on the CPU backend.
inline constexpr const char* kBtreeCpuSystem = "gpkv-btree-cpu";
// The workloads --workloads may name; "range32" (Range of about 32 keys each)
// runs only when named, the others also when --workloads is not given.
inline constexpr const char* kWorkloads[] = {"insert", "get", "count", "range", "range32", "E"};
inline constexpr const char* kRange32 = "range32";

inline bool IsGpuSystem(const std::string& system) {
  return system == kGpuSystem || system == kGpuDeviceSystem;
}

// One system at one pair of key and value sizes.
struct Case {
  const BenchConfig* config;
  std::string system;
  uint32_t key_size, value_size;
  double max_seconds;
  ProgressSink* progress;
};

// Whether the run measures `workload` (--workloads; all but range32 by
// default).
bool Wanted(const BenchConfig& config, const std::string& workload);

// "2^20 keys": the distribution column of the query rows.
std::string TableLabel(int log2);

// Insert rate at one batch size on a fresh table; the table's facts (the
// GPU backend's write profile) go to report->facts.
Measurement MeasureInsert(const Case& c, uint64_t batch, BenchReport* report);

// Grows one table through the sizes and measures the queries at each; then
// YCSB E on the largest. False when a measurement failed (a note says
// which).
bool RunQueries(const Case& c, BenchReport* report);

}  // namespace gpkv::bench

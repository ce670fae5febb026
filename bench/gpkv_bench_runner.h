// Runs one workload on one driver: generates the batches, times each one and
// keeps what the report needs (throughput, batch latency percentiles, a
// digest of every read's answer).
//
// Who may call: the suites of gpkv-bench.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_workload.h"

namespace gpkv::bench {

// One measured (system, workload, key choice, batch size).
struct Measurement {
  std::string suite;         // "foundation", "ycsb", "sweep"
  std::string workload;      // "A", "LOAD", "search+", ...
  std::string distribution;  // "zipfian", "uniform", "latest", "absent", ...
  std::string system;        // driver name
  uint32_t key_size = 8;
  uint32_t value_size = 8;
  uint64_t batch_size = 0;
  uint64_t ops = 0;
  uint64_t batches = 0;
  uint64_t reads = 0;   // reads, RMW reads included
  uint64_t found = 0;   // reads that found their key
  uint64_t writes = 0;  // updates + inserts + RMW writes
  uint64_t erases = 0;
  uint64_t erased = 0;   // erases that found their key
  double seconds = 0.0;  // sum of the batches' times (generation excluded)
  double p50_us = 0.0;   // batch latency percentiles
  double p99_us = 0.0;
  double max_us = 0.0;
  uint64_t read_digest = 0;  // sum of ReadResultHash over the reads
  bool complete = true;      // false when stopped early by the time limit
  std::string error;         // empty when every call returned OK

  double mops() const { return seconds > 0.0 ? static_cast<double>(ops) / seconds / 1e6 : 0.0; }
  // The rate of the median batch: insensitive to a few batches stretched by
  // other work on the machine (mops() is not).
  double mops_at_p50() const {
    uint64_t full = std::min(batch_size, ops);
    return p50_us > 0.0 ? static_cast<double>(full) / p50_us : 0.0;
  }
};

struct RunParams {
  uint64_t ops = 0;  // operations to run (LOAD: records to insert)
  uint64_t batch_size = 4096;
  uint32_t key_size = 8;
  uint32_t value_size = 8;
  uint64_t key_seed = 0;     // keys and values of records
  uint64_t run_seed = 0;     // operation mix and key choice of this run
  double max_seconds = 0.0;  // stop after the batch that passes it; 0 = no limit
};

// Called after each batch with (operations done, operations in the run).
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

// Runs `spec` on `driver`. `state` carries the records present from one
// workload to the next (the same sequence for every system). Stops at the
// first error (kept in Measurement::error).
Measurement RunWorkload(Driver& driver, const WorkloadSpec& spec, const RunParams& params,
                        RecordState* state, const ProgressFn& progress);

// Nearest-rank percentile (0..100) of `values`; sorts them.
double Percentile(std::vector<double>* values, double percent);

}  // namespace gpkv::bench

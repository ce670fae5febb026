// The benchmark engine of gpkv-bench: runs one suite over the systems built
// into this program and returns the report. The suites:
//
//   foundation  load, positive / negative get, update, erase on gpkv and
//               libcuckoo; load factor before the first resize; gpkv's
//               ratios to libcuckoo.
//   ycsb        YCSB LOAD, A, B, C, F (zipfian and uniform) and D (latest),
//               every system, with gpkv's ratios to RocksDB and libcuckoo.
//   sweep       one workload over batch sizes 2^min .. 2^max.
//   ordered     a persistent ordered table beside RocksDB: insert rate vs
//               batch size, get / count / range rates vs table size, YCSB E
//               (bench/gpkv_bench_ordered.h), with gpkv's ratios to RocksDB.
//
// The report holds measurements and ratios only; the goals they are held to
// are in docs/bench/targets.json, checked by scripts/check-targets.py over
// the JSON report.
//
// The systems: "gpkv", "gpkv-logged" and "gpkv-volatile" (the library's
// persistent hash table written in place and logged, and its volatile hash
// table, on the backend of BenchConfig::backend) and
// "libcuckoo" always; "rocksdb" and "rocksdb-nosync" when the build found
// librocksdb (RocksdbBuiltIn()). The GPU micro-benchmarks are suites of
// their own: bench/gpu/gpu_bench.h (the persistent table's CUDA backend) and
// bench/gpu/slab_bench.h (the volatile slab hash).
//
// This library parses no command line, draws nothing on a terminal and never
// exits: bench/gpkv_bench_main.cc owns gpkv-bench's command line (CLI11), its
// progress line and its exit codes, and prints the report with PrintText /
// PrintJson (bench/gpkv_bench_report.h).
//
// Who may call: bench/gpkv_bench_main.cc, tests. Thread safety: one run at a time (a run
// removes its pool file and RocksDB directory before and after, and uses
// every thread it is given).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/gpkv_bench_report.h"
#include "gpkv/options.h"
#include "gpkv/status.h"

namespace gpkv::bench {

// What one run measures. Defaults are those of gpkv-bench.
struct BenchConfig {
  std::string suite = "foundation";  // foundation | ycsb | sweep | ordered
  std::string pool_path = "/dev/shm/gpkv-bench.gpkv";
  uint64_t pool_size = 0;  // 0: computed from keys and sizes (PoolSizeFor)
  uint64_t keys = uint64_t{16} << 20;
  uint64_t ops = 0;  // 0: keys
  uint64_t batch = 4096;
  int threads = 2;
  std::vector<uint32_t> key_sizes = {8};
  std::vector<uint32_t> value_sizes = {8};
  uint64_t seed = 1;
  std::vector<std::string> systems;        // empty: the suite's default
  std::vector<std::string> workloads;      // empty: the suite's default
  std::vector<std::string> distributions;  // empty: the suite's default
  int sweep_min_log2 = 8;
  int sweep_max_log2 = 22;
  uint64_t lf_keys = uint64_t{1} << 20;  // load-factor probe table; 0: skip the probe
  double max_seconds = -1.0;             // per measurement; < 0: the suite's default
  Backend backend = Backend::kCpu;
  std::string rocksdb_dir = "/dev/shm/gpkv-bench-rocksdb";

  // Suite ordered. Insert batches 2^ordered_insert_min_log2 ..
  // 2^ordered_insert_max_log2, each on a fresh table that receives
  // ordered_insert_keys keys (at least one batch); queries on a table grown
  // through 2^ordered_table_log2[i] keys, `ops` queries each (0: 2^20) in
  // batches of `batch`; b of the gpkv table.
  int ordered_insert_min_log2 = 10;
  int ordered_insert_max_log2 = 22;
  uint64_t ordered_insert_keys = uint64_t{1} << 20;
  std::vector<int> ordered_table_log2 = {16, 18, 20};
  uint64_t ordered_batch_entries = uint64_t{1} << 16;
  uint32_t ordered_log_batches = 1;  // M of the gpkv table
  // M of the gpkv-logged table (its log halves hold M batches of 4096).
  uint32_t hash_log_batches = 64;
  // The gpkv ordered table's GPU tuning (Options::ordered_gpu).
  OrderedGpuOptions ordered_gpu;

  // --ops 0: the sizes GPHash was evaluated with, 16M operations per micro
  // workload and 64M per YCSB workload for 16M records.
  uint64_t ops_or_keys() const {
    if (ops > 0) return ops;
    return suite == "ycsb" ? 4 * keys : keys;
  }
};

// Where a run tells how far each measurement has got (gpkv-bench draws its
// terminal progress line). Called on the thread that called RunBench,
// between batches, never inside a timed part.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // A measurement named `label` of `total` operations starts.
  virtual void Start(const std::string& label, uint64_t total) = 0;
  // `done` of its operations have run.
  virtual void Update(uint64_t done) = 0;
  // It has ended.
  virtual void Finish() = 0;
};

// A system this program can measure: its name (for --systems) and what
// "durable" means for it.
struct SystemInfo {
  std::string name;
  std::string durability;
};

// The systems built into this program, in the order the suites run them.
std::vector<SystemInfo> BuiltInSystems();

// Whether this build links RocksDB ("rocksdb", "rocksdb-nosync").
bool RocksdbBuiltIn();

// OK when `config` can run. InvalidArgument (a message naming the option)
// for a bad value; Unsupported for a system this build lacks (RocksDB in a
// build without it).
Status ValidateConfig(const BenchConfig& config);

// Runs config.suite and fills `report` (machine, date, wall time, every
// measurement, the ratios and the notes). `progress` may be null. Returns
// false when a system could not be created or a measurement failed (the
// report's notes say which; the other measurements still ran).
// REQUIRES: ValidateConfig(config).ok().
bool RunBench(const BenchConfig& config, ProgressSink* progress, BenchReport* report);

}  // namespace gpkv::bench

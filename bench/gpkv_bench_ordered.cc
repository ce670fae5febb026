// The ordered suite (see gpkv_bench_ordered.h): its systems, the check of
// its options, the run over every system and size, and gpkv's ratios to
// RocksDB and LMDB in the report. The gpkv driver is in gpkv_bench_ordered_driver.cc,
// the workloads in gpkv_bench_ordered_workloads.cc.
#include "bench/gpkv_bench_ordered.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_ordered_workloads.h"
#include "bench/gpkv_bench_suite.h"
#if GPKV_HAVE_CUDA
#include "gpu/device_memory.h"
#endif

namespace gpkv::bench {
namespace {

const Measurement* Find(const BenchReport& report, const std::string& system,
                        const std::string& workload, const std::string& distribution,
                        uint64_t batch, uint32_t key_size, uint32_t value_size) {
  for (const Measurement& m : report.results) {
    if (m.system == system && m.workload == workload && m.distribution == distribution &&
        m.batch_size == batch && m.key_size == key_size && m.value_size == value_size) {
      return &m;
    }
  }
  return nullptr;
}

// gpkv's ratios to RocksDB in this run: inserts per batch size, ranges per
// table size, YCSB E; and to LMDB: inserts, gets and ranges.
void AddRatios(const BenchConfig& config, uint32_t key_size, uint32_t value_size,
               BenchReport* report) {
  const std::string sizes = std::to_string(key_size) + "/" + std::to_string(value_size) + " B";
  auto add_vs = [&](const std::string& peer, const std::string& label, const std::string& name,
                    const std::string& workload, const std::string& distribution, uint64_t batch) {
    const Measurement* gpkv =
        Find(*report, "gpkv", workload, distribution, batch, key_size, value_size);
    if (gpkv == nullptr) return;
    AddRatio(report, name + " (" + sizes + ", CPU)", label, gpkv,
             Find(*report, peer, workload, distribution, batch, key_size, value_size),
             label + " was not part of this run (built without it, or left out by --systems)");
  };
  auto add = [&](const std::string& name, const std::string& workload,
                 const std::string& distribution, uint64_t batch) {
    add_vs("rocksdb", "RocksDB", name, workload, distribution, batch);
  };
  if (std::find(config.systems.begin(), config.systems.end(), "lmdb") != config.systems.end() ||
      (config.systems.empty() && LmdbBuiltIn())) {
    for (int log2 = config.ordered_insert_min_log2; log2 <= config.ordered_insert_max_log2;
         ++log2) {
      add_vs("lmdb", "LMDB",
             "durable batched inserts, batch 2^" + std::to_string(log2) + " vs LMDB", "insert",
             "uniform", uint64_t{1} << log2);
    }
    for (int log2 : config.ordered_table_log2) {
      add_vs("lmdb", "LMDB", "gets, " + TableLabel(log2) + " vs LMDB", "get", TableLabel(log2),
             config.batch);
      add_vs("lmdb", "LMDB", "ranges of ~8 keys, " + TableLabel(log2) + " vs LMDB cursor", "range",
             TableLabel(log2), config.batch);
    }
  }
  for (int log2 = config.ordered_insert_min_log2; log2 <= config.ordered_insert_max_log2; ++log2) {
    add("durable batched inserts, batch 2^" + std::to_string(log2) + " vs RocksDB", "insert",
        "uniform", uint64_t{1} << log2);
  }
  for (int log2 : config.ordered_table_log2) {
    add("ranges of ~8 keys, " + TableLabel(log2) + " vs RocksDB Seek+Next", "range",
        TableLabel(log2), config.batch);
    add("ranges of ~32 keys, " + TableLabel(log2) + " vs RocksDB Seek+Next", kRange32,
        TableLabel(log2), config.batch);
  }
  std::vector<int> table_log2 = config.ordered_table_log2;
  std::sort(table_log2.begin(), table_log2.end());
  add("YCSB E (95% ranges of ~8 keys, 5% inserts) vs RocksDB", "E", TableLabel(table_log2.back()),
      config.batch);
}

}  // namespace

std::vector<std::string> OrderedSystems() {
  std::vector<std::string> systems = {"gpkv", kBtreeCpuSystem};
#if GPKV_HAVE_CUDA
  if (gpu::DeviceUsable().ok()) {
    systems.push_back(kGpuSystem);
    systems.push_back(kGpuDeviceSystem);
  }
#endif
  if (RocksdbBuiltIn()) systems.push_back("rocksdb");
  if (LmdbBuiltIn()) systems.push_back("lmdb");
  return systems;
}

Status ValidateOrderedConfig(const BenchConfig& config) {
  auto usage = [](const std::string& message) { return Status::InvalidArgument(message); };
  if (config.ordered_insert_min_log2 < 0 || config.ordered_insert_max_log2 > 26 ||
      config.ordered_insert_min_log2 > config.ordered_insert_max_log2) {
    return usage("--insert-min / --insert-max: need 0 <= min <= max <= 26");
  }
  if (config.ordered_insert_keys == 0) return usage("--insert-keys must be at least 1");
  if (config.ordered_table_log2.empty()) return usage("--table-sizes: give at least one size");
  for (int log2 : config.ordered_table_log2) {
    if (log2 < 4 || log2 > 30) {
      return usage("--table-sizes " + std::to_string(log2) + ": table sizes are 2^4 .. 2^30");
    }
  }
  const uint64_t b = config.ordered_batch_entries;
  if (b < 16 || b > (uint64_t{1} << 24) || (b & (b - 1)) != 0) {
    return usage("--lsm-batch " + std::to_string(b) + ": b is a power of two, 2^4 .. 2^24");
  }
  for (const std::string& workload : config.workloads) {
    if (std::find(std::begin(kWorkloads), std::end(kWorkloads), workload) == std::end(kWorkloads)) {
      return usage("--workloads: '" + workload +
                   "' is not one of the ordered suite's insert, get, count, range, E");
    }
  }
  for (const std::string& system : config.systems) {
    if (system != "gpkv" && system != kBtreeCpuSystem && !IsGpuSystem(system) &&
        system != "rocksdb" && system != "lmdb") {
      return usage(
          "--systems: the ordered suite runs gpkv, gpkv-btree-cpu, gpkv-gpu, gpkv-gpu-dev, "
          "rocksdb and lmdb, not '" +
          system + "'");
    }
  }
  return Status::OK();
}

bool RunOrdered(const BenchConfig& config, ProgressSink* progress, BenchReport* report) {
  const std::vector<std::string> systems =
      config.systems.empty() ? OrderedSystems() : config.systems;
  report->config = ConfigJson(config, systems);
  report->config["ops"] = config.ops > 0 ? config.ops : kDefaultQueries;
  report->config["insert_min_log2"] = config.ordered_insert_min_log2;
  report->config["insert_max_log2"] = config.ordered_insert_max_log2;
  report->config["insert_keys"] = config.ordered_insert_keys;
  report->config["table_log2"] = config.ordered_table_log2;
  report->config["lsm_batch_entries"] = config.ordered_batch_entries;
  report->config["lsm_log_batches"] = config.ordered_log_batches;
  report->config.erase("pool_size");
  report->config.erase("keys");
  for (const std::string& system : systems) {
    report->systems.push_back(
        {system, system == "gpkv"
                     ? std::string("each batch durable and atomic in the pool "
                                   "(ordered table, ") +
                           (config.backend == Backend::kCuda ? "CUDA" : "CPU") + " backend)"
                 : system == kBtreeCpuSystem
                     ? "contents in RAM, no write durable (volatile ordered table: the B-tree "
                       "family over Abseil's btree_map, CPU backend)"
                 : system == kGpuSystem
                     ? "each batch durable and atomic in the pool (ordered table, CUDA backend: "
                       "runs in GPU memory; batches in host memory)"
                 : system == kGpuDeviceSystem
                     ? "as gpkv-gpu, batches in GPU memory (uploaded before the timer, results "
                       "read back after it; Range results stay in GPU memory: "
                       "Table::RangeOnDevice, digested after the timer)"
                 : system == "lmdb"
                     ? "each batch one write transaction, committed with fsync (LMDB's default)"
                     : "each batch one WriteBatch, WAL synced (sync = true)"});
  }
  const double max_seconds = config.max_seconds >= 0 ? config.max_seconds : kDefaultMaxSeconds;
  bool ok = true;
  for (uint32_t key_size : config.key_sizes) {
    for (uint32_t value_size : config.value_sizes) {
      for (const std::string& system : systems) {
        const Case c{&config, system, key_size, value_size, max_seconds, progress};
        if (Wanted(config, "insert")) {
          for (int log2 = config.ordered_insert_min_log2; log2 <= config.ordered_insert_max_log2;
               ++log2) {
            Measurement m = MeasureInsert(c, uint64_t{1} << log2, report);
            if (!m.error.empty()) {
              report->notes.push_back("system " + system + " insert batch 2^" +
                                      std::to_string(log2) + ": " + m.error);
              ok = false;
            }
            report->results.push_back(std::move(m));
          }
        }
        ok &= RunQueries(c, report);
      }
      AddRatios(config, key_size, value_size, report);
    }
  }
  AddReadAgreement(report);
  // Both systems split batches over OpenMP teams. libgomp's default lets a
  // worker that waits spin, which on a machine of few cores shared with
  // other work holds the core its partner needs: on this 2-core machine
  // with 1.2 cores of other work, gpkv's get / range batches took a
  // scheduler slice (~12 ms) each instead of ~0.4-2 ms (docs/bench/lsm.md).
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  report->lines.push_back(
      std::string("OpenMP wait policy: OMP_WAIT_POLICY=") +
      (wait_policy != nullptr ? wait_policy : "unset (libgomp spins, then sleeps)") +
      (wait_policy != nullptr && std::string(wait_policy) == "passive"
           ? ""
           : "; with other work on the machine, OMP_WAIT_POLICY=passive gives steadier numbers"));
  report->sections["omp_wait_policy"] = wait_policy != nullptr ? wait_policy : "";
  report->lines.push_back(
      "ranges and counts: [lo, hi] over the most significant key word, about 8 keys each (range32: "
      "about 32); gpkv "
      "answers a batch with Count / Range, RocksDB with an iterator per thread (Seek + Next), "
      "LMDB with a cursor per thread (MDB_SET_RANGE + MDB_NEXT); RocksDB and LMDB keys are the "
      "gpkv keys big-endian");
  return ok;
}

}  // namespace gpkv::bench

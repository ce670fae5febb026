// The ordered suite of gpkv-bench (--suite ordered): a persistent ordered
// table (TableKind::kOrdered, tables/lsm/) beside RocksDB and LMDB on the
// same data and the same durability, in the same run:
//
//   insert   fresh table per batch size 2^insert_min .. 2^insert_max; each
//            batch is one durable, atomic write (gpkv: Put; RocksDB: one
//            WriteBatch written with sync = true; LMDB: one write
//            transaction, committed with its default sync)
//   get      present keys, uniform            \  on one table grown through
//   count    Count(lo, hi), about 8 keys each  | 2^table_log2 keys for each
//   range    Range(lo, hi), about 8 keys each |  size of the list
//   range32  Range(lo, hi), about 32 keys each /  (only when --workloads names it)
//   E        YCSB E style: 95% ranges of about 8 keys, 5% inserts of new
//            keys (each batch: one durable insert batch, then its ranges)
//
// Systems: "gpkv" (the DB's --backend, the CPU by default), "gpkv-btree-cpu"
// (a volatile ordered table, the B-tree family, on the CPU backend: contents
// in RAM, no write durable; beside the others for its rates), "gpkv-gpu" (the
// CUDA backend, lsm::gpu::LsmGpu; when a device is usable), "gpkv-gpu-dev"
// (the same with every batch already in GPU memory: inputs uploaded before
// the timer starts, outputs read back after it stops; Range results stay in
// GPU memory, Table::RangeOnDevice, and are digested after the timer; YCSB
// E's ranges are host Range calls, timed), "rocksdb" and "lmdb". The GPU systems
// also report the open (recovery) time of their largest table and, after
// the inserts, the backend's write profile (lsm.gpu-* properties: seconds
// per phase). The report gives gpkv's ratios to RocksDB and LMDB; the goals of the
// CPU and GPU rates are in docs/bench/targets.json.
//
// RocksDB reads ranges with an iterator (Seek + Next) and counts the same
// way; its keys are the gpkv keys byte-reversed (big-endian), so its bytewise
// order is gpkv's unsigned little-endian integer order and both return the
// same pairs (the report checks it: found counts and digests agree). LMDB
// walks a cursor the same way, in a read-only transaction per thread, over
// the same big-endian keys.
//
// Files: gpkv_bench_ordered.cc (systems, options, the run and its ratios),
// gpkv_bench_ordered_workloads.h (the measurements),
// gpkv_bench_ordered_driver.cc (the gpkv driver); RocksDB's driver is in
// gpkv_bench_rocksdb.cc, LMDB's in gpkv_bench_lmdb.cc.
//
// Who may call: the benchmark engine (gpkv_bench.cc), tests.
#pragma once

#include <omp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench.h"
#include "bench/gpkv_bench_driver.h"
#include "gpkv/status.h"

namespace gpkv::bench {

// What a Range call returned, reduced to compare systems: pairs and an
// order-independent digest of them.
struct RangeDigest {
  uint64_t pairs = 0;
  uint64_t digest = 0;
};

// Digest term of one pair (summed over the pairs of a call).
uint64_t PairHash(const uint8_t* key, uint32_t key_size, const uint8_t* value, uint32_t value_size);

// A gpkv key (little-endian words, the last most significant) as big-endian
// bytes, whose bytewise order is gpkv's key order (the peers' keys); the same
// reversal decodes.
inline void BigEndianKey(const uint8_t* key, uint32_t key_size, char* out) {
  for (uint32_t i = 0; i < key_size; ++i) out[i] = static_cast<char>(key[key_size - 1 - i]);
}

// Splits [0, n) over `threads` OpenMP threads and runs part(begin, end) on
// each non-empty share; returns the first failure.
template <typename Part>
Status ForThreadShares(int threads, size_t n, const Part& part) {
  std::vector<Status> share_status(threads);
#pragma omp parallel num_threads(threads)
  {
    const int index = omp_get_thread_num();
    const int shares = omp_get_num_threads();
    const size_t begin = n * index / shares, end = n * (index + 1) / shares;
    if (end > begin) share_status[index] = part(begin, end);
  }
  for (const Status& status : share_status) GPKV_RETURN_IF_ERROR(status);
  return Status::OK();
}

// One system holding one ordered table. Keys are given in gpkv's form.
// Thread safety: one call at a time; each call uses the driver's threads.
class OrderedDriver {
 public:
  virtual ~OrderedDriver() = default;
  // n pairs, durable and atomic as one batch on return.
  virtual Status Insert(const uint8_t* keys, const uint8_t* values, size_t n) = 0;
  virtual Status Get(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) = 0;
  // counts[i]: live keys in [lo[i], hi[i]].
  virtual Status Count(const uint8_t* lo, const uint8_t* hi, size_t n, uint64_t* counts) = 0;
  // The pairs of [lo[i], hi[i]] for every i, each copied out.
  virtual Status Range(const uint8_t* lo, const uint8_t* hi, size_t n, RangeDigest* out) = 0;
  virtual std::vector<std::pair<std::string, std::string>> Facts() { return {}; }
  // Device-resident batches (system gpkv-gpu-dev): called before the timer
  // starts with the inputs of the next call (first, second: keys and values,
  // or lo and hi; second may be null), which the driver may move into GPU
  // memory; Finish, after the timer stops, moves that call's outputs back
  // into the caller's buffers. No-ops elsewhere.
  virtual Status Prepare(const uint8_t* /*first*/, size_t /*first_bytes*/,
                         const uint8_t* /*second*/, size_t /*second_bytes*/) {
    return Status::OK();
  }
  virtual Status Finish() { return Status::OK(); }
  // Closes and reopens the table (recovery at open); returns the seconds
  // the open took. Unsupported where the system has no such step.
  virtual Result<double> Reopen() { return Status::Unsupported("no reopen"); }
};

// gpkv: an ordered table with b = batch_entries and M = log_batches in a
// fresh pool; with device_batches, every call's batch is moved into GPU
// memory before the timer starts (Prepare / Finish; the gpkv-gpu-dev system).
Result<std::unique_ptr<OrderedDriver>> CreateGpkvOrderedDriver(const DriverConfig& config,
                                                               uint64_t batch_entries,
                                                               uint32_t log_batches = 1,
                                                               bool device_batches = false);
// gpkv: a volatile ordered table (the B-tree family, contents in RAM, no
// write is durable) on the CPU backend, in a fresh pool that holds only its
// catalog entry.
Result<std::unique_ptr<OrderedDriver>> CreateGpkvBtreeDriver(const DriverConfig& config);
// RocksDB (sync = true): as CreateRocksdbDriver's setup. Unsupported in a
// build without RocksDB.
Result<std::unique_ptr<OrderedDriver>> CreateRocksdbOrderedDriver(const DriverConfig& config);
// LMDB (durable commits), in the file pool_path + ".lmdb". Unsupported in a
// build without liblmdb.
Result<std::unique_ptr<OrderedDriver>> CreateLmdbOrderedDriver(const DriverConfig& config);
// Whether this build has the LMDB peer.
bool LmdbBuiltIn();

// The systems of the suite: "gpkv", "gpkv-btree-cpu", "gpkv-gpu" and
// "gpkv-gpu-dev" when a CUDA device is usable, "rocksdb" and "lmdb" when
// built in.
std::vector<std::string> OrderedSystems();

// InvalidArgument naming the option when the ordered options are out of
// range.
Status ValidateOrderedConfig(const BenchConfig& config);

bool RunOrdered(const BenchConfig& config, ProgressSink* progress, BenchReport* report);

}  // namespace gpkv::bench

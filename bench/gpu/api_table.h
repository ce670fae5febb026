// How the GPU suites reach tables: through the public API only. A suite
// creates a pool with DB::Open, its table with DB::CreateTable, and runs
// batches on the gpkv::Table it gets (device pointers are batches too), so
// that its numbers are what a user of the library gets:
//   - BenchDb: a pool file of one table for one mode, created, reopened and
//     removed by the suite;
//   - ApiTable: that table's batches of 8-byte keys and values as the
//     suites call them (pointer and count);
//   - HashCounters: the counters the suites print, read from the table's
//     Stats() properties ("gphash.*").
//
// Plain C++, no CUDA. Who may call: bench/gpu/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "gpkv/db.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"

namespace gpkv::bench::gpu {

// The counters of a persistent hash table the suites print (gphash.*
// properties, docs/ARCHITECTURE.md); the cache counters are zero without a
// cache of hot buckets (direct mode only).
struct HashCounters {
  uint64_t keys = 0;
  uint64_t slots = 0;
  double load_factor = 0;
  uint32_t levels = 0;
  uint64_t resizes = 0;
  uint64_t index_bytes = 0;
  uint64_t cache_buckets = 0;         // gphash.cache-buckets
  uint64_t cache_table_buckets = 0;   // gphash.cache-table-buckets
  uint64_t cache_reloads = 0;         // gphash.cache-reloads
  uint64_t cache_buckets_loaded = 0;  // gphash.cache-buckets-loaded
  uint64_t cache_get_reads = 0;       // gphash.cache-get-reads
  uint64_t cache_get_pool_reads = 0;  // gphash.cache-get-pool-reads
};

// The counters of `table`, a persistent hash table written in place (a
// logged hash table's or an ordered table's: its keys, the rest zero).
// NotFound naming the property when the table's family has none of that
// name.
Result<HashCounters> HashCountersOf(Table& table);

// A table of 8-byte keys and values as the suites call it: `count`
// operations from pointers to host or device memory. Put and Get are one
// call of the public API each.
class ApiTable {
 public:
  // `tuning`: the Options::hash_gpu the table's DB was opened with.
  ApiTable(Table* table, const HashGpuOptions& tuning) : table_(table), tuning_(tuning) {}

  Status Put(const uint8_t* keys, const uint8_t* values, size_t count) const {
    return table_->Put(ConstBytes(keys, count * 8), ConstBytes(values, count * 8));
  }
  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count) const {
    return table_->Get(ConstBytes(keys, count * 8), MutableBytes(values, count * 8),
                       MutableBytes(found, count));
  }
  Status Erase(const uint8_t* keys, uint8_t* erased, size_t count) const {
    return table_->Erase(ConstBytes(keys, count * 8), MutableBytes(erased, count));
  }
  Result<HashCounters> Counters() const { return HashCountersOf(*table_); }
  const HashGpuOptions& tuning() const { return tuning_; }
  Table& table() const { return *table_; }

 private:
  Table* table_;
  HashGpuOptions tuning_;
};

// A pool file holding one table ("bench"), for one mode of a suite. The
// destructor closes the DB and removes the file.
class BenchDb {
 public:
  // Creates the pool file `path` (an older one of that name is removed
  // first) of `pool_bytes` with `options` (create_if_missing, pool_size and
  // error_if_exists are set here) and the table with `table_options`.
  static Result<std::unique_ptr<BenchDb>> Create(const std::string& path, uint64_t pool_bytes,
                                                 const Options& options,
                                                 const TableOptions& table_options);
  ~BenchDb();
  BenchDb(const BenchDb&) = delete;
  BenchDb& operator=(const BenchDb&) = delete;

  // Closes the DB (table() is null until Open).
  Status Close();
  // Opens the closed pool again with `options` (the table then runs its
  // open-time recovery and, on the GPU, builds what its mode keeps in GPU
  // memory); table() is the table opened again.
  Status Open(const Options& options);

  DB& db() const { return *db_; }
  Table* table() const { return table_; }
  const std::string& path() const { return path_; }
  uint64_t pool_bytes() const { return pool_bytes_; }

 private:
  BenchDb(std::string path, uint64_t pool_bytes)
      : path_(std::move(path)), pool_bytes_(pool_bytes) {}

  const std::string path_;
  const uint64_t pool_bytes_;
  std::unique_ptr<DB> db_;
  Table* table_ = nullptr;
};

}  // namespace gpkv::bench::gpu

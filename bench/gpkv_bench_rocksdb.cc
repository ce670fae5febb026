// The RocksDB driver (see gpkv_bench_rocksdb.h).
//
// Setup: one default column family in a fresh directory; a 512 MiB LRU block
// cache and 10-bit bloom filters (db_bench's usual read setup); background
// jobs = threads (IncreaseParallelism). A batch is split into `threads`
// contiguous parts, each run by an OpenMP thread: reads with the batched
// MultiGet, writes as one WriteBatch per part (concurrent writers share a WAL
// write and sync through RocksDB's group commit), erases as a MultiGet (for
// the per-key "was present" answer the other systems give) and a WriteBatch of
// deletes. The ordered suite's driver (RocksdbOrderedDriver) shares the setup.
#include "bench/gpkv_bench_rocksdb.h"

#include <omp.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_ordered.h"

namespace gpkv::bench {
namespace {

Status FromRocksdb(const rocksdb::Status& status, const std::string& what) {
  if (status.ok()) return Status::OK();
  return Status::IOError("rocksdb " + what + ": " + status.ToString());
}

class RocksdbDriver : public Driver {
 public:
  RocksdbDriver(std::string dir, std::unique_ptr<rocksdb::DB> db, const DriverConfig& config,
                bool sync)
      : dir_(std::move(dir)),
        db_(std::move(db)),
        key_size_(config.key_size),
        value_size_(config.value_size),
        threads_(config.threads) {
    write_options_.sync = sync;
    write_options_.disableWAL = false;
  }

  ~RocksdbDriver() override {
    db_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  Status Read(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) override {
    std::vector<Status> part_status(threads_);
#pragma omp parallel num_threads(threads_)
    {
      const int part = omp_get_thread_num();
      const int parts = omp_get_num_threads();
      const size_t begin = n * part / parts, end = n * (part + 1) / parts;
      part_status[part] = ReadRange(keys, begin, end, values, found);
    }
    return FirstError(part_status);
  }

  Status Write(const uint8_t* keys, const uint8_t* values, size_t n) override {
    std::vector<Status> part_status(threads_);
#pragma omp parallel num_threads(threads_)
    {
      const int part = omp_get_thread_num();
      const int parts = omp_get_num_threads();
      const size_t begin = n * part / parts, end = n * (part + 1) / parts;
      rocksdb::WriteBatch batch;
      for (size_t i = begin; i < end; ++i) {
        batch.Put(
            Key(keys, i),
            rocksdb::Slice(reinterpret_cast<const char*>(values) + i * value_size_, value_size_));
      }
      if (end > begin) part_status[part] = FromRocksdb(db_->Write(write_options_, &batch), "write");
    }
    return FirstError(part_status);
  }

  Status Erase(const uint8_t* keys, size_t n, uint8_t* erased) override {
    std::vector<uint8_t> values(n * value_size_);
    GPKV_RETURN_IF_ERROR(Read(keys, n, values.data(), erased));
    std::vector<Status> part_status(threads_);
#pragma omp parallel num_threads(threads_)
    {
      const int part = omp_get_thread_num();
      const int parts = omp_get_num_threads();
      const size_t begin = n * part / parts, end = n * (part + 1) / parts;
      rocksdb::WriteBatch batch;
      for (size_t i = begin; i < end; ++i) batch.Delete(Key(keys, i));
      if (end > begin)
        part_status[part] = FromRocksdb(db_->Write(write_options_, &batch), "delete");
    }
    return FirstError(part_status);
  }

  std::vector<std::pair<std::string, std::string>> Facts() override {
    std::vector<std::pair<std::string, std::string>> facts;
    for (const char* property : {"rocksdb.estimate-num-keys", "rocksdb.total-sst-files-size",
                                 "rocksdb.cur-size-all-mem-tables", "rocksdb.num-live-versions"}) {
      std::string value;
      if (db_->GetProperty(property, &value)) facts.push_back({property + 8, value});
    }
    return facts;
  }

 private:
  rocksdb::Slice Key(const uint8_t* keys, size_t i) const {
    return rocksdb::Slice(reinterpret_cast<const char*>(keys) + i * key_size_, key_size_);
  }

  Status ReadRange(const uint8_t* keys, size_t begin, size_t end, uint8_t* values, uint8_t* found) {
    const size_t count = end - begin;
    if (count == 0) return Status::OK();
    std::vector<rocksdb::Slice> slices(count);
    for (size_t i = 0; i < count; ++i) slices[i] = Key(keys, begin + i);
    std::vector<rocksdb::PinnableSlice> results(count);
    std::vector<rocksdb::Status> statuses(count);
    db_->MultiGet(read_options_, db_->DefaultColumnFamily(), count, slices.data(), results.data(),
                  statuses.data());
    for (size_t i = 0; i < count; ++i) {
      uint8_t* value = values + (begin + i) * value_size_;
      if (statuses[i].ok()) {
        found[begin + i] = 1;
        std::memcpy(value, results[i].data(), std::min<size_t>(results[i].size(), value_size_));
      } else if (statuses[i].IsNotFound()) {
        found[begin + i] = 0;
        std::memset(value, 0, value_size_);
      } else {
        return FromRocksdb(statuses[i], "multiget");
      }
    }
    return Status::OK();
  }

  static Status FirstError(const std::vector<Status>& statuses) {
    for (const Status& status : statuses) {
      if (!status.ok()) return status;
    }
    return Status::OK();
  }

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  uint32_t key_size_;
  uint32_t value_size_;
  int threads_;
  rocksdb::ReadOptions read_options_;
  rocksdb::WriteOptions write_options_;
};

// A fresh database in config.rocksdb_dir with the setup above.
Result<std::unique_ptr<rocksdb::DB>> OpenFresh(const DriverConfig& config) {
  std::error_code ignored;
  std::filesystem::remove_all(config.rocksdb_dir, ignored);
  rocksdb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.IncreaseParallelism(std::max(config.threads, 2));
  rocksdb::BlockBasedTableOptions table_options;
  table_options.block_cache = rocksdb::NewLRUCache(size_t{512} << 20);
  table_options.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_options));
  rocksdb::DB* db = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, config.rocksdb_dir, &db);
  if (!status.ok()) {
    return Status::IOError("rocksdb open " + config.rocksdb_dir + ": " + status.ToString());
  }
  return std::unique_ptr<rocksdb::DB>(db);
}

// The ordered suite's RocksDB (gpkv_bench_ordered.h): keys byte-reversed, so
// that bytewise order is gpkv's order; one WriteBatch synced per batch;
// queries split over the threads, each with its own iterator.
class RocksdbOrderedDriver : public OrderedDriver {
 public:
  RocksdbOrderedDriver(std::string dir, std::unique_ptr<rocksdb::DB> db, const DriverConfig& config)
      : dir_(std::move(dir)),
        db_(std::move(db)),
        key_size_(config.key_size),
        value_size_(config.value_size),
        threads_(config.threads) {
    write_options_.sync = true;
  }
  ~RocksdbOrderedDriver() override {
    db_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  Status Insert(const uint8_t* keys, const uint8_t* values, size_t n) override {
    rocksdb::WriteBatch batch;
    std::string key(key_size_, '\0');
    for (size_t i = 0; i < n; ++i) {
      Encode(keys + i * key_size_, key.data());
      batch.Put(key, rocksdb::Slice(reinterpret_cast<const char*>(values) + i * value_size_,
                                    value_size_));
    }
    return FromRocksdb(db_->Write(write_options_, &batch), "write");
  }

  Status Get(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) override {
    return ForParts(n, [&](size_t begin, size_t end) -> Status {
      const size_t count = end - begin;
      std::vector<std::string> encoded(count, std::string(key_size_, '\0'));
      std::vector<rocksdb::Slice> slices(count);
      for (size_t i = 0; i < count; ++i) {
        Encode(keys + (begin + i) * key_size_, encoded[i].data());
        slices[i] = encoded[i];
      }
      std::vector<rocksdb::PinnableSlice> results(count);
      std::vector<rocksdb::Status> statuses(count);
      db_->MultiGet(read_options_, db_->DefaultColumnFamily(), count, slices.data(), results.data(),
                    statuses.data());
      for (size_t i = 0; i < count; ++i) {
        uint8_t* value = values + (begin + i) * value_size_;
        found[begin + i] = statuses[i].ok();
        if (statuses[i].ok()) {
          std::memcpy(value, results[i].data(), std::min<size_t>(results[i].size(), value_size_));
        } else if (statuses[i].IsNotFound()) {
          std::memset(value, 0, value_size_);
        } else {
          return FromRocksdb(statuses[i], "multiget");
        }
      }
      return Status::OK();
    });
  }

  Status Count(const uint8_t* lo, const uint8_t* hi, size_t n, uint64_t* counts) override {
    return ForParts(n, [&](size_t begin, size_t end) -> Status {
      return Scan(
          lo, hi, begin, end, [&](size_t query, const rocksdb::Iterator*) { ++counts[query]; },
          counts);
    });
  }

  Status Range(const uint8_t* lo, const uint8_t* hi, size_t n, RangeDigest* out) override {
    std::vector<RangeDigest> parts(threads_);
    Status status = ForParts(n, [&](size_t begin, size_t end) -> Status {
      RangeDigest& part = parts[omp_get_thread_num()];
      // The pairs are copied out as gpkv's Range returns them.
      std::vector<uint8_t> key(key_size_), value(value_size_);
      return Scan(
          lo, hi, begin, end,
          [&](size_t, const rocksdb::Iterator* it) {
            Encode(reinterpret_cast<const uint8_t*>(it->key().data()),
                   reinterpret_cast<char*>(key.data()));
            std::memcpy(value.data(), it->value().data(),
                        std::min<size_t>(it->value().size(), value_size_));
            ++part.pairs;
            part.digest += PairHash(key.data(), key_size_, value.data(), value_size_);
          },
          nullptr);
    });
    for (const RangeDigest& part : parts) {
      out->pairs += part.pairs;
      out->digest += part.digest;
    }
    return status;
  }

  std::vector<std::pair<std::string, std::string>> Facts() override {
    std::vector<std::pair<std::string, std::string>> facts;
    for (const char* property : {"rocksdb.estimate-num-keys", "rocksdb.total-sst-files-size",
                                 "rocksdb.cur-size-all-mem-tables"}) {
      std::string value;
      if (db_->GetProperty(property, &value)) facts.push_back({property + 8, value});
    }
    return facts;
  }

 private:
  // gpkv key (little-endian words, the last most significant) -> big-endian
  // bytes; the same reversal decodes.
  void Encode(const uint8_t* key, char* out) const { BigEndianKey(key, key_size_, out); }

  template <typename Part>
  Status ForParts(size_t n, const Part& part) {
    return ForThreadShares(threads_, n, part);
  }

  // Visits the pairs of queries [begin, end) with one iterator: Seek(lo),
  // Next while key <= hi. counts (may be null) is zeroed first.
  template <typename Visit>
  Status Scan(const uint8_t* lo, const uint8_t* hi, size_t begin, size_t end, const Visit& visit,
              uint64_t* counts) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options_));
    std::string low(key_size_, '\0'), high(key_size_, '\0');
    for (size_t query = begin; query < end; ++query) {
      if (counts != nullptr) counts[query] = 0;
      Encode(lo + query * key_size_, low.data());
      Encode(hi + query * key_size_, high.data());
      const rocksdb::Slice limit(high);
      for (it->Seek(low); it->Valid() && it->key().compare(limit) <= 0; it->Next()) {
        visit(query, it.get());
      }
    }
    return FromRocksdb(it->status(), "iterator");
  }

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  uint32_t key_size_;
  uint32_t value_size_;
  int threads_;
  rocksdb::ReadOptions read_options_;
  rocksdb::WriteOptions write_options_;
};

}  // namespace

Result<std::unique_ptr<Driver>> CreateRocksdbDriver(const DriverConfig& config, bool sync) {
  auto db = OpenFresh(config);
  if (!db.ok()) return db.status();
  return std::unique_ptr<Driver>(
      std::make_unique<RocksdbDriver>(config.rocksdb_dir, std::move(*db), config, sync));
}

Result<std::unique_ptr<OrderedDriver>> CreateRocksdbOrderedDriver(const DriverConfig& config) {
  auto db = OpenFresh(config);
  if (!db.ok()) return db.status();
  return std::unique_ptr<OrderedDriver>(
      std::make_unique<RocksdbOrderedDriver>(config.rocksdb_dir, std::move(*db), config));
}

}  // namespace gpkv::bench

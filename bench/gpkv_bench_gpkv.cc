// The gpkv drivers: one hash table in a fresh pool file, persistent ("gpkv":
// written in place; "gpkv-logged": each batch a log record, the index in
// memory) or volatile ("gpkv-volatile": declared in the pool's catalog, its
// contents in memory).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_driver.h"
#include "gpkv/db.h"

namespace gpkv::bench {
namespace {

std::string FormatDouble(double value, int precision) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", precision, value);
  return text;
}

class GpkvDriver : public Driver {
 public:
  GpkvDriver(std::string pool_path, std::unique_ptr<DB> db, Table* table, uint32_t key_size,
             uint32_t value_size)
      : pool_path_(std::move(pool_path)),
        db_(std::move(db)),
        table_(table),
        key_size_(key_size),
        value_size_(value_size) {}

  ~GpkvDriver() override {
    table_ = nullptr;
    db_.reset();
    ::unlink(pool_path_.c_str());
  }

  Status Read(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) override {
    return table_->Get(ConstBytes(keys, n * key_size_), MutableBytes(values, n * value_size_),
                       MutableBytes(found, n));
  }
  Status Write(const uint8_t* keys, const uint8_t* values, size_t n) override {
    return table_->Put(ConstBytes(keys, n * key_size_), ConstBytes(values, n * value_size_));
  }
  Status Erase(const uint8_t* keys, size_t n, uint8_t* erased) override {
    return table_->Erase(ConstBytes(keys, n * key_size_), MutableBytes(erased, n));
  }

  std::vector<std::pair<std::string, std::string>> Facts() override {
    auto stats = table_->Stats();
    if (!stats.ok()) return {{"stats", stats.status().ToString()}};
    // The common counters, then the family's properties without the family
    // prefix ("gphash.load-factor" -> "load_factor").
    std::vector<std::pair<std::string, std::string>> facts = {
        {"keys", std::to_string(stats->keys)}, {"bytes", std::to_string(stats->bytes)}};
    for (const TableProperty& property : stats->properties) {
      std::string name = property.name.substr(property.name.find('.') + 1);
      std::replace(name.begin(), name.end(), '-', '_');
      const bool whole = property.value == std::floor(property.value);
      facts.emplace_back(name, whole ? std::to_string(static_cast<uint64_t>(property.value))
                                     : FormatDouble(property.value, 4));
    }
    return facts;
  }

 private:
  std::string pool_path_;
  std::unique_ptr<DB> db_;
  Table* table_;
  uint32_t key_size_;
  uint32_t value_size_;
};

}  // namespace

Result<std::unique_ptr<Driver>> CreateGpkvDriver(const DriverConfig& config) {
  ::unlink(config.pool_path.c_str());
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.pool_size = config.pool_size;
  options.backend = config.backend;
  options.cpu_threads = config.threads;
  options.sync_mode = SyncMode::kBatch;
  auto db = DB::Open(config.pool_path, options);
  if (!db.ok()) return db.status();
  TableOptions table_options;
  table_options.key_size = config.key_size;
  table_options.value_size = config.value_size;
  table_options.expected_keys = config.expected_keys;
  table_options.durability = config.durability;
  table_options.hash_log = config.hash_log;
  auto table = (*db)->CreateTable("bench", table_options);
  if (!table.ok()) {
    db->reset();
    ::unlink(config.pool_path.c_str());
    return table.status();
  }
  return std::unique_ptr<Driver>(std::make_unique<GpkvDriver>(
      config.pool_path, std::move(*db), *table, config.key_size, config.value_size));
}

}  // namespace gpkv::bench

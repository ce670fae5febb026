// The ordered suite's gpkv driver (see gpkv_bench_ordered.h): an ordered
// table in a fresh pool, its batches in host memory or, for gpkv-gpu-dev, in
// GPU memory, and the digest of what a Range returned.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_ordered.h"
#include "bench/gpkv_bench_workload.h"
#include "gpkv/db.h"
#if GPKV_HAVE_CUDA
#include "gpu/device_memory.h"
#endif

namespace gpkv::bench {

uint64_t PairHash(const uint8_t* key, uint32_t key_size, const uint8_t* value,
                  uint32_t value_size) {
  uint64_t h = 0x6f72646572656421ULL;
  for (uint32_t i = 0; i < key_size; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, key + i, std::min<uint32_t>(8, key_size - i));
    h = Mix64(h ^ word);
  }
  return h ^ ReadResultHash(true, value, value_size);
}

namespace {

#if GPKV_HAVE_CUDA
// The GPU memory of device-resident batches: inputs uploaded by Upload,
// outputs handed out by Out and read back by ReadBack. Buffers grow and are
// reused.
class DeviceBatch {
 public:
  Status Upload(int slot, const uint8_t* host, size_t bytes) {
    Buffer& in = in_[slot];
    in.host = nullptr;
    if (host == nullptr) return Status::OK();
    GPKV_RETURN_IF_ERROR(Reserve(in, bytes));
    GPKV_RETURN_IF_ERROR(in.device.CopyFromHost(host, bytes));
    in.host = host;
    return Status::OK();
  }
  const uint8_t* In(const uint8_t* host) const {
    for (const Buffer& in : in_) {
      if (in.host != nullptr && in.host == host) return in.device.data();
    }
    return host;
  }
  Result<uint8_t*> Out(int slot, uint8_t* host, size_t bytes) {
    Buffer& out = out_[slot];
    GPKV_RETURN_IF_ERROR(Reserve(out, bytes));
    out.out_host = host;
    out.bytes = bytes;
    return out.device.data();
  }
  Status ReadBack() {
    for (Buffer& in : in_) in.host = nullptr;
    for (Buffer& out : out_) {
      if (out.out_host != nullptr && out.bytes != 0) {
        GPKV_RETURN_IF_ERROR(out.device.CopyToHost(out.out_host, out.bytes));
      }
      out.out_host = nullptr;
    }
    return Status::OK();
  }

 private:
  struct Buffer {
    gpu::DeviceBytes device;
    const uint8_t* host = nullptr;  // inputs: the host bytes copied in
    uint8_t* out_host = nullptr;    // outputs: where they go back
    size_t bytes = 0;
  };
  static Status Reserve(Buffer& buffer, size_t bytes) {
    if (buffer.device.size() >= bytes && buffer.device.data() != nullptr) return Status::OK();
    auto allocated = gpu::DeviceBytes::Allocate(std::max<size_t>(bytes, 8));
    if (!allocated.ok()) return allocated.status();
    buffer.device = std::move(*allocated);
    return Status::OK();
  }
  Buffer in_[2];
  Buffer out_[2];
};
#endif
class GpkvOrderedDriver : public OrderedDriver {
 public:
  GpkvOrderedDriver(std::string pool_path, Options options, std::unique_ptr<DB> db, Table* table)
      : pool_path_(std::move(pool_path)),
        options_(options),
        db_(std::move(db)),
        table_(table),
        key_size_(table->options().key_size),
        value_size_(table->options().value_size) {}
  ~GpkvOrderedDriver() override {
    db_.reset();
    ::unlink(pool_path_.c_str());
  }

  // Batches in GPU memory from now on (the gpkv-gpu-dev system).
  void UseDeviceBatches() { device_io_ = true; }

  Status Prepare(const uint8_t* first, size_t first_bytes, const uint8_t* second,
                 size_t second_bytes) override {
#if GPKV_HAVE_CUDA
    if (device_io_) {
      prepared_ = true;
      GPKV_RETURN_IF_ERROR(device_.Upload(0, first, first_bytes));
      return device_.Upload(1, second, second_bytes);
    }
#endif
    (void)first, (void)first_bytes, (void)second, (void)second_bytes;
    return Status::OK();
  }
  Status Finish() override {
#if GPKV_HAVE_CUDA
    if (device_io_) {
      prepared_ = false;
      GPKV_RETURN_IF_ERROR(DigestDeviceRange());
      return device_.ReadBack();
    }
#endif
    return Status::OK();
  }

  Status Insert(const uint8_t* keys, const uint8_t* values, size_t n) override {
    return table_->Put(ConstBytes(In(keys), n * key_size_),
                       ConstBytes(In(values), n * value_size_));
  }
  Status Get(const uint8_t* keys, size_t n, uint8_t* values, uint8_t* found) override {
    uint8_t* out_values = values;
    uint8_t* out_found = found;
#if GPKV_HAVE_CUDA
    if (device_io_) {
      auto v = device_.Out(0, values, n * value_size_);
      auto f = device_.Out(1, found, n);
      if (!v.ok()) return v.status();
      if (!f.ok()) return f.status();
      out_values = *v;
      out_found = *f;
    }
#endif
    return table_->Get(ConstBytes(In(keys), n * key_size_),
                       MutableBytes(out_values, n * value_size_), MutableBytes(out_found, n));
  }
  Status Count(const uint8_t* lo, const uint8_t* hi, size_t n, uint64_t* counts) override {
    uint8_t* out_counts = reinterpret_cast<uint8_t*>(counts);
#if GPKV_HAVE_CUDA
    if (device_io_) {
      auto c = device_.Out(0, out_counts, n * 8);
      if (!c.ok()) return c.status();
      out_counts = *c;
    }
#endif
    return table_->Count(ConstBytes(In(lo), n * key_size_), ConstBytes(In(hi), n * key_size_),
                         MutableBytes(out_counts, n * 8));
  }
  Status Range(const uint8_t* lo, const uint8_t* hi, size_t n, RangeDigest* out) override {
#if GPKV_HAVE_GPU_BENCH
    if (device_io_ && prepared_) {
      // Results stay in GPU memory (Table::RangeOnDevice); Finish, after the
      // timer, reads them back for the digest.
      GPKV_RETURN_IF_ERROR(table_->RangeOnDevice(
          ConstBytes(In(lo), n * key_size_), ConstBytes(In(hi), n * key_size_), &device_results_));
      pending_range_ = out;
      return Status::OK();
    }
#endif
    GPKV_RETURN_IF_ERROR(table_->Range(ConstBytes(In(lo), n * key_size_),
                                       ConstBytes(In(hi), n * key_size_), &results_));
    Digest(results_.offsets.back(), out);
    return Status::OK();
  }
  std::vector<std::pair<std::string, std::string>> Facts() override {
    auto stats = table_->Stats();
    if (!stats.ok()) return {{"stats", stats.status().ToString()}};
    std::vector<std::pair<std::string, std::string>> facts = {
        {"keys", std::to_string(stats->keys)}, {"bytes", std::to_string(stats->bytes)}};
    for (const char* name : {"lsm.levels", "lsm.runs", "lsm.entries", "lsm.buffer-entries"}) {
      auto value = stats->Property(name);
      if (value) facts.emplace_back(name + 4, std::to_string(static_cast<uint64_t>(*value)));
    }
    // The GPU backend's write profile: where the write batches' time went.
    for (const TableProperty& property : stats->properties) {
      if (property.name.rfind("lsm.gpu-", 0) != 0) continue;
      const bool seconds = property.name.find("seconds") != std::string::npos;
      facts.emplace_back(property.name.substr(4),
                         seconds ? FormatFixed(property.value, 4)
                                 : std::to_string(static_cast<uint64_t>(property.value)));
    }
    return facts;
  }
  Result<double> Reopen() override {
    db_.reset();
    table_ = nullptr;
    Options options = options_;
    options.create_if_missing = false;
    options.error_if_exists = false;
    const auto start = std::chrono::steady_clock::now();
    auto db = DB::Open(pool_path_, options);
    if (!db.ok()) return db.status();
    auto table = (*db)->OpenTable("bench");
    if (!table.ok()) return table.status();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    db_ = std::move(*db);
    table_ = *table;
    return seconds;
  }

 private:
  std::string pool_path_;
  Options options_;
  std::unique_ptr<DB> db_;
  Table* table_;
  uint32_t key_size_;
  uint32_t value_size_;
  const uint8_t* In(const uint8_t* host) const {
#if GPKV_HAVE_CUDA
    if (device_io_) return device_.In(host);
#endif
    return host;
  }

  // Digests the pairs on the table's threads, as LMDB's driver digests its
  // pairs on the threads that read them: a digest on the calling thread
  // alone is a serial share of every timed Range call, which grows with the
  // threads (at 16 threads, a fifth of the batch).
  void Digest(uint64_t pairs, RangeDigest* out) const {
    const int threads = std::max(1, options_.cpu_threads);
    struct alignas(64) Share {
      uint64_t digest = 0;
    };
    std::vector<Share> shares(threads);
    // Never fails: the part returns OK.
    (void)ForThreadShares(threads, pairs, [&](size_t begin, size_t end) {
      uint64_t digest = 0;
      for (size_t i = begin; i < end; ++i) {
        digest += PairHash(&results_.keys[i * key_size_], key_size_,
                           &results_.values[i * value_size_], value_size_);
      }
      shares[omp_get_thread_num()].digest = digest;
      return Status::OK();
    });
    out->pairs += pairs;
    for (const Share& share : shares) out->digest += share.digest;
  }
  // The digest of the last RangeOnDevice call, if one is pending.
  Status DigestDeviceRange() {
#if GPKV_HAVE_GPU_BENCH
    if (pending_range_ == nullptr) return Status::OK();
    RangeDigest* out = pending_range_;
    pending_range_ = nullptr;
    const uint64_t pairs = device_results_.pairs;
    results_.keys.resize(pairs * key_size_);
    results_.values.resize(pairs * value_size_);
    GPKV_RETURN_IF_ERROR(
        gpu::CopyDeviceToHost(results_.keys.data(), device_results_.keys, results_.keys.size()));
    GPKV_RETURN_IF_ERROR(gpu::CopyDeviceToHost(results_.values.data(), device_results_.values,
                                               results_.values.size()));
    Digest(pairs, out);
#endif
    return Status::OK();
  }

  Table::RangeResults results_;
  bool device_io_ = false;
#if GPKV_HAVE_CUDA
  bool prepared_ = false;  // device batches: between Prepare and Finish
#endif
#if GPKV_HAVE_GPU_BENCH
  Table::DeviceRangeResults device_results_;
  RangeDigest* pending_range_ = nullptr;
#endif
#if GPKV_HAVE_CUDA
  DeviceBatch device_;
#endif
};

// Keys and values of records: record r's key is random (every word), so a
// range of width 2^64 * 8 / n over the most significant word holds about 8

}  // namespace

namespace {

// A driver over table "bench" of `table_options` in a fresh pool.
Result<std::unique_ptr<GpkvOrderedDriver>> OpenGpkvDriver(const DriverConfig& config,
                                                          const TableOptions& table_options) {
  ::unlink(config.pool_path.c_str());
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.pool_size = config.pool_size;
  options.backend = config.backend;
  options.cpu_threads = config.threads;
  options.sync_mode = SyncMode::kBatch;
  options.ordered_gpu = config.ordered_gpu;
  auto db = DB::Open(config.pool_path, options);
  if (!db.ok()) return db.status();
  auto table = (*db)->CreateTable("bench", table_options);
  if (!table.ok()) {
    db->reset();
    ::unlink(config.pool_path.c_str());
    return table.status();
  }
  return std::make_unique<GpkvOrderedDriver>(config.pool_path, options, std::move(*db), *table);
}

}  // namespace

Result<std::unique_ptr<OrderedDriver>> CreateGpkvOrderedDriver(const DriverConfig& config,
                                                               uint64_t batch_entries,
                                                               uint32_t log_batches,
                                                               bool device_batches) {
  TableOptions table_options;
  table_options.kind = TableKind::kOrdered;
  table_options.key_size = config.key_size;
  table_options.value_size = config.value_size;
  table_options.ordered.batch_entries = batch_entries;
  table_options.ordered.log_batches = log_batches;
  auto driver = OpenGpkvDriver(config, table_options);
  if (!driver.ok()) return driver.status();
  if (device_batches) (*driver)->UseDeviceBatches();
  return std::unique_ptr<OrderedDriver>(std::move(*driver));
}

Result<std::unique_ptr<OrderedDriver>> CreateGpkvBtreeDriver(const DriverConfig& config) {
  TableOptions table_options;
  table_options.kind = TableKind::kOrdered;
  table_options.durability = Durability::kVolatile;
  table_options.key_size = config.key_size;
  table_options.value_size = config.value_size;
  DriverConfig on_cpu = config;
  on_cpu.backend = Backend::kCpu;
  on_cpu.pool_size = uint64_t{16} << 20;  // the catalog only
  auto driver = OpenGpkvDriver(on_cpu, table_options);
  if (!driver.ok()) return driver.status();
  return std::unique_ptr<OrderedDriver>(std::move(*driver));
}

#ifndef GPKV_HAVE_ROCKSDB
Result<std::unique_ptr<OrderedDriver>> CreateRocksdbOrderedDriver(const DriverConfig&) {
  return Status::Unsupported("this gpkv was built without RocksDB");
}
#endif

#if GPKV_HAVE_LMDB
bool LmdbBuiltIn() { return true; }
#else
bool LmdbBuiltIn() { return false; }

Result<std::unique_ptr<OrderedDriver>> CreateLmdbOrderedDriver(const DriverConfig&) {
  return Status::Unsupported("this gpkv-bench was built without LMDB (liblmdb-dev)");
}
#endif

}  // namespace gpkv::bench

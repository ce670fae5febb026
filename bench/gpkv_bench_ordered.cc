// The ordered suite (see gpkv_bench_ordered.h) and its gpkv driver.
#include "bench/gpkv_bench_ordered.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_runner.h"
#include "bench/gpkv_bench_suite.h"
#include "bench/gpkv_bench_workload.h"
#include "gpkv/db.h"
#include "tables/lsm/layout.h"
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

constexpr uint64_t kDefaultQueries = uint64_t{1} << 20;
constexpr uint64_t kLoadBatch = uint64_t{1} << 16;  // untimed loads of the query tables
constexpr double kDefaultMaxSeconds = 2.0;
constexpr double kRangeKeys = 8.0;  // expected keys of a Count / Range query
constexpr double kTarget = 5.0;     // issue #13: CPU, >= 5x RocksDB
// Issue #13, GPU (H100, 2^24..2^26 keys): Mops/s, and the open in seconds.
constexpr double kGpuInsertTarget = 1000.0;
constexpr double kGpuGetTarget = 1000.0;
constexpr double kGpuCountTarget = 1000.0;
constexpr double kGpuRangeTarget = 300.0;
constexpr double kGpuOpenTarget = 2.0;
constexpr const char* kGpuSystem = "gpkv-gpu";
constexpr const char* kGpuDeviceSystem = "gpkv-gpu-dev";
bool IsGpuSystem(const std::string& system) {
  return system == kGpuSystem || system == kGpuDeviceSystem;
}

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
const char* const kWorkloads[] = {"insert", "get", "count", "range", "E"};

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

  void Digest(uint64_t pairs, RangeDigest* out) const {
    out->pairs += pairs;
    for (uint64_t i = 0; i < pairs; ++i) {
      out->digest += PairHash(&results_.keys[i * key_size_], key_size_,
                              &results_.values[i * value_size_], value_size_);
    }
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
// of n records.
class Records {
 public:
  Records(uint64_t seed, uint32_t key_size, uint32_t value_size)
      : seed_(seed), key_size_(key_size), value_size_(value_size) {}

  void Key(uint64_t record, uint8_t* out) const {
    for (uint32_t w = 0; w < key_size_ / 8; ++w) {
      const uint64_t word = Mix64(seed_ ^ Mix64(record * 4 + w));
      std::memcpy(out + 8 * w, &word, 8);
    }
  }
  void Value(uint64_t record, uint8_t* out) const {
    uint64_t word = Mix64(record ^ seed_ ^ 0x76616c7565ULL);
    for (uint32_t i = 0; i < value_size_; i += 8) {
      std::memcpy(out + i, &word, std::min<uint32_t>(8, value_size_ - i));
      word = Mix64(word);
    }
  }
  // Records [first, first + n) into keys / values.
  void Fill(uint64_t first, size_t n, std::vector<uint8_t>* keys,
            std::vector<uint8_t>* values) const {
    keys->resize(n * key_size_);
    values->resize(n * value_size_);
    for (size_t i = 0; i < n; ++i) {
      Key(first + i, keys->data() + i * key_size_);
      Value(first + i, values->data() + i * value_size_);
    }
  }
  // A query [lo, hi] holding about kRangeKeys of `records` random keys.
  void Query(std::mt19937_64& random, uint64_t records, uint8_t* lo, uint8_t* hi) const {
    const uint32_t top = key_size_ - 8;  // the most significant word
    for (uint32_t i = 0; i < key_size_; i += 8) {
      const uint64_t word = random();
      std::memcpy(lo + i, &word, 8);
      std::memcpy(hi + i, &word, 8);
    }
    uint64_t start;
    std::memcpy(&start, lo + top, 8);
    const double width =
        std::ldexp(kRangeKeys, 64) / static_cast<double>(std::max<uint64_t>(1, records));
    const uint64_t span =
        width >= std::ldexp(1.0, 64) ? ~uint64_t{0} : static_cast<uint64_t>(width);
    const uint64_t end = start > ~uint64_t{0} - span ? ~uint64_t{0} : start + span;
    std::memcpy(hi + top, &end, 8);
  }

 private:
  uint64_t seed_;
  uint32_t key_size_, value_size_;
};

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Fills the latency fields of `m` from per-batch microseconds.
void FinishMeasurement(std::vector<double>* batch_us, Measurement* m) {
  m->batches = batch_us->size();
  if (batch_us->empty()) return;
  m->p50_us = Percentile(batch_us, 50);
  m->p99_us = Percentile(batch_us, 99);
  m->max_us = batch_us->back();
}

struct Case {
  const BenchConfig* config;
  std::string system;
  uint32_t key_size, value_size;
  double max_seconds;
  ProgressSink* progress;
};

Measurement Start(const Case& c, const std::string& workload, const std::string& distribution,
                  uint64_t batch) {
  Measurement m;
  m.suite = "ordered";
  m.workload = workload;
  m.distribution = distribution;
  m.system = c.system;
  m.key_size = c.key_size;
  m.value_size = c.value_size;
  m.batch_size = batch;
  if (c.progress != nullptr) {
    c.progress->Start(
        c.system + " " + workload + " " + distribution + " batch " + std::to_string(batch), 0);
  }
  return m;
}

Result<std::unique_ptr<OrderedDriver>> CreateDriver(const Case& c, uint64_t keys) {
  BenchConfig sized = *c.config;
  sized.keys = keys;
  DriverConfig driver = MakeDriverConfig(sized, c.key_size, c.value_size);
  // Runs of every level and a cascade's new run beside the runs it replaces,
  // and the log of M batches of b (two halves from M = 2 on).
  const uint64_t entry = c.key_size + 8 + c.value_size;
  const uint32_t m = c.config->ordered_log_batches;
  const uint64_t log_bytes = lsm::LogHalves(lsm::RootFlagsFor(m)) * m *
                             c.config->ordered_batch_entries *
                             lsm::LogEntryBytes(c.key_size, c.value_size);
  driver.pool_size = c.config->pool_size > 0 ? c.config->pool_size
                                             : 4 * keys * entry + log_bytes + (uint64_t{256} << 20);
  if (IsGpuSystem(c.system)) {
    driver.backend = Backend::kCuda;
    auto created = CreateGpkvOrderedDriver(driver, c.config->ordered_batch_entries,
                                           c.config->ordered_log_batches);
    if (created.ok() && c.system == kGpuDeviceSystem) {
      static_cast<GpkvOrderedDriver*>(created->get())->UseDeviceBatches();
    }
    return created;
  }
  if (c.system == "gpkv")
    return CreateGpkvOrderedDriver(driver, c.config->ordered_batch_entries,
                                   c.config->ordered_log_batches);
  return CreateRocksdbOrderedDriver(driver);
}

// Insert rate at one batch size on a fresh table; the table's facts (the
// GPU backend's write profile) go to report->facts.
Measurement MeasureInsert(const Case& c, uint64_t batch, BenchReport* report) {
  const uint64_t total =
      std::max<uint64_t>(batch, (c.config->ordered_insert_keys + batch - 1) / batch * batch);
  Measurement m = Start(c, "insert", "uniform", batch);
  auto driver = CreateDriver(c, total);
  if (!driver.ok()) {
    m.error = driver.status().ToString();
    return m;
  }
  const Records records(c.config->seed, c.key_size, c.value_size);
  std::vector<uint8_t> keys, values;
  std::vector<double> batch_us;
  for (uint64_t done = 0; done < total; done += batch) {
    records.Fill(done, batch, &keys, &values);
    Status status = (*driver)->Prepare(keys.data(), keys.size(), values.data(), values.size());
    const auto start = Clock::now();
    if (status.ok()) status = (*driver)->Insert(keys.data(), values.data(), batch);
    const double seconds = Since(start);
    if (status.ok()) status = (*driver)->Finish();
    if (!status.ok()) {
      m.error = status.ToString();
      break;
    }
    m.seconds += seconds;
    batch_us.push_back(1e6 * seconds);
    m.ops += batch;
    m.writes += batch;
    if (c.progress != nullptr) c.progress->Update(m.ops);
    if (m.seconds > c.max_seconds && done + batch < total) {
      m.complete = false;
      break;
    }
  }
  FinishMeasurement(&batch_us, &m);
  if (IsGpuSystem(c.system)) {
    report->facts.push_back(
        {c.system, "after inserts of batch " + std::to_string(batch),
         std::to_string(c.key_size) + " B keys / " + std::to_string(c.value_size) + " B values",
         (*driver)->Facts()});
  }
  if (c.progress != nullptr) c.progress->Finish();
  return m;
}

// Get, Count or Range on a table of `loaded` records.
Measurement MeasureQueries(const Case& c, OrderedDriver& driver, const std::string& workload,
                           const std::string& distribution, uint64_t loaded) {
  const BenchConfig& config = *c.config;
  const uint64_t queries = config.ops > 0 ? config.ops : kDefaultQueries;
  Measurement m = Start(c, workload, distribution, config.batch);
  const Records records(config.seed, c.key_size, c.value_size);
  std::mt19937_64 random(RunSeed(config.seed, workload, distribution));
  std::vector<uint8_t> lo(config.batch * c.key_size), hi(lo.size());
  std::vector<uint8_t> values(config.batch * c.value_size), found(config.batch);
  std::vector<uint64_t> counts(config.batch);
  std::vector<double> batch_us;
  for (uint64_t done = 0; done < queries; done += config.batch) {
    const size_t n = std::min<uint64_t>(config.batch, queries - done);
    for (size_t i = 0; i < n; ++i) {
      if (workload == "get") {
        records.Key(random() % loaded, &lo[i * c.key_size]);
      } else {
        records.Query(random, loaded, &lo[i * c.key_size], &hi[i * c.key_size]);
      }
    }
    RangeDigest range;
    Status status = driver.Prepare(lo.data(), n * c.key_size,
                                   workload == "get" ? nullptr : hi.data(), n * c.key_size);
    const auto start = Clock::now();
    if (status.ok()) {
      status = workload == "get"     ? driver.Get(lo.data(), n, values.data(), found.data())
               : workload == "count" ? driver.Count(lo.data(), hi.data(), n, counts.data())
                                     : driver.Range(lo.data(), hi.data(), n, &range);
    }
    const double seconds = Since(start);
    if (status.ok()) status = driver.Finish();
    if (!status.ok()) {
      m.error = status.ToString();
      break;
    }
    m.seconds += seconds;
    batch_us.push_back(1e6 * seconds);
    m.ops += n;
    m.reads += n;
    for (size_t i = 0; i < n; ++i) {
      if (workload == "get") {
        m.found += found[i];
        if (found[i]) {
          m.read_digest +=
              PairHash(&lo[i * c.key_size], c.key_size, &values[i * c.value_size], c.value_size);
        }
      } else if (workload == "count") {
        m.found += counts[i];
        m.read_digest += Mix64(counts[i] ^ (done + i));
      }
    }
    m.found += range.pairs;
    m.read_digest += range.digest;
    if (c.progress != nullptr) c.progress->Update(m.ops);
    if (m.seconds > c.max_seconds && done + n < queries) {
      m.complete = false;
      break;
    }
  }
  FinishMeasurement(&batch_us, &m);
  if (c.progress != nullptr) c.progress->Finish();
  return m;
}

// YCSB E: each batch inserts its 5% new records (one durable batch), then
// runs its 95% ranges. `loaded` grows by the inserts.
Measurement MeasureScanWorkload(const Case& c, OrderedDriver& driver,
                                const std::string& distribution, uint64_t* loaded) {
  const BenchConfig& config = *c.config;
  const uint64_t ops = config.ops > 0 ? config.ops : kDefaultQueries;
  Measurement m = Start(c, "E", distribution, config.batch);
  const Records records(config.seed, c.key_size, c.value_size);
  std::mt19937_64 random(RunSeed(config.seed, "E", distribution));
  std::vector<uint8_t> lo(config.batch * c.key_size), hi(lo.size()), keys, values;
  std::vector<double> batch_us;
  for (uint64_t done = 0; done < ops; done += config.batch) {
    const size_t n = std::min<uint64_t>(config.batch, ops - done);
    size_t inserts = 0, ranges = 0;
    for (size_t i = 0; i < n; ++i) {
      if (random() % 100 < 5) {
        ++inserts;
      } else {
        records.Query(random, *loaded, &lo[ranges * c.key_size], &hi[ranges * c.key_size]);
        ++ranges;
      }
    }
    records.Fill(*loaded, inserts, &keys, &values);
    RangeDigest range;
    const auto start = Clock::now();
    Status status =
        inserts == 0 ? Status::OK() : driver.Insert(keys.data(), values.data(), inserts);
    if (status.ok() && ranges > 0) status = driver.Range(lo.data(), hi.data(), ranges, &range);
    const double seconds = Since(start);
    if (!status.ok()) {
      m.error = status.ToString();
      break;
    }
    *loaded += inserts;
    m.seconds += seconds;
    batch_us.push_back(1e6 * seconds);
    m.ops += n;
    m.reads += ranges;
    m.writes += inserts;
    m.found += range.pairs;
    m.read_digest += range.digest;
    if (c.progress != nullptr) c.progress->Update(m.ops);
    if (m.seconds > c.max_seconds && done + n < ops) {
      m.complete = false;
      break;
    }
  }
  FinishMeasurement(&batch_us, &m);
  if (c.progress != nullptr) c.progress->Finish();
  return m;
}

bool Wanted(const BenchConfig& config, const std::string& workload) {
  return config.workloads.empty() || std::find(config.workloads.begin(), config.workloads.end(),
                                               workload) != config.workloads.end();
}

std::string TableLabel(int log2) { return "2^" + std::to_string(log2) + " keys"; }

// Grows one table per system through the sizes and measures the queries at
// each; then YCSB E on the largest.
bool RunQueries(const Case& c, BenchReport* report) {
  const BenchConfig& config = *c.config;
  const std::string sizes =
      std::to_string(c.key_size) + " B keys / " + std::to_string(c.value_size) + " B values";
  std::vector<int> table_log2 = config.ordered_table_log2;
  std::sort(table_log2.begin(), table_log2.end());
  const uint64_t largest = uint64_t{1} << table_log2.back();
  const uint64_t e_inserts = (config.ops > 0 ? config.ops : kDefaultQueries) / 10;
  auto driver = CreateDriver(c, largest + e_inserts);
  if (!driver.ok()) {
    report->notes.push_back("system " + c.system + " (" + sizes +
                            "): could not be created: " + driver.status().ToString());
    return false;
  }
  const Records records(config.seed, c.key_size, c.value_size);
  std::vector<uint8_t> keys, values;
  uint64_t loaded = 0;
  bool ok = true;
  // The GPU backend loads in batches of b (each one run, no log records).
  const uint64_t load_batch =
      IsGpuSystem(c.system) ? std::max(kLoadBatch, config.ordered_batch_entries) : kLoadBatch;
  for (int log2 : table_log2) {
    const uint64_t target = uint64_t{1} << log2;
    while (loaded < target) {
      const uint64_t n = std::min(load_batch, target - loaded);
      records.Fill(loaded, n, &keys, &values);
      Status status = (*driver)->Insert(keys.data(), values.data(), n);
      if (!status.ok()) {
        report->notes.push_back("system " + c.system + " load: " + status.ToString());
        return false;
      }
      loaded += n;
    }
    report->facts.push_back({c.system, "at " + TableLabel(log2), sizes, (*driver)->Facts()});
    for (const char* workload : {"get", "count", "range"}) {
      if (!Wanted(config, workload)) continue;
      Measurement m = MeasureQueries(c, **driver, workload, TableLabel(log2), loaded);
      ok &= m.error.empty();
      report->results.push_back(std::move(m));
    }
  }
  if (IsGpuSystem(c.system)) {
    // Recovery of the largest table: runs read back into GPU memory and
    // checksummed there, the log replayed.
    Measurement m = Start(c, "open", TableLabel(table_log2.back()), 1);
    auto seconds = (*driver)->Reopen();
    if (seconds.ok()) {
      m.seconds = *seconds;
      m.ops = loaded;
      m.batches = 1;
    } else {
      m.error = seconds.status().ToString();
      ok = false;
    }
    if (c.progress != nullptr) c.progress->Finish();
    report->results.push_back(std::move(m));
    if (!seconds.ok()) return false;
  }
  if (Wanted(config, "E")) {
    Measurement m = MeasureScanWorkload(c, **driver, TableLabel(table_log2.back()), &loaded);
    ok &= m.error.empty();
    report->results.push_back(std::move(m));
  }
  return ok;
}

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

void AddTargets(const BenchConfig& config, uint32_t key_size, uint32_t value_size,
                BenchReport* report) {
  const std::string why =
      "RocksDB was not part of this run (built without it, or left out by --systems)";
  const std::string sizes = std::to_string(key_size) + "/" + std::to_string(value_size) + " B";
  auto add = [&](const std::string& name, const std::string& workload,
                 const std::string& distribution, uint64_t batch) {
    const Measurement* gpkv =
        Find(*report, "gpkv", workload, distribution, batch, key_size, value_size);
    if (gpkv == nullptr) return;
    AddRatioTarget(report, name + " (" + sizes + ", CPU)", "RocksDB", gpkv,
                   Find(*report, "rocksdb", workload, distribution, batch, key_size, value_size),
                   kTarget, why);
  };
  for (int log2 = config.ordered_insert_min_log2; log2 <= config.ordered_insert_max_log2; ++log2) {
    add("durable batched inserts, batch 2^" + std::to_string(log2) + " vs RocksDB", "insert",
        "uniform", uint64_t{1} << log2);
  }
  for (int log2 : config.ordered_table_log2) {
    add("ranges of ~8 keys, " + TableLabel(log2) + " vs RocksDB Seek+Next", "range",
        TableLabel(log2), config.batch);
  }
  std::vector<int> table_log2 = config.ordered_table_log2;
  std::sort(table_log2.begin(), table_log2.end());
  add("YCSB E (95% ranges of ~8 keys, 5% inserts) vs RocksDB", "E", TableLabel(table_log2.back()),
      config.batch);
}

// The absolute GPU targets, for the gpkv-gpu measurements of this
// run: rates in Mops/s (at least), the open in seconds (at most).
void AddGpuTargets(const BenchConfig& config, const std::string& system, uint32_t key_size,
                   uint32_t value_size, BenchReport* report) {
  const std::string sizes = std::to_string(key_size) + "/" + std::to_string(value_size) + " B";
  auto add = [&](const std::string& name, const Measurement* m, double target, bool at_most) {
    TargetCheck check;
    check.name = name + " (" + sizes + ", " + system + ")";
    check.comparison = at_most ? "seconds" : "Mops/s";
    check.target = target;
    const std::string target_text =
        (at_most ? "< " : ">= ") + FormatFixed(target, 0) + (at_most ? " s" : " Mops/s");
    if (m == nullptr || !m->error.empty()) {
      check.why = m == nullptr ? system + " was not part of this run" : m->error;
      check.text = check.name + ": not measured (target " + target_text + ")";
      report->targets.push_back(check);
      return;
    }
    check.measured = true;
    check.value = at_most ? m->seconds : m->mops();
    check.met = at_most ? check.value < target : check.value >= target;
    check.text = check.name + ": " + FormatFixed(check.value, at_most ? 3 : 1) +
                 (at_most ? " s" : " Mops/s") + " (target " + target_text + ": " +
                 (check.met ? "met" : "missed") + ")";
    if (!m->complete) check.text += " [stopped at the time limit]";
    report->targets.push_back(check);
  };
  for (int log2 = config.ordered_insert_min_log2; log2 <= config.ordered_insert_max_log2; ++log2) {
    if (log2 != 20) continue;  // the target is for batches of 2^20
    add("durable batched inserts, batch 2^20, b = " + std::to_string(config.ordered_batch_entries) +
            ", M = " + std::to_string(config.ordered_log_batches),
        Find(*report, system, "insert", "uniform", uint64_t{1} << 20, key_size, value_size),
        kGpuInsertTarget, false);
  }
  std::vector<int> table_log2 = config.ordered_table_log2;
  std::sort(table_log2.begin(), table_log2.end());
  for (int log2 : table_log2) {
    const std::string table = TableLabel(log2);
    add("get, " + table, Find(*report, system, "get", table, config.batch, key_size, value_size),
        kGpuGetTarget, false);
    add("count of ~8 keys, " + table,
        Find(*report, system, "count", table, config.batch, key_size, value_size), kGpuCountTarget,
        false);
    add("range of ~8 keys, " + table,
        Find(*report, system, "range", table, config.batch, key_size, value_size), kGpuRangeTarget,
        false);
  }
  add("open (recovery) of " + TableLabel(table_log2.back()),
      Find(*report, system, "open", TableLabel(table_log2.back()), 1, key_size, value_size),
      kGpuOpenTarget, true);
}

}  // namespace

Result<std::unique_ptr<OrderedDriver>> CreateGpkvOrderedDriver(const DriverConfig& config,
                                                               uint64_t batch_entries,
                                                               uint32_t log_batches) {
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
  TableOptions table_options;
  table_options.kind = TableKind::kOrdered;
  table_options.key_size = config.key_size;
  table_options.value_size = config.value_size;
  table_options.ordered.batch_entries = batch_entries;
  table_options.ordered.log_batches = log_batches;
  auto table = (*db)->CreateTable("bench", table_options);
  if (!table.ok()) {
    db->reset();
    ::unlink(config.pool_path.c_str());
    return table.status();
  }
  return std::unique_ptr<OrderedDriver>(
      std::make_unique<GpkvOrderedDriver>(config.pool_path, options, std::move(*db), *table));
}

#ifndef GPKV_HAVE_ROCKSDB
Result<std::unique_ptr<OrderedDriver>> CreateRocksdbOrderedDriver(const DriverConfig&) {
  return Status::Unsupported("this gpkv was built without RocksDB");
}
#endif

std::vector<std::string> OrderedSystems() {
  std::vector<std::string> systems = {"gpkv"};
#if GPKV_HAVE_CUDA
  if (gpu::DeviceUsable().ok()) {
    systems.push_back(kGpuSystem);
    systems.push_back(kGpuDeviceSystem);
  }
#endif
  if (RocksdbBuiltIn()) systems.push_back("rocksdb");
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
    if (system != "gpkv" && !IsGpuSystem(system) && system != "rocksdb") {
      return usage(
          "--systems: the ordered suite runs gpkv, gpkv-gpu, gpkv-gpu-dev and rocksdb, "
          "not '" +
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
                 : system == kGpuSystem
                     ? "each batch durable and atomic in the pool (ordered table, CUDA backend: "
                       "runs in GPU memory; batches in host memory)"
                 : system == kGpuDeviceSystem
                     ? "as gpkv-gpu, batches in GPU memory (uploaded before the timer, results "
                       "read back after it; Range results stay in GPU memory: "
                       "Table::RangeOnDevice, digested after the timer)"
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
      AddTargets(config, key_size, value_size, report);
      for (const std::string& system : systems) {
        if (IsGpuSystem(system)) AddGpuTargets(config, system, key_size, value_size, report);
      }
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
      "ranges and counts: [lo, hi] over the most significant key word, about 8 keys each; gpkv "
      "answers a batch with Count / Range, RocksDB with an iterator per thread (Seek + Next); "
      "RocksDB keys are the gpkv keys big-endian");
  return ok;
}

}  // namespace gpkv::bench

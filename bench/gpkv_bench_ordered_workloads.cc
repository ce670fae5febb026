// The ordered suite's workloads (see gpkv_bench_ordered_workloads.h).
#include "bench/gpkv_bench_ordered_workloads.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/gpkv_bench_driver.h"
#include "bench/gpkv_bench_ordered.h"
#include "bench/gpkv_bench_runner.h"
#include "bench/gpkv_bench_suite.h"
#include "bench/gpkv_bench_workload.h"

namespace gpkv::bench {
namespace {

constexpr uint64_t kLoadBatch = uint64_t{1} << 16;  // untimed loads of the query tables
constexpr double kRangeKeys = 8.0;  // expected keys of a Count / Range query (range32: 32)

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
  // A query [lo, hi] holding about `expected` of `records` random keys.
  void Query(std::mt19937_64& random, uint64_t records, uint8_t* lo, uint8_t* hi,
             double expected = kRangeKeys) const {
    const uint32_t top = key_size_ - 8;  // the most significant word
    for (uint32_t i = 0; i < key_size_; i += 8) {
      const uint64_t word = random();
      std::memcpy(lo + i, &word, 8);
      std::memcpy(hi + i, &word, 8);
    }
    uint64_t start;
    std::memcpy(&start, lo + top, 8);
    const double width =
        std::ldexp(expected, 64) / static_cast<double>(std::max<uint64_t>(1, records));
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
  // and the log as OrderedOptions::log_batches sizes it: M * b entries of
  // K + 8 + V bytes (value words padded to 8), two halves from M = 2 on.
  const uint64_t entry = c.key_size + 8 + c.value_size;
  const uint32_t m = c.config->ordered_log_batches;
  const uint64_t log_halves = m >= 2 ? 2 : 1;
  const uint64_t log_entry = c.key_size + 8 + (c.value_size + uint64_t{7}) / 8 * 8;
  const uint64_t log_bytes = log_halves * m * c.config->ordered_batch_entries * log_entry;
  driver.pool_size = c.config->pool_size > 0 ? c.config->pool_size
                                             : 4 * keys * entry + log_bytes + (uint64_t{256} << 20);
  if (IsGpuSystem(c.system)) {
    driver.backend = Backend::kCuda;
    return CreateGpkvOrderedDriver(driver, c.config->ordered_batch_entries,
                                   c.config->ordered_log_batches, c.system == kGpuDeviceSystem);
  }
  if (c.system == "gpkv")
    return CreateGpkvOrderedDriver(driver, c.config->ordered_batch_entries,
                                   c.config->ordered_log_batches);
  if (c.system == kBtreeCpuSystem) return CreateGpkvBtreeDriver(driver);
  if (c.system == "lmdb") return CreateLmdbOrderedDriver(driver);
  return CreateRocksdbOrderedDriver(driver);
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
  const double expected = workload == kRange32 ? 32.0 : kRangeKeys;
  std::vector<double> batch_us;
  for (uint64_t done = 0; done < queries; done += config.batch) {
    const size_t n = std::min<uint64_t>(config.batch, queries - done);
    for (size_t i = 0; i < n; ++i) {
      if (workload == "get") {
        records.Key(random() % loaded, &lo[i * c.key_size]);
      } else {
        records.Query(random, loaded, &lo[i * c.key_size], &hi[i * c.key_size], expected);
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

}  // namespace

bool Wanted(const BenchConfig& config, const std::string& workload) {
  if (config.workloads.empty()) return workload != kRange32;
  return std::find(config.workloads.begin(), config.workloads.end(), workload) !=
         config.workloads.end();
}

std::string TableLabel(int log2) { return "2^" + std::to_string(log2) + " keys"; }

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
    for (const char* workload : {"get", "count", "range", kRange32}) {
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

}  // namespace gpkv::bench

// The btree suite (see btree_bench.h): the GPU B-tree beside the LSM and
// the slab hash, through the public API only (no CUDA here: a build without
// the CUDA backend answers Unsupported).
#include "bench/gpu/btree_bench.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench/gpu/btree_bench_report.h"
#include "gpkv/db.h"
#if GPKV_HAVE_GPU_BENCH
#include "bench/gpu/device_memory_use.h"
#include "gpu/device_memory.h"
#endif

namespace gpkv::bench::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// One system of the suite: a table kind on the CUDA backend.
struct System {
  const char* name;
  TableKind kind;
  Durability durability;
};

constexpr System kBtree{"btree-gpu", TableKind::kOrdered, Durability::kVolatile};
constexpr System kLsm{"lsm-gpu", TableKind::kOrdered, Durability::kPersistent};
constexpr System kSlab{"slab-hash-gpu", TableKind::kHash, Durability::kVolatile};

// A DB of its own pool holding one table of `system` for `keys` keys.
struct Open {
  std::string path;
  std::unique_ptr<DB> db;
  Table* table = nullptr;

  ~Open() {
    db.reset();
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

Status OpenTable(const BtreeBenchConfig& config, const System& system, uint64_t keys, Open* open) {
  open->path = config.pool_dir + "/gpkv-btree-bench-" + system.name + ".gpkv";
  std::error_code ignored;
  std::filesystem::remove(open->path, ignored);
  Options options;
  options.create_if_missing = true;
  options.backend = Backend::kCuda;
  // Volatile tables keep nothing in the pool; the LSM keeps its runs there.
  options.pool_size = system.durability == Durability::kPersistent
                          ? std::max<uint64_t>(uint64_t{1} << 30, keys * 128)
                          : uint64_t{64} << 20;
  auto db = DB::Open(open->path, options);
  if (!db.ok()) return db.status();
  open->db = std::move(*db);
  TableOptions table;
  table.kind = system.kind;
  table.durability = system.durability;
  table.key_size = 8;
  table.value_size = 8;
  table.expected_keys = keys;
  auto created = open->db->CreateTable("t", table);
  if (!created.ok()) return created.status();
  open->table = *created;
  return Status::OK();
}

// The keys (distinct, random), their values, and the queries of a key count.
struct Workload {
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
  std::vector<uint64_t> shuffled;  // the keys in another order
};

Workload MakeWorkload(uint64_t n, uint64_t seed) {
  Workload work;
  std::mt19937_64 random(seed * 0x9e3779b97f4a7c15ull + n);
  std::unordered_set<uint64_t> seen;
  seen.reserve(n * 2);
  work.keys.reserve(n);
  while (work.keys.size() < n) {
    const uint64_t key = random();
    if (seen.insert(key).second) work.keys.push_back(key);
  }
  work.values.resize(n);
  for (uint64_t i = 0; i < n; ++i) work.values[i] = work.keys[i] * 3 + 1;
  work.shuffled = work.keys;
  std::shuffle(work.shuffled.begin(), work.shuffled.end(), random);
  return work;
}

// The arrays the phases' batches come from and answer into: the
// workload's keys, values and range bounds in host memory, or
// (BtreeBenchConfig::device_batches) copies of them in GPU memory, made
// before any timing. Entries are 8 bytes, found flags 1.
class Arrays {
 public:
  Status Make(const Workload& work, bool on_device) {
    const uint64_t n = work.keys.size();
    on_device_ = on_device;
    queries_ = std::max<uint64_t>(1, n / 8);
    // Range queries [k, k + span] from present keys, the span holding 8
    // (32) keys on average.
    for (int which = 0; which < 2; ++which) {
      const uint64_t expected = which == 0 ? 8 : 32;
      const uint64_t span = static_cast<uint64_t>(18446744073709551615.0 / n * expected);
      lo_[which].resize(queries_);
      hi_[which].resize(queries_);
      for (uint64_t i = 0; i < queries_; ++i) {
        const uint64_t low = work.shuffled[i % n];
        lo_[which][i] = low;
        hi_[which][i] = low > ~uint64_t{0} - span ? ~uint64_t{0} : low + span;
      }
    }
    out_values_.assign(n, 0);
    found_.assign(n, 0);
    keys_ = Bytes(work.keys.data());
    values_ = Bytes(work.values.data());
    shuffled_ = Bytes(work.shuffled.data());
    out_values_at_ = reinterpret_cast<uint8_t*>(out_values_.data());
    found_at_ = found_.data();
    for (int which = 0; which < 2; ++which) {
      lo_at_[which] = Bytes(lo_[which].data());
      hi_at_[which] = Bytes(hi_[which].data());
    }
    if (!on_device) return Status::OK();
#if GPKV_HAVE_GPU_BENCH
    GPKV_RETURN_IF_ERROR(ToDevice(work.keys, &keys_));
    GPKV_RETURN_IF_ERROR(ToDevice(work.values, &values_));
    GPKV_RETURN_IF_ERROR(ToDevice(work.shuffled, &shuffled_));
    GPKV_RETURN_IF_ERROR(ToDevice(out_values_, &out_values_at_));
    for (int which = 0; which < 2; ++which) {
      GPKV_RETURN_IF_ERROR(ToDevice(lo_[which], &lo_at_[which]));
      GPKV_RETURN_IF_ERROR(ToDevice(hi_[which], &hi_at_[which]));
    }
    auto found = ::gpkv::gpu::DeviceBytes::Allocate(n);
    if (!found.ok()) return found.status();
    GPKV_RETURN_IF_ERROR(found->Fill(0));
    found_at_ = found->data();
    device_.push_back(std::move(*found));
    return Status::OK();
#else
    return Status::Unsupported("btree suite: this gpkv was built without the GPU benchmarks");
#endif
  }

  bool on_device() const { return on_device_; }
  // Range queries of each kind (expected 8 or 32 keys).
  uint64_t queries() const { return queries_; }

  // Entries [begin, end) of an array, as a batch.
  static ConstBytes Batch(const uint8_t* array, uint64_t begin, uint64_t end) {
    return ConstBytes(array + begin * 8, (end - begin) * 8);
  }
  const uint8_t* keys() const { return keys_; }
  const uint8_t* values() const { return values_; }
  const uint8_t* shuffled() const { return shuffled_; }
  const uint8_t* lo(uint64_t expected) const { return lo_at_[expected == 8 ? 0 : 1]; }
  const uint8_t* hi(uint64_t expected) const { return hi_at_[expected == 8 ? 0 : 1]; }
  MutableBytes OutValues(uint64_t begin, uint64_t end) const {
    return MutableBytes(out_values_at_ + begin * 8, (end - begin) * 8);
  }
  MutableBytes Found(uint64_t begin, uint64_t end) const {
    return MutableBytes(found_at_ + begin, end - begin);
  }

  // Whether every get of the phase found its key; clears the flags for the
  // next run.
  Status AllFound() {
    const uint64_t n = found_.size();
#if GPKV_HAVE_GPU_BENCH
    if (on_device_) {
      GPKV_RETURN_IF_ERROR(::gpkv::gpu::CopyDeviceToHost(found_.data(), found_at_, n));
      GPKV_RETURN_IF_ERROR(device_.back().Fill(0));
    }
#endif
    const bool all = std::count(found_.begin(), found_.end(), 1) == static_cast<long>(n);
    std::fill(found_.begin(), found_.end(), 0);
    return all ? Status::OK() : Status::Corruption("btree suite: get: a key was not found");
  }

 private:
  static const uint8_t* Bytes(const uint64_t* data) {
    return reinterpret_cast<const uint8_t*>(data);
  }
#if GPKV_HAVE_GPU_BENCH
  template <typename Pointer>
  Status ToDevice(const std::vector<uint64_t>& host, Pointer* at) {
    auto bytes = ::gpkv::gpu::DeviceBytes::Allocate(std::max<size_t>(host.size() * 8, 8));
    if (!bytes.ok()) return bytes.status();
    GPKV_RETURN_IF_ERROR(bytes->CopyFromHost(host.data(), host.size() * 8));
    *at = bytes->data();
    device_.push_back(std::move(*bytes));
    return Status::OK();
  }
  std::vector<::gpkv::gpu::DeviceBytes> device_;
#endif
  bool on_device_ = false;
  uint64_t queries_ = 0;
  std::vector<uint64_t> lo_[2], hi_[2];
  std::vector<uint64_t> out_values_;
  std::vector<uint8_t> found_;
  const uint8_t* keys_ = nullptr;
  const uint8_t* values_ = nullptr;
  const uint8_t* shuffled_ = nullptr;
  const uint8_t* lo_at_[2] = {nullptr, nullptr};
  const uint8_t* hi_at_[2] = {nullptr, nullptr};
  uint8_t* out_values_at_ = nullptr;
  uint8_t* found_at_ = nullptr;
};

// Runs `call(begin, end)` over [0, n) in batches of `batch`.
Status Batched(uint64_t n, uint64_t batch, const std::function<Status(uint64_t, uint64_t)>& call) {
  for (uint64_t begin = 0; begin < n; begin += batch) {
    const Status status = call(begin, std::min(n, begin + batch));
    if (!status.ok()) return status;
  }
  return Status::OK();
}

// A phase's result: the rate in M operations per second, or why it failed.
struct Measured {
  double mops = 0;
  Status status;
};

// Times `run` (after `prepare`, untimed) `repeats` times on a fresh table
// each; the median rate of `operations` operations. `check` (untimed)
// verifies the table after each run.
Measured Measure(const BtreeBenchConfig& config, const System& system, uint64_t keys,
                 uint64_t operations, const std::function<Status(Table&)>& prepare,
                 const std::function<Status(Table&)>& run,
                 const std::function<Status(Table&)>& check) {
  std::vector<double> rates;
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    Open open;
    Measured failed;
    failed.status = OpenTable(config, system, keys, &open);
    if (failed.status.ok()) failed.status = prepare(*open.table);
    if (!failed.status.ok()) return failed;
    const auto start = Clock::now();
    failed.status = run(*open.table);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (failed.status.ok()) failed.status = check(*open.table);
    if (!failed.status.ok()) return failed;
    rates.push_back(static_cast<double>(operations) / seconds / 1e6);
  }
  std::sort(rates.begin(), rates.end());
  return Measured{rates[rates.size() / 2], Status::OK()};
}

Status Expect(bool holds, const std::string& what) {
  return holds ? Status::OK() : Status::Corruption("btree suite: " + what);
}

// The number of live keys, by one Count over the whole key space.
Status ExpectKeys(Table& table, uint64_t expected, const std::string& phase) {
  if (table.options().kind != TableKind::kOrdered) {
    auto stats = table.Stats();
    if (!stats.ok()) return stats.status();
    return Expect(stats->keys == expected, phase + ": the hash table lost keys");
  }
  std::vector<uint64_t> lo{0}, hi{~uint64_t{0}}, counts(1);
  GPKV_RETURN_IF_ERROR(table.Count(lo, hi, counts));
  return Expect(counts[0] == expected, phase + ": " + std::to_string(counts[0]) + " keys, not " +
                                           std::to_string(expected));
}

class Suite {
 public:
  Suite(const BtreeBenchConfig& config, std::FILE* text, std::string* json_lines)
      : config_(config), text_(text), json_lines_(json_lines) {}

  Status Run() {
#if GPKV_HAVE_GPU_BENCH
    GPKV_RETURN_IF_ERROR(::gpkv::gpu::DeviceUsable());
    std::fprintf(text_, "# device: %s\n", ::gpkv::gpu::DeviceDescription().c_str());
#endif
    std::string batches;
    for (uint64_t batch : config_.batches) {
      batches += (batches.empty() ? "" : ", ") + std::to_string(batch);
    }
    std::fprintf(text_, "# batches of %s operations in %s\n", batches.c_str(),
                 config_.device_batches ? "GPU memory" : "host memory");
    std::fprintf(text_,
                 "# snapshot cost: an operation's time with a snapshot held (or read on it) over "
                 "its time without one, same keys and batch size\n");
    std::fputs(BtreeTextHeader().c_str(), text_);
    GPKV_RETURN_IF_ERROR(WarmUp());
    const bool sweep = config_.batches.size() > 1;
    for (uint64_t keys : config_.keys) {
      std::fprintf(text_, "# %" PRIu64 " keys: making them\n", keys);
      std::fflush(text_);
      const Workload work = MakeWorkload(keys, config_.seed);
      Arrays arrays;
      GPKV_RETURN_IF_ERROR(arrays.Make(work, config_.device_batches));
      for (uint64_t batch : config_.batches) {
        if (sweep) std::fprintf(text_, "# %" PRIu64 " keys, batches of %" PRIu64 "\n", keys, batch);
        for (const System* system : {&kBtree, &kLsm, &kSlab}) {
          const Status status = RunSystem(*system, work, arrays, batch);
          PrintMemoryUse(*system);
          if (status.ok()) continue;
          // A peer that does not fit the device beside the arrays is left
          // out of this point; the B-tree is what the suite measures.
          if (system == &kBtree || status.code() != Code::kOutOfDeviceMemory) {
            return status;
          }
          std::fprintf(text_,
                       "# %s at %" PRIu64 " keys, batches of %" PRIu64
                       ": its remaining rows left out, out of GPU memory (%s)\n",
                       system->name, keys, batch, status.message().c_str());
        }
      }
    }
    return Status::OK();
  }

 private:
  Status RunSystem(const System& system, const Workload& work, Arrays& arrays, uint64_t batch) {
    const uint64_t n = work.keys.size();
    rates_.clear();
    auto nothing = [](Table&) { return Status::OK(); };
    auto all_found = [&](Table&) { return arrays.AllFound(); };
    auto load_all = [&](Table& table) {
      return table.Put(Arrays::Batch(arrays.keys(), 0, n), Arrays::Batch(arrays.values(), 0, n));
    };
    auto all_there = [&](Table& table) { return ExpectKeys(table, n, "load"); };
    // The insert phases: the first half of the keys in one Put (untimed),
    // then the second half in batches.
    const uint64_t half = n / 2;
    auto load_half = [&](Table& table) {
      return table.Put(Arrays::Batch(arrays.keys(), 0, half),
                       Arrays::Batch(arrays.values(), 0, half));
    };
    auto inserts = [&](Table& table) {
      return Batched(n - half, batch, [&](uint64_t begin, uint64_t end) {
        return table.Put(Arrays::Batch(arrays.keys(), half + begin, half + end),
                         Arrays::Batch(arrays.values(), half + begin, half + end));
      });
    };
    auto erases = [&](Table& table) {
      return Batched(n, batch, [&](uint64_t begin, uint64_t end) {
        return table.Erase(Arrays::Batch(arrays.shuffled(), begin, end));
      });
    };
    auto none_left = [&](Table& table) { return ExpectKeys(table, 0, "erase"); };

    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "bulk build", n,
                                Measure(config_, system, n, n, nothing, load_all, all_there)));
    GPKV_RETURN_IF_ERROR(
        Report(system, n, batch, "insert", n - half,
               Measure(config_, system, n, n - half, load_half, inserts, all_there)));
    GPKV_RETURN_IF_ERROR(
        Report(system, n, batch, "get", n,
               Measure(config_, system, n, n, load_all, Gets(n, arrays, batch), all_found)));
    const uint64_t queries = arrays.queries();
    if (system.kind == TableKind::kOrdered) {
      for (uint64_t expected : {8, 32}) {
        GPKV_RETURN_IF_ERROR(Report(system, n, batch, RangeName(expected), queries,
                                    Measure(config_, system, n, queries, load_all,
                                            Ranges(arrays, expected, batch, nullptr), nothing)));
      }
    }
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "erase", n,
                                Measure(config_, system, n, n, load_all, erases, none_left)));
    if (&system != &kBtree) return Status::OK();

    // The snapshot rows: the same tree, a snapshot held (or not) through the
    // phase; each beside the same operation without one.
    std::unique_ptr<Snapshot> snapshot;
    auto snap = [&](Table& table) {
      auto taken = table.TakeSnapshot();
      if (!taken.ok()) return taken.status();
      snapshot = std::move(*taken);
      return Status::OK();
    };
    auto load_and_snap = [&](Table& table) {
      GPKV_RETURN_IF_ERROR(load_all(table));
      return snap(table);
    };
    auto release = [&](Table&) {
      snapshot.reset();
      return Status::OK();
    };
    auto updates = [&](Table& table) {
      return Batched(n, batch, [&](uint64_t begin, uint64_t end) {
        return table.Put(Arrays::Batch(arrays.shuffled(), begin, end),
                         Arrays::Batch(arrays.values(), begin, end));
      });
    };
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "update", n,
                                Measure(config_, system, n, n, load_all, updates, nothing)));
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "update, snapshot held", n,
                                Measure(config_, system, n, n, load_and_snap, updates, release),
                                "update"));
    // Every key updated after the snapshot: reads through it take the older
    // version of each, reads of the current contents the newer.
    auto load_snap_update = [&](Table& table) {
      GPKV_RETURN_IF_ERROR(load_and_snap(table));
      return updates(table);
    };
    auto release_all_found = [&](Table& table) {
      GPKV_RETURN_IF_ERROR(release(table));
      return arrays.AllFound();
    };
    GPKV_RETURN_IF_ERROR(Report(
        system, n, batch, "get, snapshot held", n,
        Measure(config_, system, n, n, load_snap_update, Gets(n, arrays, batch), release_all_found),
        "get"));
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "get on the snapshot", n,
                                Measure(config_, system, n, n, load_snap_update,
                                        Gets(n, arrays, batch, &snapshot), release_all_found),
                                "get"));
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "range ~8 on the snapshot", queries,
                                Measure(config_, system, n, queries, load_snap_update,
                                        Ranges(arrays, 8, batch, &snapshot), release),
                                RangeName(8)));
    // Fresh keys inserted, and every key erased, while a snapshot of the
    // tree before them is held.
    auto load_half_and_snap = [&](Table& table) {
      GPKV_RETURN_IF_ERROR(load_half(table));
      return snap(table);
    };
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "insert, snapshot held", n - half,
                                Measure(config_, system, n, n - half, load_half_and_snap, inserts,
                                        [&](Table& table) {
                                          GPKV_RETURN_IF_ERROR(release(table));
                                          return all_there(table);
                                        }),
                                "insert"));
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "erase, snapshot held", n,
                                Measure(config_, system, n, n, load_and_snap, erases,
                                        [&](Table& table) {
                                          GPKV_RETURN_IF_ERROR(release(table));
                                          return none_left(table);
                                        }),
                                "erase"));
    GPKV_RETURN_IF_ERROR(Report(system, n, batch, "range ~32 on the snapshot", queries,
                                Measure(config_, system, n, queries, load_snap_update,
                                        Ranges(arrays, 32, batch, &snapshot), release),
                                RangeName(32)));
    return Status::OK();
  }

  // "# after lsm-gpu: 12.3 GiB of 79.1 GiB of GPU memory in use" (the
  // batch arrays and what the stream-ordered pool keeps included).
  void PrintMemoryUse(const System& system) {
#if GPKV_HAVE_GPU_BENCH
    uint64_t used = 0, total = 0;
    if (!DeviceMemoryUse(&used, &total).ok()) return;
    std::fprintf(text_, "# after %s: %.1f GiB of %.1f GiB of GPU memory in use\n", system.name,
                 used / 1073741824.0, total / 1073741824.0);
#else
    (void)system;
#endif
  }

  static std::string RangeName(uint64_t expected) { return "range ~" + std::to_string(expected); }

  // Every key, shuffled, in batches, its value and found flag into the
  // arrays' (Arrays::AllFound checks them after the timing); at *snapshot
  // when given.
  static std::function<Status(Table&)> Gets(uint64_t n, const Arrays& arrays, uint64_t batch,
                                            const std::unique_ptr<Snapshot>* snapshot = nullptr) {
    return [n, &arrays, batch, snapshot](Table& table) {
      BatchOptions options;
      if (snapshot != nullptr) options.snapshot = snapshot->get();
      return Batched(n, batch, [&](uint64_t begin, uint64_t end) {
        return table.Get(Arrays::Batch(arrays.shuffled(), begin, end), arrays.OutValues(begin, end),
                         arrays.Found(begin, end), options);
      });
    };
  }

  // The arrays' range queries of about `expected` keys, in batches, through
  // RangeOnDevice where the table has it, at *snapshot when given.
  static std::function<Status(Table&)> Ranges(const Arrays& arrays, uint64_t expected,
                                              uint64_t batch,
                                              const std::unique_ptr<Snapshot>* snapshot) {
    return [&arrays, expected, batch, snapshot](Table& table) {
      BatchOptions options;
      if (snapshot != nullptr) options.snapshot = snapshot->get();
      // One results object for the run: a table may reuse its storage.
      Table::DeviceRangeResults device;
      return Batched(arrays.queries(), batch, [&](uint64_t begin, uint64_t end) {
        const uint64_t count = end - begin;
        const ConstBytes low = Arrays::Batch(arrays.lo(expected), begin, end);
        const ConstBytes high = Arrays::Batch(arrays.hi(expected), begin, end);
        Status status = table.RangeOnDevice(low, high, &device, options);
        if (status.IsUnsupported()) {
          Table::RangeResults results;
          GPKV_RETURN_IF_ERROR(table.Range(low, high, &results, options));
          return Expect(results.offsets.back() >= count, "range: a query missed its own key");
        }
        GPKV_RETURN_IF_ERROR(status);
        return Expect(device.pairs >= count, "range: a query missed its own key");
      });
    };
  }

  // Prints and records one row; `without` names the row of the same
  // operation without a snapshot (measured before it in this block).
  // Every system's phases once on a small tree, not reported, so that the
  // first timed row does not carry the process's one-time costs: CUDA loads
  // each kernel at its first launch (the bulk build, the suite's first row,
  // measured 1.8 G keys/s with them and 3.7 without at 2^24 keys on an
  // H200). The tree is large enough for the sorted gets.
  Status WarmUp() {
    constexpr uint64_t kWarmUpKeys = uint64_t{1} << 17;
    std::fprintf(text_, "# warm-up: every phase once on %" PRIu64 " keys, not reported\n",
                 kWarmUpKeys);
    std::fflush(text_);
    const Workload work = MakeWorkload(kWarmUpKeys, config_.seed + 1);
    Arrays arrays;
    GPKV_RETURN_IF_ERROR(arrays.Make(work, config_.device_batches));
    warming_up_ = true;
    Status status;
    for (const System* system : {&kBtree, &kLsm, &kSlab}) {
      status = RunSystem(*system, work, arrays, config_.batches.front());
      if (!status.ok()) break;
    }
    warming_up_ = false;
    if (status.ok()) return status;
    return Status(status.code(), "warm-up: " + status.message());
  }

  Status Report(const System& system, uint64_t keys, uint64_t batch, const std::string& operation,
                uint64_t operations, const Measured& measured, const std::string& without = "") {
    if (!measured.status.ok()) {
      return Status(measured.status.code(),
                    std::string(system.name) + " " + operation + ": " + measured.status.message());
    }
    if (warming_up_) {
      rates_[operation] = measured.mops;
      return Status::OK();
    }
    BtreeRow row;
    row.system = system.name;
    row.keys = keys;
    row.operation = operation;
    row.operations = operations;
    row.batch = batch;
    row.device_batches = config_.device_batches;
    row.mops = measured.mops;
    if (!without.empty()) {
      row.without = without;
      row.without_mops = rates_.at(without);
    }
    rates_[operation] = measured.mops;
    std::fputs(BtreeTextLine(row).c_str(), text_);
    std::fflush(text_);
    *json_lines_ += BtreeJsonLine(row);
    return Status::OK();
  }

  const BtreeBenchConfig& config_;
  bool warming_up_ = false;  // Report prints nothing
  std::FILE* text_;
  std::string* json_lines_;
  std::map<std::string, double> rates_;  // this system's rows at this key count and batch size
};

}  // namespace

bool BtreeBenchBuiltIn() {
#if GPKV_HAVE_GPU_BENCH
  return true;
#else
  return false;
#endif
}

Status ValidateBtreeBenchConfig(const BtreeBenchConfig& config) {
  if (config.keys.empty()) return Status::InvalidArgument("--keys-log2 / --keys: no key count");
  for (uint64_t keys : config.keys) {
    if (keys < (uint64_t{1} << kBtreeMinKeysLog2) || keys > (uint64_t{1} << kBtreeMaxKeysLog2)) {
      return Status::InvalidArgument("--keys-log2 / --keys " + std::to_string(keys) +
                                     ": the btree suite runs 2^" +
                                     std::to_string(kBtreeMinKeysLog2) + " to 2^" +
                                     std::to_string(kBtreeMaxKeysLog2) + " keys");
    }
  }
  if (config.batches.empty()) return Status::InvalidArgument("--batch: no batch size");
  for (uint64_t batch : config.batches) {
    if (batch == 0) return Status::InvalidArgument("--batch must be at least 1");
  }
  if (config.repeats < 1 || config.repeats > 100) {
    return Status::InvalidArgument("--repeats must be 1 to 100");
  }
  if (config.pool_dir.empty()) return Status::InvalidArgument("--pool-dir must name a directory");
  if (!BtreeBenchBuiltIn()) {
    return Status::Unsupported("--suite btree: this gpkv was built without the GPU benchmarks");
  }
  return Status::OK();
}

Status RunBtreeBench(const BtreeBenchConfig& config, std::FILE* text, std::string* json_lines) {
  return Suite(config, text, json_lines).Run();
}

}  // namespace gpkv::bench::gpu

// The slab suite's measurements (see slab_bench.h): the slab hash's points,
// its growth and SlabAlloc's rate; the persistent peer is in
// slab_bench_gphash.cu. CUDA code, built with the CUDA backend only;
// slab_bench.cc is the entry in every build.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "bench/gpu/slab_bench_gphash.h"
#include "bench/gpu/slab_bench_keys.h"
#include "bench/gpu/slab_bench_report.h"
#include "bench/gpu/slab_bench_run.h"
#include "bench/gpu/slab_bench_sizing.h"
#include "gpkv/db.h"
#include "gpu/device_memory.h"
#include "gpu/slab_alloc.h"
#include "tables/slab_hash/mixed_batch.h"

namespace gpkv::bench::gpu {
namespace {

using ::gpkv::gpu::DeviceBytes;
using ::gpkv::gpu::SlabAlloc;

constexpr uint32_t kKeySize = 8;  // 8-byte keys and values
constexpr uint32_t kValueSize = 8;
constexpr uint32_t kPairBytes = kKeySize + kValueSize;
// The pool of the slab hash's DB: its volatile tables keep only their
// catalog entries there.
constexpr uint64_t kSlabPoolBytes = uint64_t{64} << 20;

// `status` with what failed in front of its message.
Status Within(const std::string& what, const Status& status) {
  return Status(status.code(), what + ": " + status.message());
}

// A volatile hash table (the slab hash on the GPU) created through the
// public API in the run's DB, dropped when destroyed.
class SlabTable {
 public:
  static Result<std::unique_ptr<SlabTable>> Create(DB& db, uint64_t expected_keys) {
    static std::atomic<uint64_t> next_id{0};
    TableOptions options;
    options.kind = TableKind::kHash;
    options.durability = Durability::kVolatile;
    options.key_size = kKeySize;
    options.value_size = kValueSize;
    options.expected_keys = expected_keys;
    const std::string name = "slab-" + std::to_string(next_id++);
    auto table = db.CreateTable(name, options);
    if (!table.ok()) return table.status();
    return std::unique_ptr<SlabTable>(new SlabTable(db, name, *table));
  }
  ~SlabTable() {
    Status dropped = db_.DropTable(name_);
    if (!dropped.ok()) std::fprintf(stderr, "gpkv-bench: %s\n", dropped.ToString().c_str());
  }
  SlabTable(const SlabTable&) = delete;
  SlabTable& operator=(const SlabTable&) = delete;

  Table& table() const { return *table_; }

 private:
  SlabTable(DB& db, std::string name, Table* table)
      : db_(db), name_(std::move(name)), table_(table) {}

  DB& db_;
  const std::string name_;
  Table* const table_;
};

Result<std::unique_ptr<SlabTable>> CreateTable(DB& db, uint64_t expected_keys) {
  return SlabTable::Create(db, expected_keys);
}

// The counters the suite reads of a slab hash: its Stats() properties
// ("slab_hash.*", docs/ARCHITECTURE.md).
struct SlabStats {
  uint64_t keys = 0;
  uint64_t buckets = 0;
  uint64_t slots = 0;
  double load_factor = 0;
  double memory_utilisation = 0;
  uint64_t rehashes = 0;
  double rehash_seconds = 0;
  uint64_t flushes = 0;
};

Result<SlabStats> StatsOf(Table& table) {
  auto stats = table.Stats();
  if (!stats.ok()) return stats.status();
  SlabStats out;
  out.keys = stats->keys;
  double buckets = 0, slots = 0, rehashes = 0, flushes = 0;
  const struct {
    const char* name;
    double* value;
  } properties[] = {{"slab_hash.buckets", &buckets},
                    {"slab_hash.slots", &slots},
                    {"slab_hash.load-factor", &out.load_factor},
                    {"slab_hash.memory-utilisation", &out.memory_utilisation},
                    {"slab_hash.rehashes", &rehashes},
                    {"slab_hash.rehash-seconds", &out.rehash_seconds},
                    {"slab_hash.flushes", &flushes}};
  for (const auto& property : properties) {
    const auto value = stats->Property(property.name);
    if (!value.has_value()) {
      return Status::NotFound("table '" + table.name() + "' has no property " + property.name);
    }
    *property.value = *value;
  }
  out.buckets = static_cast<uint64_t>(buckets);
  out.slots = static_cast<uint64_t>(slots);
  out.rehashes = static_cast<uint64_t>(rehashes);
  out.flushes = static_cast<uint64_t>(flushes);
  return out;
}

// How the tables of one point are created.
struct PointSizing {
  BucketPlan plan;
  uint64_t expected_keys = 0;  // TableOptions::expected_keys that gives about plan.buckets
  uint64_t buckets = 0;        // what it gave
  uint32_t slots_per_slab = 0;
};

// Finds expected_keys for the planned bucket count: the buckets per
// expected key from a table created for `keys`, then refined on the table's
// answer.
Result<PointSizing> SizeForTarget(DB& db, uint64_t keys, int percent) {
  PointSizing sizing;
  {
    auto probe = CreateTable(db, keys);
    if (!probe.ok()) return probe.status();
    auto stats = StatsOf((*probe)->table());
    if (!stats.ok()) return stats.status();
    if (stats->buckets == 0) return Status::Corruption("a slab hash reports no buckets");
    sizing.buckets = stats->buckets;
    // A new table has one slab per bucket, so its slots are buckets times
    // the slots of a slab.
    if (stats->slots == 0 || stats->slots % stats->buckets != 0) {
      return Status::Corruption("a new slab hash reports " + std::to_string(stats->slots) +
                                " slots in " + std::to_string(stats->buckets) + " buckets");
    }
    sizing.slots_per_slab = static_cast<uint32_t>(stats->slots / stats->buckets);
  }
  sizing.plan = PlanBuckets(keys, percent / 100.0, sizing.slots_per_slab, kPairBytes);
  double expected = static_cast<double>(keys);
  for (int attempt = 0; attempt < 6; ++attempt) {
    expected = std::max(1.0, expected * sizing.plan.buckets / sizing.buckets);
    sizing.expected_keys = static_cast<uint64_t>(std::llround(expected));
    auto table = CreateTable(db, sizing.expected_keys);
    if (!table.ok()) return table.status();
    auto stats = StatsOf((*table)->table());
    if (!stats.ok()) return stats.status();
    sizing.buckets = stats->buckets;
    const uint64_t off = sizing.buckets > sizing.plan.buckets
                             ? sizing.buckets - sizing.plan.buckets
                             : sizing.plan.buckets - sizing.buckets;
    if (off <= std::max<uint64_t>(1, sizing.plan.buckets / 200)) break;
  }
  return sizing;
}

// Times `run` on the host's clock into row->seconds.
Status Timed(SlabRow* row, const std::function<Status()>& run) {
  const double start = Now();
  GPKV_RETURN_IF_ERROR(run());
  row->seconds.push_back(Now() - start);
  return Status::OK();
}

Status Build(Table& table, const SlabKeySets& sets, bool on_device, uint64_t batch) {
  const uint8_t* keys = sets.load_keys.data(on_device);
  const uint8_t* values = sets.load_values.data(on_device);
  return ForEachBatch(sets.keys, batch, [&](uint64_t first, uint64_t count) {
    return table.Put(ConstBytes(keys + first * 8, count * 8),
                     ConstBytes(values + first * 8, count * 8));
  });
}

Status Search(Table& table, const MirroredBytes& keys, SearchOutputs& out, bool on_device,
              uint64_t total, uint64_t batch) {
  return ForEachBatch(total, batch, [&](uint64_t first, uint64_t count) {
    return table.Get(ConstBytes(keys.data(on_device) + first * 8, count * 8),
                     MutableBytes(out.values.mutable_data(on_device), count * 8),
                     MutableBytes(out.found.mutable_data(on_device), count));
  });
}

// The first operation of the last batch of `total` operations.
uint64_t LastBatchFirst(uint64_t total, uint64_t batch) { return (total - 1) / batch * batch; }

Status ExpectKeys(Table& table, uint64_t keys, const std::string& what, SlabStats* out = nullptr) {
  auto stats = StatsOf(table);
  if (!stats.ok()) return stats.status();
  if (stats->keys != keys) {
    return Status::Corruption(what + ": the table holds " + std::to_string(stats->keys) +
                              " keys, not " + std::to_string(keys));
  }
  if (out != nullptr) *out = *stats;
  return Status::OK();
}

// Records the table's utilisation, load factor and buckets in `rows`.
void NoteTable(const SlabStats& stats, std::initializer_list<SlabRow*> rows) {
  for (SlabRow* row : rows) {
    row->utilisation = stats.memory_utilisation;
    row->load_factor = stats.load_factor;
    row->buckets = stats.buckets;
  }
}

// The rows of one point, filled run by run.
struct PointRows {
  SlabRow build, build_host, build_one, hit, hit_host, miss, erase, mixed;
  std::vector<SlabRow*> all() {
    return {&build, &build_host, &build_one, &hit, &hit_host, &miss, &erase, &mixed};
  }
};

// Table A of a run: batched build, searches, delete of every key.
Status RunBuildSearchDelete(DB& db, const SlabBenchConfig& config, const SlabKeySets& sets,
                            const PointSizing& sizing, SearchOutputs& out, PointRows* rows,
                            std::FILE* text) {
  auto created = CreateTable(db, sizing.expected_keys);
  if (!created.ok()) return created.status();
  Table& table = (*created)->table();
  const uint64_t n = sets.keys, batch = config.batch, last = LastBatchFirst(n, batch);
  GPKV_RETURN_IF_ERROR(Timed(&rows->build, [&] { return Build(table, sets, true, batch); }));
  SlabStats stats;
  GPKV_RETURN_IF_ERROR(ExpectKeys(table, n, "after the build", &stats));
  if (stats.rehashes > 0) {
    std::fprintf(text, "# note: the build rehashed %llu times (sized for %llu buckets)\n",
                 static_cast<unsigned long long>(stats.rehashes),
                 static_cast<unsigned long long>(sizing.plan.buckets));
  }
  NoteTable(stats, {&rows->build, &rows->build_host, &rows->hit, &rows->hit_host, &rows->miss,
                    &rows->erase});
  GPKV_RETURN_IF_ERROR(
      Timed(&rows->hit, [&] { return Search(table, sets.load_keys, out, true, n, batch); }));
  GPKV_RETURN_IF_ERROR(CheckSearchBatch(sets, out, true, true, last, n - last, "search hit"));
  GPKV_RETURN_IF_ERROR(
      Timed(&rows->hit_host, [&] { return Search(table, sets.load_keys, out, false, n, batch); }));
  GPKV_RETURN_IF_ERROR(
      CheckSearchBatch(sets, out, false, true, last, n - last, "search hit (host)"));
  GPKV_RETURN_IF_ERROR(
      Timed(&rows->miss, [&] { return Search(table, sets.miss_keys, out, true, n, batch); }));
  GPKV_RETURN_IF_ERROR(CheckSearchBatch(sets, out, true, false, last, n - last, "search miss"));
  uint8_t* erased = out.found.mutable_data(true);
  GPKV_RETURN_IF_ERROR(Timed(&rows->erase, [&] {
    return ForEachBatch(n, batch, [&](uint64_t first, uint64_t count) {
      return table.Erase(ConstBytes(sets.load_keys.data(true) + first * 8, count * 8),
                         MutableBytes(erased, count));
    });
  }));
  std::vector<uint8_t> flags(n - last);
  GPKV_RETURN_IF_ERROR(out.found.device.CopyToHost(flags.data(), flags.size()));
  if (std::count(flags.begin(), flags.end(), 1) != static_cast<std::ptrdiff_t>(flags.size())) {
    return Status::Corruption("delete: a key of the last batch was not reported erased");
  }
  GPKV_RETURN_IF_ERROR(ExpectKeys(table, 0, "after the delete", &stats));
  rows->erase.flushes = stats.flushes;
  return Status::OK();
}

// Table B of a run: the batched build (untimed), then the mixed batches.
Status RunMixed(DB& db, const SlabBenchConfig& config, const SlabKeySets& sets,
                const PointSizing& sizing, DeviceBytes& results, bool check, PointRows* rows) {
  auto created = CreateTable(db, sizing.expected_keys);
  if (!created.ok()) return created.status();
  Table& table = (*created)->table();
  const uint64_t n = sets.keys;
  GPKV_RETURN_IF_ERROR(Build(table, sets, true, config.batch));
  SlabStats stats;
  GPKV_RETURN_IF_ERROR(ExpectKeys(table, n, "before the mixed batches", &stats));
  NoteTable(stats, {&rows->mixed});
  GPKV_RETURN_IF_ERROR(Timed(&rows->mixed, [&] {
    for (const MixedBatch& plan : sets.mixed_batches) {
      GPKV_RETURN_IF_ERROR(slab_hash::MixedBatch(
          table, ConstBytes(sets.mixed_ops.data(true) + plan.first, plan.count),
          ConstBytes(sets.mixed_keys.data(true) + plan.first * 8, plan.count * 8),
          MutableBytes(sets.mixed_values.device.data() + plan.first * 8, plan.count * 8),
          MutableBytes(results.data() + plan.first, plan.count)));
    }
    return Status::OK();
  }));
  if (check) GPKV_RETURN_IF_ERROR(CheckMixedAnswers(sets, results, "mixed"));
  GPKV_RETURN_IF_ERROR(ExpectKeys(table, n, "after the mixed batches", &stats));
  rows->mixed.flushes = stats.flushes;
  return Status::OK();
}

// Table C of a run: the build as one batch. An empty slab hash given a batch
// larger than its buckets hold takes buckets for the batch first (its bulk
// build), so above ~55% the measured utilisation is the table's own.
Status RunOneBatchBuild(DB& db, const SlabKeySets& sets, const PointSizing& sizing,
                        PointRows* rows) {
  auto created = CreateTable(db, sizing.expected_keys);
  if (!created.ok()) return created.status();
  Table& table = (*created)->table();
  GPKV_RETURN_IF_ERROR(
      Timed(&rows->build_one, [&] { return Build(table, sets, true, sets.keys); }));
  SlabStats stats;
  GPKV_RETURN_IF_ERROR(ExpectKeys(table, sets.keys, "after the one-batch build", &stats));
  NoteTable(stats, {&rows->build_one});
  return Status::OK();
}

// Table D of a run: the batched build from host memory.
Status RunHostBuild(DB& db, const SlabBenchConfig& config, const SlabKeySets& sets,
                    const PointSizing& sizing, PointRows* rows) {
  auto created = CreateTable(db, sizing.expected_keys);
  if (!created.ok()) return created.status();
  Table& table = (*created)->table();
  GPKV_RETURN_IF_ERROR(
      Timed(&rows->build_host, [&] { return Build(table, sets, false, config.batch); }));
  return ExpectKeys(table, sets.keys, "after the host build");
}

// Every phase of one (key count, utilisation) point, config.repeats times.
Status RunSlabPoint(DB& db, const SlabBenchConfig& config, const SlabKeySets& sets, int percent,
                    SearchOutputs& out, DeviceBytes& results, std::FILE* text,
                    std::vector<SlabRow>* out_rows) {
  auto sized = SizeForTarget(db, sets.keys, percent);
  if (!sized.ok()) return Within("sizing", sized.status());
  const PointSizing& sizing = *sized;
  std::fprintf(text,
               "# slab_hash %s keys, target %d%%: %llu buckets (expected_keys %llu), %.2f keys "
               "per bucket, model utilisation %.1f%%%s\n",
               KeyCountText(sets.keys).c_str(), percent,
               static_cast<unsigned long long>(sizing.buckets),
               static_cast<unsigned long long>(sizing.expected_keys), sizing.plan.keys_per_bucket,
               100 * sizing.plan.model_utilisation,
               sizing.plan.capped ? " (capped: above it the table would rehash)" : "");
  PointRows rows;
  const uint64_t n = sets.keys;
  const struct {
    SlabRow* row;
    const char* workload;
    const char* memory;
    uint64_t batch;
  } kinds[] = {{&rows.build, kBuild, "device", config.batch},
               {&rows.build_host, kBuild, "host", config.batch},
               {&rows.build_one, kBuildOneBatch, "device", n},
               {&rows.hit, kSearchHit, "device", config.batch},
               {&rows.hit_host, kSearchHit, "host", config.batch},
               {&rows.miss, kSearchMiss, "device", config.batch},
               {&rows.erase, kDelete, "device", config.batch},
               {&rows.mixed, kMixed, "device", config.batch}};
  for (const auto& kind : kinds) {
    kind.row->system = kSlabSystem;
    kind.row->workload = kind.workload;
    kind.row->memory = kind.memory;
    kind.row->keys = n;
    kind.row->target_percent = percent;
    kind.row->batch = std::min(kind.batch, n);
    kind.row->ops = n;
  }
  for (int run = 0; run < config.repeats; ++run) {
    const Status ran = [&]() -> Status {
      GPKV_RETURN_IF_ERROR(RunBuildSearchDelete(db, config, sets, sizing, out, &rows, text));
      GPKV_RETURN_IF_ERROR(RunMixed(db, config, sets, sizing, results, run == 0, &rows));
      GPKV_RETURN_IF_ERROR(RunOneBatchBuild(db, sets, sizing, &rows));
      return RunHostBuild(db, config, sets, sizing, &rows);
    }();
    if (!ran.ok()) return Within("run " + std::to_string(run + 1), ran);
  }
  std::fprintf(text,
               "# slab_hash %s keys, target %d%%: measured utilisation %.1f%%, load factor "
               "%.3f; build %.3f, search hit %.3f, delete %.3f (%llu flushes), mixed %.3f (%llu "
               "flushes) G ops/s\n",
               KeyCountText(n).c_str(), percent, 100 * rows.build.utilisation,
               rows.build.load_factor, rows.build.gops(), rows.hit.gops(), rows.erase.gops(),
               static_cast<unsigned long long>(rows.erase.flushes), rows.mixed.gops(),
               static_cast<unsigned long long>(rows.mixed.flushes));
  for (SlabRow* row : rows.all()) out_rows->push_back(*row);
  return Status::OK();
}

// The growth cost at one key count.
Status RunGrowth(DB& db, const SlabBenchConfig& config, const SlabKeySets& sets, std::FILE* text,
                 std::vector<SlabRow>* rows) {
  SlabRow row;
  row.system = kSlabSystem;
  row.workload = kGrowthBuild;
  row.keys = sets.keys;
  row.batch = std::min(config.batch, sets.keys);
  row.ops = sets.keys;
  double rehash_seconds = 0;
  for (int run = 0; run < config.repeats; ++run) {
    auto created = CreateTable(db, kGrowthExpectedKeys);
    if (!created.ok()) return created.status();
    Table& table = (*created)->table();
    GPKV_RETURN_IF_ERROR(Timed(&row, [&] { return Build(table, sets, true, config.batch); }));
    SlabStats stats;
    GPKV_RETURN_IF_ERROR(ExpectKeys(table, sets.keys, "after the growing build", &stats));
    row.rehashes = stats.rehashes;
    row.utilisation = stats.memory_utilisation;
    row.load_factor = stats.load_factor;
    row.buckets = stats.buckets;
    rehash_seconds += stats.rehash_seconds;
  }
  row.rehash_seconds = rehash_seconds / config.repeats;
  std::fprintf(text,
               "# slab_hash %s keys from %llu expected: %.3f G inserts/s, %llu rehashes "
               "(%.4f s)\n",
               KeyCountText(sets.keys).c_str(),
               static_cast<unsigned long long>(kGrowthExpectedKeys), row.gops(),
               static_cast<unsigned long long>(row.rehashes), row.rehash_seconds);
  rows->push_back(row);
  return Status::OK();
}

// SlabAlloc's rate: an allocator twice the size the allocations need, reset
// before each run; the first run's addresses are checked (none failed, none
// handed out twice).
Status RunSlabAlloc(const SlabBenchConfig& config, std::FILE* text, SlabAllocRow* row) {
  const uint64_t per_super_block =
      uint64_t{::gpkv::gpu::kSlabsPerBlock} * ::gpkv::gpu::kBlocksPerSuperBlock;
  const uint64_t wanted = (2 * config.allocations + per_super_block - 1) / per_super_block;
  row->super_blocks =
      static_cast<uint32_t>(std::min<uint64_t>(wanted, ::gpkv::gpu::kMaxSuperBlocks));
  row->allocations = config.allocations;
  auto allocator = SlabAlloc::Create(row->super_blocks);
  if (!allocator.ok()) return allocator.status();
  row->fill = static_cast<double>(config.allocations) / (*allocator)->capacity_slabs();
  std::vector<uint32_t> addresses;
  for (int run = 0; run < config.repeats; ++run) {
    GPKV_RETURN_IF_ERROR((*allocator)->Reset(nullptr));
    double seconds = 0;
    GPKV_RETURN_IF_ERROR(
        (*allocator)->TEST_AllocateMany(config.allocations, &addresses, &seconds, nullptr));
    row->seconds.push_back(seconds);
    if (run > 0) continue;
    if (addresses.size() != config.allocations) {
      return Status::Corruption("TEST_AllocateMany returned " + std::to_string(addresses.size()) +
                                " addresses for " + std::to_string(config.allocations));
    }
    std::sort(addresses.begin(), addresses.end());
    if (!addresses.empty() && addresses.back() == ::gpkv::gpu::kNullSlab) {
      return Status::Corruption("an allocation failed with the allocator half full");
    }
    if (std::adjacent_find(addresses.begin(), addresses.end()) != addresses.end()) {
      return Status::Corruption("a slab was handed out twice");
    }
  }
  std::fprintf(text, "# SlabAlloc: %.3f G allocations/s (%u super blocks)\n", row->gops(),
               row->super_blocks);
  return Status::OK();
}

// Every point, the peer and the growth at one key count.
Status RunKeyCount(DB& db, const SlabBenchConfig& config, uint64_t keys, std::FILE* text,
                   std::vector<SlabRow>* rows) {
  const double start = Now();
  SlabKeySets sets;
  GPKV_RETURN_IF_ERROR(MakeSlabKeySets(keys, std::min(config.batch, keys), config.seed, &sets));
  std::fprintf(text, "# %s keys: operations generated and copied in %.1f s\n",
               KeyCountText(keys).c_str(), Now() - start);
  SearchOutputs out;
  GPKV_RETURN_IF_ERROR(MakeSearchOutputs(std::min(config.batch, keys), &out));
  auto results = DeviceBytes::Allocate(keys);
  if (!results.ok()) return results.status();
  for (int percent : config.utilisation_percent) {
    Status ran = RunSlabPoint(db, config, sets, percent, out, *results, text, rows);
    if (!ran.ok()) return Within("slab_hash, target " + std::to_string(percent) + "%", ran);
  }
  Status peer = RunGphashPeer(config, sets, text, rows);
  if (!peer.ok()) return Within("gphash-mirror", peer);
  Status growth = RunGrowth(db, config, sets, text, rows);
  return growth.ok() ? Status::OK() : Within("growth", growth);
}

}  // namespace

Status RunSlabBenchOnDevice(const SlabBenchConfig& config, std::FILE* text,
                            std::string* json_lines) {
  GPKV_RETURN_IF_ERROR(::gpkv::gpu::DeviceUsable());
  const std::string device = ::gpkv::gpu::DeviceDescription();
  std::string key_counts, targets;
  for (uint64_t keys : config.keys) key_counts += " " + KeyCountText(keys);
  for (int percent : config.utilisation_percent) targets += " " + std::to_string(percent) + "%";
  std::fprintf(text,
               "# device: %s\n# keys:%s; utilisation targets:%s; batch %llu; %d runs per "
               "point; gphash pools in %s\n",
               device.c_str(), key_counts.c_str(), targets.c_str(),
               static_cast<unsigned long long>(config.batch), config.repeats,
               config.pool_dir.c_str());
  // The slab hash's tables are volatile tables of a DB on the CUDA backend:
  // a small pool in pool_dir holds their catalog entries.
  const std::string path =
      config.pool_dir + "/gpkv-slab-tables-" + std::to_string(::getpid()) + ".gpkv";
  std::remove(path.c_str());
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.pool_size = kSlabPoolBytes;
  options.backend = Backend::kCuda;
  auto db = DB::Open(path, options);
  if (!db.ok()) return Within("the slab hash's pool", db.status());
  std::vector<SlabRow> rows;
  const Status ran = [&]() -> Status {
    for (uint64_t keys : config.keys) {
      Status counted = RunKeyCount(**db, config, keys, text, &rows);
      if (!counted.ok()) return Within(KeyCountText(keys) + " keys", counted);
    }
    return Status::OK();
  }();
  Status closed = (*db)->Close();
  std::remove(path.c_str());
  GPKV_RETURN_IF_ERROR(ran);
  GPKV_RETURN_IF_ERROR(closed);
  SlabAllocRow alloc;
  Status allocated = RunSlabAlloc(config, text, &alloc);
  if (!allocated.ok()) return Within("SlabAlloc", allocated);
  PrintSlabReport(rows, &alloc, text);
  *json_lines = SlabJsonLines(device, rows, &alloc);
  return Status::OK();
}

}  // namespace gpkv::bench::gpu

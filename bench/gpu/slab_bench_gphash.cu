// The slab suite's persistent peer (see slab_bench_gphash.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/gpu/api_table.h"
#include "bench/gpu/gpu_modes.h"
#include "bench/gpu/slab_bench_gphash.h"

namespace gpkv::bench::gpu {
namespace {

// Pool bytes for `keys` 8-byte pairs at GPHash's load factor, room for a
// resize, and the mixed run's inserts (as the gpu suite sizes its pools).
uint64_t PoolBytes(uint64_t keys) { return keys * 110 + (uint64_t{256} << 20); }

Status Timed(SlabRow* row, const std::function<Status()>& run) {
  const double start = Now();
  GPKV_RETURN_IF_ERROR(run());
  row->seconds.push_back(Now() - start);
  return Status::OK();
}

Status ExpectKeys(const ApiTable& table, uint64_t keys, const std::string& what) {
  auto counters = table.Counters();
  if (!counters.ok()) return counters.status();
  const uint64_t held = counters->keys;
  if (held == keys) return Status::OK();
  return Status::Corruption(what + ": the table holds " + std::to_string(held) + " keys, not " +
                            std::to_string(keys));
}

Status Build(const ApiTable& table, const SlabKeySets& sets, uint64_t batch) {
  return ForEachBatch(sets.keys, batch, [&](uint64_t first, uint64_t count) {
    return table.Put(sets.load_keys.data(true) + first * 8, sets.load_values.data(true) + first * 8,
                     count);
  });
}

Status Search(const ApiTable& table, const MirroredBytes& keys, SearchOutputs& out, bool on_device,
              uint64_t total, uint64_t batch) {
  return ForEachBatch(total, batch, [&](uint64_t first, uint64_t count) {
    return table.Get(keys.data(on_device) + first * 8, out.values.mutable_data(on_device),
                     out.found.mutable_data(on_device), count);
  });
}

// Each mixed batch as one Put, one Erase and one Get (device arrays;
// `scratch` receives the erased flags and the answers).
Status Mixed(const ApiTable& table, const SlabKeySets& sets, SearchOutputs& scratch) {
  const uint8_t* keys = sets.grouped_keys.data(true);
  const uint8_t* values = sets.grouped_values.data(true);
  uint8_t* answers = scratch.values.mutable_data(true);
  uint8_t* flags = scratch.found.mutable_data(true);
  for (const MixedBatch& plan : sets.mixed_batches) {
    const uint64_t deletes_at = plan.first + plan.inserts;
    const uint64_t searches_at = deletes_at + plan.deletes;
    // A batch of fewer than 10 operations has no inserts or deletes.
    if (plan.inserts > 0) {
      GPKV_RETURN_IF_ERROR(table.Put(keys + plan.first * 8, values + plan.first * 8, plan.inserts));
    }
    if (plan.deletes > 0) {
      GPKV_RETURN_IF_ERROR(table.Erase(keys + deletes_at * 8, flags, plan.deletes));
    }
    GPKV_RETURN_IF_ERROR(table.Get(keys + searches_at * 8, answers, flags, plan.searches()));
  }
  return Status::OK();
}

// Empties the table after a mixed run: the built keys left and the inserted
// ones.
Status EraseAll(const ApiTable& table, const SlabKeySets& sets, SearchOutputs& scratch) {
  uint8_t* flags = scratch.found.mutable_data(true);
  GPKV_RETURN_IF_ERROR(ForEachBatch(sets.keys, sets.batch, [&](uint64_t first, uint64_t count) {
    return table.Erase(sets.load_keys.data(true) + first * 8, flags, count);
  }));
  for (const MixedBatch& plan : sets.mixed_batches) {
    if (plan.inserts == 0) continue;
    GPKV_RETURN_IF_ERROR(
        table.Erase(sets.grouped_keys.data(true) + plan.first * 8, flags, plan.inserts));
  }
  return ExpectKeys(table, 0, "after emptying");
}

}  // namespace

Status RunGphashPeer(const SlabBenchConfig& config, const SlabKeySets& sets, std::FILE* text,
                     std::vector<SlabRow>* rows) {
  const uint64_t n = sets.keys, batch = sets.batch;
  const std::string path =
      config.pool_dir + "/gpkv-slab-bench-" + std::to_string(::getpid()) + ".gpkv";
  TableOptions table_options;
  table_options.expected_keys = n + n / 10;  // the mixed run's inserts before its deletes
  auto mode = ParseGpuMode("mirror");
  if (!mode.ok()) return mode.status();
  const Options options = mode->Apply(Options());
  auto bench = BenchDb::Create(path, PoolBytes(n), options, table_options);
  if (!bench.ok()) return bench.status();
  const ApiTable table((*bench)->table(), options.hash_gpu);
  SearchOutputs out;
  GPKV_RETURN_IF_ERROR(MakeSearchOutputs(batch, &out));

  SlabRow build, hit, hit_host, miss, erase, mixed;
  const struct {
    SlabRow* row;
    const char* workload;
    const char* memory;
  } kinds[] = {{&build, kBuild, "device"},      {&hit, kSearchHit, "device"},
               {&hit_host, kSearchHit, "host"}, {&miss, kSearchMiss, "device"},
               {&erase, kDelete, "device"},     {&mixed, kMixed, "device"}};
  for (const auto& kind : kinds) {
    kind.row->system = kGphashSystem;
    kind.row->workload = kind.workload;
    kind.row->memory = kind.memory;
    kind.row->keys = n;
    kind.row->batch = batch;
    kind.row->ops = n;
  }
  const uint64_t last = (n - 1) / batch * batch;
  for (int run = 0; run < config.repeats; ++run) {
    GPKV_RETURN_IF_ERROR(Timed(&build, [&] { return Build(table, sets, batch); }));
    GPKV_RETURN_IF_ERROR(ExpectKeys(table, n, "after the build"));
    const auto stats = table.Counters();
    if (!stats.ok()) return stats.status();
    for (const auto& kind : kinds) kind.row->load_factor = stats->load_factor;
    GPKV_RETURN_IF_ERROR(
        Timed(&hit, [&] { return Search(table, sets.load_keys, out, true, n, batch); }));
    GPKV_RETURN_IF_ERROR(CheckSearchBatch(sets, out, true, true, last, n - last, "search hit"));
    GPKV_RETURN_IF_ERROR(
        Timed(&hit_host, [&] { return Search(table, sets.load_keys, out, false, n, batch); }));
    GPKV_RETURN_IF_ERROR(
        Timed(&miss, [&] { return Search(table, sets.miss_keys, out, true, n, batch); }));
    GPKV_RETURN_IF_ERROR(CheckSearchBatch(sets, out, true, false, last, n - last, "search miss"));
    GPKV_RETURN_IF_ERROR(Timed(&erase, [&] {
      return ForEachBatch(n, batch, [&](uint64_t first, uint64_t count) {
        return table.Erase(sets.load_keys.data(true) + first * 8, out.found.mutable_data(true),
                           count);
      });
    }));
    GPKV_RETURN_IF_ERROR(ExpectKeys(table, 0, "after the delete"));
    GPKV_RETURN_IF_ERROR(Build(table, sets, batch));
    GPKV_RETURN_IF_ERROR(Timed(&mixed, [&] { return Mixed(table, sets, out); }));
    GPKV_RETURN_IF_ERROR(ExpectKeys(table, n, "after the mixed batches"));
    GPKV_RETURN_IF_ERROR(EraseAll(table, sets, out));
  }
  const auto stats = table.Counters();
  if (!stats.ok()) return stats.status();
  std::fprintf(text,
               "# gphash-mirror %s keys: load factor %.3f after the build, %llu resizes, index "
               "%.1f MiB; build %.3f, search hit %.3f, mixed (3 calls a batch) %.3f G ops/s\n",
               KeyCountText(n).c_str(), build.load_factor,
               static_cast<unsigned long long>(stats->resizes), stats->index_bytes / 1048576.0,
               build.gops(), hit.gops(), mixed.gops());
  for (const auto& kind : kinds) rows->push_back(*kind.row);
  return Status::OK();
}

}  // namespace gpkv::bench::gpu

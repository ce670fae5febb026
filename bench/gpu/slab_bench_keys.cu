// The slab suite's operations and shared helpers (see slab_bench_keys.h).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/gpkv_bench_workload.h"
#include "bench/gpu/slab_bench_keys.h"
#include "tables/slab_hash/mixed_batch.h"

namespace gpkv::bench::gpu {
namespace {

using ::gpkv::slab_hash::MixedOp;

constexpr uint32_t kPairWordBytes = 8;  // the suite's keys and values are 8 bytes

// Runs fill(begin, end) over [0, count) on all hardware threads.
void ParallelFor(uint64_t count, const std::function<void(uint64_t, uint64_t)>& fill) {
  const uint64_t threads =
      std::max<uint64_t>(1, std::min<uint64_t>(std::thread::hardware_concurrency(), count));
  std::vector<std::thread> workers;
  for (uint64_t t = 0; t < threads; ++t) {
    workers.emplace_back(fill, count * t / threads, count * (t + 1) / threads);
  }
  for (std::thread& worker : workers) worker.join();
}

// Keys (and values, when `values` is not null) of records[i] for each i.
void EncodeRecords(const std::vector<uint64_t>& records, uint64_t seed, MirroredBytes* keys,
                   MirroredBytes* values) {
  keys->host.resize(records.size() * kPairWordBytes);
  if (values != nullptr) values->host.resize(records.size() * kPairWordBytes);
  ParallelFor(records.size(), [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      EncodeKey(records[i], seed, kPairWordBytes, &keys->host[i * kPairWordBytes]);
      if (values != nullptr) {
        EncodeValue(records[i], 0, kPairWordBytes, &values->host[i * kPairWordBytes]);
      }
    }
  });
}

// The records and kinds of the mixed run (see slab_bench_keys.h).
void PlanMixed(uint64_t keys, uint64_t batch, uint64_t seed, SlabKeySets* sets) {
  for (uint64_t first = 0; first < keys; first += batch) {
    MixedBatch plan;
    plan.first = first;
    plan.count = std::min(batch, keys - first);
    plan.inserts = plan.count / 10;
    plan.deletes = plan.count / 10;
    sets->mixed_batches.push_back(plan);
  }
  uint64_t total_deletes = 0;
  for (const MixedBatch& plan : sets->mixed_batches) total_deletes += plan.deletes;
  sets->mixed_kinds.resize(keys);
  sets->mixed_records.resize(keys);
  Random random(seed ^ 0x6d69786564ULL);  // "mixed"
  uint64_t next_insert = keys, next_delete = 0;
  for (const MixedBatch& plan : sets->mixed_batches) {
    std::vector<MixedKind> kinds(plan.count, MixedKind::kMiss);
    std::fill_n(kinds.begin(), plan.inserts, MixedKind::kInsert);
    std::fill_n(kinds.begin() + plan.inserts, plan.deletes, MixedKind::kDelete);
    const uint64_t hits = plan.searches() / 2;
    std::fill_n(kinds.begin() + plan.inserts + plan.deletes, hits, MixedKind::kHit);
    for (uint64_t i = plan.count; i > 1; --i) std::swap(kinds[i - 1], kinds[random.Uniform(i)]);
    for (uint64_t i = 0; i < plan.count; ++i) {
      uint64_t record = 0;
      switch (kinds[i]) {
        case MixedKind::kInsert:
          record = next_insert++;
          break;
        case MixedKind::kDelete:
          record = next_delete++;
          break;
        case MixedKind::kHit:
          record = total_deletes + random.Uniform(keys - total_deletes);
          break;
        case MixedKind::kMiss:
          record = kAbsentRecordBase + keys + random.Uniform(keys);
          break;
      }
      sets->mixed_kinds[plan.first + i] = kinds[i];
      sets->mixed_records[plan.first + i] = record;
    }
  }
}

MixedOp OpOf(MixedKind kind) {
  switch (kind) {
    case MixedKind::kInsert:
      return MixedOp::kReplace;
    case MixedKind::kDelete:
      return MixedOp::kDelete;
    default:
      return MixedOp::kSearch;
  }
}

// Fills the mixed arrays and their grouped twins from the plan.
void EncodeMixed(uint64_t seed, SlabKeySets* sets) {
  const uint64_t count = sets->mixed_records.size();
  sets->mixed_ops.host.resize(count);
  sets->mixed_values.host.assign(count * kPairWordBytes, 0);
  EncodeRecords(sets->mixed_records, seed, &sets->mixed_keys, nullptr);
  std::vector<uint64_t> grouped_records(count);
  std::vector<uint8_t> grouped_is_insert(count, 0);
  for (const MixedBatch& plan : sets->mixed_batches) {
    uint64_t next[3] = {plan.first, plan.first + plan.inserts,
                        plan.first + plan.inserts + plan.deletes};
    for (uint64_t i = plan.first; i < plan.first + plan.count; ++i) {
      const MixedKind kind = sets->mixed_kinds[i];
      sets->mixed_ops.host[i] = static_cast<uint8_t>(OpOf(kind));
      if (kind == MixedKind::kInsert) {
        EncodeValue(sets->mixed_records[i], 0, kPairWordBytes,
                    &sets->mixed_values.host[i * kPairWordBytes]);
      }
      const int group = kind == MixedKind::kInsert ? 0 : kind == MixedKind::kDelete ? 1 : 2;
      grouped_is_insert[next[group]] = kind == MixedKind::kInsert;
      grouped_records[next[group]++] = sets->mixed_records[i];
    }
  }
  EncodeRecords(grouped_records, seed, &sets->grouped_keys, &sets->grouped_values);
  for (uint64_t i = 0; i < count; ++i) {
    if (!grouped_is_insert[i]) {
      std::memset(&sets->grouped_values.host[i * kPairWordBytes], 0, kPairWordBytes);
    }
  }
}

Status CopyBack(const ::gpkv::gpu::DeviceBytes& device, size_t bytes, std::vector<uint8_t>* host) {
  host->resize(bytes);
  return device.CopyToHost(host->data(), bytes);
}

}  // namespace

Status MirroredBytes::Upload() {
  auto allocated = ::gpkv::gpu::DeviceBytes::Allocate(std::max<size_t>(host.size(), 1));
  if (!allocated.ok()) return allocated.status();
  device = std::move(allocated.value());
  return device.CopyFromHost(host.data(), host.size());
}

Status MakeSlabKeySets(uint64_t keys, uint64_t batch, uint64_t seed, SlabKeySets* sets) {
  sets->keys = keys;
  sets->batch = batch;
  std::vector<uint64_t> records(keys);
  for (uint64_t i = 0; i < keys; ++i) records[i] = i;
  EncodeRecords(records, seed, &sets->load_keys, &sets->load_values);
  for (uint64_t i = 0; i < keys; ++i) records[i] = kAbsentRecordBase + i;
  EncodeRecords(records, seed, &sets->miss_keys, nullptr);
  PlanMixed(keys, batch, seed, sets);
  EncodeMixed(seed, sets);
  for (MirroredBytes* bytes :
       {&sets->load_keys, &sets->load_values, &sets->miss_keys, &sets->mixed_ops, &sets->mixed_keys,
        &sets->mixed_values, &sets->grouped_keys, &sets->grouped_values}) {
    GPKV_RETURN_IF_ERROR(bytes->Upload());
  }
  return Status::OK();
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status ForEachBatch(uint64_t total, uint64_t batch,
                    const std::function<Status(uint64_t first, uint64_t count)>& run) {
  for (uint64_t first = 0; first < total; first += batch) {
    GPKV_RETURN_IF_ERROR(run(first, std::min(batch, total - first)));
  }
  return Status::OK();
}

Status MakeSearchOutputs(uint64_t capacity, SearchOutputs* outputs) {
  outputs->values.host.assign(capacity * kPairWordBytes, 0);
  outputs->found.host.assign(capacity, 0);
  GPKV_RETURN_IF_ERROR(outputs->values.Upload());
  return outputs->found.Upload();
}

Status CheckSearchBatch(const SlabKeySets& sets, const SearchOutputs& outputs, bool on_device,
                        bool hit, uint64_t first, uint64_t count, const std::string& what) {
  std::vector<uint8_t> values = outputs.values.host, found = outputs.found.host;
  if (on_device) {
    GPKV_RETURN_IF_ERROR(CopyBack(outputs.values.device, count * kPairWordBytes, &values));
    GPKV_RETURN_IF_ERROR(CopyBack(outputs.found.device, count, &found));
  }
  for (uint64_t i = 0; i < count; ++i) {
    const bool right =
        hit ? found[i] == 1 && std::memcmp(&values[i * kPairWordBytes],
                                           &sets.load_values.host[(first + i) * kPairWordBytes],
                                           kPairWordBytes) == 0
            : found[i] == 0;
    if (!right) {
      return Status::Corruption(what + ": wrong answer for key " + std::to_string(first + i) +
                                " of the batch at " + std::to_string(first));
    }
  }
  return Status::OK();
}

Status CheckMixedAnswers(const SlabKeySets& sets, const ::gpkv::gpu::DeviceBytes& results,
                         const std::string& what) {
  const uint64_t count = sets.mixed_records.size();
  std::vector<uint8_t> result, values;
  GPKV_RETURN_IF_ERROR(CopyBack(results, count, &result));
  GPKV_RETURN_IF_ERROR(CopyBack(sets.mixed_values.device, count * kPairWordBytes, &values));
  for (uint64_t i = 0; i < count; ++i) {
    const MixedKind kind = sets.mixed_kinds[i];
    bool right = result[i] == (kind == MixedKind::kMiss ? 0 : 1);
    if (right && kind == MixedKind::kHit) {
      uint8_t expected[kPairWordBytes];
      EncodeValue(sets.mixed_records[i], 0, kPairWordBytes, expected);
      right = std::memcmp(&values[i * kPairWordBytes], expected, kPairWordBytes) == 0;
    }
    if (!right) {
      static const char* kNames[] = {"insert", "delete", "search hit", "search miss"};
      return Status::Corruption(what + ": wrong answer for operation " + std::to_string(i) + " (" +
                                kNames[static_cast<int>(kind)] + ")");
    }
  }
  return Status::OK();
}

}  // namespace gpkv::bench::gpu

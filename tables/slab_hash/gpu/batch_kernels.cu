// Batch kernels of the slab hash: get, put, erase and mixed. One thread per
// operation; each warp (half warp for gets) shares its operations out to the
// warp-level operations of warp_ops.cuh, one at a time.
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/gpu/kernels.h"
#include "tables/slab_hash/gpu/launch.cuh"
#include "tables/slab_hash/gpu/warp_ops.cuh"

namespace gpkv::slab_hash {
namespace {

using device::Key;
using device::LaneRole;
using device::Shape;
using device::WriteOutcome;
using gpu::warp::kFullMask;
using gpu::warp::LaneId;

constexpr uint32_t kGetTileLanes = 16;

__device__ __forceinline__ uint64_t OpAt(const uint32_t* op_index, uint64_t position) {
  return op_index != nullptr ? op_index[position] : position;
}

template <int kKeyWords>
__device__ __forceinline__ Key<kKeyWords> ShuffleKey(const Key<kKeyWords>& key, int source,
                                                     unsigned mask) {
  Key<kKeyWords> out;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) out.words[w] = __shfl_sync(mask, key.words[w], source);
  return out;
}

// The operation this lane holds in a write kernel (a whole warp per
// operation): *op and its key, and for one-word values the value.
struct WriteLane {
  bool has_op = false;
  uint64_t op = 0;
  uint64_t value = 0;  // one-word values
};

template <int kKeyWords>
__device__ __forceinline__ WriteLane TakeWriteOp(const DeviceView& view, const BatchArrays& batch,
                                                 uint32_t per_warp, bool one_word,
                                                 Key<kKeyWords>* key) {
  WriteLane lane;
  bool holds = false;
  const uint64_t position = TilePosition<32>(per_warp, &holds);
  lane.has_op = holds && position < batch.count;
  if (!lane.has_op) return lane;
  lane.op = OpAt(batch.op_index, position);
  *key = device::LoadKey<kKeyWords>(batch.keys, lane.op, batch.keys_aligned);
  if (one_word && batch.values != nullptr) {
    lane.value = device::LoadValueWord(batch.values, lane.op, view.geometry.value_size, 0,
                                       batch.values_aligned);
  }
  return lane;
}

// Every lane of the warp: word (lane & 15) of operation `op`'s value (one-word
// values: the word `source` loaded).
__device__ __forceinline__ uint64_t ValueWordOf(const DeviceView& view, const BatchArrays& batch,
                                                bool one_word, const WriteLane& lane, int source,
                                                uint64_t op) {
  const uint64_t shared = __shfl_sync(kFullMask, lane.value, source);
  if (one_word) return shared;
  const uint32_t word = LaneId() & 15u;
  return device::LoadValueWord(batch.values, op, view.geometry.value_size, word,
                               batch.values_aligned);
}

// Per-thread counts of a write kernel, added once per warp at the end.
struct WriteCounts {
  unsigned long long inserted = 0;
  unsigned long long replaced = 0;
  unsigned long long erased = 0;

  __device__ __forceinline__ void Add(WriteOutcome outcome, uint64_t op, const WriteSink& sink) {
    switch (outcome) {
      case WriteOutcome::kInserted:
        ++inserted;
        break;
      case WriteOutcome::kReplaced:
        ++replaced;
        break;
      case WriteOutcome::kErased:
        ++erased;
        break;
      case WriteOutcome::kRetry:
        sink.retry_ops[atomicAdd(&sink.counters->retries, 1ull)] = static_cast<uint32_t>(op);
        break;
      case WriteOutcome::kMissing:
        break;
    }
  }
  __device__ __forceinline__ void Flush(const WriteSink& sink) const {
    AddWarpCount(&sink.counters->inserted, inserted);
    AddWarpCount(&sink.counters->replaced, replaced);
    AddWarpCount(&sink.counters->erased, erased);
  }
};

template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads)
    GetKernel(DeviceView view, BatchArrays batch, uint32_t per_tile) {
  using GetTile = device::Tile<kGetTileLanes>;
  const GetTile tile = GetTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  bool holds = false;
  const uint64_t position = TilePosition<kGetTileLanes>(per_tile, &holds);
  const bool has_op = holds && position < batch.count;
  uint64_t op = 0;
  Key<kKeyWords> my_key{};
  if (has_op) {
    op = OpAt(batch.op_index, position);
    my_key = device::LoadKey<kKeyWords>(batch.keys, op, batch.keys_aligned);
  }
  const uint32_t value_size = view.geometry.value_size;
  const uint32_t out_words = InlineValueWords(value_size);
  gpu::warp::ShareWork(tile.mask, has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
    const uint64_t this_op = __shfl_sync(tile.mask, op, source);
    uint64_t value_word = 0;
    const bool hit =
        device::TileFind(view, shape, tile, role, key,
                         BucketOf(device::HashOf(key, view.seed), view.bucket_count), &value_word);
    if (role.word < out_words) {
      device::StoreValueWord(batch.values, this_op, value_size, role.word, hit ? value_word : 0,
                             batch.values_aligned);
    }
    if (LaneId() == static_cast<uint32_t>(source) && batch.flags != nullptr) {
      batch.flags[this_op] = hit ? 1 : 0;
    }
  });
}

template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads)
    PutKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_warp) {
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  const bool one_word = !view.geometry.value_out_of_line && view.geometry.value_words == 1;
  Key<kKeyWords> my_key{};
  const WriteLane lane = TakeWriteOp(view, batch, per_warp, one_word, &my_key);
  gpu::SlabAllocWarp alloc;
  gpu::InitSlabAllocWarp(view.alloc, &alloc);
  WriteCounts counts;
  gpu::warp::ShareWork(kFullMask, lane.has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, kFullMask);
    const uint64_t op = __shfl_sync(kFullMask, lane.op, source);
    const uint64_t value_word = ValueWordOf(view, batch, one_word, lane, source, op);
    const WriteOutcome outcome = device::WarpUpsert<kKeyWords, kSlotWords, false>(
        view, sink, &alloc, shape, role, key,
        BucketOf(device::HashOf(key, view.seed), view.bucket_count), value_word);
    if (LaneId() == static_cast<uint32_t>(source)) counts.Add(outcome, op, sink);
  });
  counts.Flush(sink);
}

template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads)
    EraseKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_warp) {
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  Key<kKeyWords> my_key{};
  const WriteLane lane = TakeWriteOp(view, batch, per_warp, false, &my_key);
  WriteCounts counts;
  gpu::warp::ShareWork(kFullMask, lane.has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, kFullMask);
    const WriteOutcome outcome = device::WarpErase<kKeyWords, kSlotWords, false>(
        view, sink, shape, role, key, BucketOf(device::HashOf(key, view.seed), view.bucket_count));
    if (LaneId() == static_cast<uint32_t>(source)) {
      counts.Add(outcome, lane.op, sink);
      if (batch.flags != nullptr) batch.flags[lane.op] = outcome == WriteOutcome::kErased ? 1 : 0;
    }
  });
  counts.Flush(sink);
}

template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads)
    MixedKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_warp) {
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  const bool one_word = !view.geometry.value_out_of_line && view.geometry.value_words == 1;
  Key<kKeyWords> my_key{};
  const WriteLane lane = TakeWriteOp(view, batch, per_warp, one_word, &my_key);
  const uint32_t my_code = lane.has_op ? batch.ops[lane.op] : 0;
  const uint32_t value_size = view.geometry.value_size;
  const uint32_t out_words = InlineValueWords(value_size);
  gpu::SlabAllocWarp alloc;
  gpu::InitSlabAllocWarp(view.alloc, &alloc);
  WriteCounts counts;
  gpu::warp::ShareWork(kFullMask, lane.has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, kFullMask);
    const uint64_t op = __shfl_sync(kFullMask, lane.op, source);
    const uint32_t code = __shfl_sync(kFullMask, my_code, source);
    const uint64_t bucket = BucketOf(device::HashOf(key, view.seed), view.bucket_count);
    const bool is_source = LaneId() == static_cast<uint32_t>(source);
    bool result = false;
    if (code == static_cast<uint32_t>(MixedOp::kReplace)) {
      const uint64_t value_word = ValueWordOf(view, batch, one_word, lane, source, op);
      const WriteOutcome outcome = device::WarpUpsert<kKeyWords, kSlotWords, true>(
          view, sink, &alloc, shape, role, key, bucket, value_word);
      if (is_source) counts.Add(outcome, op, sink);
      result = outcome != WriteOutcome::kRetry;
    } else if (code == static_cast<uint32_t>(MixedOp::kDelete)) {
      const WriteOutcome outcome =
          device::WarpErase<kKeyWords, kSlotWords, true>(view, sink, shape, role, key, bucket);
      if (is_source) counts.Add(outcome, op, sink);
      result = outcome == WriteOutcome::kErased;
    } else {
      uint64_t value_word = 0;
      result = device::WarpFindConcurrent(view, shape, role, key, bucket, &value_word);
      if (LaneId() < out_words) {
        device::StoreValueWord(batch.values, op, value_size, LaneId(), result ? value_word : 0,
                               batch.values_aligned);
      }
    }
    if (is_source && batch.flags != nullptr) batch.flags[op] = result ? 1 : 0;
  });
  counts.Flush(sink);
}

}  // namespace

Status LaunchGet(const DeviceView& view, const BatchArrays& batch, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    const uint32_t per_tile = OpsPerTile(batch.count, kGetTileLanes);
    GetKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<TileBlocksFor(batch.count, per_tile, kGetTileLanes), kBlockThreads, 0, stream>>>(
            view, batch, per_tile);
    return CheckLaunch("GetKernel");
  });
}

Status LaunchPut(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                 cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    const uint32_t per_warp = OpsPerTile(batch.count, 32);
    PutKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<TileBlocksFor(batch.count, per_warp, 32), kBlockThreads, 0, stream>>>(view, sink, batch,
                                                                                 per_warp);
    return CheckLaunch("PutKernel");
  });
}

Status LaunchErase(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    const uint32_t per_warp = OpsPerTile(batch.count, 32);
    EraseKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<TileBlocksFor(batch.count, per_warp, 32), kBlockThreads, 0, stream>>>(view, sink, batch,
                                                                                 per_warp);
    return CheckLaunch("EraseKernel");
  });
}

Status LaunchMixed(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    const uint32_t per_warp = OpsPerTile(batch.count, 32);
    MixedKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<TileBlocksFor(batch.count, per_warp, 32), kBlockThreads, 0, stream>>>(view, sink, batch,
                                                                                 per_warp);
    return CheckLaunch("MixedKernel");
  });
}

}  // namespace gpkv::slab_hash

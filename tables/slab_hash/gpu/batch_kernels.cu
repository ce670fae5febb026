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
// Erases never allocate: half-warp tiles, two erases side by side.
constexpr uint32_t kEraseTileLanes = 16;

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

// Blocks per multiprocessor the kernels are compiled for (registers a thread:
// 65536 / (256 * blocks)). The kernels wait on memory, so more resident
// warps hide more of it (checked with -Xptxas -v and measured on an H100):
// gets of 8-byte keys in 32 registers; the half-warp write kernels in 40 for
// 8-byte keys and one-word values (a few bytes spill; 3.8 G builds/s and
// 4.1 G mixed ops/s at 2^24 pairs against 3.8 and 3.8 in 48 registers), 48
// for 16-byte keys and values of several words (no spill); the whole-warp
// write kernels (operations that allocate: few) and 32-byte keys in 64.
// Since half warps append slabs themselves the 40-register kernels spill
// more (Put 56 bytes, Mixed 92), yet 48 registers measured no better (H200,
// 2^24 pairs at 60%: build 2.94 -> 2.86, mixed 2.98 -> 3.01 G ops/s).
template <int kKeyWords>
constexpr int kGetMinBlocks = kKeyWords == 1 ? 8 : 6;
template <int kKeyWords, int kSlotWords, int kTileLanes>
constexpr int kWriteMinBlocks = kTileLanes == 32 || kKeyWords == 4  ? 4
                                : kKeyWords == 2 || kSlotWords == 0 ? 5
                                                                    : 6;

// The operation this lane holds in a write kernel: *op and its key, and
// for one-word values the value.
struct WriteLane {
  bool has_op = false;
  uint32_t op = 0;     // a launch runs at most kMaxChunkOps operations
  uint64_t value = 0;  // one-word values
};

template <int kKeyWords, int kTileLanes>
__device__ __forceinline__ WriteLane TakeWriteOp(const DeviceView& view, const BatchArrays& batch,
                                                 uint32_t per_tile, bool one_word,
                                                 Key<kKeyWords>* key) {
  WriteLane lane;
  bool holds = false;
  const uint64_t position = TilePosition<kTileLanes>(per_tile, &holds);
  lane.has_op = holds && position < batch.count;
  if (!lane.has_op) return lane;
  lane.op = static_cast<uint32_t>(OpAt(batch.op_index, position));
  *key = device::LoadKey<kKeyWords>(batch.keys, lane.op, batch.keys_aligned);
  if (one_word && batch.values != nullptr) {
    lane.value = device::LoadValueWord(batch.values, lane.op, view.geometry.value_size, 0,
                                       batch.values_aligned);
  }
  return lane;
}

// Every lane of the tile: word (lane & 15) of operation `op`'s value
// (one-word values: the word `source` loaded).
template <int kTileLanes>
__device__ __forceinline__ uint64_t ValueWordOf(const DeviceView& view, const BatchArrays& batch,
                                                const device::Tile<kTileLanes>& tile,
                                                const LaneRole& role, bool one_word,
                                                const WriteLane& lane, int source, uint32_t op) {
  const uint64_t shared = __shfl_sync(tile.mask, lane.value, source);
  if (one_word) return shared;
  return device::LoadValueWord(batch.values, op, view.geometry.value_size, role.word,
                               batch.values_aligned);
}

// What became of each lane's own operation (a lane holds at most one), added
// up once per warp at the end: a few registers instead of a counter each.
struct WriteCounts {
  uint32_t inserted = 0;
  uint32_t replaced = 0;
  uint32_t erased = 0;
  uint32_t allocated = 0;  // slabs the tile took (the same in each of its lanes)

  __device__ __forceinline__ void Add(WriteOutcome outcome, uint64_t op, const WriteSink& sink) {
    inserted = outcome == WriteOutcome::kInserted;
    replaced = outcome == WriteOutcome::kReplaced;
    erased = outcome == WriteOutcome::kErased;
    if (outcome == WriteOutcome::kRetry || outcome == WriteOutcome::kNeedsWarp) {
      sink.retry_ops[atomicAdd(&sink.counters->retries, 1ull)] = static_cast<uint32_t>(op);
    }
  }
  // All 32 lanes; `leader`: the lane that reports its tile's slabs.
  __device__ __forceinline__ void Flush(const WriteSink& sink, bool leader) const {
    AddWarpCount(&sink.counters->inserted, inserted);
    AddWarpCount(&sink.counters->replaced, replaced);
    AddWarpCount(&sink.counters->erased, erased);
    AddWarpCount(&sink.counters->allocated, leader ? allocated : 0);
  }
};

// A 16-lane tile's kernels do not allocate: SlabAllocWarp is for whole warps.
template <int kTileLanes>
__device__ __forceinline__ void InitAlloc(const DeviceView& view, gpu::SlabAllocWarp* alloc) {
  if constexpr (kTileLanes == 32) gpu::InitSlabAllocWarp(view.alloc, alloc);
}

template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads, kGetMinBlocks<kKeyWords>)
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

template <int kKeyWords, int kSlotWords, int kTileLanes>
__global__ void __launch_bounds__(kBlockThreads, kWriteMinBlocks<kKeyWords, kSlotWords, kTileLanes>)
    PutKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_tile) {
  using WriteTile = device::Tile<kTileLanes>;
  const WriteTile tile = WriteTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  // One-word inline values: the fixed shapes, but for out-of-line values,
  // which half warps never meet.
  const bool one_word = kSlotWords != 0 && (kTileLanes == 16 || !view.geometry.value_out_of_line);
  Key<kKeyWords> my_key{};
  const WriteLane lane =
      TakeWriteOp<kKeyWords, kTileLanes>(view, batch, per_tile, one_word, &my_key);
  gpu::SlabAllocWarp alloc;
  InitAlloc<kTileLanes>(view, &alloc);
  device::DeferredClaims deferred;
  WriteCounts counts;
  gpu::warp::ShareWork(tile.mask, lane.has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
    const uint32_t op = __shfl_sync(tile.mask, lane.op, source);
    const uint64_t value_word = ValueWordOf(view, batch, tile, role, one_word, lane, source, op);
    const bool mine = LaneId() == static_cast<uint32_t>(source);
    const WriteOutcome outcome = device::Upsert<kKeyWords, kSlotWords, kTileLanes, false>(
        view, sink, &alloc, shape, tile, role, &deferred, mine, key,
        BucketOf(device::HashOf(key, view.seed), view.bucket_count), value_word, &counts.allocated);
    if (mine) counts.Add(outcome, op, sink);
  });
  deferred.Publish(tile);
  counts.Flush(sink, tile.Leader());
}

template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads,
                                  kWriteMinBlocks<kKeyWords, kSlotWords, kEraseTileLanes>)
    EraseKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_tile) {
  using EraseTile = device::Tile<kEraseTileLanes>;
  const EraseTile tile = EraseTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  Key<kKeyWords> my_key{};
  const WriteLane lane =
      TakeWriteOp<kKeyWords, kEraseTileLanes>(view, batch, per_tile, false, &my_key);
  device::DeferredClaims deferred;  // none: erases claim nothing
  WriteCounts counts;
  gpu::warp::ShareWork(tile.mask, lane.has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
    const WriteOutcome outcome = device::Erase<kKeyWords, kSlotWords, kEraseTileLanes, false>(
        view, sink, shape, tile, role, &deferred, key,
        BucketOf(device::HashOf(key, view.seed), view.bucket_count));
    if (LaneId() == static_cast<uint32_t>(source)) {
      counts.Add(outcome, lane.op, sink);
      if (batch.flags != nullptr) batch.flags[lane.op] = outcome == WriteOutcome::kErased ? 1 : 0;
    }
  });
  counts.Flush(sink, tile.Leader());
}

template <int kKeyWords, int kSlotWords, int kTileLanes>
__global__ void __launch_bounds__(kBlockThreads, kWriteMinBlocks<kKeyWords, kSlotWords, kTileLanes>)
    MixedKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_tile) {
  using MixedTile = device::Tile<kTileLanes>;
  const MixedTile tile = MixedTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  // One-word inline values: the fixed shapes, but for out-of-line values,
  // which half warps never meet.
  const bool one_word = kSlotWords != 0 && (kTileLanes == 16 || !view.geometry.value_out_of_line);
  Key<kKeyWords> my_key{};
  const WriteLane lane =
      TakeWriteOp<kKeyWords, kTileLanes>(view, batch, per_tile, one_word, &my_key);
  const uint32_t my_code = lane.has_op ? batch.ops[lane.op] : 0;
  const uint32_t value_size = view.geometry.value_size;
  const uint32_t out_words = InlineValueWords(value_size);
  gpu::SlabAllocWarp alloc;
  InitAlloc<kTileLanes>(view, &alloc);
  device::DeferredClaims deferred;
  WriteCounts counts;
  // In lane order, whatever the kinds: running a tile's searches first, then
  // its deletes, then its replaces (so that a warp's two half warps would
  // run the same path more often) measured slower (H200, 2^24 pairs: mixed
  // 4.7 -> 3.7 G ops/s at 20%, 2.98 -> 2.6 at 60%).
  gpu::warp::ShareWork(tile.mask, lane.has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
    const uint32_t op = __shfl_sync(tile.mask, lane.op, source);
    const uint32_t code = __shfl_sync(tile.mask, my_code, source);
    const uint64_t bucket = BucketOf(device::HashOf(key, view.seed), view.bucket_count);
    const bool mine = LaneId() == static_cast<uint32_t>(source);
    bool result = false;
    if (code == static_cast<uint32_t>(MixedOp::kReplace)) {
      const uint64_t value_word = ValueWordOf(view, batch, tile, role, one_word, lane, source, op);
      const WriteOutcome outcome = device::Upsert<kKeyWords, kSlotWords, kTileLanes, true>(
          view, sink, &alloc, shape, tile, role, &deferred, mine, key, bucket, value_word,
          &counts.allocated);
      if (mine) counts.Add(outcome, op, sink);
      if (outcome == WriteOutcome::kRetry || outcome == WriteOutcome::kNeedsWarp) return;
      result = true;
    } else if (code == static_cast<uint32_t>(MixedOp::kDelete)) {
      const WriteOutcome outcome = device::Erase<kKeyWords, kSlotWords, kTileLanes, true>(
          view, sink, shape, tile, role, &deferred, key, bucket);
      if (mine) counts.Add(outcome, op, sink);
      result = outcome == WriteOutcome::kErased;
    } else {
      uint64_t value_word = 0;
      result = device::FindConcurrent(view, shape, tile, role, &deferred, key, bucket, &value_word);
      if (tile.OwnsWord() && role.word < out_words) {
        device::StoreValueWord(batch.values, op, value_size, role.word, result ? value_word : 0,
                               batch.values_aligned);
      }
    }
    if (mine && batch.flags != nullptr) batch.flags[op] = result ? 1 : 0;
  });
  deferred.Publish(tile);
  counts.Flush(sink, tile.Leader());
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
                 bool whole_warps, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    constexpr int kKeyWords = decltype(key_words)::value;
    constexpr int kSlotWords = decltype(slot_words)::value;
    if (whole_warps) {
      const uint32_t per_tile = OpsPerTile(batch.count, 32);
      PutKernel<kKeyWords, kSlotWords, 32>
          <<<TileBlocksFor(batch.count, per_tile, 32), kBlockThreads, 0, stream>>>(view, sink,
                                                                                   batch, per_tile);
    } else {
      const uint32_t per_tile = OpsPerTile(batch.count, 16);
      PutKernel<kKeyWords, kSlotWords, 16>
          <<<TileBlocksFor(batch.count, per_tile, 16), kBlockThreads, 0, stream>>>(view, sink,
                                                                                   batch, per_tile);
    }
    return CheckLaunch("PutKernel");
  });
}

Status LaunchErase(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   bool /*whole_warps*/, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    const uint32_t per_tile = OpsPerTile(batch.count, kEraseTileLanes);
    EraseKernel<decltype(key_words)::value, decltype(slot_words)::value>
        <<<TileBlocksFor(batch.count, per_tile, kEraseTileLanes), kBlockThreads, 0, stream>>>(
            view, sink, batch, per_tile);
    return CheckLaunch("EraseKernel");
  });
}

Status LaunchMixed(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   bool whole_warps, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    constexpr int kKeyWords = decltype(key_words)::value;
    constexpr int kSlotWords = decltype(slot_words)::value;
    if (whole_warps) {
      const uint32_t per_tile = OpsPerTile(batch.count, 32);
      MixedKernel<kKeyWords, kSlotWords, 32>
          <<<TileBlocksFor(batch.count, per_tile, 32), kBlockThreads, 0, stream>>>(view, sink,
                                                                                   batch, per_tile);
    } else {
      const uint32_t per_tile = OpsPerTile(batch.count, 16);
      MixedKernel<kKeyWords, kSlotWords, 16>
          <<<TileBlocksFor(batch.count, per_tile, 16), kBlockThreads, 0, stream>>>(view, sink,
                                                                                   batch, per_tile);
    }
    return CheckLaunch("MixedKernel");
  });
}

}  // namespace gpkv::slab_hash

// Batch kernels of the slab hash: get, put, erase and mixed. One thread per
// operation; each warp (half warp for gets) shares its operations out to the
// warp-level operations of warp_ops.cuh, one at a time.
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/gpu/kernels.h"
#include "tables/slab_hash/gpu/launch.cuh"
#include "tables/slab_hash/gpu/warp_ops.cuh"

namespace gpkv::slab_hash::gpu {
namespace {

using device::Key;
using device::LaneRole;
using device::Shape;
using device::WriteOutcome;
using gpkv::gpu::warp::kFullMask;
using gpkv::gpu::warp::LaneId;

constexpr uint32_t kGetTileLanes = 16;
// Erases never allocate: half-warp tiles, two erases side by side.
constexpr uint32_t kEraseTileLanes = 16;

__device__ __forceinline__ uint64_t OpAt(const uint32_t* op_index, uint64_t position) {
  return op_index != nullptr ? op_index[position] : position;
}

// The operation at a position of a write launch (BatchArrays::kind_counts).
__device__ __forceinline__ uint64_t OpAt(const BatchArrays& batch, uint64_t position) {
  if (batch.kind_counts == nullptr) return OpAt(batch.op_index, position);
  const uint64_t deletes = batch.kind_counts[0];
  const uint64_t writes = deletes + batch.kind_counts[1];
  const uint64_t at = position < deletes  ? position
                      : position < writes ? batch.count + (position - deletes)
                                          : 2 * batch.count + (position - writes);
  return batch.op_index[at];
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
// gets of 8-byte keys in 32 registers; the half-warp write kernels in 48
// (a few bytes spill for 8-byte keys); the whole-warp write kernels
// (operations that allocate: few) and 32-byte keys in 64. While each tile
// ran one unit, 40 registers (6 blocks) measured as fast as 48; since tiles
// take units at run time (ForEachUnit) the grid's blocks stay busy, and 48
// registers took the 60% build of 2^24 pairs from 3.0 to 3.7 G/s (40: Put
// spilled 112 bytes; docs/bench/slab-hash.md).
template <int kKeyWords>
constexpr int kGetMinBlocks = kKeyWords == 1 ? 8 : 6;
template <int kKeyWords, int kTileLanes>
constexpr int kWriteMinBlocks = kTileLanes == 32 || kKeyWords == 4 ? 4 : 5;

// The bucket of `key`, as 32 bits: a bucket array of 2^32 base slabs would
// take 512 GiB (AllocateBuckets refuses more).
template <int kKeyWords>
__device__ __forceinline__ uint32_t BucketOfKey(const DeviceView& view, const Key<kKeyWords>& key) {
  return static_cast<uint32_t>(BucketOf(device::HashOf(key, view.seed), view.bucket_count));
}

// The operation this lane holds in a write kernel: *op, its key and its
// bucket, and for one-word values the value. Each lane hashes its own key,
// so a tile's turn on an operation starts from the bucket (one shuffle)
// instead of 16 lanes hashing the same key (the hash was about a fifth of a
// get's instructions).
struct WriteLane {
  bool has_op = false;
  uint32_t op = 0;      // a launch runs at most kMaxChunkOps operations
  uint32_t bucket = 0;  // of the key
  uint64_t value = 0;   // one-word values
};

// Unit `unit` of a write launch: tile lane i holds position unit * per_tile
// + i, for i < per_tile.
template <int kKeyWords, int kTileLanes>
__device__ __forceinline__ WriteLane TakeWriteOp(const DeviceView& view, const BatchArrays& batch,
                                                 uint32_t unit, uint32_t per_tile, bool one_word,
                                                 Key<kKeyWords>* key) {
  WriteLane lane;
  const uint32_t lane_in_tile = LaneId() % kTileLanes;
  const uint64_t position = uint64_t{unit} * per_tile + lane_in_tile;
  lane.has_op = lane_in_tile < per_tile && position < batch.count;
  if (!lane.has_op) return lane;
  lane.op = static_cast<uint32_t>(OpAt(batch, position));
  *key = device::LoadKey<kKeyWords>(batch.keys, lane.op, batch.keys_aligned);
  lane.bucket = BucketOfKey(view, *key);
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

// What became of each lane's own operations (one per unit its tile takes),
// added up once per warp at the end: a few registers instead of a counter
// each.
struct WriteCounts {
  uint32_t inserted = 0;
  uint32_t replaced = 0;
  uint32_t erased = 0;
  uint32_t allocated = 0;  // slabs the tile took (the same in each of its lanes)

  __device__ __forceinline__ void Add(WriteOutcome outcome, uint64_t op, const WriteSink& sink) {
    inserted += outcome == WriteOutcome::kInserted;
    replaced += outcome == WriteOutcome::kReplaced;
    erased += outcome == WriteOutcome::kErased;
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
__device__ __forceinline__ void InitAlloc(const DeviceView& view, gpkv::gpu::SlabAllocWarp* alloc) {
  if constexpr (kTileLanes == 32) gpkv::gpu::InitSlabAllocWarp(view.alloc, alloc);
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
  uint32_t my_bucket = 0;
  if (has_op) {
    op = OpAt(batch.op_index, position);
    my_key = device::LoadKey<kKeyWords>(batch.keys, op, batch.keys_aligned);
    my_bucket = BucketOfKey(view, my_key);
  }
  const uint32_t value_size = view.geometry.value_size;
  const uint32_t out_words = InlineValueWords(value_size);
  gpkv::gpu::warp::ShareWork(tile.mask, has_op, [&](int source) {
    const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
    const uint64_t this_op = __shfl_sync(tile.mask, op, source);
    uint64_t value_word = 0;
    const bool hit = device::TileFind(view, shape, tile, role, key,
                                      __shfl_sync(tile.mask, my_bucket, source), &value_word);
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
__global__ void __launch_bounds__(kBlockThreads, kWriteMinBlocks<kKeyWords, kTileLanes>)
    PutKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_tile,
              uint32_t units) {
  using WriteTile = device::Tile<kTileLanes>;
  const WriteTile tile = WriteTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  // One-word inline values: the fixed shapes, but for out-of-line values,
  // which half warps never meet.
  const bool one_word = kSlotWords != 0 && (kTileLanes == 16 || !view.geometry.value_out_of_line);
  gpkv::gpu::SlabAllocWarp alloc;
  InitAlloc<kTileLanes>(view, &alloc);
  device::DeferredClaims deferred;
  WriteCounts counts;
  ForEachUnit(tile, &sink.counters->next_unit, units, [&](uint32_t unit) {
    Key<kKeyWords> my_key{};
    const WriteLane lane =
        TakeWriteOp<kKeyWords, kTileLanes>(view, batch, unit, per_tile, one_word, &my_key);
    gpkv::gpu::warp::ShareWork(tile.mask, lane.has_op, [&](int source) {
      const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
      const uint32_t op = __shfl_sync(tile.mask, lane.op, source);
      const uint32_t bucket = __shfl_sync(tile.mask, lane.bucket, source);
      const uint64_t value_word = ValueWordOf(view, batch, tile, role, one_word, lane, source, op);
      const bool mine = LaneId() == static_cast<uint32_t>(source);
      const WriteOutcome outcome = device::Upsert<kKeyWords, kSlotWords, kTileLanes, false>(
          view, sink, &alloc, shape, tile, role, &deferred, mine, key, bucket, value_word,
          &counts.allocated);
      if (mine) counts.Add(outcome, op, sink);
    });
    deferred.Publish(tile);  // once a unit: claims wait no longer than before
  });
  counts.Flush(sink, tile.Leader());
}

template <int kKeyWords, int kSlotWords>
__global__ void __launch_bounds__(kBlockThreads, kWriteMinBlocks<kKeyWords, kEraseTileLanes>)
    EraseKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_tile,
                uint32_t units) {
  using EraseTile = device::Tile<kEraseTileLanes>;
  const EraseTile tile = EraseTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  device::DeferredClaims deferred;  // none: erases claim nothing
  WriteCounts counts;
  ForEachUnit(tile, &sink.counters->next_unit, units, [&](uint32_t unit) {
    Key<kKeyWords> my_key{};
    const WriteLane lane =
        TakeWriteOp<kKeyWords, kEraseTileLanes>(view, batch, unit, per_tile, false, &my_key);
    gpkv::gpu::warp::ShareWork(tile.mask, lane.has_op, [&](int source) {
      const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
      const uint32_t bucket = __shfl_sync(tile.mask, lane.bucket, source);
      const WriteOutcome outcome = device::Erase<kKeyWords, kSlotWords, kEraseTileLanes, false>(
          view, sink, shape, tile, role, &deferred, key, bucket);
      if (LaneId() == static_cast<uint32_t>(source)) {
        counts.Add(outcome, lane.op, sink);
        if (batch.flags != nullptr) batch.flags[lane.op] = outcome == WriteOutcome::kErased ? 1 : 0;
      }
    });
  });
  counts.Flush(sink, tile.Leader());
}

template <int kKeyWords, int kSlotWords, int kTileLanes>
__global__ void __launch_bounds__(kBlockThreads, kWriteMinBlocks<kKeyWords, kTileLanes>)
    MixedKernel(DeviceView view, WriteSink sink, BatchArrays batch, uint32_t per_tile,
                uint32_t units) {
  using MixedTile = device::Tile<kTileLanes>;
  const MixedTile tile = MixedTile::Mine();
  const Shape<kKeyWords, kSlotWords> shape(view.geometry);
  const LaneRole role = device::RoleOf(shape);
  // One-word inline values: the fixed shapes, but for out-of-line values,
  // which half warps never meet.
  const bool one_word = kSlotWords != 0 && (kTileLanes == 16 || !view.geometry.value_out_of_line);
  const uint32_t value_size = view.geometry.value_size;
  const uint32_t out_words = InlineValueWords(value_size);
  gpkv::gpu::SlabAllocWarp alloc;
  InitAlloc<kTileLanes>(view, &alloc);
  device::DeferredClaims deferred;
  WriteCounts counts;
  // Whole warps take units (`units` counts warp units: a unit a tile), so
  // that in kind order (BatchArrays::kind_counts) a warp's tiles run
  // neighbouring operations, mostly of one kind.
  constexpr uint32_t kTilesPerWarp = gpkv::gpu::warp::kWarpSize / kTileLanes;
  ForEachUnit(device::WarpTile::Mine(), &sink.counters->next_unit, units, [&](uint32_t warp_unit) {
    const uint32_t unit = warp_unit * kTilesPerWarp + tile.base / kTileLanes;
    Key<kKeyWords> my_key{};
    const WriteLane lane =
        TakeWriteOp<kKeyWords, kTileLanes>(view, batch, unit, per_tile, one_word, &my_key);
    const uint32_t my_code = lane.has_op ? batch.ops[lane.op] : 0;
    // In lane order, whatever the kinds: running a tile's searches first,
    // then its deletes, then its replaces (so that a warp's two half warps
    // would run the same path more often) measured slower (H200, 2^24
    // pairs: mixed 4.7 -> 3.7 G ops/s at 20%, 2.98 -> 2.6 at 60%).
    gpkv::gpu::warp::ShareWork(tile.mask, lane.has_op, [&](int source) {
      const Key<kKeyWords> key = ShuffleKey(my_key, source, tile.mask);
      const uint32_t op = __shfl_sync(tile.mask, lane.op, source);
      const uint32_t code = __shfl_sync(tile.mask, my_code, source);
      const uint32_t bucket = __shfl_sync(tile.mask, lane.bucket, source);
      const bool mine = LaneId() == static_cast<uint32_t>(source);
      bool result = false;
      if (code == static_cast<uint32_t>(MixedOp::kReplace)) {
        const uint64_t value_word =
            ValueWordOf(view, batch, tile, role, one_word, lane, source, op);
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
        result =
            device::FindConcurrent(view, shape, tile, role, &deferred, key, bucket, &value_word);
        if (tile.OwnsWord() && role.word < out_words) {
          device::StoreValueWord(batch.values, op, value_size, role.word, result ? value_word : 0,
                                 batch.values_aligned);
        }
      }
      if (mine && batch.flags != nullptr) batch.flags[op] = result ? 1 : 0;
    });
    deferred.Publish(tile);
  });
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

namespace {

// Launches write kernel kKernel (tiles of kTileLanes lanes) over the batch:
// units of OpsPerTile operations, taken at run time by a grid of resident
// blocks (ForEachUnit; the counter is zeroed with the others before every
// launch, RunWrite).
// Units are taken by groups of kUnitLanes lanes (a tile, or a whole warp
// of tiles in MixedKernel), a tile's share of one per_tile operations.
template <auto kKernel, uint32_t kTileLanes, uint32_t kUnitLanes = kTileLanes>
Status LaunchWrite(const char* name, const DeviceView& view, const WriteSink& sink,
                   const BatchArrays& batch, cudaStream_t stream) {
  const uint32_t per_tile = OpsPerTile(batch.count, kTileLanes);
  const uint64_t units = UnitsFor(batch.count, per_tile * (kUnitLanes / kTileLanes));
  const unsigned int blocks =
      gpkv::gpu::ResidentBlocksFor<kKernel>(BlocksFor(units * kUnitLanes), kBlockThreads);
  kKernel<<<blocks, kBlockThreads, 0, stream>>>(view, sink, batch, per_tile,
                                                static_cast<uint32_t>(units));
  return CheckLaunch(name);
}

}  // namespace

Status LaunchPut(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                 bool whole_warps, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    constexpr int kKeyWords = decltype(key_words)::value;
    constexpr int kSlotWords = decltype(slot_words)::value;
    return whole_warps ? LaunchWrite<PutKernel<kKeyWords, kSlotWords, 32>, 32>("PutKernel", view,
                                                                               sink, batch, stream)
                       : LaunchWrite<PutKernel<kKeyWords, kSlotWords, 16>, 16>("PutKernel", view,
                                                                               sink, batch, stream);
  });
}

Status LaunchErase(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   bool /*whole_warps*/, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    return LaunchWrite<EraseKernel<decltype(key_words)::value, decltype(slot_words)::value>,
                       kEraseTileLanes>("EraseKernel", view, sink, batch, stream);
  });
}

Status LaunchMixed(const DeviceView& view, const WriteSink& sink, const BatchArrays& batch,
                   bool whole_warps, cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchShape(view.geometry, [&](auto key_words, auto slot_words) -> Status {
    constexpr int kKeyWords = decltype(key_words)::value;
    constexpr int kSlotWords = decltype(slot_words)::value;
    return whole_warps ? LaunchWrite<MixedKernel<kKeyWords, kSlotWords, 32>, 32>(
                             "MixedKernel", view, sink, batch, stream)
                       : LaunchWrite<MixedKernel<kKeyWords, kSlotWords, 16>, 16, 32>(
                             "MixedKernel", view, sink, batch, stream);
  });
}

}  // namespace gpkv::slab_hash::gpu

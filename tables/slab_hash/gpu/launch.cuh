// Pieces the launchers of the slab hash share (batch_kernels.cu,
// maintenance_kernels.cu): launch geometry, the launch check, warp-aggregated
// counters and the dispatch from a table's geometry to the kernels
// instantiated for it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "gpkv/status.h"
#include "gpu/cuda_check.h"
#include "gpu/device_memory.h"
#include "gpu/resident_blocks.cuh"
#include "gpu/warp_work_sharing.cuh"
#include "tables/slab_hash/layout.h"

namespace gpkv::slab_hash::gpu {

constexpr int kBlockThreads = 256;
constexpr uint32_t kWarpsPerBlock = kBlockThreads / gpkv::gpu::warp::kWarpSize;

inline unsigned int BlocksFor(uint64_t threads) {
  return static_cast<unsigned int>((threads + kBlockThreads - 1) / kBlockThreads);
}

// Blocks for a grid-stride kernel over `items` items, `per_block` a block.
inline unsigned int StrideBlocksFor(uint64_t items, uint64_t per_block) {
  const uint64_t wanted = (items + per_block - 1) / per_block;
  constexpr uint64_t kMaxBlocks = uint64_t{1} << 16;
  return static_cast<unsigned int>(wanted < 1 ? 1 : wanted > kMaxBlocks ? kMaxBlocks : wanted);
}

// The launch check of a launcher: OK, or an error naming `kernel`.
inline Status CheckLaunch(const char* kernel) {
  const cudaError_t error = cudaPeekAtLastError();
  if (error == cudaSuccess) return Status::OK();
  cudaGetLastError();  // a launch-configuration error is not sticky
  return gpkv::gpu::CudaStatus(error, std::string("slab hash: launch of ") + kernel);
}

__device__ __forceinline__ uint64_t ThreadIndex() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ uint64_t WarpIndex() {
  return ThreadIndex() / gpkv::gpu::warp::kWarpSize;
}
__device__ __forceinline__ uint64_t WarpCount() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x / gpkv::gpu::warp::kWarpSize;
}

// Adds each lane's `count` to *counter with one atomic per warp. All 32
// lanes call it.
__device__ __forceinline__ void AddWarpCount(unsigned long long* counter,
                                             unsigned long long count) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    count += __shfl_down_sync(gpkv::gpu::warp::kFullMask, count, offset);
  }
  if (gpkv::gpu::warp::LaneId() == 0 && count != 0) atomicAdd(counter, count);
}

// Operations per tile for a batch of `count`: one per lane when the batch
// fills the device with tiles, fewer for small batches (a tile runs its
// operations one after another, so a small batch finishes sooner spread
// over more tiles).
inline uint32_t OpsPerTile(uint64_t count, uint32_t tile_lanes) {
  const uint64_t tiles =
      uint64_t{64} * gpkv::gpu::MultiprocessorCount() * (gpkv::gpu::warp::kWarpSize / tile_lanes);
  const uint64_t per_tile = (count + tiles - 1) / tiles;
  return static_cast<uint32_t>(per_tile < 1 ? 1 : per_tile > tile_lanes ? tile_lanes : per_tile);
}

// Blocks for `count` operations at `per_tile` a tile of `tile_lanes` lanes.
inline unsigned int TileBlocksFor(uint64_t count, uint32_t per_tile, uint32_t tile_lanes) {
  const uint64_t tiles = (count + per_tile - 1) / per_tile;
  return BlocksFor(tiles * tile_lanes);
}

// The batch position this lane holds when each tile of kTileLanes lanes
// takes `per_tile` operations (*holds false for the lanes past them).
template <int kTileLanes>
__device__ __forceinline__ uint64_t TilePosition(uint32_t per_tile, bool* holds) {
  const uint32_t lane_in_tile = gpkv::gpu::warp::LaneId() % kTileLanes;
  *holds = lane_in_tile < per_tile;
  return (ThreadIndex() / kTileLanes) * per_tile + lane_in_tile;
}

// ---- work units taken at run time (the write kernels) ----
// A write kernel's grid holds only as many blocks as the device runs at
// once (gpu/resident_blocks.cuh), and each tile takes units of `per_tile`
// operations from a counter of the launch (BatchCounters::next_unit) until
// none is left. A block whose tiles had short lists no longer idles its slot
// until its slowest tile ends, and the launch has no last partial wave: with
// one unit per tile and 5.2 waves, an H100 ran the mixed kernel at 58%
// achieved occupancy of 75% (Nsight Compute; docs/bench/slab-hash.md).
inline uint64_t UnitsFor(uint64_t count, uint32_t per_tile) {
  return (count + per_tile - 1) / per_tile;
}

// Calls run(unit) in every lane of `tile` for each unit the tile takes from
// *next_unit (units [0, units) in all). The next unit's atomic is issued
// before the current unit runs, so its latency hides behind the unit's work.
// Every lane of the tile calls it, converged.
template <typename Tile, typename Run>
__device__ __forceinline__ void ForEachUnit(const Tile& tile, unsigned int* next_unit,
                                            uint32_t units, Run&& run) {
  uint32_t taken = 0;
  if (tile.Leader()) taken = atomicAdd(next_unit, 1u);
  uint32_t unit = tile.FromWord(taken, 0);
  while (unit < units) {
    if (tile.Leader()) taken = atomicAdd(next_unit, 1u);
    run(unit);
    unit = tile.FromWord(taken, 0);
  }
}

// Calls launch(key words, slot words) as std::integral_constants: slot words
// kKeyWords + 1 for one-word and out-of-line values (the common shapes,
// compiled for their geometry), 0 (read at run time) for the others.
template <typename Launch>
Status DispatchShape(const SlabGeometry& geometry, Launch&& launch) {
  static_assert(format::kMinKeySize == 8 && format::kMaxKeySize == 32,
                "the kernels are instantiated for key sizes 8, 16 and 32");
  const bool fixed = geometry.value_words == 1;
  using std::integral_constant;
  switch (geometry.key_words) {
    case 1:
      return fixed ? launch(integral_constant<int, 1>(), integral_constant<int, 2>())
                   : launch(integral_constant<int, 1>(), integral_constant<int, 0>());
    case 2:
      return fixed ? launch(integral_constant<int, 2>(), integral_constant<int, 3>())
                   : launch(integral_constant<int, 2>(), integral_constant<int, 0>());
    case 4:
      return fixed ? launch(integral_constant<int, 4>(), integral_constant<int, 5>())
                   : launch(integral_constant<int, 4>(), integral_constant<int, 0>());
    default:
      return Status::InvalidArgument("slab hash kernels support key sizes 8, 16 and 32, not " +
                                     std::to_string(8 * geometry.key_words));
  }
}

// Calls launch(key words) for the key sizes alone.
template <typename Launch>
Status DispatchKeyWords(uint32_t key_words, Launch&& launch) {
  using std::integral_constant;
  switch (key_words) {
    case 1:
      return launch(integral_constant<int, 1>());
    case 2:
      return launch(integral_constant<int, 2>());
    case 4:
      return launch(integral_constant<int, 4>());
    default:
      return Status::InvalidArgument("slab hash kernels support key sizes 8, 16 and 32, not " +
                                     std::to_string(8 * key_words));
  }
}

}  // namespace gpkv::slab_hash::gpu

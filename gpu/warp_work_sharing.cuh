// Warp-cooperative work sharing (WCWS, as in the GPU B-Tree and SlabHash):
// each lane of a group of lanes may hold one operation, and the group runs
// the held operations one after another, every lane of the group cooperating
// on each. A kernel gives each thread one operation (so a batch maps onto
// threads as usual) while the operations themselves are warp-wide (one probe
// spread over the lanes).
//
// For the .cu files of gpu/ and tables/*/gpu/ only (CUDA device code).
#pragma once

#include <cstdint>
#include <type_traits>

namespace gpkv::gpu::warp {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr uint32_t kWarpSize = 32;

__device__ __forceinline__ uint32_t LaneId() { return threadIdx.x % kWarpSize; }

// Runs the operations the lanes of `mask` hold, one at a time in ascending
// lane order: `share(source)` is called in every lane of `mask` for each
// lane `source` of `mask` whose has_work is true.
//
// Who calls: every lane of `mask`, converged (the call begins with
// __ballot_sync(mask, has_work)); lanes outside `mask` do not take part (a
// tile of a warp passes its own mask, the whole warp kFullMask). `share` runs
// under `mask`: the warp intrinsics it calls use `mask` (or a mask of its
// own that the lanes of `mask` all reach), and it fetches what lane `source`
// holds with __shfl_sync(mask, ..., source).
//
// `share` returns void, or bool: true stops the loop (the operations of the
// remaining lanes are not run); it must return the same value in every lane.
//
// Returns (uniform over `mask`) true if a `share` stopped the loop. On
// return every lane holds what `share` left in it: typically lane `source`
// wrote its own operation's result during its turn (`if (LaneId() == source)`).
template <typename Share>
__device__ __forceinline__ bool ShareWork(unsigned mask, bool has_work, Share&& share) {
  unsigned pending = __ballot_sync(mask, has_work);
  while (pending != 0) {
    const int source = __ffs(pending) - 1;
    pending &= pending - 1;
    if constexpr (std::is_same_v<decltype(share(source)), bool>) {
      if (share(source)) return true;
    } else {
      share(source);
    }
  }
  return false;
}

}  // namespace gpkv::gpu::warp

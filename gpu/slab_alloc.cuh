// Device side of gpu::SlabAlloc (gpu/slab_alloc.h): warp-wide allocation,
// free and addressing of 128-byte slabs. For the .cu files of gpu/ and
// tables/*/gpu/ only.
//
//   SlabAllocWarp alloc;                   // per warp, in registers
//   InitSlabAllocWarp(view, &alloc);       // all lanes, converged
//   uint32_t slab = WarpAllocateSlab(view, &alloc);  // all lanes, converged:
//                                          // same address in every lane, or
//                                          // kNullSlab (allocator full)
//   uint8_t* bytes = SlabAt(view, slab);
//   FreeSlab(view, slab);                  // any one thread
//
// A slab handed out is not zeroed: the caller initialises it before
// publishing it.
#pragma once

#include <cstdint>

#include "gpu/slab_alloc.h"
#include "gpu/warp_work_sharing.cuh"

namespace gpkv::gpu {

// Re-selections of the resident block before an allocation fails.
constexpr uint32_t kMaxBlockAttempts = 64;

// A warp's allocation state: its resident block and that block's bitmap
// word for this lane. Kept in registers for the life of a kernel's warp.
struct SlabAllocWarp {
  uint32_t block = 0;        // global memory block index (super * 256 + block)
  uint32_t attempt = 0;      // re-selections so far (hash input)
  uint32_t bitmap_word = 0;  // lane i: word i of the resident block's bitmap
  bool loaded = false;       // bitmap_word holds the block's bitmap
};

// Implemented in this header by the SlabAlloc owner (see slab_alloc.h).
__device__ inline void InitSlabAllocWarp(const SlabAllocView& view, SlabAllocWarp* warp_state);
__device__ inline uint32_t WarpAllocateSlab(const SlabAllocView& view, SlabAllocWarp* warp_state);
__device__ inline void FreeSlab(const SlabAllocView& view, uint32_t address);
__device__ inline uint8_t* SlabAt(const SlabAllocView& view, uint32_t address);

}  // namespace gpkv::gpu

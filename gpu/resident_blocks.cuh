// The grid of a kernel whose groups take their work at run time: only the
// blocks the device runs at once. A write's time varies with what it meets
// (a long chain, a split, a held latch): with work handed out by a fixed
// stride, a block holds its multiprocessor's place until its slowest group
// ends, and the launch ends with a partial wave. The write kernels of the
// slab hash and the B-tree launch this many blocks, and each group takes
// its next operations from a counter of the launch until none is left.
//
// For the .cu files of gpu/ and tables/*/gpu/ only (CUDA host code).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/device_memory.h"

namespace gpkv::gpu {

// Blocks of kKernel (`block_threads` threads a block) that the device runs
// at once, at most `wanted`. The occupancy is asked once per kernel (the
// same for every device of a build).
template <auto kKernel>
unsigned int ResidentBlocksFor(uint64_t wanted, int block_threads) {
  static const int per_multiprocessor = [block_threads] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kKernel, block_threads, 0) !=
        cudaSuccess) {
      cudaGetLastError();  // not sticky; assume a few blocks
      blocks = 4;
    }
    return blocks < 1 ? 1 : blocks;
  }();
  const uint64_t resident =
      uint64_t{static_cast<uint32_t>(per_multiprocessor)} * MultiprocessorCount();
  return static_cast<unsigned int>(wanted < resident ? wanted : resident);
}

}  // namespace gpkv::gpu

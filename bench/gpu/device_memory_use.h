// How much of the current CUDA device's memory is in use: what the btree
// suite prints after each system's rows, so that a run shows what its tree
// sizes took. Memory a stream-ordered pool keeps after its frees counts as
// in use. Defined in CUDA builds only (device_memory_use.cu).
//
// Who may call: the btree suite (btree_bench.cc) under GPKV_HAVE_GPU_BENCH.
#pragma once

#include <cstdint>

#include "gpkv/status.h"

namespace gpkv::bench::gpu {

// Bytes in use (total minus free, cudaMemGetInfo) and the device's total.
Status DeviceMemoryUse(uint64_t* used, uint64_t* total);

}  // namespace gpkv::bench::gpu

// Pieces shared by the kernel files of gpu/: launch geometry, the launch
// check every launcher ends with, warp-aggregated counters and the dispatch
// from a runtime key size to the kernels instantiated for 8, 16 and 32-byte
// keys.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "gpkv/status.h"
#include "gpu/cuda_check.h"
#include "tables/gphash/gpu/warp.cuh"

namespace gpkv::gphash::gpu {

using gpkv::gpu::CudaStatus;

constexpr int kBlockThreads = 256;

inline unsigned int BlocksFor(uint64_t threads) {
  return static_cast<unsigned int>((threads + kBlockThreads - 1) / kBlockThreads);
}

// The launch check of a launcher: OK, or an error naming `kernel`.
inline Status CheckLaunch(const char* kernel) {
  cudaError_t error = cudaPeekAtLastError();
  if (error == cudaSuccess) return Status::OK();
  cudaGetLastError();  // clear a launch-configuration error (sticky errors stay)
  return CudaStatus(error, std::string("launch of ") + kernel);
}

// Adds each lane's `lane_count` to *counter with one atomic per warp.
// All 32 lanes call it.
__device__ __forceinline__ void AddWarpCount(unsigned long long* counter,
                                             unsigned long long lane_count) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    lane_count += __shfl_down_sync(warp::kFullMask, lane_count, offset);
  }
  if (warp::LaneId() == 0 && lane_count != 0) atomicAdd(counter, lane_count);
}

// Calls launch(std::integral_constant<int, key words>) for key_size 8, 16 or
// 32; InvalidArgument otherwise.
template <typename Launch>
Status DispatchKeyWords(uint32_t key_size, Launch&& launch) {
  static_assert(format::kMinKeySize == 8 && format::kMaxKeySize == 32,
                "the kernels are instantiated for every key size of tables/gphash/layout.h");
  switch (key_size) {
    case 8:
      return launch(std::integral_constant<int, 1>());
    case 16:
      return launch(std::integral_constant<int, 2>());
    case 32:
      return launch(std::integral_constant<int, 4>());
    default:
      return Status::InvalidArgument("GPU kernels support key sizes 8, 16 and 32, not " +
                                     std::to_string(key_size));
  }
}

}  // namespace gpkv::gphash::gpu

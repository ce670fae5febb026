// The current device's memory in use (see device_memory_use.h).
#include <cuda_runtime.h>

#include "bench/gpu/device_memory_use.h"
#include "gpu/cuda_check.h"

namespace gpkv::bench::gpu {

Status DeviceMemoryUse(uint64_t* used, uint64_t* total) {
  size_t free_bytes = 0, total_bytes = 0;
  GPKV_RETURN_IF_ERROR(
      ::gpkv::gpu::CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  *used = total_bytes - free_bytes;
  *total = total_bytes;
  return Status::OK();
}

}  // namespace gpkv::bench::gpu

// Filling device memory that other streams use next, for the .cu files of
// gpu/ and tables/*/gpu/ (this header includes the CUDA runtime).
//
// cudaMemset of device memory returns before the bytes are written, and it
// runs on the legacy default stream, which the library's non-blocking streams
// (workspaces, caches, the slab allocator's callers) do not wait for: work
// queued on one of them next could run before the bytes land, and read or
// overwrite them. Every fill of device memory that is not itself ordered on
// the stream that uses it goes through FillAndWait.
//
// Thread safety: as cudaMemset.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpkv::gpu {

// Sets `bytes` bytes at `device` (device memory) to `value` and waits until
// they are written. cudaSuccess, or the first CUDA error.
inline cudaError_t FillAndWait(void* device, uint8_t value, size_t bytes) {
  cudaError_t error = cudaMemset(device, value, bytes);
  if (error == cudaSuccess) error = cudaStreamSynchronize(cudaStreamLegacy);
  return error;
}

}  // namespace gpkv::gpu

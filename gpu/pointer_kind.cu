#include <cuda_runtime.h>

#include "gpu/host_memory.h"
#include "gpu/pointer_kind.h"

namespace gpkv::gpu {

bool IsDeviceMemory(const void* address, int device) {
  if (address == nullptr) return false;
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
    cudaGetLastError();  // not a pointer CUDA knows: clear the error
    return false;
  }
  return (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged) &&
         attributes.device == device;
}

bool IsPageable(const void* address) {
  if (InRegisteredRange(address, 1, nullptr)) return false;
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return attributes.type == cudaMemoryTypeUnregistered;
}

}  // namespace gpkv::gpu

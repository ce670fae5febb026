#include <cuda_runtime.h>

#include <cstdint>

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

bool IsMappedHostMemory(const void* address, size_t bytes) {
  if (address == nullptr || bytes == 0) return false;
  bool in_place = false;
  if (InRegisteredRange(address, bytes, &in_place)) return in_place;
  auto mapped = [](const void* at) {
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, at) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return attributes.type == cudaMemoryTypeHost && attributes.devicePointer == at;
  };
  return mapped(address) && mapped(static_cast<const uint8_t*>(address) + bytes - 1);
}

}  // namespace gpkv::gpu

#include <cuda_runtime.h>

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

}  // namespace gpkv::gpu

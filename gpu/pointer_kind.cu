#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/host_memory.h"
#include "gpu/pointer_kind.h"

namespace gpkv::gpu {
namespace {

// The kind of the byte at `address`; *in_place (if not null) = page-locked
// and mapped at the same address on the device.
MemoryKind KindOf(const void* address, int device, bool* in_place) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
    cudaGetLastError();
    return MemoryKind::kPageable;
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      return attributes.device == device ? MemoryKind::kDevice : MemoryKind::kPageable;
    case cudaMemoryTypeHost:
      if (in_place != nullptr) *in_place = attributes.devicePointer == address;
      return MemoryKind::kPinned;
    default:
      return MemoryKind::kPageable;
  }
}

}  // namespace

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

MemoryKind ClassifyMemory(const void* address, size_t bytes, int device, bool* in_place) {
  if (in_place != nullptr) *in_place = false;
  if (address == nullptr) return MemoryKind::kPageable;
  if (InRegisteredRange(address, bytes, in_place)) return MemoryKind::kPinned;
  MemoryKind first = KindOf(address, device, in_place);
  if (first != MemoryKind::kPinned || bytes <= 1) return first;
  if (KindOf(static_cast<const uint8_t*>(address) + bytes - 1, device, nullptr) ==
      MemoryKind::kPinned) {
    return MemoryKind::kPinned;
  }
  if (in_place != nullptr) *in_place = false;
  return MemoryKind::kPageable;
}

}  // namespace gpkv::gpu

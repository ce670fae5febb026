#include "tables/gphash/logged/gpu/device_batches.h"

#include "gpu/pointer_kind.h"

namespace gpkv::gphash::logged::gpu {

bool InDeviceMemory(const void* address, int device) {
  return gpkv::gpu::IsDeviceMemory(address, device);
}

}  // namespace gpkv::gphash::logged::gpu

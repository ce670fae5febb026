#include <map>
#include <mutex>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/pool_registration.h"

namespace gpkv::gpu {
namespace {

struct Registration {
  uint64_t size = 0;
  uint8_t* device_base = nullptr;
  int handles = 0;
};

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<const uint8_t*, Registration>& Registry() {
  static auto* registry = new std::map<const uint8_t*, Registration>();  // never destroyed
  return *registry;
}

}  // namespace

Result<std::unique_ptr<PoolRegistration>> PoolRegistration::Acquire(pm::Pool& pool) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto& registry = Registry();
  auto it = registry.find(pool.base());
  if (it != registry.end()) {
    if (it->second.size != pool.size()) {
      return Status::InvalidArgument(pool.path() +
                                     ": a different mapping at the same address is registered "
                                     "(a pool was closed before its GPU tables)");
    }
    ++it->second.handles;
    return std::unique_ptr<PoolRegistration>(
        new PoolRegistration(pool.base(), it->second.device_base));
  }
  unsigned int flags = cudaHostRegisterMapped | cudaHostRegisterPortable;
  if (pool.read_only()) flags |= cudaHostRegisterReadOnly;
  cudaError_t error = cudaHostRegister(pool.base(), pool.size(), flags);
  if (error != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so later calls do not report it
    if (IsNoDeviceError(error)) return CudaStatus(error, "cudaHostRegister of " + pool.path());
    return Status::Unsupported(
        pool.path() + ": cannot register the pool mapping with CUDA (cudaHostRegister: " +
        cudaGetErrorString(error) +
        "); the GPU backend's direct and mirror modes need a pool on tmpfs (/dev/shm), "
        "hugetlbfs or device-DAX; staged mode (GpuIndexMode::kAuto or kStaged) runs without");
  }
  void* device_base = nullptr;
  error = cudaHostGetDevicePointer(&device_base, pool.base(), 0);
  if (error != cudaSuccess) {
    cudaHostUnregister(pool.base());
    return CudaStatus(error, "cudaHostGetDevicePointer of " + pool.path());
  }
  Registration registration;
  registration.size = pool.size();
  registration.device_base = static_cast<uint8_t*>(device_base);
  registration.handles = 1;
  registry[pool.base()] = registration;
  return std::unique_ptr<PoolRegistration>(
      new PoolRegistration(pool.base(), registration.device_base));
}

PoolRegistration::~PoolRegistration() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto& registry = Registry();
  auto it = registry.find(host_base_);
  if (it == registry.end()) return;
  if (--it->second.handles == 0) {
    cudaHostUnregister(const_cast<uint8_t*>(host_base_));
    registry.erase(it);
  }
}

}  // namespace gpkv::gpu

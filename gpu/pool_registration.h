// gpu::PoolRegistration: the pool mapping registered with CUDA
// (cudaHostRegister, mapped + portable) so kernels can read and write the pool
// itself through a device pointer: the "direct" mapping mode
// (docs/ARCHITECTURE.md, "GPU backend: mapping modes").
//
// One registration per mapping, shared by every table of the pool that is
// open on the GPU (CUDA refuses to register a range twice); the last handle
// unregisters it. A file that the driver cannot pin (ext4 and other
// page-cache files) gives Unsupported naming the file; tmpfs (/dev/shm),
// hugetlbfs and device-DAX files register.
//
// Who may call: gpu/ (the table Open). REQUIRES: every handle of a pool is
// destroyed before the pool is closed.
//
// Thread safety: Acquire and the destructor serialise on a process-wide mutex.
#pragma once

#include <cstdint>
#include <memory>

#include "gpkv/status.h"
#include "pm/pool.h"

namespace gpkv::gpu {

class PoolRegistration {
 public:
  // Registers pool.base() .. + pool.size() on first use (read-only pools
  // with cudaHostRegisterReadOnly), or shares the existing registration.
  static Result<std::unique_ptr<PoolRegistration>> Acquire(pm::Pool& pool);
  ~PoolRegistration();
  PoolRegistration(const PoolRegistration&) = delete;
  PoolRegistration& operator=(const PoolRegistration&) = delete;

  // The pool's first byte as kernels address it.
  uint8_t* device_base() const { return device_base_; }

 private:
  PoolRegistration(const uint8_t* host_base, uint8_t* device_base)
      : host_base_(host_base), device_base_(device_base) {}
  const uint8_t* host_base_;
  uint8_t* device_base_;
};

}  // namespace gpkv::gpu

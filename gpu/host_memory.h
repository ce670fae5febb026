// Page-locking of caller memory for the CUDA backend (cudaHostRegister), for
// callers that must not include CUDA headers: gpkv::DB::RegisterHostMemory
// (engine/), tests and benchmarks; and owned pinned buffers (PinnedBytes). A batch array inside a
// registered range is copied by DMA in place (tables/gphash/gpu/host_staging.h), instead of through
// the table's pinned staging.
//
// Who may call: engine/, tests, benchmarks; the GPU backends and
// gpu/staged_copy (InRegisteredRange, to classify a batch's arrays).
// Thread safety: any thread; registering one range twice, or unregistering
// one that is not registered, is the caller's error (CUDA reports it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpkv/status.h"

namespace gpkv::gpu {

// Page-locks [address, address + bytes) and makes it known to every CUDA
// context as pinned memory (cudaHostRegisterPortable). Errors name the call:
// InvalidArgument for a range CUDA refuses (already registered, say),
// Unsupported without a usable device.
Status RegisterHostMemory(void* address, size_t bytes);
// Undoes RegisterHostMemory(address, ...). REQUIRES: no batch in flight
// uses the range.
Status UnregisterHostMemory(void* address);

// True when [address, address + bytes) lies inside one range that
// RegisterHostMemory registered; then *in_place (if not null) tells whether
// kernels may use those addresses themselves (unified addressing maps the
// range at the same address on the device). Makes no CUDA call: it looks the
// range up in the list RegisterHostMemory keeps, where cudaPointerGetAttributes
// costs 0.1-0.2 us a call and a batch asks several (H100,
// docs/bench/host-batches.md). False for every other address, pinned
// or not: callers ask CUDA then.
bool InRegisteredRange(const void* address, size_t bytes, bool* in_place);

// Owned page-locked host memory (cudaMallocHost / cudaFreeHost): batch
// buffers the GPU copies by DMA, for tests and benchmarks.
class PinnedBytes {
 public:
  // OutOfDeviceMemory or Unsupported on failure.
  static Result<PinnedBytes> Allocate(size_t size);
  PinnedBytes() = default;
  PinnedBytes(PinnedBytes&& other) noexcept;
  PinnedBytes& operator=(PinnedBytes&& other) noexcept;
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
  ~PinnedBytes();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gpkv::gpu

// CUB's two-phase temporary storage, written once for every caller: a
// device-wide CUB algorithm (sort, scan, select) is first asked how many
// bytes of scratch it needs — a call without storage, which enqueues nothing
// — then the caller places that many bytes (in an arena it plans per batch,
// or in a CubTempBuffer it owns) and runs the algorithm on them. So no batch
// allocates device memory in its hot path.
//
// An algorithm is a callable `cudaError_t(void* storage, size_t& bytes)`
// around one CUB call:
//
//   auto sort = [&](void* storage, size_t& bytes) {
//     return cub::DeviceRadixSort::SortPairs(storage, bytes, keys_in, keys_out,
//                                            values_in, values_out, count, 0, 32, stream);
//   };
//   size_t bytes;
//   GPKV_RETURN_IF_ERROR(CubTempBytes(sort, &bytes, "sort (size query)"));  // phase one
//   ... place `bytes` bytes at storage.data ...
//   GPKV_RETURN_IF_ERROR(RunCub(sort, storage, "sort"));                     // phase two
//
// Phase two enqueues the algorithm on the stream its callable passes and does
// not wait for it. `what` (a string or a C string) names the call in an
// error (gpu/cuda_check.h).
//
// For the .cu files of gpu/ and tables/*/gpu/ (includes the CUDA runtime).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "gpkv/status.h"
#include "gpu/cuda_check.h"

namespace gpkv::gpu {

// Device memory a CUB algorithm may use as its temporary storage.
struct CubTempStorage {
  void* data = nullptr;
  size_t bytes = 0;
};

// Phase one: *bytes = the temporary storage `algorithm` needs.
template <typename Algorithm, typename What>
Status CubTempBytes(Algorithm&& algorithm, size_t* bytes, const What& what) {
  *bytes = 0;
  GPKV_CUDA_RETURN_IF_ERROR(algorithm(nullptr, *bytes), what);
  return Status::OK();
}

// Phase two: runs `algorithm` on `storage`.
// REQUIRES: storage.bytes >= what phase one answered for the same arguments.
template <typename Algorithm, typename What>
Status RunCub(Algorithm&& algorithm, CubTempStorage storage, const What& what) {
  size_t bytes = storage.bytes;  // CUB takes the size by reference
  GPKV_CUDA_RETURN_IF_ERROR(algorithm(storage.data, bytes), what);
  return Status::OK();
}

// Phase one of cub::DeviceRadixSort::SortPairs of `count` 32-bit keys with
// 32-bit values over all 32 key bits (the hash tables' sorts of a batch's
// duplicate keys: sort keys with batch indices); `what` names it in an error.
Status SortPairsTempBytes(size_t count, size_t* bytes, const std::string& what);

// Temporary storage of its own (cudaMalloc) for a caller without a scratch
// arena, e.g. one that runs the same algorithm on buffers of a fixed size.
// Thread safety: a value owned by one thread at a time.
class CubTempBuffer {
 public:
  CubTempBuffer() = default;
  ~CubTempBuffer();
  CubTempBuffer(const CubTempBuffer&) = delete;
  CubTempBuffer& operator=(const CubTempBuffer&) = delete;

  // Frees the buffer and allocates one of `bytes` bytes; on failure the
  // buffer is empty and the error names `what`.
  Status Allocate(size_t bytes, const std::string& what);
  // Frees the buffer. REQUIRES: no work enqueued on it is still to run.
  void Free();
  CubTempStorage storage() const { return storage_; }

 private:
  CubTempStorage storage_;
};

}  // namespace gpkv::gpu

// What kind of memory a pointer refers to, as the GPU backends ask it of
// every batch array: device memory of the table's device takes the kernels'
// direct path; pinned or registered host memory is copied by DMA, or used
// in place by a small batch's kernels; anything else (pageable host memory,
// another device's memory) is staged.
//
// Who may call: the GPU backends (tables/*/gpu/). No CUDA headers here.
// Thread safety: any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpkv::gpu {

// True when `address` is device memory (cudaMalloc) or managed memory
// (cudaMallocManaged) of CUDA device `device`. False for a null address,
// for host memory of any kind (pageable, pinned, registered), for memory of
// another device, and when CUDA cannot tell (the error is cleared, so that
// the next CUDA call does not report it).
bool IsDeviceMemory(const void* address, int device);

// True when `address` is host memory CUDA does not know: neither device,
// managed, pinned nor registered memory (DB::RegisterHostMemory's ranges
// included), so that a copy to or from it is staged through pinned memory.
bool IsPageable(const void* address);

// Where a batch array lives, as a backend must copy it.
enum class MemoryKind : uint8_t {
  kDevice = 0,    // device (or managed) memory of the table's device: used in place
  kPinned = 1,    // page-locked host memory (cudaHostAlloc, cudaHostRegister): DMA
  kPageable = 2,  // any other host memory: through pinned staging
};

// The kind of [address, address + bytes): kPinned only when its first and
// last byte both are (a registered range may end inside the array).
// kPageable for null or unknown addresses. *in_place (if not null) is set
// for a kPinned array whose kernels may use it at its own address (unified
// addressing maps it there), so a small batch can skip its DMA copies;
// false for every other array. Registered ranges (RegisterHostMemory) are
// answered from their list, with no CUDA call.
MemoryKind ClassifyMemory(const void* address, size_t bytes, int device, bool* in_place = nullptr);

}  // namespace gpkv::gpu

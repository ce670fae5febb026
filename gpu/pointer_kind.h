// What kind of memory a pointer refers to, as the GPU backends ask it of
// every batch array: device memory of the table's device takes the kernels'
// direct path; anything else (pageable, pinned or registered host memory,
// another device's memory) is staged.
//
// Who may call: the GPU backends (tables/*/gpu/). No CUDA headers here.
// Thread safety: any thread.
#pragma once

#include <cstddef>

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

// True when [address, address + bytes) is pinned or registered host memory
// that kernels may read and write at the same address (unified addressing
// maps it there): a small batch's kernels may then use the caller's array in
// place, over the link, instead of a copy in device memory. Registered
// ranges (RegisterHostMemory) are answered from their list, other addresses
// by asking CUDA about the first and the last byte.
bool IsMappedHostMemory(const void* address, size_t bytes);

}  // namespace gpkv::gpu

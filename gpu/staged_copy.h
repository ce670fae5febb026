// Copies between device memory and pageable host memory at the link's rate:
// through two pinned chunks of the calling thread, the host's part spread
// over util::CopyPool's threads and overlapped with the DMA of the chunk
// before or after it.
//
// Why: cudaMemcpyAsync from or to pageable memory is staged by the driver
// on one thread, at 6-10 GB/s where the link moves 50: an ordered table's
// Get from host vectors ran at 0.5 G/s against 3.3 from device buffers, and
// its Range results (134 MB of pairs for 2^20 ranges) at 10-14 M ranges/s
// (docs/bench/lsm.md run C).
//
// Pinned or registered host memory does not need this (the DMA reads it
// in place): callers pass it to cudaMemcpyAsync as before.
//
// Who may call: the GPU backends, and tests (no CUDA headers here).
// Thread safety: any thread; the pinned chunks are the calling thread's.
#pragma once

#include <cstddef>

#include "gpkv/status.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace gpkv::gpu {

// True for page-locked host memory (cudaMallocHost, cudaHostRegister): the
// DMA reads and writes it in place, no staging needed.
bool IsPinnedHost(const void* address);

// Copies `bytes` from host memory at `host` to device memory at `device`,
// after the work enqueued on `stream`, and returns when `host` may be
// reused: every byte is in pinned memory or on the device (the last chunk's
// DMA may still run on `stream`). `what` names the data in errors.
Status StagedCopyToDevice(void* device, const void* host, size_t bytes, CUstream_st* stream,
                          const char* what);

// Copies `bytes` from device memory at `device` to host memory at `host`,
// after the work enqueued on `stream` (its kernels that write `device`),
// and returns when every byte is in `host`.
Status StagedCopyToHost(void* host, const void* device, size_t bytes, CUstream_st* stream,
                        const char* what);

}  // namespace gpkv::gpu

// Copies between device memory and a caller's array in any memory, at the
// link's rate also for pageable host memory: that goes through two pinned
// chunks of the calling thread, the host's part spread over
// util::CopyPool's threads and overlapped with the DMA of the chunk before
// or after it. Memory CUDA knows (device, managed, pinned or registered
// host memory, on any device) takes one cudaMemcpyAsync.
//
// Why: cudaMemcpyAsync from or to pageable memory is staged by the driver
// on one thread, at 6-10 GB/s where the link moves 50: an ordered table's
// Get from host vectors ran at 0.5 G/s against 3.3 from device buffers, and
// its Range results (134 MB of pairs for 2^20 ranges) at 10-14 M ranges/s
// (docs/bench/lsm.md).
//
// Who may call: the GPU backends, and tests (no CUDA headers here).
// Thread safety: any thread; the pinned chunks are the calling thread's.
#pragma once

#include <cstddef>
#include <string>

#include "gpkv/status.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace gpkv::gpu {

// Copies `bytes` from `source` to device memory at `device`, after the work
// enqueued on `stream`. A pageable source may be reused when this returns
// (every byte is in pinned memory or on the device; the last chunk's DMA
// may still run on `stream`); any other copy is only enqueued on `stream`.
// `what` names the data in errors.
Status CopyToDevice(void* device, const void* source, size_t bytes, CUstream_st* stream,
                    const std::string& what);

// Copies `bytes` from device memory at `device` to `target`, after the work
// enqueued on `stream` (its kernels that write `device`). A pageable target
// holds every byte when this returns; any other copy is only enqueued on
// `stream`.
Status CopyToHost(void* target, const void* device, size_t bytes, CUstream_st* stream,
                  const std::string& what);

}  // namespace gpkv::gpu

// The host-batch machinery of the GPU backend: where a batch array lives
// (device, pinned or pageable host memory: gpu/pointer_kind.h), the lanes of a workspace's
// copy / kernel pipeline (a stream, its events, a device arena and pinned
// staging buffers, all grown and kept, never allocated per batch), and the
// one-kernel duplicate pass of small write batches.
//
// A batch whose arrays are in host memory runs as chunks over the lanes
// (host_batches.cu): while the kernels of chunk c run on one lane, the keys
// of chunk c+1 are copied in on another and the answers of chunk c-1 copied
// out on a third. Pinned (cudaHostAlloc) and registered (cudaHostRegister,
// gpkv::DB::RegisterHostMemory) arrays are copied by DMA directly; pageable
// ones through the lane's pinned staging, the host's memcpy of one chunk
// overlapping the device's work on the others. A small batch (at most
// GpuTableOptions::host_zero_copy_ops operations) skips the DMA copies: its
// kernels read and write over the link the pinned staging (pageable arrays)
// or the caller's pinned or registered arrays themselves.
//
// Who may call: the GPU backend (workspace.cu, host_batches.cu).
// Thread safety: a lane belongs to one workspace, used by one thread at a
// time.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gpkv/status.h"
#include "gpu/pointer_kind.h"
#include "tables/gphash/gpu/kernels.h"

namespace gpkv::gphash::gpu {

// Where a batch array lives, as the pipeline must copy it
// (gpu/pointer_kind.h).
using gpkv::gpu::ClassifyMemory;
using gpkv::gpu::MemoryKind;

// One stream of a workspace's pipeline and the buffers of the chunk it runs.
class StagingLane {
 public:
  // A lane on `stream` (the workspace's own stream for lane 0), or on a new
  // non-blocking stream of its own when stream is null.
  static Result<std::unique_ptr<StagingLane>> Create(cudaStream_t stream);
  ~StagingLane();
  StagingLane(const StagingLane&) = delete;
  StagingLane& operator=(const StagingLane&) = delete;

  cudaStream_t stream() const { return stream_; }
  // Recorded after the last work of the lane's chunk (its copies out).
  cudaEvent_t done() const { return done_; }
  // Recorded after the kernels of a write chunk: the next chunk's kernels
  // wait for it (write batches apply their chunks in order).
  cudaEvent_t kernels_done() const { return kernels_done_; }

  // Makes the device arena / pinned input / pinned output staging at least
  // `bytes` long. Growing waits for the lane's stream.
  Status Reserve(size_t device_bytes, size_t host_in_bytes, size_t host_out_bytes);
  uint8_t* arena() const { return arena_; }
  // Pinned (cudaMallocHost) staging: with unified addressing also a device
  // address, which small batches hand to the kernels directly (zero copy).
  uint8_t* host_in() const { return host_in_; }
  uint8_t* host_out() const { return host_out_; }

  // Waits until the lane's chunk is done (its done() event).
  Status WaitDone(const char* what);
  // Records done() on the lane's stream.
  Status RecordDone();

 private:
  StagingLane() = default;
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  cudaEvent_t done_ = nullptr;
  cudaEvent_t kernels_done_ = nullptr;
  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  uint8_t* host_in_ = nullptr;  // pinned
  size_t host_in_bytes_ = 0;
  uint8_t* host_out_ = nullptr;  // pinned
  size_t host_out_bytes_ = 0;
};

// memcpy between host buffers (the pinned staging and the caller's pageable
// arrays), split over util::CopyPool::Shared()'s threads when large: one
// thread copies at a fifth of the link's rate. Any thread may call it.
void CopyHost(void* target, const void* source, size_t bytes);

// Operations up to which a write chunk resolves its duplicates with one
// kernel (LaunchMarkSurvivorsSmall) instead of the CUB sort.
constexpr size_t kSmallDedupeOps = 4096;

// keep[i] = 1 unless a later operation (keep_first: an earlier one) of the
// `count` keys (key_size bytes each, 8-byte aligned, device memory or host
// memory mapped at its own address) has the same key: LaunchMarkSurvivors'
// answer without the sort, in one block with a hash table in shared memory.
// The kernel also zeroes *counters (when not null), the counters of the
// write that follows it on the stream: one launch fewer than a memset.
// REQUIRES: count <= kSmallDedupeOps.
Status LaunchMarkSurvivorsSmall(const uint8_t* keys, size_t count, uint32_t key_size,
                                bool keep_first, uint8_t* keep, BatchCounters* counters,
                                cudaStream_t stream);

}  // namespace gpkv::gphash::gpu

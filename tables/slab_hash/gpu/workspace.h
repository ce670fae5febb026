// slab_hash::gpu::Workspace: what one call of a GpuBackend needs on the device —
// a stream of its own (non-blocking), device scratch that only grows (staged
// host arrays, retry and retire lists; a second arena for the rare
// duplicate sort, so the first keeps its contents meanwhile), the launch
// counters in device memory and their pinned host copy. The table keeps a
// free list of workspaces: one per concurrent caller.
//
// Who may call: the host side of tables/slab_hash/gpu/.
// Thread safety: a workspace is used by one thread at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gpkv/status.h"
#include "gpu/arena_plan.h"
#include "tables/slab_hash/gpu/device_view.h"

namespace gpkv::slab_hash::gpu {

class Workspace {
 public:
  static Result<std::unique_ptr<Workspace>> Create();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  cudaStream_t stream() const { return stream_; }
  // Work enqueued from now on runs after the work enqueued on `caller` so
  // far (no-op for a null caller).
  Status OrderAfter(cudaStream_t caller);
  // Makes the arena (side arena) at least `bytes` long; its contents are
  // lost when it grows. REQUIRES: nothing enqueued still uses it.
  Status Reserve(size_t bytes) { return Grow(bytes, &arena_, &arena_bytes_); }
  Status ReserveSide(size_t bytes) { return Grow(bytes, &side_, &side_bytes_); }
  uint8_t* arena() const { return arena_; }
  uint8_t* side() const { return side_; }

  BatchCounters* device_counters() const { return device_counters_; }
  const BatchCounters& counters() const { return *host_counters_; }
  // Enqueues the zeroing of the device counters / their copy to counters().
  Status ZeroCounters();
  Status FetchCounters();
  // Waits for the stream; `what` names the work in an error.
  Status Wait(const char* what);
  // Device bytes held.
  size_t bytes() const { return arena_bytes_ + side_bytes_ + sizeof(BatchCounters); }

 private:
  Workspace() = default;
  Status Grow(size_t bytes, uint8_t** buffer, size_t* buffer_bytes);

  cudaStream_t stream_ = nullptr;
  cudaEvent_t order_event_ = nullptr;
  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  uint8_t* side_ = nullptr;
  size_t side_bytes_ = 0;
  BatchCounters* device_counters_ = nullptr;
  BatchCounters* host_counters_ = nullptr;  // pinned
};

}  // namespace gpkv::slab_hash::gpu

// gpu::DeviceWorkspace: what one call of a GPU table needs on the device —
// a stream (a non-blocking one of its own, or the caller's), device scratch
// that only grows (an arena a batch plans with gpu::ArenaPlan, and a side
// arena for work that must leave the arena's contents alone), and the batch
// counters its kernels write in device memory with their pinned host copy.
// No batch allocates: scratch grows (at least doubling) only when a batch
// needs more than any before it. The slab hash's and GPHash's workspaces
// derive from it and name their counters' type (GPHash's adds what only it
// uses: pinned host scratch, the host-batch pipeline's lanes, per-chunk
// counters, kernel graphs); a table keeps a free list of them, one per
// concurrent caller. Calls that learn their needs only as they go take
// stream-ordered scratch instead (gpu::StreamScratch, stream_scratch.h).
//
// Who may call: the GPU backends (tables/*/gpu/).
// Thread safety: a workspace is used by one thread at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "gpkv/status.h"

namespace gpkv::gpu {

class DeviceWorkspace {
 public:
  virtual ~DeviceWorkspace();
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;

  cudaStream_t stream() const { return stream_; }
  // Work enqueued from now on runs after the work enqueued on `caller` so
  // far (no-op for a null caller).
  Status OrderAfter(cudaStream_t caller);
  // Makes the arena (side arena) at least `bytes` long; its contents are
  // lost when it grows, which waits for the stream first.
  // REQUIRES: nothing enqueued after the wait still uses it.
  Status Reserve(size_t bytes) { return Grow(bytes, &arena_, &arena_bytes_); }
  Status ReserveSide(size_t bytes) { return Grow(bytes, &side_, &side_bytes_); }
  uint8_t* arena() const { return arena_; }
  size_t arena_bytes() const { return arena_bytes_; }
  uint8_t* side() const { return side_; }

  // Enqueues the zeroing of the device counters; a workspace whose counters
  // start at other values overrides it.
  virtual Status ZeroCounters();
  // Enqueues the copy of the device counters to the host's.
  Status FetchCounters();
  // Waits for the stream; `what` names the work in an error.
  Status Wait(const char* what);
  // Device bytes held.
  size_t bytes() const { return arena_bytes_ + side_bytes_ + counter_bytes_; }

 protected:
  // `label` starts every error message ("slab hash" gives "slab hash: ...").
  explicit DeviceWorkspace(std::string label) : label_(std::move(label)) {}
  // Creates the stream (when `stream` is null; else runs on it), the event
  // and the counters, `counter_bytes` of them on the device and pinned on
  // the host (zeroed there).
  Status Init(cudaStream_t stream, size_t counter_bytes);
  void* device_counter_bytes() const { return device_counters_; }
  const void* host_counter_bytes() const { return host_counters_; }
  // What an error message of the workspace starts with.
  std::string Label(const std::string& what) const { return label_ + ": " + what; }

 private:
  Status Grow(size_t bytes, uint8_t** buffer, size_t* buffer_bytes);

  const std::string label_;
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  cudaEvent_t order_event_ = nullptr;
  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  uint8_t* side_ = nullptr;
  size_t side_bytes_ = 0;
  size_t counter_bytes_ = 0;
  void* device_counters_ = nullptr;
  void* host_counters_ = nullptr;  // pinned
};

}  // namespace gpkv::gpu

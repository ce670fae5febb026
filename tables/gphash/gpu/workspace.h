// gphash::gpu::Workspace: what one stream of a GPU table needs to run
// batches — the shared gpu::DeviceWorkspace (the stream, a device scratch
// arena grown only when a batch needs more, never a cudaMalloc per batch, the
// batch counters in device memory and their pinned host copy) with what only
// GPHash uses: a pinned host arena, the write batch an Async call left
// pending, the lanes of the host-batch pipeline (host_staging.h) with one
// counter block per chunk, and the get-kernel graphs. A table keeps one
// workspace per user stream (the Async calls) and a free list of workspaces
// with their own streams (the waiting calls, one per concurrent caller).
//
// Who may call: the GPU backend (backend.cu, cells.cu, open.cu, resize.cu,
// staged.cu, host_batches.cu).
//
// Thread safety: a workspace is used by one thread at a time (the table hands
// it out under its mutex).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpkv/status.h"
#include "gpu/arena_plan.h"
#include "gpu/device_workspace.h"
#include "tables/gphash/gpu/host_staging.h"
#include "tables/gphash/gpu/kernels.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::ArenaPlan;

// Where the sort / duplicate pass of one batch lives in an arena.
struct SortPlan {
  size_t arrays[5] = {};  // sort keys in / out, indices in / out, leaders
  size_t sort_temp = 0;
  size_t sort_temp_bytes = 0;
  size_t scan_temp = 0;
  size_t scan_temp_bytes = 0;
};

// Plans the sort of `count` operations (with_leaders: also the arrays of a
// deduplicated get that name each key's first occurrence).
Status PlanSort(ArenaPlan& plan, size_t count, bool with_leaders, SortPlan* sort);
// The scratch of a planned sort in `arena`.
DedupeScratch SortScratchAt(uint8_t* arena, const SortPlan& sort);

// A write batch enqueued by PutAsync / EraseAsync that Synchronize must
// finish (place the operations that found no room, then make it durable).
struct PendingWrite {
  bool active = false;
  bool is_put = false;
  const uint8_t* keys = nullptr;    // device copy of the batch keys
  const uint8_t* values = nullptr;  // device copy of the batch values (put)
  uint32_t* failed = nullptr;       // failed[] of the kernel
  uint32_t* spare = nullptr;        // second failed[] buffer for relaunches
  size_t arena_end = 0;             // arena bytes the batch occupies
};

// Grows *buffer (device memory, or pinned host memory) to at least `bytes`,
// at least doubling it; `what` names it in the error. The caller has waited
// for the work that used the old buffer. On failure the buffer is freed and
// empty, never half-grown.
Status GrowBuffer(size_t bytes, bool pinned_host, const char* what, uint8_t** buffer,
                  size_t* buffer_bytes);

class Workspace final : public gpkv::gpu::DeviceWorkspace {
 public:
  // A workspace on `stream`, or on a stream of its own when stream is null.
  static Result<std::unique_ptr<Workspace>> Create(cudaStream_t stream);
  ~Workspace() override;

  // Makes the pinned host scratch at least `bytes` long (value-cell batches
  // copy their value words there). Growing waits for the stream.
  Status ReserveHost(size_t bytes);
  uint8_t* host_arena() const { return host_arena_; }

  BatchCounters* device_counters() const {
    return static_cast<BatchCounters*>(device_counter_bytes());
  }
  // Enqueues the zeroing of the device counters; first_invalid_offset, a
  // minimum, starts at the largest offset instead.
  Status ZeroCounters() override;
  // The counters as FetchCounters copied them.
  const BatchCounters& host_counters() const {
    return *static_cast<const BatchCounters*>(host_counter_bytes());
  }

  PendingWrite& pending() { return pending_; }

  // Lane `index` of the host-batch pipeline, created on first use; lane 0
  // runs on the workspace's stream.
  Result<StagingLane*> Lane(size_t index);
  // Makes work enqueued from now on on lanes 1..lanes-1 wait for the work
  // enqueued on the workspace's stream so far.
  Status ForkLanes(size_t lanes);
  // One counter block per chunk of a pipelined write batch: device array and
  // its pinned host copy, at least `chunks` long. Growing waits for the
  // stream.
  Status ReserveChunkCounters(size_t chunks);
  BatchCounters* device_chunk_counters() const { return device_chunk_counters_; }
  BatchCounters* host_chunk_counters() const { return host_chunk_counters_; }
  // The get-kernel graphs of the workspace's small get batches.
  GetGraphs& get_graphs() { return get_graphs_; }

  // Where a one-chunk batch's kernel hands the first chunk counters to
  // host_chunk_counters() itself (CountersToHost). REQUIRES: the kernel runs
  // on the workspace's stream, after ReserveChunkCounters.
  CountersToHost chunk_counters_to_host() const {
    return CountersToHost{host_chunk_counters_on_device_, device_blocks_done_};
  }

 private:
  Workspace() : DeviceWorkspace("GPHash") {}

  uint8_t* host_arena_ = nullptr;  // pinned
  size_t host_arena_bytes_ = 0;
  PendingWrite pending_;
  std::vector<std::unique_ptr<StagingLane>> lanes_;
  cudaEvent_t fork_event_ = nullptr;
  BatchCounters* device_chunk_counters_ = nullptr;
  BatchCounters* host_chunk_counters_ = nullptr;  // pinned
  BatchCounters* host_chunk_counters_on_device_ = nullptr;
  size_t chunk_counters_ = 0;
  unsigned int* device_blocks_done_ = nullptr;  // zero between batches
  GetGraphs get_graphs_;                        // destroyed after ~Workspace waited for the stream
};

}  // namespace gpkv::gphash::gpu

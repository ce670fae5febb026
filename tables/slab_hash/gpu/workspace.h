// slab_hash::gpu::Workspace: what one call of a GpuBackend needs on the
// device — the shared gpu::DeviceWorkspace (a stream of its own, an arena
// for staged host arrays, retry and retire lists, a side arena for the rare
// duplicate sort, so that the arena keeps its contents meanwhile) with the
// slab hash's launch counters. The table keeps a free list of workspaces:
// one per concurrent caller.
//
// Who may call: the host side of tables/slab_hash/gpu/.
// Thread safety: a workspace is used by one thread at a time.
#pragma once

#include <memory>

#include "gpkv/status.h"
#include "gpu/arena_plan.h"
#include "gpu/device_workspace.h"
#include "tables/slab_hash/gpu/device_view.h"

namespace gpkv::slab_hash::gpu {

class Workspace : public gpkv::gpu::DeviceWorkspace {
 public:
  static Result<std::unique_ptr<Workspace>> Create();

  BatchCounters* device_counters() const {
    return static_cast<BatchCounters*>(device_counter_bytes());
  }
  // The counters as FetchCounters copied them.
  const BatchCounters& counters() const {
    return *static_cast<const BatchCounters*>(host_counter_bytes());
  }

 private:
  Workspace() : DeviceWorkspace("slab hash") {}
};

}  // namespace gpkv::slab_hash::gpu

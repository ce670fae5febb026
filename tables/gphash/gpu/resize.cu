// GpuBackend::Impl resize: gphash::Core runs the protocol (layout.h) and
// makes its pool writes; this file holds the GPU's primitives of it
// (gphash::GrowthBackend): the mirror of a new top level (or the fall back
// to direct mode when it does not fit), the view rebuilt for each published
// LevelSet, the bottom level's keys moved up on the device (insert-then-erase,
// MigrateBottomKernel), and the mirror of a dropped bottom level freed. A
// crash anywhere resumes from the published LevelSet at the next open
// (open.cu).
#include <algorithm>

#include "gpu/cuda_check.h"
#include "gpu/device_fill.cuh"
#include "tables/gphash/gpu/backend_impl.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::CudaStatus;

Status GpuBackend::Impl::WaitAllStreams() {
  std::lock_guard<std::mutex> lock(workspaces_mutex_);
  for (auto& workspace : own_workspaces_) GPKV_RETURN_IF_ERROR(workspace->Wait("resize"));
  for (auto& [stream, workspace] : stream_workspaces_) {
    GPKV_RETURN_IF_ERROR(workspace->Wait("resize"));
  }
  if (bkt_cache_ != nullptr) GPKV_RETURN_IF_ERROR(bkt_cache_->Wait());
  return Status::OK();
}

Status GpuBackend::Impl::Resize() {
  std::unique_lock<std::shared_mutex> view_lock(view_mutex_);
  GPKV_RETURN_IF_ERROR(WaitAllStreams());
  auto workspace = AcquireWorkspace(nullptr);
  if (!workspace.ok()) return workspace.status();
  Lease lease{this, *workspace, nullptr};
  // Bucket ids change with the levels: the BktCache is off until the new
  // levels are in place, then sized for them and empty.
  bkt_cache_active_ = false;
  BuildView();
  growth_workspace_ = *workspace;
  const Status grown = core_.Grow();
  growth_workspace_ = nullptr;
  GPKV_RETURN_IF_ERROR(grown);
  return SetUpBktCache();
}

Status GpuBackend::Impl::PrepareTopLevel(uint64_t /*offset*/, uint64_t buckets) {
  if (!use_mirror_) return Status::OK();
  const uint64_t bytes = buckets * snapshot_.bucket_bytes;
  void* copy = nullptr;
  cudaError_t error = cudaMalloc(&copy, bytes);
  // Zeroed before the migration's stream moves keys into it (device_fill.cuh).
  if (error == cudaSuccess) error = ::gpkv::gpu::FillAndWait(copy, 0, bytes);
  if (error == cudaSuccess) {
    // The core publishes the LevelSet with this level on top next.
    mirror_levels_.insert(mirror_levels_.begin(), static_cast<uint8_t*>(copy));
    return Status::OK();
  }
  cudaGetLastError();
  if (copy != nullptr) cudaFree(copy);
  if (staged_) {
    // Staged mode has no direct mode to fall back to.
    return CudaStatus(error, Where() + ": staged mode: resize to " + std::to_string(buckets) +
                                 " top buckets: the new level's " + std::to_string(bytes) +
                                 " bytes do not fit in GPU memory");
  }
  // The mirror no longer fits: go on in direct mode.
  DropMirror();
  return Status::OK();
}

void GpuBackend::Impl::ApplyLevelSet(const gphash::LevelSet& set, uint64_t active_word) {
  snapshot_.level_set = set;
  snapshot_.active_word = active_word;
  BuildView();
}

Result<uint64_t> GpuBackend::Impl::MoveBottomLevel() {
  Workspace& ws = *growth_workspace_;
  GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
  const uint64_t slots = view_.bucket_counts[view_.level_count - 1] * view_.slots_per_bucket;
  const uint64_t step = LaunchChunk(slots);
  for (uint64_t first = 0; first < slots; first += step) {
    GPKV_RETURN_IF_ERROR(LaunchMigrateBottomLevel(
        view_, SlotRange{first, std::min(slots, first + step)}, ws.device_counters(), ws.stream()));
    GPKV_RETURN_IF_ERROR(DrainStagedLog(ws, "moving the bottom level up"));
  }
  GPKV_RETURN_IF_ERROR(ws.FetchCounters());
  GPKV_RETURN_IF_ERROR(ws.Wait("moving the bottom level up"));
  return ws.host_counters().failed;
}

void GpuBackend::Impl::DropBottomLevel() {
  if (use_mirror_ && mirror_levels_.size() > snapshot_.level_set.level_count) {
    cudaFree(mirror_levels_.back());
    mirror_levels_.pop_back();
  }
}

}  // namespace gpkv::gphash::gpu

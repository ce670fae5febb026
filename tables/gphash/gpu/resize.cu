// GpuBackend::Impl resize, following tables/gphash/layout.h: allocate a new
// top level of twice the buckets, publish a LevelSet with it on top and the
// resizing flag; move every VALID slot of the bottom level up on the device
// (insert-then-erase, MigrateBottomKernel); publish the LevelSet without the
// bottom level and the flag; free the old bottom. A crash anywhere resumes
// from the published LevelSet at the next open (open.cu).
#include <algorithm>

#include "gpu/cuda_check.h"
#include "pm/extent_allocator.h"
#include "tables/gphash/gpu/backend_impl.h"
#include "tables/gphash/root.h"

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
  if ((snapshot_.level_set.flags & gphash::kLevelSetResizing) == 0) {
    GPKV_RETURN_IF_ERROR(StartResize());
  }
  GPKV_RETURN_IF_ERROR(FinishResize(**workspace));
  return SetUpBktCache();
}

Status GpuBackend::Impl::StartResize() {
  const gphash::LevelSet& current = snapshot_.level_set;
  GPKV_RETURN_IF_ERROR(
      gphash::CheckGrowth(TableWhere(pool_, table_name_, "root", snapshot_.root_offset), current));
  const uint64_t buckets = gphash::GrownTopBuckets(current);
  const uint64_t bytes = buckets * snapshot_.bucket_bytes;
  auto offset =
      pool_.allocator().Allocate(bytes, format::kExtentKindBucketLevel, snapshot_.table_id);
  if (!offset.ok()) return offset.status();
  uint8_t* mirror = nullptr;
  if (use_mirror_) {
    void* copy = nullptr;
    cudaError_t error = cudaMalloc(&copy, bytes);
    if (error == cudaSuccess) error = cudaMemset(copy, 0, bytes);
    // cudaMemset of device memory returns before it is done, on the legacy
    // default stream, which the workspaces' non-blocking streams do not wait
    // for: without this wait the zeros could land after the keys that the
    // migration moves into the new level.
    if (error == cudaSuccess) error = cudaStreamSynchronize(cudaStreamLegacy);
    if (error != cudaSuccess) {
      cudaGetLastError();
      if (copy != nullptr) cudaFree(copy);
      if (staged_) {
        // Staged mode has no direct mode to fall back to.
        pool_.allocator().Free(*offset).IgnoreError();
        return CudaStatus(error, Where() + ": staged mode: resize to " + std::to_string(buckets) +
                                     " top buckets: the new level's " + std::to_string(bytes) +
                                     " bytes do not fit in GPU memory");
      }
      // The mirror no longer fits: go on in direct mode.
      DropMirror();
    } else {
      mirror = static_cast<uint8_t*>(copy);
    }
  }
  gphash::LevelSet next = gphash::GrownLevelSet(current, *offset);
  auto published = PublishLevelSet(pool_, snapshot_, next);
  if (!published.ok()) {
    if (mirror != nullptr) cudaFree(mirror);
    return published.status();
  }
  snapshot_ = *published;
  if (mirror != nullptr) mirror_levels_.insert(mirror_levels_.begin(), mirror);
  BuildView();
  return Status::OK();
}

Status GpuBackend::Impl::FinishResize(Workspace& ws) {
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
  if (ws.host_counters().failed != 0) {
    return Status::PoolFull(Where() + ": resize could not move " +
                            std::to_string(ws.host_counters().failed) +
                            " keys of the bottom level into the levels above; the table stays "
                            "in its resizing state");
  }
  const gphash::LevelSet& current = snapshot_.level_set;
  const gphash::LevelDesc bottom = current.levels[current.level_count - 1];
  gphash::LevelSet next = gphash::FinishedLevelSet(current, /*drop_bottom=*/true);
  auto published = PublishLevelSet(pool_, snapshot_, next);
  if (!published.ok()) return published.status();
  snapshot_ = *published;
  auto* root = pool_.At<gphash::GphashRoot>(snapshot_.root_offset);
  pool_.Publish(&root->resizes, root->resizes + 1);
  if (use_mirror_ && mirror_levels_.size() > next.level_count) {
    cudaFree(mirror_levels_.back());
    mirror_levels_.pop_back();
  }
  BuildView();
  // Unlinked now; a crash before this frees it at the next open anyway.
  return pool_.allocator().Free(bottom.offset);
}

}  // namespace gpkv::gphash::gpu

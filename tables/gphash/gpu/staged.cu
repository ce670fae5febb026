// GpuBackend::Impl staged mode: the table's pool mapping is not registered
// with CUDA (a pool file on ext4 cannot be), so the GPU keeps the whole index
// in its memory (the mirror: probes and CAS arbitration as in mirror mode)
// and each launch that writes logs its pool stores (warp::PoolStore) to a
// StagedLog in GPU memory. The host copies the log back after the launch and
// applies it to the pool in the protocol's order (staged_apply.h), before the
// batch returns. A launch covers at most kStagedChunk operations or slots, so
// its log has a known bound: key words + value + slot word per put, one word
// per erase, key words + value + two slot words per move of a resize.
#include <algorithm>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/device_memory.h"
#include "tables/gphash/gpu/backend_impl.h"
#include "tables/gphash/gpu/staged_apply.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::CopyHostToDevice;

Status GpuBackend::Impl::AllocateStagedLog() {
  const uint64_t capacity = kStagedChunk * (key_size() / 8 + 3);
  const size_t bytes = capacity * sizeof(StagedStore);
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMalloc(&staged_entries_, bytes),
      Where() + ": cudaMalloc of the " + std::to_string(bytes) + "-byte log of staged mode");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&staged_log_, sizeof(StagedLog)),
                            Where() + ": cudaMalloc of the staged log header");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&staged_host_, bytes),
                            Where() + ": cudaMallocHost of the " + std::to_string(bytes) +
                                "-byte host copy of the staged log");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&staged_host_header_, sizeof(StagedLog)),
                            Where() + ": cudaMallocHost of the staged log header");
  StagedLog header{staged_entries_, capacity, 0};
  const Status copied = CopyHostToDevice(staged_log_, &header, sizeof(header));
  if (!copied.ok()) {
    return Status(copied.code(), Where() + ": the staged log header: " + copied.message());
  }
  staged_capacity_ = capacity;
  return Status::OK();
}

void GpuBackend::Impl::FreeStagedLog() {
  if (staged_entries_ != nullptr) cudaFree(staged_entries_);
  if (staged_log_ != nullptr) cudaFree(staged_log_);
  if (staged_host_ != nullptr) cudaFreeHost(staged_host_);
  if (staged_host_header_ != nullptr) cudaFreeHost(staged_host_header_);
  staged_entries_ = nullptr;
  staged_log_ = nullptr;
  staged_host_ = nullptr;
  staged_host_header_ = nullptr;
  staged_capacity_ = 0;
}

Status GpuBackend::Impl::DrainStagedLog(Workspace& ws, const char* what, bool in_order) {
  if (!staged_) return Status::OK();
  const std::string context = Where() + ": staged mode, " + what;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(staged_host_header_, staged_log_, sizeof(StagedLog),
                                            cudaMemcpyDeviceToHost, ws.stream()),
                            context + ": cudaMemcpyAsync of the log header");
  GPKV_RETURN_IF_ERROR(ws.Wait(what));
  const uint64_t logged = staged_host_header_->count;
  const uint64_t kept = std::min<uint64_t>(logged, staged_capacity_);
  if (kept != 0) {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(staged_host_, staged_entries_, kept * sizeof(StagedStore),
                        cudaMemcpyDeviceToHost, ws.stream()),
        context + ": cudaMemcpyAsync of the log");
  }
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(&staged_log_->count, 0, sizeof(staged_log_->count), ws.stream()),
      context + ": cudaMemsetAsync of the log count");
  GPKV_RETURN_IF_ERROR(ws.Wait(what));
  GPKV_RETURN_IF_ERROR(ApplyStagedStores(pool_, staged_host_, kept, context, in_order));
  if (logged == kept) return Status::OK();
  // The launch stored more than the log holds (only an erase batch can, and
  // only when its keys had more than key_words + 2 duplicate copies each on
  // average). The log's prefix is applied, in order; reload the GPU's copy
  // from the pool so the two agree again, and fail the batch.
  const gphash::LevelSet& level_set = snapshot_.level_set;
  for (uint32_t i = 0; i < level_set.level_count; ++i) {
    GPKV_RETURN_IF_ERROR(CopyLevelToMirror(ws, i, context + ": reloading from the pool"));
  }
  uint64_t live = 0;
  GPKV_RETURN_IF_ERROR(CountLiveKeys(ws, &live));
  live_keys_ = live;
  return Status::IOError(context + ": one launch logged " + std::to_string(logged) +
                         " pool stores, past the log's " + std::to_string(staged_capacity_) +
                         "; the first were applied (each operation whole or not at all, as "
                         "after a crash) and the GPU copy was reloaded from the pool; retry");
}

}  // namespace gpkv::gphash::gpu

// GpuBackend: the public calls and the batch paths (staging of host batches,
// the duplicate pass, the kernels, failed puts placed after a resize,
// durability). Open and recovery: open.cu; resize: resize.cu.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/device_memory.h"
#include "gpu/pointer_kind.h"
#include "tables/gphash/gpu/backend.h"
#include "tables/gphash/gpu/backend_impl.h"
#include "tables/gphash/root.h"
#include "tables/gphash/scan.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::ArenaPlan;
using gpkv::gpu::IsDeviceMemory;
using gpkv::gpu::PoolRegistration;

namespace {

bool Aligned8(const void* address) { return (reinterpret_cast<uintptr_t>(address) & 7) == 0; }

// Copies `bytes` from `source` (host or device) to the device address
// `target`, in stream order.
Status StageIn(void* target, const void* source, size_t bytes, cudaStream_t stream,
               const char* what) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(target, source, bytes, cudaMemcpyDefault, stream),
                            std::string("cudaMemcpyAsync of the batch ") + what);
  return Status::OK();
}

}  // namespace

// ---------------------------------------------------------------- public API

Status GpuBackend::DeviceUsable(int device) { return gpkv::gpu::DeviceUsable(device); }

Result<uint64_t> GpuBackend::Create(pm::Pool& pool, uint64_t table_id,
                                    const TableOptions& options) {
  return gphash::CreateTable(pool, table_id, options);
}

Result<std::unique_ptr<GpuBackend>> GpuBackend::Open(pm::Pool& pool, const std::string& table_name,
                                                     uint64_t root_offset,
                                                     const GpuTableOptions& options,
                                                     recovery::Report* report) {
  GPKV_RETURN_IF_ERROR(gpkv::gpu::DeviceUsable(options.device));
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(options.device), "cudaSetDevice");
  auto snapshot = ReadGphashRoot(pool, table_name, root_offset);
  if (!snapshot.ok()) return snapshot.status();
  // No registration: staged mode (asked for; kAuto past staged_min_index_bytes
  // when the mirror fits; kAuto on a pool the GPU cannot map).
  bool staged = options.index_mode == GpuIndexMode::kStaged;
  if (options.index_mode == GpuIndexMode::kAuto && options.staged_min_index_bytes != 0 &&
      IndexBytes(*snapshot) > options.staged_min_index_bytes) {
    GPKV_RETURN_IF_ERROR(MirrorFits(IndexBytes(*snapshot), options, &staged));
  }
  std::unique_ptr<PoolRegistration> registration;
  if (!staged) {
    auto acquired = PoolRegistration::Acquire(pool);
    if (acquired.ok()) {
      registration = std::move(acquired.value());
    } else if (!acquired.status().IsUnsupported() || options.index_mode != GpuIndexMode::kAuto) {
      return acquired.status();
    }
  }
  auto impl =
      std::make_unique<Impl>(pool, table_name, options, std::move(registration), snapshot.value());
  GPKV_RETURN_IF_ERROR(impl->Initialize(report));
  if (impl->value_cells()) GPKV_RETURN_IF_ERROR(impl->LoadCellHeap());
  return std::unique_ptr<GpuBackend>(new GpuBackend(std::move(impl)));
}

GpuBackend::GpuBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuBackend::~GpuBackend() = default;

Status GpuBackend::Put(const uint8_t* keys, const uint8_t* values, size_t count,
                       void* order_after) {
  cudaStream_t after = static_cast<cudaStream_t>(order_after);
  if (impl_->value_cells()) return impl_->CellPut(keys, values, count, after);
  return impl_->Put(keys, values, count, nullptr, /*wait=*/true, after);
}
Status GpuBackend::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                       void* order_after) {
  cudaStream_t after = static_cast<cudaStream_t>(order_after);
  if (impl_->value_cells()) return impl_->CellGet(keys, values, found, count, after);
  return impl_->Get(keys, values, found, count, nullptr, /*wait=*/true, after);
}
Status GpuBackend::Erase(const uint8_t* keys, uint8_t* erased, size_t count, void* order_after) {
  cudaStream_t after = static_cast<cudaStream_t>(order_after);
  if (impl_->value_cells()) return impl_->CellErase(keys, erased, count, after);
  return impl_->Erase(keys, erased, count, nullptr, /*wait=*/true, after);
}
Status GpuBackend::PutAsync(const uint8_t* keys, const uint8_t* values, size_t count,
                            void* stream) {
  if (stream == nullptr) return Status::InvalidArgument("PutAsync needs a stream");
  if (count > kMaxChunkOps) return Put(keys, values, count, stream);
  cudaStream_t queue = static_cast<cudaStream_t>(stream);
  if (impl_->value_cells()) return impl_->CellPut(keys, values, count, queue);
  return impl_->Put(keys, values, count, queue, /*wait=*/false);
}
Status GpuBackend::GetAsync(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                            void* stream) {
  if (stream == nullptr) return Status::InvalidArgument("GetAsync needs a stream");
  if (count > kMaxChunkOps) return Get(keys, values, found, count, stream);
  cudaStream_t queue = static_cast<cudaStream_t>(stream);
  if (impl_->value_cells()) return impl_->CellGet(keys, values, found, count, queue);
  return impl_->Get(keys, values, found, count, queue, /*wait=*/false);
}
Status GpuBackend::EraseAsync(const uint8_t* keys, uint8_t* erased, size_t count, void* stream) {
  if (stream == nullptr) return Status::InvalidArgument("EraseAsync needs a stream");
  if (count > kMaxChunkOps) return Erase(keys, erased, count, stream);
  cudaStream_t queue = static_cast<cudaStream_t>(stream);
  if (impl_->value_cells()) return impl_->CellErase(keys, erased, count, queue);
  return impl_->Erase(keys, erased, count, queue, /*wait=*/false);
}
Status GpuBackend::Synchronize(void* stream) {
  return impl_->Synchronize(static_cast<cudaStream_t>(stream));
}
Status GpuBackend::SynchronizeAll() {
  std::vector<cudaStream_t> streams;
  {
    std::lock_guard<std::mutex> lock(impl_->workspaces_mutex_);
    for (const auto& [stream, workspace] : impl_->stream_workspaces_) streams.push_back(stream);
  }
  Status first = Status::OK();
  for (cudaStream_t stream : streams) {
    Status status = impl_->Synchronize(stream);
    if (first.ok() && !status.ok()) first = status;
  }
  return first;
}
Status GpuBackend::ForgetStream(CUstream_st* stream) { return impl_->ForgetStream(stream); }
Status GpuBackend::Scan(const Table::ScanVisitor& visit) const { return impl_->Scan(visit); }
gphash::Stats GpuBackend::Stats() const {
  gphash::Stats stats = impl_->Stats();
  stats.cache = bkt_cache_stats();
  return stats;
}
uint32_t GpuBackend::key_size() const { return impl_->key_size(); }
uint32_t GpuBackend::value_size() const { return impl_->value_size(); }
bool GpuBackend::mirrored() const { return impl_->mirrored(); }
bool GpuBackend::staged() const { return impl_->staged(); }
const char* GpuBackend::mode() const {
  if (impl_->staged()) return "staged";
  return impl_->mirrored() ? "mirror" : "direct";
}
const GpuTableOptions& GpuBackend::options() const { return impl_->options_; }
BktCacheStats GpuBackend::bkt_cache_stats() const {
  std::shared_lock<std::shared_mutex> view_lock(impl_->view_mutex_);
  return impl_->bkt_cache_ != nullptr ? impl_->bkt_cache_->stats() : BktCacheStats();
}

// ---------------------------------------------------------------- helpers

Status MirrorFits(uint64_t index_bytes, const GpuTableOptions& options, bool* fits) {
  size_t free_bytes = 0, total_bytes = 0;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  *fits = 2.0 * static_cast<double>(index_bytes) <=
          options.mirror_memory_fraction * static_cast<double>(free_bytes);
  return Status::OK();
}

std::string GpuBackend::Impl::Where() const {
  return pool_.path() + ": table '" + table_name_ + "'";
}

Status GpuBackend::Impl::CheckWritable() const {
  if (pool_.read_only()) return Status::InvalidArgument(Where() + ": the pool is open read-only");
  return Status::OK();
}

Result<Workspace*> GpuBackend::Impl::AcquireWorkspace(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(workspaces_mutex_);
  if (stream == nullptr) {
    if (!free_workspaces_.empty()) {
      Workspace* workspace = free_workspaces_.back();
      free_workspaces_.pop_back();
      return workspace;
    }
    auto created = Workspace::Create(nullptr);
    if (!created.ok()) return created.status();
    own_workspaces_.push_back(std::move(created.value()));
    return own_workspaces_.back().get();
  }
  auto it = stream_workspaces_.find(stream);
  if (it != stream_workspaces_.end()) return it->second.get();
  auto created = Workspace::Create(stream);
  if (!created.ok()) return created.status();
  Workspace* workspace = created.value().get();
  stream_workspaces_[stream] = std::move(created.value());
  return workspace;
}

void GpuBackend::Impl::ReleaseWorkspace(Workspace* workspace, cudaStream_t stream) {
  if (stream != nullptr || workspace == nullptr) return;
  std::lock_guard<std::mutex> lock(workspaces_mutex_);
  free_workspaces_.push_back(workspace);
}

Status GpuBackend::Impl::BeginWrite(Workspace& workspace) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(workspace.stream(), last_write_, 0),
                            Where() + ": cudaStreamWaitEvent on the previous write batch");
  return Status::OK();
}

Status GpuBackend::Impl::EndWrite(Workspace& workspace) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(last_write_, workspace.stream()),
                            Where() + ": cudaEventRecord after a write batch");
  return Status::OK();
}

Status GpuBackend::Impl::CountForBktCache(uint64_t ops, bool write_locked) {
  if (!bkt_cache_active_) return Status::OK();
  // The first reload comes early, so that a new table's hot buckets are
  // cached soon.
  uint64_t due = options_.bkt_cache_reload_ops;
  if (bkt_cache_->reloads() == 0) due = std::min<uint64_t>(due, kFirstBktCacheReloadOps);
  if (ops_since_reload_.fetch_add(ops) + ops < due) return Status::OK();
  // The reload's eviction and loading are ordered between write batches
  // (last_write_), which needs the write lock; gets do not wait for it.
  std::unique_lock<std::mutex> write_lock(write_mutex_, std::defer_lock);
  if (!write_locked && !write_lock.try_lock()) return Status::OK();
  std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
  if (!bkt_cache_active_ || bkt_cache_->Reloading()) return Status::OK();
  ops_since_reload_ = 0;
  return bkt_cache_->Reload(view_, last_write_);
}

// ---------------------------------------------------------------- writes

template <typename RunChunk, typename RunPipelined>
Status GpuBackend::Impl::WriteBatch(size_t count, cudaStream_t stream, bool wait,
                                    cudaStream_t order_after, const RunChunk& run_chunk,
                                    const std::pair<bool, RunPipelined>& run_pipelined) {
  GPKV_RETURN_IF_ERROR(CheckWritable());
  if (count == 0) return Status::OK();
  if (!wait && count > kMaxChunkOps) {
    return Status::InvalidArgument(Where() + ": an Async batch holds at most " +
                                   std::to_string(kMaxChunkOps) + " operations");
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device), "cudaSetDevice");
  if (wait && stream == nullptr && !staged_ && run_pipelined.first) {
    // A waiting host batch on a workspace of its own (no pending write):
    // PipelinedWrite takes the write lock itself, a one-chunk batch after its
    // copy in and duplicate pass, so that those overlap the write before it.
    auto workspace = AcquireWorkspace(nullptr);
    if (!workspace.ok()) return workspace.status();
    Lease lease{this, *workspace, nullptr};
    if (order_after != nullptr) GPKV_RETURN_IF_ERROR((*workspace)->OrderAfter(order_after));
    GPKV_RETURN_IF_ERROR(run_pipelined.second(**workspace));
    GPKV_RETURN_IF_ERROR(CountForBktCache(count, /*write_locked=*/false));
    // The batch's kernels are complete: persisting outside the write lock
    // still covers them.
    return pool_.Sync();
  }
  std::lock_guard<std::mutex> write_lock(write_mutex_);
  auto workspace = AcquireWorkspace(stream);
  if (!workspace.ok()) return workspace.status();
  Lease lease{this, *workspace, stream};
  Workspace& ws = **workspace;
  if (order_after != nullptr) GPKV_RETURN_IF_ERROR(ws.OrderAfter(order_after));
  if (ws.pending().active) GPKV_RETURN_IF_ERROR(FinishPendingWrite(ws));
  // Staged mode drains its log in the call: it always waits.
  wait = wait || staged_;
  const size_t step = LaunchChunk(kMaxChunkOps);
  for (size_t done = 0; done < count; done += step) {
    GPKV_RETURN_IF_ERROR(run_chunk(ws, done, std::min(count - done, step), wait));
  }
  GPKV_RETURN_IF_ERROR(CountForBktCache(count, /*write_locked=*/true));
  return wait ? pool_.Sync() : Status::OK();
}

Status GpuBackend::Impl::Put(const uint8_t* keys, const uint8_t* values, size_t count,
                             cudaStream_t stream, bool wait, cudaStream_t order_after) {
  BatchKinds kinds;
  const bool pipelined =
      stream == nullptr && wait &&
      PipelinesHost(keys, count * key_size(), values, count * word_size(), nullptr, 0, &kinds);
  return WriteBatch(
      count, stream, wait, order_after,
      [&](Workspace& ws, size_t done, size_t chunk, bool wait_chunk) {
        return PutChunk(ws, keys + done * key_size(), values + done * word_size(), chunk,
                        wait_chunk);
      },
      std::make_pair(pipelined, [&](Workspace& ws) {
        return PipelinedWrite(ws, keys, values, nullptr, count, kinds);
      }));
}

Status GpuBackend::Impl::PutChunk(Workspace& ws, const uint8_t* keys, const uint8_t* values,
                                  size_t count, bool wait) {
  const bool stage_keys = !(IsDeviceMemory(keys, options_.device) && Aligned8(keys));
  const bool stage_values = !IsDeviceMemory(values, options_.device);
  ArenaPlan plan;
  size_t keys_at = stage_keys ? plan.Take(count * key_size()) : 0;
  size_t values_at = stage_values ? plan.Take(count * word_size()) : 0;
  size_t keep_at = plan.Take(count);
  size_t failed_at = plan.Take(count * sizeof(uint32_t));
  size_t spare_at = plan.Take(count * sizeof(uint32_t));
  SortPlan sort;
  GPKV_RETURN_IF_ERROR(PlanSort(plan, count, /*with_leaders=*/false, &sort));
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  const uint8_t* device_keys = stage_keys ? arena + keys_at : keys;
  const uint8_t* device_values = stage_values ? arena + values_at : values;
  if (stage_keys) {
    GPKV_RETURN_IF_ERROR(StageIn(arena + keys_at, keys, count * key_size(), ws.stream(), "keys"));
  }
  if (stage_values) {
    GPKV_RETURN_IF_ERROR(
        StageIn(arena + values_at, values, count * word_size(), ws.stream(), "values"));
  }
  uint8_t* keep = arena + keep_at;
  auto* failed = reinterpret_cast<uint32_t*>(arena + failed_at);
  {
    std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
    GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
    GPKV_RETURN_IF_ERROR(BeginWrite(ws));
    // Sorted by bucket, the last put of each key kept; run in sorted order.
    DedupeScratch scratch = SortScratchAt(arena, sort);
    GPKV_RETURN_IF_ERROR(LaunchMarkSurvivors(view_, device_keys, count, scratch,
                                             /*keep_first=*/false, keep, ws.stream()));
    GPKV_RETURN_IF_ERROR(LaunchPut(view_, device_keys, device_values, keep, scratch.indices_out,
                                   count, failed, ws.device_counters(), ws.stream()));
    GPKV_RETURN_IF_ERROR(EndWrite(ws));
    GPKV_RETURN_IF_ERROR(ws.FetchCounters());
    if (wait) GPKV_RETURN_IF_ERROR(ws.Wait("put batch"));
  }
  PendingWrite& pending = ws.pending();
  pending.active = true;
  pending.is_put = true;
  pending.keys = device_keys;
  pending.values = device_values;
  pending.failed = failed;
  pending.spare = reinterpret_cast<uint32_t*>(arena + spare_at);
  pending.arena_end = plan.bytes();
  return wait ? FinishPendingWrite(ws) : Status::OK();
}

Status GpuBackend::Impl::Kick(Workspace& ws, const uint8_t* keys, const uint32_t* ops,
                              uint64_t count, bool* made_room) {
  // A kick moves keys between buckets: no get may run meanwhile (a tile get
  // stops at the first bucket that holds the key; see warp::TileGet).
  std::unique_lock<std::shared_mutex> view_lock(view_mutex_);
  GPKV_RETURN_IF_ERROR(WaitAllStreams());
  GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
  GPKV_RETURN_IF_ERROR(BeginWrite(ws));
  GPKV_RETURN_IF_ERROR(LaunchKick(view_, keys, ops, count, ws.device_counters(), ws.stream()));
  GPKV_RETURN_IF_ERROR(EndWrite(ws));
  GPKV_RETURN_IF_ERROR(ws.FetchCounters());
  GPKV_RETURN_IF_ERROR(ws.Wait("kicks"));
  GPKV_RETURN_IF_ERROR(DrainStagedLog(ws, "kicks", /*in_order=*/true));
  *made_room = ws.host_counters().kicked != 0;
  return Status::OK();
}

Status GpuBackend::Impl::FinishPendingWrite(Workspace& ws) {
  PendingWrite pending = ws.pending();
  ws.pending() = PendingWrite();
  if (!pending.active) return Status::OK();
  GPKV_RETURN_IF_ERROR(ws.Wait("write batch"));
  GPKV_RETURN_IF_ERROR(DrainStagedLog(ws, "write batch"));
  BatchCounters counters = ws.host_counters();
  if (!pending.is_put) {
    live_keys_ -= counters.erased;
    return Status::OK();
  }
  live_keys_ += counters.inserted;
  // The puts that found no free slot, as gphash::Core::PlaceFailedPuts places
  // them: kicks (one warp) and resizes between relaunches of just those puts.
  class FailedPuts final : public gphash::PlacementSteps {
   public:
    FailedPuts(Impl& table, Workspace& ws, const PendingWrite& pending, uint64_t failed)
        : table_(table),
          ws_(ws),
          pending_(pending),
          ops_(pending.failed),
          spare_(pending.spare),
          failed_(failed) {}
    Result<bool> Kick() override {
      bool made_room = false;
      GPKV_RETURN_IF_ERROR(table_.Kick(ws_, pending_.keys, ops_, failed_, &made_room));
      return made_room;
    }
    Status Resize() override { return table_.Resize(); }
    Result<uint64_t> Retry() override {
      std::shared_lock<std::shared_mutex> view_lock(table_.view_mutex_);
      GPKV_RETURN_IF_ERROR(ws_.ZeroCounters());
      GPKV_RETURN_IF_ERROR(table_.BeginWrite(ws_));
      GPKV_RETURN_IF_ERROR(LaunchPut(table_.view_, pending_.keys, pending_.values, nullptr, ops_,
                                     failed_, spare_, ws_.device_counters(), ws_.stream()));
      GPKV_RETURN_IF_ERROR(table_.EndWrite(ws_));
      GPKV_RETURN_IF_ERROR(ws_.FetchCounters());
      GPKV_RETURN_IF_ERROR(ws_.Wait("put batch after a resize"));
      GPKV_RETURN_IF_ERROR(table_.DrainStagedLog(ws_, "put batch after a resize"));
      table_.live_keys_ += ws_.host_counters().inserted;
      failed_ = ws_.host_counters().failed;
      std::swap(ops_, spare_);
      return failed_;
    }

   private:
    Impl& table_;
    Workspace& ws_;
    const PendingWrite& pending_;
    uint32_t* ops_;    // the failed puts' indices
    uint32_t* spare_;  // where a retry writes the indices of those failing again
    uint64_t failed_;
  };
  FailedPuts steps(*this, ws, pending, counters.failed);
  return core_.PlaceFailedPuts(counters.failed, steps);
}

Status GpuBackend::Impl::Erase(const uint8_t* keys, uint8_t* erased, size_t count,
                               cudaStream_t stream, bool wait, cudaStream_t order_after) {
  BatchKinds kinds;
  const bool pipelined = stream == nullptr && wait &&
                         PipelinesHost(keys, count * key_size(), erased,
                                       erased == nullptr ? 0 : count, nullptr, 0, &kinds);
  return WriteBatch(
      count, stream, wait, order_after,
      [&](Workspace& ws, size_t done, size_t chunk, bool wait_chunk) {
        return EraseChunk(ws, keys + done * key_size(), erased == nullptr ? nullptr : erased + done,
                          chunk, wait_chunk);
      },
      std::make_pair(pipelined, [&](Workspace& ws) {
        return PipelinedWrite(ws, keys, nullptr, erased, count, kinds);
      }));
}

Status GpuBackend::Impl::EraseChunk(Workspace& ws, const uint8_t* keys, uint8_t* erased,
                                    size_t count, bool wait) {
  const bool stage_keys = !(IsDeviceMemory(keys, options_.device) && Aligned8(keys));
  const bool stage_erased = erased != nullptr && !IsDeviceMemory(erased, options_.device);
  ArenaPlan plan;
  size_t keys_at = stage_keys ? plan.Take(count * key_size()) : 0;
  size_t erased_at = stage_erased ? plan.Take(count) : 0;
  size_t keep_at = plan.Take(count);
  SortPlan sort;
  GPKV_RETURN_IF_ERROR(PlanSort(plan, count, /*with_leaders=*/false, &sort));
  GPKV_RETURN_IF_ERROR(ws.Reserve(plan.bytes()));
  uint8_t* arena = ws.arena();
  const uint8_t* device_keys = stage_keys ? arena + keys_at : keys;
  uint8_t* device_erased = stage_erased ? arena + erased_at : erased;
  if (stage_keys) {
    GPKV_RETURN_IF_ERROR(StageIn(arena + keys_at, keys, count * key_size(), ws.stream(), "keys"));
  }
  {
    std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
    GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
    GPKV_RETURN_IF_ERROR(BeginWrite(ws));
    // Sorted by bucket, the first erase of each key kept; run in sorted order.
    DedupeScratch scratch = SortScratchAt(arena, sort);
    GPKV_RETURN_IF_ERROR(LaunchMarkSurvivors(view_, device_keys, count, scratch,
                                             /*keep_first=*/true, arena + keep_at, ws.stream()));
    GPKV_RETURN_IF_ERROR(LaunchErase(view_, device_keys, arena + keep_at, scratch.indices_out,
                                     device_erased, count, ws.device_counters(), ws.stream()));
    GPKV_RETURN_IF_ERROR(EndWrite(ws));
    GPKV_RETURN_IF_ERROR(ws.FetchCounters());
    if (stage_erased) {
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(erased, device_erased, count, cudaMemcpyDefault, ws.stream()),
          Where() + ": cudaMemcpyAsync of the erased flags");
    }
    if (wait) GPKV_RETURN_IF_ERROR(ws.Wait("erase batch"));
  }
  PendingWrite& pending = ws.pending();
  pending.active = true;
  pending.is_put = false;
  pending.arena_end = plan.bytes();
  return wait ? FinishPendingWrite(ws) : Status::OK();
}

// ---------------------------------------------------------------- reads

Status GpuBackend::Impl::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count,
                             cudaStream_t stream, bool wait, cudaStream_t order_after) {
  if (count == 0) return Status::OK();
  if (!wait && count > kMaxChunkOps) {
    return Status::InvalidArgument(Where() + ": an Async batch holds at most " +
                                   std::to_string(kMaxChunkOps) + " operations");
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device), "cudaSetDevice");
  auto workspace = AcquireWorkspace(stream);
  if (!workspace.ok()) return workspace.status();
  Lease lease{this, *workspace, stream};
  if (order_after != nullptr) GPKV_RETURN_IF_ERROR((*workspace)->OrderAfter(order_after));
  BatchKinds kinds;
  if (wait && stream == nullptr &&
      PipelinesHost(keys, count * key_size(), values, count * word_size(), found,
                    found == nullptr ? 0 : count, &kinds)) {
    GPKV_RETURN_IF_ERROR(PipelinedGet(**workspace, keys, values, found, count, kinds));
    return CountForBktCache(count, /*write_locked=*/false);
  }
  for (size_t done = 0; done < count; done += kMaxChunkOps) {
    size_t chunk = std::min(count - done, kMaxChunkOps);
    GPKV_RETURN_IF_ERROR(GetChunk(**workspace, keys + done * key_size(),
                                  values + done * word_size(),
                                  found == nullptr ? nullptr : found + done, chunk, wait));
  }
  return CountForBktCache(count, /*write_locked=*/false);
}

Status GpuBackend::Impl::GetChunk(Workspace& ws, const uint8_t* keys, uint8_t* values,
                                  uint8_t* found, size_t count, bool wait) {
  const bool stage_keys = !(IsDeviceMemory(keys, options_.device) && Aligned8(keys));
  const bool stage_values = !IsDeviceMemory(values, options_.device);
  const bool stage_found = found != nullptr && !IsDeviceMemory(found, options_.device);
  // Direct mode sorts a large batch by bucket and reads each distinct key
  // once (LaunchGetSorted); in mirror mode, and for small batches, the
  // unsorted kernel is faster. (Either kernel answers right on either view,
  // should a resize drop the mirror.)
  bool sorted;
  {
    std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
    const bool warm_cache = bkt_cache_active_ && bkt_cache_->reloads() != 0;
    sorted = !view_.mirrored && (count >= options_.sorted_get_min_ops || !warm_cache);
  }
  size_t keys_at = 0, values_at = 0, found_at = 0;
  SortPlan sort;
  auto plan_from = [&](size_t start, size_t* end) -> Status {
    ArenaPlan plan(start);
    keys_at = stage_keys ? plan.Take(count * key_size()) : 0;
    values_at = stage_values ? plan.Take(count * word_size()) : 0;
    found_at = stage_found ? plan.Take(count) : 0;
    if (sorted) GPKV_RETURN_IF_ERROR(PlanSort(plan, count, /*with_leaders=*/true, &sort));
    *end = plan.bytes();
    return Status::OK();
  };
  // An outstanding write batch of this stream keeps its scratch: plan after it.
  size_t start = ws.pending().active ? ws.pending().arena_end : 0;
  size_t end = 0;
  GPKV_RETURN_IF_ERROR(plan_from(start, &end));
  if (start != 0 && end > ws.arena_bytes()) {
    std::lock_guard<std::mutex> write_lock(write_mutex_);
    GPKV_RETURN_IF_ERROR(FinishPendingWrite(ws));
    GPKV_RETURN_IF_ERROR(pool_.Sync());
    GPKV_RETURN_IF_ERROR(plan_from(0, &end));
  }
  GPKV_RETURN_IF_ERROR(ws.Reserve(end));
  uint8_t* arena = ws.arena();
  const uint8_t* device_keys = stage_keys ? arena + keys_at : keys;
  uint8_t* device_values = stage_values ? arena + values_at : values;
  uint8_t* device_found = stage_found ? arena + found_at : found;
  if (stage_keys) {
    GPKV_RETURN_IF_ERROR(StageIn(arena + keys_at, keys, count * key_size(), ws.stream(), "keys"));
  }
  std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
  if (sorted) {
    GPKV_RETURN_IF_ERROR(LaunchGetSorted(view_, device_keys, device_values, device_found, count,
                                         SortScratchAt(arena, sort), ws.stream()));
  } else {
    GPKV_RETURN_IF_ERROR(
        LaunchGet(view_, device_keys, device_values, device_found, count, ws.stream()));
  }
  if (stage_values) {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(values, device_values, count * word_size(), cudaMemcpyDefault, ws.stream()),
        Where() + ": cudaMemcpyAsync of the values found");
  }
  if (stage_found) {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(found, device_found, count, cudaMemcpyDefault, ws.stream()),
        Where() + ": cudaMemcpyAsync of the found flags");
  }
  if (wait) GPKV_RETURN_IF_ERROR(ws.Wait("get batch"));
  return Status::OK();
}

Status GpuBackend::Impl::Synchronize(cudaStream_t stream) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device), "cudaSetDevice");
  Workspace* ws = nullptr;
  {
    std::lock_guard<std::mutex> lock(workspaces_mutex_);
    auto it = stream_workspaces_.find(stream);
    if (it != stream_workspaces_.end()) ws = it->second.get();
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), Where() + ": cudaStreamSynchronize");
  if (ws == nullptr || !ws->pending().active) return Status::OK();
  std::lock_guard<std::mutex> write_lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(FinishPendingWrite(*ws));
  return pool_.Sync();
}

Status GpuBackend::Impl::ForgetStream(cudaStream_t stream) {
  GPKV_RETURN_IF_ERROR(Synchronize(stream));
  std::unique_ptr<Workspace> forgotten;
  {
    std::lock_guard<std::mutex> lock(workspaces_mutex_);
    auto it = stream_workspaces_.find(stream);
    if (it == stream_workspaces_.end()) return Status::OK();
    forgotten = std::move(it->second);
    stream_workspaces_.erase(it);
  }
  return Status::OK();  // ~Workspace frees its arena
}

// ---------------------------------------------------------------- host reads

// The shared host scan (tables/gphash/scan.h), so both backends visit the
// same pairs: under the view lock (no resize meanwhile) and, for value
// cells, an epoch (no cell reused meanwhile).
Status GpuBackend::Impl::Scan(const Table::ScanVisitor& visit) const {
  std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
  std::optional<EpochGuard> epoch_guard;
  if (value_cells()) epoch_guard.emplace(epoch_);
  return gphash::ScanLivePairs(pool_, snapshot_.root_offset, snapshot_.level_set, visit);
}

gphash::Stats GpuBackend::Impl::Stats() const {
  std::shared_lock<std::shared_mutex> view_lock(view_mutex_);
  gphash::Stats stats;
  const gphash::LevelSet& level_set = snapshot_.level_set;
  stats.keys = live_keys_.load();
  for (uint32_t level = 0; level < level_set.level_count; ++level) {
    stats.slots += level_set.levels[level].bucket_count * snapshot_.slots_per_bucket;
    stats.index_bytes += level_set.levels[level].bucket_count * snapshot_.bucket_bytes;
  }
  stats.load_factor =
      stats.slots == 0 ? 0.0 : static_cast<double>(stats.keys) / static_cast<double>(stats.slots);
  stats.levels = level_set.level_count;
  stats.top_buckets = level_set.levels[0].bucket_count;
  stats.resizes = pool_.At<gphash::GphashRoot>(snapshot_.root_offset)->resizes;
  stats.value_bytes = heap_ != nullptr ? heap_->bytes() : 0;
  stats.resizing = (level_set.flags & gphash::kLevelSetResizing) != 0;
  return stats;
}

}  // namespace gpkv::gphash::gpu

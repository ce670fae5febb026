// GpuBackend::Impl: construction, the choice and build of the HBM mirror, the
// device view, and open-time recovery's slot pass run by kernels (census of
// slot states, INSERT slots cleared, duplicates resolved); gphash::Core then
// decides the rest (NeedsRecovery on a read-only pool, an interrupted resize
// finished, the pool synced).
// Without a registration (staged mode) the mirror is required and recovery's
// pool stores go through the staged log (staged.cu).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "gpu/cuda_check.h"
#include "tables/gphash/gpu/backend_impl.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::PoolRegistration;

namespace {

std::string Hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, value);
  return text;
}

}  // namespace

GpuBackend::Impl::Impl(pm::Pool& pool, std::string table_name, const GpuTableOptions& options,
                       std::unique_ptr<PoolRegistration> registration,
                       const GphashRootSnapshot& snapshot)
    : pool_(pool),
      table_name_(std::move(table_name)),
      options_(options),
      registration_(std::move(registration)),
      snapshot_(snapshot),
      staged_(registration_ == nullptr),
      core_(pool, table_name_, snapshot.root_offset, snapshot.table_id, snapshot.bucket_bytes,
            snapshot.level_set, *this) {}

GpuBackend::Impl::~Impl() {
  cudaSetDevice(options_.device);
  {
    // Finish outstanding Async write batches (best effort: no caller to tell).
    std::lock_guard<std::mutex> write_lock(write_mutex_);
    std::vector<Workspace*> pending;
    {
      std::lock_guard<std::mutex> lock(workspaces_mutex_);
      for (auto& [stream, workspace] : stream_workspaces_) {
        if (workspace->pending().active) pending.push_back(workspace.get());
      }
    }
    for (Workspace* workspace : pending) FinishPendingWrite(*workspace).IgnoreError();
    if (!pending.empty() && !pool_.read_only()) pool_.Sync().IgnoreError();
  }
  WaitAllStreams().IgnoreError();
  stream_workspaces_.clear();
  free_workspaces_.clear();
  own_workspaces_.clear();
  DropMirror();
  FreeStagedLog();
  if (last_write_ != nullptr) cudaEventDestroy(last_write_);
}

Status GpuBackend::Impl::Initialize(recovery::Report* report) {
  if (!(options_.bkt_cache_fraction >= 0 && options_.bkt_cache_fraction <= 1)) {
    return Status::InvalidArgument(Where() + ": bkt_cache_fraction must be in [0, 1], not " +
                                   std::to_string(options_.bkt_cache_fraction));
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&last_write_, cudaEventDisableTiming),
                            Where() + ": cudaEventCreateWithFlags");
  auto workspace = AcquireWorkspace(nullptr);
  if (!workspace.ok()) return workspace.status();
  Lease lease{this, *workspace, nullptr};
  if (staged_) {
    // The GPU cannot read the pool: it needs the whole index in its memory.
    Status built = BuildMirror(**workspace);
    if (built.code() == Code::kOutOfDeviceMemory) {
      DropMirror();
      return Status::OutOfDeviceMemory(
          Where() + ": staged mode (the pool cannot be mapped by the GPU) needs the " +
          std::to_string(IndexBytes(snapshot_)) + "-byte index in GPU memory: " + built.message());
    }
    GPKV_RETURN_IF_ERROR(built);
    GPKV_RETURN_IF_ERROR(AllocateStagedLog());
    BuildView();
    return Recover(**workspace, report);
  }
  GPKV_RETURN_IF_ERROR(ChooseMirror(&use_mirror_));
  if (use_mirror_) {
    Status built = BuildMirror(**workspace);
    if (built.code() == Code::kOutOfDeviceMemory && options_.index_mode == GpuIndexMode::kAuto) {
      DropMirror();  // did not fit after all: run direct
    } else {
      GPKV_RETURN_IF_ERROR(built);
    }
  }
  const uint64_t index_bytes = IndexBytes(snapshot_);
  if (!use_mirror_ && options_.index_mode == GpuIndexMode::kAuto &&
      options_.direct_max_index_bytes != 0 && index_bytes > options_.direct_max_index_bytes) {
    return Status::Unsupported(
        Where() + ": the " + std::to_string(index_bytes >> 20) +
        " MiB index does not fit in GPU memory for mirror mode, and direct mode past " +
        std::to_string(options_.direct_max_index_bytes >> 20) +
        " MiB runs at the link's random-access rate beyond its translation cliff (slower than "
        "the CPU backend; GpuTableOptions::direct_max_index_bytes)");
  }
  BuildView();
  GPKV_RETURN_IF_ERROR(Recover(**workspace, report));
  return SetUpBktCache();
}

Status GpuBackend::Impl::SetUpBktCache() {
  bkt_cache_active_ = false;
  if (use_mirror_ || staged_ || options_.bkt_cache_fraction <= 0) {
    bkt_cache_.reset();
    BuildView();
    return Status::OK();
  }
  BuildView();  // without the cache: its shape follows the levels
  auto shape = [&]() -> Status {
    if (bkt_cache_ == nullptr) {
      auto created = BktCache::Create(Where());
      if (!created.ok()) return created.status();
      bkt_cache_ = std::move(created.value());
    }
    return bkt_cache_->Shape(view_, options_.bkt_cache_fraction);
  };
  const Status shaped = shape();
  if (!shaped.ok()) {
    bkt_cache_.reset();
    // The cache is an accelerator: without its memory, run without it.
    if (shaped.code() != Code::kOutOfDeviceMemory && !shaped.IsUnsupported()) return shaped;
    return Status::OK();
  }
  bkt_cache_active_ = true;
  ops_since_reload_ = 0;
  BuildView();
  return Status::OK();
}

Status GpuBackend::Impl::ChooseMirror(bool* mirror) const {
  *mirror = false;
  if (options_.index_mode == GpuIndexMode::kDirect) return Status::OK();
  if (options_.index_mode == GpuIndexMode::kMirror) {
    *mirror = true;
    return Status::OK();
  }
  return MirrorFits(IndexBytes(snapshot_), options_, mirror);
}

Status GpuBackend::Impl::BuildMirror(Workspace& ws) {
  const gphash::LevelSet& level_set = snapshot_.level_set;
  for (uint32_t i = 0; i < level_set.level_count; ++i) {
    uint64_t bytes = level_set.levels[i].bucket_count * snapshot_.bucket_bytes;
    void* copy = nullptr;
    GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&copy, bytes),
                              Where() + ": cudaMalloc of a " + std::to_string(bytes) +
                                  "-byte mirror of level " + std::to_string(i));
    use_mirror_ = true;
    mirror_levels_.push_back(static_cast<uint8_t*>(copy));
    GPKV_RETURN_IF_ERROR(CopyLevelToMirror(ws, i, Where()));
  }
  return ws.Wait("building the mirror");
}

Status GpuBackend::Impl::CopyLevelToMirror(Workspace& ws, uint32_t level,
                                           const std::string& context) {
  const gphash::LevelDesc& desc = snapshot_.level_set.levels[level];
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(mirror_levels_[level], pool_.base() + desc.offset,
                      desc.bucket_count * snapshot_.bucket_bytes, cudaMemcpyHostToDevice,
                      ws.stream()),
      context + ": cudaMemcpyAsync of level " + std::to_string(level) + " to its mirror");
  return LaunchToMirrorLayout(mirror_levels_[level], desc.bucket_count, snapshot_.slots_per_bucket,
                              snapshot_.key_size, snapshot_.bucket_bytes, ws.stream());
}

void GpuBackend::Impl::DropMirror() {
  for (uint8_t* level : mirror_levels_) cudaFree(level);
  mirror_levels_.clear();
  use_mirror_ = false;
}

void GpuBackend::Impl::BuildView() {
  const gphash::LevelSet& level_set = snapshot_.level_set;
  GphashDeviceView view{};
  view.level_count = level_set.level_count;
  view.hash_locations = snapshot_.hash_locations;
  view.slots_per_bucket = snapshot_.slots_per_bucket;
  view.key_size = snapshot_.key_size;
  view.value_size = word_size();
  view.bucket_bytes = snapshot_.bucket_bytes;
  view.hash_seed = snapshot_.hash_seed;
  view.mirrored = use_mirror_;
  view.thread_puts = use_mirror_ && !options_.warp_puts;
  view.index_gets = use_mirror_ && !options_.tile_index_gets;
  view.staged_log = staged_ ? staged_log_ : nullptr;
  SetIndexLayout(view);
  if (bkt_cache_active_) view.cache = bkt_cache_->view();
  for (uint32_t i = 0; i < level_set.level_count; ++i) {
    view.pool_levels[i] =
        staged_ ? nullptr : registration_->device_base() + level_set.levels[i].offset;
    view.index_levels[i] = use_mirror_ ? mirror_levels_[i] : view.pool_levels[i];
    view.bucket_counts[i] = level_set.levels[i].bucket_count;
    view.pool_offsets[i] = level_set.levels[i].offset;
  }
  view_ = view;
}

Status GpuBackend::Impl::CountLiveKeys(Workspace& ws, uint64_t* live) {
  GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
  for (uint32_t i = 0; i < view_.level_count; ++i) {
    GPKV_RETURN_IF_ERROR(LaunchCountSlots(view_, i, snapshot_.level_set.levels[i].offset,
                                          ws.device_counters(), ws.stream()));
  }
  GPKV_RETURN_IF_ERROR(ws.FetchCounters());
  GPKV_RETURN_IF_ERROR(ws.Wait("counting slots"));
  const BatchCounters& counters = ws.host_counters();
  if (counters.invalid != 0) {
    return Status::Corruption(
        TableWhere(pool_, table_name_, "slot word", counters.first_invalid_offset) + ": " +
        std::to_string(counters.invalid) + " slot words have an unknown state (first at " +
        Hex(counters.first_invalid_offset) + "); run `gpkv repair`");
  }
  *live = counters.valid;
  return Status::OK();
}

Status GpuBackend::Impl::Recover(Workspace& ws, recovery::Report* report) {
  const bool dry_run = pool_.read_only();
  uint64_t live = 0;
  GPKV_RETURN_IF_ERROR(CountLiveKeys(ws, &live));

  GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
  // Each level in launches of LaunchChunk slots (staged mode drains its log
  // after each).
  auto each_range = [&](auto launch) -> Status {
    for (uint32_t i = 0; i < view_.level_count; ++i) {
      const uint64_t slots = view_.bucket_counts[i] * view_.slots_per_bucket;
      const uint64_t step = LaunchChunk(slots);
      for (uint64_t first = 0; first < slots; first += step) {
        GPKV_RETURN_IF_ERROR(launch(i, SlotRange{first, std::min(slots, first + step)}));
        GPKV_RETURN_IF_ERROR(DrainStagedLog(ws, "open-time recovery"));
      }
    }
    return Status::OK();
  };
  GPKV_RETURN_IF_ERROR(each_range([&](uint32_t level, SlotRange range) {
    return LaunchClearReserved(view_, level, range, dry_run, ws.device_counters(), ws.stream());
  }));
  GPKV_RETURN_IF_ERROR(each_range([&](uint32_t level, SlotRange range) {
    return LaunchResolveDuplicates(view_, level, range, dry_run, ws.device_counters(), ws.stream());
  }));
  GPKV_RETURN_IF_ERROR(ws.FetchCounters());
  GPKV_RETURN_IF_ERROR(ws.Wait("open-time recovery"));
  const uint64_t cleared = ws.host_counters().reserved;
  const uint64_t duplicates = ws.host_counters().duplicates;
  GPKV_RETURN_IF_ERROR(core_.CheckRecoverable({cleared, duplicates}));
  if (dry_run) {
    live_keys_ = live;
    return Status::OK();
  }
  if (report != nullptr) {
    report->slots_cleared += cleared;
    report->duplicates_removed += duplicates;
    auto add = [&](const std::string& message) {
      report->findings.push_back({recovery::Finding::Severity::kRecoverable,
                                  "table '" + table_name_ + "'", snapshot_.root_offset,
                                  Where() + ": " + message});
    };
    if (cleared != 0) add(std::to_string(cleared) + " reserved (INSERT) slots cleared");
    if (duplicates != 0) {
      add(std::to_string(duplicates) + " duplicate slots erased (the winner rule kept one each)");
    }
  }
  {
    // An interrupted resize is finished, the pool synced.
    std::unique_lock<std::shared_mutex> view_lock(view_mutex_);
    growth_workspace_ = &ws;
    const Status completed = core_.CompleteRecovery(report);
    growth_workspace_ = nullptr;
    GPKV_RETURN_IF_ERROR(completed);
  }
  GPKV_RETURN_IF_ERROR(CountLiveKeys(ws, &live));
  live_keys_ = live;
  return Status::OK();
}

}  // namespace gpkv::gphash::gpu

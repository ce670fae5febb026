// GpuBackend's maintenance: flush (list compaction), growth by rehash,
// Reserve, SlabAlloc growth, and the host reads Scan and Stats.
#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_check.h"
#include "tables/slab_hash/gpu/backend.h"
#include "tables/slab_hash/gpu/backend_impl.h"

namespace gpkv::slab_hash::gpu {
namespace {

// Device bytes of the pairs a scan collects per launch (the bucket range is
// sized for them).
constexpr uint64_t kScanBytesPerLaunch = uint64_t{64} << 20;

bool IsOutOfDeviceMemory(const Status& status) { return status.code() == Code::kOutOfDeviceMemory; }

}  // namespace

// ---------------------------------------------------------------- public calls

Status GpuBackend::Impl::Flush(cudaStream_t caller) {
  return WithWorkspace<std::unique_lock<std::shared_mutex>>(
      caller, [&](Workspace& ws) { return FlushLocked(ws); });
}

Status GpuBackend::Impl::Reserve(uint64_t keys, cudaStream_t caller) {
  return WithWorkspace<std::unique_lock<std::shared_mutex>>(
      caller, [&](Workspace& ws) { return ReserveLocked(ws, keys); });
}

// The whole scan holds the table shared: no write runs meanwhile, so every
// pair is visited once (the visitor must not write to this table).
Status GpuBackend::Impl::Scan(const Table::ScanVisitor& visit) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "slab hash: cudaSetDevice");
  std::shared_lock<std::shared_mutex> lock(table_mutex_);
  if (live_keys_ == 0) return Status::OK();
  auto workspace = AcquireWorkspace();
  if (!workspace.ok()) return workspace.status();
  Lease lease(this, *workspace);
  Workspace& ws = **workspace;
  const uint64_t key_words = geometry_.key_words;
  const uint64_t value_words = InlineValueWords(geometry_.value_size);
  const uint64_t pairs_per_launch = kScanBytesPerLaunch / ((key_words + value_words) * 8);
  const uint64_t range = std::max<uint64_t>(
      1, static_cast<uint64_t>(static_cast<double>(bucket_count_) * pairs_per_launch /
                               static_cast<double>(live_keys_)));
  uint64_t capacity = 2 * pairs_per_launch;
  std::vector<uint64_t> keys, values;
  for (uint64_t first = 0; first < bucket_count_;) {
    const uint64_t last = std::min(bucket_count_, first + range);
    uint64_t pairs = 0;
    while (true) {
      GPKV_RETURN_IF_ERROR(ws.Reserve(capacity * (key_words + value_words) * 8));
      auto* keys_out = reinterpret_cast<uint64_t*>(ws.arena());
      uint64_t* values_out = keys_out + capacity * key_words;
      GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
      GPKV_RETURN_IF_ERROR(LaunchScan(View(0), first, last, keys_out, values_out, capacity,
                                      ws.device_counters(), ws.stream()));
      GPKV_RETURN_IF_ERROR(ws.FetchCounters());
      GPKV_RETURN_IF_ERROR(ws.Wait("a scan"));
      pairs = ws.counters().pairs;
      if (pairs <= capacity) {
        keys.resize(pairs * key_words);
        values.resize(pairs * value_words);
        GPKV_CUDA_RETURN_IF_ERROR(
            cudaMemcpy(keys.data(), keys_out, keys.size() * 8, cudaMemcpyDeviceToHost),
            "slab hash: cudaMemcpy of scanned keys");
        GPKV_CUDA_RETURN_IF_ERROR(
            cudaMemcpy(values.data(), values_out, values.size() * 8, cudaMemcpyDeviceToHost),
            "slab hash: cudaMemcpy of scanned values");
        break;
      }
      capacity = pairs;  // the range held more than planned: again, with room
    }
    for (uint64_t p = 0; p < pairs; ++p) {
      if (!visit(reinterpret_cast<const uint8_t*>(&keys[p * key_words]),
                 reinterpret_cast<const uint8_t*>(&values[p * value_words]))) {
        return Status::OK();
      }
    }
    first = last;
  }
  return Status::OK();
}

// One launch over every bucket, straight into the caller's arrays: no
// chunks, no host copies (the caller sized them from the key count).
Status GpuBackend::Impl::ScanIntoDevice(uint64_t* keys, uint64_t* values, uint64_t capacity,
                                        uint64_t* pairs) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "slab hash: cudaSetDevice");
  std::shared_lock<std::shared_mutex> lock(table_mutex_);
  *pairs = 0;
  if (live_keys_ == 0) return Status::OK();
  auto workspace = AcquireWorkspace();
  if (!workspace.ok()) return workspace.status();
  Lease lease(this, *workspace);
  Workspace& ws = **workspace;
  GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
  GPKV_RETURN_IF_ERROR(LaunchScan(View(0), 0, bucket_count_, keys, values, capacity,
                                  ws.device_counters(), ws.stream()));
  GPKV_RETURN_IF_ERROR(ws.FetchCounters());
  GPKV_RETURN_IF_ERROR(ws.Wait("a scan into device memory"));
  *pairs = ws.counters().pairs;
  return Status::OK();
}

Result<slab_hash::Stats> GpuBackend::Impl::Stats() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "slab hash: cudaSetDevice");
  std::shared_lock<std::shared_mutex> lock(table_mutex_);
  auto workspace = AcquireWorkspace();
  if (!workspace.ok()) return workspace.status();
  Lease lease(this, *workspace);
  uint64_t in_use = 0;
  uint64_t alloc_bytes = 0;
  {
    std::lock_guard<std::mutex> alloc_lock(alloc_mutex_);
    auto counted = alloc_->CountInUse((*workspace)->stream());
    if (!counted.ok()) return counted.status();
    in_use = *counted;
    alloc_bytes = alloc_->device_bytes();
  }
  uint64_t scratch_bytes = 0;
  {
    std::lock_guard<std::mutex> workspaces_lock(workspaces_mutex_);
    for (const auto& held : workspaces_) scratch_bytes += held->bytes();
  }
  slab_hash::Stats stats;
  const uint64_t slots = geometry_.slots_per_slab;
  // Out-of-line values: one value slab per live key (erased ones were freed).
  const uint64_t value_slabs = geometry_.value_out_of_line ? live_keys_ : 0;
  const uint64_t chained = in_use > value_slabs ? in_use - value_slabs : 0;
  stats.keys = live_keys_;
  stats.buckets = bucket_count_;
  stats.slabs = bucket_count_ + in_use;
  stats.slots = (bucket_count_ + chained) * slots;
  stats.dead_slots = dead_slots_;
  stats.load_factor =
      stats.slots == 0 ? 0.0 : static_cast<double>(stats.keys) / static_cast<double>(stats.slots);
  const double slab_bytes = static_cast<double>(stats.slabs) * kSlabBytes;
  stats.memory_utilisation =
      static_cast<double>(stats.keys) * (options_.key_size + options_.value_size) / slab_bytes;
  stats.bytes = bucket_count_ * kSlabBytes + alloc_bytes + scratch_bytes;
  stats.super_blocks = alloc_->super_blocks();
  stats.rehashes = rehashes_;
  stats.rehash_seconds = rehash_seconds_;
  stats.flushes = flushes_;
  return stats;
}

// ---------------------------------------------------------------- maintenance

Status GpuBackend::Impl::MaybeMaintain(Workspace& ws) {
  if (NeedsFlush(dead_slots_, live_keys_, bucket_count_, geometry_.slots_per_slab))
    GPKV_RETURN_IF_ERROR(FlushLocked(ws));
  if (!NeedsRehash(live_keys_, bucket_count_, geometry_.slots_per_slab) ||
      live_keys_ < rehash_retry_keys_) {
    return Status::OK();
  }
  const Status rehashed =
      RehashLocked(ws, RehashBuckets(live_keys_, bucket_count_, geometry_.slots_per_slab));
  if (IsOutOfDeviceMemory(rehashed)) {
    // The table works on with longer lists; growing is tried again later.
    rehash_retry_keys_ = 2 * live_keys_;
    return Status::OK();
  }
  return rehashed;
}

Status GpuBackend::Impl::FlushLocked(Workspace& ws) {
  GPKV_RETURN_IF_ERROR(LaunchFlush(View(0), ws.stream()));
  GPKV_RETURN_IF_ERROR(ws.Wait("a flush"));
  dead_slots_ = 0;
  ++flushes_;
  return Status::OK();
}

Status GpuBackend::Impl::ReserveLocked(Workspace& ws, uint64_t keys) {
  const uint64_t wanted = BucketsFor(keys, geometry_.slots_per_slab);
  if (wanted <= bucket_count_) return Status::OK();
  if (live_keys_ != 0) return RehashLocked(ws, wanted);
  // Nothing to move: a new bucket array, the old lists' slabs freed.
  uint8_t* fresh = nullptr;
  GPKV_RETURN_IF_ERROR(AllocateBuckets(wanted, &fresh, ws.stream()));
  const Status freed = LaunchFreeChains(View(0), ws.stream());
  const Status waited = freed.ok() ? ws.Wait("a new bucket array") : freed;
  if (!waited.ok()) {
    cudaFree(fresh);
    return waited;
  }
  cudaFree(buckets_);
  buckets_ = fresh;
  bucket_count_ = wanted;
  dead_slots_ = 0;
  return Status::OK();
}

Status GpuBackend::Impl::RehashLocked(Workspace& ws, uint64_t buckets) {
  slabs_in_use_bound_ = kUnknownSlabs;  // the new lists take slabs, the old ones free theirs
  const cudaStream_t stream = ws.stream();
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(rehash_start_, stream),
                            "slab hash: cudaEventRecord before a rehash");
  uint8_t* fresh = nullptr;
  GPKV_RETURN_IF_ERROR(AllocateBuckets(buckets, &fresh, stream));
  const Status moved = MovePairs(ws, fresh, buckets);
  if (!moved.ok()) {
    ws.Wait("a failed rehash").IgnoreError();  // the error to report is `moved`
    cudaFree(fresh);
    return moved;
  }
  // Every pair moved: the old lists' chained slabs go back to SlabAlloc (the
  // value slabs moved with their pairs).
  GPKV_RETURN_IF_ERROR(LaunchFreeChains(View(0), stream));
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(rehash_stop_, stream),
                            "slab hash: cudaEventRecord after a rehash");
  GPKV_RETURN_IF_ERROR(ws.Wait("freeing the lists of a rehash"));
  cudaFree(buckets_);
  buckets_ = fresh;
  bucket_count_ = buckets;
  dead_slots_ = 0;  // only live pairs moved
  float milliseconds = 0;
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&milliseconds, rehash_start_, rehash_stop_),
                            "slab hash: cudaEventElapsedTime of a rehash");
  rehash_seconds_ += milliseconds / 1000.0;
  ++rehashes_;
  return Status::OK();
}

Status GpuBackend::Impl::MovePairs(Workspace& ws, uint8_t* fresh, uint64_t buckets) {
  const cudaStream_t stream = ws.stream();
  // Lists of about one slab in the new array: few chained slabs.
  const Status reserved =
      alloc_->Reserve(live_keys_ / geometry_.slots_per_slab / 4 + 256, kMaxSlabFill, stream);
  if (!reserved.ok() && !IsOutOfDeviceMemory(reserved)) return reserved;
  while (true) {
    alloc_view_ = alloc_->view();
    const DeviceView from = View(0);
    DeviceView to = from;
    to.buckets = fresh;
    to.bucket_count = buckets;
    GPKV_RETURN_IF_ERROR(ws.ZeroCounters());
    GPKV_RETURN_IF_ERROR(LaunchRehash(from, to, ws.device_counters(), stream));
    GPKV_RETURN_IF_ERROR(ws.FetchCounters());
    GPKV_RETURN_IF_ERROR(ws.Wait("a rehash"));
    if (ws.counters().failed == 0) return Status::OK();
    // SlabAlloc ran out: drop the partial copy, grow, start over.
    GPKV_RETURN_IF_ERROR(LaunchFreeChains(to, stream));
    GPKV_RETURN_IF_ERROR(LaunchInitBuckets(fresh, buckets, stream));
    GPKV_RETURN_IF_ERROR(ws.Wait("undoing a partial rehash"));
    GPKV_RETURN_IF_ERROR(GrowSlabs(live_keys_ / geometry_.slots_per_slab + 1024));
  }
}

Status GpuBackend::Impl::AllocateBuckets(uint64_t buckets, uint8_t** array, cudaStream_t stream) {
  const uint64_t bytes = buckets * kSlabBytes;
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMalloc(array, bytes),
      "slab hash: cudaMalloc of a bucket array of " + std::to_string(bytes) + " bytes");
  const Status initialised = LaunchInitBuckets(*array, buckets, stream);
  if (!initialised.ok()) {
    cudaFree(*array);
    *array = nullptr;
  }
  return initialised;
}

Status GpuBackend::Impl::GrowSlabs(uint64_t slabs) {
  constexpr uint64_t kSlabsPerSuperBlock =
      uint64_t{gpkv::gpu::kSlabsPerBlock} * gpkv::gpu::kBlocksPerSuperBlock;
  const uint64_t current = alloc_->super_blocks();
  // At least an eighth more, so that a growing table grows SlabAlloc rarely.
  uint64_t count =
      std::max<uint64_t>({(slabs + kSlabsPerSuperBlock - 1) / kSlabsPerSuperBlock, current / 8, 1});
  count = std::min<uint64_t>(count, gpkv::gpu::kMaxSuperBlocks - current);
  if (count == 0) {
    return Status::OutOfDeviceMemory("slab hash: SlabAlloc holds its most super blocks (" +
                                     std::to_string(current) + ")");
  }
  const Status grown = alloc_->Grow(static_cast<uint32_t>(count));
  if (IsOutOfDeviceMemory(grown) && count > 1) {
    GPKV_RETURN_IF_ERROR(alloc_->Grow(1));  // what still fits
  } else {
    GPKV_RETURN_IF_ERROR(grown);
  }
  alloc_view_ = alloc_->view();
  return Status::OK();
}

}  // namespace gpkv::slab_hash::gpu

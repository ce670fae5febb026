// gpu::BktCache: allocation, reset, and the reload kernels (snapshot and age
// the LFU counts, rank, evict, load). See bkt_cache.h for the protocol.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "gpu/device_fill.cuh"
#include "tables/gphash/gpu/bkt_cache.h"
#include "tables/gphash/gpu/kernel_common.cuh"

namespace gpkv::gphash::gpu {
namespace {

// The entries of counters_, and (kCounters) how many there are.
enum Counter : int { kCacheReads, kPoolReads, kLoaded, kFreePushed, kFreeTaken, kCounters };

// Counts are ranked on their low 16 bits (two radix passes): a count is
// clamped to this when snapshotted.
constexpr uint32_t kCountCeiling = 0xffff;
constexpr int kCountBits = 16;

__device__ __forceinline__ uint64_t ThreadIndex() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

template <typename T>
__device__ __forceinline__ T VolatileLoad(const T* address) {
  return *reinterpret_cast<const volatile T*>(address);
}
template <typename T>
__device__ __forceinline__ void VolatileStore(T* address, T value) {
  *reinterpret_cast<volatile T*>(address) = value;
}

// snapshot[i] = the rank key of bucket i: twice its count, plus one when it
// is cached (so a bucket enters only by out-counting one that is in: ties
// do not churn the cache), clamped; ids[i] = i. Then counts[i] loses half of
// what was snapshotted (gets counting meanwhile keep their increments).
__global__ void __launch_bounds__(kBlockThreads)
    SnapshotCountsKernel(uint32_t* counts, const uint32_t* slot_of, uint64_t buckets,
                         uint32_t* snapshot, uint32_t* ids) {
  const uint64_t i = ThreadIndex();
  if (i >= buckets) return;
  const uint32_t count = VolatileLoad(&counts[i]);
  const uint32_t cached = VolatileLoad(&slot_of[i]) != 0 ? 1 : 0;
  const uint32_t key = count < kCountCeiling / 2 ? 2 * count + cached : kCountCeiling;
  snapshot[i] = key;
  ids[i] = static_cast<uint32_t>(i);
  if (count != 0) atomicSub(&counts[i], count - count / 2);
}

// hot[id] = 1 for the `capacity` first ranked buckets that were read at all
// or are cached.
__global__ void __launch_bounds__(kBlockThreads)
    MarkHotKernel(const uint32_t* sorted_counts, const uint32_t* sorted_ids, uint64_t capacity,
                  uint8_t* hot) {
  const uint64_t i = ThreadIndex();
  if (i >= capacity || sorted_counts[i] == 0) return;
  hot[sorted_ids[i]] = 1;
}

// Frees every slot whose bucket is no longer hot (and every empty slot):
// unpublish F, then G, then wait for the gets that still read the slot.
__global__ void __launch_bounds__(kBlockThreads)
    EvictKernel(BktCacheView cache, const uint8_t* hot, uint32_t* free_slots,
                unsigned long long* counters) {
  const uint64_t slot = ThreadIndex();
  if (slot >= cache.capacity) return;
  const uint64_t id = VolatileLoad(&cache.bucket_of[slot]);
  if (id != kNoCachedBucket) {
    if (hot[id] != 0) return;  // stays
    VolatileStore(&cache.slot_of[id], 0u);
    VolatileStore(&cache.bucket_of[slot], kNoCachedBucket);
    __threadfence();
    while (VolatileLoad(&cache.refs[slot]) != 0) {
    }
  }
  const unsigned long long at = atomicAdd(&counters[kFreePushed], 1ull);
  free_slots[at] = static_cast<uint32_t>(slot);
}

// One warp per ranked position below `capacity`: a hot bucket not cached yet
// takes a free slot; the warp copies it from the pool, then publishes G and
// F. No writer runs meanwhile (Reload orders this after the last write).
__global__ void __launch_bounds__(kBlockThreads)
    LoadKernel(GphashDeviceView view, const uint32_t* sorted_counts, const uint32_t* sorted_ids,
               const uint32_t* free_slots, unsigned long long* counters) {
  const uint64_t position = ThreadIndex() / warp::kWarpSize;
  const uint32_t lane = warp::LaneId();
  const BktCacheView& cache = view.cache;
  if (position >= cache.capacity) return;  // warp-uniform
  uint64_t id = 0;
  long long slot = -1;
  if (lane == 0 && sorted_counts[position] != 0) {
    id = sorted_ids[position];
    if (VolatileLoad(&cache.slot_of[id]) == 0) {
      const unsigned long long taken = atomicAdd(&counters[kFreeTaken], 1ull);
      if (taken < VolatileLoad(&counters[kFreePushed])) slot = free_slots[taken];
    }
  }
  slot = __shfl_sync(warp::kFullMask, slot, 0);
  if (slot < 0) return;
  id = __shfl_sync(warp::kFullMask, id, 0);
  uint32_t level = 0;
  while (level + 1 < view.level_count && id >= cache.level_base[level + 1]) ++level;
  const uint64_t bucket = id - cache.level_base[level];
  const auto* source =
      reinterpret_cast<const uint64_t*>(view.index_levels[level] + bucket * view.bucket_bytes);
  auto* target = reinterpret_cast<uint64_t*>(cache.buckets + slot * view.bucket_bytes);
  for (uint32_t word = lane; word < view.bucket_bytes / 8; word += warp::kWarpSize) {
    target[word] = VolatileLoad(&source[word]);
  }
  __syncwarp();
  if (lane == 0) {
    __threadfence();
    VolatileStore(&cache.bucket_of[slot], id);
    __threadfence();
    VolatileStore(&cache.slot_of[id], static_cast<uint32_t>(slot + 1));
    atomicAdd(&counters[kLoaded], 1ull);
  }
}

template <typename T>
Status AllocateArray(T** out, uint64_t count, const std::string& what) {
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMalloc(reinterpret_cast<void**>(out), count * sizeof(T)),
      what + ": cudaMalloc of " + std::to_string(count * sizeof(T)) + " bytes for the BktCache");
  return Status::OK();
}

template <typename T>
void FreeArray(T** array) {
  if (*array != nullptr) cudaFree(*array);
  *array = nullptr;
}

}  // namespace

Result<std::unique_ptr<BktCache>> BktCache::Create(std::string where) {
  std::unique_ptr<BktCache> cache(new BktCache(std::move(where)));
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&cache->stream_, cudaStreamNonBlocking),
                            cache->where_ + ": cudaStreamCreateWithFlags for the BktCache");
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&cache->reloaded_, cudaEventDisableTiming),
                            cache->where_ + ": cudaEventCreateWithFlags for the BktCache");
  GPKV_RETURN_IF_ERROR(AllocateArray(&cache->counters_, kCounters, cache->where_));
  GPKV_CUDA_RETURN_IF_ERROR(
      ::gpkv::gpu::FillAndWait(cache->counters_, 0, kCounters * sizeof(unsigned long long)),
      cache->where_ + ": cudaMemset of the BktCache counters");
  return std::move(cache);
}

BktCache::~BktCache() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  Free();
  FreeArray(&counters_);
  if (reloaded_ != nullptr) cudaEventDestroy(reloaded_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void BktCache::Free() {
  FreeArray(&view_.slot_of);
  FreeArray(&view_.counts);
  FreeArray(&snapshot_in_);
  FreeArray(&snapshot_out_);
  FreeArray(&ids_in_);
  FreeArray(&ids_out_);
  FreeArray(&hot_);
  sort_temp_.Free();
  FreeArray(&view_.bucket_of);
  FreeArray(&view_.refs);
  FreeArray(&view_.buckets);
  FreeArray(&free_slots_);
  allocated_buckets_ = 0;
  allocated_capacity_ = 0;
  view_.capacity = 0;
}

Status BktCache::Shape(const GphashDeviceView& view, double fraction) {
  uint64_t buckets = 0;
  uint64_t level_base[gphash::kMaxLevels] = {};
  for (uint32_t level = 0; level < view.level_count; ++level) {
    level_base[level] = buckets;
    buckets += view.bucket_counts[level];
  }
  if (buckets >= (uint64_t{1} << 31)) {
    return Status::Unsupported(where_ +
                               ": the BktCache ranks buckets by 31-bit ids; the table has " +
                               std::to_string(buckets) + " buckets");
  }
  if (view.bucket_bytes % 8 != 0) {
    return Status::Unsupported(where_ + ": the BktCache copies buckets in 8-byte words, not " +
                               std::to_string(view.bucket_bytes) + "-byte buckets");
  }
  const uint64_t capacity = std::max<uint64_t>(
      1,
      std::min<uint64_t>(buckets, static_cast<uint64_t>(fraction * static_cast<double>(buckets))));
  GPKV_RETURN_IF_ERROR(Wait());
  if (buckets > allocated_buckets_ || view.bucket_bytes != bucket_bytes_) {
    // Everything per bucket (and, below, per slot) is allocated anew.
    Free();
    GPKV_RETURN_IF_ERROR(AllocateArray(&view_.slot_of, buckets, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&view_.counts, buckets, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&snapshot_in_, buckets, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&snapshot_out_, buckets, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&ids_in_, buckets, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&ids_out_, buckets, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&hot_, buckets, where_));
    size_t sort_bytes = 0;
    auto sort = [&](void* storage, size_t& storage_bytes) {
      return cub::DeviceRadixSort::SortPairsDescending(storage, storage_bytes, snapshot_in_,
                                                       snapshot_out_, ids_in_, ids_out_,
                                                       static_cast<int>(buckets), 0, kCountBits);
    };
    GPKV_RETURN_IF_ERROR(
        gpkv::gpu::CubTempBytes(sort, &sort_bytes, where_ + ": BktCache sort size"));
    GPKV_RETURN_IF_ERROR(sort_temp_.Allocate(
        sort_bytes,
        where_ + ": cudaMalloc of " + std::to_string(sort_bytes) + " bytes for the BktCache"));
    allocated_buckets_ = buckets;
  }
  if (capacity > allocated_capacity_) {
    FreeArray(&view_.bucket_of);
    FreeArray(&view_.refs);
    FreeArray(&view_.buckets);
    FreeArray(&free_slots_);
    allocated_capacity_ = 0;
    GPKV_RETURN_IF_ERROR(AllocateArray(&view_.bucket_of, capacity, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&view_.refs, capacity, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&view_.buckets, capacity * view.bucket_bytes, where_));
    GPKV_RETURN_IF_ERROR(AllocateArray(&free_slots_, capacity, where_));
    allocated_capacity_ = capacity;
  }
  view_.capacity = capacity;
  view_.reads = counters_;
  std::copy(level_base, level_base + gphash::kMaxLevels, view_.level_base);
  table_buckets_ = buckets;
  bucket_bytes_ = view.bucket_bytes;
  reloads_since_shape_ = 0;
  return Reset();
}

Status BktCache::Reset() {
  if (view_.slot_of == nullptr) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(view_.slot_of, 0, table_buckets_ * sizeof(uint32_t), stream_),
      where_ + ": BktCache reset");
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(view_.counts, 0, table_buckets_ * sizeof(uint32_t), stream_),
      where_ + ": BktCache reset");
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(view_.bucket_of, 0xff, view_.capacity * sizeof(uint64_t), stream_),
      where_ + ": BktCache reset");
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(view_.refs, 0, view_.capacity * sizeof(uint32_t), stream_),
      where_ + ": BktCache reset");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), where_ + ": BktCache reset");
  return Status::OK();
}

Status BktCache::Reload(const GphashDeviceView& view, cudaEvent_t last_write) {
  const uint64_t buckets = table_buckets_;
  const uint64_t capacity = view_.capacity;
  SnapshotCountsKernel<<<BlocksFor(buckets), kBlockThreads, 0, stream_>>>(
      view_.counts, view_.slot_of, buckets, snapshot_in_, ids_in_);
  GPKV_RETURN_IF_ERROR(CheckLaunch("SnapshotCountsKernel"));
  auto sort = [&](void* storage, size_t& storage_bytes) {
    return cub::DeviceRadixSort::SortPairsDescending(
        storage, storage_bytes, snapshot_in_, snapshot_out_, ids_in_, ids_out_,
        static_cast<int>(buckets), 0, kCountBits, stream_);
  };
  GPKV_RETURN_IF_ERROR(
      gpkv::gpu::RunCub(sort, sort_temp_.storage(), where_ + ": BktCache ranking sort"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(hot_, 0, buckets, stream_),
                            where_ + ": BktCache reload");
  MarkHotKernel<<<BlocksFor(capacity), kBlockThreads, 0, stream_>>>(snapshot_out_, ids_out_,
                                                                    capacity, hot_);
  GPKV_RETURN_IF_ERROR(CheckLaunch("MarkHotKernel"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(counters_ + kFreePushed, 0, 2 * sizeof(unsigned long long), stream_),
      where_ + ": BktCache reload");
  // Buckets move only between write batches.
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream_, last_write, 0),
                            where_ + ": BktCache reload after the last write batch");
  EvictKernel<<<BlocksFor(capacity), kBlockThreads, 0, stream_>>>(view_, hot_, free_slots_,
                                                                  counters_);
  GPKV_RETURN_IF_ERROR(CheckLaunch("EvictKernel"));
  GphashDeviceView load_view = view;
  load_view.cache = view_;
  LoadKernel<<<BlocksFor(capacity * warp::kWarpSize), kBlockThreads, 0, stream_>>>(
      load_view, snapshot_out_, ids_out_, free_slots_, counters_);
  GPKV_RETURN_IF_ERROR(CheckLaunch("LoadKernel"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(last_write, stream_),
                            where_ + ": BktCache reload: cudaEventRecord");
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(reloaded_, stream_),
                            where_ + ": BktCache reload: cudaEventRecord");
  ++reloads_;
  ++reloads_since_shape_;
  return Status::OK();
}

bool BktCache::Reloading() const {
  if (reloads_ == 0) return false;
  const cudaError_t state = cudaEventQuery(reloaded_);
  if (state == cudaErrorNotReady) {
    cudaGetLastError();
    return true;
  }
  return false;
}

Status BktCache::Wait() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), where_ + ": BktCache stream");
  return Status::OK();
}

BktCacheStats BktCache::stats() const {
  BktCacheStats stats;
  stats.capacity_buckets = view_.capacity;
  stats.table_buckets = table_buckets_;
  stats.reloads = reloads_;
  unsigned long long counters[kCounters] = {};
  if (cudaMemcpy(counters, counters_, sizeof(counters), cudaMemcpyDeviceToHost) != cudaSuccess) {
    cudaGetLastError();
    return stats;
  }
  stats.get_cache_reads = counters[kCacheReads];
  stats.get_pool_reads = counters[kPoolReads];
  stats.buckets_loaded = counters[kLoaded];
  return stats;
}

}  // namespace gpkv::gphash::gpu

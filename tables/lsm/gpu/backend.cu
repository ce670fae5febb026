// LsmGpu: open (runs read into GPU memory and checked there, the log
// replayed) and the write side (sort, log, cascade, compaction, publish).
// The protocol and every rule follow cpu/backend.cc; the bytes it writes go
// through the shared writers of run.h and root.h.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <cub/cub.cuh>

#include "gpu/cub_temp_storage.h"
#include "gpu/device_memory.h"
#include "gpu/staged_copy.h"
#include "pm/extent_allocator.h"
#include "tables/lsm/cpu/merge.h"
#include "tables/lsm/cpu/write_buffer.h"
#include "tables/lsm/gpu/impl.cuh"
#include "tables/lsm/reader.h"
#include "tables/lsm/root.h"

namespace gpkv::lsm::gpu {

using gpkv::gpu::CubTempBytes;
using gpkv::gpu::CubTempStorage;
using gpkv::gpu::RunCub;

bool IsDeviceMemory(const void* address, int device) {
  if (address == nullptr) return false;
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged) &&
         attributes.device == device;
}

namespace {

// ------------------------------------------------------------------ kernels

__global__ void IotaKernel(uint32_t* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<uint32_t>(i);
  }
}

template <uint32_t W>
__global__ void ExtractWordKernel(const uint64_t* keys, const uint32_t* perm, uint32_t word,
                                  uint64_t* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x) {
    out[i] = keys[uint64_t{perm[i]} * W + word];
  }
}

// Key j of the stably sorted order: sorted[j] when the sort's own output
// holds the keys (one-word keys), else the input's key perm[j].
template <uint32_t W>
__device__ __forceinline__ const uint64_t* SortedKey(const uint64_t* keys, const uint64_t* sorted,
                                                     const uint32_t* perm, uint64_t j) {
  return sorted != nullptr ? sorted + j * W : keys + uint64_t{perm[j]} * W;
}

// Over the stably sorted order: last[j] = 1 where sorted entry j is the
// last occurrence of its key; first_flags[input] = 1 where the input is the
// first occurrence of its key.
template <uint32_t W>
__global__ void SortedFlagsKernel(const uint64_t* keys, const uint64_t* sorted,
                                  const uint32_t* perm, uint64_t n, uint32_t* last,
                                  uint8_t* first_flags) {
  for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < n;
       j += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t* key = SortedKey<W>(keys, sorted, perm, j);
    last[j] = j + 1 == n || Compare<W>(key, SortedKey<W>(keys, sorted, perm, j + 1)) != 0;
    if (first_flags != nullptr) {
      first_flags[perm[j]] =
          j == 0 || Compare<W>(SortedKey<W>(keys, sorted, perm, j - 1), key) != 0;
    }
  }
}

// The sorted batch's entries: entry positions[j] from input perm[j] where
// last[j]; unique_of[input] = the entry its key became.
template <uint32_t W>
__global__ void GatherBatchKernel(const uint64_t* keys, const uint64_t* sorted,
                                  const uint8_t* values, const uint32_t* perm, const uint32_t* last,
                                  const uint64_t* positions, uint64_t n, uint64_t meta,
                                  uint32_t value_size, uint64_t* out_keys, uint64_t* out_meta,
                                  uint8_t* out_values, uint32_t* unique_of) {
  for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < n;
       j += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t input = perm[j];
    const uint64_t at = positions[j];
    if (unique_of != nullptr) unique_of[input] = static_cast<uint32_t>(at);
    if (!last[j]) continue;
    const uint64_t* key = SortedKey<W>(keys, sorted, perm, j);
#pragma unroll
    for (uint32_t w = 0; w < W; ++w) out_keys[at * W + w] = key[w];
    out_meta[at] = meta;
    uint8_t* value = out_values + at * value_size;
    if (values != nullptr) {
      DeviceCopyValue(value, values + input * value_size, value_size);
    } else {
      for (uint32_t b = 0; b < value_size; ++b) value[b] = 0;
    }
  }
}

__global__ void TotalKernel(const uint32_t* flags, const uint64_t* positions, uint64_t n,
                            uint64_t* total) {
  *total = n == 0 ? 0 : positions[n - 1] + flags[n - 1];
}

// ------------------------------------------------------ merge of two runs
// Two runs (each sorted, one entry per key) merged in tiles of kMergeTile
// outputs of the merge path, the newer entry first on equal keys. A tile's
// keys are read once into shared memory, each thread merges kMergeItems
// consecutive outputs there, and an output is kept unless it is the older
// entry of a key the newer run holds (or, when they are dropped, a
// tombstone). The count pass sums a tile's kept outputs; the write pass
// merges the tile again and writes its kept entries at the tile's offset
// (a scan of the counts), keys from shared memory: one read of the keys per
// pass and one of meta and values. (Before: cub::DeviceMerge of references,
// a flags kernel, a scan over every output and a gather through the
// references: four passes over arrays of the merge's length.)
constexpr uint32_t kMergeThreads = 256;
// Outputs per thread: 8 for one-word keys (4 measured the same within the
// runs' spread, docs/bench/lsm.md run X2), 4 for longer ones (a tile of 8 x
// 256 keys of 32 bytes is more than the 48 KB of static shared memory).
template <uint32_t W>
constexpr uint32_t kMergeItems = W == 1 ? 8 : 4;
template <uint32_t W>
constexpr uint32_t kMergeTile = kMergeItems<W>* kMergeThreads;
constexpr uint32_t kFromOlder = uint32_t{1} << 31;  // a tile reference into the older run

// How many of the first `diagonal` outputs come from `newer` (the merge
// path's split; an equal key goes to the newer run first).
template <uint32_t W>
__device__ uint64_t MergeSplit(const uint64_t* newer, uint64_t na, const uint64_t* older,
                               uint64_t nb, uint64_t diagonal) {
  uint64_t low = diagonal > nb ? diagonal - nb : 0;
  uint64_t high = diagonal < na ? diagonal : na;
  while (low < high) {
    const uint64_t mid = (low + high) / 2;
    if (Compare<W>(newer + mid * W, older + (diagonal - 1 - mid) * W) <= 0) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

// splits[t] = MergeSplit at t * kMergeTile (clamped to na + nb), t <= tiles.
template <uint32_t W>
__global__ void MergeSplitsKernel(RunView newer, RunView older, uint64_t tiles, uint64_t* splits) {
  const uint64_t n = newer.count + older.count;
  for (uint64_t t = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; t <= tiles;
       t += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t diagonal = t * kMergeTile<W> < n ? t * kMergeTile<W> : n;
    splits[t] = MergeSplit<W>(newer.keys, newer.count, older.keys, older.count, diagonal);
  }
}

// One tile of the merge in shared memory: keys[0] is the newer run's entry
// before the tile (when there is one), keys[1, 1 + a) the tile's newer
// entries, keys[1 + a, 1 + a + b) its older ones.
template <uint32_t W>
struct MergeTile {
  uint64_t keys[(kMergeTile<W> + 1) * W];
  uint32_t refs[kMergeTile<W>];  // kept outputs in order (write pass)
  uint64_t newer_first, older_first;
  uint32_t a, b;
};

template <uint32_t W>
__device__ void LoadMergeTile(const RunView& newer, const RunView& older, const uint64_t* splits,
                              MergeTile<W>& tile) {
  const uint64_t t = blockIdx.x;
  const uint64_t n = newer.count + older.count;
  const uint64_t d0 = t * kMergeTile<W>;
  const uint64_t d1 = d0 + kMergeTile<W> < n ? d0 + kMergeTile<W> : n;
  const uint64_t i0 = splits[t], i1 = splits[t + 1];
  const uint32_t a = static_cast<uint32_t>(i1 - i0);
  const uint32_t b = static_cast<uint32_t>((d1 - i1) - (d0 - i0));
  if (threadIdx.x == 0) {
    tile.newer_first = i0;
    tile.older_first = d0 - i0;
    tile.a = a;
    tile.b = b;
  }
  const uint64_t* from_newer = newer.keys + i0 * W;
  const uint64_t* from_older = older.keys + (d0 - i0) * W;
  for (uint32_t k = threadIdx.x; k < (a + b) * W; k += blockDim.x) {
    tile.keys[W + k] = k < a * W ? from_newer[k] : from_older[k - a * W];
  }
  if (threadIdx.x < W && i0 > 0) tile.keys[threadIdx.x] = newer.keys[(i0 - 1) * W + threadIdx.x];
  __syncthreads();
}

// This thread's kMergeItems outputs of the tile: refs[s] (local index, with
// kFromOlder for the older run) and whether each is kept; returns the count.
template <uint32_t W>
__device__ uint32_t MergeTileItems(const MergeTile<W>& tile, const RunView& newer,
                                   const RunView& older, bool drop_tombstones,
                                   uint32_t (&refs)[kMergeItems<W>], bool (&keep)[kMergeItems<W>]) {
  const uint32_t a = tile.a, b = tile.b;
  const uint64_t* ka = tile.keys + W;  // ka[-W..0) is the entry before the tile
  const uint64_t* kb = tile.keys + (1 + a) * W;
  const uint32_t first = threadIdx.x * kMergeItems<W>;
  const uint32_t diagonal = first < a + b ? first : a + b;
  uint32_t low = diagonal > b ? diagonal - b : 0, high = diagonal < a ? diagonal : a;
  while (low < high) {
    const uint32_t mid = (low + high) / 2;
    if (Compare<W>(ka + mid * W, kb + (diagonal - 1 - mid) * W) <= 0) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  uint32_t i = low, j = diagonal - low, kept = 0;
#pragma unroll
  for (uint32_t s = 0; s < kMergeItems<W>; ++s) {
    keep[s] = false;
    if (i + j >= a + b) continue;
    const bool take_newer = j >= b || (i < a && Compare<W>(ka + i * W, kb + j * W) <= 0);
    bool k = true;
    if (take_newer) {
      refs[s] = i++;
    } else {
      // The older entry of a key the newer run holds: that entry is the
      // newer one just before (possibly the one before the tile).
      const bool has_before = i > 0 || tile.newer_first > 0;
      k = !(has_before && Compare<W>(ka + (static_cast<int64_t>(i) - 1) * W, kb + j * W) == 0);
      refs[s] = kFromOlder | j++;
    }
    if (k && drop_tombstones) {
      const uint64_t meta = (refs[s] & kFromOlder)
                                ? older.meta[tile.older_first + (refs[s] & ~kFromOlder)]
                                : newer.meta[tile.newer_first + refs[s]];
      k = !IsTombstone(meta);
    }
    keep[s] = k;
    kept += k;
  }
  return kept;
}

template <uint32_t W>
__global__ void __launch_bounds__(kMergeThreads)
    MergeCountKernel(RunView newer, RunView older, const uint64_t* splits, bool drop_tombstones,
                     uint32_t* tile_counts) {
  using Reduce = cub::BlockReduce<uint32_t, kMergeThreads>;
  __shared__ MergeTile<W> tile;
  __shared__ typename Reduce::TempStorage storage;
  LoadMergeTile<W>(newer, older, splits, tile);
  uint32_t refs[kMergeItems<W>];
  bool keep[kMergeItems<W>];
  const uint32_t kept = MergeTileItems<W>(tile, newer, older, drop_tombstones, refs, keep);
  const uint32_t sum = Reduce(storage).Sum(kept);
  if (threadIdx.x == 0) tile_counts[blockIdx.x] = sum;
}

template <uint32_t W>
__global__ void __launch_bounds__(kMergeThreads)
    MergeWriteKernel(RunView newer, RunView older, const uint64_t* splits, bool drop_tombstones,
                     const uint64_t* tile_offsets, uint32_t value_size, uint64_t* out_keys,
                     uint64_t* out_meta, uint8_t* out_values) {
  using Scan = cub::BlockScan<uint32_t, kMergeThreads>;
  __shared__ MergeTile<W> tile;
  __shared__ typename Scan::TempStorage storage;
  LoadMergeTile<W>(newer, older, splits, tile);
  uint32_t refs[kMergeItems<W>];
  bool keep[kMergeItems<W>];
  const uint32_t kept = MergeTileItems<W>(tile, newer, older, drop_tombstones, refs, keep);
  uint32_t at = 0, total = 0;
  Scan(storage).ExclusiveSum(kept, at, total);
#pragma unroll
  for (uint32_t s = 0; s < kMergeItems<W>; ++s) {
    if (keep[s]) tile.refs[at++] = refs[s];
  }
  __syncthreads();
  const uint64_t base = tile_offsets[blockIdx.x];
  const uint64_t* kb = tile.keys + (1 + tile.a) * W;
  // Every load of this thread's entries before any store: the stores may
  // alias the loads as far as the compiler knows, so a loop of load, store
  // would wait for each entry's loads in turn.
  uint64_t index[kMergeItems<W>], meta[kMergeItems<W>], value[kMergeItems<W>];
  bool older_entry[kMergeItems<W>];
  const bool word_values = value_size == 8;
#pragma unroll
  for (uint32_t s = 0; s < kMergeItems<W>; ++s) {
    const uint32_t p = threadIdx.x + s * kMergeThreads;
    if (p >= total) continue;
    const uint32_t ref = tile.refs[p];
    older_entry[s] = (ref & kFromOlder) != 0;
    const uint32_t local = ref & ~kFromOlder;
    index[s] = older_entry[s] ? tile.older_first + local : tile.newer_first + local;
    const RunView& from = older_entry[s] ? older : newer;
    meta[s] = from.meta[index[s]];
    if (word_values) value[s] = reinterpret_cast<const uint64_t*>(from.values)[index[s]];
  }
#pragma unroll
  for (uint32_t s = 0; s < kMergeItems<W>; ++s) {
    const uint32_t p = threadIdx.x + s * kMergeThreads;
    if (p >= total) continue;
    const uint32_t local = tile.refs[p] & ~kFromOlder;
    const uint64_t* key = older_entry[s] ? kb + local * W : tile.keys + (1 + local) * W;
    const uint64_t out = base + p;
#pragma unroll
    for (uint32_t w = 0; w < W; ++w) out_keys[out * W + w] = key[w];
    out_meta[out] = meta[s];
    if (word_values) {
      reinterpret_cast<uint64_t*>(out_values)[out] = value[s];
    } else {
      const RunView& from = older_entry[s] ? older : newer;
      DeviceCopyValue(out_values + out * value_size, from.values + index[s] * value_size,
                      value_size);
    }
  }
}

// Distinct keys for WarmUp: word 0 is i times an odd constant (a bijection).
__global__ void WarmUpKeysKernel(uint64_t* keys, uint32_t key_words, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x) {
    for (uint32_t w = 0; w < key_words; ++w) {
      keys[i * key_words + w] = w == 0 ? i * 0x9E3779B97F4A7C15ull : 0;
    }
  }
}

__global__ void FillKernel(uint64_t* words, uint64_t n, uint64_t value) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x) {
    words[i] = value;
  }
}

// The run data checksum terms of words[0, data_words) at positions first..,
// and the tombstones and largest sequence number of meta[0, count).
__global__ void RunFactsKernel(const uint64_t* words, uint64_t data_words, uint64_t first,
                               const uint64_t* meta, uint64_t count, uint64_t seed,
                               unsigned long long* out) {
  using Reduce = cub::BlockReduce<unsigned long long, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  unsigned long long sum = 0, tombstones = 0, max_seq = 0;
  const uint64_t items = data_words > count ? data_words : count;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < items;
       i += uint64_t{gridDim.x} * blockDim.x) {
    if (i < data_words) sum += RunChecksumTerm(seed, first + i, words[i]);
    if (i < count) {
      tombstones += IsTombstone(meta[i]) ? 1 : 0;
      max_seq = max(max_seq, static_cast<unsigned long long>(SeqOf(meta[i])));
    }
  }
  sum = Reduce(storage).Sum(sum);
  __syncthreads();
  tombstones = Reduce(storage).Sum(tombstones);
  __syncthreads();
  max_seq = Reduce(storage).Reduce(max_seq, ::cuda::maximum<>{});
  if (threadIdx.x == 0) {
    atomicAdd(&out[0], sum);
    atomicAdd(&out[1], tombstones);
    atomicMax(&out[2], max_seq);
  }
}

// live[u] = 1 where unique key u of the batch is live in the sources.
template <uint32_t W>
__global__ void LiveKernel(DeviceSources sources, const uint64_t* keys, uint64_t n,
                           uint32_t* live) {
  for (uint64_t u = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; u < n;
       u += uint64_t{gridDim.x} * blockDim.x) {
    uint64_t key[W];
#pragma unroll
    for (uint32_t w = 0; w < W; ++w) key[w] = keys[u * W + w];
    const Hit hit = FindNewest<W>(sources, key);
    live[u] = hit.source >= 0 && !IsTombstone(sources.runs[hit.source].meta[hit.index]);
  }
}

__global__ void ErasedKernel(const uint8_t* first, const uint32_t* unique_of, const uint32_t* live,
                             uint64_t n, uint8_t* erased) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x) {
    erased[i] = first[i] && live[unique_of[i]];
  }
}

template <uint32_t W>
__global__ void FilterGatherKernel(RunView from, const uint32_t* keep, const uint64_t* positions,
                                   uint32_t value_size, uint64_t* out_keys, uint64_t* out_meta,
                                   uint8_t* out_values) {
  for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < from.count;
       j += uint64_t{gridDim.x} * blockDim.x) {
    if (!keep[j]) continue;
    const uint64_t at = positions[j];
#pragma unroll
    for (uint32_t w = 0; w < W; ++w) out_keys[at * W + w] = from.keys[j * W + w];
    out_meta[at] = from.meta[j];
    DeviceCopyValue(out_values + at * value_size, from.values + j * value_size, value_size);
  }
}

template <uint32_t W>
__global__ void FencesKernel(const uint64_t* keys, uint64_t fence_count, uint64_t* fences) {
  for (uint64_t f = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; f < fence_count;
       f += uint64_t{gridDim.x} * blockDim.x) {
#pragma unroll
    for (uint32_t w = 0; w < W; ++w) fences[f * W + w] = keys[f * kFenceStride * W + w];
  }
}

Status LaunchStatus(const std::string& what) {
  return gpkv::gpu::CudaStatus(cudaGetLastError(), what);
}

// Adds the seconds of its scope to *sum (a phase of LsmGpu::Impl::times_).
class PhaseTimer {
 public:
  explicit PhaseTimer(double* sum) : sum_(sum), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    *sum_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double* sum_;
  std::chrono::steady_clock::time_point start_;
};

// positions = exclusive prefix sum of flags; *total = their sum (waits),
// read back through `pinned` (one word of pinned host memory: a copy to
// pageable memory waits behind a checkpoint's copy to the pool).
Status Positions(const uint32_t* flags, uint64_t n, uint64_t** positions, uint64_t* total,
                 uint64_t* pinned, Scratch& scratch) {
  cudaStream_t stream = scratch.stream();
  GPKV_RETURN_IF_ERROR(scratch.Take(n, positions, "prefix sum"));
  uint64_t* device_total = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(1, &device_total, "prefix sum total"));
  if (n != 0) {
    uint64_t* out = *positions;
    auto scan = [&](void* storage, size_t& bytes) {
      return cub::DeviceScan::ExclusiveScan(storage, bytes, flags, out, ::cuda::std::plus<>{},
                                            uint64_t{0}, static_cast<int64_t>(n), stream);
    };
    size_t bytes = 0;
    GPKV_RETURN_IF_ERROR(CubTempBytes(scan, &bytes, "cub::DeviceScan (size)"));
    void* storage = nullptr;
    GPKV_RETURN_IF_ERROR(scratch.Take(bytes, reinterpret_cast<uint8_t**>(&storage), "scan"));
    GPKV_RETURN_IF_ERROR(RunCub(scan, CubTempStorage{storage, bytes}, "cub::DeviceScan"));
  }
  TotalKernel<<<1, 1, 0, stream>>>(flags, *positions, n, device_total);
  GPKV_RETURN_IF_ERROR(LaunchStatus("LSM GPU prefix sum total"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(pinned, device_total, 8, cudaMemcpyDeviceToHost, stream), "copy a total");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), "LSM GPU prefix sum");
  *total = *pinned;
  return Status::OK();
}

// The carry rule of the device write buffer: cpu::BufferCarries with the
// newest run merging into an older one only when it is at least as large (a
// binary counter), not half as large. The buffer's runs are not part of the
// pool's bytes, so the backends may differ here. Batches of b into a buffer
// of 64 b: each entry merged 4.1 times on average with up to 6 runs, against
// 5.65 times and up to 4 runs with the CPU's rule (the merges are most of a
// log append's device time; the CPU's rule favours queries of small batches).
bool DeviceBufferCarries(uint64_t newest, uint64_t older, size_t runs_from_older) {
  return newest >= older || older <= cpu::kSmallRun || runs_from_older >= cpu::kMaxBufferRuns;
}

}  // namespace

// ------------------------------------------------------------------ Impl

Status LsmGpu::Impl::Close() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (pending_ == nullptr) return Status::OK();
  cudaSetDevice(device_);
  GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  return pool_.Sync();
}

LsmGpu::Impl::~Impl() {
  Close().IgnoreError();  // an error leaves the checkpoint to the next open
  // The registration handle goes before the pool closes (its contract).
  if (registration_thread_.joinable()) registration_thread_.join();
  registration_.reset();
  cudaSetDevice(device_);
  {
    std::unique_lock<std::shared_mutex> lock(version_mutex_);
    version_.reset();
  }
  if (write_stream_ != nullptr) {
    cudaStreamSynchronize(write_stream_);
    cudaStreamDestroy(write_stream_);
  }
  if (log_stream_ != nullptr) {
    cudaStreamSynchronize(log_stream_);
    cudaStreamDestroy(log_stream_);
  }
  if (checkpoint_stream_ != nullptr) {
    cudaStreamSynchronize(checkpoint_stream_);
    cudaStreamDestroy(checkpoint_stream_);
  }
  if (batch_ready_ != nullptr) cudaEventDestroy(batch_ready_);
  if (record_sum_ != nullptr) cudaFreeHost(record_sum_);
  if (pinned_ != nullptr) cudaFreeHost(pinned_);
}

Result<RunPtr> LsmGpu::Impl::NewRun(uint64_t count, cudaStream_t stream) {
  auto run = std::make_shared<DeviceRun>();
  run->count = count;
  run->key_words = shape_.key_words;
  run->value_size = shape_.value_size;
  const uint64_t bytes = std::max<uint64_t>(run->data_bytes(), 8);
  void* base = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(
      pooled_runs_ ? cudaMallocAsync(&base, bytes, write_stream_) : cudaMalloc(&base, bytes),
      Where() + ": device memory for a run of " + std::to_string(count) + " entries");
  run->base = static_cast<uint8_t*>(base);
  if (pooled_runs_) {
    run->pool_stream = write_stream_;
    // Queries on other streams may read the run once it is published: the
    // allocation is complete before (every write path waits for the write
    // stream before it publishes).
  }
  // The values' zero padding (the checksum and the pool copy read it).
  const uint64_t values_end = run->array_bytes();
  if (bytes > values_end) {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(run->base + values_end, 0, bytes - values_end, stream),
        Where() + ": zero a run's padding");
  }
  return run;
}

Status LsmGpu::Impl::StageIn(Scratch& scratch, const uint8_t* data, size_t bytes,
                             const uint8_t** device_out, const char* what) {
  if (IsDeviceMemory(data, device_) && reinterpret_cast<uintptr_t>(data) % 8 == 0) {
    *device_out = data;
    return Status::OK();
  }
  uint8_t* staged = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(bytes, &staged, what));
  GPKV_RETURN_IF_ERROR(CopyIn(staged, data, bytes, scratch.stream(), what));
  *device_out = staged;
  return Status::OK();
}

Status LsmGpu::Impl::CopyIn(void* device, const void* host, size_t bytes, cudaStream_t stream,
                            const char* what) {
  return gpkv::gpu::CopyToDevice(device, host, bytes, stream, Where() + ": copy " + what);
}

Status LsmGpu::Impl::CopyOut(void* host, const void* device, size_t bytes, cudaStream_t stream,
                             const char* what) {
  return gpkv::gpu::CopyToHost(host, device, bytes, stream, Where() + ": copy " + what);
}

Status LsmGpu::Impl::RunFacts(const DeviceRun& run, uint64_t* checksum) {
  Scratch scratch(write_stream_);
  unsigned long long* out = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(3, &out, "run facts"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out, 0, 24, write_stream_), "zero run facts");
  const uint64_t words = run.data_words();
  RunFactsKernel<<<std::min(Blocks(words), 4096u), kBlock, 0, write_stream_>>>(
      reinterpret_cast<const uint64_t*>(run.base), words, 0, run.meta(), run.count, table_id_, out);
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": run checksum kernel"));
  auto* host = reinterpret_cast<unsigned long long*>(pinned_);
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(host, out, 3 * sizeof(*host), cudaMemcpyDeviceToHost, write_stream_),
      "copy run facts");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(write_stream_), Where() + ": run checksum");
  *checksum = RunChecksumFinish(table_id_, words, host[0]);
  auto& mutable_run = const_cast<DeviceRun&>(run);
  mutable_run.tombstones = host[1];
  mutable_run.max_seq = host[2];
  return Status::OK();
}

Status LsmGpu::Impl::RecordChecksumTerms(const DeviceRun& run, const LogRecordHeader& header) {
  Scratch scratch(log_stream_);
  unsigned long long* out = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(3, &out, "log record checksum"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out, 0, 24, log_stream_), "zero record checksum");
  const bool tombstones = (header.flags & kLogRecordTombstones) != 0;
  const uint64_t words =
      ColumnarRecordWords(run.count, shape_.key_size(), shape_.value_size, tombstones);
  const uint64_t key_words = run.count * shape_.key_words;
  const uint64_t seed = LogRecordSeed(log_epoch_, header);
  // The keys, then the values with the run's zero padding (the record's).
  RunFactsKernel<<<std::min(Blocks(key_words), 4096u), kBlock, 0, log_stream_>>>(
      run.keys(), key_words, 0, nullptr, 0, seed, out);
  if (words > key_words) {
    RunFactsKernel<<<std::min(Blocks(words - key_words), 4096u), kBlock, 0, log_stream_>>>(
        reinterpret_cast<const uint64_t*>(run.values()), words - key_words, key_words, nullptr, 0,
        seed, out);
  }
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": log record checksum kernel"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(record_sum_, out, sizeof(*record_sum_), cudaMemcpyDeviceToHost, log_stream_),
      "copy the log record checksum");
  return Status::OK();
}

Status LsmGpu::Impl::BuildFences(DeviceRun& run) {
  if (run.fences != nullptr || run.count <= kFenceStride) return Status::OK();
  const uint64_t count = (run.count + kFenceStride - 1) / kFenceStride;
  void* fences = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(run.pool_stream != nullptr
                                ? cudaMallocAsync(&fences, count * shape_.key_size(), write_stream_)
                                : cudaMalloc(&fences, count * shape_.key_size()),
                            Where() + ": device memory for a run's fences");
  run.fences = static_cast<uint64_t*>(fences);
  run.fence_count = count;
  DispatchWords(shape_.key_words, [&](auto words) {
    FencesKernel<decltype(words)::value>
        <<<Blocks(count), kBlock, 0, write_stream_>>>(run.keys(), count, run.fences);
  });
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": fences"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(write_stream_), Where() + ": fences");
  return Status::OK();
}

Status LsmGpu::Impl::Recover(const TableOptions& options, recovery::Report* report) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
  auto view = ReadLsmRoot(pool_, table_name_, root_offset_);
  if (!view.ok()) return view.status();
  table_id_ = view->table_id;
  shape_ = view->shape();
  log2_batch_ = view->log2_batch;
  log_offset_ = view->log_offset;
  log_capacity_ = view->log_capacity;
  buffer_entries_ = view->buffer_entries();
  max_dead_percent_ = options.ordered.max_dead_percent;
  manifest_ = view->manifest;
  log_halves_ = view->log_halves();
  half_capacity_ = view->half_capacity;
  publish_batch_ = CheckpointPublishBatch(view->log_batches);

  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&write_stream_, cudaStreamNonBlocking),
                            Where() + ": cudaStreamCreate");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&checkpoint_stream_, cudaStreamNonBlocking),
                            Where() + ": cudaStreamCreate");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&log_stream_, cudaStreamNonBlocking),
                            Where() + ": cudaStreamCreate");
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&batch_ready_, cudaEventDisableTiming),
                            Where() + ": cudaEventCreate");
  void* sum = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&sum, sizeof(*record_sum_)),
                            Where() + ": pinned log record checksum");
  record_sum_ = static_cast<unsigned long long*>(sum);
  void* pinned = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&pinned, 4 * sizeof(uint64_t)),
                            Where() + ": pinned totals");
  pinned_ = static_cast<uint64_t*>(pinned);
  // The checkpoint copy's slices (see StartCheckpoint); 0 = one copy.
  if (const char* chunk = std::getenv("GPKV_LSM_CHECKPOINT_CHUNK_MB")) {
    checkpoint_chunk_ = std::strtoull(chunk, nullptr, 10) << 20;
  }
  // Two choices measured by the benchmark (docs/bench/lsm.md).
  const char* alloc = std::getenv("GPKV_LSM_GPU_RUN_ALLOC");
  pooled_runs_ = alloc == nullptr || std::strcmp(alloc, "malloc") != 0;
  const char* wait = std::getenv("GPKV_LSM_GPU_REGISTRATION");
  registration_wait_ = wait != nullptr && std::strcmp(wait, "wait") == 0;
  // Scratch memory stays in the pool between batches.
  cudaMemPool_t memory_pool;
  if (cudaDeviceGetDefaultMemPool(&memory_pool, device_) == cudaSuccess) {
    uint64_t threshold = UINT64_MAX;
    cudaMemPoolSetAttribute(memory_pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  }
  cudaGetLastError();

  // Every run into GPU memory, its checksum computed there.
  auto version = std::make_shared<Version>();
  for (uint32_t level = 0; level < manifest_.level_count; ++level) {
    const RunRef& ref = manifest_.levels[level];
    if (ref.offset == 0) continue;
    RunHeader header;
    GPKV_RETURN_IF_ERROR(ReadRunHeader(pool_, *view, level, &header));
    auto run = NewRun(ref.entries, write_stream_);
    if (!run.ok()) return run.status();
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync((*run)->base, pool_.At<uint8_t>(ref.offset) + kRunHeaderSize,
                        (*run)->data_bytes(), cudaMemcpyHostToDevice, write_stream_),
        Where() + ": read level " + std::to_string(level) + " run into the device");
    uint64_t checksum = 0;
    GPKV_RETURN_IF_ERROR(RunFacts(**run, &checksum));
    if (checksum != header.data_checksum) {
      return RunChecksumMismatch(pool_, *view, level, header.data_checksum, checksum);
    }
    GPKV_RETURN_IF_ERROR(BuildFences(**run));
    level_tombstones_[level] = header.tombstones;
    version->levels[level] = *run;
  }

  // The log: each record checked on the host (ReadLog: position, sequence,
  // checksum; then its keys' order), its arrays uploaded as a device run and
  // carried into the buffer as a write carries it. Row records of older
  // pools are decoded on the host first. The records of a checkpoint's
  // other half (a crash while it was in flight) go to a buffer of their own
  // when the pool is writable: the checkpoint is done again here before
  // them (as cpu::LsmCpu does).
  const bool resume = view->log_segment_count == 2 && !pool_.read_only();
  std::vector<RunPtr> buffers[2];
  uint64_t entries_of[2] = {0, 0};
  uint64_t last_seq[2] = {manifest_.applied_seq, manifest_.applied_seq};
  uint64_t records = 0;
  Status bad_record;
  auto replay = [&](uint32_t segment, const LogRecordHeader& header, uint64_t offset,
                    const uint8_t* entries) -> Status {
    const bool tombstones = (header.flags & kLogRecordTombstones) != 0;
    RunData decoded;
    const uint8_t* keys = entries;
    const uint8_t* values =
        tombstones ? nullptr : entries + uint64_t{header.count} * shape_.key_size();
    const uint8_t* meta = nullptr;
    if (header.flags == 0) {
      GPKV_RETURN_IF_ERROR(DecodeLogRecord(pool_, *view, header, offset, entries, &decoded));
      const RunView host = decoded.View();
      keys = reinterpret_cast<const uint8_t*>(host.keys);
      values = host.values;
      meta = reinterpret_cast<const uint8_t*>(host.meta);
    } else {
      GPKV_RETURN_IF_ERROR(CheckColumnarRecordKeys(pool_, *view, header, offset, entries));
    }
    auto run = NewRun(header.count, write_stream_);
    if (!run.ok()) return run.status();
    const DeviceRun& device = **run;
    const std::string what =
        pool_.Where(view->TableRegion() + " log record", offset) + ": read into the device";
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device.keys(), keys, header.count * shape_.key_size(),
                                              cudaMemcpyHostToDevice, write_stream_),
                              what);
    if (values != nullptr) {
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(device.values(), values, header.count * shape_.value_size,
                          cudaMemcpyHostToDevice, write_stream_),
          what);
    } else {
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(device.values(), 0, header.count * shape_.value_size, write_stream_),
          what);
    }
    if (meta != nullptr) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device.meta(), meta, header.count * 8,
                                                cudaMemcpyHostToDevice, write_stream_),
                                what);
    } else {
      FillKernel<<<std::min(Blocks(header.count), 4096u), kBlock, 0, write_stream_>>>(
          device.meta(), header.count, MakeMeta(header.seq, tombstones));
      GPKV_RETURN_IF_ERROR(LaunchStatus(what));
    }
    // The host copies (decoded) must outlive the copies.
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(write_stream_), what);
    const uint32_t into = resume ? segment : 0;
    auto next = CarryIntoBuffer(buffers[into], *run);
    if (!next.ok()) return next.status();
    buffers[into] = std::move(*next);
    for (uint32_t s = segment; s < 2; ++s) last_seq[s] = header.seq;
    ++records;
    entries_of[into] += header.count;
    return Status::OK();
  };
  GPKV_RETURN_IF_ERROR(ReadLog(
      pool_, *view,
      [&](uint32_t segment, const LogRecordHeader& header, uint64_t offset,
          const uint8_t* entries) {
        if (bad_record.ok())
          static_cast<void>(bad_record = replay(segment, header, offset, entries));
      },
      nullptr, threads_));
  GPKV_RETURN_IF_ERROR(bad_record);
  if (report != nullptr && records != 0) {
    report->findings.push_back(ReplayedLogFinding(pool_, *view, records));
  }
  const LsmView::LogSegment& first = view->log_segments[0];
  log_half_ = first.half;
  log_epoch_ = first.epoch;
  log_bytes_ = first.bytes;
  log_entries_ = entries_of[0];
  next_seq_ = last_seq[1] + 1;
  version->buffer = std::move(buffers[0]);
  version_ = std::move(version);
  if (resume) {
    GPKV_RETURN_IF_ERROR(StartCheckpoint(last_seq[0]));
    auto with_second = std::make_shared<Version>(*version_);
    with_second->buffer = std::move(buffers[1]);
    version_ = std::move(with_second);
    log_bytes_ = view->log_segments[1].bytes;
    log_entries_ = entries_of[1];
    GPKV_RETURN_IF_ERROR(PublishCheckpoint());
    GPKV_RETURN_IF_ERROR(pool_.Sync());
    if (report != nullptr) report->findings.push_back(CompletedCheckpointFinding(pool_, *view));
  }
  if (!pool_.read_only()) GPKV_RETURN_IF_ERROR(WarmUp());
  // After the runs are read: pinning the pool beside those copies would
  // slow the open down.
  StartRegistration();
  return Status::OK();
}

Status LsmGpu::Impl::WarmUp() {
  const uint64_t n = std::min(uint64_t{1} << log2_batch_, kWarmUpEntries);
  cudaStream_t stream = write_stream_;
  // The memory pool keeps what is freed (release threshold), but every
  // allocation larger than what it holds maps new memory: the buffer's
  // carries and a checkpoint's merges grow it for a whole cycle of M
  // batches. One block reserved and freed here is what they carve from.
  uint64_t reserve_units = kReserveBuffers;
  if (const char* units = std::getenv("GPKV_LSM_GPU_RESERVE")) {
    reserve_units = std::strtoull(units, nullptr, 10);
  }
  size_t free_bytes = 0, total_bytes = 0;
  if (reserve_units != 0 && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    const uint64_t bytes = std::min<uint64_t>(
        reserve_units * buffer_entries_ * (shape_.key_size() + 8 + shape_.value_size),
        free_bytes / 4);
    void* block = nullptr;
    if (cudaMallocAsync(&block, bytes, stream) == cudaSuccess) cudaFreeAsync(block, stream);
  }
  cudaGetLastError();  // no reserve: the batches map memory as they go
  {
    Scratch scratch(stream);
    uint64_t* keys = nullptr;
    uint8_t* values = nullptr;
    GPKV_RETURN_IF_ERROR(scratch.Take(n * shape_.key_words, &keys, "warm-up keys"));
    GPKV_RETURN_IF_ERROR(scratch.Take(n * shape_.value_size, &values, "warm-up values"));
    WarmUpKeysKernel<<<Blocks(n), kBlock, 0, stream>>>(keys, shape_.key_words, n);
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(values, 0, n * shape_.value_size, stream),
                              Where() + ": warm-up values");
    auto sorted = SortBatch(reinterpret_cast<const uint8_t*>(keys), values, n, MakeMeta(0, false),
                            nullptr, scratch, nullptr);
    if (!sorted.ok()) return sorted.status();
    auto merged = Merge(*sorted, *sorted, /*drop_tombstones=*/false);
    if (!merged.ok()) return merged.status();
    GPKV_RETURN_IF_ERROR(BuildFences(**merged));
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), Where() + ": warm-up");
  return Status::OK();
}

void LsmGpu::Impl::StartRegistration() {
  if (pool_.read_only()) {
    registration_done_.store(true, std::memory_order_release);
    return;
  }
  registration_thread_ = std::thread([this] {
    Status status = gpkv::gpu::CudaStatus(cudaSetDevice(device_), "cudaSetDevice");
    if (status.ok()) {
      auto registration = gpkv::gpu::PoolRegistration::Acquire(pool_);
      if (registration.ok()) {
        registration_ = std::move(*registration);
      } else {
        status = registration.status();
      }
    }
    registration_status_ = status;
    registration_done_.store(true, std::memory_order_release);
  });
}

gpkv::gpu::PoolRegistration* LsmGpu::Impl::ReadyRegistration() {
  if (!registration_done_.load(std::memory_order_acquire)) {
    if (!registration_wait_) return nullptr;
    PhaseTimer timer(&times_.registration_wait);
    registration_thread_.join();
  }
  // A pool the driver cannot pin (Unsupported) or a failed registration:
  // runs reach it through pageable memory, as before the registration.
  return registration_.get();
}

Result<RunPtr> LsmGpu::Impl::SortBatch(const uint8_t* key_bytes, const uint8_t* values, size_t n,
                                       uint64_t meta, uint8_t* first_flags, Scratch& scratch,
                                       uint32_t* unique_of) {
  cudaStream_t stream = scratch.stream();
  const uint32_t W = shape_.key_words;
  const auto* keys = reinterpret_cast<const uint64_t*>(key_bytes);
  uint32_t *perm = nullptr, *perm_out = nullptr, *last = nullptr;
  uint64_t *word = nullptr, *word_out = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &perm, "sort permutation"));
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &perm_out, "sort permutation"));
  if (W > 1) GPKV_RETURN_IF_ERROR(scratch.Take(n, &word, "sort keys"));
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &word_out, "sort keys"));
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &last, "sort flags"));
  IotaKernel<<<Blocks(n), kBlock, 0, stream>>>(perm, n);
  // Stable LSD passes: the least significant word first, the input position
  // as payload, so equal keys stay in input order. One-word keys are sorted
  // from the input as they are, and the sort's output is then the sorted
  // keys themselves (no gather of a word, no gather of keys through perm).
  const uint64_t* sort_in = W == 1 ? keys : word;
  size_t bytes = 0;
  auto sort = [&](void* storage, size_t& size) {
    return cub::DeviceRadixSort::SortPairs(storage, size, sort_in, word_out, perm, perm_out,
                                           static_cast<int64_t>(n), 0, 64, stream);
  };
  GPKV_RETURN_IF_ERROR(CubTempBytes(sort, &bytes, "cub::DeviceRadixSort (size)"));
  uint8_t* storage = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(bytes, &storage, "radix sort"));
  for (uint32_t w = 0; w < W; ++w) {
    if (W > 1) {
      DispatchWords(W, [&](auto words) {
        ExtractWordKernel<decltype(words)::value>
            <<<Blocks(n), kBlock, 0, stream>>>(keys, perm, w, word, n);
      });
    }
    GPKV_RETURN_IF_ERROR(RunCub(sort, CubTempStorage{storage, bytes}, "cub::DeviceRadixSort"));
    std::swap(perm, perm_out);
  }
  const uint64_t* sorted = W == 1 ? word_out : nullptr;
  DispatchWords(W, [&](auto words) {
    SortedFlagsKernel<decltype(words)::value>
        <<<Blocks(n), kBlock, 0, stream>>>(keys, sorted, perm, n, last, first_flags);
  });
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": sort kernels"));
  uint64_t* positions = nullptr;
  uint64_t unique = 0;
  GPKV_RETURN_IF_ERROR(Positions(last, n, &positions, &unique, pinned_, scratch));
  auto run = NewRun(unique, stream);
  if (!run.ok()) return run.status();
  const DeviceRun& out = **run;
  DispatchWords(W, [&](auto words) {
    GatherBatchKernel<decltype(words)::value><<<Blocks(n), kBlock, 0, stream>>>(
        keys, sorted, values, perm, last, positions, n, meta, shape_.value_size, out.keys(),
        out.meta(), out.values(), unique_of);
  });
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": gather a sorted batch"));
  return run;
}

Result<RunPtr> LsmGpu::Impl::Merge(const RunPtr& newer, const RunPtr& older, bool drop_tombstones) {
  cudaStream_t stream = write_stream_;
  Scratch scratch(stream);
  const RunView a = ArraysOf(*newer);
  const RunView b =
      older != nullptr ? ArraysOf(*older) : RunView{a.keys, a.meta, a.values, 0, nullptr, 0};
  const uint64_t n = a.count + b.count;
  const uint64_t tiles = DispatchWords(shape_.key_words, [&](auto words) -> uint64_t {
    constexpr uint32_t W = decltype(words)::value;
    return (n + kMergeTile<W> - 1) / kMergeTile<W>;
  });
  uint64_t* splits = nullptr;
  uint32_t* tile_counts = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(tiles + 1, &splits, "merge splits"));
  GPKV_RETURN_IF_ERROR(scratch.Take(tiles, &tile_counts, "merge tile counts"));
  DispatchWords(shape_.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
    MergeSplitsKernel<W><<<Blocks(tiles + 1), kBlock, 0, stream>>>(a, b, tiles, splits);
    if (tiles != 0) {
      MergeCountKernel<W><<<static_cast<unsigned>(tiles), kMergeThreads, 0, stream>>>(
          a, b, splits, drop_tombstones, tile_counts);
    }
  });
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": merge counts"));
  uint64_t* offsets = nullptr;
  uint64_t total = 0;
  GPKV_RETURN_IF_ERROR(Positions(tile_counts, tiles, &offsets, &total, pinned_, scratch));
  auto run = NewRun(total, stream);
  if (!run.ok()) return run.status();
  const DeviceRun& out = **run;
  if (tiles != 0) {
    DispatchWords(shape_.key_words, [&](auto words) {
      constexpr uint32_t W = decltype(words)::value;
      MergeWriteKernel<W><<<static_cast<unsigned>(tiles), kMergeThreads, 0, stream>>>(
          a, b, splits, drop_tombstones, offsets, shape_.value_size, out.keys(), out.meta(),
          out.values());
    });
  }
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": merge writes"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), Where() + ": merge");
  return run;
}

Result<RunPtr> LsmGpu::Impl::MergeAll(const std::vector<RunPtr>& newest_first,
                                      bool drop_tombstones) {
  // Pairwise, newest first: each merge keeps the newer entry of a key, so
  // the newest survives to the end, where tombstones go (cpu::MergeRuns
  // keeps the same entries in one multiway pass).
  RunPtr merged = newest_first[0];
  if (newest_first.size() == 1) {
    if (!drop_tombstones) return merged;
    return Merge(merged, nullptr, /*drop_tombstones=*/true);
  }
  for (size_t s = 1; s < newest_first.size(); ++s) {
    auto next = Merge(merged, newest_first[s], drop_tombstones && s + 1 == newest_first.size());
    if (!next.ok()) return next.status();
    merged = std::move(*next);
  }
  return merged;
}

Status LsmGpu::Impl::Put(const uint8_t* keys, const uint8_t* values, size_t n) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  if (n == 0) return Status::OK();
  if (n > UINT32_MAX) return Status::InvalidArgument(Where() + ": a batch holds < 2^32 pairs");
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
  Scratch scratch(write_stream_);
  const uint8_t *device_keys = nullptr, *device_values = nullptr;
  auto sorted = [&]() -> Result<RunPtr> {
    PhaseTimer timer(&times_.sort);
    GPKV_RETURN_IF_ERROR(StageIn(scratch, keys, n * shape_.key_size(), &device_keys, "keys"));
    GPKV_RETURN_IF_ERROR(StageIn(scratch, values, n * shape_.value_size, &device_values, "values"));
    return SortBatch(device_keys, device_values, n, MakeMeta(next_seq_, false), nullptr, scratch,
                     nullptr);
  }();
  if (!sorted.ok()) return sorted.status();
  return Write(std::move(*sorted), /*tombstones=*/false);
}

Status LsmGpu::Impl::Erase(const uint8_t* keys, uint8_t* erased, size_t n) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  if (n == 0) return Status::OK();
  if (n > UINT32_MAX) return Status::InvalidArgument(Where() + ": a batch holds < 2^32 keys");
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
  cudaStream_t stream = write_stream_;
  Scratch scratch(stream);
  const uint8_t* device_keys = nullptr;
  GPKV_RETURN_IF_ERROR(StageIn(scratch, keys, n * shape_.key_size(), &device_keys, "keys"));
  uint8_t* first = nullptr;
  uint32_t* unique_of = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &first, "erase flags"));
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &unique_of, "erase positions"));
  auto sorted =
      SortBatch(device_keys, nullptr, n, MakeMeta(next_seq_, true), first, scratch, unique_of);
  if (!sorted.ok()) return sorted.status();
  const RunPtr& unique = *sorted;
  // Only keys that are live get a tombstone (writers are serialised:
  // version_ is ours).
  uint32_t* live = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(unique->count, &live, "erase live flags"));
  const DeviceSources sources = version_->Sources();
  DispatchWords(shape_.key_words, [&](auto words) {
    LiveKernel<decltype(words)::value><<<Blocks(unique->count), kBlock, 0, stream>>>(
        sources, unique->keys(), unique->count, live);
  });
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": erase lookups"));
  if (erased != nullptr) {
    const bool direct = IsDeviceMemory(erased, device_);
    uint8_t* out = erased;
    if (!direct) GPKV_RETURN_IF_ERROR(scratch.Take(n, &out, "erased flags"));
    ErasedKernel<<<Blocks(n), kBlock, 0, stream>>>(first, unique_of, live, n, out);
    GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": erased flags"));
    if (!direct) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(erased, out, n, cudaMemcpyDeviceToHost, stream),
                                "copy erased flags");
    }
  }
  uint64_t* positions = nullptr;
  uint64_t total = 0;
  GPKV_RETURN_IF_ERROR(Positions(live, unique->count, &positions, &total, pinned_, scratch));
  auto tombstones = NewRun(total, stream);
  if (!tombstones.ok()) return tombstones.status();
  const DeviceRun& out = **tombstones;
  DispatchWords(shape_.key_words, [&](auto words) {
    FilterGatherKernel<decltype(words)::value><<<Blocks(unique->count), kBlock, 0, stream>>>(
        ArraysOf(*unique), live, positions, shape_.value_size, out.keys(), out.meta(),
        out.values());
  });
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": gather tombstones"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), Where() + ": erase");
  return Write(std::move(*tombstones), /*tombstones=*/true);
}

Status LsmGpu::Impl::Write(RunPtr batch, bool tombstones) {
  if (batch->count == 0) return Status::OK();
  const uint64_t record_bytes =
      ColumnarRecordBytes(batch->count, shape_.key_size(), shape_.value_size, tombstones);
  // The rule both backends follow (layout.h PlanWrite).
  const WritePlan plan = PlanWrite(pending_ != nullptr, pending_ != nullptr ? pending_->batches : 0,
                                   publish_batch_, log_halves_, log_entries_, log_bytes_,
                                   batch->count, record_bytes, buffer_entries_, half_capacity_);
  if (plan.publish_first) GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  if (plan.step == WriteStep::kCheckpoint) GPKV_RETURN_IF_ERROR(StartCheckpoint(next_seq_ - 1));
  if (plan.step == WriteStep::kFlush) {
    ++times_.flushes;
    GPKV_RETURN_IF_ERROR(Flush(std::move(batch)));
  } else {
    ++times_.log_appends;
    GPKV_RETURN_IF_ERROR(AppendToLog(std::move(batch), tombstones));
  }
  ++next_seq_;
  ++times_.batches;
  {
    PhaseTimer timer(&times_.compact);
    GPKV_RETURN_IF_ERROR(MaybeCompact());
  }
  PhaseTimer timer(&times_.sync);
  return pool_.Sync();
}

Result<std::vector<RunPtr>> LsmGpu::Impl::CarryIntoBuffer(const std::vector<RunPtr>& runs,
                                                          RunPtr batch) {
  RunPtr newest = std::move(batch);
  size_t older = 0;
  while (older < runs.size() &&
         DeviceBufferCarries(newest->count, runs[older]->count, runs.size() - older)) {
    auto merged = Merge(newest, runs[older], /*drop_tombstones=*/false);
    if (!merged.ok()) return merged.status();
    newest = std::move(*merged);
    ++older;
  }
  // Queries search it as often as a level's run: its fences too.
  GPKV_RETURN_IF_ERROR(BuildFences(*newest));
  std::vector<RunPtr> next = {std::move(newest)};
  next.insert(next.end(), runs.begin() + older, runs.end());
  return next;
}

Status LsmGpu::Impl::AppendToLog(RunPtr batch, bool tombstones) {
  // The record first, on log_stream_: its checksum summed on the device and
  // its keys and values copied from the device into the log (at the link's
  // speed once the pool is registered; through pageable memory before).
  // Past the published bytes: nothing reads them until the log word moves.
  LogRecordHeader header = ColumnarRecordHeader(next_seq_, batch->count, tombstones);
  const uint64_t record_offset = log_offset_ + log_half_ * half_capacity_ + log_bytes_;
  ReadyRegistration();
  {
    PhaseTimer timer(&times_.log);
    GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(batch_ready_, write_stream_),
                              Where() + ": cudaEventRecord");
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(log_stream_, batch_ready_, 0),
                              Where() + ": cudaStreamWaitEvent");
    GPKV_RETURN_IF_ERROR(RecordChecksumTerms(*batch, header));
    const RecordArrays arrays = ColumnarRecordArrays(pool_, record_offset, header, shape_);
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(arrays.keys, batch->keys(), batch->count * shape_.key_size(),
                        cudaMemcpyDeviceToHost, log_stream_),
        Where() + ": copy a batch's keys into the log");
    if (arrays.values != nullptr) {
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(arrays.values, batch->values(), batch->count * shape_.value_size,
                          cudaMemcpyDeviceToHost, log_stream_),
          Where() + ": copy a batch's values into the log");
    }
  }
  // Meanwhile the next buffer, on write_stream_ (see DeviceBufferCarries).
  // A batch that cannot be merged (no device memory) publishes nothing.
  auto next_buffer = [&] {
    PhaseTimer timer(&times_.buffer);
    return CarryIntoBuffer(version_->buffer, batch);
  }();
  PhaseTimer timer(&times_.log);
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(log_stream_),
                            Where() + ": copy a batch into the log");
  if (!next_buffer.ok()) return next_buffer.status();
  const uint64_t words =
      ColumnarRecordWords(batch->count, shape_.key_size(), shape_.value_size, tombstones);
  header.checksum = RunChecksumFinish(LogRecordSeed(log_epoch_, header), words, *record_sum_);
  const uint64_t record_bytes = FinishLogRecord(pool_, record_offset, header, shape_);
  times_.copied_bytes += record_bytes;
  PublishLogWord(pool_, root_offset_, log_half_, log_epoch_, log_bytes_ + record_bytes);
  log_bytes_ += record_bytes;
  log_entries_ += batch->count;
  if (pending_ != nullptr) ++pending_->batches;

  std::shared_ptr<const Version> next = [&] {
    auto version = std::make_shared<Version>(*version_);
    version->buffer = std::move(*next_buffer);
    return version;
  }();
  {
    // The old version is released outside the lock (freeing device memory
    // waits for the device).
    std::unique_lock<std::shared_mutex> lock(version_mutex_);
    version_.swap(next);
  }
  return Status::OK();
}

Status LsmGpu::Impl::PrepareLevelRun(DeviceRun& run, RunSummary* summary, uint64_t* checksum) {
  {
    PhaseTimer timer(&times_.facts);
    GPKV_RETURN_IF_ERROR(RunFacts(run, checksum));
  }
  {
    PhaseTimer timer(&times_.fences);
    GPKV_RETURN_IF_ERROR(BuildFences(run));
  }
  summary->entries = run.count;
  summary->tombstones = run.tombstones;
  summary->max_seq = run.max_seq;
  times_.copied_bytes += run.array_bytes();
  return Status::OK();
}

Result<uint64_t> LsmGpu::Impl::WriteRunToPool(DeviceRun& run) {
  // Runs are copied into the pool at the link's speed when the mapping is
  // registered (tmpfs, DAX); before the registration started at open is
  // done, and for a file the driver cannot pin, through pageable memory.
  const bool registered = ReadyRegistration() != nullptr;
  if (!registered) ++times_.pageable_copies;
  RunSummary summary;
  uint64_t checksum = 0;
  GPKV_RETURN_IF_ERROR(PrepareLevelRun(run, &summary, &checksum));
  const uint64_t array_bytes = run.array_bytes();
  const auto start = std::chrono::steady_clock::now();
  double copy_seconds = 0;
  auto written = WriteRunWith(
      pool_, table_id_, shape_, run.count, summary, checksum,
      [&](uint8_t* keys, uint8_t*, uint8_t*) -> Status {
        PhaseTimer timer(&copy_seconds);
        // The three arrays lie back to back in both places.
        GPKV_CUDA_RETURN_IF_ERROR(
            cudaMemcpyAsync(keys, run.base, array_bytes, cudaMemcpyDeviceToHost, write_stream_),
            Where() + ": copy a run into the pool");
        GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(write_stream_),
                                  Where() + ": copy a run into the pool");
        return Status::OK();
      });
  times_.copy += copy_seconds;
  times_.persist +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
      copy_seconds;
  return written;
}

Result<RunPtr> LsmGpu::Impl::CascadeMerge(std::vector<RunPtr> sources, uint64_t incoming,
                                          Manifest* next, Version* next_version,
                                          std::vector<uint64_t>* replaced, uint32_t* target) {
  const CascadePlan plan = PlanCascade(manifest_, log2_batch_, incoming);
  if (plan.target >= kMaxLevels) {
    return Status::PoolFull(pool_.Where("table '" + table_name_ + "' root", root_offset_) +
                            ": the levels cannot grow past " + std::to_string(kMaxLevels));
  }
  for (uint32_t i = 0; i < plan.merged_count; ++i) {
    const uint32_t level = plan.merged[i];
    sources.push_back(version_->levels[level]);
    replaced->push_back(manifest_.levels[level].offset);
    next->levels[level] = {0, 0};
    next_version->levels[level] = nullptr;
  }
  *target = plan.target;
  PhaseTimer timer(&times_.merge);
  return MergeAll(sources, /*drop_tombstones=*/!plan.older_levels);
}

Status LsmGpu::Impl::Flush(RunPtr batch) {
  // The cascade as cpu/backend.cc.
  std::vector<RunPtr> sources = {batch};
  sources.insert(sources.end(), version_->buffer.begin(), version_->buffer.end());
  Manifest next = manifest_;
  auto next_version = std::make_shared<Version>(*version_);
  next_version->buffer.clear();
  std::vector<uint64_t> replaced;
  uint32_t target = 0;
  auto all = CascadeMerge(std::move(sources), batch->count + log_entries_, &next,
                          next_version.get(), &replaced, &target);
  if (!all.ok()) return all.status();
  RunPtr merged = std::move(*all);
  if (merged->count != 0) {
    auto offset = WriteRunToPool(*merged);
    if (!offset.ok()) return offset.status();
    next.levels[target] = {*offset, merged->count};
    next_version->levels[target] = merged;
  }
  next.applied_seq = next_seq_;
  PhaseTimer timer(&times_.install);
  return Install(next, replaced, std::move(next_version));
}

Status LsmGpu::Impl::StartCheckpoint(uint64_t applied_seq) {
  Manifest next = CheckpointManifest(manifest_, applied_seq);
  auto pending = std::make_unique<Pending>();
  auto next_version = std::make_shared<Version>(*version_);
  next_version->buffer.clear();
  if (!version_->buffer.empty()) {
    uint32_t target = 0;
    auto all = CascadeMerge(version_->buffer, log_entries_, &next, next_version.get(),
                            &pending->replaced, &target);
    if (!all.ok()) return all.status();
    RunPtr merged = std::move(*all);
    if (merged->count != 0) {
      RunSummary summary;
      uint64_t checksum = 0;
      GPKV_RETURN_IF_ERROR(PrepareLevelRun(*merged, &summary, &checksum));
      auto extent = AllocateRun(pool_, table_id_, shape_, merged->count);
      if (!extent.ok()) return extent.status();
      next.levels[target] = {extent->offset, merged->count};
      next_version->levels[target] = merged;
      pending->run = merged;
      pending->extent = *extent;
      const uint64_t array_bytes = merged->array_bytes();
      ReadyRegistration();  // registered: the copy runs at the link's speed
      // The copy runs behind the next batches: its own stream (the record
      // copies and the merges go on) and its own thread (it waits for the
      // copy, then writes the header and persists).
      Pending* copy = pending.get();
      copy->copied = std::async(std::launch::async, [this, copy, summary, checksum, array_bytes] {
        const auto start = std::chrono::steady_clock::now();
        // In slices, one in flight at a time: the record copies of the
        // batches meanwhile share the link instead of queuing behind the
        // whole run.
        auto copy_run = [&]() -> Status {
          GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
          const uint64_t slice = checkpoint_chunk_ == 0 ? array_bytes : checkpoint_chunk_;
          const std::string what = Where() + ": copy a checkpoint's run into the pool";
          for (uint64_t at = 0; at < array_bytes; at += slice) {
            GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(copy->extent.keys + at, copy->run->base + at,
                                                      std::min(slice, array_bytes - at),
                                                      cudaMemcpyDeviceToHost, checkpoint_stream_),
                                      what);
            GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(checkpoint_stream_), what);
          }
          return Status::OK();
        };
        const Status status = copy_run();
        if (status.ok()) FinishRun(pool_, table_id_, shape_, copy->extent, summary, checksum);
        copy->copy_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return status;
      });
    }
  }
  ++times_.checkpoints;
  SetLevelCount(&next);
  pending->next = next;
  pending_ = std::move(pending);
  EnterLogHalf(next);
  // Queries read the merged run from here on (GPU memory); the pool's
  // manifest names the replaced runs until the publish.
  InstallLevels(std::move(next_version));
  return Status::OK();
}

void LsmGpu::Impl::EnterLogHalf(const Manifest& manifest) {
  log_half_ = static_cast<uint32_t>(manifest.log_half);
  log_epoch_ = manifest.log_epoch;
  log_bytes_ = 0;
  log_entries_ = 0;
}

void LsmGpu::Impl::InstallLevels(std::shared_ptr<Version> next_version) {
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    const RunPtr& run = next_version->levels[level];
    level_tombstones_[level] = run == nullptr ? 0 : run->tombstones;
  }
  std::shared_ptr<const Version> installed = std::move(next_version);
  {
    std::unique_lock<std::shared_mutex> lock(version_mutex_);
    version_.swap(installed);
  }
  installed.reset();  // the old version, outside the lock
}

Status LsmGpu::Impl::PublishCheckpoint() {
  std::unique_ptr<Pending> pending = std::move(pending_);
  if (pending->copied.valid()) {
    const Status copied = [&] {
      PhaseTimer timer(&times_.checkpoint_wait);
      return pending->copied.get();
    }();
    times_.checkpoint_copy += pending->copy_seconds;
    if (!copied.ok()) {
      pool_.allocator().Free(pending->extent.offset).IgnoreError();
      static_cast<void>(
          broken_ = Status(copied.code(), copied.message() +
                                              " (the table refuses writes until it is reopened; "
                                              "every acknowledged batch is in its log)"));
      return broken_;
    }
  }
  PhaseTimer timer(&times_.install);
  PublishManifest(pool_, root_offset_, &pending->next);
  manifest_ = pending->next;
  return FreeRuns(pool_, pending->replaced);
}

Status LsmGpu::Impl::Compact() {
  std::lock_guard<std::mutex> lock(write_mutex_);
  GPKV_RETURN_IF_ERROR(broken_);
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
  GPKV_RETURN_IF_ERROR(CompactLocked());
  return pool_.Sync();
}

Status LsmGpu::Impl::CompactLocked() {
  if (pending_ != nullptr) GPKV_RETURN_IF_ERROR(PublishCheckpoint());
  std::vector<RunPtr> sources = version_->buffer;
  std::vector<uint64_t> replaced;
  for (uint32_t level = 0; level < kMaxLevels; ++level) {
    if (version_->levels[level] == nullptr) continue;
    sources.push_back(version_->levels[level]);
    replaced.push_back(manifest_.levels[level].offset);
  }
  if (sources.empty()) return Status::OK();
  auto all = MergeAll(sources, /*drop_tombstones=*/true);
  if (!all.ok()) return all.status();
  RunPtr merged = std::move(*all);
  Manifest next = manifest_;
  auto next_version = std::make_shared<Version>();
  for (RunRef& ref : next.levels) ref = {0, 0};
  if (merged->count != 0) {
    uint32_t target = 0;
    while (LevelCapacity(log2_batch_, target) < merged->count) ++target;
    auto offset = WriteRunToPool(*merged);
    if (!offset.ok()) return offset.status();
    next.levels[target] = {*offset, merged->count};
    next_version->levels[target] = merged;
  }
  next.applied_seq = next_seq_ - 1;
  next.compactions += 1;
  return Install(next, replaced, std::move(next_version));
}

Status LsmGpu::Impl::MaybeCompact() {
  if (!NeedsCompaction(Levels(), level_tombstones_, max_dead_percent_)) return Status::OK();
  return CompactLocked();
}

Status LsmGpu::Impl::Install(Manifest next, const std::vector<uint64_t>& replaced,
                             std::shared_ptr<Version> next_version) {
  EmptyLogHalf(manifest_, &next);
  PublishManifest(pool_, root_offset_, &next);
  PublishLogWord(pool_, root_offset_, static_cast<uint32_t>(next.log_half), next.log_epoch, 0);
  manifest_ = next;
  EnterLogHalf(next);
  InstallLevels(std::move(next_version));
  // Queries read the device copies, never the pool's runs: the replaced
  // extents can go now (their device copies go with the last version
  // holding them).
  return FreeRuns(pool_, replaced);
}

// ------------------------------------------------------------------ facade

Status LsmGpu::DeviceUsable(int device) { return gpkv::gpu::DeviceUsable(device); }

Result<std::unique_ptr<LsmGpu>> LsmGpu::Open(pm::Pool& pool, const std::string& table_name,
                                             uint64_t root_offset, const TableOptions& options,
                                             int threads, recovery::Report* report, int device) {
  GPKV_RETURN_IF_ERROR(gpkv::gpu::DeviceUsable(device));
  auto impl = std::make_unique<Impl>(pool, table_name, root_offset, threads, device);
  GPKV_RETURN_IF_ERROR(impl->Recover(options, report));
  return std::unique_ptr<LsmGpu>(new LsmGpu(std::move(impl)));
}

LsmGpu::LsmGpu(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LsmGpu::~LsmGpu() = default;

Status LsmGpu::Close() { return impl_->Close(); }

Status LsmGpu::Put(const uint8_t* keys, const uint8_t* values, size_t n) {
  return impl_->Put(keys, values, n);
}
Status LsmGpu::Erase(const uint8_t* keys, uint8_t* erased, size_t n) {
  return impl_->Erase(keys, erased, n);
}
Status LsmGpu::Compact() { return impl_->Compact(); }
Status LsmGpu::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n) {
  return impl_->Get(keys, values, found, n);
}
Status LsmGpu::Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n) {
  return impl_->Count(lo, hi, counts, n);
}
Status LsmGpu::Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n) {
  return impl_->Range(lo, hi, results, n);
}
Status LsmGpu::RangeOnDevice(const uint8_t* lo, const uint8_t* hi,
                             Table::DeviceRangeResults* results, size_t n) {
  return impl_->RangeOnDevice(lo, hi, results, n);
}
Status LsmGpu::Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                         size_t n) {
  return impl_->Neighbor(true, keys, next_keys, values, found, n);
}
Status LsmGpu::Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values,
                           uint8_t* found, size_t n) {
  return impl_->Neighbor(false, keys, previous_keys, values, found, n);
}
Status LsmGpu::Scan(const Table::ScanVisitor& visit) { return impl_->Scan(visit); }
Result<LsmStats> LsmGpu::Stats() { return impl_->Stats(); }

}  // namespace gpkv::lsm::gpu

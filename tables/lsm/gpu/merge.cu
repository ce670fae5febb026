// GpuBackend's merges: two runs merged in tiles of the merge path (the
// newer entry of a key kept), runs merged pairwise newest first, and the
// device write buffer's carries.
#include <cub/cub.cuh>

#include "gpu/cub_temp_storage.h"
#include "tables/lsm/gpu/backend.cuh"

namespace gpkv::lsm::gpu {
namespace {

// Two runs (each sorted, one entry per key) merged in tiles of kMergeTile
// outputs of the merge path, the newer entry first on equal keys. A tile's
// keys are read once into shared memory, each thread merges kMergeItems
// consecutive outputs there, and an output is kept unless it is the older
// entry of a key the newer run holds (or, when they are dropped, a
// tombstone). The count pass sums a tile's kept outputs; the write pass
// merges the tile again and writes its kept entries at the tile's offset
// (a scan of the counts), keys from shared memory: one read of the keys per
// pass and one of meta and values (cub::DeviceMerge of references, a flags
// kernel, a scan over every output and a gather through the references
// would make four passes over arrays of the merge's length).
constexpr uint32_t kMergeThreads = 256;
// Outputs per thread: 8 for one-word keys (4 measured the same within the
// spread on an H100), 4 for longer ones (a tile of 8 x
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

Result<DeviceRunPtr> GpuBackend::MergePair(const DeviceRunPtr& newer, const DeviceRunPtr& older,
                                           bool drop_tombstones) {
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
  auto run = NewRunOfKept(tile_counts, tiles, scratch, &offsets);
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

Result<RunPtr> GpuBackend::Merge(const std::vector<RunPtr>& newest_first, bool drop_tombstones) {
  PhaseTimer timer(&times_.merge);
  // Pairwise, newest first: each merge keeps the newer entry of a key, so
  // the newest survives to the end, where tombstones go (cpu::MergeRuns
  // keeps the same entries in one multiway pass).
  DeviceRunPtr merged = AsDevice(newest_first[0]);
  if (newest_first.size() == 1) {
    if (!drop_tombstones) return RunPtr(merged);
    auto dropped = MergePair(merged, nullptr, /*drop_tombstones=*/true);
    if (!dropped.ok()) return dropped.status();
    return RunPtr(std::move(*dropped));
  }
  for (size_t s = 1; s < newest_first.size(); ++s) {
    auto next = MergePair(merged, AsDevice(newest_first[s]),
                          drop_tombstones && s + 1 == newest_first.size());
    if (!next.ok()) return next.status();
    merged = std::move(*next);
  }
  return RunPtr(std::move(merged));
}

Result<std::vector<DeviceRunPtr>> GpuBackend::CarryInto(const std::vector<DeviceRunPtr>& runs,
                                                        DeviceRunPtr batch) {
  DeviceRunPtr newest = std::move(batch);
  size_t older = 0;
  while (older < runs.size() &&
         DeviceBufferCarries(newest->count, runs[older]->count, runs.size() - older)) {
    auto merged = MergePair(newest, runs[older], /*drop_tombstones=*/false);
    if (!merged.ok()) return merged.status();
    newest = std::move(*merged);
    ++older;
  }
  // Queries search it as often as a level's run: its fences too.
  GPKV_RETURN_IF_ERROR(BuildFences(*newest));
  std::vector<DeviceRunPtr> next = {std::move(newest)};
  next.insert(next.end(), runs.begin() + older, runs.end());
  return next;
}

Result<BufferPtr> GpuBackend::CarryIntoBuffer(const BufferPtr& buffer, const RunPtr& batch) {
  // On write_stream_, beside a log record's copy on log_stream_.
  PhaseTimer timer(&times_.buffer);
  auto next = CarryInto(static_cast<const GpuBuffer&>(*buffer).runs(), AsDevice(batch));
  if (!next.ok()) return next.status();
  return BufferPtr(std::make_shared<GpuBuffer>(std::move(*next)));
}

}  // namespace gpkv::lsm::gpu

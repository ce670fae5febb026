// Batch kernels of the GPHash GPU backend: get, put, erase and the
// within-batch duplicate pass. One thread per operation; each warp shares
// out its 32 operations (warp.cuh).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "tables/gphash/gpu/kernel_common.cuh"
#include "tables/gphash/gpu/kernels.h"
#include "tables/gphash/gpu/thread.cuh"

namespace gpkv::gpu {
namespace {

using warp::Key;
using warp::kFullMask;

__device__ __forceinline__ uint64_t ThreadIndex() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// The batch position a lane holds when each warp takes ops_per_warp
// operations (lanes >= ops_per_warp hold none: *lane_holds_op false).
__device__ __forceinline__ uint64_t OpPosition(uint32_t ops_per_warp, bool* lane_holds_op) {
  const uint32_t lane = warp::LaneId();
  *lane_holds_op = lane < ops_per_warp;
  return (ThreadIndex() / warp::kWarpSize) * ops_per_warp + lane;
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    SortKeyKernel(const uint8_t* keys, uint64_t count, uint64_t seed, uint32_t* sort_keys,
                  uint32_t* indices) {
  uint64_t i = ThreadIndex();
  if (i >= count) return;
  Key<kKeyWords> key = warp::LoadKey<kKeyWords>(keys + i * 8 * kKeyWords);
  // The low bits pick the bucket (format::BucketIndex): sorted order is address order.
  sort_keys[i] = static_cast<uint32_t>(warp::HashOf(key, seed).primary);
  indices[i] = static_cast<uint32_t>(i);
}

// After a stable sort by hash, equal keys are adjacent and in batch order:
// an operation survives unless a later one (keep_first: an earlier one) in
// its run of equal hashes has the same key.
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    MarkSurvivorKernel(const uint8_t* keys, uint64_t count, const uint32_t* sorted_keys,
                       const uint32_t* sorted_indices, bool keep_first, uint8_t* keep) {
  uint64_t position = ThreadIndex();
  if (position >= count) return;
  uint32_t op = sorted_indices[position];
  uint32_t hash = sorted_keys[position];
  Key<kKeyWords> key = warp::LoadKey<kKeyWords>(keys + uint64_t{op} * 8 * kKeyWords);
  bool survives = true;
  // Walk the run towards the operations that would supersede this one.
  for (uint64_t step = 1;; ++step) {
    uint64_t other_position;
    if (keep_first) {
      if (step > position) break;
      other_position = position - step;
    } else {
      other_position = position + step;
      if (other_position >= count) break;
    }
    if (sorted_keys[other_position] != hash) break;
    Key<kKeyWords> other =
        warp::LoadKey<kKeyWords>(keys + uint64_t{sorted_indices[other_position]} * 8 * kKeyWords);
    bool equal = true;
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) equal &= other.words[w] == key.words[w];
    if (equal) {
      survives = false;
      break;
    }
  }
  keep[op] = survives ? 1 : 0;
}

// The get a lane holds when each warp takes ops_per_warp operations: its
// batch index *op (op_index[i] when op_index is not null) and key. False
// when the lane holds none, or (with leaders) a repeat of a key its run's
// leader looks up.
template <int kKeyWords>
__device__ __forceinline__ bool LaneGetOp(const uint8_t* keys, const uint32_t* op_index,
                                          const uint32_t* leaders, uint64_t count,
                                          uint32_t ops_per_warp, uint64_t* op,
                                          Key<kKeyWords>* key) {
  bool lane_holds_op;
  const uint64_t i = OpPosition(ops_per_warp, &lane_holds_op);
  if (!lane_holds_op || i >= count || (leaders != nullptr && leaders[i] != i)) return false;
  *op = op_index != nullptr ? op_index[i] : i;
  *key = warp::LoadKey<kKeyWords>(keys + *op * 8 * kKeyWords);
  return true;
}

// Looks up operation i (op_index[i] when op_index is not null); with
// leaders, only the sorted positions that lead their key's run.
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    GetKernel(GphashView view, const uint8_t* keys, const uint32_t* op_index,
              const uint32_t* leaders, uint8_t* values, uint8_t* found, uint64_t count,
              uint32_t ops_per_warp) {
  uint64_t op = 0;
  Key<kKeyWords> my_key{};
  const bool has_op = LaneGetOp(keys, op_index, leaders, count, ops_per_warp, &op, &my_key);
  unsigned active = __ballot_sync(kFullMask, has_op);
  while (active != 0) {
    const int source = __ffs(active) - 1;
    active &= active - 1;
    Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    uint64_t value = 0;
    bool hit = warp::WarpGet(view, key, warp::HashOf(key, view.hash_seed), &value);
    if (warp::LaneId() == static_cast<uint32_t>(source)) {
      warp::StoreValue(values + op * view.value_size, hit ? value : 0, view.value_size);
      if (found != nullptr) found[op] = hit ? 1 : 0;
    }
  }
}

// GetKernel's twin with a tile of kSlots (= slots_per_bucket) lanes per key
// (warp::TileGet): each tile runs the operations its own lanes hold, one
// after another, 32 / kSlots tiles side by side.
template <int kKeyWords, int kSlots>
__global__ void __launch_bounds__(kBlockThreads)
    GetTileKernel(GphashView view, const uint8_t* keys, const uint32_t* op_index,
                  const uint32_t* leaders, uint8_t* values, uint8_t* found, uint64_t count,
                  uint32_t ops_per_warp) {
  uint64_t op = 0;
  Key<kKeyWords> my_key{};
  const bool has_op = LaneGetOp(keys, op_index, leaders, count, ops_per_warp, &op, &my_key);
  const uint32_t lane = warp::LaneId();
  const uint32_t tile_base = lane / kSlots * kSlots;
  const unsigned tile_mask = (kSlots == 32 ? kFullMask : ((1u << kSlots) - 1)) << tile_base;
  unsigned active = __ballot_sync(kFullMask, has_op) & tile_mask;
  warp::ReadTally tally;
  while (active != 0) {
    const int source = __ffs(active) - 1;
    active &= active - 1;
    Key<kKeyWords> key;
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w)
      key.words[w] = __shfl_sync(tile_mask, my_key.words[w], source);
    uint64_t value = 0;
    const bool hit = warp::TileGet(view, tile_mask, tile_base, key,
                                   warp::HashOf(key, view.hash_seed), &value, tally);
    if (lane == static_cast<uint32_t>(source)) {
      warp::StoreValue(values + op * view.value_size, hit ? value : 0, view.value_size);
      if (found != nullptr) found[op] = hit ? 1 : 0;
    }
  }
  if (view.cache.reads != nullptr) {
    AddWarpCount(&view.cache.reads[0], tally.cache);
    AddWarpCount(&view.cache.reads[1], tally.pool);
  }
}

// Sorted position p leads its run of equal keys unless position p - 1 holds
// the same key; head_positions[p] = p for leaders, 0 otherwise (a max-scan
// then gives every position its leader).
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    MarkLeadersKernel(const uint8_t* keys, uint64_t count, const uint32_t* sorted_keys,
                      const uint32_t* sorted_indices, uint32_t* head_positions) {
  uint64_t position = ThreadIndex();
  if (position >= count) return;
  bool leads = position == 0 || sorted_keys[position - 1] != sorted_keys[position];
  if (!leads) {
    Key<kKeyWords> key =
        warp::LoadKey<kKeyWords>(keys + uint64_t{sorted_indices[position]} * 8 * kKeyWords);
    Key<kKeyWords> previous =
        warp::LoadKey<kKeyWords>(keys + uint64_t{sorted_indices[position - 1]} * 8 * kKeyWords);
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) leads |= key.words[w] != previous.words[w];
  }
  head_positions[position] = leads ? static_cast<uint32_t>(position) : 0;
}

struct MaxPosition {
  __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const {
    return a > b ? a : b;
  }
};

// Copies each leader's answer to the repeats of its key.
__global__ void __launch_bounds__(kBlockThreads)
    ScatterAnswersKernel(uint32_t value_size, const uint32_t* sorted_indices,
                         const uint32_t* leaders, uint8_t* values, uint8_t* found, uint64_t count) {
  uint64_t position = ThreadIndex();
  if (position >= count || leaders[position] == position) return;
  uint64_t source = sorted_indices[leaders[position]];
  uint64_t target = sorted_indices[position];
  for (uint32_t b = 0; b < value_size; ++b) {
    values[target * value_size + b] = values[source * value_size + b];
  }
  if (found != nullptr) found[target] = found[source];
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    PutKernel(GphashView view, const uint8_t* keys, const uint8_t* values, const uint8_t* keep,
              const uint32_t* op_index, uint64_t count, uint32_t* failed, BatchCounters* counters,
              uint32_t ops_per_warp) {
  bool lane_holds_op;
  const uint64_t i = OpPosition(ops_per_warp, &lane_holds_op);
  bool has_op = lane_holds_op && i < count;
  uint64_t op = 0;
  if (has_op) {
    op = op_index != nullptr ? op_index[i] : i;
    if (keep != nullptr && keep[op] == 0) has_op = false;
  }
  Key<kKeyWords> my_key{};
  uint64_t my_value = 0;
  if (has_op) {
    my_key = warp::LoadKey<kKeyWords>(keys + op * 8 * kKeyWords);
    my_value = warp::LoadValue(values + op * view.value_size, view.value_size);
  }
  unsigned long long inserted = 0;
  unsigned long long updated = 0;
  unsigned active = __ballot_sync(kFullMask, has_op);
  while (active != 0) {
    const int source = __ffs(active) - 1;
    active &= active - 1;
    Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    uint64_t value = __shfl_sync(kFullMask, my_value, source);
    warp::PutOutcome outcome =
        warp::WarpPut(view, view.level_count, key, warp::HashOf(key, view.hash_seed), value, true);
    if (warp::LaneId() == static_cast<uint32_t>(source)) {
      if (outcome == warp::PutOutcome::kInserted) {
        ++inserted;
      } else if (outcome == warp::PutOutcome::kUpdated) {
        ++updated;
      } else {
        unsigned long long position = atomicAdd(&counters->failed, 1ull);
        failed[position] = static_cast<uint32_t>(op);
      }
    }
  }
  AddWarpCount(&counters->inserted, inserted);
  AddWarpCount(&counters->updated, updated);
}

// One warp, the failed puts one after another (see LaunchKick).
template <int kKeyWords>
__global__ void KickKernel(GphashView view, const uint8_t* keys, const uint32_t* ops,
                           uint64_t count, BatchCounters* counters) {
  unsigned long long kicked = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Key<kKeyWords> key = warp::LoadKey<kKeyWords>(keys + uint64_t{ops[i]} * 8 * kKeyWords);
    if (warp::WarpKick<kKeyWords>(view, warp::HashOf(key, view.hash_seed))) ++kicked;
  }
  if (warp::LaneId() == 0) atomicAdd(&counters->kicked, kicked);
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    EraseKernel(GphashView view, const uint8_t* keys, const uint8_t* keep, const uint32_t* op_index,
                uint8_t* erased, uint64_t count, BatchCounters* counters, uint32_t ops_per_warp) {
  bool lane_holds_op;
  const uint64_t i = OpPosition(ops_per_warp, &lane_holds_op);
  const bool in_batch = lane_holds_op && i < count;
  uint64_t op = 0;
  bool has_op = false;
  if (in_batch) {
    op = op_index != nullptr ? op_index[i] : i;
    has_op = keep == nullptr || keep[op] != 0;
    if (!has_op && erased != nullptr) erased[op] = 0;
  }
  Key<kKeyWords> my_key{};
  if (has_op) my_key = warp::LoadKey<kKeyWords>(keys + op * 8 * kKeyWords);
  unsigned long long erased_count = 0;
  unsigned active = __ballot_sync(kFullMask, has_op);
  while (active != 0) {
    const int source = __ffs(active) - 1;
    active &= active - 1;
    Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    bool hit = warp::WarpErase(view, key, warp::HashOf(key, view.hash_seed));
    if (warp::LaneId() == static_cast<uint32_t>(source)) {
      if (erased != nullptr) erased[op] = hit ? 1 : 0;
      if (hit) ++erased_count;
    }
  }
  AddWarpCount(&counters->erased, erased_count);
}

// Operations per warp for a batch of `count`: 32 (one per lane) when the
// batch fills the GPU with warps, fewer for small batches, down to one op per
// warp — a warp runs its operations one after another, so a small batch
// finishes sooner spread over more warps.
uint32_t OpsPerWarp(uint64_t count) {
  int device = 0, multiprocessors = 0;
  cudaGetDevice(&device);
  if (cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device) !=
      cudaSuccess) {
    multiprocessors = 132;
  }
  const uint64_t full_warps = uint64_t{64} * multiprocessors;
  uint64_t per_warp = (count + full_warps - 1) / full_warps;
  return static_cast<uint32_t>(per_warp < 1 ? 1 : per_warp > 32 ? 32 : per_warp);
}

unsigned int WarpBlocksFor(uint64_t count, uint32_t ops_per_warp) {
  uint64_t warps = (count + ops_per_warp - 1) / ops_per_warp;
  return BlocksFor(warps * warp::kWarpSize);
}

// One operation per thread (view.thread_gets), for gets.
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    GetThreadKernel(GphashView view, const uint8_t* keys, const uint32_t* op_index,
                    const uint32_t* leaders, uint8_t* values, uint8_t* found, uint64_t count) {
  const uint64_t i = ThreadIndex();
  if (i >= count || (leaders != nullptr && leaders[i] != i)) return;
  const uint64_t op = op_index != nullptr ? op_index[i] : i;
  const Key<kKeyWords> key = warp::LoadKey<kKeyWords>(keys + op * 8 * kKeyWords);
  uint64_t value = 0;
  const bool hit = thread::ThreadGet(view, key, warp::HashOf(key, view.hash_seed), &value);
  warp::StoreValue(values + op * view.value_size, hit ? value : 0, view.value_size);
  if (found != nullptr) found[op] = hit ? 1 : 0;
}

// ... and for puts (PutKernel's contract).
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    PutThreadKernel(GphashView view, const uint8_t* keys, const uint8_t* values,
                    const uint8_t* keep, const uint32_t* op_index, uint64_t count, uint32_t* failed,
                    BatchCounters* counters) {
  const uint64_t i = ThreadIndex();
  bool has_op = i < count;
  uint64_t op = 0;
  if (has_op) {
    op = op_index != nullptr ? op_index[i] : i;
    if (keep != nullptr && keep[op] == 0) has_op = false;
  }
  unsigned long long inserted = 0, updated = 0;
  if (has_op) {
    const Key<kKeyWords> key = warp::LoadKey<kKeyWords>(keys + op * 8 * kKeyWords);
    const uint64_t value = warp::LoadValue(values + op * view.value_size, view.value_size);
    const warp::PutOutcome outcome =
        thread::ThreadPut(view, key, warp::HashOf(key, view.hash_seed), value);
    if (outcome == warp::PutOutcome::kInserted) {
      inserted = 1;
    } else if (outcome == warp::PutOutcome::kUpdated) {
      updated = 1;
    } else {
      failed[atomicAdd(&counters->failed, 1ull)] = static_cast<uint32_t>(op);
    }
  }
  AddWarpCount(&counters->inserted, inserted);
  AddWarpCount(&counters->updated, updated);
}

// Launches the get kernel the view asks for: GetTileKernel, or (one-shot
// gets) GetKernel, or (thread per op) GetThreadKernel.
template <int kKeyWords>
Status LaunchGetKernel(const GphashView& view, const uint8_t* keys, const uint32_t* op_index,
                       const uint32_t* leaders, uint8_t* values, uint8_t* found, uint64_t count,
                       uint32_t per_warp, cudaStream_t stream) {
  const unsigned int blocks = WarpBlocksFor(count, per_warp);
  if (view.thread_gets) {
    GetThreadKernel<kKeyWords><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
        view, keys, op_index, leaders, values, found, count);
    return CheckLaunch("GetThreadKernel");
  }
  if (view.one_shot_gets) {
    GetKernel<kKeyWords><<<blocks, kBlockThreads, 0, stream>>>(view, keys, op_index, leaders,
                                                               values, found, count, per_warp);
    return CheckLaunch("GetKernel");
  }
  switch (view.slots_per_bucket) {
    case 4:
      GetTileKernel<kKeyWords, 4><<<blocks, kBlockThreads, 0, stream>>>(
          view, keys, op_index, leaders, values, found, count, per_warp);
      break;
    case 8:
      GetTileKernel<kKeyWords, 8><<<blocks, kBlockThreads, 0, stream>>>(
          view, keys, op_index, leaders, values, found, count, per_warp);
      break;
    case 16:
      GetTileKernel<kKeyWords, 16><<<blocks, kBlockThreads, 0, stream>>>(
          view, keys, op_index, leaders, values, found, count, per_warp);
      break;
    default:
      return Status::InvalidArgument("GPU gets support 4, 8 or 16 slots per bucket, not " +
                                     std::to_string(view.slots_per_bucket));
  }
  return CheckLaunch("GetTileKernel");
}

}  // namespace

Status DedupeSortTempBytes(size_t count, size_t* bytes) {
  *bytes = 0;
  GPKV_CUDA_RETURN_IF_ERROR(
      cub::DeviceRadixSort::SortPairs(nullptr, *bytes, static_cast<const uint32_t*>(nullptr),
                                      static_cast<uint32_t*>(nullptr),
                                      static_cast<const uint32_t*>(nullptr),
                                      static_cast<uint32_t*>(nullptr), static_cast<int>(count)),
      "cub::DeviceRadixSort::SortPairs (size query)");
  return Status::OK();
}

Status DedupeScanTempBytes(size_t count, size_t* bytes) {
  *bytes = 0;
  GPKV_CUDA_RETURN_IF_ERROR(
      cub::DeviceScan::InclusiveScan(nullptr, *bytes, static_cast<const uint32_t*>(nullptr),
                                     static_cast<uint32_t*>(nullptr), MaxPosition(),
                                     static_cast<int>(count)),
      "cub::DeviceScan::InclusiveScan (size query)");
  return Status::OK();
}

namespace {

// Sorts the batch's operations by the low 32 bits of their primary hash.
template <int kKeyWords>
Status SortBatch(const GphashView& view, const uint8_t* keys, size_t count,
                 const DedupeScratch& scratch, cudaStream_t stream) {
  SortKeyKernel<kKeyWords><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
      keys, count, view.hash_seed, scratch.sort_keys_in, scratch.indices_in);
  GPKV_RETURN_IF_ERROR(CheckLaunch("SortKeyKernel"));
  size_t temp_bytes = scratch.sort_temp_bytes;
  GPKV_CUDA_RETURN_IF_ERROR(
      cub::DeviceRadixSort::SortPairs(scratch.sort_temp, temp_bytes, scratch.sort_keys_in,
                                      scratch.sort_keys_out, scratch.indices_in,
                                      scratch.indices_out, static_cast<int>(count), 0, 32, stream),
      "cub::DeviceRadixSort::SortPairs of the batch's key hashes");
  return Status::OK();
}

}  // namespace

Status LaunchMarkSurvivors(const GphashView& view, const uint8_t* keys, size_t count,
                           const DedupeScratch& scratch, bool keep_first, uint8_t* keep,
                           cudaStream_t stream) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    constexpr int kKeyWords = decltype(words)::value;
    GPKV_RETURN_IF_ERROR(SortBatch<kKeyWords>(view, keys, count, scratch, stream));
    MarkSurvivorKernel<kKeyWords><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
        keys, count, scratch.sort_keys_out, scratch.indices_out, keep_first, keep);
    return CheckLaunch("MarkSurvivorKernel");
  });
}

Status LaunchGet(const GphashView& view, const uint8_t* keys, uint8_t* values, uint8_t* found,
                 size_t count, cudaStream_t stream) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    return LaunchGetKernel<decltype(words)::value>(view, keys, nullptr, nullptr, values, found,
                                                   count, OpsPerWarp(count), stream);
  });
}

Status LaunchGetSorted(const GphashView& view, const uint8_t* keys, uint8_t* values, uint8_t* found,
                       size_t count, const DedupeScratch& scratch, cudaStream_t stream) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    constexpr int kKeyWords = decltype(words)::value;
    GPKV_RETURN_IF_ERROR(SortBatch<kKeyWords>(view, keys, count, scratch, stream));
    // The sort's input arrays are free again: sort_keys_in holds the heads.
    MarkLeadersKernel<kKeyWords><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
        keys, count, scratch.sort_keys_out, scratch.indices_out, scratch.sort_keys_in);
    GPKV_RETURN_IF_ERROR(CheckLaunch("MarkLeadersKernel"));
    size_t temp_bytes = scratch.scan_temp_bytes;
    GPKV_CUDA_RETURN_IF_ERROR(cub::DeviceScan::InclusiveScan(
                                  scratch.scan_temp, temp_bytes, scratch.sort_keys_in,
                                  scratch.leaders, MaxPosition(), static_cast<int>(count), stream),
                              "cub::DeviceScan::InclusiveScan of the batch's run leaders");
    GPKV_RETURN_IF_ERROR(LaunchGetKernel<kKeyWords>(view, keys, scratch.indices_out,
                                                    scratch.leaders, values, found, count,
                                                    OpsPerWarp(count), stream));
    ScatterAnswersKernel<<<BlocksFor(count), kBlockThreads, 0, stream>>>(
        view.value_size, scratch.indices_out, scratch.leaders, values, found, count);
    return CheckLaunch("ScatterAnswersKernel");
  });
}

Status LaunchPut(const GphashView& view, const uint8_t* keys, const uint8_t* values,
                 const uint8_t* keep, const uint32_t* op_index, size_t count, uint32_t* failed,
                 BatchCounters* counters, cudaStream_t stream) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    if (view.thread_puts) {
      PutThreadKernel<decltype(words)::value><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
          view, keys, values, keep, op_index, count, failed, counters);
      return CheckLaunch("PutThreadKernel");
    }
    const uint32_t per_warp = OpsPerWarp(count);
    PutKernel<decltype(words)::value><<<WarpBlocksFor(count, per_warp), kBlockThreads, 0, stream>>>(
        view, keys, values, keep, op_index, count, failed, counters, per_warp);
    return CheckLaunch("PutKernel");
  });
}

Status LaunchKick(const GphashView& view, const uint8_t* keys, const uint32_t* ops, size_t count,
                  BatchCounters* counters, cudaStream_t stream) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    KickKernel<decltype(words)::value>
        <<<1, warp::kWarpSize, 0, stream>>>(view, keys, ops, count, counters);
    return CheckLaunch("KickKernel");
  });
}

Status LaunchErase(const GphashView& view, const uint8_t* keys, const uint8_t* keep,
                   const uint32_t* op_index, uint8_t* erased, size_t count, BatchCounters* counters,
                   cudaStream_t stream) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    const uint32_t per_warp = OpsPerWarp(count);
    EraseKernel<decltype(words)::value>
        <<<WarpBlocksFor(count, per_warp), kBlockThreads, 0, stream>>>(
            view, keys, keep, op_index, erased, count, counters, per_warp);
    return CheckLaunch("EraseKernel");
  });
}

}  // namespace gpkv::gpu

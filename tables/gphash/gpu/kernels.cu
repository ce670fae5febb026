// Batch kernels of the GPHash GPU backend: get, put, erase and the
// within-batch duplicate pass. One thread per operation; each warp shares
// out its operations (warp::ShareWork) to the warp-level operations of
// warp.cuh.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <string>

#include "gpu/device_memory.h"
#include "tables/gphash/gpu/kernel_common.cuh"
#include "tables/gphash/gpu/kernels.h"
#include "tables/gphash/gpu/thread.cuh"

namespace gpkv::gphash::gpu {

using gpkv::gpu::CubTempBytes;
using gpkv::gpu::CudaStatus;
using gpkv::gpu::RunCub;

namespace {

using warp::Key;
using warp::kFullMask;

__device__ __forceinline__ uint64_t ThreadIndex() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// The batch index of the operation at position i: op_index[i], or i when
// op_index is null.
__device__ __forceinline__ uint64_t OpAt(const uint32_t* op_index, uint64_t i) {
  return op_index != nullptr ? op_index[i] : i;
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
  // The low bits pick the bucket (gphash::BucketIndex): sorted order is address order.
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
    if (warp::SameKey(other, key)) {
      survives = false;
      break;
    }
  }
  keep[op] = survives ? 1 : 0;
}

// The arrays of a get batch (LaunchGetKernel): operation op has its key at
// keys + op * key_size and its answer at values + op * value_size and
// found[op] (found may be null). Position i runs operation OpAt(op_index,
// i); with leaders, only the positions that lead their key's run
// (leaders[i] == i).
struct GetBatch {
  const uint8_t* keys;
  const uint32_t* op_index;
  const uint32_t* leaders;
  uint8_t* values;
  uint8_t* found;
  uint64_t count;
};

// True if position i of the batch looks its key up.
__device__ __forceinline__ bool LooksUp(const GetBatch& batch, uint64_t i) {
  return i < batch.count && (batch.leaders == nullptr || batch.leaders[i] == i);
}

// The answer of get `op`: its value (zeros when not found) and found flag.
__device__ __forceinline__ void StoreGetAnswer(const GphashDeviceView& view, const GetBatch& batch,
                                               uint64_t op, bool hit, uint64_t value) {
  warp::StoreValue(batch.values + op * view.value_size, hit ? value : 0, view.value_size);
  if (batch.found != nullptr) batch.found[op] = hit ? 1 : 0;
}

// The get a lane holds when each warp takes ops_per_warp operations: its
// batch index *op and key. False when the lane holds none, or (with
// leaders) a repeat of a key its run's leader looks up.
template <int kKeyWords>
__device__ __forceinline__ bool LaneGetOp(const GetBatch& batch, uint32_t ops_per_warp,
                                          uint64_t* op, Key<kKeyWords>* key) {
  bool lane_holds_op;
  const uint64_t i = OpPosition(ops_per_warp, &lane_holds_op);
  if (!lane_holds_op || !LooksUp(batch, i)) return false;
  *op = OpAt(batch.op_index, i);
  *key = warp::LoadKey<kKeyWords>(batch.keys + *op * 8 * kKeyWords);
  return true;
}

// Looks the batch's keys up with a tile of kSlots (= slots_per_bucket)
// lanes per key (warp::TileGet): each tile runs the operations its own lanes
// hold, one after another (ShareWork under the tile's mask), 32 / kSlots
// tiles side by side.
template <int kKeyWords, int kSlots>
__global__ void __launch_bounds__(kBlockThreads)
    GetTileKernel(GphashDeviceView view, GetBatch batch, uint32_t ops_per_warp) {
  uint64_t op = 0;
  Key<kKeyWords> my_key{};
  const bool has_op = LaneGetOp(batch, ops_per_warp, &op, &my_key);
  const uint32_t lane = warp::LaneId();
  const uint32_t tile_base = lane / kSlots * kSlots;
  const unsigned tile_mask = (kSlots == 32 ? kFullMask : ((1u << kSlots) - 1)) << tile_base;
  warp::ReadTally tally;
  warp::ShareWork(tile_mask, has_op, [&](int source) {
    const Key<kKeyWords> key = warp::ShuffleKey(my_key, source, tile_mask);
    uint64_t value = 0;
    const bool hit = warp::TileGet(view, tile_mask, tile_base, key,
                                   warp::HashOf(key, view.hash_seed), &value, tally);
    if (lane == static_cast<uint32_t>(source)) StoreGetAnswer(view, batch, op, hit, value);
  });
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

// The write a thread holds: position i of the batch runs operation *op =
// OpAt(op_index, i), unless keep (when not null) marks that operation as
// superseded by another of its key.
__device__ __forceinline__ bool HoldsWrite(bool in_batch, uint64_t i, const uint32_t* op_index,
                                           const uint8_t* keep, uint64_t* op) {
  if (!in_batch) return false;
  *op = OpAt(op_index, i);
  return keep == nullptr || keep[*op] != 0;
}

// Counts a put's outcome in the thread's counts; a put that found no room
// goes into failed[] (its batch index).
__device__ __forceinline__ void CountPut(warp::PutOutcome outcome, uint64_t op, uint32_t* failed,
                                         BatchCounters* counters, unsigned long long* inserted,
                                         unsigned long long* updated) {
  if (outcome == warp::PutOutcome::kInserted) {
    ++*inserted;
  } else if (outcome == warp::PutOutcome::kUpdated) {
    ++*updated;
  } else {
    unsigned long long position = atomicAdd(&counters->failed, 1ull);
    failed[position] = static_cast<uint32_t>(op);
  }
}

// The end of a write kernel, called by every thread: with to_host.host set,
// the last block to finish copies *counters to the host (CountersToHost).
__device__ __forceinline__ void HandCountersToHost(const CountersToHost& to_host,
                                                   BatchCounters* counters) {
  if (to_host.host == nullptr) return;
  __syncthreads();  // the block's counts are in
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(to_host.blocks_done, 1u) != gridDim.x - 1) return;
  __threadfence();  // every block's counts before this block's reads
  constexpr int kWords = sizeof(BatchCounters) / sizeof(unsigned long long);
  static_assert(sizeof(BatchCounters) == kWords * sizeof(unsigned long long),
                "BatchCounters is a run of 64-bit counters");
  const volatile unsigned long long* totals = &counters->inserted;
  unsigned long long* host = &to_host.host->inserted;
#pragma unroll
  for (int w = 0; w < kWords; ++w) host[w] = totals[w];
  *to_host.blocks_done = 0;
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    PutKernel(GphashDeviceView view, const uint8_t* keys, const uint8_t* values,
              const uint8_t* keep, const uint32_t* op_index, uint64_t count, uint32_t* failed,
              BatchCounters* counters, uint32_t ops_per_warp, CountersToHost to_host) {
  bool lane_holds_op;
  const uint64_t i = OpPosition(ops_per_warp, &lane_holds_op);
  uint64_t op = 0;
  const bool has_op = HoldsWrite(lane_holds_op && i < count, i, op_index, keep, &op);
  Key<kKeyWords> my_key{};
  uint64_t my_value = 0;
  if (has_op) {
    my_key = warp::LoadKey<kKeyWords>(keys + op * 8 * kKeyWords);
    my_value = warp::LoadValue(values + op * view.value_size, view.value_size);
  }
  unsigned long long inserted = 0;
  unsigned long long updated = 0;
  warp::ShareWork(kFullMask, has_op, [&](int source) {
    const Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    const uint64_t value = __shfl_sync(kFullMask, my_value, source);
    const warp::PutOutcome outcome =
        warp::WarpPut(view, view.level_count, key, warp::HashOf(key, view.hash_seed), value, true);
    if (warp::LaneId() == static_cast<uint32_t>(source)) {
      CountPut(outcome, op, failed, counters, &inserted, &updated);
    }
  });
  AddWarpCount(&counters->inserted, inserted);
  AddWarpCount(&counters->updated, updated);
  HandCountersToHost(to_host, counters);
}

// One warp, the failed puts one after another (see LaunchKick).
template <int kKeyWords>
__global__ void KickKernel(GphashDeviceView view, const uint8_t* keys, const uint32_t* ops,
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
    EraseKernel(GphashDeviceView view, const uint8_t* keys, const uint8_t* keep,
                const uint32_t* op_index, uint8_t* erased, uint64_t count, BatchCounters* counters,
                uint32_t ops_per_warp, CountersToHost to_host) {
  bool lane_holds_op;
  const uint64_t i = OpPosition(ops_per_warp, &lane_holds_op);
  const bool in_batch = lane_holds_op && i < count;
  uint64_t op = 0;
  const bool has_op = HoldsWrite(in_batch, i, op_index, keep, &op);
  if (in_batch && !has_op && erased != nullptr) erased[op] = 0;
  Key<kKeyWords> my_key{};
  if (has_op) my_key = warp::LoadKey<kKeyWords>(keys + op * 8 * kKeyWords);
  unsigned long long erased_count = 0;
  warp::ShareWork(kFullMask, has_op, [&](int source) {
    const Key<kKeyWords> key = warp::ShuffleKey(my_key, source);
    const bool hit = warp::WarpErase(view, key, warp::HashOf(key, view.hash_seed));
    if (warp::LaneId() == static_cast<uint32_t>(source)) {
      if (erased != nullptr) erased[op] = hit ? 1 : 0;
      if (hit) ++erased_count;
    }
  });
  AddWarpCount(&counters->erased, erased_count);
  HandCountersToHost(to_host, counters);
}

// Operations per warp for a batch of `count`: 32 (one per lane) when the
// batch fills the GPU with warps, fewer for small batches, down to one op per
// warp — a warp runs its operations one after another, so a small batch
// finishes sooner spread over more warps.
uint32_t OpsPerWarp(uint64_t count) {
  const uint64_t multiprocessors = gpkv::gpu::MultiprocessorCount();
  const uint64_t full_warps = uint64_t{64} * multiprocessors;
  uint64_t per_warp = (count + full_warps - 1) / full_warps;
  return static_cast<uint32_t>(per_warp < 1 ? 1 : per_warp > 32 ? 32 : per_warp);
}

// Threads per block of GetIndexKernel, at most. A block holds its place on
// the multiprocessor until its slowest get is done, and a get's latency
// varies (one bucket or several, queues at L2): small blocks free their place
// sooner. Measured (H100, 2^20 uniform gets, docs/bench/mirror-gets.md run
// 15): 256 threads 6.6-6.9 G/s, 128 6.8-6.9, 64 7.07-7.11; 2^22 unchanged.
constexpr uint32_t kIndexGetBlockThreads = 64;

// Threads per block of GetIndexKernel for a batch of `count`:
// kIndexGetBlockThreads when the batch fills every multiprocessor with four
// such blocks, else fewer (a multiple of 32, at least one warp).
uint32_t IndexGetBlockThreads(uint64_t count) {
  const uint64_t multiprocessors = gpkv::gpu::MultiprocessorCount();
  const uint64_t per_block = count / (uint64_t{4} * multiprocessors);
  const uint64_t warps = std::max<uint64_t>(1, per_block / warp::kWarpSize);
  return static_cast<uint32_t>(std::min<uint64_t>(kIndexGetBlockThreads, warps * warp::kWarpSize));
}

unsigned int WarpBlocksFor(uint64_t count, uint32_t ops_per_warp) {
  uint64_t warps = (count + ops_per_warp - 1) / ops_per_warp;
  return BlocksFor(warps * warp::kWarpSize);
}

// Threads of GetIndexKernel per multiprocessor the compiler must allow
// (registers: 40 a thread), as blocks of kIndexGetBlockThreads. A mirror get
// is bound by the latency of its dependent reads (slot words, then key and
// value, then the slot word again): it needs gets in flight. Measured (H200,
// 16M keys, 2^20 uniform gets, docs/bench/mirror-gets.md) in blocks of 256:
// no bound (44-48 registers) 7.6 G/s, 1536 threads 8.0, 2048 (32 registers,
// spilling) 6.9; again on an H100, 1536 kept.
constexpr int kIndexGetThreadsPerSm = 1536;
constexpr int kIndexGetBlocksPerSm = kIndexGetThreadsPerSm / kIndexGetBlockThreads;
// Batches of fewer gets run GetTileKernel even on an index in GPU memory: a
// small batch is bound by the latency of one get, and a tile's lanes read a
// bucket together. Measured through the engine with registered host arrays
// (H100, docs/bench/host-batches.md), p50 per call, tile / one per
// thread: 256 gets 15.7 / 19.0 us, 1024 16.3 / 19.8, 4096 22.4 / 21.4,
// 16384 and up alike.
constexpr uint64_t kIndexGetMinOps = 4096;

// One operation per thread over an index in GPU memory (view.index_gets:
// mirror and staged mode), kSlots = slots_per_bucket.
template <int kKeyWords, int kSlots>
__global__ void __launch_bounds__(kIndexGetBlockThreads, kIndexGetBlocksPerSm)
    GetIndexKernel(GphashDeviceView view, GetBatch batch) {
  const uint64_t i = ThreadIndex();
  if (!LooksUp(batch, i)) return;
  const uint64_t op = OpAt(batch.op_index, i);
  const Key<kKeyWords> key = warp::LoadKey<kKeyWords>(batch.keys + op * 8 * kKeyWords);
  uint64_t value = 0;
  const bool hit =
      thread::IndexGet<kKeyWords, kSlots>(view, key, warp::HashOf(key, view.hash_seed), &value);
  StoreGetAnswer(view, batch, op, hit, value);
}

// One put per thread (view.thread_puts; PutKernel's contract).
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    PutThreadKernel(GphashDeviceView view, const uint8_t* keys, const uint8_t* values,
                    const uint8_t* keep, const uint32_t* op_index, uint64_t count, uint32_t* failed,
                    BatchCounters* counters, CountersToHost to_host) {
  const uint64_t i = ThreadIndex();
  uint64_t op = 0;
  const bool has_op = HoldsWrite(i < count, i, op_index, keep, &op);
  unsigned long long inserted = 0, updated = 0;
  if (has_op) {
    const Key<kKeyWords> key = warp::LoadKey<kKeyWords>(keys + op * 8 * kKeyWords);
    const uint64_t value = warp::LoadValue(values + op * view.value_size, view.value_size);
    const warp::PutOutcome outcome =
        thread::ThreadPut(view, key, warp::HashOf(key, view.hash_seed), value);
    CountPut(outcome, op, failed, counters, &inserted, &updated);
  }
  AddWarpCount(&counters->inserted, inserted);
  AddWarpCount(&counters->updated, updated);
  HandCountersToHost(to_host, counters);
}

// The get kernel the view asks for, as a launch: GetIndexKernel (an index in
// GPU memory) or GetTileKernel (the pool over the link, and small batches).
// Both take (view, batch) and GetTileKernel also per_warp: GetKernelArgs
// holds all three.
struct GetKernelLaunch {
  const void* func = nullptr;
  const char* name = nullptr;
  dim3 grid;
  dim3 block;
};

struct GetKernelArgs {
  GphashDeviceView view;
  GetBatch batch;
  uint32_t per_warp;
  void* pointers[3] = {&view, &batch, &per_warp};
  GetKernelArgs(const GphashDeviceView& v, const GetBatch& b, uint32_t p)
      : view(v), batch(b), per_warp(p) {}
  GetKernelArgs(const GetKernelArgs&) = delete;
  GetKernelArgs& operator=(const GetKernelArgs&) = delete;
};

template <int kKeyWords, int kSlots>
GetKernelLaunch PlanSlotsGetKernel(const GphashDeviceView& view, const GetBatch& batch,
                                   uint32_t per_warp) {
  if (view.index_gets && batch.count >= kIndexGetMinOps) {
    // Smaller batches in smaller blocks, so that their gets spread over
    // every multiprocessor.
    const uint32_t threads = IndexGetBlockThreads(batch.count);
    return GetKernelLaunch{
        reinterpret_cast<const void*>(&GetIndexKernel<kKeyWords, kSlots>), "GetIndexKernel",
        dim3(static_cast<unsigned int>((batch.count + threads - 1) / threads)), dim3(threads)};
  }
  return GetKernelLaunch{reinterpret_cast<const void*>(&GetTileKernel<kKeyWords, kSlots>),
                         "GetTileKernel", dim3(WarpBlocksFor(batch.count, per_warp)),
                         dim3(kBlockThreads)};
}

template <int kKeyWords>
Result<GetKernelLaunch> PlanGetKernel(const GphashDeviceView& view, const GetBatch& batch,
                                      uint32_t per_warp) {
  static_assert(gphash::kMinSlotsPerBucket == 4 && gphash::kMaxSlotsPerBucket == 16,
                "GetTileKernel and GetIndexKernel are instantiated for 4, 8 and 16 slots per "
                "bucket");
  switch (view.slots_per_bucket) {
    case 4:
      return PlanSlotsGetKernel<kKeyWords, 4>(view, batch, per_warp);
    case 8:
      return PlanSlotsGetKernel<kKeyWords, 8>(view, batch, per_warp);
    case 16:
      return PlanSlotsGetKernel<kKeyWords, 16>(view, batch, per_warp);
    default:
      return Status::InvalidArgument("GPU gets support 4, 8 or 16 slots per bucket, not " +
                                     std::to_string(view.slots_per_bucket));
  }
}

// Launches the get kernel the view asks for.
template <int kKeyWords>
Status LaunchGetKernel(const GphashDeviceView& view, const GetBatch& batch, uint32_t per_warp,
                       cudaStream_t stream) {
  auto plan = PlanGetKernel<kKeyWords>(view, batch, per_warp);
  if (!plan.ok()) return plan.status();
  GetKernelArgs args(view, batch, per_warp);
  cudaLaunchKernel(plan->func, plan->grid, plan->block, args.pointers, 0, stream);
  return CheckLaunch(plan->name);
}

}  // namespace

Status DedupeSortTempBytes(size_t count, size_t* bytes) {
  return gpkv::gpu::SortPairsTempBytes(count, bytes,
                                       "cub::DeviceRadixSort::SortPairs (size query)");
}

Status DedupeScanTempBytes(size_t count, size_t* bytes) {
  auto scan = [&](void* storage, size_t& storage_bytes) {
    return cub::DeviceScan::InclusiveScan(
        storage, storage_bytes, static_cast<const uint32_t*>(nullptr),
        static_cast<uint32_t*>(nullptr), MaxPosition(), static_cast<int>(count));
  };
  return CubTempBytes(scan, bytes, "cub::DeviceScan::InclusiveScan (size query)");
}

namespace {

// Sorts the batch's operations by the low 32 bits of their primary hash.
template <int kKeyWords>
Status SortBatch(const GphashDeviceView& view, const uint8_t* keys, size_t count,
                 const DedupeScratch& scratch, cudaStream_t stream) {
  SortKeyKernel<kKeyWords><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
      keys, count, view.hash_seed, scratch.sort_keys_in, scratch.indices_in);
  GPKV_RETURN_IF_ERROR(CheckLaunch("SortKeyKernel"));
  auto sort = [&](void* storage, size_t& storage_bytes) {
    return cub::DeviceRadixSort::SortPairs(
        storage, storage_bytes, scratch.sort_keys_in, scratch.sort_keys_out, scratch.indices_in,
        scratch.indices_out, static_cast<int>(count), 0, 32, stream);
  };
  return RunCub(sort, scratch.sort_temp,
                "cub::DeviceRadixSort::SortPairs of the batch's key hashes");
}

// Sorts a batch of `count` operations (SortBatch), then enqueues
// then(words), words a std::integral_constant of the key words
// (DispatchKeyWords).
template <typename Then>
Status SortBatchThen(const GphashDeviceView& view, const uint8_t* keys, size_t count,
                     const DedupeScratch& scratch, cudaStream_t stream, Then&& then) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    GPKV_RETURN_IF_ERROR(SortBatch<decltype(words)::value>(view, keys, count, scratch, stream));
    return then(words);
  });
}

}  // namespace

Status LaunchMarkSurvivors(const GphashDeviceView& view, const uint8_t* keys, size_t count,
                           const DedupeScratch& scratch, bool keep_first, uint8_t* keep,
                           cudaStream_t stream) {
  return SortBatchThen(view, keys, count, scratch, stream, [&](auto words) -> Status {
    MarkSurvivorKernel<decltype(words)::value><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
        keys, count, scratch.sort_keys_out, scratch.indices_out, keep_first, keep);
    return CheckLaunch("MarkSurvivorKernel");
  });
}

Status LaunchGet(const GphashDeviceView& view, const uint8_t* keys, uint8_t* values, uint8_t* found,
                 size_t count, cudaStream_t stream) {
  if (count == 0) return Status::OK();
  const GetBatch batch{keys, nullptr, nullptr, values, found, count};
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    return LaunchGetKernel<decltype(words)::value>(view, batch, OpsPerWarp(count), stream);
  });
}

GetGraphs::~GetGraphs() {
  for (Graph& graph : graphs_) {
    cudaGraphExecDestroy(graph.exec);
    cudaGraphDestroy(graph.graph);
  }
}

GetGraphs::Graph* GetGraphs::Find(const void* func) {
  for (Graph& graph : graphs_) {
    if (graph.func == func) return &graph;
  }
  return nullptr;
}

GetGraphs::Graph* GetGraphs::Add(const Graph& graph) {
  graphs_.push_back(graph);
  return &graphs_.back();
}

Status LaunchGetGraph(GetGraphs& graphs, const GphashDeviceView& view, const uint8_t* keys,
                      uint8_t* values, uint8_t* found, size_t count, cudaStream_t stream) {
  if (count == 0) return Status::OK();
  const GetBatch batch{keys, nullptr, nullptr, values, found, count};
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    const uint32_t per_warp = OpsPerWarp(count);
    auto plan = PlanGetKernel<decltype(words)::value>(view, batch, per_warp);
    if (!plan.ok()) return plan.status();
    GetKernelArgs args(view, batch, per_warp);
    cudaKernelNodeParams params{};
    params.func = const_cast<void*>(plan->func);
    params.gridDim = plan->grid;
    params.blockDim = plan->block;
    params.kernelParams = args.pointers;
    // Named only on an error: this runs for every small get batch.
    auto what = [&] { return std::string("the graph of ") + plan->name; };
    GetGraphs::Graph* graph = graphs.Find(plan->func);
    if (graph != nullptr) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaGraphExecKernelNodeSetParams(graph->exec, graph->node, &params),
                                "cudaGraphExecKernelNodeSetParams of " + what());
    } else {
      GetGraphs::Graph made{plan->func, nullptr, nullptr, nullptr};
      GPKV_CUDA_RETURN_IF_ERROR(cudaGraphCreate(&made.graph, 0), "cudaGraphCreate of " + what());
      cudaError_t error = cudaGraphAddKernelNode(&made.node, made.graph, nullptr, 0, &params);
      if (error == cudaSuccess) error = cudaGraphInstantiate(&made.exec, made.graph, 0);
      if (error != cudaSuccess) {
        cudaGraphDestroy(made.graph);
        return CudaStatus(error, "building " + what());
      }
      graph = graphs.Add(made);
    }
    GPKV_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph->exec, stream), "cudaGraphLaunch of " + what());
    return Status::OK();
  });
}

Status LaunchGetSorted(const GphashDeviceView& view, const uint8_t* keys, uint8_t* values,
                       uint8_t* found, size_t count, const DedupeScratch& scratch,
                       cudaStream_t stream) {
  return SortBatchThen(view, keys, count, scratch, stream, [&](auto words) -> Status {
    constexpr int kKeyWords = decltype(words)::value;
    // The sort's input arrays are free again: sort_keys_in holds the heads.
    MarkLeadersKernel<kKeyWords><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
        keys, count, scratch.sort_keys_out, scratch.indices_out, scratch.sort_keys_in);
    GPKV_RETURN_IF_ERROR(CheckLaunch("MarkLeadersKernel"));
    auto scan = [&](void* storage, size_t& storage_bytes) {
      return cub::DeviceScan::InclusiveScan(storage, storage_bytes, scratch.sort_keys_in,
                                            scratch.leaders, MaxPosition(), static_cast<int>(count),
                                            stream);
    };
    GPKV_RETURN_IF_ERROR(RunCub(scan, scratch.scan_temp,
                                "cub::DeviceScan::InclusiveScan of the batch's run leaders"));
    const GetBatch batch{keys, scratch.indices_out, scratch.leaders, values, found, count};
    GPKV_RETURN_IF_ERROR(LaunchGetKernel<kKeyWords>(view, batch, OpsPerWarp(count), stream));
    ScatterAnswersKernel<<<BlocksFor(count), kBlockThreads, 0, stream>>>(
        view.value_size, scratch.indices_out, scratch.leaders, values, found, count);
    return CheckLaunch("ScatterAnswersKernel");
  });
}

Status LaunchPut(const GphashDeviceView& view, const uint8_t* keys, const uint8_t* values,
                 const uint8_t* keep, const uint32_t* op_index, size_t count, uint32_t* failed,
                 BatchCounters* counters, cudaStream_t stream, const CountersToHost& to_host) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    if (view.thread_puts) {
      PutThreadKernel<decltype(words)::value><<<BlocksFor(count), kBlockThreads, 0, stream>>>(
          view, keys, values, keep, op_index, count, failed, counters, to_host);
      return CheckLaunch("PutThreadKernel");
    }
    const uint32_t per_warp = OpsPerWarp(count);
    PutKernel<decltype(words)::value><<<WarpBlocksFor(count, per_warp), kBlockThreads, 0, stream>>>(
        view, keys, values, keep, op_index, count, failed, counters, per_warp, to_host);
    return CheckLaunch("PutKernel");
  });
}

Status LaunchKick(const GphashDeviceView& view, const uint8_t* keys, const uint32_t* ops,
                  size_t count, BatchCounters* counters, cudaStream_t stream) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    KickKernel<decltype(words)::value>
        <<<1, warp::kWarpSize, 0, stream>>>(view, keys, ops, count, counters);
    return CheckLaunch("KickKernel");
  });
}

Status LaunchErase(const GphashDeviceView& view, const uint8_t* keys, const uint8_t* keep,
                   const uint32_t* op_index, uint8_t* erased, size_t count, BatchCounters* counters,
                   cudaStream_t stream, const CountersToHost& to_host) {
  if (count == 0) return Status::OK();
  return DispatchKeyWords(view.key_size, [&](auto words) -> Status {
    const uint32_t per_warp = OpsPerWarp(count);
    EraseKernel<decltype(words)::value>
        <<<WarpBlocksFor(count, per_warp), kBlockThreads, 0, stream>>>(
            view, keys, keep, op_index, erased, count, counters, per_warp, to_host);
    return CheckLaunch("EraseKernel");
  });
}

}  // namespace gpkv::gphash::gpu

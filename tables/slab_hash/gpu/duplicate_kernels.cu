// Within-batch duplicates, the slow path: when a write batch's touched bits
// showed that it wrote some key twice, the batch is sorted (CUB radix sort of
// the keys' 32-bit duplicate sort keys, stable, so equal keys stay in batch
// order) and each run of equal sort keys is searched for equal keys.
#include <cub/device/device_radix_sort.cuh>

#include "tables/slab_hash/gpu/kernels.h"
#include "tables/slab_hash/gpu/launch.cuh"
#include "tables/slab_hash/gpu/warp_ops.cuh"

namespace gpkv::slab_hash::gpu {
namespace {

using device::Key;

__device__ __forceinline__ uint64_t OpAt(const uint32_t* op_index, uint64_t position) {
  return op_index != nullptr ? op_index[position] : position;
}

template <int kKeyWords>
__device__ __forceinline__ bool SameKey(const Key<kKeyWords>& a, const Key<kKeyWords>& b) {
  bool same = true;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) same &= a.words[w] == b.words[w];
  return same;
}

template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    SortKeyKernel(DeviceView view, BatchArrays batch, DuplicateScratch scratch) {
  const uint64_t position = ThreadIndex();
  if (position >= batch.count) return;
  const uint64_t op = OpAt(batch.op_index, position);
  const Key<kKeyWords> key = device::LoadKey<kKeyWords>(batch.keys, op, batch.keys_aligned);
  scratch.sort_keys_in[position] = DuplicateSortKey(device::HashOf(key, view.seed));
  scratch.indices_in[position] = static_cast<uint32_t>(op);
}

// The key of the operation at sorted position p.
template <int kKeyWords>
__device__ __forceinline__ Key<kKeyWords> SortedKey(const BatchArrays& batch,
                                                    const DuplicateScratch& scratch, uint64_t p) {
  return device::LoadKey<kKeyWords>(batch.keys, scratch.indices_out[p], batch.keys_aligned);
}

// True if a position of the run of equal sort keys around `position`, in
// direction `step` (+1 later, -1 earlier), holds `key`.
template <int kKeyWords>
__device__ __forceinline__ bool RunHolds(const BatchArrays& batch, const DuplicateScratch& scratch,
                                         uint64_t position, int step, const Key<kKeyWords>& key) {
  const uint32_t sort_key = scratch.sort_keys_out[position];
  for (uint64_t p = position + step; p < batch.count && scratch.sort_keys_out[p] == sort_key;
       p += step) {  // p wraps past 0 to a huge value: the loop ends
    if (SameKey(SortedKey<kKeyWords>(batch, scratch, p), key)) return true;
  }
  return false;
}

// A put is run again when it is its key's last and its key has another.
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    ListLastPutsKernel(BatchArrays batch, DuplicateScratch scratch, uint32_t* list,
                       BatchCounters* counters) {
  const uint64_t position = ThreadIndex();
  if (position >= batch.count) return;
  const Key<kKeyWords> key = SortedKey<kKeyWords>(batch, scratch, position);
  if (RunHolds(batch, scratch, position, +1, key)) return;   // a later put wins
  if (!RunHolds(batch, scratch, position, -1, key)) return;  // the only put of its key
  list[atomicAdd(&counters->retries, 1ull)] = scratch.indices_out[position];
}

// The first erase of a key reports it when any erase of the key erased it.
template <int kKeyWords>
__global__ void __launch_bounds__(kBlockThreads)
    ResolveErasedKernel(BatchArrays batch, DuplicateScratch scratch, uint8_t* resolved) {
  const uint64_t position = ThreadIndex();
  if (position >= batch.count) return;
  const uint32_t op = scratch.indices_out[position];
  const Key<kKeyWords> key = SortedKey<kKeyWords>(batch, scratch, position);
  if (RunHolds(batch, scratch, position, -1, key)) {
    resolved[op] = 0;
    return;
  }
  uint8_t any = batch.flags[op];
  const uint32_t sort_key = scratch.sort_keys_out[position];
  for (uint64_t p = position + 1; p < batch.count && scratch.sort_keys_out[p] == sort_key; ++p) {
    if (SameKey(SortedKey<kKeyWords>(batch, scratch, p), key)) {
      any |= batch.flags[scratch.indices_out[p]];
    }
  }
  resolved[op] = any;
}

template <int kKeyWords>
Status SortBatch(const DeviceView& view, const BatchArrays& batch, const DuplicateScratch& scratch,
                 cudaStream_t stream) {
  SortKeyKernel<kKeyWords>
      <<<BlocksFor(batch.count), kBlockThreads, 0, stream>>>(view, batch, scratch);
  GPKV_RETURN_IF_ERROR(CheckLaunch("SortKeyKernel"));
  auto sort = [&](void* storage, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(
        storage, bytes, scratch.sort_keys_in, scratch.sort_keys_out, scratch.indices_in,
        scratch.indices_out, static_cast<int>(batch.count), 0, 32, stream);
  };
  return gpkv::gpu::RunCub(
      sort, scratch.sort_temp,
      "slab hash: cub::DeviceRadixSort::SortPairs of a batch's duplicate keys");
}

}  // namespace

Status DuplicateSortTempBytes(uint64_t count, size_t* bytes) {
  return gpkv::gpu::SortPairsTempBytes(count, bytes,
                                       "slab hash: cub::DeviceRadixSort::SortPairs (size query)");
}

Status LaunchListLastPuts(const DeviceView& view, const BatchArrays& batch,
                          const DuplicateScratch& scratch, uint32_t* list, BatchCounters* counters,
                          cudaStream_t stream) {
  if (batch.count == 0) return Status::OK();
  return DispatchKeyWords(view.geometry.key_words, [&](auto key_words) -> Status {
    constexpr int kKeyWords = decltype(key_words)::value;
    GPKV_RETURN_IF_ERROR(SortBatch<kKeyWords>(view, batch, scratch, stream));
    ListLastPutsKernel<kKeyWords>
        <<<BlocksFor(batch.count), kBlockThreads, 0, stream>>>(batch, scratch, list, counters);
    return CheckLaunch("ListLastPutsKernel");
  });
}

Status LaunchResolveErased(const DeviceView& view, const BatchArrays& batch,
                           const DuplicateScratch& scratch, uint8_t* resolved,
                           cudaStream_t stream) {
  if (batch.count == 0 || batch.flags == nullptr) return Status::OK();
  return DispatchKeyWords(view.geometry.key_words, [&](auto key_words) -> Status {
    constexpr int kKeyWords = decltype(key_words)::value;
    GPKV_RETURN_IF_ERROR(SortBatch<kKeyWords>(view, batch, scratch, stream));
    ResolveErasedKernel<kKeyWords>
        <<<BlocksFor(batch.count), kBlockThreads, 0, stream>>>(batch, scratch, resolved);
    GPKV_RETURN_IF_ERROR(CheckLaunch("ResolveErasedKernel"));
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(batch.flags, resolved, batch.count, cudaMemcpyDeviceToDevice, stream),
        "slab hash: cudaMemcpyAsync of the resolved erased flags");
    return Status::OK();
  });
}

}  // namespace gpkv::slab_hash::gpu

// GpuBackend's write batches: a batch staged to the device and sorted by key
// (CUB's radix sort, stable LSD passes, the last occurrence of a key kept),
// and an erase batch's tombstones (its keys live in the current version).
#include <algorithm>
#include <cub/cub.cuh>

#include "gpu/cub_temp_storage.h"
#include "tables/lsm/gpu/backend.cuh"

namespace gpkv::lsm::gpu {

using gpkv::gpu::CubTempBytes;
using gpkv::gpu::CubTempStorage;
using gpkv::gpu::RunCub;

namespace {

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

}  // namespace

Result<DeviceRunPtr> GpuBackend::SortBatch(const uint8_t* key_bytes, const uint8_t* values,
                                           size_t n, uint64_t meta, uint8_t* first_flags,
                                           Scratch& scratch, uint32_t* unique_of) {
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
  auto run = NewRunOfKept(last, n, scratch, &positions);
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

Result<RunPtr> GpuBackend::SortPuts(const uint8_t* keys, const uint8_t* values, size_t n,
                                    uint64_t seq) {
  if (n > UINT32_MAX) return Status::InvalidArgument(Where() + ": a batch holds < 2^32 pairs");
  write_scratch_ = std::make_unique<Scratch>(write_stream_);
  Scratch& scratch = *write_scratch_;
  PhaseTimer timer(&times_.sort);
  const uint8_t *device_keys = nullptr, *device_values = nullptr;
  GPKV_RETURN_IF_ERROR(StageIn(scratch, keys, n * shape_.key_size(), &device_keys, "keys"));
  GPKV_RETURN_IF_ERROR(StageIn(scratch, values, n * shape_.value_size, &device_values, "values"));
  auto sorted =
      SortBatch(device_keys, device_values, n, MakeMeta(seq, false), nullptr, scratch, nullptr);
  if (!sorted.ok()) return sorted.status();
  return RunPtr(std::move(*sorted));
}

Result<RunPtr> GpuBackend::SortErases(const uint8_t* keys, uint8_t* erased, size_t n, uint64_t seq,
                                      const Version& current) {
  if (n > UINT32_MAX) return Status::InvalidArgument(Where() + ": a batch holds < 2^32 keys");
  cudaStream_t stream = write_stream_;
  write_scratch_ = std::make_unique<Scratch>(stream);
  Scratch& scratch = *write_scratch_;
  const uint8_t* device_keys = nullptr;
  GPKV_RETURN_IF_ERROR(StageIn(scratch, keys, n * shape_.key_size(), &device_keys, "keys"));
  uint8_t* first = nullptr;
  uint32_t* unique_of = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &first, "erase flags"));
  GPKV_RETURN_IF_ERROR(scratch.Take(n, &unique_of, "erase positions"));
  auto sorted = SortBatch(device_keys, nullptr, n, MakeMeta(seq, true), first, scratch, unique_of);
  if (!sorted.ok()) return sorted.status();
  const DeviceRunPtr& unique = *sorted;
  // Only keys that are live get a tombstone.
  uint32_t* live = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(unique->count, &live, "erase live flags"));
  const DeviceSources sources = SourcesOf(current, options_.read_filters);
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
  auto tombstones = NewRunOfKept(live, unique->count, scratch, &positions);
  if (!tombstones.ok()) return tombstones.status();
  const DeviceRun& out = **tombstones;
  DispatchWords(shape_.key_words, [&](auto words) {
    FilterGatherKernel<decltype(words)::value><<<Blocks(unique->count), kBlock, 0, stream>>>(
        ArraysOf(*unique), live, positions, shape_.value_size, out.keys(), out.meta(),
        out.values());
  });
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": gather tombstones"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), Where() + ": erase");
  return RunPtr(std::move(*tombstones));
}

}  // namespace gpkv::lsm::gpu

// GpuBackend's read side: Get, Count, Range, Successor, Predecessor, Scan and
// the live count over the device runs of one version (held for the whole
// call), one thread per query, on the calling host thread's stream.
#include <cstring>
#include <cub/cub.cuh>
#include <vector>

#include "gpu/cub_temp_storage.h"
#include "tables/lsm/cpu/search.h"
#include "tables/lsm/gpu/backend.cuh"

namespace gpkv::lsm::gpu {
namespace {

template <uint32_t W>
__device__ __forceinline__ void LoadKey(const uint64_t* keys, uint64_t i, uint64_t (&key)[W]) {
#pragma unroll
  for (uint32_t w = 0; w < W; ++w) key[w] = keys[i * W + w];
}

#define GRID_STRIDE(i, n)                                                     \
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += uint64_t{gridDim.x} * blockDim.x)

template <uint32_t W>
__global__ void GetKernel(DeviceSources sources, const uint64_t* keys, uint64_t n,
                          uint32_t value_size, uint8_t* values, uint8_t* found) {
  GRID_STRIDE(i, n) {
    uint64_t key[W];
    LoadKey<W>(keys, i, key);
    const Hit hit = FindNewest<W>(sources, key);
    const bool live = hit.source >= 0 && !IsTombstone(sources.runs[hit.source].meta[hit.index]);
    uint8_t* value = values + i * value_size;
    if (live) {
      DeviceCopyValue(value, sources.runs[hit.source].values + hit.index * value_size, value_size);
    } else {
      for (uint32_t b = 0; b < value_size; ++b) value[b] = 0;
    }
    if (found != nullptr) found[i] = live ? 1 : 0;
  }
}

// Live keys of each query's range, up to `limit` (Count: no limit).
template <uint32_t W>
__global__ void CountKernel(DeviceSources sources, const uint64_t* lo, const uint64_t* hi,
                            uint64_t n, uint64_t limit, uint64_t* counts) {
  GRID_STRIDE(i, n) {
    uint64_t low[W], high[W];
    LoadKey<W>(lo, i, low);
    LoadKey<W>(hi, i, high);
    counts[i] = CountLiveIn<W>(sources, low, high, limit);
  }
}

// Each query's slots [offsets[i], offsets[i + 1]) filled in ascending key
// order: with its smallest live keys walking up from its low bound, or,
// when `largest`, with its largest walking down from its high bound and
// filling the slots from the end. The slots were counted over the same
// version (CountKernel, up to the limit), so the walk stops when they are
// full.
template <uint32_t W>
__global__ void RangeFillKernel(DeviceSources sources, const uint64_t* lo, const uint64_t* hi,
                                uint64_t n, const uint64_t* offsets, bool largest,
                                uint32_t value_size, uint64_t* out_keys, uint8_t* out_values) {
  GRID_STRIDE(i, n) {
    uint64_t low[W], high[W];
    LoadKey<W>(lo, i, low);
    LoadKey<W>(hi, i, high);
    const uint64_t begin = offsets[i];
    const uint64_t end = offsets[i + 1];
    auto copy = [&](uint64_t at, const RunView& run, uint64_t index) {
#pragma unroll
      for (uint32_t w = 0; w < W; ++w) out_keys[at * W + w] = run.keys[index * W + w];
      DeviceCopyValue(out_values + at * value_size, run.values + index * value_size, value_size);
    };
    if (begin == end) continue;
    if (largest) {
      uint64_t at = end;
      BackwardLive<W>(sources, high, [&](const RunView& run, uint64_t index) {
        copy(--at, run, index);
        return at > begin;
      });
    } else {
      uint64_t at = begin;
      ForwardLive<W>(sources, low, high, [&](const RunView& run, uint64_t index) {
        copy(at++, run, index);
        return at < end;
      });
    }
  }
}

template <uint32_t W>
__global__ void NeighborKernel(DeviceSources sources, bool successor, const uint64_t* keys,
                               uint64_t n, uint32_t value_size, uint64_t* out_keys, uint8_t* values,
                               uint8_t* found) {
  GRID_STRIDE(i, n) {
    uint64_t key[W];
    LoadKey<W>(keys, i, key);
    bool hit = false;
    auto take = [&](const RunView& run, uint64_t index) {
#pragma unroll
      for (uint32_t w = 0; w < W; ++w) out_keys[i * W + w] = run.keys[index * W + w];
      DeviceCopyValue(values + i * value_size, run.values + index * value_size, value_size);
      hit = true;
      return false;
    };
    if (successor) {
      ForwardLive<W>(sources, key, nullptr, take);
    } else {
      BackwardLive<W>(sources, key, take);
    }
    if (!hit) {
#pragma unroll
      for (uint32_t w = 0; w < W; ++w) out_keys[i * W + w] = 0;
      for (uint32_t b = 0; b < value_size; ++b) values[i * value_size + b] = 0;
    }
    if (found != nullptr) found[i] = hit ? 1 : 0;
  }
}

// Live entries of source `source`: not tombstones, and their key in no newer
// source.
template <uint32_t W>
__global__ void LiveCountKernel(DeviceSources sources, uint32_t source, unsigned long long* live) {
  using Reduce = cub::BlockReduce<unsigned long long, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const RunView& run = sources.runs[source];
  unsigned long long count = 0;
  GRID_STRIDE(j, run.count) {
    if (IsTombstone(run.meta[j])) continue;
    const uint64_t* key = run.keys + j * W;
    bool newer = false;
    for (uint32_t s = 0; s < source && !newer; ++s) {
      const uint64_t at = LowerBound<W>(sources.runs[s], key);
      newer = at < sources.runs[s].count && Compare<W>(sources.runs[s].keys + at * W, key) == 0;
    }
    count += newer ? 0 : 1;
  }
  count = Reduce(storage).Sum(count);
  if (threadIdx.x == 0) atomicAdd(live, count);
}

// An output buffer of a call: the caller's when it is device memory, else
// scratch copied back at the end.
struct Output {
  uint8_t* caller = nullptr;
  uint8_t* device = nullptr;
  size_t bytes = 0;
  bool copy_back = false;
};

}  // namespace

// The shape every query call shares: the device, the version, a stream.
class QueryCall {
 public:
  explicit QueryCall(GpuBackend& impl)
      : impl(impl), version(impl.CurrentVersion()), scratch(cudaStreamPerThread) {}
  // The call's kernels are done before its version (and the runs only it
  // may hold) is released, also when the call failed half-way.
  ~QueryCall() { cudaStreamSynchronize(scratch.stream()); }
  Status Begin() {
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(impl.device()), "cudaSetDevice");
    sources = SourcesOf(*version, impl.options_.read_filters);
    return Status::OK();
  }
  Status In(const uint8_t* data, size_t bytes, const uint64_t** out, const char* what) {
    const uint8_t* staged = nullptr;
    GPKV_RETURN_IF_ERROR(impl.StageIn(scratch, data, bytes, &staged, what));
    *out = reinterpret_cast<const uint64_t*>(staged);
    return Status::OK();
  }
  // An output of `bytes` bytes at `caller` (may be null: none).
  Status Out(uint8_t* caller, size_t bytes, uint8_t** device, const char* what) {
    if (caller == nullptr) {
      *device = nullptr;
      return Status::OK();
    }
    Output out;
    out.caller = caller;
    out.bytes = bytes;
    if (IsDeviceMemory(caller, impl.device()) && reinterpret_cast<uintptr_t>(caller) % 8 == 0) {
      out.device = caller;
    } else {
      GPKV_RETURN_IF_ERROR(scratch.Take(bytes, &out.device, what));
      out.copy_back = true;
    }
    outputs.push_back(out);
    *device = out.device;
    return Status::OK();
  }
  // Copies device scratch of this call to a caller's array.
  Status CopyOut(void* caller, const void* device, size_t bytes, const char* what) {
    return impl.CopyOut(caller, device, bytes, scratch.stream(), what);
  }
  Status Finish(const std::string& what) {
    GPKV_RETURN_IF_ERROR(LaunchStatus(impl.Where() + ": " + what));
    for (const Output& out : outputs) {
      if (!out.copy_back || out.bytes == 0) continue;
      GPKV_RETURN_IF_ERROR(
          impl.CopyOut(out.caller, out.device, out.bytes, scratch.stream(), what.c_str()));
    }
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(scratch.stream()), impl.Where() + ": " + what);
    return Status::OK();
  }

  GpuBackend& impl;
  std::shared_ptr<const Version> version;
  Scratch scratch;
  DeviceSources sources;
  std::vector<Output> outputs;
};

Status GpuBackend::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n) {
  if (n == 0) return Status::OK();
  QueryCall call(*this);
  GPKV_RETURN_IF_ERROR(call.Begin());
  const uint64_t* device_keys = nullptr;
  uint8_t *device_values = nullptr, *device_found = nullptr;
  GPKV_RETURN_IF_ERROR(call.In(keys, n * shape_.key_size(), &device_keys, "get keys"));
  GPKV_RETURN_IF_ERROR(call.Out(values, n * shape_.value_size, &device_values, "get values"));
  GPKV_RETURN_IF_ERROR(call.Out(found, n, &device_found, "get found flags"));
  DispatchWords(shape_.key_words, [&](auto words) {
    GetKernel<decltype(words)::value><<<Blocks(n), kBlock, 0, call.scratch.stream()>>>(
        call.sources, device_keys, n, shape_.value_size, device_values, device_found);
  });
  return call.Finish("get");
}

Status GpuBackend::Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n) {
  if (n == 0) return Status::OK();
  QueryCall call(*this);
  GPKV_RETURN_IF_ERROR(call.Begin());
  const uint64_t *device_lo = nullptr, *device_hi = nullptr;
  uint8_t* device_counts = nullptr;
  GPKV_RETURN_IF_ERROR(call.In(lo, n * shape_.key_size(), &device_lo, "count lows"));
  GPKV_RETURN_IF_ERROR(call.In(hi, n * shape_.key_size(), &device_hi, "count highs"));
  GPKV_RETURN_IF_ERROR(
      call.Out(reinterpret_cast<uint8_t*>(counts), n * 8, &device_counts, "counts"));
  DispatchWords(shape_.key_words, [&](auto words) {
    CountKernel<decltype(words)::value><<<Blocks(n), kBlock, 0, call.scratch.stream()>>>(
        call.sources, device_lo, device_hi, n, /*limit=*/~uint64_t{0},
        reinterpret_cast<uint64_t*>(device_counts));
  });
  return call.Finish("count");
}

namespace {

// A range batch's bounds on the device, and where its pairs go.
struct RangeCounts {
  const uint64_t* lo = nullptr;
  const uint64_t* hi = nullptr;
  uint64_t* offsets = nullptr;  // n + 1 entries of the call's scratch
  uint64_t total = 0;           // pairs of the whole batch
};

// The first half of a range batch: the bounds copied in, each query's count
// up to limit.pairs (a k-way walk), their prefix sum into out->offsets and
// the total on the host. host_offsets (n + 1, or null) receives the offsets
// too.
Status RangeOffsets(GpuBackend& impl, QueryCall& call, const uint8_t* host_lo,
                    const uint8_t* host_hi, size_t n, tables::RangeLimit limit,
                    uint64_t* host_offsets, RangeCounts* out) {
  cudaStream_t stream = call.scratch.stream();
  const uint64_t key_bytes = n * impl.shape().key_size();
  GPKV_RETURN_IF_ERROR(call.In(host_lo, key_bytes, &out->lo, "range lows"));
  GPKV_RETURN_IF_ERROR(call.In(host_hi, key_bytes, &out->hi, "range highs"));
  uint64_t* counts = nullptr;
  GPKV_RETURN_IF_ERROR(call.scratch.Take(n + 1, &counts, "range counts"));
  GPKV_RETURN_IF_ERROR(call.scratch.Take(n + 1, &out->offsets, "range offsets"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(counts + n, 0, 8, stream), "zero a count");
  if (n != 0) {
    DispatchWords(impl.shape().key_words, [&](auto words) {
      CountKernel<decltype(words)::value><<<Blocks(n), kBlock, 0, stream>>>(
          call.sources, out->lo, out->hi, n, limit.pairs, counts);
    });
    GPKV_RETURN_IF_ERROR(LaunchStatus(impl.Where() + ": range counts"));
  }
  uint64_t* offsets = out->offsets;
  auto scan = [&](void* storage, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(storage, bytes, counts, offsets,
                                         static_cast<int64_t>(n + 1), stream);
  };
  size_t bytes = 0;
  GPKV_RETURN_IF_ERROR(gpkv::gpu::CubTempBytes(scan, &bytes, "cub::DeviceScan (size)"));
  uint8_t* storage = nullptr;
  GPKV_RETURN_IF_ERROR(call.scratch.Take(bytes, &storage, "range scan"));
  GPKV_RETURN_IF_ERROR(
      gpkv::gpu::RunCub(scan, gpkv::gpu::CubTempStorage{storage, bytes}, "cub::DeviceScan"));
  if (host_offsets != nullptr) {
    GPKV_RETURN_IF_ERROR(call.CopyOut(host_offsets, offsets, (n + 1) * 8, "range offsets"));
  } else {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(&out->total, offsets + n, 8, cudaMemcpyDeviceToHost, stream),
        impl.Where() + ": copy the range total");
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), impl.Where() + ": range counts");
  if (host_offsets != nullptr) out->total = host_offsets[n];
  return Status::OK();
}

// The second half: the pairs `limit` selects of every query at its offset.
Status RangeFill(GpuBackend& impl, QueryCall& call, const uint64_t* lo, const uint64_t* hi,
                 size_t n, tables::RangeLimit limit, const uint64_t* offsets, uint64_t* out_keys,
                 uint8_t* out_values) {
  if (n == 0) return Status::OK();
  DispatchWords(impl.shape().key_words, [&](auto words) {
    RangeFillKernel<decltype(words)::value><<<Blocks(n), kBlock, 0, call.scratch.stream()>>>(
        call.sources, lo, hi, n, offsets, limit.largest, impl.shape().value_size, out_keys,
        out_values);
  });
  return LaunchStatus(impl.Where() + ": range fill");
}

}  // namespace

Status GpuBackend::Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results,
                         size_t n, tables::RangeLimit limit) {
  if (n == 0) {
    results->offsets.assign(1, 0);
    results->keys.clear();
    results->values.clear();
    return Status::OK();
  }
  // Resized, not cleared: a caller that reuses its results (a benchmark)
  // does not pay for zeroing the vectors again.
  results->offsets.resize(n + 1);
  QueryCall call(*this);
  GPKV_RETURN_IF_ERROR(call.Begin());
  cudaStream_t stream = call.scratch.stream();
  RangeCounts range;
  GPKV_RETURN_IF_ERROR(
      RangeOffsets(*this, call, lo, hi, n, limit, results->offsets.data(), &range));
  const uint64_t total = range.total;
  uint64_t* out_keys = nullptr;
  uint8_t* out_values = nullptr;
  GPKV_RETURN_IF_ERROR(call.scratch.Take(total * shape_.key_words, &out_keys, "range keys"));
  GPKV_RETURN_IF_ERROR(call.scratch.Take(total * shape_.value_size, &out_values, "range values"));
  GPKV_RETURN_IF_ERROR(
      RangeFill(*this, call, range.lo, range.hi, n, limit, range.offsets, out_keys, out_values));
  results->keys.resize(total * shape_.key_size());
  results->values.resize(total * shape_.value_size);
  if (total != 0) {
    GPKV_RETURN_IF_ERROR(
        CopyOut(results->keys.data(), out_keys, results->keys.size(), stream, "range keys"));
    GPKV_RETURN_IF_ERROR(CopyOut(results->values.data(), out_values, results->values.size(), stream,
                                 "range values"));
  }
  return call.Finish("range");
}

Status GpuBackend::RangeOnDevice(const uint8_t* lo, const uint8_t* hi,
                                 Table::DeviceRangeResults* results, size_t n,
                                 tables::RangeLimit limit) {
  QueryCall call(*this);
  GPKV_RETURN_IF_ERROR(call.Begin());
  cudaStream_t stream = call.scratch.stream();
  RangeCounts range;
  GPKV_RETURN_IF_ERROR(
      RangeOffsets(*this, call, lo, hi, n, limit, /*host_offsets=*/nullptr, &range));
  const uint64_t total = range.total;
  // The caller's storage: offsets, keys, values back to back (8-aligned).
  const uint64_t offsets_bytes = (uint64_t{n} + 1) * 8;
  const uint64_t keys_bytes = total * shape_.key_size();
  const uint64_t values_bytes = total * shape_.value_size;
  const uint64_t needed = offsets_bytes + keys_bytes + values_bytes;
  const bool reuse = results->storage != nullptr && results->storage.use_count() == 1 &&
                     results->device == device_ && results->storage_bytes >= needed;
  if (!reuse) {
    results->storage.reset();
    results->storage_bytes = 0;
    // Some slack, so that batches of about the same size reuse it.
    const uint64_t bytes = needed + needed / 8 + 64;
    void* memory = nullptr;
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMalloc(&memory, bytes),
        Where() + ": device memory for " + std::to_string(total) + " range results");
    const int device = device_;
    results->storage = std::shared_ptr<void>(memory, [device](void* pointer) {
      int current = 0;
      const bool restore = cudaGetDevice(&current) == cudaSuccess && current != device;
      cudaSetDevice(device);
      cudaFree(pointer);
      if (restore) cudaSetDevice(current);
    });
    results->storage_bytes = bytes;
  }
  uint8_t* base = static_cast<uint8_t*>(results->storage.get());
  auto* out_offsets = reinterpret_cast<uint64_t*>(base);
  auto* out_keys = reinterpret_cast<uint64_t*>(base + offsets_bytes);
  uint8_t* out_values = base + offsets_bytes + keys_bytes;
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(out_offsets, range.offsets, offsets_bytes, cudaMemcpyDeviceToDevice, stream),
      Where() + ": copy range offsets");
  GPKV_RETURN_IF_ERROR(
      RangeFill(*this, call, range.lo, range.hi, n, limit, range.offsets, out_keys, out_values));
  results->device = device_;
  results->queries = n;
  results->pairs = total;
  results->offsets = out_offsets;
  results->keys = reinterpret_cast<const uint8_t*>(out_keys);
  results->values = out_values;
  return call.Finish("range on device");
}

Status GpuBackend::Neighbor(bool successor, const uint8_t* keys, uint8_t* out_keys, uint8_t* values,
                            uint8_t* found, size_t n) {
  if (n == 0) return Status::OK();
  QueryCall call(*this);
  GPKV_RETURN_IF_ERROR(call.Begin());
  const uint64_t* device_keys = nullptr;
  uint8_t *device_out = nullptr, *device_values = nullptr, *device_found = nullptr;
  GPKV_RETURN_IF_ERROR(call.In(keys, n * shape_.key_size(), &device_keys, "keys"));
  GPKV_RETURN_IF_ERROR(call.Out(out_keys, n * shape_.key_size(), &device_out, "neighbor keys"));
  GPKV_RETURN_IF_ERROR(call.Out(values, n * shape_.value_size, &device_values, "values"));
  GPKV_RETURN_IF_ERROR(call.Out(found, n, &device_found, "found flags"));
  DispatchWords(shape_.key_words, [&](auto words) {
    NeighborKernel<decltype(words)::value><<<Blocks(n), kBlock, 0, call.scratch.stream()>>>(
        call.sources, successor, device_keys, n, shape_.value_size,
        reinterpret_cast<uint64_t*>(device_out), device_values, device_found);
  });
  return call.Finish(successor ? "successor" : "predecessor");
}

Result<uint64_t> GpuBackend::CountLive(const Version& version) {
  cudaStream_t stream = write_stream_;
  Scratch scratch(stream);
  unsigned long long* live = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(1, &live, "live count"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(live, 0, 8, stream), "zero the live count");
  const DeviceSources sources = SourcesOf(version, /*filters=*/false);  // LowerBound only
  for (uint32_t s = 0; s < sources.count; ++s) {
    DispatchWords(shape_.key_words, [&](auto words) {
      LiveCountKernel<decltype(words)::value>
          <<<std::min(Blocks(sources.runs[s].count), 8192u), kBlock, 0, stream>>>(sources, s, live);
    });
  }
  GPKV_RETURN_IF_ERROR(LaunchStatus(Where() + ": live count"));
  unsigned long long host = 0;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&host, live, 8, cudaMemcpyDeviceToHost, stream),
                            "copy the live count");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), Where() + ": live count");
  return static_cast<uint64_t>(host);
}

Status GpuBackend::Scan(const Table::ScanVisitor& visit) {
  QueryCall call(*this);
  GPKV_RETURN_IF_ERROR(call.Begin());
  // The sources back on the host, walked by the CPU backend's k-way merge.
  struct HostRun {
    std::vector<uint64_t> keys, meta;
    std::vector<uint8_t> values;
  };
  std::vector<HostRun> host(call.sources.count);
  cpu::Sources sources;
  for (uint32_t s = 0; s < call.sources.count; ++s) {
    const RunView& run = call.sources.runs[s];
    host[s].keys.resize(run.count * shape_.key_words);
    host[s].meta.resize(run.count);
    host[s].values.resize(run.count * shape_.value_size);
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(host[s].keys.data(), run.keys, host[s].keys.size() * 8, cudaMemcpyDeviceToHost),
        Where() + ": copy a run for a scan");
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(host[s].meta.data(), run.meta, run.count * 8, cudaMemcpyDeviceToHost),
        Where() + ": copy a run for a scan");
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpy(host[s].values.data(), run.values, host[s].values.size(),
                                         cudaMemcpyDeviceToHost),
                              Where() + ": copy a run for a scan");
    RunView view;
    view.keys = host[s].keys.data();
    view.meta = host[s].meta.data();
    view.values = host[s].values.data();
    view.count = run.count;
    sources.runs[sources.count++] = view;
  }
  const uint32_t value_size = shape_.value_size;
  cpu::DispatchKeyWords(shape_.key_words, [&](auto words) {
    constexpr uint32_t W = decltype(words)::value;
    ForwardLive<W>(sources, nullptr, nullptr, [&](const RunView& run, uint64_t index) {
      return visit(reinterpret_cast<const uint8_t*>(run.keys + index * W),
                   run.values + index * value_size);
    });
  });
  return Status::OK();
}

Status GpuBackend::Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values,
                             uint8_t* found, size_t n) {
  return Neighbor(true, keys, next_keys, values, found, n);
}

Status GpuBackend::Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values,
                               uint8_t* found, size_t n) {
  return Neighbor(false, keys, previous_keys, values, found, n);
}

}  // namespace gpkv::lsm::gpu

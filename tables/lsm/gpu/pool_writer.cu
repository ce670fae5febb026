// GpuBackend's writes to the pool: a log record's checksum summed on the
// device and its arrays copied into the log on log_stream_ (beside the
// buffer's merges on the write stream), a level's run with its header's
// facts copied into its extent, and a checkpoint's run copied behind the
// next batches on checkpoint_stream_. Every header and persist goes
// through the shared writers of run.h and, for log records, the log's
// (tables/log/: record.h and its GPU primitives).
#include <algorithm>
#include <chrono>
#include <cub/cub.cuh>
#include <future>

#include "gpu/pool_registration.h"
#include "tables/log/gpu/record_writer.cuh"
#include "tables/log/record.h"
#include "tables/lsm/gpu/backend.cuh"

namespace gpkv::lsm::gpu {
namespace {

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
    if (i < data_words) sum += log::ChecksumTerm(seed, first + i, words[i]);
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

template <uint32_t W>
__global__ void FencesKernel(const uint64_t* keys, uint64_t fence_count, uint64_t* fences) {
  for (uint64_t f = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; f < fence_count;
       f += uint64_t{gridDim.x} * blockDim.x) {
#pragma unroll
    for (uint32_t w = 0; w < W; ++w) fences[f * W + w] = keys[f * kFenceStride * W + w];
  }
}

// The run's key filter (layout.h): each key's bits ORed into its word of
// the zeroed filter, by FilterHash, FilterWordOf and FilterMaskOf as the
// host calls them. An OR does not depend on the order of the keys, so the
// words are the ones the CPU backend builds.
template <uint32_t W>
__global__ void FilterKernel(const uint64_t* keys, uint64_t count, uint64_t* filter,
                             uint64_t words) {
  static_assert(sizeof(unsigned long long) == sizeof(uint64_t));
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t hash = FilterHash(keys + i * W, W);
    atomicOr(reinterpret_cast<unsigned long long*>(filter + FilterWordOf(hash, words)),
             static_cast<unsigned long long>(FilterMaskOf(hash)));
  }
}

// A sorted batch as the entries of its log record: its values (unless
// tombstones) with the run's zero padding, which is the record's.
log::gpu::DeviceRecordEntries RecordEntries(const DeviceRun& batch, bool tombstones) {
  return {batch.keys(), tombstones ? nullptr : batch.values(), batch.count};
}

}  // namespace

Status GpuBackend::RunFacts(DeviceRun& run, uint64_t* checksum) {
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
  *checksum = log::ChecksumFinish(table_id_, words, host[0]);
  run.tombstones = host[1];
  run.max_seq = host[2];
  return Status::OK();
}

Status GpuBackend::RecordChecksumTerms(const DeviceRun& run) {
  Scratch scratch(log_stream_);
  unsigned long long* out = nullptr;
  GPKV_RETURN_IF_ERROR(scratch.Take(1, &out, "log record checksum"));
  GPKV_RETURN_IF_ERROR(log::gpu::SumRecordTermsAsync(
      RecordEntries(run, record_.tombstones), shape_.key_size(), shape_.value_size,
      log::RecordSeed(record_.epoch, record_.header), out, log_stream_, Where()));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(record_sum_, out, sizeof(*record_sum_), cudaMemcpyDeviceToHost, log_stream_),
      "copy the log record checksum");
  return Status::OK();
}

Status GpuBackend::BuildFences(DeviceRun& run) {
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

Status GpuBackend::BuildFilter(DeviceRun& run) {
  if (run.filter != nullptr) return Status::OK();
  const uint64_t words = RunFilterWords(run.count);
  void* filter = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(run.pool_stream != nullptr
                                ? cudaMallocAsync(&filter, words * 8, write_stream_)
                                : cudaMalloc(&filter, words * 8),
                            Where() + ": device memory for a run's filter");
  run.filter = static_cast<uint64_t*>(filter);
  run.filter_words = words;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(run.filter, 0, words * 8, write_stream_),
                            Where() + ": zero a run's filter");
  DispatchWords(shape_.key_words, [&](auto key_words) {
    FilterKernel<decltype(key_words)::value>
        <<<std::min(Blocks(run.count), 4096u), kBlock, 0, write_stream_>>>(run.keys(), run.count,
                                                                           run.filter, words);
  });
  return LaunchStatus(Where() + ": run filter kernel");
}

Status GpuBackend::StartLogRecord(const Run& batch_run, bool tombstones, uint64_t record_offset,
                                  uint64_t epoch, uint64_t seq) {
  // The record on log_stream_: its checksum summed on the device and its
  // keys and values copied from the device into the log (at the link's
  // speed once the pool is registered; through pageable memory before).
  const DeviceRun& batch = AsDevice(batch_run);
  record_.header = log::ColumnarRecordHeader(seq, batch.count, tombstones);
  record_.offset = record_offset;
  record_.epoch = epoch;
  record_.tombstones = tombstones;
  record_.count = batch.count;
  ReadyRegistration();
  PhaseTimer timer(&times_.log);
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(batch_ready_, write_stream_),
                            Where() + ": cudaEventRecord");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(log_stream_, batch_ready_, 0),
                            Where() + ": cudaStreamWaitEvent");
  GPKV_RETURN_IF_ERROR(RecordChecksumTerms(batch));
  return log::gpu::CopyRecordArraysAsync(pool_, record_offset, record_.header,
                                         RecordEntries(batch, tombstones), shape_.key_size(),
                                         shape_.value_size, log_stream_, Where());
}

Result<uint64_t> GpuBackend::FinishLogRecord(bool complete) {
  PhaseTimer timer(&times_.log);
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(log_stream_),
                            Where() + ": copy a batch into the log");
  if (!complete) return uint64_t{0};
  log::RecordHeader& header = record_.header;
  const uint64_t words = log::ColumnarRecordWords(record_.count, shape_.key_size(),
                                                  shape_.value_size, record_.tombstones);
  header.checksum =
      log::ChecksumFinish(log::RecordSeed(record_.epoch, header), words, *record_sum_);
  const uint64_t record_bytes =
      log::FinishRecord(pool_, record_.offset, header, shape_.key_size(), shape_.value_size);
  times_.copied_bytes += record_bytes;
  return record_bytes;
}

Status GpuBackend::PrepareLevelRun(DeviceRun& run, RunAge age, RunSummary* summary,
                                   uint64_t* checksum) {
  {
    // The filter's kernel runs before the facts' on the write stream, and
    // RunFacts waits for both: the filter is built when this returns.
    PhaseTimer timer(&times_.facts);
    if (age == RunAge::kNewer) GPKV_RETURN_IF_ERROR(BuildFilter(run));
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

Result<uint64_t> GpuBackend::WriteRun(Run& level_run, RunAge age) {
  DeviceRun& run = AsDevice(level_run);
  // Runs are copied into the pool at the link's speed when the mapping is
  // registered (tmpfs, DAX); before the registration started at open is
  // done, and for a file the driver cannot pin, through pageable memory.
  const bool registered = ReadyRegistration() != nullptr;
  if (!registered) ++times_.pageable_copies;
  RunSummary summary;
  uint64_t checksum = 0;
  GPKV_RETURN_IF_ERROR(PrepareLevelRun(run, age, &summary, &checksum));
  const uint64_t array_bytes = run.array_bytes();
  // The oldest run's filter is every bit set (FinishRun sets it).
  const RunFilterSource filter_source =
      age == RunAge::kOldest ? RunFilterSource::kAllSet : RunFilterSource::kCopied;
  const auto start = std::chrono::steady_clock::now();
  double copy_seconds = 0;
  auto written = WriteRunWith(
      pool_, table_id_, shape_, run.count, summary, checksum,
      [&](uint8_t* keys, uint8_t*, uint8_t*, uint8_t* filter) -> Status {
        PhaseTimer timer(&copy_seconds);
        // The three arrays lie back to back in both places; the filter
        // follows them.
        GPKV_CUDA_RETURN_IF_ERROR(
            cudaMemcpyAsync(keys, run.base, array_bytes, cudaMemcpyDeviceToHost, write_stream_),
            Where() + ": copy a run into the pool");
        if (filter_source == RunFilterSource::kCopied) {
          GPKV_CUDA_RETURN_IF_ERROR(
              cudaMemcpyAsync(filter, run.filter, RunFilterWords(run.count) * 8,
                              cudaMemcpyDeviceToHost, write_stream_),
              Where() + ": copy a run's filter into the pool");
        }
        GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(write_stream_),
                                  Where() + ": copy a run into the pool");
        return Status::OK();
      },
      threads_, filter_source);
  times_.copy += copy_seconds;
  times_.persist +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
      copy_seconds;
  return written;
}

Result<uint64_t> GpuBackend::StartRunWrite(const RunPtr& level_run, RunAge age) {
  DeviceRunPtr merged = AsDevice(level_run);
  RunSummary summary;
  uint64_t checksum = 0;
  GPKV_RETURN_IF_ERROR(PrepareLevelRun(*merged, age, &summary, &checksum));
  const RunFilterSource filter_source =
      age == RunAge::kOldest ? RunFilterSource::kAllSet : RunFilterSource::kCopied;
  auto extent = AllocateRun(pool_, table_id_, shape_, merged->count);
  if (!extent.ok()) return extent.status();
  auto write = std::make_unique<RunWrite>();
  write->run = merged;
  write->extent = *extent;
  const uint64_t array_bytes = merged->array_bytes();
  ReadyRegistration();  // registered: the copy runs at the link's speed
  // The copy runs behind the next batches: its own stream (the record
  // copies and the merges go on) and its own thread (it waits for the
  // copy, then writes the header and persists).
  const uint64_t chunk = options_.checkpoint_chunk_mb << 20;
  RunWrite* copy = write.get();
  copy->copied = std::async(std::launch::async, [this, copy, summary, checksum, array_bytes, chunk,
                                                 filter_source] {
    const auto start = std::chrono::steady_clock::now();
    // In slices, one in flight at a time: the record copies of the
    // batches meanwhile share the link instead of queuing behind the
    // whole run.
    auto copy_run = [&]() -> Status {
      GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
      const uint64_t slice = chunk == 0 ? array_bytes : chunk;
      const std::string what = Where() + ": copy a checkpoint's run into the pool";
      for (uint64_t at = 0; at < array_bytes; at += slice) {
        GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(copy->extent.keys + at, copy->run->base + at,
                                                  std::min(slice, array_bytes - at),
                                                  cudaMemcpyDeviceToHost, checkpoint_stream_),
                                  what);
        GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(checkpoint_stream_), what);
      }
      if (filter_source == RunFilterSource::kCopied) {
        GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(copy->extent.filter, copy->run->filter,
                                                  RunFilterWords(copy->run->count) * 8,
                                                  cudaMemcpyDeviceToHost, checkpoint_stream_),
                                  what);
        GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(checkpoint_stream_), what);
      }
      return Status::OK();
    };
    const Status status = copy_run();
    if (status.ok()) {
      FinishRun(pool_, table_id_, shape_, copy->extent, summary, checksum, threads_, filter_source);
    }
    copy->copy_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return status;
  });
  run_write_ = std::move(write);
  return extent->offset;
}

Status GpuBackend::FinishRunWrite() {
  std::unique_ptr<RunWrite> write = std::move(run_write_);
  const Status copied = [&] {
    PhaseTimer timer(&times_.checkpoint_wait);
    return write->copied.get();
  }();
  times_.checkpoint_copy += write->copy_seconds;
  return copied;
}

}  // namespace gpkv::lsm::gpu

// GpuBackend's open: the table's facts and the device's streams, every run
// read into GPU memory and checked there, the log's records checked on the
// host and uploaded, the warm-up batch and the pool's registration.
#include <algorithm>
#include <cstring>

#include "gpu/pool_registration.h"
#include "tables/lsm/gpu/backend.cuh"
#include "tables/lsm/reader.h"

namespace gpkv::lsm::gpu {
namespace {

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

}  // namespace

Status GpuBackend::Attach(const LsmView& view) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
  table_id_ = view.table_id;
  shape_ = view.shape();
  log2_batch_ = view.log2_batch;
  buffer_entries_ = view.buffer_entries();
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
  // Scratch memory stays in the pool between batches.
  cudaMemPool_t memory_pool;
  if (cudaDeviceGetDefaultMemPool(&memory_pool, device_) == cudaSuccess) {
    uint64_t threshold = UINT64_MAX;
    cudaMemPoolSetAttribute(memory_pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  }
  cudaGetLastError();
  return Status::OK();
}

Result<RunPtr> GpuBackend::ReadRun(const LsmView& view, uint32_t level) {
  // The run into GPU memory, its checksum computed there.
  const RunRef& ref = view.manifest.levels[level];
  RunHeader header;
  GPKV_RETURN_IF_ERROR(ReadRunHeader(pool_, view, level, &header));
  auto run = NewRun(ref.entries, write_stream_);
  if (!run.ok()) return run.status();
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync((*run)->base, pool_.At<uint8_t>(ref.offset) + kRunHeaderSize,
                      (*run)->data_bytes(), cudaMemcpyHostToDevice, write_stream_),
      Where() + ": read level " + std::to_string(level) + " run into the device");
  uint64_t checksum = 0;
  GPKV_RETURN_IF_ERROR(RunFacts(**run, &checksum));
  if (checksum != header.data_checksum) {
    return RunChecksumMismatch(pool_, view, level, header.data_checksum, checksum);
  }
  GPKV_RETURN_IF_ERROR(BuildFences(**run));
  // Gets test the filter of every level's run but the oldest (layout.h):
  // built here from the keys just checked, as a write builds it, not read
  // from the pool, so that it holds exactly the run's keys.
  bool oldest = true;
  for (uint32_t above = level + 1; above < kMaxLevels; ++above) {
    oldest &= view.manifest.levels[above].offset == 0;
  }
  if (!oldest) {
    GPKV_RETURN_IF_ERROR(BuildFilter(**run));
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(write_stream_),
                              Where() + ": level " + std::to_string(level) + " run's filter");
  }
  (*run)->tombstones = header.tombstones;
  return RunPtr(std::move(*run));
}

Status GpuBackend::ReplayLog(const LsmView& view, bool split, ReplayedRecords* out) {
  // Each record checked on the host (ReadLog: position, sequence, checksum;
  // then its keys' order), its arrays uploaded as a device run and carried
  // into the buffer as a write carries it. Row records of older pools are
  // decoded on the host first.
  std::vector<DeviceRunPtr> buffers[2];
  out->last_seq[0] = out->last_seq[1] = view.manifest.applied_seq;
  Status bad_record;
  auto replay = [&](uint32_t segment, const log::RecordHeader& header, uint64_t offset,
                    const uint8_t* entries) -> Status {
    const bool tombstones = (header.flags & log::kRecordTombstones) != 0;
    RunData decoded;
    const uint8_t* keys = entries;
    const uint8_t* values =
        tombstones ? nullptr : entries + uint64_t{header.count} * shape_.key_size();
    const uint8_t* meta = nullptr;
    if (header.flags == 0) {
      GPKV_RETURN_IF_ERROR(DecodeLogRecord(pool_, view, header, offset, entries, &decoded));
      const RunView host = decoded.View();
      keys = reinterpret_cast<const uint8_t*>(host.keys);
      values = host.values;
      meta = reinterpret_cast<const uint8_t*>(host.meta);
    } else {
      GPKV_RETURN_IF_ERROR(CheckColumnarRecordKeys(pool_, view, header, offset, entries));
    }
    auto run = NewRun(header.count, write_stream_);
    if (!run.ok()) return run.status();
    const DeviceRun& device = **run;
    const std::string what =
        pool_.Where(view.TableRegion() + " log record", offset) + ": read into the device";
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
    const uint32_t into = split ? segment : 0;
    auto next = CarryInto(buffers[into], *run);
    if (!next.ok()) return next.status();
    buffers[into] = std::move(*next);
    for (uint32_t s = segment; s < 2; ++s) out->last_seq[s] = header.seq;
    ++out->records;
    out->entries[into] += header.count;
    return Status::OK();
  };
  GPKV_RETURN_IF_ERROR(ReadLog(
      pool_, view,
      [&](uint32_t segment, const log::RecordHeader& header, uint64_t offset,
          const uint8_t* entries) {
        if (bad_record.ok())
          static_cast<void>(bad_record = replay(segment, header, offset, entries));
      },
      nullptr, threads_));
  GPKV_RETURN_IF_ERROR(bad_record);
  for (int segment = 0; segment < 2; ++segment) {
    out->buffers[segment] = std::make_shared<GpuBuffer>(std::move(buffers[segment]));
  }
  return Status::OK();
}

Status GpuBackend::FinishOpen() {
  if (!pool_.read_only()) GPKV_RETURN_IF_ERROR(WarmUp());
  // After the runs are read: pinning the pool beside those copies would
  // slow the open down.
  StartRegistration();
  return Status::OK();
}

Status GpuBackend::WarmUp() {
  const uint64_t n = std::min(uint64_t{1} << log2_batch_, kWarmUpEntries);
  cudaStream_t stream = write_stream_;
  // The memory pool keeps what is freed (release threshold), but every
  // allocation larger than what it holds maps new memory: the buffer's
  // carries and a checkpoint's merges grow it for a whole cycle of M
  // batches. One block reserved and freed here is what they carve from.
  const uint64_t reserve_units = options_.reserve_buffers;
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
    auto merged = MergePair(*sorted, *sorted, /*drop_tombstones=*/false);
    if (!merged.ok()) return merged.status();
    GPKV_RETURN_IF_ERROR(BuildFences(**merged));
    GPKV_RETURN_IF_ERROR(BuildFilter(**merged));
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), Where() + ": warm-up");
  return Status::OK();
}

void GpuBackend::StartRegistration() {
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

gpkv::gpu::PoolRegistration* GpuBackend::ReadyRegistration() {
  if (!registration_done_.load(std::memory_order_acquire)) {
    if (!options_.wait_for_registration) return nullptr;
    PhaseTimer timer(&times_.registration_wait);
    registration_thread_.join();
  }
  // A pool the driver cannot pin (Unsupported) or a failed registration:
  // runs reach it through pageable memory, as before the registration.
  return registration_.get();
}

}  // namespace gpkv::lsm::gpu

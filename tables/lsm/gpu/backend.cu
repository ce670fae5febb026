// GpuBackend: the class (construction, teardown, the version queries read,
// the write profile) and the helpers its .cu files share: device runs,
// staging copies, the prefix sum.
#include <cub/cub.cuh>

#include "gpu/cub_temp_storage.h"
#include "gpu/device_memory.h"
#include "gpu/pool_registration.h"
#include "gpu/staged_copy.h"
#include "tables/lsm/gpu/backend.cuh"

namespace gpkv::lsm::gpu {

using gpkv::gpu::CubTempBytes;
using gpkv::gpu::CubTempStorage;
using gpkv::gpu::RunCub;

namespace {

__global__ void TotalKernel(const uint32_t* flags, const uint64_t* positions, uint64_t n,
                            uint64_t* total) {
  *total = n == 0 ? 0 : positions[n - 1] + flags[n - 1];
}

}  // namespace

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

Status GpuBackend::DeviceUsable(int device) { return gpkv::gpu::DeviceUsable(device); }

Result<std::unique_ptr<GpuBackend>> GpuBackend::Create(pm::Pool& pool,
                                                       const std::string& table_name, int threads,
                                                       const OrderedGpuOptions& options,
                                                       int device) {
  GPKV_RETURN_IF_ERROR(gpkv::gpu::DeviceUsable(device));
  return std::unique_ptr<GpuBackend>(new GpuBackend(pool, table_name, threads, options, device));
}

GpuBackend::GpuBackend(pm::Pool& pool, std::string table_name, int threads,
                       const OrderedGpuOptions& options, int device)
    : pool_(pool),
      table_name_(std::move(table_name)),
      threads_(std::max(1, threads)),
      device_(device),
      options_(options) {}

GpuBackend::~GpuBackend() {
  cudaSetDevice(device_);
  // A run write still in flight (the core publishes a pending checkpoint
  // before it goes, so only after a failed open) ends before its run.
  if (run_write_ != nullptr && run_write_->copied.valid()) run_write_->copied.wait();
  run_write_.reset();
  // The registration handle goes before the pool closes (its contract).
  if (registration_thread_.joinable()) registration_thread_.join();
  registration_.reset();
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

Status GpuBackend::BindThread() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "cudaSetDevice");
  return Status::OK();
}

void GpuBackend::EndWrite() { write_scratch_.reset(); }

BufferPtr GpuBackend::EmptyBuffer() {
  return std::make_shared<GpuBuffer>(std::vector<DeviceRunPtr>());
}

void GpuBackend::Install(std::shared_ptr<const Version> version) {
  {
    std::unique_lock<std::shared_mutex> lock(version_mutex_);
    version_.swap(version);
  }
  version.reset();  // the previous version, outside the lock
}

Result<DeviceRunPtr> GpuBackend::NewRunOfKept(const uint32_t* counts, uint64_t n, Scratch& scratch,
                                              uint64_t** positions) {
  uint64_t kept = 0;
  GPKV_RETURN_IF_ERROR(Positions(counts, n, positions, &kept, pinned_, scratch));
  return NewRun(kept, scratch.stream());
}

Result<DeviceRunPtr> GpuBackend::NewRun(uint64_t count, cudaStream_t stream) {
  auto run = std::make_shared<DeviceRun>();
  run->count = count;
  run->key_words = shape_.key_words;
  run->value_size = shape_.value_size;
  const uint64_t bytes = std::max<uint64_t>(run->data_bytes(), 8);
  void* base = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(
      options_.pooled_runs ? cudaMallocAsync(&base, bytes, write_stream_)
                           : cudaMalloc(&base, bytes),
      Where() + ": device memory for a run of " + std::to_string(count) + " entries");
  run->base = static_cast<uint8_t*>(base);
  if (options_.pooled_runs) {
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

Status GpuBackend::StageIn(Scratch& scratch, const uint8_t* data, size_t bytes,
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

Status GpuBackend::CopyIn(void* device, const void* host, size_t bytes, cudaStream_t stream,
                          const char* what) {
  return gpkv::gpu::CopyToDevice(device, host, bytes, stream, Where() + ": copy " + what);
}

Status GpuBackend::CopyOut(void* host, const void* device, size_t bytes, cudaStream_t stream,
                           const char* what) {
  return gpkv::gpu::CopyToHost(host, device, bytes, stream, Where() + ": copy " + what);
}

void GpuBackend::AddWriteProfile(const WriteCounters& counters, LsmStats* stats) {
  const WriteTimes& t = times_;
  stats->write_profile = {
      {"gpu-batches", static_cast<double>(counters.batches)},
      {"gpu-flushes", static_cast<double>(counters.flushes)},
      {"gpu-log-appends", static_cast<double>(counters.log_appends)},
      {"gpu-checkpoints", static_cast<double>(counters.checkpoints)},
      {"gpu-pageable-run-copies", static_cast<double>(t.pageable_copies)},
      {"gpu-run-bytes-copied", static_cast<double>(t.copied_bytes)},
      {"gpu-registered",
       registration_done_.load(std::memory_order_acquire) && registration_ != nullptr ? 1.0 : 0.0},
      {"gpu-seconds-sort", t.sort},
      {"gpu-seconds-log", t.log},
      {"gpu-seconds-buffer-merge", t.buffer},
      {"gpu-seconds-merge", t.merge},
      {"gpu-seconds-checksum", t.facts},
      {"gpu-seconds-fences", t.fences},
      {"gpu-seconds-copy-to-pool", t.copy},
      {"gpu-seconds-persist", t.persist},
      {"gpu-seconds-install", counters.install},
      {"gpu-seconds-sync", counters.sync},
      {"gpu-seconds-compact", counters.compact},
      {"gpu-seconds-registration-wait", t.registration_wait},
      {"gpu-seconds-checkpoint-copy", t.checkpoint_copy},
      {"gpu-seconds-checkpoint-wait", t.checkpoint_wait},
  };
}

}  // namespace gpkv::lsm::gpu

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "gpu/cuda_check.h"
#include "gpu/host_memory.h"
#include "gpu/pool_registration.h"
#include "gpu/stream_scratch.h"
#include "tables/gphash/logged/gpu/device_records.h"
#include "tables/log/gpu/record_writer.cuh"
#include "tables/log/layout.h"
#include "tables/log/record.h"

namespace gpkv::gphash::logged::gpu {
namespace {

// True when `address` may be read as 8-byte words.
bool Aligned8(const void* address) { return reinterpret_cast<uintptr_t>(address) % 8 == 0; }

class CudaRecordWriter final : public DeviceRecordWriter {
 public:
  CudaRecordWriter(pm::Pool& pool, int device) : pool_(pool), device_(device) {}

  // Registers the pool on a thread of its own (a read-only pool takes no
  // records: none).
  void StartRegistration() override {
    if (registration_started_ || pool_.read_only()) return;
    registration_started_ = true;
    registration_thread_ = std::thread([this] {
      const auto start = std::chrono::steady_clock::now();
      // A pool the driver cannot pin (Unsupported) is copied to through
      // pageable memory: slower, the same bytes.
      if (cudaSetDevice(device_) == cudaSuccess) {
        auto registration = ::gpkv::gpu::PoolRegistration::Acquire(pool_);
        if (registration.ok()) registration_ = std::move(*registration);
      }
      registration_ns_.store(
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - start)
                                    .count()),
          std::memory_order_relaxed);
    });
  }

  Counters counters() const override {
    Counters counters;
    counters.registration_ns = registration_ns_.load(std::memory_order_relaxed);
    counters.pageable_records = pageable_records_.load(std::memory_order_relaxed);
    return counters;
  }

  ~CudaRecordWriter() override {
    if (registration_thread_.joinable()) registration_thread_.join();
    if (stream_ != nullptr) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }

  Status StartRecordArrays(pm::Pool& pool, uint64_t record_offset, uint64_t epoch, uint64_t seq,
                           const uint8_t* keys, const uint8_t* values, uint64_t count,
                           uint32_t key_size, uint32_t value_size) override {
    const std::string where = "log record from device memory";
    // The first record waits for the pool's registration (records through
    // pageable memory until it is done measured no better:
    // docs/bench/logged-hash.md).
    StartRegistration();
    if (registration_thread_.joinable()) registration_thread_.join();
    if (registration_ == nullptr) pageable_records_.fetch_add(1, std::memory_order_relaxed);
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), where + ": cudaSetDevice");
    if (stream_ == nullptr) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                where + ": cudaStreamCreate");
    }
    if (host_sum_.data() == nullptr) {
      // Pinned, so that the checksum's copy back is queued, not waited for.
      auto pinned = ::gpkv::gpu::PinnedBytes::Allocate(sizeof(unsigned long long));
      if (!pinned.ok()) return pinned.status();
      host_sum_ = std::move(*pinned);
    }
    const Status queued = QueueRecord(pool, record_offset, epoch, seq, keys, values, count,
                                      key_size, value_size, where);
    // Nothing of a failed record stays in flight.
    if (!queued.ok()) cudaStreamSynchronize(stream_);
    return queued;
  }

  Result<log::RecordHeader> WaitRecordArrays() override {
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "log record from device memory");
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), "log record from device memory");
    unsigned long long sum = 0;
    std::memcpy(&sum, host_sum_.data(), sizeof(sum));
    log::RecordHeader header = started_.header;
    header.checksum = log::ChecksumFinish(started_.seed, started_.words, sum);
    return header;
  }

 private:
  // The started record: its header (checksum to come), checksum seed and
  // data words.
  struct Started {
    log::RecordHeader header{};
    uint64_t seed = 0;
    uint64_t words = 0;
  };

  // Queues the record's aligned copies, checksum, copy to the pool and the
  // checksum's copy back on stream_, and sets started_.
  Status QueueRecord(pm::Pool& pool, uint64_t record_offset, uint64_t epoch, uint64_t seq,
                     const uint8_t* keys, const uint8_t* values, uint64_t count, uint32_t key_size,
                     uint32_t value_size, const std::string& where) {
    const bool tombstones = values == nullptr;
    const log::RecordHeader header = log::ColumnarRecordHeader(seq, count, tombstones);
    // Its allocations are freed in stream order, after the work queued here.
    ::gpkv::gpu::StreamScratch scratch(stream_);
    log::gpu::DeviceRecordEntries entries;
    entries.keys = reinterpret_cast<const uint64_t*>(keys);
    entries.values = values;
    entries.count = count;
    const uint64_t key_bytes = count * key_size;
    if (!Aligned8(keys)) {
      // The checksum reads the keys as 8-byte words: an aligned copy.
      uint8_t* aligned = nullptr;
      GPKV_RETURN_IF_ERROR(scratch.Take(key_bytes, &aligned, "aligned keys"));
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(aligned, keys, key_bytes, cudaMemcpyDeviceToDevice, stream_),
          where + ": align the keys");
      entries.keys = reinterpret_cast<const uint64_t*>(aligned);
    }
    const uint64_t value_bytes = count * value_size;
    if (!tombstones && (value_bytes % 8 != 0 || !Aligned8(values))) {
      // The checksum sums the values as 8-byte words with their zero
      // padding: an aligned, padded copy.
      uint8_t* padded = nullptr;
      GPKV_RETURN_IF_ERROR(scratch.Take(log::AlignUp8(value_bytes), &padded, "padded values"));
      GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(padded + value_bytes, 0,
                                                log::AlignUp8(value_bytes) - value_bytes, stream_),
                                where + ": zero the values' padding");
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(padded, values, value_bytes, cudaMemcpyDeviceToDevice, stream_),
          where + ": pad the values");
      entries.values = padded;
    }
    const uint64_t seed = log::RecordSeed(epoch, header);
    unsigned long long* device_sum = nullptr;
    GPKV_RETURN_IF_ERROR(scratch.Take(1, &device_sum, "log record checksum"));
    GPKV_RETURN_IF_ERROR(log::gpu::SumRecordTermsAsync(entries, key_size, value_size, seed,
                                                       device_sum, stream_, where));
    GPKV_RETURN_IF_ERROR(log::gpu::CopyRecordArraysAsync(pool, record_offset, header, entries,
                                                         key_size, value_size, stream_, where));
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_sum_.data(), device_sum, sizeof(*device_sum),
                                              cudaMemcpyDeviceToHost, stream_),
                              where + ": copy the checksum");
    started_.header = header;
    started_.seed = seed;
    started_.words = log::ColumnarRecordWords(count, key_size, value_size, tombstones);
    return Status::OK();
  }

  pm::Pool& pool_;
  const int device_;
  bool registration_started_ = false;
  std::atomic<uint64_t> registration_ns_{0};
  std::atomic<uint64_t> pageable_records_{0};
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<::gpkv::gpu::PoolRegistration> registration_;  // set by registration_thread_
  std::thread registration_thread_;
  ::gpkv::gpu::PinnedBytes host_sum_;  // the started record's checksum terms, copied back
  Started started_;
};

}  // namespace

std::unique_ptr<DeviceRecordWriter> MakeDeviceRecordWriter(pm::Pool& pool, int device) {
  return std::make_unique<CudaRecordWriter>(pool, device);
}

}  // namespace gpkv::gphash::logged::gpu

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/cub.cuh>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "gpu/cub_temp_storage.h"
#include "gpu/cuda_check.h"
#include "tables/gphash/logged/gpu/device_image_writer.h"
#include "tables/gphash/logged/layout.h"
#include "tables/gphash/logged/root.h"
#include "tables/hash_index.h"
#include "tables/log/gpu/record_writer.cuh"
#include "tables/log/layout.h"

namespace gpkv::gphash::logged::gpu {
namespace {

constexpr int kBlock = 256;
constexpr unsigned kMaxBlocks = 4096;

unsigned Blocks(uint64_t items) {
  const uint64_t blocks = (items + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::clamp<uint64_t>(blocks, 1, kMaxBlocks));
}

__global__ void IotaKernel(uint32_t* order, uint64_t count) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    order[i] = static_cast<uint32_t>(i);
  }
}

// words[i] = word `word` of the key at order[i]: the digit of one LSD pass.
__global__ void KeyWordKernel(const uint64_t* keys, uint32_t key_words, const uint32_t* order,
                              uint32_t word, uint64_t count, uint64_t* words) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    words[i] = keys[uint64_t{order[i]} * key_words + word];
  }
}

// The image's data in key order: the keys packed, then the values packed at
// value_size bytes each (the scan's values lie value_words words apart).
__global__ void GatherKernel(const uint64_t* keys, uint32_t key_words, const uint64_t* values,
                             uint32_t value_words, uint32_t value_size, const uint32_t* order,
                             uint64_t count, uint64_t* image_keys, uint8_t* image_values) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t from = order[i];
    for (uint32_t w = 0; w < key_words; ++w) {
      image_keys[i * key_words + w] = keys[from * key_words + w];
    }
    const auto* value = reinterpret_cast<const uint8_t*>(values + from * value_words);
    for (uint32_t b = 0; b < value_size; ++b) image_values[i * value_size + b] = value[b];
  }
}

// Device memory of one checkpoint, taken at its scan and given back after
// its write (or when a scan finds it short), in the order of the writer's
// stream (cudaMallocAsync: no device-wide synchronisation of cudaFree while
// batches run). The owner releases it before it destroys the stream.
class DeviceBlock {
 public:
  DeviceBlock() = default;
  DeviceBlock(const DeviceBlock&) = delete;
  DeviceBlock& operator=(const DeviceBlock&) = delete;

  Status Allocate(uint64_t bytes, cudaStream_t stream, const char* what) {
    Release(stream);
    GPKV_CUDA_RETURN_IF_ERROR(cudaMallocAsync(&data_, std::max<uint64_t>(bytes, 8), stream),
                              std::string("checkpoint image on the device: ") + what);
    return Status::OK();
  }
  void Release(cudaStream_t stream) {
    if (data_ != nullptr) cudaFreeAsync(data_, stream);
    data_ = nullptr;
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

class DeviceImageWriter final : public ImageWriter {
 public:
  DeviceImageWriter(pm::Pool& pool, uint64_t table_id, uint32_t key_size, uint32_t value_size,
                    int threads)
      : pool_(pool),
        table_id_(table_id),
        key_size_(key_size),
        value_size_(value_size),
        key_words_(key_size / 8),
        value_words_((value_size + 7) / 8),
        host_(MakeHostImageWriter(pool, table_id, key_size, value_size, threads)) {}
  ~DeviceImageWriter() override {
    if (stream_ != nullptr) {
      cudaSetDevice(device_);
      ReleaseAll();
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }

  Result<ImagePlace> Scan(Table& index, uint64_t generation) override {
    on_host_ = true;
    auto* source = dynamic_cast<tables::DeviceIndexScan*>(&index);
    if (source != nullptr && source->cuda_device() >= 0) {
      auto entries = Gather(index, *source);
      if (entries.ok()) {
        on_host_ = false;
        auto offset = ReserveImage(pool_, table_id_, key_size_, value_size_, *entries);
        if (!offset.ok()) {
          ReleaseAll();
          return offset.status();
        }
        generation_ = generation;
        place_ = {*offset, *entries};
        return place_;
      }
      ReleaseAll();
      // Device memory short for the pairs and their sort: the host writer
      // scans and sorts this checkpoint instead (the same bytes).
      if (entries.status().code() != Code::kOutOfDeviceMemory) return entries.status();
      cudaGetLastError();  // the failed allocation's error is not sticky
    }
    return host_->Scan(index, generation);
  }

  Status Write() override {
    if (on_host_) return host_->Write();
    const Status written = place_.offset != 0 ? SortAndCopy() : Status::OK();
    ReleaseAll();
    return written;
  }

 private:
  // The index's pairs into scanned_keys_ / scanned_values_, and the rest of
  // the checkpoint's device memory taken; returns the pair count.
  // OutOfDeviceMemory when it does not fit (nothing kept).
  Result<uint64_t> Gather(Table& index, tables::DeviceIndexScan& source) {
    device_ = source.cuda_device();
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "checkpoint image: cudaSetDevice");
    if (stream_ == nullptr) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                "checkpoint image: cudaStreamCreate");
    }
    auto stats = index.Stats();
    if (!stats.ok()) return stats.status();
    uint64_t capacity = stats->keys;
    uint64_t pairs = 0;
    while (true) {
      if (capacity > std::numeric_limits<int32_t>::max()) {
        // The sort's item count and order are 32-bit.
        return Status::OutOfDeviceMemory("checkpoint image: too many pairs for the device sort");
      }
      GPKV_RETURN_IF_ERROR(Reserve(capacity));
      // The scan runs on the index's stream: the memory first.
      GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_),
                                "checkpoint image: device memory for the pairs");
      GPKV_RETURN_IF_ERROR(source.ScanIntoDevice(scanned_keys_.as<uint64_t>(),
                                                 scanned_values_.as<uint64_t>(), capacity, &pairs));
      if (pairs <= capacity) break;
      capacity = pairs;  // more than the stats said: again, with room
    }
    if (pairs == 0) ReleaseAll();
    return pairs;
  }

  // Device memory for the sort and the image of `capacity` pairs.
  Status Reserve(uint64_t capacity) {
    const uint64_t n = std::max<uint64_t>(capacity, 1);
    GPKV_RETURN_IF_ERROR(scanned_keys_.Allocate(n * key_words_ * 8, stream_, "scanned keys"));
    GPKV_RETURN_IF_ERROR(scanned_values_.Allocate(n * value_words_ * 8, stream_, "scanned values"));
    GPKV_RETURN_IF_ERROR(words_.Allocate(2 * n * sizeof(uint64_t), stream_, "sort words"));
    GPKV_RETURN_IF_ERROR(order_.Allocate(2 * n * sizeof(uint32_t), stream_, "sort order"));
    GPKV_RETURN_IF_ERROR(
        image_.Allocate(n * key_size_ + log::AlignUp8(n * value_size_) + 8, stream_, "image data"));
    size_t sort_bytes = 0;
    GPKV_RETURN_IF_ERROR(::gpkv::gpu::CubTempBytes(
        [&](void* storage, size_t& bytes) {
          cub::DoubleBuffer<uint64_t> words(words_.as<uint64_t>(), words_.as<uint64_t>() + n);
          cub::DoubleBuffer<uint32_t> order(order_.as<uint32_t>(), order_.as<uint32_t>() + n);
          return cub::DeviceRadixSort::SortPairs(storage, bytes, words, order, static_cast<int>(n));
        },
        &sort_bytes, "checkpoint image: sort (size query)"));
    GPKV_RETURN_IF_ERROR(sort_storage_.Allocate(sort_bytes, stream_, "sort storage"));
    sort_bytes_ = sort_bytes;
    capacity_ = n;
    return Status::OK();
  }

  void ReleaseAll() {
    for (DeviceBlock* block :
         {&scanned_keys_, &scanned_values_, &words_, &order_, &image_, &sort_storage_}) {
      block->Release(stream_);
    }
  }

  // On the worker thread: the pairs sorted in key order (layout.h
  // CompareKeys, as key_order.h: the key's little-endian words, least
  // significant first, each pass a stable radix sort), gathered into the
  // image's data, checksummed, copied into the extent; then the header.
  Status SortAndCopy() {
    const std::string where = "checkpoint image on the device";
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), where + ": cudaSetDevice");
    const uint64_t n = place_.entries;
    const int items = static_cast<int>(n);
    // The double buffers' second arrays start at Reserve's capacity.
    uint64_t* words[2] = {words_.as<uint64_t>(), words_.as<uint64_t>() + capacity_};
    uint32_t* order[2] = {order_.as<uint32_t>(), order_.as<uint32_t>() + capacity_};
    IotaKernel<<<Blocks(n), kBlock, 0, stream_>>>(order[0], n);
    GPKV_CUDA_RETURN_IF_ERROR(cudaPeekAtLastError(), where + ": IotaKernel");
    int current = 0;
    for (uint32_t word = 0; word < key_words_; ++word) {
      KeyWordKernel<<<Blocks(n), kBlock, 0, stream_>>>(scanned_keys_.as<uint64_t>(), key_words_,
                                                       order[current], word, n, words[0]);
      GPKV_CUDA_RETURN_IF_ERROR(cudaPeekAtLastError(), where + ": KeyWordKernel");
      cub::DoubleBuffer<uint64_t> word_buffer(words[0], words[1]);
      cub::DoubleBuffer<uint32_t> order_buffer(order[current], order[1 - current]);
      GPKV_RETURN_IF_ERROR(::gpkv::gpu::RunCub(
          [&](void* storage, size_t& bytes) {
            return cub::DeviceRadixSort::SortPairs(storage, bytes, word_buffer, order_buffer, items,
                                                   0, 64, stream_);
          },
          ::gpkv::gpu::CubTempStorage{sort_storage_.as<void>(), sort_bytes_}, where + ": sort"));
      current = order_buffer.Current() == order[0] ? 0 : 1;
    }
    const uint64_t key_bytes = n * key_size_;
    const uint64_t value_bytes = n * value_size_;
    uint8_t* image_data = image_.as<uint8_t>();
    // The values' zero padding, summed with them.
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(image_data + key_bytes + value_bytes, 0,
                                              log::AlignUp8(value_bytes) - value_bytes, stream_),
                              where + ": zero the values' padding");
    GatherKernel<<<Blocks(n), kBlock, 0, stream_>>>(
        scanned_keys_.as<uint64_t>(), key_words_, scanned_values_.as<uint64_t>(), value_words_,
        value_size_, order[current], n, reinterpret_cast<uint64_t*>(image_data),
        image_data + key_bytes);
    GPKV_CUDA_RETURN_IF_ERROR(cudaPeekAtLastError(), where + ": GatherKernel");
    // The checksum of the data words: a columnar record's rule (keys, then
    // the padded values) with the image's seed.
    const uint64_t seed = ImageSeed(table_id_, generation_);
    log::gpu::DeviceRecordEntries entries;
    entries.keys = reinterpret_cast<const uint64_t*>(image_data);
    entries.values = image_data + key_bytes;
    entries.count = n;
    // The sum's 8 bytes after the padded values.
    auto* device_sum =
        reinterpret_cast<unsigned long long*>(image_data + key_bytes + log::AlignUp8(value_bytes));
    GPKV_RETURN_IF_ERROR(log::gpu::SumRecordTermsAsync(entries, key_size_, value_size_, seed,
                                                       device_sum, stream_, where));
    uint8_t* image = pool_.At<uint8_t>(place_.offset);
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(image + kImageHeaderSize, image_data, key_bytes + value_bytes,
                        cudaMemcpyDeviceToHost, stream_),
        where + ": copy the pairs into the pool");
    unsigned long long sum = 0;
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(&sum, device_sum, sizeof(sum), cudaMemcpyDeviceToHost, stream_),
        where + ": copy the checksum");
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), where);
    const uint64_t data_words = ImageDataWords(n, key_size_, value_size_);
    FinishImage(pool_, place_.offset, table_id_, key_size_, value_size_, generation_, n,
                log::ChecksumFinish(seed, data_words, sum));
    return Status::OK();
  }

  pm::Pool& pool_;
  const uint64_t table_id_;
  const uint32_t key_size_;
  const uint32_t value_size_;
  const uint32_t key_words_;
  const uint32_t value_words_;
  std::unique_ptr<ImageWriter> host_;  // the fallback
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  bool on_host_ = true;  // this checkpoint's pairs went to the host writer
  uint64_t generation_ = 0;
  ImagePlace place_;
  uint64_t capacity_ = 0;  // pairs the buffers below have room for
  DeviceBlock scanned_keys_;
  DeviceBlock scanned_values_;
  DeviceBlock words_;  // two arrays of capacity_ words: the sort's double buffer
  DeviceBlock order_;  // two arrays of capacity_ indices
  DeviceBlock image_;  // the image's data, then the checksum's sum
  DeviceBlock sort_storage_;
  size_t sort_bytes_ = 0;
};

}  // namespace

std::unique_ptr<ImageWriter> MakeDeviceImageWriter(pm::Pool& pool, uint64_t table_id,
                                                   uint32_t key_size, uint32_t value_size,
                                                   int threads) {
  return std::make_unique<DeviceImageWriter>(pool, table_id, key_size, value_size, threads);
}

}  // namespace gpkv::gphash::logged::gpu

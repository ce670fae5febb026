#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cub/cub.cuh>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/device_memory.h"
#include "gpu/pointer_kind.h"
#include "gpu/resident_blocks.cuh"
#include "gpu/staged_copy.h"
#include "gpu/stream_scratch.h"
#include "tables/btree/gpu/backend.h"
#include "tables/btree/gpu/kernels.cuh"
#include "tables/btree/gpu/read_kernels.cuh"
#include "tables/exception_status.h"

namespace gpkv::btree::gpu {
namespace {

constexpr int kBlockThreads = 256;
static_assert(kBlockThreads == kWriteBlockThreads,
              "WriteKernel sizes its shared memory by it; it bounds BuildLeavesKernel");
constexpr uint64_t kFirstNodes = 1024;
constexpr uint64_t kFirstSlots = 1024;
// The most nodes and version slots 32-bit indices can name (kNone excluded).
constexpr uint64_t kMaxIndices = uint64_t{1} << 31;

unsigned int BlocksFor(uint64_t threads) {
  const uint64_t wanted = (threads + kBlockThreads - 1) / kBlockThreads;
  const uint64_t most = uint64_t{32} * ::gpkv::gpu::MultiprocessorCount();
  return static_cast<unsigned int>(std::max<uint64_t>(1, std::min(wanted, most)));
}

// A kernel (or CUB call) queued on the default stream behind the steps of
// its call before it: its launch checked. What it does is checked where the
// call next waits for the stream (CheckLaunch or a copy back).
Status CheckQueued(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    return ::gpkv::gpu::CudaStatus(error, std::string("btree gpu: launch of ") + kernel);
  }
  return Status::OK();
}

// A kernel launched on the default stream, done.
Status CheckLaunch(const char* kernel) {
  GPKV_RETURN_IF_ERROR(CheckQueued(kernel));
  return ::gpkv::gpu::CudaStatus(cudaStreamSynchronize(0), std::string("btree gpu: ") + kernel);
}

// Device memory that only grows; its contents do not survive a growth
// unless `keep` bytes are asked to.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (data_ != nullptr) cudaFree(data_);
  }

  Status Reserve(size_t bytes, size_t keep = 0) {
    if (bytes <= size_) return Status::OK();
    void* grown = nullptr;
    GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&grown, bytes), "btree gpu: device memory");
    if (keep > 0) {
      const cudaError_t copied = cudaMemcpy(grown, data_, keep, cudaMemcpyDeviceToDevice);
      if (copied != cudaSuccess) {
        cudaFree(grown);
        return ::gpkv::gpu::CudaStatus(copied, "btree gpu: growing device memory");
      }
    }
    if (data_ != nullptr) cudaFree(data_);
    data_ = grown;
    size_ = bytes;
    return Status::OK();
  }

  void Swap(Buffer& other) {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

Status CopyIn(Buffer* buffer, const void* source, size_t bytes) {
  GPKV_RETURN_IF_ERROR(buffer->Reserve(std::max<size_t>(bytes, 8)));
  if (bytes == 0) return Status::OK();
  // Host or device memory alike; pageable memory through pinned chunks. The
  // kernels after it run on the same (default) stream.
  return ::gpkv::gpu::CopyToDevice(buffer->as<void>(), source, bytes, nullptr,
                                   "btree gpu: a batch's input");
}

Status CopyOut(void* target, const void* source, size_t bytes) {
  if (bytes == 0) return Status::OK();
  GPKV_RETURN_IF_ERROR(
      ::gpkv::gpu::CopyToHost(target, source, bytes, nullptr, "btree gpu: a batch's output"));
  return ::gpkv::gpu::CudaStatus(cudaStreamSynchronize(0), "btree gpu: a batch's output");
}

// Whether the kernels use a caller's array in place: device memory of
// `device`, aligned for their 8-byte words.
bool InPlace(const void* caller, int device) {
  return caller != nullptr && reinterpret_cast<uintptr_t>(caller) % 8 == 0 &&
         ::gpkv::gpu::IsDeviceMemory(caller, device);
}

// One read call's device work: the calling thread's default stream (so
// that the reads of several threads run beside each other, none waiting
// for another's) and the scratch it takes from the device's stream-ordered
// pool. Every step waits for its stream before the call goes on, and the
// scratch goes back when the call ends.
class ReadCall {
 public:
  explicit ReadCall(int device) : device_(device), scratch_(cudaStreamPerThread) {}
  // The call's work is done before its scratch goes back, also when it
  // failed half-way.
  ~ReadCall() { cudaStreamSynchronize(scratch_.stream()); }
  ReadCall(const ReadCall&) = delete;
  ReadCall& operator=(const ReadCall&) = delete;

  cudaStream_t stream() const { return scratch_.stream(); }

  // An input at *device: the caller's array in place, else a copy in
  // scratch.
  template <typename T>
  Status In(const uint8_t* caller, size_t bytes, const T** device) {
    if (InPlace(caller, device_)) {
      *device = reinterpret_cast<const T*>(caller);
      return Status::OK();
    }
    uint8_t* copy = nullptr;
    GPKV_RETURN_IF_ERROR(scratch_.Take(bytes, &copy, "a batch's input"));
    if (bytes > 0) {
      GPKV_RETURN_IF_ERROR(
          ::gpkv::gpu::CopyToDevice(copy, caller, bytes, stream(), "btree gpu: a batch's input"));
    }
    *device = reinterpret_cast<const T*>(copy);
    return Status::OK();
  }

  // An output at *device: the caller's array in place, else scratch (also
  // where the caller wants none: caller null), which Back copies to the
  // caller's array after the kernel.
  Status Out(uint8_t* caller, size_t bytes, uint8_t** device) {
    if (InPlace(caller, device_)) {
      *device = caller;
      return Status::OK();
    }
    return scratch_.Take(bytes, device, "a batch's output");
  }

  // Scratch for `count` T.
  template <typename T>
  Status Take(size_t count, T** out, const char* what) {
    return scratch_.Take(count, out, what);
  }

  // The kernel just launched on stream(), done.
  Status Launched(const char* kernel) {
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) {
      return ::gpkv::gpu::CudaStatus(error, std::string("btree gpu: launch of ") + kernel);
    }
    return ::gpkv::gpu::CudaStatus(cudaStreamSynchronize(stream()),
                                   std::string("btree gpu: ") + kernel);
  }

  // `bytes` of device memory at `device` in the caller's array (nothing
  // when the caller wants none or the kernel wrote it in place), there
  // when this returns.
  Status Back(void* caller, const void* device, size_t bytes) {
    if (caller == nullptr || caller == device || bytes == 0) return Status::OK();
    GPKV_RETURN_IF_ERROR(
        ::gpkv::gpu::CopyToHost(caller, device, bytes, stream(), "btree gpu: a batch's output"));
    return ::gpkv::gpu::CudaStatus(cudaStreamSynchronize(stream()), "btree gpu: a batch's output");
  }

 private:
  const int device_;
  ::gpkv::gpu::StreamScratch scratch_;
};

template <uint32_t kKeyWords>
class GpuBackend final : public Backend {
 public:
  using TreeKey = Key<kKeyWords>;
  static constexpr size_t kKeySize = kKeyWords * sizeof(uint64_t);

  GpuBackend(uint32_t value_size, int device, const GpuTuning& tuning)
      : value_size_(value_size), device_(device), sorted_get_min_(tuning.sorted_get_min) {}

  // The first empty leaf, its root, the pool and the host_counters_.
  Status Init() {
    GPKV_RETURN_IF_ERROR(SetDevice());
    GPKV_RETURN_IF_ERROR(nodes_.Reserve(kFirstNodes * sizeof(Node<kKeyWords>)));
    GPKV_RETURN_IF_ERROR(root_.Reserve(sizeof(uint32_t)));
    GPKV_RETURN_IF_ERROR(counters_.Reserve(sizeof(Counters)));
    GPKV_RETURN_IF_ERROR(ReserveSlots(kFirstSlots));
    // The reads' scratch (ReadCall) stays in the device's pool between
    // calls instead of going back to the driver at each synchronisation.
    cudaMemPool_t memory_pool;
    if (cudaDeviceGetDefaultMemPool(&memory_pool, device_) == cudaSuccess) {
      uint64_t threshold = UINT64_MAX;
      cudaMemPoolSetAttribute(memory_pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    }
    cudaGetLastError();
    return ResetToOneLeaf();
  }

  // ---- writes ----

  Status Write(const WriteBatch& batch) override {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = batch.count;
    if (n == 0) return Status::OK();
    GPKV_RETURN_IF_ERROR(SetDevice());
    if (n >= kMaxIndices) {
      return Status::InvalidArgument("btree gpu: a batch of " + std::to_string(n) +
                                     " operations is past 2^31");
    }
    const bool puts = batch.values != nullptr;
    // The batch's operations that count, in key order.
    Sorted sorted;
    GPKV_RETURN_IF_ERROR(batch.order == nullptr ? SortOnDevice(batch, &n, &sorted)
                                                : SortedOnHost(batch, &sorted));
    GPKV_RETURN_IF_ERROR(CopyLive(batch.live));
    // Every operation takes at most one slot, from the free list first.
    GPKV_RETURN_IF_ERROR(ReserveSlots(used_ + (n > free_count_ ? n - free_count_ : 0)));
    if (puts && host_counters_.leaf_entries == 0) return BulkBuild(sorted, n, batch.timestamp);
    // keys_ and values_: the operations in key order, as the write kernel
    // reads them.
    GPKV_RETURN_IF_ERROR(Gather(sorted, n));

    GPKV_RETURN_IF_ERROR(flags_.Reserve(n));
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemset(flags_.as<void>(), 0, n), "btree gpu: write batch");
    uint8_t* was_live = nullptr;
    if (!puts) {
      GPKV_RETURN_IF_ERROR(was_live_.Reserve(n));
      GPKV_CUDA_RETURN_IF_ERROR(cudaMemset(was_live_.as<void>(), 0, n), "btree gpu: write batch");
      was_live = was_live_.as<uint8_t>();
    }
    while (true) {
      // The groups take their operations from handed_out (WriteKernel), as
      // many blocks as the multiprocessors hold at once.
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(&counters_.as<Counters>()->handed_out, 0, sizeof(unsigned long long)),
          "btree gpu: write batch");
      const unsigned int blocks =
          ::gpkv::gpu::ResidentBlocksFor<WriteKernel<kKeyWords>>(BlocksFor(n), kBlockThreads);
      WriteKernel<kKeyWords><<<blocks, kBlockThreads>>>(
          DeviceTree(), keys_.as<TreeKey>(), puts ? values_.as<uint8_t>() : nullptr, n,
          batch.timestamp, DeviceLive(), flags_.as<uint8_t>(), was_live);
      GPKV_RETURN_IF_ERROR(CheckLaunch("write"));
      GPKV_RETURN_IF_ERROR(ReadCounters());
      if (host_counters_.out_of_nodes == 0) break;
      // Some split found the arena full: grow it and apply what is left
      // (the count went past the arena's end with the requests that failed).
      host_counters_.out_of_nodes = 0;
      host_counters_.nodes = std::min<uint64_t>(host_counters_.nodes, node_capacity_);
      GPKV_RETURN_IF_ERROR(WriteCounters());
      GPKV_RETURN_IF_ERROR(GrowNodes(node_capacity_ * 2));
      // The next launch reserves slots for the operations left again, past
      // those the first took (kept, with the slots it freed).
      const uint64_t past_used =
          host_counters_.taken > free_count_ ? host_counters_.taken - free_count_ : 0;
      GPKV_RETURN_IF_ERROR(
          ReserveSlots(used_ + past_used + n, used_ + past_used, host_counters_.freed));
    }
    GPKV_RETURN_IF_ERROR(SettleSlots());
    if (puts || batch.was_live == nullptr) return Status::OK();
    if (batch.order != nullptr) return CopyOut(batch.was_live, was_live, n);
    // Back in the caller's order; the repeats of a key report 0.
    uint8_t* answers = nullptr;
    GPKV_RETURN_IF_ERROR(Out(&flags_, batch.was_live, batch.count, &answers));
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemset(answers, 0, batch.count), "btree gpu: erase answers");
    ScatterKernel<<<BlocksFor(n), kBlockThreads>>>(was_live, picked_.as<uint32_t>(), n, answers);
    GPKV_RETURN_IF_ERROR(CheckLaunch("erase answers"));
    return Back(batch.was_live, answers, batch.count);
  }

  bool SortsBatches() const override { return true; }

  Status Reclaim(LiveSnapshots live) override {
    std::lock_guard<std::mutex> lock(mutex_);
    GPKV_RETURN_IF_ERROR(SetDevice());
    GPKV_RETURN_IF_ERROR(CopyLive(live));
    const uint64_t nodes = host_counters_.nodes;
    ReclaimKernel<kKeyWords>
        <<<BlocksFor(nodes), kBlockThreads>>>(DeviceTree(), nodes, DeviceLive());
    GPKV_RETURN_IF_ERROR(CheckLaunch("reclaim"));
    GPKV_RETURN_IF_ERROR(ReadCounters());
    return SettleSlots();
  }

  Result<btree::Stats> Stats() override {
    std::lock_guard<std::mutex> lock(mutex_);
    GPKV_RETURN_IF_ERROR(SetDevice());
    GPKV_RETURN_IF_ERROR(ReadCounters());
    btree::Stats stats;
    stats.keys = host_counters_.live_keys;
    stats.versions = host_counters_.versions;
    stats.tombstones = host_counters_.tombstones;
    stats.reclaimed = host_counters_.reclaimed;
    stats.bytes = nodes_.size() + versions_.size() + cells_.size() + free_.size() + freed_.size();
    return stats;
  }

  // ---- reads ----
  //
  // A batch of sorted_get_min_ or more gets of one-word keys is sorted
  // first by its keys' leading kSortedGetBits bits (a radix sort of a few
  // passes, not a full one), and so are count and range batches by their lo
  // bounds (CountOnDevice): the lanes of a warp then go down through the
  // same upper nodes, whose loads the warp shares, where unsorted lanes each
  // load nodes of their own. *keys becomes the sorted keys, *order their
  // operations.
  static constexpr int kSortedGetBits = 24;

  Status SortByLeadingBits(ReadCall& call, const TreeKey** keys, size_t n, const uint32_t** order) {
    uint64_t* sorted_keys = nullptr;
    uint32_t* operations = nullptr;
    uint32_t* sorted_operations = nullptr;
    GPKV_RETURN_IF_ERROR(call.Take(n, &sorted_keys, "sorted get keys"));
    GPKV_RETURN_IF_ERROR(call.Take(n, &operations, "get order"));
    GPKV_RETURN_IF_ERROR(call.Take(n, &sorted_operations, "sorted get order"));
    IotaKernel<<<BlocksFor(n), kBlockThreads, 0, call.stream()>>>(operations, n);
    GPKV_RETURN_IF_ERROR(CheckQueued("get order"));
    const uint64_t* words = reinterpret_cast<const uint64_t*>(*keys);
    const int items = static_cast<int>(n);
    constexpr int kEndBit = 64;
    size_t bytes = 0;
    GPKV_CUDA_RETURN_IF_ERROR(cub::DeviceRadixSort::SortPairs(
                                  nullptr, bytes, words, sorted_keys, operations, sorted_operations,
                                  items, kEndBit - kSortedGetBits, kEndBit, call.stream()),
                              "btree gpu: sort of a get batch");
    uint8_t* storage = nullptr;
    GPKV_RETURN_IF_ERROR(call.Take(bytes, &storage, "get sort storage"));
    GPKV_CUDA_RETURN_IF_ERROR(cub::DeviceRadixSort::SortPairs(
                                  storage, bytes, words, sorted_keys, operations, sorted_operations,
                                  items, kEndBit - kSortedGetBits, kEndBit, call.stream()),
                              "btree gpu: sort of a get batch");
    *keys = reinterpret_cast<const TreeKey*>(sorted_keys);
    *order = sorted_operations;
    return Status::OK();
  }

  //
  // Beside each other (the core's lock held shared, no write running): each
  // call runs on its thread's stream with scratch of its own (ReadCall), and
  // reads of the tree nothing the host changes.

  Status Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t n, uint64_t at) override {
    if (n == 0) return Status::OK();
    GPKV_RETURN_IF_ERROR(SetDevice());
    ReadCall call(device_);
    const TreeKey* device_keys = nullptr;
    uint8_t* device_values = nullptr;
    uint8_t* device_found = nullptr;
    GPKV_RETURN_IF_ERROR(call.In(keys, n * kKeySize, &device_keys));
    GPKV_RETURN_IF_ERROR(call.Out(values, n * value_size_, &device_values));
    GPKV_RETURN_IF_ERROR(call.Out(found, n, &device_found));
    const uint32_t* order = nullptr;
    if (kKeyWords == 1 && n >= sorted_get_min_) {
      GPKV_RETURN_IF_ERROR(SortByLeadingBits(call, &device_keys, n, &order));
    }
    GetKernel<kKeyWords><<<BlocksFor(n), kBlockThreads, 0, call.stream()>>>(
        DeviceTree(), device_keys, n, at, device_values, device_found, order);
    GPKV_RETURN_IF_ERROR(call.Launched("get"));
    GPKV_RETURN_IF_ERROR(call.Back(values, device_values, n * value_size_));
    return call.Back(found, device_found, n);
  }

  Status Count(const uint8_t* lo, const uint8_t* hi, uint64_t* counts, size_t n,
               uint64_t at) override {
    if (n == 0) return Status::OK();
    GPKV_RETURN_IF_ERROR(SetDevice());
    ReadCall call(device_);
    uint8_t* device_counts = nullptr;
    GPKV_RETURN_IF_ERROR(
        call.Out(reinterpret_cast<uint8_t*>(counts), n * sizeof(uint64_t), &device_counts));
    const TreeKey* low = nullptr;
    const TreeKey* high = nullptr;
    const uint32_t* order = nullptr;
    GPKV_RETURN_IF_ERROR(CountOnDevice(call, lo, hi, n, at, ~uint64_t{0},
                                       reinterpret_cast<uint64_t*>(device_counts), &low, &high,
                                       &order));
    return call.Back(counts, device_counts, n * sizeof(uint64_t));
  }

  Status Range(const uint8_t* lo, const uint8_t* hi, Table::RangeResults* results, size_t n,
               tables::RangeLimit limit, uint64_t at) override {
    GPKV_RETURN_IF_ERROR(SetDevice());
    try {
      results->offsets.assign(n + 1, 0);
      results->keys.clear();
      results->values.clear();
    } catch (...) {
      return tables::StatusOfCurrentException("btree gpu range");
    }
    if (n == 0) return Status::OK();
    ReadCall call(device_);
    const TreeKey* low = nullptr;
    const TreeKey* high = nullptr;
    uint64_t* offsets = nullptr;
    const uint32_t* order = nullptr;
    uint64_t pairs = 0;
    GPKV_RETURN_IF_ERROR(
        Offsets(call, lo, hi, n, at, limit.pairs, &low, &high, &order, &offsets, &pairs));
    GPKV_RETURN_IF_ERROR(call.Back(results->offsets.data(), offsets, (n + 1) * sizeof(uint64_t)));
    try {
      results->keys.resize(pairs * kKeySize);
      results->values.resize(pairs * value_size_);
    } catch (...) {
      return tables::StatusOfCurrentException("btree gpu range");
    }
    if (pairs == 0) return Status::OK();
    TreeKey* out_keys = nullptr;
    uint8_t* out_values = nullptr;
    GPKV_RETURN_IF_ERROR(call.Take(pairs, &out_keys, "range keys"));
    GPKV_RETURN_IF_ERROR(call.Take(pairs * value_size_, &out_values, "range values"));
    RangeKernel<kKeyWords><<<BlocksFor(n), kBlockThreads, 0, call.stream()>>>(
        DeviceTree(), low, high, n, at, limit.largest, offsets, out_keys, out_values, order);
    GPKV_RETURN_IF_ERROR(call.Launched("range"));
    GPKV_RETURN_IF_ERROR(call.Back(results->keys.data(), out_keys, pairs * kKeySize));
    return call.Back(results->values.data(), out_values, pairs * value_size_);
  }

  Status RangeOnDevice(const uint8_t* lo, const uint8_t* hi, Table::DeviceRangeResults* results,
                       size_t n, tables::RangeLimit limit, uint64_t at) override {
    GPKV_RETURN_IF_ERROR(SetDevice());
    ReadCall call(device_);
    const TreeKey* low = nullptr;
    const TreeKey* high = nullptr;
    uint64_t* offsets = nullptr;
    const uint32_t* order = nullptr;
    uint64_t pairs = 0;
    if (n > 0) {
      GPKV_RETURN_IF_ERROR(
          Offsets(call, lo, hi, n, at, limit.pairs, &low, &high, &order, &offsets, &pairs));
    }
    // One allocation: the offsets, then the keys, then the values. The
    // results' storage of an earlier call is reused when it is big enough and
    // nobody else holds it, so that a caller's loop of batches allocates (and
    // cudaFree waits for the device) only when its results grow.
    const size_t offsets_bytes = (n + 1) * sizeof(uint64_t);
    const size_t keys_bytes = pairs * kKeySize;
    const size_t needed = offsets_bytes + keys_bytes + pairs * value_size_;
    const bool reuse = results->storage != nullptr && results->storage.use_count() == 1 &&
                       results->device == device_ && results->storage_bytes >= needed;
    if (!reuse) {
      results->storage.reset();
      results->storage_bytes = 0;
      // Some slack, so that batches of about the same size reuse it.
      const size_t bytes = needed + needed / 8 + 64;
      void* storage = nullptr;
      GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&storage, bytes), "btree gpu: range results");
      const int device = device_;
      results->storage = std::shared_ptr<void>(storage, [device](void* pointer) {
        int current = 0;
        const bool restore = cudaGetDevice(&current) == cudaSuccess && current != device;
        cudaSetDevice(device);
        cudaFree(pointer);
        if (restore) cudaSetDevice(current);
      });
      results->storage_bytes = bytes;
    }
    auto* base = static_cast<uint8_t*>(results->storage.get());
    if (n == 0) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(base, 0, offsets_bytes, call.stream()),
                                "btree gpu: range offsets");
    } else {
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(base, offsets, offsets_bytes, cudaMemcpyDeviceToDevice, call.stream()),
          "btree gpu: range offsets");
    }
    if (pairs > 0) {
      RangeKernel<kKeyWords><<<BlocksFor(n), kBlockThreads, 0, call.stream()>>>(
          DeviceTree(), low, high, n, at, limit.largest, reinterpret_cast<const uint64_t*>(base),
          reinterpret_cast<TreeKey*>(base + offsets_bytes), base + offsets_bytes + keys_bytes,
          order);
    }
    // The offsets' copy and the kernel done: the results are there when
    // this returns.
    GPKV_RETURN_IF_ERROR(call.Launched("range on device"));
    results->device = device_;
    results->queries = n;
    results->pairs = pairs;
    results->offsets = reinterpret_cast<const uint64_t*>(base);
    results->keys = base + offsets_bytes;
    results->values = base + offsets_bytes + keys_bytes;
    return Status::OK();
  }

  Status Successor(const uint8_t* keys, uint8_t* next_keys, uint8_t* values, uint8_t* found,
                   size_t n, uint64_t at) override {
    return Neighbours(keys, next_keys, values, found, n, at, /*successor=*/true);
  }

  Status Predecessor(const uint8_t* keys, uint8_t* previous_keys, uint8_t* values, uint8_t* found,
                     size_t n, uint64_t at) override {
    return Neighbours(keys, previous_keys, values, found, n, at, /*successor=*/false);
  }

  Status ScanChunk(const uint8_t* after, size_t limit, uint64_t at, std::vector<uint8_t>* keys,
                   std::vector<uint8_t>* values) override {
    if (limit == 0) return Status::OK();
    GPKV_RETURN_IF_ERROR(SetDevice());
    ReadCall call(device_);
    const TreeKey* device_after = nullptr;
    if (after != nullptr) GPKV_RETURN_IF_ERROR(call.In(after, kKeySize, &device_after));
    TreeKey* out_keys = nullptr;
    uint8_t* out_values = nullptr;
    uint64_t* count = nullptr;
    GPKV_RETURN_IF_ERROR(call.Take(limit, &out_keys, "scan keys"));
    GPKV_RETURN_IF_ERROR(call.Take(limit * value_size_, &out_values, "scan values"));
    GPKV_RETURN_IF_ERROR(call.Take(1, &count, "scan count"));
    ScanKernel<kKeyWords><<<1, ::gpkv::gpu::warp::kWarpSize, 0, call.stream()>>>(
        DeviceTree(), device_after, limit, at, out_keys, out_values, count);
    GPKV_RETURN_IF_ERROR(call.Launched("scan"));
    uint64_t pairs = 0;
    GPKV_RETURN_IF_ERROR(call.Back(&pairs, count, sizeof(pairs)));
    try {
      const size_t key_end = keys->size();
      const size_t value_end = values->size();
      keys->resize(key_end + pairs * kKeySize);
      values->resize(value_end + pairs * value_size_);
      GPKV_RETURN_IF_ERROR(call.Back(keys->data() + key_end, out_keys, pairs * kKeySize));
      return call.Back(values->data() + value_end, out_values, pairs * value_size_);
    } catch (...) {
      return tables::StatusOfCurrentException("btree gpu scan");
    }
  }

 private:
  Status SetDevice() {
    return ::gpkv::gpu::CudaStatus(cudaSetDevice(device_), "btree gpu: set device");
  }

  // A write batch's input at *device: the caller's array in place, else a
  // copy in `scratch`.
  template <typename T>
  Status In(Buffer* scratch, const uint8_t* caller, size_t bytes, const T** device) {
    if (InPlace(caller, device_)) {
      *device = reinterpret_cast<const T*>(caller);
      return Status::OK();
    }
    GPKV_RETURN_IF_ERROR(CopyIn(scratch, caller, bytes));
    *device = scratch->as<const T>();
    return Status::OK();
  }

  // A write batch's output at *device: the caller's array in place, else
  // `scratch` (also where the caller wants none: caller null), which Back
  // copies to the caller's array after the kernel.
  Status Out(Buffer* scratch, uint8_t* caller, size_t bytes, uint8_t** device) {
    if (InPlace(caller, device_)) {
      *device = caller;
      return Status::OK();
    }
    GPKV_RETURN_IF_ERROR(scratch->Reserve(std::max<size_t>(bytes, 8)));
    *device = scratch->as<uint8_t>();
    return Status::OK();
  }
  Status Back(void* caller, const uint8_t* device, size_t bytes) {
    if (caller == nullptr || caller == device) return Status::OK();
    return CopyOut(caller, device, bytes);
  }

  Tree<kKeyWords> DeviceTree() const {
    Tree<kKeyWords> tree;
    tree.nodes = nodes_.as<Node<kKeyWords>>();
    tree.node_capacity = static_cast<uint32_t>(node_capacity_);
    tree.root = root_.as<uint32_t>();
    tree.versions = versions_.as<Version>();
    tree.cells = cells_.as<uint8_t>();
    tree.value_size = value_size_;
    tree.free_slots = free_.as<uint32_t>();
    tree.free_count = free_count_;
    tree.used = used_;
    tree.freed_slots = freed_.as<uint32_t>();
    tree.counters = counters_.as<Counters>();
    return tree;
  }

  LiveSnapshots DeviceLive() const { return LiveSnapshots{live_.as<uint64_t>(), live_count_}; }

  Status CopyLive(LiveSnapshots live) {
    live_count_ = live.count;
    return CopyIn(&live_, live.timestamps, live.count * sizeof(uint64_t));
  }

  Status ReadCounters() { return CopyOut(&host_counters_, counters_.as<void>(), sizeof(Counters)); }
  Status WriteCounters() {
    return ::gpkv::gpu::CudaStatus(
        cudaMemcpy(counters_.as<void>(), &host_counters_, sizeof(Counters), cudaMemcpyHostToDevice),
        "btree gpu: counters");
  }

  // A tree of one empty leaf, an empty pool.
  Status ResetToOneLeaf() {
    Node<kKeyWords> leaf;
    std::memset(&leaf, 0, sizeof(leaf));
    leaf.meta = kLeafFlag;
    leaf.link = kNone;
    leaf.left = kNone;
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(nodes_.as<void>(), &leaf, sizeof(leaf), cudaMemcpyHostToDevice),
        "btree gpu: first leaf");
    const uint32_t root = 0;
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(root_.as<void>(), &root, sizeof(root), cudaMemcpyHostToDevice),
        "btree gpu: root");
    const unsigned long long reclaimed = host_counters_.reclaimed;
    host_counters_ = Counters{};
    host_counters_.reclaimed = reclaimed;
    host_counters_.nodes = 1;
    used_ = 0;
    free_count_ = 0;
    return WriteCounters();
  }

  Status GrowNodes(uint64_t capacity) {
    if (capacity > kMaxIndices) {
      return Status::OutOfDeviceMemory("btree gpu: more nodes than 32-bit indices name");
    }
    GPKV_RETURN_IF_ERROR(nodes_.Reserve(capacity * sizeof(Node<kKeyWords>),
                                        host_counters_.nodes * sizeof(Node<kKeyWords>)));
    node_capacity_ = capacity;
    return Status::OK();
  }

  // A batch's operations that count, in key order: operation i is
  // picked[i] of keys and values (values null: erases), or operation i
  // itself where picked is null.
  // keys_in_order: the sort picked the keys already, key i is keys[i].
  struct Sorted {
    const TreeKey* keys = nullptr;
    const uint8_t* values = nullptr;
    const uint32_t* picked = nullptr;
    bool keys_in_order = false;
  };

  // A batch sorted by the core: its operations gathered on the host into
  // keys_ and values_.
  Status SortedOnHost(const WriteBatch& batch, Sorted* sorted) {
    *sorted = Sorted{};
    const size_t n = batch.count;
    host_keys_.resize(n * kKeySize);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&host_keys_[i * kKeySize], batch.keys + batch.order[i] * kKeySize, kKeySize);
    }
    GPKV_RETURN_IF_ERROR(CopyIn(&keys_, host_keys_.data(), n * kKeySize));
    sorted->keys = keys_.as<TreeKey>();
    if (batch.values == nullptr) return Status::OK();
    host_values_.resize(n * value_size_);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&host_values_[i * value_size_], batch.values + batch.order[i] * value_size_,
                  value_size_);
    }
    GPKV_RETURN_IF_ERROR(CopyIn(&values_, host_values_.data(), n * value_size_));
    sorted->values = values_.as<uint8_t>();
    return Status::OK();
  }

  // Longer keys' sort: the batch's order (order_, from the identity)
  // stably sorted by one key word after another, the least significant
  // first; the order in order_ after it.
  Status SortByWords(const TreeKey* keys, int items) {
    const size_t count = static_cast<size_t>(items);
    for (uint32_t word = 0; word < kKeyWords; ++word) {
      KeyWordKernel<kKeyWords><<<BlocksFor(count), kBlockThreads>>>(
          keys, order_.as<uint32_t>(), word, count, words_.as<uint64_t>());
      GPKV_RETURN_IF_ERROR(CheckQueued("sort"));
      // The double-buffer form: CUB sorts between the two arrays of each
      // pair instead of asking for temporary storage of a copy of both
      // (12 bytes an operation), and says which array holds the result.
      int sorted_in = 0;
      auto sort = [&](void* storage, size_t& bytes) {
        cub::DoubleBuffer<uint64_t> words(words_.as<uint64_t>(), sorted_words_.as<uint64_t>());
        cub::DoubleBuffer<uint32_t> order(order_.as<uint32_t>(), sorted_order_.as<uint32_t>());
        const cudaError_t error =
            cub::DeviceRadixSort::SortPairs(storage, bytes, words, order, items);
        sorted_in = order.selector;
        return error;
      };
      GPKV_RETURN_IF_ERROR(RunCub(sort, "sort"));
      if (sorted_in == 1) {
        order_.Swap(sorted_order_);
        words_.Swap(sorted_words_);
      }
    }
    return Status::OK();
  }

  // The caller's batch sorted on the device (a radix sort of its indices
  // by key), and the operation of each key that counts picked (picked_, *n
  // of them). The steps queue behind each other; the call waits once, for
  // *n.
  Status SortOnDevice(const WriteBatch& batch, size_t* n, Sorted* sorted) {
    const size_t count = batch.count;
    const bool puts = batch.values != nullptr;
    const TreeKey* keys = nullptr;
    const uint8_t* values = nullptr;
    GPKV_RETURN_IF_ERROR(In(&raw_keys_, batch.keys, count * kKeySize, &keys));
    if (puts) GPKV_RETURN_IF_ERROR(In(&raw_values_, batch.values, count * value_size_, &values));
    GPKV_RETURN_IF_ERROR(order_.Reserve(count * sizeof(uint32_t)));
    GPKV_RETURN_IF_ERROR(sorted_order_.Reserve(count * sizeof(uint32_t)));
    // A key of one word is its sort word: sorted straight from the
    // caller's keys into words_ (CUB keeps the passes' other halves in its
    // temporary storage then), and later read in order instead of gathered
    // through the order.
    constexpr bool kWordIsKey = kKeyWords == 1;
    GPKV_RETURN_IF_ERROR(words_.Reserve(count * sizeof(uint64_t)));
    if (!kWordIsKey) GPKV_RETURN_IF_ERROR(sorted_words_.Reserve(count * sizeof(uint64_t)));
    GPKV_RETURN_IF_ERROR(flags_.Reserve(count));
    GPKV_RETURN_IF_ERROR(picked_.Reserve(count * sizeof(uint32_t)));
    GPKV_RETURN_IF_ERROR(counts_.Reserve(2 * sizeof(int)));
    const int items = static_cast<int>(count);
    IotaKernel<<<BlocksFor(count), kBlockThreads>>>(order_.as<uint32_t>(), count);
    GPKV_RETURN_IF_ERROR(CheckQueued("sort"));
    if constexpr (kWordIsKey) {
      auto sort = [&](void* storage, size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(
            storage, bytes, reinterpret_cast<const uint64_t*>(keys), words_.as<uint64_t>(),
            order_.as<uint32_t>(), sorted_order_.as<uint32_t>(), items);
      };
      GPKV_RETURN_IF_ERROR(RunCub(sort, "sort"));
      order_.Swap(sorted_order_);
    } else {
      GPKV_RETURN_IF_ERROR(SortByWords(keys, items));
    }
    const TreeKey* sorted_keys = kWordIsKey ? words_.as<TreeKey>() : keys;
    MarkKernel<kKeyWords><<<BlocksFor(count), kBlockThreads>>>(
        sorted_keys, kWordIsKey ? nullptr : order_.as<uint32_t>(), count, puts,
        flags_.as<uint8_t>());
    GPKV_RETURN_IF_ERROR(CheckQueued("sort"));
    auto select = [&](void* storage, size_t& bytes) {
      return cub::DeviceSelect::Flagged(storage, bytes, order_.as<uint32_t>(), flags_.as<uint8_t>(),
                                        picked_.as<uint32_t>(), counts_.as<int>(), items);
    };
    GPKV_RETURN_IF_ERROR(RunCub(select, "pick"));
    if constexpr (kWordIsKey) {
      // The picked keys in keys_, in order (the write kernel's and the
      // bulk build's keys). A second select: one select of each operation
      // with its key (zipped) took longer than the two.
      GPKV_RETURN_IF_ERROR(keys_.Reserve(count * kKeySize));
      auto select_keys = [&](void* storage, size_t& bytes) {
        return cub::DeviceSelect::Flagged(storage, bytes, words_.as<uint64_t>(),
                                          flags_.as<uint8_t>(), keys_.as<uint64_t>(),
                                          counts_.as<int>() + 1, items);
      };
      GPKV_RETURN_IF_ERROR(RunCub(select_keys, "pick keys"));
    }
    int picked = 0;
    GPKV_RETURN_IF_ERROR(CopyOut(&picked, counts_.as<void>(), sizeof(picked)));
    *n = static_cast<size_t>(picked);
    *sorted = kWordIsKey ? Sorted{keys_.as<TreeKey>(), values, picked_.as<uint32_t>(), true}
                         : Sorted{keys, values, picked_.as<uint32_t>(), false};
    return Status::OK();
  }

  // The sorted operations' keys and values in keys_ and values_ (queued).
  Status Gather(const Sorted& sorted, size_t n) {
    if (sorted.picked == nullptr) return Status::OK();  // there already
    if (sorted.keys_in_order && sorted.values == nullptr) return Status::OK();
    GPKV_RETURN_IF_ERROR(keys_.Reserve(n * kKeySize));
    if (sorted.values != nullptr) GPKV_RETURN_IF_ERROR(values_.Reserve(n * value_size_));
    // Keys in order are in keys_ already (SortOnDevice).
    GatherKernel<kKeyWords><<<BlocksFor(n), kBlockThreads>>>(
        sorted.keys_in_order ? nullptr : sorted.keys, sorted.values, sorted.picked, n, value_size_,
        keys_.as<TreeKey>(), values_.as<uint8_t>());
    return CheckQueued("gather");
  }

  // Runs a CUB algorithm (a callable around one call) with temporary
  // storage of the size it asks for.
  template <typename Algorithm>
  Status RunCub(Algorithm&& algorithm, const char* what) {
    size_t bytes = 0;
    GPKV_CUDA_RETURN_IF_ERROR(algorithm(nullptr, bytes), std::string("btree gpu: ") + what);
    GPKV_RETURN_IF_ERROR(cub_temp_.Reserve(std::max<size_t>(bytes, 8)));
    bytes = cub_temp_.size();
    GPKV_CUDA_RETURN_IF_ERROR(algorithm(cub_temp_.as<void>(), bytes),
                              std::string("btree gpu: ") + what);
    return CheckQueued(what);
  }

  // Room for `slots` version slots (the pool, its cells and free lists),
  // the first `kept` slots and `freed` entries of the freed list kept (a
  // batch's second launch keeps what its first took and freed).
  Status ReserveSlots(uint64_t slots) { return ReserveSlots(slots, used_, 0); }
  Status ReserveSlots(uint64_t slots, uint64_t kept, uint64_t freed) {
    if (slots <= slot_capacity_) return Status::OK();
    const uint64_t capacity = std::max(slots, slot_capacity_ * 2);
    if (capacity > kMaxIndices) {
      return Status::OutOfDeviceMemory("btree gpu: more versions than 32-bit indices name");
    }
    GPKV_RETURN_IF_ERROR(versions_.Reserve(capacity * sizeof(Version), kept * sizeof(Version)));
    if (value_size_ > 8) {
      GPKV_RETURN_IF_ERROR(cells_.Reserve(capacity * value_size_, kept * value_size_));
    }
    GPKV_RETURN_IF_ERROR(
        free_.Reserve(capacity * sizeof(uint32_t), free_count_ * sizeof(uint32_t)));
    GPKV_RETURN_IF_ERROR(freed_.Reserve(capacity * sizeof(uint32_t), freed * sizeof(uint32_t)));
    slot_capacity_ = capacity;
    return Status::OK();
  }

  // After a batch: the slots it took leave the free list (or the unused
  // end), the slots it freed join the list.
  Status SettleSlots() {
    const uint64_t from_list = std::min<uint64_t>(host_counters_.taken, free_count_);
    used_ += host_counters_.taken - from_list;
    free_count_ -= from_list;
    if (host_counters_.freed > 0) {
      GPKV_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(free_.as<uint32_t>() + free_count_, freed_.as<uint32_t>(),
                     host_counters_.freed * sizeof(uint32_t), cudaMemcpyDeviceToDevice),
          "btree gpu: free list");
      free_count_ += host_counters_.freed;
    }
    host_counters_.taken = 0;
    host_counters_.freed = 0;
    return WriteCounters();
  }

  // The n sorted puts of a batch into an empty tree: the leaves and the
  // versions built straight from the sorted order in one kernel, then the
  // levels above; the kernels queue behind each other, and the call waits
  // once, at its end.
  Status BulkBuild(const Sorted& sorted, uint64_t n, uint64_t timestamp) {
    std::vector<uint64_t> level_sizes;
    uint64_t total = 0;
    for (uint64_t size = (n + kBulkFill - 1) / kBulkFill;;
         size = (size + kBulkFill - 1) / kBulkFill) {
      level_sizes.push_back(size);
      total += size;
      if (size == 1) break;
    }
    if (total > node_capacity_) {
      if (total > kMaxIndices) {
        return Status::OutOfDeviceMemory("btree gpu: more nodes than 32-bit indices name");
      }
      const uint64_t capacity = std::max(total, node_capacity_ * 2);
      GPKV_RETURN_IF_ERROR(nodes_.Reserve(capacity * sizeof(Node<kKeyWords>)));
      node_capacity_ = capacity;
    }
    GPKV_RETURN_IF_ERROR(ReserveSlots(n));
    used_ = 0;
    free_count_ = 0;
    constexpr uint64_t kTileEntries = kBuildTileLeaves<kKeyWords> * kBulkFill;
    const uint64_t tiles = (n + kTileEntries - 1) / kTileEntries;
    // The leaves and the level above them in one kernel (their parents are
    // made from the leaves' tiles), then each level from the one below.
    const uint64_t parents = level_sizes.size() > 1 ? level_sizes[1] : 0;
    BuildLeavesKernel<kKeyWords><<<BlocksFor(tiles * kBlockThreads), kBlockThreads>>>(
        DeviceTree(), sorted.keys, sorted.keys_in_order, sorted.values, sorted.picked, n,
        level_sizes[0], parents, timestamp);
    GPKV_RETURN_IF_ERROR(CheckQueued("bulk build leaves"));
    uint64_t below = level_sizes[0];
    for (size_t level = 2; level < level_sizes.size(); ++level) {
      const uint64_t first = below + level_sizes[level - 1];
      BuildLevelKernel<kKeyWords><<<BlocksFor(level_sizes[level - 1]), kBlockThreads>>>(
          DeviceTree(), static_cast<uint32_t>(below), level_sizes[level - 1],
          static_cast<uint32_t>(first), level_sizes[level]);
      GPKV_RETURN_IF_ERROR(CheckQueued("bulk build level"));
      below = first;
    }
    const uint32_t root = static_cast<uint32_t>(total - 1);
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(root_.as<void>(), &root, sizeof(root), cudaMemcpyHostToDevice),
        "btree gpu: root");
    GPKV_RETURN_IF_ERROR(CheckLaunch("bulk build"));
    used_ = n;
    host_counters_.live_keys = n;
    host_counters_.versions = n;
    host_counters_.tombstones = 0;
    host_counters_.leaf_entries = n;
    host_counters_.nodes = total;
    host_counters_.taken = 0;
    host_counters_.freed = 0;
    host_counters_.out_of_nodes = 0;
    return WriteCounters();
  }

  // Each query's pair count (up to `limit`) and their running sum in
  // *offsets (n + 1 entries of the call's scratch: summed on the device, so
  // that only the total, *pairs, crosses the link); the bounds in device
  // memory at *low and *high (ReadCall::In), and the order the counts
  // visited the queries in (*order, CountOnDevice's).
  Status Offsets(ReadCall& call, const uint8_t* lo, const uint8_t* hi, size_t n, uint64_t at,
                 uint64_t limit, const TreeKey** low, const TreeKey** high, const uint32_t** order,
                 uint64_t** offsets, uint64_t* pairs) {
    // The counts, then a 0, summed exclusively: 0, the running sums, the
    // total.
    uint64_t* counts = nullptr;
    GPKV_RETURN_IF_ERROR(call.Take(n + 1, &counts, "range counts"));
    GPKV_RETURN_IF_ERROR(call.Take(n + 1, offsets, "range offsets"));
    GPKV_RETURN_IF_ERROR(CountOnDevice(call, lo, hi, n, at, limit, counts, low, high, order));
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(counts + n, 0, sizeof(uint64_t), call.stream()),
                              "btree gpu: range offsets");
    const uint64_t items = n + 1;
    uint64_t* sums = *offsets;
    auto sum = [&](void* storage, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(storage, bytes, counts, sums, items, call.stream());
    };
    size_t bytes = 0;
    GPKV_CUDA_RETURN_IF_ERROR(sum(nullptr, bytes), "btree gpu: range offsets");
    uint8_t* storage = nullptr;
    GPKV_RETURN_IF_ERROR(call.Take(bytes, &storage, "range offsets"));
    GPKV_CUDA_RETURN_IF_ERROR(sum(storage, bytes), "btree gpu: range offsets");
    GPKV_RETURN_IF_ERROR(call.Launched("range offsets"));
    return call.Back(pairs, sums + n, sizeof(uint64_t));
  }

  // The live keys of each query's [lo, hi] at `at`, up to `limit`, into
  // counts (device memory, n entries); the bounds in device memory at *low
  // and *high (ReadCall::In). A batch of sorted_get_min_ or more queries of
  // one-word keys is visited in the order of its lo bounds' leading bits, as
  // a get batch is (SortByLeadingBits): *order, for the range's fill to
  // visit them in too; null otherwise.
  Status CountOnDevice(ReadCall& call, const uint8_t* lo, const uint8_t* hi, size_t n, uint64_t at,
                       uint64_t limit, uint64_t* counts, const TreeKey** low, const TreeKey** high,
                       const uint32_t** order) {
    GPKV_RETURN_IF_ERROR(call.In(lo, n * kKeySize, low));
    GPKV_RETURN_IF_ERROR(call.In(hi, n * kKeySize, high));
    *order = nullptr;
    if (kKeyWords == 1 && n >= sorted_get_min_) {
      const TreeKey* sorted_low = *low;
      GPKV_RETURN_IF_ERROR(SortByLeadingBits(call, &sorted_low, n, order));
    }
    CountKernel<kKeyWords><<<BlocksFor(n), kBlockThreads, 0, call.stream()>>>(
        DeviceTree(), *low, *high, n, at, limit, counts, *order);
    return call.Launched("count");
  }

  Status Neighbours(const uint8_t* keys, uint8_t* neighbour_keys, uint8_t* values, uint8_t* found,
                    size_t n, uint64_t at, bool successor) {
    if (n == 0) return Status::OK();
    GPKV_RETURN_IF_ERROR(SetDevice());
    ReadCall call(device_);
    const TreeKey* device_keys = nullptr;
    uint8_t* device_neighbours = nullptr;
    uint8_t* device_values = nullptr;
    uint8_t* device_found = nullptr;
    GPKV_RETURN_IF_ERROR(call.In(keys, n * kKeySize, &device_keys));
    GPKV_RETURN_IF_ERROR(call.Out(neighbour_keys, n * kKeySize, &device_neighbours));
    GPKV_RETURN_IF_ERROR(call.Out(values, n * value_size_, &device_values));
    GPKV_RETURN_IF_ERROR(call.Out(found, n, &device_found));
    NeighbourKernel<kKeyWords><<<BlocksFor(n), kBlockThreads, 0, call.stream()>>>(
        DeviceTree(), device_keys, n, at, successor, reinterpret_cast<TreeKey*>(device_neighbours),
        device_values, device_found);
    GPKV_RETURN_IF_ERROR(call.Launched(successor ? "successor" : "predecessor"));
    GPKV_RETURN_IF_ERROR(call.Back(neighbour_keys, device_neighbours, n * kKeySize));
    GPKV_RETURN_IF_ERROR(call.Back(values, device_values, n * value_size_));
    return call.Back(found, device_found, n);
  }

  const uint32_t value_size_;
  const int device_;
  const size_t sorted_get_min_;  // GpuTuning's
  // Held by the calls that change the tree or the buffers below (Write,
  // Reclaim, Stats); the core runs them alone anyway. Reads take none: they
  // change nothing here (ReadCall).
  std::mutex mutex_;
  Buffer nodes_;
  uint64_t node_capacity_ = kFirstNodes;
  Buffer root_;
  Buffer versions_;
  Buffer cells_;
  Buffer free_;   // free_count_ free slots
  Buffer freed_;  // the slots a batch frees
  uint64_t slot_capacity_ = 0;
  uint64_t free_count_ = 0;
  uint64_t used_ = 0;  // slots [used_, slot_capacity_) were never handed out
  Buffer counters_;
  Counters host_counters_{};  // the device's counters as last read or written
  Buffer live_;
  uint64_t live_count_ = 0;
  // Scratch of the write batches.
  Buffer keys_;
  Buffer values_;
  Buffer flags_;
  Buffer was_live_;
  Buffer counts_;
  // The device's sort of a batch.
  Buffer raw_keys_;
  Buffer raw_values_;
  Buffer order_;
  Buffer sorted_order_;
  Buffer words_;
  Buffer sorted_words_;
  Buffer picked_;
  Buffer cub_temp_;
  std::vector<uint8_t> host_keys_;
  std::vector<uint8_t> host_values_;
};

template <uint32_t kKeyWords>
Result<std::unique_ptr<Backend>> Make(const TableOptions& options, int device,
                                      const GpuTuning& tuning) {
  auto backend = std::make_unique<GpuBackend<kKeyWords>>(options.value_size, device, tuning);
  GPKV_RETURN_IF_ERROR(backend->Init());
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace

Result<std::unique_ptr<Backend>> CreateGpuBackend(const TableOptions& options, int device,
                                                  const GpuTuning& tuning) {
  GPKV_RETURN_IF_ERROR(::gpkv::gpu::DeviceUsable(device));
  if (options.value_size < 1 || options.value_size > 128) {
    return Status::InvalidArgument("btree gpu: value size " + std::to_string(options.value_size) +
                                   " is not 1..128");
  }
  switch (options.key_size) {
    case 8:
      return Make<1>(options, device, tuning);
    case 16:
      return Make<2>(options, device, tuning);
    case 32:
      return Make<4>(options, device, tuning);
  }
  return Status::InvalidArgument("btree gpu: key size " + std::to_string(options.key_size) +
                                 " is not 8, 16 or 32");
}

}  // namespace gpkv::btree::gpu

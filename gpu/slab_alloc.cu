// Host side of gpu::SlabAlloc (gpu/slab_alloc.h): super blocks, their
// bitmaps, and the kernels that count, clear and (for tests and the
// benchmark) allocate and free slabs.
//
// A super block is one cudaMalloc: kSuperBlockBytes of slabs followed by
// its bitmap (kBlocksPerSuperBlock * kBitmapWordsPerBlock words), so Grow
// makes one allocation per super block and a failed Grow frees exactly what
// it made.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "gpu/cuda_check.h"
#include "gpu/device_fill.cuh"
#include "gpu/slab_alloc.cuh"
#include "gpu/slab_alloc.h"
#include "gpu/warp_work_sharing.cuh"

namespace gpkv::gpu {
namespace {

constexpr int kBlockThreads = 256;  // 8 warps a thread block
constexpr uint64_t kBitmapWordsPerSuperBlock =
    uint64_t{kBlocksPerSuperBlock} * kBitmapWordsPerBlock;
constexpr uint64_t kBitmapBytesPerSuperBlock = kBitmapWordsPerSuperBlock * sizeof(uint32_t);
constexpr uint64_t kSuperBlockAllocationBytes = kSuperBlockBytes + kBitmapBytesPerSuperBlock;
constexpr uint64_t kSlabsPerSuperBlock = uint64_t{kSlabsPerBlock} * kBlocksPerSuperBlock;
constexpr unsigned kMaxGridBlocks = 4096;  // grid-stride kernels over the bitmaps

std::string Bytes(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" +
         std::to_string(static_cast<double>(bytes) / (uint64_t{1} << 30)).substr(0, 6) + " GiB)";
}

Status CheckLaunch(const char* kernel) {
  const cudaError_t error = cudaPeekAtLastError();
  if (error == cudaSuccess) return Status::OK();
  return CudaStatus(error, std::string("SlabAlloc: launch of ") + kernel);
}

unsigned GridFor(uint64_t threads, unsigned max_blocks) {
  const uint64_t blocks = (threads + kBlockThreads - 1) / kBlockThreads;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(blocks, max_blocks)));
}

// Word `index` of all super blocks' bitmaps, in super block order.
__device__ __forceinline__ uint32_t* BitmapWord(const SlabAllocView& view, uint64_t index) {
  return view.bitmaps[index / kBitmapWordsPerSuperBlock] + index % kBitmapWordsPerSuperBlock;
}

// *in_use += the set bits of every bitmap word (one atomic per warp).
__global__ void CountInUseKernel(SlabAllocView view, unsigned long long* in_use) {
  const uint64_t words = uint64_t{view.super_block_count} * kBitmapWordsPerSuperBlock;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  unsigned long long lane_count = 0;
  for (uint64_t index = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; index < words;
       index += stride) {
    lane_count += __popc(__ldcg(BitmapWord(view, index)));
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    lane_count += __shfl_down_sync(warp::kFullMask, lane_count, offset);
  }
  if (warp::LaneId() == 0 && lane_count != 0) atomicAdd(in_use, lane_count);
}

// Clears every bitmap word: every slab free.
__global__ void ClearBitmapsKernel(SlabAllocView view) {
  const uint64_t words = uint64_t{view.super_block_count} * kBitmapWordsPerSuperBlock;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t index = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; index < words;
       index += stride) {
    *BitmapWord(view, index) = 0;
  }
}

// One allocation per thread < count, in the slab hash's pattern: each warp
// runs its lanes' allocations in turn (warp::ShareWork), the whole warp
// cooperating in each; addresses[thread] gets the thread's slab.
__global__ void AllocateManyKernel(SlabAllocView view, uint64_t count, uint32_t* addresses) {
  const uint64_t thread = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  SlabAllocWarp allocator;
  InitSlabAllocWarp(view, &allocator);
  uint32_t my_slab = kNullSlab;
  warp::ShareWork(warp::kFullMask, thread < count, [&](int source) {
    const uint32_t slab = WarpAllocateSlab(view, &allocator);
    if (warp::LaneId() == static_cast<uint32_t>(source)) my_slab = slab;
  });
  if (thread < count) addresses[thread] = my_slab;
}

// Frees addresses[i] for every i < count that is not kNullSlab.
__global__ void FreeManyKernel(SlabAllocView view, uint64_t count, const uint32_t* addresses) {
  const uint64_t thread = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (thread >= count) return;
  const uint32_t address = addresses[thread];
  if (address != kNullSlab) FreeSlab(view, address);
}

// pointers[i] = SlabAt(addresses[i]) for every i < count.
__global__ void SlabPointersKernel(SlabAllocView view, uint64_t count, const uint32_t* addresses,
                                   unsigned long long* pointers) {
  const uint64_t thread = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (thread >= count) return;
  pointers[thread] = reinterpret_cast<uintptr_t>(SlabAt(view, addresses[thread]));
}

// A device buffer a call frees on return (tests' scratch).
class ScopedDeviceBuffer {
 public:
  ~ScopedDeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  Status Allocate(uint64_t bytes, const std::string& what) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&data_, std::max<uint64_t>(bytes, 1)),
                              "SlabAlloc: cudaMalloc of " + Bytes(bytes) + " for " + what);
    return Status::OK();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // Hands the buffer to the caller, who frees it.
  template <typename T>
  T* Release() {
    return static_cast<T*>(std::exchange(data_, nullptr));
  }

 private:
  void* data_ = nullptr;
};

// A pair of timing events, destroyed on return.
class ScopedEvents {
 public:
  ~ScopedEvents() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
  Status Create() {
    GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start), "SlabAlloc: cudaEventCreate");
    GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop), "SlabAlloc: cudaEventCreate");
    return Status::OK();
  }
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

}  // namespace

class SlabAlloc::Impl {
 public:
  ~Impl() {
    for (uint8_t* super_block : super_blocks_) cudaFree(super_block);
    if (super_block_array_ != nullptr) cudaFree(super_block_array_);
    if (bitmap_array_ != nullptr) cudaFree(bitmap_array_);
    if (in_use_counter_ != nullptr) cudaFree(in_use_counter_);
  }

  Status Init() {
    GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&in_use_counter_, sizeof(unsigned long long)),
                              "SlabAlloc: cudaMalloc of the in-use counter");
    return Status::OK();
  }

  Status Grow(uint32_t count);
  Result<uint64_t> CountInUse(cudaStream_t stream) const;
  Status Reset(cudaStream_t stream);

  SlabAllocView NextView() {
    // Murmur3's finaliser over a counter: distinct launches choose blocks
    // independently.
    uint32_t seed = ++view_count_ * 0x9e3779b9u;
    seed ^= seed >> 16;
    seed *= 0x85ebca6bu;
    seed ^= seed >> 13;
    return View(seed);
  }

  SlabAllocView View(uint32_t seed) const {
    SlabAllocView view;
    view.super_blocks = super_block_array_;
    view.bitmaps = bitmap_array_;
    view.super_block_count = static_cast<uint32_t>(super_blocks_.size());
    view.seed = seed;
    return view;
  }

  uint32_t super_block_count() const { return static_cast<uint32_t>(super_blocks_.size()); }

  uint64_t device_bytes() const {
    return super_blocks_.size() * kSuperBlockAllocationBytes +
           2 * super_blocks_.size() * sizeof(void*) + sizeof(unsigned long long);
  }

 private:
  Status PublishArrays(const std::vector<uint8_t*>& super_blocks);

  std::vector<uint8_t*> super_blocks_;            // host copy of the slab pointers
  uint8_t** super_block_array_ = nullptr;         // device [super_blocks_.size()]
  uint32_t** bitmap_array_ = nullptr;             // device [super_blocks_.size()]
  unsigned long long* in_use_counter_ = nullptr;  // CountInUse's result
  uint32_t view_count_ = 0;
};

// Replaces the device pointer arrays by ones listing `super_blocks`; on
// failure the old arrays stay.
Status SlabAlloc::Impl::PublishArrays(const std::vector<uint8_t*>& super_blocks) {
  std::vector<uint32_t*> bitmaps(super_blocks.size());
  for (size_t i = 0; i < super_blocks.size(); ++i) {
    bitmaps[i] = reinterpret_cast<uint32_t*>(super_blocks[i] + kSuperBlockBytes);
  }
  const size_t array_bytes = super_blocks.size() * sizeof(void*);
  ScopedDeviceBuffer super_block_array;
  ScopedDeviceBuffer bitmap_array;
  GPKV_RETURN_IF_ERROR(super_block_array.Allocate(array_bytes, "the super block array"));
  GPKV_RETURN_IF_ERROR(bitmap_array.Allocate(array_bytes, "the bitmap array"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpy(super_block_array.as<void>(), super_blocks.data(),
                                       array_bytes, cudaMemcpyHostToDevice),
                            "SlabAlloc: cudaMemcpy of the super block array");
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(bitmap_array.as<void>(), bitmaps.data(), array_bytes, cudaMemcpyHostToDevice),
      "SlabAlloc: cudaMemcpy of the bitmap array");
  // The copies and the bitmaps' memsets ran on the legacy default stream;
  // a kernel on a non-blocking stream does not wait for them.
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamLegacy),
                            "SlabAlloc: cudaStreamSynchronize after initialising super blocks");
  if (super_block_array_ != nullptr) cudaFree(super_block_array_);
  if (bitmap_array_ != nullptr) cudaFree(bitmap_array_);
  super_block_array_ = super_block_array.Release<uint8_t*>();
  bitmap_array_ = bitmap_array.Release<uint32_t*>();
  return Status::OK();
}

Status SlabAlloc::Impl::Grow(uint32_t count) {
  const uint64_t current = super_blocks_.size();
  if (count > kMaxSuperBlocks - current) {
    return Status::InvalidArgument("SlabAlloc::Grow: " + std::to_string(current) + " + " +
                                   std::to_string(count) + " super blocks exceed the limit of " +
                                   std::to_string(kMaxSuperBlocks));
  }
  if (count == 0) return Status::OK();
  const uint64_t asked = uint64_t{count} * kSuperBlockAllocationBytes;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes),
                            "SlabAlloc::Grow: cudaMemGetInfo");
  if (asked > free_bytes) {
    return Status::OutOfDeviceMemory("SlabAlloc::Grow: " + std::to_string(count) +
                                     " super blocks need " + Bytes(asked) +
                                     " of device memory; the device has " + Bytes(free_bytes) +
                                     " free of " + Bytes(total_bytes));
  }
  std::vector<uint8_t*> grown = super_blocks_;
  auto free_new = [&] {
    for (size_t i = current; i < grown.size(); ++i) cudaFree(grown[i]);
  };
  for (uint32_t i = 0; i < count; ++i) {
    void* memory = nullptr;
    const cudaError_t error = cudaMalloc(&memory, kSuperBlockAllocationBytes);
    if (error != cudaSuccess) {
      free_new();
      return CudaStatus(error, "SlabAlloc::Grow: cudaMalloc of " +
                                   Bytes(kSuperBlockAllocationBytes) + " for super block " +
                                   std::to_string(i + 1) + " of " + std::to_string(count) + " (" +
                                   Bytes(asked) + " asked in all)");
    }
    grown.push_back(static_cast<uint8_t*>(memory));
    const cudaError_t clear =
        FillAndWait(static_cast<uint8_t*>(memory) + kSuperBlockBytes, 0, kBitmapBytesPerSuperBlock);
    if (clear != cudaSuccess) {
      free_new();
      return CudaStatus(clear, "SlabAlloc::Grow: cudaMemset of a super block's bitmap");
    }
  }
  const Status published = PublishArrays(grown);
  if (!published.ok()) {
    free_new();
    return published;
  }
  super_blocks_ = std::move(grown);
  return Status::OK();
}

Result<uint64_t> SlabAlloc::Impl::CountInUse(cudaStream_t stream) const {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(in_use_counter_, 0, sizeof(*in_use_counter_), stream),
                            "SlabAlloc::CountInUse: cudaMemsetAsync");
  const uint64_t words = uint64_t{super_block_count()} * kBitmapWordsPerSuperBlock;
  CountInUseKernel<<<GridFor(words, kMaxGridBlocks), kBlockThreads, 0, stream>>>(View(0),
                                                                                 in_use_counter_);
  GPKV_RETURN_IF_ERROR(CheckLaunch("CountInUseKernel"));
  unsigned long long in_use = 0;
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(&in_use, in_use_counter_, sizeof(in_use), cudaMemcpyDeviceToHost, stream),
      "SlabAlloc::CountInUse: cudaMemcpyAsync");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                            "SlabAlloc::CountInUse: cudaStreamSynchronize");
  return Result<uint64_t>(uint64_t{in_use});
}

Status SlabAlloc::Impl::Reset(cudaStream_t stream) {
  const uint64_t words = uint64_t{super_block_count()} * kBitmapWordsPerSuperBlock;
  ClearBitmapsKernel<<<GridFor(words, kMaxGridBlocks), kBlockThreads, 0, stream>>>(View(0));
  return CheckLaunch("ClearBitmapsKernel");
}

// ---- SlabAlloc ----

SlabAlloc::SlabAlloc(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SlabAlloc::~SlabAlloc() = default;

Result<std::unique_ptr<SlabAlloc>> SlabAlloc::Create(uint32_t super_blocks) {
  if (super_blocks == 0 || super_blocks > kMaxSuperBlocks) {
    return Status::InvalidArgument("SlabAlloc::Create: " + std::to_string(super_blocks) +
                                   " super blocks; 1 to " + std::to_string(kMaxSuperBlocks) +
                                   " allowed");
  }
  auto impl = std::make_unique<Impl>();
  GPKV_RETURN_IF_ERROR(impl->Init());
  GPKV_RETURN_IF_ERROR(impl->Grow(super_blocks));
  return Result<std::unique_ptr<SlabAlloc>>(
      std::unique_ptr<SlabAlloc>(new SlabAlloc(std::move(impl))));
}

Status SlabAlloc::Grow(uint32_t count) { return impl_->Grow(count); }

Status SlabAlloc::Reserve(uint64_t free_slabs, double max_fill, CUstream_st* stream) {
  if (!(max_fill > 0.0 && max_fill <= 1.0)) {
    return Status::InvalidArgument("SlabAlloc::Reserve: max_fill " + std::to_string(max_fill) +
                                   " is not in (0, 1]");
  }
  Result<uint64_t> in_use = impl_->CountInUse(stream);
  if (!in_use.ok()) return in_use.status();
  const uint64_t needed_in_use = *in_use + free_slabs;
  const uint64_t needed_capacity = std::max<uint64_t>(
      needed_in_use,
      static_cast<uint64_t>(std::ceil(static_cast<double>(needed_in_use) / max_fill)));
  if (needed_capacity <= capacity_slabs()) return Status::OK();
  const uint64_t needed_super_blocks =
      (needed_capacity + kSlabsPerSuperBlock - 1) / kSlabsPerSuperBlock;
  if (needed_super_blocks > kMaxSuperBlocks) {
    return Status::InvalidArgument(
        "SlabAlloc::Reserve: " + std::to_string(free_slabs) + " free slabs at fill " +
        std::to_string(max_fill) + " need " + std::to_string(needed_super_blocks) +
        " super blocks, more than the limit of " + std::to_string(kMaxSuperBlocks));
  }
  return impl_->Grow(static_cast<uint32_t>(needed_super_blocks - super_blocks()));
}

Status SlabAlloc::Reset(CUstream_st* stream) { return impl_->Reset(stream); }

SlabAllocView SlabAlloc::view() { return impl_->NextView(); }

uint32_t SlabAlloc::super_blocks() const { return impl_->super_block_count(); }

uint64_t SlabAlloc::capacity_slabs() const {
  return uint64_t{impl_->super_block_count()} * kSlabsPerSuperBlock;
}

Result<uint64_t> SlabAlloc::CountInUse(CUstream_st* stream) const {
  return impl_->CountInUse(stream);
}

uint64_t SlabAlloc::device_bytes() const { return impl_->device_bytes(); }

Status SlabAlloc::TEST_AllocateMany(uint64_t count, std::vector<uint32_t>* addresses,
                                    double* seconds, CUstream_st* stream) {
  addresses->assign(count, kNullSlab);
  *seconds = 0;
  if (count == 0) return Status::OK();
  ScopedDeviceBuffer device_addresses;
  GPKV_RETURN_IF_ERROR(
      device_addresses.Allocate(count * sizeof(uint32_t), "TEST_AllocateMany's addresses"));
  ScopedEvents events;
  GPKV_RETURN_IF_ERROR(events.Create());
  // Loads the kernel's module now, so lazy loading is not timed.
  cudaFuncAttributes attributes;
  GPKV_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, AllocateManyKernel),
                            "SlabAlloc: cudaFuncGetAttributes(AllocateManyKernel)");
  const uint64_t blocks = (count + kBlockThreads - 1) / kBlockThreads;
  if (blocks > 0x7fffffffu) {
    return Status::InvalidArgument("SlabAlloc::TEST_AllocateMany: " + std::to_string(count) +
                                   " allocations exceed one grid");
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.start, stream), "SlabAlloc: cudaEventRecord");
  AllocateManyKernel<<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(
      view(), count, device_addresses.as<uint32_t>());
  GPKV_RETURN_IF_ERROR(CheckLaunch("AllocateManyKernel"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.stop, stream), "SlabAlloc: cudaEventRecord");
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(addresses->data(), device_addresses.as<void>(), count * sizeof(uint32_t),
                      cudaMemcpyDeviceToHost, stream),
      "SlabAlloc: cudaMemcpyAsync of TEST_AllocateMany's addresses");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                            "SlabAlloc::TEST_AllocateMany: cudaStreamSynchronize");
  float milliseconds = 0;
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&milliseconds, events.start, events.stop),
                            "SlabAlloc: cudaEventElapsedTime");
  *seconds = milliseconds / 1000.0;
  return Status::OK();
}

Status SlabAlloc::TEST_FreeMany(const std::vector<uint32_t>& addresses, CUstream_st* stream) {
  const uint64_t count = addresses.size();
  if (count == 0) return Status::OK();
  ScopedDeviceBuffer device_addresses;
  GPKV_RETURN_IF_ERROR(
      device_addresses.Allocate(count * sizeof(uint32_t), "TEST_FreeMany's addresses"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(device_addresses.as<void>(), addresses.data(), count * sizeof(uint32_t),
                      cudaMemcpyHostToDevice, stream),
      "SlabAlloc: cudaMemcpyAsync of TEST_FreeMany's addresses");
  FreeManyKernel<<<static_cast<unsigned>((count + kBlockThreads - 1) / kBlockThreads),
                   kBlockThreads, 0, stream>>>(impl_->View(0), count,
                                               device_addresses.as<uint32_t>());
  GPKV_RETURN_IF_ERROR(CheckLaunch("FreeManyKernel"));
  // The scratch buffer is freed on return: wait for the kernel reading it.
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                            "SlabAlloc::TEST_FreeMany: cudaStreamSynchronize");
  return Status::OK();
}

Status SlabAlloc::TEST_SlabPointers(const std::vector<uint32_t>& addresses,
                                    std::vector<uint64_t>* pointers, CUstream_st* stream) {
  const uint64_t count = addresses.size();
  pointers->assign(count, 0);
  if (count == 0) return Status::OK();
  ScopedDeviceBuffer device_addresses;
  ScopedDeviceBuffer device_pointers;
  GPKV_RETURN_IF_ERROR(
      device_addresses.Allocate(count * sizeof(uint32_t), "TEST_SlabPointers' addresses"));
  GPKV_RETURN_IF_ERROR(
      device_pointers.Allocate(count * sizeof(uint64_t), "TEST_SlabPointers' pointers"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(device_addresses.as<void>(), addresses.data(), count * sizeof(uint32_t),
                      cudaMemcpyHostToDevice, stream),
      "SlabAlloc: cudaMemcpyAsync of TEST_SlabPointers' addresses");
  SlabPointersKernel<<<static_cast<unsigned>((count + kBlockThreads - 1) / kBlockThreads),
                       kBlockThreads, 0, stream>>>(impl_->View(0), count,
                                                   device_addresses.as<uint32_t>(),
                                                   device_pointers.as<unsigned long long>());
  GPKV_RETURN_IF_ERROR(CheckLaunch("SlabPointersKernel"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(pointers->data(), device_pointers.as<void>(), count * sizeof(uint64_t),
                      cudaMemcpyDeviceToHost, stream),
      "SlabAlloc: cudaMemcpyAsync of TEST_SlabPointers' pointers");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                            "SlabAlloc::TEST_SlabPointers: cudaStreamSynchronize");
  return Status::OK();
}

}  // namespace gpkv::gpu

// Pipeline lanes and the small-batch duplicate kernel (see host_staging.h).
#include <string>

#include "gpu/cuda_check.h"
#include "tables/gphash/gpu/host_staging.h"
#include "tables/gphash/gpu/kernel_common.cuh"
#include "tables/gphash/gpu/workspace.h"
#include "util/copy_pool.h"

namespace gpkv::gphash::gpu {

namespace {

constexpr int kDedupeThreads = 1024;
constexpr uint32_t kDedupeSlots = 2 * kSmallDedupeOps;  // a power of two
constexpr uint32_t kEmptySlot = 0xffffffffu;
constexpr int kDedupePerThread = kSmallDedupeOps / kDedupeThreads;

template <int kKeyWords>
__device__ __forceinline__ bool SameKey(const uint64_t* keys, uint32_t a, uint32_t b) {
  bool equal = true;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) {
    equal &= keys[uint64_t{a} * kKeyWords + w] == keys[uint64_t{b} * kKeyWords + w];
  }
  return equal;
}

// One block: each key claims a slot of a shared-memory table (linear
// probing from its hash) or joins the slot of an equal key, where the
// survivor's index is kept by atomicMax (last) or atomicMin (first).
//
// The keys may be in host memory, read over the link (a small batch's arrays
// used in place): a thread loads all its keys before it uses any, one round
// trip instead of kDedupePerThread, and two keys are compared only when the
// 32-bit tags of their hashes (in shared memory) agree, so a collision in
// the table costs no read of the other key.
template <int kKeyWords>
__global__ void __launch_bounds__(kDedupeThreads)
    MarkSurvivorsSmallKernel(const uint64_t* keys, uint32_t count, bool keep_first, uint8_t* keep,
                             BatchCounters* counters) {
  __shared__ uint32_t table[kDedupeSlots];
  __shared__ uint32_t tags[kSmallDedupeOps];
  uint64_t words[kDedupePerThread][kKeyWords];
#pragma unroll
  for (int k = 0; k < kDedupePerThread; ++k) {
    const uint32_t i = threadIdx.x + k * kDedupeThreads;
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w)
      words[k][w] = i < count ? keys[uint64_t{i} * kKeyWords + w] : 0;
  }
  for (uint32_t s = threadIdx.x; s < kDedupeSlots; s += kDedupeThreads) table[s] = kEmptySlot;
  if (counters != nullptr && threadIdx.x == 0) *counters = BatchCounters{};
  uint64_t mixed[kDedupePerThread];
#pragma unroll
  for (int k = 0; k < kDedupePerThread; ++k) {
    const uint32_t i = threadIdx.x + k * kDedupeThreads;
    mixed[k] = 0;
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) mixed[k] = (mixed[k] ^ words[k][w]) * 0x9e3779b97f4a7c15ull;
    if (i < count) tags[i] = static_cast<uint32_t>(mixed[k]);
  }
  __syncthreads();
  uint32_t slot_of[kDedupePerThread];
#pragma unroll
  for (int k = 0; k < kDedupePerThread; ++k) {
    const uint32_t i = threadIdx.x + k * kDedupeThreads;
    if (i >= count) break;
    uint32_t slot = static_cast<uint32_t>(mixed[k] >> 40) & (kDedupeSlots - 1);
    for (;;) {
      uint32_t holder = atomicCAS(&table[slot], kEmptySlot, i);
      if (holder == kEmptySlot) break;
      if (tags[holder] == tags[i] && SameKey<kKeyWords>(keys, holder, i)) {
        if (keep_first) {
          atomicMin(&table[slot], i);
        } else {
          atomicMax(&table[slot], i);
        }
        break;
      }
      slot = (slot + 1) & (kDedupeSlots - 1);
    }
    slot_of[k] = slot;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kDedupePerThread; ++k) {
    const uint32_t i = threadIdx.x + k * kDedupeThreads;
    if (i >= count) break;
    keep[i] = table[slot_of[k]] == i ? 1 : 0;
  }
}

}  // namespace

void CopyHost(void* target, const void* source, size_t bytes) {
  util::CopyPool::Shared().Copy(target, source, bytes);
}

Result<std::unique_ptr<StagingLane>> StagingLane::Create(cudaStream_t stream) {
  std::unique_ptr<StagingLane> lane(new StagingLane());
  if (stream == nullptr) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&lane->stream_, cudaStreamNonBlocking),
                              "cudaStreamCreateWithFlags for a pipeline lane");
    lane->owns_stream_ = true;
  } else {
    lane->stream_ = stream;
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&lane->done_, cudaEventDisableTiming),
                            "cudaEventCreateWithFlags for a pipeline lane");
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&lane->kernels_done_, cudaEventDisableTiming),
                            "cudaEventCreateWithFlags for a pipeline lane");
  return Result<std::unique_ptr<StagingLane>>(std::move(lane));
}

StagingLane::~StagingLane() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (arena_ != nullptr) cudaFree(arena_);
  if (host_in_ != nullptr) cudaFreeHost(host_in_);
  if (host_out_ != nullptr) cudaFreeHost(host_out_);
  if (done_ != nullptr) cudaEventDestroy(done_);
  if (kernels_done_ != nullptr) cudaEventDestroy(kernels_done_);
  if (owns_stream_) cudaStreamDestroy(stream_);
}

Status StagingLane::Reserve(size_t device_bytes, size_t host_in_bytes, size_t host_out_bytes) {
  if (device_bytes <= arena_bytes_ && host_in_bytes <= host_in_bytes_ &&
      host_out_bytes <= host_out_bytes_) {
    return Status::OK();
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_),
                            "cudaStreamSynchronize (growing a pipeline lane)");
  GPKV_RETURN_IF_ERROR(GrowBuffer(device_bytes, /*pinned_host=*/false, "pipeline lane arena",
                                  &arena_, &arena_bytes_));
  GPKV_RETURN_IF_ERROR(GrowBuffer(host_in_bytes, /*pinned_host=*/true,
                                  "pipeline lane staging buffer", &host_in_, &host_in_bytes_));
  return GrowBuffer(host_out_bytes, /*pinned_host=*/true, "pipeline lane staging buffer",
                    &host_out_, &host_out_bytes_);
}

Status StagingLane::WaitDone(const char* what) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(done_),
                            std::string("cudaEventSynchronize (") + what + ")");
  return Status::OK();
}

Status StagingLane::RecordDone() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(done_, stream_), "cudaEventRecord on a pipeline lane");
  return Status::OK();
}

Status LaunchMarkSurvivorsSmall(const uint8_t* keys, size_t count, uint32_t key_size,
                                bool keep_first, uint8_t* keep, BatchCounters* counters,
                                cudaStream_t stream) {
  if (count == 0) return Status::OK();
  if (count > kSmallDedupeOps) {
    return Status::InvalidArgument("LaunchMarkSurvivorsSmall takes at most " +
                                   std::to_string(kSmallDedupeOps) + " operations");
  }
  return DispatchKeyWords(key_size, [&](auto key_words) {
    constexpr int kKeyWords = decltype(key_words)::value;
    MarkSurvivorsSmallKernel<kKeyWords><<<1, kDedupeThreads, 0, stream>>>(
        reinterpret_cast<const uint64_t*>(keys), static_cast<uint32_t>(count), keep_first, keep,
        counters);
    return CheckLaunch("MarkSurvivorsSmallKernel");
  });
}

}  // namespace gpkv::gphash::gpu

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/host_memory.h"
#include "gpu/pointer_kind.h"
#include "gpu/staged_copy.h"
#include "util/copy_pool.h"

namespace gpkv::gpu {
namespace {

// A chunk is large enough that the pool's threads and the DMA engine each
// run near their rate, small enough that the two overlap over a batch.
constexpr size_t kChunkBytes = size_t{4} << 20;

// The calling thread's two pinned chunks and their events (a chunk is free
// again once the DMA recorded after its use is done).
class Chunks {
 public:
  ~Chunks() {
    for (int i = 0; i < 2; ++i) {
      if (buffer_[i] != nullptr) cudaFreeHost(buffer_[i]);
      if (done_[i] != nullptr) cudaEventDestroy(done_[i]);
    }
  }
  Status Ready(const std::string& what) {
    for (int i = 0; i < 2; ++i) {
      if (buffer_[i] == nullptr) {
        GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&buffer_[i], kChunkBytes),
                                  what + ": cudaMallocHost of a staging chunk");
      }
      if (done_[i] == nullptr) {
        GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming),
                                  what + ": cudaEventCreate for a staging chunk");
      }
    }
    return Status::OK();
  }
  uint8_t* buffer(int i) const { return static_cast<uint8_t*>(buffer_[i]); }
  cudaEvent_t done(int i) const { return done_[i]; }
  bool& used(int i) { return used_[i]; }

 private:
  void* buffer_[2] = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool used_[2] = {false, false};  // an event recorded on the chunk
};

Chunks& ThreadChunks() {
  thread_local Chunks chunks;
  return chunks;
}

}  // namespace

Status CopyToDevice(void* device, const void* host, size_t bytes, CUstream_st* stream,
                    const std::string& what) {
  if (bytes == 0) return Status::OK();
  if (!IsPageable(host)) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device, host, bytes, cudaMemcpyDefault, stream),
                              what + ": cudaMemcpyAsync to the device");
    return Status::OK();
  }
  Chunks& chunks = ThreadChunks();
  GPKV_RETURN_IF_ERROR(chunks.Ready(what));
  util::CopyPool::Session copying(util::CopyPool::Shared());
  auto* to = static_cast<uint8_t*>(device);
  const auto* from = static_cast<const uint8_t*>(host);
  for (size_t done = 0, c = 0; done < bytes; done += kChunkBytes, ++c) {
    const int i = static_cast<int>(c % 2);
    const size_t n = std::min(kChunkBytes, bytes - done);
    if (chunks.used(i)) {  // its previous DMA must have read it
      GPKV_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(chunks.done(i)),
                                what + ": staging to the device");
    }
    util::CopyPool::Shared().Copy(chunks.buffer(i), from + done, n);
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(to + done, chunks.buffer(i), n, cudaMemcpyHostToDevice, stream),
        what + ": cudaMemcpyAsync to the device");
    GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(chunks.done(i), stream),
                              what + ": staging to the device");
    chunks.used(i) = true;
  }
  return Status::OK();
}

Status CopyToHost(void* host, const void* device, size_t bytes, CUstream_st* stream,
                  const std::string& what) {
  if (bytes == 0) return Status::OK();
  if (!IsPageable(host)) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDefault, stream),
                              what + ": cudaMemcpyAsync from the device");
    return Status::OK();
  }
  Chunks& chunks = ThreadChunks();
  GPKV_RETURN_IF_ERROR(chunks.Ready(what));
  util::CopyPool::Session copying(util::CopyPool::Shared());
  auto* to = static_cast<uint8_t*>(host);
  const auto* from = static_cast<const uint8_t*>(device);
  const size_t count = (bytes + kChunkBytes - 1) / kChunkBytes;
  // Chunk c + 1's DMA runs while chunk c is copied out.
  auto enqueue = [&](size_t c) -> Status {
    const int i = static_cast<int>(c % 2);
    const size_t n = std::min(kChunkBytes, bytes - c * kChunkBytes);
    if (chunks.used(i)) {  // a DMA of an earlier call, maybe on another stream, may read it
      GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, chunks.done(i), 0),
                                what + ": staging to the host");
    }
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(chunks.buffer(i), from + c * kChunkBytes, n,
                                              cudaMemcpyDeviceToHost, stream),
                              what + ": cudaMemcpyAsync to the host");
    GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(chunks.done(i), stream),
                              what + ": staging to the host");
    chunks.used(i) = true;
    return Status::OK();
  };
  GPKV_RETURN_IF_ERROR(enqueue(0));
  for (size_t c = 0; c < count; ++c) {
    const int i = static_cast<int>(c % 2);
    if (c + 1 < count) GPKV_RETURN_IF_ERROR(enqueue(c + 1));
    GPKV_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(chunks.done(i)), what + ": staging to the host");
    const size_t n = std::min(kChunkBytes, bytes - c * kChunkBytes);
    util::CopyPool::Shared().Copy(to + c * kChunkBytes, chunks.buffer(i), n);
  }
  return Status::OK();
}

}  // namespace gpkv::gpu

// gpu::StreamScratch: device scratch memory of one call, taken piece by piece
// from the device's stream-ordered memory pool (cudaMallocAsync) on the
// call's stream and given back on that stream when it goes out of scope.
//
// The other kind of scratch, gpu::DeviceWorkspace (device_workspace.h), is an
// arena that only grows and is kept between calls: right for hash batches,
// which plan their whole scratch before the first launch. StreamScratch is
// for calls whose needs are known only as they go (the ordered tables' merges
// and queries size each buffer from the counts of the step before): the pool
// hands out and takes back memory in stream order, so nothing waits for the
// device to free it, and the memory stays in the pool for the next call.
//
// Who may call: the GPU backends (tables/*/gpu/).
// Thread safety: one StreamScratch is used by one thread.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gpkv/status.h"
#include "gpu/cuda_check.h"

namespace gpkv::gpu {

class StreamScratch {
 public:
  explicit StreamScratch(cudaStream_t stream) : stream_(stream) {}
  ~StreamScratch() {
    for (void* pointer : pointers_) cudaFreeAsync(pointer, stream_);
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  // *out = device memory for `count` T (at least 8 bytes), usable in stream
  // order on stream(). `what` names the buffer in an error (OutOfDeviceMemory
  // when the pool and the device have no room).
  template <typename T>
  Status Take(size_t count, T** out, const char* what) {
    void* pointer = nullptr;
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMallocAsync(&pointer, std::max<size_t>(count * sizeof(T), 8), stream_),
        std::string("GPU scratch for ") + what);
    pointers_.push_back(pointer);
    *out = static_cast<T*>(pointer);
    return Status::OK();
  }
  cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_;
  std::vector<void*> pointers_;
};

}  // namespace gpkv::gpu

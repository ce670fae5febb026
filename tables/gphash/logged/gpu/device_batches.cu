#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>

#include "gpu/cuda_check.h"
#include "gpu/device_memory.h"
#include "gpu/pointer_kind.h"
#include "gpu/staged_copy.h"
#include "tables/gphash/logged/gpu/device_batches.h"

namespace gpkv::gphash::logged::gpu {
namespace {

class CudaDeviceBatches final : public DeviceBatches {
 public:
  explicit CudaDeviceBatches(int device) : device_(device) {}

  bool InDeviceMemory(const void* address) const override {
    return ::gpkv::gpu::IsDeviceMemory(address, device_);
  }

  Status WaitFor(void* stream) const override {
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "batch stream: cudaSetDevice");
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
                              "cudaStreamSynchronize of the batch's stream");
    return Status::OK();
  }

  Status CopyToHost(void* host, const void* device_array, size_t bytes) const override {
    return Copy(bytes, "copy of a batch array to host memory", [&](const std::string& what) {
      return ::gpkv::gpu::CopyToHost(host, device_array, bytes, cudaStreamPerThread, what);
    });
  }

  Status CopyToDevice(void* device_array, const void* host, size_t bytes) const override {
    return Copy(bytes, "copy of a batch array to device memory", [&](const std::string& what) {
      return ::gpkv::gpu::CopyToDevice(device_array, host, bytes, cudaStreamPerThread, what);
    });
  }

  Result<uint8_t*> Staging(size_t bytes) override {
    if (staging_.size() < bytes) {
      GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "batch staging: cudaSetDevice");
      staging_ = ::gpkv::gpu::DeviceBytes();  // the old block freed first
      auto grown = ::gpkv::gpu::DeviceBytes::Allocate(std::max<size_t>(bytes, 1));
      if (!grown.ok()) return grown.status();
      staging_ = std::move(*grown);
    }
    return staging_.data();
  }

 private:
  // Runs copy(what) (a gpu/staged_copy.h copy on the calling thread's
  // stream) on the table's device and waits for it: a copy from pageable
  // memory may return before its last DMA is done, and the core's streams
  // do not wait for this one.
  template <typename CopyFn>
  Status Copy(size_t bytes, const std::string& what, const CopyFn& copy) const {
    if (bytes == 0) return Status::OK();
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), what + ": cudaSetDevice");
    GPKV_RETURN_IF_ERROR(copy(what));
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamPerThread), what);
    return Status::OK();
  }

  const int device_;
  ::gpkv::gpu::DeviceBytes staging_;  // Staging's block
};

}  // namespace

std::unique_ptr<DeviceBatches> MakeDeviceBatches(int device) {
  return std::make_unique<CudaDeviceBatches>(device);
}

}  // namespace gpkv::gphash::logged::gpu

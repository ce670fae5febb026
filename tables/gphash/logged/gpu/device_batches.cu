#include <cuda_runtime.h>

#include <string>

#include "gpu/cuda_check.h"
#include "gpu/pointer_kind.h"
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
    return Copy(host, device_array, bytes, cudaMemcpyDeviceToHost, "a batch array to host memory");
  }

  Status CopyToDevice(void* device_array, const void* host, size_t bytes) const override {
    return Copy(device_array, host, bytes, cudaMemcpyHostToDevice, "erased flags to device memory");
  }

 private:
  // On the calling thread's default stream, waited for: a cudaMemcpy from
  // pageable memory may return before its DMA is done.
  Status Copy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
              const char* what) const {
    if (bytes == 0) return Status::OK();
    const std::string copy_of = std::string("copy of ") + what;
    GPKV_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), copy_of + ": cudaSetDevice");
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(to, from, bytes, kind, cudaStreamPerThread),
                              copy_of + ": cudaMemcpyAsync");
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamPerThread), copy_of);
    return Status::OK();
  }

  const int device_;
};

}  // namespace

std::unique_ptr<DeviceBatches> MakeDeviceBatches(int device) {
  return std::make_unique<CudaDeviceBatches>(device);
}

}  // namespace gpkv::gphash::logged::gpu

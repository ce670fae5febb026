#include <string>
#include <utility>

#include "gpu/cuda_check.h"
#include "gpu/host_memory.h"

namespace gpkv::gpu {
namespace {

Status HostStatus(cudaError_t error, const std::string& what) {
  if (error == cudaErrorHostMemoryAlreadyRegistered || error == cudaErrorHostMemoryNotRegistered ||
      error == cudaErrorInvalidValue) {
    cudaGetLastError();
    return Status::InvalidArgument(what + ": " + cudaGetErrorString(error));
  }
  return CudaStatus(error, what);
}

}  // namespace

Status RegisterHostMemory(void* address, size_t bytes) {
  return HostStatus(cudaHostRegister(address, bytes, cudaHostRegisterPortable),
                    "cudaHostRegister of " + std::to_string(bytes) + " bytes");
}

Status UnregisterHostMemory(void* address) {
  return HostStatus(cudaHostUnregister(address), "cudaHostUnregister");
}

Result<PinnedBytes> PinnedBytes::Allocate(size_t size) {
  PinnedBytes bytes;
  void* allocated = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&allocated, size == 0 ? 1 : size),
                            "cudaMallocHost of " + std::to_string(size) + " bytes");
  bytes.data_ = static_cast<uint8_t*>(allocated);
  bytes.size_ = size;
  return Result<PinnedBytes>(std::move(bytes));
}

PinnedBytes::PinnedBytes(PinnedBytes&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

PinnedBytes& PinnedBytes::operator=(PinnedBytes&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFreeHost(data_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

PinnedBytes::~PinnedBytes() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

}  // namespace gpkv::gpu

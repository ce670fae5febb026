#include <cstdint>
#include <map>
#include <mutex>
#include <shared_mutex>
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

// The ranges RegisterHostMemory registered, by first address.
struct Registered {
  size_t bytes;
  bool in_place;  // mapped at the same address on the device
};

class RegisteredRanges {
 public:
  static RegisteredRanges& Shared() {
    static RegisteredRanges* ranges = new RegisteredRanges();  // outlives static destructors
    return *ranges;
  }
  void Add(const void* address, size_t bytes, bool in_place) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    ranges_[reinterpret_cast<uintptr_t>(address)] = Registered{bytes, in_place};
  }
  void Remove(const void* address) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    ranges_.erase(reinterpret_cast<uintptr_t>(address));
  }
  bool Find(const void* address, size_t bytes, bool* in_place) const {
    const auto begin = reinterpret_cast<uintptr_t>(address);
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = ranges_.upper_bound(begin);
    if (it == ranges_.begin()) return false;
    --it;
    const uintptr_t end = it->first + it->second.bytes;
    if (begin >= end || bytes > end - begin) return false;
    if (in_place != nullptr) *in_place = it->second.in_place;
    return true;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, Registered> ranges_;
};

}  // namespace

Status RegisterHostMemory(void* address, size_t bytes) {
  GPKV_RETURN_IF_ERROR(HostStatus(cudaHostRegister(address, bytes, cudaHostRegisterPortable),
                                  "cudaHostRegister of " + std::to_string(bytes) + " bytes"));
  cudaPointerAttributes attributes;
  bool in_place = false;
  if (cudaPointerGetAttributes(&attributes, address) == cudaSuccess) {
    in_place = attributes.type == cudaMemoryTypeHost && attributes.devicePointer == address;
  } else {
    cudaGetLastError();
  }
  RegisteredRanges::Shared().Add(address, bytes, in_place);
  return Status::OK();
}

Status UnregisterHostMemory(void* address) {
  GPKV_RETURN_IF_ERROR(HostStatus(cudaHostUnregister(address), "cudaHostUnregister"));
  RegisteredRanges::Shared().Remove(address);
  return Status::OK();
}

bool InRegisteredRange(const void* address, size_t bytes, bool* in_place) {
  if (address == nullptr) return false;
  return RegisteredRanges::Shared().Find(address, bytes, in_place);
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

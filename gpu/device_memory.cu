#include <atomic>
#include <cstdio>
#include <utility>

#include "gpu/cuda_check.h"
#include "gpu/device_fill.cuh"
#include "gpu/device_memory.h"

namespace gpkv::gpu {
namespace {

// A kernel of this build: whether its attributes can be read tells whether
// the build holds code the device can run.
__global__ void ProbeKernel() {}

}  // namespace

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no device or no driver: not a sticky error
    return 0;
  }
  return count;
}

Status DeviceUsable(int device) {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    return Status::Unsupported(std::string("no usable CUDA device: ") + cudaGetErrorString(error));
  }
  if (count <= device || device < 0) {
    return Status::Unsupported("no usable CUDA device: device " + std::to_string(device) +
                               " requested, " + std::to_string(count) + " present");
  }
  cudaDeviceProp properties;
  error = cudaGetDeviceProperties(&properties, device);
  if (error != cudaSuccess) {
    return Status::Unsupported(std::string("no usable CUDA device: ") + cudaGetErrorString(error));
  }
  if (!properties.canMapHostMemory || !properties.unifiedAddressing) {
    return Status::Unsupported(std::string("no usable CUDA device: ") + properties.name +
                               " cannot map host memory into its address space");
  }
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device);
  cudaFuncAttributes attributes;
  error = cudaFuncGetAttributes(&attributes, ProbeKernel);
  cudaSetDevice(previous);
  if (error != cudaSuccess) {
    return Status::Unsupported(std::string("no usable CUDA device: ") + properties.name +
                               " (compute capability " + std::to_string(properties.major) + "." +
                               std::to_string(properties.minor) +
                               ") cannot run this build's kernels: " + cudaGetErrorString(error));
  }
  return Status::OK();
}

std::string DeviceDescription(int device) {
  Status usable = DeviceUsable(device);
  if (!usable.ok()) return usable.message();
  cudaDeviceProp properties;
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) return "unknown device";
  char line[256];
  std::snprintf(line, sizeof(line), "%s, cc %d.%d, %d SMs, %.1f GiB", properties.name,
                properties.major, properties.minor, properties.multiProcessorCount,
                static_cast<double>(properties.totalGlobalMem) / (1u << 30));
  return line;
}

Result<DeviceBytes> DeviceBytes::Allocate(size_t size) {
  DeviceBytes bytes;
  if (size == 0) return Result<DeviceBytes>(std::move(bytes));
  void* data = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&data, size),
                            "cudaMalloc of " + std::to_string(size) + " bytes");
  bytes.data_ = static_cast<uint8_t*>(data);
  bytes.size_ = size;
  return Result<DeviceBytes>(std::move(bytes));
}

DeviceBytes::DeviceBytes(DeviceBytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBytes& DeviceBytes::operator=(DeviceBytes&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBytes::~DeviceBytes() {
  if (data_ != nullptr) cudaFree(data_);
}

Status DeviceBytes::CopyFromHost(const void* host, size_t size, size_t offset) {
  if (offset > size_ || size > size_ - offset) {
    return Status::InvalidArgument("DeviceBytes::CopyFromHost: range outside the buffer");
  }
  return CopyHostToDevice(data_ + offset, host, size);
}

Status CopyHostToDevice(void* device, const void* host, size_t bytes) {
  if (bytes == 0) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice),
                            "cudaMemcpy to device of " + std::to_string(bytes) + " bytes");
  // From pageable memory cudaMemcpy returns once the bytes are staged, not
  // landed: wait for the legacy stream it ran on.
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(cudaStreamLegacy),
                            "cudaStreamSynchronize after a copy to the device");
  return Status::OK();
}

Status CopyDeviceToHost(void* host, const void* device, size_t bytes) {
  if (bytes == 0) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost),
                            "cudaMemcpy to host of " + std::to_string(bytes) + " bytes");
  return Status::OK();
}

uint32_t MultiprocessorCount() {
  // Asked at every launch: remembered per device (0: not asked yet).
  constexpr int kRemembered = 64;
  static std::atomic<uint32_t> remembered[kRemembered] = {};
  int device = 0, multiprocessors = 0;
  cudaGetDevice(&device);
  if (device >= 0 && device < kRemembered) {
    const uint32_t known = remembered[device].load(std::memory_order_relaxed);
    if (known != 0) return known;
  }
  if (cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      multiprocessors < 1) {
    cudaGetLastError();
    return 132;
  }
  if (device >= 0 && device < kRemembered) {
    remembered[device].store(static_cast<uint32_t>(multiprocessors), std::memory_order_relaxed);
  }
  return static_cast<uint32_t>(multiprocessors);
}

Status DeviceBytes::CopyToHost(void* host, size_t size, size_t offset) const {
  if (offset > size_ || size > size_ - offset) {
    return Status::InvalidArgument("DeviceBytes::CopyToHost: range outside the buffer");
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpy(host, data_ + offset, size, cudaMemcpyDeviceToHost),
                            "cudaMemcpy to host of " + std::to_string(size) + " bytes");
  return Status::OK();
}

Status DeviceBytes::Fill(uint8_t value) {
  if (size_ == 0) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(FillAndWait(data_, value, size_), "cudaMemset");
  return Status::OK();
}

Result<DeviceStream> DeviceStream::Create() {
  DeviceStream stream;
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream.stream_, cudaStreamNonBlocking),
                            "cudaStreamCreateWithFlags");
  return Result<DeviceStream>(std::move(stream));
}

DeviceStream::DeviceStream(DeviceStream&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)) {}

DeviceStream& DeviceStream::operator=(DeviceStream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

DeviceStream::~DeviceStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status DeviceStream::Synchronize() const {
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return Status::OK();
}

}  // namespace gpkv::gpu

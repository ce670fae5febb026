#include <cstring>
#include <utility>

#include "gpu/cuda_check.h"
#include "gpu/device_workspace.h"

namespace gpkv::gpu {

Status DeviceWorkspace::Init(cudaStream_t stream, size_t counter_bytes) {
  if (stream == nullptr) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                              Label("cudaStreamCreateWithFlags"));
    owns_stream_ = true;
  } else {
    stream_ = stream;
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&order_event_, cudaEventDisableTiming),
                            Label("cudaEventCreateWithFlags"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&device_counters_, counter_bytes),
                            Label("cudaMalloc of the batch counters"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&host_counters_, counter_bytes),
                            Label("cudaMallocHost of the batch counters"));
  std::memset(host_counters_, 0, counter_bytes);
  counter_bytes_ = counter_bytes;
  return Status::OK();
}

DeviceWorkspace::~DeviceWorkspace() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (arena_ != nullptr) cudaFree(arena_);
  if (side_ != nullptr) cudaFree(side_);
  if (device_counters_ != nullptr) cudaFree(device_counters_);
  if (host_counters_ != nullptr) cudaFreeHost(host_counters_);
  if (order_event_ != nullptr) cudaEventDestroy(order_event_);
  if (owns_stream_) cudaStreamDestroy(stream_);
}

Status DeviceWorkspace::OrderAfter(cudaStream_t caller) {
  if (caller == nullptr) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(order_event_, caller),
                            Label("cudaEventRecord on the caller's stream"));
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream_, order_event_, 0),
                            Label("cudaStreamWaitEvent on the caller's stream"));
  return Status::OK();
}

Status DeviceWorkspace::Grow(size_t bytes, uint8_t** buffer, size_t* buffer_bytes) {
  if (bytes <= *buffer_bytes) return Status::OK();
  GPKV_RETURN_IF_ERROR(Wait("scratch growth"));
  // At least double, so that a growing batch size reallocates rarely.
  size_t wanted = bytes > 2 * *buffer_bytes ? bytes : 2 * *buffer_bytes;
  if (*buffer != nullptr) cudaFree(*buffer);
  *buffer = nullptr;
  *buffer_bytes = 0;
  if (wanted > bytes && cudaMalloc(buffer, wanted) != cudaSuccess) {
    cudaGetLastError();  // the doubling did not fit; the request may
    *buffer = nullptr;
    wanted = bytes;
  }
  if (*buffer == nullptr) {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMalloc(buffer, wanted),
        Label("cudaMalloc of " + std::to_string(wanted) + " bytes of batch scratch"));
  }
  *buffer_bytes = wanted;
  return Status::OK();
}

Status DeviceWorkspace::ZeroCounters() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(device_counters_, 0, counter_bytes_, stream_),
                            Label("cudaMemsetAsync of the batch counters"));
  return Status::OK();
}

Status DeviceWorkspace::FetchCounters() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_counters_, device_counters_, counter_bytes_,
                                            cudaMemcpyDeviceToHost, stream_),
                            Label("cudaMemcpyAsync of the batch counters"));
  return Status::OK();
}

Status DeviceWorkspace::Wait(const char* what) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_),
                            Label(std::string("waiting for ") + what));
  return Status::OK();
}

}  // namespace gpkv::gpu

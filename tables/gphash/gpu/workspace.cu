#include <string>

#include "gpu/cuda_check.h"
#include "tables/gphash/gpu/workspace.h"

namespace gpkv::gpu {

Result<std::unique_ptr<Workspace>> Workspace::Create(cudaStream_t stream) {
  std::unique_ptr<Workspace> workspace(new Workspace());
  if (stream == nullptr) {
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&workspace->stream_, cudaStreamNonBlocking),
                              "cudaStreamCreateWithFlags for a GPU table workspace");
    workspace->owns_stream_ = true;
  } else {
    workspace->stream_ = stream;
  }
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&workspace->device_counters_, sizeof(BatchCounters)),
                            "cudaMalloc of the batch counters");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&workspace->host_counters_, sizeof(BatchCounters)),
                            "cudaMallocHost of the batch counters");
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&workspace->order_event_, cudaEventDisableTiming),
      "cudaEventCreateWithFlags for a GPU table workspace");
  return Result<std::unique_ptr<Workspace>>(std::move(workspace));
}

Workspace::~Workspace() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (arena_ != nullptr) cudaFree(arena_);
  if (host_arena_ != nullptr) cudaFreeHost(host_arena_);
  if (device_counters_ != nullptr) cudaFree(device_counters_);
  if (host_counters_ != nullptr) cudaFreeHost(host_counters_);
  if (order_event_ != nullptr) cudaEventDestroy(order_event_);
  if (owns_stream_) cudaStreamDestroy(stream_);
}

Status Workspace::Reserve(size_t bytes) {
  return Grow(bytes, /*pinned_host=*/false, &arena_, &arena_bytes_);
}

Status Workspace::ReserveHost(size_t bytes) {
  return Grow(bytes, /*pinned_host=*/true, &host_arena_, &host_arena_bytes_);
}

Status Workspace::Grow(size_t bytes, bool pinned_host, uint8_t** buffer, size_t* buffer_bytes) {
  if (bytes <= *buffer_bytes) return Status::OK();
  const size_t grown = *buffer_bytes * 2 > bytes ? *buffer_bytes * 2 : bytes;
  const char* what = pinned_host ? "host scratch" : "scratch arena";
  GPKV_RETURN_IF_ERROR(
      Wait(pinned_host ? "growing the host scratch" : "growing the scratch arena"));
  if (*buffer != nullptr) {
    if (pinned_host) {
      cudaFreeHost(*buffer);
    } else {
      cudaFree(*buffer);
    }
  }
  *buffer = nullptr;
  *buffer_bytes = 0;
  void* allocated = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(
      pinned_host ? cudaMallocHost(&allocated, grown) : cudaMalloc(&allocated, grown),
      std::string(pinned_host ? "cudaMallocHost" : "cudaMalloc") + " of a " +
          std::to_string(grown) + "-byte " + what);
  *buffer = static_cast<uint8_t*>(allocated);
  *buffer_bytes = grown;
  return Status::OK();
}

Status Workspace::ZeroCounters() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(device_counters_, 0, sizeof(BatchCounters), stream_),
                            "cudaMemsetAsync of the batch counters");
  // first_invalid_offset is a minimum: start it at the largest offset.
  static const unsigned long long kNoOffset = ~0ull;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&device_counters_->first_invalid_offset, &kNoOffset,
                                            sizeof(kNoOffset), cudaMemcpyHostToDevice, stream_),
                            "cudaMemcpyAsync of the batch counters");
  return Status::OK();
}

Status Workspace::FetchCounters() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_counters_, device_counters_, sizeof(BatchCounters),
                                            cudaMemcpyDeviceToHost, stream_),
                            "cudaMemcpyAsync of the batch counters to the host");
  return Status::OK();
}

Status Workspace::Wait(const char* what) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_),
                            std::string("cudaStreamSynchronize (") + what + ")");
  return Status::OK();
}

Status Workspace::OrderAfter(cudaStream_t other) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(order_event_, other),
                            "cudaEventRecord on the caller's stream");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream_, order_event_, 0),
                            "cudaStreamWaitEvent on the caller's stream");
  return Status::OK();
}

}  // namespace gpkv::gpu

#include <string>
#include <utility>

#include "gpu/cuda_check.h"
#include "tables/slab_hash/gpu/workspace.h"

namespace gpkv::slab_hash::gpu {

Result<std::unique_ptr<Workspace>> Workspace::Create() {
  std::unique_ptr<Workspace> workspace(new Workspace());
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&workspace->stream_, cudaStreamNonBlocking),
                            "slab hash: cudaStreamCreateWithFlags");
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&workspace->order_event_, cudaEventDisableTiming),
      "slab hash: cudaEventCreateWithFlags");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&workspace->device_counters_, sizeof(BatchCounters)),
                            "slab hash: cudaMalloc of the batch counters");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&workspace->host_counters_, sizeof(BatchCounters)),
                            "slab hash: cudaMallocHost of the batch counters");
  *workspace->host_counters_ = BatchCounters();
  return std::move(workspace);
}

Workspace::~Workspace() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (arena_ != nullptr) cudaFree(arena_);
  if (side_ != nullptr) cudaFree(side_);
  if (device_counters_ != nullptr) cudaFree(device_counters_);
  if (host_counters_ != nullptr) cudaFreeHost(host_counters_);
  if (order_event_ != nullptr) cudaEventDestroy(order_event_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status Workspace::OrderAfter(cudaStream_t caller) {
  if (caller == nullptr) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(order_event_, caller),
                            "slab hash: cudaEventRecord on the caller's stream");
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream_, order_event_, 0),
                            "slab hash: cudaStreamWaitEvent on the caller's stream");
  return Status::OK();
}

Status Workspace::Grow(size_t bytes, uint8_t** buffer, size_t* buffer_bytes) {
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
        "slab hash: cudaMalloc of " + std::to_string(wanted) + " bytes of batch scratch");
  }
  *buffer_bytes = wanted;
  return Status::OK();
}

Status Workspace::ZeroCounters() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(device_counters_, 0, sizeof(BatchCounters), stream_),
                            "slab hash: cudaMemsetAsync of the batch counters");
  return Status::OK();
}

Status Workspace::FetchCounters() {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_counters_, device_counters_, sizeof(BatchCounters),
                                            cudaMemcpyDeviceToHost, stream_),
                            "slab hash: cudaMemcpyAsync of the batch counters");
  return Status::OK();
}

Status Workspace::Wait(const char* what) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_),
                            std::string("slab hash: waiting for ") + what);
  return Status::OK();
}

}  // namespace gpkv::slab_hash::gpu

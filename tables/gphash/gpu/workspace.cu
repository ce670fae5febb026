#include <string>
#include <utility>

#include "gpu/cuda_check.h"
#include "tables/gphash/gpu/workspace.h"

namespace gpkv::gphash::gpu {

using gpkv::gpu::ArenaPlan;
using gpkv::gpu::CubTempStorage;

Result<std::unique_ptr<Workspace>> Workspace::Create(cudaStream_t stream) {
  std::unique_ptr<Workspace> workspace(new Workspace());
  GPKV_RETURN_IF_ERROR(workspace->Init(stream, sizeof(BatchCounters)));
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&workspace->device_blocks_done_, sizeof(unsigned int)),
                            workspace->Label("cudaMalloc of the blocks-done ticket"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(workspace->device_blocks_done_, 0, sizeof(unsigned int), workspace->stream()),
      workspace->Label("cudaMemsetAsync of the blocks-done ticket"));
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&workspace->fork_event_, cudaEventDisableTiming),
      workspace->Label("cudaEventCreateWithFlags of the lanes' fork event"));
  return Result<std::unique_ptr<Workspace>>(std::move(workspace));
}

Workspace::~Workspace() {
  lanes_.clear();  // each waits for its stream
  // ~DeviceWorkspace waits for the stream only after the members are
  // destroyed: get_graphs_ must not go while its graphs may still run.
  if (stream() != nullptr) cudaStreamSynchronize(stream());
  if (device_chunk_counters_ != nullptr) cudaFree(device_chunk_counters_);
  if (device_blocks_done_ != nullptr) cudaFree(device_blocks_done_);
  if (host_chunk_counters_ != nullptr) cudaFreeHost(host_chunk_counters_);
  if (fork_event_ != nullptr) cudaEventDestroy(fork_event_);
  if (host_arena_ != nullptr) cudaFreeHost(host_arena_);
}

Status Workspace::ReserveHost(size_t bytes) {
  if (bytes <= host_arena_bytes_) return Status::OK();
  GPKV_RETURN_IF_ERROR(Wait("host scratch growth"));
  return GrowBuffer(bytes, /*pinned_host=*/true, "host scratch", &host_arena_, &host_arena_bytes_);
}

Status GrowBuffer(size_t bytes, bool pinned_host, const char* what, uint8_t** buffer,
                  size_t* buffer_bytes) {
  if (bytes <= *buffer_bytes) return Status::OK();
  const size_t grown = *buffer_bytes * 2 > bytes ? *buffer_bytes * 2 : bytes;
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
  GPKV_RETURN_IF_ERROR(DeviceWorkspace::ZeroCounters());
  // first_invalid_offset is a minimum: start it at the largest offset.
  static const unsigned long long kNoOffset = ~0ull;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&device_counters()->first_invalid_offset, &kNoOffset,
                                            sizeof(kNoOffset), cudaMemcpyHostToDevice, stream()),
                            Label("cudaMemcpyAsync of the batch counters"));
  return Status::OK();
}

Result<StagingLane*> Workspace::Lane(size_t index) {
  while (lanes_.size() <= index) {
    auto created = StagingLane::Create(lanes_.empty() ? stream() : nullptr);
    if (!created.ok()) return created.status();
    lanes_.push_back(std::move(created.value()));
  }
  return lanes_[index].get();
}

Status Workspace::ForkLanes(size_t lanes) {
  if (lanes <= 1) return Status::OK();
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventRecord(fork_event_, stream()),
                            "cudaEventRecord before a pipelined batch");
  for (size_t i = 1; i < lanes; ++i) {
    auto lane = Lane(i);
    if (!lane.ok()) return lane.status();
    GPKV_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent((*lane)->stream(), fork_event_, 0),
                              "cudaStreamWaitEvent before a pipelined batch");
  }
  return Status::OK();
}

Status Workspace::ReserveChunkCounters(size_t chunks) {
  if (chunks <= chunk_counters_) return Status::OK();
  const size_t grown = chunk_counters_ * 2 > chunks ? chunk_counters_ * 2 : chunks;
  GPKV_RETURN_IF_ERROR(Wait("chunk counter growth"));
  if (device_chunk_counters_ != nullptr) cudaFree(device_chunk_counters_);
  if (host_chunk_counters_ != nullptr) cudaFreeHost(host_chunk_counters_);
  device_chunk_counters_ = nullptr;
  host_chunk_counters_ = nullptr;
  host_chunk_counters_on_device_ = nullptr;
  chunk_counters_ = 0;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&device_chunk_counters_, grown * sizeof(BatchCounters)),
                            "cudaMalloc of the chunk counters");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMallocHost(&host_chunk_counters_, grown * sizeof(BatchCounters)),
                            "cudaMallocHost of the chunk counters");
  void* on_device = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&on_device, host_chunk_counters_, 0),
                            "cudaHostGetDevicePointer of the chunk counters");
  host_chunk_counters_on_device_ = static_cast<BatchCounters*>(on_device);
  chunk_counters_ = grown;
  return Status::OK();
}

Status PlanSort(ArenaPlan& plan, size_t count, bool with_leaders, SortPlan* sort) {
  GPKV_RETURN_IF_ERROR(DedupeSortTempBytes(count, &sort->sort_temp_bytes));
  for (int i = 0; i < 4; ++i) sort->arrays[i] = plan.Take(count * sizeof(uint32_t));
  sort->sort_temp = plan.Take(sort->sort_temp_bytes);
  if (with_leaders) {
    GPKV_RETURN_IF_ERROR(DedupeScanTempBytes(count, &sort->scan_temp_bytes));
    sort->arrays[4] = plan.Take(count * sizeof(uint32_t));
    sort->scan_temp = plan.Take(sort->scan_temp_bytes);
  }
  return Status::OK();
}

DedupeScratch SortScratchAt(uint8_t* arena, const SortPlan& sort) {
  DedupeScratch scratch{};
  scratch.sort_keys_in = reinterpret_cast<uint32_t*>(arena + sort.arrays[0]);
  scratch.sort_keys_out = reinterpret_cast<uint32_t*>(arena + sort.arrays[1]);
  scratch.indices_in = reinterpret_cast<uint32_t*>(arena + sort.arrays[2]);
  scratch.indices_out = reinterpret_cast<uint32_t*>(arena + sort.arrays[3]);
  scratch.sort_temp = CubTempStorage{arena + sort.sort_temp, sort.sort_temp_bytes};
  if (sort.scan_temp_bytes != 0) {
    scratch.leaders = reinterpret_cast<uint32_t*>(arena + sort.arrays[4]);
    scratch.scan_temp = CubTempStorage{arena + sort.scan_temp, sort.scan_temp_bytes};
  }
  return scratch;
}

}  // namespace gpkv::gphash::gpu

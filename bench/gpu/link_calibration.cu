#include <cuda_runtime.h>

#include <algorithm>

#include "bench/gpu/link_calibration.h"
#include "bench/gpu/registered_file.h"
#include "gpu/cuda_check.h"

namespace gpkv::bench::gpu {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kAccessesPerThread = 64;

__device__ __forceinline__ uint64_t NextRandom(uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  uint64_t x = state;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

enum class Access { kRead, kCas, kStore };

// Each thread reads (CASes, stores) kAccessesPerThread random aligned words
// of words[0, word_count); independent addresses, so many are in flight.
__global__ void RandomAccessKernel(uint64_t* words, uint64_t word_count, Access access,
                                   uint64_t seed, unsigned long long* sink) {
  uint64_t state = seed ^ ((blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) *
                           0xd1b54a32d192ed03ULL);
  uint64_t sum = 0;
  for (int i = 0; i < kAccessesPerThread; ++i) {
    uint64_t* word = words + __umul64hi(NextRandom(state), word_count);
    if (access == Access::kCas) {
      sum += atomicCAS(reinterpret_cast<unsigned long long*>(word), 1ull, 1ull);
    } else if (access == Access::kStore) {
      *reinterpret_cast<volatile uint64_t*>(word) = 1;  // the value the region holds
    } else {
      sum += *reinterpret_cast<volatile uint64_t*>(word);
    }
  }
  if (sum == 0x5eed) atomicAdd(sink, 1ull);  // keeps the loads alive
}

Status TimeAccesses(uint64_t* words, uint64_t bytes, Access access, unsigned long long* sink,
                    double* per_second) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const int blocks = sms * 8;
  const uint64_t accesses = uint64_t{1} * blocks * kThreadsPerBlock * kAccessesPerThread;
  cudaEvent_t start, stop;
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start), "cudaEventCreate");
  GPKV_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop), "cudaEventCreate");
  float best_ms = 1e30f;
  for (int repeat = 0; repeat < 4; ++repeat) {  // the first is a warm-up (TLB, clocks)
    cudaEventRecord(start);
    RandomAccessKernel<<<blocks, kThreadsPerBlock>>>(words, bytes / 8, access, repeat * 7919, sink);
    cudaEventRecord(stop);
    GPKV_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop), "RandomAccessKernel");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (repeat > 0) best_ms = std::min(best_ms, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  *per_second = static_cast<double>(accesses) / (best_ms / 1e3);
  return Status::OK();
}

}  // namespace

Status CalibrateLink(const std::string& dir, const std::vector<uint64_t>& region_sizes,
                     std::vector<LinkResult>* results) {
  uint64_t largest = *std::max_element(region_sizes.begin(), region_sizes.end());
  // Not zeros: the CAS kernel compares against 1.
  auto file = RegisteredFile::Create(dir, "gpkv-gpu-bench-link", largest, 1);
  if (!file.ok()) return file.status();
  auto* host_words = static_cast<uint64_t*>((*file)->device());
  void* device_memory = nullptr;
  unsigned long long* sink = nullptr;
  auto run = [&]() -> Status {
    GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&device_memory, largest), "cudaMalloc (HBM region)");
    GPKV_CUDA_RETURN_IF_ERROR(cudaMemset(device_memory, 1, largest), "cudaMemset");
    GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&sink, sizeof(*sink)), "cudaMalloc (sink)");
    auto* hbm_words = static_cast<uint64_t*>(device_memory);
    for (uint64_t bytes : region_sizes) {
      LinkResult result;
      result.region_bytes = bytes;
      GPKV_RETURN_IF_ERROR(
          TimeAccesses(host_words, bytes, Access::kRead, sink, &result.host_reads_per_s));
      GPKV_RETURN_IF_ERROR(
          TimeAccesses(host_words, bytes, Access::kCas, sink, &result.host_cas_per_s));
      GPKV_RETURN_IF_ERROR(
          TimeAccesses(host_words, bytes, Access::kStore, sink, &result.host_stores_per_s));
      GPKV_RETURN_IF_ERROR(
          TimeAccesses(hbm_words, bytes, Access::kRead, sink, &result.hbm_reads_per_s));
      GPKV_RETURN_IF_ERROR(
          TimeAccesses(hbm_words, bytes, Access::kCas, sink, &result.hbm_cas_per_s));
      results->push_back(result);
    }
    return Status::OK();
  };
  Status status = run();
  if (sink != nullptr) cudaFree(sink);
  if (device_memory != nullptr) cudaFree(device_memory);
  return status;
}

}  // namespace gpkv::bench::gpu

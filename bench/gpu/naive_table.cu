#include <cuda_runtime.h>

#include "bench/gpu/naive_table.h"
#include "gpu/cuda_check.h"

namespace gpkv::bench::gpu {
namespace {

constexpr uint64_t kEmptyKey = ~uint64_t{0};
constexpr int kThreadsPerBlock = 256;

__device__ __forceinline__ uint64_t SlotOf(uint64_t key, uint64_t mask) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ULL;
  key ^= key >> 33;
  return key & mask;
}

// One thread per operation: probe from the key's slot; CAS an empty key word
// to the key (or find the key), store the value, then fence it to the host.
__global__ void NaivePutKernel(uint64_t* slots, uint64_t mask, const uint64_t* keys,
                               const uint64_t* values, size_t count, unsigned long long* counters) {
  size_t op = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (op >= count) return;
  const uint64_t key = keys[op];
  uint64_t slot = SlotOf(key, mask);
  for (uint64_t probes = 0; probes <= mask; ++probes, slot = (slot + 1) & mask) {
    auto* key_word = reinterpret_cast<unsigned long long*>(slots + 2 * slot);
    unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(key_word);
    if (seen == kEmptyKey) {
      seen = atomicCAS(key_word, kEmptyKey, key);
      if (seen == kEmptyKey) atomicAdd(&counters[0], 1ull);
    }
    if (seen == kEmptyKey || seen == key) {
      *reinterpret_cast<volatile uint64_t*>(slots + 2 * slot + 1) = values[op];
      __threadfence_system();
      return;
    }
  }
  atomicAdd(&counters[1], 1ull);
}

__global__ void NaiveGetKernel(const uint64_t* slots, uint64_t mask, const uint64_t* keys,
                               uint64_t* values, uint8_t* found, size_t count) {
  size_t op = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (op >= count) return;
  const uint64_t key = keys[op];
  uint64_t slot = SlotOf(key, mask);
  for (uint64_t probes = 0; probes <= mask; ++probes, slot = (slot + 1) & mask) {
    uint64_t seen = *reinterpret_cast<const volatile uint64_t*>(slots + 2 * slot);
    if (seen == key) {
      values[op] = *reinterpret_cast<const volatile uint64_t*>(slots + 2 * slot + 1);
      found[op] = 1;
      return;
    }
    if (seen == kEmptyKey) break;
  }
  values[op] = 0;
  found[op] = 0;
}

unsigned Blocks(size_t count) {
  return static_cast<unsigned>((count + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

}  // namespace

Result<std::unique_ptr<NaiveTable>> NaiveTable::Create(const std::string& dir,
                                                       uint64_t expected_keys) {
  std::unique_ptr<NaiveTable> table(new NaiveTable());
  uint64_t capacity = 1024;
  while (capacity * 2 < expected_keys * 3) capacity *= 2;  // load factor <= 2/3
  auto file = RegisteredFile::Create(dir, "gpkv-gpu-bench-naive", capacity * 16, 0xff);
  if (!file.ok()) return file.status();
  table->file_ = std::move(*file);
  table->capacity_ = capacity;
  table->bytes_ = capacity * 16;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&table->counters_, 2 * sizeof(unsigned long long)),
                            "cudaMalloc (naive table counters)");
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemset(table->counters_, 0, 2 * sizeof(unsigned long long)),
                            "cudaMemset (naive table counters)");
  GPKV_RETURN_IF_ERROR(table->file_->Sync());
  return Result<std::unique_ptr<NaiveTable>>(std::move(table));
}

NaiveTable::~NaiveTable() {
  if (counters_ != nullptr) cudaFree(counters_);
}

Status NaiveTable::Put(const uint8_t* keys, const uint8_t* values, size_t count) {
  if (count == 0) return Status::OK();
  NaivePutKernel<<<Blocks(count), kThreadsPerBlock>>>(
      static_cast<uint64_t*>(file_->device()), capacity_ - 1,
      reinterpret_cast<const uint64_t*>(keys), reinterpret_cast<const uint64_t*>(values), count,
      counters_);
  GPKV_CUDA_RETURN_IF_ERROR(cudaPeekAtLastError(), "launch of NaivePutKernel");
  GPKV_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), "NaivePutKernel");
  unsigned long long counters[2];
  GPKV_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(counters, counters_, sizeof(counters), cudaMemcpyDeviceToHost),
      "cudaMemcpy (naive table counters)");
  if (counters[1] != 0) {
    return Status::PoolFull("naive baseline table: " + std::to_string(counters[1]) +
                            " puts found no free slot in " + std::to_string(capacity_));
  }
  return file_->Sync();  // durable on return, as gpkv's direct mode
}

Status NaiveTable::Get(const uint8_t* keys, uint8_t* values, uint8_t* found, size_t count) {
  if (count == 0) return Status::OK();
  NaiveGetKernel<<<Blocks(count), kThreadsPerBlock>>>(
      static_cast<const uint64_t*>(file_->device()), capacity_ - 1,
      reinterpret_cast<const uint64_t*>(keys), reinterpret_cast<uint64_t*>(values), found, count);
  GPKV_CUDA_RETURN_IF_ERROR(cudaPeekAtLastError(), "launch of NaiveGetKernel");
  GPKV_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), "NaiveGetKernel");
  return Status::OK();
}

NaiveStats NaiveTable::Stats() const {
  unsigned long long keys = 0;
  cudaMemcpy(&keys, counters_, sizeof(keys), cudaMemcpyDeviceToHost);
  NaiveStats stats;
  stats.keys = keys;
  stats.slots = capacity_;
  stats.load_factor = static_cast<double>(keys) / static_cast<double>(capacity_);
  stats.index_bytes = bytes_;
  return stats;
}

}  // namespace gpkv::bench::gpu

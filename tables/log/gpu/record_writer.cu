#include <algorithm>
#include <cub/cub.cuh>

#include "gpu/cuda_check.h"
#include "tables/log/gpu/record_writer.cuh"
#include "tables/log/record.h"

namespace gpkv::log::gpu {
namespace {

constexpr int kBlock = 256;
// Enough blocks to fill the device; each thread strides over the rest.
constexpr unsigned kMaxBlocks = 4096;

unsigned Blocks(uint64_t items) {
  const uint64_t blocks = (items + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::clamp<uint64_t>(blocks, 1, kMaxBlocks));
}

// Adds the checksum terms of words[0, count) at positions first.. to *sum.
__global__ void ChecksumTermsKernel(const uint64_t* words, uint64_t count, uint64_t first,
                                    uint64_t seed, unsigned long long* sum) {
  using Reduce = cub::BlockReduce<unsigned long long, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  unsigned long long terms = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    terms += ChecksumTerm(seed, first + i, words[i]);
  }
  terms = Reduce(storage).Sum(terms);
  if (threadIdx.x == 0) atomicAdd(sum, terms);
}

}  // namespace

Status SumRecordTermsAsync(const DeviceRecordEntries& entries, uint32_t key_size,
                           uint32_t value_size, uint64_t seed, unsigned long long* sum,
                           cudaStream_t stream, const std::string& where) {
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(sum, 0, sizeof(*sum), stream),
                            where + ": zero the log record checksum");
  const bool tombstones = entries.values == nullptr;
  const uint64_t words = ColumnarRecordWords(entries.count, key_size, value_size, tombstones);
  const uint64_t key_words = entries.count * key_size / 8;
  // The keys, then the values with their zero padding.
  ChecksumTermsKernel<<<Blocks(key_words), kBlock, 0, stream>>>(entries.keys, key_words, 0, seed,
                                                                sum);
  if (words > key_words) {
    ChecksumTermsKernel<<<Blocks(words - key_words), kBlock, 0, stream>>>(
        reinterpret_cast<const uint64_t*>(entries.values), words - key_words, key_words, seed, sum);
  }
  return ::gpkv::gpu::CudaStatus(cudaPeekAtLastError(), where + ": log record checksum kernel");
}

Status CopyRecordArraysAsync(pm::Pool& pool, uint64_t record_offset, const RecordHeader& header,
                             const DeviceRecordEntries& entries, uint32_t key_size,
                             uint32_t value_size, cudaStream_t stream, const std::string& where) {
  const RecordArrays arrays = ColumnarRecordArrays(pool, record_offset, header, key_size);
  GPKV_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(arrays.keys, entries.keys, entries.count * key_size,
                                            cudaMemcpyDeviceToHost, stream),
                            where + ": copy a batch's keys into the log");
  if (arrays.values != nullptr) {
    GPKV_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(arrays.values, entries.values, entries.count * value_size,
                        cudaMemcpyDeviceToHost, stream),
        where + ": copy a batch's values into the log");
  }
  return Status::OK();
}

}  // namespace gpkv::log::gpu

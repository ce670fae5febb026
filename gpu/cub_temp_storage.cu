#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "gpu/cub_temp_storage.h"

namespace gpkv::gpu {

Status SortPairsTempBytes(size_t count, size_t* bytes, const std::string& what) {
  auto sort = [&](void* storage, size_t& storage_bytes) {
    return cub::DeviceRadixSort::SortPairs(
        storage, storage_bytes, static_cast<const uint32_t*>(nullptr),
        static_cast<uint32_t*>(nullptr), static_cast<const uint32_t*>(nullptr),
        static_cast<uint32_t*>(nullptr), static_cast<int>(count));
  };
  return CubTempBytes(sort, bytes, what);
}

CubTempBuffer::~CubTempBuffer() { Free(); }

Status CubTempBuffer::Allocate(size_t bytes, const std::string& what) {
  Free();
  void* data = nullptr;
  GPKV_CUDA_RETURN_IF_ERROR(cudaMalloc(&data, bytes), what);
  storage_ = CubTempStorage{data, bytes};
  return Status::OK();
}

void CubTempBuffer::Free() {
  if (storage_.data != nullptr) cudaFree(storage_.data);
  storage_ = CubTempStorage{};
}

}  // namespace gpkv::gpu

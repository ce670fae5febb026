#include "gpu/cub_temp_storage.h"

namespace gpkv::gpu {

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

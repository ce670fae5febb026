// CUDA runtime errors as gpkv::Status, for the .cu files of gpu/ only (this
// header includes the CUDA runtime; the public gpu/ headers do not).
//
// Every CUDA call of the backend goes through CudaStatus or
// GPKV_CUDA_RETURN_IF_ERROR, so an error names the call, the table and what
// it was doing, and never exits the process.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gpkv/status.h"

namespace gpkv::gpu {

// True for the errors that mean "this machine has no device we can use",
// as opposed to a failure of a call on a working device.
inline bool IsNoDeviceError(cudaError_t error) {
  return error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver ||
         error == cudaErrorInvalidDevice || error == cudaErrorDevicesUnavailable ||
         error == cudaErrorNoKernelImageForDevice || error == cudaErrorCompatNotSupportedOnDevice ||
         error == cudaErrorSystemDriverMismatch || error == cudaErrorStubLibrary;
}

// OK for cudaSuccess; else a Status naming `what` and the CUDA error:
// OutOfDeviceMemory for allocation failures, Unsupported ("no usable CUDA
// device: ...") when there is no usable device, IOError otherwise. Clears the
// runtime's last error (a non-sticky error, now reported, must not reappear
// in a later launch check).
inline Status CudaStatus(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return Status::OK();
  cudaGetLastError();
  std::string detail = std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
  if (error == cudaErrorMemoryAllocation) {
    return Status::OutOfDeviceMemory(what + ": out of device memory (" + detail + ")");
  }
  if (IsNoDeviceError(error)) {
    return Status::Unsupported("no usable CUDA device: " + std::string(cudaGetErrorString(error)) +
                               " (" + what + ")");
  }
  return Status::IOError(what + ": " + detail);
}

}  // namespace gpkv::gpu

// Returns CudaStatus(call, what) from the enclosing function unless the call
// succeeded. `what` is evaluated only on failure.
#define GPKV_CUDA_RETURN_IF_ERROR(call, what)                   \
  do {                                                          \
    cudaError_t gpkv_cuda_error_ = (call);                      \
    if (gpkv_cuda_error_ != cudaSuccess) {                      \
      return ::gpkv::gpu::CudaStatus(gpkv_cuda_error_, (what)); \
    }                                                           \
  } while (0)

// Device discovery and plain device buffers for callers that must not include
// CUDA headers (engine/, tests, benchmark drivers): whether this process can
// run the CUDA backend, and an owned block of device memory with copies to and
// from the host.
//
// Who may call: engine/ (DeviceUsable, to choose Backend::kAuto), tests and
// benchmarks; the backends' launchers (MultiprocessorCount). The backends
// otherwise use the CUDA runtime directly.
//
// Thread safety: DeviceUsable may be called from any thread. A DeviceBytes is
// a value owned by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpkv/status.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace gpkv::gpu {

// The CUDA devices this process sees (cudaGetDeviceCount); 0 when there is
// no device or no driver.
int DeviceCount();

// OK when this build has the CUDA backend and device `device` can run its
// kernels and map host memory; else Unsupported("no usable CUDA device:
// <reason>"). Never exits or aborts, also on a machine without a driver.
Status DeviceUsable(int device = 0);

// A human-readable line naming device `device` ("NVIDIA H100 80GB HBM3, cc
// 9.0, 132 SMs, 79.1 GiB"), or the reason there is none.
std::string DeviceDescription(int device = 0);

// Multiprocessors of the calling thread's current device (132, an H100's,
// when it cannot be asked): the launchers size their grids by it.
uint32_t MultiprocessorCount();

// Copies `bytes` from device memory at `device` (not owned by a DeviceBytes:
// a table's results, say) to `host`, and waits for the copy.
Status CopyDeviceToHost(void* host, const void* device, size_t bytes);
// Copies `bytes` from `host` to device memory at `device` and returns when
// they are in place, so work on any stream may use them. (A cudaMemcpy from
// pageable memory may return before its DMA lands, and the tables'
// non-blocking streams do not wait for the legacy stream it runs on; a get
// batch once read half-copied keys.)
Status CopyHostToDevice(void* device, const void* host, size_t bytes);

// Owned device memory (cudaMalloc / cudaFree) on the calling thread's current
// device.
class DeviceBytes {
 public:
  // OutOfDeviceMemory or Unsupported on failure.
  static Result<DeviceBytes> Allocate(size_t size);
  DeviceBytes() = default;
  DeviceBytes(DeviceBytes&& other) noexcept;
  DeviceBytes& operator=(DeviceBytes&& other) noexcept;
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  ~DeviceBytes();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // Synchronous copies of `size` bytes at byte `offset` of this buffer:
  // they return when the bytes are in place (CopyHostToDevice).
  // REQUIRES: offset + size <= this->size().
  Status CopyFromHost(const void* host, size_t size, size_t offset = 0);
  Status CopyToHost(void* host, size_t size, size_t offset = 0) const;
  // Sets every byte to `value`, synchronously in the same sense.
  Status Fill(uint8_t value);

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// An owned CUDA stream (non-blocking) on the calling thread's current
// device, for callers of the Async calls without CUDA headers.
class DeviceStream {
 public:
  static Result<DeviceStream> Create();
  DeviceStream() = default;
  DeviceStream(DeviceStream&& other) noexcept;
  DeviceStream& operator=(DeviceStream&& other) noexcept;
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;
  ~DeviceStream();

  CUstream_st* get() const { return stream_; }
  // Waits for everything enqueued on the stream.
  Status Synchronize() const;

 private:
  CUstream_st* stream_ = nullptr;
};

}  // namespace gpkv::gpu

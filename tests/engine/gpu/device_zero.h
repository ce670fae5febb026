// The engine's GPU tests of a DB that names its device: CUDA device 0,
// skipped where this process cannot use it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpu/device_memory.h"
#include "test_util.h"

// Skips the test where CUDA device 0 is not usable, saying why.
#define SKIP_WITHOUT_DEVICE_0()                                                         \
  do {                                                                                  \
    const ::gpkv::Status usable = ::gpkv::gpu::DeviceUsable(0);                         \
    if (!usable.ok()) GTEST_SKIP() << "no usable CUDA device 0: " << usable.ToString(); \
  } while (0)

namespace gpkv::testutil {

// A 256 MiB pool on the CUDA backend, two worker threads, on device 0
// (named, not left to the default).
inline Options CudaOptions() {
  Options options = DbOptions(uint64_t{256} << 20, /*threads=*/2, Backend::kCuda);
  options.cuda_device = 0;
  return options;
}

}  // namespace gpkv::testutil

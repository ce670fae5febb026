// The concurrent-history run (history_run.h) on the CUDA backend: host
// threads send put, erase and get batches to one table at once, each call on
// a stream of its own, so gets run on the device beside write batches and
// resizes. Every read must return the value of an overlapping or the latest
// preceding write. The engine's pools here are on /dev/shm, so the table runs
// in mirror mode: gets read the HBM mirror (thread::IndexGet) while puts and
// erases change it.
#include <gtest/gtest.h>

#include <algorithm>

#include "concurrency/history_run.h"
#include "tables/gphash/gpu/backend.h"

namespace gpkv::concurrency {
namespace {

#define SKIP_WITHOUT_DEVICE()                                                \
  do {                                                                       \
    ::gpkv::Status usable = ::gpkv::gphash::gpu::GpuBackend::DeviceUsable(); \
    if (!usable.ok()) GTEST_SKIP() << usable.ToString();                     \
  } while (0)

RunConfig GpuConfig(uint32_t value_size, uint64_t key_space = 1 << 14) {
  RunConfig config = ConfigFromEnvironment(value_size, key_space);
  config.backend = Backend::kCuda;
  return config;
}

// Batches large enough for the one-thread-per-get kernel (GetIndexKernel runs
// batches of 2^14 gets and more; smaller ones run on tiles).
RunConfig LargeBatchGpuConfig(uint32_t value_size) {
  RunConfig config = GpuConfig(value_size, uint64_t{1} << 17);
  config.batch = 1 << 14;
  config.batches_per_thread = std::max<uint64_t>(1, config.batches_per_thread / 32);
  return config;
}

TEST(ConcurrentHistoryGpu, InlineValuesReadsSeeOverlappingOrLatestWrites) {
  SKIP_WITHOUT_DEVICE();
  RunHistory(GpuConfig(8), "GPU, inline values");
}

// A quarter of the batches of all threads touch the same key at once.
TEST(ConcurrentHistoryGpu, HotKeysUnderHeavyContentionKeepTheirHistory) {
  SKIP_WITHOUT_DEVICE();
  RunHistory(GpuConfig(8, 1024), "GPU, hot keys, inline values");
}

TEST(ConcurrentHistoryGpu, LargeGetBatchesSeeOverlappingOrLatestWrites) {
  SKIP_WITHOUT_DEVICE();
  RunHistory(LargeBatchGpuConfig(8), "GPU, batches of 2^14, inline values");
}

TEST(ConcurrentHistoryGpu, LargeBatchCellValuesAreNeverTornAndNeverStale) {
  SKIP_WITHOUT_DEVICE();
  RunHistory(LargeBatchGpuConfig(100), "GPU, batches of 2^14, 100-byte value cells");
}

TEST(ConcurrentHistoryGpu, CellValuesAreNeverTornAndNeverStale) {
  SKIP_WITHOUT_DEVICE();
  RunHistory(GpuConfig(100), "GPU, 100-byte value cells");
}

}  // namespace
}  // namespace gpkv::concurrency

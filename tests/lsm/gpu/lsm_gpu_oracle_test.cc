// The LSM family against std::map over more than a million mixed operations
// (lsm/lsm_oracle.h) on the GPU backend (lsm::gpu::GpuBackend).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "gpu/device_memory.h"
#include "lsm/lsm_layers.h"
#include "lsm/lsm_oracle.h"

namespace gpkv {
namespace {

// (worker threads, b, M), as the CPU oracle.
class LsmGpuOracle : public ::testing::TestWithParam<std::tuple<int, uint64_t, uint32_t>> {};

TEST_P(LsmGpuOracle, MixedOperationsMatchAStdMapAcrossCompactionsAndReopens) {
  Status usable = gpu::DeviceUsable();
  if (!usable.ok()) GTEST_SKIP() << usable.ToString();
  const auto [threads, batch_entries, log_batches] = GetParam();
  lsmtest::RunOracle(Backend::kCuda, threads, batch_entries, log_batches);
}

INSTANTIATE_TEST_SUITE_P(ThreadsBAndM, LsmGpuOracle,
                         ::testing::Values(std::tuple<int, uint64_t, uint32_t>{2, 256, 1},
                                           std::tuple<int, uint64_t, uint32_t>{2, 256, 8},
                                           std::tuple<int, uint64_t, uint32_t>{2, uint64_t{1} << 16,
                                                                               1}));

// Gets through the levels' run filters on the device (lsm/lsm_layers.h:
// runs on levels 0, 1, 2 and 4 behind the write buffer, most keys' newest
// entry past the first source a get searches, overwrites and tombstones over
// older entries), against a std::map after each batch, after a reopen (the
// filters then built from the runs read at open) and a compaction; with the
// filters read (the default) and without, for filters of a few cache lines
// and of many.
TEST(LsmGpuFilters, GetsThroughTheLevelsFiltersMatchAStdMap) {
  Status usable = gpu::DeviceUsable();
  if (!usable.ok()) GTEST_SKIP() << usable.ToString();
  for (const uint64_t u : {uint64_t{64}, uint64_t{1024}}) {
    for (const bool read_filters : {true, false}) {
      SCOPED_TRACE("b = " + std::to_string(u) +
                   ", read_filters = " + std::to_string(static_cast<int>(read_filters)));
      OrderedGpuOptions gpu_options;
      gpu_options.read_filters = read_filters;
      ASSERT_NO_FATAL_FAILURE(lsmtest::RunLayeredOracle(Backend::kCuda, u, gpu_options));
    }
  }
}

}  // namespace
}  // namespace gpkv

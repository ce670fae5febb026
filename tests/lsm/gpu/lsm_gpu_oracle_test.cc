// The LSM family against std::map over more than a million mixed operations
// (lsm/lsm_oracle.h) on the GPU backend (lsm::gpu::LsmGpu).
#include <gtest/gtest.h>

#include <utility>

#include "gpu/device_memory.h"
#include "lsm/lsm_oracle.h"

namespace gpkv {
namespace {

// (worker threads, b), as the CPU oracle.
class LsmGpuOracle : public ::testing::TestWithParam<std::pair<int, uint64_t>> {};

TEST_P(LsmGpuOracle, MixedOperationsMatchAStdMapAcrossCompactionsAndReopens) {
  Status usable = gpu::DeviceUsable();
  if (!usable.ok()) GTEST_SKIP() << usable.ToString();
  const auto [threads, batch_entries] = GetParam();
  lsmtest::RunOracle(Backend::kCuda, threads, batch_entries);
}

INSTANTIATE_TEST_SUITE_P(ThreadsAndB, LsmGpuOracle,
                         ::testing::Values(std::pair<int, uint64_t>{2, 256},
                                           std::pair<int, uint64_t>{2, uint64_t{1} << 16}));

}  // namespace
}  // namespace gpkv
